"""The engine readers against engines that bend their wire format: chatter without output, a finish with no usage
after it, output after the finish, log probabilities nobody asked for, SGLang counts that are missing or wrong.

Each case runs through the server end to end, streamed and not, against :class:`RawEngine`: an ASGI app that writes
exactly the events a test gives it (the stand-ins in ``standins.py`` and ``dscodec.testing.engines`` only write
well-formed streams). The readers are also fed events directly where that says more.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
import pytest

from dscodec.server import Finish, KeepAlive, PromptUsage, TokenChunk, create_app
from dscodec.server.backends import EngineBackend, EngineError, SGLangBackend, VLLMBackend
from tests.server.conftest import VOCABULARY, LiveServer
from tests.server.test_http import PATHS, body, frames

#: The longest a RawEngine goes on (chatter or silence): far past every timeout below, short of a hung test.
ENGINE_LIMIT = 20.0
TEXT = "Hello world, this is text."
IDS = list(VOCABULARY.full.encode(TEXT, add_special_tokens=False).ids)
EXTRA = list(VOCABULARY.full.encode(" Not part of it.", add_special_tokens=False).ids)


class RawEngine:
    """An engine that answers every generation request with the events given: each a JSON object (one ``data:``
    event), raw bytes, or a number of seconds to wait. Then it ends the stream with ``data: [DONE]``, or, with
    ``chatter``, writes that event every 0.1 s, or, with ``hang``, says nothing, until the client goes away (or
    :data:`ENGINE_LIMIT` seconds have passed)."""

    def __init__(
        self, events: list[Any], *, chatter: dict[str, Any] | None = None, hang: bool = False
    ) -> None:
        self.events = events
        self.chatter = chatter
        self.hang = hang
        self.bodies: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] == "/health":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        self.bodies.append(json.loads(raw))
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(watch)
            try:
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")],
                    }
                )
                for item in self.events:
                    if isinstance(item, (int, float)):
                        await anyio.sleep(item)
                    else:
                        await send({"type": "http.response.body", "body": _frame(item), "more_body": True})
                if self.chatter is not None:
                    deadline = time.monotonic() + ENGINE_LIMIT
                    while time.monotonic() < deadline:
                        await anyio.sleep(0.1)
                        await send(
                            {"type": "http.response.body", "body": _frame(self.chatter), "more_body": True}
                        )
                elif self.hang:
                    await anyio.sleep(ENGINE_LIMIT)
                else:
                    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except OSError:
                pass
            group.cancel_scope.cancel()


def _frame(item: dict[str, Any] | bytes) -> bytes:
    return item if isinstance(item, bytes) else b"data: " + json.dumps(item).encode() + b"\n\n"


@contextmanager
def serving(kind: str, engine: RawEngine, *, backend_timeout: float = 5.0) -> Iterator[str]:
    """The dscodec server in front of ``engine`` (as vLLM or SGLang); yields its URL."""
    with LiveServer(engine) as upstream:
        backend: EngineBackend = (VLLMBackend if kind == "vllm" else SGLangBackend)(upstream.url)
        app = create_app(backend, tokenizer=VOCABULARY, backend_timeout=backend_timeout)
        with LiveServer(app) as server:
            yield server.url


def ask(url: str, protocol: str, *, stream: bool, **more: Any) -> httpx.Response:
    request = body(protocol, stream=stream, thinking={"type": "disabled"}, **more)
    return httpx.post(url + PATHS[protocol], json=request, timeout=10)


def answer_text(protocol: str, response: httpx.Response, stream: bool) -> str:
    """The answer's text (a streamed one's deltas joined); fails on a mid-stream error event."""
    assert response.status_code == 200, response.text
    if not stream:
        data = response.json()
        if protocol == "chat_completions":
            return str(data["choices"][0]["message"]["content"])
        return "".join(block["text"] for block in data["content"] if block["type"] == "text")
    text = ""
    for event, data in frames(response.text):
        assert event != "error" and "error" not in data[:20], data
        if data == "[DONE]":
            continue
        chunk = json.loads(data)
        if protocol == "chat_completions":
            text += "".join(choice["delta"].get("content") or "" for choice in chunk["choices"])
        elif chunk["type"] == "content_block_delta" and chunk["delta"]["type"] == "text_delta":
            text += chunk["delta"]["text"]
    return text


# -- vLLM ----------------------------------------------------------------------------------------------------------


def vllm_chunk(ids: list[int], finish: str | None = None, logprobs: object = None) -> dict[str, Any]:
    choice = {"index": 0, "text": "", "token_ids": ids, "logprobs": logprobs, "finish_reason": finish}
    return {"id": "cmpl-raw", "object": "text_completion", "choices": [choice]}


def vllm_usage(prompt: int = 7, cached: int = 3) -> dict[str, Any]:
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": 1,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    return {"id": "cmpl-raw", "object": "text_completion", "choices": [], "usage": usage}


def test_vllm_empty_chunks_are_no_progress() -> None:
    from dscodec.server.backends.vllm import _Reader

    reader = _Reader(84, buffered=True, top=0)
    assert reader.feed({"choices": []}) == []
    assert reader.feed(vllm_chunk([])) == []
    assert reader.feed(vllm_chunk([5])) == [KeepAlive()]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("output", [False, True])
def test_a_vllm_engine_chatting_without_output_times_out(stream: bool, output: bool) -> None:
    """Empty chunks every 0.1 s, never a finish, behind a server that waits 0.5 s for each item: a 504 (or, once a
    stream has started, its error event), not a request kept alive for ever."""
    engine = RawEngine([vllm_chunk(IDS[:2])] if output else [], chatter={"choices": []})
    with serving("vllm", engine, backend_timeout=0.5) as url:
        started = time.monotonic()
        response = ask(url, "chat_completions", stream=stream)
    assert time.monotonic() - started < 5
    if stream and output:
        assert response.status_code == 200 and '"error"' in response.text
    else:
        assert response.status_code == 504, response.text


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("after", ["silence", "failure", "garbage"])
def test_a_vllm_finish_without_usage_keeps_the_answer(stream: bool, after: str) -> None:
    """The finish, then no usage: silence (the server waits 5 s for each item), an error event, or an event that is
    no JSON. Streamed or not, the answer is whole, its usage the prompt's length."""
    events: list[Any] = [vllm_chunk(IDS[:3]), vllm_chunk(IDS[3:], finish="stop")]
    if after == "failure":
        events.append({"error": {"message": "gone", "code": 500}})
    elif after == "garbage":
        events.append(b"data: {not json\n\n")
    engine = RawEngine(events, hang=True)
    with serving("vllm", engine) as url:
        started = time.monotonic()
        response = ask(url, "chat_completions", stream=stream)
        assert time.monotonic() - started < 4  # VLLMBackend.usage_wait (1 s), not the server's 5 s
        assert answer_text("chat_completions", response, stream) == TEXT
        if not stream:
            usage = response.json()["usage"]
            assert usage["prompt_tokens"] == len(engine.bodies[-1]["prompt"])
            assert usage["prompt_tokens_details"]["cached_tokens"] == 0


