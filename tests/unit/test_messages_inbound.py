"""Unit tests of Anthropic Messages request conversion (``dscodec.protocols.anthropic_messages``, behavior.md#request-path).

Expected messages and conversions below were observed on the reference (black box); the places where dscodec
differs on purpose are marked with their deviation: D1 (Anthropic's error envelope), D2 (malformed bodies are
400s), D10 (``tool_choice: any`` forces a tool call).

Invariant fuzzed at the end of this file: for ANY body (any JSON value in any field, any nesting, any non-JSON
input), ``parse_request`` returns a ``ConversationRequest`` or raises ``ConversionError`` bound to Anthropic's
error envelope — never any other exception.
"""

from __future__ import annotations

import binascii
import json
from typing import Any

import pytest
from anthropic.types import ErrorResponse
from hypothesis import given
from hypothesis import strategies as st

import dscodec
from dscodec.conversation import (
    AssistantMessage,
    ConversationRequest,
    ImagePlaceholder,
    ImageSource,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from dscodec.errors import ContextLengthExceeded, ConversionError
from dscodec.options import ConversionOptions
from dscodec.protocols import _body
from dscodec.protocols._convert import Content
from dscodec.protocols._images import canonical_base64
from dscodec.protocols.anthropic_messages import inbound
from dscodec.protocols.anthropic_messages.inbound import parse_request
from tests.unit.test_shared_rules import Counted

V4 = "DeepSeek-V4-Pro"
V41 = "DeepSeek-V4.1-Flash"
IMAGE = "<｜image｜>"
NOTHINK = {"thinking": {"type": "disabled"}}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def system(content: Any) -> dict[str, Any]:
    return {"role": "system", "content": content}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "sig"}


def tool_use(call_id: str, name: str = "f", *args: Any) -> dict[str, Any]:
    """A ``tool_use`` block; its input is ``{}`` unless one is given (``None`` included)."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": args[0] if args else {}}


def tool_result(call_id: str, content: Any = "r", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, **extra}


def url_image(url: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "url", "url": url}}


def b64_image(data: str = PNG, media_type: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def reference(name: str) -> dict[str, Any]:
    return {"type": "tool_reference", "tool_name": name}


def addition(name: str) -> dict[str, Any]:
    return {"type": "tool_addition", "tool": {"type": "tool_reference", "name": name}}


def tool(name: str = "f", **fields: Any) -> dict[str, Any]:
    return {"name": name, "input_schema": SCHEMA, **fields}


WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}


def body(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"model": V4, "messages": list(messages) or [user("Hi")]}
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
    assert exc.protocol == "messages"
    # D1: Anthropic's envelope, not the reference's OpenAI one.
    assert exc.body == {"type": "error", "error": {"type": "invalid_request_error", "message": exc.message}}
    return exc


def message_of(request: Any, **options: Any) -> str:
    return error_of(request, **options).message


def unanswered(where: str, ids: str) -> str:
    return (
        f"{where}`tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each "
        "`tool_use` block must have a corresponding `tool_result` block in the next message."
    )


def unexpected(where: str, call_id: str) -> str:
    return (
        f"unexpected `{where}: tool_use_id` found in `tool_result` blocks: {call_id}. Each `tool_result` block "
        "must have a corresponding `tool_use` block in the previous message."
    )


# -- basics ------------------------------------------------------------------------------------------------


def test_minimal_request_defaults() -> None:
    req = convert(body())
    assert (req.protocol, req.model, req.model_version, req.stream) == ("messages", V4, "v4", False)
    conv = req.conversation
    assert conv.thinking_mode is True and conv.reasoning_effort == "high"
    assert conv.messages == [UserMessage(content="Hi")]
    assert conv.tools == [] and conv.tool_choice == "auto" and conv.response_format == "text"
    opts = req.inference_options
    assert (opts.temperature, opts.top_p, opts.max_tokens, opts.output_constraint) == (1.0, 1.0, None, None)
    parsing = req.parsing_options
    assert parsing.model_dump() == {
        "parse_tool_calls": False,
        "starts_in_tool_calls": False,
        "parse_json_output": False,
        "thinking_initial_stage": "reasoning_start",
        "stop_sequences": [],
    }


def test_accepts_bytes_str_and_mapping() -> None:
    raw = json.dumps(body())
    for request in (raw, raw.encode(), body()):
        assert parse_request(request).conversation.messages == [UserMessage(content="Hi")]


def test_the_worked_example_prompt() -> None:
    """behavior.md#worked-examples, the Messages example: system blocks, effort max, a tool round (prompt tail and head)."""
    request = body(
        user("2+2?"),
        assistant([thinking("Use calc."), tool_use("toolu_1", "calc", {"expr": "2+2"})]),
        user([tool_result("toolu_1", "4")]),
        max_tokens=1024,
        system=[text("Sys A"), text("Sys B")],
        output_config={"effort": "max"},
        tools=[
            {"name": "calc", "input_schema": {"type": "object", "properties": {"expr": {"type": "string"}}}}
        ],
    )
    prompt = dscodec.render(convert(request)).text
    assert prompt.startswith("<｜begin▁of▁sentence｜>Reasoning Effort: Beyond maximum")
    assert "uncompromising." in prompt and "\n\nSys A\n\nSys B\n\n## Tools\n\n" in prompt
    assert prompt.endswith(
        "<｜User｜>2+2?<｜Assistant｜><think>Use calc.</think>\n\n<｜DSML｜tool_calls>\n"
        '<｜DSML｜invoke name="calc">\n<｜DSML｜parameter name="expr" string="true">2+2</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls><｜end▁of▁sentence｜><｜User｜><tool_result>4</tool_result>"
        "<｜Assistant｜><think>"
    )


@pytest.mark.parametrize(
    ("fields", "thinking_on", "effort"),
    [
        ({}, True, "high"),
        ({"output_config": {"effort": "none"}}, False, None),
        ({"output_config": {"effort": "minimal"}}, True, "low"),
        ({"output_config": {"effort": "ultra"}}, True, "max"),
        ({"output_config": {"effort": {"xhigh": None}}}, True, "xhigh"),
        ({"output_config": {"effort": None, "format": {"type": "json_schema"}}}, True, "high"),
        ({"thinking": {"type": "disabled"}, "output_config": {"effort": "max"}}, False, None),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 1}, "output_config": {"effort": "none"}},
            True,
            "high",
        ),
        ({"thinking": {"type": "adaptive"}}, True, "high"),
        ({"thinking": None, "output_config": None}, True, "high"),
    ],
)
def test_thinking_resolution(fields: dict[str, Any], thinking_on: bool, effort: Any) -> None:
    conv = convert(body(**fields)).conversation
    assert (conv.thinking_mode, conv.reasoning_effort) == (thinking_on, effort)


