"""Anthropic Messages stream events (behavior.md#messages-events), the mid-stream error event (D1) and the accumulator (behavior.md#accumulation)."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

import dscodec
from dscodec.errors import ConversionError, DscodecError, ModelOutputError, StreamStateError
from dscodec.protocols._wire import Outcome, PromptUsage, WireEvent
from dscodec.protocols.anthropic_messages.accumulate import accumulate_events
from dscodec.protocols.anthropic_messages.outbound import MessagesEventWriter, stop_reason
from dscodec.stream.events import (
    ContentDelta,
    OutputEnd,
    ReasoningDelta,
    ReasoningEnd,
    StopSequence,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

WEATHER = {
    "name": "get_weather",
    "description": "Get the weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
BLOCK = (
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
)


def _request(*, thinking: bool, **body: Any) -> dscodec.ConversationRequest:
    base: dict[str, Any] = {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "thinking": {"type": "enabled", "budget_tokens": 128} if thinking else {"type": "disabled"},
    }
    base.update(body)
    return dscodec.convert("messages", base)


def _writer(*, thinking: bool) -> MessagesEventWriter:
    return MessagesEventWriter(_request(thinking=thinking), response_id="msg_1", model="M", created=0)


def _outcome(finish: Any = "stop", calls: int = 0, stop: str | None = None, tokens: int = 0) -> Outcome:
    return Outcome(finish, calls, stop, PromptUsage(20, 5), tokens, None)


def _short(events: list[WireEvent]) -> list[str]:
    """A compact spelling of events: ``start:0:text``, ``text:0:Hi``, ``stop:0``, ``ping`` …"""
    out = []
    for event in events:
        data = event.to_dict()
        kind = data["type"]
        if kind == "content_block_start":
            out.append(f"start:{data['index']}:{data['content_block']['type']}")
        elif kind == "content_block_delta":
            delta = data["delta"]
            value = next(v for k, v in delta.items() if k != "type")
            out.append(f"{delta['type'].removesuffix('_delta')}:{data['index']}:{value}")
        elif kind == "content_block_stop":
            out.append(f"stop:{data['index']}")
        else:
            out.append(kind)
    return out


# -- the writer --------------------------------------------------------------------------------------------------


def test_message_start_usage_and_no_block_without_thinking() -> None:
    writer = _writer(thinking=False)
    [start] = writer.open(PromptUsage(20, 5, "fp"))
    assert start.event == "message_start"
    assert start.to_dict() == {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "M",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 15,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 5,
                "output_tokens": 0,
                "service_tier": "standard",
            },
        },
    }


def test_cache_hits_above_the_prompt_floor_input_tokens_at_zero() -> None:
    writer = _writer(thinking=False)
    usage = writer.open(PromptUsage(3, 5))[0].to_dict()["message"]["usage"]
    assert (usage["input_tokens"], usage["cache_read_input_tokens"]) == (0, 5)
    final = writer.close(_outcome(tokens=2))[0].to_dict()["usage"]
    assert (final["input_tokens"], final["cache_read_input_tokens"], final["output_tokens"]) == (0, 5, 2)


def test_thinking_block_opens_at_once_and_closes_with_the_next_block() -> None:
    writer = _writer(thinking=True)
    assert _short(writer.open(PromptUsage())) == ["message_start", "start:0:thinking", "ping"]
    assert _short(writer.write([ReasoningDelta("Hmm"), ReasoningDelta(".")])) == [
        "thinking:0:Hmm",
        "thinking:0:.",
    ]
    # The reference stops the thinking block when the next block starts, not at </think> itself.
    assert writer.write([ReasoningEnd()]) == []
    assert _short(writer.write([ContentDelta("Hi")])) == [
        "signature:0:msg_1",
        "stop:0",
        "start:1:text",
        "text:1:Hi",
    ]
    assert _short(writer.close(_outcome())) == ["stop:1", "message_delta", "message_stop"]


def test_signature_can_be_replaced_and_is_sent_for_empty_reasoning() -> None:
    writer = _writer(thinking=True)
    writer.signature = "sig_x"
    events = (
        writer.open(PromptUsage()) + writer.write([ReasoningEnd(), OutputEnd(0)]) + writer.close(_outcome())
    )
    assert _short(events) == [
        "message_start",
        "start:0:thinking",
        "ping",
        "signature:0:sig_x",
        "stop:0",
        "message_delta",
        "message_stop",
    ]
    writer = _writer(thinking=True)
    writer.signature = None  # None also means the response id
    events = writer.open(PromptUsage()) + writer.close(_outcome())
    assert "signature:0:msg_1" in _short(events)


def test_processor_passes_the_signature() -> None:
    processor = dscodec.StreamProcessor(
        _request(thinking=True), response_id="msg_9", model="M", signature="s1"
    )
    events = processor.push_text("r</think>A", 3) + processor.finish("stop")
    assert "signature:0:s1" in _short(events)


def test_tool_use_blocks_one_ping_and_lazy_stops() -> None:
    writer = _writer(thinking=False)
    events = writer.open(PromptUsage()) + writer.write(
        [
            ContentDelta("Checking."),
            ToolCallStart(0, "call_a", "get_weather"),
            ToolCallDelta(0, ""),  # empty fragments are not sent
            ToolCallDelta(0, '{"city": '),
            ToolCallDelta(0, '"Paris"}'),
            ToolCallEnd(0, '{"city": "Paris"}'),
            ToolCallStart(1, "call_b", "search"),
            ToolCallEnd(1, "{}"),
            OutputEnd(2),
        ]
    )
    assert _short(events) == [
        "message_start",
        "start:0:text",
        "ping",
        "text:0:Checking.",
        "stop:0",
        "start:1:tool_use",
        'input_json:1:{"city": ',
        'input_json:1:"Paris"}',
        "stop:1",
        "start:2:tool_use",
    ]
    assert events[5].to_dict()["content_block"] == {
        "type": "tool_use",
        "id": "call_a",
        "name": "get_weather",
        "input": {},
    }
    closing = writer.close(_outcome("stop", calls=2, tokens=9))
    assert _short(closing) == ["stop:2", "message_delta", "message_stop"]
    assert closing[1].to_dict()["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert closing[1].to_dict()["usage"]["output_tokens"] == 9


def test_first_block_a_tool_call_gets_the_ping() -> None:
    writer = _writer(thinking=False)
    events = writer.open(PromptUsage()) + writer.write([ToolCallStart(0, "call_a", "f")])
    assert _short(events) == ["message_start", "start:0:tool_use", "ping"]


def test_empty_stream_has_no_block_and_no_ping() -> None:
    writer = _writer(thinking=False)
    events = writer.open(PromptUsage()) + writer.write([OutputEnd(0)]) + writer.close(_outcome(None))
    assert _short(events) == ["message_start", "message_delta", "message_stop"]
    assert events[1].to_dict()["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}


def test_stop_sequence_at_content_start_opens_no_block() -> None:
    processor = dscodec.StreamProcessor(
        _request(thinking=False, stop_sequences=["END"]), response_id="m", model="M"
    )
    events = processor.push_text("ENDabc", 2)
    assert _short(events) == ["message_start", "message_delta", "message_stop"]
    assert events[1].to_dict()["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": "END"}
    assert processor.finished and processor.finish("stop") == []


def test_stop_sequence_event_is_left_to_close() -> None:
    writer = _writer(thinking=False)
    writer.open(PromptUsage())
    events = writer.write([ContentDelta("a"), StopSequence("END"), OutputEnd(0, "END")])
    assert _short(events) == ["start:0:text", "ping", "text:0:a"]


@pytest.mark.parametrize(
    ("finish", "calls", "stop", "expected"),
    [
        ("stop", 0, None, "end_turn"),
        ("stop", 2, None, "tool_use"),
        (
            None,
            1,
            None,
            "end_turn",
        ),  # no finish chunk: a normal end even after calls (behavior.md#stream-lifecycle)
        ("length", 1, None, "max_tokens"),
        ("content_filter", 0, None, "refusal"),
        (None, 0, "END", "stop_sequence"),
    ],
)
def test_stop_reason_table(finish: Any, calls: int, stop: str | None, expected: str) -> None:
    assert stop_reason(_outcome(finish, calls, stop)) == expected
    writer = _writer(thinking=False)
    writer.open(PromptUsage())
    delta = writer.close(_outcome(finish, calls, stop))[0].to_dict()["delta"]
    assert delta == {"stop_reason": expected, "stop_sequence": stop}


def test_reasoning_without_thinking_mode_still_gets_a_block() -> None:
    # Parsing options are freely constructible; a reasoning stage with a nothink conversation stays well formed.
    writer = _writer(thinking=False)
    events = writer.open(PromptUsage()) + writer.write(
        [ReasoningDelta("r"), ReasoningEnd(), ContentDelta("a")]
    )
    assert _short(events) == [
        "message_start",
        "start:0:thinking",
        "ping",
        "thinking:0:r",
        "signature:0:msg_1",
        "stop:0",
        "start:1:text",
        "text:1:a",
    ]


def test_sse_frames_are_named_by_type_and_there_is_no_done_frame() -> None:
    processor = dscodec.StreamProcessor(_request(thinking=True), response_id="msg_1", model="M")
    events = processor.push_text("r</think>Hi", 3) + processor.finish("stop")
    assert processor.sse_done == ""
    for event in events:
        name = event.to_dict()["type"]
        assert event.event == name
        assert event.sse() == f"event: {name}\ndata: {event.to_json()}\n\n"
    assert events[2].sse() == 'event: ping\ndata: {"type":"ping"}\n\n'


def test_spec_example_event_for_event() -> None:
    """The behavior.md#writers Messages transcript: ready(20, 5), ``Think.`` (2 tokens), the answer and a call (6), Stop."""
    request = _request(thinking=True, tools=[WEATHER])
    processor = dscodec.StreamProcessor(
        request,
        response_id="msg_1",
        model="DeepSeek-V4-Pro",
        tool_call_id_factory=lambda i: f"call_{i:02d}_x",
    )
    events = processor.start(20, 5) + processor.push_text("Think.", 2)
    events += processor.push_text("</think>Checking.\n\n" + BLOCK, 6) + processor.finish("stop")
    usage = '"usage":{"input_tokens":15,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":%d,"service_tier":"standard"}'
    expected = [
        '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"DeepSeek-V4-Pro","content":[],"stop_reason":null,"stop_sequence":null,%s}}'
        % (usage % 0),
        '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}',
        '{"type":"ping"}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Think."}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"msg_1"}}',
        '{"type":"content_block_stop","index":0}',
        '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
        '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Checking."}}',
        '{"type":"content_block_stop","index":1}',
        '{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"call_00_x","name":"get_weather","input":{}}}',
        '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{"}}',
        '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\\"city\\""}}',
        '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":": "}}',
        '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\\""}}',
        '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"Paris"}}',
        '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\\""}}',
        '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"}"}}',
        '{"type":"content_block_stop","index":2}',
        '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},%s}' % (usage % 8),
        '{"type":"message_stop"}',
    ]
    assert [e.to_json() for e in events] == expected


