"""Anthropic Messages stream events -> the complete ``message`` object (behavior.md#accumulation).

Works on event dicts, ours or parsed from a recorded wire transcript.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dscodec._json import JSONDecodeError, loads
from dscodec.protocols._shape import INT, INT_OR_NONE, STR, STR_OR_NONE, foreign_event

__all__ = ["RESPONSE_SHAPE", "accumulate_events"]

#: The types of the complete message's fields (dscodec.protocols._shape), checked when it was built from event
#: dicts from outside.
RESPONSE_SHAPE = {
    "id": STR,
    "type": STR,
    "role": STR,
    "model": STR,
    "content": [
        {
            "type": STR,
            "text": STR,
            "thinking": STR,
            "signature": STR,
            "id": STR,
            "name": STR,
            "input": (dict,),
        }
    ],
    "stop_reason": STR_OR_NONE,
    "stop_sequence": STR_OR_NONE,
    "usage": {
        "input_tokens": INT,
        "output_tokens": INT,
        "cache_creation_input_tokens": INT_OR_NONE,
        "cache_read_input_tokens": INT_OR_NONE,
        "service_tier": STR_OR_NONE,
    },
}


def _tool_input(arguments: str) -> dict[str, Any]:
    """The parsed arguments object; ``{}`` when they are not (yet) a JSON object, as the reference does."""
    try:
        value = loads(arguments)
    except JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def accumulate_events(
    events: Iterable[Mapping[str, Any]], *, response_id: str = "", model: str = ""
) -> dict[str, Any]:
    """The complete message the stream events add up to.

    Blocks come out in index order: thinking ``{"type","thinking","signature"}``, text ``{"type","text"}``,
    tool_use ``{"type","id","name","input"}`` where ``input`` is the parsed arguments object (``{}`` when the
    streamed JSON is invalid or unfinished, as in the reference). The stop reason, stop sequence and usage come
    from ``message_delta`` (its non-null usage fields update those of ``message_start``). An ``error`` event
    makes the result that error body. Deltas for a block that was never started are ignored.

    Args:
        events: the stream's events as dicts, in order.
        response_id: the id when the events hold no ``message_start`` (an empty stream).
        model: the model when the events hold no ``message_start``.

    Examples:
        >>> events = [
        ...     {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
        ...      "model": "M", "content": [], "stop_reason": None, "stop_sequence": None,
        ...      "usage": {"input_tokens": 3, "output_tokens": 0}}},
        ...     {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "call_1",
        ...      "name": "f", "input": {}}},
        ...     {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
        ...      "partial_json": '{"a": 1}'}},
        ...     {"type": "content_block_stop", "index": 0},
        ...     {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        ...      "usage": {"output_tokens": 5}},
        ...     {"type": "message_stop"},
        ... ]
        >>> message = accumulate_events(events)
        >>> message["content"], message["stop_reason"], message["usage"]
        ([{'type': 'tool_use', 'id': 'call_1', 'name': 'f', 'input': {'a': 1}}], 'tool_use', {'input_tokens': 3, 'output_tokens': 5})
    """
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    # Per block index: the pieces of its text, thinking, signature or JSON input, joined once at the end.
    pieces: dict[int, dict[str, list[str]]] = {}
    for position, event in enumerate(events):
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            index = event.get("index")
            parts = pieces.get(index) if isinstance(index, int) else None
            if parts is None:
                continue
            dtype = delta.get("type")
            if dtype == "text_delta":
                parts["text"].append(delta.get("text") or "")
            elif dtype == "thinking_delta":
                parts["thinking"].append(delta.get("thinking") or "")
            elif dtype == "input_json_delta":
                parts["input"].append(delta.get("partial_json") or "")
            elif dtype == "signature_delta":
                parts["signature"].append(delta.get("signature") or "")
        elif kind == "content_block_start":
            index = event.get("index")
            if not isinstance(index, int) or index in blocks:
                continue
            block = dict(event.get("content_block") or {})
            blocks[index] = block
            start: dict[str, list[str]] = {"text": [], "thinking": [], "signature": [], "input": []}
            for field in ("text", "thinking", "signature"):
                if isinstance(block.get(field), str) and block[field]:
                    start[field].append(block[field])
            pieces[index] = start
        elif kind == "message_start":
            start_message = event.get("message") or {}
            message = {key: value for key, value in start_message.items() if key != "content"}
            message["usage"] = dict(start_message.get("usage") or {})
        elif kind == "message_delta":
            if message is None:
                message = _empty(response_id, model)
            delta = event.get("delta") or {}
            for field in ("stop_reason", "stop_sequence"):
                if field in delta:
                    message[field] = delta[field]
            usage = event.get("usage") or {}
            message["usage"].update({k: v for k, v in usage.items() if v is not None})
        elif kind == "error":
            return dict(event)
        elif type(kind) is not str or kind.startswith("response.") or "choices" in event:
            # (an unknown type of Messages event is passed over: the stream may grow new ones)
            raise foreign_event("an Anthropic Messages", position, event)

    if message is None:
        message = _empty(response_id, model)
    content = []
    for index in sorted(blocks):
        block, parts = blocks[index], pieces[index]
        btype = block.get("type")
        if btype == "text":
            block["text"] = "".join(parts["text"])
        elif btype == "thinking":
            block["thinking"] = "".join(parts["thinking"])
            block["signature"] = "".join(parts["signature"])
        elif btype == "tool_use" and parts["input"]:
            block["input"] = _tool_input("".join(parts["input"]))
        content.append(block)
    # Key order as the reference's message: content comes right after model.
    result: dict[str, Any] = {}
    for key, value in message.items():
        result[key] = value
        if key == "model":
            result["content"] = content
    result.setdefault("content", content)
    return result


def _empty(response_id: str, model: str) -> dict[str, Any]:
    """The message of a stream without ``message_start``: no content, zero usage (behavior.md#accumulation)."""
    return {
        "id": response_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 0,
            "service_tier": "standard",
        },
    }
