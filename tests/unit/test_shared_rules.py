"""Unit tests of the conversion rules the protocols share (``dscodec.protocols._body``, ``._sampling``, ``._tools``,
``._schema``, ``._constraints``, ``._images``; behavior.md#request-path)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import ErrorResponse

from dscodec.conversation import ToolDefinition
from dscodec.errors import ConversionError
from dscodec.options import ConversionOptions
from dscodec.protocols import _body, _constraints, _images, _sampling, _schema, _tools
from dscodec.protocols._error_bodies import anthropic_error_body, openai_error_body

# -- wire reading (serde-style messages, behavior.md#body-reading-and-limits) --------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "boolean `true`"),
        (1, "integer `1`"),
        (-1, "integer `-1`"),
        (1.5, "floating point `1.5`"),
        (1.0, "floating point `1.0`"),
        (-0.0, "floating point `-0.0`"),
        (1e15, "floating point `1000000000000000.0`"),
        (1e16, "floating point `1e+16`"),
        (1e-5, "floating point `0.00001`"),
        (2.5e-5, "floating point `0.000025`"),
        (1e-7, "floating point `1e-7`"),
        (1.8446744073709552e19, "floating point `1.8446744073709552e+19`"),
        ("s", 'string "s"'),
        ('a"b\n', 'string "a\\"b\\n"'),
        ("\x01", 'string "\\u{1}"'),
        ("日本", 'string "日本"'),
        ([], "sequence"),
        ({}, "map"),
    ],
)
def test_describe_value_matches_serde(value: Any, expected: str) -> None:
    assert _body.describe_value(value) == expected


def test_read_uint_refuses_floats_negatives_and_overflow() -> None:
    assert _body.read_uint(7, 32, "max_tokens") == 7
    with pytest.raises(_body.WireError, match=r"invalid type: floating point `1.0`, expected u32"):
        _body.read_uint(1.0, 32, "max_tokens")
    with pytest.raises(_body.WireError, match=r"invalid value: integer `-1`, expected u8"):
        _body.read_uint(-1, 8, "n")
    with pytest.raises(_body.WireError, match=r"invalid value: integer `4294967296`, expected u32"):
        _body.read_uint(2**32, 32, "max_tokens")
    with pytest.raises(_body.WireError, match=r"invalid type: boolean `true`, expected u64") as info:
        _body.read_uint(True, 64, "seed")
    assert info.value.path == "seed"


def test_read_f32_rounds_to_single_precision() -> None:
    assert _body.read_f32(0.3, None) == 0.30000001192092896
    assert _body.read_f32(1, None) == 1.0
    assert _body.to_f32(1e39) == float("inf")
    assert _body.to_f32(-1e39) == float("-inf")
    with pytest.raises(_body.WireError, match='invalid type: string "1", expected f32'):
        _body.read_f32("1", None)


def test_read_unit_enum_accepts_single_key_map() -> None:
    assert _body.read_unit_enum({"low": None}, _sampling.EFFORT_VARIANTS, None) == "low"
    with pytest.raises(_body.WireError, match="expected map with a single key"):
        _body.read_unit_enum({}, _sampling.EFFORT_VARIANTS, None)
    with pytest.raises(_body.WireError, match="invalid type: integer `1`, expected unit"):
        _body.read_unit_enum({"low": 1}, _sampling.EFFORT_VARIANTS, None)
    with pytest.raises(_body.WireError, match="unknown variant `HIGH`, expected one of `none`, `minimal`"):
        _body.read_unit_enum("HIGH", _sampling.EFFORT_VARIANTS, None)
    with pytest.raises(_body.WireError, match="unknown variant `x`, expected `function`$"):
        _body.read_unit_enum("x", ("function",), None)


DEPTH_ERROR = "JSON input exceeds the maximum nesting depth of 128"


def _nested_body(depth: int) -> dict[str, Any]:
    """A body object whose deepest array is at depth ``depth`` (the body itself is depth 1)."""
    inner: Any = [-0.0]
    for _ in range(depth - 2):
        inner = [inner]
    return {"zz": inner}


@pytest.mark.parametrize("depth", [126, 127, 128, 129, 300, 1000])
def test_body_nesting_limits_of_text_and_mappings(depth: int) -> None:
    # JSON text nests 127 levels, a mapping one more (the reference counts a mapping's levels from one).
    value = _nested_body(depth)
    text = '{"zz": ' + "[" * (depth - 1) + "-0" + "]" * (depth - 1) + "}"
    if depth <= 127:
        assert _body.read_body(text, lambda v: v) == value
    else:
        # Text gets the reference's message, which points at the bracket that opens the 128th level (column
        # 7 + 127).
        for given_body in (text, text.encode()):
            with pytest.raises(ConversionError) as info:
                _body.read_body(given_body, lambda v: v)
            assert info.value.message == "invalid JSON request: recursion limit exceeded at line 1 column 134"
    if depth <= 128:
        assert _body.read_body(value, lambda v: v) == value
        return
    # Deeper than orjson's own limit (255) too: the mapping is checked before it is serialised.
    with pytest.raises(ConversionError) as info:
        _body.read_body(value, lambda v: v)
    assert info.value.message == DEPTH_ERROR and info.value.status_code == 400


def test_a_mapping_that_contains_itself_is_too_deep() -> None:
    looped: dict[str, Any] = {"model": "m"}
    looped["self"] = looped
    with pytest.raises(ConversionError) as info:
        _body.read_body(looped, lambda v: v)
    assert info.value.message == DEPTH_ERROR


def test_other_mappings_nest_as_deep_as_dicts() -> None:
    # Mappings that are not dicts are walked as they are copied (their depth is not seen before): the same limit.
    from types import MappingProxyType

    for depth, ok in ((128, True), (129, False)):
        inner: Any = "x"
        for _ in range(depth - 1):
            inner = MappingProxyType({"k": inner})
        if ok:
            assert _body.read_body({"zz": inner}, lambda v: v)["zz"]["k"]
        else:
            with pytest.raises(ConversionError) as info:
                _body.read_body({"zz": inner}, lambda v: v)
            assert info.value.message == DEPTH_ERROR


class Counted(str):
    """A string that counts the equality comparisons made with it, in any position (``==``, ``!=``, ``in`` on a
    list). Sets and dicts compare only on a hash match, so linear code makes about one comparison per item and a
    scan of all earlier items makes quadratically many. Shared by the inbound tests' linearity checks."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        Counted.comparisons += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        Counted.comparisons += 1
        return str.__ne__(self, other)

    __hash__ = str.__hash__

    @classmethod
    def reset(cls) -> None:
        cls.comparisons = 0


def test_counted_strings_see_list_scans() -> None:
    names = [Counted(f"n{i}") for i in range(100)]
    Counted.reset()
    assert Counted("n99") in names and Counted.comparisons == 100
    Counted.reset()
    assert Counted("n99") in set(names) and Counted.comparisons <= 2


