"""Unit tests of how a non-strict schema's registry is filled and its subschemas compiled
(``dscodec.protocols._schema``; behavior.md#json-schemas): which of two resources or anchors of one name wins,
the order keywords are compiled in, the values compiling checks, the vocabularies in force, and the bases of a
relative root id. The golden cases record single examples; these vary the shapes."""

from __future__ import annotations

from typing import Any

import pytest

from dscodec.protocols import _schema

D7 = "http://json-schema.org/draft-07/schema#"
D2019 = "https://json-schema.org/draft/2019-09/schema"
D2020 = "https://json-schema.org/draft/2020-12/schema"


_LOOKED_UP = _schema._LOOKED_UP
_WALKED = _schema._WALKED


def _missing(pointer: str) -> str:
    return f"Pointer '{pointer}' does not exist"


# -- resources and anchors named twice -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("defs", "winner"),
    [
        # Siblings: the later wins.
        ({"a": {"$id": "X", "$ref": "#/n1"}, "b": {"$id": "X", "$ref": "#/n2"}}, "/n2"),
        ({"b": {"$id": "X", "$ref": "#/n2"}, "a": {"$id": "X", "$ref": "#/n1"}}, "/n1"),
        # A resource deeper in a later sibling wins over an earlier one, and the other way round.
        ({"a": {"$id": "X", "$ref": "#/n1"}, "b": {"$defs": {"d": {"$id": "X", "$ref": "#/n2"}}}}, "/n2"),
        ({"a": {"$defs": {"d": {"$id": "X", "$ref": "#/n2"}}}, "b": {"$id": "X", "$ref": "#/n1"}}, "/n1"),
        # The resource holding another of its name wins, however deep that one is.
        (
            {
                "a": {
                    "$id": "X",
                    "$ref": "#/n1",
                    "$defs": {"c": {"$defs": {"d": {"$id": "X", "$ref": "#/n2"}}}},
                }
            },
            "/n1",
        ),
    ],
)
def test_duplicate_resources(defs: dict[str, Any], winner: str) -> None:
    assert _schema.schema_problem({"type": "object", "$ref": "X", "$defs": defs}) == _missing(winner)


@pytest.mark.parametrize(
    ("schema", "winner"),
    [
        ({"allOf": [{"$anchor": "x", "$ref": "#/n1"}, {"$anchor": "x", "$ref": "#/n2"}]}, "/n2"),
        ({"items": {"$anchor": "x", "$ref": "#/n2"}, "allOf": [{"$anchor": "x", "$ref": "#/n1"}]}, "/n1"),
        # Unlike a resource, an inner anchor wins over the one holding it.
        (
            {
                "$defs": {
                    "a": {"$anchor": "x", "$ref": "#/n1", "$defs": {"c": {"$anchor": "x", "$ref": "#/n2"}}}
                }
            },
            "/n2",
        ),
        # A later sibling wins over one deeper in an earlier sibling.
        (
            {
                "$defs": {
                    "a": {"$defs": {"c": {"$anchor": "x", "$ref": "#/n1"}}},
                    "b": {"$anchor": "x", "$ref": "#/n2"},
                }
            },
            "/n2",
        ),
        # $dynamicAnchor and $anchor name the same anchors.
        (
            {"$defs": {"a": {"$anchor": "x", "$ref": "#/n1"}, "b": {"$dynamicAnchor": "x", "$ref": "#/n2"}}},
            "/n2",
        ),
    ],
)
def test_duplicate_anchors(schema: dict[str, Any], winner: str) -> None:
    assert _schema.schema_problem({"type": "object", "$ref": "#x", **schema}) == _missing(winner)


def test_a_later_crawl_leaves_what_the_first_registered() -> None:
    # The subschema under `dependencies` is crawled only once a reference leads there; $defs/b keeps X.
    schema = {
        "type": "object",
        "$ref": "#/dependencies/a",
        "dependencies": {"a": {"$id": "X"}},
        "allOf": [{"$ref": "X"}],
        "$defs": {"b": {"$id": "X", "$ref": "#/n2"}},
    }
    assert _schema.schema_problem(schema) == _missing("/n2")