# -- errors (D1) -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "error_type"),
    [
        (ConversionError("bad"), "invalid_request_error"),
        (StreamStateError("out of order"), "api_error"),
        (ModelOutputError("broken output"), "api_error"),
        (DscodecError("internal"), "api_error"),
    ],
)
def test_mid_stream_error_is_anthropics_error_event(error: DscodecError, error_type: str) -> None:
    processor = dscodec.StreamProcessor(_request(thinking=False), response_id="m", model="M")
    events = processor.push_text("Hello", 1) + processor.fail(error)
    last = events[-1]
    assert last.event == "error"
    assert last.to_dict() == {"type": "error", "error": {"type": error_type, "message": error.message}}
    parsed = anthropic.types.ErrorResponse.model_validate(last.to_dict(), strict=True)
    assert parsed.error.type == error_type
    assert processor.fail(error) == []
    with pytest.raises(dscodec.StreamStateError):
        processor.push_text("more")


def test_error_before_anything_was_pushed_starts_the_message_first() -> None:
    processor = dscodec.StreamProcessor(_request(thinking=True), response_id="m", model="M")
    events = processor.fail("connection reset")
    assert _short(events) == ["message_start", "start:0:thinking", "ping", "error"]
    body = events[-1].to_dict()
    assert body["error"]["type"] == "api_error" and "connection reset" in body["error"]["message"]


