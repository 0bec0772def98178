"""The OpenAI Responses protocol: request conversion (:func:`parse_request`, behavior.md#responses)."""

from dscodec.protocols.openai_responses.inbound import parse_request

__all__ = ["parse_request"]
