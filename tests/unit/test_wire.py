"""The writers' shared JSON helpers: log probability entries written from remembered pieces are what the general
way (``logprob_dict`` then ``dumps_json``) writes, byte for byte."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dscodec.protocols._wire import dumps_json, logprob_dict, logprob_entries_json
from dscodec.stream.events import TokenLogprob, TopLogprob

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
