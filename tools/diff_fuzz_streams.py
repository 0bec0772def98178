"""Differential fuzzing of the response path: random model outputs, cut at random, fed to dscodec's
``StreamProcessor`` and to the reference's (``deepseek_recipe``, called as a black box); report every output
where the complete responses disagree.

    python tools/diff_fuzz_streams.py [--count 500] [--seed 1] [--malformed] [--protocol messages] [--out DIR]

Outputs come from ``dscodec.testing.strategies`` (reasoning, answer, DSML calls in the version's spelling with
every value kind, stop sequences; ``--malformed`` adds broken markup). Each is pushed as text chunks at random
cut points, to both sides, with a finish reason of ``stop``.

Compared, from each side's complete response: the reasoning text, the answer text, the tool calls (name and
arguments, parsed as JSON) and the finish reason. Where dscodec deviates on purpose (docs/deviations.md: D7 JSON
mode, D8 arguments of malformed tags, D15 the end-of-sentence token) differences are expected; read them before
filing a bug. A disagreement worth keeping becomes a scenario in ``tools/golden_cases/streams.py``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import deepseek_recipe as dr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dscodec
from dscodec.testing.strategies import model_outputs, request_bodies

PROTOCOLS = ("chat_completions", "responses", "messages")
REQUEST_CLASSES = {
    "chat_completions": dr.ChatCompletionRequest,
    "responses": dr.ResponsesRequest,
    "messages": dr.MessagesRequest,
}
RESPONSE_CLASSES = {
    "chat_completions": dr.ChatCompletionResponse,
    "responses": dr.ResponsesResponse,
    "messages": dr.MessagesResponse,
}


def _view(protocol: str, response: dict[str, Any]) -> dict[str, Any]:
    """Reasoning, answer, calls and finish of a complete response, in one shape for all protocols."""
    reasoning, content, calls, finish = "", "", [], None
    if protocol == "chat_completions":
        choice = response["choices"][0]
        message = choice["message"]
        reasoning = message.get("reasoning_content") or ""
        content = message.get("content") or ""
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or ()]
        finish = choice.get("finish_reason")
    elif protocol == "responses":
        for item in response.get("output", ()):
            if item["type"] == "reasoning":
                reasoning += "".join(part.get("text", "") for part in item.get("content") or ())
            elif item["type"] == "message":
                content += "".join(part.get("text", "") for part in item.get("content") or ())
            elif item["type"] == "function_call":
                calls.append((item["name"], item["arguments"]))
        finish = response.get("status")
    else:
        for block in response.get("content", ()):
            if block["type"] == "thinking":
                reasoning += block.get("thinking", "")
            elif block["type"] == "text":
                content += block.get("text", "")
            elif block["type"] == "tool_use":
                calls.append((block["name"], json.dumps(block["input"], sort_keys=True)))
        finish = response.get("stop_reason")
    parsed = []
    for name, arguments in calls:
        try:
            parsed.append((name, json.loads(arguments)))
        except ValueError:
            parsed.append((name, f"<invalid JSON> {arguments}"))
    return {"reasoning": reasoning, "content": content, "calls": parsed, "finish": finish}


_REF_TOKENIZER: Any = None


def _ref_tokenizer() -> Any:
    global _REF_TOKENIZER
    if _REF_TOKENIZER is None:
        from dscodec.vocab import bundled_tokenizer_path

        _REF_TOKENIZER = dr.Tokenizer.from_file(str(bundled_tokenizer_path()))
    return _REF_TOKENIZER


def reference_response(protocol: str, body: dict[str, Any], pieces: list[Any]) -> dict[str, Any]:
    """``pieces``: text chunks, or lists of token ids."""
    ids = bool(pieces) and isinstance(pieces[0], list)
    request = REQUEST_CLASSES[protocol](json.dumps(body))
    converted = request.convert(dr.ConversionOptions())
    generator = request.chunk_generator(converted, "id-1", body["model"])
    processor = dr.StreamProcessor(
        generator, converted.parsing_options, tokenizer=_ref_tokenizer() if ids else None
    )
    events = []
    for piece in pieces:
        if processor.finished:
            break
        chunk = dr.InferenceChunk.tokens(piece, None) if ids else dr.InferenceChunk.text(piece, 1)
        events += processor.push(chunk)
    if not processor.finished:
        events += processor.push(dr.InferenceChunk.finish(dr.InferenceFinishReason.Stop))
    events += processor.finish()
    accumulator = RESPONSE_CLASSES[protocol]("acc", body["model"], 0, 0, 0)
    for event in events:
        accumulator.accumulate(event)
    return _view(protocol, json.loads(accumulator.to_json()))


def our_response(protocol: str, body: dict[str, Any], pieces: list[Any]) -> dict[str, Any]:
    request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
    processor = dscodec.StreamProcessor(request, response_id="id-1", model=body["model"])
    events = processor.start(prompt_tokens=0, cached_tokens=0)
    for piece in pieces:
        if processor.finished:
            break
        events += processor.push_tokens(piece) if isinstance(piece, list) else processor.push_text(piece, 1)
    events += processor.finish("stop")
    return _view(protocol, json.loads(json.dumps(dscodec.accumulate(protocol, events))))


_VOCABULARY: Any = None


def _vocabulary() -> Any:
    global _VOCABULARY
    if _VOCABULARY is None:
        from dscodec.vocab import Vocabulary

        _VOCABULARY = Vocabulary.load(None)
    return _VOCABULARY


def fuzz(protocol: str, args: argparse.Namespace) -> int:
    """Run ``args.count`` outputs of ``protocol`` through both sides; the number that differ."""
    rng = random.Random(args.seed)
    found: Counter[str] = Counter()
    ran = [0]

    @settings(
        max_examples=args.count,
        database=None,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        body = data.draw(request_bodies(protocol))
        request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
        output = data.draw(model_outputs(request, malformed=args.malformed))
        text = output.text
        units: Any = _vocabulary().full.encode(text, add_special_tokens=False).ids if args.ids else text
        cuts = (
            sorted(rng.sample(range(1, len(units)), min(len(units) - 1, rng.randint(0, 12)))) if units else []
        )
        pieces = [units[a:b] for a, b in zip([0, *cuts], [*cuts, len(units)])]
        ran[0] += 1
        try:
            theirs = reference_response(protocol, body, pieces)
        except Exception as exc:  # noqa: BLE001 - the reference failing is a case to look at, not a crash
            theirs = {"error": f"{type(exc).__name__}: {exc}"}
        try:
            ours = our_response(protocol, body, pieces)
        except Exception as exc:  # noqa: BLE001 - an internal error is exactly what this looks for
            ours = {"error": f"{type(exc).__name__}: {exc}"}
        if ours == theirs:
            return
        keys = [k for k in sorted(set(ours) | set(theirs)) if ours.get(k) != theirs.get(k)]
        key = ",".join(keys)
        found[key] += 1
        if found[key] <= 3:
            print(f"{protocol}: differs in {key}")
            for k in keys:
                print(f"    {k}: dscodec {str(ours.get(k))[:300]!r}")
                print(f"    {k}: reference {str(theirs.get(k))[:300]!r}")
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                case = {"protocol": protocol, "body": body, "pieces": pieces}
                name = f"{protocol}-{sum(found.values())}.json"
                (args.out / name).write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")

    run()
    print(f"{protocol}: {ran[0]} outputs, {sum(found.values())} differ {dict(found)}")
    return sum(found.values())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--protocol", choices=PROTOCOLS, action="append")
    parser.add_argument("--count", type=int, default=300, help="outputs per protocol")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--malformed", action="store_true", help="also broken markup")
    parser.add_argument(
        "--ids", action="store_true", help="push token ids (the bundled V4 tokenizer) instead of text"
    )
    parser.add_argument("--out", type=Path, default=None, help="write each differing case here")
    args = parser.parse_args()
    total = sum(fuzz(protocol, args) for protocol in args.protocol or PROTOCOLS)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
