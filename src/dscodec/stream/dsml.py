"""DSML tool-call blocks → tool-call events with incrementally streamed JSON arguments (spec §5.3, D8).

The parser runs once the output machine has seen a block opener (``<`` + the Dsml token). It works on the
machine's units (see :mod:`dscodec.stream._markers`: ``D`` below is the Dsml token, as a spelling in text chunks
or as its id) and follows what the reference does, observed from outside, as a chain of "scan until" states:

===========  ==================================================  ===========================================
state        looks for                                           then
===========  ==================================================  ===========================================
block        ``invoke name="`` / ``</D tool_calls>``,            name / done (all later output is discarded)
             ``</D calls>``; other text is ignored
name         ``"``                                               the call starts (id, name); → invoke
invoke       ``parameter name=`` / ``</D``                        ``{`` or ``, `` then key / ``}`` → block
key          a space (the key is everything before it)           ``: `` → attribute
attribute    ``true">`` / ``false">`` (anything else is skipped)  string value / JSON value
value        ``</D``                                             the parameter ends → invoke
===========  ==================================================  ===========================================

Where dscodec differs (DEVIATIONS.md D8): a call whose invoke is closed always has arguments that are valid JSON
(RFC 8259):

* keys are written as JSON strings: the raw key text (quotes included) is kept when it is a valid JSON string,
  as the reference copies it, and escaped otherwise (missing quotes supplied); a key is sent once its
  terminating space is seen;
* a ``string="false"`` value is **held until its parameter closes**, then written as is when it is valid JSON,
  as ``null`` when it is empty or blank, and otherwise as a JSON string holding the raw text. Two cases end the
  hold early, decided at the exact character so that chunking never matters: the value proves invalid within
  its first :data:`HOLD_LIMIT` characters (a character no JSON text can continue with, e.g. ``N`` of ``NaN``) —
  it is then streamed as a JSON string right away; or it grows past :data:`HOLD_LIMIT` characters while still a
  valid JSON prefix — it is then streamed as written, checked character by character, and if it turns out
  invalid or unfinished, the shortest text that completes what was sent is added at the parameter's end
  (``null`` for a missing value, closing quotes and brackets) and the rest of the raw value is dropped.

Incomplete calls (the output ended inside them) keep the reference's behaviour: their arguments stop where the
output stopped.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Callable

from dscodec.stream._markers import DSML_HARD, DSML_SOFT, escape_json_string
from dscodec.stream.events import Event, ToolCallDelta, ToolCallEnd, ToolCallStart

__all__ = ["HOLD_LIMIT", "BlockParser", "JsonPrefix", "ToolCallIdFactory", "random_tool_call_id"]

#: Longest ``string="false"`` value (in characters) held back to decide whether it is valid JSON (D8).
HOLD_LIMIT = 64

ToolCallIdFactory = Callable[[int], str]

_ALNUM = string.ascii_letters + string.digits


def random_tool_call_id(index: int) -> str:
    """``call_<NN>_<20 letters/digits><4 digits>`` (spec §5.3), random like the reference's.

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

# Modes of JsonPrefix.
_VALUE, _ARRAY_FIRST, _OBJ_FIRST, _OBJ_KEY, _COLON, _AFTER = range(6)
_STRING, _ESCAPE, _UNICODE = range(6, 9)
_N_MINUS, _N_ZERO, _N_INT, _N_DOT, _N_FRAC, _N_EXP, _N_EXP_SIGN, _N_EXP_DIGITS = range(9, 17)
_LITERAL = 17

_NUMBER_COMPLETION = {_N_MINUS: "0", _N_DOT: "0", _N_EXP: "0", _N_EXP_SIGN: "0"}


