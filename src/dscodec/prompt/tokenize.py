"""Prompt segments -> token ids (spec §4).

Each special span the template inserted becomes the id of its spelling in the tokenizer's added vocabulary.
Every plain-text gap between two spans is encoded on its own with the tokenizer *without* its added vocabulary,
so text a user typed (``<｜User｜>``) is ordinary byte-level BPE and never a control token. All gaps of a prompt
go to Hugging Face ``tokenizers`` in one batch call, which releases the GIL and spreads the work over every core.

Very long gaps (a whole source file in a tool result) are cut into pieces first, so one huge gap does not keep
one core busy while the others idle. A cut is only made where the pre-tokenizer is certain to start a new word
(see :meth:`dscodec.vocab.Vocabulary.pieces`), which leaves the ids unchanged.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence

from tokenizers import Encoding

from dscodec.conversation import Conversation, ConversationRequest, ModelVersion
from dscodec.errors import TokenizerError
from dscodec.prompt.render import RenderedPrompt, Segment, Special, render_segments
from dscodec.vocab import TokenizerLike, Vocabulary

__all__ = ["PromptEncoder"]

#: Gaps longer than this many characters are cut into pieces of about this size before batch encoding.
PIECE_CHARS = 16_384

#: Shorter gaps (template glue such as ``">\n``) are not worth a cache entry.
_CACHE_MIN_CHARS = 64


class PromptEncoder:
    """Renders conversations and encodes them to token ids.

    Args:
        tokenizer: ``None`` for the bundled DeepSeek V4 tokenizer, a path to a ``tokenizer.json`` (or its
            folder), or a ``tokenizers.Tokenizer``. V4.1 prompts need a tokenizer whose added vocabulary has
            ``<｜System｜>``.
        cache_chars: how many characters of text gaps (with their ids) to remember, least recently used first
            out; 0 turns the cache off. A conversation resends its whole history with every turn, so in a
            serving loop most gaps were seen before. The ids are the same with or without the cache.

    Examples:
        >>> import dscodec
        >>> request = dscodec.convert("chat_completions", {"model": "DeepSeek-V4-Pro",
        ...     "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "Hi"}]})
        >>> dscodec.PromptEncoder().encode(request)
        [0, 128803, 23166, 128804, 128822]
    """

    def __init__(self, tokenizer: TokenizerLike = None, *, cache_chars: int = 8_000_000) -> None:
        self.vocabulary = Vocabulary.load(tokenizer)
        self._plain = self.vocabulary.plain
        self._special_ids: dict[str, int] = {}
        self._cache: OrderedDict[str, array[int]] | None = OrderedDict() if cache_chars > 0 else None
        self._cache_chars = cache_chars
        self._cached_chars = 0
        self._lock = threading.Lock()

    def encode(
        self, request: ConversationRequest | Conversation, *, version: ModelVersion | None = None
    ) -> list[int]:
        """Render ``request`` (a converted request, or a conversation plus ``version``) and encode it.

        Raises:
            SpecialTokenMissing: the template needs a special token the tokenizer lacks.
        """
        if isinstance(request, ConversationRequest):
            conversation, version = request.conversation, version or request.model_version
        else:
            if version is None:
                raise TypeError("encoding a Conversation needs version='v4' or 'v4.1'")
            conversation = request
        segments, _ = render_segments(conversation, version)
        return self.encode_segments(segments)

    def encode_rendered(self, prompt: RenderedPrompt) -> list[int]:
        """Encode a rendered prompt from its text and special spans."""
        segments: list[Segment] = []
        pos = 0
        text = prompt.text
        for start, end in prompt.special_spans:
            if start > pos:
                segments.append(text[pos:start])
            segments.append(Special(text[start:end]))
            pos = end
        if pos < len(text):
            segments.append(text[pos:])
        return self.encode_segments(segments)

    def _encode_gaps(self, gaps: list[str]) -> list[Sequence[int]]:
        """Ids of every gap: from the cache when seen before, the rest in one batch call."""
        cache = self._cache
        if cache is None:
            return [e.ids for e in self._batch(gaps)]
        found: list[Sequence[int] | None] = [None] * len(gaps)
        missing: list[int] = []
        with self._lock:
            for index, gap in enumerate(gaps):
                hit = cache.get(gap) if len(gap) >= _CACHE_MIN_CHARS else None
                if hit is None:
                    missing.append(index)
                else:
                    cache.move_to_end(gap)
                    found[index] = hit
        if missing:
            encodings = self._batch([gaps[i] for i in missing])
            with self._lock:
                for index, encoding in zip(missing, encodings):
                    gap = gaps[index]
                    if len(gap) >= _CACHE_MIN_CHARS and len(gap) <= self._cache_chars:
                        ids = array("I", encoding.ids)
                        if gap not in cache:
                            cache[gap] = ids
                            self._cached_chars += len(gap)
                        found[index] = ids
                    else:
                        found[index] = encoding.ids
                while self._cached_chars > self._cache_chars:
                    old, _ = cache.popitem(last=False)
                    self._cached_chars -= len(old)
        return found  # type: ignore[return-value]

    def _batch(self, texts: list[str]) -> list[Encoding]:
        if not texts:
            return []
        try:
            return self._plain.encode_batch_fast(texts, add_special_tokens=False)
        except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception subclass
            raise TokenizerError(
                f"tokenizer {self.vocabulary.name} failed to encode the prompt: {exc}"
            ) from None

    def clear_cache(self) -> None:
        """Forget every cached gap encoding."""
        with self._lock:
            if self._cache is not None:
                self._cache.clear()
            self._cached_chars = 0

    def encode_segments(self, segments: Sequence[Segment]) -> list[int]:
        """Encode rendered segments: specials by id, text gaps in one batch without the added vocabulary."""
        special_ids = self._special_ids
        # layout: an int is a special id; a (first, count) pair refers to encoded gap pieces.
        layout: list[int | tuple[int, int]] = []
        gaps: list[str] = []
        pending: list[str] = []

        def flush() -> None:
            text = "".join(pending) if len(pending) > 1 else pending[0]
            pending.clear()
            if not text:
                return
            first = len(gaps)
            if len(text) > PIECE_CHARS:
                gaps.extend(self.vocabulary.pieces(text, PIECE_CHARS))
            else:
                gaps.append(text)
            layout.append((first, len(gaps) - first))

        for segment in segments:
            if isinstance(segment, str):
                pending.append(segment)
                continue
            if pending:
                flush()
            spelling = segment.text
            token_id = special_ids.get(spelling)
            if token_id is None:
                token_id = special_ids[spelling] = self.vocabulary.special_id(spelling)
            layout.append(token_id)
        if pending:
            flush()

        pieces = self._encode_gaps(gaps)
        ids: list[int] = []
        for item in layout:
            if isinstance(item, int):
                ids.append(item)
            else:
                first, count = item
                for index in range(first, first + count):
                    ids.extend(pieces[index])
        return ids
