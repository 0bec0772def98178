"""Logprob bookkeeping and the records of one call (behavior.md#token-chunks-and-usage).

Each logprob entry is anchored at the unit that ends its token's text. Released text becomes a :class:`_Text`
record of its channel and takes the entries anchored before its end; entries of dropped text become orphans of
the channel and wait for the next delta (``_settle`` in :mod:`dscodec.stream._held` decides where they go at the
end of a stretch). :class:`LogprobBook` is the root of the output machine's layers and declares the state they
share.
"""

from __future__ import annotations

import re
from collections import deque
from typing import TYPE_CHECKING

from dscodec.stream._markers import HARD_FIRST, SENTINEL_LAST
from dscodec.stream._stages import CH_CONTENT, CH_REASONING, Channel, JsonPhase, Stage
from dscodec.stream.events import ContentDelta, Event, ReasoningDelta, TokenLogprob

if TYPE_CHECKING:
    from dscodec.stream._markers import Symbolizer
    from dscodec.stream._stops import StopMatcher
    from dscodec.stream.dsml import BlockParser, ToolCallIdFactory

__all__ = ["LogprobBook"]

#: A hard sentinel (a special id of token input), and the pieces text parts into: one such unit, or a run of
#: other units.
_HARD_UNIT = re.compile(f"[{HARD_FIRST}-{SENTINEL_LAST}]")
_HARD_PIECES = re.compile(f"[{HARD_FIRST}-{SENTINEL_LAST}]|[^{HARD_FIRST}-{SENTINEL_LAST}]+")


class _Text:
    """A text delta being built during one call (merged with following text of the same channel)."""

    __slots__ = ("channel", "entries", "parts", "upto")

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.parts: list[str] = []
        self.entries: list[TokenLogprob] = []
        self.upto = 0  # the unit its text reaches (exclusive): where its newest text came from


