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
            pend = self._pend
            hold = stops.depth if stops is not None else 0
            if pend.endswith("\n"):
                hold = max(hold, 1)
            elif pend.endswith("\n`"):
                hold = max(hold, 2)
            elif pend.endswith("\n``"):
                hold = max(hold, 3)
            self._release(len(pend) - hold)
        return n
