#!/usr/bin/env python
"""Record the response-path golden fixtures from the reference ``deepseek_recipe`` (used as a black box).

For every scenario of ``tools/golden_cases/streams.py`` this script builds the Chat Completions, Responses and
Messages request bodies the scenario can be expressed in, lets the reference convert them (for the chunk
generator and the parsing options), then feeds the scenario's model output to the reference ``StreamProcessor``
under several chunkings and records what it emits. Output: ``fixtures/streams/<protocol>/<scenario>.jsonl``, one
file per scenario and protocol holding one ``dscodec.testing`` transcript per chunking (format version 2; layout
in ``docs/golden-streams.md``). Fixtures are never edited by hand; rerun this script instead.

Usage::

    python tools/record_streams.py              # rewrite fixtures/streams/ from scratch
    python tools/record_streams.py --only json  # re-record only scenarios whose name contains "json"

Splits are seeded by scenario name, so reruns give the same inputs. The reference itself adds randomness
(tool-call ids ``call_NN_…``) and wall-clock times (Chat ``created``, Responses ``created_at``/``completed_at``);
those are recorded as observed and consumers normalise them.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import random
import shutil
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import deepseek_recipe as dr
import tokenizers

from dscodec.testing import Finish, Frame, Text, Tokens, Transcript, Usage, dump_transcripts
from dscodec.testing.transcript import BackendItem
from dscodec.vocab import Vocabulary, bundled_tokenizer_path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "fixtures" / "streams"
CASES_FILE = ROOT / "tools" / "golden_cases" / "streams.py"

#: Generator ids per protocol (the model name is the request's model). Fixed so fixtures are comparable.
GENERATOR_IDS = {"chat_completions": "chatcmpl-golden", "responses": "resp_golden", "messages": "msg_golden"}
#: The ``created`` given to the ``*Response`` accumulator; its id and model are the generator's (so the
#: accumulated response is the one the events add up to), its prompt numbers the ready chunk's (else 0).
ACCUMULATOR_CREATED = 1700000000
#: Chunkings not recorded for Messages (identical to "whole" there: verified when this was written).
MESSAGES_SKIP = ("whole_tok",)

JsonObj = dict[str, Any]


def _load_cases() -> ModuleType:
    """Load the scenario catalogue by path, so the ``golden_cases`` package's ``__init__`` is not involved."""
    spec = importlib.util.spec_from_file_location("golden_stream_cases", CASES_FILE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {CASES_FILE}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve string annotations through sys.modules
    spec.loader.exec_module(module)
    return module


#: The catalogue module; scenarios are its ``Scenario`` objects (typed ``Any`` here since it is loaded by path).
cases = _load_cases()

# ----------------------------------------------------------------------------------------------------------------
# Tokenizer: the full vocabulary, so </think> and ｜DSML｜ become their special ids as a real model emits them.

TOKENIZER_PATH = str(bundled_tokenizer_path())
HF_FULL = tokenizers.Tokenizer.from_file(TOKENIZER_PATH)
REF_TOKENIZER = dr.Tokenizer.from_file(TOKENIZER_PATH)
ID_BYTES = Vocabulary.load(None).id_bytes


def encode(text: str) -> list[int]:
    return list(HF_FULL.encode(text, add_special_tokens=False).ids)


def check_round_trip(text: str, ids: Sequence[int], *, where: str) -> None:
    """The ids must spell the text exactly, or token chunkings would record a different output."""
    spelled = b"".join(ID_BYTES[i] for i in ids)
    if spelled != text.encode("utf-8"):
        raise SystemExit(f"{where}: full-vocab ids do not spell the text back ({spelled!r} != {text!r})")


# ----------------------------------------------------------------------------------------------------------------
# Request bodies (spec §2.1, §2.2, §2.3).

_WEATHER_PARAMS: JsonObj = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}
_SEARCH_PARAMS: JsonObj = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
_ISSUE_PARAMS: JsonObj = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}}},
    "required": ["title"],
}
_BASE_TOOLS = (
    ("get_weather", "Get the weather for a city", _WEATHER_PARAMS),
    ("search", "Search the web", _SEARCH_PARAMS),
)


def _user_text(sc: Any) -> str:
    # json_object needs the word "json" in a message (spec §2.1.5, §2.2).
    return "Answer in JSON please." if sc.json_object else "What is the weather in Paris?"


def chat_body(sc: Any) -> JsonObj:
    body: JsonObj = {
        "model": cases.MODEL_NAMES[sc.version],
        "messages": [{"role": "user", "content": _user_text(sc)}],
    }
    if sc.chat_stream != "none":
        body["stream"] = True
        if sc.chat_stream == "include_usage":
            body["stream_options"] = {"include_usage": True}
    body["thinking"] = {"type": "enabled" if sc.thinking else "disabled"}
    if sc.prefix is not None:
        prefix: JsonObj = {"role": "assistant", "content": "Sure,", "prefix": True}
        if sc.prefix == "reasoning":
            prefix = {"role": "assistant", "content": "", "reasoning_content": "Let me", "prefix": True}
        elif sc.prefix == "empty":
            prefix = {"role": "assistant", "content": "", "prefix": True}
        body["messages"].append(prefix)
    if sc.tools == "weather":
        body["tools"] = [
            {"type": "function", "function": {"name": n, "description": d, "parameters": p}}
            for n, d, p in _BASE_TOOLS
        ]
    if sc.tool_choice is not None:
        body["tool_choice"] = (
            {"type": "function", "function": {"name": "get_weather"}}
            if sc.tool_choice == "named"
            else sc.tool_choice
        )
    if sc.json_object:
        body["response_format"] = {"type": "json_object"}
    if sc.stop:
        body["stop"] = list(sc.stop)
    if sc.logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = 2
    return body


