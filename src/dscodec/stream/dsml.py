"""DSML tool-call blocks → tool-call events with incrementally streamed JSON arguments (behavior.md#dsml-parsing, D8).

The parser runs once the output machine has seen a block opener (``<`` + the Dsml token). It works on the
machine's units (see :mod:`dscodec.stream._markers`: ``D`` below is the Dsml token, as a spelling in text chunks
or as its id) and follows what the reference does, observed from outside, as a chain of "scan until" states:

=============  ====================================================  =========================================
state          looks for                                             then
=============  ====================================================  =========================================
block          ``invoke name="`` / ``</D tool_calls>``,              name / done (all later output is
               ``</D calls>``; other text is ignored                 discarded)
name           ``"``                                                 the call starts (id, name); → invoke
invoke         ``<D parameter`` (V4.1 with a space after ``D``),     parameter tag / ``}`` → block
               ``parameter name=`` alone (as the reference), or
               a closing tag ``</D``
parameter tag  ``>`` outside a quoted attribute value (a ``D``       separator, key and ``: ``; → value
               inside the tag ends it without a value)
value          ``</D``                                               the parameter ends → invoke
=============  ====================================================  =========================================

Where dscodec differs (DEVIATIONS.md D8): a call whose invoke is closed always has arguments that
:func:`dscodec._json.loads` accepts ("valid JSON" in dscodec: RFC 8259 without NaN or Infinity, no lone
surrogate escapes, numbers within the double range, at most 127 levels deep, so a value may nest 126 levels
inside the arguments object):

* a parameter tag is read by its attributes (``name="…"``, ``name=bare``), in any order; unknown attributes
  (``lang="en"``) are ignored; a tag without ``name`` gives no parameter (its value is dropped; the reference
  drops it too, but then takes the parameter's closing tag for the invoke's). The reference instead scans for
  the literal text ``parameter name=`` and then for ``true">`` or ``false">``, so other orders, other spacing or
  an attribute after ``string`` lose the parameter or break the arguments;
* keys are written as JSON strings: the name's text is kept when it is valid JSON string content, as the
  reference copies it (``k\\n`` stays an escape), and escaped otherwise;
* ``string="true"``: the value is a JSON string of the raw text, streamed as it comes;
* ``string="false"``: the value is **held** while it may still be valid JSON, then written as is when it is, as
  ``null`` when it is empty or blank, and otherwise as a JSON string holding the raw text. Two cases end the
  hold early, decided at the exact character so that chunking never matters: the value proves invalid (a
  character no JSON text can continue with, e.g. ``N`` of ``NaN``) within its first :data:`HOLD_LIMIT`
  characters — it is then streamed as a JSON string right away; or it grows past :data:`HOLD_LIMIT` characters
  while still a valid JSON prefix — it is then streamed as written (numbers and ``\\u`` escapes only once they
  are complete and valid), and if it turns out invalid or unfinished, the shortest text that completes what was
  sent is added at the parameter's end (``null`` for a missing value, closing quotes and brackets) and the rest
  of the raw value is dropped;
* no ``string`` attribute, or any other value (``string="maybe"``, ``string="True"``): the value is its JSON
  value when the whole raw text is JSON, otherwise a JSON string of the raw text (an empty value gives ``""``).
  It streams as early as that rule allows: from the first character that proves the text is not JSON it is
  streamed as a string; while it is still a JSON prefix it is held, however long, until the parameter closes.

Incomplete calls (the output ended inside them) keep the reference's behaviour: their arguments stop where the
output stopped.
"""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import Callable

from dscodec._json import MAX_DEPTH, loads
from dscodec.stream._markers import DSML_HARD, DSML_SOFT, escape_json_string
from dscodec.stream.events import Event, ToolCallDelta, ToolCallEnd, ToolCallStart

__all__ = ["HOLD_LIMIT", "BlockParser", "JsonPrefix", "ToolCallIdFactory", "random_tool_call_id"]

#: Longest ``string="false"`` value (in characters) held back to decide whether it is valid JSON (D8).
HOLD_LIMIT = 64

ToolCallIdFactory = Callable[[int], str]

_ALNUM = string.ascii_letters + string.digits


