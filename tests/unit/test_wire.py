"""The writers' shared JSON helpers: log probability entries written from remembered pieces are what the general
way (``logprob_dict`` then ``dumps_json``) writes, byte for byte."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dscodec.protocols._wire import (
    LogprobWriter,
    dumps_json,
    logprob_dict,
    logprob_entries_json,
)
from dscodec.stream.decoder import IncrementalDecoder
from dscodec.stream.events import TokenLogprob, TopLogprob
from dscodec.vocab import Vocabulary

# Values of every notation: around 1e-6 and 1e13 where the reference's differs from orjson's, the edges of the
# range written without a second look (1e-5 to 1e13), zeros of both signs, the -9999.0 of D21, and any finite
# double.
_VALUES = st.one_of(
    st.sampled_from([0.0, -0.0, -9999.0, -5e-6, -1e-6, -9.99e-7, -1e13, -2.777244e14, -1e16, -1e300]),
    st.sampled_from([-1e-5, -9.999999e-6, -1.0000001e-5, -9.999999e12, -9999999999999.998, 1e-5, 1e13]),
    st.floats(min_value=-1e-4, max_value=0.0),
    st.floats(allow_nan=False, allow_infinity=False),
)
# Token texts with what JSON escapes (quotes, backslashes, controls) and non-ASCII; few, so that they repeat with
# other bytes and other values.
_TOKENS = st.sampled_from(["a", " the", '"', "\\", "\n\t", "\x00\x1f\x7f", "é", "｜", "\\xe4", ""])
_BYTES = st.lists(st.integers(0, 255), max_size=4).map(tuple)
_TOPS = st.lists(st.builds(TopLogprob, _TOKENS, _VALUES, _BYTES), max_size=5).map(tuple)
_ENTRIES = st.lists(st.builds(TokenLogprob, _TOKENS, _VALUES, _BYTES, _TOPS), max_size=4)


@given(st.lists(_ENTRIES, min_size=1, max_size=4))
def test_entries_are_written_as_the_general_way_writes_them(batches: list[list[TokenLogprob]]) -> None:
    # Several batches in a row: the remembered pieces of one (a token with other bytes, a value) serve the next.
    for entries in batches:
        assert logprob_entries_json(entries) == dumps_json([logprob_dict(e) for e in entries])


def test_the_sign_of_zero_is_kept_whichever_zero_came_first() -> None:
    def entry(value: float) -> TokenLogprob:
        return TokenLogprob("a", value, (97,), (TopLogprob("b", -value, (98,)),))

    assert logprob_entries_json([entry(0.0), entry(-0.0)]) == (
        '[{"token":"a","logprob":0.0,"bytes":[97],"top_logprobs":[{"token":"b","logprob":-0.0,"bytes":[98]}]},'
        '{"token":"a","logprob":-0.0,"bytes":[97],"top_logprobs":[{"token":"b","logprob":0.0,"bytes":[98]}]}]'
    )


# Ids of every kind: ordinary ids (ASCII, multi-byte, partial characters), special ids, ids beyond the vocabulary;
# values as a backend gives them (any finite double: each is written as its 32-bit float).
_IDS = st.one_of(
    st.sampled_from([0, 1, 72, 225, 28927, 128_000, 128_815, 129_279, 129_280, 2**32 - 1]),
    st.integers(0, 130_000),
)
_GIVEN = st.one_of(
    _VALUES,
    st.floats(width=32, allow_nan=False, allow_infinity=False),
    st.sampled_from([-3.5e38, -1e39, 3.5e38]),
)


@given(
    st.lists(
        st.tuples(
            _IDS, _GIVEN, st.lists(st.tuples(_IDS, _GIVEN), max_size=5), st.sampled_from([list, tuple])
        ),
        min_size=1,
        max_size=6,
    )
)
def test_an_entry_as_given_is_written_as_the_decoders_entry(given_entries: list[Any]) -> None:
    """An entry kept as the backend gave it is written as the entry the decoder makes of it, and reads back as its
    dict; so are several of them, in one array with entries made the other way."""
    vocab = Vocabulary.load(None)
    decoder = IncrementalDecoder(vocab)
    writer = LogprobWriter(decoder.logprob_fields, vocab)
    kept, made = [], []
    for token_id, value, pairs, container in given_entries:
        entry = decoder.logprob(token_id, value, pairs)
        given = writer.given(token_id, value, container(pairs))
        assert given is not None
        assert f"[{given.text()}]" == logprob_entries_json([given]) == logprob_entries_json([entry])
        assert logprob_dict(given) == logprob_dict(entry)
        kept.append(given)
        made.append(entry)
    mixed = [g if k % 2 else e for k, (g, e) in enumerate(zip(kept, made))]
    assert logprob_entries_json(mixed) == logprob_entries_json(made)
    assert orjson.loads(logprob_entries_json(mixed)) == [logprob_dict(e) for e in made]


def test_an_entry_as_given_does_not_change_with_the_list_it_came_in() -> None:
    """A backend may reuse its list once the push returned; the entry is written later, as it was given."""
    vocab = Vocabulary.load(None)
    writer = LogprobWriter(IncrementalDecoder(vocab).logprob_fields, vocab)
    pairs = [(73, -1.5)]
    given = writer.given(72, -0.25, pairs)
    assert given is not None
    before = given.text()
    pairs[0] = (74, -2.5)
    pairs.append((75, -3.5))
    assert given.text() == before


@pytest.mark.parametrize(
    "pairs",
    [
        [(5, 1)],  # an int value
        [(True, -1.0)],  # a bool id
        [(5.0, -1.0)],  # a float id
        [(-1, -1.0)],
        [(2**32, -1.0)],
        [(5, float("nan"))],
        [(5, float("-inf"))],
        [(5, -1.0, 0)],  # no pair
        [[5, -1.0]],  # a pair that is a list (the caller's checks read it)
        [5],
        ["ab"],
    ],
    ids=repr,
)
def test_an_entry_as_given_is_declined_in_any_other_shape(pairs: list[Any]) -> None:
    """The checks that name what is wrong (or turn -inf into -9999.0) are the caller's: it gets None."""
    vocab = Vocabulary.load(None)
    writer = LogprobWriter(IncrementalDecoder(vocab).logprob_fields, vocab)
    assert writer.given(72, -0.5, [(73, -1.0), *pairs]) is None
