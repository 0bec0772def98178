"""The vocabulary: one parse of tokenizer.json, the plain tokenizer, the word path, counting, the byte table.

The word path (:data:`dscodec.vocab._WORD` plus remembered word ids) must give exactly the ids of the plain
``tokenizers`` tokenizer; these tests compare the two word by word and id by id, over every character of the word
alphabet in many contexts and over generated text.
"""

from __future__ import annotations

import itertools
import os
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from dscodec import _words as words_module
from dscodec import vocab as vocab_module
from dscodec._words import is_word_text
from dscodec.errors import TokenizerError
from dscodec.vocab import (
    _NOT_WORD_TEXT,
    _WORD,
    Vocabulary,
    _byte_decoder,
    safe_cuts,
)

VOCAB = Vocabulary.load(None)
PLAIN = VOCAB.plain
FULL = VOCAB.full
DECODE = _byte_decoder()

#: Every character of the word alphabet below U+2200, the CJK punctuation and full-width forms, and U+FFFD.
ALPHABET = [
    chr(c)
    for c in itertools.chain(range(0x2200), range(0x3000, 0x3040), range(0xFF00, 0xFF70), [0xFFFD])
    if _NOT_WORD_TEXT.match(chr(c)) is None
]
#: The characters the pre-tokenizer isolates in CJK runs (U+3040-U+30FF all of them, ideographs sampled).
CJK = [
    chr(c)
    for c in itertools.chain(range(0x3040, 0x3100), range(0x4E00, 0x9FA6, 97), [0x9FA5])
    if re.match(f"[{words_module._CJK}]", chr(c))
]


def hf_words(text: str) -> list[str]:
    """The plain tokenizer's pre-tokenizer words of ``text``, back in the original characters."""
    return [
        bytes(DECODE[c] for c in piece).decode("utf-8")
        for piece, _ in PLAIN.pre_tokenizer.pre_tokenize_str(text)
    ]


def plain_ids(text: str) -> list[int]:
    return PLAIN.encode(text, add_special_tokens=False).ids


def test_the_bundled_tokenizer_takes_the_word_path() -> None:
    assert VOCAB._words is not None and VOCAB._cuttable


def test_the_alphabet_classes_agree_with_unicode() -> None:
    letters = re.compile(f"[{words_module._LETTERS}]")
    punct = re.compile(f"[{words_module._ASCII_PUNCT}{words_module._MORE_PUNCT}]")
    for char in ALPHABET:
        category = unicodedata.category(char)
        assert not re.match(f"[{words_module._CJK}]", char)
        if char in "\t\n\r ":
            assert char.isspace()
        elif char.isdigit():
            assert "0" <= char <= "9"
        elif letters.match(char):
            assert category.startswith("L"), (char, category)
        else:
            assert punct.match(char) and category[0] in "PS", (char, category)
        assert category[0] != "N" or char.isascii()
    assert len(ALPHABET) == 231 + 58 and len(CJK) == 402
    for char in CJK:
        assert _NOT_WORD_TEXT.match(char) is None
        assert not letters.match(char) and not punct.match(char) and not char.isspace() and not char.isdigit()
        assert unicodedata.category(char)[0] in "LM", char
    # outside the runs, a space, a digit, unassigned, punctuation and symbols in the runs' range
    for char in "\u9fa6\u3000\uff10\u3040\u3097\u3098\u309b\u309c\u30a0\u30fb":
        assert _NOT_WORD_TEXT.match(char)


# Contexts that tell the classes apart: letters, digits, punctuation, spaces and line breaks on either side.
CONTEXTS = [
    "{}",
    "a{}b",
    "{}a",
    "a{}",
    " {}",
    "{} ",
    "1{}2",
    "{}1",
    ". {}",
    "{}.",
    "{}{}",
    " {}{}\n",
    "\n{}a",
    "x\n{}",
    "{}\n\n y",
    "  {}  ",
    "\t{}\tz",
    "_{}",
    "{}_a",
    "'{}s",
    "é{}",
    "{}é",
    "—{}—",
    "9999{}",
    "中{}文",
    "{}中",
    "中{}",
    " {} 中",
    "中 {}",
    "カ{}1",
    "{}，",
    "，{}",
]