def test_schema_array_uniqueness_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    # 20,000 required names with a duplicate at the end: found by one set pass, no per-item JSON text.
    names = [Counted(f"p{i}") for i in range(20_000)]
    schema = {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": names}
    texts: list[Any] = []
    real_json_text = _body.json_text
    monkeypatch.setattr(_schema, "json_text", lambda value: texts.append(value) or real_json_text(value))
    Counted.reset()
    _tools.validate_function_parameters("f", schema)
    assert texts == [] and Counted.comparisons <= 2 * len(names)
    schema["required"] = [*names, Counted("p0")]
    Counted.reset()
    with pytest.raises(ConversionError, match=r"has non-unique elements$"):
        _tools.validate_function_parameters("f", schema)
    assert len(texts) == 1 and Counted.comparisons <= 2 * len(names)
    with pytest.raises(ConversionError, match="is not valid under any of the schemas listed in the 'anyOf'"):
        _tools.validate_function_parameters(
            "f", {"type": "object", "properties": {"a": {"type": ["string", "null", "string"]}}}
        )


def test_meta_schema_keywords_belong_to_one_vocabulary() -> None:
    # Keywords are checked vocabulary by vocabulary through one lookup table: no keyword may be in two.
    assert sum(len(v) for v in _schema._VOCABULARIES) == len(_schema._DRAFT_2020.vocabulary_of)
    # Within a vocabulary the schema's own order decides; across vocabularies the vocabulary order does.
    assert (
        _schema.meta_schema_problem({"minLength": -1, "maxLength": -2}) == "-1 is less than the minimum of 0"
    )
    assert (
        _schema.meta_schema_problem({"minLength": -1, "items": 1}) == '1 is not of types "boolean", "object"'
    )


def _missing(uri: str, reason: str) -> str:
    return f"Resource '{uri}' is not present in a registry and retrieving it failed: {reason}"


def _rootless(ref: str, base: str) -> str:
    return (
        f"Failed to resolve '{ref}' against '{base}': when base has a rootless path and no authority, reference "
        "should either have scheme, be empty or start with '#'"
    )


_POPULATED = "Retrieving external resources is not supported once the registry is populated"


_D4 = "http://json-schema.org/draft-04/schema#"
_D6 = "http://json-schema.org/draft-06/schema#"
_D7 = "http://json-schema.org/draft-07/schema#"
_D2019 = "https://json-schema.org/draft/2019-09/schema"


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        # The root's $schema chooses the dialect: items as an array is a draft 4 to 2019-09 keyword.
        ({"$schema": _D7, "items": [{}], "additionalItems": False}, None),
        ({"$schema": _D2019, "items": [{}]}, None),
        ({"$schema": "https://json-schema.org/draft-04/schema", "items": [{}]}, None),
        ({"items": [{}]}, '[{}] is not of types "boolean", "object"'),
        (
            {"$schema": _D7, "items": []},
            "[] is not valid under any of the schemas listed in the 'anyOf' keyword",
        ),
        ({"$schema": _D7, "additionalItems": 1}, '1 is not of types "boolean", "object"'),
        # Keywords a draft does not know are not checked; ones it knows differently are.
        ({"$schema": _D6, "$comment": 1, "readOnly": 1, "if": 1}, None),
        ({"$schema": _D7, "$comment": 1}, '1 is not of type "string"'),
        ({"$schema": _D2019, "$recursiveAnchor": "a"}, '"a" is not of type "boolean"'),
        ({"$schema": _D2019, "$anchor": "_a"}, '"_a" does not match "^[A-Za-z][-A-Za-z0-9.:_]*$"'),
        # Draft 4: objects only, boolean exclusive bounds that need their bound, non-empty string arrays, and
        # integers without a fraction or exponent (below 2**64).
        ({"$schema": _D4, "not": True}, 'true is not of type "object"'),
        ({"$schema": _D4, "minimum": 1, "exclusiveMinimum": True}, None),
        (
            {"$schema": _D4, "exclusiveMinimum": True, "exclusiveMaximum": True},
            '"maximum" is a required property',
        ),
        ({"$schema": _D4, "exclusiveMinimum": 1}, '1 is not of type "boolean"'),
        ({"$schema": _D4, "required": []}, "[] has less than 1 item"),
        ({"$schema": _D4, "maxLength": 1.0}, '1.0 is not of type "integer"'),
        ({"$schema": _D4, "maxLength": 1e20}, None),
        (
            {"$schema": _D4, "additionalProperties": 1},
            "1 is not valid under any of the schemas listed in the 'anyOf' keyword",
        ),
        # Drafts 6 and 7 check formats with the other keywords, in key order.
        ({"$schema": _D7, "$ref": "[", "minLength": -1}, '"[" is not a "uri-reference"'),
        ({"$schema": _D7, "minLength": -1, "pattern": "["}, "-1 is less than the minimum of 0"),
        ({"$schema": _D7, "patternProperties": {"[": {}}, "minLength": -1}, '"[" is not a "regex"'),
        ({"$schema": _D6, "properties": {"a": {"$schema": "x"}}}, '"x" is not a "uri"'),
        # Draft 6 compiles content keywords its meta-schema does not describe; draft 4 compiles $ref so.
        ({"$schema": _D6, "contentEncoding": 1, "minLength": -1}, "-1 is less than the minimum of 0"),
        ({"$schema": _D6, "contentEncoding": 1}, '1 is not of type "string"'),
        ({"$schema": _D4, "$ref": 1}, '1 is not of type "string"'),
        # References: draft 4 names resources with id; up to draft 7 the keywords beside a $ref are not
        # compiled and $anchor names nothing; each draft reaches its own meta-schema document only.
        (
            {
                "$schema": _D4,
                "properties": {"a": {"id": "https://x.com/a"}, "b": {"$ref": "https://x.com/a"}},
            },
            None,
        ),
        (
            {
                "$schema": _D4,
                "properties": {"a": {"$id": "https://x.com/a"}, "b": {"$ref": "https://x.com/a"}},
            },
            _missing("https://x.com/a", "Retrieval is disabled, cannot fetch https://x.com/a"),
        ),
        ({"$schema": _D7, "properties": {"a": {"$ref": "#", "properties": {"b": {"$ref": "#/nope"}}}}}, None),
        (
            {"$schema": _D2019, "properties": {"a": {"$ref": "#", "properties": {"b": {"$ref": "#/nope"}}}}},
            "Pointer '/nope' does not exist",
        ),
        (
            {"$schema": _D7, "properties": {"a": {"$anchor": "foo"}, "b": {"$ref": "#foo"}}},
            "Anchor 'foo' does not exist",
        ),
        ({"$schema": _D7, "properties": {"a": {"$ref": _D7}}}, None),
        (
            {"$schema": _D7, "properties": {"a": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}},
            _missing("https://json-schema.org/draft/2020-12/schema", _POPULATED),
        ),
        ({"$schema": _D7, "properties": {"a": {"$dynamicRef": "#/nope"}}}, None),
        (
            {"$schema": _D7, "items": [{}], "additionalItems": {"$ref": "#/nope"}},
            "Pointer '/nope' does not exist",
        ),
        ({"$schema": _D7, "items": {}, "additionalItems": {"$ref": "#/nope"}}, None),
        (
            {"$schema": _D2019, "$recursiveRef": "["},
            "Invalid URI reference '[': unexpected character at index 0",
        ),
        # then and else are compiled only beside if, in every dialect.
        ({"then": {"$ref": "#/nope"}}, None),
        ({"if": {}, "else": {"$ref": "#/nope"}}, "Pointer '/nope' does not exist"),
        # A subschema's $schema must be a URI reference (2020-12, 2019-09 and draft 4 check it with the $id values).
        (
            {"properties": {"a": {"$schema": "a b"}}},
            "Invalid URI reference 'a b': unexpected character at index 1",
        ),
    ],
)
def test_schema_dialects(schema: dict[str, Any], message: str | None) -> None:
    assert _schema.schema_problem(schema) == message


def _padded(schema: dict[str, Any], keys: int) -> dict[str, Any]:
    """``schema`` with unknown keywords added up to ``keys`` keys."""
    return {**schema, **{f"x{i}": i for i in range(keys - len(schema))}}


@pytest.mark.parametrize(
    ("schema", "group_size", "in_key_order", "in_group_order"),
    [
        # Small groups (the base keywords, core, unevaluated, meta-data, content): the schema's key order up to
        # as many keys as the group has keywords, the group's order beyond.
        (
            {"$recursiveAnchor": 1, "dependencies": []},
            4,
            '1 is not of type "string"',
            '[] is not of type "object"',
        ),
        ({"$comment": 1, "$id": 2}, 9, '1 is not of type "string"', '2 is not of type "string"'),
        (
            {"unevaluatedProperties": 1, "unevaluatedItems": 2},
            2,
            '1 is not of types "boolean", "object"',
            '2 is not of types "boolean", "object"',
        ),
        ({"writeOnly": 1, "title": 2}, 7, '1 is not of type "boolean"', '2 is not of type "string"'),
        (
            {"contentSchema": 1, "contentEncoding": 2},
            3,
            '1 is not of types "boolean", "object"',
            '2 is not of type "string"',
        ),
        # The applicator (15 keywords) and validation (20) vocabularies: always the key order.
        (
            {"not": 1, "items": 2},
            60,
            '1 is not of types "boolean", "object"',
            '1 is not of types "boolean", "object"',
        ),
        ({"required": 1, "maxLength": "x"}, 60, '1 is not of type "array"', '1 is not of type "array"'),
    ],
)
def test_meta_schema_order_within_a_vocabulary(
    schema: dict[str, Any], group_size: int, in_key_order: str, in_group_order: str
) -> None:
    assert _schema.meta_schema_problem(_padded(schema, min(group_size, 20))) == in_key_order
    assert _schema.meta_schema_problem(_padded(schema, group_size + 1)) == in_group_order


