"""The DSML block parser's shortcuts give the events of its general path.

The shortcuts: a whole parameter tag read in one match, remembered outcomes of short tag pieces, of the block and
invoke scans and of parameter tags, a held JSON value's piece taken without the general value writer, and the
JSON prefix check's runs. Each is compared with the parser or checker that does without it, on the same pieces.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import string
import subprocess
import sys
import threading
from collections import deque
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dscodec._json import loads
from dscodec.stream import _dsml_tags, dsml
from dscodec.stream._dsml_tags import (
    BLOCK_PATTERNS,
    INVOKE_PATTERNS,
    TAG_STEPS,
    BlockState,
    Quote,
    parameter_of,
    scan_short,
    tag_step,
)
from dscodec.stream._markers import DSML_HARD, DSML_SOFT, DSML_SPELLING
from dscodec.stream.dsml import HOLD_LIMIT, BlockParser, JsonPrefix, random_tool_call_id
from dscodec.stream.events import Event, ToolCallDelta, ToolCallEnd

_EVERY_UNIT = re.compile(r"[\s\S]")


class _Stepwise(BlockParser):
    """Reads every tag unit by unit: no whole-tag match, no remembered tag pieces."""

    _tag_stops = _EVERY_UNIT


class _NoHeldPiece(_Stepwise):
    """Also writes every piece of a JSON value through the general value writer."""

    def _held_piece(self, raw: str) -> bool:
        return False


def _spell(units: str) -> str:
    return units.replace(DSML_SOFT, DSML_SPELLING).replace(DSML_HARD, DSML_SPELLING)


def _units(text: str, hard: bool = True) -> str:
    return text.replace(DSML_SPELLING, DSML_HARD if hard else DSML_SOFT)


def _run(parser: type[BlockParser], pieces: list[str]) -> list[Any]:
    """Events per feed, then those of the close, with the state and held units after each."""
    p = parser(spell=_spell, id_factory=lambda i: f"id{i}")
    log: list[Any] = []
    for piece in pieces:
        out: list[Event] = []
        p.feed(piece, out)
        assert p.done == (p.state is BlockState.DONE)
        log.append((out, p.state, p.pending_units))
    out = []
    p.close(out)
    log.append((out, p.calls))
    return log


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


def _forget() -> None:
    for steps in TAG_STEPS:
        steps.clear()
    for scans in _dsml_tags.SCANS.values():
        scans.clear()
    _dsml_tags.PARAMETERS.clear()


D = DSML_SPELLING
NAMES = st.sampled_from(
    [
        "command",
        "x",
        "a b",
        'a"b',
        "k\\n",
        "é",
        "",
        "a>b",
        "a/b",
        f"c{D}y",
        f"c</{D}y",
        f"c<{D}",
        f"a>b</{D}y",
    ]
)
FLAGS = st.sampled_from(
    [
        'string="true"',
        'string="false"',
        "",
        'string="maybe"',
        "string=false",
        'lang="x"',
        f'string{D}="true"',
        f'{D}string="false"',
        f'string="true" {D}',
    ]
)
VALUES = st.sampled_from(
    [
        "ls -la",
        "12",
        "-3.5e2",
        "true",
        "nul",
        "NaN",
        '["-n", 0]',
        '{"a": [1, {"b": null}]}',
        "",
        " ",
        "a</b",
        "<",
        "</",
    ]
    + ["[" * 130 + "]" * 130, "x" * (HOLD_LIMIT + 5), "1" * (HOLD_LIMIT + 5), '"' + "y" * HOLD_LIMIT + '"']
) | st.text('ab1 \n"<>/{}[]:,\\', max_size=12)
SPACES = st.sampled_from([" ", "  ", "\n", "\t", ""])
PARAMETER = st.builds(
    lambda name, flag, value, space, opener, closer: (
        f'{opener}parameter{space}name="{name}" {flag}>{value}{closer}\n'
    ),
    NAMES,
    FLAGS,
    VALUES,
    SPACES,
    st.sampled_from([f"<{D}", f"<{D} ", ""]),
    st.sampled_from([f"</{D}parameter>", f"</{D}", "", f"<{D}"]),
)
BLOCKS = st.lists(
    st.tuples(st.sampled_from(["bash", "f", 'a"b']), st.lists(PARAMETER, max_size=5)), max_size=3
).map(
    lambda calls: (
        f"<{D}tool_calls>\n"
        + "".join(
            f'<{D}invoke name="{name}">\n' + "".join(params) + f"</{D}invoke>\n" for name, params in calls
        )
        + f"</{D}tool_calls>after"
    )
)


def _arguments(log: list[Any]) -> list[str]:
    return [e.arguments for entry in log for e in entry[0] if isinstance(e, ToolCallEnd)]


@given(text=BLOCKS, cuts=st.lists(st.integers(0, 2000), max_size=20), hard=st.booleans())
def test_shortcuts_give_the_general_events(text: str, cuts: list[int], hard: bool) -> None:
    """Same pieces, same events with and without the shortcuts; the memory of earlier pieces changes nothing."""
    pieces = _split(_units(text, hard), cuts)
    _forget()
    cold = _run(BlockParser, pieces)
    assert cold == _run(BlockParser, pieces)  # now with everything remembered
    assert cold == _run(_Stepwise, pieces)
    assert cold == _run(_NoHeldPiece, pieces)


@given(text=BLOCKS, cuts=st.lists(st.integers(0, 2000), max_size=20))
def test_arguments_do_not_depend_on_the_pieces(text: str, cuts: list[int]) -> None:
    """Each call's complete arguments are the same whether the block comes whole, cut anywhere, or one unit at a
    time (only the deltas they are split into differ)."""
    units = _units(text)
    whole = _arguments(_run(BlockParser, [units]))
    assert whole == _arguments(_run(BlockParser, _split(units, cuts)))
    assert whole == _arguments(_run(BlockParser, list(units)))


def test_a_whole_common_tag_is_read_in_one_match() -> None:
    """The whole-tag match reads the tag without the tag reader, and writes what the reader writes."""
    calls: list[str] = []

    class Spy(BlockParser):
        def _tag_text(self, s: str, i: int) -> tuple[int, str]:
            calls.append(s[i:])
            return super()._tag_text(s, i)

    text = _units(
        f'<{D}tool_calls>\n<{D}invoke name="bash">\n<{D}parameter name="command" string="true">ls</{D}parameter>\n'
        f'<{D}parameter name="n" string="false">[1, 2]</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>'
    )
    fast = _run(Spy, [text])
    assert calls == []
    assert fast == _run(_Stepwise, [text])
    events = fast[0][0]
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)] == [
        "{",
        '"command"',
        ": ",
        '"',
        "ls",
        '"',
        ", ",
        '"n"',
        ": ",
        "[1, 2]",
        "}",
    ]
    assert events[5] == ToolCallDelta(0, "ls", "ls", "command")
    # Other forms (an attribute more, no string flag, another order) go through the reader.
    _run(
        Spy, [_units(f'<{D}invoke name="f">\n<{D}parameter name="a" lang="x" string="true">v</{D}parameter>')]
    )
    assert calls


@pytest.mark.parametrize("quote", list(Quote))
@given(text=st.text('"> /=a\t', max_size=_dsml_tags.SHORT))
def test_tag_steps_follow_the_tag_reader(quote: Quote, text: str) -> None:
    """A remembered tag step is what the tag reader, unit by unit, does with the same text."""
    reader = _Stepwise(spell=_spell, id_factory=str)
    reader.state = BlockState.TAG
    reader._quote = quote
    reader._index = 0
    end, again = reader._tag_text(text, 0)
    assert again == ""
    step = tag_step(quote, text)
    assert step is not None
    if end == len(text) and reader.state is BlockState.TAG:
        assert step == (reader._quote, -1)
    else:  # the tag ended at the ">" just before ``end``
        assert step == (Quote.OUT, end - 1)
        assert text[end - 1] == ">"
    assert tag_step(quote, DSML_SOFT + text) is None
    if step[1] < 0 or len(text) == _dsml_tags.SHORT:
        assert tag_step(quote, text + DSML_HARD) is None
    else:  # what follows the tag's end does not change where it ends
        assert tag_step(quote, text + DSML_HARD) == step
    assert tag_step(quote, "a" * (_dsml_tags.SHORT + 1)) is None


def _scan_by_hand(state: BlockState, text: str) -> tuple[int, int]:
    patterns = BLOCK_PATTERNS if state is BlockState.BLOCK else INVOKE_PATTERNS
    for start in range(len(text)):
        for index, pattern in enumerate(patterns):
            if text.startswith(pattern, start):
                return index, start + len(pattern)
    starts = {p[:k] for p in patterns for k in range(1, len(p))}
    for start in range(len(text) + 1):
        if text[start:] in starts:
            return -1, start
    return -1, len(text)


@pytest.mark.parametrize("state", [BlockState.BLOCK, BlockState.INVOKE])
@given(
    pieces=st.lists(
        st.sampled_from(
            ["<", "</", DSML_SOFT, DSML_HARD, " ", "parameter", "invoke", ' name="', "calls>", "x"]
        ),
        max_size=8,
    )
)
def test_remembered_scans_find_what_a_search_by_hand_finds(state: BlockState, pieces: list[str]) -> None:
    text = "".join(pieces)[: _dsml_tags.SHORT]
    expected = _scan_by_hand(state, text)
    assert scan_short(state, text) == expected
    assert scan_short(state, text) == expected  # remembered


def test_memories_stay_bounded() -> None:
    _forget()
    for k in range(3 * _dsml_tags._MEMO_LIMIT):
        tag_step(Quote.OUT, f"a{k}")
        scan_short(BlockState.INVOKE, f"p{k}")
        parameter_of(f' name="k{k}"')
    assert len(TAG_STEPS[Quote.OUT]) <= _dsml_tags._MEMO_LIMIT
    assert len(_dsml_tags.SCANS[BlockState.INVOKE]) <= _dsml_tags._MEMO_LIMIT
    assert len(_dsml_tags.PARAMETERS) <= _dsml_tags._PARAMETERS_LIMIT
    assert parameter_of(" x" * 200) is None  # a long tag is read, not remembered
    assert " x" * 200 not in _dsml_tags.PARAMETERS
    assert parameter_of(' name="k1" string="false"') == ('"k1"', "k1", _dsml_tags.ValueKind.JSON)


def _checker_log(pieces: list[str]) -> list[Any]:
    checker = JsonPrefix(max_depth=4)
    log: list[Any] = []
    for piece in pieces:
        log.append((checker.feed(piece), checker.count, checker.committed, checker.failed, checker.mode))
        log.append(checker.completion())
    log.append((checker.finish(), checker.complete(), checker.completion(), checker.committed))
    return log


JSONISH = st.lists(
    st.sampled_from(
        [
            '"',
            "\\",
            "\\n",
            "\\u00e9",
            "\\ud83d",
            "\\ude00",
            "a",
            "é",
            "\x01",
            " ",
            "\n",
            "{",
            "}",
            "[",
            "]",
            ":",
        ]
        + [",", "0", "12", "-", ".", "e", "+", "true", "fa", "null", "1e400", '"k": ', "x"]
    ),
    max_size=20,
).map("".join)


def _loads_accepts(text: str) -> bool:
    """Whether dscodec's reader takes ``text`` (with the depth limit the checkers here use)."""
    try:
        loads(text, max_depth=4)
    except ValueError:
        return False
    return True


