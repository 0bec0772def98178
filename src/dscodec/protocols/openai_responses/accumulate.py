"""Responses stream events -> the complete response object (behavior.md#accumulation).

Works on event dicts, ours or parsed from a recorded wire transcript (anything malformed is skipped, never
raised on). The result is:

* the response of the last ``response.completed`` / ``response.incomplete`` / ``response.failed`` event;
* otherwise the last lifecycle response seen (``response.created`` / ``in_progress``) with its output rebuilt
  from the item events: finished items as their ``output_item.done`` said, open ones from their added event plus
  the deltas so far (the reference's accumulator does the same); after an ``error`` event its status is
  ``failed`` and ``error`` holds the event's code and message;
* with no lifecycle event at all, an in-progress skeleton (reference: the accumulator's constructor values).

The result is a fresh object: changing it does not change the events. The cost is linear in the size of the
stream: text and argument deltas are collected per field and joined once, at the end.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from dscodec.errors import ModelOutputError
from dscodec.protocols._shape import (
    INT,
    LOGPROB_ENTRY,
    NUMBER,
    RESPONSE_DEPTH,
    STR,
    STR_OR_NONE,
    foreign_event,
)
from dscodec.protocols.openai_responses.outbound import default_settings, response_object

__all__ = ["RESPONSE_SHAPE", "accumulate_events"]

#: The types of the complete response's fields a client reads (dscodec.protocols._shape), checked when it was
#: built from event dicts from outside.
RESPONSE_SHAPE = {
    "id": STR,
    "object": STR,
    "created_at": NUMBER,
    "status": STR,
    "model": STR,
    "output": [
        {
            "type": STR,
            "id": STR,
            "status": STR,
            "role": STR,
            "call_id": STR,
            "name": STR,
            "content": [{"type": STR, "text": STR, "logprobs": [LOGPROB_ENTRY]}],
            "summary": [{"type": STR, "text": STR}],
        }
    ],
    "usage": {
        "input_tokens": INT,
        "output_tokens": INT,
        "total_tokens": INT,
        "input_tokens_details": {"cached_tokens": INT},
        "output_tokens_details": {"reasoning_tokens": INT},
    },
    "error": {"code": STR_OR_NONE, "message": STR},
    "incomplete_details": {"reason": STR_OR_NONE},
}

_FINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_START = frozenset({"response.created", "response.queued", "response.in_progress"})


def accumulate_events(
    events: Iterable[Mapping[str, Any]],
    *,
    response_id: str | None = None,
    model: str | None = None,
    created: int | None = None,
) -> dict[str, Any]:
    """The complete response the events add up to.

    Args:
        events: Responses stream events as dicts, in stream order.
        response_id: the id of the skeleton returned when the events hold no response object.
        model: the model of that skeleton.
        created: the ``created_at`` of that skeleton.

    Examples:
        >>> events = [
        ...     {"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}},
        ...     {"type": "response.output_item.added", "output_index": 0,
        ...      "item": {"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": ""}},
        ...     {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{}"},
        ... ]
        >>> accumulate_events(events)["output"][0]["arguments"]
        '{}'
    """
    final: Mapping[str, Any] | None = None
    start: Mapping[str, Any] | None = None
    # The items as announced, copied when a delta first changes one (a stream that ends with its response needs
    # none of them).
    added: dict[int, Mapping[str, Any]] = {}
    owned: dict[int, dict[str, Any]] = {}
    done: dict[int, Mapping[str, Any]] = {}
    failure: Mapping[str, Any] | None = None
    texts = _Texts()
    for position, event in enumerate(events):
        if not isinstance(event, Mapping):
            continue
        kind = event.get("type")
        if type(kind) is not str or not (kind.startswith("response.") or kind == "error"):
            raise foreign_event("an OpenAI Responses", position, event)
        index = event.get("output_index")
        if kind in _FINAL:
            response = event.get("response")
            if isinstance(response, Mapping):
                final = response
        elif kind in _START:
            response = event.get("response")
            if isinstance(response, Mapping):
                start = response
        elif kind == "error":
            failure = event
        elif not isinstance(index, int):
            continue
        elif kind == "response.output_item.added":
            item = event.get("item")
            if isinstance(item, Mapping):
                added[index] = item
                owned.pop(index, None)
        elif kind == "response.output_item.done":
            item = event.get("item")
            if isinstance(item, Mapping):
                done[index] = item
        elif index in added:
            item = owned.get(index)
            if item is None:
                item = owned[index] = _copied(added[index])
            _apply(item, kind, event, texts)
    if final is not None:
        return _copied(final)
    texts.join()
    result = _copied(start) if start is not None else _skeleton(response_id, model, created)
    result["output"] = [_output_item(i, added, owned, done) for i in sorted(added.keys() | done.keys())]
    if failure is not None:
        code = failure.get("code")
        result["status"] = "failed"
        result["error"] = {
            "code": code if isinstance(code, str) else "server_error",
            "message": str(failure.get("message") or ""),
        }
    return result


class _Texts:
    """The string fields that deltas grow, each kept as a list of pieces until :meth:`join` writes it back.

    A field is keyed by the identity of the dict holding it (a content part or an item); the dict itself is kept
    too, so its id cannot be reused while the table lives. A part replaced in its item (a second
    ``content_part.added`` at the same index) keeps its own pieces and is simply no longer in the output.
    """

    __slots__ = ("_fields",)

    def __init__(self) -> None:
        self._fields: dict[tuple[int, str], tuple[dict[str, Any], list[str]]] = {}

    def append(self, holder: dict[str, Any], field: str, delta: str) -> None:
        """Add ``delta`` to ``holder[field]``."""
        entry = self._fields.get((id(holder), field))
        if entry is None:
            # The field gets its key (and so its place in the key order) at the first delta, with the value
            # it had, as a string; a missing or empty one starts from "".
            initial = holder[field] = str(holder.get(field) or "")
            entry = self._fields[(id(holder), field)] = (holder, [initial])
        entry[1].append(delta)

    def join(self) -> None:
        """Write every grown field back as one string."""
        for (_, field), (holder, pieces) in self._fields.items():
            holder[field] = "".join(pieces)
        self._fields.clear()


def _apply(item: dict[str, Any], kind: Any, event: Mapping[str, Any], texts: _Texts) -> None:
    """Add a content or argument event to an open item (the item as ``output_item.added`` announced it)."""
    delta = event.get("delta")
    if kind == "response.content_part.added":
        part = event.get("part")
        if isinstance(part, Mapping):
            _part(item, event, _copied(part))
    elif kind in ("response.output_text.delta", "response.reasoning_text.delta") and isinstance(delta, str):
        text_kind = "output_text" if kind == "response.output_text.delta" else "reasoning_text"
        part = _part(item, event, None)
        if part is None:
            part = _part(item, event, _empty_part(text_kind))
        if part is not None:
            texts.append(part, "text", delta)
            logprobs = event.get("logprobs")
            if logprobs and text_kind == "output_text":
                part.setdefault("logprobs", []).extend(_copied_value(list(logprobs), 0))
    elif kind == "response.function_call_arguments.delta" and isinstance(delta, str):
        texts.append(item, "arguments", delta)
    elif kind == "response.custom_tool_call_input.delta" and isinstance(delta, str):
        texts.append(item, "input", delta)


def _output_item(
    index: int,
    added: dict[int, Mapping[str, Any]],
    owned: dict[int, dict[str, Any]],
    done: dict[int, Mapping[str, Any]],
) -> dict[str, Any]:
    """The output item at ``index``: as its ``output_item.done`` said, else as announced plus its deltas."""
    if index in done:
        return _copied(done[index])
    item = owned.get(index)
    return _copied(added[index]) if item is None else item


def _copied(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A fresh dict of ``mapping``, every JSON value in it copied (a quicker ``copy.deepcopy(dict(mapping))``).

    Raises:
        ModelOutputError: arrays and objects nested deeper than a response may nest (``RESPONSE_DEPTH``).
    """
    return {key: _copied_value(value, 1) for key, value in mapping.items()}


def _copied_value(value: Any, depth: int) -> Any:
    cls = value.__class__
    if cls is str or cls is int or cls is float or cls is bool or value is None:
        return value
    if cls is dict or cls is list:
        if depth >= RESPONSE_DEPTH:
            raise ModelOutputError(
                f"the events are not a responses stream: a field nests deeper than {RESPONSE_DEPTH} arrays and "
                "objects, which orjson cannot write"
            )
        if cls is dict:
            return {key: _copied_value(item, depth + 1) for key, item in value.items()}
        return [_copied_value(item, depth + 1) for item in value]
    return copy.deepcopy(value)


def _empty_part(kind: str) -> dict[str, Any]:
    if kind == "output_text":
        return {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    return {"type": "reasoning_text", "text": ""}


def _part(
    item: dict[str, Any], event: Mapping[str, Any], new: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The content part ``event`` names; ``new`` is stored there first when given."""
    content = item.get("content")
    if not isinstance(content, list):
        if new is None:
            return None
        content = item["content"] = []
    index = event.get("content_index", 0)
    if not isinstance(index, int) or index < 0:
        return None
    if new is not None:
        if index < len(content):
            content[index] = new
        elif index == len(content):
            content.append(new)
        else:
            return None
        return new
    part = content[index] if index < len(content) else None
    return part if isinstance(part, dict) else None


def _skeleton(response_id: str | None, model: str | None, created: int | None) -> dict[str, Any]:
    """An in-progress response object with no output, for a stream that never started."""
    return response_object(
        response_id=response_id or "",
        model=model or "",
        created_at=created or 0,
        settings=default_settings(),
        status="in_progress",
        output=[],
    )
