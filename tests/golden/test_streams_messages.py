"""Golden stream cases, Anthropic Messages: recorded model outputs replayed in every recorded chunking.

Compared with the reference on the accumulated message, the concatenated deltas (reasoning, text, tool input,
signature, the block list, the pings), the stop reason and stop sequence and the usage; and event for event
(after merging adjacent deltas of a block) on every chunking. The cases are transcripts
(``fixtures/streams/messages/``, one per scenario, one transcript per chunking), replayed with
``dscodec.testing.replay`` and compared with ``dscodec.testing.compare`` (tests/support/streams.py). Every
event and every message is validated strictly against the anthropic SDK's types.

Where dscodec deviates on purpose the expectation is adjusted here, each rule naming its deviation
(docs/deviations.md; D7, JSON mode, does not apply: Messages has no JSON output mode):

* D8: tool input the reference streams as invalid JSON is valid JSON in dscodec, so the accumulated ``input`` is
  the parsed object where the reference gives ``{}``.
* D10: ``tool_choice: {"type": "any"}`` requires a tool call: the request converts with ``starts_in_tool_calls``
  (the reference: auto). The recorded outputs start with a block opener, which that mode tolerates, so the
  streams are the same; with thinking enabled the request is a 400.
* D8 (parameter tags): a tag is read by its attributes (any order, unknown ones ignored; no ``string`` flag:
  JSON if the value is JSON, else a string), so some malformed tags give other (valid) arguments than the
  reference's; D15: the end-of-sentence token ends the output. For both, the recorder also ran the reference
  on an output it reads the way dscodec reads the scenario's (``reads_as``: the well-formed tag, the output cut
  before the token), pushed in the same chunks; that recording is the expectation.
* D13: ``output_tokens`` counts every token pushed, also those after a stop sequence within one token chunk.

* D22: an empty backend text chunk becomes an empty ``text_delta``/``thinking_delta`` in the reference; dscodec
  sends no empty deltas (the concatenated text is the same), so the comparison drops them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import pydantic
import pytest

import dscodec
from dscodec._json import loads
from dscodec.protocols._wire import WireEvent
from tests.support.fixtures import FIXTURES, read_json
from tests.support.streams import (
    Distinct,
    EventTypes,
    assert_same,
    cases,
    check_arguments,
    is_json,
    messages_delta,
    normalise,
    replay_all,
    scenario,
    takes,
)

PROTOCOL = "messages"
CASES = cases(PROTOCOL)
STREAM_EVENT = EventTypes(anthropic.types.RawMessageStreamEvent)
_DELTA_FIELD = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}


def _deltas(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The fixture's ``deltas`` summary of a Messages event list (docs/golden-streams.md)."""
    reasoning, content, signature = [], [], None
    calls: dict[int, dict[str, Any]] = {}
    blocks: dict[int, dict[str, Any]] = {}
    pings = 0
    for event in events:
        kind = event["type"]
        if kind == "content_block_start":
            block = event["content_block"]
            blocks[event["index"]] = {"index": event["index"], "type": block["type"], "stopped": False}
            if block["type"] == "tool_use":
                calls[event["index"]] = {
                    "index": event["index"],
                    "id": block["id"],
                    "name": block["name"],
                    "arguments": "",
                }
        elif kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "thinking_delta":
                reasoning.append(delta["thinking"])
            elif delta["type"] == "text_delta":
                content.append(delta["text"])
            elif delta["type"] == "input_json_delta":
                calls[event["index"]]["arguments"] += delta["partial_json"]
            elif delta["type"] == "signature_delta":
                signature = (signature or "") + delta["signature"]
        elif kind == "content_block_stop":
            blocks[event["index"]]["stopped"] = True
        elif kind == "ping":
            pings += 1
    return {
        "reasoning": "".join(reasoning),
        "content": "".join(content),
        "tool_calls": [calls[i] for i in sorted(calls)],
        "signature": signature,
        "blocks": [blocks[i] for i in sorted(blocks)],
        "pings": pings,
    }


