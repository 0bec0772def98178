"""The server against hostile clients and broken backends.

The invariant, for every request whatever it holds: the answer is JSON in the shape of the protocol the path
names (the OpenAI envelope, or Anthropic's under ``/v1/messages``) with the error's own status, or, once a stream
has started, the protocol's mid-stream error event. Never a plain-text 500, never an exception reaching uvicorn
(which would log "Exception in ASGI application"), and for client mistakes no error logged at all.
"""

from __future__ import annotations

import json
import logging
import random
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

import anyio
import httpx
import pytest

import dscodec
from dscodec.errors import DscodecError, ModelOutputError
from dscodec.server import (
    BackendOutput,
    BackendRequest,
    Finish,
    KeepAlive,
    PromptUsage,
    TextChunk,
    TokenChunk,
    create_app,
)
from tests.server.conftest import VOCABULARY, LiveServer
from tests.server.test_http import PATHS, PROTOCOLS, assert_error_shape, body, frames

LIMIT = 64 * 1024
TIMEOUT = 0.5  # the app's body and backend timeouts: short, so stalls are seen quickly


class Weird(DscodecError):
    """A backend's own error class with a status that is no error status."""

    status_code: ClassVar[int] = 200


async def _hang() -> None:
    await anyio.sleep_forever()


async def _outputs(case: str) -> AsyncIterator[BackendOutput]:
    """The items of each backend case (picked by the ``X-Case`` header)."""
    if case == "empty":
        return
    if case == "model_error_first":
        raise ModelOutputError("the engine sent a token id outside the vocabulary")
    if case == "weird_status":
        raise Weird("not really an error")
    if case == "hang_first":
        await _hang()
    if case == "keep_alive_hang":  # a KeepAlive restarts the wait; it does not end it
        yield KeepAlive()
        await _hang()
    if case == "keep_alive":  # silences shorter than the timeout, together longer, before and after the usage
        for _ in range(3):  # each silence leaves the timeout 0.3 s of room on a loaded machine
            await anyio.sleep(TIMEOUT * 0.4)
            yield KeepAlive()
        yield PromptUsage(prompt_tokens=3)
        for _ in range(3):
            await anyio.sleep(TIMEOUT * 0.4)
            yield KeepAlive()
    first: dict[str, Any] = {
        "wrong_first": "garbage",
        "negative_count": TextChunk("x", -1),
        "float_count": TextChunk("x", 1.5),  # type: ignore[arg-type]
        "negative_prompt": PromptUsage(prompt_tokens=-5),
        "huge_prompt": PromptUsage(prompt_tokens=2**70),
        "bad_fingerprint": PromptUsage(prompt_tokens=1, system_fingerprint=123),  # type: ignore[arg-type]
        "bytes_text": TextChunk(b"bytes", 1),  # type: ignore[arg-type]
        "bad_finish": Finish("bogus"),  # type: ignore[arg-type]
        "negative_id": TokenChunk([-1]),
    }
    if case in first:
        yield first[case]
        yield Finish("stop")
        return
    yield PromptUsage(prompt_tokens=3)
    yield TextChunk("Hello", 1)
    if case == "model_error_mid":
        raise ModelOutputError("the engine sent a token id outside the vocabulary")
    if case == "raise_mid":
        raise RuntimeError("engine crashed")
    if case == "hang_mid":
        await _hang()
    if case == "garbage_mid":
        yield 42  # type: ignore[misc]
    if case == "negative_count_mid":
        yield TextChunk("y", -2)
    if case == "large":
        yield TextChunk("z" * 40_000, 1)
    if case == "bad_close":
        try:
            yield Finish("stop")
        finally:
            raise RuntimeError("the engine failed to release its slot")
    yield Finish("stop")


async def _coroutine() -> None:
    return None


def hostile_backend(job: BackendRequest) -> Any:
    """A backend that misbehaves as ``X-Case`` says; by default a short correct answer."""
    case = job.headers.get("x-case", "")
    if case == "raise_on_call":
        raise RuntimeError("no engine")
    if case == "returns_list":
        return [TextChunk("x", 1)]
    if case == "returns_coroutine":
        return _coroutine()
    return _outputs(case)


#: The loggers watched: the server's, and uvicorn's (which logs exceptions that reach it).
WATCHED = ("uvicorn", "uvicorn.error", "dscodec.server")


