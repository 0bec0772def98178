"""HTTP plumbing of the example server: the server's own errors, error responses in each protocol's shape, an
event stream that stops its producer when the client leaves, and the guards for routing errors and bugs."""

from __future__ import annotations

import hmac
import logging
import re
import secrets
import zlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Mapping
from contextvars import ContextVar
from typing import ClassVar, TypeVar

import anyio
import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import dscodec
from dscodec.conversation import Protocol
from dscodec.errors import (
    ContextLengthExceeded,
    ConversionError,
    DscodecError,
    SpecialTokenMissing,
    TokenizerError,
)

__all__ = [
    "REQUEST_ID",
    "BackendTimeout",
    "Disconnected",
    "EventStream",
    "LastResort",
    "RequestIds",
    "RequestTimeout",
    "RequestTooLarge",
    "UnsupportedEncoding",
    "coded",
    "decoded_body",
    "error_response",
    "from_anthropic_sdk",
    "gone",
    "header_dict",
    "http_error",
    "too_large",
    "unless_disconnected",
    "unserved",
]

logger = logging.getLogger("dscodec.server")

#: The id of the request being answered (set by :class:`RequestIds`; ``-`` outside a request).
REQUEST_ID: ContextVar[str] = ContextVar("dscodec_request_id", default="-")


#: Characters that would let text from outside (an engine's error message, a client's value) start a line of its
#: own in the log, or hide what follows: C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class _WithRequestId(logging.Filter):
    """Give each record of the server's logger the id of the request it was logged for, as ``request_id``; and
    write the controls in its message as escapes (``\\n``, ``\\x00``), so that no text logged can forge a line."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        message = record.getMessage()
        if _CONTROLS.search(message) is not None:
            record.msg = _CONTROLS.sub(lambda found: repr(found.group())[1:-1], message)
            record.args = None
        return True


logger.addFilter(_WithRequestId())


_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class RequestTooLarge(ConversionError):
    """A request body over the server's size limit."""

    status_code = 413


class RequestTimeout(ConversionError):
    """A request body that stopped arriving before it was complete."""

    status_code = 408


class UnsupportedEncoding(ConversionError):
    """A request body in a content coding the server does not decode."""

    status_code = 415


class BackendTimeout(DscodecError):
    """The model backend yielded nothing for longer than the server waits."""

    status_code: ClassVar[int] = 504


class _NotFound(ConversionError):
    """A path that names no endpoint."""

    status_code = 404


class _MethodNotAllowed(ConversionError):
    """A method the endpoint does not answer."""

    status_code = 405


class _Unauthorized(DscodecError):
    """A request without one of the server's API keys (the SDKs raise their ``AuthenticationError``)."""

    status_code = 401
    error_type = "invalid_request_error"
    error_code = "invalid_api_key"


class ContextTooLong(ContextLengthExceeded):
    """A prompt, with the completion it asks for, that does not fit the model's context: answered as the APIs
    answer it (OpenAI's ``code``, Anthropic's words), which clients check to shorten the conversation."""

    error_code = "context_length_exceeded"


def context_too_long(
    protocol: Protocol, exc: ContextLengthExceeded, prompt_tokens: int, requested: int | None, limit: int
) -> ContextTooLong:
    """The server's refusal of a request ``exc`` (from ``resolve_max_tokens``) refused: in the OpenAI protocols its
    message, with ``code`` ``context_length_exceeded`` and the field that is too long as ``param``; in Messages
    in Anthropic's words (``prompt is too long: …``)."""
    if protocol == "messages":
        if requested is None or prompt_tokens > limit:
            message = f"prompt is too long: {prompt_tokens} tokens > {limit} maximum"
        else:
            message = (
                f"input length and `max_tokens` exceed context limit: {prompt_tokens} + {requested} > {limit}, "
                "decrease input length or `max_tokens` and try again"
            )
        return ContextTooLong(message)
    return ContextTooLong(exc.message, param="input" if protocol == "responses" else "messages")


#: Anthropic's code for a refusal of the request body its API answers with 400 (the anthropic SDK's error class
#: is picked by the status and the code), where the OpenAI protocols keep the HTTP status of the case.
_ANTHROPIC_400 = frozenset({"request_body_encoding_unsupported", "request_body_timeout"})

