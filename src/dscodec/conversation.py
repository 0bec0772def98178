"""The neutral conversation: what every protocol converts into and what the prompt renderer reads.

Nothing here knows a wire format. Field names are dscodec's own vocabulary; each protocol translates its
own spelling in its ``inbound`` module.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from dscodec.errors import ContextLengthExceeded, shown

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "AssistantMessage",
    "Conversation",
    "ConversationRequest",
    "Effort",
    "ImagePlaceholder",
    "ImageSource",
    "InferenceOptions",
    "LatestReminderMessage",
    "Message",
    "ModelVersion",
    "OutputConstraint",
    "ParsingOptions",
    "Protocol",
    "SystemMessage",
    "ThinkingStage",
    "ToolCall",
    "ToolDefinition",
    "ToolMessage",
    "UserMessage",
]

ModelVersion = Literal["v4", "v4.1"]
Protocol = Literal["chat_completions", "responses", "messages"]
Effort = Literal["low", "high", "xhigh", "max"]
ThinkingStage = Literal["reasoning_start", "reasoning_continuation", "content_continuation"]
ToolChoice = Literal["auto", "none", "required"]
ResponseFormat = Literal["text", "json_object", "json_schema", "regex"]


class _Model:
    """Base of the neutral model's classes: slotted dataclasses, built with keywords only, with the two helpers
    their callers use (``model_dump``, ``model_copy``)."""

    __slots__ = ()

    def model_dump(self) -> dict[str, Any]:
        """The fields as a dict, nested models and constraints included (recursively)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload, no-any-return]

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with the fields of ``update`` replaced (a deep copy when ``deep``); nothing is re-checked."""
        source = copy.deepcopy(self) if deep else self
        return dataclasses.replace(source, **(update or {}))  # type: ignore[type-var]


@dataclass(slots=True, kw_only=True)
class ImageSource(_Model):
    """Where an image comes from. dscodec fetches nothing; a server resolves sources itself.

    ``path`` locates the image in the request body (``.messages[0]``, ``input[2]``,
    ``messages.0.content[1]``), in the spelling the reference uses for that protocol.
    """

    kind: Literal["url", "data_url", "bytes"]
    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None
    detail: Literal["low", "high", "original", "auto"] = "high"
    path: str = ""


@dataclass(slots=True, kw_only=True)
class ImagePlaceholder(_Model):
    """An image position inside a message's content.

    ``offset`` is the code-point index in ``content`` where the image token spelling starts. Only these
    positions become image ids; a user who types the spelling gets plain text.
    """

    offset: int
    source: ImageSource


@dataclass(slots=True, kw_only=True)
class ToolDefinition(_Model):
    """A function the model may call. ``parameters`` is a JSON value (normally an object schema)."""

    name: str
    description: str | None = None
    parameters: Any = None
    strict: bool | None = None
    defer_loading: bool = False


@dataclass(slots=True, kw_only=True)
class ToolCall(_Model):
    """A call written by the assistant. ``arguments`` is kept verbatim as the client sent it."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True, kw_only=True)
class SystemMessage(_Model):
    """A system message: instructions, with images and (V4.1) tools of its own."""

    role: Literal["system"] = "system"
    content: str = ""
    images: list[ImagePlaceholder] = field(default_factory=list)
    #: Tools announced mid-conversation (V4.1 renders them as "Updated Tool Schemas"; V4 ignores them).
    tools: list[ToolDefinition] | None = None


@dataclass(slots=True, kw_only=True)
class UserMessage(_Model):
    """A user turn: its text and the images placed in it."""

    role: Literal["user"] = "user"
    content: str = ""
    images: list[ImagePlaceholder] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class AssistantMessage(_Model):
    """An assistant turn of the history: its answer, reasoning and tool calls."""

    role: Literal["assistant"] = "assistant"
    content: str = ""
    #: The reasoning (``<think>`` text) of this turn; ``None`` when the client sent none.
    reasoning: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    #: True for the final message the model must continue (no end of turn is rendered).
    prefix: bool = False


@dataclass(slots=True, kw_only=True)
class ToolMessage(_Model):
    """The result of the tool call ``tool_call_id``: its text and images."""

    role: Literal["tool"] = "tool"
    #: None for a Responses ``function_call_output`` that names no call (kept unpaired, as the reference keeps it).
    tool_call_id: str | None = ""
    content: str = ""
    images: list[ImagePlaceholder] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class LatestReminderMessage(_Model):
    """A ``latest_reminder`` turn: text written after the latest-reminder token.

    V4.1 keeps only one of consecutive reminders; V4 renders each. A reminder carries no images.
    """

    role: Literal["latest_reminder"] = "latest_reminder"
    content: str = ""


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage | LatestReminderMessage


