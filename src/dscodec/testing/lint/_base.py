"""What the per-protocol linters share: the report, parsed frames, and the checks every protocol makes (text
that leaks markup, tool-call arguments, error shapes, usage counts)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dscodec.testing._sse import Frame
from dscodec.testing.lint._rules import RULES, Finding

__all__ = [
    "DSML",
    "THINK_END",
    "Event",
    "Report",
    "arr",
    "check_anthropic_error",
    "check_arguments",
    "check_counts",
    "check_openai_error",
    "check_text",
    "count",
    "obj",
    "strict_json",
]

#: The DSML token every tool-call tag starts with (both model versions).
DSML = "｜DSML｜"
#: The reasoning terminator.
THINK_END = "</think>"


@dataclass(frozen=True, slots=True)
class Event:
    """One frame of a stream with its data parsed: a JSON object, or None (not JSON, not an object, ``[DONE]``)."""

    index: int
    frame: Frame
    data: dict[str, Any] | None


class Report:
    """Collects findings; each code is checked against the rule table."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(self, code: str, message: str, index: int | None = None, path: str = "") -> None:
        if code not in RULES:  # pragma: no cover - a typo in a linter
            raise KeyError(f"unknown lint code {code}")
        self.findings.append(Finding(code, message, index, path))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """``text`` read as JSON by RFC 8259 (NaN and Infinity refused).

    Raises:
        ValueError: not JSON.
    """
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("the text is nested too deeply to read") from None


def check_text(report: Report, text: str, index: int | None, path: str, *, answer: bool = True) -> None:
    """Flag markup in ``text``: DSML always (GEN003); ``</think>`` when it is reasoning or answer text (GEN004)."""
    if DSML in text:
        at = text.index(DSML)
        report.add(
            "GEN003", f"DSML markup at character {at}: {text[max(0, at - 20) : at + 30]!r}", index, path
        )
    if answer and THINK_END in text:
        report.add("GEN004", f"{THINK_END} at character {text.index(THINK_END)}", index, path)


def check_arguments(report: Report, arguments: Any, index: int | None, path: str) -> None:
    """Flag finished tool-call arguments that are not a JSON object (GEN005); DSML in them is GEN003."""
    if not isinstance(arguments, str):
        report.add("GEN005", f"the arguments are a {type(arguments).__name__}, not a JSON text", index, path)
        return
    if DSML in arguments:
        check_text(report, arguments, index, path, answer=False)
        return
    try:
        value = strict_json(arguments)
    except ValueError as exc:
        report.add("GEN005", f"the arguments are not JSON ({exc}): {arguments[:60]!r}", index, path)
        return
    if not isinstance(value, dict):
        report.add("GEN005", f"the arguments are a JSON {type(value).__name__}, not an object", index, path)


def check_openai_error(report: Report, body: Any, index: int | None, path: str = "") -> None:
    """The OpenAI error envelope: ``{"error": {"message": str, "type": str, "param": str|null, "code": ...}}``."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        report.add("GEN007", "an OpenAI error body needs an 'error' object", index, path)
        return
    problems = []
    if not isinstance(error.get("message"), str):
        problems.append("error.message is not a string")
    if not isinstance(error.get("type"), str):
        problems.append("error.type is not a string")
    if error.get("param") is not None and not isinstance(error.get("param"), str):
        problems.append("error.param is neither a string nor null")
    if error.get("code") is not None and not isinstance(error.get("code"), (str, int)):
        problems.append("error.code is neither a string, an integer nor null")
    if problems:
        report.add("GEN007", "; ".join(problems), index, path)


def check_anthropic_error(report: Report, body: Any, index: int | None, path: str = "") -> None:
    """Anthropic's error shape: ``{"type": "error", "error": {"type": str, "message": str}}``."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(body, Mapping) or body.get("type") != "error" or not isinstance(error, Mapping):
        report.add("GEN007", "an Anthropic error needs type 'error' and an 'error' object", index, path)
        return
    problems = [
        f"error.{key} is not a string" for key in ("type", "message") if not isinstance(error.get(key), str)
    ]
    if problems:
        report.add("GEN007", "; ".join(problems), index, path)


def obj(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def arr(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def count(value: Any) -> int | None:
    """``value`` when it is a token count (an int, not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_counts(
    report: Report,
    code: str,
    usage: Mapping[str, Any],
    index: int | None,
    path: str,
    *,
    total: tuple[str, str, str] | None = None,
    parts: tuple[tuple[str, str, str], ...] = (),
) -> None:
    """Flag (under ``code``) negative counts, a ``total`` that is not the sum of its two terms, and parts larger
    than their whole.

    Args:
        total: ``(total_key, first_key, second_key)``.
        parts: ``(details_key, part_key, whole_key)``: ``usage[details_key][part_key] <= usage[whole_key]``.
    """
    problems: list[str] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, f"{where}.{key}" if where else str(key))
        elif count(value) is not None and value < 0:
            problems.append(f"{where} is negative ({value})")

    walk(usage, "")
    if total is not None:
        whole, first, second = (count(usage.get(key)) for key in total)
        if whole is not None and first is not None and second is not None and whole != first + second:
            problems.append(f"{total[0]} is {whole}, not {total[1]} + {total[2]} = {first + second}")
    for details_key, part_key, whole_key in parts:
        details = usage.get(details_key)
        part = count(details.get(part_key)) if isinstance(details, Mapping) else None
        whole = count(usage.get(whole_key))
        if part is not None and whole is not None and part > whole:
            problems.append(f"{details_key}.{part_key} ({part}) is more than {whole_key} ({whole})")
    if problems:
        report.add(code, "; ".join(problems), index, path)