class JsonPrefix:
    """Checks, character by character, that text is a prefix of one JSON value (RFC 8259).

    Examples:
        >>> p = JsonPrefix()
        >>> p.feed('[1, {"a": tr'), p.complete(), p.completion()
        (12, False, 'ue}]')
        >>> JsonPrefix().feed("NaN")
        0
        >>> p = JsonPrefix()
        >>> p.feed('{"a": 1} x'), p.completion()
        (9, '')
    """

    __slots__ = ("failed", "hex_left", "in_key", "literal", "mode", "stack")

    def __init__(self) -> None:
        self.failed = False
        self.mode = _VALUE
        self.stack: list[str] = []
        self.in_key = False
        self.literal = ""
        self.hex_left = 0

    def feed(self, text: str) -> int:
        """Consume ``text``; returns how many characters were accepted (all of them unless it became invalid).

        After a rejected character nothing more is accepted, and the state stays that of the accepted prefix.
        """
        if self.failed:
            return 0
        for pos, ch in enumerate(text):
            if not self._step(ch):
                self.failed = True
                return pos
        return len(text)

    def complete(self) -> bool:
        """True when what was fed is one whole JSON value (surrounding whitespace allowed)."""
        if self.stack or self.failed:
            return False
        return self.mode == _AFTER or self.mode in (_N_ZERO, _N_INT, _N_FRAC, _N_EXP_DIGITS)

    def completion(self) -> str:
        """The shortest text that turns what was fed into a valid JSON value."""
        mode = self.mode
        out = ""
        if mode in (_STRING, _ESCAPE, _UNICODE):
            if mode == _ESCAPE:
                out += "\\"
            elif mode == _UNICODE:
                out += "0" * self.hex_left
            out += '"'
            out += ": null" if self.in_key else ""
        elif mode in _NUMBER_COMPLETION:
            out += _NUMBER_COMPLETION[mode]
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

    def _value_start(self, ch: str) -> bool:
        if ch == '"':
            self.mode = _STRING
            self.in_key = False
        elif ch == "{":
            self.stack.append("{")
            self.mode = _OBJ_FIRST
        elif ch == "[":
            self.stack.append("[")
            self.mode = _ARRAY_FIRST
        elif ch == "-":
            self.mode = _N_MINUS
        elif ch == "0":
            self.mode = _N_ZERO
        elif ch in _DIGITS:
            self.mode = _N_INT
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
                self.mode = _ESCAPE
                return True
            return ch >= " "
        if mode == _ESCAPE:
            if ch == "u":
                self.mode = _UNICODE
                self.hex_left = 4
                return True
            if ch in '"\\/bfnrt':
                self.mode = _STRING
                return True
            return False
        if mode == _UNICODE:
            if ch not in _HEX:
                return False
            self.hex_left -= 1
            if not self.hex_left:
                self.mode = _STRING
            return True
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

    def _number(self, mode: int, ch: str) -> bool:
        digit = ch in _DIGITS
        if mode == _N_MINUS:
            if not digit:
                return False
            self.mode = _N_ZERO if ch == "0" else _N_INT
            return True
        if mode in (_N_ZERO, _N_INT):
            if digit and mode == _N_INT:
                return True
            if ch == ".":
                self.mode = _N_DOT
                return True
            if ch in "eE":
                self.mode = _N_EXP
                return True
        elif mode in (_N_DOT, _N_FRAC):
            if digit:
                self.mode = _N_FRAC
                return True
            if mode == _N_FRAC and ch in "eE":
                self.mode = _N_EXP
                return True
            if mode == _N_DOT:
                return False
        elif mode == _N_EXP:
            if ch in "+-":
                self.mode = _N_EXP_SIGN
                return True
            if digit:
                self.mode = _N_EXP_DIGITS
                return True
            return False
        elif mode in (_N_EXP_SIGN, _N_EXP_DIGITS):
            if digit:
                self.mode = _N_EXP_DIGITS
                return True
            if mode == _N_EXP_SIGN:
                return False
        # The number is complete; the character must continue after a value.
        self.mode = _AFTER
        return self._after_value(ch)


# --- the block parser ----------------------------------------------------------------------------------------

_BLOCK, _NAME, _INVOKE, _KEY, _ATTR, _SVALUE, _NVALUE, _DONE = range(8)
STATE_NAMES = ("block", "name", "invoke", "key", "attribute", "string_value", "json_value", "done")

