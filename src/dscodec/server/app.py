"""The example HTTP server: OpenAI Chat Completions, OpenAI Responses and Anthropic Messages in front of a backend.

One request, start to end::

    body ─► convert ─► render ─► encode ─► resolve max_tokens ─► backend(job) ─► StreamProcessor ─► SSE / JSON

Everything protocol-specific comes from dscodec (its public API, and :func:`dscodec.error_body` for errors
raised outside a converter); this module only moves bytes. Work whose cost grows with the request or the output
(conversion and tokenization, a large backend chunk, the end of a response with its reasoning token count, and
building a complete JSON response) runs in a worker thread, so one large request does not stall other streams.

Every answer the app gives is in the shape of the protocol the path names, errors included (see
``docs/server.md``, "Errors"): the OpenAI envelope for Chat Completions, Responses and any other ``/v1/`` path,
Anthropic's for ``/v1/messages``. Before the status line is sent an error gets its own status; after it, the
protocol's mid-stream error event. Nothing a client or a backend does reaches the web framework as an exception.
"""

from __future__ import annotations

import logging
import operator
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeVar

import anyio
import orjson
from fastapi import FastAPI
from fastapi.exception_handlers import http_exception_handler
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import dscodec
from dscodec.conversation import Protocol
from dscodec.errors import ConversionError, DscodecError, ModelOutputError
from dscodec.options import ConversionOptions
from dscodec.processor import StreamProcessor
from dscodec.server.backend import (
    Backend,
    BackendOutput,
    BackendRequest,
    Finish,
    PromptUsage,
    TextChunk,
    TokenChunk,
)
from dscodec.vocab import TokenizerLike, Vocabulary

if TYPE_CHECKING:
    from dscodec import WireEvent

__all__ = [
    "BACKEND_TIMEOUT",
    "BODY_TIMEOUT",
    "DEFAULT_CONTEXT_LIMIT",
    "MAX_BODY_BYTES",
    "BackendTimeout",
    "RequestTimeout",
    "RequestTooLarge",
    "create_app",
]

logger = logging.getLogger("dscodec.server")

#: The largest request body accepted (32 MiB): room for long conversations with inline images, and a bound on
#: what one client can make the server buffer and tokenize.
MAX_BODY_BYTES = 32 * 1024 * 1024

#: The context window requests are checked against when the caller sets none (spec §1.4).
DEFAULT_CONTEXT_LIMIT = 131072

#: Seconds a client may leave the request body unfinished without sending a byte: a client that stalls
#: mid-body (or trickles it) gets a 408 instead of holding the request open forever.
BODY_TIMEOUT = 30.0

#: Seconds the backend may take to yield its next item (the first one included: queueing and prompt
#: processing count); past that the request fails with a 504, or with the error event mid-stream.
BACKEND_TIMEOUT = 300.0

#: Path and response id prefix of each protocol (the prefixes the official APIs use).
_ROUTES: dict[Protocol, tuple[str, str]] = {
    "chat_completions": ("/v1/chat/completions", "chatcmpl-"),
    "responses": ("/v1/responses", "resp_"),
    "messages": ("/v1/messages", "msg_"),
}

_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}

#: Backend chunks at least this large (characters of text, or token ids) are processed in a worker thread; the
#: per-token ones stay on the event loop, where a thread hop would cost more than the work.
_LARGE_TEXT = 16384
_LARGE_IDS = 4096

#: The largest token count a backend may report: counts are JSON numbers that every client must read exactly.
_MAX_COUNT = 2**53 - 1


class RequestTooLarge(ConversionError):
    """A request body over the server's size limit."""

    status_code = 413


class RequestTimeout(ConversionError):
    """A request body that stopped arriving before it was complete."""

    status_code = 408


class BackendTimeout(DscodecError):
    """The model backend yielded nothing for longer than the server waits."""

    status_code: ClassVar[int] = 504


class _NotFound(ConversionError):
    """A path that names no endpoint."""

    status_code = 404


class _MethodNotAllowed(ConversionError):
    """A method other than POST on an endpoint."""

    status_code = 405


