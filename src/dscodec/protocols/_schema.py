"""JSON Schema in requests: the meta-schema check of a non-strict schema (strict ones: ``_strict_schema``).

Validation (behavior.md#tools-and-tool-choice, behavior.md#output-constraints) restates the JSON Schema 2020-12 meta-schema and reports the first problem as
the reference does (``<instance> <reason>``), in the order it looks (docs/behavior.md#json-schemas): the base
meta-schema's own keywords, then vocabulary by vocabulary in the meta-schema's order; then the root ``$schema``,
the references and the ``regex`` format. Keywords of drafts chosen through ``$schema`` follow the same rules (a
known simplification); pointers into the meta-schema documents are not followed.

The normalisation of strict schemas lives in :mod:`dscodec.protocols._strict_schema`; both are imported from here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urljoin

from dscodec.protocols._body import json_text
from dscodec.protocols._strict_schema import normalize_strict_schema

__all__ = ["meta_schema_problem", "normalize_strict_schema", "schema_problem"]

# -- meta-schema validation ----------------------------------------------------------------------------------

_SIMPLE_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_ANCHOR = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")
#: An ``$id`` may end in an empty fragment, no other.
_ID = re.compile(r"[^#]*#?")

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


#: What :func:`_pointer_target` gives for a pointer that leads nowhere (``None`` is a JSON value it may lead to).
_MISSING = object()


def _pointer_target(root: Any, pointer: str) -> Any:
    """The value a JSON pointer (``/a/0``, percent-encoded as in a URI fragment) leads to in ``root``, or
    :data:`_MISSING`."""
    node = root
    for raw in unquote(pointer[1:]).split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and (index := _array_index(token)) is not None and index < len(node):
            node = node[index]
        else:
            return _MISSING
    return node


def _resolve_pointer(root: Any, ref: str) -> bool:
    # Only same-document JSON pointers are checked; other references are left to whoever resolves them.
    return not ref.startswith("#/") or _pointer_target(root, ref[1:]) is not _MISSING


#: The meta-schemas the reference knows by URI (observed). The drafts 4, 6 and 7 and the latest, over http and
#: https, and 2019-09 and 2020-12 over http, are known by their exact text (trailing ``#`` allowed); 2019-09 and
#: 2020-12 over https, with their vocabulary meta-schemas, are documents it holds, named with any fragment.
_BY_TEXT = frozenset(
    [
        f"{scheme}://json-schema.org/{path}"
        for scheme in ("http", "https")
        for path in ("schema", "draft-07/schema", "draft-06/schema", "draft-04/schema")
    ]
    + [f"http://json-schema.org/draft/{draft}/schema" for draft in ("2020-12", "2019-09")]
)
_DOCUMENTS = frozenset(
    [f"https://json-schema.org/draft/{draft}/schema" for draft in ("2020-12", "2019-09")]
    + [
        f"https://json-schema.org/draft/2020-12/meta/{name}"
        for name in (
            "core",
            "applicator",
            "unevaluated",
            "validation",
            "meta-data",
            "format-annotation",
            "format-assertion",
            "content",
        )
    ]
    + [
        f"https://json-schema.org/draft/2019-09/meta/{name}"
        for name in ("core", "applicator", "validation", "meta-data", "format", "content")
    ]
    + ["json-schema:///"]  # the document itself, under the base URI it has when it names none
)
#: The reference's registry fetches nothing; a resource whose URI starts with one of these it leaves to the
#: meta-schemas it holds (observed: any such URI passes while the registry is filled, and only the 2020-12 documents
#: can then be compiled).
_META_PREFIXES = ("http://json-schema.org/draft-", "https://json-schema.org/draft/")
#: The 2020-12 meta-schema documents, which a compiled ``$ref`` can reach; their only anchor is ``meta``.
_COMPILED_DOCUMENTS = frozenset(
    uri for uri in _DOCUMENTS if uri.startswith("https://json-schema.org/draft/2020-12/")
)
_META_ANCHOR = "meta"
#: The first character a URI reference may not hold: one outside RFC 3986's unreserved characters, sub-delims,
#: ``:@/?#`` and ``%``, or a ``%`` without two hex digits (a second ``#`` is found apart).
_URI_BAD = re.compile(r"[^-A-Za-z0-9._~!$&'()*+,;=:@/?#%]|%(?![0-9A-Fa-f]{2})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def _meta_schema_uri_problem(uri: str, nodes: Sequence[Mapping[str, Any]]) -> str | None:
    """The problem of a root ``$schema`` (observed from the reference): a draft named with more than one ``#`` (no
    "uri"), text that is no URI reference, or a URI that names no meta-schema the reference knows (the drafts,
    their vocabularies, or a resource of this very document)."""
    unknown = (
        f"Unknown meta-schema: '{uri}'. Custom meta-schemas must be registered in the registry before use"
    )
    if uri.rstrip("#") in _BY_TEXT:
        return None if uri.count("#") <= 1 else f'{json_text(uri)} is not a "uri"'
    if uri.startswith("#"):  # the document itself, unless the fragment is none a URI may have
        return None if _uri_problem(uri[1:], allow_hash=False) is None else unknown
    problem = _uri_problem(uri, allow_hash=True)
    if problem is not None:
        return f"Invalid URI reference '{uri}': {problem}"
    base = uri.partition("#")[0]
    if not base or base in _DOCUMENTS or base in _resource_ids(nodes):
        return None
    return unknown


def _uri_problem(text: str, *, allow_hash: bool) -> str | None:
    """Why ``text`` is no URI reference (the first bad character or escape), or None."""
    bad = _URI_BAD.search(text)
    end = len(text) if bad is None else bad.start()
    first = text.find("#", 0, end)
    if first >= 0:
        second = text.find("#", first + 1, end) if allow_hash else first
        if second >= 0:
            return f"unexpected character at index {second}"
    if bad is None:
        return None
    if text[end] == "%":
        return f"invalid percent-encoded octet at index {end}"
    return f"unexpected character at index {end}"


def _root_id(schema: Mapping[str, Any]) -> str | None:
    """The root's ``$id`` without its fragment, when it is an absolute URI."""
    root = schema.get("$id")
    return root.partition("#")[0] if isinstance(root, str) and _SCHEME.match(root) else None


