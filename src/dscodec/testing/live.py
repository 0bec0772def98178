"""Talking to a live server: send a request body, read the answer, record it as a transcript.

Any OpenAI- or Anthropic-compatible server will do. Needs ``httpx`` (extra ``testing``); nothing else in
:mod:`dscodec.testing` does. The protocol comes from the URL's path (``/chat/completions``, ``/responses``,
``/messages``), or is given, in which case a base URL (``http://host:8000`` or ``http://host:8000/v1``) gets the
protocol's path appended.
"""

from __future__ import annotations

import functools
import json
import math
import ssl
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

import dscodec
from dscodec.conversation import Protocol
from dscodec.errors import shown
from dscodec.testing._derive import derive_backend
from dscodec.testing._sse import Frame, parse_sse
from dscodec.testing.compare import MISSING, Difference, compare, ignore_rules
from dscodec.testing.transcript import Transcript, TranscriptError, names_a_key_twice

__all__ = ["Exchange", "endpoint", "recheck", "record", "send"]

_PATHS: dict[str, str] = {
    "chat_completions": "/chat/completions",
    "responses": "/responses",
    "messages": "/messages",
}
#: The Anthropic API version header sent to Messages endpoints unless the caller gives one.
ANTHROPIC_VERSION = "2023-06-01"
#: The most bytes an answer may hold by default: a stream that never ends fails instead of filling memory (a
#: 128K-token answer as Responses events is well under it).
MAX_ANSWER_BYTES = 256 * 2**20


def endpoint(url: str, protocol: Protocol | None = None) -> tuple[str, Protocol]:
    """The full endpoint URL and its protocol.

    Raises:
        TypeError: ``url`` is no str, or ``protocol`` neither a str nor None.
        ValueError: ``url`` is no ``http://`` or ``https://`` address with a host (``notaurl``, ``ftp://x``,
            ``http://[::1``), or ``protocol`` is none of ``chat_completions``, ``responses`` and ``messages``.
        TranscriptError: the URL names no endpoint and no protocol was given, or they disagree.

    Examples:
        >>> endpoint("http://127.0.0.1:8000/v1/messages")
        ('http://127.0.0.1:8000/v1/messages', 'messages')
        >>> endpoint("http://127.0.0.1:8000", "responses")
        ('http://127.0.0.1:8000/v1/responses', 'responses')
    """
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, not {type(url).__name__}")
    _check_protocol(protocol)
    parts = _split_url(url)
    path = parts.path.rstrip("/")
    named = next((name for name, suffix in _PATHS.items() if path.endswith(suffix)), None)
    if named is not None:
        if protocol is not None and protocol != named:
            raise TranscriptError(f"the URL {url} is a {named} endpoint, not {protocol}")
        return url, named  # type: ignore[return-value]
    if protocol is None:
        raise TranscriptError(
            f"cannot tell the protocol of {url}: give the endpoint's full URL (ending in /chat/completions, "
            "/responses or /messages) or the protocol"
        )
    if not path.endswith("/v1"):
        path += "/v1"
    return urlunsplit(parts._replace(path=path + _PATHS[protocol])), protocol


