"""The ``dscodec lint``, ``record``, ``replay`` and ``compare`` commands (registered in :mod:`dscodec.cli`).

Exit status: 0 clean (or recorded, or every transcript passed, or no difference), 1 findings (or an answer, live or
saved, whose status is not 2xx, or a transcript failed, or the answers differ), 2 usage or I/O error (or a
transcript that cannot be read or replayed).

A file is read as transcripts when its first line that is not blank is a transcript header
(:func:`~dscodec.testing.transcript.starts_as_transcript`), by every command alike.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from dscodec.conversation import Protocol
from dscodec.testing._sse import parse_sse
from dscodec.testing.compare import Answer, compare, format_differences, ignore_rules
from dscodec.testing.lint import lint
from dscodec.testing.replay import verify
from dscodec.testing.transcript import (
    Transcript,
    TranscriptError,
    dump_transcript,
    file_kind,
    json_object,
    load_transcripts,
    loads_transcripts,
    starts_as_transcript,
)

__all__ = ["compare_command", "lint_command", "record_command", "replay_command"]


class _UsageError(Exception):
    """A command-line mistake or an unreadable input (exit status 2)."""


def _read_bytes(path: str) -> bytes:
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise _UsageError(f"cannot read {path}: {exc.strerror}") from None


def _read_text(path: str) -> str:
    return _read_bytes(path).decode("utf-8", errors="replace")


def _read_json(path: str) -> dict[str, Any]:
    return json_object(
        _read_text(path),
        _UsageError,
        not_json=f"{path} is not JSON",
        not_object=f"{path} must hold a JSON object",
    )


def _headers(values: list[str] | None) -> dict[str, str]:
    """The ``--header`` values by name; one that is not ``Name: value``, or that HTTP cannot carry (not ASCII, a
    line break), is a usage error."""
    from dscodec.testing.live import _checked_headers

    headers: dict[str, str] = {}
    for value in values or []:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise _UsageError(f"--header {value!r} is not 'Name: value'")
        try:
            _checked_headers({name.strip(): content.strip()})
        except ValueError as exc:
            raise _UsageError(f"--header {value!r}: {exc}") from None
        headers[name.strip()] = content.strip()
    return headers


def _url(url: str) -> str:
    """A ``--url`` that is an ``http://`` or ``https://`` address, else a usage error (before anything is sent)."""
    from dscodec.testing.live import _split_url

    try:
        _split_url(url)
    except ValueError as exc:
        raise _UsageError(f"--url: {exc}") from None
    return url