def test_default_thinking_mode_option() -> None:
    assert convert(body(), default_thinking_mode=False).conversation.thinking_mode is False
    assert convert(body(), default_thinking_mode=False).parsing_options.thinking_initial_stage is None
    request = body(output_config={"effort": "low"})
    assert convert(request, default_thinking_mode=False).conversation.thinking_mode is True


def test_sampling_fields() -> None:
    opts = convert(body(temperature=0.3, top_p=0.01, **NOTHINK)).inference_options
    assert (opts.temperature, opts.top_p) == (0.30000001192092896, 0.009999999776482582)
    # Anthropic's range is [0, 1]; the reference accepts [0, 2].
    assert convert(body(temperature=2, **NOTHINK)).inference_options.temperature == 2.0
    assert convert(body(top_p=0.5, tools=[tool()])).inference_options.top_p == 0.949999988079071
    assert convert(body(top_p=0.5, model=V41)).inference_options.top_p == 0.949999988079071
    req = convert(body(stream=True, stop_sequences=["a", "a", "é"], metadata={"user_id": "u"}, top_k=5))
    assert req.stream is True and req.parsing_options.stop_sequences == ["a", "a", "é"]


@pytest.mark.parametrize(
    ("requested", "thinking_on", "options", "expected"),
    [
        (None, True, {}, None),
        (1, True, {}, 1),
        (393216, False, {}, 393216),
        (4000000, True, {}, 393216),
        (501, False, {"non_thinking_max_tokens_upper_bound": 500}, 500),
        (501, True, {"thinking_max_tokens_upper_bound": 500}, 500),
    ],
)
def test_max_tokens_is_lowered_to_the_bound(
    requested: Any, thinking_on: bool, options: dict[str, Any], expected: Any
) -> None:
    fields = {} if thinking_on else NOTHINK
    assert convert(body(max_tokens=requested, **fields), **options).inference_options.max_tokens == expected


# -- system text and role-system messages ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "content"),
    [("S", "S"), ("", ""), ([], ""), ([text("A"), text(""), text("B")], "A\n\n\n\nB")],
)
def test_top_level_system_is_the_first_system_message(value: Any, content: str) -> None:
    for model in (V4, V41):
        messages = convert(body(model=model, system=value)).conversation.messages
        assert messages == [SystemMessage(content=content), UserMessage(content="Hi")]


def test_role_system_messages_per_version() -> None:
    request = body(user("a"), system([text("x"), text("y")]), system(""), user("b"))
    v4 = convert(request).conversation.messages
    assert v4 == [
        UserMessage(content="a"),
        UserMessage(content="<system-reminder>\nx\n\ny\n</system-reminder>"),
        UserMessage(content="b"),
    ]
    v41 = convert({**request, "model": V41}).conversation.messages
    assert v41 == [
        UserMessage(content="a"),
        SystemMessage(content="x\n\ny"),
        SystemMessage(content=""),
        UserMessage(content="b"),
    ]
    assert dscodec.render(convert({**request, **NOTHINK})).text == (
        "<｜begin▁of▁sentence｜><｜User｜>a\n\n<system-reminder>\nx\n\ny\n</system-reminder>\n\nb<｜Assistant｜></think>"
    )


# -- user, assistant and tool content ------------------------------------------------------------------


def test_each_user_block_is_its_own_message() -> None:
    doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}}
    request = body(user([text("a"), text(""), doc, {"type": "document", "source": {}}]), **NOTHINK)
    req = convert(request)
    assert req.conversation.messages == [
        UserMessage(content="a"),
        UserMessage(content=""),
        UserMessage(content="[Unsupported document type: text/plain]"),
        UserMessage(content="[Unsupported document type: unknown]"),
    ]
    # The renderer joins the consecutive user messages again.
    assert (
        "<｜User｜>a\n\n[Unsupported document type: text/plain]\n\n[Unsupported" in dscodec.render(req).text
    )


def test_assistant_blocks() -> None:
    request = body(
        user("q"),
        assistant([text(""), text("b"), thinking("t1"), text(""), thinking("t2"), text("c")]),
        assistant("plain"),
    )
    messages = convert(request).conversation.messages
    # Empty text blocks before the first text add nothing; later ones add a separator (observed).
    assert messages[1] == AssistantMessage(content="b\n\n\n\nc", reasoning="t1\n\nt2")
    assert messages[2] == AssistantMessage(content="plain", reasoning="")
    assert convert({**request, **NOTHINK}).conversation.messages[1].reasoning is None  # type: ignore[union-attr]


def test_trailing_assistant_is_a_complete_turn() -> None:
    req = convert(body(user("q"), assistant("{"), **NOTHINK))
    assert req.conversation.messages[-1] == AssistantMessage(content="{")
    assert req.parsing_options.thinking_initial_stage is None
    assert dscodec.render(req).text.endswith(
        "<｜Assistant｜></think>{<｜end▁of▁sentence｜><｜Assistant｜></think>"
    )


def test_tool_use_arguments_are_python_style_json() -> None:
    inputs = [{"city": "Paris", "n": [1, 1e-7, None]}, "str", None, [1, 2], {}]
    calls = [tool_use(f"t{i}", "f", value) for i, value in enumerate(inputs)]
    request = body(user("q"), assistant(calls), user([tool_result(f"t{i}") for i in range(len(inputs))]))
    message = convert(request).conversation.messages[1]
    assert isinstance(message, AssistantMessage)
    assert [c.arguments for c in message.tool_calls] == [
        '{"city": "Paris", "n": [1, 1e-7, null]}',
        '"str"',
        "null",
        "[1, 2]",
        "{}",
    ]


def test_tool_results() -> None:
    request = body(
        user("q"),
        assistant([tool_use("a"), tool_use("b"), tool_use("c"), tool_use("d")]),
        user(
            [
                tool_result(
                    "b", [text("x"), text(""), {"type": "document", "source": {"media_type": "a/b"}}]
                ),
                tool_result("a", "s", is_error=True),
                {"type": "tool_result", "tool_use_id": "c"},
                tool_result("d", None),
                text("after"),
            ]
        ),
    )
    messages = convert(request).conversation.messages
    # The results keep the client's order here; the renderer writes them in call order.
    assert messages[2:] == [
        ToolMessage(tool_call_id="b", content="x\n\n\n\n[Unsupported document type: a/b]"),
        ToolMessage(tool_call_id="a", content="s"),
        ToolMessage(tool_call_id="c", content=""),
        ToolMessage(tool_call_id="d", content=""),
        UserMessage(content="after"),
    ]


# -- images ----------------------------------------------------------------------------------------------


def test_images_on_v4_are_text_and_never_checked() -> None:
    request = body(
        user(
            [
                url_image("ftp://x"),
                b64_image("!!"),
                {"type": "image", "source": {"type": "file", "file_id": "f"}},
            ]
        ),
        assistant([url_image("a.png"), text("x")]),
        system([text("s"), url_image("http://x")]),
    )
    messages = convert(request).conversation.messages
    assert [m.content for m in messages] == [
        "[Unsupported Image]",
        "[Unsupported Image]",
        "[Unsupported Image]",
        "[Unsupported Image]\n\nx",
        "<system-reminder>\ns\n\n[Unsupported Image]\n</system-reminder>",
    ]


