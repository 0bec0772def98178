"""Every Python example in the README and in docs/ runs as written and prints what its comments say.

A user copies these blocks first, so each one runs here, in the order of its file and in one namespace per file
(a later block uses an earlier one's ``client``), against what the text around it says it needs:

* the SDK examples against ``dscodec serve --script examples/scripts.json``, started through the command line;
* the fake-engine example against a fake vLLM engine and ``dscodec serve --upstream vllm`` in front of it;
* the backend example with a stand-in for the user's engine client, and a request through the app it makes.

Only what stands for the user's own setup is replaced, each by a name listed in :data:`USER_SETUP`: the address
the docs serve on, a model folder on the user's disk, the request body the user sends. A line that prints a value
and shows it in a comment (``print(x)  # ['thinking', 'text']``) must print that value.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from dscodec.server.serve import demo_vocabulary
from dscodec.testing.engines import FakeEngine, serve_engine
from tests.server.conftest import LiveServer
from tests.server.test_serve import start

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: ``print(value)  # what it prints``: the comment is checked when it reads as a Python value.
_SHOWN = re.compile(r"^\s*print\((.*)\)\s+#\s*(.+?)\s*$")

#: What the docs write for the user's own setup, and the name of what stands for it here.
USER_SETUP = {
    '"http://127.0.0.1:8000': 'SERVER + "',
    '"/models/DeepSeek-V4-Pro"': "TOKENIZER",
    '"/models/deepseek-v4.1/tokenizer.json"': "TOKENIZER",
}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    code: str

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"


def doc_blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [Block(path, text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _FENCE.finditer(text)]


def shown_values(code: str) -> list[str]:
    """The values the block's comments say its prints print."""
    shown = []
    for line in code.splitlines():
        m = _SHOWN.match(line)
        if m is None:
            continue
        try:
            ast.parse(m.group(2), mode="eval")
        except SyntaxError:  # a remark ("# DeepSeek's extra field"), not a value
            continue
        shown.append(m.group(2))
    return shown


def run_blocks(path: Path, namespace: dict[str, Any], tests: list[Any] | None = None) -> str:
    """Run the file's blocks in order in ``namespace``; what they printed (checked against their comments).
    The test functions a block defines are appended to ``tests`` (a later block may reuse a name)."""
    out = io.StringIO()
    for block in doc_blocks(path):
        known = {k: v for k, v in namespace.items() if k.startswith("test_")}
        code = block.code
        for written, standin in USER_SETUP.items():
            code = code.replace(written, standin)
        before = out.tell()
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(code, block.name, "exec"), namespace)  # noqa: S102 - the docs' own examples
            except Exception as exc:
                raise AssertionError(f"the example at {block.name} failed: {exc!r}") from exc
        if tests is not None:
            tests += [v for k, v in namespace.items() if k.startswith("test_") and known.get(k) is not v]
        printed = out.getvalue()[before:]
        for value in shown_values(block.code):
            assert value in printed, f"{block.name} should print {value}, printed {printed!r}"
    return out.getvalue()


def test_every_document_with_python_examples_is_run_here() -> None:
    have = {path.name for path in DOCUMENTS if doc_blocks(path)}
    assert have == {"README.md", "server.md", "backends.md", "testing.md"}
    # The checks of printed values are not vacuous.
    assert len([v for path in DOCUMENTS for b in doc_blocks(path) for v in shown_values(b.code)]) >= 2


def test_the_shown_values_are_read_from_print_lines_only() -> None:
    code = "print(x)  # ['a']\nprint(y)  # a remark's words\nz = 1  # 3\n"
    assert shown_values(code) == ["['a']"]


@contextlib.contextmanager
def served(argv: list[str]) -> Iterator[str]:
    """``dscodec serve ARGV`` as the command line builds it, served on a free local port; its URL."""
    with pytest.MonkeyPatch.context() as patch:
        seen = start(patch, argv)
    assert seen["status"] == 0
    with LiveServer(seen["app"]) as live:
        yield live.url


@pytest.fixture(scope="module")
def scripted_server() -> Iterator[str]:
    with served(["--script", str(ROOT / "examples" / "scripts.json")]) as url:
        yield url


