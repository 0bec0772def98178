"""Stream events -> the complete response a non-streaming request gets (behavior.md#accumulation).

The package imports this module at once (its name is the function's, and a submodule imported later would take
the package attribute back), so its own imports wait for the first call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from dscodec.errors import DscodecError, ModelOutputError, shown

if TYPE_CHECKING:
    from dscodec.conversation import Protocol
    from dscodec.protocols._wire import WireEvent

    EventLike = WireEvent | Mapping[str, Any]

__all__ = ["accumulate"]


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
        ModelOutputError: ``events`` is no iterable of events (a single event, a string, a number), an event is
            not a mapping, or its fields have types no stream of ``protocol`` has (a damaged or foreign
            recording); the message names what was wrong.
        TypeError: ``response_id`` or ``model`` is neither a ``str`` nor None, or ``created`` neither an ``int``
            nor None.
        ValueError: ``response_id`` or ``model`` holds a lone surrogate, or ``created`` is not from 0 to
            2**63 - 1.
    """
    from dscodec.protocols._registry import spec
    from dscodec.protocols._wire import WireEvent

    found = spec(protocol)
    for name, text in (("response_id", response_id), ("model", model)):
        if text is not None:
            if not isinstance(text, str):
                raise TypeError(f"{name} must be a str or None, not {type(text).__name__}")
            try:
                text.encode()
            except UnicodeEncodeError:
                raise ValueError(f"{name} must be valid Unicode text (it holds a lone surrogate)") from None
    if created is not None:
        if type(created) is not int:
            raise TypeError(f"created must be an int or None, not {type(created).__name__}")
        if not 0 <= created < 2**63:
            raise ValueError(f"created must be from 0 to 2**63 - 1, not {shown(created)}")
    dicts: list[Mapping[str, Any]] = []
    outside = False  # an event dict from outside (a recording): the response it gives is checked
    if isinstance(events, (str, bytes, bytearray, Mapping, WireEvent)) or not isinstance(events, Iterable):
        raise ModelOutputError(f"events must be an iterable of stream events, not {type(events).__name__}")
    for index, event in enumerate(events):
        if isinstance(event, WireEvent):
            dicts.append(event.to_dict())
        elif isinstance(event, Mapping):
            dicts.append(event)
            outside = True
        else:
            raise ModelOutputError(
                f"stream event {index} must be a mapping or a WireEvent, not {type(event).__name__}"
            )
    try:
        response = found.accumulate(dicts, response_id=response_id, model=model, created=created)
        if outside:
            found.check_response(response)
        return response
    except DscodecError:
        raise
    except (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError) as exc:
        # Event dicts from outside (a recorded stream) may hold anything; what the accumulator cannot read is
        # a bad stream, never a crash.
        raise ModelOutputError(
            f"the events are not a {protocol} stream: a field has an unexpected type or value "
            f"({type(exc).__name__}: {exc})"
        ) from None
