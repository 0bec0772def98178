"""Error bodies in each protocol's wire shape: the OpenAI envelope and Anthropic's.

A :class:`~dscodec.errors.DscodecError` knows its status and message; these functions render the JSON body a
client expects. The protocol table (:mod:`._registry`) names the one each protocol uses; ``exc.body`` and
:func:`dscodec.error_body` render through it.
"""

from __future__ import annotations

from typing import Any

from dscodec.errors import DscodecError

__all__ = ["ANTHROPIC_ERROR_TYPES", "anthropic_error_body", "anthropic_error_type", "openai_error_body"]

#: Anthropic's error ``type`` for each HTTP status (any other 4xx is ``invalid_request_error``: a 405, a 408; any
#: other status ``api_error``). The official SDK's
#: ``ErrorResponse`` knows no separate type for 413, so an oversized request is an ``invalid_request_error``, and
#: so is a body in a content coding the server does not decode (415).
ANTHROPIC_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def anthropic_error_type(status: int) -> str:
    """Anthropic's error ``type`` for an HTTP status."""
    found = ANTHROPIC_ERROR_TYPES.get(status)
    if found is not None:
        return found
    return "invalid_request_error" if 400 <= status < 500 else "api_error"


def openai_error_body(exc: DscodecError) -> dict[str, Any]:
    """The OpenAI error envelope, keys in the reference's order (behavior.md#body-reading-and-limits).

    ``param`` is the request path of a malformed field when dscodec knows it (deviation D2: the reference has
    no body at all for those); for every rule the reference checks it is ``null``, as in the reference. ``code``
    repeats ``type``, as the reference writes it, unless the error names its case (``error_code``: the example
    server's ``invalid_api_key``, say).

    Examples:
        >>> from dscodec.errors import ConversionError
        >>> openai_error_body(ConversionError("Empty input messages"))
        {'error': {'message': 'Empty input messages', 'type': 'invalid_request_error', 'param': None, 'code': 'invalid_request_error'}}
    """
    kind = exc.error_type
    if kind == "api_error" and 400 <= exc.status_code < 500:
        # An error class of the caller's own that only set a client status (a backend refusing): the type that
        # status has, as dscodec's own backends name it.
        kind = "rate_limit_exceeded" if exc.status_code == 429 else "invalid_request_error"
    return {
        "error": {
            "message": exc.message,
            "type": kind,
            "param": exc.param,
            "code": exc.error_code or kind,
        }
    }


def anthropic_error_body(exc: DscodecError) -> dict[str, Any]:
    """Anthropic's error envelope with the ``type`` name for the error's status (deviation D1), and the error's
    ``details`` when it has them.

    Examples:
        >>> from dscodec.errors import ConversionError
        >>> anthropic_error_body(ConversionError("messages: at least one message is required"))
        {'type': 'error', 'error': {'type': 'invalid_request_error', 'message': 'messages: at least one message is required'}}
    """
    error: dict[str, Any] = {
        "type": anthropic_error_type(exc.status_code),
        "message": exc.message,
    }
    if exc.details:
        error["details"] = exc.details
    return {"type": "error", "error": error}
