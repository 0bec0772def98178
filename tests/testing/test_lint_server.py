"""Our example server's answers lint clean: every script of tests/server, every protocol, both model versions,
streamed and not (the server runs on 127.0.0.1)."""

from __future__ import annotations

import pytest

from dscodec.testing import lint
from dscodec.testing.live import send
from tests.server.scripts import SCRIPTS
from tests.testing.conftest import body

pytest.importorskip("httpx")

PROTOCOLS = ("chat_completions", "responses", "messages")
MODELS = ("DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash")
CASES = [
    (protocol, script, model, stream)
    for protocol in PROTOCOLS
    for script in SCRIPTS
    for model in MODELS
    for stream in (True, False)
    if script != "slow" or (model == MODELS[0] and stream)  # the slow script takes seconds; once is enough
]


@pytest.mark.parametrize(("protocol", "script", "model", "stream"), CASES, ids=lambda v: str(v))
def test_the_example_server_lints_clean(
    live_url: str, protocol: str, script: str, model: str, stream: bool
) -> None:
    request = body(protocol, script, model=model, stream=stream)
    exchange = send(live_url, request, protocol=protocol, headers={"X-Scenario": script})  # type: ignore[arg-type]
    assert (exchange.frames is not None) == (stream and exchange.status == 200), exchange.text[:300]
    findings = lint(protocol, exchange.text, request=request)  # type: ignore[arg-type]
    assert findings == [], [str(finding) for finding in findings]
