"""The scripted backend on its own (what it yields for a request), the demo script file, and ``dscodec serve``."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import dscodec
from dscodec import cli
from dscodec.server import (
    BackendRequest,
    Finish,
    PromptUsage,
    ScriptedBackend,
    ScriptedFailure,
    ScriptError,
    TextChunk,
    TokenChunk,
)
from dscodec.server import serve as serve_module
from tests.server.conftest import MODELS, VOCABULARY
from tests.server.scripts import CJK

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scripts.json"


def job(headers: dict[str, str] | None = None, *, max_tokens: int = 1000, **body: Any) -> BackendRequest:
    request = dscodec.convert(
        "chat_completions",
        {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}], **body},
    )
    prompt = dscodec.render(request)
    ids = dscodec.PromptEncoder(VOCABULARY).encode_rendered(prompt)
    return BackendRequest(
        request=request, prompt=prompt, token_ids=ids, max_tokens=max_tokens, headers=headers or {}
    )


def replay(backend: ScriptedBackend, work: BackendRequest) -> list[Any]:
    async def run() -> list[Any]:
        return [item async for item in backend(work)]

    return asyncio.run(run())


def backend(**script: Any) -> ScriptedBackend:
    return ScriptedBackend({"s": script}, tokenizer=VOCABULARY)


def test_text_chunks_carry_token_counts_that_add_up() -> None:
    items = replay(backend(output=CJK, chunk_size=3), job(thinking={"type": "disabled"}))
    assert isinstance(items[0], PromptUsage) and items[-1] == Finish("stop")
    chunks = items[1:-1]
    assert all(isinstance(c, TextChunk) for c in chunks) and "".join(c.text for c in chunks) == CJK
    assert [len(c.text) for c in chunks[:-1]] == [3] * (len(chunks) - 1)
    assert sum(c.token_count for c in chunks) == len(VOCABULARY.full.encode(CJK).ids)


def test_token_chunks_are_the_tokenized_output() -> None:
    items = replay(backend(reasoning="r", output="Hi 😀", send="tokens", chunk_size=2), job())
    ids = [i for item in items if isinstance(item, TokenChunk) for i in item.ids]
    assert ids == VOCABULARY.full.encode("r</think>Hi 😀", add_special_tokens=False).ids
    assert VOCABULARY.special_id("</think>") in ids  # written as the special id, as a model does


def test_the_script_is_encoded_off_the_event_loop() -> None:
    """Encoding a script's text grows with it: it runs in a worker thread, so other requests go on meanwhile."""
    threads: list[int] = []

    class Watched(ScriptedBackend):
        def plan(self, script: Any, job: BackendRequest) -> Any:
            threads.append(threading.get_ident())
            return super().plan(script, job)

    items = replay(Watched({"s": {"output": "x"}}, tokenizer=VOCABULARY), job())
    assert items[-1] == Finish("stop")
    assert threads and threads[0] != threading.get_ident()


def test_prompt_usage_defaults_to_the_prompt_length() -> None:
    work = job()
    assert replay(backend(output="x"), work)[0] == PromptUsage(prompt_tokens=len(work.token_ids))
    assert replay(backend(output="x", prompt_tokens=9, cached_tokens=4), work)[0] == PromptUsage(9, 4)


@pytest.mark.parametrize("send", ["text", "tokens"])
def test_output_over_max_tokens_is_cut_with_length(send: str) -> None:
    items = replay(
        backend(output="one two three four five six", send=send),
        job(max_tokens=3, thinking={"type": "disabled"}),
    )
    assert items[-1] == Finish("length")
    if send == "tokens":
        assert sum(len(c.ids) for c in items[1:-1]) == 3
    else:
        assert sum(c.token_count for c in items[1:-1]) == 3
        assert "one two three four five six".startswith("".join(c.text for c in items[1:-1]))


@pytest.mark.parametrize(
    ("body", "script", "text"),
    [
        ({}, {"reasoning": "r", "output": "A"}, "r</think>A"),
        ({}, {"output": "A"}, "</think>A"),
        ({"thinking": {"type": "disabled"}}, {"reasoning": "r", "output": "A"}, "A"),
        ({}, {"raw": True, "output": "no end of thinking"}, "no end of thinking"),
        (
            {
                "messages": [
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "So", "prefix": True},
                ]
            },
            {"reasoning": "r", "output": "B"},
            "B",
        ),
    ],
)
def test_model_text_follows_the_thinking_stage(
    body: dict[str, Any], script: dict[str, Any], text: str
) -> None:
    scripted = backend(**script)
    assert scripted.scripts["s"].model_text(job(**body).request) == text


def test_scenario_header_picks_the_script() -> None:
    scripted = ScriptedBackend({"a": {"output": "A"}, "b": {"output": "B"}}, tokenizer=VOCABULARY)
    assert scripted.select({})[0] == "a" and scripted.select({"x-scenario": "b"})[0] == "b"
    with pytest.raises(dscodec.ConversionError, match="'c'"):
        scripted.select({"x-scenario": "c"})


