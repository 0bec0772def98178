"""Chat Completions chunks -> the complete ``chat.completion`` object (behavior.md#accumulation).

Works on chunk dicts, ours or parsed from a recorded wire transcript.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dscodec.protocols._shape import INT, INT_OR_NONE, LOGPROB_ENTRY, STR, STR_OR_NONE, foreign_event

__all__ = ["RESPONSE_SHAPE", "accumulate_chunks"]

#: The types of the complete response's fields (dscodec.protocols._shape), checked when it was built from event
#: dicts from outside.
RESPONSE_SHAPE = {
    "id": STR_OR_NONE,
    "object": STR,
    "created": INT_OR_NONE,
    "model": STR_OR_NONE,
    "system_fingerprint": STR_OR_NONE,
    "choices": [
        {
            "index": INT,
            "finish_reason": STR_OR_NONE,
            "message": {
                "role": STR,
                "content": STR_OR_NONE,
                "reasoning_content": STR_OR_NONE,
                "tool_calls": [
                    {
                        "index": INT,
                        "id": STR_OR_NONE,
                        "type": STR_OR_NONE,
                        "function": {"name": STR_OR_NONE, "arguments": STR},
                    }
                ],
            },
            "logprobs": {"content": [LOGPROB_ENTRY], "reasoning_content": [LOGPROB_ENTRY]},
        }
    ],
    "usage": {
        "prompt_tokens": INT,
        "completion_tokens": INT,
        "total_tokens": INT,
        "prompt_tokens_details": {"cached_tokens": INT_OR_NONE},
        "completion_tokens_details": {"reasoning_tokens": INT_OR_NONE},
        "prompt_cache_hit_tokens": INT,
        "prompt_cache_miss_tokens": INT,
    },
}


def accumulate_chunks(
    chunks: Iterable[Mapping[str, Any]],
    *,
    response_id: str | None = None,
    model: str | None = None,
    created: int | None = None,
) -> dict[str, Any]:
    """The complete response the chunks add up to.

    ``reasoning_content`` appears when the stream announced reasoning (thinking mode), ``tool_calls`` when
    there were calls; ``logprobs`` holds the entries of each field that had any. An error frame in the stream
    makes the result that error body. ``response_id``, ``model`` and ``created`` override the chunks' values.
    Text and argument fragments that are not strings are skipped. The cost is linear in the size of the stream:
    fragments are collected and joined once.
    """
    first: Mapping[str, Any] | None = None
    content: list[str] = []
    reasoning: list[str] | None = None
    calls: dict[int, dict[str, Any]] = {}
    # Per call index: its argument fragments, joined once at the end (``+=`` per delta is quadratic).
    arguments: dict[int, list[str]] = {}
    logprobs: dict[str, list[Any]] = {}
    finish: Any = None
    usage: Any = None
    fingerprint: Any = None
    for index, chunk in enumerate(chunks):
        if "choices" not in chunk:
            if "error" in chunk and "type" not in chunk:  # an error frame
                return dict(chunk)
            raise foreign_event("a Chat Completions", index, chunk)
        if first is None:
            first = chunk
            fingerprint = chunk.get("system_fingerprint")
        if chunk.get("usage") is not None:
            usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str):
                content.append(text)
            thought = delta.get("reasoning_content")
            if isinstance(thought, str):
                if reasoning is None:
                    reasoning = []
                reasoning.append(thought)
            for call in delta.get("tool_calls") or ():
                index = call.get("index", len(calls))
                function = call.get("function") or {}
                entry = calls.get(index)
                if entry is None:
                    entry = calls[index] = {
                        "index": index,
                        "id": call.get("id"),
                        "type": call.get("type", "function"),
                        "function": {"name": function.get("name"), "arguments": ""},
                    }
                    arguments[index] = []
                fragment = function.get("arguments")
                if isinstance(fragment, str):
                    arguments[index].append(fragment)
            lp = choice.get("logprobs")
            if isinstance(lp, Mapping):
                for field in ("content", "reasoning_content"):
                    if lp.get(field):
                        logprobs.setdefault(field, []).extend(lp[field])
            if choice.get("finish_reason") is not None:
                finish = choice["finish_reason"]

    result: dict[str, Any] = {
        "id": response_id if response_id is not None else (first or {}).get("id"),
        "object": "chat.completion",
        "created": created if created is not None else (first or {}).get("created"),
        "model": model if model is not None else (first or {}).get("model"),
    }
    if first is None:
        result["choices"] = []
        result["system_fingerprint"] = None
        return result
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
    if reasoning is not None:
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        for index, entry in calls.items():
            entry["function"]["arguments"] = "".join(arguments[index])
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    result["choices"] = [
        {
            "index": 0,
            "message": message,
            "logprobs": {k: logprobs[k] for k in ("content", "reasoning_content") if k in logprobs} or None,
            "finish_reason": finish,
        }
    ]
    result["usage"] = usage
    result["system_fingerprint"] = fingerprint
    return result