# -- compile order ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "order"),
    [
        (["then", "type", "if"], ["type", "if", "then"]),
        (["else", "then", "$ref", "if"], ["$ref", "if", "then", "else"]),
        (["then", "else"], ["then", "else"]),  # no `if`: each where it stands (neither is compiled)
        (["properties", "$ref", "additionalProperties"], ["$ref", "properties", "additionalProperties"]),
        (
            ["additionalProperties", "properties", "patternProperties"],
            ["patternProperties", "additionalProperties", "properties"],
        ),
        (["additionalProperties", "properties"], ["properties", "additionalProperties"]),
        (["properties", "patternProperties"], ["properties", "patternProperties"]),
        (
            [
                "unevaluatedProperties",
                "$ref",
                "properties",
                "allOf",
                "patternProperties",
                "additionalProperties",
            ],
            [
                "additionalProperties",
                "patternProperties",
                "unevaluatedProperties",
                _WALKED + "unevaluatedProperties\x00allOf",  # compiled, then each item walked
                _LOOKED_UP + "unevaluatedProperties\x00$ref",
                "$ref",  # looked up by unevaluatedProperties, compiled where it stands
                "allOf",  # compiled already (but a value the walk passed over)
                "properties",
            ],
        ),
        (
            ["unevaluatedItems", "allOf", "if", "then", "$ref", "contains", "items"],
            [
                "unevaluatedItems",
                "contains",
                _LOOKED_UP + "unevaluatedItems\x00$ref",
                _WALKED + "unevaluatedItems\x00if",
                _LOOKED_UP + "unevaluatedItems\x00then",
                _WALKED + "unevaluatedItems\x00allOf",
                "allOf",
                "if",
                "then",  # at the place of `if`
                "$ref",
                "items",
            ],
        ),
    ],
)
def test_compile_order(keys: list[str], order: list[str]) -> None:
    assert list(_schema._compile_order({key: {} for key in keys}, _schema._DRAFT_2020)) == order


@pytest.mark.parametrize(
    ("node", "order"),
    [
        # `additionalProperties: false` compiles no schema: the patterns, then the properties.
        (
            {"additionalProperties": False, "not": {}, "properties": {}, "patternProperties": {}},
            ["patternProperties", "properties", "additionalProperties", "not"],
        ),
        # `additionalProperties: true` compiles no schema, leaves `properties` where it stands, and compiles the
        # patterns at the first of its own place and theirs.
        ({"additionalProperties": True, "not": {}, "properties": {}}, ["not", "properties"]),
        (
            {"additionalProperties": True, "not": {}, "patternProperties": {}},
            ["patternProperties", "not"],
        ),
        (
            {"patternProperties": {}, "not": {}, "additionalProperties": True},
            ["patternProperties", "not"],
        ),
        # An unevaluated keyword set to `true` compiles nothing, so nothing moves forward (a lone `if` compiles
        # nothing where it stands).
        ({"unevaluatedProperties": True, "not": {}, "$ref": "#", "if": {}}, ["not", "$ref", "if"]),
        ({"unevaluatedItems": True, "propertyNames": {}, "$ref": "#"}, ["propertyNames", "$ref"]),
        # Beside a boolean `if`, an unevaluated keyword leaves `if`, `then` and `else` where `if` stands.
        (
            {"unevaluatedProperties": False, "not": {}, "then": {}, "if": False, "allOf": []},
            [
                "unevaluatedProperties",
                _WALKED + "unevaluatedProperties\x00allOf",
                "not",
                "if",
                "then",
                "allOf",
            ],
        ),
        (
            {"unevaluatedItems": {}, "not": {}, "else": {}, "if": True},
            ["unevaluatedItems", "not", "if", "else"],
        ),
        # A lone `if` compiles nothing where it stands: only the unevaluated keyword compiles (and walks) it.
        (
            {"unevaluatedItems": {}, "not": {}, "if": {}},
            ["unevaluatedItems", _WALKED + "unevaluatedItems\x00if", "not", "if"],
        ),
    ],
)
def test_compile_order_by_value(node: dict[str, object], order: list[str]) -> None:
    assert list(_schema._compile_order(node, _schema._DRAFT_2020)) == order


def test_compile_order_without_unevaluated_keywords_in_the_dialect() -> None:
    """Drafts 4 to 7 have no unevaluated keywords: what those would compile first keeps its key order."""
    keys = dict.fromkeys(["unevaluatedItems", "not", "contains", "if", "then"])
    assert list(_schema._compile_order(keys, _schema._DRAFTS["7"])) == [
        "unevaluatedItems",
        "not",
        "contains",
        "if",
        "then",
    ]


