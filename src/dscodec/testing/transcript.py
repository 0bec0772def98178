"""Transcripts: one request, what the model backend produced for it, and what went over the wire.

A transcript is a JSON Lines file (``docs/testing.md`` describes every line). The first line is the header,
which names the format and its version; then come the request body, the backend items in the order the backend
yielded them, and the answer: SSE frames for a streamed answer, or the JSON body with its HTTP status. A stream
may be followed by the complete response it adds up to, so a reviewer reads the result without the frames::

    {"kind": "transcript", "format": "dscodec-transcript", "version": 1, "protocol": "chat_completions", ...}
    {"kind": "request", "body": {"model": "DeepSeek-V4-Pro", "messages": [...], "stream": true}}
    {"kind": "usage", "prompt_tokens": 12, "cached_tokens": 0, "system_fingerprint": null}
    {"kind": "text", "text": "Hello", "token_count": 1}
    {"kind": "finish", "reason": "stop"}
    {"kind": "frame", "event": null, "data": {"id": "chatcmpl-1", "object": "chat.completion.chunk", ...}}
    {"kind": "frame", "event": null, "raw": "[DONE]"}
    {"kind": "accumulated", "body": {"id": "chatcmpl-1", "object": "chat.completion", ...}}

Each line is one JSON object, so a change to one frame is a change to one line of a diff.

Since format version 2 a file may hold several transcripts one after the other, each starting with its own
header line (for example one request answered under several chunkings of the same model output); read such a
file with :func:`load_transcripts`. A version 1 file is a version 2 file that holds one transcript.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, cast, get_args

from dscodec.conversation import Protocol
from dscodec.errors import DscodecError, shown
from dscodec.testing._sse import Frame

__all__ = [
    "FORMAT",
    "VERSION",
    "BackendItem",
    "Failure",
    "FileKind",
    "Finish",
    "LogprobEntry",
    "Origin",
    "Text",
    "Tokens",
    "Transcript",
    "TranscriptError",
    "Usage",
    "check_transcript",
    "dump_transcript",
    "dump_transcripts",
    "dumps_transcript",
    "dumps_transcripts",
    "file_kind",
    "is_header_line",
    "is_transcript",
    "load_transcript",
    "load_transcripts",
    "loads_transcript",
    "loads_transcripts",
    "parse_lines",
    "starts_as_transcript",
    "transcript_lines",
]

#: The ``format`` of a transcript header.
FORMAT = "dscodec-transcript"
#: The format version this module writes; it reads this one and older ones. Version 2 added files holding
#: several transcripts (one header line each); nothing else changed, so every version 1 file reads as before.
VERSION = 2

#: Where a transcript's answer came from: dscodec itself (``codec``: the backend items are what the backend
#: really produced), a live server (``live``: the backend items are derived from the answer), or a recording
#: made outside dscodec (``reference``).
Origin = Literal["codec", "live", "reference"]

_PROTOCOLS: tuple[str, ...] = get_args(Protocol)
_ORIGINS: tuple[str, ...] = get_args(Origin)
_FINISHES = (None, "stop", "length", "content_filter")


class TranscriptError(DscodecError):
    """A transcript that cannot be read (not JSON Lines, an unknown line, a newer format version) or written."""


#: A token's log probability, or ``(logprob, ((alternative_id, logprob), ...))``.
LogprobEntry = float | tuple[float, tuple[tuple[int, float], ...]]

#: Token counts are ints from 0 to 2**63 - 1 and token ids ints from 0 to 2**32 - 1, as a stream processor takes
#: them (``dscodec.processor``): an item out of these bounds is refused when it is made, not answered with a 502.
_COUNT_LIMIT = 2**63
_ID_LIMIT = 2**32


def _check_count(value: object, field: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be an int, not {type(value).__name__}")
    if not 0 <= value < _COUNT_LIMIT:
        raise ValueError(f"{field} must be an int from 0 to 2**63 - 1, not {shown(value)}")


def _check_logprob(value: object, field: str) -> None:
    """A log probability: a real number (not a bool), finite or ``-inf``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{field}: a log probability entry is a number or (number, ((id, number), ...)), not {shown(value)}"
        )
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError):  # an integer beyond the float range
        raise ValueError(f"{field} must be a finite number or -inf, not {shown(value)}") from None
    if math.isnan(number) or number == math.inf:
        raise ValueError(f"{field} must be a finite number or -inf, not {number}")


def _pairs(value: object) -> tuple[Any, ...] | None:
    """``value`` as a tuple when it is a tuple or a list, else None."""
    return tuple(value) if isinstance(value, (tuple, list)) else None


def _checked_entry(entry: object, field: str) -> LogprobEntry:
    """A log probability entry, its lists made tuples; refused by name when it is none."""
    if not isinstance(entry, (tuple, list)):
        _check_logprob(entry, field)
        return entry  # type: ignore[return-value]
    shape = (
        f"{field}: a log probability entry is a number or (number, ((id, number), ...)), not {shown(entry)}"
    )
    pair = _pairs(entry)
    top = _pairs(pair[1]) if pair is not None and len(pair) == 2 else None
    if pair is None or top is None:
        raise TypeError(shape)
    _check_logprob(pair[0], f"{field}[0]")
    alternatives: list[tuple[int, Any]] = []
    for j, alternative in enumerate(top):
        alt = _pairs(alternative)
        if alt is None or len(alt) != 2:
            raise TypeError(shape)
        alt_id, alt_logprob = alt
        if isinstance(alt_id, bool) or not isinstance(alt_id, int):
            raise TypeError(
                f"{field}[1][{j}]: a log probability entry's token id must be an int, not {shown(alt_id)}"
            )
        if not 0 <= alt_id < _ID_LIMIT:
            raise ValueError(f"{field}[1][{j}]: a token id must be from 0 to 2**32 - 1, not {shown(alt_id)}")
        _check_logprob(alt_logprob, f"{field}[1][{j}][1]")
        alternatives.append((alt_id, alt_logprob))
    return (pair[0], tuple(alternatives))


