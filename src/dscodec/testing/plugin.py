"""The pytest plugin (entry point ``pytest11``, name ``dscodec``): transcripts become test cases.

Every ``*.jsonl`` file pytest collects whose first line that is not blank is a transcript header becomes a test
module with two tests: ``replay`` (dscodec, given the recorded request and backend output, gives the recorded answer; see
:func:`dscodec.testing.verify`) and ``lint`` (the recorded answer lints clean). A failing ``replay`` prints where
the answers differ. A file holding several transcripts (format version 2) gets the two tests for each, named
``replay[<name>]`` and ``lint[<name>]``.

``pytest --dscodec-url URL`` (with ``--dscodec-header 'Name: value'`` as needed) makes ``replay`` check that live
server instead of dscodec: the transcript's request is sent to it again and its answer compared with the recorded
one (:func:`dscodec.testing.live.recheck`).

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
    group.addoption(
        "--dscodec-url",
        default=None,
        help="check this live server instead of dscodec: each replay test sends the transcript's request to it "
        "and compares the answers (dscodec.testing.live.recheck)",
    )
    group.addoption(
        "--dscodec-ignore",
        action="append",
        default=[],
        help="a path the replay tests leave out of the comparison (a key name, or a pattern such as "
        "'accumulated.usage'; repeatable)",
    )
    group.addoption(
        "--dscodec-header",
        action="append",
        default=[],
        help="an HTTP header 'Name: value' sent with --dscodec-url (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Updates(), "dscodec-updates")
    headers = config.getoption("dscodec_header", default=[]) or []
    if headers and not config.getoption("dscodec_url", default=None):
        raise pytest.UsageError("--dscodec-header is sent with --dscodec-url: give the server's URL too")
    _headers(headers)  # a malformed one is one usage error, not a failure of every test
    url = config.getoption("dscodec_url", default=None)
    if url is not None:
        from dscodec.testing._cli import _url, _UsageError

        try:
            _url(url)
        except _UsageError as exc:
            raise pytest.UsageError(str(exc).replace("--url", "--dscodec-url", 1)) from None
    ignore = config.getoption("dscodec_ignore", default=[]) or []
    if ignore:
        from dscodec.testing.compare import ignore_rules

        try:
            ignore_rules(ignore)
        except ValueError as exc:
            raise pytest.UsageError(f"--dscodec-ignore: {exc}") from None


def _headers(values: list[str]) -> dict[str, str]:
    """The ``--dscodec-header`` values by name, read as ``dscodec replay --header`` reads them.

    Raises:
        pytest.UsageError: one that is not ``Name: value``.
    """
    from dscodec.testing._cli import _headers as read_headers
    from dscodec.testing._cli import _UsageError

    try:
        return read_headers(values)
    except _UsageError as exc:
        raise pytest.UsageError(str(exc).replace("--header", "--dscodec-header", 1)) from None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> TranscriptFile | None:
    """A ``*.jsonl`` file whose first line that is not blank is a transcript header becomes a
    :class:`TranscriptFile`; so does one that cannot be read at all (it may be a transcript: its collection
    fails, naming it). One that is no regular file (a FIFO) is skipped unread, with a warning."""
    if file_path.suffix != ".jsonl":
        return None
    from dscodec.testing.transcript import TranscriptError, file_kind

    try:
        kind = file_kind(file_path)
    except TranscriptError:
        kind = "transcript"  # its collection reads it, and reports why it cannot be read
    if kind == "special" and not file_path.is_dir():
        import warnings

        warnings.warn(pytest.PytestWarning(f"dscodec: skipped {file_path}: not a regular file"), stacklevel=1)
    if kind != "transcript":
        return None
    file: TranscriptFile = TranscriptFile.from_parent(parent, path=file_path)
    return file


class TranscriptFailure(Exception):
    """A transcript test failed; the message is the whole report."""


def _is_transcript_problem(exc: BaseException) -> bool:
    """A failure whose message is the whole report: no traceback helps with a malformed transcript."""
    from dscodec.testing.transcript import TranscriptError

    return isinstance(exc, (TranscriptFailure, TranscriptError))


class TranscriptFile(pytest.File):
    """One transcript file: a ``replay`` and a ``lint`` test per transcript in it."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if _is_transcript_problem(excinfo.value):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def collect(self) -> Iterator[pytest.Item]:
        from dscodec.testing.transcript import load_transcripts

        transcripts = load_transcripts(self.path)
        if len(transcripts) == 1:
            yield ReplayItem.from_parent(self, name="replay", index=0)
            yield LintItem.from_parent(self, name="lint", index=0)
            return
        seen: set[str] = set()
        for index, transcript in enumerate(transcripts):
            label = transcript.name or str(index)
            if label in seen:  # two transcripts of one name: each test still gets an id of its own
                label = f"{label} #{index}"
            seen.add(label)
            yield ReplayItem.from_parent(self, name=f"replay[{label}]", index=index)
            yield LintItem.from_parent(self, name=f"lint[{label}]", index=index)


