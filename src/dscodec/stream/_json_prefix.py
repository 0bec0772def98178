"""JSON prefix checking (deviation D8): is this text, so far, the start of a JSON value dscodec's reader accepts?"""

from __future__ import annotations

import enum
import re

from dscodec._json import MAX_DEPTH, loads

__all__ = ["JsonPrefix", "Mode"]

_WS = " \t\n\r"
_DIGITS = "0123456789"
_NUMBER_STARTS = "-0123456789"
_HEX = "0123456789abcdefABCDEF"


class Mode(enum.IntEnum):
    """What :class:`JsonPrefix` expects next. The order matters: the escapes, the numbers and the literal each
    form one range."""

    VALUE = 0
    ARRAY_FIRST = 1
    OBJ_FIRST = 2
    OBJ_KEY = 3
    COLON = 4
    AFTER = 5
    STRING = 6
    ESCAPE = 7
    UNICODE = 8
    LOW_BACKSLASH = 9
    LOW_U = 10
    LOW_HEX = 11
    N_MINUS = 12
    N_ZERO = 13
    N_INT = 14
    N_DOT = 15
    N_FRAC = 16
    N_EXP = 17
    N_EXP_SIGN = 18
    N_EXP_DIGITS = 19
    LITERAL = 20


# Members under module names, for the per-character code (a class attribute read costs a descriptor call).
_VALUE, _ARRAY_FIRST, _OBJ_FIRST, _OBJ_KEY, _COLON, _AFTER = (
    Mode.VALUE,
    Mode.ARRAY_FIRST,
    Mode.OBJ_FIRST,
    Mode.OBJ_KEY,
    Mode.COLON,
    Mode.AFTER,
)
_STRING, _ESCAPE, _UNICODE, _LOW_BACKSLASH, _LOW_U, _LOW_HEX = (
    Mode.STRING,
    Mode.ESCAPE,
    Mode.UNICODE,
    Mode.LOW_BACKSLASH,
    Mode.LOW_U,
    Mode.LOW_HEX,
)
_N_MINUS, _N_ZERO, _N_INT, _N_DOT = Mode.N_MINUS, Mode.N_ZERO, Mode.N_INT, Mode.N_DOT
_N_FRAC, _N_EXP, _N_EXP_SIGN, _N_EXP_DIGITS = Mode.N_FRAC, Mode.N_EXP, Mode.N_EXP_SIGN, Mode.N_EXP_DIGITS
_LITERAL = Mode.LITERAL
_NUMBER_MODES = frozenset(m for m in Mode if _N_MINUS <= m < _LITERAL)
_ESCAPE_MODES = frozenset(m for m in Mode if _ESCAPE <= m <= _LOW_HEX)
#: A number's grammar: from each number mode, the mode a character of each class leads to ("1" is any digit but
#: zero); a character with no step here ends the number, which is an error in the modes that cannot end one.
_NUMBER_CLASS = {d: "1" for d in "123456789"} | {"0": "0", ".": ".", "e": "e", "E": "e", "+": "s", "-": "s"}
_NUMBER_STEPS: dict[Mode, dict[str, Mode]] = {
    _N_MINUS: {"0": _N_ZERO, "1": _N_INT},
    _N_ZERO: {".": _N_DOT, "e": _N_EXP},
    _N_INT: {"0": _N_INT, "1": _N_INT, ".": _N_DOT, "e": _N_EXP},
    _N_DOT: {"0": _N_FRAC, "1": _N_FRAC},
    _N_FRAC: {"0": _N_FRAC, "1": _N_FRAC, "e": _N_EXP},
    _N_EXP: {"0": _N_EXP_DIGITS, "1": _N_EXP_DIGITS, "s": _N_EXP_SIGN},
    _N_EXP_SIGN: {"0": _N_EXP_DIGITS, "1": _N_EXP_DIGITS},
    _N_EXP_DIGITS: {"0": _N_EXP_DIGITS, "1": _N_EXP_DIGITS},
}
_NUMBER_UNFINISHED = frozenset({_N_MINUS, _N_DOT, _N_EXP, _N_EXP_SIGN})
#: Runs of characters that change nothing but the count: a string's plain characters; white space between
#: tokens; digits that continue a number's integer, fraction or exponent.
_STRING_RUN = re.compile(r'[^"\\\x00-\x1f]+')
_WS_RUN = re.compile("[ \t\n\r]+")
_DIGIT_RUN = re.compile("[0-9]+")
#: Numbers up to this long without an exponent are far within the double range: no need to ask :func:`loads`.
_SHORT_NUMBER = 15
#: The number modes a digit leaves as they are.
_DIGIT_MODES = frozenset({_N_INT, _N_FRAC, _N_EXP_DIGITS})
#: The rest of each literal after its first character.
_LITERAL_TAILS = {"t": "rue", "f": "alse", "n": "ull"}


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
        "final_before_failure",
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
        # After a failure: the characters that were final before the character that broke the text (a number
        # that character ends is not among them), whichever pieces the text came in.
        self.final_before_failure = 0
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
        pos = 0
        n = len(text)
        while pos < n:
            mode = self.mode
            ch = text[pos]
            # Runs that change nothing but the count are skipped at once.
            run = None
            if mode is _STRING:
                if ch != '"' and ch != "\\" and ch >= " ":
                    run = _STRING_RUN.match(text, pos)
                elif ch == '"':  # the string ends (the commonest steps are taken here, not in _step)
                    self.mode = _COLON if self.in_key else _AFTER
                    self.in_key = False
                    pos += 1
                    self.count += 1
                    self.committed = self.count
                    continue
            elif mode < _STRING:
                if ch in _WS:
                    run = _WS_RUN.match(text, pos)
                # A string or a number begins.
                elif mode <= _ARRAY_FIRST and (ch == '"' or ch in _NUMBER_STARTS):
                    if ch == '"':
                        self.mode = _STRING
                        self.in_key = False
                        self.committed = self.count + 1
                    else:
                        self._resume = mode
                        self._token = [ch]
                        self.mode = _N_MINUS if ch == "-" else _N_ZERO if ch == "0" else _N_INT
                    pos += 1
                    self.count += 1
                    continue
                elif ch == "," and mode is _AFTER and self.stack:  # the next item
                    self.mode = _OBJ_KEY if self.stack[-1] == "{" else _VALUE
                    pos += 1
                    self.count += 1
                    self.committed = self.count
                    continue
                # An array or object begins (within the depth limit).
                elif (ch == "[" or ch == "{") and mode <= _ARRAY_FIRST and len(self.stack) < self.max_depth:
                    self.stack.append(ch)
                    self.mode = _OBJ_FIRST if ch == "{" else _ARRAY_FIRST
                    pos += 1
                    self.count += 1
                    self.committed = self.count
                    continue
            elif ch in _DIGITS and mode in _DIGIT_MODES:
                run = _DIGIT_RUN.match(text, pos)
                if run is not None:
                    self._token.append(run.group())
            elif mode is _LITERAL and text.startswith(self.literal, pos):  # the rest of the literal, whole
                pos += len(self.literal)
                self.count += len(self.literal)
                self.committed = self.count
                self.literal = ""
                self.mode = _AFTER
                continue
            if run is not None:
                pos = run.end()
                self.count += run.end() - run.start()
                if mode < _ESCAPE:
                    self.committed = self.count
                continue
            before = self.committed
            if not self._step(ch):
                self._fail()
                self.final_before_failure = before
                return pos
            pos += 1
            self.count += 1
            if self.mode < _ESCAPE or self.mode == _LITERAL:
                self.committed = self.count
        return n

    def finish(self) -> bool:
        """The end of the text: a held number is checked now (a held escape can no longer complete). False if
        the check failed."""
        if self.failed:
            return False
        if self.mode in _NUMBER_MODES:
            if not self._end_number():
                self._fail()
                self.final_before_failure = self.committed
                return False
            self.mode = _AFTER
            self.committed = self.count
        elif self.mode in _ESCAPE_MODES:
            self._fail()
            self.final_before_failure = self.committed
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
        if len(token) <= _SHORT_NUMBER and token[-1] in _DIGITS and "e" not in token and "E" not in token:
            return True  # a complete number without exponent, far within the double range
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
            self.literal = _LITERAL_TAILS[ch]
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
        if mode <= _AFTER:  # between tokens
            if mode == _AFTER:
                return self._after_value(ch)
            if mode == _VALUE:
                return ch in _WS or self._value_start(ch)
            if mode == _ARRAY_FIRST:
                if ch == "]":
                    return self._close(ch)
                return ch in _WS or self._value_start(ch)
            if mode == _COLON:
                if ch in _WS:
                    return True
                if ch == ":":
                    self.mode = _VALUE
                    return True
                return False
            # _OBJ_FIRST / _OBJ_KEY
            if ch in _WS:
                return True
            if ch == "}" and mode == _OBJ_FIRST:
                return self._close(ch)
            if ch == '"':
                self.mode = _STRING
                self.in_key = True
                return True
            return False
        if mode >= _N_MINUS and mode < _LITERAL:  # numbers
            return self._number(mode, ch)
        if mode == _LITERAL:
            if ch != self.literal[0]:
                return False
            self.literal = self.literal[1:]
            if not self.literal:
                self.mode = _AFTER
            return True
        return self._escape(mode, ch)  # _ESCAPE to _LOW_HEX

    def _escape(self, mode: Mode, ch: str) -> bool:
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

    def _number(self, mode: Mode, ch: str) -> bool:
        step = _NUMBER_STEPS[mode].get(_NUMBER_CLASS.get(ch, ""))
        if step is not None:
            self._token.append(ch)
            self.mode = step
            return True
        if mode in _NUMBER_UNFINISHED:
            return False
        # The number ended at this character: it is final once loads() accepts it; the character must then
        # continue after a value.
        if not self._end_number():
            return False
        self.mode = _AFTER
        self.committed = self.count
        return self._after_value(ch)
