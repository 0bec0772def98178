"""Edge cases of the testing kit found by using it as its users do: a golden test of a Messages error answer,
misspelt transcript fields, one-shot iterables of ignore rules or sections, and arguments that are no data."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from dscodec.testing import (
    Difference,
    Frame,
    Transcript,
    TranscriptError,
    compare,
    dumps_transcript,
    format_differences,
    lint,
    loads_transcript,
    replay,
    sdk_available,
    verify,
)
from dscodec.testing.compare import normalise
from dscodec.testing.transcript import Failure, Text, Tokens, Usage

HEADER = {"kind": "transcript", "format": "dscodec-transcript", "version": 2, "protocol": "chat_completions"}
REQUEST = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}


def _text(*lines: dict[str, Any]) -> str:
    return "\n".join(json.dumps(line) for line in [HEADER, {"kind": "request", "body": REQUEST}, *lines])


def _nested(levels: int) -> list[Any]:
    outer: list[Any] = []
    inner = outer
    for _ in range(levels):
        inner.append([])
        inner = inner[0]
    return outer


def test_request_ids_are_normalised_like_other_ids() -> None:
    """An Anthropic error names the HTTP request's id, new for every request: two answers that differ only there
    agree."""
    error = {"type": "error", "error": {"type": "api_error", "message": "boom"}}
    assert compare({**error, "request_id": "req_1"}, {**error, "request_id": "req_2"}) == []
    assert normalise({"request_id": "req_1"}) == {"request_id": "<id-1>"}
    assert [d.path for d in compare({**error, "request_id": "req_1"}, error)] == ["response.request_id"]


@pytest.mark.parametrize("stream", [True, False])
def test_recheck_of_a_messages_error_answer_agrees_with_the_same_server(live_url: str, stream: bool) -> None:
    """A golden test of a failing Messages answer: the server answers it again with another request id."""
    from dscodec.testing.live import recheck, record

    request = {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 100,
        "stream": stream,
        "messages": [REQUEST["messages"][0]],
    }
    headers = {"X-Scenario": "fail_mid"}
    recorded = record(live_url + "/v1/messages", request, headers=headers)
    assert "req_" in json.dumps(recorded.accumulated if stream else recorded.response)
    assert recheck(recorded, live_url, headers=headers) == []


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ({"kind": "finish", "reasn": "length"}, "reasn"),  # would read as a finish without a reason
        ({"kind": "text", "text": "a", "tokens": 3}, "tokens"),  # would read as 0 tokens
        ({"kind": "usage", "prompt_token": 5}, "prompt_token"),
        ({"kind": "tokens", "ids": [1], "logprob": [0.0]}, "logprob"),
        ({"kind": "failure", "message": "m", "stauts": 400}, "stauts"),
    ],
)
def test_a_misspelt_backend_field_is_refused_not_dropped(line: dict[str, Any], field: str) -> None:
    with pytest.raises(
        TranscriptError, match=rf"<transcript>:3: a {line['kind']} line has no field '{field}'"
    ):
        loads_transcript(_text(line))


def test_misspelt_fields_of_the_other_lines_are_refused() -> None:
    with pytest.raises(TranscriptError, match=r":1: the header has no field 'nmae'"):
        loads_transcript(_text().replace('"chat_completions"', '"chat_completions", "nmae": "x"', 1))
    with pytest.raises(TranscriptError, match=r":2: a request line has no field 'bdy'"):
        loads_transcript(_text().replace('"body"', '"bdy": 1, "body"'))
    frame = {"kind": "frame", "event": None, "data": {}, "evnt": "x"}
    with pytest.raises(TranscriptError, match=r":3: a frame line has no field 'evnt'"):
        loads_transcript(_text(frame))
    response = {"kind": "response", "status": 200, "body": {}, "stauts": 404}
    with pytest.raises(TranscriptError, match=r":3: a response line has no field 'stauts'"):
        loads_transcript(_text(response))
    with pytest.raises(TranscriptError, match=r":3: a accumulated line has no field 'bodyy'"):
        loads_transcript(_text({"kind": "accumulated", "body": {}, "bodyy": {}}))


def test_every_field_the_writer_writes_is_read_back() -> None:
    body = {**REQUEST, "stream": True}
    transcript = replay(
        Transcript("chat_completions", body, [Usage(3, 1, "fp"), Tokens((1, 2), (0.0, -1.0))])
    ).transcript
    transcript.backend.append(Failure("boom", 429))
    transcript.response_id, transcript.created, transcript.signature = "r", 5, "s"
    transcript.meta["note"] = "x"
    assert loads_transcript(dumps_transcript(transcript)) == transcript


def test_sections_read_from_an_iterator_are_compared() -> None:
    assert compare({"a": 1}, {"a": 2}, sections=(s for s in ["response"])) == [Difference("response.a", 1, 2)]


def test_no_section_at_all_is_refused() -> None:
    with pytest.raises(ValueError, match="nothing would be compared"):
        compare({"a": 1}, {"a": 2}, sections=[])


def test_the_command_line_refuses_an_empty_sections_list(tmp_path: Any, capsys: Any) -> None:
    from dscodec.cli import main

    one, other = tmp_path / "a.json", tmp_path / "b.json"
    one.write_text('{"a": 1}')
    other.write_text('{"a": 2}')
    assert main(["compare", str(one), str(other), "--sections", ""]) == 2
    assert "unknown section ''" in capsys.readouterr().err


def test_verify_keeps_ignore_rules_given_as_an_iterator() -> None:
    recorded = replay(Transcript("chat_completions", {**REQUEST, "stream": True}, [Text("Hi", 1)])).transcript
    assert recorded.accumulated is not None
    recorded.accumulated = {**recorded.accumulated, "extra": 1}
    assert [d.path for d in verify(recorded)] == ["accumulated.extra"]
    assert verify(recorded, ignore=(rule for rule in ["extra"])) == []


def test_recheck_keeps_ignore_rules_given_as_an_iterator(live_url: str) -> None:
    from dscodec.testing.live import recheck, record

    recorded = record(live_url + "/v1/chat/completions", REQUEST)
    assert recorded.response is not None
    recorded.response = {**recorded.response, "extra": 1}
    assert [d.path for d in recheck(recorded, live_url)] == ["response.extra"]
    assert recheck(recorded, live_url, ignore=(rule for rule in ["extra"])) == []


def test_arguments_nested_past_recursion_are_named_not_a_recursion_error() -> None:
    deep = _nested(100_000)
    mine: list[Any] = []
    mine.append(mine)
    for value in (deep, {"a": deep}, mine):
        with pytest.raises(ValueError, match="unknown protocol"):
            lint(value, "data: {}\n\n")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="unknown protocol"):
            sdk_available(value)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="unknown section"):
            compare([Frame("{}")], [Frame("{}")], sections=[value])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="source must be a str"):
            loads_transcript("", source=value)  # type: ignore[arg-type]
        assert str(Difference("p", value, value)).startswith("p: expected ")
        assert "p: expected" in format_differences([Difference("p", value, 1)])


def test_fake_engine_delay_nested_past_recursion_is_a_value_error() -> None:
    from dscodec.testing.engines import FakeEngine

    with pytest.raises(ValueError, match="delay must be a number"):
        FakeEngine("vllm", delay=_nested(100_000))  # type: ignore[arg-type]


def test_send_refuses_a_body_json_cannot_hold_before_sending() -> None:
    from dscodec.testing.live import send

    with socket.socket() as listener:  # a port that takes connections but is never read: nothing may be sent
        listener.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/messages"
        mine: dict[str, Any] = {}
        mine["self"] = mine
        with pytest.raises(
            ValueError, match="body nests deeper than Python's recursion allows, or holds itself"
        ):
            send(url, {"a": _nested(100_000)})
        with pytest.raises(ValueError, match="body"):
            send(url, mine)
        with pytest.raises(TypeError, match="body is no JSON data"):
            send(url, {"a": {1, 2}})


def test_a_timeout_of_any_finite_length_is_accepted(live_url: str) -> None:
    """A timeout beyond what the system's timers hold (1e30 seconds) bounds the answer, not an OverflowError."""
    from dscodec.testing.live import send

    exchange = send(live_url + "/v1/chat/completions", REQUEST, timeout=1e30)
    assert exchange.status == 200


