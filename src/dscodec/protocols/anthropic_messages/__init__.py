"""The Anthropic Messages protocol: request conversion (:func:`parse_request`, spec §2.3)."""

from dscodec.protocols.anthropic_messages.inbound import parse_request

__all__ = ["parse_request"]
