"""The same conversation sent through Chat Completions, Responses and Messages renders to the same prompt.

Each case under ``fixtures/requests/cross/`` holds the three request bodies; the reference rendered all three
identically (the recorder refuses a case otherwise) and dscodec must give that prompt, spans and ids for each.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import dscodec
from tests.support.fixtures import FIXTURES, conversion_options, encoder, read_json

CASES = sorted(p for p in (FIXTURES / "requests" / "cross").iterdir() if p.is_dir())


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
@pytest.mark.parametrize("protocol", ["chat_completions", "responses", "messages"])
def test_cross_protocol_prompt(case: Path, protocol: str) -> None:
    expected = read_json(case / "expected.json")
    options = conversion_options(read_json(case / "case.json").get("options", {}))
    request = dscodec.convert(protocol, (case / f"{protocol}.json").read_bytes(), options)  # type: ignore[arg-type]
    prompt = dscodec.render(request)
    assert request.model_version == expected["model_version"]
    assert prompt.text == expected["prompt"]
    assert [list(s) for s in prompt.special_spans] == expected["special_spans"]
    assert encoder(request.model_version).encode(request) == expected["ids"]


def test_enough_cross_cases() -> None:
    assert len(CASES) >= 40
