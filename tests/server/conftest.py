"""One example server per test session, on a free loopback port, with the official SDKs pointed at it."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anthropic
import openai
import pytest
import uvicorn
from typing_extensions import Self

from dscodec.server import BackendOutput, BackendRequest, ScriptedBackend, create_app
from dscodec.server.serve import demo_vocabulary
from tests.server.scripts import SCRIPTS

MODELS = ["DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash"]

#: The V4 vocabulary plus <｜System｜>, so V4.1 prompts encode too (the bundled file lacks it).
VOCABULARY = demo_vocabulary()


@dataclass
class Run:
    """What the backend did for one request."""

    max_tokens: int
    prompt_ids: int
    yielded: int = 0
    exhausted: bool = False
    closed: bool = False


@dataclass
class Recorder:
    """Wraps the scripted backend and records, per ``X-Test-Id``, how far each request ran and its closing."""

    inner: ScriptedBackend
    runs: dict[str, Run] = field(default_factory=dict)

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        run = Run(max_tokens=job.max_tokens, prompt_ids=len(job.token_ids))
        key = job.headers.get("x-test-id")
        if key:
            self.runs[key] = run
        outputs = self.inner(job)
        try:
            async for item in outputs:
                yield item
                run.yielded += 1
            run.exhausted = True
        finally:
            await outputs.aclose()
            run.closed = True

    def wait_closed(self, key: str, timeout: float = 5.0) -> Run:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            run = self.runs.get(key)
            if run is not None and run.closed:
                return run
            time.sleep(0.01)
        raise AssertionError(
            f"the backend of request {key} was not closed within {timeout} s: {self.runs.get(key)}"
        )


class LiveServer:
    """uvicorn serving an app in a background thread."""

    def __init__(self, app: Any) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def __enter__(self) -> Self:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


@pytest.fixture(scope="session")
def recorder() -> Recorder:
    return Recorder(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY))


@pytest.fixture(scope="session")
def server(recorder: Recorder) -> Iterator[LiveServer]:
    with LiveServer(create_app(recorder, tokenizer=VOCABULARY, context_limit=4096)) as live:
        yield live


@pytest.fixture(scope="session")
def openai_client(server: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.url + "/v1", api_key="test-key", max_retries=0, timeout=10) as client:
        yield client


@pytest.fixture(scope="session")
def anthropic_client(server: LiveServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=server.url, api_key="test-key", max_retries=0, timeout=10) as client:
        yield client


@pytest.fixture(params=MODELS)
def model(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def scenario(name: str, test_id: str | None = None) -> dict[str, str]:
    """Headers that pick a script; ``test_id`` also tags the request for the recorder."""
    headers = {"X-Scenario": name}
    if test_id is not None:
        headers["X-Test-Id"] = test_id
    return headers


def new_id() -> str:
    return uuid.uuid4().hex


T = TypeVar("T")


def strict(obj: T) -> T:
    """Check that ``obj`` validates strictly against its own SDK type, and return it.

    The SDKs build response objects without validating them (``construct``), so a wrong type or a missing
    required field in our JSON would pass unnoticed; re-validating the JSON form of the object catches both.
    """
    data = obj.model_dump(mode="json", warnings=False)  # type: ignore[attr-defined]
    type(obj).model_validate(data, strict=True)  # type: ignore[attr-defined]
    return obj