def test_every_character_splits_like_tokenizers() -> None:
    for char in ALPHABET + CJK:
        for context in CONTEXTS:
            text = context.format(char, char)
            assert _WORD.findall(text) == hf_words(text), repr(text)


word_text = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "def",
                "x",
                "Y",
                "é",
                "’",
                "“",
                "—",
                "…",
                "€",
                "×",
                "ß",
                "_a",
                ".b",
                "'s",
                "->",
                "123",
                "4567",
                "0",
                "  ",
                " ",
                "\n",
                "\r\n",
                "\n\n",
                "\t",
                "\r",
                " \n ",
                "(",
                ")",
                "{",
                "}",
                "#",
            ]
        ),
        st.sampled_from(
            [
                "中文",
                "日本語のテキスト",
                "，",
                "。",
                "ー",
                "ヷ",
                "「引用」",
                "（注）",
                " 中",
                "中 ",
                "\n中",
                "ゝ",
            ]
        ),
        st.sampled_from(ALPHABET),
        st.sampled_from(CJK),
    ),
    max_size=200,
).map("".join)


@given(word_text)
def test_word_split_equals_the_pre_tokenizer(text: str) -> None:
    assert is_word_text(text)
    words = _WORD.findall(text)
    assert "".join(words) == text
    assert words == hf_words(text)
    assert VOCAB.encode_plain([text]) == [plain_ids(text)]


# Anything: the word alphabet, CJK, other scripts, digits of other scripts, unusual whitespace, marks, emoji,
# and spellings of added tokens.
any_text = st.lists(
    st.one_of(
        word_text,
        st.sampled_from(
            [
                "中文",
                "日本語のテキスト",
                "，",
                "。",
                "١٢٣",
                "５",
                "²",
                "\u00a0",
                "\u2028",
                "\u3000",
                "\x0b",
                "\x0c",
                "\x1c",
                "\x85",
                "\u200b",
                "́",
                "😀",
                "Ω",
                "ж",
                "<｜User｜>",
                "<think>",
                "\n中",
                "\n ж",
            ]
        ),
        st.text(max_size=5),
    ),
    max_size=30,
).map("".join)


@given(st.lists(any_text, max_size=6))
def test_encode_plain_equals_the_plain_tokenizer(texts: list[str]) -> None:
    assert VOCAB.encode_plain(texts) == [plain_ids(t) for t in texts]


@given(any_text, st.integers(min_value=1, max_value=40))
def test_safe_cuts_keep_the_ids_of_any_text(text: str, piece: int) -> None:
    bounds = [0, *safe_cuts(text, piece), len(text)]
    cut = [i for a, b in itertools.pairwise(bounds) for i in plain_ids(text[a:b])]
    assert cut == plain_ids(text)
    cut_full = [
        i for a, b in itertools.pairwise(bounds) for i in FULL.encode(text[a:b], add_special_tokens=False).ids
    ]
    assert cut_full == FULL.encode(text, add_special_tokens=False).ids


def test_mixed_lines_and_short_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocab_module, "PIECE_CHARS", 8)
    text = "def f():\n    return 1\n中文在这里\nok ’quoted’\n  ж\nlast line\n" * 20
    parts = VOCAB._parts(text)
    assert "".join(p for p, _ in parts) == text
    assert {is_words for _, is_words in parts} == {True, False}
    assert VOCAB.encode_plain([text, text[:7], ""]) == [plain_ids(text), plain_ids(text[:7]), []]


def test_word_memory_starts_over_and_long_words_are_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    vocab = VOCAB
    monkeypatch.setattr(vocab, "_word_ids", {})  # a memory of its own, given back after the test
    monkeypatch.setattr(vocab_module, "_WORD_MEMO_SIZE", 5)
    texts = ["alpha beta gamma delta", "epsilon zeta eta theta iota", "alpha " + "=" * 300 + " kappa"]
    for _ in range(2):
        assert vocab.encode_plain(texts) == [plain_ids(t) for t in texts]
        assert len(vocab._word_ids) <= 5 + 12
    assert "=" * 300 not in vocab._word_ids