@pytest.mark.parametrize("draft", [D7, D2019, D2020, "http://json-schema.org/draft-04/schema#"])
def test_additional_properties_compiles_the_properties_first_in_every_draft(draft: str) -> None:
    schema = {
        "$schema": draft,
        "type": "object",
        "additionalProperties": {"$ref": "#/a"},
        "properties": {"p": {"$ref": "#/p"}},
    }
    assert _schema.schema_problem(schema) == _missing("/p")


def test_2019_unevaluated_resolves_dynamic_refs_after_compiling_what_it_applies() -> None:
    schema = {
        "$schema": D2019,
        "type": "object",
        "allOf": [{"$dynamicRef": "#/d"}],
        "unevaluatedProperties": {"$ref": "#/u"},
    }
    assert _schema.schema_problem(schema) == _missing("/u")
    schema["unevaluatedProperties"] = {}
    assert _schema.schema_problem(schema) == _missing("/d")


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        # A fragment alone is looked up as written: no URI syntax check.
        ({"unevaluatedItems": {}, "$ref": "#/{"}, _missing("/{")),
        ({"unevaluatedItems": False, "$ref": "#/a b"}, _missing("/a b")),
        ({"unevaluatedProperties": {}, "$dynamicRef": "#é"}, "Anchor 'é' does not exist"),
        ({"unevaluatedProperties": {}, "$ref": "#%zz"}, "Anchor '%zz' does not exist"),
        ({"unevaluatedProperties": {}, "$ref": "##"}, "Anchor '#' does not exist"),
        ({"unevaluatedProperties": {}, "$dynamicRef": "#a#b"}, "Anchor 'a#b' does not exist"),
        ({"$schema": D2020, "unevaluatedProperties": {}, "$ref": "#/%zz"}, _missing("/%zz")),
        # Otherwise cut at the last `#`: only the part before it is read as a URI reference.
        (
            {"unevaluatedProperties": {}, "$dynamicRef": "a b#x"},
            "Invalid URI reference 'a b': unexpected character at index 1",
        ),
        (
            {"unevaluatedProperties": {}, "$dynamicRef": "x#a#b"},
            (
                "Resource 'json-schema:///x#a' is not present in a registry and retrieving it failed: Retrieving "
                "external resources is not supported once the registry is populated"
            ),
        ),
        (
            {"unevaluatedProperties": {}, "$dynamicRef": "sub#a b", "$defs": {"x": {"$id": "sub"}}},
            "Anchor 'a b' does not exist",
        ),
        # Any keyword before it, and both unevaluated keywords (one set to `true` looks nothing up).
        ({"type": "object", "not": {}, "unevaluatedProperties": {}, "$ref": "#/{"}, _missing("/{")),
        ({"unevaluatedProperties": True, "unevaluatedItems": {}, "$ref": "#/{"}, _missing("/{")),
        # The subschema a reference leads to, or one of dependentSchemas, is looked at the same way, ...
        ({"unevaluatedItems": {}, "$ref": "#/$defs/x", "$defs": {"x": {"$ref": "#/{"}}}, _missing("/{")),
        ({"unevaluatedProperties": {}, "dependentSchemas": {"a": {"$ref": "#/{"}}}, _missing("/{")),
        ({"properties": {"p": {"unevaluatedItems": {}, "$ref": "#/{"}}}, _missing("/{")),
        # ... with the keywords that apply a schema there compiled, the reference's own last.
        (
            {
                "unevaluatedProperties": {},
                "$ref": "#/$defs/x",
                "$defs": {"x": {"$ref": "#/n", "allOf": [{"$ref": "#/{"}]}},
            },
            "Invalid URI reference '#/{': unexpected character at index 2",
        ),
        # What it reaches is not compiled there: a `not` waits for the reference's own compilation.
        (
            {
                "unevaluatedProperties": {},
                "not": {"$ref": "#/n"},
                "$ref": "#/$defs/x",
                "$defs": {"x": {"not": {"$ref": "#/m"}}},
            },
            _missing("/n"),
        ),
        # `then` and `else` beside an `if` are walked the same way, and compiled at the place of the `if`.
        ({"unevaluatedProperties": {}, "if": {}, "then": {"$ref": "#/{"}}, _missing("/{")),
        ({"unevaluatedItems": {}, "if": {}, "else": {"$ref": "#/{"}}, _missing("/{")),
        (
            {"unevaluatedProperties": {}, "then": {"not": {"$ref": "#/m"}}, "not": {"$ref": "#/n"}, "if": {}},
            _missing("/n"),
        ),
        (
            {"unevaluatedProperties": {}, "if": {}, "not": {"$ref": "#/n"}, "then": {"not": {"$ref": "#/m"}}},
            _missing("/m"),
        ),
        (
            {"unevaluatedProperties": {}, "then": {"$ref": "#/{"}},
            None,
        ),  # no `if`: neither walked nor compiled
        # `if` itself is compiled by the unevaluated keyword.
        (
            {
                "unevaluatedProperties": {},
                "if": {"$ref": "#/$defs/a b"},
                "then": {"$ref": "#/n"},
                "$defs": {"a b": {}},
            },
            "Invalid URI reference '#/$defs/a b': unexpected character at index 9",
        ),
        # A reference looked up fine is read in full where it stands, after what comes before it.
        (
            {
                "unevaluatedProperties": {},
                "not": {"$ref": "#/n"},
                "$ref": "#/$defs/a b",
                "$defs": {"a b": {}},
            },
            _missing("/n"),
        ),
        (
            {"unevaluatedProperties": {}, "$ref": "#/$defs/a b", "$defs": {"a b": {}}},
            "Invalid URI reference '#/$defs/a b': unexpected character at index 9",
        ),
        # A reference first, or inside allOf, is compiled before any look-up.
        (
            {"$ref": "#/{", "unevaluatedItems": {}},
            "Invalid URI reference '#/{': unexpected character at index 2",
        ),
        (
            {"unevaluatedItems": {}, "allOf": [{"$ref": "#/{"}]},
            "Invalid URI reference '#/{': unexpected character at index 2",
        ),
        (
            {"unevaluatedItems": True, "$ref": "#/{"},
            "Invalid URI reference '#/{': unexpected character at index 2",
        ),
    ],
)
def test_an_unevaluated_keyword_looks_references_up_without_reading_them(
    schema: dict[str, Any], problem: str | None
) -> None:
    assert _schema.schema_problem(schema) == problem


