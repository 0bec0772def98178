"""OpenAI Responses through the official openai SDK: create (JSON and SSE), the stream helper, errors, round trip."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai.types.responses import Response

import dscodec
from tests.server import scripts as s
from tests.server.conftest import VOCABULARY, Recorder, new_id, scenario, strict
from tests.server.tools import GetWeather, PlanTrip

TRIP_TOOL = openai.pydantic_responses_function_tool(PlanTrip, name="plan_trip")
WEATHER_TOOL = openai.pydantic_responses_function_tool(GetWeather, name="get_weather")
NOTHINK = {"reasoning": {"effort": "none"}}


def summary(response: Any) -> list[tuple[str, ...]]:
    """The output items without their (per-response) ids."""
    out: list[tuple[str, ...]] = []
    for item in response.output:
        if item.type == "reasoning":
            out.append(("reasoning", "".join(part.text for part in item.content or [])))
        elif item.type == "message":
            out.append(("message", "".join(part.text for part in item.content if part.type == "output_text")))
        elif item.type == "function_call":
            out.append(("function_call", item.name, item.arguments))
        else:  # pragma: no cover - no other item kinds in these scripts
            raise AssertionError(f"unexpected output item {item.type}")
    return out


def _streamed(events: list[Any]) -> list[tuple[str, ...]]:
    """The output items rebuilt from the delta events alone."""
    items: dict[int, list[str]] = {}
    for event in events:
        if event.type == "response.output_item.added":
            item = event.item
            items[event.output_index] = (
                [item.type, item.name, ""] if item.type == "function_call" else [item.type, ""]
            )
        elif event.type in (
            "response.reasoning_text.delta",
            "response.output_text.delta",
            "response.function_call_arguments.delta",
        ):
            items[event.output_index][-1] += event.delta
    return [tuple(items[i]) for i in sorted(items)]


def all_ways(client: openai.OpenAI, model: str, name: str, **kwargs: Any) -> tuple[Response, list[Any], Any]:
    """One scenario as JSON, as a raw event stream and through ``responses.stream``; they agree."""
    kwargs.setdefault("input", "Hi")
    headers = scenario(name)
    response = strict(client.responses.create(model=model, extra_headers=headers, **kwargs))
    events = [
        strict(e) for e in client.responses.create(model=model, stream=True, extra_headers=headers, **kwargs)
    ]
    with client.responses.stream(model=model, extra_headers=headers, **kwargs) as stream:
        helper_events = [strict(e) for e in stream]
        final = strict(stream.get_final_response()) if response.status == "completed" else None

    assert response.object == "response" and response.model == model
    assert response.id.startswith("resp_") and len(response.id) > len("resp_")
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert [e.type for e in events[:2]] == ["response.created", "response.in_progress"]
    last = events[-1]
    assert last.type == f"response.{response.status}"
    assert summary(last.response) == summary(response) == _streamed(events)
    assert (
        last.response.usage == response.usage
        and last.response.incomplete_details == response.incomplete_details
    )
    assert [e.type for e in helper_events] == [e.type for e in events]
    if final is not None:
        assert summary(final) == summary(response) and final.output_text == response.output_text
    return response, events, final


def test_plain_answer(openai_client: openai.OpenAI, model: str) -> None:
    response, _, final = all_ways(openai_client, model, "plain")
    assert summary(response) == [("message", s.PLAIN)]  # empty reasoning makes no reasoning item
    assert response.status == "completed" and response.output_text == s.PLAIN
    request = dscodec.convert("responses", {"model": model, "input": "Hi"})
    assert response.usage is not None and response.usage.input_tokens == len(
        dscodec.PromptEncoder(VOCABULARY).encode(request)
    )
    assert final.output_text == s.PLAIN


def test_plain_answer_without_thinking(openai_client: openai.OpenAI, model: str) -> None:
    response, _, _ = all_ways(openai_client, model, "plain", reasoning=NOTHINK["reasoning"])
    assert summary(response) == [("message", s.PLAIN)]
    assert response.reasoning is not None and response.reasoning.effort == "none"


@pytest.mark.parametrize("name", ["reasoning", "reasoning_tokens"])
def test_reasoning_and_answer(openai_client: openai.OpenAI, model: str, name: str) -> None:
    response, events, _ = all_ways(openai_client, model, name)
    assert summary(response) == [("reasoning", s.REASONING), ("message", s.REASONING_ANSWER)]
    assert sum(1 for e in events if e.type == "response.reasoning_text.delta") > 3
    assert response.usage is not None
    assert response.usage.output_tokens_details.reasoning_tokens == len(
        VOCABULARY.full.encode(s.REASONING).ids
    )


@pytest.mark.parametrize("name", ["tool_args", "tool_args_tokens"])
def test_tool_call_with_every_argument_kind(openai_client: openai.OpenAI, model: str, name: str) -> None:
    response, _, final = all_ways(openai_client, model, name, tools=[TRIP_TOOL])
    kinds = summary(response)
    assert kinds[:2] == [("reasoning", "I need plan_trip."), ("message", s.TOOL_PREFACE)]
    assert kinds[2][:2] == ("function_call", "plan_trip") and json.loads(kinds[2][2]) == s.TRIP_ARGS
    call = response.output[2]
    assert call.type == "function_call" and call.call_id.startswith("call_00_") and call.status == "completed"
    assert final.output[2].parsed_arguments == PlanTrip.model_validate(s.TRIP_ARGS)


def test_parallel_tool_calls(openai_client: openai.OpenAI, model: str) -> None:
    response, _, final = all_ways(
        openai_client, model, "parallel", tools=[WEATHER_TOOL], reasoning=NOTHINK["reasoning"]
    )
    calls = [item for item in response.output if item.type == "function_call"]
    assert [json.loads(c.arguments) for c in calls] == s.WEATHER_CALLS
    assert [c.call_id[:8] for c in calls] == ["call_00_", "call_01_"] and calls[0].call_id != calls[1].call_id
    assert [i.parsed_arguments for i in final.output if i.type == "function_call"] == [
        GetWeather.model_validate(a) for a in s.WEATHER_CALLS
    ]


@pytest.mark.parametrize("name", ["cjk_text", "cjk_tokens"])
def test_cjk_and_emoji_split_across_chunks(openai_client: openai.OpenAI, model: str, name: str) -> None:
    response, events, _ = all_ways(openai_client, model, name)
    assert summary(response) == [("reasoning", s.CJK_REASONING), ("message", s.CJK)]
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) >= 10 and "\ufffd" not in "".join(deltas)


def test_length_finish(openai_client: openai.OpenAI, model: str) -> None:
    response, _, _ = all_ways(openai_client, model, "length", reasoning=NOTHINK["reasoning"])
    assert response.status == "incomplete"
    assert (
        response.incomplete_details is not None and response.incomplete_details.reason == "max_output_tokens"
    )
    assert summary(response) == [("message", "This answer runs out of room")]


def test_max_output_tokens_cuts_the_output(
    openai_client: openai.OpenAI, recorder: Recorder, model: str
) -> None:
    key = new_id()
    response = strict(
        openai_client.responses.create(
            model=model, input="Hi", max_output_tokens=3, extra_headers=scenario("plain", key)
        )
    )
    assert recorder.wait_closed(key).max_tokens == 3
    assert response.status == "incomplete" and response.max_output_tokens == 3
    assert response.usage is not None and response.usage.output_tokens == 3
    assert s.PLAIN.startswith(response.output_text) and response.output_text != s.PLAIN


@pytest.mark.parametrize("stream", [False, True])
def test_unknown_model(openai_client: openai.OpenAI, stream: bool) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.responses.create(model="gpt-4o", input="Hi", stream=stream)
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "message": "The supported API model names are DeepSeek-V4-Pro, DeepSeek-V4.1-Flash, but you passed gpt-4o.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }
    with (
        pytest.raises(openai.BadRequestError),
        openai_client.responses.stream(model="gpt-4o", input="Hi") as helper,
    ):
        helper.get_final_response()


def test_backend_failure_mid_stream(openai_client: openai.OpenAI, recorder: Recorder, model: str) -> None:
    key = new_id()
    events = [
        strict(e)
        for e in openai_client.responses.create(
            model=model, input="Hi", stream=True, extra_headers=scenario("fail_mid", key)
        )
    ]
    failed = events[-1]
    assert failed.type == "response.failed" and failed.response.status == "failed"
    assert failed.response.error is not None and failed.response.error.code == "server_error"
    assert failed.response.error.message == "the model server failed: scripted failure after 4 chunks"
    assert any(e.type == "response.reasoning_text.delta" for e in events)  # output had started
    assert recorder.wait_closed(key).closed
    with openai_client.responses.stream(
        model=model, input="Hi", extra_headers=scenario("fail_mid")
    ) as helper:
        assert [e.type for e in helper][-1] == "response.failed"
        with pytest.raises(RuntimeError):  # the helper has no completed response to give
            helper.get_final_response()


@pytest.mark.parametrize("stream", [False, True])
def test_backend_failure_before_output_is_a_5xx(openai_client: openai.OpenAI, stream: bool) -> None:
    with pytest.raises(openai.InternalServerError) as caught:
        openai_client.responses.create(
            model="DeepSeek-V4-Pro", input="Hi", stream=stream, extra_headers=scenario("fail_early")
        )
    assert caught.value.status_code == 502
    assert isinstance(caught.value.body, dict) and caught.value.body["code"] == "api_error"


@pytest.mark.parametrize("helper", [False, True])
def test_round_trip_of_output_items(openai_client: openai.OpenAI, model: str, helper: bool) -> None:
    user = [{"role": "user", "content": "Weather in Paris and Tokyo?"}]
    if helper:
        with openai_client.responses.stream(
            model=model, input=user, tools=[WEATHER_TOOL], extra_headers=scenario("tool_args")
        ) as stream:
            first: Any = stream.get_final_response()
    else:
        first = openai_client.responses.create(
            model=model, input=user, tools=[WEATHER_TOOL], extra_headers=scenario("tool_args")
        )
    calls = [item for item in first.output if item.type == "function_call"]
    assert [item.type for item in first.output] == ["reasoning", "message", "function_call"]
    history: list[Any] = [*user, *first.output]
    history += [{"type": "function_call_output", "call_id": c.call_id, "output": "sunny"} for c in calls]
    answer = strict(
        openai_client.responses.create(
            model=model, input=history, tools=[WEATHER_TOOL], extra_headers=scenario("after_tool")
        )
    )
    assert answer.status == "completed" and answer.output_text == s.AFTER_TOOL


TOOL_SEARCH = {
    "type": "tool_search",
    "execution": "client",
    "description": "Find more tools.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
}


@pytest.mark.parametrize("stream", [False, True])
def test_client_tool_search_round_trip(
    openai_client: openai.OpenAI, recorder: Recorder, stream: bool
) -> None:
    """V4.1: the model's tool_search call comes back as a tool_search_call item (through the SDK's stream helper
    too), and the client's tool_search_output loads a tool the next prompt announces."""
    model = "DeepSeek-V4.1-Flash"
    if stream:
        with openai_client.responses.stream(
            model=model, input="What time is it?", tools=[TOOL_SEARCH], extra_headers=scenario("tool_search")
        ) as events:
            kinds = {event.type for event in events}
            first = events.get_final_response()
        assert "response.function_call_arguments.delta" not in kinds
    else:
        first = openai_client.responses.create(
            model=model, input="What time is it?", tools=[TOOL_SEARCH], extra_headers=scenario("tool_search")
        )
    call = first.output[-1]
    assert call.type == "tool_search_call"
    assert (call.execution, call.arguments, call.status) == ("client", {"query": "time"}, "completed")
    key = new_id()
    loaded = {"type": "function", "name": "get_time", "parameters": {"type": "object"}}
    follow_up = openai_client.responses.create(
        model=model,
        previous_response_id=first.id,
        tools=[TOOL_SEARCH],
        input=[
            {"type": "tool_search_output", "call_id": call.call_id, "execution": "client", "tools": [loaded]}
        ],
        extra_headers=scenario("plain", key),
    )
    assert follow_up.status == "completed"
    prompt = dscodec.render(
        dscodec.convert(
            "responses",
            {
                "model": model,
                "tools": [TOOL_SEARCH],
                "input": [
                    {"role": "user", "content": "What time is it?"},
                    {
                        "type": "reasoning",
                        "content": [{"type": "reasoning_text", "text": "I need a clock tool."}],
                    },
                    {"type": "tool_search_call", "call_id": call.call_id, "arguments": {"query": "time"}},
                    {"type": "tool_search_output", "call_id": call.call_id, "tools": [loaded]},
                ],
            },
        )
    )
    assert "### Updated Tool Schemas" in prompt.text and '"name": "get_time"' in prompt.text
    # The server put the stored turn (the question, the reasoning, the call) in front of the output: the very
    # prompt of that conversation sent whole.
    run = recorder.wait_closed(key)
    assert run.prompt_ids == len(dscodec.PromptEncoder(VOCABULARY).encode_rendered(prompt))
