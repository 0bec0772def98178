"""Reading DSML tags (behavior.md#dsml-parsing): the states of the block scanner, the tag texts each state looks
for, and a parameter tag's attributes and key.

Model output comes a token or a few at a time, and the same pieces come again and again (the same tags, the same
parameter names). What a short piece gives inside a tag and in the block and invoke scans, and what a parameter
tag gives, is remembered by its text; each memory is emptied when it is full."""

from __future__ import annotations

import enum
import re
from typing import NamedTuple

from dscodec._json import loads
from dscodec.stream._markers import DSML_FIRST, DSML_HARD, DSML_SOFT, DSML_SPELLING, escape_json_string

__all__ = [
    "BARE_PARAMETER",
    "BLOCK_HOLD",
    "BLOCK_SCAN",
    "FIRST_CLOSE",
    "INVOKE_HOLD",
    "INVOKE_SCAN",
    "LONGEST",
    "PARAMETERS",
    "SCANS",
    "SHORT",
    "TAG_STEPS",
    "TAG_STOPS",
    "TAG_WS",
    "WHOLE_TAG",
    "BlockState",
    "Quote",
    "QuoteScan",
    "ValueKind",
    "json_key",
    "parameter_of",
    "quote_scan",
    "scan_short",
    "tag_attributes",
    "tag_step",
    "unclosed_quote_end",
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


def _scanner(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One group per pattern, so a match's ``lastindex`` minus one is the index of the pattern found. No pattern
    occurs inside another, so the leftmost match is also the one that ends first."""
    return re.compile("|".join(f"({re.escape(p)})" for p in patterns))


def _holder(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """Matches a proper start of a pattern at the end of the text; searched from :data:`LONGEST` units before
    the end, the leftmost match is the longest such start, the units to hold."""
    prefixes = sorted({p[:k] for p in patterns for k in range(1, len(p))}, key=len, reverse=True)
    return re.compile("(?:" + "|".join(re.escape(p) for p in prefixes) + r")\Z")


BLOCK_SCAN = _scanner(BLOCK_PATTERNS)
INVOKE_SCAN = _scanner(INVOKE_PATTERNS)
BLOCK_HOLD = _holder(BLOCK_PATTERNS)
INVOKE_HOLD = _holder(INVOKE_PATTERNS)
LONGEST = max(len(p) for p in BLOCK_PATTERNS + INVOKE_PATTERNS)

TAG_WS = " \t\n\r"
#: The only units that change anything inside a parameter tag (outside a quoted value's quote).
TAG_STOPS = re.compile(f'[">{DSML_SOFT}{DSML_HARD}]')
#: The commonest parameter tag whole, from just after ``parameter``: `` name="KEY" string="true">`` (or
#: ``"false"``), the name without quotes or sentinels. The tag reader ends it at the same ``>`` and finds the same
#: two attributes in it.
WHOLE_TAG = re.compile(f'[{TAG_WS}]+name="[^"\ud800-\udfff]*"[{TAG_WS}]+string="(?:true|false)">')


class ValueKind(enum.IntEnum):
    """A value's kind, from its tag's ``string`` attribute: ``"true"``, ``"false"``, or missing / anything else."""

    STRING = 0
    JSON = 1
    AUTO = 2


#: The flag values of the ``string`` attribute.
_FLAGS = {"true": ValueKind.STRING, "false": ValueKind.JSON}
#: What a parameter tag gives, by the tag's text (tags repeat: the same names, call after call), for tags up to
#: :data:`_REMEMBERED_LENGTH` characters long. Emptied when full.
PARAMETERS: dict[str, tuple[str, str, ValueKind] | None] = {}
_PARAMETERS_LIMIT = 512
_REMEMBERED_LENGTH = 200


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


def _gap(text: str, k: int) -> int:
    """The length of the separator at ``text[k]`` outside a quoted value: 1 for white space, the spelling's
    length for the Dsml token, 0 for anything else."""
    ch = text[k]
    if ch in TAG_WS:
        return 1
    if ch == DSML_FIRST and text.startswith(DSML_SPELLING, k):
        return len(DSML_SPELLING)
    return 0


def tag_attributes(text: str) -> dict[str, str]:
    """The attributes of a parameter tag (the text between ``parameter`` and ``>``, spelled); the first of each
    name wins. Values are double-quoted (the closing quote is one followed by white space, ``/`` or the end) or
    bare (up to white space); words without ``=`` and stray characters are skipped. Between attributes, and
    around their ``=``, the Dsml token separates as white space does (``string｜DSML｜="true"``); in a value it is
    text."""
    attrs: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        gap = _gap(text, i)
        if gap or text[i] in '"=/':
            i += gap or 1
            continue
        j = i
        while j < n and not _gap(text, j) and text[j] not in '="':
            j += 1
        name = text[i:j]
        k = j
        while k < n and (gap := _gap(text, k)):
            k += gap
        if k >= n or text[k] != "=":
            i = max(j, i + 1)
            continue
        k += 1
        while k < n and (gap := _gap(text, k)):
            k += gap
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


def unclosed_quote_end(text: str) -> int:
    """In the text of a parameter tag that a new tag cut while a quoted value was open: the index of the first
    ``>`` after the quote that opened that value (a stray or missing quote took the tag's end into the value), or
    -1 when there is none. Quotes open and close as :func:`tag_step` reads them: a quote inside a quoted value
    closes it when white space, ``>`` or ``/`` follows.

    Examples:
        >>> unclosed_quote_end('name="b" x">w')
        11
        >>> unclosed_quote_end('name="b" string="true>w')
        21
        >>> unclosed_quote_end('name="b" string="true" x')  # every quoted value closed
        -1
    """
    opened = -1
    k = text.find('"')
    while k >= 0:
        if opened < 0:
            opened = k
        else:
            after = text[k + 1 : k + 2]
            if after and (after in TAG_WS or after in ">/"):
                opened = -1
        k = text.find('"', k + 1)
    return -1 if opened < 0 else text.find(">", opened)


#: What comes before the opening quote of a ``name`` attribute's value (outside quoted values, since the last one;
#: the Dsml token separates as white space does).
_GAP = f"[{TAG_WS}{DSML_SOFT}{DSML_HARD}]"
_NAME_OPENS = re.compile(f"(?:^|{_GAP})name{_GAP}*={_GAP}*\\Z")
#: How much of the text outside quoted values is kept for :data:`_NAME_OPENS`.
_OUTSIDE_KEPT = 64


class QuoteScan(NamedTuple):
    """Where :func:`quote_scan` is in a parameter tag's text."""

    quote: Quote = Quote.OUT
    #: The quoted value still open holds a quote or a ``>``.
    inner: bool = False
    #: The quoted value still open is a ``name`` attribute's.
    of_name: bool = False
    #: The text outside quoted values since the last one.
    outside: str = ""


def quote_scan(scan: QuoteScan, text: str) -> QuoteScan:
    """Read ``text`` inside a parameter tag (none of its ``>`` ends the tag) from ``scan``: where the reading is
    after it. Quotes open and close as :func:`tag_step` reads them.

    Examples:
        >>> quote_scan(QuoteScan(), 'name="c<x')
        QuoteScan(quote=<Quote.IN: 1>, inner=False, of_name=True, outside='')
        >>> quote_scan(QuoteScan(), 'name="a" string="true"<')
        QuoteScan(quote=<Quote.IN: 1>, inner=True, of_name=False, outside='')
        >>> quote_scan(QuoteScan(), 'name="a>b" x="c')
        QuoteScan(quote=<Quote.IN: 1>, inner=False, of_name=False, outside='')
    """
    quote, inner, of_name, outside = scan
    start = 0
    for k, ch in enumerate(text):
        if quote is Quote.IN_AFTER_QUOTE:
            if ch in TAG_WS or ch == ">" or ch == "/":
                quote = Quote.OUT
                start = k
            else:
                quote = Quote.IN
                inner = True
        if quote is Quote.OUT:
            if ch == '"':
                quote = Quote.IN
                inner = False
                of_name = _NAME_OPENS.search((outside + text[start:k])[-_OUTSIDE_KEPT:]) is not None
                outside = ""
        elif ch == '"':
            quote = Quote.IN_AFTER_QUOTE
        elif ch == ">":
            inner = True
    if quote is Quote.OUT:
        outside = (outside + text[start:])[-_OUTSIDE_KEPT:]
    return QuoteScan(quote, inner, of_name, outside)


#: Pieces up to this long have their outcome remembered: in a tag (by quote state) and in the block and invoke
#: scans. Model output comes a token or a few at a time, and the same pieces come again and again.
SHORT = 32
_MEMO_LIMIT = 2048
#: The outcomes of :func:`tag_step`, by quote state and text.
TAG_STEPS: tuple[dict[str, tuple[Quote, int]], ...] = ({}, {}, {})
#: The outcomes of :func:`scan_short`, by state and text.
SCANS: dict[BlockState, dict[str, tuple[int, int]]] = {BlockState.BLOCK: {}, BlockState.INVOKE: {}}


def tag_step(quote: Quote, text: str) -> tuple[Quote, int] | None:
    """Read ``text`` inside a parameter tag from quote state ``quote``: the state after it and -1, or the state
    and the index of the ``>`` that ends the tag. None when a Dsml token comes before the tag's end (whether it
    is text of the tag or begins a new tag depends on what came before it) or ``text`` is longer than
    :data:`SHORT` (the parameter parser reads those itself)."""
    steps = TAG_STEPS[quote]
    try:
        return steps[text]
    except KeyError:
        pass
    if len(text) > SHORT:
        return None
    found: tuple[Quote, int] | None = None
    for j, ch in enumerate(text):
        if ch == DSML_SOFT or ch == DSML_HARD:
            return None
        if quote is Quote.IN_AFTER_QUOTE:
            quote = Quote.OUT if ch in TAG_WS or ch == ">" or ch == "/" else Quote.IN
        if quote is Quote.OUT:
            if ch == ">":
                found = (Quote.OUT, j)
                break
            if ch == '"':
                quote = Quote.IN
        elif ch == '"':
            quote = Quote.IN_AFTER_QUOTE
    if found is None:
        found = (quote, -1)
    if len(steps) >= _MEMO_LIMIT:
        steps.clear()
    steps[text] = found
    return found


def scan_short(state: BlockState, text: str) -> tuple[int, int]:
    """The block or invoke scan over ``text`` (at most :data:`SHORT` units): the index of the first pattern found
    in it and the end of that pattern, or -1 and where the units to hold start (``len(text)``: none)."""
    scans = SCANS[state]
    try:
        return scans[text]
    except KeyError:
        pass
    found = None
    if state == BlockState.BLOCK:
        scanner, holder = BLOCK_SCAN, BLOCK_HOLD
    else:
        scanner, holder = INVOKE_SCAN, INVOKE_HOLD
    m = scanner.search(text)
    if m is not None:
        found = ((m.lastindex or 0) - 1, m.end())
    else:
        h = holder.search(text)
        found = (-1, len(text) if h is None else h.start())
    if len(scans) >= _MEMO_LIMIT:
        scans.clear()
    scans[text] = found
    return found


def parameter_of(text: str) -> tuple[str, str, ValueKind] | None:
    """What the parameter tag with attribute text ``text`` gives: its key as a JSON string, the name the key
    stands for, and its value's kind; None when it has no ``name`` attribute (no parameter)."""
    try:
        return PARAMETERS[text]
    except KeyError:
        pass
    attrs = tag_attributes(text)
    raw_name = attrs.get("name")
    found = None if raw_name is None else _named_parameter(raw_name, attrs.get("string"))
    if len(text) <= _REMEMBERED_LENGTH:
        if len(PARAMETERS) >= _PARAMETERS_LIMIT:
            PARAMETERS.clear()
        PARAMETERS[text] = found
    return found


def _named_parameter(raw_name: str, flag: str | None) -> tuple[str, str, ValueKind]:
    """The key, the name it stands for and the value kind of a parameter named ``raw_name`` (the text of its
    ``name`` attribute) whose ``string`` attribute is ``flag``."""
    key = json_key(raw_name)
    # The name the key stands for: the raw name itself when it had nothing to escape.
    name = raw_name if len(key) == len(raw_name) + 2 and "\\" not in raw_name else loads(key)
    kind = _FLAGS.get(flag, ValueKind.AUTO) if flag is not None else ValueKind.AUTO
    return key, name if isinstance(name, str) else "", kind
