"""The vLLM and SGLang backends on their own, against the local stand-ins (tests/server/standins.py)."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

import dscodec
from dscodec.prompt.dialects import V4, V41
from dscodec.server import BackendRequest, Finish, KeepAlive, PromptUsage, TokenChunk
from dscodec.server.backends import (
    EngineBackend,
    EngineBusy,
    EngineError,
    EngineRejected,
    EngineUnavailable,
    SGLangBackend,
    VLLMBackend,
    dsml_tool_grammar,
)
from dscodec.server.backends._engine import engine_failure, retry_after
from tests.server.conftest import VOCABULARY, LiveServer, new_id
from tests.server.standins import EOS, SCRIPTS, StandIn, wait_for

ENGINES = ["vllm", "sglang", "sglang-incremental"]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Iterator[tuple[str, StandIn, LiveServer]]:
    name = str(request.param)
    stand_in = StandIn(
        "vllm" if name == "vllm" else "sglang", incremental=name.endswith("incremental"), chunk=2
    )
    with LiveServer(stand_in) as live:
        yield name, stand_in, live


def make_backend(name: str, url: str, **options: Any) -> EngineBackend:
    return VLLMBackend(url, **options) if name == "vllm" else SGLangBackend(url, **options)


def job(body: dict[str, Any], protocol: str = "chat_completions") -> BackendRequest:
    """What the server hands a backend for ``body``."""
    request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
    prompt = dscodec.render(request)
    ids = dscodec.PromptEncoder(VOCABULARY).encode_rendered(prompt)
    budget = request.resolve_max_tokens(len(ids), 4096)
    return BackendRequest(request=request, prompt=prompt, token_ids=ids, max_tokens=budget, headers={})


def chat(text: str, **more: Any) -> dict[str, Any]:
    return {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": text}], **more}


def tagged(body: dict[str, Any], key: str) -> dict[str, Any]:
    """``body`` with ``[id:key]`` in front of its first message."""
    first = {**body["messages"][0], "content": f"[id:{key}] " + body["messages"][0]["content"]}
    return {**body, "messages": [first, *body["messages"][1:]]}


def run(backend: EngineBackend, work: BackendRequest, take: int | None = None) -> list[Any]:
    """The backend's outputs (the first ``take`` of them, then the iterator is closed)."""

    async def go() -> list[Any]:
        outputs = backend(work)
        items: list[Any] = []
        try:
            async for item in outputs:
                items.append(item)
                if take is not None and len(items) >= take:
                    break
        finally:
            await outputs.aclose()
            await backend.aclose()
        return items

    return asyncio.run(go())


def ids_of(items: list[Any]) -> list[int]:
    return [i for item in items if isinstance(item, TokenChunk) for i in item.ids]


def expected_ids(text: str) -> list[int]:
    return list(VOCABULARY.full.encode(text, add_special_tokens=False).ids) + [EOS]


