"""Golden stream cases, Chat Completions: recorded model outputs replayed in every recorded chunking.

Compared with the reference on the accumulated response, the concatenated deltas, the finish reason and the
usage, and event for event on the ``whole`` chunking. Where dscodec deviates on purpose the expectation is
adjusted here, each rule naming its deviation (docs/deviations.md):

* D5: reasoning tokens are counted for every kind of backend chunk, by re-encoding the emitted reasoning (the
  reference's own method when it has a tokenizer); the expected value is the recorded one of a chunking that
  had a tokenizer.
* D7: in JSON mode the content does not depend on the chunking; it equals the reference's single-chunk result.
* D8: arguments the reference writes as invalid JSON are valid JSON in dscodec.
* D8 (parameter tags): a tag is read by its attributes (any order, unknown ones ignored; no ``string`` flag:
  JSON if the value is JSON, else a string), so some malformed tags give other (valid) arguments than the
  reference's; D15: the end-of-sentence token ends the output. For both, the recorder also ran the reference
  on an output it reads the way dscodec reads the scenario's (``reads_as``: the well-formed tag, the output cut
  before the token), pushed in the same chunks; that recording is the expectation.
* D13: ``completion_tokens`` counts every token pushed, also those after a stop sequence within one token chunk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import dscodec
from tests.support.fixtures import read_json
from tests.support.streams import is_json, normalise, replay, scenario_protocols

PROTOCOL = "chat_completions"
CASES = scenario_protocols(PROTOCOL)


def _deltas(events: list[dict[str, Any]]) -> dict[str, Any]:
    reasoning, content, calls, fingerprints = [], [], {}, []
    for chunk in events:
        if chunk.get("system_fingerprint") not in fingerprints:
            fingerprints.append(chunk.get("system_fingerprint"))
        delta = chunk["choices"][0]["delta"]
        if isinstance(delta.get("reasoning_content"), str):
            reasoning.append(delta["reasoning_content"])
        if isinstance(delta.get("content"), str):
            content.append(delta["content"])
        for call in delta.get("tool_calls", ()):
            entry = calls.setdefault(
                call["index"], {"index": call["index"], "id": call.get("id"), "name": None, "arguments": ""}
            )
            entry["name"] = call["function"].get("name", entry["name"])
            entry["arguments"] += call["function"].get("arguments", "")
    return {
        "reasoning": "".join(reasoning),
        "content": "".join(content),
        "tool_calls": [calls[i] for i in sorted(calls)],
    }


def _merged(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chunks with adjacent deltas of the same field merged (text split points may differ; content may not)."""
    out: list[dict[str, Any]] = []
    for chunk in events:
        choice = chunk["choices"][0]
        delta = choice["delta"]
        prev = out[-1]["choices"][0] if out else None
        if (
            prev is not None
            and choice["finish_reason"] is None
            and prev["finish_reason"] is None
            and "role" not in delta
            and "role" not in prev["delta"]
        ):
            pd = prev["delta"]
            same_text = (
                set(pd) == set(delta)
                and "tool_calls" not in delta
                and all((pd[k] is None) == (delta[k] is None) for k in delta)
            )
            same_call = (
                "tool_calls" in delta
                and "tool_calls" in pd
                and "id" not in delta["tool_calls"][0]
                and "id" not in pd["tool_calls"][0]
                and pd["tool_calls"][0]["index"] == delta["tool_calls"][0]["index"]
            )
            if same_text or same_call:
                if same_text:
                    for k, v in delta.items():
                        if v is not None:
                            pd[k] += v
                else:
                    pd["tool_calls"][0]["function"]["arguments"] += delta["tool_calls"][0]["function"][
                        "arguments"
                    ]
                lp = choice["logprobs"]
                if lp:
                    merged = prev["logprobs"] or {}
                    for k, v in lp.items():
                        merged.setdefault(k, []).extend(v)
                    prev["logprobs"] = merged
                continue
        out.append(json.loads(json.dumps(chunk)))
    return out


def _reference_reasoning_tokens(recorded: dict[str, Any]) -> int | None:
    for name in ("whole_tok", "tokens"):
        usage = recorded["chunkings"].get(name, {}).get("usage") or {}
        if "completion_tokens_details" in usage:
            return int(usage["completion_tokens_details"]["reasoning_tokens"])
    return None