def test_the_command_line_takes_a_huge_timeout(live_url: str, tmp_path: Any, capsys: Any) -> None:
    from dscodec.cli import main

    body = tmp_path / "body.json"
    body.write_text(json.dumps(REQUEST))
    assert (
        main(["lint", "--url", live_url + "/v1/chat/completions", "--body", str(body), "--timeout", "1e30"])
        == 0
    )
    assert "Traceback" not in capsys.readouterr().err


def test_the_fake_engine_refuses_text_no_tokenizer_encodes() -> None:
    """A Text item holding a lone surrogate is refused when queued, not answered with an internal error."""
    from dscodec.testing.engines import FakeEngine

    engine = FakeEngine("vllm")
    with pytest.raises(ValueError, match="reply item 1: the text holds a lone surrogate"):
        engine.play([Text("a"), Text("b\ud800")])
    assert engine.pending == 0


@pytest.mark.parametrize("protocol", ["chat_completions", "responses", "messages"])
def test_bytes_that_are_not_utf8_are_a_finding(protocol: str) -> None:
    """A server that sends bytes that are no UTF-8 is heard of, not read silently with U+FFFD in their place."""
    stream = replay(Transcript(protocol, {**_body(protocol), "stream": True}, [Text("Hé", 2)])).transcript
    assert stream.frames is not None
    clean = "".join(frame.sse() for frame in stream.frames).encode()
    assert lint(protocol, clean) == []
    broken = clean.replace("é".encode(), b"\xe9")
    assert [(f.code, f.index) for f in lint(protocol, broken)] == [("GEN010", None)]
    assert "at byte" in str(lint(protocol, bytearray(broken))[0])
    body = replay(Transcript(protocol, _body(protocol), [Text("Hé", 2)])).transcript.response
    raw = json.dumps(body, ensure_ascii=False).encode().replace("é".encode(), b"\xe9")
    assert [f.code for f in lint(protocol, raw)] == ["GEN010"]


