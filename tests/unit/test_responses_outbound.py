"""Unit tests of the Responses stream writer and accumulator (``dscodec.protocols.openai_responses``, behavior.md#responses-events,
behavior.md#accumulation; deviations D3, D5, D6).

The writer is driven with machine events directly (its rules, independent of the output machine) and through
:class:`dscodec.StreamProcessor` (the wiring). Every stream written here is also checked against the openai SDK:
strict validation of each event and a run through the SDK's own stream state machine.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import pytest
from openai._types import omit
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.responses import Response, ResponseStreamEvent

import dscodec
from dscodec.conversation import Conversation, ConversationRequest
from dscodec.errors import ConversionError, ModelOutputError
from dscodec.protocols._wire import Outcome, PromptUsage, WireEvent
from dscodec.protocols.openai_responses import echo_storage
from dscodec.protocols.openai_responses.accumulate import accumulate_events
from dscodec.protocols.openai_responses.outbound import ResponsesEventWriter
from dscodec.stream.events import (
    ContentDelta,
    Event,
    ReasoningDelta,
    ReasoningEnd,
    TokenLogprob,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    TopLogprob,
)
from tests.support.streams import EventTypes

STREAM_EVENT = EventTypes(ResponseStreamEvent)
V4 = "DeepSeek-V4-Pro"
D = "｜DSML｜"
WEATHER = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}
APPLY_PATCH = {"type": "custom", "name": "apply_patch", "description": "Edit files"}


def request(**fields: Any) -> ConversationRequest:
    body: dict[str, Any] = {"model": V4, "input": "Hi", "reasoning": {"effort": "none"}}
    body.update(fields)
    return dscodec.convert("responses", body)


def writer(req: ConversationRequest | None = None, *, created: int = 100) -> ResponsesEventWriter:
    w = ResponsesEventWriter(req or request(), response_id="R", model="M", created=created)
    w.clock = lambda: 200.0
    return w


def outcome(
    finish: Any = "stop", *, calls: int = 0, reasoning: int | None = None, stop: str | None = None
) -> Outcome:
    return Outcome(
        finish=finish,
        tool_calls=calls,
        stop_sequence=stop,
        prompt=PromptUsage(20, 5),
        completion_tokens=7,
        reasoning_tokens=reasoning,
    )


def run(
    events: Sequence[Event], *, finish: Any = "stop", req: ConversationRequest | None = None
) -> list[dict[str, Any]]:
    """A whole stream: open, one write per machine event, close; checked against the SDK; as dicts."""
    w = writer(req)
    wire = w.open(PromptUsage(20, 5))
    for event in events:
        wire += w.write([event])
    wire += w.close(outcome(finish))
    return sdk_checked(wire)


def sdk_checked(wire: list[WireEvent]) -> list[dict[str, Any]]:
    """Validate strictly, feed the SDK's stream state machine, and return the events as dicts."""
    state = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in wire:
        assert event.event == event.to_dict()["type"]
        assert event.sse() == f"event: {event.event}\ndata: {event.to_json()}\n\n"
        state.handle_event(STREAM_EVENT.validate(event.to_dict()))
    dicts = [e.to_dict() for e in wire]
    assert [d["sequence_number"] for d in dicts] == list(range(len(dicts)))
    return dicts


def dicts_of(wire: list[WireEvent]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in wire]


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"].removeprefix("response.") for e in events]


def final(events: list[dict[str, Any]]) -> dict[str, Any]:
    return events[-1]["response"]  # type: ignore[no-any-return]


def call_block(*invokes: str) -> str:
    return f"<{D}tool_calls>\n" + "".join(invokes) + f"</{D}tool_calls>"


def invoke(name: str, *params: tuple[str, str, str]) -> str:
    body = "".join(f'<{D}parameter name="{k}" string="{s}">{v}</{D}parameter>\n' for k, s, v in params)
    return f'<{D}invoke name="{name}">\n{body}</{D}invoke>\n'


def stream(req: ConversationRequest, *chunks: str, finish: Any = "stop") -> list[dict[str, Any]]:
    p = dscodec.StreamProcessor(req, response_id="R", model=V4, created=0)
    wire = p.start(20, 5)
    for chunk in chunks:
        wire += p.push_text(chunk, 1)
    wire += p.finish(finish)
    return sdk_checked(wire)


