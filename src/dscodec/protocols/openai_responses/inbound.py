"""OpenAI Responses request -> :class:`~dscodec.conversation.ConversationRequest` (spec §1, §2.2, §2.5–§2.7).

:func:`parse_request` is the single entry point. It reads the body (:mod:`.models`), then applies the
protocol's rules in the reference's order: model; the tool list, tool by tool (custom tools, server tools,
names); the presence of input; the input items one by one; a server-tool ``tool_choice``; tool schemas and
names; ``tool_choice``; the ``json`` word; the response format; the sampling fields. A request breaking several
rules gets the same error as from the reference. Every error leaves as a
:class:`~dscodec.errors.ConversionError` bound to the OpenAI error body.

Input items become conversation messages as the reference groups them (§2.2), observed as follows:

* an assistant turn collects, in this order, reasoning items, assistant messages and tool calls; an item that
  would go back in that order (reasoning after a message or a call, a message after a call) starts a new turn;
* the outputs of a turn's calls follow it, each call answered once; a call that arrives while some output of
  the turn is still missing joins the turn, and any other item ends the turn, which needs all its outputs then;
* a turn's calls, and their outputs, are written sorted by call id;
* ``item_reference`` items leave no trace, nor do reasoning items without text (except that they end a turn
  that has calls).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dscodec import conversation as conv
from dscodec._json import dumps_compact
from dscodec.errors import ConversionError
from dscodec.options import ConversionOptions
from dscodec.prompt.dialects import APPLY_PATCH_TOOL
from dscodec.protocols import _shared as rules
from dscodec.protocols.errors import openai_error_body
from dscodec.protocols.openai_responses import models as wire

__all__ = ["parse_request"]

PROTOCOL: conv.Protocol = "responses"

#: Text standing for an image on the V4 template, which has no image token (§2.2, as in Chat §2.1.1).
UNSUPPORTED_IMAGE_TEXT = "[Unsupported Image]"
#: Text standing for an ``input_file`` part, on both templates (§2.2).
UNSUPPORTED_DOCUMENT_TEXT = "[Unsupported Document]"

#: The ``apply_patch`` tool per template. The V4.1 template's description has a blank line after
#: "high‑level envelope:" where the V4 one (spec §3.9) has a single line break; observed against the reference.
APPLY_PATCH_TOOLS: Mapping[conv.ModelVersion, conv.ToolDefinition] = {
    "v4": APPLY_PATCH_TOOL,
    "v4.1": APPLY_PATCH_TOOL.model_copy(
        update={
            "description": (APPLY_PATCH_TOOL.description or "").replace(
                "envelope:\n*** Begin Patch", "envelope:\n\n*** Begin Patch", 1
            )
        }
    ),
}

#: How a namespaced tool's name is joined with its namespace, per template (``gh__x`` / ``gh::x``).
NAMESPACE_SEPARATORS: Mapping[conv.ModelVersion, str] = {"v4": "__", "v4.1": "::"}

_PART_SEPARATOR = "\n\n"
#: Reasoning texts (content parts and consecutive reasoning items) are joined with one newline.
_REASONING_SEPARATOR = "\n"


def parse_request(
    body: str | bytes | Mapping[str, Any], *, options: ConversionOptions | None = None
) -> conv.ConversationRequest:
    """Convert a Responses request body into a conversation plus inference and parsing options.

    Args:
        body: the request body as JSON text (``str`` or UTF-8 ``bytes``) or already parsed.
        options: the serving side's conversion policy; the reference's defaults when omitted.

    Returns:
        The conversion result (``protocol="responses"``, ``model`` = the requested name), with ``echo`` holding
        the settings a Responses response object repeats and ``namespace_tool_map`` the namespaced tools.

    Raises:
        ConversionError: the body is malformed (bad JSON, wrong types, missing fields: deviation D2), contains
            an input item of an unknown type (deviation D9) or breaks a rule of the protocol; ``exc.body`` is the
            OpenAI error envelope.

    Examples:
        >>> req = parse_request('{"model": "DeepSeek-V4-Pro", "instructions": "Be brief.", "input": "Hi"}')
        >>> [(m.role, m.content) for m in req.conversation.messages]
        [('system', 'Be brief.'), ('user', 'Hi')]
        >>> req.echo["instructions"], req.echo["temperature"]
        ('Be brief.', 1.0)
    """
    try:
        request = rules.read_body(body, wire.read_request)
        return _Converter(request, options or ConversionOptions()).convert()
    except ConversionError as exc:
        raise exc.bind(PROTOCOL, openai_error_body) from None


@dataclass
class _Content:
    """Converted content: the text and the image placeholders in it."""

    text: str
    images: list[conv.ImagePlaceholder] = field(default_factory=list)


@dataclass
class _Turn:
    """An assistant turn being collected: reasoning, message texts and calls, then the outputs of the calls."""

    reasoning: list[str] = field(default_factory=list)
    contents: list[str] = field(default_factory=list)
    calls: list[conv.ToolCall] = field(default_factory=list)
    #: The ids of ``calls``, for pairing outputs in constant time.
    call_ids: set[str] = field(default_factory=set)
    outputs: dict[str, conv.ToolMessage] = field(default_factory=dict)

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
            content=_PART_SEPARATOR.join(self.contents),
            reasoning=_REASONING_SEPARATOR.join(self.reasoning) if self.reasoning else None,
            tool_calls=calls,
        )
        return [assistant, *(self.outputs[call.id] for call in calls)]


@dataclass
class _Converter:
    request: wire.ResponsesRequest
    options: ConversionOptions
    version: conv.ModelVersion = "v4"
    out: list[conv.Message] = field(default_factory=list)
    turn: _Turn | None = None
    call_ids: set[str] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)
    #: ``_flat_names()``, computed once.
    flat_names: frozenset[str] | None = None
    #: Joined name of a namespaced call (before suffixing) -> its prompt name; the flat names never change.
    call_names: dict[str, str] = field(default_factory=dict)

    def convert(self) -> conv.ConversationRequest:
        req = self.request
        self.version = rules.resolve_model(req.model, self.options)
        effort = req.reasoning.effort if req.reasoning is not None else None
        thinking = rules.resolve_thinking(
            None, effort, default_thinking_mode=self.options.default_thinking_mode
        )
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
        fmt = req.text.format if req.text is not None else "text"
        if fmt == "json_object" and not rules.contains_json_word(m.content for m in messages):
            raise ConversionError(
                "Response input messages must contain the word 'json' in some form to use 'text.format' of type "
                "'json_object'."
            )

        response_schema: Any = None
        format_constraint: conv.OutputConstraint | None = None
        if fmt == "json_object":
            format_constraint = conv.OutputConstraint(kind="json", schema="")
        elif isinstance(fmt, wire.JsonSchemaFormat):
            response_schema = fmt.schema
            schema = fmt.schema
            if fmt.strict is True:
                schema = rules.normalize_strict_schema(schema, target="response_format")
            else:
                rules.validate_json_schema_value(schema)
            format_constraint = conv.OutputConstraint(kind="json", schema=dumps_compact(schema))
        strict = [tool.strict is True for tool in tools]
        if any(strict):
            # Strict tools are all-or-nothing and exclude any response format but text (as in Chat).
            if not all(strict):
                raise ConversionError("Cannot use strict tool with non-strict tool in the same request")
            if fmt != "text":
                raise ConversionError("response_format should not be used with tools")
        rules.check_temperature(req.temperature)
        rules.check_top_p(req.top_p)
        if req.top_logprobs is not None:
            # Asking for top_logprobs is asking for logprobs: Responses has no separate switch (§2.2).
            rules.check_top_logprobs_range(req.top_logprobs)
        rules.check_max_tokens(req.max_output_tokens, thinking=thinking, options=self.options)

        constraint = (
            rules.tool_call_constraint(tools, required=tool_choice == "required")
            if tools
            else format_constraint
        )
        conversation = conv.Conversation(
            messages=messages,
            thinking_mode=thinking,
            reasoning_effort=rules.resolve_effort(thinking, effort),
            tools=tools,
            tool_choice=tool_choice,
            response_format=_format_name(fmt),
            response_schema=response_schema,
        )
        inference = conv.InferenceOptions(
            temperature=rules.resolve_temperature(thinking, req.temperature),
            top_p=rules.resolve_top_p(self.version, thinking, req.top_p, tools_active=bool(tools)),
            max_tokens=req.max_output_tokens,
            logprobs=req.top_logprobs is not None,
            top_logprobs=req.top_logprobs,
            output_constraint=constraint,
        )
        parsing = conv.ParsingOptions(
            parse_tool_calls=bool(tools),
            starts_in_tool_calls=tool_choice == "required",
            parse_json_output=fmt == "json_object",
            thinking_initial_stage="reasoning_start" if thinking else None,
        )
        return conv.ConversationRequest(
            protocol=PROTOCOL,
            model=req.model,
            model_version=self.version,
            stream=req.stream is True,
            conversation=conversation,
            inference_options=inference,
            parsing_options=parsing,
            echo=_echo(req),
            namespace_tool_map=self._namespace_tool_map(),
        )

    # -- tools (§2.2, §2.5, §3.9) ---------------------------------------------------------------------------

    def _check_tool_list(self) -> None:
        """The checks the reference makes on the tool list before it reads the input, tool by tool."""
        for index, tool in enumerate(self.request.tools or ()):
            if isinstance(tool, wire.FunctionTool):
                rules.validate_tool_names([tool.name], path=f"tools[{index}].name")
            elif isinstance(tool, wire.CustomTool):
                _check_custom_tool(tool.name)
            elif isinstance(tool, wire.NamespaceTool):
                rules.validate_tool_names([tool.name], path=f"tools[{index}].name")
                seen: set[str] = set()
                for inner_index, inner in enumerate(tool.tools):
                    if isinstance(inner, wire.CustomTool):
                        raise ConversionError(
                            "Currently custom tools are not allowed inside a namespace. Found custom tool "
                            f"'{inner.name}' in tools[{index}].tools[{inner_index}]."
                        )
                    rules.validate_tool_names([inner.name], path=f"tools[{index}].tools[{inner_index}].name")
                    if inner.name in seen:
                        raise ConversionError("Tool names within a namespace must be unique.")
                    seen.add(inner.name)
            elif isinstance(tool, wire.WebSearchTool):
                self._check_web_search()

    def _check_web_search(self) -> None:
        if self.options.responses_web_search == "reject":
            raise ConversionError("Server tools are not supported")

    def _namespaced_names(self) -> list[str]:
        """The prompt name of every namespace member, in request order.

        Flat names are taken as they are; a member gets ``<namespace><sep><name>``, suffixed ``_1``, ``_2``…
        while that collides with any flat name or an earlier member's name.
        """
        separator = NAMESPACE_SEPARATORS[self.version]
        allocator = _NameAllocator(self._flat_names())
        names: list[str] = []
        for tool in self.request.tools or ():
            if isinstance(tool, wire.NamespaceTool):
                for inner in tool.tools:
                    names.append(allocator.take(f"{tool.name}{separator}{inner.name}"))
        return names

    def _flat_names(self) -> frozenset[str]:
        """The names tools take as they are: functions, and ``apply_patch`` for the custom tool."""
        if self.flat_names is None:
            tools = self.request.tools or ()
            self.flat_names = frozenset(name for name in map(_flat_name, tools) if name is not None)
        return self.flat_names

    def _namespace_tool_map(self) -> dict[str, tuple[str, str]]:
        """Prompt name -> (namespace, name) of every namespace member, whatever ``tool_choice`` says."""
        members = [
            (tool.name, inner.name)
            for tool in self.request.tools or ()
            if isinstance(tool, wire.NamespaceTool)
            for inner in tool.tools
        ]
        return dict(zip(self._namespaced_names(), members))

    def _tools(self) -> list[conv.ToolDefinition]:
        """The tool definitions in request order, schemas checked (§2.2, §2.5)."""
        if self.request.tool_choice == "none":
            # The tools vanish before their schemas are looked at (only their names were checked).
            return []
        namespaced = iter(self._namespaced_names())
        tools: list[conv.ToolDefinition] = []
        # The names of ``tools`` so far: a function or custom tool must not repeat any of them (checked before
        # its schema), namespace members never do (their names were made unique).
        names: set[str] = set()
        for tool in self.request.tools or ():
            if isinstance(tool, wire.FunctionTool):
                if tool.name in names:
                    raise ConversionError("Tool names must be unique.")
                tools.append(_definition(tool, tool.name, tool.description))
            elif isinstance(tool, wire.CustomTool):
                if APPLY_PATCH_TOOL.name in names:
                    raise ConversionError("Tool names must be unique.")
                tools.append(APPLY_PATCH_TOOLS[self.version].model_copy(deep=True))
            elif isinstance(tool, wire.NamespaceTool):
                for inner in tool.tools:
                    assert isinstance(inner, wire.FunctionTool)  # custom members were refused before
                    description = self._namespaced_description(tool, inner)
                    tools.append(_definition(inner, next(namespaced), description))
                    names.add(tools[-1].name)
                continue
            else:
                continue
            names.add(tools[-1].name)
        return tools

    def _namespaced_description(self, namespace: wire.NamespaceTool, tool: wire.FunctionTool) -> str | None:
        # V4.1 prefixes the namespace's description (when not empty) to each member's; V4 drops it.
        if self.version == "v4" or not namespace.description:
            return tool.description
        return f"{namespace.description}\n{tool.description or ''}"

    def _tool_choice(
        self, tools: list[conv.ToolDefinition], thinking: bool
    ) -> tuple[conv.ToolChoice, list[conv.ToolDefinition]]:
        choice = self.request.tool_choice or "auto"
        if isinstance(choice, wire.WebSearchChoice):
            choice = "auto"  # the server tool was dropped (a rejected one was refused before)
        if isinstance(choice, wire.NamedToolChoice):
            # Function and custom choices both look the tool up by its prompt name.
            return rules.resolve_tool_choice("required", choice.name, tools, thinking=thinking)
        return rules.resolve_tool_choice(choice, None, tools, thinking=thinking)

    # -- input items (§2.2) -------------------------------------------------------------------------------------

    def _messages(self, thinking: bool) -> list[conv.Message]:
        req = self.request
        if req.instructions:
            self.out.append(conv.SystemMessage(content=req.instructions))
        if isinstance(req.input, str):
            self.out.append(conv.UserMessage(content=req.input))
        else:
            for index, item in enumerate(req.input or ()):
                self._item(index, item)
            self._close_turn()
        self._fill_reasoning(thinking)
        return self.out

    def _item(self, index: int, item: wire.InputItem) -> None:
        if isinstance(item, wire.ItemReference):
            return  # points at stored state dscodec does not have; the reference drops it too
        if isinstance(item, wire.UnknownItem):
            # Deviation D9: the reference drops unknown items silently, which loses what they carried.
            raise ConversionError(
                f"Unsupported input item type '{item.type}' at input[{index}]: dscodec converts message, "
                "function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning "
                "and item_reference items.",
                param=f"input[{index}].type",
            )
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
        elif isinstance(item, (wire.FunctionCallItem, wire.CustomToolCallItem)):
            self._check_call_id(index, item.call_id)
            if item.call_id in self.call_ids:
                raise ConversionError(f"Duplicate 'call_id': {item.call_id}.")
            self.call_ids.add(item.call_id)
            if self.turn is not None and self.turn.outputs and self.turn.answered:
                # A call after the outputs of every earlier call starts a new turn; while some output is still
                # missing, the call joins the turn being answered.
                self._close_turn()
            self._open_turn().add_call(self._call(item))
        elif isinstance(item, wire.FunctionCallOutputItem):
            # A function output's content is converted (and its images checked) before it is paired.
            content = self._content(item.output, index, parts_path=f"input[{index}].output")
            if item.call_id is None:
                # An output naming no call answers nothing: it is kept as a tool result on its own.
                self._close_turn()
                self.out.append(conv.ToolMessage(content=content.text, images=content.images))
            else:
                self._answer(index, item.call_id).outputs[item.call_id] = conv.ToolMessage(
                    tool_call_id=item.call_id, content=content.text, images=content.images
                )
        elif isinstance(item, wire.CustomToolCallOutputItem):
            # A custom tool's output is paired first, then converted.
            turn = self._answer(index, item.call_id)
            content = self._content(item.output, index, parts_path=f"input[{index}].output")
            turn.outputs[item.call_id] = conv.ToolMessage(
                tool_call_id=item.call_id, content=content.text, images=content.images
            )
        elif item.role == "assistant":
            if self.turn is not None and self.turn.calls:
                self._close_turn()
            text = self._assistant_content(item.content, index)
            turn = self._open_turn()
            if text:
                # Empty messages open a turn but add nothing to its content (no stray blank lines).
                turn.contents.append(text)
        else:
            self._close_turn()
            content = self._content(item.content, index, parts_path=f"input[{index}].content")
            if item.role == "system" or item.role == "developer" and self.version != "v4":
                # V4 has no system turns in the middle of a conversation: a developer message is a user one.
                self.out.append(conv.SystemMessage(content=content.text, images=content.images))
            else:
                self.out.append(conv.UserMessage(content=content.text, images=content.images))

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

    def _call(self, item: wire.FunctionCallItem | wire.CustomToolCallItem) -> conv.ToolCall:
        if isinstance(item, wire.CustomToolCallItem):
            # A custom tool's free-form input travels as the single ``input`` argument (§3.9).
            return conv.ToolCall(
                id=item.call_id, name=item.name, arguments=dumps_compact({"input": item.input})
            )
        name = item.name
        if item.namespace is not None:
            # Joined as a namespace member's name is, suffixed ``_1``, ``_2``… while it collides with a flat
            # tool's name (the other members' names do not count, so ``gh`` + ``x`` is ``gh__x`` even when two
            # members were named ``gh__x`` and ``gh__x_1``). The flat names are fixed, so each joined name is
            # resolved once.
            joined = f"{item.namespace}{NAMESPACE_SEPARATORS[self.version]}{name}"
            name = self.call_names.get(joined, "")
            if not name:
                name = self.call_names[joined] = _first_free(joined, self._flat_names())[0]
        return conv.ToolCall(id=item.call_id, name=name, arguments=item.arguments)

    @staticmethod
    def _check_call_id(index: int, call_id: str) -> None:
        if call_id == "":
            raise ConversionError(
                f"Invalid 'input[{index}].call_id': empty string. Expected a string with minimum length 1, but "
                "got an empty string instead."
            )

    def _open_turn(self) -> _Turn:
        if self.turn is None:
            self.turn = _Turn()
        return self.turn

    def _close_turn(self) -> None:
        """Write the assistant turn being collected and the outputs of its calls, which must all be there."""
        turn, self.turn = self.turn, None
        if turn is not None:
            self.out.extend(turn.messages())

    def _fill_reasoning(self, thinking: bool) -> None:
        """Thinking mode needs every assistant turn's reasoning; fill or reject missing ones (§2.2, §2.1.2)."""
        if not thinking:
            for message in self.out:
                if isinstance(message, conv.AssistantMessage):
                    message.reasoning = None
            return
        last_user = max((i for i, m in enumerate(self.out) if isinstance(m, conv.UserMessage)), default=-1)
        reject = self.options.reasoning_content_behavior == "reject"
        # The current agentic turn: assistant messages after the last user message, in a request that offers
        # function tools (whatever tool_choice says; server tools do not count) or for messages that call tools.
        offers_tools = any(_offers_function(tool) for tool in self.request.tools or ())
        for position, message in enumerate(self.out):
            if not isinstance(message, conv.AssistantMessage) or message.reasoning is not None:
                continue
            if reject and position > last_user and (offers_tools or message.tool_calls):
                raise ConversionError(
                    "The `reasoning_text` in the thinking mode must be passed back to the API."
                )
            message.reasoning = ""

    # -- content (§2.2) -----------------------------------------------------------------------------------------

    def _content(self, content: wire.Content, index: int, *, parts_path: str) -> _Content:
        """User, system and tool-output content: text parts and image placeholders joined with a blank line."""
        if isinstance(content, str):
            return _Content(content)
        sources = self._image_sources(content, index, parts_path)
        pieces: list[str] = []
        images: list[conv.ImagePlaceholder] = []
        offset = 0
        for part, source in zip(content, sources):
            if pieces:
                offset += len(_PART_SEPARATOR)
            if isinstance(part, wire.TextPart):
                piece = part.text
            elif isinstance(part, wire.FilePart):
                piece = UNSUPPORTED_DOCUMENT_TEXT
            elif source is None:
                piece = UNSUPPORTED_IMAGE_TEXT
            else:
                images.append(conv.ImagePlaceholder(offset=offset, source=source))
                piece = rules.IMAGE_TOKEN
            pieces.append(piece)
            offset += len(piece)
        return _Content(_PART_SEPARATOR.join(pieces), images)

    def _assistant_content(self, content: wire.Content, index: int) -> str:
        if isinstance(content, str):
            return content
        if self.version != "v4":
            self._image_urls(content, f"input[{index}].content")
            if any(isinstance(part, wire.ImagePart) for part in content):
                raise ConversionError(f"input[{index}]: Image in assistant message is unsupported")
        return _PART_SEPARATOR.join(_plain_text(part) for part in content)

    def _image_sources(
        self, parts: Sequence[wire.ContentPart], index: int, parts_path: str
    ) -> list[conv.ImageSource | None]:
        """The image source of every part (``None`` for other parts, and for every part on V4, which has no
        images). All image parts are checked for a usable reference before any URL is looked at."""
        if self.version == "v4":
            return [None] * len(parts)
        urls = self._image_urls(parts, parts_path)
        path = f"input[{index}]"
        sources: list[conv.ImageSource | None] = []
        for part, url in zip(parts, urls):
            if url is None or not isinstance(part, wire.ImagePart):
                sources.append(None)
                continue
            check = rules.image_source_for_url(url, detail=part.detail, path=path)
            if check.source is None:
                raise ConversionError(f"{path}: {check.error}")
            sources.append(check.source)
        return sources

    @staticmethod
    def _image_urls(parts: Sequence[wire.ContentPart], parts_path: str) -> list[str | None]:
        """The URL of every image part (``None`` for other parts); refuses images given by file id or by nothing."""
        urls: list[str | None] = []
        for position, part in enumerate(parts):
            if not isinstance(part, wire.ImagePart):
                urls.append(None)
                continue
            where = f"{parts_path}[{position}]"
            if part.image_url is None and part.file_id is None:
                raise ConversionError(f"{where}: input_image must have image_url or file_id")
            if part.image_url is not None and part.file_id is not None:
                raise ConversionError(f"{where}: input_image cannot have both image_url and file_id")
            if part.file_id is not None:
                raise ConversionError(
                    f"{where}: file_id is not supported. Pass the image as a base64 data url instead."
                )
            urls.append(part.image_url)
        return urls


