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

import contextlib
import logging
import re
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

import dscodec
from dscodec._json import JSONDecodeError, loads
from dscodec.conversation import Protocol
from dscodec.errors import ContextLengthExceeded, ConversionError, DscodecError, ModelOutputError, shown
from dscodec.options import DEFAULT_MODEL_NAMES, ConversionOptions
from dscodec.processor import StreamProcessor
from dscodec.protocols._registry import spec
from dscodec.protocols.openai_responses import echo_storage
from dscodec.server._http import (
    REQUEST_ID,
    BackendTimeout,
    Disconnected,
    EventStream,
    LastResort,
    RequestIds,
    RequestTimeout,
    RequestTooLarge,
    RequireApiKey,
    SendDeadline,
    UnsupportedEncoding,
    coded,
    context_too_long,
    decoded_body,
    error_response,
    gone,
    header_dict,
    http_error,
    too_large,
    unless_disconnected,
    unserved,
)
from dscodec.server._outputs import (
    WithinBudget,
    backend_error,
    close_outputs,
    complete_response,
    failure_frame,
    feed,
    feed_sse,
    is_large,
    iterate_outputs,
    next_output,
    sse_of,
)
from dscodec.server._probes import Catalog, count_tokens_response, health_response, input_tokens_response
from dscodec.server._stored import StoredResponses, identified
from dscodec.server._threads import Threads, ThreadTurn
from dscodec.server.backend import (
    Backend,
    BackendOutput,
    BackendRequest,
    Finish,
    KeepAlive,
    PromptUsage,
)
from dscodec.server.store import MemoryResponseStore, ResponseStore, Turn, begin_turn, is_retrievable
from dscodec.vocab import TokenizerLike, Vocabulary

if TYPE_CHECKING:
    from dscodec import WireEvent

__all__ = [
    "BACKEND_TIMEOUT",
    "BODY_TIMEOUT",
    "DEFAULT_CONTEXT_LIMIT",
    "MAX_BODY_BYTES",
    "SEND_TIMEOUT",
    "BackendTimeout",
    "RequestTimeout",
    "RequestTooLarge",
    "UnsupportedEncoding",
    "create_app",
]

logger = logging.getLogger("dscodec.server")

#: The largest request body accepted (32 MiB): room for long conversations with inline images, and a bound on
#: what one client can make the server buffer and tokenize.
MAX_BODY_BYTES = 32 * 1024 * 1024

#: The context window requests are checked against when the caller sets none (behavior.md#sampling).
DEFAULT_CONTEXT_LIMIT = 131072

#: Seconds a client may leave the request body unfinished without sending a byte: a client that stalls
#: mid-body gets a 408 instead of holding the request open forever. The whole body must arrive within
#: _BODY_DEADLINE_FACTOR times this (a client that trickles it, a byte now and then, is cut off too).
BODY_TIMEOUT = 30.0
_BODY_DEADLINE_FACTOR = 20
#: How many compressed bodies one app decodes at a time: each may expand to the body limit, so a burst of small
#: bodies that expand far holds this many expansions in memory at most, not one per request.
DECODERS = 2

#: Seconds the backend may take to yield its next item (the first one included: queueing and prompt
#: processing count); past that the request fails with a 504, or with the error event mid-stream.
BACKEND_TIMEOUT = 300.0

#: Seconds one write of an answer may wait for a client that stopped reading (its connection open, nothing read):
#: past that the answer is abandoned and its backend closed, as after a disconnect.
SEND_TIMEOUT = 60.0

#: Path and response id prefix of each protocol (the prefixes the official APIs use).
_ROUTES: dict[Protocol, tuple[str, str]] = {
    "chat_completions": ("/v1/chat/completions", "chatcmpl-"),
    "responses": ("/v1/responses", "resp_"),
    "messages": ("/v1/messages", "msg_"),
}


