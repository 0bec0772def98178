"""The example server in-process (starlette's TestClient) against hostile requests: fuzzed bodies on every
endpoint, streamed and not, odd headers, query strings, paths and methods, and backends that fail mid-stream.

The invariant: an answer is JSON (or, for a started stream, SSE whose frames are JSON) and an error is the path's
protocol shape (the OpenAI envelope, or Anthropic's under ``/v1/messages``) with a 4xx status for a client mistake
and 502/504 for a backend failure; never a 500, never an exception out of the app. Complements test_hostile.py
(uvicorn, timing and disconnects); the example count of the fuzzed bodies comes from ``DSCODEC_MAX_EXAMPLES``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from dscodec.server import create_app
from tests.property.test_hostile_requests import hostile_bodies
from tests.server.conftest import VOCABULARY
from tests.server.test_hostile import hostile_backend
from tests.server.test_http import PATHS, PROTOCOLS, body

LIMIT = 256 * 1024
ANTHROPIC_PATHS = ("/v1/messages", "/v1/messages/count_tokens")
#: The endpoints that count a request's prompt tokens, by protocol.
COUNTING = {"messages": ("/v1/messages/count_tokens",), "responses": ("/v1/responses/input_tokens",)}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    app = create_app(
        hostile_backend,
        tokenizer=VOCABULARY,
        max_body_bytes=LIMIT,
        body_timeout=2.0,
        backend_timeout=2.0,
        context_limit=8192,
    )
    with TestClient(app, raise_server_exceptions=True) as test_client:
        yield test_client


def _protocol_of(path: str) -> str:
    return "messages" if path.split("?")[0].startswith("/v1/messages") else "openai"


def assert_answer(path: str, response: Any, *, backend_failure: bool = False) -> None:
    """A success (JSON, or SSE with JSON frames) or an error in the path's protocol shape; never a 500."""
    status = response.status_code
    kind = response.headers.get("content-type", "")
    assert status != 500, response.text[:500]
    assert "Traceback" not in response.text
    if status == 200 and kind.startswith("text/event-stream"):
        for block in response.text.split("\n\n"):
            if not block:
                continue
            fields = dict(line.split(": ", 1) for line in block.split("\n"))
            assert set(fields) <= {"event", "data"}, block
            if fields["data"] != "[DONE]":
                json.loads(fields["data"])
        return
    if status == 405 and response.request.method == "HEAD":
        return
    assert kind == "application/json", (status, kind, response.text[:200])
    data = response.json()
    if status < 400:
        assert isinstance(data, dict)
        return
    allowed = {502, 504} if backend_failure else set()
    assert status < 500 or status in allowed or status == 503, (status, data)
    if path.startswith("/v1/"):
        if _protocol_of(path) == "messages":
            assert data["type"] == "error" and set(data["error"]) - {"details"} == {"type", "message"}, data
            assert isinstance(data["error"]["message"], str) and data["error"]["message"]
        else:
            assert list(data["error"]) == ["message", "type", "param", "code"], data
            assert isinstance(data["error"]["message"], str) and data["error"]["message"]


def _content(value: str | bytes | dict[str, Any]) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return json.dumps(value).encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("protocol", PROTOCOLS)
@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(data=st.data())
def test_fuzzed_bodies(client: TestClient, protocol: str, data: st.DataObject) -> None:
    """Every hostile body of the request fuzzer, streamed or not, on its endpoint (and on the endpoint that counts
    its tokens)."""
    value = data.draw(hostile_bodies(protocol))
    if isinstance(value, dict) and data.draw(st.booleans()):
        value = {**value, "stream": data.draw(st.sampled_from([True, False, None, "yes", 1]))}
    paths = [PATHS[protocol], *COUNTING.get(protocol, ())]
    for path in paths:
        response = client.post(path, content=_content(value), headers={"content-type": "application/json"})
        assert_answer(path, response)


