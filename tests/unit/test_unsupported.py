"""The policy for request fields dscodec cannot honour: ``ConversionOptions(unsupported=...)``."""

from __future__ import annotations

from typing import Any

import pytest

import dscodec
from dscodec.protocols._unsupported import UNHONOURED

REJECT = dscodec.ConversionOptions(unsupported="reject")
MODEL = "DeepSeek-V4-Pro"


_TYPED: dict[str, dict[str, Any]] = {
    "tool_choice": {"type": "auto"},
    "thinking": {"type": "enabled", "budget_tokens": 32},
}


def _body(protocol: str, **extra: Any) -> dict[str, Any]:
    """A small body of ``protocol`` with ``extra`` fields; a dotted name is a path into an object."""
    if protocol == "chat_completions":
        body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}]}
    elif protocol == "responses":
        body = {"model": MODEL, "input": "Hi"}
    else:
        body = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
    for name, value in extra.items():
        *outer, last = name.split(".")
        place = body
        for key in outer:
            # (an object that needs its type, as tool_choice and thinking do, gets one that asks for nothing else)
            place = place.setdefault(key, dict(_TYPED.get(key, {})))
        place[last] = value
    return body


#: A value that asks for something, per field (every field of the table has one).
ASKING: dict[str, Any] = {
    "frequency_penalty": 0.5,
    "presence_penalty": -1,
    "repetition_penalty": 1.2,
    "logit_bias": {"50256": -100},
    "top_k": 40,
    "min_p": 0.05,
    "audio": {"voice": "alloy", "format": "wav"},
    "modalities": ["text", "audio"],
    "prediction": {"type": "content", "content": "x"},
    "web_search_options": {},
    "parallel_tool_calls": False,
    "background": True,
    "conversation": "conv_1",
    "prompt": {"id": "pmpt_1"},
    "max_tool_calls": 3,
    "output_format": {"type": "json_schema", "schema": {"type": "object"}},
    "output_config.format": {"type": "json_schema", "schema": {"type": "object"}},
    "mcp_servers": [{"type": "url", "url": "https://example.com/mcp", "name": "x"}],
    "thread": {"type": "create"},
    "compaction": {"type": "summarize"},
    "functions": [{"name": "f", "parameters": {"type": "object"}}],
    "function_call": {"name": "f"},
    "truncation": "auto",
    "container": "container_1",
    "context_management": {"edits": []},
    "moderation": {"model": "omni-moderation-latest", "policy": {"input": {"mode": "block"}}},
    "store": True,
    "verbosity": "low",
    "include": ["message.output_text.logprobs"],
    "tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}],
    "tool_choice.disable_parallel_tool_use": True,
    "thinking.display": "omitted",
    "input": [
        {"type": "message", "role": "user", "content": "Hi"},
        {"type": "item_reference", "id": "msg_1"},
    ],
}

#: Values that ask for nothing: accepted under "reject" too.
NEUTRAL: dict[str, list[Any]] = {
    "frequency_penalty": [0, 0.0, None],
    "presence_penalty": [0],
    "repetition_penalty": [1, 1.0],
    "logit_bias": [{}, None],
    "top_k": [0, -1, None],
    "min_p": [0],
    "modalities": [["text"], []],
    "parallel_tool_calls": [True, None],
    "background": [False, None],
    "mcp_servers": [[]],
    "functions": [[]],
    "function_call": ["none", "auto"],
    "truncation": ["disabled", None],
    "moderation": [None],
    "store": [False, None],
    "verbosity": ["medium", None],
    "include": [[], None],
    "tools": [
        [],
        [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
        [{"type": "web_search"}],
    ],
    "tool_choice.disable_parallel_tool_use": [False, None],
    "thinking.display": ["summarized", None],
    "input": [[{"type": "message", "role": "user", "content": "Hi"}]],
}

CASES = [(protocol, field.name) for protocol, fields in UNHONOURED.items() for field in fields]


def test_every_field_has_an_asking_value() -> None:
    assert {name for _, name in CASES} <= set(ASKING)


@pytest.mark.parametrize(("protocol", "name"), CASES)
def test_reject_names_the_field(protocol: str, name: str) -> None:
    with pytest.raises(dscodec.ConversionError) as info:
        dscodec.convert(protocol, _body(protocol, **{name: ASKING[name]}), REJECT)  # type: ignore[arg-type]
    assert info.value.status_code == 400
    message = info.value.body["error"]["message"]
    assert f"'{name}'" in message
    if protocol == "messages":
        assert info.value.body["type"] == "error"
    else:
        assert info.value.body["error"]["param"] == name


@pytest.mark.parametrize(("protocol", "name"), CASES)
def test_ignore_reads_past_the_field(protocol: str, name: str) -> None:
    plain = dscodec.convert(protocol, _body(protocol))  # type: ignore[arg-type]
    request = dscodec.convert(protocol, _body(protocol, **{name: ASKING[name]}))  # type: ignore[arg-type]
    assert dscodec.render(request).text == dscodec.render(plain).text


@pytest.mark.parametrize(
    ("protocol", "name", "value"),
    [(protocol, name, value) for protocol, name in CASES for value in NEUTRAL.get(name, [None])],
)
def test_a_neutral_value_is_accepted(protocol: str, name: str, value: Any) -> None:
    dscodec.convert(protocol, _body(protocol, **{name: value}), REJECT)  # type: ignore[arg-type]


def test_output_config_effort_alone_is_honoured() -> None:
    body = _body("messages", output_config={"effort": "max"})
    assert (
        dscodec.convert("messages", body, REJECT).conversation
        == dscodec.convert("messages", body).conversation
    )
    body["output_config"]["format"] = {"type": "json_schema", "schema": {"type": "object"}}
    with pytest.raises(dscodec.ConversionError, match="'output_config.format'"):
        dscodec.convert("messages", body, REJECT)


def test_a_wrong_type_keeps_its_reading_error() -> None:
    body = _body("chat_completions", frequency_penalty="high")
    with pytest.raises(dscodec.ConversionError) as ignored:
        dscodec.convert("chat_completions", body)
    with pytest.raises(dscodec.ConversionError) as rejected:
        dscodec.convert("chat_completions", body, REJECT)
    assert rejected.value.body == ignored.value.body


def test_the_policy_is_checked() -> None:
    with pytest.raises(ValueError, match="unsupported"):
        dscodec.ConversionOptions(unsupported="warn")  # type: ignore[arg-type]
