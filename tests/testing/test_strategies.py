"""The hypothesis strategies, and the properties they exist for: whatever a DeepSeek model writes, however the
backend cuts it, dscodec's answer lints clean and does not depend on the cut.

Example counts come from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

import functools
import json
import operator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import dscodec
from dscodec.testing import Finish, Text, Tokens, Transcript, Usage, compare, lint, replay
from dscodec.testing.strategies import (
    MARKUP_STOPS,
    ModelOutput,
    Scenario,
    backend_outputs,
    model_outputs,
    request_bodies,
    scenarios,
    text_chunkings,
    token_chunkings,
)
from dscodec.vocab import Vocabulary

VOCAB = Vocabulary.load(None)
PROTOCOLS = st.sampled_from(["chat_completions", "responses", "messages"])


@given(st.data(), PROTOCOLS)
def test_request_bodies_convert(data: st.DataObject, protocol: str) -> None:
    body = data.draw(request_bodies(protocol))
    request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
    assert request.stream == body["stream"]


@given(scenarios(malformed=True))
def test_any_output_in_any_chunking_lints_clean(scenario: Scenario) -> None:
    answer = replay(Transcript(scenario.protocol, scenario.body, scenario.backend)).transcript  # type: ignore[arg-type]
    findings = lint(scenario.protocol, answer)  # type: ignore[arg-type]
    if scenario.output.calls is None:
        # Broken markup on purpose: what the model wrote outside a well-formed block is answer text, markup-like
        # or not, which GEN003 (markup in text) reports, and a call cut short has arguments that are no JSON
        # yet, which GEN005 reports. Every other rule still holds.
        findings = [finding for finding in findings if finding.code not in ("GEN003", "GEN005")]
    assert findings == [], [str(finding) for finding in findings]


@given(scenarios(stream=False))
def test_the_answer_does_not_depend_on_the_chunking(scenario: Scenario) -> None:
    count = len(VOCAB.full.encode(scenario.output.text, add_special_tokens=False).ids)
    finish = scenario.backend[-1]
    whole = Transcript(
        scenario.protocol, scenario.body, [scenario.backend[0], Text(scenario.output.text, count), finish]
    )  # type: ignore[arg-type]
    chunked = Transcript(scenario.protocol, scenario.body, scenario.backend)  # type: ignore[arg-type]
    # Usage counts what was pushed, and a stop sequence may end the output inside a chunk (deviation D13).
    ignore = ["usage"] if scenario.output.stop else []
    assert compare(replay(whole).transcript, replay(chunked).transcript, ignore=ignore) == []


@given(scenarios(stream=False, stops=MARKUP_STOPS))
def test_stops_made_of_markup_give_the_same_answer_in_any_chunking(scenario: Scenario) -> None:
    """Stop sequences that overlap ``</think>``, DSML tags and the newline rules: the answer still does not
    depend on the chunking, and no markup leaks where a stop cut a tag short. The whole output goes as the same
    kind of chunks (a stop can match a special token's spelling in text, never its id)."""
    merged: list[Any] = []
    for item in scenario.backend[1:-1]:
        last = merged[-1] if merged else None
        if isinstance(item, Text) and isinstance(last, Text):
            merged[-1] = Text(last.text + item.text, last.token_count + item.token_count)
        elif isinstance(item, Tokens) and isinstance(last, Tokens):
            merged[-1] = Tokens(last.ids + item.ids)
        else:
            merged.append(item)
    whole = Transcript(scenario.protocol, scenario.body, [scenario.backend[0], *merged, scenario.backend[-1]])  # type: ignore[arg-type]
    chunked = replay(Transcript(scenario.protocol, scenario.body, scenario.backend)).transcript  # type: ignore[arg-type]
    assert compare(replay(whole).transcript, chunked, ignore=["usage"]) == []
    findings = lint(scenario.protocol, chunked)  # type: ignore[arg-type]
    # The model may write a stop that is a piece of markup into its answer, where it is answer text unless the
    # stop matches it (a special id is no text to match: GEN003); broken blocks as in the test above.
    exempt = {"GEN003"} if scenario.output.stop is not None else set()
    if scenario.output.calls is None:
        exempt |= {"GEN003", "GEN005"}
    findings = [finding for finding in findings if finding.code not in exempt]
    assert findings == [], [str(finding) for finding in findings]


def test_markup_stops_reach_the_bodies() -> None:
    seen: set[str] = set()

    @settings(max_examples=100, database=None)
    @given(request_bodies("messages", stops=MARKUP_STOPS))
    def draw(body: dict[str, Any]) -> None:
        assert set(body.get("stop_sequences", ())) <= set(MARKUP_STOPS)
        seen.update(body.get("stop_sequences", ()))

    draw()
    assert len(seen) > 5
    assert "<｜end▁of▁sentence｜>" not in MARKUP_STOPS  # it never takes part in a stop (D15)


def _calls(protocol: str, response: dict[str, Any]) -> list[tuple[str, Any]]:
    if protocol == "chat_completions":
        calls = response["choices"][0]["message"].get("tool_calls") or []
        return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]
    if protocol == "responses":
        items = [item for item in response["output"] if item["type"] == "function_call"]
        return [(item["name"], json.loads(item["arguments"])) for item in items]
    return [(block["name"], block["input"]) for block in response["content"] if block["type"] == "tool_use"]


@given(st.data(), PROTOCOLS)
def test_well_formed_blocks_give_exactly_their_calls(data: st.DataObject, protocol: str) -> None:
    body = data.draw(request_bodies(protocol, stream=False, tools=True))
    request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
    output: ModelOutput = data.draw(model_outputs(request))
    backend = data.draw(backend_outputs(output.text, finish=st.just("stop")))
    response = replay(Transcript(protocol, body, backend)).transcript.response  # type: ignore[arg-type]
    assert response is not None
    if output.calls is not None and output.stop is None:
        assert _calls(protocol, response) == list(output.calls)


@given(st.data())
def test_chunkings_put_the_output_back_together(data: st.DataObject) -> None:
    output = data.draw(model_outputs(malformed=True))
    assert "".join(data.draw(text_chunkings(output.text))) == output.text
    ids = VOCAB.full.encode(output.text, add_special_tokens=False).ids
    assert functools.reduce(operator.iadd, data.draw(token_chunkings(ids, vocabulary=VOCAB)), []) == ids
    items = data.draw(backend_outputs(output.text))
    assert isinstance(items[0], Usage) and isinstance(items[-1], Finish)
    middle = items[1:-1]
    assert sum(item.token_count for item in middle if isinstance(item, Text)) + sum(
        len(item.ids) for item in middle if isinstance(item, Tokens)
    ) == len(ids)


def test_the_version_spelling() -> None:
    from hypothesis import Phase, find, settings

    from dscodec.testing.strategies import dsml_blocks

    # Any block will do: the first one generated, not shrunk (shrinking a block takes seconds).
    first = settings(database=None, phases=[Phase.generate])
    v4, _ = find(dsml_blocks("v4"), lambda block: True, settings=first)
    v41, _ = find(dsml_blocks("v4.1"), lambda block: True, settings=first)
    assert "<｜DSML｜tool_calls>" in v4 and "<｜DSML｜invoke" in v4
    assert "<｜DSML｜ calls>" in v41 and "<｜DSML｜ invoke" in v41
