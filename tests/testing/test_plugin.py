"""The pytest plugin, run in a scratch project with pytester: transcripts become tests; --dscodec-update rewrites
them and says what changed."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dscodec.testing import (
    Finish,
    Text,
    Transcript,
    Usage,
    dump_transcript,
    dump_transcripts,
    load_transcript,
    load_transcripts,
    replay,
)

pytest_plugins = ["pytester"]

REQUEST = {
    "model": "DeepSeek-V4-Pro",
    "messages": [{"role": "user", "content": "Hi"}],
    "stream": True,
    "thinking": {"type": "disabled"},
}


def recorded(text: str = "Hello!") -> Transcript:
    return replay(
        Transcript("chat_completions", REQUEST, [Usage(4), Text(text, 2), Finish("stop")])
    ).transcript


def test_the_entry_point_is_registered() -> None:
    points = importlib.metadata.entry_points(group="pytest11")
    assert any(point.name == "dscodec" and point.value == "dscodec.testing.plugin" for point in points)


def test_transcripts_become_tests(pytester: pytest.Pytester) -> None:
    folder = pytester.mkdir("transcripts")
    dump_transcript(recorded(), folder / "hello.jsonl")
    (folder / "other.jsonl").write_text('{"some": "log line"}\n')
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*hello.jsonl::replay PASSED*", "*hello.jsonl::lint PASSED*"])


def test_a_changed_answer_fails_with_the_difference(pytester: pytest.Pytester) -> None:
    transcript = recorded()
    transcript.backend = [Usage(4), Text("Goodbye!", 2), Finish("stop")]
    dump_transcript(transcript, pytester.path / "changed.jsonl")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "changed.jsonl: dscodec's answer differs from the recorded one" in out
    assert 'frames[1].data.choices[0].delta.content: expected "Hello!", got "Goodbye!"' in out


def test_a_stream_with_findings_fails_its_lint_test(pytester: pytest.Pytester) -> None:
    transcript = recorded()
    assert transcript.frames is not None
    transcript.frames = transcript.frames[:-1]  # no [DONE]
    dump_transcript(transcript, pytester.path / "cut.jsonl")
    result = pytester.runpytest()
    result.assert_outcomes(passed=0, failed=2)
    assert "CHT011 stream: the stream does not end with data: [DONE]" in result.stdout.str()


def test_update_rewrites_and_shows_what_changed(pytester: pytest.Pytester) -> None:
    transcript = recorded()
    transcript.backend = [Usage(4), Text("Goodbye!", 2), Finish("stop")]
    path = pytester.path / "snap.jsonl"
    dump_transcript(transcript, path)
    result = pytester.runpytest("--dscodec-update")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*dscodec: transcripts updated*",
            "*snap.jsonl: *differences*",
            '*expected "Hello!", got "Goodbye!"*',
        ]
    )
    again = load_transcript(path)
    assert again.frames is not None and again.frames[1].json()["choices"][0]["delta"]["content"] == "Goodbye!"
    assert json.loads(path.read_text().splitlines()[0])["name"] == ""  # the header keeps its own name
    pytester.runpytest().assert_outcomes(passed=2)


def test_ignored_paths_are_left_out_of_the_replay_tests(pytester: pytest.Pytester) -> None:
    transcript = recorded()
    transcript.backend = [Usage(9), Text("Hello!", 2), Finish("stop")]  # only the usage differs
    dump_transcript(transcript, pytester.path / "usage.jsonl")
    pytester.runpytest().assert_outcomes(passed=1, failed=1)
    pytester.runpytest("--dscodec-ignore", "usage").assert_outcomes(passed=2)


def test_live_recordings_are_not_rewritten(pytester: pytest.Pytester) -> None:
    transcript = recorded()
    transcript.origin = "live"
    transcript.backend = [Usage(4), Text("Goodbye!", 2), Finish("stop")]
    path = pytester.path / "live.jsonl"
    dump_transcript(transcript, path)
    before = path.read_text()
    result = pytester.runpytest("--dscodec-update")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*recorded from a live server, so it is not rewritten*"])
    assert path.read_text() == before


def test_a_failing_live_recording_is_not_said_to_be_rewritten(pytester: pytest.Pytester) -> None:
    """Its hint says what to do instead of --dscodec-update, which leaves live transcripts alone."""
    live = recorded()
    live.origin = "live"
    live.backend = [Usage(4), Text("Goodbye!", 2), Finish("stop")]
    dump_transcript(live, pytester.path / "live.jsonl")
    dump_transcript(live_page(), pytester.path / "page.jsonl")
    # -rN: no short summary, whose lines repeat the message in full on a wide terminal.
    result = pytester.runpytest("-rN")
    result.assert_outcomes(passed=1, failed=3)
    out = result.stdout.str()
    assert "rewrites the transcript" not in out
    assert out.count("recorded from a live server, so --dscodec-update does not rewrite it") == 2


def live_page() -> Transcript:
    """A streamed request a server answered with an HTML page, as ``record`` saves it."""
    from dscodec.testing.live import Exchange, transcript_of

    url = "http://127.0.0.1:8000/v1/chat/completions"
    page = "<html>oops</html>"
    return transcript_of(Exchange(url, "chat_completions", dict(REQUEST), 200, "text/html", page, None, None))


def test_a_page_recorded_for_a_streamed_request_fails_both_tests(pytester: pytest.Pytester) -> None:
    dump_transcript(live_page(), pytester.path / "html.jsonl")
    result = pytester.runpytest()
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert 'response: expected "<html>oops</html>", got <missing>' in out and "GEN008" in out


def test_a_malformed_transcript_is_reported_by_its_message(pytester: pytest.Pytester) -> None:
    odd = recorded()
    odd.created = -5
    dump_transcript(odd, pytester.path / "odd.jsonl")
    header = json.dumps(
        {"kind": "transcript", "format": "dscodec-transcript", "version": 2, "protocol": "messages"}
    )
    (pytester.path / "broken.jsonl").write_text(header + '\n{"kind": ["request"]}\n')
    result = pytester.runpytest("--continue-on-collection-errors")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    out = result.stdout.str()
    assert "created must be None or an integer" in out and "a line needs a string 'kind'" in out
    assert "Traceback" not in out and "raise " not in out


def test_the_plugin_can_be_switched_off(pytester: pytest.Pytester) -> None:
    dump_transcript(recorded(), pytester.path / "hello.jsonl")
    pytester.runpytest("-p", "no:dscodec").assert_outcomes()


def test_update_works_across_xdist_workers(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    for name in ("a", "b"):
        transcript = recorded()
        transcript.backend = [Usage(4), Text(f"Changed {name}", 2), Finish("stop")]
        dump_transcript(transcript, pytester.path / f"{name}.jsonl")
    result = pytester.runpytest_subprocess("-n", "2", "--dscodec-update")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*2 transcripts rewritten*"])


def test_transcripts_next_to_the_kit_are_collected(pytester: pytest.Pytester) -> None:
    # A transcript is any *.jsonl whose first line is the header; an ordinary test file runs beside it.
    dump_transcript(recorded(), pytester.path / "t.jsonl")
    pytester.makepyfile(test_other="def test_x():\n    assert True\n")
    assert Path(pytester.path / "t.jsonl").is_file()
    pytester.runpytest().assert_outcomes(passed=3)


def test_a_file_of_several_transcripts_gives_tests_for_each(pytester: pytest.Pytester) -> None:
    """Format version 2: ``replay[<name>]`` and ``lint[<name>]`` per transcript; an update rewrites only the
    transcript that changed, and keeps the others and their names."""
    first, second = recorded(), recorded("Bye!")
    first.name, second.name = "hello", "bye"
    second.backend = [Usage(4), Text("Goodbye!", 2), Finish("stop")]
    path = pytester.path / "takes.jsonl"
    dump_transcripts([first, second], path)
    result = pytester.runpytest("-v", "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*takes.jsonl::replay?hello? PASSED*",
            "*takes.jsonl::lint?hello? PASSED*",
            "*takes.jsonl::replay?bye? FAILED*",
            "*takes.jsonl::lint?bye? PASSED*",
        ]
    )
    result = pytester.runpytest("--dscodec-update")
    result.assert_outcomes(passed=4)
    again = load_transcripts(path)
    assert [t.name for t in again] == ["hello", "bye"] and again[0] == first
    assert again[1].frames is not None
    assert again[1].frames[1].json()["choices"][0]["delta"]["content"] == "Goodbye!"
    pytester.runpytest().assert_outcomes(passed=4)


def test_loading_the_plugin_loads_none_of_the_kit() -> None:
    """pytest loads the plugin in every session where dscodec is installed: that imports the package but none of
    its tools (they load when a transcript is collected, or on first use)."""
    code = (
        "import sys, dscodec.testing.plugin; "
        "kit = {'dscodec.testing.lint', 'dscodec.testing.replay', 'dscodec.testing.compare', "
        "'dscodec.testing.transcript', 'dscodec.processor', 'pydantic'}; "
        "sys.exit(sorted(kit & set(sys.modules)) or 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_package_names_stay_the_functions_once_their_modules_load() -> None:
    """``lint``, ``replay`` and ``compare`` are functions of the package and modules of the same name: the
    package's names are the functions, whichever loads first."""
    code = (
        "import dscodec.testing.replay, dscodec.testing.lint, dscodec.testing.compare; import dscodec.testing as t; "
        "import types; from dscodec.testing import lint, replay, compare; "
        "assert all(isinstance(f, types.FunctionType) for f in (t.lint, t.replay, t.compare, lint, replay, compare)); "
        "assert t.lint.__module__ == 'dscodec.testing.lint' and t.replay.__module__ == 'dscodec.testing.replay'; "
        "assert all(hasattr(t, name) for name in t.__all__) and set(t.__all__) <= set(dir(t))"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_transcript_with_no_answer_fails_until_update_writes_it(pytester: pytest.Pytester) -> None:
    """Only the request and the backend lines: there was nothing to compare, so its replay passed whatever
    dscodec answered. It fails, saying so, until ``--dscodec-update`` writes dscodec's answer in."""
    path = pytester.path / "hand.jsonl"
    dump_transcript(Transcript("chat_completions", REQUEST, [Text("Bonjour 😀", 3), Finish("stop")]), path)
    result = pytester.runpytest("-k", "replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*1 difference;*", "*frames: expected <missing>, got *records no answer*"])
    result = pytester.runpytest("--dscodec-update")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*hand.jsonl: 1 difference", "1 transcript rewritten"])
    again = load_transcript(path)
    assert again.frames is not None and again.accumulated is not None
    assert again.accumulated["choices"][0]["message"]["content"] == "Bonjour 😀"
    pytester.runpytest().assert_outcomes(passed=2)