def test_v41_images_become_placeholders_with_messages_paths() -> None:
    request = body(
        user([text(f"a{IMAGE}b"), url_image("https://e.com/i.png"), b64_image("AA=", "image/jpg")]),
        assistant([tool_use("t")]),
        user([tool_result("t", [text("x"), url_image("http://a"), url_image("http://b")])]),
        system([text("s"), url_image("HTTP://c")]),
        model=V41,
    )
    req = convert(request)
    messages = req.conversation.messages
    url = ImageSource(kind="url", url="https://e.com/i.png", path="messages.0.content[1]")
    # base64 data is re-encoded canonically; image/jpg is named image/jpeg (observed).
    data = ImageSource(kind="data_url", url="data:image/jpeg;base64,AA==", path="messages.0.content[2]")
    assert messages[0] == UserMessage(content=f"a{IMAGE}b")
    assert messages[1] == UserMessage(content=IMAGE, images=[ImagePlaceholder(offset=0, source=url)])
    assert messages[2] == UserMessage(content=IMAGE, images=[ImagePlaceholder(offset=0, source=data)])
    result = messages[4]
    assert isinstance(result, ToolMessage) and result.content == f"x\n\n{IMAGE}\n\n{IMAGE}"
    assert [(p.offset, p.source.path) for p in result.images] == [
        (3, "messages.2.content.0.tool_result"),
        (14, "messages.2.content.0.tool_result"),
    ]
    sys_message = messages[5]
    assert isinstance(sys_message, SystemMessage) and sys_message.images[0].source.path == "messages.3"
    prompt = dscodec.render(req)
    assert [s.url for s in prompt.image_sources] == [
        "https://e.com/i.png",
        "data:image/jpeg;base64,AA==",
        "http://a",
        "http://b",
        "HTTP://c",
    ]


@pytest.mark.parametrize(
    ("data", "canonical"),
    [("", ""), ("AA==", "AA=="), ("AA=", "AA=="), ("AA===", "AA=="), ("AAA=", "AAA="), ("AAAA====", "AAAA")],
)
def test_v41_base64_data_is_canonicalised(data: str, canonical: str) -> None:
    message = convert(body(user([b64_image(data)]), model=V41)).conversation.messages[0]
    assert isinstance(message, UserMessage)
    assert message.images[0].source.url == f"data:image/png;base64,{canonical}"


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (url_image("ftp://x/a.png"), 'messages.0.content[0]: invalid url: "ftp://x/a.png"'),
        (url_image('a"\n'), 'messages.0.content[0]: invalid url: "a\\"\\n"'),
        (
            url_image("data:image/png;base64,AA=="),
            'messages.0.content[0]: invalid url: "data:image/png;base64,AA=="',
        ),
        (
            {"type": "image", "source": {"type": "file", "file_id": "f"}},
            "messages.0.content[0]: file_id is not supported. Pass the image as a base64 data url instead.",
        ),
        (b64_image("AA"), "messages.0.content[0]: base64 decode error"),
        (b64_image("A==="), "messages.0.content[0]: base64 decode error"),
        (b64_image("AB=="), "messages.0.content[0]: base64 decode error"),
        (b64_image(" AAAA"), "messages.0.content[0]: base64 decode error"),
        (b64_image("-_-_"), "messages.0.content[0]: base64 decode error"),
    ],
)
def test_v41_image_errors(block: dict[str, Any], message: str) -> None:
    assert message_of(body(user([block]), model=V41)) == message


def test_v41_image_errors_elsewhere() -> None:
    request = body(
        user("q"), assistant([tool_use("t")]), user([tool_result("t", [text("x"), url_image("a")])])
    )
    assert message_of({**request, "model": V41}) == (
        'messages.2.content.0.tool_result.content[1]: invalid url: "a"'
    )
    # Tool references of a result are checked before its images.
    request["messages"][2]["content"][0]["content"].append(reference("zz"))
    assert message_of({**request, "model": V41}) == (
        "messages.2.content.0: tool reference 'zz' not found in available tools"
    )
    # Assistant images are checked, then refused, at the first one.
    assert message_of(body(user("q"), assistant([url_image("ftp://x")]), model=V41)) == (
        'messages.1.content[0]: invalid url: "ftp://x"'
    )
    assert message_of(body(user("q"), assistant([url_image("http://x"), url_image("a")]), model=V41)) == (
        "Image in assistant message is unsupported"
    )


# -- tool pairing (behavior.md#messages) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([user("q"), assistant([tool_use("t")])], unanswered("messages.1:", "t")),
        (
            [user("q"), assistant([tool_use("b"), tool_use("a"), tool_use("t10")])],
            unanswered("messages.1:", "a, b, t10"),
        ),
        ([user("q"), assistant([tool_use("a"), text("x")])], unanswered("messages.1.1: ", "a")),
        (
            [user("q"), assistant([tool_use("a"), tool_use("b"), text("x")])],
            unanswered("messages.1.2: ", "a, b"),
        ),
        ([user("q"), assistant([tool_use("a")]), assistant("x")], unanswered("messages.2: ", "a")),
        ([user("q"), assistant([tool_use("a")]), system("s")], unanswered("messages.2: ", "a")),
        ([user("q"), assistant([tool_use("a")]), user("x")], unanswered("messages.2: ", "a")),
        (
            [user("q"), assistant([tool_use("a")]), user([text("x"), tool_result("a")])],
            unanswered("messages.2: ", "a"),
        ),
        (
            [user("q"), assistant([tool_use("c"), tool_use("b"), tool_use("a")]), user([tool_result("b")])],
            unanswered("messages.1:", "a, c"),
        ),
        (
            [
                user("q"),
                assistant([tool_use("a"), tool_use("b")]),
                user([tool_result("a"), text("x"), tool_result("b")]),
            ],
            unanswered("messages.2: ", "b"),
        ),
        ([user([tool_result("zz")])], unexpected("messages.0.content.0", "zz")),
        ([user("q"), assistant("a"), user([tool_result("t")])], unexpected("messages.2.content.0", "t")),
        (
            [
                user("q"),
                assistant([tool_use("t"), tool_use("u")]),
                user([tool_result("t"), tool_result("zz")]),
            ],
            unexpected("messages.2.content.1", "zz"),
        ),
        (
            [user("q"), assistant([tool_use("t")]), user([tool_result("t"), text("x"), tool_result("t")])],
            (
                "messages.2.content.2: each tool_use must have a single result. Found multiple `tool_result` blocks "
                "with id: t"
            ),
        ),
        (
            [user("q"), assistant([tool_use("t"), tool_use("t")]), user([tool_result("t")])],
            "messages.1.content.1: `tool_use` ids must be unique",
        ),
        # The unanswered calls are reported before the next message's empty content.
        ([user("q"), assistant([tool_use("t")]), assistant([])], unanswered("messages.2: ", "t")),
        (
            [user("q"), assistant([tool_use("t")]), user([])],
            "messages.2: all messages must have non-empty content",
        ),
    ],
)
def test_tool_pairing_errors(messages: list[dict[str, Any]], message: str) -> None:
    assert message_of(body(*messages)) == message


