"""The stream processor: backend output in, the request protocol's stream events out (sans-I/O).

    decoder (ids -> text) -> machine (markers, stages, DSML -> JSON) -> protocol writer (wire events)

The processor never waits or touches a socket; it reads the clock only for timestamps the caller did not give
(``created``; the Responses ``completed_at``, through the writer's ``clock``). The
caller pushes what the backend produced and sends the returned events; :func:`dscodec.accumulate` turns the
same events into the complete response.

What the backend hands over is checked where it enters (the limits below); a value out of bounds raises
:class:`~dscodec.errors.ModelOutputError` (status 502) and fails the processor, whose :meth:`StreamProcessor.fail`
then gives the protocol's mid-stream error events:

* token ids (also those of top logprobs): ``int`` (not ``bool``), ``0 <= id < 2**32``; ids the vocabulary does not
  have decode to nothing (behavior.md#token-chunks-and-usage);
* token counts (``token_count``, ``prompt_tokens``, ``cached_tokens``): ``int`` (not ``bool``),
  ``0 <= n < 2**63``, and the completion tokens of a response add up to less than ``2**63``, so every usage
  number fits a signed 64-bit integer (and a total of two of them an unsigned one), as JSON readers need.
  ``cached_tokens`` larger than ``prompt_tokens`` is accepted, as the reference accepts it (the uncached count
  then saturates at 0);
* log probabilities: real numbers (not ``bool``), finite or ``-inf``; ``-inf`` (a token the engine's sampler had
  ruled out) becomes ``-9999.0``, as vLLM's OpenAI-compatible server writes it; NaN and ``+inf`` are refused.
"""

from __future__ import annotations

import math
import numbers
import operator
import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Literal, NoReturn, cast

from dscodec.conversation import Conversation, ConversationRequest, check_parsing_options
from dscodec.errors import DscodecError, ModelOutputError, StreamStateError, shown
from dscodec.protocols._registry import spec
from dscodec.protocols._wire import BackendFinish, EventWriter, LogprobWriter, Outcome, PromptUsage, WireEvent
from dscodec.stream._markers import EOS_HARD, EOS_SOFT, has_surrogate, sanitize_text
from dscodec.stream.decoder import NEG_INF_LOGPROB, IncrementalDecoder, TokenText
from dscodec.stream.dsml import ToolCallIdFactory
from dscodec.stream.events import (
    ContentDelta,
    Event,
    OutputEnd,
    ReasoningDelta,
    TokenLogprob,
    ToolCallDelta,
)
from dscodec.stream.machine import OutputMachine
from dscodec.vocab import TokenizerLike, Vocabulary

__all__ = ["Logprob", "StreamProcessor"]

#: A token's log probability, or ``(logprob, [(alternative_id, logprob), ...])`` with its top alternatives.
Logprob = float | tuple[float, Sequence[tuple[int, float]]]

_State = Literal["new", "open", "finished", "failed"]
_FINISH_REASONS = (None, "stop", "length", "content_filter")

#: Token ids are unsigned 32-bit integers.
ID_LIMIT = 1 << 32
#: Token counts, alone and added up, stay below this (they fit a signed 64-bit integer).
COUNT_LIMIT = 1 << 63
#: Below this count, adding the length of any list or tuple stays below :data:`COUNT_LIMIT` (no list can hold
#: ``2**62`` items: that takes ``2**65`` bytes), so the per-push fast path tests the count alone.
_FAST_COUNT_LIMIT = 1 << 62
#: A coalescing processor without stop sequences gathers the text of this many ordinary ids (at least) before
#: the machine reads it: no such text can end the response, and one long piece costs much less than many short
#: (256 measured best on every benchmark output; 64 cost 3-12% more, 512 and above more again on prose).
_GATHER_IDS = 256
#: Whether a float is a finite log probability (``-inf`` and NaN take the checks that name or map them).
_finite = math.isfinite
#: The machine's part of a lane: text -> the argument delta's or the channel's text, or a tool-call block's events
#: (None: declined).
_MachineLane = Callable[[str], "str | list[Event] | None"]


class _SpecialUnits(dict[str, str]):
    """The output machine's unit for each special id's spelling, asked of it once per spelling (the machine gives
    the same unit for a spelling every time); the lookup of one met before is a dict's, in C."""

    __slots__ = ("_unit_of",)

    def __init__(self, unit_of: Callable[[str], str]) -> None:
        super().__init__()
        self._unit_of = unit_of

    def __missing__(self, spelling: str) -> str:
        unit = self[spelling] = self._unit_of(spelling)
        return unit


def _no_lane(arguments: str, raw: str) -> list[WireEvent]:
    """The writer's part of a lane before one opened (never called: the machine's part is None)."""
    raise AssertionError("no lane is open")


def _failure_text(error: object) -> str:
    """What :meth:`StreamProcessor.fail` says of a failure that is no dscodec error: its text, or, when that
    cannot be made, the failure as :func:`~dscodec.errors.shown` shows it."""
    try:
        text = str(error)
    except Exception:  # noqa: BLE001 - a str() that fails (an integer of thousands of digits in the args, say)
        return shown(error)
    return sanitize_text(text)


