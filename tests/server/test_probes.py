"""The endpoints clients probe: GET /v1/models (both SDKs), POST /v1/messages/count_tokens, GET /health."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

import dscodec
from dscodec.server import BackendOutput, BackendRequest, ScriptedBackend, create_app
from dscodec.server.backends import VLLMBackend
from tests.server.conftest import VOCABULARY, LiveServer
from tests.server.scripts import SCRIPTS
from tests.server.standins import StandIn

NAMES = ["DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash"]


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    options = dscodec.ConversionOptions().with_model_alias("deepseek-v4-pro", "v4")
    app = create_app(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY), tokenizer=VOCABULARY, options=options)
    with LiveServer(app) as server:
        yield server


@pytest.fixture(scope="module")
def oai(live: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=live.url + "/v1", api_key="k", max_retries=0, timeout=10) as client:
        yield client


@pytest.fixture(scope="module")
def claude(live: LiveServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=live.url, api_key="k", max_retries=0, timeout=10) as client:
        yield client


# -- /v1/models ----------------------------------------------------------------------------------------------------


def test_models_with_the_openai_sdk(oai: openai.OpenAI) -> None:
    models = [m for m in oai.models.list()]
    assert [m.id for m in models] == [*NAMES, "deepseek-v4-pro"]
    assert all(m.object == "model" and m.owned_by == "dscodec" for m in models)
    assert oai.models.retrieve("deepseek-v4-pro").id == "deepseek-v4-pro"
    with pytest.raises(openai.NotFoundError) as missing:
        oai.models.retrieve("gpt-4o")
    assert missing.value.body["param"] == "model"  # type: ignore[index]
    assert missing.value.code == "model_not_found"


def test_models_with_the_anthropic_sdk(claude: anthropic.Anthropic) -> None:
    page = claude.models.list()
    assert [m.id for m in page.data] == [*NAMES, "deepseek-v4-pro"]
    assert all(m.type == "model" and m.display_name == m.id for m in page.data)
    assert claude.models.retrieve("DeepSeek-V4-Pro").id == "DeepSeek-V4-Pro"
    with pytest.raises(anthropic.NotFoundError):
        claude.models.retrieve("claude-opus")


def test_anthropic_model_objects_are_the_sdks_type_whole(live: LiveServer) -> None:
    """Every field the SDK's ModelInfo requires is there (``lifecycle`` among them), validated strictly."""
    headers = {"anthropic-version": "2023-06-01"}
    listed = httpx.get(live.url + "/v1/models", headers=headers, timeout=10).json()
    one = httpx.get(live.url + "/v1/models/DeepSeek-V4-Pro", headers=headers, timeout=10).json()
    for raw in [*listed["data"], one]:
        model = anthropic.types.ModelInfo.model_validate(raw)
        assert model.lifecycle == "active"
        assert model.max_input_tokens == dscodec.server.app.DEFAULT_CONTEXT_LIMIT
    assert one == listed["data"][0]


def _anthropic_page(live: LiveServer, query: str) -> httpx.Response:
    return httpx.get(f"{live.url}/v1/models?{query}", headers={"anthropic-version": "2023-06-01"}, timeout=10)


@pytest.mark.parametrize(
    ("query", "ids", "has_more"),
    [
        ("limit=1", NAMES[:1], True),
        ("limit=2", NAMES, True),
        ("limit=3", [*NAMES, "deepseek-v4-pro"], False),
        ("limit=1&after_id=DeepSeek-V4-Pro", NAMES[1:], True),
        ("after_id=DeepSeek-V4-Pro", [NAMES[1], "deepseek-v4-pro"], False),
        ("after_id=deepseek-v4-pro", [], False),
        ("before_id=deepseek-v4-pro", NAMES, False),
        ("limit=1&before_id=deepseek-v4-pro", NAMES[1:], True),
        ("before_id=DeepSeek-V4-Pro", [], False),
        ("lifecycle[]=active&lifecycle[]=retired", [*NAMES, "deepseek-v4-pro"], False),
        ("lifecycle[]=retired", [], False),
    ],
)
def test_the_anthropic_model_list_pages_as_anthropic_pages(
    live: LiveServer, query: str, ids: list[str], has_more: bool
) -> None:
    page = _anthropic_page(live, query).json()
    assert [model["id"] for model in page["data"]] == ids
    assert page["has_more"] is has_more
    assert (page["first_id"], page["last_id"]) == ((ids[0], ids[-1]) if ids else (None, None))


