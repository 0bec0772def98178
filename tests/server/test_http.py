"""The server at the HTTP level (raw httpx): SSE framing, error shapes and statuses, limits, disconnects, odd backends."""

from __future__ import annotations

import collections
import contextlib
import gzip
import json
import logging
import re
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest

import dscodec
from dscodec.errors import ConversionError, DscodecError
from dscodec.server import (
    BackendOutput,
    BackendRequest,
    Finish,
    PromptUsage,
    TextChunk,
    TokenChunk,
    create_app,
)
from dscodec.server._http import MAX_CODINGS, header_dict
from dscodec.server._outputs import asked_logprobs
from tests.server.conftest import VOCABULARY, LiveServer, Recorder, new_id, scenario

PATHS = {"chat_completions": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}
PROTOCOLS = list(PATHS)
LIMIT = 64 * 1024


def body(
    protocol: str, *, stream: bool = False, model: str = "DeepSeek-V4-Pro", **more: Any
) -> dict[str, Any]:
    if protocol == "responses":
        base: dict[str, Any] = {"model": model, "input": "Hi"}
    else:
        base = {"model": model, "messages": [{"role": "user", "content": "Hi"}]}
    if protocol == "messages":
        base["max_tokens"] = 100
    return {**base, "stream": stream, **more}


def assert_error_shape(protocol: str, response: httpx.Response, status: int, error_type: str) -> str:
    """The body is the protocol's error envelope (deviation D1 for Messages); returns the message."""
    assert response.status_code == status and response.headers["content-type"] == "application/json"
    data = response.json()
    if protocol == "messages":
        assert data["type"] == "error" and set(data["error"]) - {"details"} == {"type", "message"}
        # details: the error code by which the anthropic SDK picks its error class, when there is one
        assert set(data["error"].get("details", {"error_code": ""})) == {"error_code"}
        assert data["error"]["type"] == error_type
        return str(data["error"]["message"])
    assert list(data["error"]) == ["message", "type", "param", "code"]
    assert data["error"]["type"] == error_type
    return str(data["error"]["message"])


def frames(text: str) -> list[tuple[str | None, str]]:
    """SSE frames as (event name, data)."""
    out = []
    for block in text.split("\n\n"):
        if not block:
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        assert set(fields) <= {"event", "data"}, block
        out.append((fields.get("event"), fields["data"]))
    return out


@pytest.fixture(scope="module")
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


class _Busy(DscodecError):
    """A backend's own error that says when to retry (docs/server.md, Errors)."""

    status_code = 429
    error_type = "rate_limit_exceeded"

    def __init__(self, message: str, retry_after: object) -> None:
        super().__init__(message)
        self.retry_after = retry_after


async def odd_backend(job: BackendRequest) -> AsyncIterator[BackendOutput]:
    """Backends that misbehave or use the less common outputs, picked by ``X-Case``."""
    case = job.headers.get("x-case")
    ids = VOCABULARY.full.encode("Hello world", add_special_tokens=False).ids
    if case == "refuse":
        raise ConversionError("this backend refuses the request")
    if case == "busy":
        raise _Busy("too many requests", 3)
    if case == "busy_odd_wait":  # not a whole number of seconds: no header
        raise _Busy("too many requests", 2.5)
    yield PromptUsage(prompt_tokens=7, cached_tokens=2, system_fingerprint="fp_test")
    if case == "no_finish":
        yield TextChunk("Hi", 1)
    elif case == "logprobs":
        yield TokenChunk(ids, logprobs=[(-0.5, [(ids[0], -0.5), (1, -2.0)])] + [-0.25] * (len(ids) - 1))
        yield Finish("stop")
    elif case == "bad_logprobs":
        yield TextChunk("Hi", 1)
        yield TokenChunk(ids, logprobs=[-0.5])
    elif case == "bad_item":
        yield TextChunk("Hi", 1)
        yield "not an output"  # type: ignore[misc]
    elif case == "none_item":  # None is no output (the server's own end of output is the iterator's end)
        yield TextChunk("Hi", 1)
        yield None  # type: ignore[misc]
        yield TextChunk("lost", 1)
        yield Finish("length")
    elif case == "content_filter":
        yield TextChunk("Hm", 1)
        yield Finish("content_filter")


@pytest.fixture(scope="module")
def odd() -> Iterator[httpx.Client]:
    app = create_app(odd_backend, tokenizer=VOCABULARY, max_body_bytes=LIMIT)
    with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=10) as client:
        yield client


