"""Marker spellings, the internal unit alphabet, and the recogniser of spellings in text chunks.

This is the one place on the output side that spells the markers (``</think>``, ``｜DSML｜``, the end-of-sentence
token); every other stream module takes them from here.

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

import re

from dscodec._json import string_literal

__all__ = [
    "CHUNK_UNITS",
    "DSML",
    "DSML_FIRST",
    "DSML_HARD",
    "DSML_SOFT",
    "DSML_SPELLING",
    "EOS",
    "EOS_HARD",
    "EOS_SOFT",
    "EOS_SPELLING",
    "HARD_BASE",
    "HARD_FIRST",
    "HARD_LIMIT",
    "OPENER_START",
    "SENTINEL_FIRST",
    "SENTINEL_LAST",
    "SENTINEL_RANGE",
    "SPELLING_FIRSTS",
    "THINK",
    "THINK_END_SPELLING",
    "THINK_HARD",
    "THINK_SOFT",
    "Symbolizer",
    "escape_json_string",
    "has_surrogate",
    "sanitize_text",
    "symbolize",
    "symbolize_chunk",
]

#: Spellings (behavior.md#special-tokens table; ``｜`` is U+FF5C, ``▁`` U+2581).
THINK_END_SPELLING = "</think>"
DSML_SPELLING = "｜DSML｜"
#: Its first character: held text that starts with another never becomes the Dsml token.
DSML_FIRST = DSML_SPELLING[0]
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
#: The whole sentinel range, as bounds and as a regular-expression class range.
SENTINEL_FIRST = "\ud800"
SENTINEL_LAST = "\udfff"
SENTINEL_RANGE = f"{SENTINEL_FIRST}-{SENTINEL_LAST}"
#: Where a block opener starts: ``<`` followed by the Dsml token.
OPENER_START = "<"

_SURROGATES = re.compile(f"[{SENTINEL_RANGE}]")


def sanitize_text(text: str) -> str:
    """Replace lone surrogates (which no valid UTF-8 text holds) by U+FFFD so they cannot pose as sentinels."""
    if text.isascii() or not has_surrogate(text):
        return text
    return _SURROGATES.sub("\ufffd", text)


def has_surrogate(text: str) -> bool:
    """``text`` holds a lone surrogate (UTF-8 cannot encode it; encoding is several times faster than a search)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def _proper_prefixes(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w[:k] for w in words for k in range(1, len(w)))


_SPELLINGS = (THINK_END_SPELLING, DSML_SPELLING, EOS_SPELLING)
_SPELLING_PREFIXES = _proper_prefixes(_SPELLINGS)
_LONGEST_PREFIX = max(len(s) for s in _SPELLINGS) - 1
#: The characters a spelling can start with: text without them holds no spelling and no start of one.
_FIRST_A, _FIRST_B = SPELLING_FIRSTS = tuple(sorted({s[0] for s in _SPELLINGS}))
#: The characters a proper prefix of a spelling can end with: text ending with another holds nothing back.
_PREFIX_LASTS = frozenset(p[-1] for p in _SPELLING_PREFIXES)
#: Finds the places a spelling may start.
_SPELLING_START = re.compile(f"[{re.escape(_FIRST_A + _FIRST_B)}]")


def symbolize(s: str) -> tuple[str, str]:
    """The units of text ``s`` (complete spellings as soft sentinels) and the end of it to hold: the longest end
    that is a proper prefix of a spelling (``""``: none), which the units leave out."""
    if THINK_END_SPELLING in s:
        s = s.replace(THINK_END_SPELLING, THINK_SOFT)
    if DSML_SPELLING in s:
        s = s.replace(DSML_SPELLING, DSML_SOFT)
    if EOS_SPELLING in s:
        s = s.replace(EOS_SPELLING, EOS_SOFT)
    if not s or s[-1] not in _PREFIX_LASTS:
        return s, ""
    # Such an end starts with a character a spelling starts with, so only those places are tried, the leftmost
    # first.
    n = len(s)
    for m in _SPELLING_START.finditer(s, n - _LONGEST_PREFIX if n > _LONGEST_PREFIX else 0):
        start = m.start()
        if s[start:] in _SPELLING_PREFIXES:
            return s[:start], s[start:]
    return s, ""


#: :func:`symbolize_chunk`'s results for short texts, by text: model output repeats the same pieces of tags again
#: and again (callers on the per-push path look here first, without the call). Emptied when full.
CHUNK_UNITS: dict[str, tuple[str, str]] = {}
_CHUNK_LONGEST = 48
_CHUNK_ENTRIES = 4096


def symbolize_chunk(s: str) -> tuple[str, str]:
    """:func:`symbolize` of ``sanitize_text(s)``, remembered for a short ``s`` (in :data:`CHUNK_UNITS`)."""
    found = CHUNK_UNITS.get(s)
    if found is not None:
        return found
    found = symbolize(sanitize_text(s))
    if len(s) <= _CHUNK_LONGEST:
        if len(CHUNK_UNITS) >= _CHUNK_ENTRIES:
            CHUNK_UNITS.clear()
        CHUNK_UNITS[s] = found
    return found


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
        if not self.held and _FIRST_A not in text and _FIRST_B not in text:
            return text  # no spelling and no start of one
        return self._feed(text)

    def _feed(self, text: str) -> str:
        """:meth:`feed` without its shortcut."""
        units, self.held = symbolize(self.held + text)
        return units

    def flush(self) -> str:
        """What is held, as plain units (it can no longer complete)."""
        held, self.held = self.held, ""
        return held


def escape_json_string(text: str) -> str:
    """JSON string *content* for ``text``: ``"`` and ``\\`` escaped, control characters as ``\\n``/``\\u0001``.

    Non-ASCII, ``/`` and U+007F stay raw (behavior.md#dsml-parsing; the same rules as ``json.dumps(ensure_ascii=False)``).
    ``text`` itself when nothing needs escaping (callers may tell so by identity).
    """
    if '"' not in text and "\\" not in text and text.isprintable():  # no control character either
        return text
    literal = string_literal(text)
    return text if len(literal) == len(text) + 2 else literal[1:-1]