def _check_arguments(
    backend: object,
    context_limit: object,
    options: object,
    max_body_bytes: object,
    body_timeout: object,
    backend_timeout: object,
    send_timeout: object,
    served_models: object,
    response_store: object,
    api_keys: object,
) -> None:
    """:func:`create_app`'s arguments, checked before anything is built."""
    if not callable(backend):
        raise TypeError(
            f"backend must be a callable (see dscodec.server.Backend), not {type(backend).__name__}"
        )
    for name, value in (("context_limit", context_limit), ("max_body_bytes", max_body_bytes)):
        if type(value) is not int:
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if value < 1:
            raise ValueError(f"{name} must be 1 or more, not {shown(value)}")
    timeouts = (
        ("body_timeout", body_timeout),
        ("backend_timeout", backend_timeout),
        ("send_timeout", send_timeout),
    )
    for name, value in timeouts:
        if value is None:
            continue
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"{name} must be a number of seconds or None, not {type(value).__name__}")
        try:
            seconds = float(value)
        except OverflowError:  # an integer beyond the float range
            seconds = float("inf")
        if not 0 < seconds < float("inf"):  # NaN too
            raise ValueError(f"{name} must be a positive number of seconds or None, not {shown(value)}")
    if options is not None and not isinstance(options, ConversionOptions):
        raise TypeError(f"options must be a ConversionOptions or None, not {type(options).__name__}")
    if served_models is not None and (
        isinstance(served_models, (str, bytes))
        or not isinstance(served_models, Sequence)
        or not all(isinstance(name, str) for name in served_models)
    ):
        raise TypeError("served_models must be a list or tuple of model names (str) or None")
    if served_models is not None:
        # A listed name the server would answer with a 400 ("The supported API model names are ...") is a trap
        # for every client that picks a model from GET /v1/models.
        accepted = (
            options.model_versions_by_name if isinstance(options, ConversionOptions) else DEFAULT_MODEL_NAMES
        )
        unknown = [name for name in served_models if name not in accepted]
        if unknown:
            raise ValueError(
                f"served_models: {shown(unknown[0])} is no model name the server accepts ({', '.join(accepted)}); "
                f"accept it first: options=ConversionOptions().with_model_alias({unknown[0]!r}, 'v4')"
            )
    if response_store is not None and not (
        callable(getattr(response_store, "get", None)) and callable(getattr(response_store, "put", None))
    ):
        raise TypeError(
            f"response_store must have get() and put() (see dscodec.server.ResponseStore), "
            f"not {type(response_store).__name__}"
        )
    if api_keys is not None:
        if isinstance(api_keys, (str, bytes)) or not isinstance(api_keys, Collection):
            raise TypeError("api_keys must be a collection of keys (str), not one key, or None")
        if not api_keys:
            raise ValueError("api_keys must hold at least one key (None: no key needed)")
        for number, key in enumerate(api_keys, 1):
            if not isinstance(key, str):
                raise TypeError(f"an API key must be a str, not {type(key).__name__}")
            if not key:
                raise ValueError(f"API key {number} is empty")
            if not key.isascii() or not key.isprintable() or key != key.strip() or " " in key:
                # The key itself is not shown: error messages end up in logs.
                raise ValueError(
                    f"API key {number} must be printable ASCII text without spaces (the key is not shown)"
                )


