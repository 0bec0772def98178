"""What every protocol's stream writer shares: the wire event, prompt usage, the outcome, the writer contract."""

from __future__ import annotations

import abc
import math
import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson

from dscodec._f32 import f32_logprob_once
from dscodec.conversation import ConversationRequest
from dscodec.errors import DscodecError, shown
from dscodec.stream.events import ContentDelta, Event, ReasoningDelta, TokenLogprob, ToolCallDelta

if TYPE_CHECKING:
    from dscodec.vocab import Vocabulary

__all__ = [
    "BackendFinish",
    "EventWriter",
    "GivenLogprob",
    "LogprobWriter",
    "Outcome",
    "PromptUsage",
    "WireEvent",
    "dict_event",
    "dumps_json",
    "json_event",
    "logprob_dict",
    "logprob_entries_json",
    "logprob_notation",
]

BackendFinish = Literal["stop", "length", "content_filter"]

#: Token ids are below this (the bound the stream processor checks).
_ID_LIMIT = 1 << 32
_finite = math.isfinite
_dumps = orjson.dumps


#: A log probability orjson writes in another notation than the reference does (both write the shortest digits of
#: its 32-bit float): from 1e-6 to 1e-5 (orjson ``-5e-6``, the reference ``-0.000005``), from 1e13 to 1e16 (orjson
#: ``-10000000000000.0``, the reference ``-1e+13``), and from 1e16 where an older orjson leaves out the exponent's
#: ``+`` (``-1e16``).
_ODD_LOGPROB = re.compile(r'"logprob":(-?)(?:(\d)(?:\.(\d+))?e(-6|\d+)\b|(\d{14,16})\.0\b)')


def _reference_number(found: re.Match[str]) -> str:
    sign, first, rest, exponent, whole = found.groups()
    if whole is not None:  # 14 to 16 digits: d.ddde+N
        digits = whole.rstrip("0")
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f'"logprob":{sign}{mantissa}e+{len(whole) - 1}'
    if exponent == "-6":  # d.ddd e-6: 0.00000dddd
        return f'"logprob":{sign}0.00000{first}{rest or ""}'
    return f'"logprob":{sign}{first}{"." + rest if rest else ""}e+{exponent}'


def logprob_notation(text: str) -> str:
    """JSON ``text`` with its log probabilities in the reference's notation (see :data:`_ODD_LOGPROB`; every other
    number orjson writes as the reference does). ``"logprob":`` outside a string is only ever an entry's key.

    Examples:
        >>> logprob_notation('{"logprob":-5e-6,"top_logprobs":[{"logprob":-2.5e-6},{"logprob":-27772440000000.0}]}')
        '{"logprob":-0.000005,"top_logprobs":[{"logprob":-0.0000025},{"logprob":-2.777244e+13}]}'
        >>> logprob_notation('{"logprob":-1.5e16,"top_logprobs":[{"logprob":-1e-7},{"logprob":-1e+20}]}')
        '{"logprob":-1.5e+16,"top_logprobs":[{"logprob":-1e-7},{"logprob":-1e+20}]}'
    """
    if '"logprob":' not in text:
        return text
    return _ODD_LOGPROB.sub(_reference_number, text)


#: From this magnitude up to the next, orjson writes a log probability in the reference's notation
#: (:data:`_ODD_LOGPROB`); outside it, :func:`logprob_notation` rewrites it.
_PLAIN_FROM, _PLAIN_BELOW = 1e-5, 1e13

#: The JSON text of a log probability value in the reference's notation, by value; and of an entry's fields around
#: its value (``{"token":…,"logprob":`` and ``,"bytes":[…]``), by token text with the bytes they were made for.
#: Both bounded: started over when full. Zero is not remembered (``-0.0`` is written with its sign).
_NUMBER_TEXT: dict[float, str] = {}
_ENTRY_TEXT: dict[str, tuple[tuple[int, ...], str, str]] = {}
_TEXT_MEMO_LIMIT = 1 << 14


def _value_text(value: float) -> str:
    """The JSON text of a log probability value in the reference's notation (not remembered)."""
    text = orjson.dumps(value).decode()
    if type(value) is not float or not _PLAIN_FROM <= abs(value) < _PLAIN_BELOW:
        text = logprob_notation(f'"logprob":{text}')[len('"logprob":') :]
    return text


def _number_text(value: float) -> str:
    text = _NUMBER_TEXT.get(value)
    return _new_number_text(value) if text is None else text


