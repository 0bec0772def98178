"""Stream events -> OpenAI Responses stream events (behavior.md#stream-lifecycle, behavior.md#token-chunks-and-usage, behavior.md#responses-events, behavior.md#writers; deviations D3, D5, D6).

A Responses stream is a lifecycle around output items::

    response.created, response.in_progress                 (the response object, status in_progress, no output)
    per output item:  output_item.added
                      [content_part.added, <text deltas>, <text done>, content_part.done]   (reasoning, message)
                      [<argument / input deltas>, <arguments / input done>]                 (tool calls)
                      output_item.done
    response.completed | response.incomplete | response.failed

Items are opened lazily (a reasoning item on the first reasoning text, a message on the first answer text, a
call when its name is complete) and, as in the reference, closed lazily: an item's done events are written when
the next item opens or when the response ends. An item still open when the response ends incomplete (length,
content filter) or fails is done with status ``incomplete``.

Every event carries ``sequence_number`` (0, 1, 2, … without gaps); keys follow the reference's order (``type``
first, the others alphabetically), so the JSON matches it byte for byte.
"""

from __future__ import annotations

import functools
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import orjson

from dscodec._json import JSONDecodeError, loads, string_literal
from dscodec.conversation import ConversationRequest
from dscodec.errors import DscodecError
from dscodec.protocols._wire import (
    EventWriter,
    Outcome,
    PromptUsage,
    WireEvent,
    dict_event,
    dumps_json,
    json_event,
    logprob_entries_json,
)
from dscodec.protocols.openai_responses import ResponsesWire
from dscodec.protocols.openai_responses._patch import PatchInput
from dscodec.stream.events import (
    ContentDelta,
    Event,
    ReasoningDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

__all__ = [
    "APPLY_PATCH",
    "WRITER",
    "ResponsesEventWriter",
    "default_settings",
    "response_object",
    "usage_dict",
]

#: The one custom tool the reference supports (behavior.md#responses); its calls stream as ``custom_tool_call`` items.
APPLY_PATCH: Final = "apply_patch"

_REASONING, _MESSAGE, _FUNCTION, _CUSTOM, _SEARCH = range(5)

#: The function a client-executed tool search tool is to the model; its calls stream as ``tool_search_call`` items
#: (observed on the reference): announced with empty arguments, no deltas, done with the arguments as an object.
TOOL_SEARCH: Final = "tool_search"

#: Per item kind: the delta event's type and its JSON text up to the delta's string (keys in the reference's
#: order: ``type``, then the others alphabetically).
_DELTA_TYPES: Final[Mapping[int, str]] = {
    _REASONING: "response.reasoning_text.delta",
    _MESSAGE: "response.output_text.delta",
    _FUNCTION: "response.function_call_arguments.delta",
}
_DELTA_HEADS: Final[Mapping[int, str]] = {
    _REASONING: '{"type":"response.reasoning_text.delta","content_index":0,"delta":',
    _MESSAGE: '{"type":"response.output_text.delta","content_index":0,"delta":',
    _FUNCTION: '{"type":"response.function_call_arguments.delta","delta":',
}

#: Why a response ended incomplete, per backend finish (behavior.md#stream-lifecycle table).
_INCOMPLETE_REASONS: Final[Mapping[str, str]] = {
    "length": "max_output_tokens",
    "content_filter": "content_filter",
}

#: D6: the phase a message item is announced with, and keeps. The reference announces ``final_answer`` and
#: rewrites it to ``commentary`` in ``output_item.done`` when a tool call follows; streaming UIs act on the
#: added event, so dscodec never changes it. Holding the announcement until the next item is known would hold
#: every answer delta back, so the item keeps the phase it was announced with, also when a call follows it.
_MESSAGE_PHASE: Final = "final_answer"


def _arguments_object(text: str) -> dict[str, Any] | None:
    """A tool search call's arguments as the JSON object they spell, or None when the output cut them short
    (they spell no JSON object)."""
    try:
        value = loads(text)
    except JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _f32_text(value: Any) -> Any:
    """A sampling value as the reference writes it: the request stores it as a 32-bit float, and the response
    shows that float's shortest decimal (``0.3``, not ``0.30000001192092896``)."""
    if not isinstance(value, float) or value == 0:  # ±0 is its own shortest decimal (and one key to a cache)
        return value
    return _f32_shortest(value)


@functools.lru_cache(maxsize=256)
def _f32_shortest(value: float) -> float:
    """:func:`_f32_text` of a float, remembered: every response object of a stream shows the same two values."""
    packed = struct.pack("<f", value)
    for digits in range(1, 10):
        shortest = float(f"{value:.{digits}g}")
        if struct.pack("<f", shortest) == packed:
            return shortest
    return value


def default_settings() -> dict[str, Any]:
    """The request settings a response object echoes when the request set none (behavior.md#responses-events)."""
    return {
        "instructions": None,
        "max_output_tokens": None,
        "temperature": 1.0,
        "top_p": 1.0,
        "top_logprobs": 0,
        "user": None,
        "metadata": {},
        "tools": [],
        "tool_choice": "auto",
        "text": {"format": {"type": "text"}, "verbosity": None},
        "reasoning": {"effort": None, "summary": None},
        # Set by a server that stores responses (``echo_storage``); dscodec's converter stores nothing.
        "store": False,
        "previous_response_id": None,
    }


def response_object(
    *,
    response_id: str,
    model: str,
    created_at: int,
    settings: Mapping[str, Any],
    status: str,
    output: list[dict[str, Any]],
    completed_at: int | None = None,
    error: dict[str, Any] | None = None,
    incomplete_details: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The response object with every key of behavior.md#responses-events, in the reference's order.

    ``settings`` are the request's echoed settings (:func:`default_settings` keys), shared, not copied.
    """
    s = settings
    return {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": False,
        "completed_at": completed_at,
        "content_filters": None,
        "error": error,
        "frequency_penalty": 0.0,
        "incomplete_details": incomplete_details,
        "instructions": s["instructions"],
        "max_output_tokens": s["max_output_tokens"],
        "max_tool_calls": None,
        "model": model,
        "moderation": None,
        "output": output,
        "parallel_tool_calls": True,
        "presence_penalty": 0.0,
        "previous_response_id": s["previous_response_id"],
        "prompt_cache_key": None,
        "prompt_cache_retention": None,
        "reasoning": s["reasoning"],
        "safety_identifier": None,
        "service_tier": "default",
        "store": s["store"],
        "temperature": _f32_text(s["temperature"]),
        "text": s["text"],
        "tool_choice": s["tool_choice"],
        "tools": s["tools"],
        "top_logprobs": s["top_logprobs"],
        "top_p": _f32_text(s["top_p"]),
        "truncation": "disabled",
        "usage": usage,
        "user": s["user"],
        "metadata": s["metadata"],
    }


def usage_dict(outcome: Outcome) -> dict[str, Any]:
    """The Responses usage object (behavior.md#token-chunks-and-usage).

    ``cache_write_tokens`` is always 0 (D3: required by the openai SDK's types; the reference leaves it out), and
    ``reasoning_tokens`` is counted for every kind of backend chunk (D5), 0 when the request has no thinking stage.
    """
    prompt = outcome.prompt.prompt_tokens
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": outcome.prompt.cached_tokens, "cache_write_tokens": 0},
        "output_tokens": outcome.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": outcome.reasoning_tokens or 0},
        "total_tokens": prompt + outcome.completion_tokens,
    }


class _Item:
    """One output item while it streams."""

    __slots__ = (
        "call_id",
        "delta_head",
        "delta_logprobs",
        "delta_tail",
        "delta_type",
        "done",
        "id",
        "index",
        "input",
        "kind",
        "logprobs",
        "name",
        "namespace",
        "parts",
    )

    def __init__(self, kind: int, index: int, item_id: str) -> None:
        self.kind = kind
        self.index = index
        self.id = item_id
        # The JSON text of a delta event without logprobs (the per-token hot path), around its delta string and
        # before its sequence number: what ``orjson`` writes for the event's dict (custom tool calls have none).
        head = _DELTA_HEADS.get(kind)
        self.delta_type = _DELTA_TYPES.get(kind, "")
        self.delta_head = head
        self.delta_tail = ""
        self.delta_logprobs = ("", "")  # a message's delta with entries: around them, after the delta string
        if head is not None:
            item = f',"item_id":{orjson.dumps(item_id).decode()}'
            after = f',"output_index":{index},"sequence_number":'
            logprobs = ',"logprobs":[]' if kind == _MESSAGE else ""
            self.delta_tail = f"{item}{logprobs}{after}"
            self.delta_logprobs = (f'{item},"logprobs":', after)
        self.parts: list[str] = []  # text, arguments or input fragments
        # The JSON arrays of a message's entries, a delta's each: spliced into its done events at its end.
        self.logprobs: list[str] = []
        self.call_id = ""
        self.name = ""
        self.namespace: str | None = None
        self.input: PatchInput | None = None
        self.done: dict[str, Any] | None = None


class ResponsesEventWriter(EventWriter):
    """Writes Responses stream events; the SSE event name is the event's ``type`` and there is no done frame.

    Attributes:
        clock: unix time source for ``completed_at`` (the only clock a Responses stream reads).

    Examples:
        >>> import dscodec
        >>> request = dscodec.convert("responses", {"model": "DeepSeek-V4-Pro", "input": "Hi",
        ...     "reasoning": {"effort": "none"}})
        >>> writer = ResponsesEventWriter(request, response_id="resp_1", model="DeepSeek-V4-Pro", created=0)
        >>> events = writer.open(PromptUsage(5)) + writer.write([ContentDelta("Hello!")])
        >>> [(e.event, e.to_dict()["sequence_number"]) for e in events][-2:]
        [('response.content_part.added', 3), ('response.output_text.delta', 4)]
    """

    sse_done = ""

    def __init__(self, request: ConversationRequest, *, response_id: str, model: str, created: int) -> None:
        super().__init__(request, response_id=response_id, model=model, created=created)
        wire = request.wire if isinstance(request.wire, ResponsesWire) else ResponsesWire()
        settings = default_settings()
        if wire.echo:
            settings.update(wire.echo)
        self._settings = settings
        self._namespaces = wire.namespace_tool_map
        self._custom_tools = frozenset(
            APPLY_PATCH
            for tool in settings["tools"] or ()
            if isinstance(tool, Mapping) and tool.get("type") == "custom" and tool.get("name") == APPLY_PATCH
        )
        self._searches = any(
            isinstance(tool, Mapping)
            and tool.get("type") == "tool_search"
            and tool.get("execution") == "client"
            for tool in settings["tools"] or ()
        )
        self.clock: Callable[[], float] = time.time
        self._seq = 0
        self._items: list[_Item] = []
        self._open: _Item | None = None
        self._calls: dict[int, _Item] = {}
        self._ended = False
        #: The JSON arrays of the messages' entries; their dicts hold the index (see :meth:`_event`).
        self._entries: list[str] = []

    # -- the response object ------------------------------------------------------------------------------------

    def _response(
        self,
        status: str,
        *,
        completed_at: int | None = None,
        error: dict[str, Any] | None = None,
        incomplete: dict[str, Any] | None = None,
        usage: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return response_object(
            response_id=self.response_id,
            model=self.model,
            created_at=self.created,
            settings=self._settings,
            status=status,
            output=[item.done for item in self._items if item.done is not None],
            completed_at=completed_at,
            error=error,
            incomplete_details=incomplete,
            usage=usage,
        )

    def _lifecycle(self, kind: str, response: dict[str, Any]) -> WireEvent:
        seq = self._seq
        self._seq = seq + 1
        return self._event({"type": kind, "response": response, "sequence_number": seq}, kind)

    def _event(self, data: dict[str, Any], name: str) -> WireEvent:
        """The event of ``data``, which may hold a message's entries by their placeholder (an :class:`orjson.Fragment`
        of a raw NUL, a character orjson never writes raw; :meth:`_close_item`): written with them in place, their
        text as it was sent with the deltas. Such an event is made from its JSON text, its dict read back from it
        on first use, so the dicts with placeholders never leave the writer."""
        if not self._entries:
            return dict_event(data, event=name)
        text = dumps_json(data)
        if "\x00" in text:  # one pass, however many messages: "\x00k\x00" is the k-th message's entries
            pieces = text.split("\x00")
            entries = self._entries  # (``self`` kept out of a cell)
            pieces[1::2] = [entries[int(k)] for k in pieces[1::2]]
            text = "".join(pieces)
        return json_event(text, name)

    # -- EventWriter ------------------------------------------------------------------------------------------

    def open(self, usage: PromptUsage) -> list[WireEvent]:
        # Prompt usage is only reported with the final response (behavior.md#token-chunks-and-usage); the start shows usage null.
        return [
            self._lifecycle("response.created", self._response("in_progress")),
            self._lifecycle("response.in_progress", self._response("in_progress")),
        ]

    def write(self, events: Sequence[Event]) -> list[WireEvent]:
        if self._ended:
            return []
        out: list[WireEvent] = []
        for event in events:
            if type(event) is ToolCallDelta:  # the commonest event of a tool-call block: _arguments inline
                item = self._calls.get(event.index)
                arguments = event.arguments
                if item is None or item.kind != _FUNCTION or not arguments:
                    self._arguments(out, event)
                    continue
                item.parts.append(arguments)
                seq = self._seq
                self._seq = seq + 1
                out.append(
                    json_event(
                        f"{item.delta_head}{string_literal(arguments)}{item.delta_tail}{seq}}}",
                        item.delta_type,
                    )
                )
            elif isinstance(event, ContentDelta):
                self._text(out, event, _MESSAGE)
            elif isinstance(event, ToolCallDelta):
                self._arguments(out, event)
            elif isinstance(event, ReasoningDelta):
                self._text(out, event, _REASONING)
            elif isinstance(event, ToolCallStart):
                self._start_call(out, event)
            elif isinstance(event, ToolCallEnd):
                self._end_call(out, event)
            # ReasoningEnd / StopSequence: nothing to send; items close when the next one opens (reference).
        return out

    def text(self, reasoning: bool, text: str) -> list[WireEvent]:
        # The per-token hot path: a delta of the open reasoning or message item, as JSON text.
        item = self._open  # None once the response ended
        if item is None or item.kind != (_REASONING if reasoning else _MESSAGE):
            return self.write([ReasoningDelta(text) if reasoning else ContentDelta(text)])
        item.parts.append(text)
        return [self._delta(item, text)]

    def argument(
        self, index: int, arguments: str, raw: str | None = None, parameter: str | None = None
    ) -> list[WireEvent]:
        item = self._calls.get(index)
        if item is None or item.kind != _FUNCTION or not arguments or self._ended:
            return self.write([ToolCallDelta(index, arguments, raw, parameter)])
        item.parts.append(arguments)
        return [self._delta(item, arguments)]

    def argument_lane(self, index: int, parameter: str) -> Callable[[str, str], list[WireEvent]]:
        call = self._calls.get(index)
        if call is None or call.kind != _FUNCTION:  # a custom tool's input, a tool search's arguments
            return super().argument_lane(index, parameter)
        parts, head, tail, name = call.parts, call.delta_head, call.delta_tail, call.delta_type

        def lane(arguments: str, raw: str) -> list[WireEvent]:
            if self._ended:
                return []
            parts.append(arguments)
            seq = self._seq
            self._seq = seq + 1
            return [json_event(f"{head}{string_literal(arguments)}{tail}{seq}}}", name)]

        return lane

    def reasoning_lane(self, keep: Callable[[str], None]) -> Callable[[str, str], list[WireEvent]]:
        return self._text_lane(_REASONING, keep)

    def content_lane(self) -> Callable[[str, str], list[WireEvent]]:
        return self._text_lane(_MESSAGE, None)

    def _text_lane(
        self, kind: int, keep: Callable[[str], None] | None
    ) -> Callable[[str, str], list[WireEvent]]:
        """The lane of the reasoning (``kind``; each piece handed to ``keep`` first) or the message: :meth:`_delta`
        events of the open item, inline (this is the per-token path)."""
        text = self.text
        reasoning = kind == _REASONING

        def lane(piece: str, raw: str) -> list[WireEvent]:
            if keep is not None:
                keep(piece)
            item = self._open  # None once the response ended
            if item is None or item.kind != kind:
                return text(reasoning, piece)
            item.parts.append(piece)
            seq = self._seq
            self._seq = seq + 1
            return [
                json_event(
                    f"{item.delta_head}{string_literal(piece)}{item.delta_tail}{seq}}}", item.delta_type
                )
            ]

        return lane

    def _delta(self, item: _Item, delta: str) -> WireEvent:
        """The delta event of ``item`` (reasoning, message or function call) without logprobs: its JSON text
        around the escaped ``delta`` (the fields of :meth:`_text` and :meth:`_arguments`, in their order)."""
        seq = self._seq
        self._seq = seq + 1
        return json_event(
            f"{item.delta_head}{string_literal(delta)}{item.delta_tail}{seq}}}", item.delta_type
        )

    def close(self, outcome: Outcome) -> list[WireEvent]:
        if self._ended:
            return []
        self._ended = True
        reason = None if outcome.stop_sequence is not None else _INCOMPLETE_REASONS.get(outcome.finish or "")
        out: list[WireEvent] = []
        self._close_item(out, "completed" if reason is None else "incomplete")
        response = self._response(
            "completed" if reason is None else "incomplete",
            completed_at=self._now(),
            incomplete=None if reason is None else {"reason": reason},
            usage=usage_dict(outcome),
        )
        out.append(
            self._lifecycle("response.completed" if reason is None else "response.incomplete", response)
        )
        return out

    def error(self, exc: DscodecError) -> list[WireEvent]:
        """End the stream with ``response.failed``: the response object with ``status: failed`` and ``error``.

        Of the two error forms a Responses stream has, this is the one the openai SDK's stream state handles as
        the end of the response (like ``response.incomplete``: it rebuilds the output from the items), and the
        one that carries the whole response, so the failed response is also what accumulating the stream
        gives. The bare ``error`` event ends nothing and has no response, so it is not sent as well: a client
        would see the failure twice. ``error.code`` is one of the SDK's codes: ``server_error`` for a failure of
        the serving side (status ≥ 500), ``rate_limit_exceeded`` for a 429, else ``invalid_prompt``.
        """
        if self._ended:
            return []
        self._ended = True
        out: list[WireEvent] = []
        self._close_item(out, "incomplete")
        status = exc.status_code
        code = (
            "server_error" if status >= 500 else "rate_limit_exceeded" if status == 429 else "invalid_prompt"
        )
        response = self._response("failed", error={"code": code, "message": exc.message})
        out.append(self._lifecycle("response.failed", response))
        return out

    # -- items ------------------------------------------------------------------------------------------------

    def _now(self) -> int:
        return max(self.created, int(self.clock()))

    def _next(self) -> int:
        seq = self._seq
        self._seq = seq + 1
        return seq

    def _new_item(self, out: list[WireEvent], kind: int, prefix: str) -> _Item:
        self._close_item(out, "completed")
        index = len(self._items)
        item = _Item(kind, index, f"{prefix}_{self.response_id}_{index}")
        self._items.append(item)
        self._open = item
        return item

    def _text(self, out: list[WireEvent], event: ContentDelta | ReasoningDelta, kind: int) -> None:
        item = self._open
        if item is None or item.kind != kind:
            item = self._open_text_item(out, kind)
        item.parts.append(event.text)
        if not event.logprobs:
            out.append(self._delta(item, event.text))
            return
        if kind == _MESSAGE:
            # The delta's JSON text, its entries written from remembered pieces (the per-token path).
            before, after = item.delta_logprobs
            entries = logprob_entries_json(event.logprobs)
            item.logprobs.append(entries)
            seq = self._next()
            out.append(
                json_event(
                    f"{item.delta_head}{string_literal(event.text)}{before}{entries}{after}{seq}}}",
                    item.delta_type,
                )
            )
            return
        # Reasoning deltas have no logprobs field in the Responses shape; their entries are dropped (behavior.md#token-chunks-and-usage).
        data = {
            "type": "response.reasoning_text.delta",
            "content_index": 0,
            "delta": event.text,
            "item_id": item.id,
            "output_index": item.index,
            "sequence_number": self._next(),
        }
        out.append(dict_event(data, event=data["type"]))

    def _open_text_item(self, out: list[WireEvent], kind: int) -> _Item:
        if kind == _MESSAGE:
            item = self._new_item(out, kind, "msg")
            added: dict[str, Any] = {
                "type": "message",
                "id": item.id,
                "status": "in_progress",
                "role": "assistant",
                "phase": _MESSAGE_PHASE,
                "content": [],
            }
            part: dict[str, Any] = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        else:
            item = self._new_item(out, kind, "rs")
            added = {
                "type": "reasoning",
                "id": item.id,
                "status": "in_progress",
                "content": [],
                "summary": [],
                "encrypted_content": f"{self.response_id}-{item.index}",
            }
            part = {"type": "reasoning_text", "text": ""}
        self._item_added(out, item, added)
        data = {
            "type": "response.content_part.added",
            "content_index": 0,
            "item_id": item.id,
            "output_index": item.index,
            "part": part,
            "sequence_number": self._next(),
        }
        out.append(dict_event(data, event="response.content_part.added"))
        return item

    def _item_added(self, out: list[WireEvent], item: _Item, added: dict[str, Any]) -> None:
        data = {
            "type": "response.output_item.added",
            "item": added,
            "output_index": item.index,
            "sequence_number": self._next(),
        }
        out.append(dict_event(data, event="response.output_item.added"))

    def _start_call(self, out: list[WireEvent], event: ToolCallStart) -> None:
        if self._searches and event.name == TOOL_SEARCH:
            item = self._new_item(out, _SEARCH, "tsc")
            item.call_id = event.call_id
            self._calls[event.index] = item
            announced: dict[str, Any] = {
                "type": "tool_search_call",
                "id": item.id,
                "status": "in_progress",
                "call_id": item.call_id,
                "execution": "client",
                "arguments": {},
            }
            self._item_added(out, item, announced)
            return
        custom = event.name in self._custom_tools
        item = self._new_item(out, _CUSTOM if custom else _FUNCTION, "ctc" if custom else "fc")
        item.call_id = event.call_id
        item.name = event.name
        self._calls[event.index] = item
        added: dict[str, Any]
        if custom:
            item.input = PatchInput()
            added = {
                "type": "custom_tool_call",
                "id": item.id,
                "status": "in_progress",
                "call_id": item.call_id,
                "name": item.name,
                "input": "",
            }
        else:
            added = {"type": "function_call", "id": item.id, "status": "in_progress", "call_id": item.call_id}
            # Namespaced tools are rendered to the model as one joined name (behavior.md#responses); the client declared
            # them as name + namespace, so that is how the call goes back. Unknown names pass through as written.
            qualified = self._namespaces.get(event.name)
            if qualified is None:
                added["name"] = event.name
            else:
                item.namespace, item.name = qualified
                added["name"] = item.name
                added["namespace"] = item.namespace
            added["arguments"] = ""
        self._item_added(out, item, added)

    def _arguments(self, out: list[WireEvent], event: ToolCallDelta) -> None:
        item = self._calls.get(event.index)
        if item is None or not event.arguments:
            return
        if item.kind == _FUNCTION:
            item.parts.append(event.arguments)
            out.append(self._delta(item, event.arguments))
        elif item.input is not None:
            self._input(out, item, item.input.feed(event.arguments))
        else:  # a tool search's arguments: sent whole, when the item is done
            item.parts.append(event.arguments)

    def _input(self, out: list[WireEvent], item: _Item, text: str) -> None:
        if not text:
            return
        item.parts.append(text)
        data = {
            "type": "response.custom_tool_call_input.delta",
            "delta": text,
            "item_id": item.id,
            "output_index": item.index,
            "sequence_number": self._next(),
        }
        out.append(dict_event(data, event="response.custom_tool_call_input.delta"))

    def _end_call(self, out: list[WireEvent], event: ToolCallEnd) -> None:
        # The call's done events wait until the next item opens or the response ends (reference), so that a
        # call cut short by the length limit is done with status ``incomplete``.
        item = self._calls.get(event.index)
        if item is not None and item.input is not None:
            self._input(out, item, item.input.flush())

    def _close_item(self, out: list[WireEvent], status: str) -> None:
        """The done events of the open item, if any; ``status`` is the item's final status."""
        item = self._open
        if item is None:
            return
        self._open = None
        if item.input is not None:
            self._input(out, item, item.input.flush())
        kind = item.kind
        index = item.index
        text = "".join(item.parts)
        if kind == _MESSAGE or kind == _REASONING:
            if kind == _MESSAGE:
                # The entries sent with the deltas, written once more in each of the four events below: by a
                # placeholder, in place of a list of dicts that would be read back from their text and written again.
                logprobs: Any = []
                if item.logprobs:
                    logprobs = orjson.Fragment(f"\x00{len(self._entries)}\x00")
                    self._entries.append(f"[{','.join(a[1:-1] for a in item.logprobs if len(a) > 2)}]")
                part: dict[str, Any] = {
                    "type": "output_text",
                    "annotations": [],
                    "logprobs": logprobs,
                    "text": text,
                }
                text_done: dict[str, Any] = {
                    "type": "response.output_text.done",
                    "content_index": 0,
                    "item_id": item.id,
                    "logprobs": logprobs,
                    "output_index": index,
                    "sequence_number": self._next(),
                    "text": text,
                }
                done: dict[str, Any] = {
                    "type": "message",
                    "id": item.id,
                    "status": status,
                    "role": "assistant",
                    "phase": _MESSAGE_PHASE,  # D6: as announced
                    "content": [part],
                }
            else:
                part = {"type": "reasoning_text", "text": text}
                text_done = {
                    "type": "response.reasoning_text.done",
                    "content_index": 0,
                    "item_id": item.id,
                    "output_index": index,
                    "sequence_number": self._next(),
                    "text": text,
                }
                done = {
                    "type": "reasoning",
                    "id": item.id,
                    "status": status,
                    "content": [part],
                    "summary": [],
                    "encrypted_content": f"{self.response_id}-{index}",
                }
            out.append(self._event(text_done, text_done["type"]))
            part_done = {
                "type": "response.content_part.done",
                "content_index": 0,
                "item_id": item.id,
                "output_index": index,
                "part": part,
                "sequence_number": self._next(),
            }
            out.append(self._event(part_done, "response.content_part.done"))
        elif kind == _SEARCH:
            # A call the output cut short keeps the empty arguments it was announced with, and is incomplete even
            # when the response is not: its arguments spell no JSON object (reference).
            arguments = _arguments_object(text) if status == "completed" else None
            done = {
                "type": "tool_search_call",
                "id": item.id,
                "status": status if arguments is not None else "incomplete",
                "call_id": item.call_id,
                "execution": "client",
                "arguments": arguments if arguments is not None else {},
            }
        elif kind == _FUNCTION:
            args_done = {
                "type": "response.function_call_arguments.done",
                "arguments": text,
                "item_id": item.id,
                "output_index": index,
                "sequence_number": self._next(),
            }
            out.append(dict_event(args_done, event="response.function_call_arguments.done"))
            done = {"type": "function_call", "id": item.id, "status": status, "call_id": item.call_id}
            done["name"] = item.name
            if item.namespace is not None:
                done["namespace"] = item.namespace
            done["arguments"] = text
        else:
            input_done = {
                "type": "response.custom_tool_call_input.done",
                "input": text,
                "item_id": item.id,
                "output_index": index,
                "sequence_number": self._next(),
            }
            out.append(dict_event(input_done, event="response.custom_tool_call_input.done"))
            done = {
                "type": "custom_tool_call",
                "id": item.id,
                "status": status,
                "call_id": item.call_id,
                "name": item.name,
                "input": text,
            }
        item.done = done
        data = {
            "type": "response.output_item.done",
            "item": done,
            "output_index": index,
            "sequence_number": self._next(),
        }
        out.append(self._event(data, "response.output_item.done"))


#: This protocol's stream writer, for the protocol table.
WRITER = ResponsesEventWriter
