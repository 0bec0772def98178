"""The wire protocols dscodec speaks, and the one entry point that converts any of their request bodies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dscodec.conversation import ConversationRequest, Protocol
from dscodec.errors import DscodecError
from dscodec.options import ConversionOptions
from dscodec.protocols import _registry
from dscodec.protocols._registry import PROTOCOLS

__all__ = ["PROTOCOLS", "convert", "error_body"]


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
        UnsupportedProtocol: ``protocol`` is none of the three.
        TypeError: ``options`` is neither None nor :class:`~dscodec.ConversionOptions`.

    Examples:
        >>> request = convert("chat_completions", '{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}')
        >>> request.model_version, request.conversation.thinking_mode, request.conversation.reasoning_effort
        ('v4', True, 'high')
    """
    return _registry.spec(protocol).convert(body, options)


def error_body(protocol: Protocol, exc: DscodecError) -> dict[str, Any]:
    """``exc`` as the JSON error body of ``protocol``: Anthropic's envelope for ``"messages"`` (deviation D1),
    the OpenAI one otherwise. Send it with ``exc.status_code``.

    Raises:
        UnsupportedProtocol: ``protocol`` is none of the three.
        TypeError: ``exc`` is no :class:`~dscodec.DscodecError` (other exceptions have no status or body of
            their own: wrap them in one first).

    Examples:
        >>> from dscodec.errors import ConversionError
        >>> error_body("messages", ConversionError("bad"))
        {'type': 'error', 'error': {'type': 'invalid_request_error', 'message': 'bad'}}
    """
    if not isinstance(exc, DscodecError):
        raise TypeError(f"exc must be a DscodecError, not {type(exc).__name__}")
    return _registry.error_body(protocol, exc)
