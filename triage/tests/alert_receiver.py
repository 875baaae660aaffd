"""A real local HTTP receiver for webhook tests: records each POST's headers and raw body."""

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes


@dataclass
class Receiver:
    """Answer each POST with the next status of `statuses` (the last one repeats)."""

    statuses: list = field(default_factory=lambda: [204])
    posts: list = field(default_factory=list)

    def __post_init__(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.posts.append(Received(self.path, dict(self.headers), body))
                index = min(len(receiver.posts), len(receiver.statuses)) - 1
                self.send_response(receiver.statuses[index])
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hook"

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
