"""The server's choice for fields dscodec cannot honour, seen from the official SDKs."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest

import dscodec
from dscodec.cli import _parser
from dscodec.server import ScriptedBackend, create_app
from tests.server.conftest import VOCABULARY, LiveServer
from tests.server.scripts import SCRIPTS
from tests.server.tools import Forecast

MODEL = "DeepSeek-V4-Pro"
REJECT = dscodec.ConversionOptions(unsupported="reject")


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    options = dscodec.ConversionOptions(unsupported="reject")
    app = create_app(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY), tokenizer=VOCABULARY, options=options)
    with LiveServer(app) as server:
        yield server


def test_chat_penalty_is_a_400_naming_it(live: LiveServer) -> None:
    with openai.OpenAI(base_url=live.url + "/v1", api_key="k", max_retries=0, timeout=10) as client:
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "Hi"}], frequency_penalty=1.0
            )
        assert info.value.param == "frequency_penalty"
        # A neutral value asks for nothing and is served.
        chat = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Hi"}], frequency_penalty=0
        )
        assert chat.choices[0].message.content


def test_responses_background_is_a_400(live: LiveServer) -> None:
    with (
        openai.OpenAI(base_url=live.url + "/v1", api_key="k", max_retries=0, timeout=10) as client,
        pytest.raises(openai.BadRequestError, match="background"),
    ):
        client.responses.create(model=MODEL, input="Hi", background=True)


def test_messages_top_k_is_a_400_in_anthropic_shape(live: LiveServer) -> None:
    with anthropic.Anthropic(base_url=live.url, api_key="k", max_retries=0, timeout=10) as client:
        with pytest.raises(anthropic.BadRequestError) as info:
            client.messages.create(
                model=MODEL,
                max_tokens=32,
                messages=[{"role": "user", "content": "Hi"}],
                extra_body={"top_k": 5},
            )
        assert info.value.body["type"] == "error"  # type: ignore[index]
        assert "top_k" in info.value.body["error"]["message"]  # type: ignore[index]


def test_messages_parse_format_is_a_400(live: LiveServer) -> None:
    """The anthropic SDK's ``messages.parse`` sends its model's schema as ``output_config.format``."""
    with anthropic.Anthropic(base_url=live.url, api_key="k", max_retries=0, timeout=10) as client:
        with pytest.raises(anthropic.BadRequestError) as info:
            client.messages.parse(
                model=MODEL,
                max_tokens=32,
                messages=[{"role": "user", "content": "Hi"}],
                output_format=Forecast,
            )
        assert "'output_config.format'" in info.value.body["error"]["message"]  # type: ignore[index]
        # The effort alone is honoured.
        message = client.messages.create(
            model=MODEL,
            max_tokens=32,
            messages=[{"role": "user", "content": "Hi"}],
            extra_body={"output_config": {"effort": "high"}},
        )
        assert message.content


def test_the_server_holds_threads_under_reject(live: LiveServer) -> None:
    """The codec alone refuses ``thread`` under "reject"; the server honours it, and takes it out first."""
    body = {"model": MODEL, "max_tokens": 32, "messages": [{"role": "user", "content": "Hi"}]}
    with pytest.raises(dscodec.ConversionError, match="'thread'"):
        dscodec.convert("messages", {**body, "thread": {"type": "create"}}, REJECT)
    first = httpx.post(live.url + "/v1/messages", json={**body, "thread": {"type": "create"}}, timeout=10)
    assert first.status_code == 200, first.text
    follow_up = {**body, "thread": {"type": "continue", "previous_message_id": first.json()["id"]}}
    assert httpx.post(live.url + "/v1/messages", json=follow_up, timeout=10).status_code == 200


def test_serve_exposes_the_choice() -> None:
    args = _parser().parse_args(["serve", "--script", "s.json", "--unsupported", "reject"])
    assert args.unsupported == "reject"
    assert _parser().parse_args(["serve", "--script", "s.json"]).unsupported == "ignore"
    with pytest.raises(SystemExit):
        _parser().parse_args(["serve", "--script", "s.json", "--unsupported", "warn"])