# -- lifecycle and items ------------------------------------------------------------------------------------


def test_start_events_carry_the_in_progress_response() -> None:
    events = sdk_checked(writer().open(PromptUsage(20, 5)))
    assert types(events) == ["created", "in_progress"]
    for event in events:
        response = event["response"]
        assert (response["id"], response["model"], response["created_at"]) == ("R", "M", 100)
        assert (response["status"], response["output"], response["usage"], response["completed_at"]) == (
            "in_progress",
            [],
            None,
            None,
        )
    assert events[0]["response"] is not events[1]["response"]


def test_response_object_has_every_key_in_order() -> None:
    keys = list(final(run([ContentDelta("a")])))
    assert keys == [
        "id", "object", "created_at", "status", "background", "completed_at", "content_filters", "error",
        "frequency_penalty", "incomplete_details", "instructions", "max_output_tokens", "max_tool_calls", "model",
        "moderation", "output", "parallel_tool_calls", "presence_penalty", "previous_response_id",
        "prompt_cache_key", "prompt_cache_retention", "reasoning", "safety_identifier", "service_tier", "store",
        "temperature", "text", "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "usage", "user",
        "metadata",
    ]  # fmt: skip


def test_reasoning_then_message_items() -> None:
    events = run([ReasoningDelta("Think"), ReasoningDelta("ing."), ReasoningEnd(), ContentDelta("Hi")])
    assert types(events) == [
        "created", "in_progress",
        "output_item.added", "content_part.added", "reasoning_text.delta", "reasoning_text.delta",
        "reasoning_text.done", "content_part.done", "output_item.done",
        "output_item.added", "content_part.added", "output_text.delta",
        "output_text.done", "content_part.done", "output_item.done",
        "completed",
    ]  # fmt: skip
    added = events[2]["item"]
    assert added == {
        "type": "reasoning",
        "id": "rs_R_0",
        "status": "in_progress",
        "content": [],
        "summary": [],
        "encrypted_content": "R-0",
    }
    assert events[6] == {
        "type": "response.reasoning_text.done",
        "content_index": 0,
        "item_id": "rs_R_0",
        "output_index": 0,
        "sequence_number": 6,
        "text": "Thinking.",
    }
    assert "logprobs" not in events[4]
    assert events[9]["item"]["id"] == "msg_R_1" and events[9]["output_index"] == 1
    output = final(events)["output"]
    assert [(i["type"], i["id"], i["status"]) for i in output] == [
        ("reasoning", "rs_R_0", "completed"),
        ("message", "msg_R_1", "completed"),
    ]
    assert output[0]["content"] == [{"type": "reasoning_text", "text": "Thinking."}]
    assert output[1]["content"] == [{"type": "output_text", "annotations": [], "logprobs": [], "text": "Hi"}]


def test_items_are_closed_lazily_like_the_reference() -> None:
    # ReasoningEnd writes nothing: the reasoning item is done when the next item opens (or the response ends).
    w = writer()
    w.open(PromptUsage())
    assert types(dicts_of(w.write([ReasoningDelta("r")]))) == [
        "output_item.added",
        "content_part.added",
        "reasoning_text.delta",
    ]
    assert w.write([ReasoningEnd()]) == []
    assert types(dicts_of(w.write([ContentDelta("a")])))[:3] == [
        "reasoning_text.done",
        "content_part.done",
        "output_item.done",
    ]


def test_empty_output_has_no_items() -> None:
    events = run([])
    assert types(events) == ["created", "in_progress", "completed"]
    assert final(events)["output"] == []


def test_usage_d3_d5() -> None:
    w = writer()
    w.open(PromptUsage())
    usage = w.close(outcome(reasoning=None))[-1].to_dict()["response"]["usage"]
    assert usage == {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 5, "cache_write_tokens": 0},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 27,
    }
    w = writer()
    w.open(PromptUsage())
    assert w.close(outcome(reasoning=3))[-1].to_dict()["response"]["usage"]["output_tokens_details"] == {
        "reasoning_tokens": 3
    }


