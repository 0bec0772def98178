"""StreamProcessor lifecycle, usage and error paths (Chat Completions writer)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import dscodec
from dscodec.vocab import Vocabulary

VOCAB = Vocabulary.load(None)


def _request(**body: Any) -> dscodec.ConversationRequest:
    base: dict[str, Any] = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}
    base.update(body)
    return dscodec.convert("chat_completions", base)


def _processor(**body: Any) -> dscodec.StreamProcessor:
    return dscodec.StreamProcessor(_request(**body), response_id="r1", model="M", created=7)


def _ids(text: str) -> list[int]:
    return VOCAB.full.encode(text, add_special_tokens=False).ids


def _deltas(events: list[Any]) -> list[dict[str, Any]]:
    return [e.to_dict()["choices"][0]["delta"] for e in events]


def test_nothing_pushed_gives_start_and_end() -> None:
    p = _processor(thinking={"type": "disabled"})
    events = p.finish()
    assert _deltas(events) == [{"role": "assistant", "content": ""}, {"content": ""}]
    assert events[-1].to_dict()["choices"][0]["finish_reason"] == "stop"
    assert p.finished and p.finish() == []


def test_start_counts_once_and_only_before_output() -> None:
    p = _processor(thinking={"type": "disabled"})
    first = p.start(prompt_tokens=10, cached_tokens=4, system_fingerprint="fp")
    assert len(first) == 1 and p.start(prompt_tokens=99) == []
    events = p.push_text("Hello", 1) + p.finish("stop")
    usage = events[-1].to_dict()["usage"]
    assert usage["prompt_tokens"] == 10 and usage["prompt_cache_miss_tokens"] == 6
    assert events[0].to_dict()["system_fingerprint"] == "fp"


def test_push_after_finish_and_after_failure() -> None:
    p = _processor()
    p.finish("stop")
    with pytest.raises(dscodec.StreamStateError):
        p.push_text("x")
    with pytest.raises(dscodec.StreamStateError):
        p.start()
    q = _processor()
    with pytest.raises(dscodec.ModelOutputError) as bad:
        q.push_tokens([1, 2], logprobs=[-0.5])
    assert bad.value.status_code == 502
    with pytest.raises(dscodec.StreamStateError) as caught:
        q.push_text("x")
    assert "invalid log probabilities" in caught.value.message
    # The client still learns that the response failed, once.
    failed = q.fail(bad.value)
    assert failed and "error" in failed[-1].to_dict() and q.fail(bad.value) == []


def test_stop_sequence_finishes_the_stream() -> None:
    p = _processor(thinking={"type": "disabled"}, stop=["END"])
    events = p.push_text("Hello EN", 2) + p.push_text("D and more", 3)
    assert "".join(d.get("content", "") for d in _deltas(events)) == "Hello "
    assert events[-1].to_dict()["choices"][0]["finish_reason"] == "stop"
    assert p.finished and p.finish("stop") == []
    with pytest.raises(dscodec.StreamStateError):
        p.push_text("more")


def test_finish_reasons() -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    block = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
    cases = [
        ("stop", block, "tool_calls"),
        (None, block, "stop"),
        ("length", "abc", "length"),
        ("content_filter", "abc", "content_filter"),
        ("stop", "abc", "stop"),
    ]
    for reason, text, want in cases:
        p = _processor(thinking={"type": "disabled"}, tools=[tool])
        events = p.push_text(text, 3) + p.finish(reason)  # type: ignore[arg-type]
        assert events[-1].to_dict()["choices"][0]["finish_reason"] == want, (reason, text)
    with pytest.raises(ValueError):
        _processor().finish("eos")  # type: ignore[arg-type]


def test_token_ids_and_incomplete_utf8_at_the_end() -> None:
    """D12: a character cut off at the end becomes U+FFFD; the complete text before it is never lost."""
    emoji = _ids("😀")
    assert len(emoji) == 2
    p = _processor(thinking={"type": "disabled"})
    events = p.push_tokens(_ids("Hi ") + emoji[:1]) + p.finish()
    content = "".join(d.get("content", "") for d in _deltas(events))
    assert content == "Hi \ufffd"
    assert events[-1].to_dict()["usage"]["completion_tokens"] == len(_ids("Hi ")) + 1


def test_logprobs_ride_on_their_delta() -> None:
    p = _processor(thinking={"type": "disabled"})
    ids = _ids("Hello world")
    events = p.push_tokens(ids, logprobs=[(-0.5, [(ids[0], -0.5)])] + [-1.0] * (len(ids) - 1)) + p.finish(
        "stop"
    )
    entries = [
        e for ev in events for e in ((ev.to_dict()["choices"][0]["logprobs"] or {}).get("content") or [])
    ]
    assert [e["token"] for e in entries] == [VOCAB.full.decode([i]) for i in ids]
    assert entries[0]["top_logprobs"] == [
        {"token": entries[0]["token"], "logprob": -0.5, "bytes": entries[0]["bytes"]}
    ]


def test_reasoning_tokens_are_counted_for_text_chunks() -> None:
    """D5: the same count whether the backend sends text or ids."""
    text = "Let me think.</think>Answer."
    by_text = _processor()
    usage_text = (by_text.push_text(text, 9) + by_text.finish("stop"))[-1].to_dict()["usage"]
    by_ids = _processor()
    usage_ids = (by_ids.push_tokens(_ids(text)) + by_ids.finish("stop"))[-1].to_dict()["usage"]
    assert (
        usage_text["completion_tokens_details"]
        == usage_ids["completion_tokens_details"]
        == {"reasoning_tokens": 4}
    )


def test_usage_key_follows_stream_options() -> None:
    streamed = _processor(stream=True)
    assert "usage" not in streamed.push_text("x")[0].to_dict()
    with_usage = _processor(stream=True, stream_options={"include_usage": True})
    assert with_usage.push_text("x")[0].to_dict()["usage"] is None
    plain = _processor()
    assert plain.push_text("x")[0].to_dict()["usage"] is None


def test_fail_ends_the_stream_with_an_error_frame() -> None:
    p = _processor(thinking={"type": "disabled"})
    p.push_text("partial", 1)
    events = p.fail(RuntimeError("backend went away"))
    body = events[-1].to_dict()
    assert body["error"]["type"] == "api_error" and "backend went away" in body["error"]["message"]
    assert p.fail("again") == []
    with pytest.raises(dscodec.StreamStateError):
        p.push_text("x")
    assert dscodec.accumulate("chat_completions", events) == body


def test_sse_frames() -> None:
    p = _processor(thinking={"type": "disabled"})
    events = p.push_text("é", 1)
    frame = events[-1].sse()
    assert frame.startswith("data: {") and frame.endswith("}\n\n") and "é" in frame
    assert json.loads(frame[len("data: ") :]) == events[-1].to_dict()
    assert p.sse_done == "data: [DONE]\n\n"


def test_accumulate_from_wire_dicts_equals_from_events() -> None:
    p = _processor()
    events = p.start(3) + p.push_text("Think</think>Answer", 4) + p.finish("stop")
    wire = [json.loads(e.to_json()) for e in events]
    assert dscodec.accumulate("chat_completions", wire) == dscodec.accumulate("chat_completions", events)
    message = dscodec.accumulate("chat_completions", events)["choices"][0]["message"]
    assert message == {"role": "assistant", "content": "Answer", "reasoning_content": "Think"}
