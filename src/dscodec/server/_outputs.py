"""What a backend yields, checked and handed to the stream processor; closing a backend; backend failures.

Every check here turns a misbehaving backend into a :class:`~dscodec.ModelOutputError` (status 502), never into an
exception of another kind, so the app can always answer in the protocol's shape.
"""

from __future__ import annotations

import asyncio
import logging
import math
import operator
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import orjson

import dscodec
from dscodec.conversation import ConversationRequest, Protocol
from dscodec.errors import DscodecError, ModelOutputError
from dscodec.processor import StreamProcessor
from dscodec.protocols._wire import WireEvent, logprob_notation
from dscodec.server.backend import BackendOutput, Finish, PromptUsage, TextChunk, TokenChunk

__all__ = [
    "WithinBudget",
    "backend_count",
    "backend_error",
    "close_outputs",
    "complete_response",
    "failure_frame",
    "feed",
    "feed_sse",
    "is_large",
    "iterate_outputs",
    "next_output",
    "sse_of",
]

logger = logging.getLogger("dscodec.server")


#: Backend chunks at least this large (characters of text, or token ids) are processed in a worker thread; the
#: per-token ones stay on the event loop, where a thread hop would cost more than the work.
_LARGE_TEXT = 16384


_LARGE_IDS = 4096


#: The largest token count a backend may report: counts are JSON numbers that every client must read exactly.
_MAX_COUNT = 2**53 - 1


def iterate_outputs(outputs: object) -> AsyncIterator[BackendOutput]:
    """The backend's return value, checked to be an async iterator."""
    if hasattr(outputs, "__anext__"):
        return outputs  # type: ignore[return-value]
    close = getattr(outputs, "close", None)
    if callable(close) and hasattr(outputs, "__await__"):
        close()  # a coroutine never awaited would warn
    raise ModelOutputError(
        f"the model backend returned a {type(outputs).__name__}; expected an async iterator of outputs"
    )


async def next_output(outputs: AsyncIterator[BackendOutput]) -> BackendOutput:
    """The backend's next item (``StopAsyncIteration`` at its end).

    A cancellation the backend raises on its own (an ``asyncio.CancelledError`` while nothing cancels the request:
    a backend that cancels an inner task and lets its error out) is a failure of the backend, a 502 like any other
    (:class:`~dscodec.ModelOutputError`); the request's own cancellation (its client gone, a timeout) goes on as
    it is.
    """
    try:
        return await outputs.__anext__()
    except asyncio.CancelledError as exc:
        if _being_cancelled():
            raise
        # A cancel scope around the request that is cancelled cancels again at the next checkpoint.
        await anyio.lowlevel.checkpoint_if_cancelled()
        raise ModelOutputError(
            "the model server failed: it raised CancelledError while the request was not cancelled"
        ) from exc


def _being_cancelled() -> bool:
    """Whether the running asyncio task has a cancellation requested (Python 3.11 on; before, cancel scopes are
    asked by a checkpoint)."""
    try:
        task = asyncio.current_task()
    except (
        RuntimeError
    ):  # no asyncio loop: another backend of anyio, whose cancellations a backend cannot raise
        return True
    cancelling = getattr(task, "cancelling", None)
    return task is None or (cancelling is not None and cancelling() > 0)


def is_large(item: BackendOutput | None) -> bool:
    """Whether processing ``item`` may take long: a big chunk, or the end (it counts the reasoning tokens)."""
    if item is None or isinstance(item, Finish):
        return True
    if isinstance(item, TextChunk):
        return isinstance(item.text, str) and len(item.text) >= _LARGE_TEXT
    if isinstance(item, TokenChunk):
        return isinstance(item.ids, Sequence) and len(item.ids) >= _LARGE_IDS
    return False


def backend_count(value: object, what: str) -> int:
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