def create_app(
    backend: Backend,
    *,
    context_limit: int = DEFAULT_CONTEXT_LIMIT,
    tokenizer: TokenizerLike = None,
    options: ConversionOptions | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    body_timeout: float | None = BODY_TIMEOUT,
    backend_timeout: float | None = BACKEND_TIMEOUT,
    send_timeout: float | None = SEND_TIMEOUT,
    served_models: Sequence[str] | None = None,
    response_store: ResponseStore | None = None,
    api_keys: Collection[str] | None = None,
) -> FastAPI:
    """An ASGI app serving ``POST /v1/chat/completions``, ``/v1/responses`` and ``/v1/messages`` from ``backend``,
    with ``GET /v1/models``, ``POST /v1/messages/count_tokens``, ``POST /v1/responses/input_tokens`` and
    ``GET /health`` beside them, and the endpoints that read stored Responses back (``GET`` and ``DELETE
    /v1/responses/{id}``, its ``input_items`` and ``cancel``; see ``docs/server.md``). Messages requests may
    carry a ``thread``: the server holds their conversations between turns (in memory, bounded).

    Args:
        backend: called once per request with a :class:`~dscodec.server.BackendRequest`; yields the model output.
        context_limit: the model's context window in tokens; prompt plus completion budget must fit.
        tokenizer: encodes prompts and decodes token ids (None: the bundled DeepSeek V4 tokenizer, which has no
            ``<｜System｜>`` and so cannot encode V4.1 prompts).
        options: conversion policy (accepted model names, default thinking mode, ...).
        max_body_bytes: requests with a larger body get a 413.
        body_timeout: seconds a client may pause while sending the body (408 after that), and a twentieth of the
            time the whole body may take; None waits forever.
        backend_timeout: seconds the backend may take for each item it yields (504 before the response starts,
            the protocol's error event after); None waits forever.
        send_timeout: seconds one write of the answer may wait for a client that reads nothing (its connection
            open): past that the answer is abandoned, its backend closed and the connection closed; None waits
            forever.
        served_models: the names ``GET /v1/models`` lists (None: every name ``options`` accepts); each must be a
            name ``options`` accepts (a ``ValueError`` otherwise: clients pick their model from the list).
        response_store: where Responses turns are kept for ``previous_response_id``, and the response objects
            when it is a :class:`~dscodec.server.RetrievableStore` (None: a
            :class:`~dscodec.server.MemoryResponseStore` of the default size).
        api_keys: when given, every request must carry one of these keys (``Authorization: Bearer`` or
            ``x-api-key``), or it gets a 401 in its protocol's error shape; only ``/health`` stays open (the
            ``/openapi.json``, ``/docs`` and ``/redoc`` pages need a key too). None: no key is needed.

    Raises:
        TokenizerError: the tokenizer cannot be loaded.
        TypeError, ValueError: an argument of the wrong type or out of range (found here, not by the first
            request).

    Examples:
        >>> from dscodec.server import ScriptedBackend, create_app
        >>> app = create_app(ScriptedBackend({"hi": {"output": "Hello!"}}))
        >>> sorted({route.path for route in app.routes if route.path.startswith("/v1/")})  # doctest: +NORMALIZE_WHITESPACE
        ['/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/models', '/v1/models/{model:path}',
         '/v1/responses', '/v1/responses/compact', '/v1/responses/input_tokens', '/v1/responses/{response_id}',
         '/v1/responses/{response_id}/cancel', '/v1/responses/{response_id}/input_items']
    """
    _check_arguments(
        backend,
        context_limit,
        options,
        max_body_bytes,
        body_timeout,
        backend_timeout,
        send_timeout,
        served_models,
        response_store,
        api_keys,
    )
    dscodec.preload()  # the request and response paths of every protocol, so the first request pays for none
    server = _Server(
        backend,
        vocabulary=Vocabulary.load(tokenizer),
        context_limit=context_limit,
        options=options,
        max_body_bytes=max_body_bytes,
        body_timeout=body_timeout,
        backend_timeout=backend_timeout,
        response_store=MemoryResponseStore() if response_store is None else response_store,
    )
    if served_models is None:
        served_models = list((options.model_versions_by_name if options else DEFAULT_MODEL_NAMES).keys())
    catalog = Catalog(served_models, context_limit=context_limit)
    app = FastAPI(
        title="dscodec example server",
        version=dscodec.__version__,
        lifespan=_start_worker_thread,
        # A path with a trailing slash is no endpoint: a 404 in the protocol's shape, not a redirect built from the
        # client's Host header.
        redirect_slashes=False,
    )
    for protocol, (path, _) in _ROUTES.items():
        app.add_api_route(path, server.endpoint(protocol), methods=["POST"], name=protocol)
    app.add_api_route("/v1/messages/count_tokens", server.count_tokens, methods=["POST"], name="count_tokens")
    stored = StoredResponses(server.archive)
    for path, handler, method, name in (
        ("/v1/responses/input_tokens", server.input_tokens, "POST", "input_tokens"),
        (
            "/v1/responses/compact",
            unserved("responses", "Compacting a conversation"),
            "POST",
            "compact_response",
        ),
        ("/v1/responses/{response_id}", stored.retrieve, "GET", "retrieve_response"),
        ("/v1/responses/{response_id}", stored.delete, "DELETE", "delete_response"),
        ("/v1/responses/{response_id}/cancel", stored.cancel, "POST", "cancel_response"),
        ("/v1/responses/{response_id}/input_items", stored.input_items, "GET", "list_input_items"),
    ):
        app.add_api_route(path, handler, methods=[method], name=name)
    for path, handler, name in (
        ("/v1/models", catalog.list, "list_models"),
        ("/v1/models/{model:path}", catalog.get, "retrieve_model"),
        ("/health", server.health, "health"),
    ):
        app.add_api_route(path, handler, methods=["GET"], name=name)
        # The probes answer HEAD as GET (the same status and headers, no body).
        app.add_api_route(path, handler, methods=["HEAD"], name=f"{name}_head", include_in_schema=False)
    app.add_exception_handler(HTTPException, http_error)
    if api_keys is not None:
        app.add_middleware(RequireApiKey, keys=list(api_keys))
    if send_timeout is not None:
        app.add_middleware(SendDeadline, seconds=float(send_timeout))
    app.add_middleware(LastResort)
    app.add_middleware(RequestIds)  # added last: the outermost, so that every answer (a 500 too) has an id
    return app