def _plain_text(part: wire.ContentPart) -> str:
    if isinstance(part, wire.TextPart):
        return part.text
    if isinstance(part, wire.FilePart):
        return UNSUPPORTED_DOCUMENT_TEXT
    return UNSUPPORTED_IMAGE_TEXT


def _check_custom_tool(name: str) -> None:
    if name != APPLY_PATCH_TOOL.name:
        raise ConversionError(f"Unsupported custom tool: '{name}'. Only 'apply_patch' is supported.")


def _first_free(base: str, taken: Container[str], start: int = 0) -> tuple[str, int]:
    """The first of ``base``, ``base_1``, ``base_2``… not in ``taken``, and its suffix number (0 for ``base``).

    The search starts at suffix ``start``: the caller knows the names before it are taken.
    """
    suffix = start
    name = base if suffix == 0 else f"{base}_{suffix}"
    while name in taken:
        suffix += 1
        name = f"{base}_{suffix}"
    return name, suffix


class _NameAllocator:
    """Hands out unique names: ``base``, or the first of ``base_1``, ``base_2``… not taken yet.

    Names are only ever added, so a suffix found taken stays taken: each base remembers where its last search
    ended, and the next search for it starts there. Handing out ``n`` names with one base costs ``O(n)`` lookups
    in total, not ``O(n²)``.
    """

    def __init__(self, taken: Iterable[str]) -> None:
        self.taken = set(taken)
        self.next_suffix: dict[str, int] = {}

    def take(self, base: str) -> str:
        """The first free name for ``base``, now taken."""
        name, self.next_suffix[base] = _first_free(base, self.taken, self.next_suffix.get(base, 0))
        self.taken.add(name)
        return name


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


