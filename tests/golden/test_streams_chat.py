"""Golden stream cases, Chat Completions: recorded model outputs replayed in every recorded chunking.

Compared with the reference on the accumulated response, the concatenated deltas, the finish reason and the
usage, and event for event (adjacent deltas merged) on every chunking outside JSON mode. The cases are transcripts
(``fixtures/streams/chat_completions/``, one per scenario, one transcript per chunking), replayed with
``dscodec.testing.replay`` and compared with ``dscodec.testing.compare`` (tests/support/streams.py). Where dscodec deviates on purpose the expectation is
adjusted here, each rule naming its deviation (docs/deviations.md):

* D5: reasoning tokens are counted for every kind of backend chunk, by re-encoding the emitted reasoning (the
  reference's own method when it has a tokenizer); the expected value is the recorded one of a chunking that
  had a tokenizer.
* D7: in JSON mode the content does not depend on the chunking; it equals the reference's single-chunk result
  (for token input, the recorded ``x-ids-whole`` chunking where the scenario has one: special ids count there).
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

from tests.support.streams import (
    Take,
    assert_same,
    cases,
    chat_finish,
    chat_usage,
    check_arguments,
    is_json,
    normalise,
    replay_all,
    scenario,
    single_chunk,
)

PROTOCOL = "chat_completions"
CASES = cases(PROTOCOL)


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


def _reference_reasoning_tokens(takes: list[Take]) -> int | None:
    by_name = {t.name: t for t in takes}
    for name in ("whole_tok", "tokens"):
        if name in by_name:
            usage = chat_usage(by_name[name].expected_events) or {}
            if "completion_tokens_details" in usage:
                return int(usage["completion_tokens_details"]["reasoning_tokens"])
    return None


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_golden_chat_stream(case: Path) -> None:
    """Every recorded chunking, replayed with ``dscodec.testing.replay`` and checked against the reference's
    transcript (with ``reads_as``, its recording of the equivalent output: the transcript says so)."""
    notes = scenario(case)
    options = notes["parsing_options"]
    json_mode = options["parse_json_output"]
    takes = replay_all(case)
    want_reasoning_tokens = _reference_reasoning_tokens(takes)
    for take in takes:
        label, run = take.label, take.run
        whole = single_chunk(takes, take)  # D7
        assert run.request is not None and run.request.parsing_options.model_dump() == options, label
        events = take.events()
        expected_events = take.expected_events
        ours = normalise(_deltas(events))
        theirs = normalise(_deltas(expected_events))
        if json_mode:  # D7
            theirs["content"] = _deltas(whole.expected_events)["content"]
        assert ours["reasoning"] == theirs["reasoning"], label
        assert ours["content"] == theirs["content"], label
        assert [(c["index"], c["name"]) for c in ours["tool_calls"]] == [
            (c["index"], c["name"]) for c in theirs["tool_calls"]
        ], label
        for mine, ref in zip(ours["tool_calls"], theirs["tool_calls"]):
            check_arguments(mine["arguments"], ref["arguments"])

        final = events[-1]
        assert final["choices"][0]["finish_reason"] == chat_finish(expected_events)["finish_reason"], label
        usage = dict(final["usage"])
        want_usage = dict(chat_usage(expected_events) or {})
        if options["thinking_initial_stage"] is not None:
            # D5: always counted; the value the reference gives when it has a tokenizer.
            assert usage.pop("completion_tokens_details") == {"reasoning_tokens": want_reasoning_tokens}, (
                label
            )
            want_usage.pop("completion_tokens_details", None)
        # D13: every token the backend reported counts, also those after a stop sequence in the same chunk.
        want_usage["completion_tokens"] = run.pushed_tokens
        want_usage["total_tokens"] = want_usage["prompt_tokens"] + run.pushed_tokens
        assert_same(want_usage, usage, f"{label}: usage")
        assert run.finished == take.reference_finished, label
        assert take.pushes_agree(notes), f"{label}: the output ended at another push than the reference's"

        if not json_mode and all(is_json(c["arguments"]) for c in theirs["tool_calls"]):
            want_events = normalise(expected_events)
            want_events[-1]["usage"] = final["usage"]
            assert_same(_merged(want_events), _merged(normalise(events)), f"{label}: events")

        answer = run.transcript
        response = normalise(answer.accumulated if answer.accumulated is not None else answer.response)
        want = normalise(take.expected_response)
        want["usage"] = final["usage"]
        message, want_message = response["choices"][0]["message"], want["choices"][0]["message"]
        if json_mode:  # D7, including the reference repeating a logprob entry on each piece of a split token
            want_message["content"] = whole.expected_response["choices"][0]["message"]["content"]
            want["choices"][0]["logprobs"] = response["choices"][0]["logprobs"]
        for mine, ref in zip(message.get("tool_calls", []), want_message.get("tool_calls", [])):
            check_arguments(mine["function"]["arguments"], ref["function"]["arguments"])
            mine["function"]["arguments"] = ref["function"]["arguments"]
        assert_same(want, response, f"{label}: response")
        if response != want:
            assert json.dumps(response, ensure_ascii=False) == json.dumps(want, ensure_ascii=False), label


def test_enough_stream_cases() -> None:
    versions = {scenario(p)["version"] for p in CASES}
    assert len(CASES) >= 300 and versions == {"v4", "v4.1"}
