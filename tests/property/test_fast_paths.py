"""Every fast path of the response path gives the events of the general path.

Each shortcut (plain token text in a text stage, in a JSON-mode value, inside a tool-call block; the quick path of
``feed`` / ``feed_tokens``; ids that complete no character; the scans that skip ordinary characters; a string
argument's middle; the parameter-tag reader's jumps; runs stepped through a partly matched stop sequence; the
spelling recogniser's, the escaper's and the decoder's shortcuts) is switched off in a subclass, and the same
output, chunked the same way, must give the same events, call by call, with the same stage, tool-call count and
held text.

Example counts come from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections import UserList
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dscodec.conversation import ParsingOptions
from dscodec.errors import DscodecError
from dscodec.processor import StreamProcessor
from dscodec.protocols import convert
from dscodec.stream import _markers
from dscodec.stream._markers import (
    DSML_SOFT,
    DSML_SPELLING,
    EOS_SOFT,
    EOS_SPELLING,
    THINK_END_SPELLING,
    THINK_SOFT,
    Symbolizer,
    escape_json_string,
    sanitize_text,
    symbolize_chunk,
)
from dscodec.stream.decoder import IncrementalDecoder, TokenText
from dscodec.stream.dsml import BlockParser, StringPiece
from dscodec.stream.events import (
    ContentDelta,
    Event,
    ReasoningDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from dscodec.stream.machine import OutputMachine, Stage
from dscodec.vocab import Vocabulary
from tests.property.test_machine_properties import outputs, parsing_options, split

VOCAB = Vocabulary.load(None)

#: Matches every unit: a stage that looks closer at every character never skips ahead.
_EVERY_UNIT = re.compile(r"[\s\S]")


class _NoStringPiece(BlockParser):
    def string_value_piece(self, text: str) -> StringPiece | None:
        return None


class _NoTagJumps(BlockParser):
    _tag_stops = _EVERY_UNIT


class _NoPlainText(OutputMachine):
    def _plain_text(self, text: str) -> str | None:
        return None


class _NoPlainJsonValue(OutputMachine):
    def _plain_json_value(self, text: str) -> str | None:
        return None


class _NoToolUnits(OutputMachine):
    def _tool_units(self, units: str) -> list[Event] | None:
        return None


class _NoStringPieceMachine(OutputMachine):
    _block_parser = _NoStringPiece


class _NoTagJumpsMachine(OutputMachine):
    _block_parser = _NoTagJumps


class _NoQuick(OutputMachine):
    def _quick(self, units: str, logprobs: Any) -> list[Event] | None:
        return None


class _NoSteppedRuns(OutputMachine):
    def _stepped_run(self, u: str, i: int, base: int) -> int | None:
        return None


class _NoEmptyToken(OutputMachine):
    def _empty_token(self) -> list[Event] | None:
        return None


class _NoScan(OutputMachine):
    def _configure(self) -> None:
        super()._configure()
        self._interesting = _EVERY_UNIT
        self._interesting_inner = _EVERY_UNIT


class _NoPlainTokens(OutputMachine):
    """Plain token text always through ``feed_tokens`` (the processor's per-token entry point switched off)."""

    def feed_plain_token(self, text: str) -> list[Event]:
        return self.feed_tokens([TokenText(-1, text)])


class _General(_NoScan, _NoQuick, _NoEmptyToken, _NoPlainTokens, _NoToolUnits, _NoSteppedRuns):
    """Every shortcut of the machine off."""

    _block_parser = type("_GeneralParser", (_NoStringPiece, _NoTagJumps), {})


def _ids(value: int) -> str:
    return f"id{value}"


Step = tuple[str, Any]


def drive(machine: type[OutputMachine], opts: ParsingOptions, steps: list[Step]) -> list[Any]:
    """What each call gives: events (or the error), then the stage, the tool-call count and the held text."""
    m = machine(opts, tool_call_id_factory=_ids)
    log: list[Any] = []
    for kind, payload in [*steps, ("close", None)]:
        try:
            if kind == "plain":
                events = m.feed_plain_token(payload)
            elif kind == "tokens":
                events = m.feed_tokens(payload)
            elif kind == "text":
                events = m.feed(payload)
            else:
                events = m.close()
        except DscodecError as exc:
            log.append(type(exc).__name__)
            break
        log.append((events, m.state, m.tool_calls, m.pending_text))
    return log


def token_steps(text: str, groups: list[int]) -> list[Step]:
    """``text`` as token ids, pushed the way the processor pushes them: a group of ordinary ids as the plain text
    it completes (decoded in one step; no text at all as one empty token), a group with special ids as decoded
    tokens."""
    ids = VOCAB.full.encode(text, add_special_tokens=False).ids
    decoder = IncrementalDecoder(VOCAB)
    steps: list[Step] = []
    k = 0
    g = 0
    while k < len(ids):
        size = groups[g % len(groups)] if groups else 1
        g += 1
        group = ids[k : k + size]
        k += size
        text = decoder.decode_plain(group)
        if text is None:
            steps.append(("tokens", decoder.decode(group)))
        elif text:
            steps.append(("plain", text))
        else:
            steps.append(("tokens", [TokenText(-1, "")]))
    return steps


def plain_steps(text: str, cuts: list[int]) -> list[Step]:
    """``text`` cut anywhere, each piece pushed as the plain text of one ordinary id (spellings are text)."""
    return [("plain", piece) for piece in split(sanitize_text(text), cuts)]


def text_steps(text: str, cuts: list[int]) -> list[Step]:
    """``text`` cut anywhere, each piece pushed as a text chunk (spellings count)."""
    return [("text", piece) for piece in split(text, cuts)]


#: Mostly prose (where the quick paths run), with now and then a newline run or a marker.
PROSE = st.lists(
    st.sampled_from(
        [
            "Hello",
            " world",
            " 中文",
            "😀",
            ", ",
            "。",
            "x",
            "END",
            "\n",
            "\n\n",
            "</think>",
            "<",
            "{",
            "```json\n",
            # A "<" that is text (markup, code) next to one that may begin a block opener or a spelling.
            "<div>",
            " < ",
            "<<",
            "</p>",
            "a<b",
            "<\n",
            "\n<",
            "</th",
            "<｜",
        ]
    )
    | st.sampled_from(["The", " quick", " brown", " fox", " 模型", " 输出"]),
    max_size=40,
).map("".join)
TEXTS = outputs | PROSE
GROUPS = st.lists(st.integers(1, 4), min_size=1, max_size=6)
CUTS = st.lists(st.integers(0, 400), max_size=30)
MACHINES = [
    _NoPlainText,
    _NoPlainJsonValue,
    _NoToolUnits,
    _NoStringPieceMachine,
    _NoTagJumpsMachine,
    _NoQuick,
    _NoEmptyToken,
    _NoScan,
    _NoPlainTokens,
    _NoSteppedRuns,
    _General,
]


def _same(machine: type[OutputMachine], opts: ParsingOptions, steps: list[Step]) -> None:
    assert drive(machine, opts, steps) == drive(OutputMachine, opts, steps)


@pytest.mark.parametrize("machine", MACHINES, ids=lambda c: c.__name__.lstrip("_"))
@given(opts=parsing_options, text=TEXTS, groups=GROUPS)
def test_token_pushes(
    machine: type[OutputMachine], opts: ParsingOptions, text: str, groups: list[int]
) -> None:
    _same(machine, opts, token_steps(text, groups))


@pytest.mark.parametrize("machine", MACHINES, ids=lambda c: c.__name__.lstrip("_"))
@given(opts=parsing_options, text=TEXTS, cuts=CUTS)
def test_plain_token_text(
    machine: type[OutputMachine], opts: ParsingOptions, text: str, cuts: list[int]
) -> None:
    _same(machine, opts, plain_steps(text, cuts))


@pytest.mark.parametrize("machine", MACHINES, ids=lambda c: c.__name__.lstrip("_"))
@given(opts=parsing_options, text=TEXTS, cuts=CUTS)
def test_text_chunks(machine: type[OutputMachine], opts: ParsingOptions, text: str, cuts: list[int]) -> None:
    _same(machine, opts, text_steps(text, cuts))


JSON_DOCUMENTS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text('ab `\n"{}[]<｜', max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.parametrize(
    "machine", [_NoPlainJsonValue, _NoScan, _General], ids=lambda c: c.__name__.lstrip("_")
)
@given(
    value=JSON_DOCUMENTS,
    indent=st.sampled_from([None, 0, 2]),
    fence=st.sampled_from(["", "```json\n"]),
    after=st.sampled_from(["", "\n```", "\n```\nmore", "\n``"]),
    stops=st.lists(st.sampled_from(["\n``", "b", "}\n"]), max_size=1),
    groups=GROUPS,
)
def test_json_mode_values(
    machine: type[OutputMachine],
    value: Any,
    indent: int | None,
    fence: str,
    after: str,
    stops: list[str],
    groups: list[int],
) -> None:
    """JSON mode with long values (pretty-printed, with newlines and backticks inside strings)."""
    opts = ParsingOptions(parse_json_output=True, stop_sequences=stops)
    text = fence + json.dumps({"v": value}, indent=indent, ensure_ascii=False) + after
    _same(machine, opts, token_steps(text, groups))


PARAMETERS = st.lists(
    st.tuples(
        st.from_regex(r"[a-z]{1,6}", fullmatch=True) | st.just("input"),  # a custom tool's raw input
        st.sampled_from(['string="true"', 'string="false"', "", 'string="maybe" lang="x"']),
        st.text('ab1 \n"<>/{}[]:,\\\x01é中', max_size=12),
    ),
    max_size=6,
)


def _block_text(
    calls: list[list[tuple[str, str, str]]], *, first: str = "f0", end: str = "</｜DSML｜tool_calls>after"
) -> str:
    """A tool-call block of ``calls`` (each a list of parameters: name, ``string`` flag, value) after some
    answer text; the first call's tool is ``first``, the others ``f1``, ``f2``…; ``end`` follows the last."""
    text = "Call.\n\n<｜DSML｜tool_calls>\n"
    for k, params in enumerate(calls):
        text += f'<｜DSML｜invoke name="{first if k == 0 else f"f{k}"}">\n'
        for name, flag, value in params:
            text += f'<｜DSML｜parameter name="{name}" {flag}>{value}</｜DSML｜parameter>\n'
        text += "</｜DSML｜invoke>\n"
    return text + end


@pytest.mark.parametrize(
    "machine",
    [_NoToolUnits, _NoStringPieceMachine, _NoTagJumpsMachine, _General],
    ids=lambda c: c.__name__.lstrip("_"),
)
@given(calls=st.lists(PARAMETERS, min_size=1, max_size=3), groups=GROUPS, cuts=CUTS, starts=st.booleans())
def test_tool_call_blocks(
    machine: type[OutputMachine],
    calls: list[list[tuple[str, str, str]]],
    groups: list[int],
    cuts: list[int],
    starts: bool,
) -> None:
    """Blocks with many small parameters of every kind."""
    text = _block_text(calls)
    opts = ParsingOptions(starts_in_tool_calls=starts)
    _same(machine, opts, token_steps(text, groups))
    _same(machine, opts, text_steps(text, cuts))


def _lane_run(text: str, cuts: list[int], extras: list[tuple[int, str]], starts: bool) -> int:
    """Push ``text`` cut at ``cuts`` (with ``extras`` chunks inserted) into two machines: one as the processor
    does (``plain_chunk``, and the string lane from a push that gave a string piece until it declines a chunk),
    one by ``feed``; the tool-call events (complete arguments included) and the position in the output must be
    the same after every push. Returns how many chunks the lane took."""
    chunks = list(split(text, cuts))
    for at, extra in extras:
        chunks.insert(at % (len(chunks) + 1), extra)
    opts = ParsingOptions(starts_in_tool_calls=starts)
    fast = OutputMachine(opts, tool_call_id_factory=_ids)
    general = OutputMachine(opts, tool_call_id_factory=_ids)
    calls = (ToolCallStart, ToolCallDelta, ToolCallEnd)
    lane = None
    piece: tuple[int, str] = (-1, "")
    taken = 0
    for chunk in chunks:
        want = [e for e in general.feed(chunk) if isinstance(e, calls)]
        got: list[Event] | None = None
        if lane is not None:
            arguments = lane(chunk)
            if arguments is not None:
                taken += 1
                got = [ToolCallDelta(piece[0], arguments, chunk, piece[1])] if arguments else []
            else:
                lane = None
        if got is None:
            out = fast.plain_chunk(chunk)
            if out is None:
                got = fast.feed(chunk)
            elif isinstance(out, tuple):
                got = [ToolCallDelta(*out)]
                piece = (out[0], out[3])
                lane = fast.string_lane()
            else:
                got = out if isinstance(out, list) else []
        assert [e for e in got if isinstance(e, calls)] == want
        assert fast._pos == general._pos
    assert [e for e in fast.close() if isinstance(e, calls)] == [
        e for e in general.close() if isinstance(e, calls)
    ]
    return taken


#: String values with what the lane must turn down inside them: a lone surrogate, ``<``, the full-width bar (a
#: spelling may start there), a whole spelling; and what it takes: escapes, non-ASCII.
_LANE_VALUES = st.lists(
    st.sampled_from(
        ["ab", " x", "\ud800", "<", "｜", "｜DSML｜", "</thi", 'a"b', "\\", "\n", "é", "中文", "1"]
    ),
    max_size=10,
).map("".join)


@given(
    calls=st.lists(
        st.lists(
            st.tuples(st.sampled_from(["a", "path"]), st.just('string="true"'), _LANE_VALUES), max_size=3
        )
        | PARAMETERS,
        min_size=1,
        max_size=3,
    ),
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    starts=st.booleans(),
    extras=st.lists(
        st.tuples(st.integers(0, 300), st.sampled_from(["", "\ud800", "<", "｜", "a<b", "é"])), max_size=3
    ),
)
def test_string_lane(
    calls: list[list[tuple[str, str, str]]], sizes: list[int], starts: bool, extras: list[tuple[int, str]]
) -> None:
    """The machine's string lane gives the events and the position of its ``feed``, whatever the chunks (small
    ones, as a backend sends them, so that values come in several): empty ones, lone surrogates, ``<`` and the
    full-width bar among them."""
    text = _block_text(calls)
    cuts = [0]
    while cuts[-1] < len(text):
        cuts.append(cuts[-1] + sizes[len(cuts) % len(sizes)])
    _lane_run(text, cuts, extras, starts)


def test_string_lane_takes_the_middle_of_a_value() -> None:
    """A long value in small chunks goes through the lane (so the property above tests it)."""
    text = _block_text(
        [[("path", 'string="true"', "src/main.py"), ("body", 'string="true"', 'a "quoted" 中文 é\n' * 4)]]
    )
    assert _lane_run(text, list(range(0, len(text), 3)), [], starts=False) >= 20


def _lane_state(machine: OutputMachine) -> tuple[object, ...]:
    """What a text chunk may change in the machine outside a tool-call block: the position, the stage, the held
    text with the positions of its characters and its newline count, and whether the decoder holds part of a
    character. (The fast paths may keep a shorter tail to find a partial opener in, and may leave the flag that
    says no text chunk came yet, as nothing they take is held or waits: the events tell whether they answer the
    same.)"""
    return (
        machine._pos,
        machine.state,
        machine.pending_text,
        machine._pend_pos,
        machine._nostrip,
        machine._incomplete,
    )


def _text_lanes_run(opts: ParsingOptions, text: str, cuts: list[int], extras: list[tuple[int, str]]) -> int:
    """Push ``text`` cut at ``cuts`` (with ``extras`` chunks inserted) into two machines: one as the processor
    does (``plain_chunk``, and from a push that gave text the machine's lane for where it is, the JSON lane in a
    JSON-mode value, else the text lane, until the lane declines a chunk), one by ``feed``; the events and what
    :func:`_lane_state` reads must be the same after every push, and the JSON lane is offered only in a
    JSON-mode value without stop sequences, the text lane only in the reasoning or the content. Returns how many
    chunks the lanes took."""
    chunks = list(split(text, cuts))
    for at, extra in extras:
        chunks.insert(at % (len(chunks) + 1), extra)
    fast = OutputMachine(opts, tool_call_id_factory=_ids)
    general = OutputMachine(opts, tool_call_id_factory=_ids)
    lane = None
    taken = 0
    for chunk in chunks:
        want = general.feed(chunk)
        got: list[Event] | None = None
        if lane is not None:
            delta = ReasoningDelta if fast.text_is_reasoning else ContentDelta
            piece = lane(chunk)
            if piece is not None:
                taken += 1
                got = [delta(piece)] if piece else []
            else:
                lane = None
        if got is None:
            out = fast.plain_chunk(chunk)
            if out is None:
                got = fast.feed(chunk)
            elif isinstance(out, list):
                got = out
            elif isinstance(out, tuple):
                got = [ToolCallDelta(*out)]
            else:
                got = [ReasoningDelta(out) if fast.text_is_reasoning else ContentDelta(out)] if out else []
                if out:
                    lane = fast.json_lane() if fast.in_json_value else fast.text_lane()
        assert got == want
        assert _lane_state(fast) == _lane_state(general)
        if fast.state is not Stage.JSON_VALUE or opts.stop_sequences:
            assert fast.json_lane() is None
        if fast.state not in (Stage.REASONING, Stage.CONTENT):
            assert fast.text_lane() is None
        if general.state is Stage.FINISHED:  # a stop sequence matched
            return taken
    assert fast.close() == general.close()
    return taken


@given(
    value=JSON_DOCUMENTS,
    indent=st.sampled_from([None, 0, 2]),
    fence=st.sampled_from(["", "```json\n"]),
    after=st.sampled_from(["", "\n```", "\n```\nmore", "\n``", "\n```\n"]),
    stops=st.lists(st.sampled_from(["\n``", "b"]), max_size=1),
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    extras=st.lists(
        st.tuples(
            st.integers(0, 300),
            st.sampled_from(["", "\n", "`", "\n`", "``", "\ud800", "<", "｜", "</think>", "é", " x\n"]),
        ),
        max_size=3,
    ),
)
def test_json_lane(
    value: Any,
    indent: int | None,
    fence: str,
    after: str,
    stops: list[str],
    sizes: list[int],
    extras: list[tuple[int, str]],
) -> None:
    """The machine's JSON lane gives the events, the position and the held text of its ``feed``, whatever the
    chunks (small ones, as a backend sends them): empty ones, newlines and backticks (the closing fence may
    start), lone surrogates, ``<`` and the full-width bar among them; with a stop sequence it never opens."""
    opts = ParsingOptions(parse_json_output=True, stop_sequences=stops)
    text = fence + json.dumps({"v": value}, indent=indent, ensure_ascii=False) + after
    cuts = [0]
    while cuts[-1] < len(text):
        cuts.append(cuts[-1] + sizes[len(cuts) % len(sizes)])
    taken = _text_lanes_run(opts, text, cuts, extras)
    if stops:
        assert taken == 0


#: Chunks the lanes must turn down or treat with care: empty ones, newlines and backticks (a closing fence may
#: start), lone surrogates, ``<`` and the full-width bar (a spelling may start there), a whole marker.
_LANE_EXTRAS = st.lists(
    st.tuples(
        st.integers(0, 300),
        st.sampled_from(
            ["", "\n", "\n\n", "`", "\n`", "``", "\ud800", "<", "｜", "</think>", "é", " x\n", "END"]
        ),
    ),
    max_size=3,
)


@given(
    opts=parsing_options,
    text=TEXTS,
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    extras=_LANE_EXTRAS,
)
def test_text_lane(opts: ParsingOptions, text: str, sizes: list[int], extras: list[tuple[int, str]]) -> None:
    """The machine's text lane (and its JSON lane) give the events, the position and the held text of its
    ``feed``, whatever the options and the chunks."""
    cuts = [0]
    while cuts[-1] < len(text):
        cuts.append(cuts[-1] + sizes[len(cuts) % len(sizes)])
    _text_lanes_run(opts, text, cuts, extras)


@pytest.mark.parametrize(
    "pushes",
    [
        ["xa<", "b"],  # a stop partly matched through a "<" that may begin an opener: both wait
        ["xa<", "c"],
        ["x\n\n<", "b y"],  # a newline run and a "<" wait, then turn out to be text
        ["x\n\n<", "\n"],  # a newline right after a "<"
        ["x<", "<", "<b"],
        ["<div>", "a < b", "</p>\n", "<"],
    ],
)
@pytest.mark.parametrize("stops", [[], ["a<b"], ["END"], ["\n\n"]])
@pytest.mark.parametrize("stage", ["reasoning_start", "content_continuation"])
def test_a_lt_in_plain_text_with_tools(pushes: list[str], stops: list[str], stage: str) -> None:
    """A "<" in plain token text with tools on (where a block opener may begin only before the Dsml token):
    the fast paths hold and release it, with a partly matched stop sequence, as the general path does."""
    opts = ParsingOptions(parse_tool_calls=True, stop_sequences=stops, thinking_initial_stage=stage)  # type: ignore[arg-type]
    steps: list[Step] = [("plain", push) for push in pushes]
    assert drive(OutputMachine, opts, steps) == drive(_General, opts, steps)
    dsml = TokenText(128825, DSML_SPELLING, DSML_SPELLING)
    opener = [*steps, ("tokens", [dsml]), ("plain", "tool_calls>\n")]
    assert drive(OutputMachine, opts, opener) == drive(_General, opts, opener)


@pytest.mark.parametrize(
    ("stops", "chunks"),
    [
        (["ab"], ["xa<", "b c"]),  # a partial match the held "<" cannot continue: released at once
        (["a<b"], ["xa<", "b c"]),  # one it can: waits
        (["a</th"], ["xa</th", "ink>z"]),  # a stop that ends inside the held start wins at once
        (["a<"], ["xa<", "q"]),  # ... unless the start may become the end-of-sentence token (D15)
        (["ab", "END"], ["xa</", "b", "y"]),
        ([], ["ab<", "<c", "d</", "p>"]),
    ],
)
@pytest.mark.parametrize("tools", [False, True])
def test_a_text_chunk_that_ends_in_the_start_of_a_spelling(
    stops: list[str], chunks: list[str], tools: bool
) -> None:
    """The per-push path of a text chunk whose only spelling is a start at its end, with stop sequences: as
    ``feed`` reads it, push by push."""
    opts = ParsingOptions(
        parse_tool_calls=tools, stop_sequences=stops, thinking_initial_stage="content_continuation"
    )
    text = "".join(chunks)
    cuts = list(itertools.accumulate(len(chunk) for chunk in chunks))
    _text_lanes_run(opts, text, cuts, [])


def test_text_lane_takes_the_middle_of_the_reasoning_and_the_content() -> None:
    """Prose in small chunks goes through the lane (so the property above tests it), with and without tools and
    stop sequences, with chunks it must turn down among them."""
    text = "Let me think about it.\n\nFirst, the 中文 part.</think>\n\nHere is the answer, in a few words.\nDone."
    for opts in (
        ParsingOptions(thinking_initial_stage="reasoning_start"),
        ParsingOptions(
            thinking_initial_stage="reasoning_start", parse_tool_calls=True, stop_sequences=["END"]
        ),
    ):
        extras = [(4, "｜"), (6, ""), (8, "｜DS"), (10, "\ud800"), (12, "<"), (14, "é")]
        assert _text_lanes_run(opts, text, list(range(0, len(text), 3)), extras) >= 12


def test_json_lane_reads_an_empty_chunk_as_feed_does() -> None:
    """After ids (a character left incomplete), an empty text chunk through the lane changes what ``feed("")``
    changes."""
    opts = ParsingOptions(parse_json_output=True)
    fast, general = OutputMachine(opts), OutputMachine(opts)
    for machine in (fast, general):
        machine.feed_tokens([TokenText(-1, '{"a": "')], incomplete=True)
    lane = fast.json_lane()
    assert lane is not None
    assert _lane_state(fast) == _lane_state(general)
    assert lane("") == ""
    assert general.feed("") == []
    assert _lane_state(fast) == _lane_state(general)
    assert fast._tokens_only is general._tokens_only is False


def test_json_lane_takes_the_middle_of_a_value() -> None:
    """A long value in small chunks goes through the lane (so the property above tests it)."""
    opts = ParsingOptions(parse_json_output=True)
    text = "```json\n" + json.dumps({"items": [{"id": k, "name": f"item {k}"} for k in range(8)]}, indent=2)
    assert _text_lanes_run(opts, text + "\n```\nDone.", list(range(0, len(text), 3)), []) >= 50


@given(text=TEXTS, cuts=CUTS)
def test_symbolizer_shortcut(text: str, cuts: list[int]) -> None:
    """Text without a spelling's first character passes the recogniser as is."""
    fast, general = Symbolizer(), Symbolizer()
    for piece in split(text, cuts):
        assert fast.feed(piece) == general._feed(piece)
        assert fast.held == general.held


#: Text made of pieces of the spellings, so that ends that may still become one are everywhere.
_SPELLING_PIECES = st.lists(
    st.sampled_from(
        ["<", "｜", "</", "</th", "ink>", ">", "DSML", "｜DS", "ML｜", "<｜end▁of", "▁sentence｜>", "x"]
    ),
    max_size=16,
).map("".join)


def _naive_units(held: str, text: str) -> tuple[str, str]:
    """The recogniser's rule, spelled out: spellings become sentinels, and the longest end that is a proper
    prefix of a spelling is held (every end tried)."""
    s = held + text
    for spelling, sentinel in (
        (THINK_END_SPELLING, THINK_SOFT),
        (DSML_SPELLING, DSML_SOFT),
        (EOS_SPELLING, EOS_SOFT),
    ):
        s = s.replace(spelling, sentinel)
    spellings = (THINK_END_SPELLING, DSML_SPELLING, EOS_SPELLING)
    for k in range(len(s), 0, -1):
        if any(w.startswith(s[-k:]) and w != s[-k:] for w in spellings):
            return s[:-k], s[-k:]
    return s, ""


@given(text=_SPELLING_PIECES | TEXTS, cuts=CUTS)
def test_symbolizer_holds_the_longest_possible_spelling(text: str, cuts: list[int]) -> None:
    """The recogniser (which tries only the places a spelling can start) turns chunks into the units, and holds
    the tail, that the rule spelled out gives."""
    symbolizer = Symbolizer()
    held = ""
    for piece in split(text, cuts):
        units, held = _naive_units(held, piece)
        assert symbolizer.feed(piece) == units
        assert symbolizer.held == held


@given(
    texts=st.lists(_SPELLING_PIECES | st.sampled_from(["\ud800", "<\udfff", "x\ud801｜"]) | TEXTS, max_size=8)
)
def test_chunk_units_are_remembered_faithfully(texts: list[str]) -> None:
    """A chunk's units and held end, remembered or not (every text twice, with a memo restarted every three
    entries), are the rule's for the chunk with its lone surrogates replaced."""
    saved = _markers._CHUNK_ENTRIES
    _markers._CHUNK_ENTRIES = 3
    try:
        for text in texts + texts:
            assert symbolize_chunk(text) == _naive_units("", sanitize_text(text))
            assert len(_markers.CHUNK_UNITS) <= 3
    finally:
        _markers._CHUNK_ENTRIES = saved


@given(text=st.text() | outputs)
def test_escaping_and_sanitising_shortcuts(text: str) -> None:
    escaped = escape_json_string(text)
    assert escaped == json.dumps(text, ensure_ascii=False)[1:-1]
    assert (escaped is text) == (escaped == text)  # the text itself when nothing needs escaping
    assert sanitize_text(text) == re.sub("[\ud800-\udfff]", "\ufffd", text)


@given(token_id=st.integers(-5, len(VOCAB.id_bytes) + 5))
def test_decoder_plain_text(token_id: int) -> None:
    """An ordinary id's plain text (when it has one) is what decoding it gives."""
    decoder = IncrementalDecoder(VOCAB)
    plain = decoder.plain_text(token_id)
    assert decoder.plain_text(token_id) == plain  # remembered or not, the same answer
    if plain is not None:
        assert [t.text for t in decoder.decode([token_id])] == [plain]
        assert not decoder.pending_bytes


def _partial(row: bytes) -> bool:
    try:
        row.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


_ORDINARY = sorted(set(VOCAB.full.encode("Hi 中文输出模型 😀🎉 ok <｜DSML｜", add_special_tokens=False).ids))
#: Ids of every kind: whole characters, parts of UTF-8 sequences (CJK, emoji) and bytes that are never valid
#: UTF-8, special ids (markers and others), ids the vocabulary does not have.
ID_KINDS = (
    st.sampled_from(_ORDINARY)
    | st.sampled_from([i for i, row in enumerate(VOCAB.id_bytes[:60_000]) if row and _partial(row)][:60])
    | st.sampled_from(sorted(VOCAB.added.values())[:8] + [VOCAB.added[s] for s in ("</think>", "｜DSML｜")])
    | st.sampled_from([len(VOCAB.id_bytes), len(VOCAB.id_bytes) + 7])
)
ID_GROUPS = st.lists(st.lists(ID_KINDS, min_size=1, max_size=5), max_size=12)


@given(groups=ID_GROUPS)
def test_decoder_decode_plain(groups: list[list[int]]) -> None:
    """A group decoded in one step gives the text and the held bytes of decoding it id by id; a group with a
    special id is declined (None), and one with an id the vocabulary does not have refused (LookupError), and
    neither changes anything."""
    fast, general = IncrementalDecoder(VOCAB), IncrementalDecoder(VOCAB)
    for group in groups:
        held = fast.pending_bytes
        try:
            text = fast.decode_plain(group)
        except LookupError:
            assert any(i >= len(VOCAB.id_bytes) for i in group)
            text = None
        if text is None:
            assert any(i in VOCAB.added.values() or i >= len(VOCAB.id_bytes) for i in group)
            assert fast.pending_bytes == held
            text = "".join(t.text for t in fast.decode(group))
        assert text == general.feed(group)
        assert fast.pending_bytes == general.pending_bytes
    assert fast.flush() == general.flush()


@given(groups=ID_GROUPS)
def test_decode_plain_with_unit_of_decodes_special_groups_at_once(groups: list[list[int]]) -> None:
    """A decoder made with ``unit_of`` gives the text of every group as one without it, and for a group with
    special ids (None) the units and held bytes of :meth:`decode_units` after the group was declined; what
    one refuses, the other refuses too, neither changing anything."""
    units_of = IncrementalDecoder(VOCAB, unit_of=lambda spelling: f"[{spelling}]")
    declines = IncrementalDecoder(VOCAB)
    for group in groups:
        try:
            expected = declines.decode_plain(group)
        except LookupError:
            with pytest.raises(LookupError):
                units_of.decode_plain(group)
        else:
            assert units_of.decode_plain(group) == expected
            if expected is None:
                assert units_of.units == declines.decode_units(group, lambda spelling: f"[{spelling}]")
        assert units_of.pending_bytes == declines.pending_bytes
    assert units_of.flush() == declines.flush()


@given(opts=parsing_options, text=TEXTS, groups=GROUPS, extra=ID_GROUPS)
def test_special_groups_as_units(
    opts: ParsingOptions, text: str, groups: list[int], extra: list[list[int]]
) -> None:
    """A group with special ids decoded straight into the machine's units (``decode_units`` + ``feed_units``)
    gives the events, state and held bytes of decoding it token by token (``decode`` + ``feed_tokens``)."""
    ids = VOCAB.full.encode(text, add_special_tokens=False).ids
    pushes = [ids[k : k + groups[0]] for k in range(0, len(ids), groups[0])]
    pushes += [[i for i in group if i < len(VOCAB.id_bytes)] for group in extra]
    fast, general = (
        OutputMachine(opts, tool_call_id_factory=_ids),
        OutputMachine(opts, tool_call_id_factory=_ids),
    )
    fast_decoder, general_decoder = IncrementalDecoder(VOCAB), IncrementalDecoder(VOCAB)
    special = set(VOCAB.added.values())
    for group in pushes:
        if not group:
            continue
        outcome: list[Any] = []
        if special.isdisjoint(group):  # ordinary ids only: both the same way
            steps = [
                (m, d.decode_plain(group)) for m, d in ((fast, fast_decoder), (general, general_decoder))
            ]
            runs = [lambda m=m, text=text: m.feed_tokens([TokenText(-1, text or "")]) for m, text in steps]
        else:
            assert fast_decoder.decode_plain(group) is None
            runs = [
                lambda group=group: fast.feed_units(fast_decoder.decode_units(group, fast.special_unit)),
                lambda group=group: general.feed_tokens(general_decoder.decode(group)),
            ]
        for run in runs:
            try:
                outcome.append(run())
            except DscodecError as exc:
                outcome.append(type(exc).__name__)
        assert outcome[0] == outcome[1]
        assert (fast.state, fast.tool_calls, fast.pending_text) == (
            general.state,
            general.tool_calls,
            general.pending_text,
        )
        assert fast_decoder.pending_bytes == general_decoder.pending_bytes
        if isinstance(outcome[0], str):
            break


#: A request of each protocol (its parsing options are replaced by each example's).
_REQUESTS = {
    "chat_completions": convert(
        "chat_completions", {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}
    ),
    # A call of the custom tool streams its "input" parameter as raw text too.
    "responses": convert(
        "responses",
        {"model": "DeepSeek-V4-Pro", "input": "Hi", "tools": [{"type": "custom", "name": "apply_patch"}]},
    ),
    "messages": convert(
        "messages",
        {"model": "DeepSeek-V4-Pro", "max_tokens": 100, "messages": [{"role": "user", "content": "Hi"}]},
    ),
}


@pytest.mark.parametrize("protocol", sorted(_REQUESTS))
@given(opts=parsing_options, text=TEXTS, groups=GROUPS, extra=ID_GROUPS)
def test_processor_token_fast_path(
    protocol: str, opts: ParsingOptions, text: str, groups: list[int], extra: list[list[int]]
) -> None:
    """The processor's per-push fast path (ids in a list; plain text straight to the writer's ``text``) gives
    the events of its general path (the same ids in a sequence type the fast path does not take), in every
    protocol: text, markers and ids of every kind, grouped anyhow."""
    ids = VOCAB.full.encode(text, add_special_tokens=False).ids
    pushes: list[list[int]] = []
    k = 0
    while k < len(ids):
        size = groups[len(pushes) % len(groups)]
        pushes.append(ids[k : k + size])
        k += size
    pushes += extra
    request = dataclasses.replace(_REQUESTS[protocol], parsing_options=opts)

    def run(fast: bool) -> list[Any]:
        p = StreamProcessor(
            request, response_id="r", model="m", created=0, tokenizer=VOCAB, tool_call_id_factory=_ids
        )
        log: list[Any] = [[e.to_dict() for e in p.start(3)]]
        for group in pushes:
            try:
                events = p.push_tokens(list(group) if fast else UserList(group))
            except DscodecError as exc:
                log.append(type(exc).__name__)
                return log
            log.append([_timeless(e.to_dict()) for e in events])
        log.append([_timeless(e.to_dict()) for e in p.finish("stop")])
        return log

    assert run(True) == run(False)


#: A log probability entry as a backend gives it: a number, or a number and its alternatives; now and then one
#: the processor refuses (a bad number, a bad alternative id, no pair at all).
_LOGPROB = st.floats(-30, 0) | st.just(-float("inf")) | st.just(0)
_ENTRIES = st.one_of(
    _LOGPROB,
    st.tuples(_LOGPROB, st.lists(st.tuples(st.integers(0, 130_000), _LOGPROB), max_size=4)),
    st.tuples(st.floats(-5, 0), st.lists(st.lists(st.floats(-5, 0), min_size=2, max_size=2), max_size=2)),
)
_BAD_ENTRIES = st.sampled_from(
    [float("nan"), "x", (-1.0, [(-1, -0.5)]), (-1.0, [(1, float("nan"))]), (-1.0, 3), (-1.0, [(1,)]), None]
)


@pytest.mark.parametrize("protocol", sorted(_REQUESTS))
@given(
    opts=parsing_options,
    text=TEXTS,
    entries=st.lists(_ENTRIES, min_size=1, max_size=8),
    bad=st.none() | st.tuples(st.integers(0, 60), _BAD_ENTRIES),
    extra=ID_GROUPS,
)
def test_processor_logprob_fast_path(
    protocol: str,
    opts: ParsingOptions,
    text: str,
    entries: list[Any],
    bad: tuple[int, Any] | None,
    extra: list[list[int]],
) -> None:
    """The processor's path for one id and its log probability entry per push gives the events and the errors of
    its general path (the same ids in a sequence type the fast path does not take), in every protocol: ids of
    every kind (special, unknown, past the vocabulary), entries of every shape, a bad one now and then."""
    ids = VOCAB.full.encode(text, add_special_tokens=False).ids + [i for group in extra for i in group]
    given = [entries[k % len(entries)] for k in range(len(ids))]
    if bad is not None and ids:
        given[bad[0] % len(ids)] = bad[1]
    request = dataclasses.replace(_REQUESTS[protocol], parsing_options=opts)

    def run(fast: bool) -> list[Any]:
        p = StreamProcessor(
            request, response_id="r", model="m", created=0, tokenizer=VOCAB, tool_call_id_factory=_ids
        )
        log: list[Any] = [[e.to_dict() for e in p.start(3)]]
        for token_id, entry in zip(ids, given):
            try:
                events = p.push_tokens([token_id] if fast else UserList([token_id]), [entry])
            except DscodecError as exc:
                log.append((type(exc).__name__, str(exc)))
                log.append([e.to_dict() for e in p.fail(exc)])
                return log
            log.append([_timeless(e.to_dict()) for e in events])
        log.append([_timeless(e.to_dict()) for e in p.finish("stop")])
        return log

    assert run(True) == run(False)


class _Text(str):
    """A str the processor's per-push path for text does not take (it takes ``str`` itself only)."""


#: Text chunks beside the outputs: lone surrogates (sanitised to U+FFFD), spellings split anyhow, the full-width
#: bar alone.
_ODD_TEXT = st.lists(
    st.sampled_from(
        ["\ud800", "\udfff", "a\ud801b", "｜", "<｜", "DSML｜", "</thi", "nk>", "<｜end▁of", "▁sentence｜>"]
    )
    | st.sampled_from(["plain", " text", "\n", "中文"]),
    max_size=12,
).map("".join)


@pytest.mark.parametrize("protocol", sorted(_REQUESTS))
@given(
    opts=parsing_options,
    text=TEXTS | _ODD_TEXT,
    cuts=CUTS,
    counts=st.lists(st.integers(0, 3), min_size=1, max_size=4),
    empties=st.lists(st.integers(0, 40), max_size=3),
    between=st.lists(st.tuples(st.integers(0, 40), ID_GROUPS.map(lambda g: g[:1])), max_size=3),
)
def test_processor_text_fast_path(
    protocol: str,
    opts: ParsingOptions,
    text: str,
    cuts: list[int],
    counts: list[int],
    empties: list[int],
    between: list[tuple[int, list[list[int]]]],
) -> None:
    """The processor's per-push path for text chunks (plain text read as token text, straight to the writer;
    any other text to the machine's ``feed`` without the general checks) gives the events of its general path
    (the same chunks as a ``str`` subclass, which that path does not take), in every protocol: spellings whole,
    split or held, lone surrogates, empty chunks, and groups of ids (half a character too) among the chunks."""
    chunks: list[Any] = list(split(text, cuts))
    for at in empties:
        chunks.insert(at % (len(chunks) + 1), "")
    for at, groups in between:
        chunks[at % (len(chunks) + 1) : at % (len(chunks) + 1)] = groups
    request = dataclasses.replace(_REQUESTS[protocol], parsing_options=opts)

    assert _pushed(request, chunks, counts, fast=True) == _pushed(request, chunks, counts, fast=False)


@pytest.mark.parametrize("protocol", sorted(_REQUESTS))
@given(
    calls=st.lists(PARAMETERS, min_size=1, max_size=3),
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    starts=st.booleans(),
    stops=st.sampled_from([[], ["<｜DS"], ["</"], ["x", "<"], ["<｜end"]]),
    end=st.sampled_from(["", "<｜end▁of▁sentence｜>", "\ud800", "</｜DSML｜tool_calls>after"]),
    between=st.lists(
        st.tuples(
            st.integers(0, 300),
            st.just("")
            | ID_GROUPS.map(lambda g: g[:1])
            | st.just([[271]])
            | ID_GROUPS.map(lambda g: [UserList(x) for x in g[:1]]),  # ids the fast path does not take
        ),
        max_size=4,
    ),
    general_at=st.lists(st.integers(0, 300), max_size=4),
)
def test_processor_text_fast_path_in_blocks(
    protocol: str,
    calls: list[list[tuple[str, str, str]]],
    sizes: list[int],
    starts: bool,
    stops: list[str],
    end: str,
    between: list[tuple[int, Any]],
    general_at: list[int],
) -> None:
    """The per-push path for text inside a tool-call block (chunks with spellings whole, split or held, read
    straight by the block parser; the lane through a string value) gives the events of the machine's ``feed``,
    with and without stop sequences, with the end-of-sentence spelling or a lone surrogate in the block, and
    with empty chunks and groups of ids (half a character too) among the chunks, and with some chunks and id
    groups going the general way in the middle of the fast run (which must close the lane)."""
    text = _block_text(calls, first="apply_patch", end=end)  # the Responses request's custom tool first
    chunks: list[str] = []  # small chunks (a few characters, as a backend sends), so that spellings are cut
    while text:
        size = sizes[len(chunks) % len(sizes)]
        chunks.append(text[:size])
        text = text[size:]
    mixed: list[Any] = list(chunks)
    for at, extra in between:
        place = at % (len(mixed) + 1)
        mixed[place:place] = [extra] if isinstance(extra, str) else extra
    opts = ParsingOptions(starts_in_tool_calls=starts, stop_sequences=stops)
    request = dataclasses.replace(_REQUESTS[protocol], parsing_options=opts)

    fast = _pushed(request, mixed, [1], fast=True, general_at={at % (len(mixed) + 1) for at in general_at})
    assert fast == _pushed(request, mixed, [1], fast=False)


def _pushed(
    request: Any, chunks: list[Any], counts: list[int], *, fast: bool, general_at: set[int] = frozenset()
) -> list[Any]:
    """Every push's events (as dicts) of a processor fed ``chunks`` (lists of ids, or text chunks with a token
    count from ``counts`` in turn); without ``fast`` (and for the chunks at ``general_at``), the text goes as a
    ``str`` subclass, which the per-push paths turn down, so the machine's ``feed`` reads it."""
    p = StreamProcessor(
        request, response_id="r", model="m", created=0, tokenizer=VOCAB, tool_call_id_factory=_ids
    )
    log: list[Any] = [[e.to_dict() for e in p.start(3)]]
    for k, chunk in enumerate(chunks):
        try:
            if isinstance(chunk, (list, UserList)):
                events = p.push_tokens(chunk)
            else:
                plain = fast and k not in general_at
                events = p.push_text(chunk if plain else _Text(chunk), counts[k % len(counts)])
        except DscodecError as exc:
            log.append(type(exc).__name__)
            return log
        log.append([_timeless(e.to_dict()) for e in events])  # a stop sequence finishes the stream in a push
        if p.finished:
            break
    log.append([_timeless(e.to_dict()) for e in p.finish("stop")])
    return log


def _timeless(event: dict[str, Any]) -> dict[str, Any]:
    """A Responses event without ``completed_at``, which reads the wall clock (two runs may straddle a second)."""
    response = event.get("response")
    if isinstance(response, dict) and "completed_at" in response:
        return {**event, "response": {k: v for k, v in response.items() if k != "completed_at"}}
    return event


def test_switches_name_real_hooks() -> None:
    """Each subclass overrides something the class it stands for has (a renamed hook would make its test
    vacuous)."""
    for machine in MACHINES:
        names = [name for name in vars(machine) if not name.startswith("__")]
        assert names, machine
        assert all(hasattr(OutputMachine, name) for name in names), machine
    for parser in (_NoStringPiece, _NoTagJumps):
        names = [name for name in vars(parser) if not name.startswith("__")]
        assert names and all(hasattr(BlockParser, name) for name in names), parser
    assert Stage.CONTENT.value == "content"


#: An ordinary id whose bytes are not whole characters: a group that starts with it is gathered by bytes.
_PARTIAL = next(i for i, row in enumerate(VOCAB.id_bytes) if row and _partial(row))
#: A negative number that indexes an ordinary id's row from the end of the table.
_NEGATIVE = next(-k for k in range(1, len(VOCAB.ordinary_bytes)) if VOCAB.ordinary_bytes[-k] is not None)


@pytest.mark.parametrize(
    "group",
    [[True], [1.0], [-1], [5, False], [5, -2], [5, "7"], [len(VOCAB.id_bytes)]]
    + [[_PARTIAL, bad] for bad in (True, False, 1.0, -1, _NEGATIVE, "7", len(VOCAB.id_bytes), 2**40)],
)
def test_decoder_decode_plain_refuses_what_is_not_an_ordinary_id(group: list[Any]) -> None:
    """Bools, floats, negative and unknown ids are left to the caller's checks, also among ids gathered by
    their bytes; nothing is held or cached."""
    decoder = IncrementalDecoder(VOCAB)
    with pytest.raises(LookupError):
        decoder.decode_plain(group)
    assert not decoder.pending_bytes


def test_empty_chunks_in_the_middle_of_a_stage_take_the_fast_path() -> None:
    """An empty text chunk in the reasoning or the content gives nothing without the general path; with a
    spelling's start held (or in a tool-call block) it goes to ``feed``, which must see it."""
    m = OutputMachine(ParsingOptions(thinking_initial_stage="reasoning_start"))
    assert m.feed("Let me think") == [ReasoningDelta("Let me think")]
    assert m.plain_chunk("") == ""
    assert m.feed("<｜DS") == [] and m.pending_text == "<｜DS"
    assert m.plain_chunk("") is None
    blocks = OutputMachine(ParsingOptions(starts_in_tool_calls=True), tool_call_id_factory=_ids)
    assert blocks.feed('<｜DSML｜invoke name="f">') == [ToolCallStart(0, "id0", "f")]
    assert blocks.plain_chunk("") is None