def _definition(tool: wire.FunctionTool, name: str, description: str | None) -> conv.ToolDefinition:
    """A function tool with its schema checked (strict ones normalised, §2.5); ``defer_loading`` is ignored."""
    parameters: Any
    if tool.strict is True:
        source = tool.parameters if tool.parameters is not None else {"type": "object"}
        parameters = rules.normalize_strict_schema(source, target="tool")
    elif tool.parameters is None:
        parameters = {}
    else:
        rules.validate_function_parameters(name, tool.parameters)
        parameters = tool.parameters
    return conv.ToolDefinition(name=name, description=description, parameters=parameters, strict=tool.strict)


def _format_name(fmt: wire.TextFormat) -> conv.ResponseFormat:
    return "json_schema" if isinstance(fmt, wire.JsonSchemaFormat) else fmt


# -- echo (§5.8) ---------------------------------------------------------------------------------------------------


def _echo(req: wire.ResponsesRequest) -> dict[str, Any]:
    """The request settings a Responses response object repeats, in wire spelling (§2.2 ``echo()``, §5.8).

    Scalars are echoed as the request gave them (not as resolved for sampling); ``metadata`` is always ``{}``
    and hosted tools other than web search are left out, as in the reference's response objects.
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
        return {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": tool.strict,
        }
    if isinstance(tool, wire.CustomTool):
        return {"type": "custom", "name": tool.name}
    if isinstance(tool, wire.NamespaceTool):
        return {
            "type": "namespace",
            "name": tool.name,
            "description": tool.description,
            "tools": [_echo_tool(inner) for inner in tool.tools],
        }
    if isinstance(tool, wire.WebSearchTool):
        location = tool.user_location
        return {
            "type": tool.type,
            "search_context_size": tool.search_context_size,
            "user_location": None
            if location is None
            else {
                "city": location.city,
                "country": location.country,
                "region": location.region,
                "timezone": location.timezone,
            },
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
        return {
            "type": "json_schema",
            "name": fmt.name,
            "schema": fmt.schema,
            "description": fmt.description,
            "strict": fmt.strict,
        }
    return {"type": fmt}