@pytest.mark.parametrize("path", [*PATHS.values(), *(path for paths in COUNTING.values() for path in paths)])
@pytest.mark.parametrize(
    "content",
    [
        b"",
        b" ",
        b"{",
        b"[]",
        b'"text"',
        b"null",
        b"true",
        b"-0",
        b"1e99999",
        b"{}",
        b'{"model": null}',
        b'{"model": "DeepSeek-V4-Pro"}',
        b'{"model": "nope", "messages": []}',
        b'{"model": "DeepSeek-V4-Pro", "messages": "hi", "input": 1}',
        b'{"model": "DeepSeek-V4-Pro", "model": 1}',
        b'{"model": "\\ud800"}',
        b'{"model": "\xff"}',
        b"\xef\xbb\xbf{}",
        b"\x00\x00\x00{",
        "{}".encode("utf-16"),
        b'{"a": ' + b"[" * 200 + b"]" * 200 + b"}",
        b'{"a": ' + b'{"b": ' * 200 + b"1" + b"}" * 200 + b"}",
        b"[" * 100_000,
        b'{"a": "' + b"x" * 200_000 + b'"}',
        b'{"a": "' + b"x" * (LIMIT + 10) + b'"}',
        b'{"model": "DeepSeek-V4-Pro", "max_tokens": 18446744073709551616, "messages": [], "input": "x"}',
        b'{"model": "DeepSeek-V4-Pro", "max_tokens": NaN, "messages": [], "input": "x"}',
        b'{"model": "DeepSeek-V4-Pro", "temperature": Infinity, "messages": [], "input": "x"}',
    ],
)
def test_odd_bodies_on_every_endpoint(client: TestClient, path: str, content: bytes) -> None:
    response = client.post(path, content=content, headers={"content-type": "application/json"})
    assert_answer(path, response)
    # Responses has no max_tokens (unknown fields are ignored, as the reference does): that body is valid there.
    assert response.status_code >= 400 or (
        path.startswith("/v1/responses") and b"18446744073709551616" in content
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "headers",
    [
        {"content-type": "application/json; charset=latin-1"},
        {"content-type": "application/json; charset=utf-16"},
        {"content-type": "text/html"},
        {"content-type": "multipart/form-data; boundary=x"},
        {"content-type": "application/json", "content-encoding": "gzip"},
        {"content-type": "application/json", "content-encoding": "br, deflate"},
        {"content-type": "application/json", "accept": "text/html"},
        {"content-type": "application/json", "accept-encoding": "gzip"},
        {"content-type": "application/json", "x-scenario": "x" * 8000},
        {"content-type": "application/json", "x-scenario": "é中"},
        {"content-type": "application/json", "x-case": "nonexistent"},
        {"content-type": "application/json", "anthropic-version": "1999-01-01"},
        {"content-type": "application/json", "authorization": "Bearer " + "a" * 5000},
        {"content-type": "application/json", "expect": "100-continue"},
    ],
)
def test_odd_headers(client: TestClient, protocol: str, headers: dict[str, str]) -> None:
    encoded = [(k.encode(), v.encode("utf-8")) for k, v in headers.items()]
    for streamed in (False, True):
        response = client.post(
            PATHS[protocol], content=json.dumps(body(protocol, stream=streamed)), headers=encoded
        )
        assert_answer(PATHS[protocol], response)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "query",
    ["?", "?stream=true", "?a=%ff", "?%00=%00", "?" + "a=1&" * 2000, "?model=x&model=y", "?;", "?\u00e9"],
)
def test_query_strings_are_ignored(client: TestClient, protocol: str, query: str) -> None:
    response = client.post(PATHS[protocol] + query, content=json.dumps(body(protocol)))
    assert_answer(PATHS[protocol], response)
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/models/" + "m" * 10_000),
        ("GET", "/v1/models/%00"),
        ("GET", "/v1/models/%ff%fe"),
        ("GET", "/v1/models/..%2F..%2Fetc"),
        ("GET", "/v1/models/DeepSeek-V4-Pro/extra"),
        ("GET", "/v1/models/DeepSeek-V4-Pro?x=%ff"),
        ("GET", "/v1/models/%E4%B8%AD"),
        ("GET", "/v1/models"),
        ("POST", "/v1/models"),
        ("GET", "/v1/responses/resp_123"),
        ("DELETE", "/v1/responses/resp_123"),
        ("GET", "/v1/responses/" + "r" * 10_000),
        ("GET", "/v1/responses/%00%ff"),
        ("GET", "/v1/responses/resp_123?stream=true"),
        ("GET", "/v1/responses/resp_123?stream=%ff"),
        ("POST", "/v1/responses/resp_123/cancel"),
        ("GET", "/v1/responses/resp_123/input_items"),
        ("GET", "/v1/responses/resp_123/input_items?limit=" + "9" * 5000),
        ("GET", "/v1/responses/resp_123/input_items?limit=-1&order=%ff&after=%00"),
        ("PUT", "/v1/responses/resp_123/input_items"),
        ("POST", "/v1/responses/input_tokens?x=%ff"),
        ("GET", "/v1/responses/input_tokens"),
        ("GET", "/v1/messages/batches"),
        ("POST", "/v1/messages/count_tokens/x"),
        ("GET", "/v1/messages/count_tokens"),
        ("POST", "/v1/chat/completions/"),
        ("POST", "/v1//chat/completions"),
        ("POST", "/v1/CHAT/completions"),
        ("POST", "/v1/completions"),
        ("POST", "/v1/embeddings"),
        ("PATCH", "/v1/messages"),
        ("OPTIONS", "/v1/chat/completions"),
        ("HEAD", "/v1/responses"),
        ("TRACE", "/v1/responses"),
        ("BREW", "/v1/messages"),
        ("GET", "/health?verbose=1"),
        ("POST", "/health"),
        ("GET", "/"),
        ("GET", "/openapi.json"),
    ],
)
def test_routes_and_methods(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path, content=b"{}")
    assert_answer(path, response)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "case",
    [
        "raise_mid",
        "model_error_mid",
        "garbage_mid",
        "negative_count_mid",
        "model_error_first",
        "wrong_first",
        "negative_id",
        "huge_prompt",
        "bad_finish",
        "returns_list",
        "raise_on_call",
        "empty",
        "large",
    ],
)
def test_backend_failures_streamed_and_not(client: TestClient, protocol: str, case: str) -> None:
    """A backend failing before or during the output: a 502/504 in the protocol's shape, or (streamed, once
    started) the protocol's error event as the last frame."""
    for streamed in (False, True):
        response = client.post(
            PATHS[protocol], content=json.dumps(body(protocol, stream=streamed)), headers={"x-case": case}
        )
        assert_answer(PATHS[protocol], response, backend_failure=True)


