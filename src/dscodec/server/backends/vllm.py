"""vLLM as a dscodec backend: token ids in, token ids out, over vLLM's OpenAI-compatible completions endpoint.

dscodec renders and tokenizes the prompt itself, so the engine gets the prompt as token ids and no chat template
runs on its side; the generated token ids come back in each streamed chunk and dscodec decodes them (special
tokens included). Every field name below is the one vLLM documents for ``POST /v1/completions`` (its
``CompletionRequest`` and the stream chunks its completions server writes); ``docs/backends.md`` lists them with
their sources.

What vLLM needs to be started with: nothing special for plain generation. ``--enable-prompt-tokens-details``
makes it report cached prompt tokens; ``--reasoning-parser`` (the one for the DeepSeek model) makes a constraint
apply only after the reasoning, in thinking mode.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import anyio
import httpx
import orjson

from dscodec.errors import DscodecError
from dscodec.processor import Logprob
from dscodec.server.backend import (
    BackendOutput,
    BackendRequest,
    Finish,
    FinishReason,
    KeepAlive,
    PromptUsage,
    TokenChunk,
)
from dscodec.server.backends import _engine
from dscodec.server.backends._engine import DEFAULT_TIMEOUT, EngineBackend, EngineError, engine_failure

__all__ = ["VLLMBackend"]

_ENGINE = "vLLM"
_KEEP_ALIVE = KeepAlive()

#: The ``structured_outputs`` field each kind of constraint goes in (``json_object`` with the value true).
_FIELDS = {"json_schema": "json", "json_object": "json_object", "regex": "regex", "grammar": "grammar"}


class VLLMBackend(EngineBackend):
    """Streams generations from a vLLM server (``POST {base_url}/v1/completions``).

    Args:
        base_url: the vLLM server, e.g. ``http://127.0.0.1:8000``.
        model: the served model name to send (vLLM's ``--served-model-name``); None sends none, and vLLM
            uses the model it serves.
        api_key, client, timeout, constraints, extra: as for :class:`~dscodec.server.backends.EngineBackend`.

    Examples:
        >>> backend = VLLMBackend("http://127.0.0.1:8000/")
        >>> backend.url
        'http://127.0.0.1:8000/v1/completions'
    """

    engine = _ENGINE
    path = "/v1/completions"
    #: How long a complete response waits, after the finish, for the usage vLLM sends next (at once, as vLLM writes
    #: it); when it does not come, the answer is given with the prompt's length as its usage, as a stream's is.
    usage_wait: float = 1.0
    constraint_fields = _FIELDS
    fixed_fields = frozenset(
        {
            "prompt",
            "max_tokens",
            "temperature",
            "top_p",
            "stream",
            "stream_options",
            "return_token_ids",
            "skip_special_tokens",
            "include_stop_str_in_output",
            "add_special_tokens",
        }
    )

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        constraints: bool = True,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if model is not None and not isinstance(model, str):
            raise TypeError(f"model must be a str or None, not {type(model).__name__}")
        super().__init__(
            base_url, api_key=api_key, client=client, timeout=timeout, constraints=constraints, extra=extra
        )
        self.model = model

    def payload(self, job: BackendRequest) -> dict[str, Any]:
        """The completions request for ``job`` (stop strings are not sent: dscodec applies them)."""
        options = job.request.inference_options
        body: dict[str, Any] = {
            "prompt": list(job.token_ids),
            "max_tokens": job.max_tokens,
            "temperature": options.temperature,
            "top_p": options.top_p,
            "stream": True,
            "stream_options": {"include_usage": True},
            # The generated ids in every chunk; special tokens (</think>, ｜DSML｜, the end of sentence) stay in
            # the output, as dscodec's stream processor reads them.
            "return_token_ids": True,
            "skip_special_tokens": False,
            "include_stop_str_in_output": True,
            # The prompt is complete as rendered: no BOS or other token added by the engine.
            "add_special_tokens": False,
        }
        if self.model is not None:
            body["model"] = self.model
        if options.seed is not None:
            body["seed"] = options.seed
        if options.logprobs:
            # vLLM's ``logprobs`` is the number of top alternatives; the sampled token's own is always there.
            body["logprobs"] = options.top_logprobs or 0
            body["return_tokens_as_token_ids"] = True
        field = self.constraint_field(job)
        if field is not None:
            body["structured_outputs"] = {field[0]: field[1]}
        return body

    def reader(self, job: BackendRequest) -> _Reader:
        return _Reader(
            len(job.token_ids),
            buffered=not job.request.stream,
            top=_engine.top_logprobs(job),
            logprobs=job.request.inference_options.logprobs,
            budget=job.max_tokens,
        )

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        """Send ``job`` to vLLM and yield what it streams back, as dscodec backend outputs.

        A complete response is held until vLLM's usage, which comes after the finish. Once the finish came, the
        answer is not lost: when the usage does not follow within :attr:`usage_wait` seconds, or the stream fails
        after the finish, the answer is given with the prompt's length as its usage (and no cached tokens), as a
        streamed answer is.
        """
        # (an async generator: closed below, so the engine request is closed when this one is)
        outputs = cast(AsyncGenerator[BackendOutput, None], super().__call__(job))
        try:
            async for item in outputs:
                if not isinstance(item, _Finished):
                    yield item
                    continue
                yield _KEEP_ALIVE  # the finish is progress too
                rest: Sequence[BackendOutput] = item.outputs
                with anyio.move_on_after(self.usage_wait):
                    try:
                        rest = [output async for output in outputs]
                    except DscodecError:
                        pass  # a failure after the finish: a streamed answer has ended before it
                for output in rest:
                    yield output
                return
        finally:
            await outputs.aclose()


@dataclass(frozen=True, slots=True, eq=False)
class _Finished(KeepAlive):
    """What the reader of a complete response gives at the finish when vLLM's usage has not come with it: the
    answer, with the prompt's length as its usage, to give if the usage never comes. :meth:`VLLMBackend.__call__`
    takes it out of the stream; anywhere else it is a :class:`KeepAlive` (the finish is progress)."""

    outputs: tuple[BackendOutput, ...]


class _Reader:
    """Reads vLLM's completion chunks.

    vLLM reports usage (cached tokens included) only in the stream's last chunk, after the finish. For a client
    that streams, the prompt usage is given with the first output, from the prompt's length, without cached
    tokens; for a client that waits for the complete response the outputs are held until that last chunk, so
    its usage is exact (meanwhile each chunk that brings output gives a :class:`KeepAlive`, so the server's wait
    for each item bounds vLLM's silences, not the whole generation, and a chunk without output does not count as
    progress), and are given once it came, without waiting for the stream's end. At the finish without the usage
    the reader gives a :class:`_Finished`, which carries the answer with the prompt's length as usage, for when
    the usage never comes.

    Output after the finish is no part of the answer, in either mode (a streaming client's answer has ended).
    Log probabilities are read only when the client asked for them (``logprobs``); otherwise they are ignored,
    whatever their shape.
    """

    def __init__(
        self,
        prompt_tokens: int,
        *,
        buffered: bool,
        top: int,
        logprobs: bool = False,
        budget: int | None = None,
    ) -> None:
        self.prompt_tokens = prompt_tokens
        self.budget = (
            budget  # the job's max_tokens: a complete response holds no more (vLLM should stop there)
        )
        self.count = 0  # the ids held
        self.cached_tokens = 0
        self.buffered = buffered
        self.top = top
        self.logprobs = logprobs
        self.started = False
        self.held: list[BackendOutput] = []
        self.finish: FinishReason | None = None
        self.finished = False
        self.usage = False  # the usage chunk came
        self.done = False

    def feed(self, event: dict[str, Any]) -> list[BackendOutput]:
        if "error" in event or event.get("object") == "error":
            raise engine_failure(_ENGINE, _error_status(event), _error_bytes(event))
        usage = event.get("usage")
        if isinstance(usage, dict):
            self._usage(usage)
        if self.finished:
            # Only a complete response reads on after the finish, for the usage; what else comes is not output.
            return self._release() if self.usage else []
        out: list[BackendOutput] = []
        choices = event.get("choices") or []
        if not isinstance(choices, list):
            raise EngineError(f"vLLM sent choices={choices!r}; expected a list")
        for choice in choices:
            if self.finished:
                break
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            ids = choice.get("token_ids")
            if ids is None:
                if choice.get("text"):
                    raise EngineError(
                        "vLLM sent text without token_ids: the server does not support return_token_ids"
                    )
                ids = []
            if not isinstance(ids, list):
                raise EngineError(f"vLLM sent token_ids={ids!r}; expected a list of ids")
            if ids:
                logprobs = _logprobs(choice.get("logprobs"), len(ids), self.top) if self.logprobs else None
                out.append(TokenChunk(ids, logprobs))
            reason = choice.get("finish_reason")
            if reason is not None:
                self._finish(reason)
        if self.buffered:
            self.held += out
            if self.budget is not None and not self.finished:
                self.count += sum(len(chunk.ids) for chunk in out if isinstance(chunk, TokenChunk))
                if self.count > self.budget:
                    # vLLM went past the budget it was given: the answer ends at it, as the server cuts a stream.
                    self._cut(self.budget)
                    return self._release()
            if self.finished:
                if self.usage:  # all there is: no need to wait for the stream's end
                    return self._release()
                return [_Finished(tuple(self._answer()))]
            # Only a chunk that brought output is progress: an engine that sends empty chunks and never finishes
            # still meets the server's backend_timeout.
            return [_KEEP_ALIVE] if out else []
        if out and not self.started:
            self.started = True
            out.insert(0, PromptUsage(prompt_tokens=self.prompt_tokens))
        if self.finished:
            # A streaming client gets the finish at once; the usage chunk that follows is not waited for.
            out.append(Finish(self.finish))
            self.done = True
        return out

    def end(self) -> list[BackendOutput]:
        if not self.finished:
            raise EngineError("vLLM's stream ended before the generation finished")
        if not self.buffered:
            return [Finish(self.finish)]
        return self._release()

    def _answer(self) -> list[BackendOutput]:
        """The held answer, with the usage known so far (the prompt's length until vLLM's usage came)."""
        usage = PromptUsage(prompt_tokens=self.prompt_tokens, cached_tokens=self.cached_tokens)
        return [usage, *self.held, Finish(self.finish)]

    def _cut(self, budget: int) -> None:
        """Keep the held ids up to ``budget`` (their log probabilities too) and end with a ``length`` finish."""
        kept: list[BackendOutput] = []
        room = budget
        for chunk in self.held:
            if isinstance(chunk, TokenChunk) and room < len(chunk.ids):
                if room:
                    logprobs = chunk.logprobs
                    kept.append(TokenChunk(chunk.ids[:room], None if logprobs is None else logprobs[:room]))
                break
            kept.append(chunk)
            room -= len(chunk.ids) if isinstance(chunk, TokenChunk) else 0
        self.held = kept
        self.finish = "length"
        self.finished = True

    def _release(self) -> list[BackendOutput]:
        self.done = True
        return self._answer()

    def _usage(self, usage: dict[str, Any]) -> None:
        # A count that is no count (no integer, a bool, below 0, past 2**53 - 1) is passed over: the prompt's own
        # length, and no cached tokens, stand. The answer is whole by now; a bad usage must not turn it into a 502.
        self.usage = True
        prompt = _engine.usage_count(usage.get("prompt_tokens"))
        if prompt is not None:
            self.prompt_tokens = prompt
        details = usage.get("prompt_tokens_details")
        cached = _engine.usage_count(details.get("cached_tokens") if isinstance(details, dict) else None)
        if cached is not None:
            self.cached_tokens = cached

    def _finish(self, reason: object) -> None:
        # "abort" and "error" are failures (the engine gave up on the request).
        if reason in ("abort", "error"):
            raise EngineError(f"vLLM ended the generation with finish_reason={reason!r}")
        self.finish = _engine.finish_reason(reason)
        self.finished = True


def _error_status(event: dict[str, Any]) -> int:
    """The HTTP status an error event carries in its ``code`` (vLLM writes the status there), else 500."""
    error = event.get("error")
    code = error.get("code") if isinstance(error, dict) else event.get("code")
    return _engine.error_status(code)


def _error_bytes(event: dict[str, Any]) -> bytes:
    return orjson.dumps(event)


#: With ``return_tokens_as_token_ids`` vLLM writes each token of a logprob entry as ``token_id:<id>``.
_TOKEN_PREFIX = "token_id:"


def _token_id(text: object) -> int:
    digits = text[len(_TOKEN_PREFIX) :] if isinstance(text, str) and text.startswith(_TOKEN_PREFIX) else ""
    # ASCII digits only ("²" is a digit to str.isdigit, not to int()), and no more than an id has (int() refuses
    # thousands of them).
    if digits.isascii() and digits.isdigit() and len(digits) <= 20:
        return int(digits)
    raise EngineError(f"vLLM sent the logprob token {text!r}; expected 'token_id:<id>'")


def _logprobs(value: object, count: int, top: int) -> Sequence[Logprob] | None:
    """A chunk's ``logprobs`` object (``tokens``, ``token_logprobs``, ``top_logprobs``) as dscodec entries, one
    per generated id; None when the chunk has none. A ``null`` log probability is ``-inf``
    (:func:`_engine.logprob_value`)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise EngineError(f"vLLM sent logprobs={value!r}; expected an object")
    tokens = value.get("tokens") or []
    logprobs = value.get("token_logprobs") or []
    tops = value.get("top_logprobs") or [None] * count
    for name, field in (("tokens", tokens), ("token_logprobs", logprobs), ("top_logprobs", tops)):
        if not isinstance(field, list):
            raise EngineError(f"vLLM sent logprobs.{name}={field!r:.100}; expected a list")
    if not (len(tokens) == len(logprobs) == len(tops) == count):
        raise EngineError(
            f"vLLM sent logprobs with {len(tokens)} tokens, {len(logprobs)} token_logprobs and {len(tops)} "
            f"top_logprobs for a chunk of {count} tokens"
        )
    entries: list[Logprob] = []
    for logprob, alternatives in zip(logprobs, tops):
        sampled = _engine.logprob_value(logprob, _ENGINE)
        if not top:
            entries.append(sampled)
            continue
        pairs = (
            [(_token_id(token), _engine.logprob_value(lp, _ENGINE)) for token, lp in alternatives.items()]
            if isinstance(alternatives, dict)
            else []
        )
        entries.append(_engine.with_top(sampled, pairs, top))
    return entries
