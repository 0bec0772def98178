"""The steps every protocol's request converter shares: the entry point's frame, content, reasoning, result.

Each protocol's ``inbound.INBOUND`` reads the body with its protocol's reader and converts it with its own
converter; :class:`Inbound` gives all three the same frame (read, convert, any error naming the protocol).
:class:`Content` joins message parts and places the image tokens; :func:`fill_reasoning` applies thinking
mode's rule for the reasoning of earlier assistant turns (behavior.md#chat-assistant-messages); :class:`RequestConverter` holds what a
converter resolves and makes the neutral request from it. None of them depends on a field name that not all
three protocols share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from dscodec import conversation as conv
from dscodec.errors import ConversionError
from dscodec.options import ConversionOptions
from dscodec.protocols._body import read_body
from dscodec.protocols._constraints import tool_call_constraint
from dscodec.protocols._images import IMAGE_TOKEN
from dscodec.protocols._sampling import (
    EffortInput,
    ThinkingSwitch,
    check_temperature,
    check_top_p,
    resolve_effort,
    resolve_model,
    resolve_temperature,
    resolve_thinking,
    resolve_top_p,
)
from dscodec.protocols._unsupported import rejecting

__all__ = ["PART_SEPARATOR", "Content", "Inbound", "RequestConverter", "WireRequest", "fill_reasoning"]

#: Content parts (texts, image tokens, placeholders) are joined with a blank line (behavior.md#chat-content-parts).
PART_SEPARATOR = "\n\n"

_Request = TypeVar("_Request")

#: The reference's defaults, made once: the options are frozen, and making them costs as much as reading a
#: small body's JSON.
_DEFAULT_OPTIONS = ConversionOptions()


class Converter(Protocol):
    """A protocol's converter of one typed request."""

    def convert(self) -> conv.ConversationRequest:
        """The neutral request, or a :class:`~dscodec.errors.ConversionError`."""
        ...


@dataclass(frozen=True)
class Inbound(Generic[_Request]):
    """How one protocol's request bodies become neutral requests.

    Attributes:
        protocol: the protocol's name.
        read: the typed reader of its bodies (its ``models.read_request``).
        converter: its converter, made from a typed request and the conversion options.
    """

    protocol: conv.Protocol
    read: Callable[[Any], _Request]
    converter: Callable[[_Request, ConversionOptions], Converter]

    def parse(
        self, body: str | bytes | Mapping[str, Any], options: ConversionOptions | None = None
    ) -> conv.ConversationRequest:
        """Convert a request body of the protocol into a conversation plus inference and parsing options.

        Args:
            body: the request body as JSON text (``str`` or UTF-8 ``bytes``) or already parsed.
            options: the serving side's conversion policy; the reference's defaults when omitted.

        Raises:
            ConversionError: the body is malformed (bad JSON, wrong types, missing fields: deviation D2) or
                breaks a rule of the protocol; the error names the protocol, so ``exc.body`` is in its shape.
            TypeError: ``options`` is neither None nor :class:`~dscodec.ConversionOptions`.
        """
        if options is None:
            options = _DEFAULT_OPTIONS
        elif not isinstance(options, ConversionOptions):
            raise TypeError(f"options must be a ConversionOptions or None, not {type(options).__name__}")
        try:
            read = self.read if options.unsupported == "ignore" else rejecting(self.protocol, self.read)
            return self.converter(read_body(body, read), options).convert()
        except ConversionError as exc:
            raise exc.with_protocol(self.protocol) from None


@dataclass
class Content:
    """Converted content: parts joined with a blank line, and the image placeholders in it.

    The parts are joined once, when :attr:`text` is read: appending to one string part by part would copy it
    each time.

    Examples:
        >>> content = Content()
        >>> content.add("look:")
        >>> content.add("<image>", conv.ImageSource(kind="url", url="https://example.com/a.png"))
        >>> content.text, content.images[0].offset
        ('look:\\n\\n<image>', 7)
    """

    pieces: list[str] = field(default_factory=list)
    images: list[conv.ImagePlaceholder] = field(default_factory=list)
    #: ``len(text)``, kept up to date for the image offsets.
    length: int = 0

    @classmethod
    def of_parts(cls, texts: Iterable[str], sources: Iterable[conv.ImageSource | None]) -> Content:
        """Content of parts in order: the image token for a part with an image source, else the part's text."""
        content = cls()
        for text, source in zip(texts, sources):
            content.add(text if source is None else IMAGE_TOKEN, source)
        return content

    def add(self, piece: str, source: conv.ImageSource | None = None) -> None:
        """Append one part; ``source`` marks the part as an image token (its offset is tracked, behavior.md#chat-content-parts)."""
        if self.pieces:
            self.length += len(PART_SEPARATOR)
        if source is not None:
            self.images.append(conv.ImagePlaceholder(offset=self.length, source=source))
        self.pieces.append(piece)
        self.length += len(piece)

    @property
    def text(self) -> str:
        return PART_SEPARATOR.join(self.pieces)


