"""Strict validation against the official SDKs' pydantic types (``openai``, ``anthropic``), when installed.

The SDKs build their objects without validating them, so a field of the wrong type or a missing required field
reaches a client unnoticed until its code touches it. Validating every event's JSON in pydantic's strict mode
catches both. Unknown fields pass (the SDK types allow extra fields, such as DeepSeek's ``reasoning_content``).
Error bodies and error events are left to the error-shape rule (GEN007); ``ping`` has no SDK type.
"""

from __future__ import annotations

import functools
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from dscodec.errors import shown
from dscodec.testing.lint._base import Report

__all__ = ["sdk_available", "validate_body", "validate_event"]

Model = type[BaseModel]


@functools.cache
def _openai() -> dict[str, Any] | None:
    try:
        from openai.types.chat import ChatCompletion, ChatCompletionChunk
        from openai.types.responses import Response, ResponseStreamEvent
    except ImportError:
        return None
    return {
        "chunk": ChatCompletionChunk,
        "completion": ChatCompletion,
        "response": Response,
        "events": _by_type(ResponseStreamEvent),
    }


@functools.cache
def _anthropic() -> dict[str, Any] | None:
    try:
        from anthropic.types import Message, RawMessageStreamEvent
    except ImportError:
        return None
    return {"message": Message, "events": _by_type(RawMessageStreamEvent)}


def _by_type(union: Any) -> dict[str, Model]:
    """The members of an SDK's event union, by the literal value of their ``type`` field."""
    members = typing.get_args(union)
    if members and typing.get_origin(members[0]) is typing.Union:  # Annotated[Union[...], ...]
        members = typing.get_args(members[0])
    table: dict[str, Model] = {}
    for member in members:
        field = getattr(member, "model_fields", {}).get("type")
        if field is None:
            continue
        for literal in typing.get_args(field.annotation):
            table[literal] = member
    return table


def sdk_available(protocol: str) -> bool:
    """Whether the official SDK of ``protocol`` is importable (``anthropic`` for Messages, else ``openai``).

    Raises:
        ValueError: ``protocol`` is none of the three.
    """
    if protocol not in ("chat_completions", "responses", "messages"):
        raise ValueError(
            f"unknown protocol {shown(protocol)}; expected chat_completions, responses or messages"
        )
    return (_anthropic() if protocol == "messages" else _openai()) is not None


def _validate(report: Report, model: Model, text: str, index: int | None, what: str) -> None:
    try:
        model.model_validate_json(text, strict=True)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        location = ".".join(str(part) for part in first["loc"])
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        report.add("GEN006", f"not a valid {what}: {location}: {first['msg']}{more}", index, location)


def validate_event(report: Report, protocol: str, event_type: Any, text: str, index: int) -> None:
    """Validate one stream event's JSON text against the SDK type of its ``type`` (Chat: the chunk type)."""
    if protocol == "chat_completions":
        sdk = _openai()
        if sdk is not None:
            _validate(report, sdk["chunk"], text, index, "ChatCompletionChunk")
        return
    sdk = _anthropic() if protocol == "messages" else _openai()
    if sdk is None or event_type in ("error", "ping"):
        return
    if not isinstance(event_type, str):
        report.add("GEN006", f"the event's type {event_type!r} is not a string", index, "type")
        return
    model = sdk["events"].get(event_type)
    if model is None:
        report.add("GEN006", f"the SDK has no event type {event_type!r}", index, "type")
        return
    _validate(report, model, text, index, model.__name__)


def validate_body(report: Report, protocol: str, text: str) -> None:
    """Validate a complete (non-streamed, non-error) response body's JSON text."""
    if protocol == "messages":
        anthropic_sdk = _anthropic()
        if anthropic_sdk is not None:
            _validate(report, anthropic_sdk["message"], text, None, "Message")
        return
    sdk = _openai()
    if sdk is not None:
        model = sdk["completion"] if protocol == "chat_completions" else sdk["response"]
        _validate(report, model, text, None, model.__name__)
