"""IncrementalDecoder: token ids → text, partial UTF-8, special ids, logprob token fields (behavior.md#token-chunks-and-usage)."""

from __future__ import annotations

import struct
from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dscodec import _f32 as f32_module
from dscodec.stream.decoder import IncrementalDecoder, TokenText, f32_logprob, logprob_token_text
from dscodec.vocab import Vocabulary

EMOJI_IDS = [28927, 225]  # "😀" split over two ids (behavior.md#token-chunks-and-usage)
THINK_END = 128822
EOS = 1


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.load(None)


@pytest.fixture
def dec(vocab: Vocabulary) -> IncrementalDecoder:
    return IncrementalDecoder(vocab)


def encode(vocab: Vocabulary, text: str) -> list[int]:
    return list(vocab.full.encode(text, add_special_tokens=False).ids)


def test_split_emoji_is_held_until_complete(dec: IncrementalDecoder) -> None:
    assert dec.feed(EMOJI_IDS[:1]) == ""
    assert dec.pending_bytes
    assert dec.feed(EMOJI_IDS[1:]) == "😀"
    assert not dec.pending_bytes
    assert dec.flush() == ""


def test_per_id_contributions(dec: IncrementalDecoder, vocab: Vocabulary) -> None:
    ids = encode(vocab, "ab😀c") + [THINK_END]
    pieces = dec.decode(ids)
    assert [p.token_id for p in pieces] == ids
    assert "".join(p.text for p in pieces) == "ab😀c</think>"
    # the id that starts the emoji contributes nothing, the one that completes it the whole character
    assert [p.text for p in pieces[1:3]] == ["", "😀"]
    assert pieces[-1] == TokenText(THINK_END, "</think>", "</think>")
    assert all(p.spelling is None for p in pieces[:-1])


def test_special_ids_decode_to_their_spelling(dec: IncrementalDecoder) -> None:
    assert dec.feed([EOS, 0, 128803]) == "<｜end▁of▁sentence｜><｜begin▁of▁sentence｜><｜User｜>"


@pytest.mark.parametrize("token_id", [-1, 10**9, 129500])
def test_unknown_ids_decode_to_nothing(dec: IncrementalDecoder, token_id: int) -> None:
    assert dec.feed([EMOJI_IDS[0], token_id]) == ""
    assert dec.feed([EMOJI_IDS[1]]) == "😀"  # pending bytes survive an unknown id


@pytest.mark.parametrize("token_id", [-1, -2, -129_000, 10**9, 129500])
def test_unknown_ids_have_no_plain_text(dec: IncrementalDecoder, token_id: int) -> None:
    """The per-token fast path never indexes the table from its end (-1 once gave the last row's text)."""
    assert dec.plain_text(token_id) is None
    assert dec.token_bytes(token_id) == b""
    assert dec.decode([token_id])[0].text == ""


def test_invalid_bytes_become_one_replacement_per_maximal_subpart(dec: IncrementalDecoder) -> None:
    assert dec.feed([225]) == "\ufffd"  # a lone continuation byte 0x80
    assert dec.feed([EMOJI_IDS[0], 67]) == "\ufffda"  # f0 9f 98 then "a"


def test_incomplete_sequence_before_a_special_id(dec: IncrementalDecoder) -> None:
    pieces = dec.decode([EMOJI_IDS[0], EOS])
    assert pieces[1].text == "\ufffd<｜end▁of▁sentence｜>"
    assert pieces[1].spelling == "<｜end▁of▁sentence｜>"


def test_flush_turns_a_pending_sequence_into_one_replacement(dec: IncrementalDecoder) -> None:
    assert dec.feed(EMOJI_IDS[:1]) == ""
    assert dec.flush() == "\ufffd"
    assert dec.flush() == ""


@pytest.mark.parametrize(
    ("data", "token"),
    [
        (b"Hello", "Hello"),
        (b"\xf0\x9f\x98", "\\xf0\\x9f\\x98"),
        (b" \xf0\x9f\x98", "\\x20\\xf0\\x9f\\x98"),
        (b"\x80", "\\x80"),
        (b"", ""),
    ],
)
def test_logprob_token_text(data: bytes, token: str) -> None:
    assert logprob_token_text(data) == token


def test_logprob_entry(dec: IncrementalDecoder) -> None:
    entry = dec.logprob(EMOJI_IDS[0], -0.25, [(EMOJI_IDS[1], -1.5), (THINK_END, -2.0)])
    assert entry.token == "\\xf0\\x9f\\x98"
    assert entry.bytes == (0xF0, 0x9F, 0x98)
    assert entry.logprob == -0.25
    assert [(t.token, t.logprob, t.bytes) for t in entry.top_logprobs] == [
        ("\\x80", -1.5, (0x80,)),
        ("</think>", -2.0, tuple(b"</think>")),
    ]
    assert dec.logprob(10**9, -1.0).bytes == ()


UTF8_CORPUS = [
    "plain ASCII text",
    "中文和日本語のテキスト",
    "emoji 😀👍🏽 and ZWJ 👩‍👩‍👧‍👦 family",
    "RTL: مرحبا بالعالم — שלום עולם",
    "combining: e\u0301 a\u0308 \u0915\u094d\u0937",
    "math 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and ﷽",
]