def random_tool_call_id(index: int) -> str:
    """``call_<NN>_<20 letters/digits><4 digits>`` (behavior.md#dsml-parsing), random like the reference's.

    Examples:
        >>> tid = random_tool_call_id(3)
        >>> tid[:8], len(tid)
        ('call_03_', 32)
    """
    body = "".join(secrets.choice(_ALNUM) for _ in range(20))
    digits = "".join(secrets.choice(string.digits) for _ in range(4))
    return f"call_{index:02d}_{body}{digits}"


# --- JSON prefix checking (D8) -------------------------------------------------------------------------------

_WS = " \t\n\r"
_DIGITS = "0123456789"
_HEX = "0123456789abcdefABCDEF"
_NUMBER_CHARS = frozenset("0123456789+-.eE")

# Modes of JsonPrefix.
_VALUE, _ARRAY_FIRST, _OBJ_FIRST, _OBJ_KEY, _COLON, _AFTER = range(6)
_STRING, _ESCAPE, _UNICODE, _LOW_BACKSLASH, _LOW_U, _LOW_HEX = range(6, 12)
_N_MINUS, _N_ZERO, _N_INT, _N_DOT, _N_FRAC, _N_EXP, _N_EXP_SIGN, _N_EXP_DIGITS = range(12, 20)
_LITERAL = 20
_NUMBER_MODES = range(_N_MINUS, _LITERAL)


