"""OpenAI Responses request wire types and their typed reading (behavior.md#responses).

:func:`read_request` turns a parsed JSON body into frozen dataclasses, checking JSON types only; the protocol's
rules (pairing of calls and outputs, tool names, images…) belong to
:mod:`dscodec.protocols.openai_responses.inbound`. Field names are the protocol's own. Each JSON object is one
table of :mod:`dscodec.protocols._reader`, which reads it with the reference's serde rules.

Two kinds of entries are read loosely on purpose, as the reference reads them: tools of a type the protocol
defines but dscodec does not serve (``file_search``, ``mcp``, ``web_search_preview``…) become
:class:`HostedTool` (their fields are not looked at), and input items of an unknown ``type`` become
:class:`UnknownItem`, which the converter refuses (deviation D9).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from dscodec.protocols._body import (
    fail,
    invalid_type,
    join_path,
    read_bool,
    read_f32,
    read_map,
    read_str,
    read_tag,
    read_tagged_map,
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
from dscodec.protocols._sampling import EFFORT_VARIANTS, EffortInput

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

    ``summary`` and ``encrypted_content`` are not used (behavior.md#responses); ``encrypted_content`` is type-checked only.
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


# -- reading: one table per JSON object (see :mod:`dscodec.protocols._reader` for the rules) ---------------------

_TEXT_PART = Struct(TextPart, required("text", read_str))
_IMAGE_PART = Struct(
    ImagePart,
    optional("image_url", read_str),
    optional("file_id", read_str),
    optional("detail", unit_enum(_DETAILS)),
)
_FILE_PART = Struct(FilePart)
_MESSAGE_PART: Tagged[ContentPart] = Tagged(
    "type",
    "internally tagged enum ResponsesContentBlock",
    {
        "input_text": _TEXT_PART,
        "output_text": _TEXT_PART,
        "input_image": _IMAGE_PART,
        "input_file": _FILE_PART,
    },
)
_OUTPUT_PART: Tagged[ContentPart] = Tagged(
    "type",
    "internally tagged enum ResponsesToolCallOutputItem",
    {"input_text": _TEXT_PART, "input_image": _IMAGE_PART, "input_file": _FILE_PART},
)
_read_content = str_or_list(_MESSAGE_PART.read, "content should be a string or a list of content blocks")
_read_output = str_or_list(_OUTPUT_PART.read, "output should be a string or a list of output content parts")

_REASONING_TEXT = Struct(
    lambda text: text, required("text", read_str), expected="struct ResponsesReasoningContent", size=1
)
_MESSAGE = Struct(MessageItem, required("role", unit_enum(_ROLES)), required("content", _read_content))
#: The items by ``type``; other types become :class:`UnknownItem`.
_ITEMS: dict[str, Struct[InputItem]] = {
    "message": _MESSAGE,
    # Missing fields are reported in this order, as the reference does.
    "function_call": Struct(
        FunctionCallItem,
        required("arguments", read_str),
        required("call_id", read_str),
        required("name", read_str),
        optional("namespace", read_str),
    ),
    "function_call_output": Struct(
        lambda output, call_id=None: FunctionCallOutputItem(call_id=call_id, output=output),
        optional("call_id", read_str),
        required("output", _read_output),
    ),
    "custom_tool_call": Struct(
        CustomToolCallItem,
        required("call_id", read_str),
        required("name", read_str),
        required("input", read_str),
    ),
    # Unlike a function output, a custom tool's output may be left out (it is then empty).
    "custom_tool_call_output": Struct(
        lambda call_id, output="": CustomToolCallOutputItem(call_id=call_id, output=output),
        required("call_id", read_str),
        optional("output", _read_output),
    ),
    "reasoning": Struct(
        ReasoningItem,
        optional("content", list_of(_REASONING_TEXT.read), into="texts"),
        checked("encrypted_content", read_str),
    ),
    "item_reference": Struct(ItemReference),
}


def _read_item(value: Any, path: str) -> InputItem:
    if not isinstance(value, Mapping):
        fail("invalid input item", path)
    if "type" not in value:
        # An item without a type is a message ("easy input message"), recognised by its role.
        if "role" not in value:
            fail("invalid input item", path)
        return _MESSAGE.read_fields(value, path)
    kind = value["type"]
    if not isinstance(kind, str):
        invalid_type(kind, "variant identifier", join_path(path, "type"))
    item = _ITEMS.get(kind)
    return UnknownItem(kind) if item is None else item.read_fields(value, path)


# -- tools -------------------------------------------------------------------------------------------------------

_FUNCTION = Struct(
    FunctionTool,
    required("name", read_str),
    optional("description", read_str),
    optional("parameters"),
    optional("strict", read_bool),
)
# ``description`` and ``format`` are not read: the only custom tool served has a fixed definition (behavior.md#apply-patch-tool).
_CUSTOM = Struct(CustomTool, required("name", read_str))
_NAMESPACE_MEMBER: Tagged[FunctionTool | CustomTool] = Tagged(
    "type", "internally tagged enum ResponsesNamespaceTool", {"function": _FUNCTION, "custom": _CUSTOM}
)


def _read_namespace_member(value: Any, path: str) -> FunctionTool | CustomTool:
    tool = read_tagged_map(value, "type", ("function", "custom"), _NAMESPACE_MEMBER.expected, path)
    kind = tool.get("type")
    if isinstance(kind, str) and kind not in ("function", "custom"):
        # serde words a two-variant list "expected `a` or `b`" (``_body.unknown_variant`` says "one of").
        fail(f"unknown variant `{kind}`, expected `function` or `custom`", join_path(path, "type"))
    return _NAMESPACE_MEMBER.read(tool, path)


_TOOLS: dict[str, Struct[Tool]] = {
    "function": _FUNCTION,
    "namespace": Struct(
        NamespaceTool,
        required("name", read_str),
        optional("description", read_str),
        required("tools", list_of(_read_namespace_member)),
    ),
    "custom": _CUSTOM,
}
_USER_LOCATION = Struct(
    UserLocation,
    *(optional(key, read_str) for key in ("city", "country", "region", "timezone")),
    expected="struct ResponsesUserLocation",
    size=4,
)
_WEB_SEARCH = Struct(
    WebSearchTool,
    optional("search_context_size", unit_enum(_CONTEXT_SIZES)),
    optional("user_location", _USER_LOCATION.read),
)


def _read_tool(value: Any, path: str) -> Tool:
    # A tagged entry whose ``type`` may be any string: unknown types are hosted tools, dropped by the converter.
    tool = read_map(value, "internally tagged enum ResponsesTool", path)
    if "type" not in tool:
        fail("missing field `type`", path)
    kind = tool["type"]
    if not isinstance(kind, str):
        invalid_type(kind, "variant identifier", join_path(path, "type"))
    if kind in WEB_SEARCH_TYPES:
        return WebSearchTool(type=kind, **_WEB_SEARCH.collect(tool, path))
    struct = _TOOLS.get(kind)
    return HostedTool(kind) if struct is None else struct.read_fields(tool, path)


_TOOL_CHOICE_ERROR = "expected one of `none`, `auto`, `required` or a tool choice object"
_NAMED_CHOICE = Struct(NamedToolChoice, required("name", read_str))


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
    return NamedToolChoice(
        type=cast(Literal["function", "custom"], kind), **_NAMED_CHOICE.collect(value, path)
    )


# -- text and reasoning --------------------------------------------------------------------------------------------

_FORMAT: Tagged[TextFormat] = Tagged(
    "type",
    "internally tagged enum ResponsesTextFormat",
    {
        "text": constant("text"),
        "json_schema": Struct(
            JsonSchemaFormat,
            required("name", read_str),
            required("schema"),
            optional("description", read_str),
            optional("strict", read_bool),
        ),
        "json_object": constant("json_object"),
    },
)
_TEXT = Struct(
    TextConfig,
    # ``"format": null`` is refused: only a missing format means plain text.
    optional("format", _FORMAT.read, read_null=True),
    optional("verbosity", unit_enum(_VERBOSITIES)),
    expected="struct ResponsesTextConfig",
    size=2,
)
_REASONING = Struct(
    ReasoningConfig,
    optional("effort", unit_enum(EFFORT_VARIANTS)),
    optional("summary", unit_enum(_SUMMARIES)),
    optional("generate_summary", unit_enum(_SUMMARIES)),
    expected="struct ResponsesReasoningConfig",
    size=3,
)
_REQUEST = Struct(
    ResponsesRequest,
    required("model", read_str),
    optional("input", str_or_list(_read_item, "input should be a string or a list of input items")),
    optional("instructions", read_str),
    optional("user", read_str),
    optional("stream", read_bool),
    optional("max_output_tokens", uint(32)),
    optional("top_logprobs", uint(8)),
    optional("temperature", read_f32),
    optional("top_p", read_f32),
    optional("reasoning", _REASONING.read),
    optional("tools", list_of(_read_tool)),
    optional("tool_choice", _read_tool_choice),
    optional("text", _TEXT.read),
    expected="struct ResponsesRequest",
    size=13,
)


def read_request(body: Any) -> ResponsesRequest:
    """Read a parsed JSON body into a :class:`ResponsesRequest`.

    Raises:
        WireError: a field has the wrong JSON type, an enum value is unknown, or a required field is missing.
    """
    return _REQUEST.read(body, None)
