"""A recording HTTP proxy in front of the test's Docket server: counts the posts and their sizes,
and can answer the next requests itself (a 503, say) before it forwards again."""

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


class RecordingProxy:
    """Forward every request to `upstream`, except the answers queued in `refuse_next`."""

    def __init__(self, upstream: str, port: int = 0):
        target = urlsplit(upstream)
        self.posts: list[int] = []  # queries per forwarded post
        self.refused: list[int] = []  # statuses answered without forwarding
        self.refuse_next: list[tuple[int, dict]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    refusal = proxy.refuse_next.pop(0) if proxy.refuse_next else None
                if refusal is not None:
                    status, headers = refusal
                    proxy.refused.append(status)
                    return self._answer(status, headers, b'{"detail": "refused by the test proxy"}')
                upstream_connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                upstream_connection.request("POST", self.path, body=body, headers=dict(self.headers))
                response = upstream_connection.getresponse()
                data = response.read()
                upstream_connection.close()
                if response.status in (200, 202):
                    proxy.posts.append(len(json.loads(body)))
                self._answer(response.status, {"Content-Type": response.getheader("Content-Type", "")}, data)

            def _answer(self, status, headers, data):
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="recording-proxy", daemon=True)

    def start(self) -> "RecordingProxy":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