_BLOCK_PATTERNS = (
    'invoke name="',
    "</" + DSML_SOFT + "tool_calls>",
    "</" + DSML_HARD + "tool_calls>",
    "</" + DSML_SOFT + " calls>",
    "</" + DSML_HARD + " calls>",
)
_INVOKE_PATTERNS = ("parameter name=", "</" + DSML_SOFT, "</" + DSML_HARD)
_ATTR_PATTERNS = ('true">', 'false">')
_CLOSE_TAG = ("</" + DSML_SOFT, "</" + DSML_HARD)


def _prefixes(patterns: tuple[str, ...]) -> frozenset[str]:
    return frozenset(p[:k] for p in patterns for k in range(1, len(p)))


_PREFIXES = {
    _BLOCK: _prefixes(_BLOCK_PATTERNS),
    _INVOKE: _prefixes(_INVOKE_PATTERNS),
    _ATTR: _prefixes(_ATTR_PATTERNS),
}
_PATTERNS = {_BLOCK: _BLOCK_PATTERNS, _INVOKE: _INVOKE_PATTERNS, _ATTR: _ATTR_PATTERNS}

# Value hold modes (D8).
_HOLD, _STREAM, _AS_STRING, _BROKEN = range(4)

# Argument delta kinds: structural pieces are separate deltas; key and value pieces merge within one feed.
_STRUCT, _KEYTEXT, _VALUETEXT = range(3)


def _json_key(raw: str) -> str:
    """The key as a JSON string (D8).

    The model writes ``name="KEY"``; the reference copies that raw text, so ``KEY`` counts as JSON string content
    as written (``k\\n`` stays an escape). When the raw text is not a valid JSON string, it is escaped instead,
    and missing quotes are supplied.
    """
    body = raw.removeprefix('"')
    if body.endswith('"') and not body.endswith('\\"') or body.endswith('\\\\"'):
        body = body[:-1]
    candidate = '"' + body + '"'
    try:
        json.loads(candidate)
    except ValueError:
        return '"' + escape_json_string(body) + '"'
    return candidate


def _json_key_name(raw: str) -> str:
    value = json.loads(_json_key(raw))
    return value if isinstance(value, str) else raw


