"""The regex syntax check of schema patterns (``dscodec.protocols._regex``).

What the reference accepts is pinned by the recorded golden cases (``schema-regex-*`` in
``fixtures/requests/chat_completions``); these tests hold the properties every answer must have.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dscodec.protocols import _regex as regex_module
from dscodec.protocols._regex import _ecma_classes, _fold_orbits, _folded, ecma_regex_ok, regex_ok

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


def assert_verdicts(taken: list[str], refused: list[str]) -> None:
    """Every pattern of ``taken`` is accepted and every one of ``refused`` refused (the wrong ones are named)."""
    assert [pattern for pattern in taken if not regex_ok(pattern)] == []
    assert [pattern for pattern in refused if regex_ok(pattern)] == []


class _NothingPlain:
    """A stand-in for the reader's set of characters that start no run of plain ones: it holds them all."""

    def __contains__(self, item: object) -> bool:
        return True


@given(
    st.lists(st.one_of(PIECES, st.sampled_from(["ab", "abc", "x y", "é字𝒜", "#c\n", "(?#c)"])), max_size=16)
)
def test_runs_of_plain_characters_read_as_one_character_at_a_time(pieces: list[str]) -> None:
    # The reader takes a run of plain characters in one step (all but its last, which a quantifier may follow);
    # the answer is the one of reading each character on its own.
    pattern = "".join(pieces)
    answers = (regex_ok(pattern), ecma_regex_ok(pattern))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(regex_module, "_NOT_PLAIN", _NothingPlain())
        assert (regex_ok(pattern), ecma_regex_ok(pattern)) == answers, pattern


def test_a_long_run_of_plain_characters_is_one_program() -> None:
    # Plain characters alone are no program; in one, each costs its UTF-8 length, and a run of them before a
    # quantifier leaves its last to the quantifier (1,000 two-byte characters cost what 2,000 b do).
    assert regex_ok("(a)\\1" + "b" * 330_000) and not regex_ok("(a)\\1" + "b" * 330_000 + "c?")
    assert regex_ok("\\1(a)" + "é" * 1000 + "b{325673}") and not regex_ok("\\1(a)" + "é" * 1000 + "b{325674}")


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


def test_hard_parts_leave_only_their_easy_runs_to_compile() -> None:
    # The lenient engine runs look-arounds, back-references and the groups they name (named or numbered, before or
    # after the group), atomic and possessive parts and word boundaries itself: a repetition it runs is no program.
    for taken in [
        r"\1(a){1000000}",
        r"\1(a{1000000})",
        r"(a{1000000})\1",
        r"(a{1000000})*\1",
        r"(?=x)(?<n>a{1000000})\k<n>",
        r"\1(a|b{1000000})",
        r"\1(a{1,3}b{1000000}c*)",
        r"\2(a(b{1000000}))",
        r"\1a{1000000}(a)",
        r"(a){1000000}|\1",
        r"\ba{1000000}\b",
        r"(?=x)a{1000000}(?!y)",
        r"x*+a{1000000}y*+z",
        "(a)\\1" + "b" * 330_000,  # plain characters are no program
    ]:
        assert regex_ok(taken), taken
    # The easy runs around them are compiled each on its own, each under the limit.
    for refused in [
        r"\1(ab{1000000})",  # the group's inside is a run of a fixed length
        r"\1(a{1,3}b{1000000})",  # in a hard part, a fixed-length run that ends it
        r"\1(a(b{1000000}))",  # the inner group is easy
        r"\1(a)a{1000000}",  # the run after the last hard part
        r"(?=(a{1000000}))\1",  # a look-around's inside is compiled whole
        r"(a{1000000})|\1",  # so is that of a referenced group standing alone in an easy context
        r"\1(a{1000000}+)",  # and that of a possessive repetition
        r"(?=x)a{1000000}(?=y)",  # a look-ahead ending the pattern is a plain part after the rest
        r"\1(a)(?:b{200000}c{200000})?",
        "(a)\\1" + "b" * 330_000 + "c?",
    ]:
        assert not regex_ok(refused), refused
    assert regex_ok(r"\1(a)(?:b{200000}\1c{200000})?")  # two programs, each under the limit


