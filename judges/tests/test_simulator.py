"""The simulator's HTTP server (aiohttp) itself: keep-alive, bad requests, shutdown mid-call."""

import json
import socket
import threading

from simulator import SimModel, Simulator, start_in_thread


def request(path="/health", method="GET", body=b"", close=False):
    head = f"{method} {path} HTTP/1.1\r\nhost: sim\r\ncontent-length: {len(body)}\r\n"
    if close:
        head += "connection: close\r\n"
    return head.encode() + b"\r\n" + body


def read_response(sock) -> tuple[int, dict]:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    length = next(int(line.split(":")[1]) for line in lines if line.lower().startswith("content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return int(lines[0].split()[1]), json.loads(body)


def test_one_connection_carries_many_calls_and_a_garbled_request_harms_no_other():
    server, _ = start_in_thread(Simulator())
    address = ("127.0.0.1", server.server_address[1])
    try:
        with socket.create_connection(address) as kept_alive:
            call = json.dumps(
                {"model": "sim-claude-judge", "max_tokens": 64, "messages": [{"role": "user", "content": "SELECT 1"}]}
            ).encode()
            for _ in range(3):
                kept_alive.sendall(request("/v1/messages", "POST", call))
                status, message = read_response(kept_alive)
                assert status == 200 and message["type"] == "message"
            with socket.create_connection(address) as garbled:
                garbled.sendall(b"NONSENSE\r\n\r\n")
                answered = b""
                while chunk := garbled.recv(65536):
                    answered += chunk
                assert answered.split(b" ")[1] == b"400"  # answered "bad request", then closed
            kept_alive.sendall(request(close=True))
            assert read_response(kept_alive) == (200, {"ok": True, "simulator": True, "docket_simulator": True})
            assert kept_alive.recv(100) == b""  # closed as asked
    finally:
        server.shutdown()
        server.server_close()


def test_shutdown_ends_calls_still_waiting_out_their_latency():
    server, _ = start_in_thread(Simulator(models={"sim-slow-vendor": SimModel(latency_ms=60_000)}))
    client = socket.create_connection(("127.0.0.1", server.server_address[1]))
    call = json.dumps({"model": "sim-slow-vendor", "messages": [{"role": "user", "content": "SELECT 1"}]}).encode()
    client.sendall(request("/v1/messages", "POST", call))
    stopper = threading.Thread(target=server.shutdown)
    stopper.start()
    stopper.join(timeout=30)
    assert not stopper.is_alive(), "shutdown waited for a call's simulated latency"
    assert client.recv(100) == b""  # the waiting call's connection was closed
    client.close()
    server.server_close()


def test_shutdown_closes_a_connection_accepted_a_moment_before():
    """A connection accepted but not yet served when shutdown comes is closed too.

    Before the fix its task was cancelled before it started, so nothing closed its socket:
    about half of these shutdowns left the client waiting forever.
    """
    left_open = 0
    for _ in range(100):
        server, _ = start_in_thread(Simulator())
        client = socket.create_connection(("127.0.0.1", server.server_address[1]))
        server.shutdown()
        client.settimeout(5)
        try:
            closed = client.recv(100) == b""
        except ConnectionResetError:
            closed = True  # never accepted: refused when the listening socket closed
        except TimeoutError:
            closed = False
        left_open += not closed
        client.close()
        server.server_close()
        if left_open:
            break  # one is enough to fail; waiting out more timeouts proves nothing more
    assert left_open == 0
