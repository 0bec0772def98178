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
  passes verbatim (``</think>`` and DSML included), stop sequences apply, and ``\\n```` closes it.

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

import enum
import re
from collections import deque
from collections.abc import Sequence

from dscodec.conversation import ParsingOptions
from dscodec.errors import DscodecError, ModelOutputError, StreamStateError
from dscodec.stream._markers import (
    DSML,
    DSML_HARD,
    DSML_SOFT,
    DSML_SPELLING,
    EOS,
    EOS_HARD,
    EOS_SOFT,
    EOS_SPELLING,
    HARD_BASE,
    HARD_FIRST,
    HARD_LIMIT,
    THINK,
    THINK_END_SPELLING,
    THINK_HARD,
    THINK_SOFT,
    StopMatcher,
    Symbolizer,
    sanitize_text,
)
from dscodec.stream.decoder import TokenText
from dscodec.stream.dsml import BlockParser, ToolCallIdFactory, random_tool_call_id
from dscodec.stream.events import (
    ContentDelta,
    Event,
    OutputEnd,
    ReasoningDelta,
    ReasoningEnd,
    StopSequence,
    TokenLogprob,
)

__all__ = ["OutputMachine", "Stage"]


class Stage(enum.Enum):
    """Where the machine is in the output (read-only :attr:`OutputMachine.state`)."""

    REASONING = "reasoning"
    CONTENT = "content"
    JSON_VALUE = "json_value"
    TOOL_CALLS = "tool_calls"
    DISCARD = "discard"
    FINISHED = "finished"
    ERROR = "error"


_REASONING, _CONTENT = 0, 1
_FINISHED = Stage.FINISHED
_ERROR = Stage.ERROR
# JSON-mode phases inside Stage.CONTENT.
_JSON_OFF, _JSON_BEFORE, _JSON_AFTER = 0, 1, 2

_FENCES = ("```json\n", "```\n")
_FENCE_PREFIXES = frozenset(f[:k] for f in _FENCES for k in range(1, len(f)))
_CLOSE_FENCE = "\n```"
_SURROGATE = "\ud800-\udfff"

_HARD = re.compile(f"[{HARD_FIRST}-\udfff]")
_SEGMENTS = re.compile(f"[{HARD_FIRST}-\udfff]|[^{HARD_FIRST}-\udfff]+")


class _Text:
    """A text delta being built during one call (merged with following text of the same channel)."""

    __slots__ = ("channel", "entries", "parts")

    def __init__(self, channel: int) -> None:
        self.channel = channel
        self.parts: list[str] = []
        self.entries: list[TokenLogprob] = []