@pytest.mark.parametrize(
    ("finish", "status", "details"),
    [
        ("stop", "completed", None),
        (None, "completed", None),
        ("length", "incomplete", {"reason": "max_output_tokens"}),
        ("content_filter", "incomplete", {"reason": "content_filter"}),
    ],
)
def test_finish_mapping_and_open_item_status(finish: Any, status: str, details: Any) -> None:
    events = run([ReasoningDelta("r"), ContentDelta("a")], finish=finish)
    assert events[-1]["type"] == f"response.{status}"
    response = final(events)
    assert (response["status"], response["incomplete_details"]) == (status, details)
    assert response["completed_at"] == 200
    # Only the item still open at the end takes the response's status; the reasoning was done before.
    item_status = "completed" if status == "completed" else "incomplete"
    assert [i["status"] for i in response["output"]] == ["completed", item_status]
    dones = [e["item"]["status"] for e in events if e["type"] == "response.output_item.done"]
    assert dones == ["completed", item_status]


def test_stop_sequence_completes() -> None:
    w = writer()
    w.open(PromptUsage())
    w.write([ContentDelta("a")])
    assert w.close(outcome("length", stop="END"))[-1].to_dict()["response"]["status"] == "completed"


def test_completed_at_never_precedes_created_at() -> None:
    w = writer(created=500)
    w.open(PromptUsage())
    assert w.close(outcome())[-1].to_dict()["response"]["completed_at"] == 500


# -- D6 --------------------------------------------------------------------------------------------------------


def test_d6_message_phase_never_changes_when_a_call_follows() -> None:
    req = request(tools=[WEATHER])
    events = stream(req, "Checking.\n\n" + call_block(invoke("get_weather", ("city", "true", "Paris"))))
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert added[0]["phase"] == done[0]["phase"] == "final_answer"
    assert final(events)["output"][0]["phase"] == "final_answer"
    assert [i["type"] for i in final(events)["output"]] == ["message", "function_call"]


# -- tool calls ------------------------------------------------------------------------------------------------


def test_function_call_events() -> None:
    events = run(
        [
            ToolCallStart(0, "call_0", "get_weather"),
            ToolCallDelta(0, "{"),
            ToolCallDelta(0, '"city"'),
            ToolCallDelta(0, ": "),
            ToolCallDelta(0, '"Paris"'),
            ToolCallDelta(0, "}"),
            ToolCallEnd(0, '{"city": "Paris"}'),
        ]
    )
    assert events[2]["item"] == {
        "type": "function_call",
        "id": "fc_R_0",
        "status": "in_progress",
        "call_id": "call_0",
        "name": "get_weather",
        "arguments": "",
    }
    deltas = [e for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert "".join(e["delta"] for e in deltas) == '{"city": "Paris"}'
    assert list(deltas[0]) == ["type", "delta", "item_id", "output_index", "sequence_number"]
    done = next(e for e in events if e["type"] == "response.function_call_arguments.done")
    assert done["arguments"] == '{"city": "Paris"}'
    assert final(events)["output"][0]["arguments"] == '{"city": "Paris"}'


def test_namespaced_tool_names_are_split() -> None:
    req = request(
        tools=[
            WEATHER,
            {
                "type": "namespace",
                "name": "gh",
                "description": "GitHub",
                "tools": [dict(WEATHER, name="issue")],
            },
        ]
    )
    assert req.wire.namespace_tool_map == {"gh__issue": ("gh", "issue")}
    events = run(
        [ToolCallStart(0, "c0", "gh__issue"), ToolCallEnd(0, "{}"), ToolCallStart(1, "c1", "gh__nope")],
        req=req,
    )
    first, second = (e["item"] for e in events if e["type"] == "response.output_item.added")
    assert (first["name"], first["namespace"]) == ("issue", "gh")
    assert list(first) == ["type", "id", "status", "call_id", "name", "namespace", "arguments"]
    assert second["name"] == "gh__nope" and "namespace" not in second
    assert final(events)["output"][0]["namespace"] == "gh"


def patch_input(events: list[dict[str, Any]]) -> tuple[str, str]:
    """(Σ input deltas, the done input) of the first custom call; both must agree."""
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.custom_tool_call_input.delta")
    done = next(e for e in events if e["type"] == "response.custom_tool_call_input.done")["input"]
    return deltas, done


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ([("input", "true", 'a "q" \\ b\n\tc é😀')], 'a "q" \\ b\n\tc é😀'),
        ([("input", "true", "")], ""),
        ([("input", "false", '"PATCH\\u00e9\\ud83d\\ude00"')], "PATCH\u00e9😀"),  # a JSON string value
        ([("input", "true", "A"), ("x", "false", "1")], "A"),  # the first parameter counts
        ([("input", "true", "A"), ("input", "true", "B")], "A"),
        ([("x", "true", "A"), ("input", "true", "B")], '{"x": "A", "input": "B"}'),
        ([("input", "false", "12")], '{"input": 12}'),
        ([("inp", "true", "A")], '{"inp": "A"}'),
        ([("inputx", "true", "A")], '{"inputx": "A"}'),
        ([], "{}"),
    ],
)
def test_apply_patch_input_rule(params: list[tuple[str, str, str]], expected: str) -> None:
    """The reference's rule (observed from outside): the first parameter, when it is ``input`` with a JSON string
    value, decoded; else the whole arguments JSON. The same in every chunking."""
    req = request(tools=[APPLY_PATCH, WEATHER])
    output = call_block(invoke("apply_patch", *params))
    for chunks in ([output], list(output)):
        events = stream(req, *chunks)
        added = next(e["item"] for e in events if e["type"] == "response.output_item.added")
        assert added == {
            "type": "custom_tool_call",
            "id": "ctc_R_0",
            "status": "in_progress",
            "call_id": added["call_id"],
            "name": "apply_patch",
            "input": "",
        }
        assert patch_input(events) == (expected, expected)
        assert final(events)["output"][0]["input"] == expected


