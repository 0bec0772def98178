"""Hostile model output, for all three protocols: whatever a backend hands over, the stream processor gives
events in the protocol's shape or a :class:`dscodec.ModelOutputError` (after which ``fail()`` tells the client),
never another exception.

The requests cover what changes how output is read: tools (offered, required), JSON mode, stop sequences
(overlapping, marker-like, long), log probabilities, thinking on and off, V4 and V4.1. The outputs are built from
adversarial pieces: DSML markers of both versions whole and cut, unclosed and nested blocks, huge attribute
values, parameters with deep JSON, repeated markers, ``</think>`` and the end-of-sentence token in odd places;
pushed as text split anywhere, as token ids one by one, or mixed with invalid ids.

Checked: every event serialises as strict JSON and as an SSE frame; :func:`dscodec.accumulate` builds the
complete response; the complete response does not depend on how the output was split (text chunks of any size,
or token ids); the documented misuse errors (a push after the end or after a failure) are
:class:`dscodec.StreamStateError`. The example count comes from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dscodec
from dscodec.vocab import Vocabulary
from tests.support.fixtures import encoder

PROTOCOLS = ("chat_completions", "responses", "messages")
VOCAB = Vocabulary.load(None)
EOS = "<｜end▁of▁sentence｜>"
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}
STOPS = ["END", "\n\n", "<｜", "</think>", "ab", "aba", "｜DSML｜", '"', "}", "x" * 300]


def _body(
    protocol: str,
    *,
    thinking: bool,
    tools: str,
    json_mode: bool,
    stops: list[str],
    logprobs: bool,
    model: str,
) -> dict[str, Any]:
    """A request of ``protocol`` with the settings that shape how output is read."""
    body: dict[str, Any] = {"model": model, "stream": True}
    user = [{"role": "user", "content": "q"}]
    if protocol == "chat_completions":
        body["messages"] = user
        body["thinking"] = {"type": "enabled" if thinking else "disabled"}
        if tools != "none":
            body["tools"] = [
                {"type": "function", "function": {"name": "lookup", "parameters": SCHEMA}},
                {"type": "function", "function": {"name": "other"}},
            ]
            body["tool_choice"] = tools
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        if stops:
            body["stop"] = stops
        if logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = 2
        body["stream_options"] = {"include_usage": True}
    elif protocol == "responses":
        body["input"] = "q"
        body["reasoning"] = {"effort": "high" if thinking else "none"}
        if tools != "none":
            body["tools"] = [
                {"type": "function", "name": "lookup", "parameters": SCHEMA},
                {"type": "function", "name": "other"},
            ]
            body["tool_choice"] = tools
        if json_mode:
            body["text"] = {"format": {"type": "json_object"}}
        if logprobs:
            body["top_logprobs"] = 2
    else:
        body["messages"] = user
        body["max_tokens"] = 4096
        body["thinking"] = {"type": "enabled", "budget_tokens": 1024} if thinking else {"type": "disabled"}
        if tools != "none":
            body["tools"] = [
                {"name": "lookup", "input_schema": SCHEMA},
                {"name": "other", "input_schema": {"type": "object"}},
            ]
            body["tool_choice"] = {"type": "any" if tools == "required" else "auto"}
        if stops:
            body["stop_sequences"] = stops
    return body


@st.composite
def requests(draw: st.DrawFn, protocol: str | None = None) -> dscodec.ConversationRequest:
    """A converted request with drawn settings (combinations the protocol refuses are drawn again)."""
    chosen = protocol or draw(st.sampled_from(PROTOCOLS))
    thinking = draw(st.booleans())
    body = _body(
        chosen,
        thinking=thinking,
        tools=draw(st.sampled_from(["none", "auto", "auto"] + ([] if thinking else ["required"]))),
        json_mode=draw(st.booleans()),
        stops=draw(st.lists(st.sampled_from(STOPS), max_size=4, unique=True)),
        logprobs=draw(st.booleans()),
        model=draw(st.sampled_from(["DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash"])),
    )
    try:
        return dscodec.convert(chosen, body)  # type: ignore[arg-type]
    except dscodec.ConversionError:
        body.pop("response_format", None)
        body.pop("text", None)
        return dscodec.convert(chosen, body)  # type: ignore[arg-type]


# -- adversarial output ----------------------------------------------------------------------------------------

_V4 = ("<｜DSML｜", "tool_calls", "invoke", "parameter")
_V41 = ("<｜DSML｜", " calls", " invoke", " parameter")


def _block(
    spelling: tuple[str, str, str, str],
    name: str,
    params: list[tuple[str, str, str]],
    *,
    opener: bool = True,
    close: bool = True,
) -> str:
    dsml, calls, invoke, parameter = spelling
    closing = "</" + dsml[1:]
    text = f"\n\n{dsml}{calls}>\n" if opener else ""
    text += f'{dsml}{invoke} name="{name}">\n'
    for key, flag, value in params:
        text += f'{dsml}{parameter} name="{key}" string="{flag}">{value}{closing}{parameter}>\n'
    text += f"{closing}{invoke}>\n"
    if close:
        text += f"{closing}{calls}>"
    return text


_PIECES = st.one_of(
    st.text(alphabet='ab <>/\n｜{}"\\[]:,▁é中😀\x00\r', max_size=10),
    st.sampled_from(
        [
            "</think>",
            "<think>",
            EOS,
            "<｜DSML｜",
            "</｜DSML｜",
            "<｜DSML｜tool_calls>",
            "</｜DSML｜tool_calls>",
            "<｜DSML｜ calls>",
            "</｜DSML｜ calls>",
            '<｜DSML｜invoke name="lookup">',
            '<｜DSML｜ invoke name="lookup">',
            "</｜DSML｜invoke>",
            '<｜DSML｜parameter name="q" string="true">',
            '<｜DSML｜parameter name="n" string="false">',
            '<｜DSML｜ parameter name="q" string="true">',
            "</｜DSML｜parameter>",
            "</｜DSML｜ parameter>",
            '<｜DSML｜invoke name="' + "n" * 300 + '">',
            '<｜DSML｜parameter name="' + "k" * 300 + '" string="true">',
            '<｜DSML｜parameter name="q" string="' + "t" * 200 + '">',
            '<｜DSML｜invoke name="lookup" extra="1" name="other">',
            "<｜DSML｜invoke>",
            "<｜DSML｜invoke name=lookup>",
            '<｜DSML｜invoke name="lookup"',
            "<｜" * 50,
            "<｜DSML｜" * 20,
            "[" * 200,
            "]" * 200,
            '{"a":' * 130 + "1" + "}" * 130,
            "\\u",
            "\\ud800",
            "\ud800",
            "\udfff",
            "\n\n",
            "END",
            "<｜begin▁of▁sentence｜>",
            "<｜User｜>",
            "<｜Assistant｜>",
            "<｜tool▁calls▁begin｜>",
        ]
    ),
    st.builds(
        _block,
        st.sampled_from([_V4, _V41]),
        st.sampled_from(["lookup", "other", "missing", "", 'a"b', "名"]),
        st.lists(
            st.tuples(
                st.sampled_from(["q", "n", "", "q", 'x"y']),
                st.sampled_from(["true", "false", "maybe", ""]),
                st.one_of(
                    st.sampled_from(
                        [
                            "1",
                            "-0",
                            "1e999",
                            "NaN",
                            "nul",
                            "[1,",
                            '{"a": [',
                            "[" * 140 + "]" * 140,
                            '"\\ud800"',
                            "",
                        ]
                    ),
                    st.text(alphabet='ab<>{}[]"\\,: 1', max_size=12),
                ),
            ),
            max_size=3,
        ),
        opener=st.booleans(),
        close=st.booleans(),
    ),
)
OUTPUTS = st.lists(_PIECES, max_size=6).map("".join)


def _split(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _ids(text: str) -> list[int]:
    return list(VOCAB.full.encode(text, add_special_tokens=False).ids)


def _processor(request: dscodec.ConversationRequest) -> dscodec.StreamProcessor:
    processor = dscodec.StreamProcessor(
        request,
        response_id="r1",
        model="M",
        created=1,
        tokenizer=encoder(request.model_version).vocabulary,
        tool_call_id_factory=lambda i: f"call_{i:02d}",
    )
    writer = processor._writer
    if hasattr(writer, "clock"):
        writer.clock = lambda: 2  # the Responses completed_at
    return processor


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_events(protocol: str, events: list[dscodec.WireEvent]) -> dict[str, Any]:
    """Every event is strict JSON and an SSE frame; the events accumulate into a response."""
    for event in events:
        text = event.to_json()
        json.loads(text, parse_constant=_no_constants)
        text.encode("utf-8")  # no lone surrogate on the wire
        assert event.sse().endswith("\n\n")
        assert isinstance(event.to_dict(), dict)
    response = dscodec.accumulate(protocol, events)  # type: ignore[arg-type]
    json.dumps(response, allow_nan=False).encode("utf-8")
    return response


def run(
    request: dscodec.ConversationRequest, pushes: list[Any], finish: str | None = "stop"
) -> tuple[list[dscodec.WireEvent], dict[str, Any], dscodec.ModelOutputError | None]:
    """Push everything (text chunks, or id groups with or without log probabilities) and finish."""
    processor = _processor(request)
    events: list[dscodec.WireEvent] = []
    error: dscodec.ModelOutputError | None = None
    try:
        events += processor.start(7, 1)
        for push in pushes:
            if processor.finished:
                break
            if isinstance(push, str):
                events += processor.push_text(push, 1)
            elif isinstance(push, tuple):
                events += processor.push_tokens(push[0], push[1])
            else:
                events += processor.push_tokens(push)
        events += processor.finish(finish)  # type: ignore[arg-type]
    except dscodec.ModelOutputError as exc:
        error = exc
        events += processor.fail(exc)
        assert processor.fail(exc) == []
        with pytest.raises(dscodec.StreamStateError):
            processor.push_text("more", 1)
    else:
        assert processor.finished
        with pytest.raises(dscodec.StreamStateError):
            processor.push_text("more", 1)
        with pytest.raises(dscodec.StreamStateError):
            processor.push_tokens([1])
        assert processor.finish("stop") == []
        assert processor.fail("late") == []
    return events, check_events(request.protocol, events), error


def _without_usage(protocol: str, response: dict[str, Any]) -> dict[str, Any]:
    """The response without what depends on the chunking: usage, and (chat) logprobs stay as they are."""
    return {k: v for k, v in response.items() if k != "usage"}


@given(request=requests(), text=OUTPUTS, cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_adversarial_output_in_any_split(
    request: dscodec.ConversationRequest, text: str, cuts: list[int]
) -> None:
    """Text in one chunk, in drawn chunks and one character at a time gives the same complete response."""
    _, whole, error = run(request, [text])
    assert error is None
    for pushes in (
        _split(text, cuts),
        list(text) if len(text) <= 400 else _split(text, list(range(0, 10_000, 3))),
    ):
        _, response, error = run(request, pushes)
        assert error is None
        assert _without_usage(request.protocol, response) == _without_usage(request.protocol, whole)


@given(request=requests(), text=OUTPUTS, cuts=st.lists(st.integers(0, 10_000), max_size=8))
def test_adversarial_output_as_token_ids(
    request: dscodec.ConversationRequest, text: str, cuts: list[int]
) -> None:
    """The same output as token ids (one at a time, and in groups) gives the response its text gives."""
    if "\ud800" in text or "\udfff" in text:
        text = text.replace("\ud800", "?").replace("\udfff", "?")
    ids = _ids(text)
    _, as_text, error = run(request, [text])
    assert error is None
    if request.parsing_options.stop_sequences and any(VOCAB.is_special(i) for i in ids):
        # Special tokens that arrive as ids are barriers no stop match crosses (behavior.md#stop-sequences);
        # spelled as text they are not: the two responses may differ, and each is checked by itself.
        ids = [i for i in ids if not VOCAB.is_special(i)]
        _, as_text, error = run(request, [VOCAB.full.decode(ids, skip_special_tokens=False)])
        assert error is None
    bounds = sorted({0, len(ids), *(c % (len(ids) + 1) for c in cuts)})
    for pushes in ([[i] for i in ids], [ids[a:b] for a, b in itertools.pairwise(bounds)]):
        _, response, error = run(request, pushes)
        assert error is None
        assert _without_usage(request.protocol, response) == _without_usage(request.protocol, as_text)


BAD_IDS = st.sampled_from(
    [
        -1,
        -(2**31),
        2**31,
        2**32 - 1,
        2**32,
        2**63,
        2**64,
        10**30,
        True,
        False,
        1.0,
        1.5,
        None,
        "7",
        b"7",
        [3],
        (3,),
        float("nan"),
        object(),
    ]
)
IDS = st.lists(
    st.integers(0, 140_000) | st.sampled_from([0, 1, 128_800, 128_815, 128_821, 129_279, 129_280]) | BAD_IDS,
    max_size=6,
)
LOGPROB = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [None, "x", True, -1.0, -1e308, []]
)
ENTRY = (
    LOGPROB
    | st.tuples(LOGPROB, st.lists(st.tuples(st.integers(0, 140_000) | BAD_IDS, LOGPROB), max_size=2))
    | st.sampled_from(
        [(), (1.0,), (1.0, 2.0, 3.0), "ab", {"x": 1}, (-1.0, None), (-1.0, [(1,)]), (-1.0, [None])]
    )
)
IDS_ARG = IDS | st.sampled_from(["abc", b"\x01", 5, None, {1: 2}, range(3), iter([1, 2])])


@st.composite
def pushes(draw: st.DrawFn) -> list[Any]:
    """Text chunks, id groups (invalid ids and containers too), id groups with log probability entries."""
    found: list[Any] = []
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["text", "ids", "logprobs"]))
        if kind == "text":
            found.append(draw(OUTPUTS))
        elif kind == "ids":
            found.append(draw(IDS_ARG))
        else:
            ids = draw(IDS)
            count = len(ids) + draw(st.sampled_from([0, 0, 0, 1, -1]))
            found.append((ids, [draw(ENTRY) for _ in range(max(0, count))]))
    return found


@given(request=requests(), items=pushes(), finish=st.sampled_from([None, "stop", "length", "content_filter"]))
def test_anything_pushed_gives_events_or_a_model_output_error(
    request: dscodec.ConversationRequest, items: list[Any], finish: str | None
) -> None:
    _, response, error = run(request, items, finish)
    if error is None:
        assert response.get("error") is None and response.get("type") != "error"
    else:
        assert error.status_code == 502
        assert response.get("error") or response.get("type") == "error"


@given(
    request=requests(),
    start=st.tuples(
        st.sampled_from([0, 1, -1, 2**63 - 1, 2**63, 2**64, True, 1.5, None, "3"]),
        st.sampled_from([0, 5, -1, 2**63, True, None]),
        st.sampled_from([None, "fp", 1, b"x"]),
    ),
    counts=st.lists(st.sampled_from([0, 1, 2**62, 2**63 - 1, -1, 2**63, True, 2.0, None, "1"]), max_size=4),
)
def test_start_and_counts(
    request: dscodec.ConversationRequest, start: tuple[Any, Any, Any], counts: list[Any]
) -> None:
    """Prompt usage and token counts out of range (or of the wrong kind) are a ModelOutputError."""
    processor = _processor(request)
    events: list[dscodec.WireEvent] = []
    try:
        events += processor.start(*start)
        for count in counts:
            events += processor.push_text("a", count)
        events += processor.finish("stop")
    except dscodec.ModelOutputError:
        events += processor.fail("the backend misbehaved")
    response = check_events(request.protocol, events)
    assert isinstance(response, dict)


def test_misuse_of_the_api() -> None:
    """The documented errors: a push after the end or a failure is a StreamStateError; ``start`` after output
    returns nothing; ``fail`` before ``start`` still opens the stream; an unknown finish reason or text that is
    no ``str`` is a ModelOutputError, after which ``fail`` ends the stream."""
    for protocol in PROTOCOLS:
        request = dscodec.convert(
            protocol,
            _body(
                protocol,
                thinking=False,
                tools="auto",
                json_mode=False,
                stops=["END"],  # type: ignore[arg-type]
                logprobs=False,
                model="DeepSeek-V4-Pro",
            ),
        )
        processor = _processor(request)
        events = processor.push_text("Hello END more", 3)
        if protocol == "responses":  # no stop sequences in Responses
            events += processor.finish("stop")
        assert processor.finished  # the stop sequence matched (or finish)
        assert processor.finish("stop") == []
        with pytest.raises(dscodec.StreamStateError):
            processor.start(1, 0)
        with pytest.raises(dscodec.StreamStateError):
            processor.push_tokens([1])
        check_events(protocol, events)

        processor = _processor(request)
        events = processor.push_text("He", 1)
        assert processor.start(1, 0) == []  # output came first: the response has started
        events += processor.fail(RuntimeError("engine down"))
        response = check_events(protocol, events)
        assert response.get("error") or response.get("type") == "error"
        with pytest.raises(dscodec.StreamStateError):
            processor.push_text("x", 1)
        with pytest.raises(dscodec.StreamStateError):
            processor.start(1, 0)

        for bad in ("bogus", "STOP", 1, ["stop"], b"stop"):
            processor = _processor(request)
            with pytest.raises(dscodec.ModelOutputError):
                processor.finish(bad)  # type: ignore[arg-type]
            check_events(protocol, processor.fail("bad finish"))
        for text in (b"bytes", None, 5, ["a"]):
            processor = _processor(request)
            events = processor.start(1, 0)
            with pytest.raises(dscodec.ModelOutputError):
                processor.push_text(text, 1)  # type: ignore[arg-type]
            response = check_events(protocol, events + processor.fail("bad text"))
            assert response.get("error") or response.get("type") == "error"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_long_adversarial_runs(protocol: str) -> None:
    """Long runs of partial markers, one character at a time, and many small parameters: no error, and the same
    response as in one chunk."""
    request = dscodec.convert(
        protocol,
        _body(
            protocol,
            thinking=True,
            tools="auto",
            json_mode=False,  # type: ignore[arg-type]
            stops=["<｜DSML｜x", "aaab"],
            logprobs=False,
            model="DeepSeek-V4-Pro",
        ),
    )
    params = [("q", "true", "v" * 50)] * 200 + [("n", "false", "[" * 130 + "]" * 130)]
    text = ("<｜DSML｜" * 300) + "a" * 2000 + "</think>" + "<｜" * 500 + _block(_V4, "lookup", params)
    _, whole, error = run(request, [text])
    assert error is None
    _, pieces, error = run(request, list(text))
    assert error is None
    assert _without_usage(protocol, pieces) == _without_usage(protocol, whole)


# -- accumulate on hostile event dicts -------------------------------------------------------------------------

_KEYS = [
    "type",
    "choices",
    "delta",
    "content",
    "index",
    "tool_calls",
    "function",
    "arguments",
    "output",
    "item",
    "output_index",
    "content_index",
    "response",
    "usage",
    "error",
    "message",
    "content_block",
    "partial_json",
    "text",
    "id",
    "name",
    "logprobs",
    "finish_reason",
    "stop_reason",
    "item_id",
    "part",
    "thinking",
]
_TYPES = [
    "response.created",
    "response.output_item.added",
    "response.output_text.delta",
    "response.completed",
    "response.function_call_arguments.delta",
    "message_start",
    "content_block_start",
    "content_block_delta",
    "message_delta",
    "message_stop",
    "text_delta",
    "input_json_delta",
    "thinking_delta",
    "tool_use",
    "function_call",
    "message",
    "error",
]
_WIRE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.sampled_from(_KEYS + _TYPES),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=max(20, settings.default.max_examples))
@given(
    protocol=st.sampled_from(PROTOCOLS),
    events=st.lists(st.dictionaries(st.sampled_from(_KEYS), _WIRE, max_size=5) | _WIRE, max_size=6),
)
def test_accumulate_hostile_event_dicts(protocol: str, events: list[Any]) -> None:
    """Event dicts parsed from some stream, of any shape: a response or a DscodecError, never another error."""
    try:
        response = dscodec.accumulate(protocol, events)  # type: ignore[arg-type]
    except dscodec.DscodecError as exc:
        assert 400 <= exc.status_code < 600
    else:
        assert isinstance(response, dict)


@pytest.mark.parametrize(
    "settings_",
    [
        {"response_id": None},
        {"response_id": 5},
        {"response_id": "\ud800"},
        {"model": b"m"},
        {"model": None},
        {"created": "1"},
        {"created": -1},
        {"created": 2**64},
        {"created": True},
        {"created": 1.5},
        {"signature": 5},
    ],
)
def test_bad_processor_settings_are_refused_up_front(settings_: dict[str, Any]) -> None:
    """Settings the events carry are checked when the processor is made, not when an event is written."""
    request = dscodec.convert(
        "chat_completions", {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "q"}]}
    )
    with pytest.raises(dscodec.StreamStateError):
        dscodec.StreamProcessor(request, **{"response_id": "r", "model": "m", **settings_})
