"""JSON mode's value (behavior.md#json-mode, deviation D7): text passes verbatim until the closing fence."""

from __future__ import annotations

from dscodec.stream._markers import SENTINEL_FIRST, SENTINEL_LAST
from dscodec.stream._stages import CH_CONTENT, CLOSE_FENCE, CONTENT, JSON_AFTER
from dscodec.stream._text_stage import TextStages

__all__ = ["JsonValueStage"]


class JsonValueStage(TextStages):
    """The JSON value of JSON mode: stop sequences apply; the closing fence (a newline and three backticks) ends
    it, and the content goes on after it."""

    def _json_value(self, u: str, i: int, base: int) -> int:
        n = len(u)
        stops = self._stops
        while i < n:
            if not self._pend and (stops is None or not stops.depth):
                i = self._pass_plain(u, i, base, tail=False)
                if i == n:
                    return n
            c = u[i]
            pos = base + i
            i += 1
            if SENTINEL_FIRST <= c <= SENTINEL_LAST:
                if self._sentinel(c, pos):
                    return n
            else:
                if self._append_stepped(c, pos):
                    return n
                if c == "`" and self._pend.endswith(CLOSE_FENCE):
                    self._release(len(self._pend) - len(CLOSE_FENCE))
                    self._clear()
                    self._drop(pos + 1, CH_CONTENT)
                    self._stage = CONTENT
                    self._json = JSON_AFTER
                    self._spaced = False
                    self._configure()
                    return i
            self._release(len(self._pend) - self._value_hold_length())
        return n

    def _value_hold_length(self) -> int:
        """How much of the held text of the value waits: the start of the closing fence, a partly matched stop."""
        pend = self._pend
        if not pend:
            return 0
        ahead = self._ahead_of_pend()
        hold = self._stop_hold(ahead)
        if ahead:  # the closing fence does not go on with "<" or "｜"
            return hold
        if pend.endswith("\n"):
            return max(hold, 1)
        if pend.endswith("\n`"):
            return max(hold, 2)
        if pend.endswith("\n``"):
            return max(hold, 3)
        return hold
