"""Token ids to text, incrementally (behavior.md#token-chunks-and-usage).

:class:`IncrementalDecoder` turns the ids a model server streams into text with the vocabulary's byte table:

* ordinary ids contribute their bytes; a UTF-8 sequence split across ids (emoji ``😀`` = ids ``[28927, 225]``) is
  held until it completes, so no U+FFFD ever appears for valid UTF-8, however the ids are split;
* bytes that can never be valid UTF-8 become U+FFFD, one per *maximal subpart* of an ill-formed sequence (the
  Unicode "best practice" that Python's ``errors="replace"`` follows): ``80`` → one U+FFFD, ``f0 9f 98 41`` →
  U+FFFD then ``A``; an incomplete sequence still pending when a special id or :meth:`flush` comes also
  becomes one U+FFFD;
* special (added-vocabulary) ids decode to their spelling and are reported as special, so the output machine can
  treat them as single units;
* ids the vocabulary does not have decode to nothing and leave pending bytes alone.

Each call reports, per id, the text that id *completed* (:class:`TokenText`), which the machine uses to attach
logprob entries to the delta that carries the end of each token's text.
"""

from __future__ import annotations

from codecs import utf_8_decode as _utf8_decode
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from dscodec._f32 import NEG_INF_LOGPROB, f32_logprob
from dscodec.stream.events import TokenLogprob, TopLogprob
from dscodec.vocab import Vocabulary

__all__ = [
    "NEG_INF_LOGPROB",
    "IncrementalDecoder",
    "TokenText",
    "f32_logprob",
    "logprob_token_text",
]


@dataclass(slots=True)
class TokenText:
    """What one id contributed to the decoded text (a plain record: cheap to make once per token).

    Attributes:
        token_id: the id.
        text: the text this id completed (``""`` while a UTF-8 sequence is still incomplete; it may start with
            characters begun by earlier ids).
        spelling: for an added-vocabulary (special) id, its spelling, which ends ``text``; None otherwise.
        unknown: the vocabulary has no bytes for the id (its ``text`` is empty, and nothing is held for it).
    """

    token_id: int
    text: str
    spelling: str | None = None
    unknown: bool = False


