"""Protocol-neutral events produced by :class:`dscodec.stream.machine.OutputMachine`.

Events are nouns (what happened, not what to do) and slotted dataclasses, cheap to create on the per-token hot path (they are not
declared frozen because a frozen dataclass costs three times as much to build; treat them as read-only). The
protocol writers (Chat chunks, Responses events, Messages events) map them to wire events; nothing here knows a
wire format.

Order guarantees (behavior.md#stage-machine to behavior.md#stop-sequences):

* reasoning deltas come first, then at most one :class:`ReasoningEnd`, then content deltas and tool calls;
* a tool call is :class:`ToolCallStart`, zero or more :class:`ToolCallDelta`, then :class:`ToolCallEnd`; calls do
  not interleave and their indexes count up from 0;
* the last event is always one :class:`OutputEnd` (from ``close()``, or right after :class:`StopSequence`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "ContentDelta",
    "Event",
    "OutputEnd",
    "ReasoningDelta",
    "ReasoningEnd",
    "StopSequence",
    "TokenLogprob",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "TopLogprob",
]


class TopLogprob(NamedTuple):
    """One alternative token of a :class:`TokenLogprob` (behavior.md#token-chunks-and-usage).

    Attributes:
        token: the token's text, or every byte as ``\\xHH`` when its bytes are not valid UTF-8 on their own.
        logprob: its log probability.
        bytes: its bytes.
    """

    token: str
    logprob: float
    bytes: tuple[int, ...]


class TokenLogprob(NamedTuple):
    """The log probability of one generated token and its alternatives (behavior.md#token-chunks-and-usage).

    A named tuple rather than a frozen dataclass: one is made per generated token plus one per alternative, and
    a tuple is several times cheaper to build; it is just as immutable, and ``_asdict()`` gives the wire fields.
    Build them with :meth:`dscodec.stream.decoder.IncrementalDecoder.logprob`; the machine only carries them.

    Attributes:
        token: the token's text, or every byte as ``\\xHH`` when its bytes are not valid UTF-8 on their own.
        logprob: its log probability, as a 32-bit float (the shortest decimal that reads back as it:
            :func:`dscodec.stream.decoder.f32_logprob`).
        bytes: its bytes.
        top_logprobs: the alternatives the backend reported, most likely first.
    """

    token: str
    logprob: float
    bytes: tuple[int, ...]
    top_logprobs: tuple[TopLogprob, ...] = ()


@dataclass(slots=True)
class ReasoningDelta:
    """A piece of reasoning (thinking) text.

    Attributes:
        text: the text, never empty.
        logprobs: entries of the tokens whose text ends in this piece (behavior.md#token-chunks-and-usage), in token order.
    """

    text: str
    logprobs: tuple[TokenLogprob, ...] = ()


@dataclass(slots=True)
class ReasoningEnd:
    """The reasoning stage is over (``</think>``, a tool-call block, or the end of the output)."""


@dataclass(slots=True)
class ContentDelta:
    """A piece of the visible answer text.

    Attributes:
        text: the text, never empty.
        logprobs: entries of the tokens whose text ends in this piece, in token order.
    """

    text: str
    logprobs: tuple[TokenLogprob, ...] = ()


@dataclass(slots=True)
class ToolCallStart:
    """A tool call begins: its name is complete (behavior.md#dsml-parsing).

    Attributes:
        index: 0 for the first call of the output, then 1, 2, …
        call_id: ``call_<NN>_…`` (or what the machine's id factory made).
        name: the tool name exactly as the model wrote it (not checked against the declared tools).
    """

    index: int
    call_id: str
    name: str


@dataclass(slots=True)
class ToolCallDelta:
    """The next fragment of a call's JSON arguments.

    Attributes:
        index: the call's index.
        arguments: the JSON fragment; the fragments of a call concatenate to :attr:`ToolCallEnd.arguments`.
        raw: when this fragment is (part of) a ``string="true"`` parameter value, the same text unescaped, as the
            model wrote it (the Responses ``apply_patch`` custom tool streams its raw ``input``); otherwise None.
        parameter: the parameter name that :attr:`raw` belongs to, when :attr:`raw` is set.
    """

    index: int
    arguments: str
    raw: str | None = None
    parameter: str | None = None


@dataclass(slots=True)
class ToolCallEnd:
    """A tool call is over.

    Attributes:
        index: the call's index.
        arguments: the complete arguments string (the concatenation of the call's deltas).
        complete: True when the invoke was closed by its end tag (then ``arguments`` is valid JSON, deviation D8);
            False when the output ended inside the call.
    """

    index: int
    arguments: str
    complete: bool = True


@dataclass(slots=True)
class StopSequence:
    """A stop sequence matched in the content; the output is over (behavior.md#stop-sequences).

    Attributes:
        sequence: the stop sequence that matched (the earliest-ending one; on a tie, the first in request order).
    """

    sequence: str


@dataclass(slots=True)
class OutputEnd:
    """The output is over; always the last event.

    The machine does not choose a finish reason: the caller knows whether the backend stopped, hit its length
    limit or filtered the output; this event says what the output itself contained.

    Attributes:
        tool_calls: number of tool calls that started.
        stop_sequence: the stop sequence that ended the output, or None.
    """

    tool_calls: int
    stop_sequence: str | None = None


Event = (
    ReasoningDelta
    | ReasoningEnd
    | ContentDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | StopSequence
    | OutputEnd
)
