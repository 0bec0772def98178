"""JSON reading and writing with the number and spacing rules the DeepSeek templates use.

Two output styles exist (behavior.md#output-constraints, behavior.md#json-style):

* **prompt style** (tool schema lines, response-format schema, ``string="false"`` values): ``", "`` and
  ``": "`` separators, non-ASCII raw, shortest round-trip floats written positionally when the decimal
  exponent is in [-5, 16) and as ``1e+16`` / ``1.5e-7`` otherwise;
* **compact style** (output constraints): no spaces, otherwise the same strings and numbers.

The V4.1 template writes prompt-style floats the way Python's ``repr`` does instead (positional for decimal
exponents in [-4, 16), otherwise ``1e-05`` / ``1e+16``), observed against the reference: ``dumps_prompt(value,
python_floats=True)``.

Reading follows the same number model: integers that fit a signed or unsigned 64-bit integer stay integers,
larger ones become doubles, and ``-0`` is the double ``-0.0``. A document nested deeper than :data:`MAX_DEPTH`
arrays and objects is refused, as the reference's reader refuses it; so is a number too large for a double and a
lone surrogate escape. "Valid JSON" in dscodec always means "accepted by :func:`loads`".
"""

from __future__ import annotations

import functools
import json
import json.encoder
import math
import re
from collections.abc import Callable
from itertools import accumulate
from typing import Any, NoReturn

import orjson

__all__ = [
    "MAX_DEPTH",
    "JSONDecodeError",
    "dumps_compact",
    "dumps_prompt",
    "float_text",
    "loads",
    "string_literal",
]

#: ``text`` as a JSON string literal, non-ASCII kept raw: ``"``, ``\\`` and control characters escaped (``\\n``,
#: ``\\u0001``), the same text ``orjson`` writes for a string. The standard library's C escaper, the cheapest one
#: for the short pieces of the stream; a lone surrogate passes through as it is.
string_literal: Callable[[str], str] = json.encoder.encode_basestring

#: The deepest nesting of arrays and objects :func:`loads` accepts (a bare scalar has depth 0, ``[]`` depth 1).
#: The reference's reader accepts 127 levels and refuses 128, in request bodies and in tool-call arguments alike.
MAX_DEPTH = 127

_I64_MIN = -(2**63)
_U64_MAX = 2**64 - 1
_NEG_ZERO = re.compile(r"-0(?![0-9.eE])")
_NEG_ZERO_BYTES = re.compile(rb"-0(?![0-9.eE])")


class JSONDecodeError(ValueError):
    """The text is not a JSON document dscodec accepts (RFC 8259, no NaN/Infinity, no lone surrogates)."""


def _parse_int(text: str) -> int | float:
    if text == "-0":
        return -0.0
    value = int(text)
    if _I64_MIN <= value <= _U64_MAX:
        return value
    try:
        return float(value)
    except OverflowError:
        raise JSONDecodeError(f"number is infinity when parsed as double: {text[:40]}") from None


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JSONDecodeError(f"number out of range: {text}")
    return value


def _reject_constant(name: str) -> Any:
    raise JSONDecodeError(f"{name} is not valid JSON")


def depth_error(limit: int) -> str:
    """The message for a document nested deeper than ``limit``."""
    return f"recursion limit exceeded (more than {limit} nested arrays or objects)"


