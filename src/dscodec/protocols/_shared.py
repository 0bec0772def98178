"""Conversion rules shared by the Chat Completions, Responses and Messages converters.

Three groups live here, each usable on its own:

* **wire reading** (:class:`WireError` and the ``read_*`` helpers): typed reading of a parsed JSON body with
  messages in the reference's serde style (spec §1.1). Readers raise :class:`WireError`; each protocol's
  ``parse_request`` turns it into a :class:`~dscodec.errors.ConversionError` (deviation D2: a malformed body is a
  400 like any other invalid request, not a bare ``ValueError``);
* **request rules** (§1.2–§1.4, §2.1.4–§2.1.5, §2.5–§2.7): model lookup, thinking and effort, sampling ranges and
  their version-dependent resolution, stop sequences, tool names and schemas, strict-schema normalisation, the
  output constraint and the ``json`` word check;
* **images** (§2.1.1): ``data:`` URL processing (WHATWG fetch "data: URL processor" and "forgiving-base64 decode")
  and the image-URL checks the V4.1 template needs.

Nothing here knows a protocol's field names except where a message quotes them; those messages are copied from
the spec byte for byte.
"""

from __future__ import annotations

import math
import re
import struct
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, TypeVar

import orjson

from dscodec._json import MAX_DEPTH, JSONDecodeError, depth_error, dumps_compact, loads, nesting_depth_exceeds
from dscodec.conversation import Effort, ImageSource, ModelVersion, OutputConstraint, ToolDefinition
from dscodec.errors import ConversionError
from dscodec.options import ConversionOptions

__all__ = [
    "IMAGE_TOKEN",
    "MAX_NESTING_DEPTH",
    "MAX_STOP_LENGTH",
    "EffortInput",
    "ImageCheck",
    "ThinkingSwitch",
    "WireError",
    "check_max_tokens",
    "check_penalty",
    "check_seed",
    "check_stop",
    "check_stop_lengths",
    "check_temperature",
    "check_top_logprobs",
    "check_top_p",
    "check_unique_tool_names",
    "contains_json_word",
    "describe_value",
    "file_data_problem",
    "image_source_for_url",
    "json_text",
    "normalize_strict_schema",
    "read_bool",
    "read_f32",
    "read_list",
    "read_map",
    "read_str",
    "read_uint",
    "read_unit_enum",
    "resolve_effort",
    "resolve_model",
    "resolve_temperature",
    "resolve_thinking",
    "resolve_top_p",
    "to_f32",
    "tool_call_constraint",
    "validate_function_parameters",
    "validate_json_schema_value",
    "validate_tool_names",
]

#: Spelling of the image placeholder token (spec §0, ``SpecialToken.Image``).
IMAGE_TOKEN = "<｜image｜>"

#: Deepest JSON nesting accepted in a request body, counting the body object itself. The reference's JSON
#: reader stops at 128 levels ("recursion limit exceeded"); every recursive walk in dscodec stays far below
#: Python's own recursion limit with this bound. :func:`dscodec._json.loads` enforces it while parsing.
MAX_NESTING_DEPTH = MAX_DEPTH


# ---------------------------------------------------------------------------------------------------------------
# Wire reading
# ---------------------------------------------------------------------------------------------------------------


_T = TypeVar("_T")


