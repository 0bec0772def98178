"""The dscodec lint / record / replay commands (live servers on 127.0.0.1 only)."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from dscodec.cli import main
from dscodec.testing import (
    Failure,
    Finish,
    Text,
    Transcript,
    Usage,
    dump_transcript,
    dump_transcripts,
    dumps_transcript,
    dumps_transcripts,
    load_transcript,
    replay,
)
from tests.testing.conftest import body

BROKEN = Path(__file__).resolve().parent / "broken"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    status = main(list(argv), stdout=out)
    return status, out.getvalue()


def clean_stream(tmp_path: Path) -> Path:
    transcript = Transcript(
        "messages",
        body("messages", "plain"),
        [Usage(3), Text("Hello!", 2), Finish("stop")],
    )
    path = tmp_path / "clean.sse"
    frames = replay(transcript).transcript.frames or []
    path.write_text("".join(frame.sse() for frame in frames), encoding="utf-8")
    return path


def test_lint_a_clean_file(tmp_path: Path) -> None:
    assert run("lint", str(clean_stream(tmp_path)), "--protocol", "messages") == (0, "")


def test_lint_a_broken_file_prints_one_line_per_finding() -> None:
    path = BROKEN / "chat_completions" / "CHT008-no-usage-chunk.sse"
    request = BROKEN / "chat_completions" / "request.json"
    status, out = run("lint", str(path), "--protocol", "chat_completions", "--request", str(request))
    assert status == 1
    assert out.splitlines() == [
        f"{path}: CHT008 stream: stream_options.include_usage is set but no chunk carries usage"
    ]
    # Without the request the rule has nothing to go by.
    assert run("lint", str(path), "--protocol", "chat_completions")[0] == 0


def test_lint_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (BROKEN / "responses" / "RSP009-no-final-event.sse").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    status, out = run("lint", "-", "--protocol", "responses")
    assert status == 1 and out.startswith("<stdin>: RSP009 ")


def test_lint_a_json_response_and_a_transcript(tmp_path: Path) -> None:
    response = tmp_path / "response.json"
    response.write_text(json.dumps({"type": "error", "error": {"message": "x"}}), encoding="utf-8")
    status, out = run("lint", str(response), "--protocol", "messages")
    assert status == 1 and " GEN007 " in out
    transcript = tmp_path / "t.jsonl"
    dump_transcript(
        Transcript("responses", {"model": "m"}, response={"error": {"message": 1}}, status=500), transcript
    )
    status, out = run("lint", str(transcript))  # the protocol comes from the transcript
    assert status == 1 and " GEN007 " in out


@pytest.mark.parametrize(
    "argv",
    [
        ["lint", "missing.sse", "--protocol", "messages"],
        ["lint", "somefile.sse"],
        ["lint"],
        ["lint", "--url", "http://127.0.0.1:9/v1/messages"],
        ["replay", "no/such/folder"],
    ],
)
def test_usage_errors(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "somefile.sse").write_text("data: {}\n\n")
    assert run(*argv)[0] == 2


def test_lint_a_live_server(live_url: str, tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(body("responses", "tool_args")), encoding="utf-8")
    status, out = run(
        "lint",
        "--url",
        live_url + "/v1/responses",
        "--body",
        str(request),
        "--header",
        "X-Scenario: tool_args",
    )
    assert (status, out) == (0, "")
    request.write_text(json.dumps(body("chat_completions", "plain")), encoding="utf-8")
    assert run("lint", "--url", live_url, "--protocol", "chat_completions", "--body", str(request))[0] == 0
    assert run("lint", "--url", live_url, "--body", str(request))[0] == 2  # which protocol?
    assert (
        run("lint", "--url", live_url, "--protocol", "messages", "--body", str(request), "--header", "x")[0]
        == 2
    )


def test_record_then_replay(live_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for protocol, script, stream in [
        ("chat_completions", "tool_args", True),
        ("responses", "reasoning", True),
        ("messages", "parallel", False),
        ("messages", "fail_mid", True),
        ("chat_completions", "fail_early", True),
        ("responses", "stop", False),
    ]:
        request = tmp_path / f"{protocol}-{script}.json"
        request.write_text(json.dumps(body(protocol, script, stream=stream)), encoding="utf-8")
        out_file = folder / f"{protocol}-{script}.jsonl"
        status, out = run(
            "record",
            "--url",
            f"{live_url}/v1/{'chat/completions' if protocol == 'chat_completions' else protocol}",
            "--body",
            str(request),
            "--header",
            f"X-Scenario: {script}",
            "-o",
            str(out_file),
        )
        # An error answer (fail_early: a 502) is saved too, and said to be one: exit status 1.
        assert status == (1 if script == "fail_early" else 0), out
        assert out.startswith(f"recorded {protocol} from "), out
        assert load_transcript(out_file).origin == "live"
    status, out = run("replay", str(folder))
    assert status == 0, out
    lines = out.splitlines()
    assert lines[0].split() == ["transcript", "protocol", "result", "first", "difference"]
    assert lines[-1] == "6 transcripts: 6 passed, 0 failed"


def test_replay_url_checks_a_live_server_against_its_recordings(live_url: str, tmp_path: Path) -> None:
    """``dscodec replay --url`` sends each transcript's request to the server again and compares the answers:
    a server that answers as recorded passes (its deltas cut elsewhere, its ids new), one that answers otherwise
    fails, and its headers (the scenario) go with every request."""
    from dscodec.testing.live import recheck, record

    folder = tmp_path / "goldens"
    folder.mkdir()
    cases = [("chat_completions", True), ("responses", False), ("messages", True)]
    for protocol, stream in cases:
        golden = record(
            live_url,
            body(protocol, "reasoning", stream=stream),
            protocol=protocol,  # type: ignore[arg-type]
            headers={"X-Scenario": "reasoning"},
        )
        assert recheck(golden, live_url, headers={"X-Scenario": "reasoning"}) == []
        assert recheck(golden, live_url, headers={"X-Scenario": "plain"}) != []
        dump_transcript(golden, folder / f"{protocol}.jsonl")
    status, out = run("replay", str(folder), "--url", live_url, "--header", "X-Scenario: reasoning")
    assert status == 0 and out.splitlines()[-1] == "3 transcripts: 3 passed, 0 failed", out
    status, out = run("replay", str(folder), "--url", live_url, "--header", "X-Scenario: plain")
    assert status == 1 and out.splitlines()[-1] == "3 transcripts: 0 passed, 3 failed", out
    status, out = run("replay", str(folder), "--url", "http://127.0.0.1:9", "--timeout", "5")
    assert status == 2 and "ERROR" in out, out
    assert run("replay", str(folder), "--url", live_url, "--header", "no colon")[0] == 2
    # Options for the server without a server, and a chunking a server does not take, are usage errors.
    assert run("replay", str(folder), "--header", "X-Scenario: plain")[0] == 2
    assert run("replay", str(folder), "--url", live_url, "--chunking", "chars")[0] == 2
    # A transcript that records no answer agrees with no server.
    answerless = Transcript("chat_completions", body("chat_completions", "plain"), [Usage(1), Finish("stop")])
    assert [d.path for d in recheck(answerless, live_url)] == ["response"]
    with pytest.raises(TypeError, match="url must be a str"):
        recheck(answerless, None)  # type: ignore[arg-type]


def test_replay_reports_a_failing_transcript(tmp_path: Path) -> None:
    good = Transcript(
        "chat_completions", body("chat_completions", "plain"), [Usage(1), Text("Hi", 1), Finish("stop")]
    )
    bad = replay(good).transcript
    bad.backend = [Usage(1), Text("Bye", 1), Finish("stop")]  # the recorded answer no longer fits the output
    dump_transcript(replay(good).transcript, tmp_path / "good.jsonl")
    dump_transcript(bad, tmp_path / "bad.jsonl")
    (tmp_path / "notes.jsonl").write_text('{"not": "a transcript"}\n')
    (tmp_path / "broken.jsonl").write_text('{"format": "dscodec-transcript", "version": 9}\n')
    odd = replay(good).transcript
    odd.created = -5  # no answer carries it: an error row, not a traceback
    dump_transcript(odd, tmp_path / "odd.jsonl")
    status, out = run("replay", str(tmp_path), "--chunking", "chars")
    assert status == 2  # a transcript that cannot be read or replayed, as lint and compare answer one
    rows = {line.split()[0]: line for line in out.splitlines()[1:-1]}
    assert set(rows) == {"bad.jsonl", "broken.jsonl", "good.jsonl", "odd.jsonl"}
    assert " FAIL " in rows["bad.jsonl"] and "content" in rows["bad.jsonl"]
    assert " ERROR " in rows["broken.jsonl"] and " pass" in rows["good.jsonl"]
    assert " ERROR " in rows["odd.jsonl"] and "created must be" in rows["odd.jsonl"]
    assert out.splitlines()[-1] == "4 transcripts: 1 passed, 1 failed, 2 errors"
    assert run("replay", str(tmp_path / "good.jsonl"))[0] == 0


def test_replay_ignore_leaves_paths_out(tmp_path: Path) -> None:
    """``--ignore`` leaves a key or a path out of the comparison, for dscodec's replay and a live server's alike."""
    good = Transcript(
        "chat_completions",
        body("chat_completions", "plain", stream=False),
        [Usage(1), Text("Hi", 1), Finish("stop")],
    )
    answer = replay(good).transcript
    answer.backend = [Usage(3), Text("Hi", 1), Finish("stop")]  # only the prompt's token count differs now
    dump_transcript(answer, tmp_path / "usage.jsonl")
    assert run("replay", str(tmp_path))[0] == 1
    assert run("replay", str(tmp_path), "--ignore", "usage")[0] == 0
    rules = ["response.usage.prompt_tokens", "total_tokens", "response.*.prompt_cache_miss_tokens"]
    assert run("replay", str(tmp_path), *(arg for rule in rules for arg in ("--ignore", rule)))[0] == 0
    assert run("replay", str(tmp_path), "--ignore", "total_tokens")[0] == 1


def test_a_failure_item_round_trips_through_the_cli(tmp_path: Path) -> None:
    transcript = Transcript(
        "responses", body("responses", "plain"), [Usage(1), Text("a", 1), Failure("down")]
    )
    dump_transcript(replay(transcript).transcript, tmp_path / "failed.jsonl")
    assert run("replay", str(tmp_path))[0] == 0
    assert run("lint", str(tmp_path / "failed.jsonl"))[0] == 0


def test_a_file_of_several_transcripts(tmp_path: Path) -> None:
    """Format version 2: ``replay`` gives a row per transcript in the file, ``lint`` checks every answer."""
    plain = Transcript(
        "messages", body("messages", "plain"), [Usage(1), Text("Hi", 1), Finish("stop")], name="whole"
    )
    split = Transcript(
        "messages", plain.request, [Usage(1), Text("H", 0), Text("i", 1), Finish("stop")], name="split"
    )
    answers = [replay(plain).transcript, replay(split).transcript]
    dump_transcripts(answers, tmp_path / "takes.jsonl")
    status, out = run("replay", str(tmp_path))
    assert status == 0, out
    assert [line.split()[0] for line in out.splitlines()[1:-1]] == [
        "takes.jsonl[whole]",
        "takes.jsonl[split]",
    ]
    assert run("lint", str(tmp_path / "takes.jsonl")) == (0, "")
    assert answers[1].frames is not None
    answers[1].frames = answers[1].frames[:-1]  # no message_stop
    dump_transcripts(answers, tmp_path / "takes.jsonl")
    status, out = run("lint", str(tmp_path / "takes.jsonl"))
    assert status == 1 and out.startswith(f"{tmp_path / 'takes.jsonl'}[split]: MSG008")


def test_compare_two_saved_answers(tmp_path: Path) -> None:
    request = body("chat_completions", "plain")
    whole = replay(
        Transcript("chat_completions", request, [Usage(3), Text("Hello there", 2), Finish("stop")])
    )
    parted = replay(
        Transcript(
            "chat_completions", request, [Usage(3), Text("Hello", 1), Text(" there", 1), Finish("stop")]
        )
    )
    other = replay(Transcript("chat_completions", request, [Usage(3), Text("Hello here", 2), Finish("stop")]))
    for name, result in (("whole", whole), ("parted", parted), ("other", other)):
        dump_transcript(result.transcript, tmp_path / f"{name}.jsonl")
    frames = parted.transcript.frames
    assert frames is not None
    (tmp_path / "parted.sse").write_text("".join(f"data: {frame.data}\n\n" for frame in frames))
    (tmp_path / "body.json").write_text(json.dumps(whole.transcript.accumulated))

    assert run("compare", str(tmp_path / "whole.jsonl"), str(tmp_path / "whole.jsonl")) == (
        0,
        "no differences\n",
    )
    status, out = run("compare", str(tmp_path / "whole.jsonl"), str(tmp_path / "parted.jsonl"))
    assert status == 1 and out.startswith("frames[1].data.choices[0].delta.reasoning_content")
    # Deltas that part elsewhere but add up to the same events are no difference with --merge-deltas; an SSE
    # stream against a transcript compares the frames.
    for actual in ("parted.jsonl", "parted.sse"):
        assert run("compare", str(tmp_path / "whole.jsonl"), str(tmp_path / actual), "--merge-deltas")[0] == 0
    status, out = run("compare", str(tmp_path / "whole.jsonl"), str(tmp_path / "other.jsonl"), "--limit", "1")
    assert status == 1 and "Hello here" in out and out.splitlines()[-1] == "... and 1 more difference"
    assert (
        run(
            "compare",
            str(tmp_path / "whole.jsonl"),
            str(tmp_path / "other.jsonl"),
            "--ignore",
            "reasoning_content",
        )[0]
        == 0
    )
    # Usage errors: a missing file, an unknown section, two kinds of file with nothing in common.
    assert run("compare", str(tmp_path / "whole.jsonl"), str(tmp_path / "none.jsonl"))[0] == 2
    assert (
        run("compare", str(tmp_path / "whole.jsonl"), str(tmp_path / "whole.jsonl"), "--sections", "x")[0]
        == 2
    )
    assert run("compare", str(tmp_path / "body.json"), str(tmp_path / "parted.sse"))[0] == 2


def _good() -> Transcript:
    return replay(
        Transcript(
            "chat_completions", body("chat_completions", "plain"), [Usage(1), Text("Hi", 1), Finish("stop")]
        )
    ).transcript


def test_replay_reports_an_answer_it_cannot_compare_and_goes_on(tmp_path: Path) -> None:
    """A response nested 500 levels is valid JSON the loader reads, which no comparison can (Python's
    recursion): ``replay`` used to die with a ValueError traceback and print no table."""
    dump_transcript(_good(), tmp_path / "a_good.jsonl")
    deep = "[" * 500 + "]" * 500
    (tmp_path / "b_deep.jsonl").write_text(
        '{"kind": "transcript", "format": "dscodec-transcript", "version": 2, "protocol": "chat_completions", '
        '"name": "deep", "origin": "live"}\n'
        '{"kind": "request", "body": {"model": "DeepSeek-V4-Pro", "messages": [{"role":"user","content":"x"}]}}\n'
        '{"kind": "text", "text": "hi", "token_count": 1}\n{"kind": "finish", "reason": "stop"}\n'
        '{"kind": "response", "status": 200, "body": {"a": ' + deep + "}}\n"
    )
    dump_transcript(_good(), tmp_path / "c_good.jsonl")
    status, out = run("replay", str(tmp_path))
    rows = {line.split()[0]: line for line in out.splitlines()[1:-1]}
    assert status == 2  # as compare answers the same file
    assert " pass" in rows["a_good.jsonl"] and " pass" in rows["c_good.jsonl"]
    assert " ERROR " in rows["b_deep.jsonl"] and "recursion" in rows["b_deep.jsonl"]
    assert out.splitlines()[-1] == "3 transcripts: 2 passed, 0 failed, 1 error"


def test_replay_and_lint_name_a_bad_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log probability of 400 digits is valid JSON that no float holds: it used to escape as OverflowError."""
    lines = dumps_transcript(_good()).splitlines()
    lines.insert(2, '{"kind": "tokens", "ids": [1], "logprobs": [-' + "9" * 400 + "]}")
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, out = run("replay", str(path))
    assert status == 2 and f"{path}:3: a log probability must be a finite number" in out
    assert out.splitlines()[-1] == "1 transcript: 0 passed, 0 failed, 1 error"
    assert run("lint", str(path))[0] == 2
    assert f"{path}:3: a log probability must be a finite number" in capsys.readouterr().err