def test_dscodec_url_checks_a_live_server_instead(pytester: pytest.Pytester, live_url: str) -> None:
    """With --dscodec-url the replay test sends the request to that server and compares its answer; the headers
    given go with it, and a server that answers otherwise fails with the differences."""
    from dscodec.testing.live import record

    request = {**REQUEST, "thinking": {"type": "enabled"}}
    golden = record(live_url, request, protocol="chat_completions", headers={"X-Scenario": "reasoning"})
    dump_transcript(golden, pytester.path / "golden.jsonl")
    passing = pytester.runpytest("--dscodec-url", live_url, "--dscodec-header", "X-Scenario: reasoning")
    passing.assert_outcomes(passed=2)
    failing = pytester.runpytest("-rN", "--dscodec-url", live_url, "--dscodec-header", "X-Scenario: plain")
    failing.assert_outcomes(passed=1, failed=1)
    assert f"golden.jsonl: the server at {live_url} answers otherwise than recorded" in failing.stdout.str()


def test_dscodec_header_mistakes_are_one_usage_error(pytester: pytest.Pytester) -> None:
    dump_transcript(recorded(), pytester.path / "hello.jsonl")
    alone = pytester.runpytest("--dscodec-header", "X-Scenario: plain")
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    alone.stderr.fnmatch_lines(["*--dscodec-header is sent with --dscodec-url*"])
    malformed = pytester.runpytest("--dscodec-url", "http://127.0.0.1:9", "--dscodec-header", "no colon")
    assert malformed.ret == pytest.ExitCode.USAGE_ERROR
    malformed.stderr.fnmatch_lines(["*'no colon' is not 'Name: value'*"])