class JsonPrefix:
    """Checks, character by character, that text is a prefix of one JSON value that :func:`dscodec._json.loads`
    accepts: RFC 8259 without NaN or Infinity, nesting at most ``max_depth`` arrays and objects deep, numbers
    that fit a double, and no lone surrogate escapes.

    Numbers and ``\\u`` escapes are checked only when they are complete (a number when a character that cannot
    continue it arrives, or at :meth:`finish`; a high surrogate escape with its low partner), so they are held
    meanwhile: :attr:`committed` counts the characters that are final, :attr:`count` those consumed. When a held
    number or escape proves invalid, the check fails *at its first character*: :attr:`count` falls back to
    :attr:`committed`, and the state is that of the committed prefix, which :meth:`completion` completes.

    Examples:
        >>> p = JsonPrefix()
        >>> p.feed('[1, {"a": tr'), p.complete(), p.completion()
        (12, False, 'ue}]')
        >>> JsonPrefix().feed("NaN")
        0
        >>> p = JsonPrefix()
        >>> p.feed('[1, 1e400'), p.committed, p.finish(), p.committed, p.completion()
        (9, 4, False, 4, 'null]')
    """

    __slots__ = (
        "_code",
        "_resume",
        "_token",
        "committed",
        "count",
        "failed",
        "hex_left",
        "in_key",
        "literal",
        "max_depth",
        "mode",
        "stack",
    )

    def __init__(self, *, max_depth: int = MAX_DEPTH) -> None:
        self.max_depth = max_depth
        self.failed = False
        self.mode = _VALUE
        self.stack: list[str] = []
        self.in_key = False
        self.literal = ""
        self.hex_left = 0
        self.count = 0
        self.committed = 0
        self._code = 0  # the high surrogate of a pending escape pair
        self._resume = _VALUE  # the mode before the pending number or escape began
        self._token: list[str] = []  # the pending number's characters

    @property
    def pending(self) -> int:
        """Consumed characters not yet final (an unfinished number or escape)."""
        return self.count - self.committed

    def feed(self, text: str) -> int:
        """Consume ``text``; returns how many of its characters were consumed before the check failed (all of
        them unless it failed). A failure may also take back held characters of earlier calls (see
        :attr:`committed`); after one, nothing more is consumed."""
        if self.failed:
            return 0
        for pos, ch in enumerate(text):
            if not self._step(ch):
                self._fail()
                return pos
            self.count += 1
            if self.mode < _ESCAPE or self.mode == _LITERAL:
                self.committed = self.count
        return len(text)

    def finish(self) -> bool:
        """The end of the text: a held number is checked now (a held escape can no longer complete). False if
        the check failed."""
        if self.failed:
            return False
        if self.mode in _NUMBER_MODES:
            if not self._end_number():
                self._fail()
                return False
            self.mode = _AFTER
            self.committed = self.count
        elif self.mode in (_ESCAPE, _UNICODE, _LOW_BACKSLASH, _LOW_U, _LOW_HEX):
            self._fail()
            return False
        return True

    def complete(self) -> bool:
        """True when what was fed is one whole JSON value (surrounding whitespace allowed); call :meth:`finish`
        first when the text has ended."""
        if self.stack or self.failed:
            return False
        return self.mode == _AFTER

    def completion(self) -> str:
        """The shortest text that turns the committed prefix into a valid JSON value."""
        mode = self.mode
        if self.count != self.committed:  # a held number or escape is not part of the committed prefix
            mode = self._resume
        out = ""
        if mode == _STRING:
            out += '"'
            out += ": null" if self.in_key else ""
        elif mode == _LITERAL:
            out += self.literal
        elif mode == _VALUE:
            out += "null"
        elif mode == _OBJ_KEY:
            out += '"": null'
        elif mode == _COLON:
            out += ": null"
        for opener in reversed(self.stack):
            out += "}" if opener == "{" else "]"
        return out

    def _fail(self) -> None:
        self.failed = True
        if self.count != self.committed:
            self.mode = self._resume
            self.count = self.committed
        self._token = []

    def _end_number(self) -> bool:
        """Whether the held number is one :func:`loads` accepts (it refuses values beyond the double range)."""
        token = "".join(self._token)
        self._token = []
        try:
            loads(token)
        except ValueError:
            return False
        return True

    def _value_start(self, ch: str) -> bool:
        if ch == '"':
            self.mode = _STRING
            self.in_key = False
        elif ch == "{" or ch == "[":
            if len(self.stack) >= self.max_depth:
                return False
            self.stack.append(ch)
            self.mode = _OBJ_FIRST if ch == "{" else _ARRAY_FIRST
        elif ch == "-" or ch in _DIGITS:
            self._resume = self.mode
            self._token = [ch]
            self.mode = _N_MINUS if ch == "-" else _N_ZERO if ch == "0" else _N_INT
        elif ch in "tfn":
            self.literal = {"t": "rue", "f": "alse", "n": "ull"}[ch]
            self.mode = _LITERAL
        else:
            return False
        return True

    def _close(self, ch: str) -> bool:
        if not self.stack or self.stack[-1] != ("{" if ch == "}" else "["):
            return False
        self.stack.pop()
        self.mode = _AFTER
        return True

    def _after_value(self, ch: str) -> bool:
        if ch in _WS:
            return True
        if ch == ",":
            if not self.stack:
                return False
            self.mode = _OBJ_KEY if self.stack[-1] == "{" else _VALUE
            return True
        if ch in "}]":
            return self._close(ch)
        return False

    def _step(self, ch: str) -> bool:
        mode = self.mode
        if mode == _STRING:
            if ch == '"':
                if self.in_key:
                    self.mode = _COLON
                    self.in_key = False
                else:
                    self.mode = _AFTER
                return True
            if ch == "\\":
                self._resume = _STRING
                self.mode = _ESCAPE
                return True
            return ch >= " "
        if mode >= _ESCAPE and mode <= _LOW_HEX:
            return self._escape(mode, ch)
        if mode == _LITERAL:
            if ch != self.literal[0]:
                return False
            self.literal = self.literal[1:]
            if not self.literal:
                self.mode = _AFTER
            return True
        if mode >= _N_MINUS:  # numbers
            return self._number(mode, ch)
        if mode == _VALUE:
            return ch in _WS or self._value_start(ch)
        if mode == _ARRAY_FIRST:
            if ch == "]":
                return self._close(ch)
            return ch in _WS or self._value_start(ch)
        if mode in (_OBJ_FIRST, _OBJ_KEY):
            if ch in _WS:
                return True
            if ch == "}" and mode == _OBJ_FIRST:
                return self._close(ch)
            if ch == '"':
                self.mode = _STRING
                self.in_key = True
                return True
            return False
        if mode == _COLON:
            if ch in _WS:
                return True
            if ch == ":":
                self.mode = _VALUE
                return True
            return False
        return self._after_value(ch)  # _AFTER

    def _escape(self, mode: int, ch: str) -> bool:
        if mode == _ESCAPE:
            if ch == "u":
                self.mode = _UNICODE
                self.hex_left = 4
                self._code = 0
                return True
            if ch in '"\\/bfnrt':
                self.mode = _STRING
                return True
            return False
        if mode == _LOW_BACKSLASH:
            if ch != "\\":
                return False
            self.mode = _LOW_U
            return True
        if mode == _LOW_U:
            if ch != "u":
                return False
            self.mode = _LOW_HEX
            self.hex_left = 4
            return True
        # _UNICODE / _LOW_HEX: four hex digits
        if ch not in _HEX:
            return False
        self.hex_left -= 1
        if mode == _UNICODE:
            self._code = self._code * 16 + int(ch, 16)
            if self.hex_left:
                return True
            if 0xDC00 <= self._code <= 0xDFFF:
                return False  # a low surrogate without its high partner
            self.mode = _LOW_BACKSLASH if 0xD800 <= self._code <= 0xDBFF else _STRING
            return True
        if self.hex_left == 3 and ch not in "dD":
            return False
        if self.hex_left == 2 and ch not in "cdefCDEF":
            return False
        if not self.hex_left:
            self.mode = _STRING
        return True

    def _number(self, mode: int, ch: str) -> bool:
        digit = ch in _DIGITS
        if mode == _N_MINUS:
            if not digit:
                return False
            self._token.append(ch)
            self.mode = _N_ZERO if ch == "0" else _N_INT
            return True
        if mode in (_N_ZERO, _N_INT):
            if digit and mode == _N_INT:
                self._token.append(ch)
                return True
            if ch == ".":
                self._token.append(ch)
                self.mode = _N_DOT
                return True
            if ch in "eE":
                self._token.append(ch)
                self.mode = _N_EXP
                return True
        elif mode in (_N_DOT, _N_FRAC):
            if digit:
                self._token.append(ch)
                self.mode = _N_FRAC
                return True
            if mode == _N_FRAC and ch in "eE":
                self._token.append(ch)
                self.mode = _N_EXP
                return True
            if mode == _N_DOT:
                return False
        elif mode == _N_EXP:
            if ch in "+-" or digit:
                self._token.append(ch)
                self.mode = _N_EXP_SIGN if not digit else _N_EXP_DIGITS
                return True
            return False
        elif mode in (_N_EXP_SIGN, _N_EXP_DIGITS):
            if digit:
                self._token.append(ch)
                self.mode = _N_EXP_DIGITS
                return True
            if mode == _N_EXP_SIGN:
                return False
        # The number ended at this character: it is final once loads() accepts it; the character must then
        # continue after a value.
        if not self._end_number():
            return False
        self.mode = _AFTER
        self.committed = self.count
        return self._after_value(ch)