@pytest.mark.parametrize("dialect", [D2019, D2020])
@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        # 2019-09 looks references up as 2020-12 does, a $dynamicRef (no keyword of its own) included.
        ({"unevaluatedProperties": {}, "$ref": "#/{"}, _missing("/{")),
        ({"unevaluatedItems": False, "$ref": "#a b"}, "Anchor 'a b' does not exist"),
        ({"unevaluatedProperties": {}, "$dynamicRef": "#/{"}, _missing("/{")),
        (
            {"unevaluatedProperties": {}, "$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/%zz"}}},
            _missing("/%zz"),
        ),
        ({"unevaluatedItems": {}, "if": {}, "then": {"$ref": "#/{"}}, _missing("/{")),
        ({"unevaluatedProperties": {}, "dependentSchemas": {"a": {"$ref": "#/{"}}}, _missing("/{")),
        # Looked up in its group, compiled where it stands.
        (
            {
                "unevaluatedProperties": {},
                "not": {"$ref": "#/n"},
                "$ref": "#/$defs/a b",
                "$defs": {"a b": {}},
            },
            _missing("/n"),
        ),
        # What an in-place applicator holds is compiled, then walked: a lone `if` there is compiled.
        ({"unevaluatedProperties": {}, "allOf": [{"if": {"$ref": "#/a"}}]}, _missing("/a")),
        ({"unevaluatedItems": {}, "anyOf": [{"allOf": [{"if": {"pattern": "("}}]}]}, '"(" is not a "regex"'),
        ({"unevaluatedProperties": {}, "if": {"if": {"$ref": "#/a"}}, "then": {}}, _missing("/a")),
        (
            {"unevaluatedProperties": {}, "dependentSchemas": {"x": {"if": {"pattern": "("}}}},
            '"(" is not a "regex"',
        ),
        # ... each item before the next is compiled.
        ({"unevaluatedProperties": {}, "allOf": [{"if": {"$ref": "#/a"}}, {"$ref": "#/b"}]}, _missing("/a")),
        # unevaluatedItems walks no dependentSchemas, nor `true` anything.
        ({"unevaluatedItems": {}, "dependentSchemas": {"x": {"if": {"pattern": "("}}}}, None),
        ({"unevaluatedProperties": True, "allOf": [{"if": {"$ref": "#/a"}}]}, None),
        # A compiled item's own references are read in full first.
        (
            {"unevaluatedProperties": {}, "allOf": [{"$ref": "#/{"}]},
            "Invalid URI reference '#/{': unexpected character at index 2",
        ),
    ],
)
def test_unevaluated_keywords_walk_alike_in_2019_and_2020(
    dialect: str, schema: dict[str, Any], problem: str | None
) -> None:
    assert _schema.schema_problem({"$schema": dialect, "type": "object", **schema}) == problem