def responses_body(sc: Any) -> JsonObj:
    body: JsonObj = {
        "model": cases.MODEL_NAMES[sc.version],
        "input": _user_text(sc),
        "stream": True,
        "reasoning": {"effort": "high" if sc.thinking else "none"},
    }
    tools: list[JsonObj] = []
    if sc.tools != "none":
        tools = [
            {"type": "function", "name": n, "description": d, "parameters": p} for n, d, p in _BASE_TOOLS
        ]
    if sc.tools == "namespaced":
        tools.append(
            {
                "type": "namespace",
                "name": "gh",
                "description": "GitHub",
                "tools": [
                    {
                        "type": "function",
                        "name": "issue",
                        "description": "Open an issue",
                        "parameters": _ISSUE_PARAMS,
                    }
                ],
            }
        )
    elif sc.tools == "apply_patch":
        tools.insert(0, {"type": "custom", "name": "apply_patch", "description": "Edit files"})
    elif sc.tools == "tool_search":
        tools.insert(
            0,
            {
                "type": "tool_search",
                "execution": "client",
                "description": "Find more tools.",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
            },
        )
    if tools:
        body["tools"] = tools
    if sc.tool_choice is not None:
        body["tool_choice"] = (
            {"type": "function", "name": "get_weather"} if sc.tool_choice == "named" else sc.tool_choice
        )
    if sc.json_object:
        body["text"] = {"format": {"type": "json_object"}}
    if sc.logprobs:
        body["top_logprobs"] = 2
    return body


def messages_body(sc: Any) -> JsonObj:
    body: JsonObj = {
        "model": cases.MODEL_NAMES[sc.version],
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": _user_text(sc)}],
        "stream": True,
        "thinking": {"type": "enabled", "budget_tokens": 2048} if sc.thinking else {"type": "disabled"},
    }
    if sc.tools == "weather":
        body["tools"] = [{"name": n, "description": d, "input_schema": p} for n, d, p in _BASE_TOOLS]
    if sc.tool_choice is not None:
        # Messages spells a required call as a named tool; "any" is kept to record D10 (reference: auto).
        body["tool_choice"] = {
            "auto": {"type": "auto"},
            "none": {"type": "none"},
            "any": {"type": "any"},
            "required": {"type": "tool", "name": "get_weather"},
            "named": {"type": "tool", "name": "get_weather"},
        }[sc.tool_choice]
    if sc.stop:
        body["stop_sequences"] = list(sc.stop)
    return body


BODY_BUILDERS = {"chat_completions": chat_body, "responses": responses_body, "messages": messages_body}
REQUEST_CLASSES: dict[str, Any] = {
    "chat_completions": dr.ChatCompletionRequest,
    "responses": dr.ResponsesRequest,
    "messages": dr.MessagesRequest,
}
RESPONSE_CLASSES: dict[str, Any] = {
    "chat_completions": dr.ChatCompletionResponse,
    "responses": dr.ResponsesResponse,
    "messages": dr.MessagesResponse,
}

# The reference's stage enum is not hashable, so match by equality.
_STAGES = (
    (dr.ThinkingInitialStage.ReasoningStart, "reasoning_start"),
    (dr.ThinkingInitialStage.ReasoningContinuation, "reasoning_continuation"),
    (dr.ThinkingInitialStage.ContentContinuation, "content_continuation"),
)
_FINISH = {
    "stop": dr.InferenceFinishReason.Stop,
    "length": dr.InferenceFinishReason.Length,
    "content_filter": dr.InferenceFinishReason.ContentFilter,
}


def _stage_name(stage: Any) -> str | None:
    if stage is None:
        return None
    for member, name in _STAGES:
        if stage == member:
            return name
    raise SystemExit(f"unknown thinking stage {stage!r}")


def parsing_options_json(po: Any) -> JsonObj:
    """The reference's resolved ParsingOptions in ``dscodec.conversation.ParsingOptions`` spelling (spec §2.7)."""
    return {
        "parse_tool_calls": po.parse_tool_calls,
        "starts_in_tool_calls": po.starts_in_tool_calls,
        "parse_json_output": po.parse_json_output,
        "thinking_initial_stage": _stage_name(po.thinking_initial_stage),
        "stop_sequences": list(po.stop_sequences),
    }


# ----------------------------------------------------------------------------------------------------------------
# Chunk specs: JSON-able descriptions of backend chunks, shared by scenario.json and _lifecycle.json.


def chunk_from_spec(spec: JsonObj) -> Any:
    kind = spec["kind"]
    if kind == "ready":
        usage = dr.PromptUsage(
            prompt_tokens=spec["prompt_tokens"], prompt_cache_hit_tokens=spec["prompt_cache_hit_tokens"]
        )
        return dr.InferenceChunk.ready(prompt_usage=usage, system_fingerprint=spec["system_fingerprint"])
    if kind == "text":
        return dr.InferenceChunk.text(spec["text"], spec["token_count"])
    if kind == "tokens":
        logprobs = spec.get("logprobs")
        if logprobs is not None:
            logprobs = [(_float(lp), [(tid, _float(tlp)) for tid, tlp in top]) for lp, top in logprobs]
        return dr.InferenceChunk.tokens(spec["ids"], logprobs)
    if kind == "finish":
        return dr.InferenceChunk.finish(_FINISH[spec["reason"]])
    raise ValueError(f"unknown chunk kind {kind!r}")


def _float(value: float | str) -> float:
    # _lifecycle.json spells non-finite logprobs as strings ("-inf", "nan"), since JSON has no such numbers.
    return float(value)


def fake_logprobs(ids: Sequence[int]) -> list[list[Any]]:
    """Deterministic fake logprobs, one entry per id: [logprob, [[top_id, top_logprob], …]] with 0–2 tops.

    Every other entry is a 32-bit float written in full, as a model server computing in 32 bits sends it
    (``-0.2467402219772339``), or a double with all its digits (every fourth): the reference writes each as the
    shortest decimal of its 32-bit float, and the fixtures show it. The others have at most six decimals."""
    entries: list[list[Any]] = []
    for i, tid in enumerate(ids):
        exact = ((i * 7919) % 1000) / 997
        lp = 0.0 if i == 0 else -round(exact, 6)
        if i % 4 == 1:
            lp = -_F32.unpack(_F32.pack(exact))[0]
        elif i % 4 == 3:
            lp = -exact
        alt = (tid * 31 + 7) % 128000
        tops = [[tid, lp], [alt, round(lp - 1.5, 6) if i % 2 == 0 else lp - 1.5]][: i % 3]
        entries.append([lp, tops])
    return entries


_F32 = struct.Struct("<f")


# ----------------------------------------------------------------------------------------------------------------
# Chunkings (docs/golden-streams.md "Chunkings").


