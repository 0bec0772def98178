"""StreamProcessor lifecycle, usage and error paths (Chat Completions writer)."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import dscodec
from dscodec.protocols._wire import logprob_entries_json
from dscodec.stream.decoder import IncrementalDecoder
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
    with pytest.raises(dscodec.ModelOutputError):
        _processor().finish("eos")  # type: ignore[arg-type]


@pytest.mark.parametrize("end", ["", ">", "<", "</", "</｜", "</｜D", "</｜DSML", "<｜", " <"])
@pytest.mark.parametrize("ids", [False, True])
def test_d20_a_call_whose_start_was_sent_counts_however_the_output_ends(end: str, ids: bool) -> None:
    """D20: an output that ends inside a call's invoke tag, with its start sent, finishes with tool_calls
    (Messages: tool_use), whatever part of a tag follows the name (the reference gives stop after "<", "</" or
    "</｜")."""
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    text = '<｜DSML｜invoke name="f"' + end
    for protocol in ("chat_completions", "messages"):
        if protocol == "chat_completions":
            request = _request(thinking={"type": "disabled"}, tools=[tool])
        else:
            request = dscodec.convert(
                "messages",
                {
                    "model": "DeepSeek-V4-Pro",
                    "max_tokens": 100,
                    "messages": [{"role": "user", "content": "Hi"}],
                    "tools": [{"name": "f", "input_schema": {"type": "object", "properties": {}}}],
                },
            )
        p = dscodec.StreamProcessor(request, response_id="r1", model="M", created=7)
        events = (p.push_tokens(_ids(text)) if ids else p.push_text(text, 3)) + p.finish("stop")
        response = dscodec.accumulate(protocol, events)
        if protocol == "chat_completions":
            assert response["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "f"
            assert response["choices"][0]["finish_reason"] == "tool_calls", end
        else:
            assert [block["name"] for block in response["content"] if block["type"] == "tool_use"] == ["f"]
            assert response["stop_reason"] == "tool_use", end


@pytest.mark.parametrize("ids", [_ids("a\ufffd"), [*_ids("a"), 225]], ids=["the character", "a lone 0x80"])
def test_d12_a_chunk_whose_text_ends_in_u_fffd_is_sent_at_once_and_kept(ids: list[int]) -> None:
    """D12: a chunk of ids whose text ends in U+FFFD, the character itself or a byte that is no UTF-8, is whole: it
    is sent at once, and kept when the output ends there (the reference holds it as half a character, then drops
    it)."""
    p = _processor(thinking={"type": "disabled"})
    sent = p.push_tokens(ids)
    assert "".join(d.get("content") or "" for d in _deltas(sent)) == "a\ufffd"
    events = sent + p.finish("stop")
    assert dscodec.accumulate("chat_completions", events)["choices"][0]["message"]["content"] == "a\ufffd"


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


@pytest.mark.parametrize("size", [0, 1, 2, 3])
@pytest.mark.parametrize("output", ['ab{"x": 1}', 'ab\n```json\n{"x": 1}\n```\ncd<think>e', '{"x": 1}'])
def test_d19_json_mode_log_probabilities_go_with_one_delta_each(output: str, size: int) -> None:
    """D19: in JSON mode each token's entry goes with one delta (the reference repeats all the entries of a push
    on every content delta it sends: the space of a stretch, the bracket, the value). Pushed ``size`` ids at a
    time too (0: all at once): the entries of text that sends no delta of its own (the rest of a stretch whose
    space went out, a fence) wait for the next delta."""
    p = _processor(
        messages=[{"role": "user", "content": "Answer in json."}],
        thinking={"type": "disabled"},
        response_format={"type": "json_object"},
        logprobs=True,
    )
    ids = _ids(output)
    step = size or len(ids)
    events = [
        e
        for k in range(0, len(ids), step)
        for e in p.push_tokens(ids[k : k + step], [-1.0] * len(ids[k : k + step]))
    ]
    events += p.finish("stop")
    chunks = [ev.to_dict()["choices"][0] for ev in events if ev.to_dict().get("choices")]
    parts = [(c["delta"].get("content"), (c["logprobs"] or {}).get("content") or []) for c in chunks]
    texts = [text for text, _ in parts if text]
    assert (
        len(texts) >= 2
    )  # the content parts into several deltas (a stretch's space, the bracket, the value)
    tokens = [entry["token"] for _, entries in parts for entry in entries]
    assert tokens == [VOCAB.full.decode([i], skip_special_tokens=False) for i in ids]  # each once, in order


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


@pytest.mark.parametrize("protocol", ["chat_completions", "responses"])
def test_reasoning_tokens_never_exceed_the_completion_tokens(protocol: str) -> None:
    """D5: a backend's text chunks may count fewer tokens than their text re-encodes to (here 2 for 9): the
    reasoning count stays within the completion count, and the answer lints clean."""
    from dscodec.testing import lint

    body = {"model": "DeepSeek-V4-Pro", "stream": True}
    if protocol == "chat_completions":
        body |= {"messages": [{"role": "user", "content": "Hi"}], "stream_options": {"include_usage": True}}
    else:
        body["input"] = "Hi"
    request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
    for counts, reasoning in (((1, 1), 2), ((0, 0), 0), ((20, 1), 7)):
        p = dscodec.StreamProcessor(request, response_id="r1", model="M", created=7)
        events = p.start(5, 0)
        events += p.push_text("Let me think about it carefully.", counts[0])
        events += p.push_text("</think>Hi", counts[1])
        events += p.finish("stop")
        last = events[-1].to_dict()
        if protocol == "responses":
            usage = last["response"]["usage"]
            found, whole = usage["output_tokens_details"]["reasoning_tokens"], usage["output_tokens"]
        else:
            usage = last["usage"]
            found, whole = usage["completion_tokens_details"]["reasoning_tokens"], usage["completion_tokens"]
        assert (found, whole) == (reasoning, sum(counts))
        assert lint(protocol, [e.to_dict() for e in events], request=body) == []  # type: ignore[arg-type]


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


# --- values the backend hands over are checked where they enter -----------------------------------------------


def _refused(p: dscodec.StreamProcessor, call: Any, *, opened: bool = False) -> None:
    """``call`` raises ModelOutputError (502), the processor is failed, and fail() still tells the client (with
    the opening chunk first when the client has not had it)."""
    with pytest.raises(dscodec.ModelOutputError) as caught:
        call()
    assert caught.value.status_code == 502
    with pytest.raises(dscodec.StreamStateError):
        p.push_text("x", 1)
    failed = p.fail(caught.value)
    assert len(failed) == (1 if opened else 2)
    if not opened:
        assert failed[0].to_dict()["choices"][0]["delta"]["role"] == "assistant"
    assert "error" in failed[-1].to_dict() and p.fail(caught.value) == []


@pytest.mark.parametrize(
    "ids",
    [
        [-1], [2**32], [10, -5], [True], [1.5], ["7"], [None], "abc", b"\x01", 7, None, [[1]],
        [[1], 5], [5, [1]], [5, {"id": 1}], {1, 2}, frozenset({1}), {1: 2},
    ],
)  # fmt: skip
def test_token_ids_are_validated(ids: Any) -> None:
    """Ids are ints in [0, 2**32): a negative id never indexes the vocabulary from its end (it used to decode
    to another token's text: -1 gave <｜image｜>); a value that is no key (a list) among ids is refused like any
    other, and so are a set (no order) and a mapping (whose values would be dropped)."""
    first = _processor(thinking={"type": "disabled"})
    _refused(first, lambda: first.push_tokens(ids))
    warm = _processor(thinking={"type": "disabled"})  # the per-token fast path: open, decoder ready
    warm.push_tokens(_ids("Hi"))
    with pytest.raises(dscodec.ModelOutputError):
        warm.push_tokens(ids)
    assert warm.fail("x")[-1].to_dict()["error"]
    if isinstance(ids, list) and len(ids) == 1:  # one id with its log probability: the per-token logprob path
        logprobs = _processor(thinking={"type": "disabled"}, logprobs=True)
        logprobs.push_tokens(_ids("Hi"), [0.0] * len(_ids("Hi")))
        with pytest.raises(dscodec.ModelOutputError):
            logprobs.push_tokens(ids, [0.0])


def test_token_ids_may_come_from_any_ordered_iterable() -> None:
    ids = _ids("Hello there, world")
    expected = [e.to_json() for e in _processor(thinking={"type": "disabled"}).push_tokens(ids)]
    for sent in (tuple(ids), iter(ids), (i for i in ids), range(ids[0], ids[0] + 1)):
        p = _processor(thinking={"type": "disabled"})
        got = [e.to_json() for e in p.push_tokens(sent)]  # type: ignore[arg-type]
        if isinstance(sent, range):
            assert got == [
                e.to_json() for e in _processor(thinking={"type": "disabled"}).push_tokens(ids[:1])
            ]
        else:
            assert got == expected


def test_ids_at_the_limits_decode_to_nothing_when_unknown() -> None:
    p = _processor(thinking={"type": "disabled"})
    events = p.push_tokens([0, 2**32 - 1, 999_999_999]) + p.finish()
    assert events[-1].to_dict()["usage"]["completion_tokens"] == 3
    assert "".join(d.get("content", "") for d in _deltas(events)) == "<｜begin▁of▁sentence｜>"  # id 0


@pytest.mark.parametrize(
    "logprobs",
    [
        [float("nan")],
        [float("inf")],
        ["0.5"],
        [None],
        [True],
        [(-0.5, [(-1, -0.5)])],
        [(-0.5, [(1, float("nan"))])],
        [(-0.5, None)],
        [(-0.5, [(1,)])],
        [(-0.5,)],
        5,
        "x",
    ],
)
def test_log_probabilities_are_validated(logprobs: Any) -> None:
    p = _processor(thinking={"type": "disabled"})
    _refused(p, lambda: p.push_tokens([42], logprobs=logprobs))


#: An integer of more digits than Python writes out (str() and repr() raise for it) and one past the float range.
_HUGE = 10**5000
_PAST_FLOAT = 2**1024


@pytest.mark.parametrize(
    "push",
    [
        lambda p: p.push_tokens([_HUGE]),
        lambda p: p.push_tokens([42, -_HUGE]),
        lambda p: p.push_tokens([42], [_HUGE]),
        lambda p: p.push_tokens([42], [-_PAST_FLOAT]),
        lambda p: p.push_tokens([42], [(-1.0, [(_HUGE, -1.0)])]),
        lambda p: p.push_tokens([42], [(-1.0, [(7, _PAST_FLOAT)])]),
        lambda p: p.push_tokens([42], [(_HUGE, [])]),
        lambda p: p.push_text("x", _HUGE),
        lambda p: p.finish(_HUGE),  # type: ignore[arg-type]
        lambda p: p.finish((_HUGE,)),  # type: ignore[arg-type]
    ],
)
def test_huge_integers_are_refused_by_name(push: Any) -> None:
    """Integers Python cannot write out, or turn into a float, are refused like any bad value (they used to
    escape as a ValueError or an OverflowError from the message or the conversion)."""
    for warm in (False, True):
        p = _processor(thinking={"type": "disabled"})
        if warm:
            p.push_tokens(_ids("Hi"))
        with pytest.raises(dscodec.ModelOutputError) as refused:
            push(p)
        assert "must be" in refused.value.message and len(refused.value.message) < 300
        assert p.fail("x")[-1].to_dict()["error"]


@pytest.mark.parametrize(
    "make",
    [
        lambda request: dscodec.StreamProcessor(request, response_id="r", model="m", created=_HUGE),
        lambda request: dscodec.StreamProcessor(request, response_id="r", model="m").start(_HUGE),
        lambda request: dscodec.StreamProcessor(request, response_id="r", model="m").start(
            1, cached_tokens=_HUGE
        ),
    ],
)
def test_huge_integers_are_refused_when_the_response_starts(make: Any) -> None:
    with pytest.raises(dscodec.DscodecError) as refused:
        make(
            dscodec.convert(
                "chat_completions",
                {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]},
            )
        )
    assert "an integer of about 5001 digits" in refused.value.message


def test_a_failure_that_cannot_be_written_out_is_still_told() -> None:
    p = _processor(thinking={"type": "disabled"})
    p.push_tokens(_ids("Hi"))
    error = p.fail(ValueError(_HUGE))[-1].to_dict()["error"]
    assert error["message"] == "the model server failed: a ValueError that cannot be shown"


#: The values the checks draw a line at: -inf (mapped), NaN and +inf, ints and bools for floats, ids at and past
#: the 32-bit limit, other types.
_EDGES = [
    float("nan"),
    float("inf"),
    float("-inf"),
    -0.0,
    -1,
    0,
    True,
    False,
    None,
    "0.5",
    1.0,
    2**32 - 1,
    2**32,
]


def _entry_outcomes(token_id: int, logprob: Any) -> list[Any]:
    """The entry as the wire writes it, or the refusal's message, of the processor's quick check (which makes the
    JSON text itself) and of its check part by part (which makes the entry)."""
    outcomes: list[Any] = []
    for check in ("_entry", "_checked_entry"):
        p = _processor(thinking={"type": "disabled"})
        decoder = p._ensure_decoder()
        try:
            entry = getattr(p, check)(decoder, 3, token_id, logprob)
        except dscodec.ModelOutputError as exc:
            outcomes.append(("refused", str(exc)))
        else:
            outcomes.append(("entry", logprob_entries_json([entry])))
    return outcomes


@pytest.mark.parametrize("edge", _EDGES, ids=repr)
@pytest.mark.parametrize("where", ["value", "first id", "last id", "first alternative", "last alternative"])
@pytest.mark.parametrize("pairs", [list, tuple])
def test_the_quick_logprob_check_agrees_at_every_edge(edge: Any, where: str, pairs: type) -> None:
    """One edge value in a well-formed ``(logprob, [(id, logprob), ...])`` entry: the quick check gives the full
    check's entry or its refusal and message."""
    value: Any = -0.5
    alternatives: list[Any] = [(5, -1.0), (6, -2.0), (7, -3.0)]
    at = 0 if where.startswith("first") else -1
    if where == "value":
        value = edge
    elif where.endswith("id"):
        alternatives[at] = (edge, alternatives[at][1])
    else:
        alternatives[at] = (alternatives[at][0], edge)
    outcomes = _entry_outcomes(42, (value, pairs(alternatives)))
    assert outcomes[0] == outcomes[1]
    assert _entry_outcomes(42, edge)[0] == _entry_outcomes(42, edge)[1]


@given(
    token_id=st.integers(0, 130_000),
    logprob=st.recursive(
        st.floats() | st.integers(-1, 2**32) | st.booleans() | st.none() | st.text(max_size=2),
        lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple),
        max_leaves=12,
    ),
)
def test_the_quick_logprob_check_agrees_on_any_value(token_id: int, logprob: Any) -> None:
    """Any value at all (numbers, strings, nested lists and tuples): the quick check agrees with the full one."""
    outcomes = _entry_outcomes(token_id, logprob)
    assert outcomes[0] == outcomes[1]