def test_a_streamed_generation(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, stand_in, live = engine
    key = new_id()
    work = job(chat(f"[script:reasoning][id:{key}] What is 17 × 3?", stream=True))
    items = run(make_backend(name, live.url), work)
    script = SCRIPTS["reasoning"]
    assert isinstance(items[0], PromptUsage) and items[0].prompt_tokens == len(work.token_ids)
    # SGLang reports cached tokens in every event; vLLM only at the end of the stream, too late for a stream.
    assert items[0].cached_tokens == (0 if name == "vllm" else script.cached_tokens)
    assert ids_of(items) == expected_ids(script.reasoning + "</think>" + script.output)
    assert items[-1] == Finish("stop")
    assert sum(isinstance(item, PromptUsage) for item in items) == 1
    # The stand-in marks the run finished after its last write, in the server's thread: wait for it.
    wait_for(lambda: stand_in.runs[key].finished)


def test_a_complete_response_waits_for_the_usage(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, _, live = engine
    work = job(chat("[script:reasoning] What is 17 × 3?"))
    items = run(make_backend(name, live.url), work)
    # vLLM's outputs wait for its usage, at the stream's end: meanwhile each chunk read is a KeepAlive.
    waiting = [item for item in items if isinstance(item, KeepAlive)]
    assert (len(waiting) > 1) if name == "vllm" else not waiting
    items = [item for item in items if not isinstance(item, KeepAlive)]
    assert items[0] == PromptUsage(prompt_tokens=len(work.token_ids), cached_tokens=8)
    assert items[-1] == Finish("stop")


def test_vllm_complete_outputs_come_with_the_usage_chunk_without_waiting_for_the_end() -> None:
    from dscodec.server.backends.vllm import _Reader

    reader = _Reader(84, buffered=True, top=0)
    chunk = {"choices": [{"index": 0, "token_ids": [5, 6], "finish_reason": None}]}
    assert reader.feed(chunk) == [KeepAlive()]
    finished = reader.feed({"choices": [{"index": 0, "token_ids": [7], "finish_reason": "stop"}]})
    assert [type(item).__name__ for item in finished] == [
        "_Finished"
    ]  # the answer, should the usage not come
    assert not reader.done
    usage = {"prompt_tokens": 90, "prompt_tokens_details": {"cached_tokens": 64}}
    assert reader.feed({"choices": [], "usage": usage}) == [
        PromptUsage(prompt_tokens=90, cached_tokens=64),
        TokenChunk([5, 6], None),
        TokenChunk([7], None),
        Finish("stop"),
    ]
    assert reader.done  # the engine's [DONE] (or its closing the stream) is not waited for
    # the usage in the finish's own chunk
    reader = _Reader(84, buffered=True, top=0)
    both = {"choices": [{"index": 0, "token_ids": [5], "finish_reason": "length"}], "usage": usage}
    assert reader.feed(both) == [PromptUsage(90, 64), TokenChunk([5], None), Finish("length")]
    assert reader.done


def test_request_fields(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, stand_in, live = engine
    key = new_id()
    # Without thinking: in thinking mode the converter fixes temperature and top_p (behavior.md#tools-and-tool-choice).
    body = chat(f"[id:{key}] Hi", temperature=0.3, top_p=0.9, seed=7, max_tokens=50, stop=["END"])
    work = job({**body, "thinking": {"type": "disabled"}})
    run(make_backend(name, live.url, extra={"priority": 1}), work)
    payload = stand_in.runs[key].payload
    if name == "vllm":
        assert payload["prompt"] == list(work.token_ids)
        assert payload["stream"] is True and payload["stream_options"] == {"include_usage": True}
        assert payload["return_token_ids"] is True and payload["skip_special_tokens"] is False
        assert payload["include_stop_str_in_output"] is True and payload["add_special_tokens"] is False
        assert (payload["max_tokens"], payload["seed"]) == (50, 7)
        assert (payload["temperature"], payload["top_p"]) == pytest.approx((0.3, 0.9))
        assert "model" not in payload and "logprobs" not in payload
    else:
        assert payload["input_ids"] == list(work.token_ids) and payload["stream"] is True
        assert payload["sampling_params"] == {
            "max_new_tokens": 50,
            "temperature": pytest.approx(0.3),
            "top_p": pytest.approx(0.9),
            "sampling_seed": 7,
            "skip_special_tokens": False,
            "no_stop_trim": True,
        }
    # dscodec applies stop sequences itself; the engine never sees them.
    assert "stop" not in payload and "stop" not in payload.get("sampling_params", {})
    assert payload["priority"] == 1


def test_extra_fields_are_defaults_the_request_replaces(engine: tuple[str, StandIn, LiveServer]) -> None:
    """A field dscodec sets for some requests only (here the seed in vLLM's body, the log probabilities in
    SGLang's) may come in ``extra``: it holds when the request does not set it, the request's value wins."""
    name, stand_in, live = engine
    field, default = ("seed", 99) if name == "vllm" else ("return_logprob", "default")
    backend = make_backend(name, live.url, extra={field: default})
    for seeded in (False, True):
        key = new_id()
        extra = {"seed": 7} if name == "vllm" and seeded else {}
        extra |= {"logprobs": True} if name != "vllm" and seeded else {}
        run(backend, job({**chat(f"[id:{key}] Hi", **extra), "thinking": {"type": "disabled"}}))
        sent = stand_in.runs[key].payload[field]
        assert sent == ((7 if name == "vllm" else True) if seeded else default)


@pytest.mark.parametrize(
    ("arguments", "error", "names"),
    [
        ({"base_url": 5}, TypeError, "base_url"),
        ({"base_url": None}, TypeError, "base_url"),
        ({"base_url": ""}, ValueError, "base_url"),
        ({"base_url": "127.0.0.1:8000"}, ValueError, "base_url"),
        ({"base_url": "ftp://engine"}, ValueError, "base_url"),
        ({"api_key": 5}, TypeError, "api_key"),
        ({"client": "client"}, TypeError, "client"),
        ({"timeout": "30"}, TypeError, "timeout"),
        ({"constraints": "no"}, TypeError, "constraints"),
        ({"constraints": 0}, TypeError, "constraints"),
        ({"extra": [("priority", 1)]}, TypeError, "extra"),
        ({"extra": {"stream": False}}, ValueError, "extra cannot set stream"),
    ],
)
@pytest.mark.parametrize("name", ENGINES)
def test_bad_backend_arguments_are_named(
    name: str, arguments: dict[str, Any], error: type[Exception], names: str
) -> None:
    given = dict(arguments)  # the parameter's dict is shared by the engines' runs
    url = given.pop("base_url", "http://127.0.0.1:8000")
    with pytest.raises(error, match=names):
        make_backend(name, url, **given)


def test_fixed_fields_of_each_engine() -> None:
    with pytest.raises(ValueError, match="extra cannot set max_tokens, prompt"):
        VLLMBackend("http://engine", extra={"prompt": [1], "max_tokens": 5, "priority": 1})
    with pytest.raises(ValueError, match="extra cannot set sampling_params"):
        SGLangBackend("http://engine", extra={"sampling_params": {"top_k": 5}})
    with pytest.raises(TypeError, match="model"):
        VLLMBackend("http://engine", model=5)  # type: ignore[arg-type]
    assert VLLMBackend("https://engine:8000/", timeout=5)._timeout.read == 5


def test_both_backends_name_every_option_in_their_signature() -> None:
    """Type checkers see each option of both backends (none hides behind ``**options``)."""
    for backend in (VLLMBackend, SGLangBackend):
        parameters = inspect.signature(backend).parameters
        assert {"api_key", "client", "timeout", "constraints", "extra"} <= set(parameters)
        assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    assert VLLMBackend("http://engine", api_key="k", constraints=False).headers["authorization"] == "Bearer k"


def test_the_served_model_name_goes_to_vllm() -> None:
    stand_in = StandIn("vllm")
    with LiveServer(stand_in) as live:
        run(VLLMBackend(live.url, model="deepseek-v4"), job(chat("[id:m] Hi")))
    assert stand_in.runs["m"].payload["model"] == "deepseek-v4"


def test_a_length_finish(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, _, live = engine
    items = run(make_backend(name, live.url), job(chat("[script:long] Go", max_tokens=5, stream=True)))
    assert len(ids_of(items)) == 5 and items[-1] == Finish("length")


@pytest.mark.parametrize("top", [None, 3])
def test_logprobs(engine: tuple[str, StandIn, LiveServer], top: int | None) -> None:
    name, stand_in, live = engine
    key = new_id()
    more: dict[str, Any] = {"logprobs": True, "stream": True}
    if top is not None:
        more["top_logprobs"] = top
    items = run(make_backend(name, live.url), job(chat(f"[id:{key}] Hi", **more)))
    payload = stand_in.runs[key].payload
    if name == "vllm":
        assert payload["logprobs"] == (top or 0) and payload["return_tokens_as_token_ids"] is True
    else:
        assert payload["return_logprob"] is True and payload["top_logprobs_num"] == (top or 0)
    chunks = [item for item in items if isinstance(item, TokenChunk)]
    assert chunks and all(
        chunk.logprobs is not None and len(chunk.logprobs) == len(chunk.ids) for chunk in chunks
    )
    entry = chunks[0].logprobs[0]  # type: ignore[index]
    if top is None:
        assert isinstance(entry, float)
    else:
        assert isinstance(entry, tuple) and len(entry[1]) == top
        logprobs = [lp for _, lp in entry[1]]
        assert logprobs == sorted(logprobs, reverse=True)


def test_constraints(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, stand_in, live = engine
    backend = make_backend(name, live.url)
    nothink = {"thinking": {"type": "disabled"}}
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    cases: dict[str, dict[str, Any]] = {
        "schema": chat(
            "[script:json] weather",
            response_format={"type": "json_schema", "json_schema": {"name": "w", "schema": schema}},
            **nothink,
        ),
        "object": chat("[script:json] Reply in JSON", response_format={"type": "json_object"}, **nothink),
        "required": chat(
            "[script:required] weather?", tools=[WEATHER_TOOL], tool_choice="required", **nothink
        ),
        "auto": chat("[script:tool] weather?", tools=[WEATHER_TOOL]),
        "regex": chat(
            "[script:plain] Shout", response_format={"type": "regex", "regex": "[A-Z !]+"}, **nothink
        ),
        "thinking": chat(
            "[script:json] weather",
            response_format={"type": "json_schema", "json_schema": {"name": "w", "schema": schema}},
        ),
    }
    sent = {}
    for case, body in cases.items():
        key = new_id()
        run(backend, job(tagged(body, key)))
        sent[case] = stand_in.runs[key].payload
    grammar = dsml_tool_grammar(
        job(cases["required"]).request.inference_options.output_constraint.schema,  # type: ignore[union-attr]
        V4,
    )
    if name == "vllm":
        assert sent["schema"]["structured_outputs"] == {
            "json": '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'
        }
        assert sent["object"]["structured_outputs"] == {"json_object": True}
        assert sent["required"]["structured_outputs"] == {"grammar": grammar}
        assert "structured_outputs" not in sent["auto"]
        assert sent["regex"]["structured_outputs"] == {"regex": "[A-Z !]+"}
        assert "structured_outputs" in sent["thinking"]
    else:
        assert (
            sent["schema"]["sampling_params"]["json_schema"]
            == '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'
        )
        assert sent["object"]["sampling_params"]["json_schema"] == '{"type": "object"}'
        assert sent["required"]["sampling_params"]["ebnf"] == grammar
        assert not {"json_schema", "regex", "ebnf"} & set(sent["auto"]["sampling_params"])
        assert sent["regex"]["sampling_params"]["regex"] == "[A-Z !]+"
        assert "require_reasoning" not in sent["schema"] and sent["thinking"]["require_reasoning"] is True
    # Constraints can be switched off.
    key = new_id()
    run(make_backend(name, live.url, constraints=False), job(tagged(cases["object"], key)))
    assert "structured_outputs" not in stand_in.runs[key].payload
    assert "json_schema" not in stand_in.runs[key].payload.get("sampling_params", {})


def test_required_tool_grammar_follows_the_dialect() -> None:
    tools = (
        '[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{}}}}}]'
    )
    v4 = dsml_tool_grammar(tools, V4)
    v41 = dsml_tool_grammar(tools, V41)
    assert '"</｜DSML｜tool_calls>"' in v4 and '"<｜DSML｜invoke name=\\"f\\">\\n" arg0* ' in v4
    assert '"</｜DSML｜ calls>"' in v41 and '( "\\n" | arg0+ )' in v41


def test_grammar_is_accepted_by_xgrammar() -> None:
    """Only where XGrammar (which both engines use) is installed: it parses the grammar and accepts DSML."""
    xgrammar = pytest.importorskip("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    request = job(
        chat("weather?", tools=[WEATHER_TOOL], tool_choice="required", thinking={"type": "disabled"})
    ).request
    grammar = xgrammar.Grammar.from_ebnf(
        dsml_tool_grammar(
            request.inference_options.output_constraint.schema,  # type: ignore[union-attr]
            V4,
        )
    )
    assert _is_grammar_accept_string(grammar, SCRIPTS["required"].output)


def test_closing_the_backend_cancels_the_engine_request(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, stand_in, live = engine
    key = new_id()
    items = run(make_backend(name, live.url), job(chat(f"[script:slow][id:{key}] Go", stream=True)), take=3)
    assert len(items) == 3
    record = stand_in.runs[key]
    wait_for(lambda: record.cancelled)
    assert not record.finished and record.sent < record.total


def test_an_engine_refusal_is_a_400(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, _, live = engine
    with pytest.raises(EngineRejected) as refused:
        run(make_backend(name, live.url), job(chat("[script:reject] Hi")))
    assert refused.value.status_code == 400 and "maximum context length" in refused.value.message


def test_an_engine_failure_mid_stream_is_a_502(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, _, live = engine
    items: list[Any] = []

    async def go() -> None:
        backend = make_backend(name, live.url)
        try:
            async for item in backend(job(chat("[script:midfail] Hi", stream=True))):
                items.append(item)
        finally:
            await backend.aclose()

    with pytest.raises(EngineError) as failed:
        asyncio.run(go())
    assert failed.value.status_code == 502 and ids_of(items)


def test_an_unreachable_engine_is_a_502() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(EngineError) as failed:
        run(VLLMBackend(f"http://127.0.0.1:{port}"), job(chat("Hi")))
    assert "could not" in failed.value.message or "failed" in failed.value.message


def test_health(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, _, live = engine

    async def go() -> None:
        backend = make_backend(name, live.url)
        await backend.health()
        await backend.aclose()

    asyncio.run(go())


@pytest.mark.parametrize(
    ("status", "body", "kind", "code"),
    [
        (400, b'{"error": {"message": "bad regex", "code": 400}}', EngineRejected, 400),
        (
            400,
            b'{"object": "error", "message": "old shape", "type": "BadRequestError", "code": 400}',
            EngineRejected,
            400,
        ),
        (422, b'{"detail": [{"msg": "field required"}]}', EngineRejected, 400),
        (429, b"slow down", None, 429),
        (503, b"", None, 503),
        (404, b'{"error": {"message": "The model `x` does not exist."}}', EngineError, 502),
        (500, b"boom", EngineError, 502),
    ],
)
def test_engine_status_mapping(status: int, body: bytes, kind: type | None, code: int) -> None:
    error = engine_failure("vLLM", status, body)
    assert error.status_code == code
    if kind is not None:
        assert isinstance(error, kind)


@pytest.mark.parametrize(
    "token", ["token_id:²", "token_id:١٢", "token_id:", "token_id:-1", "12", None, "token_id:" + "9" * 5000]
)
def test_a_vllm_logprob_token_that_is_no_id_is_an_engine_error(token: object) -> None:
    # ASCII digits only: "²" and Arabic-Indic digits are digits to str.isdigit, not ids.
    from dscodec.server.backends._engine import EngineError
    from dscodec.server.backends.vllm import _token_id

    with pytest.raises(EngineError):
        _token_id(token)
    assert _token_id("token_id:128799") == 128799


def test_a_null_log_probability_is_minus_infinity() -> None:
    """An engine whose JSON writer cannot write ``-inf`` writes ``null`` (SGLang's orjson does, for a token its
    sampling ruled out): that is the lowest log probability, not a missing one, so no entry of the chunk is lost
    (the stream processor writes it as -9999.0)."""
    from dscodec.server.backends.sglang import _Reader
    from dscodec.server.backends.vllm import _logprobs

    vllm = {
        "tokens": ["token_id:5", "token_id:6"],
        "token_logprobs": [None, -0.5],
        "top_logprobs": [{"token_id:5": None, "token_id:7": -0.1}, {"token_id:6": -0.5}],
    }
    assert _logprobs(vllm, 2, 0) == [-math.inf, -0.5]
    assert _logprobs(vllm, 2, 2) == [(-math.inf, [(7, -0.1), (5, -math.inf)]), (-0.5, [(6, -0.5)])]
    meta = {
        "output_token_logprobs": [[None, 5, None], [-0.5, 6, None]],
        "output_top_logprobs": [[[-0.1, 7, None], [None, 5, None]], [[-0.5, 6, None]]],
    }
    assert _Reader(logprobs=True, top=0)._logprobs(meta, 0, 2) == [-math.inf, -0.5]
    assert _Reader(logprobs=True, top=2)._logprobs(meta, 0, 2) == [
        (-math.inf, [(7, -0.1), (5, -math.inf)]),
        (-0.5, [(6, -0.5)]),
    ]


@pytest.mark.parametrize("bad", ["-0.5", True, [], {"logprob": -0.5}])
def test_a_log_probability_that_is_no_number_is_an_engine_error(bad: object) -> None:
    from dscodec.server.backends._engine import EngineError
    from dscodec.server.backends.sglang import _Reader
    from dscodec.server.backends.vllm import _logprobs

    with pytest.raises(EngineError):
        _logprobs({"tokens": ["token_id:5"], "token_logprobs": [bad], "top_logprobs": None}, 1, 0)
    with pytest.raises(EngineError):
        _logprobs(
            {"tokens": ["token_id:5"], "token_logprobs": [-0.5], "top_logprobs": [{"token_id:5": bad}]}, 1, 1
        )
    with pytest.raises(EngineError):
        _Reader(logprobs=True, top=0)._logprobs({"output_token_logprobs": [[bad, 5, None]]}, 0, 1)
    with pytest.raises(EngineError):
        _Reader(logprobs=True, top=1)._logprobs(
            {"output_token_logprobs": [[-0.5, 5, None]], "output_top_logprobs": [[[bad, 5, None]]]}, 0, 1
        )
    for entry in ([], "x", [-0.5], [-0.5, -1, None], [-0.5, True, None]):
        with pytest.raises(EngineError):
            _Reader(logprobs=True, top=1)._logprobs(
                {"output_token_logprobs": [[-0.5, 5, None]], "output_top_logprobs": [[entry]]}, 0, 1
            )


@pytest.mark.parametrize("bad", [3, "x", {"a": 1}])
def test_log_probabilities_of_the_wrong_shape_are_an_engine_error(bad: object) -> None:
    from dscodec.server.backends._engine import EngineError
    from dscodec.server.backends.sglang import _Reader
    from dscodec.server.backends.vllm import _logprobs

    fields = {"tokens": ["token_id:5"], "token_logprobs": [-0.5], "top_logprobs": [{"token_id:5": -0.5}]}
    for name in fields:
        with pytest.raises(EngineError, match=f"logprobs.{name}="):
            _logprobs({**fields, name: bad}, 1, 1)
    with pytest.raises(EngineError, match="top log probabilities"):
        _Reader(logprobs=True, top=1)._logprobs(
            {"output_token_logprobs": [[-0.5, 5, None]], "output_top_logprobs": [bad]}, 0, 1
        )


class _Chunks(httpx.AsyncByteStream):
    """An engine's response body, arriving in the given pieces."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


#: Three events whose JSON holds U+0085, U+2028 and U+2029 raw (both engines write them so), with every line end
#: the SSE format has: CR LF, CR and LF.
_STREAM = (
    'data: {"text": "a\u2028b\x85c\u2029d"}\r\n\r\n: keep-alive\rdata: {"n": 2}\r\rdata:{"n": 3}\n\ndata: [DONE]\n\n'
).encode()


@pytest.mark.parametrize(
    "cut",
    [None, "bytes", *range(1, len(_STREAM))],
    ids=lambda cut: f"cut{cut}" if isinstance(cut, int) else str(cut),
)
def test_event_stream_lines_end_only_at_cr_and_lf(cut: int | str | None) -> None:
    """An event is cut into lines at CR LF, CR and LF only, wherever the body's pieces part: not at the other
    characters Python's str.splitlines() splits at (httpx's aiter_lines did, and failed the response)."""
    from dscodec.server.backends._engine import _events

    if cut is None:
        chunks = [_STREAM]
    elif cut == "bytes":
        chunks = [_STREAM[i : i + 1] for i in range(len(_STREAM))]
    else:
        assert isinstance(cut, int)
        chunks = [_STREAM[:cut], _STREAM[cut:]]

    async def read() -> list[dict[str, Any]]:
        return [event async for event in _events(httpx.Response(200, stream=_Chunks(chunks)), "vLLM")]

    assert asyncio.run(read()) == [{"text": "a\u2028b\x85c\u2029d"}, {"n": 2}, {"n": 3}]


@pytest.mark.parametrize(
    "body",
    [b"data: " + b"x" * 200, b"data: {}\n" + b"data: 1\n" * 30 + b"\n", b": " + b"y" * 150 + b"\n\n"],
    ids=["one long line", "many data lines", "a long comment"],
)
def test_an_event_longer_than_the_limit_is_an_engine_error(
    body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dscodec.server.backends import _engine

    monkeypatch.setattr(_engine, "EVENT_LIMIT", 100)

    async def read() -> list[dict[str, Any]]:
        stream = _Chunks([body[i : i + 7] for i in range(0, len(body), 7)])
        return [event async for event in _engine._events(httpx.Response(200, stream=stream), "SGLang")]

    with pytest.raises(_engine.EngineError, match="SGLang.*longer than 100 bytes"):
        asyncio.run(read())


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7),
        (" 120 ", 120),
        ("0", 0),
        ("99999999999", 86_400),
        ("9" * 5000, 86_400),  # past the digits int() reads: still the limit, not an error
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0),  # past
        ("-1", None),
        ("1.5", None),
        ("١٢", None),  # digits to str.isdigit, but not ASCII
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_values(value: str | None, seconds: int | None) -> None:
    assert retry_after(value) == seconds


def test_retry_after_dates_are_seconds_from_now() -> None:
    import email.utils
    import time

    later = email.utils.formatdate(time.time() + 90, usegmt=True)
    found = retry_after(later)
    assert found is not None and 85 <= found <= 91


@pytest.mark.parametrize(("status", "kind"), [(429, EngineBusy), (503, EngineUnavailable)])
def test_a_busy_engine_keeps_its_retry_after(status: int, kind: type) -> None:
    error = engine_failure("vLLM", status, b"later", {"retry-after": "12"})
    assert isinstance(error, kind) and error.retry_after == 12  # type: ignore[attr-defined]
    assert error.with_protocol("messages").retry_after == 12  # type: ignore[attr-defined]
    assert engine_failure("vLLM", status, b"later").retry_after is None  # type: ignore[attr-defined]
    other = engine_failure("vLLM", 500, b"boom", {"retry-after": "12"})
    assert not hasattr(other, "retry_after")


def test_a_busy_engine_is_a_429_with_its_wait(engine: tuple[str, StandIn, LiveServer]) -> None:
    name, _, live = engine
    with pytest.raises(EngineBusy) as busy:
        run(make_backend(name, live.url), job(chat("[script:busy] Hi")))
    assert busy.value.status_code == 429 and busy.value.retry_after == 1


def test_vllm_usage_counts_that_are_no_integers_leave_the_prompt_length() -> None:
    from dscodec.server.backends.vllm import _Reader

    for bad in (True, "x", 10.7, None):
        reader = _Reader(84, buffered=True, top=0)
        reader._usage({"prompt_tokens": bad, "prompt_tokens_details": {"cached_tokens": bad}})
        assert (reader.prompt_tokens, reader.cached_tokens) == (84, 0)
    reader = _Reader(84, buffered=True, top=0)
    reader._usage({"prompt_tokens": 90, "prompt_tokens_details": {"cached_tokens": 64}})
    assert (reader.prompt_tokens, reader.cached_tokens) == (90, 64)


def test_vllm_logprobs_of_mismatched_lengths_name_each_field() -> None:
    from dscodec.server.backends._engine import EngineError
    from dscodec.server.backends.vllm import _logprobs

    with pytest.raises(
        EngineError, match="0 tokens, 1 token_logprobs and 1 top_logprobs for a chunk of 1 tokens"
    ):
        _logprobs({"token_logprobs": ["x"]}, 1, 0)


@pytest.mark.parametrize("kind", ["vllm", "sglang"])
@pytest.mark.parametrize("stream", [False, True])
def test_backend_timeout_bounds_each_silence_of_the_engine_not_the_generation(
    kind: str, stream: bool
) -> None:
    """An engine that writes an item every 0.4 s for 2 s in all, behind a server that waits 1.6 s for each item
    (a margin a loaded machine keeps, the first request's work included): the answer comes whole, streamed or
    not (vLLM holds a complete response's output for its usage, at the end, and says meanwhile that it is still
    at work)."""
    from dscodec.server import create_app
    from dscodec.testing import Finish as Done
    from dscodec.testing import Tokens
    from dscodec.testing.engines import FakeEngine, serve_engine

    ids = list(VOCABULARY.full.encode(" one two three four", add_special_tokens=False).ids)
    engine = FakeEngine(
        kind,
        tokenizer=VOCABULARY.full,
        delay=0.4,
        responder=lambda body, prompt: [Tokens((i,)) for i in ids] + [Done("stop")],
    )
    assert (len(ids) + 1) * 0.4 > 1.6  # the whole generation outlasts the wait for one item
    body = chat("hi", thinking={"type": "disabled"}, stream=stream)
    with serve_engine(engine) as url:
        backend = (VLLMBackend if kind == "vllm" else SGLangBackend)(url)
        app = create_app(backend, tokenizer=VOCABULARY, backend_timeout=1.6)
        with LiveServer(app) as server:
            response = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=30)
    assert response.status_code == 200, response.text
    if stream:
        chunks = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    else:
        text = response.json()["choices"][0]["message"]["content"]
    assert text == " one two three four"
