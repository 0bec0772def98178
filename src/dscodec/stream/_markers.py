"""Marker spellings, the internal unit alphabet, and the small incremental matchers the machine uses.

The reference treats the two special tokens that steer parsing, ThinkingEnd ``</think>`` and Dsml ``｜DSML｜``,
as single units (spec §5.2, §5.3, and observed):

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

import orjson

__all__ = [
    "DSML",
    "DSML_HARD",
    "DSML_SOFT",
    "DSML_SPELLING",
    "HARD_BASE",
    "THINK",
    "THINK_END_SPELLING",
    "THINK_HARD",
    "THINK_SOFT",
    "StopMatcher",
    "Symbolizer",
    "escape_json_string",
    "sanitize_text",
]

#: Spellings (spec §0 table; ``｜`` is U+FF5C).
THINK_END_SPELLING = "</think>"
DSML_SPELLING = "｜DSML｜"

#: Sentinels. ``THINK``/``DSML`` hold both the soft and the hard form, for ``in`` tests.
THINK_SOFT = "\ud800"
DSML_SOFT = "\ud801"
THINK_HARD = "\ud802"
DSML_HARD = "\ud803"
THINK = THINK_SOFT + THINK_HARD
DSML = DSML_SOFT + DSML_HARD
#: Other special ids get hard sentinels from here on (one per distinct spelling).
HARD_BASE = 0xD804
HARD_LIMIT = 0xDFFF

_SURROGATES = re.compile("[\ud800-\udfff]")


def sanitize_text(text: str) -> str:
    """Replace lone surrogates (which no valid UTF-8 text holds) by U+FFFD so they cannot pose as sentinels."""
    if text.isascii():
        return text
    return _SURROGATES.sub("\ufffd", text)


def _proper_prefixes(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w[:k] for w in words for k in range(1, len(w)))


_SPELLINGS = (THINK_END_SPELLING, DSML_SPELLING)
_SPELLING_PREFIXES = _proper_prefixes(_SPELLINGS)


class Symbolizer:
    """Turns text-chunk text into units: complete ``</think>`` / ``｜DSML｜`` spellings become soft sentinels.

    A tail that may still become a spelling is held until the next text chunk (or :meth:`flush`).
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
        hold = 0
        tail = s[-7:]
        if "<" in tail or "｜" in tail:
            for k in range(min(7, len(s)), 0, -1):
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
    """Incremental multi-pattern matcher for stop sequences (spec §5.4).

    It reports the stop sequence that *ends* first; when several end on the same character, the one listed
    first in the request wins (observed: ``abcd`` with ``["abcd", "bc"]`` gives ``a``; ``xabcd`` with
    ``["cd", "bcd", "abcd"]`` gives ``xab``). The state is the longest suffix of the input that is a proper
    prefix of some stop sequence, so :attr:`state` is exactly the text that must be held back.
    """

    __slots__ = ("_cache", "_chars", "_prefixes", "first_chars", "state", "stops")

    def __init__(self, stops: list[str]) -> None:
        self.stops = tuple(sanitize_text(s) for s in stops if s)
        self.state = ""
        self.first_chars = frozenset(s[0] for s in self.stops)
        self._prefixes = _proper_prefixes(self.stops)
        self._chars = frozenset("".join(self.stops))
        self._cache: dict[tuple[str, str], tuple[str, int]] = {}

    def reset(self) -> None:
        self.state = ""

    def step(self, ch: str) -> int:
        """Consume one character; the index of the stop sequence that ends here, or -1."""
        if ch not in self._chars:
            self.state = ""
            return -1
        key = (self.state, ch)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._transition(self.state + ch)
            if len(self._cache) < 65536:
                self._cache[key] = hit
        self.state = hit[0]
        return hit[1]

    def would_match(self, text: str, *, state: str | None = None) -> bool:
        """True if a stop sequence ends inside ``text`` when it follows the current state (nothing changes)."""
        saved = self.state
        self.state = saved if state is None else state
        try:
            return any(self.step(ch) >= 0 for ch in text)
        finally:
            self.state = saved

    def _transition(self, s: str) -> tuple[str, int]:
        for index, stop in enumerate(self.stops):
            if s.endswith(stop):
                return "", index
        for k in range(len(s), 0, -1):
            if s[-k:] in self._prefixes:
                return s[-k:], -1
        return "", -1


def escape_json_string(text: str) -> str:
    """JSON string *content* for ``text``: ``"`` and ``\\`` escaped, control characters as ``\\n``/``\\u0001``.

    Non-ASCII, ``/`` and U+007F stay raw (spec §5.3; the same rules as ``json.dumps(ensure_ascii=False)``).
    """
    if text.isalnum():
        return text
    try:
        return orjson.dumps(text).decode()[1:-1]
    except TypeError:  # a lone surrogate, which orjson refuses
        return json.dumps(text, ensure_ascii=False)[1:-1]
