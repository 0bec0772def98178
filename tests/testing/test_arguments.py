"""The testing kit's public functions name a wrong argument (TypeError, ValueError) instead of failing inside."""

from __future__ import annotations

from typing import Any

import pytest

from dscodec import testing
from dscodec.testing import Finish, Text, Transcript, Usage

_TRANSCRIPT = Transcript(
    "chat_completions",
    {
        "model": "DeepSeek-V4-Pro",
        "thinking": {"type": "disabled"},
        "messages": [{"role": "user", "content": "Hi"}],
    },
    [Usage(5), Text("Hello!", 2), Finish("stop")],
)


@pytest.mark.parametrize("value", [5, None, {"protocol": "chat_completions"}, "text"])
def test_functions_of_a_transcript_refuse_anything_else(value: Any) -> None:
    for call in (testing.replay, testing.verify, testing.dumps_transcript):
        with pytest.raises(TypeError, match="transcript must be a Transcript"):
            call(value)
    assert testing.verify(_TRANSCRIPT) == testing.verify(testing.replay(_TRANSCRIPT).transcript)


@pytest.mark.parametrize("answer", [5, None, "text", b"bytes", 1.5])
def test_compare_refuses_what_is_no_answer(answer: Any) -> None:
    with pytest.raises(TypeError, match="an answer is a Transcript"):
        testing.compare(answer, [])
    with pytest.raises(TypeError, match="an answer is a Transcript"):
        testing.compare({}, answer)
    assert testing.compare({"a": 1}, {"a": 1}) == []


@pytest.mark.parametrize("answer", [5, None, 1.5])
def test_lint_refuses_what_is_no_answer(answer: Any) -> None:
    with pytest.raises(TypeError, match="an answer is a Transcript"):
        testing.lint("chat_completions", answer)


@pytest.mark.parametrize("protocol", ["chat", "", 5, ["messages"], None])
def test_protocol_names_are_checked(protocol: Any) -> None:
    with pytest.raises(ValueError, match="unknown protocol"):
        testing.lint(protocol, {})
    with pytest.raises(ValueError, match="unknown protocol"):
        testing.sdk_available(protocol)


def test_lint_reads_bytearray_as_bytes() -> None:
    stream = b'data: {"type": "ping"}\n\n'
    assert testing.lint("messages", bytearray(stream)) == testing.lint("messages", stream)