def test_each_program_has_the_whole_limit() -> None:
    assert regex_ok(r"\1(a)b{327673}") and not regex_ok(r"\1(a)b{327674}")
    assert regex_ok(r"b{327672}c\1(a)") and not regex_ok(r"b{327673}c\1(a)")
    # A look-behind of varying length is compiled per branch; one of a fixed length whole.
    assert regex_ok(r"(?<=a{200000}|bb{200000})c") and not regex_ok(r"(?<=a{200000}|b{200000})c")


def test_many_back_references_are_costed_in_linear_time() -> None:
    pattern = "".join(f"(a{{1000000}})\\{i}" for i in range(1, 3001))
    assert regex_ok(pattern)
    assert not regex_ok(pattern + "b{1000000}")


def test_what_a_quantifier_may_follow() -> None:
    # No quantifier may follow \K, \G, a look-around or nothing, not even {0} or {1}; a group that captures nothing
    # (flags and all) is seen through, and comments, flag groups and extended-mode spaces in it are no items. A
    # capturing or an atomic group may always be repeated, and so may the other assertions.
    for refused in [
        r"(?=c)a\K*",
        r"(?=c)\G+",
        r"(?=c)a\K?",
        r"(?=c)a\K{0}",
        r"(?=c)a\K{1,2}",
        r"(?=c)\K{,2}",
        r"(?=c)\K{2,1}",
        r"(?=c)a\K*?",
        r"(?=c)a\K*+",
        r"(?=c)(?:\G)?",
        r"(?=c)(?i:\K)*",
        r"(?=c)\K(?#c)*",
        r"(?=c)(?:(?i)\K)*",
        "(?=c)(?x)\\K #c\n*",
        r"(?:(?=a))*",
        r"(?:(?<=a)){2}",
        r"(?i:(?=a))*",
        r"(?:(?:(?=a)))*",
        r"(?:(?=a)(?#c))*",
        r"(?x:(?=a) )*",
        r"(?:(?=a))*+",
        r"(?=c)(?:(?=a)){0}",
    ]:
        assert not regex_ok(refused), refused
    for taken in [
        r"(?=c)(\K)*",
        r"(?=c)(?>\K)*",
        r"(?=c)(?>)*",
        r"(?=c)((?=a))*",
        r"(?=c)(?:\Ka)*",
        r"(?=c)(?:(?=a)(?=b))*",
        r"(?=c)(?:(?=a)|)*",
        r"(?=c)\b*",
        r"(?=c)\Z{2}",
        r"(?=c)\K{",  # a "{" that starts no count is a plain character
    ]:
        assert regex_ok(taken), taken


def test_comments_are_skipped_like_white_space() -> None:
    # After a look-around or a back-reference, a comment is skipped wherever white space is in extended mode: a
    # quantifier after one repeats the item before it, and a "?" or "+" after one marks the repetition before it.
    # A backslash in a comment escapes the next character.
    for taken in [
        r"(?=c)a(?#c)(?#d)*",
        r"(?=c)a*(?#c)?",
        r"(?=c)a*(?#c)+",
        r"(?=c)a(?#\)b)",
        r"(?=c)((?#c)?:a)",
        r"(?=c)[(?#c]",  # in a class, plain characters
        r"(?=c)a*?+",
    ]:
        assert regex_ok(taken), taken
    for refused in [
        r"(?=c)a*(?#c)*",  # a repetition repeated
        r"(?=c)a*?(?#c)?",
        r"(?=c)a{2}?(?#c)*",
        r"(?=c)a(?#c)*(?#d)*",
        r"(?=c)a*?(?#c)+",  # a "+" marks the repetition possessive only right after its "?"
        r"(?=c)(?x)a*? +",
        r"(?=c)a(?#\)",  # the comment never closes
        r"(?#c)a(?=c)",  # the strict reading takes no comment
    ]:
        assert not regex_ok(refused), refused


