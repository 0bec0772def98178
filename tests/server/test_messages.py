"""Anthropic Messages through the official anthropic SDK: create (JSON and SSE), the stream helper, errors, round trip."""

from __future__ import annotations

import json
import re
from typing import Any

import anthropic
import pytest
from anthropic.types import Message

import dscodec
from tests.server import scripts as s
from tests.server.conftest import VOCABULARY, Recorder, new_id, scenario, strict
from tests.server.tools import GetWeather, PlanTrip

USER = [{"role": "user", "content": "Hi"}]
TRIP_TOOL = {"name": "plan_trip", "description": "Plan a trip.", "input_schema": PlanTrip.model_json_schema()}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The weather.",
    "input_schema": GetWeather.model_json_schema(),
}
NOTHINK: dict[str, Any] = {"type": "disabled"}


def summary(message: Any) -> list[tuple[Any, ...]]:
    """The content blocks, tool call ids left out (they differ per response)."""
    out: list[tuple[Any, ...]] = []
    for block in message.content:
        if block.type == "thinking":
            out.append(("thinking", block.thinking))
        elif block.type == "text":
            out.append(("text", block.text))
        elif block.type == "tool_use":
            out.append(("tool_use", block.name, block.input))
        else:  # pragma: no cover - no other block kinds in these scripts
            raise AssertionError(f"unexpected block {block.type}")
    return out


def _streamed(events: list[Any]) -> list[tuple[Any, ...]]:
    """The content blocks rebuilt from the raw events alone."""
    blocks: dict[int, list[Any]] = {}
    for event in events:
        if event.type == "content_block_start":
            block = event.content_block
            blocks[event.index] = (
                [block.type, block.name, ""] if block.type == "tool_use" else [block.type, ""]
            )
        elif event.type == "content_block_delta":
            delta = event.delta
            text = {
                "thinking_delta": "thinking",
                "text_delta": "text",
                "input_json_delta": "partial_json",
            }.get(delta.type)
            if text is not None:
                blocks[event.index][-1] += getattr(delta, text)
    out = []
    for index in sorted(blocks):
        block = blocks[index]
        out.append((block[0], block[1], json.loads(block[2])) if block[0] == "tool_use" else tuple(block))
    return out


def all_ways(
    client: anthropic.Anthropic, model: str, name: str, **kwargs: Any
) -> tuple[Message, list[Any], Any]:
    """One scenario as JSON, as a raw event stream and through ``messages.stream``; they agree."""
    kwargs.setdefault("messages", USER)
    kwargs.setdefault("max_tokens", 1024)
    headers = scenario(name)
    message = strict(client.messages.create(model=model, extra_headers=headers, **kwargs))
    events = [
        strict(e) for e in client.messages.create(model=model, stream=True, extra_headers=headers, **kwargs)
    ]
    with client.messages.stream(model=model, extra_headers=headers, **kwargs) as stream:
        helper_types = [e.type for e in stream]
        final = strict(stream.get_final_message())

    assert message.type == "message" and message.role == "assistant" and message.model == model
    assert message.id.startswith("msg_") and len(message.id) > len("msg_")
    assert events[0].type == "message_start" and events[-1].type == "message_stop"
    delta = events[-2]
    assert delta.type == "message_delta" and delta.delta.stop_reason == message.stop_reason
    assert (
        delta.delta.stop_sequence == message.stop_sequence
        and delta.usage.output_tokens == message.usage.output_tokens
    )
    assert summary(message) == _streamed(events) == summary(final)
    assert (
        final.stop_reason == message.stop_reason and final.usage.output_tokens == message.usage.output_tokens
    )
    assert "message_stop" in helper_types
    return message, events, final


def test_plain_answer(anthropic_client: anthropic.Anthropic, model: str) -> None:
    message, events, _ = all_ways(anthropic_client, model, "plain")
    # Thinking is on by default: the (empty) thinking block comes first, signed with the message id.
    assert summary(message) == [("thinking", ""), ("text", s.PLAIN)]
    assert message.content[0].type == "thinking" and message.content[0].signature == message.id
    assert message.stop_reason == "end_turn" and message.stop_sequence is None
    request = dscodec.convert("messages", {"model": model, "max_tokens": 1024, "messages": USER})
    assert message.usage.input_tokens == len(dscodec.PromptEncoder(VOCABULARY).encode(request))
    assert sum(1 for e in events if e.type == "ping") == 0  # the SDK drops pings