@pytest.mark.parametrize("token", ["1" * 5000, "-1", "1e3"])
def test_pointer_tokens_that_are_not_array_indexes(token: str) -> None:
    schema = {"type": "object", "allOf": [{}], "properties": {"a": {"$ref": f"#/allOf/{token}"}}}
    pointer = f"/allOf/{token}"
    assert _schema.schema_problem(schema) == f"Failed to parse array index '{token}' in pointer '{pointer}'"
    assert _schema.schema_problem({**schema, "properties": {"a": {"$ref": "#/allOf/000"}}}) is None


def test_a_pointer_token_of_many_leading_zeros_is_an_index() -> None:
    token = "0" * 5000 + "9"
    schema = {"type": "object", "allOf": [{}], "properties": {"a": {"$ref": f"#/allOf/{token}"}}}
    assert _schema.schema_problem(schema) == f"Pointer '/allOf/{token}' does not exist"


@pytest.mark.parametrize("token", ["²", "١"])
def test_pointer_tokens_that_are_no_uri_characters(token: str) -> None:
    # Digits outside ASCII are no array index, and no character a URI reference may hold (observed).
    schema = {"type": "object", "allOf": [{}], "properties": {"a": {"$ref": f"#/allOf/{token}"}}}
    assert (
        _schema.schema_problem(schema)
        == f"Invalid URI reference '#/allOf/{token}': unexpected character at index 8"
    )


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        # A root ``$schema`` must name a meta-schema the reference knows.
        ({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}, None),
        ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, None),
        ({"$schema": "#", "type": "object"}, None),
        (
            {"$schema": "x", "type": "object", "$ref": "#/nowhere"},
            "Unknown meta-schema: 'x'. Custom meta-schemas must be registered in the registry before use",
        ),
        (
            {"$schema": "http://json-schema.org/draft-07/schema#x", "type": "object"},
            (
                "Unknown meta-schema: 'http://json-schema.org/draft-07/schema#x'. Custom meta-schemas must be "
                "registered in the registry before use"
            ),
        ),
        ({"$schema": "https://json-schema.org/draft/2020-12/schema#x", "type": "object"}, None),
        (
            {"$schema": "a b", "type": "object"},
            "Invalid URI reference 'a b': unexpected character at index 1",
        ),
        ({"$id": "https://e.com/s", "$schema": "https://e.com/s", "type": "object"}, None),
        # Only the root's ``$schema`` counts; a meta-schema problem comes first.
        ({"type": "object", "properties": {"a": {"$schema": "x"}}}, None),
        ({"$schema": "x", "type": "object", "minLength": -1}, "-1 is less than the minimum of 0"),
        # ``$id`` may end in an empty fragment only; ``$recursiveAnchor`` is an anchor name.
        ({"type": "object", "$id": "a#"}, None),
        ({"type": "object", "$id": "#/x"}, '"#/x" does not match "^[^#]*#?$"'),
        ({"type": "object", "$recursiveAnchor": "a b"}, '"a b" does not match "^[A-Za-z_][-A-Za-z0-9._]*$"'),
        # References that leave the document reach nothing (nothing is fetched) but the meta-schemas.
        (
            {"type": "object", "$ref": "string"},
            "Resource 'string' is not present in a registry and retrieving it failed: No base URI is available",
        ),
        (
            {"$id": "https://e.com/r", "type": "object", "$ref": "x"},
            (
                "Resource 'https://e.com/x' is not present in a registry and retrieving it failed: Retrieval is "
                "disabled, cannot fetch https://e.com/x"
            ),
        ),
        ({"type": "object", "$ref": "https://json-schema.org/draft/2020-12/schema"}, None),
        ({"type": "object", "$ref": "#foo"}, "Anchor 'foo' does not exist"),
        ({"type": "object", "$defs": {"a": {"$anchor": "foo"}}, "$ref": "#foo"}, None),
        ({"type": "object", "properties": {"a b": {}}, "$ref": "#/properties/a%20b"}, None),
        (
            {"type": "object", "$ref": "#/a b"},
            "Invalid URI reference '#/a b': unexpected character at index 3",
        ),
        # Only the subschemas the reference compiles have their references followed into the document; every
        # subschema's references to other documents are looked up (nothing is fetched).
        ({"type": "object", "$defs": {"a": {"$ref": "#/nope"}}}, None),
        (
            {"type": "object", "$defs": {"a": {"$ref": "#/nope"}}, "$ref": "#/$defs/a"},
            "Pointer '/nope' does not exist",
        ),
        ({"type": "object", "default": {"$ref": "nope"}}, None),
        ({"type": "object", "if": {"$ref": "#/nope"}}, None),
        ({"type": "object", "if": {"$ref": "#/nope"}, "then": {}}, "Pointer '/nope' does not exist"),
        (
            {"type": "object", "$defs": {"a": {"$ref": "nope"}}},
            "Resource 'nope' is not present in a registry and retrieving it failed: No base URI is available",
        ),
        (
            {"type": "object", "$dynamicRef": "null"},
            (
                "Resource 'json-schema:///null' is not present in a registry and retrieving it failed: Retrieving "
                "external resources is not supported once the registry is populated"
            ),
        ),
        # Resources named like meta-schemas are never looked up while the registry is filled; compiled, only the
        # 2020-12 documents resolve (their one anchor is "meta").
        ({"type": "object", "$defs": {"a": {"$ref": "http://json-schema.org/draft-07/schema#"}}}, None),
        ({"type": "object", "$defs": {"a": {"$ref": "https://json-schema.org/draft/anything"}}}, None),
        (
            {"type": "object", "properties": {"a": {"$ref": "http://json-schema.org/draft-07/schema#"}}},
            (
                "Resource 'http://json-schema.org/draft-07/schema' is not present in a registry and retrieving it "
                "failed: Retrieving external resources is not supported once the registry is populated"
            ),
        ),
        (
            {"type": "object", "$ref": "https://json-schema.org/draft/2019-09/schema"},
            (
                "Resource 'https://json-schema.org/draft/2019-09/schema' is not present in a registry and retrieving "
                "it failed: Retrieving external resources is not supported once the registry is populated"
            ),
        ),
        (
            {"type": "object", "$defs": {"a": {"$ref": "https://json-schema.org/draft-07/schema"}}},
            (
                "Resource 'https://json-schema.org/draft-07/schema' is not present in a registry and retrieving it "
                "failed: Retrieval is disabled, cannot fetch https://json-schema.org/draft-07/schema"
            ),
        ),
        ({"type": "object", "$ref": "https://json-schema.org/draft/2020-12/meta/core#meta"}, None),
        (
            {"type": "object", "$ref": "https://json-schema.org/draft/2020-12/schema#x"},
            "Anchor 'x' does not exist",
        ),
        # The base meta-schema's own keywords are checked before the vocabularies.
        ({"type": "object", "readOnly": 1, "definitions": {"z": {"title": 9}}}, '9 is not of type "string"'),
    ],
)
def test_schema_references_and_identifiers(schema: dict[str, Any], message: str | None) -> None:
    assert _schema.schema_problem(schema) == message


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        # A nested $id is the base of the references under it (RFC 3986 resolution, normalised).
        (
            {
                "properties": {
                    "p": {"$id": "https://x.com/a/", "properties": {"z": {"$id": "b", "$ref": "c"}}}
                }
            },
            _missing("https://x.com/a/c", "Retrieval is disabled, cannot fetch https://x.com/a/c"),
        ),
        (
            {
                "properties": {"p": {"$id": "https://x.com/a/", "properties": {"z": {"$id": "b"}}}},
                "$ref": "https://x.com/a/b",
            },
            None,
        ),
        (
            {
                "properties": {"p": {"$id": "https://x.com/d/e", "properties": {"b": {"$id": "../f"}}}},
                "$ref": "https://x.com/f",
            },
            None,
        ),
        (
            {"$id": "HTTPS://R.com/x", "$ref": "./y/../%41"},
            _missing("https://r.com/A", "Retrieval is disabled, cannot fetch https://r.com/A"),
        ),
        # A relative $id with no base is named under json-schema:///, and so are references to it.
        (
            {"properties": {"p": {"$id": "foo.json", "type": "string"}}, "$ref": "json-schema:///foo.json"},
            None,
        ),
        (
            {"properties": {"p": {"$id": "foo.json", "$ref": "bar.json"}}},
            _missing("bar.json", "No base URI is available"),
        ),
        ({"$ref": "json-schema:///x#/y"}, _missing("json-schema:///x#/y", "No base URI is available")),
        (
            {"$id": "https://r.com/root", "$ref": "json-schema:///"},
            _missing("json-schema:///", "No base URI is available"),
        ),
        # A base without authority or root path (a URN) resolves nothing relative.
        (
            {"$id": "urn:root", "properties": {"a": {"$ref": "?x"}}},
            _rootless("?x", "urn:root"),
        ),
        ({"$id": "urn:root", "properties": {"a": {"$ref": "#/properties"}}}, None),
        # Pointers and anchors are read in the resource the reference names, and must lead to a schema.
        ({"properties": {"a": {"$id": "urn:a", "$ref": "#/type"}}}, "Pointer '/type' does not exist"),
        ({"type": "object", "$ref": "#/type"}, '"object" is not of types "boolean", "object"'),
        (
            {"required": ["a"], "properties": {"a": {"$ref": "#/required"}}},
            '["a"] is not of types "boolean", "object"',
        ),
        (
            {"$defs": {"a": {"$ref": "#/type"}}, "type": "object", "$ref": "#/$defs/a"},
            '"object" is not of types "boolean", "object"',
        ),
        (
            {"$anchor": "foo", "properties": {"p": {"$id": "https://x.com/a", "$ref": "#foo"}}},
            "Anchor 'foo' does not exist",
        ),
        (
            {
                "properties": {"p": {"$id": "https://x.com/a", "$anchor": "foo"}},
                "$ref": "https://x.com/a#foo",
            },
            None,
        ),
        # ``dependencies`` is compiled but not crawled: its $id and anchors name nothing, its references are first
        # met compiled (against json-schema:///), unless a pointer leads into it, which crawls it then.
        ({"dependencies": {"a": {"$ref": "boolean"}}}, _missing("json-schema:///boolean", _POPULATED)),
        ({"dependencies": {"a": {"$ref": "https://x.com/x"}}}, _missing("https://x.com/x", _POPULATED)),
        (
            {"dependencies": {"a": {"$anchor": "foo"}}, "properties": {"b": {"$ref": "#foo"}}},
            "Anchor 'foo' does not exist",
        ),
        ({"$defs": {"d": {"dependencies": {"a": {"$ref": "boolean"}}}}}, None),
        (
            {"dependencies": {"a": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}},
            _missing("https://json-schema.org/draft/2020-12/schema", _POPULATED),
        ),
        (
            {"properties": {"q": {"$ref": "#/dependencies/a"}}, "dependencies": {"a": {"$ref": "zz"}}},
            _missing("zz", "No base URI is available"),
        ),
        (
            {
                "properties": {"q": {"$ref": "#/dependencies/a"}},
                "dependencies": {"a": {"$ref": "https://json-schema.org/draft/2020-12/schema"}},
            },
            None,
        ),
        # An $id must be a URI reference: checked while crawling, before the root $schema; under
        # ``dependencies`` only once compiled, where it stands.
        (
            {"$schema": "https://x.com/s", "properties": {"a": {"$id": "a b"}}},
            "Invalid URI reference 'a b': unexpected character at index 1",
        ),
        ({"$id": "%zz"}, "Invalid URI reference '%zz': invalid percent-encoded octet at index 0"),
        (
            {"$id": "urn:root", "properties": {"a": {"$id": "b"}}, "$defs": {"x": {"$id": "c d"}}},
            _rootless("b", "urn:root"),
        ),
        ({"type": "object", "x": {"$id": "a b"}, "const": {"$id": "a b"}}, None),
        (
            {"dependencies": {"a": {"$ref": "#/nope", "properties": {"x": {"$id": "a b"}}}}},
            "Pointer '/nope' does not exist",
        ),
        (
            {"dependencies": {"a": {"properties": {"x": {"$id": "a b"}}, "$ref": "#/nope"}}},
            "Invalid URI reference 'a b': unexpected character at index 1",
        ),
        # Compiled subschemas are walked depth first in key order: a reference's target where it stands.
        ({"properties": {"x": {"$ref": "#/a"}}, "$ref": "#/b"}, "Pointer '/a' does not exist"),
        ({"$dynamicRef": "#/b", "$ref": "#/a"}, "Pointer '/b' does not exist"),
        (
            {"$ref": "#/$defs/t", "properties": {"x": {"$ref": "#/a"}}, "$defs": {"t": {"$ref": "#/c"}}},
            "Pointer '/c' does not exist",
        ),
    ],
)
def test_schema_resources_and_bases(schema: dict[str, Any], message: str | None) -> None:
    assert _schema.schema_problem(schema) == message


