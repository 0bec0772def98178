"""OpenAI Responses request wire types and their typed reading (behavior.md#responses).

:func:`read_request` turns a parsed JSON body into slotted dataclasses, checking JSON types only; the protocol's
rules (pairing of calls and outputs, tool names, images…) belong to
:mod:`dscodec.protocols.openai_responses.inbound`. Field names are the protocol's own. Each JSON object is one
table of :mod:`dscodec.protocols._reader`, which reads it with the reference's serde rules.

Two kinds of entries are read loosely on purpose, as the reference reads them: tools of a type the protocol
defines but dscodec does not serve (``file_search``, ``mcp``, ``web_search_preview``…) become
:class:`HostedTool` (their fields are not looked at), and input items of an unknown ``type`` become
:class:`UnknownItem`, which the converter refuses (deviation D9; ``additional_tools`` is one: the reference
drops it unread, with the tools it carries).

The types are not frozen: nothing changes them after reading, and Python takes about twice as long to build a
frozen dataclass type (when the module is first imported) and two to three times as long to make each value
(in every request).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from dscodec.protocols import _reader as r
from dscodec.protocols._sampling import EFFORT_VARIANTS, EffortInput
from dscodec.protocols._wire_structs import (
    FUNCTION_TOOL_FIELDS,
    FunctionTool,
    TextPart,
    read_openai_tool_choice,
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
    "ToolSearchCallItem",
    "ToolSearchOutputItem",
    "ToolSearchTool",
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


# -- content: each type, then the table that reads it (see :mod:`dscodec.protocols._reader`) -----------------

_TEXT_PART = r.Struct(TextPart, r.required("text", r.read_str))


@dataclass(slots=True)
class ImagePart:
    """``input_image``: an image URL (http(s) or data URL) or a file id, checked by the converter."""

    image_url: str | None = None
    file_id: str | None = None
    detail: Detail = "high"


_IMAGE_PART = r.Struct(
    ImagePart, *r.optionals(r.read_str, "image_url", "file_id"), r.optional("detail", r.unit_enum(_DETAILS))
)


@dataclass(slots=True)
class FilePart:
    """``input_file``: always rendered as a placeholder text; its fields are not read."""


_FILE_PART = r.Struct(FilePart)
ContentPart = TextPart | ImagePart | FilePart
#: Message or tool-output content: a plain string or a list of parts.
Content = str | tuple[ContentPart, ...]
_MESSAGE_PART: r.Tagged[ContentPart] = r.Tagged(
    "type",
    "internally tagged enum ResponsesContentBlock",
    {
        "input_text": _TEXT_PART,
        "output_text": _TEXT_PART,
        "input_image": _IMAGE_PART,
        "input_file": _FILE_PART,
    },
)
_OUTPUT_PART: r.Tagged[ContentPart] = r.Tagged(
    "type",
    "internally tagged enum ResponsesToolCallOutputItem",
    {"input_text": _TEXT_PART, "input_image": _IMAGE_PART, "input_file": _FILE_PART},
)
_read_content = r.str_or_list(_MESSAGE_PART.read, "content should be a string or a list of content blocks")
_read_output = r.str_or_list(_OUTPUT_PART.read, "output should be a string or a list of output content parts")


# -- input items -----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class MessageItem:
    """``{"role", "content"}``, with or without ``"type": "message"``."""

    role: Role
    content: Content


_MESSAGE = r.Struct(
    MessageItem, r.required("role", r.unit_enum(_ROLES)), r.required("content", _read_content)
)


@dataclass(slots=True)
class FunctionCallItem:
    call_id: str
    name: str
    arguments: str
    namespace: str | None = None


# Missing fields are reported in this order, as the reference does.
_FUNCTION_CALL = r.Struct(
    FunctionCallItem,
    r.required("arguments", r.read_str),
    r.required("call_id", r.read_str),
    r.required("name", r.read_str),
    r.optional("namespace", r.read_str),
)


@dataclass(slots=True)
class FunctionCallOutputItem:
    #: ``None`` when the item has no ``call_id`` (the reference keeps such an output unpaired).
    call_id: str | None
    output: Content


_FUNCTION_CALL_OUTPUT = r.Struct(
    lambda output, call_id=None: FunctionCallOutputItem(call_id=call_id, output=output),
    r.optional("call_id", r.read_str),
    r.required("output", _read_output),
)


@dataclass(slots=True)
class CustomToolCallItem:
    call_id: str
    name: str
    input: str


_CUSTOM_TOOL_CALL = r.Struct(
    CustomToolCallItem,
    r.required("call_id", r.read_str),
    r.required("name", r.read_str),
    r.required("input", r.read_str),
)


@dataclass(slots=True)
class CustomToolCallOutputItem:
    call_id: str
    output: Content


# Unlike a function output, a custom tool's output may be left out (it is then empty).
_CUSTOM_TOOL_CALL_OUTPUT = r.Struct(
    lambda call_id, output="": CustomToolCallOutputItem(call_id=call_id, output=output),
    r.required("call_id", r.read_str),
    r.optional("output", _read_output),
)


@dataclass(slots=True)
class ReasoningItem:
    """A reasoning item: the ``text`` of every ``content`` part (their ``type`` is not read).

    ``summary`` and ``encrypted_content`` are not used (behavior.md#responses); ``encrypted_content`` is type-checked only.
    """

    texts: tuple[str, ...] = ()


_REASONING_TEXT = r.Struct(
    lambda text: text, r.required("text", r.read_str), expected="struct ResponsesReasoningContent", size=1
)
_REASONING_ITEM = r.Struct(
    ReasoningItem,
    r.optional("content", r.list_of(_REASONING_TEXT.read), into="texts"),
    r.checked("encrypted_content", r.read_str),
)


@dataclass(slots=True)
class ToolSearchCallItem:
    """``tool_search_call``: the model searched for tools; on V4.1 a call of the ``tool_search`` function."""

    call_id: str
    arguments: Mapping[str, Any]


def _read_arguments_map(value: Any, path: str) -> Mapping[str, Any]:
    return r.read_map(value, "a map", path)


_SEARCH_EXECUTION = r.unit_enum(("client", "server"))

_TOOL_SEARCH_CALL = r.Struct(
    ToolSearchCallItem,
    r.required("call_id", r.read_str),  # (missing both: the reference names call_id)
    r.required("arguments", _read_arguments_map),
    r.checked("execution", _SEARCH_EXECUTION),
)


@dataclass(slots=True)
class ToolSearchOutputItem:
    """``tool_search_output``: the tools a search loaded; on V4.1 the search's result, and tools from then on."""

    call_id: str
    tools: tuple[Tool, ...]


_TOOL_SEARCH_OUTPUT = r.Struct(
    ToolSearchOutputItem,
    r.required("call_id", r.read_str),
    r.required("tools", lambda value, path: r.list_of(_read_tool)(value, path)),
    r.checked("execution", _SEARCH_EXECUTION),
)


@dataclass(slots=True)
class ItemReference:
    """``item_reference``: points at stored state dscodec does not have; dropped as in the reference."""


@dataclass(slots=True)
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
    | ToolSearchCallItem
    | ToolSearchOutputItem
    | ItemReference
    | UnknownItem
)
#: The items by ``type``; other types become :class:`UnknownItem`.
_ITEMS: dict[str, r.Struct[InputItem]] = {
    "message": _MESSAGE,
    "function_call": _FUNCTION_CALL,
    "function_call_output": _FUNCTION_CALL_OUTPUT,
    "custom_tool_call": _CUSTOM_TOOL_CALL,
    "custom_tool_call_output": _CUSTOM_TOOL_CALL_OUTPUT,
    "reasoning": _REASONING_ITEM,
    "tool_search_call": _TOOL_SEARCH_CALL,
    "tool_search_output": _TOOL_SEARCH_OUTPUT,
    "item_reference": r.Struct(ItemReference),
}