@pytest.mark.parametrize(
    ("dialect", "problem"),
    [(D2019, _missing("/{")), (D2020, "Invalid URI reference '#/{': unexpected character at index 2")],
)
def test_a_2019_walk_looks_up_the_dynamic_refs_it_does_not_compile(dialect: str, problem: str) -> None:
    schema = {"$schema": dialect, "type": "object", "unevaluatedItems": {}, "allOf": [{"$dynamicRef": "#/{"}]}
    assert _schema.schema_problem(schema) == problem


def test_a_reference_cycle_under_an_unevaluated_keyword_is_walked_once() -> None:
    schema = {
        "type": "object",
        "unevaluatedProperties": {},
        "$ref": "#/$defs/x",
        "$defs": {"x": {"dependentSchemas": {"a": {"$ref": "#/$defs/x"}}, "$ref": "#"}},
    }
    assert _schema.schema_problem(schema) is None


# -- values compiling checks -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ({"$ref": {}}, '{} is not of type "string"'),
        ({"$dynamicRef": 1}, '1 is not of type "string"'),
        ({"$recursiveRef": 1}, None),  # no keyword of 2020-12
        ({"contains": 5}, '5 is not of types "boolean", "object"'),
        ({"if": 5, "then": {}}, '5 is not of types "boolean", "object"'),
        ({"if": 5}, None),  # not compiled without `then` or `else`
        ({"allOf": 5}, '5 is not of type "array"'),
        ({"allOf": []}, None),
        ({"prefixItems": [5]}, '5 is not of types "boolean", "object"'),
        ({"items": [5]}, '5 is not of types "boolean", "object"'),
        ({"items": 5}, None),
        ({"properties": {"a": 5}}, '5 is not of types "boolean", "object"'),
        ({"dependencies": {"a": ["b"], "c": 5}}, '5 is not of types "boolean", "object"'),
        ({"minLength": -1}, "-1 is less than the minimum of 0"),
        ({"maxItems": 1.5}, '1.5 is not of type "integer"'),
        ({"multipleOf": 0}, None),
        ({"required": [1]}, '1 is not of type "string"'),
        ({"type": 5}, '5 is not of types "string", "array"'),
        ({"type": "foo"}, "Unexpected type"),
        ({"propertyNames": 5, "uniqueItems": 5, "minContains": "x", "$id": 5, "$anchor": 5}, None),
    ],
)
def test_compiled_values_under_a_keyword_the_meta_schema_does_not_know(
    target: dict[str, Any], message: str | None
) -> None:
    schema = {"type": "object", "allOf": [{"$ref": "#/foo"}], "foo": target}
    assert _schema.schema_problem(schema) == message


def test_compiled_values_follow_the_vocabularies_in_force() -> None:
    # Under a draft-04 root (whose meta-schema knows neither $ref nor contains) a 2020-12 subschema compiles its
    # references only; a draft-07 one compiles contains too.
    sub: dict[str, Any] = {"$schema": D2020, "contains": {"minLength": "x"}, "$ref": {}}
    root = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "items": sub}
    assert _schema.schema_problem(root) == '{} is not of type "string"'
    del sub["$ref"]
    assert _schema.schema_problem(root) is None
    sub["$schema"] = D7
    assert _schema.schema_problem(root) == '"x" is not of type "integer"'


# -- vocabularies in force -------------------------------------------------------------------------------------

_META = "https://json-schema.org/draft/2020-12/meta/"
_VOCAB = "https://json-schema.org/draft/2020-12/vocab/"