def test_the_command_line_lints_the_bytes_of_a_file(tmp_path: Any, capsys: Any) -> None:
    from dscodec.cli import main

    stream = replay(Transcript("chat_completions", {**REQUEST, "stream": True}, [Text("Hé", 2)])).transcript
    assert stream.frames is not None
    path = tmp_path / "answer.sse"
    path.write_bytes("".join(frame.sse() for frame in stream.frames).encode().replace("é".encode(), b"\xe9"))
    assert main(["lint", str(path), "--protocol", "chat_completions"]) == 1
    assert "GEN010 stream: the answer is not UTF-8" in capsys.readouterr().out


def test_an_exchange_keeps_the_bytes_of_the_answer(live_url: str) -> None:
    from dscodec.testing.live import send

    exchange = send(live_url + "/v1/chat/completions", REQUEST)
    assert exchange.data.decode() == exchange.text
    assert lint("chat_completions", exchange.data) == []


def _body(protocol: str) -> dict[str, Any]:
    if protocol == "responses":
        return {"model": "DeepSeek-V4-Pro", "input": "Hi"}
    if protocol == "messages":
        return {**REQUEST, "max_tokens": 100}
    return dict(REQUEST)


def _chat_stream_exchange(body: dict[str, Any], text: str, frames: Any, rest: str, data: bytes = b"") -> Any:
    """What ``send`` gives for a Chat Completions stream answered with ``text`` (200, SSE)."""
    from dscodec.testing.live import Exchange

    return Exchange(
        "http://x/v1/chat/completions",
        "chat_completions",
        body,
        200,
        "text/event-stream",
        text,
        frames,
        None,
        rest,
        data,
    )


def test_a_stream_cut_inside_a_frame_is_kept_and_linted_as_such() -> None:
    """The text after the last complete frame is what the server sent too: the transcript keeps it, and its
    lint says what linting the stream's text says."""
    from dscodec.testing import parse_sse
    from dscodec.testing.live import transcript_of

    body = {**REQUEST, "stream": True}
    frames = replay(Transcript("chat_completions", body, [Text("Hello there", 3)])).transcript.frames
    assert frames is not None
    text = "".join(frame.sse() for frame in frames)
    cut = text[: len(text) // 2]
    parsed, rest = parse_sse(cut)
    assert rest
    exchange = _chat_stream_exchange(body, cut, parsed, rest)
    transcript = transcript_of(exchange)
    assert transcript.meta["unterminated"] == rest
    codes = [f.code for f in lint("chat_completions", cut)]
    assert codes[0] == "GEN009"
    assert [f.code for f in lint("chat_completions", transcript)] == codes
    again = loads_transcript(dumps_transcript(transcript))
    assert [f.code for f in lint("chat_completions", again)] == codes


def test_a_recorded_answer_that_was_not_utf8_is_linted_as_such() -> None:
    from dscodec.testing import parse_sse
    from dscodec.testing.live import transcript_of

    body = {**REQUEST, "stream": True}
    frames = replay(Transcript("chat_completions", body, [Text("Hé there", 3)])).transcript.frames
    assert frames is not None
    data = "".join(frame.sse() for frame in frames).encode().replace("é".encode(), b"\xe9")
    text = data.decode("utf-8", errors="replace")
    parsed, rest = parse_sse(text)
    exchange = _chat_stream_exchange(body, text, parsed, rest, data)
    transcript = transcript_of(exchange)
    at = data.index(b"\xe9")
    assert transcript.meta["not_utf8"].endswith(f"at byte {at}")
    assert [f.code for f in lint("chat_completions", transcript)] == ["GEN010"]
    again = loads_transcript(dumps_transcript(transcript))
    assert [f.code for f in lint("chat_completions", again)] == ["GEN010"]