def _read_item(value: Any, path: str) -> InputItem:
    if value.__class__ is not dict and not isinstance(value, Mapping):  # (a parsed body's objects are dicts)
        r.fail("invalid input item", path)
    if "type" not in value:
        # An item without a type is a message ("easy input message"), recognised by its role.
        if "role" not in value:
            r.fail("invalid input item", path)
        return _MESSAGE.read_fields(value, path)
    kind = value["type"]
    if not isinstance(kind, str):
        r.invalid_type(kind, "variant identifier", r.join_path(path, "type"))
    item = _ITEMS.get(kind)
    return UnknownItem(kind) if item is None else item.read_fields(value, path)


# -- tools -----------------------------------------------------------------------------------------------------

_FUNCTION = r.Struct(FunctionTool, *FUNCTION_TOOL_FIELDS)


@dataclass(slots=True)
class CustomTool:
    """A ``custom`` (free-form input) tool; only its name is read."""

    name: str


# ``description`` and ``format`` are not read: the only custom tool served has a fixed definition (behavior.md#apply-patch-tool).
_CUSTOM = r.Struct(CustomTool, r.required("name", r.read_str))
_NAMESPACE_MEMBER: r.Tagged[FunctionTool | CustomTool] = r.Tagged(
    "type", "internally tagged enum ResponsesNamespaceTool", {"function": _FUNCTION, "custom": _CUSTOM}
)


