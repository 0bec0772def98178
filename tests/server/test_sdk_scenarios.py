"""The official SDKs read random exchanges: hypothesis scenarios (a request body, a model output with well-formed or
malformed markup, the backend's chunking, a finish reason) served by the example server on 127.0.0.1.

Each SDK's stream helper must read the stream to its end without an error, and what it accumulates must be what
the same request answers unstreamed: the text, the reasoning, every tool call's name and arguments, and how the
response ended. A response cut by its length limit is read as each helper reads one (the Chat helper raises
``LengthFinishReasonError`` holding the completion; the Responses helper has no final response, the stream ends
with ``response.incomplete``).

Token ids come with log probabilities when the request asks for them (Chat Completions and Responses), and
each helper must gather the same ones as the plain call. The raw answers, streamed or not, also lint clean
(``dscodec.testing.lint``). The example count comes from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from dscodec._json import loads
from dscodec.server import BackendOutput, BackendRequest, PromptUsage, TextChunk, TokenChunk, create_app
from dscodec.server import Finish as BackendFinish
from dscodec.testing import Finish, Text, Tokens, Usage, lint
from dscodec.testing.strategies import Scenario, scenarios
from tests.server.conftest import VOCABULARY, LiveServer


class _Replay:
    """A backend that sends the backend items of the scenario under test; token ids with made-up log
    probabilities (one alternative each) when the request asks for them."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        logprobs = job.request.inference_options.logprobs
        for item in self.items:
            if isinstance(item, Usage):
                yield PromptUsage(item.prompt_tokens, item.cached_tokens, item.system_fingerprint)
            elif isinstance(item, Text):
                yield TextChunk(item.text, item.token_count)
            elif isinstance(item, Tokens):
                entries = [(-0.25, [(i, -0.25), (i + 1, -2.5)]) for i in item.ids] if logprobs else None
                yield TokenChunk(list(item.ids), entries)
            elif isinstance(item, Finish):
                yield BackendFinish(item.reason)


REPLAY = _Replay()


@pytest.fixture(scope="module")
def http() -> Iterator[TestClient]:
    with TestClient(create_app(REPLAY, tokenizer=VOCABULARY, context_limit=1 << 20)) as client:
        yield client


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    # The SDKs talk to a real server: some of their versions take no client of the ``httpx`` package.
    with LiveServer(create_app(REPLAY, tokenizer=VOCABULARY, context_limit=1 << 20)) as server:
        yield server