def test_the_anthropic_sdk_pages_the_model_list_one_at_a_time(claude: anthropic.Anthropic) -> None:
    assert [model.id for model in claude.models.list(limit=1)] == [*NAMES, "deepseek-v4-pro"]


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=1001",
        "limit=-1",
        "limit=x",
        "limit=" + "9" * 5000,
        "after_id=nope",
        "before_id=nope",
        "after_id=DeepSeek-V4-Pro&before_id=deepseek-v4-pro",
        "lifecycle[]=gone",
        "lifecycle[]=retired&after_id=DeepSeek-V4-Pro",
    ],
)
def test_a_bad_anthropic_model_list_query_is_a_400_in_anthropics_shape(live: LiveServer, query: str) -> None:
    answer = _anthropic_page(live, query)
    assert answer.status_code == 400
    body = answer.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"] and len(body["error"]["message"]) < 400


def test_served_models_can_be_named() -> None:
    app = create_app(
        ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY),
        tokenizer=VOCABULARY,
        options=dscodec.ConversionOptions().with_model_alias("one", "v4"),
        served_models=["one"],
    )
    with LiveServer(app) as server:
        data = httpx.get(server.url + "/v1/models", timeout=10).json()
    assert data == {
        "object": "list",
        "data": [
            {"id": "one", "object": "model", "created": data["data"][0]["created"], "owned_by": "dscodec"}
        ],
    }
    with LiveServer(app) as server:
        body = {"model": "one", "messages": [{"role": "user", "content": "Hi"}]}
        assert httpx.post(server.url + "/v1/chat/completions", json=body, timeout=10).status_code == 200


@pytest.mark.parametrize("options", [None, dscodec.ConversionOptions().with_model_alias("two", "v4")])
def test_a_served_name_the_server_would_refuse_is_refused_when_the_app_is_made(options: Any) -> None:
    """Listing a name that every request naming it gets a 400 for would trap every client that picks from
    GET /v1/models."""
    with pytest.raises(ValueError, match="served_models: 'one' is no model name the server accepts"):
        create_app(
            ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY),
            tokenizer=VOCABULARY,
            options=options,
            served_models=["DeepSeek-V4-Pro", "one"],
        )


def test_a_model_name_with_a_slash_is_retrieved_by_both_sdks() -> None:
    """A Hugging Face id as an alias: listed, and retrieved by name, slash and all (as written, or with the slash
    percent-encoded)."""
    options = dscodec.ConversionOptions().with_model_alias("deepseek-ai/DeepSeek-V4-Pro", "v4")
    app = create_app(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY), tokenizer=VOCABULARY, options=options)
    name = "deepseek-ai/DeepSeek-V4-Pro"
    with (
        LiveServer(app) as server,
        openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0, timeout=10) as oai,
        anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0, timeout=10) as claude,
    ):
        assert oai.models.retrieve(name).id == name
        assert claude.models.retrieve(name).id == name
        encoded = httpx.get(server.url + "/v1/models/deepseek-ai%2FDeepSeek-V4-Pro", timeout=10)
        assert encoded.status_code == 200 and encoded.json()["id"] == name
        with pytest.raises(openai.NotFoundError):
            oai.models.retrieve("deepseek-ai/nope")


# -- /v1/messages/count_tokens -------------------------------------------------------------------------------------


def _expected(body: dict[str, Any]) -> int:
    request = dscodec.convert("messages", body)
    return len(dscodec.PromptEncoder(VOCABULARY).encode_rendered(dscodec.render(request)))


