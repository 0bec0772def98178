"""The DeepSeek prompt templates as data: one frozen :class:`Dialect` per template version.

V4 and V4.1 share one renderer (:mod:`dscodec.prompt.render`); everything that differs between them is a
spelling, a constant or a flag here (behavior.md#prompt-rendering). The constants are byte-exact copies of the spec's literals
(behavior.md#template-constants, behavior.md#apply-patch-tool): they contain U+FF5C ``｜``, U+2581 ``▁``, U+2014, U+2011 and curly quotes, so the non-ASCII
punctuation of the long texts is written as escapes to keep it visible in review.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from dscodec.conversation import Effort, ModelVersion, ToolDefinition
from dscodec.errors import shown

__all__ = [
    "APPLY_PATCH_TOOL",
    "V4",
    "V41",
    "Dialect",
    "HistoryThink",
    "PrefixThink",
    "ReasoningKind",
    "dialect_for",
]

ReasoningKind = Literal["none", "empty", "text"]
"""How an assistant turn's reasoning looks: ``None``, ``""`` or some text (the THINK_PART tables key on it)."""


class HistoryThink(enum.Enum):
    """How a complete (non-prefix) assistant turn renders its reasoning (behavior.md#turns, THINK_PART table)."""

    #: ``</think>`` only: the reasoning is dropped.
    DROPPED = "dropped"
    #: ``<think>`` + reasoning + ``</think>`` (``None`` renders as empty reasoning).
    KEPT = "kept"


class PrefixThink(enum.Enum):
    """How a prefix (continued) assistant turn renders its reasoning and content (behavior.md#turns, prefix table)."""

    #: ``<think>`` + reasoning, then ``</think>`` + content only when the turn goes on (content; V4.1 also
    #: tool calls), so the model continues the reasoning otherwise.
    OPEN = "open"
    #: ``<think>`` + reasoning + ``</think>`` + content.
    CLOSED = "closed"
    #: ``</think>`` + content (the reasoning is not shown).
    SKIPPED = "skipped"
    #: ``</think>`` + content when the content is not empty, nothing at all otherwise.
    BARE = "bare"


