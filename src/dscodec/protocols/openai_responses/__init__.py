"""The OpenAI Responses protocol (behavior.md#responses), and what its requests keep for its writer."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from dscodec.conversation import ConversationRequest

__all__ = ["ResponsesWire", "echo_storage"]


@dataclass(frozen=True, slots=True)
class ResponsesWire:
    """What a converted Responses request keeps for its event writer (``ConversationRequest.wire``).

    Examples:
        >>> import dscodec
        >>> req = dscodec.convert("responses", {"model": "DeepSeek-V4-Pro", "instructions": "Be brief.", "input": "Hi"})
        >>> req.wire.echo["instructions"], req.wire.echo["temperature"]
        ('Be brief.', 1.0)
    """

    #: The request settings the response object repeats back, in wire spelling.
    echo: dict[str, Any] | None = None
    #: Namespaced tools: prompt name -> (namespace, name).
    namespace_tool_map: dict[str, tuple[str, str]] = field(default_factory=dict)


def echo_storage(request: ConversationRequest, *, store: bool, previous_response_id: str | None) -> None:
    """Make the response objects written for ``request`` say how a server keeps the response: ``store`` true when
    it stores it, and the ``previous_response_id`` the request continued.

    dscodec's converter stores nothing, so by default a response object says ``"store": false`` and
    ``"previous_response_id": null`` whatever the request asked (as the reference does). A server that keeps
    responses calls this after converting. A request of another protocol is left as it is.

    Examples:
        >>> import dscodec
        >>> req = dscodec.convert("responses", {"model": "DeepSeek-V4-Pro", "input": "Hi"})
        >>> echo_storage(req, store=True, previous_response_id="resp_1")
        >>> req.wire.echo["store"], req.wire.echo["previous_response_id"]
        (True, 'resp_1')

    Raises:
        TypeError: ``request`` is no converted request, ``store`` no bool, or ``previous_response_id`` neither a
            string nor None.
    """
    if not isinstance(request, ConversationRequest):
        raise TypeError(f"request must be a ConversationRequest, not {type(request).__name__}")
    if not isinstance(store, bool):
        raise TypeError(f"store must be a bool, not {type(store).__name__}")
    if previous_response_id is not None and not isinstance(previous_response_id, str):
        raise TypeError(
            f"previous_response_id must be a string or None, not {type(previous_response_id).__name__}"
        )
    wire = request.wire
    if not isinstance(wire, ResponsesWire):
        return
    echo = {**(wire.echo or {}), "store": store, "previous_response_id": previous_response_id}
    request.wire = dataclasses.replace(wire, echo=echo)
