"""Conversation -> DeepSeek V4 / V4.1 prompt, as text segments and special-token markers (behavior.md#prompt-rendering).

The renderer walks the conversation once and appends to a flat list of segments: plain ``str`` pieces and
:class:`Special` markers, one per special token the template inserts. Text that came from the client (message
contents, reasoning, tool names, argument values, schemas) is a ``str`` segment, so a user who types
``<｜User｜>`` gets ordinary text and never a control token. One exception, observed on the reference: the
content and reasoning of *assistant* turns keep the grounding tokens (``<｜ref｜>`` … ``<｜/polygon｜>``,
:attr:`~dscodec.prompt.dialects.Dialect.assistant_specials`) as special tokens, since that is how the model wrote
them. Everything that differs between V4 and V4.1 is read from the :class:`~dscodec.prompt.dialects.Dialect`.

Performance: every piece is appended to one list and joined once; the only scan of client text looks for the
grounding spellings in assistant turns, after a substring test that almost always says there are none.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from dscodec._json import JSONDecodeError, dumps_prompt, loads
from dscodec._memo import Memo
from dscodec.conversation import (
    AssistantMessage,
    Conversation,
    ConversationRequest,
    ImagePlaceholder,
    ImageSource,
    LatestReminderMessage,
    Message,
    ModelVersion,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    ToolMessage,
    UserMessage,
    check_conversation,
    conversation_looks_valid,
)
from dscodec.errors import ConversionError
from dscodec.prompt._order import (
    Item,
    merge_user_runs,
    sort_results_by_call_position,
    sort_results_by_id_windows,
)
from dscodec.prompt.dialects import Dialect, HistoryThink, PrefixThink, ReasoningKind, dialect_for

__all__ = ["RenderedPrompt", "Segment", "Special", "conversation_of", "render_prompt", "render_segments"]


@dataclass(frozen=True, slots=True)
class Special:
    """One special token the template inserted; the encoder turns it into exactly one id."""

    text: str


#: One Special per spelling (a bounded handful: the template's and the grounding spellings), so that the encoder,
#: comparing a prompt with a remembered one, finds equal specials by identity, in C.
_SPECIALS: dict[str, Special] = {}


def special(text: str) -> Special:
    """The shared :class:`Special` for ``text``."""
    found = _SPECIALS.get(text)
    if found is None:
        found = Special(text)
        if len(_SPECIALS) < 256:
            found = _SPECIALS.setdefault(text, found)
    return found


Segment: TypeAlias = str | Special
"""A piece of a rendered prompt: plain text (encoded as ordinary text) or one special token."""


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered prompt.

    Attributes:
        text: the whole prompt.
        special_spans: half-open ``(start, end)`` code-point offsets of every special token the template
            inserted, ascending and disjoint (behavior.md#special-spans).
        image_sources: the images of the prompt's image placeholders, in prompt order.
    """

    text: str
    special_spans: list[tuple[int, int]]
    image_sources: list[ImageSource]


def conversation_of(
    request: ConversationRequest | Conversation, version: ModelVersion | None, doing: str
) -> tuple[Conversation, ModelVersion]:
    """The conversation and template version to render ``request`` with: a converted request's own version
    unless ``version`` is given; a bare conversation needs ``version``.

    A conversation built by hand is checked first (:func:`~dscodec.conversation.check_conversation`), so a
    field of the wrong type or value is refused by name rather than failing somewhere in the renderer.

    Raises:
        TypeError: ``request`` is neither, a conversation comes without ``version``, or a field of the
            conversation has the wrong type.
        ValueError: ``version`` is neither ``"v4"`` nor ``"v4.1"``, or a field of the conversation has a value it
            cannot take.
    """
    if isinstance(request, ConversationRequest):
        conversation, where = request.conversation, "request.conversation"
        if not isinstance(conversation, Conversation):
            raise TypeError(f"{where} must be a Conversation, not {type(conversation).__name__}")
        if version is None:
            version = request.model_version
    elif not isinstance(request, Conversation):
        raise TypeError(
            f"{doing} needs a ConversationRequest (from dscodec.convert) or a Conversation, "
            f"not {type(request).__name__}"
        )
    elif version is None:
        raise TypeError(f"{doing} a Conversation needs version='v4' or 'v4.1'")
    else:
        conversation, where = request, "conversation"
    dialect_for(version)  # an unknown version is refused before anything is read
    if not conversation_looks_valid(conversation):
        check_conversation(conversation, where)
    return conversation, version