def test_thinking_may_follow_a_call() -> None:
    request = body(user("q"), assistant([tool_use("t"), thinking("more")]), user([tool_result("t")]))
    message = convert(request).conversation.messages[1]
    assert message == AssistantMessage(
        reasoning="more", tool_calls=[ToolCall(id="t", name="f", arguments="{}")]
    )


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([user([thinking("x")])], "messages.0.content: thinking blocks may only be in `assistant` messages"),
        (
            [system([thinking("x")]), user("q")],
            "messages.0.content: thinking blocks may only be in `assistant` messages",
        ),
        ([user([tool_use("t")])], "messages.0: `tool_use` blocks can only be in `assistant` messages"),
        (
            [user([{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}])],
            "messages.0: `tool_use` blocks can only be in `assistant` messages",
        ),
        (
            [user([{"type": "web_search_tool_result", "tool_use_id": "s", "content": []}])],
            "messages.0: `web_search_tool_result` blocks can only be in `assistant` messages",
        ),
        (
            [user("q"), assistant([tool_result("t")])],
            "messages.1: `tool_result` blocks can only be in `user` messages",
        ),
        (
            [system([tool_result("t")]), user("q")],
            "messages.0: `tool_result` blocks can only be in `user` messages",
        ),
        ([user([addition("f")])], "messages.0: `tool_addition` blocks can only be in `system` messages"),
        ([user("q"), assistant([])], "messages.1: all messages must have non-empty content"),
        ([], "messages: at least one message is required"),
    ],
)
def test_block_placement_errors(messages: list[dict[str, Any]], message: str) -> None:
    request = {"model": V4, "messages": messages, "tools": [tool()]}
    assert message_of(request) == message


def test_an_empty_role_system_message_is_accepted() -> None:
    assert convert(body(system([]), user("q"), model=V41)).conversation.messages[0] == SystemMessage(
        content=""
    )


# -- reasoning (Reject behaviour) -------------------------------------------------------------------------

REJECT_MESSAGE = "The `content[].thinking` in the thinking mode must be passed back to the API."


def test_reasoning_reject_applies_to_the_current_turn() -> None:
    rnd = [user("q"), assistant([tool_use("t")]), user([tool_result("t")])]
    assert message_of(body(*rnd, tools=[tool()]), reasoning_content_behavior="reject") == REJECT_MESSAGE
    # A request offering only dropped web search tools still offers tools (observed).
    assert (
        message_of(
            body(user("q"), assistant("x"), tools=[WEB_SEARCH]),
            reasoning_content_behavior="reject",
            messages_web_search="drop",
        )
        == REJECT_MESSAGE
    )
    # Turns before the last user message are filled; an empty thinking block counts as present.
    ok = body(*rnd, assistant("x"), user("next"), tools=[tool()])
    assert convert(ok, reasoning_content_behavior="reject").conversation.messages[1].reasoning == ""  # type: ignore[union-attr]
    present = body(
        user("q"), assistant([thinking(""), tool_use("t")]), user([tool_result("t")]), tools=[tool()]
    )
    convert(present, reasoning_content_behavior="reject")
    convert({**body(*rnd, tools=[tool()]), **NOTHINK}, reasoning_content_behavior="reject")
    # Without tools, a plain answer after the last user message is filled.
    assert convert(body(user("q"), assistant("x")), reasoning_content_behavior="reject")


# -- server tools and server-tool history -----------------------------------------------------------------

SERVER_HISTORY = [
    user("Search x"),
    assistant(
        [
            thinking("search"),
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
            text("Found."),
        ]
    ),
]


def test_server_tools_and_blocks() -> None:
    assert message_of(body(tools=[tool(), WEB_SEARCH])) == "tools[1]: server tools are not supported"
    assert message_of(body(*SERVER_HISTORY)) == "Unsupported content block: server tools are not supported"
    req = convert(body(*SERVER_HISTORY, tools=[WEB_SEARCH, tool("web_search")]), messages_web_search="drop")
    assert [t.name for t in req.conversation.tools] == ["web_search"]
    assert req.conversation.messages[1] == AssistantMessage(content="Found.", reasoning="search")
    for kind in ("custom", "bash_20250124", "text_editor_20250728", "web_fetch_20250910", ""):
        request = body(tools=[{"type": kind, "name": "x"}])
        assert message_of(request, messages_web_search="drop") == "tools[0]: server tools are not supported"
    # Dropped server blocks after a call do not count as text after it.
    calls = body(
        user("q"), assistant([tool_use("t"), *SERVER_HISTORY[1]["content"][1:3]]), user([tool_result("t")])
    )
    assert len(convert(calls, messages_web_search="drop").conversation.messages) == 3


# -- tools -----------------------------------------------------------------------------------------------


def test_tools_and_constraint() -> None:
    req = convert(
        body(tools=[tool("f", description="d", strict=True, cache_control={}), tool("g")], **NOTHINK)
    )
    tools = req.conversation.tools
    assert [(t.name, t.description, t.parameters, t.strict) for t in tools] == [
        ("f", "d", SCHEMA, None),
        ("g", None, SCHEMA, None),
    ]
    constraint = req.inference_options.output_constraint
    assert constraint is not None and constraint.kind == "tool_call"
    assert constraint.schema.startswith('[{"type":"function","function":{"name":"f","description":"d",')
    assert req.parsing_options.parse_tool_calls is True
    assert convert(body(tools=[])).conversation.tools == []


