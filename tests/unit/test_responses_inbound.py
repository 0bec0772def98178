"""Unit tests of OpenAI Responses request conversion (``dscodec.protocols.openai_responses.inbound``, behavior.md#responses).

Expected values were observed on the reference (black box) unless a test names a deviation (D2, D9).

Invariant fuzzed at the end of this file: for ANY body (any JSON value in any field, any item sequence, any
non-JSON input), ``parse_request`` returns a ``ConversationRequest`` or raises ``ConversionError`` bound to the
OpenAI error body — never any other exception.
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
    ToolCall,
    ToolMessage,
    UserMessage,
)
from dscodec.errors import ContextLengthExceeded, ConversionError
from dscodec.options import ConversionOptions
from dscodec.prompt.dialects import APPLY_PATCH_TOOL
from dscodec.protocols import _body, error_body
from dscodec.protocols._tools import NameAllocator
from dscodec.protocols.openai_responses import inbound
from dscodec.protocols.openai_responses.inbound import parse_request
from tests.unit.test_shared_rules import Counted

V4 = "DeepSeek-V4-Pro"
V41 = "DeepSeek-V4.1-Flash"
IMAGE = "<｜image｜>"
PNG = "data:image/png;base64,AAAA"


def body(**fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"model": V4, "input": "Hi"}
    out.update(fields)
    return out


def nothink(**fields: Any) -> dict[str, Any]:
    return body(reasoning={"effort": "none"}, **fields)


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
    assert exc.protocol == "responses"
    assert exc.body["error"]["message"] == exc.message
    assert list(exc.body["error"]) == ["message", "type", "param", "code"]
    return exc


def message_of(request: Any, **options: Any) -> str:
    return error_of(request, **options).message


def messages_of(request: Any, **options: Any) -> list[Any]:
    return list(convert(request, **options).conversation.messages)


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def reasoning(*texts: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": t} for t in texts],
        **extra,
    }


def fcall(call_id: str, name: str = "f", arguments: str = "{}", **extra: Any) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments, **extra}


def fout(call_id: str, output: Any = "out") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def image(url: str | None = None, **extra: Any) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "input_image", **extra}
    if url is not None:
        part["image_url"] = url
    return part


def text(value: str) -> dict[str, Any]:
    return {"type": "input_text", "text": value}


def function(name: str = "f", **extra: Any) -> dict[str, Any]:
    return {"type": "function", "name": name, **extra}


def namespace(name: str, *tools: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "namespace", "name": name, "tools": list(tools), **extra}


# -- basics ------------------------------------------------------------------------------------------------------


def test_minimal_request_defaults() -> None:
    req = convert(body())
    assert (req.protocol, req.model, req.model_version, req.stream) == ("responses", V4, "v4", False)
    conv = req.conversation
    assert conv.messages == [UserMessage(content="Hi")]
    assert (conv.thinking_mode, conv.reasoning_effort, conv.tool_choice, conv.response_format) == (
        True,
        "high",
        "auto",
        "text",
    )
    opts = req.inference_options
    assert (opts.temperature, opts.top_p, opts.max_tokens, opts.logprobs, opts.top_logprobs) == (
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
    assert req.wire.namespace_tool_map == {}


def test_accepts_bytes_str_and_mapping() -> None:
    raw = json.dumps(body())
    for request in (raw, raw.encode(), body()):
        assert parse_request(request).conversation.messages == [UserMessage(content="Hi")]


def test_instructions_become_the_first_system_message() -> None:
    got = messages_of(body(instructions="Be brief.", input=[{"role": "system", "content": "S"}, user("a")]))
    assert got == [SystemMessage(content="Be brief."), SystemMessage(content="S"), UserMessage(content="a")]
    assert messages_of(body(instructions="", input="x")) == [UserMessage(content="x")]
    assert messages_of({"model": V4, "instructions": "Only"}) == [SystemMessage(content="Only")]
    assert messages_of(body(input="")) == [UserMessage(content="")]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"input": None}, "Either input or instructions must be provided"),
        ({"input": None, "instructions": ""}, "Either input or instructions must be provided"),
        ({"input": []}, "Input items array must not be empty"),
        ({"input": [], "instructions": "I"}, "Input items array must not be empty"),
        (
            {"model": "deepseek-chat"},
            "The supported API model names are DeepSeek-V4-Pro, DeepSeek-V4.1-Flash, but you passed deepseek-chat.",
        ),
    ],
)
def test_input_presence_and_model(fields: dict[str, Any], message: str) -> None:
    assert message_of(body(**fields)) == message


def test_item_references_are_dropped_even_when_nothing_is_left() -> None:
    assert messages_of(nothink(input=[{"type": "item_reference", "id": "msg_1"}])) == []
    got = messages_of(
        nothink(input=[user("a"), {"type": "item_reference", "id": "x"}, fcall("c"), fout("c")])
    )
    assert [m.role for m in got] == ["user", "assistant", "tool"]


# -- roles and content -------------------------------------------------------------------------------------------


def test_developer_is_a_user_on_v4_and_a_system_on_v41() -> None:
    items = [{"role": "developer", "content": "D"}, {"type": "message", "role": "user", "content": "u"}]
    assert messages_of(nothink(input=items)) == [UserMessage(content="D"), UserMessage(content="u")]
    assert messages_of(nothink(model=V41, input=items)) == [
        SystemMessage(content="D"),
        UserMessage(content="u"),
    ]


def test_empty_system_messages_are_kept() -> None:
    assert messages_of(nothink(input=[{"role": "system", "content": ""}, user("a")]))[0] == SystemMessage(
        content=""
    )


def test_parts_are_joined_with_a_blank_line() -> None:
    parts = [
        text("a"),
        {"type": "output_text", "text": "b", "annotations": []},
        {"type": "input_file", "file_id": "x"},
    ]
    assert messages_of(nothink(input=[user(parts)])) == [
        UserMessage(content="a\n\nb\n\n[Unsupported Document]")
    ]
    assert messages_of(nothink(input=[user([])])) == [UserMessage(content="")]


def test_images_on_v4_are_text_and_are_not_checked() -> None:
    parts = [image("ftp://nope"), image(), image(file_id="f")]
    got = messages_of(nothink(input=[user(parts), assistant([image("http://x")])]))
    assert got[0] == UserMessage(content="\n\n".join(["[Unsupported Image]"] * 3))
    assert isinstance(got[1], AssistantMessage) and got[1].content == "[Unsupported Image]"


def test_images_on_v41_are_placeholders_with_sources() -> None:
    parts = [text(f"a{IMAGE}b"), image(PNG, detail="low"), image("https://e.com/x.png")]
    got = messages_of(nothink(model=V41, input=[user("q"), user(parts)]))
    message = got[1]
    assert isinstance(message, UserMessage)
    assert message.content == f"a{IMAGE}b\n\n{IMAGE}\n\n{IMAGE}"
    # The typed spelling is plain text: only the two placeholders are image positions.
    assert [i.offset for i in message.images] == [len(f"a{IMAGE}b\n\n"), len(f"a{IMAGE}b\n\n{IMAGE}\n\n")]
    assert [(i.source.kind, i.source.path, i.source.detail) for i in message.images] == [
        ("data_url", "input[1]", "low"),
        ("url", "input[1]", "high"),
    ]


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([user([image()])], "input[0].content[0]: input_image must have image_url or file_id"),
        (
            [user([image("http://x", file_id="f")])],
            "input[0].content[0]: input_image cannot have both image_url and file_id",
        ),
        (
            [user([text("a"), image(file_id="f")])],
            "input[0].content[1]: file_id is not supported. Pass the image as a base64 data url instead.",
        ),
        ([user([image("ftp://x")])], "input[0]: Unsupported image_url format"),
        (
            [user([image("ftp://x"), image()])],
            "input[0].content[1]: input_image must have image_url or file_id",
        ),
        (
            [user([image("data:text/plain;base64,AAAA")])],
            "input[0]: You have uploaded an unsupported image. Please make sure your image is valid and has one of the following formats: webp, png, jpeg, and gif.",
        ),
        ([user("a"), assistant([image("ftp://x")])], "input[1]: Image in assistant message is unsupported"),
        (
            [assistant([image(file_id="f")])],
            "input[0].content[0]: file_id is not supported. Pass the image as a base64 data url instead.",
        ),
        (
            [fcall("c"), fout("c", [image()])],
            "input[1].output[0]: input_image must have image_url or file_id",
        ),
        ([fcall("c"), fout("c", [image("ftp://x")])], "input[1]: Unsupported image_url format"),
    ],
)
def test_v41_image_errors(items: list[Any], message: str) -> None:
    assert message_of(nothink(model=V41, input=items)) == message


def test_function_output_images_have_the_item_path() -> None:
    got = messages_of(
        nothink(
            model=V41, input=[fcall("c"), fout("c", [text("a"), image("http://x"), {"type": "input_file"}])]
        )
    )
    tool = got[1]
    assert isinstance(tool, ToolMessage)
    assert tool.content == f"a\n\n{IMAGE}\n\n[Unsupported Document]"
    assert [(i.offset, i.source.path) for i in tool.images] == [(3, "input[1]")]


# -- assistant turns -------------------------------------------------------------------------------------------


def test_reasoning_message_and_calls_form_one_turn() -> None:
    items = [
        user("q"),
        reasoning("r1"),
        assistant("a1"),
        fcall("c1"),
        fcall("c2"),
        fout("c2", "o2"),
        fout("c1", "o1"),
    ]
    got = messages_of(body(input=items))
    assert got[1] == AssistantMessage(
        content="a1",
        reasoning="r1",
        tool_calls=[ToolCall(id="c1", name="f", arguments="{}"), ToolCall(id="c2", name="f", arguments="{}")],
    )
    # Outputs come in call order.
    assert got[2:] == [
        ToolMessage(tool_call_id="c1", content="o1"),
        ToolMessage(tool_call_id="c2", content="o2"),
    ]


def test_calls_of_a_turn_are_sorted_by_call_id() -> None:
    got = messages_of(
        nothink(
            input=[user("q"), fcall("c10"), fcall("c9"), fcall("c1"), fout("c9"), fout("c1"), fout("c10")]
        )
    )
    assert isinstance(got[1], AssistantMessage)
    assert [c.id for c in got[1].tool_calls] == ["c1", "c10", "c9"]
    assert [m.tool_call_id for m in got[2:] if isinstance(m, ToolMessage)] == ["c1", "c10", "c9"]


def test_a_call_joins_a_turn_until_every_output_arrived() -> None:
    joined = messages_of(
        nothink(input=[user("q"), fcall("c1"), fcall("c2"), fout("c2"), fcall("c3"), fout("c1"), fout("c3")])
    )
    assert [m.role for m in joined] == ["user", "assistant", "tool", "tool", "tool"]
    split = messages_of(nothink(input=[user("q"), fcall("c1"), fout("c1"), fcall("c2"), fout("c2")]))
    assert [m.role for m in split] == ["user", "assistant", "tool", "assistant", "tool"]


def test_going_back_in_the_turn_order_starts_a_new_turn() -> None:
    got = messages_of(body(input=[user("q"), assistant("a"), reasoning("r"), assistant("b")]))
    assert [(m.content, m.reasoning) for m in got if isinstance(m, AssistantMessage)] == [
        ("a", ""),
        ("b", "r"),
    ]


def test_reasoning_texts_are_joined_with_a_newline() -> None:
    got = messages_of(
        body(input=[user("q"), reasoning("r1", "", "r2"), reasoning("r3"), reasoning(""), assistant("a")])
    )
    assert got[1] == AssistantMessage(content="a", reasoning="r1\n\nr2\nr3")


def test_summary_and_encrypted_content_are_not_reasoning() -> None:
    item = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "S"}],
        "encrypted_content": "gAAA",
    }
    got = messages_of(body(input=[user("a"), item, user("b")]))
    assert got == [UserMessage(content="a"), UserMessage(content="b")]
    got = messages_of(body(input=[user("a"), assistant("x"), item, assistant("y")]))
    assert got[1] == AssistantMessage(content="x\n\ny", reasoning="")


def test_reasoning_without_text_still_ends_a_turn_with_calls() -> None:
    item = {"type": "reasoning", "summary": []}
    assert (
        message_of(body(input=[user("q"), fcall("c1"), item, fout("c1")]))
        == "No tool output found for tool call c1."
    )


def test_reasoning_alone_makes_an_assistant_turn() -> None:
    assert messages_of(body(input=[user("q"), reasoning("r")])) == [
        UserMessage(content="q"),
        AssistantMessage(reasoning="r"),
    ]
    assert messages_of(nothink(input=[user("q"), reasoning("r")]))[1] == AssistantMessage(reasoning=None)


def test_consecutive_assistant_messages_merge_without_empty_pieces() -> None:
    got = messages_of(
        nothink(input=[user("q"), assistant("a"), assistant(""), assistant([]), assistant("b")])
    )
    assert got[1] == AssistantMessage(content="a\n\nb")


def test_namespaced_and_custom_calls() -> None:
    items = [
        fcall("c1", "create", namespace="gh"),
        {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": 'a"b\n'},
        fout("c1"),
        {"type": "custom_tool_call_output", "call_id": "c2", "output": [text("done")]},
    ]
    for model, name in ((V4, "gh__create"), (V41, "gh::create")):
        got = messages_of(nothink(model=model, input=items))
        assert isinstance(got[0], AssistantMessage)
        assert [(c.name, c.arguments) for c in got[0].tool_calls] == [
            (name, "{}"),
            ("apply_patch", '{"input":"a\\"b\\n"}'),
        ]
        assert got[2] == ToolMessage(tool_call_id="c2", content="done")


@pytest.mark.parametrize(
    ("tools", "model", "name"),
    [
        ([], V4, "gh__x"),
        ([function("gh__x")], V4, "gh__x_1"),
        ([function("gh__x"), function("gh__x_1")], V4, "gh__x_2"),
        # Other namespace members' names do not count, only flat tool names.
        ([namespace("gh", function("x")), namespace("gh", function("x"))], V4, "gh__x"),
        ([function("gh__x")], V41, "gh::x"),
    ],
)
def test_history_namespace_joins_avoid_flat_tool_names(tools: list[Any], model: str, name: str) -> None:
    got = messages_of(nothink(model=model, tools=tools, input=[fcall("c", "x", namespace="gh"), fout("c")]))
    assert isinstance(got[0], AssistantMessage) and got[0].tool_calls[0].name == name


def test_output_without_call_id_stands_alone() -> None:
    got = messages_of(nothink(input=[user("a"), {"type": "function_call_output", "output": "x"}, user("b")]))
    assert [m.role for m in got] == ["user", "tool", "user"]
    assert got[1].content == "x"


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([user("q"), fcall("c1")], "No tool output found for tool call c1."),
        ([user("q"), fcall("c1"), user("x"), fout("c1")], "No tool output found for tool call c1."),
        ([user("q"), fcall("c1"), assistant("x"), fout("c1")], "No tool output found for tool call c1."),
        ([user("q"), fcall("c1"), reasoning("r"), fout("c1")], "No tool output found for tool call c1."),
        ([fout("c1")], "No tool call found for tool output with call_id c1."),
        (
            [user("q"), fcall("c1"), fout("c1"), fout("c2")],
            "No tool call found for tool output with call_id c2.",
        ),
        (
            [user("q"), fcall("c1"), fout("c1"), user("z"), fout("c1")],
            "Duplicate tool output for call_id: c1.",
        ),
        ([user("q"), fcall("c1"), fcall("c1")], "Duplicate 'call_id': c1."),
        ([user("q"), fcall("c1"), fout("c1"), fcall("c1"), fout("c1")], "Duplicate 'call_id': c1."),
        (
            [user("q"), fcall("")],
            "Invalid 'input[1].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.",
        ),
        (
            [fout("")],
            "Invalid 'input[0].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.",
        ),
    ],
)
def test_pairing_errors(items: list[Any], message: str) -> None:
    assert message_of(nothink(input=items)) == message


def test_function_output_content_is_checked_before_pairing_custom_output_after() -> None:
    bad = [image("ftp://x")]
    assert message_of(nothink(model=V41, input=[fout("zz", bad)])) == "input[0]: Unsupported image_url format"
    custom = {"type": "custom_tool_call_output", "call_id": "zz", "output": bad}
    assert (
        message_of(nothink(model=V41, input=[custom]))
        == "No tool call found for tool output with call_id zz."
    )


def test_unknown_item_types_are_refused_d9() -> None:
    exc = error_of(body(input=[user("a"), {"type": "web_search_call", "id": "x"}, user("b")]))
    assert "web_search_call" in exc.message and "input[1]" in exc.message
    assert exc.param == "input[1].type"


# -- reasoning modes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reasoning_field", "default", "thinking", "effort"),
    [
        (None, True, True, "high"),
        (None, False, False, None),
        ({}, True, True, "high"),
        ({"effort": None, "summary": "detailed"}, True, True, "high"),
        ({"effort": "none"}, True, False, None),
        ({"effort": "minimal"}, False, True, "low"),
        ({"effort": "medium"}, True, True, "high"),
        ({"effort": "xhigh"}, True, True, "xhigh"),
        ({"effort": {"ultra": None}}, True, True, "max"),
    ],
)
def test_thinking_and_effort(reasoning_field: Any, default: bool, thinking: bool, effort: str | None) -> None:
    fields = {} if reasoning_field is None else {"reasoning": reasoning_field}
    conv = convert(body(**fields), default_thinking_mode=default).conversation
    assert (conv.thinking_mode, conv.reasoning_effort) == (thinking, effort)


def test_thinking_fills_missing_reasoning_and_nothink_drops_it() -> None:
    items = [user("a"), reasoning("r"), assistant("x"), assistant("y"), user("b"), assistant("z")]
    think = [m.reasoning for m in messages_of(body(input=items)) if isinstance(m, AssistantMessage)]
    assert think == ["r", ""]
    assert [m.reasoning for m in messages_of(nothink(input=items)) if isinstance(m, AssistantMessage)] == [
        None,
        None,
    ]


def test_reject_refuses_current_turn_without_reasoning_text() -> None:
    tools = [function("f")]
    refused = "The `reasoning_text` in the thinking mode must be passed back to the API."
    current = [user("a"), fcall("c"), fout("c")]
    assert message_of(body(input=current), reasoning_content_behavior="reject") == refused
    # Only function (and custom) tools make a plain answer part of the agentic turn; server tools do not.
    answer = [user("a"), assistant("x")]
    assert message_of(body(input=answer, tools=tools), reasoning_content_behavior="reject") == refused
    convert(body(input=answer, tools=[{"type": "web_search"}]), reasoning_content_behavior="reject")
    # Turns before the last user message, and turns with reasoning, pass.
    convert(body(input=[*current, user("b")], tools=tools), reasoning_content_behavior="reject")
    convert(
        body(input=[user("a"), reasoning("r"), fcall("c"), fout("c")]), reasoning_content_behavior="reject"
    )


# -- tools -------------------------------------------------------------------------------------------------------


def test_function_tools_and_output_constraint() -> None:
    params = {"type": "object", "properties": {"city": {"type": "string"}}}
    req = convert(
        nothink(
            tools=[
                function("get_weather", description="d", parameters=params),
                function("g", defer_loading=True),
            ]
        )
    )
    tools = req.conversation.tools
    assert [(t.name, t.description, t.parameters, t.strict, t.defer_loading) for t in tools] == [
        ("get_weather", "d", params, None, False),
        ("g", None, {}, None, False),
    ]
    constraint = req.inference_options.output_constraint
    assert constraint is not None and constraint.kind == "tool_call"
    assert constraint.schema.startswith(
        '[{"type":"function","function":{"name":"get_weather","description":"d"'
    )
    assert req.parsing_options.parse_tool_calls is True


def test_strict_tools_are_normalised() -> None:
    params = {"type": "object", "properties": {"a": {"type": "string"}}}
    tool = convert(nothink(tools=[function(parameters=params, strict=True)])).conversation.tools[0]
    assert tool.parameters == {**params, "additionalProperties": False, "required": ["a"]}
    assert message_of(nothink(tools=[function(strict=True), function("g")])) == (
        "Cannot use strict tool with non-strict tool in the same request"
    )


def test_namespaces_per_version() -> None:
    tools = [namespace("gh", function("x", description="Make x"), function("y"), description="GitHub")]
    v4 = convert(nothink(tools=tools))
    assert [(t.name, t.description) for t in v4.conversation.tools] == [("gh__x", "Make x"), ("gh__y", None)]
    assert v4.wire.namespace_tool_map == {"gh__x": ("gh", "x"), "gh__y": ("gh", "y")}
    v41 = convert(nothink(model=V41, tools=tools))
    assert [(t.name, t.description) for t in v41.conversation.tools] == [
        ("gh::x", "GitHub\nMake x"),
        ("gh::y", "GitHub\n"),
    ]
    assert v41.wire.namespace_tool_map == {"gh::x": ("gh", "x"), "gh::y": ("gh", "y")}


def test_namespace_collisions_get_suffixes() -> None:
    tools = [
        namespace("gh", function("x")),
        function("gh__x"),
        function("gh__x_1"),
        namespace("gh", function("x")),
    ]
    req = convert(nothink(tools=tools))
    assert [t.name for t in req.conversation.tools] == ["gh__x_2", "gh__x", "gh__x_1", "gh__x_3"]
    assert req.wire.namespace_tool_map == {"gh__x_2": ("gh", "x"), "gh__x_3": ("gh", "x")}


def test_namespace_tool_map_ignores_tool_choice_none() -> None:
    req = convert(nothink(tools=[namespace("gh", function("x"))], tool_choice="none"))
    assert req.conversation.tools == [] and req.wire.namespace_tool_map == {"gh__x": ("gh", "x")}


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            [namespace("gh", {"type": "custom", "name": "apply_patch"})],
            "Currently custom tools are not allowed inside a namespace. Found custom tool 'apply_patch' in tools[0].tools[0].",
        ),
        ([namespace("gh", function("x"), function("x"))], "Tool names within a namespace must be unique."),
        (
            [namespace("g h", function("x"))],
            "Invalid 'tools[0].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        ),
        (
            [namespace("gh", function("a b"))],
            "Invalid 'tools[0].tools[0].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        ),
        ([function("f"), function("f")], "Tool names must be unique."),
        (
            [function("")],
            "Invalid 'tools[0].name': empty string. Expected a string with minimum length 1, but got an empty string instead.",
        ),
        (
            [{"type": "custom", "name": "shell"}],
            "Unsupported custom tool: 'shell'. Only 'apply_patch' is supported.",
        ),
        (
            [function("f", parameters={})],
            "Invalid schema for function 'f': schema must be a JSON Schema of 'type: \"object\"', got 'type: null'.",
        ),
    ],
)
def test_tool_errors(tools: list[Any], message: str) -> None:
    assert message_of(nothink(tools=tools)) == message


def test_nested_namespace_is_malformed() -> None:
    exc = error_of(nothink(tools=[namespace("a", namespace("b"))]))
    assert exc.message == "invalid request body: unknown variant `namespace`, expected `function` or `custom`"
    assert exc.param == "tools[0].tools[0].type"


def test_custom_apply_patch_becomes_the_builtin_tool() -> None:
    tools = [
        {"type": "custom", "name": "apply_patch", "description": "ignored", "format": {"type": "grammar"}}
    ]
    v4 = convert(nothink(tools=tools)).conversation.tools
    assert v4 == [APPLY_PATCH_TOOL]
    v41 = convert(nothink(model=V41, tools=tools)).conversation.tools[0]
    # The V4.1 template's description differs by one blank line.
    assert v41.description == (APPLY_PATCH_TOOL.description or "").replace(
        "envelope:\n*** Begin", "envelope:\n\n*** Begin"
    )
    assert v41.parameters == APPLY_PATCH_TOOL.parameters


def test_server_and_hosted_tools() -> None:
    hosted = [
        {"type": t}
        for t in ("file_search", "mcp", "code_interpreter", "web_search_preview", "apply_patch", "bogus")
    ]
    assert convert(nothink(tools=hosted), responses_web_search="reject").conversation.tools == []
    web = [{"type": "web_search"}, function("f")]
    req = convert(nothink(tools=web, tool_choice={"type": "web_search"}))
    assert [t.name for t in req.conversation.tools] == ["f"] and req.conversation.tool_choice == "auto"
    assert message_of(nothink(tools=web), responses_web_search="reject") == "Server tools are not supported"
    assert message_of(
        nothink(tool_choice={"type": "web_search_2025_08_26"}), responses_web_search="reject"
    ) == ("Server tools are not supported")


@pytest.mark.parametrize(
    ("choice", "expected_choice", "names"),
    [
        ("auto", "auto", ["f", "g", "apply_patch"]),
        ("none", "none", []),
        ("required", "required", ["f", "g", "apply_patch"]),
        ({"type": "function", "name": "g"}, "required", ["g"]),
        ({"type": "custom", "name": "apply_patch"}, "required", ["apply_patch"]),
        ({"type": "custom", "name": "f"}, "required", ["f"]),
    ],
)
def test_tool_choice(choice: Any, expected_choice: str, names: list[str]) -> None:
    tools = [function("f"), function("g"), {"type": "custom", "name": "apply_patch"}]
    req = convert(nothink(tools=tools, tool_choice=choice))
    assert req.conversation.tool_choice == expected_choice
    assert [t.name for t in req.conversation.tools] == names
    assert req.parsing_options.starts_in_tool_calls is (expected_choice == "required")


def test_tool_choice_errors() -> None:
    assert (
        message_of(body(tools=[function("f")], tool_choice="required"))
        == "Thinking mode does not support this tool_choice"
    )
    assert message_of(
        nothink(tools=[namespace("gh", function("x"))], tool_choice={"type": "function", "name": "x"})
    ) == ("Invalid value for 'tool_call': no function named 'x' was specified in the 'tools' parameter.")
    # Without tools a named choice quietly becomes auto.
    assert convert(nothink(tool_choice={"type": "function", "name": "zz"})).conversation.tool_choice == "auto"
    exc = error_of(nothink(tool_choice={"type": "allowed_tools", "mode": "auto", "tools": []}))
    assert exc.param == "tool_choice.type"


# -- text.format -------------------------------------------------------------------------------------------------


def test_json_object_needs_the_word_json_in_messages_or_instructions() -> None:
    fmt = {"format": {"type": "json_object"}}
    req = convert(body(text=fmt, instructions="Answer as JSON."))
    assert req.conversation.response_format == "json_object"
    assert req.parsing_options.parse_json_output is True
    assert req.inference_options.output_constraint is not None
    assert (req.inference_options.output_constraint.kind, req.inference_options.output_constraint.schema) == (
        "json",
        "",
    )
    items = [user("Hi"), reasoning("json"), assistant("ok"), user("go")]
    assert message_of(body(input=items, text=fmt, tools=[function("json_tool")])) == (
        "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'."
    )


def test_json_schema_format() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    req = convert(
        body(text={"format": {"type": "json_schema", "name": "n", "schema": schema, "strict": True}})
    )
    assert req.conversation.response_format == "json_schema"
    assert req.conversation.response_schema == schema
    constraint = req.inference_options.output_constraint
    assert constraint is not None
    assert (
        constraint.schema
        == '{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false,"required":["a"]}'
    )
    assert message_of(body(text={"format": {"type": "json_schema", "name": "n", "schema": [1]}})) == (
        'Invalid json schema: [1] is not of types "boolean", "object"'
    )


# -- sampling ----------------------------------------------------------------------------------------------------


def test_sampling_values() -> None:
    opts = convert(nothink(temperature=0.3, top_p=0.5, top_logprobs=0, max_output_tokens=7)).inference_options
    assert (opts.temperature, opts.top_p, opts.logprobs, opts.top_logprobs, opts.max_tokens) == (
        0.30000001192092896,
        0.5,
        True,
        0,
        7,
    )
    think = convert(body(temperature=0.3, top_p=0.5, tools=[function()])).inference_options
    assert (think.temperature, think.top_p) == (1.0, 0.949999988079071)
    v41 = convert(body(model=V41, top_p=0.5)).inference_options
    assert v41.top_p == 0.949999988079071


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"temperature": 3}, "Invalid temperature value, the valid range of temperature is [0, 2]"),
        ({"top_p": 0}, "Invalid top_p value, the valid range of top_p is (0, 1.0]"),
        ({"top_logprobs": 21}, "Invalid top_logprobs value, the valid range of top_logprobs is [0, 20]."),
        ({"max_output_tokens": 0}, "Invalid max_tokens value, the valid range of max_tokens is [1, 393216]"),
        (
            {"temperature": 3, "top_p": 2},
            "Invalid temperature value, the valid range of temperature is [0, 2]",
        ),
    ],
)
def test_sampling_errors(fields: dict[str, Any], message: str) -> None:
    assert message_of(body(**fields)) == message


def test_error_order_follows_the_reference() -> None:
    bad_tool = [function("bad name")]
    unpaired = [user("Hi"), fout("zz")]
    assert message_of(body(model="nope", input=[], tools=bad_tool)).startswith(
        "The supported API model names"
    )
    assert message_of({"model": V4, "tools": bad_tool}).startswith("Invalid 'tools[0].name'")
    assert message_of(body(input=unpaired, tools=[function("f", parameters=5)])).startswith(
        "No tool call found"
    )
    assert message_of(body(tools=[function("f", parameters=5)], tool_choice="required")).startswith(
        "Invalid schema"
    )
    assert message_of(
        body(tools=[function("f")], tool_choice="required", text={"format": {"type": "json_object"}})
    ) == ("Thinking mode does not support this tool_choice")


# -- echo --------------------------------------------------------------------------------------------------------


def test_echo_defaults() -> None:
    assert convert(body()).wire.echo == {
        "instructions": None,
        "max_output_tokens": None,
        "temperature": 1.0,
        "top_p": 1.0,
        "top_logprobs": 0,
        "user": None,
        "metadata": {},
        "tools": [],
        "tool_choice": "auto",
        "text": {"format": {"type": "text"}, "verbosity": None},
        "reasoning": {"effort": None, "summary": None},
    }


def test_echo_repeats_the_request_as_given() -> None:
    tools = [
        function("f", description="d", parameters={"type": "object"}, strict=False, defer_loading=True),
        {"type": "custom", "name": "apply_patch", "description": "x"},
        {"type": "web_search_2025_08_26", "user_location": {"type": "approximate", "city": "Paris"}},
        {"type": "web_search_preview"},
        namespace("gh", function("x"), description="GitHub"),
        {"type": "file_search"},
    ]
    request = body(
        instructions="I json",
        max_output_tokens=7,
        temperature=0.5,
        top_p=0.5,
        top_logprobs=2,
        user="u",
        metadata={"k": "v"},
        tools=tools,
        tool_choice={"type": "function", "name": "f"},
        text={"format": {"type": "json_object"}, "verbosity": "low"},
        reasoning={"effort": "none", "generate_summary": "concise"},
    )
    echo = convert(request).wire.echo
    assert echo is not None
    assert echo["tools"] == [
        {
            "type": "function",
            "name": "f",
            "description": "d",
            "parameters": {"type": "object"},
            "strict": False,
        },
        {"type": "custom", "name": "apply_patch"},
        {
            "type": "web_search_2025_08_26",
            "search_context_size": None,
            "user_location": {"city": "Paris", "country": None, "region": None, "timezone": None},
        },
        {
            "type": "namespace",
            "name": "gh",
            "description": "GitHub",
            "tools": [
                {"type": "function", "name": "x", "description": None, "parameters": None, "strict": None}
            ],
        },
    ]
    assert {k: v for k, v in echo.items() if k != "tools"} == {
        "instructions": "I json",
        "max_output_tokens": 7,
        "temperature": 0.5,
        "top_p": 0.5,
        "top_logprobs": 2,
        "user": "u",
        "metadata": {},
        "tool_choice": {"type": "function", "name": "f"},
        "text": {"format": {"type": "json_object"}, "verbosity": "low"},
        "reasoning": {"effort": "none", "summary": "concise"},
    }
    schema_echo = convert(
        body(text={"format": {"type": "json_schema", "name": "n", "schema": {"type": "object"}}})
    ).wire.echo
    assert schema_echo is not None and schema_echo["text"]["format"] == {
        "type": "json_schema",
        "name": "n",
        "schema": {"type": "object"},
        "description": None,
        "strict": None,
    }


def test_stream_and_unknown_fields() -> None:
    req = convert(body(stream=True, store=5, previous_response_id=1, parallel_tool_calls="x", metadata=3))
    assert req.stream is True


# -- malformed bodies (D2) ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message", "param"),
    [
        ("not json", "invalid JSON request: ", None),
        ('{"input": "a"}', "invalid request body: missing field `model`", None),
        (
            json.dumps(body(input=5)),
            "invalid request body: input should be a string or a list of input items",
            "input",
        ),
        (json.dumps(body(input=[{}])), "invalid request body: invalid input item", "input[0]"),
        (
            json.dumps(body(input=[user(None)])),
            "invalid request body: content should be a string or a list of content blocks",
            "input[0].content",
        ),
        (
            json.dumps(body(input=[{"role": "tool", "content": "x"}])),
            "invalid request body: unknown variant `tool`, expected one of `user`, `assistant`, `system`, `developer`",
            "input[0].role",
        ),
        (
            json.dumps(body(input=[fout("c", None)])),
            "invalid request body: output should be a string or a list of output content parts",
            "input[0].output",
        ),
        (
            json.dumps(body(input=[user([{"type": "refusal", "refusal": "no"}])])),
            "invalid request body: unknown variant `refusal`, expected one of `input_text`, `output_text`, `input_image`, `input_file`",
            "input[0].content[0].type",
        ),
        (
            json.dumps(body(reasoning={"effort": "HIGH"})),
            "invalid request body: unknown variant `HIGH`, expected one of `none`, `minimal`, `low`, `medium`, `high`, `xhigh`, `ultra`, `max`",
            "reasoning.effort",
        ),
        (
            json.dumps(body(tool_choice="any")),
            "invalid request body: expected one of `none`, `auto`, `required` or a tool choice object",
            "tool_choice",
        ),
        (
            json.dumps(body(text={"format": {"type": "json_schema", "schema": {}}})),
            "invalid request body: missing field `name`",
            "text.format",
        ),
        (
            json.dumps(body(max_output_tokens=-1)),
            "invalid request body: invalid value: integer `-1`, expected u32",
            "max_output_tokens",
        ),
        (
            json.dumps(body(tools=[{"type": "custom"}])),
            "invalid request body: missing field `name`",
            "tools[0]",
        ),
    ],
)
def test_malformed_bodies_are_400_with_a_param_d2(raw: str, message: str, param: str | None) -> None:
    exc = error_of(raw)
    assert exc.message.startswith(message)
    assert exc.param == param
    assert exc.body["error"]["param"] == param


@pytest.mark.parametrize(
    "fields",
    [
        {"reasoning": ["low"]},
        {"text": [{"type": "text"}]},
        {"input": [{"type": "reasoning", "content": [["r"]]}]},
        {"tools": [namespace("gh", {"type": 0, "name": "x"})]},
    ],
)
def test_arrays_for_objects_and_integer_tags_are_refused_d11(fields: dict[str, Any]) -> None:
    # The reference reads these by position / variant index; dscodec wants objects and string tags.
    assert error_of(body(**fields)).message.startswith("invalid request body: ")


# -- fuzz --------------------------------------------------------------------------------------------------------

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False)
    | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "role",
                    "content",
                    "text",
                    "name",
                    "call_id",
                    "arguments",
                    "output",
                    "namespace",
                    "tools",
                    "parameters",
                    "strict",
                    "image_url",
                    "file_id",
                    "detail",
                    "summary",
                    "encrypted_content",
                    "input",
                    "format",
                    "schema",
                    "effort",
                    "user_location",
                    "search_context_size",
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
    "input",
    "instructions",
    "stream",
    "max_output_tokens",
    "temperature",
    "top_p",
    "top_logprobs",
    "reasoning",
    "user",
    "tools",
    "tool_choice",
    "text",
    "metadata",
]


def _only_conversion_errors(request: Any, options: ConversionOptions | None = None) -> None:
    try:
        result = parse_request(request, options=options)
    except ConversionError as exc:
        assert exc.status_code == 400
        assert exc.protocol == "responses"
        json.dumps(exc.body)
    else:
        assert isinstance(result, ConversationRequest)
        json.dumps(result.wire.echo)


@given(
    st.dictionaries(st.sampled_from(_FIELDS), _json_values, max_size=8),
    st.sampled_from([V4, V41, "zzz"]),
    st.booleans(),
)
def test_fuzz_any_field_values(fields: dict[str, Any], model: str, reject: bool) -> None:
    request = {"model": model, "input": "Hi", **fields}
    options = ConversionOptions(
        reasoning_content_behavior="reject" if reject else "fill_empty",
        responses_web_search="reject" if reject else "drop",
    )
    _only_conversion_errors(request, options)
    _only_conversion_errors(json.dumps(request))


_part = st.fixed_dictionaries(
    {"type": st.sampled_from(["input_text", "output_text", "input_image", "input_file", "refusal"])},
    optional={
        "text": st.text(max_size=4),
        "image_url": st.sampled_from(["http://x", "ftp://x", PNG, "data:image/png;base64,A", "data:,x"]),
        "file_id": st.just("f"),
        "detail": st.sampled_from(["low", "high", "auto", "bad"]),
    },
)
_content = st.text(max_size=4) | st.lists(_part, max_size=3)
_call_ids = st.sampled_from(["a", "b", "c", ""])
_item = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "system", "developer"]), "content": _content},
        optional={"type": st.just("message")},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("function_call"),
            "call_id": _call_ids,
            "name": st.sampled_from(["f", "x"]),
            "arguments": st.sampled_from(["{}", "[", '{"a": 1}']),
        },
        optional={"namespace": st.sampled_from(["gh", ""])},
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["function_call_output", "custom_tool_call_output"]), "output": _content},
        optional={"call_id": _call_ids},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("custom_tool_call"),
            "call_id": _call_ids,
            "name": st.just("apply_patch"),
            "input": st.text(max_size=4),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("reasoning")},
        optional={
            "content": st.lists(st.fixed_dictionaries({"text": st.sampled_from(["", "r"])}), max_size=2),
            "summary": st.just([]),
        },
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["item_reference", "web_search_call"])}),
)
_tool = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("function"), "name": st.sampled_from(["f", "x", "gh__x", "a b"])},
        optional={"strict": st.booleans()},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("namespace"),
            "name": st.sampled_from(["gh", ""]),
            "tools": st.lists(
                st.fixed_dictionaries(
                    {
                        "type": st.sampled_from(["function", "custom"]),
                        "name": st.sampled_from(["x", "apply_patch"]),
                    }
                ),
                max_size=2,
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["custom", "web_search", "web_search_preview", "mcp"]),
            "name": st.sampled_from(["apply_patch", "z"]),
        }
    ),
)


@given(
    st.lists(_item, max_size=7),
    st.sampled_from([V4, V41]),
    st.lists(_tool, max_size=3),
    st.sampled_from(["auto", "none", "required", {"type": "function", "name": "f"}, {"type": "web_search"}]),
    st.sampled_from([None, {"effort": "none"}, {"effort": "low"}]),
    st.booleans(),
)
def test_fuzz_item_sequences(
    items: list[dict[str, Any]], model: str, tools: list[Any], choice: Any, effort: Any, reject: bool
) -> None:
    options = ConversionOptions(reasoning_content_behavior="reject" if reject else "fill_empty")
    request: dict[str, Any] = {"model": model, "input": items, "tools": tools, "tool_choice": choice}
    if effort is not None:
        request["reasoning"] = effort
    _only_conversion_errors(request, options)
    request["text"] = {"format": {"type": "json_object"}}
    _only_conversion_errors(request, options)


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
    for field in ("input", "tools", "zz", "text", "reasoning"):
        _only_conversion_errors(f'{{"model": "{V4}", "input": "x", "{field}": {nested}}}')
        _only_conversion_errors(f'{{"model": "{V4}", "input": "x", "{field}": {obj}}}')


# -- hardening: linear checks, error shapes ---------------------------------------------------------------------
#
# Comparisons are counted, not timed (see ``Counted``): the body is handed over as parsed so the counted names and
# ids reach the checks.

MANY = 2_000


@pytest.fixture
def parsed_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_body, "load_body", lambda request: request)


@pytest.mark.usefixtures("parsed_bodies")
def test_tool_name_uniqueness_is_linear() -> None:
    names = [Counted(f"t{i}") for i in range(MANY)]
    Counted.reset()
    assert len(parse_request(body(tools=[function(n) for n in names])).conversation.tools) == MANY
    assert Counted.comparisons <= 4 * MANY
    Counted.reset()
    with pytest.raises(ConversionError, match=r"^Tool names must be unique\.$"):
        parse_request(body(tools=[*(function(n) for n in names), function(Counted("t0"))]))
    assert Counted.comparisons <= 4 * MANY


@pytest.mark.usefixtures("parsed_bodies")
def test_call_output_pairing_is_linear() -> None:
    ids = [Counted(f"c{i}") for i in range(MANY)]
    items = [user("Go"), *(fcall(i) for i in ids), *(fout(Counted(str(i))) for i in reversed(ids))]
    Counted.reset()
    assert len(parse_request(nothink(input=items)).conversation.messages) == 2 + MANY
    assert Counted.comparisons <= 6 * MANY


def test_name_allocator_is_linear() -> None:
    lookups = 0

    class CountingSet(set[str]):
        def __contains__(self, item: object) -> bool:
            nonlocal lookups
            lookups += 1
            return super().__contains__(item)

    allocator = NameAllocator(())
    allocator.taken = CountingSet({"gh__x_2"})
    names = [allocator.take("gh__x") for _ in range(MANY)]
    assert names[:4] == ["gh__x", "gh__x_1", "gh__x_3", "gh__x_4"] and names[-1] == f"gh__x_{MANY}"
    assert lookups <= 3 * MANY


def test_flat_tool_names_are_collected_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = 0
    real = inbound._flat_name

    def counting(tool: Any) -> str | None:
        nonlocal seen
        seen += 1
        return real(tool)

    monkeypatch.setattr(inbound, "_flat_name", counting)
    tools = [function(f"t{i}") for i in range(MANY)] + [function("gh__x"), namespace("gh", function("x"))]
    items = [user("Go")]
    for i in range(MANY):
        items += [fcall(f"c{i}", "x", namespace="gh"), fout(f"c{i}")]
    messages = messages_of(nothink(input=items, tools=tools))
    calls = [m for m in messages if isinstance(m, AssistantMessage)]
    assert len(calls) == MANY and {c.tool_calls[0].name for c in calls} == {"gh__x_1"}
    assert seen <= len(tools) + 1


def test_many_namespaces_with_one_name() -> None:
    tools = [function("gh__x"), function("gh__x_2"), *(namespace("gh", function("x")) for _ in range(MANY))]
    request = convert(body(tools=tools))
    names = [t.name for t in request.conversation.tools]
    assert names[:5] == ["gh__x", "gh__x_2", "gh__x_1", "gh__x_3", "gh__x_4"]
    assert len(set(names)) == len(names) == MANY + 2
    assert request.wire.namespace_tool_map[f"gh__x_{MANY + 1}"] == ("gh", "x")


@pytest.mark.heavy
def test_twenty_thousand_tools_and_calls() -> None:
    n = 20_000
    assert len(convert(body(tools=[function(f"t{i}") for i in range(n)])).conversation.tools) == n
    tools = [*(function(f"t{i}") for i in range(n)), function("t0")]
    assert message_of(body(tools=tools)) == "Tool names must be unique."
    calls = [fcall(f"c{i}") for i in range(n)]
    outputs = [fout(f"c{i}", f"r{i}") for i in reversed(range(n))]
    messages = messages_of(nothink(input=[user("Go"), *calls, *outputs]))
    assert len(messages) == 2 + n
    # Calls and outputs come out sorted by call id (code point order).
    assert [m.tool_call_id for m in messages[2:5] if isinstance(m, ToolMessage)] == ["c0", "c1", "c10"]
    assert message_of(nothink(input=[user("Go"), *calls, fcall("c0")])) == "Duplicate 'call_id': c0."
    assert message_of(nothink(input=[user("Go"), *calls, *outputs[:-1], user("x")])) == (
        "No tool output found for tool call c0."
    )
    assert message_of(nothink(input=[user("Go"), *calls, *outputs[:-1], fout("c1")])) == (
        "Duplicate tool output for call_id: c1."
    )


def test_context_length_error_is_in_the_openai_envelope() -> None:
    request = convert(body(max_output_tokens=100))
    with pytest.raises(ContextLengthExceeded) as info:
        request.resolve_max_tokens(950, 1000)
    assert info.value.protocol == "responses"
    assert info.value.body == error_body("responses", info.value)
    assert list(info.value.body["error"]) == ["message", "type", "param", "code"]
