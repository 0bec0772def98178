"""A bounded memo of results by exact key, for work a client resends with every request (tool schemas, the calls
in a conversation's history): the same key always stands for the same result, so a remembered one is the answer."""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["MISSING", "Memo"]

_K = TypeVar("_K")
_V = TypeVar("_V")

#: What ``memo.found.get(key, MISSING)`` gives for a key the memo does not hold (a result may itself be None).
MISSING: object = object()


class Memo(Generic[_K, _V]):
    """Results by key, ``found``. A key of more than ``longest`` units (its size as the caller counts it) is not
    kept; the memo starts over when it holds ``entries`` keys or would hold more than ``total`` units in all. Other
    threads keep the dict they hold when it starts over.

    Examples:
        >>> memo: Memo[str, int] = Memo(entries=2, longest=3)
        >>> memo.put("a", 1, 1); memo.put("long", 2, 4); memo.put("b", 3, 1); memo.put("c", 4, 1)
        >>> memo.found
        {'c': 4}
    """

    __slots__ = ("entries", "found", "longest", "total", "units")

    def __init__(self, *, longest: int, entries: int | None = None, total: int | None = None) -> None:
        self.longest = longest
        self.entries = entries
        self.total = total
        self.found: dict[_K, _V] = {}
        self.units = 0

    def put(self, key: _K, value: _V, units: int) -> None:
        """Remember ``value`` for ``key``, a key of ``units`` units."""
        if units > self.longest:
            return
        if (self.entries is not None and len(self.found) >= self.entries) or (
            self.total is not None and self.units + units > self.total
        ):
            self.clear()
        self.found[key] = value
        self.units += units

    def clear(self) -> None:
        self.found, self.units = {}, 0