# --- the block parser ----------------------------------------------------------------------------------------

_BLOCK, _NAME, _INVOKE, _TAG, _SVALUE, _NVALUE, _DONE = range(7)
STATE_NAMES = ("block", "name", "invoke", "parameter_tag", "string_value", "json_value", "done")

_BLOCK_PATTERNS = (
    'invoke name="',
    "</" + DSML_SOFT + "tool_calls>",
    "</" + DSML_HARD + "tool_calls>",
    "</" + DSML_SOFT + " calls>",
    "</" + DSML_HARD + " calls>",
)
_INVOKE_PATTERNS = (
    "<" + DSML_SOFT + "parameter",
    "<" + DSML_HARD + "parameter",
    "<" + DSML_SOFT + " parameter",
    "<" + DSML_HARD + " parameter",
    # The reference starts a parameter at this text alone (no opener needed); its attributes start at "name=".
    "parameter name=",
    "</" + DSML_SOFT,
    "</" + DSML_HARD,
)
_BARE_PARAMETER = 4  # index of the opener-less pattern in _INVOKE_PATTERNS
_FIRST_CLOSE = 5  # index of the first closing-tag pattern in _INVOKE_PATTERNS


def _prefixes(patterns: tuple[str, ...]) -> frozenset[str]:
    return frozenset(p[:k] for p in patterns for k in range(1, len(p)))


