"""The text stages (reasoning, content, JSON-mode preamble and after): newline rules, ``</think>``, block
openers and stop sequences, one unit at a time, with a scan that skips what needs no closer look."""

from __future__ import annotations

import re

from dscodec.stream._held import TAIL_LENGTH, HeldText
from dscodec.stream._markers import (
    DSML,
    DSML_SOFT,
    DSML_SPELLING,
    EOS,
    HARD_FIRST,
    OPENER_START,
    SENTINEL_FIRST,
    SENTINEL_LAST,
    SENTINEL_RANGE,
    THINK,
    THINK_END_SPELLING,
    THINK_SOFT,
)
from dscodec.stream._stages import (
    CH_CONTENT,
    CH_REASONING,
    CONTENT,
    FENCES,
    JSON_AFTER,
    JSON_BEFORE,
    JSON_OFF,
    REASONING,
    Stage,
)
from dscodec.stream.dsml import BlockParser
from dscodec.stream.events import ContentDelta, OutputEnd, ReasoningDelta, ReasoningEnd, StopSequence

__all__ = ["TextStages"]

#: The soft sentinels a stop sequence may run through in text (the others reset a partial match).
SOFT_IN_STOPS = (THINK_SOFT, DSML_SOFT)
#: A run of units that, with stop sequences in the content, does nothing but step the matcher and be held
#: or released: no newline, no ``<``, no sentinel.
_STEPPED_RUN = re.compile(f"[^\n{OPENER_START}{SENTINEL_RANGE}]+")
#: The patterns of :meth:`TextStages._configure` by the characters and ranges they look for (a stage's, met
#: again in every response; stop sequences add their own first characters, so the table is kept small).
_PATTERNS: dict[tuple[str, str, bool], tuple[re.Pattern[str], re.Pattern[str] | str | None]] = {}
_PATTERNS_LIMIT = 256


#: Where a "<" may begin a block opener: right before a sentinel (the Dsml token, or another unit the general
#: path reads), a newline (which is then never dropped before a block) or the end of the units (the Dsml token may
#: come next). A "<" before any other character is text: the general path would hold it and release it at once.
_OPENER_AT = f"<(?=[\n{SENTINEL_RANGE}]|\\Z)"


def _patterns(chars: str, ranges: str, opener: bool) -> tuple[re.Pattern[str], re.Pattern[str] | str | None]:
    """The pattern of ``chars``, the sentinel ``ranges`` and, with ``opener``, a "<" where a block opener may
    begin (:data:`_OPENER_AT`); and what looks for the inner characters among them (ASCII, no newline) in plain
    token text: None, the one character, or a pattern. A "<" found that way is read again by the caller (plain
    token text holds no sentinel: a "<" before a newline or at its end)."""
    found = _PATTERNS.get((chars, ranges, opener))
    if found is not None:
        return found
    interesting = re.compile(
        "[" + "".join(re.escape(c) for c in chars) + ranges + "]" + ("|" + _OPENER_AT if opener else "")
    )
    # Plain token text (no stop sequences: a newline followed by more text on the same feed needs no closer
    # look) holds no sentinel, as the decoder writes no lone surrogate: only the ASCII characters here can
    # need one. One character is looked for with ``in``, several with a pattern.
    inner = "".join(c for c in chars if c != "\n" and c.isascii()) + (OPENER_START if opener else "")
    found = (
        interesting,
        None
        if not inner
        else inner
        if len(inner) == 1
        else re.compile("[" + "".join(re.escape(c) for c in inner) + "]"),
    )
    if len(_PATTERNS) >= _PATTERNS_LIMIT:
        _PATTERNS.clear()
    _PATTERNS[(chars, ranges, opener)] = found
    return found