def test_a_vllm_usage_a_little_after_the_finish_is_still_exact() -> None:
    engine = RawEngine([vllm_chunk(IDS, finish="stop"), 0.3, vllm_usage(prompt=90, cached=64)], hang=True)
    with serving("vllm", engine) as url:
        response = ask(url, "chat_completions", stream=False)
    assert answer_text("chat_completions", response, False) == TEXT
    usage = response.json()["usage"]
    assert (usage["prompt_tokens"], usage["prompt_tokens_details"]["cached_tokens"]) == (90, 64)


def test_vllm_reader_gives_the_answer_with_the_prompt_length_at_a_finish_without_usage() -> None:
    from dscodec.server.backends.vllm import _Finished, _Reader

    reader = _Reader(84, buffered=True, top=0)
    assert reader.feed(vllm_chunk([5, 6])) == [KeepAlive()]
    [finished] = reader.feed(vllm_chunk([7], finish="stop"))
    assert isinstance(finished, _Finished) and not reader.done
    assert list(finished.outputs) == [PromptUsage(84, 0), TokenChunk([5, 6]), TokenChunk([7]), Finish("stop")]
    # Anything but the usage after the finish is no output and no progress.
    assert reader.feed(vllm_chunk([8])) == [] and reader.feed({"choices": []}) == []
    assert reader.feed(vllm_usage(prompt=90, cached=64)) == [
        PromptUsage(90, 64),
        TokenChunk([5, 6]),
        TokenChunk([7]),
        Finish("stop"),
    ]
    assert reader.done