def _scanner(patterns: tuple[str, ...]) -> re.Pattern[str]:
    # No pattern occurs inside another, so the leftmost match is also the one that ends first.
    return re.compile("|".join(re.escape(p) for p in patterns))


_PREFIXES = {_BLOCK: _prefixes(_BLOCK_PATTERNS), _INVOKE: _prefixes(_INVOKE_PATTERNS)}
_SCANNERS = {_BLOCK: _scanner(_BLOCK_PATTERNS), _INVOKE: _scanner(_INVOKE_PATTERNS)}
_INDEX = {
    state: {p: k for k, p in enumerate(patterns)}
    for state, patterns in ((_BLOCK, _BLOCK_PATTERNS), (_INVOKE, _INVOKE_PATTERNS))
}
_LONGEST = max(len(p) for p in _BLOCK_PATTERNS + _INVOKE_PATTERNS)

# Value kinds, from the ``string`` attribute (D8).
_KIND_STRING, _KIND_JSON, _KIND_AUTO = range(3)
# Value hold modes (D8).
_HOLD, _STREAM, _AS_STRING, _BROKEN = range(4)
# Quote states of the parameter tag scanner.
_OUT, _IN, _IN_AFTER_QUOTE = range(3)

# Argument delta kinds: structural pieces are separate deltas; key and value pieces merge within one feed.
_STRUCT, _KEYTEXT, _VALUETEXT = range(3)

_TAG_WS = " \t\n\r"
_TAG_STOPS = re.compile(f'[">{DSML_SOFT}{DSML_HARD}]')


def _json_key(body: str) -> str:
    """The key as a JSON string (D8).

    The model writes ``name="KEY"``; the reference copies that text, so ``KEY`` counts as JSON string content as
    written (``k\\n`` stays an escape) when that makes a JSON string :func:`dscodec._json.loads` accepts;
    otherwise (a bare quote, a control character, a lone surrogate escape, a trailing backslash) it is escaped.
    """
    candidate = '"' + body + '"'
    try:
        loads(candidate)
    except ValueError:
        return '"' + escape_json_string(body) + '"'
    return candidate


def _tag_attributes(text: str) -> dict[str, str]:
    """The attributes of a parameter tag (the text between ``parameter`` and ``>``); the first of each name
    wins. Values are double-quoted (the closing quote is one followed by white space, ``/`` or the end) or bare
    (up to white space); words without ``=`` and stray characters are skipped."""
    attrs: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        if text[i] in _TAG_WS or text[i] in '"=/':
            i += 1
            continue
        j = i
        while j < n and text[j] not in _TAG_WS and text[j] not in '="':
            j += 1
        name = text[i:j]
        k = j
        while k < n and text[k] in _TAG_WS:
            k += 1
        if k >= n or text[k] != "=":
            i = max(j, i + 1)
            continue
        k += 1
        while k < n and text[k] in _TAG_WS:
            k += 1
        if k < n and text[k] == '"':
            end = k + 1
            while True:
                end = text.find('"', end)
                if end < 0 or end + 1 == n or text[end + 1] in _TAG_WS or text[end + 1] == "/":
                    break
                end += 1
            value = text[k + 1 : end] if end >= 0 else text[k + 1 :]
            i = n if end < 0 else end + 1
        else:
            end = k
            while end < n and text[end] not in _TAG_WS:
                end += 1
            value = text[k:end]
            i = end
        attrs.setdefault(name, value)
    return attrs


def _hold(s: str, prefixes: frozenset[str], longest: int) -> int:
    for k in range(min(longest, len(s)), 0, -1):
        if s[-k:] in prefixes:
            return k
    return 0


