"""Properties of the response path.

Fuzz invariant: arbitrary text or token ids fed to :class:`OutputMachine` in any
chunking produce events, never an exception; and the merged events never depend on the chunking. A closed invoke
always has arguments that dscodec's own reader accepts (D8, whatever its parameter tags look like), the
end-of-sentence token ends the output (D15), and the incremental checkers (JSON prefixes, stop sequences) agree
with their one-shot definitions.

Example counts come from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dscodec._json import MAX_DEPTH, loads
from dscodec.conversation import ParsingOptions
from dscodec.stream._stops import StopMatcher
from dscodec.stream.decoder import IncrementalDecoder
from dscodec.stream.dsml import HOLD_LIMIT, JsonPrefix
from dscodec.stream.events import (
    ContentDelta,
    Event,
    OutputEnd,
    ReasoningDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from dscodec.stream.machine import OutputMachine, Stage
from dscodec.vocab import Vocabulary

VOCAB = Vocabulary.load(None)

FRAGMENTS = [
    "Hello",
    " world",
    "中文",
    "😀",
    "x",
    "END",
    "E",
    "\n",
    "\n\n",
    "\r\n",
    " ",
    "\t",
    "\\",
    '"',
    ">",
    "/",
    "</think>",
    "<think>",
    "</thi",
    "<",
    "</",
    "<｜DS",
    "｜DSML｜",
    "<｜end▁of▁sentence｜>",
    "<｜DSML｜tool_calls>",
    "<｜DSML｜ calls>",
    "</｜DSML｜tool_calls>",
    "</｜DSML｜ calls>",
    '<｜DSML｜invoke name="f">',
    '<｜DSML｜ invoke name="g">',
    "</｜DSML｜invoke>",
    '<｜DSML｜parameter name="a" string="true">',
    '<｜DSML｜ parameter name="b" string="false">',
    '<｜DSML｜parameter string="true" name="c">',
    '<｜DSML｜parameter name="d">',
    '<｜DSML｜parameter name="e" string="maybe" lang="en">',
    '<｜DSML｜parameter string="false">',
    '<｜DSML｜parameter name="f"',
    'name="g" string="false">',
    '"',
    "1e400",
    '"\\ud800"',
    "[[[[",
    "-0",
    "</｜DSML｜parameter>",
    'true">',
    'invoke name="',
    "parameter name=",
    "{",
    "[",
    "]",
    "}",
    "```json\n",
    "```",
    "\n```",
    "1",
    "null",
    "NaN",
    "<｜end▁of▁sentence｜>",
    "<｜end",
    "▁of▁sentence｜>",
]

KEYS = st.from_regex(r"[a-z_]{1,8}", fullmatch=True)
SAFE_TEXT = st.text(st.characters(blacklist_characters="<｜", blacklist_categories=["Cs"]), max_size=30)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.text(alphabet='abc xyz"\\\n/中', max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("abc", max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def blocks(draw: st.DrawFn) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """A well-formed block and the calls it writes."""
    v41 = draw(st.booleans())
    sp = " " if v41 else ""
    text = f"<｜DSML｜{'' if not v41 else ' '}{'tool_calls' if not v41 else 'calls'}>\n"
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(KEYS)
        params: dict[str, Any] = {}
        text += f'<｜DSML｜{sp}invoke name="{name}">\n'
        for _ in range(draw(st.integers(0, 3))):
            key = draw(KEYS)
            if key in params:
                continue
            if draw(st.booleans()):
                value: Any = draw(SAFE_TEXT)
                written, kind = value, "true"
            else:
                value = draw(JSON_VALUES)
                written, kind = json.dumps(value, ensure_ascii=False), "false"
            params[key] = value
            text += f'<｜DSML｜{sp}parameter name="{key}" string="{kind}">{written}</｜DSML｜{sp}parameter>\n'
        text += f"</｜DSML｜{sp}invoke>\n"
        calls.append((name, params))
    text += f"</｜DSML｜{sp}{'tool_calls' if not v41 else 'calls'}>"
    return text, calls


outputs = st.lists(st.sampled_from(FRAGMENTS) | blocks().map(lambda b: b[0]) | SAFE_TEXT, max_size=12).map(
    "".join
)

parsing_options = st.builds(
    ParsingOptions,
    parse_tool_calls=st.booleans(),
    starts_in_tool_calls=st.sampled_from([False, False, False, True]),
    parse_json_output=st.sampled_from([False, False, True]),
    thinking_initial_stage=st.sampled_from(
        [None, "reasoning_start", "reasoning_continuation", "content_continuation"]
    ),
    stop_sequences=st.lists(
        st.sampled_from(["END", "\n", "\n\n", "b</th", "<｜DS", "</think>", "ab", "x", "<｜end", "<", "a<b"]),
        max_size=2,
    ),
)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


def run(opts: ParsingOptions, chunks: list[str]) -> list[Event]:
    m = OutputMachine(opts, tool_call_id_factory=lambda i: f"id{i}")
    out: list[Event] = []
    for chunk in chunks:
        if m.state is Stage.FINISHED:
            break
        out += m.feed(chunk)
    return out + m.close()


def merge(events: list[Event]) -> dict[str, Any]:
    merged: dict[str, Any] = {"r": "", "c": "", "calls": [], "end": None}
    for ev in events:
        if isinstance(ev, ReasoningDelta):
            merged["r"] += ev.text
        elif isinstance(ev, ContentDelta):
            merged["c"] += ev.text
        elif isinstance(ev, ToolCallStart):
            merged["calls"].append([ev.name, "", None])
        elif isinstance(ev, ToolCallDelta):
            merged["calls"][ev.index][1] += ev.arguments
        elif isinstance(ev, ToolCallEnd):
            assert ev.arguments == merged["calls"][ev.index][1]
            merged["calls"][ev.index][2] = ev.complete
        elif isinstance(ev, OutputEnd):
            merged["end"] = (ev.tool_calls, ev.stop_sequence)
    return merged


def strict_json(text: str) -> Any:
    """What "valid JSON" means in dscodec: accepted by its own reader (no NaN, no lone surrogates, numbers within
    the double range, at most 127 levels deep)."""
    return loads(text)


EOS = "<｜end▁of▁sentence｜>"
LEAKS = ("｜DSML｜", "</think>", EOS)


@given(opts=parsing_options, text=outputs, cuts=st.lists(st.integers(0, 10_000), max_size=8))
def test_any_chunking_gives_the_same_events(opts: ParsingOptions, text: str, cuts: list[int]) -> None:
    whole = merge(run(opts, [text]))
    assert merge(run(opts, split(text, cuts))) == whole
    assert merge(run(opts, list(text))) == whole
    for name, arguments, complete in whole["calls"]:
        if complete:  # D8: a closed invoke always has valid JSON arguments
            assert isinstance(strict_json(arguments), dict)
    assert EOS not in whole["r"] + whole["c"]  # D15: never text


@given(
    opts=parsing_options,
    before=outputs,
    after=outputs,
    cuts=st.lists(st.integers(0, 10_000), max_size=8),
)
def test_d15_the_end_of_sentence_token_ends_the_output(
    opts: ParsingOptions, before: str, after: str, cuts: list[int]
) -> None:
    """Whatever precedes and follows it, the output reads as if it ended right before the token."""
    before = before.split(EOS)[0]
    expected = merge(run(opts, [before]))
    text = before + EOS + after
    assert merge(run(opts, [text])) == expected
    assert merge(run(opts, split(text, cuts))) == expected


@given(
    reasoning=SAFE_TEXT,
    content=SAFE_TEXT,
    block=blocks(),
    thinking=st.booleans(),
    cuts=st.lists(st.integers(0, 10_000), max_size=8),
)
def test_no_markup_leaks_and_arguments_are_the_parameters(
    reasoning: str,
    content: str,
    block: tuple[str, list[tuple[str, dict[str, Any]]]],
    thinking: bool,
    cuts: list[int],
) -> None:
    block_text, calls = block
    text = (reasoning + "</think>" if thinking else "") + content + "\n\n" + block_text
    opts = ParsingOptions(thinking_initial_stage="reasoning_start" if thinking else None)
    merged = merge(run(opts, split(text, cuts)))
    assert merge(run(opts, split(text + EOS + "\n\n" + block_text + "tail", cuts))) == merged  # D15
    for produced in (merged["r"], merged["c"]):
        assert not any(leak in produced for leak in LEAKS)
    assert [name for name, _, _ in merged["calls"]] == [name for name, _ in calls]
    for (_, arguments, complete), (_, params) in zip(merged["calls"], calls):
        assert complete
        assert not any(leak in arguments for leak in LEAKS)
        assert strict_json(arguments) == params


@given(
    opts=parsing_options,
    text=outputs,
    at=st.integers(0, 10_000),
    cuts=st.lists(st.integers(0, 10_000), max_size=8),
)
def test_streamed_arguments_are_the_start_of_json_after_every_delta(
    opts: ParsingOptions, text: str, at: int, cuts: list[int]
) -> None:
    """The SDKs' stream helpers parse a call's arguments after every delta, as the start of a JSON value (the
    anthropic SDK for every tool call, the openai SDK for strict tools), and raise when that fails: whatever the
    output, well-formed or not, cut anywhere, the arguments so far are always the start of valid JSON."""
    text = text[: at % (len(text) + 1)]  # the output may end anywhere
    so_far: dict[int, str] = {}
    for ev in run(opts, split(text, cuts)):
        if isinstance(ev, ToolCallDelta):
            arguments = so_far[ev.index] = so_far.get(ev.index, "") + ev.arguments
            checker = JsonPrefix()
            consumed = checker.feed(arguments)
            assert (consumed, checker.failed) == (len(arguments), False), arguments


@given(opts=parsing_options, chunks=st.lists(st.text(max_size=20), max_size=10))
def test_arbitrary_text_raises_nothing(opts: ParsingOptions, chunks: list[str]) -> None:
    events = run(opts, chunks)
    assert isinstance(events[-1], OutputEnd)


@given(
    opts=parsing_options,
    groups=st.lists(st.lists(st.integers(-5, 130_000), max_size=6), max_size=10),
    with_logprobs=st.booleans(),
)
def test_arbitrary_ids_raise_nothing(
    opts: ParsingOptions, groups: list[list[int]], with_logprobs: bool
) -> None:
    dec = IncrementalDecoder(VOCAB)
    m = OutputMachine(opts)
    events: list[Event] = []
    for ids in groups:
        if m.state is Stage.FINISHED:
            break
        lps = [dec.logprob(i, -1.0, [(i, -2.0)]) for i in ids] if with_logprobs else None
        events += m.feed_tokens(dec.decode(ids), logprobs=lps)
    if m.state is not Stage.FINISHED:
        tail = dec.flush()
        events += (m.feed(tail) if tail else []) + m.close()
    assert isinstance(events[-1], OutputEnd)
    carried = [x for ev in events if isinstance(ev, (ReasoningDelta, ContentDelta)) for x in ev.logprobs]
    assert len(carried) <= sum(len(g) for g in groups)


@given(
    text=st.text(st.characters(blacklist_categories=["Cs"]), max_size=60), cuts=st.lists(st.integers(0, 500))
)
def test_decoder_never_splits_a_character(text: str, cuts: list[int]) -> None:
    ids = VOCAB.plain.encode(text, add_special_tokens=False).ids
    points = sorted({c % (len(ids) + 1) for c in cuts} | {0, len(ids)})
    dec = IncrementalDecoder(VOCAB)
    pieces = [dec.feed(ids[a:b]) for a, b in itertools.pairwise(points)]
    assert "".join(pieces) + dec.flush() == VOCAB.plain.decode(ids, skip_special_tokens=False)
    if "\ufffd" not in text:
        assert not any("\ufffd" in piece for piece in pieces)


@given(
    value=st.text(max_size=90).filter(lambda v: "｜" not in v), cuts=st.lists(st.integers(0, 500), max_size=6)
)
def test_d8_any_json_value_text_gives_valid_arguments(value: str, cuts: list[int]) -> None:
    text = (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n'
        f'<｜DSML｜parameter name="a" string="false">{value}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    )
    merged = merge(run(ParsingOptions(), split(text, cuts)))
    ((_, arguments, complete),) = merged["calls"]
    assert complete
    parsed = strict_json(arguments)
    try:
        expected = loads(value, max_depth=MAX_DEPTH - 1)  # the arguments object is one more level
    except ValueError:
        expected = None if not value.strip(" \t\n\r") else value
    valid = expected is not None or not value.strip(" \t\n\r") or value.strip(" \t\n\r") == "null"
    if len(value) <= HOLD_LIMIT or valid:
        # held values are decided whole; longer valid values are streamed through unchanged
        assert parsed["a"] == expected


#: String value text that may hold the starts of markup (``<``, ``</``, ``｜DSML｜``) but never its closing tag.
STRING_VALUES = st.text(alphabet='ab<>/｜DSML"\\\n é', max_size=24).filter(lambda v: "</｜DSML｜" not in v)


@given(
    value=STRING_VALUES,
    before=st.sampled_from(["", '<｜DSML｜parameter name="p" string="false">[1]</｜DSML｜parameter>\n']),
    at=st.integers(0, 100),
    cuts=st.lists(st.integers(0, 500), max_size=6),
)
def test_an_output_cut_inside_a_string_value_keeps_the_value_up_to_the_cut(
    value: str, before: str, at: int, cuts: list[int]
) -> None:
    """Whatever the output held back at its end (the start of a closing tag, of the Dsml token) is value text
    once the output ends there: the arguments are the whole output's, up to the cut."""
    head = (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n'
        + before
        + '<｜DSML｜parameter name="a" string="true">'
    )
    whole = merge(run(ParsingOptions(), [head + value + "</｜DSML｜parameter>\n</｜DSML｜invoke>"]))
    ((_, arguments, complete),) = whole["calls"]
    assert complete and strict_json(arguments)["a"] == value
    cut = value[: at % (len(value) + 1)]
    merged = merge(run(ParsingOptions(), split(head + cut, cuts)))
    ((_, partial, complete),) = merged["calls"]
    assert not complete
    assert partial == arguments[: arguments.index('"a": "') + 6] + json.dumps(cut, ensure_ascii=False)[1:-1]