def logprob_token_text(data: bytes) -> str:
    """The logprob ``token`` field for a token's bytes (behavior.md#token-chunks-and-usage).

    The decoded text when the bytes are valid UTF-8 on their own, otherwise every byte as ``\\xHH`` (lower-case
    hex, the valid bytes too).

    Examples:
        >>> logprob_token_text(b" hi")
        ' hi'
        >>> logprob_token_text(b" \\xf0\\x9f\\x98")
        '\\\\x20\\\\xf0\\\\x9f\\\\x98'
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(f"\\x{b:02x}" for b in data)


#: Most entries each cache of an :class:`IncrementalDecoder` (plain texts, logprob fields) holds.
_CACHE_LIMIT = 200_000
#: Most groups of ids :meth:`IncrementalDecoder.decode_group` remembers.
_GROUP_LIMIT = 1024


class IncrementalDecoder:
    """Decodes streamed token ids; holds incomplete UTF-8 between calls.

    Args:
        vocab: the vocabulary the ids come from.
        unit_of: the output machine's unit for a special id's spelling; with it, :meth:`decode_plain` decodes a
            group holding special ids into units at once (see there).

    Attributes:
        units: the units of the last group :meth:`decode_plain` decoded into units (with ``unit_of`` only).
        held: the bytes of an incomplete UTF-8 sequence held from the last ids (read-only).
        whole_texts: the text of each id met so far whose bytes are whole characters on their own (the
            vocabulary's table, shared by its decoders; read-only): the text of that id while nothing is held.

    Examples:
        >>> dec = IncrementalDecoder(Vocabulary.load(None))
        >>> dec.feed([28927]), dec.feed([225])
        ('', '😀')
    """

    __slots__ = (
        "_groups",
        "_lp_cache",
        "_not_whole",
        "_ordinary",
        "_rows",
        "_special",
        "_texts",
        "_unit_of",
        "held",
        "unit_ids",
        "units",
        "whole_texts",
    )

    def __init__(self, vocab: Vocabulary, *, unit_of: Callable[[str], str] | None = None) -> None:
        self._rows = vocab.id_bytes
        self._ordinary = vocab.ordinary_bytes
        self._special = vocab.added_spellings
        # The bytes of an incomplete UTF-8 sequence, held until it completes (what an incremental UTF-8
        # decoder buffers; decoding held + new bytes at once gives the same text however the bytes are split).
        self.held = b""
        # The logprob fields (token text, bytes) of each id met so far, kept in the vocabulary for every decoder.
        self._lp_cache = vocab.logprob_fields
        # The texts of ids whose bytes are whole characters, and the ids that have none (special ids, and ids whose
        # bytes are not whole), as met so far: kept in the vocabulary for every decoder, one entry per id at most.
        self.whole_texts = vocab.whole_texts
        self._not_whole = vocab.not_whole_ids
        self._texts = True  # groups of ids try the whole texts first
        # With ``unit_of``, :meth:`decode_plain` decodes a group holding special ids into units at once, here.
        self._unit_of = unit_of
        # The unit of each special id met so far (``unit_of`` of its spelling), so that a group holding special ids
        # between ids of whole texts is decoded into units in the same single pass (and a caller's per-push path
        # finds a special id's unit without decoding it).
        self.unit_ids: dict[int, str] = {}
        self.units = ""
        # What decode_group remembers: the outcome of each group of ids decoded with nothing held that left
        # nothing held (its text, or None and its units).
        self._groups: dict[tuple[int, ...], tuple[str | None, str]] = {}

    @property
    def pending_bytes(self) -> bool:
        """True while an incomplete UTF-8 sequence is held."""
        return bool(self.held)

    def feed(self, ids: Iterable[int]) -> str:
        """The text the ids complete."""
        return "".join(t.text for t in self.decode(ids))

    def decode(self, ids: Iterable[int]) -> list[TokenText]:
        """Per-id contributions; their texts concatenate to what :meth:`feed` would return."""
        rows = self._rows
        size = len(rows)
        special = self._special
        out: list[TokenText] = []
        for token_id in ids:
            spelling = special.get(token_id)
            if spelling is not None:
                # A pending incomplete sequence can no longer complete: it becomes U+FFFD before the spelling.
                prefix = self._flush_bytes()
                out.append(TokenText(token_id, prefix + spelling, spelling))
                continue
            data = rows[token_id] if 0 <= token_id < size else b""
            if not data:
                out.append(TokenText(token_id, "", None, True))
                continue
            if not self.held and data.isascii():
                out.append(TokenText(token_id, data.decode("ascii")))
                continue
            out.append(TokenText(token_id, self._utf8(data)))
        return out

    def decode_group(self, ids: Sequence[int]) -> str | None:
        """:meth:`decode_plain` for a caller that meets the same groups of ids again and again (the tags of a
        tool-call block, a few ids a push): the outcome of a group decoded with nothing held that left nothing
        held is remembered (bounded), and a group seen before costs a lookup. The same results, held bytes and
        :attr:`units` as :meth:`decode_plain`, which it falls back to.

        Raises:
            LookupError: as :meth:`decode_plain`.
        """
        if self.held:
            return self.decode_plain(ids)
        key = ids if type(ids) is tuple else tuple(ids)  # a list, or any other sequence of ids
        groups = self._groups
        try:
            found = groups.get(key)
        except TypeError:  # an unhashable value among the ids: decode_plain refuses it
            found = None
        if found is not None:
            for token_id in key:  # a float or a bool equal to an id would find the group too
                if token_id.__class__ is not int:
                    break
            else:
                text, units = found
                if text is None:
                    self.units = units
                return text
        text = self.decode_plain(ids)
        if not self.held and found is None:
            if len(groups) >= _GROUP_LIMIT:
                groups.clear()
            groups[key] = (text, self.units) if text is None else (text, "")
        return text

    def decode_plain(self, ids: Sequence[int]) -> str | None:
        """The text a group of ordinary ids completes, decoded in one step (the processor's fast path), or None
        when one of them is a special id: then nothing is decoded and nothing changes, unless the decoder was
        made with ``unit_of``: then the group is decoded into units as :meth:`decode_units` with ``unit_of``
        would, into :attr:`units`.

        Same text and same held bytes as :meth:`decode` of the group; the text may be ``""`` (an incomplete
        sequence is held).

        Raises:
            LookupError: an id is not an ``int`` the vocabulary has (nothing changed): the caller's general path
                checks it (and refuses it, or decodes an unknown id to nothing).
        """
        whole = self.whole_texts
        if len(ids) == 1:
            token_id = ids[0]
            if type(token_id) is not int or token_id < 0:
                raise LookupError(token_id)
            if not self.held:
                text = whole.get(token_id)
                if text is not None:
                    return text
            spelling = self._special.get(token_id)
            if spelling is not None:
                unit_of = self._unit_of
                if unit_of is not None:
                    unit = self.unit_ids[token_id] = unit_of(spelling)
                    self.units = self._flush_bytes() + unit if self.held else unit
                return None
            rows = self._rows
            if token_id >= len(rows):
                raise LookupError(token_id)
            data = rows[token_id]
            if not self.held:
                text = self._whole_text(token_id)
                if text is not None:
                    return text
            texts: list[str] = []  # (none: the id's bytes are decoded below)
        else:
            texts = []
            if self._texts and not self.held:
                # Ids met before as whole characters: their texts, joined. Once an id is not one of them (a
                # special id, an unknown one, bytes that are not whole characters), the rest goes by bytes, and
                # so do the next groups until one is all ASCII (CJK text is mostly ids that are not whole).
                not_whole = self._not_whole
                specials = self._special
                unit_ids = self.unit_ids
                units = False  # a special id's unit is among the texts
                try:
                    for token_id in ids:
                        text = whole.get(token_id)
                        if text is None:
                            text = unit_ids.get(token_id)
                            if text is None or type(token_id) is not int:
                                if token_id in not_whole or token_id in specials:
                                    break
                                text = self._whole_text(token_id)
                                if text is None:
                                    break
                            else:
                                units = True
                        elif type(token_id) is not int:  # a float or a bool equal to an id
                            break
                        texts.append(text)
                    else:
                        if units:  # the units decode_units gives these ids (nothing is held)
                            self.units = "".join(texts)
                            return None
                        return "".join(texts)
                except TypeError:  # an unhashable value (a list, a dict) among the ids: nothing changed
                    raise LookupError(token_id) from None
                if token_id in specials:
                    # A special id: no text (the caller decodes the group into units), but every id must still
                    # be one the vocabulary has.
                    size = len(self._ordinary)
                    for token_id in ids:
                        if type(token_id) is not int or not 0 <= token_id < size:
                            raise LookupError(token_id)
                    if self._unit_of is not None:  # the texts so far are what decode_units gives their ids
                        self.units = self._decode_units(ids, len(texts), texts, self._unit_of)
                    return None
                if units:  # special ids before this one: the whole group goes the byte way (into units)
                    texts = []
                self._texts = False
                if texts:
                    ids = ids[len(texts) :]
            # One pass checks each id and gathers its row: an id past the vocabulary's end raises IndexError there,
            # and the row of a special id is None, which the join refuses (TypeError). The fewest steps per id.
            ordinary = self._ordinary
            parts: list[bytes | None] = []
            try:
                for token_id in ids:
                    if type(token_id) is not int or token_id < 0:
                        raise LookupError(token_id)
                    parts.append(ordinary[token_id])
            except IndexError:
                raise LookupError(token_id) from None
            try:
                data = b"".join(parts)  # type: ignore[arg-type]
            except TypeError:  # special ids among them
                if self._unit_of is not None:
                    self.units = self._decode_units(ids, 0, texts, self._unit_of)
                return None
        # _utf8 with an ASCII shortcut, inline: this is the per-push path
        held = self.held
        if held:
            data = held + data
        elif data.isascii():
            self._texts = True
            return "".join(texts) + data.decode("ascii") if texts else data.decode("ascii")
        text, used = _utf8_decode(data, "replace", False)
        self.held = data[used:]
        return "".join(texts) + text if texts else text

    def _whole_text(self, token_id: object) -> str | None:
        """The text of an ordinary id whose bytes are whole, valid UTF-8 on their own (remembered in the
        vocabulary's table for every decoder), else None: a special id, an id the vocabulary does not have (or
        no ``int``), bytes that are not whole characters. Nothing of the decoder's state changes."""
        if type(token_id) is not int or token_id in self._not_whole:
            return None
        ordinary = self._ordinary
        if not 0 <= token_id < len(ordinary):
            return None
        data = ordinary[token_id]
        if not data:  # a special id, or one the vocabulary lacks
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self._not_whole.add(token_id)
            return None
        self.whole_texts[token_id] = text
        return text

    def decode_units(self, ids: Sequence[int], unit_of: Callable[[str], str]) -> str:
        """A group of ids :meth:`decode_plain` turned down for holding special ids, decoded in one pass: the
        text of each run of ordinary ids, and for each special id ``unit_of(spelling)`` (the output machine's
        unit for it) after the U+FFFD of an incomplete sequence held before it.

        The same text, units and held bytes as :meth:`decode` of the group turned into units by the machine.
        Only for ids :meth:`decode_plain` accepted (each an ``int`` the vocabulary has).
        """
        return self._decode_units(ids, 0, [], unit_of)

    def _decode_units(
        self, ids: Sequence[int], start: int, out: list[str], unit_of: Callable[[str], str]
    ) -> str:
        """:meth:`decode_units` of ``ids[start:]`` after ``out``, the texts of the ids before (nothing held)."""
        ordinary = self._ordinary
        special = self._special
        whole = self.whole_texts
        run: list[bytes] = []
        for token_id in ids[start:] if start else ids:
            row = ordinary[token_id]
            if row is not None:
                if not run and not self.held:
                    # Bytes that are whole characters on their own, with nothing before them to complete:
                    # their remembered text.
                    text = whole.get(token_id)
                    if text is not None:
                        out.append(text)
                        continue
                run.append(row)
                continue
            if run:
                out.append(self._utf8(b"".join(run)))
                run = []
            if self.held:
                out.append(self._flush_bytes())
            unit = self.unit_ids[token_id] = unit_of(special[token_id])
            out.append(unit)
        if run:
            out.append(self._utf8(b"".join(run)))
        return "".join(out)

    def _utf8(self, data: bytes) -> str:
        """The text ``data`` completes after the held bytes; an incomplete sequence at its end is held."""
        if self.held:
            data = self.held + data
        text, used = _utf8_decode(data, "replace", False)
        self.held = data[used:]
        return text

    def plain_text(self, token_id: int) -> str | None:
        """The text of one ordinary id that completes on its own (the per-token fast path), else None.

        None means: a special id, an unknown id (negative ones included: they never index the table from its
        end), bytes that do not form whole characters, or an incomplete sequence held from before — use
        :meth:`decode` for those.
        """
        if self.held or type(token_id) is not int:  # (not int: a bool, or no number at all, even unhashable)
            return None
        text = self.whole_texts.get(token_id)
        if text is not None:
            return text
        return self._whole_text(token_id)

    def flush(self) -> str:
        """End of output: an incomplete sequence still held becomes one U+FFFD."""
        return self._flush_bytes()

    def _flush_bytes(self) -> str:
        if not self.held:
            return ""
        text = _utf8_decode(self.held, "replace", True)[0]
        self.held = b""
        return text

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one id (a special id's spelling in UTF-8; ``b""`` for an unknown id)."""
        spelling = self._special.get(token_id)
        if spelling is not None:
            return spelling.encode("utf-8")
        return self._rows[token_id] if 0 <= token_id < len(self._rows) else b""

    def logprob_fields(self, token_id: int) -> tuple[str, tuple[int, ...]]:
        """The ``token`` text and ``bytes`` of a logprob entry for ``token_id`` (behavior.md#token-chunks-and-usage)."""
        return self._lp_cache.get(token_id) or self._lp_fields(token_id)

    def _lp_fields(self, token_id: int) -> tuple[str, tuple[int, ...]]:
        fields = self._lp_cache.get(token_id)
        if fields is None:
            data = self.token_bytes(token_id)
            fields = (logprob_token_text(data), tuple(data))
            if len(self._lp_cache) < _CACHE_LIMIT:
                self._lp_cache[token_id] = fields
        return fields

    def logprob(
        self, token_id: int, logprob: float, top_logprobs: Sequence[tuple[int, float]] = ()
    ) -> TokenLogprob:
        """A logprob entry for one generated id (behavior.md#token-chunks-and-usage ``token``/``bytes`` rules), with its alternatives."""
        known = self._lp_cache.get
        token, data = known(token_id) or self._lp_fields(token_id)
        if not top_logprobs:
            return TokenLogprob(token, f32_logprob(logprob), data, ())
        tops = []
        for alt_id, alt_logprob in top_logprobs:
            alt_token, alt_data = known(alt_id) or self._lp_fields(alt_id)
            tops.append(TopLogprob(alt_token, f32_logprob(alt_logprob), alt_data))
        return TokenLogprob(token, f32_logprob(logprob), data, tuple(tops))