def test_fail_after() -> None:
    with pytest.raises(ScriptedFailure, match="before any output"):
        replay(backend(output="abcdef", fail_after=0), job())

    async def partial() -> list[Any]:
        items: list[Any] = []
        with pytest.raises(ScriptedFailure, match="after 2 chunks"):
            async for item in backend(output="abcdefghij", chunk_size=2, fail_after=2)(job()):
                items.append(item)
        return items

    assert [type(i) for i in asyncio.run(partial())] == [PromptUsage, TextChunk, TextChunk]


@pytest.mark.parametrize(
    "scripts",
    [
        {},
        {"s": {}},
        {"s": {"output": "x", "chunk_size": 0}},
        {"s": {"output": "x", "send": "bytes"}},
        {"s": {"output": "x", "extra": 1}},
        {"s": {"output": "x", "raw": True, "reasoning": "r"}},
        {"s": "just text"},
        5,
        ["plain"],
        # Past what a stream processor takes, or an endless wait: refused when loaded, not when played.
        {"s": {"output": "x", "prompt_tokens": 2**63}},
        {"s": {"output": "x", "cached_tokens": 2**70}},
        {"s": {"output": "x", "chunk_size": 2**63}},
        {"s": {"output": "x", "delay": 3601}},
        {"s": {"output": "x", "delay": float("inf")}},
        {"s": {"output": "x", "delay": float("nan")}},
    ],
)
def test_bad_scripts_are_refused(scripts: Any) -> None:
    with pytest.raises(ScriptError):
        ScriptedBackend(scripts)


def test_bad_script_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="could not be read"):
        ScriptedBackend.from_file(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(ScriptError, match="not valid JSON"):
        ScriptedBackend.from_file(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(ScriptError, match="JSON object"):
        ScriptedBackend.from_file(tmp_path / "list.json")


# -- the demo file and the command ------------------------------------------------------------------------------

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        },
    },
}


@pytest.fixture(scope="module")
def demo() -> TestClient:
    return TestClient(serve_module.scripted_app(EXAMPLES))


@pytest.mark.parametrize("model", MODELS)
def test_every_example_script_is_served(demo: TestClient, model: str) -> None:
    names = list(json.loads(EXAMPLES.read_text(encoding="utf-8")))
    assert names[0] == "plain"
    for name in names:
        request = {
            "model": model,
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
            "tools": [WEATHER],
        }
        response = demo.post("/v1/chat/completions", json=request, headers={"X-Scenario": name})
        if name == "backend_failure":
            assert response.status_code == 502
            continue
        assert response.status_code == 200, response.text
        choice = response.json()["choices"][0]
        assert choice["finish_reason"] == {
            "tool_call": "tool_calls",
            "parallel_tool_calls": "tool_calls",
            "length": "length",
        }.get(name, "stop")
        if name.endswith("tool_calls") or name == "tool_call":
            assert all(
                json.loads(c["function"]["arguments"])["unit"] == "celsius"
                for c in choice["message"]["tool_calls"]
            )


def test_serve_command(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake_run(app: Any, **kwargs: Any) -> None:
        seen.update(kwargs, app=app)

    monkeypatch.setattr("uvicorn.run", fake_run)
    assert cli.main(["serve", "--script", str(EXAMPLES), "--port", "9123", "--context-limit", "5000"]) == 0
    assert seen["host"] == "127.0.0.1" and seen["port"] == 9123  # loopback unless told otherwise
    client = TestClient(seen["app"])
    response = client.post(
        "/v1/chat/completions",
        json={
            "model": "DeepSeek-V4-Pro",
            "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 4990,
        },
    )
    assert response.status_code == 400 and "5000 tokens" in response.json()["error"]["message"]


def test_serve_command_with_a_bad_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--script", str(tmp_path / "missing.json")]) == 2
    assert "missing.json could not be read" in capsys.readouterr().err


@pytest.mark.parametrize("path", [True, None, 1.5, "descriptor"])
def test_from_file_refuses_what_is_no_path_before_opening_anything(path: object, tmp_path: Path) -> None:
    """An int is no path: ``open`` would read that file descriptor and close it."""
    import os

    descriptor = os.open(tmp_path / "scripts.json", os.O_RDWR | os.O_CREAT)
    try:
        with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
            ScriptedBackend.from_file(descriptor if path == "descriptor" else path)  # type: ignore[arg-type]
        os.fstat(descriptor)  # still open
    finally:
        os.close(descriptor)


@pytest.mark.parametrize("tokenizer", [5, b"tokenizer.json", ["a"], object()])
def test_a_tokenizer_of_the_wrong_kind_is_refused_when_the_backend_is_made(tokenizer: object) -> None:
    """It is loaded on first use: found then, every request would be a 502."""
    with pytest.raises(TypeError, match="tokenizer must be None, a path or a tokenizers.Tokenizer"):
        ScriptedBackend({"a": {"output": "hi"}}, tokenizer=tokenizer)  # type: ignore[arg-type]
    assert ScriptedBackend({"a": {"output": "hi"}}, tokenizer=VOCABULARY.full).vocabulary.full
