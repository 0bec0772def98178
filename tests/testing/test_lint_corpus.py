"""The linter against the corpus of broken streams (tests/testing/broken, written by make_corpus.py): every file
is flagged with exactly the code its name starts with, and every code has a file for each of its protocols."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dscodec.testing import RULES, lint, sdk_available

BROKEN = Path(__file__).resolve().parent / "broken"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
CASES = sorted(BROKEN.glob("*/*.sse"))


def _request(protocol: str) -> dict[str, object]:
    return json.loads((BROKEN / protocol / "request.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_broken_stream_is_flagged_with_its_code_only(path: Path) -> None:
    code = path.name[:6]
    protocol = path.parent.name
    if code == "GEN006" and not sdk_available(protocol):
        pytest.skip("the official SDK is not installed")
    findings = lint(protocol, path.read_bytes(), request=_request(protocol))  # type: ignore[arg-type]
    assert findings, f"{path.name}: nothing found"
    assert {finding.code for finding in findings} == {code}, [str(finding) for finding in findings]


def test_every_code_has_a_broken_stream_for_each_of_its_protocols() -> None:
    have = {(path.parent.name, path.name[:6]) for path in CASES}
    want = {(protocol, code) for code, rule in RULES.items() for protocol in rule.protocols}
    assert want - have == set()
    assert have - want == set()


def test_every_code_is_documented() -> None:
    documented = set(re.findall(r"^\| `([A-Z]{3}\d{3})` \|", DOCS.read_text(encoding="utf-8"), re.MULTILINE))
    assert documented == set(RULES)


def test_findings_read_as_one_line_each() -> None:
    (finding,) = lint("chat_completions", (BROKEN / "chat_completions" / "CHT011-no-done.sse").read_text())
    assert str(finding) == "CHT011 stream: the stream does not end with data: [DONE]"
    (finding,) = lint("messages", (BROKEN / "messages" / "MSG003-delta-for-unknown-block.sse").read_text())
    assert str(finding).startswith("MSG003 frame ") and "index" in str(finding)


def test_without_the_sdk_check() -> None:
    path = BROKEN / "responses" / "GEN006-temperature-is-a-string.sse"
    assert lint("responses", path.read_text(), sdk=False) == []


def test_inputs_of_every_kind() -> None:
    from dscodec.testing import parse_sse

    text = (BROKEN / "chat_completions" / "CHT007-tool-calls-finish-without-calls.sse").read_text()
    frames, _ = parse_sse(text)
    assert {f.code for f in lint("chat_completions", frames)} == {"CHT007"}
    assert {f.code for f in lint("chat_completions", text.encode())} == {"CHT007"}
    # Event dicts have no transport: the missing [DONE] is not a finding then.
    events = [frame.json() for frame in frames if not frame.is_done]
    assert {f.code for f in lint("chat_completions", events)} == {"CHT007"}
    with pytest.raises(ValueError):
        lint("grpc", text)  # type: ignore[arg-type]


def test_complete_bodies() -> None:
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "a</think>b", "tool_calls": []},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 4},
    }
    assert sorted(f.code for f in lint("chat_completions", body)) == ["CHT007", "CHT010", "GEN004"]
    assert sorted(f.code for f in lint("chat_completions", json.dumps(body))) == [
        "CHT007",
        "CHT010",
        "GEN004",
    ]
    message = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [
            {"type": "thinking", "thinking": "x", "signature": ""},
            {"type": "tool_use", "id": "t", "name": "f", "input": "{}"},
        ],
        "stop_reason": "end_turn",
        "stop_sequence": "END",
        "usage": {"input_tokens": -1, "output_tokens": 1},
    }
    assert sorted(f.code for f in lint("messages", message, sdk=False)) == [
        "GEN005",
        "MSG007",
        "MSG011",
        "MSG012",
    ]
    response = {"id": "r", "object": "response", "status": "incomplete", "output": [
        {"type": "function_call", "status": "completed", "name": "f", "arguments": "{", "call_id": "c", "id": "fc"},
    ], "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}  # fmt: skip
    assert sorted(f.code for f in lint("responses", response, sdk=False)) == ["GEN005", "RSP011"]
    assert [f.code for f in lint("responses", {"error": {"message": 1}})] == ["GEN007"]
    assert lint("messages", {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}) == []
