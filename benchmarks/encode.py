"""Request-path benchmark: a long coding-agent conversation, dscodec against the reference, in one process.

The conversation: a system prompt, six tools, and 25+ rounds in which the assistant reasons, calls a tool and
gets back a distinct source file from Python's standard library, until the prompt is about 80K tokens.

dscodec:        convert (Chat Completions body -> request) + render + encode
reference:      ChatCompletionRequest(body).convert() + encoding.encode(conversation)

Both start from the same JSON body string. Each side runs several times, in turn; the median is reported, with
the ratio dscodec / reference (below 1.0 means dscodec is faster). dscodec is measured twice: with its gap cache
off (every gap tokenized anew: the cold cost) and on (as a server runs it). A third measurement replays an agent
loop in which every request resends the history so far plus one round, from an empty cache.

    python benchmarks/encode.py [--runs 9] [--tokens 80000] [--version v4|v4.1]

The reference is optional (``pip install deepseek-recipe``); without it only dscodec's figures are printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dscodec
from dscodec.vocab import bundled_tokenizer_path, with_added_tokens

TOOLS = [
    ("read_file", "Read a file of the repository.", {"path": {"type": "string"}}),
    ("list_dir", "List a directory.", {"path": {"type": "string"}, "depth": {"type": "integer"}}),
    (
        "grep",
        "Search files with a regular expression.",
        {"pattern": {"type": "string"}, "path": {"type": "string"}},
    ),
    ("apply_patch", "Apply a unified diff.", {"patch": {"type": "string"}}),
    ("run_tests", "Run the test suite.", {"args": {"type": "array", "items": {"type": "string"}}}),
    ("bash", "Run a shell command.", {"command": {"type": "string"}, "timeout": {"type": "number"}}),
]

SYSTEM = (
    "You are a coding agent working in a Python repository. Read the code before you change it, keep "
    "changes small, run the tests after every change, and explain what you did in one short paragraph."
)


def source_files(limit_chars: int) -> list[tuple[str, str]]:
    """Distinct standard-library source files, in a fixed order, until about ``limit_chars`` characters."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: list[tuple[str, str]] = []
    total = 0
    for path in sorted(stdlib.glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not 2_000 <= len(text) <= 24_000:
            continue
        files.append((path.name, text))
        total += len(text)
        if total >= limit_chars and len(files) >= 25:
            break
    return files


def build_messages(tokens: int) -> list[dict[str, Any]]:
    """The conversation: system, user, then rounds of (assistant call, tool result) until about ``tokens``."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "The date parsing in utils is wrong for leap years. Find and fix it."},
    ]
    for index, (name, text) in enumerate(source_files(int(tokens * 3.9))):
        call_id = f"call_{index:02d}"
        messages.append(
            {
                "role": "assistant",
                "content": "" if index % 3 else f"Looking at {name} next.",
                "reasoning_content": f"The bug may be in {name}; read it and check how dates are handled.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"path": f"lib/{name}"})},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
    return messages


def build_body(model: str, messages: list[dict[str, Any]]) -> str:
    """A Chat Completions request body (JSON text) for ``messages``, with the six tools."""
    tools = [
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
    return json.dumps({"model": model, "messages": messages, "tools": tools, "reasoning_effort": "high"})


def interleaved_medians(sides: list[Callable[[], object]], runs: int) -> list[float]:
    """Median seconds of each side, running the sides in turn so that load changes hit them alike."""
    for side in sides:
        side()  # warm-up: lazily built tables on both sides
    times: list[list[float]] = [[] for _ in sides]
    for _ in range(runs):
        for side, bucket in zip(sides, times):
            start = time.perf_counter()
            side()
            bucket.append(time.perf_counter() - start)
    return [statistics.median(bucket) for bucket in times]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--tokens", type=int, default=80_000)
    parser.add_argument("--version", choices=["v4", "v4.1"], default="v4")
    args = parser.parse_args()

    model = "DeepSeek-V4-Pro" if args.version == "v4" else "DeepSeek-V4.1-Flash"
    messages = build_messages(args.tokens)
    body = build_body(model, messages)
    tokenizer = None if args.version == "v4" else with_added_tokens(None, ["<｜System｜>"])
    cold = dscodec.PromptEncoder(tokenizer, cache_chars=0)
    warm = dscodec.PromptEncoder(tokenizer)

    def ours_cold() -> list[int]:
        return cold.encode(dscodec.convert("chat_completions", body))

    def ours_warm() -> list[int]:
        return warm.encode(dscodec.convert("chat_completions", body))

    our_ids = ours_cold()
    print(
        f"prompt: {len(our_ids)} tokens, {len(body)} bytes of JSON, {args.version}, median of {args.runs} runs"
    )
    try:
        import deepseek_recipe as ref
    except ImportError:
        cold_s, warm_s = interleaved_medians([ours_cold, ours_warm], args.runs)
        print(f"dscodec convert+render+encode, no cache:  {cold_s * 1000:8.1f} ms")
        print(f"dscodec convert+render+encode, cache:     {warm_s * 1000:8.1f} ms")
        print("reference not installed (pip install deepseek-recipe): no ratio")
        return
    if tokenizer is None:
        ref_tokenizer = ref.Tokenizer.from_file(str(bundled_tokenizer_path()))
        encoding = ref.DeepseekV4Encoding().with_tokenizer(ref_tokenizer)
    else:
        ref_tokenizer = ref.Tokenizer.from_str(tokenizer.to_str())
        encoding = ref.DeepseekV41Encoding().with_tokenizer(ref_tokenizer)
    options = ref.ConversionOptions()

    def reference() -> list[int]:
        request = ref.ChatCompletionRequest(body).convert(options)
        return list(encoding.encode(request.conversation))

    cold_s, warm_s, ref_s = interleaved_medians([ours_cold, ours_warm, reference], args.runs)
    print(f"identical ids: {our_ids == reference() == ours_warm()}")
    print("same 80K-token request again and again:")
    print(f"  reference convert+encode:                {ref_s * 1000:8.1f} ms")
    print(f"  dscodec, gap cache off (cold):           {cold_s * 1000:8.1f} ms   ratio {cold_s / ref_s:5.2f}")
    print(f"  dscodec, gap cache on (a serving loop):  {warm_s * 1000:8.1f} ms   ratio {warm_s / ref_s:5.2f}")

    # An agent loop: request k resends the whole history plus one more round (call + tool result).
    rounds = [build_body(model, messages[: 2 + 2 * k]) for k in range(1, (len(messages) - 2) // 2 + 1)]
    loop_encoder = dscodec.PromptEncoder(tokenizer)

    def ours_loop() -> int:
        loop_encoder.clear_cache()
        return sum(len(loop_encoder.encode(dscodec.convert("chat_completions", b))) for b in rounds)

    def reference_loop() -> int:
        return sum(
            len(encoding.encode(ref.ChatCompletionRequest(b).convert(options).conversation)) for b in rounds
        )

    loop_s, ref_loop_s = interleaved_medians([ours_loop, reference_loop], max(3, args.runs // 3))
    print(
        f"agent loop: {len(rounds)} requests, each the history so far plus one round ({ours_loop()} tokens in all):"
    )
    print(f"  reference:                               {ref_loop_s * 1000:8.1f} ms")
    print(
        f"  dscodec (cache starts empty):            {loop_s * 1000:8.1f} ms   ratio {loop_s / ref_loop_s:5.2f}"
    )


if __name__ == "__main__":
    main()