def create_app(
    backend: Backend,
    *,
    context_limit: int = DEFAULT_CONTEXT_LIMIT,
    tokenizer: TokenizerLike = None,
    options: ConversionOptions | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    body_timeout: float | None = BODY_TIMEOUT,
    backend_timeout: float | None = BACKEND_TIMEOUT,
) -> FastAPI:
    """An ASGI app serving ``POST /v1/chat/completions``, ``/v1/responses`` and ``/v1/messages`` from ``backend``.

    Args:
        backend: called once per request with a :class:`~dscodec.server.BackendRequest`; yields the model output.
        context_limit: the model's context window in tokens; prompt plus completion budget must fit.
        tokenizer: encodes prompts and decodes token ids (None: the bundled DeepSeek V4 tokenizer, which has no
            ``<｜System｜>`` and so cannot encode V4.1 prompts).
        options: conversion policy (accepted model names, default thinking mode, ...).
        max_body_bytes: requests with a larger body get a 413.
        body_timeout: seconds a client may pause while sending the body (408 after that); None waits forever.
        backend_timeout: seconds the backend may take for each item it yields (504 before the response starts,
            the protocol's error event after); None waits forever.

    Raises:
        TokenizerError: the tokenizer cannot be loaded.

    Examples:
        >>> from dscodec.server import ScriptedBackend, create_app
        >>> app = create_app(ScriptedBackend({"hi": {"output": "Hello!"}}))
        >>> sorted(route.path for route in app.routes if route.path.startswith("/v1/"))
        ['/v1/chat/completions', '/v1/messages', '/v1/responses']
    """
    server = _Server(
        backend,
        vocabulary=Vocabulary.load(tokenizer),
        context_limit=context_limit,
        options=options,
        max_body_bytes=max_body_bytes,
        body_timeout=body_timeout,
        backend_timeout=backend_timeout,
    )
    app = FastAPI(title="dscodec example server", version=dscodec.__version__)
    for protocol, (path, _) in _ROUTES.items():
        app.add_api_route(path, server.endpoint(protocol), methods=["POST"], name=protocol)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_middleware(_LastResort)
    return app


