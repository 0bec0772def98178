"""Tools in a request: their names, their definitions and the tool choice.

Every protocol offers function tools under its own field names; the rules for them are shared. A name is
non-empty, short and of a fixed alphabet, and unique (behavior.md#tools-and-tool-choice); a strict tool's parameters are normalised
(behavior.md#json-schemas), a non-strict tool's must be a JSON Schema of type ``object``; the tool choice may hide the tools,
narrow them to one, or force a call, which thinking mode refuses. Some tools look different per template: the
``apply_patch`` tool, and the members of a namespace, whose prompt names are made up here and kept unique.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import orjson

from dscodec._memo import MISSING, Memo
from dscodec.conversation import ModelVersion, ToolDefinition
from dscodec.errors import ConversionError
from dscodec.prompt.dialects import APPLY_PATCH_TOOL
from dscodec.protocols._body import empty_string_error, json_text, string_too_long_error

if TYPE_CHECKING:
    from dscodec.protocols._strict_schema import StrictTarget

__all__ = [
    "APPLY_PATCH_TOOLS",
    "THINKING_TOOL_CHOICE_ERROR",
    "NameAllocator",
    "first_free",
    "function_definition",
    "namespaced_description",
    "namespaced_name",
    "namespaced_names",
    "remembered_schema_problem",
    "remembered_strict_schema",
    "resolve_tool_choice",
    "unique_definitions",
    "unknown_tool_choice",
    "validate_function_parameters",
    "validate_tool_names",
]

# -- names (behavior.md#tools-and-tool-choice) ----------------------------------------------------------------

_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
_TOOL_NAME_MAX = 128


def validate_tool_names(names: Sequence[str], *, path: str = "tools[{i}].function.name") -> None:
    """Every name non-empty, at most 128 bytes (UTF-8) and ``^[a-zA-Z0-9_-]+$`` (uniqueness is checked later).

    ``path`` is the field as the messages quote it, with ``{i}`` for the tool index.
    """
    for index, name in enumerate(names):
        # (The field's name is made only for a message: names are checked in every request.)
        if name == "":
            raise empty_string_error(path.format(i=index))
        # The limit counts UTF-8 bytes, not characters (as the reference does): "é" * 65 is 130 long.
        size = len(name) if name.isascii() else len(name.encode("utf-8", "surrogatepass"))
        if size > _TOOL_NAME_MAX:
            raise string_too_long_error(path.format(i=index), limit=_TOOL_NAME_MAX, length=size)
        if _TOOL_NAME.fullmatch(name) is None:
            raise ConversionError(
                f"Invalid '{path.format(i=index)}': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            )


def first_free(base: str, taken: Container[str], start: int = 0) -> tuple[str, int]:
    """The first of ``base``, ``base_1``, ``base_2``… not in ``taken``, and its suffix number (0 for ``base``).

    The search starts at suffix ``start``: the caller knows the names before it are taken.

    Examples:
        >>> first_free("x", {"x", "x_1"})
        ('x_2', 2)
    """
    suffix = start
    name = base if suffix == 0 else f"{base}_{suffix}"
    while name in taken:
        suffix += 1
        name = f"{base}_{suffix}"
    return name, suffix


class NameAllocator:
    """Hands out unique names: ``base``, or the first of ``base_1``, ``base_2``… not taken yet.

    Names are only ever added, so a suffix found taken stays taken: each base remembers where its last search
    ended, and the next search for it starts there. Handing out ``n`` names with one base costs ``O(n)`` lookups
    in total, not ``O(n²)``.
    """

    def __init__(self, taken: Iterable[str]) -> None:
        self.taken = set(taken)
        self.next_suffix: dict[str, int] = {}

    def take(self, base: str) -> str:
        """The first free name for ``base``, now taken."""
        name, self.next_suffix[base] = first_free(base, self.taken, self.next_suffix.get(base, 0))
        self.taken.add(name)
        return name


# -- definitions (behavior.md#tools-and-tool-choice, behavior.md#json-schemas) --------------------------------


#: The problems of schemas checked before (None: none), by their compact JSON text: a client sends the same tools
#: (and the same ``json_schema`` response format) with every request.
_SCHEMAS: Memo[bytes, str | None] = Memo(entries=1024, longest=1 << 20)


def remembered_schema_problem(schema: Any, memo: Memo[bytes, str | None] = _SCHEMAS) -> str | None:
    """:func:`~dscodec.protocols._schema.schema_problem`, remembered in ``memo`` by the schema's JSON text (the
    problem depends on nothing else: a tool's parameters and a response format's schema share the memo)."""
    # The schema reader (its regular expression dialects, the meta-schemas) is loaded by the first schema.
    from dscodec.protocols._schema import schema_problem

    try:
        key = orjson.dumps(schema)
    except (orjson.JSONEncodeError, TypeError):
        return schema_problem(schema)
    problem = memo.found.get(key, MISSING)
    if problem is MISSING:
        problem = schema_problem(schema)
        memo.put(key, problem, len(key))
    return problem  # type: ignore[return-value]


#: Strict schemas normalised before, by their target and compact JSON text: the normalised schema's JSON text, or
#: the message of the error normalising gave. A hit gives a new copy (read from that text), so no request shares
#: another's schema objects.
_STRICT: Memo[tuple[str, bytes], bytes | str] = Memo(entries=1024, longest=1 << 20)


def remembered_strict_schema(
    schema: Any, *, target: StrictTarget, memo: Memo[tuple[str, bytes], bytes | str] = _STRICT
) -> dict[str, Any]:
    """:func:`~dscodec.protocols._schema.normalize_strict_schema`, remembered in ``memo``: the same schema
    always normalises to the same JSON, or fails with the same message.

    Raises:
        ConversionError: the schema is outside the strict subset (the message ``normalize_strict_schema`` gives).
    """
    from dscodec.protocols._schema import normalize_strict_schema

    try:
        key = (target, orjson.dumps(schema))
    except (orjson.JSONEncodeError, TypeError):  # not plain JSON (a lone surrogate, an integer past 64 bits)
        return normalize_strict_schema(schema, target=target)
    found = memo.found.get(key)
    if found is None:
        try:
            node = normalize_strict_schema(schema, target=target)
        except ConversionError as exc:
            if type(exc) is ConversionError and exc.param is None:
                memo.put(key, exc.message, len(key[1]))
            raise
        memo.put(key, orjson.dumps(node), len(key[1]))
        return node
    if type(found) is str:
        raise ConversionError(found)
    normalised: dict[str, Any] = orjson.loads(found)
    return normalised


def validate_function_parameters(name: str, parameters: Any) -> None:
    """A non-strict tool's ``parameters``: a valid JSON Schema whose ``type`` is ``"object"`` (behavior.md#tools-and-tool-choice).

    Raises:
        ConversionError: ``Invalid schema for function '<name>': …``.
    """
    problem = remembered_schema_problem(parameters)
    if problem is not None:
        raise ConversionError(f"Invalid schema for function '{name}': {problem}")
    type_value = parameters.get("type") if isinstance(parameters, dict) else None
    if type_value != "object":
        raise ConversionError(
            f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', "
            f"got 'type: {json_text(type_value)}'."
        )


def function_definition(
    name: str, description: str | None, parameters: Any, *, strict: bool | None
) -> ToolDefinition:
    """An OpenAI function tool with its schema checked: strict parameters normalised (a missing schema is an
    empty object, behavior.md#json-schemas), others validated (a missing schema stays empty, behavior.md#tools-and-tool-choice)."""
    checked: Any
    if strict is True:
        source = parameters if parameters is not None else {"type": "object"}
        checked = remembered_strict_schema(source, target="tool")
    elif parameters is None:
        checked = {}
    else:
        validate_function_parameters(name, parameters)
        checked = parameters
    return ToolDefinition(name=name, description=description, parameters=checked, strict=strict)


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_Tool = TypeVar("_Tool", bound=_Named)


def unique_definitions(
    tools: Iterable[_Tool], define: Callable[[_Tool], ToolDefinition]
) -> list[ToolDefinition]:
    """``define`` of each tool in order, each tool's name checked to differ from the earlier ones first (so a
    repeated name is refused before the tool's schema is looked at).

    Raises:
        ConversionError: two tools share a name.
    """
    definitions: list[ToolDefinition] = []
    names: set[str] = set()
    for tool in tools:
        if tool.name in names:
            raise ConversionError("Tool names must be unique.")
        names.add(tool.name)
        definitions.append(define(tool))
    return definitions


# -- tools that depend on the template (behavior.md#apply-patch-tool) ---------------------------------------

#: The ``apply_patch`` tool per template. The V4.1 template's description has a blank line after
#: "high‑level envelope:" where the V4 one (behavior.md#apply-patch-tool) has a single line break; observed against the reference.
APPLY_PATCH_TOOLS: Mapping[ModelVersion, ToolDefinition] = {
    "v4": APPLY_PATCH_TOOL,
    "v4.1": APPLY_PATCH_TOOL.model_copy(
        update={
            "description": (APPLY_PATCH_TOOL.description or "").replace(
                "envelope:\n*** Begin Patch", "envelope:\n\n*** Begin Patch", 1
            )
        }
    ),
}

#: How a namespaced tool's name is joined with its namespace, per template (``gh__x`` / ``gh::x``).
NAMESPACE_SEPARATORS: Mapping[ModelVersion, str] = {"v4": "__", "v4.1": "::"}


def namespaced_name(namespace: str, name: str, version: ModelVersion) -> str:
    """A namespace member's name joined with its namespace, before any suffix (``gh__x`` on V4).

    On V4 an underscore already at the joint (a namespace that ends in ``_``, a name that starts with one) stands
    for the separator: the two are put side by side (``gh_`` and ``x`` give ``gh_x``).

    Examples:
        >>> namespaced_name("gh", "x", "v4"), namespaced_name("gh_", "x", "v4"), namespaced_name("gh_", "x", "v4.1")
        ('gh__x', 'gh_x', 'gh_::x')
    """
    if version == "v4" and (namespace.endswith("_") or name.startswith("_")):
        return namespace + name
    return f"{namespace}{NAMESPACE_SEPARATORS[version]}{name}"


def namespaced_names(
    members: Iterable[tuple[str, str]], *, flat: Iterable[str], version: ModelVersion
) -> list[str]:
    """The prompt name of every namespace member, given as ``(namespace, name)``, in order.

    The ``flat`` names (tools outside namespaces) are taken as they are; a member gets its joined name,
    suffixed ``_1``, ``_2``… while that collides with any flat name or an earlier member's name.

    Examples:
        >>> namespaced_names([("gh", "x"), ("gh", "x")], flat=["gh__x"], version="v4")
        ['gh__x_1', 'gh__x_2']
    """
    allocator = NameAllocator(flat)
    return [allocator.take(namespaced_name(namespace, name, version)) for namespace, name in members]


def namespaced_description(
    namespace_description: str | None, description: str | None, version: ModelVersion
) -> str | None:
    """A namespace member's description: V4.1 prefixes the namespace's (when not empty), V4 drops it."""
    if version == "v4" or not namespace_description:
        return description
    return f"{namespace_description}\n{description or ''}"


# -- tool choice (behavior.md#tools-and-tool-choice) ----------------------------------------------------------

THINKING_TOOL_CHOICE_ERROR = "Thinking mode does not support this tool_choice"


def unknown_tool_choice(name: str) -> ConversionError:
    """The error for a named tool choice that names no offered tool (behavior.md#tools-and-tool-choice)."""
    return ConversionError(
        f"Invalid value for 'tool_call': no function named '{name}' was specified in the 'tools' parameter."
    )


def resolve_tool_choice(
    mode: Literal["auto", "none", "required"],
    name: str | None,
    tools: list[ToolDefinition],
    *,
    thinking: bool,
) -> tuple[Literal["auto", "none", "required"], list[ToolDefinition]]:
    """Chat Completions / Responses tool choice (behavior.md#tools-and-tool-choice): ``none`` hides the tools; ``required`` or a named tool
    (``name``) without tools quietly becomes ``auto``; a named tool filters the tools and forces a call; a forced
    call is refused in thinking mode."""
    if mode == "none":
        return "none", []
    if not tools:
        return "auto", tools
    if name is not None:
        chosen = [t for t in tools if t.name == name]
        if not chosen:
            raise unknown_tool_choice(name)
        tools, mode = chosen, "required"
    if mode == "required" and thinking:
        raise ConversionError(THINKING_TOOL_CHOICE_ERROR)
    return mode, tools
