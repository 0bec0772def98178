"""OutputMachine: the stage machine, DSML tool calls, stop sequences, JSON mode and logprobs (behavior.md#stage-machine to behavior.md#token-chunks-and-usage).

Expected values are the reference's observed results (behavior.md#response-path), except where DEVIATIONS.md D7/D8 apply.
"""

from __future__ import annotations

import json
import re
import tracemalloc
from typing import Any

import pytest

import dscodec
from dscodec._json import loads
from dscodec.conversation import ParsingOptions
from dscodec.errors import StreamStateError
from dscodec.stream._stops import StopMatcher
from dscodec.stream.decoder import IncrementalDecoder
from dscodec.stream.dsml import HOLD_LIMIT, JsonPrefix, random_tool_call_id
from dscodec.stream.events import (
    ContentDelta,
    Event,
    OutputEnd,
    ReasoningDelta,
    ReasoningEnd,
    StopSequence,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from dscodec.stream.machine import OutputMachine, Stage
from dscodec.vocab import Vocabulary

OP = "<｜DSML｜tool_calls>\n"
CL = "</｜DSML｜tool_calls>"
OP41 = "<｜DSML｜ calls>\n"
CL41 = "</｜DSML｜ calls>"


def inv(name: str, body: str, *, v41: bool = False) -> str:
    sp = " " if v41 else ""
    return f'<｜DSML｜{sp}invoke name="{name}">\n{body}</｜DSML｜{sp}invoke>\n'


def par(key: str, value: str, kind: str = "true", *, v41: bool = False) -> str:
    sp = " " if v41 else ""
    return f'<｜DSML｜{sp}parameter name="{key}" string="{kind}">{value}</｜DSML｜{sp}parameter>\n'


def options(
    stage: str | None = None,
    *,
    tools: bool = True,
    sitc: bool = False,
    json_mode: bool = False,
    stop: tuple[str, ...] = (),
) -> ParsingOptions:
    return ParsingOptions(
        parse_tool_calls=tools,
        starts_in_tool_calls=sitc,
        parse_json_output=json_mode,
        thinking_initial_stage=stage,  # type: ignore[arg-type]
        stop_sequences=list(stop),
    )


def machine(**kw: Any) -> OutputMachine:
    return OutputMachine(options(**kw), tool_call_id_factory=lambda index: f"call-{index}")


def events_of(chunks: list[str], **kw: Any) -> list[Event]:
    m = machine(**kw)
    out: list[Event] = []
    for chunk in chunks:
        if m.state is Stage.FINISHED:
            break
        out += m.feed(chunk)
    return out + m.close()


def merged(chunks: list[str], **kw: Any) -> dict[str, Any]:
    return merge(events_of(chunks, **kw))


def merge(events: list[Event]) -> dict[str, Any]:
    result: dict[str, Any] = {"r": "", "c": "", "calls": [], "stop": None}
    for ev in events:
        if isinstance(ev, ReasoningDelta):
            result["r"] += ev.text
        elif isinstance(ev, ContentDelta):
            result["c"] += ev.text
        elif isinstance(ev, ToolCallStart):
            result["calls"].append([ev.name, ""])
        elif isinstance(ev, ToolCallDelta):
            result["calls"][ev.index][1] += ev.arguments
        elif isinstance(ev, OutputEnd):
            result["stop"] = ev.stop_sequence
    return result


def both(text: str, **kw: Any) -> dict[str, Any]:
    """The merged result, checked to be the same whole and character by character."""
    whole = merged([text], **kw)
    assert merged(list(text), **kw) == whole
    return whole


# --- behavior.md#stage-machine stages and newlines ------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunks", "stage", "reasoning", "content"),
    [
        (["abc</thi", "nk>xyz"], "reasoning_start", "abc", "xyz"),
        (["\n\nabc\n", "\n</think>\n\nxyz"], "reasoning_start", "abc", "xyz"),
        (["\n\nabc\n</think>\n\nxyz"], "content_continuation", "", "\n\nabc\n\n\nxyz"),
        (["\n\nabc\n</think>\n\nxyz"], "reasoning_continuation", "\n\nabc", "xyz"),
        (["  \n r</think>x"], "reasoning_start", "  \n r", "x"),
        (["<think>r</think>A"], "reasoning_start", "<think>r", "A"),
        (["r\n\n<think>\n</think>A"], "reasoning_start", "r\n\n<think>", "A"),
        (["a\n\n", "b"], "reasoning_start", "a\n\nb", ""),
        (["abc\n\n"], "reasoning_start", "abc\n\n", ""),
        (["\n\n</think>x"], "reasoning_start", "", "x"),
        (["r</think></think>\nb"], "reasoning_start", "r", "\nb"),
        (["r</think>\n</think>\nb"], "reasoning_start", "r", "\nb"),
        (["\n\n", "\nHello\n\n"], None, "", "Hello\n\n"),
        (["a</think>b"], None, "", "ab"),
        (["a\n</think>\nb"], None, "", "a\n\nb"),
        (["\n</think>\nb"], None, "", "\nb"),
        (["</think>\n\nb"], None, "", "\n\nb"),
        (["A<｜User｜><think>B"], None, "", "A<｜User｜><think>B"),
        (["A<｜User｜><｜end▁of▁sentence｜>B"], None, "", "A<｜User｜>"),  # D15
    ],
)
def test_stages_and_newlines(chunks: list[str], stage: str | None, reasoning: str, content: str) -> None:
    for feed in (chunks, list("".join(chunks))):
        result = merged(feed, stage=stage)
        assert (result["r"], result["c"]) == (reasoning, content)


def test_reasoning_end_is_emitted_once_in_order() -> None:
    evs = events_of(["\nThink.</think>Answer"], stage="reasoning_start")
    assert evs == [
        ReasoningDelta("Think."),
        ReasoningEnd(),
        ContentDelta("Answer"),
        OutputEnd(0),
    ]
    evs = events_of(["no end"], stage="reasoning_start")
    assert evs[-2:] == [ReasoningEnd(), OutputEnd(0)]


def test_text_is_released_as_soon_as_it_cannot_be_a_marker() -> None:
    m = machine()
    assert m.feed("hello <") == [ContentDelta("hello ")]
    assert m.pending_text == "<"
    assert m.feed("｜DS") == []
    assert m.pending_text == "<｜DS"
    assert m.feed("x") == [ContentDelta("<｜DSx")]
    assert m.pending_text == ""


@pytest.mark.parametrize("text", ["hello <｜DS", "hello <", "hello </thi"])
def test_partial_markers_are_flushed_at_close(text: str) -> None:
    assert both(text)["c"] == text


# --- tool-call blocks -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "content"),
    [
        ("Hi\n\n\n", "Hi"),
        ("Hi \n", "Hi "),
        ("Hi", "Hi"),
        ("Hi\r\n", "Hi\r"),
        ("\n\nHi\n \n", "Hi\n "),
        ("\n\n", ""),
    ],
)
def test_newlines_before_a_block_are_dropped(before: str, content: str) -> None:
    result = both(before + OP + inv("f", par("a", "v")) + CL)
    assert result["c"] == content
    assert result["calls"] == [["f", '{"a": "v"}']]


def test_block_in_reasoning_ends_it() -> None:
    evs = events_of(["\n\nThink\n\n" + OP + inv("f", "") + CL + "after"], stage="reasoning_start")
    assert evs == [
        ReasoningDelta("Think"),
        ReasoningEnd(),
        ToolCallStart(0, "call-0", "f"),
        ToolCallDelta(0, "{}"),
        ToolCallEnd(0, "{}"),
        OutputEnd(1),
    ]


def test_everything_after_the_block_is_discarded() -> None:
    text = "A\n\n" + OP + inv("f", "") + CL + "\n\nmore text" + OP + inv("g", "") + CL
    result = both(text)
    assert result == {"r": "", "c": "A", "calls": [["f", "{}"]], "stop": None}