# -- framing ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_sse_framing(http: httpx.Client, protocol: str) -> None:
    response = http.post(PATHS[protocol], json=body(protocol, stream=True), headers=scenario("reasoning"))
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    parsed = frames(response.text)
    if protocol == "chat_completions":
        # Chat: unnamed data frames, ended by [DONE] (behavior.md#chat-chunks).
        assert parsed[-1] == (None, "[DONE]") and all(name is None for name, _ in parsed)
        assert sum(1 for _, data in parsed if data == "[DONE]") == 1
        assert json.loads(parsed[-2][1])["choices"][0]["finish_reason"] == "stop"
    else:
        # Responses and Messages: each frame is named after its type; no [DONE] (behavior.md#responses-events, behavior.md#messages-events).
        assert all(name == json.loads(data)["type"] for name, data in parsed)
        assert parsed[-1][0] == ("response.completed" if protocol == "responses" else "message_stop")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_complete_response_is_json(http: httpx.Client, protocol: str) -> None:
    response = http.post(PATHS[protocol], json=body(protocol), headers=scenario("plain"))
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    data = response.json()
    prefix = {"chat_completions": "chatcmpl-", "responses": "resp_", "messages": "msg_"}[protocol]
    assert data["id"].startswith(prefix) and data["model"] == "DeepSeek-V4-Pro"


def test_get_is_not_allowed(http: httpx.Client) -> None:
    assert http.get("/v1/chat/completions").status_code == 405


# -- request errors -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_malformed_json_is_a_400_in_the_protocol_shape(http: httpx.Client, protocol: str) -> None:
    response = http.post(PATHS[protocol], content=b"{not json", headers={"content-type": "application/json"})
    assert_error_shape(protocol, response, 400, "invalid_request_error")  # deviation D2


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_wrong_field_type_is_a_400(http: httpx.Client, protocol: str) -> None:
    response = http.post(PATHS[protocol], json=body(protocol, model=5))
    assert_error_shape(protocol, response, 400, "invalid_request_error")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_unknown_scenario_is_a_400(http: httpx.Client, protocol: str) -> None:
    response = http.post(PATHS[protocol], json=body(protocol, stream=True), headers=scenario("nope"))
    message = assert_error_shape(protocol, response, 400, "invalid_request_error")
    assert "'nope'" in message and "plain" in message


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("chunked", [False, True])
def test_body_over_the_limit_is_a_413(odd: httpx.Client, protocol: str, chunked: bool) -> None:
    payload = json.dumps(body(protocol, metadata={"pad": "x" * LIMIT})).encode()
    content: Any = iter([payload[i : i + 8192] for i in range(0, len(payload), 8192)]) if chunked else payload
    response = odd.post(PATHS[protocol], content=content, headers={"content-type": "application/json"})
    assert_error_shape(protocol, response, 413, "invalid_request_error")
    # Just under the limit is served.
    assert odd.post(PATHS[protocol], json=body(protocol)).status_code == 200