def test_defer_loading_per_version() -> None:
    request = body(tools=[tool("f"), tool("d", defer_loading=True)], **NOTHINK)
    assert [t.defer_loading for t in convert(request).conversation.tools] == [False, False]
    v41 = convert({**request, "model": V41})
    assert [t.defer_loading for t in v41.conversation.tools] == [False, True]
    constraint = v41.inference_options.output_constraint
    assert constraint is not None and constraint.schema.endswith(',"defer_loading":true}]')
    assert message_of(body(tools=[tool("d", defer_loading=True)], model=V41)) == (
        "tools: at least one tool must have defer_loading=false. All tools cannot be deferred."
    )
    assert convert(body(tools=[tool("d", defer_loading=True)])).conversation.tools[0].defer_loading is False


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            [tool("a b")],
            (
                "Invalid 'tools[0].name': string does not match pattern. Expected a string that matches the pattern "
                "'^[a-zA-Z0-9_-]+$'."
            ),
        ),
        (
            [tool("f"), tool("")],
            (
                "Invalid 'tools[1].name': empty string. Expected a string with minimum length 1, but got an empty string "
                "instead."
            ),
        ),
        ([tool("f"), tool("f")], "Tool names must be unique."),
        ([{"name": "x"}], 'Invalid schema for function \'x\': null is not of types "boolean", "object"'),
        (
            [{"name": "x", "input_schema": [1]}],
            'Invalid schema for function \'x\': [1] is not of types "boolean", "object"',
        ),
        (
            [{"name": "x", "input_schema": {}}],
            "Invalid schema for function 'x': schema must be a JSON Schema of 'type: \"object\"', got 'type: null'.",
        ),
    ],
)
def test_tool_errors(tools: list[dict[str, Any]], message: str) -> None:
    assert message_of(body(tools=tools)) == message


# -- tool_choice (D10) -----------------------------------------------------------------------------------


def test_tool_choice_variants() -> None:
    tools = [tool("f"), tool("g")]
    auto = convert(body(tools=tools, tool_choice={"type": "auto", "disable_parallel_tool_use": True}))
    assert auto.conversation.tool_choice == "auto" and len(auto.conversation.tools) == 2
    none = convert(body(tools=[{"name": "bad_schema"}], tool_choice={"type": "none"}))
    assert (none.conversation.tool_choice, none.conversation.tools) == ("none", [])
    assert none.inference_options.output_constraint is None and none.parsing_options.parse_tool_calls is False
    named = convert(body(tools=tools, tool_choice={"type": "tool", "name": "g"}, **NOTHINK))
    assert named.conversation.tool_choice == "required" and [t.name for t in named.conversation.tools] == [
        "g"
    ]
    assert named.parsing_options.starts_in_tool_calls is True
    assert dscodec.render(named).text.endswith("<｜Assistant｜></think>\n\n<｜DSML｜tool_calls>\n")
    assert message_of(body(tools=tools, tool_choice={"type": "tool", "name": "zz"})) == (
        "Invalid value for 'tool_call': no function named 'zz' was specified in the 'tools' parameter."
    )
    assert message_of(body(tools=tools, tool_choice={"type": "tool", "name": "f"})) == (
        "Thinking mode does not support this tool_choice"
    )
    # Without tools a forced choice is auto; naming a dropped web search tool leaves the choice to the model.
    assert convert(body(tool_choice={"type": "tool", "name": "f"})).conversation.tool_choice == "auto"
    dropped = body(tools=[WEB_SEARCH, tool()], tool_choice={"type": "tool", "name": "web_search"})
    assert convert(dropped, messages_web_search="drop").conversation.tool_choice == "auto"


def test_tool_choice_any_forces_a_tool_call_d10() -> None:
    req = convert(body(tools=[tool("f"), tool("g")], tool_choice={"type": "any"}, **NOTHINK))
    assert req.conversation.tool_choice == "required" and len(req.conversation.tools) == 2
    constraint = req.inference_options.output_constraint
    assert constraint is not None and constraint.kind == "tool_call_required"
    assert req.parsing_options.starts_in_tool_calls is True
    # Anthropic: thinking only works with auto/none tool choice.
    assert message_of(body(tools=[tool()], tool_choice={"type": "any"})) == (
        "Thinking mode does not support this tool_choice"
    )
    # Nothing to call: auto, in any mode.
    assert convert(body(tool_choice={"type": "any"})).conversation.tool_choice == "auto"
    only_web = body(tools=[WEB_SEARCH], tool_choice={"type": "any"})
    assert convert(only_web, messages_web_search="drop").conversation.tool_choice == "auto"


# -- tool_addition and tool_reference ----------------------------------------------------------------------


def test_tool_addition() -> None:
    tools = [tool("f"), tool("d", defer_loading=True)]
    request = body(user("a"), system([text("Now:"), addition("d")]), user("b"), tools=tools, **NOTHINK)
    v41 = convert({**request, "model": V41}).conversation.messages
    assert isinstance(v41[1], SystemMessage) and v41[1].content == "Now:"
    assert [(t.name, t.defer_loading) for t in v41[1].tools or []] == [("d", True)]
    assert (
        "<｜System｜>Now:\n\n### Updated Tool Schemas\n\n"
        in dscodec.render(convert({**request, "model": V41})).text
    )
    v4 = convert(request).conversation.messages
    assert v4[1] == UserMessage(content="<system-reminder>\nNow:\n</system-reminder>")
    only = body(user("a"), system([addition("d")]), user("b"), tools=tools, **NOTHINK)
    assert len(convert(only).conversation.messages) == 2
    assert message_of(body(system([addition("zz")]), user("a"), tools=tools)) == (
        "messages.0.content.0: `tool_addition` references unknown tool 'zz'"
    )


def test_tool_addition_only_announces_offered_tools() -> None:
    tools = [tool("f"), tool("g")]
    hidden = body(
        user("a"), system([addition("f")]), user("b"), model=V41, tools=tools, tool_choice={"type": "none"}
    )
    # The message announced nothing and had nothing else: it disappears.
    assert convert(hidden).conversation.messages == [UserMessage(content="a"), UserMessage(content="b")]
    with_text = body(
        system([text("x"), addition("f")]), user("b"), model=V41, tools=tools, tool_choice={"type": "none"}
    )
    assert convert(with_text).conversation.messages[0] == SystemMessage(content="x", tools=[])


def test_tool_reference() -> None:
    tools = [tool("f"), tool("lookup", defer_loading=True)]
    rounds = [
        user("q"),
        assistant([tool_use("t"), tool_use("u")]),
        user(
            [
                tool_result("t", [reference("lookup")]),
                tool_result("u", [text("x"), reference("f")]),
                text("after"),
            ]
        ),
    ]
    v41 = convert(body(*rounds, model=V41, tools=tools)).conversation.messages
    assert v41[2] == ToolMessage(tool_call_id="t", content="lookup")
    assert v41[3] == ToolMessage(tool_call_id="u", content="x\n\nf")
    # V4.1 announces the referenced tools after the whole user message, in reference order.
    assert v41[4] == UserMessage(content="after")
    assert isinstance(v41[5], SystemMessage) and [t.name for t in v41[5].tools or []] == ["lookup", "f"]
    assert not any(
        isinstance(m, SystemMessage) for m in convert(body(*rounds, tools=tools)).conversation.messages
    )
    hidden = body(*rounds, model=V41, tools=tools, tool_choice={"type": "none"})
    assert not any(isinstance(m, SystemMessage) for m in convert(hidden).conversation.messages)
    rounds[2]["content"][0]["content"] = [reference("zz")]
    assert message_of(body(*rounds, tools=tools)) == (
        "messages.2.content.0: tool reference 'zz' not found in available tools"
    )