def test_without_tool_parsing_markup_is_content() -> None:
    text = "ab " + OP + inv("f", "") + CL
    assert both(text, tools=False) == {"r": "", "c": text, "calls": [], "stop": None}


@pytest.mark.parametrize(
    "text",
    [
        OP41 + inv("f", par("a", "v", v41=True), v41=True) + CL41,
        OP + inv("f", par("a", "v", v41=True), v41=True) + CL41,
        OP41 + inv("f", par("a", "v")) + CL,
        'Hi <｜DSML｜invoke name="f">\n' + par("a", "v") + "</｜DSML｜invoke>\n",
    ],
)
def test_both_spellings_and_any_opener_tag(text: str) -> None:
    assert both(text)["calls"] == [["f", '{"a": "v"}']]


def test_newline_breaking_a_partial_opener_is_kept() -> None:
    # Observed: "<\n" goes out whole; only the newlines after it are dropped before the block.
    for before, content in (("<\n", "<\n"), ("a<\n\n", "a<\n"), ("<x\n", "<x"), ("a</th\n", "a</th")):
        assert both(before + OP + inv("f", "") + CL)["c"] == content


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        (OP + inv("f", "") + CL, [["f", "{}"]]),
        ("\n" + OP + inv("f", "") + CL, [["f", "{}"]]),
        (inv("f", ""), [["f", "{}"]]),
        (OP + OP + inv("f", ""), [["f", "{}"]]),
        ("plain text", []),
        ("plain " + inv("f", ""), [["f", "{}"]]),
        ("reason</think>" + inv("f", ""), [["f", "{}"]]),
    ],
)
def test_required_tool_choice_starts_inside_a_block(text: str, calls: list[list[str]]) -> None:
    for stage in (None, "reasoning_start"):
        result = both(text, sitc=True, stage=stage)
        assert result == {"r": "", "c": "", "calls": calls, "stop": None}


# --- behavior.md#dsml-parsing DSML arguments ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "arguments"),
    [
        (par("city", "Paris") + par("days", "3", "false"), '{"city": "Paris", "days": 3}'),
        (par("city", 'a"b\\c\nd\te/\x01中😀</x>'), '{"city": "a\\"b\\\\c\\nd\\te/\\u0001中😀</x>"}'),
        (
            par("city", '{"a": [1, 2], "b": null}', "false") + par("days", "[1,2]", "false"),
            '{"city": {"a": [1, 2], "b": null}, "days": [1,2]}',
        ),
        (
            par("a", "true", "false") + par("b", "null", "false") + par("c", "-1.5e3", "false"),
            '{"a": true, "b": null, "c": -1.5e3}',
        ),
        (par("a", " 3 ", "false"), '{"a":  3 }'),
        (par("a", "\r\b\f\x1f\x7f\u2028"), '{"a": "\\r\\b\\f\\u001f\x7f\u2028"}'),
        ("", "{}"),
    ],
)
def test_arguments(params: str, arguments: str) -> None:
    result = both(OP + inv("get", params) + CL)
    assert result["calls"] == [["get", arguments]]
    json.loads(arguments)


def test_argument_delta_granularity_for_a_whole_chunk() -> None:
    evs = events_of([OP + inv("get", par("city", "Paris") + par("days", "3", "false")) + CL])
    deltas = [ev.arguments for ev in evs if isinstance(ev, ToolCallDelta)]
    assert deltas == ["{", '"city"', ": ", '"', "Paris", '"', ", ", '"days"', ": ", "3", "}"]
    end = [ev for ev in evs if isinstance(ev, ToolCallEnd)]
    assert end == [ToolCallEnd(0, '{"city": "Paris", "days": 3}', True)]


def test_string_values_stream_char_by_char_with_their_raw_text() -> None:
    value = '*** Begin Patch\n+Hello "world"\n+\ttab \\ back\n*** End Patch\n'
    text = OP + inv("apply_patch", par("input", value)) + CL
    for feed in ([text], list(text)):
        evs = events_of(feed)
        raw = "".join(ev.raw for ev in evs if isinstance(ev, ToolCallDelta) and ev.raw is not None)
        assert raw == value
        assert {ev.parameter for ev in evs if isinstance(ev, ToolCallDelta) and ev.raw is not None} == {
            "input"
        }
    deltas = [ev.arguments for ev in events_of(list(text)) if isinstance(ev, ToolCallDelta)]
    assert deltas[3:6] == ['"', "*", "*"]  # a string value is never held back


def test_several_calls_get_indexes_and_ids() -> None:
    evs = events_of([OP + inv("a", "") + inv("zzz", par("k", "v")) + CL])
    starts = [ev for ev in evs if isinstance(ev, ToolCallStart)]
    assert starts == [ToolCallStart(0, "call-0", "a"), ToolCallStart(1, "call-1", "zzz")]
    assert evs[-1] == OutputEnd(2)


def test_default_tool_call_ids() -> None:
    pattern = re.compile(r"call_(\d\d)_[A-Za-z0-9]{20}\d{4}")
    ids = {random_tool_call_id(index) for index in range(12)}
    assert len(ids) == 12
    assert all(pattern.fullmatch(i) for i in ids)
    assert random_tool_call_id(11).startswith("call_11_")
    m = OutputMachine(options())
    start = next(ev for ev in m.feed(OP + inv("f", "")) if isinstance(ev, ToolCallStart))
    assert pattern.fullmatch(start.call_id)


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        # D8: a missing or unknown string attribute: JSON if the value is JSON, else a string (the reference
        # writes '{"a">v</｜DSML｜parameter>…' and '{"a": ' here)
        (OP + inv("f", '<｜DSML｜parameter name="a">v</｜DSML｜parameter>\n') + CL, [["f", '{"a": "v"}']]),
        (OP + inv("f", par("a", "v", "maybe")) + CL, [["f", '{"a": "v"}']]),
        (OP + inv("f", par("a", "v", "maybe") + par("b", "w")) + CL, [["f", '{"a": "v", "b": "w"}']]),
        (OP + '<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">v', [["f", '{"a": "v']]),
        (OP + '<｜DSML｜invoke name="f">\n' + par("a", "v"), [["f", '{"a": "v"']]),
        (OP + inv("f", par("a", "v")), [["f", '{"a": "v"}']]),
        (
            OP + "junk\n" + inv("h", "") + "junk" + inv("i", "x" + par("x", "1", "false") + "y") + CL,
            [["h", "{}"], ["i", '{"x": 1}']],
        ),
        (OP + '<｜DSML｜invok name="g">\n', []),
        (OP + '<｜DSML｜invok name="g">\n' + inv("h", ""), [["h", "{}"]]),
        (OP + inv("f", par("a", "a</｜DSML｜x <｜DSML｜y </z")) + CL, [["f", '{"a": "a"}']]),
        (
            OP + '<｜DSML｜invoke name="f">\n<｜DSML｜invoke name="g">\n</｜DSML｜invoke>\n' + CL,
            [["f", "{}"]],
        ),
        (
            OP + '<｜DSML｜invoke name="f">\n</｜DSML｜foo<｜DSML｜invoke name="g">\n</｜DSML｜invoke>\n',
            [["f", "{}"], ["g", "{}"]],
        ),
        (OP + '<｜DSML｜invoke name="">\n</｜DSML｜invoke>\n', [["", "{}"]]),
    ],
)
def test_malformed_markup(text: str, calls: list[list[str]]) -> None:
    assert both(text)["calls"] == calls


def test_incomplete_calls_end_at_close() -> None:
    evs = events_of([OP + '<｜DSML｜invoke name="f">\n' + par("a", "v")])
    assert evs[-2:] == [ToolCallEnd(0, '{"a": "v"', False), OutputEnd(1)]