JSONISH = st.text(alphabet='[]{}",:0123456789-+.eEtrufalsn \\u\nxé', max_size=14) | st.sampled_from(
    ["1e400", '"\\ud800"', '"\\udc00"', '"\\ud83d\\ude00"', "[" * 127 + "]" * 127, "-0", "1" * 330]
)


def _mutations(draw: st.DrawFn) -> str:
    """Valid JSON text, sometimes cut short or with a character inserted."""
    text = json.dumps(draw(JSON_VALUES), ensure_ascii=draw(st.booleans()))
    cut = draw(st.integers(0, len(text)))
    how = draw(st.sampled_from(["whole", "cut", "insert"]))
    if how == "cut":
        return text[:cut]
    if how == "insert":
        return text[:cut] + draw(st.sampled_from(list('[]{}",:0-e. x\\'))) + text[cut:]
    return text


@given(data=st.data(), depth=st.sampled_from([2, MAX_DEPTH - 1, MAX_DEPTH]))
def test_json_prefix_agrees_with_the_reader(data: st.DataObject, depth: int) -> None:
    """JsonPrefix accepts exactly what dscodec._json.loads accepts, and what it committed always completes to
    a document loads accepts."""
    text = data.draw(JSONISH | st.composite(_mutations)())
    checker = JsonPrefix(max_depth=depth)
    consumed = checker.feed(text)
    whole = consumed == len(text) and checker.finish() and checker.complete()
    try:
        loads(text, max_depth=depth)
    except ValueError:
        assert not whole
    else:
        assert whole
    loads(text[: checker.committed] + checker.completion(), max_depth=depth)


