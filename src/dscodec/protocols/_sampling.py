"""The model, thinking and sampling fields of a request: how each is checked and what it resolves to.

The rules are the same in every protocol, only the field names differ: the model name picks the template
version (behavior.md#model-names); the thinking switch and the effort decide whether the model thinks and how hard (behavior.md#thinking-and-effort); the
sampling fields and the output limit are range-checked, then resolved per version (behavior.md#sampling); stop sequences are
counted, checked for emptiness and capped in length (behavior.md#chat-completions, deviation D16). Each check raises a
:class:`~dscodec.errors.ConversionError` with the reference's message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from dscodec.conversation import Effort, ModelVersion
from dscodec.errors import ConversionError
from dscodec.options import ConversionOptions
from dscodec.protocols._body import empty_string_error, string_too_long_error, to_f32

__all__ = [
    "EFFORT_VARIANTS",
    "MAX_STOP_LENGTH",
    "THINKING_VARIANTS",
    "EffortInput",
    "ThinkingSwitch",
    "check_max_tokens",
    "check_penalty",
    "check_seed",
    "check_stop",
    "check_stop_lengths",
    "check_temperature",
    "check_top_logprobs",
    "check_top_logprobs_range",
    "check_top_p",
    "resolve_effort",
    "resolve_model",
    "resolve_temperature",
    "resolve_thinking",
    "resolve_top_p",
]

# -- model, thinking and effort (behavior.md#model-names, behavior.md#thinking-and-effort) --------------------

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
    """The template version for a requested model name (exact match, behavior.md#model-names).

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
    """Whether thinking is on (the table of behavior.md#thinking-and-effort, identical in every protocol)."""
    if switch == "disabled":
        return False
    if switch is not None:
        return True
    if effort is not None:
        return effort != "none"
    return default_thinking_mode


def resolve_effort(thinking: bool, effort: EffortInput | None) -> Effort | None:
    """The conversation's effort level: ``None`` without thinking, ``high`` when absent (behavior.md#thinking-and-effort)."""
    if not thinking:
        return None
    if effort is None:
        return "high"
    return _EFFORT_LEVELS[effort]


# -- sampling and limits (behavior.md#sampling) ----------------------------------------------------------------

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
    """Refuse an output limit outside [1, bound]; the message always names ``max_tokens`` (behavior.md#sampling)."""
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
    """At most 16 stop strings, none empty (behavior.md#chat-completions); duplicates are kept."""
    if len(stop) > 16:
        raise ConversionError(f"Stop string array too long: {len(stop)}")
    for index, item in enumerate(stop):
        if item == "":
            raise empty_string_error(f"stop[{index}]" if is_list else "stop")


def check_stop_lengths(stop: Sequence[str], *, field: str, is_list: bool) -> None:
    """Refuse a stop string longer than :data:`MAX_STOP_LENGTH` (deviation D16).

    ``field`` is the request field (``stop``, ``stop_sequences``); the message and ``param`` name the item
    (``stop[3]``, or ``stop`` for a single string). Converters call this after every check the reference makes,
    so a request the reference refuses gets the reference's error.
    """
    for index, item in enumerate(stop):
        if len(item) > MAX_STOP_LENGTH:
            where = f"{field}[{index}]" if is_list else field
            raise string_too_long_error(where, limit=MAX_STOP_LENGTH, length=len(item), param=where)


def resolve_temperature(thinking: bool, requested: float | None) -> float:
    """Thinking always samples at 1.0; otherwise the request's (f32) value or 1.0 (behavior.md#sampling)."""
    if thinking or requested is None:
        return 1.0
    return requested


def resolve_top_p(
    version: ModelVersion, thinking: bool, requested: float | None, *, tools_active: bool
) -> float:
    """The version-dependent top_p table of behavior.md#sampling.

    ``tools_active`` is true when the final tool list is non-empty (tool_choice ``none`` empties it).
    """
    if version == "v4":
        if thinking:
            return _TOP_P_THINKING_FLOOR if tools_active else 1.0
        return 1.0 if requested is None else requested
    if not thinking or requested is None:
        return 1.0
    return max(requested, _TOP_P_THINKING_FLOOR)