@contextlib.asynccontextmanager
async def _start_worker_thread(app: FastAPI) -> AsyncIterator[None]:
    """Start the worker thread that encodes prompts and feeds stream processors before the first request, which
    would otherwise wait for it."""
    await anyio.to_thread.run_sync(int)
    yield


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
        response_store: ResponseStore,
    ) -> None:
        self.backend = backend
        self.store = response_store
        self.threads = Threads()
        #: The store again when it keeps response objects too, else None.
        self.archive = response_store if is_retrievable(response_store) else None
        self.vocabulary = vocabulary
        self.encoder = dscodec.PromptEncoder(vocabulary)
        self.context_limit = context_limit
        self.options = options
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self._decoders: anyio.CapacityLimiter | None = None  # made on first use, in the event loop (DECODERS)
        self.backend_timeout = backend_timeout

    def endpoint(self, protocol: Protocol) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            return await self.handle(protocol, request)

        handle.__name__ = f"create_{protocol}"
        return handle

    async def health(self, http: Request) -> Response:
        """``GET /health``: the backend's own ``health()`` check when it has one."""
        return await health_response(getattr(self.backend, "health", None))

    async def count_tokens(self, http: Request) -> Response:
        """``POST /v1/messages/count_tokens``: the exact prompt length of a Messages request."""
        count = await self._count_request("messages", http)
        return count if isinstance(count, Response) else count_tokens_response(count)

    async def input_tokens(self, http: Request) -> Response:
        """``POST /v1/responses/input_tokens``: the exact prompt length of a Responses request (after the items
        of the response it continues, when it names one)."""
        count = await self._count_request("responses", http)
        return count if isinstance(count, Response) else input_tokens_response(count)

    async def _count_request(self, protocol: Protocol, http: Request) -> int | Response:
        """The prompt length of the request ``http`` carries, or the error response."""
        try:
            try:
                body = await self._read_body(http)
            except Disconnected:
                return gone()
            return await anyio.to_thread.run_sync(self._count, protocol, body)
        except DscodecError as exc:
            return error_response(protocol, exc)
        except Exception:
            logger.exception("counting the tokens of a request failed")
            return error_response(protocol, DscodecError("The server could not count the tokens."))

    def _count(self, protocol: Protocol, body: bytes) -> int:
        document: bytes | Mapping[str, Any] = body
        if spec(protocol).continues_responses:
            document, _, _ = begin_turn(body, self.store, limit=self.max_body_bytes)
        elif spec(protocol).holds_threads:
            document, _ = self.threads.begin(body, hold=False)  # the thread's conversation, nothing held
        try:
            request = dscodec.convert(protocol, document, self.options)
        except ConversionError as exc:
            raise as_client_sent(exc, protocol, body, document) from None
        return len(self.encoder.encode_rendered(dscodec.render(request)))

    async def handle(self, protocol: Protocol, http: Request) -> Response:
        """Answer one request: an error body, a complete response, or an event stream."""
        try:
            return await self._answer(protocol, http)
        except DscodecError as exc:
            return error_response(protocol, exc)
        except Exception:
            # A bug of the server itself (every expected failure is handled closer to its cause).
            logger.exception("answering a %s request failed", protocol)
            return error_response(protocol, DscodecError("The server failed to answer the request."))

    async def _answer(self, protocol: Protocol, http: Request) -> Response:
        try:
            body = await self._read_body(http)
        except Disconnected:
            return gone()
        try:
            job, turn, thread = await anyio.to_thread.run_sync(
                self._prepare, protocol, body, header_dict(http.scope)
            )
        except DscodecError:
            raise
        except Exception:
            logger.exception("preparing a %s request failed", protocol)
            raise DscodecError("The server could not prepare the request.") from None
        response_id = _ROUTES[protocol][1] + secrets.token_hex(12)
        keep = None if turn is None and thread is None else _Keep(protocol, response_id, turn, thread)
        try:
            response = await self._run(protocol, http, job, response_id, keep)
        except BaseException:
            if thread is not None:
                self.threads.release(thread)
            raise
        if thread is not None and not isinstance(response, EventStream):
            self.threads.release(thread)  # nothing when the answer was kept
        return response

    async def _run(
        self, protocol: Protocol, http: Request, job: BackendRequest, response_id: str, keep: _Keep | None
    ) -> Response:
        """Run a prepared request: the error, the complete response, or the event stream."""
        request = job.request
        processor = dscodec.StreamProcessor(
            request,
            response_id=response_id,
            model=request.model,
            tokenizer=self.vocabulary,
            coalesce=not request.stream,  # the events only make the complete response
        )
        try:
            outputs = WithinBudget(iterate_outputs(self.backend(job)), job.max_tokens)
        except Exception as exc:  # noqa: BLE001 - whatever the backend raised, the client gets an answer
            return error_response(protocol, backend_error(exc))
        prompt_tokens = len(job.token_ids)
        if not request.stream:
            return await self._complete(protocol, http, processor, outputs, keep, prompt_tokens)
        # The status line goes out with the first frame, so a backend that fails before its first output (or
        # whose first output the processor refuses) still gets a proper error status: run it that far first.
        try:
            head = await unless_disconnected(http, self._start(processor, outputs, keep, prompt_tokens))
        except BaseException as exc:
            await close_outputs(outputs)
            if not isinstance(exc, Exception):
                raise
            return error_response(protocol, backend_error(exc))
        if head is None:
            await close_outputs(outputs)
            return gone()
        frames, done = head
        return EventStream(self._frames(processor, outputs, frames, done, keep))

    def _prepare(
        self, protocol: Protocol, body: bytes, headers: Mapping[str, str]
    ) -> tuple[BackendRequest, Turn | None, ThreadTurn | None]:
        """Convert, render and encode (in a worker thread); resolve the completion budget. A Responses request
        first gets the items of the response it continues (``previous_response_id``), a Messages request the
        conversation of the thread it continues."""
        thread: ThreadTurn | None = None
        if spec(protocol).holds_threads:
            document, thread = self.threads.begin(body)
            try:
                try:
                    return self._prepared(protocol, document, headers, None, None), None, thread
                except ConversionError as exc:
                    raise as_client_sent(exc, protocol, body, document) from None
            except BaseException:
                if thread is not None:
                    self.threads.release(thread)
                raise
        turn: Turn | None = None
        previous: str | None = None
        sent = body
        if spec(protocol).continues_responses:
            body, turn, previous = begin_turn(body, self.store, limit=self.max_body_bytes)
        try:
            return self._prepared(protocol, body, headers, turn, previous), turn, None
        except ConversionError as exc:
            raise as_client_sent(exc, protocol, sent, body) from None

    def _prepared(
        self,
        protocol: Protocol,
        body: bytes | Mapping[str, Any],
        headers: Mapping[str, str],
        turn: Turn | None,
        previous: str | None,
    ) -> BackendRequest:
        continues = spec(protocol).continues_responses
        request = dscodec.convert(protocol, body, self.options)
        if continues:
            echo_storage(request, store=turn is not None, previous_response_id=previous)
        prompt = dscodec.render(request)
        ids = self.encoder.encode_rendered(prompt)
        try:
            max_tokens = request.resolve_max_tokens(len(ids), self.context_limit)
        except ContextLengthExceeded as exc:
            requested = request.inference_options.max_tokens
            raise context_too_long(protocol, exc, len(ids), requested, self.context_limit) from None
        return BackendRequest(
            request=request,
            prompt=prompt,
            token_ids=ids,
            max_tokens=max_tokens,
            headers=headers,
            request_id=REQUEST_ID.get(),
        )

    def _remember(self, keep: _Keep, response: dict[str, Any]) -> None:
        """Store a finished Responses turn: its input items, then the response's output items (and the response
        object, when the store keeps them); or keep a Messages thread's conversation."""
        if keep.thread is not None:
            self.threads.finish(keep.thread, keep.response_id, response)
            return
        if keep.turn is None or response.get("status") not in ("completed", "incomplete"):
            return
        items = [*identified(keep.response_id, keep.turn.items), *response.get("output", [])]
        try:
            if self.archive is not None:
                self.archive.put(keep.response_id, items, response)
            else:
                self.store.put(keep.response_id, items)
        except Exception:  # a failing store must not fail the response it stores
            logger.exception("storing response %s failed", keep.response_id)

    def _remember_events(self, keep: _Keep) -> None:
        self._remember(keep, dscodec.accumulate(keep.protocol, keep.events))

    # -- the request body ---------------------------------------------------------------------------------------

    async def _read_body(self, http: Request) -> bytes:
        """The request body, refused as soon as it is known to be over the limit or it stalls.

        The body is read as JSON whatever its ``Content-Type`` says (clients such as ``curl -d`` send a form type
        for JSON); a body that is not JSON is a 400 from the converter.

        A body sent with a ``Content-Encoding`` (gzip or deflate) is decoded; the limit holds for the decoded body
        too.

        Raises:
            RequestTooLarge: the declared, received or decoded size is over the limit.
            UnsupportedEncoding: a ``Content-Encoding`` other than gzip, deflate or identity.
            ConversionError: a body that is not valid data of its ``Content-Encoding``.
            RequestTimeout: no byte arrived for ``body_timeout`` seconds, or the body took 20 times that.
            Disconnected: the client went away.
        """
        limit = self.max_body_bytes
        declared = http.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and (len(declared) > 18 or int(declared) > limit):
            raise too_large(limit)
        parts: list[bytes] = []
        size = 0
        pause = self.body_timeout
        total = None if pause is None else pause * _BODY_DEADLINE_FACTOR
        deadline = None if total is None else anyio.current_time() + total
        while True:
            wait = pause
            if pause is not None and deadline is not None:
                wait = min(pause, deadline - anyio.current_time())
            with anyio.move_on_after(wait) as waiting:
                message = await http.receive()
            if waiting.cancelled_caught:
                if wait != pause:
                    why = f"The request body took too long: it did not arrive within {total:g} s."
                else:
                    why = f"The request body stopped arriving: nothing was received for {pause:g} s."
                raise coded(RequestTimeout(why), "request_body_timeout")
            if message["type"] == "http.disconnect":
                raise Disconnected
            part = message.get("body", b"")
            size += len(part)
            if size > limit:
                raise too_large(limit)
            if part:
                parts.append(part)
            if not message.get("more_body", False):
                break
        body = b"".join(parts)
        # Every Content-Encoding line, in order: a coding list may be split over several (RFC 9110, 5.3).
        codings = ", ".join(http.headers.getlist("content-encoding"))
        if not codings:
            return body
        # In a worker thread, off the event loop: a small body may expand to the limit (a few at a time).
        if self._decoders is None:
            self._decoders = anyio.CapacityLimiter(DECODERS)
        return await anyio.to_thread.run_sync(decoded_body, body, codings, limit, limiter=self._decoders)

    # -- the backend loop ---------------------------------------------------------------------------------------

    async def _next(self, outputs: AsyncIterator[BackendOutput]) -> BackendOutput | None:
        """The backend's next item, or None at its end (a :class:`KeepAlive` is passed over: the wait starts
        again after it).

        Each call lets the event loop run first: a backend whose items are ready (buffered output) never waits,
        and neither does sending to a client that is gone, so without it nothing else would run while such a
        backend is drained, not even the watcher that cancels the response when its client disconnects.

        Raises:
            BackendTimeout: nothing came within ``backend_timeout`` seconds (the wait is cancelled).
        """
        while True:
            await anyio.lowlevel.checkpoint()
            with anyio.move_on_after(self.backend_timeout) as waiting:
                try:
                    item = await next_output(outputs)
                except StopAsyncIteration:
                    return None
            if waiting.cancelled_caught:
                break
            if item is None:  # None is this loop's own end of output: from the backend, it is a wrong item
                raise ModelOutputError(
                    "the model backend yielded None; expected PromptUsage, TextChunk, TokenChunk, Finish or KeepAlive"
                )
            if type(item) is not KeepAlive:  # (a KeepAlive only restarts the wait)
                return item
        raise BackendTimeout(
            f"The model backend produced nothing for {self.backend_timeout:g} s; the request was abandoned."
        )

    async def _push(self, processor: StreamProcessor, item: BackendOutput | None) -> list[WireEvent]:
        """Hand one backend item (None: its end) to the processor; large work in a worker thread."""
        if is_large(item):
            return await anyio.to_thread.run_sync(feed, processor, item)
        return feed(processor, item)

    async def _sse(self, processor: StreamProcessor, item: BackendOutput | None, keep: _Keep | None) -> bytes:
        """The SSE bytes of the events one backend item gives; large work in a worker thread. The events of a
        turn to store are kept too."""
        if keep is not None:
            events = await self._push(processor, item)
            keep.events += events
            return sse_of(events)
        if is_large(item):
            return await anyio.to_thread.run_sync(feed_sse, processor, item)
        return feed_sse(processor, item)

    async def _complete(
        self,
        protocol: Protocol,
        http: Request,
        processor: StreamProcessor,
        outputs: AsyncIterator[BackendOutput],
        keep: _Keep | None,
        prompt_tokens: int,
    ) -> Response:
        """The non-streaming answer: run the backend to its end, then build the complete response."""
        try:
            events = await unless_disconnected(http, self._collect(processor, outputs, prompt_tokens))
        except Exception as exc:  # noqa: BLE001 - whatever the backend raised, the client gets an answer
            return error_response(protocol, backend_error(exc))
        finally:
            await close_outputs(outputs)
        if events is None:
            return gone()
        try:
            content, response = await anyio.to_thread.run_sync(complete_response, protocol, events)
        except Exception as exc:  # events the accumulator or the encoder cannot take
            logger.error("building the complete %s response failed", protocol, exc_info=exc)
            return error_response(
                protocol,
                ModelOutputError(f"the complete response could not be built from the model output: {exc}"),
            )
        if keep is not None:
            await anyio.to_thread.run_sync(self._remember, keep, response)
        return Response(content, media_type="application/json")

    async def _collect(
        self, processor: StreamProcessor, outputs: AsyncIterator[BackendOutput], prompt_tokens: int
    ) -> list[WireEvent]:
        """Run the backend to the end (or to a stop sequence) and return every event."""
        item = await self._next(outputs)
        events = _opening(processor, item, prompt_tokens)
        while True:
            events += await self._push(processor, item)
            if item is None or processor.finished or isinstance(item, Finish):
                return events
            item = await self._next(outputs)

    async def _start(
        self,
        processor: StreamProcessor,
        outputs: AsyncIterator[BackendOutput],
        keep: _Keep | None,
        prompt_tokens: int,
    ) -> tuple[list[bytes], bool]:
        """Run a streaming response up to its first output (or its end): the frames so far, and whether it ended.

        Everything that fails up to here fails before the status line, so the client gets the error's status.
        """
        item = await self._next(outputs)
        opening = _opening(processor, item, prompt_tokens)
        if keep is not None:
            keep.events += opening
        frames: list[bytes] = [sse_of(opening)] if opening else []
        while True:
            frame = await self._sse(processor, item, keep)
            if frame:
                frames.append(frame)
            if item is None or processor.finished or isinstance(item, Finish):
                return frames, True
            if not isinstance(item, PromptUsage):
                return frames, False
            item = await self._next(outputs)

    async def _frames(
        self,
        processor: StreamProcessor,
        outputs: AsyncIterator[BackendOutput],
        head: list[bytes],
        done: bool,
        keep: _Keep | None,
    ) -> AsyncGenerator[bytes, None]:
        """The SSE frames of a started response (``head`` first); closes the backend at the end."""
        try:
            for frame in head:
                yield frame
            while not done:
                item = await self._next(outputs)
                frame = await self._sse(processor, item, keep)
                if frame:
                    yield frame
                done = item is None or processor.finished or isinstance(item, Finish)
            if keep is not None and processor.finished:
                await anyio.to_thread.run_sync(self._remember_events, keep)
            if processor.sse_done:
                yield processor.sse_done.encode()
        except Exception as exc:  # noqa: BLE001 - whatever failed, the client is told
            # After the 200 the protocol's error event is the only way left to say the response failed.
            request_id = REQUEST_ID.get()
            frame = failure_frame(processor, backend_error(exc), None if request_id == "-" else request_id)
            if frame:
                yield frame
        finally:
            if keep is not None and keep.thread is not None:
                self.threads.release(keep.thread)  # nothing when the answer was kept
            await close_outputs(outputs)


