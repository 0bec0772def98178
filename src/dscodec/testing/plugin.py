"""The pytest plugin (entry point ``pytest11``, name ``dscodec``): transcripts become test cases.

Every ``*.jsonl`` file pytest collects whose first line is a transcript header becomes a test module with two
tests: ``replay`` (dscodec, given the recorded request and backend output, gives the recorded answer; see
:func:`dscodec.testing.verify`) and ``lint`` (the recorded answer lints clean). A failing ``replay`` prints where
the answers differ.

``pytest --dscodec-update`` rewrites every transcript whose replay differs with dscodec's current answer (a
snapshot update) and lists what changed at the end of the run. Transcripts recorded from a live server are never
rewritten: their answer is that server's, not dscodec's. Disable the plugin with ``-p no:dscodec``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "LintItem",
    "ReplayItem",
    "TranscriptFailure",
    "TranscriptFile",
    "pytest_addoption",
    "pytest_collect_file",
    "pytest_configure",
]

_UPDATED = "dscodec_updated"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dscodec", "dscodec transcripts")
    group.addoption(
        "--dscodec-update",
        action="store_true",
        default=False,
        help="rewrite transcripts whose replay differs with dscodec's current answer, and show what changed",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Updates(), "dscodec-updates")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> TranscriptFile | None:
    if file_path.suffix != ".jsonl":
        return None
    from dscodec.testing.transcript import is_transcript

    if not is_transcript(file_path):
        return None
    file: TranscriptFile = TranscriptFile.from_parent(parent, path=file_path)
    return file


class TranscriptFailure(Exception):
    """A transcript test failed; the message is the whole report."""


class TranscriptFile(pytest.File):
    """One transcript file: a ``replay`` and a ``lint`` test."""

    def collect(self) -> Iterator[pytest.Item]:
        yield ReplayItem.from_parent(self, name="replay")
        yield LintItem.from_parent(self, name="lint")


class _TranscriptItem(pytest.Item):
    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> Any:
        if isinstance(excinfo.value, TranscriptFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


class ReplayItem(_TranscriptItem):
    """dscodec gives the recorded answer (after normalisation)."""

    def runtest(self) -> None:
        from dscodec.testing.compare import compare, format_differences
        from dscodec.testing.replay import replay
        from dscodec.testing.transcript import dump_transcript, load_transcript

        transcript = load_transcript(self.path)
        result = replay(transcript)
        sections = ["status", "response", "accumulated"] + ([] if transcript.origin == "live" else ["frames"])
        differences = compare(transcript, result.transcript, sections=sections)
        if not differences:
            return
        report = format_differences(differences)
        if not self.config.getoption("dscodec_update"):
            raise TranscriptFailure(
                f"{self.path.name}: dscodec's answer differs from the recorded one "
                f"({len(differences)} differences; --dscodec-update rewrites the transcript):\n{report}"
            )
        if transcript.origin == "live":
            raise TranscriptFailure(
                f"{self.path.name}: recorded from a live server, so it is not rewritten; dscodec's answer "
                f"differs:\n{report}"
            )
        updated = result.transcript
        updated.name = _header_name(self.path)
        dump_transcript(updated, self.path)
        self.user_properties.append((_UPDATED, f"{self.path}: {len(differences)} differences\n{report}"))


class LintItem(_TranscriptItem):
    """The recorded answer lints clean."""

    def runtest(self) -> None:
        from dscodec.testing.lint import lint
        from dscodec.testing.transcript import load_transcript

        transcript = load_transcript(self.path)
        findings = lint(transcript.protocol, transcript)
        if findings:
            lines = "\n".join(str(finding) for finding in findings)
            raise TranscriptFailure(f"{self.path.name}: the recorded answer has lint findings:\n{lines}")


def _header_name(path: Path) -> str:
    """The name the file's header holds (so a rewrite does not add the file-name default)."""
    import json

    with open(path, encoding="utf-8") as handle:
        header = json.loads(handle.readline())
    return str(header.get("name") or "")


class _Updates:
    """Collects the rewrites (from every worker, through the reports) and lists them at the end."""

    def __init__(self) -> None:
        self.updates: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":  # the teardown report repeats the properties
            return
        for name, value in report.user_properties:
            if name == _UPDATED:
                self.updates.append(str(value))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.updates:
            return
        terminalreporter.section("dscodec: transcripts updated")
        for text in self.updates:
            terminalreporter.write_line(text)
        terminalreporter.write_line(f"{len(self.updates)} transcripts rewritten")
