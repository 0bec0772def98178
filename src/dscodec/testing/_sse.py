"""Server-Sent Events framing: a stream's text split into frames, and frames written back.

The parser follows the WHATWG "event stream interpretation" rules, as far as an API stream uses them: lines end
in CRLF, LF or CR; ``data:`` lines of one event are joined with LF; one space after the colon is dropped; lines
starting with ``:`` are comments; a blank line ends the event; ``id:`` and ``retry:`` are read and ignored. An
event without any ``data:`` line is not an event (a comment-only keep-alive, for example). What follows the last
blank line is an unterminated event: the standard drops it, :func:`parse_sse` reports it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["DONE", "Frame", "format_sse", "parse_sse"]

#: The data of the frame that ends a Chat Completions stream.
DONE = "[DONE]"

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Frame:
    """One SSE event: its data text (the ``data:`` lines joined) and its ``event:`` name, if any.

    Examples:
        >>> frame = Frame('{"type":"ping"}', event="ping")
        >>> frame.json()
        {'type': 'ping'}
        >>> Frame("[DONE]").is_done
        True
    """

    data: str
    event: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.data, str):
            raise TypeError(f"a frame's data is a str, not {type(self.data).__name__}")
        if self.event is not None and not isinstance(self.event, str):
            raise TypeError(f"a frame's event name is a str or None, not {type(self.event).__name__}")

    @property
    def is_done(self) -> bool:
        """Whether this is the ``data: [DONE]`` frame."""
        return self.data == DONE

    def json(self) -> Any:
        """The data as JSON.

        Raises:
            ValueError: the data is not JSON (``[DONE]`` is not).
        """
        try:
            return json.loads(self.data)
        except RecursionError:
            raise ValueError("the data is nested too deeply to read") from None

    def sse(self) -> str:
        """The frame as SSE text, blank line included (multi-line data gets one ``data:`` line per line), which
        :func:`parse_sse` reads back as this very frame.

        Raises:
            ValueError: the event name holds a line break (CR or LF), or the data a carriage return: an SSE
                reader takes either as a line end, so no event stream can carry them.
        """
        if self.event is not None and ("\n" in self.event or "\r" in self.event):
            raise ValueError(f"an SSE event name cannot hold a line break (CR or LF): {self.event!r:.60}")
        if "\r" in self.data:
            raise ValueError(
                "a frame's data cannot hold a carriage return in an event stream (an SSE reader takes it as a "
                f"line end, and the data would come back otherwise): at character {self.data.index(chr(13))}"
            )
        head = f"event: {self.event}\n" if self.event is not None else ""
        body = "".join(f"data: {line}\n" for line in self.data.split("\n"))
        return head + body + "\n"


def parse_sse(text: str | bytes) -> tuple[list[Frame], str]:
    """Split an event stream into frames.

    Returns:
        The frames, and the unterminated rest: the text of an event that did not end with a blank line (``""``
        when the stream ended cleanly).

    Examples:
        >>> frames, rest = parse_sse("event: ping\\ndata: {}\\n\\n: keep-alive\\n\\ndata: [DONE]\\n\\n")
        >>> [(f.event, f.data) for f in frames], rest
        ([('ping', '{}'), (None, '[DONE]')], '')
    """
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        raise TypeError(f"an event stream is read from str or bytes, not {type(text).__name__}")
    text = text.removeprefix("\ufeff")
    frames: list[Frame] = []
    data: list[str] = []
    event: str | None = None
    pending: list[str] = []  # the raw lines of the event being read
    lines = _LINE_END.split(text)
    complete = lines[:-1]  # the last piece has no line end: unfinished (or "" when the text ends in one)
    for line in complete:
        if line == "":
            if data:
                frames.append(Frame("\n".join(data), event))
            data, event, pending = [], None, []
            continue
        pending.append(line)
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    rest = "\n".join(pending + ([lines[-1]] if lines[-1] else []))
    return frames, rest if data or lines[-1] else ""


def format_sse(frames: Iterable[Frame]) -> str:
    """The SSE text of ``frames``, which :func:`parse_sse` reads back as the same frames.

    Raises:
        TypeError: ``frames`` is no iterable (a single frame, a string), or an item is no :class:`Frame`.
        ValueError: a frame no event stream can carry (see :meth:`Frame.sse`).
    """
    if isinstance(frames, (Frame, str, bytes)) or not isinstance(frames, Iterable):
        raise TypeError(f"format_sse takes an iterable of frames, not {type(frames).__name__}")
    out = []
    for frame in frames:
        if not isinstance(frame, Frame):
            raise TypeError(f"format_sse takes frames, not {type(frame).__name__}")
        out.append(frame.sse())
    return "".join(out)
