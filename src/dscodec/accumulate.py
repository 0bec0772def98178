"""Stream events -> the complete response a non-streaming request gets (behavior.md#accumulation)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dscodec.conversation import Protocol
from dscodec.protocols._wire import WireEvent

__all__ = ["accumulate"]

EventLike = WireEvent | Mapping[str, Any]


def accumulate(
    protocol: Protocol,
    events: Iterable[EventLike],
    *,
    response_id: str | None = None,
    model: str | None = None,
    created: int | None = None,
) -> dict[str, Any]:
    """The complete response that ``events`` add up to.

    Args:
        protocol: ``"chat_completions"``, ``"responses"`` or ``"messages"``.
        events: :class:`~dscodec.StreamProcessor` events, or plain dicts parsed from a recorded stream.
        response_id: Chat Completions: the id of the result instead of the chunks' one; Responses: the id of
            the in-progress object returned when the events hold no response yet.
        model: the same for the model name.
        created: the same for the creation time.
    """
    dicts = [e.to_dict() if isinstance(e, WireEvent) else e for e in events]
    if protocol == "chat_completions":
        from dscodec.protocols.openai_chat.accumulate import accumulate_chunks

        return accumulate_chunks(dicts, response_id=response_id, model=model, created=created)
    if protocol == "responses":
        from dscodec.protocols.openai_responses.accumulate import accumulate_events as responses_events

        return responses_events(dicts, response_id=response_id, model=model, created=created)
    if protocol == "messages":
        from dscodec.protocols.anthropic_messages.accumulate import accumulate_events as messages_events

        return messages_events(dicts)
    raise ValueError(f"unknown protocol {protocol!r}; expected chat_completions, responses or messages")