def _read_namespace_member(value: Any, path: str) -> FunctionTool | CustomTool:
    tool = r.read_tagged_map(value, "type", ("function", "custom"), _NAMESPACE_MEMBER.expected, path)
    kind = tool.get("type")
    if isinstance(kind, str) and kind not in ("function", "custom"):
        # serde words a two-variant list "expected `a` or `b`" (``_body.unknown_variant`` says "one of").
        r.fail(f"unknown variant `{kind}`, expected `function` or `custom`", r.join_path(path, "type"))
    return _NAMESPACE_MEMBER.read(tool, path)


@dataclass(slots=True)
class NamespaceTool:
    name: str
    tools: tuple[FunctionTool | CustomTool, ...]
    description: str | None = None


_NAMESPACE = r.Struct(
    NamespaceTool,
    r.required("name", r.read_str),
    r.optional("description", r.read_str),
    r.required("tools", r.list_of(_read_namespace_member)),
)


@dataclass(slots=True)
class UserLocation:
    city: str | None = None
    country: str | None = None
    region: str | None = None
    timezone: str | None = None


_USER_LOCATION = r.Struct(
    UserLocation,
    *r.optionals(r.read_str, "city", "country", "region", "timezone"),
    expected="struct ResponsesUserLocation",
    size=4,
)


@dataclass(slots=True)
class WebSearchTool:
    type: str
    search_context_size: str | None = None
    user_location: UserLocation | None = None


_WEB_SEARCH = r.Struct(
    WebSearchTool,
    r.optional("search_context_size", r.unit_enum(_CONTEXT_SIZES)),
    r.optional("user_location", _USER_LOCATION.read),
)


@dataclass(slots=True)
class HostedTool:
    """Any other tool type (``file_search``, ``mcp``, ``web_search_preview``…): dropped by the converter."""

    type: str


@dataclass(slots=True)
class ToolSearchTool:
    """``tool_search``: on V4.1 one executed by the client is the ``tool_search`` function; otherwise dropped."""

    execution: str | None = None
    description: str | None = None
    parameters: Any = None


_TOOL_SEARCH = r.Struct(
    ToolSearchTool,
    r.optional("description", r.read_str),
    r.optional("execution", _SEARCH_EXECUTION),
    r.optional("parameters"),
)

Tool = FunctionTool | NamespaceTool | CustomTool | WebSearchTool | ToolSearchTool | HostedTool
_TOOLS: dict[str, r.Struct[Tool]] = {"function": _FUNCTION, "namespace": _NAMESPACE, "custom": _CUSTOM}


def _read_tool(value: Any, path: str) -> Tool:
    # A tagged entry whose ``type`` may be any string: unknown types are hosted tools, dropped by the converter.
    if isinstance(value, list) and not value:  # serde reads the tag first from an array: none there
        r.fail("missing field `type`", path)
    tool = r.read_map(value, "internally tagged enum ResponsesTool", path)
    if "type" not in tool:
        r.fail("missing field `type`", path)
    kind = tool["type"]
    if not isinstance(kind, str):
        r.invalid_type(kind, "variant identifier", r.join_path(path, "type"))
    if kind in WEB_SEARCH_TYPES:
        return WebSearchTool(type=kind, **_WEB_SEARCH.collect(tool, path))
    struct = _TOOLS.get(kind)
    if struct is not None:
        return struct.read_fields(tool, path)
    if kind == "tool_search":
        return _TOOL_SEARCH.read_fields(tool, path)
    return HostedTool(kind)


