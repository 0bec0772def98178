"""JSON Schema in requests: the meta-schema check of a non-strict schema (strict ones: ``_strict_schema``).

Validation (behavior.md#tools-and-tool-choice, behavior.md#output-constraints) restates the JSON Schema 2020-12
meta-schema and reports the first problem as the reference does (``<instance> <reason>``), in the order it looks
(docs/behavior.md#json-schemas): the base meta-schema's own keywords, then vocabulary by vocabulary in the
meta-schema's order (:meth:`_Draft.checking_order`); then the ids, references and ``$schema`` values as the
registry's crawl meets them, the root ``$schema``, the compiled references (:class:`_Registry`) and the ``regex``
format. A root ``$schema`` naming draft 4, 6, 7 or 2019-09 chooses that dialect's keywords and rules
(:class:`_Draft`), and a subschema's ``$schema`` the dialect it is crawled and compiled in (:func:`_dialect`);
a pointer into a meta-schema document leads into its text (:mod:`dscodec.protocols._meta_documents`).

The normalisation of strict schemas lives in :mod:`dscodec.protocols._strict_schema`; both are imported from here.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from typing import Any
from urllib.parse import unquote

from dscodec.protocols._body import json_text
from dscodec.protocols._meta_documents import META_DOCUMENTS
from dscodec.protocols._regex import ecma_regex_ok, regex_ok
from dscodec.protocols._strict_schema import normalize_strict_schema

__all__ = ["meta_schema_problem", "normalize_strict_schema", "schema_problem"]

# -- meta-schema validation ----------------------------------------------------------------------------------

_SIMPLE_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_ANCHOR = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")
_ANCHOR_2019 = re.compile(r"[A-Za-z][-A-Za-z0-9.:_]*")
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
_UNEVALUATED = frozenset({"unevaluatedItems", "unevaluatedProperties"})
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


#: An array index in a pointer: ASCII digits, after an optional ``+`` (observed).
_ARRAY_INDEX = re.compile(r"\+?([0-9]+)")
#: The largest array index a pointer may hold (observed: one more is no index at all).
_MAX_INDEX = 2**64 - 1


#: What :func:`_pointer_target` gives for a pointer that leads nowhere (``None`` is a JSON value it may lead to).
_MISSING = object()


class _BadIndex(Exception):
    """A pointer's token met in an array that is no array index: the reference's message."""


def _pointer_target(root: Any, pointer: str) -> Any:
    """The value a JSON pointer (``/a/0``, percent-encoded as in a URI fragment) leads to in ``root``, or
    :data:`_MISSING`.

    Raises:
        _BadIndex: a token met in an array is no array index (:func:`_array_index`); the message names it with
            its escapes decoded, but not its ``~`` sequences, and the pointer as written (observed).
    """
    node = root
    for raw in unquote(pointer[1:]).split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list):
            index = _array_index(token)
            if index is None:
                raise _BadIndex(f"Failed to parse array index '{raw}' in pointer '{pointer}'")
            if index >= len(node):
                return _MISSING
            node = node[index]
        else:
            return _MISSING
    return node


#: The meta-schemas the reference knows by URI (observed). The drafts 4, 6 and 7 and the latest, over http and
#: https, and 2019-09 and 2020-12 over http, are known by their exact text, as is the canonical URI of each draft
#: (:data:`_CANONICAL`), with any number of trailing ``#``; 2019-09 and 2020-12 over https, with their vocabulary
#: meta-schemas, are documents it holds, named with any fragment.
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
#: The meta-schema documents a root ``$schema`` can name (see :func:`_meta_schema_key`).
_META_DOCUMENTS = _DOCUMENTS - {"json-schema:///"}
#: The reference's registry fetches nothing; a resource whose URI starts with one of these it leaves to the
#: meta-schemas it holds (observed: any such URI passes while the registry is filled, and only the 2020-12 documents
#: can then be compiled).
_META_PREFIXES = ("http://json-schema.org/draft-", "https://json-schema.org/draft/")
#: The 2020-12 meta-schema documents, which a compiled ``$ref`` can reach; their only anchor is ``meta``.
_COMPILED_DOCUMENTS = frozenset(
    uri for uri in _DOCUMENTS if uri.startswith("https://json-schema.org/draft/2020-12/")
)
_META_ANCHOR = "meta"
#: The vocabulary each keyword compiled belongs to (2020-12's groups); the others are compiled whatever is in force
#: (the core's, and ``format``: observed).
_VOCABULARY_NAMES: Mapping[str, str] = {
    "dependencies": "applicator",
    **dict.fromkeys(
        (
            "prefixItems", "items", "contains", "additionalProperties", "properties", "patternProperties",
            "dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
        ),
        "applicator",
    ),
    "unevaluatedItems": "unevaluated",
    "unevaluatedProperties": "unevaluated",
    **dict.fromkeys(
        (
            "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
            "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains",
            "minContains", "maxProperties", "minProperties", "required", "dependentRequired",
        ),
        "validation",
    ),
}  # fmt: skip
#: The vocabulary meta-schema documents, and the vocabularies (by URI) a ``$vocabulary`` may name: their names.
_VOCABULARY_DOCUMENTS: Mapping[str, str] = {
    f"https://json-schema.org/draft/{draft}/meta/{name}": alias
    for draft, names in (
        ("2020-12", ("core", "applicator", "unevaluated", "validation", "meta-data", "format-annotation",
                     "format-assertion", "content")),
        ("2019-09", ("core", "applicator", "validation", "meta-data", "format", "content")),
    )
    for name in names
    for alias in (name.removeprefix("format-") if name.startswith("format") else name,)
}  # fmt: skip
_VOCABULARY_URIS: Mapping[str, str] = {
    uri.replace("/meta/", "/vocab/"): name for uri, name in _VOCABULARY_DOCUMENTS.items()
}


def _vocabularies_in_force(key: str, resource: Any) -> tuple[frozenset[str] | None, str | None]:
    """The vocabularies in force under a root ``$schema`` that names ``key`` (a document of the reference's, or
    ``resource`` of the schema): a vocabulary document's own, or those a resource's ``$vocabulary`` marks
    ``true`` (None: all of them); and the problem of a vocabulary it requires that the reference does not know."""
    name = _VOCABULARY_DOCUMENTS.get(key)
    if name is not None:
        return frozenset({name}), None
    vocabulary = resource.get("$vocabulary") if isinstance(resource, Mapping) else None
    if not isinstance(vocabulary, Mapping):
        return None, None
    in_force = set()
    for uri, required in vocabulary.items():
        if required is not True:
            continue
        known = _VOCABULARY_URIS.get(uri)
        if known is None:
            return None, (
                f"Unknown vocabulary: '{uri}' is required by the meta-schema. Adjust configuration to declare "
                "support for it"
            )
        in_force.add(known)
    return frozenset(in_force), None


#: The 2020-12 meta-schema itself.
_META_2020 = "https://json-schema.org/draft/2020-12/schema"
#: Every meta-schema document a compiled ``$ref`` can reach once the root's ``$schema`` made the reference look
#: among all of them (see ``_Registry.every_meta_document``).
_EVERY_DOCUMENT = _DOCUMENTS | {f"http://json-schema.org/draft-0{n}/schema" for n in (4, 6, 7)}
#: The first character a URI reference may not hold: one outside RFC 3986's unreserved characters, sub-delims,
#: ``:@/?#`` and ``%``, or a ``%`` without two hex digits (a second ``#`` is found apart).
_URI_BAD = re.compile(r"[^-A-Za-z0-9._~!$&'()*+,;=:@/?#%]|%(?![0-9A-Fa-f]{2})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


#: The dialect each meta-schema document is written in (a key of :data:`_DRAFTS`).
_DOCUMENT_DIALECTS: Mapping[str, str] = {
    uri: next(name for part, name in (("/2020-12/", "2020"), ("/2019-09/", "2019"), ("-07/", "7"), ("-06/", "6"),
                                      ("-04/", "4")) if part in uri)
    for uri in META_DOCUMENTS
}  # fmt: skip


@cache
def _meta_document(uri: str) -> Any:
    """The meta-schema document ``uri`` names (read once, and never changed), or None for one whose text dscodec
    does not hold."""
    text = META_DOCUMENTS.get(uri)
    return None if text is None else json.loads(text)


def _meta_schema_key(uri: str) -> str | None:
    """The URI a root ``$schema`` that names no draft is looked up by (observed): none when it is no URI reference;
    else the URI in its normal form, resolved against ``json-schema:///`` (not against the root's own URI),
    without fragment."""
    if _uri_problem(uri, allow_hash=True) is not None:
        return None
    return _resolve(_DEFAULT_BASE, uri)


def _uri_problem(text: str, *, allow_hash: bool) -> str | None:
    """Why ``text`` is no URI reference (the first bad character, escape or IPv6 address), or None."""
    problems: list[tuple[int, str]] = []
    scanned = text
    authority = _AUTHORITY.match(text)
    if authority is not None:
        problem, literal = _authority(text, authority.start(1))
        if problem is not None:  # the scheme before it is sound, and what follows it is not read
            return f"{problem[1]} at index {problem[0]}"
        if literal is not None:  # its brackets and what they hold are no characters a URI has elsewhere
            scanned = text[: literal[0]] + "0" * (literal[1] - literal[0]) + text[literal[1] :]
    if authority is None:
        # A scheme is a letter, then letters, digits, "+", "-" or "."; without one, the first path segment of a
        # relative reference holds no ":" (RFC 3986 path-noscheme).
        run = _SCHEME_RUN.match(text).end()  # type: ignore[union-attr]
        if run < len(text) and text[run] == ":":
            if run == 0 or not ("a" <= text[0].lower() <= "z"):
                problems.append((0, "unexpected character"))
        else:
            colon = text.find(":", 0, _SEGMENT_END.search(text).start())  # type: ignore[union-attr]
            if colon >= 0:
                problems.append((colon, "unexpected character"))
    bad = _URI_BAD.search(scanned)
    end = len(text) if bad is None else bad.start()
    first = text.find("#", 0, end)
    if first >= 0:
        second = text.find("#", first + 1, end) if allow_hash else first
        if second >= 0:
            problems.append((second, "unexpected character"))
    if bad is not None:
        problems.append(
            (end, "invalid percent-encoded octet" if text[end] == "%" else "unexpected character")
        )
    if not problems:
        return None
    index, kind = min(problems)
    return f"{kind} at index {index}"


#: The characters a scheme may hold, from the start of a URI reference.
_SCHEME_RUN = re.compile(r"[A-Za-z0-9+.\-]*")
#: Where a URI reference's first path segment ends.
_SEGMENT_END = re.compile(r"[/?#]|\Z")
#: A URI reference with an authority (``scheme://`` or ``//``); group 1 is the authority.
_AUTHORITY = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//([^/?#]*)")
_HEX = frozenset("0123456789abcdefABCDEF")


def _authority(text: str, start: int) -> tuple[tuple[int, str] | None, tuple[int, int] | None]:
    """The first problem of the authority that begins at ``text[start]`` as (index, kind), or None; and the span
    of its IP literal's brackets, or None.

    The authority is read from the left: first the run of characters a user part, host name or port may hold
    (``:`` and ``@`` among them), every escape in it checked. If the run holds an ``@``, the host follows the
    first one: an IP literal in brackets (if the run ends right there) or a name; then an optional ``:`` and
    port. Else the run itself is the host and port: it may hold one ``:`` (a second one is reported at the last
    ``:`` of the run), with digits only after it; an empty run may be followed by an IP literal and its port
    instead. After an IP literal a run is read (and its escapes checked) the same way before its port. After the
    authority comes ``/``, ``?``, ``#`` or the end."""
    n = len(text)
    end, at, colons, last_colon = _authority_run(text, start)
    if end < 0:
        return (-end - 1, "invalid percent-encoded octet"), None
    host = at + 1 if at >= 0 else start
    literal: tuple[int, int] | None = None
    if host == end and end < n and text[end] == "[":
        problem, k = _ip_literal(text, host)
        if problem is not None:
            return problem, None
        literal = (host, k)
        end = _authority_run(text, k)[0]
        if end < 0:
            return (-end - 1, "invalid percent-encoded octet"), literal
    elif at < 0 and colons > 1:
        return (last_colon, "unexpected character"), None
    else:
        k = host
        while k < end and text[k] not in ":@":
            k += 1
    if k < end and text[k] == ":":  # the port
        k += 1
        while k < end and "0" <= text[k] <= "9":
            k += 1
    if k < n and text[k] not in "/?#":
        return (k, "unexpected character"), literal
    return None, literal