@given(any_text)
def test_count_tokens_equals_the_full_tokenizer(text: str) -> None:
    expected = len(FULL.encode(text, add_special_tokens=False).ids)
    assert VOCAB.count_tokens(text) == expected
    assert VOCAB.count_tokens(text) == expected  # again, with the text's words remembered


def test_count_tokens_with_words_too_long_to_remember(monkeypatch: pytest.MonkeyPatch) -> None:
    """Word text whose words were all seen is counted from the word memory; a word too long to be kept sends
    the count the encoding way, every time."""
    vocab = VOCAB
    monkeypatch.setattr(vocab, "_word_ids", {})  # a memory of its own, given back after the test
    for text in ["alpha beta", "alpha " + "=" * 300 + " beta", "=" * 300]:
        expected = len(FULL.encode(text, add_special_tokens=False).ids)
        assert [vocab.count_tokens(text) for _ in range(3)] == [expected] * 3
    assert "=" * 300 not in vocab._word_ids


_SOME_SPELLINGS = sorted(VOCAB.added)[::50]


@given(
    st.lists(
        st.one_of(
            st.sampled_from(_SOME_SPELLINGS),
            st.sampled_from(_SOME_SPELLINGS).flatmap(
                lambda s: st.integers(1, len(s) - 1).map(lambda k: s[:k])
            ),
            st.sampled_from(["<", "｜", "<｜", "a", " ", "\n", "中"]),
        ),
        max_size=12,
    ).map("".join)
)
def test_the_added_spelling_test_finds_exactly_the_spellings(text: str) -> None:
    holds = words_module.added_spelling_test(VOCAB.added)
    assert holds is not None
    assert holds(text) == any(spelling in text for spelling in VOCAB.added)
    assert VOCAB.count_tokens(text) == len(FULL.encode(text, add_special_tokens=False).ids)


def test_the_added_spelling_test_needs_two_characters() -> None:
    assert words_module.added_spelling_test(["<a>", "x"]) is None
    nothing = words_module.added_spelling_test([])
    assert nothing is not None and not nothing("<｜User｜>")


def test_the_added_spelling_test_costs_the_text_not_the_spellings() -> None:
    """Each place a spelling could start was compared with every spelling of its first two characters: 862 of
    the DeepSeek vocabulary start with ``<｜``, so reasoning of ``<｜`` over and over (counted at the end of a
    stream) took half a minute for 400,000 characters. Now each place costs the characters the text shares with
    a spelling."""
    holds = words_module.added_spelling_test(VOCAB.added)
    assert holds is not None
    for text in ("<｜" * 200_000, "<|" * 200_000, "<｜place▁holder▁no▁" * 20_000):
        assert not holds(text)
        assert holds("<｜User｜>" + text)
    assert holds("<｜" * 200_000 + "<｜User｜>")


def test_count_tokens_of_long_text_with_added_spellings() -> None:
    spellings = sorted(VOCAB.added)[:40]
    text = "\n".join(f"line {i} {spellings[i % 40]} 中文 text’s\n  indented" for i in range(3_000))
    assert len(VOCAB.pieces(text, vocab_module.PIECE_CHARS)) > 10
    assert VOCAB.count_tokens(text) == len(FULL.encode(text, add_special_tokens=False).ids)


def test_plain_has_no_added_vocabulary_and_full_has_all() -> None:
    assert PLAIN.get_added_tokens_decoder() == {}
    assert FULL.token_to_id("<｜User｜>") == VOCAB.added["<｜User｜>"] == 128803
    assert 128803 not in plain_ids("<｜User｜>")


def test_byte_table_equals_the_vocabulary() -> None:
    expected: dict[int, bytes] = {}
    for token, token_id in FULL.get_vocab(with_added_tokens=False).items():
        try:
            expected[token_id] = bytes(DECODE[c] for c in token)
        except KeyError:
            expected[token_id] = token.encode("utf-8")
    for spelling, token_id in VOCAB.added.items():
        expected[token_id] = spelling.encode("utf-8")
    rows = [b""] * (max(expected) + 1)
    for token_id, data in expected.items():
        rows[token_id] = data
    assert VOCAB.id_bytes == rows
    assert VOCAB.token_bytes(-1) == VOCAB.token_bytes(len(rows)) == b""