@dataclass
class Chunking:
    """A named way to deliver the output: its JSON description and the backend chunks it stands for."""

    name: str
    description: JsonObj
    chunks: list[JsonObj]
    tokenizer: bool


def _text_chunking(
    name: str, text: str, bounds: list[int], counts: list[int], *, tokenizer: bool
) -> Chunking:
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    chunks = [{"kind": "text", "text": p, "token_count": c} for p, c in zip(pieces, counts)]
    desc = {"kind": "text", "tokenizer": tokenizer, "bounds": bounds, "token_counts": counts}
    return Chunking(name, desc, chunks, tokenizer)


def _chars_chunking(text: str) -> Chunking:
    # One chunk per code point with token_count 1; described by a keyword instead of len+1 offsets.
    chunks = [{"kind": "text", "text": ch, "token_count": 1} for ch in text]
    return Chunking("chars", {"kind": "text", "tokenizer": False, "split": "chars"}, chunks, False)


def _random_bounds(name: str, text: str, k: int) -> list[int]:
    rng = random.Random(f"{name}/random-{k}")
    pieces = rng.randint(2, min(len(text), 12))
    cuts = sorted(rng.sample(range(1, len(text)), pieces - 1))
    return [0, *cuts, len(text)]


def build_chunkings(sc: Any, ids: list[int], logprobs: list[list[Any]] | None) -> list[Chunking]:
    text = sc.output
    out = [
        _text_chunking("whole", text, [0, len(text)], [len(ids)], tokenizer=False),
        _text_chunking("whole_tok", text, [0, len(text)], [len(ids)], tokenizer=True),
        _chars_chunking(text),
    ]
    if len(text) >= 2:
        n_random = random.Random(f"{sc.name}/random").choice((2, 3))
        for k in range(1, n_random + 1):
            bounds = _random_bounds(sc.name, text, k)
            counts = [len(encode(text[a:b])) for a, b in itertools.pairwise(bounds)]
            out.append(_text_chunking(f"random-{k}", text, bounds, counts, tokenizer=False))
    for name, group in (("tokens", 1), ("tokens4", 4)):
        chunks: list[JsonObj] = []
        for start in range(0, len(ids), group):
            chunk: JsonObj = {"kind": "tokens", "ids": ids[start : start + group]}
            if logprobs is not None:
                chunk["logprobs"] = logprobs[start : start + group]
            chunks.append(chunk)
        desc: JsonObj = {
            "kind": "tokens",
            "tokenizer": True,
            "group": group,
            "logprobs": logprobs is not None,
        }
        out.append(Chunking(name, desc, chunks, True))
    for ex in sc.explicit:
        chunks = []
        for piece in ex.pieces:
            if isinstance(piece, cases.TokensOf):
                piece_ids = encode(piece.text)
                check_round_trip(piece.text, piece_ids, where=f"{sc.name}/{ex.name}")
                chunk = {"kind": "tokens", "ids": piece_ids}
                if piece.logprobs:
                    chunk["logprobs"] = fake_logprobs(piece_ids)
                chunks.append(chunk)
            else:
                count = len(encode(piece.text)) if piece.token_count is None else piece.token_count
                chunks.append({"kind": "text", "text": piece.text, "token_count": count})
        spelled = "".join(c["text"] if c["kind"] == "text" else _spell(c["ids"]) for c in chunks)
        if spelled != text:
            raise SystemExit(f"{sc.name}/{ex.name}: explicit chunks spell {spelled!r}, not the output")
        desc = {"kind": "explicit", "tokenizer": ex.tokenizer, "chunks": [_strip_kind(c) for c in chunks]}
        out.append(Chunking(f"x-{ex.name}", desc, chunks, ex.tokenizer))
    return out


def _spell(ids: Iterable[int]) -> str:
    return b"".join(ID_BYTES[i] for i in ids).decode("utf-8")


# ----------------------------------------------------------------------------------------------------------------
# Deviation-aware expectations: the same chunkings, applied to an output the reference reads the way dscodec
# reads the scenario's output (docs/golden-streams.md "Deviation-aware expectations").


def _edit_map(output: str, other: str) -> Any:
    """A map of code-point offsets of ``output`` onto ``other``, for two texts that differ in one stretch
    (a cut-off end, a rewritten tag): offsets in the common prefix stay, those in the common suffix shift,
    those inside the changed stretch go to its start."""
    prefix = 0
    while prefix < min(len(output), len(other)) and output[prefix] == other[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(output), len(other)) - prefix
        and output[len(output) - 1 - suffix] == other[len(other) - 1 - suffix]
    ):
        suffix += 1
    shift = len(other) - len(output)

    def mapped(offset: int) -> int:
        if offset <= prefix:
            return offset
        if offset >= len(output) - suffix:
            return offset + shift
        return prefix

    return mapped


def equivalent_chunkings(sc: Any, chunkings: list[Chunking], other: str) -> list[Chunking]:
    """The scenario's chunkings applied to ``other``: each chunk covers the mapped stretch of the new text.

    Text chunks keep their (mapped) bounds; chunks that become empty only because of the mapping are dropped
    (what was cut off is never pushed). ``tokens``/``tokens4`` are rebuilt from the ids of ``other``; explicit id
    chunks are re-encoded from their mapped stretch (checked to spell it back).
    """
    mapped = _edit_map(sc.output, other)
    other_ids = encode(other)
    check_round_trip(other, other_ids, where=f"{sc.name} (reads as)")
    out = []
    for c in chunkings:
        if c.description["kind"] == "tokens":
            group = c.description["group"]
            lps = fake_logprobs(other_ids) if c.description["logprobs"] else None
            chunks: list[JsonObj] = []
            for start in range(0, len(other_ids), group):
                chunk: JsonObj = {"kind": "tokens", "ids": other_ids[start : start + group]}
                if lps is not None:
                    chunk["logprobs"] = lps[start : start + group]
                chunks.append(chunk)
            out.append(Chunking(c.name, c.description, chunks, c.tokenizer))
            continue
        chunks = []
        at = 0
        for chunk in c.chunks:
            size = len(chunk["text"]) if chunk["kind"] == "text" else len(_spell(chunk["ids"]))
            a, b = mapped(at), mapped(at + size)
            at += size
            piece = other[a:b]
            if not piece and size:
                continue
            if chunk["kind"] == "text":
                count = 1 if c.name == "chars" else len(encode(piece))
                chunks.append({"kind": "text", "text": piece, "token_count": count})
            else:
                piece_ids = encode(piece)
                check_round_trip(piece, piece_ids, where=f"{sc.name}/{c.name} (reads as)")
                mapped_chunk: JsonObj = {"kind": "tokens", "ids": piece_ids}
                if chunk.get("logprobs"):
                    mapped_chunk["logprobs"] = fake_logprobs(piece_ids)
                chunks.append(mapped_chunk)
        spelled = "".join(ch["text"] if ch["kind"] == "text" else _spell(ch["ids"]) for ch in chunks)
        if spelled != other:
            raise SystemExit(f"{sc.name}/{c.name}: the mapped chunks spell {spelled!r}, not {other!r}")
        out.append(Chunking(c.name, c.description, chunks, c.tokenizer))
    return out