_D2020 = "https://json-schema.org/draft/2020-12/schema"


def _bad_uri(text: str, index: int, kind: str = "unexpected character") -> str:
    return f"Invalid URI reference '{text}': {kind} at index {index}"


def _unknown(uri: str) -> str:
    return f"Unknown meta-schema: '{uri}'. Custom meta-schemas must be registered in the registry before use"


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        # The crawl reports ids, references and $schema values in document order, a subschema's id first, then its
        # $ref, then its $schema.
        (
            {"$defs": {"A": {"$ref": "//h%zz"}}, "properties": {"p": {"$id": "a%zz"}}},
            _bad_uri("//h%zz", 3, "invalid percent-encoded octet"),
        ),
        (
            {"$defs": {"A": {"$ref": "//h%zz"}}, "properties": {"p": {"$schema": "a%zz"}}},
            _bad_uri("//h%zz", 3, "invalid percent-encoded octet"),
        ),
        ({"properties": {"p": {"$schema": "a b", "$ref": "c d", "$id": "e f"}}}, _bad_uri("e f", 1)),
        ({"properties": {"p": {"$schema": "a b", "$ref": "c d"}}}, _bad_uri("c d", 1)),
        ({"$schema": "a b", "$ref": "c d"}, _bad_uri("c d", 1)),
        (
            {"properties": {"a": {"properties": {"b": {"$ref": "//h%zz"}}}, "c": {"$id": "a%zz"}}},
            _bad_uri("//h%zz", 3, "invalid percent-encoded octet"),
        ),
        ({"properties": {"a": {"$ref": "http://x/y"}, "b": {"$id": "a b"}}}, _bad_uri("a b", 1)),
        ({"$id": "tag:x", "$schema": "y"}, _rootless("y", "tag:x")),
        ({"$id": "tag:x", "properties": {"a": {"$schema": "y"}}}, _rootless("y", "tag:x")),
        # An empty query is part of the URI a reference names.
        ({"$ref": "?"}, _missing("?", "No base URI is available")),
        ({"properties": {"p": {"$ref": "?#"}}}, _missing("?#", "No base URI is available")),
        (
            {"$id": "http://x/y", "properties": {"p": {"$ref": "y?"}}},
            _missing("http://x/y?", "Retrieval is disabled, cannot fetch http://x/y?"),
        ),
        ({"properties": {"p": {"$dynamicRef": "?"}}}, _missing("json-schema:///?", _POPULATED)),
        ({"$defs": {"A": {"$id": "http://q/z?"}}, "properties": {"p": {"$ref": "http://q/z?"}}}, None),
        # Escapes of unreserved characters are decoded before dot segments are removed.
        ({"$defs": {"A": {"$id": "http://q/a/%2e%2e/z"}}, "properties": {"p": {"$ref": "http://q/z"}}}, None),
        ({"$defs": {"A": {"$id": "a/%2E%2E/z"}}, "properties": {"p": {"$ref": "z"}}}, None),
        # One trailing "#" of an id is left out before it is read; what remains of a fragment stays in its name.
        ({"$id": "a b#"}, _bad_uri("a b", 1)),
        ({"properties": {"a": {"$id": "%zz#"}}}, _bad_uri("%zz", 0, "invalid percent-encoded octet")),
        ({"$schema": _D4, "properties": {"p": {"id": "sub##"}, "q": {"id": "sub#a#"}}}, None),
        ({"$schema": _D4, "properties": {"p": {"id": "a b##"}}}, _bad_uri("a b#", 1)),
        ({"$schema": _D4, "properties": {"p": {"id": "a#"}, "q": {"$ref": "a"}}}, None),
        (
            {"$schema": _D4, "properties": {"p": {"id": "a##"}, "q": {"$ref": "a"}}},
            _missing("a", "No base URI is available"),
        ),
        # A reference under the drafts' prefixes (or under a base URI below https://json-schema.org/draft/) is not
        # read while the registry is filled; compiled, it is.
        ({"$defs": {"a": {"$ref": "http://json-schema.org/draft-07/schema#a b"}}}, None),
        ({"$defs": {"a": {"$ref": "https://json-schema.org/draft/2020-12/x y"}}}, None),
        (
            {"properties": {"a": {"$ref": "http://json-schema.org/draft-07/schema#a b"}}},
            _bad_uri("http://json-schema.org/draft-07/schema#a b", 40),
        ),
        (
            {
                "$ref": "http://json-schema.org/draft-07/schema\u00b2",
                "properties": {"p": {"$ref": "http://a/b"}},
            },
            _missing("http://a/b", "Retrieval is disabled, cannot fetch http://a/b"),
        ),
        ({"$id": "https://json-schema.org/draft/x", "$defs": {"a": {"$ref": "a b", "$schema": "c d"}}}, None),
        (
            {"$id": "https://json-schema.org/draft/x", "properties": {"a": {"$ref": "http://a/b"}}},
            _missing("http://a/b", _POPULATED),
        ),
        ({"$id": "https://json-schema.org/draft/x", "$schema": "a b"}, _unknown("a b")),
        # A subschema's $schema that is a fragment alone is not read.
        (
            {
                "properties": {"a": {"$schema": "#a b"}, "b": {"$schema": "##"}},
                "$defs": {"c": {"$schema": "#%zz"}},
            },
            None,
        ),
        # The base URI a reference cannot be resolved against is named without its fragment.
        ({"$schema": _D4, "id": "tag:x#A", "items": {"id": "./x"}}, _rootless("./x", "tag:x")),
        ({"$schema": _D7, "$id": "tag:x#A", "properties": {"a": {"$ref": "y"}}}, _rootless("y", "tag:x")),
        # A root $schema that names no draft is looked up, in its normal form resolved against json-schema:///,
        # among the resources of the document; by a URI under https://json-schema.org/draft/ as written, among the
        # meta-schema documents.
        ({"$schema": "."}, None),
        ({"$schema": "x/.."}, None),
        ({"$schema": "%2e%2e"}, None),
        ({"$schema": "///"}, None),
        ({"$schema": "JSON-SCHEMA:///"}, None),
        ({"$schema": "?"}, _unknown("?")),
        ({"$schema": "//"}, _unknown("//")),
        ({"$id": "http://q/", "$schema": "json-schema:///"}, _unknown("json-schema:///")),
        ({"$id": "http://q/", "$schema": "x"}, _unknown("x")),
        ({"$defs": {"A": {"$id": "z"}}, "$schema": "z"}, None),
        ({"$defs": {"A": {"$id": "HTTP://Q:80/./z"}}, "$schema": "http://q/%7a"}, None),
        ({"$schema": "https://json-schema.org/draft/2020-12/meta/./core"}, None),
        (
            {"$schema": "HTTPS://json-schema.org/draft/2020-12/schema"},
            _unknown("HTTPS://json-schema.org/draft/2020-12/schema"),
        ),
        (
            {
                "$schema": "https://json-schema.org/draft/2020-12/./schema",
                "properties": {"a": {"$ref": "http://json-schema.org/draft-07/schema"}},
            },
            None,
        ),
        (
            {"$schema": ".", "properties": {"a": {"$ref": "http://json-schema.org/draft-07/schema"}}},
            _missing("http://json-schema.org/draft-07/schema", _POPULATED),
        ),
        # A subschema with a $schema is read in the dialect it names (2020-12 when it names no draft), and so is
        # what it holds; a reference's target in its resource's dialect.
        ({"$schema": _D4, "items": {"$schema": _D2020, "$id": "a b"}}, _bad_uri("a b", 1)),
        ({"$schema": _D4, "items": {"$schema": _D2020, "id": "a<"}}, None),
        ({"items": {"$schema": _D4, "id": "a<"}}, _bad_uri("a<", 1)),
        ({"items": {"$schema": _D4, "$id": "a b"}}, None),
        (
            {
                "items": {
                    "$schema": "https://json-schema.org/draft-04/schema",
                    "properties": {"p": {"id": "a<"}},
                }
            },
            _bad_uri("a<", 1),
        ),
        ({"$schema": _D4, "items": {"$schema": "unknown:x", "$id": "a b"}}, _bad_uri("a b", 1)),
        (
            {"$schema": _D7, "items": {"$schema": _D2020, "$dynamicRef": "#/nope"}},
            "Pointer '/nope' does not exist",
        ),
        ({"properties": {"p": {"$schema": _D7, "properties": {"x": {"$dynamicRef": "#/nope"}}}}}, None),
        (
            {
                "$defs": {"A": {"$schema": _D7, "properties": {"x": {"$dynamicRef": "#/nope"}}}},
                "properties": {"p": {"$ref": "#/$defs/A"}},
            },
            "Pointer '/nope' does not exist",
        ),
        (
            {
                "$defs": {"A": {"$schema": _D7, "$id": "http://x/a", "$dynamicRef": "#/nope"}},
                "properties": {"p": {"$ref": "http://x/a"}},
            },
            None,
        ),
        (
            {
                "properties": {
                    "p": {"$schema": _D7, "$ref": "#/$defs/ok", "properties": {"q": {"$ref": "#/nope"}}}
                },
                "$defs": {"ok": {}},
            },
            None,
        ),
        # ... where no vocabularies are in force (a root of the older drafts), one of 2019-09 or 2020-12 compiles its
        # references only; a 2020-12 one compiles no unevaluated keyword where those of 2019-09 are.
        (
            {
                "$schema": _D7,
                "properties": {"p": {"$schema": _D2020, "properties": {"q": {"$ref": "#/nope"}}}},
            },
            None,
        ),
        (
            {"$schema": _D7, "properties": {"p": {"$schema": _D2020, "$ref": "#/nope"}}},
            "Pointer '/nope' does not exist",
        ),
        ({"$schema": _D7, "properties": {"p": {"$schema": _D2020, "pattern": "\\p{Nope}"}}}, None),
        (
            {
                "$schema": _D7,
                "definitions": {
                    "A": {"$schema": _D2020, "$id": "http://x/a", "properties": {"q": {"$ref": "#/nope"}}}
                },
                "properties": {"p": {"$ref": "http://x/a"}},
            },
            "Pointer '/nope' does not exist",
        ),
        (
            {
                "$schema": _D2019,
                "properties": {"p": {"$schema": _D2020, "unevaluatedProperties": {"$ref": "#/nope"}}},
            },
            None,
        ),
        (
            {"$schema": _D2019, "properties": {"p": {"$schema": _D2020, "items": {"$ref": "#/nope"}}}},
            "Pointer '/nope' does not exist",
        ),
        # Draft 7 compiles contentMediaType and contentEncoding as draft 6 does; an $id of 2020-12 keeps its fragment
        # under a root of the older drafts.
        (
            {"$schema": _D6, "properties": {"p": {"$schema": _D7, "contentMediaType": 1}}},
            '1 is not of type "string"',
        ),
        (
            {
                "$schema": _D7,
                "properties": {"a": {"$schema": _D2020, "$id": "http://x/a#f"}, "b": {"$ref": "http://x/a"}},
            },
            _missing("http://x/a", "Retrieval is disabled, cannot fetch http://x/a"),
        ),
    ],
)
def test_schema_uris_as_the_registry_reads_them(schema: dict[str, Any], message: str | None) -> None:
    assert _schema.schema_problem(schema) == message


