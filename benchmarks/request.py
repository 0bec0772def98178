"""Every request-path figure in one run: start-up, memory, cold encode, the same request again, the next turn.

    python benchmarks/request.py [--runs 7] [--tokens 90000] [--workloads coding,prose,cjk,arguments]

Start-up and memory are measured in fresh processes (``/proc/self/status`` VmRSS, and VmHWM: the peak;
``python -X importtime``):

* ``import dscodec`` time (and by the clock, with a first small ``convert``: the request model loads on first
  use), and RSS after the import, after ``Vocabulary.load(None)`` and after the first large
  request; a process that only loads the same file with ``tokenizers``, and one that loads the reference;
* the first request after ``PromptEncoder()`` against later runs of the same request (caches off), the later
  ones both with the vocabulary's word memory emptied before each (as cold as the first) and kept; plus the
  first use of the byte table and of ``count_tokens`` (what a first streamed response needs); and the first
  small request when ``dscodec.preload()`` ran at start-up, with what that call takes;
* ``dscodec serve`` with the scripted backend: start-up time, RSS after start-up and after a first request, and
  the first request's time against the second's.

Then, per workload (``benchmarks/workloads.py``), in this process, the sides run in turn and medians are
reported with the ratio to the reference measured alongside (below 1.0 means dscodec is faster):

* cold: convert + render + encode with every cache off and the vocabulary's word memory, the renderer's memos
  of tool-call arguments and schema lines and the converter's memo of checked tool schemas emptied first
  (nothing of the request seen before), against the reference's convert + encode;
* cold with fresh tokenizers on both sides: each run loads the tokenizer anew (untimed; for dscodec a vocabulary
  of its own, its word memory empty), so the BPE word cache ``tokenizers`` keeps per tokenizer is empty for both
  (in the rows above it is warm on both sides, from the earlier runs of the same prompt);
* the same with the word memory kept (a serving loop's new conversation: common words seen before);
* the breakdown of the cold figure (convert, render, encode);
* the floor: Hugging Face ``tokenizers`` alone, one ``encode_batch_fast`` call over the prompt's text gaps (what
  any encoder that hands the text to ``tokenizers`` pays), and the part of dscodec's cold encode that is
  ``tokenizers`` encoding the prompt's distinct words (dscodec's own floor);
* the same request again through a caching encoder (a serving loop);
* the next turn: an encoder that has just encoded the previous request encodes this one (the reference has no
  cache, so its figure is the cold one), with its breakdown (the convert step alone is what is left for any
  encoder that is handed a JSON body). The memories the cold run empties are emptied before the previous request
  is encoded, so the new turn's text (the model's answer and the user's follow-up) is as new as in a serving
  loop: only the words the previous request holds are known. Its floors: ``tokenizers`` over the new gaps (what
  an encoder that hands the new text to ``tokenizers`` pays), and what any codec that is handed the body and
  answers with a list of ids pays, measured the same way (right after the previous turn): ``orjson.loads`` of
  the body and a copy of the previous prompt's ids (all but its last few are the ones the two prompts share);
  and the part of dscodec's next turn that is ``tokenizers`` encoding the new turn's words that the previous
  request does not hold;
* the next turn of the same conversation sent as an OpenAI Responses and as an Anthropic Messages body
  (``workloads.in_protocol``), against the reference's cold figure for that body.

The reference (``deepseek-recipe``) is only called, never imported by dscodec itself.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import workloads

import dscodec
from dscodec.prompt import render
from dscodec.prompt.render import Special, render_segments
from dscodec.protocols import _tools
from dscodec.vocab import _NOT_WORD_TEXT, _WORD, bundled_tokenizer_path

HERE = Path(__file__).resolve().parent

#: A request of one short message: the small request of the start-up figures, and what makes a vocabulary's
#: first-use parts untimed before a cold run.
SMALL = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hello, who are you?"}]}

# -- start-up and memory, in fresh processes -------------------------------------------------------------------

_RSS = 'int(__import__("re").search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024'
_PEAK = 'int(__import__("re").search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024'

_OURS_MEMORY = f"""
import sys, time, json
rss = lambda: {_RSS}
peak = lambda: {_PEAK}
import dscodec
from dscodec.vocab import Vocabulary
after_import = rss()
start = time.perf_counter()
vocab = Vocabulary.load(None)
load_s = time.perf_counter() - start
after_load = rss()
peak_load = peak()
encoder = dscodec.PromptEncoder(vocab)
encoder.encode(dscodec.convert("chat_completions", open(sys.argv[1], encoding="utf-8").read()))
vocab.count_tokens("warm")
vocab.token_bytes(100)
print(json.dumps([after_import, after_load, load_s, rss(), peak_load, peak()]))
"""

_TOKENIZERS_MEMORY = f"""
import sys, json
rss = lambda: {_RSS}
peak = lambda: {_PEAK}
from tokenizers import Tokenizer
Tokenizer.from_file(sys.argv[1])
print(json.dumps([rss(), peak()]))
"""

_REFERENCE_MEMORY = f"""
import sys, json, time
rss = lambda: {_RSS}
peak = lambda: {_PEAK}
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
print(json.dumps([after_load, load_s, times[0], sorted(times[1:])[1], rss(), peak()]))
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

