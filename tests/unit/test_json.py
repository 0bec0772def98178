"""dscodec._json: the prompt JSON style (behavior.md#json-style), compact strings (behavior.md#output-constraints) and the reader's number model."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dscodec import _json
from dscodec._json import JSONDecodeError, dumps_compact, dumps_prompt, float_text, loads

# -- prompt style (behavior.md#json-style) ---------------------------------------------------------------------


def test_prompt_separators_and_key_order() -> None:
    value = {"b": 1, "a": [1, 2, {"z": None, "y": True}], "c": {}, "d": [], "e": False}
    assert (
        dumps_prompt(value) == '{"b": 1, "a": [1, 2, {"z": null, "y": true}], "c": {}, "d": [], "e": false}'
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("名字", '"名字"'),
        ("é中😀", '"é中😀"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("a\nb\tc", '"a\\nb\\tc"'),
        ("\r\b\f", '"\\r\\b\\f"'),
        ("\x01", '"\\u0001"'),
        ("\x1f", '"\\u001f"'),  # lower-case hex
        ("\x7f", '"\x7f"'),  # DEL is not a JSON control character
        ("\u2028\u2029", '"\u2028\u2029"'),  # kept raw
        ("</think>", '"</think>"'),  # no HTML escaping
    ],
)
def test_prompt_strings(text: str, expected: str) -> None:
    assert dumps_prompt(text) == expected
    assert dumps_prompt([text]) == "[" + expected + "]"
    assert dumps_prompt({text: 1}) == "{" + expected + ": 1}"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0"),
        (-1, "-1"),
        (2**63 - 1, "9223372036854775807"),
        (-(2**63), "-9223372036854775808"),
        (2**64 - 1, "18446744073709551615"),
        (12345678901234567890, "12345678901234567890"),
        # Integers outside i64/u64 become doubles.
        (2**64, "1.8446744073709552e+19"),
        (-(2**63) - 1, "-9.223372036854776e+18"),
        (10**30, "1e+30"),
    ],
)
def test_prompt_integers(value: int, expected: str) -> None:
    assert dumps_prompt(value) == expected
    assert dumps_prompt([value]) == f"[{expected}]"


# (value, V4 text (behavior.md#json-style), V4.1 text = Python repr, observed against the reference)
FLOATS = [
    (1.0, "1.0", "1.0"),
    (1e5, "100000.0", "100000.0"),
    (1e15, "1000000000000000.0", "1000000000000000.0"),
    (1e16, "1e+16", "1e+16"),
    (1.2345678901234568e16, "1.2345678901234568e+16", "1.2345678901234568e+16"),
    (1e20, "1e+20", "1e+20"),
    (1.7976931348623157e308, "1.7976931348623157e+308", "1.7976931348623157e+308"),
    (0.1, "0.1", "0.1"),
    (0.0001, "0.0001", "0.0001"),
    (0.00001, "0.00001", "1e-05"),
    (0.000015, "0.000015", "1.5e-05"),
    (1e-6, "1e-6", "1e-06"),
    (1.5e-7, "1.5e-7", "1.5e-07"),
    (-1e-7, "-1e-7", "-1e-07"),
    (5e-324, "5e-324", "5e-324"),
    (1e-100, "1e-100", "1e-100"),
    (-0.0, "-0.0", "-0.0"),
    (123.456, "123.456", "123.456"),
]


@pytest.mark.parametrize(("value", "v4", "v41"), FLOATS)
def test_prompt_floats(value: float, v4: str, v41: str) -> None:
    assert dumps_prompt({"n": value}) == '{"n": ' + v4 + "}"
    assert dumps_prompt({"n": value}, python_floats=True) == '{"n": ' + v41 + "}"
    # Both spellings read back to the same double.
    assert loads(v4) == value and loads(v41) == value
    assert math.copysign(1.0, loads(v4)) == math.copysign(1.0, value)


def test_python_floats_leave_integers_and_strings_alone() -> None:
    value = {"i": 10**16, "s": "1e-05", "l": [2**64 - 1]}
    assert dumps_prompt(value, python_floats=True) == dumps_prompt(value)


# -- compact strings (behavior.md#output-constraints) ----------------------------------------------------------


def test_compact_has_no_spaces_and_same_strings() -> None:
    value = {"a": [1, {"b": None}], "c": "é中😀\u2028\x01\n"}
    assert dumps_compact(value) == '{"a":[1,{"b":null}],"c":"é中😀\u2028\\u0001\\n"}'


@pytest.mark.parametrize("orjson_writes", [True, False])
@pytest.mark.parametrize(("value", "v4", "v41"), FLOATS)
def test_compact_floats_follow_the_rule_whichever_writer(
    value: float, v4: str, v41: str, orjson_writes: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output constraints write floats by the same rule as prompts: through orjson where its float text is the
    rule's (orjson 3.11.7 and later), else through dscodec's own writer (older orjson writes ``1e16``)."""
    if orjson_writes and not _json._orjson_floats_agree():
        pytest.skip("the installed orjson writes floats another way; the other case covers dscodec's writer")
    monkeypatch.setattr(_json, "_orjson_floats_agree", lambda: orjson_writes)
    assert dumps_compact({"n": [value], "big": 2**70}) == '{"n":[' + v4 + '],"big":1.1805916207174113e+21}'


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_text_round_trips_in_the_rules_shape(value: float) -> None:
    text = float_text(value)
    assert float(text) == value and math.copysign(1.0, float(text)) == math.copysign(1.0, value)
    mantissa, _, exponent = text.partition("e")
    if exponent:  # exponent form outside [-5, 16): a sign for positive exponents, no zero padding
        assert re.fullmatch(r"[+-][1-9][0-9]*", exponent) and not -5 <= int(exponent) < 16
        assert not mantissa.endswith(".0")
    else:
        assert "." in text
    if _json._orjson_floats_agree():
        assert orjson.dumps(value).decode() == text