def _authority_run(text: str, start: int) -> tuple[int, int, int, int]:
    """Where the run of the characters an authority holds outside IP literals (escapes, ``:`` and ``@``
    included) from ``start`` ends (``-1 - i`` if the escape at ``i`` is bad), where its first ``@`` stands (-1 if
    none), and how many ``:`` it holds before that ``@`` and where the last of them stands (-1 if none)."""
    n = len(text)
    k = start
    at = -1
    colons = 0
    last_colon = -1
    while k < n:
        char = text[k]
        if char == "%":
            if _ESCAPE.match(text, k) is None:
                return -1 - k, at, colons, last_colon
            k += 3
        elif char in _NAME_CHARS:
            k += 1
        elif char == ":":
            if at < 0:
                colons += 1
                last_colon = k
            k += 1
        elif char == "@":
            if at < 0:
                at = k
            k += 1
        else:
            break
    return k, at, colons, last_colon


def _ip_literal(text: str, start: int) -> tuple[tuple[int, str] | None, int]:
    """The problem of the IP literal whose ``[`` is at ``text[start]`` as (index, kind), or None; and the index
    after its ``]``."""
    n = len(text)
    k = start + 1
    if k < n and text[k] in "vV":
        k += 1
        digits = k
        while k < n and text[k] in _HEX:
            k += 1
        if k == digits or k >= n or text[k] != ".":
            return (k, "unexpected character"), k
        k += 1
        rest = k
        while k < n and text[k] in _FUTURE_CHARS:
            k += 1
        if k == rest:
            return (k, "unexpected character"), k
    else:
        ok, end = _ipv6_end(text, k)
        if not ok:
            # Nothing read at all: no IPv6 address begins here (and no ``v``), so the first character is wrong.
            return (k, "unexpected character" if end == k else "invalid IPv6 address"), k
        k = end
    if k >= n or text[k] != "]":
        return (k, "unexpected character"), k
    return None, k + 1


def _ipv6_end(text: str, start: int) -> tuple[bool, int]:
    """Read an IPv6 address from ``text[start]``: whether it is one, and the index reading stopped at.

    Groups of one to four hex digits, each after a ``:`` but the first one and the one right after ``::``, at
    most one ``::``, and last perhaps a dotted quad in place of two groups; reading stops at anything else or
    after eight groups. Eight groups are needed without ``::``, fewer than eight with it. A group of fewer than
    four digits at the very end of the text is read but not counted, and a dotted quad is not taken as the
    first group (observed)."""
    n = len(text)
    k = start
    count = 0
    ellipsis = -1
    while count < 8:
        colon = k < n and text[k] == ":"
        if colon:
            k += 1
        digits = k
        while k < n and k - digits < 4 and text[k] in _HEX:
            k += 1
        width = k - digits
        if width == 0:
            if not colon:
                break
            if k < n and text[k] == ":" and ellipsis < 0:
                k += 1
                ellipsis = count
                continue
            return False, k
        if width < 4 and k == n:
            break
        if width < 4 and text[k] == ".":
            k = digits
            if count > 6 or colon == (count == ellipsis):
                return False, k
            end = _ipv4_end(text, k)
            if end < 0:
                return False, k
            k = end
            count += 2
            break
        if colon == (count in (0, ellipsis)):
            return False, k
        count += 1
    return (count == 8 if ellipsis < 0 else count < 8), k


def _ipv4_end(text: str, start: int) -> int:
    """The index after the dotted quad at ``text[start]`` (bytes in decimal without leading zeros, at most three
    digits each), or -1."""
    n = len(text)
    k = start
    for part in range(4):
        if part:
            if k >= n or text[k] != ".":
                return -1
            k += 1
        if k < n and text[k] == "0":
            k += 1
            continue
        digits = k
        while k < n and k - digits < 3 and "0" <= text[k] <= "9":
            k += 1
        if k == digits or int(text[digits:k]) > 255:
            return -1
    return k


#: The URI of a document that names none (the reference's default base).
_DEFAULT_BASE = "json-schema:///"
_ROOTLESS = (
    "when base has a rootless path and no authority, reference should either have scheme, be empty or start "
    "with '#'"
)
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
#: What an IP literal of a future version may hold after its ``v``, hex digits and ``.``.
_FUTURE_CHARS = _UNRESERVED | frozenset("!$&'()*+,;=:")
#: What a user part or a host name holds besides escapes (and ``:``, in a user part).
_NAME_CHARS = _UNRESERVED | frozenset("!$&'()*+,;=")


def _unescape(m: re.Match[str]) -> str:
    char = chr(int(m.group(1), 16))
    return char if char in _UNRESERVED else m.group(0).upper()


#: The schemes whose default port a URI leaves out once normal (observed; the others keep theirs).
_DEFAULT_PORTS = {
    "http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "gopher": 70, "ldap": 389, "telnet": 23,
    "tn3270": 23, "nntp": 119, "imap": 143, "pop": 110, "rtsp": 554, "rtsps": 322, "snmp": 161, "coap": 5683,
    "coaps": 5684, "coap+tcp": 5683, "coaps+tcp": 5684, "coap+ws": 80, "coaps+ws": 443, "acap": 674, "dict": 2628,
    "ipp": 631, "mtqp": 1038, "nfs": 2049, "stun": 3478, "stuns": 5349, "turn": 3478, "turns": 5349, "vnc": 5900,
    "z39.50r": 210, "z39.50s": 210, "dns": 53, "icap": 1344, "mupdate": 3905, "vemmi": 575, "cap": 1026, "go": 1096,
}  # fmt: skip


def _first_of(text: str, stops: str, start: int) -> int:
    """The index of the first of the characters ``stops`` in ``text`` from ``start``, else ``len(text)``."""
    end = len(text)
    for stop in stops:
        k = text.find(stop, start, end)
        if k >= 0:
            end = k
    return end


def _ipv6_text(host: str) -> str:
    """A host in brackets that holds an IPv6 address, in the text the reference names it by (observed; RFC 5952):
    hex digits in lower case without leading zeros, the longest run of two or more zero groups (the first of equal
    ones) as ``::``, and an IPv4-mapped address (``::ffff:`` then four bytes) with its dotted quad; any other host
    as it is."""
    if not (host.startswith("[") and host.endswith("]")):
        return host
    try:
        address = ipaddress.IPv6Address(host[1:-1])
    except ValueError:
        return host  # a future IP literal (``[v1.x]``)
    mapped = address.ipv4_mapped
    if mapped is not None:
        return f"[::ffff:{mapped}]"
    return f"[{address.compressed}]"


def _normal(uri: str) -> str:
    """An absolute URI in the form the reference names it: scheme and host in lower case, escapes of unreserved
    characters decoded (RFC 3986, section 6.2.2), an empty or default port left out (section 6.2.3), then the dot
    segments of a path that begins with ``/`` removed (section 5.2.4, so ``%2e%2e`` is one: observed); an IPv6
    address in its canonical text (:func:`_ipv6_text`)."""
    scheme, _, rest = uri.partition(":")
    start = 0
    if rest.startswith("//"):
        end = _first_of(rest, "/?#", 2)
        user, at, host = rest[2:end].rpartition("@")
        name, colon, port = host.rpartition(":") if ":" in host.rpartition("]")[2] else (host, "", "")
        # ASCII digits compared as text, leading zeros left out: int() takes other digits ("²") and refuses
        # thousands of them.
        default = _DEFAULT_PORTS.get(scheme.lower())
        if colon and (not port or (port.isascii() and port.isdigit() and port.lstrip("0") == str(default))):
            colon = port = ""  # an empty port, or the scheme's own, is left out
        authority = "//" + user + at + _ipv6_text(name).lower() + colon + port
        rest = authority + rest[end:]
        start = len(authority)
    if "%" in rest:
        rest = _ESCAPE.sub(_unescape, rest)
    if rest.startswith("/", start) and "." in rest:
        end = _first_of(rest, "?#", start)
        rest = rest[:start] + _without_dots(rest[start:end]) + rest[end:]
    return scheme.lower() + ":" + rest


class _Unresolved(Exception):
    """A reference that cannot be resolved against its base: the reference's message."""


def _without_dots(path: str) -> str:
    """A path that begins with ``/`` with its dot segments removed, as RFC 3986 (section 5.2.4) does
    (``/x/../sub``: ``/sub``; ``/a/..``: ``/``)."""
    if "/." not in path:
        return path
    kept: list[str] = []
    segments = path.split("/")[1:]
    for k, segment in enumerate(segments):
        last = k == len(segments) - 1
        if segment == "..":
            if kept:
                kept.pop()
            if last:
                kept.append("")  # "/a/.." names the folder: "/"
        elif segment == ".":
            if last:
                kept.append("")
        else:
            kept.append(segment)
    return "/" + "/".join(kept)


#: A URI reference without fragment, split as RFC 3986 (appendix B) does: scheme, authority, path, query (a
#: group that did not take part is None: an empty query, ``?``, is still one).
_REFERENCE_PARTS = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?")


def _resolve(base: str, ref: str) -> str:
    """The URI (without fragment) that ``ref`` names from a subschema whose base URI is ``base`` (absolute):
    absolute already, else resolved against the base (RFC 3986, section 5.2.2: dot segments removed, an empty
    query kept), in its normal form (:func:`_normal`). A fragment alone names the base itself, fragment and all (a
    legacy id keeps its fragment in the base URI below it); an empty reference, the base without its fragment.

    Raises:
        _Unresolved: a relative reference against a base without authority or root path (``urn:…``); the message
            names the base without its fragment.
    """
    target, hash_, _ = ref.partition("#")
    if _SCHEME.match(target):
        return _normal(target)
    if not target:
        # An empty reference names the base without its fragment (observed: under a legacy id that keeps one,
        # that is no resource); a fragment alone keeps it.
        return base if hash_ else base.partition("#")[0]
    scheme, _, rest = base.partition(":")
    if not rest.startswith("/"):
        raise _Unresolved(f"Failed to resolve '{ref}' against '{base.partition('#')[0]}': {_ROOTLESS}")
    parts = _REFERENCE_PARTS.fullmatch(target)
    assert parts is not None  # every string without "#" matches
    _, authority, path, query = parts.groups()
    own = _REFERENCE_PARTS.fullmatch(rest.partition("#")[0])
    assert own is not None
    _, base_authority, base_path, base_query = own.groups()
    # The dot segments of the path are removed by _normal (after its escapes are decoded).
    if authority is not None:
        joined = f"//{authority}{path}"
    else:
        if not path:
            path, query = base_path, base_query if query is None else query
        elif not path.startswith("/"):
            path = base_path[: base_path.rfind("/") + 1] + path if base_path else "/" + path
        joined = path if base_authority is None else f"//{base_authority}{path}"
    if query is not None:
        joined += "?" + query
    return _normal(f"{scheme}:{joined}")


def _with_fragment(base: str, value: str) -> str:
    """The base URI below a subschema whose id is a fragment alone (``#a1``, one the meta-schema of a legacy root
    allows in a 2019-09 or 2020-12 subschema): its parent's with that fragment, which names no resource, so a
    reference of a fragment alone from there leads nowhere (observed)."""
    return base.partition("#")[0] + value


def _anchor_problem(fragment: str) -> str:
    """What a reference's fragment that names no anchor of its document says (observed: a fragment with a ``/``
    that is no JSON pointer can name no anchor at all)."""
    if "/" in fragment:
        return f"Anchor '{fragment}' is invalid"
    return f"Anchor '{fragment}' does not exist"


def _missing(key: str, reason: str) -> str:
    return f"Resource '{key}' is not present in a registry and retrieving it failed: {reason}"


@dataclass(frozen=True)
class _Walk:
    """A subschema an unevaluated keyword ``kind`` walks next (see :meth:`_Registry._walked`)."""

    kind: str
    node: Mapping[str, Any]
    base: str
    draft: _Draft


