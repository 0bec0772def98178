"""The request-head deadline ``dscodec serve`` gives uvicorn (``head_timeout_protocol``), over raw sockets."""

from __future__ import annotations

import socket
import threading
import time
import types
from collections.abc import Iterator

import pytest
import uvicorn

from dscodec.server import ScriptedBackend, create_app, head_timeout_protocol
from tests.server.conftest import VOCABULARY
from tests.server.scripts import SCRIPTS

TIMEOUT = 0.5
GET = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    app = create_app(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY), tokenizer=VOCABULARY)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # no Nagle delay
    listener.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", http=head_timeout_protocol(TIMEOUT))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the test server did not start"
        time.sleep(0.01)
    yield listener.getsockname()[1]
    server.should_exit = True
    thread.join(timeout=10)
    listener.close()


def connect(port: int) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    return conn


def read_all(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    return data


def read_response(conn: socket.socket) -> bytes:
    """One response to ``GET /health`` (its head and its JSON body)."""
    data = b""
    while not data.endswith(b"}"):
        chunk = conn.recv(65536)
        assert chunk, data
        data += chunk
    return data


def test_a_connection_that_sends_nothing_gets_a_408_and_is_closed(port: int) -> None:
    with connect(port) as conn:
        start = time.monotonic()
        answer = read_all(conn)
        waited = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 408 ") and b"connection: close" in answer
    assert TIMEOUT * 0.8 < waited < TIMEOUT + 3


def test_a_head_sent_a_byte_now_and_then_is_cut_off(port: int) -> None:
    with connect(port) as conn:
        start = time.monotonic()
        for byte in GET[:-4]:
            try:
                conn.sendall(bytes([byte]))
            except OSError:  # closed under the sender
                break
            time.sleep(TIMEOUT / 5)
            if time.monotonic() - start > TIMEOUT * 4:
                break
        answer = read_all(conn)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert time.monotonic() - start < TIMEOUT * 4 + 3


def test_heads_that_arrive_in_time_are_answered_on_a_kept_connection(port: int) -> None:
    with connect(port) as conn:
        conn.sendall(GET[:10])
        time.sleep(TIMEOUT / 10)  # (the rest comes well within the deadline, however loaded the machine)
        conn.sendall(GET[10:])
        assert read_response(conn).startswith(b"HTTP/1.1 200 ")
        # Idle between requests for longer than the head deadline: that is the keep-alive timeout's business.
        time.sleep(TIMEOUT * 2)
        conn.sendall(GET)
        assert read_response(conn).startswith(b"HTTP/1.1 200 ")
        # A second head sent slowly on the kept connection is timed from its first byte.
        conn.sendall(GET[:10])
        time.sleep(TIMEOUT * 2)
        assert read_all(conn).startswith(b"HTTP/1.1 408 ")


@pytest.mark.parametrize(("value", "error"), [(0, ValueError), (float("nan"), ValueError), ("5", TypeError)])
def test_the_timeout_is_checked(value: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        head_timeout_protocol(value)  # type: ignore[arg-type]


class _Transport:
    def __init__(self, protocol: object) -> None:
        self.protocol = protocol
        self.written: list[bytes] = []
        self.closed = False

    def get_protocol(self) -> object:
        return self.protocol

    def is_closing(self) -> bool:
        return self.closed

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def close(self) -> None:
        self.closed = True


def test_an_upgraded_connection_is_left_alone() -> None:
    """A connection handed to another protocol (a WebSocket after its upgrade) had its head long ago: the deadline
    writes nothing into it. The same connection still with the HTTP protocol gets the 408."""
    timed_out = head_timeout_protocol(TIMEOUT)._head_timed_out  # type: ignore[attr-defined]
    for upgraded in (True, False):
        connection = types.SimpleNamespace(_head_timer=None, cycle=None, _before=None)
        connection.transport = _Transport(object() if upgraded else connection)
        timed_out(connection)
        assert connection.transport.closed is not upgraded
        assert bool(connection.transport.written) is not upgraded