#: What rendering a conversation built by hand may raise from deep inside when a value in it is not what its field
#: declares (a JSON value that is none, a lone surrogate the tokenizer cannot take).
HAND_BUILT_FAILURES = (
    TypeError,
    ValueError,
    AttributeError,
    KeyError,
    IndexError,
    RecursionError,
    OverflowError,
    UnicodeError,
)


def explain_failure(request: ConversationRequest | Conversation) -> None:
    """Called while an exception from rendering or encoding ``request`` is handled: raises the
    :func:`~dscodec.conversation.check_conversation` error that names the field at fault, if any (the quick test
    of :func:`conversation_of` leaves JSON values and the contents of texts unchecked); else returns, and the
    caller re-raises what it caught."""
    if isinstance(request, ConversationRequest):
        check_conversation(request.conversation, "request.conversation")
    else:
        check_conversation(request)


def render_segments(
    conversation: Conversation, version: ModelVersion
) -> tuple[list[Segment], list[ImageSource]]:
    """Render ``conversation`` with the ``version`` template as segments, plus its image sources in prompt order.

    Adjacent text segments are not merged; concatenating all segments gives the prompt text.

    Raises:
        ConversionError: an image placeholder does not point at the image token in its message.

    Examples:
        >>> from dscodec.conversation import Conversation, UserMessage
        >>> conv = Conversation(messages=[UserMessage(content="Hi")], thinking_mode=False)
        >>> segments, images = render_segments(conv, "v4")
        >>> [s if isinstance(s, str) else s.text for s in segments]
        ['<｜begin▁of▁sentence｜>', '<｜User｜>', 'Hi', '<｜Assistant｜>', '</think>']
    """
    renderer = _Renderer(conversation, dialect_for(version))
    renderer.render()
    return renderer.out, renderer.images


def render_prompt(conversation: Conversation, version: ModelVersion) -> RenderedPrompt:
    """Render ``conversation`` with the ``version`` template to its text and special spans.

    Raises:
        ConversionError: an image placeholder does not point at the image token in its message.

    Examples:
        >>> from dscodec.conversation import Conversation, SystemMessage, UserMessage
        >>> conv = Conversation(messages=[SystemMessage(content="You are X."), UserMessage(content="Hi")],
        ...     reasoning_effort="low")
        >>> prompt = render_prompt(conv, "v4")
        >>> prompt.text
        '<｜begin▁of▁sentence｜>You are X.<｜User｜>Hi<｜Assistant｜><think>'
        >>> prompt.special_spans
        [(0, 21), (31, 39), (41, 54), (54, 61)]
    """
    segments, images = render_segments(conversation, version)
    spans: list[tuple[int, int]] = []
    pos = 0
    for segment in segments:
        if isinstance(segment, str):
            pos += len(segment)
        else:
            end = pos + len(segment.text)
            spans.append((pos, end))
            pos = end
    text = "".join(s if isinstance(s, str) else s.text for s in segments)
    return RenderedPrompt(text=text, special_spans=spans, image_sources=images)


# -- constants split into segments -------------------------------------------------------------------------


@functools.cache
def _assistant_specials(version: ModelVersion) -> tuple[str, re.Pattern[str] | None]:
    """A substring every assistant special spelling contains, and a pattern finding them left to right."""
    spellings = dialect_for(version).assistant_specials
    if not spellings:
        return "", None
    # One character is found far faster than two (a vectorised scan): a non-ASCII one every spelling holds (the
    # full-width bar), else the common two-character start.
    shared = [c for c in spellings[0] if not c.isascii() and all(c in s for s in spellings)]
    probe = shared[0] if shared else spellings[0][:2]
    if not all(probe in s for s in spellings):
        probe = ""
    alternatives = sorted(spellings, key=len, reverse=True)
    return probe, re.compile("|".join(re.escape(s) for s in alternatives))


