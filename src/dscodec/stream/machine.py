"""The output state machine: model text → protocol-neutral events (behavior.md#stage-machine to behavior.md#token-chunks-and-usage, deviations D7, D8, D15).

:class:`OutputMachine` is sans-I/O (no I/O of its own): the caller feeds what the model produced — text chunks with
:meth:`OutputMachine.feed`, decoded token ids with :meth:`OutputMachine.feed_tokens` — and gets events back;
:meth:`OutputMachine.close` flushes what is held at the end. The caller chooses the finish reason.

Stages (behavior.md#stage-machine)::

    REASONING ──</think>──► CONTENT ──<DSML──► TOOL_CALLS ──</DSML tool_calls>──► DISCARD
        └─────────<DSML────────────────────────────┘
    CONTENT (JSON mode) ──{ [ ```json──► JSON_VALUE ──\\n```──► CONTENT (after the value)
    any stage ──end-of-sentence──► DISCARD

Rules, each observed on the reference:

* **Newlines.** Leading ``\\n`` of the reasoning (``reasoning_start`` only) and of the content (no thinking, and
  after ``</think>``) are dropped; only LF counts. Newlines at the end of the reasoning are dropped before
  ``</think>`` or a tool-call block; at the end of the content only before a block.
* **``</think>``** ends the reasoning; inside the content it is removed (never a stop-sequence match across it).
  ``<think>`` and every other special spelling but the end-of-sentence token are plain text.
* **Tool-call blocks** start at ``<`` + the Dsml token in the reasoning or the content when tool parsing is on
  (the tag after it is not checked); :mod:`dscodec.stream.dsml` parses them. All output after the block is
  discarded. With ``starts_in_tool_calls`` the machine starts inside a block: text before the first invoke is
  ignored, an extra opener is tolerated.
* **Stop sequences** (content only; not inside a JSON-mode preamble) end the output at the earliest-ending match,
  ties going to the first listed; text before the match is emitted. ``</think>`` and block openers compete with
  them character by character: whatever completes first wins, and a stop wins a tie. Special tokens that
  arrive as ids are barriers: no stop matches across one.
* **The end-of-sentence token** (``<｜end▁of▁sentence｜>``: its id, or its spelling in a text chunk, also split
  across chunks) ends the output, in every stage (deviation D15; the reference emits it as answer text): the
  result is the one of the output cut right before it. What is held is released as at the end of the output
  (partial markers and partial stop matches become text, an open tool call ends incomplete, the reasoning
  ends) and everything after it is discarded. It never becomes text and, being one unit, never takes part in a
  stop sequence (its spelling neither completes one nor lets one match inside it, so text chunks and ids give
  the same result). The caller still ends the output with :meth:`OutputMachine.close`, so the finish reason
  stays the backend's.
* **JSON mode** (``parse_json_output``): before the JSON starts (``{``, ``[``, or a fence ````json\\n`` / ````\\n``)
  and after a closing fence (``\\n````), the content is replaced by one space for each such stretch of text that
  is not empty — the whole-output result of the reference, whatever the chunking (D7). Inside the value text
  passes verbatim (``</think>`` and DSML included), stop sequences apply, and ``\\n```` closes it; after it
  ``</think>`` is no marker (text in a text chunk, a special id of its own in token input).

Holding back: text is released as soon as it can no longer be part of a marker, a held newline run or a stop
sequence; what is held is at most a marker's length plus a newline run (``pending_text`` shows it).

Logprobs (behavior.md#token-chunks-and-usage): an entry goes with the delta that carries the end of its token's text (a token that
completes no character goes with the next one). Entries of dropped text (stripped newlines, markers, JSON-mode
preamble) go with the next delta of the same channel emitted by the same call, else with the last one it
emitted, else nowhere; the ``</think>`` token's entry and entries of tool-call text are dropped, and so are the
end-of-sentence token's entry and those of everything after it. After a stop sequence, the remaining entries of
the call go with its last content delta.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from dscodec._json import string_literal
from dscodec.conversation import ParsingOptions
from dscodec.errors import DscodecError, ModelOutputError, StreamStateError
from dscodec.stream._dsml_tags import BlockState
from dscodec.stream._fast import FastPaths
from dscodec.stream._markers import (
    CHUNK_UNITS,
    DSML_FIRST,
    DSML_HARD,
    DSML_SOFT,
    DSML_SPELLING,
    EOS_HARD,
    EOS_SOFT,
    EOS_SPELLING,
    HARD_BASE,
    HARD_FIRST,
    HARD_LIMIT,
    OPENER_START,
    SENTINEL_LAST,
    SPELLING_FIRSTS,
    THINK_END_SPELLING,
    THINK_HARD,
    THINK_SOFT,
    Symbolizer,
    has_surrogate,
    sanitize_text,
    symbolize_chunk,
)
from dscodec.stream._stages import (
    CH_CONTENT,
    CONTENT,
    DISCARD,
    ERROR,
    FINISHED,
    JSON_BEFORE,
    JSON_OFF,
    JSON_VALUE,
    REASONING,
    TOOL_CALLS,
    Stage,
)
from dscodec.stream._stops import StopMatcher
from dscodec.stream.decoder import TokenText
from dscodec.stream.dsml import StringPiece, ToolCallIdFactory, random_tool_call_id
from dscodec.stream.events import ContentDelta, Event, OutputEnd, ReasoningEnd, TokenLogprob, ToolCallDelta

__all__ = ["OutputMachine", "Stage"]

#: The block parser's state inside a ``string="true"`` value, where plain token text may be an argument piece.
_STRING_VALUE = BlockState.STRING_VALUE
#: A lane through a tool-call block (see :meth:`OutputMachine.block_lane`).
BlockLane = Callable[[str], "list[Event] | None"]

#: Special ids: every unit from the first hard sentinel on.
_HARD = re.compile(f"[{HARD_FIRST}-{SENTINEL_LAST}]")
_SEGMENTS = re.compile(f"[{HARD_FIRST}-{SENTINEL_LAST}]|[^{HARD_FIRST}-{SENTINEL_LAST}]+")
#: The characters a spelling starts with (``<`` and ``｜``).
_START_A, _START_B = SPELLING_FIRSTS
#: Where a "<" in a text chunk is a spelling or may begin one: ``</think>`` whole, or a start of it at the end of
#: the chunk (``<`` alone may also begin the end-of-sentence spelling, whose ``<｜`` the ``｜`` gives away). Any
#: other "<" ("<div>", "</p>", "a < b") is a plain character.
_LT_SPELLING = re.compile(
    re.escape(THINK_END_SPELLING)
    + "|(?:"
    + "|".join(re.escape(THINK_END_SPELLING[:k]) for k in range(len(THINK_END_SPELLING) - 1, 0, -1))
    + ")\\Z"
)
#: A block opener in the units of a text chunk.
_OPENER_UNITS = OPENER_START + DSML_SOFT
#: Units of JSON mode that may change the stage: a fence's backtick, the bracket that opens the value.
_JSON_STAGE_UNITS = re.compile("[`{[]")
#: Beyond every unit index: ``_discard`` up to here drops every entry still waiting.
_ALL_UNITS = 1 << 62


def _checked_ids(factory: ToolCallIdFactory) -> ToolCallIdFactory:
    """``factory``, with what it returns checked: a call id is a ``str`` that UTF-8 can encode (the events carry
    it as a JSON string), else the machine fails with :class:`~dscodec.errors.ModelOutputError`."""

    def make(index: int) -> str:
        call_id = factory(index)
        if not isinstance(call_id, str):
            raise ModelOutputError(f"tool_call_id_factory must return a str, not {type(call_id).__name__}")
        if has_surrogate(call_id):
            raise ModelOutputError("tool_call_id_factory returned a call id that holds a lone surrogate")
        return call_id

    return make


#: The spellings of the markers' sentinels (soft and hard), which every machine's spelling table starts with.
_MARKER_SPELLINGS = {
    ord(THINK_SOFT): THINK_END_SPELLING,
    ord(THINK_HARD): THINK_END_SPELLING,
    ord(DSML_SOFT): DSML_SPELLING,
    ord(DSML_HARD): DSML_SPELLING,
    ord(EOS_SOFT): EOS_SPELLING,
    ord(EOS_HARD): EOS_SPELLING,
}


class OutputMachine(FastPaths):
    """Turns one model output into events.

    Args:
        parsing_options: what to parse (tool calls, JSON mode, initial thinking stage, stop sequences).
        tool_call_id_factory: makes a call id from the call index; random ``call_<NN>_…`` ids by default.

    Examples:
        >>> m = OutputMachine(ParsingOptions(thinking_initial_stage="reasoning_start"))
        >>> m.feed("\\nLet me think.</thi") + m.feed("nk>\\n\\nHello") + m.close()  # doctest: +NORMALIZE_WHITESPACE
        [ReasoningDelta(text='Let me think.', logprobs=()), ReasoningEnd(), ContentDelta(text='Hello', logprobs=()),
         OutputEnd(tool_calls=0, stop_sequence=None)]
    """

    def __init__(
        self, parsing_options: ParsingOptions, *, tool_call_id_factory: ToolCallIdFactory | None = None
    ) -> None:
        opts = parsing_options
        self._tools = opts.parse_tool_calls
        self._json = JSON_BEFORE if opts.parse_json_output else JSON_OFF
        self._id_factory = (
            random_tool_call_id if tool_call_id_factory is None else _checked_ids(tool_call_id_factory)
        )
        stops = [s for s in opts.stop_sequences if s]
        self._stop = StopMatcher(stops) if stops else None
        super().__init__()
        self._sym = Symbolizer()
        # True until a text chunk or logprob entries come: until then nothing is ever held by the spelling
        # recogniser and no logprob entry waits, so plain_token need not look.
        self._tokens_only = True
        self._spellings.update(_MARKER_SPELLINGS)
        self._block = None
        # The last string lane made, with the argument list of the call it serves (one lane per call).
        self._string_lane: tuple[list[str], Callable[[str], str | None]] | None = None
        self._json_lane: Callable[[str], str | None] | None = None  # made on first use
        self._text_lane: Callable[[str], str | None] | None = None  # made on first use
        # The block lanes made (for token text, for text chunks), with the block they serve.
        self._block_lanes: tuple[object, BlockLane | None, BlockLane | None] = (None, None, None)
        self._tool_calls = 0
        self._stop_at = 0
        self._call_end = 0  # the unit index right after the units of the current call (see _process)
        self._lead = False
        stage = opts.thinking_initial_stage
        if opts.starts_in_tool_calls:
            # Required tool choice: the output starts inside a block (takes precedence over thinking).
            self._enter_block()
        elif stage in ("reasoning_start", "reasoning_continuation"):
            self._stage = REASONING
            self._lead = stage == "reasoning_start"
        else:
            self._stage = CONTENT
            self._lead = stage is None
        self._configure()

    @property
    def state(self) -> Stage:
        """The current stage."""
        return self._stage

    @property
    def pending_text(self) -> str:
        """Text received but not yet turned into events (a possible marker, stop sequence or newline run)."""
        held = self._pend
        if self._block is not None and self._stage == TOOL_CALLS:
            held += self._spell(self._block.pending_units)
        return held + self._sym.held

    @property
    def tool_calls(self) -> int:
        """Number of tool calls started so far."""
        return self._tool_calls

    def feed(self, text: str, *, logprobs: Sequence[TokenLogprob] | None = None) -> list[Event]:
        """Process a text chunk; special spellings in it (``</think>``, ``｜DSML｜``, the end-of-sentence token)
        count as markers.

        Args:
            text: the next piece of model output.
            logprobs: entries for the tokens of this chunk; they go with the delta that carries the end of the
                chunk's text.

        Raises:
            StreamStateError: the machine has finished or failed before.
        """
        if self._stage is FINISHED or self._stage is ERROR:
            self._check()
        self._tokens_only = False
        self._incomplete = False
        if self._stage is DISCARD:
            return self._discarded()
        try:
            units = self._sym.feed(sanitize_text(text))
            if (
                self._sym.held
                and not (self._tools and DSML_SOFT in units and self._opens_block(units))
                and (self._json == JSON_OFF or _JSON_STAGE_UNITS.search(units) is None)
                and self._held_is_text(units[-1:] or self._pend[-1:])
            ):
                # The start of a spelling that would be text even when complete: nothing waits for it. (When the
                # units may change that, by opening a block or entering or leaving a JSON-mode value, _process
                # decides once they are read; "</think>" and the end-of-sentence token change nothing here.)
                units += self._sym.flush()
            # Not with a spelling held and stop sequences: a stop may end inside it (see _process).
            if (
                self._quick_ok
                and units
                and not self._entries
                and not (self._sym.held and self._stops is not None)
            ):
                quick = self._quick(units, logprobs)
                if quick is not None:
                    return quick
            if logprobs:
                pos = self._pos
                anchor = pos + len(units) - 1 if units else pos
                entries = self._entries
                for entry in logprobs:  # (no generator: one would keep this method's locals in cells)
                    entries.append((anchor, pos, entry))
            elif not self._sym.held:  # as token text is read (a held spelling waits for the general path)
                return self._units(units)
            return self._process(units)
        except BaseException as exc:
            raise self._fail(exc) from exc

    def _opens_block(self, units: str) -> bool:
        """Whether ``units`` of a text chunk (holding the Dsml token) open a tool-call block: a "<" right before
        that token, in them or held from before them."""
        return _OPENER_UNITS in units or (units[0] == DSML_SOFT and self._pend[-1:] == OPENER_START)

    def _held_is_text(self, before: str, held: str = "") -> bool:
        """Whether the start of a spelling the recogniser holds (or ``held``) would be plain text whatever it
        becomes, where the machine is (``before``: the unit right before it, ``""`` for none): the Dsml token in
        the reasoning, the content or a JSON-mode value, unless tools are on and it follows a "<" (a block
        opener); ``</think>`` inside a JSON-mode value. The end-of-sentence token is never text."""
        held = held or self._sym.held
        stage = self._stage
        if held[0] != DSML_FIRST:
            return stage is JSON_VALUE and held[1:2] == "/"
        if stage is JSON_VALUE:
            return True
        if stage is not CONTENT and stage is not REASONING:
            return False
        return not (self._tools and before == OPENER_START)

    def feed_tokens(
        self,
        tokens: Sequence[TokenText],
        *,
        logprobs: Sequence[TokenLogprob] | None = None,
        incomplete: bool = False,
    ) -> list[Event]:
        """Process decoded token ids (:meth:`IncrementalDecoder.decode`); only special ids count as markers.

        Args:
            tokens: one entry per id, in order.
            logprobs: one entry per id (or None).
            incomplete: the decoder still holds part of a character after these ids (its text goes on in the
                next call): entries of dropped text wait for it, as they wait for a held marker.

        Raises:
            StreamStateError: the machine has finished or failed before, or ``logprobs`` does not have one entry
                per token.
        """
        if self._stage is FINISHED or self._stage is ERROR:
            self._check()
        self._incomplete = incomplete
        if logprobs is not None:
            self._tokens_only = False
        if len(tokens) == 1 and not self._sym.held and not self._entries:
            token = tokens[0]
            text = token.text
            if token.spelling is None:
                quick: list[Event] | None = None
                if not text:
                    if logprobs is None:
                        quick = self._empty_token()
                elif self._quick_ok and (logprobs is None or len(logprobs) == 1):
                    quick = self._quick(text if text.isascii() else sanitize_text(text), logprobs)
                if quick is not None:
                    return quick
        if logprobs is not None and len(logprobs) != len(tokens):
            exc = StreamStateError(
                f"invalid log probabilities: {len(logprobs)} log probabilities for {len(tokens)} token IDs"
            )
            raise self._fail(exc)
        if self._stage is DISCARD:
            return self._discarded()
        try:
            # Spellings held from an earlier text chunk cannot continue into token text; in token text only
            # the Dsml id can follow a "<".
            parts = [self._sym.flush()]
            entries = self._entries
            hard_code = self._hard_code
            if logprobs is None:  # only the units count: no per-token bookkeeping
                for token in tokens:
                    spelling = token.spelling
                    text = token.text
                    if spelling is None:
                        if text:
                            parts.append(text if text.isascii() else sanitize_text(text))
                    elif len(text) == len(spelling):
                        parts.append(hard_code(spelling))
                    else:
                        parts.append(sanitize_text(text[: len(text) - len(spelling)]) + hard_code(spelling))
            else:
                size = len(parts[0])
                carried = size
                base = self._pos
                after_special = False  # the last unit so far is a special id's (a stretch of its own)
                for k, token in enumerate(tokens):
                    spelling = token.spelling
                    text = token.text
                    if spelling is None:
                        unit = sanitize_text(text)
                    else:
                        unit = sanitize_text(text[: len(text) - len(spelling)]) + hard_code(spelling)
                    if unit:
                        parts.append(unit)
                        size += len(unit)
                        after_special = spelling is not None
                        entries.append((base + size - 1, base + size - len(unit), logprobs[k]))
                    elif token.unknown and size > carried and not after_special:
                        # An id the vocabulary does not have, after text of this call: its entry goes with that
                        # text, as with the reference (not with the text after it, nor lost with a marker after
                        # it; right after a special id, or first in the call, it goes with the text that follows).
                        entries.append((base + size - 1, base + size, logprobs[k]))
                    else:  # an id that completes no character yet: its entry goes with the text that does
                        entries.append((base + size, base + size, logprobs[k]))
            # A spelling held from a text chunk is text from before, not of this stretch (see _settle).
            return self._units("".join(parts), carried=len(parts[0]))
        except BaseException as exc:
            raise self._fail(exc) from exc

    def feed_units(self, units: str) -> list[Event]:
        """:meth:`feed_tokens` without logprobs for ids the decoder turned into units itself
        (:meth:`~dscodec.stream.decoder.IncrementalDecoder.decode_units` with :meth:`special_unit`): the same
        events, without a :class:`TokenText` per id."""
        if self._stage is FINISHED or self._stage is ERROR:
            self._check()
        if self._stage is DISCARD:
            return self._discarded()
        try:
            held = self._sym.flush()
            return self._units(held + units if held else units, carried=len(held))
        except BaseException as exc:
            raise self._fail(exc) from exc

    def block_units(self, units: str) -> list[Event] | None:
        """:meth:`feed_units` for its commonest case, the processor's per-push path: units inside a tool-call
        block (no end-of-sentence token among them, nothing waiting) go straight to the block parser; the
        block's events, or None, with nothing changed, when :meth:`feed_units` must be called instead.

        Raises:
            ModelOutputError: the block parser failed (the machine fails, as with :meth:`feed_units`).
        """
        if (
            self._stage is not TOOL_CALLS
            or EOS_HARD in units
            or EOS_SOFT in units
            or self._sym.held
            or self._entries
            or self._orphans[0]
            or self._orphans[1]
        ):
            return None
        try:
            return self._feed_block(units)
        except BaseException as exc:
            raise self._fail(exc) from exc

    def special_unit(self, spelling: str) -> str:
        """The unit standing for a special id with this spelling in token input: the same unit for a spelling
        every time (callers may remember it)."""
        return self._hard_code(spelling)

    def _units(self, units: str, *, carried: int = 0) -> list[Event]:
        """Process ``units``, whose first ``carried`` units were held from an earlier call."""
        if self._stage is TOOL_CALLS and not self._entries and not self._orphans[0] and not self._orphans[1]:
            fast = self._tool_units(units)
            if fast is not None:
                return fast
        return self._process(units, carried=carried)

    def feed_plain_token(self, text: str) -> list[Event]:
        """Process the text of ordinary (non-special) token ids with no logprobs: the per-token fast path.

        Same result as ``feed_tokens([TokenText(token_id, text)])``. ``text`` comes from the decoder, so it holds
        no lone surrogates (which the machine uses as sentinels). Handled here (:mod:`dscodec.stream._fast`):
        plain text in the middle of the reasoning or the content, in a JSON-mode value, and inside a tool-call
        block. Everything else takes the general path.
        """
        emitted = self.plain_token(text)
        if emitted is None:
            return self.feed_declined(text)
        if isinstance(emitted, list):
            return emitted
        if isinstance(emitted, tuple):
            return [ToolCallDelta(*emitted)]
        if not emitted:
            return []
        delta = ContentDelta if self._stage is JSON_VALUE else self._quick_delta
        return [delta(emitted, ())]

    def plain_token(self, text: str) -> str | StringPiece | list[Event] | None:
        """:meth:`feed_plain_token` for its commonest cases, mostly without a list of events: the text of the one
        delta it would give in the reasoning, the content or a JSON-mode value (on the channel
        :attr:`text_is_reasoning` tells; ``""`` for none, as for ``text=""``), the argument delta of text in the
        middle of a ``string="true"`` argument (as a :data:`~dscodec.stream.dsml.StringPiece`), or the events of
        other text inside a tool-call block; or None, with nothing changed, when :meth:`feed_declined` must be
        called instead.

        Raises:
            ModelOutputError: the block parser failed (the machine fails, as with :meth:`feed_tokens`).
        """
        if not self._tokens_only and (
            self._entries or self._sym.held or self._orphans[0] or self._orphans[1]
        ):
            return None
        if self._quick_ok:
            return self._plain_text(text) if text else ""
        stage = self._stage
        if not text:  # an id that completes no character (part of a UTF-8 sequence): nothing happens
            return "" if stage is not FINISHED and stage is not ERROR else None
        if stage is JSON_VALUE:
            return self._plain_json_value(text)
        if stage is TOOL_CALLS:
            block = self._block
            if block is not None and block.state is _STRING_VALUE:
                # The middle of a ``string="true"`` argument: its delta, unless the parser must read the text.
                delta = block.string_value_piece(text)
                if delta is not None:
                    self._pos += len(text)
                    return delta
            try:  # not the middle of a string argument: the block parser reads it
                return self._tool_units(text)
            except BaseException as exc:
                raise self._fail(exc) from exc
        return self._first_plain_text(text)

    def plain_chunk(self, text: str) -> str | StringPiece | list[Event] | None:
        """:meth:`plain_token` for a text chunk (the processor's per-push path for text): a chunk that holds no
        spelling, no start of one and no lone surrogate, with no spelling held from an earlier chunk, is read
        exactly as the same text decoded from ordinary ids. Inside a tool-call block any chunk is read here, as
        :meth:`feed` reads it (spellings become units; the list of events is then tool-call events only). An empty
        chunk in the middle of the reasoning or the content gives ``""`` (nothing), as :meth:`feed` would. None,
        with nothing changed, for any other chunk (an empty one elsewhere, or with something waiting) or when
        :meth:`plain_token` declines: then :meth:`feed`.

        Raises:
            ModelOutputError: the block parser failed (the machine fails, as with :meth:`feed`).
        """
        if not text:  # backends send one for a token that completes no character
            return self._empty_chunk()
        # A spelling, the start of one, the rest of one held from before, or a lone surrogate.
        spelled = (
            self._sym.held
            or (_START_A in text and _LT_SPELLING.search(text) is not None)
            or _START_B in text
            or (not text.isascii() and has_surrogate(text))
        )
        if self._entries or self._orphans[0] or self._orphans[1]:
            return None if spelled else self.plain_token(text)
        # plain_token's cases, without its call and its checks for what cannot be.
        stage = self._stage
        if stage is TOOL_CALLS:  # any chunk: in a tool-call block
            block = self._block
            assert block is not None
            try:
                if spelled:
                    # The units the spelling recogniser makes (its memory read here first) and the end to hold,
                    # straight to the block parser; nothing changed when an end is held while stop sequences
                    # are set (a stop may end inside it: the general path decides).
                    sym = self._sym
                    chunk = sym.held + text if sym.held else text
                    found = CHUNK_UNITS.get(chunk)
                    units, held = found if found is not None else symbolize_chunk(chunk)
                    if held and self._stops is not None:
                        return None
                    sym.held = held
                    self._tokens_only = False
                    self._incomplete = False
                    if EOS_SOFT in units:  # the end-of-sentence spelling (no hard sentinel comes from text)
                        return self._process(units)
                    text = units
                elif block.state is _STRING_VALUE:
                    delta = block.string_value_piece(text)
                    if delta is not None:
                        self._pos += len(text)
                        return delta
                # Plain text holds no sentinel, so no end-of-sentence token. _feed_block inline: its call costs
                # ~8% of a long string argument's text pushes (measured), where "<" in code leaves the lane.
                self._pos += len(text)
                out: list[Event] = []
                block.feed(text, out)
                if self._sym.held and not block.done:  # (held only without stop sequences, above)
                    self._read_ahead(block, out)
                self._tool_calls = block.calls
                if block.done:
                    self._stage = DISCARD
                return out
            except BaseException as exc:
                raise self._fail(exc) from exc
        if spelled:
            held = self._sym.held
            if held and self._quick_ok:
                # The start of a spelling held from the last chunk ("<", "</") that this one shows to be text
                # ("<div>", "</p>"): the two read as one chunk, as feed would read their units.
                chunk = held + text
                if not (
                    (_START_A in chunk and _LT_SPELLING.search(chunk) is not None)
                    or _START_B in chunk
                    or (not text.isascii() and has_surrogate(text))
                ):
                    emitted = self._plain_text(chunk)
                    if emitted is not None:
                        self._sym.held = ""
                    return emitted
            elif self._quick_ok and not self._pend:
                return self._plain_then_held(text)
            return None
        if self._quick_ok:
            return self._plain_text(text)
        if stage is JSON_VALUE:
            return self._plain_json_value(text)
        return self._first_plain_text(text)  # or another stage: plain_token declines it too

    def _plain_then_held(self, text: str) -> str | None:
        """:meth:`plain_chunk` for a chunk whose only spelling is the start of one at its end ("<div", "ab</"),
        with nothing held before it and no stop sequences: the text before that start as plain text, the start
        held by the recogniser for the next chunk, as :meth:`feed` leaves them (that start goes with the text
        when it would be text whatever it becomes). None, with nothing changed, for any other chunk or when the
        text before it ends in a newline or a "<" (what the held start decides: the general path reads it)."""
        if not text.isascii() and has_surrogate(text):
            return None
        found = CHUNK_UNITS.get(text)
        units, held = found if found is not None else symbolize_chunk(text)
        if not held or not units or units[-1] in "\n<" or units != text[: len(units)]:
            # A spelling inside it (its sentinel), none held, nothing before the start, or a newline run or a
            # "<" right before it, which the held start decides (a "<" before a "<" is text at once).
            return None
        if self._held_is_text(units[-1:], held):
            return self._plain_text(text)
        stops = self._stops
        if stops is None:
            emitted = self._plain_text(units)
        else:
            # As _process with the start held after the units: a stop that would end inside it (and it cannot
            # become the end-of-sentence token) wins at once, which the general path does; otherwise only the
            # part of a partial match that may go on through the held start waits.
            if self._nostrip or self._sticky_at >= 0 or self._lead:
                return None
            before = stops.state_key()
            if not stops.advance(units):
                return None
            wins = not EOS_SPELLING.startswith(held) and stops.would_match(held)
            after = stops.depth_after(held)
            hold = stops.depth if after < 0 else max(0, after - len(held))
            stops.restore(before)
            if wins:
                return None
            emitted = self._plain_text_stops(units, hold)
        if emitted is not None:
            self._sym.held = held
            # As feed leaves them: token text that comes next must see the held start (and release it).
            self._tokens_only = False
            self._incomplete = False
        return emitted

    def _first_plain_text(self, text: str) -> str | None:
        """:meth:`_plain_text` for the first text (not empty, no spelling) of the reasoning or the content, where
        leading newlines are still dropped: text that starts with none begins the stage's middle, as the general
        path's first step would. None, with nothing changed, for other text, elsewhere, or when the general path
        must read it."""
        if not self._lead_over(text):
            return None
        emitted = self._plain_text(text)
        if emitted is None:  # the general path reads it from the stage's start
            self._lead = True
            self._update_quick()
        return emitted

    def string_lane(self) -> Callable[[str], str | None]:
        """A shortcut for the chunks that continue the current ``string="true"`` value, for a caller that reads
        text there again and again (the processor): the lane reads a chunk as :meth:`plain_chunk` would and
        returns the argument delta's text (the chunk itself when nothing needs escaping; ``""`` for an empty
        chunk, which gives no delta), or None, with nothing changed, for a chunk it does not take (one with
        ``<``, the start of a spelling or a lone surrogate).

        Use it only right after :meth:`plain_chunk` or :meth:`plain_token` returned a
        :data:`~dscodec.stream.dsml.StringPiece`, and only until anything else is called on the machine or the
        lane declines a chunk: it checks nothing of the machine's state, which no chunk it takes can change.
        """
        block = self._block
        assert block is not None
        arguments = block.call_arguments
        cached = self._string_lane
        if cached is not None and cached[0] is arguments:
            return cached[1]
        append = arguments.append

        def lane(text: str) -> str | None:
            if _START_A in text or _START_B in text or (not text.isascii() and has_surrogate(text)):
                return None
            if '"' not in text and "\\" not in text and text.isprintable():  # no control character either
                escaped = text
            else:  # escape_json_string, inline (this is the per-push path)
                literal = string_literal(text)
                escaped = text if len(literal) == len(text) + 2 else literal[1:-1]
            append(escaped)
            self._pos += len(text)
            return escaped

        self._string_lane = (arguments, lane)
        return lane

    def token_lane(self) -> Callable[[str], str | None] | None:
        """:meth:`text_lane` and :meth:`json_lane` for the text of ordinary ids, which holds no spelling to look
        for: the lane reads text (not empty) as :meth:`plain_token` would and returns the channel's text (``""``:
        nothing yet), or None, with nothing changed, for text it does not take (one that may hold a marker or the
        closing fence). None when the machine is not in the middle of the reasoning, the content or a JSON-mode
        value (without stop sequences) with nothing waiting.

        Never give the lane a text chunk (it may hold a spelling); use it as :meth:`text_lane` is used.
        """
        if not self._unburdened():
            return None
        if self._quick_ok:
            return self._plain_text
        if self._stage is JSON_VALUE and self._stops is None:
            return self._plain_json_value
        return None

    def text_lane(self) -> Callable[[str], str | None] | None:
        """:meth:`json_lane` for the middle of the reasoning or the content (the channel
        :attr:`text_is_reasoning` tells, which no chunk the lane takes changes); None when the machine is not
        there with nothing waiting."""
        if not self._quick_ok or not self._unburdened():
            return None
        if self._text_lane is not None:
            return self._text_lane
        plain_text = self._plain_text
        empty_chunk = self._empty_chunk

        def lane(text: str) -> str | None:
            if not text:
                return empty_chunk()
            if (
                (_START_A in text and _LT_SPELLING.search(text) is not None)
                or _START_B in text
                or (not text.isascii() and has_surrogate(text))
            ):
                return None
            return plain_text(text)

        self._text_lane = lane
        return lane

    def json_lane(self) -> Callable[[str], str | None] | None:
        """A shortcut for the chunks that continue a JSON-mode value, for a caller that reads text there again and
        again (the processor); None when the machine is not in the middle of one with nothing waiting (no stop
        sequences, no logprob entries, no spelling held). The lane reads a chunk as :meth:`plain_chunk` would and
        returns the content text to emit (``""``: nothing yet, as for a newline that the closing fence may
        follow), or None, with nothing changed, for a chunk it does not take (one that may start the closing fence
        or a spelling, or holds a lone surrogate).

        Use it only until anything else is called on the machine or the lane declines a chunk: it checks nothing
        of the machine's state that no chunk it takes can change.
        """
        if self._stage is not JSON_VALUE or self._stops is not None or not self._unburdened():
            return None
        if self._json_lane is not None:
            return self._json_lane

        def lane(text: str) -> str | None:
            # _plain_json_value, inline, after plain_chunk's checks (this is the per-push path).
            if (
                (_START_A in text and _LT_SPELLING.search(text) is not None)
                or _START_B in text
                or (not text.isascii() and has_surrogate(text))
            ):
                return None
            if not text:  # as feed("") here: nothing
                self._tokens_only = False
                self._incomplete = False
                return ""
            pend = self._pend
            if pend:
                full = pend + text
                if "\n`" in full:
                    return None  # a closing fence may be coming
                self._pend = ""
                self._pend_pos = []
                self._nostrip = 0
            else:
                if "\n`" in text:
                    return None
                full = text
            self._pos = end = self._pos + len(text)
            if full[-1] == "\n":
                self._pend = "\n"
                self._pend_pos = [end - 1]
                return full[:-1]
            return full

        self._json_lane = lane
        return lane

    def block_lane(self, *, tokens: bool) -> BlockLane | None:
        """A shortcut for the pushes inside a tool-call block outside a ``string="true"`` value (the tags, the
        other values), for a caller that reads there again and again (the processor): the lane reads text as
        :meth:`plain_token` (``tokens``: the text of ordinary ids, which holds no spelling) or :meth:`plain_chunk`
        (a text chunk: spellings become units) would, and returns the block's events; or None, with nothing
        changed, for text it does not take (empty, in a ``string="true"`` value, where :meth:`string_lane` is
        the way, or a chunk that spells the end-of-sentence token) and once the block has ended. None when the
        machine is not in a tool-call block with nothing waiting. A ``tokens`` lane also takes the units of ids
        with special ids among them (:meth:`block_units`' input), as long as no end-of-sentence unit is among
        them (the caller checks that).

        Use it only right after :meth:`plain_token` or :meth:`plain_chunk` gave a list of events, or
        :meth:`feed_units` was called inside the block, and only until anything else is called on the machine or
        the lane declines a text: no text it takes makes anything wait.

        Raises:
            ModelOutputError: (from the lane) the block parser failed (the machine fails, as with :meth:`feed`).
        """
        if self._stage is not TOOL_CALLS or not self._unburdened():
            return None
        block = self._block
        assert block is not None
        if block.state is _STRING_VALUE:
            return None
        made = self._block_lanes
        if made[0] is block:
            cached = made[1] if tokens else made[2]
            if cached is not None:
                return cached
        else:
            made = (block, None, None)
        sym = self._sym

        def token_lane(text: str) -> list[Event] | None:
            # plain_token's tool-call case, without its call and its checks for what no lane push changes (the text
            # of ordinary ids holds no spelling, so nothing is held: the chunk lane's steps for that are left out).
            if self._stage is not TOOL_CALLS or not text or block.state is _STRING_VALUE:
                return None
            self._pos += len(text)
            out: list[Event] = []
            if self._other_spellings:
                text = text.translate(self._other_spellings)
            try:
                block.feed(text, out)
            except BaseException as exc:
                raise self._fail(exc) from exc
            self._tool_calls = block.calls
            if block.done:
                self._stage = DISCARD
            return out

        def lane(text: str) -> list[Event] | None:
            # plain_chunk's tool-call case, without its call and its checks for what no lane push changes.
            if self._stage is not TOOL_CALLS or not text:
                return None
            if (
                sym.held
                or (_START_A in text and _LT_SPELLING.search(text) is not None)
                or _START_B in text
                or (not text.isascii() and has_surrogate(text))
            ):
                chunk = sym.held + text if sym.held else text
                found = CHUNK_UNITS.get(chunk)
                units, held = found if found is not None else symbolize_chunk(chunk)
                if (held and self._stops is not None) or EOS_SOFT in units:
                    return None
                sym.held = held
                self._tokens_only = False
                self._incomplete = False
                text = units
            elif block.state is _STRING_VALUE:
                return None
            self._pos += len(text)  # _feed_block, inline (this is the per-push path)
            out: list[Event] = []
            # The units of other special ids read as the text they spell (as in _feed_block).
            if self._other_spellings:
                text = text.translate(self._other_spellings)
            try:
                block.feed(text, out)
                if sym.held and not block.done:  # (held only without stop sequences, above)
                    self._read_ahead(block, out)
            except BaseException as exc:
                raise self._fail(exc) from exc
            self._tool_calls = block.calls
            if block.done:
                self._stage = DISCARD
            return out

        if tokens:
            self._block_lanes = (block, token_lane, made[2])
            return token_lane
        self._block_lanes = (block, made[1], lane)
        return lane

    def feed_declined(self, text: str) -> list[Event]:
        """The rest of :meth:`feed_plain_token` for text :meth:`plain_token` declined: nothing after the block,
        else the general path (inside a block, :meth:`plain_token` has already offered it to the parser)."""
        if text and self._stage is DISCARD and self._unburdened():
            return []
        return self.feed_tokens([TokenText(-1, text)])

    def _unburdened(self) -> bool:
        """Nothing waits that plain token text would have to carry: no logprob entries, no spelling held from a
        text chunk, no entries of dropped text."""
        return not self._entries and not self._sym.held and not self._orphans[0] and not self._orphans[1]

    def close(self) -> list[Event]:
        """End of output: release what is held, end an open call or the reasoning, then :class:`OutputEnd`.

        Returns ``[]`` when the output already ended (a stop sequence matched, or a second call).

        Raises:
            StreamStateError: the machine failed before.
        """
        if self._stage == FINISHED:
            return []
        self._check()
        try:
            self._recs = []
            held = self._sym.flush()
            if held:
                self._run(held)
                if self._stage is FINISHED:  # the held text completed a stop sequence
                    self._settle()
                    return self._events()
            self._flush_stage()
            self._settle()
            self._discard(_ALL_UNITS)
            self._recs.append(OutputEnd(self._tool_calls))
            self._stage = FINISHED
            self._quick_ok = False  # feed_plain_token must not take its fast path any more
            return self._events()
        except BaseException as exc:
            raise self._fail(exc) from exc

    def _discarded(self) -> list[Event]:
        """Output after a closed tool-call block or the end-of-sentence token: nothing of it is read."""
        self._sym.flush()
        self._entries.clear()
        return []

    def _flush_stage(self) -> None:
        """The end of the output inside the current stage: held text is released (partial markers become
        text, newline runs stay), the reasoning ends, an open tool call ends as incomplete."""
        stage = self._stage
        if stage in (REASONING, CONTENT, JSON_VALUE):
            self._release(len(self._pend))
            if stage == REASONING:
                self._recs.append(ReasoningEnd())
        elif stage == TOOL_CALLS and self._block is not None:
            out: list[Event] = []
            self._block.close(out)
            self._tool_calls = self._block.calls
            self._recs.extend(out)

    def _end_of_sentence(self) -> None:
        """The end-of-sentence token (deviation D15): the output ends here as it would at its end, and the rest
        is discarded; :meth:`close` still ends it, with the caller's finish reason."""
        self._flush_stage()
        self._stage = DISCARD
        self._configure()

    def _check(self) -> None:
        if self._stage == FINISHED:
            self._stage = ERROR
            self._quick_ok = False  # feed_plain_token must not take its fast path any more
            raise StreamStateError(
                "the output has already ended (close() was called or a stop sequence matched)"
            )
        if self._stage == ERROR:
            raise StreamStateError("the output machine failed earlier and cannot be used any more")

    def _fail(self, exc: BaseException) -> BaseException:
        self._stage = ERROR
        self._quick_ok = False  # feed_plain_token must not take its fast path any more
        if isinstance(exc, DscodecError) or not isinstance(exc, Exception):
            return exc
        return ModelOutputError(f"the model output could not be processed: {exc!r}")

    def _hard_code(self, spelling: str) -> str:
        if spelling == THINK_END_SPELLING:
            return THINK_HARD
        if spelling == DSML_SPELLING:
            return DSML_HARD
        if spelling == EOS_SPELLING:
            return EOS_HARD
        code = self._hard_codes.get(spelling)
        if code is None:
            number = HARD_BASE + len(self._hard_codes)
            if number > HARD_LIMIT:  # more distinct specials than sentinels: degrade to plain text
                return sanitize_text(spelling)
            code = chr(number)
            self._hard_codes[spelling] = code
            self._spellings[number] = spelling
            self._other_spellings[number] = spelling
        return code

    def _process(self, units: str, *, carried: int = 0) -> list[Event]:
        self._recs = []
        self._call_end = self._pos + len(units)
        held = self._sym.held
        # What the recogniser holds comes right after these units, whatever it becomes (see _hold_length).
        self._ahead, self._ahead_at = held, (self._pos + len(units) if held else -1)
        if held and not units and self._pend and self._stage in (CONTENT, REASONING, JSON_VALUE):
            # Text held from before now has that start right after it: it may have decided some of it.
            self._ahead_at = self._pend_pos[-1] + 1
            hold = self._value_hold_length() if self._stage is JSON_VALUE else self._hold_length()
            self._release(len(self._pend) - hold)
        if units:
            if self._entries and _HARD.search(units):
                # Observed: logprob entries are settled per stretch of text between special ids.
                for segment in _SEGMENTS.findall(units):
                    self._run(segment, carried=carried)
                    self._settle()
                    carried = 0
            else:
                self._run(units, carried=carried)
                self._settle()
        else:
            self._settle()
        stops = self._stops
        # A stop sequence that ends inside a held partial spelling ends before the spelling could: it wins now,
        # so the caller learns at once that the output is over (as with the reference). Not so when the held
        # text may still become the end-of-sentence token (D15), inside which nothing matches: it waits.
        if (
            stops is not None
            and held
            and self._stage is not FINISHED
            and not EOS_SPELLING.startswith(held)
            and stops.would_match(held, from_start=self._lead)
        ) or (held and self._held_is_text(self._pend[-1:])):
            # (Or the held start is of a spelling that would be text where these units left the machine, as when
            # they opened a JSON-mode value and "</" is held: nothing waits for it.)
            self._ahead_at = -1
            self._run(self._sym.flush())
            self._settle()
        elif held and self._stage is TOOL_CALLS and stops is None:
            block = self._block
            assert block is not None
            if not block.done:
                out: list[Event] = []
                self._read_ahead(block, out)
                self._recs.extend(out)
        return self._events()

    def _run(self, units: str, *, carried: int = 0) -> None:
        """Run the stages over ``units`` (a stretch of input whose first ``carried`` units were held from an
        earlier call: text from before, for the logprob entries' sake)."""
        base = self._pos
        self._stretch = base + carried
        if self._pend:
            self._note_stretch()
        elif self._held_starts:
            self._held_starts.clear()
        n = len(units)
        # D15: the end-of-sentence token ends the output; the units before it are processed as usual.
        end = n
        if self._stage is not DISCARD and (EOS_SOFT in units or EOS_HARD in units):
            end = min(k for k in (units.find(EOS_SOFT), units.find(EOS_HARD)) if k >= 0)
        u = units[:end] if end < n else units
        i = 0
        while i < end:
            stage = self._stage
            if stage == CONTENT or stage == REASONING:
                i = self._text_stage(u, i, base)
            elif stage == JSON_VALUE:
                i = self._json_value(u, i, base)
            elif stage == TOOL_CALLS:
                assert self._block is not None
                out: list[Event] = []
                rest = u[i:] if i else u
                self._block.feed(
                    rest.translate(self._other_spellings) if self._other_spellings else rest, out
                )
                self._tool_calls = self._block.calls
                self._recs.extend(out)
                if self._block.done:
                    self._stage = DISCARD
                i = end
            else:  # DISCARD, or FINISHED by a stop sequence
                i = end
        if end < n and self._stage is not FINISHED:
            self._end_of_sentence()
        self._pos = base + n
        if self._stage in (TOOL_CALLS, DISCARD):
            self._discard(self._pos)
        elif self._stage == FINISHED:
            # Observed: after a stop sequence the entries of the rest of the call's text, up to the next special
            # id, go with the last content delta of the stretch (see _settle).
            # At the end of the call's units that is every entry left, those of ids that completed no character
            # (anchored at the end) included; before a special id, not that id's own.
            m = _HARD.search(units, self._stop_at - base + 1)
            if m is not None:
                self._drop(base + m.start(), CH_CONTENT)
            else:
                self._drop(self._pos + 1 if self._pos >= self._call_end else self._pos, CH_CONTENT)
