"""The check every accumulator makes of the complete response it built from event dicts: JSON values only, and
the fields a client reads of the types its protocol gives them.

Event dicts may come from outside (a recorded stream parsed by the caller), and an accumulator copies ids,
names, reasons, usage and log probabilities as it finds them. A response built from a damaged or foreign
recording must not look like a good one, nor hold what cannot be written as JSON: it is refused with a
:class:`~dscodec.errors.ModelOutputError` naming the field. An event of another protocol's stream is refused
as the accumulator meets it (:func:`foreign_event`), before it could be passed over as an unknown kind.

A shape is a dict of field shapes (other keys are only checked to be JSON), a one-item list (each item of an
array has that shape), or a tuple of the types a value may have (:data:`STR`, :data:`INT`, ...; ``None`` in it
allows null). Fields may be absent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dscodec.errors import ModelOutputError, shown

__all__ = [
    "INT",
    "INT_OR_NONE",
    "LOGPROB_ENTRY",
    "NUMBER",
    "STR",
    "STR_OR_NONE",
    "check_response",
    "foreign_event",
]

#: The most arrays and objects a complete response may nest (the response included): as deep as orjson writes.
#: dscodec's own answers stay below it (a Messages tool input nested to the value limit is about 130 levels).
RESPONSE_DEPTH = 254

_NONE = type(None)
STR: tuple[type, ...] = (str,)
STR_OR_NONE: tuple[type, ...] = (str, _NONE)
INT: tuple[type, ...] = (int,)
INT_OR_NONE: tuple[type, ...] = (int, _NONE)
NUMBER: tuple[type, ...] = (int, float)
_TOP_LOGPROB: dict[str, Any] = {"token": STR, "logprob": NUMBER, "bytes": [INT]}
#: A log probability entry in the OpenAI shape (Chat Completions and Responses).
LOGPROB_ENTRY: dict[str, Any] = {**_TOP_LOGPROB, "top_logprobs": [_TOP_LOGPROB]}
_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    _NONE: "null",
    dict: "an object",
    list: "an array",
}


#: The event types of an Anthropic Messages stream.
_MESSAGES_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
        "error",
    }
)


def foreign_event(stream: str, index: int, event: Mapping[str, Any]) -> ModelOutputError:
    """The error for event ``index`` of a recording given as a ``stream`` (``"a Chat Completions"``...) that is no
    event of that stream, naming the stream it looks like it came from."""
    kind = event.get("type")
    if "choices" in event or event.get("object") == "chat.completion.chunk":
        origin = "it looks like a Chat Completions chunk"
    elif type(kind) is str and kind.startswith("response."):
        origin = f"its type {shown(kind)} is an OpenAI Responses event"
    elif type(kind) is str and kind in _MESSAGES_EVENTS:
        origin = f"its type {shown(kind)} is an Anthropic Messages event"
    elif "type" in event:
        origin = f"its type is {shown(kind)}"
    else:
        origin = "it has no type"
    return ModelOutputError(f"stream event {index} is not {stream} stream event ({origin})")


def _kind(value: Any) -> str:
    return _NAMES.get(type(value), type(value).__name__)


def _path(node: Any) -> str:
    """The path a node of :func:`check_response` stands at: ``response.choices[0].message``."""
    parts: list[str] = []
    while node is not None:
        node, key = node
        parts.append(f"[{key}]" if type(key) is int else f".{key}")
    path = "response" + "".join(reversed(parts))
    return path if len(path) <= 200 else path[:200] + "…"


#: Marks, on :func:`check_response`'s stack, the end of a container's children.
_LEAVE = object()


def check_response(value: Any, shape: Any, protocol: str) -> None:
    """Refuse ``value`` (the complete response) unless it is JSON and fits ``shape``.

    Iterative and linear: a container met again (a shared object) is not walked again for the same shape, one
    that holds itself is refused, and a path is only spelled out for the message.

    Raises:
        ModelOutputError: a value JSON has none for (a set, NaN, a key that is no string, an object that holds
            itself), nesting deeper than :data:`RESPONSE_DEPTH`, or a field of a type the protocol never gives it.
    """
    lead = f"the events are not a {protocol} stream:"
    stack: list[Any] = [(value, shape, None, 0)]
    inside: set[int] = set()  # the containers on the path to the current one
    walked: set[tuple[int, int]] = set()
    while stack:
        entry = stack.pop()
        if entry[0] is _LEAVE:
            inside.discard(entry[1])
            continue
        item, want, node, depth = entry
        # bool is an int to Python, never to JSON readers: a flag where a count or an id belongs is refused.
        if type(want) is tuple and (not isinstance(item, want) or isinstance(item, bool)):
            expected = " or ".join(_NAMES.get(t, t.__name__) for t in want)
            raise ModelOutputError(f"{lead} {_path(node)} is {_kind(item)}, not {expected}")
        if isinstance(item, (dict, list, tuple)):
            if isinstance(item, dict):
                if want is not None and type(want) is list:
                    raise ModelOutputError(f"{lead} {_path(node)} is an object, not an array")
            elif type(want) is dict:
                raise ModelOutputError(f"{lead} {_path(node)} is an array, not an object")
            depth += 1
            if depth > RESPONSE_DEPTH:
                raise ModelOutputError(
                    f"{lead} {_path(node)} nests deeper than {RESPONSE_DEPTH} arrays and objects, which orjson "
                    "cannot write"
                )
            here = id(item)
            if here in inside:
                raise ModelOutputError(f"{lead} {_path(node)} holds itself, which JSON cannot")
            if (here, id(want)) in walked:
                continue
            walked.add((here, id(want)))
            inside.add(here)
            stack.append((_LEAVE, here))
            if isinstance(item, dict):
                fields = want if type(want) is dict else {}
                for key, child in item.items():
                    if type(key) is not str:
                        raise ModelOutputError(f"{lead} {_path(node)} has a key that is no string")
                    stack.append((child, fields.get(key), (node, key), depth))
            else:
                each = want[0] if type(want) is list else None
                stack.extend((child, each, (node, k), depth) for k, child in enumerate(item))
        elif type(want) is dict or type(want) is list:
            if item is not None:
                expected = "an object" if type(want) is dict else "an array"
                raise ModelOutputError(f"{lead} {_path(node)} is {_kind(item)}, not {expected}")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ModelOutputError(f"{lead} {_path(node)} is not a finite number")
        elif item is not None and not isinstance(item, (str, int)):
            raise ModelOutputError(
                f"{lead} {_path(node)} is a {type(item).__name__}, which JSON has no value for"
            )