def test_plain_answer_without_thinking(anthropic_client: anthropic.Anthropic, model: str) -> None:
    message, _, _ = all_ways(anthropic_client, model, "plain", thinking=NOTHINK)
    assert summary(message) == [("text", s.PLAIN)]


@pytest.mark.parametrize("name", ["reasoning", "reasoning_tokens"])
def test_reasoning_and_answer(anthropic_client: anthropic.Anthropic, model: str, name: str) -> None:
    message, events, _ = all_ways(anthropic_client, model, name)
    assert summary(message) == [("thinking", s.REASONING), ("text", s.REASONING_ANSWER)]
    assert sum(1 for e in events if e.type == "content_block_delta" and e.delta.type == "thinking_delta") > 3


@pytest.mark.parametrize("name", ["tool_args", "tool_args_tokens"])
def test_tool_call_with_every_argument_kind(
    anthropic_client: anthropic.Anthropic, model: str, name: str
) -> None:
    message, _, _ = all_ways(anthropic_client, model, name, tools=[TRIP_TOOL])
    assert summary(message) == [
        ("thinking", "I need plan_trip."),
        ("text", s.TOOL_PREFACE),
        ("tool_use", "plan_trip", s.TRIP_ARGS),
    ]
    assert message.stop_reason == "tool_use"
    assert message.content[2].type == "tool_use" and message.content[2].id.startswith("call_00_")
    assert PlanTrip.model_validate(message.content[2].input) == PlanTrip.model_validate(s.TRIP_ARGS)


def test_parallel_tool_calls(anthropic_client: anthropic.Anthropic, model: str) -> None:
    message, _, _ = all_ways(anthropic_client, model, "parallel", tools=[WEATHER_TOOL], thinking=NOTHINK)
    assert summary(message) == [("tool_use", "get_weather", args) for args in s.WEATHER_CALLS]
    ids = [block.id for block in message.content if block.type == "tool_use"]
    assert [i[:8] for i in ids] == ["call_00_", "call_01_"] and ids[0] != ids[1]


@pytest.mark.parametrize("name", ["cjk_text", "cjk_tokens"])
def test_cjk_and_emoji_split_across_chunks(
    anthropic_client: anthropic.Anthropic, model: str, name: str
) -> None:
    message, events, _ = all_ways(anthropic_client, model, name)
    assert summary(message) == [("thinking", s.CJK_REASONING), ("text", s.CJK)]
    texts = [e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta"]
    assert len(texts) >= 10 and "\ufffd" not in "".join(texts)


def test_stop_sequence_split_across_chunks(
    anthropic_client: anthropic.Anthropic, recorder: Recorder, model: str
) -> None:
    message, _, _ = all_ways(anthropic_client, model, "stop", stop_sequences=["END"], thinking=NOTHINK)
    assert summary(message) == [("text", s.STOP_CONTENT)]
    assert message.stop_reason == "stop_sequence" and message.stop_sequence == "END"
    assert message.usage.input_tokens == 40 - 8 and message.usage.cache_read_input_tokens == 8
    key = new_id()
    with anthropic_client.messages.stream(
        model=model,
        max_tokens=100,
        messages=USER,
        stop_sequences=["END"],
        thinking=NOTHINK,
        extra_headers=scenario("stop", key),
    ) as stream:
        assert stream.get_final_message().stop_sequence == "END"
    run = recorder.wait_closed(key)
    assert not run.exhausted and run.yielded < len(s.STOP_OUTPUT) // 2


def test_length_finish(anthropic_client: anthropic.Anthropic, model: str) -> None:
    message, _, _ = all_ways(anthropic_client, model, "length", thinking=NOTHINK)
    assert message.stop_reason == "max_tokens" and summary(message) == [
        ("text", "This answer runs out of room")
    ]


def test_max_tokens_cuts_the_output(
    anthropic_client: anthropic.Anthropic, recorder: Recorder, model: str
) -> None:
    key = new_id()
    message = strict(
        anthropic_client.messages.create(
            model=model, max_tokens=3, messages=USER, thinking=NOTHINK, extra_headers=scenario("plain", key)
        )
    )
    assert recorder.wait_closed(key).max_tokens == 3
    assert message.stop_reason == "max_tokens" and message.usage.output_tokens == 3
    text = message.content[0].text if message.content and message.content[0].type == "text" else ""
    assert text and s.PLAIN.startswith(text) and text != s.PLAIN


def test_context_length_exceeded_is_a_400(anthropic_client: anthropic.Anthropic, model: str) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(model=model, max_tokens=5000, messages=USER)
    body = caught.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    # Anthropic's words, which clients match to shorten the conversation.
    assert re.fullmatch(
        r"input length and `max_tokens` exceed context limit: \d+ \+ 5000 > 4096, decrease input length or "
        r"`max_tokens` and try again",
        body["error"]["message"],
    )


def test_a_prompt_longer_than_the_context_is_said_to_be_too_long(
    anthropic_client: anthropic.Anthropic, model: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(
            model=model, max_tokens=10, messages=[{"role": "user", "content": "word " * 5000}]
        )
    assert re.fullmatch(
        r"prompt is too long: \d+ tokens > 4096 maximum", caught.value.body["error"]["message"]
    )  # type: ignore[index]


@pytest.mark.parametrize("stream", [False, True])
def test_unknown_model(anthropic_client: anthropic.Anthropic, stream: bool) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(model="claude-x", max_tokens=10, messages=USER, stream=stream)
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "The supported API model names are DeepSeek-V4-Pro, DeepSeek-V4.1-Flash, but you passed claude-x.",
        },
        "request_id": caught.value.request_id,  # the request-id header's, as Anthropic's API answers
    }
    with (
        pytest.raises(anthropic.BadRequestError),
        anthropic_client.messages.stream(model="claude-x", max_tokens=10, messages=USER) as helper,
    ):
        helper.get_final_message()


