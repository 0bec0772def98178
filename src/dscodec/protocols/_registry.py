"""The protocol table: every protocol dscodec speaks, and the one place a protocol name is looked up.

Each :class:`ProtocolSpec` names what the request path and the response path need of one protocol: its request
converter, its stream writer, its accumulator and its error body. The converter, writer and accumulator load on
first use, so ``import dscodec`` imports no protocol package. An unknown name is an
:class:`~dscodec.errors.UnsupportedProtocol`, wherever it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dscodec.errors import DscodecError, UnsupportedProtocol
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
    """

    name: str
    error_body: BodyRenderer
    continues_responses: bool
    _inbound: Callable[[], Inbound[Any]]
    _writer: Callable[[], type[EventWriter]]
    _accumulator: Callable[[], Accumulator]

    def convert(
        self, body: str | bytes | Mapping[str, Any], options: ConversionOptions | None = None
    ) -> ConversationRequest:
        """A request body of this protocol as the neutral request (see :func:`dscodec.convert`)."""
        return self._inbound().parse(body, options)

    def writer(self) -> type[EventWriter]:
        """The class of this protocol's stream writer."""
        return self._writer()

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


def _chat_inbound() -> Inbound[Any]:
    from dscodec.protocols.openai_chat.inbound import INBOUND

    return INBOUND


def _responses_inbound() -> Inbound[Any]:
    from dscodec.protocols.openai_responses.inbound import INBOUND

    return INBOUND


def _messages_inbound() -> Inbound[Any]:
    from dscodec.protocols.anthropic_messages.inbound import INBOUND

    return INBOUND


def _chat_writer() -> type[EventWriter]:
    from dscodec.protocols.openai_chat.outbound import ChatChunkWriter

    return ChatChunkWriter


def _responses_writer() -> type[EventWriter]:
    from dscodec.protocols.openai_responses.outbound import ResponsesEventWriter

    return ResponsesEventWriter


def _messages_writer() -> type[EventWriter]:
    from dscodec.protocols.anthropic_messages.outbound import MessagesEventWriter

    return MessagesEventWriter


def _chat_accumulator() -> Accumulator:
    from dscodec.protocols.openai_chat.accumulate import accumulate_chunks

    return lambda events, response_id, model, created: accumulate_chunks(
        events, response_id=response_id, model=model, created=created
    )


def _responses_accumulator() -> Accumulator:
    from dscodec.protocols.openai_responses.accumulate import accumulate_events

    return lambda events, response_id, model, created: accumulate_events(
        events, response_id=response_id, model=model, created=created
    )


def _messages_accumulator() -> Accumulator:
    from dscodec.protocols.anthropic_messages.accumulate import accumulate_events

    # A Messages stream names its id and model itself; an empty one adds up to an empty message.
    return lambda events, response_id, model, created: accumulate_events(events)


_TABLE: Mapping[str, ProtocolSpec] = MappingProxyType(
    {
        spec.name: spec
        for spec in (
            ProtocolSpec(
                "chat_completions", openai_error_body, False, _chat_inbound, _chat_writer, _chat_accumulator
            ),
            ProtocolSpec(
                "responses",
                openai_error_body,
                True,
                _responses_inbound,
                _responses_writer,
                _responses_accumulator,
            ),
            ProtocolSpec(
                "messages",
                anthropic_error_body,
                False,
                _messages_inbound,
                _messages_writer,
                _messages_accumulator,
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
        raise UnsupportedProtocol(f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}")
    return found


def error_body(protocol: str | None, exc: DscodecError) -> dict[str, Any]:
    """``exc`` as ``protocol``'s error body; the OpenAI envelope when ``protocol`` is None."""
    if protocol is None:
        return openai_error_body(exc)
    return spec(protocol).error_body(exc)
