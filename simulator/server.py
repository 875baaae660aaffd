"""The simulator's HTTP server: aiohttp on one event-loop thread.

aiohttp speaks HTTP/1.1 (keep-alive, chunked bodies, HEAD, malformed requests answered 400);
every request goes to `app.SimulatorApp.respond`, which knows nothing of the transport. One
thread answers every connection and a simulated latency is a timer (`asyncio.sleep`), not a
sleeping thread: the vendor's latency is what is simulated, not its CPU, so the double costs
the machine (and the worker it shares the cores with) as little as possible.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import weakref
from http import HTTPStatus

from aiohttp import web

from simulator.app import SimulatorApp
from simulator.formats import json_response
from simulator.vendor import Simulator

# A Message Batch carries many whole prompts: far above aiohttp's 1 MiB default.
MAX_BODY_BYTES = 256 * 1024 * 1024
# At shutdown a call still waiting out its latency (or a simulated hang) is cancelled, not awaited.
SHUTDOWN_GRACE_S = 0.05
LISTEN_BACKLOG = 512


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Unknown"


def web_application(app: SimulatorApp) -> web.Application:
    """The aiohttp application: every method and path goes to `app.respond`."""
    # One entry per connection that has sent a request: clients should keep theirs alive.
    connections: weakref.WeakSet = weakref.WeakSet()

    async def answer(request: web.Request) -> web.Response:
        if request.transport not in connections:
            connections.add(request.transport)
            app.simulator.count("connections")
        body = await request.read()
        headers = {name.lower(): value for name, value in request.headers.items()}
        try:
            status, response_headers, data = await app.respond(request.method, request.path_qs, headers, body)
        except Exception as exc:  # noqa: BLE001 - a bug in the double answers 500, like a vendor's would
            status, response_headers, data = json_response(
                500, {"type": "error", "error": {"type": "api_error", "message": f"simulator bug: {exc!r}"}}
            )
        return web.Response(
            status=status, reason=reason(status), headers={"server": app.server_version, **response_headers}, body=data
        )

    application = web.Application(client_max_size=MAX_BODY_BYTES)
    application.router.add_route("*", "/{path:.*}", answer)
    return application


class SimulatorServer:
    """The simulator served by aiohttp on a thread of its own (`serve_forever`, `shutdown`, `server_close`)."""

    def __init__(self, address: tuple[str, int], app: SimulatorApp):
        self.app = app
        self.socket = socket.create_server(address, backlog=LISTEN_BACKLOG)
        self.server_address = self.socket.getsockname()[:2]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._stopped = threading.Event()

    def serve_forever(self) -> None:
        try:
            asyncio.run(self._serve())
        finally:
            self._stopped.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        runner = web.AppRunner(
            web_application(self.app), access_log=None, handler_cancellation=True, shutdown_timeout=SHUTDOWN_GRACE_S
        )
        await runner.setup()
        site = web.SockSite(runner, self.socket, backlog=LISTEN_BACKLOG)
        await site.start()
        self._started.set()
        try:
            await self._stop.wait()
        finally:
            # Stop accepting, then let the connections asyncio has already accepted get their
            # transports before the server closes: Python 3.11 silently drops (and never
            # closes) a connection whose transport is made after `Server.close()`.
            self._loop.remove_reader(self.socket.fileno())
            for _ in range(3):
                await asyncio.sleep(0)
            await runner.cleanup()

    def wait_started(self, timeout: float = 10.0) -> bool:
        return self._started.wait(timeout)

    def shutdown(self) -> None:
        """Stop serve_forever (from another thread) and wait until it has returned."""
        if not self._started.is_set() or self._stopped.is_set():
            return
        self._loop.call_soon_threadsafe(self._stop.set)
        self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()


def make_server(
    host: str = "127.0.0.1", port: int = 0, simulator: Simulator | None = None, *, app: SimulatorApp | None = None
) -> SimulatorServer:
    """Build (not start) a simulator server; port 0 picks a free port."""
    return SimulatorServer((host, port), app or SimulatorApp(simulator or Simulator()))


def start_in_thread(
    simulator: Simulator | None = None, host: str = "127.0.0.1", port: int = 0, *, app: SimulatorApp | None = None
):
    """Start a simulator on a background thread; return (server, base_url). Call server.shutdown()."""
    server = make_server(host, port, simulator, app=app)
    thread = threading.Thread(target=server.serve_forever, name="vendor-simulator", daemon=True)
    thread.start()
    server.wait_started(10)
    return server, f"http://{host}:{server.server_address[1]}"
