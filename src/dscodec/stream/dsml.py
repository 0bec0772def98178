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
parameter tag  ``>`` outside a quoted attribute value (a ``D``       separator, key and ``: ``; → value
               inside the tag ends it without a value)
value          ``</D``                                               the parameter ends → invoke
=============  ====================================================  =========================================

Where dscodec differs (DEVIATIONS.md D8): a call whose invoke is closed always has arguments that
:func:`dscodec._json.loads` accepts ("valid JSON" in dscodec: RFC 8259 without NaN or Infinity, no lone
surrogate escapes, numbers within the double range, at most 127 levels deep, so a value may nest 126 levels
inside the arguments object):

* a parameter tag is read by its attributes (``name="…"``, ``name=bare``), in any order; unknown attributes
  (``lang="en"``) are ignored; a tag without ``name`` gives no parameter (its value is dropped; the reference
  drops it too, but then takes the parameter's closing tag for the invoke's). The reference instead scans for
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
  of the raw value is dropped;
* no ``string`` attribute, or any other value (``string="maybe"``, ``string="True"``): the value is its JSON
  value when the whole raw text is JSON, otherwise a JSON string of the raw text (an empty value gives ``""``).
  It streams as early as that rule allows: from the first character that proves the text is not JSON it is
  streamed as a string; while it is still a JSON prefix it is held, however long, until the parameter closes.

Incomplete calls (the output ended inside them) keep the reference's behaviour: their arguments stop where the
output stopped.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Callable

from dscodec._json import loads
from dscodec.stream._dsml_tags import (
    BARE_ATTRIBUTES,
    BARE_PARAMETER,
    FIRST_CLOSE,
    INDEX,
    LONGEST,
    PREFIXES,
    SCANNERS,
    TAG_STOPS,
    TAG_WS,
    BlockState,
    Quote,
    hold,
    json_key,
    tag_attributes,
)
from dscodec.stream._dsml_values import HOLD_LIMIT, ArgumentWriter, DeltaKind
from dscodec.stream._json_prefix import JsonPrefix
from dscodec.stream._markers import DSML_HARD, DSML_SOFT, escape_json_string
from dscodec.stream.events import Event, ToolCallDelta, ToolCallStart

__all__ = ["HOLD_LIMIT", "BlockParser", "JsonPrefix", "ToolCallIdFactory", "random_tool_call_id"]

ToolCallIdFactory = Callable[[int], str]

_ALNUM = string.ascii_letters + string.digits
#: Random characters of a call id: letters and digits, then digits.
_ID_LETTERS = 20
_ID_DIGITS = 4

_BLOCK, _NAME, _INVOKE, _TAG, _SVALUE, _NVALUE, _DONE = BlockState
_OUT, _IN, _IN_AFTER_QUOTE = Quote
_STRUCT, _KEYTEXT = DeltaKind.STRUCT, DeltaKind.KEY


def random_tool_call_id(index: int) -> str:
    """``call_<NN>_<20 letters/digits><4 digits>`` (behavior.md#dsml-parsing), random like the reference's.

    Examples:
        >>> tid = random_tool_call_id(3)
        >>> tid[:8], len(tid)
        ('call_03_', 32)
    """
    # One read of the system's randomness (not one per character): 192 random bits cut into base-62 and base-10
    # digits, which use about 133 of them, so each character is uniform to within 2**-59.
    number = int.from_bytes(secrets.token_bytes(24), "big")
    chars: list[str] = []
    for alphabet, count in ((_ALNUM, _ID_LETTERS), (string.digits, _ID_DIGITS)):
        for _ in range(count):
            number, k = divmod(number, len(alphabet))
            chars.append(alphabet[k])
    return f"call_{index:02d}_{''.join(chars)}"


