"""The OpenAI Responses protocol: request conversion (:func:`parse_request`, spec §2.2)."""

from dscodec.protocols.openai_responses.inbound import parse_request

__all__ = ["parse_request"]