# -- reading -------------------------------------------------------------------------------------------------


def test_loads_negative_zero_is_a_signed_double() -> None:
    for text in ("-0", "-0.0", "-0e3"):
        value = loads(text)
        assert isinstance(value, float) and value == 0.0 and math.copysign(1.0, value) == -1.0
    assert loads("[-0, 0]") == [-0.0, 0]
    nested = loads('{"a": {"b": [-0]}, "s": "-0"}')
    assert math.copysign(1.0, nested["a"]["b"][0]) == -1.0
    assert nested["s"] == "-0"  # a string stays a string
    assert isinstance(loads("0"), int)


@pytest.mark.parametrize(
    "text",
    [
        '{"a":\n\t -0}',
        "[1,-0]",
        "[ -0 ]",
        '{"s": "x: -0", "n": -0}',
        '{"n": 1, "m": [2,\r\n-0e0]}',
        '{"d": "2024-01-05", "r": "x-0", "z": -0}',
    ],
)
def test_loads_finds_negative_zero_after_any_json_whitespace(text: str) -> None:
    value = loads(text)
    zeros = [v for v in _scalars(value) if isinstance(v, float) and v == 0.0]
    assert zeros and all(math.copysign(1.0, v) == -1.0 for v in zeros)
    assert loads(text.encode()) == value


@given(
    st.recursive(
        st.one_of(
            st.integers(-3, 3),
            st.sampled_from([-0.0, 0.0, False]),
            st.sampled_from(["-0", "a-0", ": -0", "[-0,", "2024-01-05"]),
        ),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner, max_size=2),
    ),
    st.sampled_from(["", " ", "\n", "\t\r\n "]),
    st.booleans(),
)
def test_loads_signs_zero_exactly_where_the_text_has_the_number(value: Any, space: str, long: bool) -> None:
    # -0.0 is written as the integer -0, the number orjson alone would read as 0; the strings only look like it.
    # A long document is read another way (its parsed value tells whether the text needs a look).
    text = json.dumps(value, separators=("," + space, ":" + space)).replace("-0.0", "-0")
    if long:
        text = f'[{text}, "{"p" * 300}"]'
    expected = json.loads(text, parse_int=lambda t: -0.0 if t == "-0" else int(t))
    assert repr(loads(text)) == repr(expected)
    assert repr(loads(text.encode())) == repr(expected)