def test_replay_reads_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """As lint and compare do, ``replay -`` reads the transcripts on standard input."""
    failing = _good()
    failing.backend = [Usage(1), Text("Bye", 1), Finish("stop")]
    data = dumps_transcripts([_good(), failing]).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    status, out = run("replay", "-")
    assert status == 1 and out.splitlines()[1].startswith("<stdin>[")
    assert out.splitlines()[-1] == "2 transcripts: 1 passed, 1 failed"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(dumps_transcript(_good()).encode())))
    status, out = run("replay", "-")
    assert status == 0 and out.splitlines()[1].startswith("<stdin> ")
    assert out.splitlines()[-1] == "1 transcript: 1 passed, 0 failed"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"not a transcript")))
    assert run("replay", "-")[0] == 2


def test_compare_limit_0_prints_only_the_count(tmp_path: Path) -> None:
    """The docs say ``--limit`` takes 0 or more, as format_differences does; 0 used to be refused."""
    other = replay(
        Transcript(
            "chat_completions", body("chat_completions", "plain"), [Usage(1), Text("Ho", 1), Finish("stop")]
        )
    ).transcript
    dump_transcript(_good(), tmp_path / "a.jsonl")
    dump_transcript(other, tmp_path / "b.jsonl")
    status, out = run("compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--limit", "0")
    assert status == 1 and re.fullmatch(r"\.\.\. and [0-9]+ more differences\n", out)


