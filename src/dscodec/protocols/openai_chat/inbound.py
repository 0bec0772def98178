"""Chat Completions request -> :class:`~dscodec.conversation.ConversationRequest` (behavior.md#request-path, behavior.md#chat-completions, behavior.md#json-schemas to behavior.md#parsing-options).

:func:`parse_request` is the single entry point. It reads the body (:mod:`.models`), then applies the
protocol's rules in the reference's validation order (behavior.md#chat-check-order: model, tools, messages, response format, tool
choice, then the sampling fields), so that a request breaking several rules gets the same error as from the
reference. Every error leaves as a :class:`~dscodec.errors.ConversionError` bound to the OpenAI error body.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dscodec import conversation as conv
from dscodec.errors import ConversionError
from dscodec.protocols import _constraints, _convert, _images, _sampling, _tools
from dscodec.protocols.openai_chat import ChatWire
from dscodec.protocols.openai_chat import models as wire

__all__ = ["INBOUND", "parse_request"]

PROTOCOL: conv.Protocol = "chat_completions"
#: A file part's two fields, as the messages for neither and for both name them.
_FILE_FIELDS = ("a file_id or file_data", "file_id and file_data")


@dataclass
class _Converter(_convert.RequestConverter[wire.ChatCompletionRequest]):
    protocol = PROTOCOL

    def convert(self) -> conv.ConversationRequest:
        # The order of the checks below is the reference's (behavior.md#chat-check-order, refined by differential testing): a request
        # breaking several rules gets the error of the first one.
        req = self.request
        thinking = self.start(req.thinking, req.reasoning_effort)
        wire_tools = req.tools or ()
        _tools.validate_tool_names([t.name for t in wire_tools])
        messages = self._messages(thinking)
        response_format = req.response_format or "text"
        if response_format == "json_object" and not _constraints.contains_json_word(
            m.content for m in messages
        ):
            raise ConversionError(
                "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'."
            )
        tools = self._tools()
        response_schema: Any = None
        response_regex: str | None = None
        format_constraint: conv.OutputConstraint | None = None
        if isinstance(response_format, wire.JsonSchemaFormat):
            response_schema = response_format.schema
        elif isinstance(response_format, wire.RegexFormat):
            response_regex = response_format.regex
            format_constraint = conv.OutputConstraint(kind="regex", schema=response_format.regex)

        tool_choice, tools = self._tool_choice(tools, thinking)
        self._check_prefix(messages)

        stop = req.stop or ()
        _sampling.check_stop(stop, is_list=req.stop_is_list)
        if req.stream_options and req.stream is not True:
            raise ConversionError("stream_options should be set along with stream = true")
        if isinstance(response_format, wire.JsonSchemaFormat):
            # The schema is checked only here, when the constraint is built (the reference's order).
            format_constraint = _constraints.json_schema_constraint(
                response_format.schema, strict=response_format.strict
            )
        # Chat refuses any response_format with strict tools, {"type": "text"} too (Responses takes text).
        _constraints.check_strict_tools(tools, text_format=req.response_format is None)
        if req.n is not None and req.n != 1:
            raise ConversionError("Invalid n value (currently only n = 1 is supported)")
        _sampling.check_penalty("presence_penalty", req.presence_penalty)
        _sampling.check_penalty("frequency_penalty", req.frequency_penalty)
        self.check_sampling()
        _sampling.check_top_logprobs(req.top_logprobs, req.logprobs)
        # Deviation D4: the reference ignores max_completion_tokens. dscodec honours it as the output limit,
        # and when both fields are sent the newer max_completion_tokens wins (max_tokens is its deprecated
        # alias in the OpenAI API); both are range-checked, with the same message.
        _sampling.check_max_tokens(req.max_tokens, thinking=thinking, options=self.options)
        _sampling.check_max_tokens(req.max_completion_tokens, thinking=thinking, options=self.options)
        max_tokens = req.max_completion_tokens if req.max_completion_tokens is not None else req.max_tokens
        _sampling.check_seed(req.seed)
        # Deviation D16, checked after every rule of the reference (which accepts stop strings of any length).
        _sampling.check_stop_lengths(stop, field="stop", is_list=req.stop_is_list)

        return self.finish(
            messages,
            tools,
            tool_choice,
            max_tokens=max_tokens,
            response_format=_format_name(response_format),
            response_schema=response_schema,
            response_regex=response_regex,
            format_constraint=format_constraint,
            logprobs=req.logprobs is True,
            top_logprobs=req.top_logprobs,
            seed=req.seed,
            initial_stage=_initial_stage(messages),
            stop=stop,
            wire=ChatWire(include_usage=req.include_usage),
        )

    # -- tools (behavior.md#tools-and-tool-choice, behavior.md#json-schemas) -------------------------------

    def _tools(self) -> list[conv.ToolDefinition]:
        """Tools with checked schemas: per tool a new name, then its schema (the name syntax was checked before
        the messages, the strict rules come later)."""
        wire_tools = self.request.tools or ()
        if self.request.tool_choice == "none":
            # The tools vanish before their schemas are looked at (only their names were checked).
            return []
        return _tools.unique_definitions(
            wire_tools,
            lambda tool: _tools.function_definition(
                tool.name, tool.description, tool.parameters, strict=tool.strict
            ),
        )

    def _tool_choice(
        self, tools: list[conv.ToolDefinition], thinking: bool
    ) -> tuple[conv.ToolChoice, list[conv.ToolDefinition]]:
        choice = self.request.tool_choice or "auto"
        if isinstance(choice, wire.NamedToolChoice):
            return _tools.resolve_tool_choice("required", choice.name, tools, thinking=thinking)
        return _tools.resolve_tool_choice(choice, None, tools, thinking=thinking)

    # -- messages (behavior.md#chat-content-parts to behavior.md#chat-tool-messages) -----------------------

    def _messages(self, thinking: bool) -> list[conv.Message]:
        wire_messages = self.request.messages
        if not wire_messages:
            raise ConversionError("Empty input messages")
        out: list[conv.Message] = []
        index = 0
        while index < len(wire_messages):
            message = wire_messages[index]
            if isinstance(message, wire.SystemMessage):
                text, images = self._text_and_images(message.content, index)
                # The reference drops system messages that end up empty.
                if text:
                    out.append(conv.SystemMessage(content=text, images=images))
            elif isinstance(message, wire.UserMessage):
                text, images = self._text_and_images(message.content, index)
                out.append(conv.UserMessage(content=text, images=images))
            elif isinstance(message, wire.LatestReminderMessage):
                out.append(conv.LatestReminderMessage(content=message.content))
            elif isinstance(message, wire.ToolMessage):
                raise ConversionError(
                    "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
                )
            else:
                index = self._assistant_turn(index, out)
                continue
            index += 1
        # The request offers tools whatever tool_choice says.
        _convert.fill_reasoning(
            out,
            thinking=thinking,
            options=self.options,
            offers_tools=bool(self.request.tools),
            reasoning_field="reasoning_content",
        )
        last = len(out) - 1
        for position, converted in enumerate(out):
            if isinstance(converted, conv.AssistantMessage) and converted.prefix and position != last:
                raise ConversionError(
                    "Invalid completion message: prefix set true with message which is not final message or "
                    "message role is not assistant"
                )
        return out

    def _assistant_turn(self, index: int, out: list[conv.Message]) -> int:
        """Convert the assistant message at ``index`` and the tool messages answering it; the next index."""
        message = self.request.messages[index]
        assert isinstance(message, wire.AssistantMessage)
        text = "" if message.content is None else self._assistant_content(message.content, index)
        if message.content is None and message.tool_calls is None:
            raise ConversionError("Invalid assistant message: content or tool_calls must be set")
        calls = message.tool_calls or ()
        if message.tool_calls is not None and not calls:
            raise ConversionError(
                f"Invalid 'messages[{index}].tool_calls': empty array. Expected an array with minimum length 1, "
                "but got an empty array instead."
            )
        ids: set[str] = set()
        for call in calls:
            if call.id in ids:
                raise ConversionError(f"Duplicate value for 'tool_call_id' of {call.id} in message[{index}]")
            ids.add(call.id)
        out.append(
            conv.AssistantMessage(
                content=text,
                reasoning=message.reasoning
                if message.reasoning_content is None
                else message.reasoning_content,
                tool_calls=[conv.ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in calls],
                prefix=message.prefix,
            )
        )
        if not calls:
            return index + 1
        # The tool messages right after the call answer it, one per call and each id once. They stay in the
        # client's order here, as in the reference's conversation; the renderer writes results in call order.
        # Each answer's id is checked before its content is converted, and the count only at the end.
        position = index + 1
        answered: set[str] = set()
        while len(answered) < len(calls) and position < len(self.request.messages):
            answer = self.request.messages[position]
            if not isinstance(answer, wire.ToolMessage):
                break
            if answer.tool_call_id not in ids:
                raise ConversionError(
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                    "'tool_call_id', The following tool_call_ids did not have response messages: "
                    f"{answer.tool_call_id}"
                )
            if answer.tool_call_id in answered:
                raise ConversionError(
                    f"Duplicate value for 'tool_call_id' of {answer.tool_call_id} in message[{position}]"
                )
            answered.add(answer.tool_call_id)
            text, images = self._text_and_images(answer.content, position)
            out.append(conv.ToolMessage(tool_call_id=answer.tool_call_id, content=text, images=images))
            position += 1
        if len(answered) < len(calls):
            raise ConversionError(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                "'tool_call_id'. (insufficient tool messages following tool_calls message)"
            )
        return position

    def _text_and_images(self, content: wire.Content, index: int) -> tuple[str, list[conv.ImagePlaceholder]]:
        """System, user and tool content: text parts and image placeholders joined with a blank line, as text and
        the images placed in it. A plain string is its own text, with no images (every message of a history
        takes this way, without the parts' bookkeeping)."""
        if isinstance(content, str):
            return content, []
        converted = _convert.Content.of_parts(map(_plain_text, content), self._image_sources(content, index))
        return converted.text, converted.images

    def _assistant_content(self, content: wire.Content, index: int) -> str:
        if isinstance(content, str):
            return content
        if self.version != "v4" and any(not isinstance(part, wire.TextPart) for part in content):
            self._image_refs(content, index)
            raise ConversionError("Image in assistant message is not supported")
        return _convert.PART_SEPARATOR.join(map(_plain_text, content))

    def _image_sources(self, parts: Sequence[wire.ContentPart], index: int) -> list[conv.ImageSource | None]:
        """The image source of every part (``None`` for text, and for every part on V4, which has no images).

        As in the reference, the ``file`` parts and the link lengths of a message are checked, part by part, before
        its image URLs are.
        """
        if self.version == "v4":
            return [None] * len(parts)
        refs = self._image_refs(parts, index)
        return _images.checked_image_sources(refs, path=f".messages[{index}]")

    def _image_refs(self, parts: Sequence[wire.ContentPart], index: int) -> list[_images.ImageRef | None]:
        """The image of every image or file part (``None`` for text); checks, in the parts' order, the file parts
        (behavior.md#chat-content-parts) and the length of each image link."""
        path = f".messages[{index}]"
        urls: list[_images.ImageRef | None] = []
        for k, part in enumerate(parts):
            if isinstance(part, wire.TextPart):
                urls.append(None)
            elif isinstance(part, wire.ImageUrlPart):
                problem = _images.link_length_problem(part.url)
                if problem is not None:
                    raise ConversionError(f"{path}.image_url.url[{k}]: image_url.url {problem}")
                urls.append((part.url, part.detail))
            else:
                file_data = _images.reference_or_refuse(
                    path, "file", part.file_data, part.file_id, _FILE_FIELDS
                )
                problem = _images.file_data_problem(file_data)
                if problem is not None:
                    raise ConversionError(f"{path}: {problem}")
                urls.append((file_data, "high"))
        return urls

    def _check_prefix(self, messages: list[conv.Message]) -> None:
        """A final prefix message cannot be combined with JSON mode, with tools or with tool calls in history."""
        final = messages[-1] if messages else None
        if not (isinstance(final, conv.AssistantMessage) and final.prefix):
            return
        if self.request.response_format == "json_object":
            raise ConversionError("response_format json_object should not be used with prefix")
        if self._uses_tools(messages):
            raise ConversionError("Function call should not be used with prefix")

    def _uses_tools(self, messages: Sequence[conv.Message]) -> bool:
        """Whether the request offers tools (whatever tool_choice says) or its history has tool calls."""
        return bool(self.request.tools) or any(
            isinstance(m, conv.AssistantMessage) and m.tool_calls for m in messages
        )


INBOUND = _convert.Inbound(PROTOCOL, wire.read_request, _Converter)
#: Convert a request body of this protocol (:meth:`~dscodec.protocols._convert.Inbound.parse`).
parse_request = INBOUND.parse


def _plain_text(part: wire.ContentPart) -> str:
    """A part as text: its text, or the placeholder of an image or file."""
    return part.text if isinstance(part, wire.TextPart) else _images.UNSUPPORTED_IMAGE_TEXT


def _format_name(fmt: wire.ResponseFormat) -> conv.ResponseFormat:
    if isinstance(fmt, wire.JsonSchemaFormat):
        return "json_schema"
    if isinstance(fmt, wire.RegexFormat):
        return "regex"
    return fmt


def _initial_stage(messages: Sequence[conv.Message]) -> conv.ThinkingStage:
    """Where thinking mode starts the output."""
    final = messages[-1] if messages else None
    if isinstance(final, conv.AssistantMessage) and final.prefix:
        # Continue the answer when it has begun, else the reasoning when the client sent some.
        if final.content:
            return "content_continuation"
        if final.reasoning:
            return "reasoning_continuation"
    return "reasoning_start"
