"""Reading recorded golden fixtures (see tools/README.md for how they are recorded)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from dscodec.options import ConversionOptions
from dscodec.prompt.tokenize import PromptEncoder
from dscodec.vocab import with_added_tokens

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


def case_dirs(kind: str, protocol: str) -> list[Path]:
    base = FIXTURES / kind / protocol
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if p.is_dir())


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def conversion_options(spec: dict[str, Any]) -> ConversionOptions:
    """ConversionOptions from a case's recorded ``options`` (only non-defaults are recorded)."""
    options = ConversionOptions()
    plain = {k: v for k, v in spec.items() if k not in ("model_aliases", "model_versions_by_name")}
    if plain:
        options = options.replace(**plain)
    if "model_versions_by_name" in spec:
        options = options.with_model_versions_by_name(spec["model_versions_by_name"])
    for name, version in spec.get("model_aliases", {}).items():
        options = options.with_model_alias(name, version)
    return options


@functools.cache
def encoder(version: str) -> PromptEncoder:
    """V4: the bundled tokenizer. V4.1: the test tokenizer, the V4 vocabulary plus ``<｜System｜>``."""
    if version == "v4":
        return PromptEncoder()
    return PromptEncoder(with_added_tokens(None, ["<｜System｜>"]))


def message_view(message: Any) -> dict[str, Any]:
    """A converted message in the shape the golden recorder writes the reference's down."""
    view: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant":
        view["reasoning"] = message.reasoning
        view["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
        view["prefix"] = message.prefix
    if message.role == "tool":
        view["tool_call_id"] = message.tool_call_id
    if message.role == "system" and message.tools is not None:
        view["tools"] = [t.model_dump() for t in message.tools]
    view["image_count"] = len(getattr(message, "images", ()))
    return view


def inference_view(options: Any) -> dict[str, Any]:
    """Converted inference options in the shape the golden recorder writes the reference's down."""
    constraint = options.output_constraint
    return {
        "temperature": options.temperature,
        "top_p": options.top_p,
        "max_tokens": options.max_tokens,
        "logprobs": options.logprobs,
        "top_logprobs": options.top_logprobs,
        "seed": options.seed,
        "output_constraint": None
        if constraint is None
        else {"kind": constraint.kind, "schema": constraint.schema},
    }