@dataclass(frozen=True, kw_only=True, slots=True, eq=False)
class Dialect:
    """Everything that distinguishes one DeepSeek prompt template from another.

    Attributes:
        version: the template version this dialect renders.
        bos: beginning-of-sentence token spelling.
        eos: end-of-sentence token spelling (closes every complete assistant turn).
        user: opens a user turn (user messages and tool results).
        assistant: opens an assistant turn.
        system: opens a system block; ``None`` when the template has no system token (V4).
        latest_reminder: opens a latest-reminder message.
        think_open: ``<think>``.
        think_close: ``</think>``.
        dsml: the DSML token that starts every tool-call markup tag.
        image: the image placeholder token.
        assistant_specials: spellings that stay special tokens when they occur in an assistant turn's content or
            reasoning (the grounding tokens ``<｜ref｜>`` … ``<｜/polygon｜>``, observed against the reference);
            everywhere else client text is plain text.
        effort_preambles: the reasoning-effort text per resolved effort, ``""`` for none (behavior.md#template-constants).
        tools_instruction_head: the tool instructions up to the schema lines (behavior.md#template-constants ``{TOOLS_V4}``).
        tools_instruction_tail: the tool instructions after the schema lines.
        json_object_block: the response-format text for ``json_object``.
        json_schema_block_head: the response-format text put before a ``json_schema`` schema.
        updated_tool_schemas_head: put before the schema lines of ``SystemMessage.tools`` (behavior.md#prompt-layout).
        tool_result_open: opens a tool result inside a user turn.
        tool_result_close: closes a tool result.
        block_separator: joins system texts, merged user-turn parts and the tool-call block.
        tool_calls_tag: the tag name of a tool-call block (after the DSML token).
        invoke_tag: the tag name of one call.
        parameter_tag: the tag name of one argument.
        hoists_system: system messages move to the front (V4) instead of rendering in place (V4.1).
        tool_result_joins_user: a tool result continues a user turn that precedes it (V4.1); in V4 only a
            tool result continues a tool result, so a user message followed by a tool result opens a new turn.
        merges_user_runs: consecutive user messages form one part of a user turn before tool results are put
            in order, and empty ones add nothing to it (V4); V4.1 keeps each user message as it is.
        sorts_results_by_id_windows: how tool results are put in order (behavior.md#turns, observed). ``True`` (V4): for each
            assistant turn with ``n`` tool calls, the ``n`` items after it are stably sorted, tool results
            first by tool-call id. ``False`` (V4.1): inside one user turn the tool results are stably sorted by
            the position of their id among the latest tool calls, user messages keeping their places.
        sorts_tool_calls_by_id: the calls of a turn are written ordered by call id (V4) instead of as sent.
        dedupes_latest_reminders: only the first of consecutive latest reminders renders (V4.1).
        empty_invoke_line: an invoke with no arguments holds an empty line (V4.1, behavior.md#dsml-history).
        eos_after_inner_prefix: a prefix assistant turn that is not the last message still ends with EOS (V4).
        prefix_calls_close_think: a prefix turn with tool calls closes its open reasoning before the calls
            (V4.1); V4 closes it only for content.
        leading_prefix_skips_think: a prefix turn that is the first message of a conversation without tools
            and without a response-format block renders as in non-thinking mode (V4.1, observed).
        newline_for_no_schemas: with every tool deferred the schema list is one ``\\n`` instead of empty
            (V4.1, observed).
        python_floats: prompt JSON writes floats as Python's ``repr`` (``1e-05``, V4.1) instead of the V4 rule
            of behavior.md#json-style (``0.00001``, ``1e-6``); observed against the reference.
        history_think: THINK_PART rows: (conversation has tools, thinking mode, reasoning kind) → form.
        prefix_think: prefix rows: (thinking mode, reasoning kind) → form.
    """

    version: ModelVersion
    bos: str
    eos: str
    user: str
    assistant: str
    system: str | None
    latest_reminder: str
    think_open: str
    think_close: str
    dsml: str
    image: str
    assistant_specials: tuple[str, ...]
    effort_preambles: Mapping[Effort, str]
    tools_instruction_head: str
    tools_instruction_tail: str
    json_object_block: str
    json_schema_block_head: str
    updated_tool_schemas_head: str
    tool_result_open: str
    tool_result_close: str
    block_separator: str
    tool_calls_tag: str
    invoke_tag: str
    parameter_tag: str
    hoists_system: bool
    tool_result_joins_user: bool
    merges_user_runs: bool
    sorts_results_by_id_windows: bool
    sorts_tool_calls_by_id: bool
    dedupes_latest_reminders: bool
    empty_invoke_line: bool
    eos_after_inner_prefix: bool
    prefix_calls_close_think: bool
    leading_prefix_skips_think: bool
    newline_for_no_schemas: bool
    python_floats: bool
    history_think: Mapping[tuple[bool, bool, ReasoningKind], HistoryThink]
    prefix_think: Mapping[tuple[bool, ReasoningKind], PrefixThink]


# -- special-token spellings (behavior.md#special-tokens, default SpecialTokens) -----------------------------

_BOS = "<｜begin▁of▁sentence｜>"
_EOS = "<｜end▁of▁sentence｜>"
_USER = "<｜User｜>"
_ASSISTANT = "<｜Assistant｜>"
_SYSTEM = "<｜System｜>"
_LATEST_REMINDER = "<｜latest_reminder｜>"
_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_DSML = "｜DSML｜"
_IMAGE = "<｜image｜>"
#: The grounding tokens (behavior.md#special-tokens: Ref/RefEnd, Box/BoxEnd, Point/PointEnd, Polygon/PolygonEnd). An assistant turn
#: that quotes them back keeps them as single tokens, the way the model wrote them (docs/reference-notes.md).
_GROUNDING = (
    "<｜ref｜>",
    "<｜/ref｜>",
    "<｜box｜>",
    "<｜/box｜>",
    "<｜point｜>",
    "<｜/point｜>",
    "<｜polygon｜>",
    "<｜/polygon｜>",
)

# -- effort preambles (behavior.md#template-constants) -------------------------------------------------------

_EFF_V4_HIGH = (
    "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n"
    "You MUST be very thorough in your thinking and comprehensively decompose the problem to resolve the root "
    "cause, rigorously stress-testing your logic against all potential paths, edge cases, and adversarial "
    "scenarios.\n"
    "Explicitly write out your entire deliberation process, documenting every intermediate step, considered "
    "alternative, and rejected hypothesis to ensure absolutely no assumption is left unchecked."
)
_EFF_V4_MAX = (
    "Reasoning Effort: Beyond maximum \u2014 exhaustive, relentless, and uncompromising.\n"
    "You MUST reason with the utmost depth and rigor, leaving absolutely nothing to chance: exhaustively "
    "decompose the problem into its most fundamental components, trace every causal chain to its root, and "
    "resolve the underlying cause rather than any surface symptom.\n"
    "Do not stop reasoning until you have independently verified the solution from multiple angles and are "
    "certain that no assumption remains unchecked and no error remains undiscovered."
)