def asked_logprobs(request: ConversationRequest, logprobs: object) -> Any:
    """What the client asked for of a chunk's log probability entries: none when the request did not ask for log
    probabilities, else each entry with at most ``top_logprobs`` alternatives (the most likely ones). Entries
    that are not well formed (an alternative that is no pair of an id and a number, NaN among them) are passed on
    as they are, for the stream processor to refuse."""
    options = request.inference_options
    if logprobs is None or not options.logprobs:
        return None
    if not isinstance(logprobs, Sequence) or isinstance(logprobs, (str, bytes, bytearray)):
        return logprobs
    top = options.top_logprobs or 0
    cut: list[Any] | None = None
    entry: Any
    for index, entry in enumerate(logprobs):
        if not (_is_sequence(entry) and len(entry) == 2 and _is_sequence(entry[1])):
            continue
        alternatives = entry[1]
        if len(alternatives) <= top:
            continue
        try:
            kept = sorted(alternatives, key=_likelihood)[:top]
        except (TypeError, ValueError, IndexError, KeyError):
            continue  # not pairs of an id and a number: the processor says so
        if cut is None:
            cut = list(logprobs)
        cut[index] = (entry[0], kept)
    return logprobs if cut is None else cut


def _is_sequence(value: object) -> bool:
    """A list-like value (a ``Sequence`` that is no string)."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))


def _likelihood(pair: Any) -> float:
    """The sort key of an alternative ``(id, logprob)``: the most likely first; NaN sorts nowhere (refused)."""
    value = pair[1]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(value)
    if math.isnan(value):
        raise ValueError(value)
    return -value


def feed(processor: StreamProcessor, item: BackendOutput | None) -> list[WireEvent]:
    """Hand one backend item (None: the end of the backend's output) to the processor."""
    if item is None:
        return processor.finish()
    if isinstance(item, TextChunk):
        return processor.push_text(item.text, backend_count(item.token_count, "TextChunk.token_count"))
    if isinstance(item, TokenChunk):
        return processor.push_tokens(item.ids, asked_logprobs(processor.request, item.logprobs))
    if isinstance(item, PromptUsage):
        fingerprint = item.system_fingerprint
        if fingerprint is not None and not isinstance(fingerprint, str):
            raise ModelOutputError(
                f"the model backend sent system_fingerprint={fingerprint!r}; expected a string or None"
            )
        return processor.start(
            backend_count(item.prompt_tokens, "PromptUsage.prompt_tokens"),
            backend_count(item.cached_tokens, "PromptUsage.cached_tokens"),
            fingerprint,
        )
    if isinstance(item, Finish):
        return processor.finish(item.reason)
    raise ModelOutputError(
        f"the model backend yielded a {type(item).__name__}; expected PromptUsage, TextChunk, TokenChunk, Finish or KeepAlive"
    )


def sse_of(events: list[WireEvent]) -> bytes:
    """The SSE frames of ``events``, as one byte string."""
    return "".join(event.sse() for event in events).encode() if events else b""


def feed_sse(processor: StreamProcessor, item: BackendOutput | None) -> bytes:
    """The SSE frames of the events ``item`` gives, as one byte string."""
    return sse_of(feed(processor, item))


def failure_frame(processor: StreamProcessor, error: DscodecError, request_id: str | None = None) -> bytes:
    """The protocol's mid-stream error event(s) for ``error``; empty when nothing more can be said. A Messages
    ``error`` event names ``request_id`` when given, as Anthropic's error bodies do."""
    try:
        events = processor.fail(error)
        if request_id and processor.request.protocol == "messages":
            events = [_with_request_id(event, request_id) for event in events]
        return "".join(event.sse() for event in events).encode()
    except Exception:
        # The events of the failed response cannot be written either (the processor's own state is broken):
        # the stream just ends, and the client sees it cut short.
        logger.exception("writing the error event of a failed stream failed")
        return b""


def _with_request_id(event: WireEvent, request_id: str) -> WireEvent:
    """``event`` with ``request_id`` when it is an ``error`` event."""
    if event.event != "error":
        return event
    data = event.to_dict()
    return WireEvent({**data, "request_id": request_id}, event=event.event)


def complete_response(protocol: Protocol, events: list[WireEvent]) -> tuple[bytes, dict[str, Any]]:
    """The complete response the events add up to, as JSON and as the object (in a worker thread: both steps are
    linear but long)."""
    response = dscodec.accumulate(protocol, events)
    content = orjson.dumps(response)
    if b'"logprob":' in content:  # log probabilities in the reference's notation
        content = logprob_notation(content.decode()).encode()
    return content, response


#: The most characters one token of the model's vocabularies spells (the longest is 128 bytes).
TOKEN_CHARACTERS = 128


class WithinBudget:
    """The backend's items, cut at the job's completion budget (``max_tokens``): a backend that sends more tokens
    than it was asked for (an engine that ignores the budget, or a buggy one that never stops) ends there with a
    ``length`` finish, as a model server ends at its budget, so the answer and the memory it takes stay bounded.

    The token ids past the budget are dropped (with their log probabilities); a text chunk that crosses it is
    kept whole (text cannot be cut at a token), and what comes after it is dropped. Text is also bounded by its
    length, whatever token counts it comes with (a chunk may count none): ``budget`` tokens hold no more than
    :data:`TOKEN_CHARACTERS` characters each. Closing this iterator closes
    the backend's, started or not.
    """

    def __init__(self, outputs: AsyncIterator[BackendOutput], budget: int) -> None:
        self._outputs = outputs
        self._room = budget
        self._characters = budget * TOKEN_CHARACTERS
        self._due: list[BackendOutput] = []  # the cut chunk's part and the finish, still to give
        self._ended = False

    def __aiter__(self) -> WithinBudget:
        return self

    async def __anext__(self) -> BackendOutput:
        if self._due:
            return self._due.pop(0)
        if self._ended:
            raise StopAsyncIteration
        item = await self._outputs.__anext__()
        if isinstance(item, TokenChunk):
            ids = item.ids
            if isinstance(ids, Sequence) and not isinstance(
                ids, (str, bytes, bytearray)
            ):  # else refused later
                if len(ids) <= self._room:
                    self._room -= len(ids)
                    return item
                return self._cut(item, ids)
        elif isinstance(item, TextChunk) and item.text:
            if self._room <= 0 or self._characters <= 0:
                return self._cut(None, ())
            count = item.token_count
            if type(count) is int and count > 0:
                self._room -= count
            if type(item.text) is str:
                # Text counted as no token (part of one, or a backend that does not count) is bounded too: no
                # token is longer than TOKEN_CHARACTERS characters.
                self._characters -= len(item.text)
        return item

    def _cut(self, item: TokenChunk | None, ids: Sequence[int]) -> BackendOutput:
        """The budget ends in ``item`` (or before it): its part within the budget, then a ``length`` finish."""
        self._ended = True
        if item is not None and self._room > 0:
            logprobs = item.logprobs
            if isinstance(logprobs, Sequence) and len(logprobs) == len(ids):
                logprobs = logprobs[: self._room]
            self._due.append(Finish("length"))
            return TokenChunk(ids[: self._room], logprobs)
        return Finish("length")

    async def aclose(self) -> None:
        self._ended = True
        self._due.clear()
        await close_outputs(self._outputs)


async def close_outputs(outputs: AsyncIterator[BackendOutput]) -> None:
    """Close the backend iterator; shielded, so a cancelled request (client gone) still releases the backend."""
    aclose = getattr(outputs, "aclose", None)
    if aclose is None:
        return
    with anyio.CancelScope(shield=True):
        try:
            await aclose()
        except Exception:  # a backend that fails to close must not turn a finished response into an error
            logger.exception("closing the backend failed")


def backend_error(exc: Exception) -> DscodecError:
    """A backend failure as a dscodec error (logged): its own when it raised one, else a 502 naming the cause."""
    if isinstance(exc, DscodecError):
        logger.warning("the model backend refused or failed: %s", exc)
        return exc
    logger.error("the model backend failed", exc_info=exc)
    return ModelOutputError(f"the model server failed: {exc}")
