"""Every public name of the serving and testing surfaces is described in the README or docs/: a user who finds a
name in ``__all__`` finds what it is."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = "\n".join(
    path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
)

MODULES = [
    "dscodec.testing",
    "dscodec.testing.live",
    "dscodec.testing.engines",
    "dscodec.testing.strategies",
    "dscodec.server",
    "dscodec.server.backends",
]


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_is_documented(module: str) -> None:
    names = importlib.import_module(module).__all__
    # Named in code spans: `name`, `name(...)`, `module.name` or `name.attribute`.
    missing = [name for name in names if not re.search(r"`[^`\n]*\b" + re.escape(name) + r"\b[^`\n]*`", DOCS)]
    assert missing == [], f"{module}: {missing}"