def _new_number_text(value: float) -> str:
    """:func:`_number_text` of a value not found in its memo (where it goes, unless zero), for a caller that
    looked."""
    text = _value_text(value)
    if not value:  # 0.0 and -0.0 are one key: neither is remembered
        return text
    if len(_NUMBER_TEXT) >= _TEXT_MEMO_LIMIT:
        _NUMBER_TEXT.clear()
    _NUMBER_TEXT[value] = text
    return text


def _entry_pieces(token: str, data: tuple[int, ...]) -> tuple[str, str]:
    """An entry's JSON text around its value: ``{"token":…,"logprob":`` and ``,"bytes":[…]``."""
    return f'{{"token":{orjson.dumps(token).decode()},"logprob":', f',"bytes":{orjson.dumps(data).decode()}'


def _entry_text(token: str, data: tuple[int, ...]) -> tuple[str, str]:
    found = _ENTRY_TEXT.get(token)
    if found is not None and (found[0] is data or found[0] == data):
        return found[1], found[2]
    head, tail = _entry_pieces(token, data)
    if len(_ENTRY_TEXT) >= _TEXT_MEMO_LIMIT:
        _ENTRY_TEXT.clear()
    _ENTRY_TEXT[token] = (data, head, tail)
    return head, tail


def logprob_entries_json(entries: Sequence[TokenLogprob | GivenLogprob]) -> str:
    """The JSON array of ``entries`` in the OpenAI shape, as :func:`dumps_json` writes a list of
    :func:`logprob_dict` (the reference's notation included), from remembered pieces: the per-token path of the
    writers that stream log probabilities.

    Examples:
        >>> from dscodec.stream.events import TopLogprob
        >>> logprob_entries_json([TokenLogprob("a", -5e-06, (97,), (TopLogprob("b", -1.5, (98,)),))])
        '[{"token":"a","logprob":-0.000005,"bytes":[97],"top_logprobs":[{"token":"b","logprob":-1.5,"bytes":[98]}]}]'
    """
    parts: list[str] = []
    append = parts.append
    number = _NUMBER_TEXT.get
    known = _ENTRY_TEXT.get
    for entry in entries:
        if isinstance(entry, GivenLogprob):  # as the backend gave it (:class:`LogprobWriter`)
            text = entry.text()
            append("," + text if parts else text)
            continue
        found = known(entry.token)
        if found is not None and found[0] is entry.bytes:
            head, tail = found[1], found[2]
        else:
            head, tail = _entry_text(entry.token, entry.bytes)
        append("," + head if parts else head)
        append(number(entry.logprob) or _new_number_text(entry.logprob))
        append(tail)
        tops = entry.top_logprobs
        if not tops:
            append(',"top_logprobs":[]}')
            continue
        append(',"top_logprobs":[')
        separator = ""
        for top in tops:
            found = known(top.token)
            if found is not None and found[0] is top.bytes:
                head, tail = found[1], found[2]
            else:
                head, tail = _entry_text(top.token, top.bytes)
            append(separator + head)
            separator = ","
            append(number(top.logprob) or _new_number_text(top.logprob))
            append(tail)
            append("}")
        append("]}")
    return "[" + "".join(parts) + "]"


#: The JSON text of each log probability value a backend gave, by that value (as :func:`f32_logprob` and
#: :func:`_number_text` make it); bounded, started over when full; zero not remembered.
_GIVEN_TEXT: dict[float, str] = {}
#: Per vocabulary: the JSON text of an entry around its value (:func:`_entry_pieces`) by token id.
_PIECES: weakref.WeakKeyDictionary[Vocabulary, dict[int, tuple[str, str]]] = weakref.WeakKeyDictionary()
#: Most ids a vocabulary's table of :data:`_PIECES` holds (ids beyond the vocabulary may come too).
_PIECES_LIMIT = 200_000


def _given_text(value: float) -> str:
    """The JSON text of log probability ``value`` as a backend gave it (not found in :data:`_GIVEN_TEXT`, where it
    goes unless zero)."""
    shortest = f32_logprob_once(value)
    # _value_text, inline (a stream of varied values makes this call for nearly every value; 3% of its time)
    text = _dumps(shortest).decode()
    if not _PLAIN_FROM <= abs(shortest) < _PLAIN_BELOW:
        text = logprob_notation(f'"logprob":{text}')[len('"logprob":') :]
    if value:  # 0.0 and -0.0 are one key
        if len(_GIVEN_TEXT) >= _TEXT_MEMO_LIMIT:
            _GIVEN_TEXT.clear()
        _GIVEN_TEXT[value] = text
    return text