def _split_url(url: str) -> SplitResult:
    """The parts of ``url``, an ``http://`` or ``https://`` address with a host (``ValueError`` otherwise)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is no number (or out of range) is a ValueError here
    except ValueError as exc:
        raise ValueError(f"url {shown(url, limit=200)} is no valid URL: {exc}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"url must be an http:// or https:// address with a host, not {shown(url, limit=200)}"
        )
    return parts


def _check_protocol(protocol: object) -> None:
    if protocol is None:
        return
    if not isinstance(protocol, str):
        raise TypeError(f"protocol must be a str or None, not {type(protocol).__name__}")
    if protocol not in _PATHS:
        raise ValueError(f"unknown protocol {shown(protocol, limit=60)}; expected one of {', '.join(_PATHS)}")


def _checked_headers(headers: object) -> dict[str, str]:
    """The headers to send, by lowercase name; refused by name when no HTTP client could send them.

    Raises:
        TypeError: ``headers`` is no mapping, or a name or value is no str.
        ValueError: a name is empty, or a name or value holds a character HTTP headers cannot carry (a line
            break, or one that is not ASCII).
    """
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise TypeError(
            f"headers must be a mapping of names to values, or None; not {type(headers).__name__}"
        )
    out: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str):
            raise TypeError(f"a header name must be a str, not {type(name).__name__}")
        if not isinstance(value, str):
            raise TypeError(
                f"header {shown(name, limit=60)}: its value must be a str, not {type(value).__name__}"
            )
        if not name.strip():
            raise ValueError("a header name must not be empty")
        for what, text in (("name", name), ("value", value)):
            bad = next((ch for ch in text if ch in "\r\n\0" or not ch.isascii()), None)
            if bad is not None:
                raise ValueError(
                    f"header {shown(name, limit=60)}: its {what} holds {bad!r} at character {text.index(bad)}, "
                    "which an HTTP header cannot carry (ASCII only, no line breaks)"
                )
        out[name.lower()] = value
    return out


@dataclass
class Exchange:
    """One request and the answer it got."""

    url: str
    protocol: Protocol
    request: dict[str, Any]
    status: int
    content_type: str
    text: str
    frames: list[Frame] | None
    response: dict[str, Any] | None  # the body, when it is a JSON object (else see ``text``)
    unterminated: str = ""
    #: The answer's bytes as they came (``text`` is them decoded as a client decodes them, any bad byte a U+FFFD):
    #: ``lint`` reports bytes that are not UTF-8 (GEN010).
    data: bytes = b""


def _body_bytes(body: Mapping[str, Any]) -> bytes:
    """The request body as JSON, or the error of a body that JSON cannot hold (checked before anything is sent).

    Raises:
        TypeError: the body holds a value JSON has none for (a set, an object).
        ValueError: the body holds itself, or nests deeper than Python's recursion allows.
    """
    try:
        return json.dumps(dict(body)).encode()
    except RecursionError:
        raise ValueError("body nests deeper than Python's recursion allows, or holds itself") from None
    except ValueError as exc:  # a circular reference, an integer of more digits than Python writes out
        raise ValueError(f"body is no JSON data: {exc}") from None
    except TypeError as exc:
        raise TypeError(f"body is no JSON data: {exc}") from None


#: The longest single wait given to the socket layer (a year): longer timeouts overflow the system's timers.
_MAX_WAIT = 365 * 24 * 3600.0


def _check_limits(timeout: object, max_bytes: object) -> None:
    """Refuse bounds no answer can be read within (a zero timeout fails every exchange, a negative size too)."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a finite number of seconds above 0, not {shown(timeout)}")
    if type(max_bytes) is not int:
        raise TypeError(f"max_bytes must be an int, not {type(max_bytes).__name__}")
    if max_bytes < 1:
        raise ValueError(f"max_bytes must be 1 or more, not {shown(max_bytes)}")


@functools.cache
def _tls_settings() -> ssl.SSLContext:
    """The TLS settings of every exchange, made on the first: an httpx client made without them reads the
    certificate authorities' file anew, about 50 ms of CPU a client, which a loop of short exchanges (a fuzzing
    test's) would pay on every request. The file and the ``SSL_CERT_FILE``/``SSL_CERT_DIR`` variables are read
    then, once."""
    import httpx

    return httpx.create_ssl_context()


