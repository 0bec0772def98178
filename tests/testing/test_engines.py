"""dscodec.testing.engines: fake vLLM and SGLang engines that answer with queued backend items.

The engines' wire formats are read by dscodec's own engine backends, so the main check is the whole chain: the
example server with a vLLM or SGLang backend in front of a fake engine gives, for any drawn scenario and any
cutting of its ids, the answer dscodec's replay of what the engine sent gives. The rest pins the engine's own
rules: the token budget, special tokens in the text, log probabilities, failures, the queue, bad requests.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dscodec
from dscodec.server import create_app
from dscodec.server.backends import SGLangBackend, VLLMBackend
from dscodec.testing import Failure, Finish, Text, Tokens, Transcript, Usage, compare, lint, replay
from dscodec.testing.engines import FakeEngine, _listener, serve_engine
from dscodec.testing.live import send
from dscodec.testing.strategies import scenarios, token_chunkings
from tests.server.conftest import VOCABULARY, LiveServer

EOS = VOCABULARY.special_id("<｜end▁of▁sentence｜>")
ENCODER = dscodec.PromptEncoder(VOCABULARY)
THINK_END = VOCABULARY.special_id("</think>")
PATHS = {"chat_completions": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}


def ids_of(text: str) -> list[int]:
    return list(VOCABULARY.full.encode(text, add_special_tokens=False).ids)


@dataclass(frozen=True)
class Chain:
    """A fake engine on a local port, and the URL of dscodec's example server in front of it."""

    engine: FakeEngine
    url: str


@pytest.fixture(scope="module", params=["vllm", "sglang", "sglang-incremental"])
def chain(request: pytest.FixtureRequest) -> Iterator[Chain]:
    kind = "vllm" if request.param == "vllm" else "sglang"
    engine = FakeEngine(kind, tokenizer=VOCABULARY, incremental=request.param == "sglang-incremental")
    with serve_engine(engine) as engine_url:
        backend = (VLLMBackend if kind == "vllm" else SGLangBackend)(engine_url)
        with LiveServer(create_app(backend, tokenizer=VOCABULARY, context_limit=8192)) as server:
            yield Chain(engine, server.url)


@pytest.fixture
def engine_url() -> Iterator[tuple[FakeEngine, str]]:
    engine = FakeEngine("vllm", tokenizer=VOCABULARY)
    with serve_engine(engine) as url:
        yield engine, url


def _post(url: str, body: Any) -> httpx.Response:
    return httpx.post(url, content=json.dumps(body).encode(), timeout=10)


def _events(response: httpx.Response) -> list[Any]:
    out = []
    for block in response.text.split("\n\n"):
        if block.startswith("data: "):
            data = block[len("data: ") :]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


# -- the whole chain -------------------------------------------------------------------------------------------