# -- validation order --------------------------------------------------------------------------------------

_TRIGGERS: list[tuple[str, dict[str, Any]]] = [
    ("model", {"model": "nope"}),
    ("names", {"tools": [tool("a b")]}),
    ("messages", {"messages": [user([tool_result("zz")])]}),
    ("schemas", {"tools": [{"name": "x"}]}),
    ("tool_choice", {"tools": [tool("f")], "tool_choice": {"type": "tool", "name": "f"}}),
    ("stop", {"stop_sequences": [""]}),
    ("temperature", {"temperature": 3}),
    ("top_p", {"top_p": 0}),
    ("max_tokens", {"max_tokens": 0}),
]


#: Trigger pairs that cannot be combined: both set ``tools``.
_CONFLICTS = {("names", "schemas"), ("names", "tool_choice"), ("schemas", "tool_choice")}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (_TRIGGERS[i], _TRIGGERS[j])
        for i in range(len(_TRIGGERS))
        for j in range(i + 1, len(_TRIGGERS))
        if (_TRIGGERS[i][0], _TRIGGERS[j][0]) not in _CONFLICTS
    ],
    ids=lambda pair: pair[0],
)
def test_validation_order(first: tuple[str, dict[str, Any]], second: tuple[str, dict[str, Any]]) -> None:
    """With two rules broken, the error is the one of the rule the reference checks first."""
    alone = message_of(body(**first[1]))
    assert message_of(body(**{**second[1], **first[1]})) == alone


def test_all_deferred_comes_before_the_messages() -> None:
    request: dict[str, Any] = {"model": V41, "messages": [], "tools": [tool("d", defer_loading=True)]}
    assert message_of(request).startswith("tools: at least one tool must have defer_loading=false.")
    request["tools"].append(tool("a b"))
    assert message_of(request).startswith("Invalid 'tools[1].name'")


# -- malformed bodies (deviation D2) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message", "param"),
    [
        ("not json", "invalid JSON request: ", None),
        (b"\xff\xfe{}", "invalid JSON request: ", None),
        (
            "[]",
            "invalid request body: invalid length 0, expected struct MessagesRequest with 13 elements",
            None,
        ),
        ("null", "invalid request body: invalid type: null, expected struct MessagesRequest", None),
        ("{}", "invalid request body: missing field `model`", None),
        ('{"model": "m"}', "invalid request body: missing field `messages`", None),
        (
            '{"model": "m", "messages": [{"role": "tool", "content": "a"}]}',
            "invalid request body: unknown variant `tool`, expected one of `user`, `assistant`, `system`",
            "messages[0].role",
        ),
        (
            '{"model": "m", "messages": [{"content": [{"type": 1}]}]}',
            "invalid request body: missing field `role`",
            "messages[0]",
        ),
        (
            '{"model": "m", "messages": [{"role": "user", "content": null}]}',
            "invalid request body: expected a string or a list",
            "messages[0].content",
        ),
        (
            '{"model": "m", "messages": [{"role": "user", "content": [{"type": "redacted_thinking", "data": "x"}]}]}',
            (
                "invalid request body: unknown variant `redacted_thinking`, expected one of `text`, `image`, `document`, "
                "`thinking`, `server_tool_use`, `tool_use`, `tool_result`, `web_search_tool_result`, `tool_addition`"
            ),
            "messages[0].content[0].type",
        ),
        (
            (
                '{"model": "m", "messages": [{"role": "user", "content": [{"type": "image", "source": '
                '{"type": "base64", "media_type": "image/bmp", "data": ""}}]}]}'
            ),
            (
                "invalid request body: unknown variant `image/bmp`, expected one of `image/jpeg`, `image/jpg`, "
                "`image/png`, `image/gif`, `image/webp`"
            ),
            "messages[0].content[0].source.media_type",
        ),
        (
            (
                '{"model": "m", "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", '
                '"content": [{"type": "thinking", "thinking": "x"}]}]}]}'
            ),
            (
                "invalid request body: unknown variant `thinking`, expected one of `text`, `image`, `document`, "
                "`tool_reference`"
            ),
            "messages[0].content[0].content[0].type",
        ),
        (
            '{"model": "m", "messages": [], "system": [{"type": "image"}]}',
            "invalid request body: unknown variant `image`, expected `text`",
            "system[0].type",
        ),
        (
            '{"model": "m", "messages": [], "stop_sequences": "x"}',
            'invalid request body: invalid type: string "x", expected a sequence',
            "stop_sequences",
        ),
        (
            '{"model": "m", "messages": [], "metadata": "x"}',
            'invalid request body: invalid type: string "x", expected struct MessagesMetadata',
            "metadata",
        ),
        (
            '{"model": "m", "messages": [], "tool_choice": "auto"}',
            'invalid request body: invalid type: string "auto", expected internally tagged enum MessagesToolChoice',
            "tool_choice",
        ),
        (
            '{"model": "m", "messages": [], "tool_choice": {"type": "required"}}',
            "invalid request body: unknown variant `required`, expected one of `auto`, `any`, `tool`, `none`",
            "tool_choice.type",
        ),
        (
            '{"model": "m", "messages": [], "tools": [{"description": 1}]}',
            "invalid request body: missing field `name`",
            "tools[0]",
        ),
        (
            '{"model": "m", "messages": [], "tools": [{"name": "x", "description": 1}]}',
            "invalid request body: field `description`: invalid type: integer `1`, expected a string",
            "tools[0].description",
        ),
        (
            '{"model": "m", "messages": [], "tools": [{"type": null, "name": "x"}]}',
            "invalid request body: invalid type: null, expected a string",
            "tools[0].type",
        ),
        (
            '{"model": "m", "messages": [], "thinking": {"type": "enabled", "budget_tokens": -1}}',
            "invalid request body: invalid value: integer `-1`, expected u64",
            "thinking.budget_tokens",
        ),
        (
            '{"model": "m", "messages": [], "max_tokens": 4294967296}',
            "invalid request body: invalid value: integer `4294967296`, expected u32",
            "max_tokens",
        ),
    ],
)
def test_malformed_bodies_are_400(raw: str | bytes, message: str, param: Any) -> None:
    exc = error_of(raw)
    assert exc.message.startswith(message)
    assert exc.param == param


def test_parse_errors_beat_semantic_ones_and_unknown_fields_are_ignored() -> None:
    assert message_of('{"model": "nope", "messages": [], "max_tokens": -1}').endswith("expected u32")
    req = convert(body(service_tier="auto", container=[1], mcp_servers=None, context_management={}))
    assert req.model == V4


