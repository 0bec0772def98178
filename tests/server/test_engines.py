"""The whole chain: official SDK → dscodec's server (create_app with an engine backend) → engine stand-in.

For each engine (vLLM, SGLang) and each protocol: reasoning, a tool call, a stop sequence, a length finish, and a
client disconnect that reaches the engine as a cancelled request.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from typing_extensions import Self

from dscodec.server import create_app
from dscodec.server.backends import EngineBackend, SGLangBackend, VLLMBackend
from tests.server.conftest import VOCABULARY, LiveServer, new_id, strict
from tests.server.standins import SCRIPTS, StandIn, wait_for
from tests.server.tools import GetWeather

MODEL = "DeepSeek-V4-Pro"
WEATHER = {"city": "Paris"}
REASONING = SCRIPTS["reasoning"]
TOOL = SCRIPTS["tool"]


class Chain:
    """A stand-in engine, dscodec in front of it, and both SDKs pointed at dscodec."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.engine = StandIn(kind, chunk=3)

    def __enter__(self) -> Self:
        self._engine_server = LiveServer(self.engine).__enter__()
        backend: EngineBackend = (VLLMBackend if self.kind == "vllm" else SGLangBackend)(
            self._engine_server.url
        )
        self._server = LiveServer(create_app(backend, tokenizer=VOCABULARY, context_limit=4096)).__enter__()
        self.url = self._server.url
        self.openai = openai.OpenAI(base_url=self._server.url + "/v1", api_key="k", max_retries=0, timeout=10)
        self.anthropic = anthropic.Anthropic(
            base_url=self._server.url, api_key="k", max_retries=0, timeout=10
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self.openai.close()
        self.anthropic.close()
        self._server.__exit__(*exc)
        self._engine_server.__exit__(*exc)

    def cancelled(self, key: str) -> None:
        """The engine saw the request ``key`` go away before its generation was sent in full."""
        wait_for(lambda: key in self.engine.runs and self.engine.runs[key].cancelled)
        run = self.engine.runs[key]
        assert not run.finished and run.sent < run.total


@pytest.fixture(scope="module", params=["vllm", "sglang"])
def chain(request: pytest.FixtureRequest) -> Iterator[Chain]:
    with Chain(str(request.param)) as live:
        yield live


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


CHAT_TOOL = openai.pydantic_function_tool(GetWeather, name="get_weather")
RESPONSES_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": GetWeather.model_json_schema(),
    "strict": False,
}
MESSAGES_TOOL = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "input_schema": GetWeather.model_json_schema(),
}


# -- Chat Completions ----------------------------------------------------------------------------------------------


