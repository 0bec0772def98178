"""``create_app(api_keys=...)`` and ``dscodec serve --api-key``: every /v1/ request needs one of the keys, sent the
way each official SDK sends it; anything else is a 401 the SDK raises as its AuthenticationError."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from dscodec.server import ScriptedBackend, create_app
from tests.server.conftest import VOCABULARY, LiveServer
from tests.server.scripts import SCRIPTS
from tests.server.test_serve import start

KEYS = ["sk-first", "sk-second"]
SCRIPT_FILE = Path(__file__).resolve().parents[2] / "examples" / "scripts.json"
CHAT = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}


@pytest.fixture(scope="module")
def guarded() -> Iterator[str]:
    app = create_app(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY), tokenizer=VOCABULARY, api_keys=KEYS)
    with LiveServer(app) as live:
        yield live.url


def test_the_sdks_with_a_key_are_served(guarded: str) -> None:
    for key in KEYS:
        with openai.OpenAI(base_url=guarded + "/v1", api_key=key, max_retries=0) as client:
            answer = client.chat.completions.create(**CHAT)  # type: ignore[call-overload]
            assert answer.choices[0].message.content
            assert [model.id for model in client.models.list()]
        with anthropic.Anthropic(base_url=guarded, api_key=key, max_retries=0) as claude:
            message = claude.messages.create(max_tokens=64, **CHAT)  # type: ignore[call-overload]
            assert message.content


def test_a_wrong_key_is_the_sdks_authentication_error(guarded: str) -> None:
    with openai.OpenAI(base_url=guarded + "/v1", api_key="sk-wrong", max_retries=0) as client:
        with pytest.raises(openai.AuthenticationError) as raised:
            client.chat.completions.create(**CHAT)  # type: ignore[call-overload]
        assert raised.value.status_code == 401 and "Incorrect API key" in raised.value.message
        assert raised.value.code == "invalid_api_key"  # OpenAI's code for the case (the type stays)
        assert raised.value.type == "invalid_request_error"
        with pytest.raises(openai.AuthenticationError):
            client.responses.create(model="DeepSeek-V4-Pro", input="Hi")
        with pytest.raises(openai.AuthenticationError):
            client.models.list()
    with anthropic.Anthropic(base_url=guarded, api_key="sk-wrong", max_retries=0) as claude:
        with pytest.raises(anthropic.AuthenticationError) as denied:
            claude.messages.create(max_tokens=64, **CHAT)  # type: ignore[call-overload]
        assert denied.value.status_code == 401
        assert (
            denied.value.body
            == {  # type: ignore[comparison-overlap]
                "type": "error",
                "error": {"type": "authentication_error", "message": "Incorrect API key provided."},
                "request_id": denied.value.request_id,  # the id of the request-id header, as Anthropic's API answers
            }
        )
        assert str(denied.value.request_id).startswith("req_")


@pytest.mark.parametrize(
    ("headers", "answer"),
    [
        ({}, "No API key"),
        ({"authorization": "Basic sk-first"}, "No API key"),
        ({"authorization": "Bearer sk-first-and-more"}, "Incorrect API key"),
        ({"authorization": "Bearer sk-firs"}, "Incorrect API key"),
        ({"authorization": "bearer  sk-first"}, None),
        ({"x-api-key": "sk-second"}, None),
        ({"x-api-key": "nope", "authorization": "Bearer sk-second"}, None),
    ],
)
def test_the_key_headers(guarded: str, headers: dict[str, str], answer: str | None) -> None:
    response = httpx.post(guarded + "/v1/chat/completions", json=CHAT, headers=headers, timeout=10)
    if answer is None:
        assert response.status_code == 200
        return
    assert response.status_code == 401
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and answer in error["message"]


def test_health_stays_open_and_other_paths_are_guarded(guarded: str) -> None:
    assert httpx.get(guarded + "/health", timeout=10).status_code == 200
    # An unknown /v1/ path is refused for the key first: nothing about the server is told without one.
    answer = httpx.get(guarded + "/v1/nothing-here", timeout=10)
    assert answer.status_code == 401 and "error" in answer.json()
    counted = httpx.post(guarded + "/v1/messages/count_tokens", json=CHAT, timeout=10)
    assert counted.status_code == 401 and counted.json()["error"]["type"] == "authentication_error"


@pytest.mark.parametrize(
    "path", ["/openapi.json", "/docs", "/redoc", "/docs/oauth2-redirect", "/", "/nothing"]
)
def test_the_schema_and_doc_pages_need_a_key_too(guarded: str, path: str) -> None:
    """FastAPI's own pages list every route of the server: with keys they are guarded like the API (a 401 in
    OpenAI's shape), and a key holder still reads them."""
    answer = httpx.get(guarded + path, timeout=10)
    assert answer.status_code == 401, path
    assert "No API key" in answer.json()["error"]["message"]
    assert answer.headers["x-request-id"].startswith("req_")
    wrong = httpx.get(guarded + path, headers={"authorization": "Bearer sk-wrong"}, timeout=10)
    assert wrong.status_code == 401 and "Incorrect API key" in wrong.json()["error"]["message"]
    allowed = httpx.get(guarded + path, headers={"x-api-key": KEYS[0]}, timeout=10)
    assert allowed.status_code == (404 if path in ("/", "/nothing") else 200)
    assert httpx.head(guarded + "/health", timeout=10).status_code == 200


