"""Chat Completions chunks written as JSON text on the per-token path (log probabilities included) are the same
bytes as the chunk objects serialised (behavior.md#chat-chunks)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dscodec
from dscodec.protocols._wire import Outcome, PromptUsage, dumps_json, logprob_dict
from dscodec.protocols.openai_chat.outbound import ChatChunkWriter, finish_reason, usage_dict
from dscodec.stream.events import (
    ContentDelta,
    ReasoningDelta,
    TokenLogprob,
    ToolCallDelta,
    ToolCallStart,
    TopLogprob,
)

# Text as the machine gives it: any character but a lone surrogate (those become U+FFFD before any event).
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)


def _writer(*, include_usage: bool, thinking: bool) -> ChatChunkWriter:
    body: dict[str, Any] = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": True,
        "thinking": {"type": "enabled" if thinking else "disabled"},
    }
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    request = dscodec.convert("chat_completions", body)
    return ChatChunkWriter(request, response_id='chat"cmpl\u2028-1', model="M\x01é", created=7)


def _expected(delta: dict[str, Any], *, include_usage: bool, logprobs: Any = None) -> str:
    chunk: dict[str, Any] = {
        "id": 'chat"cmpl\u2028-1',
        "object": "chat.completion.chunk",
        "created": 7,
        "model": "M\x01é",
        "system_fingerprint": "fp\n",
        "choices": [{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": None}],
    }
    if include_usage:
        chunk["usage"] = None
    return dumps_json(chunk)  # orjson's, log probabilities in the reference's notation


@pytest.mark.parametrize("include_usage", [True, False])
@pytest.mark.parametrize("thinking", [True, False])
@given(name=_TEXT, call_id=_TEXT, index=st.integers(0, 300), piece=_TEXT.filter(bool))
def test_per_token_chunks_are_the_chunk_objects_serialised(
    include_usage: bool, thinking: bool, name: str, call_id: str, index: int, piece: str
) -> None:
    writer = _writer(include_usage=include_usage, thinking=thinking)
    writer.open(PromptUsage(3, 0, "fp\n"))
    start, argument, content, reasoning = writer.write(
        [
            ToolCallStart(index, call_id, name),
            ToolCallDelta(index, piece),
            ContentDelta(piece, ()),
            ReasoningDelta(piece, ()),
        ]
    )
    call = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    assert start.to_json() == _expected({"tool_calls": [call]}, include_usage=include_usage)
    assert argument.to_json() == _expected(
        {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, include_usage=include_usage
    )
    other = {"reasoning_content": None} if thinking else {}
    assert content.to_json() == _expected({"content": piece, **other}, include_usage=include_usage)
    assert reasoning.to_json() == _expected(
        {"content": None, "reasoning_content": piece}, include_usage=include_usage
    )


_LOGPROB = st.floats(allow_nan=False, allow_infinity=False) | st.just(-9999.0) | st.just(-0.0)
_BYTES = st.lists(st.integers(0, 255), max_size=4).map(tuple)
_ENTRIES = st.lists(
    st.builds(
        TokenLogprob,
        _TEXT,
        _LOGPROB,
        _BYTES,
        st.lists(st.builds(TopLogprob, _TEXT, _LOGPROB, _BYTES), max_size=3).map(tuple),
    ),
    min_size=1,
    max_size=3,
).map(tuple)


@pytest.mark.parametrize("include_usage", [True, False])
@pytest.mark.parametrize("thinking", [True, False])
@given(piece=_TEXT, entries=_ENTRIES)
def test_chunks_with_log_probabilities_are_the_chunk_objects_serialised(
    include_usage: bool, thinking: bool, piece: str, entries: tuple[TokenLogprob, ...]
) -> None:
    writer = _writer(include_usage=include_usage, thinking=thinking)
    writer.open(PromptUsage(3, 0, "fp\n"))
    content, reasoning = writer.write([ContentDelta(piece, entries), ReasoningDelta(piece, entries)])
    listed = [logprob_dict(e) for e in entries]
    other = {"reasoning_content": None} if thinking else {}
    assert content.to_json() == _expected(
        {"content": piece, **other}, include_usage=include_usage, logprobs={"content": listed}
    )
    assert reasoning.to_json() == _expected(
        {"content": None, "reasoning_content": piece},
        include_usage=include_usage,
        logprobs={"reasoning_content": listed},
    )


@pytest.mark.parametrize("include_usage", [True, False])
@pytest.mark.parametrize("thinking", [True, False])
@given(
    prompt=st.integers(0, 2**63 - 1),
    cached=st.integers(0, 2**63 - 1),
    completion=st.integers(0, 2**63 - 1),
    reasoning=st.none() | st.integers(0, 2**63 - 1),
    finish=st.sampled_from([None, "stop", "length", "content_filter"]),
    tool_calls=st.integers(0, 3),
    stop=st.none() | _TEXT,
)
def test_first_and_last_chunks_are_the_chunk_objects_serialised(
    include_usage: bool,
    thinking: bool,
    prompt: int,
    cached: int,
    completion: int,
    reasoning: int | None,
    finish: Any,
    tool_calls: int,
    stop: str | None,
) -> None:
    # open() and close() write their chunks as JSON text too: the same bytes as the objects usage_dict and
    # finish_reason describe, serialised.
    writer = _writer(include_usage=include_usage, thinking=thinking)
    usage = PromptUsage(prompt, cached, "fp\n")
    [first] = writer.open(usage)
    role: dict[str, Any] = (
        {"role": "assistant", "content": None, "reasoning_content": ""}
        if thinking
        else {"role": "assistant", "content": ""}
    )
    assert first.to_json() == _expected(role, include_usage=include_usage)
    outcome = Outcome(finish, tool_calls, stop, usage, completion, reasoning)
    [last] = writer.close(outcome)
    chunk = orjson.loads(
        _expected(
            {"content": "", "reasoning_content": None} if thinking else {"content": ""}, include_usage=False
        )
    )
    chunk["choices"][0]["finish_reason"] = finish_reason(outcome)
    chunk["usage"] = usage_dict(outcome, with_reasoning=thinking)
    assert last.to_json() == dumps_json(chunk)
    assert last.to_dict() == chunk
