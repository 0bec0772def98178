"""The one error tree of dscodec.

Every error knows its HTTP status. The JSON body a client sees depends on the protocol it spoke, so the
protocol that raised (or caught) an error binds it with :meth:`DscodecError.bind`: either to a body renderer
directly, or by protocol name only, in which case :attr:`DscodecError.body` uses the renderer registered for that
name (:func:`register_body_renderer`; ``dscodec.protocols`` registers one per protocol when it is imported). This
lets code that knows no wire format, such as :mod:`dscodec.conversation`, raise errors in the right shape. An
unbound error uses the OpenAI envelope, which Chat Completions and Responses share.
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
    "register_body_renderer",
]

BodyRenderer = Callable[["DscodecError"], dict[str, Any]]

#: Body renderer per protocol name, for errors bound by name only.
_BODY_RENDERERS: dict[str, BodyRenderer] = {}


def register_body_renderer(protocol: str, render: BodyRenderer) -> None:
    """Make ``render`` the error body of ``protocol`` for errors bound to that name without a renderer."""
    _BODY_RENDERERS[protocol] = render


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

    def bind(self, protocol: str, render: BodyRenderer | None = None) -> DscodecError:
        """Attach the protocol whose error shape :attr:`body` must use; returns ``self``.

        Without ``render``, the renderer registered for ``protocol`` is used (looked up when :attr:`body` is
        read). The first binding wins: an error passing through several layers keeps the innermost protocol.
        """
        if self.protocol is None and self._render is None:
            self.protocol = protocol
            self._render = render
        return self

    @property
    def body(self) -> dict[str, Any]:
        """The JSON error body to send to the client, in the bound protocol's shape."""
        render = self._render
        if render is None and self.protocol is not None:
            render = _BODY_RENDERERS.get(self.protocol)
        if render is not None:
            return render(self)
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
