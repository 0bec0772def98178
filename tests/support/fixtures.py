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
