"""Reading a request body: JSON text or a mapping in, typed values out, with serde-worded errors.

A protocol's ``models`` module reads its body with the ``read_*`` helpers here. They raise :class:`WireError`
(what was wrong, and where); :func:`read_body` turns it into a :class:`~dscodec.errors.ConversionError`, so a
malformed body is a 400 like any other invalid request (deviation D2), never a bare ``ValueError``. The messages
follow the reference's serde wording (behavior.md#body-reading-and-limits), which clients and the golden cases compare byte for byte.
"""

from __future__ import annotations

import math
import struct
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from typing import Any, NoReturn, TypeVar

import orjson

from dscodec._json import (
    MAX_DEPTH,
    JSONDecodeError,
    dumps_compact,
    float_text,
    loads,
    nesting_depth_exceeds,
    syntax_error,
)
from dscodec.errors import ConversionError, shown
from dscodec.protocols._debug_escapes import ESCAPED_BOUNDS

__all__ = [
    "MAX_NESTING_DEPTH",
    "WireError",
    "debug_str",
    "describe_value",
    "empty_string_error",
    "fail",
    "invalid_type",
    "join_path",
    "json_text",
    "load_body",
    "missing_field",
    "read_body",
    "read_bool",
    "read_f32",
    "read_i64",
    "read_list",
    "read_map",
    "read_str",
    "read_tag",
    "read_tagged_map",
    "read_uint",
    "read_unit_enum",
    "string_too_long_error",
    "to_f32",
    "unknown_variant",
]

#: Deepest JSON nesting accepted in a request body, counting the body object itself. The reference's JSON
#: reader stops at 128 levels ("recursion limit exceeded"); every recursive walk in dscodec stays far below
#: Python's own recursion limit with this bound. :func:`dscodec._json.loads` enforces it while parsing.
MAX_NESTING_DEPTH = MAX_DEPTH
#: The deepest nesting of arrays and objects a mapping body may hold: one level more than JSON text (the
#: reference counts the levels of a parsed mapping from one, and those of JSON text from zero).
MAX_MAPPING_DEPTH = MAX_DEPTH + 1
#: The message for a mapping body nested deeper (the reference's words).
MAPPING_DEPTH_ERROR = f"JSON input exceeds the maximum nesting depth of {MAX_MAPPING_DEPTH}"

_T = TypeVar("_T")


class WireError(Exception):
    """A body that does not have the expected JSON shape.

    ``detail`` is the serde-style description (``invalid type: integer `1`, expected a string``); ``path`` is
    where it was found (``messages[0].content``), or ``None`` for the body itself.
    """

    def __init__(self, detail: str, path: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.path = path


def debug_str(text: str) -> str:
    """``text`` as Rust's ``{:?}`` writes strings: quotes, backslash escapes, and ``\\u{..}`` for the characters the
    reference writes so (not printable, or extending a grapheme, in its Unicode version: a recorded table, so
    the answer does not depend on the Python dscodec runs on)."""
    out = ['"']
    for ch in text:
        escaped = _DEBUG_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch >= "\x7f" or ch < " ":
            point = ord(ch)
            if 0xD800 <= point <= 0xDFFF or bisect_right(_ESCAPED_STARTS, point) % 2:
                out.append(f"\\u{{{point:x}}}")
            else:
                out.append(ch)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


#: The characters :func:`debug_str` writes with a backslash escape of their own.
_DEBUG_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}
#: The bounds of the ranges of code points :func:`debug_str` writes as ``\\u{..}``, alternately a start and an
#: end (exclusive): a code point is escaped when an odd number of bounds are at or below it.
_ESCAPED_STARTS = list(accumulate(int(n) for n in "".join(ESCAPED_BOUNDS).split(",")))