class GivenLogprob(tuple[Any, ...]):
    """A log probability entry as a backend gave it, checked (:meth:`LogprobWriter.given`): written as JSON text
    only when a writer writes it (:meth:`text`), so that an entry a writer drops (Responses drops those of the
    reasoning) costs no more than its check. Its parts are the writer, the id, the value and the alternatives (a
    tuple of ``(int, float)`` tuples), all immutable."""

    __slots__ = ()

    def text(self) -> str:
        """The entry's JSON text in the OpenAI shape, as :func:`logprob_entries_json` writes the stream decoder's
        entry of the same id, value and alternatives."""
        writer, token_id, logprob, pairs = self
        known = writer.pieces.get
        given = _GIVEN_TEXT.get
        parts = []
        for alt_id, alt_logprob in pairs:
            head, tail = known(alt_id) or writer.new_pieces(alt_id)
            parts.append(f"{head}{given(alt_logprob) or _given_text(alt_logprob)}{tail}}}")
        head, tail = known(token_id) or writer.new_pieces(token_id)
        number = given(logprob) or _given_text(logprob)
        return f'{head}{number}{tail},"top_logprobs":[{",".join(parts)}]}}'


class LogprobWriter:
    """The log probability entries of one stream as the backend gave them (:class:`GivenLogprob`), checked while
    they are taken and written as the JSON text of the OpenAI entry when a writer writes them: the per-token path of
    the stream processor, whose output machine carries such an entry where it carries a stream decoder's entry.
    ``fields`` gives the ``token`` text and ``bytes`` of an id (the stream decoder's ``logprob_fields``); the texts
    around each id's value are kept per vocabulary.

    Examples:
        >>> from dscodec.stream.decoder import IncrementalDecoder
        >>> from dscodec.vocab import Vocabulary
        >>> vocab = Vocabulary.load(None)
        >>> writer = LogprobWriter(IncrementalDecoder(vocab).logprob_fields, vocab)
        >>> writer.given(72, -0.25, [(73, -1.5)]).text()
        '{"token":"f","logprob":-0.25,"bytes":[102],"top_logprobs":[{"token":"g","logprob":-1.5,"bytes":[103]}]}'
    """

    __slots__ = ("_fields", "pieces")

    def __init__(self, fields: Callable[[int], tuple[str, tuple[int, ...]]], vocab: Vocabulary) -> None:
        self._fields = fields
        pieces = _PIECES.get(vocab)
        if pieces is None:
            pieces = _PIECES[vocab] = {}
        #: The JSON text of an entry around its value (:func:`_entry_pieces`), by id, for the vocabulary.
        self.pieces = pieces

    def new_pieces(self, token_id: int) -> tuple[str, str]:
        """:attr:`pieces` of an id not found there (where they go while there is room)."""
        found = _entry_pieces(*self._fields(token_id))
        if len(self.pieces) < _PIECES_LIMIT:
            self.pieces[token_id] = found
        return found

    def given(self, token_id: int, logprob: float, pairs: Sequence[Any] = ()) -> GivenLogprob | None:
        """The entry of ``token_id`` (an ordinary id or not) with finite ``logprob`` and its alternatives in their
        commonest shape: a list or tuple of ``(id, logprob)`` tuples of an ``int`` id ``0 <= id < 2**32`` and a
        finite ``float``. None when they are not (the caller then checks them one by one and names what is
        wrong)."""
        for pair in pairs:
            if type(pair) is not tuple or len(pair) != 2:
                return None
            alt_id, alt_logprob = pair
            if (
                type(alt_id) is not int
                or type(alt_logprob) is not float
                or not 0 <= alt_id < _ID_LIMIT
                or not _finite(alt_logprob)
            ):
                return None
        # The list copied: a backend may reuse it once the push returned, and the entry is written later.
        return tuple.__new__(GivenLogprob, (self, token_id, logprob, tuple(pairs)))


def dumps_json(value: Any) -> str:
    """Compact JSON of ``value`` as dscodec writes it on the wire: orjson's, log probabilities in the reference's
    notation."""
    return logprob_notation(orjson.dumps(value).decode())


def _check_event_name(event: str | None) -> None:
    """An SSE event name is one line: a line break in it would end the ``event:`` field and start another."""
    if event is not None and ("\n" in event or "\r" in event):
        raise ValueError(f"a WireEvent's event name must be one line, not {shown(event)}")