class _Registry:
    """What references can reach (observed from the reference, which fetches nothing).

    The reference first fills a registry by crawling the schema: every subschema but those under
    ``dependencies`` (a keyword of older drafts it compiles but does not crawl), each in its dialect. Each ``$id``
    names a resource, resolved against the base URI of the subschema holding it (the document is
    ``json-schema:///`` unless its root names itself); anchors belong to their resource. An id, a ``$ref`` or a
    ``$schema`` that is no URI reference, or cannot be resolved, is reported as the crawl meets it. Each ``$ref``
    met must name a resource of the document or a URI named like a meta-schema (which loads the meta-schemas); any
    other is refused (``Retrieval is disabled``; ``No base URI is available`` for one under ``json-schema:``), once
    the crawl is done. Then, compiling the subschemas the
    root applies, every ``$ref`` and ``$dynamicRef`` is resolved against the base URI of its subschema: its
    pointer or anchor must lead to a schema (a boolean or an object) in its resource, and a resource the registry
    lacks is refused (``Retrieving external resources is not supported once the registry is populated``): only
    the 2020-12 meta-schema documents can be reached, once loaded. A reference that leads into a subschema the
    crawl did not see has that subschema crawled first (its references checked; it names nothing).
    """

    def __init__(self, schema: Mapping[str, Any], draft: _Draft) -> None:
        self.schema = schema
        #: The root's dialect: which meta-schema documents a compiled reference reaches.
        self.draft = draft
        #: Resource URI → its subschema; anchors (name → subschema) by resource URI.
        self.resources: dict[str, Any] = {}
        self.anchors: dict[str, dict[str, Any]] = {}
        #: The base URI of each crawled subschema, and its dialect (by ``id()``).
        self.base: dict[int, str] = {}
        self.drafts: dict[int, _Draft] = {}
        #: The resources one of whose anchors a reference led to, that anchor's subschema compiled: a reference
        #: to an anchor of one of them, once found, is not compiled again, whichever anchor it names (observed).
        self._anchors_compiled: set[str] = set()
        #: The subschemas crawled only when a reference led into them (by ``id()``): their ids name nothing.
        self.late: set[int] = set()
        #: Compiling may find a problem: a reference, a ``$recursiveRef``, an ``$id`` the crawl does not check, a
        #: keyword the dialect checks only once compiled.
        self.needs_compiling = False
        self.meta_loaded = False
        #: The root's $schema names a meta-schema document otherwise than by its draft's own URI (a fragment, a
        #: vocabulary): the reference looked it up among all of them, and a compiled reference then reaches any
        #: (observed), not only its draft's.
        self.every_meta_document = False
        #: The (subschema, unevaluated keyword) pairs :meth:`_filter_steps` walked, or is walking.
        self._filtered: set[tuple[int, str]] = set()
        root = self._id_of(schema, draft)
        # The default base has a root path: resolving against it never fails.
        named = root if isinstance(root, str) and root.partition("#")[0] else None
        self.root_key = _DEFAULT_BASE if named is None else self._resource_key(_DEFAULT_BASE, named)
        #: The base URI of the root's subschemas, and of its own references: its id resolved once more, against
        #: the URI it names (observed: ``sub/`` names ``json-schema:///sub/``, and what it holds is below
        #: ``json-schema:///sub/sub/``); the root is registered under both.
        self.root_base = self.root_key if named is None else self._resource_key(self.root_key, named)
        #: What the crawl met, in document order (in a subschema: its id, its ``$ref``, its ``$schema``): the
        #: problem of an id or of a ``$schema``, or None for a ``$ref``, read once the crawl is done; with the base
        #: URI of the subschema.
        self._crawled: list[tuple[Mapping[str, Any], str, str | None]] = []
        self._crawl(schema, self.root_key, self._crawled, draft)

    @staticmethod
    def _id_of(node: Mapping[str, Any], draft: _Draft) -> Any:
        """The value of ``node``'s id keyword where it may name a resource (see :attr:`_Draft.legacy_ids`), one
        trailing ``#`` left out (observed: ``a b#`` is reported as ``'a b'``, draft 4's ``sub##`` is ``sub#``)."""
        value = node.get(draft.id_keyword)
        if draft.legacy_ids and (
            isinstance(node.get("$ref"), str) or (isinstance(value, str) and value.startswith("#"))
        ):
            return None
        return value.removesuffix("#") if isinstance(value, str) else value

    @staticmethod
    def _resource_key(base: str, value: str) -> str:
        """The URI the id ``value`` (its one trailing ``#`` already left out) names from ``base``; an id keeps its
        fragment in it, even an empty one (``sub##``), and in the base URI below it, so only a fragment-only
        reference from inside the resource finds it (observed: a legacy id, or an ``$id`` of 2019-09 or 2020-12 in
        a subschema under a root of the older drafts, whose meta-schemas allow one; theirs do not).

        Raises:
            _Unresolved: as :func:`_resolve`.
        """
        key = _resolve(base, value)
        _, hash_, fragment = value.partition("#")
        return f"{key}#{fragment}" if hash_ else key

    def _crawl(
        self, top: Any, base: str, found: list[tuple[Mapping[str, Any], str, str | None]], draft: _Draft
    ) -> None:
        """Crawl the subschemas from ``top`` (under a parent whose base URI is ``base`` and whose dialect is
        ``draft``), depth first in document order; a subschema with a ``$schema`` is read in the dialect it names
        (2020-12 when it names no draft), and so is what it holds (observed).

        Where two subschemas of one crawl name the same resource, the one that holds the other wins, else the later
        in document order (the last one in post-order); where two name the same anchor of a resource, the later in
        document order wins, a subschema inside the other included (the last one in pre-order; observed). What an
        earlier crawl registered stays.
        """
        resources: dict[str, Any] = {}
        anchors: dict[str, dict[str, Any]] = {}
        crawled: list[int] = []
        top_base = base
        # A draft of None marks where a subschema's own subschemas are all crawled: it is registered as the
        # resource its base URI names (post-order).
        stack: list[tuple[Any, str, bool, _Draft | None]] = [(top, base, False, draft)]
        while stack:
            node, base, hidden, dialect = stack.pop()
            if dialect is None:
                resources[base] = node
                continue
            if not isinstance(node, Mapping):
                continue
            draft = _dialect(node, dialect)
            if (
                "$ref" in node
                or "$dynamicRef" in node
                or "$recursiveRef" in node
                or (hidden and draft.id_keyword in node)
                or not draft.compiled_strings.isdisjoint(node)
                or draft is not self.draft
            ):
                self.needs_compiling = True
            if not hidden and id(node) not in self.base:
                base, resource = self._register(node, base, found, draft, anchors)
                crawled.append(id(node))
                if resource:
                    stack.append((node, base, False, None))
                    if node is self.schema and base != self.root_key:
                        stack.append((node, self.root_key, False, None))
                if isinstance(node.get("$ref"), str):
                    found.append((node, base, None))
                uri = node.get("$schema")
                if found is self._crawled and isinstance(uri, str):
                    problem = self._dialect_problem(uri, base)
                    if problem is not None:
                        found.append((node, base, problem))
            for key, value in reversed(list(node.items())):
                inner = hidden or key in draft.not_crawled
                if inner and found is not self._crawled:
                    continue  # crawled later, when a reference leads there: each subschema once
                for sub in reversed(_schemas_of(key, value, node, draft, compiled=False)):
                    stack.append((sub, base, inner, draft))
        if found is not self._crawled:
            # Reached by a pointer, what the crawl did not see names nothing: no resource, no anchor, and its ids
            # leave the base URI of its references as it was (observed). The references it holds were checked
            # against the base URIs its ids give, as the crawl does.
            for seen in crawled:
                self.base[seen] = top_base
            self.late.update(crawled)
            return
        for key, node in resources.items():
            self.resources.setdefault(key, node)
        for key, named in anchors.items():
            known = self.anchors.setdefault(key, {})
            for name, node in named.items():
                known.setdefault(name, node)

    @staticmethod
    def _dialect_problem(uri: str, base: str) -> str | None:
        """The problem of a ``$schema`` while the registry is filled (observed): one under the drafts' prefixes, a
        fragment alone, or any under a base URI below ``https://json-schema.org/draft/`` is not read; any other
        must be a URI reference that resolves against the base URI of its subschema."""
        if uri.startswith(_META_PREFIXES) or uri.startswith("#") or base.startswith(_META_PREFIXES[1]):
            return None
        syntax = _uri_problem(uri, allow_hash=True)
        if syntax is not None:
            return f"Invalid URI reference '{uri}': {syntax}"
        try:
            _resolve(base, uri)
        except _Unresolved as exc:
            return str(exc)
        return None

    def _register(
        self,
        node: Mapping[str, Any],
        base: str,
        found: list[tuple[Mapping[str, Any], str, str | None]],
        draft: _Draft,
        anchors: dict[str, dict[str, Any]],
    ) -> tuple[str, bool]:
        """Register ``node`` (its anchors, in ``anchors``); its base URI, and whether it names a resource (the
        crawl registers it once what it holds is crawled: see :meth:`_crawl`). The problem of its id, met while
        the registry is filled, joins ``found``; in a later crawl only one that cannot be resolved does (the text
        is checked when the subschema is compiled: :meth:`enter`)."""
        value = self._id_of(node, draft)
        crawling = found is self._crawled
        if crawling and isinstance(value, str):
            syntax = _uri_problem(value, allow_hash=True)
            if syntax is not None:
                found.append((node, base, f"Invalid URI reference '{value}': {syntax}"))
                value = None  # it names nothing
        resource = False
        if node is self.schema:
            base = self.root_base
            resource = True
        elif isinstance(value, str) and value.partition("#")[0]:
            try:
                base = self._resource_key(base, value)
            except _Unresolved as exc:
                found.append((node, base, str(exc)))
            else:
                resource = True
        elif isinstance(value, str) and len(value) > 1:
            base = _with_fragment(base, value)
        self.base[id(node)] = base
        self.drafts[id(node)] = draft
        for name in draft.anchor_keywords:
            anchor = node.get(name)
            if isinstance(anchor, str):
                anchors.setdefault(base, {})[anchor] = node
        if draft.legacy_ids:
            legacy = node.get(draft.id_keyword)
            if isinstance(legacy, str) and legacy.startswith("#") and len(legacy) > 1:  # beside a $ref too
                anchors.setdefault(base, {})[legacy[1:]] = node
        return base, resource

    def restrict(self, in_force: frozenset[str]) -> None:
        """Compile the root's dialect with only the vocabularies ``in_force`` (see :attr:`_Draft.in_force`): the
        subschemas crawled in it, and the references' targets there, too."""
        root = self.draft
        self.draft = replace(root, in_force=in_force)
        for key, dialect in self.drafts.items():
            if dialect is root:
                self.drafts[key] = self.draft
        self.needs_compiling = True

    def crawl_problem(self) -> str | None:
        """The first problem met while the registry is filled: an id, a ``$ref`` or a ``$schema`` that is no URI
        reference or cannot be resolved, or a ``$ref`` to a resource the document does not hold."""
        return self._first(self._crawled)

    def _first(self, found: list[tuple[Mapping[str, Any], str, str | None]]) -> str | None:
        """The first problem of the crawl: of an id, a reference or a ``$schema`` that cannot be read, in crawl
        order (document order, observed); only then of a resource the document does not hold (the registry looks
        for those once the crawl is done: observed)."""
        missing: str | None = None
        for node, base, problem in found:
            if problem is None:
                problem, absent = self._crawled_reference(node["$ref"], base)
                if absent:
                    missing = missing or problem
                    continue
            if problem is not None:
                return problem
        return missing

    def _crawled_reference(self, ref: str, base: str) -> tuple[str | None, bool]:
        """The problem of a reference the crawl meets, and whether it is a resource the document lacks."""
        if ref.startswith("#"):
            # A reference within its own resource is not read while the registry is filled (observed: one under
            # $defs that nothing compiles may even be no URI reference); compiling it reads it.
            return None, False
        if ref.startswith(_META_PREFIXES) or base.startswith(_META_PREFIXES[1]):
            # Left to the meta-schemas, which it loads, as written and unread (observed: one that is no URI
            # reference passes, until it is compiled), as is any reference under a base URI below
            # https://json-schema.org/draft/.
            self.meta_loaded = True
            return None, False
        syntax = _uri_problem(ref, allow_hash=True)
        if syntax is not None:
            return f"Invalid URI reference '{ref}': {syntax}", False
        try:
            key = _resolve(base, ref)
        except _Unresolved as exc:
            return str(exc), False
        if key in self.resources:
            return None, False
        if key.startswith("json-schema:"):
            return _missing(ref, "No base URI is available"), True
        return _missing(key, f"Retrieval is disabled, cannot fetch {key}"), True

    def enter(
        self, node: Mapping[str, Any], base: str, draft: _Draft, *, rebased: bool = False
    ) -> tuple[str | None, str]:
        """Compiling ``node`` (dialect ``draft``) under a parent whose base URI is ``base``: the problem of its
        ``$id`` (one the crawl did not see, under ``dependencies``, is first checked here), and its base URI
        (``rebased``: found from ``base``, not the one the crawl gave it)."""
        known = None if rebased else self.base.get(id(node))
        if known is not None:
            return None, known
        value = self._id_of(node, draft)
        if isinstance(value, str):
            syntax = _uri_problem(value, allow_hash=True)
            if syntax is not None:
                return f"Invalid URI reference '{value}': {syntax}", base
            if value.partition("#")[0]:
                try:
                    return None, self._resource_key(base, value)
                except _Unresolved as exc:
                    return str(exc), base
            if len(value) > 1:
                return None, _with_fragment(base, value)
        return None, base

    def reads_id_otherwise(self, node: Mapping[str, Any], draft: _Draft) -> bool:
        """Whether compiling ``node`` in ``draft`` reads its id otherwise than the crawl did (another id keyword,
        or the older drafts' rules on one but not the other): a reference's target compiled in the dialect of its
        resource, not the one its own ``$schema`` names, and what it holds. Its base URI is then found from its
        parent's as the compiled dialect reads its id, and so are those of what it holds (observed: an ``$id``
        the crawl did not read names a resource the registry lacks)."""
        crawled = self.drafts.get(id(node))
        if (
            crawled is None
            or id(node) in self.late
            or (crawled.id_keyword == draft.id_keyword and crawled.legacy_ids == draft.legacy_ids)
        ):
            return False
        return crawled.id_keyword in node or draft.id_keyword in node

    def steps(
        self, node: Mapping[str, Any], base: str, draft: _Draft, vocabularies: _Draft
    ) -> Iterator[tuple[Any, str | None, _Draft, _Draft]]:
        """What compiling ``node`` (base URI ``base``, dialect ``draft``, the vocabularies of ``vocabularies`` in
        force) leads to, keyword by keyword in the order :func:`_compile_order` gives: each subschema it applies,
        and the target of each reference, as ``(subschema, base URI, its dialect, vocabularies)``; a problem as
        ``(problem, None, draft, vocabularies)``, after which nothing more is looked at."""
        items: Mapping[str, Any] = node
        if draft.vocabularies and not vocabularies.vocabularies:
            items = {key: value for key, value in node.items() if key in _CORE_REFERENCES}
        elif draft.vocabularies and vocabularies.in_force is not None:
            in_force = vocabularies.in_force
            items = {
                key: value
                for key, value in node.items()
                if key not in _VOCABULARY_NAMES or _VOCABULARY_NAMES[key] in in_force  # the core is always
            }
        elif not draft.ref_siblings and "$ref" in node:
            items = {"$ref": node["$ref"]}  # the keywords beside a reference are not compiled
        elif draft.unevaluated_vocabulary and not vocabularies.unevaluated_vocabulary:
            items = {key: value for key, value in node.items() if key not in _UNEVALUATED}
        for key in _compile_order(items, draft):
            if (
                key == "contains"
                and not draft.compiles_contains
                and not _unevaluated_items(items, vocabularies)
            ):
                continue
            if key.startswith(_LOOKED_UP):
                kind, _, name = key.removeprefix(_LOOKED_UP).partition("\x00")
                found = self._walked(self._filter_keyword_steps(kind, name, node, base, draft))
            elif key.startswith(_WALKED):
                kind, _, name = key.removeprefix(_WALKED).partition("\x00")
                found = self._walked(self._walked_keyword_steps(kind, name, node, base, draft, vocabularies))
            else:
                value = items["if"] if key == _LONE_IF else items[key]
                found = self._keyword_steps(key, value, node, base, draft, vocabularies)
            for step in found:
                yield step
                if step[1] is None:
                    return

    def _walked(
        self, steps: Iterator[tuple[Any, str | None, _Draft, _Draft] | _Walk]
    ) -> Iterator[tuple[Any, str | None, _Draft, _Draft]]:
        """The steps of an unevaluated keyword's walk (see :meth:`_filter_steps`), each :class:`_Walk` met on the
        way replaced by the walk of that subschema, depth first, on a stack of its own (a chain of references as
        long as the document allows is walked without recursion)."""
        stack = [steps]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
            elif isinstance(step, _Walk):
                stack.append(self._filter_steps(step.kind, step.node, step.base, step.draft))
            else:
                yield step
                if step[1] is None:
                    return

    def _filter_keyword_steps(
        self, kind: str, name: str, node: Mapping[str, Any], base: str, draft: _Draft
    ) -> Iterator[tuple[Any, str | None, _Draft, _Draft] | _Walk]:
        """What unevaluated keyword ``kind`` does with keyword ``name`` of ``node`` (one of
        :data:`_FILTERED`; see :data:`_LOOKED_UP`): a reference is looked up (:meth:`looked_up`, not read as a URI
        reference) and the subschema it leads to walked by :meth:`_filter_steps`, as is each subschema of
        ``dependentSchemas``, and a ``then`` or ``else`` beside an ``if``. None of them is compiled here: the
        keyword itself is compiled where it stands (``then`` and ``else`` at the ``if``), reading the reference in
        full then (observed). Each walk is asked for by a :class:`_Walk` (see :meth:`_walked`)."""
        value = node[name]
        if name in _CONDITIONAL or name == "dependentSchemas":
            if name in _CONDITIONAL:
                subs = [value] if "if" in node else []  # a `then` or `else` without `if` is not reached
            else:
                subs = list(value.values()) if isinstance(value, Mapping) else []
            for sub in subs:
                if isinstance(sub, Mapping):
                    yield _Walk(kind, sub, self.base.get(id(sub), base), _dialect(sub, draft))
            return
        if not isinstance(value, str):
            return  # a $dynamicRef is looked up in every dialect, though only 2020-12 compiles one (observed)
        problem, target, target_base, target_draft = self.looked_up(value, base)
        if problem is not None:
            yield problem, None, draft, draft
        elif isinstance(target, Mapping):
            yield _Walk(kind, target, self.base.get(id(target), target_base), target_draft)

    def _filter_steps(
        self, kind: str, node: Mapping[str, Any], base: str, draft: _Draft
    ) -> Iterator[tuple[Any, str | None, _Draft, _Draft] | _Walk]:
        """What unevaluated keyword ``kind`` does with a subschema it reaches by a reference, by
        ``dependentSchemas``, by ``then`` or ``else``, or by an in-place applicator it compiles (see
        :meth:`_filter_keyword_steps`, :meth:`_walked_keyword_steps`), whatever the subschema's own unevaluated
        keywords say: it takes the keywords of :data:`_COMPILED_WITH` in that order, compiling those that apply a
        schema (an ``if`` without ``then`` or ``else`` too; each subschema of ``allOf``, ``anyOf``, ``oneOf`` and
        ``if`` walked in turn once compiled) and treating the others as at the root. Nothing else of the subschema
        is compiled here (observed: a ``not`` or ``properties`` there waits for the reference's own compilation).
        Each subschema is walked once per unevaluated keyword: a second walk finds nothing new."""
        mark = (id(node), kind)
        if mark in self._filtered:
            return
        self._filtered.add(mark)
        together = _COMPILED_WITH[kind]
        if isinstance(node.get("if"), bool):
            together = tuple(name for name in together if name not in _CONDITIONAL)
        for name in together:
            if name not in node:
                continue
            if name in _FILTERED:
                yield from self._filter_keyword_steps(kind, name, node, base, draft)
            elif name == "patternProperties" and not isinstance(node[name], Mapping):
                continue
            elif name in _WALKED_AFTER:
                yield from self._walked_keyword_steps(kind, name, node, base, draft, draft)
            else:
                yield from self._keyword_steps(name, node[name], node, base, draft, draft)

    def _walked_keyword_steps(
        self, kind: str, name: str, node: Mapping[str, Any], base: str, draft: _Draft, vocabularies: _Draft
    ) -> Iterator[tuple[Any, str | None, _Draft, _Draft] | _Walk]:
        """What unevaluated keyword ``kind`` does with keyword ``name`` of ``node``, one of :data:`_WALKED_AFTER`:
        each subschema it applies is compiled (an ``if`` without ``then`` or ``else`` too: see :data:`_LONE_IF`),
        then walked by :meth:`_filter_steps` before the next one is compiled (observed). A value of the wrong type,
        or an item that is no schema, is passed over here (observed), and refused where the keyword stands; a
        subschema compiled before, there, is only walked."""
        value = node[name]
        subs = [value] if name == "if" else value if isinstance(value, list) else []
        for sub in subs:
            if not isinstance(sub, Mapping):
                continue  # nothing to compile, or no schema: passed over (refused where the keyword stands)
            yield sub, base, _dialect(sub, draft), vocabularies
            yield _Walk(kind, sub, self.base.get(id(sub), base), _dialect(sub, draft))

    def _keyword_steps(
        self, key: str, value: Any, node: Mapping[str, Any], base: str, draft: _Draft, vocabularies: _Draft
    ) -> Iterator[tuple[Any, str | None, _Draft, _Draft]]:
        """What compiling keyword ``key`` of ``node`` leads to (see :meth:`steps`); a problem ends it."""
        if key == _LONE_IF:
            if isinstance(value, Mapping):
                yield value, base, _dialect(value, draft), vocabularies
            return
        problem = _compiled_value_problem(key, value, node, draft)
        if problem is not None:
            yield problem, None, draft, vocabularies
            return
        if key == "contentEncoding" and "contentMediaType" in node and key in draft.compiled_strings:
            return  # compiled with the media type, which ignores an encoding that is no string
        if key in draft.compiled_strings and not isinstance(value, str):
            yield _type_problem(value, "string"), None, draft, vocabularies
            return
        if (key == "$ref" or (key == "$dynamicRef" and draft.dynamic_refs)) and isinstance(value, str):
            problem, target, target_base, target_draft = self.compiled(
                value, base, dynamic=key == "$dynamicRef"
            )
            anchor = value.partition("#")[2]
            anchor = anchor if anchor and not anchor.startswith("/") else ""
            if problem is not None:
                yield problem, None, draft, vocabularies
            elif target is not None and not (anchor and target_base in self._anchors_compiled):
                yield (
                    target,
                    target_base,
                    target_draft,
                    self._target_vocabularies(target, target_base, target_draft),
                )
                if anchor:
                    # Reached once what the target holds is compiled (the walk is depth first).
                    self._anchors_compiled.add(target_base)
        elif key == "pattern" and isinstance(value, str) and not _regex_ok(value):
            # A pattern is compiled where it stands, so a reference after it comes later (observed).
            yield f'{json_text(value)} is not a "regex"', None, draft, vocabularies
        elif key == "patternProperties" and isinstance(value, Mapping):
            # Each name is compiled before its subschema; the message names the subschema (observed).
            for name, sub in value.items():
                if not _regex_ok(name):
                    yield f'{json_text(sub)} is not a "regex"', None, draft, vocabularies
                    return
                if not isinstance(sub, (bool, Mapping)):
                    yield _type_problem(sub, "boolean", "object"), None, draft, vocabularies
                    return
                yield sub, base, _dialect(sub, draft), vocabularies
        elif key == "$recursiveRef" and draft.recursive_refs and isinstance(value, str):
            # Read and resolved against the base URI, not looked up (observed).
            syntax = _uri_problem(value, allow_hash=True)
            if syntax is not None:
                yield f"Invalid URI reference '{value}': {syntax}", None, draft, vocabularies
                return
            try:
                _resolve(base, value)
            except _Unresolved as exc:
                yield str(exc), None, draft, vocabularies
        else:
            # The schemas of an array or a map are compiled in turn, each checked when it comes (observed).
            several = (
                key in _COMPILED_ARRAYS
                or key in _COMPILED_MAPS
                or (key == "items" and isinstance(value, list))
            )
            for sub in _schemas_of(key, value, node, draft, compiled=True):
                if several and not isinstance(sub, (bool, Mapping)):
                    yield _type_problem(sub, "boolean", "object"), None, draft, vocabularies
                    return
                yield sub, base, _dialect(sub, draft), vocabularies

    def _target_vocabularies(self, target: Any, key: str, draft: _Draft) -> _Draft:
        """The vocabularies in force compiling a reference's ``target`` (dialect ``draft``) in the resource ``key``.
        Where the root's ``$schema`` put only some in force, they are chosen anew (observed) for a target with a
        ``$schema`` of its own, by that, and for one naming a resource or in a resource other than the root, by
        the ``$schema`` of the resource registered under that name (of two of one name, the one that won): those
        of the vocabulary meta-schema, or the meta-schema of the document with a ``$vocabulary``, it names, else
        all of them; a target of the root's resource keeps the root's."""
        if self.draft.in_force is None or not draft.vocabularies or not isinstance(target, Mapping):
            return draft
        uri = target.get("$schema")
        if not isinstance(uri, str):
            value = self._id_of(target, draft)
            if isinstance(value, str) and value.partition("#")[0]:
                key = self.base.get(id(target), key)  # the resource its id names: maybe another of that name
            resource = self.resources.get(key)
            if resource is None or resource is self.schema:
                return draft
            uri = resource.get("$schema") if isinstance(resource, Mapping) else None
        in_force = None
        meta = _meta_schema_key(uri) if isinstance(uri, str) else None
        if meta is not None:
            in_force, _ = _vocabularies_in_force(meta, self.resources.get(meta))
        return replace(draft, in_force=in_force)

    def compiled(self, ref: str, base: str, *, dynamic: bool) -> tuple[str | None, Any, str, _Draft]:
        """Resolve ``ref`` (a ``$dynamicRef`` with ``dynamic``) from a compiled subschema whose base URI is
        ``base``: (its problem, else None; the subschema it leads to, None when that is outside the document;
        the target's base URI; the dialect it is compiled in)."""
        problem, key = self._key(ref, base)
        if problem is not None:
            return problem, None, base, self.draft
        return self._target(key, ref.partition("#")[2])

    def looked_up(self, ref: str, base: str) -> tuple[str | None, Any, str, _Draft]:
        """Resolve ``ref`` as an unevaluated keyword looks up the ``$ref`` or ``$dynamicRef`` beside it (see
        :meth:`_filter_keyword_steps`), with what :meth:`compiled` gives. The text is not read as one URI reference
        (observed): a fragment alone is taken as written, whatever characters it holds; otherwise the text is cut
        at its last ``#``, and only the part before it must be a URI reference (a ``#`` in that part stays in the
        URI it names)."""
        if ref.startswith("#"):
            uri, fragment = "#", ref[1:]
        else:
            uri, hash_, fragment = ref.rpartition("#")
            if not hash_:
                uri, fragment = ref, ""
        problem, key = self._key(uri, base, checked=uri != "#")
        if problem is not None:
            return problem, None, base, self.draft
        if uri != "#" and "#" in uri:
            key = f"{key}#{uri.partition('#')[2]}"
        return self._target(key, fragment)

    @staticmethod
    def _key(uri: str, base: str, *, checked: bool = True) -> tuple[str | None, str]:
        """``uri`` resolved against ``base``: (its problem, else None; the resolved URI). ``checked``: the text must
        be a URI reference first."""
        syntax = _uri_problem(uri, allow_hash=True) if checked else None
        if syntax is not None:
            return f"Invalid URI reference '{uri}': {syntax}", ""
        try:
            return None, _resolve(base, uri)
        except _Unresolved as exc:
            return str(exc), ""

    def _target(self, key: str, fragment: str) -> tuple[str | None, Any, str, _Draft]:
        """What :meth:`compiled` gives for the resource URI ``key`` and the reference's ``fragment``."""
        resource = self.resources.get(key, _MISSING)
        if resource is _MISSING:
            documents = _EVERY_DOCUMENT if self.every_meta_document else self.draft.documents
            # Once loaded (by a reference, or by a root $schema that made the reference look among them all), a
            # document is reached by a $dynamicRef as by a $ref (observed).
            if (self.meta_loaded or self.every_meta_document) and key in documents:
                if fragment and not fragment.startswith("/") and fragment != self.draft.document_anchor:
                    return _anchor_problem(fragment), None, key, self.draft
                document = _meta_document(key) if fragment.startswith("/") else None
                if document is None:  # the document as a whole, or its anchor: a valid schema
                    return None, None, key, self.draft
                # A pointer into the document leads where it does there, compiled in the document's dialect
                # (observed: one that leads nowhere, or to no schema, is refused as in the schema itself).
                resource = document
                draft = _DRAFTS[_DOCUMENT_DIALECTS[key]]
            else:
                reason = "Retrieving external resources is not supported once the registry is populated"
                return _missing(key, reason), None, key, self.draft
        else:
            # The target is compiled in the dialect of the resource it is in, whatever its own $schema says; an
            # anchor's, or a resource's, in the one it was crawled in (observed).
            draft = self.drafts.get(id(resource), self.draft)
        if fragment.startswith("/"):
            try:
                target = _pointer_target(resource, fragment)
            except _BadIndex as exc:
                return str(exc), None, key, self.draft
            if target is _MISSING:
                return f"Pointer '{fragment}' does not exist", None, key, self.draft
        elif fragment:
            target = self.anchors.get(key, {}).get(fragment, _MISSING)
            if target is _MISSING:
                return _anchor_problem(fragment), None, key, self.draft
            draft = self.drafts.get(id(target), draft)
        else:
            target = resource
        if not isinstance(target, (bool, Mapping)):
            return _type_problem(target, "boolean", "object"), None, key, self.draft
        if isinstance(target, Mapping) and id(target) not in self.base:
            # A subschema the crawl did not see: crawled now, under the base of the resource it is in.
            found: list[tuple[Mapping[str, Any], str, str | None]] = []
            self._crawl(target, key, found, draft)
            problem = self._first(found)
            if problem is not None:
                return problem, None, key, draft
        return None, target, key, draft


