"""What the engine backends share: one streamed HTTP request per job, its SSE ``data:`` events, and the engine's
failures turned into dscodec errors.

Each engine module supplies the request body it sends and a *reader*: an object that takes one decoded SSE event
at a time and returns the backend outputs it gives (:class:`StreamReader`). This module does the I/O around it.

Cancellation: the request is sent with ``httpx``'s streaming API inside ``async with``, so when the server closes
the backend's iterator (client gone, stop sequence matched, error) the response is closed and its connection
dropped. Both engines abort a generation whose client connection went away, so the engine slot is freed.
"""

from __future__ import annotations

import datetime
import email.utils
import logging
import math
import re
import zlib
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, ClassVar, Protocol
from urllib.parse import urlsplit

import anyio
import httpx
import orjson

from dscodec.errors import ConversionError, DscodecError, ModelOutputError
from dscodec.processor import Logprob
from dscodec.server.backend import BackendOutput, BackendRequest, FinishReason
from dscodec.server.backends._constraints import engine_constraint

__all__ = [
    "DEFAULT_TIMEOUT",
    "EngineBackend",
    "EngineBusy",
    "EngineError",
    "EngineRejected",
    "EngineUnavailable",
    "StreamReader",
    "engine_failure",
    "error_status",
    "finish_reason",
    "retry_after",
    "top_logprobs",
    "with_top",
]

logger = logging.getLogger("dscodec.server")

#: Connecting may take 10 s; reading waits as long as the engine needs (the server's own backend timeout bounds
#: the wait for each output), so a long prefill is not cut short here.
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=None, write=60.0, pool=None)

#: The finish reasons both engines write the way dscodec does; each reader handles its engine's failure reasons.
_FINISH: dict[str, FinishReason] = {"stop": "stop", "length": "length"}

#: How much of an engine's error body is read and quoted.
_ERROR_BODY_LIMIT = 64 * 1024
#: The largest event an engine may stream (its data lines together); a longer one fails the response. An engine's
#: events hold a few tokens each, the first one the prompt's ids as well: far below this.
EVENT_LIMIT = 64 * 1024 * 1024
_MESSAGE_LIMIT = 1000
#: The content codings an engine's answer may come in (the backends ask for none: ``Accept-Encoding: identity``),
#: each with its zlib window setting, and how many may be stacked.
_CODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
_MAX_CODINGS = 4
#: The most bytes one step of expanding a compressed answer gives: the reading counts them as they come, so a
#: small answer that expands hugely is refused at the limit, never held whole; and other requests run between
#: steps, so one that expands to a flood of short lines holds the event loop for no more than a step's lines.
_INFLATE_STEP = 1 << 18
#: The most bytes a compressed answer may expand to in all (an answer of the longest generation is far shorter):
#: past it the answer fails, so expanding costs at most this, however small the answer.
INFLATE_LIMIT = 256 * 1024 * 1024


class EngineError(ModelOutputError):
    """The inference engine failed, could not be reached, or sent something outside its documented wire format
    (status 502)."""


class EngineRejected(ConversionError):
    """The inference engine refused the request as invalid (its 400, 413 or 422): a bad constraint, a prompt it
    finds too long, a parameter out of its range (status 400)."""


class _RetryLater(DscodecError):
    """An engine refusal the client may retry: ``retry_after`` is the engine's ``Retry-After`` in whole seconds (or
    None), which the server sends on to the client in the same header (the SDKs wait that long before retrying)."""

    def __init__(
        self,
        message: str,
        *,
        retry_after: int | None = None,
        param: str | None = None,
        protocol: str | None = None,
    ) -> None:
        super().__init__(message, param=param, protocol=protocol)
        self.retry_after = retry_after


class EngineBusy(_RetryLater):
    """The inference engine is rate limiting (its 429): the client may retry later (status 429)."""

    status_code: ClassVar[int] = 429
    error_type: ClassVar[str] = "rate_limit_exceeded"


class EngineUnavailable(_RetryLater):
    """The inference engine is not ready or is overloaded (its 503) (status 503)."""

    status_code: ClassVar[int] = 503
    error_type: ClassVar[str] = "service_unavailable"


#: The longest wait passed on from an engine's ``Retry-After`` (a day): a larger value is sent as this.
RETRY_AFTER_LIMIT = 86_400