def test_count_tokens_is_the_prompt_length(claude: anthropic.Anthropic) -> None:
    tool = {
        "name": "get_weather",
        "description": "Weather.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
    body: dict[str, Any] = {
        "model": "DeepSeek-V4-Pro",
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [tool],
    }
    counted = claude.messages.count_tokens(**body)
    assert counted.input_tokens == _expected(body) > 20
    # The same request, generated: the usage reports the same prompt length.
    message = claude.messages.create(max_tokens=50, extra_headers={"X-Scenario": "plain"}, **body)
    assert message.usage.input_tokens == counted.input_tokens
    # Thinking changes the prompt, and the count follows.
    off = claude.messages.count_tokens(thinking={"type": "disabled"}, **body)
    assert off.input_tokens == _expected({**body, "thinking": {"type": "disabled"}}) != counted.input_tokens


def test_count_tokens_of_a_thread_continue_counts_the_thread(
    claude: anthropic.Anthropic, live: LiveServer
) -> None:
    """A continue is counted as it is generated: the thread's conversation, then the new messages; a thread the
    server does not keep is a 404, as for the generation."""
    first: dict[str, Any] = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "word " * 500}],
    }
    created = httpx.post(
        live.url + "/v1/messages",
        json={**first, "max_tokens": 50, "thread": {"type": "create"}},
        headers={"X-Scenario": "plain"},
        timeout=10,
    ).json()
    new = [{"role": "user", "content": "And now?"}]
    alone = claude.messages.count_tokens(model="DeepSeek-V4-Pro", messages=new).input_tokens  # type: ignore[arg-type]
    thread = {"type": "continue", "previous_message_id": created["id"]}
    counted = httpx.post(
        live.url + "/v1/messages/count_tokens",
        json={"model": "DeepSeek-V4-Pro", "messages": new, "thread": thread},
        timeout=10,
    )
    assert counted.status_code == 200 and counted.json()["input_tokens"] > alone + 500
    generated = httpx.post(
        live.url + "/v1/messages",
        json={"model": "DeepSeek-V4-Pro", "max_tokens": 50, "messages": new, "thread": thread},
        headers={"X-Scenario": "plain"},
        timeout=10,
    ).json()
    assert generated["usage"]["input_tokens"] == counted.json()["input_tokens"]
    unknown = httpx.post(
        live.url + "/v1/messages/count_tokens",
        json={
            "model": "DeepSeek-V4-Pro",
            "messages": new,
            "thread": {**thread, "previous_message_id": "msg_no"},
        },
        timeout=10,
    )
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "not_found_error"


def test_count_tokens_errors_in_anthropic_shape(claude: anthropic.Anthropic, live: LiveServer) -> None:
    with pytest.raises(anthropic.BadRequestError) as bad:
        claude.messages.count_tokens(model="nope", messages=[{"role": "user", "content": "Hi"}])
    assert bad.value.body["type"] == "error"  # type: ignore[index]
    response = httpx.post(live.url + "/v1/messages/count_tokens", content=b"{", timeout=10)
    assert response.status_code == 400 and response.json()["error"]["type"] == "invalid_request_error"
    assert httpx.get(live.url + "/v1/messages/count_tokens", timeout=10).status_code == 405


# -- /health -------------------------------------------------------------------------------------------------------


def test_health_without_a_check(live: LiveServer) -> None:
    response = httpx.get(live.url + "/health", timeout=10)
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


class Checked:
    """A backend with a health check that fails while ``healthy`` is false."""

    def __init__(self) -> None:
        self.healthy = True

    async def health(self) -> None:
        if not self.healthy:
            raise RuntimeError("engine down")

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        if False:  # pragma: no cover - never generates
            yield


def test_health_uses_the_backend_check() -> None:
    backend = Checked()
    with LiveServer(create_app(backend, tokenizer=VOCABULARY)) as server:
        assert httpx.get(server.url + "/health", timeout=10).status_code == 200
        backend.healthy = False
        response = httpx.get(server.url + "/health", timeout=10)
    assert response.status_code == 503 and response.json() == {
        "status": "unavailable",
        "error": "engine down",
    }


def test_health_follows_the_engine() -> None:
    with (
        LiveServer(StandIn("vllm")) as engine,
        LiveServer(create_app(VLLMBackend(engine.url), tokenizer=VOCABULARY)) as server,
    ):
        assert httpx.get(server.url + "/health", timeout=10).status_code == 200
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with LiveServer(create_app(VLLMBackend(f"http://127.0.0.1:{port}"), tokenizer=VOCABULARY)) as server:
        response = httpx.get(server.url + "/health", timeout=10)
    assert response.status_code == 503 and "unreachable" in response.json()["error"]