def _schemas_of(key: str, value: Any, node: Mapping[str, Any], draft: _Draft, *, compiled: bool) -> list[Any]:
    """The schemas keyword ``key`` of ``node`` holds in ``draft``: for the registry's crawl, or (``compiled``) those
    the reference compiles when it applies ``node`` (observed: not ``$defs``, ``definitions`` or ``contentSchema``,
    ``if`` only with ``then`` or ``else``, and these only with ``if``). Keywords the draft does not know hold none (but for the crawl's
    extra ones)."""
    if key not in draft.vocabulary_of and (compiled or key not in draft.crawled):
        return []
    if key == "items" and isinstance(value, list) and (compiled or draft.rules.get("items") == "items"):
        return value  # compiled as an array of items in every dialect (observed)
    if key == "additionalItems":  # a keyword of the older drafts: compiled beside an array of items only
        return [] if compiled and not isinstance(node.get("items"), list) else [value]
    if key in _SCHEMA_KEYWORDS:
        if compiled and (
            key == "contentSchema"
            or (key == "if" and "then" not in node and "else" not in node)
            or ((key == "then" or key == "else") and "if" not in node)
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


#: What compiling a keyword compiles first, in this order (observed; the keyword itself is among them): ``if``
#: its ``then`` and ``else``, ``additionalProperties`` the properties it leaves, an unevaluated keyword the
#: keywords that evaluate what it leaves. Some of these depend on the keyword's value: see
#: :func:`_compiled_together`.
_COMPILED_WITH: Mapping[str, tuple[str, ...]] = {
    "if": ("if", "then", "else"),
    "additionalProperties": ("patternProperties", "properties", "additionalProperties"),
    "unevaluatedProperties": (
        "additionalProperties",
        "patternProperties",
        "unevaluatedProperties",
        "allOf",
        "anyOf",
        "oneOf",
        "if",
        "then",
        "else",
        "$ref",
        "$dynamicRef",
        "dependentSchemas",
    ),
    "unevaluatedItems": (
        "unevaluatedItems",
        "contains",
        "$ref",
        "$dynamicRef",
        "if",
        "then",
        "else",
        "allOf",
        "anyOf",
        "oneOf",
    ),
}
#: An ``additionalProperties`` schema beside ``patternProperties``: the patterns come first, then the schema
#: itself, then ``properties`` (observed; without patterns, ``properties`` comes first).
_ADDITIONAL_AFTER_PATTERNS = ("patternProperties", "additionalProperties", "properties")
#: ``additionalProperties: true`` compiles no schema and leaves ``properties`` where it stands; it still compiles
#: the patterns beside it (observed), which ``patternProperties`` compiles again where it stands.
_ADDITIONAL_TRUE = ("patternProperties",)
#: The keywords an unevaluated keyword compiles along with a conditional: not when ``if`` is a boolean (observed).
_CONDITIONAL = frozenset({"if", "then", "else"})
#: What :func:`_compile_order` names an ``if`` without ``then`` or ``else`` by where an unevaluated keyword compiles
#: it (no keyword can be spelled so).
_LONE_IF = "\x00if"
#: What :func:`_compile_order` names a keyword of :data:`_FILTERED` by where an unevaluated keyword (``\x00``
#: and the keyword's name follow) looks it up rather than compiles it (no keyword can be spelled so).
_LOOKED_UP = "\x00looked up "
#: The keywords an unevaluated keyword (2019-09 and 2020-12 alike) reaches the subschemas of without compiling
#: them (observed): the references, looked up as :meth:`_Registry.looked_up` says (a ``$dynamicRef`` in 2019-09
#: too), ``dependentSchemas``, and the ``then`` and ``else`` of an ``if`` (which it compiles: they are compiled
#: at the place of the ``if``).
_FILTERED = frozenset({"$ref", "$dynamicRef", "dependentSchemas", "then", "else"})
#: What :func:`_compile_order` names a keyword of :data:`_WALKED_AFTER` by where an unevaluated keyword (``\x00``
#: and the keyword's name follow) compiles its subschemas and walks each (no keyword can be spelled so).
_WALKED = "\x00walked "
#: The keywords an unevaluated keyword compiles the subschemas of, walking each once compiled as it walks a
#: reference's target (:meth:`_Registry._walked_keyword_steps`; observed: a ``$dynamicRef`` 2019-09 does not
#: compile, or an ``if`` without ``then`` or ``else``, in an ``allOf`` item is looked up or compiled then).
_WALKED_AFTER = frozenset({"allOf", "anyOf", "oneOf", "if"})
#: Keywords compiled with another one when the node has it (see :data:`_COMPILED_WITH`), not at their own place;
#: ``properties`` and ``patternProperties`` stay there beside ``additionalProperties: true``.
_DEFERRED = {
    "then": "if",
    "else": "if",
    "properties": "additionalProperties",
    "patternProperties": "additionalProperties",
}


def _compiled_together(key: str, node: Mapping[str, Any], known: Mapping[str, Any]) -> tuple[str, ...]:
    """What compiling keyword ``key`` of ``node`` compiles, in order (``known``: the keywords of the dialect), by
    :data:`_COMPILED_WITH` and the value of ``key``: an unevaluated keyword set to ``true`` compiles nothing at all
    (nor what it would pull forward: observed), and beside a boolean ``if`` leaves ``if``, ``then`` and ``else``
    where they stand; ``additionalProperties`` depends on its value and on ``patternProperties`` (observed)."""
    value = node[key]
    if key in _UNEVALUATED:
        if key not in known:
            return (key,)
        if value is True:
            return ()
        together = _COMPILED_WITH[key]
        if isinstance(node.get("if"), bool):
            together = tuple(name for name in together if name not in _CONDITIONAL)
        return together
    if key == "additionalProperties":
        if value is True:
            return _ADDITIONAL_TRUE
        if value is not False and "patternProperties" in node:
            return _ADDITIONAL_AFTER_PATTERNS
    return _COMPILED_WITH.get(key, (key,))


def _deferred(key: str, node: Mapping[str, Any]) -> bool:
    """Whether keyword ``key`` of ``node`` is compiled with another one, not where it stands (:data:`_DEFERRED`)."""
    leader = _DEFERRED.get(key)
    if leader is None or leader not in node:
        return False
    return leader != "additionalProperties" or node[leader] is not True


#: Keywords whose value compiling reads as one schema (when it compiles them at all: see :func:`_schemas_of`).
_COMPILED_SCHEMAS = frozenset(
    {
        "contains",
        "not",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "if",
        "then",
        "else",
    }
)
_COMPILED_ARRAYS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_COMPILED_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_COMPILED_COUNTS = frozenset(
    {"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"}
)


def _compiled_value_problem(key: str, value: Any, node: Mapping[str, Any], draft: _Draft) -> str | None:
    """The problem compiling keyword ``key`` of ``node`` in ``draft`` finds in its value itself (not in the
    subschemas it holds, compiled on their own), as observed where the root's meta-schema does not look (a
    subschema in another dialect, or under a keyword the root's dialect does not know): a reference that is no
    string, a schema that is no boolean or object, a value of the wrong type. Where the meta-schema looked, it
    already refused all of these. Keywords compiling ignores a value of the wrong type of (``propertyNames``,
    ``uniqueItems``, ``minContains``, annotations...) are not checked."""
    if key not in draft.vocabulary_of and key not in _CORE_REFERENCES:
        return None
    if key in _CORE_REFERENCES:
        compiled = (
            key == "$ref"
            or (key == "$dynamicRef" and draft.dynamic_refs)
            or (key == "$recursiveRef" and draft.recursive_refs)
        )
        return _type_problem(value, "string") if compiled else None
    if key in _COMPILED_SCHEMAS:
        if not _schemas_of(key, value, node, draft, compiled=True):
            return None  # an `if` without `then` or `else`, and these without `if`: not compiled
        return _type_problem(value, "boolean", "object")
    if key == "items":
        return None  # an array of items: each is checked when compiled, in turn (see _keyword_steps)
    if key in _COMPILED_ARRAYS:
        return _type_problem(value, "array")
    if key in _COMPILED_MAPS:
        return _type_problem(value, "object")
    if key == "dependencies":
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
        for item in value.values():  # each a list of property names or a schema
            if isinstance(item, list):
                problem = _first_type_problem(item, "string")
            else:
                problem = _type_problem(item, "boolean", "object")
            if problem is not None:
                return problem
        return None
    if key == "dependentRequired":
        return _type_problem(value, "object")
    if key in _COMPILED_COUNTS:
        # A count written as a float is no integer when negative, nor in draft 4 below 2**64 (-0.0 included).
        if isinstance(value, float) and (value < 0 or (draft.draft4 and value < 2.0**64)):
            return f'{json_text(value)} is not of type "integer"'
        problem = _type_problem(value, "integer")
        if problem is None and value < 0:
            problem = f"{json_text(value)} is less than the minimum of 0"
        return problem
    if key in _NUMBER_KEYWORDS or key == "multipleOf":
        return None if draft.rules.get(key) == "boolean" else _type_problem(value, "number")
    if key in ("pattern", "format"):
        return _type_problem(value, "string")
    if key == "enum":
        return _type_problem(value, "array")
    if key == "required":
        return _type_problem(value, "array") or _first_type_problem(value, "string")
    if key == "type":
        if isinstance(value, str):
            return None if value in _SIMPLE_TYPES else "Unexpected type"
        if not isinstance(value, list):
            return f'{json_text(value)} is not of types "string", "array"'
        for item in value:  # a list of one reads as its one name
            if not isinstance(item, str):
                return _type_problem(item, "string")
            if item not in _SIMPLE_TYPES:
                if len(value) == 1:
                    return "Unexpected type"
                return f'{json_text(item)} is not one of "array", "boolean" or 5 other candidates'
        return None
    return None


def _first_type_problem(values: Iterable[Any], *names: str) -> str | None:
    """The problem of the first of ``values`` of none of the types ``names`` (a schema: a boolean or an object), as
    compiling reports it."""
    return next((p for p in (_type_problem(v, *names) for v in values) if p is not None), None)


def _compile_order(node: Mapping[str, Any], draft: _Draft) -> Iterator[str]:
    """The keywords of ``node`` in the order they are compiled (observed): its key order, but for a keyword
    compiled with another (:func:`_compiled_together`, :func:`_deferred`; the unevaluated keywords only in a
    dialect that has them); each once. A keyword that compiles no schema where it stands (``additionalProperties``
    or an unevaluated keyword set to ``true``) is left out. The keywords beside an ``if`` without ``then`` or
    ``else`` are compiled as the ``if`` is: not at all (:func:`_schemas_of`). An unevaluated keyword looks up
    ``$ref`` and ``$dynamicRef`` and walks ``dependentSchemas``, ``then`` and ``else`` (:data:`_FILTERED`) at their
    place in its group, named there by :data:`_LOOKED_UP`, and leaves each to be compiled where it stands (``then``
    and ``else`` at the ``if``); it compiles ``allOf``, ``anyOf``, ``oneOf`` and ``if`` (one without ``then`` or
    ``else`` too, which compiles nothing where it stands) and walks what they hold (:data:`_WALKED_AFTER`), named
    there by :data:`_WALKED`, once for each unevaluated keyword."""
    done: set[str] = set()
    known = draft.vocabulary_of
    for key in node:
        if _deferred(key, node):
            continue
        for name in _compiled_together(key, node, known):
            if key in _UNEVALUATED and name != key:
                if name in _FILTERED or name in _WALKED_AFTER:
                    if name in node:
                        yield f"{_LOOKED_UP if name in _FILTERED else _WALKED}{key}\x00{name}"
                    continue
                if name == "patternProperties" and not isinstance(node.get(name), Mapping):
                    continue  # passed over here: refused where it stands (observed)
            if name in node and name not in done:
                done.add(name)
                yield name


def _array_index(token: str) -> int | None:
    """A pointer token as an array index, or None for one that is none: ASCII digits only (``str.isdigit`` also
    takes ``²``) after an optional ``+``, up to :data:`_MAX_INDEX` (observed; leading zeros are taken: ``007`` is
    7). Very long digit strings are measured before ``int`` reads them (it refuses too many digits)."""
    match = _ARRAY_INDEX.fullmatch(token)
    if match is None:
        return None
    digits = match.group(1).lstrip("0") or "0"
    if len(digits) > 20:
        return None
    index = int(digits)
    return index if index <= _MAX_INDEX else None


def schema_problem(schema: Any) -> str | None:
    """The first problem of a JSON Schema: a meta-schema violation, else an id, ``$ref`` or ``$schema`` that is no
    URI reference or cannot be resolved (in document order), else a ``$ref`` to a resource the document lacks, else
    a root ``$schema`` that names no meta-schema the reference knows, else a same-document ``$ref`` that points
    nowhere (``Pointer '/$defs/x' does not exist``), else a ``pattern`` that is not a regex, else ``None``."""
    problem = meta_schema_problem(schema)
    if problem is not None:
        return problem
    draft = _draft_of(schema)
    registry = _Registry(schema, draft) if isinstance(schema, Mapping) else None
    unknown_meta: str | None = None
    if registry is not None:
        # First what the registry's crawl meets (every subschema but those under `dependencies`, $defs
        # included), in document order: an id, a $ref or a $schema that is no URI reference or cannot be
        # resolved; then a $ref to a resource the document lacks; then an unknown root $schema. Then, in document
        # order, the references of the subschemas the root compiles (not $defs, definitions or contentSchema, nor
        # an `if` without `then` or `else`) and of the ones their references reach.
        problem = registry.crawl_problem()
        if problem is not None:
            return problem
        uri = schema.get("$schema")
        if isinstance(uri, str) and not (uri.rstrip("#") in _CANONICAL or uri.rstrip("#") in _BY_TEXT):
            # A resource of the document, or (by a URI under https://json-schema.org/draft/ as written: an
            # upper-case scheme or host, or a default port, name none) a meta-schema document the reference holds,
            # which makes it look among all of them. Once a reference loaded the meta-schemas, a 2020-12 document is
            # found by its normal form too (observed): the vocabularies then look among all of them, the
            # meta-schema itself is its draft's.
            key = _meta_schema_key(uri)
            document = key in _META_DOCUMENTS and uri.startswith(_META_PREFIXES[1])
            loaded = not document and registry.meta_loaded and key in _COMPILED_DOCUMENTS
            if key is None or not (document or loaded or key in registry.resources):
                unknown_meta = (
                    f"Unknown meta-schema: '{uri}'. Custom meta-schemas must be registered in the registry "
                    "before use"
                )
            registry.every_meta_document = document or (loaded and key != _META_2020)
            if unknown_meta is None and key is not None:
                in_force, unknown_meta = _vocabularies_in_force(key, registry.resources.get(key))
                if in_force is not None:
                    registry.restrict(in_force)
    if unknown_meta is not None:
        return unknown_meta
    # A pattern may be read twice (see _compiled_problem): each is read once.
    token = _REGEX_VERDICTS.set({})
    try:
        return _compiled_problem(schema, draft, registry)
    finally:
        _REGEX_VERDICTS.reset(token)


def _compiled_problem(schema: Any, draft: _Draft, registry: _Registry | None) -> str | None:
    """The first problem :func:`schema_problem` finds compiling ``schema`` (root dialect ``draft``), once its
    registry is filled without one: a reference that leads nowhere, an id, a value of the wrong type where the
    meta-schema did not look, a pattern that is no regex."""
    # The subschemas the walk below compiles; those whose keywords but references are compiled (by the walk, or
    # found by _compiled_nodes).
    # Each subschema is compiled once per set of vocabularies in force (observed: a target compiled with those its
    # own $schema names is compiled again where it stands, with the root's).
    seen: set[tuple[int, frozenset[str] | None]] = set()
    compiled: set[int] = set()
    walk = registry is not None and registry.needs_compiling
    if registry is not None and not walk and registry.draft.ref_siblings:
        # Nothing but a pattern can be wrong here. 2019-09 and 2020-12 read each pattern where it is compiled
        # (observed), so of several bad ones the first compiled is reported: the walk below finds it, and is only
        # taken when there is one (the set of subschemas compiled is found much faster).
        if _pattern_problem(schema, _compiled_nodes(schema, draft)) is None:
            return None
        walk = True
    if registry is not None and walk:
        # A depth-first walk in key order: a reference's target is compiled where the reference stands.
        # Each subschema is compiled in its own dialect (its $schema's, else its parent's: observed).
        # A reference from a subschema to the root as a whole, by a URI that is not the base of what it holds (its
        # id resolved once: see _Registry.root_base), has the root compiled again below that URI (observed), its
        # subschemas with it: once, so the walk stays linear.
        stack: list[tuple[Iterator[tuple[Any, str | None, _Draft, _Draft]], Any, bool]] = [
            (iter([(schema, registry.root_key, registry.draft, registry.draft)]), None, False)
        ]
        rebased_seen: set[tuple[int, frozenset[str] | None]] = set()
        rebased_once = False
        while stack:
            steps, owner, rebased = stack[-1]
            step = next(steps, None)
            if step is None:
                stack.pop()
                continue
            node, base, dialect, vocabularies = step
            if base is None:
                return str(node)
            if not isinstance(node, Mapping):
                continue
            if node is schema and owner is not None:
                if owner is schema or rebased or rebased_once or base == registry.root_base:
                    continue
                rebased_once = rebased = True
                rebased_seen.add((id(node), vocabularies.in_force))
                stack.append((registry.steps(node, base, dialect, vocabularies), node, rebased))
                continue
            if node is owner:
                continue  # a reference to the subschema holding it compiles nothing more (observed)
            if not rebased and registry.reads_id_otherwise(node, dialect):
                rebased = True  # its base URI, and those of what it holds, are found anew
            marks = rebased_seen if rebased else seen
            mark = (id(node), vocabularies.in_force)
            if mark in marks:
                continue
            marks.add(mark)
            if _compiles_keywords(node, dialect, vocabularies):
                compiled.add(id(node))
            problem, base = registry.enter(node, base, dialect, rebased=rebased)
            if problem is not None:
                return problem
            stack.append((registry.steps(node, base, dialect, vocabularies), node, rebased))
    else:
        compiled = _compiled_nodes(schema, draft)
    return _pattern_problem(schema, compiled)


def _pattern_problem(schema: Any, compiled: set[int]) -> str | None:
    """The first pattern that is no regex among the subschemas ``compiled`` (their ids) of ``schema``.

    The patterns of the subschemas that are compiled are read as the engines read them, last (observed: a bad
    pattern under $defs that nothing references, or in an `if` without `then` or `else`, is taken; drafts 4, 6
    and 7 check the regex format of every pattern with the other keywords, in ECMA-262's syntax)."""
    token = _COMPILED.set(frozenset(compiled))
    try:
        return meta_schema_problem(schema, formats=True)
    finally:
        _COMPILED.reset(token)


#: The verdicts of :func:`regex_ok` by pattern while :func:`schema_problem` checks a schema (None: none kept).
_REGEX_VERDICTS: ContextVar[dict[str, bool] | None] = ContextVar("_REGEX_VERDICTS", default=None)


def _regex_ok(pattern: str) -> bool:
    """:func:`regex_ok`, read once per pattern while a schema is checked (see :data:`_REGEX_VERDICTS`)."""
    verdicts = _REGEX_VERDICTS.get()
    if verdicts is None:
        return regex_ok(pattern)
    ok = verdicts.get(pattern)
    if ok is None:
        ok = verdicts[pattern] = regex_ok(pattern)
    return ok


#: The ids of the subschemas compiled, while the format pass of :func:`schema_problem` runs (None: every one).
_COMPILED: ContextVar[frozenset[int] | None] = ContextVar("_COMPILED", default=None)


#: The keywords a subschema compiled in a dialect whose vocabularies are not in force still compiles.
_CORE_REFERENCES = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})