def small_tokenizer() -> Tokenizer:
    """A byte-level tokenizer of 256 ids and two added tokens: what the loading and caching rules need, in
    milliseconds (the bundled vocabulary takes about a second a load)."""
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tokenizer = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"])
    return tokenizer


def test_a_tokenizer_object_is_copied() -> None:
    tokenizer = small_tokenizer()
    vocab = Vocabulary.load(tokenizer)
    tokenizer.add_special_tokens(["<｜mine｜>"])
    assert "<｜mine｜>" not in vocab.added and vocab.full.token_to_id("<｜mine｜>") is None
    assert vocab.encode_plain(["Hello <｜mine｜>"]) == Vocabulary.load(small_tokenizer()).encode_plain(
        ["Hello <｜mine｜>"]
    )


def test_the_same_tokenizer_object_is_loaded_once_while_it_is_unchanged() -> None:
    # StreamProcessor(..., tokenizer=...) loads on every response: the same object must not cost a second each.
    tokenizer = small_tokenizer()
    first = Vocabulary.load(tokenizer)
    assert Vocabulary.load(tokenizer) is first
    tokenizer.add_special_tokens(["<｜mine｜>"])
    changed = Vocabulary.load(tokenizer)
    assert changed is not first and "<｜mine｜>" in changed.added and "<｜mine｜>" not in first.added
    assert Vocabulary.load(tokenizer) is changed
    other = small_tokenizer()
    other.add_special_tokens(["<｜mine｜>"])
    assert Vocabulary.load(other) is not changed


def test_the_same_tokenizer_file_is_loaded_once_until_it_changes(tmp_path: Path) -> None:
    file = tmp_path / "tokenizer.json"
    small_tokenizer().save(str(file))
    first = Vocabulary.load(file)
    assert Vocabulary.load(str(file)) is first and Vocabulary.load(tmp_path) is first
    stat = file.stat()
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    again = Vocabulary.load(file)
    assert again is not first and again.added == first.added
    assert Vocabulary.load(file) is again


def test_only_the_last_loaded_tokenizers_are_kept() -> None:
    tokenizers = [small_tokenizer() for _ in range(vocab_module._Loaded.LIMIT + 1)]
    loaded = [Vocabulary.load(tokenizer) for tokenizer in tokenizers]
    assert [Vocabulary.load(tokenizer) for tokenizer in tokenizers[1:]] == loaded[1:]  # the newest are kept
    assert Vocabulary.load(tokenizers[0]) is not loaded[0]  # the oldest was forgotten


@pytest.mark.parametrize("count", [0, 1, 7, 3_000])
def test_new_words_joined_into_texts_give_each_words_ids(count: int) -> None:
    # Enough words for several joined texts (and none, one, a few): each word's ids as if encoded alone.
    letters = ["".join(chr(97 + (k // 26**p) % 26) for p in range(3)) for k in range(count)]
    words = [f" w{w}" if k % 3 else f"字{chr(0x4E00 + k)}" for k, w in enumerate(letters)]
    assert sum(map(len, words)) + count > 2 * vocab_module._JOINED_CHARS or count < 3_000
    expected = [tuple(VOCAB.plain.encode(word, add_special_tokens=False).ids) for word in words]
    assert VOCAB._encode_new_words(words) == expected


def test_a_tokenizers_older_than_0_20_is_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    """tokenizers before 0.20 has no ``encode_batch_fast``: loading a vocabulary says which version is needed."""
    import sys
    import types

    old = types.ModuleType("tokenizers")
    old.__version__ = "0.19.1"  # type: ignore[attr-defined]
    old.Tokenizer = type("Tokenizer", (), {"encode_batch": lambda self: None})  # type: ignore[attr-defined]
    words_module.tokenizers_module.cache_clear()
    monkeypatch.setitem(sys.modules, "tokenizers", old)
    try:
        with pytest.raises(TokenizerError, match=r"needs tokenizers 0\.20 or later.*0\.19\.1 is installed"):
            words_module.tokenizers_module()
    finally:
        monkeypatch.undo()
        words_module.tokenizers_module.cache_clear()
    assert words_module.tokenizers_module().Tokenizer is Tokenizer