def test_look_behinds_of_varying_length() -> None:
    # A look-behind of varying length is taken per branch of its alternation: a branch of a fixed length, an easy
    # one, or a concatenation whose hard items each have a fixed length. A back-reference has the length of its
    # group when that one is closed and of a fixed length; a group a back-reference names (before or after) is hard.
    for taken in [
        r"(?<=a+\b)",
        r"(?<=(?:a+\b))",
        r"(?<=a|b+\b)",
        r"(?<=(a)\1)",
        r"(?<=x+(a)\1{2})",
        r"(a|b)(?<=x+\1)",
        r"(?<=x+(a+))",
        r"(?<=c+(?:a\b){2})",
        r"(?<=a+(?>b|c))",
        r"(?<=c+(?=a++))",  # a look-ahead has no length
        r"(?=c)(?<=(?=\b?))",
        r"(?<=a+(?<=b+))",
    ]:
        assert regex_ok(taken), taken
    for refused in [
        r"(?<=a+b?+)",
        r"(?<=(a+\b))",
        r"(?<=a++)",
        r"(?<=(?>a|bb))",
        r"(?<=\R)",
        r"(?<=a\R{0})",
        r"(?<=(?:a+\b)c)",  # an item is not looked into
        r"(?<=a|(?:b|c+\b))",  # nor is a branch's alternation
        r"(?<=c+(?:\Z|b))",
        r"(?<=(a+)\1)",
        r"(?<=x+(a)\1{1,2})",
        r"(a+)(?<=x+\1)",
        r"(?<=x+(a+))\1",
        r"\1(?<=x+(a+))",
        r"(?=c)((?<=\1))",  # the group is still open
        r"(?<=c+(?<=a++))",
    ]:
        assert not regex_ok(refused), refused


def test_a_part_repeated_zero_times_is_never_compiled() -> None:
    # What the lenient engine refuses only when it compiles a look-behind goes unseen under {0}; what it refuses
    # when it reads the pattern does not.
    for taken in [
        r"(?=c)(?:x(?<=a+b?+)){0}",
        r"(?=c)(x(?<=\R)){0,0}",
        r"(?=c)(?:x(?<=a{2,1})){0}",
        r"(?=c)(?:x(?<=(a+))){0}\1",
    ]:
        assert regex_ok(taken), taken
    for refused in [r"(?=c)(?:x(?<=a+b?+)){0,1}", r"(?=c)(?:x\K{2}){0}", r"(?=c)(?:\5){0}"]:
        assert not regex_ok(refused), refused


def test_a_flag_group_goes_on_past_a_capturing_group_in_the_lenient_reading() -> None:
    # The strict reading ends a bare (?x) with the group around it; the lenient one only with a group that
    # captures nothing. Past a capturing group, a look-around or an atomic group, " #(" is a comment to it.
    for taken in [
        "(?=(?x)a) #(",
        "(?<!(?x)a) #(",
        r"(a)\1((?x)b) #(",
        "(?=a)(?>(?x)b) #(",
        "(?=b)(a(?x)|b) #(",
        "(?=b)(?<n>(?x)a) #(",
        "((?x)a)(?=b) #(",  # the strict reading stops at the look-ahead: what follows is the lenient one's
        "((?x)a(?=b)) #(",
        "((?x)a) #(?=b) (",  # to the lenient reading all of " #(?=b) (" is a comment
        "((?x)a) #\\cA(?=b)",
    ]:
        assert regex_ok(taken), taken
    for refused in [
        "((?x)a) #(",  # the strict reading reads to the end, without the flag
        "(?=a)(?:(?x)b) #(",
        "(?=b)(?i:a(?x)) #(",
        "(?x)(?=(?-x)a) #(",
        "(?x)(?=b)((?-xi)a) #(",
        "((?x)a)| *",  # to the lenient reading the second branch is a bare "*"
        "(?=b)((?x)a)|(b #)",
        "((?x)a) #\\q(?=b)",
    ]:
        assert not regex_ok(refused), refused


def test_white_space_in_a_class_in_extended_mode() -> None:
    # The strict reading skips it (around a range's hyphen too), the lenient one takes it as a character.
    assert regex_ok("(?=a)(?x)[ #]") and not regex_ok("(?x)[ #]")
    assert regex_ok("(?=a)(?x)[z - a]") and not regex_ok("(?x)[z - a]")
    assert not regex_ok("(?x)[a- z]") and not regex_ok("(?=a)(?x)[a- z]")
    assert regex_ok("(?x)[a - z]") and regex_ok("(?x)[a#]\n]")


def test_a_closing_bracket_first_in_a_class_starts_no_range() -> None:
    # A "]" right after "[" or "[^" (in extended mode after white space too) is a character of its own, so in
    # "[]-!]" the hyphen is one too (observed). Two hyphens after an ECMA empty class "[]" (which opens a class in
    # the engines' reading) are a set difference, and "(?x)[ ^]" is a negated class left open.
    taken = [
        "[]-!]",
        "[^]-!]",
        "[]-!-#]",
        "[]-[b]]",
        "[]-[]]]",
        "[]-\\d]",
        "(?x)[ ] - !]",
        "[]--[]]]",
        "[]~~--!]",
    ]
    assert all(regex_ok(pattern) for pattern in taken)
    refused = ["[]-[]]", "[]-[]a]", "[]-", "(?x)[ ^]", "[\\]-!]"]
    assert not any(regex_ok(pattern) for pattern in refused)


