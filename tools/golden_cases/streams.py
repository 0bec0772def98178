"""Scenario catalogue for the response-path golden fixtures (model output -> stream events).

Each :class:`Scenario` describes one model turn: the model version, the request settings that shape parsing
(thinking, tools, tool_choice, JSON mode, stop sequences, Chat prefix continuation), the backend's prompt usage,
the raw model output text (with the special spellings a real model emits) and how the backend finished.
``tools/record_streams.py`` turns every scenario into per-protocol request bodies, drives the reference with
several chunkings of the output and writes ``fixtures/streams/<name>/``.

This module is pure data plus small builders; it does not import the reference. The spec sections each group
exercises are named in the group's docstring (BEHAVIOR.md §5.x, DEVIATIONS.md Dn).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Version = Literal["v4", "v4.1"]
Finish = Literal["stop", "length", "content_filter"]
Protocol = Literal["chat_completions", "responses", "messages"]
ToolSet = Literal["none", "weather", "namespaced", "apply_patch", "tool_search"]
ToolChoice = Literal["auto", "none", "required", "named", "any"]
#: Chat prefix continuation (spec §2.1.2): "content" = prefix with content (ContentContinuation), "reasoning" =
#: empty content plus reasoning_content (ReasoningContinuation), "empty" = empty content and no reasoning
#: (observed: ReasoningStart), "nothink" = a prefix in nothink mode (stage None).
Prefix = Literal["content", "reasoning", "empty", "nothink"]
ChatStream = Literal["include_usage", "stream", "none"]

PROTOCOLS: tuple[Protocol, ...] = ("chat_completions", "responses", "messages")
VERSIONS: tuple[Version, ...] = ("v4", "v4.1")
MODEL_NAMES: dict[Version, str] = {"v4": "DeepSeek-V4-Pro", "v4.1": "DeepSeek-V4.1-Flash"}


@dataclass(frozen=True)
class Ready:
    """The backend's ``ready`` chunk: prompt usage and system fingerprint (spec §5.1, §5.6)."""

    prompt_tokens: int = 20
    prompt_cache_hit_tokens: int = 5
    system_fingerprint: str | None = "fp_golden"


DEFAULT_READY = Ready()


@dataclass(frozen=True)
class TextPiece:
    """One explicit ``text`` chunk; ``token_count`` None means "the full-vocab id count of the text"."""

    text: str
    token_count: int | None = None


@dataclass(frozen=True)
class TokensOf:
    """One explicit ``tokens`` chunk holding the full-vocab ids of ``text`` (with ``logprobs``, the recorder's
    deterministic fake entries for those ids)."""

    text: str
    logprobs: bool = False


@dataclass(frozen=True)
class ExplicitChunking:
    """A hand-picked chunking (empty text chunks, a marker split at a chosen place, mixed text and tokens)."""

    name: str
    pieces: tuple[TextPiece | TokensOf, ...]
    tokenizer: bool = False


@dataclass(frozen=True)
class Scenario:
    """One model turn to record for every protocol that can express it."""

    name: str
    description: str
    version: Version
    output: str
    thinking: bool = True
    finish: Finish | None = "stop"
    ready: Ready | None = DEFAULT_READY
    tools: ToolSet = "none"
    tool_choice: ToolChoice | None = None
    json_object: bool = False
    stop: tuple[str, ...] = ()
    prefix: Prefix | None = None
    logprobs: bool = False
    signature: str | None = None
    chat_stream: ChatStream = "include_usage"
    explicit: tuple[ExplicitChunking, ...] = ()
    #: Restrict to these protocols (on top of what the settings allow).
    only: tuple[Protocol, ...] | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    #: Where dscodec deviates on purpose and the reference can still show the intended result: (deviation id,
    #: an output the reference reads the way dscodec reads ``output``). See :meth:`reads_as_output`.
    reads_as: tuple[str, str] | None = None

    def reads_as_output(self) -> tuple[str, str] | None:
        """(deviation, equivalent output) to record a deviation-aware expectation from, or None.

        D15 is derived: an output holding the end-of-sentence spelling reads as the output cut right before it
        (the reference writes the token as text; dscodec ends the output there). Other deviations are given
        by hand in ``reads_as`` (D8: a malformed parameter tag rewritten as the well-formed tag dscodec reads).
        """
        if self.reads_as is not None:
            return self.reads_as
        if EOS in self.output:
            return ("D15", self.output[: self.output.index(EOS)])
        return None

    def protocols(self) -> tuple[Protocol, ...]:
        """The protocols whose requests can express this scenario's settings."""
        allowed = set(self.only or PROTOCOLS)
        if self.prefix is not None:  # only Chat has a prefix flag (spec §2.1.2, §8 q6)
            allowed &= {"chat_completions"}
        if self.json_object:  # Messages has no structured output (spec §2.3)
            allowed &= {"chat_completions", "responses"}
        if self.stop:  # Responses has no stop sequences (spec §2.2)
            allowed &= {"chat_completions", "messages"}
        if self.tools in (
            "namespaced",
            "apply_patch",
            "tool_search",
        ):  # Responses-only tool kinds (spec §2.2)
            allowed &= {"responses"}
        if self.signature is not None or self.tool_choice == "any":
            allowed &= {"messages"}
        return tuple(p for p in PROTOCOLS if p in allowed)


# --------------------------------------------------------------------------------------------------------------
# DSML markup builders (spec §3.5 spellings; §5.3 grammar). The DSML token has no angle brackets of its own.

DSML = "｜DSML｜"
THINK_END = "</think>"
THINK_START = "<think>"
EOS = "<｜end▁of▁sentence｜>"
BOS = "<｜begin▁of▁sentence｜>"
USER = "<｜User｜>"
ASSISTANT = "<｜Assistant｜>"
IMAGE = "<｜image｜>"


@dataclass(frozen=True)
class Dialect:
    """Tool-call markup spellings of one model version (V4 ``tool_calls``/``invoke``; V4.1 `` calls``/`` invoke``)."""

    block: str
    invoke: str
    parameter: str

    @property
    def open(self) -> str:
        return f"<{DSML}{self.block}>"

    @property
    def close(self) -> str:
        return f"</{DSML}{self.block}>"

    @property
    def invoke_open(self) -> str:
        return f"<{DSML}{self.invoke}"

    @property
    def invoke_close(self) -> str:
        return f"</{DSML}{self.invoke}>"

    @property
    def param_open(self) -> str:
        return f"<{DSML}{self.parameter}"

    @property
    def param_close(self) -> str:
        return f"</{DSML}{self.parameter}>"

    def param(self, key: str, value: str, *, string: bool | str = True) -> str:
        flag = string if isinstance(string, str) else ("true" if string else "false")
        return f'{self.param_open} name="{key}" string="{flag}">{value}{self.param_close}'

    def call(self, name: str, *params: str) -> str:
        body = "".join(p + "\n" for p in params)
        return f'{self.invoke_open} name="{name}">\n{body}{self.invoke_close}'

    def block_of(self, *calls: str) -> str:
        return self.open + "\n" + "\n".join(calls) + "\n" + self.close


DIALECTS: dict[Version, Dialect] = {
    "v4": Dialect(block="tool_calls", invoke="invoke", parameter="parameter"),
    "v4.1": Dialect(block=" calls", invoke=" invoke", parameter=" parameter"),
}


def _other(version: Version) -> Version:
    return "v4.1" if version == "v4" else "v4"


def _tag(version: Version) -> str:
    return "v4" if version == "v4" else "v41"


Builder = Callable[[Version], list[Scenario]]
_GROUPS: list[Builder] = []


def _group(fn: Builder) -> Builder:
    _GROUPS.append(fn)
    return fn


class _Maker:
    """Collects the scenarios of one group for one version, prefixing names with the version and group."""

    def __init__(self, version: Version, group: str) -> None:
        self.version = version
        self.group = group
        self.items: list[Scenario] = []

    def __call__(self, case: str, output: str, description: str, **settings: Any) -> None:
        name = f"{_tag(self.version)}-{self.group}-{case}"
        self.items.append(
            Scenario(name=name, description=description, version=self.version, output=output, **settings)
        )


# --------------------------------------------------------------------------------------------------------------
# Groups


