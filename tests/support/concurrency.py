"""Run test code on many threads at once, each on its own database connection."""

import threading

from django.db import connections


def run_concurrently(target, args_list: list[tuple]) -> list:
    """Call target(*args) on one thread per entry, all released together; return results in order.

    Each thread closes its database connections when done. The first exception raised on
    any thread is re-raised here, after every thread has finished.
    """
    barrier = threading.Barrier(len(args_list))
    results: list = [None] * len(args_list)
    errors: list[BaseException] = []

    def run(index, args):
        try:
            barrier.wait()
            results[index] = target(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, args)) for i, args in enumerate(args_list)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results
