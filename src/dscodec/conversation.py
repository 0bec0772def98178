"""The neutral conversation: what every protocol converts into and what the prompt renderer reads.

Nothing here knows a wire format. Field names are dscodec's own vocabulary; each protocol translates its
own spelling in its ``inbound`` module.
"""

from __future__ import annotations

import copy
import dataclasses
import math
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
    """A constraint for constrained decoding (behavior.md#output-constraints).

    Attributes:
        kind: ``"tool_call"`` (tools offered), ``"tool_call_required"`` (a call is required), ``"json"`` or
            ``"regex"``.
        schema: compact JSON (the tools as an array, or the JSON schema), ``""`` for any JSON object, or the regex.
    """

    kind: Literal["tool_call", "tool_call_required", "json", "regex"]
    schema: str = ""


@dataclass(slots=True, kw_only=True)
class InferenceOptions(_Model):
    """Sampling settings resolved from the request (values the model server should use).

    Attributes:
        temperature, top_p: as resolved for the thinking mode and the model version (behavior.md#sampling).
        max_tokens: the requested completion budget, or None; :meth:`ConversationRequest.resolve_max_tokens`
            gives the budget to use.
        logprobs, top_logprobs: whether log probabilities were asked for, and how many alternatives per token.
        seed: the sampling seed, or None.
        output_constraint: what constrained decoding should enforce, or None for free output.
    """

    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    seed: int | None = None
    output_constraint: OutputConstraint | None = None