#: Where a request's conversation is, by protocol, and how a path into it is spelled in an error's ``param``:
#: ``input[4]``, ``messages[2]`` (or ``messages.2``).
_CONVERSATION_PATHS = {
    "responses": re.compile(r"^(input)(\[)(\d+)(\])"),
    "messages": re.compile(r"^(messages)(\.|\[)(\d+)(\]?)"),
}
#: A path into the conversation at the start of a serde message's quoted path (`` `messages.2.content.0: …` ``),
#: for the errors that name no ``param``.
_MESSAGE_PATHS = {"messages": re.compile(r"(?<=`)(messages)(\.)(\d+)(?=[.:])()")}


def as_client_sent(
    exc: ConversionError, protocol: Protocol, sent: bytes, converted: object
) -> ConversionError:
    """``exc``, raised for a body the server put held items in front of (a stored response's items, a thread's
    messages), with its paths into the conversation counted as the client sent it: ``input[4]`` is the client's
    ``input[0]`` after four held items. A path into the held items is left as it is. Only on the error path: both
    bodies are read again to count."""
    pattern = _CONVERSATION_PATHS.get(protocol)
    if pattern is None or converted is sent:
        return exc
    field = "input" if protocol == "responses" else "messages"
    try:
        merged = converted if isinstance(converted, (Mapping, str, bytes)) else None
        merged = loads(merged) if isinstance(merged, (str, bytes)) else merged
        own = loads(sent)
    except JSONDecodeError:
        return exc
    if not (isinstance(merged, Mapping) and isinstance(own, Mapping)):
        return exc
    whole, mine = merged.get(field), own.get(field)
    if isinstance(mine, str):
        mine = [mine]
    if not (isinstance(whole, list) and isinstance(mine, list)) or len(whole) <= len(mine):
        return exc
    held = len(whole) - len(mine)

    def rebased(match: re.Match[str]) -> str:
        index = int(match.group(3))
        if index < held:
            return match.group(0)
        return f"{match.group(1)}{match.group(2)}{index - held}{match.group(4)}"

    # Only the error's own path is counted again, never a value of the request a message quotes.
    param, message = exc.param, exc.message
    if param is not None:
        head = pattern.match(param)
        if head is not None:
            new_head = rebased(head)
            param = new_head + param[head.end() :]
            # The same path in the message, where it is not quoted (a quoted one is the client's value).
            path = re.compile(rf"(?<![\w'\"`]){re.escape(head.group(0))}(?![\w])")
            message = path.sub(lambda _: new_head, message)
    elif protocol in _MESSAGE_PATHS:
        message = _MESSAGE_PATHS[protocol].sub(rebased, message, count=1)
    if message == exc.message and param == exc.param:
        return exc
    told = exc.copy()
    told.message, told.param = message, param
    return told


def _opening(processor: StreamProcessor, item: BackendOutput | None, prompt_tokens: int) -> list[WireEvent]:
    """The response's opening events with the prompt's length (the ids the server encoded), when the backend's
    first item is no :class:`PromptUsage` (which is optional): the usage then counts the prompt, as it does when
    the backend reports it."""
    if isinstance(item, PromptUsage):
        return []
    return processor.start(prompt_tokens)


class _Keep:
    """A turn to keep once answered (a stored Responses turn, or a Messages thread's), with the events of its
    stream so far."""

    def __init__(
        self, protocol: Protocol, response_id: str, turn: Turn | None, thread: ThreadTurn | None
    ) -> None:
        self.protocol = protocol
        self.response_id = response_id
        self.turn = turn
        self.thread = thread
        self.events: list[WireEvent] = []