@pytest.mark.parametrize(
    ("meta", "problem"),
    [
        (_META + "core", "$ref"),
        (_META + "applicator", "properties"),
        (_META + "validation", "pattern"),
        (_META + "unevaluated", "$ref"),
        ("https://json-schema.org/draft/2019-09/meta/applicator", "properties"),
    ],
)
def test_a_vocabulary_meta_schema_compiles_its_vocabulary(meta: str, problem: str) -> None:
    messages = {"$ref": _missing("/r"), "properties": _missing("/p"), "pattern": '"(" is not a "regex"'}
    schema = {"$schema": meta, "type": "object", "pattern": "(", "properties": {"a": {"$ref": "#/p"}}}
    assert _schema.schema_problem(schema) == (messages[problem] if problem != "$ref" else None)
    assert _schema.schema_problem({"$ref": "#/r", **schema}) == messages["$ref"]


@pytest.mark.parametrize(
    ("vocabulary", "message"),
    [
        ({_VOCAB + "core": True}, None),
        ({_VOCAB + "applicator": True}, _missing("/p")),
        ({_VOCAB + "applicator": False}, None),
        ({}, None),
        ({"https://example.com/v": False}, None),
        (
            {"https://example.com/v": True},
            (
                "Unknown vocabulary: 'https://example.com/v' is required by the meta-schema. Adjust configuration "
                "to declare support for it"
            ),
        ),
    ],
)
def test_a_meta_schema_of_the_document_puts_its_vocabularies_in_force(
    vocabulary: dict[str, bool], message: str | None
) -> None:
    schema = {
        "$schema": "m",
        "type": "object",
        "properties": {"a": {"$ref": "#/p"}},
        "$defs": {"m": {"$id": "m", "$vocabulary": vocabulary}},
    }
    assert _schema.schema_problem(schema) == message
    del schema["$defs"]["m"]["$vocabulary"]  # type: ignore[index]
    assert _schema.schema_problem(schema) == _missing("/p")


# -- URIs ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("[0:0::1]", "[::1]"),
        ("[2001:DB8:0:0:0:0:0:1]", "[2001:db8::1]"),
        ("[1:0:0:2:0:0:3:4]", "[1::2:0:0:3:4]"),  # the first of two equal runs
        ("[1:0:2:3:4:5:6:7]", "[1:0:2:3:4:5:6:7]"),  # one zero group stays
        ("[::ffff:0102:0304]", "[::ffff:1.2.3.4]"),
        ("[::1.2.3.4]", "[::102:304]"),
        ("[v1.x]", "[v1.x]"),
        ("example.com", "example.com"),
    ],
)
def test_ipv6_hosts_in_their_canonical_text(host: str, canonical: str) -> None:
    assert _schema._ipv6_text(host) == canonical
    assert _schema._normal(f"http://{host}:80/a") == f"http://{canonical.lower()}/a"


def test_an_empty_reference_leaves_the_fragment_of_its_base() -> None:
    assert _schema._resolve("https://e.com/s#a/b", "") == "https://e.com/s"
    assert _schema._resolve("https://e.com/s#a/b", "#") == "https://e.com/s#a/b"
    assert _schema._resolve("https://e.com/s#a/b", "#/x") == "https://e.com/s#a/b"


def test_a_relative_root_id_is_resolved_twice() -> None:
    registry = _schema._Registry({"$id": "sub/", "type": "object"}, _schema._DRAFT_2020)
    assert (registry.root_key, registry.root_base) == ("json-schema:///sub/", "json-schema:///sub/sub/")
    assert registry.resources.keys() == {"json-schema:///sub/", "json-schema:///sub/sub/"}
    absolute = _schema._Registry({"$id": "https://e.com/a/", "type": "object"}, _schema._DRAFT_2020)
    assert absolute.root_key == absolute.root_base == "https://e.com/a/"


def test_the_root_is_compiled_again_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every property refers to the root by its first URI: the root's subschemas are compiled twice, not once per
    # reference (the walk stays linear).
    n = 2_000
    schema = {"$id": "sub/", "type": "object", "properties": {f"p{i}": {"$ref": "../sub/"} for i in range(n)}}
    calls = 0
    steps = _schema._Registry.steps

    def counted(self: Any, *args: Any) -> Any:
        nonlocal calls
        calls += 1
        return steps(self, *args)

    monkeypatch.setattr(_schema._Registry, "steps", counted)
    assert _schema.schema_problem(schema) is None
    assert calls <= 2 * (n + 1)


