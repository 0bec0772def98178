"""Request wire types and reading steps that several protocols' ``models`` modules share.

Chat Completions and Responses declare the same text part and function tool and read an OpenAI ``tool_choice``
the same way up to its object form; Chat Completions and Messages name a tool choice and switch thinking alike.
Each ``models`` module re-exports the types it uses under the names its protocol gives them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dscodec.protocols import _reader as r
from dscodec.protocols._sampling import THINKING_VARIANTS, ThinkingSwitch

__all__ = [
    "FUNCTION_TOOL_FIELDS",
    "FunctionTool",
    "NamedToolChoice",
    "TextPart",
    "read_openai_tool_choice",
    "thinking_struct",
]


@dataclass(slots=True)
class NamedToolChoice:
    """A tool choice that names the one tool to call (Chat Completions, Messages)."""

    name: str


@dataclass(slots=True)
class TextPart:
    """A text part (``text`` in Chat Completions; ``input_text`` or ``output_text`` in Responses, whose
    ``annotations`` and ``logprobs`` are not read)."""

    text: str


@dataclass(slots=True)
class FunctionTool:
    """A function tool: Chat Completions' ``function`` object, or a Responses tool of type ``function``."""

    name: str
    description: str | None = None
    #: The schema as sent; ``None`` when absent or ``null``.
    parameters: Any = None
    strict: bool | None = None


#: The fields of a :class:`FunctionTool`, in the order missing ones are reported.
FUNCTION_TOOL_FIELDS = (
    r.required("name", r.read_str),
    r.optional("description", r.read_str),
    r.optional("parameters"),
    r.optional("strict", r.read_bool),
)


def read_openai_tool_choice(value: Any, path: str, error: str) -> str | Mapping[str, Any]:
    """An OpenAI ``tool_choice`` up to its object form: a mode (``none``, ``auto``, ``required``) as given, or an
    object with a ``type`` for the caller to read; anything else fails with the message ``error``."""
    if isinstance(value, str):
        if value in ("none", "auto", "required"):
            return value
        r.fail(error, path)
    if not isinstance(value, Mapping) or "type" not in value:
        r.fail(error, path)
    return value


def thinking_struct(expected: str) -> r.Struct[ThinkingSwitch]:
    """The ``thinking`` object (Chat Completions, Messages), which serde calls ``expected``: its ``type``."""
    return r.Struct(
        lambda type: type,
        r.required("type", r.unit_enum(THINKING_VARIANTS)),
        # Read for its type only: the budget never matters (behavior.md#thinking-and-effort).
        r.checked("budget_tokens", r.uint(64)),
        expected=expected,
        size=2,
    )
