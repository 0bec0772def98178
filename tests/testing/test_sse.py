"""SSE framing: the parser follows the event-stream rules an API stream uses."""

from __future__ import annotations

from dscodec.testing import DONE, Frame, format_sse, parse_sse


def test_frames_names_comments_and_line_ends() -> None:
    text = "event: a\r\ndata: 1\r\n\r\n: comment\n\ndata:2\rdata: 3\r\rid: 7\nretry: 5\ndata: [DONE]\n\n"
    frames, rest = parse_sse(text)
    assert frames == [Frame("1", "a"), Frame("2\n3"), Frame(DONE)]
    assert rest == ""
    assert frames[-1].is_done


def test_an_unterminated_event_is_reported_not_dropped() -> None:
    frames, rest = parse_sse(b"data: 1\n\ndata: 2")
    assert frames == [Frame("1")] and rest == "data: 2"
    frames, rest = parse_sse("data: 1\n\ndata: 2\n")
    assert frames == [Frame("1")] and rest == "data: 2"
    assert parse_sse(": only a comment")[1] == ":" + " only a comment"


def test_format_round_trips() -> None:
    frames = [Frame('{"a":1}', "x"), Frame("line one\nline two"), Frame(DONE)]
    assert parse_sse(format_sse(frames)) == (frames, "")
    assert parse_sse("\ufeffdata: x\n\n")[0] == [Frame("x")]
