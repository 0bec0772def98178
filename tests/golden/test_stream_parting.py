"""Golden stream cases, every protocol: where the deltas of an output pushed in one chunk part.

The other golden stream tests compare events with adjacent deltas merged, since for most chunkings dscodec parts
them elsewhere on purpose (D8 reads a parameter tag whole; D18 holds only the undecided end of a push). An
output pushed whole, as one text chunk (``whole``, ``whole_tok``) or one chunk of ids (``x-ids-whole``), leaves
neither room: there the deltas must part exactly where the reference's do (a removed ``</think>`` in the answer
ends one, a special id of token input written as text is one, and in JSON mode each stretch's space and the
bracket that opens the value are one), but for the two documented cases:

* D8: a call whose arguments the reference wrote as invalid JSON (its arguments are not compared here);
* D18: the end of the output, which may still begin a marker (``</think>``, a block opener), a stop sequence or a
  newline run dropped before ``</think>``: the reference holds the whole push and sends it at the end as one
  delta, dscodec sends the text before that end at once and the end itself when the output ends.

Scenarios recorded on an equivalent output (``reads_as``) are left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.streams import Take, cases, chunkings, is_json, replay_all, scenario

PROTOCOLS = ("chat_completions", "responses", "messages")
WHOLE = ("whole", "whole_tok", "x-ids-whole")
CASES = [(protocol, case) for protocol in PROTOCOLS for case in cases(protocol)]
#: What an undecided end may begin (D18): the markers, in both DSML spellings, and newline runs.
MARKERS = ("</think>", "<｜DSML｜", "< ｜DSML｜")

Delta = tuple[str, str]


def deltas(protocol: str, events: list[dict[str, Any]]) -> list[Delta]:
    """The text and argument deltas of ``events`` in order, each as (channel, text); a call's channel names it."""
    out: list[Delta] = []
    for event in events:
        if protocol == "chat_completions":
            for choice in event.get("choices", ()):
                delta = choice.get("delta") or {}
                for key in ("reasoning_content", "content"):
                    if delta.get(key):
                        out.append((key, delta[key]))
                for call in delta.get("tool_calls") or ():
                    arguments = (call.get("function") or {}).get("arguments")
                    if arguments:
                        out.append((f"call {call['index']}", arguments))
        elif protocol == "responses":
            kind = event["type"]
            if kind.endswith(".delta"):
                out.append((f"{kind} {event.get('output_index')}", event["delta"]))
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            text = delta.get("text") or delta.get("thinking") or delta.get("partial_json")
            if text:
                out.append((f"{delta['type']} {event['index']}", text))
    return out


def _valid_calls(recorded: list[Delta]) -> bool:
    """Whether every call's arguments the reference wrote are valid JSON (else D8 changes them)."""
    calls: dict[str, list[str]] = {}
    for channel, text in recorded:
        if channel.startswith(("call", "response.function_call", "input_json")):
            calls.setdefault(channel, []).append(text)
    return all(is_json("".join(parts)) for parts in calls.values())


def _undecided(text: str, stops: list[str]) -> bool:
    """Whether ``text``, the end of the output, may still be a newline run dropped before a marker, the start of
    a marker after such a run, or the start of a stop sequence."""
    rest = text.lstrip("\n")
    return (
        rest == ""
        or any(marker.startswith(rest) for marker in MARKERS)
        or any(stop.startswith(text) and stop != text for stop in stops)
    )


def parting_explained(ours: list[Delta], theirs: list[Delta], stops: list[str]) -> bool:
    """D18: ``ours`` is ``theirs`` with the last delta of the output cut in two before an undecided end."""
    if len(ours) != len(theirs) + 1 or not theirs or ours[:-2] != theirs[:-1]:
        return False
    (channel_a, head), (channel_b, tail) = ours[-2:]
    channel, whole = theirs[-1]
    return channel_a == channel_b == channel and head + tail == whole and _undecided(tail, stops)


def _takes(protocol: str, case: Path) -> list[Take]:
    return replay_all(case, WHOLE)


@pytest.mark.parametrize(("protocol", "case"), CASES, ids=[f"{p}/{c.stem}" for p, c in CASES])
def test_deltas_part_where_the_reference_parts_them(protocol: str, case: Path) -> None:
    notes = scenario(case)
    settings = notes.get("settings") or {}
    if notes.get("reads_as") is not None:
        return
    stops = list(settings.get("stop") or ())
    for take in _takes(protocol, case):
        theirs = deltas(protocol, take.expected_events)
        if not _valid_calls(theirs):
            continue  # D8
        ours = deltas(protocol, take.events())
        assert ours == theirs or parting_explained(ours, theirs, stops), (take.label, theirs, ours)


def test_the_rule_is_not_empty() -> None:
    """The comparison above runs on many scenarios of every protocol, and the D18 rule explains only what it
    should."""
    compared = {protocol: 0 for protocol in PROTOCOLS}
    for protocol, case in CASES:
        notes = scenario(case)
        if notes.get("reads_as") is None:
            compared[protocol] += sum(name in WHOLE for name in chunkings(case))
    assert all(count >= 300 for count in compared.values()), compared
    assert parting_explained([("c", "a "), ("c", "<")], [("c", "a <")], [])
    assert parting_explained([("c", "a"), ("c", "\n\n")], [("c", "a\n\n")], [])
    assert parting_explained([("c", "a"), ("c", "\n\n<")], [("c", "a\n\n<")], [])
    assert parting_explained([("c", "Hi "), ("c", "EN")], [("c", "Hi EN")], ["END"])
    assert not parting_explained([("c", "a"), ("c", "b")], [("c", "ab")], [])  # nothing undecided about "b"
    assert not parting_explained([("c", "a"), ("c", "b")], [("c", "a"), ("c", "b")], [])
    assert not parting_explained([("r", "a "), ("c", "<")], [("c", "a <")], [])
