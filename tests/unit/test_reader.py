"""dscodec.protocols._reader: the table-driven struct reader and its serde rules.

The rules under test: fields are read in document order (the first malformed one is reported), missing required
fields are reported afterwards in declaration order, ``null`` is absent for an optional field and a wrong type
for a required one, undeclared fields are ignored whatever their type, and every error carries its path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from dscodec.protocols._body import WireError, read_bool, read_str
from dscodec.protocols._reader import (
    Struct,
    Tagged,
    checked,
    constant,
    list_of,
    optional,
    required,
    str_or_list,
    uint,
    unit_enum,
)


@dataclass(frozen=True)
class Point:
    x: str
    y: str
    label: str | None = None
    hidden: bool = False


POINT = Struct(
    Point,
    required("y", read_str),
    required("x", read_str),
    optional("label", read_str),
    optional("hidden", read_bool),
    expected="struct Point",
    size=4,
)


def error(reader: Any, value: Any, path: str | None = "p") -> tuple[str, str | None]:
    with pytest.raises(WireError) as info:
        reader(value, path)
    return info.value.detail, info.value.path


# -- fields ------------------------------------------------------------------------------------------------------


def test_reads_declared_fields_and_keeps_defaults() -> None:
    assert POINT.read({"x": "1", "y": "2"}, "p") == Point("1", "2")
    assert POINT.read({"label": "a", "y": "2", "x": "1", "hidden": True}, "p") == Point("1", "2", "a", True)


def test_the_first_malformed_field_in_document_order_is_reported() -> None:
    assert error(POINT.read, {"x": 1, "label": 2}) == ("invalid type: integer `1`, expected a string", "p.x")
    assert error(POINT.read, {"label": 2, "x": 1}) == (
        "invalid type: integer `2`, expected a string",
        "p.label",
    )


def test_type_errors_come_before_missing_fields() -> None:
    assert error(POINT.read, {"hidden": "no"}) == (
        'invalid type: string "no", expected a boolean',
        "p.hidden",
    )


@pytest.mark.parametrize(
    ("value", "missing"),
    [({}, "y"), ({"x": "1"}, "y"), ({"y": "2"}, "x"), ({"label": "a", "x": "1"}, "y")],
)
def test_missing_required_fields_follow_the_declaration_order(value: dict[str, Any], missing: str) -> None:
    assert error(POINT.read, value) == (f"missing field `{missing}`", "p")


def test_null_is_absent_for_an_optional_field_and_a_wrong_type_for_a_required_one() -> None:
    assert POINT.read({"x": "1", "y": "2", "label": None, "hidden": None}, "p") == Point("1", "2")
    assert error(POINT.read, {"x": None, "y": "2"}) == ("invalid type: null, expected a string", "p.x")


def test_read_null_passes_null_to_the_reader() -> None:
    struct = Struct(dict, optional("format", read_str, read_null=True))
    assert struct.read({}, "p") == {}
    assert error(struct.read, {"format": None}) == ("invalid type: null, expected a string", "p.format")


def test_undeclared_fields_are_ignored_whatever_their_type() -> None:
    value = {"x": "1", "z": [1, {"a": None}], "y": "2", "X": 3, "": None}
    assert POINT.read(value, "p") == Point("1", "2")


def test_paths_at_the_top_level_and_below_lists() -> None:
    assert error(POINT.read, {"x": 1}, None) == ("invalid type: integer `1`, expected a string", "x")
    assert error(POINT.read, {}, None) == ("missing field `y`", None)
    outer = Struct(dict, optional("points", list_of(POINT.read)))
    value = {"points": [{"x": "1", "y": "2"}, {"x": "1", "y": False}]}
    assert error(outer.read, value, "body") == (
        "invalid type: boolean `false`, expected a string",
        "body.points[1].y",
    )
    assert error(outer.read, {"points": [{}]}, None) == ("missing field `y`", "points[0]")
    assert error(outer.read, {"points": {}}, None) == ("invalid type: map, expected a sequence", "points")


def test_not_an_object() -> None:
    assert error(POINT.read, "s") == ('invalid type: string "s", expected struct Point', "p")
    assert error(POINT.read, []) == ("invalid length 0, expected struct Point with 4 elements", "p")
    assert error(Struct(dict, expected="struct One", size=1).read, []) == (
        "invalid length 0, expected struct One with 1 element",
        "p",
    )


def test_into_renames_spreads_and_drops() -> None:
    struct = Struct(
        dict,
        optional("a", read_str, into="alpha"),
        required("pair", lambda value, path: (value, path), into=("value", "where")),
        checked("c", read_bool),
        checked("d", required=True),
    )
    assert struct.read({"a": "x", "pair": 1, "c": True, "d": None}, "p") == {
        "alpha": "x",
        "value": 1,
        "where": "p.pair",
    }
    assert error(struct.read, {"pair": 1, "c": 1}) == ("invalid type: integer `1`, expected a boolean", "p.c")
    assert error(struct.read, {"pair": 1}) == ("missing field `d`", "p")


def test_collect_gives_the_arguments_without_building() -> None:
    assert POINT.collect({"x": "1", "y": "2", "zz": 0}, "p") == {"x": "1", "y": "2"}


# -- tagged enums ------------------------------------------------------------------------------------------------

SHAPE: Tagged[Any] = Tagged(
    "type",
    "internally tagged enum Shape",
    {
        "point": POINT,
        "none": constant(None, checked("strict", read_bool)),
        "circle": Struct(dict, required("r", uint(8))),
    },
)


def test_the_tag_picks_the_variant_and_is_not_a_field() -> None:
    assert SHAPE.read({"x": "1", "type": "point", "y": "2"}, "s") == Point("1", "2")
    assert SHAPE.read({"type": "none"}, "s") is None
    assert SHAPE.read({"type": "circle", "r": 3}, "s") == {"r": 3}


def test_constant_still_checks_its_fields() -> None:
    assert error(SHAPE.read, {"type": "none", "strict": "x"}) == (
        'invalid type: string "x", expected a boolean',
        "p.strict",
    )


def test_tag_errors() -> None:
    assert error(SHAPE.read, {"type": "square"}) == (
        "unknown variant `square`, expected one of `point`, `none`, `circle`",
        "p.type",
    )
    assert error(SHAPE.read, {"x": "1"}) == ("missing field `type`", "p.type")
    assert error(SHAPE.read, {"type": 1}) == (
        "invalid type: integer `1`, expected variant identifier",
        "p.type",
    )
    # An unhashable tag takes the checked path too (it cannot be looked up among the variants).
    assert error(SHAPE.read, {"type": ["point"]}) == (
        "invalid type: sequence, expected variant identifier",
        "p.type",
    )
    assert error(SHAPE.read, 5) == ("invalid type: integer `5`, expected internally tagged enum Shape", "p")
    assert error(SHAPE.read, []) == ("missing field `type`", "p")
    assert error(SHAPE.read, ["square"]) == (
        "unknown variant `square`, expected one of `point`, `none`, `circle`",
        "p",
    )
    assert error(SHAPE.read, {"type": "circle", "r": 256}) == (
        "invalid value: integer `256`, expected u8",
        "p.r",
    )


# -- small readers -----------------------------------------------------------------------------------------------


def test_str_or_list() -> None:
    read = str_or_list(read_str, "expected a string or a list")
    assert read("a", "p") == "a"
    assert read(["a", "b"], "p") == ("a", "b")
    assert error(read, 1) == ("expected a string or a list", "p")
    assert error(read, ["a", 2]) == ("invalid type: integer `2`, expected a string", "p[1]")


def test_unit_enum() -> None:
    read = unit_enum(("low", "high"))
    assert read("low", "p") == "low"
    assert read({"high": None}, "p") == "high"
    # serde names two variants with "or", more with "one of".
    assert error(read, "mid") == ("unknown variant `mid`, expected `low` or `high`", "p")