class LogWatch(logging.Handler):
    """Collects the records of the server's loggers and uvicorn's (which logs exceptions that reach it).

    uvicorn sets its logging up whenever a server is made (``uvicorn.Config``), and that removes every handler of
    its loggers, this one too: :meth:`take`, which each test calls once its server is up, puts it back.
    """

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []
        self.lock_records = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self.lock_records:
            self.records.append(record)

    def attach(self) -> None:
        for name in WATCHED:
            logging.getLogger(name).addHandler(self)  # once: a handler already there is not added again

    def detach(self) -> None:
        for name in WATCHED:
            logging.getLogger(name).removeHandler(self)

    def take(self) -> list[logging.LogRecord]:
        self.attach()
        with self.lock_records:
            out, self.records = self.records, []
        return out


@pytest.fixture(scope="module")
def logs() -> Iterator[LogWatch]:
    watch = LogWatch()
    watch.attach()
    yield watch
    watch.detach()


@pytest.fixture(scope="module")
def live(logs: LogWatch) -> Iterator[LiveServer]:
    app = create_app(
        hostile_backend,
        tokenizer=VOCABULARY,
        max_body_bytes=LIMIT,
        body_timeout=TIMEOUT,
        backend_timeout=TIMEOUT,
    )
    with LiveServer(app) as server:
        yield server


@pytest.fixture
def client(live: LiveServer, logs: LogWatch) -> Iterator[httpx.Client]:
    logs.take()
    with httpx.Client(base_url=live.url, timeout=10) as http:
        yield http


def assert_quiet(logs: LogWatch) -> None:
    """Nothing was logged: client mistakes are answered, not reported."""
    records = logs.take()
    assert not records, [r.getMessage() for r in records]


def assert_no_crash(logs: LogWatch) -> None:
    """No exception reached uvicorn, and nothing was logged as a server bug."""
    for record in logs.take():
        assert record.name != "uvicorn.error", record.getMessage()
        assert "unhandled" not in record.getMessage() and "answering" not in record.getMessage()


def assert_stream_error(protocol: str, response: httpx.Response, error_type: str = "api_error") -> None:
    """A started stream (200) that ends with the protocol's error event."""
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    name, data = frames(response.text)[-1]
    last = json.loads(data)
    if protocol == "chat_completions":
        assert name is None and last["error"]["type"] == "api_error"
    elif protocol == "responses":
        assert name == "response.failed" and last["response"]["error"]["code"] == "server_error"
    else:
        assert name == "error" and last["error"]["type"] == error_type
    assert "[DONE]" not in response.text


# -- request bodies -----------------------------------------------------------------------------------------------

BAD_BODIES = {
    "empty": b"",
    "not_json": b"{not json",
    "invalid_utf8": b'{"model": "\xff\xfe"}',
    "lone_surrogate": b'{"model": "\\ud800"}',
    "bom": b'\xef\xbb\xbf{"model": "DeepSeek-V4-Pro"}',
    "array": b"[]",
    "null": b"null",
    "number": b"1e999",
    "truncated": b'{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"',
    "nested_deep": b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "nested_unclosed": b"[" * 60_000,
    "form": b"model=DeepSeek-V4-Pro&messages=hi",
    "nul": b"\x00" * 64,
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_bad_body_is_a_400_in_the_protocol_shape(
    client: httpx.Client, logs: LogWatch, protocol: str, case: str
) -> None:
    response = client.post(
        PATHS[protocol], content=BAD_BODIES[case], headers={"content-type": "application/json"}
    )
    assert_error_shape(protocol, response, 400, "invalid_request_error")
    assert_quiet(logs)


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "image/png"]
)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_body_is_json_whatever_the_content_type(
    client: httpx.Client, logs: LogWatch, protocol: str, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    response = client.post(PATHS[protocol], content=json.dumps(body(protocol)).encode(), headers=headers)
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert_quiet(logs)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_multipart_body_is_a_400(client: httpx.Client, logs: LogWatch, protocol: str) -> None:
    response = client.post(PATHS[protocol], files={"file": ("a.json", b"{}")})
    assert_error_shape(protocol, response, 400, "invalid_request_error")
    assert_quiet(logs)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_chunked_body_is_read_whole(client: httpx.Client, protocol: str) -> None:
    payload = json.dumps(body(protocol)).encode()
    response = client.post(
        PATHS[protocol], content=iter([payload[i : i + 7] for i in range(0, len(payload), 7)])
    )
    assert response.status_code == 200 and response.json()["model"] == "DeepSeek-V4-Pro"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_declared_length_over_the_limit_is_refused_before_reading(
    live: LiveServer, logs: LogWatch, protocol: str
) -> None:
    logs.take()
    head = (
        f"POST {PATHS[protocol]} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {10 * LIMIT}\r\n\r\n"
    )
    status, data = _raw(live, head.encode() + b"{")
    assert status == 413
    _assert_shape(protocol, data)
    assert_quiet(logs)


# -- methods and paths --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH", "OPTIONS"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_other_methods_are_a_405_in_the_protocol_shape(
    client: httpx.Client, logs: LogWatch, protocol: str, method: str
) -> None:
    response = client.request(method, PATHS[protocol], content=b"{}")
    assert response.headers["allow"] == "POST"
    # Anthropic has no type for a 405: the client's mistake, so an invalid request (not api_error, the server's).
    assert method in assert_error_shape(protocol, response, 405, "invalid_request_error")
    assert_quiet(logs)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/responses/resp_1", "DELETE or GET"),
        ("POST", "/v1/responses/resp_1", "DELETE or GET"),
        ("GET", "/v1/responses/resp_1/cancel", "POST"),
        ("DELETE", "/v1/responses/resp_1/input_items", "GET"),
        ("GET", "/v1/messages/count_tokens", "POST"),
    ],
)
def test_a_405_names_the_methods_the_path_takes(
    client: httpx.Client, logs: LogWatch, method: str, path: str, allowed: str
) -> None:
    response = client.request(method, path, content=b"{}")
    protocol = "messages" if path.startswith("/v1/messages") else "responses"
    message = assert_error_shape(protocol, response, 405, "invalid_request_error")
    assert message.endswith(f"send a {allowed} request."), message
    assert_quiet(logs)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_head_is_a_405_without_a_body(client: httpx.Client, protocol: str) -> None:
    response = client.head(PATHS[protocol])
    assert response.status_code == 405 and response.content == b""