def test_minus_infinity_logprob_is_written_as_vllm_writes_it() -> None:
    """-inf (a token the sampler had ruled out) becomes -9999.0, a number every client can parse."""
    p = _processor(thinking={"type": "disabled"})
    events = p.push_tokens([42], logprobs=[(float("-inf"), [(42, float("-inf"))])]) + p.finish()
    entry = next(
        e
        for ev in events
        for e in ((json.loads(ev.to_json())["choices"][0]["logprobs"] or {}).get("content") or [])
    )
    assert entry["logprob"] == -9999.0 and entry["top_logprobs"][0]["logprob"] == -9999.0


def _content_entries(events: list[Any]) -> list[list[tuple[str, float]]]:
    """The content entries of each chunk that has any, as (token, logprob) pairs."""
    out = []
    for ev in events:
        found = (json.loads(ev.to_json())["choices"][0]["logprobs"] or {}).get("content")
        if found:
            out.append([(e["token"], e["logprob"]) for e in found])
    return out


@pytest.mark.parametrize("unknown", [200_000, 129_280, 2**32 - 1])
def test_an_unknown_id_at_the_end_of_a_push_keeps_its_entry(unknown: int) -> None:
    """An id the vocabulary does not have decodes to no text; at the end of a push its entry goes with the push's
    last delta, as entries of dropped text do (it was lost at the end of the output, or moved to the next push's
    text), also after ids that wait for more of a character; alone in a push, it goes with the next text."""
    hello = _ids("Hello")
    assert len(hello) == 1
    p = _processor(thinking={"type": "disabled"})
    events = p.push_tokens([*hello, unknown], [-1.0, -2.0]) + p.finish("stop")
    assert _content_entries(events) == [[("Hello", -1.0), ("", -2.0)]]
    p = _processor(thinking={"type": "disabled"})
    events = p.push_tokens([*hello, unknown, unknown], [-1.0, -2.0, -3.0]) + p.push_tokens(hello, [-4.0])
    assert _content_entries(events) == [[("Hello", -1.0), ("", -2.0), ("", -3.0)], [("Hello", -4.0)]]
    p = _processor(thinking={"type": "disabled"})
    events = p.push_tokens([unknown], [-2.0]) + p.push_tokens(hello, [-1.0]) + p.finish("stop")
    assert _content_entries(events) == [[("", -2.0), ("Hello", -1.0)]]
    emoji = _ids("\U0001f600")
    p = _processor(thinking={"type": "disabled"})
    events = p.push_tokens([*hello, emoji[0]], [-1.0, -2.0]) + p.push_tokens(emoji[1:], [-3.0])
    assert [[lp for _, lp in chunk] for chunk in _content_entries(events)] == [[-1.0], [-2.0, -3.0]]
    # Before a marker in the same push it goes with the text before it, not with the marker (whose own entry a
    # </think> drops) nor with a special token's own delta after it.
    p = _processor(thinking={"type": "disabled"})
    think_start = VOCAB.special_id("<think>")
    events = p.push_tokens([*hello, unknown, think_start], [-1.0, -2.0, -3.0]) + p.finish("stop")
    assert _content_entries(events) == [[("Hello", -1.0), ("", -2.0)], [("<think>", -3.0)]]
    p = _processor()
    events = p.push_tokens([*hello, unknown, VOCAB.special_id("</think>")], [-1.0, -2.0, -3.0])
    reasoning = [
        [
            e["logprob"]
            for e in (json.loads(ev.to_json())["choices"][0]["logprobs"] or {}).get("reasoning_content") or []
        ]
        for ev in events + p.finish("stop")
    ]
    assert [-1.0, -2.0] in reasoning
    # After </think> (whose own entry is dropped) it waits for the next text, as with the reference.
    think_end = VOCAB.special_id("</think>")
    p = _processor()
    events = (
        p.push_tokens([think_end, unknown], [-1.0, -2.0]) + p.push_tokens(hello, [-3.0]) + p.finish("stop")
    )
    assert _content_entries(events) == [[("", -2.0), ("Hello", -3.0)]]