@pytest.mark.parametrize("stream", [False, True])
def test_vllm_output_after_the_finish_is_no_part_of_the_answer(stream: bool) -> None:
    engine = RawEngine([vllm_chunk(IDS, finish="stop"), vllm_chunk(EXTRA), vllm_usage()])
    with serving("vllm", engine) as url:
        response = ask(url, "chat_completions", stream=stream)
    assert answer_text("chat_completions", response, stream) == TEXT


def test_vllm_choices_after_the_finish_in_its_own_chunk_are_ignored() -> None:
    from dscodec.server.backends.vllm import _Reader

    chunk = vllm_chunk([5], finish="stop")
    chunk["choices"].append({"index": 0, "token_ids": [6], "finish_reason": None})
    for buffered in (False, True):
        reader = _Reader(84, buffered=buffered, top=0)
        outputs = reader.feed({**chunk, "usage": {"prompt_tokens": 84}})
        assert [item for item in outputs if isinstance(item, TokenChunk)] == [TokenChunk([5])]


def _good_logprobs(ids: list[int]) -> dict[str, Any]:
    return {
        "tokens": [f"token_id:{i}" for i in ids],
        "token_logprobs": [-0.5] * len(ids),
        "top_logprobs": [{f"token_id:{i}": -0.5} for i in ids],
    }


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", ["chat_completions", "messages"])
@pytest.mark.parametrize("shape", ["good", "malformed"])
def test_vllm_logprobs_nobody_asked_for_are_ignored(stream: bool, protocol: str, shape: str) -> None:
    logprobs = _good_logprobs(IDS) if shape == "good" else {"tokens": 5}
    engine = RawEngine([vllm_chunk(IDS, finish="stop", logprobs=logprobs), vllm_usage()])
    with serving("vllm", engine) as url:
        response = ask(url, protocol, stream=stream)
    assert answer_text(protocol, response, stream) == TEXT
    assert "logprobs" not in engine.bodies[-1]
    if protocol == "chat_completions":
        if stream:
            chunks = [json.loads(data) for _, data in frames(response.text) if data != "[DONE]"]
            assert all(choice.get("logprobs") is None for chunk in chunks for choice in chunk["choices"])
        else:
            assert response.json()["choices"][0]["logprobs"] is None


@pytest.mark.parametrize("stream", [False, True])
def test_vllm_malformed_logprobs_the_client_asked_for_are_a_502(stream: bool) -> None:
    engine = RawEngine([vllm_chunk(IDS, finish="stop", logprobs={"tokens": 5}), vllm_usage()])
    with serving("vllm", engine) as url:
        response = ask(url, "chat_completions", stream=stream, logprobs=True)
        assert response.status_code == 502, response.text
        engine.events = [vllm_chunk(IDS, finish="stop", logprobs=_good_logprobs(IDS)), vllm_usage()]
        response = ask(url, "chat_completions", stream=stream, logprobs=True)
    assert answer_text("chat_completions", response, stream) == TEXT


# -- SGLang --------------------------------------------------------------------------------------------------------


def sglang_event(ids: list[int], total: object = "missing", finish: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "id": "raw",
        "finish_reason": {"type": finish} if finish else None,
        "prompt_tokens": 7,
        "cached_tokens": 0,
    }
    if total != "missing":
        meta["completion_tokens"] = total
    return {"text": "", "output_ids": ids, "meta_info": meta}


#: Where TEXT's ids are cut into three events.
CUTS = [(0, 3), (3, 6), (6, len(IDS))]


def cumulative(totals: Any) -> list[dict[str, Any]]:
    """TEXT as a cumulative stream, each event's completion_tokens from ``totals(ids so far)``."""
    return [
        sglang_event(IDS[:end], totals(IDS[:end]), finish="stop" if end == len(IDS) else None)
        for _, end in CUTS
    ]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "count",
    ["right", "missing", "one more", "one less", "null", "a string"],
)
def test_a_sglang_cumulative_stream_is_read_once_whatever_its_counts(stream: bool, count: str) -> None:
    totals = {
        "right": len,
        "missing": lambda ids: "missing",
        "one more": lambda ids: len(ids) + 1,
        "one less": lambda ids: len(ids) - 1,
        "null": lambda ids: None,
        "a string": lambda ids: str(len(ids)),
    }[count]
    with serving("sglang", RawEngine(cumulative(totals))) as url:
        response = ask(url, "chat_completions", stream=stream)
    assert answer_text("chat_completions", response, stream) == TEXT


