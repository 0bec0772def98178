"""Anthropic Messages request wire types and their typed reading (behavior.md#messages).

:func:`read_request` turns a parsed JSON body into frozen dataclasses, checking JSON types only; the rules of
the protocol (roles of blocks, tool pairing, images, tools…) belong to
:mod:`dscodec.protocols.anthropic_messages.inbound`. Field names are the protocol's own. Each JSON object is
one table of :mod:`dscodec.protocols._reader`, which reads it with the reference's serde rules; unknown fields
(``cache_control``, ``citations``, ``top_k``…) are ignored whatever their type. Objects sent as arrays and enum
tags sent as integers (serde's positional and index forms, which the reference accepts in places) are refused:
no client sends them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from dscodec.protocols._body import (
    WireError,
    join_path,
    missing_field,
    read_bool,
    read_f32,
    read_map,
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
_MEDIA_TYPES: tuple[str, ...] = ("image/jpeg", "image/jpg", "image/png", "image/gif", "image/webp")


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
    """A document. Only the declared ``source.media_type`` matters: documents are not read (behavior.md#messages)."""

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


# -- reading: one table per JSON object (see :mod:`dscodec.protocols._reader` for the rules) ---------------------

_TEXT = Struct(TextBlock, required("text", read_str))
_IMAGE_SOURCE: Tagged[ImageSource] = Tagged(
    "type",
    "internally tagged enum MessagesImageSource",
    {
        "base64": Struct(
            Base64Source, required("media_type", unit_enum(_MEDIA_TYPES)), required("data", read_str)
        ),
        "url": Struct(UrlSource, required("url", read_str)),
        "file": Struct(FileSource, required("file_id", read_str)),
    },
)
_IMAGE = Struct(ImageBlock, required("source", _IMAGE_SOURCE.read))
# The source is a struct whose only read field is ``media_type``; whatever else it holds (``type``, ``data``,
# ``url``, nested ``content``…) is ignored, since documents only become a placeholder text.
_DOCUMENT_SOURCE = Struct(
    lambda media_type=None: media_type,
    optional("media_type", read_str),
    expected="struct MessagesDocumentSource",
    size=1,
)
_DOCUMENT = Struct(DocumentBlock, required("source", _DOCUMENT_SOURCE.read, into="media_type"))
_RESULT_PART: Tagged[ToolResultPart] = Tagged(
    "type",
    "internally tagged enum MessagesToolResultBlock",
    {
        "text": _TEXT,
        "image": _IMAGE,
        "document": _DOCUMENT,
        "tool_reference": Struct(ToolReferenceBlock, required("tool_name", read_str)),
    },
)
_TOOL_REFERENCE: Tagged[str] = Tagged(
    "type",
    "internally tagged enum MessagesToolReference",
    {"tool_reference": Struct(lambda name: name, required("name", read_str))},
)
_BLOCK: Tagged[Block] = Tagged(
    "type",
    "internally tagged enum MessagesContentBlock",
    {
        "text": _TEXT,
        "image": _IMAGE,
        "document": _DOCUMENT,
        # The signature is read for its type only: it cannot be checked here and is not needed.
        "thinking": Struct(ThinkingBlock, required("thinking", read_str), checked("signature", read_str)),
        "server_tool_use": Struct(
            ServerToolUseBlock,
            required("id", read_str),
            required("name", read_str),
            checked("input", required=True),
        ),
        "tool_use": Struct(
            ToolUseBlock, required("id", read_str), required("name", read_str), required("input")
        ),
        "tool_result": Struct(
            ToolResultBlock,
            required("tool_use_id", read_str),
            optional("content", str_or_list(_RESULT_PART.read, "expected a string or a list")),
            optional("is_error", read_bool),
        ),
        "web_search_tool_result": Struct(
            WebSearchToolResultBlock, required("tool_use_id", read_str), checked("content", required=True)
        ),
        "tool_addition": Struct(ToolAdditionBlock, required("tool", _TOOL_REFERENCE.read, into="name")),
    },
)
_read_content = str_or_list(_BLOCK.read, "expected a string or a list")


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


_SYSTEM_BLOCK: Tagged[str] = Tagged(
    "type",
    "internally tagged enum MessagesSystemBlock",
    {"text": Struct(lambda text: text, required("text", read_str))},
)
_CLIENT_TOOL = Struct(
    FunctionTool,
    required("name", read_str),
    optional("description", read_str),
    optional("input_schema"),
    optional("defer_loading", read_bool),
)


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
    try:
        return _CLIENT_TOOL.read_fields(tool, path)
    except WireError as exc:
        # The client tool's fields are flat: the error's path is ``<path>.<field>``.
        key = (exc.path or "").removeprefix(f"{path}.")
        raise WireError(f"field `{key}`: {exc.detail}", exc.path) from None


# Read for its type only: parallel tool use cannot be switched off (behavior.md#messages).
_DISABLE_PARALLEL = checked("disable_parallel_tool_use", read_bool)
_TOOL_CHOICE: Tagged[ToolChoice] = Tagged(
    "type",
    "internally tagged enum MessagesToolChoice",
    {
        "auto": constant("auto", _DISABLE_PARALLEL),
        "any": constant("any", _DISABLE_PARALLEL),
        "tool": Struct(NamedToolChoice, _DISABLE_PARALLEL, required("name", read_str)),
        "none": constant("none"),
    },
)
_THINKING = Struct(
    lambda type: type,
    required("type", unit_enum(THINKING_VARIANTS)),
    # Read for its type only: the budget never matters (behavior.md#thinking-and-effort).
    checked("budget_tokens", uint(64)),
    expected="struct MessagesThinking",
    size=2,
)
_METADATA = Struct(lambda: None, checked("user_id", read_str), expected="struct MessagesMetadata", size=1)
_OUTPUT_CONFIG = Struct(
    lambda effort=None: effort,
    optional("effort", unit_enum(EFFORT_VARIANTS)),
    expected="struct MessagesOutputConfig",
    size=1,
)
# serde reports missing fields after reading the others, in declaration order: ``model`` before ``messages``.
_REQUEST = Struct(
    MessagesRequest,
    required("model", read_str),
    required("messages", list_of(_read_message)),
    optional("system", str_or_list(_SYSTEM_BLOCK.read, "expected a string or a list")),
    optional("stream", read_bool),
    optional("max_tokens", uint(32)),
    optional("temperature", read_f32),
    optional("top_p", read_f32),
    optional("stop_sequences", list_of(read_str)),
    optional("tools", list_of(_read_tool)),
    optional("tool_choice", _TOOL_CHOICE.read),
    optional("thinking", _THINKING.read),
    checked("metadata", _METADATA.read),
    optional("output_config", _OUTPUT_CONFIG.read, into="effort"),
    expected="struct MessagesRequest",
    size=13,
)


def read_request(body: Any) -> MessagesRequest:
    """Read a parsed JSON body into a :class:`MessagesRequest`.

    Raises:
        WireError: a field has the wrong JSON type, an enum value is unknown, or a required field is missing.
    """
    return _REQUEST.read(body, None)