class TextStages(HeldText):
    """Reasoning and content: what each unit does, and the stage changes they cause."""

    #: The parser of tool-call blocks (tests put one without its fast paths here).
    _block_parser: type[BlockParser] = BlockParser

    def _configure(self) -> None:
        """Build the fast-path pattern of the characters that need a closer look in the current stage."""
        chars = "\n" + EOS
        stage = self._stage
        content = stage == CONTENT
        opener = False
        if stage == REASONING or content:
            chars += THINK
            opener = self._tools
            if content and self._json == JSON_BEFORE:
                chars += "{[`"
        ranges = ""
        if self._stop is not None and (stage == Stage.JSON_VALUE or (content and self._json == JSON_OFF)):
            # Soft sentinels spell characters a stop may contain; hard ones reset a partial match.
            chars += "".join(self._stop.first_chars)
            ranges = SENTINEL_RANGE
            self._stops = self._stop
        else:
            self._stops = None
        if content and self._json != JSON_OFF:
            ranges = SENTINEL_RANGE  # JSON mode, outside the value: a special id is a stretch of its own
        if opener and OPENER_START in chars:  # a stop sequence starts with "<": every "<" steps the matcher
            opener = False
        self._interesting, self._interesting_inner = _patterns(chars, ranges, opener)
        self._update_quick()

    def _update_quick(self) -> None:
        self._quick_ok = self._stage in (REASONING, CONTENT) and not self._lead and self._json == JSON_OFF
        self.text_is_reasoning = self._stage is REASONING
        self.in_json_value = self._stage is Stage.JSON_VALUE  # where json_lane may open
        self._quick_delta = ReasoningDelta if self.text_is_reasoning else ContentDelta

    def _lead_over(self, text: str) -> bool:
        """The general path's first step for plain text (not empty) that starts with no newline, at the start of
        the reasoning or the content where leading newlines are dropped: none is left to drop, so the stage's
        middle begins (:attr:`_quick_ok` then holds). True when that step was taken here; False, with nothing
        changed, anywhere else."""
        if self._lead and text[0] != "\n" and self._stage in (REASONING, CONTENT) and self._json == JSON_OFF:
            self._lead = False
            self._update_quick()
            return True
        return False

    def _text_stage(self, u: str, i: int, base: int) -> int:
        n = len(u)
        stage = self._stage
        interesting = self._interesting
        while i < n:
            if self._lead:
                # Leading LFs are dropped. Observed: each one is checked against the stop sequences on its own
                # (a stop "\n" matches, "\n\n" or "\nEND" never does).
                j = i
                stops = self._stops
                while j < n and u[j] == "\n":
                    j += 1
                    if stops is not None:
                        hit = stops.step("\n")
                        stops.reset()
                        if hit >= 0:
                            self._drop(base + j, CH_CONTENT)
                            self._stop_hit(hit, base + j - 1)
                            return n
                if j > i:
                    self._drop(base + j, CH_REASONING if stage == REASONING else CH_CONTENT)
                    i = j
                if i == n:
                    return n
                self._lead = False
                self._update_quick()
                if stops is not None:
                    stops.reset()
            stops = self._stops
            if (
                self._pend
                and stops is None
                and self._json == JSON_OFF
                and not SENTINEL_FIRST <= u[i] <= SENTINEL_LAST
                and interesting.match(u, i) is None
            ):
                # Held text (a newline run, a "<") followed by a character that cannot continue a marker: it
                # would be released together with that character, so release it now and take the fast scan.
                self._release(len(self._pend))
            if not self._pend and (stops is None or not stops.depth):
                i = self._pass_plain(u, i, base, tail=self._tools)
                if i == n:
                    return n
            if stops is not None and stops.depth:
                # A stop sequence is partly matched: a run of plain units steps the matcher in one go.
                after = self._stepped_run(u, i, base)
                if after is not None:
                    i = after
                    continue
            # One unit, slowly.
            c = u[i]
            pos = base + i
            i += 1
            if c in THINK and self._json != JSON_AFTER:
                if stops is not None and c != THINK_SOFT:
                    stops.reset()
                elif stops is not None and self._stop_through(THINK_END_SPELLING, pos, keep=False):
                    return n
                self._think_end(pos)
                if self._stage != stage:
                    return i
                continue
            if c in DSML and self._tools and self._pend.endswith(OPENER_START):
                if (
                    stops is not None
                    and c == DSML_SOFT
                    and self._stop_through(DSML_SPELLING, pos, keep=False)
                ):
                    return n
                self._open_block(pos)
                return i
            if SENTINEL_FIRST <= c <= SENTINEL_LAST:
                if self._sentinel(c, pos):
                    return n
            elif self._json == JSON_BEFORE and stage == CONTENT and c in "{[":
                self._release(len(self._pend))
                self._spaced = False
                # The bracket that opens the value is a delta of its own (as the reference sends it).
                self._own_delta(CH_CONTENT, c, pos + 1)
                self._enter_json_value()
                return i
            else:
                sticky = c == "\n" and self._tools and self._tail.endswith(OPENER_START)
                if self._append_stepped(c, pos):
                    return n
                if sticky:
                    # Observed: a newline right after a "<" (which could have begun a block opener) is never
                    # dropped as a newline before a block. The reference also does this after longer partial
                    # openers ("<｜D") in text chunks but not in token ids, where "｜DSML｜" is one id; dscodec
                    # treats both alike, as the ids do (deviation D14).
                    if stage == REASONING:
                        # In the reasoning it waits with the run it starts: before </think> the run is dropped
                        # (as the reference does with token ids; in text chunks it keeps this newline, D14),
                        # before a block this newline stays.
                        self._release(len(self._pend) - 1)
                        self._sticky_at = pos
                        continue
                    self._nostrip = len(self._pend)
                    self._release(len(self._pend) - (stops.depth if stops is not None else 0))
                    continue
                if self._json == JSON_BEFORE and stage == CONTENT and c == "\n":
                    pend = self._pend
                    for fence in FENCES:
                        if pend.endswith(fence):
                            self._release(len(pend) - len(fence))
                            self._clear()
                            self._drop(pos + 1, CH_CONTENT)
                            self._spaced = False
                            self._enter_json_value()
                            return i
            self._release(len(self._pend) - self._hold_length())
        return n

    def _pass_plain(self, u: str, i: int, base: int, *, tail: bool) -> int:
        """Emit the run of units from ``i`` up to the next one that needs a closer look; return where it ends.

        Called only with nothing held and no stop partly matched. ``tail`` keeps the last units for the
        newline-after-``<`` rule of the stages that can open a block."""
        m = self._interesting.search(u, i)
        j = m.start() if m else len(u)
        if j > i:
            self._emit(u[i:j], base + j)
            if tail:
                self._tail = (self._tail + u[i:j])[-TAIL_LENGTH:]
        return j

    def _sentinel(self, c: str, pos: int) -> bool:
        """A special token spelled inside a text chunk (a sentinel unit) that does not change the stage: a soft
        ``</think>`` or ``｜DSML｜`` runs through the stop matcher (True if a stop matched); any other spelling
        resets a partial match and is held as plain text."""
        spelled = self._spellings[ord(c)]
        stops = self._stops
        if stops is not None and c in SOFT_IN_STOPS:
            return self._stop_through(spelled, pos, keep=True)
        if stops is not None:
            stops.reset()
        if c >= HARD_FIRST:
            # A special id of token input written as text is a delta of its own, and in JSON mode outside the value
            # a stretch of its own (with its own space). The text held before it is decided (no marker or stop goes
            # across it) and goes first. Observed: "a<think>b" in one chunk of ids gives the deltas "a", "<think>"
            # and "b" (in one text chunk, one delta); in JSON mode "x<think>y" gives three spaces (as text, one).
            self._release(len(self._pend))
            self._spaced, self._cut = False, True
            self._append(spelled, pos)
            self._release(len(self._pend))
            self._spaced, self._cut = False, True
            return False
        self._append(spelled, pos)
        return False

    def _stepped_run(self, u: str, i: int, base: int) -> int | None:
        """With stop sequences in the content (JSON mode off), the run of plain units from ``i`` (see
        :data:`_STEPPED_RUN`): each steps the matcher, then the run is held and all but the partly matched end
        released at once, as the unit-by-unit loop would leave it (holding and releasing unit by unit copies the
        held text each time, which a long partial match makes slow). Returns where the run ends (``len(u)`` when
        a stop matched), or None when no run starts at ``i``."""
        m = _STEPPED_RUN.match(u, i)
        if m is None:
            return None
        j = m.end()
        stops = self._stops
        assert stops is not None
        step = stops.step
        for k in range(i, j):
            hit = step(u[k])
            if hit >= 0:
                self._append_units(u[i : k + 1], base + i)
                self._stop_hit(hit, base + k)
                return len(u)
        self._append_units(u[i:j], base + i)
        self._release(len(self._pend) - self._hold_length())
        return j

    def _append_stepped(self, c: str, pos: int) -> bool:
        """Hold one plain unit and step the stop matcher with it; True if a stop matched (the output ends)."""
        self._append(c, pos)
        stops = self._stops
        if stops is not None:
            hit = stops.step(c)
            if hit >= 0:
                self._stop_hit(hit, pos)
                return True
        return False

    def _stop_through(self, spelling: str, pos: int, *, keep: bool) -> bool:
        """Run a spelled special token (from a text chunk) through the stop matcher; True if a stop matched."""
        stops = self._stops
        assert stops is not None
        size = len(self._pend)
        for ch in spelling:
            self._append(ch, pos)
            hit = stops.step(ch)
            if hit >= 0:
                self._stop_hit(hit, pos)
                return True
        if not keep:
            self._pend = self._pend[:size]
            del self._pend_pos[size:]
        return False

    def _stop_hit(self, index: int, pos: int) -> None:
        assert self._stops is not None
        stop = self._stops.stops[index]
        keep = max(0, len(self._pend) - len(stop))
        if keep:
            self._release(keep)
            self._give_held(self._pend_pos[0])
        self._clear()
        self._stop_at = pos
        self._recs.append(StopSequence(stop))
        self._recs.append(OutputEnd(self._tool_calls, stop))
        self._stage = Stage.FINISHED
        self._quick_ok = False  # feed_plain_token must not take its fast path any more

    def _think_end(self, pos: int) -> None:
        """``</think>``: ends the reasoning; removed from the content."""
        pend = self._pend
        self._tail = ""
        if self._stage == REASONING:
            keep = pend if pend.endswith(OPENER_START) else self._strip_newlines(pend)
            self._release(len(keep))
            self._clear()
            self._drop(pos, CH_REASONING)
            self._discard(pos + 1)
            self._recs.append(ReasoningEnd())
            self._stage = CONTENT
            self._lead = True
            self._configure()
        else:
            self._release(len(pend))
            self._discard(pos + 1)
            self._cut = True  # the text after it is a delta of its own, as with the reference
            # JSON mode: the removed marker also ends a stretch of non-JSON text (the reference sends one space
            # per piece of text on each side of it, also for a whole output in one chunk).
            self._spaced = False
        if self._stops is not None:
            self._stops.reset()

    def _open_block(self, pos: int) -> None:
        """``<`` + Dsml: the text before it (minus the newlines that separate it) is emitted."""
        body = self._pend[:-1]
        keep = self._strip_newlines(body)
        if not keep and body and self._pend_pos[0] == self._sticky_at:
            keep = body[:1]  # the newline right after a "<" stays before a block
        if keep:
            self._release(len(keep))
            self._give_held(self._pend_pos[0])
        self._clear()
        self._drop(pos, CH_REASONING if self._stage == REASONING else CH_CONTENT)
        if self._stage == REASONING:
            self._recs.append(ReasoningEnd())
        self._enter_block()

    def _enter_block(self) -> None:
        self._stage = Stage.TOOL_CALLS
        self._block = self._block_parser(spell=self._spell, id_factory=self._id_factory)
        self._quick_ok = False

    def _enter_json_value(self) -> None:
        self._stage = Stage.JSON_VALUE
        if self._stop is not None:
            self._stop.reset()
        self._configure()
