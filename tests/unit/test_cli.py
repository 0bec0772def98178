"""The render / encode command line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

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