def _strip_kind(chunk: JsonObj) -> JsonObj:
    return {k: v for k, v in chunk.items() if k != "kind"}


# ----------------------------------------------------------------------------------------------------------------
# Driving the reference.


def _error(exc: BaseException, *, during: str, index: int | None) -> JsonObj:
    return {"during": during, "index": index, "type": type(exc).__name__, "message": str(exc)}


def convert(protocol: str, body: JsonObj) -> tuple[Any, Any]:
    request = REQUEST_CLASSES[protocol](json.dumps(body))
    return request, request.convert(dr.ConversionOptions())


def make_processor(protocol: str, sc: Any, body: JsonObj, *, tokenizer: bool) -> Any:
    request, converted = convert(protocol, body)
    generator = request.chunk_generator(converted, GENERATOR_IDS[protocol], body["model"])
    if protocol == "messages" and sc.signature is not None:
        generator = generator.with_signature(sc.signature)
    return dr.StreamProcessor(
        generator, converted.parsing_options, tokenizer=REF_TOKENIZER if tokenizer else None
    )


def ready_spec(sc: Any) -> JsonObj | None:
    if sc.ready is None:
        return None
    return {
        "kind": "ready",
        "prompt_tokens": sc.ready.prompt_tokens,
        "prompt_cache_hit_tokens": sc.ready.prompt_cache_hit_tokens,
        "system_fingerprint": sc.ready.system_fingerprint,
    }


def run_stream(protocol: str, sc: Any, body: JsonObj, chunking: Chunking) -> JsonObj:
    """Push ready, the chunks, the finish chunk (stopping once the processor has finished), then finish()."""
    proc = make_processor(protocol, sc, body, tokenizer=chunking.tokenizer)
    inputs: list[JsonObj] = []
    ready = ready_spec(sc)
    if ready is not None:
        inputs.append(ready)
    inputs.extend(chunking.chunks)
    if sc.finish is not None:
        inputs.append({"kind": "finish", "reason": sc.finish})
    raw_events: list[Any] = []
    per_call: list[int] = []  # events returned by each push() and by finish(): when things are emitted
    error: JsonObj | None = None
    pushed = 0
    for index, spec in enumerate(inputs):
        if proc.finished:  # a stop sequence matched: a real server stops pushing (spec §5.4)
            break
        try:
            emitted = proc.push(chunk_from_spec(spec))
        except RuntimeError as exc:
            error = _error(exc, during="push", index=index)
            break
        raw_events.extend(emitted)
        per_call.append(len(emitted))
        pushed += 1
    if error is None:
        try:
            emitted = proc.finish()
        except RuntimeError as exc:
            error = _error(exc, during="finish", index=None)
        else:
            raw_events.extend(emitted)
            per_call.append(len(emitted))
    events = [json.loads(e.to_json()) for e in raw_events]
    prompt = (sc.ready.prompt_tokens, sc.ready.prompt_cache_hit_tokens) if sc.ready else (0, 0)
    accumulator = RESPONSE_CLASSES[protocol](
        GENERATOR_IDS[protocol], body["model"], ACCUMULATOR_CREATED, *prompt
    )
    response: JsonObj | None
    acc_error: JsonObj | None = None
    try:
        for event in raw_events:
            accumulator.accumulate(event)
        response = json.loads(accumulator.to_json())
    except (RuntimeError, ValueError) as exc:
        response = None
        acc_error = _error(exc, during="accumulate", index=None)
    result: JsonObj = {
        "pushed": pushed,
        "inputs": len(inputs),
        "finished": proc.finished,
        "error": error,
        "n_events": len(events),
        "response": response,
        "deltas": DELTAS[protocol](events),
        "finish": FINISHES[protocol](events),
        "usage": USAGES[protocol](events),
    }
    if acc_error is not None:
        result["accumulate_error"] = acc_error
    result["per_call"] = per_call
    result["events"] = events
    return result


# ----------------------------------------------------------------------------------------------------------------
# Per-protocol summaries of a stream: concatenated deltas per channel, the finish and the usage.


def _chat_deltas(events: list[JsonObj]) -> JsonObj:
    reasoning, content = [], []
    calls: dict[int, JsonObj] = {}
    logprobs: dict[str, list[Any]] = {}
    for ev in events:
        for choice in ev.get("choices", []):
            delta = choice.get("delta") or {}
            reasoning.append(delta.get("reasoning_content") or "")
            content.append(delta.get("content") or "")
            for tc in delta.get("tool_calls") or []:
                entry = calls.setdefault(
                    tc["index"], {"index": tc["index"], "id": None, "name": None, "arguments": ""}
                )
                if tc.get("id") is not None:
                    entry["id"] = tc["id"]
                fn = tc.get("function") or {}
                if fn.get("name") is not None:
                    entry["name"] = fn["name"]
                entry["arguments"] += fn.get("arguments") or ""
            for channel, entries in (choice.get("logprobs") or {}).items():
                logprobs.setdefault(channel, []).extend(entries or [])
    out: JsonObj = {
        "reasoning": "".join(reasoning),
        "content": "".join(content),
        "tool_calls": list(calls.values()),
    }
    if logprobs:
        out["logprobs"] = logprobs
    fingerprints = sorted({str(ev.get("system_fingerprint")) for ev in events})
    out["system_fingerprints"] = fingerprints
    return out