@pytest.mark.parametrize("kind", [str, bytes, bytearray, memoryview])
@pytest.mark.parametrize("opening", ["[", '{"a":', '[{"a":'])
@pytest.mark.parametrize("pad", [0, 400, 70_000])
def test_loads_refuses_nesting_past_the_limit_however_long_the_text(
    kind: Any, opening: str, pad: int
) -> None:
    """Short texts, texts checked by counting their brackets and long ones: the same depth rule."""
    closing = {"[": "]", '{"a":': "}", '[{"a":': "}]"}[opening]
    levels = opening.count("[") + opening.count("{")

    def document(depth: int) -> Any:
        text = f'["{"p" * pad}", ' + opening * (depth // levels) + "1" + closing * (depth // levels) + "]"
        return text if kind is str else kind(text.encode())

    limit = 12 * levels
    assert loads(document(limit - levels), max_depth=limit) is not None  # the outer array is one more level
    with pytest.raises(JSONDecodeError, match="recursion limit"):
        loads(document(limit), max_depth=limit)


def _text_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in valid JSON text, read character by character (the test's own
    reading: strings skipped, escapes and all)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


_STRING_PIECES = st.sampled_from(
    ["[", "{", "]", "}", "a", "\\u005b", "\\u007B", "\\\\u005b", "\\\\", '\\"', " "]
)


@st.composite
def _documents_with_duplicates(draw: st.DrawFn) -> str:
    """JSON text of nested arrays and objects whose objects may repeat a key, the first value of a repeated key
    often nested deeper than the rest; strings hold brackets, bracket escapes and text that only looks like one."""

    def string() -> str:
        return '"' + "".join(draw(st.lists(_STRING_PIECES, max_size=6))) + '"'

    def value(budget: int) -> str:
        kind = draw(st.integers(0, 3)) if budget > 0 else 0
        if kind == 0:
            return draw(st.sampled_from(["1", "null", string()]))
        if kind == 1:
            return "[" + ", ".join(value(budget - 1) for _ in range(draw(st.integers(0, 2)))) + "]"
        members = [f"{string()}: {value(budget - 1)}" for _ in range(draw(st.integers(0, 2)))]
        if draw(st.booleans()):  # a repeated key: its first value nested deeper
            members.append('"k": ' + value(budget + draw(st.integers(0, 4))) + ', "k": 0')
        return "{" + ", ".join(members) + "}"

    return value(draw(st.integers(0, 6)))


@pytest.mark.parametrize("kind", [str, bytes])
@given(text=_documents_with_duplicates(), limit=st.integers(1, 8), pad=st.booleans())
def test_loads_depth_counts_values_a_duplicate_key_replaced(
    kind: Any, text: str, limit: int, pad: bool
) -> None:
    """The depth rule reads the text: a value a later duplicate key replaced is refused when too deep, and
    brackets inside strings (plain, escaped, or after an escaped backslash) never count, in documents up to
    64 KiB, whose brackets are counted anyway (``pad`` makes one as long as that; in longer ones only the values
    kept are measured, see ``test_loads_depth_of_a_long_document_measures_the_values_kept``)."""
    json.loads(text)  # the generator writes valid JSON (ASCII: as many bytes as characters)
    padding = max(0, min(60_000, _json._COUNTED_UP_TO - len(text) - len('["", ]')))
    document = ('["' + "p" * padding + '", ' + text + "]") if pad else "[" + text + "]"
    assume(len(document) <= _json._COUNTED_UP_TO)
    data = document if kind is str else document.encode()
    if _text_depth(document) > limit:
        with pytest.raises(JSONDecodeError, match="recursion limit"):
            loads(data, max_depth=limit)
    else:
        assert loads(data, max_depth=limit) == json.loads(document)


def test_loads_depth_of_a_long_document_measures_the_values_kept() -> None:
    """Past 64 KiB a value a later duplicate key replaced is not measured (counting the brackets of every long
    conversation a serving loop resends would slow each read; docs/limits.md): only the values kept are, and a
    kept value too deep is still refused."""
    deep = "[" * 9 + "]" * 9
    for size, refused in ((_json._COUNTED_UP_TO, True), (_json._COUNTED_UP_TO + 1, False)):
        head = '[{"k": ' + deep + ', "k": 0}, "'
        document = head + "p" * (size - len(head) - 2) + '"]'
        assert len(document) == size
        if refused:
            with pytest.raises(JSONDecodeError, match="recursion limit"):
                loads(document, max_depth=8)
        else:
            assert loads(document, max_depth=8) == json.loads(document)
        kept = document.replace(', "k": 0', ', "j": 0')  # the deep value kept: refused at any length
        with pytest.raises(JSONDecodeError, match="recursion limit"):
            loads(kept, max_depth=8)


def _scalars(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    return [value]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("18446744073709551615", 18446744073709551615),
        ("-9223372036854775808", -(2**63)),
        ("12345678901234567890", 12345678901234567890),
    ],
)
def test_loads_keeps_64_bit_integers(text: str, expected: int) -> None:
    value = loads(text)
    assert isinstance(value, int) and value == expected