# -- model, thinking, effort (behavior.md#model-names, behavior.md#thinking-and-effort) ------------------------


def test_resolve_model_lists_names_in_byte_order() -> None:
    options = ConversionOptions().with_model_alias("my-model", "v4.1")
    assert _sampling.resolve_model("my-model", options) == "v4.1"
    with pytest.raises(ConversionError) as info:
        _sampling.resolve_model("zzz", options)
    assert info.value.message == (
        "The supported API model names are DeepSeek-V4-Pro, DeepSeek-V4.1-Flash, my-model, but you passed zzz."
    )
    with pytest.raises(ConversionError, match=r"^The supported API model names are , but you passed zzz\.$"):
        _sampling.resolve_model("zzz", options.with_model_versions_by_name({}))


@pytest.mark.parametrize(
    ("switch", "effort", "default", "expected"),
    [
        ("disabled", "max", True, False),
        ("enabled", "none", False, True),
        ("adaptive", None, False, True),
        (None, "none", True, False),
        (None, "low", False, True),
        (None, None, True, True),
        (None, None, False, False),
    ],
)
def test_resolve_thinking_table(switch: Any, effort: Any, default: bool, expected: bool) -> None:
    assert _sampling.resolve_thinking(switch, effort, default_thinking_mode=default) is expected


