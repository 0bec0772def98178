"""The OpenAI Responses protocol (behavior.md#responses), and what its requests keep for its writer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ResponsesWire"]


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
