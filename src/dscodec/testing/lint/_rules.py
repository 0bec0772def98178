"""The linter's findings: one stable code per rule, its protocols and what it means (``docs/testing.md`` lists
them all with examples). Codes are never reused: a retired rule keeps its number."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALL_PROTOCOLS", "RULES", "Finding", "Rule"]

ALL_PROTOCOLS = ("chat_completions", "responses", "messages")


@dataclass(frozen=True, slots=True)
class Rule:
    """One lint rule: its code, the protocols it applies to, and a one-line summary."""

    code: str
    protocols: tuple[str, ...]
    summary: str


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the linter found.

    Attributes:
        code: the rule's stable code (``RSP003``).
        message: what was found, in words.
        index: the frame it is about (0-based), or None for the whole answer or a JSON body.
        path: where inside that frame's data or the body (``choices[0].delta.tool_calls[0].id``), or ``""``.
    """

    code: str
    message: str
    index: int | None = None
    path: str = ""

    @property
    def where(self) -> str:
        """``frame 3 choices[0].delta`` / ``response usage`` / ``stream``."""
        if self.index is None:
            return f"response {self.path}".rstrip() if self.path else "stream"
        return f"frame {self.index} {self.path}".rstrip()

    def __str__(self) -> str:
        return f"{self.code} {self.where}: {self.message}"


_C, _R, _M = ("chat_completions",), ("responses",), ("messages",)

_TABLE: tuple[Rule, ...] = (
    # -- every protocol --------------------------------------------------------------------------------------
    Rule("GEN001", ALL_PROTOCOLS, "a frame's data is not a JSON object (or a [DONE] frame outside Chat)"),
    Rule(
        "GEN002",
        ALL_PROTOCOLS,
        "an SSE event name that differs from the event's type (Messages: or is missing; Chat: is there at all)",
    ),
    Rule("GEN003", ALL_PROTOCOLS, "DSML tool-call markup (｜DSML｜) in text, a tool name or arguments"),
    Rule("GEN004", ALL_PROTOCOLS, "the reasoning terminator </think> in reasoning or answer text"),
    Rule("GEN005", ALL_PROTOCOLS, "the arguments of a finished tool call are not a JSON object"),
    Rule(
        "GEN006", ALL_PROTOCOLS, "an event or body does not validate strictly against the official SDK type"
    ),
    Rule("GEN007", ALL_PROTOCOLS, "an error body or error event is not in the protocol's error shape"),
    Rule("GEN008", ALL_PROTOCOLS, "the stream is empty"),
    Rule("GEN009", ALL_PROTOCOLS, "the stream ends inside a frame (no blank line after its last line)"),
    # -- Chat Completions ------------------------------------------------------------------------------------
    Rule("CHT001", _C, "a choice's first chunk does not announce role assistant, or a later chunk a role"),
    Rule("CHT002", _C, "chunks disagree on id, object, created or model"),
    Rule("CHT003", _C, "the first delta of a tool call lacks its id, type function or function name"),
    Rule("CHT004", _C, "tool-call indices do not count up from 0 within a choice"),
    Rule("CHT005", _C, "a tool call's id or name changes in a later delta, or two calls share an id"),
    Rule("CHT006", _C, "a choice has no finish_reason, more than one, or deltas after it"),
    Rule("CHT007", _C, "finish_reason tool_calls without any tool call"),
    Rule("CHT008", _C, "stream_options.include_usage is set but no chunk carries the usage"),
    Rule("CHT009", _C, "a chunk before the last one carries usage"),
    Rule("CHT010", _C, "usage numbers that do not add up (or are negative)"),
    Rule("CHT011", _C, "the stream does not end with data: [DONE]"),
    Rule("CHT012", _C, "frames after the end of the stream ([DONE] or an error)"),
    # -- Responses -------------------------------------------------------------------------------------------
    Rule("RSP001", _R, "the first event is not response.created, or response.created comes again"),
    Rule("RSP002", _R, "sequence_number does not count up from 0 by one"),
    Rule("RSP003", _R, "an output_index that is not the next new item or names no open item"),
    Rule("RSP004", _R, "a content_index that is not the next new part or names no open part"),
    Rule("RSP005", _R, "added/done pairing: done twice, done without added, left open, or deltas after done"),
    Rule("RSP006", _R, "an event's item_id is not the id of the item at its output_index"),
    Rule("RSP007", _R, "a done event's text or arguments differ from its deltas"),
    Rule("RSP008", _R, "the final response's output differs from what the item events add up to"),
    Rule(
        "RSP009",
        _R,
        "the stream ends without response.completed, response.incomplete, response.failed or error",
    ),
    Rule("RSP010", _R, "events after the final event"),
    Rule("RSP011", _R, "a response's status does not fit its event, incomplete_details or error"),
    Rule("RSP012", _R, "the response id changes between lifecycle events"),
    Rule("RSP013", _R, "usage numbers that do not add up (or are negative)"),
    # -- Messages --------------------------------------------------------------------------------------------
    Rule("MSG001", _M, "the first event is not message_start, or message_start comes again"),
    Rule("MSG002", _M, "a content_block_start index that is not the next one (0, 1, 2, ...)"),
    Rule("MSG003", _M, "a delta or stop for a block that is not open"),
    Rule("MSG004", _M, "a block starts while another is open, or is still open at message_delta or the end"),
    Rule("MSG005", _M, "a delta whose type does not fit its block"),
    Rule("MSG006", _M, "message_delta is missing, comes twice, or has no stop_reason"),
    Rule("MSG007", _M, "usage numbers that are negative, or output_tokens that shrink at message_delta"),
    Rule("MSG008", _M, "the stream does not end with message_stop (or an error event)"),
    Rule("MSG009", _M, "events after message_stop or an error event"),
    Rule("MSG010", _M, "stop_reason tool_use without a tool_use block"),
    Rule("MSG011", _M, "stop_sequence set without stop_reason stop_sequence, or the other way round"),
    Rule("MSG012", _M, "a thinking block without a signature"),
)

#: Every rule, by code.
RULES: dict[str, Rule] = {rule.code: rule for rule in _TABLE}
