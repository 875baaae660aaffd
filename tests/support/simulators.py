"""Serve the vendor simulator from a thread for one test, and stop it without a wait."""

import threading

from judges.simulator import Simulator, make_server

# `serve_forever` looks for a shutdown request once per poll interval; at its default of
# 0.5 s every test with a simulator waited about half a second in teardown.
SHUTDOWN_POLL_S = 0.02


def serve_in_thread(simulator: Simulator) -> tuple:
    """Start `simulator` on a free local port; return (server, base_url). Call server.shutdown()."""
    server = make_server("127.0.0.1", 0, simulator)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S}, name="vendor-simulator", daemon=True
    )
    thread.start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
