"""SGLang as a dscodec backend: token ids in, token ids out, over SGLang's native ``/generate`` endpoint.

The prompt goes as ``input_ids`` and the generated ids come back as ``output_ids``, with ``meta_info`` in every
streamed event (prompt, completion and cached token counts, the finish reason, log probabilities). Field names are
the ones SGLang documents for ``/generate`` (its ``GenerateReqInput`` and ``SamplingParams``) and writes in its
stream; ``docs/backends.md`` lists them with their sources.

SGLang streams ``output_ids`` (and the log probabilities in ``meta_info``) either cumulatively (its default) or as
deltas (when started with its incremental streaming option); the reader decides which from the first event whose
``meta_info.completion_tokens`` (the running total of generated tokens) tells them apart, or, while no count does,
from the ids themselves (see :class:`_Reader`).

What SGLang needs to be started with: nothing special for plain generation; ``--reasoning-parser`` (the one for
the DeepSeek model) for a constraint to apply only after the reasoning, in thinking mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from dscodec.processor import Logprob
from dscodec.server.backend import BackendOutput, BackendRequest, Finish, PromptUsage, TokenChunk
from dscodec.server.backends import _engine
from dscodec.server.backends._constraints import in_thinking_stage
from dscodec.server.backends._engine import EngineBackend, EngineError, engine_failure

__all__ = ["SGLangBackend"]

_ENGINE = "SGLang"

#: The ``sampling_params`` field each kind of constraint goes in.
_FIELDS = {"json_schema": "json_schema", "json_object": "json_schema", "regex": "regex", "grammar": "ebnf"}

#: What SGLang's own OpenAI layer sends for ``{"type": "json_object"}``: a schema that any JSON object matches.
_ANY_OBJECT = '{"type": "object"}'


class SGLangBackend(EngineBackend):
    """Streams generations from an SGLang server (``POST {base_url}/generate``).

    Args:
        base_url: the SGLang server, e.g. ``http://127.0.0.1:30000``.
        **options: see :class:`~dscodec.server.backends.EngineBackend` (``api_key``, ``client``, ``timeout``,
            ``constraints``, ``extra``).

    Examples:
        >>> SGLangBackend("http://127.0.0.1:30000").url
        'http://127.0.0.1:30000/generate'
    """

    engine = _ENGINE
    path = "/generate"
    constraint_fields = _FIELDS
    fixed_fields = frozenset({"input_ids", "stream", "sampling_params"})
    any_object = _ANY_OBJECT

    def payload(self, job: BackendRequest) -> dict[str, Any]:
        """The ``/generate`` request for ``job`` (stop strings are not sent: dscodec applies them)."""
        options = job.request.inference_options
        sampling: dict[str, Any] = {
            "max_new_tokens": job.max_tokens,
            "temperature": options.temperature,
            "top_p": options.top_p,
            # Special tokens (</think>, ｜DSML｜, the end of sentence) stay in the output dscodec reads.
            "skip_special_tokens": False,
            "no_stop_trim": True,
        }
        if options.seed is not None:
            sampling["sampling_seed"] = options.seed
        body: dict[str, Any] = {"input_ids": list(job.token_ids), "stream": True, "sampling_params": sampling}
        if options.logprobs:
            body["return_logprob"] = True
            body["top_logprobs_num"] = options.top_logprobs or 0
        field = self.constraint_field(job)
        if field is not None:
            sampling[field[0]] = field[1]
            if in_thinking_stage(job.request):
                # SGLang's native API applies the grammar only after the reasoning when asked to (with a reasoning
                # parser configured on the server).
                body["require_reasoning"] = True
        return body

    def reader(self, job: BackendRequest) -> _Reader:
        return _Reader(
            logprobs=job.request.inference_options.logprobs,
            top=_engine.top_logprobs(job),
            prompt_tokens=len(job.token_ids),
        )


class _Reader:
    """Reads SGLang's ``/generate`` events (cumulative or incremental ``output_ids``).

    The stream's form is decided once, by the first event after output has come (on the first one both forms are
    the same) that tells it:

    - its ``meta_info.completion_tokens``, the running total, when it equals either the length of the event's ids
      (cumulative) or the ids so far plus that length (incremental): the count wins, so a delta that happens to
      begin with the output so far is still a delta;
    - else (no count, or a count that equals neither) the ids themselves: a list longer than the output so far that
      begins with all of it is cumulative, any other list a delta.

    Once the stream is cumulative, only each event's new tail is taken, and a list that is shorter than the output
    so far or whose earlier ids differ from it is an :class:`EngineError` (text would be lost or repeated).
    """

    def __init__(self, *, logprobs: bool, top: int, prompt_tokens: int = 0) -> None:
        self.prompt_tokens = prompt_tokens  # the prompt's length, for when SGLang reports no usable count
        self.logprobs = logprobs
        self.top = top
        self.output: list[int] = []  # the ids so far
        self.cumulative: bool | None = None  # the stream's form, once known
        self.started = False
        self.done = False

    def feed(self, event: dict[str, Any]) -> list[BackendOutput]:
        error = event.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            raise engine_failure(_ENGINE, _engine.error_status(code), orjson.dumps(event))
        if event.get("index", 0) != 0:
            # Another sequence of a request for several (dscodec asks for one): no part of this answer.
            return []
        meta = event.get("meta_info")
        if not isinstance(meta, dict):
            raise EngineError("SGLang sent an event without meta_info")
        out: list[BackendOutput] = []
        if not self.started:
            self.started = True
            # A count that is missing or no count is passed over, as vLLM's is: the prompt's length, no cached
            # tokens.
            prompt = _engine.usage_count(meta.get("prompt_tokens"))
            cached = _engine.usage_count(meta.get("cached_tokens"))
            out.append(
                PromptUsage(
                    prompt_tokens=self.prompt_tokens if prompt is None else prompt,
                    cached_tokens=0 if cached is None else cached,
                )
            )
        finish = meta.get("finish_reason")
        # An abort fails the request whatever ids came with it.
        end = _finish(finish) if finish is not None else None
        ids = event.get("output_ids")
        if ids is not None and not isinstance(ids, list):
            raise EngineError(f"SGLang sent output_ids={ids!r}; expected a list of ids")
        if self.cumulative is None and self.output and ids:
            self.cumulative = self._form(ids, meta.get("completion_tokens"))
        start = 0
        if self.cumulative and ids is not None:
            start = len(self.output)
            if len(ids) < start or ids[:start] != self.output:
                raise EngineError(
                    f"SGLang sent cumulative output_ids of {len(ids)} ids that do not continue the {start} ids "
                    "it sent before (the list shrank or its earlier ids changed)"
                )
        new = (ids or [])[start:]
        if new:
            out.append(TokenChunk(new, self._logprobs(meta, start, len(new)) if self.logprobs else None))
            self.output += new
        if end is not None:
            out.append(end)
            self.done = True
        return out

    def _form(self, ids: list[Any], total: object) -> bool:
        """Whether the stream is cumulative, from an event with ``ids`` after output has come (see the class)."""
        seen = len(self.output)
        if isinstance(total, int) and not isinstance(total, bool):
            if total == len(ids):
                return True
            if total == seen + len(ids):
                return False
        return len(ids) > seen and ids[:seen] == self.output

    def end(self) -> list[BackendOutput]:
        raise EngineError("SGLang's stream ended before the generation finished")

    def _logprobs(self, meta: dict[str, Any], start: int, count: int) -> Sequence[Logprob] | None:
        """``output_token_logprobs`` (``[logprob, id, text]`` per token) and ``output_top_logprobs`` (a list of
        such entries per token) for the new tokens: the ones from ``start`` in a cumulative event, all of them in
        an incremental one; None when the event has none."""
        entries = meta.get("output_token_logprobs")
        if not isinstance(entries, list):
            return None
        tops = meta.get("output_top_logprobs")
        if len(entries) >= start + count:
            entries = entries[start : start + count]
            tops = tops[start : start + count] if isinstance(tops, list) else None
        if len(entries) != count:
            raise EngineError(f"SGLang sent log probabilities for {len(entries)} tokens of {count}")
        out: list[Logprob] = []
        for k, entry in enumerate(entries):
            logprob = _logprob(entry)
            if not self.top:
                out.append(logprob)
                continue
            row = tops[k] if isinstance(tops, list) and k < len(tops) else None
            if row is not None and not isinstance(row, list):
                raise EngineError(
                    f"SGLang sent top log probabilities {row!r:.100}; expected a list of entries"
                )
            pairs = [_pair(alt) for alt in row or []]
            out.append(_engine.with_top(logprob, pairs, self.top))
        return out


def _logprob(entry: object) -> float:
    """The log probability of a ``[logprob, id, text]`` entry (``null`` is ``-inf``, see
    :func:`_engine.logprob_value`)."""
    if not isinstance(entry, (list, tuple)) or not entry:
        raise EngineError(f"SGLang sent the log probability entry {entry!r}; expected [logprob, id, text]")
    return _engine.logprob_value(entry[0], _ENGINE)


def _pair(entry: object) -> tuple[int, float]:
    """A top alternative's ``[logprob, id, text]`` as ``(id, logprob)``."""
    if (
        not isinstance(entry, (list, tuple))
        or len(entry) < 2
        or not isinstance(entry[1], int)
        or isinstance(entry[1], bool)
        or entry[1] < 0
    ):
        raise EngineError(f"SGLang sent the top log probability {entry!r}; expected [logprob, id, text]")
    return entry[1], _engine.logprob_value(entry[0], _ENGINE)


def _finish(value: object) -> Finish:
    """``meta_info.finish_reason``: ``{"type": "stop" | "length" | "abort", ...}``; an abort is a failure."""
    kind = value.get("type") if isinstance(value, dict) else value
    if kind == "abort":
        message = value.get("message") if isinstance(value, dict) else None
        status = value.get("status_code") if isinstance(value, dict) else None
        body = orjson.dumps({"error": {"message": message or "the generation was aborted"}})
        raise engine_failure(_ENGINE, _engine.error_status(status), body)
    return Finish(_engine.finish_reason(kind))
