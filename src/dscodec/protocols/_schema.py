"""JSON Schema in requests: the meta-schema check of a non-strict schema (strict ones: ``_strict_schema``).

Validation (behavior.md#tools-and-tool-choice, behavior.md#output-constraints) restates the JSON Schema 2020-12 meta-schema and reports the first problem as
the reference does (``<instance> <reason>``), visiting keywords vocabulary by vocabulary in the meta-schema's
order. Keywords of drafts chosen through ``$schema`` follow the same rules (a known simplification).

The normalisation of strict schemas lives in :mod:`dscodec.protocols._strict_schema`; both are imported from here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from dscodec.protocols._body import json_text
from dscodec.protocols._strict_schema import normalize_strict_schema

__all__ = ["meta_schema_problem", "normalize_strict_schema", "schema_problem"]

# -- meta-schema validation ----------------------------------------------------------------------------------

_SIMPLE_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_ANCHOR = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")

_SCHEMA_KEYWORDS = (
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_SCHEMA_MAP_KEYWORDS = ("$defs", "properties", "patternProperties", "dependentSchemas", "definitions")
_SCHEMA_ARRAY_KEYWORDS = ("prefixItems", "allOf", "anyOf", "oneOf")
_STRING_KEYWORDS = (
    "$id",
    "$schema",
    "$ref",
    "$dynamicRef",
    "$comment",
    "title",
    "description",
    "format",
    "contentEncoding",
    "contentMediaType",
    "$recursiveRef",
)
_NUMBER_KEYWORDS = ("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum")
_COUNT_KEYWORDS = (
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
)
_BOOL_KEYWORDS = ("uniqueItems", "deprecated", "readOnly", "writeOnly")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def _is_type(value: Any, name: str) -> bool:
    actual = _json_type(value)
    return actual == name or (name == "number" and actual == "integer")


def _type_problem(value: Any, *names: str) -> str | None:
    if any(_is_type(value, n) for n in names):
        return None
    if len(names) == 1:
        return f'{json_text(value)} is not of type "{names[0]}"'
    listed = ", ".join(f'"{n}"' for n in sorted(names))
    return f"{json_text(value)} is not of types {listed}"


def _unique(items: Sequence[str]) -> bool:
    # Only string arrays (``type`` lists and ``required``) are checked for uniqueness, after their items were
    # found to be strings: a set compares them in linear time.
    return len(set(items)) == len(items)


def _regex_ok(pattern: str) -> bool:
    # Python's syntax stands in for ECMA 262's here; the two agree on the patterns people write.
    try:
        re.compile(pattern)
    except (re.error, ValueError, OverflowError, RecursionError):
        return False
    return True


_ARRAY_INDEX = re.compile(r"[0-9]+")


def _resolve_pointer(root: Any, ref: str) -> bool:
    # Only same-document JSON pointers are checked; other references are left to whoever resolves them.
    if not ref.startswith("#/"):
        return True
    node = root
    for raw in ref[2:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and (index := _array_index(token)) is not None and index < len(node):
            node = node[index]
        else:
            return False
    return True


def _array_index(token: str) -> int | None:
    """A pointer token as an array index: ASCII digits only (``str.isdigit`` also takes ``²``), and no more
    significant digits than any list can have (``int`` refuses very long digit strings)."""
    if _ARRAY_INDEX.fullmatch(token) is None:
        return None
    digits = token.lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else None


def schema_problem(schema: Any) -> str | None:
    """The first problem of a JSON Schema: a meta-schema violation, else a same-document ``$ref`` that points
    nowhere (``Pointer '/$defs/x' does not exist``), else a ``pattern`` that is not a regex, else ``None``."""
    problem = meta_schema_problem(schema)
    if problem is not None:
        return problem
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and not _resolve_pointer(schema, ref):
                return f"Pointer '{ref[1:]}' does not exist"
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    # Format problems (``pattern`` regexes) are reported last.
    return meta_schema_problem(schema, formats=True)


#: The 2020-12 meta-schema's vocabularies in the order they are checked, then the deprecated keywords the
#: base meta-schema still describes. Within one vocabulary, keywords are checked in the schema's own key order.
_VOCABULARIES: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "$id",
            "$schema",
            "$ref",
            "$anchor",
            "$dynamicRef",
            "$dynamicAnchor",
            "$vocabulary",
            "$comment",
            "$defs",
        }
    ),
    frozenset(
        {
            "prefixItems",
            "items",
            "contains",
            "additionalProperties",
            "properties",
            "patternProperties",
            "dependentSchemas",
            "propertyNames",
            "if",
            "then",
            "else",
            "allOf",
            "anyOf",
            "oneOf",
            "not",
        }
    ),
    frozenset({"unevaluatedItems", "unevaluatedProperties"}),
    frozenset(
        {
            "type",
            "const",
            "enum",
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "maxLength",
            "minLength",
            "pattern",
            "maxItems",
            "minItems",
            "uniqueItems",
            "maxContains",
            "minContains",
            "maxProperties",
            "minProperties",
            "required",
            "dependentRequired",
        }
    ),
    frozenset({"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples"}),
    frozenset({"format"}),
    frozenset({"contentEncoding", "contentMediaType", "contentSchema"}),
    frozenset({"definitions", "dependencies", "$recursiveAnchor", "$recursiveRef"}),
)
#: The position of each keyword's vocabulary in :data:`_VOCABULARIES` (every keyword is in exactly one).
_VOCABULARY_OF: Mapping[str, int] = {
    key: position for position, vocabulary in enumerate(_VOCABULARIES) for key in vocabulary
}


def meta_schema_problem(schema: Any, *, root: Any = None, formats: bool = False) -> str | None:
    """The first meta-schema violation in ``schema`` (``"1 is not of type \\"string\\""``), or ``None``.

    ``formats`` checks the ``regex`` format of ``pattern`` values and ``patternProperties`` names instead of
    everything else: the reference reports a format problem only when the schema has no other one.
    """
    if root is None:
        root = schema
    problem = None if formats else _type_problem(schema, "boolean", "object")
    if problem is not None or not isinstance(schema, Mapping):
        return problem
    # Vocabulary by vocabulary, each in the schema's key order: a stable sort of the known keywords.
    for key in sorted((key for key in schema if key in _VOCABULARY_OF), key=_VOCABULARY_OF.__getitem__):
        problem = _keyword_problem(key, schema[key], root, formats)
        if problem is not None:
            return problem
    return None


def _keyword_problem(key: str, value: Any, root: Any, formats: bool) -> str | None:
    """The problem of one keyword's value (``formats`` selects the format-only pass)."""
    if key in _SCHEMA_KEYWORDS:
        return meta_schema_problem(value, root=root, formats=formats)
    if key in _SCHEMA_MAP_KEYWORDS:
        return _schema_map_problem(key, value, root, formats)
    if key in _SCHEMA_ARRAY_KEYWORDS:
        return _schema_array_problem(value, root, formats)
    if key == "pattern":
        if formats:
            return (
                None
                if not isinstance(value, str) or _regex_ok(value)
                else f'{json_text(value)} is not a "regex"'
            )
        return _type_problem(value, "string")
    if formats:
        return _format_only(key, value, root)
    if key in _STRING_KEYWORDS:
        return _type_problem(value, "string")
    if key in ("$anchor", "$dynamicAnchor"):
        problem = _type_problem(value, "string")
        if problem is None and _ANCHOR.fullmatch(value) is None:
            problem = f'{json_text(value)} does not match "^[A-Za-z_][-A-Za-z0-9._]*$"'
        return problem
    if key == "$vocabulary":
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
        return next((p for p in (_type_problem(v, "boolean") for v in value.values()) if p is not None), None)
    if key == "type":
        valid = (
            value in _SIMPLE_TYPES
            if isinstance(value, str)
            else isinstance(value, list)
            and len(value) > 0
            and all(isinstance(item, str) and item in _SIMPLE_TYPES for item in value)
            and _unique(value)
        )
        return (
            None
            if valid
            else f"{json_text(value)} is not valid under any of the schemas listed in the 'anyOf' keyword"
        )
    if key in ("enum", "examples"):
        return _type_problem(value, "array")
    if key == "multipleOf":
        problem = _type_problem(value, "number")
        if problem is None and value <= 0:
            problem = f"{json_text(value)} is less than or equal to the minimum of 0"
        return problem
    if key in _NUMBER_KEYWORDS:
        return _type_problem(value, "number")
    if key in _COUNT_KEYWORDS:
        problem = _type_problem(value, "integer")
        if problem is None and value < 0:
            problem = f"{json_text(value)} is less than the minimum of 0"
        return problem
    if key in _BOOL_KEYWORDS:
        return _type_problem(value, "boolean")
    if key == "required":
        return _string_array_problem(value)
    if key == "dependentRequired":
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
        return next((p for p in map(_string_array_problem, value.values()) if p is not None), None)
    if key == "dependencies":
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
        for item in value.values():
            if meta_schema_problem(item, root=root) is not None and _string_array_problem(item) is not None:
                return (
                    f"{json_text(item)} is not valid under any of the schemas listed in the 'anyOf' keyword"
                )
    return None