def _resource_ids(nodes: Sequence[Mapping[str, Any]]) -> set[str]:
    """The URIs (without fragments) of the document's resources: the absolute ``$id`` values of its subschemas
    (``nodes``, the root first), relative ones resolved against the root's."""
    base = _root_id(nodes[0])
    ids: set[str] = set()
    for node in nodes:
        value = node.get("$id")
        if isinstance(value, str):
            if _SCHEME.match(value):
                ids.add(value.partition("#")[0])
            elif base is not None and base.startswith(("http://", "https://")):
                ids.add(urljoin(base, value).partition("#")[0])
    return ids


#: A host no reference names (it holds a character no URI may hold).
_NO_HOST = "no base"


class _References:
    """What a reference can reach (observed from the reference, which fetches nothing): this document
    (``json-schema:///``, or its root ``$id``), the resources it names with ``$id``, its anchors, and for ``$ref``
    the 2019-09 and 2020-12 meta-schema documents. A relative ``$ref`` resolves against the root's ``$id`` when
    that is an http(s) URI, else there is no base; a ``$dynamicRef`` resolves against ``json-schema:///`` too."""

    def __init__(self, nodes: Sequence[Mapping[str, Any]]) -> None:
        self.schema = nodes[0]
        self.root_id = _root_id(self.schema)
        self.ids = _resource_ids(nodes)
        self.anchors = {
            node[key]
            for node in nodes
            for key in ("$anchor", "$dynamicAnchor")
            if isinstance(node.get(key), str)
        }

    def is_external(self, ref: str) -> bool:
        """Whether ``ref`` names a resource other than this document (or is no URI reference outside a
        fragment)."""
        target = ref.partition("#")[0]
        return bool(target) and target not in ("json-schema:///", self.root_id)

    def target(self, ref: str) -> Any:
        """The subschema a reference into this document points at (None for anything else)."""
        fragment = ref.partition("#")[2]
        if not fragment.startswith("/"):
            return None
        node = _pointer_target(self.schema, fragment)
        return None if node is _MISSING else node

    def problem(self, ref: str, *, dynamic: bool, compiled: bool = False) -> str | None:
        """What is wrong with reference ``ref`` (a ``$dynamicRef`` with ``dynamic``), or None: while the registry
        is filled, or (``compiled``) when the subschema holding it is compiled."""
        syntax = _uri_problem(ref, allow_hash=True)
        if syntax is not None:
            return f"Invalid URI reference '{ref}': {syntax}"
        target, _, fragment = ref.partition("#")
        if target and _SCHEME.match(target) is None:
            if self.root_id is not None and self.root_id.startswith(("http://", "https://")):
                target = urljoin(self.root_id, target)
            elif dynamic:  # against json-schema:/// (resolved as under a made-up http base, then renamed)
                joined = urljoin(f"http://{_NO_HOST}/", target)
                target = "json-schema:" + joined[5:].replace(_NO_HOST, "", 1)
            else:
                return (
                    f"Resource '{ref}' is not present in a registry and retrieving it failed: No base URI is "
                    "available"
                )
        if not target or target in ("json-schema:///", self.root_id):
            if fragment.startswith("/"):
                if not _resolve_pointer(self.schema, "#" + fragment):
                    return f"Pointer '{fragment}' does not exist"
            elif fragment and fragment not in self.anchors:
                return f"Anchor '{fragment}' does not exist"
            return None
        if target in self.ids:
            return None
        if dynamic or (compiled and target.startswith(_META_PREFIXES)):
            if not dynamic and target in _COMPILED_DOCUMENTS:
                if fragment and not fragment.startswith("/") and fragment != _META_ANCHOR:
                    return f"Anchor '{fragment}' does not exist"
                return None
            reason = "Retrieving external resources is not supported once the registry is populated"
        elif target.startswith(_META_PREFIXES):
            return None
        else:
            reason = f"Retrieval is disabled, cannot fetch {target}"
        return f"Resource '{target}' is not present in a registry and retrieving it failed: {reason}"