class _Server:
    """The per-app state: the backend, one tokenizer, the limits."""

    def __init__(
        self,
        backend: Backend,
        *,
        vocabulary: Vocabulary,
        context_limit: int,
        options: ConversionOptions | None,
        max_body_bytes: int,
        body_timeout: float | None,
        backend_timeout: float | None,
    ) -> None:
        self.backend = backend
        self.vocabulary = vocabulary
        self.encoder = dscodec.PromptEncoder(vocabulary)
        self.context_limit = context_limit
        self.options = options
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.backend_timeout = backend_timeout

    def endpoint(self, protocol: Protocol) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            return await self.handle(protocol, request)

        handle.__name__ = f"create_{protocol}"
        return handle

    async def handle(self, protocol: Protocol, http: Request) -> Response:
        """Answer one request: an error body, a complete response, or an event stream."""
        try:
            return await self._answer(protocol, http)
        except DscodecError as exc:
            return _error_response(protocol, exc)
        except Exception:
            # A bug of the server itself (every expected failure is handled closer to its cause).
            logger.exception("answering a %s request failed", protocol)
            return _error_response(protocol, DscodecError("The server failed to answer the request."))

    async def _answer(self, protocol: Protocol, http: Request) -> Response:
        try:
            body = await self._read_body(http)
        except _Disconnected:
            return _gone()
        try:
            job = await anyio.to_thread.run_sync(self._prepare, protocol, body, dict(http.headers))
        except DscodecError:
            raise
        except Exception:
            logger.exception("preparing a %s request failed", protocol)
            raise DscodecError("The server could not prepare the request.") from None
        request = job.request
        processor = dscodec.StreamProcessor(
            request,
            response_id=_ROUTES[protocol][1] + secrets.token_hex(12),
            model=request.model,
            tokenizer=self.vocabulary,
        )
        try:
            outputs = _iterate(self.backend(job))
        except Exception as exc:  # noqa: BLE001 - whatever the backend raised, the client gets an answer
            return _error_response(protocol, _backend_error(exc))
        if not request.stream:
            return await self._complete(protocol, http, processor, outputs)
        # The status line goes out with the first frame, so a backend that fails before its first output (or
        # whose first output the processor refuses) still gets a proper error status: run it that far first.
        try:
            head = await _unless_disconnected(http, self._start(processor, outputs))
        except BaseException as exc:
            await _close(outputs)
            if not isinstance(exc, Exception):
                raise
            return _error_response(protocol, _backend_error(exc))
        if head is None:
            await _close(outputs)
            return _gone()
        frames, done = head
        return _EventStream(self._frames(processor, outputs, frames, done))

    def _prepare(self, protocol: Protocol, body: bytes, headers: Mapping[str, str]) -> BackendRequest:
        """Convert, render and encode (in a worker thread); resolve the completion budget."""
        request = dscodec.convert(protocol, body, self.options)
        prompt = dscodec.render(request)
        ids = self.encoder.encode_rendered(prompt)
        max_tokens = request.resolve_max_tokens(len(ids), self.context_limit)
        return BackendRequest(
            request=request, prompt=prompt, token_ids=ids, max_tokens=max_tokens, headers=headers
        )

    # -- the request body ---------------------------------------------------------------------------------------

    async def _read_body(self, http: Request) -> bytes:
        """The request body, refused as soon as it is known to be over the limit or it stalls.

        The body is read as JSON whatever its ``Content-Type`` says (clients such as ``curl -d`` send a form type
        for JSON); a body that is not JSON is a 400 from the converter.

        Raises:
            RequestTooLarge: the declared or received size is over the limit.
            RequestTimeout: no byte arrived for ``body_timeout`` seconds.
            _Disconnected: the client went away.
        """
        limit = self.max_body_bytes
        declared = http.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
        parts: list[bytes] = []
        size = 0
        while True:
            with anyio.move_on_after(self.body_timeout) as waiting:
                message = await http.receive()
            if waiting.cancelled_caught:
                raise RequestTimeout(
                    f"The request body stopped arriving: nothing was received for {self.body_timeout:g} s."
                )
            if message["type"] == "http.disconnect":
                raise _Disconnected
            part = message.get("body", b"")
            size += len(part)
            if size > limit:
                raise _too_large(limit)
            if part:
                parts.append(part)
            if not message.get("more_body", False):
                return b"".join(parts)

    # -- the backend loop ---------------------------------------------------------------------------------------

    async def _next(self, outputs: AsyncIterator[BackendOutput]) -> BackendOutput | None:
        """The backend's next item, or None at its end.

        Raises:
            BackendTimeout: nothing came within ``backend_timeout`` seconds (the wait is cancelled).
        """
        with anyio.move_on_after(self.backend_timeout):
            try:
                return await outputs.__anext__()
            except StopAsyncIteration:
                return None
        # Only a timeout leaves the block without returning.
        raise BackendTimeout(
            f"The model backend produced nothing for {self.backend_timeout:g} s; the request was abandoned."
        )

    async def _push(self, processor: StreamProcessor, item: BackendOutput | None) -> list[WireEvent]:
        """Hand one backend item (None: its end) to the processor; large work in a worker thread."""
        if _large(item):
            return await anyio.to_thread.run_sync(_feed, processor, item)
        return _feed(processor, item)

    async def _sse(self, processor: StreamProcessor, item: BackendOutput | None) -> bytes:
        """The SSE bytes of the events one backend item gives; large work in a worker thread."""
        if _large(item):
            return await anyio.to_thread.run_sync(_feed_sse, processor, item)
        return _feed_sse(processor, item)

    async def _complete(
        self,
        protocol: Protocol,
        http: Request,
        processor: StreamProcessor,
        outputs: AsyncIterator[BackendOutput],
    ) -> Response:
        """The non-streaming answer: run the backend to its end, then build the complete response."""
        try:
            events = await _unless_disconnected(http, self._collect(processor, outputs))
        except Exception as exc:  # noqa: BLE001 - whatever the backend raised, the client gets an answer
            return _error_response(protocol, _backend_error(exc))
        finally:
            await _close(outputs)
        if events is None:
            return _gone()
        try:
            content = await anyio.to_thread.run_sync(_complete_json, protocol, events)
        except Exception as exc:  # events the accumulator or the encoder cannot take
            logger.error("building the complete %s response failed", protocol, exc_info=exc)
            return _error_response(
                protocol,
                ModelOutputError(f"the complete response could not be built from the model output: {exc}"),
            )
        return Response(content, media_type="application/json")

    async def _collect(
        self, processor: StreamProcessor, outputs: AsyncIterator[BackendOutput]
    ) -> list[WireEvent]:
        """Run the backend to the end (or to a stop sequence) and return every event."""
        events: list[WireEvent] = []
        while True:
            item = await self._next(outputs)
            events += await self._push(processor, item)
            if item is None or processor.finished or isinstance(item, Finish):
                return events

    async def _start(
        self, processor: StreamProcessor, outputs: AsyncIterator[BackendOutput]
    ) -> tuple[list[bytes], bool]:
        """Run a streaming response up to its first output (or its end): the frames so far, and whether it ended.

        Everything that fails up to here fails before the status line, so the client gets the error's status.
        """
        frames: list[bytes] = []
        while True:
            item = await self._next(outputs)
            frame = await self._sse(processor, item)
            if frame:
                frames.append(frame)
            if item is None or processor.finished or isinstance(item, Finish):
                return frames, True
            if not isinstance(item, PromptUsage):
                return frames, False

    async def _frames(
        self, processor: StreamProcessor, outputs: AsyncIterator[BackendOutput], head: list[bytes], done: bool
    ) -> AsyncGenerator[bytes, None]:
        """The SSE frames of a started response (``head`` first); closes the backend at the end."""
        try:
            for frame in head:
                yield frame
            while not done:
                item = await self._next(outputs)
                frame = await self._sse(processor, item)
                if frame:
                    yield frame
                done = item is None or processor.finished or isinstance(item, Finish)
            if processor.sse_done:
                yield processor.sse_done.encode()
        except Exception as exc:  # noqa: BLE001 - whatever failed, the client is told
            # After the 200 the protocol's error event is the only way left to say the response failed.
            frame = _failure_frame(processor, _backend_error(exc))
            if frame:
                yield frame
        finally:
            await _close(outputs)