def _format_only(key: str, value: Any, root: Any) -> str | None:
    # Keywords holding schemas deeper down, for the format-only pass.
    if key == "dependencies" and isinstance(value, Mapping):
        for item in value.values():
            problem = meta_schema_problem(item, root=root, formats=True)
            if problem is not None:
                return problem
    return None


def _schema_map_problem(key: str, value: Any, root: Any, formats: bool) -> str | None:
    if formats:
        if not isinstance(value, Mapping):
            return None
        if key == "patternProperties":
            bad = next((name for name in value if not _regex_ok(name)), None)
            if bad is not None:
                return f'{json_text(bad)} is not a "regex"'
    else:
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
    for item in value.values():
        problem = meta_schema_problem(item, root=root, formats=formats)
        if problem is not None:
            return problem
    return None


def _schema_array_problem(value: Any, root: Any, formats: bool) -> str | None:
    if formats:
        if not isinstance(value, list):
            return None
    else:
        problem = _type_problem(value, "array")
        if problem is not None:
            return problem
        if not value:
            return f"{json_text(value)} has less than 1 item"
    for item in value:
        problem = meta_schema_problem(item, root=root, formats=formats)
        if problem is not None:
            return problem
    return None


def _string_array_problem(value: Any) -> str | None:
    problem = _type_problem(value, "array")
    if problem is not None:
        return problem
    for item in value:
        problem = _type_problem(item, "string")
        if problem is not None:
            return problem
    if not _unique(value):
        return f"{json_text(value)} has non-unique elements"
    return None