class BlockParser:
    """Parses one DSML tool-call block from machine units into tool-call events.

    Args:
        spell: turns units (with sentinels) into the text they stand for.
        id_factory: makes the call id from the call index.
    """

    def __init__(self, *, spell: Callable[[str], str], id_factory: ToolCallIdFactory) -> None:
        self._spell = spell
        self._id_factory = id_factory
        self.state = _BLOCK
        self._held = ""  # units: a possible partial pattern / terminator
        self.calls = 0
        self._out: list[Event] = []
        # current call
        self._index = -1
        self._name: list[str] = []
        self._args: list[str] = []
        self._params = 0
        self._param_name = ""
        # current parameter tag
        self._tag: list[str] = []
        self._quote = _OUT
        self._skip = False  # the current parameter has no name: its value is read and dropped
        # current JSON value (D8)
        self._kind = _KIND_STRING
        self._value_mode = _HOLD
        self._unsent: list[str] = []  # raw value text not sent yet (all of it while held)
        self._value_len = 0
        self._sent = 0  # value characters sent as written
        self._checker = JsonPrefix(max_depth=MAX_DEPTH - 1)
        # pending argument delta of this feed
        self._delta_kind = -1
        self._delta: list[str] = []
        self._delta_raw: list[str] = []

    @property
    def done(self) -> bool:
        return self.state == _DONE

    @property
    def state_name(self) -> str:
        return STATE_NAMES[self.state]

    @property
    def pending_units(self) -> str:
        return "".join(self._tag) + self._held

    # -- output helpers ---------------------------------------------------------------------------------------

    def _flush_delta(self) -> None:
        if self._delta:
            text = "".join(self._delta)
            raw = "".join(self._delta_raw) if self._delta_kind == _VALUETEXT and self._delta_raw else None
            self._out.append(
                ToolCallDelta(self._index, text, raw, self._param_name if raw is not None else None)
            )
            self._delta = []
            self._delta_raw = []
        self._delta_kind = -1

    def _emit(self, text: str, kind: int, raw: str | None = None) -> None:
        if not text:
            return
        self._args.append(text)
        if kind == _STRUCT or kind != self._delta_kind:
            self._flush_delta()
        self._delta.append(text)
        if raw is not None:
            self._delta_raw.append(raw)
        if kind == _STRUCT:
            self._flush_delta()
        else:
            self._delta_kind = kind

    def _end_call(self, *, complete: bool) -> None:
        self._flush_delta()
        self._out.append(ToolCallEnd(self._index, "".join(self._args), complete))
        self._index = -1

    def string_value_piece(self, text: str) -> ToolCallDelta | None:
        """Fast path: ``text`` (plain text, no sentinels) continues a ``string="true"`` value and cannot start
        its closing tag. Returns the argument delta, or None when the general :meth:`feed` is needed."""
        if self.state != _SVALUE or self._skip or self._held or self._delta or "<" in text:
            return None
        escaped = escape_json_string(text)
        self._args.append(escaped)
        return ToolCallDelta(self._index, escaped, text, self._param_name)

    # -- feeding ----------------------------------------------------------------------------------------------

    def feed(self, units: str, out: list[Event]) -> None:
        """Consume ``units`` entirely, appending events to ``out``."""
        self._out = out
        s = self._held + units if self._held else units
        self._held = ""
        i = 0
        while i < len(s):
            state = self.state
            if state == _DONE:
                break
            if state in (_BLOCK, _INVOKE):
                i = self._scan(s, i, state)
            elif state == _NAME:
                j = s.find('"', i)
                if j < 0:
                    self._name.append(s[i:])
                    break
                self._name.append(s[i:j])
                i = j + 1
                self._start_call()
            elif state == _TAG:
                start = i
                i, again = self._tag_text(s, i)
                if again:  # a new tag began inside this one: scan its start ("<" or "</") again
                    if i - start >= len(again):
                        i -= len(again)
                    else:  # the start came with an earlier feed (at most once per feed)
                        s = again + s[i:]
                        i = 0
            else:  # _SVALUE / _NVALUE
                i = self._value_text(s, i)
        self._flush_delta()

    def _scan(self, s: str, i: int, state: int) -> int:
        # A compiled alternation: the search never copies the rest of ``s`` and resumes where the last one
        # ended, so a chunk holding many tags is read in linear time.
        m = _SCANNERS[state].search(s, i)
        if m is None:
            tail = s[max(i, len(s) - _LONGEST) :]
            k = _hold(tail, _PREFIXES[state], _LONGEST)
            self._held = tail[len(tail) - k :] if k else ""
            return len(s)
        index = _INDEX[state][m.group()]
        if state == _BLOCK:
            if index == 0:
                self.state = _NAME
                self._name = []
            else:
                self.state = _DONE
        elif index < _FIRST_CLOSE:  # a parameter tag begins: its separator and key follow once it is read
            self.state = _TAG
            self._tag = ["name="] if index == _BARE_PARAMETER else []
            self._quote = _OUT
        else:  # the invoke's closing tag (any closing tag ends it, as with the reference)
            self._emit("}" if self._params else "{}", _STRUCT)
            self._end_call(complete=True)
            self.state = _BLOCK
        return m.end()

    def _start_call(self) -> None:
        self.calls += 1
        self._index = self.calls - 1
        name = self._spell("".join(self._name))
        self._args = []
        self._params = 0
        self._out.append(ToolCallStart(self._index, self._id_factory(self._index), name))
        self.state = _INVOKE

    def _tag_text(self, s: str, i: int) -> tuple[int, str]:
        """Read the parameter tag up to its ``>`` (outside a quoted value), or up to a Dsml token: then a new tag
        begins inside this one, which ends the parameter without a value, and its start is scanned again."""
        quote = self._quote
        n = len(s)
        j = i
        while j < n:
            if quote != _IN_AFTER_QUOTE:  # only quotes, ">" and Dsml tokens change anything: jump to the next
                m = _TAG_STOPS.search(s, j)
                if m is None:
                    break
                j = m.start()
            ch = s[j]
            if ch == DSML_SOFT or ch == DSML_HARD:
                self._tag.append(s[i:j])
                tag = "".join(self._tag)
                cut = len(tag)
                if tag.endswith("</"):
                    cut -= 2
                elif tag.endswith("<"):
                    cut -= 1
                self._tag = [tag[:cut]]
                self._quote = _OUT
                self._end_tag(has_value=False)
                return j, tag[cut:]
            if quote == _IN_AFTER_QUOTE:
                quote = _OUT if ch in _TAG_WS or ch == ">" or ch == "/" else _IN
            if quote == _OUT:
                if ch == ">":
                    self._tag.append(s[i:j])
                    self._quote = _OUT
                    self._end_tag(has_value=True)
                    return j + 1, ""
                if ch == '"':
                    quote = _IN
            elif ch == '"':
                quote = _IN_AFTER_QUOTE
            j += 1
        self._tag.append(s[i:])
        self._quote = quote
        return n, ""

    def _end_tag(self, *, has_value: bool) -> None:
        """The parameter tag is read: write the separator and its key; start its value (or write an empty one).

        A tag without a ``name`` attribute gives no parameter (as with the reference, which never finds its
        ``parameter name=``): its value is read and dropped.
        """
        attrs = _tag_attributes(self._spell("".join(self._tag)))
        self._tag = []
        raw_name = attrs.get("name")
        if raw_name is None:
            self._skip = True
            self.state = _SVALUE
            if not has_value:
                self._end_value()
                self.state = _INVOKE
            return
        self._emit("{" if self._params == 0 else ", ", _STRUCT)
        self._params += 1
        key = _json_key(raw_name)
        self._emit(key, _KEYTEXT)
        name = loads(key)
        self._param_name = name if isinstance(name, str) else ""
        self._emit(": ", _STRUCT)
        flag = attrs.get("string")
        self._kind = _KIND_STRING if flag == "true" else _KIND_JSON if flag == "false" else _KIND_AUTO
        if self._kind == _KIND_STRING:
            self._emit('"', _STRUCT)
            self.state = _SVALUE
        else:
            self.state = _NVALUE
            self._value_mode = _HOLD
            self._unsent = []
            self._value_len = 0
            self._sent = 0
            self._checker = JsonPrefix(max_depth=MAX_DEPTH - 1)
        if not has_value:
            self._end_value()
            self.state = _INVOKE

    def _value_text(self, s: str, i: int) -> int:
        # The value ends at '</' + Dsml; hold a trailing '<' or '</'.
        j = s.find("</", i)
        while j >= 0 and j + 2 < len(s) and s[j + 2] not in (DSML_SOFT, DSML_HARD):
            j = s.find("</", j + 1)
        if j < 0:
            end = len(s)
            if s.endswith("<"):
                end -= 1
            self._held = s[end:]
            self._value_piece(s[i:end])
            return len(s)
        if j + 2 == len(s):  # '</' at the very end: may still be the close tag
            self._held = s[j:]
            self._value_piece(s[i:j])
            return len(s)
        self._value_piece(s[i:j])
        self._end_value()
        self.state = _INVOKE
        return j + 3

    def _value_piece(self, units: str) -> None:
        if not units or self._skip:
            return
        raw = self._spell(units)
        if self.state == _SVALUE:
            self._emit(escape_json_string(raw), _VALUETEXT, raw)
            return
        mode = self._value_mode
        checker = self._checker
        if mode == _HOLD:
            # Decide at the exact character where the value proves invalid or outgrows the hold, so that the
            # result does not depend on how the output was chunked. A value without a known ``string`` flag is
            # held as long as it is a valid JSON prefix: only its end can tell JSON from text.
            head = raw if self._kind == _KIND_AUTO else raw[: max(0, HOLD_LIMIT - self._value_len)]
            checker.feed(head)
            self._unsent.append(head)
            self._value_len += len(head)
            raw = raw[len(head) :]
            if checker.failed:
                self._as_string(raw)
                return
            if not raw:
                return
            self._value_mode = mode = _STREAM
            self._send_committed("")
        if mode == _STREAM:
            checker.feed(raw)
            if checker.failed and not self._sent:
                self._as_string(raw)
            else:
                self._send_committed(raw)
        elif mode == _AS_STRING:
            self._emit(escape_json_string(raw), _VALUETEXT)

    def _as_string(self, rest: str) -> None:
        """The value is not JSON and none of it was sent: it becomes a JSON string holding its raw text."""
        self._value_mode = _AS_STRING
        self._emit('"' + escape_json_string("".join(self._unsent) + rest), _VALUETEXT)
        self._unsent = []

    def _send_committed(self, raw: str) -> None:
        """Send the value text the checker has made final; keep what it still holds (a number, an escape).

        Held text is joined only when some of it is sent, so a long number arriving in many pieces costs
        linear time.
        """
        ready = self._checker.committed - self._sent
        if self._checker.failed:
            self._value_mode = _BROKEN
        if ready <= 0:
            if self._checker.failed:
                self._unsent = []
            elif raw:
                self._unsent.append(raw)
            return
        text = "".join(self._unsent) + raw if self._unsent else raw
        self._emit(text[:ready], _VALUETEXT)
        self._sent += ready
        if self._checker.failed or ready >= len(text):
            self._unsent = []
        else:
            self._unsent = [text[ready:]]

    def _end_value(self) -> None:
        if self._skip:
            self._skip = False
            return
        if self.state == _SVALUE:
            self._emit('"', _STRUCT)
            return
        mode = self._value_mode
        checker = self._checker
        if mode == _HOLD:
            text = "".join(self._unsent)
            checker.finish()
            if not text.strip(_TAG_WS) and self._kind == _KIND_JSON:
                self._emit("null", _VALUETEXT)
            elif checker.complete():
                self._emit(text, _VALUETEXT)
            else:
                self._emit('"' + escape_json_string(text) + '"', _VALUETEXT)
        elif mode == _AS_STRING:
            self._emit('"', _VALUETEXT)
        else:  # _STREAM / _BROKEN: the sent text is a valid prefix; complete it
            if mode == _STREAM:
                checker.finish()
                if checker.failed and not self._sent:
                    self._as_string("")
                    self._emit('"', _VALUETEXT)
                    return
                self._send_committed("")
            self._emit(checker.completion(), _VALUETEXT)

    def close(self, out: list[Event]) -> None:
        """End of output inside the block: flush held text like the reference and end an open call."""
        self._out = out
        held, self._held = self._held, ""
        state = self.state
        if state in (_SVALUE, _NVALUE):
            self._value_piece(held)
            if state == _NVALUE and self._value_mode in (_HOLD, _STREAM) and self._unsent:
                # The call is incomplete: its arguments stop where the output stopped, as written.
                self._emit("".join(self._unsent), _VALUETEXT)
        elif state == _TAG:
            # The output ended inside a parameter tag: the call is cut short after its separator, as the
            # reference cuts it (it writes the separator when the tag begins).
            self._emit("{" if self._params == 0 else ", ", _STRUCT)
        if self._index >= 0:
            self._end_call(complete=False)
        self._flush_delta()