@dataclass(frozen=True, slots=True)
class Usage:
    """The prompt usage a backend reports before its output (``PromptUsage`` of the example server).

    Raises:
        TypeError: a count is no int, or ``system_fingerprint`` neither a str nor None.
        ValueError: a count is below 0 or not below 2**63.
    """

    prompt_tokens: int = 0
    cached_tokens: int = 0
    system_fingerprint: str | None = None

    def __post_init__(self) -> None:
        _check_count(self.prompt_tokens, "Usage.prompt_tokens")
        _check_count(self.cached_tokens, "Usage.cached_tokens")
        if self.system_fingerprint is not None and not isinstance(self.system_fingerprint, str):
            raise TypeError(
                f"Usage.system_fingerprint must be a str or None, not {type(self.system_fingerprint).__name__}"
            )


@dataclass(frozen=True, slots=True)
class Text:
    """Generated text, counted as ``token_count`` tokens.

    Raises:
        TypeError: ``text`` is no str, or ``token_count`` no int.
        ValueError: ``token_count`` is below 0 or not below 2**63.
    """

    text: str
    token_count: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Text.text must be a str, not {type(self.text).__name__}")
        _check_count(self.token_count, "Text.token_count")


@dataclass(frozen=True, slots=True)
class Tokens:
    """Generated token ids, with one log probability entry per id when the backend gave them.

    ``ids`` and ``logprobs`` may be given as lists; they are kept as tuples. Log probabilities are numbers, finite
    or ``-inf``, as a stream processor takes them.

    Raises:
        TypeError: ``ids`` or ``logprobs`` is no tuple or list, an id is no int, or a log probability entry is
            neither a number nor ``(number, ((id, number), ...))``.
        ValueError: ``logprobs`` holds more or fewer entries than there are ids, an id is below 0 or not below
            2**32, or a log probability is NaN or ``+inf``.
    """

    ids: tuple[int, ...]
    logprobs: tuple[LogprobEntry, ...] | None = None

    def __post_init__(self) -> None:
        ids = self.ids
        if type(ids) is not tuple or not all(type(i) is int and 0 <= i < _ID_LIMIT for i in ids):
            ids = self._checked_ids()
        logprobs = self.logprobs
        if logprobs is None:
            return
        if type(logprobs) is not tuple:
            logprobs = _pairs(logprobs)
            if logprobs is None:
                raise TypeError(
                    f"Tokens.logprobs must be a tuple, a list or None, not {type(self.logprobs).__name__}"
                )
            object.__setattr__(self, "logprobs", logprobs)
        if len(logprobs) != len(ids):
            raise ValueError(
                f"Tokens has {len(ids)} ids and {len(logprobs)} log probability entries: give one log "
                "probability entry per id, or logprobs=None"
            )
        # Floats, finite or -inf, are the common entries: kept as they are, anything else checked in full.
        if not all(
            type(entry) is float and not math.isnan(entry) and entry != math.inf for entry in logprobs
        ):
            checked = tuple(
                _checked_entry(entry, f"Tokens.logprobs[{k}]") for k, entry in enumerate(logprobs)
            )
            object.__setattr__(self, "logprobs", checked)

    def _checked_ids(self) -> tuple[int, ...]:
        ids = _pairs(self.ids)
        if ids is None:
            raise TypeError(f"Tokens.ids must be a tuple or list of ints, not {type(self.ids).__name__}")
        for k, token_id in enumerate(ids):
            if isinstance(token_id, bool) or not isinstance(token_id, int):
                raise TypeError(f"Tokens.ids[{k}] must be an int, not {shown(token_id)}")
            if not 0 <= token_id < _ID_LIMIT:
                raise ValueError(
                    f"Tokens.ids[{k}] must be a token id from 0 to 2**32 - 1, not {shown(token_id)}"
                )
        object.__setattr__(self, "ids", ids)
        return ids


@dataclass(frozen=True, slots=True)
class Finish:
    """The end of the output: ``"stop"``, ``"length"``, ``"content_filter"``, or None (no reason given).

    Raises:
        TypeError: ``reason`` is neither a str nor None.
        ValueError: ``reason`` is another string.
    """

    reason: Literal["stop", "length", "content_filter"] | None = "stop"

    def __post_init__(self) -> None:
        if self.reason is not None and not isinstance(self.reason, str):
            raise TypeError(f"Finish.reason must be a str or None, not {type(self.reason).__name__}")
        if self.reason not in _FINISHES:
            raise ValueError(
                f"Finish.reason must be 'stop', 'length', 'content_filter' or None, not {shown(self.reason)}"
            )


@dataclass(frozen=True, slots=True)
class Failure:
    """The backend failed at this point (the model server crashed or refused).

    ``status`` is the client error (4xx) a backend refused the request with, before any output, as a server
    answers it; None for a failure (the server then answers 502, or ends a started stream with the protocol's
    error event).

    Raises:
        TypeError: ``message`` is no str, or ``status`` neither an int nor None.
        ValueError: ``status`` is no client error (400 to 499).
    """

    message: str = "the model server failed"
    status: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.message, str):
            raise TypeError(f"Failure.message must be a str, not {type(self.message).__name__}")
        if self.status is None:
            return
        if isinstance(self.status, bool) or not isinstance(self.status, int):
            raise TypeError(f"Failure.status must be an int or None, not {type(self.status).__name__}")
        if not 400 <= self.status <= 499:
            raise ValueError(
                f"Failure.status must be a client error (400 to 499) or None, not {shown(self.status)}: a "
                "failure without a status is answered 502"
            )


#: One item of a backend's output.
BackendItem = Usage | Text | Tokens | Finish | Failure


