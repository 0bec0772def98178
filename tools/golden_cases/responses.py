"""Golden cases for OpenAI Responses requests (request path: body -> conversation -> prompt -> ids).

Each ``_section`` function returns the cases of one topic of the spec (BEHAVIOR.md §1, §2.2, §2.5-§2.7, §3.9) and
says in its docstring what it covers. Scenarios are built for both model versions with :func:`both`, which names
them ``v4-<slug>`` and ``v41-<slug>``. Names containing ``-invalid-`` must be refused by the reference (a
``ConversionError``, or a bare ``ValueError`` for malformed bodies, deviation D2); the recorder checks this.

Besides the conversion, every Responses case records the request's echo fields and its namespace tool map
(``RECORD_ECHO``). Unknown input item types are recorded as the reference handles them (dropped) and marked with
deviation D9, because dscodec refuses them.

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
    DEEP_DEPTHS,
    DEEP_KINDS,
    GROUNDED,
    GROUNDED_TIGHT,
    MANY_CALLS,
    MANY_TOOLS,
    NEGZERO,
    PNG_DATA_URL,
    SPECIALS,
    deep_field,
    deep_json,
    nested_items_schema,
    with_negzero,
)

PROTOCOL = "responses"
REQUEST_CLASS = "ResponsesRequest"
RECORD_ECHO = True

V4 = "DeepSeek-V4-Pro"
V41 = "DeepSeek-V4.1-Flash"

_ABSENT: Any = object()

JSON = dict[str, Any]
Make = Callable[..., Any]

# ----------------------------------------------------------------------------------------------------------------
# Body builders. They only add a key when it is given, so each case shows exactly the fields it sends.


def _req(model: str, input: Any = _ABSENT, **fields: Any) -> JSON:
    body: JSON = {"model": model}
    if input is not _ABSENT:
        body["input"] = input
    body.update({k: v for k, v in fields.items() if v is not _ABSENT})
    return body


def _nothink(model: str, input: Any = _ABSENT, **fields: Any) -> JSON:
    """Thinking off: Responses has no switch, ``reasoning.effort: "none"`` turns it off (§1.3)."""
    return _req(model, input, reasoning={"effort": "none"}, **fields)


def user(content: Any) -> JSON:
    return {"role": "user", "content": content}


def system(content: Any) -> JSON:
    return {"role": "system", "content": content}


def developer(content: Any) -> JSON:
    return {"role": "developer", "content": content}


def assistant(content: Any) -> JSON:
    return {"role": "assistant", "content": content}


def message(role: str, content: Any, **extra: Any) -> JSON:
    """An input item spelled with its explicit ``type: "message"`` (and any id/status/phase fields)."""
    return {"type": "message", "role": role, "content": content, **extra}


def itext(value: str) -> JSON:
    return {"type": "input_text", "text": value}


def otext(value: str) -> JSON:
    return {"type": "output_text", "text": value, "annotations": []}


def iimage(url: str | None = None, detail: str | None = None, *, file_id: str | None = None) -> JSON:
    part: JSON = {"type": "input_image"}
    if url is not None:
        part["image_url"] = url
    if file_id is not None:
        part["file_id"] = file_id
    if detail is not None:
        part["detail"] = detail
    return part


def ifile(**fields: Any) -> JSON:
    return {"type": "input_file", **fields}


def fcall(call_id: str, name: str, arguments: Any, **extra: Any) -> JSON:
    """A historical function call; ``arguments`` is sent verbatim when a string, else as compact JSON text."""
    text = (
        arguments
        if isinstance(arguments, str)
        else json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    )
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": text, **extra}


def fout(call_id: str, output: Any, **extra: Any) -> JSON:
    return {"type": "function_call_output", "call_id": call_id, "output": output, **extra}


def ccall(call_id: str, name: str, input: str, **extra: Any) -> JSON:
    return {"type": "custom_tool_call", "call_id": call_id, "name": name, "input": input, **extra}


def cout(call_id: str, output: Any, **extra: Any) -> JSON:
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": output, **extra}


def reasoning(
    *texts: str, summary: list[str] | None = None, encrypted: str | None = None, content: bool = True
) -> JSON:
    """A reasoning item: ``texts`` become ``reasoning_text`` content parts (``content=False`` omits the key)."""
    item: JSON = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": s} for s in summary or []],
    }
    if content:
        item["content"] = [{"type": "reasoning_text", "text": t} for t in texts]
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def fn(
    name: str,
    description: Any = _ABSENT,
    parameters: Any = _ABSENT,
    *,
    strict: Any = _ABSENT,
    defer_loading: Any = _ABSENT,
) -> JSON:
    """A flat Responses function tool."""
    tool: JSON = {"type": "function", "name": name}
    for key, value in (
        ("description", description),
        ("parameters", parameters),
        ("strict", strict),
        ("defer_loading", defer_loading),
    ):
        if value is not _ABSENT:
            tool[key] = value
    return tool


def namespace(name: str, tools: list[JSON], description: Any = _ABSENT) -> JSON:
    ns: JSON = {"type": "namespace", "name": name, "tools": tools}
    if description is not _ABSENT:
        ns["description"] = description
    return ns


def obj(properties: Mapping[str, Any], **extra: Any) -> JSON:
    return {"type": "object", "properties": dict(properties), **extra}


WEATHER = fn(
    "get_weather",
    "Get the current weather for a city.",
    obj(
        {"city": {"type": "string", "description": "City name"}, "days": {"type": "integer"}},
        required=["city"],
    ),
)
SEARCH = fn(
    "search",
    "Search the web and return the top results.",
    obj(
        {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 10}},
        required=["query"],
    ),
)
CALC = fn("calc", parameters=obj({"expr": {"type": "string"}}))
NOARGS = fn("now", "Current UTC time.")
APPLY_PATCH: JSON = {"type": "custom", "name": "apply_patch"}
GITHUB = namespace(
    "gh",
    [
        fn("create_issue", "Open an issue.", obj({"title": {"type": "string"}}, required=["title"])),
        fn("list_repos"),
    ],
    "GitHub tools",
)


# ----------------------------------------------------------------------------------------------------------------
# §1.3 thinking mode and reasoning effort


EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max")


def _history() -> list[JSON]:
    return [
        system("You are terse."),
        user("What is 2+2?"),
        reasoning("Simple arithmetic."),
        assistant([otext("4")]),
        user("And 3+3?"),
    ]


def _thinking() -> list[Case]:
    """§1.3: every reasoning.effort value, reasoning null/{}, summary fields, default_thinking_mode off."""
    cases: list[Case] = []
    cases += both(
        "thinking-default",
        "no reasoning object: default thinking on, effort high",
        lambda m: _req(m, _history()),
    )
    for effort in EFFORTS:
        cases += both(
            f"effort-{effort}",
            f"reasoning.effort={effort} (none turns thinking off)",
            lambda m, e=effort: _req(m, _history(), reasoning={"effort": e}),
        )
        cases += both(
            f"effort-{effort}-summary-auto",
            f"reasoning.effort={effort} with summary auto (summary is ignored)",
            lambda m, e=effort: _req(m, [user("Hi")], reasoning={"effort": e, "summary": "auto"}),
        )
    cases += both(
        "reasoning-null", "reasoning: null behaves like absent", lambda m: _req(m, _history(), reasoning=None)
    )
    cases += both(
        "reasoning-empty", "reasoning: {} behaves like absent", lambda m: _req(m, _history(), reasoning={})
    )
    cases += both(
        "reasoning-effort-null",
        "reasoning.effort null with a summary",
        lambda m: _req(m, [user("Hi")], reasoning={"effort": None, "summary": "detailed"}),
    )
    cases += both(
        "reasoning-summary-concise",
        "reasoning with only summary concise",
        lambda m: _req(m, [user("Hi")], reasoning={"summary": "concise"}),
    )
    cases += both(
        "reasoning-generate-summary",
        "the deprecated generate_summary key is ignored",
        lambda m: _req(m, [user("Hi")], reasoning={"effort": "low", "generate_summary": "auto"}),
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
        lambda m: _req(m, _history(), reasoning={"effort": "low"}),
        options=off,
    )
    cases += both(
        "default-off-effort-none",
        "default_thinking_mode false, effort none stays off",
        lambda m: _req(m, _history(), reasoning={"effort": "none"}),
        options=off,
    )
    cases += both(
        "default-off-reasoning-empty",
        "default_thinking_mode false, reasoning: {} keeps the default",
        lambda m: _req(m, _history(), reasoning={}),
        options=off,
    )
    for effort in ("low", "max", "xhigh"):
        cases += both(
            f"effort-{effort}-tools-history",
            f"effort {effort} with tools and a tool round (history reasoning kept with tools)",
            lambda m, e=effort: _req(
                m,
                [
                    system("Use tools when needed."),
                    user("Weather in Oslo?"),
                    reasoning("Call the tool."),
                    fcall("c1", "get_weather", {"city": "Oslo"}),
                    fout("c1", "Rain, 7C"),
                ],
                tools=[WEATHER],
                reasoning={"effort": e},
            ),
        )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §1.4 sampling parameters, max_output_tokens and top_logprobs (also recorded through echo())


def _sampling() -> list[Case]:
    """§1.4/§2.2: temperature/top_p in each mode, max_output_tokens bounds, top_logprobs, echo values."""
    cases: list[Case] = []
    pairs = ((0, 0.01), (2, 1), (0.3, 0.3), (1, 0.96))
    modes: tuple[tuple[str, Callable[[str, JSON], JSON]], ...] = (
        ("think", lambda m, f: _req(m, "Pick a number.", **f)),
        ("think-tools", lambda m, f: _req(m, "Weather in Rome?", tools=[WEATHER], **f)),
        (
            "think-tools-choice-none",
            lambda m, f: _req(m, "Weather in Rome?", tools=[WEATHER], tool_choice="none", **f),
        ),
        ("nothink", lambda m, f: _nothink(m, "Pick a number.", **f)),
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
        "sampling-nulls",
        "temperature, top_p, max_output_tokens and top_logprobs sent as null",
        lambda m: _req(m, "Hi", temperature=None, top_p=None, max_output_tokens=None, top_logprobs=None),
    )
    q = "Summarise the plot of Hamlet."
    for slug, fields in (
        ("max-output-tokens-1", {"max_output_tokens": 1}),
        ("max-output-tokens-100", {"max_output_tokens": 100}),
        ("max-output-tokens-upper-bound", {"max_output_tokens": 393216}),
    ):
        cases += both(slug, f"thinking with {fields}", lambda m, f=fields: _req(m, q, **f))
        cases += both(f"nothink-{slug}", f"nothink with {fields}", lambda m, f=fields: _nothink(m, q, **f))
    cases += both(
        "max-output-tokens-effort-max-default",
        "effort max without max_output_tokens (default 131072 in resolution)",
        lambda m: _req(m, q, reasoning={"effort": "max"}),
    )
    cases += both(
        "max-output-tokens-custom-thinking-bound",
        "max_output_tokens equal to a custom thinking upper bound",
        lambda m: _req(m, q, max_output_tokens=1000),
        options={"thinking_max_tokens_upper_bound": 1000},
    )
    cases += both(
        "max-output-tokens-custom-nothink-bound",
        "nothink max_output_tokens above the thinking bound but within the non-thinking bound",
        lambda m: _nothink(m, q, max_output_tokens=4000),
        options={"thinking_max_tokens_upper_bound": 1000, "non_thinking_max_tokens_upper_bound": 4000},
    )
    cases += both("top-logprobs-0", "top_logprobs 0 turns logprobs on", lambda m: _req(m, q, top_logprobs=0))
    cases += both(
        "top-logprobs-20", "top_logprobs at its maximum 20", lambda m: _nothink(m, q, top_logprobs=20)
    )
    cases += both(
        "echo-all-fields",
        "every echoed field set (instructions, max_output_tokens, temperature, top_p, top_logprobs, user)",
        lambda m: _nothink(
            m,
            q,
            instructions="Be brief.",
            max_output_tokens=77,
            temperature=0.7,
            top_p=0.9,
            top_logprobs=3,
            user="user-42",
        ),
    )
    cases += both(
        "echo-thinking-sampling",
        "thinking mode ignores temperature/top_p for inference, echo keeps the request values",
        lambda m: _req(m, q, temperature=0.2, top_p=0.5, tools=[WEATHER]),
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.2 input shapes, roles and content parts


def _input_shapes() -> list[Case]:
    """§2.2: input as string or items, instructions, roles (developer per version), message items, text parts."""
    cases: list[Case] = []
    cases += both("input-string", "input as a plain string", lambda m: _nothink(m, "Hello there."))
    cases += both("input-empty-string", 'input "" is one empty user message', lambda m: _req(m, ""))
    cases += both(
        "instructions-only", "instructions without input", lambda m: _nothink(m, instructions="Say hi.")
    )
    cases += both(
        "instructions-and-input",
        "instructions become the first system message",
        lambda m: _req(m, "Hi", instructions="You are a pirate."),
    )
    cases += both(
        "instructions-empty",
        "empty instructions add no system message",
        lambda m: _nothink(m, "Hi", instructions=""),
    )
    cases += both(
        "instructions-null", "instructions null", lambda m: _nothink(m, [user("Hi")], instructions=None)
    )
    cases += both(
        "instructions-with-system-items",
        "instructions plus system and developer items",
        lambda m: _req(m, [system("S"), developer("D"), user("a")], instructions="I"),
    )
    cases += both(
        "role-developer",
        "developer item: a user message on V4, a system message on V4.1",
        lambda m: _req(m, [developer("Follow the style guide."), user("Write a haiku.")]),
    )
    cases += both(
        "role-developer-only",
        "a lone developer item",
        lambda m: _nothink(m, [developer("Only a developer note.")]),
    )
    cases += both(
        "role-developer-middle",
        "developer item between turns",
        lambda m: _nothink(m, [user("u1"), assistant("a1"), developer("Be shorter."), user("u2")]),
    )
    cases += both(
        "role-system-middle",
        "system item between turns (hoisted on V4, in place on V4.1)",
        lambda m: _req(m, [user("u1"), assistant("a1"), system("New rules."), user("u2")], tools=[CALC]),
    )
    cases += both(
        "role-system-developer-order",
        "system then developer then user, nothink",
        lambda m: _nothink(m, [system("S"), developer("D"), user("U")]),
    )
    cases += both(
        "message-type-explicit",
        "items spelled with type message, id and status",
        lambda m: _nothink(
            m,
            [
                message("user", "x", id="msg_1", status="completed"),
                message("assistant", [otext("y")], id="msg_2", status="completed"),
                message("user", [itext("z")]),
            ],
        ),
    )
    cases += both(
        "message-phase",
        "an assistant message carrying phase and logprobs fields",
        lambda m: _req(
            m,
            [
                user("a"),
                message(
                    "assistant",
                    [{"type": "output_text", "text": "x", "annotations": [], "logprobs": []}],
                    id="msg_1",
                    status="completed",
                    phase="final_answer",
                ),
                user("b"),
            ],
        ),
    )
    cases += both(
        "parts-input-text",
        "user content as input_text parts joined with blank lines",
        lambda m: _nothink(m, [user([itext("A"), itext("B"), itext(""), itext("C\n")])]),
    )
    cases += both(
        "parts-output-text-user",
        "output_text parts in a user message count as text",
        lambda m: _nothink(m, [user([otext("quoted answer"), itext("what now?")])]),
    )
    cases += both("parts-empty-list", "user content as an empty part list", lambda m: _nothink(m, [user([])]))
    cases += both(
        "parts-system-list",
        "system content as input_text parts",
        lambda m: _req(
            m, [system([itext("Rule 1."), itext("Rule 2.")]), user("Hi")], reasoning={"effort": "low"}
        ),
    )
    cases += both(
        "assistant-string",
        "assistant content as a string",
        lambda m: _req(m, [user("a"), assistant("b"), user("c")]),
    )
    cases += both(
        "assistant-parts",
        "assistant output_text parts with annotations",
        lambda m: _req(
            m,
            [
                user("a"),
                assistant(
                    [
                        {
                            "type": "output_text",
                            "text": "Part one.",
                            "annotations": [{"type": "url_citation"}],
                        },
                        otext("Part two."),
                    ]
                ),
                user("c"),
            ],
            tools=[CALC],
        ),
    )
    cases += both(
        "assistant-input-text",
        "assistant content given as input_text parts",
        lambda m: _nothink(m, [user("a"), assistant([itext("it")]), user("c")]),
    )
    cases += both(
        "assistant-consecutive",
        "two assistant messages in a row merge into one turn",
        lambda m: _req(m, [user("a"), assistant("b"), assistant("c"), user("d")], tools=[CALC]),
    )
    cases += both(
        "assistant-last",
        "the input ends with an assistant message (a complete turn, no prefix)",
        lambda m: _req(m, [user("a"), assistant("b")]),
    )
    cases += both(
        "assistant-first",
        "the input starts with an assistant message",
        lambda m: _nothink(m, [assistant("I am ready."), user("Go")]),
    )
    cases += both(
        "users-consecutive",
        "two user messages in a row",
        lambda m: _nothink(m, [user("a"), user("b")]),
    )
    cases += both(
        "system-only-items",
        "only a system item",
        lambda m: _nothink(m, [system("Lonely")]),
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.2 images and files (V4 text placeholders, V4.1 image sources)


def _images() -> list[Case]:
    """§2.2: input_image by URL, data URL and detail; input_file; images in system/developer/tool output."""
    cases: list[Case] = []
    cases += both(
        "image-http",
        "one http image after text",
        lambda m: _req(m, [user([itext("What is this?"), iimage("http://example.com/cat.png")])]),
    )
    cases += both(
        "image-details",
        "https images with every detail value, image first",
        lambda m: _nothink(
            m,
            [
                user(
                    [
                        iimage("https://example.com/a.jpg", "low"),
                        iimage("https://example.com/b.jpg", "high"),
                        iimage("https://example.com/c.jpg", "auto"),
                        iimage("https://example.com/d.jpg", "original"),
                        itext("Compare them."),
                    ]
                )
            ],
        ),
    )
    cases += both(
        "image-data-url",
        "a data-URL PNG image",
        lambda m: _nothink(m, [user([iimage(PNG_DATA_URL), itext("Describe.")])]),
    )
    cases += both(
        "image-several-items",
        "images in two user items (paths name each item index)",
        lambda m: _req(
            m,
            [
                user([iimage("https://example.com/1.png")]),
                assistant("One."),
                user(
                    [itext("and"), iimage("https://example.com/2.png"), iimage("https://example.com/3.png")]
                ),
            ],
        ),
    )
    cases += both(
        "image-in-system",
        "an image in a system item",
        lambda m: _nothink(
            m, [system([itext("Reference:"), iimage("https://example.com/ref.png")]), user("a")]
        ),
    )
    cases += both(
        "image-in-developer",
        "an image in a developer item",
        lambda m: _nothink(m, [developer([iimage("https://example.com/dev.png")]), user("a")]),
    )
    cases += both(
        "image-typed-placeholder",
        "a user-typed <｜image｜> next to a real image (only the real one is special)",
        lambda m: _req(m, [user([itext("a<｜image｜>b"), iimage("https://example.com/x.png")])]),
    )
    cases += both(
        "image-in-function-output",
        "function_call_output as a list with text and an image",
        lambda m: _nothink(
            m,
            [
                user("Take a photo."),
                fcall("c1", "camera", "{}"),
                fout("c1", [itext("photo"), iimage(PNG_DATA_URL, "low")]),
            ],
            tools=[fn("camera", "Take a photo")],
        ),
    )
    cases += both(
        "file-parts",
        "input_file parts (file_id, file_data, file_url, empty) all become [Unsupported Document]",
        lambda m: _nothink(
            m,
            [
                user(
                    [
                        ifile(file_id="file-1"),
                        ifile(file_data="data:application/pdf;base64,AA==", filename="a.pdf"),
                        ifile(file_url="https://example.com/a.pdf"),
                        ifile(),
                        itext("Summarise."),
                    ]
                )
            ],
        ),
    )
    cases += both(
        "file-in-function-output",
        "an input_file part inside a function_call_output list",
        lambda m: _nothink(
            m,
            [user("a"), fcall("c1", "now", "{}"), fout("c1", [ifile(file_id="x"), itext("t")])],
            tools=[NOARGS],
        ),
    )
    # V4 turns every image into text without validating it; V4.1 refuses the same parts (see _invalid_semantic).
    for slug, description, part in (
        ("image-file-id", "input_image by file_id", iimage(file_id="file-1")),
        ("image-no-source", "input_image with neither image_url nor file_id", iimage(detail="auto")),
        ("image-ftp-url", "input_image with an ftp URL", iimage("ftp://example.com/a.png")),
        ("image-data-text", "input_image with a non-image data URL", iimage("data:text/plain;base64,aGk=")),
    ):
        cases += both(
            slug,
            f"{description} becomes [Unsupported Image] on V4",
            lambda m, p=part: _nothink(m, [user([itext("x"), p])]),
            only="v4",
        )
    cases += both(
        "image-in-assistant",
        "V4 turns an image in an assistant message into text (V4.1 refuses it)",
        lambda m: _nothink(m, [user("a"), assistant([iimage("https://example.com/a.png")]), user("b")]),
        only="v4",
    )
    cases += both(
        "image-file-id-in-function-output",
        "V4 turns an input_image file_id inside a function output into text",
        lambda m: _nothink(
            m, [user("a"), fcall("c1", "now", "{}"), fout("c1", [iimage(file_id="x")])], tools=[NOARGS]
        ),
        only="v4",
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.2 tool history: function calls, outputs, reasoning items, custom tool calls, item references


def _tool_history() -> list[Case]:
    """§2.2: function_call/_output pairing and merging, parallel outputs, reasoning items, custom calls."""
    cases: list[Case] = []
    rounds = [
        system("You can check weather and search."),
        user("Plan a trip: weather in Paris and Rome, then hotels."),
        reasoning("Two cities, call in parallel."),
        assistant([otext("Checking both.")]),
        fcall("call_p", "get_weather", {"city": "Paris", "days": 2}, id="fc_1", status="completed"),
        fcall("call_r", "get_weather", {"city": "Rome"}, id="fc_2", status="completed"),
        fout("call_r", "Rome: 24C"),
        fout("call_p", "Paris: 18C"),
        reasoning("Now search hotels."),
        fcall("call_s", "search", {"query": "hotels Rome", "limit": 3}),
        fout("call_s", [itext("Hotel A"), itext("Hotel B")]),
        reasoning("Summarise."),
        assistant([otext("Rome is warmer; Hotel A or B.")]),
        user("Book Hotel A."),
    ]
    for mode, maker in (("think", _req), ("nothink", _nothink)):
        cases += both(
            f"history-rounds-{mode}",
            f"three tool rounds, parallel outputs out of order, list output, {mode}",
            lambda m, mk=maker: mk(m, rounds, tools=[WEATHER, SEARCH]),
        )
        cases += both(
            f"history-rounds-no-tools-{mode}",
            f"the same history without declaring tools (reasoning dropped in the prompt), {mode}",
            lambda m, mk=maker: mk(m, rounds),
        )
    no_id = {"type": "function_call_output", "output": "late"}
    cases += both(
        "history-output-without-call-id-after-reversed",
        "two calls answered in reverse order, then an output without call_id (written after them)",
        lambda m: _req(
            m,
            [
                user("Weather in A and B?"),
                fcall("c2", "get_weather", {"city": "B"}),
                fcall("c1", "get_weather", {"city": "A"}),
                fout("c1", "A: 1"),
                fout("c2", "B: 2"),
                no_id,
            ],
            tools=[WEATHER],
        ),
    )
    cases += both(
        "history-output-without-call-id-after-user",
        "two calls answered in reverse order, a user message, then an output without call_id",
        lambda m: _req(
            m,
            [
                user("Weather in A and B?"),
                fcall("c2", "get_weather", {"city": "B"}),
                fcall("c1", "get_weather", {"city": "A"}),
                fout("c1", "A: 1"),
                fout("c2", "B: 2"),
                user("And?"),
                no_id,
            ],
            tools=[WEATHER],
        ),
    )
    cases += both(
        "history-parallel-three-reversed",
        "three parallel calls whose outputs arrive in reverse order",
        lambda m: _req(
            m,
            [
                user("Weather in A, B, C?"),
                fcall("c1", "get_weather", {"city": "A"}),
                fcall("c2", "get_weather", {"city": "B"}),
                fcall("c3", "get_weather", {"city": "C"}),
                fout("c3", "C: 3"),
                fout("c2", "B: 2"),
                fout("c1", "A: 1"),
            ],
            tools=[WEATHER],
        ),
    )
    cases += both(
        "history-sequential-rounds",
        "two sequential single-call rounds without reasoning (filled with empty reasoning)",
        lambda m: _req(
            m,
            [
                user("a"),
                fcall("c1", "now", "{}"),
                fout("c1", "t1"),
                fcall("c2", "now", "{}"),
                fout("c2", "t2"),
            ],
            tools=[NOARGS],
        ),
    )
    cases += both(
        "history-call-then-answer",
        "a call, its output, then the final assistant answer and a new question",
        lambda m: _req(
            m,
            [
                user("Weather?"),
                reasoning("call"),
                fcall("c1", "get_weather", {"city": "Oslo"}),
                fout("c1", "Snow"),
                reasoning("done"),
                assistant("It snows."),
                user("Thanks"),
            ],
            tools=[WEATHER],
        ),
    )
    cases += both(
        "history-assistant-then-reasoning-then-call",
        "an assistant message, then a reasoning item and a call (two assistant turns)",
        lambda m: _req(
            m,
            [user("a"), assistant("pre"), reasoning("R1"), fcall("c1", "now", "{}"), fout("c1", "o")],
            tools=[NOARGS],
        ),
    )
    cases += both(
        "history-call-status-in-progress",
        "function_call with status in_progress and an output item with id/status",
        lambda m: _nothink(
            m,
            [
                user("a"),
                fcall("c1", "now", "{}", status="in_progress"),
                fout("c1", "o", id="fco_1", status="completed"),
            ],
            tools=[NOARGS],
        ),
    )
    cases += both(
        "history-output-empty-list",
        "function_call_output with an empty list",
        lambda m: _nothink(m, [user("a"), fcall("c1", "now", "{}"), fout("c1", [])], tools=[NOARGS]),
    )
    cases += both(
        "history-output-empty-string",
        "function_call_output with an empty string",
        lambda m: _req(m, [user("a"), fcall("c1", "now", "{}"), fout("c1", "")], tools=[NOARGS]),
    )
    cases += both(
        "history-output-without-call-id",
        "a function_call_output naming no call after an answered call: kept as an unpaired tool result",
        lambda m: _req(
            m,
            [
                user("a"),
                fcall("c1", "now", "{}"),
                fout("c1", "o"),
                {"type": "function_call_output", "output": "o2"},
            ],
            tools=[NOARGS],
        ),
    )
    cases += both(
        "history-call-undeclared-tool",
        "a historical call to a tool that is not declared",
        lambda m: _req(m, [user("Go"), fcall("c1", "ghost", '{"a":1}'), fout("c1", "boo")], tools=[WEATHER]),
    )
    cases += both(
        "history-calls-no-tools",
        "calls and outputs without any declared tool",
        lambda m: _req(m, [user("Go"), fcall("c1", "ghost", "{}"), fout("c1", "boo"), user("Next")]),
    )
    cases += both(
        "history-arguments-kinds",
        "arguments with every JSON kind, invalid JSON and a non-object",
        lambda m: _nothink(
            m,
            [
                user("Go"),
                fcall(
                    "c1",
                    "calc",
                    {
                        "s": 'text with "quotes", <tag> & amp\nnewline',
                        "i": 42,
                        "f": 1.5,
                        "t": True,
                        "n": None,
                        "arr": [1, "two", None],
                        "o": {"k": "v"},
                        "unicode": "é中😀\u2028",
                    },
                ),
                fcall("c2", "calc", "not json {"),
                fcall("c3", "calc", "[1, 2]"),
                fcall("c4", "calc", ""),
                fout("c1", "r1"),
                fout("c2", "r2"),
                fout("c3", "r3"),
                fout("c4", "r4"),
            ],
            tools=[CALC],
        ),
    )
    cases += both(
        "history-arguments-numbers",
        "argument numbers needing the prompt float rules (1e5, -0.0, 1e16, 1e-7, big integers)",
        lambda m: _req(
            m,
            [
                user("n"),
                fcall(
                    "c1",
                    "calc",
                    '{"a": 1e5, "b": -0.0, "c": 1E16, "d": 1e-7, "e": 12345678901234567890, "f": -9223372036854775809}',
                ),
                fout("c1", "ok"),
            ],
            tools=[CALC],
        ),
    )
    # Reasoning items (§2.2 table): content is used, summary and encrypted_content are not.
    tools = [NOARGS]
    for slug, description, items in (
        (
            "reasoning-summary-ignored",
            "reasoning with content, summary and encrypted_content before an assistant message",
            [user("a"), reasoning("RT", summary=["SUM"], encrypted="gAAAA"), assistant("ans"), user("more")],
        ),
        (
            "reasoning-summary-only",
            "a reasoning item with only a summary before a user message",
            [user("a"), reasoning(summary=["SUM"], content=False), user("more")],
        ),
        (
            "reasoning-encrypted-only",
            "a reasoning item with only encrypted_content before an assistant message",
            [user("a"), reasoning(encrypted="gAAAA", content=False), assistant("x"), user("y")],
        ),
        (
            "reasoning-empty-content",
            "a reasoning item with an empty content list before an assistant message",
            [user("a"), reasoning(), assistant("x"), user("y")],
        ),
        (
            "reasoning-two-texts",
            "two reasoning_text parts in one item",
            [user("a"), reasoning("R1", "R2"), assistant("x"), user("y")],
        ),
        (
            "reasoning-two-items",
            "two reasoning items before one assistant message",
            [user("a"), reasoning("r1"), reasoning("r2"), assistant("b"), user("c")],
        ),
        (
            "reasoning-before-call",
            "a reasoning item before a function call",
            [user("a"), reasoning("Need time."), fcall("c1", "now", "{}"), fout("c1", "12:00")],
        ),
        (
            "reasoning-before-assistant-and-call",
            "reasoning, an assistant message and a call merge into one turn",
            [user("a"), reasoning("r1"), assistant("pre"), fcall("c1", "now", "{}"), fout("c1", "o")],
        ),
        (
            "reasoning-then-user",
            "a reasoning item directly followed by a user message",
            [user("a"), reasoning("R1"), user("b")],
        ),
        (
            "reasoning-at-end",
            "a reasoning item as the last input item",
            [user("a"), reasoning("R1")],
        ),
        (
            "reasoning-after-output",
            "reasoning before each of two assistant turns around a tool output",
            [
                user("a"),
                reasoning("R1"),
                fcall("c1", "now", "{}"),
                fout("c1", "o"),
                reasoning("R2"),
                assistant("done"),
            ],
        ),
    ):
        cases += both(slug, description, lambda m, it=items: _req(m, it, tools=tools))
        cases += both(
            f"{slug}-nothink", f"{description}, nothink", lambda m, it=items: _nothink(m, it, tools=tools)
        )
    cases += both(
        "reasoning-content-part-types",
        "reasoning content parts of type text and an unknown type are read like reasoning_text",
        lambda m: _req(
            m,
            [
                user("a"),
                {
                    "type": "reasoning",
                    "summary": [],
                    "content": [{"type": "text", "text": "x"}, {"type": "bogus", "text": "y"}],
                },
                assistant("b"),
                user("c"),
            ],
            tools=tools,
        ),
    )
    cases += both(
        "reasoning-no-tools",
        "reasoning items without tools (dropped in the prompt)",
        lambda m: _req(m, [user("a"), reasoning("R1"), assistant("x"), user("b")]),
    )
    reject = {"reasoning_content_behavior": "reject"}
    cases += both(
        "reasoning-reject-present",
        "reject: the current call turn carries reasoning, accepted",
        lambda m: _req(
            m, [user("a"), reasoning("r"), fcall("c1", "now", "{}"), fout("c1", "o")], tools=tools
        ),
        options=reject,
    )
    cases += both(
        "reasoning-reject-history-before-last-user",
        "reject: call turns before the last user message are filled, not rejected",
        lambda m: _req(
            m, [user("a"), fcall("c1", "now", "{}"), fout("c1", "o"), assistant("x"), user("b")], tools=tools
        ),
        options=reject,
    )
    cases += both(
        "reasoning-reject-nothink",
        "reject does not apply in nothink mode",
        lambda m: _nothink(m, [user("a"), fcall("c1", "now", "{}"), fout("c1", "o")], tools=tools),
        options=reject,
    )
    # Custom tool calls (§2.2, §3.9).
    cases += both(
        "custom-call-apply-patch",
        'custom_tool_call apply_patch with its output; arguments become {"input": ...}',
        lambda m: _req(
            m,
            [
                user("Fix the typo."),
                reasoning("Patch it."),
                ccall(
                    "c1", "apply_patch", "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\n"
                ),
                cout("c1", "Done."),
            ],
            tools=[APPLY_PATCH],
        ),
    )
    cases += both(
        "custom-call-output-list",
        "custom_tool_call_output as a list of input_text parts, with ids and status",
        lambda m: _nothink(
            m,
            [
                user("a"),
                ccall("c1", "apply_patch", "x", id="ctc_1", status="completed"),
                cout("c1", [itext("t1"), itext("t2")], id="ctco_1"),
            ],
            tools=[APPLY_PATCH],
        ),
    )
    cases += both(
        "custom-call-other-name",
        "a historical custom call to an undeclared name, input with quotes and newlines",
        lambda m: _req(m, [user("a"), ccall("c1", "other", 'x"y\n'), cout("c1", "ok")], tools=[NOARGS]),
    )
    cases += both(
        "custom-and-function-parallel",
        "a function call and a custom call answered in reverse order",
        lambda m: _req(
            m,
            [
                user("a"),
                fcall("c1", "now", "{}"),
                ccall("c2", "apply_patch", "x"),
                cout("c2", "B"),
                fout("c1", "A"),
            ],
            tools=[NOARGS, APPLY_PATCH],
        ),
    )
    # item_reference items are dropped (§2.2); an input of only references leaves no messages at all.
    cases += both(
        "item-reference-dropped",
        "item_reference between messages is dropped",
        lambda m: _req(m, [user("a"), {"type": "item_reference", "id": "msg_1"}, user("b")]),
    )
    cases += both(
        "item-reference-only",
        "an input made only of an item_reference converts to an empty conversation",
        lambda m: _nothink(m, [{"type": "item_reference", "id": "msg_1"}]),
    )
    cases += both(
        "item-reference-with-instructions",
        "only an item_reference plus instructions",
        lambda m: _req(m, [{"type": "item_reference", "id": "rs_1"}], instructions="Continue."),
    )
    # Unknown item types: the reference drops them silently; dscodec refuses them (deviation D9).
    for slug, item in (
        ("bogus", {"type": "bogus_item", "id": "x"}),
        (
            "web-search-call",
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "q"},
            },
        ),
        (
            "file-search-call",
            {"type": "file_search_call", "id": "fs_1", "queries": ["q"], "status": "completed"},
        ),
        (
            "computer-call-output",
            {
                "type": "computer_call_output",
                "call_id": "cc_1",
                "output": {"type": "computer_screenshot", "image_url": "https://x/s.png"},
            },
        ),
        ("mcp-list-tools", {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "s", "tools": []}),
        (
            "image-generation-call",
            {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": None},
        ),
        (
            "shell-call",
            {
                "type": "shell_call",
                "id": "sh_1",
                "call_id": "c1",
                "action": {"commands": ["ls"]},
                "status": "completed",
            },
        ),
        (
            "mcp-call",
            {
                "type": "mcp_call",
                "id": "mcp_1",
                "name": "f",
                "arguments": "{}",
                "server_label": "s",
                "output": "x",
            },
        ),
    ):
        cases += both(
            f"unknown-item-{slug}",
            f"unknown input item type {item['type']} is dropped by the reference (dscodec: 400, D9)",
            lambda m, it=item: _req(m, [user("a"), it, user("b")]),
            deviation="D9",
        )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.2 tools: flat functions, strict, defer_loading, namespaces, custom apply_patch, web search, hosted tools


STRICT_NESTED = fn(
    "create_order",
    "Create an order.",
    obj(
        {
            "customer": obj({"name": {"type": "string"}, "email": {"type": "string", "format": "email"}}),
            "items": {"type": "array", "items": obj({"sku": {"type": "string"}, "qty": {"type": "integer"}})},
            "shipping": {
                "anyOf": [
                    obj({"kind": {"type": "string", "enum": ["pickup"]}}),
                    obj(
                        {"kind": {"type": "string", "enum": ["post"]}, "address": {"$ref": "#/$defs/address"}}
                    ),
                ]
            },
            "note": {"type": ["string", "null"]},
        },
        **{"$defs": {"address": obj({"street": {"type": "string"}, "zip": {"type": "string"}})}},
    ),
    strict=True,
)
HOSTED: tuple[JSON, ...] = (
    {"type": "file_search", "vector_store_ids": ["vs_1"]},
    {"type": "code_interpreter", "container": {"type": "auto"}},
    {"type": "mcp", "server_label": "deepwiki", "server_url": "https://example.com/mcp"},
    {"type": "local_shell"},
    {"type": "computer_use_preview", "display_width": 1024, "display_height": 768, "environment": "linux"},
    {"type": "image_generation"},
    {"type": "apply_patch"},
    {"type": "computer"},
    {"type": "programmatic_tool_calling"},
    {"type": "shell", "environment": {"type": "container_auto"}},
    {"type": "tool_search", "description": "Find tools.", "execution": "server"},
)


def _tools() -> list[Case]:
    """§2.2/§2.5/§2.6/§3.9: tool shapes, strict normalisation, namespaces, apply_patch, web search, hosted tools."""
    cases: list[Case] = []
    ask = "What's the weather in Paris?"
    cases += both("tools-one", "one flat function tool", lambda m: _req(m, ask, tools=[WEATHER]))
    cases += both(
        "tools-many",
        "four tools incl. one without description and one without parameters",
        lambda m: _req(m, ask, tools=[WEATHER, SEARCH, CALC, NOARGS]),
    )
    cases += both(
        "tools-parameters-null",
        "parameters null and description null",
        lambda m: _req(m, ask, tools=[fn("ping", None, None)]),
    )
    cases += both("tools-empty-list", "tools: [] means no tools", lambda m: _req(m, ask, tools=[]))
    cases += both(
        "tools-schema-raw-numbers",
        "schema numbers spelled 1e5, -0, 1E16, 1e-7 and big integers in the raw body",
        lambda m: Raw(
            data='{"model": "'
            + m
            + '", "input": "hi", "tools": [{"type": "function", "name": "nums", "parameters": {"type": "object", '
            '"properties": {"a": {"type": "number", "default": 1e5, "minimum": -0, "maximum": 1E16, "multipleOf": '
            '1e-7, "examples": [12345678901234567890, -9223372036854775809, 1.0, 0.1, 2.5e-5]}}}}]}'
        ),
    )
    cases += both(
        "tools-schema-key-order",
        "schema key order is kept as sent",
        lambda m: _req(
            m,
            ask,
            tools=[
                fn(
                    "ordered",
                    "Keys out of the usual order.",
                    {
                        "required": ["b"],
                        "properties": {"b": {"type": "string"}, "a": {"type": "integer"}},
                        "type": "object",
                    },
                )
            ],
        ),
    )
    cases += both(
        "tools-strict-simple",
        "strict tool: additionalProperties false and required appended",
        lambda m: _req(
            m,
            ask,
            tools=[
                fn(
                    "get_weather",
                    "Weather",
                    obj({"city": {"type": "string"}, "days": {"type": "integer"}}),
                    strict=True,
                )
            ],
        ),
    )
    cases += both(
        "tools-strict-nested",
        "strict normalisation of nested objects, arrays, anyOf, $defs removal and $ref",
        lambda m: _nothink(m, ask, tools=[STRICT_NESTED]),
    )
    cases += both(
        "tools-strict-no-parameters",
        "strict tool without parameters becomes an empty strict object",
        lambda m: _req(m, ask, tools=[fn("now", "Time", strict=True)]),
    )
    cases += both(
        "tools-strict-false",
        "strict false tools are not normalised",
        lambda m: _req(m, ask, tools=[fn("f", "d", obj({"a": {"type": "string"}}), strict=False), SEARCH]),
    )
    cases += both(
        "tools-strict-null",
        "strict null counts as not strict",
        lambda m: _req(m, ask, tools=[fn("f", "d", obj({"a": {"type": "string"}}), strict=None)]),
    )
    cases += both(
        "tools-defer-loading",
        "defer_loading true is ignored (the tool is rendered, defer flag false)",
        lambda m: _req(m, ask, tools=[WEATHER, fn("later", "Deferred tool", obj({}), defer_loading=True)]),
    )
    cases += both(
        "tools-defer-loading-all",
        "every tool deferred",
        lambda m: _nothink(m, ask, tools=[fn("later", "Deferred", defer_loading=True)]),
    )
    cases += both(
        "tools-names-allowed-characters",
        "tool names using every allowed character class",
        lambda m: _req(
            m,
            ask,
            tools=[fn("A-b_9", "x"), fn("_", "u"), fn("-", "d"), fn("x" * 80, "long"), fn("0", "digit")],
        ),
    )
    # Namespaces: names joined per version, descriptions, collisions and the recorded namespace_tool_map.
    cases += both(
        "namespace-basic",
        "a namespace of two functions (joined names; namespace description per version)",
        lambda m: _req(m, ask, tools=[GITHUB]),
    )
    cases += both(
        "namespace-no-description",
        "a namespace without description",
        lambda m: _nothink(m, ask, tools=[namespace("gh", [fn("x", "Make x"), fn("y")])]),
    )
    cases += both(
        "namespace-empty-description",
        "a namespace with an empty description",
        lambda m: _nothink(m, ask, tools=[namespace("gh", [fn("x", "Make x"), fn("y")], "")]),
    )
    cases += both(
        "namespace-inner-descriptions",
        "namespace description with inner tools whose descriptions are set, empty and absent",
        lambda m: _nothink(
            m,
            ask,
            tools=[
                namespace("gh", [fn("x", "Make x"), fn("y", ""), fn("z")], "GitHub tools"),
                fn("flat", "d"),
            ],
        ),
    )
    cases += both(
        "namespace-empty",
        "an empty namespace contributes nothing",
        lambda m: _req(m, ask, tools=[namespace("gh", []), WEATHER]),
    )
    cases += both(
        "namespace-only-empty",
        "the only tool is an empty namespace",
        lambda m: _req(m, ask, tools=[namespace("gh", [])]),
    )
    cases += both(
        "namespace-collision-flat-first",
        "a flat tool named like a joined namespace tool, declared first",
        lambda m: _req(m, ask, tools=[fn("gh__x"), namespace("gh", [fn("x")])]),
    )
    cases += both(
        "namespace-collision-flat-after",
        "flat tools gh__x and gh__x_1 declared after the namespace",
        lambda m: _req(m, ask, tools=[namespace("gh", [fn("x")]), fn("gh__x"), fn("gh__x_1")]),
    )
    cases += both(
        "namespace-collision-twice",
        "the same namespace declared twice",
        lambda m: _req(m, ask, tools=[namespace("gh", [fn("x")]), namespace("gh", [fn("x")])]),
    )
    cases += both(
        "namespace-two",
        "two namespaces and a flat tool",
        lambda m: _nothink(
            m,
            ask,
            tools=[
                namespace("gh", [fn("x")], "GitHub"),
                namespace("jira", [fn("x"), fn("y")], "Jira"),
                WEATHER,
            ],
        ),
    )
    cases += both(
        "namespace-strict-inner",
        "a strict function inside a namespace is normalised",
        lambda m: _req(
            m,
            ask,
            tools=[namespace("db", [fn("query", "Run SQL", obj({"sql": {"type": "string"}}), strict=True)])],
        ),
    )
    cases += both(
        "namespace-underscore-joint",
        "namespaces and members with an underscore at the joint (V4 joins them without the separator)",
        lambda m: _nothink(
            m,
            ask,
            tools=[
                namespace("a_", [fn("b")]),
                namespace("c", [fn("_d"), fn("e_")]),
                namespace("f_", [fn("_g")]),
                namespace("_", [fn("h")]),
            ],
        ),
    )
    cases += both(
        "namespace-underscore-joint-collision",
        "a joint underscore name colliding with a flat tool and with another member",
        lambda m: _nothink(
            m, ask, tools=[fn("a__b"), namespace("a_", [fn("_b")]), namespace("a", [fn("__b")])]
        ),
    )
    cases += both(
        "namespace-underscore-joint-history-and-choice",
        "a historical call in namespace a_ and a named tool_choice of its joined name",
        lambda m: _nothink(
            m,
            [user("Go"), fcall("c1", "b", {}, namespace="a_"), fout("c1", "ok"), user("Next")],
            tools=[namespace("a_", [fn("b")])],
            tool_choice={"type": "function", "name": "a_::b" if m == V41 else "a_b"},
        ),
    )
    cases += both(
        "namespace-defer-inner",
        "defer_loading inside a namespace",
        lambda m: _req(m, ask, tools=[namespace("gh", [fn("x", defer_loading=True), fn("y")])]),
    )
    cases += both(
        "namespace-history-joined-name",
        "a historical call already using the V4 joined name gh__create_issue",
        lambda m: _req(
            m,
            [user("File a bug."), fcall("c1", "gh__create_issue", {"title": "Bug"}), fout("c1", "#12")],
            tools=[GITHUB],
        ),
    )
    cases += both(
        "namespace-history-namespace-field",
        "a historical call with name and namespace fields (joined on conversion)",
        lambda m: _req(
            m,
            [
                user("File a bug."),
                fcall("c1", "create_issue", {"title": "Bug"}, namespace="gh", id="fc_1", status="completed"),
                fout("c1", "#12"),
            ],
            tools=[GITHUB],
        ),
    )
    cases += both(
        "namespace-history-unknown-namespace",
        "a historical call naming a namespace that is not declared",
        lambda m: _req(
            m, [user("a"), fcall("c1", "x", "{}", namespace="zz"), fout("c1", "o")], tools=[WEATHER]
        ),
    )
    # A historical call is named by its (namespace, name) pair: a member's own prompt name, else the joined name
    # made unique against the flat names, the members' names and the names of earlier such calls.
    cases += both(
        "namespace-history-member-after-collision",
        "a call of member a__b.c, whose joined name a__b__c collides with member a.b__c's: it takes a__b__c_1",
        lambda m: _req(
            m,
            [user("Go"), fcall("c1", "c", {}, namespace="a__b"), fcall("c2", "b__c", {}, namespace="a")]
            + [fout("c1", "o"), fout("c2", "p")],
            tools=[namespace("a", [fn("b__c")]), namespace("a__b", [fn("c")])],
        ),
    )
    cases += both(
        "namespace-history-not-a-member",
        "calls that name no member but join to a member's name or to each other's: suffixed past them",
        lambda m: _req(
            m,
            [
                user("Go"),
                fcall("c1", "_x", {}, namespace="gh_"),
                fcall("c2", "x", {}, namespace="gh"),
                fcall("c3", "x", {}, namespace="gh__"),
                fcall("c4", "x", {}, namespace="gh__"),
            ]
            + [fout(f"c{k}", "o") for k in range(1, 5)],
            tools=[fn("gh__x_1"), namespace("gh", [fn("x")]), namespace("q", [fn("y")])],
        ),
    )
    cases += both(
        "namespace-history-duplicate-member",
        "a member declared in two namespaces of the same name, and a call that joins to the second one's name",
        lambda m: _req(
            m,
            [user("Go"), fcall("c1", "a__b_1", {}, namespace="_b"), fout("c1", "o")],
            tools=[namespace("_b", [fn("a__b")]), namespace("_b", [fn("a__b")])],
        ),
    )
    # Custom tools (§3.9): apply_patch is replaced by the built-in definition, user description/format ignored.
    cases += both(
        "custom-apply-patch",
        "custom apply_patch tool becomes the injected function definition",
        lambda m: _req(m, "Fix the bug in a.py", tools=[APPLY_PATCH]),
    )
    cases += both(
        "custom-apply-patch-description-format",
        "custom apply_patch with a user description and a grammar format (both ignored)",
        lambda m: _nothink(
            m,
            "Fix the bug",
            tools=[
                {
                    "type": "custom",
                    "name": "apply_patch",
                    "description": "my own text",
                    "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"},
                },
                WEATHER,
            ],
        ),
    )
    cases += both(
        "custom-apply-patch-and-function-named-apply-patch",
        "a custom apply_patch next to a function tool of another name",
        lambda m: _req(m, "Patch", tools=[fn("apply", "Apply"), APPLY_PATCH]),
    )
    # Web search tools under the default (drop) and reject; hosted tools are always dropped.
    for slug, tool_type in (
        ("web-search", "web_search"),
        ("web-search-preview", "web_search_preview"),
        ("web-search-2025", "web_search_2025_08_26"),
        ("web-search-preview-2025", "web_search_preview_2025_03_11"),
    ):
        cases += both(
            f"tools-{slug}-drop",
            f"{tool_type} tool dropped under the default responses_web_search=drop",
            lambda m, t=tool_type: _req(m, ask, tools=[WEATHER, {"type": t}]),
        )
        cases += both(
            f"tools-{slug}-only-drop",
            f"{tool_type} as the only tool, dropped",
            lambda m, t=tool_type: _req(m, ask, tools=[{"type": t, "search_context_size": "low"}]),
            options={"responses_web_search": "drop"},
        )
    for slug, tool_type in (
        ("web-search-preview", "web_search_preview"),
        ("web-search-preview-2025", "web_search_preview_2025_03_11"),
    ):
        cases += both(
            f"tools-{slug}-reject-option",
            f"{tool_type} under responses_web_search=reject",
            lambda m, t=tool_type: _req(m, ask, tools=[WEATHER, {"type": t}]),
            options={"responses_web_search": "reject"},
        )
    cases += both(
        "tools-hosted-dropped",
        "hosted tools (file_search, code_interpreter, mcp, local_shell, computer use, image generation, apply_patch type, "
        "computer, programmatic_tool_calling, shell, tool_search) are dropped",
        lambda m: _req(m, ask, tools=[*HOSTED, WEATHER]),
    )
    for slug, fields in (
        ("description-number", {"description": 5}),
        ("description-list", {"description": ["Find tools."]}),
        ("execution-unknown", {"execution": "browser"}),
        ("execution-number", {"execution": 1}),
    ):
        cases += both(
            f"tools-invalid-tool-search-{slug}",
            f"a tool_search tool is dropped, but its fields are read for their types: {fields}",
            lambda m, f=fields: _req(m, ask, tools=[{"type": "tool_search", **f}, WEATHER]),
        )
    cases += both(
        "tools-tool-search-nulls",
        "a tool_search tool with null description and execution, and execution client, is dropped",
        lambda m: _req(
            m,
            ask,
            tools=[
                {"type": "tool_search", "description": None, "execution": None},
                {"type": "tool_search", "execution": "client", "parameters": {"type": "object"}},
                WEATHER,
            ],
        ),
    )
    cases += both(
        "tools-unknown-type-dropped",
        "a tool of an unknown type is dropped like the hosted tools",
        lambda m: _req(m, ask, tools=[{"type": "bogus_tool", "name": "x"}, WEATHER]),
    )
    cases += both(
        "tools-hosted-dropped-reject",
        "hosted tools are dropped even under responses_web_search=reject",
        lambda m: _nothink(m, ask, tools=[*HOSTED]),
        options={"responses_web_search": "reject"},
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.2 tool_choice


def _tool_choice() -> list[Case]:
    """§2.2/§2.1.4: tool_choice strings, named function/custom/namespaced tools, web_search, thinking rules."""
    cases: list[Case] = []
    ask = "What's the weather in Paris?"
    cases += both(
        "tool-choice-auto",
        "tool_choice auto",
        lambda m: _req(m, ask, tools=[WEATHER, SEARCH], tool_choice="auto"),
    )
    cases += both(
        "tool-choice-none",
        "tool_choice none hides the tools",
        lambda m: _req(m, ask, tools=[WEATHER, SEARCH], tool_choice="none"),
    )
    cases += both(
        "tool-choice-none-nothink",
        "tool_choice none, nothink",
        lambda m: _nothink(m, ask, tools=[WEATHER], tool_choice="none"),
    )
    cases += both(
        "tool-choice-required-nothink",
        "tool_choice required (nothink): DSML opener prefilled",
        lambda m: _nothink(m, ask, tools=[WEATHER, SEARCH], tool_choice="required"),
    )
    cases += both(
        "tool-choice-function-nothink",
        "named function tool_choice filters the tools",
        lambda m: _nothink(
            m, ask, tools=[WEATHER, SEARCH, CALC], tool_choice={"type": "function", "name": "search"}
        ),
    )
    cases += both(
        "tool-choice-required-no-tools",
        "tool_choice required without tools becomes auto",
        lambda m: _nothink(m, ask, tool_choice="required"),
    )
    cases += both(
        "tool-choice-required-no-tools-thinking",
        "tool_choice required without tools in thinking mode is accepted",
        lambda m: _req(m, ask, tool_choice="required"),
    )
    cases += both(
        "tool-choice-function-no-tools",
        "named tool_choice without tools becomes auto",
        lambda m: _nothink(m, ask, tool_choice={"type": "function", "name": "zzz"}),
    )
    cases += both(
        "tool-choice-none-no-tools",
        "tool_choice none without tools",
        lambda m: _req(m, ask, tool_choice="none"),
    )
    cases += both(
        "tool-choice-custom-apply-patch",
        "tool_choice custom apply_patch (nothink)",
        lambda m: _nothink(
            m, "Patch it", tools=[WEATHER, APPLY_PATCH], tool_choice={"type": "custom", "name": "apply_patch"}
        ),
    )
    cases += both(
        "tool-choice-namespaced-v4-name",
        "tool_choice naming gh__create_issue (the V4 joined name)",
        lambda m: _nothink(
            m, ask, tools=[GITHUB, WEATHER], tool_choice={"type": "function", "name": "gh__create_issue"}
        ),
        only="v4",
    )
    cases += both(
        "tool-choice-namespaced-v41-name",
        "tool_choice naming gh::create_issue (the V4.1 joined name)",
        lambda m: _nothink(
            m, ask, tools=[GITHUB, WEATHER], tool_choice={"type": "function", "name": "gh::create_issue"}
        ),
        only="v41",
    )
    for slug, choice in (
        ("web-search", {"type": "web_search"}),
        ("web-search-2025", {"type": "web_search_2025_08_26"}),
    ):
        cases += both(
            f"tool-choice-{slug}-drop",
            f"tool_choice {choice['type']} under drop falls back to auto",
            lambda m, c=choice: _req(m, ask, tools=[WEATHER, {"type": "web_search"}], tool_choice=c),
        )
        cases += both(
            f"tool-choice-{slug}-drop-nothink",
            f"tool_choice {choice['type']} under drop without any web search tool, nothink",
            lambda m, c=choice: _nothink(m, ask, tools=[WEATHER], tool_choice=c),
        )
    cases += both(
        "tool-choice-required-history",
        "tool_choice required with a tool round in history (nothink)",
        lambda m: _nothink(
            m,
            [
                user("Weather in Paris, then Rome."),
                fcall("c1", "get_weather", {"city": "Paris"}),
                fout("c1", "Sunny"),
            ],
            tools=[WEATHER],
            tool_choice="required",
        ),
    )
    cases += both(
        "tools-json-schema-both",
        "tools take precedence over a json_schema text format in the constraint",
        lambda m: _req(
            m,
            "Answer in JSON.",
            tools=[WEATHER],
            text={"format": {"type": "json_schema", "name": "a", "schema": obj({"x": {"type": "string"}})}},
        ),
    )
    cases += both(
        "parallel-tool-calls-false",
        "parallel_tool_calls is ignored",
        lambda m: _req(m, ask, tools=[WEATHER], parallel_tool_calls=False),
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §2.2 text.format


def _text_format() -> list[Case]:
    """§2.2: json_object word check (input and instructions), json_schema strict or not, text, verbosity."""
    cases: list[Case] = []
    jo = {"format": {"type": "json_object"}}
    for slug, fields in (
        ("json-word-input-string", {"input": "give me json please"}),
        ("json-word-instructions", {"input": "Hi", "instructions": "Answer as JSON."}),
        ("json-word-system", {"input": [system("Use Json."), user("Hi")]}),
        ("json-word-developer", {"input": [developer("JSONL output"), user("Hi")]}),
        ("json-word-assistant", {"input": [user("Hi"), assistant("I will use JSON."), user("ok")]}),
        ("json-word-inside-word", {"input": [user("myjsonthing")]}),
        ("json-word-parts", {"input": [user([itext("first"), itext("then JSON")])]}),
    ):
        cases += both(
            f"text-{slug}",
            f"json_object accepted: {slug.replace('-', ' ')}",
            lambda m, f=fields: _req(m, text=jo, **f),
        )
        cases += both(
            f"text-{slug}-nothink",
            f"json_object accepted, nothink: {slug.replace('-', ' ')}",
            lambda m, f=fields: _nothink(m, text=jo, **f),
        )
    cases += both(
        "text-json-word-function-output",
        "the word json only in a function_call_output",
        lambda m: _req(
            m,
            [user("Hi"), fcall("c1", "now", "{}"), fout("c1", "format: json"), user("go")],
            tools=[NOARGS],
            text=jo,
        ),
    )
    schema = obj(
        {
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": obj({"n": {"type": "number"}}),
        },
        required=["name"],
    )
    strict_schema = {k: v for k, v in schema.items() if k != "required"}
    cases += both(
        "text-json-schema",
        "json_schema not strict: schema in the prompt and as the constraint",
        lambda m: _req(
            m, "Describe a cat.", text={"format": {"type": "json_schema", "name": "cat", "schema": schema}}
        ),
    )
    cases += both(
        "text-json-schema-strict",
        "json_schema strict with a description: constraint normalised, prompt shows the original",
        lambda m: _nothink(
            m,
            "Describe a cat.",
            text={
                "format": {
                    "type": "json_schema",
                    "name": "cat",
                    "description": "A cat",
                    "schema": strict_schema,
                    "strict": True,
                }
            },
        ),
    )
    cases += both(
        "text-json-schema-strict-false",
        "json_schema with strict false",
        lambda m: _nothink(
            m,
            "Describe a cat.",
            text={"format": {"type": "json_schema", "name": "cat", "schema": schema, "strict": False}},
        ),
    )
    cases += both(
        "text-json-schema-strict-defs",
        "json_schema strict with $defs/$ref and anyOf",
        lambda m: _req(
            m,
            "Order?",
            text={
                "format": {
                    "type": "json_schema",
                    "name": "o",
                    "schema": STRICT_NESTED["parameters"],
                    "strict": True,
                }
            },
        ),
    )
    cases += both(
        "text-json-schema-numbers",
        "json_schema with numbers needing the prompt float rules",
        lambda m: _nothink(
            m,
            "n",
            text={
                "format": {
                    "type": "json_schema",
                    "name": "n",
                    "schema": obj(
                        {"x": {"type": "number", "minimum": 1e-7, "maximum": 1e16, "default": -0.0}}
                    ),
                }
            },
        ),
    )
    cases += both(
        "text-json-schema-non-ascii",
        "json_schema with non-ASCII names and descriptions",
        lambda m: _req(
            m,
            "名前?",
            text={
                "format": {
                    "type": "json_schema",
                    "name": "名前",
                    "schema": obj({"名前": {"type": "string", "description": "é中😀"}}),
                }
            },
        ),
    )
    cases += both(
        "text-format-text",
        "explicit text format",
        lambda m: _nothink(m, "Hi", text={"format": {"type": "text"}}),
    )
    for verbosity in ("low", "medium", "high"):
        cases += both(
            f"text-verbosity-{verbosity}",
            f"text.verbosity {verbosity} is ignored",
            lambda m, v=verbosity: _req(m, "Hi", text={"verbosity": v}),
        )
    cases += both("text-empty", "text: {} is the default", lambda m: _req(m, "Hi", text={}))
    cases += both("text-null", "text: null is the default", lambda m: _req(m, "Hi", text=None))
    return cases


# ----------------------------------------------------------------------------------------------------------------
# Other fields: stream, user, metadata, unknown fields; model aliases


def _misc() -> list[Case]:
    """§2.2: stream, user, metadata and other unknown fields; §1.2 aliases."""
    cases: list[Case] = []
    cases += both("stream-true", "stream true", lambda m: _req(m, "Hi", stream=True))
    cases += both("stream-false", "stream false", lambda m: _nothink(m, "Hi", stream=False))
    cases += both(
        "stream-options",
        "stream with stream_options (ignored)",
        lambda m: _req(m, "Hi", stream=True, stream_options={"include_obfuscation": False}),
    )
    cases += both("user-field", "the user field is echoed", lambda m: _req(m, "Hi", user="user-123"))
    cases += both(
        "unknown-fields-ignored",
        "fields the reference does not read (metadata, store, previous_response_id, truncation, include, ...)",
        lambda m: _req(
            m,
            "Hi",
            metadata={"a": "b"},
            store=False,
            previous_response_id="resp_1",
            truncation="auto",
            include=["reasoning.encrypted_content"],
            service_tier="auto",
            prompt_cache_key="k",
            background=False,
            max_tool_calls=3,
            safety_identifier="s",
        ),
    )
    cases += both(
        "sdk-fields-ignored",
        "fields the OpenAI SDK sends that the reference does not read (conversation, prompt, context_management, ...)",
        lambda m: _req(
            m,
            "Hi",
            conversation="conv_1",
            prompt={"id": "pmpt_1", "version": "2"},
            context_management=[{"type": "compaction", "compact_threshold": 1000}],
            prompt_cache_retention="24h",
            prompt_cache_options={"mode": "implicit", "prewarm": False, "ttl": "30m"},
            moderation={"model": "omni-moderation-latest"},
            image={"context_compression": "auto"},
            access_programs={"cyber": "standard"},
            background_options={"completion_window": "soonest", "continuation_id": "c"},
        ),
    )
    cases += both(
        "all-nulls",
        "optional fields sent as null",
        lambda m: _req(
            m,
            "Hi",
            instructions=None,
            stream=None,
            max_output_tokens=None,
            temperature=None,
            top_p=None,
            top_logprobs=None,
            reasoning=None,
            user=None,
            tools=None,
            tool_choice=None,
            text=None,
        ),
    )
    cases += [
        Case(
            name="v4-model-alias",
            description="a custom alias mapped to V4",
            body=_req("my-v4", "Hi"),
            options={"model_aliases": {"my-v4": "v4"}},
        ),
        Case(
            name="v41-model-alias",
            description="a custom alias mapped to V4.1",
            body=_req("flash", "Hi", reasoning={"effort": "low"}),
            options={"model_aliases": {"flash": "v4.1"}},
        ),
        Case(
            name="v41-model-table-replaced-plus-alias",
            description="a replaced table plus an alias on top",
            body=_nothink("fast", "Hi"),
            options={"model_versions_by_name": {"deepseek-chat": "v4"}, "model_aliases": {"fast": "v4.1"}},
        ),
    ]
    return cases


# ----------------------------------------------------------------------------------------------------------------
# §4 text corpus and typed special-token spellings


def _everywhere(model: str, value: str, *, thinking: bool) -> JSON:
    """A request that puts ``value`` into every user-controlled field that reaches the prompt."""
    items = [
        system(f"System {value}"),
        developer(f"Developer {value}"),
        user(f"User {value}"),
        reasoning(f"Reasoning {value}"),
        assistant([otext(f"Answer {value}")]),
        fcall("c1", "echo", {"text": value, f"key {value}": [value, {"k": value}]}),
        fout("c1", f"Result {value}"),
        ccall("c2", "apply_patch", f"Patch {value}"),
        cout("c2", [itext(f"Custom {value}")]),
        user(value),
    ]
    tools = [
        fn("echo", f"Echo {value}", obj({"text": {"type": "string", "description": value, "enum": [value]}})),
        namespace("ns", [fn("inner", f"Inner {value}")], f"Namespace {value}"),
        APPLY_PATCH,
    ]
    body = _req(model, items, instructions=f"Instructions {value}", tools=tools)
    if not thinking:
        body["reasoning"] = {"effort": "none"}
    return body


def _corpus() -> list[Case]:
    """§4: every corpus text alone (nothink) and in every field of a tool conversation (seeded mode choice)."""
    rng = random.Random(20240602)
    cases: list[Case] = []
    for slug, value in CORPUS:
        cases += both(
            f"text-{slug}", f"corpus text '{slug}' as the input string", lambda m, v=value: _nothink(m, v)
        )
        thinking = rng.random() < 0.5
        cases += both(
            f"text-{slug}-everywhere",
            f"corpus text '{slug}' in every field of a tool conversation ({'thinking' if thinking else 'nothink'})",
            lambda m, v=value, t=thinking: _everywhere(m, v, thinking=t),
        )
    return cases


def _specials() -> list[Case]:
    """§3.7/§4: typed special-token spellings stay plain text in every user-controlled field."""
    cases: list[Case] = []
    for slug, value in SPECIALS:
        cases += both(
            f"typed-{slug}-input",
            f"typed {value} in the input stays plain text",
            lambda m, v=value: _nothink(m, [user(f"a{v}b {v}")]),
        )
    for mode in ("think", "nothink"):
        cases += both(
            f"typed-all-everywhere-{mode}",
            f"every typed special spelling in every field of a tool conversation, {mode}",
            lambda m, md=mode: _everywhere(m, ALL_SPECIALS, thinking=md == "think"),
        )
        cases += both(
            f"typed-all-tight-everywhere-{mode}",
            f"the spellings written back to back in every field, {mode}",
            lambda m, md=mode: _everywhere(m, ALL_SPECIALS_TIGHT, thinking=md == "think"),
        )
    cases += both(
        "typed-json-schema",
        "special spellings inside a json_schema text format and instructions",
        lambda m: _nothink(
            m,
            "json please <｜User｜>",
            instructions="</think>",
            text={
                "format": {
                    "type": "json_schema",
                    "name": "s",
                    "schema": obj({"<｜User｜>": {"type": "string", "description": "｜DSML｜"}}),
                }
            },
        ),
    )
    return cases


def _grounding() -> list[Case]:
    """Assistant output text and reasoning items keep the grounding spellings as special tokens; function-call
    arguments, outputs, instructions and user text keep them as plain text."""
    cases: list[Case] = []
    for mode in ("think", "nothink"):

        def make(m: str, md: str = mode) -> JSON:
            body = _req(
                m,
                [
                    user(f"User {GROUNDED}"),
                    reasoning(f"Reasoning {GROUNDED}", GROUNDED_TIGHT, summary=[GROUNDED]),
                    message("assistant", [otext(f"Answer {GROUNDED}"), otext(GROUNDED_TIGHT)]),
                    fcall("c1", "echo", {"text": GROUNDED}),
                    fout("c1", f"Result {GROUNDED}"),
                    developer(f"Developer {GROUNDED}"),
                    assistant(GROUNDED_TIGHT),
                    user("next"),
                ],
                instructions=f"Instructions {GROUNDED}",
                tools=[fn("echo", f"Echo {GROUNDED}", obj({"text": {"type": "string"}}))],
            )
            if md == "nothink":
                body["reasoning"] = {"effort": "none"}
            return body

        cases += both(f"grounding-history-{mode}", f"grounding spellings in every input item ({mode})", make)
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
            data=json.dumps(_nothink(m, "a/b"), indent=2).replace("/", "\\/").replace("\n", "\r\n")
        ),
    )
    cases += both(
        "body-duplicate-key",
        "a duplicated top-level key in the raw body (the last one wins)",
        lambda m: Raw(
            data='{"model": "'
            + m
            + '", "input": "a", "temperature": 0.5, "reasoning": {"effort": "none"}, "temperature": 0.7}'
        ),
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# Invalid requests: semantic errors (§1, §2.2, §2.5), parse errors (D2), precedence


def _invalid_semantic() -> list[Case]:
    """Every semantic error message of §1 and §2.2 that a Responses request can reach, for both versions."""
    cases: list[Case] = []
    q = "Hi"

    def inv(slug: str, description: str, make: Make, **kw: Any) -> None:
        cases.extend(both(f"invalid-{slug}", description, make, **kw))

    inv("model-unknown", "unknown model name", lambda m: _req("deepseek-chat", q))
    # An image link longer than 8192 UTF-8 bytes: each image of the parts is checked in order (its reference, then
    # its length) before any URL is looked at otherwise.
    long_link = "http://x/" + "a" * 8184
    inv(
        "image-link-too-long",
        "an image link of 8193 bytes after an ftp image in the same message: the length first",
        lambda m: _nothink(m, [user([itext("x"), iimage("ftp://x/y.png"), iimage(long_link)])]),
        only="v41",
    )
    inv(
        "image-link-too-long-before-file-id-image",
        "an image link too long, then an image by file_id: the parts are checked in order, the length first",
        lambda m: _nothink(m, [user([iimage(long_link), iimage(file_id="file-1")])]),
        only="v41",
    )
    inv(
        "file-id-image-before-image-link-too-long",
        "an image by file_id, then an image link too long: the parts are checked in order, the file id first",
        lambda m: _nothink(m, [user([iimage(file_id="file-1"), iimage(long_link)])]),
        only="v41",
    )
    inv(
        "image-link-too-long-before-empty-image-in-function-output",
        "an image link too long, then an image with nothing, in a function output: the length first",
        lambda m: _nothink(
            m,
            [user("a"), fcall("c1", "now", "{}"), fout("c1", [iimage(long_link), iimage()])],
            tools=[NOARGS],
        ),
        only="v41",
    )
    inv(
        "image-link-too-long-in-function-output",
        "an image link too long inside a function output",
        lambda m: _nothink(
            m, [user("a"), fcall("c1", "now", "{}"), fout("c1", [iimage(long_link)])], tools=[NOARGS]
        ),
        only="v41",
    )
    inv(
        "image-link-too-long-in-assistant-message",
        "an image link too long in an assistant message: the length before the assistant image rule",
        lambda m: _nothink(m, [user("a"), assistant([iimage(long_link)])]),
        only="v41",
    )
    inv("model-case", "model names are case-sensitive", lambda m: _req(m.lower(), q))
    inv(
        "model-alias-listed",
        "the error lists aliases sorted by byte order",
        lambda m: _req("zzz", q),
        options={"model_aliases": {"my-model": "v4.1", "Alpha": "v4"}},
    )
    inv("no-input-no-instructions", "neither input nor instructions", lambda m: _req(m))
    inv("input-null-no-instructions", "input null without instructions", lambda m: _req(m, None))
    inv("input-empty-list", "input: []", lambda m: _req(m, []))
    inv(
        "input-empty-list-with-instructions",
        "input: [] even with instructions",
        lambda m: _req(m, [], instructions="x"),
    )
    inv("tool-name-pattern", "flat tool name with a space", lambda m: _req(m, q, tools=[fn("my tool")]))
    inv(
        "tool-name-dot", "tool name with a dot, second tool", lambda m: _req(m, q, tools=[WEATHER, fn("a.b")])
    )
    inv("tool-name-empty", "empty tool name", lambda m: _req(m, q, tools=[fn("")]))
    inv("tool-name-colons", "a flat tool named gh::x", lambda m: _req(m, q, tools=[fn("gh::x")]))
    inv("tool-name-duplicate", "duplicate flat tool names", lambda m: _req(m, q, tools=[WEATHER, WEATHER]))
    inv(
        "namespace-name-pattern",
        "namespace name with a space",
        lambda m: _req(m, q, tools=[namespace("g h", [fn("x")])]),
    )
    inv(
        "namespace-inner-name-pattern",
        "inner tool name with a space (path tools[0].tools[0].name)",
        lambda m: _req(m, q, tools=[namespace("gh", [fn("x y")])]),
    )
    inv(
        "namespace-custom-inner",
        "a custom tool inside a namespace",
        lambda m: _req(m, q, tools=[namespace("gh", [fn("x"), APPLY_PATCH])]),
    )
    inv(
        "tool-params-empty-object",
        "parameters {} has no type object",
        lambda m: _req(m, q, tools=[fn("f", "d", {})]),
    )
    inv(
        "tool-params-string-type",
        "parameters of type string",
        lambda m: _req(m, q, tools=[fn("f", "d", {"type": "string"})]),
    )
    inv("tool-params-array", "parameters is an array", lambda m: _req(m, q, tools=[fn("f", "d", [1])]))
    inv(
        "tool-strict-mixed",
        "strict and non-strict tools together",
        lambda m: _req(m, q, tools=[fn("a", "d", obj({}), strict=True), fn("b", "d", obj({}))]),
    )
    inv(
        "tool-strict-mixed-namespace",
        "a strict flat tool and a non-strict namespaced tool",
        lambda m: _req(m, q, tools=[fn("a", "d", obj({}), strict=True), namespace("gh", [fn("x")])]),
    )
    inv(
        "tool-strict-mixed-apply-patch",
        "a strict tool next to the injected apply_patch tool",
        lambda m: _req(m, q, tools=[fn("a", "d", obj({}), strict=True), APPLY_PATCH]),
    )
    inv(
        "tool-strict-required-subset",
        "strict tool whose required misses a property",
        lambda m: _req(
            m,
            q,
            tools=[
                fn(
                    "f",
                    "d",
                    obj({"a": {"type": "string"}, "b": {"type": "string"}}, required=["a"]),
                    strict=True,
                )
            ],
        ),
    )
    inv(
        "tool-strict-additional-true",
        "strict tool with additionalProperties true",
        lambda m: _req(
            m, q, tools=[fn("f", "d", obj({"a": {"type": "string"}}, additionalProperties=True), strict=True)]
        ),
    )
    inv(
        "tool-strict-type-list",
        "strict tool whose nested object type is a list",
        lambda m: _req(
            m,
            q,
            tools=[fn("f", "d", obj({"o": {"type": ["object", "null"], "properties": {}}}), strict=True)],
        ),
    )
    inv(
        "custom-tool-other",
        "a custom tool other than apply_patch",
        lambda m: _req(m, q, tools=[{"type": "custom", "name": "my_custom"}]),
    )
    inv(
        "custom-tool-other-after-apply-patch",
        "apply_patch then another custom tool",
        lambda m: _req(m, q, tools=[APPLY_PATCH, {"type": "custom", "name": "shell", "description": "Run"}]),
    )
    rejected = {"responses_web_search": "reject"}
    inv(
        "web-search-reject",
        "web_search under responses_web_search=reject",
        lambda m: _req(m, q, tools=[WEATHER, {"type": "web_search"}]),
        options=rejected,
    )
    inv(
        "web-search-2025-reject",
        "web_search_2025_08_26 under reject",
        lambda m: _req(m, q, tools=[{"type": "web_search_2025_08_26"}]),
        options=rejected,
    )
    inv(
        "tool-choice-web-search-reject",
        "tool_choice web_search under reject, no web search tool",
        lambda m: _req(m, q, tools=[WEATHER], tool_choice={"type": "web_search"}),
        options=rejected,
    )
    inv(
        "tool-choice-required-thinking",
        "tool_choice required in thinking mode",
        lambda m: _req(m, q, tools=[WEATHER], tool_choice="required"),
    )
    inv(
        "tool-choice-function-thinking",
        "named tool_choice in thinking mode",
        lambda m: _req(m, q, tools=[WEATHER], tool_choice={"type": "function", "name": "get_weather"}),
    )
    inv(
        "tool-choice-custom-thinking",
        "custom tool_choice in thinking mode",
        lambda m: _req(m, q, tools=[APPLY_PATCH], tool_choice={"type": "custom", "name": "apply_patch"}),
    )
    inv(
        "tool-choice-function-unknown",
        "named tool_choice for an undeclared tool",
        lambda m: _nothink(m, q, tools=[WEATHER], tool_choice={"type": "function", "name": "zzz"}),
    )
    inv(
        "tool-choice-namespaced-short-name",
        "tool_choice naming the inner tool without its namespace",
        lambda m: _nothink(m, q, tools=[GITHUB], tool_choice={"type": "function", "name": "create_issue"}),
    )
    cases.append(
        Case(
            name="v4-invalid-tool-choice-namespaced-v41-name",
            description="V4 does not know the V4.1 joined name gh::create_issue",
            body=_nothink(
                V4, q, tools=[GITHUB], tool_choice={"type": "function", "name": "gh::create_issue"}
            ),
        )
    )
    cases.append(
        Case(
            name="v41-invalid-tool-choice-namespaced-v4-name",
            description="V4.1 does not know the V4 joined name gh__create_issue",
            body=_nothink(
                V41, q, tools=[GITHUB], tool_choice={"type": "function", "name": "gh__create_issue"}
            ),
        )
    )
    inv(
        "tool-choice-custom-unknown",
        "custom tool_choice naming an undeclared custom tool",
        lambda m: _nothink(m, q, tools=[WEATHER], tool_choice={"type": "custom", "name": "apply_patch"}),
    )
    inv(
        "call-without-output",
        "a function_call without output",
        lambda m: _req(m, [user("a"), fcall("c1", "now", "{}")], tools=[NOARGS]),
    )
    inv(
        "call-without-output-then-user",
        "a function_call followed by a user message instead of its output",
        lambda m: _req(m, [user("a"), fcall("c1", "now", "{}"), user("b")], tools=[NOARGS]),
    )
    inv(
        "call-output-after-user",
        "the output comes after an intervening user message",
        lambda m: _req(m, [user("a"), fcall("c1", "now", "{}"), user("b"), fout("c1", "o")], tools=[NOARGS]),
    )
    inv(
        "call-output-after-assistant",
        "an assistant message between a call and its output",
        lambda m: _req(
            m, [user("a"), fcall("c1", "now", "{}"), assistant("post"), fout("c1", "o")], tools=[NOARGS]
        ),
    )
    inv(
        "parallel-one-output-missing",
        "two parallel calls with one output",
        lambda m: _req(
            m,
            [user("a"), fcall("c1", "now", "{}"), fcall("c2", "now", "{}"), fout("c2", "o")],
            tools=[NOARGS],
        ),
    )
    inv(
        "output-without-call",
        "a function_call_output without a call",
        lambda m: _req(m, [user("a"), fout("c1", "o")], tools=[NOARGS]),
    )
    inv(
        "output-unknown-id",
        "an output answering an unknown call id",
        lambda m: _req(m, [user("a"), fcall("c1", "now", "{}"), fout("zz", "o")], tools=[NOARGS]),
    )
    inv(
        "call-id-reused",
        "the same call_id used in two rounds",
        lambda m: _nothink(
            m,
            [
                user("a"),
                fcall("c1", "now", "{}"),
                fout("c1", "t1"),
                fcall("c1", "now", "{}"),
                fout("c1", "t2"),
            ],
            tools=[NOARGS],
        ),
    )
    inv(
        "call-id-reused-parallel",
        "two parallel calls sharing one call_id",
        lambda m: _req(
            m,
            [user("a"), fcall("c1", "now", "{}"), fcall("c1", "now", "{}"), fout("c1", "t1")],
            tools=[NOARGS],
        ),
    )
    inv(
        "output-duplicate",
        "two outputs for one call",
        lambda m: _req(
            m, [user("a"), fcall("c1", "now", "{}"), fout("c1", "o"), fout("c1", "o2")], tools=[NOARGS]
        ),
    )
    inv(
        "custom-call-without-output",
        "a custom_tool_call without output",
        lambda m: _req(m, [user("a"), ccall("c1", "apply_patch", "x")], tools=[APPLY_PATCH]),
    )
    inv(
        "custom-output-without-call",
        "a custom_tool_call_output without a call",
        lambda m: _req(m, [user("a"), cout("c1", "o")], tools=[APPLY_PATCH]),
    )
    reject = {"reasoning_content_behavior": "reject"}
    inv(
        "reasoning-reject-current-turn",
        "reject: current call turn without a reasoning item",
        lambda m: _req(m, [user("a"), fcall("c1", "now", "{}"), fout("c1", "o")], tools=[NOARGS]),
        options=reject,
    )
    inv(
        "reasoning-reject-summary-only",
        "reject: a summary-only reasoning item does not count",
        lambda m: _req(
            m,
            [user("a"), reasoning(summary=["S"], content=False), fcall("c1", "now", "{}"), fout("c1", "o")],
            tools=[NOARGS],
        ),
        options=reject,
    )
    inv(
        "reasoning-reject-second-call-turn",
        "reject: the second call turn after the last user lacks reasoning",
        lambda m: _req(
            m,
            [
                user("a"),
                reasoning("r"),
                fcall("c1", "now", "{}"),
                fout("c1", "o"),
                fcall("c2", "now", "{}"),
                fout("c2", "o"),
            ],
            tools=[NOARGS],
        ),
        options=reject,
    )
    jo = {"format": {"type": "json_object"}}
    inv("json-word-missing", "json_object without the word json", lambda m: _req(m, "Hi", text=jo))
    inv(
        "json-word-only-in-tools-and-reasoning",
        "the word json only in tool descriptions and reasoning does not count",
        lambda m: _req(
            m,
            [user("Hi"), reasoning("json json"), assistant("ok"), user("go")],
            tools=[fn("json_tool", "Returns JSON")],
            text=jo,
        ),
    )
    inv(
        "json-word-fullwidth",
        "full-width ｊｓｏｎ does not count",
        lambda m: _req(m, "ｊｓｏｎ please", text=jo),
    )
    inv(
        "json-schema-strict-no-properties",
        "strict json_schema object without properties",
        lambda m: _req(
            m,
            q,
            text={
                "format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}, "strict": True}
            },
        ),
    )
    inv(
        "json-schema-strict-required-subset",
        "strict json_schema whose required lists only some properties",
        lambda m: _req(
            m,
            q,
            text={
                "format": {
                    "type": "json_schema",
                    "name": "x",
                    "schema": obj({"a": {"type": "string"}, "b": {"type": "string"}}, required=["a"]),
                    "strict": True,
                }
            },
        ),
    )
    inv(
        "json-schema-invalid-value",
        "json_schema whose schema is an array",
        lambda m: _req(m, q, text={"format": {"type": "json_schema", "name": "x", "schema": [1]}}),
    )
    inv("temperature-high", "temperature above 2", lambda m: _req(m, q, temperature=2.1))
    inv("temperature-negative", "negative temperature", lambda m: _nothink(m, q, temperature=-0.1))
    inv("top-p-zero", "top_p 0", lambda m: _nothink(m, q, top_p=0))
    inv("top-p-high", "top_p above 1", lambda m: _req(m, q, top_p=1.5))
    inv("top-logprobs-21", "top_logprobs 21", lambda m: _req(m, q, top_logprobs=21))
    inv("max-output-tokens-zero", "max_output_tokens 0", lambda m: _req(m, q, max_output_tokens=0))
    inv(
        "max-output-tokens-above-bound",
        "max_output_tokens above 393216",
        lambda m: _req(m, q, max_output_tokens=393217),
    )
    inv(
        "max-output-tokens-custom-bound",
        "max_output_tokens above a custom thinking bound",
        lambda m: _req(m, q, max_output_tokens=1001),
        options={"thinking_max_tokens_upper_bound": 1000},
    )
    inv(
        "max-output-tokens-nothink-bound",
        "nothink max_output_tokens above the non-thinking bound",
        lambda m: _nothink(m, q, max_output_tokens=501),
        options={"thinking_max_tokens_upper_bound": 100000, "non_thinking_max_tokens_upper_bound": 500},
    )
    # V4.1-only image validation (V4 turns every image into text; see _images).
    for slug, description, part in (
        ("image-file-id", "V4.1 refuses input_image by file_id", iimage(file_id="file-1")),
        ("image-no-source", "V4.1 refuses input_image without image_url or file_id", iimage(detail="auto")),
        ("image-empty-url", "V4.1: an empty image_url counts as none", iimage("")),
        (
            "image-empty-url-and-file-id",
            "V4.1: an empty image_url beside a file_id leaves the file_id alone",
            iimage("", file_id="file-1"),
        ),
        (
            "image-empty-url-and-empty-file-id",
            "V4.1: an empty file_id still counts as one",
            iimage("", file_id=""),
        ),
        ("image-ftp-url", "V4.1 refuses a non-http image URL", iimage("ftp://example.com/a.png")),
        ("image-relative-url", "V4.1 refuses a relative image URL", iimage("a.png")),
        (
            "image-data-text",
            "V4.1 refuses a data URL that is not an image",
            iimage("data:text/plain;base64,aGk="),
        ),
    ):
        cases.append(
            Case(
                name=f"v41-invalid-{slug}",
                description=description,
                body=_nothink(V41, [system("s"), user([itext("x"), part])]),
            )
        )
    cases.append(
        Case(
            name="v41-invalid-image-in-assistant",
            description="V4.1 refuses an image in an assistant message",
            body=_nothink(V41, [user("a"), assistant([iimage("https://example.com/a.png")]), user("b")]),
        )
    )
    cases.append(
        Case(
            name="v41-invalid-image-file-id-in-function-output",
            description="V4.1 validates images inside function_call_output lists (path input[2].output[0])",
            body=_nothink(
                V41, [user("a"), fcall("c1", "now", "{}"), fout("c1", [iimage(file_id="x")])], tools=[NOARGS]
            ),
        )
    )
    cases.append(
        Case(
            name="v41-invalid-image-ftp-in-function-output",
            description="V4.1 refuses an ftp image inside a function_call_output list",
            body=_nothink(
                V41,
                [user("a"), fcall("c1", "now", "{}"), fout("c1", [iimage("ftp://x/y.png")])],
                tools=[NOARGS],
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
    raw("string", "body is a JSON string", '"hello"')
    raw("truncated", "body cut in the middle", '{"model": "DeepSeek-V4-Pro", "input": [')
    raw(
        "trailing-garbage", "valid object followed by garbage", '{"model": "DeepSeek-V4-Pro", "input": "a"} x'
    )
    raw("nan", "NaN literal", '{"model": "DeepSeek-V4-Pro", "input": "a", "temperature": NaN}')

    def body(slug: str, description: str, value: Any, prefix: str = "v4") -> None:
        cases.append(Case(name=f"{prefix}-invalid-parse-{slug}", description=description, body=value))

    body("missing-model", "no model field", {"input": "a"})
    body("tool-empty-array", "a tool given as an empty array: its tag is missing", _req(V4, "a", tools=[[]]))
    body("text-empty-array", "text given as an empty array", _req(V4, "a", text=[]))
    body(
        "namespace-tool-unknown-positional-tag",
        "a namespace's tool given as an array whose first item, its tag, names no variant (serde: two are 'or')",
        _req(V4, "a", tools=[{"type": "namespace", "name": "n", "tools": [["a"]]}]),
    )
    body("model-number", "model is a number", {"model": 4, "input": "a"})
    body("input-number", "input is a number", _req(V4, 5))
    body("input-object", "input is an object", _req(V4, {"role": "user", "content": "a"}))
    body("item-not-object", "an input item is a string", _req(V4, ["hi"]))
    body("item-missing-role", "a message item without role", _req(V4, [{"content": "a"}]))
    body("role-tool", "role tool is unknown", _req(V4, [{"role": "tool", "content": "a"}]))
    body("role-uppercase", "role User (case-sensitive)", _req(V41, [{"role": "User", "content": "a"}]), "v41")
    body("content-null", "message content null", _req(V4, [user(None)]))
    body("content-number", "message content is a number", _req(V4, [user(5)]))
    body(
        "part-refusal",
        "refusal part in an assistant message",
        _req(V4, [user("a"), assistant([{"type": "refusal", "refusal": "no"}])]),
    )
    body(
        "part-input-audio",
        "input_audio part",
        _req(V41, [user([{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}])]),
        "v41",
    )
    body("part-missing-type", "content part without type", _req(V4, [user([{"text": "a"}])]))
    body("part-text-missing", "input_text part without text", _req(V4, [user([{"type": "input_text"}])]))
    body(
        "image-detail-bogus",
        "image detail value unknown",
        _req(V41, [user([iimage("https://x/a.png", "medium")])]),
        "v41",
    )
    body(
        "function-call-missing-call-id",
        "function_call without call_id",
        _req(V4, [user("a"), {"type": "function_call", "name": "f", "arguments": "{}"}]),
    )
    body(
        "function-call-arguments-object",
        "arguments given as a JSON object instead of a string",
        _req(
            V4,
            [
                user("a"),
                {"type": "function_call", "call_id": "c", "name": "f", "arguments": {"a": 1}},
                fout("c", "o"),
            ],
        ),
    )
    body(
        "function-output-object",
        "function_call_output output is an object",
        _req(V4, [user("a"), fcall("c", "f", "{}"), fout("c", {"a": 1})]),
    )
    body(
        "function-output-null",
        "function_call_output output is null",
        _req(V4, [user("a"), fcall("c", "f", "{}"), fout("c", None)]),
    )
    body(
        "function-output-output-text",
        "an output_text part inside a function_call_output list",
        _req(V41, [user("a"), fcall("c", "f", "{}"), fout("c", [otext("t")])]),
        "v41",
    )
    body("reasoning-string", "reasoning given as a string", _req(V4, "a", reasoning="high"))
    body("effort-unknown", "reasoning.effort extreme", _req(V41, "a", reasoning={"effort": "extreme"}), "v41")
    body("effort-uppercase", "reasoning.effort HIGH", _req(V4, "a", reasoning={"effort": "HIGH"}))
    body("max-output-tokens-negative", "max_output_tokens -1", _req(V4, "a", max_output_tokens=-1))
    body("max-output-tokens-float", "max_output_tokens 1.5", _req(V4, "a", max_output_tokens=1.5))
    body("top-logprobs-negative", "top_logprobs -1", _req(V4, "a", top_logprobs=-1))
    body("temperature-string", "temperature as a string", _req(V4, "a", temperature="1"))
    body("stream-string", "stream as a string", _req(V4, "a", stream="true"))
    body("instructions-list", "instructions as a list", _req(V4, "a", instructions=[itext("x")]))
    body("user-number", "user as a number", _req(V4, "a", user=5))
    body("tools-object", "tools is an object", _req(V4, "a", tools={"type": "function"}))
    body("tool-missing-type", "tool without type", _req(V4, "a", tools=[{"name": "f"}]))
    body(
        "tool-function-missing-name",
        "function tool without name",
        _req(V41, "a", tools=[{"type": "function", "description": "x"}]),
        "v41",
    )
    body("tool-strict-string", "strict as a string", _req(V4, "a", tools=[fn("f", strict="yes")]))
    body(
        "namespace-nested",
        "a namespace inside a namespace",
        _req(V4, "a", tools=[namespace("gh", [namespace("in", [fn("x")])])]),
    )
    body(
        "namespace-missing-tools",
        "a namespace without tools",
        _req(V4, "a", tools=[{"type": "namespace", "name": "gh"}]),
    )
    body("custom-missing-name", "a custom tool without name", _req(V4, "a", tools=[{"type": "custom"}]))
    body("tool-choice-any", "tool_choice any", _req(V4, "a", tools=[WEATHER], tool_choice="any"))
    body(
        "tool-choice-allowed-tools",
        "tool_choice allowed_tools",
        _req(
            V4,
            "a",
            tools=[WEATHER],
            tool_choice={
                "type": "allowed_tools",
                "mode": "auto",
                "tools": [{"type": "function", "name": "get_weather"}],
            },
        ),
    )
    body(
        "tool-choice-allowed-tools-required",
        "tool_choice allowed_tools with mode required",
        _req(
            V41, "a", tools=[WEATHER], tool_choice={"type": "allowed_tools", "mode": "required", "tools": []}
        ),
        "v41",
    )
    body(
        "tool-choice-function-missing-name",
        "tool_choice function without name",
        _req(V4, "a", tools=[WEATHER], tool_choice={"type": "function"}),
    )
    body(
        "tool-choice-file-search",
        "tool_choice file_search",
        _req(V4, "a", tools=[WEATHER], tool_choice={"type": "file_search"}),
    )
    body(
        "tool-choice-mcp",
        "tool_choice mcp",
        _req(V4, "a", tools=[WEATHER], tool_choice={"type": "mcp", "server_label": "s"}),
    )
    body(
        "text-format-regex",
        "text.format regex is not a Responses format",
        _req(V4, "a", text={"format": {"type": "regex", "regex": "a+"}}),
    )
    body("text-format-bogus", "unknown text.format type", _req(V4, "a", text={"format": {"type": "xml"}}))
    body("text-format-string", "text.format as a string", _req(V4, "a", text={"format": "json_object"}))
    body(
        "json-schema-missing-name",
        "json_schema format without name",
        _req(V4, "a", text={"format": {"type": "json_schema", "schema": {"type": "object"}}}),
    )
    body(
        "json-schema-missing-schema",
        "json_schema format without schema",
        _req(V4, "a", text={"format": {"type": "json_schema", "name": "x"}}),
    )
    body("verbosity-bogus", "unknown text.verbosity", _req(V4, "a", text={"verbosity": "loud"}))
    return cases


def _invalid_precedence() -> list[Case]:
    """Validation order for Responses: pairs of errors showing which check wins.

    Observed order: model, tools (in list order, incl. custom and web-search checks), input presence, input items
    (in item order: images, pairing, reasoning reject), tool_choice vs thinking, text.format (schema, json word),
    temperature, top_p, top_logprobs, max_output_tokens. Unlike Chat (§1.5) tool_choice is checked before the json
    word.
    """
    triggers: tuple[tuple[str, Callable[[JSON], None]], ...] = (
        ("model", lambda b: b.update(model="nope")),
        ("tools", lambda b: b.update(tools=[fn("bad name")])),
        ("input", lambda b: b["input"].append(fout("zz", "r"))),
        ("tool-choice", lambda b: b.update(tools=b.get("tools", [WEATHER]), tool_choice="required")),
        ("json-word", lambda b: b.update(text={"format": {"type": "json_object"}})),
        ("temperature", lambda b: b.update(temperature=3)),
        ("top-p", lambda b: b.update(top_p=2)),
        ("top-logprobs", lambda b: b.update(top_logprobs=25)),
        ("max-tokens", lambda b: b.update(max_output_tokens=0)),
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
        "invalid-order-web-search-vs-input",
        "web_search under reject together with an unpaired output: the tools stage comes first",
        lambda m: _req(m, [user("a"), fout("zz", "r")], tools=[{"type": "web_search"}]),
        options={"responses_web_search": "reject"},
    )
    cases += both(
        "invalid-order-web-search-vs-tool-name",
        "web_search (reject) listed before a badly named tool: tools are checked in list order",
        lambda m: _req(m, "a", tools=[{"type": "web_search"}, fn("a b")]),
        options={"responses_web_search": "reject"},
    )
    cases += both(
        "invalid-order-tool-name-vs-web-search",
        "a badly named tool listed before web_search (reject)",
        lambda m: _req(m, "a", tools=[fn("a b"), {"type": "web_search"}]),
        options={"responses_web_search": "reject"},
    )
    cases += both(
        "invalid-order-custom-vs-tool-name",
        "an unsupported custom tool listed before a badly named tool",
        lambda m: _req(m, "a", tools=[{"type": "custom", "name": "zz"}, fn("a b")]),
    )
    cases += both(
        "invalid-order-model-vs-empty-input",
        "input: [] together with an unknown model",
        lambda m: _req("nope", []),
    )
    cases += both(
        "invalid-order-tools-vs-missing-input",
        "neither input nor instructions together with a bad tool name",
        lambda m: _req(m, tools=[fn("a b")]),
    )
    cases += both(
        "invalid-order-reasoning-reject-vs-tool-choice",
        "reject: a call turn without reasoning together with tool_choice required in thinking mode",
        lambda m: _req(
            m, [user("a"), fcall("c", "now", "{}"), fout("c", "o")], tools=[NOARGS], tool_choice="required"
        ),
        options={"reasoning_content_behavior": "reject"},
    )
    cases += both(
        "invalid-order-json-schema-vs-temperature",
        "an invalid json_schema together with temperature out of range",
        lambda m: _req(
            m, "a", text={"format": {"type": "json_schema", "name": "x", "schema": [1]}}, temperature=5
        ),
    )
    cases += both(
        "invalid-order-tool-choice-vs-json-schema",
        "tool_choice required in thinking mode together with an invalid json_schema",
        lambda m: _req(
            m,
            "a",
            tools=[NOARGS],
            tool_choice="required",
            text={"format": {"type": "json_schema", "name": "x", "schema": [1]}},
        ),
    )
    cases.append(
        Case(
            name="v41-invalid-order-image-vs-pairing",
            description="V4.1: an invalid image in item 0 and an unpaired output in item 1 (items in order)",
            body=_req(V41, [user([iimage(file_id="x")]), fout("z", "o")]),
        )
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# Hardening: the JSON reader's depth limit, -0, very many tools, calls and namespaces


def _hardening() -> list[Case]:
    """Hostile shapes at their limits: history ``function_call.arguments`` strings nested around the JSON reader's
    depth limit (with and without ``-0``), bodies nested to the limit with ``-0``, 2,000 tools with a duplicate name
    at the very end, 100 parallel calls with outputs in reverse order, 100 namespaces sharing one name (numbered
    suffixes), and schema arrays with a duplicate at the end."""
    cases: list[Case] = []
    for depth in DEEP_DEPTHS:
        for kind in DEEP_KINDS:
            cases += both(
                f"deep-arguments-{kind}-{depth}",
                f"history function_call.arguments nested {depth} deep ({kind}); past 127 it is not valid JSON",
                lambda m, d=depth, k=kind: _req(
                    m, [user("Go"), fcall("c1", "probe", deep_json(d, k)), fout("c1", "done")]
                ),
            )
    for depth in (126, 127):
        cases += both(
            f"body-negzero-depth-{depth}",
            f"an unknown field holding -0 at body depth {depth}",
            lambda m, d=depth: deep_field(_req(m, "Hi"), d),
        )
    for depth in (128, 1000):
        cases += both(
            f"invalid-parse-body-negzero-depth-{depth}",
            f"an unknown field holding -0 at body depth {depth}: beyond the reader's limit",
            lambda m, d=depth: deep_field(_req(m, "Hi"), d),
        )
    # body 1, tools 2, tool 3, parameters 4, properties 5, "a" 6: 121 nested items reach depth 127.
    cases += both(
        "body-negzero-schema-depth-127",
        "a tool schema nested to body depth 127 whose innermost default is -0",
        lambda m: with_negzero(
            _req(
                m,
                "Hi",
                tools=[
                    fn(
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
                "Hi",
                tools=[
                    fn(
                        "probe",
                        "Probe.",
                        obj({"a": nested_items_schema(121, {"type": "number", "enum": [NEGZERO]})}),
                    )
                ],
            )
        ),
    )

    many = [fn(f"t{i}") for i in range(MANY_TOOLS)]
    cases += both(
        "invalid-many-tools-duplicate-last",
        f"{MANY_TOOLS} tools, the last one repeating the first one's name",
        lambda m: _req(m, "Hi", tools=[*many, fn("t0")]),
        only="v4",
    )
    cases += both(
        "invalid-order-tool-schema-vs-later-duplicate",
        "a bad schema in the middle of many tools and a repeated name at the end: per tool, so the schema wins",
        lambda m: _req(
            m, "Hi", tools=[*many[:1000], fn("bad", parameters={"type": "string"}), *many[1000:], fn("t0")]
        ),
        only="v4",
    )
    cases += both(
        "invalid-order-tool-duplicate-vs-later-schema",
        "a repeated name in the middle of many tools and a bad schema at the end: the name wins",
        lambda m: _req(
            m, "Hi", tools=[*many[:1000], fn("t0"), *many[1000:], fn("bad", parameters={"type": "string"})]
        ),
        only="v4",
    )

    calls = [fcall(f"c{i}", "probe", {"i": i}) for i in range(MANY_CALLS)]
    outputs = [fout(f"c{i}", f"r{i}") for i in reversed(range(MANY_CALLS))]
    cases += both(
        "many-parallel-calls-reversed-outputs",
        f"{MANY_CALLS} parallel calls answered in reverse order (written sorted by call id)",
        lambda m: _nothink(m, [user("Go"), *calls, *outputs, user("Next")]),
    )
    cases += both(
        "invalid-many-parallel-calls-duplicate-id-last",
        f"{MANY_CALLS} parallel calls, the last one repeating the first one's call_id",
        lambda m: _nothink(m, [user("Go"), *calls, fcall("c0", "probe", {}), *outputs]),
    )
    cases += both(
        "invalid-many-parallel-outputs-duplicate-last",
        f"{MANY_CALLS} parallel calls answered in reverse order, the last output repeating an earlier call_id",
        lambda m: _nothink(m, [user("Go"), *calls, *outputs[:-1], fout("c1", "again")]),
    )
    cases += both(
        "invalid-many-parallel-outputs-one-missing",
        f"{MANY_CALLS} parallel calls answered in reverse order but one",
        lambda m: _nothink(m, [user("Go"), *calls, *outputs[:-1], user("Next")]),
    )

    spaces = [namespace("gh", [fn("x", "X.")]) for _ in range(100)]
    cases += both(
        "many-namespaces-same-name",
        "100 namespaces all named gh with one member x, next to flat tools gh__x and gh__x_2 (V4's spelling)",
        lambda m: _nothink(
            m,
            [user("Go"), fcall("c1", "x", {}, namespace="gh"), fout("c1", "ok"), user("Next")],
            tools=[fn("gh__x"), fn("gh__x_2"), *spaces],
        ),
    )

    names = [f"p{i}" for i in range(MANY_TOOLS)]
    wide = {name: {"type": "string"} for name in names}
    cases += both(
        "invalid-schema-required-not-strings-repeated",
        "a required list with a number first and an object twice: its repeats are reported before its types",
        lambda m: _req(m, "Hi", tools=[fn("probe", parameters=obj({}, required=[1, {"a": 1}, {"a": 1}]))]),
        only="v4",
    )
    cases += both(
        "invalid-schema-required-duplicate-last",
        f"a schema with {MANY_TOOLS} required properties, the last name repeating the first",
        lambda m: _req(m, "Hi", tools=[fn("probe", parameters=obj(wide, required=[*names, "p0"]))]),
        only="v4",
    )
    cases += both(
        "invalid-strict-required-duplicate-last",
        f"a strict schema with {MANY_TOOLS} required properties, the last name repeating the first",
        lambda m: _req(
            m, "Hi", tools=[fn("probe", parameters=obj(wide, required=[*names, "p0"]), strict=True)]
        ),
        only="v4",
    )
    return cases


# ----------------------------------------------------------------------------------------------------------------
# Found by tools/diff_fuzz.py: tool-name length in bytes, type names written as one-key maps, and where the
# refusal of an unknown item (D9) comes when the reference refuses the request for another reason.


def _strict_type_tool(model: str, entries: list[Any]) -> JSON:
    """A request whose one strict tool has a property typed by the list ``entries``."""
    schema = obj({"o": {"type": entries}}, required=["o"], additionalProperties=False)
    return _nothink(model, "hi", tools=[fn("f", "d", schema, strict=True)])


def _fuzz_findings() -> list[Case]:
    cases: list[Case] = []
    for slug, name in (("e-acute-65", "é" * 65), ("cjk-43", "中" * 43), ("e-acute-64", "é" * 64)):
        cases += both(
            f"invalid-tool-name-bytes-{slug}",
            "a non-ASCII tool name: its length is counted in UTF-8 bytes (128 at most), before the pattern",
            lambda m, n=name: _nothink(m, "hi", tools=[fn(n, "d", obj({}))]),
        )
    for slug, entries in (
        ("unit-map", ["string", {"null": None}]),
        ("map-only", [{"integer": None}]),
    ):
        cases += both(
            f"strict-type-list-{slug}",
            "a strict schema's type list with a name written as a one-key map",
            lambda m, e=entries: _strict_type_tool(m, e),
        )
    for slug, entries in (
        ("map-value", [{"string": 1}]),
        ("map-object-value", [{"number": {}}]),
        ("map-unknown-name", [{"x": 1}, 5]),
        ("map-two-keys", ["string", {"a": 1, "b": 2}]),
        ("map-empty", [{}]),
    ):
        cases += both(
            f"invalid-strict-type-list-{slug}",
            "a strict schema's type list with a one-key-map entry that is not a plain type name",
            lambda m, e=entries: _strict_type_tool(m, e),
        )
        cases += both(
            f"invalid-text-format-type-list-{slug}",
            "the same entry in a strict json_schema text format",
            lambda m, e=entries: _nothink(
                m,
                "hi",
                text={
                    "format": {
                        "type": "json_schema",
                        "name": "out",
                        "strict": True,
                        "schema": obj({"o": {"type": e}}, required=["o"], additionalProperties=False),
                    }
                },
            ),
        )
    call = {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"}
    cases += both(
        "invalid-unknown-item-then-missing-output",
        "an unknown item where the call's output should be: the missing output is the error (D9 comes last)",
        lambda m: _nothink(m, [user("a"), call, {"type": "bogus_item"}, user("b")], tools=[WEATHER]),
    )
    web_search_call = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "o"}
    for slug, items in (
        ("then-output", [web_search_call, output]),
        ("then-other-output", [web_search_call, {**output, "call_id": "c9"}]),
        (
            "between-outputs",
            [{**call, "call_id": "c2"}, output, web_search_call, {**output, "call_id": "c2"}],
        ),
    ):
        cases += both(
            f"invalid-web-search-call-after-a-call-{slug}",
            "a web_search_call item after a call ends its turn as a reasoning item does: an output after it "
            "answers no call of the turn (other unknown items are passed over; D9 comes last)",
            lambda m, i=items: _nothink(m, [user("a"), call, *i], tools=[WEATHER]),
        )
    cases += both(
        "unknown-item-between-a-call-and-its-output",
        "an unknown item other than web_search_call between a call and its output: passed over (D9)",
        lambda m: _nothink(m, [user("a"), call, {"type": "mcp_call"}, output], tools=[WEATHER]),
        deviation="D9",
    )
    cases += both(
        "invalid-unknown-item-then-json-word",
        "an unknown item and a json_object format without the word: the format error comes first (D9 last)",
        lambda m: _nothink(m, [user("a"), {"type": "bogus_item"}], text={"format": {"type": "json_object"}}),
    )
    return cases


def _tool_search() -> list[Case]:
    """Tool search (observed on the reference, not in the spec): a client-executed ``tool_search`` tool is the
    ``tool_search`` function on V4.1; ``tool_search_call`` items are its calls, and ``tool_search_output`` items
    its results, whose tools are deferred tools from then on, announced in a system message; V4 reads the items
    and drops them. ``additional_tools`` items are dropped unread by the reference (D9 for dscodec)."""
    cases: list[Case] = []
    ask = "What time is it in Paris?"
    search = {
        "type": "tool_search",
        "execution": "client",
        "description": "Find more tools.",
        "parameters": obj({"query": {"type": "string"}}, required=["query"]),
    }
    clock = fn("get_time", "The time in a city.", obj({"city": {"type": "string"}}))

    def call(call_id: str = "ts_1", **arguments: Any) -> JSON:
        return {
            "type": "tool_search_call",
            "call_id": call_id,
            "execution": "client",
            "status": "completed",
            "arguments": arguments or {"query": "time"},
        }

    def output(tools: list[JSON], call_id: str = "ts_1") -> JSON:
        return {
            "type": "tool_search_output",
            "call_id": call_id,
            "execution": "client",
            "status": "completed",
            "tools": tools,
        }

    cases += both(
        "tool-search-client-tool",
        "a client-executed tool_search tool (a function on V4.1, dropped on V4) beside a function",
        lambda m: _req(m, ask, tools=[search, WEATHER]),
    )
    cases += both(
        "tool-search-server-tool-dropped",
        "tool_search tools executed by the server, or saying nothing, are dropped",
        lambda m: _req(
            m, ask, tools=[{"type": "tool_search", "execution": "server"}, {"type": "tool_search"}, WEATHER]
        ),
    )
    cases += both(
        "tool-search-call-and-output",
        "a search call and its output, which loads a function (deferred, announced after the result)",
        lambda m: _req(m, [user(ask), call(), output([clock])], tools=[search, WEATHER]),
    )
    cases += both(
        "tool-search-output-kinds",
        "an output loading a namespace (one member's name taken), apply_patch, web search and a tool search",
        lambda m: _req(
            m,
            [
                user(ask),
                call(),
                output(
                    [
                        namespace("gh", [fn("x", "X."), fn("y")], description="GitHub."),
                        {"type": "custom", "name": "apply_patch"},
                        {
                            "type": "web_search",
                            "search_context_size": "low",
                            "user_location": {"city": "Paris"},
                        },
                        {"type": "tool_search", "execution": "server"},
                    ]
                ),
            ],
            tools=[WEATHER, namespace("gh", [fn("x")], description="GH")],
        ),
    )
    cases += both(
        "tool-search-parallel",
        "two searches and a function call in one turn, outputs out of order: results by call id, announcements "
        "in item order",
        lambda m: _req(
            m,
            [
                user(ask),
                call("ts_b", query="b"),
                fcall("c_1", "get_weather", '{"city": "Paris"}'),
                call("ts_a", query="a"),
                fout("c_1", "Sunny."),
                output([fn("tool_b")], "ts_b"),
                output([fn("tool_a")], "ts_a"),
                assistant("Loaded."),
                user("Go on."),
            ],
            tools=[search, WEATHER],
        ),
    )
    cases += both(
        "tool-search-tool-choice-none",
        "tool_choice none: the tools and the announcements go, the search result stays",
        lambda m: _req(m, [user(ask), call(), output([clock])], tools=[search], tool_choice="none"),
    )
    cases += both(
        "tool-search-answers-a-function",
        "a tool search output answering a function call, and a function output answering a search call (V4.1)",
        lambda m: _nothink(
            m,
            [
                user(ask),
                fcall("c_1", "get_weather", "{}"),
                output([clock], "c_1"),
                call("ts_2"),
                fout("ts_2", "x"),
            ],
            tools=[search, WEATHER],
        ),
        only="v41",  # V4 drops the search call, and the function output then answers nothing
    )
    for slug, name in (("loaded", "get_time"), ("offered", "get_weather")):
        cases += both(
            f"tool-search-named-choice-{slug}",
            f"a named tool choice ({name}) keeps only that tool, in the announcements too (one left empty goes)",
            lambda m, n=name: _nothink(
                m,
                [user(ask), call(), output([clock, fn("get_date")])],
                tools=[search, WEATHER],
                tool_choice={"type": "function", "name": n},
            ),
            only="v41",  # V4 loads nothing
        )
    cases += both(
        "unknown-item-additional-tools",
        "additional_tools items are dropped unread by the reference, with their tools (dscodec: 400, D9)",
        lambda m: _req(
            m,
            [user(ask), {"type": "additional_tools", "role": "developer", "tools": [clock]}],
            tools=[WEATHER],
        ),
        deviation="D9",
    )
    cases += both(
        "invalid-tool-search-call-arguments-string",
        "a tool search call's arguments must be an object",
        lambda m: _req(m, [user(ask), {**call(), "arguments": '{"query": "time"}'}, output([clock])]),
    )
    cases += both(
        "invalid-tool-search-call-bare",
        "a tool search call with neither call_id nor arguments: call_id is named first",
        lambda m: _req(m, [user(ask), {"type": "tool_search_call"}]),
    )
    cases += both(
        "invalid-tool-search-output-no-call-id",
        "a tool search output needs a call_id",
        lambda m: _req(m, [user(ask), call(), {k: v for k, v in output([clock]).items() if k != "call_id"}]),
    )
    cases += both(
        "invalid-tool-search-output-hosted-tool",
        "a tool search output loading a hosted tool (V4.1; V4 drops the items)",
        lambda m: _req(
            m, [user(ask), call(), output([{"type": "mcp", "server_label": "docs"}])], tools=[search]
        ),
        only="v41",
    )
    cases += both(
        "invalid-tool-search-output-duplicate",
        "a loaded tool named like an offered one (V4.1)",
        lambda m: _req(m, [user(ask), call(), output([WEATHER])], tools=[search, WEATHER]),
        only="v41",
    )
    cases += both(
        "invalid-tool-search-call-unanswered",
        "a tool search call without its output (V4.1)",
        lambda m: _req(m, [user(ask), call(), user("Well?")], tools=[search]),
        only="v41",
    )
    cases += both(
        "invalid-tool-search-output-bad-name",
        "a loaded tool's name is checked where it stands (V4.1)",
        lambda m: _req(m, [user(ask), call(), output([fn("bad name")])], tools=[search]),
        only="v41",
    )
    mcp = {"type": "mcp", "server_label": "docs"}
    stray = {"type": "function_call_output", "call_id": "zz", "output": "r"}
    web = {"type": "web_search"}
    cases += both(
        "invalid-tool-search-output-web-search-reject-option",
        "a web search among the loaded tools, under responses_web_search=reject (V4.1; V4 drops the items)",
        lambda m: _req(m, [user(ask), call(), output([clock, web])], tools=[search]),
        options={"responses_web_search": "reject"},
        only="v41",
    )
    cases += both(
        "tool-search-output-web-search-dropped",
        "a web search among the loaded tools loads nothing under the default responses_web_search=drop",
        lambda m: _req(m, [user(ask), call(), output([clock, web])], tools=[search]),
        options={"responses_web_search": "drop"},
    )
    cases += both(
        "invalid-tool-search-output-web-search-before-image",
        "the loaded web search is refused in the check of every output's tools, before an earlier image "
        "(V4.1, responses_web_search=reject)",
        lambda m: _req(
            m,
            [{"role": "user", "content": [{"type": "input_image", "image_url": ""}]}, call(), output([web])],
            tools=[search],
        ),
        options={"responses_web_search": "reject"},
        only="v41",
    )
    cases += both(
        "invalid-tool-search-output-bad-name-before-pairing",
        "every output's loaded tools are checked before any item is converted: a later bad name is named "
        "before an earlier output that answers no call (V4.1; V4 drops the items unchecked)",
        lambda m: _req(m, [user(ask), stray, user("Well?"), output([fn("bad name")])], tools=[search]),
    )
    cases += both(
        "invalid-tool-search-output-bad-custom-before-call-id",
        "a later output's custom tool is checked before an earlier call's empty call_id (V4.1)",
        lambda m: _req(
            m,
            [
                user(ask),
                {**call(), "call_id": ""},
                user("Well?"),
                output([{"type": "custom", "name": "other"}]),
            ],
            tools=[search],
        ),
        only="v41",
    )
    cases += both(
        "invalid-tool-search-output-bad-namespace-before-images",
        "a later output's namespace is checked before an earlier message's image (V4.1)",
        lambda m: _req(
            m,
            [
                {"role": "user", "content": [{"type": "input_image", "image_url": "not a url"}]},
                output([{"type": "namespace", "name": "", "tools": []}]),
            ],
            tools=[search],
        ),
        only="v41",
    )
    cases += both(
        "invalid-tool-search-output-hosted-tool-unpaired",
        "an output that answers no call and loads a hosted tool: the pairing is named first (V4.1)",
        lambda m: _req(m, [user(ask), output([mcp])], tools=[search]),
        only="v41",
    )
    cases += both(
        "invalid-tool-search-output-hosted-tool-twice",
        "a second output of one call, loading a hosted tool: the duplicate is named first (V4.1)",
        lambda m: _req(m, [user(ask), call(), output([clock]), output([mcp])], tools=[search]),
        only="v41",
    )
    cases += both(
        "invalid-tool-search-output-hosted-tool-then-bad-name",
        "a hosted tool before a badly named one: the name is named first, the hosted tool after pairing (V4.1)",
        lambda m: _req(m, [user(ask), call(), output([mcp, fn("bad name")])], tools=[search]),
        only="v41",
    )
    # reasoning_content_behavior "reject": on V4.1 a client-executed tool search, and the tools a search output
    # loaded, are offered tools (whatever tool_choice says); V4 reads neither as one. Found by request fuzzing.
    reject = {"reasoning_content_behavior": "reject"}
    answered = [user("a"), assistant("x")]
    loaded = [call(), output([clock]), *answered]
    cases += both(
        "reject-reasoning-tool-search-offers-no-tools",
        "reject: a client tool search, or tools a search output loaded, offer V4 no tools",
        lambda m: _req(m, [*loaded[:2], *answered], tools=[search]),
        options=reject,
        only="v4",
    )
    cases += both(
        "invalid-reject-reasoning-client-tool-search",
        "reject: a client-executed tool search is an offered tool",
        lambda m: _req(m, answered, tools=[search]),
        options=reject,
        only="v41",
    )
    cases += both(
        "invalid-reject-reasoning-client-tool-search-choice-none",
        "reject: a client-executed tool search is an offered tool with tool_choice none too",
        lambda m: _req(m, answered, tools=[search], tool_choice="none"),
        options=reject,
        only="v41",
    )
    cases += both(
        "invalid-reject-reasoning-tools-loaded-by-search",
        "reject: the tools a search output in the history loaded are offered, with no tools field",
        lambda m: _req(m, loaded),
        options=reject,
        only="v41",
    )
    cases += both(
        "invalid-reject-reasoning-before-tool-choice",
        "reject: the missing reasoning is named before a tool_choice thinking mode refuses",
        lambda m: _req(m, loaded, tool_choice="required"),
        options=reject,
        only="v41",
    )
    cases += both(
        "reject-reasoning-server-tool-search-offers-none",
        "reject: a tool search the server executes, and a search output loading only a web search, offer none",
        lambda m: _req(
            m, [call(), output([{"type": "web_search"}]), *answered], tools=[{"type": "tool_search"}]
        ),
        options=reject,
    )
    return cases


def cases() -> list[Case]:
    """All Responses golden cases, in a stable order."""
    return [
        *_thinking(),
        *_sampling(),
        *_input_shapes(),
        *_images(),
        *_tool_history(),
        *_tools(),
        *_tool_choice(),
        *_text_format(),
        *_misc(),
        *_tool_search(),
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
