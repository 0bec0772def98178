"""The example HTTP server: OpenAI Chat Completions, OpenAI Responses and Anthropic Messages in front of a backend.

One request, start to end::

    body ─► convert ─► render ─► encode ─► resolve max_tokens ─► backend(job) ─► StreamProcessor ─► SSE / JSON

Everything protocol-specific comes from dscodec (its public API, and the error body renderers of
``dscodec.protocols.errors`` for errors raised outside a converter); this module only moves bytes. Conversion
and tokenization run in a worker thread so a large prompt does not stall other streams.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import orjson
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

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

__all__ = ["DEFAULT_CONTEXT_LIMIT", "MAX_BODY_BYTES", "RequestTooLarge", "create_app"]

logger = logging.getLogger("dscodec.server")

#: The largest request body accepted (32 MiB): room for long conversations with inline images, and a bound on
#: what one client can make the server buffer and tokenize.
MAX_BODY_BYTES = 32 * 1024 * 1024

#: The context window requests are checked against when the caller sets none (spec §1.4).
DEFAULT_CONTEXT_LIMIT = 131072

#: Path and response id prefix of each protocol (the prefixes the official APIs use).
_ROUTES: dict[Protocol, tuple[str, str]] = {
    "chat_completions": ("/v1/chat/completions", "chatcmpl-"),
    "responses": ("/v1/responses", "resp_"),
    "messages": ("/v1/messages", "msg_"),
}

_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class RequestTooLarge(ConversionError):
    """A request body over the server's size limit."""

    status_code = 413