def test_error_bound_to_another_protocol_keeps_anthropics_envelope() -> None:
    error = ConversionError("nope").with_protocol("chat_completions")
    writer = _writer(thinking=False)
    [event] = writer.error(error)
    assert event.to_dict() == {"type": "error", "error": {"type": "invalid_request_error", "message": "nope"}}


# -- accumulate --------------------------------------------------------------------------------------------------


def _sse_dicts(events: list[WireEvent]) -> list[dict[str, Any]]:
    """Parse the SSE text a client would receive back into event dicts (a wire transcript)."""
    text = "".join(e.sse() for e in events)
    out = []
    for frame in text.split("\n\n"):
        if not frame:
            continue
        name, data = frame.split("\n")
        assert name.startswith("event: ") and data.startswith("data: ")
        out.append(json.loads(data.removeprefix("data: ")))
    return out


def test_accumulate_a_wire_transcript() -> None:
    request = _request(thinking=True, tools=[WEATHER])
    processor = dscodec.StreamProcessor(request, response_id="msg_1", model="M", signature="sig")
    events = processor.start(20, 5) + processor.push_text("Think.</think>Checking.\n\n" + BLOCK, 8)
    events += processor.finish("stop")
    message = accumulate_events(_sse_dicts(events))
    call_id = message["content"][2]["id"]
    assert message == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "M",
        "content": [
            {"type": "thinking", "thinking": "Think.", "signature": "sig"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": call_id, "name": "get_weather", "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 15,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 5,
            "output_tokens": 8,
            "service_tier": "standard",
        },
    }
    assert dscodec.accumulate("messages", events) == message
    anthropic.types.Message.model_validate(message, strict=True)


