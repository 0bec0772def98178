"""OpenAI Responses request wire types and their typed reading (spec §2.2).

:func:`read_request` turns a parsed JSON body into frozen dataclasses, checking JSON types only; the protocol's
rules (pairing of calls and outputs, tool names, images…) belong to
:mod:`dscodec.protocols.openai_responses.inbound`. Field names are the protocol's own. Reading follows the
reference's serde model, as the Chat Completions reader does: fields are read in document order (the first
malformed one is reported), missing required fields are reported after that, ``null`` counts as absent for
optional fields, and unknown fields are ignored.

Two kinds of entries are read loosely on purpose, as the reference reads them: tools of a type the protocol
defines but dscodec does not serve (``file_search``, ``mcp``, ``web_search_preview``…) become
:class:`HostedTool` (their fields are not looked at), and input items of an unknown ``type`` become
:class:`UnknownItem`, which the converter refuses (deviation D9).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from dscodec.protocols._shared import (
    EFFORT_VARIANTS,
    EffortInput,
    fail,
    invalid_type,
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
    "Content",
    "ContentPart",
    "CustomTool",
    "CustomToolCallItem",
    "CustomToolCallOutputItem",
    "Detail",
    "FilePart",
    "FunctionCallItem",
    "FunctionCallOutputItem",
    "FunctionTool",
    "HostedTool",
    "ImagePart",
    "InputItem",
    "ItemReference",
    "JsonSchemaFormat",
    "MessageItem",
    "NamedToolChoice",
    "NamespaceTool",
    "ReasoningConfig",
    "ReasoningItem",
    "ResponsesRequest",
    "Role",
    "TextConfig",
    "TextFormat",
    "TextPart",
    "Tool",
    "ToolChoice",
    "UnknownItem",
    "UserLocation",
    "WebSearchChoice",
    "WebSearchTool",
    "read_request",
]

Detail = Literal["low", "high", "original", "auto"]
Role = Literal["user", "assistant", "system", "developer"]

_DETAILS: tuple[str, ...] = ("low", "high", "original", "auto")
_ROLES: tuple[str, ...] = ("user", "assistant", "system", "developer")
_MESSAGE_PARTS: tuple[str, ...] = ("input_text", "output_text", "input_image", "input_file")
_OUTPUT_PARTS: tuple[str, ...] = ("input_text", "input_image", "input_file")
_FORMAT_TYPES: tuple[str, ...] = ("text", "json_schema", "json_object")
_NAMESPACE_TOOL_TYPES: tuple[str, ...] = ("function", "custom")
_TOOL_CHOICE_TYPES: tuple[str, ...] = ("function", "web_search", "web_search_2025_08_26", "custom")
_CONTEXT_SIZES: tuple[str, ...] = ("low", "medium", "high")
_SUMMARIES: tuple[str, ...] = ("auto", "concise", "detailed")
_VERBOSITIES: tuple[str, ...] = ("low", "medium", "high")
#: Web search tool types the reference knows; other hosted tools (including ``web_search_preview``) are not.
WEB_SEARCH_TYPES: tuple[str, ...] = ("web_search", "web_search_2025_08_26")


# -- content ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextPart:
    """``input_text`` or ``output_text`` (both are text; ``annotations`` and ``logprobs`` are not read)."""

    text: str


@dataclass(frozen=True, slots=True)
class ImagePart:
    """``input_image``: an image URL (http(s) or data URL) or a file id, checked by the converter."""

    image_url: str | None = None
    file_id: str | None = None
    detail: Detail = "high"


@dataclass(frozen=True, slots=True)
class FilePart:
    """``input_file``: always rendered as a placeholder text; its fields are not read."""


ContentPart = TextPart | ImagePart | FilePart
#: Message or tool-output content: a plain string or a list of parts.
Content = str | tuple[ContentPart, ...]


# -- input items -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessageItem:
    """``{"role", "content"}``, with or without ``"type": "message"``."""

    role: Role
    content: Content


@dataclass(frozen=True, slots=True)
class FunctionCallItem:
    call_id: str
    name: str
    arguments: str
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class FunctionCallOutputItem:
    #: ``None`` when the item has no ``call_id`` (the reference keeps such an output unpaired).
    call_id: str | None
    output: Content


@dataclass(frozen=True, slots=True)
class CustomToolCallItem:
    call_id: str
    name: str
    input: str


@dataclass(frozen=True, slots=True)
class CustomToolCallOutputItem:
    call_id: str
    output: Content


@dataclass(frozen=True, slots=True)
class ReasoningItem:
    """A reasoning item: the ``text`` of every ``content`` part (their ``type`` is not read).

    ``summary`` and ``encrypted_content`` are not used (spec §2.2); ``encrypted_content`` is type-checked only.
    """

    texts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ItemReference:
    """``item_reference``: points at stored state dscodec does not have; dropped as in the reference."""


@dataclass(frozen=True, slots=True)
class UnknownItem:
    """An item whose ``type`` dscodec does not convert; refused by the converter (deviation D9)."""

    type: str


InputItem = (
    MessageItem
    | FunctionCallItem
    | FunctionCallOutputItem
    | CustomToolCallItem
    | CustomToolCallOutputItem
    | ReasoningItem
    | ItemReference
    | UnknownItem
)


# -- tools -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FunctionTool:
    name: str
    description: str | None = None
    #: The schema as sent; ``None`` when absent or ``null``.
    parameters: Any = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class CustomTool:
    """A ``custom`` (free-form input) tool; only its name is read."""

    name: str


@dataclass(frozen=True, slots=True)
class NamespaceTool:
    name: str
    tools: tuple[FunctionTool | CustomTool, ...]
    description: str | None = None


@dataclass(frozen=True, slots=True)
class UserLocation:
    city: str | None = None
    country: str | None = None
    region: str | None = None
    timezone: str | None = None


@dataclass(frozen=True, slots=True)
class WebSearchTool:
    type: str
    search_context_size: str | None = None
    user_location: UserLocation | None = None


@dataclass(frozen=True, slots=True)
class HostedTool:
    """Any other tool type (``file_search``, ``mcp``, ``web_search_preview``…): dropped by the converter."""

    type: str


Tool = FunctionTool | NamespaceTool | CustomTool | WebSearchTool | HostedTool


@dataclass(frozen=True, slots=True)
class NamedToolChoice:
    """``{"type": "function" | "custom", "name"}``: the tool is looked up by name only."""

    type: Literal["function", "custom"]
    name: str


@dataclass(frozen=True, slots=True)
class WebSearchChoice:
    type: str


ToolChoice = Literal["none", "auto", "required"] | NamedToolChoice | WebSearchChoice


# -- text and reasoning ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JsonSchemaFormat:
    name: str
    schema: Any
    description: str | None = None
    strict: bool | None = None


TextFormat = Literal["text", "json_object"] | JsonSchemaFormat


@dataclass(frozen=True, slots=True)
class TextConfig:
    format: TextFormat = "text"
    verbosity: str | None = None


@dataclass(frozen=True, slots=True)
class ReasoningConfig:
    effort: EffortInput | None = None
    summary: str | None = None
    generate_summary: str | None = None


@dataclass(frozen=True, slots=True)
class ResponsesRequest:
    """A Responses request body with every recognised field typed (``None`` = absent or null)."""

    model: str
    input: str | tuple[InputItem, ...] | None = None
    instructions: str | None = None
    stream: bool | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_logprobs: int | None = None
    reasoning: ReasoningConfig | None = None
    user: str | None = None
    tools: tuple[Tool, ...] | None = None
    tool_choice: ToolChoice | None = None
    text: TextConfig | None = None


# ---------------------------------------------------------------------------------------------------------------


def _optional_str(value: Any, path: str) -> str | None:
    return None if value is None else read_str(value, path)


def _read_content(value: Any, path: str, *, output: bool) -> Content:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_read_part(item, f"{path}[{i}]", output=output) for i, item in enumerate(value))
    if output:
        fail("output should be a string or a list of output content parts", path)
    fail("content should be a string or a list of content blocks", path)


def _read_part(value: Any, path: str, *, output: bool) -> ContentPart:
    variants = _OUTPUT_PARTS if output else _MESSAGE_PARTS
    expected = (
        "internally tagged enum ResponsesToolCallOutputItem"
        if output
        else "internally tagged enum ResponsesContentBlock"
    )
    part = read_tagged_map(value, "type", variants, expected, path)
    kind = read_tag(part, "type", variants, join_path(path, "type"))
    if kind in ("input_text", "output_text"):
        text: str | None = None
        for key, item in part.items():
            if key == "text":
                text = read_str(item, join_path(path, key))
        if text is None:
            raise missing_field("text", path)
        return TextPart(text)
    if kind == "input_file":
        return FilePart()
    image_url: str | None = None
    file_id: str | None = None
    detail: Detail = "high"
    for key, item in part.items():
        where = join_path(path, key)
        if key == "image_url":
            image_url = _optional_str(item, where)
        elif key == "file_id":
            file_id = _optional_str(item, where)
        elif key == "detail" and item is not None:
            detail = cast(Detail, read_unit_enum(item, _DETAILS, where))
    return ImagePart(image_url=image_url, file_id=file_id, detail=detail)


def _read_message(item: Mapping[str, Any], path: str) -> MessageItem:
    role: str | None = None
    content: Content | None = None
    for key, value in item.items():
        where = join_path(path, key)
        if key == "role":
            role = read_unit_enum(value, _ROLES, where)
        elif key == "content":
            content = _read_content(value, where, output=False)
    if role is None:
        raise missing_field("role", path)
    if content is None:
        raise missing_field("content", path)
    return MessageItem(role=cast(Role, role), content=content)


def _read_fields(
    item: Mapping[str, Any], path: str, strings: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, str]:
    """Read the string fields ``strings`` (required) and ``optional`` (``null`` = absent) of an item."""
    found: dict[str, str] = {}
    for key, value in item.items():
        if key in strings or key in optional and value is not None:
            found[key] = read_str(value, join_path(path, key))
    for key in strings:
        if key not in found:
            raise missing_field(key, path)
    return found


def _read_item(value: Any, path: str) -> InputItem:
    if not isinstance(value, Mapping):
        fail("invalid input item", path)
    if "type" not in value:
        # An item without a type is a message ("easy input message"), recognised by its role.
        if "role" not in value:
            fail("invalid input item", path)
        return _read_message(value, path)
    kind = value["type"]
    if not isinstance(kind, str):
        invalid_type(kind, "variant identifier", join_path(path, "type"))
    if kind == "message":
        return _read_message(value, path)
    if kind == "function_call":
        # Missing fields are reported in this order, as the reference does.
        fields = _read_fields(value, path, ("arguments", "call_id", "name"), ("namespace",))
        return FunctionCallItem(
            call_id=fields["call_id"],
            name=fields["name"],
            arguments=fields["arguments"],
            namespace=fields.get("namespace"),
        )
    if kind == "function_call_output":
        call_id: str | None = None
        output: Content | None = None
        for key, item in value.items():
            where = join_path(path, key)
            if key == "call_id" and item is not None:
                call_id = read_str(item, where)
            elif key == "output":
                output = _read_content(item, where, output=True)
        if output is None:
            raise missing_field("output", path)
        return FunctionCallOutputItem(call_id=call_id, output=output)
    if kind == "custom_tool_call":
        fields = _read_fields(value, path, ("call_id", "name", "input"))
        return CustomToolCallItem(call_id=fields["call_id"], name=fields["name"], input=fields["input"])
    if kind == "custom_tool_call_output":
        custom_id: str | None = None
        custom_output: Content | None = None
        for key, item in value.items():
            where = join_path(path, key)
            if key == "call_id":
                custom_id = read_str(item, where)
            elif key == "output" and item is not None:
                custom_output = _read_content(item, where, output=True)
        if custom_id is None:
            raise missing_field("call_id", path)
        # Unlike a function output, a custom tool's output may be left out (it is then empty).
        return CustomToolCallOutputItem(
            call_id=custom_id, output=custom_output if custom_output is not None else ""
        )
    if kind == "reasoning":
        return _read_reasoning_item(value, path)
    if kind == "item_reference":
        return ItemReference()
    return UnknownItem(kind)


def _read_reasoning_item(item: Mapping[str, Any], path: str) -> ReasoningItem:
    texts: tuple[str, ...] = ()
    for key, value in item.items():
        where = join_path(path, key)
        if key == "content" and value is not None:
            texts = tuple(
                _read_reasoning_text(part, f"{where}[{i}]") for i, part in enumerate(read_list(value, where))
            )
        elif key == "encrypted_content" and value is not None:
            read_str(value, where)
    return ReasoningItem(texts)


def _read_reasoning_text(value: Any, path: str) -> str:
    part = read_map(value, "struct ResponsesReasoningContent", path, fields=1)
    text: str | None = None
    for key, item in part.items():
        if key == "text":
            text = read_str(item, join_path(path, key))
    if text is None:
        raise missing_field("text", path)
    return text


def _read_input(value: Any, path: str) -> str | tuple[InputItem, ...]:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_read_item(item, f"{path}[{i}]") for i, item in enumerate(value))
    fail("input should be a string or a list of input items", path)


# -- tools -------------------------------------------------------------------------------------------------------


def _tool_type(value: Any, expected: str, path: str) -> tuple[Mapping[str, Any], str]:
    """The object of a tagged tool entry and its ``type`` (any string: unknown types are allowed)."""
    tool = read_map(value, expected, path)
    if "type" not in tool:
        fail("missing field `type`", path)
    kind = tool["type"]
    if not isinstance(kind, str):
        invalid_type(kind, "variant identifier", join_path(path, "type"))
    return tool, kind


def _read_function(tool: Mapping[str, Any], path: str) -> FunctionTool:
    name: str | None = None
    description: str | None = None
    parameters: Any = None
    strict: bool | None = None
    for key, item in tool.items():
        where = join_path(path, key)
        if key == "name":
            name = read_str(item, where)
        elif key == "description":
            description = _optional_str(item, where)
        elif key == "parameters":
            parameters = item
        elif key == "strict" and item is not None:
            strict = read_bool(item, where)
    if name is None:
        raise missing_field("name", path)
    return FunctionTool(name=name, description=description, parameters=parameters, strict=strict)


def _read_custom(tool: Mapping[str, Any], path: str) -> CustomTool:
    # ``description`` and ``format`` are not read: the only custom tool served has a fixed definition (§3.9).
    name: str | None = None
    for key, item in tool.items():
        if key == "name":
            name = read_str(item, join_path(path, key))
    if name is None:
        raise missing_field("name", path)
    return CustomTool(name)


def _read_namespace(tool: Mapping[str, Any], path: str) -> NamespaceTool:
    name: str | None = None
    description: str | None = None
    inner: tuple[FunctionTool | CustomTool, ...] | None = None
    for key, item in tool.items():
        where = join_path(path, key)
        if key == "name":
            name = read_str(item, where)
        elif key == "description":
            description = _optional_str(item, where)
        elif key == "tools":
            inner = tuple(
                _read_namespace_member(t, f"{where}[{i}]") for i, t in enumerate(read_list(item, where))
            )
    if name is None:
        raise missing_field("name", path)
    if inner is None:
        raise missing_field("tools", path)
    return NamespaceTool(name=name, tools=inner, description=description)


def _read_namespace_member(value: Any, path: str) -> FunctionTool | CustomTool:
    tool = read_tagged_map(
        value, "type", _NAMESPACE_TOOL_TYPES, "internally tagged enum ResponsesNamespaceTool", path
    )
    kind = tool.get("type")
    if isinstance(kind, str) and kind not in _NAMESPACE_TOOL_TYPES:
        # serde words a two-variant list "expected `a` or `b`" (``_shared.unknown_variant`` says "one of").
        fail(f"unknown variant `{kind}`, expected `function` or `custom`", join_path(path, "type"))
    kind = read_tag(tool, "type", _NAMESPACE_TOOL_TYPES, join_path(path, "type"))
    if kind == "function":
        return _read_function(tool, path)
    return _read_custom(tool, path)


def _read_user_location(value: Any, path: str) -> UserLocation:
    location = read_map(value, "struct ResponsesUserLocation", path, fields=4)
    fields: dict[str, str] = {}
    for key, item in location.items():
        if key in ("city", "country", "region", "timezone") and item is not None:
            fields[key] = read_str(item, join_path(path, key))
    return UserLocation(**fields)


def _read_web_search(tool: Mapping[str, Any], kind: str, path: str) -> WebSearchTool:
    size: str | None = None
    location: UserLocation | None = None
    for key, item in tool.items():
        where = join_path(path, key)
        if key == "search_context_size" and item is not None:
            size = read_unit_enum(item, _CONTEXT_SIZES, where)
        elif key == "user_location" and item is not None:
            location = _read_user_location(item, where)
    return WebSearchTool(type=kind, search_context_size=size, user_location=location)


def _read_tool(value: Any, path: str) -> Tool:
    tool, kind = _tool_type(value, "internally tagged enum ResponsesTool", path)
    if kind == "function":
        return _read_function(tool, path)
    if kind == "namespace":
        return _read_namespace(tool, path)
    if kind == "custom":
        return _read_custom(tool, path)
    if kind in WEB_SEARCH_TYPES:
        return _read_web_search(tool, kind, path)
    return HostedTool(kind)


_TOOL_CHOICE_ERROR = "expected one of `none`, `auto`, `required` or a tool choice object"


def _read_tool_choice(value: Any, path: str) -> ToolChoice:
    if isinstance(value, str):
        if value in ("none", "auto", "required"):
            return cast(ToolChoice, value)
        fail(_TOOL_CHOICE_ERROR, path)
    if not isinstance(value, Mapping) or "type" not in value:
        fail(_TOOL_CHOICE_ERROR, path)
    kind = read_tag(value, "type", _TOOL_CHOICE_TYPES, join_path(path, "type"))
    if kind in WEB_SEARCH_TYPES:
        return WebSearchChoice(kind)
    name: str | None = None
    for key, item in value.items():
        if key == "name":
            name = read_str(item, join_path(path, key))
    if name is None:
        raise missing_field("name", path)
    return NamedToolChoice(type=cast(Literal["function", "custom"], kind), name=name)


# -- text and reasoning --------------------------------------------------------------------------------------------


def _read_format(value: Any, path: str) -> TextFormat:
    fmt = read_tagged_map(value, "type", _FORMAT_TYPES, "internally tagged enum ResponsesTextFormat", path)
    kind = read_tag(fmt, "type", _FORMAT_TYPES, join_path(path, "type"))
    if kind in ("text", "json_object"):
        return cast(TextFormat, kind)
    name: str | None = None
    schema: Any = None
    has_schema = False
    description: str | None = None
    strict: bool | None = None
    for key, item in fmt.items():
        where = join_path(path, key)
        if key == "name":
            name = read_str(item, where)
        elif key == "schema":
            schema, has_schema = item, True
        elif key == "description":
            description = _optional_str(item, where)
        elif key == "strict" and item is not None:
            strict = read_bool(item, where)
    if name is None:
        raise missing_field("name", path)
    if not has_schema:
        raise missing_field("schema", path)
    return JsonSchemaFormat(name=name, schema=schema, description=description, strict=strict)


def _read_text(value: Any, path: str) -> TextConfig:
    config = read_map(value, "struct ResponsesTextConfig", path, fields=2)
    fmt: TextFormat = "text"
    verbosity: str | None = None
    for key, item in config.items():
        where = join_path(path, key)
        if key == "format":
            fmt = _read_format(item, where)
        elif key == "verbosity" and item is not None:
            verbosity = read_unit_enum(item, _VERBOSITIES, where)
    return TextConfig(format=fmt, verbosity=verbosity)


def _read_reasoning(value: Any, path: str) -> ReasoningConfig:
    config = read_map(value, "struct ResponsesReasoningConfig", path, fields=3)
    fields: dict[str, str] = {}
    for key, item in config.items():
        where = join_path(path, key)
        if item is None:
            continue
        if key == "effort":
            fields[key] = read_unit_enum(item, EFFORT_VARIANTS, where)
        elif key in ("summary", "generate_summary"):
            fields[key] = read_unit_enum(item, _SUMMARIES, where)
    return ReasoningConfig(
        effort=cast(EffortInput | None, fields.get("effort")),
        summary=fields.get("summary"),
        generate_summary=fields.get("generate_summary"),
    )


def read_request(body: Any) -> ResponsesRequest:
    """Read a parsed JSON body into a :class:`ResponsesRequest`.

    Raises:
        WireError: a field has the wrong JSON type, an enum value is unknown, or a required field is missing.
    """
    request = read_map(body, "struct ResponsesRequest", None, fields=13)
    fields: dict[str, Any] = {}
    for key, item in request.items():
        if key == "model":
            fields["model"] = read_str(item, key)
        elif item is None:
            continue
        elif key == "input":
            fields[key] = _read_input(item, key)
        elif key in ("instructions", "user"):
            fields[key] = read_str(item, key)
        elif key == "stream":
            fields[key] = read_bool(item, key)
        elif key == "max_output_tokens":
            fields[key] = read_uint(item, 32, key)
        elif key == "top_logprobs":
            fields[key] = read_uint(item, 8, key)
        elif key in ("temperature", "top_p"):
            fields[key] = read_f32(item, key)
        elif key == "reasoning":
            fields[key] = _read_reasoning(item, key)
        elif key == "tools":
            fields[key] = tuple(_read_tool(t, f"tools[{i}]") for i, t in enumerate(read_list(item, key)))
        elif key == "tool_choice":
            fields[key] = _read_tool_choice(item, key)
        elif key == "text":
            fields[key] = _read_text(item, key)
    if "model" not in fields:
        raise missing_field("model", None)
    return ResponsesRequest(**fields)
