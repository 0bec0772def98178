"""A scripted model backend for tests and demos: replays written model outputs in small chunks.

A script file is a JSON object of named scripts; a request picks one with the ``X-Scenario`` header (the first
script when the header is absent)::

    {
      "plain": {"output": "Hello! How can I help?"},
      "think": {"reasoning": "The user says hi.", "output": "Hi there!", "send": "tokens", "chunk_size": 1}
    }

Script fields:

* ``output`` (required): what the model writes after its reasoning, raw: DSML tool-call markup included.
* ``reasoning``: the reasoning text. When the prompt ends inside the thinking stage (thinking mode on, or a
  reasoning prefix to continue) the backend writes ``reasoning + "</think>" + output`` (an absent reasoning is
  empty), as a thinking model does; otherwise only ``output``. So one script answers both modes.
* ``raw``: ``true`` sends ``output`` exactly as written in every mode (``reasoning`` is then not allowed).
* ``finish``: ``"stop"`` (default), ``"length"``, ``"content_filter"`` or ``null`` (no finish reason).
* ``send``: ``"text"`` (default; chunks of ``chunk_size`` characters with their token counts) or ``"tokens"``
  (chunks of ``chunk_size`` token ids, the way an inference engine streams).
* ``chunk_size``: characters or ids per chunk (default 4).
* ``prompt_tokens`` / ``cached_tokens``: the prompt usage to report (default: the prompt's real length, 0).
* ``fail_after``: raise after this many output chunks, like a crashing model server (``0``: before anything).
* ``delay``: seconds to wait before each chunk (default 0, at most 3600).
* ``description``: free text, ignored.

The output is tokenized with the server's tokenizer (its full vocabulary, so ``</think>`` and ``｜DSML｜`` become
their special ids, as a model writes them). Output longer than the request's resolved ``max_tokens`` is cut
there and finishes with ``"length"``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from dscodec.conversation import ConversationRequest
from dscodec.errors import ConversionError, DscodecError, shown
from dscodec.server.backend import (
    BackendOutput,
    BackendRequest,
    Finish,
    FinishReason,
    PromptUsage,
    TextChunk,
    TokenChunk,
)
from dscodec.vocab import TokenizerLike, Vocabulary

__all__ = ["SCENARIO_HEADER", "Script", "ScriptError", "ScriptedBackend", "ScriptedFailure"]

#: The request header that names the script to replay.
SCENARIO_HEADER = "x-scenario"

#: The reasoning terminator a thinking model writes (behavior.md#stage-machine, the ThinkingEnd spelling).
_THINKING_END = "</think>"


class ScriptError(DscodecError):
    """A script file that cannot be loaded: unreadable, not JSON, or a script with a bad field."""


class ScriptedFailure(RuntimeError):
    """The failure a script with ``fail_after`` raises, standing for a model server that crashed."""


class Script(BaseModel):
    """One scripted model output (the fields are described in the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    output: str
    reasoning: str | None = None
    raw: bool = False
    finish: FinishReason | None = "stop"
    send: Literal["text", "tokens"] = "text"
    # The bounds a stream processor takes (counts below 2**63) and an hour of delay: a script past them is
    # refused when it is loaded, not when a request plays it.
    chunk_size: int = Field(default=4, ge=1, lt=2**63)
    prompt_tokens: int | None = Field(default=None, ge=0, lt=2**63)
    cached_tokens: int = Field(default=0, ge=0, lt=2**63)
    fail_after: int | None = Field(default=None, ge=0, lt=2**63)
    delay: float = Field(default=0.0, ge=0.0, le=3600.0, allow_inf_nan=False)
    description: str = ""

    @model_validator(mode="after")
    def _raw_has_no_reasoning(self) -> Script:
        if self.raw and self.reasoning is not None:
            raise ValueError("a raw script writes its output verbatim; put the reasoning inside 'output'")
        return self

    def model_text(self, request: ConversationRequest) -> str:
        """The text the model writes for ``request``: the reasoning and ``</think>`` first when the prompt ends in
        the thinking stage (behavior.md#stage-machine), unless the script is raw."""
        thinking = request.parsing_options.thinking_initial_stage in (
            "reasoning_start",
            "reasoning_continuation",
        )
        if self.raw or not thinking:
            return self.output
        return (self.reasoning or "") + _THINKING_END + self.output


class ScriptedBackend:
    """Replays :class:`Script` outputs; a :data:`~dscodec.server.backend.Backend` for :func:`create_app`.

    Args:
        scripts: script name -> :class:`Script` or its JSON object; the first one is the default.
        tokenizer: tokenizes the outputs (None: the bundled DeepSeek V4 tokenizer); give the server's.

    Raises:
        ScriptError: no scripts, or a script with a bad field.
        TypeError: ``tokenizer`` is none of the kinds a tokenizer is given as (found here: it is loaded on first
            use, and every request would fail).
    """

    def __init__(
        self, scripts: Mapping[str, Script | Mapping[str, Any]], *, tokenizer: TokenizerLike = None
    ) -> None:
        if not isinstance(scripts, Mapping):
            raise ScriptError(f"scripts must be a mapping of names to scripts, not {type(scripts).__name__}")
        if not scripts:
            raise ScriptError("a script file needs at least one script")
        self.scripts: dict[str, Script] = {name: _script(name, value) for name, value in scripts.items()}
        self.default = next(iter(self.scripts))
        if not Vocabulary.takes(tokenizer):
            raise TypeError(
                f"tokenizer must be None, a path or a tokenizers.Tokenizer, not {type(tokenizer).__name__}"
            )
        self._tokenizer = tokenizer
        self._vocabulary: Vocabulary | None = None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, tokenizer: TokenizerLike = None) -> ScriptedBackend:
        """Load a JSON script file (an object of named scripts).

        Raises:
            ScriptError: the file cannot be read, is not a JSON object, or holds a bad script.
            TypeError: ``path`` is no str or path (an int is not taken as a file descriptor).
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except OSError as exc:
            raise ScriptError(f"script file {os.fspath(path)} could not be read: {exc.strerror}") from None
        except ValueError as exc:
            raise ScriptError(f"script file {os.fspath(path)} is not valid JSON: {exc}") from None
        if not isinstance(document, dict):
            raise ScriptError(f"script file {os.fspath(path)} must hold a JSON object of named scripts")
        return cls(document, tokenizer=tokenizer)

    @property
    def vocabulary(self) -> Vocabulary:
        """The tokenizer the outputs are tokenized with (loaded on first use)."""
        if self._vocabulary is None:
            self._vocabulary = Vocabulary.load(self._tokenizer)
        return self._vocabulary

    def select(self, headers: Mapping[str, str]) -> tuple[str, Script]:
        """The script a request names in its ``X-Scenario`` header, or the default one.

        Raises:
            ConversionError: the header names no script (a 400 for the client).
        """
        name = headers.get(SCENARIO_HEADER) or self.default
        script = self.scripts.get(name)
        if script is None:
            known = ", ".join(self.scripts)
            raise ConversionError(
                f"Unknown scenario {shown(name, limit=80)} in the X-Scenario header; the scripts are: {known}"
            )
        return name, script

    def plan(
        self, script: Script, job: BackendRequest
    ) -> tuple[list[TextChunk | TokenChunk], FinishReason | None]:
        """The chunks ``script`` sends for ``job`` and its finish reason (``"length"`` when cut at max_tokens)."""
        text = script.model_text(job.request)
        encoding = self.vocabulary.full.encode(text, add_special_tokens=False)
        ids: list[int] = list(encoding.ids)
        ends = [end for _, end in encoding.offsets]
        finish = script.finish
        if len(ids) > job.max_tokens:
            # A model server stops at the budget and says so (behavior.md#stream-lifecycle: Length).
            ids, ends, finish = ids[: job.max_tokens], ends[: job.max_tokens], "length"
            text = text[: ends[-1]] if ends else ""
        size = script.chunk_size
        if script.send == "tokens":
            return [TokenChunk(ids[i : i + size]) for i in range(0, len(ids), size)], finish
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        counts = [0] * len(pieces)
        for end in ends:
            # A token counts in the chunk holding its last character, so the counts add up to len(ids).
            counts[min(len(pieces) - 1, max(0, end - 1) // size)] += 1
        return [TextChunk(piece, count) for piece, count in zip(pieces, counts)], finish

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        """Replay the selected script for ``job``: prompt usage, the chunks, then the finish."""
        _, script = self.select(job.headers)
        if script.fail_after == 0:
            raise ScriptedFailure("scripted failure before any output")
        # Encoding the script's text takes time that grows with it: a worker thread does it, as the server does
        # its own such work, so that other requests go on meanwhile (the server's own worker threads, started
        # before its first request: asyncio's default executor would be made, and its module imported, then).
        chunks, finish = await anyio.to_thread.run_sync(self.plan, script, job)
        prompt_tokens = len(job.token_ids) if script.prompt_tokens is None else script.prompt_tokens
        yield PromptUsage(prompt_tokens=prompt_tokens, cached_tokens=min(script.cached_tokens, prompt_tokens))
        for index, chunk in enumerate(chunks):
            if index == script.fail_after:
                raise ScriptedFailure(f"scripted failure after {index} chunks")
            # Sleeping (even for 0 s) hands control back to the event loop between chunks, as a real backend
            # waiting on its engine does, so a client disconnect is seen mid-output.
            await asyncio.sleep(script.delay)
            yield chunk
        if script.fail_after is not None:
            raise ScriptedFailure(f"scripted failure after {len(chunks)} chunks")
        yield Finish(finish)


def _script(name: str, value: Script | Mapping[str, Any]) -> Script:
    if isinstance(value, Script):
        return value
    if not isinstance(value, Mapping):
        raise ScriptError(f"script {name!r} must be a JSON object, not {type(value).__name__}")
    try:
        return Script.model_validate(dict(value))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'script'}: {error['msg']}" for error in exc.errors()
        )
        raise ScriptError(f"script {name!r} is invalid: {problems}") from None
