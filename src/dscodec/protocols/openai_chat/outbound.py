"""Stream events -> Chat Completions chunks (behavior.md#chat-chunks).

Every chunk is ``{"id","object":"chat.completion.chunk","created","model","system_fingerprint","choices":[{"index":0,
"delta","logprobs","finish_reason"}],"usage"}``. The first chunk announces the role; reasoning goes in
``reasoning_content`` and the answer in ``content`` (in thinking mode each delta names the other field as null);
tool calls stream as ``tool_calls`` deltas; the last chunk has the finish reason and always the usage. Non-final
chunks carry ``"usage": null`` unless the request streams without ``stream_options.include_usage``, where the key
is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from dscodec._json import string_literal
from dscodec.conversation import ConversationRequest
from dscodec.errors import DscodecError
from dscodec.protocols._error_bodies import openai_error_body
from dscodec.protocols._wire import (
    EventWriter,
    Outcome,
    PromptUsage,
    WireEvent,
    dict_event,
    json_event,
    logprob_dict,
    logprob_entries_json,
)
from dscodec.protocols.openai_chat import ChatWire
from dscodec.stream.events import ContentDelta, Event, ReasoningDelta, ToolCallDelta, ToolCallStart

__all__ = ["WRITER", "ChatChunkWriter", "finish_reason", "usage_dict", "usage_json"]


#: Argument fragments up to this long have their chunk remembered, up to this many per call.
_CACHED_LENGTH = 16
_CACHED_COUNT = 64


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def finish_reason(outcome: Outcome) -> str:
    """The Chat ``finish_reason`` (behavior.md#stream-lifecycle table)."""
    if outcome.finish is None or outcome.stop_sequence is not None:
        return "stop"
    if outcome.finish == "stop":
        return "tool_calls" if outcome.tool_calls else "stop"
    return outcome.finish


def usage_dict(outcome: Outcome, *, with_reasoning: bool) -> dict[str, Any]:
    """The Chat usage object (behavior.md#token-chunks-and-usage, behavior.md#chat-chunks; reasoning tokens per deviation D5)."""
    prompt = outcome.prompt.prompt_tokens
    cached = outcome.prompt.cached_tokens
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": outcome.completion_tokens,
        "total_tokens": prompt + outcome.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    if with_reasoning and outcome.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": outcome.reasoning_tokens}
    usage["prompt_cache_hit_tokens"] = cached
    usage["prompt_cache_miss_tokens"] = max(0, prompt - cached)
    return usage


def usage_json(outcome: Outcome, *, with_reasoning: bool) -> str | None:
    """:func:`usage_dict` as compact JSON text, written directly; None unless every count is an ``int`` (what the
    stream processor gives), whose text is its digits."""
    prompt = outcome.prompt.prompt_tokens
    cached = outcome.prompt.cached_tokens
    completion = outcome.completion_tokens
    reasoning = outcome.reasoning_tokens if with_reasoning else None
    if not (
        type(prompt) is int
        and type(cached) is int
        and type(completion) is int
        and (reasoning is None or type(reasoning) is int)
    ):
        return None
    details = "" if reasoning is None else f',"completion_tokens_details":{{"reasoning_tokens":{reasoning}}}'
    return (
        f'{{"prompt_tokens":{prompt},"completion_tokens":{completion},"total_tokens":{prompt + completion},'
        f'"prompt_tokens_details":{{"cached_tokens":{cached}}}{details},'
        f'"prompt_cache_hit_tokens":{cached},"prompt_cache_miss_tokens":{max(0, prompt - cached)}}}'
    )


class ChatChunkWriter(EventWriter):
    """Writes ``chat.completion.chunk`` objects; ``sse_done`` is the ``[DONE]`` frame."""

    sse_done = "data: [DONE]\n\n"

    def __init__(self, request: ConversationRequest, *, response_id: str, model: str, created: int) -> None:
        super().__init__(request, response_id=response_id, model=model, created=created)
        self._thinking = request.conversation.thinking_mode
        include_usage = isinstance(request.wire, ChatWire) and request.wire.include_usage
        self._omit_usage = request.stream and not include_usage
        self._fingerprint: str | None = None
        # Text pieces are the per-token hot path: their chunks are written as JSON text around the escaped piece
        # (set up in open(), once the system fingerprint is known).
        self._head = self._tail = self._finish_tail = self._content_close = ""
        self._content_before = self._content_after = self._reasoning_before = self._reasoning_after = ""
        self._argument_before: dict[int, str] = {}
        self._argument_after = ""
        # The chunks of short argument fragments of the current call (see write()): the same event object is
        # written again (events are not changed once made).
        self._cached_index = -1
        self._cached_arguments: dict[str, WireEvent] = {}

    def _chunk(self, delta: dict[str, Any], logprobs: Any = None, finish: str | None = None) -> WireEvent:
        chunk: dict[str, Any] = {
            "id": self.response_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": self._fingerprint,
            "choices": [{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}],
        }
        if not self._omit_usage:
            chunk["usage"] = None
        return dict_event(chunk)

    def open(self, usage: PromptUsage) -> list[WireEvent]:
        self._fingerprint = usage.system_fingerprint
        self._head = (
            f'{{"id":{_dumps(self.response_id)},"object":"chat.completion.chunk","created":{self.created},'
            f'"model":{_dumps(self.model)},"system_fingerprint":{_dumps(self._fingerprint)},'
            '"choices":[{"index":0,"delta":'
        )
        self._finish_tail = ',"finish_reason":null}]' + ("}" if self._omit_usage else ',"usage":null}')
        self._tail = ',"logprobs":null' + self._finish_tail
        self._content_before = self._head + '{"content":'
        self._content_close = ',"reasoning_content":null},' if self._thinking else "},"
        self._content_after = self._content_close[:-1] + self._tail
        self._reasoning_before = self._head + '{"content":null,"reasoning_content":'
        self._reasoning_after = "}" + self._tail
        self._argument_after = "}}]}" + self._tail
        # The first chunk as JSON text around its delta (what _chunk's dict serialises to).
        if not self._thinking:
            delta = '{"role":"assistant","content":""}'
        elif self.request.parsing_options.thinking_initial_stage == "content_continuation":
            delta = '{"role":"assistant","content":"","reasoning_content":null}'
        else:
            delta = '{"role":"assistant","content":null,"reasoning_content":""}'
        return [json_event(f"{self._head}{delta}{self._tail}")]

    def _with_logprobs(
        self, before: str, event: ContentDelta | ReasoningDelta, close: str, field: str
    ) -> WireEvent:
        """The chunk of a text delta with log probabilities as JSON text: ``before`` (the chunk up to the text),
        the escaped text, ``close`` (the rest of the delta and a comma), then the entries under ``field``."""
        entries = logprob_entries_json(event.logprobs)
        return json_event(
            f'{before}{string_literal(event.text)}{close}"logprobs":{{"{field}":{entries}}}{self._finish_tail}'
        )

    def text(self, reasoning: bool, text: str) -> list[WireEvent]:
        # The chunk's JSON text around the escaped piece (set up in open()); the per-token hot path.
        literal = string_literal(text)
        if reasoning:
            return [json_event(f"{self._reasoning_before}{literal}{self._reasoning_after}")]
        return [json_event(f"{self._content_before}{literal}{self._content_after}")]

    def argument(
        self, index: int, arguments: str, raw: str | None = None, parameter: str | None = None
    ) -> list[WireEvent]:
        # The chunk's JSON text around the escaped fragment; the text before it is made once per call.
        if not arguments:
            return []
        before = self._argument_before.get(index)
        if before is None:
            before = self._argument_head(index)
        if arguments is raw:  # nothing to escape (the parser's word for it)
            return [json_event(f'{before}"{arguments}"{self._argument_after}')]
        return [json_event(f"{before}{string_literal(arguments)}{self._argument_after}")]

    def argument_lane(self, index: int, parameter: str) -> Callable[[str, str], list[WireEvent]]:
        before = self._argument_before.get(index)
        if before is None:
            before = self._argument_head(index)
        after = self._argument_after

        def lane(arguments: str, raw: str) -> list[WireEvent]:
            if arguments is raw:  # nothing to escape
                return [json_event(f'{before}"{arguments}"{after}')]
            return [json_event(f"{before}{string_literal(arguments)}{after}")]

        return lane

    def reasoning_lane(self, keep: Callable[[str], None]) -> Callable[[str, str], list[WireEvent]]:
        before, after = self._reasoning_before, self._reasoning_after

        def lane(piece: str, raw: str) -> list[WireEvent]:
            keep(piece)
            return [json_event(f"{before}{string_literal(piece)}{after}")]

        return lane

    def content_lane(self) -> Callable[[str, str], list[WireEvent]]:
        before, after = self._content_before, self._content_after

        def lane(piece: str, raw: str) -> list[WireEvent]:
            return [json_event(f"{before}{string_literal(piece)}{after}")]

        return lane

    def _argument_head(self, index: int) -> str:
        """The JSON text of an argument chunk of call ``index`` before the fragment (made once per call)."""
        before = f'{self._head}{{"tool_calls":[{{"index":{index},"function":{{"arguments":'
        self._argument_before[index] = before
        return before

    def write(self, events: Sequence[Event]) -> list[WireEvent]:
        out: list[WireEvent] = []
        thinking = self._thinking
        for event in events:
            if type(event) is ToolCallDelta:  # the commonest event of a tool-call block: argument() inline
                arguments = event.arguments
                if arguments:
                    # The same short fragments come again and again in a call (separators, keys, quotes, short
                    # values): their chunk is remembered for the current call.
                    if event.index == self._cached_index:
                        cached = self._cached_arguments.get(arguments)
                        if cached is not None:
                            out.append(cached)
                            continue
                    else:
                        self._cached_index = event.index
                        self._cached_arguments = {}
                    before = self._argument_before.get(event.index)
                    if before is None:
                        before = self._argument_head(event.index)
                    chunk = json_event(f"{before}{string_literal(arguments)}{self._argument_after}")
                    if len(arguments) <= _CACHED_LENGTH and len(self._cached_arguments) < _CACHED_COUNT:
                        self._cached_arguments[arguments] = chunk
                    out.append(chunk)
            elif isinstance(event, ContentDelta):
                if not event.logprobs:
                    out += self.text(False, event.text)
                    continue
                if self._head:  # opened: the chunk's JSON text around the text and its entries
                    out.append(
                        self._with_logprobs(self._content_before, event, self._content_close, "content")
                    )
                    continue
                delta: dict[str, Any] = (
                    {"content": event.text, "reasoning_content": None}
                    if thinking
                    else {"content": event.text}
                )
                out.append(self._chunk(delta, {"content": [logprob_dict(e) for e in event.logprobs]}))
            elif isinstance(event, ReasoningDelta):
                if not event.logprobs:
                    out += self.text(True, event.text)
                    continue
                if self._head:
                    out.append(self._with_logprobs(self._reasoning_before, event, "},", "reasoning_content"))
                    continue
                logprobs = {"reasoning_content": [logprob_dict(e) for e in event.logprobs]}
                out.append(self._chunk({"content": None, "reasoning_content": event.text}, logprobs))
            elif isinstance(event, ToolCallDelta):
                out += self.argument(event.index, event.arguments)
            elif isinstance(event, ToolCallStart):
                if self._head:  # opened: the chunk's JSON text around the call's fields
                    out.append(
                        json_event(
                            f'{self._head}{{"tool_calls":[{{"index":{event.index},'
                            f'"id":{string_literal(event.call_id)},"type":"function","function":'
                            f'{{"name":{string_literal(event.name)},"arguments":""}}}}]}}{self._tail}'
                        )
                    )
                    continue
                call = {
                    "index": event.index,
                    "id": event.call_id,
                    "type": "function",
                    "function": {"name": event.name, "arguments": ""},
                }
                out.append(self._chunk({"tool_calls": [call]}))
        return out

    def close(self, outcome: Outcome) -> list[WireEvent]:
        with_reasoning = self.request.parsing_options.thinking_initial_stage is not None
        usage = usage_json(outcome, with_reasoning=with_reasoning) if self._head else None
        if usage is not None:
            # Opened: the last chunk as JSON text around its delta, finish reason and usage (the usage last, where
            # the dict below puts it).
            delta = '{"content":"","reasoning_content":null}' if self._thinking else '{"content":""}'
            return [
                json_event(
                    f'{self._head}{delta},"logprobs":null,"finish_reason":{string_literal(finish_reason(outcome))}'
                    f'}}],"usage":{usage}}}'
                )
            ]
        chunk = self._chunk(
            {"content": "", "reasoning_content": None} if self._thinking else {"content": ""},
            None,
            finish_reason(outcome),
        ).data
        chunk["usage"] = usage_dict(outcome, with_reasoning=with_reasoning)
        return [dict_event(chunk)]

    def error(self, exc: DscodecError) -> list[WireEvent]:
        # After a 200 the only way to report an error is in the stream: one data frame with the error body.
        return [dict_event(openai_error_body(exc))]


#: This protocol's stream writer, for the protocol table.
WRITER = ChatChunkWriter