@pytest.mark.parametrize("count", ["right", "missing"])
@pytest.mark.parametrize("change", ["shrinks", "rewrites"])
def test_a_sglang_cumulative_stream_that_goes_back_is_a_502(count: str, change: str) -> None:
    events = cumulative(len if count == "right" else lambda ids: "missing")
    bad = IDS[:2] if change == "shrinks" else [IDS[1], IDS[0], *IDS[2:]]
    events[2] = sglang_event(bad, len(bad) if count == "right" else "missing", finish="stop")
    with serving("sglang", RawEngine(events)) as url:
        response = ask(url, "chat_completions", stream=False)
        assert response.status_code == 502, response.text
        streamed = ask(url, "chat_completions", stream=True)
    # After the first output the stream has started: its error event says it.
    assert streamed.status_code == 200 and '"error"' in streamed.text


@pytest.mark.parametrize("stream", [False, True])
def test_a_sglang_delta_that_begins_with_the_output_so_far_stays_a_delta(stream: bool) -> None:
    """Incremental events whose counts say so: the second delta happens to begin with the first one's ids."""
    first, second = IDS[:2], IDS[:2] + IDS[2:4]
    events = [
        sglang_event(first, 2),
        sglang_event(second, 6),
        sglang_event(IDS[4:], 6 + len(IDS[4:]), "stop"),
    ]
    with serving("sglang", RawEngine(events)) as url:
        response = ask(url, "chat_completions", stream=stream)
    expected = VOCABULARY.full.decode(first + second + IDS[4:], skip_special_tokens=False)
    assert answer_text("chat_completions", response, stream) == expected


def test_sglang_reader_decides_the_form_once() -> None:
    from dscodec.server.backends.sglang import _Reader

    def fed(events: list[dict[str, Any]]) -> list[int]:
        reader = _Reader(logprobs=False, top=0)
        out = [item for event in events for item in reader.feed(event)]
        return [i for item in out if isinstance(item, TokenChunk) for i in item.ids]

    # Incremental, told by the count; later events without a count are still deltas, even one that repeats.
    assert fed([sglang_event([1, 2], 2), sglang_event([3], 3), sglang_event([1, 2, 3, 4])]) == [
        1,
        2,
        3,
        1,
        2,
        3,
        4,
    ]
    # Incremental without counts: the first delta that does not continue the output decides.
    assert fed([sglang_event([1, 2]), sglang_event([3]), sglang_event([1, 2, 3, 4])]) == [1, 2, 3, 1, 2, 3, 4]
    # Cumulative, told by the count; then counts go missing, or wrong: only the new tails.
    assert fed([sglang_event([1]), sglang_event([1, 2], 2), sglang_event([1, 2, 3], 9)]) == [1, 2, 3]
    # A cumulative event with nothing new, and one without output_ids, add nothing.
    assert fed([sglang_event([1]), sglang_event([1, 2], 2), sglang_event([1, 2], 2), {"meta_info": {}}]) == [
        1,
        2,
    ]
    reader = _Reader(logprobs=False, top=0)
    for event in (sglang_event([1]), sglang_event([1, 2], 2)):
        reader.feed(event)
    with pytest.raises(EngineError, match="do not continue the 2 ids"):
        reader.feed(sglang_event([], 0))


def test_sglang_cumulative_logprobs_follow_the_new_tail() -> None:
    from dscodec.server.backends.sglang import _Reader

    def event(ids: list[int]) -> dict[str, Any]:
        data = sglang_event(ids)  # no count: the form comes from the ids
        data["meta_info"]["output_token_logprobs"] = [[-0.1 * i, i, None] for i in ids]
        return data

    reader = _Reader(logprobs=True, top=0)
    chunks = [item for ids in ([1], [1, 2], [1, 2, 3]) for item in reader.feed(event(ids))]
    tokens = [item for item in chunks if isinstance(item, TokenChunk)]
    assert [(list(c.ids), list(c.logprobs or [])) for c in tokens] == [
        ([1], [-0.1]),
        ([2], [-0.2]),
        ([3], [-0.30000000000000004]),
    ]