def _deflate(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(wbits=wbits)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("coding", "pack"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("GZip", lambda data: gzip.compress(data[:9]) + gzip.compress(data[9:])),  # two members
        ("deflate", zlib.compress),
        ("deflate", lambda data: _deflate(data, -zlib.MAX_WBITS)),  # raw, without the zlib header
        (
            "gzip, deflate",
            lambda data: zlib.compress(gzip.compress(data)),
        ),  # the last one applied is undone first
        ("identity", lambda data: data),
    ],
)
def test_a_compressed_body_is_decoded(
    odd: httpx.Client, protocol: str, coding: str, pack: Callable[[bytes], bytes]
) -> None:
    payload = json.dumps(body(protocol)).encode()
    response = odd.post(
        PATHS[protocol],
        content=pack(payload),
        headers={"content-type": "application/json", "content-encoding": coding},
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_body_in_an_unknown_coding_is_a_415(odd: httpx.Client, protocol: str) -> None:
    """Anthropic's API answers 400 with the case's code (the anthropic SDK raises its
    ``RequestBodyEncodingUnsupportedError``, a ``BadRequestError``, by the two); the OpenAI protocols 415."""
    payload = json.dumps(body(protocol)).encode()
    response = odd.post(PATHS[protocol], content=payload, headers={"content-encoding": "br"})
    status = 400 if protocol == "messages" else 415
    assert "'br'" in assert_error_shape(protocol, response, status, "invalid_request_error")
    if protocol == "messages":
        assert response.json()["error"]["details"] == {"error_code": "request_body_encoding_unsupported"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("coding", "damage", "says"),
    [
        (
            "gzip",
            lambda packed: b"plain text",
            "is not valid gzip data (Content-Encoding: gzip): it is corrupt.",
        ),
        (
            "gzip",
            lambda packed: packed[:-12],
            "is not valid gzip data (Content-Encoding: gzip): it ends early.",
        ),
        ("gzip", lambda packed: packed + b"}", "is not valid gzip data"),  # a second member that is not gzip
        ("deflate", lambda packed: packed + b"}", "has bytes after its deflate data"),
        ("deflate", lambda packed: packed[:2] + b"\xff" * 8, "is not valid deflate data"),
    ],
)
def test_a_body_that_is_not_valid_data_of_its_coding_is_a_400(
    odd: httpx.Client, protocol: str, coding: str, damage: Callable[[bytes], bytes], says: str
) -> None:
    payload = json.dumps(body(protocol)).encode()
    packed = gzip.compress(payload) if coding == "gzip" else zlib.compress(payload)
    response = odd.post(PATHS[protocol], content=damage(packed), headers={"content-encoding": coding})
    assert says in assert_error_shape(protocol, response, 400, "invalid_request_error")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_content_encoding_lines_are_one_list(odd: httpx.Client, protocol: str) -> None:
    """A coding list split over several header lines is read whole, in order (RFC 9110): the last one applied is
    undone first, and an unknown coding on any line is refused."""
    payload = json.dumps(body(protocol)).encode()
    lines = [
        ("content-type", "application/json"),
        ("content-encoding", "gzip"),
        ("content-encoding", "deflate"),
    ]
    response = odd.post(PATHS[protocol], content=zlib.compress(gzip.compress(payload)), headers=lines)
    assert response.status_code == 200, response.text
    lines = [("content-encoding", "gzip"), ("content-encoding", "br")]
    response = odd.post(PATHS[protocol], content=gzip.compress(payload), headers=lines)
    status = 400 if protocol == "messages" else 415
    assert "'br'" in assert_error_shape(protocol, response, status, "invalid_request_error")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_body_with_more_codings_than_the_limit_is_a_400(odd: httpx.Client, protocol: str) -> None:
    # Thin layers read one by one would cost the square of the body's size: their number is bounded.
    payload = json.dumps(body(protocol)).encode()
    for _ in range(MAX_CODINGS + 1):
        payload = gzip.compress(payload, compresslevel=0)
    response = odd.post(
        PATHS[protocol],
        content=payload,
        headers={"content-encoding": ", ".join(["gzip"] * (MAX_CODINGS + 1))},
    )
    message = assert_error_shape(protocol, response, 400, "invalid_request_error")
    assert f"at most {MAX_CODINGS}" in message
    # As many as the limit are decoded.
    payload = json.dumps(body(protocol)).encode()
    for _ in range(MAX_CODINGS):
        payload = gzip.compress(payload)
    response = odd.post(
        PATHS[protocol], content=payload, headers={"content-encoding": ", ".join(["gzip"] * MAX_CODINGS)}
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_compressed_body_over_the_limit_once_decoded_is_a_413(odd: httpx.Client, protocol: str) -> None:
    # A few hundred bytes that would grow past the limit are refused without being expanded whole.
    payload = json.dumps(body(protocol, metadata={"pad": "x" * (LIMIT * 64)})).encode()
    packed = gzip.compress(payload)
    assert len(packed) < LIMIT // 4
    response = odd.post(PATHS[protocol], content=packed, headers={"content-encoding": "gzip"})
    assert_error_shape(protocol, response, 413, "invalid_request_error")
    if protocol == "messages":  # the anthropic SDK raises RequestBodyTooLargeAfterDecodingError by it
        assert response.json()["error"]["details"] == {"error_code": "request_body_too_large_after_decoding"}


def test_compressed_bodies_are_decoded_a_few_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A burst of compressed bodies, each of which may expand to the body limit, holds at most DECODERS
    expansions at once; every request is still answered."""
    from concurrent.futures import ThreadPoolExecutor

    from dscodec.server import app as app_module

    running = [0, 0]  # now, most
    lock = threading.Lock()
    decode = app_module.decoded_body

    def watched(*args: Any) -> bytes:
        with lock:
            running[0] += 1
            running[1] = max(running)
        time.sleep(0.05)
        try:
            return decode(*args)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(app_module, "decoded_body", watched)
    packed = gzip.compress(json.dumps(body("chat_completions")).encode())
    app = create_app(odd_backend, tokenizer=VOCABULARY, max_body_bytes=LIMIT)
    with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=30) as client:

        def post(_: int) -> int:
            headers = {"content-encoding": "gzip", "content-type": "application/json"}
            return client.post(PATHS["chat_completions"], content=packed, headers=headers).status_code

        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(post, range(12)))
    assert statuses == [200] * 12
    assert 1 <= running[1] <= app_module.DECODERS


@pytest.mark.parametrize("protocol", ["messages", "responses"])
def test_token_counts_read_compressed_bodies_too(odd: httpx.Client, protocol: str) -> None:
    path = "/v1/messages/count_tokens" if protocol == "messages" else "/v1/responses/input_tokens"
    payload = json.dumps(body(protocol)).encode()
    plain = odd.post(path, content=payload)
    packed = odd.post(path, content=gzip.compress(payload), headers={"content-encoding": "gzip"})
    assert plain.status_code == packed.status_code == 200 and plain.json() == packed.json()


# -- stopping the backend -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_client_disconnect_stops_the_backend(http: httpx.Client, recorder: Recorder, protocol: str) -> None:
    key = new_id()
    with http.stream(
        "POST", PATHS[protocol], json=body(protocol, stream=True), headers=scenario("slow", key)
    ) as response:
        assert response.status_code == 200
        next(response.iter_bytes())
    run = recorder.wait_closed(key, timeout=3)
    assert not run.exhausted and run.yielded < 100  # the script has 400 chunks at 10 ms each


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_client_that_closes_its_sending_side_counts_as_gone(
    server: LiveServer, recorder: Recorder, protocol: str
) -> None:
    """A TCP half-close after the request (the client's end of stream) is a disconnect: the server cannot tell a
    client that still reads from one that left, and stopping the backend for one that left is what matters
    (docs/server.md, Plug in a real backend)."""
    key = new_id()
    payload = json.dumps(body(protocol, stream=True)).encode()
    head = (
        f"POST {PATHS[protocol]} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"X-Scenario: slow\r\nX-Test-Id: {key}\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        conn.sendall(head.encode() + payload)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(65536):  # the server closes the connection
            answer += chunk
    assert b"[DONE]" not in answer and b"message_stop" not in answer and b"response.completed" not in answer
    # The backend never starts (uvicorn closes the connection at the client's end of stream, before the request is
    # handled) or, if the request was handled first, it is closed early.
    deadline = time.monotonic() + 0.5
    while key not in recorder.runs and time.monotonic() < deadline:
        time.sleep(0.01)
    if key in recorder.runs:
        run = recorder.wait_closed(key, timeout=3)
        assert not run.exhausted and run.yielded < 100  # the script has 400 chunks at 10 ms each


class _Ready:
    """A backend whose output is all there already (an engine's queue drained): its iterator never waits, so only
    the server's own checkpoints let the disconnect watcher run."""

    ITEMS = 3_000_000

    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        run = self.runs[job.headers["x-test-id"]] = {"yielded": 0, "closed": False}
        try:
            for _ in range(self.ITEMS):
                yield TextChunk("word ", 1)
                run["yielded"] += 1
            yield Finish("stop")
        finally:
            run["closed"] = True


@pytest.mark.parametrize("stream", [True, False])
def test_a_disconnect_stops_a_backend_whose_output_never_waits(stream: bool) -> None:
    ready = _Ready()
    with LiveServer(create_app(ready, tokenizer=VOCABULARY, context_limit=10_000_000)) as live:
        key = new_id()
        request = body("chat_completions", stream=stream, max_tokens=393_216)
        with httpx.Client(base_url=live.url, timeout=0.5) as client:
            if stream:
                with client.stream(
                    "POST", PATHS["chat_completions"], json=request, headers={"x-test-id": key}
                ) as r:
                    next(r.iter_bytes())
            else:
                with pytest.raises(httpx.ReadTimeout):
                    client.post(PATHS["chat_completions"], json=request, headers={"x-test-id": key})
            deadline = time.monotonic() + 10
            while not ready.runs.get(key, {}).get("closed") and time.monotonic() < deadline:
                time.sleep(0.01)
            run = ready.runs[key]
            assert run["closed"] and run["yielded"] < _Ready.ITEMS
            assert client.get("/health").status_code == 200


class _Flood:
    """A backend whose output is long text, all there at once (``chunks`` pieces of 10 KB); it records how far it
    got and whether it was closed."""

    def __init__(self, chunks: int) -> None:
        self.chunks = chunks
        self.runs: dict[str, dict[str, Any]] = {}

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        run = self.runs[job.headers["x-test-id"]] = {"yielded": 0, "closed": False}
        try:
            for _ in range(self.chunks):
                yield TextChunk("word " * 2000, 100)
                run["yielded"] += 1
            yield Finish("stop")
        finally:
            run["closed"] = True


def test_a_stream_the_client_stops_reading_is_given_up_after_the_send_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The client keeps its connection open, with a small receive buffer, and reads only the status line: the
    server's writes wait for it to drain; after the send timeout the stream is abandoned and its backend closed.
    (A complete response goes out in one write, which never waits: the connection holds it.)"""
    flood = _Flood(chunks=3_000)  # 30 MB of text: far more than the socket buffers hold
    app = create_app(flood, tokenizer=VOCABULARY, context_limit=10_000_000, send_timeout=0.3)
    with (
        LiveServer(app) as live,
        caplog.at_level(logging.WARNING, logger="dscodec.server"),
        _stalled_stream(live, flood) as run,
    ):
        assert run["closed"] and run["yielded"] < flood.chunks
        assert "the client read nothing for 0.3 s; the answer to POST /v1/chat/completions" in caplog.text
        with httpx.Client(base_url=live.url, timeout=5) as other:  # the server goes on serving
            assert other.get("/health").status_code == 200


@contextlib.contextmanager
def _stalled_stream(live: LiveServer, flood: _Flood) -> Iterator[dict[str, Any]]:
    """A streamed Chat request from a client with a small receive buffer that reads the status line and nothing
    more: yields the flood's run once the server closed its backend (or 20 s passed), the connection still open."""
    payload = json.dumps(body("chat_completions", stream=True, max_tokens=393_216)).encode()
    key = new_id()
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.settimeout(10)
        client.connect(("127.0.0.1", live.port))
        client.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n"
            + f"x-test-id: {key}\r\ncontent-length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        assert client.recv(12).startswith(b"HTTP/1.1 200")
        deadline = time.monotonic() + 20
        while not flood.runs.get(key, {}).get("closed") and time.monotonic() < deadline:
            time.sleep(0.02)
        yield flood.runs[key]
    finally:
        client.close()


class _Records(logging.Handler):
    """The messages of the records of one logger (added once the server is up: uvicorn's logging setup removes the
    handlers of its loggers, but keeps their filters)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_stream_given_up_on_purpose_is_no_error_of_uvicorn() -> None:
    """Giving up the answer of a client that stopped reading leaves the response unfinished, which makes uvicorn
    close the connection. uvicorn logs that as an error of the app; the server's own warning has said what
    happened, so uvicorn's error is dropped. An app that leaves a response unfinished by mistake still gets it."""
    flood = _Flood(chunks=3_000)
    app = create_app(flood, tokenizer=VOCABULARY, context_limit=10_000_000, send_timeout=0.3)
    records = _Records()
    uvicorn_log = logging.getLogger("uvicorn.error")
    with LiveServer(app) as live:
        uvicorn_log.addHandler(records)
        try:
            with _stalled_stream(live, flood) as run:
                assert run["closed"]
                time.sleep(0.3)  # uvicorn's check follows the app's return
                with httpx.Client(base_url=live.url, timeout=5) as other:
                    assert other.get("/health").status_code == 200
        finally:
            uvicorn_log.removeHandler(records)
    assert not [message for message in records.messages if "without completing response" in message]

    async def unfinished(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"part", "more_body": True})

    records = _Records()
    with LiveServer(unfinished) as live:
        uvicorn_log.addHandler(records)
        try:
            with httpx.Client(base_url=live.url, timeout=5) as other, pytest.raises(httpx.HTTPError):
                other.get("/").read()
            time.sleep(0.1)
        finally:
            uvicorn_log.removeHandler(records)
    assert [message for message in records.messages if "without completing response" in message]


# -- unusual backends ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_client_disconnect_stops_a_complete_response_too(
    server: LiveServer, recorder: Recorder, protocol: str
) -> None:
    key = new_id()
    with httpx.Client(base_url=server.url, timeout=0.3) as impatient, pytest.raises(httpx.ReadTimeout):
        impatient.post(PATHS[protocol], json=body(protocol), headers=scenario("slow", key))
    run = recorder.wait_closed(key, timeout=3)
    assert not run.exhausted and run.yielded < 200


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_backend_error_before_output_keeps_its_status(odd: httpx.Client, protocol: str, stream: bool) -> None:
    response = odd.post(PATHS[protocol], json=body(protocol, stream=stream), headers={"x-case": "refuse"})
    assert (
        assert_error_shape(protocol, response, 400, "invalid_request_error")
        == "this backend refuses the request"
    )


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_backend_error_that_says_when_to_retry_sends_retry_after(
    odd: httpx.Client, protocol: str, stream: bool
) -> None:
    response = odd.post(PATHS[protocol], json=body(protocol, stream=stream), headers={"x-case": "busy"})
    assert assert_error_shape(
        protocol, response, 429, "rate_limit_error" if protocol == "messages" else "rate_limit_exceeded"
    )
    assert response.headers["retry-after"] == "3"
    odd_wait = odd.post(PATHS[protocol], json=body(protocol), headers={"x-case": "busy_odd_wait"})
    assert odd_wait.status_code == 429 and "retry-after" not in odd_wait.headers


def test_backend_that_raises_when_called() -> None:
    def broken(job: BackendRequest) -> AsyncIterator[BackendOutput]:
        raise RuntimeError("no engine")

    with LiveServer(create_app(broken, tokenizer=VOCABULARY)) as live:
        response = httpx.post(live.url + PATHS["messages"], json=body("messages"), timeout=10)
    assert assert_error_shape("messages", response, 502, "api_error") == "the model server failed: no engine"


@pytest.mark.parametrize("after_output", [False, True])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_cancellation_the_backend_raises_itself_is_a_backend_failure(
    protocol: str, stream: bool, after_output: bool
) -> None:
    """A backend that lets out a CancelledError of its own (nothing cancels the request) has failed: a 502, or
    after the first output the protocol's error event, never a response cut without a word."""
    import asyncio

    async def cancelled(job: BackendRequest) -> AsyncIterator[BackendOutput]:
        if after_output:
            yield TextChunk("Hello", 1)
        raise asyncio.CancelledError

    with LiveServer(create_app(cancelled, tokenizer=VOCABULARY)) as live:
        response = httpx.post(live.url + PATHS[protocol], json=body(protocol, stream=stream), timeout=10)
        again = httpx.post(live.url + PATHS[protocol], json=body(protocol), timeout=10)  # the server goes on
    message = "the model server failed: it raised CancelledError while the request was not cancelled"
    for answer in (response, again) if not (stream and after_output) else (again,):
        assert assert_error_shape(protocol, answer, 502, "api_error") == message
    if stream and after_output:
        assert response.status_code == 200 and "Hello" in response.text
        assert message in response.text and "error" in response.text


def test_backend_without_finish_ends_with_stop(odd: httpx.Client) -> None:
    data = odd.post(
        PATHS["chat_completions"], json=body("chat_completions"), headers={"x-case": "no_finish"}
    ).json()
    assert data["choices"][0]["finish_reason"] == "stop" and data["system_fingerprint"] == "fp_test"
    assert data["usage"]["prompt_tokens"] == 7 and data["usage"]["prompt_cache_hit_tokens"] == 2


#: The fields by which a request asks for log probabilities with two alternatives (Messages has none).
ASK_LOGPROBS: dict[str, dict[str, Any]] = {
    "chat_completions": {"logprobs": True, "top_logprobs": 2},
    "responses": {"top_logprobs": 2},
    "messages": {},
}


@pytest.mark.parametrize(("top", "kept"), [(2, [-0.5, -2.0]), (1, [-0.5]), (0, [])])
def test_token_logprobs_reach_the_client_as_asked(odd: httpx.Client, top: int, kept: list[float]) -> None:
    """The backend's entries go to the client with at most ``top_logprobs`` alternatives, the most likely."""
    data = odd.post(
        PATHS["chat_completions"],
        json=body("chat_completions", thinking={"type": "disabled"}, logprobs=True, top_logprobs=top),
        headers={"x-case": "logprobs"},
    ).json()
    choice = data["choices"][0]
    assert choice["message"]["content"] == "Hello world"
    entries = choice["logprobs"]["content"]
    assert "".join(e["token"] for e in entries) == "Hello world" and entries[0]["logprob"] == -0.5
    assert [t["logprob"] for t in entries[0]["top_logprobs"]] == kept


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_token_logprobs_nobody_asked_for_are_dropped(odd: httpx.Client, protocol: str, stream: bool) -> None:
    """A backend that sends log probabilities the request did not ask for (even malformed ones): the answer has
    none, as if the backend had sent none."""
    for case in ("logprobs", "bad_logprobs"):
        response = odd.post(PATHS[protocol], json=body(protocol, stream=stream), headers={"x-case": case})
        # No entry (``{"token": …, "logprob": …}``) anywhere; the malformed ones would have been a 502.
        assert response.status_code == 200 and '"logprob":' not in response.text.replace(" ", "")


def test_asked_logprobs() -> None:
    ask = dscodec.convert("chat_completions", body("chat_completions", logprobs=True, top_logprobs=1))
    pairs = [(5, -3.0), (6, -1.0), (7, -2.0)]
    assert asked_logprobs(ask, [(-1.0, pairs), -0.5]) == [(-1.0, [(6, -1.0)]), -0.5]
    entries = [(-1.0, [(6, -1.0)]), -0.5]
    assert asked_logprobs(ask, entries) is entries  # nothing to cut
    odd_entries = [(-1.0, [("x", "y"), (1, 2.0)]), (-1.0, 5), "z"]
    assert asked_logprobs(ask, odd_entries) is odd_entries  # left for the processor to refuse
    assert asked_logprobs(dscodec.convert("chat_completions", body("chat_completions")), entries) is None
    # Any sequence of entries, and of alternatives, is cut.
    assert asked_logprobs(ask, collections.deque([(-1.0, collections.UserList(pairs))])) == [
        (-1.0, [(6, -1.0)])
    ]
    # NaN among the alternatives: not sorted (it has no place), so passed on for the processor to refuse.
    with_nan = [(-1.0, [(5, -3.0), (6, float("nan")), (7, -0.1)])]
    assert asked_logprobs(ask, with_nan) is with_nan


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_content_filter_finish(odd: httpx.Client, protocol: str) -> None:
    data = odd.post(PATHS[protocol], json=body(protocol), headers={"x-case": "content_filter"}).json()
    if protocol == "chat_completions":
        assert data["choices"][0]["finish_reason"] == "content_filter"
    elif protocol == "responses":
        assert data["status"] == "incomplete" and data["incomplete_details"] == {"reason": "content_filter"}
    else:
        assert data["stop_reason"] == "refusal"


@pytest.mark.parametrize(
    ("protocol", "case"),
    [(p, case) for p in PROTOCOLS for case in ("bad_item", "none_item")]
    + [(p, "bad_logprobs") for p in ("chat_completions", "responses")],
)
def test_broken_backend_output(odd: httpx.Client, protocol: str, case: str) -> None:
    asked = ASK_LOGPROBS[protocol]
    response = odd.post(PATHS[protocol], json=body(protocol, **asked), headers={"x-case": case})
    assert_error_shape(protocol, response, 502, "api_error")
    streamed = odd.post(PATHS[protocol], json=body(protocol, stream=True, **asked), headers={"x-case": case})
    assert streamed.status_code == 200
    last_name, last = frames(streamed.text)[-1]
    if protocol == "chat_completions":
        assert last_name is None and json.loads(last)["error"]["type"] == "api_error"
    elif protocol == "responses":
        assert (
            last_name == "response.failed" and json.loads(last)["response"]["error"]["code"] == "server_error"
        )
    else:
        assert last_name == "error" and json.loads(last)["error"]["type"] == "api_error"


def test_import_dscodec_does_not_import_the_web_stack() -> None:
    code = "import sys, dscodec; sys.exit(1 if {'fastapi', 'uvicorn', 'starlette'} & set(sys.modules) else 0)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- request ids ----------------------------------------------------------------------------------------------------

#: The header each protocol's SDK reads its request id from.
ID_HEADERS = {"chat_completions": "x-request-id", "responses": "x-request-id", "messages": "request-id"}
_REQUEST_ID = re.compile(r"req_[0-9a-f]{24}")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_answer_has_a_request_id_the_backend_sees_too(protocol: str, stream: bool) -> None:
    seen: list[str] = []

    async def backend(job: BackendRequest) -> AsyncIterator[BackendOutput]:
        seen.append(job.request_id)
        yield TextChunk("Hi", 1)
        yield Finish("stop")

    with (
        LiveServer(create_app(backend, tokenizer=VOCABULARY)) as live,
        httpx.Client(base_url=live.url) as client,
    ):
        answers = [client.post(PATHS[protocol], json=body(protocol, stream=stream)) for _ in range(2)]
    ids = [answer.headers[ID_HEADERS[protocol]] for answer in answers]
    assert all(answer.status_code == 200 for answer in answers)
    assert all(_REQUEST_ID.fullmatch(request_id) for request_id in ids)
    assert seen == ids and ids[0] != ids[1]
    other = "request-id" if ID_HEADERS[protocol] == "x-request-id" else "x-request-id"
    assert other not in answers[0].headers


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_errors_have_request_ids_and_the_log_names_them(
    odd: httpx.Client, protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    refused = odd.post(PATHS[protocol], json=body(protocol), headers={"x-case": "refuse"})
    unknown = odd.get(PATHS[protocol] + "/nothing/here")
    for answer in (refused, unknown):
        assert answer.status_code in (400, 404, 405)
        assert _REQUEST_ID.fullmatch(answer.headers[ID_HEADERS[protocol]])
    caplog.clear()
    with caplog.at_level("WARNING", logger="dscodec.server"):
        broken = odd.post(PATHS[protocol], json=body(protocol, stream=True), headers={"x-case": "bad_item"})
    request_id = broken.headers[ID_HEADERS[protocol]]
    records = [r for r in caplog.records if r.name == "dscodec.server"]
    assert records and {getattr(r, "request_id", None) for r in records} == {request_id}


def test_the_sdks_read_the_request_ids(server: LiveServer) -> None:
    import anthropic
    import openai

    with openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0, timeout=10) as client:
        completion = client.chat.completions.create(
            model="DeepSeek-V4-Pro",
            messages=[{"role": "user", "content": "Hi"}],
            extra_headers=scenario("plain"),
        )
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model="nope", input="Hi")
    with anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0, timeout=10) as client:
        message = client.messages.create(
            model="DeepSeek-V4-Pro",
            max_tokens=100,
            messages=[{"role": "user", "content": "Hi"}],
            extra_headers=scenario("plain"),
        )
        with pytest.raises(anthropic.BadRequestError) as rejected:
            client.messages.create(model="nope", max_tokens=100, messages=[{"role": "user", "content": "Hi"}])
    found = [completion._request_id, refused.value.request_id, message._request_id, rejected.value.request_id]
    assert all(_REQUEST_ID.fullmatch(str(request_id)) for request_id in found)
    assert len(set(found)) == 4