def _expectations(case: Path, scenario: dict[str, Any]) -> dict[str, Any]:
    """What dscodec must give for each chunking: the reference's recording, except where dscodec deviates on
    purpose and the recorder could show the intended result (``reads_as``: D8 for malformed parameter tags,
    D15 for the end-of-sentence token): then the reference's recording of the equivalent output, pushed in the
    same chunks (docs/golden-streams.md)."""
    reads_as = scenario.get("reads_as")
    if reads_as is None:
        return read_json(case / f"{PROTOCOL}.json")
    recorded = read_json(case / f"{PROTOCOL}.{reads_as['deviation'].lower()}.json")
    assert recorded["output"] == reads_as["output"], case.name
    return recorded


def _check_arguments(ours: str, theirs: str) -> None:
    if is_json(theirs):
        assert ours == theirs
    elif theirs.endswith("}"):  # D8: a complete invoke the reference wrote as invalid JSON is valid JSON here
        assert is_json(ours), ours
    else:  # an unfinished call: both are cut short; dscodec keeps what it wrote a valid JSON prefix
        assert ours.startswith("{") == theirs.startswith("{"), (ours, theirs)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden_chat_stream(case: Path) -> None:
    scenario = read_json(case / "scenario.json")
    recorded = _expectations(case, scenario)
    json_mode = scenario["parsing_options"]["chat_completions"]["parse_json_output"]
    want_reasoning_tokens = _reference_reasoning_tokens(recorded)
    whole = recorded["chunkings"]["whole"]
    for name, expected in recorded["chunkings"].items():
        run = replay(case, "chat_completions", name)
        assert run.request.parsing_options.model_dump() == scenario["parsing_options"]["chat_completions"]
        events = [e.to_dict() for e in run.events]
        ours = normalise(_deltas(events))
        theirs = normalise(expected["deltas"])
        label = f"{case.name}/{name}"
        if json_mode:  # D7
            theirs["content"] = whole["deltas"]["content"]
        assert ours["reasoning"] == theirs["reasoning"], label
        assert ours["content"] == theirs["content"], label
        assert [(c["index"], c["name"]) for c in ours["tool_calls"]] == [
            (c["index"], c["name"]) for c in theirs["tool_calls"]
        ], label
        for mine, ref in zip(ours["tool_calls"], theirs["tool_calls"]):
            _check_arguments(mine["arguments"], ref["arguments"])

        final = events[-1]
        assert final["choices"][0]["finish_reason"] == expected["finish"]["finish_reason"], label
        usage = dict(final["usage"])
        want_usage = dict(expected["usage"])
        if scenario["parsing_options"]["chat_completions"]["thinking_initial_stage"] is not None:
            # D5: always counted; the value the reference gives when it has a tokenizer.
            assert usage.pop("completion_tokens_details") == {"reasoning_tokens": want_reasoning_tokens}, (
                label
            )
            want_usage.pop("completion_tokens_details", None)
        # D13: every token the backend reported counts, also those after a stop sequence in the same chunk.
        want_usage["completion_tokens"] = run.pushed_tokens
        want_usage["total_tokens"] = want_usage["prompt_tokens"] + run.pushed_tokens
        assert usage == want_usage, label
        assert run.finished == expected["finished"], label

        if name == "whole" and not json_mode and all(is_json(c["arguments"]) for c in theirs["tool_calls"]):
            want_events = normalise(expected["events"])
            want_events[-1]["usage"] = final["usage"]
            assert _merged(normalise(events)) == _merged(want_events), label

        response = normalise(dscodec.accumulate("chat_completions", run.events, **_accumulator(scenario)))
        want = normalise(expected["response"])
        want["usage"] = final["usage"]
        message, want_message = response["choices"][0]["message"], want["choices"][0]["message"]
        if json_mode:  # D7, including the reference repeating a logprob entry on each piece of a split token
            want_message["content"] = whole["response"]["choices"][0]["message"]["content"]
            want["choices"][0]["logprobs"] = response["choices"][0]["logprobs"]
        for mine, ref in zip(message.get("tool_calls", []), want_message.get("tool_calls", [])):
            _check_arguments(mine["function"]["arguments"], ref["function"]["arguments"])
            mine["function"]["arguments"] = ref["function"]["arguments"]
        if response != want:
            assert json.dumps(response, ensure_ascii=False) == json.dumps(want, ensure_ascii=False), label


def _accumulator(scenario: dict[str, Any]) -> dict[str, Any]:
    acc = scenario["accumulator"]
    return {"response_id": acc["id"], "model": acc["model"], "created": acc["created"]}


def test_enough_stream_cases() -> None:
    versions = {read_json(p / "scenario.json")["version"] for p in CASES}
    assert len(CASES) >= 300 and versions == {"v4", "v4.1"}