@pytest.mark.parametrize("count", [-1, 2**63, True, 1.5, "3", None])
def test_token_counts_are_validated(count: Any) -> None:
    p = _processor(thinking={"type": "disabled"})
    _refused(p, lambda: p.push_text("a", count))
    q = _processor(thinking={"type": "disabled"})
    _refused(q, lambda: q.start(count))
    r = _processor(thinking={"type": "disabled"})
    _refused(r, lambda: r.start(10, count))


def test_token_counts_up_to_the_limit_and_their_sum() -> None:
    p = _processor(thinking={"type": "disabled"})
    events = p.start(2**63 - 1, 2**63 - 1) + p.push_text("a", 2**63 - 2) + p.push_text("b", 1)
    usage = (events + p.finish())[-1].to_dict()["usage"]
    assert usage["completion_tokens"] == 2**63 - 1
    q = _processor(thinking={"type": "disabled"})
    q.push_text("a", 2**63 - 1)
    _refused(q, lambda: q.push_text("b", 1), opened=True)  # the completion tokens stay below 2**63 together


def test_cached_tokens_above_prompt_tokens_are_taken_as_the_reference_takes_them() -> None:
    p = _processor(thinking={"type": "disabled"})
    usage = (p.start(3, 5) + p.push_text("a", 1) + p.finish("stop"))[-1].to_dict()["usage"]
    assert (usage["prompt_tokens_details"]["cached_tokens"], usage["prompt_cache_miss_tokens"]) == (5, 0)


# --- D15: the end-of-sentence token ends the output -----------------------------------------------------------

EOS = "<｜end▁of▁sentence｜>"


def _content(events: list[Any]) -> str:
    return "".join(d.get("content") or "" for d in _deltas(events))


def test_d15_the_end_of_sentence_id_ends_the_output() -> None:
    """vLLM returns the EOS id with the generated ids: it must not reach the client, and what follows it is
    ignored; every token the backend reported still counts, and the finish reason is the backend's."""
    ids = _ids("Hello" + EOS + " more")
    assert VOCAB.full.decode([1], skip_special_tokens=False) == EOS and 1 in ids
    for pushes in ([ids], [[i] for i in ids]):
        p = _processor(thinking={"type": "disabled"})
        events: list[Any] = []
        for chunk in pushes:
            events += p.push_tokens(chunk, logprobs=[-0.5] * len(chunk))
        assert not p.finished  # the output is over, but only the backend ends the response
        events += p.finish("length")
        assert _content(events) == "Hello" and EOS not in json.dumps([e.to_dict() for e in events])
        final = events[-1].to_dict()
        assert final["choices"][0]["finish_reason"] == "length"
        assert final["usage"]["completion_tokens"] == len(ids)
        entries = [
            x for e in events for x in ((e.to_dict()["choices"][0]["logprobs"] or {}).get("content") or [])
        ]
        assert [x["token"] for x in entries] == ["Hello"]


def test_d15_the_spelling_in_text_chunks() -> None:
    text = "Think.</think>Answer." + EOS + "<｜User｜>next"
    whole = _processor()
    events = whole.push_text(text, 9) + whole.push_text("even more", 2) + whole.finish("stop")
    message = dscodec.accumulate("chat_completions", events)["choices"][0]["message"]
    assert message == {"role": "assistant", "content": "Answer.", "reasoning_content": "Think."}
    assert events[-1].to_dict()["usage"]["completion_tokens"] == 11
    split = _processor()
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    events = [e for piece in pieces for e in split.push_text(piece, 1)] + split.finish("stop")
    assert dscodec.accumulate("chat_completions", events)["choices"][0]["message"] == message


@pytest.mark.parametrize("stop", ["<", "a<", "a<｜"])
def test_d15_a_stop_that_the_start_of_the_spelling_completes_waits_for_the_next_chunk(stop: str) -> None:
    """In text chunks, a stop string completed by what may begin the end-of-sentence spelling matches only once
    the next chunk shows it is something else: the token never takes part in a stop (the reference, which has no
    such token, finishes at once)."""
    held = stop[stop.index("<") :]
    for after, matched in (("x", True), (EOS[len(held) :], False)):
        p = dscodec.StreamProcessor(
            dscodec.convert(
                "messages",
                {
                    "model": "DeepSeek-V4-Pro",
                    "max_tokens": 64,
                    "stop_sequences": [stop],
                    "thinking": {"type": "disabled"},
                    "messages": [{"role": "user", "content": "Hi"}],
                },
            ),
            response_id="msg_1",
            model="DeepSeek-V4-Pro",
        )
        events = p.start(prompt_tokens=3) + p.push_text("Hello a", 1) + p.push_text(held, 1)
        assert not p.finished
        events += p.push_text(after, 1)
        assert p.finished is matched
        events += p.finish("stop")
        message = dscodec.accumulate("messages", events)
        assert message["content"] == [
            {"type": "text", "text": "Hello " if matched and stop != "<" else "Hello a"}
        ]
        assert (message["stop_reason"], message["stop_sequence"]) == (
            ("stop_sequence", stop) if matched else ("end_turn", None)
        )
        assert message["usage"]["output_tokens"] == 3


