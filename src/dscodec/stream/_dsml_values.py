"""Parameter values → JSON argument text (deviation D8): the argument deltas of a call, and how each value is
written: streamed as a string, held until it proves JSON or not, streamed as written past the hold, completed when
it breaks."""

from __future__ import annotations

import enum
from collections.abc import Callable

from dscodec._json import MAX_DEPTH
from dscodec.stream._dsml_tags import TAG_WS, BlockState, ValueKind
from dscodec.stream._json_prefix import JsonPrefix
from dscodec.stream._markers import escape_json_string
from dscodec.stream.events import Event, ToolCallDelta, ToolCallEnd

__all__ = [
    "HOLD_LIMIT",
    "ArgumentWriter",
    "DeltaKind",
    "ValueKind",
    "ValueMode",
    "held_prefix_ok",
    "remember_prefix",
]

#: Longest ``string="false"`` value (in characters) held back to decide whether it is valid JSON (D8).
HOLD_LIMIT = 64
#: What held texts of up to :data:`HOLD_LIMIT` characters are: a JSON prefix :class:`JsonPrefix` accepts, and a
#: whole JSON value. The same short values come again and again (numbers, booleans, small lists), so a held value
#: that short is looked up by its whole text so far while that text was seen before (a value gets a checker of
#: its own at its first text not seen); each memory is emptied when full.
_PREFIXES: dict[str, bool] = {}
_VALUES: dict[str, bool] = {}
_MEMO_LIMIT = 4096


def held_prefix_ok(text: str) -> bool | None:
    """Whether ``text`` (at most :data:`HOLD_LIMIT` characters) is a JSON prefix the value checker accepts, as
    remembered; None when it was not seen (or was forgotten)."""
    return _PREFIXES.get(text)


def remember_prefix(text: str, ok: bool) -> None:
    """Remember what :func:`held_prefix_ok` answers for ``text``."""
    if len(_PREFIXES) >= _MEMO_LIMIT:
        _PREFIXES.clear()
    _PREFIXES[text] = ok


def _held_value_ok(text: str) -> bool:
    """Whether ``text`` (at most :data:`HOLD_LIMIT` characters) is one whole JSON value the checker accepts."""
    found = _VALUES.get(text)
    if found is None:
        checker = JsonPrefix(max_depth=MAX_DEPTH - 1)
        checker.feed(text)
        found = checker.finish() and checker.complete()
        if len(_VALUES) >= _MEMO_LIMIT:
            _VALUES.clear()
        _VALUES[text] = found
    return found


class ValueMode(enum.IntEnum):
    """How a value that is not a plain string is being written."""

    HOLD = 0  # held: not yet known to be JSON or not
    STREAM = 1  # streamed as written (a valid JSON prefix past the hold)
    AS_STRING = 2  # proved not JSON before any of it was sent: streamed as a JSON string
    BROKEN = 3  # proved invalid after some was sent: the rest is dropped, the completion added at the end


class DeltaKind(enum.IntEnum):
    """Argument delta kinds: structural pieces are deltas of their own; key and value pieces merge within one
    feed."""

    NONE = -1  # no delta is being built
    STRUCT = 0
    KEY = 1
    VALUE = 2


_BLOCK, _NAME, _INVOKE, _TAG, _SVALUE, _NVALUE, _DONE = BlockState
_KIND_STRING, _KIND_JSON, _KIND_AUTO = ValueKind
_HOLD, _STREAM, _AS_STRING, _BROKEN = ValueMode
_NO_DELTA, _STRUCT, _KEYTEXT, _VALUETEXT = DeltaKind