def _chat_finish(events: list[JsonObj]) -> JsonObj:
    reasons = [
        c.get("finish_reason") for ev in events for c in ev.get("choices", []) if c.get("finish_reason")
    ]
    return {"finish_reason": reasons[-1] if reasons else None}


def _chat_usage(events: list[JsonObj]) -> JsonObj | None:
    usages = [ev["usage"] for ev in events if ev.get("usage")]
    return usages[-1] if usages else None


def _responses_deltas(events: list[JsonObj]) -> JsonObj:
    reasoning, content = [], []
    logprobs: list[Any] = []
    items: dict[int, JsonObj] = {}
    calls: dict[str, JsonObj] = {}
    for ev in events:
        kind = ev["type"]
        if kind == "response.reasoning_text.delta":
            reasoning.append(ev["delta"])
        elif kind == "response.output_text.delta":
            content.append(ev["delta"])
            logprobs.extend(ev.get("logprobs") or [])
        elif kind == "response.output_item.added":
            item = ev["item"]
            summary: JsonObj = {"output_index": ev["output_index"], "type": item["type"], "id": item["id"]}
            if item["type"] == "message":
                summary["added_phase"] = item.get("phase")
            items[ev["output_index"]] = summary
            if item["type"] in ("function_call", "custom_tool_call"):
                call: JsonObj = {
                    "output_index": ev["output_index"],
                    "type": item["type"],
                    "call_id": item["call_id"],
                    "name": item["name"],
                }
                if "namespace" in item:
                    call["namespace"] = item["namespace"]
                call["arguments" if item["type"] == "function_call" else "input"] = ""
                calls[item["id"]] = call
        elif kind == "response.function_call_arguments.delta":
            calls[ev["item_id"]]["arguments"] += ev["delta"]
        elif kind == "response.custom_tool_call_input.delta":
            calls[ev["item_id"]]["input"] += ev["delta"]
        elif kind == "response.output_item.done":
            item = ev["item"]
            summary = items.setdefault(
                ev["output_index"], {"output_index": ev["output_index"], "type": item["type"]}
            )
            summary["done_status"] = item.get("status")
            if item["type"] == "message":
                summary["done_phase"] = item.get("phase")
    out: JsonObj = {
        "reasoning": "".join(reasoning),
        "content": "".join(content),
        "tool_calls": list(calls.values()),
        "items": [items[k] for k in sorted(items)],
    }
    if logprobs:
        out["logprobs"] = logprobs
    return out


def _responses_final(events: list[JsonObj]) -> JsonObj | None:
    finals = [ev["response"] for ev in events if ev["type"] in ("response.completed", "response.incomplete")]
    return finals[-1] if finals else None


def _responses_finish(events: list[JsonObj]) -> JsonObj:
    final = _responses_final(events)
    if final is None:
        return {"status": None, "incomplete_details": None}
    return {"status": final["status"], "incomplete_details": final["incomplete_details"]}


def _responses_usage(events: list[JsonObj]) -> JsonObj | None:
    final = _responses_final(events)
    return None if final is None else final.get("usage")


def _messages_deltas(events: list[JsonObj]) -> JsonObj:
    thinking, signature, content = [], [], []
    blocks: dict[int, JsonObj] = {}
    calls: dict[int, JsonObj] = {}
    for ev in events:
        kind = ev["type"]
        if kind == "content_block_start":
            block = ev["content_block"]
            blocks[ev["index"]] = {"index": ev["index"], "type": block["type"]}
            if block["type"] == "tool_use":
                calls[ev["index"]] = {
                    "index": ev["index"],
                    "id": block["id"],
                    "name": block["name"],
                    "arguments": "",
                }
        elif kind == "content_block_delta":
            delta = ev["delta"]
            if delta["type"] == "thinking_delta":
                thinking.append(delta["thinking"])
            elif delta["type"] == "signature_delta":
                signature.append(delta["signature"])
            elif delta["type"] == "text_delta":
                content.append(delta["text"])
            elif delta["type"] == "input_json_delta":
                calls[ev["index"]]["arguments"] += delta["partial_json"]
        elif kind == "content_block_stop":
            blocks.setdefault(ev["index"], {"index": ev["index"], "type": None})["stopped"] = True
    return {
        "reasoning": "".join(thinking),
        "content": "".join(content),
        "tool_calls": [calls[k] for k in sorted(calls)],
        "signature": "".join(signature) if signature else None,
        "blocks": [blocks[k] for k in sorted(blocks)],
        "pings": sum(1 for ev in events if ev["type"] == "ping"),
    }


def _messages_finish(events: list[JsonObj]) -> JsonObj:
    deltas = [ev["delta"] for ev in events if ev["type"] == "message_delta"]
    if not deltas:
        return {"stop_reason": None, "stop_sequence": None}
    return {"stop_reason": deltas[-1].get("stop_reason"), "stop_sequence": deltas[-1].get("stop_sequence")}


def _messages_usage(events: list[JsonObj]) -> JsonObj | None:
    usages = [ev["usage"] for ev in events if ev["type"] == "message_delta"]
    return usages[-1] if usages else None


DELTAS = {"chat_completions": _chat_deltas, "responses": _responses_deltas, "messages": _messages_deltas}
FINISHES = {"chat_completions": _chat_finish, "responses": _responses_finish, "messages": _messages_finish}
USAGES = {"chat_completions": _chat_usage, "responses": _responses_usage, "messages": _messages_usage}


# ----------------------------------------------------------------------------------------------------------------
# Output files: top-level keys one per line, values compact (small diffs, small files).


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _write_lines(path: Path, obj: JsonObj, *, expand: str | None = None) -> None:
    lines = []
    for key, value in obj.items():
        if key == expand and isinstance(value, dict):
            inner = ",\n".join(f"  {_compact(k)}:{_compact(v)}" for k, v in value.items())
            lines.append(f"{_compact(key)}:{{\n{inner}\n}}")
        else:
            lines.append(f"{_compact(key)}:{_compact(value)}")
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")