def test_apply_patch_cut_short_by_length() -> None:
    req = request(tools=[APPLY_PATCH])
    text = call_block(invoke("apply_patch", ("input", "true", "*** Begin Patch\n*** Add")))
    cut = text[: text.index("Add") + 3]
    events = stream(req, *cut, finish="length")
    assert patch_input(events) == ("*** Begin Patch\n*** Add", "*** Begin Patch\n*** Add")
    assert final(events)["output"][0]["status"] == "incomplete"


@pytest.mark.parametrize("tools", [[WEATHER], [dict(WEATHER, name="apply_patch")]])
def test_apply_patch_is_a_function_call_unless_declared_custom(tools: list[dict[str, Any]]) -> None:
    output = call_block(invoke("apply_patch", ("input", "true", "P")))
    events = stream(request(tools=tools), output)
    item = final(events)["output"][0]
    assert (item["type"], item["arguments"]) == ("function_call", '{"input": "P"}')


# -- logprobs --------------------------------------------------------------------------------------------------


def test_logprobs_ride_on_text_deltas() -> None:
    entry = TokenLogprob("Hi", -0.5, (72, 105), (TopLogprob("Ho", -1.0, (72, 111)),))
    lost = TokenLogprob("x", -9999.0, (120,))  # what the machine makes of -inf (D21)
    events = run([ReasoningDelta("r", (entry,)), ContentDelta("Hi", (entry,)), ContentDelta("x", (lost,))])
    text_deltas = [e for e in events if e["type"] == "response.output_text.delta"]
    want = {
        "token": "Hi",
        "logprob": -0.5,
        "bytes": [72, 105],
        "top_logprobs": [{"token": "Ho", "logprob": -1.0, "bytes": [72, 111]}],
    }
    assert text_deltas[0]["logprobs"] == [want]
    assert text_deltas[1]["logprobs"][0]["logprob"] == -9999.0
    done = next(e for e in events if e["type"] == "response.output_text.done")
    assert done["logprobs"][0] == want and len(done["logprobs"]) == 2
    assert final(events)["output"][1]["content"][0]["logprobs"] == done["logprobs"]
    assert all("logprobs" not in e for e in events if e["type"] == "response.reasoning_text.delta")


# -- echo ------------------------------------------------------------------------------------------------------


def test_echoes_the_request_settings_as_given() -> None:
    req = request(
        instructions="I",
        temperature=0.5,
        top_p=0.25,
        max_output_tokens=7,
        top_logprobs=2,
        user="u",
        reasoning={"effort": "high", "summary": "auto"},
        tools=[WEATHER],
        tool_choice="none",
        text={"format": {"type": "json_object"}},
        input="json please",
    )
    response = final(run([], req=req))
    assert {
        k: response[k]
        for k in ("instructions", "temperature", "top_p", "max_output_tokens", "top_logprobs", "user")
    } == {
        "instructions": "I",
        "temperature": 0.5,
        "top_p": 0.25,
        "max_output_tokens": 7,
        "top_logprobs": 2,
        "user": "u",
    }
    assert response["reasoning"] == {"effort": "high", "summary": "auto"}
    assert response["tool_choice"] == "none"
    assert response["text"]["format"] == {"type": "json_object"}
    assert response["tools"][0]["name"] == "get_weather"


