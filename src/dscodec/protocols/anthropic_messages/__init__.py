"""The Anthropic Messages protocol: request conversion (:func:`parse_request`, behavior.md#messages)."""

from dscodec.protocols.anthropic_messages.inbound import parse_request

__all__ = ["parse_request"]