def _effort_v41(score: int) -> str:
    return f"Reasoning Effort: {score} (range 1-100, the higher the value, the more thorough the reasoning)"


# -- tool instructions (behavior.md#template-constants {TOOLS_V4} / {TOOLS_V41}) ----------------------------
# Only the tag spellings differ between the versions: V4 writes <｜DSML｜tool_calls>, <｜DSML｜invoke, ...;
# V4.1 writes <｜DSML｜ calls>, <｜DSML｜ invoke, ... (a space after the DSML token, "calls").


def _tools_instruction_head(calls: str, invoke: str, parameter: str) -> str:
    d = _DSML
    return (
        "\n\n## Tools\n\n"
        "You have access to a set of tools to help answer the user's question. You can invoke tools by writing "
        f'a "<{d}{calls}>" block like the following:\n\n'
        f"<{d}{calls}>\n"
        f'<{d}{invoke} name="$TOOL_NAME">\n'
        f'<{d}{parameter} name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</{d}{parameter}>\n'
        "...\n"
        f"</{d}{invoke}>\n"
        f'<{d}{invoke} name="$TOOL_NAME2">\n'
        "...\n"
        f"</{d}{invoke}>\n"
        f"</{d}{calls}>\n\n"
        'String parameters should be specified as is and set `string="true"`. For all other types (numbers, '
        'booleans, arrays, objects), pass the value in JSON format and set `string="false"`.\n\n'
        "If thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside "
        "<think>...</think> BEFORE any tool calls or final response.\n\n"
        "Otherwise, output directly after </think> with tool calls or final response.\n\n"
        "### Available Tool Schemas\n\n"
    )


_TOOLS_INSTRUCTION_TAIL = (
    "\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n"
)

# -- response-format blocks (behavior.md#template-constants) -------------------------------------------------

_JSON_SCHEMA_HEAD = "\n\n## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n"
_JSON_OBJECT_V4 = "\n\nYou are a helpful assistant designed to output JSON.\n## Response Format:\n\nReply with JSON object ONLY."
_JSON_OBJECT_V41 = _JSON_SCHEMA_HEAD + '{"type": "json_object"}'

_UPDATED_TOOL_SCHEMAS_HEAD = "\n\n### Updated Tool Schemas\n\n"

# -- THINK_PART tables (behavior.md#turns) -------------------------------------------------------------------

_KINDS: tuple[ReasoningKind, ...] = ("none", "empty", "text")


def _history_rows(*, v41: bool) -> Mapping[tuple[bool, bool, ReasoningKind], HistoryThink]:
    rows: dict[tuple[bool, bool, ReasoningKind], HistoryThink] = {}
    for has_tools in (False, True):
        for thinking in (False, True):
            for kind in _KINDS:
                if not has_tools:
                    # Without tools every historical reasoning is dropped, in both versions.
                    form = HistoryThink.DROPPED
                elif v41:
                    # V4.1 keeps reasoning (None as "") only in thinking mode.
                    form = HistoryThink.KEPT if thinking else HistoryThink.DROPPED
                else:
                    # V4 keeps whatever reasoning was sent, in both modes; None stays a bare </think>.
                    form = HistoryThink.DROPPED if kind == "none" else HistoryThink.KEPT
                rows[(has_tools, thinking, kind)] = form
    return MappingProxyType(rows)


def _prefix_rows(*, v41: bool) -> Mapping[tuple[bool, ReasoningKind], PrefixThink]:
    """How a trailing prefix assistant writes its reasoning, by (thinking, reasoning kind)."""
    rows: dict[tuple[bool, ReasoningKind], PrefixThink] = {}
    for kind in _KINDS:
        if v41:
            # V4.1 opens a think in thinking mode whatever was sent, and writes none otherwise.
            rows[(True, kind)], rows[(False, kind)] = PrefixThink.OPEN, PrefixThink.SKIPPED
        elif kind == "none":
            # V4 without reasoning: a bare marker in thinking mode, nothing otherwise.
            rows[(True, kind)], rows[(False, kind)] = PrefixThink.BARE, PrefixThink.SKIPPED
        else:
            # V4 with reasoning (even empty): an open think in thinking mode, a closed one otherwise.
            rows[(True, kind)], rows[(False, kind)] = PrefixThink.OPEN, PrefixThink.CLOSED
    return MappingProxyType(rows)


