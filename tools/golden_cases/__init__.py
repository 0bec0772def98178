"""Golden request cases, one module per protocol suite, recorded by ``tools/record_golden.py``.

A protocol suite module (``chat_completions.py``, ``responses.py``, ``messages.py``) exposes:

* ``PROTOCOL``: the protocol name written into every ``case.json`` (``"chat_completions"``);
* ``REQUEST_CLASS``: the name of the reference's request class that parses the body
  (``"ChatCompletionRequest"``);
* ``cases()``: the list of :class:`Case` objects, built deterministically (any variation is seeded);
* optionally ``RECORD_ECHO = True`` (Responses): the recorder also writes the request's echo fields and its
  namespace tool map.

The cross-protocol module (``cross_protocol.py``, fixture folder ``cross``) exposes ``cases()`` returning
:class:`CrossCase` objects instead: one conversation written as a body of each protocol.

Case names say what the outcome must be: a name containing ``-invalid-`` must fail conversion, every other
name must succeed. The recorder checks this, so a case that silently stops testing what its name claims is
caught when the suite is re-recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["MODELS", "OPTION_KEYS", "Body", "Case", "CrossCase", "Raw", "both", "check_unique", "encode_body"]

#: A request body: a JSON value serialised by :func:`encode_body`, or the exact text/bytes to send.
Body = Mapping[str, Any] | list[Any] | str | bytes | None | int | float | bool

#: Name prefix and official model name of each version; every suite builds its cases for these two.
MODELS: tuple[tuple[str, str], ...] = (("v4", "DeepSeek-V4-Pro"), ("v41", "DeepSeek-V4.1-Flash"))

_NAME = re.compile(r"^(v4|v41)-[a-z0-9]+(-[a-z0-9]+)*$")

#: Option keys ``case.json`` may carry, in dscodec's spelling (see tools/README.md).
OPTION_KEYS = frozenset(
    {
        "default_thinking_mode",
        "reasoning_content_behavior",
        "thinking_max_tokens_upper_bound",
        "non_thinking_max_tokens_upper_bound",
        "model_aliases",
        "model_versions_by_name",
        "responses_web_search",
        "messages_web_search",
    }
)


@dataclass(frozen=True, kw_only=True)
class Raw:
    """A body given as exact text or bytes (malformed JSON, unusual escapes, number spellings)."""

    data: str | bytes


@dataclass(frozen=True, kw_only=True)
class Case:
    """One golden request.

    Attributes:
        name: folder name: lowercase words joined by ``-``, prefixed ``v4-`` or ``v41-``; ``-invalid-`` marks
            a request the reference must refuse.
        description: what the case covers, in one or two sentences.
        body: the request; a JSON value (serialised with :func:`encode_body`) or :class:`Raw` bytes/text.
        options: non-default conversion options in dscodec's spelling.
        deviation: the id of a DEVIATIONS.md entry (``"D9"``, ``"D10"``) when dscodec deliberately answers this
            request differently from the recorded reference; written to ``case.json`` so the golden harness can
            route the case to the deviation's own test instead of comparing it.
    """

    name: str
    description: str
    body: Body | Raw
    options: Mapping[str, Any] = field(default_factory=dict)
    deviation: str | None = None

    @property
    def expects_error(self) -> bool:
        return "-invalid-" in self.name

    def request_bytes(self) -> bytes:
        """The exact bytes sent to the reference and written to ``request.json``."""
        if isinstance(self.body, Raw):
            data = self.body.data
            return data.encode("utf-8") if isinstance(data, str) else data
        return encode_body(self.body)

    def validate(self) -> None:
        """Check the name and option spelling; raises ``ValueError`` describing the first problem."""
        if not _NAME.match(self.name):
            raise ValueError(
                f"case name {self.name!r} must be lowercase words joined by '-', prefixed v4-/v41-"
            )
        unknown = set(self.options) - OPTION_KEYS
        if unknown:
            raise ValueError(f"case {self.name}: unknown option(s) {sorted(unknown)}")
        if not self.description.strip():
            raise ValueError(f"case {self.name}: empty description")
        if self.deviation is not None and not re.fullmatch(r"D[0-9]+", self.deviation):
            raise ValueError(f"case {self.name}: deviation must look like 'D9', got {self.deviation!r}")


@dataclass(frozen=True, kw_only=True)
class CrossCase:
    """One conversation written as a Chat Completions, a Responses and a Messages request body.

    The reference must render all three to the same prompt, special spans and ids; the recorder refuses the case
    otherwise. Cross cases are always valid, so their names never contain ``-invalid-``.

    Attributes:
        name: folder name, prefixed ``v4-`` or ``v41-`` like :class:`Case`.
        description: what the conversation exercises.
        chat_completions: the Chat Completions body.
        responses: the Responses body.
        messages: the Messages body.
        options: non-default conversion options in dscodec's spelling, applied to all three.
    """

    name: str
    description: str
    chat_completions: Mapping[str, Any]
    responses: Mapping[str, Any]
    messages: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)

    def bodies(self) -> dict[str, bytes]:
        """The exact request bytes per protocol, keyed by protocol name."""
        return {
            "chat_completions": encode_body(self.chat_completions),
            "responses": encode_body(self.responses),
            "messages": encode_body(self.messages),
        }

    def validate(self) -> None:
        """Check the name and option spelling like :meth:`Case.validate`; cross cases must not be invalid."""
        Case(name=self.name, description=self.description, body=None, options=self.options).validate()
        if "-invalid-" in self.name:
            raise ValueError(f"cross case {self.name}: cross cases must convert successfully")


_AnyCase = TypeVar("_AnyCase", Case, CrossCase)


def both(
    slug: str,
    description: str,
    make: Callable[..., Body | Raw],
    *,
    options: Mapping[str, Any] | None = None,
    only: str | None = None,
    deviation: str | None = None,
) -> list[Case]:
    """The same scenario for V4 and V4.1: ``make(model_name)`` builds the body, names are ``<v4|v41>-<slug>``.

    Args:
        slug: the name without its version prefix.
        description: written to ``case.json`` with the version appended.
        make: builds the body for one official model name.
        options: non-default conversion options (dscodec spelling), the same for both versions.
        only: ``"v4"`` or ``"v41"`` to build a single version.
        deviation: see :attr:`Case.deviation`.
    """
    out = []
    for prefix, model in MODELS:
        if only is not None and prefix != only:
            continue
        out.append(
            Case(
                name=f"{prefix}-{slug}",
                description=f"{description} ({'V4' if prefix == 'v4' else 'V4.1'})",
                body=make(model),
                options=dict(options or {}),
                deviation=deviation,
            )
        )
    return out


def encode_body(body: Body) -> bytes:
    """Serialise a JSON body the way most clients do: ``json.dumps`` defaults, non-ASCII kept raw, UTF-8."""
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def check_unique(cases: Iterable[_AnyCase]) -> list[_AnyCase]:
    """Validate every case and refuse duplicate names (two cases would write one folder)."""
    seen: set[str] = set()
    result: list[_AnyCase] = []
    for case in cases:
        case.validate()
        if case.name in seen:
            raise ValueError(f"duplicate case name {case.name!r}")
        seen.add(case.name)
        result.append(case)
    return result
