"""JSON Schema in requests: the meta-schema check of a non-strict schema (strict ones: ``_strict_schema``).

Validation (behavior.md#tools-and-tool-choice, behavior.md#output-constraints) restates the JSON Schema 2020-12
meta-schema and reports the first problem as the reference does (``<instance> <reason>``), in the order it looks
(docs/behavior.md#json-schemas): the base meta-schema's own keywords, then vocabulary by vocabulary in the
meta-schema's order (:func:`_checking_order`); then the ``$id`` values, the root ``$schema``, the references
(:class:`_Registry`) and the ``regex`` format. Keywords of drafts chosen through ``$schema`` follow the same rules (a
known simplification); pointers into the meta-schema documents are not followed.

The normalisation of strict schemas lives in :mod:`dscodec.protocols._strict_schema`; both are imported from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
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


def _meta_schema_uri_problem(uri: str, resources: Mapping[str, Any]) -> str | None:
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
    if not base or base in _DOCUMENTS or base in resources:
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


#: The URI of a document that names none (the reference's default base).
_DEFAULT_BASE = "json-schema:///"
_ROOTLESS = (
    "when base has a rootless path and no authority, reference should either have scheme, be empty or start "
    "with '#'"
)
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _unescape(m: re.Match[str]) -> str:
    char = chr(int(m.group(1), 16))
    return char if char in _UNRESERVED else m.group(0).upper()


def _normal(uri: str) -> str:
    """An absolute URI in the form the reference names it: scheme and host in lower case, escapes of unreserved
    characters decoded (RFC 3986, section 6.2.2)."""
    scheme, _, rest = uri.partition(":")
    if rest.startswith("//"):
        end = len(rest)
        for stop in "/?#":
            k = rest.find(stop, 2)
            if 0 <= k < end:
                end = k
        user, at, host = rest[2:end].rpartition("@")
        rest = "//" + user + at + host.lower() + rest[end:]
    if "%" in rest:
        rest = _ESCAPE.sub(_unescape, rest)
    return scheme.lower() + ":" + rest


class _Unresolved(Exception):
    """A reference that cannot be resolved against its base: the reference's message."""


def _resolve(base: str, ref: str) -> str:
    """The URI (without fragment) that ``ref`` names from a subschema whose base URI is ``base`` (absolute):
    absolute already, else resolved against the base (RFC 3986: dot segments removed).

    Raises:
        _Unresolved: a relative reference against a base without authority or root path (``urn:…``).
    """
    target = ref.partition("#")[0]
    if _SCHEME.match(target):
        return _normal(target)
    if not target:
        return base
    scheme, _, rest = base.partition(":")
    if not rest.startswith("/"):
        raise _Unresolved(f"Failed to resolve '{ref}' against '{base}': {_ROOTLESS}")
    joined = urljoin(
        "http:" + rest, target
    )  # urljoin resolves only the schemes it knows: under http, then back
    return _normal(scheme + joined[4:])


def _missing(key: str, reason: str) -> str:
    return f"Resource '{key}' is not present in a registry and retrieving it failed: {reason}"