def test_an_empty_ignore_rule_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--ignore ""`` used to leave out every path inside a list, so a real difference passed."""
    changed = _good()
    assert changed.frames is not None
    changed.backend = [Usage(1), Text("Bye", 1), Finish("stop")]
    dump_transcript(changed, tmp_path / "changed.jsonl")
    assert run("replay", str(tmp_path))[0] == 1
    expected, actual = tmp_path / "a.json", tmp_path / "b.json"
    expected.write_text('{"choices": [{"text": "Hello"}]}', encoding="utf-8")
    actual.write_text('{"choices": [{"text": "Help"}]}', encoding="utf-8")
    assert run("compare", str(expected), str(actual))[0] == 1
    for argv in (
        ["replay", str(tmp_path), "--ignore", ""],
        ["replay", str(tmp_path), "--ignore", "usage", "--ignore", " "],
        ["compare", str(expected), str(actual), "--ignore", ""],
    ):
        assert run(*argv) == (2, "")
        err = capsys.readouterr().err
        assert err.startswith("dscodec: --ignore: an ignore rule must name a key or a path pattern")
        assert len(err.splitlines()) == 1


def test_replay_skips_what_is_no_regular_file_without_opening_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO named ``*.jsonl`` used to be opened to see whether it is a transcript: ``replay DIR`` hung."""
    import os
    import threading

    dump_transcript(_good(), tmp_path / "good.jsonl")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    (tmp_path / "folder.jsonl").mkdir()
    ran: list[tuple[int, str]] = []
    thread = threading.Thread(target=lambda: ran.append(run("replay", str(tmp_path))), daemon=True)
    thread.start()
    thread.join(30)
    if thread.is_alive():  # it opened the FIFO: let it go (a writer that closes at once) and fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("replay opened a FIFO and waited for a writer")
    ((status, out),) = ran
    assert status == 0 and out.splitlines()[-1] == "1 transcript: 1 passed, 0 failed"
    assert capsys.readouterr().err == f"dscodec: skipped {tmp_path / 'pipe.jsonl'}: not a regular file\n"


