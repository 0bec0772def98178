"""Chat Completions request wire types and their typed reading (behavior.md#chat-completions).

:func:`read_request` turns a parsed JSON body into frozen dataclasses, checking JSON types only; the rules of
the protocol (ranges, pairing, images…) are :mod:`dscodec.protocols.openai_chat.inbound`'s business. Field
names are the protocol's own. Each JSON object is one table of :mod:`dscodec.protocols._reader`, which reads it
with the reference's serde rules (document order, missing fields last, ``null`` as absent, unknown fields
ignored).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from dscodec.protocols._body import (
    WireError,
    describe_value,
    fail,
    read_bool,
    read_f32,
    read_str,
    read_unit_enum,
)
from dscodec.protocols._reader import (
    Struct,
    Tagged,
    checked,
    constant,
    list_of,
    optional,
    required,
    str_or_list,
    uint,
    unit_enum,
)
from dscodec.protocols._sampling import EFFORT_VARIANTS, THINKING_VARIANTS, EffortInput, ThinkingSwitch

__all__ = [
    "AssistantMessage",
    "ChatCompletionRequest",
    "Content",
    "ContentPart",
    "Detail",
    "FilePart",
    "FunctionTool",
    "ImageUrlPart",
    "JsonSchemaFormat",
    "LatestReminderMessage",
    "Message",
    "NamedToolChoice",
    "RegexFormat",
    "ResponseFormat",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolChoice",
    "ToolMessage",
    "UserMessage",
    "read_request",
]

Detail = Literal["low", "high", "original", "auto"]
_DETAILS: tuple[str, ...] = ("low", "high", "original", "auto")


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str


@dataclass(frozen=True, slots=True)
class ImageUrlPart:
    url: str
    detail: Detail = "high"


@dataclass(frozen=True, slots=True)
class FilePart:
    """A ``file`` part. Only the flat ``file_id``/``file_data`` fields count (behavior.md#chat-content-parts)."""

    file_id: str | None = None
    file_data: str | None = None


ContentPart = TextPart | ImageUrlPart | FilePart
#: Message content: a plain string or a list of parts.
Content = str | tuple[ContentPart, ...]


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class SystemMessage:
    content: Content


@dataclass(frozen=True, slots=True)
class UserMessage:
    content: Content


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    content: Content | None = None
    reasoning_content: str | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    prefix: bool = False
    #: ``reasoning``, the field some OpenAI-compatible servers send the reasoning back in (deviation D17): read
    #: only when it is a string; anything else is left alone, as an unknown field is.
    reasoning: str | None = None


@dataclass(frozen=True, slots=True)
class ToolMessage:
    content: Content
    tool_call_id: str


@dataclass(frozen=True, slots=True)
class LatestReminderMessage:
    content: str


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage | LatestReminderMessage


@dataclass(frozen=True, slots=True)
class FunctionTool:
    name: str
    description: str | None = None
    #: The schema as sent; ``None`` when absent or ``null``.
    parameters: Any = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class NamedToolChoice:
    name: str


ToolChoice = Literal["none", "auto", "required"] | NamedToolChoice


@dataclass(frozen=True, slots=True)
class JsonSchemaFormat:
    schema: Any
    name: str | None = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class RegexFormat:
    regex: str


ResponseFormat = Literal["text", "json_object"] | JsonSchemaFormat | RegexFormat


@dataclass(frozen=True, slots=True)
class ChatCompletionRequest:
    """A Chat Completions request body with every recognised field typed (``None`` = absent or null)."""

    model: str
    messages: tuple[Message, ...]
    stream: bool | None = None
    #: ``stream_options`` present (any object); ``include_usage`` is its only meaningful key.
    stream_options: bool = False
    include_usage: bool = False
    max_tokens: int | None = None
    #: Not read by the reference; dscodec honours it (deviation D4).
    max_completion_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    n: int | None = None
    stop: tuple[str, ...] | None = None
    stop_is_list: bool = False
    tools: tuple[FunctionTool, ...] | None = None
    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    seed: int | None = None
    thinking: ThinkingSwitch | None = None
    reasoning_effort: EffortInput | None = None
    parallel_tool_calls: bool | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None


# -- reading: one table per JSON object (see :mod:`dscodec.protocols._reader` for the rules) ---------------------


_IMAGE_URL = Struct(
    ImageUrlPart,
    required("url", read_str),
    optional("detail", unit_enum(_DETAILS)),
    expected="struct ChatCompletionImageUrl",
    size=2,
)
_PART: Tagged[ContentPart] = Tagged(
    "type",
    "internally tagged enum ChatCompletionRequestContentBlock",
    {
        "text": Struct(TextPart, required("text", read_str)),
        "image_url": Struct(lambda image_url: image_url, required("image_url", _IMAGE_URL.read)),
        # Only the flat fields count; ``filename`` is read for its type.
        "file": Struct(
            FilePart,
            optional("file_id", read_str),
            optional("file_data", read_str),
            checked("filename", read_str),
        ),
    },
)
_read_content = str_or_list(_PART.read, "content should be a string or a list")

_FUNCTION_CALL = Struct(
    lambda name, arguments: (name, arguments),
    required("name", read_str),
    required("arguments", read_str),
    expected="struct ChatCompletionRequestFunctionCall",
    size=2,
)
_TOOL_CALL = Struct(
    ToolCall,
    required("id", read_str),
    checked("type", unit_enum(("function",)), required=True),
    required("function", _FUNCTION_CALL.read, into=("name", "arguments")),
    expected="struct ChatCompletionRequestToolCall",
    size=3,
)


def _string_or_nothing(value: Any, path: str | None) -> str | None:
    """A string, or None for any other value (a field read only when it is a string)."""
    return value if isinstance(value, str) else None


_CONTENT = required("content", _read_content)
_NAME = checked("name", read_str)
_MESSAGE: Tagged[Message] = Tagged(
    "role",
    "internally tagged enum ChatCompletionRequestMessage",
    {
        "system": Struct(SystemMessage, _CONTENT, _NAME),
        "user": Struct(UserMessage, _CONTENT, _NAME),
        "assistant": Struct(
            AssistantMessage,
            optional("content", _read_content),
            _NAME,
            optional("reasoning_content", read_str),
            optional("reasoning", _string_or_nothing),
            optional("tool_calls", list_of(_TOOL_CALL.read)),
            optional("prefix", read_bool),
        ),
        "tool": Struct(ToolMessage, _CONTENT, _NAME, required("tool_call_id", read_str)),
        "latest_reminder": Struct(LatestReminderMessage, required("content", read_str), _NAME),
    },
)

_FUNCTION = Struct(
    FunctionTool,
    required("name", read_str),
    optional("description", read_str),
    optional("parameters"),
    optional("strict", read_bool),
    expected="struct ChatCompletionFunctionDefinition",
    size=4,
)
_TOOL = Struct(
    lambda function: function,
    checked("type", unit_enum(("function",)), required=True),
    required("function", _FUNCTION.read),
    expected="struct ChatCompletionTool",
    size=2,
)

_TOOL_CHOICE_ERROR = "expected one of `none`, `auto`, `required` or a tool"


def _read_tool_choice(value: Any, path: str) -> ToolChoice:
    # An untagged enum: serde reports every problem at the field itself, prefixed with the inner field's name.
    if isinstance(value, str):
        if value in ("none", "auto", "required"):
            return cast(ToolChoice, value)
        fail(_TOOL_CHOICE_ERROR, path)
    if not isinstance(value, Mapping) or "type" not in value:
        fail(_TOOL_CHOICE_ERROR, path)
    name: str | None = None
    for key, item in value.items():
        if key == "type":
            try:
                read_unit_enum(item, ("function",), path)
            except WireError as exc:
                fail(f"field `type`: {exc.detail}", path)
        elif key == "function":
            if not isinstance(item, Mapping):
                fail(
                    f"field `function`: invalid type: {describe_value(item)}, expected struct ChatCompletionToolChoiceFunction",
                    path,
                )
            if "name" not in item:
                fail("field `function`: missing field `name`", path)
            if not isinstance(item["name"], str):
                fail(
                    f"field `function`: invalid type: {describe_value(item['name'])}, expected a string", path
                )
            name = item["name"]
    if name is None:
        fail("missing field `function`", path)
    return NamedToolChoice(name)


_JSON_SCHEMA = Struct(
    JsonSchemaFormat,
    required("schema"),
    # ``description`` is not read by the reference (any value passes); it is not used either.
    optional("name", read_str),
    optional("strict", read_bool),
    expected="struct ChatCompletionResponseFormatJsonSchema",
    size=3,
)
_RESPONSE_FORMAT: Tagged[ResponseFormat] = Tagged(
    "type",
    "internally tagged enum ChatCompletionResponseFormat",
    {
        "json_object": constant("json_object"),
        "json_schema": Struct(lambda json_schema: json_schema, required("json_schema", _JSON_SCHEMA.read)),
        "regex": Struct(RegexFormat, required("regex", read_str)),
        "text": constant("text"),
    },
)


_read_strings = list_of(read_str)


def _read_stop(value: Any, path: str) -> tuple[tuple[str, ...], bool]:
    """The stop strings, and whether they were sent as a list."""
    if isinstance(value, str):
        return (value,), False
    if isinstance(value, (list, tuple)):
        return _read_strings(value, path), True
    fail("expected a string or a list", path)


#: Present (any object) sets ``stream_options``; ``include_usage`` is its only meaningful key.
_STREAM_OPTIONS = Struct(
    lambda include_usage=False: (True, include_usage),
    optional("include_usage", read_bool),
    expected="struct ChatCompletionStreamOptions",
    size=1,
)
_THINKING = Struct(
    lambda type: type,
    required("type", unit_enum(THINKING_VARIANTS)),
    # Read for its type only: the budget never matters (behavior.md#thinking-and-effort).
    checked("budget_tokens", uint(64)),
    expected="struct ChatCompletionThinking",
    size=2,
)

# serde reports missing fields after reading the others, in declaration order: ``messages`` before ``model``.
_REQUEST = Struct(
    ChatCompletionRequest,
    required("messages", list_of(_MESSAGE.read)),
    required("model", read_str),
    optional("stream", read_bool),
    optional("logprobs", read_bool),
    optional("parallel_tool_calls", read_bool),
    optional("stream_options", _STREAM_OPTIONS.read, into=("stream_options", "include_usage")),
    optional("max_tokens", uint(32)),
    optional("max_completion_tokens", uint(32)),
    optional("n", uint(8)),
    optional("top_logprobs", uint(8)),
    optional("seed", uint(64)),
    optional("temperature", read_f32),
    optional("top_p", read_f32),
    optional("presence_penalty", read_f32),
    optional("frequency_penalty", read_f32),
    optional("stop", _read_stop, into=("stop", "stop_is_list")),
    optional("tools", list_of(_TOOL.read)),
    optional("tool_choice", _read_tool_choice),
    optional("response_format", _RESPONSE_FORMAT.read),
    optional("thinking", _THINKING.read),
    optional("reasoning_effort", unit_enum(EFFORT_VARIANTS)),
    expected="struct ChatCompletionRequest",
    size=20,
)


def read_request(body: Any) -> ChatCompletionRequest:
    """Read a parsed JSON body into a :class:`ChatCompletionRequest`.

    Raises:
        WireError: a field has the wrong JSON type, an enum value is unknown, or a required field is missing.
    """
    return _REQUEST.read(body, None)
