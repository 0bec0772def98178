"""``dscodec serve --upstream``: the command line in front of an engine stand-in, aliases, served names, warnings."""

from __future__ import annotations

import logging
import logging.config
from pathlib import Path
from typing import Any

import openai
import pytest

from dscodec import cli
from dscodec.server._http import REQUEST_ID
from dscodec.server.serve import (
    ServeError,
    demo_vocabulary,
    log_config,
    parse_alias,
    serving_options,
    v41_warning,
)
from dscodec.vocab import Vocabulary, bundled_tokenizer_path
from tests.server.conftest import LiveServer, new_id
from tests.server.standins import SCRIPTS, StandIn

EXAMPLE_SCRIPTS = Path(__file__).resolve().parents[2] / "examples" / "scripts.json"


def start(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> dict[str, Any]:
    """Run ``dscodec serve`` up to the point where uvicorn would start; what it would have served."""
    seen: dict[str, Any] = {}

    def fake_run(app: Any, **kwargs: Any) -> None:
        seen.update(kwargs, app=app)

    monkeypatch.setattr("uvicorn.run", fake_run)
    seen["status"] = cli.main(["serve", *argv])
    return seen


def test_serve_in_front_of_vllm(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    engine = StandIn("vllm")
    with LiveServer(engine) as upstream:
        seen = start(
            monkeypatch,
            [
                "--upstream",
                "vllm",
                upstream.url,
                "--model-alias",
                "deepseek-v4-pro=v4",
                "--port",
                "9124",
                "--upstream-model",
                "deepseek-ai/DeepSeek-V4-Pro",
            ],
        )
        assert seen["status"] == 0 and (seen["host"], seen["port"]) == ("127.0.0.1", 9124)
        err = capsys.readouterr().err
        assert "made-up <｜System｜> id" in err and "fine for demos" in err  # V4.1 names are served too
        assert f"vllm at {upstream.url}" in err
        with (
            LiveServer(seen["app"]) as live,
            openai.OpenAI(base_url=live.url + "/v1", api_key="k", max_retries=0, timeout=10) as sdk,
        ):
            assert [m.id for m in sdk.models.list()] == [
                "DeepSeek-V4-Pro",
                "DeepSeek-V4.1-Flash",
                "deepseek-v4-pro",
            ]
            key = new_id()
            completion = sdk.chat.completions.create(
                model="deepseek-v4-pro",
                messages=[{"role": "user", "content": f"[script:reasoning][id:{key}] Hi"}],
            )
    assert (
        completion.model == "deepseek-v4-pro"
        and completion.choices[0].message.content == SCRIPTS["reasoning"].output
    )
    assert engine.runs[key].payload["model"] == "deepseek-ai/DeepSeek-V4-Pro"


def test_served_model_names(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen = start(
        monkeypatch,
        [
            "--upstream",
            "sglang",
            "http://127.0.0.1:1",
            "--model-alias",
            "deepseek-ai/DeepSeek-V4-Pro=v4",
            "--served-model-name",
            "deepseek-ai/DeepSeek-V4-Pro",
        ],
    )
    assert seen["status"] == 0
    assert "warning" not in capsys.readouterr().err  # no V4.1 name is served
    from starlette.testclient import TestClient

    client = TestClient(seen["app"])
    assert [m["id"] for m in client.get("/v1/models").json()["data"]] == ["deepseek-ai/DeepSeek-V4-Pro"]
    refused = client.post(
        "/v1/chat/completions",
        json={"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]},
    )
    assert refused.status_code == 400


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--upstream", "tgi", "http://x"], "expected vllm or sglang"),
        (["--upstream", "vllm", "http://x", "--model-alias", "nameonly"], "expected NAME=v4 or NAME=v4.1"),
        (["--upstream", "vllm", "http://x", "--model-alias", "a=v5"], "expected NAME=v4 or NAME=v4.1"),
        (["--upstream", "vllm", "http://x", "--served-model-name", "gpt-4o"], "add --model-alias gpt-4o=v4"),
        (["--upstream", "vllm", "http://x", "--tokenizer", "/nonexistent/folder"], "could not be read"),
        (["--upstream", "vllm", "127.0.0.1:8000"], "must be an http:// or https:// address"),
        (["--upstream", "sglang", "ftp://engine"], "must be an http:// or https:// address"),
        (["--upstream", "sglang", "http://x", "--upstream-model", "m"], "is sent only to vLLM"),
        (["--script", str(EXAMPLE_SCRIPTS), "--upstream-model", "m"], "a scripted server has no use for it"),
    ],
)
def test_bad_serve_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert start(monkeypatch, argv)["status"] == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--port", "65536", "expected a number from 0 to 65535, not 65536"),
        ("--port", "-1", "expected a number from 0 to 65535, not -1"),
        ("--port", "http", "expected a whole number, not 'http'"),
        ("--context-limit", "0", "expected a number of 1 or more, not 0"),
    ],
)
def test_numbers_out_of_range_are_usage_errors(
    capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    with pytest.raises(SystemExit) as ended:
        cli.main(["serve", "--upstream", "vllm", "http://x", option, value])
    assert ended.value.code == 2
    assert message in capsys.readouterr().err


def test_script_and_upstream_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["serve", "--script", "x.json", "--upstream", "vllm", "http://x"])
    with pytest.raises(SystemExit):
        cli.main(["serve"])