_T = TypeVar("_T")


async def unless_disconnected(http: Request, work: Awaitable[_T]) -> _T | None:
    """``work``'s result, or None when the client disconnected first (``work`` is then cancelled)."""
    result: _T | None = None
    failure: Exception | None = None
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while (await http.receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        group.start_soon(watch)
        try:
            result = await work
        except Exception as exc:  # noqa: BLE001 - re-raised below, outside the group (which would wrap it)
            failure = exc
        group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return result


class EventStream(Response):
    """A ``text/event-stream`` response that stops its producer as soon as the client disconnects.


    Starlette's ``StreamingResponse`` notices a disconnect only when a write fails and leaves closing the
    iterator to the garbage collector; a backend waiting on its engine would keep generating for nobody. Here a
    watcher cancels the producer at once, and the producer's ``finally`` closes the backend.
    """

    media_type = "text/event-stream"

    def __init__(self, frames: AsyncGenerator[bytes, None]) -> None:
        self.frames = frames
        self.status_code = 200
        self.background = None
        self.init_headers(_SSE_HEADERS)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(watch)
            try:
                await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
                async for frame in self.frames:
                    await send({"type": "http.response.body", "body": frame, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except OSError:
                pass  # the client went away while we wrote; nothing is left to tell it
            finally:
                with anyio.CancelScope(shield=True):
                    await self.frames.aclose()
                group.cancel_scope.cancel()


class Disconnected(Exception):
    """The client went away before its request body was complete."""


def gone() -> Response:
    """The answer to a client that already left: nobody reads it (nginx's 499 "client closed request")."""
    return Response(status_code=499)


_E = TypeVar("_E", bound=DscodecError)


def coded(error: _E, code: str) -> _E:
    """``error`` with Anthropic's error code for its case, ``error.details.error_code`` in a Messages body (the
    anthropic SDK picks its error class by it)."""
    error.details = {"error_code": code}
    return error


def too_large(limit: int, *, decoded: bool = False) -> RequestTooLarge:
    """The refusal of a body over ``limit`` bytes; ``decoded``: over it once its content codings are undone."""
    if not decoded:
        return RequestTooLarge(f"The request body is larger than this server accepts ({limit} bytes).")
    message = (
        f"The request body, decoded (Content-Encoding), is larger than this server accepts ({limit} bytes)."
    )
    return coded(RequestTooLarge(message), "request_body_too_large_after_decoding")


def _invalid(message: str) -> ConversionError:
    """A body that is not valid data of its content coding."""
    return coded(ConversionError(message), "request_body_encoding_invalid")


#: The content codings a request body may come in (``Content-Encoding``): the ``wbits`` each is read with (gzip,
#: with its old name; deflate, which is zlib-wrapped by the standard and raw from some clients: told apart by
#: its first two bytes).
_CODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
#: The most content codings one body may name: each layer is read whole, so many thin layers would cost the
#: square of the body's size.
MAX_CODINGS = 4


def decoded_body(body: bytes, codings: str, limit: int) -> bytes:
    """``body`` with the content codings of its ``Content-Encoding`` header (``codings``) undone, last applied
    first. What is decoded is held to ``limit`` bytes as it is made, so a small body that would grow huge is
    refused without being expanded.

    Raises:
        UnsupportedEncoding: a coding other than gzip, deflate or identity.
        ConversionError: the body is not valid data of its coding, or names more than :data:`MAX_CODINGS`.
        RequestTooLarge: the decoded body is over ``limit`` bytes.
    """
    names = [name.strip().lower() for name in codings.split(",")]
    names = [name for name in names if name and name != "identity"]
    for name in names:
        if name not in _CODINGS:
            raise coded(
                UnsupportedEncoding(
                    f"The request body's Content-Encoding {name!r} is not supported: send it uncompressed, or "
                    "with gzip or deflate."
                ),
                "request_body_encoding_unsupported",
            )
    if len(names) > MAX_CODINGS:
        raise ConversionError(
            f"The request body names {len(names)} content codings (Content-Encoding); at most {MAX_CODINGS} are "
            "accepted."
        )
    for name in reversed(names):
        body = _decode(body, name, limit)
    return body


def _decode(data: bytes, name: str, limit: int) -> bytes:
    wbits = _CODINGS[name]
    if name == "deflate" and not (
        len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
    ):
        wbits = -zlib.MAX_WBITS  # no zlib header: raw deflate
    parts: list[bytes] = []
    size = 0
    rest = data
    try:
        while True:  # a gzip body may hold several members, one after another
            reader = zlib.decompressobj(wbits)
            part = reader.decompress(rest, limit + 1 - size)
            size += len(part)
            if size > limit:
                raise too_large(limit, decoded=True)
            parts.append(part)
            part = reader.flush()
            size += len(part)
            if size > limit:
                raise too_large(limit, decoded=True)
            parts.append(part)
            if not reader.eof:
                raise _invalid(
                    f"The request body is not valid {name} data (Content-Encoding: {name}): it ends early."
                )
            rest = reader.unused_data
            if not rest or wbits != _CODINGS["gzip"]:
                break
    except zlib.error:  # (its own words name zlib's internals: a client learns nothing more from them)
        raise _invalid(
            f"The request body is not valid {name} data (Content-Encoding: {name}): it is corrupt."
        ) from None
    if rest:
        raise _invalid(f"The request body has bytes after its {name} data (Content-Encoding: {name}).")
    return b"".join(parts)


def error_response(
    protocol: Protocol, exc: DscodecError, headers: Mapping[str, str] | None = None
) -> Response:
    """The error in the protocol's own body shape (deviations D1, D2) with its HTTP status; an Anthropic body also
    names the request's id (``request_id``, as Anthropic's API answers and the SDK's ``ErrorResponse`` reads)."""
    if isinstance(exc, TokenizerError):
        exc = _told_to_clients(exc)
    # Rendered for this protocol rather than read from exc.body: an error object a backend re-raises may have
    # been bound to another protocol by an earlier request.
    body = dscodec.error_body(protocol, exc)
    if protocol == "messages":
        request_id = REQUEST_ID.get()
        if request_id != "-":
            body["request_id"] = request_id
    status = exc.status_code if 400 <= exc.status_code <= 599 else 500  # a backend's error class may say 200
    if (
        protocol == "messages"
        and isinstance(exc.details, Mapping)
        and exc.details.get("error_code") in _ANTHROPIC_400
    ):
        status = 400
    wait = getattr(exc, "retry_after", None)  # seconds, from an error that says when to retry (backend.md)
    if type(wait) is int and wait >= 0:
        headers = {**(headers or {}), "retry-after": str(wait)}
    elif isinstance(exc, TokenizerError):
        # The server's configuration (a tokenizer without a token the model needs): the same request fails again,
        # so the SDKs are told not to retry it.
        headers = {**(headers or {}), "x-should-retry": "false"}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def _told_to_clients(exc: TokenizerError) -> TokenizerError:
    """The error as a client is told of it: the server's configuration in general terms, without the tokenizer's
    file (a path on the server); the full message goes to the server's log."""
    logger.error("the tokenizer cannot encode a request: %s", exc.message)
    spelling = exc.spelling if isinstance(exc, SpecialTokenMissing) else None
    told = exc.copy()
    told.message = (
        f"The server's tokenizer has no special token {spelling!r}, which the prompt of this model needs; the "
        "server must be started with a tokenizer.json made for this model version."
        if spelling is not None
        else "The server's tokenizer cannot encode this request; the server must be started with a tokenizer.json "
        "made for this model version."
    )
    return told


def header_dict(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name, the first of a repeated one winning (as ``Request.headers[name]``
    reads), built in one pass: ``dict(request.headers)`` looks each name up again, in time quadratic in the number
    of headers."""
    headers: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        headers.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return headers


def _route_path(scope: Scope) -> str:
    """The request path below the app's mount point."""
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    return path[len(root) :] if root and path.startswith(root) else path


def from_anthropic_sdk(scope: Scope) -> bool:
    """Whether the request carries the ``anthropic-version`` header the Anthropic SDK sends."""
    return any(name == b"anthropic-version" for name, _ in scope.get("headers", ()))


def _protocol_of(scope: Scope) -> Protocol | None:
    """The protocol whose error shape (and request id header) answers the request: Anthropic's under
    ``/v1/messages``, and on a ``/v1/`` path that is no OpenAI endpoint's (``/v1/models``, an unknown path) when
    the request carries the ``anthropic-version`` header the Anthropic SDK sends; OpenAI's for any other ``/v1/``
    path; None elsewhere (FastAPI's own pages)."""
    path = _route_path(scope)
    if path == "/v1/messages" or path.startswith("/v1/messages/"):
        return "messages"
    if path == "/v1" or path.startswith("/v1/"):
        if not path.startswith(_OPENAI_PATHS) and from_anthropic_sdk(scope):
            return "messages"
        return "chat_completions"
    return None


#: The paths of OpenAI's endpoints (answered in OpenAI's shape whatever the headers say).
_OPENAI_PATHS = ("/v1/chat/", "/v1/responses", "/v1/completions", "/v1/embeddings")


def _methods_of(request: Request) -> list[str]:
    """The methods the routes whose path matches the request's answer, sorted."""
    found: set[str] = set()
    for route in request.app.router.routes:
        if isinstance(route, Route) and route.methods and route.matches(request.scope)[0] is not Match.NONE:
            found |= route.methods
    return sorted(found)


def unserved(protocol: Protocol, what: str) -> Callable[[Request], Awaitable[Response]]:
    """A handler for an endpoint of the protocol's API that this server does not serve: a 404 in the protocol's
    shape saying so (clearer than the 405 a neighbouring route's path would give)."""

    async def handle(request: Request) -> Response:
        message = f"{what} ({request.method} {request.url.path}) is not served by this server."
        return error_response(protocol, _NotFound(message))

    return handle


async def http_error(request: Request, exc: Exception) -> Response:
    """Routing errors (404, 405) in the protocol's shape; outside ``/v1/`` (``/chat/completions`` without its
    prefix, ``/health``) Anthropic's when the request has the ``anthropic-version`` header, else OpenAI's."""
    assert isinstance(exc, HTTPException)
    protocol = _protocol_of(request.scope)
    if protocol is None:
        protocol = "messages" if from_anthropic_sdk(request.scope) else "chat_completions"
    method, path = request.method, request.url.path
    error: DscodecError
    if exc.status_code == 404:
        error = _NotFound(f"Invalid URL ({method} {path}): this server has no such endpoint.")
    elif exc.status_code == 405:
        # The router names the methods of the first route whose path matches: every such route's count.
        methods = _methods_of(request)
        if methods:
            exc = HTTPException(405, exc.detail, {**(exc.headers or {}), "Allow": ", ".join(methods)})
        allowed = " or ".join(methods) or "POST"
        error = _MethodNotAllowed(f"Method {method} is not allowed on {path}; send a {allowed} request.")
    else:
        error = DscodecError(str(exc.detail))
    response = error_response(protocol, error, exc.headers)
    if exc.status_code not in (404, 405):
        response.status_code = exc.status_code
    return response


class RequestIds:
    """Give every HTTP request an id (``req_`` and 24 hex digits) and answer it in the header the path's SDK
    reads: ``request-id`` where Anthropic's shape answers (see :func:`_protocol_of`), ``x-request-id`` elsewhere
    (OpenAI's). While the request is answered the id is in :data:`REQUEST_ID`, so that the server's log records
    and the backend's job carry it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = "req_" + secrets.token_hex(12)
        header = (
            b"request-id" if _protocol_of(scope) == "messages" else b"x-request-id",
            request_id.encode(),
        )

        async def with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        token = REQUEST_ID.set(request_id)
        try:
            await self.app(scope, receive, with_id)
        finally:
            REQUEST_ID.reset(token)


class LastResort:
    """The guard around every handler (only :class:`RequestIds` is outside it): an exception that escaped every
    handler (a bug) still gets the protocol's 500 body, or, when the response had already started, just ends it;
    it is logged with the request's id, never passed on to the server."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception:
            logger.exception(
                "unhandled error answering %s %s (request %s)",
                scope.get("method"),
                scope.get("path"),
                REQUEST_ID.get(),
            )
            if started:
                return
            protocol = _protocol_of(scope) or "chat_completions"
            error = DscodecError("The server failed to answer the request.")
            try:
                await error_response(protocol, error)(scope, receive, send)
            except OSError:
                pass  # the client is gone too


class ClientStalled(OSError):
    """The client read nothing of the answer for the send deadline: the server stops writing to it."""


class _Abandoned:
    """Whether :class:`SendDeadline` gave up the answer of the request being served."""

    abandoned = False


#: The :class:`_Abandoned` of the request being answered (set by :class:`SendDeadline`, and left set when it returns:
#: the HTTP server reads it in the same task once the app is done).
_ANSWER: ContextVar[_Abandoned | None] = ContextVar("dscodec_answer", default=None)

#: What uvicorn logs, as an error, of an app that returns before its response is complete.
_UNFINISHED = "ASGI callable returned without completing response."


class _AbandonedOnPurpose(logging.Filter):
    """Drop uvicorn's error about an unfinished response when the response was given up on purpose: a client that
    stopped reading, already named in the server's own warning. Leaving the response unfinished is how the app has
    the connection closed; the error would tell the operator of a fault that did not happen."""

    def filter(self, record: logging.LogRecord) -> bool:
        answer = _ANSWER.get()
        return not (answer is not None and answer.abandoned and record.msg == _UNFINISHED)


logging.getLogger("uvicorn.error").addFilter(_AbandonedOnPurpose())


class SendDeadline:
    """Bound every write of an answer: a client that stops reading (its connection open, its window full) makes
    the server's ``send`` wait for the socket to drain, and without a deadline that wait never ends, holding the
    request and its backend (an engine's slot) for as long as the client keeps the connection. A write that waits
    ``seconds`` gives up: the answer is abandoned (a stream closes its backend, as after a disconnect), the stall
    is logged, and the connection is closed unfinished. The deadline counts from the start of each write, so a
    client that reads slowly but steadily is never cut off."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        seconds = self.seconds
        answer = _Abandoned()
        # Not reset: uvicorn logs its complaint after the app returned (_AbandonedOnPurpose).
        _ANSWER.set(answer)

        async def bounded(message: Message) -> None:
            if answer.abandoned:  # nothing more goes to a client that stopped reading
                raise ClientStalled("the client stopped reading")
            with anyio.move_on_after(seconds) as waiting:
                await send(message)
            if waiting.cancelled_caught:
                answer.abandoned = True
                logger.warning(
                    "the client read nothing for %g s; the answer to %s %s was abandoned",
                    seconds,
                    scope.get("method"),
                    scope.get("path"),
                )
                raise ClientStalled("the client stopped reading")

        try:
            await self.app(scope, receive, bounded)
        except ClientStalled:
            pass  # logged when it stalled; the server closes the unfinished connection


#: The paths a server made with API keys answers without one: the health probe.
OPEN_PATHS = frozenset({"/health"})


class RequireApiKey:
    """Every request but the health probe (``/health``) must carry one of ``keys``, as ``Authorization: Bearer
    <key>`` (what the OpenAI SDK sends) or ``x-api-key: <key>`` (the Anthropic SDK's); otherwise it gets a 401 in
    the path's protocol shape (OpenAI's outside ``/v1/``) before its body is read. That includes FastAPI's own
    pages (``/openapi.json``, ``/docs``, ``/redoc``), which list every route, and unknown paths. Keys are compared
    in constant time."""

    def __init__(self, app: ASGIApp, keys: Collection[str]) -> None:
        self.app = app
        self.keys = [key.encode() for key in keys]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _route_path(scope) in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        protocol = _protocol_of(scope) or "chat_completions"
        given: list[bytes] = []
        for name, value in scope.get("headers", ()):
            if name == b"x-api-key":
                given.append(value.strip())
            elif name == b"authorization":
                scheme, _, token = value.strip().partition(b" ")
                if scheme.lower() == b"bearer":
                    given.append(token.strip())
        if any(hmac.compare_digest(candidate, key) for candidate in given for key in self.keys):
            await self.app(scope, receive, send)
            return
        message = (
            "Incorrect API key provided."
            if given
            else "No API key provided: send it as 'Authorization: Bearer <key>' or 'x-api-key: <key>'."
        )
        await error_response(protocol, _Unauthorized(message))(scope, receive, send)