@settings(
    max_examples=max(5, settings.default.max_examples // 3),  # each example is two HTTP exchanges
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(scenario=scenarios(), data=st.data())
def test_a_server_in_front_of_the_fake_engine_answers_as_a_replay_of_what_it_sent(
    chain: Chain, scenario: Any, data: st.DataObject
) -> None:
    ids = ids_of(scenario.output.text) + [EOS]
    chunks = data.draw(token_chunkings(ids, vocabulary=VOCABULARY), label="chunks")
    body = scenario.body
    top = (
        data.draw(st.none() | st.integers(0, 3), label="top_logprobs")
        if scenario.protocol != "messages"  # Messages has no log probabilities
        else None
    )
    if top is None:
        chain.engine.play([Tokens(tuple(chunk)) for chunk in chunks])
    else:
        # Log probabilities through the engine's wire format: the sampled token first among its alternatives.
        asked = (
            {"top_logprobs": top}
            if scenario.protocol == "responses"
            else {"logprobs": True, "top_logprobs": top}
        )
        body = {**body, **asked}
        chain.engine.play([Tokens(tuple(chunk), tuple(_entry(i, top) for i in chunk)) for chunk in chunks])
    exchange = send(chain.url + PATHS[scenario.protocol], body)
    call = chain.engine.calls[-1]
    assert call.prompt == ENCODER.encode(dscodec.convert(scenario.protocol, body)), (
        "the prompt ids the server sent"
    )
    # A server's answer (origin live): its Responses objects say the server stores the response.
    expected = replay(Transcript(scenario.protocol, body, call.sent, origin="live")).transcript
    assert exchange.status == expected.status == 200
    if scenario.body.get("stream") is True:
        # Both are streams of the same ids cut the same way: every event agrees once ids and times are normalised.
        assert exchange.frames is not None and expected.frames is not None
        assert compare(expected.frames, exchange.frames, merge_deltas=True) == []
    else:
        assert exchange.response is not None and expected.response is not None
        assert compare(expected.response, exchange.response) == []
    findings = lint(scenario.protocol, exchange.text, request=body)
    assert [f for f in findings if f.code not in ("GEN003", "GEN005")] == []


def _entry(token_id: int, top: int) -> tuple[float, tuple[tuple[int, float], ...]]:
    """A made-up log probability entry: the token, then ``top - 1`` less likely alternatives (one of them ruled
    out by sampling: minus infinity)."""
    value = -0.25 * (token_id % 4)
    others = [(token_id + 1 + k, value - 1.0 - k) for k in range(max(top - 1, 0))]
    if others:
        others[-1] = (others[-1][0], float("-inf"))
    return value, tuple([(token_id, value), *others][:top])


def test_the_server_gets_the_ids_it_sent_back_cut_at_its_budget(chain: Chain) -> None:
    body = {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 3,
        "thinking": {"type": "disabled"},
        "messages": [{"role": "user", "content": "Count."}],
    }
    chain.engine.play([Text("one two three four five six")])
    answer = _post(chain.url + "/v1/chat/completions", body).json()
    call = chain.engine.calls[-1]
    assert answer["choices"][0]["finish_reason"] == "length"
    assert call.sent[-1] == Finish("length")
    sent_ids = [i for item in call.sent if isinstance(item, Tokens) for i in item.ids]
    assert len(sent_ids) == 3
    assert answer["choices"][0]["message"]["content"] == VOCABULARY.full.decode(sent_ids)
    assert answer["usage"]["prompt_tokens"] == len(call.prompt)


def test_line_separators_in_the_output_reach_the_client(chain: Chain) -> None:
    # Both engines write U+0085, U+2028 and U+2029 raw inside their JSON: they end no line of the event stream.
    text = "a\u2028b\x85c\u2029d"
    body = {
        "model": "DeepSeek-V4-Pro",
        "thinking": {"type": "disabled"},
        "messages": [{"role": "user", "content": "?"}],
    }
    chain.engine.play([Text(text), Tokens((EOS,))])
    response = _post(chain.url + "/v1/chat/completions", body)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == text


def test_a_failure_mid_stream_reaches_the_client_as_the_protocols_error(chain: Chain) -> None:
    body = {"model": "DeepSeek-V4-Pro", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
    chain.engine.play([Tokens(tuple(ids_of("Hello"))), Failure("the GPU fell over")])
    response = _post(chain.url + "/v1/chat/completions", body)
    events = _events(response)
    assert any(isinstance(e, dict) and "error" in e for e in events), events
    assert chain.engine.calls[-1].sent[-1] == Failure("the GPU fell over")


# -- the engine's own rules -------------------------------------------------------------------------------------


def test_vllm_stream_carries_the_fields_asked_for(engine_url: tuple[FakeEngine, str]) -> None:
    engine, url = engine_url
    ids = ids_of("Hi") + [THINK_END] + ids_of("é")  # "é" is one id here; cut below into its own chunk
    engine.play(
        [Usage(cached_tokens=7), Tokens(tuple(ids[:2]), (-0.5, -1.0)), Tokens(tuple(ids[2:])), Finish()]
    )
    body = {
        "prompt": [1, 2, 3],
        "max_tokens": 50,
        "stream": True,
        "stream_options": {"include_usage": True},
        "return_token_ids": True,
        "return_tokens_as_token_ids": True,
        "logprobs": 0,
        "skip_special_tokens": False,
    }
    events = _events(_post(url + "/v1/completions", body))
    assert events[-1] == "[DONE]"
    chunks = [e for e in events[:-1] if e["choices"]]
    assert chunks[0]["choices"][0]["prompt_token_ids"] == [1, 2, 3]
    assert [i for c in chunks for i in c["choices"][0]["token_ids"]] == ids
    assert "".join(c["choices"][0]["text"] for c in chunks) == VOCABULARY.full.decode(
        ids, skip_special_tokens=False
    )
    assert chunks[0]["choices"][0]["logprobs"]["token_logprobs"] == [-0.5, -1.0]
    assert chunks[0]["choices"][0]["logprobs"]["tokens"] == [f"token_id:{i}" for i in ids[:2]]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, "stop"]  # on the last ids' chunk
    usage = events[-2]["usage"]
    assert usage == {
        "prompt_tokens": 3,
        "completion_tokens": len(ids),
        "total_tokens": 3 + len(ids),
        "prompt_tokens_details": {"cached_tokens": 7},
    }


def test_vllm_leaves_special_tokens_out_of_the_text_by_default(engine_url: tuple[FakeEngine, str]) -> None:
    engine, url = engine_url
    ids = ids_of("a") + [THINK_END] + ids_of("b")
    engine.play([Tokens(tuple(ids))])
    answer = _post(url + "/v1/completions", {"prompt": [1], "max_tokens": 10}).json()
    assert answer["choices"][0]["text"] == "ab"
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert "token_ids" not in answer["choices"][0]


def test_vllm_applies_its_default_budget(engine_url: tuple[FakeEngine, str]) -> None:
    engine, url = engine_url
    engine.play([Tokens(tuple(range(1000, 1040)))])
    answer = _post(url + "/v1/completions", {"prompt": [1], "return_token_ids": True}).json()
    assert len(answer["choices"][0]["token_ids"]) == 16
    assert answer["choices"][0]["finish_reason"] == "length"


def test_output_that_fills_the_budget_exactly_keeps_its_own_finish(
    engine_url: tuple[FakeEngine, str],
) -> None:
    engine, url = engine_url
    engine.play([Tokens((1000, 1001, EOS)), Finish("stop")])
    engine.play([Tokens((1000, 1001, 1002)), Tokens((1003,))])
    first = _post(url + "/v1/completions", {"prompt": [1], "max_tokens": 3}).json()
    second = _post(url + "/v1/completions", {"prompt": [1], "max_tokens": 3}).json()
    assert first["choices"][0]["finish_reason"] == "stop"
    assert second["choices"][0]["finish_reason"] == "length"
    assert engine.calls[-1].sent[1:] == [Tokens((1000, 1001, 1002)), Finish("length")]


def test_a_character_split_between_chunks_comes_whole() -> None:
    engine = FakeEngine("sglang", tokenizer=VOCABULARY, incremental=True)
    byte_ids = ids_of("\U0001f600")  # one emoji, several byte-level ids
    assert len(byte_ids) > 1
    engine.play([Tokens((byte_id,)) for byte_id in byte_ids])
    with serve_engine(engine) as url:
        body = {"input_ids": [1], "stream": True, "sampling_params": {"skip_special_tokens": False}}
        events = _events(_post(url + "/generate", body))
    texts = [e["text"] for e in events[:-1]]
    assert "".join(texts) == "\U0001f600"
    assert all(t in ("", "\U0001f600") for t in texts)
    assert [i for e in events[:-1] for i in e["output_ids"]] == byte_ids
    assert events[-2]["meta_info"]["finish_reason"] == {"type": "stop", "matched": None}


def test_sglang_streams_everything_so_far_with_log_probabilities() -> None:
    engine = FakeEngine("sglang", tokenizer=VOCABULARY)
    ids = (*ids_of("Hi"), EOS)
    entries = tuple((-0.25 * k, ((1000 + k, -2.0), (2000 + k, float("-inf")))) for k in range(len(ids)))
    engine.play([Tokens(ids[:1], entries[:1]), Tokens(ids[1:], entries[1:])])
    with serve_engine(engine) as url:
        body = {"input_ids": [5, 6], "stream": True, "return_logprob": True, "top_logprobs_num": 2}
        events = _events(_post(url + "/generate", body))
    last = events[-2]
    assert last["output_ids"] == list(ids)
    assert last["meta_info"]["finish_reason"] == {"type": "stop", "matched": EOS}
    assert last["meta_info"]["prompt_tokens"] == 2
    assert last["meta_info"]["completion_tokens"] == len(ids)
    assert [e[0] for e in last["meta_info"]["output_token_logprobs"]] == [-0.25 * k for k in range(len(ids))]
    assert last["meta_info"]["output_top_logprobs"][0] == [[-2.0, 1000, None], [None, 2000, None]]


def test_the_queue_and_the_record(engine_url: tuple[FakeEngine, str]) -> None:
    engine, url = engine_url
    assert httpx.get(url + "/health", timeout=10).status_code == 200
    assert httpx.get(url + "/v1/models", timeout=10).json()["data"][0]["id"] == engine.model
    response = _post(url + "/v1/completions", {"prompt": [1], "max_tokens": 5})
    assert response.status_code == 500
    assert "no reply was queued" in response.json()["error"]["message"]
    engine.play(Transcript("chat_completions", {}, [Text("x")]))
    engine.play([Text("y")])
    assert engine.pending == 2
    first = _post(url + "/v1/completions", {"prompt": [1], "max_tokens": 5}).json()
    second = _post(url + "/v1/completions", {"prompt": [2, 3], "max_tokens": 5}).json()
    assert (first["choices"][0]["text"], second["choices"][0]["text"]) == ("x", "y")
    assert [call.prompt for call in engine.calls] == [[1], [1], [2, 3]]
    assert engine.calls[0].reply is None and engine.calls[1].finished


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v1/completions", b"not json", 400),
        ("/v1/completions", b'{"prompt": "text"}', 400),
        ("/v1/completions", b'{"prompt": [1, -2]}', 400),
        ("/v1/completions", b'{"prompt": [1], "max_tokens": "5"}', 400),
        ("/v1/completions", b"[]", 400),
        # Fields the fake reads, of another JSON type than the engine's API gives them.
        ("/v1/completions", b'{"prompt": [1], "stream": true, "stream_options": -1}', 400),
        ("/v1/completions", b'{"prompt": [1], "stream_options": {"include_usage": "yes"}}', 400),
        ("/v1/completions", b'{"prompt": [1], "logprobs": -1}', 400),
        ("/v1/completions", b'{"prompt": [1], "logprobs": 1.5}', 400),
        ("/v1/completions", b'{"prompt": [1], "stream": "true"}', 400),
        ("/v1/completions", b'{"prompt": [1], "return_token_ids": 1}', 400),
        ("/v1/completions", b'{"prompt": [1], "skip_special_tokens": []}', 400),
        ("/generate", b'{"input_ids": [1]}', 404),
        ("/health", b"", 405),
    ],
)
def test_bad_requests_get_the_engines_error(
    engine_url: tuple[FakeEngine, str], path: str, body: bytes, status: int
) -> None:
    engine, url = engine_url
    response = httpx.post(url + path, content=body, timeout=10)
    assert response.status_code == status
    assert isinstance(response.json()["error"]["message"], str)
    assert engine.calls == []