def test_numbers_of_any_length_are_read() -> None:
    # Leading zeros are taken however many, and a count or a group number of thousands of digits is read
    # without int() refusing it (it reads at most 4,300 digits): no ValueError.
    zeros = "0" * 5000
    taken = ["a{" + zeros + "1}", "a{1," + zeros + "2}", "(?=x)a{" + zeros + "1}", "(a)\\" + zeros + "1"]
    assert all(regex_ok(pattern) for pattern in [*taken, "(a)\\0000000000001"])  # group 1
    refused = [
        "a{" + zeros + "2," + zeros + "1}",
        "a{" + "9" * 5000 + "}",
        "(a)\\" + zeros + "2",
        "(a)\\1" + zeros,
    ]
    assert not any(regex_ok(pattern) for pattern in refused)
    assert all(ecma_regex_ok(pattern) for pattern in taken[:2])
    assert not any(ecma_regex_ok(pattern) for pattern in [refused[0], refused[3]])


def test_simple_case_folding_data() -> None:
    # Static Unicode 16 data, whatever the Unicode version of the running Python.
    orbits = _fold_orbits()
    assert orbits[ord("k")] == (ord("K"), ord("k"), 0x212A)
    assert set(orbits[0x3B9]) == {0x345, 0x399, 0x3B9, 0x1FBE}
    assert orbits[0x1E9E] == (0xDF, 0x1E9E)  # the capital sharp s folds to the small one (S status)
    assert orbits[0x10D50] == (0x10D50, 0x10D70)  # Garay, new in Unicode 16
    assert orbits[0xA7CB] == (0x264, 0xA7CB)
    assert 0x130 not in orbits and 0x131 not in orbits  # the dotted and dotless i: no simple folding
    assert all(c in orbits[other] for c, orbit in orbits.items() for other in orbit)
    assert _folded([(0x61, 0x7A)]) == [(0x41, 0x5A), (0x61, 0x7A), (0x17F, 0x17F), (0x212A, 0x212A)]
    assert _folded([(0x30, 0x39)]) == [(0x30, 0x39)]


def test_case_insensitive_classes_hold_every_case() -> None:
    # Under the i flag a class grows by the other cases of its characters before it is compiled (and before a
    # negation takes effect): \w gains the Kelvin sign and the long s, whose UTF-8 sequences cost far more.
    assert regex_ok(r"\w{100000}") and not regex_ok(r"(?i)\w{28500}") and regex_ok(r"(?i)\w{27300}")
    assert not regex_ok(r"(?i)[\w]{28500}") and not regex_ok(r"(?i)[^\W]{28500}")
    assert not regex_ok(r"(?i)\W{6600}") and regex_ok(r"(?i)\W{6350}") and not regex_ok(r"(?i)[^\w]{6600}")
    assert not regex_ok(r"(?i)[α-ω]{14300}") and regex_ok(r"(?i)[α-ω]{13600}") and regex_ok(r"[α-ω]{50000}")
    assert regex_ok(r"(?i)[a-j]{130000}") and not regex_ok(r"(?i)[a-z]{35000}")
    assert regex_ok(r"(?i)s{50000}") and not regex_ok(r"(?i)k{45000}")
    assert regex_ok(r"(?i)\p{Lu}{960}") and not regex_ok(r"(?i)\p{Lu}{1010}") and not regex_ok(r"\p{Lu}{400}")
    assert regex_ok(r"(?i)\x{3b1}{60000}") and not regex_ok(r"(?i)\x{3b9}{60000}")  # ι has four cases