@_group
def _stages(v: Version) -> list[Scenario]:
    """Text stage machine: reasoning/content split and newline rules (§5.2)."""
    s = _Maker(v, "stage")
    s("reasoning-then-answer", "Let me think.</think>The answer is 4.", "reasoning then answer")
    s(
        "reasoning-newlines",
        "\n\nLet me think.\n\n</think>\n\nAnswer.\n\n",
        "leading/trailing LF of reasoning dropped, leading LF of content dropped, trailing LF of content kept",
    )
    s("reasoning-crlf-spaces", "  \n r\r\n</think>\r\nx", "only LF is stripped: spaces and CRLF are kept")
    s("reasoning-inner-newlines", "a\n\nb\n\n\nc</think>d", "newlines followed by more reasoning are emitted")
    s("no-think-end", "abc\n\n", "reasoning never closed: held-back trailing newlines flushed at finish")
    s("no-think-end-length", "abc\n\n", "reasoning never closed, backend length finish", finish="length")
    s("think-end-in-content", "r</think>a</think>b</think>", "every </think> in content is removed")
    s("think-start-in-reasoning", "<think>r</think>A", "<think> in reasoning is kept as text")
    s("think-start-in-content", "r</think>A<think>B", "<think> in content is kept as text")
    s("empty-reasoning", "</think>Answer", "empty reasoning")
    s("empty-reasoning-newlines", "\n\n</think>\n\nAnswer", "reasoning made only of newlines")
    s("empty-output", "", "empty model output (thinking)")
    s("empty-output-nothink", "", "empty model output (nothink)", thinking=False)
    s("only-newlines-nothink", "\n\n\n", "nothink output made only of newlines", thinking=False)
    s("only-newlines-content", "r</think>\n\n\n", "content made only of newlines")
    s("content-trailing-newline", "r</think>Hi\n", "trailing newline of content kept")
    s("nothink-plain", "Hello world.", "nothink plain answer", thinking=False)
    s(
        "nothink-leading-newlines",
        "\n\n\nHello\n\n",
        "nothink: leading LF dropped, trailing kept",
        thinking=False,
    )
    s("nothink-think-end", "a</think>b", "nothink: </think> removed from content", thinking=False)
    s("nothink-think-pair", "<think>x</think>y", "nothink: <think> kept, </think> removed", thinking=False)
    s(
        "nothink-leading-think-end",
        "</think>\n\nHello",
        "nothink output starting with </think>",
        thinking=False,
    )
    s(
        "specials-content",
        f"A{EOS}B{USER}C{BOS}{IMAGE}{ASSISTANT}D",
        "special spellings pass through as content",
        thinking=False,
    )
    s("specials-reasoning", f"R{EOS}{USER}x</think>A{EOS}", "special spellings in reasoning and content")
    s(
        "dsml-no-tools",
        DIALECTS[v].block_of(DIALECTS[v].call("f", DIALECTS[v].param("a", "1"))),
        "DSML markup without tools is plain content",
        thinking=False,
    )
    s(
        "angle-brackets",
        "r < s</think>a < b <div>x</div> <| <｜ｘ｜> < /think>",
        "plain '<' and marker-like text in reasoning and content",
    )
    s(
        "markdown",
        "Plan:\n- step 1\n- step 2\n</think># Title\n\n```python\nprint('hi')\n```\n\n| a | b |\n|---|---|\n",
        "markdown and code in content",
    )
    s(
        "long-reasoning",
        ("The quick brown fox jumps over the lazy dog. " * 6).strip() + "</think>Done.",
        "a longer reasoning text",
    )
    s("whitespace-content", "r</think>   \t  ", "content of spaces and a tab")
    s("crlf-content", "\r\n\r\nx\r\n", "nothink content with CRLF (not stripped)", thinking=False)
    # Special ids written as text, with the whole output also pushed as one chunk of ids (x-ids-whole): in token
    # input each special id is a delta of its own.
    for case, out, options in (
        ("special-ids-content", f"a{THINK_START}b{USER}{USER}c <think> d", {"thinking": False}),
        ("special-ids-reasoning", f"r{THINK_START}s\n\n{USER}\n\n</think>\n\nc{THINK_START}", {}),
        ("special-ids-stop", f"a{THINK_START}bEN{USER}Dx END y", {"thinking": False, "stop": ("END",)}),
        ("special-ids-tools", f"a <{THINK_START}\n\n{USER}<b", {"thinking": False, "tools": "weather"}),
        ("special-ids-logprobs", f"r{THINK_START}s</think>a{USER}b", {"logprobs": True}),
    ):
        logprobs = bool(options.get("logprobs"))
        explicit = (ExplicitChunking("ids-whole", (TokensOf(out, logprobs=logprobs),), tokenizer=True),)
        s(case, out, "special ids written as text, also as one chunk of ids", explicit=explicit, **options)
    return s.items


@_group
def _partial_markers(v: Version) -> list[Scenario]:
    """Partial markers at the end of the stream are flushed (§5.3 last bullet, §5.2)."""
    s = _Maker(v, "partial")
    s("dsml-tools", f"hello <{DSML[:2]}", "partial '<｜D' at end with tools", thinking=False, tools="weather")
    s(
        "dsml-token-tools",
        f"hello <{DSML}",
        "'<' + DSML token at end with tools",
        thinking=False,
        tools="weather",
    )
    s("lt-tools", "hello <", "a lone '<' at end with tools", thinking=False, tools="weather")
    s(
        "opener-prefix-tools",
        f"hello <{DSML}tool_ca",
        "partial block opener at end",
        thinking=False,
        tools="weather",
    )
    s(
        "opener-prefix-v41-tools",
        f"hello <{DSML} cal",
        "partial V4.1 block opener at end",
        thinking=False,
        tools="weather",
    )
    s("think-end-prefix", "hello </thi", "partial </think> at end of reasoning")
    s("think-end-prefix-content", "r</think>hello </thi", "partial </think> at end of content")
    s("think-end-prefix-nothink", "hello </th", "partial </think> at end of nothink content", thinking=False)
    s(
        "dsml-other-tag",
        f"x <{DSML}foo> y",
        "DSML followed by an unknown tag name in content",
        thinking=False,
        tools="weather",
    )
    s("dsml-bare", f"x {DSML} y", "bare DSML token without '<' in content", thinking=False, tools="weather")
    s(
        "invoke-without-block",
        DIALECTS[v].call("get_weather", DIALECTS[v].param("city", "Paris")),
        "an invoke without the block opener is content",
        thinking=False,
        tools="weather",
    )
    return s.items


