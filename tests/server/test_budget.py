"""The completion budget holds whatever the backend sends: a backend that ignores ``max_tokens`` (an engine that
does not honour it, or one that never stops) is cut there with a ``length`` finish."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest

import dscodec
from dscodec.server import BackendOutput, BackendRequest, Finish, TextChunk, TokenChunk, create_app
from dscodec.server._outputs import WithinBudget, complete_response
from tests.server.conftest import VOCABULARY, LiveServer

HELLO = VOCABULARY.encode_plain(["Hello"])[0]
assert len(HELLO) == 1
closed: list[str] = []


async def _backend(job: BackendRequest) -> AsyncIterator[BackendOutput]:
    """What the ``X-Case`` header names, whatever the budget."""
    case = job.headers.get("x-case", "")
    try:
        if case == "one_chunk":  # 70 ids in one chunk, then a stop finish
            yield TokenChunk(HELLO * 70, [(-0.5, [])] * 70)
            yield Finish("stop")
        elif case == "endless":  # never stops
            while True:
                yield TokenChunk(HELLO)
                await anyio.lowlevel.checkpoint()
        elif case == "text":  # text chunks of 3 tokens each: the one crossing the budget is kept whole
            for _ in range(10):
                yield TextChunk("abc", 3)
            yield Finish("stop")
        elif case == "uncounted":  # text chunks that say they hold no token: bounded by their length
            for _ in range(20_000):
                yield TextChunk("w" * 128, 0)
            yield Finish("stop")
        elif case == "exact":  # exactly the budget, then the model's own finish
            yield TokenChunk(HELLO * 5)
            yield Finish("stop")
    finally:
        closed.append(case)


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    with LiveServer(create_app(_backend, tokenizer=VOCABULARY)) as server:
        yield server


def _chat(live: LiveServer, case: str, *, stream: bool) -> dict[str, Any]:
    body = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Hi"}],
        "thinking": {"type": "disabled"},
        "max_tokens": 5,
        "stream": stream,
        "logprobs": True,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    answer = httpx.post(f"{live.url}/v1/chat/completions", json=body, headers={"x-case": case}, timeout=30)
    assert answer.status_code == 200
    if not stream:
        return dict(answer.json())
    chunks = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: {")]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    entries = sum(
        len((c["choices"][0]["logprobs"] or {}).get("content") or []) for c in chunks if c["choices"]
    )
    return {
        "text": text,
        "entries": entries,
        "finish": chunks[-1]["choices"][0]["finish_reason"],
        **chunks[-1],
    }


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("case", "text", "tokens", "finish"),
    [
        ("one_chunk", "Hello" * 5, 5, "length"),
        ("endless", "Hello" * 5, 5, "length"),
        ("text", "abc" * 2, 6, "length"),
        ("exact", "Hello" * 5, 5, "stop"),
        ("uncounted", "w" * 128 * 5, 0, "length"),
    ],
)
def test_the_budget_holds_whatever_the_backend_sends(
    live: LiveServer, case: str, text: str, tokens: int, finish: str, stream: bool
) -> None:
    closed.clear()
    answer = _chat(live, case, stream=stream)
    if stream:
        got, entries = answer["text"], answer["entries"]
    else:
        message = answer["choices"][0]
        got, finish_got = message["message"]["content"], message["finish_reason"]
        entries = len(message["logprobs"]["content"]) if case == "one_chunk" else 0
        assert finish_got == finish
    assert got == text
    assert answer["usage"]["completion_tokens"] == tokens
    if stream:
        assert answer["finish"] == finish
    if case == "one_chunk":
        assert entries == 5  # the log probabilities of the ids kept, and no more
    assert closed == [case]  # the backend was closed once the budget ran out


def test_closing_the_wrapper_closes_a_backend_that_never_started() -> None:
    class Outputs:
        closed = False

        def __aiter__(self) -> Outputs:
            return self

        async def __anext__(self) -> BackendOutput:
            raise StopAsyncIteration

        async def aclose(self) -> None:
            self.closed = True

    outputs = Outputs()
    anyio.run(WithinBudget(outputs, 5).aclose)
    assert outputs.closed


def test_the_complete_response_writes_log_probabilities_in_the_references_notation() -> None:
    body = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Hi"}],
        "thinking": {"type": "disabled"},
        "logprobs": True,
    }
    p = dscodec.StreamProcessor(dscodec.convert("chat_completions", body), response_id="r", model="M")
    events = p.start(1) + p.push_tokens(HELLO * 2, [-5e-6, -1e13]) + p.finish("stop")
    content, response = complete_response("chat_completions", events)
    assert re.findall(r'"logprob":(-?[^,}\]]+)', content.decode()) == ["-0.000005", "-1e+13"]
    assert [e["logprob"] for e in response["choices"][0]["logprobs"]["content"]] == [-5e-6, -1e13]