@dataclass
class Transcript:
    """One exchange: request, backend output, answer.

    ``protocol``, ``request`` and ``backend`` may be given by position; the other fields are keyword-only. Every
    field is checked when the transcript is made, and again when it is written (a field may be changed in
    between), by the rules the reader checks its lines by: a transcript that can be made can be written, and
    the file it is written to reads back.

    Attributes:
        protocol: ``"chat_completions"``, ``"responses"`` or ``"messages"``.
        request: the request body as the client sent it.
        backend: what the model backend produced, in order.
        frames: the SSE frames of a streamed answer (None for a JSON answer).
        response: the JSON body of a non-streamed answer, or of an error answer (None for a stream).
        response_text: the body of a non-streamed answer that is no JSON object (cut short, an HTML error page),
            kept as it came (None otherwise).
        status: the HTTP status of the answer (100 to 599).
        accumulated: the complete response a stream adds up to (optional, for reading).
        name: a short name (the file name without ``.jsonl`` when empty).
        origin: where the answer came from (:data:`Origin`).
        response_id, created, signature: what a replay gives the stream processor, so its output is the
            recorded one before any normalisation (None: a replay picks fixed values).
        meta: free-form notes kept with the header (``description``, ``url``, ...).

    Raises:
        TypeError: a field of the wrong type (``request`` that is no dict, a backend item that is none, a frame
            that is no :class:`Frame`, ...), named in the message.
        ValueError: an unknown ``protocol`` or ``origin``, a ``status`` outside 100 to 599, or both a
            ``response`` and a ``response_text`` (the text is kept only for a body that is no JSON object).
    """

    protocol: Protocol
    request: dict[str, Any]
    backend: list[BackendItem] = field(default_factory=list)
    _: KW_ONLY
    frames: list[Frame] | None = None
    response: dict[str, Any] | None = None
    response_text: str | None = None
    status: int = 200
    accumulated: dict[str, Any] | None = None
    name: str = ""
    origin: Origin = "codec"
    response_id: str | None = None
    created: int | None = None
    signature: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.backend, tuple):
            self.backend = list(self.backend)
        if isinstance(self.frames, tuple):
            self.frames = list(self.frames)
        check_transcript(self)

    @property
    def streamed(self) -> bool:
        """Whether the answer is an event stream."""
        return self.frames is not None

    @property
    def answered(self) -> bool:
        """Whether an answer is recorded: frames, a response body, or a response's text."""
        return self.frames is not None or self.response is not None or self.response_text is not None

    def answer(self) -> list[Frame] | dict[str, Any] | str:
        """The answer as the linter takes it: the frames of a stream, else the JSON body, else the body's text
        (``{}`` when no answer is recorded: see :attr:`answered`)."""
        if self.frames is not None:
            return self.frames
        if self.response is None and self.response_text is not None:
            return self.response_text
        return self.response if self.response is not None else {}


def _kind_name(value: object) -> str:
    return type(value).__name__


def _check_optional(value: object, kind: type, field_name: str, what: str) -> None:
    if value is not None and not isinstance(value, kind):
        raise TypeError(f"Transcript.{field_name} must be {what} or None, not {_kind_name(value)}")


def check_transcript(transcript: Transcript) -> None:
    """Check every field of ``transcript`` by the reader's rules (see :class:`Transcript`).

    Raises:
        TypeError: a field of the wrong type, named.
        ValueError: a field of the right type that no transcript file can hold, named.
    """
    t = transcript
    if not isinstance(t.protocol, str):
        raise TypeError(f"Transcript.protocol must be a str, not {_kind_name(t.protocol)}")
    if t.protocol not in _PROTOCOLS:
        raise ValueError(
            f"Transcript.protocol must be one of {', '.join(_PROTOCOLS)}, not {shown(t.protocol, limit=60)}"
        )
    if not isinstance(t.request, dict):
        raise TypeError(f"Transcript.request must be a dict (the request body), not {_kind_name(t.request)}")
    if not isinstance(t.backend, (list, tuple)):
        raise TypeError(f"Transcript.backend must be a list of backend items, not {_kind_name(t.backend)}")
    for k, item in enumerate(t.backend):
        if not isinstance(item, (Usage, Text, Tokens, Finish, Failure)):
            raise TypeError(
                f"Transcript.backend[{k}] must be a backend item (Usage, Text, Tokens, Finish or Failure), "
                f"not {_kind_name(item)}"
            )
    if t.frames is not None:
        if not isinstance(t.frames, (list, tuple)):
            raise TypeError(f"Transcript.frames must be a list of Frame or None, not {_kind_name(t.frames)}")
        for k, frame in enumerate(t.frames):
            if not isinstance(frame, Frame):
                raise TypeError(f"Transcript.frames[{k}] must be a Frame, not {_kind_name(frame)}")
    _check_optional(t.response, dict, "response", "a dict (a JSON body)")
    _check_optional(t.response_text, str, "response_text", "a str")
    _check_optional(t.accumulated, dict, "accumulated", "a dict (a JSON body)")
    if isinstance(t.status, bool) or not isinstance(t.status, int):
        raise TypeError(f"Transcript.status must be an int, not {_kind_name(t.status)}")
    if not 100 <= t.status <= 599:
        raise ValueError(f"Transcript.status must be an HTTP status from 100 to 599, not {shown(t.status)}")
    if t.response is not None and t.response_text is not None:
        raise ValueError(
            "Transcript has a response body and a response_text: response_text is kept only for a body that "
            "is no JSON object"
        )
    if not isinstance(t.name, str):
        raise TypeError(f"Transcript.name must be a str, not {_kind_name(t.name)}")
    if not isinstance(t.origin, str):
        raise TypeError(f"Transcript.origin must be a str, not {_kind_name(t.origin)}")
    if t.origin not in _ORIGINS:
        raise ValueError(
            f"Transcript.origin must be one of {', '.join(_ORIGINS)}, not {shown(t.origin, limit=60)}"
        )
    _check_optional(t.response_id, str, "response_id", "a str")
    _check_optional(t.signature, str, "signature", "a str")
    if t.created is not None and (isinstance(t.created, bool) or not isinstance(t.created, int)):
        raise TypeError(f"Transcript.created must be an int or None, not {_kind_name(t.created)}")
    if not isinstance(t.meta, dict):
        raise TypeError(f"Transcript.meta must be a dict, not {_kind_name(t.meta)}")