def test_a_range_may_end_in_an_opening_bracket() -> None:
    # After an ECMA empty class "[]" a "[" is left as it is: as a range's end it is the character, in "[]0-[b]]" the
    # range "0"-"[" then "b", the class closed by the first "]" of the two. The lenient engine counts a class opening
    # there, so its class ends at the second one, and it hands what lies between on to the strict reading's
    # engine as a pattern of its own (after a class, without look-arounds, alone in its groups). Checked against
    # the reference.
    taken = [
        "[]0-[b]]",
        "[^]0-[b]]",
        "[]0-[b]c]",
        "[]0-[b]()]",
        "[]0-[b]]]",
        "[]0-[b]*]",
        "[]0-[b]**]",  # that engine takes a quantifier on a quantifier
        "[]0-[b]{2}]",
        "[]0-[b]|]",
        "[]0-[b]\\d]",
        "[]0-[b]-]",
        "[]0-[:alpha:]]",
        "[]0-[[b]]]",
        "[]0-[b&&c]]",
        "[]0-[b][]]]",
        "[]0-[b][^]]]",
        "[]0-[b](?:)*]",
        "[]0-[b]a\\b{2}]",
        "(?x)[]0 - [b]]",
        "(?x)[]0-[ b]]",
    ]
    refused = [
        "[]0-[b](]",
        "([]0-[b])]",
        "[]0-[b](]a)",
        "[]0-[]]",  # a "]" first in the class the lenient engine counts is a character: that class never ends
        "[]0-[b]",
        "[]a-[b]]",
        "[]0-[b]{]",
        "[]0-[b][]]",
        "[]0-[b][^]]",
        "[]0-[b](?=a)]",
        "[]0-[b](a)\\1]",
        "[]0-[b]a\\b{start}]",  # to that engine "\b" and then a count
        "[]0-[b]a{1000}{1000}{1000}]",
        "[]\\d-[b]]",
        "(?x)[]0- [b]]",  # to the lenient reading the range "0"-" "
    ]
    assert_verdicts(taken, refused)
    # Each in what the one before leaves: read one after the other, without recursing.
    assert regex_ok("[]0-[b]" * 5000 + "x" + "]" * 5000)


def test_class_escapes_are_written_out_for_the_lenient_engine() -> None:
    # When the strict reading reads the pattern to the end, the lenient engine gets each class escape it read
    # in a class as a class ("[0-9]" for "\d"): in extended mode "[ -\d]" is to it the range " "-"[" and then
    # "0-9]", which closes the class, so what follows up to the "]" it counts is a pattern of its own; a class
    # escape first is a nested class, after which a hyphen is a character. A "\cX" the strict reading read it gets
    # as that control character, though the pattern goes on past a look-around. Checked against the reference.
    taken = [
        "(?x)[ -\\d]",
        "(?x)[  -\\d]",
        "(?x)[ -\\w]",
        "(?x)[ -\\S]",
        "(?x)[ -\\D]",
        "(?x)[^ -\\d]",
        "(?x)[\t-\\d]",
        "(?x)[\n-\\d]",
        "(?x)[\v-\\d]",
        "(?x)[#x\n-\\d]",
        "(?x)[a-b -\\d]",
        "(?x)[ -\\da]",
        "(?x)[ -\\d*]",
        "(?x)[ -\\d()]",
        "(?x)[ -\\d{2}]",
        "(?x)[ -\\d[]",
        "(?x)[ -\\d]]",
        "(?x)[][ -\\d]a]",
        "(?x)[ -\\d]a",
        "(?x)[\\d- ]",
        "(?x)[\\S- ]",
        "(?x)[\\cA]",
        "(?x)[\\cA-\\cB]",
        "(?x)[\\cA](?=a)",
        "(?x)((?-x))[ -\\d]",
        "((?x)[ -\\d])",
    ]
    refused = [
        "[ -\\d]",
        "(?x)[ -\\p{L}]",  # not written out
        "(?x)[ -\\n]",
        "(?x)[! -\\d]",
        "(?x)[\u3000-\\d]",  # after "["
        "(?x)[\xa0-\\d]",
        "(?x)[ ^-\\d]",
        "(?x)[ -\\d(]",
        "(?x)[ -\\d)]",
        "(?x)[ -\\d{]",
        "(?x)[][ -\\d](]",
        "(?=x)(?x)[ -\\d]",  # the strict reading stops at the look-ahead: nothing is written out
        "(?x)[ -\\d](?=a)",
        "(?x)[\\d- ](?=a)",
        "(?x)[a# -\\d\na]",  # in the strict reading's comment: not written out
        "(?x)[a#\\d- \na]",
        "(?x)[ -\\cA]",
        "(?=a)(?x)[\\cA]",
    ]
    assert_verdicts(taken, refused)