@pytest.mark.parametrize(
    ("effort", "expected"),
    [
        (None, "high"),
        ("none", "high"),
        ("minimal", "low"),
        ("low", "low"),
        ("medium", "high"),
        ("high", "high"),
        ("xhigh", "xhigh"),
        ("ultra", "max"),
        ("max", "max"),
    ],
)
def test_resolve_effort_table(effort: Any, expected: str) -> None:
    assert _sampling.resolve_effort(True, effort) == expected
    assert _sampling.resolve_effort(False, effort) is None


# -- sampling (behavior.md#sampling) ---------------------------------------------------------------------------


def test_sampling_ranges() -> None:
    _sampling.check_temperature(0.0)
    _sampling.check_temperature(2.0)
    with pytest.raises(
        ConversionError, match=r"^Invalid temperature value, the valid range of temperature is \[0, 2\]$"
    ):
        _sampling.check_temperature(2.01)
    _sampling.check_top_p(1.0)
    with pytest.raises(
        ConversionError, match=r"^Invalid top_p value, the valid range of top_p is \(0, 1\.0\]$"
    ):
        _sampling.check_top_p(0.0)
    with pytest.raises(ConversionError, match=r"valid range of presence_penalty is \[-2, 2\]"):
        _sampling.check_penalty("presence_penalty", -2.5)
    with pytest.raises(ConversionError, match=r"logprobs must be set to true if top_logprobs is used\.$"):
        _sampling.check_top_logprobs(0, None)
    with pytest.raises(ConversionError, match=r"valid range of top_logprobs is \[0, 20\]\.$"):
        _sampling.check_top_logprobs(21, True)


def test_max_tokens_bound_depends_on_thinking() -> None:
    options = ConversionOptions(thinking_max_tokens_upper_bound=1000, non_thinking_max_tokens_upper_bound=500)
    _sampling.check_max_tokens(1000, thinking=True, options=options)
    with pytest.raises(
        ConversionError, match=r"^Invalid max_tokens value, the valid range of max_tokens is \[1, 500\]$"
    ):
        _sampling.check_max_tokens(501, thinking=False, options=options)
    with pytest.raises(ConversionError, match=r"\[1, 1000\]"):
        _sampling.check_max_tokens(0, thinking=True, options=options)


def test_seed_bound() -> None:
    _sampling.check_seed(2**63 - 1)
    with pytest.raises(
        ConversionError, match=r"^Invalid seed value, the valid range of seed is \[0, 2\^63\)$"
    ):
        _sampling.check_seed(2**63)


def test_stop_rules() -> None:
    _sampling.check_stop(["a", "a"], is_list=True)
    with pytest.raises(ConversionError, match=r"^Stop string array too long: 17$"):
        _sampling.check_stop([str(i) for i in range(17)], is_list=True)
    with pytest.raises(ConversionError, match=r"^Invalid 'stop\[1\]': empty string\. Expected a string"):
        _sampling.check_stop(["a", ""], is_list=True)
    with pytest.raises(ConversionError, match=r"^Invalid 'stop': empty string\."):
        _sampling.check_stop([""], is_list=False)


@pytest.mark.parametrize(
    ("version", "thinking", "requested", "tools", "expected"),
    [
        ("v4", True, 0.5, True, _body.to_f32(0.95)),
        ("v4", True, 0.5, False, 1.0),
        ("v4", False, 0.5, True, 0.5),
        ("v4", False, None, False, 1.0),
        ("v4.1", True, None, False, 1.0),
        ("v4.1", True, 0.5, False, _body.to_f32(0.95)),
        ("v4.1", True, _body.to_f32(0.96), False, _body.to_f32(0.96)),
        ("v4.1", False, 0.5, False, 1.0),
    ],
)
def test_resolve_top_p_table(
    version: Any, thinking: bool, requested: Any, tools: bool, expected: float
) -> None:
    assert _sampling.resolve_top_p(version, thinking, requested, tools_active=tools) == expected


def test_resolve_temperature() -> None:
    assert _sampling.resolve_temperature(True, 0.3) == 1.0
    assert _sampling.resolve_temperature(False, 0.5) == 0.5
    assert _sampling.resolve_temperature(False, None) == 1.0


# -- tools, schemas, constraint (behavior.md#tools-and-tool-choice, behavior.md#json-schemas, behavior.md#output-constraints) ---


def test_tool_name_checks() -> None:
    _tools.validate_tool_names(["get_weather", "a-b_9"])
    with pytest.raises(ConversionError, match=r"^Invalid 'tools\[1\]\.function\.name': empty string\."):
        _tools.validate_tool_names(["ok", ""])
    with pytest.raises(
        ConversionError, match=r"string does not match pattern\. Expected a string that matches"
    ):
        _tools.validate_tool_names(["a b"])
    with pytest.raises(
        ConversionError, match=r"maximum length 128, but got a string with length 129 instead\.$"
    ):
        _tools.validate_tool_names(["x" * 129])
    with pytest.raises(ConversionError, match=r"^Invalid 'tools\[0\]\.name'"):
        _tools.validate_tool_names(["a.b"], path="tools[{i}].name")


def test_stop_length_cap_d16() -> None:
    _sampling.check_stop_lengths(["s" * _sampling.MAX_STOP_LENGTH], field="stop", is_list=True)
    with pytest.raises(ConversionError) as info:
        _sampling.check_stop_lengths(["a", "b", "c", "s" * 5000], field="stop", is_list=True)
    assert info.value.message == (
        "Invalid 'stop[3]': string too long. Expected a string with maximum length 4096, but got a string with "
        "length 5000 instead."
    )
    assert info.value.param == "stop[3]"
    with pytest.raises(ConversionError, match=r"^Invalid 'stop': string too long") as info:
        _sampling.check_stop_lengths(["s" * 4097], field="stop", is_list=False)
    assert info.value.param == "stop"
    with pytest.raises(ConversionError, match=r"^Invalid 'stop_sequences\[0\]': string too long"):
        _sampling.check_stop_lengths(["s" * 4097], field="stop_sequences", is_list=True)


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({}, "schema must be a JSON Schema of 'type: \"object\"', got 'type: null'."),
        (True, "schema must be a JSON Schema of 'type: \"object\"', got 'type: null'."),
        ({"type": "string"}, "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"string\"'."),
        (
            {"type": ["object"]},
            "schema must be a JSON Schema of 'type: \"object\"', got 'type: [\"object\"]'.",
        ),
        ([1], '[1] is not of types "boolean", "object"'),
        ("s", '"s" is not of types "boolean", "object"'),
        ({"type": "object", "required": "a"}, '"a" is not of type "array"'),
        ({"type": "object", "minProperties": -1}, "-1 is less than the minimum of 0"),
        (
            {"type": "object", "properties": {"a": {"type": "bogus"}}},
            "\"bogus\" is not valid under any of the schemas listed in the 'anyOf' keyword",
        ),
        ({"type": "object", "required": ["a", "a"]}, '["a","a"] has non-unique elements'),
        # Uniqueness is checked before the items' type, as the reference does, over any JSON values: numbers by
        # value, booleans apart from numbers, objects member by member in their order.
        ({"type": "object", "required": [1, "x", "x"]}, '[1,"x","x"] has non-unique elements'),
        ({"type": "object", "required": [1.0, 1]}, "[1.0,1] has non-unique elements"),
        ({"type": "object", "required": [[1, [2]], [1, [2]]]}, "[[1,[2]],[1,[2]]] has non-unique elements"),
        ({"type": "object", "required": [True, 1]}, 'true is not of type "string"'),
        (
            {"type": "object", "required": [{"a": 1, "b": 2}, {"b": 2, "a": 1}]},
            '{"a":1,"b":2} is not of type "string"',
        ),
        ({"type": "object", "dependentRequired": {"a": [None, None]}}, "[null,null] has non-unique elements"),
        ({"type": "object", "pattern": "("}, '"(" is not a "regex"'),
        ({"type": "object", "multipleOf": 0}, "0 is less than or equal to the minimum of 0"),
        ({"type": "object", "$ref": "#/x"}, "Pointer '/x' does not exist"),
        # The meta-schema is checked before references are resolved.
        (
            {"type": 1, "properties": {"a": {"$ref": "#/nowhere"}}},
            "1 is not valid under any of the schemas listed in the 'anyOf' keyword",
        ),
    ],
)
def test_function_parameters_validation(parameters: Any, message: str) -> None:
    with pytest.raises(ConversionError) as info:
        _tools.validate_function_parameters("f", parameters)
    assert info.value.message == f"Invalid schema for function 'f': {message}"