def test_non_json_inputs() -> None:
    assert message_of('{"model": "m", "messages": []} x').startswith("invalid JSON request: ")
    with pytest.raises(ConversionError):
        parse_request({"model": V4, "messages": [user("a")], "x": {1, 2}})
    with pytest.raises(ConversionError):
        parse_request(42)  # type: ignore[arg-type]


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
            "system",
            "text",
            "image",
            "document",
            "thinking",
            "tool_use",
            "tool_result",
            "tool_reference",
            "tool_addition",
            "server_tool_use",
            "web_search_tool_result",
            "base64",
            "url",
            "file",
            "image/png",
            "AA==",
            "http://x",
            "auto",
            "any",
            "tool",
            "none",
            "enabled",
            "disabled",
            "web_search_20250305",
            "object",
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
                    "source",
                    "media_type",
                    "data",
                    "url",
                    "file_id",
                    "id",
                    "input",
                    "tool_use_id",
                    "tool_name",
                    "tool",
                    "thinking",
                    "input_schema",
                    "defer_loading",
                    "description",
                    "effort",
                    "budget_tokens",
                    "user_id",
                    "properties",
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
    "system",
    "max_tokens",
    "stream",
    "temperature",
    "top_p",
    "stop_sequences",
    "tools",
    "tool_choice",
    "thinking",
    "metadata",
    "output_config",
]


def _only_conversion_errors(request: Any, options: ConversionOptions | None = None) -> None:
    try:
        result = parse_request(request, options=options)
    except ConversionError as exc:
        assert exc.status_code == 400
        assert exc.protocol == "messages"
        assert exc.body["type"] == "error"
        json.dumps(exc.body)
    else:
        assert isinstance(result, ConversationRequest)
        dscodec.render(result)


@given(
    st.dictionaries(st.sampled_from(_FIELDS), _json_values, max_size=8),
    st.sampled_from([V4, V41, "zzz"]),
    st.booleans(),
)
def test_fuzz_any_field_values(fields: dict[str, Any], model: str, drop: bool) -> None:
    request = {"model": model, "messages": [user("Hi")], **fields}
    options = ConversionOptions(
        messages_web_search="drop" if drop else "reject",
        reasoning_content_behavior="reject" if drop else "fill_empty",
    )
    _only_conversion_errors(request, options)
    _only_conversion_errors(json.dumps(request))


_blocks = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "text",
                "image",
                "document",
                "thinking",
                "tool_use",
                "tool_result",
                "server_tool_use",
                "web_search_tool_result",
                "tool_addition",
            ]
        )
    },
    optional={
        "text": st.sampled_from(["", "a", IMAGE]),
        "thinking": st.sampled_from(["", "r"]),
        "id": st.sampled_from(["a", "b"]),
        "tool_use_id": st.sampled_from(["a", "b", "c"]),
        "name": st.sampled_from(["f", "g"]),
        "input": _json_values,
        "content": st.none()
        | st.text(max_size=3)
        | st.lists(
            st.sampled_from(
                [text("x"), url_image("http://x"), url_image("a"), reference("f"), reference("zz")]
            ),
            max_size=3,
        ),
        "source": st.sampled_from(
            [
                {"type": "url", "url": "http://x"},
                {"type": "url", "url": "ftp://x"},
                {"type": "base64", "media_type": "image/png", "data": "AA=="},
                {"type": "base64", "media_type": "image/jpg", "data": "A"},
                {"type": "file", "file_id": "f"},
                {},
            ]
        ),
        "tool": st.sampled_from(
            [{"type": "tool_reference", "name": "f"}, {"type": "tool_reference", "name": "z"}]
        ),
    },
)

_message = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "system"]),
        "content": st.text(max_size=3) | st.lists(_blocks, max_size=4),
    }
)