def retry_after(value: str | None) -> int | None:
    """An HTTP ``Retry-After`` value in whole seconds from now: delay seconds (``120``) as they are, an HTTP date
    as the seconds until it (0 once past), rounded up and at most :data:`RETRY_AFTER_LIMIT`; None when there is
    none or it is neither."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return min(int(value), RETRY_AFTER_LIMIT) if len(value) <= 12 else RETRY_AFTER_LIMIT
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # HTTP dates are GMT; a date without a zone is read as such
        when = when.replace(tzinfo=datetime.timezone.utc)
    seconds = math.ceil((when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())
    return min(max(seconds, 0), RETRY_AFTER_LIMIT)


#: Where a line of an event stream ends (the SSE format: CR LF, LF or CR).
_LINE_END = re.compile(rb"\r\n|\r|\n")


def _clip(text: str) -> str:
    return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "…"


def error_message(body: object) -> str | None:
    """The message of an engine's error body: ``{"error": {"message"}}`` (vLLM's current envelope, SGLang's
    stream error), ``{"error": "..."}``, ``{"message"}`` (vLLM's older flat envelope) or ``{"detail"}`` (its web
    framework's validation errors)."""
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    for key in ("message", "detail"):
        value = body.get(key)
        if isinstance(value, str):
            return value
        if value is not None:
            return orjson.dumps(value).decode()
    return None


def engine_failure(
    engine: str, status: int, body: bytes, headers: Mapping[str, str] | None = None
) -> DscodecError:
    """The dscodec error for an engine's non-200 answer: its 4xx meaning where the client can act on it, else a
    502 naming the engine's status and message. A 429 or 503 keeps the answer's ``Retry-After`` (``headers``)."""
    try:
        message = error_message(orjson.loads(body))
    except orjson.JSONDecodeError:
        message = None
    if message is None:
        message = body.decode("utf-8", "replace").strip() or httpx.codes.get_reason_phrase(status)
    message = _clip(message)
    if status in (400, 413, 422):
        return EngineRejected(f"The inference engine ({engine}) refused the request: {message}")
    wait = retry_after(headers.get("retry-after")) if headers is not None else None
    if status == 429:
        return EngineBusy(
            f"The inference engine ({engine}) is rate limiting; retry later: {message}", retry_after=wait
        )
    if status == 503:
        return EngineUnavailable(
            f"The inference engine ({engine}) is unavailable: {message}", retry_after=wait
        )
    return EngineError(f"The inference engine ({engine}) answered HTTP {status}: {message}")


#: The largest token count the server takes from a backend (2**53 - 1, what every JSON reader holds exactly).
MAX_COUNT = 2**53 - 1


def usage_count(value: object) -> int | None:
    """A token count an engine reported in its usage, or None when it is no count: not an integer (a bool is
    none), below 0, or past :data:`MAX_COUNT`. The readers pass over such a count (the prompt's own length, or 0
    cached tokens, stands) rather than fail an answer the engine has generated in full."""
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value
    return None


def error_status(code: object) -> int:
    """The status an engine's error event or abort carries: ``code`` when it is an HTTP error status, else 500."""
    return code if isinstance(code, int) and 400 <= code <= 599 else 500


def finish_reason(reason: object) -> FinishReason | None:
    """An engine's finish reason as dscodec's: ``stop`` and ``length`` as they are, anything else unknown (None)."""
    return _FINISH.get(reason) if isinstance(reason, str) else None


def top_logprobs(job: BackendRequest) -> int:
    """How many top alternatives each generated token's log probability comes with (0: none, or no logprobs)."""
    options = job.request.inference_options
    return options.top_logprobs if options.logprobs and options.top_logprobs else 0


def logprob_value(value: object, engine: str) -> float:
    """A log probability an engine sent: a number, or ``null``: how a JSON writer that has no ``-inf`` (orjson, for
    one) writes the log probability of a token the sampling ruled out, so ``-inf`` (the stream processor writes it
    as ``-9999.0``). Anything else is outside the engine's wire format.

    Raises:
        EngineError: neither a number nor null.
    """
    if value is None:
        return -math.inf
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise EngineError(f"{engine} sent the log probability {value!r}; expected a number")


def with_top(logprob: float, alternatives: list[tuple[int, float]], top: int) -> Logprob:
    """A token's log probability entry with its ``top`` most likely alternatives, most likely first."""
    alternatives.sort(key=lambda pair: -pair[1])
    return (logprob, alternatives[:top])


class StreamReader(Protocol):
    """One request's reading state: events in, backend outputs out."""

    def feed(self, event: dict[str, Any]) -> list[BackendOutput]:
        """The outputs one decoded ``data:`` event gives (raises a dscodec error for an engine error event)."""
        ...

    @property
    def done(self) -> bool:
        """True once nothing more is needed from the stream."""
        ...

    def end(self) -> list[BackendOutput]:
        """The outputs still due when the stream ended (raises when it ended too early)."""
        ...


class EngineBackend:
    """A backend that forwards each job to an inference engine over HTTP and streams its tokens back.

    Subclasses name the engine, the path, the request body (:meth:`payload`) and the reader of the stream
    (:meth:`reader`).

    Args:
        base_url: the engine's address, e.g. ``http://127.0.0.1:8000`` (no path).
        api_key: sent as ``Authorization: Bearer <key>`` when given.
        client: an ``httpx.AsyncClient`` to use (the backend then does not close it); one is made on first use
            otherwise.
        timeout: the timeouts of the client the backend makes: an ``httpx.Timeout``, or a number of seconds for
            every one of them.
        constraints: ``True`` to pass dscodec's output constraint to the engine's structured-output fields (default).
        extra: more fields for every request body (engine options dscodec does not set). The fields every body
            has (:attr:`fixed_fields`: the prompt, the budget, the sampling, streaming) cannot be given; a field
            dscodec sets for some requests only (a seed, log probabilities, the constraint) is a default the
            request's own value replaces.

    Raises:
        TypeError, ValueError: an argument of the wrong type, a ``base_url`` that is no ``http(s)://`` address,
            or ``extra`` naming a fixed field.
    """

    engine: ClassVar[str] = "engine"
    path: ClassVar[str] = "/"
    #: The top-level fields of every request body the backend sends (``extra`` cannot replace them).
    fixed_fields: ClassVar[frozenset[str]] = frozenset()
    #: The engine's structured-output field for each kind of :class:`~dscodec.server.backends.EngineConstraint`.
    constraint_fields: ClassVar[Mapping[str, str]] = {}
    #: The value sent for a ``json_object`` constraint (any JSON object).
    any_object: ClassVar[object] = True

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        constraints: bool = True,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(base_url, str):
            raise TypeError(f"base_url must be a str, not {type(base_url).__name__}")
        address = urlsplit(base_url)
        if address.scheme not in ("http", "https") or not address.netloc:
            raise ValueError(f"base_url must be an http:// or https:// address, not {base_url!r:.200}")
        if api_key is not None and not isinstance(api_key, str):
            raise TypeError(f"api_key must be a str or None, not {type(api_key).__name__}")
        if client is not None and not isinstance(client, httpx.AsyncClient):
            raise TypeError(f"client must be an httpx.AsyncClient or None, not {type(client).__name__}")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
            timeout = httpx.Timeout(timeout)
        elif not isinstance(timeout, httpx.Timeout):
            raise TypeError(
                f"timeout must be an httpx.Timeout or a number of seconds, not {type(timeout).__name__}"
            )
        if not isinstance(constraints, bool):
            # A truthy "no" or 0.0 would otherwise send the constraints the caller meant to turn off.
            raise TypeError(f"constraints must be a bool, not {type(constraints).__name__}")
        if extra is not None and not isinstance(extra, Mapping):
            raise TypeError(f"extra must be a mapping or None, not {type(extra).__name__}")
        fixed = sorted(key for key in extra or {} if key in self.fixed_fields)
        if fixed:
            raise ValueError(f"extra cannot set {', '.join(fixed)}: dscodec sets it in every request body")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + self.path
        # No compressed answers: an engine's events are small, and a compressed body could expand hugely.
        self.headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "accept-encoding": "identity",
        }
        if api_key:
            self.headers["authorization"] = f"Bearer {api_key}"
        self.constraints = constraints
        self.extra: dict[str, Any] = dict(extra or {})
        self._client = client
        self._owns_client = client is None
        self._timeout = timeout

    def payload(self, job: BackendRequest) -> dict[str, Any]:
        """The JSON body sent to the engine for ``job``."""
        raise NotImplementedError

    def reader(self, job: BackendRequest) -> StreamReader:
        """A fresh reader for the stream of ``job``."""
        raise NotImplementedError

    def constraint_field(self, job: BackendRequest) -> tuple[str, object] | None:
        """The engine's field and value for the output constraint of ``job``; None when there is none or
        ``constraints`` is off."""
        constraint = engine_constraint(job.request) if self.constraints else None
        if constraint is None:
            return None
        value = self.any_object if constraint.kind == "json_object" else constraint.value
        return self.constraint_fields[constraint.kind], value

    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client (made on first use)."""
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self._timeout,
                limits=httpx.Limits(max_connections=1024, max_keepalive_connections=64),
            )
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client the backend made (a client passed in is left open)."""
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None

    async def health(self) -> None:
        """Check that the engine answers its ``GET /health``.

        Raises:
            EngineError: it does not answer, or not with a 200.
        """
        try:
            async with self.client.stream(
                "GET", self.base_url + "/health", headers={"accept-encoding": "identity"}, timeout=5.0
            ) as response:
                if response.status_code != 200:
                    raise await self._failure(response)
        except httpx.HTTPError as exc:
            raise EngineError(
                f"The inference engine ({self.engine}) at {self.base_url} is unreachable: {exc}"
            ) from None

    async def _failure(self, response: httpx.Response) -> DscodecError:
        """The error for the engine's answer that is no 200, from its status, the start of its body and its
        headers."""
        return engine_failure(
            self.engine, response.status_code, await _read_some(response, self.engine), response.headers
        )

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        """Send ``job`` to the engine and yield what it streams back, as dscodec backend outputs."""
        body = orjson.dumps({**self.extra, **self.payload(job)} if self.extra else self.payload(job))
        reader = self.reader(job)
        try:
            async with self.client.stream("POST", self.url, content=body, headers=self.headers) as response:
                if response.status_code != 200:
                    raise await self._failure(response)
                async for event in _events(response, self.engine):
                    for item in reader.feed(event):
                        yield item
                    if reader.done:
                        return
            for item in reader.end():
                yield item
        except httpx.HTTPError as exc:
            # Connection refused, reset mid-stream, a protocol error: the engine failed, not the client.
            raise EngineError(
                f"The inference engine ({self.engine}) at {self.base_url} failed: {type(exc).__name__}: {exc}"
            ) from None


