"""Properties of the response path (STYLE §6).

Fuzz invariant, as h11's fuzzing states it: arbitrary text or token ids fed to :class:`OutputMachine` in any
chunking produce events, never an exception; and the merged events never depend on the chunking.

Example counts come from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dscodec.conversation import ParsingOptions
from dscodec.stream.decoder import IncrementalDecoder
from dscodec.stream.dsml import HOLD_LIMIT
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
        st.sampled_from(["END", "\n", "\n\n", "b</th", "<｜DS", "</think>", "ab", "x"]), max_size=2
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
    def reject(name: str) -> None:
        raise ValueError(name)

    return json.loads(text, parse_constant=reject)


@given(opts=parsing_options, text=outputs, cuts=st.lists(st.integers(0, 10_000), max_size=8))
def test_any_chunking_gives_the_same_events(opts: ParsingOptions, text: str, cuts: list[int]) -> None:
    whole = merge(run(opts, [text]))
    assert merge(run(opts, split(text, cuts))) == whole
    assert merge(run(opts, list(text))) == whole
    for name, arguments, complete in whole["calls"]:
        if complete:  # D8: a closed invoke always has valid JSON arguments
            strict_json(arguments)


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
    for produced in (merged["r"], merged["c"]):
        assert "｜DSML｜" not in produced and "</think>" not in produced
    assert [name for name, _, _ in merged["calls"]] == [name for name, _ in calls]
    for (_, arguments, complete), (_, params) in zip(merged["calls"], calls):
        assert complete
        assert "｜DSML｜" not in arguments
        assert strict_json(arguments) == params


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
        expected = strict_json(value)
    except ValueError:
        expected = None if not value.strip(" \t\n\r") else value
    valid = expected is not None or not value.strip(" \t\n\r") or value.strip(" \t\n\r") == "null"
    if len(value) <= HOLD_LIMIT or valid:
        # held values are decided whole; longer valid values are streamed through unchanged
        assert parsed["a"] == expected