class WireEvent:
    """One event as a protocol sends it: a JSON object, and for SSE an optional event name.

    An event is made from its dict, or (on the per-token path) directly from its compact JSON text; the other
    form is built on first use.

    Examples:
        >>> event = WireEvent({"type": "ping"}, event="ping")
        >>> event.to_json()
        '{"type":"ping"}'
        >>> event.sse()
        'event: ping\\ndata: {"type":"ping"}\\n\\n'
        >>> WireEvent.from_json('{"a":1}').to_dict()
        {'a': 1}
    """

    __slots__ = ("_data", "_json", "event")

    def __init__(self, data: dict[str, Any], *, event: str | None = None) -> None:
        if not isinstance(data, dict) or (event is not None and not isinstance(event, str)):
            raise TypeError(
                f"a WireEvent is a dict and an optional str event name, not {type(data).__name__} and "
                f"{type(event).__name__}"
            )
        _check_event_name(event)
        self._data: dict[str, Any] | None = data
        self._json: str | None = None
        self.event = event

    @staticmethod
    def from_json(text: str, *, event: str | None = None) -> WireEvent:
        """An event from its compact JSON text (which dscodec wrote itself).

        Raises:
            TypeError: ``text`` is no ``str`` or ``event`` neither a ``str`` nor None.
            ValueError: ``text`` is not the JSON text of an object.
        """
        if not isinstance(text, str) or (event is not None and not isinstance(event, str)):
            raise TypeError(
                f"WireEvent.from_json takes a str of JSON and an optional str event name, not "
                f"{type(text).__name__} and {type(event).__name__}"
            )
        _check_event_name(event)
        text = str.__str__(text)  # a str subclass as the plain text it holds
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"WireEvent.from_json takes the JSON text of an object: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError(  # noqa: TRY004 - the value the text holds is wrong, not the argument's type
                f"WireEvent.from_json takes the JSON text of an object, not of a {type(data).__name__}"
            )
        made = _JsonEvent(text, event)
        made._data = data
        return made

    @property
    def data(self) -> dict[str, Any]:
        if self._data is None:
            self._data = orjson.loads(self._json or "{}")
        return self._data

    def to_dict(self) -> dict[str, Any]:
        """The event's JSON object (do not modify it)."""
        return self.data

    def to_json(self) -> str:
        """Compact JSON, as sent on the wire (non-ASCII kept raw; non-finite numbers become ``null``)."""
        if self._json is None:
            try:
                self._json = dumps_json(self._data)
            except orjson.JSONEncodeError as exc:  # data a caller put in by hand
                raise TypeError(f"the WireEvent's data cannot be written as JSON: {exc}") from None
        return self._json

    def sse(self) -> str:
        """The whole Server-Sent Events frame, blank line included."""
        if self.event is None:
            return f"data: {self.to_json()}\n\n"
        return f"event: {self.event}\ndata: {self.to_json()}\n\n"

    def __repr__(self) -> str:
        return f"WireEvent({self.to_json()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WireEvent) and other.event == self.event and other.data == self.data

    __hash__ = None  # type: ignore[assignment]


class _JsonEvent(WireEvent):
    """A :class:`WireEvent` made from its JSON text (the cheapest to build, for per-token events)."""

    __slots__ = ()

    def __init__(self, text: str, event: str | None = None) -> None:
        self._data = None
        self._json = text
        self.event = event


#: :meth:`WireEvent.from_json` without the indirection, for writers' per-token events: ``json_event(text)``, or
#: ``json_event(text, name)`` with the SSE event name.
json_event: type[_JsonEvent] = _JsonEvent


class _DictEvent(WireEvent):
    """A :class:`WireEvent` a writer made from its own dict: not checked again (a writer makes one per token)."""

    __slots__ = ()

    def __init__(self, data: dict[str, Any], event: str | None = None) -> None:
        self._data = data
        self._json = None
        self.event = event


#: The writers' constructor of events from their own dicts: ``dict_event(data, event=name)``.
dict_event: Callable[..., WireEvent] = _DictEvent


@dataclass(frozen=True, slots=True)
class PromptUsage:
    """What the backend reports about the prompt before the output starts: prompt tokens, the part of them
    served from its cache, and its configuration fingerprint. Backends of the example server yield it first."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    system_fingerprint: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the output ended, for the writer's final events.

    Attributes:
        finish: the backend's finish reason, or None when it sent none (the stream simply ended).
        tool_calls: number of tool calls in the output.
        stop_sequence: the stop sequence that ended the output, if one did.
        prompt: the prompt usage the stream started with.
        completion_tokens: tokens the backend generated.
        reasoning_tokens: tokens of the reasoning, or None when not counted.
    """

    finish: BackendFinish | None
    tool_calls: int
    stop_sequence: str | None
    prompt: PromptUsage
    completion_tokens: int
    reasoning_tokens: int | None


