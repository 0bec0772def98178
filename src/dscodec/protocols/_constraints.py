"""Output constraints: what a request asks the model's output to be, beyond free text.

A ``json_object`` format needs the word "json" somewhere in the messages (behavior.md#output-constraints); a ``json_schema`` format
is checked (strict ones normalised, behavior.md#json-schemas) and becomes a JSON constraint; strict tools exclude every format but
text; tools make the output a tool call, or a required one (behavior.md#output-constraints). The constraints are what the serving side
hands to constrained decoding, as compact JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from dscodec._json import dumps_compact
from dscodec.conversation import OutputConstraint, ToolDefinition
from dscodec.errors import ConversionError
from dscodec.protocols._tools import remembered_schema_problem, remembered_strict_schema

__all__ = [
    "check_strict_tools",
    "contains_json_word",
    "json_schema_constraint",
    "tool_call_constraint",
]

_JSON_WORD = re.compile(r"json", re.IGNORECASE | re.ASCII)


def contains_json_word(texts: Iterable[str]) -> bool:
    """Whether any text contains the ASCII word ``json`` in any case (``jsonl`` counts, full-width does not)."""
    return any(_JSON_WORD.search(text) is not None for text in texts)


def validate_json_schema_value(schema: Any) -> None:
    """A non-strict ``json_schema`` response format: any valid JSON Schema (behavior.md#output-constraints).
    Its problem is remembered by the schema's JSON text, as a tool's is: a client sends it with every request."""
    problem = remembered_schema_problem(schema)
    if problem is not None:
        raise ConversionError(f"Invalid json schema: {problem}")


def json_schema_constraint(schema: Any, *, strict: bool | None) -> OutputConstraint:
    """The JSON constraint of a ``json_schema`` response format: the schema checked, or normalised when
    ``strict`` is true (behavior.md#output-constraints, behavior.md#json-schemas), as compact JSON."""
    if strict is True:
        schema = remembered_strict_schema(schema, target="response_format")
    else:
        validate_json_schema_value(schema)
    return OutputConstraint(kind="json", schema=dumps_compact(schema))


def check_strict_tools(tools: Sequence[ToolDefinition], *, text_format: bool) -> None:
    """Strict tools are all-or-nothing, and exclude a response format (``text_format`` false: Chat's
    ``response_format`` of any type, Responses' ``text.format`` but text)."""
    strict = [tool.strict is True for tool in tools]
    if any(strict):
        if not all(strict):
            raise ConversionError("Cannot use strict tool with non-strict tool in the same request")
        if not text_format:
            raise ConversionError("response_format should not be used with tools")


def tool_call_constraint(tools: Sequence[ToolDefinition], *, required: bool) -> OutputConstraint:
    """The ``tool_call`` / ``tool_call_required`` constraint: the tools as a compact JSON array (behavior.md#output-constraints)."""
    items: list[str] = []
    for tool in tools:
        function = dumps_compact(
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "strict": tool.strict,
            }
        )
        deferred = ',"defer_loading":true' if tool.defer_loading else ""
        items.append(f'{{"type":"function","function":{function}{deferred}}}')
    return OutputConstraint(
        kind="tool_call_required" if required else "tool_call", schema=f"[{','.join(items)}]"
    )
