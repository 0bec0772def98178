"""The transcript format: what is written is read back, and malformed or newer files are refused."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

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
    broken = Transcript("messages", {})
    broken.backend.append(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a backend item"):
        dump_transcript(broken, path)
    assert path.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: Finish("done"), ValueError, r"Finish.reason must be .*'done'"),
        (lambda: Finish(1), TypeError, "Finish.reason must be a str or None, not int"),
        (lambda: Text(5, 1), TypeError, "Text.text must be a str, not int"),
        (lambda: Text("a", -1), ValueError, "Text.token_count must be an int from 0"),
        (lambda: Text("a", 1.0), TypeError, "Text.token_count must be an int, not float"),
        (lambda: Usage(-1), ValueError, "Usage.prompt_tokens must be an int from 0 to 2\\*\\*63 - 1, not -1"),
        (lambda: Usage(1, 2**63), ValueError, "Usage.cached_tokens"),
        (lambda: Usage(True), TypeError, "Usage.prompt_tokens must be an int, not bool"),
        (lambda: Usage(1, 0, 5), TypeError, "Usage.system_fingerprint"),
        (lambda: Failure(status=500), ValueError, "Failure.status must be a client error"),
        (lambda: Failure(status="400"), TypeError, "Failure.status must be an int or None"),
        (lambda: Failure(None), TypeError, "Failure.message must be a str"),
        (lambda: Tokens("ab"), TypeError, "Tokens.ids must be a tuple or list"),
        (lambda: Tokens((1.5,)), TypeError, r"Tokens.ids\[0\] must be an int"),
        (lambda: Tokens((1, 2**32)), ValueError, r"Tokens.ids\[1\] must be a token id from 0 to 2\*\*32 - 1"),
        (
            lambda: Tokens((1,), (math.nan,)),
            ValueError,
            r"Tokens.logprobs\[0\] must be a finite number or -inf",
        ),
        (
            lambda: Tokens((1,), (math.inf,)),
            ValueError,
            r"Tokens.logprobs\[0\] must be a finite number or -inf",
        ),
        (lambda: Tokens((1,), (-(10**400),)), ValueError, r"Tokens.logprobs\[0\] must be a finite number"),
        (lambda: Tokens((1,), ("x",)), TypeError, r"Tokens.logprobs\[0\]: a log probability entry is"),
        (
            lambda: Tokens((1,), ((0.5, ((-1, 0.1),)),)),
            ValueError,
            r"Tokens.logprobs\[0\]\[1\]\[0\]: a token id",
        ),
        (
            lambda: Tokens((1,), ((0.5, ((1, math.nan),)),)),
            ValueError,
            r"Tokens.logprobs\[0\]\[1\]\[0\]\[1\]",
        ),
        (lambda: Tokens((1,), {0: 0.5}), TypeError, "Tokens.logprobs must be a tuple, a list or None"),
    ],
)
def test_backend_items_are_checked_when_made(make: Any, error: type[Exception], message: str) -> None:
    """As the loader checks a line (and as a stream processor takes them): an item built in Python used to be
    accepted, answered as a 502 or 500 by a replay, and written to files the loader refuses."""
    with pytest.raises(error, match=message):
        make()


def test_lists_given_to_tokens_are_kept_as_tuples() -> None:
    given = Tokens([1, 2], [-0.5, [-math.inf, [[3, -2.0]]]])  # type: ignore[arg-type]
    assert given == Tokens((1, 2), (-0.5, (-math.inf, ((3, -2.0),))))
    assert loads_transcript(dumps_transcript(Transcript("messages", {}, [given]))).backend == [given]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"kind": "tokens", "ids": [1], "logprobs": [-' + "9" * 400 + "]}",
            "a log probability must be a finite",
        ),
        ('{"kind": "tokens", "ids": [1], "logprobs": [[0.5, [[2, ' + "9" * 400 + "]]]]}", "log probability"),
        ('{"kind": "tokens", "ids": [1], "logprobs": ["nan"]}', "a log probability must be a finite"),
        ('{"kind": "tokens", "ids": [1], "logprobs": ["inf"]}', "a log probability must be a finite"),
        ('{"kind": "tokens", "ids": [1], "logprobs": [NaN]}', "a log probability must be a finite"),
        ('{"kind": "tokens", "ids": [-1]}', "Tokens.ids"),
        ('{"kind": "usage", "prompt_tokens": -1}', "Usage.prompt_tokens"),
        ('{"kind": "text", "text": "a", "token_count": ' + "9" * 30 + "}", "Text.token_count"),
        ('{"kind": "failure", "message": "x", "status": 500}', "client error"),
    ],
)
def test_the_loader_refuses_what_the_items_refuse_naming_the_line(line: str, message: str) -> None:
    """A 400-digit log probability is valid JSON that float() cannot take: it used to escape as OverflowError."""
    text = HEADER + '}\n{"kind": "request", "body": {}}\n' + line
    with pytest.raises(TranscriptError, match=f"<transcript>:3: .*{message}"):
        loads_transcript(text)


def test_what_a_server_sent_is_written_however_broken(tmp_path: Path) -> None:
    """A lone surrogate escape (``\\ud800``) read from a server's JSON used to fail the writing with a
    UnicodeEncodeError (and leave an empty file); a number JSON has no value for (``1e400`` reads as infinity,
    ``NaN``) with a ValueError. Both are kept: the file is UTF-8, and reads back as written."""
    response = {"content": "bad \ud800 x", "\udc00key": 1, "big": 10**23, "inf": math.inf, "ninf": -math.inf}
    transcript = Transcript(
        "chat_completions",
        {"model": "m", "messages": []},
        [Usage(1), Text("bad \ud800", 1)],
        frames=[Frame('{"c": "\\udc00"}')],
        response=response | {"nan": math.nan},
        accumulated={"c": "\udc00"},
    )
    path = tmp_path / "broken.jsonl"
    dump_transcript(transcript, path)
    data = path.read_bytes()
    assert data.decode("utf-8") == dumps_transcript(transcript)  # no UnicodeDecodeError: UTF-8 throughout
    assert b"bad \\ud800 x" in data and b'"inf": Infinity' in data and b'"nan": NaN' in data
    again = load_transcript(path)
    assert again.response is not None and math.isnan(again.response.pop("nan"))
    assert again.response == response
    assert again.backend == transcript.backend and again.accumulated == transcript.accumulated
    assert again.frames is not None and again.frames[0].json() == {"c": "\udc00"}


def test_a_transcript_that_cannot_be_written_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    """The writing is a TranscriptError, and the golden file it would have replaced is kept whole."""
    path = tmp_path / "golden.jsonl"
    dump_transcript(full(), path)
    before = path.read_bytes()
    loop: dict[str, Any] = {}
    loop["a"] = loop
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    for bad in ({"x": {1, 2}}, loop, {"x": deep}):
        with pytest.raises(TranscriptError, match="the response line cannot be written as JSON"):
            dump_transcript(Transcript("messages", {}, response=bad), path)
        assert path.read_bytes() == before


def test_a_transcript_file_is_found_by_its_first_line_that_is_not_blank(tmp_path: Path) -> None:
    """A leading blank line, a byte order mark or a header longer than any fixed cap no longer make a golden file
    something else (skipped without a word); the reader takes them too."""
    text = dumps_transcript(full())
    header, rest = text.split("\n", 1)
    big = json.loads(header)
    big["meta"] = {"note": "x" * 200_000}  # a header line of more than 64 KiB
    cases = {
        "blank.jsonl": "\n  \n" + text,
        "bom.jsonl": "\ufeff" + text,
        "crlf.jsonl": text.replace("\n", "\r\n"),
        "big.jsonl": json.dumps(big) + "\n" + rest,
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content.encode("utf-8"))
        assert is_transcript(path), name
        assert loads_transcript(content).frames == full().frames, name
        assert load_transcript(path).request == REQUEST, name
    (tmp_path / "log.jsonl").write_text('\n{"some": "log line"}\n', encoding="utf-8")
    assert not is_transcript(tmp_path / "log.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n", encoding="utf-8")
    assert not is_transcript(tmp_path / "empty.jsonl")
    # A header too broken to read still names the format: a transcript, which its reader refuses by name.
    (tmp_path / "broken.jsonl").write_text("\n" + HEADER + "\n", encoding="utf-8")
    assert is_transcript(tmp_path / "broken.jsonl")


def test_what_is_no_regular_file_is_never_opened_and_what_cannot_be_read_is_said(tmp_path: Path) -> None:
    import os

    from dscodec.testing.transcript import file_kind

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # nobody writes to it: opening it for reading the usual way waits forever
    assert file_kind(fifo) == "special" and not is_transcript(fifo)
    (tmp_path / "folder.jsonl").mkdir()
    assert file_kind(tmp_path / "folder.jsonl") == "special"
    assert file_kind(tmp_path / "missing.jsonl") == "missing"
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "gone.jsonl")
    with pytest.raises(TranscriptError, match="dangling.jsonl: cannot be read"):
        is_transcript(dangling)


def test_a_transcript_is_checked_when_made_and_when_written() -> None:
    """A transcript the reader would refuse can be neither made nor written: each field is named."""
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"protocol": "chat"}, ValueError, "Transcript.protocol must be one of chat_completions"),
        ({"protocol": 5}, TypeError, "Transcript.protocol must be a str, not int"),
        (
            {"request": None},
            TypeError,
            r"Transcript.request must be a dict \(the request body\), not NoneType",
        ),
        ({"backend": [Usage(1), "x"]}, TypeError, r"Transcript.backend\[1\] must be a backend item"),
        ({"backend": "x"}, TypeError, "Transcript.backend must be a list"),
        ({"frames": ["x"]}, TypeError, r"Transcript.frames\[0\] must be a Frame, not str"),
        ({"response": [1]}, TypeError, "Transcript.response must be a dict"),
        ({"response_text": 5}, TypeError, "Transcript.response_text must be a str or None"),
        ({"response": {}, "response_text": "x"}, ValueError, "a response body and a response_text"),
        ({"status": 99}, ValueError, "Transcript.status must be an HTTP status from 100 to 599, not 99"),
        ({"status": "200"}, TypeError, "Transcript.status must be an int, not str"),
        ({"status": True}, TypeError, "Transcript.status must be an int, not bool"),
        ({"accumulated": "x"}, TypeError, "Transcript.accumulated must be a dict"),
        ({"name": 5}, TypeError, "Transcript.name must be a str, not int"),
        ({"origin": "x"}, ValueError, "Transcript.origin must be one of codec, live, reference, not 'x'"),
        ({"response_id": 1}, TypeError, "Transcript.response_id must be a str or None"),
        ({"created": "x"}, TypeError, "Transcript.created must be an int or None, not str"),
        ({"signature": b"x"}, TypeError, "Transcript.signature must be a str or None"),
        ({"meta": [1]}, TypeError, "Transcript.meta must be a dict, not list"),
    ]
    for change, error, message in cases:
        fields: dict[str, Any] = {"protocol": "messages", "request": {}, **change}
        with pytest.raises(error, match=message):
            Transcript(**fields)
        made = Transcript("messages", {})
        for key, value in change.items():
            setattr(made, key, value)  # changed after it was made: the writer checks it again
        with pytest.raises(error, match=message):
            dumps_transcript(made)
    # The fields after the backend items are keyword-only: a value given by position would land in another.
    with pytest.raises(TypeError):
        Transcript("messages", {}, [], None)  # type: ignore[misc]
    assert Transcript("messages", {}, (Usage(1),)).backend == [Usage(1)]


def test_an_empty_list_of_transcripts_is_not_written(tmp_path: Path) -> None:
    """A file of no transcript is one the reader refuses ("empty transcript"): it is not written."""
    path = tmp_path / "none.jsonl"
    with pytest.raises(ValueError, match="transcripts is empty"):
        dump_transcripts([], path)
    assert not path.exists()
    with pytest.raises(ValueError, match="transcripts is empty"):
        dumps_transcripts(iter([]))
    with pytest.raises(TypeError, match="an iterable of Transcript"):
        dumps_transcripts(full())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"kind": "request", "body": {}}', '{"kind": "request", "body": {}}'], ":3: a second request line"),
        (
            ['{"kind": "request", "body": {}}', '{"kind": "frame", "data": {}}', '{"kind": "request", "body": {}}'],
            ":4: a second request line",
        ),
        (['{"kind": "frame", "data": {}}', '{"kind": "request", "body": {}}'], ":3: a request line out of order"),
        (
            ['{"kind": "request", "body": {}}', '{"kind": "response", "status": 99, "body": {}}'],
            ":3: the response's status must be an HTTP status from 100 to 599, not 99",
        ),
        (
            ['{"kind": "request", "body": {}}', '{"kind": "response", "status": 200, "body": {}, "raw": "x"}'],
            ":3: a response line holds a 'body' or a 'raw' text, not both",
        ),
        (
            ['{"kind": "request", "body": {}}', '{"kind": "response", "body": {}}', '{"kind": "frame", "data": {}}'],
            ":4: a frame line out of order",
        ),
        (
            ['{"kind": "request", "body": {}}', '{"kind": "response", "body": {}}', '{"kind": "response", "body": {}}'],
            ":4: a second response line",
        ),
        (
            ['{"kind": "request", "body": {}}', '{"kind": "frame", "data": {}}', '{"kind": "text", "text": "x"}'],
            ":4: a text line out of order",
        ),
        (
            ['{"kind": "request", "body": {}}', '{"kind": "accumulated", "body": {}}', '{"kind": "frame", "data": {}}'],
            ":4: a frame line out of order",
        ),
    ],
)  # fmt: skip
def test_the_order_of_the_lines_is_checked(lines: list[str], message: str) -> None:
    """The lines follow in one order, each of request, response and accumulated at most once: a line out of
    place is refused by its number rather than overwriting or dropping what came before."""
    with pytest.raises(TranscriptError, match=message):
        loads_transcript("\n".join([HEADER + "}", *lines]))


def test_a_stream_with_its_complete_response_reads() -> None:
    """Frames then a response line (a non-streamed answer that keeps its events, as dscodec's own reference
    fixtures do) stay readable."""
    text = "\n".join([
        HEADER + "}",
        '{"kind": "request", "body": {}}',
        '{"kind": "frame", "event": "ping", "data": {"type": "ping"}}',
        '{"kind": "response", "status": 200, "body": {"type": "message"}}',
        '{"kind": "accumulated", "body": {}}',
    ])  # fmt: skip
    transcript = loads_transcript(text)
    assert transcript.frames == [Frame('{"type":"ping"}', "ping")] and transcript.response == {
        "type": "message"
    }
    assert loads_transcript(dumps_transcript(transcript)) == transcript


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"kind": "usage", "prompt_tokens": 84.0}', ":3: prompt_tokens must be an integer, not 84.0"),
        ('{"kind": "usage", "cached_tokens": "1"}', ":3: cached_tokens must be an integer, not '1'"),
        (
            '{"kind": "text", "text": "x", "token_count": null}',
            ":3: token_count must be an integer, not None",
        ),
        ('{"kind": "tokens", "ids": [1, 2.0]}', r":3: ids\[1\] must be an integer, not 2.0"),
        ('{"kind": "response", "status": "200", "body": {}}', ":3: the response's status must be an integer"),
        ('{"kind": "frame", "event": 5, "data": {}}', ":3: a frame's event must be a string or null, not 5"),
        ('{"kind": "failure", "message": 5}', ":3: a failure's message must be a string, not 5"),
        ('{"kind": "failure", "message": null}', ":3: a failure's message must be a string, not None"),
        (
            '{"kind": "frame", "data": {}, "raw": "x"}',
            ":3: a frame line holds a 'data' or a 'raw' text, not both",
        ),
    ],
)
def test_a_bad_value_is_named_by_its_field(line: str, message: str) -> None:
    with pytest.raises(TranscriptError, match=message):
        loads_transcript("\n".join([HEADER + "}", '{"kind": "request", "body": {}}', line]))
    with pytest.raises(TranscriptError, match=":1: created must be an integer, not 1.5"):
        loads_transcript(HEADER + ', "created": 1.5}\n{"kind": "request", "body": {}}')


def test_frames_a_parsed_object_would_change_are_kept_as_their_text() -> None:
    """A frame whose JSON names a key twice, or spans several lines (a multi-line ``data:`` field), used to be
    written as its parsed object: one of the two values was lost, and the line breaks were gone when read back.
    Both are written as their exact text now; a frame of one line with unique keys is still written as JSON."""
    frames = [
        Frame('{"type":"x","index":0,"index":1}', "x"),
        Frame('{\n  "a": [1,\n 2]\n}'),
        Frame('{"b": {"c": 1, "c": 2}}'),
        Frame('{"d": 1}'),
    ]
    text = dumps_transcript(Transcript("responses", REQUEST, frames=frames))
    lines = [json.loads(line) for line in text.splitlines()]
    assert [("raw" in line, "data" in line) for line in lines[2:]] == [(True, False)] * 3 + [(False, True)]
    again = loads_transcript(text).frames
    assert again == frames[:3] + [Frame('{"d":1}')]


def test_a_line_naming_a_key_twice_is_refused_rather_than_read_as_one_value() -> None:
    """``json.loads`` keeps the last of two equal keys: a transcript line ``{"kind": "finish", "reason": "stop",
    "reason": null}``, or a request body naming ``model`` twice, read as one of its values, silently."""
    head = HEADER + "}\n"
    for text, key in [
        (head + '{"kind": "request", "body": {"model": "a", "model": "b"}}\n', "model"),
        (
            head + '{"kind": "request", "body": {}}\n{"kind": "finish", "reason": "stop", "reason": null}\n',
            "reason",
        ),
        (
            head.replace('"version": 2', '"version": 2, "version": 1') + '{"kind": "request", "body": {}}\n',
            "version",
        ),
    ]:
        with pytest.raises(TranscriptError, match=f"names the key '{key}' twice"):
            loads_transcript(text)


def test_a_stream_without_frames_reads_back_as_an_empty_stream_not_as_no_answer() -> None:
    """A server that answered a stream with no event at all, recorded as ``frames=[]``, used to read back as a
    transcript without an answer (``frames`` None): the header now says the stream was empty."""
    empty = Transcript("messages", REQUEST, frames=[])
    text = dumps_transcript(empty)
    assert json.loads(text.splitlines()[0])["empty_stream"] is True
    again = loads_transcript(text)
    assert again.frames == [] and again.streamed and again.answered
    unanswered = loads_transcript(dumps_transcript(Transcript("messages", REQUEST)))
    assert unanswered.frames is None and not unanswered.answered
    assert "empty_stream" not in dumps_transcript(Transcript("messages", REQUEST, frames=[Frame("{}")]))
    header = HEADER + ', "empty_stream": true}\n{"kind": "request", "body": {}}\n'
    with pytest.raises(TranscriptError, match="yet frames follow"):
        loads_transcript(header + '{"kind": "frame", "event": null, "data": {}}\n')
    with pytest.raises(TranscriptError, match="'empty_stream' must be true or false"):
        loads_transcript(header.replace("true", '"yes"'))