def send(
    url: str,
    body: Mapping[str, Any],
    *,
    protocol: Protocol | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> Exchange:
    """POST ``body`` to the server and read the whole answer (an event stream or a JSON body).

    The answer must end within ``timeout`` seconds of the request (a server that stops sending for that long
    fails too), and hold at most ``max_bytes`` bytes: a server that never ends its stream fails the exchange
    rather than hang the test or fill memory.

    Every argument is checked before anything is sent.

    Raises:
        ImportError: httpx is not installed (it comes with ``pip install 'dscodec[testing]'``).
        TypeError: ``url`` is no str, ``body`` no mapping (or one holding a value JSON has none for, such as a
            set), ``protocol`` neither a str nor None, ``headers`` no mapping of str to str, or ``timeout`` or
            ``max_bytes`` no number.
        ValueError: a ``url`` that is no ``http://`` or ``https://`` address, an unknown ``protocol``, a header
            that HTTP cannot carry (not ASCII, a line break), a ``body`` that holds itself or nests deeper than
            Python's recursion allows,
            ``timeout`` not a finite number of seconds above 0, or ``max_bytes`` below 1.
        TranscriptError: the protocol cannot be told, the server cannot be reached, or its answer takes longer
            than ``timeout`` or is longer than ``max_bytes``.
    """
    _check_limits(timeout, max_bytes)
    target, resolved = endpoint(url, protocol)  # checks both
    if not isinstance(body, Mapping):
        raise TypeError(f"body must be the request body (a mapping), not {type(body).__name__}")
    payload = _body_bytes(body)
    given = _checked_headers(headers)
    try:
        import httpx
    except ImportError as exc:
        raise ImportError(
            "dscodec.testing.live needs httpx to talk to a server: pip install 'dscodec[testing]'",
            name="httpx",
        ) from exc

    sent = {"content-type": "application/json", **given}
    if resolved == "messages":
        sent.setdefault("anthropic-version", ANTHROPIC_VERSION)
    deadline = time.monotonic() + timeout
    data = bytearray()
    try:
        with (
            # Each wait is bounded by the whole answer's bound, within what a socket's timer holds (a timeout of
            # 1e30 seconds is accepted: the operating system's timers stop at some years).
            httpx.Client(timeout=min(timeout, _MAX_WAIT), verify=_tls_settings()) as client,
            client.stream("POST", target, content=payload, headers=sent) as answer,
        ):
            for chunk in answer.iter_bytes():
                data += chunk
                if len(data) > max_bytes:
                    raise TranscriptError(
                        f"{target}: the answer passed {max_bytes} bytes and had not ended (a stream that "
                        "never ends?)"
                    )
                if time.monotonic() > deadline:
                    raise TranscriptError(f"{target}: the answer had not ended after {timeout} seconds")
            status, content_type = answer.status_code, answer.headers.get("content-type", "")
            text = bytes(data).decode(answer.encoding or "utf-8", errors="replace")
    except httpx.TimeoutException:
        # No byte for ``timeout`` seconds (httpx's own bound on each wait): the same bound as the whole answer's.
        raise TranscriptError(f"{target}: the answer had not ended after {timeout} seconds") from None
    except httpx.HTTPError as exc:
        raise TranscriptError(f"{target}: the request failed: {exc}") from None
    exchange = Exchange(
        target, resolved, dict(body), status, content_type, text, None, None, data=bytes(data)
    )
    if "text/event-stream" in content_type:
        exchange.frames, exchange.unterminated = parse_sse(text)
        return exchange
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        exchange.response = value
    return exchange


def record(
    url: str,
    body: Mapping[str, Any],
    *,
    protocol: Protocol | None = None,
    headers: Mapping[str, str] | None = None,
    name: str = "",
    timeout: float = 120.0,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> Transcript:
    """Send ``body`` and save the exchange as a transcript of origin ``live`` (backend items derived from the
    answer, see :func:`dscodec.testing.replay.verify`); the other arguments as for :func:`send`, and checked as
    it checks them.

    Raises:
        TypeError: ``name`` is no str; the rest as for :func:`send`.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    exchange = send(url, body, protocol=protocol, headers=headers, timeout=timeout, max_bytes=max_bytes)
    return transcript_of(exchange, name=name)


def recheck(
    transcript: Transcript,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    ignore: Iterable[str] = (),
    timeout: float = 120.0,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> list[Difference]:
    """Send ``transcript``'s request to the live server at ``url`` again and compare its answer with the recorded
    one; empty when they agree. What :func:`~dscodec.testing.replay.verify` does with dscodec, this does with
    the server, for golden files of a server whose model side is fixed (a scripted or fake backend).

    ``url`` is the server's base URL (``http://host:8000`` or ``…/v1``; the transcript's protocol picks the
    path) or the protocol's endpoint. Compared, after :func:`~dscodec.testing.compare.normalise` (ids, times and
    fingerprints become placeholders): the status, the JSON body or what the stream adds up to, and the stream's
    events with consecutive deltas of one text or one call merged (a server may cut its deltas elsewhere each
    time). ``headers`` go with the request (an API key, a scenario name: a transcript keeps none); ``ignore``,
    ``timeout`` and ``max_bytes`` as for :func:`~dscodec.testing.compare.compare` and :func:`send`.

    A transcript that records no answer differs from any (one difference says so), as in ``verify``.

    Raises:
        TypeError: ``transcript`` is no :class:`~dscodec.testing.Transcript`, ``url`` no ``str``, an ``ignore``
            rule no ``str``, or another argument of a type :func:`send` refuses.
        ValueError: an empty ``ignore`` rule, or a value :func:`send` refuses.
        TranscriptError: the URL names another protocol's endpoint, or the answer cannot be read (see
            :func:`send`).
    """
    if not isinstance(transcript, Transcript):
        raise TypeError(f"transcript must be a Transcript, not {type(transcript).__name__}")
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, not {type(url).__name__}")
    # The caller's mistakes are refused before anything is sent, whether or not anything will be.
    _split_url(url)
    ignore = ignore_rules(ignore)  # read once: an iterator's rules are kept for the comparison
    _checked_headers(headers)
    _check_limits(timeout, max_bytes)
    if transcript.frames is None and transcript.response is None and transcript.response_text is None:
        # Nothing recorded to compare with: any answer would agree.
        return [
            Difference(
                "response", MISSING, "the server's answer: the transcript records no answer to compare"
            )
        ]
    target, protocol = endpoint(url, transcript.protocol)
    exchange = send(
        target, transcript.request, protocol=protocol, headers=headers, timeout=timeout, max_bytes=max_bytes
    )
    return compare(
        transcript, transcript_of(exchange, name=transcript.name), ignore=ignore, merge_deltas=True
    )


def transcript_of(exchange: Exchange, *, name: str = "") -> Transcript:
    """The transcript of an exchange (see :func:`record`).

    Whatever the server answered is kept as it came. When its events are no stream of the protocol (so that
    :func:`dscodec.accumulate` cannot read them), the transcript has no backend items and no accumulated
    answer: its replay then fails, and its lint says why.
    """
    response, text = exchange.response, exchange.text
    if response is not None and names_a_key_twice(text):
        response = None  # the body names a key twice: its text keeps both values, a dict would keep one
    transcript = Transcript(
        protocol=exchange.protocol,
        request=exchange.request,
        backend=derive_backend(
            exchange.protocol,
            exchange.request,
            frames=exchange.frames,
            response=exchange.response,
            status=exchange.status,
        ),
        frames=exchange.frames,
        response=response,
        response_text=text if exchange.frames is None and response is None else None,
        status=exchange.status,
        name=name,
        origin="live",
        meta={"url": exchange.url},
    )
    try:
        exchange.data.decode("utf-8")
    except UnicodeDecodeError as exc:  # the text holds U+FFFD for the bad bytes: say where they were
        transcript.meta["not_utf8"] = f"{exc.reason} at byte {exc.start}"
    if exchange.frames is not None and exchange.unterminated:
        # What came after the last complete frame (a stream cut short): kept, and linted as GEN009.
        transcript.meta["unterminated"] = exchange.unterminated
    if exchange.frames is not None:
        events = []
        for frame in exchange.frames:
            try:
                data = frame.json()
            except ValueError:
                continue
            if isinstance(data, dict):
                events.append(data)
        try:
            transcript.accumulated = dscodec.accumulate(exchange.protocol, events)
        except dscodec.DscodecError:
            transcript.accumulated = None
    return transcript
