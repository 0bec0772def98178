"""The render / encode command line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dscodec.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def isatty(self) -> bool:
        return False


def test_encode_prints_the_prompt_and_the_ids() -> None:
    out = io.StringIO()
    assert main(["encode", str(EXAMPLES / "chat.json"), "--json"], stdout=out) == 0
    result = json.loads(out.getvalue())
    assert result["model_version"] == "v4"
    assert result["ids"] and all(isinstance(i, int) for i in result["ids"])


def test_a_rejected_request_exits_1_with_the_error_body(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    body = tmp_path / "bad.json"
    body.write_text('{"model": "DeepSeek-V4-Pro", "messages": []}', encoding="utf-8")
    assert main(["render", str(body)], stdout=io.StringIO()) == 1
    assert '"error"' in capsys.readouterr().err


def test_a_reader_that_goes_away_is_not_an_error() -> None:
    assert main(["encode", str(EXAMPLES / "chat.json")], stdout=_ClosedPipe()) == 0


def test_piped_into_a_short_reader_no_traceback(tmp_path: Path) -> None:
    # Far more output than a pipe buffers, so the writer is still writing when the reader closes.
    body = tmp_path / "long.json"
    long_text = "word " * 100_000
    body.write_text(
        json.dumps({"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": long_text}]})
    )
    script = f"import sys; from dscodec.cli import main; sys.exit(main(['render', {str(body)!r}]))"
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert writer.stdout is not None
    writer.stdout.read(10)
    writer.stdout.close()
    _, err = writer.communicate(timeout=60)
    assert writer.returncode == 0
    assert b"Traceback" not in err


def _run(args: list[str], encoding: str) -> subprocess.CompletedProcess[bytes]:
    script = f"import sys; from dscodec.cli import main; sys.exit(main({args!r}))"
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, env=env, timeout=120, check=False
    )


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_terminal_without_the_prompts_characters_gets_escapes_not_a_traceback(
    tmp_path: Path, encoding: str
) -> None:
    """Prompts hold ``｜``, ``▁`` and whatever the user wrote (``😀``): on an output encoding without them the
    text has escapes, and ``--json`` stays JSON that reads back to the same values."""
    body = tmp_path / "emoji.json"
    body.write_text(
        json.dumps({"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "hi 😀 é"}]}),
        encoding="utf-8",
    )
    rendered = _run(["render", str(body)], encoding)
    assert rendered.returncode == 0 and b"Traceback" not in rendered.stderr
    text = rendered.stdout.decode(encoding)
    e_acute = "é" if encoding == "latin-1" else "\\xe9"
    assert f"hi \\U0001f600 {e_acute}\\u27e6<\\uff5cAssistant\\uff5c>\\u27e7" in text
    escaped = _run(["encode", str(body), "--json"], encoding)
    utf8 = _run(["encode", str(body), "--json"], "utf-8")
    assert escaped.returncode == utf8.returncode == 0
    assert json.loads(escaped.stdout.decode(encoding)) == json.loads(utf8.stdout.decode("utf-8"))
    body.write_text(
        '{"model": "DeepSeek-V4-Pro", "messages": [{"role": "｜", "content": "x"}]}', encoding="utf-8"
    )
    refused = _run(["render", str(body)], encoding)
    assert refused.returncode == 1 and b"Traceback" not in refused.stderr
    assert json.loads(refused.stderr.decode(encoding).splitlines()[-1])["error"]["message"]


def test_serve_on_an_address_it_cannot_listen_on_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A port in use or a host that does not resolve used to be found by uvicorn, after the slow tokenizer load:
    exit status 3 and uvicorn's log. Now: one ``dscodec:`` line, exit status 2, nothing loaded."""
    import socket

    pytest.importorskip("uvicorn")
    import dscodec.server.serve as serving

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("nothing may be loaded or served")

    monkeypatch.setattr(serving, "_load", never)
    monkeypatch.setattr("uvicorn.run", never)
    script = str(EXAMPLES / "scripts.json")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--script", script, "--port", str(port)]) == 2
        err = capsys.readouterr().err
        assert err == f"dscodec: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    assert main(["serve", "--script", script, "--host", "no-such-host.invalid"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dscodec: --host no-such-host.invalid: no address to listen on (")
    assert len(err.splitlines()) == 1