@pytest.mark.parametrize(
    "text", ["18446744073709551616", "-9223372036854775809", "123456789012345678901234567890"]
)
def test_loads_larger_integers_become_doubles(text: str) -> None:
    value = loads(text)
    assert isinstance(value, float) and value == float(int(text))


def test_loads_keeps_key_order_and_last_duplicate() -> None:
    assert list(loads('{"b": 1, "a": 2}')) == ["b", "a"]
    assert loads('{"a": 1, "b": 2, "a": 3}') == {"a": 3, "b": 2}


@pytest.mark.parametrize(
    "data",
    [
        "NaN",
        "[Infinity]",
        "-Infinity",
        '{"a": NaN}',
        '"\\ud800"',  # lone high surrogate
        '"\\udc00"',  # lone low surrogate
        '"\\udc00\\ud800"',  # reversed pair
        b'"\xff"',  # invalid UTF-8
        b"\xc3",
        "\ufeff{}",  # byte order mark
        "1e400",  # overflows a double
        "[1,]",
        "{'a': 1}",
        "01",
        "",
        '{"a": 1} x',
        '"\t"',  # raw control character in a string
    ],
)
def test_loads_rejects(data: Any) -> None:
    with pytest.raises(JSONDecodeError):
        loads(data)


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b'{"a": "\xff"}', "byte 0xff at offset 7 (invalid start byte)"),
        (bytearray(b'["\xe4\xb8"]'), "byte 0xe4 at offset 2 (invalid continuation byte)"),
        (memoryview(b'"ok" \xc3'), "byte 0xc3 at offset 5 (unexpected end of data)"),
    ],
)
def test_loads_names_the_first_byte_that_is_not_utf8(data: Any, where: str) -> None:
    with pytest.raises(JSONDecodeError, match=re.escape(f"not valid UTF-8: {where}")):
        loads(data)


def test_json_decode_error_is_a_value_error() -> None:
    assert issubclass(JSONDecodeError, ValueError)


def test_loads_accepts_a_surrogate_pair_and_bytes() -> None:
    assert loads('"\\ud83d\\ude00"') == "😀"
    assert loads('{"k": "é"}'.encode()) == {"k": "é"}
    assert loads(" \n[1, 2.5, true] \t") == [1, 2.5, True]
