"""What the example server and a model backend exchange: the request it hands over, and what the backend yields.

A backend is any callable that takes a :class:`BackendRequest` and returns an async iterator of
:data:`BackendOutput` items; an ``async def`` generator function is the natural way to write one::

    async def backend(job: BackendRequest) -> AsyncIterator[BackendOutput]:
        yield PromptUsage(prompt_tokens=len(job.token_ids))
        async for ids in my_engine.generate(job.token_ids, max_tokens=job.max_tokens):
            yield TokenChunk(ids)
        yield Finish("stop")

The server closes the iterator (``aclose()``) as soon as it needs no more output: after the backend's
:class:`Finish`, when a stop sequence ended the response, when the client went away, or after an error. A
backend releases its engine slot in a ``finally`` block. This module imports no web framework.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from dscodec.conversation import ConversationRequest
from dscodec.processor import Logprob
from dscodec.prompt import RenderedPrompt
from dscodec.protocols._wire import PromptUsage

__all__ = [
    "Backend",
    "BackendOutput",
    "BackendRequest",
    "Finish",
    "FinishReason",
    "KeepAlive",
    "PromptUsage",
    "TextChunk",
    "TokenChunk",
]

#: Why the model stopped, as a model server reports it (behavior.md#stream-lifecycle maps it to each protocol's own reason).
FinishReason = Literal["stop", "length", "content_filter"]


@dataclass(frozen=True, slots=True)
class BackendRequest:
    """One generation job: the converted request, its prompt, and the completion budget.

    Attributes:
        request: the converted request (sampling settings in ``request.inference_options``, the constrained
            decoding target in ``request.inference_options.output_constraint``).
        prompt: the rendered prompt text with its special-token spans.
        token_ids: the prompt's token ids, what the model is fed.
        max_tokens: the completion budget resolved against the server's context limit (behavior.md#sampling); a backend
            stops there and yields ``Finish("length")``.
        headers: the HTTP request headers (lower-case names), for backends that route on them.
        request_id: the id the server gave the HTTP request (``req_…``, answered in its ``x-request-id`` or
            ``request-id`` header, and in the server's log records), for a backend to tag its own work with;
            empty when the job was not made by the server.
    """

    request: ConversationRequest
    prompt: RenderedPrompt
    token_ids: Sequence[int]
    max_tokens: int
    headers: Mapping[str, str]
    request_id: str = ""


@dataclass(frozen=True, slots=True)
class TextChunk:
    """Generated text, and how many tokens the backend generated for it (counted in the usage)."""

    text: str
    token_count: int = 0


@dataclass(frozen=True, slots=True)
class TokenChunk:
    """Generated token ids, with one log probability entry per id when the backend has them.

    A logprob entry is a float, or ``(logprob, [(alternative_id, logprob), ...])`` with the top alternatives.
    """

    ids: Sequence[int]
    logprobs: Sequence[Logprob] | None = None


@dataclass(frozen=True, slots=True)
class Finish:
    """The end of the generation; ``None`` when the backend does not know why it stopped."""

    reason: FinishReason | None = "stop"


@dataclass(frozen=True, slots=True)
class KeepAlive:
    """Nothing to send yet, but the backend is still at work: a backend that holds its output back (until the
    usage its engine reports last, say) yields one now and then, so that the server's wait for each item
    (``backend_timeout``) bounds the engine's silences, not the whole generation. The server passes over it."""


#: One item a backend yields.
BackendOutput = PromptUsage | TextChunk | TokenChunk | Finish | KeepAlive

#: A model backend: called once per request, iterated by the server until it needs no more output.
Backend = Callable[[BackendRequest], AsyncIterator[BackendOutput]]