@given(text=JSONISH, cuts=st.lists(st.integers(0, 200), max_size=6))
def test_json_prefix_runs_give_the_stepwise_state(text: str, cuts: list[int]) -> None:
    """Fed whole, in pieces, or one character at a time (where no run is longer than one character), the checker
    ends in the same state; and a complete text is accepted exactly when :func:`loads` accepts it."""
    final = _checker_log([text])[-1]
    assert _checker_log(_split(text, cuts))[-1] == final
    assert _checker_log(list(text))[-1] == final
    accepted = _loads_accepts(text)
    assert final[1] == accepted


@pytest.mark.parametrize(
    ("number", "valid"),
    [
        ("0", True),
        ("-0", True),
        ("123456789012345", True),
        ("1" * 16, True),
        ("1" * 400, False),
        ("1e308", True),
        ("1e309", False),
        ("-", False),
        ("1.", False),
        ("1.5", True),
        ("2E-3", True),
    ],
)
def test_numbers_short_and_long(number: str, valid: bool) -> None:
    """Short numbers without exponent are accepted without parsing; the others are still parsed."""
    checker = JsonPrefix()
    checker.feed(number)
    assert checker.finish() is valid
    checker = JsonPrefix()
    checker.feed("[" + number + ",")
    assert checker.failed is not valid


