"""The protocol table: every protocol dscodec speaks, and the one place a protocol name is looked up.

Each :class:`ProtocolSpec` names what the request path and the response path need of one protocol: its request
converter, its stream writer, its accumulator and its error body. The converter, writer and accumulator load on
first use, so ``import dscodec`` imports no protocol package. An unknown name is an
:class:`~dscodec.errors.UnsupportedProtocol`, wherever it is given.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dscodec.errors import DscodecError, UnsupportedProtocol, shown
from dscodec.protocols._error_bodies import anthropic_error_body, openai_error_body

if TYPE_CHECKING:
    from dscodec.conversation import ConversationRequest
    from dscodec.options import ConversionOptions
    from dscodec.protocols._convert import Inbound
    from dscodec.protocols._wire import EventWriter

__all__ = ["PROTOCOLS", "ProtocolSpec", "error_body", "spec"]

#: A protocol's renderer of error bodies.
BodyRenderer = Callable[[DscodecError], dict[str, Any]]
#: A protocol's accumulator: event dicts in, the complete response out (``response_id``, ``model``, ``created``
#: stand in for what the events do not hold).
Accumulator = Callable[[Sequence[Mapping[str, Any]], str | None, str | None, int | None], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ProtocolSpec:
    """One protocol: its name, error body and, loaded on first use, its converter, writer and accumulator.

    Attributes:
        name: the protocol's name (``"chat_completions"``, ``"responses"``, ``"messages"``).
        error_body: the renderer of its error bodies.
        continues_responses: a request may continue a stored response (Responses' ``previous_response_id``).
        holds_threads: a request may ask the server to hold its conversation, or continue one it holds
            (Messages' ``thread``).
    """

    name: str
    error_body: BodyRenderer
    continues_responses: bool
    holds_threads: bool
    _inbound: Callable[[], Any]
    _writer: Callable[[], Any]
    _accumulator: Callable[[], Accumulator]
    _response_shape: Callable[[], Any]

    def convert(
        self, body: str | bytes | Mapping[str, Any], options: ConversionOptions | None = None
    ) -> ConversationRequest:
        """A request body of this protocol as the neutral request (see :func:`dscodec.convert`)."""
        inbound: Inbound[Any] = self._inbound()
        return inbound.parse(body, options)

    def load(self) -> None:
        """Import this protocol's converter, writer and accumulator now, rather than on their first use."""
        self._inbound()
        self._writer()
        self._accumulator()

    def writer(self) -> type[EventWriter]:
        """The class of this protocol's stream writer."""
        writer: type[EventWriter] = self._writer()
        return writer

    def accumulate(
        self,
        events: Sequence[Mapping[str, Any]],
        *,
        response_id: str | None = None,
        model: str | None = None,
        created: int | None = None,
    ) -> dict[str, Any]:
        """The complete response that this protocol's event dicts add up to."""
        return self._accumulator()(events, response_id, model, created)

    def check_response(self, response: Any) -> None:
        """Refuse a complete response built from event dicts from outside unless it is JSON and its fields have
        the types this protocol gives them.

        Raises:
            ModelOutputError: naming the first field that is wrong.
        """
        from dscodec.protocols._shape import check_response

        check_response(response, self._response_shape(), self.name)


def _load(module: str, name: str) -> Callable[[], Any]:
    """A loader of ``name`` from the protocol module ``module`` (imported on the first call, then cached)."""

    loaded: list[Any] = []  # the object, once imported (import_module itself costs microseconds per call)

    def load() -> Any:
        if not loaded:
            loaded.append(getattr(importlib.import_module(f"dscodec.protocols.{module}"), name))
        return loaded[0]

    return load


def _with_ids(module: str, name: str) -> Callable[[], Accumulator]:
    """A loader of an accumulator that takes the ids the events may lack as keywords."""
    load = _load(module, name)

    def accumulator() -> Accumulator:
        function = load()
        return lambda events, response_id, model, created: function(
            events, response_id=response_id, model=model, created=created
        )

    return accumulator


def _without_ids(module: str, name: str) -> Callable[[], Accumulator]:
    """A loader of an accumulator that takes the events only."""
    load = _load(module, name)

    def accumulator() -> Accumulator:
        function = load()
        return lambda events, response_id, model, created: function(events)

    return accumulator


def _protocol(
    name: str,
    package: str,
    error_body: BodyRenderer,
    accumulator: str = "accumulate_events",
    *,
    continues_responses: bool = False,
    holds_threads: bool = False,
    takes_ids: bool = True,
) -> ProtocolSpec:
    """A table row: the protocol ``name``, whose modules are ``dscodec.protocols.<package>.inbound`` (its
    ``INBOUND``), ``.outbound`` (its ``WRITER`` class) and ``.accumulate`` (the function ``accumulator``, which
    takes the ids the events may lack as keywords unless ``takes_ids`` is false)."""
    return ProtocolSpec(
        name,
        error_body,
        continues_responses,
        holds_threads,
        _inbound=_load(f"{package}.inbound", "INBOUND"),
        _writer=_load(f"{package}.outbound", "WRITER"),
        _accumulator=(_with_ids if takes_ids else _without_ids)(f"{package}.accumulate", accumulator),
        _response_shape=_load(f"{package}.accumulate", "RESPONSE_SHAPE"),
    )


_TABLE: Mapping[str, ProtocolSpec] = MappingProxyType(
    {
        spec.name: spec
        for spec in (
            _protocol("chat_completions", "openai_chat", openai_error_body, "accumulate_chunks"),
            _protocol("responses", "openai_responses", openai_error_body, continues_responses=True),
            # A Messages stream names its id and model itself (an empty one adds up to an empty message).
            _protocol(
                "messages", "anthropic_messages", anthropic_error_body, holds_threads=True, takes_ids=False
            ),
        )
    }
)

#: The protocol names, in the order the documentation lists them.
PROTOCOLS: tuple[str, ...] = tuple(_TABLE)


def spec(protocol: str) -> ProtocolSpec:
    """The protocol called ``protocol``.

    Raises:
        UnsupportedProtocol: dscodec knows no protocol of that name.
    """
    found = _TABLE.get(protocol) if isinstance(protocol, str) else None
    if found is None:
        raise UnsupportedProtocol(
            f"unknown protocol {shown(protocol)}; expected one of {', '.join(PROTOCOLS)}"
        )
    return found


def error_body(protocol: str | None, exc: DscodecError) -> dict[str, Any]:
    """``exc`` as ``protocol``'s error body; the OpenAI envelope when ``protocol`` is None."""
    if protocol is None:
        return openai_error_body(exc)
    return spec(protocol).error_body(exc)
