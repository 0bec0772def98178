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


#: The protocols of each code's family: its first three letters.
_FAMILIES: dict[str, tuple[str, ...]] = {
    "GEN": ALL_PROTOCOLS,
    "CHT": ("chat_completions",),
    "RSP": ("responses",),
    "MSG": ("messages",),
}

#: Every rule's code and summary, in code order.
_TABLE: tuple[tuple[str, str], ...] = (
    # -- every protocol --------------------------------------------------------------------------------------
    (
        "GEN001",
        "a frame's data or a body is not a JSON object (or a [DONE] frame outside Chat)",
    ),
    (
        "GEN002",
        "an SSE event name that differs from the event's type (Messages: or is missing; Chat: is there at all)",
    ),
    ("GEN003", "DSML tool-call markup (｜DSML｜) in text, a tool name or arguments"),
    ("GEN004", "the reasoning terminator </think> in reasoning or answer text"),
    ("GEN005", "the arguments of a finished tool call are not a JSON object"),
    ("GEN006", "an event or body does not validate strictly against the official SDK type"),
    ("GEN007", "an error body or error event is not in the protocol's error shape"),
    ("GEN008", "the stream is empty"),
    ("GEN009", "the stream ends inside a frame (no blank line after its last line)"),
    ("GEN010", "the answer's bytes are not UTF-8 (a client reads U+FFFD in place of the bad bytes)"),
    # -- Chat Completions ------------------------------------------------------------------------------------
    ("CHT001", "a choice's first chunk does not announce role assistant, or a later chunk a role"),
    ("CHT002", "chunks disagree on id, object, created or model"),
    ("CHT003", "the first delta of a tool call lacks its id, type function or function name"),
    ("CHT004", "tool-call indices do not count up from 0 within a choice"),
    ("CHT005", "a tool call's id or name changes in a later delta, or two calls share an id"),
    ("CHT006", "a choice has no finish_reason, more than one, or deltas after it"),
    ("CHT007", "finish_reason tool_calls without any tool call"),
    ("CHT008", "stream_options.include_usage is set but no chunk carries the usage"),
    ("CHT009", "a chunk before the last one carries usage"),
    ("CHT010", "usage numbers that do not add up (or are negative)"),
    ("CHT011", "the stream does not end with data: [DONE]"),
    ("CHT012", "frames after the end of the stream ([DONE] or an error)"),
    # -- Responses -------------------------------------------------------------------------------------------
    ("RSP001", "the first event is not response.created, or response.created comes again"),
    ("RSP002", "sequence_number does not count up from 0 by one"),
    ("RSP003", "an output_index that is not the next new item or names no open item"),
    ("RSP004", "a content_index that is not the next new part or names no open part"),
    ("RSP005", "added/done pairing: done twice, done without added, left open, or deltas after done"),
    ("RSP006", "an event's item_id is not the id of the item at its output_index"),
    ("RSP007", "a done event's text or arguments differ from its deltas"),
    ("RSP008", "the final response's output differs from what the item events add up to"),
    ("RSP009", "the stream ends without response.completed, response.incomplete, response.failed or error"),
    ("RSP010", "events after the final event"),
    ("RSP011", "a response's status does not fit its event, incomplete_details or error"),
    ("RSP012", "the response id changes between lifecycle events"),
    ("RSP013", "usage numbers that do not add up (or are negative)"),
    # -- Messages --------------------------------------------------------------------------------------------
    ("MSG001", "the first event is not message_start, or message_start comes again"),
    ("MSG002", "a content_block_start index that is not the next one (0, 1, 2, ...)"),
    ("MSG003", "a delta or stop for a block that is not open"),
    ("MSG004", "a block starts while another is open, or is still open at message_delta or the end"),
    ("MSG005", "a delta whose type does not fit its block"),
    ("MSG006", "message_delta is missing, comes twice, or has no stop_reason"),
    ("MSG007", "usage numbers that are negative, or output_tokens that shrink at message_delta"),
    ("MSG008", "the stream does not end with message_stop (or an error event)"),
    ("MSG009", "events after message_stop or an error event"),
    ("MSG010", "stop_reason tool_use without a tool_use block"),
    ("MSG011", "stop_sequence set without stop_reason stop_sequence, or the other way round"),
    ("MSG012", "a thinking block without a signature"),
)

#: Every rule, by code.
RULES: dict[str, Rule] = {code: Rule(code, _FAMILIES[code[:3]], summary) for code, summary in _TABLE}