# -- backend items ------------------------------------------------------------------------------------------------


def _iterate(outputs: object) -> AsyncIterator[BackendOutput]:
    """The backend's return value, checked to be an async iterator."""
    if hasattr(outputs, "__anext__"):
        return outputs  # type: ignore[return-value]
    close = getattr(outputs, "close", None)
    if callable(close) and hasattr(outputs, "__await__"):
        close()  # a coroutine never awaited would warn
    raise ModelOutputError(
        f"the model backend returned a {type(outputs).__name__}; expected an async iterator of outputs"
    )


def _large(item: BackendOutput | None) -> bool:
    """Whether processing ``item`` may take long: a big chunk, or the end (it counts the reasoning tokens)."""
    if item is None or isinstance(item, Finish):
        return True
    if isinstance(item, TextChunk):
        return isinstance(item.text, str) and len(item.text) >= _LARGE_TEXT
    if isinstance(item, TokenChunk):
        return isinstance(item.ids, Sequence) and len(item.ids) >= _LARGE_IDS
    return False


def _count(value: object, what: str) -> int:
    """A token count from the backend: an integer from 0 to 2**53 - 1."""
    try:
        count = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ModelOutputError(f"the model backend sent {what}={value!r}; expected an integer") from None
    if not 0 <= count <= _MAX_COUNT:
        raise ModelOutputError(
            f"the model backend sent {what}={count}; expected a count from 0 to {_MAX_COUNT}"
        )
    return count


def _feed(processor: StreamProcessor, item: BackendOutput | None) -> list[WireEvent]:
    """Hand one backend item (None: the end of the backend's output) to the processor."""
    if item is None:
        return processor.finish()
    if isinstance(item, TextChunk):
        return processor.push_text(item.text, _count(item.token_count, "TextChunk.token_count"))
    if isinstance(item, TokenChunk):
        return processor.push_tokens(item.ids, item.logprobs)
    if isinstance(item, PromptUsage):
        fingerprint = item.system_fingerprint
        if fingerprint is not None and not isinstance(fingerprint, str):
            raise ModelOutputError(
                f"the model backend sent system_fingerprint={fingerprint!r}; expected a string or None"
            )
        return processor.start(
            _count(item.prompt_tokens, "PromptUsage.prompt_tokens"),
            _count(item.cached_tokens, "PromptUsage.cached_tokens"),
            fingerprint,
        )
    if isinstance(item, Finish):
        return processor.finish(item.reason)
    raise ModelOutputError(
        f"the model backend yielded a {type(item).__name__}; expected PromptUsage, TextChunk, TokenChunk or Finish"
    )


def _feed_sse(processor: StreamProcessor, item: BackendOutput | None) -> bytes:
    """The SSE frames of the events ``item`` gives, as one byte string."""
    events = _feed(processor, item)
    return "".join(event.sse() for event in events).encode() if events else b""


