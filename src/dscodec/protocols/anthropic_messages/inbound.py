"""Anthropic Messages request -> :class:`~dscodec.conversation.ConversationRequest` (behavior.md#request-path, behavior.md#messages, behavior.md#json-schemas to behavior.md#parsing-options).

:func:`parse_request` is the single entry point. It reads the body (:mod:`.models`), then applies the
protocol's rules in the reference's order (found by differential testing): model; tool names and server tools;
V4.1's "not every tool deferred"; the messages one by one; duplicate names and schemas; tool choice; stop
sequences, temperature, top_p, max_tokens. A request breaking several rules gets the same error message as
from the reference. Every error leaves as a :class:`~dscodec.errors.ConversionError` bound to Anthropic's
error envelope (deviation D1).

Messages become conversation messages as the reference splits them (behavior.md#messages):

* the top-level ``system`` is the first system message;
* each content block of a user message is its own user message (the renderer joins consecutive ones again),
  and each ``tool_result`` block a tool message;
* an assistant message is one assistant turn: its text blocks are the content, its thinking blocks the
  reasoning, its ``tool_use`` blocks the tool calls; a trailing assistant message is a complete turn, never a
  prefix to continue (Anthropic's prefill is not supported by the reference);
* a ``system`` message inside ``messages`` is a system message on V4.1 and a ``<system-reminder>`` user text on
  V4, which has no system turns;
* on V4.1, ``tool_addition`` blocks give their system message tools, and ``tool_reference`` blocks in tool
  results add a system message with the referenced tools after their user message; only tools still offered
  after ``tool_choice`` are announced.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from dscodec import conversation as conv
from dscodec._json import dumps_prompt
from dscodec.errors import ConversionError
from dscodec.protocols import _body, _convert, _images, _sampling, _tools
from dscodec.protocols.anthropic_messages import models as wire

__all__ = ["INBOUND", "parse_request"]

PROTOCOL: conv.Protocol = "messages"

#: How a role-``system`` message is written on V4 (behavior.md#messages): a user text between these tags.
SYSTEM_REMINDER_OPEN = "<system-reminder>\n"
SYSTEM_REMINDER_CLOSE = "\n</system-reminder>"

#: The name of Anthropic's web search tool, when a request's web search tool has none.
_WEB_SEARCH = "web_search"


@dataclass
class _Announcement:
    """A V4.1 system message announcing tools by name; its tools are known once the tool list is final.

    ``keep_empty``: the message stays even when none of its tools is offered (it has content of its own).
    """

    message: conv.SystemMessage
    names: list[str]
    keep_empty: bool


@dataclass
class _PendingCalls:
    """The tool calls of the latest assistant message that its next message must answer (ids are unique)."""

    message_index: int
    ids: list[str]


@dataclass
class _Converter(_convert.RequestConverter[wire.MessagesRequest]):
    protocol = PROTOCOL

    #: The names of the client tools (server tools removed), for tool_addition and tool_reference blocks.
    declared: set[str] = field(default_factory=set)
    #: Names of the web search tools removed under ``messages_web_search="drop"``.
    dropped: set[str] = field(default_factory=set)
    #: System messages announcing tools (tool_addition, tool_reference), resolved after tool_choice.
    announcements: list[_Announcement] = field(default_factory=list)

    def convert(self) -> conv.ConversationRequest:
        # The order of the checks below is the reference's (refined by differential testing): a request
        # breaking several rules gets the error of the first one.
        req = self.request
        thinking = self.start(req.thinking, req.effort)
        client_tools = self._client_tools()
        if self.version != "v4" and client_tools and all(t.defer_loading is True for t in client_tools):
            # V4.1 needs at least one tool it can list (checked before anything else about tools or messages).
            raise ConversionError(
                "tools: at least one tool must have defer_loading=false. All tools cannot be deferred."
            )
        # tool_addition and tool_reference blocks may name any client tool.
        self.declared = {tool.name for tool in client_tools}
        # A request offers tools even when they are all dropped web search tools (observed).
        messages = self._messages(thinking, offers_tools=bool(req.tools))
        tools = self._tools(client_tools)
        tool_choice, tools = self._tool_choice(tools, thinking)
        messages = self._announce(messages, tools)

        stop = req.stop_sequences or ()
        _sampling.check_stop(stop, is_list=True)
        self.check_sampling()
        max_tokens = self._max_tokens(thinking)
        # Deviation D16, checked after every rule of the reference (which accepts stop sequences of any length).
        _sampling.check_stop_lengths(stop, field="stop_sequences", is_list=True)

        # A trailing assistant message is a complete turn, so the model always starts afresh (behavior.md#messages).
        return self.finish(
            messages, tools, tool_choice, max_tokens=max_tokens, initial_stage="reasoning_start", stop=stop
        )

    # -- tools and tool choice (behavior.md#messages, behavior.md#tools-and-tool-choice) ---------------------

    def _client_tools(self) -> list[wire.FunctionTool]:
        """The client tools, with checked names; server tools refused or dropped (behavior.md#messages).

        Their schemas are checked later, after the messages (the reference's order, as in Chat behavior.md#chat-check-order).
        """
        drop_web_search = self.options.messages_web_search == "drop"
        client: list[wire.FunctionTool] = []
        for index, tool in enumerate(self.request.tools or ()):
            if isinstance(tool, wire.ServerTool):
                # Only web search has a drop policy; every other server tool is refused (behavior.md#messages).
                if not (drop_web_search and tool.type.startswith("web_search")):
                    raise ConversionError(f"tools[{index}]: server tools are not supported")
                self.dropped.add(tool.name if tool.name is not None else _WEB_SEARCH)
                continue
            _tools.validate_tool_names([tool.name], path=f"tools[{index}].name")
            client.append(tool)
        return client

    def _tools(self, client: Sequence[wire.FunctionTool]) -> list[conv.ToolDefinition]:
        """The tool definitions, with unique names and checked schemas."""
        if self.request.tool_choice == "none":
            # The tools vanish before their schemas are looked at (only their names were checked), as in Chat.
            return []
        return _tools.unique_definitions(client, self._definition)

    def _definition(self, tool: wire.FunctionTool) -> conv.ToolDefinition:
        # ``input_schema`` is required: a missing one is checked like ``null`` (behavior.md#messages).
        _tools.validate_function_parameters(tool.name, tool.input_schema)
        return conv.ToolDefinition(
            name=tool.name,
            description=tool.description,
            parameters=tool.input_schema,
            # V4 has no deferred tools: every tool is listed (behavior.md#messages).
            defer_loading=self.version != "v4" and tool.defer_loading is True,
        )

    def _announce(self, messages: list[conv.Message], tools: list[conv.ToolDefinition]) -> list[conv.Message]:
        """Give the announcing system messages their tools: only tools still offered after tool_choice count,
        and a message left with neither tools nor content of its own disappears (observed)."""
        offered = {tool.name: tool for tool in tools}
        dropped: set[int] = set()
        for item in self.announcements:
            found = [offered[name] for name in item.names if name in offered]
            item.message.tools = found
            if not found and not item.keep_empty:
                dropped.add(id(item.message))
        return [m for m in messages if id(m) not in dropped]

    def _tool_choice(
        self, tools: list[conv.ToolDefinition], thinking: bool
    ) -> tuple[conv.ToolChoice, list[conv.ToolDefinition]]:
        choice = self.request.tool_choice or "auto"
        if choice == "none":
            return "none", []
        if choice == "auto" or not self.request.tools:
            # A forced tool call in a request without tools quietly becomes auto, as Chat's required does
            # (behavior.md#tools-and-tool-choice).
            return "auto", tools
        if isinstance(choice, wire.NamedToolChoice):
            if choice.name in self.dropped:
                # Naming a web search tool that was dropped leaves the choice to the model, even when a client
                # tool has the same name (observed).
                return "auto", tools
            chosen = [t for t in tools if t.name == choice.name]
            if not chosen:
                raise _tools.unknown_tool_choice(choice.name)
            tools = chosen
        elif not tools:
            # ``any`` with only dropped server tools: nothing to call.
            return "auto", tools
        # Deviation D10: ``any`` forces a tool call like a named tool does (the reference treats it as auto), and
        # Anthropic documents that thinking only works with auto/none tool choice.
        if thinking:
            raise ConversionError(_tools.THINKING_TOOL_CHOICE_ERROR)
        return "required", tools

    def _max_tokens(self, thinking: bool) -> int | None:
        """Messages' ``max_tokens``: optional, at least 1, quietly lowered to the bound (behavior.md#sampling)."""
        value = self.request.max_tokens
        if value is None:
            return None
        options = self.options
        bound = (
            options.thinking_max_tokens_upper_bound
            if thinking
            else options.non_thinking_max_tokens_upper_bound
        )
        lowered = min(value, bound)
        if lowered < 1:
            # A value above the bound is lowered to it first; only what is then below 1 is refused (0, or any value
            # under a bound of 0), with Chat's message.
            _sampling.check_max_tokens(lowered, thinking=thinking, options=options)
        return lowered

    # -- messages (behavior.md#messages) ---------------------------------------------------------------------

    def _messages(self, thinking: bool, *, offers_tools: bool) -> list[conv.Message]:
        req = self.request
        if not req.messages:
            raise ConversionError("messages: at least one message is required")
        out: list[conv.Message] = []
        if req.system is not None:
            text = req.system if isinstance(req.system, str) else _convert.PART_SEPARATOR.join(req.system)
            out.append(conv.SystemMessage(content=text))
        pending: _PendingCalls | None = None
        for index, message in enumerate(req.messages):
            if pending is not None and message.role != "user":
                # Whatever follows a tool call other than a user message does not answer it.
                _unanswered(f"messages.{index}: ", pending.ids)
            if isinstance(message.content, tuple) and not message.content and message.role != "system":
                raise ConversionError(f"messages.{index}: all messages must have non-empty content")
            if message.role == "user":
                self._user(index, message.content, pending, out)
                pending = None
                continue
            if message.role == "assistant":
                pending = self._assistant(index, message.content, out)
            else:
                self._system(index, message.content, out)
        if pending is not None:
            _unanswered(f"messages.{pending.message_index}:", pending.ids)
        _convert.fill_reasoning(
            out,
            thinking=thinking,
            options=self.options,
            offers_tools=offers_tools,
            reasoning_field="content[].thinking",
        )
        return out

    def _user(
        self, index: int, content: wire.Content, pending: _PendingCalls | None, out: list[conv.Message]
    ) -> None:
        """A user message: one message per block, tool results answering the previous assistant's calls."""
        if isinstance(content, str):
            if pending is not None:
                _unanswered(f"messages.{index}: ", pending.ids)
            out.append(conv.UserMessage(content=content))
            return
        expected = pending.ids if pending is not None else []
        expected_ids = set(expected)
        answered: set[str] = set()
        references: list[str] = []
        for position, block in enumerate(content):
            if isinstance(block, wire.ToolResultBlock):
                where = f"messages.{index}.content.{position}"
                if block.tool_use_id not in expected_ids:
                    raise ConversionError(
                        f"unexpected `{where}: tool_use_id` found in `tool_result` blocks: {block.tool_use_id}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
                        "message."
                    )
                if block.tool_use_id in answered:
                    raise ConversionError(
                        f"{where}: each tool_use must have a single result. Found multiple `tool_result` blocks "
                        f"with id: {block.tool_use_id}"
                    )
                answered.add(block.tool_use_id)
                out.append(self._tool_result(index, position, block, references))
                continue
            _check_role(index, "user", block)
            if len(answered) < len(expected_ids):
                # Results must come first: anything else before the last one leaves calls unanswered.
                _unanswered(f"messages.{index}: ", [i for i in expected if i not in answered])
            if isinstance(block, wire.TextBlock):
                out.append(conv.UserMessage(content=block.text))
            else:
                part = _convert.Content()
                self._media(
                    block,
                    part,
                    source_path=f"messages.{index}.content[{position}]",
                    error_path=f"messages.{index}.content[{position}]",
                )
                out.append(conv.UserMessage(content=part.text, images=part.images))
        if pending is not None and len(answered) < len(expected_ids):
            _unanswered(f"messages.{pending.message_index}:", [i for i in expected if i not in answered])
        if references and self.version != "v4":
            # V4.1 announces the referenced tools in a system message after the whole user message (behavior.md#messages).
            announcement = conv.SystemMessage(content="")
            self.announcements.append(_Announcement(announcement, references, keep_empty=False))
            out.append(announcement)

    def _tool_result(
        self,
        index: int,
        position: int,
        block: wire.ToolResultBlock,
        references: list[str],
    ) -> conv.ToolMessage:
        """A tool message; ``is_error`` does not change it (behavior.md#messages)."""
        content = block.content
        if content is None or isinstance(content, str):
            return conv.ToolMessage(tool_call_id=block.tool_use_id, content=content or "")
        where = f"messages.{index}.content.{position}"
        # The result's tool references are checked before its images (observed).
        for item in content:
            if isinstance(item, wire.ToolReferenceBlock) and item.tool_name not in self.declared:
                raise ConversionError(
                    f"{where}: tool reference '{item.tool_name}' not found in available tools"
                )
        part = _convert.Content()
        for inner, item in enumerate(content):
            if isinstance(item, wire.TextBlock):
                part.add(item.text)
            elif isinstance(item, wire.ToolReferenceBlock):
                references.append(item.tool_name)
                part.add(item.tool_name)
            else:
                self._media(
                    item,
                    part,
                    source_path=f"{where}.tool_result",
                    error_path=f"{where}.tool_result.content[{inner}]",
                )
        return conv.ToolMessage(tool_call_id=block.tool_use_id, content=part.text, images=part.images)

    def _assistant(self, index: int, content: wire.Content, out: list[conv.Message]) -> _PendingCalls | None:
        """An assistant turn; returns the calls its next message must answer."""
        if isinstance(content, str):
            out.append(conv.AssistantMessage(content=content))
            return None
        texts: list[str] = []
        reasoning: list[str] = []
        calls: list[conv.ToolCall] = []
        call_ids: set[str] = set()
        drop_server_blocks = self.options.messages_web_search == "drop"
        for position, block in enumerate(content):
            _check_role(index, "assistant", block)
            if isinstance(block, (wire.ServerToolUseBlock, wire.WebSearchToolResultBlock)):
                # Server-tool history is refused, or dropped before anything else looks at it (behavior.md#messages).
                if not drop_server_blocks:
                    raise ConversionError("Unsupported content block: server tools are not supported")
                continue
            if calls and not isinstance(block, (wire.ToolUseBlock, wire.ThinkingBlock)):
                # Only more calls may follow a call: its results must come right after it (behavior.md#messages).
                _unanswered(f"messages.{index}.{position}: ", [c.id for c in calls])
            if isinstance(block, wire.TextBlock):
                _append_text(texts, block.text)
            elif isinstance(block, wire.ThinkingBlock):
                reasoning.append(block.thinking)
            elif isinstance(block, wire.ToolUseBlock):
                if block.id in call_ids:
                    raise ConversionError(
                        f"messages.{index}.content.{position}: `tool_use` ids must be unique"
                    )
                call_ids.add(block.id)
                calls.append(conv.ToolCall(id=block.id, name=block.name, arguments=dumps_prompt(block.input)))
            elif isinstance(block, wire.ImageBlock) and self.version != "v4":
                # Checked like any image first; then refused, since the model cannot see its own images.
                self._image_source(
                    block.source, source_path="", error_path=f"messages.{index}.content[{position}]"
                )
                raise ConversionError("Image in assistant message is unsupported")
            elif isinstance(block, (wire.ImageBlock, wire.DocumentBlock)):
                placeholder = _convert.Content()
                self._media(block, placeholder, source_path="", error_path="")
                _append_text(texts, placeholder.text)
        out.append(
            conv.AssistantMessage(
                content=_convert.PART_SEPARATOR.join(texts),
                reasoning=_convert.PART_SEPARATOR.join(reasoning) if reasoning else None,
                tool_calls=calls,
            )
        )
        return _PendingCalls(index, [call.id for call in calls]) if calls else None

    def _system(self, index: int, content: wire.Content, out: list[conv.Message]) -> None:
        """A ``system`` message inside ``messages``: V4.1 keeps it in place, V4 makes it a reminder (behavior.md#messages)."""
        part = _convert.Content()
        added: list[str] = []
        blocks: Sequence[wire.Block] = (wire.TextBlock(content),) if isinstance(content, str) else content
        for position, block in enumerate(blocks):
            _check_role(index, "system", block)
            if isinstance(block, wire.TextBlock):
                part.add(block.text)
            elif isinstance(block, wire.ToolAdditionBlock):
                if block.name not in self.declared:
                    raise ConversionError(
                        f"messages.{index}.content.{position}: `tool_addition` references unknown tool '{block.name}'"
                    )
                added.append(block.name)
            else:
                self._media(
                    block,
                    part,
                    source_path=f"messages.{index}",
                    error_path=f"messages.{index}.content[{position}]",
                )
        if self.version == "v4":
            # V4 has no system turns: the text becomes a user reminder, tool additions are dropped.
            if part.text:
                out.append(conv.UserMessage(content=SYSTEM_REMINDER_OPEN + part.text + SYSTEM_REMINDER_CLOSE))
            return
        message = conv.SystemMessage(content=part.text, images=part.images)
        if added:
            keep = bool(part.text or part.images)
            self.announcements.append(_Announcement(message, added, keep_empty=keep))
        out.append(message)

    # -- images and documents --------------------------------------------------------------------------------

    def _media(
        self,
        block: wire.Block | wire.ToolResultPart,
        part: _convert.Content,
        *,
        source_path: str,
        error_path: str,
    ) -> None:
        """Append an image or document part: V4.1 images become image tokens, everything else a text."""
        if isinstance(block, wire.DocumentBlock):
            part.add(
                f"[Unsupported document type: {block.media_type if block.media_type is not None else 'unknown'}]"
            )
        elif isinstance(block, wire.ImageBlock):
            if self.version == "v4":
                part.add(_images.UNSUPPORTED_IMAGE_TEXT)
            else:
                source = self._image_source(block.source, source_path=source_path, error_path=error_path)
                part.add(_images.IMAGE_TOKEN, source)
        else:  # pragma: no cover - every other block kind is handled by the callers
            raise ConversionError(f"unexpected content block {type(block).__name__}")

    def _image_source(
        self, source: wire.ImageSource, *, source_path: str, error_path: str
    ) -> conv.ImageSource:
        """Where a V4.1 image comes from: an http(s) URL or a base64 data URL (behavior.md#messages)."""
        if isinstance(source, wire.FileSource):
            raise ConversionError(
                f"{error_path}: file_id is not supported. Pass the image as a base64 data url instead."
            )
        if isinstance(source, wire.UrlSource):
            if source.url[:4].lower() != "http":
                # The URL is quoted the way Rust's ``{:?}`` writes strings (the reference's message).
                raise ConversionError(f"{error_path}: invalid url: {_body.debug_str(source.url)}")
            too_long = _images.link_length_problem(source.url)
            if too_long is not None:
                raise ConversionError(f"{error_path}: {too_long}")
            return conv.ImageSource(kind="url", url=source.url, path=source_path)
        data = _images.canonical_base64(source.data)
        if data is None:
            raise ConversionError(f"{error_path}: base64 decode error")
        # The data URL names the canonical media type (``image/jpg`` is accepted as ``image/jpeg``).
        media_type = "image/jpeg" if source.media_type == "image/jpg" else source.media_type
        return conv.ImageSource(kind="data_url", url=f"data:{media_type};base64,{data}", path=source_path)


INBOUND = _convert.Inbound(PROTOCOL, wire.read_request, _Converter)
#: Convert a request body of this protocol (:meth:`~dscodec.protocols._convert.Inbound.parse`).
parse_request = INBOUND.parse


def _check_role(index: int, role: wire.Role, block: wire.Block) -> None:
    """Refuse a block the role cannot hold (behavior.md#messages); the messages are the reference's."""
    if isinstance(block, wire.ThinkingBlock) and role != "assistant":
        raise ConversionError(
            f"messages.{index}.content: thinking blocks may only be in `assistant` messages"
        )
    if isinstance(block, (wire.ToolUseBlock, wire.ServerToolUseBlock)) and role != "assistant":
        raise ConversionError(f"messages.{index}: `tool_use` blocks can only be in `assistant` messages")
    if isinstance(block, wire.WebSearchToolResultBlock) and role != "assistant":
        raise ConversionError(
            f"messages.{index}: `web_search_tool_result` blocks can only be in `assistant` messages"
        )
    if isinstance(block, wire.ToolResultBlock) and role != "user":
        raise ConversionError(f"messages.{index}: `tool_result` blocks can only be in `user` messages")
    if isinstance(block, wire.ToolAdditionBlock) and role != "system":
        raise ConversionError(f"messages.{index}: `tool_addition` blocks can only be in `system` messages")


def _append_text(texts: list[str], piece: str) -> None:
    """Collect an assistant text part; the parts are joined with a blank line, which goes between parts only
    once some text was written (observed), so empty parts before the first text leave no trace."""
    if texts or piece:
        texts.append(piece)


def _unanswered(prefix: str, ids: Sequence[str]) -> NoReturn:
    """Raise the error for tool calls whose results do not follow them (behavior.md#messages); ``prefix`` names the place."""
    # The reference lists the ids in byte order, whatever order the calls had.
    listed = ", ".join(sorted(ids, key=lambda i: i.encode("utf-8", "surrogatepass")))
    raise ConversionError(
        f"{prefix}`tool_use` ids were found without `tool_result` blocks immediately after: {listed}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )
