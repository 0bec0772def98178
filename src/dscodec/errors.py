"""The one error tree of dscodec.

Every error knows its HTTP status. The JSON body a client sees depends on the protocol it spoke, so an error
names that protocol: from construction (``protocol=``), or through :meth:`DscodecError.with_protocol`, which
returns a copy naming it (an error is never changed after it was made). :attr:`DscodecError.body` renders the body
in that protocol's shape through the protocol table (:mod:`dscodec.protocols._registry`); an error that names no
protocol uses the OpenAI envelope, which Chat Completions and Responses share. Code that knows no wire format,
such as :mod:`dscodec.conversation`, can so raise errors in the right shape by naming the protocol only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from typing_extensions import Self


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


def shown(value: object, limit: int = 100) -> str:
    """How an error message shows a value it quotes: ``repr(value)``, at most ``limit`` characters. Safe for any
    value, even one whose ``repr`` fails, such as an integer of more digits than Python writes out (then shown by
    its number of digits).

    Examples:
        >>> shown("x" * 200, limit=5)
        "'xxxx"
        >>> shown(10**5000)
        'an integer of about 5001 digits'
    """
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - whatever a repr raises, the message still needs a text
        if isinstance(value, int):
            digits = int(abs(value).bit_length() * 0.30103) + 1  # log10(2): the count to a digit or so
            text = f"an integer of about {digits} digits"
        else:
            text = f"a {type(value).__name__} that cannot be shown"
    return text[:limit]


class DscodecError(Exception):
    """Base class of every error dscodec raises on purpose.

    Attributes:
        message: what went wrong, how to fix it.
        param: the request path the error is about (``messages.3.content``), when known.
        protocol: the protocol whose error shape :attr:`body` uses, or None (the OpenAI envelope).
        status_code: the HTTP status a server should answer with.
        error_type: the OpenAI-style ``type`` string of the error body.
        error_code: the OpenAI error body's ``code`` where it names the case (``invalid_api_key``), or None: then
            the body's ``code`` repeats its ``type``, as the reference writes it.
        details: what Anthropic's error body carries as ``error.details`` (an ``error_code`` the client's SDK picks
            its error class by), or None.
    """

    status_code: ClassVar[int] = 500
    error_type: ClassVar[str] = "api_error"
    error_code: ClassVar[str | None] = None
    details: dict[str, Any] | None = None

    def __init__(self, message: str, *, param: str | None = None, protocol: str | None = None) -> None:
        if not isinstance(message, str):
            raise TypeError(f"an error's message must be a str, not {type(message).__name__}")
        for name, value in (("param", param), ("protocol", protocol)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"an error's {name} must be a str or None, not {type(value).__name__}")
        super().__init__(message)
        self.message = message
        self.param = param
        self._protocol = protocol

    def __str__(self) -> str:
        return self.message

    @property
    def protocol(self) -> str | None:
        """The protocol whose error shape :attr:`body` uses (None: the OpenAI envelope)."""
        return self._protocol

    def with_protocol(self, protocol: str) -> Self:
        """This error in ``protocol``'s shape: a copy naming ``protocol``, or the error itself when it names a
        protocol already (an error passing through several layers keeps the innermost one)."""
        if not isinstance(protocol, str):
            raise TypeError(f"protocol must be a str, not {type(protocol).__name__}")
        if self._protocol is not None:
            return self
        twin = self.copy()
        twin._protocol = protocol
        return twin

    def copy(self) -> Self:
        """A copy of this error (its class, message, fields and cause), to change without changing it."""
        twin = type(self).__new__(type(self), *self.args)
        twin.__dict__.update(self.__dict__)
        twin.__cause__, twin.__suppress_context__ = self.__cause__, self.__suppress_context__
        return twin

    @property
    def body(self) -> dict[str, Any]:
        """The JSON error body to send to the client, in :attr:`protocol`'s shape."""
        from dscodec.protocols._registry import error_body  # the protocol table renders every error body

        return error_body(self._protocol, self)


class ConversionError(DscodecError):
    """A request body that cannot be converted: malformed JSON, wrong types or a semantic rule broken."""

    status_code: ClassVar[int] = 400
    error_type: ClassVar[str] = "invalid_request_error"


class UnsupportedProtocol(ConversionError, ValueError):
    """A protocol name dscodec does not know, wherever one is given (conversion, stream processing,
    accumulation, error bodies); also a :class:`ValueError`."""


class ContextLengthExceeded(ConversionError):
    """Prompt plus requested completion do not fit the model's context."""


class TokenizerError(DscodecError):
    """The tokenizer cannot be loaded or cannot encode a prompt; a server configuration problem."""

    status_code: ClassVar[int] = 500


class SpecialTokenMissing(TokenizerError):
    """A special token the template needs is not in the tokenizer's added vocabulary.

    Attributes:
        spelling: the missing token's spelling (``<｜System｜>``), or None when not known.
    """

    spelling: str | None = None


class StreamStateError(DscodecError):
    """A stream processor was used out of order: after it finished, after it failed, or with bad input."""

    status_code: ClassVar[int] = 500


class ModelOutputError(DscodecError):
    """The model's output could not be processed."""

    status_code: ClassVar[int] = 502
    error_type: ClassVar[str] = "api_error"