# --- D8: complete invokes always have valid JSON arguments ----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("", "null"),
        ("   ", "null"),
        ("not json", '"not json"'),
        ("NaN", '"NaN"'),
        ("Infinity", '"Infinity"'),
        ("tru", '"tru"'),
        ("[1,", '"[1,"'),
        ("'single'", "\"'single'\""),
        ('{"a": 1} trailing', '"{\\"a\\": 1} trailing"'),
        ("12", "12"),
        ('"quoted"', '"quoted"'),
        # "valid JSON" is what dscodec's reader accepts (dscodec._json.loads)
        ("1e400", '"1e400"'),
        ("-1" + "0" * 400, '"-1' + "0" * 400 + '"'),
        ('"\\ud800"', '"\\"\\\\ud800\\""'),
        ('"\\ud83d\\ude00"', '"\\ud83d\\ude00"'),
        ("[" * 126 + "]" * 126, "[" * 126 + "]" * 126),  # inside the arguments object: 127 levels
        # past HOLD_LIMIT a value streams as written; at the 127th level it breaks and is closed
        ("[" * 127 + "]" * 127, "[" * 126 + "]" * 126),
        ("[" * 30 + "]" * 30, "[" * 30 + "]" * 30),
    ],
)
def test_d8_non_string_values(value: str, written: str) -> None:
    result = both(OP + inv("f", par("a", value, "false")) + CL)
    arguments = result["calls"][0][1]
    assert arguments == '{"a": ' + written + "}"
    assert isinstance(loads(arguments), dict)


def test_d8_long_values_are_streamed_and_completed() -> None:
    long_valid = "[" + ", ".join(str(i) for i in range(40)) + "]"
    assert len(long_valid) > HOLD_LIMIT
    evs = events_of(list(OP + inv("f", par("a", long_valid, "false")) + CL))
    deltas = [ev.arguments for ev in evs if isinstance(ev, ToolCallDelta)]
    assert "".join(deltas) == '{"a": ' + long_valid + "}"
    assert len(deltas) > 10  # streamed after the hold limit, not sent in one piece

    broken = "[" + "1, " * 40 + "oops, 2]"
    result = both(OP + inv("f", par("a", broken, "false")) + CL)
    value = json.loads(result["calls"][0][1], parse_constant=_reject)["a"]
    assert value == [1] * 40 + [None]

    # a number or escape is sent only once it is known to be valid: 1e400 and a lone surrogate never go out
    for bad, completed in (("1e400, 2]", [None]), ('"\\ud800 x"]', [""])):
        text = "[" + "1, " * 40 + bad
        arguments = both(OP + inv("f", par("a", text, "false")) + CL)["calls"][0][1]
        assert loads(arguments)["a"] == [1] * 40 + completed, bad


def test_d8_keys_are_json_strings() -> None:
    params = par('a"b', "x") + '<｜DSML｜parameter name=plain string="true">y</｜DSML｜parameter>\n'
    params += par("k\\n", "z")
    arguments = both(OP + inv("f", params) + CL)["calls"][0][1]
    assert json.loads(arguments) == {'a"b': "x", "plain": "y", "k\n": "z"}


def tag(attributes: str, value: str, *, v41: bool = False) -> str:
    sp = " " if v41 else ""
    return f"<｜DSML｜{sp}parameter {attributes}>{value}</｜DSML｜{sp}parameter>\n"


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        # attributes in any order; unknown ones ignored (the reference: {}, '{"a": ', '{"a"string…')
        (tag('string="true" name="a"', "v"), {"a": "v"}),
        (tag('name="a" string="true" lang="en"', "v"), {"a": "v"}),
        (tag('lang="en" name="a" string="false"', "3"), {"a": 3}),
        (tag('name="a"  string="true"', "v"), {"a": "v"}),
        (tag("name=a string=true", "v"), {"a": "v"}),
        (tag('name="a" string="false" ', "[1]"), {"a": [1]}),
        (tag('name="a b" string="true"', "v"), {"a b": "v"}),
        ('<｜DSML｜parameter  name="a" string="true">v</｜DSML｜parameter>\n', {"a": "v"}),
        # no string attribute, or an unknown value: JSON if the value is JSON, else a string of its text
        (tag('name="a"', "v"), {"a": "v"}),
        (tag('name="a"', "42"), {"a": 42}),
        (tag('name="a"', '{"x": [1, null]}'), {"a": {"x": [1, None]}}),
        (tag('name="a"', '"quoted"'), {"a": "quoted"}),
        (tag('name="a"', ""), {"a": ""}),
        (tag('name="a"', " "), {"a": " "}),
        (tag('name="a"', "NaN"), {"a": "NaN"}),
        (tag('name="a"', "1e400"), {"a": "1e400"}),
        (tag('name="a"', "[1, 2"), {"a": "[1, 2"}),
        (tag('name="a"', "1 2"), {"a": "1 2"}),
        (tag('name="a"', "[" * 127 + "]" * 127), {"a": "[" * 127 + "]" * 127}),
        (tag('name="a" string="maybe"', "v"), {"a": "v"}),
        (tag('name="a" string="True"', "true"), {"a": True}),
        (tag('name="a" string="maybe"', "v") + tag('name="b" string="true"', "w"), {"a": "v", "b": "w"}),
        # the reference's own forms keep working
        ('parameter name="a" string="true">v</｜DSML｜parameter>\n', {"a": "v"}),
        ('junk parameter name="a" string="false">1</｜DSML｜parameter>\n', {"a": 1}),
        # a parameter without a name is dropped, its value with it
        (tag('string="true"', "v") + tag('name="b" string="true"', "w"), {"b": "w"}),
        (tag("", "v"), {}),
        # a tag that never ends: the next tag starts the next parameter
        (
            '<｜DSML｜parameter name="a" string="true"' + tag('name="b" string="true"', "w"),
            {"a": "", "b": "w"},
        ),
        ('<｜DSML｜parameter name="a"</｜DSML｜parameter>\n', {"a": ""}),  # no ">" at all
        # a stray or missing quote takes the tag's ">" into a quoted value that a new tag then cuts: the tag
        # ended at the first ">" after that quote, and the value is kept (the reference: '{"a": ')
        (tag('name="a" x"', "v"), {"a": "v"}),
        (tag('name="a" string="true', "v <b> w"), {"a": "v <b> w"}),
        (tag('name="a" string="false', '{"x": [1]}'), {"a": {"x": [1]}}),
        (tag('name="a" string="true""', "v"), {"a": "v"}),
        (tag('name="a" string="true" "', "v") + tag('name="b" string="false"', "2"), {"a": "v", "b": 2}),
        (tag('name="a', "v"), {"a": "v"}),
        (tag('name="a" string="false', "") + tag('name="b"', "w"), {"a": None, "b": "w"}),
        # a tag the parser does not know is skipped with its closing tag; the call goes on (the reference: {})
        (
            '<｜DSML｜paramter name="a" string="true">v</｜DSML｜paramter>\n' + tag('name="b"', "w"),
            {"b": "w"},
        ),
        ('<｜DSMarameter name="a" string="true">v</｜DSML｜parameter>\n' + tag('name="b"', "w"), {"b": "w"}),
        ("junk <b>bold</b>\n" + tag('name="b"', "w"), {"b": "w"}),
        # so is a parameter tag without a name, which gives no parameter
        (tag('string="true"', "v") + tag('name="b"', "w"), {"b": "w"}),
        (tag('x="d"', "3") + tag('name="b"', "w"), {"b": "w"}),
        # a parameter tag cut short by a closing tag: that tag is its own, not the call's
        (
            '<｜DSML｜parameter name="a" string="true"v</｜DSML｜parameter>\n' + tag('name="b"', "w"),
            {"a": "", "b": "w"},
        ),
        (
            '<｜DSML｜parameter name="a"<｜DSML｜ string="true">v</｜DSML｜parameter>\n'
            + tag('name="b"', "w"),
            {"a": "", "b": "w"},
        ),
        # a Dsml token without "<" is text of the tag: here of the name, whose quote no separator follows
        (
            '<｜DSML｜parameter name="a"｜DSML｜ string="true">v</｜DSML｜parameter>\n'
            + tag('name="b"', "w"),
            {'a"｜DSML｜ string="true': "v", "b": "w"},
        ),
        (
            '<｜DSML｜parameter name="a" ｜DSML｜string="true">v</｜DSML｜parameter>\n'
            + tag('name="b"', "w"),
            {"a": "v", "b": "w"},
        ),
    ],
)
def test_d8_parameter_tags_are_read_by_their_attributes(params: str, expected: dict[str, Any]) -> None:
    """D8: a complete invoke gives valid JSON arguments whatever its parameter tags look like."""
    for v41 in (False, True):
        text = params.replace("｜DSML｜parameter", "｜DSML｜ parameter") if v41 else params
        text = (OP41 if v41 else OP) + inv("f", text, v41=v41) + (CL41 if v41 else CL)
        arguments = both(text)["calls"][0][1]
        assert loads(arguments) == expected, (v41, arguments)