def _compiles_keywords(node: Mapping[str, Any], draft: _Draft, vocabularies: _Draft) -> bool:
    """Whether compiling ``node`` (dialect ``draft``, the vocabularies of ``vocabularies`` in force) compiles its
    keywords but the references (its ``pattern`` among them): not beside a ``$ref`` in the older drafts, nor where
    no vocabularies are in force (see :attr:`_Draft.vocabularies`)."""
    if draft.vocabularies and (not vocabularies.vocabularies or vocabularies.in_force is not None):
        return (
            False  # where only some vocabularies are in force, the walk itself reads the patterns it compiles
        )
    return draft.ref_siblings or "$ref" not in node


def _unevaluated_items(node: Mapping[str, Any], vocabularies: _Draft) -> bool:
    """Whether an ``unevaluatedItems`` of ``node`` compiles what stands beside it (``contains`` among them)."""
    return (
        "unevaluatedItems" in node
        and node["unevaluatedItems"] is not True
        and vocabularies.unevaluated_vocabulary
    )


def _compiled_nodes(schema: Any, draft: _Draft) -> set[int]:
    """The ids of the subschemas the reference compiles in a schema without references: the root and what it
    applies, as :func:`_schemas_of` says, all the way down."""
    seen: set[int] = set()
    out: set[int] = set()
    walked: set[tuple[int, str]] = set()
    stack = [(schema, draft)]
    while stack:
        node, dialect = stack.pop()
        if not isinstance(node, Mapping) or id(node) in seen:
            continue
        seen.add(id(node))
        if not _compiles_keywords(node, dialect, draft):
            continue  # no references here, so nothing else is compiled
        out.add(id(node))
        for key, value in node.items():
            if key in _UNEVALUATED and dialect.unevaluated_vocabulary and not draft.unevaluated_vocabulary:
                continue
            if key == "contains" and not dialect.compiles_contains and not _unevaluated_items(node, draft):
                continue
            subs = _schemas_of(key, value, node, dialect, compiled=True)
            if key in _UNEVALUATED and subs and value is not True:
                # The `if`s without `then` or `else` the keyword's walk compiles (here and in what it applies in
                # place), which only it compiles.
                subs = [*subs, *_walked_lone_ifs(key, node, dialect, walked)]
            stack.extend((sub, _dialect(sub, dialect)) for sub in subs)
    return out