def backend_items(sc: Any, chunking: Chunking) -> list[BackendItem]:
    """The chunks of ``chunking`` as transcript backend items: the ready chunk, the output, the finish chunk."""
    items: list[BackendItem] = []
    if sc.ready is not None:
        items.append(
            Usage(sc.ready.prompt_tokens, sc.ready.prompt_cache_hit_tokens, sc.ready.system_fingerprint)
        )
    for chunk in chunking.chunks:
        if chunk["kind"] == "text":
            items.append(Text(chunk["text"], chunk["token_count"]))
        else:
            logprobs = chunk.get("logprobs")
            entries = (
                None
                if logprobs is None
                else tuple((_float(lp), tuple((tid, _float(t)) for tid, t in top)) for lp, top in logprobs)
            )
            items.append(Tokens(tuple(chunk["ids"]), entries))
    if sc.finish is not None:
        items.append(Finish(sc.finish))
    return items


def take(
    protocol: str, sc: Any, body: JsonObj, chunking: Chunking, result: JsonObj, meta: JsonObj
) -> Transcript:
    """One chunking's run as a transcript: the backend items pushed, the reference's events as SSE frames (Chat
    streams end with ``[DONE]``), the reference accumulator's response; how the run went in ``meta``."""
    frames = [
        Frame(_compact(event), None if protocol == "chat_completions" else event["type"])
        for event in result["events"]
    ]
    streamed = protocol != "chat_completions" or bool(body.get("stream"))
    if protocol == "chat_completions" and streamed and result["error"] is None:
        frames.append(Frame("[DONE]"))
    reference = {
        key: result[key] for key in ("finished", "pushed", "inputs", "per_call", "error") if key in result
    }
    if "accumulate_error" in result:
        reference["accumulate_error"] = result["accumulate_error"]
    return Transcript(
        protocol=protocol,  # type: ignore[arg-type]
        request=body,
        backend=backend_items(sc, chunking),
        # A request that is not streamed answers with the response; the events stay, for event-for-event checks.
        frames=frames,
        response=None if streamed else result["response"],
        accumulated=result["response"] if streamed else None,
        name=f"{sc.name}/{chunking.name}",
        origin="reference",
        response_id=GENERATOR_IDS[protocol],
        signature=sc.signature if protocol == "messages" else None,
        meta={
            **meta,
            "chunking": chunking.name,
            "chunks": chunking.description,
            "tokenizer": chunking.tokenizer,
            "reference": reference,
        },
    )


def record_scenario(sc: Any) -> tuple[JsonObj, int]:
    """Record one scenario into fixtures/streams/<protocol>/<name>.jsonl; return its index entry and the number
    of runs."""
    ids = encode(sc.output)
    check_round_trip(sc.output, ids, where=sc.name)
    logprobs = fake_logprobs(ids) if sc.logprobs else None
    chunkings = build_chunkings(sc, ids, logprobs)
    protocols = sc.protocols()
    if not protocols:
        raise SystemExit(f"{sc.name}: no protocol can express this scenario")
    bodies = {p: BODY_BUILDERS[p](sc) for p in protocols}
    options = {}
    for protocol in protocols:
        try:
            _, converted = convert(protocol, bodies[protocol])
        except (dr.ConversionError, ValueError) as exc:  # a request the reference refuses is a catalogue bug
            raise SystemExit(f"{sc.name}/{protocol}: the reference refused the request: {exc}") from None
        options[protocol] = parsing_options_json(converted.parsing_options)
    reads_as = sc.reads_as_output()
    shared: JsonObj = {
        "scenario": sc.name,
        "description": sc.description,
        "version": sc.version,
        "thinking": sc.thinking,
        "settings": {
            "tools": sc.tools,
            "tool_choice": sc.tool_choice,
            "json_object": sc.json_object,
            "stop": list(sc.stop),
            "prefix": sc.prefix,
            "logprobs": sc.logprobs,
            "chat_stream": sc.chat_stream,
        },
        "output": sc.output,
        **({} if reads_as is None else {"reads_as": {"deviation": reads_as[0], "output": reads_as[1]}}),
    }
    runs = 0
    for protocol in protocols:
        meta = {**shared, "parsing_options": options[protocol]}
        # With ``reads_as`` the answers are the reference's on the equivalent output, pushed in the same chunks
        # (mapped); the backend items stay the scenario's own, which dscodec must answer that way.
        answered = chunkings if reads_as is None else equivalent_chunkings(sc, chunkings, reads_as[1])
        takes: list[Transcript] = []
        for own, ran in zip(chunkings, answered):
            # Messages has no reasoning-token field, the only thing the tokenizer changes for text chunks.
            if protocol == "messages" and own.name in MESSAGES_SKIP:
                continue
            result = run_stream(protocol, sc, bodies[protocol], ran)
            # The scenario's notes go with the first transcript of the file only (they are the same for all).
            notes = meta if not takes else {"scenario": sc.name}
            takes.append(take(protocol, sc, bodies[protocol], own, result, notes))
        runs += len(takes)
        folder = OUT / protocol
        folder.mkdir(parents=True, exist_ok=True)
        dump_transcripts(takes, folder / f"{sc.name}.jsonl")
    return {
        "version": sc.version,
        "protocols": list(protocols),
        "chunkings": [c.name for c in chunkings],
        "description": sc.description,
    }, runs


# ----------------------------------------------------------------------------------------------------------------
# Lifecycle facts (spec §5.1, §5.6, §5.7 quirks), recorded as step-by-step transcripts.

_NOTHINK_CHAT = {
    "model": "DeepSeek-V4-Pro",
    "messages": [{"role": "user", "content": "Hi"}],
    "stream": True,
    "stream_options": {"include_usage": True},
    "thinking": {"type": "disabled"},
}
_THINK_CHAT = {**_NOTHINK_CHAT, "thinking": {"type": "enabled"}}
_STOP_CHAT = {**_NOTHINK_CHAT, "stop": ["END"]}
_RESPONSES = {"model": "DeepSeek-V4-Pro", "input": "Hi", "stream": True, "reasoning": {"effort": "none"}}
_RESPONSES_THINK = {**_RESPONSES, "reasoning": {"effort": "high"}}
_MESSAGES = {
    "model": "DeepSeek-V4-Pro",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "Hi"}],
    "stream": True,
    "thinking": {"type": "disabled"},
}
_MESSAGES_THINK = {**_MESSAGES, "thinking": {"type": "enabled", "budget_tokens": 1024}}