@pytest.mark.parametrize(
    ("protocol", "path"), [("chat_completions", "/v1/boom"), ("messages", "/v1/messages/boom")]
)
def test_a_bug_in_a_handler_is_a_500_in_the_protocol_shape_with_its_request_id(
    protocol: str, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def boom() -> None:
        raise RuntimeError("a bug")

    app = create_app(odd_backend, tokenizer=VOCABULARY)
    app.add_api_route(path, boom, methods=["GET"])
    with LiveServer(app) as live, caplog.at_level("ERROR", logger="dscodec.server"):
        answer = httpx.get(live.url + path, timeout=10)
    assert (
        assert_error_shape(protocol, answer, 500, "api_error") == "The server failed to answer the request."
    )
    request_id = answer.headers[ID_HEADERS[protocol]]
    (record,) = [r for r in caplog.records if r.name == "dscodec.server"]
    assert request_id in record.getMessage() and record.exc_info is not None


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/v1/models"), ("GET", "/v1/models/nope"), ("POST", "/v1/nope"), ("GET", "/v1/messages/x")],
)
def test_the_anthropic_sdk_gets_its_own_error_shape_and_request_id_off_the_messages_path(
    odd: httpx.Client, method: str, path: str
) -> None:
    """A request with the ``anthropic-version`` header the Anthropic SDK sends is answered in Anthropic's shape,
    with the ``request-id`` header its SDK reads, on any ``/v1/`` path that is no OpenAI endpoint's; without the
    header, in OpenAI's."""
    anthropic = odd.request(method, path, headers={"anthropic-version": "2023-06-01"})
    openai = odd.request(method, path)
    assert _REQUEST_ID.fullmatch(anthropic.headers["request-id"]) and "x-request-id" not in anthropic.headers
    if anthropic.status_code != 200:
        assert anthropic.json()["type"] == "error" and set(anthropic.json()["error"]) == {"type", "message"}
    if not path.startswith("/v1/messages"):
        assert _REQUEST_ID.fullmatch(openai.headers["x-request-id"]) and "request-id" not in openai.headers
        if openai.status_code != 200:
            assert set(openai.json()["error"]) == {"message", "type", "param", "code"}