def _walked_lone_ifs(
    kind: str, node: Mapping[str, Any], draft: _Draft, walked: set[tuple[int, str]]
) -> list[Any]:
    """The ``if`` without ``then`` or ``else`` of each subschema unevaluated keyword ``kind`` of ``node`` walks in a
    schema without references (see :meth:`_Registry._filter_steps`): ``node`` itself and what it applies in place
    by the keywords of :data:`_COMPILED_WITH`, all the way down. Each subschema is walked once per unevaluated
    keyword (``walked``: the pairs walked so far)."""
    found: list[Any] = []
    stack: list[tuple[Any, _Draft]] = [(node, draft)]
    while stack:
        current, dialect = stack.pop()
        if not isinstance(current, Mapping) or (id(current), kind) in walked:
            continue
        walked.add((id(current), kind))
        conditional = not isinstance(current.get("if"), bool)
        for name in _COMPILED_WITH[kind]:
            value = current.get(name)
            if value is None:
                continue
            subs: list[Any] = []
            if name in _CONDITIONAL:
                if conditional and name == "if":
                    subs = [value]
                    if "then" not in current and "else" not in current:
                        found.append(value)
                elif conditional and "if" in current:
                    subs = [value]
            elif name in _WALKED_AFTER and isinstance(value, list):
                subs = value
            elif name == "dependentSchemas" and isinstance(value, Mapping):
                subs = list(value.values())
            stack.extend((sub, _dialect(sub, dialect)) for sub in subs)
    return found


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
#: Within a group of fewer keywords than this, a schema object with more keys than the group has is checked in
#: the group's order, any other in its own key order; a larger group always goes by the schema's key order
#: (observed: the applicator and validation vocabularies, 15 and 20 keywords, always in key order; the others
#: flip once the object has more keys than they have keywords).
_SMALL_GROUP = 10

