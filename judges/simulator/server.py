"""The simulator's HTTP/1.1 server: asyncio, keep-alive, one event-loop thread.

It knows nothing of vendors: each request goes to `app.SimulatorApp.respond`.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from http import HTTPStatus

from judges.simulator.app import SimulatorApp
from judges.simulator.formats import json_response
from judges.simulator.vendor import Simulator


class SimulatorServer:
    """A small asyncio HTTP/1.1 server (keep-alive, one event-loop thread) for SimulatorApp.

    One thread answers every connection and a simulated latency is a timer, not a sleeping
    thread: the vendor's latency is what is simulated, not its CPU, so the double should
    cost the machine (and the worker it shares the cores with) as little as possible.
    `server_address`, `serve_forever()`, `shutdown()` and `server_close()` work as on
    socketserver's servers.
    """

    max_head_bytes = 64 * 1024

    def __init__(self, address: tuple[str, int], app: SimulatorApp):
        self.app = app
        self.socket = socket.create_server(address, backlog=512)
        self.server_address = self.socket.getsockname()[:2]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._stopped = threading.Event()
        self._connections: set = set()
        # Writers of every accepted connection, noted when asyncio accepts it: its task may
        # not have started yet when shutdown comes, and a task cancelled before it starts
        # never reaches the `finally` that closes its connection.
        self._writers: set = set()

    def serve_forever(self) -> None:
        try:
            asyncio.run(self._serve())
        finally:
            self._stopped.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._accepted, sock=self.socket, limit=self.max_head_bytes)
        self._started.set()
        try:
            await self._stop.wait()
        finally:
            # Stop accepting, but close the server only once the connections asyncio has
            # already accepted have their transports: Python 3.11 silently drops (and never
            # closes) a connection whose transport is made after `Server.close()`.
            self._loop.remove_reader(self.socket.fileno())
            for _ in range(3):
                await asyncio.sleep(0)
            server.close()
            # Each round lets connections accepted just before reach `_accepted`, then ends
            # every connection known so far.
            for _ in range(3):
                await asyncio.sleep(0)
                for task in list(self._connections):
                    task.cancel()
                await asyncio.gather(*self._connections, return_exceptions=True)
                # Connections whose task never ran: close them here, and wait until their
                # sockets are really closed (that happens on a later turn of the loop).
                writers, self._writers = list(self._writers), set()
                for writer in writers:
                    writer.close()
                await asyncio.gather(*(writer.wait_closed() for writer in writers), return_exceptions=True)

    def shutdown(self) -> None:
        """Stop serve_forever (from another thread) and wait until it has returned."""
        if not self._started.is_set() or self._stopped.is_set():
            return
        self._loop.call_soon_threadsafe(self._stop.set)
        self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()

    def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        """Note the connection at once (asyncio calls this as it accepts), then serve it."""
        self._writers.add(writer)
        return self._connection(reader, writer)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        self.app.simulator.count("connections")  # clients should keep theirs alive
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the client went away or sent garbage: drop the connection
        except asyncio.CancelledError:
            pass  # shutdown; ending quietly spares asyncio's "exception in callback" noise
        finally:
            self._connections.discard(task)
            self._writers.discard(writer)
            writer.close()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request, answer it; return whether the connection stays open."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # closed between requests
        request_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
        method, target, version = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        else:
            body = await reader.readexactly(int(headers.get("content-length") or 0))
        try:
            status, response_headers, data = await self.app.respond(method, target, headers, body)
        except Exception as exc:  # noqa: BLE001 - a bug in the double answers 500, like a vendor's would
            status, response_headers, data = json_response(
                500, {"type": "error", "error": {"type": "api_error", "message": f"simulator bug: {exc!r}"}}
            )
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        lines = [
            f"HTTP/1.1 {status} {_reason(status)}",
            f"server: {self.app.server_version}",
            f"content-length: {len(data)}",
            *(f"{name}: {value}" for name, value in response_headers.items()),
        ]
        if not keep_alive:
            lines.append("connection: close")
        # One write for head and body: no Nagle / delayed-ACK stall between them.
        writer.write("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + (b"" if method == "HEAD" else data))
        await writer.drain()
        return keep_alive


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # no trailers expected: the final CRLF
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Unknown"


def make_server(host: str = "127.0.0.1", port: int = 0, simulator: Simulator | None = None) -> SimulatorServer:
    """Build (not start) a simulator server; port 0 picks a free port."""
    return SimulatorServer((host, port), SimulatorApp(simulator or Simulator()))


def start_in_thread(simulator: Simulator | None = None, host: str = "127.0.0.1", port: int = 0):
    """Start a simulator on a background thread; return (server, base_url). Call server.shutdown()."""
    server = make_server(host, port, simulator)
    thread = threading.Thread(target=server.serve_forever, name="vendor-simulator", daemon=True)
    thread.start()
    server._started.wait(10)
    return server, f"http://{host}:{server.server_address[1]}"