def test_replay_lint_and_compare_agree_on_what_a_transcript_file_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A leading blank line, a byte order mark or a header of more than 64 KiB used to make ``replay DIR`` skip
    a golden file without a word ("no transcripts under ..."), while ``replay FILE`` read it, and ``lint`` and
    ``compare`` read it as something else again. A ``*.jsonl`` file that cannot be read is an ERROR row."""
    good = _good()
    text = dumps_transcript(good)
    header, rest = text.split("\n", 1)
    big = json.loads(header)
    big["meta"] = {"note": "x" * 100_000}
    files = {
        "blank.jsonl": "\n" + text,
        "bom.jsonl": "\ufeff" + text,
        "big.jsonl": json.dumps(big) + "\n" + rest,
    }
    folder = tmp_path / "goldens"
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_bytes(content.encode("utf-8"))
    status, out = run("replay", str(folder))
    assert status == 0, out
    assert out.splitlines()[-1] == "3 transcripts: 3 passed, 0 failed"
    for name in files:
        path = str(folder / name)
        assert run("replay", path)[0] == 0
        assert run("lint", path) == (0, ""), name
        assert run("compare", path, str(folder / "blank.jsonl")) == (0, "no differences\n"), name
    (folder / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    status, out = run("replay", str(folder))
    assert status == 2
    (row,) = [line for line in out.splitlines() if line.startswith("dangling.jsonl")]
    assert " ERROR " in row and "dangling.jsonl: cannot be read: No such file or directory" in row
    assert out.splitlines()[-1] == "4 transcripts: 3 passed, 0 failed, 1 error"
    assert capsys.readouterr().err == ""


def test_lint_takes_json_that_is_no_object_as_a_body(tmp_path: Path) -> None:
    path = tmp_path / "arr.json"
    path.write_text("[1,2,3]", encoding="utf-8")
    status, out = run("lint", str(path), "--protocol", "chat_completions")
    assert (
        status == 1 and out == f"{path}: GEN001 stream: the body is a JSON array, not an object: '[1,2,3]'\n"
    )


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://[::1/v1/chat/completions", "is no valid URL: Invalid IPv6 URL"),
        ("http://h:port/v1/chat/completions", "is no valid URL"),
        ("notaurl", "must be an http:// or https:// address"),
        ("ftp://x/v1/chat/completions", "must be an http:// or https:// address"),
        ("http:///v1/chat/completions", "must be an http:// or https:// address"),
    ],
)
def test_a_url_that_is_no_http_address_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, said: str
) -> None:
    """Said once, with exit status 2 and nothing sent: not a traceback, nor an ERROR row per transcript."""
    request = tmp_path / "request.json"
    request.write_text(json.dumps(body("chat_completions", "plain")), encoding="utf-8")
    dump_transcript(
        Transcript("chat_completions", body("chat_completions", "plain"), []), tmp_path / "t.jsonl"
    )
    for argv in (
        ["record", "--url", url, "--body", str(request), "-o", str(tmp_path / "out.jsonl")],
        ["lint", "--url", url, "--body", str(request), "--protocol", "chat_completions"],
        ["replay", str(tmp_path / "t.jsonl"), "--url", url],
    ):
        status, printed = run(*argv)
        assert status == 2 and printed == "", argv
        err = capsys.readouterr().err
        assert err.startswith("dscodec: --url: url ") and said in err and repr(url) in err, err
    assert not (tmp_path / "out.jsonl").exists()


def test_a_header_http_cannot_carry_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(body("chat_completions", "plain")), encoding="utf-8")
    dump_transcript(
        Transcript("chat_completions", body("chat_completions", "plain"), []), tmp_path / "t.jsonl"
    )
    url = "http://127.0.0.1:9/v1/chat/completions"
    for header in ("X-Name: é", "X-Name: a\x00b"):
        for argv in (
            [
                "record",
                "--url",
                url,
                "--body",
                str(request),
                "-o",
                str(tmp_path / "out.jsonl"),
                "--header",
                header,
            ],
            ["lint", "--url", url, "--body", str(request), "--header", header],
            ["replay", str(tmp_path / "t.jsonl"), "--url", url, "--header", header],
        ):
            status, _ = run(*argv)
            assert status == 2, argv
            assert "an HTTP header cannot carry" in capsys.readouterr().err


def test_an_empty_output_path_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o ""`` used to be refused as "a folder" (the current folder an empty path stands for)."""
    request = tmp_path / "request.json"
    request.write_text(json.dumps(body("chat_completions", "plain")), encoding="utf-8")
    url = "http://127.0.0.1:9/v1/chat/completions"
    status, _ = run("record", "--url", url, "--body", str(request), "-o", "")
    assert status == 2
    assert "-o/--output needs the path of the transcript file to write" in capsys.readouterr().err