#: The layout rules of the renderer that V4 follows and V4.1 does not, and the other way round: every rule
#: differs between the versions. Written as space-separated names so that each list reads as one sentence.
_V4_ONLY_RULES = (  # noqa: SIM905
    "hoists_system merges_user_runs sorts_results_by_id_windows sorts_tool_calls_by_id eos_after_inner_prefix"
).split()
_V41_ONLY_RULES = (  # noqa: SIM905
    "tool_result_joins_user dedupes_latest_reminders empty_invoke_line prefix_calls_close_think "
    "leading_prefix_skips_think newline_for_no_schemas python_floats"
).split()


def _layout_rules(followed: list[str]) -> dict[str, Any]:
    """Every layout rule as a :class:`Dialect` keyword argument: True for those in ``followed``."""
    return {name: name in followed for name in _V4_ONLY_RULES + _V41_ONLY_RULES}


V4 = Dialect(
    version="v4",
    bos=_BOS,
    eos=_EOS,
    user=_USER,
    assistant=_ASSISTANT,
    system=None,
    latest_reminder=_LATEST_REMINDER,
    think_open=_THINK_OPEN,
    think_close=_THINK_CLOSE,
    dsml=_DSML,
    image=_IMAGE,
    assistant_specials=_GROUNDING,
    # V4 writes nothing at all for low effort (behavior.md#template-constants); xhigh shares the high text.
    effort_preambles=MappingProxyType(
        {"low": "", "high": _EFF_V4_HIGH, "xhigh": _EFF_V4_HIGH, "max": _EFF_V4_MAX}
    ),
    tools_instruction_head=_tools_instruction_head("tool_calls", "invoke", "parameter"),
    tools_instruction_tail=_TOOLS_INSTRUCTION_TAIL,
    json_object_block=_JSON_OBJECT_V4,
    json_schema_block_head=_JSON_SCHEMA_HEAD,
    updated_tool_schemas_head=_UPDATED_TOOL_SCHEMAS_HEAD,
    tool_result_open="<tool_result>",
    tool_result_close="</tool_result>",
    block_separator="\n\n",
    tool_calls_tag="tool_calls",
    invoke_tag="invoke",
    parameter_tag="parameter",
    **_layout_rules(_V4_ONLY_RULES),
    history_think=_history_rows(v41=False),
    prefix_think=_prefix_rows(v41=False),
)

#: V4.1 is V4 with these differences (every field not named here has V4's value).
V41 = dataclasses.replace(
    V4,
    version="v4.1",
    system=_SYSTEM,
    effort_preambles=MappingProxyType(
        {"low": _effort_v41(50), "high": _effort_v41(75), "xhigh": _effort_v41(75), "max": _effort_v41(100)}
    ),
    tools_instruction_head=_tools_instruction_head(" calls", " invoke", " parameter"),
    json_object_block=_JSON_OBJECT_V41,
    tool_calls_tag=" calls",
    invoke_tag=" invoke",
    parameter_tag=" parameter",
    **_layout_rules(_V41_ONLY_RULES),
    history_think=_history_rows(v41=True),
    prefix_think=_prefix_rows(v41=True),
)

_BY_VERSION: Mapping[ModelVersion, Dialect] = MappingProxyType({"v4": V4, "v4.1": V41})


def dialect_for(version: ModelVersion) -> Dialect:
    """The dialect of a template version.

    Examples:
        >>> dialect_for("v4.1").system
        '<｜System｜>'
        >>> dialect_for("v4").system is None
        True

    Raises:
        ValueError: ``version`` is neither ``"v4"`` nor ``"v4.1"``.
    """
    try:
        return _BY_VERSION[version]
    except (KeyError, TypeError):  # TypeError: an unhashable value
        raise ValueError(f"unknown model version {shown(version)}; expected 'v4' or 'v4.1'") from None


# -- apply_patch (behavior.md#apply-patch-tool) --------------------------------------------------------------
# The built-in function tool that replaces a Responses ``custom`` tool named ``apply_patch``.