class _TranscriptItem(pytest.Item):
    def __init__(self, *, index: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index

    def transcript(self) -> Any:
        from dscodec.testing.transcript import load_transcripts

        return load_transcripts(self.path)[self.index]

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> Any:
        if _is_transcript_problem(excinfo.value):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


class ReplayItem(_TranscriptItem):
    """dscodec gives the recorded answer (after normalisation)."""

    def runtest(self) -> None:
        from dscodec.testing.compare import format_differences
        from dscodec.testing.replay import _replay_differences, replay

        transcript = self.transcript()
        url = self.config.getoption("dscodec_url")
        if url:
            self._recheck(transcript, url)
            return
        result = replay(transcript)
        try:
            differences = _replay_differences(
                transcript,
                result,
                ignore=self.config.getoption("dscodec_ignore"),
                frames=transcript.origin != "live",
            )
        except ValueError as exc:  # an answer no comparison can read (nested past Python's recursion)
            raise TranscriptFailure(f"{self.path.name}: {exc}") from None
        if not differences:
            return
        report = format_differences(differences)
        counted = _plural(len(differences), "difference")
        if not self.config.getoption("dscodec_update"):
            hint = (
                "recorded from a live server, so --dscodec-update does not rewrite it: fix the server or dscodec, "
                "or record it again"
                if transcript.origin == "live"
                else "--dscodec-update rewrites the transcript"
            )
            raise TranscriptFailure(
                f"{self.path.name}: dscodec's answer differs from the recorded one "
                f"({counted}; {hint}):\n{report}"
            )
        if transcript.origin == "live":
            raise TranscriptFailure(
                f"{self.path.name}: recorded from a live server, so it is not rewritten; dscodec's answer "
                f"differs:\n{report}"
            )
        updated = result.transcript
        _rewrite(self.path, self.index, updated)
        where = f"{self.path}" if self.name == "replay" else f"{self.path} {self.name}"
        self.user_properties.append((_UPDATED, f"{where}: {counted}\n{report}"))

    def _recheck(self, transcript: Any, url: str) -> None:
        """The live server at ``url`` gives the recorded answer (never rewritten: the answer is the server's)."""
        from dscodec.testing.compare import format_differences
        from dscodec.testing.live import recheck

        headers = _headers(self.config.getoption("dscodec_header"))
        try:
            differences = recheck(
                transcript, url, headers=headers, ignore=self.config.getoption("dscodec_ignore")
            )
        except ValueError as exc:  # an answer no comparison can read (nested past Python's recursion)
            raise TranscriptFailure(f"{self.path.name}: {exc}") from None
        if differences:
            raise TranscriptFailure(
                f"{self.path.name}: the server at {url} answers otherwise than recorded "
                f"({_plural(len(differences), 'difference')}):\n{format_differences(differences)}"
            )


class LintItem(_TranscriptItem):
    """The recorded answer lints clean."""

    def runtest(self) -> None:
        from dscodec.testing.lint import lint

        transcript = self.transcript()
        findings = lint(transcript.protocol, transcript)
        if findings:
            lines = "\n".join(str(finding) for finding in findings)
            raise TranscriptFailure(f"{self.path.name}: the recorded answer has lint findings:\n{lines}")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _header_names(text: str) -> list[str]:
    """The names the headers hold (so a rewrite does not add the file-name default)."""
    import json

    names = []
    for line in text.split("\n"):
        if '"dscodec-transcript"' in line:
            try:
                header = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(header, dict) and header.get("kind") == "transcript":
                names.append(str(header.get("name") or ""))
    return names


def _rewrite(path: Path, index: int, updated: Any) -> None:
    """Replace the ``index``-th transcript of the file at ``path``. The file is locked meanwhile: under
    pytest-xdist the transcripts of one file may be rewritten by several workers."""
    from dscodec.testing.transcript import dumps_transcripts, loads_transcripts

    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        fcntl = None  # type: ignore[assignment]
    with open(path, "r+", encoding="utf-8", newline="\n") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed
        text = handle.read()
        names = _header_names(text)
        transcripts = loads_transcripts(text, source=str(path))
        for transcript, name in zip(transcripts, names):
            transcript.name = name
        updated.name = names[index]
        transcripts[index] = updated
        handle.seek(0)
        handle.write(dumps_transcripts(transcripts))
        handle.truncate()


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
        terminalreporter.write_line(f"{_plural(len(self.updates), 'transcript')} rewritten")
