"""The kit reads whatever a server under test or a hand-edited file gives it: the linter answers any stream or
body with findings, a recording keeps any answer, and the transcript reader gives a transcript or a
TranscriptError, never a Python error.

Inputs are recorded answers (fixtures/streams) with values anywhere in them replaced, removed or added, by values
of every JSON type (a ``type`` that is a list, an ``index`` that is an object, ...).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dscodec.testing import Finding, Transcript, TranscriptError, lint, loads_transcripts, replay
from dscodec.testing._sse import parse_sse
from dscodec.testing.live import Exchange, transcript_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
#: A few recorded transcripts of each protocol: reasoning, tool calls, log probabilities, failures, complete
#: bodies, stop sequences.
NAMES = [
    "v4-logprobs-tool-call",
    "v4-logprobs-think",
    "v4-finish-length-nothink",
    "v4-resptools-apply-patch-think",
    "v4-json-think-fenced",
    "v4-chatusage-non-stream",
    "v4-partial-dsml-tools",
]
FILES = [
    path
    for protocol in ("chat_completions", "responses", "messages")
    for name in NAMES
    if (path := FIXTURES / protocol / f"{name}.jsonl").exists()
]
TRANSCRIPTS: list[Transcript] = [
    t for path in FILES for t in loads_transcripts(path.read_text(encoding="utf-8"))
]

_KEYS = ["type", "index", "delta", "usage", "id", "choices", "item", "output_index", "content_index", "content",
         "sequence_number", "response", "message", "content_block", "output", "tool_calls", "arguments", "status",
         "finish_reason", "stop_reason", "kind", "meta", "logprobs", "ids", "reason", "body", "name"]  # fmt: skip
_NAMES = ["message_start", "content_block_delta", "response.output_text.delta", "tool_use", "function_call",
          "text", "thinking", "reasoning", "output_text", "input_json_delta", "text_delta", "stop"]  # fmt: skip
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(_NAMES)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=3),
    max_leaves=4,
)


def _mutate(data: st.DataObject, value: Any) -> Any:
    """``value`` with one place in it replaced, removed or added (picked by ``data``)."""
    if not isinstance(value, (dict, list)) or not value or not data.draw(st.booleans()):
        return data.draw(VALUES)
    at: Any = (
        data.draw(st.sampled_from(sorted(value)))
        if isinstance(value, dict)
        else data.draw(st.integers(0, len(value) - 1))
    )
    action = data.draw(st.sampled_from(["replace", "remove", "add", "deeper"]))
    if action == "replace":
        value[at] = data.draw(VALUES)
    elif action == "remove":
        del value[at]
    elif action == "add" and isinstance(value, dict):
        value[data.draw(st.sampled_from(_KEYS))] = data.draw(VALUES)
    elif action == "add":
        value.insert(at, data.draw(VALUES))
    else:
        value[at] = _mutate(data, value[at])
    return value


@given(st.data())
def test_the_linter_answers_any_stream_with_findings(data: st.DataObject) -> None:
    transcript = data.draw(st.sampled_from([t for t in TRANSCRIPTS if t.frames]))
    assert transcript.frames is not None
    events = [json.loads(frame.data) for frame in transcript.frames if frame.data != "[DONE]"]
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(events) - 1))
        events[at] = _mutate(data, events[at])
    text = "".join(f"data: {json.dumps(event)}\n\n" for event in events)
    request = transcript.request if data.draw(st.booleans()) else None
    sdk = data.draw(st.booleans())
    found = lint(transcript.protocol, text, request=request, sdk=sdk)
    assert all(isinstance(finding, Finding) for finding in found)
    as_dicts = [event for event in events if isinstance(event, dict)]
    assert all(isinstance(f, Finding) for f in lint(transcript.protocol, as_dicts, request=request, sdk=sdk))


@given(st.data())
def test_the_linter_answers_any_body_with_findings(data: st.DataObject) -> None:
    transcript = data.draw(st.sampled_from([t for t in TRANSCRIPTS if t.accumulated or t.response]))
    body = copy.deepcopy(transcript.accumulated or transcript.response)
    for _ in range(data.draw(st.integers(1, 4))):
        body = _mutate(data, body)
    found = lint(
        transcript.protocol, json.dumps(body), request=transcript.request, sdk=data.draw(st.booleans())
    )
    assert all(isinstance(finding, Finding) for finding in found)


@given(st.data())
def test_a_malformed_transcript_is_refused_with_a_transcript_error(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(FILES))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(lines) - 1))
        lines[at] = _mutate(data, lines[at])
    text = "\n".join(json.dumps(line) for line in lines)
    try:
        transcripts = loads_transcripts(text, source="mutated")
    except TranscriptError as exc:
        assert str(exc).startswith("mutated")
    else:
        assert all(isinstance(t, Transcript) for t in transcripts)


@given(st.data())
def test_any_answer_is_recorded_and_replays(data: st.DataObject) -> None:
    """What a server under test sends is kept as it came, whatever it is; the transcript replays."""
    transcript = data.draw(st.sampled_from(TRANSCRIPTS))
    assert transcript.frames is not None
    streamed = data.draw(st.booleans())
    if streamed:
        events: list[Any] = [json.loads(f.data) for f in transcript.frames if f.data != "[DONE]"]
        for _ in range(data.draw(st.integers(1, 3))):
            at = data.draw(st.integers(0, len(events) - 1))
            events[at] = _mutate(data, events[at])
        text = "".join(f"data: {json.dumps(event)}\n\n" for event in events)
        frames, rest = parse_sse(text)
        exchange = Exchange(
            "u", transcript.protocol, transcript.request, 200, "text/event-stream", text, frames, None, rest
        )
    else:
        body = _mutate(data, copy.deepcopy(transcript.accumulated))
        status = data.draw(st.sampled_from([200, 400, 500]))
        value = body if isinstance(body, dict) else {"value": body}
        exchange = Exchange(
            "u",
            transcript.protocol,
            transcript.request,
            status,
            "application/json",
            json.dumps(body),
            None,
            value,
        )
    recorded = transcript_of(exchange)
    assert recorded.frames == exchange.frames and recorded.response == exchange.response
    replay(recorded)


#: Values a dict may hold that JSON has none for: an integer of more digits than Python writes out, a set, an
#: object.
_NOT_JSON = [10**5000, {1, 2}, object()]


def test_the_linter_reports_dicts_that_json_cannot_hold() -> None:
    for transcript in TRANSCRIPTS:
        body = transcript.accumulated or transcript.response
        for bad in _NOT_JSON:
            if body:
                found = lint(transcript.protocol, {**body, "id": bad})
                assert [f.code for f in found] == ["GEN001"]
            if transcript.frames:
                events = [json.loads(f.data) for f in transcript.frames if f.data != "[DONE]"]
                events[0] = {**events[0], "model": bad}
                codes = [f.code for f in lint(transcript.protocol, events)]
                assert "GEN001" in codes


def test_a_body_that_is_not_json_is_reported_as_such() -> None:
    for text in ('{"id": ', '{"id": "x", "created": ' + "9" * 5000 + "}", "  {}x"):
        assert [f.code for f in lint("chat_completions", text)] == ["GEN001"]


def test_compare_shows_values_json_cannot_hold() -> None:
    from dscodec.testing import compare, format_differences

    text = format_differences(compare({"a": 10**5000, "b": {1, 2}}, {"a": 1, "b": 2}))
    assert "expected an integer of about 5001 digits, got 1" in text and "expected {1, 2}, got 2" in text


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


_DEEP_STREAMS = {
    "chat_completions": 'data: {"object":"chat.completion.chunk","choices":[],"x":DEEP}\n\ndata: [DONE]\n\n',
    "responses": 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"x":DEEP}\n\n',
    "messages": 'event: message_start\ndata: {"type":"message_start","x":DEEP}\n\n',
}


@pytest.mark.parametrize("protocol", sorted(_DEEP_STREAMS))
@pytest.mark.parametrize("levels", [900, 5_000])
def test_json_nested_past_what_python_reads_is_a_finding_not_a_crash(protocol: str, levels: int) -> None:
    findings = lint(protocol, _DEEP_STREAMS[protocol].replace("DEEP", _deep(levels)), sdk=True)  # type: ignore[arg-type]
    assert all(isinstance(f, Finding) for f in findings)
    if levels > 1_000:
        assert any(f.code == "GEN001" and "nested too deeply" in f.message for f in findings)
    body = lint(protocol, '{"id":"x","x":' + _deep(levels) + "}", sdk=True)  # type: ignore[arg-type]
    assert all(isinstance(f, Finding) for f in body)


def test_a_transcript_nested_past_what_python_reads_is_a_transcript_error() -> None:
    with pytest.raises(TranscriptError, match="nested too deeply"):
        loads_transcripts('{"a":' + _deep(10_000) + "}")


def test_the_kit_refuses_items_of_the_wrong_type_with_a_type_error() -> None:
    from dscodec.testing import compare
    from dscodec.testing._sse import format_sse

    chunk = {"object": "chat.completion.chunk"}
    for answer in ([chunk, -1], [-1], ["x"]):
        for merge in (False, True):
            with pytest.raises(TypeError, match="frames or event dicts, not"):
                compare(answer, [chunk], merge_deltas=merge)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="format_sse takes frames, not int"):
        format_sse([1, 2])  # type: ignore[list-item]


def test_data_past_python_recursion_or_holding_itself_is_a_value_error() -> None:
    from dscodec.testing import compare, merge_deltas, normalise

    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    loop: dict[str, Any] = {}
    loop["a"] = loop
    chunk = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "a"}}],
        "x": loop,
    }
    for call in (
        lambda: normalise({"x": deep}),
        lambda: normalise(loop),
        lambda: compare({"x": deep}, {"x": 1}),
        lambda: compare(loop, {"a": 1}, merge_deltas=True),
        lambda: merge_deltas([chunk, chunk]),
    ):
        with pytest.raises(ValueError, match="deeper than Python's recursion allows, or holds itself"):
            call()


def test_linting_many_tool_calls_is_linear() -> None:
    """Each new Chat tool call's id was compared with the id of every call before it: 12,000 calls took a quarter of a
    minute. Now the ids are kept in a set, and a reused id is still found (also one that is no str)."""
    count = 12_000
    ids: list[Any] = [f"call_{k}" for k in range(count)] + ["call_7", ["x"], ["x"]]
    calls = [
        {"index": k, "id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for k, call_id in enumerate(ids)
    ]
    chunks = [
        {"index": 0, "delta": {"tool_calls": calls}, "finish_reason": None},
        {"index": 0, "delta": {}, "finish_reason": "tool_calls"},
    ]
    text = "".join(
        "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                               "choices": [choice]}) + "\n\n"
        for choice in chunks
    ) + "data: [DONE]\n\n"  # fmt: skip
    reused = [f.message for f in lint("chat_completions", text, sdk=False) if f.code == "CHT005"]
    assert reused == [
        f"tool call {count} reuses the id 'call_7'",
        f"tool call {count + 2} reuses the id ['x']",
    ]