@pytest.mark.parametrize(
    "text",
    [
        '{"k": [1, {"a": "b\\"c"}], "z": null, "t": true}',
        '[ "x" , -0.5e+3 , false , {} , [] ]',
        '{"a\\u00e9": "\\ud83d\\ude00"}',
        '  {"k" :"v"}  ',
        '{"k": 1,}',
        '{"k" 1}',
        '["a" "b"]',
        '{"k": "\\ud83d"}',
        "[[[[[1]]]]]",
    ],
)
def test_json_prefix_on_whole_documents(text: str) -> None:
    """Objects, keys, escapes and nesting: fed whole or one character at a time, accepted exactly as
    :func:`loads` accepts (the depth limit included)."""
    accepted = _loads_accepts(text)
    for pieces in ([text], list(text)):
        assert _checker_log(pieces)[-1][1] == accepted


def _expected_id(index: int, raw: bytes) -> str:
    """The id the random bytes ``raw`` stand for, one byte at a time: the first 30 give the letters (a byte of
    248 or more is dropped, else it is the character at its value modulo 62), the last 10 the digits (250 or
    more dropped, else its value modulo 10)."""
    alphabet = string.ascii_letters + string.digits
    letters = [alphabet[b % 62] for b in raw[:30] if b < 248][:20]
    digits = [str(b % 10) for b in raw[30:] if b < 250][:4]
    return f"call_{index:02d}_" + "".join(letters + digits)


