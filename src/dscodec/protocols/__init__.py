"""The wire protocols dscodec speaks, and the one entry point that converts any of their request bodies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from dscodec.conversation import ConversationRequest, Protocol
from dscodec.errors import DscodecError, UnsupportedProtocol
from dscodec.options import ConversionOptions
from dscodec.protocols.errors import anthropic_error_body, openai_error_body  # also registers the renderers

__all__ = ["PROTOCOLS", "convert", "error_body"]

PROTOCOLS: tuple[str, ...] = get_args(Protocol)


def convert(
    protocol: Protocol, body: str | bytes | Mapping[str, Any], options: ConversionOptions | None = None
) -> ConversationRequest:
    """Convert a request body of ``protocol`` into a :class:`~dscodec.ConversationRequest`.

    Args:
        protocol: ``"chat_completions"``, ``"responses"`` or ``"messages"``.
        body: the raw body (``str`` or ``bytes`` of JSON) or an already parsed mapping.
        options: conversion policy; the reference's defaults when ``None``.

    Raises:
        ConversionError: the body is malformed or breaks a rule; ``.status_code`` and ``.body`` hold the
            HTTP status and the JSON error body in the protocol's own shape.

    Examples:
        >>> request = convert("chat_completions", '{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}')
        >>> request.model_version, request.conversation.thinking_mode, request.conversation.reasoning_effort
        ('v4', True, 'high')
    """
    if protocol == "chat_completions":
        from dscodec.protocols.openai_chat.inbound import parse_request
    elif protocol == "responses":
        from dscodec.protocols.openai_responses.inbound import parse_request
    elif protocol == "messages":
        from dscodec.protocols.anthropic_messages.inbound import parse_request
    else:
        raise UnsupportedProtocol(f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}")
    return parse_request(body, options=options)


def error_body(protocol: Protocol, exc: DscodecError) -> dict[str, Any]:
    """``exc`` as the JSON error body of ``protocol``: Anthropic's envelope for ``"messages"`` (deviation D1),
    the OpenAI one otherwise. Send it with ``exc.status_code``.

    Examples:
        >>> from dscodec.errors import ConversionError
        >>> error_body("messages", ConversionError("bad"))
        {'type': 'error', 'error': {'type': 'invalid_request_error', 'message': 'bad'}}
    """
    if protocol == "messages":
        return anthropic_error_body(exc)
    return openai_error_body(exc)