def test_the_body_is_not_read_without_a_key(guarded: str) -> None:
    """A 401 comes before the body: a client without a key cannot make the server read a large one."""
    big = b'{"model": "DeepSeek-V4-Pro", "messages": [' + b" " * (40 * 2**20) + b"]}"
    answer = httpx.post(guarded + "/v1/chat/completions", content=big, timeout=30)
    assert answer.status_code == 401


@pytest.mark.parametrize(
    ("keys", "error", "says"),
    [
        ("sk-one", TypeError, "not one key"),
        ([], ValueError, "at least one key"),
        ([5], TypeError, "must be a str"),
        (
            ["sk-a", "has space"],
            ValueError,
            r"API key 2 must be printable ASCII text without spaces \(the key",
        ),
        ([""], ValueError, "API key 1 is empty"),
    ],
)
def test_bad_keys_are_refused_when_the_app_is_made(keys: Any, error: type[Exception], says: str) -> None:
    with pytest.raises(error, match=says):
        create_app(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY), tokenizer=VOCABULARY, api_keys=keys)


def test_serve_takes_keys_from_the_command_line_or_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = start(monkeypatch, ["--script", str(SCRIPT_FILE), "--api-key", "sk-a", "--api-key", "sk-b"])
    assert seen["status"] == 0 and "needs an API key (2 accepted)" in capsys.readouterr().err
    with LiveServer(seen["app"]) as live:
        for key, status in (("sk-a", 200), ("sk-b", 200), ("sk-c", 401)):
            answer = httpx.post(
                live.url + "/v1/chat/completions", json=CHAT, headers={"x-api-key": key}, timeout=10
            )
            assert answer.status_code == status
    monkeypatch.setenv("DSCODEC_API_KEY", "sk-env")
    seen = start(monkeypatch, ["--script", str(SCRIPT_FILE)])
    with LiveServer(seen["app"]) as live:
        headers = {"authorization": "Bearer sk-env"}
        assert httpx.post(
            live.url + "/v1/chat/completions", json=CHAT, headers=headers, timeout=10
        ).is_success
        assert httpx.post(live.url + "/v1/chat/completions", json=CHAT, timeout=10).status_code == 401
    monkeypatch.delenv("DSCODEC_API_KEY")
    seen = start(monkeypatch, ["--script", str(SCRIPT_FILE), "--host", "0.0.0.0"])
    assert "no API key is needed" in capsys.readouterr().err
    assert start(monkeypatch, ["--script", str(SCRIPT_FILE), "--api-key", "two words"])["status"] == 2
    assert "API key 1 must be printable" in capsys.readouterr().err
