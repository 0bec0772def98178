"""Hostile input to the public API: values of the wrong type or shape, requests and conversations built by hand,
and calls that make no sense, are refused by name (a ``TypeError`` or ``ValueError`` at the entry point, or a
:class:`~dscodec.DscodecError` with its status), never with an exception from deep inside."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import dscodec
from dscodec.conversation import (
    AssistantMessage,
    Conversation,
    ImagePlaceholder,
    ImageSource,
    ParsingOptions,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    UserMessage,
)
from dscodec.prompt.render import RenderedPrompt

_HUGE = 10**5000


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _request(**extra: object) -> dscodec.ConversationRequest:
    body: dict[str, Any] = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}
    return dscodec.convert("chat_completions", {**body, **extra})


@pytest.fixture(scope="module")
def encoder() -> dscodec.PromptEncoder:
    return dscodec.PromptEncoder()


# -- PromptEncoder ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("segments", [[], [""], ["", ""]])
def test_a_prompt_of_no_ids_leaves_the_encoder_working(segments: list[str]) -> None:
    encoder = dscodec.PromptEncoder()
    assert encoder.encode_segments(segments) == []
    request = _request()
    assert encoder.encode(request) == dscodec.PromptEncoder(cache_chars=0).encode(request)
    assert encoder.encode(request) == encoder.encode(request)


@pytest.mark.parametrize(
    ("spans", "error", "words"),
    [
        ([(0, 1, 2)], TypeError, r"prompt.special_spans\[0\] must be a pair of ints"),
        ([(0.0, 21.0)], TypeError, r"prompt.special_spans\[0\] must be a pair of ints"),
        (None, TypeError, "prompt.special_spans must be a list"),
        ([(0, 10**6)], ValueError, r"prompt.special_spans\[0\]"),
        ([(-5, -1)], ValueError, r"prompt.special_spans\[0\]"),
        ([(21, 0)], ValueError, r"prompt.special_spans\[0\]"),
        ([(0, 21), (10, 30)], ValueError, r"prompt.special_spans\[1\]"),
        ([(0, 21), (0, 21)], ValueError, r"prompt.special_spans\[1\]"),
    ],
)
def test_encode_rendered_refuses_spans_that_are_not_ascending_spans_of_the_text(
    encoder: dscodec.PromptEncoder, spans: object, error: type[Exception], words: str
) -> None:
    text = dscodec.render(_request()).text
    with pytest.raises(error, match=words):
        encoder.encode_rendered(RenderedPrompt(text, spans, []))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="prompt.text must be a str"):
        encoder.encode_rendered(RenderedPrompt(None, [], []))  # type: ignore[arg-type]


def test_a_tokenizer_path_no_file_can_have_is_a_tokenizer_error() -> None:
    with pytest.raises(dscodec.TokenizerError, match="cannot be read"):
        dscodec.PromptEncoder("x" * 100_000)


@pytest.mark.parametrize(
    "version", [_deep(5000), {"a": _deep(5000)}, _HUGE], ids=["deep", "deep-dict", "huge"]
)
def test_a_version_that_cannot_be_shown_is_refused_as_unknown(
    encoder: dscodec.PromptEncoder, version: object
) -> None:
    with pytest.raises(ValueError, match="unknown model version"):
        dscodec.render(_request(), version=version)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown model version"):
        encoder.encode(_request(), version=version)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown model version"):
        dscodec.render(dataclasses.replace(_request(), model_version=version))  # type: ignore[arg-type]


# -- conversations built by hand --------------------------------------------------------------------------------


def _conversation(**changes: object) -> Conversation:
    conversation = Conversation(
        messages=[
            SystemMessage(content="sys"),
            UserMessage(content="Hi"),
            AssistantMessage(
                content="ok", reasoning="r", tool_calls=[ToolCall(id="c", name="f", arguments="{}")]
            ),
            UserMessage(content="again"),
        ],
        tools=[ToolDefinition(name="f", parameters={"type": "object"})],
    )
    return dataclasses.replace(conversation, **changes)


def _with_message(index: int, **changes: object) -> Conversation:
    conversation = _conversation()
    conversation.messages[index] = dataclasses.replace(conversation.messages[index], **changes)
    return conversation


def _with_call(**changes: object) -> Conversation:
    conversation = _conversation()
    message = conversation.messages[2]
    assert isinstance(message, AssistantMessage)
    message.tool_calls = [dataclasses.replace(message.tool_calls[0], **changes)]
    return conversation


def _with_tool(**changes: object) -> Conversation:
    tool = dataclasses.replace(ToolDefinition(name="f", parameters={"type": "object"}), **changes)
    return _conversation(tools=[tool])


def _with_image(**changes: object) -> Conversation:
    placeholder = ImagePlaceholder(offset=0, source=ImageSource(kind="url", url="http://x"))
    return Conversation(
        messages=[UserMessage(content="x", images=[dataclasses.replace(placeholder, **changes)])]
    )


@pytest.mark.parametrize(
    ("conversation", "error", "words"),
    [
        (_conversation(messages=None), TypeError, "conversation.messages must be a list"),
        (_conversation(messages="Hi"), TypeError, "conversation.messages must be a list"),
        (_conversation(messages=[None]), TypeError, r"conversation.messages\[0\] must be a message"),
        (
            _conversation(messages=[{"role": "user"}]),
            TypeError,
            r"conversation.messages\[0\] must be a message",
        ),
        (_conversation(thinking_mode=None), TypeError, "conversation.thinking_mode must be a bool"),
        (_conversation(thinking_mode=1.5), TypeError, "conversation.thinking_mode must be a bool"),
        (_conversation(reasoning_effort=True), ValueError, "conversation.reasoning_effort must be"),
        (_conversation(reasoning_effort=[]), ValueError, "conversation.reasoning_effort must be"),
        (_conversation(tool_choice=None), ValueError, "conversation.tool_choice must be"),
        (_conversation(response_format=b"json_object"), ValueError, "conversation.response_format must be"),
        (_conversation(tools=None), TypeError, "conversation.tools must be a list"),
        (_conversation(tools=[None]), TypeError, r"conversation.tools\[0\] must be a ToolDefinition"),
        (_with_message(1, content=None), TypeError, r"conversation.messages\[1\].content must be a str"),
        (_with_message(1, content=b"Hi"), TypeError, r"conversation.messages\[1\].content must be a str"),
        (_with_message(1, role="assistant"), ValueError, r"conversation.messages\[1\].role must be 'user'"),
        (_with_message(1, images=None), TypeError, r"conversation.messages\[1\].images must be a list"),
        (_with_message(2, reasoning=5), TypeError, r"conversation.messages\[2\].reasoning must be a str"),
        (
            _with_message(2, tool_calls=[None]),
            TypeError,
            r"conversation.messages\[2\].tool_calls\[0\] must be",
        ),
        (_with_message(2, prefix=None), TypeError, r"conversation.messages\[2\].prefix must be a bool"),
        (_with_message(0, tools="f"), TypeError, r"conversation.messages\[0\].tools must be a list"),
        (_with_call(name=None), TypeError, r"conversation.messages\[2\].tool_calls\[0\].name must be a str"),
        (_with_call(arguments={}), TypeError, r"conversation.messages\[2\].tool_calls\[0\].arguments"),
        (_with_tool(strict="yes"), TypeError, r"conversation.tools\[0\].strict must be a bool or None"),
        (
            _with_image(offset=None),
            TypeError,
            r"conversation.messages\[0\].images\[0\].offset must be an int",
        ),
        (_with_image(offset=_HUGE), ValueError, r"conversation.messages\[0\].images\[0\].offset"),
        (_with_image(source=None), TypeError, r"conversation.messages\[0\].images\[0\].source must be"),
    ],
)
def test_a_conversation_built_by_hand_is_refused_by_the_field_at_fault(
    encoder: dscodec.PromptEncoder, conversation: Conversation, error: type[Exception], words: str
) -> None:
    for version in ("v4", "v4.1"):
        with pytest.raises(error, match=words):
            dscodec.render(conversation, version=version)  # type: ignore[arg-type]
    with pytest.raises(error, match=words):
        encoder.encode(conversation, version="v4")
    request = dataclasses.replace(_request(), conversation=conversation)
    with pytest.raises(error, match="request." + words):
        dscodec.render(request)


@pytest.mark.parametrize(
    ("parameters", "error", "words"),
    [
        ({"type": "object", "x": {1, 2}}, TypeError, "holds a set"),
        ({"type": "object", "x": b"raw"}, TypeError, "holds a bytes"),
        ({"type": "object", "x": _HUGE}, ValueError, "beyond 64 bits"),
        ({"type": "object", "x": _deep(5000)}, ValueError, "nests deeper than"),
    ],
)
def test_tool_parameters_built_by_hand_must_be_a_json_value(
    encoder: dscodec.PromptEncoder, parameters: object, error: type[Exception], words: str
) -> None:
    conversation = _with_tool(parameters=parameters)
    with pytest.raises(error, match=words):
        dscodec.render(conversation, version="v4")
    with pytest.raises(error, match=r"conversation.tools\[0\].parameters"):
        encoder.encode(conversation, version="v4.1")


def test_a_lone_surrogate_in_a_conversation_built_by_hand_is_named(encoder: dscodec.PromptEncoder) -> None:
    conversation = _with_message(1, content="a\ud800b")
    with pytest.raises(ValueError, match=r"conversation.messages\[1\].content .*lone surrogate"):
        encoder.encode(conversation, version="v4")


def test_a_valid_conversation_built_by_hand_still_renders(encoder: dscodec.PromptEncoder) -> None:
    conversation = _conversation()
    assert dscodec.render(conversation, version="v4").text.startswith("<｜begin▁of▁sentence｜>")
    assert encoder.encode(conversation, version="v4")[0] == 0


# -- requests built by hand: stream processor and completion budget ------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"conversation": None}, "request.conversation must be a Conversation"),
        (
            {"conversation": _conversation(thinking_mode="yes")},
            "request.conversation.thinking_mode must be a bool",
        ),
        ({"parsing_options": None}, "request.parsing_options must be a ParsingOptions"),
        ({"parsing_options": ParsingOptions(stop_sequences=[5])}, r"stop_sequences\[0\] must be a str"),  # type: ignore[list-item]
        ({"parsing_options": ParsingOptions(stop_sequences="stop")}, "stop_sequences must be a list"),  # type: ignore[arg-type]
        ({"parsing_options": ParsingOptions(stop_sequences=["x" * 5000])}, "longer than 4096"),
        ({"parsing_options": ParsingOptions(stop_sequences=["x"] * 17)}, "more than 16"),
        ({"parsing_options": ParsingOptions(stop_sequences=["\ud800"])}, "lone surrogate"),
        ({"parsing_options": ParsingOptions(parse_tool_calls=None)}, "parse_tool_calls must be a bool"),  # type: ignore[arg-type]
        ({"parsing_options": ParsingOptions(thinking_initial_stage="x")}, "thinking_initial_stage must be"),  # type: ignore[arg-type]
    ],
)
def test_a_stream_processor_refuses_a_request_built_by_hand_by_the_field_at_fault(
    changes: dict[str, object], words: str
) -> None:
    request = dataclasses.replace(_request(), **changes)
    with pytest.raises(dscodec.StreamStateError, match=words):
        dscodec.StreamProcessor(request, response_id="r", model="m")


@pytest.mark.parametrize(
    ("changes", "error", "words"),
    [
        ({"conversation": None}, TypeError, "request.conversation must be a Conversation"),
        ({"inference_options": None}, TypeError, "request.inference_options must be an InferenceOptions"),
        (
            {"inference_options": dscodec.InferenceOptions(max_tokens="5")},  # type: ignore[arg-type]
            TypeError,
            "max_tokens must be an int",
        ),
        (
            {"inference_options": dscodec.InferenceOptions(max_tokens=_HUGE)},
            ValueError,
            "an integer of about",
        ),
    ],
)
def test_resolve_max_tokens_refuses_a_request_built_by_hand(
    changes: dict[str, object], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        dataclasses.replace(_request(), **changes).resolve_max_tokens(10, 1000)


# -- accumulate, WireEvent, errors, options -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "error", "words"),
    [
        ({"response_id": 5}, TypeError, "response_id must be a str or None"),
        ({"model": _deep(5000)}, TypeError, "model must be a str or None"),
        ({"model": "\udc00"}, ValueError, "model must be valid Unicode text"),
        ({"created": "0"}, TypeError, "created must be an int or None"),
        ({"created": True}, TypeError, "created must be an int or None"),
        ({"created": _HUGE}, ValueError, "an integer of about 5001 digits"),
        ({"created": -1}, ValueError, "created must be from 0"),
    ],
)
def test_accumulate_refuses_response_fields_of_the_wrong_type(
    changes: dict[str, object], error: type[Exception], words: str
) -> None:
    for protocol in ("chat_completions", "responses", "messages"):
        with pytest.raises(error, match=words):
            dscodec.accumulate(protocol, [], **changes)  # type: ignore[arg-type]


def test_wire_event_from_json_checks_its_text_at_once() -> None:
    for text in (5, None, b"{}"):
        with pytest.raises(TypeError, match="WireEvent.from_json takes a str"):
            dscodec.WireEvent.from_json(text)  # type: ignore[arg-type]
    for text in ("", "not json", "[1]", '"x"', "\ud800"):
        with pytest.raises(ValueError, match="WireEvent.from_json takes the JSON text of an object"):
            dscodec.WireEvent.from_json(text)
    with pytest.raises(TypeError, match="event name"):
        dscodec.WireEvent.from_json("{}", event=_HUGE)  # type: ignore[arg-type]

    class Text(str):
        pass

    assert dscodec.WireEvent.from_json(Text('{"a":1}'), event="e").sse() == 'event: e\ndata: {"a":1}\n\n'


@pytest.mark.parametrize("event", ["a\nb", "a\rb", "\n"])
def test_a_wire_event_name_is_one_line(event: str) -> None:
    with pytest.raises(ValueError, match="event name must be one line"):
        dscodec.WireEvent({"type": "x"}, event=event)
    with pytest.raises(ValueError, match="event name must be one line"):
        dscodec.WireEvent.from_json("{}", event=event)


@pytest.mark.parametrize(
    "value",
    [{1, 2}, b"raw", _HUGE, _deep(1000), "\ud800", object()],
    ids=["set", "bytes", "huge", "deep", "surrogate", "object"],
)
def test_wire_event_data_that_is_no_json_is_refused_by_name(value: object) -> None:
    event = dscodec.WireEvent({"a": value})
    with pytest.raises(TypeError, match="the WireEvent's data cannot be written as JSON"):
        event.sse()


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: dscodec.ConversionError(5), "message must be a str"),  # type: ignore[arg-type]
        (lambda: dscodec.ModelOutputError(_deep(5000)), "message must be a str"),  # type: ignore[arg-type]
        (lambda: dscodec.ConversionError("m", param=_HUGE), "param must be a str or None"),  # type: ignore[arg-type]
        (lambda: dscodec.DscodecError("m", protocol=5), "protocol must be a str or None"),  # type: ignore[arg-type]
        (lambda: dscodec.ConversionError("m").with_protocol(None), "protocol must be a str"),  # type: ignore[arg-type]
    ],
)
def test_errors_take_text_only(make: Any, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        make()


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (
            lambda: dscodec.ConversionOptions().with_model_alias(["m"], "v4"),
            "model names must be str, not list",
        ),
        (lambda: dscodec.ConversionOptions().with_model_alias({}, "v4"), "model names must be str, not dict"),
        (lambda: dscodec.ConversionOptions().with_model_versions_by_name(5), "must be a mapping, not int"),
        (
            lambda: dscodec.ConversionOptions().with_model_versions_by_name(["ab"]),
            "must be a mapping, not list",
        ),
    ],
)
def test_conversion_options_name_the_argument_of_the_wrong_type(make: Any, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        make()
