"""The kit on itself, driven by its own strategies: whatever :func:`dscodec.testing.strategies.scenarios` draws,
the answer dscodec gives survives the whole record → save → load → replay → compare round, also as one of
several transcripts of a file.

Example counts come from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dscodec.testing import (
    Transcript,
    compare,
    dumps_transcript,
    dumps_transcripts,
    format_differences,
    lint,
    loads_transcript,
    loads_transcripts,
    replay,
    verify,
)
from dscodec.testing.strategies import Scenario, scenarios


def _recorded(scenario: Scenario, name: str = "") -> Transcript:
    sent = Transcript(scenario.protocol, scenario.body, scenario.backend, name=name)  # type: ignore[arg-type]
    return replay(sent).transcript


@given(scenarios(malformed=True))
def test_a_recorded_answer_reads_back_and_verifies(scenario: Scenario) -> None:
    recorded = _recorded(scenario, "drawn")
    again = loads_transcript(dumps_transcript(recorded))
    assert again == recorded
    found = verify(again)
    assert found == [], format_differences(found)
    findings = lint(again.protocol, again)
    if scenario.output.calls is None:  # broken markup on purpose: see test_strategies.py
        findings = [finding for finding in findings if finding.code not in ("GEN003", "GEN005")]
    assert findings == []


@given(st.lists(scenarios(), min_size=2, max_size=2))
def test_several_transcripts_in_one_file_keep_their_order_and_answers(drawn: list[Scenario]) -> None:
    recorded = [_recorded(scenario, f"take-{k}") for k, scenario in enumerate(drawn)]
    again = loads_transcripts(dumps_transcripts(recorded))
    assert [t.name for t in again] == [t.name for t in recorded]
    for before, after in zip(recorded, again):
        assert after == before
        assert compare(before, replay(after).transcript) == []


@given(scenarios(tools=True, json_mode=True))
def test_json_mode_scenarios_with_tools_give_the_drawn_answer(scenario: Scenario) -> None:
    """JSON mode and tools drawn together: the answer is the drawn JSON value, or the drawn calls."""
    assert scenario.request.parsing_options.parse_json_output
    recorded = _recorded(scenario)
    assert verify(recorded) == []
    assert lint(recorded.protocol, recorded) == []
    answer = recorded.accumulated if recorded.accumulated is not None else recorded.response
    assert answer is not None
    if scenario.protocol == "chat_completions":
        message = answer["choices"][0]["message"]
        calls = message.get("tool_calls") or []
    else:
        calls = [item for item in answer["output"] if item["type"] == "function_call"]
    assert len(calls) == len(scenario.output.calls or ())