#: Draft-07's keywords (one meta-schema, so one group); draft-06 has them but for ``$comment``, ``readOnly``,
#: ``writeOnly`` and ``if``/``then``/``else`` (observed).
_DRAFT7_KEYWORDS = (
    "$id", "$schema", "$ref", "$comment", "title", "description", "readOnly", "writeOnly", "examples",
    "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern",
    "additionalItems", "items", "maxItems", "minItems", "uniqueItems", "contains", "maxProperties", "minProperties",
    "required", "additionalProperties", "definitions", "properties", "patternProperties", "dependencies",
    "propertyNames", "enum", "type", "format", "contentMediaType", "contentEncoding", "if", "then", "else", "allOf",
    "anyOf", "oneOf", "not",
)  # fmt: skip
_DRAFT6_KEYWORDS = tuple(
    k
    for k in _DRAFT7_KEYWORDS
    if k
    not in ("$comment", "readOnly", "writeOnly", "if", "then", "else", "contentMediaType", "contentEncoding")
)
_DRAFT4_KEYWORDS = (
    "id", "$schema", "title", "description", "format", "multipleOf", "maximum", "exclusiveMaximum",
    "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "additionalItems", "items", "maxItems",
    "minItems", "uniqueItems", "maxProperties", "minProperties", "required", "additionalProperties", "definitions",
    "properties", "patternProperties", "dependencies", "enum", "type", "allOf", "anyOf", "oneOf", "not",
)  # fmt: skip
_META_2019 = "https://json-schema.org/draft/2019-09/"
_META_OLD = "http://json-schema.org/"


@dataclass(frozen=True)
class _Draft:
    """What the dialect a root ``$schema`` chooses changes (observed): the keywords it knows and their order,
    rules that differ from 2020-12's, and how references are crawled and compiled."""

    groups: tuple[tuple[str, ...], ...]
    #: Keywords whose rule is not 2020-12's (:func:`_draft_rule_problem`): ``items`` (a schema or a non-empty
    #: array of them), ``schema``, ``boolean_or_schema``, ``boolean``, ``string``, ``uri_reference``, ``uri``,
    #: ``anchor_2019``, ``nonempty_string_array``.
    rules: Mapping[str, str] = field(default_factory=dict)
    #: Draft 4: a schema is an object (``true`` is not one), string arrays are not empty, ``exclusiveMaximum`` and
    #: ``exclusiveMinimum`` need ``maximum`` and ``minimum``.
    draft4: bool = False
    #: ``pattern`` values, and ``patternProperties`` names, are checked as regexes with the other keywords
    #: (drafts 4, 6, 7; and the names in 6 and 7), not after every other problem.
    inline_patterns: bool = False
    inline_names: bool = False
    #: The keyword that names a resource; the ones that name anchors.
    id_keyword: str = "$id"
    anchor_keywords: tuple[str, ...] = ("$anchor", "$dynamicAnchor")
    #: ``$dynamicRef`` is a reference; ``$recursiveRef`` must be a URI reference; the keywords beside a ``$ref``
    #: are compiled.
    dynamic_refs: bool = True
    recursive_refs: bool = False
    ref_siblings: bool = True
    #: The ids of drafts 4 to 7: one beside a ``$ref`` names nothing (the keywords there are ignored), and a
    #: plain-name fragment (``#foo``) names an anchor of the enclosing resource, not a resource.
    legacy_ids: bool = False
    #: Keywords the registry crawls though the draft does not know them, and known ones it does not crawl (the
    #: subschemas there are crawled when a reference leads into them).
    crawled: frozenset[str] = frozenset()
    not_crawled: frozenset[str] = frozenset({"dependencies"})
    #: Keywords whose value must be a string once compiled (in drafts 4 and 6 ones their meta-schemas do not
    #: describe).
    compiled_strings: frozenset[str] = frozenset()
    #: The meta-schema documents a compiled reference can reach, and their one anchor.
    documents: frozenset[str] = _COMPILED_DOCUMENTS
    document_anchor: str | None = _META_ANCHOR
    #: Its keywords are compiled by vocabulary (2019-09, 2020-12): those the vocabularies in force name, which
    #: are the dialect's of the root, or of a reference's target (observed). The older drafts have none, so a
    #: subschema of these dialects compiled where theirs are in force compiles its references only; 2019-09 has
    #: no vocabulary of its own for the unevaluated keywords, so a 2020-12 subschema compiles none of them there.
    vocabularies: bool = True
    unevaluated_vocabulary: bool = True
    #: The vocabularies in force (:data:`_VOCABULARY_NAMES`) where the root's ``$schema`` names a vocabulary
    #: meta-schema, or a meta-schema of the document with a ``$vocabulary`` (observed); None: all of them.
    in_force: frozenset[str] | None = None
    #: Whether ``contains`` is compiled where it stands: not in a 2019-09 or 2020-12 subschema whose dialect comes
    #: from a ``$schema`` (its own or inherited, the root's too) that names none of the meta-schemas the reference
    #: knows by URI (a vocabulary meta-schema, one with a fragment, one of the document: observed), but for the
    #: ``contains`` an ``unevaluatedItems`` beside it compiles.
    compiles_contains: bool = True

    @cached_property
    def vocabulary_of(self) -> Mapping[str, int]:
        """The position of each keyword's group in :attr:`groups` (every keyword is in exactly one)."""
        return {key: position for position, group in enumerate(self.groups) for key in group}

    def checking_order(self, schema: Mapping[str, Any]) -> list[str]:
        """The known keywords of ``schema`` in the order the reference checks them."""
        vocabulary_of = self.vocabulary_of
        known = [key for key in schema if key in vocabulary_of]
        if len(known) < 2:  # most subschemas
            return known
        found: list[list[str]] = [[] for _ in self.groups]
        for key in known:
            found[vocabulary_of[key]].append(key)
        size = len(schema)
        ordered: list[str] = []
        for group, keys in zip(self.groups, found):
            if len(keys) > 1 and len(group) < _SMALL_GROUP and size > len(group):
                keys = [key for key in group if key in schema]
            ordered.extend(keys)
        return ordered