@pytest.mark.parametrize(
    "body",
    [
        {"sampling_params": []},
        {"sampling_params": {"skip_special_tokens": "no"}},
        {"sampling_params": {"max_new_tokens": 1.5}},
        {"return_logprob": 1},
        {"top_logprobs_num": -1},
        {"stream": "yes"},
    ],
)
def test_bad_sglang_requests_get_its_error(body: dict[str, Any]) -> None:
    engine = FakeEngine("sglang", tokenizer=VOCABULARY)
    engine.play([Text("x")])
    with serve_engine(engine) as url:
        response = _post(url + "/generate", {"input_ids": [1], **body})
    assert response.status_code == 400 and isinstance(response.json()["error"]["message"], str)
    assert engine.calls == [] and engine.pending == 1


def test_bad_replies_are_refused_when_queued() -> None:
    engine = FakeEngine("vllm")
    with pytest.raises(TypeError, match="reply item 0 must be a backend item"):
        engine.play(["text"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="content_filter"):
        engine.play([Finish("content_filter")])
    with pytest.raises(ValueError, match=r"Tokens.ids\[1\] must be a token id from 0"):
        engine.play([Tokens((1, -1))])  # refused when the item is made
    with pytest.raises(ValueError, match="one log probability entry per id"):
        engine.play([Tokens((1, 2), (-1.0,))])
    with pytest.raises(ValueError, match="kind must be"):
        FakeEngine("tgi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="SGLang option"):
        FakeEngine("vllm", incremental=True)
    # Fields of the wrong type fail when queued, not while a request is being answered.
    with pytest.raises(TypeError, match="backend items or a Transcript"):
        engine.play(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="backend items or a Transcript"):
        engine.play("Hello")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Text.text must be a str"):
        engine.play([Text(5)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Failure.message must be a str"):
        engine.play([Failure(None)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cached_tokens"):
        engine.play([Usage(cached_tokens=-1)])
    with pytest.raises(ValueError, match="Finish.reason must be .*'eos'"):
        engine.play([Finish("eos")])  # type: ignore[arg-type]
    for entry in ("x", (0.5, ((1, "x"),)), (0.5, ((-1, 0.1),)), (True, ()), (0.5,)):
        with pytest.raises((TypeError, ValueError), match="log probability entry|token id must be"):
            engine.play([Tokens((1,), (entry,))])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="responder must be callable"):
        FakeEngine("vllm", responder=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="model must be a str"):
        FakeEngine("vllm", model=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="incremental must be a bool"):
        FakeEngine("sglang", incremental=1)  # type: ignore[arg-type]
    with pytest.raises(dscodec.TokenizerError):
        FakeEngine("vllm", tokenizer="/no/such/tokenizer.json")
    assert engine.pending == 0


@pytest.mark.parametrize("kind", ["vllm", "sglang"])
def test_an_empty_output_still_finishes(kind: str) -> None:
    engine = FakeEngine(kind, tokenizer=VOCABULARY)  # type: ignore[arg-type]
    engine.play([Finish("stop")])
    engine.play([Finish(None)])
    path, body = ("/v1/completions", {"prompt": [1]}) if kind == "vllm" else ("/generate", {"input_ids": [1]})
    with serve_engine(engine) as url:
        finished = _events(_post(url + path, {**body, "stream": True}))
        unfinished = _events(_post(url + path, {**body, "stream": True}))
    assert finished[-1] == unfinished[-1] == "[DONE]"
    if kind == "vllm":
        assert [(c["choices"][0]["text"], c["choices"][0]["finish_reason"]) for c in finished[:-1]] == [
            ("", "stop")
        ]
    else:
        assert [(e["output_ids"], e["meta_info"]["finish_reason"]) for e in finished[:-1]] == [
            ([], {"type": "stop", "matched": None})
        ]
    assert unfinished == ["[DONE]"]  # a broken engine: the stream ends without a finish


def test_a_responder_answers_requests_that_come_at_once() -> None:
    """With a responder the engine answers each request by its own prompt, however many run together."""

    def respond(body: dict[str, Any], prompt: list[int]) -> list[Any]:
        return [Text(f"{len(prompt)} ids"), Tokens((EOS,))]

    engine = FakeEngine("sglang", tokenizer=VOCABULARY, responder=respond)
    with serve_engine(engine) as engine_url:
        app = create_app(SGLangBackend(engine_url), tokenizer=VOCABULARY, context_limit=8192)
        with LiveServer(app) as server:

            def ask(words: int) -> tuple[str, int]:
                body = {
                    "model": "DeepSeek-V4-Pro",
                    "thinking": {"type": "disabled"},
                    "messages": [{"role": "user", "content": " ".join(["word"] * words)}],
                }
                answer = _post(server.url + "/v1/chat/completions", body).json()
                return answer["choices"][0]["message"]["content"], answer["usage"]["prompt_tokens"]

            with ThreadPoolExecutor(8) as pool:
                answers = list(pool.map(ask, range(1, 17)))
    assert [content for content, _ in answers] == [f"{prompt} ids" for _, prompt in answers]
    assert len({prompt for _, prompt in answers}) == 16
    assert len(engine.calls) == 16 and engine.pending == 0


def test_a_responder_that_fails_is_the_engines_500() -> None:
    def respond(body: dict[str, Any], prompt: list[int]) -> list[Any]:
        raise LookupError("no script for this prompt")

    engine = FakeEngine("vllm", tokenizer=VOCABULARY, responder=respond)
    engine.play([Text("queued first")])
    with serve_engine(engine) as url:
        first = _post(url + "/v1/completions", {"prompt": [1], "max_tokens": 9})
        second = _post(url + "/v1/completions", {"prompt": [1], "max_tokens": 9})
    assert first.json()["choices"][0]["text"] == "queued first"
    assert second.status_code == 500
    assert "LookupError: no script for this prompt" in second.json()["error"]["message"]
    assert engine.calls[1].reply is None


def test_a_client_that_leaves_is_recorded_and_the_stream_stops() -> None:
    engine = FakeEngine("vllm", tokenizer=VOCABULARY, delay=0.01)
    engine.play([Tokens((1000 + k,)) for k in range(200)])
    with serve_engine(engine) as url:
        body = {"prompt": [1], "max_tokens": 500, "stream": True}
        with httpx.stream("POST", url + "/v1/completions", json=body, timeout=10) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    break
        deadline = time.monotonic() + 5
        while not engine.calls[-1].disconnected and time.monotonic() < deadline:
            time.sleep(0.01)
    call = engine.calls[-1]
    assert call.disconnected and not call.finished
    for bad in (-1, 3601, float("inf"), float("nan"), True, "1"):
        with pytest.raises(ValueError, match="delay must be a number of seconds from 0 to 3600"):
            FakeEngine("vllm", delay=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["vllm", "sglang"])
def test_a_client_that_reads_the_whole_stream_did_not_disconnect(kind: str) -> None:
    engine = FakeEngine(kind, tokenizer=VOCABULARY)  # type: ignore[arg-type]
    path = "/v1/completions" if kind == "vllm" else "/generate"
    body: dict[str, Any] = (
        {"prompt": [1], "max_tokens": 9, "stream": True}
        if kind == "vllm"
        else {"input_ids": [1], "sampling_params": {"max_new_tokens": 9}, "stream": True}
    )
    with serve_engine(engine) as url:
        for _ in range(5):
            engine.play([Tokens((1000,)), Tokens((1001,)), Finish("stop")])
            with httpx.stream("POST", url + path, json=body, timeout=10) as response:
                lines = list(response.iter_lines())
            assert lines[-1] == "data: [DONE]" or lines[-2] == "data: [DONE]"
            deadline = time.monotonic() + 2
            while not engine.calls[-1].finished and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.05)
            call = engine.calls[-1]
            assert call.finished and not call.disconnected


@pytest.mark.parametrize(("kind", "key"), [("vllm", "prompt"), ("sglang", "input_ids")])
def test_a_prompt_id_past_the_id_range_gets_the_engines_400(kind: str, key: str) -> None:
    """Token ids run from 0 to 2**32 - 1: a prompt id past them used to be answered 200."""
    engine = FakeEngine(kind, tokenizer=VOCABULARY)  # type: ignore[arg-type]
    engine.play([Text("x")])
    path = "/v1/completions" if kind == "vllm" else "/generate"
    with serve_engine(engine) as url:
        response = _post(url + path, {key: [1, 2**32]})
        assert response.status_code == 400 and "from 0 to 2**32 - 1" in response.json()["error"]["message"]
        assert engine.calls == [] and engine.pending == 1
        assert _post(url + path, {key: [1, 2**32 - 1]}).status_code == 200


def test_serve_engine_checks_its_arguments() -> None:
    """What was not a FakeEngine, a host that does not resolve, a port out of range or in use used to fail with
    a raw socket error (or an OverflowError), or not at all until the first request."""
    import socket

    engine = FakeEngine("vllm", tokenizer=VOCABULARY)
    cases: list[tuple[Any, dict[str, Any], type[Exception], str]] = [
        ("vllm", {}, TypeError, "engine must be a FakeEngine, not str"),
        (None, {}, TypeError, "engine must be a FakeEngine, not NoneType"),
        (engine, {"port": -1}, ValueError, "port must be from 0 to 65535"),
        (engine, {"port": 65536}, ValueError, "port must be from 0 to 65535"),
        (engine, {"port": "80"}, TypeError, "port must be an int, not str"),
        (engine, {"host": 5}, TypeError, "host must be a str, not int"),
        (engine, {"host": "no-such-host.invalid"}, ValueError, "host 'no-such-host.invalid' is no address"),
    ]
    for what, options, error, message in cases:
        with pytest.raises(error, match=message), serve_engine(what, **options):
            pass
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        expected = f"the fake engine cannot listen on 127.0.0.1:{port}: "
        with pytest.raises(RuntimeError, match=expected), serve_engine(engine, port=port):
            pass


def test_the_fake_engines_connections_send_without_waiting_for_acknowledgements() -> None:
    """The socket :func:`serve_engine` listens on gives connections that asyncio (uvicorn's loop) sets to send at
    once (``TCP_NODELAY``): with Nagle's algorithm on, an answer's second write waited for the client's delayed
    acknowledgement, about 40 ms a request."""

    async def accepted_no_delay() -> int:
        flags: list[int] = []

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            flags.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        listener = _listener("127.0.0.1", 0)
        server = await asyncio.start_server(handle, sock=listener)
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
            assert await reader.read() == b""
            writer.close()
        assert len(flags) == 1
        return flags[0]

    assert asyncio.run(accepted_no_delay()) != 0