def test_function_parameters_accepts_valid_schemas() -> None:
    _tools.validate_function_parameters("f", {"type": "object"})
    _tools.validate_function_parameters(
        "f",
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/x"}},
            "$defs": {"x": {"type": "string"}},
            "maxLength": 1.0,
            "enum": [],
        },
    )


def test_strict_normalisation_examples() -> None:
    schema = {
        "type": "object",
        "x": 1,
        "properties": {"b": {"type": "integer"}, "a": {"type": "string"}},
        "required": ["a", "b"],
    }
    out = _schema.normalize_strict_schema(schema, target="tool")
    assert json.dumps(out) == (
        '{"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "string"}}, '
        '"additionalProperties": false, "required": ["b", "a"]}'
    )
    nested = {
        "type": "object",
        "properties": {
            "a": {
                "type": "array",
                "description": "d",
                "items": {"type": "object", "properties": {"x": {"type": "number", "minimum": 1.5}}},
            },
            "b": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"y": {"type": "string", "format": "uuid", "title": "t"}},
                    },
                    {"type": "null"},
                ]
            },
            "c": {"$ref": "#/$defs/x", "description": "dropped"},
            "d": {"type": ["string", "null"], "enum": ["x"], "description": "kept"},
        },
        "$defs": {"x": {"type": "string"}},
        "description": "root",
    }
    assert _schema.normalize_strict_schema(nested, target="tool") == {
        "type": "object",
        "properties": {
            "a": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"x": {"type": "number", "minimum": 1.5}},
                    "additionalProperties": False,
                    "required": ["x"],
                },
                "description": "d",
            },
            "b": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"y": {"type": "string", "format": "uuid"}},
                        "additionalProperties": False,
                        "required": ["y"],
                    },
                    {"type": "null"},
                ]
            },
            "c": {"$ref": "#/$defs/x"},
            "d": {"type": ["string", "null"], "description": "kept"},
        },
        "additionalProperties": False,
        "required": ["a", "b", "c", "d"],
        "description": "root",
    }


def test_strict_key_order_per_type() -> None:
    schema = {
        "type": "object",
        "properties": {
            "s": {
                "x": 1,
                "enum": ["a"],
                "pattern": "^a",
                "format": "email",
                "description": "d",
                "type": "string",
            },
            "i": {"multipleOf": 1, "default": 1, "type": "integer", "enum": [1], "minimum": 0},
        },
    }
    props = _schema.normalize_strict_schema(schema, target="tool")["properties"]
    assert list(props["s"]) == ["type", "description", "pattern", "format", "enum"]
    assert list(props["i"]) == ["type", "default", "minimum", "multipleOf"]


@pytest.mark.parametrize(
    ("schema", "target", "message"),
    [
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "required": ["a"],
            },
            "tool",
            "Required properties must match all properties in the object",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
            "tool",
            "Required property 'b' not found in object",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]},
            "tool",
            "Duplicate required property 'a'",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
            "tool",
            "additionalProperties should not be true",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {}},
            "tool",
            "Invalid tool parameters schema : invalid type: map, expected a boolean",
        ),
        (
            {"type": ["object", "null"]},
            "tool",
            (
                "Invalid tool parameters schema : field `type`: unknown variant `object`, expected one of `string`, "
                "`number`, `integer`, `boolean`, `null`"
            ),
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "format": "date"}}},
            "tool",
            (
                "Invalid tool parameters schema : unknown variant `date`, expected one of `email`, `hostname`, `ipv4`, "
                "`ipv6`, `uuid`"
            ),
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array"}}},
            "tool",
            "Invalid tool parameters schema : missing field `items`",
        ),
        (
            {"type": "object", "properties": {"a": {}}},
            "tool",
            "Invalid tool parameters schema : one of `type`, `anyOf`, `$ref` field is required",
        ),
        (
            {"type": "object", "properties": {"a": {"anyOf": [{"$ref": "#/x"}]}}},
            "tool",
            "Invalid tool parameters schema : field `anyOf`: missing field `type`",
        ),
        (
            # D11: the reference reads an array member by position (the tag, then the variant's fields) and takes
            # this one as `{"type": "string"}`; dscodec wants an object.
            {"type": "object", "properties": {"a": {"anyOf": [["string", None, None, None, None]]}}},
            "tool",
            (
                "Invalid tool parameters schema : field `anyOf`: invalid type: sequence, expected internally tagged "
                "enum JsonSchemaType"
            ),
        ),
        (
            {"type": "object", "properties": {"a": {"type": "integer", "minimum": 1.5}}},
            "tool",
            "Invalid tool parameters schema : invalid type: floating point `1.5`, expected i64",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "object"}}},
            "tool",
            "An object with no properties is not allowed.",
        ),
        (
            # A type list or an anyOf names a bad description's field (a typed node does not, below); the type
            # list and the members are read first, wherever the description stands.
            {"type": "object", "properties": {"a": {"description": 7, "type": ["string"]}}},
            "tool",
            "Invalid tool parameters schema : field `description`: invalid type: integer `7`, expected a string",
        ),
        (
            {"type": "object", "properties": {"a": {"description": [1], "anyOf": [{"type": "string"}]}}},
            "response_format",
            "Invalid json schema: field `description`: invalid type: sequence, expected a string",
        ),
        (
            {"type": "object", "properties": {"a": {"description": 7, "type": [5]}}},
            "tool",
            "Invalid tool parameters schema : field `type`: invalid type: integer `5`, expected string or map",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "description": 7}}},
            "tool",
            "Invalid tool parameters schema : invalid type: integer `7`, expected a string",
        ),
        ({"type": "string"}, "tool", "The top level of the function parameters schema must be an object."),
        ({"type": "string"}, "response_format", "The top level of the json schema must be an object."),
        ({"type": "object"}, "response_format", "An object with no properties is not allowed."),
        ([1], "response_format", "Invalid json schema: one of `type`, `anyOf`, `$ref` field is required"),
    ],
)
def test_strict_normalisation_errors(schema: Any, target: Any, message: str) -> None:
    with pytest.raises(ConversionError) as info:
        _schema.normalize_strict_schema(schema, target=target)
    assert info.value.message == message


def test_strict_root_without_properties_is_fine_for_tools() -> None:
    assert _schema.normalize_strict_schema({"type": "object"}, target="tool") == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "required": [],
    }


def test_strict_children_are_checked_before_parents() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": True}
        },
        "required": ["zz"],
    }
    with pytest.raises(ConversionError, match="^additionalProperties should not be true$"):
        _schema.normalize_strict_schema(schema, target="tool")


def test_tool_call_constraint_json() -> None:
    tools = [
        ToolDefinition(name="f", parameters={}),
        ToolDefinition(
            name="g", description="é", parameters={"type": "object"}, strict=True, defer_loading=True
        ),
    ]
    constraint = _constraints.tool_call_constraint(tools, required=False)
    assert constraint.kind == "tool_call"
    assert constraint.schema == (
        '[{"type":"function","function":{"name":"f","description":null,"parameters":{},"strict":null}},'
        '{"type":"function","function":{"name":"g","description":"é","parameters":{"type":"object"},"strict":true},'
        '"defer_loading":true}]'
    )
    assert _constraints.tool_call_constraint(tools, required=True).kind == "tool_call_required"


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["Reply in JSON"], True),
        (["jsonl please"], True),
        (["a", "Json"], True),
        (["ＪＳＯＮ"], False),
        ([], False),
    ],
)
def test_contains_json_word(texts: list[str], expected: bool) -> None:
    assert _constraints.contains_json_word(texts) is expected