@pytest.mark.parametrize(
    ("path", "protocol"),
    [
        ("/v1/embeddings", "chat_completions"),
        ("/v1", "chat_completions"),
        ("/v1/chat/completion", "chat_completions"),
        ("/v1/responses/resp_1/steps", "chat_completions"),
        ("/v1/messages/count_token", "messages"),
        ("/v1/messages/batches", "messages"),
    ],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_unknown_path_under_v1_is_a_404_in_its_protocol_shape(
    client: httpx.Client, logs: LogWatch, path: str, protocol: str, method: str
) -> None:
    response = client.request(method, path, content=b"{}")
    error_type = "not_found_error" if protocol == "messages" else "invalid_request_error"
    assert path in assert_error_shape(protocol, response, 404, error_type)
    assert_quiet(logs)


@pytest.mark.parametrize(
    ("method", "path", "headers", "protocol", "status"),
    [
        ("POST", "/chat/completions", {}, "chat_completions", 404),  # the base URL without its /v1
        ("POST", "/messages", {"anthropic-version": "2023-06-01"}, "messages", 404),
        ("GET", "/", {}, "chat_completions", 404),
        ("POST", "/v1/messages/", {}, "messages", 404),  # a trailing slash: no redirect
        ("POST", "/v1/chat/completions/", {}, "chat_completions", 404),
        ("GET", "/health/", {}, "chat_completions", 404),
        ("POST", "/health", {}, "chat_completions", 405),
        ("DELETE", "/health", {"anthropic-version": "2023-06-01"}, "messages", 405),
    ],
)
def test_routing_errors_anywhere_are_in_a_protocol_shape(
    client: httpx.Client, method: str, path: str, headers: dict[str, str], protocol: str, status: int
) -> None:
    """Off /v1/ too: OpenAI's shape, or Anthropic's for the Anthropic SDK (its anthropic-version header); a
    trailing slash is no endpoint (a 404, never a redirect to a Location built from the Host header)."""
    response = client.request(method, path, content=b"{}", headers=headers)
    error_type = (
        {404: "not_found_error", 405: "invalid_request_error"}[status] if protocol == "messages" else None
    )
    assert "location" not in response.headers
    assert_error_shape(protocol, response, status, error_type or "invalid_request_error")


# -- slow and vanishing clients -----------------------------------------------------------------------------------


def _raw(live: LiveServer, data: bytes, *, close_after: bool = False) -> tuple[int, bytes]:
    """Send raw bytes; the response's status and body (``(0, b"")`` when the socket is closed after sending)."""
    with socket.create_connection(("127.0.0.1", live.port), timeout=10) as sock:
        sock.sendall(data)
        if close_after:
            return 0, b""
        received = b""
        while b"\r\n\r\n" not in received:
            piece = sock.recv(65536)
            if not piece:
                break
            received += piece
        head, _, rest = received.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        while len(rest) < length:
            piece = sock.recv(65536)
            if not piece:
                break
            rest += piece
        return int(head.split(b" ", 2)[1]), rest


def _assert_shape(protocol: str, data: bytes) -> None:
    parsed = json.loads(data)
    if protocol == "messages":
        assert parsed["type"] == "error" and set(parsed["error"]) - {"details"} == {"type", "message"}
    else:
        assert list(parsed["error"]) == ["message", "type", "param", "code"]


def test_a_body_trickled_past_its_deadline_is_refused(logs: LogWatch) -> None:
    """A byte now and then keeps each pause short, yet the whole body must arrive within 20 pauses' time."""
    app = create_app(hostile_backend, tokenizer=VOCABULARY, body_timeout=0.1)  # the body within 2 s
    with LiveServer(app) as live, socket.create_connection(("127.0.0.1", live.port), timeout=10) as sock:
        logs.take()
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
        started = time.monotonic()
        received = b""
        while not received and time.monotonic() - started < 8:
            try:
                sock.sendall(b" ")
            except OSError:  # the server answered and closed
                pass
            time.sleep(0.05)
            sock.setblocking(False)
            try:
                received = sock.recv(65536)
            except BlockingIOError:
                pass
            finally:
                sock.setblocking(True)
        assert received.startswith(b"HTTP/1.1 400"), received[:100]  # Messages: Anthropic's status for it
        assert b"did not arrive within 2 s" in received
    assert_quiet(logs)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_body_that_stops_arriving_is_refused(live: LiveServer, logs: LogWatch, protocol: str) -> None:
    logs.take()
    head = f"POST {PATHS[protocol]} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    status, data = _raw(live, head.encode() + b'{"model": ')  # 90 bytes never come
    # Anthropic's API answers 400 with the case's code (the anthropic SDK's BetaRequestBodyTimeoutError, which
    # is not retried); the OpenAI protocols 408.
    assert status == (400 if protocol == "messages" else 408)
    _assert_shape(protocol, data)
    assert_quiet(logs)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_client_gone_mid_body_is_forgotten_quietly(live: LiveServer, logs: LogWatch, protocol: str) -> None:
    logs.take()
    head = f"POST {PATHS[protocol]} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
    _raw(live, head.encode() + b'{"model": "DeepSeek', close_after=True)
    # The server is still there, and said nothing about it.
    with httpx.Client(base_url=live.url, timeout=10) as http:
        assert http.post(PATHS[protocol], json=body(protocol)).status_code == 200
    assert_quiet(logs)


# -- broken backends ----------------------------------------------------------------------------------------------

#: Backend cases that fail before any output: the status (and Anthropic error type) the client gets, streaming
#: or not.
FAIL_FIRST = {
    "wrong_first": (502, "api_error"),
    "negative_count": (502, "api_error"),
    "float_count": (502, "api_error"),
    "negative_prompt": (502, "api_error"),
    "huge_prompt": (502, "api_error"),
    "bad_fingerprint": (502, "api_error"),
    "bytes_text": (502, "api_error"),
    "bad_finish": (502, "api_error"),
    "model_error_first": (502, "api_error"),
    "weird_status": (500, "api_error"),
    "hang_first": (504, "timeout_error"),
    "keep_alive_hang": (504, "timeout_error"),
    "raise_on_call": (502, "api_error"),
    "returns_list": (502, "api_error"),
    "returns_coroutine": (502, "api_error"),
}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("case", list(FAIL_FIRST))
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_backend_failing_before_output_gets_a_status(
    client: httpx.Client, logs: LogWatch, protocol: str, case: str, stream: bool
) -> None:
    status, anthropic_type = FAIL_FIRST[case]
    response = client.post(PATHS[protocol], json=body(protocol, stream=stream), headers={"x-case": case})
    openai_type = "api_error"
    assert_error_shape(protocol, response, status, anthropic_type if protocol == "messages" else openai_type)
    assert_no_crash(logs)


#: Backend cases that fail after the first output: the non-streaming status and the Anthropic error event type.
FAIL_MID = {
    "model_error_mid": (502, "api_error"),
    "raise_mid": (502, "api_error"),
    "hang_mid": (504, "timeout_error"),
    "garbage_mid": (502, "api_error"),
    "negative_count_mid": (502, "api_error"),
}


@pytest.mark.parametrize("case", list(FAIL_MID))
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_backend_failing_after_output(client: httpx.Client, logs: LogWatch, protocol: str, case: str) -> None:
    status, anthropic_type = FAIL_MID[case]
    complete = client.post(PATHS[protocol], json=body(protocol), headers={"x-case": case})
    assert_error_shape(protocol, complete, status, anthropic_type if protocol == "messages" else "api_error")
    streamed = client.post(PATHS[protocol], json=body(protocol, stream=True), headers={"x-case": case})
    assert_stream_error(protocol, streamed, anthropic_type)
    assert "Hello" in streamed.text
    assert_no_crash(logs)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_keep_alive_items_restart_the_backend_timeout(
    client: httpx.Client, logs: LogWatch, protocol: str, stream: bool
) -> None:
    """A backend silent for longer than backend_timeout in all, but never that long between two items (some of
    them KeepAlive), answers in full; the KeepAlive items themselves send nothing."""
    response = client.post(
        PATHS[protocol], json=body(protocol, stream=stream), headers={"x-case": "keep_alive"}
    )
    assert response.status_code == 200, response.text
    assert "Hello" in response.text
    if not stream:
        usage = response.json()["usage"]
        assert usage.get("prompt_tokens", usage.get("input_tokens")) == 3
    assert_no_crash(logs)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_backend_that_yields_nothing(
    client: httpx.Client, logs: LogWatch, protocol: str, stream: bool
) -> None:
    response = client.post(PATHS[protocol], json=body(protocol, stream=stream), headers={"x-case": "empty"})
    assert response.status_code == 200
    if stream:
        assert frames(response.text)
    else:
        data = response.json()
        text = {"chat_completions": lambda: data["choices"][0]["message"]["content"]}.get(protocol)
        assert text is None or text() == ""
    assert_quiet(logs)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_backend_that_fails_to_close(client: httpx.Client, protocol: str, stream: bool) -> None:
    response = client.post(
        PATHS[protocol], json=body(protocol, stream=stream), headers={"x-case": "bad_close"}
    )
    assert response.status_code == 200 and "Hello" in response.text
    if stream:
        last = {"chat_completions": (None, "[DONE]"), "responses": ("response.completed", None)}
        name, data = frames(response.text)[-1]
        assert last.get(protocol, ("message_stop", None)) in ((name, data), (name, None))


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_token_ids_out_of_range_never_crash(
    client: httpx.Client, logs: LogWatch, protocol: str, stream: bool
) -> None:
    """Whether the processor accepts a negative id or refuses it (ModelOutputError), the client gets an answer
    in the protocol's shape."""
    response = client.post(
        PATHS[protocol], json=body(protocol, stream=stream), headers={"x-case": "negative_id"}
    )
    if response.status_code != 200:
        assert_error_shape(protocol, response, 502, "api_error")
    elif not stream:
        assert response.headers["content-type"] == "application/json" and response.json()["model"]
    assert_no_crash(logs)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_processor_refusing_output_is_a_502_or_an_error_event(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch, protocol: str, stream: bool
) -> None:
    """A ModelOutputError from the processor: before the first frame a 502 body, after it the error event."""

    def refuse(self: dscodec.StreamProcessor, text: str, token_count: int = 0) -> list[dscodec.WireEvent]:
        raise ModelOutputError("refused by the processor")

    monkeypatch.setattr(dscodec.StreamProcessor, "push_text", refuse)
    response = client.post(PATHS[protocol], json=body(protocol, stream=stream))
    message = assert_error_shape(protocol, response, 502, "api_error")
    assert message == "refused by the processor"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_failing_accumulation_is_a_502(
    client: httpx.Client, logs: LogWatch, monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise KeyError("choices")

    monkeypatch.setattr(dscodec, "accumulate", broken)
    response = client.post(PATHS[protocol], json=body(protocol))
    assert_error_shape(protocol, response, 502, "api_error")
    assert_no_crash(logs)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_heavy_steps_run_off_the_event_loop(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    """Accumulation, a large chunk and the end of the response run in worker threads; tiny chunks do not."""
    threads: dict[str, set[int]] = {}
    real_accumulate, real_push, real_finish = (
        dscodec.accumulate,
        dscodec.StreamProcessor.push_text,
        dscodec.StreamProcessor.finish,
    )

    def accumulate(*args: Any, **kwargs: Any) -> dict[str, Any]:
        threads.setdefault("accumulate", set()).add(threading.get_ident())
        return real_accumulate(*args, **kwargs)

    def push_text(self: dscodec.StreamProcessor, text: str, token_count: int = 0) -> list[dscodec.WireEvent]:
        threads.setdefault("large" if len(text) > 1000 else "tiny", set()).add(threading.get_ident())
        return real_push(self, text, token_count)

    def finish(self: dscodec.StreamProcessor, reason: Any = None) -> list[dscodec.WireEvent]:
        threads.setdefault("finish", set()).add(threading.get_ident())
        return real_finish(self, reason)

    monkeypatch.setattr(dscodec, "accumulate", accumulate)
    monkeypatch.setattr(dscodec.StreamProcessor, "push_text", push_text)
    monkeypatch.setattr(dscodec.StreamProcessor, "finish", finish)
    for stream in (False, True):
        response = client.post(
            PATHS[protocol], json=body(protocol, stream=stream), headers={"x-case": "large"}
        )
        assert response.status_code == 200 and "z" * 40_000 in response.text
    (loop,) = threads["tiny"]
    assert threads["large"] and threads["finish"] and threads["accumulate"]
    assert loop not in threads["large"] | threads["finish"] | threads["accumulate"]


# -- many requests ------------------------------------------------------------------------------------------------


def test_a_barrage_of_random_requests(live: LiveServer, logs: LogWatch) -> None:
    """Hundreds of random methods, paths, headers and bodies: every answer is JSON in the path's shape."""
    rng = random.Random(20240611)
    valid = {p: json.dumps(body(p)).encode() for p in PROTOCOLS}
    paths = [*PATHS.values(), "/v1/x", "/v1/messages/x", "/v1/chat/completions/x"]
    logs.take()
    with httpx.Client(base_url=live.url, timeout=10) as http:
        for _ in range(300):
            path = rng.choice(paths)
            protocol = next((p for p, route in PATHS.items() if path.startswith(route)), "chat_completions")
            kind = rng.randrange(6)
            if kind == 0:
                content = rng.randbytes(rng.randrange(0, 300))
            elif kind == 1:
                base = valid[protocol]
                content = base[: rng.randrange(len(base))]
            elif kind == 2:
                base = bytearray(valid[protocol])
                for _ in range(rng.randrange(1, 5)):
                    base[rng.randrange(len(base))] = rng.randrange(256)
                content = bytes(base)
            elif kind == 3:
                depth = rng.choice([100, 127, 128, 129, 1000])
                content = b"[" * depth + b"]" * depth
            else:
                content = valid[protocol]
            method = rng.choice(["POST"] * 8 + ["GET", "PUT", "DELETE"])
            headers = {
                "content-type": rng.choice(["application/json", "text/plain", "application/octet-stream"])
            }
            if rng.random() < 0.3:
                headers["x-case"] = rng.choice(["wrong_first", "raise_mid", "empty", "garbage_mid"])
            response = http.request(method, path, content=content, headers=headers)
            assert response.headers["content-type"] in (
                "application/json",
                "text/event-stream; charset=utf-8",
            )
            if response.status_code >= 400:
                _assert_shape(protocol, response.content)
    assert_no_crash(logs)


def test_a_declared_length_in_other_digits_is_not_a_number(logs: LogWatch) -> None:
    """A Content-Length of non-ASCII digits (``²`` is a digit to ``str.isdigit``) is no declared size: the body is
    read and answered as usual, never a crash in ``int()``. (HTTP servers refuse such a header before the app;
    this calls the app as an ASGI server that lets it through would.)"""
    logs.take()
    app = create_app(hostile_backend, tokenizer=VOCABULARY, max_body_bytes=LIMIT, body_timeout=TIMEOUT)
    payload = json.dumps(body("chat_completions")).encode()
    sent: list[dict[str, Any]] = []

    async def run() -> None:
        messages = [{"type": "http.request", "body": payload, "more_body": False}]

        async def receive() -> dict[str, Any]:
            if not messages:
                await anyio.sleep_forever()  # the client stays
            return messages.pop(0)

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        path = PATHS["chat_completions"]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"content-type", b"application/json"), (b"content-length", "²".encode("latin-1"))],
            "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 80),
        }
        await app(scope, receive, send)

    anyio.run(run)
    start = next(message for message in sent if message["type"] == "http.response.start")
    assert start["status"] == 200
    assert_quiet(logs)