def test_hyphens_in_a_class_in_extended_mode() -> None:
    # The strict reading takes hyphens first in a class as characters, white space between them skipped, and
    # looks past white space and one "#" (not a comment's text) for the "]" or "-" after a hyphen that makes it
    # no range's. Checked against the reference.
    taken = [
        "(?x)[- -!]",
        "(?x)[ - -!]",
        "(?x)[^- -!]",
        "(?x)[ - -\\d]",
        "(?x)[a - ]",
        "(?x)[a - -]",
        "(?x)[a - - b]",
        '(?x)["-#]\n !]',
    ]
    refused = ["(?x)[a- ]", '(?x)["-#\n !]', '(?x)[" - # c\n !]', "(?x)[z - a]"]
    assert_verdicts(taken, refused)


def test_each_reading_reads_a_class_by_its_own_rules_in_extended_mode() -> None:
    # What the strict reading skips as a comment the lenient one reads by its rules alone. Checked against the
    # reference.
    taken = [
        "(?x)[a#\\e\n]",
        "(?x)[a#\\b\n]",
        "(?x)[a#\\k\n]",
        "(?x)[a#\\G\n]",
        "(?x)[a#\\<\n]",
        "(?x)[a#\\é\n]",
    ]
    refused = ["(?x)[a#\\cA\n]", "(?x)[a#\\q\n]", "(?x)[a#\\p{Foo}\n]", "(?x)[\\b]"]
    assert_verdicts(taken, refused)


def test_readings_that_end_a_class_apart() -> None:
    # In extended mode the two readings may end a class at different places; the lenient reading then reads the
    # rest from its own end by its own rules. Checked against the reference.
    taken = ["(?x)[a#]\n]", "(?x)[ ]]", "(?x)[\n]]\\cA", "(?x)[\t] *]", "(?x)[ ]{,2}]", "(?x)[ ]{]"]
    refused = [
        "(?x)[a#](\n]",
        "(?x)[\t] **]]",
        "(?x)[\n]-\\[^**-[\v\\w]",
        "(?x)[#\\d]\n\\S\\s**]|\n]]",
        "(?x)[ ]|*]",
    ]
    assert_verdicts(taken, refused)


def test_white_space_each_reading_skips_in_extended_mode() -> None:
    # Outside a class the strict reading skips Unicode's White_Space, the lenient one only a space, a tab, a line
    # feed and a carriage return: it takes the rest as characters (which it may repeat). A comment ends at a line
    # feed only, in both. Checked against the reference.
    taken = [
        "(?=a)(?x)(\v*)",
        "(?=a)(?x)(\u3000*)",
        "(?=a)(?x)(\x85*)",
        "(?x)a?\u3000*",
        "(?x)(?:\v(?=a))*",
        "(?x)(?:\v)*",
        "(?x)(?:)\u3000*",
        "(?x)(a)*\v??\\1",
        "(?x)(a)+\u2028++\\1",
        "(?x)[:foo:]\\s]?\u3000*z0",
        "(?=a)(?x)[[:alpha:]|\v*]b",
        "(?x)#\r)",
        "(?=a)(?x)#\u2028)",
    ]
    refused = [
        "(?=a)(?x)(\r*)",
        "(?=a)(?x)( *)",
        "(?x)(\v*)",
        "(?x)a? *",
        "(?x)(?: (?=a))*",
        "(?x)(?:)*",
        "(?x)a?\u3000**",
        "(?x)a(?i)\u3000*",
        "(?x)#\n)",
        "(?=a)(?x)#\n)",
    ]
    assert_verdicts(taken, refused)


def test_white_space_in_braces_in_extended_mode() -> None:
    # In "\\x{…}" and "\\b{…}" only the lenient reading's white space is skipped; in a count the strict reading
    # skips white space and comments between the digits too, while the lenient one reads two numbers apart as plain
    # characters. Checked against the reference.
    taken = [
        "(?x)\\x{ 41}",
        "(?x)\\b{\tstart}",
        "(?=a)(?x)\\b{\t,",
        "(?x)a{2\v41}",
        "(?x)a{2 4 ,1 0 0}",
        "(?x)a{#\n2}",
        "(?x)a{2#\n,3}",
        "(?=a)(?x)\\K{2 4}",
        "(?=a)(?x)\\K{\v2}",
        "(?=a)(?x){2\t41}",
    ]
    refused = [
        "(?x)\\x{\v41}",
        "(?=a)(?x)\\x{\u300041}",
        "(?x)\\b{\u3000start}",
        "(?x)\\b{\f2}",
        "a{2 41}",
        "(?x)a{2 4 ,1 0}",
        "(?x)a{2\x1c4}",
        "(?=a)(?x)\\K{ 2 }",
        "(?x)a{2#}",
    ]
    assert_verdicts(taken, refused)