def _first_stop(stops: list[str], text: str) -> tuple[int, int]:
    """(position, stop index) of the first stop match by the definition: the one that ends first, ties to the
    stop listed first; (-1, -1) when none matches."""
    for end in range(1, len(text) + 1):
        for index, stop in enumerate(stops):
            if stop and text[:end].endswith(stop):
                return end - 1, index
    return -1, -1


@given(
    stops=st.lists(st.text(alphabet="ab", min_size=1, max_size=6), min_size=1, max_size=4),
    text=st.text(alphabet="abc", max_size=40),
)
def test_stop_matcher_agrees_with_the_definition(stops: list[str], text: str) -> None:
    matcher = StopMatcher(stops)
    position, index = _first_stop(stops, text)
    for at, ch in enumerate(text):
        hit = matcher.step(ch)
        if hit >= 0:
            assert (at, hit) == (position, index)
            return
        # the held text is the longest suffix that can still grow into a stop
        held = next(
            (
                k
                for k in range(min(at + 1, 6), 0, -1)
                if any(s.startswith(text[at + 1 - k : at + 1]) for s in stops)
            ),
            0,
        )
        assert matcher.depth == held
    assert position == -1


@given(
    stops=st.lists(st.text(alphabet="ab c", min_size=1, max_size=6), min_size=1, max_size=4),
    text=st.text(alphabet="abc d", max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=8),
)
def test_stop_matcher_advance_agrees_with_the_definition(
    stops: list[str], text: str, cuts: list[int]
) -> None:
    """``advance`` over any chunking of the text: a chunk is refused (nothing changed) exactly when the first
    match ends inside it, and after every chunk it takes, the depth is the longest end of the text so far that can
    still grow into a stop (the characters that begin no stop, skipped in one search, leave it right)."""
    matcher = StopMatcher(stops)
    position, _ = _first_stop(stops, text)
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    for start, end in itertools.pairwise(bounds):
        before = matcher.state_key()
        if not matcher.advance(text[start:end]):
            assert start <= position < end
            assert matcher.state_key() == before
            return
        assert not start <= position < end
        held = next(
            (k for k in range(min(end, 6), 0, -1) if any(s.startswith(text[end - k : end]) for s in stops)), 0
        )
        assert matcher.depth == held
    assert position == -1