def _t(text: str, count: int = 1) -> JsonObj:
    return {"kind": "text", "text": text, "token_count": count}


def _r(prompt: int = 10, hit: int = 4, fp: str | None = "fp_1") -> JsonObj:
    return {
        "kind": "ready",
        "prompt_tokens": prompt,
        "prompt_cache_hit_tokens": hit,
        "system_fingerprint": fp,
    }


def _f(reason: str = "stop") -> JsonObj:
    return {"kind": "finish", "reason": reason}


def _push(chunk: JsonObj) -> JsonObj:
    return {"call": "push", "chunk": chunk}


_FINISH_CALL: JsonObj = {"call": "finish"}
_CLOSE_CALL: JsonObj = {"call": "close"}

LIFECYCLE: list[tuple[str, str, str, JsonObj, bool, list[JsonObj]]] = [
    # (name, description, protocol, request body, tokenizer attached, steps)
    (
        "push-after-finish-chunk",
        "a finish chunk ends the stream; a later push raises, finish() returns []",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_t("a")), _push(_f()), _push(_t("b")), _FINISH_CALL],
    ),
    (
        "finish-twice",
        "finish() twice, then push",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_t("a")), _FINISH_CALL, _FINISH_CALL, _push(_t("b"))],
    ),
    (
        "close-then-calls",
        "after close() every call raises",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_t("a")), _CLOSE_CALL, _push(_t("b")), _FINISH_CALL],
    ),
    (
        "close-after-finish",
        "close() after finish()",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_t("a")), _FINISH_CALL, _CLOSE_CALL, _FINISH_CALL],
    ),
    (
        "logprob-count-mismatch",
        "fewer logprob entries than token ids",
        "chat_completions",
        _NOTHINK_CHAT,
        True,
        [
            _push({"kind": "tokens", "ids": [42, 6002], "logprobs": [[-0.5, []]]}),
            _push(_t("x")),
            _FINISH_CALL,
        ],
    ),
    (
        "logprob-count-more",
        "more logprob entries than token ids",
        "chat_completions",
        _NOTHINK_CHAT,
        True,
        [_push({"kind": "tokens", "ids": [42], "logprobs": [[-0.5, []], [-1.0, []]]}), _FINISH_CALL],
    ),
    (
        "tokens-without-tokenizer",
        "a tokens chunk without a tokenizer raises and closes the processor",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_t("a")), _push({"kind": "tokens", "ids": [42]}), _push(_t("b")), _FINISH_CALL],
    ),
    (
        "ready-after-output",
        "a ready chunk after output is ignored",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_t("a")), _push(_r(99, 9, "fp_late")), _push(_f())],
    ),
    (
        "second-ready",
        "a second ready chunk is ignored",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_r(10, 4, "fp_1")), _push(_r(99, 9, "fp_2")), _push(_t("a")), _push(_f())],
    ),
    (
        "ready-after-output-messages",
        "late ready, Messages",
        "messages",
        _MESSAGES,
        False,
        [_push(_t("a")), _push(_r(99, 9, "fp_late")), _push(_f())],
    ),
    (
        "cache-hit-above-prompt",
        "prompt_cache_hit_tokens larger than prompt_tokens",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_r(3, 5)), _push(_t("a")), _push(_f())],
    ),
    (
        "cache-hit-above-prompt-messages",
        "same, Messages (input_tokens = P - H)",
        "messages",
        _MESSAGES,
        False,
        [_push(_r(3, 5)), _push(_t("a")), _push(_f())],
    ),
    (
        "empty-text-quirk",
        "empty text chunks: no delta at once, empty deltas later",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_t("", 0)), _push(_t("", 0)), _push(_t("a")), _push(_f())],
    ),
    (
        "empty-text-quirk-think",
        "empty text chunks in thinking mode",
        "chat_completions",
        _THINK_CHAT,
        False,
        [
            _push(_t("", 0)),
            _push(_t("r")),
            _push(_t("", 0)),
            _push(_t("</think>")),
            _push(_t("", 0)),
            _push(_t("a")),
            _push(_f()),
        ],
    ),
    (
        "empty-text-quirk-responses",
        "empty text chunks, Responses",
        "responses",
        _RESPONSES,
        False,
        [_push(_t("", 0)), _push(_t("", 0)), _push(_t("a")), _push(_f())],
    ),
    (
        "empty-text-quirk-messages",
        "empty text chunks, Messages",
        "messages",
        _MESSAGES,
        False,
        [_push(_t("", 0)), _push(_t("", 0)), _push(_t("a")), _push(_f())],
    ),
    (
        "empty-text-then-finish",
        "only empty text chunks, then finish()",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_t("", 0)), _push(_t("", 0)), _FINISH_CALL],
    ),
    (
        "empty-tokens-chunk",
        "a tokens chunk with no ids",
        "chat_completions",
        _NOTHINK_CHAT,
        True,
        [_push({"kind": "tokens", "ids": [], "logprobs": []}), _push(_t("a")), _FINISH_CALL],
    ),
    (
        "push-after-stop-match",
        "a stop sequence finishes the processor; later pushes raise",
        "chat_completions",
        _STOP_CHAT,
        False,
        [_push(_t("a END b")), _push(_t("more")), _FINISH_CALL],
    ),
    (
        "finish-only-chat",
        "finish() with nothing pushed (start events come from finish)",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_FINISH_CALL],
    ),
    (
        "finish-only-chat-think",
        "finish() with nothing pushed, thinking",
        "chat_completions",
        _THINK_CHAT,
        False,
        [_FINISH_CALL],
    ),
    (
        "finish-only-responses",
        "finish() with nothing pushed, Responses",
        "responses",
        _RESPONSES,
        False,
        [_FINISH_CALL],
    ),
    (
        "finish-only-responses-think",
        "finish() with nothing pushed, Responses thinking",
        "responses",
        _RESPONSES_THINK,
        False,
        [_FINISH_CALL],
    ),
    (
        "finish-only-messages",
        "finish() with nothing pushed, Messages",
        "messages",
        _MESSAGES,
        False,
        [_FINISH_CALL],
    ),
    (
        "finish-only-messages-think",
        "finish() with nothing pushed, Messages thinking",
        "messages",
        _MESSAGES_THINK,
        False,
        [_FINISH_CALL],
    ),
    (
        "finish-chunk-only",
        "only a Length finish chunk",
        "chat_completions",
        _NOTHINK_CHAT,
        False,
        [_push(_f("length"))],
    ),
    (
        "ready-only",
        "only a ready chunk, then finish()",
        "messages",
        _MESSAGES_THINK,
        False,
        [_push(_r()), _FINISH_CALL],
    ),
    (
        "logprob-nonfinite",
        "non-finite logprobs and an unknown token id",
        "chat_completions",
        _NOTHINK_CHAT,
        True,
        [
            _push(
                {
                    "kind": "tokens",
                    "ids": [42, 6002, 999999999],
                    "logprobs": [["-inf", [[42, "nan"]]], ["nan", []], [0.5, [[999999999, "inf"]]]],
                }
            ),
            _FINISH_CALL,
        ],
    ),
    (
        "logprob-nonfinite-responses",
        "non-finite logprobs, Responses",
        "responses",
        _RESPONSES,
        True,
        [
            _push({"kind": "tokens", "ids": [42, 6002], "logprobs": [["-inf", []], [-0.25, [[42, -0.25]]]]}),
            _FINISH_CALL,
        ],
    ),
    (
        "incomplete-utf8-at-finish",
        "a token id holding half an emoji, then finish()",
        "chat_completions",
        _NOTHINK_CHAT,
        True,
        [_push({"kind": "tokens", "ids": [28927], "logprobs": [[-0.5, []]]}), _FINISH_CALL],
    ),
    (
        "incomplete-utf8-then-text",
        "half an emoji as tokens, then a text chunk",
        "chat_completions",
        _NOTHINK_CHAT,
        True,
        [
            _push({"kind": "tokens", "ids": [28927]}),
            _push(_t("x")),
            _push({"kind": "tokens", "ids": [225]}),
            _FINISH_CALL,
        ],
    ),
    (
        "partial-utf8-tail-holds-chunk",
        "a tokens chunk ending in half a character holds back the whole chunk; finish() drops it uncounted",
        "chat_completions",
        _NOTHINK_CHAT,
        True,
        [_push({"kind": "tokens", "ids": [42, 28927], "logprobs": [[-0.5, []], [-1.0, []]]}), _FINISH_CALL],
    ),
    (
        "partial-utf8-tail-after-emoji",
        "a complete emoji followed by half an emoji in one tokens chunk",
        "chat_completions",
        _NOTHINK_CHAT,
        True,
        [_push({"kind": "tokens", "ids": [28927, 225, 28927]}), _FINISH_CALL],
    ),
    (
        "partial-utf8-completed-later",
        "the held chunk is released (and counted) once the next tokens chunk completes the character",
        "chat_completions",
        _NOTHINK_CHAT,
        True,
        [
            _push({"kind": "tokens", "ids": [42, 28927]}),
            _push({"kind": "tokens", "ids": [225, 42]}),
            _FINISH_CALL,
        ],
    ),
    (
        "logprobs-without-request-flag",
        "logprobs are emitted although the request did not ask for them",
        "messages",
        _MESSAGES,
        True,
        [_push({"kind": "tokens", "ids": [42, 6002], "logprobs": [[-0.5, []], [-1.0, []]]}), _FINISH_CALL],
    ),
]