def test_defaults_without_echo() -> None:
    req = ConversationRequest(protocol="responses", model=V4, model_version="v4", conversation=Conversation())
    response = final(run([ContentDelta("a")], req=req))
    assert {
        k: response[k]
        for k in ("instructions", "temperature", "top_p", "top_logprobs", "tools", "tool_choice")
    } == {
        "instructions": None,
        "temperature": 1.0,
        "top_p": 1.0,
        "top_logprobs": 0,
        "tools": [],
        "tool_choice": "auto",
    }
    assert response["reasoning"] == {"effort": None, "summary": None}
    assert response["metadata"] == {}


# -- errors ----------------------------------------------------------------------------------------------------


class _Busy(ConversionError):
    """A backend's error for an engine that refused the request as too busy."""

    status_code = 429


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (ModelOutputError("backend died"), "server_error"),
        (ConversionError("bad"), "invalid_prompt"),
        (_Busy("the engine is busy"), "rate_limit_exceeded"),
    ],
)
def test_error_ends_with_response_failed(exc: Any, code: str) -> None:
    w = writer()
    wire = w.open(PromptUsage()) + w.write([ReasoningDelta("r"), ContentDelta("a")]) + w.error(exc)
    events = sdk_checked(wire)
    assert types(events)[-4:] == ["output_text.done", "content_part.done", "output_item.done", "failed"]
    response = final(events)
    assert response["status"] == "failed"
    assert response["error"] == {"code": code, "message": exc.message}
    assert [i["status"] for i in response["output"]] == ["completed", "incomplete"]
    assert response["usage"] is None and response["completed_at"] is None
    Response.model_validate(response, strict=True)
    assert w.close(outcome()) == [] and w.error(exc) == [] and w.write([ContentDelta("b")]) == []
    assert accumulate_events(events) == response


def test_processor_fail_uses_the_failed_form() -> None:
    p = dscodec.StreamProcessor(request(), response_id="R", model=V4, created=0)
    wire = p.push_text("Hello", 1) + p.fail(RuntimeError("connection reset"))
    events = sdk_checked(wire)
    assert events[-1]["type"] == "response.failed"
    assert dscodec.accumulate("responses", wire)["status"] == "failed"


# -- accumulate ------------------------------------------------------------------------------------------------


def transcript(wire: list[WireEvent]) -> list[dict[str, Any]]:
    """Parse an SSE transcript the way a client does: the data lines of each frame."""
    text = "".join(e.sse() for e in wire)
    frames = [f for f in text.split("\n\n") if f]
    out = []
    for frame in frames:
        lines = frame.split("\n")
        assert lines[0].startswith("event: ")
        out.append(json.loads(lines[1].removeprefix("data: ")))
    return out


def test_accumulate_wire_transcript_is_the_final_response() -> None:
    req = request(tools=[WEATHER], reasoning={"effort": "high"})
    p = dscodec.StreamProcessor(req, response_id="R", model=V4, created=0)
    wire = p.start(3) + p.push_text(
        "r</think>Checking.\n\n" + call_block(invoke("get_weather", ("city", "true", "P"))), 9
    )
    wire += p.finish("stop")
    dicts = transcript(wire)
    result = accumulate_events(dicts)
    assert result == dicts[-1]["response"]
    result["output"].clear()  # a fresh object: the events are untouched
    assert dicts[-1]["response"]["output"]