TAGS = st.sampled_from(
    [
        'name="a" string="true"',
        'string="true" name="a"',
        'name="a" string="false"',
        'string="false" name="a"',
        'name="a"',
        'name="a" string="maybe"',
        'name="a" lang="en" string="true"',
        'name="a" string="true" lang="en"',
        "name=a string=false",
        'string="true"',
        "",
    ]
)


@given(
    attributes=TAGS,
    value=st.text(max_size=40).filter(lambda v: "｜" not in v) | JSONISH,
    v41=st.booleans(),
    cuts=st.lists(st.integers(0, 500), max_size=6),
)
def test_d8_any_parameter_tag_gives_valid_arguments(
    attributes: str, value: str, v41: bool, cuts: list[int]
) -> None:
    """Whatever the tag's attributes, a closed invoke gives arguments dscodec's reader accepts; the value of a
    tag without a usable ``string`` flag is the JSON value when it is JSON, else the text itself."""
    sp = " " if v41 else ""
    text = (
        f'<｜DSML｜{sp}{"calls" if v41 else "tool_calls"}>\n<｜DSML｜{sp}invoke name="f">\n'
        f"<｜DSML｜{sp}parameter {attributes}>{value}</｜DSML｜{sp}parameter>\n"
        f"</｜DSML｜{sp}invoke>\n</｜DSML｜{sp}{'calls' if v41 else 'tool_calls'}>"
    )
    whole = merge(run(ParsingOptions(), [text]))
    assert merge(run(ParsingOptions(), split(text, cuts))) == whole
    ((_, arguments, complete),) = whole["calls"]
    assert complete
    parsed = strict_json(arguments)
    assert isinstance(parsed, dict)
    if "name" not in attributes:
        assert parsed == {}
    elif "string=" not in attributes or "maybe" in attributes:
        try:
            expected = loads(value, max_depth=MAX_DEPTH - 1)
        except ValueError:
            expected = value
        assert parsed == {"a": expected}