def record_lifecycle() -> None:
    facts = []
    for name, description, protocol, body, tokenizer, steps in LIFECYCLE:
        request, converted = convert(protocol, body)
        generator = request.chunk_generator(converted, GENERATOR_IDS[protocol], body["model"])
        proc = dr.StreamProcessor(
            generator, converted.parsing_options, tokenizer=REF_TOKENIZER if tokenizer else None
        )
        transcript = []
        for step in steps:
            entry: JsonObj = dict(step)
            try:
                if step["call"] == "push":
                    events = proc.push(chunk_from_spec(step["chunk"]))
                elif step["call"] == "finish":
                    events = proc.finish()
                else:
                    proc.close()
                    events = []
                entry["events"] = [json.loads(e.to_json()) for e in events]
            except (RuntimeError, ValueError, TypeError, OverflowError) as exc:
                entry["error"] = {"type": type(exc).__name__, "message": str(exc)}
            entry["finished"] = proc.finished
            transcript.append(entry)
        facts.append(
            {
                "name": name,
                "description": description,
                "protocol": protocol,
                "request": body,
                "tokenizer": tokenizer,
                "steps": transcript,
            }
        )
    lines = ",\n".join(_compact(f) for f in facts)
    (OUT / "_lifecycle.json").write_text(
        '{\n"note":'
        + _compact("Non-finite logprobs in chunk inputs are written as strings (-inf, inf, nan).")
        + ',\n"facts":[\n'
        + lines
        + "\n]}\n",
        encoding="utf-8",
    )


# ----------------------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="record only scenarios whose name contains this substring")
    args = parser.parse_args(argv)
    scenarios = cases.all_scenarios()
    selected = [sc for sc in scenarios if args.only is None or args.only in sc.name]
    if args.only is None and OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True, exist_ok=True)
    index: JsonObj = {}
    runs = 0
    for sc in selected:
        for old in OUT.glob(f"*/{sc.name}.jsonl"):
            old.unlink()
        index[sc.name], scenario_runs = record_scenario(sc)
        runs += scenario_runs
    if args.only is None or args.only in "_lifecycle":
        record_lifecycle()
    # The index always lists the whole catalogue, so a partial run keeps it complete.
    full_index = {}
    for sc in scenarios:
        full_index[sc.name] = index.get(sc.name) or {
            "version": sc.version,
            "protocols": list(sc.protocols()),
            "chunkings": _existing_chunkings(sc.name),
            "description": sc.description,
        }
    _write_lines(OUT / "_index.json", {"scenarios": full_index}, expand="scenarios")
    print(f"recorded {len(selected)} scenarios ({runs} protocol x chunking runs) into {OUT}")
    return 0


def _existing_chunkings(name: str) -> list[str]:
    index = OUT / "_index.json"
    if not index.exists():
        return []
    entry = json.loads(index.read_text(encoding="utf-8"))["scenarios"].get(name) or {}
    return list(entry.get("chunkings", []))


if __name__ == "__main__":
    sys.exit(main())
