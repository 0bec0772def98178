"""Chat Completions request wire types and their typed reading (spec §2.1).

:func:`read_request` turns a parsed JSON body into frozen dataclasses, checking JSON types only; the rules of
the protocol (ranges, pairing, images…) are :mod:`dscodec.protocols.openai_chat.inbound`'s business. Field
names are the protocol's own. Reading follows the reference's serde model: fields are read in document order
(the first malformed one is reported), missing required fields are reported after that, ``null`` counts as
absent for optional fields, and unknown fields are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from dscodec.protocols._shared import (
    EFFORT_VARIANTS,
    THINKING_VARIANTS,
    EffortInput,
    ThinkingSwitch,
    WireError,
    describe_value,
    fail,
    join_path,
    missing_field,
    read_bool,
    read_f32,
    read_list,
    read_map,
    read_str,
    read_tag,
    read_tagged_map,
    read_uint,
    read_unit_enum,
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
_ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool", "latest_reminder")
_PART_TYPES: tuple[str, ...] = ("text", "image_url", "file")
_FORMAT_TYPES: tuple[str, ...] = ("json_object", "json_schema", "regex", "text")


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str


@dataclass(frozen=True, slots=True)
class ImageUrlPart:
    url: str
    detail: Detail = "high"


@dataclass(frozen=True, slots=True)
class FilePart:
    """A ``file`` part. Only the flat ``file_id``/``file_data`` fields count (spec §2.1.1)."""

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


# ---------------------------------------------------------------------------------------------------------------


def _read_content(value: Any, path: str, *, allow_null: bool) -> Content | None:
    if value is None and allow_null:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_read_part(item, f"{path}[{i}]") for i, item in enumerate(value))
    fail("content should be a string or a list", path)


def _read_part(value: Any, path: str) -> ContentPart:
    part = read_tagged_map(
        value, "type", _PART_TYPES, "internally tagged enum ChatCompletionRequestContentBlock", path
    )
    kind = read_tag(part, "type", _PART_TYPES, join_path(path, "type"))
    if kind == "text":
        text: str | None = None
        for key, item in part.items():
            if key == "text":
                text = read_str(item, join_path(path, key))
        if text is None:
            raise missing_field("text", path)
        return TextPart(text)
    if kind == "image_url":
        image: ImageUrlPart | None = None
        for key, item in part.items():
            if key == "image_url":
                image = _read_image_url(item, join_path(path, key))
        if image is None:
            raise missing_field("image_url", path)
        return image
    fields: dict[str, str | None] = {"file_id": None, "file_data": None}
    for key, item in part.items():
        if key in ("file_id", "file_data", "filename") and item is not None:
            text_value = read_str(item, join_path(path, key))
            if key != "filename":
                fields[key] = text_value
    return FilePart(file_id=fields["file_id"], file_data=fields["file_data"])


def _read_image_url(value: Any, path: str) -> ImageUrlPart:
    image = read_map(value, "struct ChatCompletionImageUrl", path, fields=2)
    url: str | None = None
    detail: Detail = "high"
    for key, item in image.items():
        if key == "url":
            url = read_str(item, join_path(path, key))
        elif key == "detail" and item is not None:
            detail = cast(Detail, read_unit_enum(item, _DETAILS, join_path(path, key)))
    if url is None:
        raise missing_field("url", path)
    return ImageUrlPart(url=url, detail=detail)


def _read_tool_call(value: Any, path: str) -> ToolCall:
    call = read_map(value, "struct ChatCompletionRequestToolCall", path, fields=3)
    call_id: str | None = None
    has_type = False
    function: tuple[str, str] | None = None
    for key, item in call.items():
        if key == "id":
            call_id = read_str(item, join_path(path, key))
        elif key == "type":
            read_unit_enum(item, ("function",), join_path(path, key))
            has_type = True
        elif key == "function":
            function = _read_function_call(item, join_path(path, key))
    if call_id is None:
        raise missing_field("id", path)
    if not has_type:
        raise missing_field("type", path)
    if function is None:
        raise missing_field("function", path)
    return ToolCall(id=call_id, name=function[0], arguments=function[1])


def _read_function_call(value: Any, path: str) -> tuple[str, str]:
    function = read_map(value, "struct ChatCompletionRequestFunctionCall", path, fields=2)
    name: str | None = None
    arguments: str | None = None
    for key, item in function.items():
        if key == "name":
            name = read_str(item, join_path(path, key))
        elif key == "arguments":
            arguments = read_str(item, join_path(path, key))
    if name is None:
        raise missing_field("name", path)
    if arguments is None:
        raise missing_field("arguments", path)
    return name, arguments


def _read_message(value: Any, path: str) -> Message:
    message = read_tagged_map(
        value, "role", _ROLES, "internally tagged enum ChatCompletionRequestMessage", path
    )
    role = read_tag(message, "role", _ROLES, join_path(path, "role"))
    content: Content | None = None
    has_content = False
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    prefix = False
    tool_call_id: str | None = None
    for key, item in message.items():
        where = join_path(path, key)
        if key == "content":
            if role == "latest_reminder":
                content = read_str(item, where)
            else:
                content = _read_content(item, where, allow_null=role == "assistant")
            has_content = True
        elif key == "name" and item is not None:
            read_str(item, where)
        elif role == "assistant" and key == "reasoning_content" and item is not None:
            reasoning = read_str(item, where)
        elif role == "assistant" and key == "tool_calls" and item is not None:
            tool_calls = tuple(
                _read_tool_call(call, f"{where}[{i}]") for i, call in enumerate(read_list(item, where))
            )
        elif role == "assistant" and key == "prefix" and item is not None:
            prefix = read_bool(item, where)
        elif role == "tool" and key == "tool_call_id":
            tool_call_id = read_str(item, where)
    if role == "assistant":
        return AssistantMessage(
            content=content, reasoning_content=reasoning, tool_calls=tool_calls, prefix=prefix
        )
    if not has_content:
        raise missing_field("content", path)
    assert content is not None  # only assistant content may be null
    if role == "system":
        return SystemMessage(content)
    if role == "user":
        return UserMessage(content)
    if role == "latest_reminder":
        return LatestReminderMessage(cast(str, content))
    if tool_call_id is None:
        raise missing_field("tool_call_id", path)
    return ToolMessage(content=content, tool_call_id=tool_call_id)


def _read_tool(value: Any, path: str) -> FunctionTool:
    tool = read_map(value, "struct ChatCompletionTool", path, fields=2)
    has_type = False
    function: FunctionTool | None = None
    for key, item in tool.items():
        where = join_path(path, key)
        if key == "type":
            read_unit_enum(item, ("function",), where)
            has_type = True
        elif key == "function":
            function = _read_function(item, where)
    if not has_type:
        raise missing_field("type", path)
    if function is None:
        raise missing_field("function", path)
    return function


def _read_function(value: Any, path: str) -> FunctionTool:
    function = read_map(value, "struct ChatCompletionFunctionDefinition", path, fields=4)
    name: str | None = None
    description: str | None = None
    parameters: Any = None
    strict: bool | None = None
    for key, item in function.items():
        where = join_path(path, key)
        if key == "name":
            name = read_str(item, where)
        elif key == "description" and item is not None:
            description = read_str(item, where)
        elif key == "parameters":
            parameters = item
        elif key == "strict" and item is not None:
            strict = read_bool(item, where)
    if name is None:
        raise missing_field("name", path)
    return FunctionTool(name=name, description=description, parameters=parameters, strict=strict)


_TOOL_CHOICE_ERROR = "expected one of `none`, `auto`, `required` or a tool"


def _read_tool_choice(value: Any, path: str) -> ToolChoice:
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


def _read_response_format(value: Any, path: str) -> ResponseFormat:
    fmt = read_tagged_map(
        value, "type", _FORMAT_TYPES, "internally tagged enum ChatCompletionResponseFormat", path
    )
    kind = read_tag(fmt, "type", _FORMAT_TYPES, join_path(path, "type"))
    if kind in ("text", "json_object"):
        return cast(ResponseFormat, kind)
    if kind == "regex":
        regex: str | None = None
        for key, item in fmt.items():
            if key == "regex":
                regex = read_str(item, join_path(path, key))
        if regex is None:
            raise missing_field("regex", path)
        return RegexFormat(regex)
    schema_format: JsonSchemaFormat | None = None
    for key, item in fmt.items():
        if key == "json_schema":
            schema_format = _read_json_schema(item, join_path(path, key))
    if schema_format is None:
        raise missing_field("json_schema", path)
    return schema_format


def _read_json_schema(value: Any, path: str) -> JsonSchemaFormat:
    body = read_map(value, "struct ChatCompletionResponseFormatJsonSchema", path, fields=3)
    fields: dict[str, Any] = {}
    has_schema = False
    for key, item in body.items():
        where = join_path(path, key)
        if key == "schema":
            fields["schema"] = item
            has_schema = True
        elif key == "name" and item is not None:
            # ``description`` is not read by the reference (any value passes); it is not used either.
            fields[key] = read_str(item, where)
        elif key == "strict" and item is not None:
            fields[key] = read_bool(item, where)
    if not has_schema:
        raise missing_field("schema", path)
    return JsonSchemaFormat(**fields)


def _read_stop(value: Any, path: str) -> tuple[tuple[str, ...], bool]:
    if isinstance(value, str):
        return (value,), False
    if isinstance(value, (list, tuple)):
        return tuple(read_str(item, f"{path}[{i}]") for i, item in enumerate(value)), True
    fail("expected a string or a list", path)


def _read_stream_options(value: Any, path: str) -> bool:
    options = read_map(value, "struct ChatCompletionStreamOptions", path, fields=1)
    include_usage = False
    for key, item in options.items():
        if key == "include_usage" and item is not None:
            include_usage = read_bool(item, join_path(path, key))
    return include_usage


def _read_thinking(value: Any, path: str) -> ThinkingSwitch:
    thinking = read_map(value, "struct ChatCompletionThinking", path, fields=2)
    switch: str | None = None
    for key, item in thinking.items():
        where = join_path(path, key)
        if key == "type":
            switch = read_unit_enum(item, THINKING_VARIANTS, where)
        elif key == "budget_tokens" and item is not None:
            # Read for its type only: the budget never matters (spec §1.3).
            read_uint(item, 64, where)
    if switch is None:
        raise missing_field("type", path)
    return cast(ThinkingSwitch, switch)


def read_request(body: Any) -> ChatCompletionRequest:
    """Read a parsed JSON body into a :class:`ChatCompletionRequest`.

    Raises:
        WireError: a field has the wrong JSON type, an enum value is unknown, or a required field is missing.
    """
    request = read_map(body, "struct ChatCompletionRequest", None, fields=20)
    fields: dict[str, Any] = {}
    for key, item in request.items():
        if key == "model":
            fields["model"] = read_str(item, key)
        elif key == "messages":
            fields["messages"] = tuple(
                _read_message(m, f"messages[{i}]") for i, m in enumerate(read_list(item, key))
            )
        elif item is None:
            continue
        elif key in ("stream", "logprobs", "parallel_tool_calls"):
            fields[key] = read_bool(item, key)
        elif key == "stream_options":
            fields["stream_options"] = True
            fields["include_usage"] = _read_stream_options(item, key)
        elif key in ("max_tokens", "max_completion_tokens"):
            fields[key] = read_uint(item, 32, key)
        elif key in ("n", "top_logprobs"):
            fields[key] = read_uint(item, 8, key)
        elif key == "seed":
            fields[key] = read_uint(item, 64, key)
        elif key in ("temperature", "top_p", "presence_penalty", "frequency_penalty"):
            fields[key] = read_f32(item, key)
        elif key == "stop":
            fields["stop"], fields["stop_is_list"] = _read_stop(item, key)
        elif key == "tools":
            fields[key] = tuple(_read_tool(t, f"tools[{i}]") for i, t in enumerate(read_list(item, key)))
        elif key == "tool_choice":
            fields[key] = _read_tool_choice(item, key)
        elif key == "response_format":
            fields[key] = _read_response_format(item, key)
        elif key == "thinking":
            fields[key] = _read_thinking(item, key)
        elif key == "reasoning_effort":
            fields[key] = read_unit_enum(item, EFFORT_VARIANTS, key)
    # serde reports missing fields after reading the others, in declaration order.
    for required in ("messages", "model"):
        if required not in fields:
            raise missing_field(required, None)
    return ChatCompletionRequest(**fields)
