"""DSML tool-call blocks → tool-call events with incrementally streamed JSON arguments (behavior.md#dsml-parsing, D8).

The parser runs once the output machine has seen a block opener (``<`` + the Dsml token). It works on the
machine's units (see :mod:`dscodec.stream._markers`: ``D`` below is the Dsml token, as a spelling in text chunks
or as its id) and follows what the reference does, observed from outside, as a chain of "scan until" states:

=============  ====================================================  =========================================
state          looks for                                             then
=============  ====================================================  =========================================
block          ``invoke name="`` / ``</D tool_calls>``,              name / done (all later output is
               ``</D calls>``; other text is ignored                 discarded)
name           ``"``                                                 the call starts (id, name); → invoke
invoke         ``<D parameter`` (V4.1 with a space after ``D``),     parameter tag / ``}`` → block
               ``parameter name=`` alone (as the reference), or
               a closing tag ``</D``
parameter tag  ``>`` outside a quoted attribute value (``<D`` or     separator, key and ``: ``; → value
               ``</D`` outside the quoted name ends it without
               a value, see _tag_starts; a ``D`` alone is text)
value          ``</D``                                               the parameter ends → invoke
=============  ====================================================  =========================================

Where dscodec differs (DEVIATIONS.md D8): a call whose invoke is closed always has arguments that
:func:`dscodec._json.loads` accepts ("valid JSON" in dscodec: RFC 8259 without NaN or Infinity, no lone
surrogate escapes, numbers within the double range, at most 127 levels deep, so a value may nest 126 levels
inside the arguments object):

* a parameter tag is read by its attributes (``name="…"``, ``name=bare``), in any order; unknown attributes
  (``lang="en"``) are ignored; a tag without ``name`` gives no parameter: it is read as a tag the parser does
  not know, as the reference reads it (its value is passed over, the invoke's closing tag still ends the call),
  except that its own closing tag does not end the call. The reference instead scans for
  the literal text ``parameter name=`` and then for ``true">`` or ``false">``, so other orders, other spacing or
  an attribute after ``string`` lose the parameter or break the arguments;
* keys are written as JSON strings: the name's text is kept when it is valid JSON string content, as the
  reference copies it (``k\\n`` stays an escape), and escaped otherwise;
* ``string="true"``: the value is a JSON string of the raw text, streamed as it comes;
* ``string="false"``: the value is **held** while it may still be valid JSON, then written as is when it is, as
  ``null`` when it is empty or blank, and otherwise as a JSON string holding the raw text. Two cases end the
  hold early, decided at the exact character so that chunking never matters: the value proves invalid (a
  character no JSON text can continue with, e.g. ``N`` of ``NaN``) within its first :data:`HOLD_LIMIT`
  characters — it is then streamed as a JSON string right away; or it grows past :data:`HOLD_LIMIT` characters
  while still a valid JSON prefix — it is then streamed as written (numbers and ``\\u`` escapes only once they
  are complete and valid), and if it turns out invalid or unfinished, the shortest text that completes what was
  sent is added at the parameter's end (``null`` for a missing value, closing quotes and brackets) and the rest
  of the raw value is dropped — unless none of it was final before the character that broke it (a long number
  that this character ends): then it becomes a JSON string of its raw text;
* no ``string`` attribute, or any other value (``string="maybe"``, ``string="True"``): the value is its JSON
  value when the whole raw text is JSON, otherwise a JSON string of the raw text (an empty value gives ``""``).
  It streams as early as that rule allows: from the first character that proves the text is not JSON it is
  streamed as a string; while it is still a JSON prefix it is held, however long, until the parameter closes.

Incomplete calls (the output ended inside them) keep the reference's behaviour: their arguments stop where the
output stopped (inside a parameter tag: at the separator, the key so far, or ``": "``, as the reference writes
them while it reads a well-formed tag).
"""

from __future__ import annotations