_TOOLS: dict[str, Any] = {
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
}
_TOOLS_NO_THINKING = {**_TOOLS, "thinking": {"type": "disabled"}}
_JSON_MODE: dict[str, Any] = {
    "thinking": {"type": "disabled"},
    "response_format": {"type": "json_object"},
    "messages": [{"role": "user", "content": "Reply in JSON"}],
}


@pytest.mark.parametrize(
    ("body", "pushes", "first", "second", "as_ids"),
    [
        # The end of a text chunk may begin ``</think>``: only that end waits (in token ids the marker is one
        # special id, so a plain ``<`` there is text at once).
        ({}, ["abc<", "z"], "abc", "<z", False),
        ({}, ["abc</thi", "z"], "abc", "</thiz", False),
        # A newline run at the end of the reasoning may come right before ``</think>`` (then it is dropped).
        ({}, ["abc\n\n", "def"], "abc", "\n\ndef", False),
        ({}, ["abc\n\n", "def"], "abc", "\n\ndef", True),
        # The end of a chunk may begin a stop sequence.
        ({"thinking": {"type": "disabled"}, "stop": ["END"]}, ["Hello E", "x"], "Hello ", "Ex", False),
        ({"thinking": {"type": "disabled"}, "stop": ["END"]}, ["Hello E", "x"], "Hello ", "Ex", True),
        # With tools, a "<" may begin a block opener, but only when the Dsml token may come right after it: a "<"
        # followed by the held start of another spelling (itself beginning with "<") is text at once.
        (_TOOLS, ["abc<<", "z"], "abc<", "<z", False),
        (_TOOLS_NO_THINKING, ["abc\n<<", "z"], "abc\n<", "<z", False),
        (_TOOLS_NO_THINKING, ["abc<<｜", "z"], "abc<", "<｜z", False),
        (_TOOLS_NO_THINKING, ["abc\n<｜DS", "z"], "abc", "\n<｜DSz", False),
        # The start of the Dsml token's spelling is held only where the token would open a block (after a "<",
        # with tools): elsewhere the whole token would be text.
        ({}, ["abc｜DS", "z"], "abc｜DS", "z", False),
        (_TOOLS, ["abc｜DS", "z"], "abc｜DS", "z", False),
        (_TOOLS_NO_THINKING, ["abc</think>｜", "z"], "abc｜", "z", False),
        (_TOOLS_NO_THINKING, ["<", "｜DS"], "", "", False),
        # Text held at the end of a chunk waits only for what the held start of a spelling after it leaves open:
        # a newline run stays before the end-of-sentence token, and no stop goes on with "<".
        ({}, ["abc\n<｜end", "z"], "abc\n", "<｜endz", False),
        ({"thinking": {"type": "disabled"}, "stop": ["END"]}, ["abc EN</th", "z"], "abc EN", "</thz", False),
        (
            {"thinking": {"type": "disabled"}, "stop": ["EN</thi"]},
            ["abc EN</th", "z"],
            "abc ",
            "EN</thz",
            False,
        ),
        # In a JSON-mode value "</think>" is text, and no closing fence goes on with "<".
        (_JSON_MODE, ['{"a": "</th', "z"], '{"a": "</th', "z", False),
        (_JSON_MODE, ['{"a": 1}\n<｜end', "z"], '{"a": 1}\n', "<｜endz", False),
    ],
)
def test_d18_only_what_may_begin_a_marker_waits(
    body: dict[str, Any], pushes: list[str], first: str, second: str, as_ids: bool
) -> None:
    """The reference holds the whole chunk whose end is undecided and releases it later as a delta of its own;
    dscodec emits at once what can no longer belong to a marker, a stop sequence or a dropped newline run."""
    p = _processor(**body)
    p.start(1, 0)

    def texts(events: list[Any]) -> str:
        return "".join(d.get("reasoning_content") or d.get("content") or "" for d in _deltas(events))

    def push(text: str) -> list[Any]:
        return p.push_tokens(_ids(text)) if as_ids else p.push_text(text, 1)

    assert texts(push(pushes[0])) == first
    assert texts(push(pushes[1])) == second


@pytest.mark.parametrize("first", ["\U00011000", "\U0001f600", "\ue000", "\uff5c", "x", "中"])
def test_held_text_goes_with_the_next_text_whatever_character_it_begins_with(first: str) -> None:
    """A newline run of the reasoning waits (a ``</think>`` would drop it) and goes out with the next push's text
    in one delta (D18), also when that push holds a special id written as text (a delta of its own) and its text
    begins with a character above the sentinel units, as it does with any other character."""
    dsml = VOCAB.special_id("｜DSML｜")
    for ids in (_ids(first + "</") + [dsml] + _ids(" parameter"), _ids(first) + [dsml]):
        p = _processor()  # thinking on, no tools: the Dsml token is text
        p.start(1, 0)
        assert _deltas(p.push_tokens(_ids("0:0\n"))) == [{"content": None, "reasoning_content": "0:0"}]
        texts = [d["reasoning_content"] for d in _deltas(p.push_tokens(ids))]
        assert texts[0] == "\n" + VOCAB.full.decode(ids[: ids.index(dsml)])
        assert texts[1] == "｜DSML｜"


_VALUE = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">'


@pytest.mark.parametrize(
    ("pushes", "first", "second"),
    [
        # In a value, "<" waits only while "/" may follow, and "</" only while the Dsml token may: the held start
        # of another spelling after them decides them.
        (["x <<", " y"], '{"a": "x <', "< y"),
        (["x </<", "y"], '{"a": "x </', "<y"),
        (["x <｜DS", "y"], '{"a": "x <｜DS', "y"),
        # The start of a spelling that would be value text whatever it becomes does not wait.
        (["x </th", "y"], '{"a": "x </th', "y"),
        (["x </｜DS", "ML｜parameter>"], '{"a": "x ', '"'),
    ],
)
def test_d18_in_a_value_only_what_may_close_it_waits(pushes: list[str], first: str, second: str) -> None:
    p = _processor(**_TOOLS_NO_THINKING)
    p.start(1, 0)

    def arguments(events: list[Any]) -> str:
        return "".join(
            call["function"].get("arguments") or ""
            for d in _deltas(events)
            for call in d.get("tool_calls") or []
        )

    assert arguments(p.push_text(_VALUE + pushes[0], 1)) == first
    assert arguments(p.push_text(pushes[1], 1)) == second


