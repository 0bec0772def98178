"""Held-back text of the text stages: the pending buffer and when its characters are released.

Text is held while it may still become part of a marker (a ``<`` before the Dsml token), a newline run that is
dropped before ``</think>`` or a block, a JSON-mode fence, or a stop sequence; each held character keeps the unit
index it came from, so its logprob entries go with it when it is released.
"""

from __future__ import annotations

from collections import deque

from dscodec.stream._logprobs import LogprobBook
from dscodec.stream._markers import DSML_FIRST, OPENER_START, THINK_END_SPELLING
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

#: The held starts of spellings that a block opener may still begin with: "<" and "<" + the Dsml token's first
#: character (the recogniser holds "<｜" as the start of the end-of-sentence spelling).
OPENER_PREFIXES = frozenset({OPENER_START, OPENER_START + DSML_FIRST})

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
        #: What the spelling recogniser holds after the units of the latest text chunk (the start of a spelling,
        #: which comes next whatever it becomes), and the unit index right after those units (-1: nothing held).
        #: Text held at the very end of the units waits only for what that start leaves undecided.
        self._ahead = ""
        self._ahead_at = -1
        #: The last held newline run the fast path or :meth:`_append` made (the very string object, so ``_pend is
        #: _newline_run`` proves in O(1) that the held text is newlines only: a long run pushed newline by newline
        #: stays linear).
        self._newline_run = ""
        #: The starts of the stretches of input after the first that the held text spans (ascending; see
        #: :meth:`_give_held`).
        self._held_starts: deque[int] = deque()

    def _hold_length(self) -> int:
        pend = self._pend
        if not pend:
            return 0
        hold = 0
        stage = self._stage
        ahead = self._ahead_of_pend()
        if stage == REASONING or self._tools:
            if self._tools and pend[-1] == OPENER_START:
                # Only the Dsml token after it makes a block opener ("a<" with "<" held: the first "<" is text).
                if not ahead or ahead[0] == DSML_FIRST:
                    body = pend[:-1]
                    hold = 1 + len(body) - len(body.rstrip("\n"))
            elif pend[-1] == "\n" and not (ahead and self._keeps_newlines(ahead)):
                hold = len(pend) if pend is self._newline_run else len(pend) - len(pend.rstrip("\n"))
        hold = min(hold, len(pend) - self._nostrip)
        if self._json == JSON_BEFORE and stage == CONTENT and not ahead:  # no fence goes on with "<" or "｜"
            for k in range(min(LONGEST_FENCE_PREFIX, len(pend)), 0, -1):
                if pend[-k:] in FENCE_PREFIXES:
                    hold = max(hold, k)
                    break
        return hold if self._stops is None else max(hold, self._stop_hold(ahead))

    def _ahead_of_pend(self) -> str:
        """The held start of a spelling right after the held text (``""``: none, or not right after it)."""
        return self._ahead if self._pend_pos[-1] + 1 == self._ahead_at else ""

    def _stop_hold(self, ahead: str) -> int:
        """How much of the held text a partly matched stop sequence keeps back."""
        stops = self._stops
        if stops is None:
            return 0
        depth = stops.depth
        if depth and ahead:
            # Whatever the held start becomes, the stop matcher reads its characters next (or the output ends):
            # only the part of the match that may go on through them waits.
            after = stops.depth_after(ahead)
            if after >= 0:
                depth = max(0, after - len(ahead))
        return depth

    def _keeps_newlines(self, ahead: str) -> bool:
        """Whether a newline run at the end of the units stays, with ``ahead`` (the held start of a spelling)
        right after it: it is dropped only before ``</think>`` in the reasoning and before a block opener."""
        if self._stage == REASONING and THINK_END_SPELLING.startswith(ahead):
            return False
        return not (self._tools and ahead in OPENER_PREFIXES)

    def _release(self, count: int) -> None:
        """Emit the first ``count`` characters of the held text."""
        if count <= 0:
            return
        pend = self._pend
        if count < len(pend):
            upto = self._pend_pos[count]
            self._emit(pend[:count], upto)
            entries = self._entries
            if entries and entries[0][1] < upto:
                # The released text ends inside a token whose rest is still held: its entry goes with the part
                # released (whatever the rest becomes, as when a stop sequence swallows it).
                self._give_entries(upto, entries[0][0] + 1)
        else:
            self._emit(pend, self._pend_pos[-1] + 1)
        self._pend = pend[count:]
        del self._pend_pos[:count]
        self._nostrip = max(0, self._nostrip - count)

    def _note_stretch(self) -> None:
        """A stretch of input starts (at ``_stretch``) while text is held: remember where, for :meth:`_give_held`."""
        starts = self._held_starts
        first = self._pend_pos[0]
        while starts and starts[0] <= first:
            starts.popleft()
        starts.append(self._stretch)

    def _give_held(self, upto: int) -> None:
        """A stop sequence or a block opener decided the held text: the part before unit ``upto`` was released
        and the rest is dropped. When the released text ends in an earlier stretch of input, it also takes the
        entries of that stretch's tokens whose text is dropped (the held ``<``, newlines, the start of the match),
        as the reference sends a held stretch as a delta with its entries."""
        end = self._stretch
        if upto > end or not self._entries:
            return  # it ends in this stretch (_settle decides), or no entry waits
        for start in self._held_starts:
            if start >= upto:
                end = min(end, start)
                break
        self._give_entries(upto, end)

    def _strip_newlines(self, text: str) -> str:
        nostrip = self._nostrip
        return text[:nostrip] + text[nostrip:].rstrip("\n")

    def _clear(self) -> None:
        self._pend = ""
        self._pend_pos = []
        self._nostrip = 0

    def _append(self, text: str, pos: int) -> None:
        run = text == "\n" and (not self._pend or self._pend is self._newline_run)
        self._pend += text
        if run:  # the held run goes on (see _newline_run)
            self._newline_run = self._pend
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
        themselves. In JSON mode the content's orphans always wait for its next delta (D19): a stretch of text
        outside the value sends one space however it is pushed (D7), so the text of a later push in it, or a
        fence, sends none, where the reference sends a space with its entries.
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
                channel == current
                and (
                    self._incomplete
                    or (self._json != JSON_OFF and channel == CH_CONTENT)
                    or self._marker_hold_start() < self._pos
                )
            ):
                orphans.clear()