# -- writing ------------------------------------------------------------------------------------------------


_SURROGATE = re.compile("[\ud800-\udfff]")


def _dumps(value: Any, kind: str = "") -> str:
    """One line's JSON text. What a server sent is kept however broken: a lone surrogate (from a ``\\ud800``
    escape) is written as that escape, so that the file stays UTF-8, and a number JSON has no value for (NaN, or
    ``1e400``, which reads as infinity) is written as ``NaN`` / ``Infinity`` / ``-Infinity``, which the reader
    reads back.

    Raises:
        TranscriptError: the value holds something JSON cannot (a set, an object), holds itself, or nests deeper
            than Python's recursion allows.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError, RecursionError) as exc:
        what = f"the {kind} line" if kind else "a line"
        reason = "it nests too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise TranscriptError(f"{what} cannot be written as JSON: {reason}") from None
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def _float_out(value: float) -> float | str:
    """JSON has no infinities: ``-inf`` is written as the string ``"-inf"`` (so are ``inf`` and ``nan``)."""
    return value if math.isfinite(value) else str(value)


def _logprob_out(entry: LogprobEntry) -> Any:
    if isinstance(entry, tuple):
        value, top = entry
        return [_float_out(value), [[alt_id, _float_out(alt)] for alt_id, alt in top]]
    return _float_out(entry)


def _item_line(item: BackendItem) -> dict[str, Any]:
    if isinstance(item, Usage):
        return {
            "kind": "usage",
            "prompt_tokens": item.prompt_tokens,
            "cached_tokens": item.cached_tokens,
            "system_fingerprint": item.system_fingerprint,
        }
    if isinstance(item, Text):
        return {"kind": "text", "text": item.text, "token_count": item.token_count}
    if isinstance(item, Tokens):
        line: dict[str, Any] = {"kind": "tokens", "ids": list(item.ids)}
        if item.logprobs is not None:
            line["logprobs"] = [_logprob_out(entry) for entry in item.logprobs]
        return line
    if isinstance(item, Finish):
        return {"kind": "finish", "reason": item.reason}
    if isinstance(item, Failure):
        if item.status is None:
            return {"kind": "failure", "message": item.message}
        return {"kind": "failure", "message": item.message, "status": item.status}
    raise TypeError(f"not a backend output item: {item!r:.100}")


def _frame_line(frame: Frame) -> dict[str, Any]:
    """A frame's line: its JSON as ``data`` (read back as compact JSON text, the same values), or its exact text
    as ``raw`` when the JSON would not come back as this frame: a frame that is no JSON object or array (a bare
    scalar keeps its spelling), one whose data spans several lines (a multi-line ``data:`` field), and one that
    names a key twice in an object (a parsed object keeps one of them)."""
    raw = {"kind": "frame", "event": frame.event, "raw": frame.data}
    if "\n" in frame.data:
        return raw
    try:
        data = json.loads(frame.data, object_pairs_hook=_unique_pairs)
    except (ValueError, RecursionError):
        return raw
    if not isinstance(data, (dict, list)):
        return raw
    return {"kind": "frame", "event": frame.event, "data": data}


def transcript_lines(transcript: Transcript) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``transcript``, one per line, header first."""
    if not isinstance(transcript, Transcript):
        raise TypeError(f"transcript must be a Transcript, not {type(transcript).__name__}")
    check_transcript(transcript)  # a field may have been changed since the transcript was made
    header: dict[str, Any] = {
        "kind": "transcript",
        "format": FORMAT,
        "version": VERSION,
        "protocol": transcript.protocol,
        "name": transcript.name,
        "origin": transcript.origin,
    }
    for key in ("response_id", "created", "signature"):
        value = getattr(transcript, key)
        if value is not None:
            header[key] = value
    if transcript.meta:
        header["meta"] = transcript.meta
    if transcript.frames == []:  # a stream without a single frame: no frame line says it was a stream
        header["empty_stream"] = True
    yield header
    yield {"kind": "request", "body": transcript.request}
    for item in transcript.backend:
        yield _item_line(item)
    if transcript.frames is not None:
        for frame in transcript.frames:
            yield _frame_line(frame)
    if transcript.response is not None:
        yield {"kind": "response", "status": transcript.status, "body": transcript.response}
    elif transcript.response_text is not None:
        yield {"kind": "response", "status": transcript.status, "raw": transcript.response_text}
    if transcript.accumulated is not None:
        yield {"kind": "accumulated", "body": transcript.accumulated}


def dumps_transcript(transcript: Transcript) -> str:
    """``transcript`` as JSON Lines text (ends with a newline).

    Raises:
        TranscriptError: a value JSON cannot hold (a set, an object, a dict holding itself) in a line.
        TypeError: ``transcript`` is no :class:`Transcript`, or one of its fields is of the wrong type (named).
        ValueError: a field holds a value no transcript file can (named; see :class:`Transcript`).
    """
    return "".join(_dumps(line, line["kind"]) + "\n" for line in transcript_lines(transcript))