def _check_text(value: object, name: str) -> None:
    """A setting the events carry as a JSON string: a ``str`` that UTF-8 can encode (no lone surrogate)."""
    if not isinstance(value, str):
        raise StreamStateError(f"{name} must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise StreamStateError(f"{name} must be valid Unicode text (it holds a lone surrogate)") from None


class _Coalescing(EventWriter):
    """The events of a response that is not streamed: adjacent deltas of one kind (reasoning, content, the
    arguments of one call; without log probabilities) merged into one, and everything written by the request's
    writer when the response ends. The complete response they add up to is the one the deltas one by one add up
    to; a push gives no events, only the start and the end do.

    Pieces are gathered in lists and joined once, when another kind of event comes or the response ends.
    """

    def __init__(self, inner: EventWriter) -> None:
        # No EventWriter.__init__: the settings live in the writer that writes the events.
        self._inner = inner
        self.sse_done = inner.sse_done
        self._events: list[Event] = []
        self._kind: object = None  # what the open run of pieces is: _REASONING, _CONTENT or a call's index
        self._pieces: list[str] = []

    def _close_run(self) -> None:
        kind, pieces = self._kind, self._pieces
        if kind is None:
            return
        text = "".join(pieces) if len(pieces) > 1 else pieces[0]
        if kind is _REASONING:
            self._events.append(ReasoningDelta(text))
        elif kind is _CONTENT:
            self._events.append(ContentDelta(text))
        else:
            assert isinstance(kind, int)
            self._events.append(ToolCallDelta(kind, text))
        self._kind, self._pieces = None, []

    def _piece(self, kind: object, text: str) -> list[WireEvent]:
        if kind != self._kind:
            self._close_run()
            self._kind = kind
        self._pieces.append(text)
        return []

    def _flush(self) -> list[WireEvent]:
        self._close_run()
        events, self._events = self._events, []
        return self._inner.write(events) if events else []

    def open(self, usage: PromptUsage) -> list[WireEvent]:
        return self._inner.open(usage)

    def write(self, events: Sequence[Event]) -> list[WireEvent]:
        for event in events:
            if type(event) is ReasoningDelta and not event.logprobs:
                self._piece(_REASONING, event.text)
            elif type(event) is ContentDelta and not event.logprobs:
                self._piece(_CONTENT, event.text)
            elif type(event) is ToolCallDelta:
                if event.arguments:
                    self._piece(event.index, event.arguments)
            else:
                self._close_run()
                self._events.append(event)
        return []

    def text(self, reasoning: bool, text: str) -> list[WireEvent]:
        return self._piece(_REASONING if reasoning else _CONTENT, text)

    def argument(
        self, index: int, arguments: str, raw: str | None = None, parameter: str | None = None
    ) -> list[WireEvent]:
        return self._piece(index, arguments) if arguments else []

    def close(self, outcome: Outcome) -> list[WireEvent]:
        return self._flush() + self._inner.close(outcome)

    def error(self, exc: DscodecError) -> list[WireEvent]:
        return self._flush() + self._inner.error(exc)


#: The kinds of a run of text pieces a :class:`_Coalescing` writer merges (a call's run is its index).
_REASONING, _CONTENT = object(), object()


#: The prompt usage of a response whose start gave none (frozen: one for every processor).
_NO_USAGE = PromptUsage()


def _checked_clock(clock: Callable[[], float]) -> Callable[[], float]:
    """``clock``, its readings checked: a unix time in seconds (a finite number from 0 to 2**63 - 1). A clock that
    fails or gives anything else is a :class:`~dscodec.errors.StreamStateError` where it is read."""

    def read() -> float:
        try:
            now = clock()
        except Exception as exc:
            raise StreamStateError(f"the clock failed: {exc!r}") from exc
        if isinstance(now, bool) or not isinstance(now, (int, float)) or not 0 <= now < COUNT_LIMIT:
            raise StreamStateError(
                f"the clock must give a unix time in seconds from 0 to 2**63 - 1, not {shown(now)}"
            )
        return now

    return read


class StreamProcessor:
    """Turns one model response into the stream events of the request's protocol.

    Args:
        request: the converted request (its protocol, parsing options and settings shape the events).
        response_id: the response id the events carry.
        model: the model name the events carry.
        created: unix seconds stamped on the response; now when None.
        tokenizer: decodes pushed token ids and counts reasoning tokens; the bundled DeepSeek V4 tokenizer when
            None (loaded on first use). A path or a ``tokenizers.Tokenizer`` is loaded once and remembered while it
            is unchanged (the last two), so naming the same one for every response costs no second load.
        signature: Messages only: the thinking block's signature (default: the response id).
        tool_call_id_factory: makes tool call ids from the call index (random ``call_NN_…`` ids by default). What it
            returns must be a ``str`` UTF-8 can encode: anything else fails the processor
            (:class:`~dscodec.errors.ModelOutputError`) at the call it would name.
        coalesce: for a response that is not streamed (its events only go to :func:`dscodec.accumulate`): pushes
            give no events; the end gives the rest, adjacent deltas of one kind merged into one (those with log
            probabilities excepted). Without stop sequences, the ids of many pushes are also read together (each
            push's ids are still checked when pushed). The complete response is the same, for much less work per
            token.
        clock: the unix time in seconds, for what is stamped at the end (the Responses ``completed_at``, never
            before ``created``); ``time.time`` when None. A fixed one makes the events repeatable. A clock that
            fails, or gives no number from 0 to 2**63 - 1, is a :class:`~dscodec.errors.StreamStateError` where
            it is read.

    Raises:
        StreamStateError: ``request`` is no :class:`~dscodec.ConversationRequest`, ``response_id``, ``model`` or
            ``signature`` is no ``str`` (or holds a lone surrogate), ``created`` is no integer from 0 to
            2**63 - 1, ``tokenizer`` is none of the kinds above, or ``tool_call_id_factory`` or ``clock`` is not
            callable; found here rather than when the events are written.

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
        coalesce: bool = False,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if not isinstance(request, ConversationRequest):
            raise StreamStateError(
                f"request must be a ConversationRequest (from dscodec.convert), not {type(request).__name__}"
            )
        conversation = request.conversation
        if not isinstance(conversation, Conversation):
            raise StreamStateError(
                f"request.conversation must be a Conversation, not {type(conversation).__name__}"
            )
        if type(conversation.thinking_mode) is not bool:
            raise StreamStateError(
                f"request.conversation.thinking_mode must be a bool, not {type(conversation.thinking_mode).__name__}"
            )
        try:
            check_parsing_options(request.parsing_options)
        except (TypeError, ValueError) as exc:  # a request built by hand: refused here, not in the machine
            raise StreamStateError(str(exc)) from None
        if tool_call_id_factory is not None and not callable(tool_call_id_factory):
            raise StreamStateError(
                f"tool_call_id_factory must be a callable or None, not {type(tool_call_id_factory).__name__}"
            )
        _check_text(response_id, "response_id")
        _check_text(model, "model")
        if signature is not None:
            _check_text(signature, "signature")
        if not Vocabulary.takes(tokenizer):
            raise StreamStateError(
                "tokenizer must be None, a path, a tokenizers.Tokenizer or a Vocabulary, "
                f"not {type(tokenizer).__name__}"
            )
        if created is not None and (
            not isinstance(created, int) or isinstance(created, bool) or not 0 <= created < COUNT_LIMIT
        ):
            raise StreamStateError(
                f"created must be None or an integer from 0 to 2**63 - 1, not {shown(created)}"
            )
        self.request = request
        stamp = int(time.time()) if created is None else created
        writer = spec(request.protocol).writer()(request, response_id=response_id, model=model, created=stamp)
        if signature is not None:
            writer.signature = signature
        if clock is not None:
            if not callable(clock):
                raise StreamStateError(f"clock must be a callable or None, not {type(clock).__name__}")
            if hasattr(writer, "clock"):  # (the one writer that reads a clock: Responses)
                writer.clock = _checked_clock(clock)
        if not isinstance(coalesce, bool):
            raise StreamStateError(f"coalesce must be a bool, not {type(coalesce).__name__}")
        if coalesce:
            writer = _Coalescing(writer)
        self._writer = writer
        self._machine = OutputMachine(request.parsing_options, tool_call_id_factory=tool_call_id_factory)
        self._tokenizer = tokenizer
        self._vocab: Vocabulary | None = None
        self._decoder: IncrementalDecoder | None = None
        self._logprobs: LogprobWriter | None = None  # made with the first log probability entry
        # The per-push path's calls, bound once.
        self._plain_token = self._machine.plain_token
        self._plain_chunk = self._machine.plain_chunk
        self._write_text = writer.text
        self._status: _State = "new"
        # The per-push fast path's decoding call: the decoder's ``decode_plain`` while the response is open, else
        # None (kept by the ``_state`` setter and ``_ensure_decoder``), so one test tells the path it may run.
        self._lane: Callable[[Sequence[int]], str | None] | None = None
        # The lane through the middle of a ``string="true"`` argument, of a JSON-mode value, of the reasoning or of
        # the content: the machine's (text -> the argument delta's or the channel's text) and the writer's (that
        # text and the pushed one -> wire events), open from a push that gave a string piece or text until the
        # machine is called any other way (see OutputMachine.string_lane, json_lane and text_lane). ``_id_lane`` is
        # the lane for the text of ordinary ids: the same one, or one that reads token text only (token_lane), which
        # a text chunk must not take (it may hold a spelling).
        # Through a tool-call block, the machine's lane gives the block's events (OutputMachine.block_lane).
        self._machine_lane: _MachineLane | None = None
        self._id_lane: _MachineLane | None = None
        self._writer_lane: Callable[[Any, str], list[WireEvent]] = _no_lane
        write = writer.write
        self._block_lane: _MachineLane | None = None  # the last lane for ids through a tool-call block opened
        self._block_writer: Callable[[list[Event], str], list[WireEvent]] = lambda events, raw: write(events)
        self._writer_lane_for: tuple[int, str] | None = None
        self._content_lane: Callable[[str, str], list[WireEvent]] | None = None  # the writer's, made once
        self._reasoning_lane: Callable[[str, str], list[WireEvent]] | None = None
        self._failure: str | None = None
        self._error_sent = False
        self._opened = False  # the writer's opening events were made
        self._undelivered: list[WireEvent] = []  # events made by a call that then raised
        self._usage = _NO_USAGE
        self._completion_tokens = 0
        self._reasoning: list[str] = []
        # Coalescing with no stop sequence: the text of ordinary ids waits here, up to _GATHER_IDS ids, and is read
        # before anything else happens (see _gather). None otherwise.
        self._gathered: list[str] | None = (
            [] if coalesce and not request.parsing_options.stop_sequences else None
        )
        self._gathered_ids = 0
        self._gathered_units = False  # a special id's unit is among the gathered text

    @property
    def _state(self) -> _State:
        return self._status

    @_state.setter
    def _state(self, value: _State) -> None:
        self._status = value
        self._lane = self._decoder.decode_plain if value == "open" and self._decoder is not None else None
        self._machine_lane = self._id_lane = None

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
        ``start`` was never called) and a later ``start`` returns ``[]`` (its values are still checked).

        Args:
            prompt_tokens: prompt tokens, ``0 <= prompt_tokens < 2**63``.
            cached_tokens: prompt tokens served from the cache, ``0 <= cached_tokens < 2**63`` (more than
                ``prompt_tokens`` is taken as it is, as the reference takes it).
            system_fingerprint: the backend's configuration fingerprint, or None.

        Raises:
            StreamStateError: after the response ended or failed.
            ModelOutputError: a value out of bounds (the processor then fails; send :meth:`fail`'s events).
        """
        self._check_open()
        prompt = self._count(prompt_tokens, "prompt_tokens")
        cached = self._count(cached_tokens, "cached_tokens")
        if system_fingerprint is not None:
            if not isinstance(system_fingerprint, str):
                self._refuse(
                    f"system_fingerprint must be a str or None, not {type(system_fingerprint).__name__}"
                )
            if has_surrogate(system_fingerprint):
                self._refuse("system_fingerprint must be valid Unicode text (it holds a lone surrogate)")
        if self._state != "new":
            return []
        self._usage = PromptUsage(prompt, cached, system_fingerprint)
        self._state = "open"
        self._opened = True
        return self._writer.open(self._usage)

    def push_text(self, text: str, token_count: int = 0) -> list[WireEvent]:
        """Push a chunk of generated text that the backend counts as ``token_count`` tokens.

        Args:
            text: the text.
            token_count: its tokens, ``0 <= token_count < 2**63`` (the completion tokens of the response must
                stay below ``2**63`` too).

        Raises:
            StreamStateError: after the response ended or failed.
            ModelOutputError: ``text`` is no ``str`` or ``token_count`` is out of bounds (the processor then
                fails; send :meth:`fail`'s events).
        """
        if self._gathered:
            flushed = self._read_gathered()
            if flushed:  # the response ended (never expected): this push is refused, as after any end
                return flushed + self.push_text(text, token_count)
        if (
            type(text) is str
            and type(token_count) is int
            and 0 <= token_count < _FAST_COUNT_LIMIT
            and self._completion_tokens < _FAST_COUNT_LIMIT
        ):
            lane = self._machine_lane  # open only while the response is (the ``_state`` setter closes it)
            if lane is not None:
                # The middle of a value, a channel or a tool-call block, as the last push left it: the lanes'
                # per-push path.
                try:
                    arguments = lane(text)
                except DscodecError as exc:  # the block parser failed (the machine has failed)
                    self._failed(exc, [])
                    raise
                if arguments is not None:
                    self._completion_tokens += token_count
                    return self._writer_lane(arguments, text) if arguments else []
            if self._status == "open":
                # The per-push path for text, its values known good: plain text (no spelling, no start of one) in
                # the middle of a stage is read as the same text from token ids, straight to the writer; any other
                # text goes to the machine's feed.
                self._machine_lane = self._id_lane = None
                self._completion_tokens += token_count
                try:
                    emitted = self._plain_chunk(text)
                    if emitted is None:
                        events = self._machine.feed(text)
                except DscodecError as exc:
                    self._failed(exc, [])
                    raise
                if emitted is None:
                    return self._deliver(events, [])
                if isinstance(emitted, str):
                    return self._channel_text(emitted, ids=False)
                if isinstance(emitted, list):
                    # Text inside a tool-call block: tool-call events only (no reasoning, not the output's end).
                    self._open_block_lane(tokens=False)
                    return self._writer.write(emitted) if emitted else []
                return self._string_piece(*emitted)
        self._machine_lane = self._id_lane = None
        self._check_open()
        if not isinstance(text, str):
            self._refuse(f"text must be a str, not {type(text).__name__}")
        count = self._count(token_count, "token_count")
        self._add_completion_tokens(count)
        out = self._begin()
        try:
            events = self._machine.feed(text)
        except DscodecError as exc:
            self._failed(exc, out)
            raise
        return self._deliver(events, out)

    def push_tokens(self, ids: Sequence[int], logprobs: Sequence[Logprob] | None = None) -> list[WireEvent]:
        """Push generated token ids, with one log probability entry per id when the backend gives them.

        Args:
            ids: the ids (a list, a tuple or another ordered iterable; not a set or a mapping), each an ``int``
                with ``0 <= id < 2**32``.
            logprobs: None, or one entry per id: its log probability, or ``(logprob, [(alternative_id,
                logprob), ...])``. Log probabilities are finite numbers or ``-inf`` (written as ``-9999.0``).

        Raises:
            StreamStateError: after the response ended or failed.
            ModelOutputError: an id or log probability out of bounds, or ``logprobs`` without one entry per id
                (the processor then fails; send :meth:`fail`'s events to tell the client).
        """
        lane = self._id_lane
        if lane is not None and logprobs is None and (type(ids) is list or type(ids) is tuple) and ids:
            # The commonest push of all: ids in the middle of a lane (a value, a channel, a tool-call block) as the
            # last push left it, their bytes decoded in one step (an incomplete UTF-8 sequence at the end is held
            # by the decoder). An id the decoder does not take as it is goes the general way, which checks it.
            decode_plain = self._lane  # (not None while a lane is open, but for a text chunk's lane)
            if (
                decode_plain is not None
                and self._gathered is None
                and self._completion_tokens < _FAST_COUNT_LIMIT
            ):
                decoder = self._decoder
                assert decoder is not None  # decode_plain is its method
                try:
                    if len(ids) == 1:
                        # decode_plain's commonest cases without its call, none held: an id of whole characters,
                        # or a special id met before (its unit).
                        token_id = ids[0]
                        if decoder.held or type(token_id) is not int:
                            text = decode_plain(ids)
                        else:
                            text = decoder.whole_texts.get(token_id)
                            if text is None:
                                units = decoder.unit_ids.get(token_id)
                                if units is None:
                                    text = decode_plain(ids)
                                else:
                                    decoder.units = units
                    elif lane is self._block_lane:
                        # The tags of a tool-call block: the same few groups of ids again and again.
                        text = decoder.decode_group(ids)
                    else:
                        text = decode_plain(ids)
                except LookupError:
                    pass
                else:
                    self._completion_tokens += len(ids)
                    if text:
                        try:
                            arguments = lane(text)
                        except DscodecError as exc:  # the block parser failed (the machine has failed)
                            self._failed(exc, [])
                            raise
                        if arguments is not None:
                            return self._writer_lane(arguments, text) if arguments else []
                        self._machine_lane = self._id_lane = None
                        return self._ids_text(text)
                    if text is not None:  # ids that complete no character: nothing, in any lane
                        return []
                    # Special ids among them (a Dsml token inside a tool-call block, say): decode_plain decoded them
                    # into the machine's units, which take the same lane through a block unless the end of
                    # sentence is among them.
                    units = decoder.units
                    if lane is self._block_lane and EOS_HARD not in units and EOS_SOFT not in units:
                        try:
                            events = lane(units)
                        except DscodecError as exc:
                            self._failed(exc, [])
                            raise
                        if events is not None:  # the block lane's events: the writer writes them
                            return self._writer.write(events) if events else []  # type: ignore[arg-type]
                    self._machine_lane = self._id_lane = None
                    return self._ids_units(units, lane)
        decode_plain = self._lane
        if decode_plain is None and self._status == "open" and self._decoder is None:
            # The first ids of an open response: the decoder is made for them, and they take the per-push path.
            decode_plain = self._ensure_decoder().decode_plain
        if (
            decode_plain is not None
            and logprobs is None
            and type(ids) in (list, tuple)
            and ids
            and self._completion_tokens < _FAST_COUNT_LIMIT
        ):
            # The per-push path with no lane open (any open lane was offered the ids above, unless the response
            # gathers them): ordinary ids, checked and their bytes decoded in one step.
            decoder = self._decoder
            assert decoder is not None  # decode_plain is its method
            try:
                text = decode_plain(ids)
            except LookupError:
                pass
            else:
                self._completion_tokens += len(ids)
                if self._gathered is not None:  # coalescing without stop sequences
                    return self._gather(text, len(ids))
                self._machine_lane = self._id_lane = None
                if text is None:  # special ids (markers) among them: decoded into the machine's units
                    return self._ids_units(decoder.units, None)  # decode_plain decoded them (unit_of)
                return self._ids_text(text)
        if self._gathered:  # what waited is read before this push goes another way
            flushed = self._read_gathered()
            if flushed:  # the response ended (never expected): this push is refused, as after any end
                return flushed + self.push_tokens(ids, logprobs)
        if (
            decode_plain is not None
            and logprobs is not None
            and type(ids) in (list, tuple)
            and len(ids) == 1
            and type(logprobs) in (list, tuple)
            and len(logprobs) == 1
            and self._completion_tokens < _FAST_COUNT_LIMIT
        ):
            # One id and its entry: the per-token path, for an ordinary id of whole characters with no bytes held
            # (plain_text gives None for any other, which the general path takes).
            assert self._decoder is not None  # decode_plain is its method
            text = self._decoder.plain_text(ids[0])
            if text is not None:
                return self._token_with_logprob(ids[0], text, logprobs[0])
        self._machine_lane = self._id_lane = None
        self._check_open()
        checked = self._token_ids(ids)
        decoder = self._ensure_decoder()
        entries: list[TokenLogprob] | None = None
        if logprobs is not None:
            given = self._sequence(logprobs, "log probabilities")
            if len(given) != len(checked):
                self._refuse(
                    f"invalid log probabilities: {len(given)} log probabilities for {len(checked)} token IDs"
                )
            # (A loop, not a comprehension: one here would make every push on Python 3.11 keep its locals in
            # cells.)
            entries = []
            for k, (token_id, lp) in enumerate(zip(checked, given)):
                entries.append(self._entry(decoder, k, token_id, lp))
        self._add_completion_tokens(len(checked))
        out = self._begin()
        try:
            decoded = decoder.decode(checked)
            events = self._machine.feed_tokens(decoded, logprobs=entries, incomplete=decoder.pending_bytes)
        except DscodecError as exc:
            self._failed(exc, out)
            raise
        return self._deliver(events, out)

    def _ids_text(self, text: str) -> list[WireEvent]:
        """:meth:`push_tokens`' per-push path for the text of ordinary ids that no lane took. Plain text in the
        middle of the reasoning, the content or a JSON-mode value (or no text yet), or in the middle of a string
        argument, goes straight to the writer; other text takes the machine's other ways."""
        try:
            emitted = self._plain_token(text)
            if emitted is None:  # declined: the machine's other ways
                events = self._machine.feed_declined(text)
            elif isinstance(emitted, str):
                return self._channel_text(emitted, ids=True)
            elif isinstance(emitted, list):
                # Other text inside a tool-call block: tool-call events only (no reasoning, not the output's end).
                self._open_block_lane(tokens=True)
                return self._writer.write(emitted) if emitted else []
            else:
                return self._string_piece(*emitted)
        except DscodecError as exc:
            self._failed(exc, [])
            raise
        return self._ids_events(events)

    def _ids_units(self, units: str, lane: _MachineLane | None) -> list[WireEvent]:
        """:meth:`push_tokens`' per-push path for the units of ids with special ids among them that no lane took
        (``lane``: the one open before the push, if any)."""
        machine = self._machine
        try:
            events = machine.block_units(units)
            if events is not None:  # inside a tool-call block: its events only
                if lane is None or lane is not self._block_lane:
                    self._open_block_lane(tokens=True)
                else:  # the lane through the block stays open
                    self._id_lane = lane
                return self._writer.write(events) if events else []
            events = machine.feed_units(units)
            self._open_block_lane(tokens=True)  # when still inside a tool-call block
        except DscodecError as exc:
            self._failed(exc, [])
            raise
        return self._ids_events(events)

    def _ids_events(self, events: list[Event]) -> list[WireEvent]:
        """The wire events of what the machine gave for the text of ids on the per-push path."""
        if not events:
            return []
        if len(events) == 1:
            event = events[0]
            if type(event) is ReasoningDelta:
                self._reasoning.append(event.text)
                return self._writer.write(events)
            if type(event) is not OutputEnd:
                return self._writer.write(events)
        return self._deliver(events, [])

    def _token_with_logprob(self, token_id: int, text: str, logprob: Logprob) -> list[WireEvent]:
        """:meth:`push_tokens` of one ordinary id whose bytes are whole characters (``text``; no bytes held) and its
        log probability entry, while the response is open: the per-token path with log probabilities. The
        general path's steps and checks in its order, without its per-call set-up."""
        self._machine_lane = self._id_lane = None
        decoder = self._decoder
        assert decoder is not None
        entry = self._entry(decoder, 0, token_id, logprob)  # refuses a bad entry as the general path does
        self._completion_tokens += 1
        try:
            events = self._machine.feed_tokens([TokenText(token_id, text)], logprobs=[entry])
        except DscodecError as exc:
            self._failed(exc, [])
            raise
        return self._deliver(events, [])

    def finish(self, reason: BackendFinish | None = None) -> list[WireEvent]:
        """End the response: ``reason`` is the backend's (``"stop"``, ``"length"``, ``"content_filter"``) or None
        when it gave none. Returns ``[]`` when the response already ended (a stop sequence matched).

        Raises:
            StreamStateError: after the response failed.
            ModelOutputError: ``reason`` is none of those (the processor then fails; send :meth:`fail`'s events).
        """
        if not (reason is None or (isinstance(reason, str) and reason in _FINISH_REASONS)):
            if self._state == "finished":
                return []
            self._check_open()
            self._refuse(
                f"finish reason must be 'stop', 'length', 'content_filter' or None, not {shown(reason)}"
            )
        if self._state == "finished":
            return []
        if self._gathered:
            flushed = self._read_gathered()
            if flushed:
                return flushed
        self._machine_lane = self._id_lane = None
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
        ``[]``; so does calling it after a normal end. A lone surrogate in the failure's text (which no JSON text
        can carry) is sent as U+FFFD; the error given is left as it was.
        """
        if self._state == "finished" or self._error_sent:
            return []
        if self._gathered:
            # What was gathered is part of the output so far (in the response the events add up to). Should the
            # processor fail reading it, the client is told of ``error`` all the same.
            try:
                flushed = self._read_gathered()
            except DscodecError:
                flushed = []
            if flushed:  # the response ended normally after all
                return flushed
        exc = (
            error
            if isinstance(error, DscodecError)
            else ModelOutputError(f"the model server failed: {_failure_text(error)}")
        )
        if has_surrogate(exc.message) or (exc.param is not None and has_surrogate(exc.param)):
            # The events carry the message as JSON text, which UTF-8 must encode: lone surrogates become U+FFFD.
            exc = exc.copy()
            exc.message = sanitize_text(exc.message)
            if exc.param is not None:
                exc.param = sanitize_text(exc.param)
        # The opening events, when the client has not had them: never made, or made by a call that raised.
        out = self._undelivered if self._opened else self._writer.open(self._usage)
        self._opened, self._undelivered = True, []
        if self._state != "failed":  # after a failure of the processor itself, its first message stays
            self._state, self._failure = "failed", str(exc)
        self._error_sent = True
        return out + self._writer.error(exc)

    # -- plumbing -----------------------------------------------------------------------------------------------

    def _gather(self, text: str | None, count: int) -> list[WireEvent]:
        """The per-push path of a coalescing processor with no stop sequence, for ``count`` ids checked and decoded
        into ``text`` (None: special ids among them, decoded into the machine's units): the text waits, to be
        read in one piece once :data:`_GATHER_IDS` ids wait, or before any other call goes on. Without a stop
        sequence nothing pushed ends the response (the end-of-sentence id ends the output, and the backend the
        response), so :attr:`finished` stays true to the output pushed."""
        if text is None:
            assert self._decoder is not None  # (its decode_plain decoded them)
            text = self._decoder.units
            self._gathered_units = True
        if text:  # (empty: an incomplete UTF-8 sequence, held by the decoder)
            gathered = self._gathered
            assert gathered is not None
            gathered.append(text)
            self._gathered_ids += count
            if self._gathered_ids >= _GATHER_IDS:
                return self._read_gathered()
        return []

    def _read_gathered(self) -> list[WireEvent]:
        """The machine reads the gathered text in one piece (as units when a special id's unit is among them,
        else as the text of ordinary ids: its quicker way); its events."""
        gathered = self._gathered
        assert gathered is not None
        text = "".join(gathered) if len(gathered) > 1 else gathered[0]
        gathered.clear()
        self._gathered_ids = 0
        self._machine_lane = self._id_lane = None
        machine = self._machine
        try:
            if self._gathered_units:
                self._gathered_units = False
                events = machine.feed_units(text)
            else:
                events = machine.feed_plain_token(text)
        except DscodecError as exc:
            self._failed(exc, [])
            raise
        return self._deliver(events, [])

    def _string_piece(self, index: int, arguments: str, raw: str, parameter: str) -> list[WireEvent]:
        """The wire events of a piece of a ``string="true"`` argument the machine gave; the lane through the rest
        of that value opens (the writer's part is made once per call and parameter)."""
        self._machine_lane = self._id_lane = self._machine.string_lane()
        if self._writer_lane_for != (index, parameter):
            self._writer_lane = self._writer.argument_lane(index, parameter)
            self._writer_lane_for = (index, parameter)
        return self._writer.argument(index, arguments, raw, parameter)

    def _channel_text(self, text: str, *, ids: bool) -> list[WireEvent]:
        """Text the machine gave in the middle of the reasoning, the content or a JSON-mode value, from ids
        (``ids``) or a text chunk: its events, and the lane through the rest of that stretch opens."""
        if not text:
            return []
        machine = self._machine
        reasoning = machine.text_is_reasoning
        if reasoning:
            self._reasoning.append(text)
        if ids:
            self._open_lane(machine.token_lane(), reasoning, ids_only=True)
        else:  # text chunks take the lanes that check spellings (never json_lane in the reasoning)
            self._open_lane(machine.json_lane() if machine.in_json_value else machine.text_lane(), reasoning)
        return self._write_text(reasoning, text)

    def _open_lane(
        self, lane: Callable[[str], str | None] | None, reasoning: bool, *, ids_only: bool = False
    ) -> None:
        """The machine gave text in the middle of the reasoning (``reasoning``), the content or a JSON-mode value,
        and ``lane`` is what it offers for the rest of it (``text_lane()``, ``json_lane()`` or, for the text of
        ordinary ids only (``ids_only``), ``token_lane()``; None: no lane). The writer's part is made once per
        channel; the reasoning's also keeps the text for its token count."""
        if lane is None:
            return
        self._machine_lane = None if ids_only else lane
        self._id_lane = lane
        self._writer_lane_for = None
        if reasoning:
            if self._reasoning_lane is None:
                self._reasoning_lane = self._writer.reasoning_lane(self._reasoning.append)
            self._writer_lane = self._reasoning_lane
        else:
            if self._content_lane is None:
                self._content_lane = self._writer.content_lane()
            self._writer_lane = self._content_lane

    def _open_block_lane(self, *, tokens: bool) -> None:
        """The machine read a push inside a tool-call block: the lane through the block opens, for the text of
        ordinary ids (``tokens``) or for text chunks, when the machine offers one (see
        :meth:`OutputMachine.block_lane`)."""
        lane = self._machine.block_lane(tokens=tokens)
        if lane is None:
            return
        if tokens:
            self._machine_lane, self._id_lane = None, lane
            self._block_lane = lane
        else:  # a chunk lane turns spellings into units, which the text of ids never holds
            self._machine_lane, self._id_lane = lane, None
        self._writer_lane = self._block_writer
        self._writer_lane_for = None

    def _check_open(self) -> None:
        if self._state == "finished":
            raise StreamStateError("stream processor has finished")
        if self._state == "failed":
            raise StreamStateError(f"stream processor failed earlier: {self._failure}")

    def _begin(self) -> list[WireEvent]:
        if self._state != "open":
            self._check_open()
            self._state = "open"
            self._opened = True
            return self._writer.open(self._usage)
        return []

    def _failed(self, exc: DscodecError, undelivered: list[WireEvent]) -> None:
        """A push raised ``exc`` after making ``undelivered`` events: fail, keeping them for :meth:`fail`."""
        self._state, self._failure = "failed", str(exc)
        self._undelivered = undelivered

    def _refuse(self, message: str) -> NoReturn:
        """Fail on a value the backend handed over (nothing was made from it)."""
        self._state, self._failure = "failed", message
        raise ModelOutputError(message)

    def _bounded(self, value: object, what: str, limit: int, limit_text: str) -> int:
        """An integer (not a bool) with ``0 <= value < limit``; ``limit_text`` is how messages write the limit."""
        if isinstance(value, bool):
            self._refuse(f"{what} must be an integer, not a bool")
        try:
            number = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            self._refuse(f"{what} must be an integer, not {type(value).__name__}")
        if not 0 <= number < limit:
            self._refuse(f"{what} must be at least 0 and below {limit_text}, not {shown(number)}")
        return number

    def _count(self, value: object, name: str) -> int:
        """A token count: an integer, ``0 <= value < 2**63``."""
        return self._bounded(value, name, COUNT_LIMIT, "2**63")

    def _add_completion_tokens(self, count: int) -> None:
        total = self._completion_tokens + count
        if total >= COUNT_LIMIT:
            self._refuse(f"the backend reported {total} completion tokens; the limit is 2**63 - 1")
        self._completion_tokens = total

    def _token_id(self, value: object, where: str) -> int:
        """A token id: an integer, ``0 <= value < 2**32``."""
        if type(value) is int and 0 <= value < ID_LIMIT:
            return value
        return self._bounded(value, where, ID_LIMIT, "2**32")

    def _sequence(self, value: object, what: str) -> list[object]:
        """``value`` as a list, refused when it is no sequence: a str or bytes neither, nor a set or a mapping
        (no order, or keys without their values); any other iterable is read in its order."""
        if type(value) is list or type(value) is tuple:
            return list(value)
        if isinstance(value, (str, bytes, bytearray, AbstractSet, Mapping)):
            self._refuse(f"{what} must be a sequence, not {type(value).__name__}")
        try:
            items: list[object] = list(value)  # type: ignore[call-overload]
        except TypeError:
            self._refuse(f"{what} must be a sequence, not {type(value).__name__}")
        return items

    def _token_ids(self, ids: Sequence[int]) -> list[int]:
        given = self._sequence(ids, "token ids")
        if all(type(value) is int and 0 <= value < ID_LIMIT for value in given):
            return given  # type: ignore[return-value]
        checked = []  # (a loop: a comprehension would keep ``self`` in a cell every call, on Python 3.11)
        for k, value in enumerate(given):
            checked.append(self._token_id(value, f"token id {k}"))
        return checked

    def _logprob(self, value: object, where: str) -> float:
        """A log probability: a real number, finite or ``-inf`` (which becomes ``-9999.0``)."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            self._refuse(f"{where} must be a number, not {type(value).__name__}")
        try:
            number = float(value)
        except (ArithmeticError, TypeError, ValueError):  # an integer beyond the float range, say
            self._refuse(f"{where} must be a finite number or -inf, not {shown(value)}")
        if math.isfinite(number):
            return number
        if number == -math.inf:
            return NEG_INF_LOGPROB
        self._refuse(f"{where} must be a finite number or -inf, not {number}")

    def _entry(self, decoder: IncrementalDecoder, k: int, token_id: int, logprob: object) -> TokenLogprob:
        """The entry of one id. Given in one of its commonest shapes (a finite float, or a ``(float, [(int, float),
        ...])`` pair of finite numbers), it is checked in one pass and kept as it came (:class:`GivenLogprob`), to
        be written when a writer writes it: the output machine carries entries without looking into them, and
        this processor's writers take such an entry where they take the stream decoder's. Anything else takes the
        checks of :meth:`_checked_entry`, which name what is wrong."""
        if type(logprob) is tuple and len(logprob) == 2:
            first, alternatives = logprob
            if type(first) is float and _finite(first) and type(alternatives) in (list, tuple):
                entry = (self._logprobs or self._logprob_writer(decoder)).given(token_id, first, alternatives)
                if entry is not None:
                    return cast(TokenLogprob, entry)
        elif type(logprob) is float and _finite(logprob):
            return cast(
                TokenLogprob, (self._logprobs or self._logprob_writer(decoder)).given(token_id, logprob)
            )
        return self._checked_entry(decoder, k, token_id, logprob)

    def _logprob_writer(self, decoder: IncrementalDecoder) -> LogprobWriter:
        assert self._vocab is not None  # loaded with the decoder
        writer = self._logprobs = LogprobWriter(decoder.logprob_fields, self._vocab)
        return writer

    def _checked_entry(
        self, decoder: IncrementalDecoder, k: int, token_id: int, logprob: object
    ) -> TokenLogprob:
        """:meth:`_entry` for any value: each part checked in turn, the first wrong one refused by name."""
        if isinstance(logprob, numbers.Real) and not isinstance(logprob, bool):
            return decoder.logprob(token_id, self._logprob(logprob, f"log probability {k}"))
        value: object
        top: Any
        pairs: list[tuple[object, object]]
        try:
            value, top = logprob  # type: ignore[misc]
            pairs = [(alt_id, alt) for alt_id, alt in top]
        except (TypeError, ValueError):
            self._refuse(
                f"log probability {k} must be a number or a (logprob, [(token id, logprob), ...]) pair"
            )
        checked = [
            (
                self._token_id(alt_id, f"top log probability {k}.{j} token id"),
                self._logprob(alt, f"top log probability {k}.{j}"),
            )
            for j, (alt_id, alt) in enumerate(pairs)
        ]
        return decoder.logprob(token_id, self._logprob(value, f"log probability {k}"), checked)

    def _ensure_decoder(self) -> IncrementalDecoder:
        if self._decoder is None:
            self._vocab = Vocabulary.load(self._tokenizer)
            unit_of = _SpecialUnits(self._machine.special_unit).__getitem__
            self._decoder = IncrementalDecoder(self._vocab, unit_of=unit_of)
            if self._status == "open":
                self._lane = self._decoder.decode_plain
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
        backend chunk), never more than the completion tokens (text chunks may count fewer tokens than their
        text re-encodes to); None when the request has no thinking stage."""
        if self.request.parsing_options.thinking_initial_stage is None:
            return None
        text = "".join(self._reasoning)
        if not text:
            return 0
        if self._vocab is None:
            self._vocab = Vocabulary.load(self._tokenizer)
        return min(self._vocab.count_tokens(text), self._completion_tokens)
