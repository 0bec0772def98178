"""Anthropic Messages request wire types and their typed reading (behavior.md#messages).

:func:`read_request` turns a parsed JSON body into slotted dataclasses, checking JSON types only; the rules of
the protocol (roles of blocks, tool pairing, images, tools…) belong to
:mod:`dscodec.protocols.anthropic_messages.inbound`. Field names are the protocol's own. Each JSON object is
one table of :mod:`dscodec.protocols._reader`, which reads it with the reference's serde rules; unknown fields
(``cache_control``, ``citations``, ``top_k``…) are ignored whatever their type. Objects sent as arrays and enum
tags sent as integers (serde's positional and index forms, which the reference accepts in places) are refused:
no client sends them.

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
from dscodec.protocols._wire_structs import NamedToolChoice, thinking_struct

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


# -- content blocks: each type, then the table that reads it (see :mod:`dscodec.protocols._reader`) ------------


@dataclass(slots=True)
class Base64Source:
    media_type: MediaType
    data: str


@dataclass(slots=True)
class UrlSource:
    url: str


@dataclass(slots=True)
class FileSource:
    file_id: str


ImageSource = Base64Source | UrlSource | FileSource
_IMAGE_SOURCE: r.Tagged[ImageSource] = r.Tagged(
    "type",
    "internally tagged enum MessagesImageSource",
    {
        "base64": r.Struct(
            Base64Source, r.required("media_type", r.unit_enum(_MEDIA_TYPES)), r.required("data", r.read_str)
        ),
        "url": r.Struct(UrlSource, r.required("url", r.read_str)),
        "file": r.Struct(FileSource, r.required("file_id", r.read_str)),
    },
)


@dataclass(slots=True)
class TextBlock:
    text: str


_TEXT = r.Struct(TextBlock, r.required("text", r.read_str))


@dataclass(slots=True)
class ImageBlock:
    source: ImageSource


_IMAGE = r.Struct(ImageBlock, r.required("source", _IMAGE_SOURCE.read))


@dataclass(slots=True)
class DocumentBlock:
    """A document. Only the declared ``source.media_type`` matters: documents are not read (behavior.md#messages)."""

    media_type: str | None = None


# The source is a struct whose only read field is ``media_type``; whatever else it holds (``type``, ``data``,
# ``url``, nested ``content``…) is ignored, since documents only become a placeholder text.
_DOCUMENT_SOURCE = r.Struct(
    lambda media_type=None: media_type,
    r.optional("media_type", r.read_str),
    expected="struct MessagesDocumentSource",
    size=1,
)
_DOCUMENT = r.Struct(DocumentBlock, r.required("source", _DOCUMENT_SOURCE.read, into="media_type"))


@dataclass(slots=True)
class ThinkingBlock:
    thinking: str


# The signature is read for its type only: it cannot be checked here and is not needed.
_THINKING_BLOCK = r.Struct(
    ThinkingBlock, r.required("thinking", r.read_str), r.checked("signature", r.read_str)
)


#: What a tool use block names: its ``id`` and the tool's ``name`` (client and server tool uses alike).
_ID_AND_NAME = (r.required("id", r.read_str), r.required("name", r.read_str))


@dataclass(slots=True)
class ToolUseBlock:
    id: str
    name: str
    #: The tool input as sent (any JSON value).
    input: Any


@dataclass(slots=True)
class ToolReferenceBlock:
    tool_name: str


ToolResultPart = TextBlock | ImageBlock | DocumentBlock | ToolReferenceBlock
_RESULT_PART: r.Tagged[ToolResultPart] = r.Tagged(
    "type",
    "internally tagged enum MessagesToolResultBlock",
    {
        "text": _TEXT,
        "image": _IMAGE,
        "document": _DOCUMENT,
        "tool_reference": r.Struct(ToolReferenceBlock, r.required("tool_name", r.read_str)),
    },
)


@dataclass(slots=True)
class ToolResultBlock:
    tool_use_id: str
    #: A string, a tuple of parts, or ``None`` when absent or ``null``.
    content: str | tuple[ToolResultPart, ...] | None = None
    is_error: bool | None = None


_TOOL_RESULT = r.Struct(
    ToolResultBlock,
    r.required("tool_use_id", r.read_str),
    r.optional("content", r.str_or_list(_RESULT_PART.read, "expected a string or a list")),
    r.optional("is_error", r.read_bool),
)


@dataclass(slots=True)
class WebSearchToolResultBlock:
    tool_use_id: str


_WEB_SEARCH_RESULT = r.Struct(
    WebSearchToolResultBlock, r.required("tool_use_id", r.read_str), r.checked("content", required=True)
)


@dataclass(slots=True)
class ServerToolUseBlock:
    id: str
    name: str


_SERVER_TOOL_USE = r.Struct(ServerToolUseBlock, *_ID_AND_NAME, r.checked("input", required=True))


@dataclass(slots=True)
class ToolAdditionBlock:
    """``{"type": "tool_addition", "tool": {"type": "tool_reference", "name": …}}``."""

    name: str


_TOOL_REFERENCE: r.Tagged[str] = r.Tagged(
    "type",
    "internally tagged enum MessagesToolReference",
    {"tool_reference": r.Struct(lambda name: name, r.required("name", r.read_str))},
)

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
_BLOCK: r.Tagged[Block] = r.Tagged(
    "type",
    "internally tagged enum MessagesContentBlock",
    {
        "text": _TEXT,
        "image": _IMAGE,
        "document": _DOCUMENT,
        "thinking": _THINKING_BLOCK,
        "server_tool_use": _SERVER_TOOL_USE,
        "tool_use": r.Struct(ToolUseBlock, *_ID_AND_NAME, r.required("input")),
        "tool_result": _TOOL_RESULT,
        "web_search_tool_result": _WEB_SEARCH_RESULT,
        "tool_addition": r.Struct(ToolAdditionBlock, r.required("tool", _TOOL_REFERENCE.read, into="name")),
    },
)
_read_content = r.str_or_list(_BLOCK.read, "expected a string or a list")


@dataclass(slots=True)
class Message:
    role: Role
    content: Content


def _read_message(value: Any, path: str) -> Message:
    # An adjacently tagged enum: ``role`` is the tag, ``content`` the payload. The tag is read first, wherever
    # it is in the object (serde buffers a payload that comes before its tag).
    if isinstance(value, list) and not value:  # serde's positional form, with no tag
        r.fail("invalid length 0, expected adjacently tagged enum MessagesMessage", path)
    message = r.read_map(value, "adjacently tagged enum MessagesMessage", path)
    if "role" not in message:
        raise r.missing_field("role", path)
    role = r.read_unit_enum(message["role"], _ROLES, r.join_path(path, "role"))
    if "content" not in message:
        raise r.missing_field("content", path)
    content = _read_content(message["content"], r.join_path(path, "content"))
    return Message(role=cast(Role, role), content=content)


_SYSTEM_BLOCK: r.Tagged[str] = r.Tagged(
    "type",
    "internally tagged enum MessagesSystemBlock",
    {"text": r.Struct(lambda text: text, r.required("text", r.read_str))},
)


# -- tools -----------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class FunctionTool:
    """A client tool (no ``type`` field)."""

    name: str
    description: str | None = None
    #: The schema as sent; ``None`` when absent or ``null``.
    input_schema: Any = None
    defer_loading: bool | None = None


_CLIENT_TOOL = r.Struct(
    FunctionTool,
    r.required("name", r.read_str),
    r.optional("description", r.read_str),
    r.optional("input_schema"),
    r.optional("defer_loading", r.read_bool),
)


@dataclass(slots=True)
class ServerTool:
    """A tool with a ``type`` field: an Anthropic server tool (``web_search_20250305``, ``bash_…``, ``custom``…)."""

    type: str
    name: str | None = None


Tool = FunctionTool | ServerTool


def _read_tool(value: Any, path: str) -> Tool:
    # A tool is read in two steps: an optional ``type`` (present on every server tool) and an optional ``name``;
    # a tool without a type is then read as a client tool, whose field errors name the field.
    tool: Mapping[str, Any] = value if isinstance(value, Mapping) else {}
    tool_type: str | None = None
    if "type" in tool:
        tool_type = r.read_str(tool["type"], r.join_path(path, "type"))
    if tool_type is not None:
        name = tool.get("name")
        return ServerTool(
            type=tool_type, name=None if name is None else r.read_str(name, r.join_path(path, "name"))
        )
    if "name" not in tool:
        raise r.missing_field("name", path)
    try:
        return _CLIENT_TOOL.read_fields(tool, path)
    except r.WireError as exc:
        # The client tool's fields are flat: the error's path is ``<path>.<field>``.
        key = (exc.path or "").removeprefix(f"{path}.")
        raise r.WireError(f"field `{key}`: {exc.detail}", exc.path) from None


ToolChoice = Literal["auto", "any", "none"] | NamedToolChoice
# Read for its type only: parallel tool use cannot be switched off (behavior.md#messages).
_DISABLE_PARALLEL = r.checked("disable_parallel_tool_use", r.read_bool)
_TOOL_CHOICE: r.Tagged[ToolChoice] = r.Tagged(
    "type",
    "internally tagged enum MessagesToolChoice",
    {
        "auto": r.constant("auto", _DISABLE_PARALLEL),
        "any": r.constant("any", _DISABLE_PARALLEL),
        "tool": r.Struct(NamedToolChoice, _DISABLE_PARALLEL, r.required("name", r.read_str)),
        "none": r.constant("none"),
    },
)
# -- the request -------------------------------------------------------------------------------------------------


@dataclass(slots=True)
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


_THINKING = thinking_struct("struct MessagesThinking")
_METADATA = r.Struct(
    lambda: None, r.checked("user_id", r.read_str), expected="struct MessagesMetadata", size=1
)
_OUTPUT_CONFIG = r.Struct(
    lambda effort=None: effort,
    r.optional("effort", r.unit_enum(EFFORT_VARIANTS)),
    expected="struct MessagesOutputConfig",
    size=1,
)
# serde reports missing fields after reading the others, in declaration order: ``model`` before ``messages``.
_REQUEST = r.Struct(
    MessagesRequest,
    r.required("model", r.read_str),
    r.required("messages", r.list_of(_read_message)),
    r.optional("system", r.str_or_list(_SYSTEM_BLOCK.read, "expected a string or a list")),
    r.optional("stream", r.read_bool),
    r.optional("max_tokens", r.uint(32)),
    r.optional("temperature", r.read_f32),
    r.optional("top_p", r.read_f32),
    r.optional("stop_sequences", r.list_of(r.read_str)),
    r.optional("tools", r.list_of(_read_tool)),
    r.optional("tool_choice", _TOOL_CHOICE.read),
    r.optional("thinking", _THINKING.read),
    r.checked("metadata", _METADATA.read),
    r.optional("output_config", _OUTPUT_CONFIG.read, into="effort"),
    expected="struct MessagesRequest",
    size=13,
)


def read_request(body: Any) -> MessagesRequest:
    """Read a parsed JSON body; ``WireError``: a wrong JSON type, an unknown enum value or a missing field."""
    return _REQUEST.read(body, None)
