"""The import layering of ARCHITECTURE.md holds for every module in ``src/``, and its module table matches the
files that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
ARCHITECTURE = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / "dscodec").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _section(title: str) -> str:
    start = ARCHITECTURE.index(f"## {title}\n")
    end = ARCHITECTURE.find("\n## ", start + 1)
    return ARCHITECTURE[start : end if end != -1 else None]


def _table_rows(section: str) -> list[list[str]]:
    rows = []
    for line in section.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[1:]  # without the header


def _layers() -> tuple[dict[str, str], dict[str, set[str]]]:
    """Module prefix -> layer, and layer -> what it may import (layer names and module prefixes)."""
    prefix_layer: dict[str, str] = {}
    allowed: dict[str, set[str]] = {}
    for layer, modules, may in _table_rows(_section("Layers")):
        for name in re.findall(r"`([^`]+)`", modules):
            prefix_layer["dscodec" if name == "dscodec" else f"dscodec.{name}"] = layer
        allowed[layer] = {item.strip().strip("`") for item in may.split(",")}
    return prefix_layer, allowed


PREFIX_LAYER, ALLOWED = _layers()


def layer_of(module: str) -> str:
    best = max((p for p in PREFIX_LAYER if module == p or module.startswith(p + ".")), key=len, default=None)
    assert best is not None, f"{module} belongs to no layer of ARCHITECTURE.md"
    return PREFIX_LAYER[best]


def imports_of(module: str, path: Path) -> set[str]:
    """The dscodec modules ``module`` imports (``from pkg import sub`` counts as ``pkg.sub`` when it is one)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "dscodec")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "dscodec":
                continue
            subs = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in MODULES]
            found.update(subs or [target])
    return found


def _may_import(importer: str, imported: str) -> bool:
    rules = ALLOWED[layer_of(importer)]
    if layer_of(imported) in rules:
        return True
    bare = imported.removeprefix("dscodec.")
    return any(bare == rule or bare.startswith(rule + ".") for rule in rules)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_follow_the_layers(module: str) -> None:
    wrong = sorted(
        i for i in imports_of(module, MODULES[module]) if i != module and not _may_import(module, i)
    )
    assert not wrong, f"{module} ({layer_of(module)}) must not import {wrong}"


def test_every_module_has_one_line_in_the_module_table() -> None:
    listed = set()
    for row in _table_rows(_section("Modules")):
        listed.update(re.findall(r"`(dscodec/[^`]+\.py)`", row[0]))
    files = {str(path.relative_to(SRC)) for path in MODULES.values()}
    assert files - listed == set(), "modules missing from ARCHITECTURE.md"
    assert listed - files == set(), "ARCHITECTURE.md lists modules that do not exist"


def test_the_layer_rules_catch_an_upward_import() -> None:
    # The check itself can fail: the stream layer importing a protocol writer is refused.
    assert not _may_import("dscodec.stream.machine", "dscodec.protocols.openai_chat.outbound")
    assert not _may_import("dscodec.prompt.render", "dscodec.server.app")
    assert _may_import("dscodec.protocols.openai_chat.outbound", "dscodec.stream.events")