@_group
def _tool_calls(v: Version) -> list[Scenario]:
    """DSML tool calls and incremental JSON arguments (§5.3), finish mapping (§5.1)."""
    d = DIALECTS[v]
    o = DIALECTS[_other(v)]
    s = _Maker(v, "tool")
    w = d.call("get_weather", d.param("city", "Paris"), d.param("days", "3", string=False))
    for think in (True, False):
        m = "think" if think else "nothink"
        pre = "I should check the weather.</think>" if think else ""
        s(
            f"single-{m}",
            pre + "Checking.\n\n" + d.block_of(w),
            "text then one call",
            thinking=think,
            tools="weather",
        )
        s(f"only-call-{m}", pre + d.block_of(w), "a call without text", thinking=think, tools="weather")
        s(
            f"two-calls-{m}",
            pre + d.block_of(w, d.call("search", d.param("q", "weather in Paris"))),
            "two invokes in one block",
            thinking=think,
            tools="weather",
        )
        s(
            f"no-finish-{m}",
            pre + d.block_of(w),
            "tool call without a backend finish chunk",
            thinking=think,
            tools="weather",
            finish=None,
        )
    # Observed: with thinking on and an empty emitted reasoning, call ids read ``call_NN_ET_…``.
    s(
        "empty-reasoning-call",
        "</think>" + d.block_of(w),
        "empty reasoning then a call (ids get ET_)",
        tools="weather",
    )
    s(
        "newline-reasoning-call",
        "\n\n</think>Sure.\n\n" + d.block_of(w),
        "reasoning of newlines only, text, then a call",
        tools="weather",
    )
    s("think-block-at-start", d.block_of(w), "thinking mode, output starts with the block", tools="weather")
    s(
        "three-calls",
        "</think>" + d.block_of(w, d.call("search", d.param("q", "a")), d.call("search")),
        "three invokes, the last without parameters",
        tools="weather",
    )
    s(
        "no-params",
        d.block_of(d.call("search")),
        "an invoke without parameters yields {}",
        thinking=False,
        tools="weather",
    )
    s(
        "other-spelling",
        "r</think>" + o.block_of(o.call("get_weather", o.param("city", "Rome"))),
        "the other version's DSML spelling is accepted too",
        tools="weather",
    )
    s(
        "mixed-spelling",
        "r</think>" + d.open + "\n" + o.call("get_weather", d.param("city", "Oslo")) + "\n" + d.close,
        "block opener of one spelling with invoke/parameter of the other",
        tools="weather",
    )
    s(
        "unknown-name",
        d.block_of(d.call("zzz", d.param("a", "b"))),
        "names are not validated",
        thinking=False,
        tools="weather",
    )
    s(
        "text-after-block",
        "Hi.\n\n" + d.block_of(w) + "\n\nAnything after is discarded.",
        "text after the block",
        thinking=False,
        tools="weather",
    )
    s(
        "second-block",
        d.block_of(w) + "\n\n" + d.block_of(d.call("search", d.param("q", "x"))),
        "a second block is discarded",
        thinking=False,
        tools="weather",
    )
    s(
        "in-reasoning",
        "I will call it.\n\n" + d.block_of(w),
        "block inside reasoning ends reasoning",
        tools="weather",
    )
    s(
        "in-reasoning-after-text",
        "I will call it.\n\n" + d.block_of(w) + "</think>late content",
        "block inside reasoning, then </think> and text after the block",
        tools="weather",
    )
    s(
        "text-newlines-before",
        "r</think>Let me check.\n\n\n\n" + d.block_of(w),
        "content newlines directly before the block are dropped",
        tools="weather",
    )
    s(
        "text-single-newline-before",
        "Let me check.\n" + d.block_of(w),
        "single newline before the block",
        thinking=False,
        tools="weather",
    )
    s(
        "no-newlines",
        d.open + d.invoke_open + ' name="get_weather">' + d.param("city", "Paris") + d.invoke_close + d.close,
        "markup without newlines between tags",
        thinking=False,
        tools="weather",
    )
    s(
        "extra-whitespace",
        d.open
        + "\n\n  "
        + d.invoke_open
        + ' name="search">\n   '
        + d.param("q", "x")
        + "\n\n"
        + d.invoke_close
        + "\n  \n"
        + d.close,
        "extra blank lines and spaces between tags",
        thinking=False,
        tools="weather",
    )
    s(
        "tool-choice-none",
        "r</think>" + d.block_of(w),
        "tool_choice none: markup is plain content",
        tools="weather",
        tool_choice="none",
    )
    s(
        "tool-choice-auto",
        d.block_of(w),
        "explicit tool_choice auto",
        thinking=False,
        tools="weather",
        tool_choice="auto",
    )
    s(
        "length-in-args",
        "r</think>" + d.block_of(w)[: len(d.open) + 60],
        "length finish inside a tool call",
        tools="weather",
        finish="length",
    )
    # The output cut inside the second parameter's tag: before ``name=``, inside the name, right after it, after
    # the space that follows it, inside ``string="…"``.
    second = w.index(d.param_open, w.index(d.param_close))
    for case, cut in (
        ("bare", len(d.param_open)),
        ("name", len(d.param_open) + len(' name="da')),
        ("quote", len(d.param_open) + len(' name="days"')),
        ("space", len(d.param_open) + len(' name="days" ')),
        ("flag", len(d.param_open) + len(' name="days" string="fa')),
    ):
        s(
            f"length-in-tag-{case}",
            "r</think>" + d.open + "\n" + w[: second + cut],
            "length finish inside a parameter tag",
            tools="weather",
            finish="length",
        )
    # The output cut inside a string value right after "<" or "</" (held back: either may begin the closing tag):
    # the held text is the value's.
    held_value = d.block_of(d.call("get_weather", d.param("city", "Paris</b")))
    held = held_value.index("Paris</b") + len("Paris")
    for case, cut in (("lt", 1), ("close", 2)):
        s(
            f"length-in-value-held-{case}",
            "r</think>" + held_value[: held + cut],
            "length finish inside a string value right after a held '<' or '</'",
            tools="weather",
            finish="length",
        )
    s(
        "length-in-first-tag",
        "r</think>" + d.open + "\n" + w[: w.index(d.param_open) + len(d.param_open) + len(' name="ci')],
        "length finish inside the first parameter's tag",
        tools="weather",
        finish="length",
    )
    s(
        "length-after-call",
        "r</think>" + d.block_of(w),
        "length finish after a complete call",
        tools="weather",
        finish="length",
    )
    s(
        "content-filter",
        "r</think>Sure.\n\n" + d.block_of(w),
        "content_filter with a tool call",
        tools="weather",
        finish="content_filter",
    )
    s("no-ready", d.block_of(w), "tool call without ready chunk", thinking=False, tools="weather", ready=None)
    s(
        "cjk-args",
        d.block_of(d.call("search", d.param("q", "北京天气 😀 مرحبا"))),
        "non-ASCII argument value",
        thinking=False,
        tools="weather",
    )
    s(
        "long-string",
        d.block_of(d.call("search", d.param("q", "word " * 40))),
        "a long string value",
        thinking=False,
        tools="weather",
    )
    return s.items


@_group
def _tool_values(v: Version) -> list[Scenario]:
    """Every parameter value kind (§5.3) and non-JSON string="false" values (D8)."""
    d = DIALECTS[v]
    s = _Maker(v, "value")

    def one(case: str, desc: str, *params: str, think: bool = False) -> None:
        pre = "ok</think>" if think else ""
        s(case, pre + d.block_of(d.call("f", *params)), desc, thinking=think, tools="weather")

    one(
        "string-escapes",
        "quotes, backslash, newline, tab, control char, slash, unicode, </x>",
        d.param("s", 'a"b\\c\nd\te/\x01\x1f中😀</x>'),
    )
    one("string-cr-ff", "CR, form feed, backspace, DEL, U+2028", d.param("s", "a\rb\x0cc\x08d\x7fe\u2028f"))
    one(
        "string-lt",
        "value with '<' and partial markup that is not a DSML close",
        d.param("s", "a < b </c> <｜x｜>"),
    )
    one("string-dsml-lookalike", "value containing '</' + DSML + other text", d.param("s", f"x</{DSML}foo>y"))
    one("string-empty", "empty string value", d.param("s", ""))
    one("string-spaces", "string value of spaces and newlines only", d.param("s", " \n "))
    one("string-json-like", "string=true value that looks like JSON stays a string", d.param("s", '{"a": 1}'))
    one(
        "numbers",
        "integers, negative, float, exponent",
        d.param("a", "3", string=False),
        d.param("b", "-1.5e3", string=False),
        d.param("c", "0", string=False),
        d.param("d", "12345678901234567890", string=False),
    )
    one(
        "booleans-null",
        "true, false, null",
        d.param("a", "true", string=False),
        d.param("b", "false", string=False),
        d.param("c", "null", string=False),
    )
    one(
        "arrays-objects",
        "arrays and nested objects",
        d.param("a", '{"x": [1, 2], "y": null}', string=False),
        d.param("b", "[1,2]", string=False),
        d.param("c", '[{"k": "v\\n"}, []]', string=False),
        d.param("d", "{}", string=False),
    )
    one(
        "json-multiline",
        "a pretty-printed JSON value with newlines",
        d.param("a", '{\n  "x": 1,\n  "y": [\n    2\n  ]\n}', string=False),
    )
    one(
        "mixed-kinds",
        "string and JSON values mixed",
        d.param("city", "Paris"),
        d.param("days", "3", string=False),
        d.param("units", "metric"),
        d.param("flags", '["a"]', string=False),
        think=True,
    )
    one("d8-empty", "D8: empty string=false value", d.param("days", "", string=False))
    one("d8-not-json", "D8: bare words as string=false", d.param("a", "not json", string=False))
    one("d8-spaces", "D8: number padded with spaces", d.param("a", " 3 ", string=False))
    one(
        "d8-nan-inf",
        "D8: NaN and Infinity",
        d.param("a", "NaN", string=False),
        d.param("b", "Infinity", string=False),
        d.param("c", "-Infinity", string=False),
    )
    one("d8-truncated-json", "D8: unbalanced JSON", d.param("a", '{"x": [1, 2', string=False))
    one("d8-single-quotes", "D8: Python-style literal", d.param("a", "{'x': True}", string=False))
    one(
        "d8-string-unquoted",
        "D8: string value marked string=false",
        d.param("city", "Paris", string=False),
        d.param("days", "2", string=False),
    )
    one("d8-trailing-garbage", "D8: JSON followed by text", d.param("a", "1 2", string=False))
    one(
        "d8-empty-then-valid",
        "D8: empty value followed by a valid one",
        d.param("a", "", string=False),
        d.param("b", "true", string=False),
        think=True,
    )
    one("dup-keys", "the same key twice", d.param("a", "1", string=False), d.param("a", "x"))
    one("key-unicode", "non-ASCII and escaped-looking key", d.param("città", "x"), d.param("k\\n", "y"))
    return s.items