# -- images (behavior.md#chat-content-parts) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://x/a.png", "url"),
        ("HTTPS://x", "url"),
        ("http", "url"),
        ("data:image/png;base64,AAAA", "data_url"),
        ("DATA:image/jpeg;base64,/9j/", "data_url"),
        ("data:image/png;base64,", "data_url"),
        ("data:image/png; base64,AA", "data_url"),
        ("data: image/webp;charset=x;base64,A A\n==", "data_url"),
        ("data:image/png;base64,AB", "data_url"),
        ("data:image/png;base64,%41%41", "data_url"),
        ("data:image/png;base64,AA#fragment", "data_url"),
        ("\x0bdata:image/png;base64,AA", "data_url"),
    ],
)
def test_image_urls_accepted(url: str, kind: str) -> None:
    check = _images.image_source_for_url(url, detail="low", path=".messages[3]")
    assert check.error is None
    assert check.source is not None
    assert (check.source.kind, check.source.url, check.source.detail, check.source.path) == (
        kind,
        url,
        "low",
        ".messages[3]",
    )


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("ftp://x", "Unsupported image_url format"),
        ("", "Unsupported image_url format"),
        ("  http://a", "Unsupported image_url format"),
        ("data:image/png,AA", "Unsupported image_url format"),
        ("data:image/png;BASE64,AA", "Unsupported image_url format"),
        (
            "data:image/bmp;base64,AA",
            (
                "You have uploaded an unsupported image. Please make sure your image is "
                "valid and has one of the following formats: webp, png, jpeg, and gif."
            ),
        ),
        (
            "data:;base64,AA",
            (
                "You have uploaded an unsupported image. Please make sure your image is valid and has "
                "one of the following formats: webp, png, jpeg, and gif."
            ),
        ),
        ("data:image/png;base64,A", "Invalid base64 data"),
        ("data:image/png;base64,AA=", "Invalid base64 data"),
        ("data:image/png;base64,-_", "Invalid base64 data"),
        ("data:image/png;base64,AA,BB", "Invalid base64 data"),
        ("data:image/png;base64,A\u00a0A", "Invalid base64 data"),
    ],
)
def test_image_urls_refused(url: str, error: str) -> None:
    check = _images.image_source_for_url(url, detail="high", path="p")
    assert check.source is None
    assert check.error == error


def test_file_data_problems() -> None:
    assert _images.file_data_problem("data:image/png;base64,AA") is None
    assert _images.file_data_problem("http://x") == "file_data is not a valid base64 data url"
    assert _images.file_data_problem("data:image/png;base64,!!") == "file_data is not a valid base64 data url"
    assert _images.file_data_problem("data:text/plain;base64,!!") == (
        "You have uploaded an unsupported file. Please make sure your file is valid and has one of the following "
        "formats: webp, png, jpeg, and gif."
    )
    # Not base64: accepted as a file, then refused as an image URL.
    assert _images.file_data_problem("data:image/png,AA") is None


# -- error bodies ---------------------------------------------------------------------------------------------


def test_openai_error_body_key_order() -> None:
    body = openai_error_body(ConversionError('bad "x"'))
    assert json.dumps(body, separators=(",", ":")) == (
        '{"error":{"message":"bad \\"x\\"","type":"invalid_request_error","param":null,'
        '"code":"invalid_request_error"}}'
    )
    assert openai_error_body(ConversionError("m", param="messages[0].content"))["error"]["param"] == (
        "messages[0].content"
    )


@pytest.mark.parametrize(
    ("status", "name"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (402, "billing_error"),
        (413, "invalid_request_error"),  # the anthropic SDK's ErrorResponse has no type of its own for 413
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
        (502, "api_error"),
        (504, "timeout_error"),
    ],
)
def test_anthropic_error_body_types(status: int, name: str) -> None:
    error_class = type("E", (ConversionError,), {"status_code": status})
    body = anthropic_error_body(error_class("boom"))
    assert body == {"type": "error", "error": {"type": name, "message": "boom"}}
    assert list(body["error"]) == ["type", "message"]
    ErrorResponse.model_validate(body, strict=True)


def test_schema_problems_are_remembered_by_their_json_text() -> None:
    from dscodec._memo import Memo

    memo: Memo[bytes, str | None] = Memo(entries=2, longest=200)

    def problem(schema: Any) -> str | None:
        return _tools.remembered_schema_problem(schema, memo)

    good = {"type": "object", "properties": {"a": {"type": "string"}}}
    bad = {"type": "object", "properties": {"a": {"type": "strin"}}}
    assert problem(good) is None
    assert problem(bad) == _schema.schema_problem(bad) is not None
    assert len(memo.found) == 2
    # Equal values give the same key; values JSON tells apart do not (1 and 1.0, key order).
    assert problem(json.loads(json.dumps(good))) is None and len(memo.found) == 2
    memo.found[json.dumps(good, separators=(",", ":")).encode()] = "remembered"
    assert problem(good) == "remembered"  # the answer comes from the memo
    assert problem({"properties": {"a": {"type": "string"}}, "type": "object"}) is None
    assert len(memo.found) == 1  # the limit of 2 emptied it first
    assert problem({"type": "object", "description": "x" * 300}) is None
    assert len(memo.found) == 1  # too long to keep
    with pytest.raises(ConversionError, match="Invalid schema for function 'f'"):
        _tools.validate_function_parameters("f", bad)


def test_a_json_schema_response_format_shares_the_schema_memo() -> None:
    schema = {"type": "object", "properties": {"memo_probe": {"type": "string"}}}
    key = json.dumps(schema, separators=(",", ":")).encode()
    _tools._SCHEMAS.found.pop(key, None)
    constraint = _constraints.json_schema_constraint(schema, strict=None)
    assert constraint.schema == json.dumps(schema, separators=(",", ":"))
    assert _tools._SCHEMAS.found[key] is None  # checked once, remembered as fine
    try:
        _tools._SCHEMAS.found[key] = "remembered"
        with pytest.raises(ConversionError, match="^Invalid json schema: remembered$"):
            _constraints.json_schema_constraint(schema, strict=False)
    finally:
        _tools._SCHEMAS.found.pop(key, None)


def test_strict_schemas_are_remembered_by_target_and_json_text() -> None:
    from dscodec._memo import Memo

    memo: Memo[tuple[str, bytes], bytes | str] = Memo(entries=8, longest=1000)

    def strict(schema: Any, target: Any = "tool") -> dict[str, Any]:
        return _tools.remembered_strict_schema(schema, target=target, memo=memo)

    good = {"type": "object", "properties": {"n": {"type": "number", "minimum": 1.5, "const": 2}}}
    first = strict(good)
    assert first == _schema.normalize_strict_schema(good, target="tool")
    again = strict(good)  # from the memo: equal, in the same key order and number types, but a copy
    assert again == first and again is not first
    assert json.dumps(again) == json.dumps(first)
    assert (
        type(again["properties"]["n"]["const"]) is int and type(again["properties"]["n"]["minimum"]) is float
    )
    again["properties"]["n"]["const"] = 99  # a caller changing its copy changes nothing remembered
    assert strict(good) == first
    assert len(memo.found) == 1
    # A failure is remembered by its message, per target (the messages differ).
    bad = {"type": "object", "properties": {"a": {"type": "strin"}}}
    for target in ("tool", "response_format"):
        with pytest.raises(ConversionError) as fresh:
            _schema.normalize_strict_schema(bad, target=target)
        for _ in range(2):
            with pytest.raises(ConversionError) as remembered:
                strict(bad, target)
            assert type(remembered.value) is ConversionError
            assert (remembered.value.message, remembered.value.param) == (fresh.value.message, None)
    assert len(memo.found) == 3
    empty = {"type": "object", "properties": {}}
    assert strict(empty) == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "required": [],
    }
    with pytest.raises(ConversionError, match="no properties"):
        strict(empty, "response_format")
    # Not plain JSON: normalised each time, not remembered.
    assert strict({"type": "object", "properties": {"a": {"type": "string", "description": "\ud800"}}})
    assert len(memo.found) == 5


def test_strict_number_and_integer_nodes_keep_const_after_the_description() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"const": 1.5, "minimum": 0, "type": "number", "description": "d"},
            "i": {"type": "integer", "const": -3},
            "s": {"type": "string", "const": "a"},
            "b": {"type": "boolean", "const": True},
        },
    }
    out = _schema.normalize_strict_schema(schema, target="tool")
    assert list(out["properties"]["n"].items()) == [
        ("type", "number"),
        ("description", "d"),
        ("const", 1.5),
        ("minimum", 0),
    ]
    assert out["properties"]["i"] == {"type": "integer", "const": -3}
    assert out["properties"]["s"] == {"type": "string"}  # other types drop it
    assert out["properties"]["b"] == {"type": "boolean"}


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"type": "integer", "const": 2.5}, "invalid type: floating point `2.5`, expected i64"),
        ({"type": "number", "const": "x"}, 'invalid type: string "x", expected a JSON number'),
        # Document order: the first bad keyword is reported.
        ({"type": "integer", "minimum": "y", "const": "x"}, 'invalid type: string "y", expected i64'),
    ],
)
def test_strict_const_must_be_a_number_of_the_nodes_type(node: Any, message: str) -> None:
    with pytest.raises(ConversionError) as info:
        _schema.normalize_strict_schema({"type": "object", "properties": {"a": node}}, target="tool")
    assert info.value.message == f"Invalid tool parameters schema : {message}"