@pytest.mark.parametrize("v41", [False, True])
def test_d8_a_tag_the_parser_does_not_know_never_keeps_the_call_open_past_its_closing_tag(v41: bool) -> None:
    """After a misspelled or cut tag, only a closing tag that is not the call's or the block's own is taken as
    its closing tag: the invoke's closing tag still ends the call (it is read a few units later, a push or two
    at most), and so does the block's."""
    sp = " " if v41 else ""
    op, cl = (OP41, CL41) if v41 else (OP, CL)
    unknown = f'<｜DSML｜{sp}paramter name="a">v\n'
    second = inv("g", par("b", "w", v41=v41), v41=v41)
    for body, calls in [
        (inv("f", unknown, v41=v41) + second, [("f", {}), ("g", {"b": "w"})]),
        # a parameter tag without a name is one the parser does not know (as the reference reads it)
        (
            inv("f", f'<｜DSML｜{sp}parameter string="true">v\n', v41=v41) + second,
            [("f", {}), ("g", {"b": "w"})],
        ),
        (inv("f", f"<｜DSML｜{sp}parameter>\n", v41=v41) + second, [("f", {}), ("g", {"b": "w"})]),
        (
            inv("f", f'<｜DSML｜{sp}parameter name="a"', v41=v41) + second,
            [("f", {"a": ""}), ("g", {"b": "w"})],
        ),
    ]:
        result = both(op + body + cl)
        assert [(name, loads(arguments)) for name, arguments in result["calls"]] == calls, body
    # the block's closing tag, with the invoke's never written: the call ends complete
    result = both(op + f'<｜DSML｜{sp}invoke name="f">\n' + unknown + cl)
    assert [(name, loads(arguments)) for name, arguments in result["calls"]] == [("f", {})]


def test_d8_values_without_a_string_flag_stream_as_early_as_the_rule_allows() -> None:
    """A text value goes out from its first character that no JSON can continue with; a JSON value only when it
    ended (only then is it known to be JSON), however long it is."""
    text = OP + inv("f", tag('name="a"', "Paris is nice") + tag('name="b"', "[" + "1, " * 50 + "2]")) + CL
    m = machine()
    sent: list[tuple[str, str]] = []  # (last character fed, argument text sent)
    for ch in text:
        sent += [(ch, ev.arguments) for ev in m.feed(ch) if isinstance(ev, ToolCallDelta)]
    sent += [("", ev.arguments) for ev in m.close() if isinstance(ev, ToolCallDelta)]
    assert ("P", '"P') in sent and ("a", "a") in sent
    value_b = [arguments for _, arguments in sent if arguments.startswith("[")]
    assert value_b == ["[" + "1, " * 50 + "2]"]  # held whole, then sent at the parameter's end
    assert loads("".join(arguments for _, arguments in sent)) == {"a": "Paris is nice", "b": [1] * 50 + [2]}
    long_text = "[" + "1, " * 50 + "x]"  # a JSON prefix for 150 characters, then text: a string, all of it
    arguments = both(OP + inv("f", tag('name="a"', long_text)) + CL)["calls"][0][1]
    assert loads(arguments) == {"a": long_text}


def test_json_prefix_completion() -> None:
    """The completion completes the *committed* prefix: held numbers and escapes are not part of it."""
    for text, committed in (
        ('{"a": [1, {"b": "x', 18),
        ("-", 0),
        ("1e+", 0),
        ('"\\u12', 1),
        ('"\\ud83d\\ude00', 13),
        ('"\\ud83d', 1),
        ('{"k"', 4),
        ("[1,", 3),
        ("[1", 1),
        ("", 0),
    ):
        checker = JsonPrefix()
        assert checker.feed(text) == len(text)
        assert checker.committed == committed, text
        loads(text[: checker.committed] + checker.completion())
    assert JsonPrefix().feed("[1] x") == 4


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        ("1e400", False),  # beyond the double range: loads() refuses it
        ("-1e400", False),
        ("1e-400", True),  # underflow is zero
        ("1" * 400, False),
        ('"\\ud800"', False),  # a lone high surrogate escape
        ('"\\udc00"', False),  # a lone low surrogate escape
        ('"\\ud800\\u0041"', False),
        ('"\\ud83d\\ude00"', True),
        ("[" * 127 + "]" * 127, True),
        ("[" * 128 + "]" * 128, False),
        ("NaN", False),
        ("-0", True),
        ('{"a": [1, 2.5e3, true, null, "x\\n"]}', True),
    ],
)
def test_json_prefix_agrees_with_the_reader(text: str, accepted: bool) -> None:
    """JsonPrefix accepts exactly what dscodec._json.loads accepts (its depth limit included)."""
    checker = JsonPrefix()
    whole = checker.feed(text) == len(text) and checker.finish() and checker.complete()
    assert whole == accepted
    try:
        loads(text)
    except ValueError:
        assert not accepted
    else:
        assert accepted


def _reject(name: str) -> None:
    raise ValueError(name)


# --- behavior.md#stop-sequences stop sequences ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "stops", "content", "matched"),
    [
        ("abcd", ("bcd", "abc"), "", "abc"),
        ("abcd", ("abcd", "bc"), "a", "bc"),
        ("xabcd", ("cd", "bcd", "abcd"), "xab", "cd"),
        ("xabcd", ("abcd", "bcd", "cd"), "x", "abcd"),
        ("Hello END world", ("END",), "Hello ", "END"),
        ("Hello EN", ("END",), "Hello EN", None),
        ("abcd", ("", "c"), "ab", "c"),
        ("ab</think>cd", ("b</th",), "a", "b</th"),
        ("ab</think>cd", ("</think>",), "ab", "</think>"),
        ("a</think>xy", ("think>",), "a</", "think>"),
        ("a</think>xy", ("</think>x",), "axy", None),
        ("a</think>b", ("ab",), "ab", None),
        ("ab<｜DSML｜tool_calls>" + inv("f", ""), ("<｜DS",), "ab", "<｜DS"),
        ("a｜DSML｜b", ("ML｜b",), "a｜DS", "ML｜b"),
        ("a\n\nEND", ("\nEND",), "a\n", "\nEND"),
        ("\n\nEND", ("\n",), "", "\n"),
        ("\n\nEND", ("\n\n",), "END", None),
        ("\n\nEND", ("\nE",), "END", None),
    ],
)
def test_stop_sequences(text: str, stops: tuple[str, ...], content: str, matched: str | None) -> None:
    result = both(text, stop=stops)
    assert (result["c"], result["stop"]) == (content, matched)


def test_stop_sequences_apply_to_content_only() -> None:
    result = both("abEND</think>xEND", stop=("END",), stage="reasoning_start")
    assert (result["r"], result["c"], result["stop"]) == ("abEND", "x", "END")
    result = both("r</think>ab</think>cd", stop=("</think>",), stage="reasoning_start")
    assert (result["r"], result["c"], result["stop"]) == ("r", "ab", "</think>")
    text = OP + inv("f", par("a", "END")) + CL
    assert both(text, stop=("END",))["calls"] == [["f", '{"a": "END"}']]