def nesting_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether a parsed value nests arrays and objects more than ``limit`` deep (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        depth += 1
        if depth > limit:
            return True
        stack.extend((child, depth) for child in children if isinstance(child, (dict, list, tuple)))
    return False


def _parsed_shape(value: Any, limit: int) -> tuple[bool, bool, int]:
    """Whether a value orjson parsed nests arrays and objects more than ``limit`` deep, whether it holds the
    integer 0 (which may stand for ``-0`` in the text: the text only needs a look when it does), and how many
    arrays and objects it holds. Level by level; each container is tested for a zero in C, and ``False`` and
    ``0.0`` (which also equal 0) cost a second look at that container."""
    zero = type(value) is int and value == 0
    level = [value] if value.__class__ in _CONTAINERS else []
    depth = containers = 0
    while level:
        depth += 1
        if depth > limit:
            return True, zero, containers
        containers += len(level)
        inner: list[Any] = []
        for item in level:
            children = item.values() if item.__class__ is dict else item
            if not zero and 0 in children:
                zero = any(type(child) is int and child == 0 for child in children)
            inner += [child for child in children if child.__class__ in _CONTAINERS]
        level = inner
    return False, zero, containers


_CONTAINERS = (dict, list)
#: Documents up to this long are checked for depth by counting their opening brackets (in C) when that is enough;
#: longer ones, or ones with more brackets than the depth limit, by walking the parsed value.
_COUNTED_UP_TO = 1 << 16


def _opening_brackets(data: str | bytes) -> int:
    """The ``[`` and ``{`` in JSON text, those inside strings included: a bound on its nesting depth (for other
    buffers than ``bytes``, no bound: their length)."""
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    if isinstance(data, (bytes, bytearray)):
        return data.count(b"[") + data.count(b"{")
    return len(data)


def _replaced_brackets(data: str | bytes, value: Any, containers: int, text: int) -> bool:
    """Whether the text, which holds ``text`` of ``[`` and ``{``, holds one that is in no part of its parsed
    ``value`` (which holds ``containers`` arrays and objects): a value a later duplicate key replaced held it.
    Every bracket of the value is in the text, either as it is or as an escape (``\\u005b``); so the two counts
    match exactly when nothing was replaced that held one, and the text holds no such escape. Counted in C."""
    if text == containers:
        return False
    written = orjson.dumps(value)  # its strings' brackets as they are, one per array and object
    held = written.count(b"[") + written.count(b"{")
    if held < text:  # (an escape only adds to the value's count)
        return True
    source = _as_text(data)
    escaped = len(_BRACKET_ESCAPE.findall(source)) if held > text or "\\u00" in source else 0
    return held != text + escaped


def _as_text(data: str | bytes) -> str:
    """JSON text orjson has read, as ``str`` (valid UTF-8 when it was bytes)."""
    return data if isinstance(data, str) else data.decode("utf-8")


#: The escapes of ``[`` and ``{`` in JSON text (and what only looks like one, after an escaped backslash: a count
#: that is one too many only sends the document to the slower exact reading).
_BRACKET_ESCAPE = re.compile(r"\\u00[57][bB]")
_STRING_LITERAL = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NESTING = {"[": 1, "{": 1, "]": -1, "}": -1}


def _text_depth_exceeds(data: str | bytes, limit: int) -> bool:
    """Whether valid JSON text nests arrays and objects more than ``limit`` deep, read from the text itself (so a
    value a later duplicate key replaced counts too): its strings taken out, then the running depth of its
    brackets. Linear; only for the documents :func:`_replaced_brackets` sends here."""
    brackets = re.findall(r"[\[\]{}]", _STRING_LITERAL.sub("", _as_text(data)))
    return max(accumulate(map(_NESTING.__getitem__, brackets)), default=0) > limit


def _holds_negative_zero(data: str | bytes) -> bool:
    """Whether JSON text may hold the number ``-0``: a ``-0`` that ends there and, past any whitespace, follows
    ``:``, ``,``, ``[`` or nothing. Text inside a string can look like that too, which only costs a second read;
    the ``-0`` of a date or a range inside a string (``2024-01-05``, ``x-0``) does not. Linear: each look back
    crosses only the whitespace right before its own match."""
    text: Any = data  # str and bytes alike: one-character slices, compared with the same type
    space, before = (" \t\n\r", ":,[") if isinstance(data, str) else (b" \t\n\r", b":,[")
    pattern: Any = _NEG_ZERO if isinstance(data, str) else _NEG_ZERO_BYTES
    for match in pattern.finditer(text):
        at = match.start() - 1
        while at >= 0 and text[at : at + 1] in space:
            at -= 1
        if at < 0 or text[at : at + 1] in before:
            return True
    return False


def loads(data: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON with 64-bit integer semantics.

    Args:
        data: JSON text, as ``str`` or UTF-8 ``bytes``.
        max_depth: the deepest nesting of arrays and objects accepted.

    Raises:
        JSONDecodeError: not valid JSON (including invalid UTF-8, lone surrogate escapes, numbers beyond the
            double range and nesting deeper than ``max_depth``).

    Examples:
        >>> loads('{"a": [1, -0, 1.5]}')
        {'a': [1, -0.0, 1.5]}
        >>> loads("[[1]]", max_depth=1)
        Traceback (most recent call last):
        ...
        dscodec._json.JSONDecodeError: recursion limit exceeded (more than 1 nested arrays or objects)
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise JSONDecodeError(_utf8_error(data) or str(exc)) from None
    if not isinstance(data, (str, bytes, bytearray)):  # another buffer (a memoryview): its bytes
        data = bytes(data)
    counted = len(data) <= _COUNTED_UP_TO and len(data) > 2 * max_depth
    brackets = _opening_brackets(data) if counted else 0
    if len(data) <= 2 * max_depth or (counted and brackets <= max_depth):
        # Each level of nesting takes two characters at least, and opens a bracket (text in strings only adds
        # to the count): such a document cannot be too deep.
        reread = _holds_negative_zero(data)
    else:
        too_deep, zero, containers = _parsed_shape(value, max_depth)
        if not too_deep and counted and _replaced_brackets(data, value, containers, brackets):
            # The reference's reader refuses too deep a value a duplicate key replaces as well. (Checked in the
            # documents whose brackets are counted anyway: a request body a client wrote by hand, not the long
            # conversations a serving loop resends, whose every read the count would slow.)
            too_deep = _text_depth_exceeds(data, max_depth)
        if too_deep:
            raise JSONDecodeError(depth_error(max_depth))
        reread = zero and _holds_negative_zero(data)
    if reread:
        # orjson reads "-0" as the integer 0; re-read with hooks that keep the sign as -0.0. The depth was
        # checked above, so the recursive reader stays far from Python's recursion limit.
        text = _as_text(data)
        try:
            value = json.loads(
                text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_reject_constant
            )
        except (ValueError, OverflowError, RecursionError) as exc:
            raise JSONDecodeError(str(exc)) from None
    return value


def _utf8_error(data: str | bytes) -> str | None:
    """Where bytes that are not valid UTF-8 first go wrong, said plainly (orjson speaks of a ``str`` and of
    surrogates there); None for text, and for bytes that are valid UTF-8."""
    if isinstance(data, str):
        return None
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8: byte 0x{exc.object[exc.start]:02x} at offset {exc.start} ({exc.reason})"
    return None


# Floats are written by dscodec's own rule (behavior.md#json-style), the same in prompts, in output constraints and
# in the floats quoted in error messages: :func:`float_text`. On V4.1 prompt floats are Python's repr instead.
# ``orjson`` writes the same text for a float since its version 3.11.7 only (before, ``1e16`` and ``1e-5``), so
# :func:`dumps_compact` lets it write a document only when it writes floats that way (:func:`_orjson_floats_agree`).


def float_text(value: float) -> str:
    """A finite float as dscodec writes it in JSON: shortest round-trip digits, positional for decimal exponents in
    [-5, 16) (always with a fractional part), else as ``1e+16`` / ``1e-7``.

    Examples:
        >>> [float_text(x) for x in (1.0, 0.00001, 1e15, 1e16, 1.5e-7, -0.0)]
        ['1.0', '0.00001', '1000000000000000.0', '1e+16', '1.5e-7', '-0.0']
    """
    text = repr(value)
    mantissa, _, exp_text = text.partition("e")
    if not exp_text:
        return text  # repr is positional for decimal exponents in [-4, 16), as the rule is
    exponent = int(exp_text)
    digits = mantissa.replace("-", "").replace(".", "")
    sign = "-" if value < 0 else ""
    if -5 <= exponent < 16:  # only -5 gets here
        if exponent < 0:
            return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
        digits = digits.ljust(exponent + 1, "0")
        whole, frac = digits[: exponent + 1], digits[exponent + 1 :]
        return f"{sign}{whole}.{frac or '0'}"
    body = mantissa.replace("-", "")
    body = body.removesuffix(".0")
    return f"{sign}{body}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


def _number_text(value: float, python_floats: bool) -> str:
    """A finite float in a prompt's JSON: Python's repr when ``python_floats`` (V4.1), else :func:`float_text`."""
    return repr(value) if python_floats else float_text(value)


#: Floats whose text differs between the rule and other common styles (exponent signs, the [-5, 16) window).
_FLOAT_PROBES = (1e16, 1e-5, 1e15, 1.5e-7, 1e22, 0.1, 5e-324, 1.2345678901234568e20, -0.0, 1e-4, 123.456)


@functools.cache
def _orjson_floats_agree() -> bool:
    """Whether the installed ``orjson`` writes floats as :func:`float_text` does."""
    return all(orjson.dumps(x).decode() == float_text(x) for x in _FLOAT_PROBES)


def _int_text(value: int, python_floats: bool) -> str:
    if _I64_MIN <= value <= _U64_MAX:
        return str(value)
    return _number_text(float(value), python_floats)


def _write(value: Any, out: list[str], item_sep: str, key_sep: str, python_floats: bool) -> None:
    if isinstance(value, str):
        out.append(orjson.dumps(value).decode())
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(_int_text(value, python_floats))
    elif isinstance(value, float):
        if not math.isfinite(value):
            out.append("null")
        else:
            out.append(_number_text(value, python_floats))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        out.append("{")
        first = True
        for key, item in value.items():
            if not first:
                out.append(item_sep)
            first = False
            out.append(orjson.dumps(str(key)).decode())
            out.append(key_sep)
            _write(item, out, item_sep, key_sep, python_floats)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        out.append("[")
        first = True
        for item in value:
            if not first:
                out.append(item_sep)
            first = False
            _write(item, out, item_sep, key_sep, python_floats)
        out.append("]")
    else:
        raise TypeError(f"cannot serialise {type(value).__name__} as JSON")


def dumps_prompt(value: Any, *, python_floats: bool = False) -> str:
    """Serialise ``value`` in the prompt style (``{"a": 1, "b": [1.5, 1e+16]}``).

    Args:
        value: a JSON value (dict, list, str, int, float, bool or None).
        python_floats: write floats as Python's ``repr`` does (``1e-05``), as the V4.1 template does;
            by default floats use the V4 rule of behavior.md#json-style (``0.00001``, ``1e-6``).

    Examples:
        >>> dumps_prompt({"a": 0.00001, "b": [1e-06, 1e16]})
        '{"a": 0.00001, "b": [1e-6, 1e+16]}'
        >>> dumps_prompt({"a": 0.00001, "b": [1e-06, 1e16]}, python_floats=True)
        '{"a": 1e-05, "b": [1e-06, 1e+16]}'
    """
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    out: list[str] = []
    _write(value, out, ", ", ": ", python_floats)
    return "".join(out)


def dumps_compact(value: Any) -> str:
    """Serialise ``value`` compactly (``{"a":1,"b":[1.5,1e+16]}``).

    Examples:
        >>> dumps_compact({"a": 1, "b": [1.5, 1e16, 0.00001]})
        '{"a":1,"b":[1.5,1e+16,0.00001]}'
    """
    if _orjson_floats_agree():
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # integers beyond 64 bits: write them as doubles, as the reader would
            pass
    out: list[str] = []
    _write(value, out, ",", ":", False)
    return "".join(out)


# -- the reference's message for malformed JSON text ---------------------------------------------------------------

#: Where a byte may end a run of plain string content: the quote, a backslash or a control character.
_STRING_STOP = re.compile(rb'["\\\x00-\x1f]')
_DIGITS = re.compile(rb"[0-9]*")
_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = frozenset(b'"\\/bfnrt')
_WHITE = frozenset(b" \t\n\r")


class _Malformed(Exception):
    """A syntax error, with the reference's message (``expected value at line 1 column 3``)."""


class _SyntaxScan:
    """A reading of JSON text that fails where the reference's reader (serde_json) fails, with its message and
    position: ``column`` counts bytes from the start of the line; an error about the next byte points past it (1
    for the first byte of a line), an error about what was just read points at its end."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.index = 0

    def fail(self, message: str, *, peek: bool) -> NoReturn:
        data = self.data
        end = min(len(data), self.index + 1) if peek else self.index
        start = data.rfind(b"\n", 0, end) + 1
        line = data.count(b"\n", 0, start) + 1
        raise _Malformed(f"{message} at line {line} column {end - start}")

    def peek(self) -> int | None:
        self.skip_space()
        return self.data[self.index] if self.index < len(self.data) else None

    def skip_space(self) -> None:
        data, n = self.data, len(self.data)
        while self.index < n and data[self.index] in _WHITE:
            self.index += 1

    def next_byte(self) -> int | None:
        if self.index >= len(self.data):
            return None
        self.index += 1
        return self.data[self.index - 1]

    def document(self) -> None:
        self.value(128)
        if self.peek() is not None:
            self.fail("trailing characters", peek=True)

    def value(self, depth: int) -> None:
        c = self.peek()
        if c is None:
            self.fail("EOF while parsing a value", peek=True)
        if c in b"ntf":
            self.index += 1
            for expected in {0x6E: b"ull", 0x74: b"rue", 0x66: b"alse"}[c]:
                got = self.next_byte()
                if got is None:
                    self.fail("EOF while parsing a value", peek=False)
                if got != expected:
                    self.fail("expected ident", peek=False)
        elif c == 0x2D or 0x30 <= c <= 0x39:
            self.number()
        elif c == 0x22:
            self.index += 1
            self.string()
        elif c in (0x5B, 0x7B):
            if depth == 1:
                self.fail("recursion limit exceeded", peek=True)
            self.index += 1
            if c == 0x5B:
                self.sequence(depth - 1)
            else:
                self.mapping(depth - 1)
        else:
            self.fail("expected value", peek=True)

    def entry(self, close: int, first: bool, what: str) -> int | None:
        """Before an array item or an object key: None at the closing bracket (read), else the byte that starts
        the entry (past its comma unless it is the first)."""
        c = self.peek()
        if c == close:
            self.index += 1
            return None
        if c is None:
            self.fail(f"EOF while parsing {what}", peek=True)
        if not first:
            if c != 0x2C:
                self.fail(f"expected `,` or `{chr(close)}`", peek=True)
            self.index += 1
            c = self.peek()
            if c == close:
                self.fail("trailing comma", peek=True)
            if c is None:
                self.fail("EOF while parsing a value", peek=True)
        return c

    def sequence(self, depth: int) -> None:
        first = True
        while self.entry(0x5D, first, "a list") is not None:
            first = False
            self.value(depth)

    def mapping(self, depth: int) -> None:
        first = True
        while (c := self.entry(0x7D, first, "an object")) is not None:
            first = False
            if c != 0x22:
                self.fail("key must be a string", peek=True)
            self.index += 1
            self.string()
            c = self.peek()
            if c is None:
                self.fail("EOF while parsing an object", peek=True)
            if c != 0x3A:
                self.fail("expected `:`", peek=True)
            self.index += 1
            self.value(depth)

    def string(self) -> None:
        data, n = self.data, len(self.data)
        start = self.index
        while True:
            stop = _STRING_STOP.search(data, self.index)
            if stop is None:
                self.index = n
                self.fail("EOF while parsing a string", peek=False)
            self.index = stop.start() + 1
            c = data[stop.start()]
            if c == 0x22:
                try:
                    data[start : self.index - 1].decode("utf-8")
                except UnicodeDecodeError:
                    self.fail("invalid unicode code point", peek=False)
                return
            if c != 0x5C:
                self.fail("control character (\\u0000-\\u001F) found while parsing a string", peek=False)
            escape = self.next_byte()
            if escape is None:
                self.fail("EOF while parsing a string", peek=False)
            if escape == 0x75:  # u
                unit = self.hex_unit()
                if 0xDC00 <= unit <= 0xDFFF:
                    self.fail("lone leading surrogate in hex escape", peek=False)
                if 0xD800 <= unit <= 0xDBFF:
                    for expected in (0x5C, 0x75):  # a trailing surrogate's "\u" must follow
                        got = self.next_byte()
                        if got is None:
                            self.fail("EOF while parsing a string", peek=False)
                        if got != expected:
                            self.fail("unexpected end of hex escape", peek=False)
                    if not 0xDC00 <= self.hex_unit() <= 0xDFFF:
                        self.fail("lone leading surrogate in hex escape", peek=False)
            elif escape not in _SIMPLE_ESCAPES:
                self.fail("invalid escape", peek=False)

    def hex_unit(self) -> int:
        data = self.data
        if self.index + 4 > len(data):
            self.index = len(data)
            self.fail("EOF while parsing a string", peek=False)
        digits = data[self.index : self.index + 4]
        self.index += 4
        if not all(d in _HEX_DIGITS for d in digits):
            self.fail("invalid escape", peek=False)
        return int(digits, 16)

    def digit(self) -> int:
        """The digit a number must go on with here (read), as its value."""
        byte = self.next_byte()
        if byte is None:
            self.fail("EOF while parsing a value", peek=False)
        if not 0x30 <= byte <= 0x39:
            self.fail("invalid number", peek=False)
        return byte - 0x30

    def number(self) -> None:
        data = self.data
        start = self.index
        if data[self.index] == 0x2D:  # -
            self.index += 1
        first = self.digit()
        if first == 0:
            if self.index < len(data) and 0x30 <= data[self.index] <= 0x39:
                self.fail("invalid number", peek=True)
        else:
            self.index = _DIGITS.match(data, self.index).end()  # type: ignore[union-attr]
        significand_zero = not data[start : self.index].strip(b"-0")
        if self.index < len(data) and data[self.index] == 0x2E:  # .
            self.index += 1
            digits_end = _DIGITS.match(data, self.index).end()  # type: ignore[union-attr]
            if digits_end == self.index:
                self.fail(
                    "invalid number" if self.index < len(data) else "EOF while parsing a value", peek=True
                )
            significand_zero = significand_zero and not data[self.index : digits_end].strip(b"0")
            self.index = digits_end
        if self.index < len(data) and data[self.index] in b"eE":
            self.index += 1
            positive = True
            if self.index < len(data) and data[self.index] in b"+-":
                positive = data[self.index] == 0x2B
                self.index += 1
            exponent = self.digit()
            while self.index < len(data) and 0x30 <= data[self.index] <= 0x39:
                digit = data[self.index] - 0x30
                self.index += 1
                if exponent > 214748364 or (exponent == 214748364 and digit > 7):
                    # The exponent leaves 32 bits: infinite unless the number is zero or the exponent negative.
                    if positive and not significand_zero:
                        self.fail("number out of range", peek=False)
                    self.index = _DIGITS.match(data, self.index).end()  # type: ignore[union-attr]
                    return
                exponent = exponent * 10 + digit
        if math.isinf(float(data[start : self.index])):
            self.fail("number out of range", peek=False)


def syntax_error(data: str | bytes) -> str | None:
    """The reference's message for malformed JSON text (``expected value at line 1 column 93``), or None when
    its reader takes the text (the text may still break a rule of dscodec's own reader)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    try:
        _SyntaxScan(raw).document()  # recurses two frames per level of nesting: at most 256
    except _Malformed as exc:
        return str(exc)
    except RecursionError:  # pragma: no cover - only under a caller already near Python's recursion limit
        return None
    return None