def test_accumulate_rebuilds_an_unfinished_stream() -> None:
    w = writer()
    wire = w.open(PromptUsage()) + w.write(
        [
            ReasoningDelta("th"),
            ReasoningDelta("ink"),
            ContentDelta("Hel"),
            ContentDelta("lo"),
            ToolCallStart(0, "c", "f"),
        ]
    )
    wire += w.write([ToolCallDelta(0, '{"a"'), ToolCallDelta(0, ": 1")])
    dicts = transcript(wire)
    result = accumulate_events(dicts)
    assert result["status"] == "in_progress" and result["id"] == "R" and result["usage"] is None
    reasoning, message, call = result["output"]
    assert reasoning["status"] == message["status"] == "completed"  # their done events were sent
    assert message["content"][0]["text"] == "Hello"
    assert call == {
        "type": "function_call",
        "id": "fc_R_2",
        "status": "in_progress",
        "call_id": "c",
        "name": "f",
        "arguments": '{"a": 1',
    }
    # Cut inside the message: the open item is rebuilt from its added event and deltas.
    first_text = next(i for i, d in enumerate(dicts) if d["type"] == "response.output_text.delta")
    partial = accumulate_events(dicts[: first_text + 1])
    assert partial["output"][1]["content"] == [
        {"type": "output_text", "annotations": [], "logprobs": [], "text": "Hel"}
    ]
    assert partial["output"][1]["status"] == "in_progress"


def test_accumulate_error_event_and_empty_and_garbage() -> None:
    start = transcript(writer().open(PromptUsage()))
    failed = accumulate_events(
        [*start, {"type": "error", "code": "boom", "message": "m", "sequence_number": 2}]
    )
    assert (failed["status"], failed["error"]) == ("failed", {"code": "boom", "message": "m"})
    assert accumulate_events(start) == start[-1]["response"]
    empty = accumulate_events([], response_id="X", model="M", created=9)
    assert (empty["id"], empty["model"], empty["created_at"], empty["status"], empty["output"]) == (
        "X",
        "M",
        9,
        "in_progress",
        [],
    )
    Response.model_validate(empty, strict=True)
    garbage: list[Any] = [
        None,
        {"type": "response.output_text.delta", "output_index": 5, "delta": "x"},
        {"type": "response.output_item.added", "output_index": "0", "item": {}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "content": None},
        },
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 3, "delta": "x"},
        {"type": "response.output_text.delta", "output_index": 0, "delta": 5},
        {"type": "response.completed", "response": "nope"},
    ]
    assert accumulate_events(garbage)["output"] == [{"type": "message", "content": []}]


def test_accumulate_does_not_share_state_with_events() -> None:
    events = run([ContentDelta("a")])
    snapshot = copy.deepcopy(events)
    result = dscodec.accumulate("responses", events)
    result["output"][0]["content"][0]["text"] = "changed"
    assert events == snapshot


def test_apply_patch_input_decodes_escapes_cut_anywhere() -> None:
    """Escapes cut between argument fragments (a long ``string="false"`` value streams as written) decode once;
    a lone surrogate, valid JSON but not text, becomes U+FFFD."""
    req = request(tools=[APPLY_PATCH])
    arguments = '{"input": "a\\"b\\\\c\\n\\u00e9\\ud83d\\ude00|\\ud83d|x", "more": 1}'
    want = 'a"b\\c\né😀|\ufffd|x'
    for cut in range(1, len(arguments)):
        for second in (cut + 1, cut + 5):
            pieces = [arguments[:cut], arguments[cut:second], arguments[second:]]
            events = run(
                [ToolCallStart(0, "c", "apply_patch")]
                + [ToolCallDelta(0, p) for p in pieces if p]
                + [ToolCallEnd(0, arguments)],
                req=req,
            )
            assert patch_input(events) == (want, want), pieces


def test_sampling_settings_echo_as_32_bit_floats() -> None:
    """The request keeps temperature/top_p as 32-bit floats; the response shows their shortest decimal."""
    body = {
        "model": "DeepSeek-V4-Pro",
        "input": "hi",
        "temperature": 0.3,
        "top_p": 0.12345678,
        "reasoning": {"effort": "none"},
    }
    request = dscodec.convert("responses", body)
    processor = dscodec.StreamProcessor(request, response_id="resp_1", model="M", created=1)
    created = processor.push_text("x", 1)[0].to_json()
    assert '"temperature":0.3,' in created and '"top_p":0.12345678,' in created


