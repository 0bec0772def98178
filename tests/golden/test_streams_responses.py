"""Golden stream cases, OpenAI Responses: recorded model outputs replayed in every recorded chunking.

Compared with the reference on the accumulated response, the concatenated deltas (reasoning, answer text, calls,
output items with their phases and statuses, logprobs), the finish status and the usage, and event for event
(adjacent deltas merged) on every chunking (in JSON mode: on ``whole``). The cases are transcripts
(``fixtures/streams/responses/``, one per scenario, one transcript per chunking), replayed with
``dscodec.testing.replay`` and compared with ``dscodec.testing.compare`` (tests/support/streams.py). Where
dscodec deviates on purpose the expectation is adjusted here, each rule naming its deviation
(docs/deviations.md):

* D3: usage has ``input_tokens_details.cache_write_tokens`` (0).
* D5: reasoning tokens are counted for every kind of backend chunk; the expected value is the recorded one of a
  chunking that had a tokenizer (the reference's own count), 0 without a thinking stage.
* D6: a message item keeps the phase it was announced with (the reference's ``output_item.added`` phase) in
  ``output_item.done`` and in the final output.
* D7: in JSON mode the answer text does not depend on the chunking; it equals the reference's single-chunk result
  (for token input, the recorded ``x-ids-whole`` chunking where the scenario has one: special ids count there).
* D8: arguments the reference writes as invalid JSON are valid JSON in dscodec.
* D8 (parameter tags): a tag is read by its attributes (any order, unknown ones ignored; no ``string`` flag:
  JSON if the value is JSON, else a string), so some malformed tags give other (valid) arguments than the
  reference's; D15: the end-of-sentence token ends the output. For both, the recorder also ran the reference
  on an output it reads the way dscodec reads the scenario's (``reads_as``: the well-formed tag, the output cut
  before the token), pushed in the same chunks; that recording is the expectation.
* D13: ``output_tokens`` counts every token pushed.

* D22: the reference sends an empty ``output_text.delta`` for an empty backend text chunk; dscodec sends no
  empty deltas (they carry nothing), so the event comparison drops them.

Every event dscodec writes, and every complete response, is also validated strictly against the openai SDK's
types.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Final

import orjson
import pytest
from openai.types.responses import Response, ResponseStreamEvent

import dscodec
from tests.support.streams import (
    IDS_WHOLE,
    Distinct,
    EventTypes,
    Take,
    assert_same,
    cases,
    check_arguments,
    is_json,
    normalise,
    replay_all,
    responses_final,
    scenario,
    single_chunk,
)

PROTOCOL: Final = "responses"
CASES = cases(PROTOCOL)
STREAM_EVENT = EventTypes(ResponseStreamEvent)

_DELTAS = {
    "response.output_text.delta",
    "response.reasoning_text.delta",
    "response.function_call_arguments.delta",
    "response.custom_tool_call_input.delta",
}
_FINAL = ("response.completed", "response.incomplete")


def _wire(events: list[Any]) -> list[dict[str, Any]]:
    """Events as a client parses them off the wire (non-finite logprobs become null, as in the fixtures)."""
    return [json.loads(e.to_json()) for e in events]


def _deltas(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The fixture's ``deltas`` summary of a stream (docs/golden-streams.md)."""
    reasoning: list[str] = []
    content: list[str] = []
    logprobs: list[Any] = []
    items: dict[int, dict[str, Any]] = {}
    calls: dict[str, dict[str, Any]] = {}
    for ev in events:
        kind = ev["type"]
        if kind == "response.reasoning_text.delta":
            reasoning.append(ev["delta"])
        elif kind == "response.output_text.delta":
            content.append(ev["delta"])
            logprobs.extend(ev["logprobs"])
        elif kind == "response.output_item.added":
            item = ev["item"]
            summary: dict[str, Any] = {
                "output_index": ev["output_index"],
                "type": item["type"],
                "id": item["id"],
            }
            if item["type"] == "message":
                summary["added_phase"] = item["phase"]
            items[ev["output_index"]] = summary
            if item["type"] in ("function_call", "custom_tool_call"):
                call = {"output_index": ev["output_index"], "type": item["type"], "call_id": item["call_id"]}
                call["name"] = item["name"]
                if "namespace" in item:
                    call["namespace"] = item["namespace"]
                call["arguments" if item["type"] == "function_call" else "input"] = ""
                calls[item["id"]] = call
        elif kind == "response.function_call_arguments.delta":
            calls[ev["item_id"]]["arguments"] += ev["delta"]
        elif kind == "response.custom_tool_call_input.delta":
            calls[ev["item_id"]]["input"] += ev["delta"]
        elif kind == "response.output_item.done":
            item = ev["item"]
            summary = items[ev["output_index"]]
            summary["done_status"] = item["status"]
            if item["type"] == "message":
                summary["done_phase"] = item["phase"]
    out: dict[str, Any] = {
        "reasoning": "".join(reasoning),
        "content": "".join(content),
        "tool_calls": list(calls.values()),
        "items": [items[k] for k in sorted(items)],
    }
    if logprobs:
        out["logprobs"] = logprobs
    return out