def _merged(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events with adjacent deltas of one block and kind merged, and empty deltas dropped (split points and the
    reference's empty-chunk deltas may differ; the content may not)."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event["type"] == "content_block_delta" and event["delta"]["type"] in _DELTA_FIELD:
            field = _DELTA_FIELD[event["delta"]["type"]]
            if event["delta"][field] == "":
                continue
            prev = out[-1] if out else None
            if (
                prev is not None
                and prev["type"] == "content_block_delta"
                and prev["index"] == event["index"]
                and prev["delta"]["type"] == event["delta"]["type"]
            ):
                prev["delta"][field] += event["delta"][field]
                continue
        out.append(json.loads(json.dumps(event)))
    return out


def _expected_input(arguments: str) -> dict[str, Any]:
    """What the accumulated ``input`` must be for streamed ``arguments``: the object, or ``{}`` (behavior.md#accumulation)."""
    if not is_json(arguments):
        return {}
    value = loads(arguments)
    return value if isinstance(value, dict) else {}


def _recorded_options(label: str, notes: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    options = dict(notes["parsing_options"])
    if body.get("tool_choice", {}).get("type") == "any":
        # D10: `any` requires a tool call; the reference parses it as auto.
        assert not options["starts_in_tool_calls"], label
        options["starts_in_tool_calls"] = True
    return options


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_golden_messages_stream(case: Path) -> None:
    """Every recorded chunking, replayed with ``dscodec.testing.replay`` and checked against the reference's
    transcript (with ``reads_as``, its recording of the equivalent output: the transcript says so)."""
    notes = scenario(case)
    takes = replay_all(case)
    for take in takes:
        label, run = take.label, take.run
        assert run.request is not None, label
        assert run.request.parsing_options.model_dump() == _recorded_options(
            label, notes, take.recorded.request
        )
        events = normalise(take.events())
        assert [e.event for e in run.events] == [e["type"] for e in events], label  # SSE name = type
        assert [f.event for f in run.transcript.frames or ()] == [e["type"] for e in events], label
        expected_events = take.expected_events

        ours, theirs = _deltas(events), normalise(_deltas(expected_events))
        for key in ("reasoning", "content", "signature", "blocks", "pings"):
            assert ours[key] == theirs[key], (label, key)
        assert [(c["index"], c["id"], c["name"]) for c in ours["tool_calls"]] == [
            (c["index"], c["id"], c["name"]) for c in theirs["tool_calls"]
        ], label
        arguments = {c["index"]: c["arguments"] for c in ours["tool_calls"]}
        for ref in theirs["tool_calls"]:
            check_arguments(arguments[ref["index"]], ref["arguments"])

        delta = events[-2]
        assert delta["type"] == "message_delta" and events[-1] == {"type": "message_stop"}, label
        want_delta = messages_delta(expected_events)
        assert want_delta is not None, label
        finish = {"stop_reason": want_delta["delta"].get("stop_reason"),
                  "stop_sequence": want_delta["delta"].get("stop_sequence")}  # fmt: skip
        assert delta["delta"] == finish, label
        want_usage = dict(want_delta["usage"])
        # D13: every token the backend reported counts, also those after a stop sequence in the same chunk.
        want_usage["output_tokens"] = run.pushed_tokens
        assert_same(want_usage, delta["usage"], f"{label}: usage")
        assert run.finished == take.reference_finished, label
        assert take.pushes_agree(notes), f"{label}: the output ended at another push than the reference's"

        mine, want = _merged(events), _merged(normalise(expected_events))
        want[-2]["usage"] = delta["usage"]  # D13, checked above
        for ref in theirs["tool_calls"]:
            if not is_json(ref["arguments"]):  # D8, checked above: take the reference's text
                for event in mine:
                    if event["type"] == "content_block_delta" and event["index"] == ref["index"]:
                        event["delta"]["partial_json"] = ref["arguments"]
        assert_same(want, mine, f"{label}: events")

        assert run.transcript.accumulated is not None, label
        message = normalise(run.transcript.accumulated)
        want_message = normalise(take.expected_response)
        want_message["usage"] = delta["usage"]  # D13, checked above
        uses = [b for b in message["content"] if b["type"] == "tool_use"]
        want_uses = [b for b in want_message["content"] if b["type"] == "tool_use"]
        assert len(uses) == len(want_uses) == len(ours["tool_calls"]), label
        for block, ref, call, ref_call in zip(uses, want_uses, ours["tool_calls"], theirs["tool_calls"]):
            assert block["input"] == _expected_input(call["arguments"]), label
            if not is_json(ref_call["arguments"]):
                # D8: the reference's invalid JSON became {}; dscodec's valid JSON is the parsed object.
                assert ref["input"] == {}, label
                block["input"] = ref["input"]
        assert_same(want_message, message, f"{label}: message")

    distinct = Distinct()
    for take in takes:  # the same replays: the SDK's types take every event and message
        events = take.run.events
        _assert_sdk_valid(events, dscodec.accumulate("messages", events), take.label, distinct)


def _extra_fields(value: Any, path: str = "") -> list[str]:
    """Paths of fields the SDK model does not declare (its models accept unknown keys, so strict validation
    alone would not notice a misspelt optional field)."""
    found: list[str] = []
    if isinstance(value, pydantic.BaseModel):
        found += [f"{path}.{key}" for key in value.model_extra or {}]
        for key in type(value).model_fields:
            found += _extra_fields(getattr(value, key), f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _extra_fields(item, f"{path}[{i}]")
    return found


def _assert_sdk_valid(
    events: list[WireEvent], message: dict[str, Any], label: str, distinct: Distinct | None = None
) -> None:
    """Every event and the final message validate with the SDK's types, with no field the SDK lacks (the values
    ``distinct`` has seen were checked already)."""
    seen = distinct or Distinct()
    for event in events:
        data = event.to_dict()
        if not seen.new(data):
            continue
        if data["type"] == "ping":  # not in the SDK's event union: its stream reader skips pings by name
            assert data == {"type": "ping"} and event.event == "ping", label
            continue
        model = STREAM_EVENT.validate(data)
        # `service_tier` in message_delta usage is the reference's; Anthropic's own MessageDeltaUsage lacks it.
        allowed = {".usage.service_tier"} if data["type"] == "message_delta" else set()
        assert set(_extra_fields(model)) <= allowed, (label, data)
    if seen.new(message):
        parsed = anthropic.types.Message.model_validate(message, strict=True)
        assert _extra_fields(parsed) == [], label


def _lifecycle_facts() -> list[dict[str, Any]]:
    path = FIXTURES / "streams" / "_lifecycle.json"
    facts = read_json(path)["facts"] if path.is_file() else []
    return [f for f in facts if f["protocol"] == "messages"]


@pytest.mark.parametrize("fact", _lifecycle_facts(), ids=lambda f: f["name"])
def test_lifecycle_facts(fact: dict[str, Any]) -> None:
    """The behavior.md#stream-lifecycle lifecycle transcripts, step by step: same events from each call (empty deltas aside)."""
    request = dscodec.convert("messages", fact["request"])
    start = next(e for s in fact["steps"] for e in s.get("events") or () if e["type"] == "message_start")
    processor = dscodec.StreamProcessor(
        request, response_id=start["message"]["id"], model=start["message"]["model"], created=0
    )
    everything: list[WireEvent] = []
    for step in fact["steps"]:
        assert step.get("error") is None, "no Messages lifecycle fact raises"
        chunk = step.get("chunk") or {}
        if step["call"] == "finish":
            events = processor.finish()
        elif chunk["kind"] == "ready":
            events = processor.start(
                chunk["prompt_tokens"], chunk["prompt_cache_hit_tokens"], chunk["system_fingerprint"]
            )
        elif chunk["kind"] == "text":
            events = processor.push_text(chunk["text"], chunk["token_count"])
        elif chunk["kind"] == "tokens":
            events = processor.push_tokens(
                chunk["ids"], [(lp, [tuple(t) for t in top]) for lp, top in chunk["logprobs"]]
            )
        else:
            assert chunk["kind"] == "finish", step
            events = processor.finish(chunk["reason"])
        assert _merged([e.to_dict() for e in events]) == _merged(step["events"]), (fact["name"], step)
        assert processor.finished == step["finished"], (fact["name"], step)
        everything += events
    _assert_sdk_valid(everything, dscodec.accumulate("messages", everything), fact["name"])


def test_tool_choice_any_with_thinking_is_refused() -> None:
    """D10: `any` (like a named tool) demands a call, which thinking mode cannot promise: a 400 in Anthropic's
    envelope (D1), not the reference's silent `auto`."""
    found = [p for p in CASES if p.stem.endswith("msg-tool-choice-any")]
    assert found
    for case in found:
        body = dict(next(iter(takes(case).values())).request)
        body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
        with pytest.raises(dscodec.ConversionError) as caught:
            dscodec.convert("messages", body)
        assert caught.value.status_code == 400
        error = anthropic.types.ErrorResponse.model_validate(caught.value.body, strict=True)
        assert error.error.type == "invalid_request_error"


def test_enough_stream_cases() -> None:
    versions = {scenario(p)["version"] for p in CASES}
    assert len(CASES) >= 390 and versions == {"v4", "v4.1"}
    assert len(_lifecycle_facts()) >= 7
