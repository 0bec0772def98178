"""Marker spellings, the internal unit alphabet, and the small incremental matchers the machine uses.

The reference treats the two special tokens that steer parsing, ThinkingEnd ``</think>`` and Dsml ``｜DSML｜``,
as single units (behavior.md#stage-machine, behavior.md#dsml-parsing, and observed); dscodec adds a third, the end-of-sentence token
``<｜end▁of▁sentence｜>``, which ends the output (deviation D15):

* in *text* chunks their spellings are recognised, also split across chunks;
* in *token* chunks only the special ids count: plain tokens that happen to spell ``</think>`` are text;
* special tokens that arrive as ids are barriers for stop sequences (a stop never matches across or inside
  one), while spellings inside text chunks are ordinary characters for stop matching.

The machine therefore works on a string of *units*: ordinary characters plus one-character sentinels taken from
the surrogate range (U+D800–U+DFFF), which valid decoded text never contains. A sentinel stands for one special
token; "soft" sentinels come from spellings found in text chunks, "hard" ones from special ids.
"""

from __future__ import annotations

import json
import re
from array import array
from collections import deque

import orjson

__all__ = [
    "DSML",
    "DSML_HARD",
    "DSML_SOFT",
    "DSML_SPELLING",
    "EOS",
    "EOS_HARD",
    "EOS_SOFT",
    "EOS_SPELLING",
    "HARD_BASE",
    "HARD_FIRST",
    "THINK",
    "THINK_END_SPELLING",
    "THINK_HARD",
    "THINK_SOFT",
    "StopMatcher",
    "Symbolizer",
    "escape_json_string",
    "sanitize_text",
]

#: Spellings (behavior.md#special-tokens table; ``｜`` is U+FF5C, ``▁`` U+2581).
THINK_END_SPELLING = "</think>"
DSML_SPELLING = "｜DSML｜"
EOS_SPELLING = "<｜end▁of▁sentence｜>"

#: Sentinels: the soft ones first, then the hard ones. ``THINK``/``DSML``/``EOS`` hold both forms, for ``in``
#: tests.
THINK_SOFT = "\ud800"
DSML_SOFT = "\ud801"
EOS_SOFT = "\ud802"
THINK_HARD = "\ud803"
DSML_HARD = "\ud804"
EOS_HARD = "\ud805"
THINK = THINK_SOFT + THINK_HARD
DSML = DSML_SOFT + DSML_HARD
EOS = EOS_SOFT + EOS_HARD
#: The first hard sentinel: every unit from here to U+DFFF stands for a special id.
HARD_FIRST = THINK_HARD
#: Other special ids get hard sentinels from here on (one per distinct spelling).
HARD_BASE = 0xD806
HARD_LIMIT = 0xDFFF

_SURROGATES = re.compile("[\ud800-\udfff]")


def sanitize_text(text: str) -> str:
    """Replace lone surrogates (which no valid UTF-8 text holds) by U+FFFD so they cannot pose as sentinels."""
    if text.isascii():
        return text
    return _SURROGATES.sub("\ufffd", text)


def _proper_prefixes(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w[:k] for w in words for k in range(1, len(w)))


_SPELLINGS = (THINK_END_SPELLING, DSML_SPELLING, EOS_SPELLING)
_SPELLING_PREFIXES = _proper_prefixes(_SPELLINGS)
_LONGEST_PREFIX = max(len(s) for s in _SPELLINGS) - 1


class Symbolizer:
    """Turns text-chunk text into units: complete ``</think>`` / ``｜DSML｜`` / end-of-sentence spellings become
    soft sentinels.

    A tail that may still become a spelling is held until the next text chunk (or :meth:`flush`). The spellings
    cannot overlap one another, so the order of replacement does not matter.
    """

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held = ""

    def feed(self, text: str) -> str:
        """Units for ``text`` (plus what was held), minus a new held tail."""
        if not self.held and "<" not in text and "｜" not in text:
            return text
        s = self.held + text
        if "</think>" in s:
            s = s.replace(THINK_END_SPELLING, THINK_SOFT)
        if DSML_SPELLING in s:
            s = s.replace(DSML_SPELLING, DSML_SOFT)
        if EOS_SPELLING in s:
            s = s.replace(EOS_SPELLING, EOS_SOFT)
        hold = 0
        tail = s[-_LONGEST_PREFIX:]
        if "<" in tail or "｜" in tail:
            for k in range(min(_LONGEST_PREFIX, len(s)), 0, -1):
                if s[-k:] in _SPELLING_PREFIXES:
                    hold = k
                    break
        if hold:
            self.held = s[-hold:]
            return s[:-hold]
        self.held = ""
        return s

    def flush(self) -> str:
        """What is held, as plain units (it can no longer complete)."""
        held, self.held = self.held, ""
        return held


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
        "depth",
        "first_chars",
        "stops",
    )

    def __init__(self, stops: list[str]) -> None:
        self.stops = tuple(sanitize_text(s) for s in stops if s)
        self.first_chars = frozenset(s[0] for s in self.stops)
        self._chars = frozenset("".join(self.stops))
        self.depth = 0
        self._node = 0
        # Node 0 is the root. A node's children are the node created right after it along the same stop (when
        # ``_parent`` of that node says so) plus, for branching points, the entries of ``_more``.
        self._parent = array("q", [-1])
        self._code = array("l", [0])  # the code point on the edge into each node
        self._depth = array("q", [0])
        self._best = array("q", [-1])  # the first-listed stop ending at this node (own or via failure links)
        self._more: dict[int, dict[int, int]] = {}
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

    def would_match(self, text: str, *, from_start: bool = False) -> bool:
        """True if a stop sequence ends inside ``text`` when it follows the current state (or, with
        ``from_start``, the start of the input); nothing changes."""
        node, depth = self._node, self.depth
        if from_start:
            self.reset()
        try:
            return any(self.step(ch) >= 0 for ch in text)
        finally:
            self._node, self.depth = node, depth


def escape_json_string(text: str) -> str:
    """JSON string *content* for ``text``: ``"`` and ``\\`` escaped, control characters as ``\\n``/``\\u0001``.

    Non-ASCII, ``/`` and U+007F stay raw (behavior.md#dsml-parsing; the same rules as ``json.dumps(ensure_ascii=False)``).
    """
    if text.isalnum():
        return text
    try:
        return orjson.dumps(text).decode()[1:-1]
    except TypeError:  # a lone surrogate, which orjson refuses
        return json.dumps(text, ensure_ascii=False)[1:-1]