@_group
def _malformed(v: Version) -> list[Scenario]:
    """Malformed and truncated markup (every case listed in §5.3, plus neighbours)."""
    d = DIALECTS[v]
    s = _Maker(v, "malformed")
    p_open = d.param_open
    s(
        "missing-string-attr",
        d.open
        + "\n"
        + d.invoke_open
        + ' name="f">\n'
        + p_open
        + ' name="a">v'
        + d.param_close
        + "\n"
        + d.invoke_close
        + "\n"
        + d.close,
        "parameter without string attribute",
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("a", "v")))),  # not JSON: a string
    )
    s(
        "missing-string-attr-json",
        d.block_of(d.call("f", p_open + ' name="a">[1, {"b": null}]' + d.param_close)),
        "parameter without string attribute whose value is JSON",
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("a", '[1, {"b": null}]', string=False)))),
    )
    s(
        "string-maybe",
        d.block_of(d.call("f", d.param("a", "v", string="maybe"))),
        'string="maybe"',
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("a", "v")))),
    )
    s(
        "string-uppercase",
        d.block_of(d.call("f", d.param("a", "v", string="True"))),
        'string="True"',
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("a", "v")))),
    )
    s(
        "extra-attr-last",
        d.block_of(d.call("f", p_open + ' name="a" string="true" lang="en">v' + d.param_close)),
        "an unknown attribute after string",
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("a", "v")))),
    )
    s(
        "extra-attr-first",
        d.block_of(d.call("f", p_open + ' name="a" lang="en" string="false">3' + d.param_close)),
        "an unknown attribute between name and string (the reference skips it too)",
        thinking=False,
        tools="weather",
    )
    s(
        "bare-parameter",
        d.block_of(d.call("f", 'parameter name="a" string="true">v' + d.param_close)),
        "a parameter tag without its opener (the reference reads it from 'parameter name=')",
        thinking=False,
        tools="weather",
    )
    s(
        "param-no-name",
        d.block_of(d.call("f", p_open + ' string="true">v' + d.param_close, d.param("b", "w"))),
        "a parameter without a name is dropped (the reference also ends the invoke at its closing tag)",
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("b", "w")))),
    )
    s(
        "param-no-name-invoke-close",
        d.block_of(d.call("f", p_open + ' string="true">v'), d.call("g", d.param("b", "w"))),
        "a parameter without a name, then the invoke's closing tag: the call ends there, the next one is read",
        thinking=False,
        tools="weather",
    )
    s(
        "param-no-name-bare-invoke-close",
        d.block_of(d.call("f", p_open + ">"), d.call("g", d.param("b", "w"))),
        "a parameter tag with no attributes, then the invoke's closing tag",
        thinking=False,
        tools="weather",
    )
    s(
        "unterminated-param",
        d.open + "\n" + d.invoke_open + ' name="f">\n' + p_open + ' name="a" string="true">v',
        "stream ends inside a parameter value",
        thinking=False,
        tools="weather",
    )
    s(
        "unterminated-param-false",
        d.open + "\n" + d.invoke_open + ' name="f">\n' + p_open + ' name="a" string="false">[1, 2',
        "stream ends inside a string=false value",
        thinking=False,
        tools="weather",
    )
    s(
        "unterminated-invoke",
        d.open + "\n" + d.invoke_open + ' name="f">\n' + d.param("a", "v") + "\n",
        "stream ends after a parameter, invoke open",
        thinking=False,
        tools="weather",
    )
    s(
        "unterminated-invoke-length",
        d.open + "\n" + d.invoke_open + ' name="f">\n' + d.param("a", "v") + "\n",
        "same, backend length finish",
        thinking=False,
        tools="weather",
        finish="length",
    )
    s(
        "missing-block-close",
        d.open + "\n" + d.call("f", d.param("a", "v")) + "\n",
        "closed invoke, block never closed",
        thinking=False,
        tools="weather",
    )
    s("opener-only", d.open, "only the block opener", thinking=False, tools="weather")
    s(
        "opener-newline-only",
        "Text.\n\n" + d.open + "\n",
        "text then an opener and nothing else",
        thinking=False,
        tools="weather",
    )
    s(
        "noise-in-block",
        d.open + "\nsome noise\n" + d.call("f", d.param("a", "v")) + "\nmore noise\n" + d.close,
        "text inside the block outside invokes is ignored",
        thinking=False,
        tools="weather",
    )
    s(
        "broken-invoke-tag",
        "Hi.\n\n"
        + d.open
        + f'\n<{DSML}invok name="f">\n'
        + d.param("a", "v")
        + "\n"
        + d.invoke_close
        + "\n"
        + d.close
        + "\ntrailing",
        "misspelled invoke tag inside an opened block",
        thinking=False,
        tools="weather",
    )
    s(
        "invoke-no-name",
        d.open + "\n" + d.invoke_open + ">\n" + d.param("a", "v") + "\n" + d.invoke_close + "\n" + d.close,
        "invoke without a name attribute",
        thinking=False,
        tools="weather",
    )
    s(
        "name-single-quotes",
        d.open
        + "\n"
        + d.invoke_open
        + " name='f'>\n"
        + d.param("a", "v")
        + "\n"
        + d.invoke_close
        + "\n"
        + d.close,
        "invoke name in single quotes",
        thinking=False,
        tools="weather",
    )
    s(
        "name-unclosed-quote",
        d.open
        + "\n"
        + d.invoke_open
        + ' name="f>\n'
        + d.param("a", "v")
        + "\n"
        + d.invoke_close
        + "\n"
        + d.close,
        "invoke name quote never closed",
        thinking=False,
        tools="weather",
    )
    s(
        "stray-quote-in-tag",
        d.block_of(d.call("f", p_open + ' name="a" string="true>v' + d.param_close, d.param("b", "w"))),
        "a missing quote hides the tag's end until the closing tag: the tag ends at the first '>' after it",
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("a", "v"), d.param("b", "w")))),
    )
    s(
        "dsml-in-param-name",
        d.block_of(
            d.call(
                "f",
                p_open + f' name="ci{DSML}ty" string="true">Paris' + d.param_close,
                p_open + f' name="c</{DSML}ity" string="true">x' + d.param_close,
                d.param("days", "3", string=False),
            )
        ),
        "the Dsml token inside a parameter's name, alone and after '</': text of the name",
        thinking=False,
        tools="weather",
    )
    s(
        "dsml-in-param-attrs",
        d.block_of(
            d.call(
                "f",
                p_open + f' name="a" string{DSML}="true">v' + d.param_close,
                p_open + f' name="b" {DSML}string="false">3' + d.param_close,
                p_open + f' name="c" {DSML} string="true">w' + d.param_close,
            )
        ),
        "the Dsml token between a parameter tag's attributes: text of the tag, the values are kept",
        thinking=False,
        tools="weather",
    )
    misspelled = p_open.replace("parameter", "paramter")
    s(
        "misspelled-param-tag",
        d.block_of(
            d.call(
                "f",
                misspelled + ' name="a" string="true">v' + d.param_close.replace("parameter", "paramter"),
                d.param("b", "w"),
            )
        ),
        "a misspelled parameter tag is skipped with its closing tag; the call goes on",
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("b", "w")))),
    )
    s(
        "param-tag-cut-by-close",
        d.block_of(d.call("f", p_open + ' name="a" string="true"' + d.param_close, d.param("b", "w"))),
        "a parameter tag cut short by its closing tag: an empty value; the call goes on",
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("a", ""), d.param("b", "w")))),
    )
    s(
        "attr-order",
        d.open
        + "\n"
        + d.invoke_open
        + ' name="f">\n'
        + p_open
        + ' string="true" name="a">v'
        + d.param_close
        + "\n"
        + d.invoke_close
        + "\n"
        + d.close,
        "string attribute before name",
        thinking=False,
        tools="weather",
        reads_as=("D8", d.block_of(d.call("f", d.param("a", "v")))),
    )
    s(
        "wrong-param-close",
        d.open
        + "\n"
        + d.invoke_open
        + ' name="f">\n'
        + p_open
        + ' name="a" string="true">v'
        + d.invoke_close
        + "\n"
        + d.close,
        "parameter closed by </invoke>",
        thinking=False,
        tools="weather",
    )
    s(
        "param-outside-invoke",
        d.open + "\n" + d.param("a", "v") + "\n" + d.call("f", d.param("b", "w")) + "\n" + d.close,
        "parameter before any invoke",
        thinking=False,
        tools="weather",
    )
    s(
        "nested-param",
        d.block_of(d.call("f", p_open + ' name="a" string="true">x' + d.param("b", "y"))),
        "a parameter opened inside a string value",
        thinking=False,
        tools="weather",
    )
    s(
        "invoke-in-value",
        d.block_of(d.call("f", d.param("a", d.invoke_open + ' name="g">'))),
        "an invoke opener inside a string value",
        thinking=False,
        tools="weather",
    )
    s(
        "think-end-in-value",
        "r</think>" + d.block_of(d.call("f", d.param("a", "x</think>y"))),
        "</think> inside a tool argument value",
        tools="weather",
    )
    s(
        "stray-close",
        "Hello " + d.close + " world",
        "a block close tag in content",
        thinking=False,
        tools="weather",
    )
    s(
        "after-block-partial",
        d.block_of(d.call("f", d.param("a", "v"))) + "\n<" + DSML[:2],
        "partial marker after the closed block",
        thinking=False,
        tools="weather",
    )
    return s.items