class _Registry:
    """What references can reach (observed from the reference, which fetches nothing).

    The reference first fills a registry by crawling the schema: every subschema but those under
    ``dependencies`` (a keyword of older drafts it compiles but does not crawl). Each ``$id`` names a resource,
    resolved against the base URI of the subschema holding it (the document is ``json-schema:///`` unless its
    root names itself); anchors belong to their resource. Each ``$ref`` met must name a resource of the document
    or a URI named like a meta-schema (which loads the meta-schemas); any other is refused (``Retrieval is
    disabled``; ``No base URI is available`` for one under ``json-schema:``). Then, compiling the subschemas the
    root applies, every ``$ref`` and ``$dynamicRef`` is resolved against the base URI of its subschema: its
    pointer or anchor must lead to a schema (a boolean or an object) in its resource, and a resource the registry
    lacks is refused (``Retrieving external resources is not supported once the registry is populated``): only
    the 2020-12 meta-schema documents can be reached, once loaded. A reference that leads into a subschema the
    crawl did not see has that subschema crawled first.
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        #: Resource URI → its subschema; anchors (name → subschema) by resource URI.
        self.resources: dict[str, Any] = {}
        self.anchors: dict[str, dict[str, Any]] = {}
        #: The base URI of each crawled subschema (by ``id()``).
        self.base: dict[int, str] = {}
        self.has_references = False
        self.meta_loaded = False
        #: The first ``$id`` met while crawling that is no URI reference or cannot be resolved against its base.
        self.id_problem: str | None = None
        root = schema.get("$id")
        self.root_key = _DEFAULT_BASE
        if isinstance(root, str) and root.partition("#")[0]:
            try:
                self.root_key = _resolve(_DEFAULT_BASE, root)
            except _Unresolved:  # pragma: no cover - the default base has a root path
                pass
        #: The crawl's findings in document order: ``$id`` problems, and subschemas holding a ``$ref``.
        self._crawled: list[tuple[Mapping[str, Any], str, str | None]] = []
        self._crawl(schema, self.root_key, self._crawled)

    def _crawl(self, top: Any, base: str, found: list[tuple[Mapping[str, Any], str, str | None]]) -> None:
        stack: list[tuple[Any, str, bool]] = [(top, base, False)]
        while stack:
            node, base, hidden = stack.pop()
            if not isinstance(node, Mapping):
                continue
            if "$ref" in node or "$dynamicRef" in node or (hidden and "$id" in node):
                self.has_references = True  # compiling may find a problem
            if not hidden and id(node) not in self.base:
                base = self._register(node, base, found)
                if isinstance(node.get("$ref"), str):
                    found.append((node, base, None))
            for key, value in reversed(list(node.items())):
                inner = hidden or key == "dependencies"
                if inner and found is not self._crawled:
                    continue  # crawled later, when a reference leads there: each subschema once
                for sub in reversed(_schemas_of(key, value, node, compiled=False)):
                    stack.append((sub, base, inner))

    def _register(
        self, node: Mapping[str, Any], base: str, found: list[tuple[Mapping[str, Any], str, str | None]]
    ) -> str:
        """Register ``node`` (its resource, its anchors); its base URI."""
        value = node.get("$id")
        if isinstance(value, str) and found is self._crawled and self.id_problem is None:
            syntax = _uri_problem(value, allow_hash=True)
            if syntax is not None:
                self.id_problem = f"Invalid URI reference '{value}': {syntax}"
        if node is self.schema:
            base = self.root_key
            self.resources.setdefault(base, node)
        elif isinstance(value, str) and value.partition("#")[0]:
            try:
                base = _resolve(base, value)
            except _Unresolved as exc:
                if found is self._crawled:  # filling the registry: reported with the other $id problems
                    self.id_problem = self.id_problem or str(exc)
                else:
                    found.append((node, base, str(exc)))
            else:
                self.resources.setdefault(base, node)
        self.base[id(node)] = base
        for name in ("$anchor", "$dynamicAnchor"):
            anchor = node.get(name)
            if isinstance(anchor, str):
                self.anchors.setdefault(base, {}).setdefault(anchor, node)
        return base

    def crawl_problem(self) -> str | None:
        """The first problem met while the registry is filled: an ``$id`` or a ``$ref`` that cannot be resolved,
        or a ``$ref`` to a resource the document does not hold."""
        return self._first(self._crawled)

    def _first(self, found: list[tuple[Mapping[str, Any], str, str | None]]) -> str | None:
        for node, base, problem in found:
            if problem is None:
                problem = self._crawled_reference(node["$ref"], base)
            if problem is not None:
                return problem
        return None

    def _crawled_reference(self, ref: str, base: str) -> str | None:
        syntax = _uri_problem(ref, allow_hash=True)
        if syntax is not None:
            return f"Invalid URI reference '{ref}': {syntax}"
        try:
            key = _resolve(base, ref)
        except _Unresolved as exc:
            return str(exc)
        if key in self.resources:
            return None
        if key.startswith(_META_PREFIXES):
            self.meta_loaded = True
            return None
        if key.startswith("json-schema:"):
            return _missing(ref, "No base URI is available")
        return _missing(key, f"Retrieval is disabled, cannot fetch {key}")

    def enter(self, node: Mapping[str, Any], base: str) -> tuple[str | None, str]:
        """Compiling ``node`` under a parent whose base URI is ``base``: the problem of its ``$id`` (one the crawl
        did not see, under ``dependencies``, is first checked here), and its base URI."""
        known = self.base.get(id(node))
        if known is not None:
            return None, known
        value = node.get("$id")
        if isinstance(value, str):
            syntax = _uri_problem(value, allow_hash=True)
            if syntax is not None:
                return f"Invalid URI reference '{value}': {syntax}", base
            if value.partition("#")[0]:
                try:
                    return None, _resolve(base, value)
                except _Unresolved as exc:
                    return str(exc), base
        return None, base

    def steps(self, node: Mapping[str, Any], base: str) -> Iterator[tuple[Any, str | None]]:
        """What compiling ``node`` (base URI ``base``) leads to, keyword by keyword in its key order: each
        subschema it applies, and the target of each reference, as ``(subschema, base URI)``; a problem as
        ``(problem, None)``, after which nothing more is looked at."""
        for key, value in node.items():
            if (key == "$ref" or key == "$dynamicRef") and isinstance(value, str):
                problem, target, target_base = self.compiled(value, base, dynamic=key == "$dynamicRef")
                if problem is not None:
                    yield problem, None
                    return
                if target is not None:
                    yield target, target_base
            else:
                for sub in _schemas_of(key, value, node, compiled=True):
                    yield sub, base

    def compiled(self, ref: str, base: str, *, dynamic: bool) -> tuple[str | None, Any, str]:
        """Resolve ``ref`` (a ``$dynamicRef`` with ``dynamic``) from a compiled subschema whose base URI is
        ``base``: (its problem, else None; the subschema it leads to, None when that is outside the document;
        the target's base URI)."""
        syntax = _uri_problem(ref, allow_hash=True)
        if syntax is not None:
            return f"Invalid URI reference '{ref}': {syntax}", None, base
        try:
            key = _resolve(base, ref)
        except _Unresolved as exc:
            return str(exc), None, base
        fragment = ref.partition("#")[2]
        resource = self.resources.get(key, _MISSING)
        if resource is _MISSING:
            if not dynamic and self.meta_loaded and key in _COMPILED_DOCUMENTS:
                if fragment and not fragment.startswith("/") and fragment != _META_ANCHOR:
                    return f"Anchor '{fragment}' does not exist", None, key
                return None, None, key
            reason = "Retrieving external resources is not supported once the registry is populated"
            return _missing(key, reason), None, key
        if fragment.startswith("/"):
            target = _pointer_target(resource, fragment)
            if target is _MISSING:
                return f"Pointer '{fragment}' does not exist", None, key
        elif fragment:
            target = self.anchors.get(key, {}).get(fragment, _MISSING)
            if target is _MISSING:
                return f"Anchor '{fragment}' does not exist", None, key
        else:
            target = resource
        if not isinstance(target, (bool, Mapping)):
            return _type_problem(target, "boolean", "object"), None, key
        if isinstance(target, Mapping) and id(target) not in self.base:
            # A subschema the crawl did not see: crawled now, under the base of the resource it is in.
            found: list[tuple[Mapping[str, Any], str, str | None]] = []
            self._crawl(target, key, found)
            problem = self._first(found)
            if problem is not None:
                return problem, None, key
        return None, target, key


def _schemas_of(key: str, value: Any, node: Mapping[str, Any], *, compiled: bool) -> list[Any]:
    """The schemas keyword ``key`` of ``node`` holds (see :func:`_subschemas`)."""
    if key in _SCHEMA_KEYWORDS:
        if compiled and (
            key == "contentSchema" or (key == "if" and "then" not in node and "else" not in node)
        ):
            return []
        return [value]
    if key in _SCHEMA_MAP_KEYWORDS or key == "dependencies":
        if compiled and key in ("$defs", "definitions"):
            return []
        return list(value.values()) if isinstance(value, Mapping) else []
    if key in _SCHEMA_ARRAY_KEYWORDS and isinstance(value, list):
        return value
    return []


def _subschemas(node: Mapping[str, Any], *, compiled: bool) -> list[Any]:
    """The values of ``node`` that are schemas, in its key order; with ``compiled``, only those the reference
    compiles when it applies ``node`` (observed: not ``$defs``, ``definitions`` or ``contentSchema``, and ``if``
    only with ``then`` or ``else``)."""
    out: list[Any] = []
    for key, value in node.items():
        out.extend(_schemas_of(key, value, node, compiled=compiled))
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
    registry = _Registry(schema) if isinstance(schema, Mapping) else None
    if registry is not None and registry.id_problem is not None:
        return registry.id_problem
    if registry is not None and isinstance(schema.get("$schema"), str):
        problem = _meta_schema_uri_problem(schema["$schema"], registry.resources)
        if problem is not None:
            return problem
    if registry is not None and registry.has_references:
        # First the references met while the registry is filled (every subschema but those under
        # `dependencies`, $defs included); then, in document order, the references of the subschemas the root
        # compiles (not $defs, definitions or contentSchema, nor an `if` without `then` or `else`) and of the
        # ones their references reach.
        problem = registry.crawl_problem()
        if problem is not None:
            return problem
        # A depth-first walk in key order: a reference's target is compiled where the reference stands.
        seen: set[int] = set()
        stack: list[Iterator[tuple[Any, str | None]]] = [iter([(schema, registry.root_key)])]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                continue
            node, base = step
            if base is None:
                return str(node)
            if not isinstance(node, Mapping) or id(node) in seen:
                continue
            seen.add(id(node))
            problem, base = registry.enter(node, base)
            if problem is not None:
                return problem
            stack.append(registry.steps(node, base))
    # Format problems (``pattern`` regexes) are reported last.
    return meta_schema_problem(schema, formats=True)


#: The order keywords are checked in (observed): first the deprecated keywords the base 2020-12 meta-schema still
#: describes itself, then its vocabularies in the meta-schema's order; each group lists its keywords in the order
#: its meta-schema does.
_VOCABULARIES: tuple[tuple[str, ...], ...] = (
    ("definitions", "dependencies", "$recursiveAnchor", "$recursiveRef"),
    (
        "$id",
        "$schema",
        "$ref",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "$comment",
        "$defs",
    ),
    (
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
    ),
    ("unevaluatedItems", "unevaluatedProperties"),
    (
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
    ),
    ("title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples"),
    ("format",),
    ("contentEncoding", "contentMediaType", "contentSchema"),
)
#: The position of each keyword's vocabulary in :data:`_VOCABULARIES` (every keyword is in exactly one).
_VOCABULARY_OF: Mapping[str, int] = {
    key: position for position, vocabulary in enumerate(_VOCABULARIES) for key in vocabulary
}
#: Within a group of fewer keywords than this, a schema object with more keys than the group has is checked in
#: the group's order, any other in its own key order; a larger group always goes by the schema's key order
#: (observed: the applicator and validation vocabularies, 15 and 20 keywords, always in key order; the others
#: flip once the object has more keys than they have keywords).
_SMALL_GROUP = 10


def _checking_order(schema: Mapping[str, Any]) -> list[str]:
    """The known keywords of ``schema`` in the order the reference checks them."""
    found: list[list[str]] = [[] for _ in _VOCABULARIES]
    for key in schema:
        position = _VOCABULARY_OF.get(key)
        if position is not None:
            found[position].append(key)
    size = len(schema)
    ordered: list[str] = []
    for group, keys in zip(_VOCABULARIES, found):
        if len(keys) > 1 and len(group) < _SMALL_GROUP and size > len(group):
            keys = [key for key in group if key in schema]
        ordered.extend(keys)
    return ordered


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
    for key in _checking_order(schema):
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
