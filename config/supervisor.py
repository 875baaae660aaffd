"""Run `make run`'s processes and keep them running.

    python -m config.supervisor --pid-dir DIR NAME=COMMAND [NAME=COMMAND ...]

Each process gets its own process group (its children, e.g. Celery's pool, go with it).
One that exits is started again, with a line saying which, why and the how-many-th
restart; one that exits more than `MAX_RESTARTS` times in `RESTART_WINDOW_S` is given up
on, and the others keep running. Only the web server (the first process) giving up stops
everything: without it there is nothing to use. SIGINT or SIGTERM (Ctrl-C) stops every
process: SIGTERM first, SIGKILL to whatever still runs after `STOP_GRACE_S`, so the whole
stop takes less than ten seconds. Each process's current pid is kept in DIR/NAME.pid.

Written here rather than taken from supervisord or honcho: honcho stops everything when
one process exits, and supervisord is a daemon with its own configuration to install.
"""

import argparse
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
# Five seconds, not more: on a loaded two-core machine an 8 s grace made Ctrl-C take 11 s in all.
# A task cut short is not lost: tasks are acks_late, so the broker hands it out again.
STOP_GRACE_S = 5.0
POLL_S = 0.2


def say(message: str) -> None:
    print(f"docket: {message}", file=sys.stderr, flush=True)


def exit_reason(returncode: int) -> str:
    """Say why a process ended, from its return code."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


@dataclass
class Supervised:
    name: str
    argv: list[str]
    pid_dir: Path
    process: subprocess.Popen | None = None
    restarts: deque = field(default_factory=deque)
    given_up: bool = False
    total_restarts: int = 0

    def start(self) -> None:
        # A session of its own: the terminal's Ctrl-C reaches the supervisor only, which
        # then stops each process in order; a signal to the group reaches pool children.
        self.process = subprocess.Popen(self.argv, start_new_session=True, stdout=subprocess.DEVNULL)
        (self.pid_dir / f"{self.name}.pid").write_text(f"{self.process.pid}\n")

    def exited(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def restart_allowed(self, now: float) -> bool:
        """Count a restart; refuse it if this would be the sixth in a minute."""
        while self.restarts and now - self.restarts[0] > RESTART_WINDOW_S:
            self.restarts.popleft()
        if len(self.restarts) >= MAX_RESTARTS:
            return False
        self.restarts.append(now)
        self.total_restarts += 1
        return True

    def signal_group(self, sig: int) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)


class Supervisor:
    def __init__(self, processes: list[Supervised]):
        self.processes = processes
        self.stopping = False

    def request_stop(self, signum, frame) -> None:
        self.stopping = True

    def run(self) -> int:
        signal.signal(signal.SIGINT, self.request_stop)
        signal.signal(signal.SIGTERM, self.request_stop)
        for process in self.processes:
            process.start()
        status = 0
        while not self.stopping:
            time.sleep(POLL_S)
            for process in self.processes:
                if process.given_up or self.stopping:
                    continue
                returncode = process.exited()
                if returncode is None:
                    continue
                # Whatever the process left behind in its group (pool children) goes too.
                process.signal_group(signal.SIGKILL)
                if process.restart_allowed(time.monotonic()):
                    say(
                        f"{process.name} stopped ({exit_reason(returncode)}); restarting it "
                        f"(restart {process.total_restarts}, {len(process.restarts)} in the last minute)"
                    )
                    process.start()
                    continue
                process.given_up = True
                say(
                    f"{process.name} stopped ({exit_reason(returncode)}) {MAX_RESTARTS + 1} times within "
                    f"{RESTART_WINDOW_S:.0f} s; not restarting it again"
                )
                if process is self.processes[0]:
                    say(f"without the {process.name} there is nothing to use: stopping")
                    self.stopping, status = True, 1
        self.stop_all()
        return status

    def stop_all(self) -> None:
        """SIGTERM every process, then SIGKILL the groups of what still runs after the grace.

        SIGTERM goes to the process, not its group: a Celery worker stops its own pool
        (warm shutdown); terminated from outside, the pool's children are logged as errors.
        """
        for process in self.processes:
            if process.exited() is None:
                with contextlib.suppress(ProcessLookupError):
                    process.process.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < deadline and any(p.exited() is None for p in self.processes):
            time.sleep(0.1)
        for process in self.processes:
            # Also the group of one that exited: its pool children may still run.
            process.signal_group(signal.SIGKILL)
            if process.process is not None:
                process.process.wait()
            (process.pid_dir / f"{process.name}.pid").unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pid-dir", type=Path, required=True)
    parser.add_argument("processes", nargs="+", metavar="NAME=COMMAND")
    args = parser.parse_args(argv)
    args.pid_dir.mkdir(parents=True, exist_ok=True)
    processes = []
    for spec in args.processes:
        name, _, command = spec.partition("=")
        processes.append(Supervised(name=name, argv=shlex.split(command), pid_dir=args.pid_dir))
    return Supervisor(processes).run()


if __name__ == "__main__":
    sys.exit(main())
