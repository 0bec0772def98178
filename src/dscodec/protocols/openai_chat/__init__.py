"""The OpenAI Chat Completions protocol (behavior.md#chat-completions), and what its requests keep for its writer."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChatWire"]


@dataclass(frozen=True, slots=True)
class ChatWire:
    """What a converted Chat Completions request keeps for its chunk writer (``ConversationRequest.wire``)."""

    #: ``stream_options.include_usage``: a streamed response ends with a usage chunk.
    include_usage: bool = False
