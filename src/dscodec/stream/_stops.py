"""Stop sequences: an incremental multi-pattern matcher (behavior.md#stop-sequences)."""

from __future__ import annotations

import operator
import re
from array import array
from collections import deque
from collections.abc import Callable
from typing import Any

from dscodec._memo import Memo
from dscodec.stream._markers import sanitize_text

__all__ = ["StopMatcher"]

#: The automata built, by the stop sequences given: a client sends the same ones with every request, and an
#: automaton never changes once built (a matcher's own state is its node and depth), so matchers share it. Bounded
#: by the characters of the stop sequences (a stop sequence is at most 4096 characters, deviation D16).
_AUTOMATA: Memo[tuple[str, ...], tuple[Any, ...]] = Memo(longest=16_384, entries=256, total=65_536)
#: A built matcher's automaton, as :data:`_AUTOMATA` keeps it (the fields' types are the class's annotations).
_automaton_of = operator.attrgetter(
    "stops", "first_chars", "_chars", "_search", "_parent", "_code", "_depth", "_best", "_more", "_fail"
)


class StopMatcher:
    """Incremental multi-pattern matcher for stop sequences (behavior.md#stop-sequences): an Aho–Corasick automaton.

    It reports the stop sequence that *ends* first; when several end on the same character, the one listed
    first in the request wins (observed: ``abcd`` with ``["abcd", "bc"]`` gives ``a``; ``xabcd`` with
    ``["cd", "bcd", "abcd"]`` gives ``xab``). Between matches it is at the longest suffix of the input that is a
    proper prefix of some stop sequence; :attr:`depth` is that suffix's length, exactly the number of trailing
    characters that must be held back.

    Cost: building takes time and memory proportional to the total length of the stop sequences (a trie with
    failure links, kept in flat arrays: a node with a single child stores no table of its own); each character
    then costs O(1) amortised, whatever the lengths.

    Examples:
        >>> m = StopMatcher(["END", "NEXT"])
        >>> [m.step(c) for c in "xEN"], m.depth
        ([-1, -1, -1], 2)
        >>> m.step("D"), m.depth
        (0, 0)
    """

    __slots__ = (
        "_best",
        "_chars",
        "_code",
        "_depth",
        "_fail",
        "_more",
        "_node",
        "_parent",
        "_search",
        "depth",
        "first_chars",
        "stops",
    )

    stops: tuple[str, ...]
    first_chars: frozenset[str]
    _chars: frozenset[str]
    _search: Callable[[str, int], re.Match[str] | None] | None
    _parent: array[int]
    _code: array[int]
    _depth: array[int]
    _best: array[int]
    _more: dict[int, dict[int, int]]
    _fail: array[int]

    def __init__(self, stops: list[str]) -> None:
        key = tuple(stops)
        built = _AUTOMATA.found.get(key)
        if built is None:
            self._build(key)
            _AUTOMATA.put(key, _automaton_of(self), sum(len(stop) for stop in key))
        else:
            (
                self.stops,
                self.first_chars,
                self._chars,
                self._search,
                self._parent,
                self._code,
                self._depth,
                self._best,
                self._more,
                self._fail,
            ) = built
        self.depth = 0
        self._node = 0

    def _build(self, stops: tuple[str, ...]) -> None:
        """The automaton of ``stops`` (the fields :data:`_automaton_of` reads), built in place."""
        self.stops = tuple(sanitize_text(s) for s in stops if s)
        self.first_chars = frozenset(s[0] for s in self.stops)
        self._chars = frozenset("".join(self.stops))
        #: Finds the next character that begins some stop sequence: with nothing partly matched, any other one
        #: leaves the matcher where it is (at the root), so the text up to it is skipped in one search.
        self._search = (
            re.compile("[" + "".join(map(re.escape, sorted(self.first_chars))) + "]").search
            if self.stops
            else None
        )
        # Node 0 is the root. A node's children are the node created right after it along the same stop (when
        # ``_parent`` of that node says so) plus, for branching points, the entries of ``_more``.
        self._parent = array("q", [-1])
        self._code = array("l", [0])  # the code point on the edge into each node
        self._depth = array("q", [0])
        self._best = array("q", [-1])  # the first-listed stop ending at this node (own or via failure links)
        self._more = {}
        for index, stop in enumerate(self.stops):
            node = 0
            for ch in stop:
                code = ord(ch)
                child = self._child(node, code)
                if child < 0:
                    child = len(self._parent)
                    if child != node + 1:
                        self._more.setdefault(node, {})[code] = child
                    self._parent.append(node)
                    self._code.append(code)
                    self._depth.append(self._depth[node] + 1)
                    self._best.append(-1)
                node = child
            if self._best[node] < 0:
                self._best[node] = index
        self._fail = array("q", bytes(8 * len(self._parent)))
        self._link()

    def _child(self, node: int, code: int) -> int:
        nxt = node + 1
        if nxt < len(self._parent) and self._parent[nxt] == node and self._code[nxt] == code:
            return nxt
        more = self._more.get(node)
        if more is not None:
            return more.get(code, -1)
        return -1

    def _children(self, node: int) -> list[int]:
        out = list(self._more.get(node, {}).values())
        nxt = node + 1
        if nxt < len(self._parent) and self._parent[nxt] == node:
            out.append(nxt)
        return out

    def _link(self) -> None:
        """Failure links, breadth first; a node's stop is the first listed of those ending there."""
        fail, best = self._fail, self._best
        queue = deque(self._children(0))
        while queue:
            node = queue.popleft()
            parent = self._parent[node]
            if parent:
                code = self._code[node]
                f = fail[parent]
                while True:
                    target = self._child(f, code)
                    if target >= 0:
                        fail[node] = target
                        break
                    if f == 0:
                        break
                    f = fail[f]
            inherited = best[fail[node]]
            if inherited >= 0 and (best[node] < 0 or inherited < best[node]):
                best[node] = inherited
            queue.extend(self._children(node))

    @property
    def state(self) -> str:
        """The held suffix itself (for debugging; :attr:`depth` is its length)."""
        chars = []
        node = self._node
        while node:
            chars.append(chr(self._code[node]))
            node = self._parent[node]
        return "".join(reversed(chars))

    def reset(self) -> None:
        self._node = 0
        self.depth = 0

    def step(self, ch: str) -> int:
        """Consume one character; the index of the stop sequence that ends here, or -1."""
        if ch not in self._chars:
            self._node = 0
            self.depth = 0
            return -1
        code = ord(ch)
        node = self._node
        while True:
            child = self._child(node, code)
            if child >= 0:
                node = child
                break
            if node == 0:
                break
            node = self._fail[node]
        hit = self._best[node]
        if hit >= 0:
            node = 0
        self._node = node
        self.depth = self._depth[node]
        return hit

    def advance(self, text: str) -> bool:
        """Consume ``text`` unless a stop sequence ends inside it: True when none does (the state then follows
        ``text``), False with nothing changed. With nothing partly matched, the text up to the next character
        that begins a stop sequence is skipped in one search; a character that belongs to no stop sequence resets
        a partial match."""
        search = self._search
        if search is None:
            return True
        node, depth = self._node, self.depth
        step = self.step
        i = 0
        n = len(text)
        while i < n:
            if not self.depth:
                found = search(text, i)
                if found is None:
                    break
                i = found.start()
            elif text[i] not in self._chars:
                self._node = 0
                self.depth = 0
                continue
            if step(text[i]) >= 0:
                self._node, self.depth = node, depth
                return False
            i += 1
        return True

    def state_key(self) -> tuple[int, int]:
        """The matcher's state, for :meth:`restore` (a caller that tries text out)."""
        return self._node, self.depth

    def restore(self, state: tuple[int, int]) -> None:
        self._node, self.depth = state

    def would_match(self, text: str, *, from_start: bool = False) -> bool:
        """True if a stop sequence ends inside ``text`` when it follows the current state (or, with
        ``from_start``, the start of the input); nothing changes."""
        node, depth = self._node, self.depth
        if from_start:
            self.reset()
        try:
            step = self.step  # (``self`` kept out of a cell)
            return any(step(ch) >= 0 for ch in text)
        finally:
            self._node, self.depth = node, depth

    def depth_after(self, text: str) -> int:
        """:attr:`depth` once ``text`` follows the current state, or -1 if a stop sequence ends inside it;
        nothing changes."""
        node, depth = self._node, self.depth
        try:
            for ch in text:
                if self.step(ch) >= 0:
                    return -1
            return self.depth
        finally:
            self._node, self.depth = node, depth