def test_a_stop_ends_the_output() -> None:
    m = machine(stop=("END",))
    assert m.feed("abc EN") == [ContentDelta("abc ")]
    assert m.feed("D more") == [StopSequence("END"), OutputEnd(0, "END")]
    assert m.state is Stage.FINISHED
    assert m.close() == []
    with pytest.raises(StreamStateError):
        m.feed("x")
    with pytest.raises(StreamStateError):
        m.close()


def test_stop_matcher_is_linear_in_the_stop_length() -> None:
    """Matching keeps no table per (state, character) and no copies of the stops: a 4,096-character stop (the
    longest a request may hold, D16) costs memory and time in proportion to its length."""
    long_stop = "a" * 4095 + "b"
    tracemalloc.start()
    try:
        matcher = StopMatcher([long_stop, "ab" * 2048, "a" * 4096])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000  # a quadratic table of held prefixes would take hundreds of megabytes
    hits = [matcher.step(ch) for ch in "a" * 5000]
    assert hits.index(2) == 4095 and all(h < 0 for h in hits[:4095])
    matcher.reset()
    assert [matcher.step(ch) for ch in "a" * 4095 + "b"][-1] == 0 and matcher.depth == 0
    # the same output in one chunk and in single characters: the match is found once, at its end
    text = "x" + "a" * 5000 + "b tail"
    assert both(text, stop=(long_stop,)) == {
        "r": "",
        "c": "x" + "a" * (5000 - 4095),
        "calls": [],
        "stop": long_stop,
    }


def test_stop_matcher_reports_what_must_be_held() -> None:
    matcher = StopMatcher(["abcab", "bcx"])
    assert [matcher.step(ch) for ch in "zabca"] == [-1] * 5
    assert (matcher.depth, matcher.state) == (4, "abca")
    assert matcher.would_match("b") and not matcher.would_match("c")
    assert matcher.depth == 4  # would_match changes nothing
    assert matcher.would_match("bcx", from_start=True)
    assert [matcher.step(ch) for ch in "bcx"] == [0, -1, -1]  # the first stop ends at the "b"


def test_stop_matchers_of_the_same_stops_share_the_automaton_not_the_state() -> None:
    """Requests resend their stop sequences: the second matcher takes the automaton the first built (nothing is
    built again), and each keeps its own place in the text."""
    stops = ["abcab", "bcx", "END OF ANSWER"]
    first = StopMatcher(stops)
    second = StopMatcher(list(stops))
    assert second._parent is first._parent and second._fail is first._fail and second._more is first._more
    assert [first.step(ch) for ch in "zabca"] == [-1] * 5
    assert (first.depth, first.state) == (4, "abca")
    assert (second.depth, second.state) == (0, "")
    assert [second.step(ch) for ch in "xbc"] == [-1, -1, -1] and second.state == "bc"
    assert first.state == "abca"
    assert [first.step(ch) for ch in "b"] == [0] and [second.step(ch) for ch in "x"] == [1]
    # Other stops, or the same ones in another order (the first listed wins a tie), build their own.
    other = StopMatcher(["bcx", "abcab", "END OF ANSWER"])
    assert other._parent is not first._parent
    assert [other.step(ch) for ch in "zabcab"][-1] == 1  # "abcab", second in this list


# --- D15: the end-of-sentence token ends the output ------------------------------------------------------------

EOS = "<｜end▁of▁sentence｜>"


@pytest.mark.parametrize(
    ("before", "after", "kw"),
    [
        ("Hello.", "<｜User｜>more", {}),
        ("Think.\n\n", "</think>Answer", {"stage": "reasoning_start"}),
        ("r</think>Answer.\n\n", "", {"stage": "reasoning_start"}),
        ("Text <｜DS", "ML｜tool_calls>\n" + inv("f", "") + CL, {}),
        ("Check.\n\n", OP + inv("f", par("a", "v")) + CL, {}),
        (OP + inv("f", par("a", "v")), "more", {}),
        (OP + '<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">Par', "is", {}),
        (OP + '<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a">[1, 2', "]", {}),
        ('<｜DSML｜invoke name="f">\n', "", {"sitc": True}),
        ('Here: {"a": 1}', " trailing", {"json_mode": True}),
        ("Here:\n```json\n{", "}\n```", {"json_mode": True}),
        ("Hello EN", "D world", {"stop": ("END",)}),
        ("Hi", "x", {"stop": ("<｜end",)}),  # a stop never matches inside the token
        ("Hi", "x", {"stop": (EOS,)}),
        ("Hi", "x", {"stop": ("i" + EOS,)}),
        ("a", EOS + "b", {}),
        ("", "anything", {"stage": "reasoning_start"}),
    ],
)
def test_d15_the_end_of_sentence_token_ends_the_output(before: str, after: str, kw: dict[str, Any]) -> None:
    """D15: text before the token gives what it gives alone, whatever follows it, in text chunks (whole, split,
    character by character) and as token ids."""
    expected = events_of([before], **kw)
    text = before + EOS + after
    assert merge(events_of([text], **kw)) == merge(expected)
    assert merge(events_of(list(text), **kw)) == merge(expected)
    cut = len(before) + 5  # inside the spelling
    assert merge(events_of([text[:cut], text[cut:]], **kw)) == merge(expected)
    vocab = Vocabulary.load(None)
    ids = enc(vocab, text)
    assert 1 in ids  # the token's id
    by_ids = token_events(vocab, [[i] for i in ids], with_logprobs=False, **kw)
    assert merge(by_ids) == merge(
        token_events(vocab, [[i] for i in enc(vocab, before)], with_logprobs=False, **kw)
    )
    assert [e for e in expected if isinstance(e, OutputEnd)] == [
        e for e in events_of([text], **kw) if isinstance(e, OutputEnd)
    ]


def test_d15_the_token_is_never_text_and_closes_nothing_itself() -> None:
    m = machine(stage="reasoning_start")
    assert m.feed("Hmm." + EOS) == [ReasoningDelta("Hmm."), ReasoningEnd()]
    assert m.state is Stage.DISCARD
    assert m.feed("</think>more" + OP) == []
    assert m.close() == [OutputEnd(0)]  # the caller ends the output, with the backend's finish reason
    m = machine()
    assert m.feed("partial <｜end▁of▁sen") == [ContentDelta("partial ")]
    assert m.pending_text == "<｜end▁of▁sen"
    assert m.feed("tence｜>") == [] and m.close() == [OutputEnd(0)]


def test_d15_logprobs_of_the_token_and_after_are_dropped(vocab: Vocabulary) -> None:
    ids = enc(vocab, "Hi there" + EOS + "more text")
    view = lp_view(token_events(vocab, [ids]))
    assert view == [("c", "Hi there", ["Hi", " there"])]
    view = lp_view(token_events(vocab, [[i] for i in ids]))
    assert [t for _, _, lps in view for t in lps] == ["Hi", " there"]


# --- behavior.md#json-mode JSON mode with D7 ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ('{"a": 1}', '{"a": 1}'),
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ('Here is the JSON:\n```json\n{"a": 1}\n```\nHope it helps!', ' {"a": 1} '),
        ("just text", " "),
        ('  \n{"a": 1}  \n', ' {"a": 1}  \n'),
        ('Sure! {"a": 1} done', ' {"a": 1} done'),
        ("42", " "),
        ("[1, 2] x", "[1, 2] x"),
        ("```\n[1]\n```", "[1]"),
        ("```JSON\n{}\n```", " {}"),
        ('{"a": 1}```yy', '{"a": 1}```yy'),
        ("a```json\n{}\n```b```json\n{}\n```c", " {} "),
        ("\n\n{}", "{}"),
        ("", ""),
        ("``", " "),
        ("```json\n{}\n``", "{}\n``"),
        ('{"a": "</think>"}\n\n<｜DSML｜invoke name="f">', '{"a": "</think>"}\n\n<｜DSML｜invoke name="f">'),
        ("</think>{}", "{}"),
        ("1 x</think>y {}", "  {}"),
    ],
)
def test_json_mode_is_chunking_independent(text: str, content: str) -> None:
    assert both(text, json_mode=True)["c"] == content


