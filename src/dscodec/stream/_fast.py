"""Fast paths of the output machine: plain text in the middle of a stage, without the general loop.

Each one gives exactly the events of the general path (``tests/property/test_fast_paths.py`` checks it with the
fast path switched off) and declines (returns None) whenever it is not sure.
"""

from __future__ import annotations

from collections.abc import Sequence

from dscodec.stream._held import TAIL_LENGTH
from dscodec.stream._json_value import JsonValueStage
from dscodec.stream.events import Event, TokenLogprob

__all__ = ["FastPaths"]


class FastPaths(JsonValueStage):
    """The shortcuts :class:`~dscodec.stream.machine.OutputMachine` takes before its general path."""

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
            self._tail = units[-TAIL_LENGTH:] if len(units) >= 8 else (self._tail + units)[-TAIL_LENGTH:]
        return [
            self._quick_delta(
                units if units.isascii() else self._spell(units), tuple(logprobs) if logprobs else ()
            )
        ]