def test_a_model_folder_is_a_tokenizer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tokenizer.json").write_bytes(bundled_tokenizer_path().read_bytes())
    seen = start(monkeypatch, ["--upstream", "vllm", "http://127.0.0.1:1", "--tokenizer", str(tmp_path)])
    assert seen["status"] == 0
    # The real V4 file has no <｜System｜>: V4.1 requests would fail, and serve says so.
    assert "has no <｜System｜>" in capsys.readouterr().err


def test_option_helpers() -> None:
    assert parse_alias("org/Model=v4.1") == ("org/Model", "v4.1")
    with pytest.raises(ServeError):
        parse_alias("=v4")
    options = serving_options({"x": "v4.1"}, ["x"])
    assert dict(options.model_versions_by_name) == {"x": "v4.1"}
    assert v41_warning(None, demo_vocabulary(), serving_options()).startswith("warning:")
    assert v41_warning("t.json", demo_vocabulary(), serving_options()) == ""
    assert "has no" in v41_warning("t.json", Vocabulary.load(None), serving_options())
    assert v41_warning(None, demo_vocabulary(), serving_options(served_models=["DeepSeek-V4-Pro"])) == ""
    assert list(serving_options({"a": "v4"}).model_versions_by_name) == [
        "DeepSeek-V4-Pro",
        "DeepSeek-V4.1-Flash",
        "a",
    ]


def test_the_warm_up_goes_through_every_protocol_with_a_tool_call() -> None:
    from dscodec.options import ConversionOptions
    from dscodec.server.serve import warm_up

    vocabulary = Vocabulary.load(None)
    assert warm_up(vocabulary, ConversionOptions()) == ["chat_completions", "responses", "messages"]
    # No model served as V4: nothing to warm (and no error).
    assert warm_up(vocabulary, ConversionOptions(model_versions_by_name={"x": "v4.1"})) == []


def test_serve_logs_the_request_id_of_each_record(monkeypatch: pytest.MonkeyPatch) -> None:
    script = Path(__file__).resolve().parents[2] / "examples" / "scripts.json"
    seen = start(monkeypatch, ["--script", str(script)])
    config = seen["log_config"]
    assert config == log_config() and config["loggers"]["dscodec.server"]["handlers"] == ["dscodec"]
    assert "uvicorn.access" in config["loggers"]  # uvicorn's own lines are kept
    formatter = logging.config.DictConfigurator(config).configure_formatter(config["formatters"]["dscodec"])
    logger = logging.getLogger("dscodec.server")
    token = REQUEST_ID.set("req_0123")
    try:
        record = logger.makeRecord(logger.name, logging.WARNING, __file__, 1, "the backend failed", (), None)
        assert logger.filter(record)
    finally:
        REQUEST_ID.reset(token)
    line = formatter.format(record)
    assert line.startswith("WARNING") and line.endswith("the backend failed [req_0123]")
