"""Cross-protocol golden cases: one conversation written as a Chat, a Responses and a Messages request.

Each :class:`Scenario` describes a conversation once, in neutral terms (turns, tools, thinking switch, effort,
tool_choice). :func:`cases` writes it in the three wire formats for each model version; the recorder converts all
three with the reference and refuses the case unless they render to the same prompt, special spans and ids
(fixtures under ``fixtures/requests/cross/<case>/``, see tools/README.md).

Only features that every protocol can express are used: for example Messages has no ``json_object`` format and
no ``required`` tool_choice, and a role-system message in the middle of a Messages conversation becomes user text
on V4, so such scenarios are left out or restricted to the version where the protocols agree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from golden_cases import MODELS, CrossCase
from golden_cases.chat_completions import ALL_SPECIALS, CORPUS, PNG_DATA_URL

JSON = dict[str, Any]

# ----------------------------------------------------------------------------------------------------------------
# The neutral conversation


@dataclass(frozen=True)
class Image:
    """An image part given by URL (http(s) or a base64 data URL)."""

    url: str


Part = str | Image


@dataclass(frozen=True)
class Call:
    """A historical tool call; ``arguments`` is a JSON object."""

    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Turn:
    """One conversation turn.

    ``system``/``user`` carry ``text`` or ``parts``; ``assistant`` carries ``text``, optional ``reasoning`` and
    ``calls``; ``results`` carries ``(call id, output text)`` pairs in the order they are sent.
    """

    role: Literal["system", "user", "assistant", "results"]
    text: str | None = None
    parts: tuple[Part, ...] = ()
    reasoning: str | None = None
    calls: tuple[Call, ...] = ()
    results: tuple[tuple[str, str], ...] = ()


def system(text: str) -> Turn:
    return Turn(role="system", text=text)


def user(text: str | None = None, *parts: Part) -> Turn:
    return Turn(role="user", text=text, parts=parts)


def assistant(text: str | None = None, *, reasoning: str | None = None, calls: Sequence[Call] = ()) -> Turn:
    return Turn(role="assistant", text=text, reasoning=reasoning, calls=tuple(calls))


def results(*pairs: tuple[str, str]) -> Turn:
    return Turn(role="results", results=pairs)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str | None
    parameters: Mapping[str, Any]


@dataclass(frozen=True)
class Scenario:
    """A conversation plus the request options every protocol can express.

    Attributes:
        slug: the case name without its version prefix.
        description: written to ``case.json``.
        turns: the conversation.
        tools: declared tools.
        thinking: ``True``/``False`` sends an explicit switch (Responses: effort ``none`` for off, nothing for on);
            ``None`` sends none.
        effort: a reasoning effort (Chat ``reasoning_effort``, Responses ``reasoning.effort``, Messages
            ``output_config.effort``).
        tool_choice: ``"auto"``, ``"none"`` or the name of one tool.
        max_tokens: a completion budget (Responses ``max_output_tokens``).
        temperature: sampling temperature, sent by all three.
        options: non-default conversion options (dscodec spelling).
        only: ``"v4"`` or ``"v41"`` when the protocols agree on one version only.
    """

    slug: str
    description: str
    turns: tuple[Turn, ...]
    tools: tuple[Tool, ...] = ()
    thinking: bool | None = None
    effort: str | None = None
    tool_choice: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    only: str | None = None


# ----------------------------------------------------------------------------------------------------------------
# Writing a scenario in each protocol


def _compact(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def _chat(model: str, s: Scenario) -> JSON:
    messages: list[JSON] = []
    for turn in s.turns:
        if turn.role in ("system", "user"):
            content: Any = turn.text
            if turn.parts:
                content = [
                    {"type": "text", "text": p}
                    if isinstance(p, str)
                    else {"type": "image_url", "image_url": {"url": p.url}}
                    for p in turn.parts
                ]
            messages.append({"role": turn.role, "content": content})
        elif turn.role == "assistant":
            msg: JSON = {"role": "assistant", "content": turn.text}
            if turn.reasoning is not None:
                msg["reasoning_content"] = turn.reasoning
            if turn.calls:
                msg["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": _compact(c.arguments)},
                    }
                    for c in turn.calls
                ]
            messages.append(msg)
        else:
            messages.extend({"role": "tool", "tool_call_id": i, "content": out} for i, out in turn.results)
    body: JSON = {"model": model, "messages": messages}
    if s.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, **_description(t), "parameters": dict(t.parameters)},
            }
            for t in s.tools
        ]
    if s.tool_choice in ("auto", "none"):
        body["tool_choice"] = s.tool_choice
    elif s.tool_choice is not None:
        body["tool_choice"] = {"type": "function", "function": {"name": s.tool_choice}}
    if s.thinking is not None:
        body["thinking"] = {"type": "enabled" if s.thinking else "disabled"}
    if s.effort is not None:
        body["reasoning_effort"] = s.effort
    if s.max_tokens is not None:
        body["max_tokens"] = s.max_tokens
    if s.temperature is not None:
        body["temperature"] = s.temperature
    return body


def _responses(model: str, s: Scenario) -> JSON:
    items: list[JSON] = []
    instructions: str | None = None
    for index, turn in enumerate(s.turns):
        if turn.role == "system" and index == 0:
            instructions = turn.text  # instructions become the first system message (§2.2)
        elif turn.role in ("system", "user"):
            content: Any = turn.text
            if turn.parts:
                content = [
                    {"type": "input_text", "text": p}
                    if isinstance(p, str)
                    else {"type": "input_image", "image_url": p.url}
                    for p in turn.parts
                ]
            items.append({"role": turn.role, "content": content})
        elif turn.role == "assistant":
            if turn.reasoning is not None:
                items.append(
                    {
                        "type": "reasoning",
                        "summary": [],
                        "content": [{"type": "reasoning_text", "text": turn.reasoning}],
                    }
                )
            if turn.text is not None:
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
                    }
                )
            items.extend(
                {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": _compact(c.arguments)}
                for c in turn.calls
            )
        else:
            items.extend(
                {"type": "function_call_output", "call_id": i, "output": out} for i, out in turn.results
            )
    body: JSON = {"model": model}
    if instructions is not None:
        body["instructions"] = instructions
    body["input"] = items
    if s.tools:
        body["tools"] = [
            {"type": "function", "name": t.name, **_description(t), "parameters": dict(t.parameters)}
            for t in s.tools
        ]
    if s.tool_choice in ("auto", "none"):
        body["tool_choice"] = s.tool_choice
    elif s.tool_choice is not None:
        body["tool_choice"] = {"type": "function", "name": s.tool_choice}
    effort = "none" if s.thinking is False else s.effort
    if effort is not None:
        body["reasoning"] = {"effort": effort}
    if s.max_tokens is not None:
        body["max_output_tokens"] = s.max_tokens
    if s.temperature is not None:
        body["temperature"] = s.temperature
    return body


def _messages(model: str, s: Scenario) -> JSON:
    messages: list[JSON] = []
    top_system: str | None = None
    for index, turn in enumerate(s.turns):
        if turn.role == "system" and index == 0:
            top_system = turn.text
        elif turn.role in ("system", "user"):
            content: Any = turn.text
            if turn.parts:
                content = [_messages_part(p) for p in turn.parts]
            messages.append({"role": turn.role, "content": content})
        elif turn.role == "assistant":
            blocks: list[JSON] = []
            if turn.reasoning is not None:
                blocks.append({"type": "thinking", "thinking": turn.reasoning, "signature": "sig"})
            if turn.text is not None:
                blocks.append({"type": "text", "text": turn.text})
            blocks.extend(
                {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
                for c in turn.calls
            )
            only_text = turn.reasoning is None and not turn.calls and turn.text is not None
            messages.append({"role": "assistant", "content": turn.text if only_text else blocks})
        else:
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": i, "content": out} for i, out in turn.results
                    ],
                }
            )
    body: JSON = {"model": model}
    if s.max_tokens is not None:
        body["max_tokens"] = s.max_tokens
    if top_system is not None:
        body["system"] = top_system
    body["messages"] = messages
    if s.tools:
        body["tools"] = [
            {"name": t.name, **_description(t), "input_schema": dict(t.parameters)} for t in s.tools
        ]
    if s.tool_choice in ("auto", "none"):
        body["tool_choice"] = {"type": s.tool_choice}
    elif s.tool_choice is not None:
        body["tool_choice"] = {"type": "tool", "name": s.tool_choice}
    if s.thinking is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": 2048} if s.thinking else {"type": "disabled"}
    if s.effort is not None:
        body["output_config"] = {"effort": s.effort}
    if s.temperature is not None:
        body["temperature"] = s.temperature
    return body


def _messages_part(part: Part) -> JSON:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if part.url.startswith("data:"):
        header, data = part.url.split(",", 1)
        media_type = header[len("data:") : -len(";base64")]
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": part.url}}


def _description(tool: Tool) -> JSON:
    return {} if tool.description is None else {"description": tool.description}


# ----------------------------------------------------------------------------------------------------------------
# Scenarios


WEATHER = Tool(
    "get_weather",
    "Get the current weather for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
)
SEARCH = Tool(
    "search",
    "Search the web.",
    {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "maximum": 10}},
    },
)
NOW = Tool("now", None, {"type": "object", "properties": {}})

_ROUND = (
    user("Weather in Paris?"),
    assistant(
        reasoning="Call the weather tool.",
        calls=[Call("call_1", "get_weather", {"city": "Paris", "days": 2})],
    ),
    results(("call_1", "Sunny, 25C")),
)
_HISTORY = (
    user("What is 2+2?"),
    assistant("4", reasoning="Simple arithmetic."),
    user("And 3+3?"),
)


def _scenarios() -> list[Scenario]:
    corpus = dict(CORPUS)
    mixed = " ".join(corpus[k] for k in ("chinese", "japanese", "emoji", "rtl", "whitespace"))
    out = [
        Scenario(
            "system-user",
            "a system prompt and one user message, default thinking",
            (system("You are terse."), user("Hi")),
        ),
        Scenario("user-nothink", "one user message, thinking off", (user("Hello there."),), thinking=False),
        Scenario(
            "user-thinking-on",
            "one user message, thinking switched on explicitly",
            (user("Hello there."),),
            thinking=True,
        ),
        Scenario(
            "history-effort-low",
            "multi-turn history with reasoning, effort low",
            (system("Be brief."), *_HISTORY),
            effort="low",
        ),
        Scenario(
            "history-effort-medium",
            "multi-turn history, effort medium (resolves to high)",
            _HISTORY,
            effort="medium",
        ),
        Scenario("history-effort-xhigh", "multi-turn history, effort xhigh", _HISTORY, effort="xhigh"),
        Scenario(
            "history-effort-max",
            "multi-turn history, effort max",
            (system("Think hard."), *_HISTORY),
            effort="max",
        ),
        Scenario(
            "history-nothink",
            "multi-turn history, thinking off (reasoning dropped)",
            _HISTORY,
            thinking=False,
        ),
        Scenario(
            "tool-round-thinking",
            "user, assistant tool call with reasoning, tool result, thinking",
            (system("Use tools when needed."), *_ROUND),
            tools=(WEATHER,),
        ),
        Scenario(
            "tool-round-then-user",
            "a tool round, the final answer and a new user question, effort high",
            (*_ROUND, assistant("It is sunny.", reasoning="Answer."), user("And tomorrow?")),
            tools=(WEATHER, SEARCH),
            effort="high",
        ),
        Scenario(
            "tool-round-nothink",
            "a tool round without thinking, with text before the call",
            (
                user("Weather in Paris?"),
                assistant("Let me check.", calls=[Call("call_1", "get_weather", {"city": "Paris"})]),
                results(("call_1", "Sunny")),
            ),
            tools=(WEATHER,),
            thinking=False,
        ),
        Scenario(
            "parallel-calls-out-of-order",
            "two parallel calls whose results arrive in reverse order",
            (
                user("Weather in Paris and Rome?"),
                assistant(
                    "Checking both.",
                    reasoning="Two cities.",
                    calls=[
                        Call("call_p", "get_weather", {"city": "Paris"}),
                        Call("call_r", "get_weather", {"city": "Rome"}),
                    ],
                ),
                results(("call_r", "Rome: 24C"), ("call_p", "Paris: 18C")),
            ),
            tools=(WEATHER,),
        ),
        Scenario(
            "two-tool-rounds",
            "two sequential tool rounds, effort low",
            (
                user("Weather, then hotels."),
                assistant(reasoning="First weather.", calls=[Call("c1", "get_weather", {"city": "Rome"})]),
                results(("c1", "Warm")),
                assistant(
                    reasoning="Now hotels.",
                    calls=[Call("c2", "search", {"query": "hotels Rome", "limit": 3})],
                ),
                results(("c2", "Hotel A\nHotel B")),
            ),
            tools=(WEATHER, SEARCH),
            effort="low",
        ),
        Scenario(
            "tools-declared-auto",
            "tools declared, tool_choice auto",
            (user("What can you do?"),),
            tools=(WEATHER, SEARCH, NOW),
            tool_choice="auto",
        ),
        Scenario(
            "tool-choice-none",
            "tool_choice none hides the tools",
            (user("Weather?"),),
            tools=(WEATHER,),
            tool_choice="none",
        ),
        Scenario(
            "tool-choice-named-nothink",
            "a named tool_choice, thinking off (tools filtered, opener prefilled)",
            (user("Weather in Oslo?"),),
            tools=(WEATHER, SEARCH),
            tool_choice="get_weather",
            thinking=False,
        ),
        Scenario(
            "tool-choice-named-history",
            "a named tool_choice after a tool round, thinking off",
            (*_ROUND, user("Now Rome.")),
            tools=(WEATHER, SEARCH),
            tool_choice="get_weather",
            thinking=False,
        ),
        Scenario(
            "tool-arguments-kinds",
            "historical arguments of every JSON kind and an empty tool result",
            (
                user("Go"),
                assistant(
                    calls=[
                        Call(
                            "c1",
                            "search",
                            {
                                "query": 'a "quoted" <tag> & amp\nnewline',
                                "limit": 3,
                                "f": 1.5,
                                "t": True,
                                "n": None,
                                "arr": [1, "two"],
                                "o": {"k": "v"},
                            },
                        )
                    ]
                ),
                results(("c1", "")),
            ),
            tools=(SEARCH,),
        ),
        Scenario(
            "default-off-effort-low",
            "default_thinking_mode false; an explicit effort low turns thinking on",
            _HISTORY,
            effort="low",
            options={"default_thinking_mode": False},
        ),
        Scenario(
            "default-off-plain",
            "default_thinking_mode false and nothing requested: thinking off",
            (system("S"), *_HISTORY),
            options={"default_thinking_mode": False},
        ),
        Scenario(
            "reasoning-reject-present",
            "reasoning_content_behavior reject with the current call turn carrying reasoning",
            _ROUND,
            tools=(WEATHER,),
            options={"reasoning_content_behavior": "reject"},
        ),
        Scenario(
            "images",
            "text with an https image and a data-URL image",
            (user(None, "Compare these.", Image("https://example.com/a.png"), Image(PNG_DATA_URL)),),
            thinking=False,
        ),
        Scenario(
            "trailing-assistant",
            "a trailing assistant message is a complete turn in every protocol",
            (user("Say hello."), assistant("Hello!")),
        ),
        Scenario(
            "assistant-first",
            "the conversation starts with an assistant message",
            (assistant("I am ready."), user("Go")),
            thinking=False,
        ),
        Scenario(
            "cjk-emoji-rtl",
            "CJK, emoji, RTL and whitespace text in system, user, reasoning, arguments and results",
            (
                system(f"System {mixed}"),
                user(f"User {mixed}"),
                assistant(
                    f"Answer {mixed}",
                    reasoning=f"Reasoning {mixed}",
                    calls=[Call("c1", "search", {"query": mixed})],
                ),
                results(("c1", f"Result {mixed}")),
                user(mixed),
            ),
            tools=(SEARCH,),
        ),
        Scenario(
            "typed-specials",
            "typed special-token spellings in every field stay plain text",
            (
                system(f"System {ALL_SPECIALS}"),
                user(f"User {ALL_SPECIALS}"),
                assistant(
                    f"Answer {ALL_SPECIALS}",
                    reasoning=f"Reasoning {ALL_SPECIALS}",
                    calls=[Call("c1", "search", {"query": ALL_SPECIALS})],
                ),
                results(("c1", f"Result {ALL_SPECIALS}")),
                user(ALL_SPECIALS),
            ),
            tools=(SEARCH,),
            thinking=False,
        ),
        Scenario(
            "sampling-fields",
            "max_tokens and temperature change nothing in the prompt, thinking off",
            (system("Be brief."), user("Pick a number.")),
            thinking=False,
            max_tokens=256,
            temperature=0.3,
        ),
        Scenario(
            "system-middle",
            "a system message between turns (V4.1 renders it in place in every protocol)",
            (user("u1"), assistant("a1"), system("New rules."), user("u2")),
            tools=(NOW,),
            thinking=False,
            only="v41",
        ),
    ]
    return out


def cases() -> list[CrossCase]:
    """Every scenario for each model version (unless restricted), in a stable order."""
    out: list[CrossCase] = []
    for scenario in _scenarios():
        for prefix, model in MODELS:
            if scenario.only is not None and scenario.only != prefix:
                continue
            out.append(
                CrossCase(
                    name=f"{prefix}-{scenario.slug}",
                    description=f"{scenario.description} ({'V4' if prefix == 'v4' else 'V4.1'})",
                    chat_completions=_chat(model, scenario),
                    responses=_responses(model, scenario),
                    messages=_messages(model, scenario),
                    options=dict(scenario.options),
                )
            )
    return out
