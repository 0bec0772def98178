"""Fast paths of the output machine: plain text in the middle of a stage, without the general loop.

Each one gives exactly the events of the general path (``tests/property/test_fast_paths.py`` checks it with the
fast path switched off) and declines (returns None) whenever it is not sure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dscodec.stream._held import TAIL_LENGTH
from dscodec.stream._json_value import JsonValueStage
from dscodec.stream._markers import EOS_HARD, EOS_SOFT, OPENER_START
from dscodec.stream._stages import DISCARD, REASONING
from dscodec.stream.events import Event, TokenLogprob

if TYPE_CHECKING:
    from dscodec.stream.dsml import BlockParser

__all__ = ["FastPaths"]

#: In plain token text (no sentinel), a "<" where a block opener may begin: before a newline or at the end. One
#: before any other character is text, as the general path finds at once.
_OPENER_HELD = re.compile("<(?:\n|\\Z)")


class FastPaths(JsonValueStage):
    """The shortcuts :class:`~dscodec.stream.machine.OutputMachine` takes before its general path."""

    _tokens_only: bool

    if TYPE_CHECKING:

        def _process(self, units: str, *, carried: int = 0) -> list[Event]: ...  # the general path

    def _quick(self, units: str, logprobs: Sequence[TokenLogprob] | None) -> list[Event] | None:
        """The hot path: plain text in the middle of the reasoning or the content, nothing held."""
        if self._pend or self._interesting.search(units) is not None:
            return None
        stops = self._stops
        if stops is not None and stops.depth:
            return None
        if self._orphans[0] or self._orphans[1]:
            return None
        self._pos += len(units)
        if self._tools:
            self._tail = (
                units[-TAIL_LENGTH:] if len(units) >= TAIL_LENGTH else (self._tail + units)[-TAIL_LENGTH:]
            )
        return [
            self._quick_delta(
                units if units.isascii() else self._spell(units), tuple(logprobs) if logprobs else ()
            )
        ]

    def _empty_token(self) -> list[Event] | None:
        """One ordinary id without logprobs that completes no character (part of a UTF-8 sequence): nothing
        happens, unless entries of dropped text wait for the end of this stretch."""
        if self._orphans[0] or self._orphans[1]:
            return None
        return []

    def _empty_chunk(self) -> str | None:
        """An empty text chunk in the middle of the reasoning or the content, nothing waiting (no spelling held,
        no logprob entries, no delta of the stretch to settle): it gives nothing (``""``) and changes nothing but
        the two flags :meth:`feed` clears; None when the general path must see it."""
        if (
            not self._quick_ok
            or self._sym.held
            or self._entries
            or self._orphans[0]
            or self._orphans[1]
            or self._last_text[0] is not None
            or self._last_text[1] is not None
        ):
            return None
        self._tokens_only = False
        self._incomplete = False
        return ""

    def _plain_text(self, text: str) -> str | None:
        """Plain token text (not empty) in the middle of the reasoning or the content, possibly ending in a newline
        run (held back: a marker may follow) or following a held newline run (released with it): the text the
        current channel emits (``""``: nothing yet), or None when the general path must decide.

        The commonest case first (the per-push path of the lanes): nothing held, no stop sequences, no newline at
        either end; then the text is emitted as it is unless it may hold a marker."""
        if self._pend or self._stops is not None or text[-1] == "\n" or text[0] == "\n":
            return self._plain_text_full(text)
        inner = self._interesting_inner
        if inner is not None:
            if isinstance(inner, str):
                if inner in text and (inner != OPENER_START or _OPENER_HELD.search(text) is not None):
                    # Text that ends in a "<" where a block opener may begin (the "<" before a block's Dsml
                    # token, say) is held there, as below.
                    return self._plain_text_full(text) if text[-1] == OPENER_START else None
            elif inner.search(text) is not None:
                return None
        if self._tools:
            # As below: the tail only tells whether a "<" ends the text, and none does here.
            self._tail = ""
        self._pos += len(text)
        return text

    def _opener_start_ends(self, pend: str, text: str) -> bool:
        """Whether plain token ``text`` shows the held ``pend`` to be text: a "<" held where a block opener may
        begin (with the newline run before it, which an opener would drop), followed by a character that is no
        Dsml token and no newline (one right after a "<" is never dropped), as the general path finds at once."""
        return (
            pend[-1] == OPENER_START
            and self._tools
            and text[0] != "\n"
            and not pend[:-1].strip("\n")
            and self._sticky_at < 0
        )

    def _plain_text_full(self, text: str) -> str | None:
        """:meth:`_plain_text` in every case."""
        if self._stops is not None:
            return self._plain_text_stops(text)  # (before taking the held text: see _plain_text_stops)
        pend = self._pend
        if (
            pend
            and pend is not self._newline_run
            and pend.strip("\n")
            and not self._opener_start_ends(pend, text)
        ):
            return None
        body = text.rstrip("\n") if text[-1] == "\n" else text
        inner = self._interesting_inner
        if inner is not None:
            if isinstance(inner, str):
                if inner in body and (inner != OPENER_START or _OPENER_HELD.search(body) is not None):
                    if (
                        inner == OPENER_START
                        and text[-1] == OPENER_START
                        and "<\n" not in text
                        and not self._nostrip
                        and self._sticky_at < 0
                    ):
                        return self._held_opener_start(pend, text, 0)
                    return None
            elif inner.search(body) is not None:
                return None
        if self._tools:
            if text[0] == "\n" and self._tail.endswith(OPENER_START):
                return None  # a newline after a partial opener
            # The tail only serves to see a "<" (where a block opener may begin) at its end; this text has none
            # there (a "<" it holds is followed by another character), so an empty tail answers the same.
            self._tail = ""
        base = self._pos
        self._pos = base + len(text)
        run = len(text) - len(body)
        if run and (self._tools or self._stage is REASONING):
            # A newline run at the end waits: newlines right before </think> or a block are dropped.
            if body:
                self._pend = self._newline_run = text[len(body) :]
                self._pend_pos = list(range(base + len(body), base + len(text)))
                self._nostrip = 0
                return pend + body
            # (pend is empty or newlines only here: text is, and one after a held "<" would have been declined)
            # With no other reference left, "+=" grows the run in place (CPython): a long run stays linear.
            self._pend = self._newline_run = ""
            pend += text
            self._pend = self._newline_run = pend
            self._pend_pos.extend(range(base, base + run))
            return ""
        if pend:
            self._clear()
            return pend + text
        return text

    def _plain_text_stops(self, text: str, stop_hold: int = -1) -> str | None:
        """:meth:`_plain_text` in the content with stop sequences: the matcher reads the whole text at once (None,
        with nothing changed, when a stop sequence ends in it: the general path ends the output there), then what
        the general path would hold after it waits: the partly matched end and, with tools, a newline run at the
        end (a block may follow). A "<" where a block opener may begin, and the rarer held states, go the general
        way. ``stop_hold``, when given, is what the partly matched end keeps back instead of the matcher's depth
        (a held spelling start comes right after the text: see :meth:`_stop_hold`)."""
        stops = self._stops
        assert stops is not None
        if self._nostrip or self._sticky_at >= 0:
            return None
        pend = self._pend
        tools = self._tools
        opener_end = False
        if tools:
            if (
                pend is not self._newline_run
                and OPENER_START in pend
                and not self._opener_start_ends(pend, text)
            ):
                return None
            if OPENER_START in text and _OPENER_HELD.search(text) is not None:
                if text[-1] != OPENER_START or "<\n" in text:
                    return None
                opener_end = True
            if text[0] == "\n" and self._tail.endswith(OPENER_START):
                return None
        if not stops.advance(text):
            return None
        if opener_end:
            return self._held_opener_start(pend, text, stops.depth)
        if tools and pend and pend is self._newline_run and not text.strip("\n"):
            # A held run goes on: all of it waits (a partial match is no longer than it), grown in place as in
            # _plain_text_full, so that a long run stays linear.
            self._tail = ""
            base = self._pos
            self._pos = base + len(text)
            self._pend_pos.extend(range(base, base + len(text)))
            self._pend = self._newline_run = ""
            pend += text
            self._pend = self._newline_run = pend
            return ""
        full = pend + text if pend else text
        hold = stops.depth if stop_hold < 0 else stop_hold
        run = 0
        if tools:
            if full[-1] == "\n":
                run = len(full) - len(full.rstrip("\n"))
                hold = max(hold, run)
            self._tail = ""  # it only tells whether a "<" ends the text, and none does
        if not hold:
            self._pos += len(text)
            if pend:
                self._clear()
            return full
        emitted = self._hold_back(full, len(text), hold)
        if run == hold:
            self._newline_run = self._pend
        return emitted

    def _held_opener_start(self, pend: str, text: str, depth: int) -> str:
        """The end of :meth:`_plain_text` for text (with tools) that ends in a "<" where a block opener may begin
        (no other "<" in it does, and none is followed by a newline): that "<" waits, with the newline run right
        before it (an opener would drop it), or the ``depth`` characters a stop sequence has partly matched if
        they are more. Returns the text to emit."""
        full = pend + text if pend else text
        before = full[:-1]
        self._tail = OPENER_START  # only read for whether a "<" ends it
        return self._hold_back(full, len(text), max(depth, len(full) - len(before.rstrip("\n"))))

    def _hold_back(self, full: str, added: int, hold: int) -> str:
        """Hold the last ``hold`` characters of ``full`` (the held text, then ``added`` new units from the current
        position on) and return the rest, to emit."""
        base = self._pos
        self._pos = base + added
        positions = self._pend_pos
        positions.extend(range(base, base + added))
        keep = len(full) - hold
        if keep > 0:
            del positions[:keep]
            self._pend = full[keep:]
            return full[:keep]
        self._pend = full
        return ""

    def _plain_json_value(self, text: str) -> str | None:
        """Plain token text inside a JSON-mode value without stop sequences: released at once, but for a newline
        at its end (the closing fence may follow). Held text there is at most ``\\n`` plus two backticks. Returns
        the content text to emit (``""``: nothing yet), or None when the general path must decide."""
        if self._stops is not None:
            return None
        pend = self._pend
        if pend:
            full = pend + text
            if "\n`" in full:
                return None  # a closing fence may be coming: the general path
            self._pend = ""  # _clear, inline (this is the per-push path)
            self._pend_pos = []
            self._nostrip = 0
        elif "\n`" in text:
            return None
        else:
            full = text
        self._pos = end = self._pos + len(text)
        if full[-1] == "\n":
            # ``_tail`` is left alone: it is only read in the text stages, and the closing fence that leads back
            # to them rewrites its last character.
            self._pend = "\n"
            self._pend_pos = [end - 1]
            full = full[:-1]
        return full

    def _tool_units(self, units: str) -> list[Event] | None:
        """Units inside a tool-call block (no logprob entries waiting), straight to the block parser; not when
        they hold the end-of-sentence token."""
        if EOS_SOFT in units or EOS_HARD in units:
            return None
        return self._feed_block(units)

    def _feed_block(self, units: str) -> list[Event]:
        """Units with no end-of-sentence token inside a tool-call block, to the block parser: its events."""
        block = self._block
        assert block is not None
        self._pos += len(units)
        out: list[Event] = []
        # Another special id (not a marker) reads as the text it spells, as the same spelling in a text chunk does:
        # inside a tag its ">" ends the tag, whichever way the output came.
        block.feed(units.translate(self._other_spellings) if self._other_spellings else units, out)
        if self._sym.held and self._stops is None and not block.done:
            self._read_ahead(block, out)
        self._tool_calls = block.calls
        if block.done:
            self._stage = DISCARD
        return out

    def _read_ahead(self, block: BlockParser, out: list[Event]) -> None:
        """A text chunk left the start of a spelling held: what the block parser holds before it may be decided
        by it, and it may be value text whatever it becomes (then it goes to the parser now)."""
        if block.read_ahead(self._sym.held, out):
            held = self._sym.flush()
            self._pos += len(held)
            block.feed(held, out)