def dumps_transcripts(transcripts: Iterable[Transcript]) -> str:
    """Several transcripts as the JSON Lines text of one file, one after the other (format version 2).

    Raises:
        ValueError: ``transcripts`` is empty (a file of no transcript is no transcript file: the reader refuses
            it).
        TypeError: ``transcripts`` is no iterable of :class:`Transcript`.
        TranscriptError: as for :func:`dumps_transcript`.
    """
    if isinstance(transcripts, (Transcript, str, bytes)) or not isinstance(transcripts, Iterable):
        raise TypeError(f"transcripts must be an iterable of Transcript, not {type(transcripts).__name__}")
    parts = [dumps_transcript(transcript) for transcript in transcripts]
    if not parts:
        raise ValueError("transcripts is empty: a transcript file holds at least one transcript")
    return "".join(parts)


def dump_transcript(transcript: Transcript, path: str | os.PathLike[str]) -> None:
    """Write ``transcript`` to ``path`` (UTF-8 JSON Lines).

    Raises:
        TranscriptError: the file cannot be written (a directory, a folder that does not exist, no permission),
            or the transcript holds a value JSON cannot (see :func:`dumps_transcript`); the file is then left as
            it was.
        TypeError: ``transcript`` is no :class:`Transcript`, or ``path`` no str or path.
    """
    dump_transcripts([transcript], path)


def dump_transcripts(transcripts: Iterable[Transcript], path: str | os.PathLike[str]) -> None:
    """Write several transcripts to one file at ``path``, in order.

    Raises:
        TranscriptError: the file cannot be written (a directory, a folder that does not exist, no permission),
            or a transcript holds a value JSON cannot; the file is then left as it was.
        TypeError: an item is no :class:`Transcript`, or ``path`` no str or path.
        ValueError: ``transcripts`` is empty, or a transcript holds a value no file can (see
            :func:`dumps_transcript`).
    """
    _check_path(path)
    # Every byte first: a transcript that cannot be written leaves the file as it was.
    data = dumps_transcripts(transcripts).encode("utf-8")
    try:
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise TranscriptError(f"{os.fspath(path)}: cannot be written: {exc.strerror or exc}") from None


# -- reading ------------------------------------------------------------------------------------------------


def _float_in(value: Any, where: str) -> float:
    """A log probability as written: a number, or the string ``"-inf"`` (JSON has no infinities)."""
    if value == "-inf":
        return -math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TranscriptError(
            f'{where}: a log probability must be a finite number or "-inf", not {shown(value)}'
        )
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits: valid JSON, no log probability
        raise TranscriptError(
            f'{where}: a log probability must be a finite number or "-inf", not {shown(value)}'
        ) from None
    if math.isnan(number) or number == math.inf:  # the reader takes NaN and Infinity, as Python's json does
        raise TranscriptError(f'{where}: a log probability must be a finite number or "-inf", not {number}')
    return number


def _logprob_in(value: Any, where: str) -> LogprobEntry:
    if isinstance(value, list):
        if (
            len(value) != 2
            or not isinstance(value[1], list)
            or not all(isinstance(pair, list) and len(pair) == 2 for pair in value[1])
        ):
            raise TranscriptError(
                f"{where}: a log probability entry is a number or [logprob, [[id, logprob]...]]"
            )
        top = tuple(
            (_int(pair[0], where, "a log probability entry's token id"), _float_in(pair[1], where))
            for pair in value[1]
        )
        return (_float_in(value[0], where), top)
    return _float_in(value, where)


