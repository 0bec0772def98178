"""The stream linter: checks any server's answer against its protocol's grammar.

:func:`lint` takes a streamed answer (SSE text, :class:`~dscodec.testing.Frame` objects, or event dicts) or a
complete JSON body, and returns one :class:`Finding` per problem, each under a stable code (:data:`RULES`;
``docs/testing.md`` explains every code). It looks only at what went over the wire, so it works on any server,
dscodec's or not. Strict validation against the official SDK types runs when the ``openai`` / ``anthropic``
packages are installed (extra ``testing``); the rest needs nothing beyond dscodec.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from dscodec.conversation import Protocol
from dscodec.errors import shown
from dscodec.protocols._wire import WireEvent
from dscodec.testing._sse import Frame, parse_sse
from dscodec.testing.lint._base import Event, Report
from dscodec.testing.lint._rules import RULES, Finding, Rule
from dscodec.testing.lint._sdk import sdk_available
from dscodec.testing.lint.chat import lint_chat_body, lint_chat_stream
from dscodec.testing.lint.messages import lint_messages_body, lint_messages_stream
from dscodec.testing.lint.responses import lint_responses_body, lint_responses_stream
from dscodec.testing.transcript import Transcript

__all__ = ["RULES", "Finding", "Rule", "lint", "sdk_available"]

#: What :func:`lint` takes: SSE text or bytes, a JSON body (as text, bytes or a mapping), a list of frames, a list
#: of events (:class:`~dscodec.WireEvent` or dicts), or a transcript (its answer; its request unless one is given).
Answer = (
    str
    | bytes
    | Mapping[str, Any]
    | Sequence[Frame]
    | Sequence[WireEvent]
    | Sequence[Mapping[str, Any]]
    | Transcript
)

_STREAMS = {
    "chat_completions": lint_chat_stream,
    "responses": lint_responses_stream,
    "messages": lint_messages_stream,
}
_BODIES = {
    "chat_completions": lint_chat_body,
    "responses": lint_responses_body,
    "messages": lint_messages_body,
}


def _cut_frame(report: Report, rest: str) -> list[Frame]:
    """The frame a stream ends inside (``rest``, the text after its last complete frame; none when empty), read as
    if it had ended there, and GEN009 for it."""
    if not rest:
        return []
    report.add("GEN009", f"the stream ends inside a frame: {rest[:60]!r}")
    return parse_sse(rest + "\n\n")[0]


def lint(
    protocol: Protocol,
    answer: Answer,
    *,
    request: Mapping[str, Any] | None = None,
    sdk: bool = True,
) -> list[Finding]:
    """Check ``answer`` against the grammar of ``protocol``; an empty list when it is clean.

    Args:
        protocol: ``"chat_completions"``, ``"responses"`` or ``"messages"``.
        answer: see :data:`Answer`. Text that is one JSON object is a complete body; text that is other JSON
            (an array, a number) is a body that is no object (GEN001); other text is an SSE stream. A transcript
            that records no answer is GEN008. Frames and SSE text are checked as sent (event names, Chat's ``[DONE]``); a list of events
            has no transport, so those two checks are skipped.
        request: the request body, for the rules that depend on it (Chat: ``stream_options.include_usage``).
        sdk: validate against the official SDK types when they are installed (True or False).

    Examples:
        >>> stream = 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",' \\
        ...     '"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}\\n\\ndata: [DONE]\\n\\n'
        >>> [finding.code for finding in lint("chat_completions", stream)]
        ['CHT001']

    Raises:
        ValueError: an unknown ``protocol``.
        TypeError: an ``answer`` of another kind (an item of it named by its index), a ``request`` that is no
            dict, or an ``sdk`` that is no bool.
    """
    if not isinstance(protocol, str) or protocol not in _STREAMS:
        raise ValueError(
            f"unknown protocol {shown(protocol)}; expected chat_completions, responses or messages"
        )
    if type(sdk) is not bool:
        raise TypeError(f"sdk must be True or False, not {shown(sdk, 60)}")
    if isinstance(answer, Transcript):
        request = request if request is not None else answer.request
        if not answer.answered:
            if request is not None and not isinstance(request, Mapping):
                raise TypeError(
                    f"request must be the request body (a dict) or None, not {type(request).__name__}"
                )
            report = Report()
            report.add("GEN008", "the transcript records no answer: no frame and no response line")
            return report.findings
        # What ``record`` noted of the answer's bytes: they were not UTF-8, or the stream ended inside a frame.
        not_utf8 = answer.meta.get("not_utf8")
        rest = answer.meta.get("unterminated") if answer.frames is not None else None
        unterminated = rest if isinstance(rest, str) else ""
        answer = answer.answer()
    else:
        not_utf8, unterminated = None, ""
    if request is not None and not isinstance(request, Mapping):
        raise TypeError(f"request must be the request body (a dict) or None, not {type(request).__name__}")
    report = Report()
    if isinstance(not_utf8, str) and not_utf8:
        report.add("GEN010", f"the answer was not UTF-8 ({not_utf8[:60]}): a client reads U+FFFD there")
    if isinstance(answer, (str, bytes, bytearray)):
        if isinstance(answer, str):
            text = answer
        else:
            try:
                text = bytes(answer).decode("utf-8")
            except UnicodeDecodeError as exc:
                # Read on as a client reads it (each bad byte a U+FFFD), and say so: its text is not what was sent.
                report.add(
                    "GEN010",
                    f"the answer is not UTF-8 ({exc.reason} at byte {exc.start}): a client reads U+FFFD there",
                )
                text = bytes(answer).decode("utf-8", errors="replace")
        body = _json_object(text)
        if body is not None:
            _BODIES[protocol](report, body, text, sdk=sdk)
            return report.findings
        if text.lstrip().startswith("{"):  # a body, not a stream (no SSE line starts with a brace)
            report.add("GEN001", f"the body is not a JSON object: {text.strip()[:60]!r}")
            return report.findings
        other = _json_value(text)
        if other is not None:  # JSON, but no object: a body (an array, a number), not an SSE stream
            report.add("GEN001", f"the body is a JSON {other}, not an object: {text.strip()[:60]!r}")
            return report.findings
        frames, rest = parse_sse(text)
        frames += _cut_frame(report, rest)
        _stream(protocol, frames, report, request=request, transport=True, sdk=sdk)
        return report.findings
    if isinstance(answer, Mapping):
        written = _json_text(answer)
        if written is None:
            report.add(
                "GEN001",
                f"the body is not JSON data (it holds a value JSON has none for): {shown(answer, 60)}",
            )
            return report.findings
        _BODIES[protocol](report, answer, written, sdk=sdk)
        return report.findings
    if isinstance(answer, AbstractSet) or not isinstance(answer, Iterable):  # a set has no order: no stream
        raise TypeError(
            "an answer is a Transcript, SSE or JSON text, a list of frames or of event dicts, or a response "
            f"body; not {type(answer).__name__}"
        )
    items = list(answer)
    transport = all(isinstance(item, Frame) for item in items)
    frames = [_as_frame(item, index) for index, item in enumerate(items)]
    frames += _cut_frame(report, unterminated)  # as for SSE text that ends inside a frame
    _stream(protocol, frames, report, request=request, transport=transport, sdk=sdk)
    return report.findings


def _json_text(value: Any, **options: Any) -> str | None:
    """``value`` written as JSON text, or None when it holds a value JSON has none for."""
    try:
        return json.dumps(value, ensure_ascii=False, **options)
    except (TypeError, ValueError, RecursionError):  # a set, an object, an integer Python cannot write out
        return None


def _json_value(text: str) -> str | None:
    """What JSON value ``text`` holds when it is JSON but no object (``"array"``, ``"number"``, ...), else None."""
    stripped = text.strip()
    if not stripped or stripped[0] not in '[-0123456789"tfnNI':  # cheap: SSE text starts with a field name
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _as_frame(item: Any, index: int) -> Frame:
    if isinstance(item, Frame):
        return item
    if isinstance(item, WireEvent):
        return Frame(item.to_json(), item.event)
    if isinstance(item, Mapping):
        # An event that JSON cannot hold (a set, an integer of thousands of digits in it) becomes a frame whose
        # data is no JSON, which the frame checks report (GEN001).
        text = _json_text(item, separators=(",", ":"))
        return Frame(text if text is not None else shown(item, 60))
    raise TypeError(
        f"answer[{index}] is a {type(item).__name__}: a list to lint holds frames, events or dicts"
    )


def _stream(
    protocol: Protocol,
    frames: list[Frame],
    report: Report,
    *,
    request: Mapping[str, Any] | None,
    transport: bool,
    sdk: bool,
) -> None:
    if not frames:
        report.add("GEN008", "the stream has no frames")
        return
    events: list[Event] = []
    for index, frame in enumerate(frames):
        data: Any = None
        if frame.is_done and protocol == "chat_completions":
            events.append(Event(index, frame, None))
            continue
        try:
            data = json.loads(frame.data)
        except RecursionError:
            report.add("GEN001", "the data is nested too deeply to read", index)
        except ValueError:
            what = "a [DONE] frame, which only Chat Completions sends" if frame.is_done else "not JSON"
            report.add("GEN001", f"the data is {what}: {frame.data[:60]!r}", index)
        else:
            if not isinstance(data, dict):
                report.add("GEN001", f"the data is a JSON {type(data).__name__}, not an object", index)
                data = None
        if transport and protocol == "chat_completions" and frame.event is not None:
            report.add("GEN002", f"SSE event name {frame.event!r}: Chat Completions frames carry none", index)
        elif transport and data is not None and protocol != "chat_completions":
            kind = data.get("type")
            if frame.event is None and protocol == "messages":
                report.add("GEN002", f"no SSE event name (the type is {kind!r})", index)
            elif frame.event is not None and frame.event != kind:
                report.add("GEN002", f"SSE event name {frame.event!r} but type {kind!r}", index)
        events.append(Event(index, frame, data))
    _STREAMS[protocol](events, report, request=request, transport=transport, sdk=sdk)
