"""The SDKs' structured-output helpers against the example server: a pydantic model in, a parsed answer out.

``chat.completions.parse`` / ``.stream`` send the model's schema as a strict ``response_format``,
``responses.parse`` / ``.stream`` as ``text.format``, and the anthropic SDK's ``messages.parse`` as
``output_config.format``; each then reads the answer's text back into the model. dscodec runs the OpenAI ones
in JSON mode; Messages has no structured output (behavior.md#messages), so the format is read past by default
and refused under ``unsupported="reject"`` (tests/server/test_unsupported.py).
"""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from tests.server import scripts as s
from tests.server.conftest import scenario
from tests.server.tools import Forecast

USER = [{"role": "user", "content": "The forecast for Zürich, please."}]
EXPECTED = Forecast.model_validate(s.STRUCTURED)
SCRIPTS = ["structured", "structured_tokens"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_chat_parse(openai_client: openai.OpenAI, model: str, name: str) -> None:
    completion = openai_client.chat.completions.parse(
        model=model, messages=USER, response_format=Forecast, extra_headers=scenario(name)
    )
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "stop"
    assert message.parsed == EXPECTED
    assert json.loads(message.content or "") == s.STRUCTURED


@pytest.mark.parametrize("name", SCRIPTS)
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


@pytest.mark.parametrize("name", SCRIPTS)
def test_responses_parse(openai_client: openai.OpenAI, model: str, name: str) -> None:
    response = openai_client.responses.parse(
        model=model, input=USER, text_format=Forecast, extra_headers=scenario(name)
    )
    assert response.status == "completed"
    assert response.output_parsed == EXPECTED
    assert json.loads(response.output_text) == s.STRUCTURED


@pytest.mark.parametrize("name", SCRIPTS)
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


@pytest.mark.parametrize("name", SCRIPTS)
def test_messages_parse_reads_the_json_answer(
    anthropic_client: anthropic.Anthropic, model: str, name: str
) -> None:
    message = anthropic_client.messages.parse(
        model=model, max_tokens=512, messages=USER, output_format=Forecast, extra_headers=scenario(name)
    )
    assert message.stop_reason == "end_turn"
    assert message.parsed_output == EXPECTED