@dataclass(slots=True, kw_only=True)
class Conversation(_Model):
    """A protocol-neutral conversation, ready to render.

    ``tools`` are the tools visible to the model (``tool_choice="none"`` empties it, a named tool choice
    filters it to that tool). ``reasoning_effort`` is ``None`` exactly when thinking is off.
    """

    messages: list[Message] = field(default_factory=list)
    thinking_mode: bool = True
    reasoning_effort: Effort | None = None
    tools: list[ToolDefinition] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    response_format: ResponseFormat = "text"
    response_schema: Any = None
    response_regex: str | None = None


@dataclass(frozen=True)
class OutputConstraint:
    """A constraint for constrained decoding: ``schema`` is compact JSON, ``""`` or the regex."""

    kind: Literal["tool_call", "tool_call_required", "json", "regex"]
    schema: str = ""


@dataclass(slots=True, kw_only=True)
class InferenceOptions(_Model):
    """Sampling settings resolved from the request (values the model server should use)."""

    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    seed: int | None = None
    output_constraint: OutputConstraint | None = None


@dataclass(slots=True, kw_only=True)
class ParsingOptions(_Model):
    """How the response path reads the model's output for this request."""

    parse_tool_calls: bool = True
    starts_in_tool_calls: bool = False
    parse_json_output: bool = False
    thinking_initial_stage: ThinkingStage | None = None
    stop_sequences: list[str] = field(default_factory=list)


#: Default completion budget when the request sets none (behavior.md#sampling).
#: The largest 32-bit count: where the reference's token arithmetic saturates.
_U32_MAX = 2**32 - 1
_DEFAULT_MAX_TOKENS_NOTHINK = 8192
_DEFAULT_MAX_TOKENS_THINK = 65536
_DEFAULT_MAX_TOKENS_THINK_MAX = 131072


@dataclass(slots=True, kw_only=True)
class ConversationRequest(_Model):
    """The result of :func:`dscodec.convert`: a conversation plus everything the serving side needs."""

    protocol: Protocol
    model: str
    model_version: ModelVersion
    stream: bool = False
    conversation: Conversation
    inference_options: InferenceOptions = field(default_factory=InferenceOptions)
    parsing_options: ParsingOptions = field(default_factory=ParsingOptions)
    #: What the request's protocol keeps for its own stream writer (settings the response repeats, say): made by
    #: the protocol's converter, read by its writer, opaque to everything else; None for a request built by hand.
    wire: object = None

    def resolve_max_tokens(self, prompt_tokens: int, context_limit: int) -> int:
        """The completion budget for a prompt of ``prompt_tokens`` in a context of ``context_limit``.

        A requested budget is kept and must fit; otherwise the default for the thinking mode is lowered to
        what the context leaves (at least 1).

        Raises:
            ContextLengthExceeded: the prompt and the requested completion do not fit; bound to the request's
                protocol, so its ``body`` has that protocol's error shape.
            TypeError: a count that is no ``int``.
            ValueError: a negative count, or one from 2**63 on.
        """
        for name, value in (("prompt_tokens", prompt_tokens), ("context_limit", context_limit)):
            if type(value) is not int:
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
            if not 0 <= value < 2**63:
                raise ValueError(f"{name} must be from 0 to 2**63 - 1, not {shown(value)}")
        requested = self.inference_options.max_tokens
        if requested is not None:
            total = prompt_tokens + requested
            if context_limit <= _U32_MAX < total and prompt_tokens <= _U32_MAX:
                # The reference counts in 32 bits, adding with saturation: a sum past 2**32 - 1 is 2**32 - 1, and
                # the completion is then what the context leaves (behavior.md#sampling). A prompt count beyond 32
                # bits (which the reference cannot take) is counted as it is: such a prompt never fits.
                total = _U32_MAX
            if total > context_limit:
                error = _context_error(prompt_tokens, requested, context_limit, total)
                raise error.with_protocol(self.protocol)
            return max(1, min(requested, context_limit - prompt_tokens))
        if prompt_tokens > context_limit:
            raise _context_error(prompt_tokens, 0, context_limit, prompt_tokens).with_protocol(self.protocol)
        conv = self.conversation
        if not conv.thinking_mode:
            default = _DEFAULT_MAX_TOKENS_NOTHINK
        elif conv.reasoning_effort == "max":
            default = _DEFAULT_MAX_TOKENS_THINK_MAX
        else:
            default = _DEFAULT_MAX_TOKENS_THINK
        return max(1, min(default, context_limit - prompt_tokens))


def _context_error(prompt_tokens: int, completion: int, limit: int, total: int) -> ContextLengthExceeded:
    return ContextLengthExceeded(
        f"This model's maximum context length is {limit} tokens. However, you requested {total} tokens "
        f"({prompt_tokens} in the messages, {completion} in the completion). "
        "Please reduce the length of the messages or completion."
    )