def test_a_back_reference_in_a_class_stops_the_strict_reading() -> None:
    # The lenient reading then reads the class by its own rules (and takes no back-reference in one). Checked
    # against the reference.
    taken = ["(?x)(a)[ ]\\1", "(?x)(a)[\v]\\1]", "(a)(?x)[\v]{\\1", "(?x)(a)[\u3000]a\\1"]
    refused = ["(a)[\\1]", "(?x)(a)[ ]\\1\\q", "(?x)(a)[ ]\\9", "(?x)[ ]\\1]"]
    assert_verdicts(taken, refused)


def test_white_space_among_flags_in_the_lenient_reading() -> None:
    # While x holds, the lenient reading skips its white space among a flag group's flags (the strict one takes
    # none there). Checked against the reference.
    taken = ["(?=a)(?x)(? i)", "(?=a)(?x)(? )", "(?=a)(?x)(?\ti\t:a)", "(?=a)(?x)(?- )", "(?=a)(?x)(?-\tx)a"]
    refused = [
        "(?x)(? )",
        "(?x)(?i )",
        "(?=a)(?x)(?-x )",
        "(?=a)(?x)(?\u3000i)",
        "(?=a)(?x)(? =a)",
        "(?=a)(?x)(?-)",
    ]
    assert_verdicts(taken, refused)


def test_a_class_rest_closes_groups_the_lenient_engine_writes_out() -> None:
    # The rest of a class (what lies between the end the strict reading finds and the lenient engine's) is read in
    # the program the class lands in, as the lenient engine writes it out: its ")" may close a group opened there
    # before the class, its "(" open one that group's own ")" closes. It writes out a capturing group, an
    # alternation or a concatenation in a larger piece, a repetition in a repetition (but a greedy "*", "+", "?" in
    # another), a class under the i flag in a group of its own; never a group that captures nothing as such. To the
    # strict reading the rest's ")" close groups around the class too. Checked against the reference.
    taken = [
        "([]0-[b])(])",
        "(?<n>[]0-[b])(])",
        "([]0-[b])(]){2}",
        "([]0-[b])|(])",
        "([]0-[b])(?i:])",
        "([]0-[b])(?i)(])",
        "\\b([]0-[b])(])",
        "([]0-[b])(])\\b",
        "(\\b([]0-[b])(]))",
        "([]0-[b])(])(a)\\2",
        "(?i:[]0-[b])(])",
        "(?i)(?:[]0-[b])(])",
        "(?:a(?i)[]0-[b])(])",
        "(?i)(?:a(?:b[]0-[b]))((]))",
        "a(?:b[]0-[b])(])",
        "a(?:b|[]0-[b])(])",
        "c|(?:b|[]0-[b])(])",
        "(?:b[]0-[b])(])*",
        "(?:b[]0-[b])(])a",
        "a(?:b(?:c[]0-[b]))((]))",
        "\\b(?:b|[]0-[b])(])",
        "\\b(?:a(?:b[]0-[b])(]))",
        "(?:(?:[]0-[b])(])*){2}",
        "(?:(?:[]0-[b])(])+?)?",
        "(?:[]0-[b])(])*(?=a)",
        "(?:c|(?:[]0-[b]))((])+)(?=a)",
        "(?=c|[]0-[b])(])a",
        "(?=a)(?>c|[]0-[b])(])",
        "(?:\\b|(?:c|[]0-[b])(]))",
        "(?x)([ -\\d)(])",
        "(?x)(?i:[ -\\d)(])",
        "(?x)(([ -\\d))((]))",
        "(?x)(?i)[ -\\d)(]",
        "(?x)((?i)[ -\\d))((])",
    ]
    refused = [
        "(?:[]0-[b])(])",
        "(?s:[]0-[b])(])",
        "(?-i:[]0-[b])(])",
        "(?i:(?:[]0-[b]))((]))",
        "(?i:(?-i:[]0-[b])(]))",
        "(?i)[]0-[b])(]",
        "(?i)([]0-[b]))((])",
        "([]0-[b])(])\\1",
        "([]0-[b])(]\\b)",
        "(a\\b[]0-[b])(])",
        "\\b([]0-[b])(])\\b",
        "(?:([]0-[b])(]))+\\b",
        "(?:([]0-[b])(]))?\\b",
        "a(?:[]0-[b])(])",
        "(?:b|[]0-[b])(])",
        "c|(?:b[]0-[b])(])",
        "(?:(?:b[]0-[b])(]))",
        "(?:[]0-[b])(])*",
        "\\ba(?:b[]0-[b])(])",
        "a(?:b[]0-[b])(])\\b",
        "(?:b[]0-[b])(])*\\b",
        "(?:(?:[]0-[b])(])+)?",
        "(?:(?:[]0-[b])(])*){0,1}",
        "(?:(?:[]0-[b])(])){2}",
        "(?=[]0-[b])(])a",
        "(?=a)(?>[]0-[b])(])",
        "(c|[]0-[b])(])\\1",
        "\\b([]0-[b])(])?(?=a)",
        "(?x)(?:[ -\\d)(])",
        "(?x)([ -\\d)(?i)])",
        "(?x)([ -\\d)(])\\1",
        "(?x)(?i)[ -\\d))((]",
    ]
    assert_verdicts(taken, refused)