@pytest.mark.parametrize(
    "extra",
    [
        {"previous_response_id": "resp_" + "x" * 5000},
        {"previous_response_id": ""},
        {"previous_response_id": 5},
        {"previous_response_id": "\u0000"},
        {"store": "yes"},
        {"store": True, "metadata": {"k" * 100: "v" * 10_000}},
        {"metadata": [1]},
        {"conversation": "c"},
        {"background": True},
        {"include": ["reasoning.encrypted_content", 5]},
    ],
)
def test_responses_state_fields(client: TestClient, extra: dict[str, Any]) -> None:
    response = client.post("/v1/responses", content=json.dumps(body("responses", **extra)))
    assert_answer("/v1/responses", response)


def test_text_from_outside_cannot_forge_a_line_of_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """An engine's error message is logged with its controls escaped: a newline in it starts no line that would
    read as the server's own."""
    from dscodec.errors import ModelOutputError
    from dscodec.server._outputs import backend_error

    forged = 'engine: x\nINFO:     127.0.0.1 - "POST /v1/admin HTTP/1.1" 200 OK\r\x00\u2028 end'
    with caplog.at_level(logging.WARNING, logger="dscodec.server"):
        backend_error(ModelOutputError(forged))
    (record,) = [r for r in caplog.records if r.name == "dscodec.server"]
    message = record.getMessage()
    assert message.endswith(
        'engine: x\\nINFO:     127.0.0.1 - "POST /v1/admin HTTP/1.1" 200 OK\\r\\x00\\u2028 end'
    )
    assert not any(c in message for c in "\n\r\x00\u2028")
