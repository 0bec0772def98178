"""Chat Completions through the official openai SDK: create (JSON and SSE), the stream helper, errors, round trip."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import dscodec
from tests.server import scripts as s
from tests.server.conftest import VOCABULARY, Recorder, new_id, scenario, strict
from tests.server.tools import GetWeather, PlanTrip

USER = [{"role": "user", "content": "Hi"}]
TRIP_TOOL = openai.pydantic_function_tool(PlanTrip, name="plan_trip")
WEATHER_TOOL = openai.pydantic_function_tool(GetWeather, name="get_weather")
NOTHINK = {"thinking": {"type": "disabled"}}


def _reasoning(message_or_delta: Any) -> Any:
    return (message_or_delta.model_extra or {}).get("reasoning_content")


def _calls(message: Any) -> list[tuple[str, str]]:
    return [(c.function.name, c.function.arguments) for c in message.tool_calls or []]


def _stream_calls(chunks: list[ChatCompletionChunk]) -> list[tuple[str, str]]:
    calls: dict[int, list[str]] = {}
    ids: dict[int, str] = {}
    for chunk in chunks:
        for call in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            if call.id is not None:
                assert call.index not in ids, "a tool call id is sent once, with the call's first delta"
                ids[call.index] = call.id
                calls[call.index] = [call.function.name, ""]  # type: ignore[union-attr,list-item]
            calls[call.index][1] += call.function.arguments or ""  # type: ignore[union-attr]
    return [(name, arguments) for name, arguments in (calls[i] for i in sorted(calls))]


def all_ways(
    client: openai.OpenAI, model: str, name: str, **kwargs: Any
) -> tuple[ChatCompletion, list[ChatCompletionChunk], Any]:
    """One scenario as a JSON response, a raw SSE stream and through ``chat.completions.stream``; they agree."""
    kwargs.setdefault("messages", USER)
    headers = scenario(name)
    completion = strict(client.chat.completions.create(model=model, extra_headers=headers, **kwargs))
    chunks = [
        strict(c)
        for c in client.chat.completions.create(model=model, stream=True, extra_headers=headers, **kwargs)
    ]
    with client.chat.completions.stream(model=model, extra_headers=headers, **kwargs) as stream:
        for _ in stream:
            pass
        if completion.choices[0].finish_reason == "length":
            # The helper refuses to parse a cut answer; the error carries the accumulated completion.
            with pytest.raises(openai.LengthFinishReasonError) as cut:
                stream.get_final_completion()
            final = strict(cut.value.completion)
        else:
            final = strict(stream.get_final_completion())

    message = completion.choices[0].message
    assert completion.object == "chat.completion" and completion.model == model
    assert completion.id.startswith("chatcmpl-") and len(completion.id) > len("chatcmpl-")
    assert len({c.id for c in chunks}) == 1 and chunks[0].id.startswith("chatcmpl-")
    assert all(c.object == "chat.completion.chunk" and c.model == model for c in chunks)
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(d.content or "" for d in deltas) == message.content
    assert (_reasoning(message) is None) == all(_reasoning(d) is None for d in deltas)
    if _reasoning(message) is not None:
        assert "".join(_reasoning(d) or "" for d in deltas) == _reasoning(message)
    assert _stream_calls(chunks) == _calls(message) == _calls(final.choices[0].message)
    assert (
        chunks[-1].choices[0].finish_reason
        == completion.choices[0].finish_reason
        == final.choices[0].finish_reason
    )
    assert chunks[-1].usage == completion.usage == final.usage
    assert final.choices[0].message.content == message.content
    return completion, chunks, final


def _prompt_tokens(model: str, messages: list[dict[str, Any]], **body: Any) -> int:
    request = dscodec.convert("chat_completions", {"model": model, "messages": messages, **body})
    return len(dscodec.PromptEncoder(VOCABULARY).encode(request))


def test_plain_answer(openai_client: openai.OpenAI, model: str) -> None:
    completion, chunks, _ = all_ways(openai_client, model, "plain")
    message = completion.choices[0].message
    assert message.role == "assistant" and message.content == s.PLAIN and message.tool_calls is None
    assert _reasoning(message) == ""  # thinking is on by default; this model went straight to its answer
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.prompt_tokens == _prompt_tokens(model, USER)
    assert completion.usage.completion_tokens == len(VOCABULARY.full.encode("</think>" + s.PLAIN).ids)
    assert chunks[0].choices[0].delta.role == "assistant"


def test_plain_answer_without_thinking(openai_client: openai.OpenAI, model: str) -> None:
    completion, _, _ = all_ways(openai_client, model, "plain", extra_body=NOTHINK)
    message = completion.choices[0].message
    assert message.content == s.PLAIN and "reasoning_content" not in (message.model_extra or {})
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == _prompt_tokens(model, USER, **NOTHINK)


@pytest.mark.parametrize("name", ["reasoning", "reasoning_tokens"])
def test_reasoning_and_answer(openai_client: openai.OpenAI, model: str, name: str) -> None:
    completion, chunks, _ = all_ways(openai_client, model, name)
    message = completion.choices[0].message
    assert _reasoning(message) == s.REASONING and message.content == s.REASONING_ANSWER
    assert sum(1 for c in chunks if c.choices and _reasoning(c.choices[0].delta)) > 3  # really streamed
    usage = completion.usage
    assert usage is not None and usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == len(VOCABULARY.full.encode(s.REASONING).ids)


@pytest.mark.parametrize("name", ["tool_args", "tool_args_tokens"])
def test_tool_call_with_every_argument_kind(openai_client: openai.OpenAI, model: str, name: str) -> None:
    completion, _, final = all_ways(openai_client, model, name, tools=[TRIP_TOOL])
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "tool_calls"
    assert message.content == s.TOOL_PREFACE and _reasoning(message) == "I need plan_trip."
    assert message.tool_calls is not None and len(message.tool_calls) == 1
    call = message.tool_calls[0]
    assert call.type == "function" and call.id.startswith("call_00_") and call.function.name == "plan_trip"
    assert json.loads(call.function.arguments) == s.TRIP_ARGS
    parsed = final.choices[0].message.tool_calls[0].function.parsed_arguments
    assert parsed == PlanTrip.model_validate(s.TRIP_ARGS)


def test_parallel_tool_calls(openai_client: openai.OpenAI, model: str) -> None:
    completion, chunks, final = all_ways(openai_client, model, "parallel", tools=[WEATHER_TOOL])
    calls = completion.choices[0].message.tool_calls or []
    assert [json.loads(c.function.arguments) for c in calls] == s.WEATHER_CALLS
    assert [c.id[:8] for c in calls] == ["call_00_", "call_01_"] and calls[0].id != calls[1].id
    assert [c.function.parsed_arguments for c in final.choices[0].message.tool_calls] == [
        GetWeather.model_validate(args) for args in s.WEATHER_CALLS
    ]
    indexes = [t.index for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or []]
    assert sorted(set(indexes)) == [0, 1]
    assert completion.choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("name", ["cjk_text", "cjk_tokens"])
def test_cjk_and_emoji_split_across_chunks(openai_client: openai.OpenAI, model: str, name: str) -> None:
    completion, chunks, _ = all_ways(openai_client, model, name)
    message = completion.choices[0].message
    assert message.content == s.CJK and _reasoning(message) == s.CJK_REASONING
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(pieces) >= 10 and "\ufffd" not in "".join(pieces)


def test_stop_sequence_split_across_chunks(
    openai_client: openai.OpenAI, recorder: Recorder, model: str
) -> None:
    completion, _, _ = all_ways(openai_client, model, "stop", stop=["END"], extra_body=NOTHINK)
    assert completion.choices[0].message.content == s.STOP_CONTENT
    assert completion.choices[0].finish_reason == "stop"
    usage = completion.usage
    assert usage is not None and usage.prompt_tokens == 40
    assert usage.prompt_tokens_details is not None and usage.prompt_tokens_details.cached_tokens == 8
    # The server stops the backend at the stop sequence instead of draining it.
    key = new_id()
    list(
        openai_client.chat.completions.create(
            model=model,
            messages=USER,
            stop=["END"],
            stream=True,
            extra_body=NOTHINK,
            extra_headers=scenario("stop", key),
        )
    )
    run = recorder.wait_closed(key)
    assert not run.exhausted and run.yielded < len(s.STOP_OUTPUT) // 2


def test_length_finish(openai_client: openai.OpenAI, model: str) -> None:
    completion, _, _ = all_ways(openai_client, model, "length", extra_body=NOTHINK)
    assert completion.choices[0].finish_reason == "length"
    assert completion.choices[0].message.content == "This answer runs out of room"


def test_max_tokens_cuts_the_output(openai_client: openai.OpenAI, recorder: Recorder, model: str) -> None:
    key = new_id()
    completion = strict(
        openai_client.chat.completions.create(
            model=model, messages=USER, max_completion_tokens=3, extra_headers=scenario("plain", key)
        )
    )
    assert recorder.wait_closed(key).max_tokens == 3
    assert completion.choices[0].finish_reason == "length"
    assert completion.usage is not None and completion.usage.completion_tokens == 3
    content = completion.choices[0].message.content or ""
    assert content and s.PLAIN.startswith(content) and content != s.PLAIN


def test_default_max_tokens_is_what_the_context_leaves(
    openai_client: openai.OpenAI, recorder: Recorder, model: str
) -> None:
    key = new_id()
    openai_client.chat.completions.create(model=model, messages=USER, extra_headers=scenario("plain", key))
    run = recorder.wait_closed(key)
    assert run.max_tokens == 4096 - run.prompt_ids  # the test server's context limit (behavior.md#sampling)


def test_context_length_exceeded_is_a_400(openai_client: openai.OpenAI, model: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.chat.completions.create(model=model, messages=USER, max_tokens=5000)
    body = caught.value.body
    assert isinstance(body, dict) and body["type"] == "invalid_request_error"
    assert "maximum context length is 4096 tokens" in body["message"]
    # The code and field the API names, which clients check to shorten the conversation.
    assert (caught.value.code, body["param"]) == ("context_length_exceeded", "messages")
    assert caught.value.response.headers.get("x-should-retry") is None


def test_context_length_exceeded_in_responses_names_the_input(
    openai_client: openai.OpenAI, model: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.responses.create(model=model, input="Hi", max_output_tokens=5000)
    assert (caught.value.code, caught.value.param) == ("context_length_exceeded", "input")


@pytest.mark.parametrize("stream", [False, True])
def test_unknown_model(openai_client: openai.OpenAI, stream: bool) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.chat.completions.create(model="gpt-4o", messages=USER, stream=stream)
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "message": "The supported API model names are DeepSeek-V4-Pro, DeepSeek-V4.1-Flash, but you passed gpt-4o.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }


def test_unknown_model_through_the_stream_helper(openai_client: openai.OpenAI) -> None:
    with (
        pytest.raises(openai.BadRequestError),
        openai_client.chat.completions.stream(model="gpt-4o", messages=USER) as stream,
    ):
        stream.get_final_completion()


def test_backend_failure_mid_stream(openai_client: openai.OpenAI, recorder: Recorder, model: str) -> None:
    key = new_id()
    received: list[ChatCompletionChunk] = []
    with pytest.raises(openai.APIError) as caught:
        for chunk in openai_client.chat.completions.create(
            model=model, messages=USER, stream=True, extra_headers=scenario("fail_mid", key)
        ):
            received.append(strict(chunk))
    assert received and caught.value.body == {
        "message": "the model server failed: scripted failure after 4 chunks",
        "type": "api_error",
        "param": None,
        "code": "api_error",
    }
    assert recorder.wait_closed(key).closed
    with (
        pytest.raises(openai.APIError),
        openai_client.chat.completions.stream(
            model=model, messages=USER, extra_headers=scenario("fail_mid")
        ) as stream,
    ):
        stream.get_final_completion()


# A stream that already started reports a failure in the stream instead (test above).
@pytest.mark.parametrize(
    ("name", "stream"), [("fail_early", False), ("fail_early", True), ("fail_mid", False)]
)
def test_backend_failure_before_output_is_a_5xx(
    openai_client: openai.OpenAI, name: str, stream: bool
) -> None:
    with pytest.raises(openai.InternalServerError) as caught:
        openai_client.chat.completions.create(
            model="DeepSeek-V4-Pro", messages=USER, stream=stream, extra_headers=scenario(name)
        )
    assert caught.value.status_code == 502
    assert isinstance(caught.value.body, dict) and caught.value.body["type"] == "api_error"


@pytest.mark.parametrize("helper", [False, True])
def test_round_trip_of_tool_calls(openai_client: openai.OpenAI, model: str, helper: bool) -> None:
    if helper:
        with openai_client.chat.completions.stream(
            model=model, messages=USER, tools=[WEATHER_TOOL], extra_headers=scenario("parallel")
        ) as stream:
            message: Any = stream.get_final_completion().choices[0].message
    else:
        message = (
            openai_client.chat.completions.create(
                model=model, messages=USER, tools=[WEATHER_TOOL], extra_headers=scenario("parallel")
            )
            .choices[0]
            .message
        )
    assert message.tool_calls and len(message.tool_calls) == 2
    history: list[Any] = [*USER, message]
    history += [
        {"role": "tool", "tool_call_id": c.id, "content": f"sunny in {c.function.name}"}
        for c in message.tool_calls
    ]
    answer = strict(
        openai_client.chat.completions.create(
            model=model, messages=history, tools=[WEATHER_TOOL], extra_headers=scenario("after_tool")
        )
    )
    assert answer.choices[0].message.content == s.AFTER_TOOL