def _earliest(s: str, patterns: tuple[str, ...]) -> tuple[int, int]:
    """(end, index) of the pattern occurrence in ``s`` that ends first (ties: first pattern); (-1, -1) if none."""
    best_end = -1
    best_index = -1
    for index, pattern in enumerate(patterns):
        start = s.find(pattern)
        if start >= 0:
            end = start + len(pattern)
            if best_end < 0 or end < best_end:
                best_end, best_index = end, index
    return best_end, best_index


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
        self._key: list[str] = []
        self._param_name = ""
        # current JSON value (D8)
        self._value_mode = _HOLD
        self._value_held: list[str] = []
        self._value_len = 0
        self._checker = JsonPrefix()
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
        return self._held

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
        if self.state != _SVALUE or self._held or self._delta or "<" in text:
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
        n = len(s)
        while i < n:
            state = self.state
            if state == _DONE:
                break
            if state in (_BLOCK, _INVOKE, _ATTR):
                i = self._scan(s, i, state)
            elif state == _NAME:
                j = s.find('"', i)
                if j < 0:
                    self._name.append(s[i:])
                    break
                self._name.append(s[i:j])
                i = j + 1
                self._start_call()
            elif state == _KEY:
                i = self._key_text(s, i)
            else:  # _SVALUE / _NVALUE
                i = self._value_text(s, i)
        self._flush_delta()

    def _scan(self, s: str, i: int, state: int) -> int:
        rest = s[i:] if i else s
        end, index = _earliest(rest, _PATTERNS[state])
        if end < 0:
            k = _hold(rest, _PREFIXES[state], 21)
            self._held = rest[-k:] if k else ""
            return len(s)
        if state == _BLOCK:
            if index == 0:
                self.state = _NAME
                self._name = []
            else:
                self.state = _DONE
        elif state == _INVOKE:
            if index == 0:
                self._emit("{" if self._params == 0 else ", ", _STRUCT)
                self._params += 1
                self.state = _KEY
                self._key = []
            else:
                self._emit("}" if self._params else "{}", _STRUCT)
                self._end_call(complete=True)
                self.state = _BLOCK
        else:  # _ATTR
            if index == 0:
                self._emit('"', _STRUCT)
                self.state = _SVALUE
            else:
                self.state = _NVALUE
                self._value_mode = _HOLD
                self._value_held = []
                self._value_len = 0
                self._checker = JsonPrefix()
        return i + end

    def _start_call(self) -> None:
        self.calls += 1
        self._index = self.calls - 1
        name = self._spell("".join(self._name))
        self._args = []
        self._params = 0
        self._out.append(ToolCallStart(self._index, self._id_factory(self._index), name))
        self.state = _INVOKE

    def _key_text(self, s: str, i: int) -> int:
        # The key is everything up to the next space (observed); it is held until then, since only the whole
        # key tells whether the model wrote valid JSON string content.
        j = s.find(" ", i)
        if j < 0:
            self._key.append(s[i:])
            return len(s)
        self._key.append(s[i:j])
        self._emit(_json_key(self._spell("".join(self._key))), _KEYTEXT)
        self._param_name = _json_key_name(self._spell("".join(self._key)))
        self._emit(": ", _STRUCT)
        self.state = _ATTR
        return j + 1

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
        if not units:
            return
        raw = self._spell(units)
        if self.state == _SVALUE:
            self._emit(escape_json_string(raw), _VALUETEXT, raw)
            return
        mode = self._value_mode
        if mode == _HOLD:
            # Decide at the exact character where the value proves invalid or outgrows the hold, so that the
            # result does not depend on how the output was chunked.
            head = raw[: max(0, HOLD_LIMIT - self._value_len)]
            accepted = self._checker.feed(head)
            if accepted < len(head):
                text = "".join(self._value_held) + raw
                self._value_mode = _AS_STRING
                self._emit('"' + escape_json_string(text), _VALUETEXT)
                return
            self._value_held.append(head)
            self._value_len += len(head)
            raw = raw[len(head) :]
            if not raw:
                return
            self._value_mode = mode = _STREAM
            self._emit("".join(self._value_held), _VALUETEXT)
        if mode == _STREAM:
            accepted = self._checker.feed(raw)
            self._emit(raw[:accepted], _VALUETEXT)
            if accepted < len(raw):
                self._value_mode = _BROKEN
        elif mode == _AS_STRING:
            self._emit(escape_json_string(raw), _VALUETEXT)

    def _end_value(self) -> None:
        if self.state == _SVALUE:
            self._emit('"', _STRUCT)
            return
        mode = self._value_mode
        if mode == _HOLD:
            text = "".join(self._value_held)
            if not text.strip(" \t\n\r"):
                self._emit("null", _VALUETEXT)
            elif self._checker.complete():
                self._emit(text, _VALUETEXT)
            else:
                self._emit(json.dumps(text, ensure_ascii=False), _VALUETEXT)
        elif mode == _AS_STRING:
            self._emit('"', _VALUETEXT)
        else:  # _STREAM / _BROKEN: the sent text is a valid prefix; complete it
            checker = self._checker
            self._emit(checker.completion(), _VALUETEXT)

    def close(self, out: list[Event]) -> None:
        """End of output inside the block: flush held text like the reference and end an open call."""
        self._out = out
        held, self._held = self._held, ""
        state = self.state
        if state in (_SVALUE, _NVALUE):
            self._value_piece(held)
            if state == _NVALUE and self._value_mode == _HOLD and self._value_held:
                self._emit("".join(self._value_held), _VALUETEXT)
        elif state == _KEY and self._key:
            # The key never ended (no space followed): the rest of the output was the key; send it as written.
            self._emit(self._spell("".join(self._key)), _KEYTEXT)
        if self._index >= 0:
            self._end_call(complete=False)
        self._flush_delta()