def _merged(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events with adjacent deltas of one item merged, empty deltas dropped, sequence numbers renumbered."""
    out: list[dict[str, Any]] = []
    for event in events:
        kind = event["type"]
        if kind in _DELTAS:
            if event["delta"] == "" and not event.get("logprobs"):
                continue  # the reference's empty-chunk deltas (see the module docstring)
            prev = out[-1] if out else None
            if prev is not None and prev["type"] == kind and prev["item_id"] == event["item_id"]:
                prev["delta"] += event["delta"]
                if "logprobs" in event:
                    prev["logprobs"] = prev["logprobs"] + event["logprobs"]
                continue
        out.append(copy.deepcopy(event))
    for seq, event in enumerate(out):
        event["sequence_number"] = seq
    return out


def _reference_reasoning_tokens(takes: list[Take], options: dict[str, Any]) -> int:
    if options["thinking_initial_stage"] is None:
        return 0
    by_name = {t.name: t for t in takes}
    for name in ("whole_tok", "tokens"):
        final = responses_final(by_name[name].expected_events) if name in by_name else None
        if final and final.get("usage"):
            return int(final["usage"]["output_tokens_details"]["reasoning_tokens"])
    raise AssertionError("no chunking with a tokenizer recorded")


def _want_usage(
    recorded_usage: dict[str, Any], *, reasoning_tokens: int, pushed_tokens: int
) -> dict[str, Any]:
    usage = copy.deepcopy(recorded_usage)
    usage["input_tokens_details"]["cache_write_tokens"] = 0  # D3
    usage["output_tokens_details"]["reasoning_tokens"] = reasoning_tokens  # D5
    usage["output_tokens"] = pushed_tokens  # D13
    usage["total_tokens"] = usage["input_tokens"] + pushed_tokens
    return usage


def _d6_output(output: list[dict[str, Any]], added_phases: dict[str, Any]) -> None:
    """D6: every message in ``output`` has the phase its ``output_item.added`` announced."""
    for item in output:
        if item["type"] == "message":
            item["phase"] = added_phases[item["id"]]


def _arguments_agree(tool_calls: list[dict[str, Any]]) -> bool:
    return all(is_json(c["arguments"]) for c in tool_calls if c["type"] == "function_call")


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_golden_responses_stream(case: Path) -> None:
    """Every recorded chunking, replayed with ``dscodec.testing.replay`` and checked against the reference's
    transcript (with ``reads_as``, its recording of the equivalent output: the transcript says so)."""
    notes = scenario(case)
    options = notes["parsing_options"]
    json_mode = options["parse_json_output"]
    takes = replay_all(case)
    reasoning_tokens = _reference_reasoning_tokens(takes, options)
    for take in takes:
        label, run, name = take.label, take.run, take.name
        whole = single_chunk(takes, take)  # D7
        assert run.request is not None and run.request.parsing_options.model_dump() == options, label
        events = normalise(_wire(run.events))
        assert [e["sequence_number"] for e in events] == list(range(len(events))), label
        assert all(e["type"] == w.event for e, w in zip(events, run.events)), label  # SSE name = type
        assert [f.event for f in run.transcript.frames or ()] == [e["type"] for e in events], label
        expected_events = take.expected_events

        ours, theirs = _deltas(events), _deltas(normalise(expected_events))
        if json_mode:  # D7
            theirs["content"] = _deltas(whole.expected_events)["content"]
            theirs.pop("logprobs", None)
            ours.pop("logprobs", None)
        added_phases = {i["id"]: i["added_phase"] for i in theirs["items"] if i["type"] == "message"}
        for item in theirs["items"]:
            if item["type"] == "message":
                item["done_phase"] = item["added_phase"]  # D6
        assert ours["reasoning"] == theirs["reasoning"], label
        assert ours["content"] == theirs["content"], label
        assert_same({"items": theirs["items"]}, {"items": ours["items"]}, f"{label}: items")
        assert ours.get("logprobs") == theirs.get("logprobs"), label
        strip = ("arguments",)
        assert [{k: v for k, v in c.items() if k not in strip} for c in ours["tool_calls"]] == [
            {k: v for k, v in c.items() if k not in strip} for c in theirs["tool_calls"]
        ], label
        for mine, ref in zip(ours["tool_calls"], theirs["tool_calls"]):
            if mine["type"] == "function_call":
                check_arguments(mine["arguments"], ref["arguments"])

        final = events[-1]
        assert final["type"] in _FINAL, label
        status = {
            "status": final["response"]["status"],
            "incomplete_details": final["response"]["incomplete_details"],
        }
        want_final = responses_final(expected_events)
        assert want_final is not None, label
        assert status == {k: want_final[k] for k in ("status", "incomplete_details")}, label
        usage = _want_usage(
            want_final["usage"], reasoning_tokens=reasoning_tokens, pushed_tokens=run.pushed_tokens
        )
        assert_same(usage, final["response"]["usage"], f"{label}: usage")
        assert run.finished == take.reference_finished, label
        assert take.pushes_agree(notes), f"{label}: the output ended at another push than the reference's"

        # D7: in JSON mode only the single-chunk run is chunking-free in the reference too.
        compare_events = name in ("whole", IDS_WHOLE) or not json_mode
        if compare_events and _arguments_agree(theirs["tool_calls"]):
            want_events = normalise(expected_events)
            for event in want_events:
                if event["type"] == "response.output_item.done" and event["item"]["type"] == "message":
                    event["item"]["phase"] = added_phases[event["item"]["id"]]  # D6
                if event["type"] in _FINAL:
                    _d6_output(event["response"]["output"], added_phases)
                    event["response"]["usage"] = usage
            mine_merged, want_merged = _merged(events), _merged(want_events)
            assert_same(want_merged, mine_merged, f"{label}: events")
            assert json.dumps(mine_merged) == json.dumps(want_merged), f"{label}: key order"

        assert run.transcript.accumulated is not None, label
        response = normalise(json.loads(orjson.dumps(run.transcript.accumulated)))
        assert response == final["response"], label  # the accumulated response is the streamed final one
        want = normalise(take.expected_response)
        want["usage"] = usage
        _d6_output(want["output"], added_phases)
        whole_output = {item["id"]: item for item in whole.expected_response["output"]}
        for mine, ref in zip(response["output"], want["output"]):
            if mine["type"] == "function_call" and ref["type"] == "function_call":
                check_arguments(mine["arguments"], ref["arguments"])
                mine["arguments"] = ref["arguments"]
            if json_mode and mine["type"] == "message":  # D7, also the logprob entries of split tokens
                mine["content"][0]["logprobs"] = ref["content"][0]["logprobs"]
                ref["content"][0]["text"] = whole_output[ref["id"]]["content"][0]["text"]
        assert_same(want, response, f"{label}: response")
        if response != want:
            assert json.dumps(response, ensure_ascii=False) == json.dumps(want, ensure_ascii=False), label
    _validate_with_the_sdk(takes)  # the same replays: the SDK's types take every event and response


def _validate_with_the_sdk(takes: list[Take]) -> None:
    """Strict validation with the official SDK types, for every event and response of every chunking (each
    distinct one once)."""
    distinct = Distinct()
    for take in takes:
        run = take.run
        for event in run.events:
            data = event.to_dict()
            if distinct.new(data):
                STREAM_EVENT.validate(data)
        response = dscodec.accumulate(PROTOCOL, run.events)
        if distinct.new(response):
            Response.model_validate(response, strict=True)
            Response.model_validate(json.loads(orjson.dumps(response)), strict=True)


def test_enough_stream_cases() -> None:
    versions = {scenario(p)["version"] for p in CASES}
    assert len(CASES) >= 300 and versions == {"v4", "v4.1"}
    assert any("resptools-apply-patch" in p.stem for p in CASES)
