"""Chat Completions history that carries the reasoning in ``reasoning`` (deviation D17)."""

from __future__ import annotations

from typing import Any

import pytest

import dscodec


def _body(assistant: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "model": "DeepSeek-V4-Pro",
        "messages": [
            {"role": "user", "content": "What is 2+2?"},
            {"role": "assistant", "content": "4", **assistant},
            {"role": "user", "content": "And 3+3?"},
        ],
        **extra,
    }


def _assistant_reasoning(body: dict[str, Any]) -> str | None:
    request = dscodec.convert("chat_completions", body)
    [assistant] = [m for m in request.conversation.messages if m.role == "assistant"]
    return assistant.reasoning


def test_reasoning_is_read_when_reasoning_content_is_absent() -> None:
    assert _assistant_reasoning(_body({"reasoning": "Add them."})) == "Add them."


def test_reasoning_is_read_when_reasoning_content_is_null() -> None:
    assert _assistant_reasoning(_body({"reasoning_content": None, "reasoning": "Add them."})) == "Add them."


def test_reasoning_content_wins_over_reasoning() -> None:
    assert _assistant_reasoning(_body({"reasoning_content": "mine", "reasoning": "theirs"})) == "mine"


@pytest.mark.parametrize("value", [None, 5, ["a"], {"text": "a"}, True])
def test_reasoning_that_is_not_a_string_is_left_alone(value: Any) -> None:
    assert _assistant_reasoning(_body({"reasoning": value})) == _assistant_reasoning(_body({}))


def test_reasoning_reaches_the_prompt_like_reasoning_content() -> None:
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "4"},
    ]

    def prompt(field: str) -> str:
        with_reasoning = [dict(m) for m in messages]
        with_reasoning[1][field] = "I should add."
        body = {"model": "DeepSeek-V4-Pro", "messages": with_reasoning, "tools": tools}
        return dscodec.render(dscodec.convert("chat_completions", body)).text

    assert "I should add." in prompt("reasoning")
    assert prompt("reasoning") == prompt("reasoning_content")