@pytest.mark.parametrize(
    "raw",
    [
        bytes(40),
        bytes(range(40)),
        bytes(range(100, 140)),
        bytes(range(216, 256)),
        bytes([247, 248, 62, 0] * 10),
    ],
)
def test_call_ids_keep_only_the_bytes_that_make_each_character_uniform(
    raw: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each letter is a random byte below 248 modulo 62 and each digit one below 250 modulo 10 (so every
    character is equally likely); the other bytes are dropped."""
    monkeypatch.setattr(dsml, "_id_pool", deque())
    monkeypatch.setattr(dsml, "_random_bytes", lambda n: raw)
    assert random_tool_call_id(7) == _expected_id(7, raw)


def test_call_ids_are_drawn_again_when_too_few_bytes_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Too few letters (11 bytes of 248 or more in the first 30) or too few digits (7 of 250 or more in the last
    10): the bytes are read again."""
    good = bytes(range(50, 90))
    reads = iter([b"\xff" * 11 + bytes(29), bytes(30) + b"\xfb" * 7 + bytes(3), good])
    monkeypatch.setattr(dsml, "_id_pool", deque())
    monkeypatch.setattr(dsml, "_random_bytes", lambda n: next(reads))
    assert random_tool_call_id(12) == _expected_id(12, good)
    assert next(reads, None) is None


def test_call_ids_are_made_ahead_from_one_read_and_each_used_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One read of the system's randomness makes many ids: its first three quarters give the letters, the rest
    the digits, each with the dropped bytes left out, 20 letters and 4 digits per id, in order; the pool is
    read again only when it runs dry."""
    raw = bytes(range(256)) * 5  # 1,280 bytes: 960 for letters (930 kept), 320 for digits (310 kept)
    reads: list[int] = []

    def read(n: int) -> bytes:
        reads.append(n)
        return raw

    monkeypatch.setattr(dsml, "_id_pool", deque())
    monkeypatch.setattr(dsml, "_random_bytes", read)
    alphabet = string.ascii_letters + string.digits
    letters = "".join(alphabet[b % 62] for b in raw[:960] if b < 248)
    digits = "".join(str(b % 10) for b in raw[960:] if b < 250)
    per_read = min(len(letters) // 20, len(digits) // 4)
    assert per_read == 46
    made = [random_tool_call_id(k % 100) for k in range(per_read + 3)]
    expected = [letters[20 * k : 20 * k + 20] + digits[4 * k : 4 * k + 4] for k in range(per_read)]
    assert made == [f"call_{k:02d}_{part}" for k, part in enumerate(expected + expected[:3])]
    assert len(reads) == 2 and reads[0] >= 40 * 16


def test_call_ids_drawn_by_threads_at_once_are_all_different() -> None:
    dsml._id_pool.clear()
    seen: list[str] = []

    def draw() -> None:
        seen.extend(random_tool_call_id(1) for _ in range(500))

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seen)) == len(seen) == 2000


#: Run in a fresh interpreter (one thread, so forking it is safe): ids made ahead, then a child forked from it
#: makes as many; prints both sides' random parts.
_FORK_SCRIPT = """
import os
from dscodec.stream import dsml
dsml.random_tool_call_id(0)
ahead = list(dsml._id_pool)
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(read)
    os.write(write, ",".join(dsml.random_tool_call_id(2)[8:] for _ in ahead).encode())
    os._exit(0)
os.close(write)
with os.fdopen(read, "rb") as pipe:
    child = pipe.read().decode()
os.waitpid(pid, 0)
print(",".join(ahead))
print(child)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_makes_its_own_call_ids() -> None:
    """A child forked with ids made ahead in the pool does not make the same ones (its pool starts empty)."""
    done = subprocess.run([sys.executable, "-c", _FORK_SCRIPT], capture_output=True, text=True, check=True)
    ahead, child = (line.split(",") for line in done.stdout.splitlines())
    assert len(ahead) == len(child) > 1
    assert not set(ahead) & set(child)


@pytest.mark.parametrize("after", ["x", " x", ",x", "\n}"])
@pytest.mark.parametrize(
    "value", ["1" * (HOLD_LIMIT + 6), "[" + "1, " * 30 + "2" * 20, " " * (HOLD_LIMIT + 3)]
)
def test_a_value_that_outgrows_the_hold_and_breaks_does_not_depend_on_the_pieces(
    value: str, after: str
) -> None:
    """Past the hold a ``string="false"`` value streams as written; when text no JSON can continue with follows,
    the arguments are the same whole, one unit at a time and cut anywhere: a string of the raw text when nothing
    of the value was final before that text, else what was sent, completed."""
    text = (
        f'<{D}tool_calls>\\n<{D}invoke name="f">\\n<{D}parameter name="n" string="false">{value}{after}'
        f"</{D}parameter>\\n</{D}invoke>\\n</{D}tool_calls>"
    )
    units = _units(text)
    whole = _arguments(_run(BlockParser, [units]))
    assert whole == _arguments(_run(BlockParser, list(units)))
    for cut in range(0, len(units), 7):
        assert whole == _arguments(_run(BlockParser, [units[:cut], units[cut:]]))
    (arguments,) = whole
    parsed = json.loads(arguments)["n"]
    if value.startswith("1") and not after[0].isspace():
        assert parsed == value + after  # the number ends at the character that breaks it: nothing was final
    elif value.startswith("1"):
        assert parsed == int(value)  # white space made the number final before the text that breaks it


@pytest.mark.parametrize(
    ("tag", "arguments"),
    [
        ("", ""),
        (" ", ""),
        (" name", ""),
        (" name=", "{"),
        (' name="', '{"'),
        (' name="ci', '{"ci'),
        (' name="city"', '{"city"'),
        (' name="city" ', '{"city": '),
        (' name="city" string="tr', '{"city": '),
        (' name="city" string="true"', '{"city": '),
        (
            ' name="a"b" s',
            '{"a\\"b": ',
        ),  # as in a whole tag, a quote not followed by a separator is the name's
        (' name="k\\n', '{"k\\n'),
        # Not the start of the well-formed tag: what the reference has written by then.
        (' string="true" name="city"', ""),
        ("  name=", ""),
        # Other spellings of a well-formed start (D8): still the start of valid JSON.
        (" name=city", "{"),
        (' name="city"\n', '{"city": '),
    ],
)
def test_output_cut_inside_a_parameter_tag(tag: str, arguments: str) -> None:
    """The output ends inside a parameter tag: the call's arguments stop where the reference stops them, after
    the separator once ``parameter name=`` is read, then the key as far as it goes, then ``": "``; and after a
    complete parameter, the same after its ``, ``."""
    opener = f'<{D}tool_calls>\n<{D}invoke name="f">\n'
    for prefix, before in (
        ("", ""),
        (f'<{D}parameter name="a" string="true">v</{D}parameter>\n', '{"a": "v"'),
    ):
        separated = arguments.replace("{", ", ", 1) if before else arguments
        for pieces in (
            [_units(opener + prefix + f"<{D}parameter" + tag)],
            list(_units(opener + prefix + f"<{D}parameter" + tag)),
        ):
            for parser in (BlockParser, _Stepwise):
                assert _arguments(_run(parser, pieces)) == [before + separated], (tag, prefix, parser)


@pytest.mark.parametrize(
    ("flag", "value", "arguments"),
    [
        # What the output held back at its end (it could have begun the closing tag) is the value's text: for a
        # string value it goes inside the string, as with the reference.
        ('string="true"', "ab<", '{"a": "ab<'),
        ('string="true"', "ab</", '{"a": "ab</'),
        ('string="true"', "ab\t</", '{"a": "ab\\t</'),
        ('string="true"', "<", '{"a": "<'),
        ('string="true"', f"ab</{D}", '{"a": "ab"'),  # the closing tag's start: the value is closed
        ('string="true"', f"ab</{D}para", '{"a": "ab"'),
        # D8: a string="false" value cut short is a JSON string of its raw text.
        ('string="false"', "12</", '{"a": "12</'),
        ('string="false"', f"[1</{D}", '{"a": "[1"'),
        # A parameter without a name: its value is dropped, held text too.
        ("", "ab</", ""),
    ],
)
def test_output_cut_inside_a_value(flag: str, value: str, arguments: str) -> None:
    """The output ends inside a parameter's value (read whole, or unit by unit)."""
    opener = f'<{D}tool_calls>\n<{D}invoke name="f">\n'
    tag = f'<{D}parameter name="a" {flag}>' if flag else f'<{D}parameter string="true">'
    text = _units(opener + tag + value)
    for parser in (BlockParser, _Stepwise, _NoHeldPiece):
        assert _arguments(_run(parser, [text])) == [arguments], parser
        assert _arguments(_run(parser, list(text))) == [arguments], parser


_DSML_IN_TAGS = [
    # A Dsml token that does not follow "<" or "</" is text of the tag: of a value, or (between attributes and
    # around "=") a separator, as white space.
    (f' name="ci{D}ty" string="true">Paris', f'{{"ci{D}ty": "Paris"}}'),
    (f' name="{D}" string="true">Paris', f'{{"{D}": "Paris"}}'),
    (f' name="city" string{D}="true">Paris', '{"city": "Paris"}'),
    (f' name="city" {D}string="true">Paris', '{"city": "Paris"}'),
    (f' name="days" string{D}="false">3', '{"days": 3}'),
    (f' name="city" {D} string="true">Paris', '{"city": "Paris"}'),
    (f' name="n" string{D}="true">12', '{"n": "12"}'),
    (f' name="n" {D}string="true">12', '{"n": "12"}'),
    (f' name={D}"city"{D}string="true">Paris', '{"city\\"' + D + 'string=\\"true": "Paris"}'),
    (f' name="city" string="tr{D}ue">Paris', '{"city": "Paris"}'),
    (f' name=ci{D}ty string="true">Paris', f'{{"ci{D}ty": "Paris"}}'),
    # "<" or "</" and the token inside a quoted value, no ">" after its opening quote: text of the value.
    (f' name="c<{D}ity" string="true">Paris', f'{{"c<{D}ity": "Paris"}}'),
    (f' name="c</{D}ity" string="true">Paris', f'{{"c</{D}ity": "Paris"}}'),
    (f' name="a</{D}parameter>" string="true">v', f'{{"a</{D}parameter>": "v"}}'),
    # A new tag outside a quoted value, right after a quote, or in a value that is not a name's cuts the tag
    # short: no value (the tag's own closing tag does not end the call).
    (' name="a" string="tr', '{"a": ""}'),
    (f' name="a" string="tr</{D}parameter>\n<{D}parameter name="b" string="true">w', '{"a": "", "b": "w"}'),
    (f' name="city" <{D}string="true">Paris', '{"city": ""}'),
    # ... and inside one after a ">" (a stray or missing quote): the tag ends at that ">".
    (f' name="a" string="true>v{D}x', f'{{"a": "v{D}x"}}'),
    (f' name="a" string="true>v<{D}x', f'{{"a": "v<{D}x"}}'),
]


@pytest.mark.parametrize(("tag", "arguments"), _DSML_IN_TAGS)
@pytest.mark.parametrize("hard", [True, False])
def test_a_dsml_token_inside_a_parameter_tag(tag: str, arguments: str, hard: bool) -> None:
    """A Dsml token inside a parameter tag begins a new tag only right after "<" or "</", outside a quoted value
    or in one where a ">" came after its opening quote; anywhere else it is text of the tag (as the reference
    reads it), so the parameter keeps its value. The parameter after it is kept too. The same for every cut and
    with or without the shortcuts."""
    text = (
        f'<{D}tool_calls>\n<{D}invoke name="f">\n<{D}parameter{tag}</{D}parameter>\n'
        f'<{D}parameter name="n" string="false">3</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>'
    )
    expected = arguments[:-1] + ', "n": 3}'
    units = _units(text, hard)
    for pieces in ([units], list(units), _split(units, list(range(0, len(units), 3)))):
        for parser in (BlockParser, _Stepwise):
            assert _arguments(_run(parser, pieces)) == [expected], (pieces, parser)
    assert loads(expected)


def test_a_dsml_token_in_a_long_parameter_tag_is_read_in_linear_time() -> None:
    """Many Dsml tokens (some after "<" or "</") inside one quoted name, fed a few units at a time: each piece of
    the tag is read once (read again for each token, this would take minutes)."""
    name = f"a</{D}b<{D}c{D}" * 20000
    text = (
        f'<{D}tool_calls>\n<{D}invoke name="f">\n<{D}parameter name="{name}" string="true">v</{D}parameter>\n'
        f"</{D}invoke>"
    )
    units = _units(text)
    parser = BlockParser(spell=_spell, id_factory=lambda i: f"id{i}")
    out: list[Event] = []
    for k in range(0, len(units), 3):
        parser.feed(units[k : k + 3], out)
    assert [json.loads(e.arguments) for e in out if isinstance(e, ToolCallEnd)] == [{name: "v"}]