@pytest.mark.parametrize("size", [1, 3])
def test_an_internal_error_in_the_block_parser_fails_the_stream_cleanly(
    monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    from dscodec.stream.dsml import BlockParser

    processor = _processor(
        tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    )
    processor.start(5, 0)
    text = '</think><｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="false">12'
    ids = VOCAB.full.encode(text, add_special_tokens=False).ids
    for k in range(0, len(ids) - 4, size):
        processor.push_tokens(ids[k : k + size])

    def broken(self: BlockParser, units: str, out: list[Any]) -> None:
        raise IndexError("a bug")

    monkeypatch.setattr(BlockParser, "feed", broken)
    with pytest.raises(dscodec.ModelOutputError, match="could not be processed"):
        for k in range(len(ids) - 4, len(ids), size):
            processor.push_tokens(ids[k : k + size])
    with pytest.raises(dscodec.StreamStateError):
        processor.push_tokens(ids[:1])


class _Str(str):
    """A str the per-push path for text does not take (the machine's ``feed`` reads it)."""


_TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
_CALL_START = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">'


def _push_another_way(p: dscodec.StreamProcessor, other_way: str, text: str) -> list[Any]:
    """Push ``text`` a way no lane takes: as a ``str`` subclass, as ids in a tuple subclass, or as ids with
    logprobs."""
    if other_way == "str subclass":
        return p.push_text(_Str(text), 1)
    ids = _ids(text)
    if other_way == "ids in a tuple subclass":
        return p.push_tokens(type("Ids", (tuple,), {})(ids))
    return p.push_tokens(ids, [-0.5] * len(ids))


@pytest.mark.parametrize("other_way", ["str subclass", "ids in a tuple subclass", "ids with logprobs"])
def test_string_lane_closes_when_a_push_goes_another_way(other_way: str) -> None:
    """Pushes through the middle of a string argument take a lane; a push that goes another way may end the
    value, so the next plain chunk must not be read as more of it."""
    closing = "</｜DSML｜parameter>"

    def run(lane: bool) -> list[Any]:
        p = dscodec.StreamProcessor(
            _request(tools=[_TOOL], stream=True),
            response_id="r1",
            model="M",
            created=7,
            tool_call_id_factory=lambda index: f"call_{index}",
        )
        log = [p.push_text(_CALL_START, 1)]
        for piece in ("ab", "c d", "e"):
            log.append(p.push_text(piece if lane else _Str(piece), 1))
        log.append(_push_another_way(p, other_way, closing))
        for piece in ("\n", "x", "\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"):
            log.append(p.push_text(piece if lane else _Str(piece), 1))
        log.append(p.finish("stop"))
        return [[e.to_dict() for e in events] for events in log]

    with_lane = run(True)
    assert with_lane == run(False)
    arguments = "".join(
        call["function"]["arguments"]
        for events in with_lane
        for event in events
        for call in event["choices"][0]["delta"].get("tool_calls", [])
    )
    assert json.loads(arguments) == {"a": "abc de"}


@pytest.mark.parametrize("other_way", ["str subclass", "ids in a tuple subclass", "ids with logprobs"])
def test_json_lane_closes_when_a_push_goes_another_way(other_way: str) -> None:
    """Pushes through the middle of a JSON-mode value take a lane; a push that goes another way may end the
    value (here with its closing fence), so the next plain chunks must be read as the content after it."""
    closing = "}\n```"

    def run(lane: bool) -> list[Any]:
        p = dscodec.StreamProcessor(
            _request(
                messages=[{"role": "user", "content": "Answer in json."}],
                response_format={"type": "json_object"},
                stream=True,
                thinking={"type": "disabled"},
            ),
            response_id="r1",
            model="M",
            created=7,
        )
        log = [p.push_text("```json\n", 1)]
        for piece in ('{"a":', " 1,", '\n "b"', ": 2\n"):
            log.append(p.push_text(piece if lane else _Str(piece), 1))
        log.append(_push_another_way(p, other_way, closing))
        for piece in ("\n", "Done", "\n`", "``"):
            log.append(p.push_text(piece if lane else _Str(piece), 1))
        log.append(p.finish("stop"))
        return [[e.to_dict() for e in events] for events in log]

    with_lane = run(True)
    assert with_lane == run(False)
    content = "".join(
        event["choices"][0]["delta"].get("content") or "" for events in with_lane for event in events
    )
    # The value, then only what the content after it becomes (never the text of the chunks after the fence).
    assert content.startswith('{"a": 1,\n "b": 2\n}')
    assert "Done" not in content and "`" not in content


def test_a_text_chunk_in_a_block_after_ids_is_read_as_feed_reads_it() -> None:
    """Ids, then a text chunk inside a tool-call block that ends in the start of a spelling (held), then ids
    again: the same events as when the text chunk goes the machine's general way."""
    head = '</think><｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">ab'
    tail = "cd</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"

    def run(chunk: str) -> list[Any]:
        p = dscodec.StreamProcessor(
            _request(tools=[_TOOL], stream=True),
            response_id="r1",
            model="M",
            created=7,
            tool_call_id_factory=lambda index: f"call_{index}",
        )
        log = [p.start(5, 0)]
        ids = _ids(head)
        for k in range(0, len(ids), 2):
            log.append(p.push_tokens(ids[k : k + 2]))
        log.append(p.push_text(chunk, 1))
        ids = _ids(tail)
        for k in range(0, len(ids), 2):
            log.append(p.push_tokens(ids[k : k + 2]))
        log.append(p.finish("stop"))
        return [[e.to_dict() for e in events] for events in log]

    for chunk in ("x<｜DS", "x｜DSML｜", "x<", "x<｜DSML｜parameter>y"):
        assert run(chunk) == run(_Str(chunk)), chunk


@pytest.mark.parametrize("other_way", ["str subclass", "ids in a tuple subclass", "ids with logprobs"])
def test_text_lane_closes_when_a_push_goes_another_way(other_way: str) -> None:
    """Pushes through the middle of the reasoning take a lane; a push that goes another way may end it (here
    with ``</think>``), so the next plain chunks must be read as the content (and the reasoning counted as
    far as it went)."""
    closing = "</think>"

    def run(lane: bool) -> list[Any]:
        p = dscodec.StreamProcessor(_request(stream=True), response_id="r1", model="M", created=7)
        log = [p.push_text("Let", 1)]
        for piece in (" me", " think", " a", " bit."):
            log.append(p.push_text(piece if lane else _Str(piece), 1))
        log.append(_push_another_way(p, other_way, closing))
        for piece in ("\n\n", "The", " answer", "."):
            log.append(p.push_text(piece if lane else _Str(piece), 1))
        log.append(p.finish("stop"))
        return [[e.to_dict() for e in events] for events in log]

    with_lane = run(True)
    assert with_lane == run(False)
    deltas = [event["choices"][0]["delta"] for events in with_lane for event in events if event["choices"]]
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == "Let me think a bit."
    assert "".join(d.get("content") or "" for d in deltas) == "The answer."


@pytest.mark.parametrize("channel", ["reasoning", "content", "JSON value"])
def test_a_text_chunk_after_ids_is_read_as_feed_reads_it(channel: str) -> None:
    """Ids in the middle of the reasoning, the content or a JSON-mode value take a lane that reads token text
    only; a text chunk after them (a spelling, the start of one, a lone surrogate, the closing fence) must be
    read as the machine's general way reads it, and ids after it as ids."""
    head = {
        "reasoning": "Let me think a bit",
        "content": "Sure.</think>The answer is",
        "JSON value": '```json\n{"a": 1,',
    }[channel]
    json_mode = {
        "messages": [{"role": "user", "content": "Answer in json."}],
        "response_format": {"type": "json_object"},
        "thinking": {"type": "disabled"},
    }
    request = _request(stream=True, **(json_mode if channel == "JSON value" else {}))

    def run(chunk: str) -> list[Any]:
        p = dscodec.StreamProcessor(request, response_id="r1", model="M", created=7)
        log = [p.start(5, 0)]
        ids = _ids(head)
        for k in range(0, len(ids), 2):
            log.append(p.push_tokens(ids[k : k + 2]))
        log.append(p.push_text(chunk, 1))
        for k in range(0, 4, 2):
            log.append(p.push_tokens(_ids(" more words")[k : k + 2]))
        log.append(p.finish("stop"))
        return [[e.to_dict() for e in events] for events in log]

    for chunk in (
        "x<｜end▁of▁sentence｜>",
        "<｜DSML｜tool_calls>",
        "</think>",
        "x<｜",
        "\ud800",
        "}\n```",
        " plain",
    ):
        assert run(chunk) == run(_Str(chunk)), chunk


#: A tool-call block with the kinds of parameters a lane through the block reads (strings, numbers, booleans, a
#: list, a bare ``name=``, a tag without a name, an empty value), two calls, then text after the block.
_BLOCK_OUTPUT = (
    "Run them.</think>\n\n<｜DSML｜tool_calls>\n"
    '<｜DSML｜invoke name="bash">\n'
    '<｜DSML｜parameter name="command" string="true">ls -la "src"</｜DSML｜parameter>\n'
    '<｜DSML｜parameter name="timeout" string="false">120</｜DSML｜parameter>\n'
    '<｜DSML｜parameter name="verbose" string="false">true</｜DSML｜parameter>\n'
    "<｜DSML｜parameter name=cwd>/work</｜DSML｜parameter>\n"
    '<｜DSML｜parameter string="true">dropped</｜DSML｜parameter>\n'
    '<｜DSML｜parameter name="args" string="false">["-n", 3, {"k": null}]</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n"
    '<｜DSML｜invoke name="noop">\n<｜DSML｜parameter name="e" string="false"></｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n"
    "</｜DSML｜tool_calls>\nafter the block"
)


def _block_run(pushes: list[Any], *, lanes: bool, stop: list[str] | None = None) -> list[Any]:
    """The events of ``pushes`` (``str``: a text chunk, else ids); without ``lanes`` every push goes the
    machine's general way (a ``str`` subclass, ids in a tuple subclass)."""
    body: dict[str, Any] = {"tools": [_TOOL, {**_TOOL, "function": {**_TOOL["function"], "name": "bash"}}]}
    if stop is not None:
        body["stop"] = stop
    p = dscodec.StreamProcessor(
        _request(stream=True, **body),
        response_id="r1",
        model="M",
        created=7,
        tool_call_id_factory=lambda index: f"call_{index}",
    )
    log = [p.start(5, 0)]
    ids_type = type("Ids", (tuple,), {})
    for push in pushes:
        try:
            if isinstance(push, str):
                log.append(p.push_text(push if lanes else _Str(push), 1))
            else:
                log.append(p.push_tokens(push if lanes else ids_type(push)))
        except dscodec.StreamStateError:  # a stop sequence ended the response
            break
    log.append(p.finish("stop"))
    return [[e.to_dict() for e in events] for events in log]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("form", ["ids", "text"])
def test_pushes_through_a_tool_call_block_give_the_events_of_the_general_way(form: str, size: int) -> None:
    """Ids or text chunks through a block (tags, values, calls, the block's end, the text after it): the
    processor's lane through the block gives the same events, push by push, as the machine's general way."""
    ids = _ids(_BLOCK_OUTPUT)
    groups = [ids[k : k + size] for k in range(0, len(ids), size)]
    if form == "text":
        decoder = IncrementalDecoder(VOCAB)
        # the text of the ids, and the text cut anywhere (inside spellings too)
        ways: list[list[Any]] = [
            [decoder.feed(group) for group in groups],
            [_BLOCK_OUTPUT[k : k + size] for k in range(0, len(_BLOCK_OUTPUT), size)],
        ]
    else:
        ways = [groups]
    for pushes, stop in itertools.product(ways, (None, ["zzz"], ["<"], ['"noop'], ["<｜end▁of▁sentence｜>"])):
        with_lanes = _block_run(pushes, lanes=True, stop=stop)
        assert with_lanes == _block_run(pushes, lanes=False, stop=stop)
        arguments = [
            call["function"]["arguments"]
            for events in with_lanes
            for event in events
            if event["choices"]
            for call in event["choices"][0]["delta"].get("tool_calls") or []
        ]
        if stop is None:
            assert "".join(arguments) == (
                '{"command": "ls -la \\"src\\"", "timeout": 120, "verbose": true, "cwd": "/work", '
                '"args": ["-n", 3, {"k": null}]}{"e": null}'
            )
    # The end-of-sentence token inside the block (a spelling in a text chunk): the output ends there.
    cut = _BLOCK_OUTPUT.index("<｜DSML｜parameter name=cwd>")
    text = _BLOCK_OUTPUT[:cut] + "<｜end▁of▁sentence｜>" + _BLOCK_OUTPUT[cut:]
    ids = _ids(text)
    groups = [ids[k : k + size] for k in range(0, len(ids), size)]
    decoder = IncrementalDecoder(VOCAB)
    pushes = [decoder.feed(group) for group in groups] if form == "text" else groups
    assert _block_run(pushes, lanes=True) == _block_run(pushes, lanes=False)


def test_ids_and_text_chunks_in_a_block_never_take_each_others_lane() -> None:
    """Inside a block, the lane for ids reads token text (which never spells a token: ordinary ids that spell
    ``<｜DSML｜parameter>`` are plain text) and the lane for text chunks turns spellings into units: a text
    chunk after ids, and ids after text chunks, are each read as the machine's general way reads them."""
    start = '</think><｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n'
    spelled = '1</｜DSML｜parameter>\n<｜DSML｜parameter name="b">x'
    tail = "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    plain_ids = VOCAB.plain.encode(spelled, add_special_tokens=False).ids  # the spelling as ordinary ids
    assert not any(VOCAB.is_special(i) for i in plain_ids)
    # Ids that end in a tag (a value follows), or close a string value (the lane through the block opens
    # again there), then more of the block.
    for head in (
        '<｜DSML｜parameter name="a" string="false">',
        '<｜DSML｜parameter name="s" string="true">ab</｜DSML｜parameter>\n<｜DSML｜parameter name="a">',
        '<｜DSML｜parameter name="s" string="true">ab</｜DSML｜parameter>',
    ):
        by_ids = [[i] for i in _ids(start + head)]
        for middle in (
            [[i] for i in plain_ids],  # ids after ids: token text, never units
            [spelled[k : k + 3] for k in range(0, len(spelled), 3)],  # text chunks after ids
            [spelled],
        ):
            for after in ([[i] for i in plain_ids], [spelled]):  # then ids, or a text chunk, again
                pushes = by_ids + middle + after + [[i] for i in _ids(tail)]
                with_lanes = _block_run(pushes, lanes=True)
                assert with_lanes == _block_run(pushes, lanes=False), (head, middle, after)


@pytest.mark.parametrize("form", ["ids", "text"])
def test_an_internal_error_in_the_block_lane_fails_the_stream_cleanly(
    monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """The parser fails while the lane through the block is open: the push raises the processor's error, the
    error event is ready, and the processor refuses later pushes."""
    from dscodec.stream.dsml import BlockParser

    processor = _processor(tools=[_TOOL])
    processor.start(5, 0)
    ids = _ids('</think><｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a">12')
    decoder = IncrementalDecoder(VOCAB)
    for token_id in ids[:-2]:
        if form == "ids":
            processor.push_tokens([token_id])
        else:
            processor.push_text(decoder.feed([token_id]), 1)
    assert (processor._id_lane if form == "ids" else processor._machine_lane) is not None  # the lane is open

    def broken(self: BlockParser, units: str, out: list[Any]) -> None:
        raise IndexError("a bug")

    monkeypatch.setattr(BlockParser, "feed", broken)
    with pytest.raises(dscodec.ModelOutputError, match="could not be processed"):
        if form == "ids":
            processor.push_tokens(ids[-2:-1])
        else:
            processor.push_text(decoder.feed(ids[-2:-1]), 1)
    with pytest.raises(dscodec.StreamStateError, match="failed earlier: .*could not be processed"):
        processor.push_tokens(ids[:1])
    assert "error" in processor.fail("the push raised")[-1].to_dict()


@pytest.mark.parametrize("chunks", [["Hello EN", "D more"], ["Hello END more"], ["Hel", "lo", " E", "ND"]])
def test_a_coalescing_processor_ends_at_a_stop_sequence_like_any(chunks: list[str]) -> None:
    """A stop sequence ends the response in the push that completes it: a coalescing processor then gives the
    whole response at once, and it adds up to what the events one by one add up to."""
    responses = []
    for coalesce in (False, True):
        request = _request(thinking={"type": "disabled"}, stop=["END"])
        p = dscodec.StreamProcessor(request, response_id="r1", model="M", created=7, coalesce=coalesce)
        events = p.start(3)
        for chunk in chunks:
            made = p.push_text(chunk, 1)
            events += made
            if p.finished:
                assert made  # the end came with this push
                break
            assert not made or not coalesce
        assert p.finished and p.finish("stop") == []
        responses.append(dscodec.accumulate("chat_completions", events))
    assert responses[0] == responses[1]
    assert responses[1]["choices"][0]["message"]["content"] == "Hello "
    assert responses[1]["choices"][0]["finish_reason"] == "stop"


_EOS_ID = VOCAB.special_id("<｜end▁of▁sentence｜>")
_LONG_OUTPUTS = [
    # reasoning, answer, a block with many small parameters, then the end of sentence and more output
    "Think it over " * 30
    + "</think>"
    + "Here you go. " * 20
    + "\n\n<｜DSML｜tool_calls>\n"
    + "".join(
        f'<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">x{k} é 字</｜DSML｜parameter>\n'
        f'<｜DSML｜parameter name="n" string="false">{k}</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
        for k in range(12)
    )
    + "</｜DSML｜tool_calls>",
    "Plain 字 text, 🙂 " * 60 + "</think>" + "The answer: " * 40,
]


@given(
    output=st.sampled_from(_LONG_OUTPUTS),
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=8),
    end=st.sampled_from(["eos", "finish", "fail", "bad id", "text", "logprobs"]),
    at=st.floats(0, 1),
)
def test_a_coalescing_processor_reads_gathered_ids_as_one_that_reads_each_push(
    output: str, sizes: list[int], end: str, at: float
) -> None:
    """A coalescing processor without stop sequences reads the text of many pushes of ids at once: the same
    complete response, the same pushes refused, ``finished`` at the same push, and whatever ends the gathering
    (a text chunk, log probabilities, a bad id, ``fail``) in its place; the end-of-sentence id among them."""
    ids = _ids(output)
    cut = int(len(ids) * at)
    results = []
    for coalesce in (False, True):
        p = dscodec.StreamProcessor(
            _request(
                tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
            ),
            response_id="r1",
            model="M",
            created=7,
            coalesce=coalesce,
            tool_call_id_factory=lambda index: f"call_{index}",
        )
        events = p.start(3)
        trace: list[Any] = []
        pieces = itertools.cycle(sizes)
        k = 0
        failure: Exception | None = None
        try:
            while k < cut:
                group = ids[k : min(cut, k + next(pieces))]
                k += len(group)
                made = p.push_tokens(group)
                assert not coalesce or not made
                events += made
            if end == "eos":  # the output ends; what follows is dropped, and only finish ends the response
                events += p.push_tokens([*ids[cut : cut + 2], _EOS_ID, *ids[cut + 2 : cut + 4]])
                events += p.push_tokens(ids[cut + 4 :])
                trace.append(p.finished)
            elif end == "bad id":
                with pytest.raises(dscodec.ModelOutputError, match="token id"):
                    p.push_tokens([*ids[cut : cut + 2], -1])
                events += p.fail("the push raised")
            elif end == "text":
                events += p.push_text("</think>more <｜DSML｜tool_calls>", 3)
                events += p.push_tokens(ids[cut:])
            elif end == "logprobs":
                rest = ids[cut : cut + 3]
                events += p.push_tokens(rest, [-0.5] * len(rest))
                events += p.push_tokens(ids[cut + 3 :])
            if end == "fail":
                events += p.fail("the backend went away")
            else:
                events += p.finish("stop")
        except dscodec.DscodecError as exc:  # pragma: no cover - reported below with the trace
            failure = exc
        trace.append(p.finished)
        results.append((dscodec.accumulate("chat_completions", events), trace, repr(failure)))
    assert results[0] == results[1]


# -- text the caller hands over that the events carry as JSON strings -----------------------------------------------

_PROTOCOL_BODIES: dict[str, dict[str, Any]] = {
    "chat_completions": {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]},
    "responses": {"model": "DeepSeek-V4-Pro", "input": "Hi"},
    "messages": {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Hi"}],
    },
}