def test_backend_failure_mid_stream(
    anthropic_client: anthropic.Anthropic, recorder: Recorder, model: str
) -> None:
    key = new_id()
    received: list[Any] = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        for event in anthropic_client.messages.create(
            model=model, max_tokens=100, messages=USER, stream=True, extra_headers=scenario("fail_mid", key)
        ):
            received.append(strict(event))
    assert received and received[0].type == "message_start"
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": "the model server failed: scripted failure after 4 chunks"},
        "request_id": caught.value.request_id,  # the request-id header's, as in every Anthropic error body
    }
    assert isinstance(caught.value.request_id, str) and caught.value.request_id.startswith("req_")
    assert recorder.wait_closed(key).closed
    with (
        pytest.raises(anthropic.APIStatusError),
        anthropic_client.messages.stream(
            model=model, max_tokens=100, messages=USER, extra_headers=scenario("fail_mid")
        ) as helper,
    ):
        helper.get_final_message()


@pytest.mark.parametrize("stream", [False, True])
def test_backend_failure_before_output_is_a_5xx(anthropic_client: anthropic.Anthropic, stream: bool) -> None:
    with pytest.raises(anthropic.InternalServerError) as caught:
        anthropic_client.messages.create(
            model="DeepSeek-V4-Pro",
            max_tokens=10,
            messages=USER,
            stream=stream,
            extra_headers=scenario("fail_early"),
        )
    assert caught.value.status_code == 502
    assert isinstance(caught.value.body, dict) and caught.value.body["error"]["type"] == "api_error"


@pytest.mark.parametrize("helper", [False, True])
def test_round_trip_of_content_blocks(
    anthropic_client: anthropic.Anthropic, model: str, helper: bool
) -> None:
    request: dict[str, Any] = {"model": model, "max_tokens": 1024, "messages": USER, "tools": [TRIP_TOOL]}
    if helper:
        with anthropic_client.messages.stream(**request, extra_headers=scenario("tool_args")) as stream:
            first: Any = stream.get_final_message()
    else:
        first = anthropic_client.messages.create(**request, extra_headers=scenario("tool_args"))
    assert [block.type for block in first.content] == ["thinking", "text", "tool_use"]
    results = [
        {"type": "tool_result", "tool_use_id": b.id, "content": "booked"}
        for b in first.content
        if b.type == "tool_use"
    ]
    history = [*USER, {"role": "assistant", "content": first.content}, {"role": "user", "content": results}]
    answer = strict(
        anthropic_client.messages.create(
            **{**request, "messages": history}, extra_headers=scenario("after_tool")
        )
    )
    assert summary(answer) == [("thinking", ""), ("text", s.AFTER_TOOL)]