def test_echo_storage_checks_its_arguments() -> None:
    request = dscodec.convert("responses", {"model": "DeepSeek-V4-Pro", "input": "Hi"})
    with pytest.raises(TypeError, match="request must be"):
        echo_storage({"input": "Hi"}, store=True, previous_response_id=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="store must be a bool"):
        echo_storage(request, store="yes", previous_response_id=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="previous_response_id must be"):
        echo_storage(request, store=True, previous_response_id=5)  # type: ignore[arg-type]
    chat = dscodec.convert(
        "chat_completions", {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}
    )
    wire = chat.wire
    echo_storage(chat, store=True, previous_response_id="resp_1")
    assert chat.wire is wire  # another protocol's request is left as it is


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (0.3, "0.3"),
        (0.7, "0.7"),
        (1.0, "1.0"),
        (0.1234567, "0.1234567"),
        (2, "2.0"),
    ],
)
def test_sampling_values_show_their_32_bit_shortest_decimal(sent: float, shown: str) -> None:
    """The response object shows ``temperature`` and ``top_p`` as the 32-bit float the request keeps, in its
    shortest decimal; the same again from the remembered values, and ``-0`` keeps its sign even after ``0``."""
    for _ in range(2):
        for value in (0.0, sent):
            body = {"model": "DeepSeek-V4-Pro", "input": "Hi", "temperature": value, "top_p": 0.3}
            request = dscodec.convert("responses", json.dumps(body))
            writer = ResponsesEventWriter(request, response_id="resp_1", model="m", created=0)
            text = writer.open(PromptUsage(1))[0].to_json()
            assert '"top_p":0.3,' in text
        assert f'"temperature":{shown},' in text


@pytest.mark.parametrize(
    ("value", "tail", "status", "arguments"),
    [
        # D8: a string="false" value that is no JSON is a JSON string of its raw text, so the call is complete
        # (the reference, whose arguments are then no JSON, gives "incomplete" and {}).
        ("xyz", f"</{D} invoke>\n</{D} calls>", "completed", {"query": "time", "limit": "xyz"}),
        ("3", f"</{D} invoke>\n</{D} calls>", "completed", {"query": "time", "limit": 3}),
        # Cut short before the invoke closes: no JSON object, as on the reference.
        ("3", "<", "incomplete", {}),
    ],
)
def test_tool_search_call_status_follows_its_arguments(
    value: str, tail: str, status: str, arguments: dict[str, Any]
) -> None:
    req = request(
        model="DeepSeek-V4.1-Flash",
        tools=[{"type": "tool_search", "execution": "client"}],
        tool_choice="auto",
    )
    output = (
        f'<{D} calls>\n<{D} invoke name="tool_search">\n'
        f'<{D} parameter name="query" string="true">time</{D} parameter>\n'
        f'<{D} parameter name="limit" string="false">{value}</{D} parameter>\n{tail}'
    )
    p = dscodec.StreamProcessor(req, response_id="R", model="M")
    events = p.start(prompt_tokens=1) + p.push_text(output, 9) + p.finish("stop")
    done = [
        e.to_dict()["item"]
        for e in events
        if e.to_dict()["type"] == "response.output_item.done"
        and e.to_dict()["item"]["type"] == "tool_search_call"
    ]
    assert [(item["status"], item["arguments"]) for item in done] == [(status, arguments)]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"input": "a\\"b"}', 'a"b'),
        ('{"input":  "abc"}', "abc"),  # a string="false" value written after white space
        ('{"input": \n\t "x\\u00e9" }', "xé"),
        ('{"input":   12}', '{"input":   12}'),  # no string: the arguments as they are, white space and all
        ('{"input": ', '{"input": '),  # cut inside the opening: flushed at the end
        ('{"input":    ', '{"input":    '),
        ('{"patch": "x"}', '{"patch": "x"}'),
    ],
)
def test_patch_input_reads_the_same_whatever_the_cut(arguments: str, expected: str) -> None:
    from dscodec.protocols.openai_responses._patch import PatchInput

    for size in (1, 2, 3, len(arguments)):
        reader = PatchInput()
        pieces = [reader.feed(arguments[i : i + size]) for i in range(0, len(arguments), size)]
        assert "".join(pieces) + reader.flush() == expected, size


def test_patch_input_holds_a_long_run_of_white_space_in_linear_time() -> None:
    from dscodec.protocols.openai_responses._patch import PatchInput

    reader = PatchInput()
    assert reader.feed('{"input": ') == ""
    for _ in range(50_000):
        assert reader.feed(" ") == ""
    assert reader.feed('"ok"}') == "ok"
    assert reader.flush() == ""