class LogprobBook:
    """Where the events of one call are built and where each logprob entry goes."""

    # Options (set once by the machine).
    _tools: bool  # tool-call parsing is on
    _id_factory: ToolCallIdFactory
    _stop: StopMatcher | None  # the stop sequences of the request
    # Where the machine is.
    _stage: Stage
    _json: JsonPhase
    _lead: bool  # leading newlines are still dropped
    _block: BlockParser | None
    _tool_calls: int
    _stop_at: int  # the unit of the stop match that ended the output
    _call_end: int  # the unit index right after the units of the current call
    _spaced: bool  # JSON mode: the space for the current stretch of non-JSON text was sent
    _sym: Symbolizer
    # What the current stage looks at (see ``TextStages._configure``).
    _stops: StopMatcher | None  # the stop matcher when stops apply in the current stage
    _interesting: re.Pattern[str]
    _interesting_inner: re.Pattern[str] | str | None
    _quick_ok: bool
    _quick_delta: type[ReasoningDelta | ContentDelta]
    #: Whether the text :meth:`OutputMachine.plain_token` gives goes out as reasoning (else as content).
    text_is_reasoning: bool
    #: Whether the stage is a JSON-mode value (:meth:`OutputMachine.json_lane` may then give a lane); may stay
    #: True a while after it ended (the lane itself checks).
    in_json_value: bool
    # Held text (see :mod:`dscodec.stream._held`).
    _pend: str
    _pend_pos: list[int]
    _nostrip: int
    _tail: str

    def __init__(self) -> None:
        self._spellings: dict[int, str] = {}  # sentinel code point -> the text it stands for
        self._hard_codes: dict[str, str] = {}  # spelling of another special id -> its hard sentinel
        #: The hard sentinels of other special ids (not the three markers') -> their spellings: inside a tool-call
        #: block such an id reads as the text it spells, as the same spelling in a text chunk does.
        self._other_spellings: dict[int, str] = {}
        self._pos = 0  # absolute index of the next unit
        # (unit of the token's last character, unit of its first character, entry), in token order.
        self._entries: deque[tuple[int, int, TokenLogprob]] = deque()
        self._orphans: tuple[list[TokenLogprob], list[TokenLogprob]] = ([], [])
        self._recs: list[_Text | Event] = []
        self._last_text: list[_Text | None] = [None, None]  # per channel: last delta of the current stretch
        # The next text starts a delta of its own (a removed marker or a special id parts the text around it).
        self._cut = False
        self._stretch = 0  # unit index where the current stretch of input starts
        self._incomplete = False  # the decoder holds part of a character: the text goes on in the next call

    def _spell(self, units: str) -> str:
        if units.isascii():
            return units
        return units.translate(self._spellings)

    def _events(self) -> list[Event]:
        """Build the events of this call from its records."""
        recs = self._recs
        events: list[Event] = []
        for rec in recs:
            if isinstance(rec, _Text):
                text = self._spell("".join(rec.parts))
                if text:
                    delta = ReasoningDelta if rec.channel == CH_REASONING else ContentDelta
                    events.append(delta(text, tuple(rec.entries)))
            else:
                events.append(rec)
        self._recs = []
        return events

    def _text_out(self, channel: Channel, text: str, upto: int) -> None:
        """Emit ``text``; entries anchored before unit ``upto`` go with it. A special id of token input written as
        text (a hard sentinel) is a delta of its own, as with the reference ("a<think>b" in one chunk of ids
        gives the deltas "a", "<think>" and "b")."""
        if text.isascii() or _HARD_UNIT.search(text) is None:
            self._text_piece(channel, text, upto)
            return
        end = len(text)
        for found in _HARD_PIECES.finditer(text):
            piece = found.group()
            piece_upto = upto - (end - found.end())  # one unit per position
            if HARD_FIRST <= piece[0] <= SENTINEL_LAST:  # (a run of text may begin above the sentinels)
                self._own_delta(channel, piece, piece_upto)
            else:
                self._text_piece(channel, piece, piece_upto)

    def _own_delta(self, channel: Channel, text: str, upto: int) -> None:
        """:meth:`_text_out` of ``text`` as a delta of its own: text before it and after it go in others."""
        self._cut = True
        self._text_piece(channel, text, upto)
        self._cut = True

    def _text_piece(self, channel: Channel, text: str, upto: int) -> None:
        recs = self._recs
        rec = recs[-1] if recs else None
        if not isinstance(rec, _Text) or rec.channel != channel or self._cut:
            rec = _Text(channel)
            recs.append(rec)
            self._cut = False
        rec.parts.append(text)
        rec.upto = max(rec.upto, upto)
        self._last_text[channel] = rec
        orphans = self._orphans[channel]
        if orphans:
            rec.entries.extend(orphans)
            orphans.clear()
        entries = self._entries
        while entries and entries[0][0] < upto:
            rec.entries.append(entries.popleft()[2])

    def _drop(self, upto: int, channel: Channel) -> None:
        entries = self._entries
        orphans = self._orphans[channel]
        while entries and entries[0][0] < upto:
            orphans.append(entries.popleft()[2])

    def _discard(self, upto: int) -> None:
        entries = self._entries
        while entries and entries[0][0] < upto:
            entries.popleft()

    def _give_entries(self, upto: int, before: int) -> None:
        """Entries anchored before unit ``before`` (of tokens whose text ends there, or of ids without text after
        it) go with the text just released up to unit ``upto`` (a delta of the current stage's channel; in JSON
        mode outside the value, its next delta)."""
        entries = self._entries
        rec = self._recs[-1] if self._recs else None
        if isinstance(rec, _Text) and rec.upto == upto:
            target = rec.entries
        else:
            target = self._orphans[CH_REASONING if self._stage == Stage.REASONING else CH_CONTENT]
        while entries and entries[0][0] < before:
            target.append(entries.popleft()[2])