def create_app(
    backend: Backend,
    *,
    context_limit: int = DEFAULT_CONTEXT_LIMIT,
    tokenizer: TokenizerLike = None,
    options: ConversionOptions | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> FastAPI:
    """An ASGI app serving ``POST /v1/chat/completions``, ``/v1/responses`` and ``/v1/messages`` from ``backend``.

    Args:
        backend: called once per request with a :class:`~dscodec.server.BackendRequest`; yields the model output.
        context_limit: the model's context window in tokens; prompt plus completion budget must fit.
        tokenizer: encodes prompts and decodes token ids (None: the bundled DeepSeek V4 tokenizer, which has no
            ``<｜System｜>`` and so cannot encode V4.1 prompts).
        options: conversion policy (accepted model names, default thinking mode, ...).
        max_body_bytes: requests with a larger body get a 413.

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
    )
    app = FastAPI(title="dscodec example server", version=dscodec.__version__)
    for protocol, (path, _) in _ROUTES.items():
        app.add_api_route(path, server.endpoint(protocol), methods=["POST"], name=protocol)
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
    ) -> None:
        self.backend = backend
        self.vocabulary = vocabulary
        self.encoder = dscodec.PromptEncoder(vocabulary)
        self.context_limit = context_limit
        self.options = options
        self.max_body_bytes = max_body_bytes

    def endpoint(self, protocol: Protocol) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            return await self.handle(protocol, request)

        handle.__name__ = f"create_{protocol}"
        return handle

    async def handle(self, protocol: Protocol, http: Request) -> Response:
        """Answer one request: an error body, a complete response, or an event stream."""
        try:
            body = await _read_body(http, self.max_body_bytes)
            job = await anyio.to_thread.run_sync(self._prepare, protocol, body, http.headers)
        except DscodecError as exc:
            return _error_response(protocol, exc)
        except Exception:
            logger.exception("preparing a %s request failed", protocol)
            return _error_response(protocol, DscodecError("The server could not prepare the request."))
        request = job.request
        processor = dscodec.StreamProcessor(
            request,
            response_id=_ROUTES[protocol][1] + secrets.token_hex(12),
            model=request.model,
            tokenizer=self.vocabulary,
        )
        try:
            outputs = self.backend(job)
        except Exception as exc:  # noqa: BLE001 - whatever the backend raised, the client gets an answer
            return _error_response(protocol, _backend_error(exc))
        if not request.stream:
            try:
                events = await _unless_disconnected(http, _collect(processor, outputs))
            except Exception as exc:  # noqa: BLE001 - whatever the backend raised, the client gets an answer
                return _error_response(protocol, _backend_error(exc))
            finally:
                await _close(outputs)
            if events is None:
                return Response(
                    status_code=499
                )  # nobody is left to read it (nginx's "client closed request")
            return _json_response(dscodec.accumulate(protocol, events))
        # The status line goes out with the first frame, so a backend that fails before it produced anything
        # still gets a proper error status: wait for its first item before answering 200.
        try:
            first = await _next(outputs)
        except BaseException as exc:
            await _close(outputs)
            if not isinstance(exc, Exception):
                raise
            return _error_response(protocol, _backend_error(exc))
        return _EventStream(_frames(processor, outputs, first))

    def _prepare(self, protocol: Protocol, body: bytes, headers: Mapping[str, str]) -> BackendRequest:
        """Convert, render and encode (in a worker thread); resolve the completion budget."""
        request = dscodec.convert(protocol, body, self.options)
        prompt = dscodec.render(request)
        ids = self.encoder.encode_rendered(prompt)
        max_tokens = request.resolve_max_tokens(len(ids), self.context_limit)
        return BackendRequest(
            request=request, prompt=prompt, token_ids=ids, max_tokens=max_tokens, headers=dict(headers)
        )


# -- the backend loop ---------------------------------------------------------------------------------------------


async def _next(outputs: AsyncIterator[BackendOutput]) -> BackendOutput | None:
    """The backend's next item, or None at its end."""
    try:
        return await outputs.__anext__()
    except StopAsyncIteration:
        return None


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


def _push(processor: StreamProcessor, item: BackendOutput) -> list[WireEvent]:
    """Hand one backend item to the processor."""
    if isinstance(item, TextChunk):
        return processor.push_text(item.text, item.token_count)
    if isinstance(item, TokenChunk):
        return processor.push_tokens(item.ids, item.logprobs)
    if isinstance(item, PromptUsage):
        return processor.start(item.prompt_tokens, item.cached_tokens, item.system_fingerprint)
    if isinstance(item, Finish):
        return processor.finish(item.reason)
    raise ModelOutputError(
        f"the model backend yielded a {type(item).__name__}; expected PromptUsage, TextChunk, TokenChunk or Finish"
    )


async def _collect(processor: StreamProcessor, outputs: AsyncIterator[BackendOutput]) -> list[WireEvent]:
    """Run the backend to the end (or to a stop sequence) and return every event."""
    events: list[WireEvent] = []
    while True:
        item = await _next(outputs)
        if item is None:
            events += processor.finish()
            return events
        events += _push(processor, item)
        if processor.finished or isinstance(item, Finish):
            return events


async def _frames(
    processor: StreamProcessor, outputs: AsyncIterator[BackendOutput], first: BackendOutput | None
) -> AsyncGenerator[bytes, None]:
    """The SSE frames of a response whose first backend item is ``first``; closes the backend at the end."""
    try:
        item = first
        while True:
            if item is None:
                events = processor.finish()
            else:
                events = _push(processor, item)
            if events:
                yield "".join(event.sse() for event in events).encode()
            if item is None or processor.finished or isinstance(item, Finish):
                break
            item = await _next(outputs)
        if processor.sse_done:
            yield processor.sse_done.encode()
    except Exception as exc:  # whatever the backend raised, the client is told
        # After the 200 the protocol's error event is the only way left to say the response failed.
        events = processor.fail(_backend_error(exc))
        if not events:
            # The response had already ended (or its error was already sent): nothing more can be said.
            raise
        yield "".join(event.sse() for event in events).encode()
    finally:
        await _close(outputs)


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


async def _read_body(http: Request, limit: int) -> bytes:
    """The request body, refused as soon as it is known to be over ``limit`` bytes."""
    declared = http.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    parts: list[bytes] = []
    size = 0
    async for part in http.stream():
        size += len(part)
        if size > limit:
            raise _too_large(limit)
        parts.append(part)
    return b"".join(parts)


def _too_large(limit: int) -> RequestTooLarge:
    return RequestTooLarge(f"The request body is larger than this server accepts ({limit} bytes).")


def _backend_error(exc: Exception) -> DscodecError:
    """A backend failure as a dscodec error (logged): its own when it raised one, else a 502 naming the cause."""
    if isinstance(exc, DscodecError):
        logger.warning("the model backend refused or failed: %s", exc)
        return exc
    logger.error("the model backend failed", exc_info=exc)
    return ModelOutputError(f"the model server failed: {exc}")


def _error_response(protocol: Protocol, exc: DscodecError) -> Response:
    """The error in the protocol's own body shape (deviations D1, D2) with its HTTP status."""
    # Rendered for this protocol rather than read from exc.body: an error object a backend re-raises may have
    # been bound to another protocol by an earlier request.
    body = dscodec.error_body(protocol, exc)
    return Response(orjson.dumps(body), status_code=exc.status_code, media_type="application/json")


def _json_response(body: dict[str, Any]) -> Response:
    return Response(orjson.dumps(body), media_type="application/json")
