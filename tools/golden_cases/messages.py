"""Golden cases for Anthropic Messages requests (request path: body -> conversation -> prompt -> ids).

Each ``_section`` function returns the cases of one topic of the spec (BEHAVIOR.md §1, §2.3, §2.6, §2.7) and says
in its docstring what it covers. Scenarios are built for both model versions with :func:`both`, which names them
``v4-<slug>`` and ``v41-<slug>``. Names containing ``-invalid-`` must be refused by the reference (a
``ConversionError``, or a bare ``ValueError`` for malformed bodies, deviation D2); the recorder checks this.

Two deviations concern this suite. D1: every recorded error body is the reference's OpenAI-style envelope, while
dscodec answers Messages errors with Anthropic's envelope (same message text). D10: ``tool_choice: {"type":
"any"}`` is recorded as the reference treats it (like ``auto``); those cases carry ``"deviation": "D10"``.

The only generated variation (the text-corpus placement) uses a fixed seed, so recording is deterministic.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from typing import Any

from golden_cases import Case, Raw, both
from golden_cases.chat_completions import (
    ALL_SPECIALS,
    ALL_SPECIALS_TIGHT,
    CORPUS,
    DEEP_KINDS,
    GROUNDED,
    GROUNDED_TIGHT,
    MANY_CALLS,
    MANY_TOOLS,
    NEGZERO,
    SPECIALS,
    deep_field,
    deep_json,
    nested_items_schema,
    with_negzero,
)

PROTOCOL = "messages"
REQUEST_CLASS = "MessagesRequest"

V4 = "DeepSeek-V4-Pro"
V41 = "DeepSeek-V4.1-Flash"

_ABSENT: Any = object()

JSON = dict[str, Any]
Make = Callable[..., Any]

#: The base64 payload of a 1x1 PNG (the same image as the Chat suite's data URL).
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

# ----------------------------------------------------------------------------------------------------------------
# Body builders. They only add a key when it is given, so each case shows exactly the fields it sends.


def _req(model: str, messages: list[Any], **fields: Any) -> JSON:
    body: JSON = {"model": model, "messages": messages}
    body.update({k: v for k, v in fields.items() if v is not _ABSENT})
    return body


def _nothink(model: str, messages: list[JSON], **fields: Any) -> JSON:
    return _req(model, messages, thinking={"type": "disabled"}, **fields)


def user(content: Any) -> JSON:
    return {"role": "user", "content": content}


def assistant(content: Any) -> JSON:
    return {"role": "assistant", "content": content}


def system_msg(content: Any) -> JSON:
    """A ``role: "system"`` message inside ``messages`` (not the top-level ``system`` field)."""
    return {"role": "system", "content": content}


def text(value: str, **extra: Any) -> JSON:
    return {"type": "text", "text": value, **extra}


def image_b64(media_type: str = "image/png", data: str = PNG_B64) -> JSON:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def image_url(url: str) -> JSON:
    return {"type": "image", "source": {"type": "url", "url": url}}


def document(source: JSON, **extra: Any) -> JSON:
    return {"type": "document", "source": source, **extra}


TEXT_DOC = document({"type": "text", "media_type": "text/plain", "data": "hello"})
PDF_DOC = document({"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="})


def thinking(value: str, signature: str = "sig") -> JSON:
    return {"type": "thinking", "thinking": value, "signature": signature}


def tool_use(block_id: str, name: str, input: Any) -> JSON:
    return {"type": "tool_use", "id": block_id, "name": name, "input": input}


def tool_result(block_id: str, content: Any = _ABSENT, **extra: Any) -> JSON:
    block: JSON = {"type": "tool_result", "tool_use_id": block_id}
    if content is not _ABSENT:
        block["content"] = content
    block.update(extra)
    return block


def tool_reference(name: str) -> JSON:
    return {"type": "tool_reference", "tool_name": name}


def tool_addition(name: str) -> JSON:
    return {"type": "tool_addition", "tool": {"type": "tool_reference", "name": name}}


def server_tool_use(block_id: str, query: str) -> JSON:
    return {"type": "server_tool_use", "id": block_id, "name": "web_search", "input": {"query": query}}


def web_search_result(block_id: str) -> JSON:
    return {
        "type": "web_search_tool_result",
        "tool_use_id": block_id,
        "content": [
            {
                "type": "web_search_result",
                "url": "https://example.com",
                "title": "Example",
                "encrypted_content": "x",
            }
        ],
    }


def tool(name: str, description: Any = _ABSENT, input_schema: Any = _ABSENT, **extra: Any) -> JSON:
    t: JSON = {"name": name}
    if description is not _ABSENT:
        t["description"] = description
    if input_schema is not _ABSENT:
        t["input_schema"] = input_schema
    t.update(extra)
    return t


def obj(properties: Mapping[str, Any], **extra: Any) -> JSON:
    return {"type": "object", "properties": dict(properties), **extra}


WEATHER = tool(
    "get_weather",
    "Get the current weather for a city.",
    obj(
        {"city": {"type": "string", "description": "City name"}, "days": {"type": "integer"}},
        required=["city"],
    ),
)
SEARCH = tool(
    "search",
    "Search the web and return the top results.",
    obj(
        {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 10}},
        required=["query"],
    ),
)
CALC = tool("calc", input_schema=obj({"expr": {"type": "string"}}))
NOARGS = tool("now", "Current UTC time.", {"type": "object"})
DEFERRED = tool("lookup", "Deferred lookup tool.", obj({"q": {"type": "string"}}), defer_loading=True)
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}


# ----------------------------------------------------------------------------------------------------------------
# §1.3 thinking and output_config.effort


EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max")


def _history() -> list[JSON]:
    return [
        user("What is 2+2?"),
        assistant([thinking("Simple arithmetic."), text("4")]),
        user("And 3+3?"),
    ]


def _thinking() -> list[Case]:
    """§1.3: thinking enabled/disabled/adaptive with budget_tokens, every output_config.effort, default off."""
    cases: list[Case] = []
    cases += both(
        "thinking-default",
        "no thinking field, no effort: default thinking on",
        lambda m: _req(m, _history(), system="Be terse."),
    )
    for effort in EFFORTS:
        cases += both(
            f"effort-{effort}",
            f"output_config.effort={effort} without a thinking switch",
            lambda m, e=effort: _req(m, _history(), system="Be terse.", output_config={"effort": e}),
        )
        cases += both(
            f"thinking-enabled-effort-{effort}",
            f"thinking enabled (budget 2048) with effort {effort} (none resolves to high)",
            lambda m, e=effort: _req(
                m,
                _history(),
                thinking={"type": "enabled", "budget_tokens": 2048},
                output_config={"effort": e},
            ),
        )
    for effort in ("absent", "high", "none", "max"):
        cases += both(
            f"thinking-disabled-effort-{effort}",
            f"thinking disabled wins over effort {effort}",
            lambda m, e=effort: _req(
                m,
                _history(),
                thinking={"type": "disabled"},
                **({} if e == "absent" else {"output_config": {"effort": e}}),
            ),
        )
    for effort in ("absent", "none", "low", "ultra"):
        cases += both(
            f"thinking-adaptive-effort-{effort}",
            f"thinking adaptive behaves like enabled, effort {effort}",
            lambda m, e=effort: _req(
                m,
                _history(),
                thinking={"type": "adaptive"},
                **({} if e == "absent" else {"output_config": {"effort": e}}),
            ),
        )
    cases += both(
        "thinking-null", "thinking: null behaves like absent", lambda m: _req(m, _history(), thinking=None)
    )
    cases += both(
        "thinking-enabled-no-budget",
        "thinking enabled without budget_tokens",
        lambda m: _req(m, _history(), thinking={"type": "enabled"}),
    )
    cases += both(
        "thinking-budget-above-max-tokens",
        "budget_tokens larger than max_tokens is ignored",
        lambda m: _req(m, _history(), thinking={"type": "enabled", "budget_tokens": 99999}, max_tokens=10),
    )
    cases += both(
        "thinking-adaptive-budget",
        "adaptive with budget_tokens and effort low",
        lambda m: _req(
            m, _history(), thinking={"type": "adaptive", "budget_tokens": 10}, output_config={"effort": "low"}
        ),
    )
    cases += both(
        "output-config-null", "output_config: null", lambda m: _req(m, _history(), output_config=None)
    )
    cases += both("output-config-empty", "output_config: {}", lambda m: _req(m, _history(), output_config={}))
    cases += both(
        "output-config-effort-null",
        "output_config.effort null",
        lambda m: _req(m, _history(), output_config={"effort": None}),
    )
    cases += both(
        "output-config-format-ignored",
        "output_config.format is ignored (no structured output in Messages)",
        lambda m: _nothink(
            m,
            [user("Give me JSON.")],
            output_config={"format": {"type": "json_schema", "schema": obj({"a": {"type": "string"}})}},
        ),
    )
    off = {"default_thinking_mode": False}
    cases += both(
        "default-off-plain",
        "default_thinking_mode false, nothing requested",
        lambda m: _req(m, _history()),
        options=off,
    )
    cases += both(
        "default-off-effort-low",
        "default_thinking_mode false, an effort other than none turns thinking on",
        lambda m: _req(m, _history(), output_config={"effort": "low"}),
        options=off,
    )
    cases += both(
        "default-off-effort-none",
        "default_thinking_mode false, effort none stays off",
        lambda m: _req(m, _history(), output_config={"effort": "none"}),
        options=off,
    )
    cases += both(
        "default-off-enabled",
        "default_thinking_mode false, explicit thinking enabled",
        lambda m: _req(m, _history(), thinking={"type": "enabled", "budget_tokens": 1024}),
        options=off,
    )
    for effort in ("low", "max", "xhigh"):
        cases += both(
            f"effort-{effort}-tools-history",
            f"effort {effort} with tools and a tool round (history reasoning kept with tools)",
            lambda m, e=effort: _req(
                m,
                [
                    user("Weather in Oslo?"),
                    assistant(
                        [thinking("Call the tool."), tool_use("toolu_1", "get_weather", {"city": "Oslo"})]
                    ),
                    user([tool_result("toolu_1", "Rain, 7C")]),
                ],
                system="Use tools when needed.",
                tools=[WEATHER],
                output_config={"effort": e},
            ),
        )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §1.4/§2.3 sampling, max_tokens, stop_sequences, stream, metadata


def _sampling() -> list[Case]:
    """§1.4/§2.3: temperature/top_p per mode, max_tokens bounds (lowered above the bound), stop_sequences."""
    cases: list[Case] = []
    pairs = ((0, 0.01), (2, 1), (0.3, 0.3), (1, 0.96))
    modes: tuple[tuple[str, Callable[[str, JSON], JSON]], ...] = (
        ("think", lambda m, f: _req(m, [user("Pick a number.")], max_tokens=1024, **f)),
        ("think-tools", lambda m, f: _req(m, [user("Weather in Rome?")], tools=[WEATHER], **f)),
        (
            "think-tools-choice-none",
            lambda m, f: _req(
                m, [user("Weather in Rome?")], tools=[WEATHER], tool_choice={"type": "none"}, **f
            ),
        ),
        ("nothink", lambda m, f: _nothink(m, [user("Pick a number.")], max_tokens=1024, **f)),
    )
    for temperature, top_p in pairs:
        for mode, make in modes:
            slug = f"sampling-{mode}-t{str(temperature).replace('.', '')}-p{str(top_p).replace('.', '')}"
            cases += both(
                slug,
                f"temperature={temperature} top_p={top_p}, mode {mode} (§1.4 resolution table)",
                lambda m, mk=make, t=temperature, p=top_p: mk(m, {"temperature": t, "top_p": p}),
            )
    cases += both(
        "sampling-temperature-above-anthropic-range",
        "temperature 1.5 is accepted (range [0, 2], not Anthropic's [0, 1])",
        lambda m: _nothink(m, [user("Hi")], temperature=1.5),
    )
    cases += both("top-k-ignored", "top_k is ignored", lambda m: _nothink(m, [user("Hi")], top_k=5))
    q = [user("Summarise the plot of Hamlet.")]
    for slug, value in (
        ("absent", _ABSENT),
        ("null", None),
        ("1", 1),
        ("1024", 1024),
        ("upper-bound", 393216),
    ):
        cases += both(
            f"max-tokens-{slug}",
            f"thinking with max_tokens {slug}",
            lambda m, v=value: _req(m, q, max_tokens=v),
        )
        cases += both(
            f"nothink-max-tokens-{slug}",
            f"nothink with max_tokens {slug}",
            lambda m, v=value: _nothink(m, q, max_tokens=v),
        )
    cases += both(
        "max-tokens-above-bound-lowered",
        "max_tokens 4000000 is lowered to the bound 393216",
        lambda m: _req(m, q, max_tokens=4_000_000),
    )
    cases += both(
        "max-tokens-bound-plus-one-lowered",
        "max_tokens 393217 is lowered to the bound",
        lambda m: _nothink(m, q, max_tokens=393217),
    )
    cases += both(
        "max-tokens-custom-thinking-bound-lowered",
        "max_tokens above a custom thinking bound is lowered to it",
        lambda m: _req(m, q, max_tokens=5000),
        options={"thinking_max_tokens_upper_bound": 1000},
    )
    cases += both(
        "max-tokens-custom-nothink-bound-lowered",
        "nothink max_tokens above the custom non-thinking bound is lowered to it",
        lambda m: _nothink(m, q, max_tokens=5000),
        options={"thinking_max_tokens_upper_bound": 100000, "non_thinking_max_tokens_upper_bound": 500},
    )
    cases += both(
        "invalid-max-tokens-lowered-to-zero-bound",
        "max_tokens lowered to a thinking bound of 0 is then below 1: refused with the range [1, 0]",
        lambda m: _req(m, q, max_tokens=5),
        options={"thinking_max_tokens_upper_bound": 0},
    )
    cases += both(
        "invalid-max-tokens-lowered-to-zero-nothink-bound",
        "the same under a non-thinking bound of 0",
        lambda m: _nothink(m, q, max_tokens=1),
        options={"non_thinking_max_tokens_upper_bound": 0},
    )
    cases += both(
        "max-tokens-effort-max-default",
        "effort max without max_tokens (default 131072 in resolution)",
        lambda m: _req(m, q, output_config={"effort": "max"}),
    )
    cases += both(
        "stop-sequences",
        "stop_sequences with duplicates and unicode, kept in order",
        lambda m: _req(m, q, stop_sequences=["END", "END", "。", "</think>", " "]),
    )
    cases += both(
        "stop-sequences-16",
        "exactly 16 stop sequences",
        lambda m: _nothink(m, q, stop_sequences=[f"s{i}" for i in range(16)]),
    )
    cases += both("stop-sequences-empty-list", "stop_sequences: []", lambda m: _req(m, q, stop_sequences=[]))
    cases += both("stop-sequences-null", "stop_sequences: null", lambda m: _req(m, q, stop_sequences=None))
    cases += both("stream-true", "stream true", lambda m: _req(m, q, stream=True, max_tokens=512))
    cases += both("stream-false", "stream false", lambda m: _nothink(m, q, stream=False))
    cases += both(
        "metadata-object",
        "metadata with user_id is accepted and ignored",
        lambda m: _req(m, q, metadata={"user_id": "u-1"}),
    )
    cases += both("metadata-empty", "metadata: {}", lambda m: _req(m, q, metadata={}))
    cases += both("metadata-null", "metadata: null", lambda m: _req(m, q, metadata=None))
    cases += both(
        "unknown-fields-ignored",
        "fields the reference does not read (service_tier, container, mcp_servers, context_management)",
        lambda m: _req(
            m, q, service_tier="auto", container="c", mcp_servers=[], context_management={"edits": []}
        ),
    )
    cases += both(
        "sdk-fields-ignored",
        "fields the Anthropic SDK sends that the reference does not read (cache_control, speed, inference_geo, ...)",
        lambda m: _req(
            m,
            q,
            cache_control={"type": "ephemeral"},
            diagnostics={"previous_message_id": "msg_1"},
            inference_geo="us",
            speed="fast",
            user_profile_id="u",
            workspace_id="w",
        ),
    )
    cases += both(
        "all-nulls",
        "optional fields sent as null",
        lambda m: _req(
            m,
            q,
            system=None,
            max_tokens=None,
            stream=None,
            temperature=None,
            top_p=None,
            stop_sequences=None,
            tools=None,
            tool_choice=None,
            thinking=None,
            metadata=None,
            output_config=None,
        ),
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.3 system prompt and role-system messages


def _system() -> list[Case]:
    """§2.3: system string/blocks/empty; role system inside messages (V4 reminder text, V4.1 system in place)."""
    cases: list[Case] = []
    q = [user("Hi")]
    for slug, value in (
        ("string", "You are X."),
        ("empty-string", ""),
        ("empty-list", []),
        ("blocks", [text("Rule 1."), text("Rule 2.")]),
        (
            "blocks-cache-control",
            [
                text("Long cached preamble.", cache_control={"type": "ephemeral"}),
                text("Short tail.", cache_control={"type": "ephemeral", "ttl": "1h"}),
            ],
        ),
        ("blocks-with-citations", [text("Cited.", citations=[])]),
    ):
        cases += both(
            f"system-{slug}", f"system {slug}, nothink", lambda m, v=value: _nothink(m, q, system=v)
        )
        cases += both(
            f"system-{slug}-tools-low",
            f"system {slug} with tools and effort low (the first system block absorbs effort and tools)",
            lambda m, v=value: _req(m, q, system=v, tools=[CALC], output_config={"effort": "low"}),
        )
    for slug, description, messages in (
        ("role-system-first", "a role-system message first", [system_msg("Inline rules."), user("Hi")]),
        (
            "role-system-middle",
            "a role-system message between turns",
            [user("u1"), assistant("a1"), system_msg("Mid rules."), user("u2")],
        ),
        (
            "role-system-last",
            "a role-system message after the last user message",
            [user("a"), system_msg("At the end.")],
        ),
        (
            "role-system-blocks",
            "a role-system message with text blocks",
            [user("a"), system_msg([text("S1"), text("S2")]), user("b")],
        ),
        ("role-system-empty", "an empty role-system message", [user("a"), system_msg(""), user("b")]),
        (
            "role-system-two",
            "two role-system messages in a row",
            [user("a"), system_msg("S1"), system_msg("S2"), user("b")],
        ),
        (
            "role-system-image",
            "a role-system message with an image",
            [system_msg([text("Reference:"), image_url("https://example.com/ref.png")]), user("b")],
        ),
    ):
        cases += both(
            slug,
            f"{description} (V4: a system-reminder user text; V4.1: a system message)",
            lambda m, ms=messages: _nothink(m, ms),
        )
        cases += both(
            f"{slug}-with-system-tools",
            f"{description}, with a top-level system, tools and thinking",
            lambda m, ms=messages: _req(m, ms, system="Top-level system.", tools=[WEATHER]),
        )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.3 user content: blocks, images, documents


def _user_content() -> list[Case]:
    """§2.3: content string or blocks (one message per block), consecutive users, images, documents."""
    cases: list[Case] = []
    cases += both("user-string", "user content as a string", lambda m: _nothink(m, [user("Hello there.")]))
    cases += both("user-empty-string", "user content as an empty string", lambda m: _req(m, [user("")]))
    cases += both(
        "user-blocks",
        "text blocks, one conversation message each (merged by the renderer)",
        lambda m: _nothink(m, [user([text("A"), text("B"), text(""), text("C\n")])]),
    )
    cases += both(
        "user-blocks-cache-control",
        "text blocks with cache_control and citations",
        lambda m: _req(
            m, [user([text("Cached.", cache_control={"type": "ephemeral"}), text("Plain.", citations=None)])]
        ),
    )
    cases += both(
        "users-consecutive",
        "two user messages in a row",
        lambda m: _nothink(m, [user("a"), user([text("b"), text("c")])]),
    )
    for media_type in ("image/jpeg", "image/jpg", "image/png", "image/gif", "image/webp"):
        slug = media_type.split("/")[1]
        cases += both(
            f"image-base64-{slug}",
            f"a base64 image declared as {media_type} (becomes a data-URL source on V4.1)",
            lambda m, mt=media_type: _nothink(m, [user([text("What is this?"), image_b64(mt)])]),
        )
    cases += both(
        "image-url",
        "an https image URL with cache_control",
        lambda m: _req(
            m,
            [
                user(
                    [
                        {**image_url("https://example.com/cat.png"), "cache_control": {"type": "ephemeral"}},
                        text("Describe."),
                    ]
                )
            ],
        ),
    )
    cases += both(
        "image-http-url",
        "an http image URL",
        lambda m: _nothink(m, [user([image_url("http://example.com/dog.jpg")])]),
    )
    cases += both(
        "image-several-messages",
        "images in two user messages (paths name message and block)",
        lambda m: _req(
            m,
            [
                user([image_url("https://example.com/1.png")]),
                assistant("One."),
                user([text("and"), image_b64(), image_url("https://example.com/3.png")]),
            ],
        ),
    )
    cases += both(
        "image-typed-placeholder",
        "a user-typed <｜image｜> next to a real image (only the real one is special)",
        lambda m: _req(m, [user([text("a<｜image｜>b"), image_url("https://example.com/x.png")])]),
    )
    cases += both(
        "documents",
        "documents (text, base64 pdf, url, content, file) become [Unsupported document type: ...]",
        lambda m: _nothink(
            m,
            [
                user(
                    [
                        TEXT_DOC,
                        PDF_DOC,
                        document({"type": "url", "url": "https://example.com/a.pdf"}),
                        document({"type": "content", "content": [text("inner")]}),
                        document({"type": "file", "file_id": "file_1"}),
                        document(
                            {"type": "text", "media_type": "text/plain", "data": "x"},
                            title="T",
                            context="C",
                            citations={"enabled": True},
                        ),
                        text("Summarise."),
                    ]
                )
            ],
        ),
    )
    # V4 does not validate images; V4.1 refuses these (see _invalid_semantic).
    cases += both(
        "image-ftp-url",
        "an ftp image URL becomes [Unsupported Image] on V4",
        lambda m: _nothink(m, [user([image_url("ftp://x/a.png")])]),
        only="v4",
    )
    cases += both(
        "image-file-source",
        "an image with a file source becomes [Unsupported Image] on V4",
        lambda m: _nothink(m, [user([{"type": "image", "source": {"type": "file", "file_id": "file_1"}}])]),
        only="v4",
    )
    cases += both(
        "image-in-assistant",
        "an image in an assistant message becomes text on V4",
        lambda m: _nothink(
            m, [user("a"), assistant([image_url("https://example.com/a.png"), text("x")]), user("b")]
        ),
        only="v4",
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.3 assistant content: text, thinking, tool_use, trailing prefill


def _assistant() -> list[Case]:
    """§2.3: assistant text/thinking/tool_use blocks, argument serialisation, trailing assistant (prefill)."""
    cases: list[Case] = []
    tools = [WEATHER, CALC]
    cases += both(
        "assistant-string",
        "assistant content as a string",
        lambda m: _req(m, [user("a"), assistant("b"), user("c")]),
    )
    cases += both(
        "assistant-empty-string",
        'assistant content ""',
        lambda m: _req(m, [user("a"), assistant(""), user("c")]),
    )
    cases += both(
        "assistant-text-blocks",
        "assistant text blocks joined with blank lines",
        lambda m: _req(
            m, [user("a"), assistant([text("Part one."), text("Part two.")]), user("c")], tools=tools
        ),
    )
    cases += both(
        "assistant-thinking-blocks",
        "two thinking blocks joined as reasoning, with tools",
        lambda m: _req(
            m,
            [user("a"), assistant([thinking("t1"), thinking("t2"), text("x"), text("y")]), user("b")],
            tools=tools,
        ),
    )
    cases += both(
        "assistant-thinking-no-tools",
        "thinking blocks without tools (reasoning dropped in the prompt)",
        lambda m: _req(m, [user("a"), assistant([thinking("t1"), text("x")]), user("b")]),
    )
    cases += both(
        "assistant-thinking-nothink",
        "thinking blocks in a nothink request",
        lambda m: _nothink(m, [user("a"), assistant([thinking("t1"), text("x")]), user("b")], tools=tools),
    )
    cases += both(
        "assistant-thinking-empty",
        "an empty thinking block",
        lambda m: _req(m, [user("a"), assistant([thinking(""), text("x")]), user("b")], tools=tools),
    )
    cases += both(
        "assistant-consecutive",
        "two assistant messages in a row stay two turns",
        lambda m: _req(m, [user("a"), assistant("b"), assistant("c"), user("d")], tools=tools),
    )
    cases += both(
        "assistant-first",
        "the conversation starts with an assistant message",
        lambda m: _nothink(m, [assistant("hello"), user("b")]),
    )
    cases += both(
        "tool-use-object-input",
        "tool_use with an object input: arguments in Python json.dumps style",
        lambda m: _req(
            m,
            [
                user("Weather in Paris?"),
                assistant(
                    [
                        thinking("Call."),
                        text("Checking."),
                        tool_use("toolu_1", "get_weather", {"city": "Paris", "days": 2}),
                    ]
                ),
                user([tool_result("toolu_1", "Sunny")]),
            ],
            tools=tools,
        ),
    )
    cases += both(
        "tool-use-input-kinds",
        "tool_use input holding every JSON kind and non-ASCII text",
        lambda m: _nothink(
            m,
            [
                user("Go"),
                assistant(
                    [
                        tool_use(
                            "toolu_1",
                            "calc",
                            {
                                "s": 'text with "quotes", <tag> & amp\nnewline',
                                "i": 42,
                                "neg": -7,
                                "f": 1.5,
                                "t": True,
                                "n": None,
                                "arr": [1, "two", None, [3.0]],
                                "o": {"k": "v", "nested": {"deep": [True]}},
                                "empty_o": {},
                                "unicode": "é中😀\u2028",
                                "ctrl": "\x01\t",
                            },
                        )
                    ]
                ),
                user([tool_result("toolu_1", "ok")]),
            ],
            tools=tools,
        ),
    )
    cases += both(
        "tool-use-input-raw-numbers",
        "tool_use input numbers spelled 1e5, -0.0, 1E16, 1e-7 and big integers in the raw body",
        lambda m: Raw(
            data='{"model": "'
            + m
            + '", "messages": [{"role": "user", "content": "n"}, {"role": "assistant", "content": [{"type": "tool_use", '
            '"id": "t1", "name": "calc", "input": {"a": 1e5, "b": -0.0, "c": 1E16, "d": 1e-7, "e": 12345678901234567890, '
            '"f": -9223372036854775809, "g": 1.0}}]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": '
            '"t1", "content": "ok"}]}], "tools": [{"name": "calc", "input_schema": {"type": "object"}}]}'
        ),
    )
    for slug, value in (
        ("string", "just a string"),
        ("list", [1, 2]),
        ("null", None),
        ("number", 3),
        ("empty-object", {}),
    ):
        cases += both(
            f"tool-use-input-{slug}",
            f"tool_use whose input is {slug} (non-object input renders as one arguments parameter)",
            lambda m, v=value: _req(
                m,
                [user("a"), assistant([tool_use("toolu_1", "calc", v)]), user([tool_result("toolu_1", "r")])],
                tools=tools,
            ),
        )
    cases += both(
        "tool-use-parallel",
        "two parallel tool_use blocks answered in order",
        lambda m: _req(
            m,
            [
                user("Weather in Paris and Rome?"),
                assistant(
                    [
                        tool_use("toolu_1", "get_weather", {"city": "Paris"}),
                        tool_use("toolu_2", "get_weather", {"city": "Rome"}),
                    ]
                ),
                user([tool_result("toolu_1", "Sunny"), tool_result("toolu_2", "Rainy")]),
            ],
            tools=tools,
        ),
    )
    cases += both(
        "tool-use-undeclared",
        "a tool_use for a tool that is not declared",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([tool_use("toolu_1", "ghost", {"a": 1})]),
                user([tool_result("toolu_1", "boo")]),
            ],
            tools=tools,
        ),
    )
    cases += both(
        "tool-use-no-tools",
        "a tool round without any declared tool",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([tool_use("toolu_1", "ghost", {})]),
                user([tool_result("toolu_1", "boo")]),
                assistant("done"),
                user("next"),
            ],
        ),
    )
    # Trailing assistant: Anthropic prefill is rendered as a complete turn followed by a new assistant opener.
    for mode, maker in (("think", _req), ("nothink", _nothink)):
        cases += both(
            f"prefill-text-{mode}",
            f"a trailing assistant message (prefill) is a complete turn, {mode}",
            lambda m, mk=maker: mk(m, [user("Say hello."), assistant("Sure, ")]),
        )
        cases += both(
            f"prefill-thinking-tools-{mode}",
            f"a trailing assistant with thinking and tools, {mode}",
            lambda m, mk=maker: mk(
                m, [user("Say hello."), assistant([thinking("r"), text("Sure, ")])], tools=tools
            ),
        )
        cases += both(
            f"prefill-json-brace-{mode}",
            f"a trailing assistant starting a JSON object, {mode}",
            lambda m, mk=maker: mk(m, [user("Give JSON."), assistant("{")]),
        )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.3 tool results


def _tool_results() -> list[Case]:
    """§2.3: tool_result content forms, is_error, text after results, out-of-order results, tool_reference."""
    cases: list[Case] = []
    tools = [WEATHER, CALC, DEFERRED]

    def round_with(*result_blocks: JSON, calls: int = 1) -> list[JSON]:
        uses = [tool_use(f"toolu_{i + 1}", "calc", {"expr": str(i)}) for i in range(calls)]
        return [user("Compute."), assistant([thinking("Use calc."), *uses]), user(list(result_blocks))]

    for slug, description, blocks in (
        ("string", "tool_result content as a string", [tool_result("toolu_1", "42")]),
        (
            "blocks-text",
            "tool_result content as text blocks",
            [tool_result("toolu_1", [text("4"), text("2")])],
        ),
        (
            "blocks-mixed",
            "tool_result with text, image, document and tool_reference blocks",
            [
                tool_result(
                    "toolu_1",
                    [text("x"), image_url("https://example.com/i.png"), TEXT_DOC, tool_reference("lookup")],
                )
            ],
        ),
        ("missing-content", "tool_result without content", [tool_result("toolu_1")]),
        ("null-content", "tool_result with content null", [tool_result("toolu_1", None)]),
        ("empty-list", "tool_result with an empty content list", [tool_result("toolu_1", [])]),
        ("is-error", "tool_result with is_error true", [tool_result("toolu_1", "boom", is_error=True)]),
        (
            "cache-control",
            "tool_result with cache_control",
            [tool_result("toolu_1", "42", cache_control={"type": "ephemeral"})],
        ),
        (
            "text-after",
            "a text block after the tool result becomes a user message",
            [tool_result("toolu_1", "42"), text("Now explain.")],
        ),
        (
            "image-base64",
            "a base64 image inside a tool result",
            [tool_result("toolu_1", [image_b64("image/webp")])],
        ),
    ):
        cases += both(
            f"tool-result-{slug}", description, lambda m, b=blocks: _req(m, round_with(*b), tools=tools)
        )
    cases += both(
        "tool-result-out-of-order",
        "results answering parallel calls in reverse order",
        lambda m: _req(
            m, round_with(tool_result("toolu_2", "R2"), tool_result("toolu_1", "R1"), calls=2), tools=tools
        ),
    )
    cases += both(
        "tool-result-three-shuffled",
        "three results in a shuffled order, then text",
        lambda m: _nothink(
            m,
            round_with(
                tool_result("toolu_3", "R3"),
                tool_result("toolu_1", "R1"),
                tool_result("toolu_2", "R2"),
                text("Thanks."),
                calls=3,
            ),
            tools=tools,
        ),
    )
    cases += both(
        "tool-result-empty-id-out-of-order",
        "an empty tool_use id first of two calls, results reversed: the empty id is a call's id like any other",
        lambda m: _nothink(
            m,
            [
                user("Compute."),
                assistant([tool_use("", "calc", {"expr": "1"}), tool_use("a", "calc", {"expr": "2"})]),
                user([tool_result("a", "R-a"), tool_result("", "R-empty")]),
            ],
            tools=tools,
        ),
    )
    cases += both(
        "tool-result-reference-only",
        "a tool_result made of a tool_reference (V4.1 inserts a system message with the tool)",
        lambda m: _req(m, round_with(tool_result("toolu_1", [tool_reference("lookup")])), tools=tools),
    )
    cases += both(
        "tool-result-reference-two-results-and-text",
        "a tool_reference in the first of two results, then text (V4.1 inserts the system message after the whole user message)",
        lambda m: _nothink(
            m,
            round_with(
                tool_result("toolu_1", [tool_reference("lookup")]),
                tool_result("toolu_2", "x"),
                text("after"),
                calls=2,
            ),
            tools=tools,
        ),
    )
    cases += both(
        "tool-result-reference-non-deferred",
        "a tool_reference naming a tool that is not deferred",
        lambda m: _req(m, round_with(tool_result("toolu_1", [tool_reference("calc")])), tools=tools),
    )
    cases += both(
        "tool-rounds-multi",
        "two tool rounds with a final answer and a new question",
        lambda m: _req(
            m,
            [
                user("Weather in Paris, then Rome."),
                assistant([thinking("First Paris."), tool_use("toolu_1", "get_weather", {"city": "Paris"})]),
                user([tool_result("toolu_1", "Paris: 18C")]),
                assistant(
                    [
                        thinking("Now Rome."),
                        text("Paris done."),
                        tool_use("toolu_2", "get_weather", {"city": "Rome"}),
                    ]
                ),
                user([tool_result("toolu_2", "Rome: 24C")]),
                assistant([thinking("Summarise."), text("Rome is warmer.")]),
                user("Thanks!"),
            ],
            tools=tools,
        ),
    )
    reject = {"reasoning_content_behavior": "reject"}
    cases += both(
        "reasoning-reject-present",
        "reject: the current tool_use turn carries a thinking block",
        lambda m: _req(m, round_with(tool_result("toolu_1", "ok")), tools=tools),
        options=reject,
    )
    cases += both(
        "reasoning-reject-empty-thinking",
        "reject: an empty thinking block counts as present",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([thinking(""), tool_use("toolu_1", "calc", {})]),
                user([tool_result("toolu_1", "r")]),
            ],
            tools=tools,
        ),
        options=reject,
    )
    cases += both(
        "reasoning-reject-history-before-last-user",
        "reject: tool_use turns before the last user message are filled",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([tool_use("toolu_1", "calc", {})]),
                user([tool_result("toolu_1", "r")]),
                assistant("x"),
                user("b"),
            ],
            tools=tools,
        ),
        options=reject,
    )
    cases += both(
        "reasoning-reject-nothink",
        "reject does not apply in nothink mode",
        lambda m: _nothink(
            m,
            [user("a"), assistant([tool_use("toolu_1", "calc", {})]), user([tool_result("toolu_1", "r")])],
            tools=tools,
        ),
        options=reject,
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.3 tools, server tools, tool_addition


def _tools() -> list[Case]:
    """§2.3: input_schema tools, strict ignored, defer_loading per version, web search drop, tool_addition."""
    cases: list[Case] = []
    ask = [user("What's the weather in Paris?")]
    cases += both("tools-one", "one tool", lambda m: _req(m, ask, tools=[WEATHER]))
    cases += both(
        "tools-many",
        "four tools incl. one without description",
        lambda m: _req(m, ask, tools=[WEATHER, SEARCH, CALC, NOARGS]),
    )
    cases += both("tools-empty-list", "tools: [] means no tools", lambda m: _req(m, ask, tools=[]))
    cases += both(
        "tools-description-null",
        "a tool with description null",
        lambda m: _req(m, ask, tools=[tool("ping", None, {"type": "object"})]),
    )
    cases += both(
        "tools-schema-rich",
        "schema with enum, default, nested arrays, numbers needing the float rules, non-ASCII",
        lambda m: _req(
            m,
            ask,
            tools=[
                tool(
                    "configure",
                    "Réglages — 設定",
                    obj(
                        {
                            "mode": {"type": "string", "enum": ["fast", "slow", "名前"], "default": "fast"},
                            "ratio": {"type": "number", "minimum": -0.0, "maximum": 1e16, "multipleOf": 1e-7},
                            "big": {
                                "type": "integer",
                                "maximum": 18446744073709551615,
                                "minimum": -9223372036854775808,
                            },
                            "matrix": {
                                "type": "array",
                                "items": {"type": "array", "items": {"type": "number"}},
                            },
                        },
                        required=["mode"],
                    ),
                )
            ],
        ),
    )
    cases += both(
        "tools-strict-ignored",
        "strict true is ignored (no normalisation, strict recorded as null)",
        lambda m: _req(m, ask, tools=[tool("f", "d", obj({"a": {"type": "string"}}), strict=True), CALC]),
    )
    cases += both(
        "tools-extra-fields",
        "cache_control, input_examples and eager_input_streaming on a tool are ignored",
        lambda m: _req(
            m,
            ask,
            tools=[
                tool(
                    "f",
                    "d",
                    {"type": "object"},
                    cache_control={"type": "ephemeral"},
                    input_examples=[{}],
                    eager_input_streaming=True,
                )
            ],
        ),
    )
    cases += both(
        "tools-defer-loading",
        "defer_loading true: V4 renders the tool, V4.1 hides it from the list and marks it in the constraint",
        lambda m: _req(m, ask, tools=[WEATHER, DEFERRED]),
    )
    cases += both(
        "tools-defer-loading-false",
        "defer_loading false explicitly",
        lambda m: _req(m, ask, tools=[tool("f", "d", {"type": "object"}, defer_loading=False)]),
    )
    cases += both(
        "tools-defer-loading-all",
        "every tool deferred is accepted on V4 (V4.1 refuses it)",
        lambda m: _nothink(m, ask, tools=[DEFERRED]),
        only="v4",
    )
    cases += both(
        "tools-names-allowed-characters",
        "tool names using every allowed character class",
        lambda m: _req(
            m, ask, tools=[tool(n, "x", {"type": "object"}) for n in ("A-b_9", "_", "-", "x" * 80, "0")]
        ),
    )
    drop = {"messages_web_search": "drop"}
    for tool_type in ("web_search_20250305", "web_search_20260209"):
        cases += both(
            f"tools-{tool_type.replace('_', '-')}-drop",
            f"{tool_type} removed under messages_web_search=drop",
            lambda m, t=tool_type: _req(m, ask, tools=[WEATHER, {"type": t, "name": "web_search"}]),
            options=drop,
        )
    for order, tools in (
        (
            "first",
            [
                {"type": "web_search_20250305", "name": "web_search"},
                tool("web_search", "x", {"type": "object"}),
            ],
        ),
        (
            "last",
            [
                tool("web_search", "x", {"type": "object"}),
                {"type": "web_search_20250305", "name": "web_search"},
            ],
        ),
    ):
        cases += both(
            f"tool-choice-dropped-web-search-shares-name-{order}",
            f"tool_choice names a dropped web search that a client tool also names (server tool {order}): auto",
            lambda m, t=tools: _nothink(
                m, [user("Search.")], tools=t, tool_choice={"type": "tool", "name": "web_search"}
            ),
            options=drop,
        )
    cases += both(
        "tools-web-search-only-drop",
        "the only tool is web_search, dropped",
        lambda m: _req(m, ask, tools=[WEB_SEARCH]),
        options=drop,
    )
    cases += both(
        "server-blocks-drop",
        "server_tool_use and web_search_tool_result blocks dropped under drop",
        lambda m: _req(
            m,
            [
                user("Search for x."),
                assistant(
                    [
                        thinking("search"),
                        server_tool_use("srvtoolu_1", "x"),
                        web_search_result("srvtoolu_1"),
                        text("Found it."),
                    ]
                ),
                user("Thanks"),
            ],
            tools=[WEATHER, WEB_SEARCH],
        ),
        options=drop,
    )
    cases += both(
        "server-blocks-only-drop",
        "an assistant message made only of server blocks, dropped",
        lambda m: _nothink(
            m,
            [
                user("a"),
                assistant([server_tool_use("srvtoolu_1", "x"), web_search_result("srvtoolu_1")]),
                user("b"),
            ],
        ),
        options=drop,
    )
    # tool_addition blocks (system messages only); V4.1 attaches the tool to the system message, V4 drops it.
    cases += both(
        "tool-addition-system",
        "a role-system message with a tool_addition block and text",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant("b"),
                system_msg([text("Now available:"), tool_addition("lookup")]),
                user("c"),
            ],
            tools=[WEATHER, DEFERRED],
        ),
    )
    cases += both(
        "tool-addition-only",
        "a role-system message made only of a tool_addition block",
        lambda m: _nothink(
            m,
            [user("a"), assistant("b"), system_msg([tool_addition("lookup")]), user("c")],
            tools=[WEATHER, DEFERRED],
        ),
    )
    cases += both(
        "tool-addition-first",
        "a leading role-system message with tool_addition, plus a top-level system",
        lambda m: _req(
            m, [system_msg([tool_addition("lookup")]), user("c")], system="Top.", tools=[WEATHER, DEFERRED]
        ),
    )
    cases += both(
        "tool-addition-two",
        "two tool_addition blocks in one system message",
        lambda m: _nothink(
            m,
            [user("a"), system_msg([tool_addition("lookup"), tool_addition("get_weather")]), user("c")],
            tools=[WEATHER, DEFERRED],
        ),
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.3 tool_choice


def _tool_choice() -> list[Case]:
    """§2.3: tool_choice auto (disable_parallel_tool_use), any (D10), tool, none, deferred named tool."""
    cases: list[Case] = []
    ask = [user("What's the weather in Paris?")]
    tools = [WEATHER, SEARCH]
    cases += both(
        "tool-choice-auto",
        "tool_choice auto",
        lambda m: _req(m, ask, tools=tools, tool_choice={"type": "auto"}),
    )
    cases += both(
        "tool-choice-auto-no-parallel",
        "tool_choice auto with disable_parallel_tool_use true (ignored)",
        lambda m: _req(m, ask, tools=tools, tool_choice={"type": "auto", "disable_parallel_tool_use": True}),
    )
    cases += both(
        "tool-choice-none",
        "tool_choice none hides the tools",
        lambda m: _req(m, ask, tools=tools, tool_choice={"type": "none"}),
    )
    cases += both(
        "tool-choice-none-no-tools",
        "tool_choice none without tools",
        lambda m: _nothink(m, ask, tool_choice={"type": "none"}),
    )
    cases += both(
        "tool-choice-tool-nothink",
        "tool_choice tool filters the tools and prefills the opener",
        lambda m: _nothink(m, ask, tools=[*tools, CALC], tool_choice={"type": "tool", "name": "search"}),
    )
    cases += both(
        "tool-choice-tool-no-parallel-nothink",
        "tool_choice tool with disable_parallel_tool_use",
        lambda m: _nothink(
            m,
            ask,
            tools=tools,
            tool_choice={"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
        ),
    )
    cases += both(
        "tool-choice-tool-no-tools",
        "tool_choice tool without tools becomes auto",
        lambda m: _nothink(m, ask, tool_choice={"type": "tool", "name": "zzz"}),
    )
    cases += both(
        "tool-choice-tool-deferred",
        "tool_choice naming a deferred tool (V4.1: empty schema list, opener prefilled)",
        lambda m: _nothink(m, ask, tools=[WEATHER, DEFERRED], tool_choice={"type": "tool", "name": "lookup"}),
    )
    cases += both(
        "tool-choice-tool-history",
        "tool_choice tool with a tool round in history (nothink)",
        lambda m: _nothink(
            m,
            [
                user("Weather in Paris, then Rome."),
                assistant([tool_use("toolu_1", "get_weather", {"city": "Paris"})]),
                user([tool_result("toolu_1", "Sunny")]),
            ],
            tools=[WEATHER],
            tool_choice={"type": "tool", "name": "get_weather"},
        ),
    )
    # D10: the reference treats "any" like "auto"; dscodec requires a call (and refuses it with thinking).
    cases += both(
        "tool-choice-any-thinking",
        "tool_choice any in thinking mode: the reference treats it as auto (dscodec: 400, D10)",
        lambda m: _req(m, ask, tools=tools, tool_choice={"type": "any"}),
        deviation="D10",
    )
    cases += both(
        "tool-choice-any-nothink",
        "tool_choice any in nothink mode: the reference treats it as auto (dscodec: required, D10)",
        lambda m: _nothink(m, ask, tools=tools, tool_choice={"type": "any"}),
        deviation="D10",
    )
    cases += both(
        "tool-choice-any-no-parallel-nothink",
        "tool_choice any with disable_parallel_tool_use, nothink (D10)",
        lambda m: _nothink(
            m, ask, tools=tools, tool_choice={"type": "any", "disable_parallel_tool_use": True}
        ),
        deviation="D10",
    )
    cases += both(
        "tool-choice-any-no-tools",
        "tool_choice any without tools (D10)",
        lambda m: _nothink(m, ask, tool_choice={"type": "any"}),
        deviation="D10",
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §1.2 model aliases


def _models() -> list[Case]:
    """§1.2: aliases and replaced model tables."""
    return [
        Case(
            name="v4-model-alias",
            description="a custom alias mapped to V4",
            body=_req("claude-sonnet-4-5", [user("Hi")], max_tokens=1024),
            options={"model_aliases": {"claude-sonnet-4-5": "v4"}},
        ),
        Case(
            name="v41-model-alias",
            description="a custom alias mapped to V4.1",
            body=_req("claude-haiku-4-5", [user("Hi")], output_config={"effort": "low"}),
            options={"model_aliases": {"claude-haiku-4-5": "v4.1"}},
        ),
        Case(
            name="v41-model-table-replaced-plus-alias",
            description="a replaced table plus an alias on top",
            body=_nothink("fast", [user("Hi")]),
            options={"model_versions_by_name": {"deepseek-chat": "v4"}, "model_aliases": {"fast": "v4.1"}},
        ),
    ]


# ----------------------------------------------------------------------------------------------------------------
# §4 text corpus and typed special-token spellings


def _everywhere(model: str, value: str, *, thinking_on: bool) -> JSON:
    """A request that puts ``value`` into every user-controlled field that reaches the prompt."""
    messages = [
        user(f"User {value}"),
        assistant(
            [
                thinking(f"Reasoning {value}"),
                text(f"Answer {value}"),
                tool_use("toolu_1", "echo", {"text": value, f"key {value}": [value, {"k": value}]}),
            ]
        ),
        user([tool_result("toolu_1", f"Result {value}"), text(f"After {value}")]),
        system_msg(f"Inline system {value}"),
        user(value),
    ]
    tools = [
        tool(
            "echo", f"Echo {value}", obj({"text": {"type": "string", "description": value, "enum": [value]}})
        )
    ]
    body = _req(model, messages, system=f"System {value}", tools=tools, stop_sequences=[value])
    if not thinking_on:
        body["thinking"] = {"type": "disabled"}
    return body


def _corpus() -> list[Case]:
    """§4: every corpus text alone (nothink) and in every field of a tool conversation (seeded mode choice)."""
    rng = random.Random(20240603)
    cases: list[Case] = []
    for slug, value in CORPUS:
        cases += both(
            f"text-{slug}",
            f"corpus text '{slug}' as the only user message",
            lambda m, v=value: _nothink(m, [user(v)]),
        )
        thinking_on = rng.random() < 0.5
        cases += both(
            f"text-{slug}-everywhere",
            f"corpus text '{slug}' in every field of a tool conversation ({'thinking' if thinking_on else 'nothink'})",
            lambda m, v=value, t=thinking_on: _everywhere(m, v, thinking_on=t),
        )
    return cases


def _specials() -> list[Case]:
    """§3.7/§4: typed special-token spellings stay plain text in every user-controlled field."""
    cases: list[Case] = []
    for slug, value in SPECIALS:
        cases += both(
            f"typed-{slug}-user",
            f"typed {value} in user content stays plain text",
            lambda m, v=value: _nothink(m, [user(f"a{v}b {v}")]),
        )
    for mode in ("think", "nothink"):
        cases += both(
            f"typed-all-everywhere-{mode}",
            f"every typed special spelling in every field of a tool conversation, {mode}",
            lambda m, md=mode: _everywhere(m, ALL_SPECIALS, thinking_on=md == "think"),
        )
        cases += both(
            f"typed-all-tight-everywhere-{mode}",
            f"the spellings written back to back in every field, {mode}",
            lambda m, md=mode: _everywhere(m, ALL_SPECIALS_TIGHT, thinking_on=md == "think"),
        )
    return cases


def _grounding() -> list[Case]:
    """Assistant text and thinking blocks keep the grounding spellings as special tokens (also in a final
    assistant message); tool_use input, tool results, system and user text keep them as plain text."""
    cases: list[Case] = []
    for mode in ("think", "nothink"):

        def make(m: str, md: str = mode) -> JSON:
            body = _req(
                m,
                [
                    user(f"User {GROUNDED}"),
                    assistant(
                        [
                            thinking(f"Thinking {GROUNDED}"),
                            text(f"Answer {GROUNDED}"),
                            tool_use("t1", "echo", {"text": GROUNDED}),
                        ]
                    ),
                    user([tool_result("t1", f"Result {GROUNDED}"), text(GROUNDED_TIGHT)]),
                    assistant([thinking(GROUNDED_TIGHT), text(GROUNDED_TIGHT)]),
                    user("next"),
                    assistant(f"Prefill {GROUNDED}"),
                ],
                system=f"System {GROUNDED}",
                tools=[tool("echo", f"Echo {GROUNDED}", obj({"text": {"type": "string"}}))],
            )
            if md == "nothink":
                body["thinking"] = {"type": "disabled"}
            return body

        cases += both(f"grounding-history-{mode}", f"grounding spellings in every block ({mode})", make)
    return cases


def _escapes() -> list[Case]:
    """JSON escape spellings in the raw body decode as expected."""
    cases: list[Case] = []
    cases += both(
        "body-ascii-escapes",
        "a body written with ensure_ascii escapes (surrogate pairs for emoji)",
        lambda m: Raw(data=json.dumps(_nothink(m, [user("é中😀 \u2028 <｜User｜>")]), ensure_ascii=True)),
    )
    cases += both(
        "body-pretty-crlf",
        "a body with \\/ escapes, pretty whitespace and CRLF line endings",
        lambda m: Raw(
            data=json.dumps(_nothink(m, [user("a/b")], max_tokens=64), indent=2)
            .replace("/", "\\/")
            .replace("\n", "\r\n")
        ),
    )
    cases += both(
        "body-duplicate-key",
        "a duplicated top-level key in the raw body (the last one wins)",
        lambda m: Raw(
            data='{"model": "'
            + m
            + '", "messages": [{"role": "user", "content": "a"}], "temperature": 0.5, "thinking": {"type": "disabled"}, "temperature": 0.7}'
        ),
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# Invalid requests: semantic errors (§1, §2.3), parse errors (D2), precedence


def _invalid_semantic() -> list[Case]:
    """Every semantic error message of §1 and §2.3 that a Messages request can reach, for both versions."""
    cases: list[Case] = []
    q = [user("Hi")]
    tools = [WEATHER, CALC]

    def inv(slug: str, description: str, make: Make, **kw: Any) -> None:
        cases.extend(both(f"invalid-{slug}", description, make, **kw))

    inv("model-unknown", "unknown model name", lambda m: _req("claude-sonnet-4-5", q))
    inv("model-case", "model names are case-sensitive", lambda m: _req(m.upper(), q))
    inv(
        "model-alias-listed",
        "the error lists aliases sorted by byte order",
        lambda m: _req("zzz", q),
        options={"model_aliases": {"my-model": "v4.1", "Alpha": "v4"}},
    )
    inv("messages-empty", "messages: []", lambda m: _req(m, []))
    inv("user-content-empty-list", "a user message with an empty content list", lambda m: _req(m, [user([])]))
    inv(
        "assistant-content-empty-list",
        "an assistant message with an empty content list",
        lambda m: _req(m, [user("a"), assistant([]), user("b")]),
    )
    inv("tool-missing-schema", "a tool without input_schema", lambda m: _req(m, q, tools=[tool("x", "d")]))
    inv(
        "tool-schema-null",
        "a tool with input_schema null",
        lambda m: _req(m, q, tools=[tool("x", "d", None)]),
    )
    inv(
        "tool-schema-empty-object",
        "input_schema {} has no type object",
        lambda m: _req(m, q, tools=[tool("x", "d", {})]),
    )
    inv(
        "tool-schema-string-type",
        "input_schema of type string",
        lambda m: _req(m, q, tools=[tool("x", "d", {"type": "string"})]),
    )
    inv("tool-schema-array", "input_schema is an array", lambda m: _req(m, q, tools=[tool("x", "d", [1])]))
    inv(
        "tool-name-pattern",
        "tool name with a space (path tools[0].name)",
        lambda m: _req(m, q, tools=[tool("my tool", "d", {"type": "object"})]),
    )
    inv(
        "tool-name-dot",
        "tool name with a dot, second tool",
        lambda m: _req(m, q, tools=[WEATHER, tool("a.b", "d", {"type": "object"})]),
    )
    inv("tool-name-empty", "empty tool name", lambda m: _req(m, q, tools=[tool("", "d", {"type": "object"})]))
    inv("tool-name-duplicate", "duplicate tool names", lambda m: _req(m, q, tools=[WEATHER, WEATHER]))
    for slug, server_tool in (
        ("custom", {"type": "custom", "name": "x", "input_schema": {"type": "object"}}),
        ("bash", {"type": "bash_20250124", "name": "bash"}),
        ("text-editor", {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}),
        ("code-execution", {"type": "code_execution_20250825", "name": "code_execution"}),
        ("web-fetch", {"type": "web_fetch_20250910", "name": "web_fetch"}),
        ("memory", {"type": "memory_20250818", "name": "memory"}),
        ("text-editor-20250429", {"type": "text_editor_20250429", "name": "str_replace_based_edit_tool"}),
        ("tool-search-bm25", {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}),
    ):
        inv(
            f"server-tool-{slug}",
            f"a {server_tool['type']} tool (server tools are not supported, even under drop)",
            lambda m, t=server_tool: _req(m, q, tools=[WEATHER, t]),
            options={"messages_web_search": "drop"},
        )
    for slug, role, block in (
        (
            "web-fetch-tool-result",
            "assistant",
            {
                "type": "web_fetch_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"},
            },
        ),
        (
            "code-execution-tool-result",
            "user",
            {
                "type": "code_execution_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": {"type": "code_execution_tool_result_error", "error_code": "unavailable"},
            },
        ),
    ):
        turns = [user("hi"), {"role": role, "content": [block]}, user("go")]
        inv(
            f"block-{slug}",
            f"a {block['type']} block in a {role} message (a block kind the reference does not read)",
            lambda m, t=turns: _req(m, t),
        )
    inv(
        "web-search-reject",
        "web_search under the default messages_web_search=reject",
        lambda m: _req(m, q, tools=[WEATHER, WEB_SEARCH]),
    )
    inv(
        "server-blocks-reject",
        "server_tool_use/web_search_tool_result blocks under reject",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([server_tool_use("srvtoolu_1", "x"), web_search_result("srvtoolu_1"), text("ans")]),
                user("b"),
            ],
        ),
    )
    inv(
        "server-result-in-user",
        "a web_search_tool_result block in a user message",
        lambda m: _req(m, [user([web_search_result("srvtoolu_1"), text("x")])]),
        options={"messages_web_search": "drop"},
    )
    inv(
        "text-after-tool-use",
        "a text block after a tool_use in the same assistant message",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([tool_use("toolu_1", "calc", {}), text("post")]),
                user([tool_result("toolu_1", "r")]),
            ],
            tools=tools,
        ),
    )
    inv(
        "tool-result-missing",
        "one of two tool_use ids without a tool_result",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([tool_use("toolu_1", "calc", {}), tool_use("toolu_2", "calc", {})]),
                user([tool_result("toolu_1", "r")]),
            ],
            tools=tools,
        ),
    )
    inv(
        "tool-use-at-end",
        "a trailing assistant tool_use without results",
        lambda m: _req(m, [user("a"), assistant([tool_use("toolu_1", "calc", {})])], tools=tools),
    )
    inv(
        "tool-result-after-text",
        "text before the tool_result in the answering user message",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([tool_use("toolu_1", "calc", {})]),
                user([text("more"), tool_result("toolu_1", "r")]),
            ],
            tools=tools,
        ),
    )
    inv(
        "tool-result-next-message-plain",
        "the message after a tool_use is plain text",
        lambda m: _req(
            m, [user("a"), assistant([tool_use("toolu_1", "calc", {})]), user("no results")], tools=tools
        ),
    )
    inv(
        "tool-result-unknown-id",
        "a tool_result answering an unknown id",
        lambda m: _req(
            m,
            [user("a"), assistant([tool_use("toolu_1", "calc", {})]), user([tool_result("zz", "r")])],
            tools=tools,
        ),
    )
    inv(
        "tool-result-without-tool-use",
        "a tool_result in the first message",
        lambda m: _req(m, [user([tool_result("zz", "r")])], tools=tools),
    )
    inv(
        "tool-result-in-assistant",
        "a tool_result block in an assistant message",
        lambda m: _req(m, [user("a"), assistant([tool_result("toolu_1", "r")])]),
    )
    inv(
        "tool-use-in-user",
        "a tool_use block in a user message",
        lambda m: _req(m, [user([tool_use("toolu_1", "calc", {})])], tools=tools),
    )
    inv(
        "thinking-in-user",
        "a thinking block in a user message",
        lambda m: _req(m, [user([thinking("x"), text("a")])]),
    )
    inv(
        "tool-reference-unknown",
        "a tool_reference naming an unknown tool",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([tool_use("toolu_1", "calc", {})]),
                user([tool_result("toolu_1", [tool_reference("zz")])]),
            ],
            tools=tools,
        ),
    )
    inv(
        "tool-addition-in-user",
        "a tool_addition block in a user message",
        lambda m: _req(m, [user("a"), assistant("b"), user([tool_addition("calc")])], tools=tools),
    )
    inv(
        "tool-addition-unknown",
        "a tool_addition naming an unknown tool",
        lambda m: _req(m, [system_msg([tool_addition("zz")]), user("a")], tools=tools),
    )
    reject = {"reasoning_content_behavior": "reject"}
    inv(
        "reasoning-reject-current-turn",
        "reject: the current tool_use turn has no thinking block",
        lambda m: _req(
            m,
            [user("a"), assistant([tool_use("toolu_1", "calc", {})]), user([tool_result("toolu_1", "r")])],
            tools=tools,
        ),
        options=reject,
    )
    inv(
        "reasoning-reject-second-turn",
        "reject: the second tool_use turn after the last user text lacks thinking",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant([thinking("r"), tool_use("toolu_1", "calc", {})]),
                user([tool_result("toolu_1", "r")]),
                assistant([tool_use("toolu_2", "calc", {})]),
                user([tool_result("toolu_2", "r")]),
            ],
            tools=tools,
        ),
        options=reject,
    )
    inv(
        "tool-choice-tool-thinking",
        "tool_choice tool in thinking mode",
        lambda m: _req(m, q, tools=tools, tool_choice={"type": "tool", "name": "calc"}),
    )
    inv(
        "tool-choice-tool-unknown",
        "tool_choice naming an undeclared tool",
        lambda m: _nothink(m, q, tools=tools, tool_choice={"type": "tool", "name": "zzz"}),
    )
    inv(
        "stop-too-many", "17 stop sequences", lambda m: _req(m, q, stop_sequences=[str(i) for i in range(17)])
    )
    inv(
        "stop-empty-string",
        "an empty string among the stop sequences (path stop[1])",
        lambda m: _req(m, q, stop_sequences=["a", ""]),
    )
    inv("stop-empty-first", "an empty first stop sequence", lambda m: _req(m, q, stop_sequences=[""]))
    inv("temperature-high", "temperature above 2", lambda m: _req(m, q, temperature=2.5))
    inv("temperature-negative", "negative temperature", lambda m: _nothink(m, q, temperature=-0.5))
    inv("top-p-zero", "top_p 0", lambda m: _nothink(m, q, top_p=0))
    inv("top-p-high", "top_p above 1", lambda m: _req(m, q, top_p=1.01))
    inv("max-tokens-zero", "max_tokens 0", lambda m: _req(m, q, max_tokens=0))
    inv("max-tokens-zero-nothink", "max_tokens 0, nothink", lambda m: _nothink(m, q, max_tokens=0))
    cases.append(
        Case(
            name="v41-invalid-tools-all-deferred",
            description="V4.1 refuses a request whose tools are all deferred",
            body=_nothink(V41, q, tools=[DEFERRED]),
        )
    )
    cases.append(
        Case(
            name="v41-invalid-tool-addition-all-deferred",
            description="V4.1: a tool_addition of the only (deferred) tool",
            body=_req(V41, [system_msg([tool_addition("lookup")]), user("a")], tools=[DEFERRED]),
        )
    )
    for slug, description, block in (
        ("image-ftp-url", "V4.1 refuses an ftp image URL", image_url("ftp://example.com/a.png")),
        ("image-relative-url", "V4.1 refuses a relative image URL", image_url("a.png")),
        (
            "image-file-source",
            "V4.1 refuses an image file source",
            {"type": "image", "source": {"type": "file", "file_id": "file_1"}},
        ),
    ):
        cases.append(
            Case(
                name=f"v41-invalid-{slug}",
                description=description,
                body=_nothink(V41, [user([text("x"), block])]),
            )
        )
    cases.append(
        Case(
            name="v41-invalid-image-in-assistant",
            description="V4.1 refuses an image in an assistant message",
            body=_nothink(
                V41, [user("a"), assistant([image_url("https://example.com/a.png"), text("x")]), user("b")]
            ),
        )
    )
    # An image link longer than 8192 UTF-8 bytes (blocks are checked in order: a bad block before it wins).
    long_link = "http://x/" + "a" * 8184
    for name, description, body in (
        (
            "v41-image-link-8192-bytes",
            "an image link of exactly 8192 bytes is taken",
            _nothink(V41, [user([text("x"), image_url("http://x/" + "a" * 8183)])]),
        ),
        (
            "v41-invalid-image-link-too-long",
            "an image link of 8193 bytes",
            _nothink(V41, [user([text("x"), image_url(long_link)])]),
        ),
        (
            "v41-invalid-image-link-too-long-after-bad-base64",
            "a bad base64 image before a link too long: the first block's error",
            _nothink(V41, [user([image_b64(data="!!"), image_url(long_link)])]),
        ),
        (
            "v41-invalid-image-link-too-long-in-tool-result",
            "an image link too long inside a tool result",
            _nothink(
                V41,
                [
                    user("a"),
                    assistant([tool_use("toolu_1", "calc", {})]),
                    user([tool_result("toolu_1", [text("r"), image_url(long_link)])]),
                ],
                tools=tools,
            ),
        ),
    ):
        cases.append(Case(name=name, description=description, body=body))
    cases.append(
        Case(
            name="v41-invalid-image-ftp-in-tool-result",
            description="V4.1 validates images inside tool results too",
            body=_nothink(
                V41,
                [
                    user("a"),
                    assistant([tool_use("toolu_1", "calc", {})]),
                    user([tool_result("toolu_1", [image_url("ftp://x/y.png")])]),
                ],
                tools=tools,
            ),
        )
    )
    return cases


def _invalid_parse() -> list[Case]:
    """Deviation D2: bodies the reference refuses while parsing (bare ValueError; dscodec answers 400)."""
    cases: list[Case] = []

    def raw(slug: str, description: str, data: str | bytes) -> None:
        cases.append(Case(name=f"v4-invalid-parse-{slug}", description=description, body=Raw(data=data)))

    raw("not-json", "body is not JSON", "not json")
    raw("invalid-utf8", "body is not UTF-8", b"\xff\xfe{}")
    raw("empty-body", "empty body", "")
    raw("array", "body is an empty array", "[]")
    raw("null", "body is null", "null")
    raw("number", "body is a number", "1")
    raw("truncated", "body cut in the middle", '{"model": "DeepSeek-V4-Pro", "messages": [')
    raw(
        "trailing-garbage",
        "valid object followed by garbage",
        '{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "a"}]} x',
    )
    raw(
        "nan",
        "NaN literal",
        '{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "a"}], "temperature": NaN}',
    )

    def body(slug: str, description: str, value: Any, prefix: str = "v4") -> None:
        cases.append(Case(name=f"{prefix}-invalid-parse-{slug}", description=description, body=value))

    q = [user("Hi")]
    body("missing-messages", "no messages field", {"model": V4, "max_tokens": 10})
    body("missing-model", "no model field", {"messages": q})
    body(
        "message-empty-array",
        "a message given as an empty array",
        {"model": V4, "max_tokens": 10, "messages": [[]]},
    )
    body(
        "messages-object",
        "messages is an object",
        {"model": V4, "messages": {"role": "user", "content": "a"}},
    )
    body("message-not-object", "a message is a string", _req(V4, ["hi"]))
    body("role-missing", "message without role", _req(V4, [{"content": "a"}]))
    body("role-tool", "role tool is unknown", _req(V4, [{"role": "tool", "content": "a"}]))
    body(
        "role-developer",
        "role developer is unknown",
        _req(V41, [{"role": "developer", "content": "a"}]),
        "v41",
    )
    body("content-null", "user content null", _req(V4, [user(None)]))
    body("content-missing", "user content missing", _req(V4, [{"role": "user"}]))
    body("content-number", "user content is a number", _req(V4, [user(5)]))
    body("block-missing-type", "a block without type", _req(V4, [user([{"text": "a"}])]))
    body("block-text-missing", "a text block without text", _req(V4, [user([{"type": "text"}])]))
    body(
        "block-redacted-thinking",
        "a redacted_thinking block",
        _req(V4, [user("a"), assistant([{"type": "redacted_thinking", "data": "zz"}, text("x")]), user("b")]),
    )
    body(
        "block-redacted-thinking-v41",
        "a redacted_thinking block (V4.1)",
        _req(
            V41, [user("a"), assistant([{"type": "redacted_thinking", "data": "zz"}, text("x")]), user("b")]
        ),
        "v41",
    )
    body(
        "block-search-result",
        "a search_result block",
        _req(V4, [user([{"type": "search_result", "source": "s", "title": "t", "content": [text("x")]}])]),
    )
    body(
        "block-container-upload",
        "a container_upload block",
        _req(V4, [user([{"type": "container_upload", "file_id": "f"}])]),
    )
    body(
        "image-media-type-bmp",
        "an image/bmp base64 image",
        _req(V41, [user([image_b64("image/bmp")])]),
        "v41",
    )
    body("image-missing-source", "an image block without source", _req(V4, [user([{"type": "image"}])]))
    body(
        "image-source-bogus",
        "an image source of an unknown type",
        _req(V4, [user([{"type": "image", "source": {"type": "path", "path": "/x"}}])]),
    )
    body(
        "system-image-block",
        "an image block in the top-level system",
        _req(V4, q, system=[image_url("https://x/a.png")]),
    )
    body("system-number", "system as a number", _req(V4, q, system=5))
    body(
        "thinking-block-missing-thinking",
        "a thinking block without thinking",
        _req(V4, [user("a"), assistant([{"type": "thinking", "signature": "s"}]), user("b")]),
    )
    body(
        "tool-use-missing-id",
        "a tool_use block without id",
        _req(V4, [user("a"), assistant([{"type": "tool_use", "name": "f", "input": {}}])]),
    )
    body(
        "tool-use-missing-input",
        "a tool_use block without input",
        _req(V4, [user("a"), assistant([{"type": "tool_use", "id": "t", "name": "f"}])]),
    )
    body(
        "tool-result-nested-tool-result",
        "a tool_result inside a tool_result",
        _req(
            V4,
            [
                user("a"),
                assistant([tool_use("t1", "f", {})]),
                user([tool_result("t1", [tool_result("x", "y")])]),
            ],
        ),
    )
    body(
        "tool-result-thinking-block",
        "a thinking block inside a tool_result",
        _req(
            V41, [user("a"), assistant([tool_use("t1", "f", {})]), user([tool_result("t1", [thinking("x")])])]
        ),
        "v41",
    )
    body(
        "tool-result-missing-id",
        "a tool_result without tool_use_id",
        _req(V4, [user([{"type": "tool_result", "content": "x"}])]),
    )
    body(
        "tool-missing-name", "a tool without name", _req(V4, q, tools=[{"input_schema": {"type": "object"}}])
    )
    body(
        "tool-type-null",
        "a tool with type null",
        _req(V4, q, tools=[{"type": None, "name": "x", "input_schema": {"type": "object"}}]),
    )
    body("tools-object", "tools is an object", _req(V4, q, tools={"name": "x"}))
    body("tool-choice-string", "tool_choice as a string", _req(V4, q, tools=[WEATHER], tool_choice="auto"))
    body(
        "tool-choice-bogus",
        "tool_choice of an unknown type",
        _req(V4, q, tools=[WEATHER], tool_choice={"type": "required"}),
    )
    body(
        "tool-choice-tool-missing-name",
        "tool_choice tool without name",
        _req(V4, q, tools=[WEATHER], tool_choice={"type": "tool"}),
    )
    body("thinking-true", "thinking: true", _req(V4, q, thinking=True))
    body("thinking-bogus", "unknown thinking type", _req(V4, q, thinking={"type": "bogus"}))
    body(
        "thinking-missing-type", "thinking object without type", _req(V4, q, thinking={"budget_tokens": 1024})
    )
    body(
        "effort-unknown",
        "output_config.effort extreme",
        _req(V41, q, output_config={"effort": "extreme"}),
        "v41",
    )
    body("effort-uppercase", "output_config.effort HIGH", _req(V4, q, output_config={"effort": "HIGH"}))
    body("output-config-string", "output_config as a string", _req(V4, q, output_config="high"))
    body("metadata-string", "metadata as a string", _req(V4, q, metadata="x"))
    body("metadata-user-id-number", "metadata.user_id as a number", _req(V4, q, metadata={"user_id": 5}))
    body("stop-sequences-string", "stop_sequences as a string", _req(V4, q, stop_sequences="x"))
    body("stop-sequences-number", "a number among stop_sequences", _req(V4, q, stop_sequences=["a", 1]))
    body("max-tokens-negative", "max_tokens -1", _req(V4, q, max_tokens=-1))
    body("max-tokens-float", "max_tokens 1.5", _req(V4, q, max_tokens=1.5))
    body("max-tokens-string", "max_tokens as a string", _req(V4, q, max_tokens="10"))
    body("max-tokens-u32-overflow", "max_tokens 2^32", _req(V4, q, max_tokens=2**32))
    body("temperature-string", "temperature as a string", _req(V4, q, temperature="1"))
    body("stream-string", "stream as a string", _req(V4, q, stream="true"))
    return cases


def _invalid_precedence() -> list[Case]:
    """Validation order for Messages: pairs of errors showing which check wins."""
    triggers: tuple[tuple[str, Callable[[JSON], None]], ...] = (
        ("model", lambda b: b.update(model="nope")),
        ("tools", lambda b: b.update(tools=[tool("bad name", "d", {"type": "object"})])),
        ("messages", lambda b: b["messages"].append(user([tool_result("zz", "r")]))),
        (
            "tool-choice",
            lambda b: b.update(
                tools=b.get("tools", [WEATHER]), tool_choice={"type": "tool", "name": "get_weather"}
            ),
        ),
        ("stop", lambda b: b.update(stop_sequences=[""])),
        ("temperature", lambda b: b.update(temperature=3)),
        ("top-p", lambda b: b.update(top_p=2)),
        ("max-tokens", lambda b: b.update(max_tokens=0)),
    )
    cases: list[Case] = []

    def build(model: str, names: set[str]) -> JSON:
        b = _req(model, [user("Hi")])
        for name, apply in triggers:
            if name in names:
                apply(b)
        return b

    for i in range(len(triggers) - 1):
        first, second = triggers[i][0], triggers[i + 1][0]
        cases += both(
            f"invalid-order-{first}-vs-{second}",
            f"{first} and {second} errors together: the {first} check comes first",
            lambda m, a=first, b=second: build(m, {a, b}),
        )
    cases += both(
        "invalid-order-all",
        "every semantic error at once: the model check wins",
        lambda m: build(m, {n for n, _ in triggers}),
    )
    cases += both(
        "invalid-order-all-but-model",
        "every semantic error but the model: the tools check wins",
        lambda m: build(m, {n for n, _ in triggers if n != "model"}),
    )
    cases += both(
        "invalid-order-web-search-vs-messages",
        "web_search under reject together with an unknown tool_result id",
        lambda m: _req(m, [user([tool_result("zz", "r")])], tools=[WEB_SEARCH]),
    )
    cases += both(
        "invalid-order-parse-beats-semantic",
        "a parse error (max_tokens -1) beats an unknown model",
        lambda m: _req("nope", [user("Hi")], max_tokens=-1),
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# Hardening: the JSON reader's depth limit, -0, very many tools and calls, stop sequence length (deviation D16)

#: Stands for the deep ``tool_use.input`` in a body; replaced by the exact JSON text (see :func:`_deep_input`).
_DEEP_INPUT = "__deep_input__"


def _deep_input(body: JSON, value: str) -> Raw:
    """``body`` as exact bytes, with the :data:`_DEEP_INPUT` string replaced by the JSON text ``value``."""
    data = json.dumps(body, ensure_ascii=False).replace(f'"{_DEEP_INPUT}"', value)
    return Raw(data=data.encode("utf-8"))


def _hardening() -> list[Case]:
    """Hostile shapes at their limits: history ``tool_use.input`` nested up to and past the body's depth limit
    (the input sits at depth 5, so 122 levels reach 127), with and without ``-0``; bodies nested to the limit with
    ``-0``; 2,000 tools with a duplicate name at the very end; 100 parallel calls with results in reverse order;
    schema arrays with a duplicate at the end; stop sequences at and over dscodec's length cap (D16)."""
    cases: list[Case] = []
    # body 1, messages 2, message 3, content 4, block 5: the input's innermost level is at 5 + depth.
    for depth, valid in ((121, True), (122, True), (123, False), (1000, False)):
        for kind in DEEP_KINDS:
            slug = f"deep-input-{kind}-{depth}" if valid else f"invalid-parse-deep-input-{kind}-{depth}"
            cases += both(
                slug,
                f"history tool_use.input nested {depth} deep ({kind}): body depth {5 + depth}",
                lambda m, d=depth, k=kind: _deep_input(
                    _req(
                        m,
                        [
                            user("Go"),
                            assistant([tool_use("c1", "probe", _DEEP_INPUT)]),
                            user([tool_result("c1", "done")]),
                        ],
                    ),
                    deep_json(d, k),
                ),
            )
    for depth in (126, 127):
        cases += both(
            f"body-negzero-depth-{depth}",
            f"an unknown field holding -0 at body depth {depth}",
            lambda m, d=depth: deep_field(_req(m, [user("Hi")]), d),
        )
    for depth in (128, 1000):
        cases += both(
            f"invalid-parse-body-negzero-depth-{depth}",
            f"an unknown field holding -0 at body depth {depth}: beyond the reader's limit",
            lambda m, d=depth: deep_field(_req(m, [user("Hi")]), d),
        )
    # body 1, tools 2, tool 3, input_schema 4, properties 5, "a" 6: 121 nested items reach depth 127.
    cases += both(
        "body-negzero-schema-depth-127",
        "a tool schema nested to body depth 127 whose innermost default is -0",
        lambda m: with_negzero(
            _req(
                m,
                [user("Hi")],
                tools=[
                    tool(
                        "probe",
                        "Probe.",
                        obj({"a": nested_items_schema(121, {"type": "number", "default": NEGZERO})}),
                    )
                ],
            )
        ),
    )
    cases += both(
        "invalid-parse-body-negzero-schema-depth-128",
        "a tool schema nested to body depth 127 whose innermost enum array (depth 128) holds -0",
        lambda m: with_negzero(
            _req(
                m,
                [user("Hi")],
                tools=[
                    tool(
                        "probe",
                        "Probe.",
                        obj({"a": nested_items_schema(121, {"type": "number", "enum": [NEGZERO]})}),
                    )
                ],
            )
        ),
    )

    many = [tool(f"t{i}", input_schema={"type": "object"}) for i in range(MANY_TOOLS)]
    bad_schema = tool("bad", input_schema={"type": "string"})
    cases += both(
        "invalid-many-tools-duplicate-last",
        f"{MANY_TOOLS} tools, the last one repeating the first one's name",
        lambda m: _req(m, [user("Hi")], tools=[*many, many[0]]),
        only="v4",
    )
    cases += both(
        "invalid-order-tool-schema-vs-later-duplicate",
        "a bad schema in the middle of many tools and a repeated name at the end: per tool, so the schema wins",
        lambda m: _req(m, [user("Hi")], tools=[*many[:1000], bad_schema, *many[1000:], many[0]]),
        only="v4",
    )
    cases += both(
        "invalid-order-tool-duplicate-vs-later-schema",
        "a repeated name in the middle of many tools and a bad schema at the end: the name wins",
        lambda m: _req(m, [user("Hi")], tools=[*many[:1000], many[0], *many[1000:], bad_schema]),
        only="v4",
    )

    uses = [tool_use(f"c{i}", "probe", {"i": i}) for i in range(MANY_CALLS)]
    results = [tool_result(f"c{i}", f"r{i}") for i in reversed(range(MANY_CALLS))]
    cases += both(
        "many-parallel-calls-reversed-results",
        f"{MANY_CALLS} parallel tool_use blocks answered in reverse order",
        lambda m: _nothink(m, [user("Go"), assistant(uses), user([*results, text("Next")])]),
    )
    cases += both(
        "invalid-many-parallel-calls-duplicate-id-last",
        f"{MANY_CALLS} parallel tool_use blocks, the last one repeating the first one's id",
        lambda m: _nothink(m, [user("Go"), assistant([*uses, tool_use("c0", "probe", {})]), user(results)]),
    )
    cases += both(
        "invalid-many-parallel-results-duplicate-last",
        f"{MANY_CALLS} parallel calls answered in reverse order, then one answered again",
        lambda m: _nothink(m, [user("Go"), assistant(uses), user([*results, tool_result("c1", "again")])]),
    )
    cases += both(
        "invalid-many-parallel-results-one-missing",
        f"{MANY_CALLS} parallel calls answered in reverse order but one, then a text block",
        lambda m: _nothink(m, [user("Go"), assistant(uses), user([*results[:-1], text("Next")])]),
    )
    cases += both(
        "many-assistant-text-blocks",
        "an assistant message of 500 text blocks, empty ones first and in between",
        lambda m: _nothink(
            m,
            [
                user("Go"),
                assistant([text(""), text(""), *(text(f"b{i}" if i % 3 else "") for i in range(500))]),
                user("Next"),
            ],
        ),
    )

    names = [f"p{i}" for i in range(MANY_TOOLS)]
    wide = {name: {"type": "string"} for name in names}
    cases += both(
        "invalid-schema-required-not-strings-repeated",
        "a required list with a number first and an object twice: its repeats are reported before its types",
        lambda m: _req(
            m, [user("Hi")], tools=[tool("probe", input_schema=obj({}, required=[1, {"a": 1}, {"a": 1}]))]
        ),
        only="v4",
    )
    cases += both(
        "invalid-schema-required-duplicate-last",
        f"a schema with {MANY_TOOLS} required properties, the last name repeating the first",
        lambda m: _req(
            m, [user("Hi")], tools=[tool("probe", input_schema=obj(wide, required=[*names, "p0"]))]
        ),
        only="v4",
    )

    at_cap = "s" * 4096
    over_cap = "s" * 4097
    cases += both(
        "stop-at-length-cap",
        "a stop sequence of exactly 4,096 characters among others",
        lambda m: _req(m, [user("Hi")], stop_sequences=["a", "b", "c", at_cap]),
    )
    cases += both(
        "stop-over-length-cap",
        "a stop sequence of 4,097 characters at index 3: refused by dscodec (D16), accepted by the reference",
        lambda m: _req(m, [user("Hi")], stop_sequences=["a", "b", "c", over_cap]),
        deviation="D16",
    )
    cases += both(
        "invalid-order-stop-empty-vs-stop-length",
        "an over-long stop sequence before an empty one: the reference's empty-string error wins",
        lambda m: _req(m, [user("Hi")], stop_sequences=[over_cap, ""]),
    )
    cases += both(
        "invalid-order-max-tokens-vs-stop-length",
        "an over-long stop sequence and max_tokens 0: the max_tokens error (the reference's last check) wins",
        lambda m: _req(m, [user("Hi")], stop_sequences=[over_cap], max_tokens=0),
    )
    cases += both(
        "invalid-order-temperature-vs-stop-length",
        "an over-long stop sequence and a temperature out of range: the temperature error wins",
        lambda m: _nothink(m, [user("Hi")], stop_sequences=[over_cap], temperature=3),
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# Found by tools/diff_fuzz.py: the tool-name length is counted in UTF-8 bytes.


def _fuzz_findings() -> list[Case]:
    cases: list[Case] = []
    for slug, name in (("e-acute-65", "é" * 65), ("cjk-43", "中" * 43), ("e-acute-64", "é" * 64)):
        cases += both(
            f"invalid-tool-name-bytes-{slug}",
            "a non-ASCII tool name: its length is counted in UTF-8 bytes (128 at most), before the pattern",
            lambda m, n=name: _nothink(
                m, [user("hi")], max_tokens=64, tools=[tool(n, "d", {"type": "object", "properties": {}})]
            ),
        )
    return cases


def cases() -> list[Case]:
    """All Messages golden cases, in a stable order."""
    return [
        *_thinking(),
        *_sampling(),
        *_system(),
        *_user_content(),
        *_assistant(),
        *_tool_results(),
        *_tools(),
        *_tool_choice(),
        *_models(),
        *_corpus(),
        *_specials(),
        *_grounding(),
        *_escapes(),
        *_invalid_semantic(),
        *_invalid_parse(),
        *_invalid_precedence(),
        *_hardening(),
        *_fuzz_findings(),
    ]
