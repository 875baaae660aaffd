"""POST a batch to Docket over one kept-alive HTTP(S) connection, with the standard library only."""

from __future__ import annotations

import http.client
import ssl
from urllib.parse import urlsplit

from docket_client._delivery import HttpResult

INGEST_PATH = "/api/v1/queries"
USER_AGENT = "docket-client/0.1.0"
# What a kept-alive connection the server closed while idle fails with.
STALE_CONNECTION = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


def _no_answer(error: Exception) -> HttpResult:
    return HttpResult(None, {}, error=f"{type(error).__name__}: {error}")


class HttpTransport:
    """One connection to Docket, reopened after any error. Not for two threads at once."""

    def __init__(self, url: str, token: str, timeout: float):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be an http(s) address such as https://docket.example.com, not {url!r}")
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        self._path = parts.path.rstrip("/") + INGEST_PATH
        self._timeout = timeout
        self._headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        self._connection: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._scheme == "https":
            context = ssl.create_default_context()
            return http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout, context=context)
        return http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)

    def post(self, body: bytes) -> HttpResult:
        """Send one body; any failure to get an answer is an HttpResult with no status, never an exception."""
        reused = self._connection is not None
        try:
            return self._post_once(body)
        except STALE_CONNECTION as error:
            self.close()
            if not reused:
                return _no_answer(error)
        except (OSError, http.client.HTTPException) as error:
            self.close()
            return _no_answer(error)
        # A kept-alive connection the server had closed meanwhile: once more, on a new one.
        try:
            return self._post_once(body)
        except (OSError, http.client.HTTPException) as error:
            self.close()
            return _no_answer(error)

    def _post_once(self, body: bytes) -> HttpResult:
        if self._connection is None:
            self._connection = self._connect()
        self._connection.request("POST", self._path, body=body, headers=self._headers)
        response = self._connection.getresponse()
        data = response.read()
        headers = {name.lower(): value for name, value in response.getheaders()}
        if response.will_close:
            self.close()
        return HttpResult(response.status, headers, data)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