def test_sglang_abort_wins_over_a_bad_cumulative_list() -> None:
    from dscodec.server.backends.sglang import _Reader

    reader = _Reader(logprobs=False, top=0)
    reader.feed(sglang_event([1]))
    reader.feed(sglang_event([1, 2], 2))
    abort = sglang_event([])
    abort["meta_info"]["finish_reason"] = {"type": "abort", "message": "too busy", "status_code": 503}
    with pytest.raises(Exception, match="too busy"):
        reader.feed(abort)


# -- usage counts that are no counts, extra sequences ------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -5, "prompt_tokens_details": {"cached_tokens": -3}},
        {"prompt_tokens": 2**63 + 5, "prompt_tokens_details": {"cached_tokens": 10**18}},
        {"prompt_tokens": True, "prompt_tokens_details": {"cached_tokens": "3"}},
    ],
)
def test_a_vllm_usage_that_is_no_count_keeps_the_answer(stream: bool, usage: dict[str, Any]) -> None:
    """The whole answer came, then a usage chunk whose counts are out of range or of the wrong type: the answer is
    served (not a 502), with the prompt's length as its usage."""
    usage_chunk = {"id": "cmpl-raw", "object": "text_completion", "choices": [], "usage": usage}
    engine = RawEngine([vllm_chunk(IDS[:3]), vllm_chunk(IDS[3:], finish="stop"), usage_chunk])
    with serving("vllm", engine) as url:
        response = ask(url, "chat_completions", stream=stream)
        assert answer_text("chat_completions", response, stream) == TEXT
        if not stream:
            counts = response.json()["usage"]
            assert counts["prompt_tokens"] == len(engine.bodies[-1]["prompt"])
            assert counts["prompt_tokens_details"]["cached_tokens"] == 0


def _sglang_events(meta: dict[str, Any]) -> list[dict[str, Any]]:
    first = {"text": "", "output_ids": IDS[:3], "meta_info": {"finish_reason": None, **meta}}
    last = {"text": "", "output_ids": IDS, "meta_info": {"finish_reason": {"type": "stop"}, **meta}}
    return [first, last]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "meta",
    [{}, {"prompt_tokens": -5, "cached_tokens": -1}, {"prompt_tokens": "10", "cached_tokens": [1]}],
    ids=["missing", "negative", "wrong-type"],
)
def test_a_sglang_usage_that_is_no_count_is_the_prompt_length(stream: bool, meta: dict[str, Any]) -> None:
    """SGLang's counts missing or no counts: the answer is served with the prompt's length as its usage (not 0, not
    a 502)."""
    engine = RawEngine(_sglang_events(meta))
    with serving("sglang", engine) as url:
        response = ask(url, "messages", stream=stream)
        assert answer_text("messages", response, stream) == TEXT
        if not stream:
            assert response.json()["usage"]["input_tokens"] == len(engine.bodies[-1]["input_ids"])
            assert response.json()["usage"]["cache_read_input_tokens"] == 0


@pytest.mark.parametrize("stream", [False, True])
def test_sglang_events_of_other_sequences_are_ignored(stream: bool) -> None:
    """An engine that streams more sequences than asked (``index`` 1 interleaved, finishing first): the answer is
    sequence 0's, whole."""
    events: list[Any] = []
    for n, event in enumerate(_sglang_events({"prompt_tokens": 12, "completion_tokens": 0})):
        events.append({**event, "index": 0})
        other = {"text": "", "output_ids": EXTRA[: n + 1], "meta_info": {"finish_reason": None}, "index": 1}
        if n == 0:
            other["meta_info"]["finish_reason"] = {"type": "length"}
        events.insert(len(events) - 1, other)
    engine = RawEngine(events)
    with serving("sglang", engine) as url:
        response = ask(url, "chat_completions", stream=stream)
        assert answer_text("chat_completions", response, stream) == TEXT


def test_sglang_reader_reads_only_sequence_0() -> None:
    from dscodec.server.backends.sglang import _Reader

    reader = _Reader(logprobs=False, top=0, prompt_tokens=9)
    other = {"output_ids": [7], "meta_info": {"finish_reason": {"type": "stop"}}, "index": 1}
    assert reader.feed(other) == [] and not reader.done
    assert reader.feed({"output_ids": [5], "meta_info": {"finish_reason": None}}) == [
        PromptUsage(9, 0),
        TokenChunk([5]),
    ]
