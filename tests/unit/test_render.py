"""Prompt rendering (behavior.md#prompt-rendering, behavior.md#worked-examples): dscodec.prompt.render and dscodec.prompt.dialects.

Expected prompts are the spec's observed examples. Rules marked "observed" were found by differential testing
against the reference (deepseek-recipe 0.2.0) and are not (yet) written in the spec.

Most assertions compare a *marked* prompt: the rendered text where every special span is shown as ``{NAME}``
(``{BOS}``, ``{U}``, ``{A}``, ``{S}``, ``{LR}``, ``{EOS}``, ``{<think>}``, ``{</think>}``, ``{DSML}``, ``{IMG}``).
One string comparison thus checks the text and the spans; a special spelling typed by a user stays raw text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dscodec.conversation import (
    AssistantMessage,
    Conversation,
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
)
from dscodec.errors import ConversionError
from dscodec.prompt.dialects import APPLY_PATCH_TOOL, V4, V41, dialect_for
from dscodec.prompt.render import RenderedPrompt, Special, render_prompt, render_segments

VERSIONS: tuple[ModelVersion, ...] = ("v4", "v4.1")

BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"
USER = "<｜User｜>"
ASSISTANT = "<｜Assistant｜>"
SYSTEM = "<｜System｜>"
REMINDER = "<｜latest_reminder｜>"
DSML = "｜DSML｜"
IMAGE = "<｜image｜>"

_NAMES = {
    BOS: "BOS",
    EOS: "EOS",
    USER: "U",
    ASSISTANT: "A",
    SYSTEM: "S",
    REMINDER: "LR",
    "<think>": "<think>",
    "</think>": "</think>",
    DSML: "DSML",
    IMAGE: "IMG",
    "<｜ref｜>": "REF",
    "<｜/ref｜>": "/REF",
    "<｜box｜>": "BOX",
    "<｜/box｜>": "/BOX",
}

# -- behavior.md#template-constants / behavior.md#apply-patch-tool literals, copied escape-exact (JSON string literals) ---

EFF_V4_HIGH = json.loads(
    r'"Reasoning Effort: Absolute maximum with no shortcuts permitted.\nYou MUST be very thorough in your thinking and comprehensively decompose the problem to resolve the root cause, rigorously stress-testing your logic against all potential paths, edge cases, and adversarial scenarios.\nExplicitly write out your entire deliberation process, documenting every intermediate step, considered alternative, and rejected hypothesis to ensure absolutely no assumption is left unchecked."'
)
EFF_V4_MAX = json.loads(
    r'"Reasoning Effort: Beyond maximum — exhaustive, relentless, and uncompromising.\nYou MUST reason with the utmost depth and rigor, leaving absolutely nothing to chance: exhaustively decompose the problem into its most fundamental components, trace every causal chain to its root, and resolve the underlying cause rather than any surface symptom.\nDo not stop reasoning until you have independently verified the solution from multiple angles and are certain that no assumption remains unchecked and no error remains undiscovered."'
)
TOOLS_V4_HEAD = json.loads(
    r'''"\n\n## Tools\n\nYou have access to a set of tools to help answer the user's question. You can invoke tools by writing a \"<｜DSML｜tool_calls>\" block like the following:\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"$TOOL_NAME\">\n<｜DSML｜parameter name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE</｜DSML｜parameter>\n...\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"$TOOL_NAME2\">\n...\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>\n\nString parameters should be specified as is and set `string=\"true\"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON format and set `string=\"false\"`.\n\nIf thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside <think>...</think> BEFORE any tool calls or final response.\n\nOtherwise, output directly after </think> with tool calls or final response.\n\n### Available Tool Schemas\n\n"'''
)
TOOLS_V41_HEAD = json.loads(
    r'''"\n\n## Tools\n\nYou have access to a set of tools to help answer the user's question. You can invoke tools by writing a \"<｜DSML｜ calls>\" block like the following:\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"$TOOL_NAME\">\n<｜DSML｜ parameter name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE</｜DSML｜ parameter>\n...\n</｜DSML｜ invoke>\n<｜DSML｜ invoke name=\"$TOOL_NAME2\">\n...\n</｜DSML｜ invoke>\n</｜DSML｜ calls>\n\nString parameters should be specified as is and set `string=\"true\"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON format and set `string=\"false\"`.\n\nIf thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside <think>...</think> BEFORE any tool calls or final response.\n\nOtherwise, output directly after </think> with tool calls or final response.\n\n### Available Tool Schemas\n\n"'''
)
TOOLS_TAIL = json.loads(
    r'"\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n"'
)
JSON_OBJECT_V4 = json.loads(
    r'"\n\nYou are a helpful assistant designed to output JSON.\n## Response Format:\n\nReply with JSON object ONLY."'
)
JSON_OBJECT_V41 = json.loads(
    r'"\n\n## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n{\"type\": \"json_object\"}"'
)
JSON_SCHEMA_HEAD = json.loads(
    r'"\n\n## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n"'
)
APPLY_PATCH_DESCRIPTION = json.loads(
    r'"Use the `apply_patch` tool to edit files.\nYour patch language is a stripped‑down, file‑oriented diff format designed to be easy to parse and safe to apply. You can think of it as a high‑level envelope:\n*** Begin Patch\n[ one or more file sections ]\n*** End Patch\n\nWithin that envelope, you get a sequence of file operations.\nYou MUST include a header to specify the action you are taking.\nEach operation starts with one of three headers:\n\n*** Add File: <path> - create a new file. Every following line is a + line (the initial contents).\n*** Delete File: <path> - remove an existing file. Nothing follows.\n*** Update File: <path> - patch an existing file in place (optionally with a rename).\n\nMay be immediately followed by *** Move to: <new path> if you want to rename the file.\nThen one or more “hunks”, each introduced by @@ (optionally followed by a hunk header).\nWithin a hunk each line starts with:\n\nFor instructions on [context_before] and [context_after]:\n- By default, show 3 lines of code immediately above and 3 lines immediately below each change. If a change is within 3 lines of a previous change, do NOT duplicate the first change’s [context_after] lines in the second change’s [context_before] lines.\n- If 3 lines of context is insufficient to uniquely identify the snippet of code within the file, use the @@ operator to indicate the class or function to which the snippet belongs. For instance, we might have:\n@@ class BaseClass\n[3 lines of pre-context]\n- [old_code]\n+ [new_code]\n[3 lines of post-context]\n\n- If a code block is repeated so many times in a class or function such that even a single `@@` statement and 3 lines of context cannot uniquely identify the snippet of code, you can use multiple `@@` statements to jump to the right context. For instance:\n\n@@ class BaseClass\n@@ \t def method():\n[3 lines of pre-context]\n- [old_code]\n+ [new_code]\n[3 lines of post-context]\n\nThe full grammar definition is below:\nPatch := Begin { FileOp } End\nBegin := \"*** Begin Patch\" NEWLINE\nEnd := \"*** End Patch\" NEWLINE\nFileOp := AddFile | DeleteFile | UpdateFile\nAddFile := \"*** Add File: \" path NEWLINE { \"+\" line NEWLINE }\nDeleteFile := \"*** Delete File: \" path NEWLINE\nUpdateFile := \"*** Update File: \" path NEWLINE [ MoveTo ] { Hunk }\nMoveTo := \"*** Move to: \" newPath NEWLINE\nHunk := \"@@\" [ header ] NEWLINE { HunkLine } [ \"*** End of File\" NEWLINE ]\nHunkLine := (\" \" | \"-\" | \"+\") text NEWLINE\n\nA full patch can combine several operations:\n\n*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n-print(\"Hi\")\n+print(\"Hello, world!\")\n*** Delete File: obsolete.txt\n*** End Patch\n\nIt is important to remember:\n\n- You must include a header with your intended action (Add/Delete/Update)\n- You must prefix new lines with `+` even when creating a new file\n- File references can only be relative, NEVER ABSOLUTE.\n"'
)
APPLY_PATCH_PARAMETERS_LINE = (
    '{"type": "object", "additionalProperties": false, "properties": {"input": {"type": "string", '
    '"description": "The entire contents of the apply_patch command (the *** Begin Patch ... *** End Patch '
    'envelope)."}}, "required": ["input"]}'
)


def v41_effort(score: int) -> str:
    return f"Reasoning Effort: {score} (range 1-100, the higher the value, the more thorough the reasoning)"


# -- helpers -------------------------------------------------------------------------------------------------


def conv(*messages: Message, **fields: Any) -> Conversation:
    fields.setdefault("thinking_mode", False)
    return Conversation(messages=list(messages), **fields)


def U(content: str = "", images: list[ImagePlaceholder] | None = None) -> UserMessage:
    return UserMessage(content=content, images=images or [])


def S(content: str = "", tools: list[ToolDefinition] | None = None) -> SystemMessage:
    return SystemMessage(content=content, tools=tools)


def A(
    content: str = "", reasoning: str | None = None, calls: list[ToolCall] | None = None, prefix: bool = False
) -> AssistantMessage:
    return AssistantMessage(content=content, reasoning=reasoning, tool_calls=calls or [], prefix=prefix)


def T(content: str, call_id: str = "") -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=call_id)


def LR(content: str) -> LatestReminderMessage:
    return LatestReminderMessage(content=content)


def call(name: str = "f", arguments: str = "{}", call_id: str = "c1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def tool(name: str = "f", **fields: Any) -> ToolDefinition:
    return ToolDefinition(name=name, **fields)


def marked(prompt: RenderedPrompt) -> str:
    """The prompt text with every special span written as ``{NAME}``; checks spans are well formed."""
    parts: list[str] = []
    pos = 0
    for start, end in prompt.special_spans:
        assert pos <= start < end, prompt.special_spans
        parts.append(prompt.text[pos:start])
        parts.append("{" + _NAMES[prompt.text[start:end]] + "}")
        pos = end
    parts.append(prompt.text[pos:])
    return "".join(parts)


def render(conversation: Conversation, version: ModelVersion) -> str:
    return marked(render_prompt(conversation, version))


def mark_constant(text: str) -> str:
    """A template constant as :func:`marked` shows it (every spelling in it is a special span)."""
    for spelling in ("｜DSML｜", "</think>", "<think>"):
        text = text.replace(spelling, "\0" + spelling + "\1")
    return (
        text.replace("\0｜DSML｜\1", "{DSML}")
        .replace("\0</think>\1", "{</think>}")
        .replace("\0<think>\1", "{<think>}")
    )


# -- behavior.md#template-constants constants ----------------------------------------------------------------


def test_dialect_for_returns_the_two_dialects() -> None:
    assert dialect_for("v4") is V4
    assert dialect_for("v4.1") is V41
    assert V4.system is None
    assert V41.system == SYSTEM


@pytest.mark.parametrize(
    ("version", "effort", "expected"),
    [
        ("v4", "low", ""),
        ("v4", "high", EFF_V4_HIGH + "\n\n"),
        ("v4", "xhigh", EFF_V4_HIGH + "\n\n"),
        ("v4", "max", EFF_V4_MAX + "\n\n"),
        ("v4", None, EFF_V4_HIGH + "\n\n"),
        ("v4.1", "low", "{S}" + v41_effort(50) + "\n\n"),
        ("v4.1", "high", "{S}" + v41_effort(75) + "\n\n"),
        ("v4.1", "xhigh", "{S}" + v41_effort(75) + "\n\n"),
        ("v4.1", "max", "{S}" + v41_effort(100) + "\n\n"),
        ("v4.1", None, "{S}" + v41_effort(75) + "\n\n"),
    ],
)
def test_effort_preamble(version: ModelVersion, effort: Any, expected: str) -> None:
    c = conv(U("Hi"), thinking_mode=True, reasoning_effort=effort)
    assert render(c, version) == "{BOS}" + expected + "{U}Hi{A}{<think>}"


@pytest.mark.parametrize("version", VERSIONS)
def test_no_effort_preamble_without_thinking(version: ModelVersion) -> None:
    c = conv(U("Hi"), thinking_mode=False, reasoning_effort="max")
    assert render(c, version) == "{BOS}{U}Hi{A}{</think>}"


@pytest.mark.parametrize(("version", "head"), [("v4", TOOLS_V4_HEAD), ("v4.1", TOOLS_V41_HEAD)])
def test_tool_instructions_are_byte_exact(version: ModelVersion, head: str) -> None:
    tools = [tool("get_weather", description="Get weather", parameters={"type": "object"})]
    prompt = render_prompt(conv(U("Hi"), tools=tools), version)
    line = '{"name": "get_weather", "description": "Get weather", "parameters": {"type": "object"}}\n'
    system = SYSTEM if version == "v4.1" else ""
    assert prompt.text == BOS + system + head + line + TOOLS_TAIL + USER + "Hi" + ASSISTANT + "</think>"
    # 9 DSML tokens, 2 <think> and 2 </think> of the instruction text are special spans (behavior.md#template-constants).
    specials = [prompt.text[s:e] for s, e in prompt.special_spans]
    assert specials.count(DSML) == 9
    assert specials.count("<think>") == 2
    assert specials.count("</think>") == 3  # two in the instructions, one in the tail


@pytest.mark.parametrize(
    ("version", "block"),
    [("v4", JSON_OBJECT_V4), ("v4.1", JSON_OBJECT_V41)],
)
def test_json_object_block(version: ModelVersion, block: str) -> None:
    system = "{S}" if version == "v4.1" else ""
    c = conv(U("json"), response_format="json_object")
    assert render(c, version) == "{BOS}" + system + block + "{U}json{A}{</think>}"


@pytest.mark.parametrize("version", VERSIONS)
def test_json_schema_block_uses_prompt_json(version: ModelVersion) -> None:
    schema = {"type": "object", "properties": {"名字": {"type": "string"}}, "required": ["名字"]}
    c = conv(U("x"), response_format="json_schema", response_schema=schema)
    system = "{S}" if version == "v4.1" else ""
    expected_schema = '{"type": "object", "properties": {"名字": {"type": "string"}}, "required": ["名字"]}'
    assert render(c, version) == "{BOS}" + system + JSON_SCHEMA_HEAD + expected_schema + "{U}x{A}{</think>}"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("fmt", ["text", "regex"])
def test_text_and_regex_formats_render_nothing(version: ModelVersion, fmt: Any) -> None:
    c = conv(U("x"), response_format=fmt, response_regex="a+" if fmt == "regex" else None)
    assert render(c, version) == "{BOS}{U}x{A}{</think>}"


def test_apply_patch_tool_matches_spec() -> None:
    assert APPLY_PATCH_TOOL.name == "apply_patch"
    assert APPLY_PATCH_TOOL.description == APPLY_PATCH_DESCRIPTION
    assert "\u2011" in APPLY_PATCH_DESCRIPTION and "\u201chunks\u201d" in APPLY_PATCH_DESCRIPTION
    prompt = render_prompt(conv(U("x"), tools=[APPLY_PATCH_TOOL]), "v4")
    line = (
        '{"name": "apply_patch", "description": '
        + json.dumps(APPLY_PATCH_DESCRIPTION, ensure_ascii=False)
        + ', "parameters": '
        + APPLY_PATCH_PARAMETERS_LINE
        + "}\n"
    )
    assert TOOLS_V4_HEAD + line + TOOLS_TAIL in prompt.text


# -- behavior.md#prompt-layout layout ------------------------------------------------------------------------


def test_v4_system_messages_are_joined_at_the_front() -> None:
    assert render(conv(S("A"), S("B"), U("Hi")), "v4") == "{BOS}A\n\nB{U}Hi{A}{</think>}"
    c = conv(S("A"), S("B"), U("Hi"), thinking_mode=True, reasoning_effort="high")
    assert render(c, "v4") == "{BOS}" + EFF_V4_HIGH + "\n\nA\n\nB{U}Hi{A}{<think>}"


def test_v4_hoists_a_late_system_message() -> None:
    c = conv(U("U1"), A("A1"), S("S"), U("U2"))
    assert render(c, "v4") == "{BOS}S{U}U1{A}{</think>}A1{EOS}{U}U2{A}{</think>}"


def test_v4_empty_system_contributes_nothing() -> None:
    assert render(conv(S("")), "v4") == "{BOS}{A}{</think>}"
    assert render(conv(S("A"), S(""), S("B")), "v4") == "{BOS}A\n\nB{A}{</think>}"


def test_v4_tools_block_directly_after_bos() -> None:
    prompt = render(conv(U("Hi"), tools=[tool()]), "v4")
    assert prompt.startswith("{BOS}\n\n## Tools\n\n")


def test_v4_ignores_system_message_tools() -> None:
    c = conv(S("S", tools=[tool("t1")]), U("Hi"))
    assert render(c, "v4") == "{BOS}S{U}Hi{A}{</think>}"


def test_v41_examples() -> None:
    tools = [tool("t")]
    tools_block = (
        mark_constant(TOOLS_V41_HEAD) + '{"name": "t", "description": "", "parameters": null}\n' + TOOLS_TAIL
    )
    assert (
        render(conv(S("You are X."), U("Hi"), thinking_mode=True, reasoning_effort="low"), "v4.1")
        == "{BOS}{S}" + v41_effort(50) + "\n\nYou are X.{U}Hi{A}{<think>}"
    )
    assert (
        render(conv(S("A"), S("B"), U("Hi"), tools=tools), "v4.1")
        == "{BOS}{S}A" + tools_block + "{S}B{U}Hi{A}{</think>}"
    )
    assert (
        render(conv(U("U1"), A("A1"), S("S"), U("U2"), tools=tools), "v4.1")
        == "{BOS}{S}" + tools_block + "{U}U1{A}{</think>}A1{EOS}{S}S{U}U2{A}{</think>}"
    )
    assert render(conv(U("a"), S("S")), "v4.1") == "{BOS}{U}a{S}S{A}{</think>}"
    assert render(conv(S(""), U("Hi")), "v4.1") == "{BOS}{S}{U}Hi{A}{</think>}"
    assert (
        render(conv(U("Hi"), tools=tools, thinking_mode=True, reasoning_effort="low"), "v4.1")
        == "{BOS}{S}" + v41_effort(50) + "\n\n" + tools_block + "{U}Hi{A}{<think>}"
    )


def test_v41_updated_tool_schemas() -> None:
    c = conv(U("U1"), A("A1"), S("S", tools=[tool("t1")]), U("U2"))
    assert render(c, "v4.1") == (
        "{BOS}{U}U1{A}{</think>}A1{EOS}"
        '{S}S\n\n### Updated Tool Schemas\n\n{"name": "t1", "description": "", "parameters": null}'
        "{U}U2{A}{</think>}"
    )
    # Several tools are joined by "\n" (no trailing newline); deferred tools are included.
    c = conv(S("S", tools=[tool("a"), tool("b", defer_loading=True)]), U("x"))
    assert render(c, "v4.1") == (
        "{BOS}{S}S\n\n### Updated Tool Schemas\n\n"
        '{"name": "a", "description": "", "parameters": null}\n'
        '{"name": "b", "description": "", "parameters": null}'
        "{U}x{A}{</think>}"
    )


def test_v41_first_block_order_content_tools_then_updated_schemas() -> None:
    c = conv(S("S", tools=[tool("u")]), U("x"), tools=[tool("t")])
    tools_block = (
        mark_constant(TOOLS_V41_HEAD) + '{"name": "t", "description": "", "parameters": null}\n' + TOOLS_TAIL
    )
    updated = '\n\n### Updated Tool Schemas\n\n{"name": "u", "description": "", "parameters": null}'
    assert render(c, "v4.1") == "{BOS}{S}S" + tools_block + updated + "{U}x{A}{</think>}"


def test_v41_empty_conversation_opens_no_block_for_effort_alone() -> None:
    # Observed: without messages the effort text alone opens no system block.
    assert render(conv(thinking_mode=True), "v4.1") == "{BOS}{A}{<think>}"
    c = conv(thinking_mode=True, response_format="json_object")
    assert render(c, "v4.1") == "{BOS}{S}" + v41_effort(75) + "\n\n" + JSON_OBJECT_V41 + "{A}{<think>}"
    # V4 renders the effort text either way.
    assert render(conv(thinking_mode=True), "v4") == "{BOS}" + EFF_V4_HIGH + "\n\n{A}{<think>}"


# -- behavior.md#turns turns ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_consecutive_users_merge(version: ModelVersion) -> None:
    assert render(conv(U("a"), U("b")), version) == "{BOS}{U}a\n\nb{A}{</think>}"


@pytest.mark.parametrize("version", VERSIONS)
def test_tool_results_merge_into_a_user_turn(version: ModelVersion) -> None:
    c = conv(
        U("U1"), A(calls=[call(call_id="c1"), call(call_id="c2")]), T("R1", "c1"), T("R2", "c2"), U("U2")
    )
    expected = "{U}<tool_result>R1</tool_result>\n\n<tool_result>R2</tool_result>\n\nU2{A}{</think>}"
    assert render(c, version).endswith("{EOS}" + expected)


def test_tool_result_after_user_opens_a_turn_in_v4_only() -> None:
    # Observed: V4 only continues a turn with a tool result when the previous part is a tool result.
    assert render(conv(U("a"), T("x")), "v4") == "{BOS}{U}a{U}<tool_result>x</tool_result>{A}{</think>}"
    assert render(conv(U("a"), T("x")), "v4.1") == "{BOS}{U}a\n\n<tool_result>x</tool_result>{A}{</think>}"


@pytest.mark.parametrize("version", VERSIONS)
def test_results_are_put_in_call_order(version: ModelVersion) -> None:
    c = conv(A(calls=[call(call_id="c1"), call(call_id="c2")]), T("R2", "c2"), T("R1", "c1"))
    assert render(c, version).endswith(
        "{U}<tool_result>R1</tool_result>\n\n<tool_result>R2</tool_result>{A}{</think>}"
    )


def test_v4_sorts_calls_and_results_by_call_id() -> None:
    # Observed: V4 writes the calls of a turn, and the results in the len(calls) messages after it, ordered by
    # call id (not in the order sent); V4.1 keeps the call order and sorts results by it.
    calls = [call("f", call_id="c3"), call("g", call_id="c1"), call("h", call_id="b")]
    c = conv(A(calls=calls), T("1", "c1"), T("2", "c3"), T("3", "b"))
    v4 = render(c, "v4")
    assert v4.index('invoke name="h"') < v4.index('invoke name="g"') < v4.index('invoke name="f"')
    assert v4.endswith(
        "{U}<tool_result>3</tool_result>\n\n<tool_result>1</tool_result>\n\n<tool_result>2</tool_result>{A}{</think>}"
    )
    v41 = render(c, "v4.1")
    assert v41.index('invoke name="f"') < v41.index('invoke name="g"') < v41.index('invoke name="h"')
    assert v41.endswith(
        "{U}<tool_result>2</tool_result>\n\n<tool_result>1</tool_result>\n\n<tool_result>3</tool_result>{A}{</think>}"
    )


def test_v4_result_window_counts_one_item_per_call() -> None:
    # Observed: V4 sorts only the len(calls) items after the call turn (a user run counts once), and not at
    # all when fewer remain.
    three = [call(call_id="c1"), call(call_id="c2"), call(call_id="c3")]
    c = conv(A(calls=three), T("3", "c3"), T("1", "c1"))
    assert render(c, "v4").endswith(
        "{U}<tool_result>3</tool_result>\n\n<tool_result>1</tool_result>{A}{</think>}"
    )
    c = conv(A(calls=three), T("3", "c3"), U("u"), U("v"), T("1", "c1"))
    assert render(c, "v4").endswith(
        "{U}<tool_result>1</tool_result>\n\n<tool_result>3</tool_result>\n\nu\n\nv{A}{</think>}"
    )


def test_v41_sorts_results_inside_one_user_turn() -> None:
    # Observed: user messages keep their places; results move between the result slots of the turn.
    three = [call(call_id="c1"), call(call_id="c2"), call(call_id="c3")]
    c = conv(A(calls=three), T("3", "c3"), U("u"), T("1", "c1"))
    assert render(c, "v4.1").endswith(
        "{U}<tool_result>1</tool_result>\n\nu\n\n<tool_result>3</tool_result>{A}{</think>}"
    )
    # A latest reminder ends the turn: nothing moves across it.
    c = conv(A(calls=three), T("3", "c3"), LR("l"), T("1", "c1"))
    assert render(c, "v4.1").endswith(
        "{U}<tool_result>3</tool_result>{LR}l{U}<tool_result>1</tool_result>{A}{</think>}"
    )


def test_v4_empty_user_parts_add_nothing() -> None:
    # Observed: V4 joins only the non-empty contents of consecutive user messages; V4.1 joins all.
    assert render(conv(U("a"), U(""), U("b")), "v4") == "{BOS}{U}a\n\nb{A}{</think>}"
    assert render(conv(U("a"), U(""), U("b")), "v4.1") == "{BOS}{U}a\n\n\n\nb{A}{</think>}"


@pytest.mark.parametrize("version", VERSIONS)
def test_latest_reminder_in_place(version: ModelVersion) -> None:
    assert render(conv(U("a"), LR("L"), U("b")), version) == "{BOS}{U}a{LR}L{U}b{A}{</think>}"


def test_latest_reminder_runs() -> None:
    c = conv(U("a"), LR("L1"), LR("L2"), LR("L3"))
    assert render(c, "v4.1") == "{BOS}{U}a{LR}L1{A}{</think>}"
    assert render(c, "v4") == "{BOS}{U}a{LR}L1{LR}L2{LR}L3{A}{</think>}"


@pytest.mark.parametrize("version", VERSIONS)
def test_assistant_at_start_and_after_assistant(version: ModelVersion) -> None:
    assert render(conv(A("a"), U("b")), version) == "{BOS}{A}{</think>}a{EOS}{U}b{A}{</think>}"
    assert render(conv(A("a"), A("b")), version) == "{BOS}{A}{</think>}a{EOS}{A}{</think>}b{EOS}{A}{</think>}"


# THINK_PART of complete turns (behavior.md#turns): (version, tools?, thinking, reasoning) -> rendered part.
_HISTORY_ROWS = (
    [
        (version, False, thinking, rc, "{</think>}")
        for version in VERSIONS
        for thinking in (True, False)
        for rc in (None, "", "R")
    ]
    + [("v4", True, thinking, None, "{</think>}") for thinking in (True, False)]
    + [("v4", True, thinking, "", "{<think>}{</think>}") for thinking in (True, False)]
    + [("v4", True, thinking, "R", "{<think>}R{</think>}") for thinking in (True, False)]
    + [
        ("v4.1", True, True, None, "{<think>}{</think>}"),
        ("v4.1", True, True, "", "{<think>}{</think>}"),
        ("v4.1", True, True, "R", "{<think>}R{</think>}"),
        ("v4.1", True, False, None, "{</think>}"),
        ("v4.1", True, False, "", "{</think>}"),
        ("v4.1", True, False, "R", "{</think>}"),
    ]
)


@pytest.mark.parametrize(("version", "has_tools", "thinking", "reasoning", "part"), _HISTORY_ROWS)
def test_history_think_part(
    version: ModelVersion, has_tools: bool, thinking: bool, reasoning: str | None, part: str
) -> None:
    c = conv(U("Q"), A("A1", reasoning), U("Q2"), thinking_mode=thinking, tools=[tool()] if has_tools else [])
    prompt = render(c, version)
    assert "{U}Q{A}" + part + "A1{EOS}{U}Q2{A}" in prompt


@pytest.mark.parametrize("version", VERSIONS)
def test_tool_choice_none_hides_tools(version: ModelVersion) -> None:
    c = conv(
        U("Q"), A("A1", "R"), tools=[tool()], tool_choice="none", thinking_mode=True, reasoning_effort="low"
    )
    prompt = render(c, version)
    assert "## Tools" not in prompt
    # Without visible tools, reasoning is dropped from history.
    assert "{A}{</think>}A1{EOS}" in prompt


# Prefix table (behavior.md#turns): (version, thinking, reasoning) -> (content "", content "C").
_PREFIX_ROWS = [
    ("v4", True, None, "", "{</think>}C"),
    ("v4", True, "", "{<think>}", "{<think>}{</think>}C"),
    ("v4", True, "R", "{<think>}R", "{<think>}R{</think>}C"),
    ("v4", False, None, "{</think>}", "{</think>}C"),
    ("v4", False, "", "{<think>}{</think>}", "{<think>}{</think>}C"),
    ("v4", False, "R", "{<think>}R{</think>}", "{<think>}R{</think>}C"),
    ("v4.1", True, None, "{<think>}", "{<think>}{</think>}C"),
    ("v4.1", True, "", "{<think>}", "{<think>}{</think>}C"),
    ("v4.1", True, "R", "{<think>}R", "{<think>}R{</think>}C"),
    ("v4.1", False, None, "{</think>}", "{</think>}C"),
    ("v4.1", False, "", "{</think>}", "{</think>}C"),
    ("v4.1", False, "R", "{</think>}", "{</think>}C"),
]


@pytest.mark.parametrize(("version", "thinking", "reasoning", "empty", "with_content"), _PREFIX_ROWS)
@pytest.mark.parametrize("has_tools", [False, True])
def test_prefix_turn(
    version: ModelVersion,
    thinking: bool,
    reasoning: str | None,
    empty: str,
    with_content: str,
    has_tools: bool,
) -> None:
    tools = [tool()] if has_tools else []
    for content, part in (("", empty), ("C", with_content)):
        c = conv(U("Q"), A(content, reasoning, prefix=True), thinking_mode=thinking, tools=tools)
        assert render(c, version).endswith("{U}Q{A}" + part), (content, part)


def test_prefix_with_calls_closes_reasoning_in_v41_only() -> None:
    # Observed: an open V4.1 reasoning is closed before the prefix turn's tool calls; V4 leaves it open.
    c = conv(U("Q"), A("", "R", [call()], prefix=True), thinking_mode=True)
    assert render(c, "v4.1").endswith(
        '{U}Q{A}{<think>}R{</think>}\n\n<{DSML} calls>\n<{DSML} invoke name="f">\n\n</{DSML} invoke>\n</{DSML} calls>'
    )
    assert render(c, "v4").endswith(
        '{U}Q{A}{<think>}R\n\n<{DSML}tool_calls>\n<{DSML}invoke name="f">\n</{DSML}invoke>\n</{DSML}tool_calls>'
    )


def test_v41_leading_prefix_without_tools_skips_reasoning() -> None:
    # Observed: a V4.1 prefix turn that is the first message, with no tools and no response format, renders
    # like thinking off; anything before it (or a tools/format block) restores the table.
    effort = "{BOS}{S}" + v41_effort(75) + "\n\n"
    c = conv(A("C", "R", prefix=True), thinking_mode=True)
    assert render(c, "v4.1") == effort + "{A}{</think>}C"
    c = conv(LR("l"), A("C", "R", prefix=True), thinking_mode=True)
    assert render(c, "v4.1") == effort + "{LR}l{A}{<think>}R{</think>}C"
    c = conv(A("C", "R", prefix=True), thinking_mode=True, response_format="json_object")
    assert render(c, "v4.1").endswith(JSON_OBJECT_V41 + "{A}{<think>}R{</think>}C")
    assert render(conv(A("C", "R", prefix=True), thinking_mode=True), "v4").endswith(
        "{A}{<think>}R{</think>}C"
    )


def test_prefix_not_last() -> None:
    c = conv(U("U1"), A("a1", "R1", prefix=True), U("U2"), thinking_mode=True, reasoning_effort="low")
    assert render(c, "v4") == "{BOS}{U}U1{A}{<think>}R1{</think>}a1{EOS}{U}U2{A}{<think>}"
    assert render(c, "v4.1").endswith("{U}U1{A}{<think>}R1{</think>}a1{U}U2{A}{<think>}")


@pytest.mark.parametrize(("version", "opener"), [("v4", "<{DSML}tool_calls>"), ("v4.1", "<{DSML} calls>")])
def test_required_tool_choice_prefills_the_block(version: ModelVersion, opener: str) -> None:
    tools = [tool()]
    assert render(conv(U("Hi"), tools=tools, tool_choice="required"), version).endswith(
        "{U}Hi{A}{</think>}\n\n" + opener + "\n"
    )
    c = conv(U("Hi"), tools=tools, tool_choice="required", thinking_mode=True)
    assert render(c, version).endswith("{U}Hi{A}{<think>}\n\n" + opener + "\n")
    c = conv(U("Hi"), A("abc", prefix=True), tools=tools, tool_choice="required")
    assert render(c, version).endswith("{U}Hi{A}{</think>}abc\n\n" + opener + "\n")
    # Without tools "required" adds nothing.
    assert render(conv(U("Hi"), tool_choice="required"), version) == "{BOS}{U}Hi{A}{</think>}"


# -- behavior.md#worked-examples examples ----------------------------------------------------------------------


def test_section_3_4_examples() -> None:
    hi = U("Hi")
    assert render_prompt(conv(hi, thinking_mode=True), "v4").text == (
        BOS + EFF_V4_HIGH + "\n\n" + USER + "Hi" + ASSISTANT + "<think>"
    )
    assert render_prompt(conv(hi), "v4").text == BOS + USER + "Hi" + ASSISTANT + "</think>"
    assert render_prompt(conv(hi, thinking_mode=True), "v4.1").text == (
        BOS + SYSTEM + v41_effort(75) + "\n\n" + USER + "Hi" + ASSISTANT + "<think>"
    )
    c = conv(U("Q1"), A("A1", "R1"), U("Q2"), thinking_mode=True, reasoning_effort="low")
    assert render_prompt(c, "v4").text == (
        BOS + USER + "Q1" + ASSISTANT + "</think>A1" + EOS + USER + "Q2" + ASSISTANT + "<think>"
    )
    get = tool("get")
    c = conv(
        U("U1"),
        A("", "R1", [call("get", '{"a":1,"b":"x"}')]),
        T("RES1", "c1"),
        thinking_mode=True,
        reasoning_effort="low",
        tools=[get],
    )
    schema = '{"name": "get", "description": "", "parameters": null}\n'
    assert render_prompt(c, "v4").text == (
        BOS
        + TOOLS_V4_HEAD
        + schema
        + TOOLS_TAIL
        + USER
        + "U1"
        + ASSISTANT
        + '<think>R1</think>\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get">\n'
        + '<｜DSML｜parameter name="a" string="false">1</｜DSML｜parameter>\n'
        + '<｜DSML｜parameter name="b" string="true">x</｜DSML｜parameter>\n'
        + "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
        + EOS
        + USER
        + "<tool_result>RES1</tool_result>"
        + ASSISTANT
        + "<think>"
    )
    assert render_prompt(conv(), "v4").text == BOS + ASSISTANT + "</think>"


# -- behavior.md#dsml-history DSML blocks ----------------------------------------------------------------------


def _params(version: ModelVersion, arguments: str) -> str:
    """The marked DSML block of one call ``f`` with ``arguments``."""
    prompt = render(conv(A(calls=[call("f", arguments)])), version)
    return prompt.split("{A}{</think>}", 1)[1].split("{EOS}", 1)[0]


@pytest.mark.parametrize(
    ("arguments", "params"),
    [
        ('{"city":"Paris","days":2}', [("city", "true", "Paris"), ("days", "false", "2")]),
        ('{"b":1,"a":"x"}', [("b", "false", "1"), ("a", "true", "x")]),
        (
            '{"s":"<tag> & \\"q\\"\\n｜DSML｜"}',
            [("s", "true", '<tag> & "q"\n｜DSML｜')],
        ),
        (
            '{"n":null,"t":true,"l":[1, 2],"o":{"k":"v"},"f":1.5}',
            [
                ("n", "false", "null"),
                ("t", "false", "true"),
                ("l", "false", "[1, 2]"),
                ("o", "false", '{"k": "v"}'),
                ("f", "false", "1.5"),
            ],
        ),
        ('{"a":"", "b":{}}', [("a", "true", ""), ("b", "false", "{}")]),
        ("[1,2]", [("arguments", "true", "[1,2]")]),
        ('"str"', [("arguments", "true", '"str"')]),
        ("not json", [("arguments", "true", "not json")]),
        ('{"a":', [("arguments", "true", '{"a":')]),
        ("", [("arguments", "true", "")]),
        ('{"x":NaN}', [("arguments", "true", '{"x":NaN}')]),
    ],
)
def test_call_arguments(arguments: str, params: list[tuple[str, str, str]]) -> None:
    lines = "".join(
        f'<{{DSML}}parameter name="{name}" string="{flag}">{value}</{{DSML}}parameter>\n'
        for name, flag, value in params
    )
    expected = (
        '\n\n<{DSML}tool_calls>\n<{DSML}invoke name="f">\n' + lines + "</{DSML}invoke>\n</{DSML}tool_calls>"
    )
    assert _params("v4", arguments) == expected


@pytest.mark.parametrize(
    ("number", "v4", "v41"),
    [
        ("1e5", "100000.0", "100000.0"),
        ("-0.0", "-0.0", "-0.0"),
        ("-0", "-0.0", "-0.0"),
        ("12345678901234567890", "12345678901234567890", "12345678901234567890"),
        ("-9223372036854775809", "-9.223372036854776e+18", "-9.223372036854776e+18"),
        ("0.00001", "0.00001", "1e-05"),  # observed: V4.1 writes floats as Python's repr
        ("1e-6", "1e-6", "1e-06"),
        ("1.5e-7", "1.5e-7", "1.5e-07"),
        ("1e16", "1e+16", "1e+16"),
        ("1e15", "1000000000000000.0", "1000000000000000.0"),
        ("0.0001", "0.0001", "0.0001"),
    ],
)
def test_call_argument_numbers(number: str, v4: str, v41: str) -> None:
    assert f'string="false">{v4}</{{DSML}}parameter>' in _params("v4", '{"n":' + number + "}")
    assert f'string="false">{v41}</{{DSML}} parameter>' in _params("v4.1", '{"n":' + number + "}")


def test_zero_argument_invoke() -> None:
    assert (
        _params("v4", "{}")
        == '\n\n<{DSML}tool_calls>\n<{DSML}invoke name="f">\n</{DSML}invoke>\n</{DSML}tool_calls>'
    )
    assert _params("v4.1", "{}") == (
        '\n\n<{DSML} calls>\n<{DSML} invoke name="f">\n\n</{DSML} invoke>\n</{DSML} calls>'
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_content_precedes_the_block(version: ModelVersion) -> None:
    prompt = render(conv(A("pre", calls=[call()])), version)
    assert "{A}{</think>}pre\n\n<{DSML}" in prompt


# -- behavior.md#json-style schema lines ---------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_schema_line_json_style(version: ModelVersion) -> None:
    t = tool(
        "名字", description='say "hi"\n\\', parameters={"b": [1, 2.5, True, None], "a": "é中😀\u2028\x01"}
    )
    prompt = render_prompt(conv(U("x"), tools=[t]), version).text
    line = '{"name": "名字", "description": "say \\"hi\\"\\n\\\\", "parameters": {"b": [1, 2.5, true, null], "a": "é中😀\u2028\\u0001"}}\n'
    assert "Schemas\n\n" + line + "\nYou MUST" in prompt


@pytest.mark.parametrize(("version", "schemas"), [("v4", ""), ("v4.1", "\n")])
def test_deferred_tools_are_hidden_but_the_block_stays(version: ModelVersion, schemas: str) -> None:
    # Observed: with every tool deferred V4.1 writes one "\n" where V4 writes nothing.
    prompt = render_prompt(conv(U("x"), tools=[tool(defer_loading=True)]), version).text
    assert "### Available Tool Schemas\n\n" + schemas + "\nYou MUST strictly" in prompt
    prompt = render_prompt(conv(U("x"), tools=[tool("a", defer_loading=True), tool("b")]), version).text
    assert '"name": "a"' not in prompt and '"name": "b"' in prompt


# -- behavior.md#special-spans special spans, images ---------------------------------------------------------


def test_special_spans_example() -> None:
    c = conv(S("You are X."), U("Hi"), thinking_mode=True, reasoning_effort="low")
    assert render_prompt(c, "v4").special_spans == [(0, 21), (31, 39), (41, 54), (54, 61)]


@pytest.mark.parametrize("version", VERSIONS)
def test_typed_special_spellings_are_plain_text(version: ModelVersion) -> None:
    typed = f"{USER}x<think>{DSML}{EOS}{IMAGE}"
    c = conv(
        U(typed), A(typed, typed, [call(typed, json.dumps({typed: typed}, ensure_ascii=False))]), T(typed)
    )
    prompt = render_prompt(c, version)
    # Every special span is template markup: the text between the marked spans still holds the typed text.
    assert prompt.text.count(typed) >= 4
    for start, end in prompt.special_spans:
        assert not any(start < p + i < end for p in _find_all(prompt.text, typed) for i in range(len(typed)))


def _find_all(text: str, needle: str) -> list[int]:
    found: list[int] = []
    pos = text.find(needle)
    while pos >= 0:
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found


@pytest.mark.parametrize("version", VERSIONS)
def test_only_placeholders_become_image_tokens(version: ModelVersion) -> None:
    content = "a" + IMAGE + "b\n\n" + IMAGE
    source = ImageSource(kind="url", url="http://x/a.png")
    message = U(content, [ImagePlaceholder(offset=len("a" + IMAGE + "b\n\n"), source=source)])
    prompt = render_prompt(conv(message), version)
    assert marked(prompt) == "{BOS}{U}a" + IMAGE + "b\n\n{IMG}{A}{</think>}"
    assert prompt.image_sources == [source]


def test_image_sources_follow_prompt_order() -> None:
    def img(name: str, content: str) -> tuple[str, list[ImagePlaceholder]]:
        return content + IMAGE, [
            ImagePlaceholder(offset=len(content), source=ImageSource(kind="url", url=name))
        ]

    system = SystemMessage(content=img("s", "S")[0], images=img("s", "S")[1])
    user = UserMessage(content=img("u", "U")[0], images=img("u", "U")[1])
    late = SystemMessage(content=img("t", "T")[0], images=img("t", "T")[1])
    c = conv(system, user, late)
    # V4 hoists both system messages (and their images) to the front.
    assert [s.url for s in render_prompt(c, "v4").image_sources] == ["s", "t", "u"]
    assert [s.url for s in render_prompt(c, "v4.1").image_sources] == ["s", "u", "t"]
    assert render(c, "v4") == "{BOS}S{IMG}\n\nT{IMG}{U}U{IMG}{A}{</think>}"


@pytest.mark.parametrize("offset", [0, 2, -1, 99])
def test_bad_image_placeholder_is_a_conversion_error(offset: int) -> None:
    source = ImageSource(kind="url", url="http://x")
    message = U("ab" + IMAGE, [ImagePlaceholder(offset=offset, source=source)])
    if offset == 2:
        assert marked(render_prompt(conv(message), "v4")) == "{BOS}{U}ab{IMG}{A}{</think>}"
        return
    with pytest.raises(ConversionError):
        render_prompt(conv(message), "v4")


def test_overlapping_placeholders_are_rejected() -> None:
    source = ImageSource(kind="url", url="http://x")
    placeholders = [ImagePlaceholder(offset=0, source=source), ImagePlaceholder(offset=0, source=source)]
    with pytest.raises(ConversionError):
        render_prompt(conv(U(IMAGE, placeholders)), "v4.1")


@pytest.mark.parametrize("version", VERSIONS)
def test_segments_join_to_the_prompt(version: ModelVersion) -> None:
    c = conv(
        S("sys"),
        U("u"),
        A("a", "r", [call("f", '{"x": 1}')]),
        T("t", "c1"),
        LR("l"),
        tools=[tool()],
        thinking_mode=True,
        response_format="json_object",
    )
    segments, images = render_segments(c, version)
    prompt = render_prompt(c, version)
    assert "".join(s if isinstance(s, str) else s.text for s in segments) == prompt.text
    assert images == []
    dialect = dialect_for(version)
    spellings = {
        dialect.bos,
        dialect.eos,
        dialect.user,
        dialect.assistant,
        dialect.latest_reminder,
        dialect.think_open,
        dialect.think_close,
        dialect.dsml,
        dialect.image,
        dialect.system,
    }
    specials = [s for s in segments if isinstance(s, Special)]
    assert specials and all(s.text in spellings for s in specials)
    assert len(specials) == len(prompt.special_spans)


# -- behavior.md#worked-examples worked examples ---------------------------------------------------------------


def test_worked_example_chat_v4_low_tools() -> None:
    weather = tool(
        "get_weather",
        description="Get weather",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    )
    c = conv(
        S("Be brief."),
        U("Weather in Paris?"),
        A("", "Need the tool.", [call("get_weather", '{"city":"Paris","days":2}', "call_1")]),
        T("Sunny, 25C", "call_1"),
        thinking_mode=True,
        reasoning_effort="low",
        tools=[weather],
    )
    schema = (
        '{"name": "get_weather", "description": "Get weather", "parameters": {"type": "object", "properties": '
        '{"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}\n'
    )
    assert render_prompt(c, "v4").text == (
        BOS
        + "Be brief."
        + TOOLS_V4_HEAD
        + schema
        + TOOLS_TAIL
        + "<｜User｜>Weather in Paris?<｜Assistant｜><think>Need the tool.</think>\n\n<｜DSML｜tool_calls>\n"
        + '<｜DSML｜invoke name="get_weather">\n'
        + '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
        + '<｜DSML｜parameter name="days" string="false">2</｜DSML｜parameter>\n'
        + "</｜DSML｜invoke>\n"
        + "</｜DSML｜tool_calls><｜end▁of▁sentence｜><｜User｜><tool_result>Sunny, 25C</tool_result>"
        + "<｜Assistant｜><think>"
    )


def test_worked_example_responses_v41_nothink() -> None:
    search = tool("search", parameters={"type": "object", "properties": {"q": {"type": "string"}}})
    c = conv(
        S("You are helpful."),
        U("Find x"),
        A("", None, [call("search", '{"q":"x"}', "c1")]),
        T("found", "c1"),
        tools=[search],
    )
    schema = '{"name": "search", "description": "", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}\n'
    assert render_prompt(c, "v4.1").text == (
        BOS
        + SYSTEM
        + "You are helpful."
        + TOOLS_V41_HEAD
        + schema
        + TOOLS_TAIL
        + "<｜User｜>Find x<｜Assistant｜></think>\n\n<｜DSML｜ calls>\n"
        + '<｜DSML｜ invoke name="search">\n'
        + '<｜DSML｜ parameter name="q" string="true">x</｜DSML｜ parameter>\n'
        + "</｜DSML｜ invoke>\n"
        + "</｜DSML｜ calls><｜end▁of▁sentence｜><｜User｜><tool_result>found</tool_result><｜Assistant｜></think>"
    )


def test_worked_example_messages_v4_max() -> None:
    calc = tool("calc", parameters={"type": "object", "properties": {"expr": {"type": "string"}}})
    c = conv(
        S("Sys A\n\nSys B"),
        U("2+2?"),
        A("", "Use calc.", [call("calc", '{"expr": "2+2"}', "toolu_1")]),
        T("4", "toolu_1"),
        thinking_mode=True,
        reasoning_effort="max",
        tools=[calc],
    )
    schema = '{"name": "calc", "description": "", "parameters": {"type": "object", "properties": {"expr": {"type": "string"}}}}\n'
    assert render_prompt(c, "v4").text == (
        BOS
        + EFF_V4_MAX
        + "\n\nSys A\n\nSys B"
        + TOOLS_V4_HEAD
        + schema
        + TOOLS_TAIL
        + "<｜User｜>2+2?<｜Assistant｜><think>Use calc.</think>\n\n<｜DSML｜tool_calls>\n"
        + '<｜DSML｜invoke name="calc">\n'
        + '<｜DSML｜parameter name="expr" string="true">2+2</｜DSML｜parameter>\n'
        + "</｜DSML｜invoke>\n"
        + "</｜DSML｜tool_calls><｜end▁of▁sentence｜><｜User｜><tool_result>4</tool_result><｜Assistant｜><think>"
    )


def test_worked_example_chat_v41_json_object() -> None:
    c = conv(U("Reply in JSON"), response_format="json_object")
    assert render_prompt(c, "v4.1").text == (
        "<｜begin▁of▁sentence｜><｜System｜>\n\n## Response Format:\n\nYou MUST strictly adhere to the following "
        'schema to reply:\n{"type": "json_object"}<｜User｜>Reply in JSON<｜Assistant｜></think>'
    )


# -- grounding tokens in assistant turns (docs/reference-notes.md, prompt rendering) ------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_assistant_content_keeps_grounding_tokens(version: ModelVersion) -> None:
    text = "<｜ref｜>cat<｜/ref｜><｜box｜>(1,2)<｜/box｜> <｜User｜>"
    prompt = render(conv(U(text), A(text), U("next")), version)
    assert prompt.count("{REF}") == 1 and prompt.count("{/BOX}") == 1
    # The user's copy stays text; so does the assistant's <｜User｜>.
    assert f"{{U}}{text}{{A}}" in prompt
    assert "{A}{</think>}{REF}cat{/REF}{BOX}(1,2){/BOX} <｜User｜>{EOS}" in prompt


@pytest.mark.parametrize("version", VERSIONS)
def test_assistant_reasoning_keeps_grounding_tokens_when_rendered(version: ModelVersion) -> None:
    history = conv(
        U("q"), A("a", reasoning="<｜ref｜>x<｜/ref｜>"), U("n"), tools=[tool()], thinking_mode=True
    )
    assert "{<think>}{REF}x{/REF}{</think>}a" in render(history, version)
    prefix = conv(U("q"), A("<｜box｜>", reasoning="<｜ref｜>", prefix=True), thinking_mode=True)
    assert render(prefix, version).endswith("{A}{<think>}{REF}{</think>}{BOX}")


@pytest.mark.parametrize("version", VERSIONS)
def test_grounding_spellings_stay_text_outside_assistant_turns(version: ModelVersion) -> None:
    text = "<｜ref｜>x<｜/ref｜>"
    rendered = render(
        conv(
            S(text),
            U(text),
            A("", calls=[call(arguments=json.dumps({text: text}))]),
            T(text, "c1"),
            LR(text),
            tools=[tool(description=text)],
        ),
        version,
    )
    assert "{REF}" not in rendered and "{/REF}" not in rendered


@pytest.mark.parametrize("version", VERSIONS)
def test_grounding_spellings_are_found_left_to_right(version: ModelVersion) -> None:
    rendered = render(conv(U("q"), A("<｜ref<｜ref｜>｜><｜/ref｜<｜box｜><｜box｜>")), version)
    assert "{</think>}<｜ref{REF}｜><｜/ref｜{BOX}{BOX}{EOS}" in rendered


def test_missing_grounding_token_names_it() -> None:
    from dscodec.errors import SpecialTokenMissing
    from dscodec.prompt.tokenize import PromptEncoder
    from dscodec.vocab import Vocabulary, bundled_tokenizer_path

    document = json.loads(bundled_tokenizer_path().read_text(encoding="utf-8"))
    document["added_tokens"] = [t for t in document["added_tokens"] if t["content"] != "<｜ref｜>"]
    from tokenizers import Tokenizer

    encoder = PromptEncoder(Vocabulary(Tokenizer.from_str(json.dumps(document)), name="no-ref"))
    assert encoder.encode(conv(U("<｜ref｜>"), A("x")), version="v4")  # user text needs no grounding token
    with pytest.raises(SpecialTokenMissing, match="<｜ref｜>"):
        encoder.encode(conv(U("q"), A("<｜ref｜>")), version="v4")


# -- memo of rendered arguments ----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v4", "v4.1"])
def test_rendered_arguments_are_remembered_and_stay_the_same(version: ModelVersion) -> None:
    from dscodec.prompt import render

    calls = [
        ToolCall(id="a", name="f", arguments='{"x": 1.5e-7, "s": "t", "n": -0, "l": [true, null]}'),
        ToolCall(id="b", name="g", arguments="not json"),
        ToolCall(id="c", name="h", arguments="[1]"),
    ]
    conv = Conversation(
        messages=[
            UserMessage(content="q"),
            A(calls=calls),
            ToolMessage(content="r", tool_call_id="a"),
        ]
    )
    render._ARGUMENTS.clear()
    fresh = render_prompt(conv, version)
    assert len(render._ARGUMENTS.found) == 3
    assert render_prompt(conv, version) == fresh
    # a memo holding wrong parameters would show: the rendered prompt comes from it
    key = next(iter(render._ARGUMENTS.found))
    render._ARGUMENTS.found[key] = (("changed", "v", True),)
    assert render_prompt(conv, version) != fresh
    render._ARGUMENTS.clear()
    assert render_prompt(conv, version) == fresh


def test_argument_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from dscodec._memo import Memo
    from dscodec.prompt import render

    memo: Memo[tuple[str, bool], tuple[tuple[str, str, bool], ...]] = Memo(total=100, longest=100)
    monkeypatch.setattr(render, "_ARGUMENTS", memo)
    assert render._arguments('{"a": 1}', False) == (("a", "1", False),)
    for k in range(50):
        render._arguments(f'{{"k": {k}}}', False)
    assert memo.units <= 100
    render._arguments("x" * 101, False)
    assert ("x" * 101, False) not in memo.found


def test_schema_lines_are_remembered_by_what_they_are_written_from() -> None:
    from dscodec.prompt import render

    tool = ToolDefinition(name="f", description="d", parameters={"type": "object", "x": 1.0, "y": -0.0})
    conv = Conversation(messages=[UserMessage(content="q")], tools=[tool])
    render._SCHEMA_LINES.clear()
    fresh = render_prompt(conv, "v4")
    assert len(render._SCHEMA_LINES.found) == 1
    assert render_prompt(conv, "v4") == fresh
    key = next(iter(render._SCHEMA_LINES.found))
    render._SCHEMA_LINES.found[key] = '{"changed": true}'
    assert '{"changed": true}' in render_prompt(conv, "v4").text  # the line comes from the memo
    # Values JSON tells apart are told apart: 1 is not 1.0, True is not 1.
    for other in ({"type": "object", "x": 1, "y": -0.0}, {"type": "object", "x": True, "y": -0.0}):
        changed = Conversation(
            messages=[UserMessage(content="q")],
            tools=[ToolDefinition(name="f", description="d", parameters=other)],
        )
        assert '{"changed": true}' not in render_prompt(changed, "v4").text
    render._SCHEMA_LINES.clear()
    assert render_prompt(conv, "v4") == fresh
