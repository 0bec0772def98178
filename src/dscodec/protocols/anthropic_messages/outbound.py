"""Stream events -> Anthropic Messages stream events (behavior.md#messages-events; deviation D1 for errors).

A response is ``message_start``, then content blocks, then ``message_delta`` (stop reason, usage) and
``message_stop``. Each block is ``content_block_start``, deltas, ``content_block_stop``; blocks are numbered
from 0 and never interleave. In thinking mode block 0 is a thinking block, opened with ``message_start``; it
ends with a ``signature_delta`` even when the reasoning is empty. A single ``ping`` follows the first
``content_block_start`` (none when the response has no block at all).

Like the reference, a block is stopped lazily: when the next block starts or the response ends. So the
thinking block's signature and stop come with the first answer text or tool call (or the end), not at
``</think>`` itself; a client sees the same events in the same order either way.

The SSE event name of every event is its ``type`` (``ping`` included); there is no closing ``[DONE]`` frame.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dscodec._json import string_literal
from dscodec.conversation import ConversationRequest
from dscodec.errors import DscodecError
from dscodec.protocols._error_bodies import anthropic_error_body
from dscodec.protocols._wire import EventWriter, Outcome, PromptUsage, WireEvent, dict_event, json_event
from dscodec.stream.events import ContentDelta, Event, ReasoningDelta, ToolCallDelta, ToolCallStart

__all__ = ["WRITER", "MessagesEventWriter", "stop_reason"]

_PING = {"type": "ping"}
_THINKING = "thinking"
_TEXT = "text"
_TOOL_USE = "tool_use"
#: Argument fragments up to this long have their event remembered, up to this many per block.
_FRAGMENT_LENGTH = 16
_FRAGMENT_COUNT = 64
#: Per block type: its delta's type and field, as the JSON text of a delta event writes them after the block's
#: index (the per-token hot path writes the event as text around the escaped piece).
_DELTA_FIELDS = {
    _THINKING: ',"delta":{"type":"thinking_delta","thinking":',
    _TEXT: ',"delta":{"type":"text_delta","text":',
    _TOOL_USE: ',"delta":{"type":"input_json_delta","partial_json":',
}


def stop_reason(outcome: Outcome) -> str:
    """The Messages ``stop_reason`` for how the output ended (behavior.md#stream-lifecycle table).

    Examples:
        >>> from dscodec.protocols._wire import PromptUsage
        >>> def outcome(finish, calls=0, stop=None):
        ...     return Outcome(finish, calls, stop, PromptUsage(), 0, None)
        >>> [stop_reason(outcome("stop")), stop_reason(outcome("stop", 1)), stop_reason(outcome(None, 1))]
        ['end_turn', 'tool_use', 'end_turn']
        >>> [stop_reason(outcome("length")), stop_reason(outcome("content_filter")), stop_reason(outcome(None, 0, "END"))]
        ['max_tokens', 'refusal', 'stop_sequence']
    """
    if outcome.stop_sequence is not None:
        return "stop_sequence"
    finish = outcome.finish
    if finish == "stop":
        return "tool_use" if outcome.tool_calls else "end_turn"
    if finish == "length":
        return "max_tokens"
    if finish == "content_filter":
        return "refusal"
    # No finish chunk: the stream simply ended, which the reference reports as a normal end even after calls.
    return "end_turn"


def _event(data: dict[str, Any]) -> WireEvent:
    return dict_event(data, event=data["type"])


class MessagesEventWriter(EventWriter):
    """Writes Anthropic Messages stream events.

    Attributes:
        signature: the thinking block's signature (``signature_delta``); the response id unless the caller
            sets another (``StreamProcessor(signature=...)``). None also means the response id.

    Examples:
        >>> import dscodec
        >>> request = dscodec.convert("messages", {"model": "DeepSeek-V4-Pro", "max_tokens": 64,
        ...     "thinking": {"type": "enabled", "budget_tokens": 32}, "messages": [{"role": "user", "content": "Hi"}]})
        >>> p = dscodec.StreamProcessor(request, response_id="msg_1", model="DeepSeek-V4-Pro", signature="sig")
        >>> events = p.start(prompt_tokens=5) + p.push_text("Hmm.</think>Hello!", token_count=4) + p.finish("stop")
        >>> [e.event for e in events]  # doctest: +NORMALIZE_WHITESPACE
        ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta',
         'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_stop',
         'message_delta', 'message_stop']
        >>> events[4].to_json()
        '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}'
    """

    sse_done = ""

    def __init__(self, request: ConversationRequest, *, response_id: str, model: str, created: int) -> None:
        super().__init__(request, response_id=response_id, model=model, created=created)
        self.signature: str | None = response_id
        # The generator's thinking mode decides the opening thinking block (behavior.md#messages-events, behavior.md#neutral-conversation), not the parsing
        # options; both agree for every request dscodec converts.
        self._thinking = request.conversation.thinking_mode
        self._kind: str | None = None  # type of the open block, None when no block is open
        self._index = -1  # index of the open (or last) block
        self._pinged = False
        self._usage: dict[str, Any] = {}
        # The JSON text of a delta event of the open block before its escaped piece ("" when no block is open).
        self._delta_head = ""
        # The events of short argument fragments of the open block: the same fragments come again and again in a
        # call (separators, keys, quotes, short values), and an event is not changed once made.
        self._fragments: dict[str, WireEvent] = {}

    # -- EventWriter --------------------------------------------------------------------------------------------

    def open(self, usage: PromptUsage) -> list[WireEvent]:
        # Anthropic counts cache reads apart from input tokens; the reference floors P - H at 0 when a
        # backend reports more cached than prompt tokens (docs/golden-streams.md, lifecycle).
        self._usage = {
            "input_tokens": max(0, usage.prompt_tokens - usage.cached_tokens),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": usage.cached_tokens,
        }
        start = {
            "type": "message_start",
            "message": {
                "id": self.response_id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {**self._usage, "output_tokens": 0, "service_tier": "standard"},
            },
        }
        out = [_event(start)]
        if self._thinking:
            self._start(out, {"type": "thinking", "thinking": "", "signature": ""})
        return out

    def text(self, reasoning: bool, text: str) -> list[WireEvent]:
        # The per-token hot path: a delta of the open block, as JSON text.
        if self._kind != (_THINKING if reasoning else _TEXT):
            return self.write([ReasoningDelta(text) if reasoning else ContentDelta(text)])
        return [self._delta(text)]

    def argument(
        self, index: int, arguments: str, raw: str | None = None, parameter: str | None = None
    ) -> list[WireEvent]:
        if not arguments:
            return []
        if self._kind != _TOOL_USE:
            return self.write([ToolCallDelta(index, arguments, raw, parameter)])
        return [self._delta(arguments)]

    def _delta(self, piece: str) -> WireEvent:
        """The delta event of the open block: its JSON text around the escaped ``piece`` (what orjson writes for
        ``{"type", "index", "delta": {"type", field}}``). The lanes below write it inline."""
        return json_event(f"{self._delta_head}{string_literal(piece)}}}}}", "content_block_delta")

    def argument_lane(self, index: int, parameter: str) -> Callable[[str, str], list[WireEvent]]:
        argument = self.argument

        def lane(arguments: str, raw: str) -> list[WireEvent]:
            if self._kind != _TOOL_USE:
                return argument(index, arguments, raw, parameter)
            if arguments is raw:
                return [json_event(f'{self._delta_head}"{arguments}"}}}}', "content_block_delta")]
            return [json_event(f"{self._delta_head}{string_literal(arguments)}}}}}", "content_block_delta")]

        return lane

    def reasoning_lane(self, keep: Callable[[str], None]) -> Callable[[str, str], list[WireEvent]]:
        return self._text_lane(_THINKING, keep)

    def content_lane(self) -> Callable[[str, str], list[WireEvent]]:
        return self._text_lane(_TEXT, None)

    def _text_lane(
        self, kind: str, keep: Callable[[str], None] | None
    ) -> Callable[[str, str], list[WireEvent]]:
        """The lane of the thinking block (``kind``; each piece handed to ``keep`` first) or the text block: the
        delta event's JSON text inline (this is the per-token path)."""
        text = self.text
        reasoning = kind == _THINKING

        def lane(piece: str, raw: str) -> list[WireEvent]:
            if keep is not None:
                keep(piece)
            if self._kind != kind:
                return text(reasoning, piece)
            return [json_event(f"{self._delta_head}{string_literal(piece)}}}}}", "content_block_delta")]

        return lane

    def write(self, events: Sequence[Event]) -> list[WireEvent]:
        out: list[WireEvent] = []
        for event in events:
            # Most frequent first: this runs once per generated token.
            if type(event) is ToolCallDelta:
                piece = event.arguments
                if not piece:
                    continue
                if self._kind != _TOOL_USE:  # no call's block is open (events not from the machine)
                    delta = {"type": "input_json_delta", "partial_json": piece}
                    out.append(_event({"type": "content_block_delta", "index": self._index, "delta": delta}))
                    continue
                made = self._fragments.get(piece)
                if made is None:
                    made = self._delta(piece)
                    if len(piece) <= _FRAGMENT_LENGTH and len(self._fragments) < _FRAGMENT_COUNT:
                        self._fragments[piece] = made
                out.append(made)
                continue
            elif type(event) is ContentDelta:
                if self._kind != _TEXT:
                    self._start(out, {"type": "text", "text": ""})
                piece = event.text
            elif type(event) is ReasoningDelta:
                if self._kind != _THINKING:
                    # Only reachable when the parsing options start in reasoning but the conversation is not
                    # in thinking mode; a thinking block keeps the stream well formed.
                    self._start(out, {"type": "thinking", "thinking": "", "signature": ""})
                piece = event.text
            elif type(event) is ToolCallStart:
                self._start(out, {"type": "tool_use", "id": event.call_id, "name": event.name, "input": {}})
                continue
            else:
                # ReasoningEnd, ToolCallEnd: the open block is stopped when the next one starts or at the end
                # (the reference's timing). StopSequence, OutputEnd: close() ends the message.
                continue
            out.append(self._delta(piece))
        return out

    def close(self, outcome: Outcome) -> list[WireEvent]:
        out: list[WireEvent] = []
        self._stop(out)
        usage = {**self._usage, "output_tokens": outcome.completion_tokens, "service_tier": "standard"}
        out.append(
            _event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason(outcome), "stop_sequence": outcome.stop_sequence},
                    "usage": usage,
                }
            )
        )
        out.append(_event({"type": "message_stop"}))
        return out

    def error(self, exc: DscodecError) -> list[WireEvent]:
        # Deviation D1: Anthropic's envelope, as the `error` SSE event Anthropic sends mid-stream. Rendered
        # directly (not through `exc.body`) so an error naming another protocol still has this shape.
        return [_event(anthropic_error_body(exc))]

    # -- blocks -------------------------------------------------------------------------------------------------

    def _start(self, out: list[WireEvent], block: dict[str, Any]) -> None:
        """Stop the open block, then start ``block`` at the next index (with the single ping after the first)."""
        if self._kind is not None:
            self._stop(out)
        self._index += 1
        self._kind = block["type"]
        fields = _DELTA_FIELDS.get(self._kind)
        self._fragments = {}
        self._delta_head = f'{{"type":"content_block_delta","index":{self._index}{fields}' if fields else ""
        out.append(_event({"type": "content_block_start", "index": self._index, "content_block": block}))
        if not self._pinged:
            self._pinged = True
            out.append(dict_event(dict(_PING), event="ping"))

    def _stop(self, out: list[WireEvent]) -> None:
        """Stop the open block, if any; a thinking block gets its signature first."""
        if self._kind is None:
            return
        if self._kind == _THINKING:
            signature = self.signature if self.signature is not None else self.response_id
            delta = {"type": "signature_delta", "signature": signature}
            out.append(_event({"type": "content_block_delta", "index": self._index, "delta": delta}))
        out.append(_event({"type": "content_block_stop", "index": self._index}))
        self._kind = None


#: This protocol's stream writer, for the protocol table.
WRITER = MessagesEventWriter