import os
import re
import string
from collections import deque
from collections.abc import Callable

from dscodec.stream._dsml_tags import (
    BARE_ATTRIBUTES,
    BARE_PARAMETER,
    BLOCK_HOLD,
    BLOCK_SCAN,
    FIRST_CLOSE,
    INVOKE_HOLD,
    INVOKE_PATTERNS,
    INVOKE_SCAN,
    LONGEST,
    PARAMETERS,
    SCANS,
    SHORT,
    TAG_STEPS,
    TAG_STOPS,
    TAG_WS,
    WHOLE_TAG,
    BlockState,
    Quote,
    QuoteScan,
    ValueKind,
    json_key,
    parameter_of,
    quote_scan,
    scan_short,
    tag_step,
    unclosed_quote_end,
)
from dscodec.stream._dsml_values import (
    HOLD_LIMIT,
    ArgumentWriter,
    ValueMode,
    held_prefix_ok,
    remember_prefix,
)
from dscodec.stream._json_prefix import JsonPrefix
from dscodec.stream._markers import DSML, DSML_FIRST, DSML_HARD, DSML_SOFT, escape_json_string
from dscodec.stream.events import Event, ToolCallDelta, ToolCallStart

__all__ = [
    "HOLD_LIMIT",
    "BlockParser",
    "JsonPrefix",
    "StringPiece",
    "ToolCallIdFactory",
    "random_tool_call_id",
]

ToolCallIdFactory = Callable[[int], str]
#: A piece of a ``string="true"`` value as :class:`ToolCallDelta`'s fields: ``(index, arguments, raw,
#: parameter)``, where ``arguments is raw`` when the text needs no escaping in JSON.
StringPiece = tuple[int, str, str, str]

_ALNUM = string.ascii_letters + string.digits
#: Random characters of a call id: letters and digits, then digits.
_ID_LETTERS = 20
_ID_DIGITS = 4
#: Random bytes read for each: more than enough for the bytes dropped (below).
_LETTER_BYTES = 30
_DIGIT_BYTES = 10
#: Bytes to characters by ``bytes.translate``: a byte below 248 (4 × 62) is the letter or digit it is modulo 62,
#: a byte below 250 (25 × 10) the decimal digit it is modulo 10; the bytes above are dropped, so every kept
#: character is uniform.
_LETTER_TABLE = bytes(ord(_ALNUM[b % 62]) if b < 248 else 0 for b in range(256))
_LETTER_DROP = bytes(range(248, 256))
_DIGIT_TABLE = bytes(ord(string.digits[b % 10]) if b < 250 else 0 for b in range(256))
_DIGIT_DROP = bytes(range(250, 256))
#: The system's randomness (a name of its own, for tests).
_random_bytes = os.urandom
#: The bytes of one id, and the ids one read of the system's randomness makes.
_ID_BYTES = _LETTER_BYTES + _DIGIT_BYTES
_POOL_IDS = 64
#: The random parts of the next call ids, made ahead (emptied in a forked child, so no two processes share one).
_id_pool: deque[str] = deque()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_id_pool.clear)

_BLOCK, _NAME, _INVOKE, _TAG, _SVALUE, _NVALUE, _DONE = BlockState
_OUT, _IN, _IN_AFTER_QUOTE = Quote
_HOLD = ValueMode.HOLD
_INVOKE_SCANS = SCANS[_INVOKE]
_INVOKE_LENGTHS = tuple(len(pattern) for pattern in INVOKE_PATTERNS)
#: After "</" and the Dsml token, what makes a closing tag the call's (or the block's) own, in either version.
_CALL_CLOSERS = ("invoke", " invoke", "tool_calls", " calls")
_CLOSER_LOOKAHEAD = max(map(len, _CALL_CLOSERS))
#: Not a parameter (a tag not seen before).
_UNKNOWN = ("", "", ValueKind.AUTO)
#: A parameter tag cut by the end of the output, from just after ``parameter`` (``name=`` alone when the tag began
#: at ``parameter name=``): how far the reference's ``parameter name=`` got: the name so far, its closing quote
#: (as in the tag reader, a quote followed by anything but whitespace, ``>`` or ``/`` belongs to the name), the
#: whitespace after it.
_CUT_TAG = re.compile(f' ?name=(?:"((?:[^"]+|"(?=[^{TAG_WS}>/]))*)(?:(")([{TAG_WS}])?)?)?')
_KIND_STRING, _KIND_AUTO = ValueKind.STRING, ValueKind.AUTO
_FRESH_SCAN = QuoteScan()