def test_what_each_reading_skips_in_braces() -> None:
    # The lenient reading skips in a count, a "\\b{…}" and a "\\x{…}" what it skips between the parts of a
    # pattern: in extended mode its white space and "#" comments, and comment groups "(?#…)"; out of extended mode
    # the strict reading takes white space after a count's comma only before an upper bound. Checked against the
    # reference.
    taken = [
        "(?x)a{2 #c\n}",
        "(?x)a{#c\n2,3}",
        "a{ 2}",
        "a{2,\t3}",
        "a{2 ,}",
        "(?x)a{2, }",
        "(?x)a{2,\u3000}",
        "(?=a)a{2(?#c)}",
        "(?=a)(?x)a{2#c\n3}*",
        "(?x)\\b{#c\n2}",
        "(?x)\\b{st#c\nart}",
        "(?=a)\\b{(?#c)start}",
        "(?=a)\\b{(?#c),2}",
        "(?x)\\x{4#c\n1}",
        "(?=a)\\x{(?#c)41}",
        "(?=a)[\\x{(?#c)41}]",
        "(?x)[\\x{#c\n41}]",
    ]
    refused = [
        "(?x)a{2 #c\n}*",
        "(?x)a{#c\n2}*",
        "(?=a)(?x)a{,#c\n}*",
        "(?=a)a{(?#c)2}*",
        "(?=a)(?x)a{2(?#c),3}*",
        "a{2, }",
        "a{ 2 , }",
        "a{2,\u3000}",
        "(?x)(?-x)a{2,\t}",
        "(?x)\\b{#c\n,2}",
        "(?=a)\\b{(?#c)}",
        "(?x)\\b{#c\n2}*",
        "(?x)\\x{41#}",
        "(?x)\\x{\x0b41}",
    ]
    assert_verdicts(taken, refused)


def test_a_long_gap_in_a_count_is_read_in_linear_time() -> None:
    # (Once read by a regular expression that backtracked over each way to share the gap among its parts.)
    # A "{" that starts no count is a plain character; the reference agrees on each.
    assert regex_ok("(?=a)(?x)a{" + " " * 20_000 + "x")
    assert regex_ok("(?=a)a{" + "1" * 20_000 + "x")
    assert regex_ok("(?=a)(?x)a{" + " " * 20_000 + "}")
    assert not regex_ok("(?=a)(?x)a{" + " " * 20_000 + "2}*")


def test_a_class_rest_is_priced_with_its_class() -> None:
    # A quantifier first in a class's rest repeats the class; a count after it repeats both (the largest counts
    # taken, checked against the reference).
    taken = [
        "[]0-[b]{119153}]",
        "(?x)[ -\\d{145632}]",
        "(?x)[ -\\w{119153}]",
        "[]0-[b]x]{68983}",
        "[]0-[b]]{87379}",
        "[]0-[b]*{81918}]",
    ]
    refused = [
        "[]0-[b]{119154}]",
        "(?x)[ -\\d{145633}]",
        "(?x)[ -\\w{119154}]",
        "[]0-[b]x]{68984}",
        "[]0-[b]]{87380}",
        "[]0-[b]*{81919}]",
    ]
    assert_verdicts(taken, refused)
