"""Rewrite spec citations ("spec §5.6", "(§1.4)") into links to docs/behavior.md sections.

The numbered sections of the reference's behaviour spec are not in the repository; ``docs/behavior.md`` states
the same rules in dscodec's own words, one heading per rule set. ``tools/_citation_map.json`` maps each spec
section number to the GitHub slug of the heading that holds its rules. This script applies the map:

    python tools/_cite.py src/dscodec                 # rewrite in place (directories: *.py and *.md files)
    python tools/_cite.py --dry-run src tests docs    # show what would change, write nothing
    python tools/_cite.py --check                     # every slug in the map is a heading of docs/behavior.md
    python tools/_cite.py --check src tests docs      # ... and no spec citation is left in these paths, and
                                                      # every behavior.md#<slug> in them names a heading

Forms rewritten (the words "spec", "Spec" and "BEHAVIOR.md" before the sign go too):

* ``spec §5.6`` / ``§5.6`` / ``BEHAVIOR.md §5.6``  ->  ``behavior.md#token-chunks-and-usage``
* ``(§1.4)``  ->  ``(behavior.md#sampling)``; lists such as ``§1.2, §1.3`` and ``§1.4/§2.3`` link each number
* ranges ``§2.5–§2.7`` / ``§1-§4``: the map's entry for the range (key ``"2.5-2.7"``) when it has one, else
  ``behavior.md#<first> to behavior.md#<last>`` (one link when both ends map to the same section)
* ``§8 q9`` / ``§8 item 10``: map key ``"8.q9"`` / ``"8.q10"``; ``§5.x``: map key ``"5.x"``

In Markdown files a citation becomes a link, ``[sampling](behavior.md#sampling)``, with the path to
``docs/behavior.md`` relative to the file. A sign after an all-capitals word that is not "BEHAVIOR.md"
(``STYLE §3``) cites another document: it is left alone and reported.

If any cited number has no entry in the map, nothing is written: the script lists the numbers and exits with 1.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SELF = Path(__file__).resolve()
ROOT = SELF.parent.parent
DEFAULT_MAP = ROOT / "tools" / "_citation_map.json"
DEFAULT_BEHAVIOR = ROOT / "docs" / "behavior.md"
SUFFIXES = (".py", ".md")
SKIP_DIRS = {"__pycache__", ".git", ".mypy_cache", ".ruff_cache", ".pytest_cache", "node_modules"}

_NUM = r"\d+(?:\.\d+)*[A-Z]?"
CITATION = re.compile(
    r"(?P<prefix>(?<![\w.])(?:[Ss]pec|BEHAVIOR\.md)\s+)?"
    r"§(?P<a>\d+\.x|" + _NUM + r")"
    r"(?:\s+(?:q|item\s+)(?P<q>\d+))?"
    r"(?:\s*[–—-]\s*§?(?P<b>" + _NUM + r"))?"
)
#: An all-capitals word right before the sign: a section of another document (``STYLE §3``).
FOREIGN = re.compile(r"(?<![\w.])([A-Z]{2,}[A-Z0-9_]*(?:\.[A-Za-z]+)?)\s+$")
LINK = re.compile(r"behavior\.md#([\w-]+)")
#: Words that still point at the spec (reported by --check; rewording them is left to a person).
SPEC_WORDS = re.compile(r"\bthe spec\b|\bspec's\b|\bBEHAVIOR\.md\b|\bDEVIATIONS\.md\b")
LINE_LENGTH = 110


@dataclass
class Finding:
    path: Path
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def load_map(path: Path) -> dict[str, str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise SystemExit(f"{path}: expected a JSON object of strings")
    return {_range_key(k): v for k, v in data.items()}


def _range_key(key: str) -> str:
    return re.sub(r"\s*[–—-]\s*", "-", key)


# -- headings of behavior.md ---------------------------------------------------------------------------------


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: link text kept, lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def heading_slugs(markdown: str) -> list[str]:
    """Every heading's slug, in order, with GitHub's ``-1``, ``-2`` suffixes for repeats (fenced code skipped)."""
    slugs: list[str] = []
    seen: dict[str, int] = {}
    fence: str | None = None
    for line in markdown.splitlines():
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * len(marker.group(1))
            elif stripped.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = github_slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        slugs.append(slug if count == 0 else f"{slug}-{count}")
    return slugs


# -- files ---------------------------------------------------------------------------------------------------


def iter_files(paths: Iterable[str]) -> Iterator[Path]:
    for name in paths:
        path = Path(name)
        if path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
                for filename in sorted(filenames):
                    file = Path(dirpath) / filename
                    if filename.endswith(SUFFIXES) and file.name != SELF.name:
                        yield file
        elif path.is_file():
            if path.name != SELF.name:
                yield path
        else:
            raise SystemExit(f"{name}: no such file or directory")


def _md_target(path: Path, behavior: Path) -> str:
    """The path from a Markdown file to behavior.md, as a link target."""
    try:
        path.resolve().relative_to(ROOT)
    except ValueError:
        # Outside the repository (a test copy): docs/ files sit beside behavior.md, others at the root.
        return "behavior.md" if path.parent.name == "docs" else "docs/behavior.md"
    return Path(os.path.relpath(behavior.resolve(), path.resolve().parent)).as_posix()


@dataclass
class Rewriter:
    mapping: dict[str, str]
    prefix: str
    behavior: Path

    def rewrite(self, path: Path, text: str) -> tuple[str, list[Finding], list[Finding]]:
        """The rewritten text, the citations whose number is not in the map, and foreign citations left alone.

        Citations never span lines, so the text is rewritten line by line; a rule line that ends in a run of
        dashes (``# -- sampling (§1.4) -----``) gives up as many dashes as the citation grew (keeping three).
        """
        missing: list[Finding] = []
        foreign: list[Finding] = []
        markdown = path.suffix == ".md"
        target = _md_target(path, self.behavior) if markdown else ""
        number = 0
        line = ""

        def link(slug: str) -> str:
            if markdown:
                return f"[{slug}]({target}#{slug})"
            return self.prefix + slug

        def slug_of(key: str, match: re.Match[str]) -> str | None:
            slug = self.mapping.get(key)
            if slug is None:
                missing.append(Finding(path, number, f"\u00a7{key} ({match.group(0).strip()})"))
            return slug

        def replace(match: re.Match[str]) -> str:
            if match.group("prefix") is None and FOREIGN.search(
                line, max(0, match.start() - 40), match.start()
            ):
                foreign.append(Finding(path, number, match.group(0)))
                return match.group(0)
            a, q, b = match.group("a"), match.group("q"), match.group("b")
            if q is not None:
                slug = slug_of(f"{a}.q{q}", match)
                return match.group(0) if slug is None else link(slug)
            if b is not None:
                ranged = self.mapping.get(f"{a}-{b}")
                if ranged is not None:
                    return link(ranged)
                first, last = slug_of(a, match), slug_of(b, match)
                if first is None or last is None:
                    return match.group(0)
                return link(first) if first == last else f"{link(first)} to {link(last)}"
            slug = slug_of(a, match)
            return match.group(0) if slug is None else link(slug)

        out: list[str] = []
        for number, line in enumerate(text.splitlines(keepends=True), 1):
            body = line.rstrip("\r\n")
            end = line[len(body) :]
            new = CITATION.sub(replace, body)
            if new != body:
                new = _trim_rule(new, len(body))
            out.append(new + end)
        return "".join(out), missing, foreign


def _trim_rule(line: str, width: int) -> str:
    """``line`` with its trailing run of dashes shortened towards ``width`` (at least three dashes stay)."""
    rule = re.search(r" (-{4,})$", line)
    if rule is None or len(line) <= width:
        return line
    keep = max(3, len(rule.group(1)) - (len(line) - width))
    return line[: rule.start(1)] + "-" * keep


# -- commands ------------------------------------------------------------------------------------------------


def run_rewrite(args: argparse.Namespace, mapping: dict[str, str]) -> int:
    rewriter = Rewriter(mapping, args.prefix, Path(args.behavior))
    changes: list[tuple[Path, str, str]] = []
    missing: list[Finding] = []
    foreign: list[Finding] = []
    for path in iter_files(args.paths):
        text = path.read_text(encoding="utf-8")
        new, lost, other = rewriter.rewrite(path, text)
        missing += lost
        foreign += other
        if new != text:
            changes.append((path, text, new))
    for finding in foreign:
        print(f"left alone (another document's section): {finding}", file=sys.stderr)
    if missing:
        numbers = sorted({f.text.split(" ")[0] for f in missing})
        print(f"error: not in {args.map}: {', '.join(numbers)}", file=sys.stderr)
        for finding in missing:
            print(f"  {finding}", file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 1
    for path, old, new in changes:
        if args.dry_run:
            sys.stdout.writelines(
                difflib.unified_diff(
                    old.splitlines(keepends=True), new.splitlines(keepends=True), str(path), str(path), n=0
                )
            )
        else:
            path.write_text(new, encoding="utf-8")
    verb = "would rewrite" if args.dry_run else "rewrote"
    print(f"{verb} {len(changes)} file(s)", file=sys.stderr)
    return 0


def run_check(args: argparse.Namespace, mapping: dict[str, str]) -> int:
    behavior = Path(args.behavior)
    slugs = heading_slugs(behavior.read_text(encoding="utf-8"))
    known = set(slugs)
    errors: list[str] = []
    if len(known) != len(slugs):
        repeated = sorted({s for s in slugs if slugs.count(s) > 1})
        errors.append(f"{behavior}: headings with the same slug: {', '.join(repeated)}")
    for key, slug in sorted(mapping.items()):
        if slug not in known:
            errors.append(f"{args.map}: §{key} -> {slug!r} is not a heading slug of {behavior}")
    warnings: list[str] = []
    long_lines: list[str] = []
    for path in iter_files(args.paths):
        if path.resolve() == behavior.resolve():
            continue
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            for sign in re.finditer("§", line):
                before = line[max(0, sign.start() - 40) : sign.start()]
                where = f"{path}:{number}: {line.strip()}"
                if FOREIGN.search(before) and not re.search(r"(?:[Ss]pec|BEHAVIOR\.md)\s+$", before):
                    warnings.append(f"another document's section: {where}")
                else:
                    errors.append(f"spec citation left: {where}")
            for match in LINK.finditer(line):
                if match.group(1) not in known:
                    errors.append(f"unknown behavior.md anchor #{match.group(1)}: {path}:{number}")
            if path.suffix == ".py" and LINK.search(line) and len(line) > LINE_LENGTH:
                long_lines.append(f"{path}:{number}")
            if SPEC_WORDS.search(line):
                warnings.append(f"the spec is still mentioned: {path}:{number}: {line.strip()}")
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if long_lines:
        print(
            f"note: {len(long_lines)} line(s) with a behavior.md link are longer than {LINE_LENGTH} characters"
            + (":" if args.verbose else " (--verbose lists them)"),
            file=sys.stderr,
        )
        if args.verbose:
            for where in long_lines:
                print(f"  {where}", file=sys.stderr)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    checked = f"{len(mapping)} map entries" + (f", paths {' '.join(args.paths)}" if args.paths else "")
    print(f"{'FAILED' if errors else 'ok'}: {checked}; {len(slugs)} headings in {behavior}", file=sys.stderr)
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="*", help="files or directories (directories: *.py and *.md files)")
    parser.add_argument(
        "--check", action="store_true", help="verify the map and the given paths, write nothing"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the diff instead of writing")
    parser.add_argument("--verbose", "-v", action="store_true", help="--check: list the long lines too")
    parser.add_argument("--map", default=str(DEFAULT_MAP), help="the citation map (default: %(default)s)")
    parser.add_argument(
        "--behavior", default=str(DEFAULT_BEHAVIOR), help="behavior.md (default: %(default)s)"
    )
    parser.add_argument(
        "--prefix",
        default="behavior.md#",
        help="text before the slug outside Markdown (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    mapping = load_map(Path(args.map))
    if args.check:
        return run_check(args, mapping)
    if not args.paths:
        parser.error("give the files or directories to rewrite (or --check)")
    return run_rewrite(args, mapping)


if __name__ == "__main__":
    sys.exit(main())