_APPLY_PATCH_DESCRIPTION = (
    "Use the `apply_patch` tool to edit files.\n"
    "Your patch language is a stripped\u2011down, file\u2011oriented diff format designed to be easy to parse "
    "and safe to apply. You can think of it as a high\u2011level envelope:\n"
    "*** Begin Patch\n"
    "[ one or more file sections ]\n"
    "*** End Patch\n"
    "\n"
    "Within that envelope, you get a sequence of file operations.\n"
    "You MUST include a header to specify the action you are taking.\n"
    "Each operation starts with one of three headers:\n"
    "\n"
    "*** Add File: <path> - create a new file. Every following line is a + line (the initial contents).\n"
    "*** Delete File: <path> - remove an existing file. Nothing follows.\n"
    "*** Update File: <path> - patch an existing file in place (optionally with a rename).\n"
    "\n"
    "May be immediately followed by *** Move to: <new path> if you want to rename the file.\n"
    "Then one or more \u201chunks\u201d, each introduced by @@ (optionally followed by a hunk header).\n"
    "Within a hunk each line starts with:\n"
    "\n"
    "For instructions on [context_before] and [context_after]:\n"
    "- By default, show 3 lines of code immediately above and 3 lines immediately below each change. If a "
    "change is within 3 lines of a previous change, do NOT duplicate the first change\u2019s [context_after] "
    "lines in the second change\u2019s [context_before] lines.\n"
    "- If 3 lines of context is insufficient to uniquely identify the snippet of code within the file, use the "
    "@@ operator to indicate the class or function to which the snippet belongs. For instance, we might have:\n"
    "@@ class BaseClass\n"
    "[3 lines of pre-context]\n"
    "- [old_code]\n"
    "+ [new_code]\n"
    "[3 lines of post-context]\n"
    "\n"
    "- If a code block is repeated so many times in a class or function such that even a single `@@` "
    "statement and 3 lines of context cannot uniquely identify the snippet of code, you can use multiple `@@` "
    "statements to jump to the right context. For instance:\n"
    "\n"
    "@@ class BaseClass\n"
    "@@ \t def method():\n"
    "[3 lines of pre-context]\n"
    "- [old_code]\n"
    "+ [new_code]\n"
    "[3 lines of post-context]\n"
    "\n"
    "The full grammar definition is below:\n"
    "Patch := Begin { FileOp } End\n"
    'Begin := "*** Begin Patch" NEWLINE\n'
    'End := "*** End Patch" NEWLINE\n'
    "FileOp := AddFile | DeleteFile | UpdateFile\n"
    'AddFile := "*** Add File: " path NEWLINE { "+" line NEWLINE }\n'
    'DeleteFile := "*** Delete File: " path NEWLINE\n'
    'UpdateFile := "*** Update File: " path NEWLINE [ MoveTo ] { Hunk }\n'
    'MoveTo := "*** Move to: " newPath NEWLINE\n'
    'Hunk := "@@" [ header ] NEWLINE { HunkLine } [ "*** End of File" NEWLINE ]\n'
    'HunkLine := (" " | "-" | "+") text NEWLINE\n'
    "\n"
    "A full patch can combine several operations:\n"
    "\n"
    "*** Begin Patch\n"
    "*** Add File: hello.txt\n"
    "+Hello world\n"
    "*** Update File: src/app.py\n"
    "*** Move to: src/main.py\n"
    "@@ def greet():\n"
    '-print("Hi")\n'
    '+print("Hello, world!")\n'
    "*** Delete File: obsolete.txt\n"
    "*** End Patch\n"
    "\n"
    "It is important to remember:\n"
    "\n"
    "- You must include a header with your intended action (Add/Delete/Update)\n"
    "- You must prefix new lines with `+` even when creating a new file\n"
    "- File references can only be relative, NEVER ABSOLUTE.\n"
)

APPLY_PATCH_TOOL = ToolDefinition(
    name="apply_patch",
    description=_APPLY_PATCH_DESCRIPTION,
    parameters={
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "input": {
                "type": "string",
                "description": (
                    "The entire contents of the apply_patch command "
                    "(the *** Begin Patch ... *** End Patch envelope)."
                ),
            }
        },
        "required": ["input"],
    },
)
"""The ``apply_patch`` function tool of behavior.md#apply-patch-tool (protocol code copies it; treat it as read-only)."""
