"""Every request-path figure in one run: start-up, memory, cold encode, the same request again, the next turn.

    python benchmarks/request.py [--runs 7] [--tokens 90000] [--workloads coding,prose,cjk,arguments]

Start-up and memory are measured in fresh processes (``/proc/self/status`` VmRSS; ``python -X importtime``):

* ``import dscodec`` time, and RSS after the import, after ``Vocabulary.load(None)`` and after the first large
  request; a process that only loads the same file with ``tokenizers``, and one that loads the reference;
* the first request after ``PromptEncoder()`` against later runs of the same request (caches off), plus the
  first use of the byte table and of ``count_tokens`` (what a first streamed response needs).

Then, per workload (``benchmarks/workloads.py``), in this process, the sides run in turn and medians are
reported with the ratio to the reference measured alongside (below 1.0 means dscodec is faster):

* cold: convert + render + encode with every cache off, against the reference's convert + encode;
* the floor: Hugging Face ``tokenizers`` alone, one ``encode_batch_fast`` call over the prompt's text gaps;
* the breakdown of the cold figure (convert, render, encode);
* the same request again through a caching encoder (a serving loop);
* the next turn: an encoder that has just encoded the previous request encodes this one (the reference has no
  cache, so its figure is the cold one).

The reference (``deepseek-recipe``) is only called, never imported by dscodec itself.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import workloads

import dscodec
from dscodec.prompt.render import Special, render_segments
from dscodec.vocab import bundled_tokenizer_path

HERE = Path(__file__).resolve().parent

# -- start-up and memory, in fresh processes -------------------------------------------------------------------

_RSS = 'int(__import__("re").search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024'

_OURS_MEMORY = f"""
import sys, time, json
rss = lambda: {_RSS}
import dscodec
from dscodec.vocab import Vocabulary
after_import = rss()
start = time.perf_counter()
vocab = Vocabulary.load(None)
load_s = time.perf_counter() - start
after_load = rss()
encoder = dscodec.PromptEncoder(vocab)
encoder.encode(dscodec.convert("chat_completions", open(sys.argv[1], encoding="utf-8").read()))
vocab.count_tokens("warm")
vocab.token_bytes(100)
print(json.dumps([after_import, after_load, load_s, rss()]))
"""

_TOKENIZERS_MEMORY = f"""
import sys, json
rss = lambda: {_RSS}
from tokenizers import Tokenizer
Tokenizer.from_file(sys.argv[1])
print(json.dumps([rss()]))
"""

_REFERENCE_MEMORY = f"""
import sys, json, time
rss = lambda: {_RSS}
import deepseek_recipe as ref
start = time.perf_counter()
encoding = ref.DeepseekV4Encoding().with_tokenizer(ref.Tokenizer.from_file(sys.argv[1]))
load_s = time.perf_counter() - start
after_load = rss()
body = open(sys.argv[2], encoding="utf-8").read()
options = ref.ConversionOptions()
times = []
for _ in range(4):
    start = time.perf_counter()
    encoding.encode(ref.ChatCompletionRequest(body).convert(options).conversation)
    times.append(time.perf_counter() - start)
print(json.dumps([after_load, load_s, times[0], sorted(times[1:])[1], rss()]))
"""

_OURS_FIRST = """
import sys, time, json
import dscodec
from dscodec.prompt.render import render_segments
start = time.perf_counter()
encoder = dscodec.PromptEncoder(cache_chars=0)
load_s = time.perf_counter() - start
vocab = encoder.vocabulary

def request(body):
    a = time.perf_counter()
    converted = dscodec.convert("chat_completions", body)
    b = time.perf_counter()
    segments, _ = render_segments(converted.conversation, converted.model_version)
    c = time.perf_counter()
    encoder.encode_segments(segments)
    d = time.perf_counter()
    return [b - a, c - b, d - c]