def test_openai_endpoints_keep_openai_shapes_whatever_the_headers(odd: httpx.Client) -> None:
    for path in ("/v1/chat/completions", "/v1/responses"):
        answer = odd.post(path, content=b"{", headers={"anthropic-version": "2023-06-01"})
        assert answer.status_code == 400 and "message" in answer.json()["error"]
        assert "x-request-id" in answer.headers and "request-id" not in answer.headers


def test_the_header_dict_reads_as_the_request_headers_do() -> None:
    """One pass over the headers (dict(request.headers) looks every name up again: quadratic in their number),
    the same mapping: lower-case names, the first of a repeated name winning."""
    from starlette.requests import Request

    raw = [
        (b"x-case", b"one"),
        (b"content-type", b"application/json"),
        (b"x-case", b"two"),
        (b"x-\xe9", b"\xff"),
    ]
    raw += [(f"x-h{k}".encode(), b"v") for k in range(2000)]
    scope = {"type": "http", "headers": raw}
    assert header_dict(scope) == dict(Request(scope).headers)
    assert header_dict(scope)["x-case"] == "one" and len(header_dict(scope)) == 2003


@pytest.mark.parametrize("path", ["/health", "/v1/models", "/v1/models/DeepSeek-V4-Pro", "/v1/models/nope"])
def test_the_probes_answer_head_as_get(odd: httpx.Client, path: str) -> None:
    got, head = odd.get(path), odd.head(path)
    assert head.status_code == got.status_code and head.content == b""
    assert head.headers["content-length"] == got.headers["content-length"] == str(len(got.content))


