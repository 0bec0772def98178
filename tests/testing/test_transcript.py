"""The transcript format: what is written is read back, and malformed or newer files are refused."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dscodec.testing import (
    VERSION,
    Failure,
    Finish,
    Frame,
    Text,
    Tokens,
    Transcript,
    TranscriptError,
    Usage,
    dump_transcript,
    dump_transcripts,
    dumps_transcript,
    dumps_transcripts,
    load_transcript,
    load_transcripts,
    loads_transcript,
    loads_transcripts,
)
from dscodec.testing.transcript import is_transcript

REQUEST = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}], "stream": True}

#: A version 2 header without its closing brace, for the malformed cases.
HEADER = '{"kind": "transcript", "format": "dscodec-transcript", "version": 2, "protocol": "messages"'


def full() -> Transcript:
    return Transcript(
        "chat_completions",
        REQUEST,
        [
            Usage(12, 3, "fp_1"),
            Text("Hel", 1),
            Tokens((101, 102), (-0.5, (-math.inf, ((7, -1.0), (8, -2.5))))),
            Failure("boom"),
            Finish(None),
        ],
        frames=[Frame('{"a":"中"}'), Frame("[DONE]"), Frame("not json", "odd"), Frame("1")],
        accumulated={"object": "chat.completion"},
        name="full",
        response_id="chatcmpl-1",
        created=5,
        signature="sig",
        meta={"description": "every line kind"},
    )


def test_round_trip(tmp_path: Path) -> None:
    transcript = full()
    text = dumps_transcript(transcript)
    assert loads_transcript(text) == transcript
    path = tmp_path / "t.jsonl"
    dump_transcript(transcript, path)
    assert load_transcript(path) == transcript
    assert is_transcript(path) and not is_transcript(tmp_path / "missing.jsonl")


def test_one_json_object_per_line_header_first() -> None:
    lines = [json.loads(line) for line in dumps_transcript(full()).splitlines()]
    assert lines[0]["kind"] == "transcript" and lines[0]["format"] == "dscodec-transcript"
    assert lines[0]["version"] == VERSION == 2 and lines[0]["protocol"] == "chat_completions"
    assert [line["kind"] for line in lines[1:]] == [
        "request", "usage", "text", "tokens", "failure", "finish",
        "frame", "frame", "frame", "frame", "accumulated",
    ]  # fmt: skip
    tokens = lines[4]
    assert tokens["logprobs"] == [-0.5, ["-inf", [[7, -1.0], [8, -2.5]]]]
    assert lines[7]["data"] == {"a": "中"} and lines[8]["raw"] == "[DONE]" and lines[10]["raw"] == "1"


def test_a_json_answer() -> None:
    transcript = Transcript("messages", {"model": "m"}, response={"type": "error"}, status=400)
    again = loads_transcript(dumps_transcript(transcript))
    assert again.response == {"type": "error"} and again.status == 400 and again.frames is None
    assert again.answer() == {"type": "error"} and not again.streamed


def test_the_name_defaults_to_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "plain-answer.jsonl"
    dump_transcript(Transcript("responses", {"model": "m"}), path)
    assert load_transcript(path).name == "plain-answer"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[1]",
        '{"kind": "request", "body": {}}',
        '{"kind": "transcript", "format": "dscodec-transcript", "version": 3, "protocol": "messages"}',
        '{"kind": "transcript", "format": "dscodec-transcript", "version": 1, "protocol": "grpc"}',
        '{"kind": "transcript", "format": "dscodec-transcript", "version": 1, "protocol": "messages"}',
        (
            '{"kind": "transcript", "format": "dscodec-transcript", "version": 1, "protocol": "messages"}\n'
            '{"kind": "request", "body": {}}\n{"kind": "mystery"}'
        ),
        (
            '{"kind": "transcript", "format": "dscodec-transcript", "version": 1, "protocol": "messages"}\n'
            '{"kind": "request", "body": {}}\n{"kind": "finish", "reason": "done"}'
        ),
        (
            '{"kind": "transcript", "format": "dscodec-transcript", "version": 1, "protocol": "messages"}\n'
            '{"kind": "request", "body": {}}\n{"kind": "text", "text": 1}'
        ),
        # Values of the wrong JSON type anywhere: refused with a message, never a Python error.
        HEADER + '}\n{"kind": {"a": 1}, "body": {}}',
        HEADER + '}\n{"kind": ["request"], "body": {}}',
        HEADER + ', "meta": [["a", 1]]}\n{"kind": "request", "body": {}}',
        HEADER + ', "meta": "x"}\n{"kind": "request", "body": {}}',
        HEADER + ', "name": 5}\n{"kind": "request", "body": {}}',
        HEADER + '}\n{"kind": "request", "body": {}}\n{"kind": "tokens", "ids": [1], "logprobs": 3}',
        HEADER + '}\n{"kind": "request", "body": {}}\n{"kind": "tokens", "ids": [1], "logprobs": {"a": 1}}',
        HEADER
        + '}\n{"kind": "request", "body": {}}\n{"kind": "tokens", "ids": [1], "logprobs": [[0.5, [1]]]}',
        HEADER
        + '}\n{"kind": "request", "body": {}}\n{"kind": "tokens", "ids": [1], "logprobs": [[0.5, [[1]]]]}',
        HEADER + '}\n{"kind": "request", "body": {}}\n{"kind": "finish", "reason": ["stop"]}',
    ],
)
def test_malformed_transcripts_are_refused(text: str) -> None:
    with pytest.raises(TranscriptError):
        loads_transcript(text)


def test_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError):
        load_transcript(tmp_path / "nothing.jsonl")


def test_several_transcripts_in_one_file(tmp_path: Path) -> None:
    """Format version 2: one header line per transcript; load_transcripts reads them all, in order."""
    first, second = full(), Transcript("messages", {"model": "m"}, [Text("b", 1)], name="")
    path = tmp_path / "two.jsonl"
    dump_transcripts([first, second], path)
    assert loads_transcripts(dumps_transcripts([first, second])) == [first, second]
    found = load_transcripts(path)
    assert found[0] == first and found[1].name == "two[1]" and found[1].backend == [Text("b", 1)]
    with pytest.raises(TranscriptError, match="holds 2 transcripts"):
        load_transcript(path)
    # One transcript reads the same either way, and is named after the file.
    dump_transcript(second, tmp_path / "one.jsonl")
    assert [t.name for t in load_transcripts(tmp_path / "one.jsonl")] == ["one"]


def test_a_version_1_file_still_reads_and_holds_one_transcript() -> None:
    v1 = '{"kind": "transcript", "format": "dscodec-transcript", "version": 1, "protocol": "messages"}\n'
    request = '{"kind": "request", "body": {}}\n'
    assert loads_transcript(v1 + request).protocol == "messages"
    with pytest.raises(TranscriptError, match="version 1 file holds one transcript"):
        loads_transcripts(v1 + request + v1 + request)


def test_lines_end_at_newlines_only() -> None:
    """Text holding U+2028, U+0085 or a form feed is written raw or escaped, and never splits a line."""
    transcript = Transcript("responses", {"model": "m"}, [Text("a\u2028b\x85c\x0cd\x1ce", 1)])
    text = dumps_transcript(transcript)
    assert len(text.split("\n")) == 4
    assert loads_transcript(text) == transcript
    assert loads_transcript(text.replace("\n", "\r\n")) == transcript


def test_tokens_need_one_log_probability_entry_per_id() -> None:
    """As the Tokens docstring says; a mismatch would otherwise reach a replay, which cuts the ids one by one."""
    with pytest.raises(ValueError, match="2 ids and 1 log probability entries"):
        Tokens((1, 2), logprobs=(0.1,))
    with pytest.raises(ValueError, match="1 ids and 2 log probability entries"):
        Tokens((1,), logprobs=(0.1, 0.2))
    assert Tokens((1, 2)).logprobs is None and Tokens((), ()).ids == ()
    lines = (
        HEADER + '}\n{"kind": "request", "body": {}}\n{"kind": "tokens", "ids": [1, 2], "logprobs": [0.1]}'
    )
    with pytest.raises(
        TranscriptError, match=r"<transcript>:3: a tokens item has 2 ids and 1 log probability"
    ):
        loads_transcript(lines)


def test_writing_to_a_place_that_cannot_be_written_is_a_transcript_error(tmp_path: Path) -> None:
    """As reading a file that cannot be read is: the path named, no bare OSError."""
    with pytest.raises(TranscriptError, match="cannot be written"):
        dump_transcript(full(), tmp_path)  # a directory
    with pytest.raises(TranscriptError, match="cannot be written"):
        dump_transcripts([full()], tmp_path / "no" / "such" / "folder.jsonl")
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        dump_transcript(full(), 5)  # type: ignore[arg-type]
    # A transcript that cannot be written leaves the file as it was.
    path = tmp_path / "kept.jsonl"
    dump_transcript(full(), path)
    before = path.read_text(encoding="utf-8")
    with pytest.raises(TypeError, match="not a backend output item"):
        dump_transcript(Transcript("messages", {}, [5]), path)  # type: ignore[list-item]
    assert path.read_text(encoding="utf-8") == before
