"""Reading DSML tags (behavior.md#dsml-parsing): the states of the block scanner, the tag texts each state looks
for, and a parameter tag's attributes and key."""

from __future__ import annotations

import enum
import re

from dscodec._json import loads
from dscodec.stream._markers import DSML_HARD, DSML_SOFT, escape_json_string

__all__ = [
    "BARE_PARAMETER",
    "FIRST_CLOSE",
    "INDEX",
    "LONGEST",
    "PREFIXES",
    "SCANNERS",
    "TAG_STOPS",
    "TAG_WS",
    "BlockState",
    "Quote",
    "hold",
    "json_key",
    "tag_attributes",
]


class BlockState(enum.IntEnum):
    """What the block parser reads: the block, a call's name, the invoke, a parameter tag, a value, or nothing
    more (the block closed)."""

    BLOCK = 0
    NAME = 1
    INVOKE = 2
    TAG = 3
    STRING_VALUE = 4
    JSON_VALUE = 5
    DONE = 6


class Quote(enum.IntEnum):
    """Where the parameter tag reader is relative to a quoted attribute value."""

    OUT = 0
    IN = 1
    IN_AFTER_QUOTE = 2  # a quote inside the value: it closes the value if a separator follows


BLOCK_PATTERNS = (
    'invoke name="',
    "</" + DSML_SOFT + "tool_calls>",
    "</" + DSML_HARD + "tool_calls>",
    "</" + DSML_SOFT + " calls>",
    "</" + DSML_HARD + " calls>",
)
INVOKE_PATTERNS = (
    "<" + DSML_SOFT + "parameter",
    "<" + DSML_HARD + "parameter",
    "<" + DSML_SOFT + " parameter",
    "<" + DSML_HARD + " parameter",
    # The reference starts a parameter at this text alone (no opener needed); its attributes start at "name=".
    "parameter name=",
    "</" + DSML_SOFT,
    "</" + DSML_HARD,
)
BARE_PARAMETER = 4  # index of the opener-less pattern in INVOKE_PATTERNS
FIRST_CLOSE = 5  # index of the first closing-tag pattern in INVOKE_PATTERNS
#: What an unnamed parameter's attributes start with when the tag began at ``parameter name=``.
BARE_ATTRIBUTES = "name="
#: The closing tag of a value starts with these units, then the Dsml token.
CLOSE_START = "</"


def _prefixes(patterns: tuple[str, ...]) -> frozenset[str]:
    return frozenset(p[:k] for p in patterns for k in range(1, len(p)))


def _scanner(patterns: tuple[str, ...]) -> re.Pattern[str]:
    # No pattern occurs inside another, so the leftmost match is also the one that ends first.
    return re.compile("|".join(re.escape(p) for p in patterns))


PREFIXES = {BlockState.BLOCK: _prefixes(BLOCK_PATTERNS), BlockState.INVOKE: _prefixes(INVOKE_PATTERNS)}
SCANNERS = {BlockState.BLOCK: _scanner(BLOCK_PATTERNS), BlockState.INVOKE: _scanner(INVOKE_PATTERNS)}
INDEX = {
    state: {p: k for k, p in enumerate(patterns)}
    for state, patterns in ((BlockState.BLOCK, BLOCK_PATTERNS), (BlockState.INVOKE, INVOKE_PATTERNS))
}
LONGEST = max(len(p) for p in BLOCK_PATTERNS + INVOKE_PATTERNS)

TAG_WS = " \t\n\r"
#: The only units that change anything inside a parameter tag (outside a quoted value's quote).
TAG_STOPS = re.compile(f'[">{DSML_SOFT}{DSML_HARD}]')


def json_key(body: str) -> str:
    """The key as a JSON string (D8).

    The model writes ``name="KEY"``; the reference copies that text, so ``KEY`` counts as JSON string content as
    written (``k\\n`` stays an escape) when that makes a JSON string :func:`dscodec._json.loads` accepts;
    otherwise (a bare quote, a control character, a lone surrogate escape, a trailing backslash) it is escaped.
    """
    candidate = '"' + body + '"'
    if body.isascii() and body.isprintable() and '"' not in body and "\\" not in body:
        return candidate  # nothing to escape or to check: the common case
    try:
        loads(candidate)
    except ValueError:
        return '"' + escape_json_string(body) + '"'
    return candidate


def tag_attributes(text: str) -> dict[str, str]:
    """The attributes of a parameter tag (the text between ``parameter`` and ``>``); the first of each name
    wins. Values are double-quoted (the closing quote is one followed by white space, ``/`` or the end) or bare
    (up to white space); words without ``=`` and stray characters are skipped."""
    attrs: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        if text[i] in TAG_WS or text[i] in '"=/':
            i += 1
            continue
        j = i
        while j < n and text[j] not in TAG_WS and text[j] not in '="':
            j += 1
        name = text[i:j]
        k = j
        while k < n and text[k] in TAG_WS:
            k += 1
        if k >= n or text[k] != "=":
            i = max(j, i + 1)
            continue
        k += 1
        while k < n and text[k] in TAG_WS:
            k += 1
        if k < n and text[k] == '"':
            end = k + 1
            while True:
                end = text.find('"', end)
                if end < 0 or end + 1 == n or text[end + 1] in TAG_WS or text[end + 1] == "/":
                    break
                end += 1
            value = text[k + 1 : end] if end >= 0 else text[k + 1 :]
            i = n if end < 0 else end + 1
        else:
            end = k
            while end < n and text[end] not in TAG_WS:
                end += 1
            value = text[k:end]
            i = end
        attrs.setdefault(name, value)
    return attrs


def hold(s: str, prefixes: frozenset[str], longest: int) -> int:
    for k in range(min(longest, len(s)), 0, -1):
        if s[-k:] in prefixes:
            return k
    return 0
