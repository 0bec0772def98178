"""An engine's answer in a content coding: asked for none, read in bounded steps when it comes anyway."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dscodec.server.backends import EngineError, VLLMBackend, _engine

EVENTS = b'data: {"n": 1}\n\ndata: {"n": 2}\n\ndata: [DONE]\n\n'


class _Chunks(httpx.AsyncByteStream):
    """A body arriving in pieces of ``size`` bytes."""

    def __init__(self, data: bytes, size: int = 1000) -> None:
        self.data = data
        self.size = size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.data), self.size):
            yield self.data[start : start + self.size]


def _response(data: bytes, coding: str | None, status: int = 200, size: int = 1000) -> httpx.Response:
    headers = {"content-encoding": coding} if coding is not None else {}
    return httpx.Response(status, headers=headers, stream=_Chunks(data, size))


def _events(response: httpx.Response) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        return [event async for event in _engine._events(response, "vLLM")]

    return asyncio.run(read())


@pytest.mark.parametrize(
    ("coding", "data"),
    [
        (None, EVENTS),
        ("identity", EVENTS),
        ("gzip", gzip.compress(EVENTS, mtime=0)),
        ("x-gzip", gzip.compress(EVENTS, mtime=0)),
        ("deflate", zlib.compress(EVENTS)),
        ("deflate", zlib.compress(EVENTS)[2:-4]),  # raw deflate, as some servers send it
        ("gzip, gzip", gzip.compress(gzip.compress(EVENTS, mtime=0), mtime=0)),
        (
            "gzip",
            gzip.compress(EVENTS[:20], mtime=0) + gzip.compress(EVENTS[20:], mtime=0),
        ),  # two gzip members
    ],
)
def test_an_answer_in_a_content_coding_is_read(coding: str | None, data: bytes) -> None:
    assert _events(_response(data, coding)) == [{"n": 1}, {"n": 2}]


def test_a_compressed_answer_that_expands_hugely_is_refused_at_the_event_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A line 64 times the event limit in a few kilobytes of gzip: refused once the line passes the limit, having
    expanded little more than that (httpx alone would expand each received piece whole)."""
    monkeypatch.setattr(_engine, "EVENT_LIMIT", 1 << 20)
    expanded: list[int] = []
    pieces = _engine._Inflater.pieces

    def counted(self: _engine._Inflater, data: bytes) -> Any:
        for piece in pieces(self, data):
            expanded.append(len(piece))
            yield piece

    monkeypatch.setattr(_engine._Inflater, "pieces", counted)
    bomb = gzip.compress(b"data: " + b"a" * (64 << 20), compresslevel=9)
    assert len(bomb) < 200_000
    with pytest.raises(EngineError, match="longer than"):
        _events(_response(bomb, "gzip", size=len(bomb)))  # the whole bomb in one piece
    assert sum(expanded) <= (1 << 20) + 2 * _engine._INFLATE_STEP


def test_an_error_body_that_expands_hugely_is_read_only_to_its_start() -> None:
    bomb = gzip.compress(b'{"error": {"message": "' + b"a" * (16 << 20) + b'"}}')

    async def read() -> bytes:
        return await _engine._read_some(_response(bomb, "gzip", status=500), "vLLM")

    assert len(asyncio.run(read())) == 64 * 1024


@pytest.mark.parametrize(
    ("coding", "data", "says"),
    [
        ("br", b"\x00\x01", "content coding 'br'"),
        ("gzip, gzip, gzip, gzip, gzip", EVENTS, "content coding"),
        ("gzip", b"not gzip at all", "not valid gzip data"),
    ],
)
def test_an_answer_in_a_coding_dscodec_cannot_read_is_an_engine_error(
    coding: str, data: bytes, says: str
) -> None:
    with pytest.raises(EngineError, match=says):
        _events(_response(data, coding))


def test_the_engine_is_asked_for_no_content_coding() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("accept-encoding", ""))
        return httpx.Response(200, text="ok")

    backend = VLLMBackend(
        "http://engine.invalid", client=httpx.AsyncClient(transport=httpx.MockTransport(answer))
    )
    asyncio.run(backend.health())
    assert backend.headers["accept-encoding"] == "identity" and seen == ["identity"]


def test_a_compressed_flood_of_short_lines_lets_other_requests_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """2 MiB of newlines (2 million empty lines) in a few kilobytes of gzip: between the steps of expanding it
    the event loop runs other work, and the whole answer may expand to no more than INFLATE_LIMIT."""
    monkeypatch.setattr(_engine, "_INFLATE_STEP", 1 << 16)
    flood = gzip.compress(b"\n" * (2 << 20), compresslevel=9, mtime=0)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def read() -> list[dict[str, Any]]:
        ticker = asyncio.create_task(tick())
        try:
            return [
                event async for event in _engine._events(_response(flood, "gzip", size=len(flood)), "vLLM")
            ]
        finally:
            ticker.cancel()

    assert asyncio.run(read()) == []
    assert ticks >= (2 << 20) // _engine._INFLATE_STEP  # a turn for other work at every step at least
    monkeypatch.setattr(_engine, "INFLATE_LIMIT", 1 << 20)
    with pytest.raises(EngineError, match="expands to more than 1048576 bytes"):
        asyncio.run(read())


def test_a_complete_vllm_response_ends_at_the_budget_the_engine_ignores() -> None:
    """vLLM holds a complete response until its finish: one that goes past max_tokens is cut there, at once (not
    after the engine stops, if it ever does)."""
    from dscodec.server.backend import Finish, PromptUsage, TokenChunk
    from dscodec.server.backends.vllm import _Reader

    reader = _Reader(84, buffered=True, top=0, logprobs=True, budget=3)
    chunk = {"choices": [{"index": 0, "token_ids": [5, 6], "finish_reason": None}]}
    assert len(reader.feed(chunk)) == 1 and not reader.done
    more = {"choices": [{"index": 0, "token_ids": [7, 8], "finish_reason": None}]}
    assert reader.feed(more) == [
        PromptUsage(84, 0),
        TokenChunk([5, 6], None),
        TokenChunk([7], None),
        Finish("length"),
    ]
    assert reader.done
