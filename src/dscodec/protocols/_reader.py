"""Table-driven reading of JSON objects into typed values, with the reference's serde behaviour and messages.

A :class:`Struct` declares an object's fields once (key, reader, required or not, where the value goes) and
reads them the way the reference's serde derive does:

- fields are read in the order the *document* lists them, so the first malformed one is the one reported;
- missing required fields are reported after that, in the order of the *declaration*;
- ``null`` counts as absent for an optional field (unless the field says otherwise), while a required field
  passes ``null`` to its reader, which refuses it as any wrong type;
- fields the table does not declare are ignored, whatever their type.

A :class:`Tagged` reads an internally tagged enum (``{"type": "text", …}``): the tag picks the variant's
:class:`Struct`. Readers are plain ``(value, path) -> result`` callables, so the ``read_*`` helpers of
:mod:`dscodec.protocols._body` and hand-written readers for unions (``string or list``) fit the same tables.
The ``_body`` helpers a protocol's ``models`` module needs are re-exported here, so that one import
(``from dscodec.protocols import _reader as r``) serves a whole module.

Why not pydantic models: pydantic validates fields in the model's declaration order, collects every error and
words them its own way (``Input should be a valid string``). The reference stops at the first problem in the
document's order, reports missing fields only after the fields present, and uses serde's wording (``invalid
type: integer `1`, expected a string``); clients and the golden cases compare message and ``param`` byte for
byte, so the order itself is behaviour, not a detail a custom error message could restore.

Examples:
    >>> from dscodec.protocols._body import read_str
    >>> point = Struct(dict, required("x", read_str), optional("label", read_str), expected="struct Point")
    >>> point.read({"label": None, "x": "1", "extra": 2}, "p")
    {'x': '1'}
    >>> point.read({"label": 3}, "p")
    Traceback (most recent call last):
    ...
    dscodec.protocols._body.WireError: invalid type: integer `3`, expected a string
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from dscodec.protocols._body import (
    WireError,
    describe_value,
    fail,
    invalid_type,
    join_path,
    missing_field,
    read_bool,
    read_f32,
    read_list,
    read_map,
    read_str,
    read_tag,
    read_tagged_map,
    read_uint,
    read_unit_enum,
)

__all__ = [
    "Field",
    "Reader",
    "Struct",
    "Tagged",
    "WireError",
    "any_value",
    "checked",
    "constant",
    "describe_value",
    "fail",
    "invalid_type",
    "join_path",
    "list_of",
    "missing_field",
    "optional",
    "optionals",
    "read_bool",
    "read_f32",
    "read_map",
    "read_str",
    "read_tag",
    "read_tagged_map",
    "read_unit_enum",
    "required",
    "str_or_list",
    "uint",
    "unit_enum",
]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)

#: A reader: the JSON value and its path (``messages[0].content``) in, the typed value out; raises ``WireError``.
Reader = Callable[[Any, str], _T]


@dataclass(frozen=True, slots=True)
class Field:
    """One declared field of a :class:`Struct`.

    ``into`` says where the value goes among the built object's arguments: a name, several names (the reader then
    returns one value per name), or ``None`` for a field read for its type only.
    """

    key: str
    read: Reader[Any]
    required: bool
    #: For an optional field: pass ``null`` to the reader instead of treating it as absent.
    read_null: bool
    into: str | tuple[str, ...] | None


def any_value(value: Any, path: str) -> Any:
    """Any JSON value, kept as sent (a schema, a tool input)."""
    return value


def required(key: str, read: Reader[Any] = any_value, *, into: str | tuple[str, ...] | None = None) -> Field:
    """A field that must be present; its value goes to the argument ``into`` (default: the key)."""
    return Field(key, read, True, True, into or key)


def optional(
    key: str,
    read: Reader[Any] = any_value,
    *,
    into: str | tuple[str, ...] | None = None,
    read_null: bool = False,
) -> Field:
    """A field that may be absent (``null`` counts as absent unless ``read_null``); absent leaves the default."""
    return Field(key, read, False, read_null, into or key)


def optionals(read: Reader[Any], *keys: str) -> tuple[Field, ...]:
    """Optional fields that one reader reads, one per key (optional fields may be declared in any order)."""
    return tuple(optional(key, read) for key in keys)


def checked(key: str, read: Reader[Any] = any_value, *, required: bool = False) -> Field:
    """A field read for its type only: a wrong type is an error, the value itself is dropped."""
    return Field(key, read, required, required, None)


class Struct(Generic[_T_co]):
    """A JSON object with declared fields, built into a value by ``build`` (called with the fields' keywords).

    ``expected`` is serde's name for the object (``struct ChatCompletionTool``) and ``size`` its number of fields,
    both used in the message for a value that is not an object; ``empty_at`` is how many leading fields serde
    fills by default when an empty array stands for the object (its ``invalid length`` names the next one).
    """

    __slots__ = ("_build", "_plan", "_required", "empty_at", "expected", "size")

    def __init__(
        self,
        build: Callable[..., _T_co],
        *fields: Field,
        expected: str = "",
        size: int | None = None,
        empty_at: int = 0,
    ) -> None:
        self._build = build
        # What each declared key needs while reading, unpacked once here: the reader runs once per request field.
        self._plan = {field.key: (field.read, field.read_null, field.into) for field in fields}
        self._required = tuple(field.key for field in fields if field.required)
        self.expected = expected
        self.size = size
        self.empty_at = empty_at

    def read(self, value: Any, path: str | None) -> _T_co:
        """``value`` as this struct: a JSON object (else serde's ``invalid type``), then its fields."""
        if value.__class__ is not dict:
            value = read_map(value, self.expected, path, fields=self.size, empty_at=self.empty_at)
        return self._build(**self.collect(value, path))

    def read_fields(self, mapping: Mapping[str, Any], path: str | None) -> _T_co:
        """The built value of an object already known to be one (a tagged enum's variant, say)."""
        return self._build(**self.collect(mapping, path))

    def collect(self, mapping: Mapping[str, Any], path: str | None) -> dict[str, Any]:
        """The fields' values by argument name, for a caller that builds the object itself."""
        found: dict[str, Any] = {}
        plan = self._plan
        prefix = f"{path}." if path else ""
        for key, value in mapping.items():
            step = plan.get(key)
            if step is None:
                continue
            read, read_null, into = step
            if value is None and not read_null:
                continue
            if read is read_str and value.__class__ is str:  # the commonest field, without the call
                result = value
            else:
                result = read(value, prefix + key)
            if into.__class__ is str:
                found[into] = result
            elif into is not None:
                found.update(zip(into, result, strict=True))
        for key in self._required:
            if key not in mapping:
                raise missing_field(key, path)
        return found


class Tagged(Generic[_T_co]):
    """An internally tagged enum: the ``tag`` field names the variant, whose :class:`Struct` reads the rest.

    The variants' order is the order serde lists them in an ``unknown variant`` message.
    """

    __slots__ = ("_names", "_variants", "expected", "tag")

    def __init__(self, tag: str, expected: str, variants: Mapping[str, Struct[_T_co]]) -> None:
        self.tag = tag
        self.expected = expected
        self._variants = dict(variants)
        self._names = tuple(variants)

    def read(self, value: Any, path: str) -> _T_co:
        """The variant named by the tag, read from the rest of the object."""
        mapping, variant = value, None
        if value.__class__ is dict:  # the common case, a well-tagged object, without the checks below
            kind = value.get(self.tag)
            variant = self._variants.get(kind) if kind.__class__ is str else None
        if variant is None:  # serde's message for a missing, mistyped or unknown tag, or for a non-object
            mapping = read_tagged_map(value, self.tag, self._names, self.expected, path)
            variant = self._variants[read_tag(mapping, self.tag, self._names, join_path(path, self.tag))]
        return variant._build(**variant.collect(mapping, path))


def constant(value: _T, *fields: Field) -> Struct[_T]:
    """A struct that stands for ``value`` (a unit variant); its ``fields`` are read, then dropped."""
    return Struct(lambda **_: value, *fields)


def list_of(read: Reader[_T]) -> Reader[tuple[_T, ...]]:
    """A JSON array whose items ``read`` reads, each at ``path[i]``."""

    def read_items(value: Any, path: str) -> tuple[_T, ...]:
        return tuple([read(item, f"{path}[{index}]") for index, item in enumerate(read_list(value, path))])

    return read_items


def str_or_list(read_item: Reader[_T], error: str) -> Reader[str | tuple[_T, ...]]:
    """A string, or an array of items ``read_item`` reads; anything else fails with the message ``error``."""
    read_items = list_of(read_item)

    def read_either(value: Any, path: str) -> str | tuple[_T, ...]:
        if isinstance(value, str):
            return value
        if isinstance(value, (list, tuple)):
            return read_items(value, path)
        fail(error, path)

    return read_either


def uint(bits: int) -> Reader[int]:
    """An unsigned integer of ``bits`` bits (``u32``)."""

    def read_bits(value: Any, path: str) -> int:
        return read_uint(value, bits, path)

    return read_bits


def unit_enum(variants: Sequence[str]) -> Reader[str]:
    """One of ``variants``, written as a string (or as serde's one-key map)."""

    def read_variant(value: Any, path: str) -> str:
        return read_unit_enum(value, variants, path)

    return read_variant
