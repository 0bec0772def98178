"""OpenAI Responses request -> :class:`~dscodec.conversation.ConversationRequest` (behavior.md#request-path, behavior.md#responses, behavior.md#json-schemas to behavior.md#parsing-options).

:func:`parse_request` is the single entry point. It reads the body (:mod:`.models`), then applies the
protocol's rules in the reference's order: model; the tool list, tool by tool (custom tools, server tools,
names); the presence of input; the input items one by one; a server-tool ``tool_choice``; tool schemas and
names; ``tool_choice``; the ``json`` word; the response format; the sampling fields. A request breaking several
rules gets the same error as from the reference. Every error leaves as a
:class:`~dscodec.errors.ConversionError` bound to the OpenAI error body.

Input items become conversation messages as the reference groups them (behavior.md#responses), observed as follows:

* an assistant turn collects, in this order, reasoning items, assistant messages and tool calls; an item that
  would go back in that order (reasoning after a message or a call, a message after a call) starts a new turn;
* the outputs of a turn's calls follow it, each call answered once; a call that arrives while some output of
  the turn is still missing joins the turn, and any other item ends the turn, which needs all its outputs then;
* a turn's calls, and their outputs, are written sorted by call id;
* ``item_reference`` items leave no trace, nor do reasoning items without text (except that they end a turn
  that has calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dscodec import conversation as conv
from dscodec._json import dumps_compact
from dscodec.errors import ConversionError
from dscodec.prompt.dialects import APPLY_PATCH_TOOL
from dscodec.protocols import _body, _constraints, _convert, _images, _sampling, _tools
from dscodec.protocols._tools import NameAllocator
from dscodec.protocols.openai_responses import ResponsesWire
from dscodec.protocols.openai_responses import models as wire

__all__ = ["INBOUND", "parse_request"]

PROTOCOL: conv.Protocol = "responses"
#: An input_image part's two fields, as the messages for neither and for both name them.
_IMAGE_FIELDS = ("image_url or file_id", "image_url and file_id")

#: Text standing for an ``input_file`` part, on both templates (behavior.md#responses).
UNSUPPORTED_DOCUMENT_TEXT = "[Unsupported Document]"

#: The function a client-executed ``tool_search`` tool becomes on V4.1, and the name its calls take.
TOOL_SEARCH_NAME = "tool_search"

#: Reasoning texts (content parts and consecutive reasoning items) are joined with one newline.
_REASONING_SEPARATOR = "\n"


@dataclass
class _Turn:
    """An assistant turn being collected: reasoning, message texts and calls, then the outputs of the calls."""

    reasoning: list[str] = field(default_factory=list)
    contents: list[str] = field(default_factory=list)
    calls: list[conv.ToolCall] = field(default_factory=list)
    #: The ids of ``calls``, for pairing outputs in constant time.
    call_ids: set[str] = field(default_factory=set)
    outputs: dict[str, conv.ToolMessage] = field(default_factory=dict)
    #: V4.1: one system message per tool search output that loaded tools, in item order (their tools are
    #: filled in once the tool list is built).
    loads: list[conv.SystemMessage] = field(default_factory=list)

    def add_call(self, call: conv.ToolCall) -> None:
        """Append a call (its id is new: duplicates were refused before)."""
        self.calls.append(call)
        self.call_ids.add(call.id)

    @property
    def answered(self) -> bool:
        """Every call has its output (vacuously true without calls)."""
        return len(self.outputs) == len(self.calls)

    def messages(self) -> list[conv.Message]:
        """The assistant message, then the outputs in the order of the calls.

        Raises:
            ConversionError: a call has no output.
        """
        for call in self.calls:
            if call.id not in self.outputs:
                # The reference names an arbitrary missing call (hash-set order); dscodec names the first one.
                raise ConversionError(f"No tool output found for tool call {call.id}.")
        # The reference keeps a turn's calls keyed by call id: they come out sorted by id (code point order),
        # whatever order the client sent them in, and so do their outputs.
        calls = sorted(self.calls, key=lambda call: call.id)
        assistant = conv.AssistantMessage(
            content=_convert.PART_SEPARATOR.join(self.contents),
            reasoning=_REASONING_SEPARATOR.join(self.reasoning) if self.reasoning else None,
            tool_calls=calls,
        )
        return [assistant, *(self.outputs[call.id] for call in calls), *self.loads]


@dataclass
class _Converter(_convert.RequestConverter[wire.ResponsesRequest]):
    protocol = PROTOCOL

    out: list[conv.Message] = field(default_factory=list)
    turn: _Turn | None = None
    call_ids: set[str] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)
    #: ``_flat_names()``, computed once.
    flat_names: frozenset[str] | None = None
    #: ``_namespace_tool_map()``, computed once (its callers only read it).
    tool_map: dict[str, tuple[str, str]] | None = None
    #: (namespace, name) of each namespace member -> its prompt name (the first, for a member declared twice); then
    #: of each history call that names no member, as it is met.
    call_names: dict[tuple[str, str], str] | None = None
    #: Hands out the names of history calls that name no member: not a flat name, a member's or another such call's.
    call_allocator: _tools.NameAllocator | None = None
    #: The first input item of a type dscodec does not convert (index, type): refused at the end (D9).
    unknown_item: tuple[int, str] | None = None
    #: V4.1: the tools each tool search output loaded, with the system message that announces them.
    loaded: list[tuple[conv.SystemMessage, tuple[wire.Tool, ...]]] = field(default_factory=list)

    def convert(self) -> conv.ConversationRequest:
        req = self.request
        thinking = self.start(None, req.reasoning.effort if req.reasoning is not None else None)
        self._check_tool_list()
        if req.input is None and not req.instructions:
            raise ConversionError("Either input or instructions must be provided")
        if req.input == ():
            raise ConversionError("Input items array must not be empty")
        messages = self._messages(thinking)
        if isinstance(req.tool_choice, wire.WebSearchChoice):
            self._check_web_search()
        tools = self._tools()
        tool_choice, tools = self._tool_choice(tools, thinking)
        if self.loaded:
            self._keep_announced(tools)
        fmt = req.text.format if req.text is not None else "text"
        if fmt == "json_object" and not _constraints.contains_json_word(m.content for m in messages):
            raise ConversionError(
                "Response input messages must contain the word 'json' in some form to use 'text.format' of type "
                "'json_object'."
            )

        response_schema: Any = None
        format_constraint: conv.OutputConstraint | None = None
        if isinstance(fmt, wire.JsonSchemaFormat):
            response_schema = fmt.schema
            format_constraint = _constraints.json_schema_constraint(fmt.schema, strict=fmt.strict)
        _constraints.check_strict_tools(tools, text_format=fmt == "text")
        self.check_sampling()
        if req.top_logprobs is not None:
            # Asking for top_logprobs is asking for logprobs: Responses has no separate switch (behavior.md#responses).
            _sampling.check_top_logprobs_range(req.top_logprobs)
        _sampling.check_max_tokens(req.max_output_tokens, thinking=thinking, options=self.options)
        if self.unknown_item is not None:
            index, kind = self.unknown_item
            raise ConversionError(
                f"Unsupported input item type '{kind}' at input[{index}]: dscodec converts message, "
                "function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning, "
                "tool_search_call, tool_search_output and item_reference items.",
                param=f"input[{index}].type",
            )

        return self.finish(
            messages,
            tools,
            tool_choice,
            max_tokens=req.max_output_tokens,
            response_format=_format_name(fmt),
            response_schema=response_schema,
            format_constraint=format_constraint,
            logprobs=req.top_logprobs is not None,
            top_logprobs=req.top_logprobs,
            wire=ResponsesWire(echo=_echo(req), namespace_tool_map=self._namespace_tool_map()),
        )

    # -- tools (behavior.md#responses, behavior.md#json-schemas, behavior.md#apply-patch-tool) --------------

    def _check_tool_list(self) -> None:
        """The checks the reference makes on the tool list before it reads the input, tool by tool."""
        for index, tool in enumerate(self.request.tools or ()):
            if isinstance(tool, wire.FunctionTool):
                _tools.validate_tool_names([tool.name], path=f"tools[{index}].name")
            elif isinstance(tool, wire.CustomTool):
                _check_custom_tool(tool.name)
            elif isinstance(tool, wire.NamespaceTool):
                _check_namespace(tool, f"tools[{index}]")
            elif isinstance(tool, wire.WebSearchTool):
                self._check_web_search()

    def _check_web_search(self) -> None:
        if self.options.responses_web_search == "reject":
            raise ConversionError("Server tools are not supported")

    def _flat_names(self) -> frozenset[str]:
        """The names tools take as they are: functions, and ``apply_patch`` for the custom tool."""
        if self.flat_names is None:
            tools = self.request.tools or ()
            names = {name for name in map(_flat_name, tools) if name is not None}
            if self.version != "v4" and any(map(_is_client_search, tools)):
                names.add(TOOL_SEARCH_NAME)
            self.flat_names = frozenset(names)
        return self.flat_names

    def _namespace_tool_map(self) -> dict[str, tuple[str, str]]:
        """Prompt name -> (namespace, name) of every namespace member, in request order, whatever ``tool_choice``
        says (the names are made by :func:`~dscodec.protocols._tools.namespaced_names`)."""
        if self.tool_map is None:
            members = [
                (tool.name, inner.name)
                for tool in self.request.tools or ()
                if isinstance(tool, wire.NamespaceTool)
                for inner in tool.tools
            ]
            names = _tools.namespaced_names(members, flat=self._flat_names(), version=self.version)
            self.tool_map = dict(zip(names, members))
        return self.tool_map

    def _tools(self) -> list[conv.ToolDefinition]:
        """The tool definitions in request order, schemas checked (behavior.md#responses, behavior.md#json-schemas)."""
        if self.request.tool_choice == "none":
            # The tools vanish before their schemas are looked at (only their names were checked), and so do
            # the announcements of the tools that searches loaded.
            announced = {id(message) for message, _ in self.loaded}
            self.out[:] = [m for m in self.out if id(m) not in announced]
            return []
        namespaced = iter(self._namespace_tool_map())
        tools: list[conv.ToolDefinition] = []
        # The names of ``tools`` so far: a function or custom tool must not repeat any of them (checked before
        # its schema), namespace members never do (their names were made unique).
        names: set[str] = set()
        for tool in self.request.tools or ():
            if isinstance(tool, wire.FunctionTool):
                if tool.name in names:
                    raise ConversionError("Tool names must be unique.")
                tools.append(
                    _tools.function_definition(
                        tool.name, tool.description, tool.parameters, strict=tool.strict
                    )
                )
            elif isinstance(tool, wire.CustomTool):
                if APPLY_PATCH_TOOL.name in names:
                    raise ConversionError("Tool names must be unique.")
                tools.append(_tools.APPLY_PATCH_TOOLS[self.version].model_copy(deep=True))
            elif isinstance(tool, wire.NamespaceTool):
                for inner in tool.tools:
                    assert isinstance(inner, wire.FunctionTool)  # custom members were refused before
                    description = _tools.namespaced_description(
                        tool.description, inner.description, self.version
                    )
                    name = next(namespaced)
                    tools.append(
                        _tools.function_definition(name, description, inner.parameters, strict=inner.strict)
                    )
                    names.add(tools[-1].name)
                continue
            elif self.version != "v4" and _is_client_search(tool):
                assert isinstance(tool, wire.ToolSearchTool)
                if TOOL_SEARCH_NAME in names:
                    raise ConversionError("Tool names must be unique.")
                tools.append(
                    _tools.function_definition(
                        TOOL_SEARCH_NAME, tool.description, tool.parameters, strict=None
                    )
                )
            else:
                continue
            names.add(tools[-1].name)
        allocator = NameAllocator(names)
        for message, loaded in self.loaded:
            message.tools = self._loaded_definitions(loaded, allocator)
            tools += message.tools
        return tools

    def _keep_announced(self, tools: list[conv.ToolDefinition]) -> None:
        """The announcements of loaded tools with only the tools the request keeps (a named tool choice keeps
        one); an announcement left with none goes."""
        kept = {tool.name for tool in tools}
        empty: set[int] = set()
        for message, _ in self.loaded:
            message.tools = [tool for tool in message.tools or () if tool.name in kept]
            if not message.tools:
                empty.add(id(message))
        if empty:
            self.out[:] = [m for m in self.out if id(m) not in empty]

    def _loaded_definitions(
        self, loaded: Sequence[wire.Tool], allocator: NameAllocator
    ) -> list[conv.ToolDefinition]:
        """The definitions of the tools one search output loaded (deferred: announced where they were loaded);
        ``allocator`` holds the names of the tools so far and takes theirs. A namespace member's name is made
        unique (linear in the members however many share a name), any other repeated name is refused."""
        out: list[conv.ToolDefinition] = []
        names = allocator.taken

        def add(definition: conv.ToolDefinition) -> None:
            definition.defer_loading = True
            out.append(definition)
            names.add(definition.name)

        for tool in loaded:
            if isinstance(tool, wire.NamespaceTool):
                for inner in tool.tools:
                    assert isinstance(inner, wire.FunctionTool)  # custom members were refused before
                    joined = _tools.namespaced_name(tool.name, inner.name, self.version)
                    description = _tools.namespaced_description(
                        tool.description, inner.description, self.version
                    )
                    name = allocator.take(joined)
                    add(_tools.function_definition(name, description, inner.parameters, strict=inner.strict))
                continue
            if isinstance(tool, wire.FunctionTool):
                name = tool.name
            elif isinstance(tool, wire.CustomTool):
                name = APPLY_PATCH_TOOL.name
            elif _is_client_search(tool):
                name = TOOL_SEARCH_NAME
            else:
                continue  # web search and server-side tool search load nothing
            if name in names:
                raise ConversionError("Tool names must be unique.")
            if isinstance(tool, wire.FunctionTool):
                add(_tools.function_definition(name, tool.description, tool.parameters, strict=tool.strict))
            elif isinstance(tool, wire.CustomTool):
                add(_tools.APPLY_PATCH_TOOLS[self.version].model_copy(deep=True))
            else:
                assert isinstance(tool, wire.ToolSearchTool)
                add(_tools.function_definition(name, tool.description, tool.parameters, strict=None))
        return out

    def _tool_choice(
        self, tools: list[conv.ToolDefinition], thinking: bool
    ) -> tuple[conv.ToolChoice, list[conv.ToolDefinition]]:
        choice = self.request.tool_choice or "auto"
        if isinstance(choice, wire.WebSearchChoice):
            choice = "auto"  # the server tool was dropped (a rejected one was refused before)
        if isinstance(choice, wire.NamedToolChoice):
            # Function and custom choices both look the tool up by its prompt name.
            return _tools.resolve_tool_choice("required", choice.name, tools, thinking=thinking)
        return _tools.resolve_tool_choice(choice, None, tools, thinking=thinking)

    # -- input items (behavior.md#responses) --------------------------------------------------------------------

    def _messages(self, thinking: bool) -> list[conv.Message]:
        req = self.request
        if req.instructions:
            self.out.append(conv.SystemMessage(content=req.instructions))
        if isinstance(req.input, str):
            self.out.append(conv.UserMessage(content=req.input))
        else:
            items = req.input or ()
            if self.version != "v4":  # V4 reads tool search outputs and drops them, their tools unchecked
                for index, item in enumerate(items):
                    if isinstance(item, wire.ToolSearchOutputItem):
                        self._check_loaded(index, item.tools)
            for index, item in enumerate(items):
                self._item(index, item)
            self._close_turn()
        # Only tools the prompt would define count as offered tools, whatever tool_choice says (server tools do
        # not): functions, custom tools, namespaces with members and, on V4.1, a client-executed tool search and
        # the tools a search output in the history loaded.
        tools = self.request.tools or ()
        offers = any(map(_offers_function, tools)) or (
            self.version != "v4" and (any(map(_is_client_search, tools)) or bool(self.loaded))
        )
        _convert.fill_reasoning(
            self.out,
            thinking=thinking,
            options=self.options,
            offers_tools=offers,
            reasoning_field="reasoning_text",
        )
        return self.out

    def _item(self, index: int, item: wire.InputItem) -> None:
        if isinstance(item, wire.MessageItem):  # the commonest item, before the other kinds are asked about
            self._message_item(index, item)
            return
        if isinstance(item, wire.ItemReference):
            return  # points at stored state dscodec does not have; the reference drops it too
        if isinstance(item, wire.UnknownItem):
            # Deviation D9: the reference drops unknown items silently, which loses what they carried. The
            # request is refused, but only after every rule the reference applies (to the input without the
            # item), so that a request the reference refuses gets the reference's error.
            if self.unknown_item is None:
                self.unknown_item = (index, item.type)
            if item.type == "web_search_call" and self.turn is not None and self.turn.calls:
                # Observed: the reference knows this one item (unread) and, as a reasoning item does, ends a
                # turn that has calls, so a call it follows must have had all its outputs before it.
                self._close_turn()
            return
        if isinstance(item, wire.ReasoningItem):
            # Any reasoning item ends a turn that has calls (whose outputs must all have come before it); one
            # without text changes nothing else, one with text also ends a turn that has content.
            if self.turn is not None and self.turn.calls:
                self._close_turn()
            text = _REASONING_SEPARATOR.join(item.texts)
            if not text:
                return
            if self.turn is not None and self.turn.contents:
                self._close_turn()
            self._open_turn().reasoning.append(text)
        elif isinstance(item, (wire.FunctionCallItem, wire.CustomToolCallItem, wire.ToolSearchCallItem)):
            if isinstance(item, wire.ToolSearchCallItem) and self.version == "v4":
                return  # V4 has no tool search: the reference reads the item and drops it
            self._check_call_id(index, item.call_id)
            if item.call_id in self.call_ids:
                raise ConversionError(f"Duplicate 'call_id': {item.call_id}.")
            self.call_ids.add(item.call_id)
            if self.turn is not None and self.turn.outputs and self.turn.answered:
                # A call after the outputs of every earlier call starts a new turn; while some output is still
                # missing, the call joins the turn being answered.
                self._close_turn()
            self._open_turn().add_call(self._call(item))
        elif isinstance(item, wire.ToolSearchOutputItem):
            if self.version == "v4":
                return  # see tool_search_call
            # The loaded tools were checked before any item; the output is paired as a function's, then written
            # down as the result's JSON, which a hosted tool cannot be (the reference's order).
            result = self._search_result(item.tools)
            turn = self._answer(index, item.call_id)
            if result is None:
                raise ConversionError(
                    f"input[{index}]: the enum variant ResponsesTool::Unsupported cannot be serialized"
                )
            turn.outputs[item.call_id] = conv.ToolMessage(tool_call_id=item.call_id, content=result)
            if any(map(_loads_definitions, item.tools)):
                announcement = conv.SystemMessage(content="", tools=[])
                turn.loads.append(announcement)
                self.loaded.append((announcement, item.tools))
        elif isinstance(item, wire.FunctionCallOutputItem):
            # A function output's content is converted (and its images checked) before it is paired.
            text, images = self._text_and_images(item.output, index, field="output")
            if item.call_id is None:
                # An output naming no call answers nothing: it is kept as a tool result on its own.
                self._close_turn()
                self.out.append(conv.ToolMessage(tool_call_id=None, content=text, images=images))
            else:
                self._answer(index, item.call_id).outputs[item.call_id] = conv.ToolMessage(
                    tool_call_id=item.call_id, content=text, images=images
                )
        elif isinstance(item, wire.CustomToolCallOutputItem):
            # A custom tool's output is paired first, then converted.
            turn = self._answer(index, item.call_id)
            text, images = self._text_and_images(item.output, index, field="output")
            turn.outputs[item.call_id] = conv.ToolMessage(
                tool_call_id=item.call_id, content=text, images=images
            )

    def _message_item(self, index: int, item: wire.MessageItem) -> None:
        if item.role == "assistant":
            if self.turn is not None and self.turn.calls:
                self._close_turn()
            text = self._assistant_content(item.content, index)
            turn = self._open_turn()
            if text:
                # Empty messages open a turn but add nothing to its content (no stray blank lines).
                turn.contents.append(text)
        else:
            self._close_turn()
            text, images = self._text_and_images(item.content, index, field="content")
            if item.role == "system" or item.role == "developer" and self.version != "v4":
                # V4 has no system turns in the middle of a conversation: a developer message is a user one.
                self.out.append(conv.SystemMessage(content=text, images=images))
            else:
                self.out.append(conv.UserMessage(content=text, images=images))

    def _answer(self, index: int, call_id: str) -> _Turn:
        """The turn whose call ``call_id`` an output answers (checked: once, and only a call of that turn)."""
        self._check_call_id(index, call_id)
        if call_id in self.answered:
            raise ConversionError(f"Duplicate tool output for call_id: {call_id}.")
        turn = self.turn
        if turn is None or call_id not in turn.call_ids:
            raise ConversionError(f"No tool call found for tool output with call_id {call_id}.")
        self.answered.add(call_id)
        return turn

    def _call(
        self, item: wire.FunctionCallItem | wire.CustomToolCallItem | wire.ToolSearchCallItem
    ) -> conv.ToolCall:
        if isinstance(item, wire.ToolSearchCallItem):
            return conv.ToolCall(
                id=item.call_id, name=TOOL_SEARCH_NAME, arguments=dumps_compact(item.arguments)
            )
        if isinstance(item, wire.CustomToolCallItem):
            # A custom tool's free-form input travels as the single ``input`` argument (behavior.md#apply-patch-tool).
            return conv.ToolCall(
                id=item.call_id, name=item.name, arguments=dumps_compact({"input": item.input})
            )
        name = item.name
        if item.namespace is not None:
            name = self._namespaced_call_name(item.namespace, name)
        return conv.ToolCall(id=item.call_id, name=name, arguments=item.arguments)

    def _namespaced_call_name(self, namespace: str, name: str) -> str:
        """The prompt name of a history call in ``namespace``: a namespace member's own prompt name; for a call
        that names no member, the joined name suffixed ``_1``, ``_2``… while it collides with a flat tool's name,
        a member's prompt name or the name of an earlier such call (so it never passes for another tool: on V4
        ``gh_`` + ``_x`` joins to ``gh__x``, the name of member ``gh``.``x``, and is ``gh__x_1``)."""
        names = self.call_names
        allocator = self.call_allocator
        if names is None or allocator is None:
            members = self._namespace_tool_map()
            names = self.call_names = {}
            for prompt_name, pair in members.items():
                names.setdefault(pair, prompt_name)
            allocator = self.call_allocator = _tools.NameAllocator(self._flat_names() | members.keys())
        found = names.get((namespace, name))
        if found is None:
            found = names[namespace, name] = allocator.take(
                _tools.namespaced_name(namespace, name, self.version)
            )
        return found

    def _check_loaded(self, index: int, tools: Sequence[wire.Tool]) -> None:
        """The checks of the tools a tool search output loads, tool by tool as in the tool list (names, custom
        tools, namespaces, a web search under ``responses_web_search="reject"``). Made for every output before
        any item is converted (the reference's order)."""
        for position, tool in enumerate(tools):
            path = f"input[{index}].tools[{position}]"
            if isinstance(tool, wire.FunctionTool):
                _tools.validate_tool_names([tool.name], path=f"{path}.name")
            elif isinstance(tool, wire.CustomTool):
                _check_custom_tool(tool.name)
            elif isinstance(tool, wire.NamespaceTool):
                _check_namespace(tool, path)
            elif isinstance(tool, wire.WebSearchTool):
                self._check_web_search()

    @staticmethod
    def _search_result(tools: Sequence[wire.Tool]) -> str | None:
        """A tool search output's text (its tools checked by :meth:`_check_loaded`): the loaded tools as compact
        JSON, in the form the response echoes them, namespace members one by one with their namespace. None when
        a hosted tool is among them (it has no JSON form; the caller refuses it once the output is paired)."""
        out: list[dict[str, Any]] = []
        hosted = False
        for tool in tools:
            if isinstance(tool, wire.NamespaceTool):
                namespace = {"name": tool.name, "description": tool.description or ""}
                for inner in tool.tools:
                    echoed = _echo_tool(inner)
                    assert echoed is not None
                    out.append({**echoed, "namespace": namespace})
                continue
            echoed = _echo_tool(tool)
            if echoed is None:  # a hosted tool: the reference cannot write it down either
                hosted = True
            else:
                out.append(echoed)
        return None if hosted else dumps_compact(out)

    @staticmethod
    def _check_call_id(index: int, call_id: str) -> None:
        if call_id == "":
            raise _body.empty_string_error(f"input[{index}].call_id")

    def _open_turn(self) -> _Turn:
        if self.turn is None:
            self.turn = _Turn()
        return self.turn

    def _close_turn(self) -> None:
        """Write the assistant turn being collected and the outputs of its calls, which must all be there."""
        turn, self.turn = self.turn, None
        if turn is not None:
            self.out.extend(turn.messages())

    # -- content (behavior.md#responses) ------------------------------------------------------------------------

    def _text_and_images(
        self, content: wire.Content, index: int, *, field: str
    ) -> tuple[str, list[conv.ImagePlaceholder]]:
        """User, system and tool-output content (the item's ``field``): text parts and image placeholders joined
        with a blank line, as text and the images placed in it. A plain string is its own text, with no images
        (every item of a history takes this way, without the parts' bookkeeping)."""
        if isinstance(content, str):
            return content, []
        converted = _convert.Content.of_parts(
            map(_plain_text, content), self._image_sources(content, index, f"input[{index}].{field}")
        )
        return converted.text, converted.images

    def _assistant_content(self, content: wire.Content, index: int) -> str:
        if isinstance(content, str):
            return content
        if self.version != "v4":
            self._image_refs(content, f"input[{index}].content")
            if any(isinstance(part, wire.ImagePart) for part in content):
                raise ConversionError(f"input[{index}]: Image in assistant message is unsupported")
        return _convert.PART_SEPARATOR.join(_plain_text(part) for part in content)

    def _image_sources(
        self, parts: Sequence[wire.ContentPart], index: int, parts_path: str
    ) -> list[conv.ImageSource | None]:
        """The image source of every part (``None`` for other parts, and for every part on V4, which has no
        images). All image parts are checked for a usable reference and a link of a length the reference takes,
        part by part, before any URL is looked at otherwise."""
        if self.version == "v4":
            return [None] * len(parts)
        refs = self._image_refs(parts, parts_path)
        return _images.checked_image_sources(refs, path=f"input[{index}]")

    @staticmethod
    def _image_refs(parts: Sequence[wire.ContentPart], parts_path: str) -> list[_images.ImageRef | None]:
        """The image of every image part (``None`` for other parts); refuses, in the parts' order, images given by
        file id or by nothing (an empty ``image_url`` is nothing) and links too long."""
        urls: list[_images.ImageRef | None] = []
        for position, part in enumerate(parts):
            if not isinstance(part, wire.ImagePart):
                urls.append(None)
                continue
            where = f"{parts_path}[{position}]"
            # An empty image_url counts as none (an empty file_id still counts as one).
            url = _images.reference_or_refuse(
                where, "input_image", part.image_url or None, part.file_id, _IMAGE_FIELDS
            )
            problem = _images.link_length_problem(url)
            if problem is not None:
                raise ConversionError(f"{where}: image_url {problem}")
            urls.append((url, part.detail))
        return urls


INBOUND = _convert.Inbound(PROTOCOL, wire.read_request, _Converter)
#: Convert a request body of this protocol (:meth:`~dscodec.protocols._convert.Inbound.parse`).
parse_request = INBOUND.parse


def _plain_text(part: wire.ContentPart) -> str:
    if isinstance(part, wire.TextPart):
        return part.text
    if isinstance(part, wire.FilePart):
        return UNSUPPORTED_DOCUMENT_TEXT
    return _images.UNSUPPORTED_IMAGE_TEXT


def _check_namespace(tool: wire.NamespaceTool, path: str) -> None:
    """A namespace's name and members (``path`` is where it stands: ``tools[0]``): no custom member, valid
    names, none repeated."""
    _tools.validate_tool_names([tool.name], path=f"{path}.name")
    seen: set[str] = set()
    for inner_index, inner in enumerate(tool.tools):
        if isinstance(inner, wire.CustomTool):
            raise ConversionError(
                "Currently custom tools are not allowed inside a namespace. Found custom tool "
                f"'{inner.name}' in {path}.tools[{inner_index}]."
            )
        _tools.validate_tool_names([inner.name], path=f"{path}.tools[{inner_index}].name")
        if inner.name in seen:
            raise ConversionError("Tool names within a namespace must be unique.")
        seen.add(inner.name)


def _check_custom_tool(name: str) -> None:
    if name != APPLY_PATCH_TOOL.name:
        raise ConversionError(f"Unsupported custom tool: '{name}'. Only 'apply_patch' is supported.")


def _is_client_search(tool: wire.Tool) -> bool:
    """A ``tool_search`` tool the client executes: on V4.1 the ``tool_search`` function."""
    return isinstance(tool, wire.ToolSearchTool) and tool.execution == "client"


def _loads_definitions(tool: wire.Tool) -> bool:
    """Whether a tool in a tool search output becomes a tool definition (on V4.1)."""
    if isinstance(tool, wire.NamespaceTool):
        return bool(tool.tools)
    return isinstance(tool, (wire.FunctionTool, wire.CustomTool)) or _is_client_search(tool)


def _offers_function(tool: wire.Tool) -> bool:
    """Whether a tool entry becomes at least one tool definition in the prompt."""
    if isinstance(tool, wire.NamespaceTool):
        return bool(tool.tools)
    return isinstance(tool, (wire.FunctionTool, wire.CustomTool))


def _flat_name(tool: wire.Tool) -> str | None:
    """The prompt name a tool takes as it is (functions, and the ``apply_patch`` custom tool)."""
    if isinstance(tool, wire.FunctionTool):
        return tool.name
    if isinstance(tool, wire.CustomTool):
        return APPLY_PATCH_TOOL.name
    return None


def _format_name(fmt: wire.TextFormat) -> conv.ResponseFormat:
    return "json_schema" if isinstance(fmt, wire.JsonSchemaFormat) else fmt


# -- echo (behavior.md#responses-events) ---------------------------------------------------------------------------


def _echo(req: wire.ResponsesRequest) -> dict[str, Any]:
    """The request settings a Responses response object repeats, in wire spelling (behavior.md#responses ``echo()``, behavior.md#responses-events).

    Scalars are echoed as the request gave them (not as resolved for sampling); ``metadata`` is always ``{}``
    and hosted tools other than web search and tool search are left out, as in the reference's response objects.
    """
    reasoning = req.reasoning or wire.ReasoningConfig()
    text = req.text or wire.TextConfig()
    return {
        "instructions": req.instructions,
        "max_output_tokens": req.max_output_tokens,
        "temperature": 1.0 if req.temperature is None else req.temperature,
        "top_p": 1.0 if req.top_p is None else req.top_p,
        "top_logprobs": 0 if req.top_logprobs is None else req.top_logprobs,
        "user": req.user,
        "metadata": {},
        "tools": [echoed for echoed in map(_echo_tool, req.tools or ()) if echoed is not None],
        "tool_choice": _echo_tool_choice(req.tool_choice),
        "text": {"format": _echo_format(text.format), "verbosity": text.verbosity},
        "reasoning": {
            "effort": reasoning.effort,
            "summary": reasoning.summary if reasoning.summary is not None else reasoning.generate_summary,
        },
    }


def _echo_tool(tool: wire.Tool | wire.FunctionTool | wire.CustomTool) -> dict[str, Any] | None:
    if isinstance(tool, wire.FunctionTool):
        return {"type": "function", **_fields(tool, "name", "description", "parameters", "strict")}
    if isinstance(tool, wire.CustomTool):
        return {"type": "custom", "name": tool.name}
    if isinstance(tool, wire.NamespaceTool):
        return {
            "type": "namespace",
            "name": tool.name,
            "description": tool.description,
            "tools": [_echo_tool(inner) for inner in tool.tools],
        }
    if isinstance(tool, wire.ToolSearchTool):
        return {"type": "tool_search", **_fields(tool, "execution", "description", "parameters")}
    if isinstance(tool, wire.WebSearchTool):
        location = tool.user_location
        return {
            "type": tool.type,
            "search_context_size": tool.search_context_size,
            "user_location": None
            if location is None
            else _fields(location, "city", "country", "region", "timezone"),
        }
    return None


def _echo_tool_choice(choice: wire.ToolChoice | None) -> Any:
    if choice is None:
        return "auto"
    if isinstance(choice, wire.NamedToolChoice):
        return {"type": choice.type, "name": choice.name}
    if isinstance(choice, wire.WebSearchChoice):
        return {"type": choice.type}
    return choice


def _echo_format(fmt: wire.TextFormat) -> dict[str, Any]:
    if isinstance(fmt, wire.JsonSchemaFormat):
        return {"type": "json_schema", **_fields(fmt, "name", "schema", "description", "strict")}
    return {"type": fmt}


def _fields(value: object, *names: str) -> dict[str, Any]:
    """The named attributes of ``value``, in that order, as the response echoes them."""
    return {name: getattr(value, name) for name in names}