def _nodes(schema: Any) -> list[Mapping[str, Any]]:
    """The subschemas of ``schema`` that are objects, the root included, in document order (values of keywords
    that hold no schema, such as ``default``, ``const`` or unknown ones, are not among them)."""
    out: list[Mapping[str, Any]] = []
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            out.append(node)
            stack.extend(reversed(_subschemas(node, compiled=False)))
    return out


def _subschemas(node: Mapping[str, Any], *, compiled: bool) -> list[Any]:
    """The values of ``node`` that are schemas, in its key order; with ``compiled``, only those the reference
    compiles when it applies ``node`` (observed: not ``$defs``, ``definitions`` or ``contentSchema``, and ``if``
    only with ``then`` or ``else``)."""
    out: list[Any] = []
    for key, value in node.items():
        if key in _SCHEMA_KEYWORDS:
            if compiled and (
                key == "contentSchema" or (key == "if" and "then" not in node and "else" not in node)
            ):
                continue
            out.append(value)
        elif key in _SCHEMA_MAP_KEYWORDS or key == "dependencies":
            if compiled and key in ("$defs", "definitions"):
                continue
            if isinstance(value, Mapping):
                out.extend(value.values())
        elif key in _SCHEMA_ARRAY_KEYWORDS and isinstance(value, list):
            out.extend(value)
    return out


def _array_index(token: str) -> int | None:
    """A pointer token as an array index: ASCII digits only (``str.isdigit`` also takes ``²``), and no more
    significant digits than any list can have (``int`` refuses very long digit strings)."""
    if _ARRAY_INDEX.fullmatch(token) is None:
        return None
    digits = token.lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else None


def schema_problem(schema: Any) -> str | None:
    """The first problem of a JSON Schema: a meta-schema violation, else a root ``$schema`` that names no meta-schema
    the reference knows, else a same-document ``$ref`` that points nowhere (``Pointer '/$defs/x' does not exist``),
    else a ``pattern`` that is not a regex, else ``None``."""
    problem = meta_schema_problem(schema)
    if problem is not None:
        return problem
    nodes = _nodes(schema)  # the root first, when it is an object
    if isinstance(schema, Mapping) and isinstance(schema.get("$schema"), str):
        problem = _meta_schema_uri_problem(schema["$schema"], nodes)
        if problem is not None:
            return problem
    if any("$ref" in node or "$dynamicRef" in node for node in nodes):
        references = _References(nodes)
        # First the resources other documents would have to give, as the reference fills its registry from every
        # subschema ($defs included); then, in document order, the references of the subschemas it compiles:
        # those the root applies (not $defs, definitions or contentSchema, nor an `if` without `then` or `else`)
        # and the ones their references reach.
        for node in nodes:
            ref = node.get("$ref")
            if isinstance(ref, str) and references.is_external(ref):
                problem = references.problem(ref, dynamic=False)
                if problem is not None:
                    return problem
        seen: set[int] = set()
        stack: list[Any] = [schema]
        while stack:
            node = stack.pop()
            if not isinstance(node, Mapping) or id(node) in seen:
                continue
            seen.add(id(node))
            ref = node.get("$ref")
            target = None
            if isinstance(ref, str):
                problem = references.problem(ref, dynamic=False, compiled=True)
                if problem is not None:
                    return problem
                if not references.is_external(ref):
                    target = references.target(ref)
            dynamic = node.get("$dynamicRef")
            if isinstance(dynamic, str):
                problem = references.problem(dynamic, dynamic=True)
                if problem is not None:
                    return problem
            stack.extend(reversed(_subschemas(node, compiled=True)))
            if target is not None:
                stack.append(target)
    # Format problems (``pattern`` regexes) are reported last.
    return meta_schema_problem(schema, formats=True)


#: The order keywords are checked in (observed): first the deprecated keywords the base 2020-12 meta-schema still
#: describes itself, then its vocabularies in the meta-schema's order. Within one group, keywords are checked in
#: the schema's own key order.
_VOCABULARIES: tuple[frozenset[str], ...] = (
    frozenset({"definitions", "dependencies", "$recursiveAnchor", "$recursiveRef"}),
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
    if key == "$id":
        problem = _type_problem(value, "string")
        if problem is None and _ID.fullmatch(value) is None:
            problem = f'{json_text(value)} does not match "^[^#]*#?$"'
        return problem
    if key in _STRING_KEYWORDS:
        return _type_problem(value, "string")
    if key in ("$anchor", "$dynamicAnchor", "$recursiveAnchor"):
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


_STR_ONLY = frozenset({str})


def _string_array_problem(value: Any) -> str | None:
    # The reference's order (observed): the array, then whether its items are unique (whatever they are), then
    # whether each is a string.
    problem = _type_problem(value, "array")
    if problem is not None:
        return problem
    if set(map(type, value)) <= _STR_ONLY:  # the common case: the names themselves compare
        repeated = not _unique(value)
    else:
        repeated = len({_identity(item) for item in value}) != len(value)
    if repeated:
        return f"{json_text(value)} has non-unique elements"
    for item in value:
        problem = _type_problem(item, "string")
        if problem is not None:
            return problem
    return None


def _identity(value: Any) -> Any:
    """A hashable stand-in for a JSON value, equal for the values the reference takes as the same item: numbers
    by value (``1`` and ``1.0``, ``-0.0`` and ``0``), booleans apart from numbers, arrays item by item, objects
    member by member *in order* (``{"a":1,"b":2}`` and ``{"b":2,"a":1}`` count as different, as observed)."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("a", tuple(_identity(item) for item in value))
    if isinstance(value, dict):
        return ("o", tuple((key, _identity(item)) for key, item in value.items()))
    return ("z", None) if value is None else ("?", id(value))
