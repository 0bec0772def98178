"""Strict JSON Schema normalisation (behavior.md#json-schemas): a strict tool or response-format schema is read
into the closed subset constrained decoding supports and written back (keys in a fixed order, every object closed
and all its properties required). Shape errors use serde's wording; rule errors come after the whole tree was
read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dscodec.errors import ConversionError
from dscodec.protocols._body import (
    WireError,
    describe_value,
    fail,
    invalid_type,
    read_bool,
    read_i64,
    read_list,
    read_str,
    read_tag,
    read_tagged_map,
    read_unit_enum,
    unknown_variant,
)

__all__ = ["StrictTarget", "normalize_strict_schema"]

# -- strict normalisation ------------------------------------------------------------------------------------

StrictTarget = Literal["tool", "response_format"]

_STRICT_TYPES = ("object", "string", "number", "integer", "boolean", "array", "null")
_STRICT_LIST_TYPES = ("string", "number", "integer", "boolean", "null")
_STRICT_FORMATS = ("email", "hostname", "ipv4", "ipv6", "uuid")
#: The keywords a strict number or integer node keeps (after its description, in this order), each a number.
_STRICT_NUMBER_KEYS = (
    "const",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
)


@dataclass
class _StrictObject:
    """An object node read from a strict schema, kept until the rule pass has checked it."""

    node: dict[str, Any]
    properties: dict[str, Any]
    additional: bool | None
    required: list[str] | None


class _StrictReader:
    def __init__(self) -> None:
        # Every object in the order its reading finished (children before parents), for the rule pass.
        self.objects: list[_StrictObject] = []

    def node(self, value: Any) -> dict[str, Any]:
        """A schema node: typed (``type``), ``anyOf`` or ``$ref``, in that priority."""
        if isinstance(value, Mapping):
            if "type" in value:
                if isinstance(value["type"], (list, tuple)):
                    return self.type_list(value)
                return self.typed(value)
            if "anyOf" in value:
                return self.any_of(value)
            if "$ref" in value:
                ref = value["$ref"]
                if not isinstance(ref, str):
                    fail(f"field `$ref`: invalid type: {describe_value(ref)}, expected a string", None)
                return {"$ref": ref}
        fail("one of `type`, `anyOf`, `$ref` field is required", None)

    def type_list(self, value: Mapping[str, Any]) -> dict[str, Any]:
        names: list[str] = []
        for item in value["type"]:
            if isinstance(item, Mapping):
                item = self.type_name_in_map(item)
            if not isinstance(item, str):
                fail(f"field `type`: invalid type: {describe_value(item)}, expected string or map", None)
            if item not in _STRICT_LIST_TYPES:
                fail(f"field `type`: {unknown_variant(item, _STRICT_LIST_TYPES)}", None)
            names.append(item)
        return self.described({"type": names}, value)

    @staticmethod
    def type_name_in_map(item: Mapping[str, Any]) -> str:
        """A type name written as a one-key map, ``{"string": null}`` (how the reference also reads one)."""
        if len(item) != 1:
            fail("field `type`: invalid value: map, expected map with a single key", None)
        ((name, content),) = item.items()
        if name not in _STRICT_LIST_TYPES:
            fail(f"field `type`: {unknown_variant(name, _STRICT_LIST_TYPES)}", None)
        if content is not None:
            fail(f"field `type`: invalid type: {describe_value(content)}, expected unit", None)
        return str(name)

    def any_of(self, value: Mapping[str, Any]) -> dict[str, Any]:
        members = value["anyOf"]
        if not isinstance(members, (list, tuple)):
            fail(f"field `anyOf`: invalid type: {describe_value(members)}, expected a sequence", None)
        read: list[Any] = []
        for member in members:
            try:
                tagged = read_tagged_map(
                    member, "type", _STRICT_TYPES, "internally tagged enum JsonSchemaType", None
                )
                read.append(self.typed(tagged))
            except WireError as exc:
                raise WireError(f"field `anyOf`: {exc.detail}") from None
        return self.described({"anyOf": read}, value)

    @staticmethod
    def described(out: dict[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
        """``out`` with the ``description`` of ``value`` added when it has one (a string)."""
        item = value.get("description")
        if item is not None:
            if not isinstance(item, str):  # named, as in a struct's field (a typed node's is not)
                fail(f"field `description`: invalid type: {describe_value(item)}, expected a string", None)
            out["description"] = item
        return out

    def typed(self, value: Mapping[str, Any]) -> dict[str, Any]:
        kind = read_tag(value, "type", _STRICT_TYPES, None)
        if kind == "object":
            return self.object(value)
        if kind == "array":
            return self.array(value)
        fields: dict[str, Any] = {}
        # serde reads the fields in document order: the first bad one is reported.
        for key, item in value.items():
            if item is None:
                continue
            if key == "description" or kind == "string" and key in ("pattern",):
                fields[key] = read_str(item, None)
            elif kind == "string" and key == "format":
                fields[key] = read_unit_enum(item, _STRICT_FORMATS, None)
            elif kind == "string" and key == "enum":
                fields[key] = [read_str(v, None) for v in read_list(item, None)]
            elif kind == "integer" and key in _STRICT_NUMBER_KEYS:
                fields[key] = read_i64(item, None)
            elif kind == "number" and key in _STRICT_NUMBER_KEYS:
                if isinstance(item, bool) or not isinstance(item, (int, float)):
                    invalid_type(item, "a JSON number", None)
                fields[key] = item
        order: tuple[str, ...] = ("description",)
        if kind == "string":
            order = ("description", "pattern", "format", "enum")
        elif kind in ("integer", "number"):
            order = ("description", *_STRICT_NUMBER_KEYS)
        out: dict[str, Any] = {"type": kind}
        out.update((key, fields[key]) for key in order if key in fields)
        return out

    def array(self, value: Mapping[str, Any]) -> dict[str, Any]:
        items: Any = None
        has_items = False
        description: str | None = None
        for key, item in value.items():
            if key == "items":
                items, has_items = self.node(item), True
            elif key == "description" and item is not None:
                description = read_str(item, None)
        if not has_items:
            fail("missing field `items`", None)
        out: dict[str, Any] = {"type": "array", "items": items}
        if description is not None:
            out["description"] = description
        return out

    def object(self, value: Mapping[str, Any]) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        additional: bool | None = None
        required: list[str] | None = None
        description: str | None = None
        for key, item in value.items():
            if item is None:
                continue
            if key == "properties":
                if not isinstance(item, Mapping):
                    invalid_type(item, "a map", None)
                properties = {name: self.node(child) for name, child in item.items()}
            elif key == "additionalProperties":
                additional = read_bool(item, None)
            elif key == "required":
                required = [read_str(name, None) for name in read_list(item, None)]
            elif key == "description":
                description = read_str(item, None)
        node: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
            "required": list(properties),
        }
        if description is not None:
            node["description"] = description
        self.objects.append(_StrictObject(node, properties, additional, required))
        return node


def _check_strict_object(obj: _StrictObject, *, is_root: bool, target: StrictTarget) -> None:
    if not obj.properties and (not is_root or target == "response_format"):
        raise ConversionError("An object with no properties is not allowed.")
    if obj.required is not None:
        seen: set[str] = set()
        for name in obj.required:
            if name not in obj.properties:
                raise ConversionError(f"Required property '{name}' not found in object")
            if name in seen:
                raise ConversionError(f"Duplicate required property '{name}'")
            seen.add(name)
        if len(seen) != len(obj.properties):
            raise ConversionError("Required properties must match all properties in the object")
    if obj.additional is True:
        raise ConversionError("additionalProperties should not be true")


def normalize_strict_schema(schema: Any, *, target: StrictTarget) -> dict[str, Any]:
    """The strict form of a tool's parameters or of a ``json_schema`` response format (behavior.md#json-schemas).

    Raises:
        ConversionError: the schema is outside the strict subset. Shape errors read
            ``Invalid tool parameters schema : …`` (tools) or ``Invalid json schema: …`` (response format).
    """
    reader = _StrictReader()
    try:
        node = reader.node(schema)
    except WireError as exc:
        prefix = "Invalid tool parameters schema : " if target == "tool" else "Invalid json schema: "
        raise ConversionError(prefix + exc.detail) from None
    # Every object is checked first (as the reference does), then the top level. An object the root is, or that a
    # root anyOf offers, counts as the root (a tool's may have no properties).
    top = {id(branch) for branch in node.get("anyOf", ())}
    top.add(id(node))
    for obj in reader.objects:
        _check_strict_object(obj, is_root=id(obj.node) in top, target=target)
    if node.get("type") != "object":
        what = "function parameters schema" if target == "tool" else "json schema"
        raise ConversionError(f"The top level of the {what} must be an object.")
    return node
