"""Anthropic Messages request wire types and their typed reading (spec §2.3).

:func:`read_request` turns a parsed JSON body into frozen dataclasses, checking JSON types only; the rules of
the protocol (roles of blocks, tool pairing, images, tools…) belong to
:mod:`dscodec.protocols.anthropic_messages.inbound`. Field names are the protocol's own. Reading follows the
reference's serde model, as the Chat Completions reader does: fields are read in document order (the first
malformed one is reported), missing required fields are reported after that, ``null`` counts as absent for
optional fields, and unknown fields (``cache_control``, ``citations``, ``top_k``…) are ignored whatever their
type. Objects sent as arrays and enum tags sent as integers (serde's positional and index forms, which the
reference accepts in places) are refused: no client sends them.
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
    "Base64Source",
    "Block",
    "Content",
    "DocumentBlock",
    "FileSource",
    "FunctionTool",
    "ImageBlock",
    "ImageSource",
    "MediaType",
    "Message",
    "MessagesRequest",
    "NamedToolChoice",
    "Role",
    "ServerTool",
    "ServerToolUseBlock",
    "TextBlock",
    "ThinkingBlock",
    "Tool",
    "ToolAdditionBlock",
    "ToolChoice",
    "ToolReferenceBlock",
    "ToolResultBlock",
    "ToolResultPart",
    "ToolUseBlock",
    "UrlSource",
    "WebSearchToolResultBlock",
    "read_request",
]

Role = Literal["user", "assistant", "system"]
MediaType = Literal["image/jpeg", "image/jpg", "image/png", "image/gif", "image/webp"]

_ROLES: tuple[str, ...] = ("user", "assistant", "system")
_BLOCK_TYPES: tuple[str, ...] = (
    "text",
    "image",
    "document",
    "thinking",
    "server_tool_use",
    "tool_use",
    "tool_result",
    "web_search_tool_result",
    "tool_addition",
)
_RESULT_BLOCK_TYPES: tuple[str, ...] = ("text", "image", "document", "tool_reference")
_SOURCE_TYPES: tuple[str, ...] = ("base64", "url", "file")
_MEDIA_TYPES: tuple[str, ...] = ("image/jpeg", "image/jpg", "image/png", "image/gif", "image/webp")
_TOOL_CHOICE_TYPES: tuple[str, ...] = ("auto", "any", "tool", "none")


# -- content blocks ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Base64Source:
    media_type: MediaType
    data: str


@dataclass(frozen=True, slots=True)
class UrlSource:
    url: str


@dataclass(frozen=True, slots=True)
class FileSource:
    file_id: str


ImageSource = Base64Source | UrlSource | FileSource


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True)
class ImageBlock:
    source: ImageSource


@dataclass(frozen=True, slots=True)
class DocumentBlock:
    """A document. Only the declared ``source.media_type`` matters: documents are not read (spec §2.3)."""

    media_type: str | None = None


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    thinking: str


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    id: str
    name: str
    #: The tool input as sent (any JSON value).
    input: Any


@dataclass(frozen=True, slots=True)
class ToolReferenceBlock:
    tool_name: str


ToolResultPart = TextBlock | ImageBlock | DocumentBlock | ToolReferenceBlock


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_use_id: str
    #: A string, a tuple of parts, or ``None`` when absent or ``null``.
    content: str | tuple[ToolResultPart, ...] | None = None
    is_error: bool | None = None


@dataclass(frozen=True, slots=True)
class ServerToolUseBlock:
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class WebSearchToolResultBlock:
    tool_use_id: str


@dataclass(frozen=True, slots=True)
class ToolAdditionBlock:
    """``{"type": "tool_addition", "tool": {"type": "tool_reference", "name": …}}``."""

    name: str


Block = (
    TextBlock
    | ImageBlock
    | DocumentBlock
    | ThinkingBlock
    | ServerToolUseBlock
    | ToolUseBlock
    | ToolResultBlock
    | WebSearchToolResultBlock
    | ToolAdditionBlock
)
#: Message content: a plain string or a list of blocks.
Content = str | tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: Content


# -- tools ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FunctionTool:
    """A client tool (no ``type`` field)."""

    name: str
    description: str | None = None
    #: The schema as sent; ``None`` when absent or ``null``.
    input_schema: Any = None
    defer_loading: bool | None = None


@dataclass(frozen=True, slots=True)
class ServerTool:
    """A tool with a ``type`` field: an Anthropic server tool (``web_search_20250305``, ``bash_…``, ``custom``…)."""

    type: str
    name: str | None = None


Tool = FunctionTool | ServerTool


@dataclass(frozen=True, slots=True)
class NamedToolChoice:
    name: str


ToolChoice = Literal["auto", "any", "none"] | NamedToolChoice


@dataclass(frozen=True, slots=True)
class MessagesRequest:
    """A Messages request body with every recognised field typed (``None`` = absent or null)."""

    model: str
    messages: tuple[Message, ...]
    #: ``system`` as a string or as its text blocks.
    system: str | tuple[str, ...] | None = None
    max_tokens: int | None = None
    stream: bool | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop_sequences: tuple[str, ...] | None = None
    tools: tuple[Tool, ...] | None = None
    tool_choice: ToolChoice | None = None
    thinking: ThinkingSwitch | None = None
    effort: EffortInput | None = None


# ---------------------------------------------------------------------------------------------------------------


def _read_content(value: Any, path: str) -> Content:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_read_block(item, f"{path}[{i}]") for i, item in enumerate(value))
    fail("expected a string or a list", path)


def _read_fields(block: Mapping[str, Any], path: str, strings: tuple[str, ...]) -> dict[str, str]:
    """The string fields ``strings`` of a block (``null`` is refused, as serde does for ``String``)."""
    out: dict[str, str] = {}
    for key, item in block.items():
        if key in strings:
            out[key] = read_str(item, join_path(path, key))
    for key in strings:
        if key not in out:
            raise missing_field(key, path)
    return out


def _read_block(value: Any, path: str) -> Block:
    block = read_tagged_map(value, "type", _BLOCK_TYPES, "internally tagged enum MessagesContentBlock", path)
    kind = read_tag(block, "type", _BLOCK_TYPES, join_path(path, "type"))
    if kind == "text":
        return TextBlock(_read_fields(block, path, ("text",))["text"])
    if kind == "image":
        return _read_image(block, path)
    if kind == "document":
        return _read_document(block, path)
    if kind == "thinking":
        thinking: str | None = None
        for key, item in block.items():
            if key == "thinking":
                thinking = read_str(item, join_path(path, key))
            elif key == "signature" and item is not None:
                # Read for its type only: signatures cannot be checked here and are not needed.
                read_str(item, join_path(path, key))
        if thinking is None:
            raise missing_field("thinking", path)
        return ThinkingBlock(thinking)
    if kind in ("tool_use", "server_tool_use"):
        fields = _read_fields(block, path, ("id", "name"))
        if "input" not in block:
            raise missing_field("input", path)
        if kind == "server_tool_use":
            return ServerToolUseBlock(id=fields["id"], name=fields["name"])
        return ToolUseBlock(id=fields["id"], name=fields["name"], input=block["input"])
    if kind == "tool_result":
        return _read_tool_result(block, path)
    if kind == "web_search_tool_result":
        fields = _read_fields(block, path, ("tool_use_id",))
        if "content" not in block:
            raise missing_field("content", path)
        return WebSearchToolResultBlock(tool_use_id=fields["tool_use_id"])
    name: str | None = None
    for key, item in block.items():
        if key == "tool":
            name = _read_tool_reference(item, join_path(path, key))
    if name is None:
        raise missing_field("tool", path)
    return ToolAdditionBlock(name)


def _read_tool_reference(value: Any, path: str) -> str:
    reference = read_tagged_map(
        value, "type", ("tool_reference",), "internally tagged enum MessagesToolReference", path
    )
    read_tag(reference, "type", ("tool_reference",), join_path(path, "type"))
    return _read_fields(reference, path, ("name",))["name"]


def _read_image(block: Mapping[str, Any], path: str) -> ImageBlock:
    source: ImageSource | None = None
    for key, item in block.items():
        if key == "source":
            source = _read_image_source(item, join_path(path, key))
    if source is None:
        raise missing_field("source", path)
    return ImageBlock(source)


def _read_image_source(value: Any, path: str) -> ImageSource:
    source = read_tagged_map(value, "type", _SOURCE_TYPES, "internally tagged enum MessagesImageSource", path)
    kind = read_tag(source, "type", _SOURCE_TYPES, join_path(path, "type"))
    if kind == "url":
        return UrlSource(_read_fields(source, path, ("url",))["url"])
    if kind == "file":
        return FileSource(_read_fields(source, path, ("file_id",))["file_id"])
    media_type: str | None = None
    data: str | None = None
    for key, item in source.items():
        if key == "media_type":
            media_type = read_unit_enum(item, _MEDIA_TYPES, join_path(path, key))
        elif key == "data":
            data = read_str(item, join_path(path, key))
    if media_type is None:
        raise missing_field("media_type", path)
    if data is None:
        raise missing_field("data", path)
    return Base64Source(media_type=cast(MediaType, media_type), data=data)


def _read_document(block: Mapping[str, Any], path: str) -> DocumentBlock:
    # The source is a struct whose only read field is ``media_type``; whatever else it holds (``type``, ``data``,
    # ``url``, nested ``content``…) is ignored, since documents only become a placeholder text.
    media_type: str | None = None
    has_source = False
    for key, item in block.items():
        if key == "source":
            where = join_path(path, key)
            source = read_map(item, "struct MessagesDocumentSource", where, fields=1)
            has_source = True
            for source_key, source_item in source.items():
                if source_key == "media_type" and source_item is not None:
                    media_type = read_str(source_item, join_path(where, source_key))
    if not has_source:
        raise missing_field("source", path)
    return DocumentBlock(media_type)


def _read_tool_result(block: Mapping[str, Any], path: str) -> ToolResultBlock:
    tool_use_id: str | None = None
    content: str | tuple[ToolResultPart, ...] | None = None
    is_error: bool | None = None
    for key, item in block.items():
        where = join_path(path, key)
        if key == "tool_use_id":
            tool_use_id = read_str(item, where)
        elif key == "content" and item is not None:
            if isinstance(item, str):
                content = item
            elif isinstance(item, (list, tuple)):
                content = tuple(_read_result_part(part, f"{where}[{i}]") for i, part in enumerate(item))
            else:
                fail("expected a string or a list", where)
        elif key == "is_error" and item is not None:
            is_error = read_bool(item, where)
    if tool_use_id is None:
        raise missing_field("tool_use_id", path)
    return ToolResultBlock(tool_use_id=tool_use_id, content=content, is_error=is_error)


def _read_result_part(value: Any, path: str) -> ToolResultPart:
    part = read_tagged_map(
        value, "type", _RESULT_BLOCK_TYPES, "internally tagged enum MessagesToolResultBlock", path
    )
    kind = read_tag(part, "type", _RESULT_BLOCK_TYPES, join_path(path, "type"))
    if kind == "text":
        return TextBlock(_read_fields(part, path, ("text",))["text"])
    if kind == "image":
        return _read_image(part, path)
    if kind == "document":
        return _read_document(part, path)
    return ToolReferenceBlock(_read_fields(part, path, ("tool_name",))["tool_name"])


def _read_message(value: Any, path: str) -> Message:
    # An adjacently tagged enum: ``role`` is the tag, ``content`` the payload. The tag is read first, wherever
    # it is in the object (serde buffers a payload that comes before its tag).
    message = read_map(value, "adjacently tagged enum MessagesMessage", path)
    if "role" not in message:
        raise missing_field("role", path)
    role = read_unit_enum(message["role"], _ROLES, join_path(path, "role"))
    if "content" not in message:
        raise missing_field("content", path)
    content = _read_content(message["content"], join_path(path, "content"))
    return Message(role=cast(Role, role), content=content)


def _read_system(value: Any, path: str) -> str | tuple[str, ...]:
    if isinstance(value, str):
        return value
    if not isinstance(value, (list, tuple)):
        fail("expected a string or a list", path)
    texts: list[str] = []
    for index, item in enumerate(value):
        where = f"{path}[{index}]"
        block = read_tagged_map(item, "type", ("text",), "internally tagged enum MessagesSystemBlock", where)
        read_tag(block, "type", ("text",), join_path(where, "type"))
        texts.append(_read_fields(block, where, ("text",))["text"])
    return tuple(texts)


def _read_tool(value: Any, path: str) -> Tool:
    # A tool is read in two steps: an optional ``type`` (present on every server tool) and an optional ``name``;
    # a tool without a type is then read as a client tool, whose field errors name the field.
    tool: Mapping[str, Any] = value if isinstance(value, Mapping) else {}
    tool_type: str | None = None
    if "type" in tool:
        tool_type = read_str(tool["type"], join_path(path, "type"))
    if tool_type is not None:
        name = tool.get("name")
        return ServerTool(
            type=tool_type, name=None if name is None else read_str(name, join_path(path, "name"))
        )
    if "name" not in tool:
        raise missing_field("name", path)
    fields: dict[str, Any] = {}
    for key, item in tool.items():
        where = join_path(path, key)
        try:
            if key == "name":
                fields["name"] = read_str(item, where)
            elif key == "description" and item is not None:
                fields["description"] = read_str(item, where)
            elif key == "input_schema":
                fields["input_schema"] = item
            elif key == "defer_loading" and item is not None:
                fields["defer_loading"] = read_bool(item, where)
        except WireError as exc:
            raise WireError(f"field `{key}`: {exc.detail}", exc.path) from None
    return FunctionTool(**fields)


def _read_tool_choice(value: Any, path: str) -> ToolChoice:
    choice = read_tagged_map(
        value, "type", _TOOL_CHOICE_TYPES, "internally tagged enum MessagesToolChoice", path
    )
    kind = read_tag(choice, "type", _TOOL_CHOICE_TYPES, join_path(path, "type"))
    name: str | None = None
    for key, item in choice.items():
        where = join_path(path, key)
        if key == "disable_parallel_tool_use" and kind != "none" and item is not None:
            # Read for its type only: parallel tool use cannot be switched off (spec §2.3).
            read_bool(item, where)
        elif key == "name" and kind == "tool":
            name = read_str(item, where)
    if kind != "tool":
        return cast(ToolChoice, kind)
    if name is None:
        raise missing_field("name", path)
    return NamedToolChoice(name)


def _read_thinking(value: Any, path: str) -> ThinkingSwitch:
    thinking = read_map(value, "struct MessagesThinking", path, fields=2)
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


def _read_metadata(value: Any, path: str) -> None:
    metadata = read_map(value, "struct MessagesMetadata", path, fields=1)
    for key, item in metadata.items():
        if key == "user_id" and item is not None:
            read_str(item, join_path(path, key))


def _read_output_config(value: Any, path: str) -> EffortInput | None:
    config = read_map(value, "struct MessagesOutputConfig", path, fields=1)
    effort: EffortInput | None = None
    for key, item in config.items():
        if key == "effort" and item is not None:
            effort = cast(EffortInput, read_unit_enum(item, EFFORT_VARIANTS, join_path(path, key)))
    return effort


def read_request(body: Any) -> MessagesRequest:
    """Read a parsed JSON body into a :class:`MessagesRequest`.

    Raises:
        WireError: a field has the wrong JSON type, an enum value is unknown, or a required field is missing.
    """
    request = read_map(body, "struct MessagesRequest", None, fields=13)
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
        elif key == "system":
            fields[key] = _read_system(item, key)
        elif key == "stream":
            fields[key] = read_bool(item, key)
        elif key == "max_tokens":
            fields[key] = read_uint(item, 32, key)
        elif key in ("temperature", "top_p"):
            fields[key] = read_f32(item, key)
        elif key == "stop_sequences":
            fields[key] = tuple(read_str(s, f"{key}[{i}]") for i, s in enumerate(read_list(item, key)))
        elif key == "tools":
            fields[key] = tuple(_read_tool(t, f"tools[{i}]") for i, t in enumerate(read_list(item, key)))
        elif key == "tool_choice":
            fields[key] = _read_tool_choice(item, key)
        elif key == "thinking":
            fields[key] = _read_thinking(item, key)
        elif key == "metadata":
            _read_metadata(item, key)
        elif key == "output_config":
            fields["effort"] = _read_output_config(item, key)
    # serde reports missing fields after reading the others, in declaration order.
    for required in ("model", "messages"):
        if required not in fields:
            raise missing_field(required, None)
    return MessagesRequest(**fields)