@given(st.lists(_message, max_size=6), st.sampled_from([V4, V41]), _json_values, st.booleans())
def test_fuzz_message_sequences(messages: list[dict[str, Any]], model: str, choice: Any, drop: bool) -> None:
    options = ConversionOptions(messages_web_search="drop" if drop else "reject")
    _only_conversion_errors({"model": model, "messages": messages}, options)
    tools = [tool("f"), tool("g", defer_loading=True), WEB_SEARCH]
    _only_conversion_errors(
        {"model": model, "messages": messages, "tools": tools, "tool_choice": choice, **NOTHINK}, options
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
    for field in ("messages", "tools", "zz", "system", "metadata"):
        _only_conversion_errors(f'{{"model": "{V4}", "messages": [], "{field}": {nested}}}')
        _only_conversion_errors(f'{{"model": "{V4}", "messages": [], "{field}": {obj}}}')
    deep_input = '{"a":' * min(depth, 120) + "1" + "}" * min(depth, 120)
    _only_conversion_errors(
        f'{{"model": "{V4}", "messages": [{{"role": "user", "content": "q"}}, {{"role": "assistant", "content": '
        f'[{{"type": "tool_use", "id": "t", "name": "f", "input": {deep_input}}}]}}, {{"role": "user", "content": '
        '[{"type": "tool_result", "tool_use_id": "t"}]}]}'
    )


# -- hardening: linear checks, the stop length cap (D16), error shapes, base64 on every Python -------------------
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
    assert len(parse_request(body(tools=[tool(n) for n in names])).conversation.tools) == MANY
    assert Counted.comparisons <= 4 * MANY
    Counted.reset()
    with pytest.raises(ConversionError, match=r"^Tool names must be unique\.$"):
        parse_request(body(tools=[*(tool(n) for n in names), tool(Counted("t0"))]))
    assert Counted.comparisons <= 4 * MANY


@pytest.mark.usefixtures("parsed_bodies")
def test_tool_use_pairing_is_linear() -> None:
    ids = [Counted(f"c{i}") for i in range(MANY)]
    uses = [tool_use(i) for i in ids]
    results = [tool_result(Counted(str(i))) for i in reversed(ids)]
    # Text blocks after the results: each one checks that every call was answered.
    answer = user([*results, *(text("x") for _ in range(MANY))])
    Counted.reset()
    converted = parse_request(body(user("Go"), assistant(uses), answer, **NOTHINK)).conversation.messages
    assert len(converted) == 2 + 2 * MANY
    assert Counted.comparisons <= 6 * MANY
    Counted.reset()
    with pytest.raises(ConversionError, match=r"`tool_use` ids must be unique$"):
        parse_request(body(user("Go"), assistant([*uses, tool_use(Counted("c0"))]), answer, **NOTHINK))
    assert Counted.comparisons <= 6 * MANY


def test_content_is_joined_once() -> None:
    # Parts are collected and joined when the text is read: appending to one string would copy it per part.
    part = Content()
    for piece in ("a", "", "bc"):
        part.add(piece)
    part.add(IMAGE, ImageSource(kind="url", url="http://x"))
    assert part.pieces == ["a", "", "bc", IMAGE]
    assert part.text == "a\n\n\n\nbc\n\n" + IMAGE and part.length == len(part.text)
    assert part.images[0].offset == part.text.index(IMAGE)
    texts: list[str] = []
    for piece in ("", "", "a", "", "b"):
        inbound._append_text(texts, piece)
    assert texts == ["a", "", "b"]


@pytest.mark.heavy
def test_twenty_thousand_tools_blocks_and_calls() -> None:
    n = 20_000
    assert len(convert(body(tools=[tool(f"t{i}") for i in range(n)])).conversation.tools) == n
    assert (
        message_of(body(tools=[*(tool(f"t{i}") for i in range(n)), tool("t0")]))
        == "Tool names must be unique."
    )
    uses = [tool_use(f"c{i}") for i in range(n)]
    results = [tool_result(f"c{i}", f"r{i}") for i in reversed(range(n))]
    converted = convert(body(user("Go"), assistant(uses), user(results), **NOTHINK)).conversation.messages
    assert len(converted) == 2 + n
    assert [m.tool_call_id for m in converted[2:4] if isinstance(m, ToolMessage)] == ["c19999", "c19998"]
    assert message_of(body(user("Go"), assistant(uses), user([*results[:-1], text("x")]), **NOTHINK)) == (
        unanswered("messages.2: ", "c0")
    )
    assert message_of(body(user("Go"), assistant(uses), user([*results, tool_result("c1")]), **NOTHINK)) == (
        f"messages.2.content.{n}: each tool_use must have a single result. Found multiple `tool_result` blocks "
        "with id: c1"
    )
    blocks = [text("") for _ in range(3)] + [text(f"b{i}" if i % 2 else "") for i in range(n)]
    reply = convert(body(user("Go"), assistant(blocks), **NOTHINK)).conversation.messages[1]
    assert isinstance(reply, AssistantMessage)
    assert reply.content == "\n\n".join(f"b{i}" if i % 2 else "" for i in range(1, n))
    parts = [text(f"s{i}") for i in range(n)]
    system_message = convert(body(system(parts), user("Go"), model=V41)).conversation.messages[0]
    assert isinstance(system_message, SystemMessage)
    assert system_message.content == "\n\n".join(f"s{i}" for i in range(n))


def test_stop_sequence_length_cap_d16() -> None:
    at_cap, over_cap = "s" * 4096, "s" * 4097
    assert convert(body(stop_sequences=[at_cap])).parsing_options.stop_sequences == [at_cap]
    exc = error_of(body(stop_sequences=["a", "b", "c", over_cap]))
    assert exc.message == (
        "Invalid 'stop_sequences[3]': string too long. Expected a string with maximum length 4096, but got a "
        "string with length 4097 instead."
    )
    assert exc.body == {"type": "error", "error": {"type": "invalid_request_error", "message": exc.message}}
    assert ErrorResponse.model_validate(exc.body).error.type == "invalid_request_error"
    # Every check of the reference comes first: it accepts any length, so its errors must stay the same.
    assert message_of(body(stop_sequences=[over_cap, ""])).startswith("Invalid 'stop[1]': empty string.")
    assert message_of(body(stop_sequences=[over_cap], max_tokens=0)).startswith("Invalid max_tokens value")
    assert message_of(body(stop_sequences=[over_cap], temperature=3)).startswith("Invalid temperature value")


@pytest.mark.parametrize(
    ("prompt", "limit", "error"),
    [
        (-1, 100, ValueError),
        (5, -1, ValueError),
        ("5", 100, TypeError),
        (5, 100.0, TypeError),
        (True, 9, TypeError),
    ],
)
def test_resolve_max_tokens_names_a_bad_count(prompt: object, limit: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="prompt_tokens|context_limit"):
        convert(body()).resolve_max_tokens(prompt, limit)  # type: ignore[arg-type]


def test_resolve_max_tokens_in_a_context_of_none() -> None:
    """A context limit of 0 is read as the reference reads it: an empty prompt without a requested budget still
    gets the least budget (1); anything else does not fit."""
    assert convert(body()).resolve_max_tokens(0, 0) == 1
    with pytest.raises(ContextLengthExceeded):
        convert(body()).resolve_max_tokens(5, 0)
    with pytest.raises(ContextLengthExceeded):
        convert(body(max_tokens=1)).resolve_max_tokens(0, 0)


def test_context_length_error_is_in_anthropics_envelope() -> None:
    request = convert(body(max_tokens=100))
    with pytest.raises(ContextLengthExceeded) as info:
        request.resolve_max_tokens(950, 1000)
    exc = info.value
    assert exc.protocol == "messages"
    assert exc.body == {"type": "error", "error": {"type": "invalid_request_error", "message": exc.message}}
    assert dscodec.error_body("messages", exc) == exc.body
    # Without a requested budget, a prompt larger than the context is refused in the same shape.
    with pytest.raises(ContextLengthExceeded) as info:
        convert(body()).resolve_max_tokens(1001, 1000)
    assert info.value.body["type"] == "error"
    # A request built by hand (not converted) is bound by its protocol name too.
    rebuilt = ConversationRequest(
        **{
            f: getattr(request, f)
            for f in ("protocol", "model", "model_version", "conversation", "inference_options")
        }
    )
    with pytest.raises(ContextLengthExceeded) as info:
        rebuilt.resolve_max_tokens(950, 1000)
    assert info.value.body["type"] == "error"


def _decoder_without_strict_mode(data: Any, /) -> bytes:
    # Python 3.10's a2b_base64 has no keyword arguments: any use of strict_mode is a TypeError there.
    return REAL_A2B_BASE64(data)


REAL_A2B_BASE64 = binascii.a2b_base64


@pytest.mark.parametrize(
    ("data", "canonical"),
    [
        ("", ""),
        ("AA==", "AA=="),
        ("AA=", "AA=="),
        ("AA===", "AA=="),
        ("AAA=", "AAA="),
        ("AAAA====", "AAAA"),
        ("AAAA", "AAAA"),
        ("+/+/", "+/+/"),
        (PNG, PNG),
        ("AA", None),
        ("A===", None),
        ("A", None),
        ("AB==", None),
        ("AAB=", None),
        (" AAAA", None),
        ("AA AA", None),
        ("AAAA\n", None),
        ("-_-_", None),
        ("=AAA", None),
        ("AA=A", None),
        ("AAAA=AAA", None),
        ("ÀAAA", None),
        ("AAA٣", None),
    ],
)
def test_base64_decisions_without_strict_mode(
    monkeypatch: pytest.MonkeyPatch, data: str, canonical: str | None
) -> None:
    # The decoder is the one Python 3.10 offers; the decisions are the ones observed on the reference.
    monkeypatch.setattr(binascii, "a2b_base64", _decoder_without_strict_mode)
    assert canonical_base64(data) == canonical
    if canonical is None:
        assert (
            message_of(body(user([b64_image(data)]), model=V41))
            == "messages.0.content[0]: base64 decode error"
        )
    else:
        message = convert(body(user([b64_image(data)]), model=V41)).conversation.messages[0]
        assert isinstance(message, UserMessage)
        assert message.images[0].source.url == f"data:image/png;base64,{canonical}"
