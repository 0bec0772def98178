"""Every stream writer's per-token entry points write what its general ``write`` writes.

The processor hands plain text and string-argument pieces straight to a writer's ``text`` and ``argument`` and
to the lanes it makes (``reasoning_lane``, ``content_lane``, ``argument_lane``), which write each event as JSON
text around the escaped piece. For any sequence of events, in any order (an item or block of another kind open,
a lane made before its item opened, a custom tool's input, after the end), those entry points must give the
events ``write`` gives for the same events on a twin writer: the same SSE event names and the same JSON text
byte for byte, and the twins must end the same way. Since ``write`` writes its deltas the same way, every event
is also checked against the protocol's shape: its JSON text is what ``orjson`` writes for its object, and a
delta's keys come in the order of behavior.md#responses-events and behavior.md#messages-events.

Example counts come from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dscodec
from dscodec.protocols._registry import spec
from dscodec.protocols._wire import EventWriter, Outcome, PromptUsage, WireEvent
from dscodec.stream._markers import escape_json_string
from dscodec.stream.events import (
    ContentDelta,
    Event,
    ReasoningDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

_TOOLS = [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]
_BODIES: dict[str, dict[str, Any]] = {
    "chat_completions": {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "q"}],
        "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
    },
    # The custom tool's calls stream their input through its patch reader, not as argument text.
    "responses": {
        "model": "DeepSeek-V4-Pro",
        "input": "q",
        "tools": [*_TOOLS, {"type": "custom", "name": "apply_patch"}],
    },
    "messages": {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 100,
        "thinking": {"type": "enabled", "budget_tokens": 50},
        "messages": [{"role": "user", "content": "q"}],
        "tools": [{"name": "lookup", "input_schema": {"type": "object"}}],
    },
}

#: Any text a writer is given: the processor never hands over lone surrogates (it replaces them first).
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8) | st.sampled_from(
    ['"', "\\", "\n\t\x00\x1f\x7f", "\u2028", "é中😀", "a/b", "</x>"]
)
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["reasoning", "content", "argument"]), _TEXT, st.integers(0, 2)),
        st.tuples(st.just("start"), st.sampled_from(["lookup", "apply_patch", 'na"me']), st.just(0)),
        st.tuples(st.just("end"), st.just(""), st.just(0)),
    ),
    max_size=24,
)


def _writer(protocol: str) -> EventWriter:
    request = dscodec.convert(protocol, _BODIES[protocol])  # type: ignore[arg-type]
    writer = spec(protocol).writer()(request, response_id="r1", model="M", created=1)
    if hasattr(writer, "clock"):
        writer.clock = lambda: 2  # Responses completed_at
    return writer


#: The keys of each delta event, in order (the Chat chunk's ``usage`` is there when the request asks for it).
_KEYS = {
    "chat.completion.chunk": ["id", "object", "created", "model", "system_fingerprint", "choices", "usage"],
    "response.output_text.delta": [
        "type",
        "content_index",
        "delta",
        "item_id",
        "logprobs",
        "output_index",
        "sequence_number",
    ],
    "response.reasoning_text.delta": [
        "type",
        "content_index",
        "delta",
        "item_id",
        "output_index",
        "sequence_number",
    ],
    "response.function_call_arguments.delta": ["type", "delta", "item_id", "output_index", "sequence_number"],
    "content_block_delta": ["type", "index", "delta"],
}
_MESSAGES_DELTA_FIELDS = {
    "thinking_delta": "thinking",
    "text_delta": "text",
    "input_json_delta": "partial_json",
    "signature_delta": "signature",
}


def _wire(events: list[WireEvent]) -> list[tuple[str | None, str]]:
    """The events' SSE names and JSON texts, each checked against its protocol's shape."""
    for event in events:
        data = event.to_dict()
        assert event.to_json() == orjson.dumps(data).decode()
        kind = data.get("object", data.get("type"))
        if kind in _KEYS:
            assert list(data) == _KEYS[kind][: len(data)], data
            if kind == "chat.completion.chunk":
                assert list(data["choices"][0]) == ["index", "delta", "logprobs", "finish_reason"]
        if kind == "content_block_delta":
            delta = data["delta"]
            assert list(delta) == ["type", _MESSAGES_DELTA_FIELDS[delta["type"]]], delta
    return [(event.event, event.to_json()) for event in events]


@pytest.mark.parametrize("protocol", sorted(_BODIES))
@given(steps=_STEPS, early_lanes=st.booleans())
def test_per_token_entry_points_write_what_write_writes(
    protocol: str, steps: list[tuple[str, str, int]], early_lanes: bool
) -> None:
    """``text``, ``argument`` and the lanes (made before any item opened, or on first use and kept, as the
    processor keeps them) give the JSON text and event names of ``write`` for every step."""
    general, fast = _writer(protocol), _writer(protocol)
    usage = PromptUsage(3)
    assert _wire(general.open(usage)) == _wire(fast.open(usage))
    kept: list[str] = []
    lanes: dict[Any, Callable[[str, str], list[WireEvent]]] = {}
    if early_lanes:
        lanes["reasoning"] = fast.reasoning_lane(kept.append)
        lanes["content"] = fast.content_lane()
    calls = 0
    for kind, text, way in steps:
        index = max(calls - 1, 0)
        event: Event
        if kind == "reasoning":
            event = ReasoningDelta(text)
        elif kind == "content":
            event = ContentDelta(text)
        elif kind == "argument":
            raw = text if escape_json_string(text) is text else None
            event = ToolCallDelta(index, escape_json_string(text) if raw is None else text, raw, "p")
        elif kind == "start":
            event = ToolCallStart(calls, f"call_{calls:02d}_x", text)
            calls += 1
        else:
            event = ToolCallEnd(index, "{}", complete=True)
        expected = _wire(general.write([event]))
        if kind in ("start", "end") or way == 0:
            got = fast.write([event])
        elif isinstance(event, (ReasoningDelta, ContentDelta)) and way == 1:
            got = fast.text(kind == "reasoning", text)
        elif isinstance(event, (ReasoningDelta, ContentDelta)):
            if kind not in lanes:
                lanes[kind] = fast.reasoning_lane(kept.append) if kind == "reasoning" else fast.content_lane()
            got = lanes[kind](text, text)
        elif isinstance(event, ToolCallDelta) and way == 1:
            got = fast.argument(event.index, event.arguments, event.raw, event.parameter)
        else:
            assert isinstance(event, ToolCallDelta)
            lane = lanes.get((event.index, "p"))
            if lane is None:
                lane = lanes[(event.index, "p")] = fast.argument_lane(event.index, "p")
            got = lane(event.arguments, event.raw if event.raw is not None else text)
        assert _wire(got) == expected, (kind, way, text)
    outcome = Outcome("stop", calls, None, usage, completion_tokens=10, reasoning_tokens=2)
    assert _wire(fast.close(outcome)) == _wire(general.close(outcome))
    assert all(piece for piece in kept)  # the reasoning lane handed on what it was given


@pytest.mark.parametrize("protocol", sorted(_BODIES))
def test_entry_points_after_the_end_write_nothing_more_than_write(protocol: str) -> None:
    """After ``close`` the entry points answer as ``write`` does (Responses: nothing)."""
    general, fast = _writer(protocol), _writer(protocol)
    for writer in (general, fast):
        writer.open(PromptUsage(1))
        writer.write([ContentDelta("a"), ToolCallStart(0, "call_00_x", "lookup")])
    lane = fast.content_lane()
    argument_lane = fast.argument_lane(0, "p")
    outcome = Outcome("stop", 1, None, PromptUsage(1), completion_tokens=2, reasoning_tokens=None)
    general.close(outcome)
    fast.close(outcome)
    assert _wire(fast.text(False, "b")) == _wire(general.write([ContentDelta("b")]))
    assert _wire(lane("c", "c")) == _wire(general.write([ContentDelta("c")]))
    assert _wire(argument_lane("1", "1")) == _wire(general.write([ToolCallDelta(0, "1", "1", "p")]))
    assert _wire(fast.argument(0, "2", "2", "p")) == _wire(general.write([ToolCallDelta(0, "2", "2", "p")]))