@functools.cache
def _instruction_segments(version: ModelVersion) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """The tool instructions before and after the schema lines, with their special tokens marked.

    Every DSML token, ``<think>`` and ``</think>`` inside the instruction text is a special token (behavior.md#template-constants). The
    text is a template constant, so finding the spellings in it is safe (unlike in client text).
    """
    dialect = dialect_for(version)
    spellings = sorted({dialect.dsml, dialect.think_open, dialect.think_close}, key=len, reverse=True)
    pattern = re.compile("(" + "|".join(re.escape(s) for s in spellings) + ")")

    def split(text: str) -> tuple[Segment, ...]:
        parts: list[Segment] = []
        for index, piece in enumerate(pattern.split(text)):
            if index % 2:
                parts.append(special(piece))
            elif piece:
                parts.append(piece)
        return tuple(parts)

    return split(dialect.tools_instruction_head), split(dialect.tools_instruction_tail)


#: Schema lines written before, by the ``repr`` of what they were written from (which tells apart everything the
#: line depends on: key order, ``1`` from ``1.0`` and ``True``, ``nan``): a client sends the same tools with every
#: request.
_SCHEMA_LINES: Memo[tuple[str, bool], str] = Memo(entries=1024, longest=1 << 20)


def _schema_line(tool: ToolDefinition, python_floats: bool) -> str:
    # behavior.md#json-style: {"name": …, "description": … or "", "parameters": …} in the prompt JSON style; parameters is the
    # stored value as is (null when a directly built definition has none).
    line = {"name": tool.name, "description": tool.description or "", "parameters": tool.parameters}
    key = (repr(line), python_floats)
    found = _SCHEMA_LINES.found.get(key)
    if found is None:
        found = dumps_prompt(line, python_floats=python_floats)
        _SCHEMA_LINES.put(key, found, len(key[0]))
    return found


def _reasoning_kind(reasoning: str | None) -> ReasoningKind:
    if reasoning is None:
        return "none"
    return "text" if reasoning else "empty"


#: The parameters of arguments rendered before, by arguments text and float style: a conversation resends all its
#: calls with every turn, and the same text always gives the same parameters.
_ARGUMENTS: Memo[tuple[str, bool], tuple[tuple[str, str, bool], ...]] = Memo(
    total=4_000_000, longest=4_000_000
)


def _arguments(arguments: str, python_floats: bool) -> tuple[tuple[str, str, bool], ...]:
    """:func:`_parse_arguments`, remembered."""
    key = (arguments, python_floats)
    params = _ARGUMENTS.found.get(key)
    if params is None:
        params = tuple(_parse_arguments(arguments, python_floats))
        _ARGUMENTS.put(key, params, len(arguments))
    return params


def _parse_arguments(arguments: str, python_floats: bool) -> list[tuple[str, str, bool]]:
    """The parameters of one call as ``(name, value, is_string)`` (behavior.md#dsml-history)."""
    try:
        value: Any = loads(arguments)
    except JSONDecodeError:
        value = None
        parsed = False
    else:
        parsed = True
    if not parsed or not isinstance(value, dict):
        # Invalid JSON or JSON that is not an object: one "arguments" parameter holding the raw text.
        return [("arguments", arguments, True)]
    params: list[tuple[str, str, bool]] = []
    for key, item in value.items():
        if isinstance(item, str):
            params.append((key, item, True))
        else:
            params.append((key, dumps_prompt(item, python_floats=python_floats), False))
    return params


# -- the renderer ------------------------------------------------------------------------------------------