def _failure_frame(processor: StreamProcessor, error: DscodecError) -> bytes:
    """The protocol's mid-stream error event(s) for ``error``; empty when nothing more can be said."""
    try:
        return "".join(event.sse() for event in processor.fail(error)).encode()
    except Exception:
        # The events of the failed response cannot be written either (the processor's own state is broken):
        # the stream just ends, and the client sees it cut short.
        logger.exception("writing the error event of a failed stream failed")
        return b""


def _complete_json(protocol: Protocol, events: list[WireEvent]) -> bytes:
    """The complete response the events add up to, as JSON (in a worker thread: both steps are linear but long)."""
    return orjson.dumps(dscodec.accumulate(protocol, events))


async def _close(outputs: AsyncIterator[BackendOutput]) -> None:
    """Close the backend iterator; shielded, so a cancelled request (client gone) still releases the backend."""
    aclose = getattr(outputs, "aclose", None)
    if aclose is None:
        return
    with anyio.CancelScope(shield=True):
        try:
            await aclose()
        except Exception:  # a backend that fails to close must not turn a finished response into an error
            logger.exception("closing the backend failed")


_T = TypeVar("_T")


async def _unless_disconnected(http: Request, work: Awaitable[_T]) -> _T | None:
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


class _EventStream(Response):
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


# -- errors -------------------------------------------------------------------------------------------------------


class _Disconnected(Exception):
    """The client went away before its request body was complete."""


def _gone() -> Response:
    """The answer to a client that already left: nobody reads it (nginx's 499 "client closed request")."""
    return Response(status_code=499)


def _too_large(limit: int) -> RequestTooLarge:
    return RequestTooLarge(f"The request body is larger than this server accepts ({limit} bytes).")


def _backend_error(exc: Exception) -> DscodecError:
    """A backend failure as a dscodec error (logged): its own when it raised one, else a 502 naming the cause."""
    if isinstance(exc, DscodecError):
        logger.warning("the model backend refused or failed: %s", exc)
        return exc
    logger.error("the model backend failed", exc_info=exc)
    return ModelOutputError(f"the model server failed: {exc}")


def _error_response(
    protocol: Protocol, exc: DscodecError, headers: Mapping[str, str] | None = None
) -> Response:
    """The error in the protocol's own body shape (deviations D1, D2) with its HTTP status."""
    # Rendered for this protocol rather than read from exc.body: an error object a backend re-raises may have
    # been bound to another protocol by an earlier request.
    body = dscodec.error_body(protocol, exc)
    status = exc.status_code if 400 <= exc.status_code <= 599 else 500  # a backend's error class may say 200
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def _route_path(scope: Scope) -> str:
    """The request path below the app's mount point."""
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    return path[len(root) :] if root and path.startswith(root) else path


def _protocol_of(path: str) -> Protocol | None:
    """The protocol whose error shape answers ``path``: Anthropic's under ``/v1/messages``, OpenAI's for any other
    ``/v1/`` path; None elsewhere (FastAPI's own pages)."""
    if path == "/v1/messages" or path.startswith("/v1/messages/"):
        return "messages"
    if path == "/v1" or path.startswith("/v1/"):
        return "chat_completions"
    return None


async def _http_error(request: Request, exc: Exception) -> Response:
    """Routing errors (404, 405) in the protocol's shape; FastAPI's ``{"detail": ...}`` outside ``/v1/``."""
    assert isinstance(exc, HTTPException)
    protocol = _protocol_of(_route_path(request.scope))
    if protocol is None:
        return await http_exception_handler(request, exc)
    method, path = request.method, request.url.path
    error: DscodecError
    if exc.status_code == 404:
        error = _NotFound(f"Invalid URL ({method} {path}): this server has no such endpoint.")
    elif exc.status_code == 405:
        error = _MethodNotAllowed(f"Method {method} is not allowed on {path}; send a POST request.")
    else:
        error = DscodecError(str(exc.detail))
    response = _error_response(protocol, error, exc.headers)
    if exc.status_code not in (404, 405):
        response.status_code = exc.status_code
    return response


class _LastResort:
    """The outermost guard: an exception that escaped every handler (a bug) still gets the protocol's 500 body,
    or, when the response had already started, just ends it; it is logged, never passed on to the server."""

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
            logger.exception("unhandled error answering %s %s", scope.get("method"), scope.get("path"))
            if started:
                return
            protocol = _protocol_of(_route_path(scope)) or "chat_completions"
            error = DscodecError("The server failed to answer the request.")
            try:
                await _error_response(protocol, error)(scope, receive, send)
            except OSError:
                pass  # the client is gone too
