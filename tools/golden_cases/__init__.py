"""Golden request cases, one module per protocol suite, recorded by ``tools/record_golden.py``.

A suite module (``chat_completions.py``, later ``responses.py`` and ``messages.py``) exposes:

* ``PROTOCOL``: the protocol name written into every ``case.json`` (``"chat_completions"``);
* ``REQUEST_CLASS``: the name of the reference's request class that parses the body
  (``"ChatCompletionRequest"``);
* ``cases()``: the list of :class:`Case` objects, built deterministically (any variation is seeded).

Case names say what the outcome must be: a name containing ``-invalid-`` must fail conversion, every other
name must succeed. The recorder checks this, so a case that silently stops testing what its name claims is
caught when the suite is re-recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["OPTION_KEYS", "Body", "Case", "Raw", "check_unique", "encode_body"]

#: A request body: a JSON value serialised by :func:`encode_body`, or the exact text/bytes to send.
Body = Mapping[str, Any] | list[Any] | str | bytes | None | int | float | bool

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
    """

    name: str
    description: str
    body: Body | Raw
    options: Mapping[str, Any] = field(default_factory=dict)

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


def encode_body(body: Body) -> bytes:
    """Serialise a JSON body the way most clients do: ``json.dumps`` defaults, non-ASCII kept raw, UTF-8."""
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def check_unique(cases: Iterable[Case]) -> list[Case]:
    """Validate every case and refuse duplicate names (two cases would write one folder)."""
    seen: set[str] = set()
    result: list[Case] = []
    for case in cases:
        case.validate()
        if case.name in seen:
            raise ValueError(f"duplicate case name {case.name!r}")
        seen.add(case.name)
        result.append(case)
    return result