class OutputMachine:
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
        self._json = _JSON_BEFORE if opts.parse_json_output else _JSON_OFF
        self._id_factory = tool_call_id_factory or random_tool_call_id
        stops = [s for s in opts.stop_sequences if s]
        self._stop: StopMatcher | None = StopMatcher(stops) if stops else None
        self._sym = Symbolizer()
        self._spellings: dict[int, str] = {
            ord(THINK_SOFT): THINK_END_SPELLING,
            ord(THINK_HARD): THINK_END_SPELLING,
            ord(DSML_SOFT): DSML_SPELLING,
            ord(DSML_HARD): DSML_SPELLING,
            ord(EOS_SOFT): EOS_SPELLING,
            ord(EOS_HARD): EOS_SPELLING,
        }
        self._hard_codes: dict[str, str] = {}
        self._pend = ""  # raw text held back in a text stage
        self._tail = ""  # the last few characters of the text stage (for the partial-opener newline rule)
        self._nostrip = 0  # leading characters of _pend that are never dropped as newlines before a marker
        self._pend_pos: list[int] = []  # unit index of each character of _pend
        self._pos = 0  # absolute index of the next unit
        # (unit of the token's last character, unit of its first character, entry), in token order.
        self._entries: deque[tuple[int, int, TokenLogprob]] = deque()
        self._orphans: tuple[list[TokenLogprob], list[TokenLogprob]] = ([], [])
        self._recs: list[_Text | Event] = []
        self._last_text: list[_Text | None] = [None, None]  # per channel: last delta of the current stretch
        self._block: BlockParser | None = None
        self._spaced = False  # JSON mode: the space for the current stretch of non-JSON text was sent
        self._tool_calls = 0
        self._stop_at = 0
        self._lead = False
        stage = opts.thinking_initial_stage
        if opts.starts_in_tool_calls:
            # Required tool choice: the output starts inside a block (takes precedence over thinking).
            self._enter_block()
        elif stage in ("reasoning_start", "reasoning_continuation"):
            self._stage = Stage.REASONING
            self._lead = stage == "reasoning_start"
        else:
            self._stage = Stage.CONTENT
            self._lead = stage is None
        self._configure()

    # -- public API ---------------------------------------------------------------------------------------------

    @property
    def state(self) -> Stage:
        """The current stage."""
        return self._stage

    @property
    def pending_text(self) -> str:
        """Text received but not yet turned into events (a possible marker, stop sequence or newline run)."""
        held = self._pend
        if self._block is not None and self._stage == Stage.TOOL_CALLS:
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
        if self._stage is _FINISHED or self._stage is _ERROR:
            self._check()
        if self._stage is Stage.DISCARD:
            return self._discarded()
        try:
            units = self._sym.feed(sanitize_text(text))
            if self._quick_ok and units and not self._entries:
                quick = self._quick(units, logprobs)
                if quick is not None:
                    return quick
            if logprobs:
                anchor = self._pos + len(units) - 1 if units else self._pos
                self._entries.extend((anchor, self._pos, entry) for entry in logprobs)
            return self._process(units)
        except BaseException as exc:
            raise self._fail(exc) from exc

    def feed_tokens(
        self, tokens: Sequence[TokenText], *, logprobs: Sequence[TokenLogprob] | None = None
    ) -> list[Event]:
        """Process decoded token ids (:meth:`IncrementalDecoder.decode`); only special ids count as markers.

        Args:
            tokens: one entry per id, in order.
            logprobs: one entry per id (or None).

        Raises:
            StreamStateError: the machine has finished or failed before, or ``logprobs`` does not have one entry
                per token.
        """
        if self._stage is _FINISHED or self._stage is _ERROR:
            self._check()
        if self._quick_ok and len(tokens) == 1 and not self._sym.held and not self._entries:
            token = tokens[0]
            text = token.text
            if token.spelling is None and text and (logprobs is None or len(logprobs) == 1):
                quick = self._quick(text if text.isascii() else sanitize_text(text), logprobs)
                if quick is not None:
                    return quick
        if logprobs is not None and len(logprobs) != len(tokens):
            exc = StreamStateError(
                f"invalid log probabilities: {len(logprobs)} log probabilities for {len(tokens)} token IDs"
            )
            raise self._fail(exc)
        if self._stage is Stage.DISCARD:
            return self._discarded()
        try:
            # Spellings held from an earlier text chunk cannot continue into token text; in token text only
            # the Dsml id can follow a "<".
            parts = [self._sym.flush()]
            size = len(parts[0])
            base = self._pos
            entries = self._entries
            for k, token in enumerate(tokens):
                spelling = token.spelling
                text = token.text
                if spelling is None:
                    unit = sanitize_text(text)
                else:
                    unit = sanitize_text(text[: len(text) - len(spelling)]) + self._hard_code(spelling)
                if unit:
                    parts.append(unit)
                    size += len(unit)
                if logprobs is not None:
                    start = base + size - len(unit)
                    entries.append((base + size - 1 if unit else base + size, start, logprobs[k]))
            return self._process("".join(parts))
        except BaseException as exc:
            raise self._fail(exc) from exc

    def feed_plain_token(self, text: str) -> list[Event]:
        """Process the text of ordinary (non-special) token ids with no logprobs: the per-token fast path.

        Same result as ``feed_tokens([TokenText(token_id, text)])``. ``text`` comes from the decoder, so it holds
        no lone surrogates (which the machine uses as sentinels). Handled here: plain text in the middle of the
        reasoning or the content, possibly ending in a newline run (held back: a marker may follow) or following
        a held newline run (released with it), and text in the middle of a string argument. Everything else
        takes the general path.
        """
        if not text or self._entries or self._sym.held or self._orphans[0] or self._orphans[1]:
            return self.feed_tokens([TokenText(-1, text)])
        if not self._quick_ok:
            block = self._block
            if block is not None and self._stage is Stage.TOOL_CALLS:
                delta = block.string_value_piece(text)
                if delta is not None:  # the middle of a string argument
                    self._pos += len(text)
                    return [delta]
            return self.feed_tokens([TokenText(-1, text)])
        pend = self._pend
        stops = self._stops
        if stops is None:
            if pend and pend.strip("\n"):
                return self.feed_tokens([TokenText(-1, text)])
            body = text.rstrip("\n") if text[-1] == "\n" else text
            inner = self._interesting_inner
            if inner is not None and inner.search(body) is not None:
                return self.feed_tokens([TokenText(-1, text)])
        else:
            # With stop sequences, newlines are checked one by one by the general path.
            if pend or stops.depth or self._interesting.search(text) is not None:
                return self.feed_tokens([TokenText(-1, text)])
            body = text
        if self._tools:
            if text[0] == "\n" and self._tail.endswith("<"):
                return self.feed_tokens([TokenText(-1, text)])  # a newline after a partial opener
            # The tail only serves to see a partial opener (which starts with "<") at its end; this text has
            # no "<", so no partial opener can end inside or after it: an empty tail answers the same.
            self._tail = ""
        base = self._pos
        self._pos = base + len(text)
        run = len(text) - len(body)
        if run and (self._tools or self._stage is Stage.REASONING):
            # A newline run at the end waits: newlines right before </think> or a block are dropped.
            if body:
                self._pend = text[len(body) :]
                self._pend_pos = list(range(base + len(body), base + len(text)))
                self._nostrip = 0
                return [self._quick_delta(pend + body)]
            self._pend = pend + text
            self._pend_pos.extend(range(base, base + run))
            return []
        if pend:
            self._clear()
            return [self._quick_delta(pend + text)]
        return [self._quick_delta(text)]

    def close(self) -> list[Event]:
        """End of output: release what is held, end an open call or the reasoning, then :class:`OutputEnd`.

        Returns ``[]`` when the output already ended (a stop sequence matched, or a second call).

        Raises:
            StreamStateError: the machine failed before.
        """
        if self._stage == Stage.FINISHED:
            return []
        self._check()
        try:
            self._recs = []
            held = self._sym.flush()
            if held:
                self._run(held)
                if self._stage is _FINISHED:  # the held text completed a stop sequence
                    self._settle()
                    return self._events()
            self._flush_stage()
            self._settle()
            self._discard(1 << 62)
            self._recs.append(OutputEnd(self._tool_calls))
            self._stage = Stage.FINISHED
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
        if stage in (Stage.REASONING, Stage.CONTENT, Stage.JSON_VALUE):
            self._release(len(self._pend))
            if stage == Stage.REASONING:
                self._recs.append(ReasoningEnd())
        elif stage == Stage.TOOL_CALLS and self._block is not None:
            out: list[Event] = []
            self._block.close(out)
            self._tool_calls = self._block.calls
            self._recs.extend(out)

    def _end_of_sentence(self) -> None:
        """The end-of-sentence token (deviation D15): the output ends here as it would at its end, and the rest
        is discarded; :meth:`close` still ends it, with the caller's finish reason."""
        self._flush_stage()
        self._stage = Stage.DISCARD
        self._configure()

    # -- plumbing -----------------------------------------------------------------------------------------------

    def _quick(self, units: str, logprobs: Sequence[TokenLogprob] | None) -> list[Event] | None:
        """The hot path: plain text in the middle of the reasoning or the content, nothing held."""
        if self._pend or self._interesting.search(units) is not None:
            return None
        stops = self._stops
        if stops is not None and stops.depth:
            return None
        if self._orphans[0] or self._orphans[1]:
            return None
        self._pos += len(units)
        if self._tools:
            self._tail = units[-8:] if len(units) >= 8 else (self._tail + units)[-8:]
        return [
            self._quick_delta(
                units if units.isascii() else self._spell(units), tuple(logprobs) if logprobs else ()
            )
        ]

    def _check(self) -> None:
        if self._stage == Stage.FINISHED:
            self._stage = Stage.ERROR
            raise StreamStateError(
                "the output has already ended (close() was called or a stop sequence matched)"
            )
        if self._stage == Stage.ERROR:
            raise StreamStateError("the output machine failed earlier and cannot be used any more")

    def _fail(self, exc: BaseException) -> BaseException:
        self._stage = Stage.ERROR
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
        return code

    def _spell(self, units: str) -> str:
        if units.isascii():
            return units
        return units.translate(self._spellings)

    def _configure(self) -> None:
        """Build the fast-path pattern of the characters that need a closer look in the current stage."""
        chars = "\n" + EOS
        stage = self._stage
        content = stage == Stage.CONTENT
        if stage == Stage.REASONING or content:
            chars += THINK
            if self._tools:
                chars += "<"
            if content and self._json == _JSON_BEFORE:
                chars += "{[`"
        ranges = ""
        if self._stop is not None and (stage == Stage.JSON_VALUE or (content and self._json == _JSON_OFF)):
            # Soft sentinels spell characters a stop may contain; hard ones reset a partial match.
            chars += "".join(self._stop.first_chars)
            ranges = _SURROGATE
            self._stops: StopMatcher | None = self._stop
        else:
            self._stops = None
        self._interesting = re.compile("[" + "".join(re.escape(c) for c in chars) + ranges + "]")
        # Without stop sequences a newline followed by more text on the same feed needs no closer look.
        inner = chars.replace("\n", "")
        self._interesting_inner = (
            re.compile("[" + "".join(re.escape(c) for c in inner) + ranges + "]") if inner else None
        )
        self._update_quick()

    def _update_quick(self) -> None:
        self._quick_ok = (
            self._stage in (Stage.REASONING, Stage.CONTENT) and not self._lead and self._json == _JSON_OFF
        )
        self._quick_delta: type[ReasoningDelta | ContentDelta] = (
            ReasoningDelta if self._stage is Stage.REASONING else ContentDelta
        )

    def _marker_hold_start(self) -> int:
        """Unit index where held text that may still be a marker or stop sequence starts (not newline runs)."""
        pend = self._pend
        if not pend:
            return self._pos
        k = 0
        if self._stops is not None:
            k = self._stops.depth
        if self._tools and pend[-1] == "<":
            k = max(k, 1)
        if self._stage == Stage.JSON_VALUE:
            for size, tail in ((3, "\n``"), (2, "\n`"), (1, "\n")):
                if pend.endswith(tail):
                    k = max(k, size)
                    break
        elif self._json == _JSON_BEFORE:
            for size in range(min(7, len(pend)), 0, -1):
                if pend[-size:] in _FENCE_PREFIXES:
                    k = max(k, size)
                    break
        return self._pend_pos[len(pend) - k] if k else self._pos

    def _settle(self) -> None:
        """End of a stretch of input: decide where logprob entries of dropped or held text go.

        Observed on the reference: when the stretch sent a delta of a channel, the entries orphaned in that
        channel, and (for the current channel) those of tokens whose text is still held back, go with its last
        such delta. Otherwise orphaned entries are dropped — unless a possible marker is still held, in which
        case they wait for the text that follows, like the held tokens themselves.
        """
        stage = self._stage
        current = -1
        if stage == Stage.REASONING:
            current = _REASONING
        elif stage in (Stage.CONTENT, Stage.JSON_VALUE):
            current = _CONTENT
        for channel in (_REASONING, _CONTENT):
            orphans = self._orphans[channel]
            last = self._last_text[channel]
            self._last_text[channel] = None
            if last is not None:
                if channel == current:
                    self._drop(self._pos, channel)
                if orphans:
                    last.entries.extend(orphans)
                    orphans.clear()
            elif orphans and not (channel == current and self._marker_hold_start() < self._pos):
                orphans.clear()

    def _events(self) -> list[Event]:
        """Build the events of this call from its records."""
        recs = self._recs
        events: list[Event] = []
        for rec in recs:
            if isinstance(rec, _Text):
                text = self._spell("".join(rec.parts))
                if text:
                    delta = ReasoningDelta if rec.channel == _REASONING else ContentDelta
                    events.append(delta(text, tuple(rec.entries)))
            else:
                events.append(rec)
        self._recs = []
        return events

    def _text_out(self, channel: int, text: str, upto: int) -> None:
        """Emit ``text``; entries anchored before unit ``upto`` go with it."""
        recs = self._recs
        rec = recs[-1] if recs else None
        if not isinstance(rec, _Text) or rec.channel != channel:
            rec = _Text(channel)
            recs.append(rec)
        rec.parts.append(text)
        self._last_text[channel] = rec
        orphans = self._orphans[channel]
        if orphans:
            rec.entries.extend(orphans)
            orphans.clear()
        entries = self._entries
        while entries and entries[0][0] < upto:
            rec.entries.append(entries.popleft()[2])

    def _drop(self, upto: int, channel: int) -> None:
        entries = self._entries
        orphans = self._orphans[channel]
        while entries and entries[0][0] < upto:
            orphans.append(entries.popleft()[2])

    def _discard(self, upto: int) -> None:
        entries = self._entries
        while entries and entries[0][0] < upto:
            entries.popleft()

    def _emit(self, text: str, upto: int) -> None:
        """Emit released text of the current text stage (JSON mode turns it into a space)."""
        if not text:
            return
        if self._stage == Stage.REASONING:
            self._text_out(_REASONING, text, upto)
        elif self._json in (_JSON_OFF,) or self._stage == Stage.JSON_VALUE:
            self._text_out(_CONTENT, text, upto)
        elif not self._spaced:
            # D7: one space for each stretch of text outside the JSON value, whatever the chunking.
            self._spaced = True
            self._text_out(_CONTENT, " ", upto)
        else:
            self._drop(upto, _CONTENT)

    def _process(self, units: str) -> list[Event]:
        self._recs = []
        if units:
            if self._entries and _HARD.search(units):
                # Observed: logprob entries are settled per stretch of text between special ids.
                for segment in _SEGMENTS.findall(units):
                    self._run(segment)
                    self._settle()
            else:
                self._run(units)
                self._settle()
        else:
            self._settle()
        stops = self._stops
        held = self._sym.held
        # A stop sequence that ends inside a held partial spelling ends before the spelling could: it wins now,
        # so the caller learns at once that the output is over (as with the reference). Not so when the held
        # text may still become the end-of-sentence token (D15), inside which nothing matches: it waits.
        if (
            stops is not None
            and held
            and self._stage is not _FINISHED
            and not EOS_SPELLING.startswith(held)
            and stops.would_match(held, from_start=self._lead)
        ):
            self._run(self._sym.flush())
            self._settle()
        return self._events()

    def _run(self, units: str) -> None:
        base = self._pos
        n = len(units)
        # D15: the end-of-sentence token ends the output; the units before it are processed as usual.
        end = n
        if self._stage is not Stage.DISCARD and (EOS_SOFT in units or EOS_HARD in units):
            end = min(k for k in (units.find(EOS_SOFT), units.find(EOS_HARD)) if k >= 0)
        u = units[:end] if end < n else units
        i = 0
        while i < end:
            stage = self._stage
            if stage == Stage.CONTENT or stage == Stage.REASONING:
                i = self._text_stage(u, i, base)
            elif stage == Stage.JSON_VALUE:
                i = self._json_value(u, i, base)
            elif stage == Stage.TOOL_CALLS:
                assert self._block is not None
                out: list[Event] = []
                self._block.feed(u[i:] if i else u, out)
                self._tool_calls = self._block.calls
                self._recs.extend(out)
                if self._block.done:
                    self._stage = Stage.DISCARD
                i = end
            else:  # DISCARD, or FINISHED by a stop sequence
                i = end
        if end < n and self._stage is not Stage.FINISHED:
            self._end_of_sentence()
        self._pos = base + n
        if self._stage in (Stage.TOOL_CALLS, Stage.DISCARD):
            self._discard(self._pos)
        elif self._stage == Stage.FINISHED:
            # Observed: after a stop sequence the entries of the rest of the call's text, up to the next special
            # id, go with the last content delta.
            m = _HARD.search(units, self._stop_at - base + 1)
            self._drop(base + m.start() if m else self._pos, _CONTENT)

    # -- text stages (reasoning, content, JSON-mode preamble/after) --------------------------------------------

    def _hold_length(self) -> int:
        pend = self._pend
        if not pend:
            return 0
        hold = 0
        stage = self._stage
        if stage == Stage.REASONING or self._tools:
            if self._tools and pend[-1] == "<":
                body = pend[:-1]
                hold = 1 + len(body) - len(body.rstrip("\n"))
            elif pend[-1] == "\n":
                hold = len(pend) - len(pend.rstrip("\n"))
        hold = min(hold, len(pend) - self._nostrip)
        if self._json == _JSON_BEFORE and stage == Stage.CONTENT:
            for k in range(min(7, len(pend)), 0, -1):
                if pend[-k:] in _FENCE_PREFIXES:
                    hold = max(hold, k)
                    break
        if self._stops is not None:
            hold = max(hold, self._stops.depth)
        return hold

    def _release(self, count: int) -> None:
        """Emit the first ``count`` characters of the held text."""
        if count <= 0:
            return
        pend = self._pend
        upto = self._pend_pos[count] if count < len(pend) else self._pend_pos[-1] + 1
        self._emit(pend[:count], upto)
        self._pend = pend[count:]
        del self._pend_pos[:count]
        self._nostrip = max(0, self._nostrip - count)

    def _strip_newlines(self, text: str) -> str:
        nostrip = self._nostrip
        return text[:nostrip] + text[nostrip:].rstrip("\n")

    def _clear(self) -> None:
        self._pend = ""
        self._pend_pos = []
        self._nostrip = 0

    def _append(self, text: str, pos: int) -> None:
        self._pend += text
        self._pend_pos.extend([pos] * len(text))
        if self._tools:
            self._tail = (self._tail + text)[-8:]

    def _text_stage(self, u: str, i: int, base: int) -> int:
        n = len(u)
        stage = self._stage
        interesting = self._interesting
        while i < n:
            if self._lead:
                # Leading LFs are dropped. Observed: each one is checked against the stop sequences on its own
                # (a stop "\n" matches, "\n\n" or "\nEND" never does).
                j = i
                stops = self._stops
                while j < n and u[j] == "\n":
                    j += 1
                    if stops is not None:
                        hit = stops.step("\n")
                        stops.reset()
                        if hit >= 0:
                            self._drop(base + j, _CONTENT)
                            self._stop_hit(hit, base + j - 1)
                            return n
                if j > i:
                    self._drop(base + j, _REASONING if stage == Stage.REASONING else _CONTENT)
                    i = j
                if i == n:
                    return n
                self._lead = False
                self._update_quick()
                if stops is not None:
                    stops.reset()
            stops = self._stops
            if (
                self._pend
                and stops is None
                and self._json == _JSON_OFF
                and not "\ud800" <= u[i] <= "\udfff"
                and interesting.match(u, i) is None
            ):
                # Held text (a newline run, a "<") followed by a character that cannot continue a marker: it
                # would be released together with that character, so release it now and take the fast scan.
                self._release(len(self._pend))
            if not self._pend and (stops is None or not stops.depth):
                m = interesting.search(u, i)
                j = m.start() if m else n
                if j > i:
                    self._emit(u[i:j], base + j)
                    if self._tools:
                        self._tail = (self._tail + u[i:j])[-8:]
                    i = j
                    if i == n:
                        return n
            # One unit, slowly.
            c = u[i]
            pos = base + i
            i += 1
            if c in THINK:
                if stops is not None:
                    if c == THINK_SOFT:
                        if self._stop_through(THINK_END_SPELLING, pos, keep=False):
                            return n
                    else:
                        stops.reset()
                self._think_end(pos)
                if self._stage != stage:
                    return i
                continue
            if c in DSML and self._tools and self._pend.endswith("<"):
                if (
                    stops is not None
                    and c == DSML_SOFT
                    and self._stop_through(DSML_SPELLING, pos, keep=False)
                ):
                    return n
                self._open_block(pos)
                return i
            if "\ud800" <= c <= "\udfff":
                spelled = self._spellings[ord(c)]
                if stops is not None:
                    if c == DSML_SOFT:
                        if self._stop_through(spelled, pos, keep=True):
                            return n
                    else:
                        stops.reset()
                        self._append(spelled, pos)
                else:
                    self._append(spelled, pos)
            elif self._json == _JSON_BEFORE and stage == Stage.CONTENT and c in "{[":
                self._release(len(self._pend))
                self._spaced = False
                self._text_out(_CONTENT, c, pos + 1)
                self._enter_json_value()
                return i
            else:
                sticky = c == "\n" and self._tools and self._tail.endswith("<")
                self._append(c, pos)
                if stops is not None:
                    hit = stops.step(c)
                    if hit >= 0:
                        self._stop_hit(hit, pos)
                        return n
                if sticky:
                    # Observed: a newline right after a "<" (which could have begun a block opener) goes out
                    # with it and is never dropped as a newline before a block. The reference also does this
                    # after longer partial openers ("<｜D") in text chunks but not in token ids, where "｜DSML｜"
                    # is one id; dscodec treats both alike, as the ids do (deviation D14).
                    self._nostrip = len(self._pend)
                    self._release(len(self._pend) - (stops.depth if stops is not None else 0))
                    continue
                if self._json == _JSON_BEFORE and stage == Stage.CONTENT and c == "\n":
                    pend = self._pend
                    for fence in _FENCES:
                        if pend.endswith(fence):
                            self._release(len(pend) - len(fence))
                            self._clear()
                            self._drop(pos + 1, _CONTENT)
                            self._spaced = False
                            self._enter_json_value()
                            return i
            self._release(len(self._pend) - self._hold_length())
        return n

    def _stop_through(self, spelling: str, pos: int, *, keep: bool) -> bool:
        """Run a spelled special token (from a text chunk) through the stop matcher; True if a stop matched."""
        stops = self._stops
        assert stops is not None
        size = len(self._pend)
        for ch in spelling:
            self._append(ch, pos)
            hit = stops.step(ch)
            if hit >= 0:
                self._stop_hit(hit, pos)
                return True
        if not keep:
            self._pend = self._pend[:size]
            del self._pend_pos[size:]
        return False

    def _stop_hit(self, index: int, pos: int) -> None:
        assert self._stops is not None
        stop = self._stops.stops[index]
        keep = max(0, len(self._pend) - len(stop))
        self._release(keep)
        self._clear()
        self._stop_at = pos
        self._recs.append(StopSequence(stop))
        self._recs.append(OutputEnd(self._tool_calls, stop))
        self._stage = Stage.FINISHED

    def _think_end(self, pos: int) -> None:
        """``</think>``: ends the reasoning; removed from the content."""
        pend = self._pend
        self._tail = ""
        if self._stage == Stage.REASONING:
            keep = pend if pend.endswith("<") else self._strip_newlines(pend)
            self._release(len(keep))
            self._clear()
            self._drop(pos, _REASONING)
            self._discard(pos + 1)
            self._recs.append(ReasoningEnd())
            self._stage = Stage.CONTENT
            self._lead = True
            self._configure()
        else:
            self._release(len(pend))
            self._discard(pos + 1)
            # JSON mode: the removed marker also ends a stretch of non-JSON text (the reference sends one space
            # per piece of text on each side of it, also for a whole output in one chunk).
            self._spaced = False
        if self._stops is not None:
            self._stops.reset()

    def _open_block(self, pos: int) -> None:
        """``<`` + Dsml: the text before it (minus the newlines that separate it) is emitted."""
        keep = self._strip_newlines(self._pend[:-1])
        self._release(len(keep))
        self._clear()
        self._drop(pos, _REASONING if self._stage == Stage.REASONING else _CONTENT)
        if self._stage == Stage.REASONING:
            self._recs.append(ReasoningEnd())
        self._enter_block()

    def _enter_block(self) -> None:
        self._stage = Stage.TOOL_CALLS
        self._block = BlockParser(spell=self._spell, id_factory=self._id_factory)
        self._quick_ok = False

    def _enter_json_value(self) -> None:
        self._stage = Stage.JSON_VALUE
        if self._stop is not None:
            self._stop.reset()
        self._configure()

    # -- JSON value (JSON mode) ---------------------------------------------------------------------------------

    def _json_value(self, u: str, i: int, base: int) -> int:
        n = len(u)
        interesting = self._interesting
        stops = self._stops
        while i < n:
            if not self._pend and (stops is None or not stops.depth):
                m = interesting.search(u, i)
                j = m.start() if m else n
                if j > i:
                    self._emit(u[i:j], base + j)
                    i = j
                    if i == n:
                        return n
            c = u[i]
            pos = base + i
            i += 1
            if "\ud800" <= c <= "\udfff":
                spelled = self._spellings[ord(c)]
                if stops is not None and c in (THINK_SOFT, DSML_SOFT):
                    if self._stop_through(spelled, pos, keep=True):
                        return n
                else:
                    if stops is not None:
                        stops.reset()
                    self._append(spelled, pos)
            else:
                self._append(c, pos)
                if stops is not None:
                    hit = stops.step(c)
                    if hit >= 0:
                        self._stop_hit(hit, pos)
                        return n
                if c == "`" and self._pend.endswith(_CLOSE_FENCE):
                    self._release(len(self._pend) - len(_CLOSE_FENCE))
                    self._clear()
                    self._drop(pos + 1, _CONTENT)
                    self._stage = Stage.CONTENT
                    self._json = _JSON_AFTER
                    self._spaced = False
                    self._configure()
                    return i
            pend = self._pend
            hold = stops.depth if stops is not None else 0
            if pend.endswith("\n"):
                hold = max(hold, 1)
            elif pend.endswith("\n`"):
                hold = max(hold, 2)
            elif pend.endswith("\n``"):
                hold = max(hold, 3)
            self._release(len(pend) - hold)
        return n
