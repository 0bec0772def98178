"""Prompt segments -> token ids (behavior.md#tokenization).

Each special span the template inserted becomes the id of its spelling in the tokenizer's added vocabulary.
Every plain-text gap between two spans is encoded on its own with the tokenizer *without* its added vocabulary,
so text a user typed (``<｜User｜>``) is ordinary byte-level BPE and never a control token. The gaps of a prompt
are encoded together by :meth:`dscodec.vocab.Vocabulary.encode_plain`.

A conversation resends its whole history with every turn, so a caching encoder reuses earlier work in two ways:

* the prompt: the ids of a recent prompt up to the last special token both prompts share, segment for segment.
  The ids of a segment list's prefix that ends with a special token depend on that prefix alone (gaps end at
  special tokens), so equal prefixes have equal ids;
* the gaps: the ids of long text gaps seen before, wherever they sit in the prompt.
"""

from __future__ import annotations

import bisect
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dscodec.conversation import Conversation, ConversationRequest, ModelVersion, UserMessage
from dscodec.errors import TokenizerError, shown
from dscodec.prompt.render import (
    HAND_BUILT_FAILURES,
    RenderedPrompt,
    Segment,
    Special,
    conversation_of,
    explain_failure,
    render_segments,
    special,
)
from dscodec.vocab import TokenizerLike, Vocabulary

__all__ = ["PromptEncoder"]

#: Shorter gaps (template glue such as ``">\n``) are not worth a cache entry.
_CACHE_MIN_CHARS = 64

#: Recent prompts kept for reuse, at most.
_PROMPTS = 16

#: A remembered prompt is dropped when a newer one holds all of it but at most this many trailing ids (the
#: generation prompt ``<｜Assistant｜><think>`` that the next turn replaces with the model's answer).
_SUPERSEDED_TAIL = 16


#: A remembered prompt built on an earlier one keeps only its own ids after the shared ones; past this many links
#: it keeps all of its ids again, so reading a prompt's ids never follows a long chain.
_CHAIN = 8


@dataclass(frozen=True, slots=True)
class _Encoded:
    """A prompt encoded earlier: its segments, its ids, and where each special token sits in both.

    Its ids are ``base``'s first ``shared`` ids followed by ``ids`` (all of them when there is no ``base``): the
    next turn of a conversation stores only what it added, not a second copy of the history. The newest prompt
    keeps its ids as a list, which the next turn slices in a fraction of the time an array takes to become a
    list again; the others keep a compact array (4 bytes an id, not about 40) of all their ids.
    """

    segments: list[Segment]
    ids: list[int] | array[int]
    special_at: array[int]  # segment index of every special token, ascending
    ends: array[int]  # len(ids) right after that special token
    base: _Encoded | None = None
    shared: int = 0
    links: int = 0  # how many bases lead back to one that keeps all its ids

    @property
    def size(self) -> int:
        """How many ids the prompt has."""
        return self.shared + len(self.ids)

    def compact(self) -> _Encoded:
        """The same prompt with all its ids in an array."""
        if self.base is None and isinstance(self.ids, array):
            return self
        return _Encoded(self.segments, array("I", self.prefix(self.size)), self.special_at, self.ends)

    def prefix(self, count: int) -> list[int]:
        """The first ``count`` ids, as a new list."""
        if self.base is None:  # (a prompt of no ids at all has neither base nor shared ids)
            head = self.ids[:count]
            return head if isinstance(head, list) else head.tolist()
        if count <= self.shared:
            return self.base.prefix(count)
        out = self.base.prefix(self.shared)
        out += self.ids[: count - self.shared]
        return out


def _common_prefix(a: list[Segment], b: list[Segment]) -> int:
    """How many leading segments ``a`` and ``b`` share (compared in C). The next turn of a conversation shares all
    but the last few segments of the previous one, so that is tried first, in one pass."""
    n = min(len(a), len(b))
    low = max(0, n - 8)
    if a[:low] != b[:low]:
        high, low = low, 0  # a[:low] == b[:low] and a[:high] != b[:high]
        while high - low > 8:
            middle = (low + high) // 2
            if a[low:middle] == b[low:middle]:
                low = middle
            else:
                high = middle
    while low < n and a[low] == b[low]:
        low += 1
    return low