class _Renderer:
    """One rendering pass; collects segments in ``out`` and image sources in ``images``."""

    def __init__(self, conversation: Conversation, dialect: Dialect) -> None:
        self.conv = conversation
        self.d = dialect
        self.out: list[Segment] = []
        self.images: list[ImageSource] = []
        # tool_choice "none" hides the tools from the prompt (behavior.md#turns).
        self.tools = conversation.tools if conversation.tool_choice != "none" else []
        self.bos = special(dialect.bos)
        self.eos = special(dialect.eos)
        self.user = special(dialect.user)
        self.assistant = special(dialect.assistant)
        self.system = special(dialect.system) if dialect.system is not None else None
        self.reminder = special(dialect.latest_reminder)
        self.think_open = special(dialect.think_open)
        self.think_close = special(dialect.think_close)
        self.dsml = special(dialect.dsml)
        self.image = special(dialect.image)
        self.specials_probe, self.specials_pattern = _assistant_specials(dialect.version)

    # -- building blocks --

    def content(self, text: str, placeholders: Sequence[ImagePlaceholder]) -> None:
        """Append message text; only the placeholder positions become image tokens (behavior.md#chat-content-parts, behavior.md#special-spans)."""
        if not placeholders:
            if text:
                self.out.append(text)
            return
        spelling = self.d.image
        width = len(spelling)
        pos = 0
        for placeholder in sorted(placeholders, key=lambda p: p.offset):
            offset = placeholder.offset
            if offset < pos or text[offset : offset + width] != spelling:
                raise ConversionError(
                    f"image placeholder at offset {offset} does not point at an unused {spelling!r} in the "
                    "message content; placeholders must mark where the image token was inserted"
                )
            if offset > pos:
                self.out.append(text[pos:offset])
            self.out.append(self.image)
            self.images.append(placeholder.source)
            pos = offset + width
        if pos < len(text):
            self.out.append(text[pos:])

    def assistant_text(self, text: str) -> None:
        """Append an assistant turn's content or reasoning; its grounding spellings become special tokens."""
        pattern = self.specials_pattern
        if pattern is None or self.specials_probe not in text:
            if text:
                self.out.append(text)
            return
        out = self.out
        pos = 0
        for match in pattern.finditer(text):
            start = match.start()
            if start > pos:
                out.append(text[pos:start])
            out.append(special(match.group()))
            pos = match.end()
        if pos < len(text):
            out.append(text[pos:])

    def effort(self) -> list[str]:
        """The effort preamble plus its separator, or nothing (thinking off, or V4 low effort)."""
        if not self.conv.thinking_mode:
            return []
        # A conversation built directly may leave the effort unset: it renders as "high" (behavior.md#template-constants).
        text = self.d.effort_preambles[self.conv.reasoning_effort or "high"]
        if not text:
            return []
        return [text, self.d.block_separator]

    def tool_instructions(self) -> None:
        """The tools block: instructions with one schema line per tool not deferred (behavior.md#template-constants, behavior.md#json-style)."""
        head, tail = _instruction_segments(self.d.version)
        self.out.extend(head)
        lines = "".join(
            _schema_line(tool, self.d.python_floats) + "\n" for tool in self.tools if not tool.defer_loading
        )
        if not lines and self.d.newline_for_no_schemas:
            # V4.1 with every tool deferred still writes the (empty) schema list's line end (observed).
            lines = "\n"
        if lines:
            self.out.append(lines)
        self.out.extend(tail)

    def response_format(self) -> None:
        fmt = self.conv.response_format
        if fmt == "json_object":
            self.out.append(self.d.json_object_block)
        elif fmt == "json_schema" and self.conv.response_schema is not None:
            # No schema, no block (the reference has no json_schema format without a schema).
            self.out.append(
                self.d.json_schema_block_head
                + dumps_prompt(self.conv.response_schema, python_floats=self.d.python_floats)
            )

    def updated_tools(self, tools: list[ToolDefinition] | None) -> None:
        # behavior.md#prompt-layout: V4.1 only; every tool of the system message, deferred ones included, lines joined by "\n".
        if not tools:
            return
        self.out.append(
            self.d.updated_tool_schemas_head
            + "\n".join(_schema_line(tool, self.d.python_floats) for tool in tools)
        )

    def has_extras(self) -> bool:
        """Whether tools or a response-format block go into the system text."""
        conv = self.conv
        return (
            bool(self.tools)
            or conv.response_format == "json_object"
            or (conv.response_format == "json_schema" and conv.response_schema is not None)
        )

    # -- layout --

    def render(self) -> None:
        d = self.d
        self.out.append(self.bos)
        messages = self.conv.messages
        body: Sequence[Message]
        if d.hoists_system:
            self.system_text_hoisted(messages)
            body = [m for m in messages if not isinstance(m, SystemMessage)]
        else:
            body = self.first_system_block(messages)
        # Putting results in order never moves an assistant turn to the front, so the first item is the
        # conversation's first message exactly when nothing before it was taken out.
        leading = bool(body) and body[0] is messages[0]
        items: list[Item] = merge_user_runs(body) if d.merges_user_runs else list(body)
        if d.sorts_results_by_id_windows:
            items = sort_results_by_id_windows(items)
        else:
            items = sort_results_by_call_position(items)
        self.turns(items, first_message_at=0 if leading else None)

    def system_text_hoisted(self, messages: Sequence[Message]) -> None:
        """V4 has no system token: effort, every system message, tools and format lead the prompt (behavior.md#prompt-layout)."""
        self.out.extend(self.effort())
        first = True
        for message in messages:
            if isinstance(message, SystemMessage) and message.content:
                # Empty system contents contribute nothing, not even a separator.
                if not first:
                    self.out.append(self.d.block_separator)
                self.content(message.content, message.images)
                first = False
        if self.tools:
            self.tool_instructions()
        self.response_format()

    def first_system_block(self, messages: Sequence[Message]) -> Sequence[Message]:
        """V4.1's first system block; returns the messages still to render (behavior.md#prompt-layout).

        A leading system message absorbs the effort, tools and format; otherwise an implicit block holds them.
        With no messages at all the effort alone opens no block.
        """
        assert self.system is not None
        leading = messages[0] if messages and isinstance(messages[0], SystemMessage) else None
        effort = self.effort()
        needed = leading is not None or self.has_extras() or (bool(effort) and bool(messages))
        if not needed:
            return messages
        self.out.append(self.system)
        self.out.extend(effort)
        if leading is not None:
            self.content(leading.content, leading.images)
        if self.tools:
            self.tool_instructions()
        self.response_format()
        if leading is not None:
            self.updated_tools(leading.tools)
            return messages[1:]
        return messages

    def turns(self, items: Sequence[Item], *, first_message_at: int | None) -> None:
        """Every message in order, then the tail (behavior.md#turns).

        ``first_message_at`` is the item index holding the conversation's first message, if any item does.
        """
        d = self.d
        out = self.out
        has_tools = bool(self.tools)
        thinking = self.conv.thinking_mode
        previous: str | None = None
        last = len(items) - 1
        for index, item in enumerate(items):
            if isinstance(item, list):
                # A merged run of user messages (V4): one user-turn part, joined by the separator; empty
                # contents contribute nothing, not even a separator (observed, like V4 system texts).
                self.user_part(previous)
                first = True
                for user in item:
                    if not user.content:
                        continue
                    if not first:
                        out.append(d.block_separator)
                    self.content(user.content, user.images)
                    first = False
                previous = "user"
            elif isinstance(item, UserMessage):
                self.user_part(previous)
                self.content(item.content, item.images)
                previous = "user"
            elif isinstance(item, ToolMessage):
                if previous == "tool" or (previous == "user" and d.tool_result_joins_user):
                    out.append(d.block_separator)
                else:
                    out.append(self.user)
                out.append(d.tool_result_open)
                self.content(item.content, item.images)
                out.append(d.tool_result_close)
                previous = "tool"
            elif isinstance(item, LatestReminderMessage):
                # V4.1 renders only the first of consecutive latest reminders.
                if not (previous == "reminder" and d.dedupes_latest_reminders):
                    out.append(self.reminder)
                    if item.content:
                        out.append(item.content)
                previous = "reminder"
            elif isinstance(item, SystemMessage):
                # Only V4.1 gets here (V4 hoists system messages): a system block in place.
                assert self.system is not None
                out.append(self.system)
                self.content(item.content, item.images)
                self.updated_tools(item.tools)
                previous = "system"
            else:
                out.append(self.assistant)
                if item.prefix:
                    self.prefix_turn(item, thinking, leading=index == first_message_at)
                    if index != last and d.eos_after_inner_prefix:
                        out.append(self.eos)
                else:
                    self.history_turn(item, has_tools, thinking)
                    out.append(self.eos)
                previous = "assistant"
        self.tail(items)

    def user_part(self, previous: str | None) -> None:
        # Consecutive user-role parts share one user turn (behavior.md#turns).
        if previous in ("user", "tool"):
            self.out.append(self.d.block_separator)
        else:
            self.out.append(self.user)

    def history_turn(self, message: AssistantMessage, has_tools: bool, thinking: bool) -> None:
        """A complete assistant turn after its ``A`` token: THINK_PART, content, tool calls (behavior.md#turns)."""
        form = self.d.history_think[(has_tools, thinking, _reasoning_kind(message.reasoning))]
        if form is HistoryThink.KEPT:
            self.out.append(self.think_open)
            if message.reasoning:
                self.assistant_text(message.reasoning)
        self.out.append(self.think_close)
        self.assistant_text(message.content)
        self.tool_calls(message.tool_calls)

    def prefix_turn(self, message: AssistantMessage, thinking: bool, *, leading: bool) -> None:
        """A prefix assistant turn after its ``A`` token: the model continues it, so no EOS (behavior.md#turns)."""
        d = self.d
        out = self.out
        content = message.content
        if leading and d.leading_prefix_skips_think and not self.has_extras():
            # Observed (V4.1): a prefix turn that is the very first message, in a conversation without tools
            # or response format, renders as if thinking were off.
            form = PrefixThink.SKIPPED
        else:
            form = d.prefix_think[(thinking, _reasoning_kind(message.reasoning))]
        if form is PrefixThink.OPEN or form is PrefixThink.CLOSED:
            out.append(self.think_open)
            if message.reasoning:
                self.assistant_text(message.reasoning)
            # An open reasoning closes once the turn has content (V4.1: or tool calls).
            closes = bool(content) or (bool(message.tool_calls) and d.prefix_calls_close_think)
            if closes or form is PrefixThink.CLOSED:
                out.append(self.think_close)
        elif form is PrefixThink.SKIPPED or content:
            out.append(self.think_close)
        self.assistant_text(content)
        self.tool_calls(message.tool_calls)

    def tool_calls(self, calls: Sequence[ToolCall]) -> None:
        """The DSML block of an assistant turn's tool calls (behavior.md#dsml-history); nothing without calls."""
        if not calls:
            return
        if self.d.sorts_tool_calls_by_id:
            # V4 writes the calls of a turn ordered by call id (stable), like it orders their results.
            calls = sorted(calls, key=lambda call: call.id)
        d = self.d
        out = self.out
        dsml = self.dsml
        out.extend((d.block_separator + "<", dsml, d.tool_calls_tag + ">\n"))
        for call in calls:
            out.extend(("<", dsml, f'{d.invoke_tag} name="', call.name, '">\n'))
            params = _arguments(call.arguments, d.python_floats)
            if not params and d.empty_invoke_line:
                out.append("\n")
            for name, value, is_string in params:
                flag = "true" if is_string else "false"
                out.extend(("<", dsml, f'{d.parameter_tag} name="', name, f'" string="{flag}">'))
                if value:
                    out.append(value)
                out.extend(("</", dsml, d.parameter_tag + ">\n"))
            out.extend(("</", dsml, d.invoke_tag + ">\n"))
        out.extend(("</", dsml, d.tool_calls_tag + ">"))

    def tail(self, items: Sequence[Item]) -> None:
        """After the last message: open the assistant turn, unless a prefix turn is being continued (behavior.md#turns)."""
        last = items[-1] if items else None
        if not (isinstance(last, AssistantMessage) and last.prefix):
            self.out.append(self.assistant)
            self.out.append(self.think_open if self.conv.thinking_mode else self.think_close)
        if self.conv.tool_choice == "required" and self.tools:
            # The model must call a tool: the DSML block opener is pre-filled.
            self.out.extend((self.d.block_separator + "<", self.dsml, self.d.tool_calls_tag + ">\n"))