def _text_deltas(protocol: str, events: list[Any]) -> list[str]:
    """The reasoning and answer deltas of ``events``, in order, in any protocol."""
    out: list[str] = []
    for event in events:
        data = event.to_dict()
        if protocol == "chat_completions":
            for choice in data["choices"]:
                delta = choice["delta"]
                if "role" not in delta and not choice["finish_reason"]:
                    out += [
                        t for t in (delta.get("reasoning_content"), delta.get("content")) if t is not None
                    ]
        elif protocol == "responses" and data["type"] in (
            "response.output_text.delta",
            "response.reasoning_text.delta",
        ):
            out.append(data["delta"])
        elif protocol == "messages" and data["type"] == "content_block_delta":
            delta = data["delta"]
            if delta["type"] in ("text_delta", "thinking_delta"):
                out.append(delta.get("text", delta.get("thinking")))
    return out


@pytest.mark.parametrize("protocol", list(_PROTOCOL_BODIES))
@pytest.mark.parametrize("as_thinking", [True, False])
def test_d22_an_empty_text_chunk_sends_no_delta(protocol: str, as_thinking: bool) -> None:
    """The reference sends an empty delta for an empty text chunk (at once, later, or never, by where it comes);
    dscodec sends none: the events are those of the same output without the empty chunks."""
    body = dict(_PROTOCOL_BODIES[protocol])
    if protocol == "chat_completions":
        body["thinking"] = {"type": "enabled" if as_thinking else "disabled"}
    elif protocol == "responses":
        body["reasoning"] = {"effort": "high" if as_thinking else "none"}
    elif as_thinking:
        body["thinking"] = {"type": "enabled", "budget_tokens": 32}
    chunks = ["", "r", "", "\n", "", "</think>", "", "a", "", "b", ""]

    def deltas(pushes: list[str]) -> list[str]:
        p = dscodec.StreamProcessor(dscodec.convert(protocol, body), response_id="r", model="m")
        events = p.start(1, 0)
        for text in pushes:
            events += p.push_text(text, 1)
        return _text_deltas(protocol, events + p.finish("stop"))

    with_empties = deltas(chunks)
    assert "" not in with_empties
    assert with_empties == deltas([c for c in chunks if c])
    assert with_empties[-2:] == ["a", "b"]


