"""Stream events -> the complete response a non-streaming request gets (behavior.md#accumulation)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dscodec.conversation import Protocol
from dscodec.protocols._registry import spec
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

    Raises:
        UnsupportedProtocol: ``protocol`` is none of the three (also a ``ValueError``).
    """
    found = spec(protocol)
    dicts = [e.to_dict() if isinstance(e, WireEvent) else e for e in events]
    return found.accumulate(dicts, response_id=response_id, model=model, created=created)