small = json.dumps({"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hello, who are you?"}]})
large = open(sys.argv[1], encoding="utf-8").read()
first_small = request(small)
first_large = request(large)
start = time.perf_counter()
vocab.token_bytes(1000)
first_bytes = time.perf_counter() - start
start = time.perf_counter()
vocab.count_tokens("The user wants a summary; the reasoning is short.")
first_count = time.perf_counter() - start
later_small = [request(small) for _ in range(5)]
later_large = [request(large) for _ in range(5)]
median = lambda runs: [sorted(r[i] for r in runs)[len(runs) // 2] for i in range(3)]
start = time.perf_counter()
vocab.count_tokens("The user wants a summary; the reasoning is short.")
later_count = time.perf_counter() - start
print(json.dumps([load_s, first_small, median(later_small), first_large, median(later_large),
                  first_bytes, first_count, later_count]))
"""


def _child(code: str, *args: str) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, env=os.environ.copy()
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def _median_child(code: str, *args: str, runs: int) -> list[float]:
    results = [_child(code, *args) for _ in range(runs)]
    return [statistics.median(r[i] for r in results) for i in range(len(results[0]))]


def _import_ms(runs: int) -> float:
    """Median cumulative time of ``import dscodec`` as ``python -X importtime`` reports it."""
    times = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import dscodec"],
            capture_output=True,
            text=True,
            check=True,
        )
        for line in done.stderr.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2] == "dscodec":
                times.append(int(parts[1]) / 1000)
    return statistics.median(times)


def startup(body_file: str, runs: int) -> None:
    print("== start-up and memory (fresh processes, medians) ==")
    print(f"import dscodec (python -X importtime, cumulative):  {_import_ms(max(5, runs)):7.1f} ms")
    imported, loaded, load_s, after = _median_child(_OURS_MEMORY, body_file, runs=3)
    (tokenizers_only,) = _median_child(_TOKENIZERS_MEMORY, str(bundled_tokenizer_path()), runs=3)
    print(f"RSS after import dscodec:                          {imported:7.1f} MB")
    print(
        f"RSS after Vocabulary.load(None):                   {loaded:7.1f} MB   (load {load_s * 1000:.0f} ms)"
    )
    print(f"RSS after a large request, count_tokens, bytes:    {after:7.1f} MB")
    print(f"RSS of a process that only loads it with tokenizers: {tokenizers_only:5.1f} MB")
    reference = None
    try:
        reference = _median_child(_REFERENCE_MEMORY, str(bundled_tokenizer_path()), body_file, runs=3)
    except subprocess.CalledProcessError:
        print("reference not installed (pip install deepseek-recipe)")
    if reference is not None:
        print(
            f"reference: RSS after load {reference[0]:.1f} MB (load {reference[1] * 1000:.0f} ms), "
            f"after requests {reference[4]:.1f} MB"
        )
    first = _median_child(_OURS_FIRST, body_file, runs=3)
    load_s, first_small, later_small, first_large, later_large, first_bytes, first_count, later_count = first
    print(f"PromptEncoder() in a fresh process:                {load_s * 1000:7.0f} ms")

    def row(label: str, first: list[float], later: list[float]) -> None:
        print(
            f"  {label:28s} first {sum(first) * 1000:8.1f} ms   later {sum(later) * 1000:8.1f} ms   "
            f"(convert {first[0] * 1000:.1f}/{later[0] * 1000:.1f}, render {first[1] * 1000:.1f}/"
            f"{later[1] * 1000:.1f}, encode {first[2] * 1000:.1f}/{later[2] * 1000:.1f})"
        )

    print("first request after PromptEncoder() against later ones (caches off):")
    row("small chat request", first_small, later_small)
    row("large coding request", first_large, later_large)
    print(
        f"  first byte-table use {first_bytes * 1000:.1f} ms, first count_tokens {first_count * 1000:.1f} ms "
        f"(later {later_count * 1000:.2f} ms)"
    )
    if reference is not None:
        print(
            f"  reference large request: first {reference[2] * 1000:.1f} ms, later {reference[3] * 1000:.1f} ms"
        )


# -- per workload, in this process ----------------------------------------------------------------------------


def interleaved(sides: dict[str, Callable[[], float]], runs: int) -> dict[str, float]:
    """Median seconds of each side; every side times itself (so it can leave its setup out) and they run in turn."""
    for side in sides.values():
        side()
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(runs):
        for name, side in sides.items():
            times[name].append(side())
    return {name: statistics.median(values) for name, values in times.items()}


def timed(function: Callable[[], object]) -> Callable[[], float]:
    def run() -> float:
        start = time.perf_counter()
        function()
        return time.perf_counter() - start

    return run


def text_gaps(body: str) -> list[str]:
    converted = dscodec.convert("chat_completions", body)
    segments, _ = render_segments(converted.conversation, converted.model_version)
    gaps: list[str] = []
    pending: list[str] = []
    for segment in [*segments, Special("")]:
        if isinstance(segment, str):
            pending.append(segment)
        elif pending:
            gaps.append("".join(pending))
            pending = []
    return [g for g in gaps if g]


def workload(name: str, tokens: int, runs: int, reference: object | None) -> None:
    load = workloads.build(name, tokens)
    body, previous = load.body, load.previous
    cold = dscodec.PromptEncoder(cache_chars=0)
    warm = dscodec.PromptEncoder()
    plain = cold.vocabulary.plain
    gaps = text_gaps(body)
    ids = cold.encode(dscodec.convert("chat_completions", body))

    def next_turn() -> float:
        encoder = dscodec.PromptEncoder()
        encoder.encode(dscodec.convert("chat_completions", previous))
        start = time.perf_counter()
        encoder.encode(dscodec.convert("chat_completions", body))
        return time.perf_counter() - start

    sides: dict[str, Callable[[], float]] = {
        "cold": timed(lambda: cold.encode(dscodec.convert("chat_completions", body))),
        "floor": timed(lambda: plain.encode_batch_fast(gaps, add_special_tokens=False)),
        "same": timed(lambda: warm.encode(dscodec.convert("chat_completions", body))),
        "next": next_turn,
    }
    same_ids = True
    if reference is not None:
        ref = reference
        encoding = ref.DeepseekV4Encoding().with_tokenizer(
            ref.Tokenizer.from_file(str(bundled_tokenizer_path()))
        )
        options = ref.ConversionOptions()

        def encode_reference() -> list[int]:
            return list(encoding.encode(ref.ChatCompletionRequest(body).convert(options).conversation))

        same_ids = encode_reference() == ids
        sides["reference"] = timed(encode_reference)
    medians = interleaved(sides, runs)

    converted = dscodec.convert("chat_completions", body)
    segments, _ = render_segments(converted.conversation, "v4")
    parts = interleaved(
        {
            "convert": timed(lambda: dscodec.convert("chat_completions", body)),
            "render": timed(lambda: render_segments(converted.conversation, "v4")),
            "encode": timed(lambda: cold.encode_segments(segments)),
        },
        runs,
    )
    base = medians.get("reference")
    print(
        f"== {name}: {len(ids)} tokens, {len(body)} characters of JSON, {len(gaps)} text gaps; "
        f"ids identical to the reference: {same_ids if reference is not None else 'n/a'} =="
    )

    def row(label: str, seconds: float) -> None:
        ratio = f"ratio {seconds / base:5.3f}" if base else ""
        print(f"  {label:46s} {seconds * 1000:8.1f} ms   {ratio}")

    if base:
        row("reference convert+encode", base)
    row("dscodec cold (caches off)", medians["cold"])
    print(
        f"    convert {parts['convert'] * 1000:.1f} ms, render {parts['render'] * 1000:.1f} ms, "
        f"encode {parts['encode'] * 1000:.1f} ms"
    )
    row("floor: tokenizers encode_batch_fast of the gaps", medians["floor"])
    row("dscodec, the same request again (caches on)", medians["same"])
    row("dscodec, the next turn (previous one encoded)", medians["next"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=90_000)
    parser.add_argument("--workloads", default=",".join(workloads.WORKLOADS))
    parser.add_argument("--skip-startup", action="store_true")
    args = parser.parse_args()
    try:
        import deepseek_recipe as reference
    except ImportError:
        reference = None
    print(f"dscodec from {Path(dscodec.__file__).parent}; median of {args.runs} runs\n")
    if not args.skip_startup:
        with tempfile.TemporaryDirectory() as folder:
            body_file = Path(folder) / "coding.json"
            body_file.write_text(workloads.build("coding", args.tokens).body, encoding="utf-8")
            startup(str(body_file), args.runs)
        print()
    for name in args.workloads.split(","):
        workload(name, args.tokens, args.runs, reference)


if __name__ == "__main__":
    main()