@pytest.mark.parametrize("protocol", list(_PROTOCOL_BODIES))
def test_d23_a_lone_surrogate_in_a_text_chunk_becomes_a_replacement_character(protocol: str) -> None:
    """The reference cannot take such a chunk (its bindings raise ``UnicodeEncodeError``); dscodec reads each lone
    surrogate as U+FFFD, as a UTF-8 decoder reads a broken byte, in the answer and in a string argument alike."""
    body = dict(_PROTOCOL_BODIES[protocol])
    if protocol == "messages":
        body["tools"] = [{"name": "f", "input_schema": {"type": "object"}}]
    elif protocol == "responses":
        body["tools"] = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]
    else:
        body["tools"] = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    p = dscodec.StreamProcessor(dscodec.convert(protocol, body), response_id="r", model="m")
    events = p.start(1, 0) + p.push_text("</think>a\ud800b", 1)
    events += p.push_text('\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n', 1)
    events += p.push_text('<｜DSML｜parameter name="s" string="true">x\udfffy</｜DSML｜parameter>\n', 1)
    events += p.push_text("</｜DSML｜invoke>\n</｜DSML｜tool_calls>", 1) + p.finish("stop")
    frames = "".join(event.sse() for event in events)
    frames.encode("utf-8")  # no lone surrogate left
    assert "a\ufffdb" in "".join(_text_deltas(protocol, events))
    assert "x\ufffdy" in frames


@pytest.mark.parametrize("protocol", list(_PROTOCOL_BODIES))
@pytest.mark.parametrize(
    "failure",
    [
        RuntimeError("upstream said \udcff"),
        "backend gone \ud800",
        dscodec.ModelOutputError("mine \ud800", param="messages.\udc00"),
    ],
    ids=["exception", "text", "dscodec-error"],
)
def test_a_failure_whose_text_holds_a_lone_surrogate_is_still_sent(protocol: str, failure: object) -> None:
    processor = dscodec.StreamProcessor(
        dscodec.convert(protocol, _PROTOCOL_BODIES[protocol]), response_id="r", model="m"
    )
    events = processor.start(1, 0) + processor.fail(failure)  # type: ignore[arg-type]
    frames = "".join(event.sse() for event in events)
    frames.encode("utf-8")  # no lone surrogate left: UTF-8 takes every frame
    assert "\ufffd" in frames
    if isinstance(failure, dscodec.ModelOutputError):
        assert failure.message == "mine \ud800"  # the caller's error is left as it was


@pytest.mark.parametrize("protocol", list(_PROTOCOL_BODIES))
def test_a_system_fingerprint_with_a_lone_surrogate_is_refused(protocol: str) -> None:
    processor = dscodec.StreamProcessor(
        dscodec.convert(protocol, _PROTOCOL_BODIES[protocol]), response_id="r", model="m"
    )
    with pytest.raises(dscodec.ModelOutputError, match="system_fingerprint must be valid Unicode text"):
        processor.start(1, 0, "fp\ud800")