class ArgumentWriter:
    """The arguments of the current call: its deltas, and the value being written."""

    state: BlockState

    def __init__(self, spell: Callable[[str], str]) -> None:
        self._spell = spell  # units (with sentinels) -> the text they stand for
        self._out: list[Event] = []
        self._index = -1  # the current call's index; -1 outside a call
        self._args: list[str] = []
        self._param_name = ""
        # current JSON value (D8)
        self._kind = _KIND_STRING
        self._value_mode = _HOLD
        self._unsent: list[str] = []  # raw value text not sent yet (all of it while held)
        self._value_len = 0
        self._sent = 0  # value characters sent as written
        # The checker of a held value, made when the value outgrows the hold's memory (None before: see
        # held_prefix_ok) and kept while the value streams.
        self._checker: JsonPrefix | None = None
        # pending argument delta of this feed
        self._delta_kind = _NO_DELTA
        self._delta: list[str] = []
        self._delta_raw: list[str] = []

    def _start_value(self, kind: ValueKind) -> None:
        """A named parameter's value of kind ``kind`` begins (its key is written)."""
        self._kind = kind
        if kind == _KIND_STRING:
            self._struct('"')
            self.state = _SVALUE
        else:
            self.state = _NVALUE
            self._value_mode = _HOLD
            self._unsent = []
            self._value_len = 0
            self._sent = 0
            self._checker = None

    def _struct(self, text: str) -> None:
        """A structural piece (not empty): a delta of its own, after the one being built."""
        self._args.append(text)
        if self._delta:
            self._flush_delta()
        self._out.append(ToolCallDelta(self._index, text))

    def _flush_delta(self) -> None:
        if self._delta:
            text = "".join(self._delta)
            raw = "".join(self._delta_raw) if self._delta_kind == _VALUETEXT and self._delta_raw else None
            self._out.append(
                ToolCallDelta(self._index, text, raw, self._param_name if raw is not None else None)
            )
            self._delta = []
            self._delta_raw = []
        self._delta_kind = _NO_DELTA

    def _emit(self, text: str, kind: DeltaKind, raw: str | None = None) -> None:
        if not text:
            return
        if kind == _STRUCT:
            self._struct(text)
            return
        self._args.append(text)
        if kind != self._delta_kind and self._delta:
            self._flush_delta()
        self._delta.append(text)
        if raw is not None:
            self._delta_raw.append(raw)
        self._delta_kind = kind

    def _end_call(self, *, complete: bool) -> None:
        self._flush_delta()
        self._out.append(ToolCallEnd(self._index, "".join(self._args), complete))
        self._index = -1

    def _checker_now(self) -> JsonPrefix:
        """The value's checker, made (and fed the held text) if the value had none yet; only while it is held
        (all of it unsent)."""
        checker = self._checker
        if checker is None:
            checker = self._checker = JsonPrefix(max_depth=MAX_DEPTH - 1)
            if self._unsent:
                checker.feed("".join(self._unsent))
        return checker

    def _value_units(self, units: str) -> None:
        if units:
            self._value_raw(self._spell(units))

    def _value_raw(self, raw: str) -> None:
        """The next piece of the value (not empty), as text."""
        if self.state == _SVALUE:
            self._emit(escape_json_string(raw), _VALUETEXT, raw)
            return
        mode = self._value_mode
        if mode == _HOLD:
            checker = self._checker_now()
            # Decide at the exact character where the value proves invalid or outgrows the hold, so that the
            # result does not depend on how the output was chunked. A value without a known ``string`` flag is
            # held as long as it is a valid JSON prefix: only its end can tell JSON from text.
            head = raw if self._kind == _KIND_AUTO else raw[: max(0, HOLD_LIMIT - self._value_len)]
            checker.feed(head)
            self._unsent.append(head)
            self._value_len += len(head)
            raw = raw[len(head) :]
            if checker.failed:
                self._as_string(raw)
                return
            if not raw:
                return
            self._value_mode = mode = _STREAM
            self._send_committed("")
        if mode == _STREAM:
            checker = self._checker_now()  # made when the value left the hold
            checker.feed(raw)
            # Nothing of the value was final before the character that broke it (so, one character at a time,
            # nothing of it was sent): it becomes a string, however the output was cut.
            if checker.failed and not checker.final_before_failure:
                self._as_string(raw)
            else:
                self._send_committed(raw)
        elif mode == _AS_STRING:
            self._emit(escape_json_string(raw), _VALUETEXT)

    def _as_string(self, rest: str) -> None:
        """The value is not JSON and none of it was sent: it becomes a JSON string holding its raw text."""
        self._value_mode = _AS_STRING
        self._emit('"' + escape_json_string("".join(self._unsent) + rest), _VALUETEXT)
        self._unsent = []

    def _send_committed(self, raw: str) -> None:
        """Send the value text the checker has made final; keep what it still holds (a number, an escape).

        Held text is joined only when some of it is sent, so a long number arriving in many pieces costs
        linear time.
        """
        checker = self._checker
        assert checker is not None
        ready = checker.committed - self._sent
        if checker.failed:
            self._value_mode = _BROKEN
        if ready <= 0:
            if checker.failed:
                self._unsent = []
            elif raw:
                self._unsent.append(raw)
            return
        text = "".join(self._unsent) + raw if self._unsent else raw
        self._emit(text[:ready], _VALUETEXT)
        self._sent += ready
        if checker.failed or ready >= len(text):
            self._unsent = []
        else:
            self._unsent = [text[ready:]]

    def _end_value(self) -> None:
        if self.state == _SVALUE:
            self._emit('"', _STRUCT)
            return
        mode = self._value_mode
        checker = self._checker
        if mode == _HOLD:
            text = "".join(self._unsent)
            if not text.strip(TAG_WS) and self._kind == _KIND_JSON:
                self._emit("null", _VALUETEXT)
            elif (  # a short value is decided by the memory (see held_prefix_ok)
                _held_value_ok(text) if checker is None else checker.finish() and checker.complete()
            ):
                self._emit(text, _VALUETEXT)
            else:
                self._emit('"' + escape_json_string(text) + '"', _VALUETEXT)
        elif mode == _AS_STRING:
            self._emit('"', _VALUETEXT)
        else:  # _STREAM / _BROKEN: the sent text is a valid prefix; complete it
            assert checker is not None
            if mode == _STREAM:
                checker.finish()
                if checker.failed and not checker.final_before_failure:
                    self._as_string("")
                    self._emit('"', _VALUETEXT)
                    return
                self._send_committed("")
            self._emit(checker.completion(), _VALUETEXT)

    def _cut_value(self, held: str) -> None:
        """The output ended inside the value, ``held`` being its last units: an unfinished value stops as
        written (the call is incomplete)."""
        self._value_units(held)
        if self.state == _NVALUE and self._value_mode in (_HOLD, _STREAM) and self._unsent:
            self._emit("".join(self._unsent), _VALUETEXT)