def _tool_stream(*fragments: str) -> list[dict[str, Any]]:
    start: dict[str, Any] = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "M",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 0},
    }
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "c", "name": "f", "input": {}},
        },
    ]
    for fragment in fragments:
        events.append(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            }
        )
    return events


@pytest.mark.parametrize(
    ("fragments", "expected"),
    [
        (('{"a": ', "[1, 2]}"), {"a": [1, 2]}),
        (("",), {}),
        (('{"a": "v',), {}),  # the output ended inside the call: partial JSON
        (('{"days": }',), {}),  # invalid JSON (the reference's D8 output)
        (('{"a": NaN}',), {}),  # not RFC 8259
        (("[1, 2]",), {}),  # valid JSON, but input must be an object
        (('{"n": 12345678901234567890, "x": -0}',), {"n": 12345678901234567890, "x": -0.0}),
    ],
)
def test_tool_input_is_the_parsed_object_or_empty(
    fragments: tuple[str, ...], expected: dict[str, Any]
) -> None:
    message = accumulate_events(_tool_stream(*fragments) + [{"type": "content_block_stop", "index": 0}])
    assert message["content"][0]["input"] == expected


def test_accumulate_merges_delta_usage_and_tolerates_gaps() -> None:
    events = _tool_stream('{"a": 1}') + [
        {"type": "ping"},
        # a delta for a block that never started is ignored
        {"type": "content_block_delta", "index": 7, "delta": {"type": "text_delta", "text": "lost"}},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
            "usage": {"output_tokens": 4, "input_tokens": None},  # null fields do not overwrite
        },
        {"type": "message_stop"},
    ]
    message = accumulate_events(events)  # no content_block_stop: the call is still parsed
    assert message["content"] == [{"type": "tool_use", "id": "c", "name": "f", "input": {"a": 1}}]
    assert message["stop_reason"] == "max_tokens"
    assert message["usage"] == {"input_tokens": 1, "output_tokens": 4}
    assert list(message)[:5] == ["id", "type", "role", "model", "content"]


def test_accumulate_nothing_gives_an_empty_message() -> None:
    message = accumulate_events([], response_id="msg_0", model="M")
    assert message == {
        "id": "msg_0",
        "type": "message",
        "role": "assistant",
        "model": "M",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 0,
            "service_tier": "standard",
        },
        "content": [],
    }


def test_accumulate_an_error_stream_gives_the_error_body() -> None:
    processor = dscodec.StreamProcessor(_request(thinking=False), response_id="m", model="M")
    events = processor.push_text("Hello", 1) + processor.fail(ModelOutputError("backend died"))
    body = dscodec.accumulate("messages", _sse_dicts(events))
    assert body == {"type": "error", "error": {"type": "api_error", "message": "backend died"}}