def test_json_mode_tool_calls_and_stops() -> None:
    result = both('{}\n```\n\n<｜DSML｜invoke name="f">\n</｜DSML｜invoke>\n', json_mode=True)
    assert (result["c"], result["calls"]) == ("{}", [["f", "{}"]])
    assert both('abc END {"a": 1} END', json_mode=True, stop=("END",))["c"] == ' {"a": 1} '
    assert both('{"a"}', json_mode=True, stop=('{"',))["stop"] is None


# --- token chunks ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.load(None)


def token_events(
    vocab: Vocabulary, groups: list[list[int]], *, with_logprobs: bool = True, **kw: Any
) -> list[Event]:
    dec = IncrementalDecoder(vocab)
    m = machine(**kw)
    out: list[Event] = []
    for ids in groups:
        lps = [dec.logprob(i, -(k + 1) / 10) for k, i in enumerate(ids)] if with_logprobs else None
        out += m.feed_tokens(dec.decode(ids), logprobs=lps)
    return out + m.close()


def enc(vocab: Vocabulary, text: str, *, plain: bool = False) -> list[int]:
    tok = vocab.plain if plain else vocab.full
    return list(tok.encode(text, add_special_tokens=False).ids)


def lp_view(events: list[Event]) -> list[tuple[str, str, list[str]]]:
    return [
        ("r" if isinstance(ev, ReasoningDelta) else "c", ev.text, [x.token for x in ev.logprobs])
        for ev in events
        if isinstance(ev, (ReasoningDelta, ContentDelta))
    ]


def test_only_special_ids_are_markers_in_token_chunks(vocab: Vocabulary) -> None:
    plain = enc(vocab, "r</think>c", plain=True)
    assert merge(token_events(vocab, [plain], stage="reasoning_start"))["r"] == "r</think>c"
    special = enc(vocab, "r</think>c")
    result = merge(token_events(vocab, [special], stage="reasoning_start"))
    assert (result["r"], result["c"]) == ("r", "c")
    block = "Hi\n\n" + OP + inv("f", par("a", "v")) + CL
    assert merge(token_events(vocab, [enc(vocab, block, plain=True)]))["calls"] == []
    assert merge(token_events(vocab, [[i] for i in enc(vocab, block)]))["calls"] == [["f", '{"a": "v"}']]


@pytest.mark.parametrize(
    "tag",
    [
        ' name="a" string=<think>"false">1',
        ' name="a" <think>string="false">1',
        ' name="a" string<｜image｜>="false">1',
        ' name="a" string=<｜User｜>"true">x',
        ' name="a" string="false"<think>1',
        ' name="a" string="true"<think>>x',
        '<think> name="a" string="false">1',
        ' name="a<think>b" string="true">x<think>y',
    ],
)
def test_a_special_id_inside_a_tool_call_block_reads_as_its_spelling_in_text(
    vocab: Vocabulary, tag: str
) -> None:
    """Another special id than the markers' (``<think>``, ``<｜User｜>``) inside a tool-call block is the text it
    spells, as in a text chunk: inside a parameter tag its ``>`` ends the tag either way, so text chunks and
    token ids give the same arguments, however the ids are grouped."""
    output = (
        OP
        + f'<｜DSML｜invoke name="f">\n<｜DSML｜parameter{tag}</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
        + CL
    )
    from_text = merged([output])["calls"]
    ids = enc(vocab, output)
    assert any(i in vocab.added.values() and vocab.full.id_to_token(i) not in (OP, CL) for i in ids)
    assert merge(token_events(vocab, [ids]))["calls"] == from_text
    assert merge(token_events(vocab, [[i] for i in ids], with_logprobs=False))["calls"] == from_text
    # Through the processor too, whose per-push lanes take the ids inside a block one push at a time.
    request = dscodec.convert(
        "chat_completions",
        {
            "model": "DeepSeek-V4-Pro",
            "messages": [{"role": "user", "content": "Hi"}],
            "thinking": {"type": "disabled"},
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        },
    )
    arguments = [call[1] for call in from_text]
    for size in (1, 2, 3):
        processor = dscodec.StreamProcessor(request, response_id="r", model="m", created=0, tokenizer=vocab)
        events = processor.start(1)
        for k in range(0, len(ids), size):
            events += processor.push_tokens(ids[k : k + size])
        events += processor.finish("stop")
        message = dscodec.accumulate("chat_completions", events)["choices"][0]["message"]
        assert [c["function"]["arguments"] for c in message.get("tool_calls", [])] == arguments, size


def test_special_ids_are_barriers_for_stop_sequences(vocab: Vocabulary) -> None:
    ids = enc(vocab, "abc<｜end▁of▁sentence｜>x")
    assert merge(token_events(vocab, [ids], stop=("cx",)))["stop"] is None
    assert merge(token_events(vocab, [ids], stop=("c<｜end",)))["stop"] is None
    result = merge(token_events(vocab, [ids], stop=("bc",)))
    assert (result["c"], result["stop"]) == ("a", "bc")


@pytest.mark.parametrize(
    ("text", "from_ids", "from_text"),
    [
        ("x<think>y", "   ", " "),
        ("x<think><think>y", "    ", " "),
        ("<think>y", "  ", " "),
        ('x<｜User｜>{"a": 1}', '  {"a": 1}', ' {"a": 1}'),
        ('{"a": 1}<think>x', '{"a": 1}<think>x', '{"a": 1}<think>x'),  # after a bare value everything passes
        ('x\n```json\n{"a": 1}\n```\n<think>z', ' {"a": 1}   ', ' {"a": 1} '),
    ],
)
def test_json_mode_special_ids_are_stretches_of_their_own(
    vocab: Vocabulary, text: str, from_ids: str, from_text: str
) -> None:
    """In JSON mode a special id of token input ends the non-JSON text before it and sends its own space, however
    the ids are grouped (the reference's answer for the ids in one chunk); in text chunks the same spelling is
    plain text (observed on the reference, both)."""
    ids = enc(vocab, text)
    for groups in ([ids], [[i] for i in ids], [ids[:2], ids[2:]]):
        assert merge(token_events(vocab, groups, with_logprobs=False, json_mode=True))["c"] == from_ids
    assert both(text, json_mode=True)["c"] == from_text


def test_logprobs_whole_chunk(vocab: Vocabulary) -> None:
    ids = enc(vocab, "\n\nthink\n\n</think>\n\nHi there\n\n")
    view = lp_view(token_events(vocab, [ids], stage="reasoning_start"))
    reasoning = [t for kind, _, lps in view if kind == "r" for t in lps]
    content = [t for kind, _, lps in view if kind == "c" for t in lps]
    assert reasoning == ["\n\n", "think", "\n\n"]  # the </think> entry is dropped
    assert content == ["\n\n", "Hi", " there", "\n\n"]


def test_logprobs_one_token_per_call(vocab: Vocabulary) -> None:
    ids = enc(vocab, "\n\nthink\n\n</think>\n\nHi there\n\n")
    view = lp_view(token_events(vocab, [[i] for i in ids], stage="reasoning_start"))
    # dropped newlines sent on their own have nowhere to go (observed)
    assert view == [
        ("r", "think", ["think"]),
        ("c", "Hi", ["Hi"]),
        ("c", " there", [" there"]),
        ("c", "\n\n", ["\n\n"]),
    ]


def test_logprobs_follow_held_text_and_split_characters(vocab: Vocabulary) -> None:
    groups = [[i] for i in enc(vocab, "Hello <", plain=True)] + [enc(vocab, "x")]
    view = lp_view(token_events(vocab, groups))
    assert [t for _, _, lps in view for t in lps] == ["Hello", " <", "x"]
    assert "".join(text for _, text, _ in view) == "Hello <x"
    emoji = lp_view(token_events(vocab, [[28927], [225]]))
    assert emoji == [("c", "😀", ["\\xf0\\x9f\\x98", "\\x80"])]


