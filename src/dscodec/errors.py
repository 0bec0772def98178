"""The one error tree of dscodec.

Every error knows its HTTP status. The JSON body a client sees depends on the protocol it spoke, so the
protocol that raised (or caught) an error binds its own body renderer to it with :meth:`DscodecError.bind`;
until then :attr:`DscodecError.body` uses the OpenAI envelope, which Chat Completions and Responses share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

__all__ = [
    "ContextLengthExceeded",
    "ConversionError",
    "DscodecError",
    "ModelOutputError",
    "SpecialTokenMissing",
    "StreamStateError",
    "TokenizerError",
    "UnsupportedProtocol",
]

BodyRenderer = Callable[["DscodecError"], dict[str, Any]]


class DscodecError(Exception):
    """Base class of every error dscodec raises on purpose.

    Attributes:
        message: what went wrong, how to fix it.
        param: the request path the error is about (``messages.3.content``), when known.
        status_code: the HTTP status a server should answer with.
        error_type: the OpenAI-style ``type`` string of the error body.
    """

    status_code: ClassVar[int] = 500
    error_type: ClassVar[str] = "api_error"

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.protocol: str | None = None
        self._render: BodyRenderer | None = None

    def __str__(self) -> str:
        return self.message

    def bind(self, protocol: str, render: BodyRenderer) -> DscodecError:
        """Attach the protocol whose error shape :attr:`body` must use; returns ``self``."""
        if self._render is None:
            self.protocol = protocol
            self._render = render
        return self

    @property
    def body(self) -> dict[str, Any]:
        """The JSON error body to send to the client, in the bound protocol's shape."""
        if self._render is not None:
            return self._render(self)
        return {
            "error": {
                "message": self.message,
                "type": self.error_type,
                "param": None,
                "code": self.error_type,
            }
        }


class ConversionError(DscodecError):
    """A request body that cannot be converted: malformed JSON, wrong types or a semantic rule broken."""

    status_code: ClassVar[int] = 400
    error_type: ClassVar[str] = "invalid_request_error"


class UnsupportedProtocol(ConversionError):
    """A protocol name dscodec does not convert (yet)."""


class ContextLengthExceeded(ConversionError):
    """Prompt plus requested completion do not fit the model's context."""


class TokenizerError(DscodecError):
    """The tokenizer cannot be loaded or cannot encode a prompt; a server configuration problem."""

    status_code: ClassVar[int] = 500


class SpecialTokenMissing(TokenizerError):
    """A special token the template needs is not in the tokenizer's added vocabulary."""


class StreamStateError(DscodecError):
    """A stream processor was used out of order: after it finished, after it failed, or with bad input."""

    status_code: ClassVar[int] = 500


class ModelOutputError(DscodecError):
    """The model's output could not be processed."""

    status_code: ClassVar[int] = 502
    error_type: ClassVar[str] = "api_error"
