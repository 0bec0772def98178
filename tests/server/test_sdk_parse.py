"""The SDKs' helpers against the example server: the structured-output ones (a pydantic model in, a parsed
answer out, or parsed tool arguments for a strict function tool) and the openai SDK's Responses tool runner.

``chat.completions.parse`` / ``.stream`` send the model's schema as a strict ``response_format``,
``responses.parse`` / ``.stream`` as ``text.format``, and the anthropic SDK's ``messages.parse`` as
``output_config.format``; each then reads the answer's text back into the model. dscodec runs the OpenAI ones
in JSON mode; Messages has no structured output (behavior.md#messages), so the format is read past by default
and refused under ``unsupported="reject"`` (tests/server/test_unsupported.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anthropic
import openai
import pytest
from openai.lib._pydantic import to_strict_json_schema
from openai.lib.responses_tool_runner import RegisteredFunction, ResponsesToolRunner

from dscodec.server import SCENARIO_HEADER, BackendOutput, BackendRequest, ScriptedBackend, create_app
from tests.server import scripts as s
from tests.server.conftest import VOCABULARY, LiveServer, scenario
from tests.server.tools import Forecast, GetWeather

USER = [{"role": "user", "content": "The forecast for Zürich, please."}]
EXPECTED = Forecast.model_validate(s.STRUCTURED)
STRUCTURED_SCRIPTS = ["structured", "structured_tokens"]


@pytest.mark.parametrize("name", STRUCTURED_SCRIPTS)
def test_chat_parse(openai_client: openai.OpenAI, model: str, name: str) -> None:
    completion = openai_client.chat.completions.parse(
        model=model, messages=USER, response_format=Forecast, extra_headers=scenario(name)
    )
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "stop"
    assert message.parsed == EXPECTED
    assert json.loads(message.content or "") == s.STRUCTURED


@pytest.mark.parametrize("name", STRUCTURED_SCRIPTS)
def test_chat_stream_helper_parses_as_it_goes(openai_client: openai.OpenAI, model: str, name: str) -> None:
    deltas: list[str] = []
    done: list[Forecast | None] = []
    with openai_client.chat.completions.stream(
        model=model, messages=USER, response_format=Forecast, extra_headers=scenario(name)
    ) as stream:
        for event in stream:
            if event.type == "content.delta":
                deltas.append(event.delta)
            elif event.type == "content.done":
                done.append(event.parsed)
        final = stream.get_final_completion()
    assert len(deltas) > 1, "the answer arrives in pieces"
    assert json.loads("".join(deltas)) == s.STRUCTURED
    assert done == [EXPECTED]
    assert final.choices[0].message.parsed == EXPECTED


@pytest.mark.parametrize("name", STRUCTURED_SCRIPTS)
def test_responses_parse(openai_client: openai.OpenAI, model: str, name: str) -> None:
    response = openai_client.responses.parse(
        model=model, input=USER, text_format=Forecast, extra_headers=scenario(name)
    )
    assert response.status == "completed"
    assert response.output_parsed == EXPECTED
    assert json.loads(response.output_text) == s.STRUCTURED


@pytest.mark.parametrize("name", STRUCTURED_SCRIPTS)
def test_responses_stream_helper(openai_client: openai.OpenAI, model: str, name: str) -> None:
    deltas: list[str] = []
    with openai_client.responses.stream(
        model=model, input=USER, text_format=Forecast, extra_headers=scenario(name)
    ) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = stream.get_final_response()
    assert json.loads("".join(deltas)) == s.STRUCTURED
    assert final.output_parsed == EXPECTED


@pytest.mark.parametrize("name", STRUCTURED_SCRIPTS)
def test_messages_parse_reads_the_json_answer(
    anthropic_client: anthropic.Anthropic, model: str, name: str
) -> None:
    message = anthropic_client.messages.parse(
        model=model, max_tokens=512, messages=USER, output_format=Forecast, extra_headers=scenario(name)
    )
    assert message.stop_reason == "end_turn"
    assert message.parsed_output == EXPECTED


# -- strict function tools: the arguments parsed into the tool's model ------------------------------------------

#: ``pydantic_function_tool`` names the tool after the script's calls, so the SDK pairs each call with its model.
WEATHER_TOOL = openai.pydantic_function_tool(GetWeather, name="get_weather")
WEATHER = [GetWeather.model_validate(arguments) for arguments in s.WEATHER_CALLS]


def test_chat_parse_reads_tool_arguments_into_the_model(openai_client: openai.OpenAI, model: str) -> None:
    completion = openai_client.chat.completions.parse(
        model=model, messages=USER, tools=[WEATHER_TOOL], extra_headers=scenario("parallel")
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert [call.function.parsed_arguments for call in choice.message.tool_calls or []] == WEATHER


def test_chat_stream_helper_parses_tool_arguments(openai_client: openai.OpenAI, model: str) -> None:
    done: list[object] = []
    deltas: dict[int, list[str]] = {}
    with openai_client.chat.completions.stream(
        model=model, messages=USER, tools=[WEATHER_TOOL], extra_headers=scenario("parallel")
    ) as stream:
        for event in stream:
            if event.type == "tool_calls.function.arguments.delta":
                deltas.setdefault(event.index, []).append(event.arguments_delta)
            elif event.type == "tool_calls.function.arguments.done":
                done.append(event.parsed_arguments)
        final = stream.get_final_completion()
    assert done == WEATHER
    assert [json.loads("".join(deltas[i])) for i in sorted(deltas)] == s.WEATHER_CALLS
    assert [call.function.parsed_arguments for call in final.choices[0].message.tool_calls or []] == WEATHER


def test_responses_parse_reads_strict_tool_arguments(openai_client: openai.OpenAI, model: str) -> None:
    tool = {
        "type": "function",
        "name": "get_weather",
        "parameters": to_strict_json_schema(GetWeather),
        "strict": True,
    }
    response = openai_client.responses.parse(
        model=model,
        input=USER,
        tools=[tool],  # type: ignore[list-item]
        extra_headers=scenario("parallel"),
    )
    calls = [item for item in response.output if item.type == "function_call"]
    assert [call.parsed_arguments for call in calls] == s.WEATHER_CALLS  # type: ignore[union-attr]


# -- the openai SDK's Responses tool runner ------------------------------------------------------------------


@dataclass
class _ToolThenAnswer:
    """The scripted backend, calling the weather tool first and answering once the results are in."""

    inner: ScriptedBackend
    prompts: list[int] = field(default_factory=list)

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        answered = job.request.conversation.messages[-1].role == "tool"
        self.prompts.append(len(job.token_ids))
        headers = {**job.headers, SCENARIO_HEADER: "after_tool" if answered else "parallel"}
        async for item in self.inner(dataclasses.replace(job, headers=headers)):
            yield item


@pytest.mark.parametrize("stream", [False, True])
def test_the_responses_tool_runner_runs_to_the_answer(stream: bool) -> None:
    backend = _ToolThenAnswer(ScriptedBackend(s.SCRIPTS, tokenizer=VOCABULARY))
    calls: list[Any] = []

    def weather(arguments: Any) -> str:
        calls.append(arguments)
        return "sunny"

    tool = {
        "type": "function",
        "name": "get_weather",
        "parameters": to_strict_json_schema(GetWeather),
        "strict": True,
    }
    runner = ResponsesToolRunner(functions=[RegisteredFunction(tool, weather)])  # type: ignore[arg-type]
    with (
        LiveServer(create_app(backend, tokenizer=VOCABULARY)) as live,
        openai.OpenAI(base_url=live.url + "/v1", api_key="k", max_retries=0, timeout=10) as client,
    ):
        response = runner.run(
            client, {"model": "DeepSeek-V4-Pro", "input": "Weather in Paris and Tokyo?"}, stream=stream
        )
    assert response.status == "completed"
    assert response.output_text == s.AFTER_TOOL
    assert [dict(call) for call in calls] == s.WEATHER_CALLS
    assert len(backend.prompts) == 2 and backend.prompts[0] < backend.prompts[1]


def test_the_anthropic_sdk_picks_its_error_class_for_a_body_of_a_bad_coding(
    anthropic_client: anthropic.Anthropic, model: str
) -> None:
    """A body that is not what its Content-Encoding says is refused with Anthropic's error code for it, by which
    the SDK raises its own class for the case."""
    with pytest.raises(anthropic.APIStatusError) as info:
        anthropic_client.messages.create(
            model=model,
            max_tokens=16,
            messages=[{"role": "user", "content": "Hi"}],
            extra_headers={"content-encoding": "gzip"},  # the SDK sends plain JSON
        )
    assert info.value.status_code == 400
    assert info.value.body["error"]["details"] == {"error_code": "request_body_encoding_invalid"}  # type: ignore[index]
    specific = getattr(anthropic.types.shared, "RequestBodyEncodingInvalidError", None)  # (anthropic 2.17 on)
    if specific is not None:
        assert isinstance(info.value, specific)
