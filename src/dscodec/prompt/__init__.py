"""Rendering conversations to DeepSeek prompts and encoding them to token ids."""

from __future__ import annotations

from dscodec.conversation import Conversation, ConversationRequest, ModelVersion
from dscodec.prompt.render import (
    HAND_BUILT_FAILURES,
    RenderedPrompt,
    conversation_of,
    explain_failure,
    render_prompt,
)

__all__ = ["RenderedPrompt", "render_request"]


def render_request(
    request: ConversationRequest | Conversation, *, version: ModelVersion | None = None
) -> RenderedPrompt:
    """Render a converted request (or a conversation and a ``version``) to its prompt text and special spans.

    Examples:
        >>> import dscodec
        >>> request = dscodec.convert("chat_completions", {"model": "DeepSeek-V4-Pro",
        ...     "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "Hi"}]})
        >>> prompt = dscodec.render(request)
        >>> prompt.text
        '<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜></think>'
        >>> prompt.special_spans
        [(0, 21), (21, 29), (31, 44), (44, 52)]

    Raises:
        TypeError: ``request`` is neither a converted request nor a conversation, a conversation comes without
            ``version``, or a field of a conversation built by hand has the wrong type (the message names it).
        ValueError: ``version`` is neither ``"v4"`` nor ``"v4.1"``, or a field of a conversation built by hand
            has a value it cannot take.
    """
    conversation, version = conversation_of(request, version, "rendering")
    try:
        return render_prompt(conversation, version)
    except HAND_BUILT_FAILURES:
        explain_failure(conversation)
        raise