async def _no_usage(job: BackendRequest) -> AsyncIterator[BackendOutput]:
    """A backend that never reports the prompt's usage (PromptUsage is optional)."""
    yield TextChunk("Hello.", 2)
    yield Finish("stop")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_without_prompt_usage_from_the_backend_the_prompt_is_counted(protocol: str, stream: bool) -> None:
    from dscodec.server import ScriptedBackend

    counted = create_app(
        ScriptedBackend({"Hi": {"output": "Hello."}}, tokenizer=VOCABULARY), tokenizer=VOCABULARY
    )
    with LiveServer(create_app(_no_usage, tokenizer=VOCABULARY)) as bare, LiveServer(counted) as scripted:
        request = body(
            protocol,
            stream=stream,
            **(
                {"stream_options": {"include_usage": True}}
                if stream and protocol == "chat_completions"
                else {}
            ),
        )
        usages = []
        for live in (bare, scripted):
            response = httpx.post(live.url + PATHS[protocol], json=request, timeout=10)
            assert response.status_code == 200
            if stream:
                datas = [json.loads(d) for _, d in frames(response.text) if d.startswith("{")]
                final = datas[-1]
                usage = final.get("usage") or final.get("response", {}).get("usage")
                if protocol == "messages":
                    usage = {"input_tokens": datas[0]["message"]["usage"]["input_tokens"]}
            else:
                usage = response.json()["usage"]
            usages.append(usage.get("prompt_tokens", usage.get("input_tokens")))
        # The scripted backend reports the prompt's length itself: the same count.
        assert usages[0] == usages[1] > 0