def test_each_pattern_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema without references whose patterns are not all regexes is walked to find the one compiled first;
    no pattern is read twice for that."""
    read: list[str] = []

    def regex_ok(pattern: str) -> bool:
        read.append(pattern)
        return not pattern.startswith("(")

    monkeypatch.setattr(_schema, "regex_ok", regex_ok)
    schema = {
        "type": "object",
        "pattern": "(a",
        "properties": {"b": {"pattern": "b"}, "c": {"pattern": "(c"}},
    }
    assert _schema.schema_problem(schema) == '"(a" is not a "regex"'
    assert sorted(read) == ["(a", "(c", "b"]


# -- pointers into meta-schema documents, array indexes ----------------------------------------------------------

META_2020 = "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"$ref": f"{META_2020}#/$defs/x"}, _missing("/$defs/x")),
        ({"$ref": f"{META_2020}#/properties/definitions"}, None),
        (
            {"$ref": f"{META_2020}#/title"},
            '"Core and Validation specifications meta-schema" is not of types "boolean", "object"',
        ),
        ({"$ref": f"{META_2020}#/allOf/7"}, _missing("/allOf/7")),
        ({"$ref": f"{META_2020}#meta"}, None),
        (
            {"$ref": "https://json-schema.org/draft/2020-12/meta/applicator#/properties"},
            '{"$ref":"#/$defs/schemaArray"} is not of type "array"',
        ),
        ({"$ref": "https://json-schema.org/draft/2020-12/meta/validation#/%24defs/stringArray"}, None),
        ({"unevaluatedItems": {}, "$ref": f"{META_2020}#/{{"}, _missing("/{")),
        (
            {"$schema": D2019, "$ref": "https://json-schema.org/draft/2019-09/meta/applicator#/properties"},
            '"object" is not of types "boolean", "object"',
        ),
        (
            {
                "$schema": D7,
                "properties": {"a": {"$ref": "http://json-schema.org/draft-07/schema#/properties/writeOnly"}},
            },
            None,
        ),
        (
            {
                "$schema": "http://json-schema.org/draft-04/schema#",
                "properties": {
                    "a": {"$ref": "http://json-schema.org/draft-04/schema#/properties/enum/minItems"}
                },
            },
            _missing("/properties/enum/minItems"),
        ),
    ],
)
def test_a_pointer_into_a_meta_schema_document_leads_where_it_does_there(
    schema: dict[str, Any], problem: str | None
) -> None:
    assert _schema.schema_problem({"type": "object", **schema}) == problem


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        ("0", None),
        ("+0", None),
        ("01", _missing("/allOf/01")),
        ("-1", "Failed to parse array index '-1' in pointer '/allOf/-1'"),
        ("", "Failed to parse array index '' in pointer '/allOf/'"),
        ("%7E1", "Failed to parse array index '~1' in pointer '/allOf/%7E1'"),
        ("~01", "Failed to parse array index '~01' in pointer '/allOf/~01'"),
        ("x/y", "Failed to parse array index 'x' in pointer '/allOf/x/y'"),
        (str(2**64 - 1), _missing(f"/allOf/{2**64 - 1}")),
        (str(2**64), f"Failed to parse array index '{2**64}' in pointer '/allOf/{2**64}'"),
        ("9" * 5000, f"Failed to parse array index '{'9' * 5000}' in pointer '/allOf/{'9' * 5000}'"),
    ],
)
def test_a_pointer_token_in_an_array_must_be_an_index(token: str, problem: str | None) -> None:
    assert _schema.schema_problem({"type": "object", "$ref": f"#/allOf/{token}", "allOf": [{}]}) == problem


# -- vocabularies at a reference's target, contains, ids read anew, anchors compiled once ----------------------

_META = "https://json-schema.org/draft/2020-12/meta/"
_BAD = {"$ref": "#/nope"}


@pytest.mark.parametrize(
    ("root", "target", "compiled"),
    [
        # A target of the root's resource without a $schema or an id of its own keeps the root's vocabularies.
        (_META + "validation", {"allOf": [_BAD]}, False),
        (_META + "validation", {"$anchor": "a", "allOf": [_BAD]}, False),
        # One naming a resource, or with a $schema of its own, has them chosen anew by that $schema.
        (_META + "validation", {"$id": "http://e/x", "allOf": [_BAD]}, True),
        (_META + "core", {"$id": "x.json", "allOf": [_BAD]}, True),
        (_META + "validation", {"$schema": D7, "allOf": [_BAD]}, True),
        (_META + "validation", {"$schema": "http://e/zzz", "allOf": [_BAD]}, True),
        (_META + "validation", {"$schema": _META + "applicator", "allOf": [_BAD]}, True),
        (_META + "validation", {"$schema": _META + "validation", "allOf": [_BAD]}, False),
        (
            _META + "validation",
            {"$id": "http://e/x", "$schema": _META + "validation", "allOf": [_BAD]},
            False,
        ),
        # Under a root of the whole dialect, every vocabulary stays in force.
        (D2020, {"$schema": _META + "validation", "allOf": [_BAD]}, True),
    ],
)
def test_a_reference_target_of_its_own_chooses_its_vocabularies(
    root: str, target: dict[str, Any], compiled: bool
) -> None:
    ref = "#a" if "$anchor" in target else "#/$defs/t"
    schema = {"$schema": root, "type": "object", "$ref": ref, "$defs": {"t": target}}
    assert _schema.schema_problem(schema) == (_missing("/nope") if compiled else None)


@pytest.mark.parametrize(
    ("uri", "compiled"),
    [
        (D2020, True),
        (D2020 + "#", True),
        (D2019, True),
        ("http://json-schema.org/schema", True),
        ("http://json-schema.org/draft/2020-12/schema", True),
        (D7, True),
        (_META + "applicator", False),
        (_META + "core", False),
        ("https://json-schema.org/draft/2019-09/meta/validation", False),
        (D2020 + "#/x", False),
        ("HTTPS://json-schema.org/draft/2020-12/schema", False),
        ("http://e/zzz", False),
    ],
)
def test_contains_is_compiled_in_a_dialect_named_by_its_uri(uri: str, compiled: bool) -> None:
    for inner in ({"contains": _BAD}, {"items": {"contains": _BAD}}):
        schema = {"type": "object", "not": {"$schema": uri, **inner}}
        assert _schema.schema_problem(schema) == (_missing("/nope") if compiled else None)
    # The contains an unevaluatedItems beside it compiles is compiled all the same.
    schema = {"type": "object", "not": {"$schema": uri, "unevaluatedItems": {}, "contains": _BAD}}
    assert _schema.schema_problem(schema) == _missing("/nope")


def test_an_uncrawled_subschema_reached_by_a_pointer_names_nothing() -> None:
    defs = {"a": {"$id": "http://e/y", "items": {"$id": "#q"}, "not": {"$ref": "#q"}}}
    schema = {"$schema": D7, "type": "object", "properties": {"b": {"$ref": "#/$defs/a"}}, "$defs": defs}
    assert _schema.schema_problem(schema) == "Anchor 'q' does not exist"
    defs = {"a": {"$id": "http://e/y", "properties": {"k": {}}, "not": {"$ref": "#/properties/b"}}}
    schema["$defs"] = defs
    assert _schema.schema_problem(schema) is None  # resolved against the root's base URI


@pytest.mark.parametrize(
    ("props", "problem"),
    [
        ({"b": {"$ref": "#item"}, "c": {"$ref": "#why"}}, None),
        ({"b": {"allOf": [{"$ref": "#item"}]}, "c": {"$ref": "#why"}}, None),
        ({"c": {"$ref": "#why"}, "b": {"$ref": "#item"}}, _missing("/$defs/x")),
        ({"b": {"$ref": "#/$defs/i"}, "c": {"$ref": "#why"}}, _missing("/$defs/x")),
        ({"b": {"$ref": "#item"}, "c": {"$ref": "#nope"}}, "Anchor 'nope' does not exist"),
    ],
)
def test_one_anchor_target_of_a_resource_is_compiled(props: dict[str, Any], problem: str | None) -> None:
    defs = {"i": {"$anchor": "item"}, "y": {"$anchor": "why", "not": {"$ref": "#/$defs/x"}}}
    assert _schema.schema_problem({"type": "object", "$defs": defs, "properties": props}) == problem