@dataclass(slots=True, kw_only=True)
class ParsingOptions(_Model):
    """How the response path reads the model's output for this request (behavior.md#parsing-options).

    Attributes:
        parse_tool_calls: read DSML tool-call blocks as calls (the request offers tools).
        starts_in_tool_calls: the output starts inside a tool-call block (a call is required).
        parse_json_output: JSON output mode (``json_object``).
        thinking_initial_stage: the stage the output starts in: None without thinking.
        stop_sequences: the request's stop strings, applied by the stream processor.
    """

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
    """The result of :func:`dscodec.convert`: a conversation plus everything the serving side needs.

    Attributes:
        protocol: the protocol the request came in (``"chat_completions"``, ``"responses"`` or ``"messages"``).
        model: the model name the client sent; model_version: its template version (``"v4"`` or ``"v4.1"``).
        stream: whether the client asked for a stream.
        conversation: the neutral conversation :func:`dscodec.render` and :class:`~dscodec.PromptEncoder` take.
        inference_options: the sampling settings; parsing_options: how to read the model's output.
        wire: what the protocol's stream writer keeps (opaque).
    """

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
            TypeError: a count that is no ``int`` (the request's ``max_tokens`` included), or a request built by
                hand whose ``conversation`` or ``inference_options`` is of the wrong type.
            ValueError: a negative count, or one from 2**63 on.
        """
        for name, value in (("prompt_tokens", prompt_tokens), ("context_limit", context_limit)):
            if type(value) is not int:
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
            if not 0 <= value < 2**63:
                raise ValueError(f"{name} must be from 0 to 2**63 - 1, not {shown(value)}")
        options, conv = self.inference_options, self.conversation
        if not isinstance(options, InferenceOptions):
            raise TypeError(
                f"request.inference_options must be an InferenceOptions, not {type(options).__name__}"
            )
        if not isinstance(conv, Conversation):
            raise TypeError(f"request.conversation must be a Conversation, not {type(conv).__name__}")
        requested = options.max_tokens
        if requested is not None:
            if type(requested) is not int:
                raise TypeError(
                    f"request.inference_options.max_tokens must be an int or None, not {type(requested).__name__}"
                )
            if not 0 <= requested < 2**63:
                raise ValueError(
                    f"request.inference_options.max_tokens must be from 0 to 2**63 - 1, not {shown(requested)}"
                )
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


# -- checks of conversations and requests built by hand -------------------------------------------------------------

#: How deep a JSON value of a conversation built by hand (tool parameters, a response schema) may nest: what a
#: converted request can hold, with room to spare; deeper values would exhaust the writer's recursion.
_VALUE_DEPTH = 128

_EFFORTS = ("low", "high", "xhigh", "max")
_TOOL_CHOICES = ("auto", "none", "required")
_FORMATS = ("text", "json_object", "json_schema", "regex")
_STAGES = ("reasoning_start", "reasoning_continuation", "content_continuation")
_IMAGE_KINDS = ("url", "data_url", "bytes")
_DETAILS = ("low", "high", "original", "auto")
_ROLES: dict[type, str] = {}  # filled below, once the message classes exist
#: Stop strings of one request, and the length of one: what conversion accepts (docs/limits.md). The stream's
#: cost per output character grows with both, so a request built by hand is held to them too.
_STOPS = 16
_STOP_LENGTH = 4096


def _type_error(where: str, expected: str, value: object) -> TypeError:
    return TypeError(f"{where} must be {expected}, not {type(value).__name__}")


def _text(value: object, where: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise _type_error(where, "a str or None" if optional else "a str", value)
    try:
        value.encode()
    except UnicodeEncodeError:
        raise ValueError(f"{where} must be valid Unicode text (it holds a lone surrogate)") from None


def _flag(value: object, where: str, *, optional: bool = False) -> None:
    if not (type(value) is bool or (optional and value is None)):
        raise _type_error(where, "a bool or None" if optional else "a bool", value)


def _choice(value: object, allowed: tuple[str, ...], where: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or value not in allowed:
        names = " or ".join(map(repr, allowed)) + (" or None" if optional else "")
        raise ValueError(f"{where} must be {names}, not {shown(value)}")


def _items(value: object, where: str, *, optional: bool = False) -> list[Any] | tuple[Any, ...]:
    if value is None and optional:
        return ()
    if not isinstance(value, (list, tuple)):
        raise _type_error(where, "a list or None" if optional else "a list", value)
    return value


def _json_value(value: object, where: str) -> None:
    """``value`` is what parsed JSON holds (dicts with str keys, lists, str, int, float, bool, None), nested at most
    ``_VALUE_DEPTH`` deep; checked without recursion."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or isinstance(item, (str, bool, int, float)):
            if isinstance(item, str):
                _text(item, where)
            elif isinstance(item, float) and not math.isfinite(item):
                raise ValueError(
                    f"{where} must be a JSON value: it holds {item!r}, which JSON has no number for"
                )
            elif isinstance(item, int) and not -(2**63) <= item < 2**64:
                raise ValueError(f"{where} must be a JSON value: it holds an integer beyond 64 bits")
            continue
        if depth >= _VALUE_DEPTH:
            raise ValueError(f"{where} nests deeper than {_VALUE_DEPTH} arrays and objects")
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise TypeError(f"{where} must be a JSON value: an object key is a {type(key).__name__}")
                stack.append((child, depth + 1))
        elif isinstance(item, (list, tuple)):
            stack.extend((child, depth + 1) for child in item)
        else:
            raise TypeError(f"{where} must be a JSON value: it holds a {type(item).__name__}")


def _tools(tools: object, where: str, *, optional: bool = False) -> None:
    for k, tool in enumerate(_items(tools, where, optional=optional)):
        at = f"{where}[{k}]"
        if not isinstance(tool, ToolDefinition):
            raise _type_error(at, "a ToolDefinition", tool)
        _text(tool.name, f"{at}.name")
        _text(tool.description, f"{at}.description", optional=True)
        _json_value(tool.parameters, f"{at}.parameters")
        _flag(tool.strict, f"{at}.strict", optional=True)
        _flag(tool.defer_loading, f"{at}.defer_loading")


def _images(images: object, where: str) -> None:
    for k, image in enumerate(_items(images, where)):
        at = f"{where}[{k}]"
        if not isinstance(image, ImagePlaceholder):
            raise _type_error(at, "an ImagePlaceholder", image)
        if type(image.offset) is not int:
            raise _type_error(f"{at}.offset", "an int", image.offset)
        if not -(2**63) <= image.offset < 2**63:
            raise ValueError(
                f"{at}.offset must be an index of the message content, not {shown(image.offset)}"
            )
        source = image.source
        if not isinstance(source, ImageSource):
            raise _type_error(f"{at}.source", "an ImageSource", source)
        _choice(source.kind, _IMAGE_KINDS, f"{at}.source.kind")
        _text(source.url, f"{at}.source.url", optional=True)
        if source.data is not None and not isinstance(source.data, bytes):
            raise _type_error(f"{at}.source.data", "bytes or None", source.data)
        _text(source.media_type, f"{at}.source.media_type", optional=True)
        _choice(source.detail, _DETAILS, f"{at}.source.detail")
        _text(source.path, f"{at}.source.path")


def conversation_looks_valid(conversation: Conversation) -> bool:
    """A quick test of the fields :func:`check_conversation` checks, without their messages: True when every field
    has its declared type and value (JSON values and the contents of texts are not looked into). Cheap enough for
    every rendering; when it says False, :func:`check_conversation` names what is wrong."""
    conv = conversation
    if not (
        type(conv.thinking_mode) is bool
        and (conv.reasoning_effort is None or conv.reasoning_effort in _EFFORTS)
        and conv.tool_choice in _TOOL_CHOICES
        and conv.response_format in _FORMATS
        and (conv.response_regex is None or type(conv.response_regex) is str)
        and type(conv.messages) is list
        and type(conv.tools) is list
    ):
        return False
    roles = _ROLES
    for tool in conv.tools:
        if not (
            type(tool) is ToolDefinition
            and type(tool.name) is str
            and (tool.description is None or type(tool.description) is str)
            and (tool.strict is None or type(tool.strict) is bool)
            and type(tool.defer_loading) is bool
        ):
            return False
    for message in conv.messages:
        cls = type(message)
        role = roles.get(cls)
        if role is None or message.role != role or type(message.content) is not str:
            return False
        if isinstance(message, AssistantMessage):
            if not (
                (message.reasoning is None or type(message.reasoning) is str)
                and type(message.prefix) is bool
                and type(message.tool_calls) is list
            ):
                return False
            for call in message.tool_calls:
                if not (
                    type(call) is ToolCall
                    and type(call.id) is str
                    and type(call.name) is str
                    and type(call.arguments) is str
                ):
                    return False
        elif not isinstance(message, LatestReminderMessage):
            images = message.images
            if type(images) is not list:
                return False
            if images:
                try:
                    _images(images, "")
                except (TypeError, ValueError):
                    return False
            if isinstance(message, SystemMessage):
                if message.tools is not None:
                    if type(message.tools) is not list:
                        return False
                    try:
                        _tools(message.tools, "")
                    except (TypeError, ValueError):
                        return False
            elif isinstance(message, ToolMessage) and not (
                message.tool_call_id is None or type(message.tool_call_id) is str
            ):
                return False
    return True


def check_conversation(conversation: Conversation, where: str = "conversation") -> None:
    """Check a conversation built by hand before it is rendered: every field of the type and the values it is
    declared with (those of :func:`dscodec.convert` always are). Linear in the conversation's size.

    Raises:
        TypeError: a field of the wrong type (the message names it: ``conversation.messages[2].content``).
        ValueError: a field of the right type with a value it cannot take (an unknown effort, a lone surrogate in
            a text, a JSON value nested too deep).
    """
    conv = conversation
    _flag(conv.thinking_mode, f"{where}.thinking_mode")
    _choice(conv.reasoning_effort, _EFFORTS, f"{where}.reasoning_effort", optional=True)
    _choice(conv.tool_choice, _TOOL_CHOICES, f"{where}.tool_choice")
    _choice(conv.response_format, _FORMATS, f"{where}.response_format")
    _json_value(conv.response_schema, f"{where}.response_schema")
    _text(conv.response_regex, f"{where}.response_regex", optional=True)
    _tools(conv.tools, f"{where}.tools")
    for index, message in enumerate(_items(conv.messages, f"{where}.messages")):
        at = f"{where}.messages[{index}]"
        role = _ROLES.get(type(message))
        if role is None:
            role = next((r for cls, r in _ROLES.items() if isinstance(message, cls)), None)
            if role is None:
                raise _type_error(
                    at, "a message (SystemMessage, UserMessage, AssistantMessage, ...)", message
                )
        if message.role != role:
            raise ValueError(
                f"{at}.role must be {role!r} for a {type(message).__name__}, not {shown(message.role)}"
            )
        _text(message.content, f"{at}.content")
        if isinstance(message, AssistantMessage):
            _text(message.reasoning, f"{at}.reasoning", optional=True)
            _flag(message.prefix, f"{at}.prefix")
            for k, call in enumerate(_items(message.tool_calls, f"{at}.tool_calls")):
                if not isinstance(call, ToolCall):
                    raise _type_error(f"{at}.tool_calls[{k}]", "a ToolCall", call)
                _text(call.id, f"{at}.tool_calls[{k}].id")
                _text(call.name, f"{at}.tool_calls[{k}].name")
                _text(call.arguments, f"{at}.tool_calls[{k}].arguments")
        elif not isinstance(message, LatestReminderMessage):
            _images(message.images, f"{at}.images")
            if isinstance(message, SystemMessage):
                _tools(message.tools, f"{at}.tools", optional=True)
            elif isinstance(message, ToolMessage):
                _text(message.tool_call_id, f"{at}.tool_call_id", optional=True)


def check_parsing_options(options: object, where: str = "request.parsing_options") -> None:
    """Check the parsing options of a request built by hand before its output is read.

    Raises:
        TypeError, ValueError: as :func:`check_conversation`.
    """
    if not isinstance(options, ParsingOptions):
        raise _type_error(where, "a ParsingOptions", options)
    _flag(options.parse_tool_calls, f"{where}.parse_tool_calls")
    _flag(options.starts_in_tool_calls, f"{where}.starts_in_tool_calls")
    _flag(options.parse_json_output, f"{where}.parse_json_output")
    _choice(options.thinking_initial_stage, _STAGES, f"{where}.thinking_initial_stage", optional=True)
    stops = _items(options.stop_sequences, f"{where}.stop_sequences")
    if len(stops) > _STOPS:
        raise ValueError(f"{where}.stop_sequences holds {len(stops)} stop strings, more than {_STOPS}")
    for k, stop in enumerate(stops):
        _text(stop, f"{where}.stop_sequences[{k}]")
        if len(stop) > _STOP_LENGTH:
            raise ValueError(f"{where}.stop_sequences[{k}] is longer than {_STOP_LENGTH} characters")


_ROLES.update(
    {
        SystemMessage: "system",
        UserMessage: "user",
        AssistantMessage: "assistant",
        ToolMessage: "tool",
        LatestReminderMessage: "latest_reminder",
    }
)