def test_logprobs_after_a_stop_go_with_the_last_delta(vocab: Vocabulary) -> None:
    ids = enc(vocab, "abc END x")
    view = lp_view(token_events(vocab, [ids], stop=("END",)))
    assert view == [("c", "abc ", ["abc", " END", " x"])]


def test_logprobs_after_a_stop_keep_an_id_that_completes_no_character(vocab: Vocabulary) -> None:
    """The last id of the push that matched a stop sequence is half a character: its entry still goes with the
    last delta (every entry of the call's text after the match does)."""
    ids = enc(vocab, "abc END x") + [28927]  # the first three bytes of an emoji
    view = lp_view(token_events(vocab, [ids], stop=("END",)))
    assert view == [("c", "abc ", ["abc", " END", " x", "\\xf0\\x9f\\x98"])]


@pytest.mark.parametrize("special", ["<｜User｜>", "<think>", "</think>", "<｜end▁of▁sentence｜>"])
def test_logprobs_after_a_stop_stop_at_the_next_special_id(vocab: Vocabulary, special: str) -> None:
    """The entries after a stop sequence's match go with the last delta up to the next special id, that id's own
    not included (observed on the reference)."""
    (special_id,) = enc(vocab, special)
    for text in ("xEND", "xENDz"):
        ids = enc(vocab, text) + [special_id] + enc(vocab, "y")
        entries = [t for _, _, lps in lp_view(token_events(vocab, [ids], stop=("END",))) for t in lps]
        assert entries == [vocab.token_bytes(i).decode() for i in enc(vocab, text)]


@pytest.mark.parametrize("special", ["<｜User｜>", "<think>", "<｜Assistant｜>"])
def test_logprob_of_an_unknown_id_right_after_a_special_id_goes_with_the_text_after_it(
    vocab: Vocabulary, special: str
) -> None:
    """A special id is a stretch of its own: an id the vocabulary lacks right after it has no text before it in
    its stretch, so its entry goes with the text that follows (observed on the reference), and with nothing when
    a stop sequence follows instead."""
    (special_id,) = enc(vocab, special)
    assert vocab.is_special(special_id) and vocab.token_bytes(200000) == b""
    ids = enc(vocab, "a") + [special_id, 200000] + enc(vocab, "x")
    assert lp_view(token_events(vocab, [ids])) == [
        ("c", "a", ["a"]),
        ("c", special, [special]),
        ("c", "x", ["", "x"]),
    ]
    ids = enc(vocab, "a") + [special_id, 200000] + enc(vocab, "STOP")
    entries = [t for _, _, lps in lp_view(token_events(vocab, [ids], stop=("STOP",))) for t in lps]
    assert entries == ["a", special]


def test_logprobs_of_text_before_a_block(vocab: Vocabulary) -> None:
    ids = enc(vocab, "Hi\n\n" + OP + inv("f", par("a", "v")) + CL)
    assert lp_view(token_events(vocab, [ids])) == [("c", "Hi", ["Hi", "\n\n", "<"])]


def lp_entries(view: list[tuple[str, str, list[str]]], kind: str = "c") -> list[str]:
    return [t for k, _, lps in view if k == kind for t in lps]


def test_logprobs_of_held_text_a_later_stop_match_swallows_go_with_its_released_part(
    vocab: Vocabulary,
) -> None:
    """A partial stop match held from an earlier push that fails, or that another stop beats, when a stop matches
    in a later push: the released text of the held token takes its entry, the rest of its text being in the match
    (observed on the reference: a held push goes out as a delta with its entries)."""
    x, aa, ab, st, op = (enc(vocab, t) for t in ("x", "aa", "ab", "ST", "OP"))
    assert lp_view(token_events(vocab, [x, aa, ab], tools=False, stop=("aab",))) == [
        ("c", "x", ["x"]),
        ("c", "a", ["aa"]),
    ]
    nl2, nl = enc(vocab, "\n\n"), enc(vocab, "\n")
    view = lp_view(token_events(vocab, [x, nl2, nl, enc(vocab, "q")], tools=False, stop=("\n\nq",)))
    assert ("".join(text for _, text, _ in view), lp_entries(view)) == ("x\n", ["x", "\n\n"])
    # Two stops ending at the same character: the first listed wins, inside the text the other one held.
    view = lp_view(token_events(vocab, [st, op, enc(vocab, ">")], tools=False, stop=("P>", "OP>")))
    assert view == [("c", "ST", ["ST"]), ("c", "O", ["OP"])]
    view = lp_view(token_events(vocab, [enc(vocab, "</"), x], tools=False, stop=("/x", "</x")))
    assert view == [("c", "<", ["</"])]
    view = lp_view(token_events(vocab, [st, op], tools=False, stop=("TOP", "ST<")))
    assert view == [("c", "S", ["ST"])]
    # Only the entries of the stretch whose text is released: those of later held pushes are dropped with them.
    a, b, c, d = (enc(vocab, t) for t in "abcd")
    assert lp_view(token_events(vocab, [a, b, c, d], tools=False, stop=("bcd", "abce"))) == [
        ("c", "a", ["a"])
    ]


def test_logprobs_of_a_held_newline_run_a_later_stop_match_cuts(vocab: Vocabulary) -> None:
    """With tools a newline run waits (a block may follow); a stop sequence starting inside it that matches in
    the next push leaves its first newline, which takes the entries of the run's push."""
    x, q, nl, user = enc(vocab, "x"), enc(vocab, "q"), enc(vocab, "\n"), enc(vocab, "<｜User｜>")
    view = lp_view(token_events(vocab, [x, enc(vocab, "\n\n"), q], stop=("\nq",)))
    assert view == [("c", "x", ["x"]), ("c", "\n", ["\n\n"])]
    view = lp_view(token_events(vocab, [x, enc(vocab, "\n\n"), enc(vocab, "<")], stop=("\n<",)))
    assert view == [("c", "x", ["x"]), ("c", "\n", ["\n\n"])]
    view = lp_view(token_events(vocab, [user + nl + nl, q], stop=("\nq",)))
    assert view == [("c", "<｜User｜>", ["<｜User｜>"]), ("c", "\n", ["\n", "\n"])]
    view = lp_view(token_events(vocab, [user + nl, nl, q], stop=("\nq",)))
    assert view == [("c", "<｜User｜>", ["<｜User｜>"]), ("c", "\n", ["\n"])]
    # An id the vocabulary does not have goes with the text before it, here the run.
    view = lp_view(token_events(vocab, [user + enc(vocab, "\n\n") + [200000], q], stop=("\nq",)))
    assert view == [("c", "<｜User｜>", ["<｜User｜>"]), ("c", "\n", ["\n\n", ""])]


def test_logprobs_of_a_lt_a_partial_stop_held_before_a_block(vocab: Vocabulary) -> None:
    """A partial stop match holds text and the ``<`` of a block opener: when the opener wins in a later stretch,
    the released text takes the entries of its stretch, the opener's ``<`` included."""
    a, lt, dsml, q = enc(vocab, "a"), enc(vocab, "<"), enc(vocab, "｜DSML｜"), enc(vocab, "q")
    for groups in ([a + lt + dsml + q], [a + lt, dsml + q]):
        assert lp_view(token_events(vocab, groups, stop=("a<x",))) == [("c", "a", ["a", "<"])]
    # The "<" of a later push is not of the released text's stretch: its entry is dropped.
    assert lp_view(token_events(vocab, [a, lt, dsml + q], stop=("a<x",))) == [("c", "a", ["a"])]


