"""How plain text is cut before ``tokenizers`` sees it: where a long text may be split into pieces without
changing its ids, and the pre-tokenizer words of text in the word alphabet (see :mod:`dscodec.vocab`)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from dscodec.errors import TokenizerError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "CUT",
    "SEPARATOR",
    "added_spelling_test",
    "cutting_is_safe",
    "is_word_text",
    "safe_cuts",
    "splits_words_exactly",
    "tokenizers_module",
    "word_res",
    "word_tokenizer",
]


@functools.cache
def tokenizers_module() -> Any:
    """The ``tokenizers`` package, imported on first use: ``import dscodec`` does not pay for it.

    Raises:
        TokenizerError: the installed ``tokenizers`` is older than 0.20 (it has no ``encode_batch_fast``).
    """
    import tokenizers

    if not hasattr(tokenizers.Tokenizer, "encode_batch_fast"):
        raise TokenizerError(
            f"dscodec needs tokenizers 0.20 or later, and tokenizers {tokenizers.__version__} is installed"
        )
    return tokenizers


#: What joins new words into one text for ``tokenizers``: a character outside the word alphabet.
SEPARATOR = "\x00"

# -- where text may be cut ---------------------------------------------------------------------------------------

#: A line break followed by spaces or tabs and then a character that is not whitespace.
CUT = re.compile(r"\n(?=[ \t]*[^\s])")


def safe_cuts(text: str, piece: int) -> list[int]:
    """Offsets (each at least ``piece`` characters apart) where ``text`` may be cut without changing its tokens.

    A cut goes right after a line break that is followed by spaces or tabs and then a character that is not
    whitespace. The DeepSeek V4 pre-tokenizer always starts a new word there: of its pattern's alternatives, only
    ``\\s*[\\r\\n]+`` and `` ?[\\p{P}\\p{S}]+[\\r\\n]*`` can take a line break, both end with line breaks, and no
    other line break follows before the next word; at any whitespace before the break ``\\s*[\\r\\n]+`` is the
    first alternative that matches, and it ends at the break. BPE merges never cross words, so encoding the two
    sides separately yields the same ids. Python's ``\\s`` holds every character Unicode calls white space, so
    the character after the spaces is never one the pre-tokenizer treats as whitespace. The vocabulary checks
    that the tokenizer uses that pre-tokenizer before it cuts.
    """
    cuts: list[int] = []
    start = 0
    while len(text) - start > piece:
        match = CUT.search(text, start + piece)
        if match is None:
            break
        start = match.end()
        cuts.append(start)
    return cuts


#: The pre-tokenizer pattern that makes "newline, then ASCII letter" a word boundary (the DeepSeek V4 one).
_SAFE_PATTERN = (
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
    " ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

#: The whole DeepSeek V4 pre-tokenizer (``trim_offsets`` left out: it changes offsets, never ids).
_V4_PRE_TOKENIZER = {
    "type": "Sequence",
    "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": False},
        {
            "type": "Split",
            "pattern": {"Regex": "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"},
            "behavior": "Isolated",
            "invert": False,
        },
        {"type": "Split", "pattern": {"Regex": _SAFE_PATTERN}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False},
    ],
}


def _state(component: Any) -> Any:
    """The JSON form of a tokenizer component (normalizer, pre-tokenizer), or None when there is none."""
    return None if component is None else json.loads(component.__getstate__())


def cutting_is_safe(tokenizer: Tokenizer) -> bool:
    """Whether :func:`safe_cuts` holds for this tokenizer: the DeepSeek V4 pre-tokenizer, no normalizer, and no
    added token that holds a line break or swallows the whitespace around it."""
    if _state(tokenizer.normalizer) not in (None, {"type": "Sequence", "normalizers": []}):
        return False
    for token in tokenizer.get_added_tokens_decoder().values():
        if "\n" in token.content or "\r" in token.content or token.lstrip or token.rstrip:
            return False
    pre = _state(tokenizer.pre_tokenizer) or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    patterns = [s.get("pattern", {}).get("Regex") for s in steps if s.get("type") == "Split"]
    others = [s.get("type") for s in steps if s.get("type") != "Split"]
    return _SAFE_PATTERN in patterns and others == ["ByteLevel"] and steps[-1].get("use_regex") is False


# -- words of plain text -------------------------------------------------------------------------------------------

# The word alphabet: printable ASCII, tab, line feed, carriage return, the Latin-1 letters, and common typographic
# punctuation and symbols (curly quotes, dashes, ellipsis, bullets, currency, arrows). Each character's general
# category has been the same since Unicode 1.1, so every Unicode version agrees on which class below it is in;
# tests/unit/test_vocab.py checks the classes against Python's unicodedata and the splits against ``tokenizers``.
_LETTERS = "A-Za-z\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff"  # \p{L}
_ASCII_PUNCT = "!-/:-@\\[-`{-~"  # the 32 ASCII punctuation characters; each is in \p{P} or \p{S}
_MORE_PUNCT = (  # \p{P} or \p{S}
    "\u00a1-\u00a9\u00ab\u00ac\u00ae-\u00b1\u00b4\u00b6-\u00b8\u00bb\u00bf\u00d7\u00f7"
    "\u2010-\u2027\u2030-\u203e\u20ac\u2122\u2190-\u2193"
    # CJK punctuation and the full-width forms of the ASCII punctuation: 、。〃 〈〉《》「」『』【】 〔〕…〟 ！…／ ：…＠ ［…｀ ｛…～
    "\u3001-\u3003\u3008-\u3011\u3014-\u301f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff5e"
    # The replacement character, which decoded model output holds where its bytes were not UTF-8 (a symbol).
    "\ufffd"
)
_SPACE = "\t\n\r "  # \s
#: The letters and marks of the runs the pre-tokenizer's second step isolates (CJK ideographs, hiragana,
#: katakana; the range's punctuation, symbols and unassigned code points left out). The third step then finds
#: one word in such a run: ``[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`` takes all of it.
_CJK = "\u4e00-\u9fa5\u3041-\u3096\u3099\u309a\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff"

#: The words the DeepSeek V4 pre-tokenizer makes of text in the word alphabet, in order, with nothing left over.
#: Its first step isolates runs of at most three digits (``\p{N}{1,3}``: ``[0-9]`` here), which no later step
#: splits again; the second isolates runs of CJK characters, which the third leaves whole (see :data:`_CJK`; no
#: other class below holds one of those characters, so no other word reaches into a run); the third applies its
#: pattern to each piece between those runs, alternatives in the same order, with the classes above: the first
#: alternative's class and letters are ASCII in the pattern itself, ``\p{M}`` is empty here,
#: ``[^\r\n\p{L}\p{P}\p{S}]`` is a space or a tab (digits and CJK never get there: they are pieces of their
#: own), and the end of a piece, which ``\s+(?!\S)`` may end on, is also where a digit or a CJK character
#: follows. Every character of the alphabet starts a match of some alternative, so the words always add up to
#: the text.
_WORD_PATTERN = (
    # The letters alternative is tried first, out of the order above, because most words are letters: none of
    # the three alternatives it overtakes starts with a space, a tab or a letter, so the words are the same.
    f"[\t ]?[{_LETTERS}]+"
    "|[0-9]{1,3}"
    f"|[{_CJK}]+"
    f"|[{_ASCII_PUNCT}][A-Za-z]+"
    f"| ?[{_ASCII_PUNCT}{_MORE_PUNCT}]+[\r\n]*"
    f"|[{_SPACE}]*[\r\n]+"
    f"|[{_SPACE}]+(?![^{_SPACE}0-9{_CJK}])"
    f"|[{_SPACE}]+"
)
_NOT_WORD_PATTERN = f"[^{_SPACE}0-9{_LETTERS}{_ASCII_PUNCT}{_MORE_PUNCT}{_CJK}]"


@functools.cache
def word_res() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """:data:`_WORD` and :data:`_NOT_WORD_TEXT`, compiled on first use (their classes take milliseconds)."""
    return re.compile(_WORD_PATTERN), re.compile(_NOT_WORD_PATTERN)


def word_tokenizer(tokenizer: Tokenizer) -> tuple[Tokenizer, int | None]:
    """A tokenizer that encodes each word on its own (the model and the byte-level step of the plain pipeline)
    when its words are split by :data:`SEPARATOR`, and the one id of the separator (None if it is not one id:
    then words are encoded one text each)."""
    tk = tokenizers_module()
    words = tk.Tokenizer(tokenizer.model)
    byte_level = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    words.pre_tokenizer = tk.pre_tokenizers.Sequence(
        [tk.pre_tokenizers.Split(SEPARATOR, behavior="isolated"), byte_level]
    )
    separator = words.encode(SEPARATOR, add_special_tokens=False).ids
    probe = words.encode(f"a{SEPARATOR}b", add_special_tokens=False).ids
    if len(separator) == 1 and probe.count(separator[0]) == 1:
        return words, separator[0]
    words.pre_tokenizer = byte_level
    return words, None


def is_word_text(text: str) -> bool:
    return word_res()[1].search(text) is None


def splits_words_exactly(tokenizer: Tokenizer) -> bool:
    """Whether the plain tokenizer splits text as :data:`_WORD` does and encodes each word on its own: the V4
    pre-tokenizer, no normalizer, no truncation or padding, and a BPE model without dropout."""
    pre = _state(tokenizer.pre_tokenizer)
    if isinstance(pre, dict) and pre.get("type") == "Sequence":
        for step in pre.get("pretokenizers", []):
            if isinstance(step, dict) and step.get("type") == "ByteLevel":
                step.pop("trim_offsets", None)
    model = tokenizer.model
    return (
        pre == _V4_PRE_TOKENIZER
        and _state(tokenizer.normalizer) in (None, {"type": "Sequence", "normalizers": []})
        and tokenizer.truncation is None
        and tokenizer.padding is None
        and isinstance(model, tokenizers_module().models.BPE)
        and not model.dropout
    )


# -- added-token spellings in text -----------------------------------------------------------------------------------


def added_spelling_test(spellings: Iterable[str]) -> Callable[[str], bool] | None:
    """A test of whether a text holds any of ``spellings`` (the added vocabulary), or None when the spellings
    are too short to index (one character).

    The test looks only where a spelling's first character stands, and there walks a tree of the spellings'
    characters as far as the text follows one. So a text without those first characters costs one scan, and each
    place costs the characters the text shares with a spelling, not the number of spellings: the DeepSeek
    vocabulary has 862 spellings that start with ``<｜``, and model output of ``<｜`` over and over (it may be
    anything) must not cost 862 comparisons a place.
    """
    root: dict[str, Any] = {}
    for spelling in spellings:
        if len(spelling) < 2:
            return None
        node = root
        for char in spelling:
            node = node.setdefault(char, {})
        node[""] = None  # a spelling ends here
    if not root:
        return lambda text: False
    firsts = re.compile("[" + "".join(re.escape(c) for c in sorted(root)) + "]")

    def holds_spelling(text: str) -> bool:
        size = len(text)
        for match in firsts.finditer(text):
            at = match.start() + 1
            node = root[text[at - 1]]
            while at < size:
                node = node.get(text[at])
                if node is None:
                    break
                if "" in node:
                    return True
                at += 1
        return False

    return holds_spelling
