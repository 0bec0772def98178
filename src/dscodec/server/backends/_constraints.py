"""dscodec's output constraint in the terms engines take: a JSON schema, "any JSON object", a regex, or a grammar.

:class:`~dscodec.OutputConstraint` has four kinds (the converters set them, behavior.md#output-constraints):

* ``json`` with a schema: the output is JSON matching it; with ``""``: any JSON object (``json_object``);
* ``regex``: the output matches the pattern;
* ``tool_call_required``: the model must call a tool. The prompt already ends with the DSML block opener, so the
  output is one or more invokes and the block's closing tag. No engine knows DSML, so dscodec writes that
  language as an EBNF grammar (:func:`dsml_tool_grammar`), in the notation both engines' grammar backends read
  (XGrammar's, after llama.cpp's GBNF);
* ``tool_call``: tools are offered but not required. The model may answer in text or call a tool, so nothing is
  constrained.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson

from dscodec.conversation import ConversationRequest
from dscodec.errors import ModelOutputError
from dscodec.prompt.dialects import Dialect, dialect_for

__all__ = ["EngineConstraint", "dsml_tool_grammar", "engine_constraint", "in_thinking_stage"]


@dataclass(frozen=True, slots=True)
class EngineConstraint:
    """A constraint for an engine: ``json_schema`` (compact JSON text), ``json_object`` (value ``""``),
    ``regex`` (the pattern) or ``grammar`` (EBNF text)."""

    kind: Literal["json_schema", "json_object", "regex", "grammar"]
    value: str = ""


def in_thinking_stage(request: ConversationRequest) -> bool:
    """Whether the model starts by reasoning (the prompt ends inside ``<think>``), so a constraint must only apply
    after ``</think>``."""
    return request.parsing_options.thinking_initial_stage in ("reasoning_start", "reasoning_continuation")


def engine_constraint(request: ConversationRequest) -> EngineConstraint | None:
    """The engine constraint for ``request``, or None when its output is free.

    Examples:
        >>> import dscodec
        >>> request = dscodec.convert("chat_completions", {"model": "DeepSeek-V4-Pro",
        ...     "messages": [{"role": "user", "content": "Reply in JSON"}],
        ...     "response_format": {"type": "json_object"}})
        >>> engine_constraint(request)
        EngineConstraint(kind='json_object', value='')
    """
    constraint = request.inference_options.output_constraint
    if constraint is None:
        return None
    if constraint.kind == "json":
        if constraint.schema:
            return EngineConstraint("json_schema", constraint.schema)
        return EngineConstraint("json_object")
    if constraint.kind == "regex":
        return EngineConstraint("regex", constraint.schema)
    if constraint.kind == "tool_call_required":
        return EngineConstraint(
            "grammar", dsml_tool_grammar(constraint.schema, dialect_for(request.model_version))
        )
    return None


def _literal(text: str) -> str:
    """``text`` as an EBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def _tools(schema: str) -> list[tuple[str, list[str] | None]]:
    """(name, parameter names or None when the schema declares none) of each tool in the constraint's JSON array
    of ``{"type": "function", "function": {...}}`` entries."""
    try:
        entries = orjson.loads(schema)
    except orjson.JSONDecodeError:
        raise ModelOutputError(
            "the tool-call constraint is not the JSON array of tools it should be"
        ) from None
    tools: list[tuple[str, list[str] | None]] = []
    for entry in entries if isinstance(entries, list) else []:
        function: Any = entry.get("function") if isinstance(entry, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        names = [str(key) for key in properties] if isinstance(properties, dict) and properties else None
        tools.append((function["name"], names))
    if not tools:
        raise ModelOutputError("the tool-call constraint names no tool")
    return tools


def dsml_tool_grammar(schema: str, dialect: Dialect) -> str:
    """An EBNF grammar of what the model may write after the DSML block opener when a tool call is required.

    One or more invokes of the offered tools, then the block's closing tag, each spelled as the dialect's
    renderer writes them (``render.py``, ``tool_calls``): an invoke names one of the tools, its parameters are
    ones the tool's schema declares (any name when it declares none), each flagged ``string="true"`` or
    ``"false"``; V4.1 writes an invoke without parameters as one empty line. A parameter value is any text that
    does not contain ``</`` followed by ``｜`` (where the closing tag starts); the values are not checked against
    the parameter schemas.

    Examples:
        >>> from dscodec.prompt.dialects import dialect_for
        >>> tools = '[{"type":"function","function":{"name":"f","parameters":{"properties":{"x":{}}}}}]'
        >>> print(dsml_tool_grammar(tools, dialect_for("v4")).splitlines()[0])
        root ::= call+ "</｜DSML｜tool_calls>"
    """
    d = dialect
    lines = [f"root ::= call+ {_literal('</' + d.dsml + d.tool_calls_tag + '>')}"]
    tools = _tools(schema)
    lines.append("call ::= " + " | ".join(f"call{i}" for i in range(len(tools))))
    for i, (name, parameters) in enumerate(tools):
        opening = _literal(f'<{d.dsml}{d.invoke_tag} name="{name}">\n')
        closing = _literal(f"</{d.dsml}{d.invoke_tag}>\n")
        arguments = f'( "\\n" | arg{i}+ )' if d.empty_invoke_line else f"arg{i}*"
        lines.append(f"call{i} ::= {opening} {arguments} {closing}")
        names = " | ".join(_literal(p) for p in parameters) if parameters else "name"
        lines.append(
            f"arg{i} ::= {_literal(f'<{d.dsml}{d.parameter_tag} name=' + chr(34))} ( {names} ) "
            f'"\\" string=\\"" ( "true" | "false" ) "\\">" value '
            f"{_literal(f'</{d.dsml}{d.parameter_tag}>' + chr(10))}"
        )
    lines += [
        'name ::= [^"\\n]+',
        # Any text without "</｜": runs of "<" are followed by a character that is neither "<" nor "/", or by
        # "/" and a character that is neither "<" nor "｜" (or by more "<"), and the value may end in a partial
        # run; the closing tag that follows starts with "</｜".
        "value ::= item* tail?",
        "item ::= [^<] | lts",
        'lts ::= "<"+ ( [^</] | "/" ( [^<｜] | lts ) )',
        'tail ::= "<"+ ( "/" tail? )?',
    ]
    return "\n".join(lines) + "\n"