small = json.dumps(__SMALL__)
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
later_cold = []
for _ in range(5):
    vocab._word_ids = {}
    later_cold.append(request(large))
median = lambda runs: [sorted(r[i] for r in runs)[len(runs) // 2] for i in range(3)]
start = time.perf_counter()
vocab.count_tokens("The user wants a summary; the reasoning is short.")
later_count = time.perf_counter() - start
print(json.dumps([load_s, first_small, median(later_small), first_large, median(later_large),
                  first_bytes, first_count, later_count, median(later_cold)]))
""".replace("__SMALL__", repr(SMALL))

_OURS_PRELOADED = """
import sys, time, json
import dscodec
encoder = dscodec.PromptEncoder(cache_chars=0)
start = time.perf_counter()
dscodec.preload()
preload_s = time.perf_counter() - start
small = __SMALL__
times = []
for _ in range(3):
    start = time.perf_counter()
    encoder.encode(dscodec.convert("chat_completions", json.dumps(small)))
    times.append(time.perf_counter() - start)
print(json.dumps([preload_s, times[0], times[2]]))
""".replace("__SMALL__", repr(SMALL))


def _child(code: str, *args: str) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, env=os.environ.copy()
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def _median_child(code: str, *args: str, runs: int) -> list[float]:
    results = [_child(code, *args) for _ in range(runs)]
    return [statistics.median(r[i] for r in results) for i in range(len(results[0]))]


def _import_ms(runs: int, *, bytecode: str | None = None) -> float:
    """Median cumulative time of ``import dscodec`` as ``python -X importtime`` reports it.

    ``bytecode``: a folder to keep compiled modules in (``PYTHONPYCACHEPREFIX``, written by a first run), as an
    installed package has them; None leaves the environment as it is (with ``PYTHONDONTWRITEBYTECODE`` set,
    every module is compiled from source on every import).
    """
    env = os.environ.copy()
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = bytecode
        subprocess.run([sys.executable, "-c", "import dscodec"], check=True, env=env)
    times = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import dscodec"],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        for line in done.stderr.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2] == "dscodec":
                times.append(int(parts[1]) / 1000)
    return statistics.median(times)


_FIRST_CONVERT = """
import json, time
start = time.perf_counter()
import dscodec
imported = time.perf_counter()
dscodec.convert("chat_completions", {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "hi"}]})
done = time.perf_counter()
print(json.dumps([(imported - start) * 1000, (done - start) * 1000]))
"""


def _first_convert_ms(runs: int, bytecode: str) -> list[float]:
    """Medians of ``import dscodec`` and of the import plus a first small ``convert`` (which loads the request
    model and that protocol's modules), by the clock in a fresh process, compiled modules cached."""
    env = os.environ.copy()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = bytecode
    results = []
    for _ in range(runs + 1):  # the first run writes the compiled modules
        done = subprocess.run(
            [sys.executable, "-c", _FIRST_CONVERT], capture_output=True, text=True, check=True, env=env
        )
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return [statistics.median(r[i] for r in results[1:]) for i in range(2)]


def startup(body_file: str, runs: int) -> None:
    print("== start-up and memory (fresh processes, medians) ==")
    print(f"import dscodec (python -X importtime, cumulative):  {_import_ms(max(5, runs)):7.1f} ms")
    with tempfile.TemporaryDirectory() as cache:
        print(
            f"  the same with compiled modules cached:             {_import_ms(max(5, runs), bytecode=cache):7.1f} ms"
        )
        imported_ms, converted_ms = _first_convert_ms(max(5, runs), cache)
        print(
            f"  by the clock, cached: import {imported_ms:.1f} ms; import and a first convert {converted_ms:.1f} ms"
        )
    imported, loaded, load_s, after, peak_load, peak_after = _median_child(_OURS_MEMORY, body_file, runs=3)
    tokenizers_only, tokenizers_peak = _median_child(
        _TOKENIZERS_MEMORY, str(bundled_tokenizer_path()), runs=3
    )
    print(f"RSS after import dscodec:                          {imported:7.1f} MB")
    print(
        f"RSS after Vocabulary.load(None):                   {loaded:7.1f} MB   (peak {peak_load:.1f} MB, "
        f"load {load_s * 1000:.0f} ms)"
    )
    print(f"RSS after a large request, count_tokens, bytes:    {after:7.1f} MB   (peak {peak_after:.1f} MB)")
    print(
        f"RSS of a process that only loads it with tokenizers: {tokenizers_only:5.1f} MB   "
        f"(peak {tokenizers_peak:.1f} MB)"
    )
    reference = None
    try:
        reference = _median_child(_REFERENCE_MEMORY, str(bundled_tokenizer_path()), body_file, runs=3)
    except subprocess.CalledProcessError:
        print("reference not installed (pip install deepseek-recipe)")
    if reference is not None:
        print(
            f"reference: RSS after load {reference[0]:.1f} MB (load {reference[1] * 1000:.0f} ms), "
            f"after requests {reference[4]:.1f} MB (peak {reference[5]:.1f} MB)"
        )
    first = _median_child(_OURS_FIRST, body_file, runs=3)
    load_s, first_small, later_small, first_large, later_large, first_bytes, first_count, later_count = first[
        :8
    ]
    later_cold = first[8]
    print(f"PromptEncoder() in a fresh process:                {load_s * 1000:7.0f} ms")

    def row(label: str, first: list[float], later: list[float]) -> None:
        print(
            f"  {label:28s} first {sum(first) * 1000:8.1f} ms   later {sum(later) * 1000:8.1f} ms   "
            f"(convert {first[0] * 1000:.1f}/{later[0] * 1000:.1f}, render {first[1] * 1000:.1f}/"
            f"{later[1] * 1000:.1f}, encode {first[2] * 1000:.1f}/{later[2] * 1000:.1f})"
        )

    print("first request after PromptEncoder() against later ones (caches off):")
    row("small chat request", first_small, later_small)
    row("large coding request", first_large, later_cold)
    row("  later ones, words remembered", first_large, later_large)
    print(
        f"  first byte-table use {first_bytes * 1000:.1f} ms, first count_tokens {first_count * 1000:.1f} ms "
        f"(later {later_count * 1000:.2f} ms)"
    )
    preload_s, first_preloaded, later_preloaded = _median_child(_OURS_PRELOADED, runs=3)
    print(
        f"  with dscodec.preload() after PromptEncoder() ({preload_s * 1000:.0f} ms): small chat request "
        f"first {first_preloaded * 1000:.2f} ms, later {later_preloaded * 1000:.2f} ms"
    )
    if reference is not None:
        print(
            f"  reference large request: first {reference[2] * 1000:.1f} ms, later {reference[3] * 1000:.1f} ms"
        )
    server()


# -- the example server ---------------------------------------------------------------------------------------


def _status(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _post(url: str, body: bytes) -> float:
    start = time.perf_counter()
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
    return time.perf_counter() - start


def server() -> None:
    """``dscodec serve`` with the scripted backend and the demo vocabulary: start-up, RSS, first request."""
    script = HERE.parent / "examples" / "scripts.json"
    body = (HERE.parent / "examples" / "chat.json").read_bytes()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "dscodec", "serve", "--script", str(script), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        while True:
            try:
                with urllib.request.urlopen(base + "/health", timeout=5):
                    break
            except OSError:
                if process.poll() is not None or time.perf_counter() - start > 120:
                    print("dscodec serve did not start")
                    return
                time.sleep(0.05)
        started = time.perf_counter() - start
        rss, peak = _status(process.pid, "VmRSS"), _status(process.pid, "VmHWM")
        first = _post(base + "/v1/chat/completions", body)
        second = _post(base + "/v1/chat/completions", body)
        later = statistics.median(_post(base + "/v1/chat/completions", body) for _ in range(5))
        print(
            f"dscodec serve (scripted): ready in {started:.2f} s; RSS {rss:.1f} MB (peak {peak:.1f} MB) after "
            f"start-up, {_status(process.pid, 'VmRSS'):.1f} MB (peak {_status(process.pid, 'VmHWM'):.1f} MB) "
            f"after requests; first request {first * 1000:.1f} ms, second {second * 1000:.1f} ms, "
            f"later {later * 1000:.1f} ms"
        )
    finally:
        process.terminate()
        process.wait()


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


def forget(vocabulary: Any) -> None:
    """Empty what dscodec remembers between requests but the encoders' own caches: ``vocabulary``'s word memory,
    the renderer's memos of tool-call arguments and schema lines, and the converter's memos of tool schemas."""
    vocabulary._word_ids = {}
    render._ARGUMENTS.clear()
    render._SCHEMA_LINES.clear()
    _tools._SCHEMAS.clear()
    _tools._STRICT.clear()


def workload(name: str, tokens: int, runs: int, reference: object | None) -> None:
    load = workloads.build(name, tokens)
    body, previous = load.body, load.previous
    cold = dscodec.PromptEncoder(cache_chars=0)
    warm = dscodec.PromptEncoder()
    vocab = cold.vocabulary
    plain = vocab.plain
    gaps = text_gaps(body)
    seen = set(text_gaps(previous))
    new_gaps = [g for g in gaps if g not in seen]
    ids = cold.encode(dscodec.convert("chat_completions", body))
    words = [w for w in dict.fromkeys(itertools.chain.from_iterable(_WORD.findall(g) for g in gaps))]
    word_texts = [g for g in gaps if vocab._words is not None and not _NOT_WORD_TEXT.search(g)]
    distinct = [w for w in dict.fromkeys(itertools.chain.from_iterable(_WORD.findall(g) for g in word_texts))]
    # The words of the new turn that the previous request does not hold: what the next turn hands to tokenizers.
    known = set(itertools.chain.from_iterable(_WORD.findall(g) for g in seen))
    new_words = [
        w
        for w in dict.fromkeys(itertools.chain.from_iterable(_WORD.findall(g) for g in new_gaps))
        if w not in known
    ]

    def cold_run() -> float:
        forget(vocab)
        start = time.perf_counter()
        cold.encode(dscodec.convert("chat_completions", body))
        return time.perf_counter() - start

    def words_known() -> float:
        render._ARGUMENTS.clear()  # a new conversation: its calls were not seen before
        start = time.perf_counter()
        cold.encode(dscodec.convert("chat_completions", body))
        return time.perf_counter() - start

    def next_turn(part: str = "all") -> Callable[[], float]:
        def run() -> float:
            forget(vocab)  # only what the previous turn holds is known: the new turn's words were never seen
            encoder = dscodec.PromptEncoder()
            encoder.encode(dscodec.convert("chat_completions", previous))
            a = time.perf_counter()
            converted = dscodec.convert("chat_completions", body)
            b = time.perf_counter()
            segments, _ = render_segments(converted.conversation, converted.model_version)
            c = time.perf_counter()
            encoder.encode_segments(segments)
            d = time.perf_counter()
            return {"all": d - a, "convert": b - a, "render": c - b, "encode": d - c}[part]

        return run

    def next_floor() -> float:
        # What any codec that is handed this JSON body and answers with a list of ids pays, measured as the next
        # turn is (right after the previous turn was encoded): parsing the body, and a copy of the previous
        # prompt's ids (the shared ones, and the few of its generation prompt the next turn replaces).
        forget(vocab)
        encoder = dscodec.PromptEncoder()
        previous_ids = encoder.encode(dscodec.convert("chat_completions", previous))
        start = time.perf_counter()
        orjson.loads(body)
        previous_ids[:]
        return time.perf_counter() - start

    sides: dict[str, Callable[[], float]] = {
        "cold": cold_run,
        "words known": words_known,
        "floor": timed(lambda: plain.encode_batch_fast(gaps, add_special_tokens=False)),
        "words floor": timed(lambda: vocab._encode_new_words(distinct)),
        "same": timed(lambda: warm.encode(dscodec.convert("chat_completions", body))),
        "next": next_turn(),
        "next floor": timed(lambda: plain.encode_batch_fast(new_gaps, add_special_tokens=False)),
        "next words floor": timed(lambda: vocab._encode_new_words(new_words)),
        "next parse floor": next_floor,
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

    def cold_encode() -> float:
        forget(vocab)
        start = time.perf_counter()
        cold.encode_segments(segments)
        return time.perf_counter() - start

    parts = interleaved(
        {
            "convert": timed(lambda: dscodec.convert("chat_completions", body)),
            "render": timed(lambda: render_segments(converted.conversation, "v4")),
            "encode": cold_encode,
            "next convert": next_turn("convert"),
            "next render": next_turn("render"),
            "next encode": next_turn("encode"),
        },
        runs,
    )
    fresh = _fresh_cold(body, reference, runs=max(3, runs // 2))
    base = medians.get("reference")
    print(
        f"== {name}: {len(ids)} tokens, {len(body)} characters of JSON, {len(gaps)} text gaps "
        f"({sum(map(len, gaps))} characters, {len(words)} distinct words); "
        f"ids identical to the reference: {same_ids if reference is not None else 'n/a'} =="
    )

    def row(label: str, seconds: float) -> None:
        ratio = f"ratio {seconds / base:5.3f}" if base else ""
        print(f"  {label:54s} {seconds * 1000:8.1f} ms   {ratio}")

    if base:
        row("reference convert+encode", base)
    row("dscodec cold (caches off, word memory empty)", medians["cold"])
    print(
        f"    convert {parts['convert'] * 1000:.1f} ms, render {parts['render'] * 1000:.1f} ms, "
        f"encode {parts['encode'] * 1000:.1f} ms"
    )
    ours_fresh, reference_fresh = fresh
    if reference_fresh:
        print(
            f"  {'cold, fresh tokenizers on both sides (BPE caches empty)':54s} {ours_fresh * 1000:8.1f} ms   "
            f"ratio {ours_fresh / reference_fresh:5.3f} (reference {reference_fresh * 1000:.1f} ms)"
        )
    else:
        row("dscodec cold, fresh tokenizer (BPE cache empty)", ours_fresh)
    row("dscodec cold, words remembered from earlier requests", medians["words known"])
    row("floor: tokenizers encode_batch_fast of the gaps", medians["floor"])
    row(f"floor: tokenizers over the {len(distinct)} distinct words", medians["words floor"])
    row("dscodec, the same request again (caches on)", medians["same"])
    row("dscodec, the next turn (previous one encoded)", medians["next"])
    print(
        f"    convert {parts['next convert'] * 1000:.1f} ms, render {parts['next render'] * 1000:.1f} ms, "
        f"encode {parts['next encode'] * 1000:.1f} ms"
    )
    row(
        f"floor: tokenizers over the {len(new_gaps)} new gaps ({sum(map(len, new_gaps))} characters)",
        medians["next floor"],
    )
    row(
        f"floor: tokenizers over its {len(new_words)} new words ({sum(map(len, new_words))} chars)",
        medians["next words floor"],
    )
    row("floor: parse the body (orjson), copy the previous ids", medians["next parse floor"])


def other_protocols(name: str, tokens: int, runs: int, reference: Any) -> None:
    """The next turn of the workload's conversation as OpenAI Responses and Anthropic Messages bodies (the same
    prompt), against the reference's cold convert + encode of the same body."""
    load = workloads.build(name, tokens)
    for protocol in ("responses", "messages"):
        body = workloads.in_protocol(load.body, protocol)
        previous = workloads.in_protocol(load.previous, protocol)

        def next_turn(body: str = body, previous: str = previous, protocol: str = protocol) -> float:
            encoder = dscodec.PromptEncoder()
            forget(encoder.vocabulary)
            encoder.encode(dscodec.convert(protocol, previous))  # type: ignore[arg-type]
            start = time.perf_counter()
            encoder.encode(dscodec.convert(protocol, body))  # type: ignore[arg-type]
            return time.perf_counter() - start

        sides: dict[str, Callable[[], float]] = {"next": next_turn}
        if reference is not None:
            encoding = reference.DeepseekV4Encoding().with_tokenizer(
                reference.Tokenizer.from_file(str(bundled_tokenizer_path()))
            )
            request_type = {"responses": reference.ResponsesRequest, "messages": reference.MessagesRequest}[
                protocol
            ]
            options = reference.ConversionOptions()
            sides["reference"] = timed(
                lambda: encoding.encode(request_type(body).convert(options).conversation)  # noqa: B023
            )
            ours = dscodec.PromptEncoder(cache_chars=0).encode(dscodec.convert(protocol, body))  # type: ignore[arg-type]
            same = list(encoding.encode(request_type(body).convert(options).conversation)) == ours
            print(f"  {protocol} body: ids identical to the reference: {same}")
        medians = interleaved(sides, runs)
        line = f"  {protocol + ': the next turn (previous one encoded)':54s} {medians['next'] * 1000:8.1f} ms"
        if "reference" in medians:
            line += (
                f"   ratio {medians['next'] / medians['reference']:5.3f} "
                f"(reference cold {medians['reference'] * 1000:.1f} ms)"
            )
        print(line)


def _fresh_cold(body: str, reference: object | None, *, runs: int) -> tuple[float, float | None]:
    """Median cold encode of ``body`` by dscodec and by the reference, each run with a tokenizer loaded just before
    (untimed), so that no BPE word of the prompt is cached by either side: (dscodec, reference or None)."""
    from tokenizers import Tokenizer

    from dscodec.vocab import Vocabulary

    path = str(bundled_tokenizer_path())
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(runs):
        # A vocabulary of its own (Vocabulary.load would give the one loaded before, its words remembered).
        vocabulary = Vocabulary.adopt(Tokenizer.from_file(path), name=path)
        encoder = dscodec.PromptEncoder(vocabulary, cache_chars=0)
        encoder.encode(dscodec.convert("chat_completions", SMALL))  # what is made on first use (untimed)
        forget(vocabulary)
        start = time.perf_counter()
        encoder.encode(dscodec.convert("chat_completions", body))
        ours.append(time.perf_counter() - start)
        if reference is not None:
            ref: Any = reference
            encoding = ref.DeepseekV4Encoding().with_tokenizer(ref.Tokenizer.from_file(path))
            options = ref.ConversionOptions()
            start = time.perf_counter()
            encoding.encode(ref.ChatCompletionRequest(body).convert(options).conversation)
            theirs.append(time.perf_counter() - start)
    return statistics.median(ours), statistics.median(theirs) if theirs else None


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
        other_protocols(name, args.tokens, args.runs, reference)


if __name__ == "__main__":
    main()