_TOOL_BODY = {
    "model": "DeepSeek-V4-Pro",
    "messages": [{"role": "user", "content": "Hi"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
}
_CALL = '</think><｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'


@pytest.mark.parametrize(
    ("made", "message"),
    [
        (7, "tool_call_id_factory must return a str, not int"),
        (None, "tool_call_id_factory must return a str, not NoneType"),
        ("call_\ud800", "tool_call_id_factory returned a call id that holds a lone surrogate"),
    ],
)
def test_what_the_call_id_factory_returns_is_checked(made: object, message: str) -> None:
    processor = dscodec.StreamProcessor(
        dscodec.convert("chat_completions", _TOOL_BODY),
        response_id="r",
        model="m",
        tool_call_id_factory=lambda index: made,  # type: ignore[arg-type,return-value]
    )
    processor.start(1, 0)
    with pytest.raises(dscodec.ModelOutputError, match=message) as raised:
        processor.push_text(_CALL)
    with pytest.raises(dscodec.StreamStateError, match="failed earlier"):
        processor.finish("stop")
    assert json.loads(processor.fail(raised.value)[-1].to_json())["error"]["message"] == message


def test_a_call_id_factory_that_returns_strings_names_the_calls() -> None:
    processor = dscodec.StreamProcessor(
        dscodec.convert("chat_completions", _TOOL_BODY),
        response_id="r",
        model="m",
        tool_call_id_factory=lambda index: f"mine_{index}",
    )
    events = processor.start(1, 0) + processor.push_text(_CALL) + processor.finish("stop")
    calls = dscodec.accumulate("chat_completions", events)["choices"][0]["message"]["tool_calls"]
    assert [call["id"] for call in calls] == ["mine_0"]


@pytest.mark.parametrize("path", ["\x00", "tok\x00en.json", "\ud800", "dir/\udcff/tokenizer.json"])
def test_a_tokenizer_path_that_names_no_file_is_refused_as_a_tokenizer_error(path: str) -> None:
    with pytest.raises(dscodec.TokenizerError, match="is no file name"):
        dscodec.PromptEncoder(path)
    processor = dscodec.StreamProcessor(
        dscodec.convert("chat_completions", _PROTOCOL_BODIES["chat_completions"]),
        response_id="r",
        model="m",
        tokenizer=path,
    )
    with pytest.raises(dscodec.TokenizerError, match="is no file name"):
        processor.push_tokens([1])


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (-5e-6, "-0.000005"),  # orjson alone writes -5e-6
        (-4.6947976e-6, "-0.0000046947976"),
        (-1e-6, "-0.000001"),
        (-9.99e-7, "-9.99e-7"),  # below 1e-6: the exponent, as orjson writes it
        (-1e-5, "-0.00001"),
        (-123.5, "-123.5"),
        (-1e12, "-1000000000000.0"),
        (-1e13, "-1e+13"),  # orjson alone writes -10000000000000.0
        (-2.777244e14, "-2.777244e+14"),
        (-1e16, "-1e+16"),
    ],
)
@pytest.mark.parametrize("protocol", ["chat_completions", "responses"])
def test_log_probabilities_are_written_in_the_references_notation(
    value: float, written: str, protocol: str
) -> None:
    """The reference writes a log probability's 32-bit float plainly from 1e-6 to 1e13 and with an exponent
    elsewhere (``e+13``, ``e-7``), in every event that carries one."""
    body: dict[str, Any] = {"model": "DeepSeek-V4-Pro", "stream": True}
    if protocol == "chat_completions":
        body.update(
            messages=[{"role": "user", "content": "Hi"}], thinking={"type": "disabled"}, logprobs=True
        )
    else:
        body.update(input="Hi", reasoning={"effort": "none"}, top_logprobs=1)
    p = dscodec.StreamProcessor(dscodec.convert(protocol, body), response_id="r1", model="M")
    events = p.start(1) + p.push_tokens(_ids("Hello"), [(value, [(42, value)])]) + p.finish("stop")
    found = [text for event in events for text in re.findall(r'"logprob":(-?[^,}\]]+)', event.to_json())]
    assert found and set(found) == {written}


@pytest.mark.parametrize("coalesce", [False, True])
def test_a_clock_stamps_the_end_of_a_responses_answer(coalesce: bool) -> None:
    """``clock`` is what the Responses ``completed_at`` reads (never before ``created``); the other protocols read
    no clock, and one that is no callable is refused when the processor is made."""
    request = dscodec.convert(
        "responses", {"model": "DeepSeek-V4-Pro", "input": "Hi", "reasoning": {"effort": "none"}}
    )
    for now, stamped in ((1234.9, 1234), (3.0, 100)):
        p = dscodec.StreamProcessor(
            request,
            response_id="resp_1",
            model="M",
            created=100,
            clock=lambda now=now: now,
            coalesce=coalesce,
        )
        events = p.start(5) + p.push_text("Hello", 1) + p.finish("stop")
        assert dscodec.accumulate("responses", events)["completed_at"] == stamped
    chat = dscodec.StreamProcessor(_request(), response_id="r", model="M", clock=lambda: 0.0)
    assert chat.start(1) and chat.finish("stop")
    with pytest.raises(dscodec.StreamStateError, match="clock must be a callable"):
        dscodec.StreamProcessor(_request(), response_id="r", model="M", clock=5)  # type: ignore[arg-type]


def _broken_clock() -> float:
    raise ZeroDivisionError("tick")


@pytest.mark.parametrize(
    ("clock", "says"),
    [
        (lambda: float("nan"), "unix time in seconds"),
        (lambda: float("inf"), "unix time in seconds"),
        (lambda: 2**70, "unix time in seconds"),
        (lambda: -1.0, "unix time in seconds"),
        (lambda: "now", "unix time in seconds"),
        (lambda: None, "unix time in seconds"),
        (_broken_clock, "the clock failed: ZeroDivisionError"),
    ],
)
def test_a_clock_that_gives_no_time_is_a_stream_state_error(clock: Any, says: str) -> None:
    request = dscodec.convert(
        "responses", {"model": "DeepSeek-V4-Pro", "input": "Hi", "reasoning": {"effort": "none"}}
    )
    p = dscodec.StreamProcessor(request, response_id="resp_1", model="M", created=1, clock=clock)
    p.start(5)
    p.push_text("Hello", 1)
    with pytest.raises(dscodec.StreamStateError, match=says):
        p.finish("stop")


def test_per_push_methods_keep_no_locals_in_cells() -> None:
    """The methods every push runs through keep no local in a cell: on Python 3.11 a comprehension or a generator
    that uses a local (``self`` most often) puts it in a cell at every call, which makes each use of it slower
    and costs an allocation per push, whichever way the push then goes."""
    from dscodec.processor import StreamProcessor
    from dscodec.protocols.anthropic_messages.outbound import MessagesEventWriter
    from dscodec.protocols.openai_chat.outbound import ChatChunkWriter
    from dscodec.protocols.openai_responses.outbound import ResponsesEventWriter
    from dscodec.stream.dsml import BlockParser
    from dscodec.stream.machine import OutputMachine

    methods = [
        StreamProcessor.push_tokens,
        StreamProcessor.push_text,
        StreamProcessor._ids_text,
        StreamProcessor._ids_units,
        StreamProcessor._ids_events,
        StreamProcessor._token_ids,
        OutputMachine.feed,
        OutputMachine.feed_tokens,
        OutputMachine.plain_token,
        OutputMachine.plain_chunk,
        BlockParser.feed,
        BlockParser._scan_invoke,
        BlockParser._end_tag,
        BlockParser._parameter,
        IncrementalDecoder.decode_plain,
        IncrementalDecoder.decode_group,
        ChatChunkWriter.write,
        ResponsesEventWriter.write,
        MessagesEventWriter.write,
    ]
    with_cells = {m.__qualname__: m.__code__.co_cellvars for m in methods if m.__code__.co_cellvars}
    assert with_cells == {}