@pytest.mark.parametrize("text", UTF8_CORPUS)
def test_utf8_corpus_one_id_at_a_time(vocab: Vocabulary, text: str) -> None:
    dec = IncrementalDecoder(vocab)
    pieces = [dec.feed([token_id]) for token_id in encode(vocab, text)]
    assert "".join(pieces) + dec.flush() == text
    assert not any("\ufffd" in piece for piece in pieces)


@pytest.mark.parametrize("stranger", [True, 1.0, -1, 10**9, [3], {"id": 3}, bytearray(b"a")])
def test_decode_plain_refuses_what_is_no_id_even_when_its_value_is_remembered(
    vocab: Vocabulary, stranger: object
) -> None:
    """The texts of whole ids are remembered by id, and ``True == 1 == 1.0`` as keys: a group holding a bool, a
    float, an id out of range or a value that is no key at all (a list, a dict) is still refused (LookupError)
    with nothing changed, wherever it stands."""
    dec = IncrementalDecoder(vocab)
    a, one = encode(vocab, "a")[0], 1
    whole = encode(vocab, "Hello world")
    assert dec.decode_plain([*whole, a]) == "Hello worlda"  # now remembered
    assert dec.decode_plain([one, a]) is None  # id 1 is special
    for group in ([stranger], [a, stranger], [stranger, a], [*whole, stranger], [a, float(a)], [float(a)]):
        assert dec.decode_plain(whole) == "Hello world"  # all ASCII: the next group tries the texts first
        with pytest.raises(LookupError):
            dec.decode_plain(group)  # type: ignore[list-item]
        assert not dec.pending_bytes
    assert dec.decode_plain([EMOJI_IDS[0], a, a]) is not None  # still usable, the held bytes as before
    assert dec.pending_bytes is False


def test_decode_plain_after_groups_that_are_not_whole(vocab: Vocabulary) -> None:
    """Groups of ids that are not whole characters send the next groups the bytes way until one is all ASCII;
    the texts are the same either way."""
    fast, general = IncrementalDecoder(vocab), IncrementalDecoder(vocab)
    ids = encode(vocab, "中文的文本，然后 plain text again, 再一次中文 and ASCII.")
    for size in (1, 2, 3, 4, 7):
        for k in range(0, len(ids), size):
            group = ids[k : k + size]
            assert fast.decode_plain(group) == general.feed(group)
            assert fast.pending_bytes == general.pending_bytes


def test_special_groups_met_again_decode_into_units_in_one_pass(vocab: Vocabulary) -> None:
    """Once a special id's unit is known, a group of whole-text ids around it is decoded into units from the
    remembered texts and units; the same units as the general way, and ids that are not whole still go the byte
    way (the emoji's halves after the special id)."""
    unit = "[{}]".format
    dec = IncrementalDecoder(vocab, unit_of=unit)
    general = IncrementalDecoder(vocab)
    ab = encode(vocab, "ab")
    assert dec.decode_plain([THINK_END]) is None and dec.units == "[</think>]"
    for group in (
        [*ab, THINK_END, *ab],
        [THINK_END, THINK_END],
        [*ab, THINK_END, *EMOJI_IDS],
        [THINK_END, 2.0],
    ):
        try:
            text = dec.decode_plain(group)  # type: ignore[arg-type]
        except LookupError:
            assert any(type(i) is not int for i in group)
            continue
        assert text is None
        assert dec.units == general.decode_units(group, unit)
        assert not dec.pending_bytes


def test_decode_group_gives_what_decode_plain_gives_and_remembers_only_clean_groups(
    vocab: Vocabulary,
) -> None:
    """Groups met again (the tags of a tool-call block) are looked up: the same texts, units and held bytes as
    decode_plain for every group, seen or not, with bytes held before or after it; a value equal to an id but of
    another type (a bool, a float) still finds no group and is refused."""
    unit = "[{}]".format
    grouped, plain = IncrementalDecoder(vocab, unit_of=unit), IncrementalDecoder(vocab, unit_of=unit)
    tag = encode(vocab, '<｜DSML｜parameter name="a" string="true">中文</｜DSML｜parameter>\n')
    a = encode(vocab, "a")[0]
    groups = [tag[k : k + 4] for k in range(0, len(tag), 4)] * 3
    groups += [[EMOJI_IDS[0], a], [EMOJI_IDS[1], a, a], [a, EMOJI_IDS[0]], [EMOJI_IDS[1], THINK_END], [a, a]]
    groups += [tuple(g) for g in groups]  # type: ignore[misc]
    for group in groups * 2:
        expected = plain.decode_plain(group)
        assert grouped.decode_group(group) == expected  # type: ignore[arg-type]
        assert grouped.pending_bytes == plain.pending_bytes
        if expected is None:
            assert grouped.units == plain.units
    one = encode(vocab, "a b")
    assert grouped.decode_group([*one, 1]) is None  # id 1 is special: remembered with its units
    for stranger in ([True if i == 1 else i for i in [*one, 1]], [float(i) for i in one], [*one, [1]]):
        with pytest.raises(LookupError):
            grouped.decode_group(stranger)  # type: ignore[arg-type]
        assert not grouped.pending_bytes