class BlockParser(ArgumentWriter):
    """Parses one DSML tool-call block from machine units into tool-call events.

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
        self._held = ""  # units: a possible partial pattern / terminator
        self.calls = 0
        # current call
        self._name: list[str] = []
        self._params = 0
        # current parameter tag
        self._tag: list[str] = []
        self._quote = _OUT

    @property
    def done(self) -> bool:
        return self.state == _DONE

    @property
    def pending_units(self) -> str:
        return "".join(self._tag) + self._held

    def string_value_piece(self, text: str) -> ToolCallDelta | None:
        """Fast path: ``text`` (plain text, no sentinels) continues a ``string="true"`` value and cannot start
        its closing tag. Returns the argument delta, or None when the general :meth:`feed` is needed."""
        if self.state != _SVALUE or self._skip or self._held or self._delta or "<" in text:
            return None
        escaped = escape_json_string(text)
        self._args.append(escaped)
        return ToolCallDelta(self._index, escaped, text, self._param_name)

    def feed(self, units: str, out: list[Event]) -> None:
        """Consume ``units`` entirely, appending events to ``out``."""
        self._out = out
        s = self._held + units if self._held else units
        self._held = ""
        i = 0
        while i < len(s):
            state = self.state
            if state == _DONE:
                break
            if state in (_BLOCK, _INVOKE):
                i = self._scan(s, i, state)
            elif state == _NAME:
                j = s.find('"', i)
                if j < 0:
                    self._name.append(s[i:])
                    break
                self._name.append(s[i:j])
                i = j + 1
                self._start_call()
            elif state == _TAG:
                start = i
                i, again = self._tag_text(s, i)
                if again:  # a new tag began inside this one: scan its start ("<" or "</") again
                    if i - start >= len(again):
                        i -= len(again)
                    else:  # the start came with an earlier feed (at most once per feed)
                        s = again + s[i:]
                        i = 0
            else:  # _SVALUE / _NVALUE
                i = self._value_text(s, i)
        self._flush_delta()

    def _scan(self, s: str, i: int, state: BlockState) -> int:
        # A compiled alternation: the search never copies the rest of ``s`` and resumes where the last one
        # ended, so a chunk holding many tags is read in linear time.
        m = SCANNERS[state].search(s, i)
        if m is None:
            tail = s[max(i, len(s) - LONGEST) :]
            k = hold(tail, PREFIXES[state], LONGEST)
            self._held = tail[len(tail) - k :] if k else ""
            return len(s)
        index = INDEX[state][m.group()]
        if state == _BLOCK:
            if index == 0:
                self.state = _NAME
                self._name = []
            else:
                self.state = _DONE
        elif index < FIRST_CLOSE:  # a parameter tag begins: its separator and key follow once it is read
            self.state = _TAG
            self._tag = [BARE_ATTRIBUTES] if index == BARE_PARAMETER else []
            self._quote = _OUT
        else:  # the invoke's closing tag (any closing tag ends it, as with the reference)
            self._emit("}" if self._params else "{}", _STRUCT)
            self._end_call(complete=True)
            self.state = _BLOCK
        return m.end()

    def _start_call(self) -> None:
        self.calls += 1
        self._index = self.calls - 1
        name = self._spell("".join(self._name))
        self._args = []
        self._params = 0
        self._out.append(ToolCallStart(self._index, self._id_factory(self._index), name))
        self.state = _INVOKE

    def _tag_text(self, s: str, i: int) -> tuple[int, str]:
        """Read the parameter tag up to its ``>`` (outside a quoted value), or up to a Dsml token: then a new tag
        begins inside this one, which ends the parameter without a value, and its start is scanned again."""
        quote = self._quote
        tag_stops = self._tag_stops
        n = len(s)
        j = i
        while j < n:
            if quote != _IN_AFTER_QUOTE:  # only quotes, ">" and Dsml tokens change anything: jump to the next
                m = tag_stops.search(s, j)
                if m is None:
                    break
                j = m.start()
            ch = s[j]
            if ch == DSML_SOFT or ch == DSML_HARD:
                self._tag.append(s[i:j])
                tag = "".join(self._tag)
                cut = len(tag)
                if tag.endswith("</"):
                    cut -= 2
                elif tag.endswith("<"):
                    cut -= 1
                self._tag = [tag[:cut]]
                self._quote = _OUT
                self._end_tag(has_value=False)
                return j, tag[cut:]
            if quote == _IN_AFTER_QUOTE:
                quote = _OUT if ch in TAG_WS or ch == ">" or ch == "/" else _IN
            if quote == _OUT:
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

    def _end_tag(self, *, has_value: bool) -> None:
        """The parameter tag is read: write the separator and its key; start its value (or write an empty one).

        A tag without a ``name`` attribute gives no parameter (as with the reference, which never finds its
        ``parameter name=``): its value is read and dropped.
        """
        attrs = tag_attributes(self._spell("".join(self._tag)))
        self._tag = []
        raw_name = attrs.get("name")
        if raw_name is None:
            self._skip = True
            self.state = _SVALUE
            if not has_value:
                self._end_value()
                self.state = _INVOKE
            return
        self._emit("{" if self._params == 0 else ", ", _STRUCT)
        self._params += 1
        key = json_key(raw_name)
        self._emit(key, _KEYTEXT)
        # The name the key stands for: the raw name itself when it had nothing to escape.
        name = raw_name if len(key) == len(raw_name) + 2 and "\\" not in raw_name else loads(key)
        self._param_name = name if isinstance(name, str) else ""
        self._emit(": ", _STRUCT)
        self._start_value(attrs.get("string"))
        if not has_value:
            self._end_value()
            self.state = _INVOKE

    def _value_text(self, s: str, i: int) -> int:
        # The value ends at '</' + Dsml; hold a trailing '<' or '</'.
        j = s.find("</", i)
        while j >= 0 and j + 2 < len(s) and s[j + 2] not in (DSML_SOFT, DSML_HARD):
            j = s.find("</", j + 1)
        if j < 0:
            end = len(s)
            if s.endswith("<"):
                end -= 1
            self._held = s[end:]
            self._value_piece(s[i:end])
            return len(s)
        if j + 2 == len(s):  # '</' at the very end: may still be the close tag
            self._held = s[j:]
            self._value_piece(s[i:j])
            return len(s)
        self._value_piece(s[i:j])
        self._end_value()
        self.state = _INVOKE
        return j + 3

    def close(self, out: list[Event]) -> None:
        """End of output inside the block: flush held text like the reference and end an open call."""
        self._out = out
        held, self._held = self._held, ""
        state = self.state
        if state in (_SVALUE, _NVALUE):
            self._cut_value(held)
        elif state == _TAG:
            # The output ended inside a parameter tag: the call is cut short after its separator, as the
            # reference cuts it (it writes the separator when the tag begins).
            self._emit("{" if self._params == 0 else ", ", _STRUCT)
        if self._index >= 0:
            self._end_call(complete=False)
        self._flush_delta()