def logprob_dict(entry: TokenLogprob | GivenLogprob) -> dict[str, Any]:
    """A logprob entry in the OpenAI shape (``token``, ``logprob``, ``bytes``, ``top_logprobs``); one as the backend
    gave it (:class:`LogprobWriter`) is read back from its JSON text."""
    if isinstance(entry, GivenLogprob):
        found: dict[str, Any] = orjson.loads(entry.text())
        return found
    return {
        "token": entry.token,
        "logprob": entry.logprob,
        "bytes": list(entry.bytes),
        "top_logprobs": [
            {"token": t.token, "logprob": t.logprob, "bytes": list(t.bytes)} for t in entry.top_logprobs
        ],
    }


class EventWriter(abc.ABC):
    """Turns protocol-neutral stream events into one protocol's wire events.

    A writer is made per response. The processor calls :meth:`open` once (before any output), :meth:`write` with
    each batch of machine events, then :meth:`close` once; or :meth:`error` if the backend fails mid-stream.
    """

    #: The SSE frame that ends a stream after the last event ("" when the protocol has none).
    sse_done: str = ""

    def __init__(self, request: ConversationRequest, *, response_id: str, model: str, created: int) -> None:
        self.request = request
        self.response_id = response_id
        self.model = model
        self.created = created
        #: Messages: the thinking block's signature (the response id unless the caller sets one).
        self.signature: str | None = None

    @abc.abstractmethod
    def open(self, usage: PromptUsage) -> list[WireEvent]:
        """The events that start the response."""

    @abc.abstractmethod
    def write(self, events: Sequence[Event]) -> list[WireEvent]:
        """Wire events for a batch of machine events; :class:`OutputEnd` and :class:`StopSequence` (whose
        information reaches :meth:`close` in the :class:`Outcome`) are to be ignored."""

    def text(self, reasoning: bool, text: str) -> list[WireEvent]:
        """Wire events for one text delta without logprobs (the per-token hot path): the same as :meth:`write`
        of a :class:`ReasoningDelta` (``reasoning``) or a :class:`ContentDelta`. Writers may override it with a
        cheaper way to the same events."""
        return self.write([ReasoningDelta(text) if reasoning else ContentDelta(text)])

    def argument(
        self, index: int, arguments: str, raw: str | None = None, parameter: str | None = None
    ) -> list[WireEvent]:
        """Wire events for one argument delta (the per-token hot path of a tool call), given by its fields: the
        same as :meth:`write` of ``[ToolCallDelta(index, arguments, raw, parameter)]``. ``arguments is raw``
        tells that the text needs no escaping in JSON. Writers may override it with a cheaper way to the same
        events."""
        return self.write([ToolCallDelta(index, arguments, raw, parameter)])

    def argument_lane(self, index: int, parameter: str) -> Callable[[str, str], list[WireEvent]]:
        """:meth:`argument` with the fields of one ``string="true"`` value fixed: a function of ``(arguments,
        raw)`` (``arguments`` not empty; ``arguments is raw`` when nothing needs escaping) giving the same
        events, for the processor's lane through the middle of a string argument. Writers may override it with
        a cheaper way."""

        def lane(arguments: str, raw: str) -> list[WireEvent]:
            return self.argument(index, arguments, raw, parameter)

        return lane

    def reasoning_lane(self, keep: Callable[[str], None]) -> Callable[[str, str], list[WireEvent]]:
        """:meth:`text` of the reasoning as a function of ``(text, raw)`` (``text`` not empty; ``raw`` is the
        pushed chunk, unused here) that first hands ``text`` to ``keep`` (the processor keeps the reasoning to count
        its tokens), for the processor's lane through the middle of the reasoning. Writers may override it with a
        cheaper way to the same events."""
        text = self.text

        def lane(piece: str, raw: str) -> list[WireEvent]:
            keep(piece)
            return text(True, piece)

        return lane

    def content_lane(self) -> Callable[[str, str], list[WireEvent]]:
        """:meth:`text` of the content as a function of ``(text, raw)`` (``text`` not empty; ``raw`` is the pushed
        chunk, unused here), for the processor's lane through the middle of a JSON-mode value. Writers may
        override it with a cheaper way to the same events."""
        text = self.text

        def lane(piece: str, raw: str) -> list[WireEvent]:
            return text(False, piece)

        return lane

    @abc.abstractmethod
    def close(self, outcome: Outcome) -> list[WireEvent]:
        """The events that end the response."""

    @abc.abstractmethod
    def error(self, exc: DscodecError) -> list[WireEvent]:
        """The events that end the response with an error after it started."""
