"""Conversion options: the serving side's policy for turning requests into conversations."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from dscodec.conversation import ModelVersion
from dscodec.errors import shown

__all__ = ["DEFAULT_MAX_TOKENS_UPPER_BOUND", "DEFAULT_MODEL_NAMES", "ConversionOptions"]

#: Upper bound of a requested completion budget, thinking or not (behavior.md#sampling).
DEFAULT_MAX_TOKENS_UPPER_BOUND = 393216

#: Accepted model names and the template each one uses (behavior.md#model-names).
DEFAULT_MODEL_NAMES: Mapping[str, ModelVersion] = MappingProxyType(
    {"DeepSeek-V4-Pro": "v4", "DeepSeek-V4.1-Flash": "v4.1"}
)

ReasoningBehavior = Literal["fill_empty", "reject"]
ServerToolBehavior = Literal["drop", "reject"]
UnsupportedBehavior = Literal["ignore", "reject"]


@dataclass(frozen=True, kw_only=True)
class ConversionOptions:
    """How requests are converted. Every field has the reference's default.

    Attributes:
        default_thinking_mode: thinking mode when a request neither switches it nor names an effort.
        reasoning_content_behavior: what to do with an assistant turn of the current agentic round that lacks
            its reasoning in thinking mode: ``"fill_empty"`` (use ``""``) or ``"reject"`` (400).
        responses_web_search: Responses ``web_search`` tools: ``"drop"`` them or ``"reject"`` the request.
        messages_web_search: Messages ``web_search_*`` tools and server-tool history blocks.
        thinking_max_tokens_upper_bound: largest accepted completion budget in thinking mode.
        non_thinking_max_tokens_upper_bound: the same without thinking.
        model_versions_by_name: accepted model names (exact match) and their template version.
        unsupported: request fields dscodec cannot honour (sampling penalties, ``logit_bias``, ``top_k``,
            audio, Messages ``output_format`` and ``output_config.format``, ``mcp_servers``, Responses
            ``background``, ...; docs/server.md lists them all): ``"ignore"`` reads past them, as the reference does;
            ``"reject"`` answers 400 naming the field when its value asks for something.

    Raises:
        TypeError: a field of the wrong type.
        ValueError: a field of the right type with a value it cannot take (a behaviour it does not name, a
            negative bound, a model name mapped to a version other than ``"v4"`` or ``"v4.1"``).

    Examples:
        >>> opts = ConversionOptions().with_model_alias("my-model", "v4.1")
        >>> sorted(opts.model_versions_by_name)
        ['DeepSeek-V4-Pro', 'DeepSeek-V4.1-Flash', 'my-model']
    """

    default_thinking_mode: bool = True
    reasoning_content_behavior: ReasoningBehavior = "fill_empty"
    responses_web_search: ServerToolBehavior = "drop"
    messages_web_search: ServerToolBehavior = "reject"
    thinking_max_tokens_upper_bound: int = DEFAULT_MAX_TOKENS_UPPER_BOUND
    non_thinking_max_tokens_upper_bound: int = DEFAULT_MAX_TOKENS_UPPER_BOUND
    model_versions_by_name: Mapping[str, ModelVersion] = field(default_factory=lambda: DEFAULT_MODEL_NAMES)
    unsupported: UnsupportedBehavior = "ignore"

    def __post_init__(self) -> None:
        if type(self.default_thinking_mode) is not bool:
            raise TypeError(
                f"default_thinking_mode must be a bool, not {type(self.default_thinking_mode).__name__}"
            )
        for name, allowed in (
            ("reasoning_content_behavior", ("fill_empty", "reject")),
            ("responses_web_search", ("drop", "reject")),
            ("messages_web_search", ("drop", "reject")),
            ("unsupported", ("ignore", "reject")),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be {' or '.join(map(repr, allowed))}, not {shown(value)}")
        for name in ("thinking_max_tokens_upper_bound", "non_thinking_max_tokens_upper_bound"):
            bound = getattr(self, name)
            if type(bound) is not int:
                raise TypeError(f"{name} must be an int, not {type(bound).__name__}")
            if bound < 0:
                raise ValueError(f"{name} must be 0 or more, not {shown(bound)}")
        names = self.model_versions_by_name
        if not isinstance(names, Mapping):
            raise TypeError(f"model_versions_by_name must be a mapping, not {type(names).__name__}")
        object.__setattr__(self, "model_versions_by_name", MappingProxyType(dict(names)))
        for name, version in self.model_versions_by_name.items():
            if not isinstance(name, str):
                raise TypeError(f"model names must be str, not {type(name).__name__}")
            if version not in ("v4", "v4.1"):
                raise ValueError(f"unknown model version {shown(version)}; expected 'v4' or 'v4.1'")

    def with_model_alias(self, name: str, version: ModelVersion) -> ConversionOptions:
        """A copy that also accepts ``name`` (or maps it anew) for ``version``.

        Raises:
            TypeError, ValueError: as :class:`ConversionOptions` (``version`` neither ``"v4"`` nor ``"v4.1"``).
        """
        if not isinstance(name, str):
            raise TypeError(f"model names must be str, not {type(name).__name__}")
        names = dict(self.model_versions_by_name)
        names[name] = version
        return dataclasses.replace(self, model_versions_by_name=names)

    def with_model_versions_by_name(self, names: Mapping[str, ModelVersion]) -> ConversionOptions:
        """A copy whose accepted model names are exactly ``names``.

        Raises:
            TypeError, ValueError: as :class:`ConversionOptions`.
        """
        if not isinstance(names, Mapping):
            raise TypeError(f"model_versions_by_name must be a mapping, not {type(names).__name__}")
        return dataclasses.replace(self, model_versions_by_name=dict(names))

    def replace(self, **changes: object) -> ConversionOptions:
        """A copy with some fields changed (``opts.replace(default_thinking_mode=False)``)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]