def test_readme_examples(scripted_server: str) -> None:
    from dscodec.vocab import Vocabulary

    vocabulary = Vocabulary.load(None)
    sent: list[str] = []
    answer = "Hello there.</think>Hi, how can I help?"
    ids = vocabulary.full.encode(answer, add_special_tokens=False).ids
    namespace: dict[str, Any] = {
        "SERVER": scripted_server,
        "body": json.loads((ROOT / "examples" / "chat.json").read_text(encoding="utf-8")),
        "backend_output": [ids[k : k + 3] for k in range(0, len(ids), 3)],
        "send": sent.append,
    }
    printed = run_blocks(ROOT / "README.md", namespace)
    assert namespace["request"].model_version in ("v4", "v4.1")
    message = namespace["complete"]["choices"][0]["message"]
    assert (message["reasoning_content"], message["content"]) == ("Hello there.", "Hi, how can I help?")
    assert sent[0].startswith("data: {") and sent[-1] == "data: [DONE]\n\n"
    assert printed.count("\n") >= 3  # the SDK block's three answers


class _Step:
    def __init__(self, token_ids: list[int]) -> None:
        self.token_ids = token_ids
        self.logprobs = None


class _EngineStream:
    """What the backend example's placeholder ``engine.generate`` returns: steps of ids, then its end."""

    def __init__(self, token_ids: list[int], max_tokens: int) -> None:
        self._ids = token_ids[:max_tokens]
        self.hit_max_tokens = len(token_ids) > max_tokens
        self.cached_tokens = 0
        self.cancelled = False

    async def __aiter__(self) -> AsyncIterator[_Step]:
        for k in range(0, len(self._ids), 2):
            yield _Step(self._ids[k : k + 2])

    async def cancel(self) -> None:
        self.cancelled = True


class _Engine:
    def __init__(self, token_ids: list[int]) -> None:
        self._ids = token_ids
        self.requests: list[dict[str, Any]] = []
        self.streams: list[_EngineStream] = []

    async def generate(self, **fields: Any) -> _EngineStream:
        self.requests.append(fields)
        stream = _EngineStream(self._ids, fields["max_tokens"])
        self.streams.append(stream)
        return stream


def test_server_examples(scripted_server: str) -> None:
    vocabulary = demo_vocabulary()
    ids = vocabulary.full.encode("Thinking.</think>Hi there!", add_special_tokens=False).ids
    engine = _Engine(ids)
    namespace: dict[str, Any] = {"SERVER": scripted_server, "TOKENIZER": vocabulary, "engine": engine}
    run_blocks(ROOT / "docs" / "server.md", namespace)
    # The backend example's app answers through the placeholder engine, and closes its stream.
    with LiveServer(namespace["app"]) as live:
        body = {
            "model": "DeepSeek-V4-Pro",
            "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 100,
        }
        answer = httpx.post(live.url + "/v1/chat/completions", json=body, timeout=10).json()
    message = answer["choices"][0]["message"]
    assert (message["reasoning_content"], message["content"]) == ("Thinking.", "Hi there!")
    assert engine.requests[-1]["max_tokens"] == 100 and engine.streams[-1].cancelled


def test_backends_example() -> None:
    namespace: dict[str, Any] = {"TOKENIZER": demo_vocabulary()}
    run_blocks(ROOT / "docs" / "backends.md", namespace)
    assert [route.path for route in namespace["app"].routes if route.path == "/v1/chat/completions"]


def test_testing_examples(scripted_server: str) -> None:
    from dscodec.testing.live import Exchange

    vocabulary = demo_vocabulary()
    body = {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 256,
        "stream": True,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    namespace: dict[str, Any] = {"SERVER": scripted_server, "TOKENIZER": vocabulary, "body": body}
    tests: list[Any] = []
    run_blocks(ROOT / "docs" / "testing.md", namespace, tests)
    assert isinstance(namespace["exchange"], Exchange)
    # The tests the examples define, run as pytest would run them: two lint a replayed answer, and the last
    # streams through a fake vLLM engine and dscodec's server in front of it.
    assert len(tests) == 3
    *lint_tests, engine_test = tests
    for test in lint_tests:
        test()
    engine: FakeEngine = namespace["engine"]
    with serve_engine(engine) as engine_url, served(["--upstream", "vllm", engine_url]) as server_url:
        engine_test(engine_url, server_url)
    assert len(engine.calls) >= 10  # the engine was really asked, once per example
