"""The regex syntax check of schema patterns (``dscodec.protocols._regex``).

What the reference accepts is pinned by the recorded golden cases (``schema-regex-*`` in
``fixtures/requests/chat_completions``); these tests hold the properties every answer must have.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dscodec.protocols._regex import _ecma_classes, ecma_regex_ok, regex_ok

PIECES = st.sampled_from(
    ["a", "é", ".", "^", "$", "|", "(", ")", "(?:", "(?=", "(?<=", "(?<n>", "(?i)", "(?x)", "*", "+", "?", "{2}",
     "{", "}", "[", "]", "[^", "-", "&&", "\\d", "\\p{L}", "\\p{", "\\x{41}", "\\1", "\\cA", "\\", " ", "#", "\n"]
)  # fmt: skip


@given(st.text(max_size=40))
def test_any_text_gets_an_answer(pattern: str) -> None:
    assert regex_ok(pattern) in (True, False)


@given(st.lists(PIECES, max_size=16).map("".join))
def test_any_arrangement_of_syntax_gets_an_answer(pattern: str) -> None:
    assert regex_ok(pattern) in (True, False)


@given(st.text(alphabet="abc123 _-", max_size=30))
def test_plain_text_is_a_pattern(pattern: str) -> None:
    assert regex_ok(pattern)


def test_depth_is_bounded_and_checked_without_recursing_deeply() -> None:
    assert regex_ok("(" * 63 + "a" + ")" * 63)
    assert not regex_ok("(" * 64 + "a" + ")" * 64)
    assert not regex_ok("(" * 100_000)  # refused at the 64th level: no RecursionError
    assert not regex_ok("[" * 100_000)


def test_long_patterns_are_read_whole() -> None:
    assert regex_ok("(?:ab|cd)" * 20_000)
    assert not regex_ok("(?:ab|cd)" * 20_000 + "(")


@given(st.text(alphabet="[]^-&~\\dwa:", max_size=20))
def test_class_escaping_only_adds_backslashes(pattern: str) -> None:
    escaped = _ecma_classes(pattern)
    assert escaped.replace("\\", "") == pattern.replace("\\", "")
    assert len(escaped) >= len(pattern)


def test_class_escaping_of_ecma_literals() -> None:
    # Inside a class a "[" and a doubled "&" or "~" are characters, and so is a hyphen next to another one
    # unless it is a range's own hyphen.
    assert _ecma_classes("[[]") == "[\\[]"
    assert _ecma_classes("[a&&b]") == "[a\\&\\&b]"
    assert _ecma_classes("[a--b]") == "[a-\\-b]"
    assert _ecma_classes("[--a]") == "[\\--a]"
    assert _ecma_classes("a&&b[x]") == "a&&b[x]"


@given(st.lists(PIECES, max_size=16).map("".join))
def test_ecma_reading_gives_an_answer(pattern: str) -> None:
    assert ecma_regex_ok(pattern) in (True, False)


def test_ecma_reading() -> None:
    # What drafts 4, 6 and 7 take as a regex (ECMA-262 with the u flag, property names and size not looked at).
    for good in [
        "^[a-z]+$",
        "\\0",
        "[\\b]",
        "\\p{InGreek}",
        ".{100000}",
        "(?i:a)",
        "(?<a>x)|(?<a>y)",
        "\\u{10FFFF}",
        "[\\uD83D\\uDE00-\\uD83D\\uDE02]",
    ]:
        assert ecma_regex_ok(good), good
    for bad in [
        "(?i)a",
        "\\x{41}",
        "[[:alpha:]]",
        "a{,5}",
        "\\a",
        "]",
        "(?<a>x)(?<a>y)",
        "\\1",
        "[z-a]",
        "(?=a)*",
    ]:
        assert not ecma_regex_ok(bad), bad


def test_ecma_reading_is_bounded() -> None:
    assert ecma_regex_ok("(" * 50_000 + ")" * 50_000)  # no recursion
    assert not ecma_regex_ok("(" * 50_000)
    # Both might take part: refused, in linear time.
    assert not ecma_regex_ok("(?:(?<a>x)|(?<a>y))" * 5_000)


def test_counts_in_reverse_order() -> None:
    # The lenient reading takes a count's bounds in any order, but not in a look-behind (a look-ahead inside one
    # reads as outside); the strict one never gets there (it stops at the look-around).
    assert regex_ok("(?=a{3,1})") and regex_ok("(?<=(?=a{3,1}))") and regex_ok("(?<=a)b{3,1}")
    assert not regex_ok("(?<=a{3,1})") and not regex_ok("(?<!(a|b{2,1}))") and not regex_ok("(?<=(?:a{3,1}))")
    # Outside extended mode `{ 3,1}` is no count: plain characters.
    assert regex_ok("(?<=a{ 3,1})") and not regex_ok("(?x)(?<=a{ 3,1})")


def test_boundary_counts_in_extended_mode() -> None:
    # In extended mode spaces may come before the number of a word boundary's count; a name keeps its meaning.
    assert regex_ok("(?x)\\b{ 2 }") and regex_ok("(?x)\\B{ 2,3 }") and regex_ok("(?x)\\b{ start}")
    assert not regex_ok("\\b{ 2}") and not regex_ok("(?x)\\b{ x }") and not regex_ok("(?x)\\b{ ,2}")