async def _body(response: httpx.Response, engine: str) -> AsyncIterator[bytes]:
    """The answer's body as it arrives, its content codings undone in steps of at most :data:`_INFLATE_STEP`
    bytes (httpx would expand each received piece whole: a few kilobytes of gzip can hold gigabytes).

    Raises:
        EngineError: a coding other than gzip and deflate, more than :data:`_MAX_CODINGS` of them, data that is
            not valid in its coding, or more than :data:`INFLATE_LIMIT` bytes once expanded.
    """
    header = response.headers.get("content-encoding", "")
    codings = [c for c in (part.strip().lower() for part in header.split(",")) if c and c != "identity"]
    if not codings:
        async for chunk in response.aiter_raw():
            yield chunk
        return
    if len(codings) > _MAX_CODINGS or any(c not in _CODINGS for c in codings):
        raise EngineError(
            f"The inference engine ({engine}) answered in the content coding {_clip(header)!r}; "
            "dscodec asks for none (Accept-Encoding: identity) and reads gzip and deflate"
        )
    # The last coding applied is undone first.
    layers = [_Inflater(coding) for coding in reversed(codings)]
    try:
        total = 0
        async for chunk in response.aiter_raw():
            for piece in _inflate(layers, 0, chunk):
                total += len(piece)
                if total > INFLATE_LIMIT:
                    raise EngineError(
                        f"The inference engine ({engine}) sent a compressed answer that expands to more than "
                        f"{INFLATE_LIMIT} bytes"
                    )
                yield piece
                # What one received piece expands to is read without any wait for the network: let the event
                # loop run (other requests, and the server's timeouts, which may cancel this one) between steps.
                await anyio.lowlevel.checkpoint()
    except zlib.error as exc:
        raise EngineError(
            f"The inference engine ({engine}) sent a body that is not valid {header.strip()} data: {exc}"
        ) from None