def _fill_id_pool() -> None:
    """Add the random parts of call ids to the pool, made from one read of the system's randomness (a system
    call per id cost about 2% of a stream of many short calls, measured)."""
    raw = _random_bytes(_POOL_IDS * _ID_BYTES)
    # The first bytes give letters, the rest digits, each by one table lookup in C; a byte that would make a
    # character more likely than another is dropped (rejection sampling), so every character is uniform. The
    # bytes read leave room for the dropped ones; the pool is read again when it runs dry.
    cut = len(raw) * _LETTER_BYTES // _ID_BYTES
    letters = raw[:cut].translate(_LETTER_TABLE, _LETTER_DROP).decode()
    digits = raw[cut:].translate(_DIGIT_TABLE, _DIGIT_DROP).decode()
    count = min(len(letters) // _ID_LETTERS, len(digits) // _ID_DIGITS)
    _id_pool.extend(
        [
            letters[k * _ID_LETTERS : (k + 1) * _ID_LETTERS] + digits[k * _ID_DIGITS : (k + 1) * _ID_DIGITS]
            for k in range(count)
        ]
    )


def random_tool_call_id(index: int) -> str:
    """``call_<NN>_<20 letters/digits><4 digits>`` (behavior.md#dsml-parsing), random like the reference's.

    Examples:
        >>> tid = random_tool_call_id(3)
        >>> tid[:8], len(tid)
        ('call_03_', 32)
    """
    while True:
        try:
            # deque.popleft is atomic: threads never share a part; a forked child starts with an empty pool.
            return f"call_{index:02d}_{_id_pool.popleft()}"
        except IndexError:
            _fill_id_pool()


def _begins_a_closer(word: str) -> bool:
    """Whether ``word`` may begin one of the closing tags that end a call (a function of its own, so that the
    parser's method keeps its locals out of cells)."""
    return any(c.startswith(word) for c in _CALL_CLOSERS)


class BlockParser(ArgumentWriter):
    """Parses one DSML tool-call block from machine units into tool-call events.

    Output comes a token or a few at a time, and the same pieces come again and again (the same tags, the same
    parameter names): what a short piece of a tag, of the block or of an invoke gives is remembered by its text,
    and so is what a parameter tag gives (:mod:`dscodec.stream._dsml_tags`); a common parameter tag that comes
    whole is read in one match.

    Args:
        spell: turns units (with sentinels) into the text they stand for.
        id_factory: makes the call id from the call index.
    """

    #: The units that change anything inside a parameter tag: the reader jumps from one to the next (tests put a
    #: pattern that stops at every unit here).
    _tag_stops = TAG_STOPS

    def __init__(self, *, spell: Callable[[str], str], id_factory: ToolCallIdFactory) -> None:
        super().__init__(spell)
        self._id_factory = id_factory
        self.state = _BLOCK
        #: The block is closed: all later output is discarded (read after every feed, so kept as a flag).
        self.done = False
        self._held = ""  # units: a possible partial pattern / terminator
        self.calls = 0
        # current call
        self._name: list[str] = []
        self._params = 0
        # current parameter tag
        self._tag: list[str] = []
        self._quote = _OUT
        # A tag the parser does not know (a misspelled parameter tag, a parameter tag cut short by a closing tag)
        # came after the call's last parameter: the next closing tag closes it, unless it is the call's or the
        # block's own. (In a call's well-formed text, "<" only ever begins a tag the parser reads.)
        self._stray = False
        #: How far :meth:`_tag_starts` has read the tag's pieces: the pieces (list), how many, where that reading
        #: is, the last two units.
        self._tag_scan: tuple[list[str], int, QuoteScan, str] = ([], 0, _FRESH_SCAN, "")

    @property
    def pending_units(self) -> str:
        return "".join(self._tag) + self._held

    @property
    def call_arguments(self) -> list[str]:
        """The current call's argument fragments so far: one list per call, appended to until the call ends
        (the machine's string lane appends the pieces of a ``string="true"`` value it reads itself)."""
        return self._args

    def string_value_piece(self, text: str) -> StringPiece | None:
        """Fast path: ``text`` (plain text, no sentinels) continues a ``string="true"`` value and cannot start
        its closing tag. Returns the argument delta's fields (a :data:`StringPiece`), or None when the general
        :meth:`feed` is needed."""
        if self.state is not _SVALUE or self._held or self._delta or "<" in text:
            return None
        escaped = escape_json_string(text)  # the text itself when nothing needs escaping
        self._args.append(escaped)
        return (self._index, escaped, text, self._param_name)

    def feed(self, units: str, out: list[Event]) -> None:
        """Consume ``units`` entirely, appending events to ``out``."""
        self._out = out
        if self._held:
            s = self._held + units
            self._held = ""
        else:
            s = units
        state = self.state
        i = 0
        # Whole pieces in the commonest cases first: model output comes a token or a few at a time.
        if state is _TAG:
            if self._tag_stops is TAG_STOPS:
                # A short piece of a tag: its outcome is remembered (a reader made to stop at every unit, in
                # tests, reads it unit by unit).
                step = TAG_STEPS[self._quote].get(s) or tag_step(self._quote, s)
                if step is not None:
                    quote, end = step
                    if end < 0:
                        self._tag.append(s)
                        self._quote = quote
                        return
                    self._tag.append(s[:end])
                    self._quote = _OUT
                    self._end_tag(has_value=True)
                    i = end + 1
                    state = self.state
        elif state is _INVOKE:
            found = _INVOKE_SCANS.get(s)
            if found is not None:
                index, end = found
                if index < 0:  # no tag in the piece: at most its end is held
                    if end < len(s):
                        self._held = s[end:]
                    if s.find("<", 0, end) >= 0:
                        self._stray = True  # a tag the parser does not know was passed over
                    return
                if index < FIRST_CLOSE:
                    if end == len(s):  # a parameter tag begins at the piece's end
                        self._stray = False
                        self.state = _TAG
                        self._tag = [BARE_ATTRIBUTES] if index == BARE_PARAMETER else []
                        self._quote = _OUT
                        return
                    if index != BARE_PARAMETER and self._tag_stops is TAG_STOPS:
                        # A parameter tag begins, and the rest of the piece is the start of its attributes (as
                        # remembered): what _scan_invoke, then the tag's reader, would do.
                        rest = s[end:]
                        step = TAG_STEPS[_OUT].get(rest)
                        if step is not None and step[1] < 0:
                            self._stray = False
                            self.state = _TAG
                            self._tag = [rest]
                            self._quote = step[0]
                            return
        elif state is _NVALUE and s and "<" not in s and self._value_mode is _HOLD:
            raw = self._spell(s)  # no closing tag can start in it
            if self._held_piece(raw):
                if self._delta:
                    self._flush_delta()
                return
        n = len(s)
        while i < n:
            if state is _INVOKE:
                i = self._scan_invoke(s, i)
            elif state is _TAG:
                if n - i <= SHORT and self._tag_stops is TAG_STOPS:  # as above, for the rest of the piece
                    step = tag_step(self._quote, s[i:])
                    if step is not None:
                        quote, end = step
                        if end < 0:
                            self._tag.append(s[i:])
                            self._quote = quote
                            break
                        self._tag.append(s[i : i + end])
                        self._quote = _OUT
                        self._end_tag(has_value=True)
                        i += end + 1
                        state = self.state
                        continue
                start = i
                i, again = self._tag_text(s, i)
                if again:  # a new tag began inside this one: what followed this tag's end is scanned again
                    # (the new tag's start "<" or "</", after a value when a quote took this tag's ">")
                    if i - start >= len(again):
                        i -= len(again)
                    else:  # it began with an earlier feed (at most once per feed: only this feed's first tag)
                        s = again + s[i:]
                        n = len(s)
                        i = 0
            elif state is _SVALUE:
                i = self._string_value(s, i)
            elif state is _NVALUE:
                i = self._value_text(s, i)
            elif state is _BLOCK:
                i = self._scan_block(s, i)
            elif state is _NAME:
                j = s.find('"', i)
                if j < 0:
                    self._name.append(s[i:])
                    break
                self._name.append(s[i:j])
                i = j + 1
                self._start_call()
            else:  # _DONE
                break
            state = self.state
        if self._delta:
            self._flush_delta()

    def _scan(self, s: str, i: int, state: BlockState) -> tuple[int, int]:
        """Scan ``s`` from ``i`` for the patterns of ``state``: the index of the first one found and its end; or
        -1 and ``len(s)``, the end of ``s`` that may start a pattern being held."""
        n = len(s)
        if n - i <= SHORT:
            rest = s[i:] if i else s
            found = SCANS[state].get(rest)
            index, end = found if found is not None else scan_short(state, rest)
            end += i
        else:
            # A compiled alternation: the search never copies the rest of ``s`` and resumes where the last one
            # ended, so a chunk holding many tags is read in linear time.
            m = (BLOCK_SCAN if state is _BLOCK else INVOKE_SCAN).search(s, i)
            if m is not None:
                return (m.lastindex or 0) - 1, m.end()
            h = (BLOCK_HOLD if state is _BLOCK else INVOKE_HOLD).search(s, max(i, n - LONGEST))
            index, end = -1, n if h is None else h.start()
        if index < 0 and end < n:
            self._held = s[end:]
            return -1, n
        return index, end

    def _scan_block(self, s: str, i: int) -> int:
        index, end = self._scan(s, i, _BLOCK)
        if index == 0:  # invoke name="
            self.state = _NAME
            self._name = []
        elif index > 0:
            self.state = _DONE
            self.done = True
        return end

    def _scan_invoke(self, s: str, i: int) -> int:
        index, end = self._scan(s, i, _INVOKE)
        # The text passed over holds no tag of a call, but it may hold one the parser does not know.
        stop = len(s) - len(self._held) if index < 0 else end - _INVOKE_LENGTHS[index]
        if s.find("<", i, stop) >= 0:
            self._stray = True
        if index < 0:
            return end
        if index >= FIRST_CLOSE:
            # The invoke's closing tag: any closing tag ends the call, as with the reference, except one that
            # closes a tag the parser did not know (then what follows "</" and the Dsml token tells which).
            if self._stray:
                word = s[end : end + _CLOSER_LOOKAHEAD]
                if not word.startswith(_CALL_CLOSERS):
                    if end + len(word) == len(s) and _begins_a_closer(word):
                        self._held = s[end - _INVOKE_LENGTHS[index] :]  # not yet known: read again with more
                        return len(s)
                    self._stray = False  # the unknown tag's closing tag: the call goes on
                    return end
                self._stray = False
            self._struct("}" if self._params else "{}")
            self._end_call(complete=True)
            self.state = _BLOCK
            return end
        # A parameter tag begins: its separator and key follow once it is read.
        self._stray = False
        if index != BARE_PARAMETER and end < len(s) and self._tag_stops is TAG_STOPS:
            # The whole tag is here in its commonest form: read at once (a reader made to stop at every unit,
            # in tests, reads it unit by unit).
            whole = WHOLE_TAG.match(s, end)
            if whole is not None:
                self._parameter(parameter_of(s[end : whole.end() - 1]), has_value=True)
                return whole.end()
        self.state = _TAG
        self._tag = [BARE_ATTRIBUTES] if index == BARE_PARAMETER else []
        self._quote = _OUT
        return end

    def _start_call(self) -> None:
        self.calls += 1
        self._index = self.calls - 1
        name = self._spell("".join(self._name))
        self._args = []
        self._params = 0
        self._stray = False
        self._out.append(ToolCallStart(self._index, self._id_factory(self._index), name))
        self.state = _INVOKE

    def _tag_text(self, s: str, i: int) -> tuple[int, str]:
        """Read the parameter tag up to its ``>`` (outside a quoted value), or up to a Dsml token that begins a
        new tag inside this one (see :meth:`_tag_starts`; any other Dsml token is text of the tag). If a quoted
        value was still open and a ``>`` came after its opening quote, the tag ended there (a stray or missing
        quote took its end): the text after that ``>`` is the parameter's value. Otherwise the parameter has no
        value. Either way what follows the tag is scanned again (returned
        with the index it ends at)."""
        quote = self._quote
        tag_stops = self._tag_stops
        n = len(s)
        j = i
        while j < n:
            # Only quotes, ">" and Dsml tokens change anything: jump to the next.
            if quote is not _IN_AFTER_QUOTE:
                m = tag_stops.search(s, j)
                if m is None:
                    break
                j = m.start()
            ch = s[j]
            if ch == DSML_SOFT or ch == DSML_HARD:
                if j > i:
                    self._tag.append(s[i:j])
                    i = j
                if self._tag_starts():
                    tag = "".join(self._tag)
                    cut = len(tag)
                    if tag.endswith("</"):
                        cut -= 2
                    elif tag.endswith("<"):
                        cut -= 1
                    self._quote = _OUT
                    end = -1 if quote is _OUT else unclosed_quote_end(tag[:cut])
                    if end >= 0:
                        self._tag = [tag[:end]]
                        self._end_tag(has_value=True)
                        return j, tag[end + 1 :]
                    self._tag = [tag[:cut]]
                    self._end_tag(has_value=False)
                    # A closing tag that cuts the tag short is most likely the parameter's own: it may not end
                    # the call (see _scan_invoke). (After "<" a new tag begins: it is read as any other.)
                    self._stray = tag.endswith("</")
                    return j, tag[cut:]
            if quote is _IN_AFTER_QUOTE:
                quote = _OUT if ch in TAG_WS or ch == ">" or ch == "/" else _IN
            if quote is _OUT:
                if ch == ">":
                    self._tag.append(s[i:j])
                    self._quote = _OUT
                    self._end_tag(has_value=True)
                    return j + 1, ""
                if ch == '"':
                    quote = _IN
            elif ch == '"':
                quote = _IN_AFTER_QUOTE
            j += 1
        self._tag.append(s[i:])
        self._quote = quote
        return n, ""

    def _tag_starts(self) -> bool:
        """Whether the Dsml token that comes after the parameter tag's text so far (its pieces) begins a new tag
        that cuts this one short: right after ``<`` or ``</``, outside a quoted value, or inside one that is not
        a ``name`` attribute's or that already holds a quote or a ``>`` (a stray or missing quote:
        ``string="tru</…``, ``string="true"</…``, ``string="true>v</…``). Anywhere else the token is text of the
        tag: of the name (``name="ci｜DSML｜ty"``, ``name="c</｜DSML｜ity"``), of another value, or a separator
        between attributes. (Each piece is read once: the reading goes on from where the last call left it.)"""
        pieces = self._tag
        tag_scan = self._tag_scan
        if tag_scan[0] is pieces:
            _, done, scan, tail = tag_scan
        else:
            done, scan, tail = 0, _FRESH_SCAN, ""
        for piece in pieces[done:]:
            scan = quote_scan(scan, piece)
            tail = (tail + piece[-2:])[-2:]
        self._tag_scan = (pieces, len(pieces), scan, tail)
        if tail[-1:] != "<" and tail != "</":
            return False
        return scan.quote is _OUT or scan.inner or not scan.of_name

    def _end_tag(self, *, has_value: bool) -> None:
        """The parameter tag is read: its parameter begins."""
        text = self._spell("".join(self._tag))
        self._tag = []
        found = PARAMETERS.get(text, _UNKNOWN)
        self._parameter(parameter_of(text) if found is _UNKNOWN else found, has_value=has_value)

    def _parameter(self, parameter: tuple[str, str, ValueKind] | None, *, has_value: bool) -> None:
        """Write the separator and the key of ``parameter`` (from :func:`parameter_of`); start its value (or
        write an empty one).

        A tag without a ``name`` attribute gives no parameter: as with the reference, which never finds its
        ``parameter name=``, it is a tag the parser does not know. What follows it is passed over up to the next
        tag, and the next closing tag ends the call if it is the invoke's or the block's, else closes this tag
        (see :meth:`_scan_invoke`).
        """
        if parameter is None:
            self.state = _INVOKE
            self._stray = True
            return
        if self._delta:
            self._flush_delta()
        key, self._param_name, kind = parameter
        # The separator, the key and ": ", each a delta of its own.
        index = self._index
        separator = ", " if self._params else "{"
        self._params += 1
        if kind is _KIND_STRING:  # then the value's opening quote: _start_value in place
            self._kind = kind
            self._args.append(separator + key + ': "')
            self._out += (
                ToolCallDelta(index, separator),
                ToolCallDelta(index, key),
                ToolCallDelta(index, ": "),
                ToolCallDelta(index, '"'),
            )
            self.state = _SVALUE
        else:
            self._args.append(separator + key + ": ")
            self._out += (
                ToolCallDelta(index, separator),
                ToolCallDelta(index, key),
                ToolCallDelta(index, ": "),
            )
            self._start_value(kind)
        if not has_value:
            self._end_value()
            self.state = _INVOKE

    def _held_piece(self, raw: str) -> bool:
        """The commonest case of :meth:`_value_raw`: a piece of a held value that fits the hold whole. False
        (nothing done) when it does not fit."""
        length = self._value_len + len(raw)
        if length <= HOLD_LIMIT and self._checker is None:
            # A short value: checked by its whole text so far when that text was seen before (remembered), else
            # by a checker of its own from here on (so a value is read whole at most once).
            held = "".join(self._unsent) + raw if self._unsent else raw
            ok = held_prefix_ok(held)
            self._unsent.append(raw)
            self._value_len = length
            if ok is None:
                ok = not self._checker_now().failed
                remember_prefix(held, ok)
            if not ok:
                self._as_string("")
            return True
        if self._kind is not _KIND_AUTO and length > HOLD_LIMIT:
            return False
        checker = self._checker_now()
        checker.feed(raw)
        self._unsent.append(raw)
        self._value_len = length
        if checker.failed:
            self._as_string("")
        return True

    def _value_end(self, s: str, i: int) -> tuple[int, bool]:
        """Where the value in ``s`` (from ``i``) ends, and whether its closing tag ``</`` + Dsml is there; when it
        is not, a trailing ``<`` or ``</`` (it may start the tag) is held."""
        n = len(s)
        j = s.find("</", i)
        while j >= 0 and j + 2 < n and s[j + 2] not in DSML:
            j = s.find("</", j + 1)
        if j >= 0 and j + 2 < n:
            return j, True
        end = j if j >= 0 else n - 1 if s[-1] == "<" else n
        self._held = s[end:]
        return end, False

    def _string_value(self, s: str, i: int) -> int:
        """:meth:`_value_text` for a ``string="true"`` value."""
        n = len(s)
        end, closed = self._value_end(s, i)
        if end > i:
            self._string_piece(self._spell(s[i:end]))
        if not closed:
            return n
        self._args.append('"')
        self._out.append(ToolCallDelta(self._index, '"'))
        self.state = _INVOKE
        return end + 3

    def _value_text(self, s: str, i: int) -> int:
        """Read a value that is not a plain string, up to its closing tag ``</`` + Dsml."""
        n = len(s)
        end, closed = self._value_end(s, i)
        if end > i:
            self._value_piece(self._spell(s[i:end]))
        if not closed:
            return n
        self._end_value()
        self.state = _INVOKE
        return end + 3

    def read_ahead(self, ahead: str, out: list[Event]) -> bool:
        """The start of a spelling is held after what was fed (text chunks): it comes next, whatever it becomes.
        In a value, a held ``<`` or ``</`` that it cannot continue into a closing tag is value text now. Returns
        whether ``ahead`` itself would be value text whatever it becomes (not the Dsml token after ``</``, which
        closes the value; not a ``<`` or ``</`` that may begin the closing tag; not the end-of-sentence token's
        start), so that the caller may feed it at once."""
        state = self.state
        if state is not _SVALUE and state is not _NVALUE:
            return False
        held = self._held
        if ahead[0] == DSML_FIRST:
            inert = held != "</"  # "｜DSML｜" closes the value only right after "</"
        else:  # "<", "</", "</t…" (the start of "</think>") or "<｜…" (of the end-of-sentence token)
            inert = len(ahead) > 2 and ahead[1] == "/"
        if held and (held == "<" or ahead[0] != DSML_FIRST):
            # "<" goes on only with "/", and "</" only with the Dsml token: neither starts the held text.
            self._out = out
            self._held = ""
            if state is _NVALUE:
                self._value_piece(self._spell(held))
            else:
                self._string_piece(self._spell(held))
            if self._delta:
                self._flush_delta()
        return inert

    def _string_piece(self, raw: str) -> None:
        """A piece of a ``string="true"`` value: its delta (no delta is being built here: the value's opening
        quote ended the last one)."""
        escaped = escape_json_string(raw)
        self._args.append(escaped)
        self._out.append(ToolCallDelta(self._index, escaped, raw, self._param_name))

    def _value_piece(self, raw: str) -> None:
        """A piece of a value that is not a plain string: held while short (D8), else written."""
        if self._value_mode is not _HOLD or not self._held_piece(raw):
            self._value_raw(raw)

    def _cut_tag(self, tag: str) -> None:
        """The output ended inside a parameter tag (``tag``: its text after ``parameter``): the arguments stop
        where the reference stops them. It writes the separator once it has read ``parameter name=``, then the
        key as far as the output goes, and ``": "`` once a space follows the key: so ``{``, ``{"ke``, ``{"key"``
        or ``{"key": ``. Before ``name=`` (or with other text where ``name=`` stands in a well-formed tag) it
        has written nothing; after ``name=`` without a quote, the separator alone."""
        found = _CUT_TAG.match(tag)
        if found is None:
            return
        self._struct("{" if self._params == 0 else ", ")
        name, closed, space = found.groups()
        if name is None:
            return
        key = json_key(name)
        self._struct(key if closed else key[:-1])
        if space:
            self._struct(": ")

    def close(self, out: list[Event]) -> None:
        """End of output inside the block: flush held text like the reference and end an open call."""
        self._out = out
        held, self._held = self._held, ""
        state = self.state
        if state in (_SVALUE, _NVALUE):
            self._cut_value(held)
        elif state == _TAG:
            self._cut_tag(self._spell("".join(self._tag) + held))
        if self._index >= 0:
            self._end_call(complete=False)
        self._flush_delta()