_OLD_RULES = {
    "$id": "uri_reference",
    "$ref": "uri_reference",
    "$schema": "uri",
    "items": "items",
    "additionalItems": "schema",
}
_DRAFTS: dict[str, _Draft] = {
    "2020": _Draft(_VOCABULARIES),
    "2019": _Draft(
        (
            ("definitions", "dependencies"),
            (
                "$id",
                "$schema",
                "$anchor",
                "$ref",
                "$recursiveRef",
                "$recursiveAnchor",
                "$vocabulary",
                "$comment",
                "$defs",
            ),
            (
                "additionalItems",
                "unevaluatedItems",
                "items",
                "contains",
                "additionalProperties",
                "unevaluatedProperties",
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
            _VOCABULARIES[4],
            _VOCABULARIES[5],
            ("format",),
            ("contentMediaType", "contentEncoding", "contentSchema"),
        ),
        {
            "$anchor": "anchor_2019",
            "$recursiveAnchor": "boolean",
            "items": "items",
            "additionalItems": "schema",
        },
        anchor_keywords=("$anchor",),
        dynamic_refs=False,
        recursive_refs=True,
        unevaluated_vocabulary=False,
        not_crawled=frozenset(),
        document_anchor=None,
        documents=frozenset(
            [f"{_META_2019}schema"]
            + [
                f"{_META_2019}meta/{name}"
                for name in ("core", "applicator", "validation", "meta-data", "format", "content")
            ]
        ),
    ),
    "7": _Draft(
        (_DRAFT7_KEYWORDS,),
        _OLD_RULES,
        inline_patterns=True,
        inline_names=True,
        anchor_keywords=(),
        dynamic_refs=False,
        ref_siblings=False,
        legacy_ids=True,
        not_crawled=frozenset(),
        # As draft 6 (observed where a subschema of draft 7 is compiled under a root whose meta-schema does not
        # describe them; draft 7's own describes both as strings).
        compiled_strings=frozenset({"contentMediaType", "contentEncoding"}),
        documents=frozenset({f"{_META_OLD}draft-07/schema"}),
        document_anchor=None,
        vocabularies=False,
        unevaluated_vocabulary=False,
    ),
    "6": _Draft(
        (_DRAFT6_KEYWORDS,),
        _OLD_RULES,
        inline_patterns=True,
        inline_names=True,
        anchor_keywords=(),
        dynamic_refs=False,
        ref_siblings=False,
        legacy_ids=True,
        not_crawled=frozenset(),
        compiled_strings=frozenset({"contentMediaType", "contentEncoding"}),
        documents=frozenset({f"{_META_OLD}draft-06/schema"}),
        document_anchor=None,
        vocabularies=False,
        unevaluated_vocabulary=False,
    ),
    "4": _Draft(
        (_DRAFT4_KEYWORDS,),
        {
            "id": "string",
            "items": "items",
            "additionalItems": "boolean_or_schema",
            "additionalProperties": "boolean_or_schema",
            "exclusiveMaximum": "boolean",
            "exclusiveMinimum": "boolean",
            "required": "nonempty_string_array",
        },
        draft4=True,
        inline_patterns=True,
        id_keyword="id",
        anchor_keywords=(),
        dynamic_refs=False,
        ref_siblings=False,
        legacy_ids=True,
        crawled=frozenset(_SCHEMA_KEYWORDS + _SCHEMA_MAP_KEYWORDS + _SCHEMA_ARRAY_KEYWORDS),
        not_crawled=frozenset(),
        compiled_strings=frozenset({"$ref"}),
        documents=frozenset({f"{_META_OLD}draft-04/schema"}),
        document_anchor=None,
        vocabularies=False,
        unevaluated_vocabulary=False,
    ),
}
_DRAFT_2020 = _DRAFTS["2020"]
#: 2020-12 as a ``$schema`` naming no meta-schema the reference knows by URI chooses it (see
#: :attr:`_Draft.compiles_contains`).
_DRAFT_2020_UNNAMED = replace(_DRAFT_2020, compiles_contains=False)
#: The URI each draft names itself by: one of these followed by any number of ``#`` names a meta-schema the
#: reference knows (observed; so do the other spellings of :data:`_BY_TEXT`).
_CANONICAL = frozenset(
    [f"{_META_OLD}draft-0{n}/schema" for n in (4, 6, 7)]
    + [f"{_META_2019}schema", "https://json-schema.org/draft/2020-12/schema"]
)
_DRAFT_URIS = {
    f"{scheme}://json-schema.org/{path}": name
    for scheme in ("http", "https")
    for name, path in (
        ("4", "draft-04/schema"),
        ("6", "draft-06/schema"),
        ("7", "draft-07/schema"),
        ("2019", "draft/2019-09/schema"),
    )
}


def _draft_of(schema: Any) -> _Draft:
    """The dialect the root's ``$schema`` chooses (2020-12 unless it names draft 4, 6, 7 or 2019-09)."""
    return _dialect(schema, _DRAFT_2020)


def _dialect(node: Any, inherited: _Draft) -> _Draft:
    """The dialect of a subschema whose parent's is ``inherited``: the one its ``$schema`` chooses, as the root's
    does (observed: 2020-12 unless it names draft 4, 6, 7 or 2019-09), else its parent's."""
    uri = node.get("$schema") if isinstance(node, Mapping) else None
    if not isinstance(uri, str):
        return inherited
    text = uri.rstrip("#")  # any number of trailing "#" (observed)
    name = _DRAFT_URIS.get(text)
    if name is not None:
        return _DRAFTS[name]
    return _DRAFT_2020 if text in _CANONICAL or text in _BY_TEXT else _DRAFT_2020_UNNAMED


def meta_schema_problem(schema: Any, *, draft: _Draft | None = None, formats: bool = False) -> str | None:
    """The first meta-schema violation in ``schema`` (``"1 is not of type \\"string\\""``), or ``None``, in the
    dialect ``draft`` (by default the one the schema's ``$schema`` chooses).

    ``formats`` checks the ``regex`` format of ``pattern`` values and ``patternProperties`` names instead of
    everything else: the reference reports a format problem only when the schema has no other one (but for the
    dialects that check them with the other keywords).
    """
    if draft is None:
        draft = _draft_of(schema)
    if draft.draft4:
        problem = None if formats else _type_problem(schema, "object")
    else:
        problem = None if formats else _type_problem(schema, "boolean", "object")
    if problem is not None or not isinstance(schema, Mapping):
        return problem
    compiled = _COMPILED.get() if formats else None
    # Its own patterns are checked (see schema_problem): it is compiled, and so are they (in the drafts whose
    # references stand alone, the keywords beside a $ref are not).
    active = compiled is None or id(schema) in compiled
    for key in draft.checking_order(schema):
        if not active and key == "pattern":
            continue
        problem = _keyword_problem(key, schema[key], draft, formats, names=active)
        if problem is not None:
            return problem
    if draft.draft4 and not formats:
        for keyword, needed in (("exclusiveMaximum", "maximum"), ("exclusiveMinimum", "minimum")):
            if keyword in schema and needed not in schema:
                return f'"{needed}" is a required property'
    return None


def _is_schema(value: Any, draft: _Draft) -> bool:
    """Whether ``value`` is a valid schema of ``draft`` (formats included where the draft checks them inline)."""
    return meta_schema_problem(value, draft=draft) is None


def _any_of(value: Any) -> str:
    return f"{json_text(value)} is not valid under any of the schemas listed in the 'anyOf' keyword"


def _draft_rule_problem(rule: str, value: Any, draft: _Draft, formats: bool) -> str | None:
    """The problem of a keyword whose rule in ``draft`` is not 2020-12's."""
    if rule == "items":
        if formats:
            items = value if isinstance(value, list) else [value]
            return next(
                (p for p in (meta_schema_problem(v, draft=draft, formats=True) for v in items) if p), None
            )
        if isinstance(value, list):
            valid = bool(value) and all(_is_schema(item, draft) for item in value)
        else:
            valid = _is_schema(value, draft)
        return None if valid else _any_of(value)
    if rule == "schema":
        return meta_schema_problem(value, draft=draft, formats=formats)
    if formats:
        return None
    if rule == "boolean_or_schema":
        return None if isinstance(value, bool) or _is_schema(value, draft) else _any_of(value)
    if rule in ("boolean", "string"):
        return _type_problem(value, rule)
    if rule == "uri_reference" or rule == "uri":
        problem = _type_problem(value, "string")
        if problem is None and (
            _uri_problem(value, allow_hash=True) is not None
            or (rule == "uri" and _SCHEME.match(value) is None)
        ):
            problem = f'{json_text(value)} is not a "{rule.replace("_", "-")}"'
        return problem
    if rule == "anchor_2019":
        problem = _type_problem(value, "string")
        if problem is None and _ANCHOR_2019.fullmatch(value) is None:
            problem = f'{json_text(value)} does not match "^[A-Za-z][-A-Za-z0-9.:_]*$"'
        return problem
    # nonempty_string_array
    problem = _type_problem(value, "array")
    if problem is None and not value:
        return f"{json_text(value)} has less than 1 item"
    return _string_array_problem(value)


def _keyword_problem(key: str, value: Any, draft: _Draft, formats: bool, *, names: bool = True) -> str | None:
    """The problem of one keyword's value (``formats`` selects the format-only pass; ``names``: the format pass
    checks the ``patternProperties`` names of this subschema)."""
    rule = draft.rules.get(key)
    if rule is not None:
        return _draft_rule_problem(rule, value, draft, formats)
    if key in _SCHEMA_KEYWORDS:
        return meta_schema_problem(value, draft=draft, formats=formats)
    if key in _SCHEMA_MAP_KEYWORDS:
        return _schema_map_problem(key, value, draft, formats, names=names)
    if key in _SCHEMA_ARRAY_KEYWORDS:
        return _schema_array_problem(value, draft, formats)
    if key == "pattern":
        # Drafts 4, 6 and 7 check the regex format with the other keywords (in ECMA-262's syntax); compiling a
        # subschema reads its pattern as the engines do, reported last (the format pass).
        if formats:
            ok = not isinstance(value, str) or _regex_ok(value)
        else:
            problem = _type_problem(value, "string")
            if problem is not None or not draft.inline_patterns:
                return problem
            ok = ecma_regex_ok(value)
        return None if ok else f'{json_text(value)} is not a "regex"'
    if formats:
        return _format_only(key, value, draft)
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
        # Draft 4 takes no number written with a fraction or exponent as an integer (not even -0.0), unless it
        # is beyond the 64-bit integers.
        problem = (
            f'{json_text(value)} is not of type "integer"'
            if draft.draft4 and isinstance(value, float) and -(2.0**63) <= value < 2.0**64
            else _type_problem(value, "integer")
        )
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
            if meta_schema_problem(item, draft=draft) is not None and (
                _string_array_problem(item) is not None or (draft.draft4 and not item)
            ):
                return (
                    f"{json_text(item)} is not valid under any of the schemas listed in the 'anyOf' keyword"
                )
    return None


def _format_only(key: str, value: Any, draft: _Draft) -> str | None:
    # Keywords holding schemas deeper down, for the format-only pass.
    if key == "dependencies" and isinstance(value, Mapping):
        for item in value.values():
            problem = meta_schema_problem(item, draft=draft, formats=True)
            if problem is not None:
                return problem
    return None


def _schema_map_problem(
    key: str, value: Any, draft: _Draft, formats: bool, *, names: bool = True
) -> str | None:
    if formats:
        if not isinstance(value, Mapping):
            return None
        if key == "patternProperties" and names:
            # Compiled: the reference names the subschema of the name that is no regex, not the name.
            bad = next((name for name in value if not _regex_ok(name)), None)
            if bad is not None:
                return f'{json_text(value[bad])} is not a "regex"'
    else:
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
    for item in value.values():
        problem = meta_schema_problem(item, draft=draft, formats=formats)
        if problem is not None:
            return problem
    if not formats and key == "patternProperties" and draft.inline_names:
        # The names' format, in ECMA-262's syntax: after every value is checked (reference).
        bad = next((name for name in value if not ecma_regex_ok(name)), None)
        if bad is not None:
            return f'{json_text(bad)} is not a "regex"'
    return None


def _schema_array_problem(value: Any, draft: _Draft, formats: bool) -> str | None:
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
        problem = meta_schema_problem(item, draft=draft, formats=formats)
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