class _Inflater:
    """One content coding being undone: gzip members one after another; deflate as zlib data or, as some
    servers send it, raw."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self.started = False
        self._new()

    def _new(self, wbits: int | None = None) -> None:
        self.decoder = zlib.decompressobj(_CODINGS[self.coding] if wbits is None else wbits)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        """The bytes ``data`` expands to, in steps of at most :data:`_INFLATE_STEP`."""
        while True:
            try:
                out = self.decoder.decompress(data, _INFLATE_STEP)
            except zlib.error:
                if self.coding != "deflate" or self.started:
                    raise
                self._new(-zlib.MAX_WBITS)  # deflate without its zlib wrapper
                self.started = True
                continue
            self.started = True
            if out:
                yield out
            if self.decoder.eof:
                data = self.decoder.unused_data  # another gzip member, or nothing
                if not data:
                    return
                self._new()
                continue
            data = self.decoder.unconsumed_tail
            if not data and len(out) < _INFLATE_STEP:  # (a full step may leave output still to come)
                return


def _inflate(layers: list[_Inflater], index: int, data: bytes) -> Iterator[bytes]:
    """``data`` through the codings ``layers[index:]``, in bounded pieces."""
    for piece in layers[index].pieces(data):
        if index + 1 < len(layers):
            yield from _inflate(layers, index + 1, piece)
        else:
            yield piece


async def _read_some(response: httpx.Response, engine: str) -> bytes:
    """The start of an error body (at most 64 KiB; an engine's error is short)."""
    parts: list[bytes] = []
    size = 0
    async for part in _body(response, engine):
        parts.append(part)
        size += len(part)
        if size >= _ERROR_BODY_LIMIT:
            break
    return b"".join(parts)[:_ERROR_BODY_LIMIT]


async def _lines(response: httpx.Response, engine: str) -> AsyncIterator[bytes]:
    """The lines of an event stream, as bytes, without their line ends.

    SSE lines end at CR LF, LF or CR, and nowhere else. (httpx's ``aiter_lines`` also ends a line where
    ``str.splitlines`` does, at U+0085, U+2028 and U+2029 among others; both engines write these three raw inside
    JSON strings, so a model output holding one would cut its event in two.) Each chunk is searched once, so a
    long line costs no more than its length however it arrives; one longer than :data:`EVENT_LIMIT` fails.
    """
    parts: list[bytes] = []  # the line read so far
    size = 0  # its length
    after_cr = False  # the last chunk ended with CR: an LF starting the next one belongs to it
    async for chunk in _body(response, engine):
        if after_cr:
            after_cr = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        if not chunk:
            continue
        start = 0
        for end in _LINE_END.finditer(chunk):
            parts.append(chunk[start : end.start()])
            yield b"".join(parts)
            parts, size = [], 0
            start = end.end()
        parts.append(chunk[start:])
        size += len(chunk) - start
        if size > EVENT_LIMIT:
            raise _too_long(engine)
        after_cr = chunk.endswith(b"\r")
    if any(parts):
        yield b"".join(parts)


async def _events(response: httpx.Response, engine: str) -> AsyncIterator[dict[str, Any]]:
    """The decoded ``data:`` events of a Server-Sent Events stream, up to ``data: [DONE]``.

    An event's data lines are joined with newlines and the event ends at a blank line (the SSE format); comment
    lines and other fields are skipped. Both engines send one JSON object per event.
    """
    lines: list[bytes] = []
    size = 0
    async for line in _lines(response, engine):
        if line:
            if line.startswith(b"data:"):
                lines.append(line[6:] if line.startswith(b"data: ") else line[5:])
                size += len(line)
                if size > EVENT_LIMIT:
                    raise _too_long(engine)
            continue
        if lines:
            event = _decode(b"\n".join(lines), engine)
            lines, size = [], 0
            if event is None:
                return
            yield event
    if lines:
        event = _decode(b"\n".join(lines), engine)
        if event is not None:
            yield event


def _too_long(engine: str) -> EngineError:
    return EngineError(f"The inference engine ({engine}) sent an event longer than {EVENT_LIMIT} bytes")


def _decode(data: bytes, engine: str) -> dict[str, Any] | None:
    """One event's JSON object; None for the ``[DONE]`` sentinel."""
    if data.strip() == b"[DONE]":
        return None
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError:
        shown = _clip(data.decode("utf-8", "replace"))
        raise EngineError(
            f"The inference engine ({engine}) sent an event that is not JSON: {shown}"
        ) from None
    if not isinstance(event, dict):
        shown = _clip(data.decode("utf-8", "replace"))
        raise EngineError(f"The inference engine ({engine}) sent an event that is not a JSON object: {shown}")
    return event