def test_logprobs_of_the_newline_kept_after_a_lt_before_a_block_in_the_reasoning(vocab: Vocabulary) -> None:
    """In the reasoning the newline right after a ``<`` stays before a block (D14): it takes the entries of the
    run's stretch (the run's and, in that stretch, the opener's ``<``)."""
    lt, nl2, dsml = enc(vocab, "<"), enc(vocab, "\n\n"), enc(vocab, "｜DSML｜")
    cases = [
        ([lt, nl2, lt + dsml], ["<", "\n\n"]),
        ([lt, nl2 + lt + dsml], ["<", "\n\n", "<"]),
        ([lt, nl2 + lt, dsml], ["<", "\n\n", "<"]),
        ([lt, nl2, lt, dsml], ["<", "\n\n"]),
        ([lt, enc(vocab, "\n") + lt + dsml], ["<", "\n", "<"]),
    ]
    for groups, entries in cases:
        view = lp_view(token_events(vocab, groups, stage="reasoning_start"))
        assert ("".join(text for _, text, _ in view), lp_entries(view, "r")) == ("<\n", entries)


def test_logprobs_of_dropped_leading_newlines_of_the_reasoning_in_json_mode(vocab: Vocabulary) -> None:
    """JSON mode changes only where the content's entries go (D19): a leading newline of the reasoning is dropped
    with its entry when no delta of its stretch follows, as without JSON mode."""
    nl, z, end, think = enc(vocab, "\n"), enc(vocab, "z"), enc(vocab, " end"), enc(vocab, "<think>")
    for json_mode in (False, True):
        view = lp_view(token_events(vocab, [nl, z, end], stage="reasoning_start", json_mode=json_mode))
        assert view == [("r", "z", ["z"]), ("r", " end", [" end"])]
        view = lp_view(token_events(vocab, [nl + think + z], stage="reasoning_start", json_mode=json_mode))
        assert view == [("r", "<think>", ["<think>"]), ("r", "z", ["z"])]


# --- lifecycle and errors -------------------------------------------------------------------------------------


def test_state_follows_the_output() -> None:
    m = machine(stage="reasoning_start")
    states = [m.state]
    m.feed("r</think>c")
    states.append(m.state)
    m.feed("\n\n" + OP)
    states.append(m.state)
    m.feed(inv("f", "") + CL)
    states.append(m.state)
    assert states == [Stage.REASONING, Stage.CONTENT, Stage.TOOL_CALLS, Stage.DISCARD]
    assert m.tool_calls == 1
    assert m.close() == [OutputEnd(1)]
    assert m.state is Stage.FINISHED
    assert m.close() == []


def test_logprob_count_mismatch_fails_the_machine(vocab: Vocabulary) -> None:
    dec = IncrementalDecoder(vocab)
    m = machine()
    tokens = dec.decode(enc(vocab, "a b"))
    with pytest.raises(StreamStateError) as info:
        m.feed_tokens(tokens, logprobs=[dec.logprob(0, -1.0)])
    assert info.value.status_code == 500
    assert m.state is Stage.ERROR
    with pytest.raises(StreamStateError):
        m.feed("x")
    with pytest.raises(StreamStateError):
        m.close()


def test_surrogates_in_text_cannot_pose_as_markers() -> None:
    result = both("a\ud800b\ud801c")
    assert result["c"] == "a\ufffdb\ufffdc"


def test_text_and_token_chunks_mix(vocab: Vocabulary) -> None:
    dec = IncrementalDecoder(vocab)
    m = machine(stage="reasoning_start")
    out = m.feed("a</th") + m.feed_tokens(dec.decode(enc(vocab, "ink>b", plain=True)))
    out += m.feed_tokens(dec.decode([128822])) + m.feed("c")
    result = merge(out + m.close())
    assert (result["r"], result["c"]) == ("a</think>b", "c")


def test_a_stop_inside_a_held_partial_spelling_ends_the_output_at_once() -> None:
    m = machine(stop=("b</t",))
    assert m.feed("ab</th") == [ContentDelta("a"), StopSequence("b</t"), OutputEnd(0, "b</t")]
    m = machine(stop=("b</think>x",))
    assert m.feed("ab</th") == [ContentDelta("a")]
    assert merge(m.feed("ink>x") + m.close()) == {"r": "", "c": "bx", "calls": [], "stop": None}


def by_text_and_by_ids(output: str, options: ParsingOptions) -> tuple[list[Event], list[Event]]:
    """The events of ``output`` in one text chunk, and as token ids pushed one at a time."""
    by_text = OutputMachine(options)
    whole = by_text.feed(output) + by_text.close()
    by_ids = OutputMachine(options)
    decoder = IncrementalDecoder(Vocabulary.load(None))
    events: list[Event] = []
    for token_id in Vocabulary.load(None).full.encode(output, add_special_tokens=False).ids:
        events += by_ids.feed_tokens(decoder.decode([token_id]))
    return whole, events + by_ids.close()


def test_d14_newline_after_a_partial_opener_is_the_same_for_text_and_ids() -> None:
    """D14: "<｜" then newlines before a block: text chunks give what token ids give (the newlines are dropped)."""
    output = (
        'x<｜\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
    )
    options = ParsingOptions(parse_tool_calls=True)

    def content(events: list[Any]) -> str:
        return "".join(e.text for e in events if isinstance(e, ContentDelta))

    by_text, by_ids = by_text_and_by_ids(output, options)
    assert content(by_text) == content(by_ids) == "x<｜"
    lone = OutputMachine(options)  # a newline right after "<" is kept, as the reference keeps it
    assert content(lone.feed("x<\n\n<｜DSML｜tool_calls>\n</｜DSML｜tool_calls>") + lone.close()) == "x<\n"


@pytest.mark.parametrize("partial", ["<", "</", "</th", "</think"])
@pytest.mark.parametrize("newlines", ["\n", "\n\n"])
@pytest.mark.parametrize("tools", [False, True])
def test_d14_newlines_after_a_partial_think_end_are_dropped_for_text_and_ids(
    partial: str, newlines: str, tools: bool
) -> None:
    """D14: a partial </think> (a lone "<" too, also where it may begin a block opener) then newlines before
    </think>: the newlines are trailing newlines of the reasoning, dropped for text chunks (the reference keeps
    the first one there) as for token ids."""
    options = ParsingOptions(parse_tool_calls=tools, thinking_initial_stage="reasoning_start")
    by_text, by_ids = by_text_and_by_ids(f"a{partial}{newlines}</think>b", options)
    assert merge(by_text) == merge(by_ids)
    assert (merge(by_text)["r"], merge(by_text)["c"]) == (f"a{partial}", "b")


@pytest.mark.parametrize("newlines", ["\n", "\n\n", "\n\n\n"])
def test_a_newline_right_after_a_lone_lt_stays_before_a_block_in_the_reasoning(newlines: str) -> None:
    """Before a block the first newline after a "<" is kept (the rest of the run is dropped), for text chunks
    and token ids, whatever comes in which chunk."""
    options = ParsingOptions(parse_tool_calls=True, thinking_initial_stage="reasoning_start")
    output = f'a<{newlines}<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
    by_text, by_ids = by_text_and_by_ids(output, options)
    assert merge(by_text) == merge(by_ids)
    assert merge(by_text)["r"] == "a<\n" and merge(by_text)["calls"] == [["f", "{}"]]
    by_chars = OutputMachine(options)
    events = [e for ch in output for e in by_chars.feed(ch)] + by_chars.close()
    assert merge(events) == merge(by_text)


@pytest.mark.parametrize("as_tokens", [False, True])
def test_a_newline_after_a_partial_stop_match_holds_only_the_newline(as_tokens: bool) -> None:
    """With tools on, a newline run at the end waits (a block may follow); a partial stop match that a newline
    breaks is released then, not kept with the run."""
    from dscodec.stream.decoder import TokenText

    opts = ParsingOptions(
        parse_tool_calls=True, stop_sequences=["abX"], thinking_initial_stage="content_continuation"
    )
    m = OutputMachine(opts, tool_call_id_factory=lambda i: f"id{i}")
    out = []
    for piece in ["ab", "\n", "\n", "c"]:
        events = m.feed_tokens([TokenText(-1, piece)]) if as_tokens else m.feed(piece)
        out.append([e.text for e in events if isinstance(e, ContentDelta)])
    assert out == [[], ["ab"], [], ["\n\nc"]]
