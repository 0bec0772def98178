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


def test_format_refuses_what_would_not_come_back() -> None:
    """A line break in an event name, or a carriage return in the data, is a line end to an SSE reader: such a
    frame used to be written and read back as other frames (or other data)."""
    import pytest

    for frame in (Frame("{}", "a\nb"), Frame("{}", "a\rb"), Frame("{}", "ping\r\n")):
        with pytest.raises(ValueError, match="an SSE event name cannot hold a line break"):
            format_sse([frame])
    for data in ("a\rb", "a\r\nb", "x\r"):
        with pytest.raises(ValueError, match="cannot hold a carriage return"):
            Frame(data).sse()
    # What can be written comes back as it was: empty data, empty lines, a leading space, an empty name.
    frames = [Frame(""), Frame("\n\n"), Frame(" x", " name"), Frame("a\nb", ""), Frame("ü\u2028")]
    assert parse_sse(format_sse(frames)) == (frames, "")