def _limits(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--timeout`` and ``--max-bytes`` given, as keyword arguments of ``send`` and ``record``."""
    limits = {"timeout": args.timeout, "max_bytes": args.max_bytes}
    return {name: value for name, value in limits.items() if value is not None}


def _missing(exc: ImportError, command: str) -> ImportError:
    """What a command says when a module it needs is missing (httpx, for talking to a server)."""
    if exc.name == "httpx":
        return ImportError(f"{command} needs httpx: pip install 'dscodec[testing]'")
    return ImportError(f"{command} cannot run: {exc}")


def _fail(exc: Exception) -> int:
    print(f"dscodec: {exc}", file=sys.stderr)
    return 2


def lint_command(args: argparse.Namespace, out: TextIO) -> int:
    """``dscodec lint FILE|- [--protocol P] [--request FILE]`` or ``dscodec lint --url URL --body FILE``."""
    status = 200  # of a live answer; a saved one has none
    try:
        protocol: Protocol | None = args.protocol
        request: dict[str, Any] | None
        if args.url is not None:
            if args.file is not None:
                raise _UsageError("give either FILE or --url, not both")
            if args.body is None:
                raise _UsageError("--url needs --body (the request body to send)")
            from dscodec.testing.live import send

            body = _read_json(args.body)
            exchange = send(
                _url(args.url), body, protocol=protocol, headers=_headers(args.header), **_limits(args)
            )
            label = exchange.url
            protocol, request = exchange.protocol, body
            answer: Any = exchange.data  # the bytes: an answer that is not UTF-8 is a finding (GEN010)
            status = exchange.status
        else:
            if args.file is None:
                raise _UsageError("give the FILE to lint (- for standard input) or --url")
            if _limits(args):
                raise _UsageError("--timeout and --max-bytes bound a live answer: they go with --url")
            label = "<stdin>" if args.file == "-" else args.file
            data = _read_bytes(args.file)
            request = _read_json(args.request) if args.request is not None else None
            if starts_as_transcript(data):
                # A file may hold several transcripts (format version 2): each answer is linted. A transcript
                # is read as it is (one that is not UTF-8 is refused by name).
                transcripts = loads_transcripts(data, source=label)
                found_any = False
                for index, transcript in enumerate(transcripts):
                    where = label if len(transcripts) == 1 else f"{label}[{transcript.name or index}]"
                    found = lint(
                        protocol or transcript.protocol,
                        transcript,
                        request=request,
                        sdk=not args.no_sdk,
                    )
                    if transcript.answered and not 200 <= transcript.status <= 299:
                        print(f"{where}: {_refused(transcript.status)}", file=out)
                        found_any = True
                    found_any = found_any or bool(found)
                    for finding in found:
                        print(f"{where}: {finding}", file=out)
                return 1 if found_any else 0
            # The bytes: an answer that is not UTF-8 is a finding (GEN010), as a client reads it.
            answer = data
            if protocol is None:
                raise _UsageError("give --protocol (chat_completions, responses or messages)")
    except ImportError as exc:
        return _fail(_missing(exc, "lint --url"))
    except (_UsageError, TranscriptError) as exc:
        return _fail(exc)
    findings = lint(protocol, answer, request=request, sdk=not args.no_sdk)
    refused = not 200 <= status <= 299
    if refused:
        # An error answer is linted as an error body, which may well be clean: the status says the request was
        # not answered (an API key missing, a wrong URL), so it counts as found.
        print(f"{label}: {_refused(status)}", file=out)
    for finding in findings:
        print(f"{label}: {finding}", file=out)
    return 1 if findings or refused else 0


def _refused(status: int) -> str:
    """What ``dscodec lint`` says of an answer whose status is not 2xx (saved or live)."""
    return f"HTTP {status}: an error answer, not a response to the request (its body is linted)"


def _check_writable(path: str) -> None:
    """Refuse an output path that cannot be written, before anything is sent: a folder, a path through a file,
    a folder without write permission. Nothing is created."""
    if not path:
        raise _UsageError("-o/--output needs the path of the transcript file to write, not an empty one")
    target = Path(path)
    if target.is_dir():
        raise _UsageError(f"cannot write {path}: it is a folder")
    if target.exists():
        if not os.access(target, os.W_OK):
            raise _UsageError(f"cannot write {path}: permission denied")
        return
    ancestor = target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise _UsageError(f"cannot write {path}: {ancestor} is not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise _UsageError(f"cannot write {path}: permission denied in {ancestor}")


def record_command(args: argparse.Namespace, out: TextIO) -> int:
    """``dscodec record --url URL --body FILE -o OUT``: save the exchange as a transcript. An answer whose status
    is not 2xx is saved too, with a warning on standard error and exit status 1."""
    try:
        from dscodec.testing.live import record

        _check_writable(args.output)
        _url(args.url)
        body = _read_json(args.body)
        name = args.name or Path(args.output).name.removesuffix(".jsonl")
        transcript = record(
            args.url, body, protocol=args.protocol, headers=_headers(args.header), name=name, **_limits(args)
        )
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        dump_transcript(transcript, args.output)
    except ImportError as exc:
        return _fail(_missing(exc, "record"))
    except (_UsageError, TranscriptError) as exc:
        return _fail(exc)
    except OSError as exc:
        return _fail(OSError(f"cannot write {args.output}: {exc.strerror}"))
    print(
        f"recorded {transcript.protocol} from {transcript.meta['url']}: HTTP {transcript.status}, "
        f"{_shape(transcript)} -> {args.output}",
        file=out,
    )
    if not 200 <= transcript.status <= 299:
        print(
            f"dscodec: warning: the server answered HTTP {transcript.status}, an error answer, not a response to "
            f"the request (a wrong URL, a missing API key?); saved to {args.output} all the same",
            file=sys.stderr,
        )
        return 1
    return 0


def _shape(transcript: Transcript) -> str:
    """What a recorded answer is, as ``record`` reports it: the frames of a stream, a JSON body, or a body that is
    neither (kept as its text); and when no backend lines could be derived from a successful answer, so that its
    replay fails."""
    if transcript.frames is not None:
        shape = f"{len(transcript.frames)} frames"
        if transcript.accumulated is None:
            shape += " that are no stream of the protocol"
    elif transcript.response is not None:
        shape = "a JSON body"
    else:
        size = len(transcript.response_text or "")
        shape = f"a body that is neither an event stream nor a JSON object ({size} characters, kept as text)"
    if transcript.frames is None and transcript.request.get("stream") is True:
        shape += ", not the stream the request asked for"
    if not transcript.backend and transcript.status < 400:
        shape += "; no backend lines derived from it, so its replay fails"
    return shape


def transcript_files(root: str | os.PathLike[str]) -> tuple[list[tuple[Path, str | None]], list[Path]]:
    """The transcript files under ``root``, sorted: ``*.jsonl`` files whose first line that is not blank is a
    transcript header (:func:`~dscodec.testing.transcript.file_kind`), each with why it cannot be read (None when
    it can: a ``*.jsonl`` file that cannot be read at all, a symbolic link to nothing, is listed, as it may be a
    transcript); and the ``*.jsonl`` entries that are no regular files (a FIFO, a device), skipped unread. A
    ``root`` that is no folder is read as it is, whatever its name."""
    base = Path(root)
    if not base.is_dir():
        return [(base, None)], []
    found: list[tuple[Path, str | None]] = []
    special: list[Path] = []
    for path in sorted(base.rglob("*.jsonl")):
        try:
            kind = file_kind(path)
        except TranscriptError as exc:
            found.append((path, str(exc)))
            continue
        if kind == "transcript":
            found.append((path, None))
        elif kind == "special" and not path.is_dir():
            special.append(path)
    return found, special


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def replay_command(args: argparse.Namespace, out: TextIO) -> int:
    """``dscodec replay DIR|FILE|-``: replay every transcript under DIR (or in FILE, or on standard input) and print
    a pass/fail table; with ``--url``, send each transcript's request to that live server instead and compare its
    answer (:func:`~dscodec.testing.live.recheck`). Exit status 1 when a transcript fails, 2 when one cannot be
    read or replayed (an ERROR row) or nothing is found."""
    try:
        ignore = ignore_rules(args.ignore or ())
    except ValueError as exc:
        return _fail(_UsageError(f"--ignore: {exc}"))
    sources: list[tuple[str, Path | None, str | None]]
    if args.directory == "-":
        sources = [("<stdin>", None, None)]
    else:
        if not os.path.lexists(args.directory):
            return _fail(_UsageError(f"{args.directory} does not exist"))
        files, special = transcript_files(args.directory)
        for skipped in special:
            print(f"dscodec: skipped {skipped}: not a regular file", file=sys.stderr)
        if not files:
            return _fail(_UsageError(f"no transcripts under {args.directory}"))
        sources = [
            (
                str(path.relative_to(args.directory)) if path != Path(args.directory) else path.name,
                path,
                problem,
            )
            for path, problem in files
        ]
    url: str | None = getattr(args, "url", None)
    if url is None and (args.header or args.timeout is not None or args.max_bytes is not None):
        return _fail(_UsageError("--header, --timeout and --max-bytes are for --url"))
    if url is not None and args.chunking != "recorded":
        return _fail(
            _UsageError("--chunking cuts dscodec's replay; with --url the server answers as it does")
        )
    if url is not None:
        try:
            from dscodec.testing.live import recheck

            headers = _headers(args.header)
            _url(url)
        except ImportError as exc:
            return _fail(_missing(exc, "replay --url"))
        except _UsageError as exc:
            return _fail(exc)
    rows: list[tuple[str, str, str, str]] = []
    for name, path, problem in sources:
        if problem is not None:
            rows.append((name, "?", "ERROR", problem))
            continue
        try:
            if path is None:
                transcripts: list[Transcript] = loads_transcripts(_read_bytes("-"), source=name)
            else:
                transcripts = load_transcripts(path)
        except (TranscriptError, _UsageError) as exc:
            rows.append((name, "?", "ERROR", str(exc)))
            continue
        for transcript in transcripts:  # a file may hold several (format version 2): one row each
            row_name = name if len(transcripts) == 1 else f"{name}[{transcript.name}]"
            try:
                if url is None:
                    differences = verify(transcript, chunking=args.chunking, ignore=ignore)
                else:
                    differences = recheck(transcript, url, headers=headers, ignore=ignore, **_limits(args))
            except (TranscriptError, ValueError) as exc:
                # A malformed header, or an answer no comparison can read (nested past Python's recursion).
                rows.append((row_name, transcript.protocol, "ERROR", str(exc)))
                continue
            first = format_differences(differences, limit=1).splitlines()[0] if differences else ""
            if len(differences) > 1:
                first += f" (+{len(differences) - 1} more)"
            rows.append((row_name, transcript.protocol, "FAIL" if differences else "pass", first))
    width = max(len("transcript"), *(len(row[0]) for row in rows))
    print(f"{'transcript':<{width}}  {'protocol':<16}  result  first difference", file=out)
    for name, protocol, result, detail in rows:
        print(f"{name:<{width}}  {protocol:<16}  {result:<6}  {detail}".rstrip(), file=out)
    failed = sum(1 for row in rows if row[2] == "FAIL")
    errors = sum(1 for row in rows if row[2] == "ERROR")
    summary = f"{_plural(len(rows), 'transcript')}: {len(rows) - failed - errors} passed, {failed} failed"
    if errors:
        summary += f", {_plural(errors, 'error')}"
    print(summary, file=out)
    return 2 if errors else 1 if failed else 0


def _answer(path: str) -> Answer:
    """An answer saved in ``path``: a file of one transcript, a JSON response body, or an SSE stream."""
    data = _read_bytes(path)
    text = data.decode("utf-8", errors="replace")
    if starts_as_transcript(data):
        transcripts = loads_transcripts(data, source=path)  # read as it is: one that is not UTF-8 is refused
        if len(transcripts) != 1:
            raise _UsageError(f"{path} holds {len(transcripts)} transcripts; compare takes files of one")
        return transcripts[0]
    stripped = text.strip()
    if stripped.startswith("{"):
        return json_object(
            text, _UsageError, not_json=f"{path} is not JSON", not_object=f"{path} must hold a JSON object"
        )
    frames, rest = parse_sse(text)
    if rest.strip():  # a stream cut inside its last frame: compared as far as it goes
        frames += parse_sse(rest + "\n\n")[0]
    if not frames:
        raise _UsageError(f"{path} holds no transcript, JSON object or SSE frame")
    return frames


def _kind(answer: Answer) -> tuple[str, set[str]]:
    """What a saved answer is, and the sections it can hold."""
    if isinstance(answer, Transcript):
        return "a transcript", {"status", "frames", "response", "accumulated"}
    if isinstance(answer, dict):
        return "a JSON body", {"response"}
    return "an SSE stream", {"frames"}


def compare_command(args: argparse.Namespace, out: TextIO) -> int:
    """``dscodec compare EXPECTED ACTUAL``: the differences between two saved answers, one per line. Without
    ``--sections``, the sections both kinds of file can hold are compared (an SSE stream against a transcript:
    the frames)."""
    try:
        try:
            ignore = ignore_rules(args.ignore or ())
        except ValueError as exc:
            raise _UsageError(f"--ignore: {exc}") from None
        expected, actual = _answer(args.expected), _answer(args.actual)
        if args.sections is not None:
            sections = args.sections.split(",")
        else:
            (kind, have), (other, has) = _kind(expected), _kind(actual)
            sections = [
                section
                for section in ("status", "frames", "response", "accumulated")
                if section in have & has
            ]
            if not sections:
                raise _UsageError(f"nothing to compare: {args.expected} is {kind}, {args.actual} {other}")
        differences = compare(
            expected,
            actual,
            ignore=ignore,
            sections=sections,
            ids=not args.keep_ids,
            merge_deltas=args.merge_deltas,
        )
    except (_UsageError, TranscriptError, ValueError) as exc:
        return _fail(exc)
    if not differences:
        print("no differences", file=out)
        return 0
    print(format_differences(differences, limit=args.limit), file=out)
    return 1
