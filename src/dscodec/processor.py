"""The stream processor: backend output in, the request protocol's stream events out (sans-I/O).

    decoder (ids -> text) -> machine (markers, stages, DSML -> JSON) -> protocol writer (wire events)

The processor never waits or touches a socket; it reads the clock only for timestamps the caller did not give
(``created``; the Responses ``completed_at``, through the writer's ``clock``). The
caller pushes what the backend produced and sends the returned events; :func:`dscodec.accumulate` turns the
same events into the complete response.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Literal

from dscodec.conversation import ConversationRequest
from dscodec.errors import DscodecError, ModelOutputError, StreamStateError
from dscodec.protocols._wire import BackendFinish, EventWriter, Outcome, PromptUsage, WireEvent
from dscodec.stream.decoder import IncrementalDecoder
from dscodec.stream.dsml import ToolCallIdFactory
from dscodec.stream.events import Event, OutputEnd, ReasoningDelta, TokenLogprob
from dscodec.stream.machine import OutputMachine
from dscodec.vocab import TokenizerLike, Vocabulary

__all__ = ["Logprob", "StreamProcessor"]

#: A token's log probability, or ``(logprob, [(alternative_id, logprob), ...])`` with its top alternatives.
Logprob = float | tuple[float, Sequence[tuple[int, float]]]

_State = Literal["new", "open", "finished", "failed"]
_FINISH_REASONS = (None, "stop", "length", "content_filter")


def _writer_class(protocol: str) -> type[EventWriter]:
    if protocol == "chat_completions":
        from dscodec.protocols.openai_chat.outbound import ChatChunkWriter

        return ChatChunkWriter
    if protocol == "responses":
        from dscodec.protocols.openai_responses.outbound import ResponsesEventWriter

        return ResponsesEventWriter
    if protocol == "messages":
        from dscodec.protocols.anthropic_messages.outbound import MessagesEventWriter

        return MessagesEventWriter
    raise ValueError(f"unknown protocol {protocol!r}")


class StreamProcessor:
    """Turns one model response into the stream events of the request's protocol.

    Args:
        request: the converted request (its protocol, parsing options and settings shape the events).
        response_id: the response id the events carry.
        model: the model name the events carry.
        created: unix seconds stamped on the response; now when None.
        tokenizer: decodes pushed token ids and counts reasoning tokens; the bundled DeepSeek V4 tokenizer when
            None (loaded on first use).
        signature: Messages only: the thinking block's signature (default: the response id).
        tool_call_id_factory: makes tool call ids from the call index (random ``call_NN_…`` ids by default).

    Examples:
        >>> import dscodec
        >>> request = dscodec.convert("chat_completions", {"model": "DeepSeek-V4-Pro",
        ...     "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "Hi"}]})
        >>> p = StreamProcessor(request, response_id="chatcmpl-1", model="DeepSeek-V4-Pro", created=0)
        >>> events = p.start(prompt_tokens=5) + p.push_text("Hello!", token_count=2) + p.finish("stop")
        >>> [e.to_dict()["choices"][0]["delta"] for e in events]
        [{'role': 'assistant', 'content': ''}, {'content': 'Hello!'}, {'content': ''}]
        >>> dscodec.accumulate("chat_completions", events)["choices"][0]["message"]
        {'role': 'assistant', 'content': 'Hello!'}
    """

    def __init__(
        self,
        request: ConversationRequest,
        *,
        response_id: str,
        model: str,
        created: int | None = None,
        tokenizer: TokenizerLike = None,
        signature: str | None = None,
        tool_call_id_factory: ToolCallIdFactory | None = None,
    ) -> None:
        self.request = request
        stamp = int(time.time()) if created is None else created
        writer = _writer_class(request.protocol)(request, response_id=response_id, model=model, created=stamp)
        if signature is not None:
            writer.signature = signature
        self._writer = writer
        self._machine = OutputMachine(request.parsing_options, tool_call_id_factory=tool_call_id_factory)
        self._tokenizer = tokenizer
        self._vocab: Vocabulary | None = None
        self._decoder: IncrementalDecoder | None = None
        self._state: _State = "new"
        self._failure: str | None = None
        self._error_sent = False
        self._usage = PromptUsage()
        self._completion_tokens = 0
        self._reasoning: list[str] = []

    # -- public API ---------------------------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once the response ended normally (after :meth:`finish`, or when a stop sequence matched)."""
        return self._state == "finished"

    @property
    def sse_done(self) -> str:
        """The SSE frame that ends the stream after the last event (``data: [DONE]`` for Chat; else ``""``)."""
        return self._writer.sse_done

    def start(
        self, prompt_tokens: int = 0, cached_tokens: int = 0, system_fingerprint: str | None = None
    ) -> list[WireEvent]:
        """Start the response with the backend's prompt usage; the protocol's opening events.

        Only the first call counts: once output was pushed the response has started (with zero usage when
        ``start`` was never called) and a later ``start`` returns ``[]``.
        """
        self._check_open()
        if self._state != "new":
            return []
        self._usage = PromptUsage(int(prompt_tokens), int(cached_tokens), system_fingerprint)
        self._state = "open"
        return self._writer.open(self._usage)

    def push_text(self, text: str, token_count: int = 0) -> list[WireEvent]:
        """Push a chunk of generated text that the backend counts as ``token_count`` tokens."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        out = self._begin()
        self._completion_tokens += int(token_count)
        try:
            events = self._machine.feed(text)
        except DscodecError as exc:
            self._state, self._failure = "failed", str(exc)
            raise
        return self._deliver(events, out)

    def push_tokens(self, ids: Sequence[int], logprobs: Sequence[Logprob] | None = None) -> list[WireEvent]:
        """Push generated token ids, with one log probability entry per id when the backend gives them.

        Raises:
            StreamStateError: after the response ended or failed.
            ModelOutputError: ``logprobs`` does not have one entry per id (the processor then fails; send
                :meth:`fail`'s events to tell the client).
        """
        if self._state == "open" and logprobs is None and self._decoder is not None and ids:
            # The per-token hot path: ordinary ids that each decode to whole characters.
            plain = self._decoder.plain_text
            if len(ids) == 1:
                text = plain(ids[0])
            else:
                parts = [plain(i) for i in ids]
                text = None if None in parts else "".join(parts)  # type: ignore[arg-type]
            if text is not None:
                self._completion_tokens += len(ids)
                try:
                    events = self._machine.feed_plain_token(text)
                except DscodecError as exc:
                    self._state, self._failure = "failed", str(exc)
                    raise
                if len(events) == 1:
                    event = events[0]
                    if type(event) is ReasoningDelta:
                        self._reasoning.append(event.text)
                    return self._writer.write(events)
                return self._deliver(events, [])
        out = self._begin()
        decoder = self._ensure_decoder()
        ids = [int(i) for i in ids]
        entries: list[TokenLogprob] | None = None
        if logprobs is not None:
            if len(logprobs) != len(ids):
                self._state = "failed"
                self._failure = (
                    f"invalid log probabilities: {len(logprobs)} log probabilities for {len(ids)} token IDs"
                )
                raise ModelOutputError(self._failure)
            entries = [_entry(decoder, token_id, lp) for token_id, lp in zip(ids, logprobs)]
        self._completion_tokens += len(ids)
        try:
            events = self._machine.feed_tokens(decoder.decode(ids), logprobs=entries)
        except DscodecError as exc:
            self._state, self._failure = "failed", str(exc)
            raise
        return self._deliver(events, out)

    def finish(self, reason: BackendFinish | None = None) -> list[WireEvent]:
        """End the response: ``reason`` is the backend's (``"stop"``, ``"length"``, ``"content_filter"``) or None
        when it gave none. Returns ``[]`` when the response already ended (a stop sequence matched)."""
        if reason not in _FINISH_REASONS:
            raise ValueError(
                f"finish reason must be 'stop', 'length', 'content_filter' or None, not {reason!r}"
            )
        if self._state == "finished":
            return []
        out = self._begin()
        events = []
        if self._decoder is not None:
            tail = self._decoder.flush()  # an incomplete UTF-8 sequence becomes U+FFFD, never silently lost
            if tail:
                events = self._machine.feed(tail)
        events += self._machine.close()
        return self._deliver(events, out, finish=reason)

    def fail(self, error: BaseException | str) -> list[WireEvent]:
        """End a started response because it failed: the protocol's mid-stream error event(s).

        Use it when the backend fails, and also when a ``push_*`` call raised (the processor then failed
        itself and refuses more output, but the client still has to be told). Calling ``fail`` again returns
        ``[]``; so does calling it after a normal end.
        """
        if self._state == "finished" or self._error_sent:
            return []
        exc = (
            error
            if isinstance(error, DscodecError)
            else ModelOutputError(f"the model server failed: {error}")
        )
        out = self._writer.open(self._usage) if self._state == "new" else []
        if self._state != "failed":  # after a failure of the processor itself, its first message stays
            self._state, self._failure = "failed", str(exc)
        self._error_sent = True
        return out + self._writer.error(exc)

    # -- plumbing -----------------------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._state == "finished":
            raise StreamStateError("stream processor has finished")
        if self._state == "failed":
            raise StreamStateError(f"stream processor failed earlier: {self._failure}")

    def _begin(self) -> list[WireEvent]:
        if self._state != "open":
            self._check_open()
            self._state = "open"
            return self._writer.open(self._usage)
        return []

    def _ensure_decoder(self) -> IncrementalDecoder:
        if self._decoder is None:
            self._vocab = Vocabulary.load(self._tokenizer)
            self._decoder = IncrementalDecoder(self._vocab)
        return self._decoder

    def _deliver(
        self, events: list[Event], out: list[WireEvent], finish: BackendFinish | None = None
    ) -> list[WireEvent]:
        if not events:
            return out
        for event in events:
            if type(event) is ReasoningDelta:
                self._reasoning.append(event.text)
        if out:
            out += self._writer.write(events)
        else:
            out = self._writer.write(events)
        end = events[-1]
        if type(end) is not OutputEnd:
            return out
        self._state = "finished"
        out += self._writer.close(
            Outcome(
                finish=finish,
                tool_calls=end.tool_calls,
                stop_sequence=end.stop_sequence,
                prompt=self._usage,
                completion_tokens=self._completion_tokens,
                reasoning_tokens=self._count_reasoning(),
            )
        )
        return out

    def _count_reasoning(self) -> int | None:
        """Tokens of the emitted reasoning, re-encoded with the full vocabulary (deviation D5: for every kind of
        backend chunk); None when the request has no thinking stage."""
        if self.request.parsing_options.thinking_initial_stage is None:
            return None
        text = "".join(self._reasoning)
        if not text:
            return 0
        if self._vocab is None:
            self._vocab = Vocabulary.load(self._tokenizer)
        return self._vocab.count_tokens(text)


def _entry(decoder: IncrementalDecoder, token_id: int, logprob: Logprob) -> TokenLogprob:
    if isinstance(logprob, (int, float)):
        return decoder.logprob(token_id, float(logprob))
    value, top = logprob
    return decoder.logprob(token_id, float(value), [(int(i), float(v)) for i, v in top])