def test_transcripts_are_found_by_their_first_line_that_is_not_blank(pytester: pytest.Pytester) -> None:
    """A leading blank line, a byte order mark or a header line of more than 64 KiB used to make a golden file
    no test at all, without a word."""
    transcript = recorded()
    dump_transcript(transcript, pytester.path / "plain.jsonl")
    data = (pytester.path / "plain.jsonl").read_text(encoding="utf-8")
    (pytester.path / "blank.jsonl").write_text("\n\n" + data, encoding="utf-8")
    (pytester.path / "bom.jsonl").write_text("\ufeff" + data, encoding="utf-8")
    transcript.meta = {"note": "x" * 70_000}
    dump_transcript(transcript, pytester.path / "big.jsonl")
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(
        ["*big.jsonl::replay PASSED*", "*blank.jsonl::lint PASSED*", "*bom.jsonl::replay PASSED*"]
    )


def test_a_file_that_cannot_be_read_is_a_collection_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``*.jsonl`` file that cannot be read may be a transcript: it is reported, not skipped."""
    import dscodec.testing.transcript as module

    dump_transcript(recorded(), pytester.path / "locked.jsonl")

    def unreadable(path: object) -> str:
        raise module.TranscriptError(f"{path}: cannot be read: Permission denied")

    def refuse(path: object) -> bytes:
        raise module.TranscriptError(f"{path}: cannot be read: Permission denied")

    monkeypatch.setattr(module, "file_kind", unreadable)
    monkeypatch.setattr(module, "_read", refuse)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    assert "locked.jsonl: cannot be read: Permission denied" in result.stdout.str()


def test_a_fifo_is_skipped_unread(tmp_path: Path) -> None:
    """Opening a FIFO that nobody writes to waits forever: it is no transcript file, and is never opened (pytest
    does not offer one when it walks a folder; the hook refuses it all the same)."""
    import os
    import threading

    from dscodec.testing import plugin

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    found: list[object] = []

    def collect() -> None:
        with pytest.warns(pytest.PytestWarning, match="skipped .*pipe.jsonl: not a regular file"):
            found.append(plugin.pytest_collect_file(fifo, None))  # type: ignore[arg-type]

    thread = threading.Thread(target=collect, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():  # it opened the FIFO: let it go (a writer that closes at once) and fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("the plugin opened a FIFO and waited for a writer")
    assert found == [None]


def test_an_empty_ignore_rule_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """``--dscodec-ignore ""`` used to leave out every path inside a list, so a changed answer passed."""
    transcript = recorded()
    transcript.backend = [Usage(4), Text("Goodbye!", 2), Finish("stop")]
    dump_transcript(transcript, pytester.path / "changed.jsonl")
    result = pytester.runpytest("--dscodec-ignore", "")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--dscodec-ignore: an ignore rule must name a key or a path pattern" in result.stderr.str()


def test_a_transcript_that_records_no_answer_fails_its_lint_test(pytester: pytest.Pytester) -> None:
    """Its answer used to be linted as the empty body ``{}``: the lint test passed with nothing to lint."""
    unanswered = Transcript("chat_completions", REQUEST, [Usage(4), Text("Hi", 1), Finish("stop")])
    dump_transcript(unanswered, pytester.path / "unanswered.jsonl")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    assert "GEN008 stream: the transcript records no answer" in result.stdout.str()


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--dscodec-url", "http://[::1", "*--dscodec-url: url 'http://[::1' is no valid URL*"),
        ("--dscodec-url", "notaurl", "*--dscodec-url: url must be an http:// or https:// address*"),
        ("--dscodec-header", "X-Name: é", "*--dscodec-header 'X-Name: é': *cannot carry*"),
    ],
)
def test_a_url_or_header_no_request_can_carry_is_one_usage_error(
    pytester: pytest.Pytester, option: str, value: str, said: str
) -> None:
    """Not a failure (or an internal error) of every replay test: one usage error before any test runs."""
    dump_transcript(recorded(), pytester.path / "hello.jsonl")
    given = (
        [option, value]
        if option == "--dscodec-url"
        else ["--dscodec-url", "http://127.0.0.1:9", option, value]
    )
    result = pytester.runpytest(*given)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([said])


def test_transcripts_of_one_name_get_tests_of_their_own(pytester: pytest.Pytester) -> None:
    """Two transcripts of one name in a file: each test has its own id, so that each can be picked and named."""
    first, second = recorded(), recorded("Bye!")
    first.name = second.name = "same"
    second.backend = [Usage(4), Text("Goodbye!", 2), Finish("stop")]
    dump_transcripts([first, second], pytester.path / "takes.jsonl")
    result = pytester.runpytest("-v", "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*takes.jsonl::replay?same? PASSED*",
            "*takes.jsonl::lint?same? PASSED*",
            "*takes.jsonl::replay?same #1? FAILED*",
            "*takes.jsonl::lint?same #1? PASSED*",
        ]
    )
    pytester.runpytest("takes.jsonl::replay[same #1]").assert_outcomes(failed=1)