class WireError(Exception):
    """A body that does not have the expected JSON shape.

    ``detail`` is the serde-style description (``invalid type: integer `1`, expected a string``); ``path`` is
    where it was found (``messages[0].content``), or ``None`` for the body itself.
    """

    def __init__(self, detail: str, path: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.path = path


def _float_text(value: float) -> str:
    # The reference prints floats in error messages as shortest round-trip digits, positional for decimal
    # exponents in [-5, 16) (always with a fractional part) and as ``1e+16`` / ``1e-7`` otherwise.
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    text = repr(value)
    mantissa, _, exp_text = text.partition("e")
    if not exp_text:
        return text
    exponent = int(exp_text)
    digits = mantissa.replace("-", "").replace(".", "")
    sign = "-" if value < 0 else ""
    if -5 <= exponent < 16:
        if exponent < 0:
            return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
        digits = digits.ljust(exponent + 1, "0")
        whole, frac = digits[: exponent + 1], digits[exponent + 1 :]
        return f"{sign}{whole}.{frac or '0'}"
    body = mantissa.replace("-", "")
    body = body.removesuffix(".0")
    return f"{sign}{body}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


def _debug_str(text: str) -> str:
    # Rust's ``{:?}`` for strings: quotes, backslash escapes, and ``\u{..}`` for characters that are not
    # printable (approximated with Unicode categories).
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\0":
            out.append("\\0")
        elif ch != " " and unicodedata.category(ch) in (
            "Cc",
            "Cf",
            "Zs",
            "Zl",
            "Zp",
            "Co",
            "Cn",
            "Cs",
            "Mn",
            "Me",
        ):
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def describe_value(value: Any) -> str:
    """The serde ``Unexpected`` description of a JSON value (``integer `1```, ``map``, ``string "s"``)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{_float_text(value)}`"
    if isinstance(value, str):
        return f"string {_debug_str(value)}"
    if isinstance(value, (list, tuple)):
        return "sequence"
    if isinstance(value, Mapping):
        return "map"
    return type(value).__name__


def fail(detail: str, path: str | None) -> NoReturn:
    """Raise a :class:`WireError`."""
    raise WireError(detail, path)


def invalid_type(value: Any, expected: str, path: str | None) -> NoReturn:
    """Raise serde's ``invalid type`` error."""
    fail(f"invalid type: {describe_value(value)}, expected {expected}", path)


def read_map(value: Any, expected: str, path: str | None, *, fields: int | None = None) -> Mapping[str, Any]:
    """``value`` as a JSON object; ``expected`` names the struct in the error (``struct ChatCompletionTool``).

    Objects given as arrays (serde's positional struct form, which the reference accepts) are refused: no
    client sends them, and their meaning would depend on field order. An empty array gets serde's message,
    which needs the struct's field count ``fields``.
    """
    if isinstance(value, Mapping):
        return value
    if fields is not None and isinstance(value, (list, tuple)) and not value:
        fail(f"invalid length 0, expected {expected} with {fields} element{'s' if fields != 1 else ''}", path)
    invalid_type(value, expected, path)


def read_list(value: Any, path: str | None) -> Sequence[Any]:
    """``value`` as a JSON array."""
    if isinstance(value, (list, tuple)):
        return value
    invalid_type(value, "a sequence", path)


def read_str(value: Any, path: str | None) -> str:
    """``value`` as a JSON string."""
    if isinstance(value, str):
        return value
    invalid_type(value, "a string", path)


def read_bool(value: Any, path: str | None) -> bool:
    """``value`` as a JSON boolean."""
    if value is True or value is False:
        return bool(value)
    invalid_type(value, "a boolean", path)


def read_uint(value: Any, bits: int, path: str | None) -> int:
    """``value`` as an unsigned integer of ``bits`` bits; floats (even ``1.0``) and negatives are refused."""
    expected = f"u{bits}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        invalid_type(value, expected, path)
    if isinstance(value, float):
        invalid_type(value, expected, path)
    if value < 0 or value >= 1 << bits:
        fail(f"invalid value: integer `{value}`, expected {expected}", path)
    return int(value)


def read_i64(value: Any, path: str | None) -> int:
    """``value`` as a signed 64-bit integer."""
    if isinstance(value, bool) or not isinstance(value, int):
        invalid_type(value, "i64", path)
    if not -(1 << 63) <= value < 1 << 63:
        fail(f"invalid value: integer `{value}`, expected i64", path)
    return int(value)


def to_f32(value: float) -> float:
    """Round a double to the nearest single-precision value, as a double (``0.3`` -> ``0.30000001192092896``).

    Values beyond the single-precision range become infinite, as a Rust ``as f32`` cast does.
    """
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def read_f32(value: Any, path: str | None) -> float:
    """``value`` (any JSON number) as an f32-rounded double."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        invalid_type(value, "f32", path)
    return to_f32(float(value))


def read_unit_enum(value: Any, variants: Sequence[str], path: str | None) -> str:
    """A unit-variant enum written as a string, or as a one-key map ``{"low": null}`` (serde's external form)."""
    if isinstance(value, str):
        name = value
    elif isinstance(value, Mapping):
        if len(value) != 1:
            fail("invalid value: map, expected map with a single key", path)
        name, payload = next(iter(value.items()))
        if name in variants and payload is not None:
            invalid_type(payload, "unit", path)
    else:
        invalid_type(value, "string or map", path)
    if name not in variants:
        fail(unknown_variant(name, variants), path)
    return name


def unknown_variant(name: str, variants: Sequence[str]) -> str:
    """serde's ``unknown variant`` message."""
    if len(variants) == 1:
        return f"unknown variant `{name}`, expected `{variants[0]}`"
    listed = ", ".join(f"`{v}`" for v in variants)
    return f"unknown variant `{name}`, expected one of {listed}"


def read_tag(mapping: Mapping[str, Any], tag: str, variants: Sequence[str], path: str | None) -> str:
    """The tag of an internally tagged enum (``role``, ``type``)."""
    if tag not in mapping:
        fail(f"missing field `{tag}`", path)
    value = mapping[tag]
    if not isinstance(value, str):
        invalid_type(value, "variant identifier", path)
    if value not in variants:
        fail(unknown_variant(value, variants), path)
    return value


def read_tagged_map(
    value: Any, tag: str, variants: Sequence[str], expected: str, path: str | None
) -> Mapping[str, Any]:
    """An internally tagged enum's object (``{"role": "user", …}``), before its tag is read.

    serde also reads such an enum from an array whose first element is the tag. dscodec refuses arrays, but
    reports a missing or unknown tag first, as the reference does.
    """
    if isinstance(value, (list, tuple)):
        if not value:
            fail(f"missing field `{tag}`", path)
        first = value[0]
        if not isinstance(first, str):
            invalid_type(first, "variant identifier", path)
        if first not in variants:
            fail(unknown_variant(first, variants), path)
    return read_map(value, expected, path)


def missing_field(name: str, path: str | None) -> WireError:
    """The error for a required field that is absent."""
    return WireError(f"missing field `{name}`", path)


def join_path(path: str, key: str) -> str:
    """``path.key`` (or ``key`` at the top level)."""
    return f"{path}.{key}" if path else key


def load_body(body: str | bytes | Mapping[str, Any]) -> Any:
    """Parse a request body given as JSON text or as an already parsed mapping (deviation D2 errors).

    JSON text nested deeper than :data:`MAX_NESTING_DEPTH` is refused by the parser itself. A mapping is checked
    for the same depth (with the same message), then serialised and read again, so it follows the same number and
    string rules as JSON text and values JSON cannot carry (non-string keys, sets, integers beyond 64 bits, …) are
    refused.
    """
    if isinstance(body, (str, bytes, bytearray, memoryview)):
        data = bytes(body) if isinstance(body, (bytearray, memoryview)) else body
        try:
            return loads(data)
        except JSONDecodeError as exc:
            raise ConversionError(f"invalid JSON request: {exc}") from None
    if isinstance(body, Mapping):
        top = dict(body)
        # Checked before serialising: orjson has a deeper limit of its own, with another message.
        if nesting_depth_exceeds(top, MAX_NESTING_DEPTH):
            raise ConversionError(f"invalid JSON request: {depth_error(MAX_NESTING_DEPTH)}")
        try:
            return loads(orjson.dumps(top))
        except (orjson.JSONEncodeError, JSONDecodeError) as exc:
            raise ConversionError(f"invalid request body: not a JSON document: {exc}") from None
    raise ConversionError(f"invalid request body: expected JSON text or a mapping, got {type(body).__name__}")


def read_body(body: str | bytes | Mapping[str, Any], reader: Callable[[Any], _T]) -> _T:
    """A protocol's typed request from a body: parse (nesting limit included), read with ``reader``.

    Raises:
        ConversionError: malformed JSON, too deep, or a field of the wrong type (deviation D2); ``param`` names
            the field.
    """
    value = load_body(body)
    try:
        return reader(value)
    except WireError as exc:
        raise ConversionError(f"invalid request body: {exc.detail}", param=exc.path) from None


def json_text(value: Any) -> str:
    """Compact JSON of ``value`` as the reference quotes it in schema error messages."""
    return dumps_compact(value)


# ---------------------------------------------------------------------------------------------------------------
# Model, thinking and effort (§1.2, §1.3)
# ---------------------------------------------------------------------------------------------------------------

EffortInput = Literal["none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max"]
ThinkingSwitch = Literal["enabled", "disabled", "adaptive"]

#: Effort values accepted on the wire, in the reference's order (used in ``unknown variant`` messages).
EFFORT_VARIANTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max")
#: Thinking switch values, in the reference's order.
THINKING_VARIANTS: tuple[str, ...] = ("adaptive", "enabled", "disabled")

_EFFORT_LEVELS: Mapping[str, Effort] = {
    "none": "high",
    "minimal": "low",
    "low": "low",
    "medium": "high",
    "high": "high",
    "xhigh": "xhigh",
    "ultra": "max",
    "max": "max",
}


def resolve_model(name: str, options: ConversionOptions) -> ModelVersion:
    """The template version for a requested model name (exact match, §1.2).

    Raises:
        ConversionError: the name is not accepted; the message lists the accepted names in byte order.
    """
    version = options.model_versions_by_name.get(name)
    if version is None:
        names = ", ".join(
            sorted(options.model_versions_by_name, key=lambda n: n.encode("utf-8", "surrogatepass"))
        )
        raise ConversionError(f"The supported API model names are {names}, but you passed {name}.")
    return version


def resolve_thinking(
    switch: ThinkingSwitch | None, effort: EffortInput | None, *, default_thinking_mode: bool
) -> bool:
    """Whether thinking is on (the table of §1.3, identical in every protocol)."""
    if switch == "disabled":
        return False
    if switch is not None:
        return True
    if effort is not None:
        return effort != "none"
    return default_thinking_mode


def resolve_effort(thinking: bool, effort: EffortInput | None) -> Effort | None:
    """The conversation's effort level: ``None`` without thinking, ``high`` when absent (§1.3)."""
    if not thinking:
        return None
    if effort is None:
        return "high"
    return _EFFORT_LEVELS[effort]


# ---------------------------------------------------------------------------------------------------------------
# Sampling and limits (§1.4)
# ---------------------------------------------------------------------------------------------------------------

#: ``0.95`` as stored by the reference (an f32).
_TOP_P_THINKING_FLOOR = to_f32(0.95)


def check_temperature(value: float | None) -> None:
    """Refuse a temperature outside [0, 2] (checked on the f32 value)."""
    if value is not None and not 0.0 <= value <= 2.0:
        raise ConversionError("Invalid temperature value, the valid range of temperature is [0, 2]")


def check_top_p(value: float | None) -> None:
    """Refuse a top_p outside (0, 1]."""
    if value is not None and not 0.0 < value <= 1.0:
        raise ConversionError("Invalid top_p value, the valid range of top_p is (0, 1.0]")


def check_penalty(name: Literal["presence_penalty", "frequency_penalty"], value: float | None) -> None:
    """Refuse a presence/frequency penalty outside [-2, 2]; the value itself is not used."""
    if value is not None and not -2.0 <= value <= 2.0:
        raise ConversionError(f"Invalid {name} value, the valid range of {name} is [-2, 2]")


def check_top_logprobs(top_logprobs: int | None, logprobs: bool | None) -> None:
    """``top_logprobs`` needs ``logprobs: true`` and must be at most 20 (Chat rule; checked in this order)."""
    if top_logprobs is None:
        return
    if logprobs is not True:
        raise ConversionError(
            "Invalid top_logprobs and logprobs value, logprobs must be set to true if top_logprobs is used."
        )
    check_top_logprobs_range(top_logprobs)


def check_top_logprobs_range(top_logprobs: int) -> None:
    """Refuse ``top_logprobs`` above 20."""
    if top_logprobs > 20:
        raise ConversionError("Invalid top_logprobs value, the valid range of top_logprobs is [0, 20].")


def check_max_tokens(value: int | None, *, thinking: bool, options: ConversionOptions) -> None:
    """Refuse an output limit outside [1, bound]; the message always names ``max_tokens`` (§1.4)."""
    if value is None:
        return
    bound = (
        options.thinking_max_tokens_upper_bound if thinking else options.non_thinking_max_tokens_upper_bound
    )
    if not 1 <= value <= bound:
        raise ConversionError(f"Invalid max_tokens value, the valid range of max_tokens is [1, {bound}]")


def check_seed(value: int | None) -> None:
    """Refuse a seed of 2^63 or more (smaller ones are a parse error already)."""
    if value is not None and value >= 1 << 63:
        raise ConversionError("Invalid seed value, the valid range of seed is [0, 2^63)")


#: The longest single stop string accepted, in code points (deviation D16: the reference takes any length). The
#: response path matches every stop string against the output it holds back, so one huge stop string would make
#: each chunk cost as much as the string.
MAX_STOP_LENGTH = 4096


def check_stop(stop: Sequence[str], *, is_list: bool) -> None:
    """At most 16 stop strings, none empty (§2.1); duplicates are kept."""
    if len(stop) > 16:
        raise ConversionError(f"Stop string array too long: {len(stop)}")
    for index, item in enumerate(stop):
        if item == "":
            where = f"stop[{index}]" if is_list else "stop"
            raise ConversionError(
                f"Invalid '{where}': empty string. Expected a string with minimum length 1, "
                "but got an empty string instead."
            )


def check_stop_lengths(stop: Sequence[str], *, field: str, is_list: bool) -> None:
    """Refuse a stop string longer than :data:`MAX_STOP_LENGTH` (deviation D16).

    ``field`` is the request field (``stop``, ``stop_sequences``); the message and ``param`` name the item
    (``stop[3]``, or ``stop`` for a single string). Converters call this after every check the reference makes,
    so a request the reference refuses gets the reference's error.
    """
    for index, item in enumerate(stop):
        if len(item) > MAX_STOP_LENGTH:
            where = f"{field}[{index}]" if is_list else field
            raise ConversionError(
                f"Invalid '{where}': string too long. Expected a string with maximum length {MAX_STOP_LENGTH}, "
                f"but got a string with length {len(item)} instead.",
                param=where,
            )


def resolve_temperature(thinking: bool, requested: float | None) -> float:
    """Thinking always samples at 1.0; otherwise the request's (f32) value or 1.0 (§1.4)."""
    if thinking or requested is None:
        return 1.0
    return requested


def resolve_top_p(
    version: ModelVersion, thinking: bool, requested: float | None, *, tools_active: bool
) -> float:
    """The version-dependent top_p table of §1.4.

    ``tools_active`` is true when the final tool list is non-empty (tool_choice ``none`` empties it).
    """
    if version == "v4":
        if thinking:
            return _TOP_P_THINKING_FLOOR if tools_active else 1.0
        return 1.0 if requested is None else requested
    if not thinking or requested is None:
        return 1.0
    return max(requested, _TOP_P_THINKING_FLOOR)


# ---------------------------------------------------------------------------------------------------------------
# Tools (§2.1.4) and output constraint (§2.6)
# ---------------------------------------------------------------------------------------------------------------

_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
_TOOL_NAME_MAX = 128


def validate_tool_names(names: Sequence[str], *, path: str = "tools[{i}].function.name") -> None:
    """Every name non-empty, at most 128 characters and ``^[a-zA-Z0-9_-]+$`` (uniqueness is checked later).

    ``path`` is the field as the messages quote it, with ``{i}`` for the tool index.
    """
    for index, name in enumerate(names):
        where = path.format(i=index)
        if name == "":
            raise ConversionError(
                f"Invalid '{where}': empty string. Expected a string with minimum length 1, "
                "but got an empty string instead."
            )
        if len(name) > _TOOL_NAME_MAX:
            raise ConversionError(
                f"Invalid '{where}': string too long. Expected a string with maximum length {_TOOL_NAME_MAX}, "
                f"but got a string with length {len(name)} instead."
            )
        if _TOOL_NAME.fullmatch(name) is None:
            raise ConversionError(
                f"Invalid '{where}': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            )


def check_unique_tool_names(names: Sequence[str]) -> None:
    """Refuse two tools with the same name."""
    if len(set(names)) != len(names):
        raise ConversionError("Tool names must be unique.")


def validate_function_parameters(name: str, parameters: Any) -> None:
    """A non-strict tool's ``parameters``: a valid JSON Schema whose ``type`` is ``"object"`` (§2.1.4).

    Raises:
        ConversionError: ``Invalid schema for function '<name>': …``.
    """
    problem = schema_problem(parameters)
    if problem is not None:
        raise ConversionError(f"Invalid schema for function '{name}': {problem}")
    type_value = parameters.get("type") if isinstance(parameters, dict) else None
    if type_value != "object":
        raise ConversionError(
            f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', "
            f"got 'type: {json_text(type_value)}'."
        )


def validate_json_schema_value(schema: Any) -> None:
    """A non-strict ``json_schema`` response format: any valid JSON Schema (§2.1.5)."""
    problem = schema_problem(schema)
    if problem is not None:
        raise ConversionError(f"Invalid json schema: {problem}")


def tool_call_constraint(tools: Sequence[ToolDefinition], *, required: bool) -> OutputConstraint:
    """The ``tool_call`` / ``tool_call_required`` constraint: the tools as a compact JSON array (§2.6)."""
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


_JSON_WORD = re.compile(r"json", re.IGNORECASE | re.ASCII)


THINKING_TOOL_CHOICE_ERROR = "Thinking mode does not support this tool_choice"


def unknown_tool_choice(name: str) -> ConversionError:
    """The error for a named tool choice that names no offered tool (§2.1.4)."""
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
    """Chat Completions / Responses tool choice (§2.1.4): ``none`` hides the tools; ``required`` or a named tool
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


def contains_json_word(texts: Iterable[str]) -> bool:
    """Whether any text contains the ASCII word ``json`` in any case (``jsonl`` counts, full-width does not)."""
    return any(_JSON_WORD.search(text) is not None for text in texts)


# ---------------------------------------------------------------------------------------------------------------
# JSON Schema meta-validation (the non-strict checks of §2.1.4 / §2.1.5)
# ---------------------------------------------------------------------------------------------------------------
#
# The reference validates schemas against the JSON Schema 2020-12 meta-schema and reports the first problem
# as ``<instance> <reason>``. This is a compact re-statement of that meta-schema: keywords are visited in the
# meta-schema's vocabulary order (core, applicator, unevaluated, validation, meta-data, format, content, then the
# deprecated ``definitions``/``dependencies``), which decides which problem is reported first. Keywords of other
# drafts selected through ``$schema`` are checked with the same rules (a known simplification).

_SIMPLE_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_ANCHOR = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")

_SCHEMA_KEYWORDS = (
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_SCHEMA_MAP_KEYWORDS = ("$defs", "properties", "patternProperties", "dependentSchemas", "definitions")
_SCHEMA_ARRAY_KEYWORDS = ("prefixItems", "allOf", "anyOf", "oneOf")
_STRING_KEYWORDS = (
    "$id",
    "$schema",
    "$ref",
    "$dynamicRef",
    "$comment",
    "title",
    "description",
    "format",
    "contentEncoding",
    "contentMediaType",
    "$recursiveRef",
)
_NUMBER_KEYWORDS = ("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum")
_COUNT_KEYWORDS = (
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
)
_BOOL_KEYWORDS = ("uniqueItems", "deprecated", "readOnly", "writeOnly")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def _is_type(value: Any, name: str) -> bool:
    actual = _json_type(value)
    return actual == name or (name == "number" and actual == "integer")


def _type_problem(value: Any, *names: str) -> str | None:
    if any(_is_type(value, n) for n in names):
        return None
    if len(names) == 1:
        return f'{json_text(value)} is not of type "{names[0]}"'
    listed = ", ".join(f'"{n}"' for n in sorted(names))
    return f"{json_text(value)} is not of types {listed}"


def _unique(items: Sequence[str]) -> bool:
    # Only string arrays (``type`` lists and ``required``) are checked for uniqueness, after their items were
    # found to be strings: a set compares them in linear time.
    return len(set(items)) == len(items)


def _regex_ok(pattern: str) -> bool:
    # Python's syntax stands in for ECMA 262's here; the two agree on the patterns people write.
    try:
        re.compile(pattern)
    except (re.error, ValueError, OverflowError, RecursionError):
        return False
    return True


_ARRAY_INDEX = re.compile(r"[0-9]+")


def _resolve_pointer(root: Any, ref: str) -> bool:
    # Only same-document JSON pointers are checked; other references are left to whoever resolves them.
    if not ref.startswith("#/"):
        return True
    node = root
    for raw in ref[2:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and (index := _array_index(token)) is not None and index < len(node):
            node = node[index]
        else:
            return False
    return True


def _array_index(token: str) -> int | None:
    """A pointer token as an array index: ASCII digits only (``str.isdigit`` also takes ``²``), and no more
    significant digits than any list can have (``int`` refuses very long digit strings)."""
    if _ARRAY_INDEX.fullmatch(token) is None:
        return None
    digits = token.lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else None


def schema_problem(schema: Any) -> str | None:
    """The first problem of a JSON Schema: a meta-schema violation, else a same-document ``$ref`` that points
    nowhere (``Pointer '/$defs/x' does not exist``), else a ``pattern`` that is not a regex, else ``None``."""
    problem = meta_schema_problem(schema)
    if problem is not None:
        return problem
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and not _resolve_pointer(schema, ref):
                return f"Pointer '{ref[1:]}' does not exist"
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    # Format problems (``pattern`` regexes) are reported last.
    return meta_schema_problem(schema, formats=True)


#: The 2020-12 meta-schema's vocabularies in the order they are checked, then the deprecated keywords the
#: base meta-schema still describes. Within one vocabulary, keywords are checked in the schema's own key order.
_VOCABULARIES: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "$id",
            "$schema",
            "$ref",
            "$anchor",
            "$dynamicRef",
            "$dynamicAnchor",
            "$vocabulary",
            "$comment",
            "$defs",
        }
    ),
    frozenset(
        {
            "prefixItems",
            "items",
            "contains",
            "additionalProperties",
            "properties",
            "patternProperties",
            "dependentSchemas",
            "propertyNames",
            "if",
            "then",
            "else",
            "allOf",
            "anyOf",
            "oneOf",
            "not",
        }
    ),
    frozenset({"unevaluatedItems", "unevaluatedProperties"}),
    frozenset(
        {
            "type",
            "const",
            "enum",
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "maxLength",
            "minLength",
            "pattern",
            "maxItems",
            "minItems",
            "uniqueItems",
            "maxContains",
            "minContains",
            "maxProperties",
            "minProperties",
            "required",
            "dependentRequired",
        }
    ),
    frozenset({"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples"}),
    frozenset({"format"}),
    frozenset({"contentEncoding", "contentMediaType", "contentSchema"}),
    frozenset({"definitions", "dependencies", "$recursiveAnchor", "$recursiveRef"}),
)
#: The position of each keyword's vocabulary in :data:`_VOCABULARIES` (every keyword is in exactly one).
_VOCABULARY_OF: Mapping[str, int] = {
    key: position for position, vocabulary in enumerate(_VOCABULARIES) for key in vocabulary
}


def meta_schema_problem(schema: Any, *, root: Any = None, formats: bool = False) -> str | None:
    """The first meta-schema violation in ``schema`` (``"1 is not of type \\"string\\""``), or ``None``.

    ``formats`` checks the ``regex`` format of ``pattern`` values and ``patternProperties`` names instead of
    everything else: the reference reports a format problem only when the schema has no other one.
    """
    if root is None:
        root = schema
    problem = None if formats else _type_problem(schema, "boolean", "object")
    if problem is not None or not isinstance(schema, Mapping):
        return problem
    # Vocabulary by vocabulary, each in the schema's key order: a stable sort of the known keywords.
    for key in sorted((key for key in schema if key in _VOCABULARY_OF), key=_VOCABULARY_OF.__getitem__):
        problem = _keyword_problem(key, schema[key], root, formats)
        if problem is not None:
            return problem
    return None


def _keyword_problem(key: str, value: Any, root: Any, formats: bool) -> str | None:
    """The problem of one keyword's value (``formats`` selects the format-only pass)."""
    if key in _SCHEMA_KEYWORDS:
        return meta_schema_problem(value, root=root, formats=formats)
    if key in _SCHEMA_MAP_KEYWORDS:
        return _schema_map_problem(key, value, root, formats)
    if key in _SCHEMA_ARRAY_KEYWORDS:
        return _schema_array_problem(value, root, formats)
    if key == "pattern":
        if formats:
            return (
                None
                if not isinstance(value, str) or _regex_ok(value)
                else f'{json_text(value)} is not a "regex"'
            )
        return _type_problem(value, "string")
    if formats:
        return _format_only(key, value, root)
    if key in _STRING_KEYWORDS:
        return _type_problem(value, "string")
    if key in ("$anchor", "$dynamicAnchor"):
        problem = _type_problem(value, "string")
        if problem is None and _ANCHOR.fullmatch(value) is None:
            problem = f'{json_text(value)} does not match "^[A-Za-z_][-A-Za-z0-9._]*$"'
        return problem
    if key == "$vocabulary":
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
        return next((p for p in (_type_problem(v, "boolean") for v in value.values()) if p is not None), None)
    if key == "type":
        valid = (
            value in _SIMPLE_TYPES
            if isinstance(value, str)
            else isinstance(value, list)
            and len(value) > 0
            and all(isinstance(item, str) and item in _SIMPLE_TYPES for item in value)
            and _unique(value)
        )
        return (
            None
            if valid
            else f"{json_text(value)} is not valid under any of the schemas listed in the 'anyOf' keyword"
        )
    if key in ("enum", "examples"):
        return _type_problem(value, "array")
    if key == "multipleOf":
        problem = _type_problem(value, "number")
        if problem is None and value <= 0:
            problem = f"{json_text(value)} is less than or equal to the minimum of 0"
        return problem
    if key in _NUMBER_KEYWORDS:
        return _type_problem(value, "number")
    if key in _COUNT_KEYWORDS:
        problem = _type_problem(value, "integer")
        if problem is None and value < 0:
            problem = f"{json_text(value)} is less than the minimum of 0"
        return problem
    if key in _BOOL_KEYWORDS:
        return _type_problem(value, "boolean")
    if key == "required":
        return _string_array_problem(value)
    if key == "dependentRequired":
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
        return next((p for p in map(_string_array_problem, value.values()) if p is not None), None)
    if key == "dependencies":
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
        for item in value.values():
            if meta_schema_problem(item, root=root) is not None and _string_array_problem(item) is not None:
                return (
                    f"{json_text(item)} is not valid under any of the schemas listed in the 'anyOf' keyword"
                )
    return None


def _format_only(key: str, value: Any, root: Any) -> str | None:
    # Keywords holding schemas deeper down, for the format-only pass.
    if key == "dependencies" and isinstance(value, Mapping):
        for item in value.values():
            problem = meta_schema_problem(item, root=root, formats=True)
            if problem is not None:
                return problem
    return None


def _schema_map_problem(key: str, value: Any, root: Any, formats: bool) -> str | None:
    if formats:
        if not isinstance(value, Mapping):
            return None
        if key == "patternProperties":
            bad = next((name for name in value if not _regex_ok(name)), None)
            if bad is not None:
                return f'{json_text(bad)} is not a "regex"'
    else:
        problem = _type_problem(value, "object")
        if problem is not None:
            return problem
    for item in value.values():
        problem = meta_schema_problem(item, root=root, formats=formats)
        if problem is not None:
            return problem
    return None


def _schema_array_problem(value: Any, root: Any, formats: bool) -> str | None:
    if formats:
        if not isinstance(value, list):
            return None
    else:
        problem = _type_problem(value, "array")
        if problem is not None:
            return problem
        if not value:
            return f"{json_text(value)} has less than 1 item"
    for item in value:
        problem = meta_schema_problem(item, root=root, formats=formats)
        if problem is not None:
            return problem
    return None


def _string_array_problem(value: Any) -> str | None:
    problem = _type_problem(value, "array")
    if problem is not None:
        return problem
    for item in value:
        problem = _type_problem(item, "string")
        if problem is not None:
            return problem
    if not _unique(value):
        return f"{json_text(value)} has non-unique elements"
    return None


# ---------------------------------------------------------------------------------------------------------------
# Strict schema normalisation (§2.5)
# ---------------------------------------------------------------------------------------------------------------
#
# A strict schema is read into a closed model (the subset of JSON Schema that constrained decoding supports)
# and written back from it. Reading and writing decide everything the spec observed: unknown keywords
# (``$defs``, ``title``, ``minLength``…) disappear, keys come out in a fixed order per type, every object gets
# ``additionalProperties: false`` and ``required`` = all its properties in order. Shape errors use serde's
# wording; rule errors (required/additionalProperties/empty objects) come after the whole tree was read.

StrictTarget = Literal["tool", "response_format"]

_STRICT_TYPES = ("object", "string", "number", "integer", "boolean", "array", "null")
_STRICT_LIST_TYPES = ("string", "number", "integer", "boolean", "null")
_STRICT_FORMATS = ("email", "hostname", "ipv4", "ipv6", "uuid")
_STRICT_NUMBER_KEYS = ("default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


@dataclass
class _StrictObject:
    """An object node read from a strict schema, kept until the rule pass has checked it."""

    node: dict[str, Any]
    properties: dict[str, Any]
    children: list[Any]
    additional: bool | None
    required: list[str] | None


class _StrictReader:
    def __init__(self) -> None:
        # Every object in the order its reading finished (children before parents), for the rule pass.
        self.objects: list[_StrictObject] = []

    def node(self, value: Any) -> dict[str, Any]:
        """A schema node: typed (``type``), ``anyOf`` or ``$ref``, in that priority."""
        if isinstance(value, Mapping):
            if "type" in value:
                if isinstance(value["type"], (list, tuple)):
                    return self.type_list(value)
                return self.typed(value)
            if "anyOf" in value:
                return self.any_of(value)
            if "$ref" in value:
                ref = value["$ref"]
                if not isinstance(ref, str):
                    fail(f"field `$ref`: invalid type: {describe_value(ref)}, expected a string", None)
                return {"$ref": ref}
        fail("one of `type`, `anyOf`, `$ref` field is required", None)

    def type_list(self, value: Mapping[str, Any]) -> dict[str, Any]:
        names: list[str] = []
        for item in value["type"]:
            if not isinstance(item, str):
                fail(f"field `type`: invalid type: {describe_value(item)}, expected string or map", None)
            if item not in _STRICT_LIST_TYPES:
                fail(f"field `type`: {unknown_variant(item, _STRICT_LIST_TYPES)}", None)
            names.append(item)
        out: dict[str, Any] = {"type": names}
        description = self.optional_str(value, "description")
        if description is not None:
            out["description"] = description
        return out

    def any_of(self, value: Mapping[str, Any]) -> dict[str, Any]:
        members = value["anyOf"]
        if not isinstance(members, (list, tuple)):
            fail(f"field `anyOf`: invalid type: {describe_value(members)}, expected a sequence", None)
        read: list[Any] = []
        for member in members:
            try:
                tagged = read_tagged_map(
                    member, "type", _STRICT_TYPES, "internally tagged enum JsonSchemaType", None
                )
                read.append(self.typed(tagged))
            except WireError as exc:
                raise WireError(f"field `anyOf`: {exc.detail}") from None
        out: dict[str, Any] = {"anyOf": read}
        description = self.optional_str(value, "description")
        if description is not None:
            out["description"] = description
        return out

    @staticmethod
    def optional_str(value: Mapping[str, Any], key: str) -> str | None:
        item = value.get(key)
        if item is None:
            return None
        return read_str(item, None)

    def typed(self, value: Mapping[str, Any]) -> dict[str, Any]:
        kind = read_tag(value, "type", _STRICT_TYPES, None)
        if kind == "object":
            return self.object(value)
        if kind == "array":
            return self.array(value)
        fields: dict[str, Any] = {}
        # serde reads the fields in document order: the first bad one is reported.
        for key, item in value.items():
            if item is None:
                continue
            if key == "description" or kind == "string" and key in ("pattern",):
                fields[key] = read_str(item, None)
            elif kind == "string" and key == "format":
                fields[key] = read_unit_enum(item, _STRICT_FORMATS, None)
            elif kind == "string" and key == "enum":
                fields[key] = [read_str(v, None) for v in read_list(item, None)]
            elif kind == "integer" and key in _STRICT_NUMBER_KEYS:
                fields[key] = read_i64(item, None)
            elif kind == "number" and key in _STRICT_NUMBER_KEYS:
                if isinstance(item, bool) or not isinstance(item, (int, float)):
                    invalid_type(item, "a JSON number", None)
                fields[key] = item
        order: tuple[str, ...] = ("description",)
        if kind == "string":
            order = ("description", "pattern", "format", "enum")
        elif kind in ("integer", "number"):
            order = ("description", *_STRICT_NUMBER_KEYS)
        out: dict[str, Any] = {"type": kind}
        out.update((key, fields[key]) for key in order if key in fields)
        return out

    def array(self, value: Mapping[str, Any]) -> dict[str, Any]:
        items: Any = None
        has_items = False
        description: str | None = None
        for key, item in value.items():
            if key == "items":
                items, has_items = self.node(item), True
            elif key == "description" and item is not None:
                description = read_str(item, None)
        if not has_items:
            fail("missing field `items`", None)
        out: dict[str, Any] = {"type": "array", "items": items}
        if description is not None:
            out["description"] = description
        return out

    def object(self, value: Mapping[str, Any]) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        additional: bool | None = None
        required: list[str] | None = None
        description: str | None = None
        for key, item in value.items():
            if item is None:
                continue
            if key == "properties":
                if not isinstance(item, Mapping):
                    invalid_type(item, "a map", None)
                properties = {name: self.node(child) for name, child in item.items()}
            elif key == "additionalProperties":
                additional = read_bool(item, None)
            elif key == "required":
                required = [read_str(name, None) for name in read_list(item, None)]
            elif key == "description":
                description = read_str(item, None)
        node: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
            "required": list(properties),
        }
        if description is not None:
            node["description"] = description
        self.objects.append(_StrictObject(node, properties, list(properties.values()), additional, required))
        return node


def _check_strict_object(obj: _StrictObject, *, is_root: bool, target: StrictTarget) -> None:
    if not obj.properties and (not is_root or target == "response_format"):
        raise ConversionError("An object with no properties is not allowed.")
    if obj.required is not None:
        seen: set[str] = set()
        for name in obj.required:
            if name not in obj.properties:
                raise ConversionError(f"Required property '{name}' not found in object")
            if name in seen:
                raise ConversionError(f"Duplicate required property '{name}'")
            seen.add(name)
        if len(seen) != len(obj.properties):
            raise ConversionError("Required properties must match all properties in the object")
    if obj.additional is True:
        raise ConversionError("additionalProperties should not be true")


def normalize_strict_schema(schema: Any, *, target: StrictTarget) -> dict[str, Any]:
    """The strict form of a tool's parameters or of a ``json_schema`` response format (§2.5).

    Raises:
        ConversionError: the schema is outside the strict subset. Shape errors read
            ``Invalid tool parameters schema : …`` (tools) or ``Invalid json schema: …`` (response format).
    """
    reader = _StrictReader()
    try:
        node = reader.node(schema)
    except WireError as exc:
        prefix = "Invalid tool parameters schema : " if target == "tool" else "Invalid json schema: "
        raise ConversionError(prefix + exc.detail) from None
    if node.get("type") != "object":
        what = "function parameters schema" if target == "tool" else "json schema"
        raise ConversionError(f"The top level of the {what} must be an object.")
    for obj in reader.objects:
        _check_strict_object(obj, is_root=obj.node is node, target=target)
    return node


# ---------------------------------------------------------------------------------------------------------------
# Images (§2.1.1): data URLs and image-URL checks
# ---------------------------------------------------------------------------------------------------------------

_IMAGE_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp"})
_HTTP_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_BASE64_ALPHABET = re.compile(r"[A-Za-z0-9+/]*")
_ASCII_WHITESPACE = "\t\n\x0c\r "
_UNSUPPORTED_IMAGE = (
    "You have uploaded an unsupported image. Please make sure your image is valid and has one of the "
    "following formats: webp, png, jpeg, and gif."
)
_UNSUPPORTED_FILE = (
    "You have uploaded an unsupported file. Please make sure your file is valid and has one of the "
    "following formats: webp, png, jpeg, and gif."
)


@dataclass(frozen=True)
class _DataUrl:
    essence: str
    base64: bool
    body: str


def _percent_decode(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    out = bytearray()
    i = 0
    while i < len(raw):
        byte = raw[i]
        if byte == 0x25 and i + 2 < len(raw) + 0 and _is_hex(raw[i + 1 : i + 3]):
            out.append(int(raw[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(byte)
            i += 1
    return bytes(out)


def _is_hex(pair: bytes) -> bool:
    return len(pair) == 2 and all(chr(b) in "0123456789abcdefABCDEF" for b in pair)


def _mime_essence(text: str) -> str | None:
    # WHATWG MIME sniffing "parse a MIME type", reduced to what decides the essence.
    text = text.strip(_ASCII_WHITESPACE)
    slash = text.find("/")
    if slash < 0:
        return None
    type_ = text[:slash]
    rest = text[slash + 1 :]
    subtype = rest.split(";", 1)[0].rstrip(_ASCII_WHITESPACE)
    if not type_ or not subtype or not _HTTP_TOKEN.fullmatch(type_) or not _HTTP_TOKEN.fullmatch(subtype):
        return None
    return f"{type_}/{subtype}".lower()


def _parse_data_url(url: str) -> _DataUrl | None:
    """The WHATWG fetch "data: URL processor" (None when ``url`` is not a data URL or has no comma)."""
    # URL parsing first drops leading/trailing C0 controls and spaces, and every tab or newline.
    text = url.strip("".join(chr(c) for c in range(0x21)))
    text = text.replace("\t", "").replace("\n", "").replace("\r", "")
    if text[:5].lower() != "data:":
        return None
    rest = text[5:]
    rest = rest.split("#", 1)[0]
    comma = rest.find(",")
    if comma < 0:
        return None
    header = rest[:comma].strip(_ASCII_WHITESPACE)
    body = rest[comma + 1 :]
    base64 = False
    lowered = header.lower()
    if lowered.endswith("base64"):
        before = header[: -len("base64")].rstrip(" ")
        if before.endswith(";"):
            base64 = True
            header = before[:-1]
    if header.startswith(";"):
        header = "text/plain" + header
    essence = _mime_essence(header) or "text/plain"
    return _DataUrl(essence=essence, base64=base64, body=body)


def _forgiving_base64_ok(data: bytes) -> bool:
    """Whether WHATWG "forgiving-base64 decode" accepts ``data``."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return False
    text = "".join(ch for ch in text if ch not in _ASCII_WHITESPACE)
    if len(text) % 4 == 0:
        if text.endswith("=="):
            text = text[:-2]
        elif text.endswith("="):
            text = text[:-1]
    if len(text) % 4 == 1:
        return False
    return _BASE64_ALPHABET.fullmatch(text) is not None


@dataclass(frozen=True)
class ImageCheck:
    """The outcome of checking one image reference: the source, or the message of the 400 to raise."""

    source: ImageSource | None
    error: str | None = None


def image_source_for_url(
    url: str, *, detail: Literal["low", "high", "original", "auto"], path: str
) -> ImageCheck:
    """Check an ``image_url`` for the V4.1 template (§2.1.1) and describe where the image comes from.

    ``http``/``https`` URLs are taken as they are (the server fetches them); ``data:`` URLs must be base64 and
    carry one of the supported image media types. Error messages are prefixed with ``path`` by the caller.
    """
    if url[:4].lower() == "http":
        return ImageCheck(ImageSource(kind="url", url=url, detail=detail, path=path))
    parsed = _parse_data_url(url)
    # Only base64 data URLs are taken, spelled exactly ``base64,`` (the reference's check).
    if parsed is None or "base64," not in url:
        return ImageCheck(None, "Unsupported image_url format")
    if parsed.essence not in _IMAGE_MEDIA_TYPES:
        return ImageCheck(None, _UNSUPPORTED_IMAGE)
    if parsed.base64 and not _forgiving_base64_ok(_percent_decode(parsed.body)):
        return ImageCheck(None, "Invalid base64 data")
    return ImageCheck(ImageSource(kind="data_url", url=url, detail=detail, path=path))


def file_data_problem(file_data: str) -> str | None:
    """Why a ``file`` part's ``file_data`` is not a base64 image data URL, or ``None`` when it is one.

    A valid one is then checked again as an image URL (so ``data:image/png,…`` without base64 is refused there).
    """
    parsed = _parse_data_url(file_data)
    if parsed is None:
        return "file_data is not a valid base64 data url"
    if parsed.essence not in _IMAGE_MEDIA_TYPES:
        return _UNSUPPORTED_FILE
    if parsed.base64 and not _forgiving_base64_ok(_percent_decode(parsed.body)):
        return "file_data is not a valid base64 data url"
    return None