def fill_reasoning(
    messages: Sequence[conv.Message],
    *,
    thinking: bool,
    options: ConversionOptions,
    offers_tools: bool,
    reasoning_field: str,
) -> None:
    """Thinking mode needs every assistant turn's reasoning: fill missing ones with ``""``, or refuse them
    (behavior.md#chat-assistant-messages). Without thinking the reasoning the client sent is dropped, so it never reaches the prompt.

    Under ``reasoning_content_behavior="reject"``, a missing reasoning is refused in the current agentic turn:
    assistant messages after the last user message, in a request that ``offers_tools`` (whatever tool_choice
    says) or for messages that call tools. ``reasoning_field`` names the reasoning as the protocol spells it.
    """
    if not thinking:
        for message in messages:
            if isinstance(message, conv.AssistantMessage):
                message.reasoning = None
        return
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, conv.UserMessage)), default=-1)
    reject = options.reasoning_content_behavior == "reject"
    for position, message in enumerate(messages):
        if not isinstance(message, conv.AssistantMessage) or message.reasoning is not None:
            continue
        if reject and position > last_user and (offers_tools or message.tool_calls):
            raise ConversionError(
                f"The `{reasoning_field}` in the thinking mode must be passed back to the API."
            )
        message.reasoning = ""


class WireRequest(Protocol):
    """The fields every protocol's typed request has, under the same names."""

    @property
    def model(self) -> str: ...

    @property
    def stream(self) -> bool | None: ...

    @property
    def temperature(self) -> float | None: ...

    @property
    def top_p(self) -> float | None: ...


_Wire = TypeVar("_Wire", bound=WireRequest)


@dataclass
class RequestConverter(Generic[_Wire]):
    """What every protocol's converter holds and does first and last.

    A converter resolves the model and thinking mode first (:meth:`start`), then checks and converts its
    protocol's fields, and ends with :meth:`finish`, which makes the neutral request.

    Attributes:
        request: the typed request.
        options: the conversion options.
        version: the template version of the requested model, once :meth:`start` resolved it.
        thinking: whether thinking is on, once resolved.
        effort: the effort the request asks for (its protocol's field), once :meth:`start` saw it.
    """

    #: The protocol's name (a class attribute of each converter).
    protocol: ClassVar[conv.Protocol]

    request: _Wire
    options: ConversionOptions
    version: conv.ModelVersion = "v4"
    thinking: bool = False
    effort: EffortInput | None = None

    def start(self, switch: ThinkingSwitch | None, effort: EffortInput | None) -> bool:
        """Resolve the model's template version and the thinking mode; whether thinking is on."""
        self.version = resolve_model(self.request.model, self.options)
        self.effort = effort
        self.thinking = resolve_thinking(
            switch, effort, default_thinking_mode=self.options.default_thinking_mode
        )
        return self.thinking

    def check_sampling(self) -> None:
        """Check ``temperature`` and ``top_p``, which every protocol has (behavior.md#sampling)."""
        check_temperature(self.request.temperature)
        check_top_p(self.request.top_p)

    def finish(
        self,
        messages: list[conv.Message],
        tools: list[conv.ToolDefinition],
        tool_choice: conv.ToolChoice,
        *,
        max_tokens: int | None,
        response_format: conv.ResponseFormat = "text",
        response_schema: Any = None,
        response_regex: str | None = None,
        format_constraint: conv.OutputConstraint | None = None,
        logprobs: bool = False,
        top_logprobs: int | None = None,
        seed: int | None = None,
        initial_stage: conv.ThinkingStage = "reasoning_start",
        stop: Sequence[str] = (),
        wire: object = None,
    ) -> conv.ConversationRequest:
        """The neutral request from what the converter checked and resolved.

        What follows from it is the same in every protocol: the effort level (behavior.md#thinking-and-effort), the sampled temperature and
        top_p (behavior.md#sampling), the output constraint (the tools', else any JSON for ``json_object``, else the response
        format's ``format_constraint``, behavior.md#output-constraints), and how the output is parsed (tool calls when tools are offered, from
        the start when a call is required; JSON for ``json_object``; ``initial_stage`` only in thinking mode).
        ``wire`` is what the protocol keeps for its own stream writer.
        """
        req, version, thinking = self.request, self.version, self.thinking
        if tools:
            constraint: conv.OutputConstraint | None = tool_call_constraint(
                tools, required=tool_choice == "required"
            )
        elif response_format == "json_object":
            constraint = conv.OutputConstraint(kind="json", schema="")
        else:
            constraint = format_constraint
        conversation = conv.Conversation(
            messages=messages,
            tools=tools,
            tool_choice=tool_choice,
            thinking_mode=thinking,
            reasoning_effort=resolve_effort(thinking, self.effort),
            response_format=response_format,
            response_schema=response_schema,
            response_regex=response_regex,
        )
        inference = conv.InferenceOptions(
            temperature=resolve_temperature(thinking, req.temperature),
            top_p=resolve_top_p(version, thinking, req.top_p, tools_active=bool(tools)),
            max_tokens=max_tokens,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
            seed=seed,
            output_constraint=constraint,
        )
        parsing = conv.ParsingOptions(
            parse_tool_calls=bool(tools),
            starts_in_tool_calls=tool_choice == "required",
            parse_json_output=response_format == "json_object",
            thinking_initial_stage=initial_stage if thinking else None,
            stop_sequences=list(stop),
        )
        return conv.ConversationRequest(
            protocol=self.protocol,
            model=req.model,
            model_version=version,
            stream=req.stream is True,
            conversation=conversation,
            inference_options=inference,
            parsing_options=parsing,
            wire=wire,
        )