def describe_value(value: Any) -> str:
    """The serde ``Unexpected`` description of a JSON value (``integer `1```, ``map``, ``string "s"``)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{float_text(value)}`"
    if isinstance(value, str):
        return f"string {debug_str(value)}"
    if isinstance(value, (list, tuple)):
        return "sequence"
    if isinstance(value, Mapping):
        return "map"
    return type(value).__name__


def fail(detail: str, path: str | None) -> NoReturn:
    """Raise a :class:`WireError`."""
    raise WireError(detail, path)


def invalid_type(value: Any, expected: str, path: str | None) -> NoReturn:
    """Raise serde's ``invalid type`` error."""
    fail(f"invalid type: {describe_value(value)}, expected {expected}", path)


def read_map(
    value: Any, expected: str, path: str | None, *, fields: int | None = None, empty_at: int = 0
) -> Mapping[str, Any]:
    """``value`` as a JSON object; ``expected`` names the struct in the error (``struct ChatCompletionTool``).

    Objects given as arrays (serde's positional struct form, which the reference accepts) are refused: no
    client sends them, and their meaning would depend on field order. An empty array gets serde's message,
    which needs the struct's field count ``fields`` (and ``empty_at``, the leading fields serde fills by default).
    """
    if isinstance(value, Mapping):
        return value
    if fields is not None and isinstance(value, (list, tuple)) and not value:
        fail(
            f"invalid length {empty_at}, expected {expected} with {fields} element{'s' if fields != 1 else ''}",
            path,
        )
    invalid_type(value, expected, path)


def read_list(value: Any, path: str | None) -> Sequence[Any]:
    """``value`` as a JSON array."""
    if isinstance(value, (list, tuple)):
        return value
    invalid_type(value, "a sequence", path)


def read_str(value: Any, path: str | None) -> str:
    """``value`` as a JSON string."""
    if isinstance(value, str):
        return value
    invalid_type(value, "a string", path)


def read_bool(value: Any, path: str | None) -> bool:
    """``value`` as a JSON boolean."""
    if value is True or value is False:
        return bool(value)
    invalid_type(value, "a boolean", path)


def read_uint(value: Any, bits: int, path: str | None) -> int:
    """``value`` as an unsigned integer of ``bits`` bits; floats (even ``1.0``) and negatives are refused."""
    expected = f"u{bits}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        invalid_type(value, expected, path)
    if isinstance(value, float):
        invalid_type(value, expected, path)
    if value < 0 or value >= 1 << bits:
        fail(f"invalid value: integer `{value}`, expected {expected}", path)
    return int(value)


def read_i64(value: Any, path: str | None) -> int:
    """``value`` as a signed 64-bit integer."""
    if isinstance(value, bool) or not isinstance(value, int):
        invalid_type(value, "i64", path)
    if not -(1 << 63) <= value < 1 << 63:
        fail(f"invalid value: integer `{value}`, expected i64", path)
    return int(value)


