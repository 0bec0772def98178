"""Chat Completions: the chunk stream and the complete ``chat.completion``.

The grammar (OpenAI's streaming guide, with DeepSeek's usage rule): every chunk is a ``chat.completion.chunk``
with one ``id``, ``created`` and ``model``; a choice's first delta announces ``role: "assistant"``; a tool call
is announced by its first delta (``index``, ``id``, ``type: "function"``, ``function.name``) and then grows by
``function.arguments`` pieces under the same index, indices counting up from 0; each choice ends with exactly one
``finish_reason``; the usage rides on the last chunk (always with ``stream_options.include_usage``, and
DeepSeek's API sends it without too) and on no other; ``data: [DONE]`` ends the stream. A ``{"error": ...}`` frame
ends a failed stream instead (optionally followed by ``[DONE]``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dscodec.testing.lint import _sdk
from dscodec.testing.lint._base import (
    Event,
    Report,
    arr,
    check_arguments,
    check_counts,
    check_openai_error,
    check_text,
    obj,
)

__all__ = ["lint_chat_body", "lint_chat_stream"]

_CUT = ("length", "content_filter")  # finish reasons that may leave a call's arguments unfinished


@dataclass
class _Call:
    id: Any
    name: Any
    arguments: list[str] = field(default_factory=list)
    at: int = 0  # the frame that announced it


@dataclass
class _Choice:
    seen: bool = False
    finish: str | None = None
    finish_at: int | None = None
    reasoning: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    # The ids of the calls, to find a reused one at once: ids as they are where they hash, else by their JSON.
    ids: set[Any] = field(default_factory=set)


#: A usage object's total and the counts it adds up, and each detail count with the count it is part of.
_USAGE_TOTAL = ("total_tokens", "prompt_tokens", "completion_tokens")
_USAGE_PARTS = (
    ("prompt_tokens_details", "cached_tokens", "prompt_tokens"),
    ("completion_tokens_details", "reasoning_tokens", "completion_tokens"),
)


def _usage(report: Report, usage: Mapping[str, Any], index: int | None, path: str) -> None:
    check_counts(report, "CHT010", usage, index, path, total=_USAGE_TOTAL, parts=_USAGE_PARTS)


def _include_usage(request: Mapping[str, Any] | None) -> bool:
    options = request.get("stream_options") if request is not None else None
    return isinstance(options, Mapping) and options.get("include_usage") is True


def _id_key(value: Any) -> Any:
    """What a call's id is told apart by: the id itself when it hashes (a str, as it should be), else its JSON
    (or, for a value JSON cannot write, the value's identity)."""
    try:
        hash(value)
    except TypeError:
        try:
            return ("json", json.dumps(value, sort_keys=True))
        except (TypeError, ValueError, RecursionError):
            return ("object", id(value))
    return value


def _tool_calls(report: Report, state: _Choice, calls: Any, index: int, path: str) -> None:
    if not isinstance(calls, list):
        return
    for j, call in enumerate(calls):
        if not isinstance(call, Mapping) or isinstance(call.get("index"), bool):
            continue
        position = call.get("index")
        if not isinstance(position, int):
            continue
        where = f"{path}.tool_calls[{j}]"
        function = obj(call.get("function"))
        name = function.get("name")
        known = state.calls.get(position)
        if known is None:
            if position != len(state.calls):
                report.add(
                    "CHT004",
                    f"tool call index {position}; the next new call is {len(state.calls)}",
                    index,
                    where,
                )
            missing = [
                what
                for what, ok in (
                    ("id", isinstance(call.get("id"), str) and call.get("id")),
                    ('type "function"', call.get("type") == "function"),
                    ("function.name", isinstance(name, str) and name),
                )
                if not ok
            ]
            if missing:
                report.add(
                    "CHT003",
                    f"the first delta of tool call {position} lacks {', '.join(missing)}",
                    index,
                    where,
                )
            key = _id_key(call.get("id"))
            if call.get("id") and key in state.ids:
                report.add("CHT005", f"tool call {position} reuses the id {call.get('id')!r}", index, where)
            state.ids.add(key)
            known = state.calls[position] = _Call(call.get("id"), name, at=index)
        else:
            if call.get("id") is not None and call.get("id") != known.id:
                report.add(
                    "CHT005", f"tool call {position} changes its id to {call.get('id')!r}", index, where
                )
            if name not in (None, "") and name != known.name:
                report.add("CHT005", f"tool call {position} changes its name to {name!r}", index, where)
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            known.arguments.append(arguments)


def lint_chat_stream(
    events: Sequence[Event], report: Report, *, request: Mapping[str, Any] | None, transport: bool, sdk: bool
) -> None:
    """Check a chunk stream (GEN001/GEN002/GEN008/GEN009 are checked by the caller)."""
    first: dict[str, Any] | None = None
    choices: dict[int, _Choice] = {}
    usage_at: list[int] = []
    last_chunk: int | None = None
    done = errored = False
    end: int | None = None
    for event in events:
        data = event.data
        if end is not None:
            if event.frame.is_done and errored and not done:
                done = True  # [DONE] after an error frame is tolerated
                continue
            report.add("CHT012", f"a frame after the end of the stream (frame {end})", event.index)
            continue
        if event.frame.is_done:
            done, end = True, event.index
            continue
        if data is None:
            continue
        if "error" in data and "choices" not in data:
            check_openai_error(report, data, event.index)
            errored, end = True, event.index
            continue
        if sdk:
            _sdk.validate_event(report, "chat_completions", None, event.frame.data, event.index)
        if data.get("object") != "chat.completion.chunk":
            report.add(
                "CHT002",
                f"object is {data.get('object')!r}, not 'chat.completion.chunk'",
                event.index,
                "object",
            )
        if first is None:
            first = data
        else:
            changed = [key for key in ("id", "created", "model") if data.get(key) != first.get(key)]
            if changed:
                report.add("CHT002", f"{', '.join(changed)} differ from the first chunk's", event.index)
        last_chunk = event.index
        usage = data.get("usage")
        if isinstance(usage, Mapping):
            usage_at.append(event.index)
            _usage(report, usage, event.index, "usage")
        entries = data.get("choices")
        if not isinstance(entries, list):
            continue
        for k, choice in enumerate(entries):
            if not isinstance(choice, Mapping) or not isinstance(choice.get("index"), int):
                continue
            path = f"choices[{k}]"
            state = choices.setdefault(choice["index"], _Choice())
            delta = obj(choice.get("delta"))
            finish = choice.get("finish_reason")
            if state.finish is not None and (
                finish is not None
                or any(delta.get(key) for key in ("role", "content", "reasoning_content", "tool_calls"))
            ):
                report.add(
                    "CHT006",
                    f"choice {choice['index']} continues after its finish (frame {state.finish_at})",
                    event.index,
                    path,
                )
                continue
            if not state.seen:
                state.seen = True
                if delta.get("role") != "assistant":
                    report.add(
                        "CHT001",
                        f"the first delta has role {delta.get('role')!r}, not 'assistant'",
                        event.index,
                        f"{path}.delta",
                    )
            elif delta.get("role") is not None:
                report.add("CHT001", "a role after the first delta", event.index, f"{path}.delta.role")
            for key, sink in (("reasoning_content", state.reasoning), ("content", state.content)):
                if isinstance(delta.get(key), str):
                    sink.append(delta[key])
            _tool_calls(report, state, delta.get("tool_calls"), event.index, f"{path}.delta")
            if finish is not None:
                state.finish, state.finish_at = finish, event.index
    if not events:
        return
    if not errored:
        if transport and not done:
            report.add("CHT011", "the stream does not end with data: [DONE]")
        for number, state in sorted(choices.items()):
            if state.finish is None:
                report.add("CHT006", f"choice {number} has no finish_reason")
            elif state.finish == "tool_calls" and not state.calls:
                report.add(
                    "CHT007",
                    f"choice {number} finishes with tool_calls but has none",
                    state.finish_at,
                    "finish_reason",
                )
        if _include_usage(request) and not usage_at:
            report.add("CHT008", "stream_options.include_usage is set but no chunk carries usage")
    for at in usage_at:
        if at != last_chunk:
            report.add("CHT009", "usage on a chunk that is not the last one", at, "usage")
    for number, state in sorted(choices.items()):
        check_text(report, "".join(state.reasoning), None, f"choices[{number}] reasoning_content deltas")
        check_text(report, "".join(state.content), None, f"choices[{number}] content deltas")
        for position, call in sorted(state.calls.items()):
            where = f"choices[{number}].tool_calls[{position}]"
            if isinstance(call.name, str):
                check_text(report, call.name, call.at, f"{where}.function.name", answer=False)
            if not errored and state.finish is not None and state.finish not in _CUT:
                check_arguments(report, "".join(call.arguments), call.at, f"{where} arguments deltas")


def lint_chat_body(report: Report, body: Mapping[str, Any], text: str, *, sdk: bool) -> None:
    """Check a complete ``chat.completion`` (or an error body)."""
    if "error" in body and "choices" not in body:
        check_openai_error(report, body, None)
        return
    if sdk:
        _sdk.validate_body(report, "chat_completions", text)
    usage = body.get("usage")
    if isinstance(usage, Mapping):
        _usage(report, usage, None, "usage")
    choices = body.get("choices")
    for k, choice in enumerate(choices if isinstance(choices, list) else []):
        if not isinstance(choice, Mapping):
            continue
        message = obj(choice.get("message"))
        path = f"choices[{k}].message"
        for key in ("reasoning_content", "content"):
            if isinstance(message.get(key), str):
                check_text(report, message[key], None, f"{path}.{key}")
        calls = arr(message.get("tool_calls"))
        if choice.get("finish_reason") == "tool_calls" and not calls:
            report.add(
                "CHT007", "finish_reason tool_calls without tool calls", None, f"choices[{k}].finish_reason"
            )
        for j, call in enumerate(calls):
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                continue
            if isinstance(function.get("name"), str):
                check_text(
                    report, function["name"], None, f"{path}.tool_calls[{j}].function.name", answer=False
                )
            if choice.get("finish_reason") not in _CUT:
                check_arguments(
                    report, function.get("arguments"), None, f"{path}.tool_calls[{j}].function.arguments"
                )