@_group
def _required(v: Version) -> list[Scenario]:
    """Required tool choice: parsing starts inside a block (§5.2 last bullet, §2.1.4). Nothink only."""
    d = DIALECTS[v]
    s = _Maker(v, "required")
    c = d.call("get_weather", d.param("city", "Paris"))
    body = c + "\n" + d.close
    s(
        "starts-in-block",
        body,
        "output starts directly with the invoke",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    s(
        "leading-newline",
        "\n" + body,
        "leading newline before the invoke",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    s(
        "extra-opener",
        d.open + "\n" + body,
        "the model repeats the block opener",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    s(
        "other-opener",
        DIALECTS[_other(v)].open + "\n" + body,
        "the other spelling's opener",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    s(
        "plain-text",
        "I cannot call a tool for this.",
        "plain text instead of a call is discarded",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    s(
        "two-calls",
        c + "\n" + d.call("search", d.param("q", "x")) + "\n" + d.close,
        "two invokes",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    s(
        "no-close",
        c,
        "invoke closed, block close missing",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    s(
        "length",
        c[:40],
        "length finish inside the first invoke",
        thinking=False,
        tools="weather",
        tool_choice="required",
        finish="length",
    )
    s(
        "empty",
        "",
        "empty output with required tool choice",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    s(
        "named",
        body,
        "named tool choice (treated as required)",
        thinking=False,
        tools="weather",
        tool_choice="named",
    )
    s(
        "text-after",
        body + "\nbye",
        "text after the block is discarded",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    return s.items


@_group
def _stop(v: Version) -> list[Scenario]:
    """Stop sequences: content only, earliest match, held-back prefixes (§5.4, §8 q9)."""
    d = DIALECTS[v]
    s = _Maker(v, "stop")
    s("single", "Hello END world", "one stop sequence in content", thinking=False, stop=("END",))
    s(
        "single-think",
        "thinking END here</think>Hello END world",
        "stop text inside reasoning is not matched",
        stop=("END",),
    )
    s("earliest", "abcd", "earliest match position wins", thinking=False, stop=("bcd", "abc"))
    s(
        "several",
        "one two three four",
        "several sequences, a later-listed one matches first",
        thinking=False,
        stop=("four", "two", "zzz"),
    )
    s("at-content-start", "ENDabc", "match at the very start of content", thinking=False, stop=("END",))
    s(
        "at-content-start-think",
        "r</think>ENDabc",
        "match at the start of content after reasoning",
        stop=("END",),
    )
    s("after-newlines", "r</think>\n\nEND", "match after stripped leading newlines", stop=("END",))
    s(
        "prefix-at-end",
        "Hello EN",
        "a partial stop sequence at the end is flushed",
        thinking=False,
        stop=("END",),
    )
    s(
        "prefix-then-other",
        "Hello ENx END",
        "a partial prefix that fails, then a match",
        thinking=False,
        stop=("END",),
    )
    s("overlap", "aab aaab", "overlapping candidate prefixes", thinking=False, stop=("aaab",))
    s(
        "in-held-spelling",
        "The</think>xx",
        "a stop that ends inside a partial spelling held at the end of a chunk wins at once, also after a chunk "
        "of plain text",
        thinking=False,
        stop=("<",),
        explicit=(
            ExplicitChunking("plain-then-held", (TextPiece("T"), TextPiece("he</"), TextPiece("think>xx"))),
        ),
    )
    s(
        "think-end-stop-think",
        "r</think>a</think>b",
        "stop equal to </think> in thinking mode",
        stop=(THINK_END,),
    )
    s(
        "think-end-stop-nothink",
        "a</think>b",
        "stop equal to </think> in nothink mode",
        thinking=False,
        stop=(THINK_END,),
    )
    s(
        "span-think-end",
        "ax</think>b",
        "stop spanning a removed </think>",
        thinking=False,
        stop=("x</think>b",),
    )
    s(
        "newlines-stop",
        "\n\nHello\n\nWorld",
        "a stop made of newlines at content start (§8 q9)",
        thinking=False,
        stop=("\n\n",),
    )
    s(
        "newline-stop-think",
        "r\n\n</think>\n\nHello\nWorld",
        "single newline stop after reasoning",
        stop=("\n",),
    )
    s("unicode", "你好。再见。", "a non-ASCII stop sequence", thinking=False, stop=("。",))
    s("emoji", "ab😀cd", "an emoji stop sequence (split across token ids)", thinking=False, stop=("😀",))
    s("duplicates", "x STOP y", "duplicate stop entries", thinking=False, stop=("STOP", "STOP"))
    s("no-match", "nothing to see", "no stop sequence matches", thinking=False, stop=("END",))
    s(
        "in-tool-args",
        "Weather:\n\n" + d.block_of(d.call("get_weather", d.param("city", "Paris"))),
        "a stop sequence inside tool arguments is not applied",
        thinking=False,
        tools="weather",
        stop=("Paris",),
    )
    s(
        "before-tool-block",
        "Check END\n\n" + d.block_of(d.call("get_weather", d.param("city", "Paris"))),
        "a stop sequence in content before a tool block",
        thinking=False,
        tools="weather",
        stop=("END",),
    )
    s(
        "matches-dsml",
        "Hi <" + DSML + "tool_calls>\n" + d.call("f") + "\n" + d.close,
        "stop equal to '<'",
        thinking=False,
        tools="weather",
        stop=("<",),
    )
    s("special-spelling", f"A{EOS}B", "stop equal to the EOS spelling", thinking=False, stop=(EOS,))
    s(
        "length-finish",
        "Hello world",
        "no match, backend length",
        thinking=False,
        stop=("END",),
        finish="length",
    )
    s("match-and-finish", "Hello END", "match at the very end of the output", thinking=False, stop=("END",))
    s(
        "long-stop",
        "alpha beta gamma delta",
        "a long stop sequence",
        thinking=False,
        stop=("beta gamma delta",),
    )
    s("many", "x9", "sixteen stop sequences", thinking=False, stop=tuple(str(i) for i in range(16)))
    return s.items


@_group
def _json_mode(v: Version) -> list[Scenario]:
    """JSON output mode (§5.5, §8 q2, D7)."""
    s = _Maker(v, "json")
    f = "```"
    cases = [
        ("bare-object", '{"a": 1}', "bare JSON object"),
        ("bare-array", "[1, 2, 3]", "bare JSON array"),
        ("array-then-text", "[1, 2] and more", "array followed by text (passes through)"),
        ("fenced-json", f'{f}json\n{{"a": 1}}\n{f}', "```json fence"),
        ("fenced-upper", f'{f}JSON\n{{"a": 1}}\n{f}', "```JSON fence"),
        ("fenced-plain", f'{f}\n{{"a": 1}}\n{f}', "bare ``` fence"),
        ("fenced-other-lang", f'{f}js\n{{"a": 1}}\n{f}', "fence with another language tag"),
        (
            "text-fence-text",
            f'Here is the JSON:\n{f}json\n{{"a": 1}}\n{f}\nHope it helps!',
            "text, fenced JSON, text",
        ),
        ("text-then-object", 'Sure! {"a": 1} done', "text then bare object then text"),
        ("just-text", "just text", "no JSON at all"),
        ("scalar-number", "42", "a scalar is not a JSON start"),
        ("scalar-string", '"hi"', "a JSON string is not a JSON start"),
        ("whitespace-around", '  \n{"a": 1}  \n', "whitespace around the object"),
        ("fence-close-no-newline", f'{f}json\n{{"a": 1}}{f}yy', "fence close without a newline"),
        ("nested-fence", f'{f}json\n{{"code": "{f}x{f}"}}\n{f}\n{f}\nafter', "fence text inside the JSON"),
        ("two-objects", '{"a": 1}\n{"b": 2}', "two objects"),
        (
            "bare-then-fence-close",
            f'{{"a": 1}}\n{f}\nafter',
            "a fence close after bare JSON ends JSON output",
        ),
        ("fence-close-then-text", f"{f}\n[1]\n{f} tail", "fence close followed by text on the same line"),
        ("fence-no-newline-open", f'{f}json {{"a": 1}}\n{f}', "opener not followed by a newline"),
        ("multiline-object", '{\n  "a": [\n    1\n  ],\n  "b": "x"\n}\n', "a pretty-printed object"),
        ("unicode", '说明：{"名": "值😀"}', "non-ASCII text and JSON"),
        ("empty", "", "empty output"),
    ]
    for case, out, desc in cases:
        s(case, out, desc, thinking=False, json_object=True)
    s(
        "think-bare",
        'Plan {"x": 1}</think>{"a": 1}',
        "thinking: JSON-like text in reasoning, object in content",
        json_object=True,
    )
    s(
        "think-fenced",
        f'r</think>Result:\n{f}json\n{{"a": [1, 2]}}\n{f}\nbye',
        "thinking: text and fenced JSON",
        json_object=True,
    )
    s("think-text-only", "r</think>no json here", "thinking: no JSON", json_object=True)
    s(
        "with-tools",
        'Data {"a": 1}\n\n' + DIALECTS[v].block_of(DIALECTS[v].call("search", DIALECTS[v].param("q", "x"))),
        "JSON mode with a tool call",
        thinking=False,
        json_object=True,
        tools="weather",
    )
    s(
        "with-tools-direct",
        DIALECTS[v].block_of(DIALECTS[v].call("search", DIALECTS[v].param("q", "x"))),
        "JSON mode with a tool block and no JSON first",
        thinking=False,
        json_object=True,
        tools="weather",
    )
    s(
        "length",
        '{"a": [1, 2',
        "truncated JSON, backend length",
        thinking=False,
        json_object=True,
        finish="length",
    )
    s("think-end-in-json", '{"a": "</think>"}', "</think> inside the JSON", thinking=False, json_object=True)
    # Outputs whose single chunk of ids (x-ids-whole) is recorded too: in token input a special id outside the
    # value is a stretch of its own.
    for case, out, desc in (
        (
            "special-ids-outside",
            'x<think>y<｜User｜><think>{"a": 1}\n```\n<think>z',
            (
                "special ids outside the JSON value: in token input each is a stretch of its own, so the single "
                "chunk of ids (x-ids-whole) answers with more spaces than the single text chunk"
            ),
        ),
        (
            "think-end-after-fence",
            f'{f}json\n{{"a": 1}}\n{f}\nx</think>y</think>z',
            (
                "</think> after the closing fence is no marker: in text it is text of the stretch, in token input "
                "a special id (a stretch of its own)"
            ),
        ),
        (
            "think-end-before-json",
            'x</think>y{"a": 1}',
            "</think> before the JSON is removed and parts two stretches, in text and in token input",
        ),
    ):
        explicit = (ExplicitChunking("ids-whole", (TokensOf(out),), tokenizer=True),)
        s(case, out, desc, thinking=False, json_object=True, explicit=explicit)
    return s.items


@_group
def _prefix(v: Version) -> list[Scenario]:
    """Chat prefix continuation stages (§2.1.2, §5.2). Chat only."""
    d = DIALECTS[v]
    s = _Maker(v, "prefix")
    out = "\n\nabc\n</think>\n\nxyz"
    s("content", out, "prefix with content: ContentContinuation", prefix="content")
    s("reasoning", out, "prefix with reasoning_content only: ReasoningContinuation", prefix="reasoning")
    s("empty", out, "prefix with empty content and no reasoning (observed ReasoningStart)", prefix="empty")
    s("nothink", "\n\n\nHello\n\n", "nothink prefix: stage None", thinking=False, prefix="nothink")
    s("content-no-think-end", "\n and more text\n", "ContentContinuation without </think>", prefix="content")
    s(
        "content-two-think-ends",
        "a</think>b</think>c",
        "ContentContinuation with two </think>",
        prefix="content",
    )
    s(
        "reasoning-no-think-end",
        "\n\nstill thinking\n\n",
        "ReasoningContinuation never closed",
        prefix="reasoning",
    )
    s(
        "reasoning-think-start",
        "<think>x</think>y",
        "ReasoningContinuation with <think> text",
        prefix="reasoning",
    )
    # The reference refuses tools of any tool_choice together with a prefix, so markup stays plain text here.
    s(
        "content-dsml",
        "\n\nLet me check.\n\n" + d.block_of(d.call("get_weather", d.param("city", "Paris"))),
        "ContentContinuation then DSML markup (no tools: plain content)",
        prefix="content",
    )
    s(
        "reasoning-dsml",
        "more thought\n\n" + d.block_of(d.call("get_weather", d.param("city", "Paris"))),
        "ReasoningContinuation then DSML markup (no tools: plain text)",
        prefix="reasoning",
    )
    s(
        "content-stop",
        "\n\nHello END x",
        "ContentContinuation with a stop sequence",
        prefix="content",
        stop=("END",),
    )
    s("nothink-think-end", "a</think>\n\nb", "nothink prefix with </think>", thinking=False, prefix="nothink")
    return s.items


@_group
def _finishes(v: Version) -> list[Scenario]:
    """Backend finish reasons and ready-chunk variants (§5.1, §5.6)."""
    s = _Maker(v, "finish")
    s("length-reasoning", "Thinking hard", "length finish inside reasoning", finish="length")
    s("length-content", "r</think>Half an ans", "length finish inside content", finish="length")
    s("length-nothink", "Half an ans", "length finish, nothink", thinking=False, finish="length")
    s("filter-reasoning", "Thinking", "content_filter inside reasoning", finish="content_filter")
    s("filter-content", "r</think>Partial", "content_filter inside content", finish="content_filter")
    s("filter-nothink-empty", "", "content_filter with no output", thinking=False, finish="content_filter")
    s("none-think", "r</think>Answer", "no finish chunk, thinking", finish=None)
    s("none-nothink", "Answer", "no finish chunk, nothink", thinking=False, finish=None)
    s("none-empty", "", "nothing pushed but (maybe) ready, then finish()", thinking=False, finish=None)
    s("none-empty-noready", "", "nothing pushed at all, then finish()", finish=None, ready=None)
    s(
        "ready-no-fingerprint",
        "Hi",
        "ready without a system fingerprint",
        thinking=False,
        ready=Ready(prompt_tokens=7, prompt_cache_hit_tokens=0, system_fingerprint=None),
    )
    s(
        "ready-all-cached",
        "Hi",
        "ready with every prompt token cached",
        thinking=False,
        ready=Ready(prompt_tokens=64, prompt_cache_hit_tokens=64),
    )
    s("no-ready", "r</think>Hi", "no ready chunk: zero prompt usage", ready=None)
    s("no-ready-length", "Hi", "no ready chunk, length finish", thinking=False, ready=None, finish="length")
    return s.items


@_group
def _unicode(v: Version) -> list[Scenario]:
    """Multi-byte text: CJK, emoji split across token ids, RTL, combining marks (§5.6)."""
    s = _Maker(v, "unicode")
    s(
        "cjk-think",
        "思考一下，用户问了一个问题。</think>你好，世界！日本語のテキスト。한국어 문장.",
        "CJK reasoning and content",
    )
    s("emoji-think", "😀🎉 thinking 👨‍👩‍👧‍👦</think>Flags 🇫🇷🇯🇵 and 👍🏽 done", "emoji, ZWJ, flags, skin tone")
    s("rtl", "مرحبا بالعالم. שלום עולם. Mixed עברית and English.", "Arabic and Hebrew", thinking=False)
    s(
        "combining",
        "e\u0301 a\u0308 n\u0303 \u200b zero-width \u200d joiner \ufeff bom",
        "combining marks and zero-width chars",
        thinking=False,
    )
    s(
        "math-fullwidth",
        "𝐀𝐁𝐂 ＡＢＣ１２３ ｶﾀｶﾅ",
        "math alphanumerics, full-width, half-width katakana",
        thinking=False,
    )
    s("emoji-only", "😀", "a single emoji (two token ids)", thinking=False)
    s("emoji-before-think-end", "a😀</think>😀b", "emoji right before and after </think>")
    s("devanagari-thai", "नमस्ते दुनिया สวัสดีชาวโลก", "Hindi and Thai", thinking=False)
    return s.items


@_group
def _logprobs(v: Version) -> list[Scenario]:
    """Token chunks with logprobs (§5.6): attachment, </think> token, invalid-UTF-8 tokens."""
    d = DIALECTS[v]
    s = _Maker(v, "logprobs")
    s(
        "think",
        "Hmm 😀 let me see.</think>Hi 😀 there",
        "reasoning and content logprobs, </think> token",
        logprobs=True,
    )
    s("nothink-cjk", "你好😀世界 mixed", "multi-byte tokens in content", thinking=False, logprobs=True)
    s("newlines", "\n\nr\n\n</think>\n\nA\n\n", "logprobs of stripped newlines", logprobs=True)
    s(
        "tool-call",
        "Checking.\n\n" + d.block_of(d.call("get_weather", d.param("city", "Paris"))),
        "logprobs with a tool call",
        thinking=False,
        tools="weather",
        logprobs=True,
    )
    s(
        "stop",
        "Hello END world",
        "logprobs with a stop sequence",
        thinking=False,
        stop=("END",),
        logprobs=True,
    )
    s("json", 'Here: {"a": 1}', "logprobs in JSON mode", thinking=False, json_object=True, logprobs=True)
    s("specials", f"A{EOS}B</think>C", "special ids in nothink content", thinking=False, logprobs=True)
    s("think-end-only", "</think>", "only the </think> token", logprobs=True)
    s("length", "r</think>ab", "logprobs with length finish", logprobs=True, finish="length")
    s(
        "stop-after-held-newline",
        "한국어\n。한국",
        "a stop sequence right after a newline held back before a possible block: the entries of the stop and "
        "what follows it do not go with the released newline (found by the event fuzzer)",
        thinking=False,
        tools="weather",
        stop=("。",),
        logprobs=True,
    )
    s(
        "dropped-newlines-then-split-char",
        "Hi</think>\n\n😀 there",
        "newlines dropped after </think> in a chunk that ends in half an emoji: their entry waits for the "
        "character and goes with its delta (found by the event fuzzer; the tokens4 chunking)",
        logprobs=True,
    )
    s(
        "stop-after-held-marker",
        "a<STOP tail",
        "a stop sequence split over two ids after a held '<': the entry of its first id does not go with the "
        "released '<' (found by the event fuzzer)",
        thinking=False,
        tools="weather",
        stop=("STOP",),
        logprobs=True,
    )
    s(
        "stop-after-held-spelling",
        "a <STOP tail",
        "a text chunk ends in a '<' that may begin a spelling; the next ids (with logprobs) release it and begin a "
        "stop sequence: the entry of their first id does not go with the released '<', which is text from before "
        "(found by the event fuzzer)",
        thinking=False,
        tools="weather",
        stop=("STOP",),
        logprobs=True,
        explicit=(
            ExplicitChunking(
                "text-then-ids",
                (
                    TokensOf("a", logprobs=True),
                    TextPiece(" <"),
                    TokensOf("ST", logprobs=True),
                    TextPiece("OP tail"),
                ),
                tokenizer=True,
            ),
            ExplicitChunking(
                "text-then-id-pairs",
                (TextPiece("a <"), TokensOf("STOP", logprobs=True), TextPiece(" tail")),
                tokenizer=True,
            ),
        ),
    )
    s(
        "stop-after-failed-partial-match",
        "xaaab tail",
        "a partial stop match held from an earlier push fails and the stop matches one character later (ids x, "
        "aa, ab): the released 'a' takes the entry of 'aa' (found by the logprob fuzzer, lp5)",
        thinking=False,
        stop=("aab",),
        logprobs=True,
    )
    s(
        "stop-inside-held-newline-run",
        "x\n\nq tail",
        "with tools a newline run pushed on its own waits; a stop sequence starting inside it matches in the next "
        "push: the newline left takes the run's entry (found by the logprob fuzzer, lp4)",
        thinking=False,
        tools="weather",
        stop=("\nq",),
        logprobs=True,
    )
    s(
        "partial-stop-before-block",
        "a" + d.block_of(d.call("get_weather", d.param("city", "Paris"))),
        "a partial stop match holds 'a<' where a block opens in the next push: the released 'a' takes the entries "
        "of its push, the opener's '<' included (found by the logprob fuzzer, lp6)",
        thinking=False,
        tools="weather",
        stop=("a<x",),
        logprobs=True,
        explicit=(
            ExplicitChunking(
                "held-lt",
                (
                    TokensOf("a<", logprobs=True),
                    TokensOf(d.block_of(d.call("get_weather", d.param("city", "Paris")))[1:], logprobs=True),
                ),
                tokenizer=True,
            ),
        ),
    )
    s(
        "reasoning-newline-after-lt-before-block",
        "<\n\n" + d.block_of(d.call("get_weather", d.param("city", "Paris"))),
        "in the reasoning a newline run after a lone '<', then a block in a later push: the newline kept before "
        "the block takes the entries of its push (found by the logprob fuzzer, lp7)",
        tools="weather",
        logprobs=True,
        explicit=(
            ExplicitChunking(
                "lt-then-rest",
                (
                    TokensOf("<", logprobs=True),
                    TokensOf(
                        "\n\n" + d.block_of(d.call("get_weather", d.param("city", "Paris"))), logprobs=True
                    ),
                ),
                tokenizer=True,
            ),
        ),
    )
    return s.items


@_group
def _responses_tools(v: Version) -> list[Scenario]:
    """Responses namespaced tools and the apply_patch custom tool (§5.8). Responses only."""
    d = DIALECTS[v]
    s = _Maker(v, "resptools")
    patch = '*** Begin Patch\n*** Add File: hello.txt\n+Hello "world"\n+\ttab \\ back\n*** End Patch\n'
    s(
        "namespaced",
        "r</think>"
        + d.block_of(
            d.call("gh__issue", d.param("title", "Bug"), d.param("labels", '["a", "b"]', string=False))
        ),
        "namespaced function gh__issue",
        tools="namespaced",
    )
    s(
        "namespaced-and-plain",
        d.block_of(
            d.call("get_weather", d.param("city", "Paris")), d.call("gh__issue", d.param("title", "x"))
        ),
        "a plain and a namespaced call",
        thinking=False,
        tools="namespaced",
    )
    s(
        "namespaced-unknown",
        d.block_of(d.call("gh__nope", d.param("title", "x"))),
        "a gh__ name that is not in the map",
        thinking=False,
        tools="namespaced",
    )
    s(
        "apply-patch",
        "Editing.\n\n" + d.block_of(d.call("apply_patch", d.param("input", patch))),
        "apply_patch custom tool call",
        thinking=False,
        tools="apply_patch",
    )
    s(
        "apply-patch-think",
        "Need a patch.</think>"
        + d.block_of(
            d.call("apply_patch", d.param("input", patch)), d.call("get_weather", d.param("city", "Rome"))
        ),
        "apply_patch then a function call",
        tools="apply_patch",
    )
    s(
        "apply-patch-length",
        d.block_of(d.call("apply_patch", d.param("input", patch)))[:110],
        "length finish inside apply_patch input",
        thinking=False,
        tools="apply_patch",
        finish="length",
    )
    s(
        "apply-patch-other-param",
        d.block_of(d.call("apply_patch", d.param("patch", "x"), d.param("input", "1", string=False))),
        "apply_patch with an unexpected parameter and a string=false input",
        thinking=False,
        tools="apply_patch",
    )
    s(
        "apply-patch-padded-input",
        d.block_of(d.call("apply_patch", d.param("input", ' \n\t"a \\"b\\"\\u00e9" ', string=False))),
        "apply_patch with a string=false input whose JSON string has white space around it: the string decoded",
        thinking=False,
        tools="apply_patch",
    )
    s(
        "apply-patch-padded-number",
        d.block_of(d.call("apply_patch", d.param("input", "  12", string=False))),
        "apply_patch with a string=false input that is a number after white space: the arguments as JSON",
        thinking=False,
        tools="apply_patch",
    )
    s(
        "apply-patch-no-params",
        d.block_of(d.call("apply_patch")),
        "apply_patch without parameters",
        thinking=False,
        tools="apply_patch",
    )
    # A client-executed tool search tool (observed on the reference): its calls are tool_search_call items.
    s(
        "tool-search",
        "Find a clock tool.</think>"
        + d.block_of(
            d.call("tool_search", d.param("query", "time"), d.param("limit", "3", string=False)),
            d.call("get_weather", d.param("city", "Paris")),
        ),
        "a tool_search call (a tool_search_call item, arguments only when done) and a function call",
        tools="tool_search",
    )
    s(
        "tool-search-length",
        d.block_of(
            d.call("get_weather", d.param("city", "Paris")), d.call("tool_search", d.param("query", "time"))
        )[:-30],
        "length finish after the tool_search invoke: the incomplete item keeps empty arguments",
        thinking=False,
        tools="tool_search",
        finish="length",
    )
    s(
        "tool-search-no-params",
        d.block_of(d.call("tool_search")),
        "a tool_search call without parameters",
        thinking=False,
        tools="tool_search",
    )
    # The output ends (a stop, not the length limit) before the call's invoke closes: its arguments spell no JSON
    # object, and the item is incomplete in a completed response.
    cut = d.block_of(d.call("tool_search", d.param("query", "clock time")))
    s(
        "tool-search-cut-in-value",
        cut[: cut.index("clock") + 5],
        "stop finish inside a tool_search parameter value: the item is incomplete with empty arguments",
        thinking=False,
        tools="tool_search",
    )
    s(
        "tool-search-cut-after-parameter",
        cut[: cut.index(d.invoke_close)],
        "stop finish after a tool_search parameter, before its invoke closes: incomplete, empty arguments",
        thinking=False,
        tools="tool_search",
    )
    s(
        "tool-search-cut-then-done",
        d.block_of(d.call("tool_search", d.param("query", "a")))[: -len(d.close)]
        + d.invoke_open
        + ' name="tool_sea',
        "a complete tool_search call, then a second one cut inside its invoke tag: completed, then incomplete",
        thinking=False,
        tools="tool_search",
    )
    return s.items


@_group
def _messages_specific(v: Version) -> list[Scenario]:
    """Messages thinking blocks with a signature (§5.9) and tool_choice any (D10). Messages only."""
    d = DIALECTS[v]
    s = _Maker(v, "msg")
    s(
        "signature",
        "Let me think.</think>Answer.",
        "thinking block with with_signature",
        signature="sig_golden",
    )
    s(
        "signature-empty-reasoning",
        "</think>Answer.",
        "empty reasoning still gets a signature",
        signature="sig_golden",
    )
    s(
        "signature-tool",
        "r</think>" + d.block_of(d.call("get_weather", d.param("city", "Paris"))),
        "signature then a tool_use block",
        signature="sig_golden",
        tools="weather",
    )
    s(
        "signature-no-think-end",
        "still thinking",
        "reasoning never closed",
        signature="sig_golden",
        finish="length",
    )
    s(
        "tool-choice-any",
        d.block_of(d.call("get_weather", d.param("city", "Paris"))),
        "D10: the reference treats tool_choice any as auto",
        thinking=False,
        tools="weather",
        tool_choice="any",
    )
    return s.items


@_group
def _chat_specific(v: Version) -> list[Scenario]:
    """Chat stream/usage shapes (§5.7). Chat only."""
    s = _Maker(v, "chatusage")
    s(
        "stream-no-usage",
        "r</think>Hi",
        "stream:true without include_usage (usage key omitted)",
        chat_stream="stream",
        only=("chat_completions",),
    )
    s(
        "non-stream",
        "r</think>Hi",
        "stream absent (usage null on non-final chunks)",
        chat_stream="none",
        only=("chat_completions",),
    )
    s(
        "non-stream-nothink",
        "Hi",
        "stream absent, nothink",
        thinking=False,
        chat_stream="none",
        only=("chat_completions",),
    )
    return s.items


@_group
def _explicit_chunkings(v: Version) -> list[Scenario]:
    """Hand-picked chunkings: markers split at chosen places, empty text chunks, mixed chunk kinds (§5.1, §5.7)."""
    d = DIALECTS[v]
    s = _Maker(v, "chunks")
    s(
        "think-end-split",
        "abc</think>xyz",
        "</think> split across two chunks",
        explicit=(
            ExplicitChunking("split-thi", (TextPiece("abc</thi"), TextPiece("nk>xyz"))),
            ExplicitChunking("split-lt", (TextPiece("abc<"), TextPiece("/think>"), TextPiece("xyz"))),
        ),
    )
    s(
        "newlines-split",
        "a\n\n</think>\n\nb",
        "newlines split from </think>",
        explicit=(
            ExplicitChunking(
                "nl-apart", (TextPiece("a\n"), TextPiece("\n"), TextPiece("</think>\n"), TextPiece("\nb"))
            ),
        ),
    )
    s(
        "empty-chunks-nothink",
        "a",
        "empty text chunks before output (quirk §5.7)",
        thinking=False,
        explicit=(
            ExplicitChunking("empties-first", (TextPiece("", 0), TextPiece("", 0), TextPiece("a", 1))),
            ExplicitChunking("empties-around", (TextPiece("", 0), TextPiece("a", 1), TextPiece("", 0))),
            ExplicitChunking("empty-count", (TextPiece("", 2), TextPiece("a", 1))),
        ),
    )
    s(
        "empty-chunks-think",
        "r</think>a",
        "empty text chunks in reasoning and content",
        explicit=(
            ExplicitChunking(
                "empties",
                (
                    TextPiece("", 0),
                    TextPiece("r", 1),
                    TextPiece("", 0),
                    TextPiece("</think>", 1),
                    TextPiece("", 0),
                    TextPiece("a", 1),
                    TextPiece("", 0),
                ),
            ),
        ),
    )
    s(
        "empty-chunks-only",
        "",
        "only empty text chunks",
        thinking=False,
        explicit=(ExplicitChunking("three-empties", (TextPiece("", 0), TextPiece("", 0), TextPiece("", 0))),),
    )
    s(
        "mixed-kinds",
        "Let me think.</think>The answer 😀 is 4.",
        "text and tokens chunks mixed",
        explicit=(
            ExplicitChunking(
                "text-then-tokens",
                (
                    TextPiece("Let me think."),
                    TokensOf("</think>The answer"),
                    TextPiece(" 😀 "),
                    TokensOf("is 4."),
                ),
                tokenizer=True,
            ),
        ),
    )
    block = d.block_of(d.call("get_weather", d.param("city", "Paris")))
    s(
        "dsml-split",
        "Checking.\n\n" + block,
        "block opener split inside the DSML token's neighbours",
        thinking=False,
        tools="weather",
        explicit=(
            ExplicitChunking(
                "split-opener",
                (
                    TextPiece("Checking.\n\n<"),
                    TextPiece(block[1:4]),
                    TextPiece(block[4:30]),
                    TextPiece(block[30:]),
                ),
            ),
        ),
    )
    s(
        "stop-split",
        "Hello END world",
        "stop sequence split across chunks",
        thinking=False,
        stop=("END",),
        explicit=(
            ExplicitChunking("split-stop", (TextPiece("Hello E"), TextPiece("N"), TextPiece("D world"))),
        ),
    )
    s(
        "json-split",
        'Here:\n```json\n{"a": 1}\n```\nok',
        "JSON mode with the fence split",
        thinking=False,
        json_object=True,
        explicit=(
            ExplicitChunking(
                "split-fence",
                (
                    TextPiece("Here:\n`"),
                    TextPiece("``js"),
                    TextPiece('on\n{"a"'),
                    TextPiece(": 1}\n`"),
                    TextPiece("``\nok"),
                ),
            ),
        ),
    )
    return s.items


@_group
def _end_of_sentence(v: Version) -> list[Scenario]:
    """The end-of-sentence token ends the output (D15). The reference writes it as text, so these scenarios are
    also recorded as the reference reads the output cut right before the token (``Scenario.reads_as_output``)."""
    d = DIALECTS[v]
    s = _Maker(v, "eos")
    call = d.call("get_weather", d.param("city", "Paris"))
    s(
        "answer",
        f"Hello.{EOS}{USER}more text",
        "the answer ends at the token; what follows is ignored",
        thinking=False,
    )
    s("reasoning", f"Let me think.\n\n{EOS}</think>Answer", "the token inside the reasoning ends it")
    s("after-answer", f"r</think>Answer.\n\n{EOS}", "the token at the end: held newlines are kept")
    s("twice", f"a{EOS}b{EOS}c", "two tokens: the first one ends the output", thinking=False)
    s(
        "in-argument",
        "r</think>"
        + d.open
        + "\n"
        + d.invoke_open
        + ' name="get_weather">\n'
        + d.param_open
        + ' name="city" string="true">Par'
        + EOS
        + "is"
        + d.param_close,
        "the token inside a tool argument: the call ends incomplete",
        tools="weather",
    )
    s(
        "before-block",
        "r</think>Checking.\n\n" + EOS + d.block_of(call),
        "a tool-call block after the token is never parsed",
        tools="weather",
    )
    s(
        "after-block",
        "r</think>" + d.block_of(call) + EOS,
        "the token after a complete block",
        tools="weather",
    )
    s(
        "partial-opener",
        "r</think>Text <" + DSML[:2] + EOS + "x",
        "a partial block opener before the token becomes text",
        tools="weather",
    )
    s(
        "required",
        call + EOS + "\n" + d.close,
        "required tool choice: the token after the invoke",
        thinking=False,
        tools="weather",
        tool_choice="required",
    )
    s(
        "json",
        f'Here: {{"a": 1}}{EOS} trailing',
        "JSON mode: the token ends the value",
        thinking=False,
        json_object=True,
    )
    s(
        "stop-partial",
        f"Hello EN{EOS}D world",
        "a partial stop match before the token is released as text",
        thinking=False,
        stop=("END",),
    )
    s(
        "stop-inside-spelling",
        f"Hi{EOS}x",
        "a stop sequence that would match inside the spelling never does",
        thinking=False,
        stop=("<｜end",),
        explicit=(
            ExplicitChunking("split-spelling", (TextPiece("Hi<｜end"), TextPiece("▁of▁sentence｜>x"))),
        ),
    )
    s(
        "split",
        f"Hi there{EOS}more",
        "the spelling split across text chunks, and text and ids mixed",
        thinking=False,
        explicit=(
            ExplicitChunking(
                "split-text", (TextPiece("Hi there<｜end▁"), TextPiece("of▁sent"), TextPiece("ence｜>more"))
            ),
            ExplicitChunking(
                "mixed", (TextPiece("Hi "), TokensOf(f"there{EOS}"), TextPiece("more")), tokenizer=True
            ),
        ),
    )
    s("length", f"Hi{EOS}", "the finish reason stays the backend's (length)", thinking=False, finish="length")
    s("no-finish", f"Hi{EOS}", "no finish chunk from the backend", thinking=False, finish=None)
    s("only", EOS, "the output is only the token", thinking=False)
    s(
        "logprobs",
        f"r</think>A b{EOS}c",
        "logprobs: the token's entry and those after it are dropped",
        logprobs=True,
    )
    return s.items


def all_scenarios() -> list[Scenario]:
    """Every scenario, both model versions, in a stable order with unique names."""
    out: list[Scenario] = []
    for version in VERSIONS:
        for build in _GROUPS:
            out.extend(build(version))
    names = [sc.name for sc in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise RuntimeError(f"duplicate scenario names: {sorted(dupes)}")
    return out
