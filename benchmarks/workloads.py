"""Request workloads for the request-path benchmarks: Chat Completions bodies, each with the turn before it.

Every workload is a long multi-turn conversation and the same conversation one round shorter (the request the
client sent before it), both as JSON text. The text is deterministic: standard-library sources and documentation,
and CJK prose made from a fixed random seed.

* ``coding``: a coding agent reading source files (long tool results; mostly ASCII code);
* ``prose``: questions answered with long English documentation passages, with reasoning;
* ``cjk``: a Chinese conversation (CJK characters, full-width punctuation, some Latin terms and numbers);
* ``arguments``: an agent writing files, so the long text is in tool-call arguments (JSON strings).
"""

from __future__ import annotations

import json
import random
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["WORKLOADS", "Workload", "build"]

TOOLS = [
    ("read_file", "Read a file of the repository.", {"path": {"type": "string"}}),
    ("list_dir", "List a directory.", {"path": {"type": "string"}, "depth": {"type": "integer"}}),
    (
        "grep",
        "Search files with a regular expression.",
        {"pattern": {"type": "string"}, "path": {"type": "string"}},
    ),
    ("write_file", "Write a file.", {"path": {"type": "string"}, "content": {"type": "string"}}),
    ("run_tests", "Run the test suite.", {"args": {"type": "array", "items": {"type": "string"}}}),
    ("bash", "Run a shell command.", {"command": {"type": "string"}, "timeout": {"type": "number"}}),
]

SYSTEM = (
    "You are a coding agent working in a Python repository. Read the code before you change it, keep "
    "changes small, run the tests after every change, and explain what you did in one short paragraph."
)

#: Characters of text per prompt token, roughly, to size each workload.
_CHARS_PER_TOKEN = {"coding": 3.9, "prose": 4.4, "cjk": 0.65, "arguments": 3.9}