def test_chat_reasoning(chain: Chain) -> None:
    completion = strict(
        chain.openai.chat.completions.create(model=MODEL, messages=user("[script:reasoning] 17×3?"))
    )
    message = completion.choices[0].message
    assert (message.model_extra or {}).get("reasoning_content") == REASONING.reasoning
    assert message.content == REASONING.output and completion.choices[0].finish_reason == "stop"
    # A complete response waits for the engine's last chunk, so the cached tokens are exact for both engines.
    assert completion.usage is not None and completion.usage.prompt_tokens_details is not None
    assert completion.usage.prompt_tokens_details.cached_tokens == REASONING.cached_tokens
    chunks = list(
        chain.openai.chat.completions.create(
            model=MODEL,
            messages=user("[script:reasoning] 17×3?"),
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    thought = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content") or "" for c in chunks if c.choices
    )
    assert (thought, text) == (REASONING.reasoning, REASONING.output)
    usage = chunks[-1].usage
    assert usage is not None and usage.prompt_tokens == completion.usage.prompt_tokens
    # vLLM reports cached tokens only after the finish: a stream has already reported its usage by then.
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == (
        0 if chain.kind == "vllm" else REASONING.cached_tokens
    )


def test_chat_tool_call(chain: Chain) -> None:
    kwargs: dict[str, Any] = {
        "model": MODEL,
        "messages": user("[script:tool] Weather?"),
        "tools": [CHAT_TOOL],
    }
    with chain.openai.chat.completions.stream(**kwargs) as stream:
        for _ in stream:
            pass
        streamed = stream.get_final_completion()
    for completion in (chain.openai.chat.completions.create(**kwargs), streamed):
        choice = completion.choices[0]
        assert choice.finish_reason == "tool_calls" and choice.message.content == "Let me check."
        call = (choice.message.tool_calls or [])[0]
        assert call.function.name == "get_weather" and json.loads(call.function.arguments) == WEATHER


def test_chat_stop_sequence(chain: Chain) -> None:
    key = new_id()
    chunks = list(
        chain.openai.chat.completions.create(
            model=MODEL, messages=user(f"[script:stop][id:{key}] Count"), stop=["END"], stream=True
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "one two "
    assert chunks[-1].choices[0].finish_reason == "stop"
    chain.cancelled(key)  # dscodec found the stop sequence and closed the engine request


def test_chat_length(chain: Chain) -> None:
    completion = chain.openai.chat.completions.create(
        model=MODEL,
        messages=user("[script:long] Go"),
        max_tokens=6,
        extra_body={"thinking": {"type": "disabled"}},
    )
    assert completion.choices[0].finish_reason == "length" and completion.usage is not None
    assert (
        completion.usage.completion_tokens == 6
        and completion.choices[0].message.content == ("word " * 6).strip()
    )


def test_chat_disconnect(chain: Chain) -> None:
    key = new_id()
    with chain.openai.chat.completions.create(
        model=MODEL, messages=user(f"[script:slow][id:{key}] Go"), stream=True
    ) as stream:
        next(iter(stream))
    chain.cancelled(key)


def test_chat_required_tool_call_is_constrained(chain: Chain) -> None:
    key = new_id()
    completion = chain.openai.chat.completions.create(
        model=MODEL,
        messages=user(f"[script:required][id:{key}] Weather?"),
        tools=[CHAT_TOOL],
        tool_choice="required",
        extra_body={"thinking": {"type": "disabled"}},
    )
    call = (completion.choices[0].message.tool_calls or [])[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == WEATHER
    payload = chain.engine.runs[key].payload
    grammar = (
        payload["structured_outputs"]["grammar"]
        if chain.kind == "vllm"
        else payload["sampling_params"]["ebnf"]
    )
    assert grammar.startswith('root ::= call+ "</｜DSML｜tool_calls>"')


# -- Responses -----------------------------------------------------------------------------------------------------


def test_responses_reasoning(chain: Chain) -> None:
    response = strict(chain.openai.responses.create(model=MODEL, input="[script:reasoning] 17×3?"))
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message"] and response.output_text == REASONING.output
    reasoning = response.output[0]
    assert reasoning.type == "reasoning"
    assert "".join(part.text for part in reasoning.content or []) == REASONING.reasoning
    with chain.openai.responses.stream(model=MODEL, input="[script:reasoning] 17×3?") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text == REASONING.output


def test_responses_tool_call(chain: Chain) -> None:
    response = chain.openai.responses.create(
        model=MODEL, input="[script:tool] Weather?", tools=[RESPONSES_TOOL]
    )  # type: ignore[list-item]
    calls = [item for item in response.output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "get_weather" and json.loads(calls[0].arguments) == WEATHER


def test_responses_length(chain: Chain) -> None:
    response = chain.openai.responses.create(
        model=MODEL,
        input="[script:long] Go",
        max_output_tokens=6,
        extra_body={"thinking": {"type": "disabled"}},
    )
    assert response.status == "incomplete" and response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"


def test_responses_disconnect(chain: Chain) -> None:
    key = new_id()
    with chain.openai.responses.create(
        model=MODEL, input=f"[script:slow][id:{key}] Go", stream=True
    ) as stream:
        for event in stream:
            if event.type == "response.output_text.delta" or event.type == "response.reasoning_text.delta":
                break
    chain.cancelled(key)


# -- Messages ------------------------------------------------------------------------------------------------------


def test_messages_reasoning(chain: Chain) -> None:
    message = strict(
        chain.anthropic.messages.create(
            model=MODEL, max_tokens=200, messages=user("[script:reasoning] 17×3?")
        )  # type: ignore[arg-type]
    )
    assert [block.type for block in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == REASONING.reasoning  # type: ignore[union-attr]
    assert message.content[1].text == REASONING.output  # type: ignore[union-attr]
    assert message.usage.cache_read_input_tokens == REASONING.cached_tokens
    with chain.anthropic.messages.stream(
        model=MODEL,
        max_tokens=200,
        messages=user("[script:reasoning] 17×3?"),  # type: ignore[arg-type]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == REASONING.output and final.stop_reason == "end_turn"


def test_messages_tool_call(chain: Chain) -> None:
    message = chain.anthropic.messages.create(
        model=MODEL,
        max_tokens=200,
        messages=user("[script:tool] Weather?"),
        tools=[MESSAGES_TOOL],  # type: ignore[arg-type,list-item]
    )
    uses = [block for block in message.content if block.type == "tool_use"]
    assert message.stop_reason == "tool_use" and len(uses) == 1
    assert uses[0].name == "get_weather" and uses[0].input == WEATHER


def test_messages_stop_sequence(chain: Chain) -> None:
    key = new_id()
    with chain.anthropic.messages.stream(
        model=MODEL,
        max_tokens=500,
        messages=user(f"[script:stop][id:{key}] Count"),
        stop_sequences=["END"],  # type: ignore[arg-type]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "one two " and final.stop_reason == "stop_sequence" and final.stop_sequence == "END"
    chain.cancelled(key)


def test_messages_length(chain: Chain) -> None:
    message = chain.anthropic.messages.create(
        model=MODEL,
        max_tokens=6,
        messages=user("[script:long] Go"),
        thinking={"type": "disabled"},  # type: ignore[arg-type]
    )
    assert message.stop_reason == "max_tokens" and message.usage.output_tokens == 6


def test_messages_disconnect(chain: Chain) -> None:
    key = new_id()
    with chain.anthropic.messages.stream(
        model=MODEL,
        max_tokens=2000,
        messages=user(f"[script:slow][id:{key}] Go"),  # type: ignore[arg-type]
    ) as stream:
        for event in stream:
            if event.type == "content_block_delta":
                break
    chain.cancelled(key)


def test_an_engine_refusal_reaches_the_client_in_its_shape(chain: Chain) -> None:
    with pytest.raises(openai.BadRequestError) as chat_error:
        chain.openai.chat.completions.create(model=MODEL, messages=user("[script:reject] Hi"))
    assert "maximum context length" in chat_error.value.message
    with pytest.raises(anthropic.BadRequestError) as messages_error:
        chain.anthropic.messages.create(model=MODEL, max_tokens=10, messages=user("[script:reject] Hi"))  # type: ignore[arg-type]
    assert messages_error.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]


def test_an_engine_retry_after_reaches_the_client(chain: Chain) -> None:
    with pytest.raises(openai.RateLimitError) as busy:
        chain.openai.chat.completions.create(model=MODEL, messages=user("[script:busy] Hi"))
    assert busy.value.status_code == 429 and busy.value.response.headers["retry-after"] == "1"
    # An HTTP date already past is "retry now".
    with pytest.raises(anthropic.APIStatusError) as unavailable:
        chain.anthropic.messages.create(model=MODEL, max_tokens=10, messages=user("[script:unavailable] Hi"))  # type: ignore[arg-type]
    assert unavailable.value.status_code == 503 and unavailable.value.response.headers["retry-after"] == "0"


def test_the_sdks_retry_after_the_engines_wait(chain: Chain) -> None:
    calls = len(chain.engine.payloads)
    started = time.monotonic()
    with (
        openai.OpenAI(base_url=chain.url + "/v1", api_key="k", max_retries=1, timeout=10) as client,
        pytest.raises(openai.RateLimitError),
    ):
        client.chat.completions.create(model=MODEL, messages=user("[script:busy] Hi"))
    # One retry, after the second the engine asked for (the SDK's own first wait is at most half a second).
    assert len(chain.engine.payloads) - calls == 2 and time.monotonic() - started >= 1.0