# -- log probabilities as 32-bit floats ------------------------------------------------------------------------------

_F32 = struct.Struct("<f")


def _f32(value: float) -> bytes:
    """The 32-bit float of ``value`` (nothing beyond its range)."""
    try:
        return _F32.pack(value)
    except OverflowError:
        return b""


def _shortest_f32_oracle(value: float) -> float:
    """The definition, by brute force: among the decimals of the fewest significant digits that read back as the
    same 32-bit float, the one nearest to it (a tie to the even last digit)."""
    target = _f32(value)
    exact = Decimal(_F32.unpack(target)[0])
    if exact == 0:
        return float(exact.copy_sign(Decimal(value)))
    for digits in range(1, 10):
        step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
        nearest = exact.quantize(step, ROUND_HALF_EVEN)
        fits = [c for c in (nearest - step, nearest, nearest + step) if _f32(float(c)) == target]
        if fits:
            best = min(fits, key=lambda c: (abs(c - exact), int(c.scaleb(-c.as_tuple().exponent)) % 2))
            return float(best)
    raise AssertionError(value)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (-0.31326162815093994, "-0.31326163"),  # a 32-bit float sent in full: its shortest decimal
        (-0.1, "-0.1"),
        (-0.25, "-0.25"),
        (-2325.90625, "-2325.9062"),  # halfway between two 8-digit decimals: the even one
        (-0.000244140625, "-0.00024414062"),
        (-1e-50, "-0.0"),  # below the smallest 32-bit float: zero, its sign kept
        (-1e-45, "-1e-45"),  # the smallest subnormal
        (-3.4028235e38, "-3.4028235e+38"),
        (-1e39, "-9999.0"),  # beyond the 32-bit range: as -inf (D21)
        (1e39, "3.4028235e+38"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
    ],
)
def test_log_probabilities_are_the_shortest_decimal_of_their_32_bit_float(value: float, written: str) -> None:
    assert repr(f32_logprob(value)) == written
    assert repr(f32_logprob(value)) == written  # the second time from the memo


@settings(max_examples=settings.default.max_examples * 10)  # cheap: many values
@given(st.floats(width=32, allow_nan=False, allow_infinity=False) | st.floats(-1e30, 1e30))
def test_f32_logprob_agrees_with_its_definition(value: float) -> None:
    assert repr(f32_logprob(value)) == repr(_shortest_f32_oracle(value))


@settings(max_examples=settings.default.max_examples * 20)  # cheap: many values
@given(
    exponent=st.integers(100, 160),
    fraction=st.integers(0, 2**23 - 1) | st.integers(0, 15) | st.integers(2**23 - 16, 2**23 - 1),
    sign=st.integers(0, 1),
)
def test_the_shortest_decimal_worked_out_in_doubles_is_the_one_in_integers(
    exponent: int, fraction: int, sign: int
) -> None:
    """The 32-bit floats of about 1e-5 to 1e7 take steps in doubles, each exact; the integer path (the doubles'
    table emptied) gives the same for every one, and for those just outside that range."""
    value = _F32.unpack(struct.pack("<I", (sign << 31) | (exponent << 23) | fraction))[0]
    quick = f32_module.f32_logprob_once(value)
    table = f32_module._FLOAT_STEPS
    f32_module._FLOAT_STEPS = [None] * 256
    try:
        assert repr(quick) == repr(f32_module.f32_logprob_once(value))
    finally:
        f32_module._FLOAT_STEPS = table


def test_f32_logprob_agrees_with_its_definition_on_every_kind_of_32_bit_float() -> None:
    # Seeded bit patterns of every exponent (normal, subnormal, powers of two, whose intervals are uneven), each
    # as it is and nudged towards the ends of its interval, where the quick way and the careful one part.
    import random

    rng = random.Random(2026)
    bits = [
        (sign << 31) | (exponent << 23) | rng.getrandbits(23) for exponent in range(255) for sign in (0, 1)
    ]
    bits += [(exponent << 23) | fraction for exponent in range(255) for fraction in (0, 1, 0x7FFFFF)]
    # The floats whose interval ends on a short decimal (a multiple of 10**p exactly halfway to a neighbour):
    # there the end counts for an even float only.
    for power in range(1, 30):
        for multiple in range(1, 400, 7):
            middle = multiple * 10**power
            low = _F32.unpack(_F32.pack(middle))[0]
            if low > middle:
                low = _F32.unpack(struct.pack("<I", struct.unpack("<I", _F32.pack(middle))[0] - 1))[0]
            if low < middle:
                bits.append(struct.unpack("<I", _F32.pack(low))[0])
                bits.append(bits[-1] + 1)
    for pattern in bits:
        exact = _F32.unpack(struct.pack("<I", pattern))[0]
        for value in (exact, exact * (1 + 2**-25), exact * (1 - 2**-25), exact * (1 + 2**-24)):
            if _f32(value):
                assert repr(f32_logprob(value)) == repr(_shortest_f32_oracle(value)), (pattern, value)
