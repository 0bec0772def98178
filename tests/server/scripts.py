"""The scripts the server tests replay, and what the model is expected to have said in them."""

from __future__ import annotations

import json
from typing import Any

DSML = "｜DSML｜"

#: Arguments of every JSON kind: string, integer, float, boolean, array, object (and non-ASCII text).
TRIP_ARGS: dict[str, Any] = {
    "city": "Paris",
    "days": 3,
    "budget": 1250.5,
    "refundable": True,
    "stops": ["Lyon", "Nice"],
    "options": {"hotel": "central", "rooms": 2, "note": "vue sur la tour, 景色"},
}
WEATHER_CALLS: list[dict[str, Any]] = [{"city": "Paris"}, {"city": "東京"}]

PLAIN = "Hello! How can I help you today?"
REASONING = "The user greets me.\nI should greet back."
REASONING_ANSWER = "Hi there! 👋"
CJK_REASONING = "思考中🤔…好"
CJK = "你好，世界！😀👍🏽 Ünïcödé ok"
STOP_OUTPUT = "Counting: one two END three four"
STOP_CONTENT = "Counting: one two "
TOOL_PREFACE = "Planning your trip."
AFTER_TOOL = "It is sunny in Paris and rainy in Tokyo."
#: A JSON answer (for the SDKs' structured-output helpers): every JSON kind, non-ASCII text, a nested object.
STRUCTURED: dict[str, Any] = {
    "city": "Zürich",
    "temperature": -3.5,
    "days": 2,
    "sunny": False,
    "tags": ["雪", "wind"],
    "wind": {"speed": 12, "unit": "km/h"},
}


def dsml(*calls: tuple[str, dict[str, Any]]) -> str:
    """A V4 DSML tool-call block (behavior.md#dsml-history) as the model writes it after its content."""
    lines = [f"<{DSML}tool_calls>"]
    for name, arguments in calls:
        lines.append(f'<{DSML}invoke name="{name}">')
        for key, value in arguments.items():
            if isinstance(value, str):
                lines.append(f'<{DSML}parameter name="{key}" string="true">{value}</{DSML}parameter>')
            else:
                raw = json.dumps(value, ensure_ascii=False)
                lines.append(f'<{DSML}parameter name="{key}" string="false">{raw}</{DSML}parameter>')
        lines.append(f"</{DSML}invoke>")
    lines.append(f"</{DSML}tool_calls>")
    return "\n\n" + "\n".join(lines)


SCRIPTS: dict[str, dict[str, Any]] = {
    "plain": {"output": PLAIN},
    "reasoning": {"reasoning": REASONING, "output": REASONING_ANSWER, "chunk_size": 3},
    "reasoning_tokens": {
        "reasoning": REASONING,
        "output": REASONING_ANSWER,
        "send": "tokens",
        "chunk_size": 1,
    },
    "tool_args": {
        "reasoning": "I need plan_trip.",
        "output": TOOL_PREFACE + dsml(("plan_trip", TRIP_ARGS)),
        "chunk_size": 5,
    },
    "tool_args_tokens": {
        "reasoning": "I need plan_trip.",
        "output": TOOL_PREFACE + dsml(("plan_trip", TRIP_ARGS)),
        "send": "tokens",
        "chunk_size": 1,
    },
    "parallel": {"output": dsml(*(("get_weather", args) for args in WEATHER_CALLS)), "chunk_size": 7},
    "cjk_text": {"reasoning": CJK_REASONING, "output": CJK, "chunk_size": 1},
    "cjk_tokens": {"reasoning": CJK_REASONING, "output": CJK, "send": "tokens", "chunk_size": 1},
    "stop": {"output": STOP_OUTPUT, "chunk_size": 2, "prompt_tokens": 40, "cached_tokens": 8},
    "length": {"output": "This answer runs out of room", "finish": "length"},
    "fail_mid": {"reasoning": "Let me see.", "output": "Partial answer that breaks.", "fail_after": 4},
    "fail_early": {"output": "never sent", "fail_after": 0},
    "slow": {"output": "x" * 400, "chunk_size": 1, "delay": 0.01},
    "after_tool": {"output": AFTER_TOOL},
    "tool_search": {
        "reasoning": "I need a clock tool.",
        "output": f'\n\n<{DSML}tool_calls>\n<{DSML}invoke name="tool_search">\n'
        f'<{DSML}parameter name="query" string="true">time</{DSML}parameter>\n'
        f"</{DSML}invoke>\n</{DSML}tool_calls>",
        "chunk_size": 4,
    },
    "structured": {"reasoning": "Fill the schema.", "output": json.dumps(STRUCTURED, ensure_ascii=False)},
    "structured_tokens": {
        "output": json.dumps(STRUCTURED, ensure_ascii=False),
        "send": "tokens",
        "chunk_size": 1,
    },
}
