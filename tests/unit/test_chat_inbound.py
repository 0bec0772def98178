"""Unit tests of Chat Completions request conversion (``dscodec.protocols.openai_chat.inbound``, behavior.md#request-path).

Invariant fuzzed at the end of this file: for ANY body (any JSON value in any field, any nesting, any non-JSON
input), ``parse_request`` returns a ``ConversationRequest`` or raises ``ConversionError`` bound to the OpenAI
error body — never any other exception.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dscodec.conversation import (
    AssistantMessage,
    ConversationRequest,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from dscodec.errors import ContextLengthExceeded, ConversionError
from dscodec.options import ConversionOptions
from dscodec.protocols import _body, error_body
from dscodec.protocols.openai_chat.inbound import parse_request
from tests.unit.test_shared_rules import Counted

V4 = "DeepSeek-V4-Pro"
V41 = "DeepSeek-V4.1-Flash"
IMAGE = "<｜image｜>"
USER = {"role": "user", "content": "Hi"}


def body(**fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"model": V4, "messages": [USER]}
    out.update(fields)
    return out


def convert(request: Any, **options: Any) -> ConversationRequest:
    return parse_request(
        request if isinstance(request, (str, bytes)) else json.dumps(request),
        options=ConversionOptions(**options) if options else None,
    )


def error_of(request: Any, **options: Any) -> ConversionError:
    with pytest.raises(ConversionError) as info:
        convert(request, **options)
    exc = info.value
    assert exc.status_code == 400
    assert exc.protocol == "chat_completions"
    assert exc.body["error"]["message"] == exc.message
    assert list(exc.body["error"]) == ["message", "type", "param", "code"]
    return exc


def message_of(request: Any, **options: Any) -> str:
    return error_of(request, **options).message


def tool(name: str = "get_weather", **function: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, **function}}


def call(call_id: str, name: str = "get_weather", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# -- basics ------------------------------------------------------------------------------------------------


def test_minimal_request_defaults() -> None:
    req = convert(body())
    assert (req.protocol, req.model, req.model_version, req.stream, req.wire.include_usage) == (
        "chat_completions",
        V4,
        "v4",
        False,
        False,
    )
    conv = req.conversation
    assert conv.thinking_mode is True and conv.reasoning_effort == "high"
    assert conv.messages == [UserMessage(content="Hi")]
    assert conv.tool_choice == "auto" and conv.response_format == "text" and conv.tools == []
    opts = req.inference_options
    assert (opts.temperature, opts.top_p, opts.max_tokens, opts.logprobs, opts.seed) == (
        1.0,
        1.0,
        None,
        False,
        None,
    )
    assert opts.output_constraint is None
    parsing = req.parsing_options
    assert (parsing.parse_tool_calls, parsing.starts_in_tool_calls, parsing.parse_json_output) == (
        False,
        False,
        False,
    )
    assert parsing.thinking_initial_stage == "reasoning_start"


def test_accepts_bytes_str_and_mapping() -> None:
    raw = json.dumps(body())
    for request in (raw, raw.encode(), body()):
        assert parse_request(request).conversation.messages == [UserMessage(content="Hi")]


@pytest.mark.parametrize(
    ("fields", "thinking", "effort"),
    [
        ({}, True, "high"),
        ({"reasoning_effort": "none"}, False, None),
        ({"reasoning_effort": "minimal"}, True, "low"),
        ({"reasoning_effort": "ultra"}, True, "max"),
        ({"reasoning_effort": {"xhigh": None}}, True, "xhigh"),
        ({"thinking": {"type": "disabled"}, "reasoning_effort": "max"}, False, None),
        ({"thinking": {"type": "enabled"}, "reasoning_effort": "none"}, True, "high"),
        ({"thinking": {"type": "adaptive", "budget_tokens": 5}}, True, "high"),
        ({"thinking": None}, True, "high"),
    ],
)
def test_thinking_resolution(fields: dict[str, Any], thinking: bool, effort: Any) -> None:
    conv = convert(body(**fields)).conversation
    assert (conv.thinking_mode, conv.reasoning_effort) == (thinking, effort)


def test_default_thinking_mode_option() -> None:
    assert convert(body(), default_thinking_mode=False).conversation.thinking_mode is False
    assert (
        convert(body(reasoning_effort="low"), default_thinking_mode=False).conversation.thinking_mode is True
    )


def test_sampling_values_are_f32_and_version_dependent() -> None:
    nothink = {"thinking": {"type": "disabled"}}
    opts = convert(body(temperature=0.3, top_p=0.01, **nothink)).inference_options
    assert (opts.temperature, opts.top_p) == (0.30000001192092896, 0.009999999776482582)
    opts = convert(body(temperature=0.3, top_p=0.5)).inference_options
    assert (opts.temperature, opts.top_p) == (1.0, 1.0)
    opts = convert(body(top_p=0.5, tools=[tool()])).inference_options
    assert opts.top_p == 0.949999988079071
    assert convert(body(top_p=0.5, tools=[tool()], tool_choice="none")).inference_options.top_p == 1.0
    assert convert(body(model=V41, top_p=0.5)).inference_options.top_p == 0.949999988079071
    assert convert(body(model=V41, top_p=0.5, **nothink)).inference_options.top_p == 1.0


def test_other_inference_fields() -> None:
    req = convert(
        body(
            max_tokens=100,
            logprobs=True,
            top_logprobs=20,
            seed=2**63 - 1,
            stop=["a", "a"],
            n=1,
            stream=True,
            stream_options={"include_usage": True},
            parallel_tool_calls=False,
            presence_penalty=-2,
            frequency_penalty=2,
            user="ignored",
            extra_body={"x": 1},
        )
    )
    opts = req.inference_options
    assert (opts.max_tokens, opts.logprobs, opts.top_logprobs, opts.seed) == (100, True, 20, 2**63 - 1)
    assert req.parsing_options.stop_sequences == ["a", "a"]
    assert req.stream is True and req.wire.include_usage is True
    assert convert(body(stop="x")).parsing_options.stop_sequences == ["x"]


def test_max_completion_tokens_is_honoured_d4() -> None:
    assert convert(body(max_completion_tokens=7)).inference_options.max_tokens == 7
    # Both sent: the newer max_completion_tokens wins.
    assert convert(body(max_tokens=100, max_completion_tokens=7)).inference_options.max_tokens == 7
    assert message_of(body(max_completion_tokens=0)) == (
        "Invalid max_tokens value, the valid range of max_tokens is [1, 393216]"
    )
    assert message_of(
        body(max_completion_tokens=501, thinking={"type": "disabled"}),
        non_thinking_max_tokens_upper_bound=500,
    ).endswith("[1, 500]")
    assert message_of(body(max_completion_tokens=1.5)).startswith("invalid request body: invalid type")


# -- malformed bodies (deviation D2) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message", "param"),
    [
        ("not json", "invalid JSON request: ", None),
        (b"\xff", "invalid JSON request: ", None),
        (
            "[]",
            "invalid request body: invalid length 0, expected struct ChatCompletionRequest with 20 elements",
            None,
        ),
        ("null", "invalid request body: invalid type: null, expected struct ChatCompletionRequest", None),
        ("{}", "invalid request body: missing field `messages`", None),
        ('{"messages": []}', "invalid request body: missing field `model`", None),
        (
            '{"model": 1, "messages": []}',
            "invalid request body: invalid type: integer `1`, expected a string",
            "model",
        ),
        (
            '{"model": "m", "messages": [{"role": "developer", "content": "a"}]}',
            (
                "invalid request body: unknown variant `developer`, expected one of `system`, `user`, `assistant`, "
                "`tool`, `latest_reminder`"
            ),
            "messages[0].role",
        ),
        (
            '{"model": "m", "messages": [{"role": "user", "content": null}]}',
            "invalid request body: content should be a string or a list",
            "messages[0].content",
        ),
        (
            '{"model": "m", "messages": [{"role": "user", "content": [{"type": "refusal"}]}]}',
            "invalid request body: unknown variant `refusal`, expected one of `text`, `image_url`, `file`",
            "messages[0].content[0].type",
        ),
        (
            '{"model": "m", "messages": [], "reasoning_effort": "HIGH"}',
            (
                "invalid request body: unknown variant `HIGH`, expected one of `none`, `minimal`, `low`, `medium`, "
                "`high`, `xhigh`, `ultra`, `max`"
            ),
            "reasoning_effort",
        ),
        (
            '{"model": "m", "messages": [], "max_tokens": -1}',
            "invalid request body: invalid value: integer `-1`, expected u32",
            "max_tokens",
        ),
        (
            '{"model": "m", "messages": [], "max_tokens": 1.5}',
            "invalid request body: invalid type: floating point `1.5`, expected u32",
            "max_tokens",
        ),
        (
            '{"model": "m", "messages": [], "n": 256}',
            "invalid request body: invalid value: integer `256`, expected u8",
            "n",
        ),
        (
            '{"model": "m", "messages": [], "seed": 18446744073709551616}',
            "invalid request body: invalid type: floating point `1.8446744073709552e+19`, expected u64",
            "seed",
        ),
        (
            '{"model": "m", "messages": [], "thinking": true}',
            "invalid request body: invalid type: boolean `true`, expected struct ChatCompletionThinking",
            "thinking",
        ),
        (
            '{"model": "m", "messages": [], "thinking": {"type": "bogus"}}',
            "invalid request body: unknown variant `bogus`, expected one of `adaptive`, `enabled`, `disabled`",
            "thinking.type",
        ),
        (
            '{"model": "m", "messages": [], "tool_choice": "any"}',
            "invalid request body: expected one of `none`, `auto`, `required` or a tool",
            "tool_choice",
        ),
        (
            '{"model": "m", "messages": [], "tools": [{"type": "web_search"}]}',
            "invalid request body: unknown variant `web_search`, expected `function`",
            "tools[0].type",
        ),
        (
            '{"model": "m", "messages": [], "stop": 5}',
            "invalid request body: expected a string or a list",
            "stop",
        ),
        (
            '{"model": "m", "messages": [], "response_format": {"type": "json_schema", "json_schema": {}}}',
            "invalid request body: missing field `schema`",
            "response_format.json_schema",
        ),
        (
            '{"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "u"}]}]}',
            'invalid request body: invalid type: string "u", expected struct ChatCompletionImageUrl',
            "messages[0].content[0].image_url",
        ),
        (
            '{"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"id": "a", "type": "custom"}]}]}',
            "invalid request body: unknown variant `custom`, expected `function`",
            "messages[0].tool_calls[0].type",
        ),
        (
            '{"model": "m", "messages": [{"role": "tool", "content": "x"}]}',
            "invalid request body: missing field `tool_call_id`",
            "messages[0]",
        ),
        (
            '{"model": "m", "messages": [{"role": "latest_reminder", "content": []}]}',
            "invalid request body: invalid type: sequence, expected a string",
            "messages[0].content",
        ),
    ],
)
def test_malformed_bodies_are_400(raw: str | bytes, message: str, param: Any) -> None:
    exc = error_of(raw)
    assert exc.message.startswith(message)
    assert exc.param == param
    assert exc.body["error"]["param"] == param


def test_first_malformed_field_in_document_order_wins() -> None:
    assert message_of('{"n": true, "model": 1, "messages": []}').endswith("expected u8")
    assert message_of('{"messages": 1, "model": 1}').endswith("expected a sequence")


def test_nesting_limit() -> None:
    deep = "[" * 126 + "]" * 126
    convert(f'{{"model": "DeepSeek-V4-Pro", "messages": [{{"role": "user", "content": "x"}}], "zz": {deep}}}')
    deeper = "[" * 127 + "]" * 127
    assert message_of(f'{{"model": "m", "messages": [], "zz": {deeper}}}').startswith(
        "invalid JSON request: recursion limit exceeded"
    )


def test_unknown_fields_are_ignored_whatever_their_type() -> None:
    assert convert(body(enable_thinking="yes", chat_template_kwargs=[1], user=None)).model == V4


def test_null_optional_fields_are_absent() -> None:
    req = convert(body(temperature=None, stream=None, tools=None, stop=None, thinking=None, seed=None))
    assert req.inference_options.temperature == 1.0 and req.stream is False


def test_non_json_inputs() -> None:
    assert message_of('{"model": "m", "messages": []} x').startswith("invalid JSON request: ")
    with pytest.raises(ConversionError):
        parse_request({"model": V4, "messages": [USER], "x": {1, 2}})  # type: ignore[dict-item]
    with pytest.raises(ConversionError):
        parse_request(42)  # type: ignore[arg-type]


# -- semantic errors and their order (behavior.md#chat-check-order) ------------------------------------------


def test_model_check() -> None:
    assert message_of(body(model="deepseek-chat")) == (
        "The supported API model names are DeepSeek-V4-Pro, DeepSeek-V4.1-Flash, but you passed deepseek-chat."
    )
    alias = convert(body(model="my-model"), model_versions_by_name={"my-model": "v4.1"})
    assert (alias.model, alias.model_version) == ("my-model", "v4.1")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"messages": []}, "Empty input messages"),
        ({"n": 2}, "Invalid n value (currently only n = 1 is supported)"),
        ({"stream_options": {}}, "stream_options should be set along with stream = true"),
        (
            {"stream_options": {"include_usage": True}, "stream": False},
            "stream_options should be set along with stream = true",
        ),
        (
            {"presence_penalty": 2.5},
            "Invalid presence_penalty value, the valid range of presence_penalty is [-2, 2]",
        ),
        (
            {"frequency_penalty": -3},
            "Invalid frequency_penalty value, the valid range of frequency_penalty is [-2, 2]",
        ),
        ({"temperature": 1e39}, "Invalid temperature value, the valid range of temperature is [0, 2]"),
        ({"top_p": 0}, "Invalid top_p value, the valid range of top_p is (0, 1.0]"),
        (
            {"top_logprobs": 0},
            (
                "Invalid top_logprobs and logprobs value, logprobs must be set to true if "
                "top_logprobs is used."
            ),
        ),
        (
            {"top_logprobs": 21, "logprobs": True},
            ("Invalid top_logprobs value, the valid range of top_logprobs is [0, 20]."),
        ),
        ({"max_tokens": 393217}, "Invalid max_tokens value, the valid range of max_tokens is [1, 393216]"),
        ({"seed": 2**63}, "Invalid seed value, the valid range of seed is [0, 2^63)"),
        ({"stop": [str(i) for i in range(17)]}, "Stop string array too long: 17"),
        (
            {"tools": [tool("a.b")]},
            (
                "Invalid 'tools[0].function.name': string does not match pattern. Expected a "
                "string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            ),
        ),
        ({"tools": [tool(), tool()]}, "Tool names must be unique."),
        (
            {"tools": [tool(strict=True), tool("g")]},
            "Cannot use strict tool with non-strict tool in the same request",
        ),
        (
            {
                "tools": [tool(strict=True)],
                "response_format": {"type": "json_object"},
                "messages": [{"role": "user", "content": "json"}],
            },
            "response_format should not be used with tools",
        ),
        ({"tools": [tool()], "tool_choice": "required"}, "Thinking mode does not support this tool_choice"),
        (
            {"tools": [tool()], "tool_choice": {"type": "function", "function": {"name": "zzz"}}},
            "Invalid value for 'tool_call': no function named 'zzz' was specified in the 'tools' parameter.",
        ),
        (
            {"response_format": {"type": "json_object"}},
            "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'.",
        ),
    ],
)
def test_semantic_errors(fields: dict[str, Any], message: str) -> None:
    exc = error_of(body(**fields))
    assert exc.message == message
    assert exc.param is None


# Pairs (earlier rule, later rule) of behavior.md#chat-check-order as refined against the reference: the earlier one must win.
_ORDER = [
    ("model", {"model": "zzz"}),
    ("tool name", {"tools": [tool("a b")]}),
    ("messages", {"messages": [{"role": "tool", "tool_call_id": "x", "content": "o"}]}),
    ("json word", {"response_format": {"type": "json_object"}}),
    ("tool schema", {"tools": [tool(parameters={"type": "string"})]}),
    ("tool choice", {"tools": [tool("f")], "tool_choice": {"type": "function", "function": {"name": "zz"}}}),
    ("stop", {"stop": ""}),
    ("stream_options", {"stream_options": {}}),
    ("response schema", {"response_format": {"type": "json_schema", "json_schema": {"schema": [1]}}}),
    ("n", {"n": 2}),
    ("presence", {"presence_penalty": 3}),
    ("frequency", {"frequency_penalty": 3}),
    ("temperature", {"temperature": 3}),
    ("top_p", {"top_p": 0}),
    ("top_logprobs", {"top_logprobs": 3}),
    ("max_tokens", {"max_tokens": 0}),
    ("seed", {"seed": 2**63}),
]


@pytest.mark.parametrize(
    ("first", "second"),
    [(a, b) for i, a in enumerate(_ORDER) for b in _ORDER[i + 1 :] if not set(a[1]) & set(b[1])],
    ids=lambda pair: pair[0],
)
def test_validation_order(first: tuple[str, dict[str, Any]], second: tuple[str, dict[str, Any]]) -> None:
    alone = message_of(body(**first[1]))
    assert message_of(body(**{**second[1], **first[1]})) == alone
    assert message_of(body(**{**first[1], **second[1]})) == alone


def test_tool_choice_none_skips_schema_checks_but_not_names() -> None:
    req = convert(body(tools=[tool(parameters={"type": "string"}), tool()], tool_choice="none"))
    assert req.conversation.tools == [] and req.conversation.tool_choice == "none"
    assert req.inference_options.output_constraint is None
    assert "tools[0].function.name" in message_of(body(tools=[tool("")], tool_choice="none"))


# -- messages --------------------------------------------------------------------------------------------------


def test_content_parts_are_joined() -> None:
    req = convert(
        body(
            messages=[
                {"role": "system", "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]},
                {"role": "user", "content": []},
                {"role": "latest_reminder", "content": "R"},
            ]
        )
    )
    assert [m.content for m in req.conversation.messages] == ["A\n\nB", "", "R"]


def test_empty_system_messages_are_dropped() -> None:
    req = convert(body(messages=[{"role": "system", "content": ""}, {"role": "system", "content": []}, USER]))
    assert req.conversation.messages == [UserMessage(content="Hi")]


def test_images_on_v4_are_text() -> None:
    parts = [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "ftp://not-checked"}},
        {"type": "file"},
    ]
    req = convert(
        body(
            messages=[
                {"role": "user", "content": parts},
                {"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
            ]
        )
    )
    user, assistant = req.conversation.messages
    assert user.content == "look\n\n[Unsupported Image]\n\n[Unsupported Image]"
    assert isinstance(user, UserMessage) and user.images == []
    assert assistant.content == "[Unsupported Image]"


def test_images_on_v41_are_placeholders_at_tracked_offsets() -> None:
    parts = [
        {"type": "text", "text": f"a{IMAGE}b"},
        {"type": "image_url", "image_url": {"url": "http://x/a.png", "detail": "low"}},
        {"type": "file", "file_data": "data:image/gif;base64,R0lG"},
    ]
    req = convert(body(model=V41, messages=[USER, {"role": "user", "content": parts}]))
    message = req.conversation.messages[1]
    assert isinstance(message, UserMessage)
    assert message.content == f"a{IMAGE}b\n\n{IMAGE}\n\n{IMAGE}"
    # The typed spelling at offset 1 is text: only the two placeholders are images.
    assert [p.offset for p in message.images] == [len(f"a{IMAGE}b\n\n"), len(f"a{IMAGE}b\n\n{IMAGE}\n\n")]
    for placeholder in message.images:
        assert message.content[placeholder.offset :].startswith(IMAGE)
    first, second = (p.source for p in message.images)
    assert (first.kind, first.url, first.detail, first.path) == (
        "url",
        "http://x/a.png",
        "low",
        ".messages[1]",
    )
    assert (second.kind, second.url, second.detail, second.path) == (
        "data_url",
        "data:image/gif;base64,R0lG",
        "high",
        ".messages[1]",
    )


def test_v41_images_in_system_and_tool_messages() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://x"}}
    req = convert(
        body(
            model=V41,
            messages=[
                {"role": "system", "content": [image]},
                USER,
                {"role": "assistant", "content": None, "tool_calls": [call("c")]},
                {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "t"}, image]},
            ],
        )
    )
    system, _, _, tool_message = req.conversation.messages
    assert isinstance(system, SystemMessage) and system.images[0].offset == 0
    assert isinstance(tool_message, ToolMessage) and tool_message.images[0].offset == 3
    assert tool_message.images[0].source.path == ".messages[3]"


@pytest.mark.parametrize(
    ("part", "message"),
    [
        (
            {"type": "image_url", "image_url": {"url": "ftp://x"}},
            ".messages[0]: Unsupported image_url format",
        ),
        (
            {"type": "image_url", "image_url": {"url": "data:image/bmp;base64,AA"}},
            (
                ".messages[0]: You have uploaded an unsupported image. Please make sure your image is valid and has one "
                "of the following formats: webp, png, jpeg, and gif."
            ),
        ),
        (
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,A"}},
            ".messages[0]: Invalid base64 data",
        ),
        ({"type": "file"}, ".messages[0]: file must have a file_id or file_data"),
        (
            {"type": "file", "file": {"file_data": "data:image/png;base64,AA"}},
            ".messages[0]: file must have a file_id or file_data",
        ),
        (
            {"type": "file", "file_id": "f"},
            (".messages[0]: file_id is not supported. Pass the image as a base64 data url instead."),
        ),
        (
            {"type": "file", "file_id": "f", "file_data": "data:image/png;base64,AA"},
            ".messages[0]: file cannot have both file_id and file_data",
        ),
        ({"type": "file", "file_data": "http://x"}, ".messages[0]: file_data is not a valid base64 data url"),
        (
            {"type": "file", "file_data": "data:text/plain;base64,AA"},
            (
                ".messages[0]: You have uploaded an unsupported file. Please make sure your file is valid and has one of "
                "the following formats: webp, png, jpeg, and gif."
            ),
        ),
        ({"type": "file", "file_data": "data:image/png,AA"}, ".messages[0]: Unsupported image_url format"),
    ],
)
def test_v41_image_errors(part: dict[str, Any], message: str) -> None:
    assert message_of(body(model=V41, messages=[{"role": "user", "content": [part]}])) == message


def test_v41_file_parts_are_checked_before_image_urls() -> None:
    parts = [{"type": "image_url", "image_url": {"url": "ftp://x"}}, {"type": "file", "file_data": "x"}]
    assert message_of(body(model=V41, messages=[{"role": "user", "content": parts}])) == (
        ".messages[0]: file_data is not a valid base64 data url"
    )


def test_v41_assistant_images_are_refused() -> None:
    image = {"type": "image_url", "image_url": {"url": "http://x"}}
    assert message_of(body(model=V41, messages=[USER, {"role": "assistant", "content": [image]}])) == (
        "Image in assistant message is not supported"
    )
    bad_file = {"type": "file", "file_id": "x"}
    assert message_of(
        body(model=V41, messages=[USER, {"role": "assistant", "content": [image, bad_file]}])
    ).endswith("file_id is not supported. Pass the image as a base64 data url instead.")


def test_assistant_message_rules() -> None:
    assert message_of(body(messages=[USER, {"role": "assistant"}])) == (
        "Invalid assistant message: content or tool_calls must be set"
    )
    assert message_of(body(messages=[USER, {"role": "assistant", "content": "x", "tool_calls": []}])) == (
        "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, but got an empty "
        "array instead."
    )
    req = convert(body(messages=[USER, {"role": "assistant", "content": [], "tool_calls": None}]))
    assert req.conversation.messages[1] == AssistantMessage(content="", reasoning="")


def test_tool_calls_and_results_keep_wire_order() -> None:
    req = convert(
        body(
            messages=[
                USER,
                {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": "r",
                    "tool_calls": [
                        call("c1", arguments='{"city": "Paris"}'),
                        call("c2", arguments="not json"),
                    ],
                },
                {"role": "tool", "tool_call_id": "c2", "content": "R2"},
                {"role": "tool", "tool_call_id": "c1", "content": "R1"},
            ]
        )
    )
    _, assistant, first, second = req.conversation.messages
    assert isinstance(assistant, AssistantMessage)
    assert [(c.id, c.arguments) for c in assistant.tool_calls] == [
        ("c1", '{"city": "Paris"}'),
        ("c2", "not json"),
    ]
    # The reference's conversation keeps the client's order; rendering puts results in call order.
    assert [(m.tool_call_id, m.content) for m in (first, second)] == [("c2", "R2"), ("c1", "R1")]


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (
            [{"role": "tool", "tool_call_id": "x", "content": "o"}],
            "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        ),
        (
            [
                USER,
                {"role": "assistant", "tool_calls": [call("a"), call("b")]},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
            ],
            (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                "'tool_call_id'. (insufficient tool messages following tool_calls message)"
            ),
        ),
        (
            [
                USER,
                {"role": "assistant", "tool_calls": [call("a")]},
                {"role": "tool", "tool_call_id": "zzz", "content": "r"},
            ],
            (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                "'tool_call_id', The following tool_call_ids did not have response messages: zzz"
            ),
        ),
        (
            [USER, {"role": "assistant", "tool_calls": [call("a"), call("a")]}],
            "Duplicate value for 'tool_call_id' of a in message[1]",
        ),
        (
            [
                USER,
                {"role": "assistant", "tool_calls": [call("a"), call("b")]},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
            ],
            "Duplicate value for 'tool_call_id' of a in message[3]",
        ),
        (
            [
                USER,
                {"role": "assistant", "tool_calls": [call("a")]},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
            ],
            "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        ),
        (
            [
                USER,
                {"role": "assistant", "tool_calls": [call("a")]},
                {"role": "system", "content": "s"},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
            ],
            (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                "'tool_call_id'. (insufficient tool messages following tool_calls message)"
            ),
        ),
    ],
)
def test_tool_pairing_errors(messages: list[dict[str, Any]], message: str) -> None:
    assert message_of(body(messages=messages)) == message


def test_reasoning_fill_empty_and_nothink() -> None:
    history = [
        USER,
        {"role": "assistant", "content": "A1"},
        USER,
        {"role": "assistant", "content": "A2", "reasoning_content": "kept"},
    ]
    think = convert(body(messages=history)).conversation.messages
    assert [m.reasoning for m in think if isinstance(m, AssistantMessage)] == ["", "kept"]
    nothink = convert(body(messages=history, thinking={"type": "disabled"})).conversation.messages
    assert [m.reasoning for m in nothink if isinstance(m, AssistantMessage)] == [None, None]


def test_reasoning_reject_applies_to_the_current_agentic_turn() -> None:
    reject = {"reasoning_content_behavior": "reject"}
    message = "The `reasoning_content` in the thinking mode must be passed back to the API."
    turn = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
    ]
    assert message_of(body(messages=turn), **reject) == message
    # Before the last user message the turn is filled instead.
    filled = convert(body(messages=[*turn, USER]), **reject).conversation.messages[1]
    assert isinstance(filled, AssistantMessage) and filled.reasoning == ""
    # A plain answer after the last user message is rejected only when the request offers tools.
    answer = [USER, {"role": "assistant", "content": "x"}]
    assert convert(body(messages=answer), **reject).conversation.messages[1].content == "x"
    assert message_of(body(messages=answer, tools=[tool()], tool_choice="none"), **reject) == message
    assert (
        convert(body(messages=turn, thinking={"type": "disabled"}), **reject).conversation.thinking_mode
        is False
    )


@pytest.mark.parametrize(
    ("last", "thinking", "stage"),
    [
        ({"content": "Sure,"}, True, "content_continuation"),
        ({"content": "", "reasoning_content": "Let me"}, True, "reasoning_continuation"),
        ({"content": ""}, True, "reasoning_start"),
        ({"content": "", "reasoning_content": ""}, True, "reasoning_start"),
        ({"content": "Sure,"}, False, None),
    ],
)
def test_prefix_stages(last: dict[str, Any], thinking: bool, stage: Any) -> None:
    fields: dict[str, Any] = {} if thinking else {"thinking": {"type": "disabled"}}
    req = convert(body(messages=[USER, {"role": "assistant", "prefix": True, **last}], **fields))
    final = req.conversation.messages[-1]
    assert isinstance(final, AssistantMessage) and final.prefix
    assert req.parsing_options.thinking_initial_stage == stage


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"messages": [USER, {"role": "assistant", "content": "x", "prefix": True}, USER]},
            (
                "Invalid completion message: prefix set true with message which is not final message or message role is "
                "not assistant"
            ),
        ),
        (
            {"tools": [tool()], "thinking": {"type": "disabled"}},
            "Function call should not be used with prefix",
        ),
        ({"tools": [tool()], "tool_choice": "none"}, "Function call should not be used with prefix"),
        (
            {
                "messages": [
                    USER,
                    {"role": "assistant", "tool_calls": [call("a")]},
                    {"role": "tool", "tool_call_id": "a", "content": "r"},
                    {"role": "assistant", "content": "x", "prefix": True},
                ]
            },
            "Function call should not be used with prefix",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "json"},
                    {"role": "assistant", "content": "{", "prefix": True},
                ],
                "response_format": {"type": "json_object"},
            },
            "response_format json_object should not be used with prefix",
        ),
    ],
)
def test_prefix_errors(fields: dict[str, Any], message: str) -> None:
    request = body(messages=[USER, {"role": "assistant", "content": "x", "prefix": True}])
    request.update(fields)
    assert message_of(request) == message


def test_prefix_is_ignored_on_other_roles() -> None:
    req = convert(body(messages=[{"role": "user", "content": "u", "prefix": True}, USER]))
    assert len(req.conversation.messages) == 2


# -- tools, tool_choice, response formats (behavior.md#tools-and-tool-choice, behavior.md#output-constraints, behavior.md#json-schemas, behavior.md#output-constraints) ---


def test_tools_and_constraint() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    req = convert(body(tools=[tool(description="Get weather", parameters=schema), tool("noargs")]))
    conv = req.conversation
    assert [(t.name, t.description, t.parameters, t.strict, t.defer_loading) for t in conv.tools] == [
        ("get_weather", "Get weather", schema, None, False),
        ("noargs", None, {}, None, False),
    ]
    constraint = req.inference_options.output_constraint
    assert constraint is not None and constraint.kind == "tool_call"
    assert json.loads(constraint.schema)[1] == {
        "type": "function",
        "function": {"name": "noargs", "description": None, "parameters": {}, "strict": None},
    }
    assert req.parsing_options.parse_tool_calls is True


def test_tool_choice_variants() -> None:
    nothink = {"thinking": {"type": "disabled"}}
    required = convert(body(tools=[tool(), tool("g")], tool_choice="required", **nothink))
    assert required.conversation.tool_choice == "required"
    assert required.parsing_options.starts_in_tool_calls is True
    assert required.inference_options.output_constraint.kind == "tool_call_required"  # type: ignore[union-attr]
    named = convert(
        body(
            tools=[tool(), tool("g")], tool_choice={"type": "function", "function": {"name": "g"}}, **nothink
        )
    )
    assert [t.name for t in named.conversation.tools] == [
        "g"
    ] and named.conversation.tool_choice == "required"
    for choice in ("required", {"type": "function", "function": {"name": "zzz"}}):
        fallback = convert(body(tool_choice=choice))
        assert (
            fallback.conversation.tool_choice == "auto" and fallback.parsing_options.parse_tool_calls is False
        )
    assert convert(body(tool_choice="none")).conversation.tool_choice == "none"


def test_strict_tools_are_normalised() -> None:
    params = {"type": "object", "properties": {"a": {"type": "string"}}, "$defs": {"x": {"type": "string"}}}
    req = convert(body(tools=[tool(parameters=params, strict=True), tool("g", strict=True)]))
    first, second = req.conversation.tools
    assert first.parameters == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,
        "required": ["a"],
    }
    assert second.parameters == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "required": [],
    }
    assert first.strict is True


def test_response_formats() -> None:
    json_object = convert(
        body(
            messages=[{"role": "latest_reminder", "content": "use JSONL"}, USER],
            response_format={"type": "json_object"},
        )
    )
    assert json_object.conversation.response_format == "json_object"
    assert json_object.parsing_options.parse_json_output is True
    assert json_object.inference_options.output_constraint.kind == "json"  # type: ignore[union-attr]
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "title": "T"}
    strict = convert(
        body(
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "n", "schema": schema, "strict": True},
            }
        )
    )
    assert strict.conversation.response_schema == schema
    assert strict.inference_options.output_constraint.schema == (  # type: ignore[union-attr]
        '{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false,"required":["a"]}'
    )
    loose = convert(body(response_format={"type": "json_schema", "json_schema": {"schema": schema}}))
    assert loose.inference_options.output_constraint.schema == json.dumps(schema, separators=(",", ":"))  # type: ignore[union-attr]
    regex = convert(body(response_format={"type": "regex", "regex": "a+"}))
    assert (regex.conversation.response_regex, regex.inference_options.output_constraint.schema) == (
        "a+",
        "a+",
    )  # type: ignore[union-attr]
    with_tools = convert(body(tools=[tool()], response_format={"type": "regex", "regex": "a+"}))
    assert with_tools.inference_options.output_constraint.kind == "tool_call"  # type: ignore[union-attr]


def test_json_word_is_not_found_in_reasoning_or_tool_fields() -> None:
    request = body(
        messages=[
            USER,
            {
                "role": "assistant",
                "content": "x",
                "reasoning_content": "json",
                "tool_calls": [call("json", arguments='{"json": 1}')],
            },
            {"role": "tool", "tool_call_id": "json", "content": "r"},
        ],
        tools=[tool("json", description="json")],
        response_format={"type": "json_object"},
        thinking={"type": "disabled"},
    )
    assert message_of(request).startswith("Prompt must contain the word 'json'")


# -- fuzz: nothing but ConversionError ------------------------------------------------------------------------------

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(
        [
            "user",
            "assistant",
            "tool",
            "function",
            "json_object",
            "json_schema",
            "text",
            "image_url",
            "file",
            "required",
            "none",
            "data:image/png;base64,AA",
            "http://x",
            "enabled",
            "disabled",
            "low",
            "object",
            "string",
        ]
    ),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "role",
                    "content",
                    "name",
                    "text",
                    "url",
                    "image_url",
                    "function",
                    "arguments",
                    "id",
                    "tool_calls",
                    "tool_call_id",
                    "prefix",
                    "reasoning_content",
                    "parameters",
                    "strict",
                    "properties",
                    "required",
                    "items",
                    "anyOf",
                    "$ref",
                    "schema",
                    "json_schema",
                    "file_data",
                    "file_id",
                    "include_usage",
                    "additionalProperties",
                    "description",
                ]
            )
            | st.text(max_size=4),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)

_FIELDS = [
    "model",
    "messages",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "n",
    "stop",
    "tools",
    "tool_choice",
    "response_format",
    "logprobs",
    "top_logprobs",
    "seed",
    "thinking",
    "reasoning_effort",
    "parallel_tool_calls",
    "presence_penalty",
    "frequency_penalty",
]


def _only_conversion_errors(request: Any, options: ConversionOptions | None = None) -> None:
    try:
        result = parse_request(request, options=options)
    except ConversionError as exc:
        assert exc.status_code == 400
        assert exc.protocol == "chat_completions"
        json.dumps(exc.body)
    else:
        assert isinstance(result, ConversationRequest)


@given(
    st.dictionaries(st.sampled_from(_FIELDS), _json_values, max_size=8),
    st.sampled_from([V4, V41, "zzz"]),
    st.booleans(),
)
def test_fuzz_any_field_values(fields: dict[str, Any], model: str, reject: bool) -> None:
    request = {"model": model, "messages": [USER], **fields}
    options = ConversionOptions(reasoning_content_behavior="reject" if reject else "fill_empty")
    _only_conversion_errors(request, options)
    _only_conversion_errors(json.dumps(request))


_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool", "latest_reminder"])},
    optional={
        "content": st.none()
        | st.text(max_size=5)
        | st.lists(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["text", "image_url", "file"])},
                optional={
                    "text": st.text(max_size=5),
                    "image_url": st.fixed_dictionaries(
                        {
                            "url": st.sampled_from(
                                [
                                    "http://x",
                                    "ftp://x",
                                    "data:image/png;base64,AA",
                                    "data:image/png;base64,A",
                                    "data:,x",
                                ]
                            )
                        }
                    ),
                    "file_data": st.sampled_from(
                        ["data:image/png;base64,AA", "x", "data:text/plain;base64,AA"]
                    ),
                    "file_id": st.just("f"),
                },
            ),
            max_size=3,
        ),
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {
                    "id": st.sampled_from(["a", "b"]),
                    "type": st.just("function"),
                    "function": st.fixed_dictionaries({"name": st.just("f"), "arguments": st.just("{}")}),
                }
            ),
            max_size=2,
        ),
        "tool_call_id": st.sampled_from(["a", "b", "c"]),
        "prefix": st.booleans(),
        "reasoning_content": st.none() | st.text(max_size=3),
    },
)


@given(st.lists(_message, max_size=6), st.sampled_from([V4, V41]), _json_values, _json_values)
def test_fuzz_message_sequences(messages: list[dict[str, Any]], model: str, tools: Any, choice: Any) -> None:
    _only_conversion_errors({"model": model, "messages": messages})
    _only_conversion_errors(
        {
            "model": model,
            "messages": messages,
            "tools": tools,
            "tool_choice": choice,
            "response_format": {"type": "json_object"},
        }
    )


@given(_json_values)
def test_fuzz_bodies_that_are_not_objects(value: Any) -> None:
    _only_conversion_errors(json.dumps(value))
    _only_conversion_errors(value)


@given(st.text(max_size=40) | st.binary(max_size=40))
def test_fuzz_raw_text(raw: str | bytes) -> None:
    _only_conversion_errors(raw)


@pytest.mark.parametrize("depth", [100, 127, 128, 5000])
def test_deep_nesting_everywhere(depth: int) -> None:
    nested = "[" * depth + "]" * depth
    obj = '{"a":' * depth + "1" + "}" * depth
    for field in ("messages", "tools", "zz", "response_format"):
        _only_conversion_errors(f'{{"model": "{V4}", "messages": [], "{field}": {nested}}}')
        _only_conversion_errors(f'{{"model": "{V4}", "messages": [], "{field}": {obj}}}')
    schema = '{"type": "object", "properties": {"a": ' * 60 + '{"type": "string"}' + "}}" * 60
    _only_conversion_errors(
        f'{{"model": "{V4}", "messages": [{{"role": "user", "content": "u"}}], "tools": '
        f'[{{"type": "function", "function": {{"name": "f", "strict": true, "parameters": {schema}}}}}]}}'
    )


# -- hardening: linear checks, the stop length cap (D16), error shapes ----------------------------------------
#
# The checks below count comparisons instead of timing anything: names and ids are ``Counted`` strings, which a
# linear check compares about once each and a scan of all earlier items compares quadratically often. The body
# is handed over as parsed (``load_body`` patched to the identity) so that the counted strings reach the checks.

MANY = 2_000


@pytest.fixture
def parsed_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_body, "load_body", lambda request: request)


def _tools(names: list[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]


@pytest.mark.usefixtures("parsed_bodies")
def test_tool_name_uniqueness_is_linear() -> None:
    names = [Counted(f"t{i}") for i in range(MANY)]
    Counted.reset()
    assert len(parse_request(body(tools=_tools(names))).conversation.tools) == MANY
    assert Counted.comparisons <= 4 * MANY
    Counted.reset()
    with pytest.raises(ConversionError, match=r"^Tool names must be unique\.$"):
        parse_request(body(tools=_tools([*names, Counted("t0")])))
    assert Counted.comparisons <= 4 * MANY


@pytest.mark.usefixtures("parsed_bodies")
def test_tool_call_pairing_is_linear() -> None:
    ids = [Counted(f"c{i}") for i in range(MANY)]
    calls = [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]
    results = [{"role": "tool", "tool_call_id": Counted(str(i)), "content": "r"} for i in reversed(ids)]
    messages = [USER, {"role": "assistant", "content": None, "tool_calls": calls}, *results]
    Counted.reset()
    converted = parse_request(body(messages=messages)).conversation.messages
    assert len(converted) == 2 + MANY
    assert Counted.comparisons <= 6 * MANY
    Counted.reset()
    with pytest.raises(ConversionError, match=r"^Duplicate value for 'tool_call_id' of c0 in message\[1\]$"):
        duplicated = [
            *calls,
            {"id": Counted("c0"), "type": "function", "function": {"name": "f", "arguments": ""}},
        ]
        parse_request(body(messages=[USER, {"role": "assistant", "tool_calls": duplicated}, *results]))
    assert Counted.comparisons <= 6 * MANY


@pytest.mark.heavy
def test_twenty_thousand_tools_and_calls() -> None:
    n = 20_000
    request = convert(body(tools=_tools([f"t{i}" for i in range(n)])))
    assert [t.name for t in request.conversation.tools[:2]] == ["t0", "t1"]
    assert len(request.conversation.tools) == n
    assert (
        message_of(body(tools=_tools([*(f"t{i}" for i in range(n)), "t0"]))) == "Tool names must be unique."
    )
    # A bad schema before the repeated name wins, since each tool's name is checked just before its schema.
    bad = {"type": "function", "function": {"name": "bad", "parameters": {"type": "string"}}}
    tools = [*_tools([f"t{i}" for i in range(n)]), bad, *_tools(["t0"])]
    assert message_of(body(tools=tools)).startswith("Invalid schema for function 'bad'")

    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in range(n)
    ]
    results = [{"role": "tool", "tool_call_id": f"c{i}", "content": f"r{i}"} for i in reversed(range(n))]
    assistant = {"role": "assistant", "content": None, "tool_calls": calls}
    converted = convert(body(messages=[USER, assistant, *results])).conversation.messages
    assert [m.tool_call_id for m in converted[2:5] if isinstance(m, ToolMessage)] == [
        "c19999",
        "c19998",
        "c19997",
    ]
    assert message_of(body(messages=[USER, assistant, *results[:-1], USER])).endswith(
        "(insufficient tool messages following tool_calls message)"
    )
    assert message_of(body(messages=[USER, assistant, *results[:-1], results[0]])) == (
        f"Duplicate value for 'tool_call_id' of c19999 in message[{n + 1}]"
    )
    names = [f"p{i}" for i in range(n)]
    schema = {
        "type": "object",
        "properties": {p: {"type": "string"} for p in names},
        "required": [*names, "p0"],
    }
    function = {"type": "function", "function": {"name": "f", "parameters": schema}}
    assert message_of(body(tools=[function])).endswith("has non-unique elements")
    function["function"]["strict"] = True
    assert message_of(body(tools=[function])) == "Duplicate required property 'p0'"


def test_stop_string_length_cap_d16() -> None:
    at_cap, over_cap = "s" * 4096, "s" * 4097
    assert convert(body(stop=["a", at_cap])).parsing_options.stop_sequences == ["a", at_cap]
    exc = error_of(body(stop=["a", "b", "c", over_cap]))
    assert exc.message == (
        "Invalid 'stop[3]': string too long. Expected a string with maximum length 4096, but got a string with "
        "length 4097 instead."
    )
    assert exc.body["error"]["param"] == "stop[3]"
    assert error_of(body(stop=over_cap)).message.startswith("Invalid 'stop': string too long.")
    # Every check of the reference comes first: it accepts any length, so its errors must stay the same.
    assert message_of(body(stop=[over_cap, ""])).startswith("Invalid 'stop[1]': empty string.")
    assert (
        message_of(body(stop=[over_cap], seed=2**63))
        == "Invalid seed value, the valid range of seed is [0, 2^63)"
    )
    assert message_of(body(stop=over_cap, max_completion_tokens=0)).startswith("Invalid max_tokens value")


def test_context_length_error_is_in_the_openai_envelope() -> None:
    request = convert(body(max_tokens=100))
    with pytest.raises(ContextLengthExceeded) as info:
        request.resolve_max_tokens(950, 1000)
    exc = info.value
    assert exc.protocol == "chat_completions"
    assert exc.body == error_body("chat_completions", exc)
    assert list(exc.body["error"]) == ["message", "type", "param", "code"]


@pytest.mark.parametrize(
    ("prompt", "limit", "expected"),
    [
        (2**32 - 2, 2**32 - 1, 1),  # 32-bit counts: the sum saturates at 2**32 - 1, as the reference's does
        (2**40, 2**32 - 1, None),  # a prompt count past 32 bits never fits a 32-bit context
        (2**33, 131072, None),
        (2**40, 2**41, 5),  # nor is a large context cut to 32 bits
    ],
)
def test_resolve_max_tokens_past_32_bits(prompt: int, limit: int, expected: int | None) -> None:
    request = convert(body(max_tokens=5))
    if expected is not None:
        assert request.resolve_max_tokens(prompt, limit) == expected
        return
    with pytest.raises(ContextLengthExceeded) as info:
        request.resolve_max_tokens(prompt, limit)
    assert (
        f"However, you requested {prompt + 5} tokens ({prompt} in the messages, 5 in the completion)"
        in str(info.value)
    )