def to_f32(value: float) -> float:
    """Round a double to the nearest single-precision value, as a double (``0.3`` -> ``0.30000001192092896``).

    Values beyond the single-precision range become infinite, as a Rust ``as f32`` cast does.
    """
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def read_f32(value: Any, path: str | None) -> float:
    """``value`` (any JSON number) as an f32-rounded double."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        invalid_type(value, "f32", path)
    return to_f32(float(value))


def read_unit_enum(value: Any, variants: Sequence[str], path: str | None) -> str:
    """A unit-variant enum written as a string, or as a one-key map ``{"low": null}`` (serde's external form)."""
    if isinstance(value, str):
        name = value
    elif isinstance(value, Mapping):
        if len(value) != 1:
            fail("invalid value: map, expected map with a single key", path)
        name, payload = next(iter(value.items()))
        if name in variants and payload is not None:
            invalid_type(payload, "unit", path)
    else:
        invalid_type(value, "string or map", path)
    if name not in variants:
        fail(unknown_variant(name, variants), path)
    return name


def unknown_variant(name: str, variants: Sequence[str]) -> str:
    """serde's ``unknown variant`` message."""
    if len(variants) == 1:
        return f"unknown variant `{name}`, expected `{variants[0]}`"
    if len(variants) == 2:
        return f"unknown variant `{name}`, expected `{variants[0]}` or `{variants[1]}`"
    listed = ", ".join(f"`{v}`" for v in variants)
    return f"unknown variant `{name}`, expected one of {listed}"


def read_tag(mapping: Mapping[str, Any], tag: str, variants: Sequence[str], path: str | None) -> str:
    """The tag of an internally tagged enum (``role``, ``type``)."""
    if tag not in mapping:
        fail(f"missing field `{tag}`", path)
    value = mapping[tag]
    if not isinstance(value, str):
        invalid_type(value, "variant identifier", path)
    if value not in variants:
        fail(unknown_variant(value, variants), path)
    return value


def read_tagged_map(
    value: Any, tag: str, variants: Sequence[str], expected: str, path: str | None
) -> Mapping[str, Any]:
    """An internally tagged enum's object (``{"role": "user", …}``), before its tag is read.

    serde also reads such an enum from an array whose first element is the tag. dscodec refuses arrays, but
    reports a missing or unknown tag first, as the reference does.
    """
    if isinstance(value, (list, tuple)):
        if not value:
            fail(f"missing field `{tag}`", path)
        first = value[0]
        if not isinstance(first, str):
            invalid_type(first, "variant identifier", path)
        if first not in variants:
            fail(unknown_variant(first, variants), path)
    return read_map(value, expected, path)


def missing_field(name: str, path: str | None) -> WireError:
    """The error for a required field that is absent."""
    return WireError(f"missing field `{name}`", path)


def join_path(path: str, key: str) -> str:
    """``path.key`` (or ``key`` at the top level)."""
    return f"{path}.{key}" if path else key


def load_body(body: str | bytes | Mapping[str, Any]) -> Any:
    """Parse a request body given as JSON text or as an already parsed mapping (deviation D2 errors).

    JSON text nested deeper than :data:`MAX_NESTING_DEPTH` is refused by the parser itself. A mapping may nest one
    level more (:data:`MAX_MAPPING_DEPTH`, as the reference counts); it is checked for that, then serialised and
    read again, so it follows the same number and
    string rules as JSON text and values JSON cannot carry (non-string keys, sets, integers beyond 64 bits, …) are
    refused.
    """
    if isinstance(body, (str, bytes, bytearray, memoryview)):
        data = bytes(body) if isinstance(body, (bytearray, memoryview)) else body
        try:
            return loads(data)
        except JSONDecodeError as exc:
            # The reference's words and position for the first syntax error (serde_json's reader).
            raise ConversionError(f"invalid JSON request: {syntax_error(data) or exc}") from None
    if isinstance(body, Mapping):
        top = dict(body)
        # Checked before serialising: orjson has a deeper limit of its own, with another message.
        if nesting_depth_exceeds(top, MAX_MAPPING_DEPTH):
            raise ConversionError(MAPPING_DEPTH_ERROR)
        if not _plain_json(top):
            top = _as_plain_json(top)
        try:
            text = orjson.dumps(top)
        except orjson.JSONEncodeError as exc:
            raise ConversionError(f"invalid request body: not a JSON document: {exc}") from None
        # orjson writes NaN and the infinities as null, which would turn them into absent fields; JSON text
        # cannot hold them, so neither can a mapping (looked for only when the text has a null at all).
        if b"null" in text and _holds_non_finite(top):
            raise ConversionError(
                "invalid request body: not a JSON document: NaN and infinite numbers are not JSON"
            )
        try:
            return loads(text, max_depth=MAX_MAPPING_DEPTH)
        except JSONDecodeError as exc:
            raise ConversionError(f"invalid request body: not a JSON document: {exc}") from None
    raise ConversionError(f"invalid request body: expected JSON text or a mapping, got {type(body).__name__}")


#: The types of a parsed JSON document: what a mapping body is made of (nothing else is read the same way).
_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain_json(top: dict[str, Any]) -> bool:
    """Whether a mapping body (depth checked) holds only what parsed JSON holds: dicts with ``str`` keys, lists,
    and ``str``, ``int``, ``float``, ``bool`` and None, no subclasses (iterative)."""
    stack: list[Any] = [top]
    scalars = _PLAIN_SCALARS
    while stack:
        item = stack.pop()
        if item.__class__ is dict:
            for key in item:
                if key.__class__ is not str:
                    return False
            values: Any = item.values()
        else:
            values = item
        for value in values:
            kind = value.__class__
            if kind is dict or kind is list:
                stack.append(value)
            elif kind not in scalars:
                return False
    return True


def _as_plain_json(top: dict[str, Any]) -> dict[str, Any]:
    """A mapping body as parsed JSON: other mappings become dicts, tuples lists, subclasses of ``str``, ``int``
    and ``float`` their plain values; anything else (a set, bytes, a date, a dataclass, ...) is refused, naming
    where it is. Iterative, and its depth checked as it goes: other mappings hide theirs from the check made
    before (and may even hold themselves)."""
    root: dict[str, Any] = {}
    stack: list[tuple[Any, Any, str, int]] = [(top, root, "", 1)]
    while stack:
        source, target, path, depth = stack.pop()
        if depth > MAX_MAPPING_DEPTH:
            raise ConversionError(MAPPING_DEPTH_ERROR)
        if isinstance(target, dict):
            pairs: Any = source.items()
        else:
            pairs = enumerate(source)
        for key, value in pairs:
            if isinstance(target, dict):
                if not isinstance(key, str):
                    where = f"in {path}" if path else "at the top level"
                    raise ConversionError(
                        f"invalid request body: not a JSON document: a key {shown(key, 40)} "
                        f"({type(key).__name__}) {where}; JSON keys are strings"
                    )
                key = str.__str__(key)
                where = join_path(path, key)
            else:
                where = f"{path}[{key}]"
            if value is None or value.__class__ in _PLAIN_SCALARS:
                plain = value
            elif isinstance(value, Mapping):
                plain = {}
                stack.append((value, plain, where, depth + 1))
            elif isinstance(value, (list, tuple)):
                plain = []
                stack.append((value, plain, where, depth + 1))
            elif isinstance(value, str):
                plain = str.__str__(value)
            elif isinstance(value, int):
                plain = int.__index__(value)
            elif isinstance(value, float):
                plain = float.__float__(value)
            else:
                raise ConversionError(
                    f"invalid request body: not a JSON document: {where} is a {type(value).__name__}, which JSON "
                    "has no value for",
                    param=where,
                )
            if isinstance(target, dict):
                target[key] = plain
            else:
                target.append(plain)
    return root


def _holds_non_finite(value: Any) -> bool:
    """Whether a mapping read as a body holds a float that is NaN or infinite (iterative: depth is checked
    before, but a walk needs no recursion)."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def read_body(body: str | bytes | Mapping[str, Any], reader: Callable[[Any], _T]) -> _T:
    """A protocol's typed request from a body: parse (nesting limit included), read with ``reader``.

    Raises:
        ConversionError: malformed JSON, too deep, or a field of the wrong type (deviation D2); ``param`` names
            the field.
    """
    value = load_body(body)
    try:
        return reader(value)
    except WireError as exc:
        raise ConversionError(f"invalid request body: {exc.detail}", param=exc.path) from None


def empty_string_error(where: str) -> ConversionError:
    """The OpenAI error for an empty string where one character at least is needed (``where`` names the field)."""
    return ConversionError(
        f"Invalid '{where}': empty string. Expected a string with minimum length 1, "
        "but got an empty string instead."
    )


def string_too_long_error(
    where: str, *, limit: int, length: int, param: str | None = None
) -> ConversionError:
    """The OpenAI error for a string longer than ``limit`` (``where`` names the field)."""
    return ConversionError(
        f"Invalid '{where}': string too long. Expected a string with maximum length {limit}, "
        f"but got a string with length {length} instead.",
        param=param,
    )


def json_text(value: Any) -> str:
    """Compact JSON of ``value`` as the reference quotes it in schema error messages."""
    return dumps_compact(value)
