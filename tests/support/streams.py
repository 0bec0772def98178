"""Replaying recorded stream scenarios through dscodec (see docs/golden-streams.md for the fixture layout)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dscodec
from dscodec.conversation import ConversationRequest
from dscodec.protocols._wire import WireEvent
from tests.support.fixtures import FIXTURES, read_json

STREAMS = FIXTURES / "streams"
CALL_ID = re.compile(r"call_\d{2}_(?:ET_)?[A-Za-z0-9]{20}\d{4}")


def scenarios() -> list[Path]:
    return sorted(p for p in STREAMS.iterdir() if p.is_dir()) if STREAMS.is_dir() else []


def scenario_protocols(protocol: str) -> list[Path]:
    return [p for p in scenarios() if (p / f"{protocol}.json").is_file()]


class _IdFactory:
    """Deterministic call ids in the reference's format, so outputs compare after normalisation."""

    def __call__(self, index: int) -> str:
        return f"call_{index:02d}_{'A' * 20}{index:04d}"


_STAMPS = ("created", "created_at", "completed_at")


def _unstamp(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (0 if k in _STAMPS and isinstance(v, int) else _unstamp(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_unstamp(v) for v in value]
    return value


def normalise(value: Any) -> Any:
    """Replace random call ids and wall-clock stamps so recorded and replayed outputs compare."""
    text = json.dumps(value, ensure_ascii=False)
    text = CALL_ID.sub("<call-id>", text)
    return _unstamp(json.loads(text))


@dataclass
class Replay:
    request: ConversationRequest
    events: list[WireEvent]
    finished: bool
    #: tokens the backend reported in the chunks that were pushed (a stop sequence can end the replay early)
    pushed_tokens: int


def chunks_of(scenario: dict[str, Any], name: str) -> Iterator[dict[str, Any]]:
    """The recorded chunking ``name`` as ``{"text", "token_count"}`` / ``{"ids", "logprobs"}`` pushes."""
    spec = scenario["chunkings"][name]
    output: str = scenario["output"]
    kind = spec["kind"]
    if kind == "text":
        if spec.get("split") == "chars":
            for ch in output:
                yield {"text": ch, "token_count": 1}
            return
        bounds, counts = spec["bounds"], spec["token_counts"]
        for i, count in enumerate(counts):
            yield {"text": output[bounds[i] : bounds[i + 1]], "token_count": count}
    elif kind == "tokens":
        ids: list[int] = scenario["token_ids"]
        lps = scenario.get("logprobs") if spec.get("logprobs") else None
        group = spec["group"]
        for at in range(0, len(ids), group):
            chunk: dict[str, Any] = {"ids": ids[at : at + group]}
            if lps is not None:
                chunk["logprobs"] = [(lp, [tuple(t) for t in tops]) for lp, tops in lps[at : at + group]]
            yield chunk
    else:  # explicit
        yield from spec["chunks"]


def replay(case: Path, protocol: str, chunking: str) -> Replay:
    """Feed one recorded chunking through a fresh :class:`dscodec.StreamProcessor`, as the recorder did."""
    scenario = read_json(case / "scenario.json")
    request = dscodec.convert(protocol, scenario["requests"][protocol])  # type: ignore[arg-type]
    generator = scenario["generators"][protocol]
    processor = dscodec.StreamProcessor(
        request,
        response_id=generator["id"],
        model=generator["model"],
        created=scenario["accumulator"]["created"],
        signature=generator.get("signature"),
        tool_call_id_factory=_IdFactory(),
    )
    events: list[WireEvent] = []
    pushed = 0
    ready = scenario.get("ready")
    if ready:
        events += processor.start(
            ready["prompt_tokens"], ready["prompt_cache_hit_tokens"], ready["system_fingerprint"]
        )
    for chunk in chunks_of(scenario, chunking):
        if processor.finished:
            break
        if "ids" in chunk:
            events += processor.push_tokens(chunk["ids"], chunk.get("logprobs"))
            pushed += len(chunk["ids"])
        else:
            events += processor.push_text(chunk["text"], chunk.get("token_count", 0))
            pushed += chunk.get("token_count", 0)
    events += processor.finish(scenario["finish"])
    return Replay(request, events, processor.finished, pushed)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def is_json(text: str) -> bool:
    """Valid JSON by RFC 8259 (Python's reader also takes NaN and Infinity; they are refused here)."""
    try:
        json.loads(text, parse_constant=_no_constants)
    except ValueError:
        return False
    return True
