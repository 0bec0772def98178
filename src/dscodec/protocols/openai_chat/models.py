"""Chat Completions request wire types and their typed reading (behavior.md#chat-completions).

:func:`read_request` turns a parsed JSON body into slotted dataclasses, checking JSON types only; the rules of
the protocol (ranges, pairing, images…) are :mod:`dscodec.protocols.openai_chat.inbound`'s business. Field
names are the protocol's own. Each JSON object is one table of :mod:`dscodec.protocols._reader`, which reads it
with the reference's serde rules (document order, missing fields last, ``null`` as absent, unknown fields
ignored).

The types are not frozen: nothing changes them after reading, and Python takes about twice as long to build a
frozen dataclass type (when the module is first imported) and two to three times as long to make each value
(in every request).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from dscodec.protocols import _reader as r
from dscodec.protocols._sampling import EFFORT_VARIANTS, EffortInput, ThinkingSwitch
from dscodec.protocols._wire_structs import (
    FUNCTION_TOOL_FIELDS,
    FunctionTool,
    NamedToolChoice,
    TextPart,
    read_openai_tool_choice,
    thinking_struct,
)

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


# -- content: each type, then the table that reads it (see :mod:`dscodec.protocols._reader`) -----------------


@dataclass(slots=True)
class FilePart:
    """A ``file`` part. Only the flat ``file_id``/``file_data`` fields count (behavior.md#chat-content-parts)."""

    file_id: str | None = None
    file_data: str | None = None


@dataclass(slots=True)
class ImageUrlPart:
    url: str
    detail: Detail = "high"


_IMAGE_URL = r.Struct(
    ImageUrlPart,
    r.required("url", r.read_str),
    r.optional("detail", r.unit_enum(_DETAILS)),
    expected="struct ChatCompletionImageUrl",
    size=2,
)


ContentPart = TextPart | ImageUrlPart | FilePart
#: Message content: a plain string or a list of parts.
Content = str | tuple[ContentPart, ...]
_PART: r.Tagged[ContentPart] = r.Tagged(
    "type",
    "internally tagged enum ChatCompletionRequestContentBlock",
    {
        "text": r.Struct(TextPart, r.required("text", r.read_str)),
        "image_url": r.Struct(lambda image_url: image_url, r.required("image_url", _IMAGE_URL.read)),
        # Only the flat fields count; ``filename`` is read for its type.
        "file": r.Struct(
            FilePart, *r.optionals(r.read_str, "file_id", "file_data"), r.checked("filename", r.read_str)
        ),
    },
)
_read_content = r.str_or_list(_PART.read, "content should be a string or a list")
_CONTENT = r.required("content", _read_content)
_NAME = r.checked("name", r.read_str)


# -- messages --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class SystemMessage:
    content: Content


_SYSTEM = r.Struct(SystemMessage, _CONTENT, _NAME)


@dataclass(slots=True)
class UserMessage:
    content: Content


_USER = r.Struct(UserMessage, _CONTENT, _NAME)


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str


_FUNCTION_CALL = r.Struct(
    lambda name, arguments: (name, arguments),
    r.required("name", r.read_str),
    r.required("arguments", r.read_str),
    expected="struct ChatCompletionRequestFunctionCall",
    size=2,
)
_TOOL_CALL = r.Struct(
    ToolCall,
    r.required("id", r.read_str),
    r.checked("type", r.unit_enum(("function",)), required=True),
    r.required("function", _FUNCTION_CALL.read, into=("name", "arguments")),
    expected="struct ChatCompletionRequestToolCall",
    size=3,
)


def _string_or_nothing(value: Any, path: str | None) -> str | None:
    """A string, or None for any other value (a field read only when it is a string)."""
    return value if isinstance(value, str) else None


@dataclass(slots=True)
class AssistantMessage:
    content: Content | None = None
    reasoning_content: str | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    prefix: bool = False
    #: ``reasoning``, the field some OpenAI-compatible servers send the reasoning back in (deviation D17): read
    #: only when it is a string; anything else is left alone, as an unknown field is.
    reasoning: str | None = None


_ASSISTANT = r.Struct(
    AssistantMessage,
    r.optional("content", _read_content),
    _NAME,
    r.optional("reasoning_content", r.read_str),
    r.optional("reasoning", _string_or_nothing),
    r.optional("tool_calls", r.list_of(_TOOL_CALL.read)),
    r.optional("prefix", r.read_bool),
)


@dataclass(slots=True)
class ToolMessage:
    content: Content
    tool_call_id: str


# A tool message and a reminder have no ``name`` field: any value there is ignored, as an unknown field is.
_TOOL_MESSAGE = r.Struct(ToolMessage, _CONTENT, r.required("tool_call_id", r.read_str))


@dataclass(slots=True)
class LatestReminderMessage:
    content: str


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage | LatestReminderMessage
_MESSAGE: r.Tagged[Message] = r.Tagged(
    "role",
    "internally tagged enum ChatCompletionRequestMessage",
    {
        "system": _SYSTEM,
        "user": _USER,
        "assistant": _ASSISTANT,
        "tool": _TOOL_MESSAGE,
        "latest_reminder": r.Struct(LatestReminderMessage, r.required("content", r.read_str)),
    },
)


# -- tools -----------------------------------------------------------------------------------------------------

_FUNCTION = r.Struct(
    FunctionTool, *FUNCTION_TOOL_FIELDS, expected="struct ChatCompletionFunctionDefinition", size=4
)
_TOOL = r.Struct(
    lambda function: function,
    r.checked("type", r.unit_enum(("function",)), required=True),
    r.required("function", _FUNCTION.read),
    expected="struct ChatCompletionTool",
    size=2,
)
ToolChoice = Literal["none", "auto", "required"] | NamedToolChoice


def _read_tool_choice(value: Any, path: str) -> ToolChoice:
    # An untagged enum: serde reports every problem at the field itself, prefixed with the inner field's name.
    choice = read_openai_tool_choice(value, path, "expected one of `none`, `auto`, `required` or a tool")
    if isinstance(choice, str):
        return cast(ToolChoice, choice)
    name: str | None = None
    for key, item in choice.items():
        if key == "type":
            try:
                r.read_unit_enum(item, ("function",), path)
            except r.WireError as exc:
                r.fail(f"field `type`: {exc.detail}", path)
        elif key == "function":
            if isinstance(item, list) and not item:  # serde's positional form, with no field
                r.fail(
                    "field `function`: invalid length 0, expected struct ChatCompletionToolChoiceFunction with 1 element",
                    path,
                )
            if not isinstance(item, Mapping):
                r.fail(
                    f"field `function`: invalid type: {r.describe_value(item)}, expected struct ChatCompletionToolChoiceFunction",
                    path,
                )
            if "name" not in item:
                r.fail("field `function`: missing field `name`", path)
            if not isinstance(item["name"], str):
                r.fail(
                    f"field `function`: invalid type: {r.describe_value(item['name'])}, expected a string",
                    path,
                )
            name = item["name"]
    if name is None:  # read as absent, hence null (the reference's words)
        r.fail("field `function`: invalid type: null, expected struct ChatCompletionToolChoiceFunction", path)
    return NamedToolChoice(name)


# -- response format -------------------------------------------------------------------------------------------


@dataclass(slots=True)
class JsonSchemaFormat:
    schema: Any
    name: str | None = None
    strict: bool | None = None


@dataclass(slots=True)
class RegexFormat:
    regex: str


ResponseFormat = Literal["text", "json_object"] | JsonSchemaFormat | RegexFormat
_JSON_SCHEMA = r.Struct(
    JsonSchemaFormat,
    r.required("schema"),
    # ``description`` is not read by the reference (any value passes); it is not used either.
    r.optional("name", r.read_str),
    r.optional("strict", r.read_bool),
    expected="struct ChatCompletionResponseFormatJsonSchema",
    size=3,
)

_RESPONSE_FORMAT: r.Tagged[ResponseFormat] = r.Tagged(
    "type",
    "internally tagged enum ChatCompletionResponseFormat",
    {
        "json_object": r.constant("json_object"),
        "json_schema": r.Struct(
            lambda json_schema: json_schema, r.required("json_schema", _JSON_SCHEMA.read)
        ),
        "regex": r.Struct(RegexFormat, r.required("regex", r.read_str)),
        "text": r.constant("text"),
    },
)


# -- the request -----------------------------------------------------------------------------------------------


@dataclass(slots=True)
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


_read_strings = r.list_of(r.read_str)


def _read_stop(value: Any, path: str) -> tuple[tuple[str, ...], bool]:
    """The stop strings, and whether they were sent as a list."""
    if isinstance(value, str):
        return (value,), False
    if isinstance(value, (list, tuple)):
        return _read_strings(value, path), True
    r.fail("expected a string or a list", path)


#: Present (any object) sets ``stream_options``; ``include_usage`` is its only meaningful key.
_STREAM_OPTIONS = r.Struct(
    lambda include_usage=False: (True, include_usage),
    r.optional("include_usage", r.read_bool),
    expected="struct ChatCompletionStreamOptions",
    size=1,
)
_THINKING = thinking_struct("struct ChatCompletionThinking")
# serde reports missing fields after reading the others, in declaration order: ``messages`` before ``model``.
_REQUEST = r.Struct(
    ChatCompletionRequest,
    r.required("messages", r.list_of(_MESSAGE.read)),
    r.required("model", r.read_str),
    *r.optionals(r.read_bool, "stream", "logprobs", "parallel_tool_calls"),
    *r.optionals(r.uint(32), "max_tokens", "max_completion_tokens"),
    *r.optionals(r.uint(8), "n", "top_logprobs"),
    r.optional("seed", r.uint(64)),
    *r.optionals(r.read_f32, "temperature", "top_p", "presence_penalty", "frequency_penalty"),
    r.optional("stream_options", _STREAM_OPTIONS.read, into=("stream_options", "include_usage")),
    r.optional("stop", _read_stop, into=("stop", "stop_is_list")),
    r.optional("tools", r.list_of(_TOOL.read)),
    r.optional("tool_choice", _read_tool_choice),
    r.optional("response_format", _RESPONSE_FORMAT.read),
    r.optional("thinking", _THINKING.read),
    r.optional("reasoning_effort", r.unit_enum(EFFORT_VARIANTS)),
    expected="struct ChatCompletionRequest",
    size=20,
)


def read_request(body: Any) -> ChatCompletionRequest:
    """Read a parsed JSON body; ``WireError``: a wrong JSON type, an unknown enum value or a missing field."""
    return _REQUEST.read(body, None)