WORKLOADS = tuple(_CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Workload:
    name: str
    previous: str  # the request one round shorter (JSON text)
    body: str  # the request (JSON text)


def _source_files(limit_chars: int, *, skip: int = 0) -> list[tuple[str, str]]:
    """Distinct standard-library source files, in a fixed order, until about ``limit_chars`` characters."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: list[tuple[str, str]] = []
    total = 0
    for path in sorted(stdlib.glob("*.py"))[skip:]:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not 2_000 <= len(text) <= 24_000:
            continue
        files.append((path.name, text))
        total += len(text)
        if total >= limit_chars and len(files) >= 12:
            break
    return files


def _tool_specs() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {"type": "object", "properties": props, "required": list(props)},
            },
        }
        for name, description, props in TOOLS
    ]


def _coding(chars: int) -> list[list[dict[str, Any]]]:
    rounds = []
    for index, (name, text) in enumerate(_source_files(chars)):
        call_id = f"call_{index:02d}"
        rounds.append(
            [
                {
                    "role": "assistant",
                    "content": "" if index % 3 else f"Looking at {name} next.",
                    "reasoning_content": f"The bug may be in {name}; read it and check how dates are handled.",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": "read_file",
                                "arguments": json.dumps({"path": f"lib/{name}"}),
                            },
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": call_id, "content": text},
            ]
        )
    return rounds


def _arguments(chars: int) -> list[list[dict[str, Any]]]:
    rounds = []
    for index, (name, text) in enumerate(_source_files(chars, skip=40)):
        call_id = f"call_{index:02d}"
        arguments = json.dumps({"path": f"src/{name}", "content": text})
        rounds.append(
            [
                {
                    "role": "assistant",
                    "content": "",
                    "reasoning_content": f"Write {name} with the fix applied.",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "write_file", "arguments": arguments},
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": f"wrote {len(text)} characters to src/{name}",
                },
            ]
        )
    return rounds


def _prose(chars: int) -> list[list[dict[str, Any]]]:
    from pydoc_data.topics import topics

    rounds = []
    total = 0
    for name in sorted(topics):
        text = topics[name]
        if len(text) < 3_000:
            continue
        rounds.append(
            [
                {"role": "user", "content": f"Please explain '{name}' in Python in detail, with examples."},
                {
                    "role": "assistant",
                    "content": text,
                    "reasoning_content": f"The user asks about {name}; quote the reference and add examples.",
                },
            ]
        )
        total += len(text)
        if total >= chars and len(rounds) >= 12:
            break
    return rounds


#: Common CJK ideographs (a fixed slice of the unified block), full-width punctuation and some Latin terms.
_HANZI = [chr(c) for c in range(0x4E00, 0x4E00 + 2_500)]
_KANA = [chr(c) for c in range(0x3041, 0x3097)]
_PUNCT = ["，", "。", "、", "；", "：", "？", "！", "“", "”", "（", "）"]
_LATIN = ["Python", "API", "JSON", "GPU", "DeepSeek", "HTTP", "Linux", "token"]


def _cjk_text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        roll = rng.random()
        if roll < 0.80:
            piece = "".join(rng.choice(_HANZI) for _ in range(rng.randint(1, 4)))
        elif roll < 0.83:
            piece = "".join(rng.choice(_KANA) for _ in range(rng.randint(2, 5)))
        elif roll < 0.95:
            piece = rng.choice(_PUNCT)
        elif roll < 0.98:
            piece = f" {rng.choice(_LATIN)} "
        else:
            piece = str(rng.randint(1, 2026))
        if rng.random() < 0.01:
            piece += "\n\n"
        out.append(piece)
        size += len(piece)
    return "".join(out)


def _cjk(chars: int) -> list[list[dict[str, Any]]]:
    rng = random.Random(13)
    rounds = []
    total = 0
    while total < chars or len(rounds) < 12:
        question = _cjk_text(rng, 120)
        answer = _cjk_text(rng, 4_000)
        rounds.append(
            [
                {"role": "user", "content": question},
                {"role": "assistant", "content": answer, "reasoning_content": _cjk_text(rng, 200)},
            ]
        )
        total += len(question) + len(answer)
    return rounds


def build(name: str, tokens: int, *, model: str = "DeepSeek-V4-Pro") -> Workload:
    """The ``name`` workload of about ``tokens`` prompt tokens, and its previous turn."""
    chars = int(tokens * _CHARS_PER_TOKEN[name])
    rounds = {"coding": _coding, "prose": _prose, "cjk": _cjk, "arguments": _arguments}[name](chars)
    head: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    if name in ("coding", "arguments"):
        head.append({"role": "user", "content": "The date parsing in utils is wrong for leap years. Fix it."})
    else:
        head[0] = {"role": "system", "content": "You are a helpful assistant. Answer thoroughly."}

    def body(messages: list[dict[str, Any]]) -> str:
        request: dict[str, Any] = {"model": model, "messages": head + messages, "reasoning_effort": "high"}
        if name in ("coding", "arguments"):
            request["tools"] = _tool_specs()
        return json.dumps(request, ensure_ascii=False)

    history = [m for r in rounds[:-1] for m in r]
    if name in ("coding", "arguments"):
        # An agent loop: the next request adds the model's tool call and the tool's result.
        return Workload(name=name, previous=body(history), body=body(history + rounds[-1]))
    # A chat: the previous request ended with the user's question; the next one adds the answer and a follow-up.
    follow_up = {"role": "user", "content": "Thanks. Now summarise all of that in one paragraph."}
    return Workload(
        name=name, previous=body(history + rounds[-1][:1]), body=body(history + rounds[-1] + [follow_up])
    )


def in_protocol(chat_body: str, protocol: str) -> str:
    """A Chat Completions body of :func:`build` as the same conversation in ``protocol``: an OpenAI Responses
    body (input items: messages, reasoning, function calls and their outputs) or an Anthropic Messages body
    (thinking, text and tool-use blocks; tool results in user turns). The prompts they render to are the same."""
    chat = json.loads(chat_body)
    if protocol == "chat_completions":
        return chat_body
    tools = [tool["function"] for tool in chat.get("tools", [])]
    if protocol == "responses":
        items: list[dict[str, Any]] = []
        for message in chat["messages"]:
            role = message["role"]
            if role in ("system", "user"):
                items.append({"type": "message", "role": role, "content": message["content"]})
            elif role == "tool":
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": message["tool_call_id"],
                        "output": message["content"],
                    }
                )
            else:
                if message.get("reasoning_content"):
                    text = {"type": "reasoning_text", "text": message["reasoning_content"]}
                    items.append({"type": "reasoning", "summary": [], "content": [text]})
                if message.get("content"):
                    text = {"type": "output_text", "text": message["content"]}
                    items.append({"type": "message", "role": "assistant", "content": [text]})
                for call in message.get("tool_calls") or []:
                    function = call["function"]
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": call["id"],
                            "name": function["name"],
                            "arguments": function["arguments"],
                        }
                    )
        body: dict[str, Any] = {"model": chat["model"], "input": items, "reasoning": {"effort": "high"}}
        if tools:
            body["tools"] = [{"type": "function", **tool} for tool in tools]
        return json.dumps(body, ensure_ascii=False)
    system = None
    messages: list[dict[str, Any]] = []
    for message in chat["messages"]:
        role = message["role"]
        if role == "system":
            system = message["content"]
        elif role == "user":
            messages.append({"role": "user", "content": message["content"]})
        elif role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": message["content"],
            }
            messages.append({"role": "user", "content": [result]})
        else:
            blocks: list[dict[str, Any]] = []
            if message.get("reasoning_content"):
                blocks.append(
                    {"type": "thinking", "thinking": message["reasoning_content"], "signature": "s"}
                )
            if message.get("content"):
                blocks.append({"type": "text", "text": message["content"]})
            for call in message.get("tool_calls") or []:
                function = call["function"]
                arguments = json.loads(function["arguments"])
                blocks.append(
                    {"type": "tool_use", "id": call["id"], "name": function["name"], "input": arguments}
                )
            messages.append({"role": "assistant", "content": blocks})
    body = {
        "model": chat["model"],
        "max_tokens": 32_000,
        "messages": messages,
        "thinking": {"type": "enabled", "budget_tokens": 16_000},
    }
    if system is not None:
        body["system"] = system
    if tools:
        body["tools"] = [
            {"name": t["name"], "description": t.get("description", ""), "input_schema": t["parameters"]}
            for t in tools
        ]
    return json.dumps(body, ensure_ascii=False)