@dataclass(slots=True)
class NamedToolChoice:
    """``{"type": "function" | "custom", "name"}``: the tool is looked up by name only."""

    type: Literal["function", "custom"]
    name: str


_NAMED_CHOICE = r.Struct(NamedToolChoice, r.required("name", r.read_str))


@dataclass(slots=True)
class WebSearchChoice:
    type: str


ToolChoice = Literal["none", "auto", "required"] | NamedToolChoice | WebSearchChoice


def _read_tool_choice(value: Any, path: str) -> ToolChoice:
    choice = read_openai_tool_choice(
        value, path, "expected one of `none`, `auto`, `required` or a tool choice object"
    )
    if isinstance(choice, str):
        return cast(ToolChoice, choice)
    kind = r.read_tag(choice, "type", _TOOL_CHOICE_TYPES, r.join_path(path, "type"))
    if kind in WEB_SEARCH_TYPES:
        return WebSearchChoice(kind)
    return NamedToolChoice(
        type=cast(Literal["function", "custom"], kind), **_NAMED_CHOICE.collect(choice, path)
    )


# -- text and reasoning ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class JsonSchemaFormat:
    name: str
    schema: Any
    description: str | None = None
    strict: bool | None = None


TextFormat = Literal["text", "json_object"] | JsonSchemaFormat
_FORMAT: r.Tagged[TextFormat] = r.Tagged(
    "type",
    "internally tagged enum ResponsesTextFormat",
    {
        "text": r.constant("text"),
        "json_schema": r.Struct(
            JsonSchemaFormat,
            r.required("name", r.read_str),
            r.required("schema"),
            r.optional("description", r.read_str),
            r.optional("strict", r.read_bool),
        ),
        "json_object": r.constant("json_object"),
    },
)


@dataclass(slots=True)
class TextConfig:
    format: TextFormat = "text"
    verbosity: str | None = None


_TEXT = r.Struct(
    TextConfig,
    # ``"format": null`` is refused: only a missing format means plain text.
    r.optional("format", _FORMAT.read, read_null=True),
    r.optional("verbosity", r.unit_enum(_VERBOSITIES)),
    expected="struct ResponsesTextConfig",
    size=2,
    empty_at=1,
)


@dataclass(slots=True)
class ReasoningConfig:
    effort: EffortInput | None = None
    summary: str | None = None
    generate_summary: str | None = None


_REASONING = r.Struct(
    ReasoningConfig,
    r.optional("effort", r.unit_enum(EFFORT_VARIANTS)),
    *r.optionals(r.unit_enum(_SUMMARIES), "summary", "generate_summary"),
    expected="struct ResponsesReasoningConfig",
    size=3,
)


# -- the request -----------------------------------------------------------------------------------------------


@dataclass(slots=True)
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


_REQUEST = r.Struct(
    ResponsesRequest,
    r.required("model", r.read_str),
    r.optional("input", r.str_or_list(_read_item, "input should be a string or a list of input items")),
    *r.optionals(r.read_str, "instructions", "user"),
    *r.optionals(r.read_f32, "temperature", "top_p"),
    r.optional("stream", r.read_bool),
    r.optional("max_output_tokens", r.uint(32)),
    r.optional("top_logprobs", r.uint(8)),
    r.optional("reasoning", _REASONING.read),
    r.optional("tools", r.list_of(_read_tool)),
    r.optional("tool_choice", _read_tool_choice),
    r.optional("text", _TEXT.read),
    expected="struct ResponsesRequest",
    size=13,
)


def read_request(body: Any) -> ResponsesRequest:
    """Read a parsed JSON body; ``WireError``: a wrong JSON type, an unknown enum value or a missing field."""
    return _REQUEST.read(body, None)