@pytest.fixture(scope="module")
def openai_sdk(live: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=live.url + "/v1", api_key="k", max_retries=0, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def anthropic_sdk(live: LiveServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=live.url, api_key="k", max_retries=0, timeout=30) as client:
        yield client


def _serve(
    scenario: Scenario, typed: tuple[str, ...], logprobs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario's backend items installed; the body's typed arguments, and the rest (sent as ``extra_body``),
    with the fields ``logprobs`` asking for log probabilities."""
    REPLAY.items = scenario.backend
    body = {k: v for k, v in scenario.body.items() if k not in ("stream", "stream_options")} | logprobs
    return {k: v for k, v in body.items() if k in typed}, {k: v for k, v in body.items() if k not in typed}


def _chat_view(completion: Any) -> dict[str, Any]:
    choice = completion.choices[0]
    message = choice.message
    return {
        "content": message.content or "",
        "reasoning": (message.model_extra or {}).get("reasoning_content") or "",
        "calls": [(c.function.name, c.function.arguments) for c in message.tool_calls or []],
        "finish": choice.finish_reason,
        "logprobs": choice.logprobs
        and [(t.token, t.logprob, t.bytes, len(t.top_logprobs)) for t in choice.logprobs.content or []],
    }


def _responses_view(response: Any) -> dict[str, Any]:
    items = []
    for item in response.output:
        if item.type == "message":
            texts = [part for part in item.content if part.type == "output_text"]
            logprobs = [
                (t.token, t.logprob, len(t.top_logprobs or [])) for part in texts for t in part.logprobs or []
            ]
            items.append(("message", "".join(part.text for part in texts), logprobs))
        elif item.type == "reasoning":
            items.append(("reasoning", "".join(part.text for part in item.content or [])))
        elif item.type == "function_call":
            items.append(("function_call", item.name, item.arguments))
        else:
            items.append((item.type, item.model_dump(exclude={"id", "call_id"})))
    return {"output": items, "status": response.status}


def _messages_view(message: Any) -> dict[str, Any]:
    blocks = [block.model_dump(exclude={"id", "signature"}) for block in message.content]
    return {"content": blocks, "stop_reason": message.stop_reason, "stop_sequence": message.stop_sequence}


_SETTINGS = settings(
    max_examples=max(10, settings.default.max_examples // 2),
    deadline=None,  # a first request warms the app up
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@_SETTINGS
@given(scenario=scenarios("chat_completions", malformed=True), logprobs=st.booleans())
def test_chat_stream_helper_reads_what_the_plain_call_answers(
    openai_sdk: openai.OpenAI, scenario: Scenario, logprobs: bool
) -> None:
    typed, extra = _serve(
        scenario, ("model", "messages"), {"logprobs": True, "top_logprobs": 2} if logprobs else {}
    )
    plain = openai_sdk.chat.completions.create(**typed, extra_body=extra)
    length = plain.choices[0].finish_reason == "length"
    try:
        with openai_sdk.chat.completions.stream(**typed, extra_body=extra) as stream:
            for _ in stream:
                pass
            streamed = stream.get_final_completion()
        assert not length, "the helper reads a completion cut by its length limit as an error"
    except openai.LengthFinishReasonError as exc:
        assert length
        streamed = exc.completion
    assert _chat_view(streamed) == _chat_view(plain)
    assert streamed.usage == plain.usage


@_SETTINGS
@given(scenario=scenarios("responses", malformed=True), logprobs=st.booleans())
def test_responses_stream_helper_reads_what_the_plain_call_answers(
    openai_sdk: openai.OpenAI, scenario: Scenario, logprobs: bool
) -> None:
    typed, extra = _serve(scenario, ("model", "input"), {"top_logprobs": 2} if logprobs else {})
    plain = openai_sdk.responses.create(**typed, extra_body=extra)
    length = plain.status == "incomplete"
    last = None
    with openai_sdk.responses.stream(**typed, extra_body=extra) as stream:
        for event in stream:
            last = event
        assert last is not None
        if length:
            assert last.type == "response.incomplete"
            streamed = last.response
        else:
            assert last.type == "response.completed"
            streamed = stream.get_final_response()
    assert _responses_view(streamed) == _responses_view(plain)
    assert streamed.usage == plain.usage


@_SETTINGS
@given(scenario=scenarios("messages", malformed=True))
def test_messages_stream_helper_reads_what_the_plain_call_answers(
    anthropic_sdk: anthropic.Anthropic, scenario: Scenario
) -> None:
    typed, extra = _serve(scenario, ("model", "messages", "max_tokens"), {})
    partial_json: dict[int, str] = {}
    with anthropic_sdk.messages.stream(**typed, extra_body=extra) as stream:
        for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                partial_json[event.index] = partial_json.get(event.index, "") + event.delta.partial_json
        streamed = stream.get_final_message()
    plain = anthropic_sdk.messages.create(**typed, extra_body=extra)
    mine, theirs = _messages_view(streamed), _messages_view(plain)
    for index, block in enumerate(plain.content):
        if block.type != "tool_use":
            continue
        # The helper reads a call the output cut short with a partial JSON parser; a complete message holds
        # ``{}`` for arguments that are no JSON object (behavior.md#messages), as dscodec's reader reads them.
        try:
            arguments = loads(partial_json.get(index, ""))
        except ValueError:
            arguments = None
        assert block.input == (arguments if isinstance(arguments, dict) else {})
        mine["content"][index]["input"] = theirs["content"][index]["input"]
    assert mine == theirs
    assert streamed.usage.output_tokens == plain.usage.output_tokens


_PATHS = {
    "chat_completions": "/v1/chat/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
}


@_SETTINGS
@given(scenario=scenarios(malformed=True), stream=st.booleans(), logprobs=st.booleans())
def test_answers_lint_clean(http: TestClient, scenario: Scenario, stream: bool, logprobs: bool) -> None:
    """The raw answers the SDKs read above, streamed or not, against the linter's grammar of their protocol."""
    asks = {
        "chat_completions": {"logprobs": True, "top_logprobs": 2},
        "responses": {"top_logprobs": 2},
        "messages": {},
    }[scenario.protocol]
    REPLAY.items = scenario.backend
    body = {**scenario.body, "stream": stream} | (asks if logprobs else {})
    if not stream:
        body.pop("stream_options", None)
    answer = http.post(_PATHS[scenario.protocol], json=body)
    assert answer.status_code == 200, answer.text
    findings = lint(scenario.protocol, answer.text, request=body)  # type: ignore[arg-type]
    if scenario.output.calls is None:
        # Broken markup (docs/testing.md): text outside a well-formed block is answer text, markup-like or not
        # (GEN003), and a call the output cut short has arguments that are no JSON yet (GEN005).
        findings = [finding for finding in findings if finding.code not in ("GEN003", "GEN005")]
    assert findings == [], [str(finding) for finding in findings]
