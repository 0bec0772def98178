"""Held-back text of the text stages: the pending buffer and when its characters are released.

Text is held while it may still become part of a marker (a ``<`` before the Dsml token), a newline run that is
dropped before ``</think>`` or a block, a JSON-mode fence, or a stop sequence; each held character keeps the unit
index it came from, so its logprob entries go with it when it is released.
"""

from __future__ import annotations

from dscodec.stream._logprobs import LogprobBook
from dscodec.stream._markers import OPENER_START
from dscodec.stream._stages import (
    CH_CONTENT,
    CH_REASONING,
    CONTENT,
    FENCE_PREFIXES,
    JSON_BEFORE,
    JSON_OFF,
    JSON_VALUE,
    LONGEST_FENCE_PREFIX,
    REASONING,
)

__all__ = ["TAIL_LENGTH", "HeldText"]

#: Characters of the text stage kept in ``_tail`` (to see a partial block opener before a newline).
TAIL_LENGTH = 8


class HeldText(LogprobBook):
    """The pending buffer: ``_pend`` (raw units held back), ``_pend_pos`` (the unit index of each), ``_nostrip``
    (leading characters never dropped as newlines before a marker) and ``_tail``."""

    def __init__(self) -> None:
        super().__init__()
        self._pend = ""
        self._tail = ""
        self._nostrip = 0
        self._pend_pos = []
        self._spaced = False
        #: The unit index of a held newline that came right after a "<" in the reasoning (kept before a block).
        self._sticky_at = -1
        #: The unit index right after the units of the latest text chunk when the spelling recogniser holds text
        #: after them that cannot become the Dsml token (it starts with another character): a "<" that ends
        #: those units is then no block opener's start, and nothing waits for it (-1: no such chunk end).
        self._plain_after = -1

    def _hold_length(self) -> int:
        pend = self._pend
        if not pend:
            return 0
        hold = 0
        stage = self._stage
        if stage == REASONING or self._tools:
            if self._tools and pend[-1] == OPENER_START and self._pend_pos[-1] + 1 != self._plain_after:
                body = pend[:-1]
                hold = 1 + len(body) - len(body.rstrip("\n"))
            elif pend[-1] == "\n":
                hold = len(pend) - len(pend.rstrip("\n"))
        hold = min(hold, len(pend) - self._nostrip)
        if self._json == JSON_BEFORE and stage == CONTENT:
            for k in range(min(LONGEST_FENCE_PREFIX, len(pend)), 0, -1):
                if pend[-k:] in FENCE_PREFIXES:
                    hold = max(hold, k)
                    break
        if self._stops is not None:
            hold = max(hold, self._stops.depth)
        return hold

    def _release(self, count: int) -> None:
        """Emit the first ``count`` characters of the held text."""
        if count <= 0:
            return
        pend = self._pend
        upto = self._pend_pos[count] if count < len(pend) else self._pend_pos[-1] + 1
        self._emit(pend[:count], upto)
        self._pend = pend[count:]
        del self._pend_pos[:count]
        self._nostrip = max(0, self._nostrip - count)

    def _strip_newlines(self, text: str) -> str:
        nostrip = self._nostrip
        return text[:nostrip] + text[nostrip:].rstrip("\n")

    def _clear(self) -> None:
        self._pend = ""
        self._pend_pos = []
        self._nostrip = 0

    def _append(self, text: str, pos: int) -> None:
        self._pend += text
        self._pend_pos.extend([pos] * len(text))
        if self._tools:
            self._tail = (self._tail + text)[-TAIL_LENGTH:]

    def _append_units(self, units: str, pos: int) -> None:
        """:meth:`_append` for units from ``pos`` on, each at its own index."""
        self._pend += units
        self._pend_pos.extend(range(pos, pos + len(units)))
        if self._tools:
            self._tail = (self._tail + units)[-TAIL_LENGTH:]

    def _emit(self, text: str, upto: int) -> None:
        """Emit released text of the current text stage (JSON mode turns it into a space)."""
        if not text:
            return
        if self._stage == REASONING:
            self._text_out(CH_REASONING, text, upto)
        elif self._json == JSON_OFF or self._stage == JSON_VALUE:
            self._text_out(CH_CONTENT, text, upto)
        elif not self._spaced:
            # D7: one space for each stretch of text outside the JSON value, whatever the chunking; each a delta
            # of its own (as the reference sends them).
            self._spaced = True
            self._own_delta(CH_CONTENT, " ", upto)
        else:
            self._drop(upto, CH_CONTENT)

    def _marker_hold_start(self) -> int:
        """Unit index where held text that may still be a marker or stop sequence starts (not newline runs)."""
        pend = self._pend
        if not pend:
            return self._pos
        k = 0
        if self._stops is not None:
            k = self._stops.depth
        if self._tools and pend[-1] == OPENER_START:
            k = max(k, 1)
        if self._stage == JSON_VALUE:
            for size, tail in ((3, "\n``"), (2, "\n`"), (1, "\n")):
                if pend.endswith(tail):
                    k = max(k, size)
                    break
        elif self._json == JSON_BEFORE:
            for size in range(min(LONGEST_FENCE_PREFIX, len(pend)), 0, -1):
                if pend[-size:] in FENCE_PREFIXES:
                    k = max(k, size)
                    break
        return self._pend_pos[len(pend) - k] if k else self._pos

    def _settle(self) -> None:
        """End of a stretch of input: decide where logprob entries of dropped or held text go.

        Observed on the reference: when the stretch sent a delta of a channel holding text of the stretch
        itself, the entries orphaned in that channel, and (for the current channel) those of tokens whose text is
        still held back, go with its last such delta (a delta that only releases text held from before does not
        count). Otherwise orphaned entries are dropped — unless a possible marker is still held, or the decoder
        holds part of a character, in which case they wait for the text that follows, like the held tokens
        themselves.
        """
        stage = self._stage
        current = -1
        if stage == REASONING:
            current = CH_REASONING
        elif stage in (CONTENT, JSON_VALUE):
            current = CH_CONTENT
        for channel in (CH_REASONING, CH_CONTENT):
            orphans = self._orphans[channel]
            last = self._last_text[channel]
            self._last_text[channel] = None
            if last is not None and last.upto > self._stretch:
                if channel == current:
                    self._drop(self._pos, channel)
                if orphans:
                    last.entries.extend(orphans)
                    orphans.clear()
            elif orphans and not (
                channel == current and (self._incomplete or self._marker_hold_start() < self._pos)
            ):
                orphans.clear()