class _Refusal(DscodecError):
    status_code = 400


class _Throttled(DscodecError):
    status_code = 429


@pytest.mark.parametrize(
    ("error", "openai_type"), [(_Refusal, "invalid_request_error"), (_Throttled, "rate_limit_exceeded")]
)
def test_a_backend_error_class_that_sets_only_a_client_status_gets_its_type(
    error: type[DscodecError], openai_type: str
) -> None:
    async def refusing(job: BackendRequest) -> AsyncIterator[BackendOutput]:
        raise error("no")
        yield TextChunk("", 0)  # pragma: no cover - an async generator

    with LiveServer(create_app(refusing, tokenizer=VOCABULARY)) as live:
        for protocol in ("chat_completions", "responses"):
            response = httpx.post(live.url + PATHS[protocol], json=body(protocol), timeout=10)
            assert assert_error_shape(protocol, response, error.status_code, openai_type) == "no"


def test_a_request_the_tokenizer_cannot_serve_is_not_retried() -> None:
    """The bundled V4 file has no <｜System｜>: every V4.1 request fails the same way, so the answer tells the SDKs
    (which retry a 500) not to try again."""
    with LiveServer(create_app(_Ready())) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        request = {**body("chat_completions"), "model": "DeepSeek-V4.1-Flash"}
        answer = client.post(PATHS["chat_completions"], json=request)
        assert answer.status_code == 500 and answer.headers["x-should-retry"] == "false"
        message = answer.json()["error"]["message"]
        # The token is named, the server's file is not (a path on the server is none of the client's business).
        assert "'<｜System｜>'" in message and "tokenizer.json made for this model version" in message
        assert "/" not in message and "bundled" not in message