def _int(value: Any, where: str, name: str) -> int:
    """``value``, the integer field ``name`` of a line (named in the message when it is none)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TranscriptError(f"{where}: {name} must be an integer, not {shown(value, limit=60)}")
    return value


def _str_or_none(value: Any, where: str, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TranscriptError(f"{where}: {name} must be a string or null, not {shown(value, limit=60)}")
    return value


def _item(line: dict[str, Any], where: str) -> BackendItem:
    """The backend item of a line; a value the item refuses (its constructor's rules) is named with the line."""
    try:
        return _item_of(line, where)
    except (TypeError, ValueError) as exc:
        raise TranscriptError(f"{where}: {exc}") from None


def _item_of(line: dict[str, Any], where: str) -> BackendItem:
    kind = line["kind"]
    if kind == "usage":
        return Usage(
            _int(line.get("prompt_tokens", 0), where, "prompt_tokens"),
            _int(line.get("cached_tokens", 0), where, "cached_tokens"),
            _str_or_none(line.get("system_fingerprint"), where, "system_fingerprint"),
        )
    if kind == "text":
        text = line.get("text")
        if not isinstance(text, str):
            raise TranscriptError(f"{where}: a text item needs a string 'text'")
        return Text(text, _int(line.get("token_count", 0), where, "token_count"))
    if kind == "tokens":
        ids = line.get("ids")
        if not isinstance(ids, list):
            raise TranscriptError(f"{where}: a tokens item needs a list 'ids'")
        logprobs = line.get("logprobs")
        if logprobs is not None and not isinstance(logprobs, list):
            raise TranscriptError(f"{where}: a tokens item's 'logprobs' must be a list or null")
        if logprobs is not None and len(logprobs) != len(ids):
            raise TranscriptError(
                f"{where}: a tokens item has {len(ids)} ids and {len(logprobs)} log probability entries; "
                "it needs one entry per id, or no 'logprobs'"
            )
        entries = None if logprobs is None else tuple(_logprob_in(lp, where) for lp in logprobs)
        return Tokens(tuple(_int(i, where, f"ids[{k}]") for k, i in enumerate(ids)), entries)
    if kind == "finish":
        reason = line.get("reason")
        if reason not in _FINISHES:
            raise TranscriptError(f"{where}: finish reason must be stop, length, content_filter or null")
        return Finish(reason)
    message = line.get("message", "")
    if not isinstance(message, str):
        raise TranscriptError(
            f"{where}: a failure's message must be a string, not {shown(message, limit=60)}"
        )
    status = line.get("status")
    if status is not None and not (type(status) is int and 400 <= status <= 499):
        raise TranscriptError(f"{where}: a failure's status must be a client error (400 to 499) or absent")
    return Failure(message, status)


def _frame(line: dict[str, Any], where: str) -> Frame:
    event = _str_or_none(line.get("event"), where, "a frame's event")
    if "raw" in line and "data" in line:
        raise TranscriptError(f"{where}: a frame line holds a 'data' or a 'raw' text, not both")
    if "raw" in line:
        raw = line["raw"]
        if not isinstance(raw, str):
            raise TranscriptError(f"{where}: a frame's 'raw' must be a string")
        return Frame(raw, event)
    if "data" not in line:
        raise TranscriptError(f"{where}: a frame needs 'data' or 'raw'")
    return Frame(_FRAME_DATA.encode(line["data"]), event)


#: How a frame's data is written back to its text (one encoder for every frame).
_FRAME_DATA = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


_ITEM_KINDS = frozenset({"usage", "text", "tokens", "finish", "failure"})


#: The fields each kind of line may hold. A field of no line kind (a misspelt ``reasn``, which would otherwise
#: read as the field's default) is refused rather than dropped.
_FIELDS: dict[str, frozenset[str]] = {
    "transcript": frozenset(
        {
            "kind",
            "format",
            "version",
            "protocol",
            "name",
            "origin",
            "response_id",
            "created",
            "signature",
            "meta",
            "empty_stream",
        }
    ),
    "request": frozenset({"kind", "body"}),
    "usage": frozenset({"kind", "prompt_tokens", "cached_tokens", "system_fingerprint"}),
    "text": frozenset({"kind", "text", "token_count"}),
    "tokens": frozenset({"kind", "ids", "logprobs"}),
    "finish": frozenset({"kind", "reason"}),
    "failure": frozenset({"kind", "message", "status"}),
    "frame": frozenset({"kind", "event", "data", "raw"}),
    "response": frozenset({"kind", "status", "body", "raw"}),
    "accumulated": frozenset({"kind", "body"}),
}


def _check_fields(line: dict[str, Any], kind: str, where: str) -> None:
    """Refuse a field the line's kind does not have (format version 2 has no others)."""
    allowed = _FIELDS[kind]
    unknown = [name for name in line if name not in allowed]
    if unknown:
        raise TranscriptError(
            f"{where}: {'the header' if kind == 'transcript' else f'a {kind} line'} has no field {shown(unknown[0], limit=60)}; its fields are "
            f"{', '.join(sorted(allowed - {'kind'}))}"
        )


def _header(line: dict[str, Any], where: str) -> dict[str, Any]:
    if line.get("kind") != "transcript" or line.get("format") != FORMAT:
        raise TranscriptError(f"{where}: the first line must be the header of a {FORMAT} file")
    version = line.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= VERSION:
        raise TranscriptError(
            f"{where}: transcript format version {shown(version, limit=60)} is not supported; this dscodec reads "
            f"1 to {VERSION}"
        )
    if line.get("protocol") not in _PROTOCOLS:
        raise TranscriptError(f"{where}: unknown protocol {shown(line.get('protocol'), limit=60)}")
    if line.get("origin", "codec") not in _ORIGINS:
        raise TranscriptError(f"{where}: unknown origin {shown(line.get('origin'), limit=60)}")
    _check_fields(line, "transcript", where)
    return line


def parse_lines(
    lines: Iterable[dict[str, Any]], *, source: str = "<transcript>", first_line: int = 1
) -> Transcript:
    """One transcript from its decoded lines (header first; ``first_line`` numbers the lines in messages)."""
    iterator = iter(enumerate(lines, start=first_line))
    try:
        _, first = next(iterator)
    except StopIteration:
        raise TranscriptError(f"{source}: empty transcript") from None
    header = _header(first, f"{source}:{first_line}")
    at = f"{source}:{first_line}"
    meta = header.get("meta") or {}
    if not isinstance(meta, dict):
        raise TranscriptError(f"{at}: the header's 'meta' must be a JSON object")
    empty_stream = header.get("empty_stream", False)
    if not isinstance(empty_stream, bool):
        raise TranscriptError(f"{at}: the header's 'empty_stream' must be true or false")
    request: dict[str, Any] | None = None
    transcript = Transcript(
        protocol=cast(Protocol, header["protocol"]),
        request={},
        name=_str_or_none(header.get("name"), at, "name") or "",
        origin=cast(Origin, header.get("origin", "codec")),
        response_id=_str_or_none(header.get("response_id"), at, "response_id"),
        created=None if header.get("created") is None else _int(header["created"], at, "created"),
        signature=_str_or_none(header.get("signature"), at, "signature"),
        meta=dict(meta),
    )
    phase = 0  # how far the lines have come: _PHASES
    for number, line in iterator:
        where = f"{source}:{number}"
        kind = line.get("kind")
        if not isinstance(kind, str):
            raise TranscriptError(f"{where}: a line needs a string 'kind', not {shown(kind, limit=60)}")
        line_phase = _PHASES.get("item" if kind in _ITEM_KINDS else kind)
        if line_phase is None:
            raise TranscriptError(f"{where}: unknown line kind {shown(kind, limit=60)}")
        if line_phase < phase or (line_phase == phase and kind in _ONCE):
            raise TranscriptError(f"{where}: {_misplaced(kind, transcript, request is not None)}")
        phase = line_phase
        _check_fields(line, kind, where)
        if kind == "request":
            body = line.get("body")
            if not isinstance(body, dict):
                raise TranscriptError(f"{where}: the request body must be a JSON object")
            request = body
        elif kind in _ITEM_KINDS:
            transcript.backend.append(_item(line, where))
        elif kind == "frame":
            if transcript.frames is None:
                transcript.frames = []
            transcript.frames.append(_frame(line, where))
        elif kind == "response":
            if "raw" in line and "body" in line:
                raise TranscriptError(f"{where}: a response line holds a 'body' or a 'raw' text, not both")
            if "raw" in line:
                raw = line["raw"]
                if not isinstance(raw, str):
                    raise TranscriptError(f"{where}: a response's raw text must be a string")
                transcript.response_text = raw
            else:
                body = line.get("body")
                if not isinstance(body, dict):
                    raise TranscriptError(f"{where}: a response body must be a JSON object")
                transcript.response = body
            status = _int(line.get("status", 200), where, "the response's status")
            if not 100 <= status <= 599:
                raise TranscriptError(
                    f"{where}: the response's status must be an HTTP status from 100 to 599, not {status}"
                )
            transcript.status = status
        else:  # accumulated
            body = line.get("body")
            if not isinstance(body, dict):
                raise TranscriptError(f"{where}: an accumulated response must be a JSON object")
            transcript.accumulated = body
    if request is None:
        raise TranscriptError(f"{source}: the transcript has no request line")
    if empty_stream:
        if transcript.frames is not None:
            raise TranscriptError(
                f"{at}: the header says the stream is empty ('empty_stream'), yet frames follow"
            )
        transcript.frames = []
    transcript.request = request
    return transcript


#: The order of a transcript's lines after the header: the request, the backend items, the frames, the response
#: line, the accumulated response (a non-streamed answer may keep the events it was made of as frames too).
_PHASES = {"request": 1, "item": 2, "frame": 3, "response": 4, "accumulated": 5}
#: The line kinds a transcript holds at most one of.
_ONCE = frozenset({"request", "response", "accumulated"})


def _misplaced(kind: str, transcript: Transcript, requested: bool) -> str:
    """Why a line of ``kind`` cannot come where it does (the lines so far made ``transcript``)."""
    if kind in _ONCE and (
        (kind == "request" and requested)
        or (kind == "response" and (transcript.response is not None or transcript.response_text is not None))
        or (kind == "accumulated" and transcript.accumulated is not None)
    ):
        return f"a second {kind} line: a transcript holds one"
    return (
        f"a {kind} line out of order: the lines after the header are the request, the backend lines, the "
        "frames, the response line, then the accumulated line"
    )


def json_object(
    text: str, error: Callable[[str], Exception], *, not_json: str, not_object: str
) -> dict[str, Any]:
    """``text`` read as a JSON object (the transcript lines, the command line's JSON files).

    Raises:
        Exception: ``error(f"{not_json}: <the parser's message>")`` when ``text`` is not JSON or names a key
            twice in one object, ``error(not_object)`` when it is JSON but not an object.
    """
    try:
        # One decoder for every line (json.loads with a hook makes a new one per call); json.loads still reads
        # what is no plain str, and says what it says of a leading byte order mark.
        if type(text) is str and not text.startswith("\ufeff"):
            value = _UNIQUE_KEYS.decode(text)
        else:
            value = json.loads(text, object_pairs_hook=_unique_pairs)
    except ValueError as exc:  # a key named twice too (DuplicateKeyError): one of its values would be lost
        raise error(f"{not_json}: {exc}") from None
    except RecursionError:
        raise error(f"{not_json}: it is nested too deeply to read") from None
    if not isinstance(value, dict):
        raise error(not_object)
    return value


class DuplicateKeyError(ValueError):
    """A JSON object names one key twice: reading it as a dict would keep only one of the values."""


def names_a_key_twice(text: str) -> bool:
    """Whether JSON ``text`` names a key twice in one of its objects (False for text that is no JSON)."""
    try:
        json.loads(text, object_pairs_hook=_unique_pairs)
    except DuplicateKeyError:
        return True
    except (ValueError, RecursionError):
        return False
    return False


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict, refusing a key named twice (``json.loads``' ``object_pairs_hook``)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f"an object names the key {shown(key, limit=60)} twice")
            seen.add(key)
    return value


_UNIQUE_KEYS = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def _decode(text: str | bytes, source: str) -> list[tuple[int, dict[str, Any]]]:
    if isinstance(text, (bytes, bytearray)):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TranscriptError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    elif not isinstance(text, str):
        raise TypeError(f"a transcript is read from str or bytes, not {type(text).__name__}")
    text = text.removeprefix(_BOM)  # an editor's byte order mark is no part of the first line
    decoded: list[tuple[int, dict[str, Any]]] = []
    # Lines end at "\n" only: a JSON string may hold U+2028, U+0085 and other characters str.splitlines() splits at.
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        where = f"{source}:{number}:"
        value = json_object(
            line,
            TranscriptError,
            not_json=f"{where} not JSON",
            not_object=f"{where} every line must be a JSON object",
        )
        decoded.append((number, value))
    return decoded


def loads_transcripts(text: str | bytes, *, source: str = "<transcript>") -> list[Transcript]:
    """Read every transcript of a JSON Lines text: each starts at a header line (format version 2).

    Raises:
        TranscriptError: the text is not UTF-8, a line is not a JSON object, or a transcript is malformed or of
            a newer version.
        TypeError: ``text`` is neither ``str`` nor ``bytes``, or ``source`` is no ``str``.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a str (the name errors give the text), not {type(source).__name__}")
    decoded = _decode(text, source)
    if not decoded:
        raise TranscriptError(f"{source}: empty transcript")
    starts = [k for k, (_, line) in enumerate(decoded) if line.get("kind") == "transcript"]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)  # the first line must be a header: parse_lines says so
    out: list[Transcript] = []
    for at, end in zip(starts, [*starts[1:], len(decoded)]):
        first = decoded[at][0]
        part = [line for _, line in decoded[at:end]]
        if at and part[0].get("version") == 1:
            raise TranscriptError(f"{source}:{first}: a version 1 file holds one transcript")
        transcript = parse_lines(part, source=source, first_line=first)
        out.append(transcript)
    return out


def loads_transcript(text: str | bytes, *, source: str = "<transcript>") -> Transcript:
    """Read a transcript from JSON Lines text.

    Raises:
        TranscriptError: a line is not a JSON object, the transcript is malformed or of a newer version, or the
            text holds several transcripts (read those with :func:`loads_transcripts`).
        TypeError: ``text`` is neither ``str`` nor ``bytes``, or ``source`` is no ``str``.
    """
    found = loads_transcripts(text, source=source)
    if len(found) > 1:
        raise TranscriptError(
            f"{source}: holds {len(found)} transcripts; read them with load_transcripts / loads_transcripts"
        )
    return found[0]


def _check_path(path: object) -> None:
    """A path is a ``str`` or an ``os.PathLike``: anything else (an int, which ``open`` would take as a file
    descriptor to read or write and then close, None, bytes) is a ``TypeError`` before any file is touched."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")


def _read(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes (decoded by the reader, which names a file that is not UTF-8)."""
    _check_path(path)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise TranscriptError(f"{os.fspath(path)}: cannot be read: {exc.strerror}") from None


def _stem(path: str | os.PathLike[str]) -> str:
    return os.path.basename(os.fspath(path)).removesuffix(".jsonl")


def load_transcript(path: str | os.PathLike[str]) -> Transcript:
    """Read the transcript at ``path``; its name defaults to the file name without ``.jsonl``.

    Raises:
        TranscriptError: the file cannot be read, is not a transcript, or holds several.
        TypeError: ``path`` is no str or path (an int is not taken as a file descriptor).
    """
    transcript = loads_transcript(_read(path), source=os.fspath(path))
    if not transcript.name:
        transcript.name = _stem(path)
    return transcript


def load_transcripts(path: str | os.PathLike[str]) -> list[Transcript]:
    """Read every transcript of the file at ``path``, in order. A nameless one is named after the file
    (``<file>``, or ``<file>[<index>]`` when the file holds several).

    Raises:
        TranscriptError: the file cannot be read or a transcript in it is malformed.
        TypeError: ``path`` is no str or path (an int is not taken as a file descriptor).
    """
    found = loads_transcripts(_read(path), source=os.fspath(path))
    for index, transcript in enumerate(found):
        if not transcript.name:
            transcript.name = _stem(path) if len(found) == 1 else f"{_stem(path)}[{index}]"
    return found


_BOM = "\ufeff"
#: What every transcript header holds, and what tells a header too broken to read from any other line.
_MARK = f'"{FORMAT}"'


def is_header_line(line: str) -> bool:
    """Whether ``line`` (the first line of a file that is not blank) opens a transcript: a JSON object whose
    ``format`` is :data:`FORMAT`, or a line that does not read as JSON but names the format (a header too broken
    to read, which the reader then refuses by name rather than the file being taken for something else)."""
    line = line.removeprefix(_BOM).strip()
    try:
        header = json.loads(line)
    except (ValueError, RecursionError):
        return _MARK in line
    return isinstance(header, dict) and header.get("format") == FORMAT


def _first_line(text: str) -> str:
    """The first line of ``text`` that is not blank (lines end at ``"\n"``, as the reader splits them), without
    its leading white space (which :func:`is_header_line` strips anyway)."""
    return text.removeprefix(_BOM).lstrip().split("\n", 1)[0]


def starts_as_transcript(text: str | bytes) -> bool:
    """Whether ``text`` (a whole file's) is a transcript file: its first line that is not blank is a header
    (:func:`is_header_line`). Text that is not UTF-8 is judged by what it reads as with the bad bytes replaced:
    a transcript's reader then refuses it by name."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    return is_header_line(_first_line(text))


#: What :func:`file_kind` tells: a transcript file, a regular file that is none, a file that is not a regular
#: file (a folder, a FIFO, a device: never opened), or nothing at the path.
FileKind = Literal["transcript", "other", "special", "missing"]


def file_kind(path: str | os.PathLike[str]) -> FileKind:
    """What is at ``path``: ``"transcript"`` when it is a regular file whose first line that is not blank is a
    transcript header (the whole line is read, however long), ``"other"`` for another regular file,
    ``"special"`` for anything that is not a regular file (it is never read: a FIFO would block), ``"missing"``
    when nothing is there.

    Raises:
        TranscriptError: something is there that cannot be read (no permission, a symbolic link to nothing).
        TypeError: ``path`` is no str or path (an int is not taken as a file descriptor).
    """
    _check_path(path)
    where = os.fspath(path)
    if not os.path.lexists(path):
        return "missing"
    try:
        # Opened without blocking (a FIFO without a writer would wait forever), then checked: only a regular
        # file is read.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        if os.path.isdir(path):  # a folder that cannot be opened (Windows opens none)
            return "special"
        raise TranscriptError(f"{where}: cannot be read: {exc.strerror or exc}") from None
    try:
        regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
    except OSError:  # pragma: no cover - fstat of an open descriptor
        regular = False
    if not regular:
        os.close(descriptor)
        return "special"
    with open(descriptor, "rb", closefd=True) as handle:
        try:
            first = 0
            while True:
                line = handle.readline()
                if not line:
                    return "other"
                text = line.decode("utf-8", errors="replace")
                if first == 0:
                    text = text.removeprefix(_BOM)
                first += 1
                if text.strip():
                    return "transcript" if is_header_line(text) else "other"
        except OSError as exc:
            raise TranscriptError(f"{where}: cannot be read: {exc.strerror or exc}") from None


def is_transcript(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path`` is a transcript file: a regular file whose first line that is not blank (after
    a byte order mark, if any) is a transcript header. Only that line is read, however long: a file whose later
    lines are broken is still a transcript, which its reading then refuses by name. Nothing that is not a
    regular file is opened for reading (a FIFO would block): it is no transcript file, nor is a path where
    nothing is.

    Raises:
        TranscriptError: the file exists but cannot be read (no permission, a symbolic link to nothing).
        TypeError: ``path`` is no str or path.
    """
    return file_kind(path) == "transcript"