class PromptEncoder:
    """Renders conversations and encodes them to token ids.

    Args:
        tokenizer: ``None`` for the bundled DeepSeek V4 tokenizer, a path to a ``tokenizer.json`` (or its
            folder), or a ``tokenizers.Tokenizer``. V4.1 prompts need a tokenizer whose added vocabulary has
            ``<｜System｜>``.
        cache_chars: how many characters of text gaps (with their ids) to remember, least recently used first
            out; also bounds the remembered recent prompts (about four characters per id). 0 turns both off. A
            conversation resends its whole history with every turn, so in a serving loop most of a prompt was
            seen before. The ids are the same with or without the caches.

    Raises:
        TypeError: ``cache_chars`` is no ``int``.
        ValueError: ``cache_chars`` is negative.
        TokenizerError: the tokenizer cannot be loaded.

    Examples:
        >>> import dscodec
        >>> request = dscodec.convert("chat_completions", {"model": "DeepSeek-V4-Pro",
        ...     "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "Hi"}]})
        >>> dscodec.PromptEncoder().encode(request)
        [0, 128803, 23166, 128804, 128822]
    """

    def __init__(self, tokenizer: TokenizerLike = None, *, cache_chars: int = 8_000_000) -> None:
        if type(cache_chars) is not int:
            raise TypeError(f"cache_chars must be an int, not {type(cache_chars).__name__}")
        if cache_chars < 0:
            raise ValueError(f"cache_chars must be 0 (no cache) or more, not {shown(cache_chars)}")
        self.vocabulary = Vocabulary.load(tokenizer)
        self._special_ids: dict[str, int] = {}
        self._cache: OrderedDict[str, array[int]] | None = OrderedDict() if cache_chars > 0 else None
        self._cache_chars = cache_chars
        self._cached_chars = 0
        self._prompts: list[_Encoded] | None = [] if cache_chars > 0 else None
        self._lock = threading.Lock()
        # Build the renderer's tables now rather than in the first request.
        for version in ("v4", "v4.1"):
            render_segments(Conversation(messages=[UserMessage(content="Hi")]), version)

    def encode(
        self, request: ConversationRequest | Conversation, *, version: ModelVersion | None = None
    ) -> list[int]:
        """Render ``request`` (a converted request, or a conversation plus ``version``) and encode it.

        Raises:
            SpecialTokenMissing: the template needs a special token the tokenizer lacks.
            TypeError: ``request`` is neither a converted request nor a conversation, a conversation comes
                without ``version``, or a field of a conversation built by hand has the wrong type.
            ValueError: ``version`` is neither ``"v4"`` nor ``"v4.1"``, or a field of a conversation built by
                hand has a value it cannot take (a lone surrogate in a text, say).
        """
        conversation, version = conversation_of(request, version, "encoding")
        try:
            segments, _ = render_segments(conversation, version)
            return self.encode_segments(segments)
        except (*HAND_BUILT_FAILURES, TokenizerError):
            explain_failure(conversation)
            raise

    def encode_rendered(self, prompt: RenderedPrompt) -> list[int]:
        """Encode a rendered prompt from its text and special spans.

        Raises:
            TypeError: ``prompt`` is no :class:`~dscodec.RenderedPrompt`, or its text or spans have the wrong type.
            ValueError: a span is empty, reaches past the text, or is not after the span before it.
            SpecialTokenMissing: a span is no special token of the tokenizer.
        """
        if not isinstance(prompt, RenderedPrompt):
            raise TypeError(
                f"prompt must be a RenderedPrompt (from dscodec.render), not {type(prompt).__name__}"
            )
        segments: list[Segment] = []
        pos = 0
        text = prompt.text
        if not isinstance(text, str):
            raise TypeError(f"prompt.text must be a str, not {type(text).__name__}")
        spans = prompt.special_spans
        if not isinstance(spans, (list, tuple)):
            raise TypeError(f"prompt.special_spans must be a list, not {type(spans).__name__}")
        for index, span in enumerate(spans):
            if not (
                isinstance(span, (list, tuple))
                and len(span) == 2
                and type(span[0]) is int
                and type(span[1]) is int
            ):
                raise TypeError(f"prompt.special_spans[{index}] must be a pair of ints, not {shown(span)}")
            start, end = span
            if not pos <= start < end <= len(text):
                raise ValueError(
                    f"prompt.special_spans[{index}] must be a non-empty span of the text after the span before "
                    f"it (ascending and disjoint, within {len(text)} characters), not {shown(span)}"
                )
            if start > pos:
                segments.append(text[pos:start])
            segments.append(special(text[start:end]))
            pos = end
        if pos < len(text):
            segments.append(text[pos:])
        return self.encode_segments(segments)

    def clear_cache(self) -> None:
        """Forget every cached gap encoding and every remembered prompt."""
        with self._lock:
            if self._cache is not None:
                self._cache.clear()
            self._cached_chars = 0
            if self._prompts is not None:
                self._prompts = []

    def encode_segments(self, segments: Sequence[Segment]) -> list[int]:
        """Encode rendered segments: specials by id, text gaps without the added vocabulary.

        Raises:
            TypeError: ``segments`` is no sequence (a str or a mapping is none either), or a segment is neither a
                ``str`` nor a :class:`~dscodec.prompt.render.Special`.
        """
        if isinstance(segments, (str, bytes, Mapping)) or not isinstance(segments, Iterable):
            raise TypeError(
                f"segments must be a sequence of str and Special segments, not {type(segments).__name__}"
            )
        segments = list(segments)
        reused = self._reuse(segments) if self._prompts else None
        start = 0 if reused is None else reused[0].special_at[reused[1] - 1] + 1
        special_ids = self._special_ids
        # layout: a special id (>= 0), or ~k for the k-th gap
        layout: list[int] = []
        special_at: list[int] = []
        gaps: list[str] = []
        pending: list[str] = []
        for index in range(start, len(segments)):
            segment = segments[index]
            if isinstance(segment, str):
                pending.append(segment)
                continue
            if pending:
                text = pending[0] if len(pending) == 1 else "".join(pending)
                pending.clear()
                if text:
                    layout.append(~len(gaps))
                    gaps.append(text)
            if type(segment) is not Special:
                raise TypeError(f"segment {index} must be a str or a Special, not {type(segment).__name__}")
            token_id = special_ids.get(segment.text)
            if token_id is None:
                token_id = special_ids[segment.text] = self.vocabulary.special_id(segment.text)
            layout.append(token_id)
            special_at.append(index)
        if pending:
            text = "".join(pending)
            if text:
                layout.append(~len(gaps))
                gaps.append(text)

        gap_ids = self._encode_gaps(gaps)
        ids: list[int] = [] if reused is None else reused[0].prefix(reused[0].ends[reused[1] - 1])
        ends: list[int] = []
        for item in layout:
            if item >= 0:
                ids.append(item)
                ends.append(len(ids))
            else:
                ids.extend(gap_ids[~item])
        if self._prompts is not None:
            self._remember(segments, ids, reused, special_at, ends)
        return ids

    def _reuse(self, segments: list[Segment]) -> tuple[_Encoded, int] | None:
        """The remembered prompt sharing the most ids with ``segments``, and how many of its special tokens
        the common prefix holds (the shared ids end with the last of them)."""
        best: tuple[_Encoded, int] | None = None
        best_count = 0
        for prompt in reversed(self._prompts or ()):  # newest first; the list is replaced, never changed
            common = _common_prefix(prompt.segments, segments)
            kept = bisect.bisect_left(prompt.special_at, common)
            if kept and prompt.ends[kept - 1] > best_count:
                best, best_count = (prompt, kept), prompt.ends[kept - 1]
            if kept == len(prompt.special_at):
                break  # all of this prompt is reused; an older one will hardly do better
        return best

    def _remember(
        self,
        segments: list[Segment],
        ids: list[int],
        reused: tuple[_Encoded, int] | None,
        special_at: list[int],
        ends: list[int],
    ) -> None:
        """Keep the prompt just encoded as the newest one (``reused``: the prompt it started from, and how many
        of that prompt's special tokens it shares); ``ids`` goes to the caller, the entry copies what it keeps."""
        dropped: _Encoded | None = None
        if reused is None:
            entry = _Encoded(segments, ids.copy(), array("I", special_at), array("I", ends))
        else:
            old, kept = reused
            shared = old.ends[kept - 1]
            if old.special_at[kept - 1] + 1 == len(segments) == len(old.segments):
                entry = old  # the very same prompt again
            else:
                special_at_all = old.special_at[:kept] + array("I", special_at)
                ends_all = old.ends[:kept] + array("I", ends)
                if shared >= old.size - _SUPERSEDED_TAIL:
                    dropped = old  # the new prompt holds all of it but its last few ids
                if dropped is not None and old.links + 1 < _CHAIN:
                    # The next turn: built on the prompt it replaces, whose ids only it keeps now.
                    entry = _Encoded(
                        segments, ids[shared:], special_at_all, ends_all, old, shared, old.links + 1
                    )
                else:
                    entry = _Encoded(segments, ids.copy(), special_at_all, ends_all)
        with self._lock:
            if self._prompts is None:
                return
            prompts = [p for p in self._prompts if p is not entry and p is not dropped]
            if prompts and (prompts[-1].base is not None or isinstance(prompts[-1].ids, list)):
                prompts[-1] = prompts[-1].compact()  # no longer the newest
            prompts.append(entry)
            budget = self._cache_chars // 4
            while prompts and (len(prompts) > _PROMPTS or sum(p.size for p in prompts) > budget):
                prompts.pop(0)
            self._prompts = prompts

    def _encode_gaps(self, gaps: list[str]) -> list[Sequence[int]]:
        """Ids of every gap: from the cache when seen before, the rest in one call."""
        cache = self._cache
        if cache is None:
            return list(self.vocabulary.encode_plain(gaps))
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
            encoded = self.vocabulary.encode_plain([gaps[i] for i in missing])
            with self._lock:
                for index, ids in zip(missing, encoded):
                    gap = gaps[index]
                    found[index] = ids
                    if _CACHE_MIN_CHARS <= len(gap) <= self._cache_chars and gap not in cache:
                        cache[gap] = array("I", ids)
                        self._cached_chars += len(gap)
                while self._cached_chars > self._cache_chars:
                    old, _ = cache.popitem(last=False)
                    self._cached_chars -= len(old)
        return found  # type: ignore[return-value]
