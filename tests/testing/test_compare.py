"""Normalisation and comparison of answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

import dscodec
from dscodec.testing import MISSING, Difference, Frame, Transcript, compare, format_differences, normalise
from dscodec.testing.compare import answer_sections, merge_deltas
from dscodec.vocab import Vocabulary

VOCABULARY = Vocabulary.load(None)


def test_ids_get_placeholders_by_first_appearance() -> None:
    value = {
        "id": "resp_9",
        "output": [{"id": "msg_1", "call_id": "call_00_x"}, {"item_id": "msg_1"}],
        "created_at": 17,
        "completed_at": None,
        "system_fingerprint": "fp_1",
        "signature": "",
        "encrypted_content": "resp_9",
    }
    assert normalise(value) == {
        "id": "<id-1>",
        "output": [{"id": "<id-2>", "call_id": "<id-3>"}, {"item_id": "<id-2>"}],
        "created_at": "<timestamp>",
        "completed_at": None,
        "system_fingerprint": "<fingerprint>",
        "signature": "",
        "encrypted_content": "<id-1>",
    }


def test_equal_after_normalisation() -> None:
    ours = {"id": "chatcmpl-1", "created": 1, "choices": [{"id": "call_a"}, {"id": "call_b"}]}
    theirs = {"id": "chatcmpl-2", "created": 2, "choices": [{"id": "call_x"}, {"id": "call_y"}]}
    assert compare(ours, theirs) == []
    # ...but not when the references between ids differ.
    crossed = {"id": "chatcmpl-2", "created": 2, "choices": [{"id": "call_x"}, {"id": "call_x"}]}
    assert compare(ours, crossed) == [Difference("response.choices[1].id", "<id-3>", "<id-2>")]


def test_paths_missing_values_and_types() -> None:
    diffs = compare({"a": [1, 2, 3], "b": {"c": 1}, "t": True}, {"a": [1, 5], "b": {"d": 1}, "t": 1})
    assert diffs == [
        Difference("response.a[1]", 2, 5),
        Difference("response.a[2]", 3, MISSING),
        Difference("response.b.c", 1, MISSING),
        Difference("response.b.d", MISSING, 1),
        Difference("response.t", True, 1),
    ]
    assert str(diffs[2]) == "response.b.c: expected 1, got <missing>"
    assert (
        str(Difference("x", "Hello", "Help"))
        == 'x: expected "Hello", got "Help" (first difference at character 3)'
    )


def test_ignore_rules() -> None:
    want = {"usage": {"n": 1}, "choices": [{"text": "a", "usage": 2}]}
    got = {"usage": {"n": 2}, "choices": [{"text": "b", "usage": 3}]}
    assert [d.path for d in compare(want, got, ignore=["usage"])] == ["response.choices[0].text"]
    assert [d.path for d in compare(want, got, ignore=["response.choices[*].text", "response.usage"])] == [
        "response.choices[0].usage"
    ]


def test_transcripts_compare_by_section() -> None:
    frames = [Frame('{"id":"a","n":1}'), Frame("[DONE]")]
    want = Transcript("chat_completions", {}, frames=frames, accumulated={"n": 1})
    got = Transcript(
        "chat_completions", {}, frames=[Frame('{"id":"b","n":2}')], accumulated={"n": 1}, status=200
    )
    diffs = compare(want, got)
    assert [d.path for d in diffs] == ["frames[0].data.n", "frames[1]"]
    assert compare(want, got, sections=["status", "accumulated"]) == []
    # A section the expected side lacks is not compared.
    assert compare(Transcript("chat_completions", {}, accumulated={"n": 1}), got) == []
    assert "frames[1]: expected" in format_differences(diffs)
    assert format_differences(diffs, limit=1).endswith("... and 1 more difference")


def test_normalising_only_some_ids_and_keeping_fingerprints() -> None:
    """``ids=`` narrows the id rule to values matching a pattern (any key); ``fingerprints=False`` keeps them."""
    want = {"id": "chatcmpl-1", "system_fingerprint": "fp_a", "calls": [{"id": "call_1"}, {"x": "call_2"}]}
    got = {"id": "chatcmpl-1", "system_fingerprint": "fp_b", "calls": [{"id": "call_8"}, {"x": "call_9"}]}
    assert compare(want, got, ids=r"call_[0-9]") == []
    assert [d.path for d in compare(want, got, ids=r"call_[0-9]", fingerprints=False)] == [
        "response.system_fingerprint"
    ]
    assert [d.path for d in compare({**want, "id": "a"}, got, ids=r"call_[0-9]")] == ["response.id"]
    assert normalise(want, ids=False, fingerprints=False) == want


def test_event_lists_compare_as_frames() -> None:
    want = [{"type": "message_start", "id": "m1"}, {"type": "message_stop"}]
    got = [{"type": "message_start", "id": "m2"}, {"type": "ping"}]
    assert [(d.path, d.expected, d.actual) for d in compare(want, got)] == [
        ("frames[1].event", "message_stop", "ping"),
        ("frames[1].data.type", "message_stop", "ping"),
    ]


# -- merged deltas ------------------------------------------------------------------------------------------------

BODIES = {
    "chat_completions": {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Hi"}],
        "logprobs": True,
    },
    "responses": {"model": "DeepSeek-V4-Pro", "input": "Hi", "include": ["message.output_text.logprobs"]},
    "messages": {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Hi"}],
    },
}
OUTPUT = 'Think.</think>Hello there, friend.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">some text</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'


def _events(protocol: str, cut: int, output: str = OUTPUT, *, logprobs: bool = False) -> list[dict[str, Any]]:
    """The events of ``output`` as token ids pushed ``cut`` at a time (with a log probability for each id)."""
    body = {**BODIES[protocol], "tools": _TOOLS[protocol]}
    processor = dscodec.StreamProcessor(dscodec.convert(protocol, body), response_id="r", model="m")  # type: ignore[arg-type]
    ids = VOCABULARY.full.encode(output, add_special_tokens=False).ids
    events = processor.start(prompt_tokens=3)
    for k in range(0, len(ids), cut):
        group = ids[k : k + cut]
        events += processor.push_tokens(group, logprobs=[-0.5] * len(group) if logprobs else None)
    events += processor.finish("stop")
    return [event.to_dict() for event in events]


_TOOLS: dict[str, list[dict[str, Any]]] = {
    "chat_completions": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "responses": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
    "messages": [{"name": "f", "input_schema": {"type": "object"}}],
}


@pytest.mark.parametrize("protocol", sorted(BODIES))
def test_merged_deltas_compare_streams_that_part_elsewhere(protocol: str) -> None:
    one, three = _events(protocol, 1), _events(protocol, 3)
    assert len(one) > len(three) and compare(one, three) != []
    assert compare(one, three, merge_deltas=True) == []
    merged = merge_deltas(one)
    assert normalise(merged) == normalise(merge_deltas(three)) and len(merged) < len(one)
    assert merge_deltas(merged) == merged  # nothing left to merge
    other = _events(protocol, 3, OUTPUT.replace("friend", "fiend"))
    found = compare(one, other, merge_deltas=True)
    assert found and all("friend" in str(d.expected) or "riend" in str(d.expected) for d in found), found


def test_merge_deltas_keeps_what_is_not_a_delta_of_the_same_thing() -> None:
    events = _events("chat_completions", 1, logprobs=True)
    merged = merge_deltas(events)
    deltas = [e["choices"][0]["delta"] for e in merged if e.get("choices")]
    assert [d.get("reasoning_content") for d in deltas if d.get("reasoning_content")] == ["Think."]
    assert [d["content"] for d in deltas if d.get("content")] == ["Hello there, friend."]
    arguments = [c["function"]["arguments"] for d in deltas for c in d.get("tool_calls", ()) if "id" not in c]
    assert arguments == ['{"a": "some text"}']
    # the log probabilities of the merged text deltas are joined, in order; the originals are untouched
    entries = [
        e
        for m in merged
        for c in m.get("choices", ())
        for e in ((c.get("logprobs") or {}).get("content") or [])
    ]
    assert "".join(e["token"] for e in entries).startswith("Hello there, friend.")
    assert all(len(e["choices"][0]["delta"].get("content") or "") <= 8 for e in events if e.get("choices"))


def test_merge_deltas_renumbers_responses_events() -> None:
    merged = merge_deltas(_events("responses", 1, "Think.</think>Hello there, friend.", logprobs=True))
    assert [e["sequence_number"] for e in merged] == list(range(len(merged)))
    texts = [e["delta"] for e in merged if e["type"] == "response.output_text.delta"]
    assert texts == ["Hello there, friend."]
    logprobs = next(e["logprobs"] for e in merged if e["type"] == "response.output_text.delta")
    assert "".join(entry["token"] for entry in logprobs) == "Hello there, friend."


def test_merged_frames_keep_their_event_names_and_done() -> None:
    def frames(cut: int) -> list[Frame]:
        events = _events("messages", cut)
        return [Frame(json.dumps(e), event=e.get("type")) for e in events] + [Frame("[DONE]")]

    one, four = frames(1), frames(4)
    assert compare(one, four, merge_deltas=True) == []
    sections = answer_sections(one, merge=True)["frames"]
    assert sections[-1] == {"event": None, "data": "[DONE]"}
    assert all(f["event"] == f["data"]["type"] for f in sections[:-1])
    transcript = Transcript("messages", {"model": "m"}, frames=one)
    assert compare(transcript, Transcript("messages", {"model": "m"}, frames=four), merge_deltas=True) == []


def test_merge_deltas_of_odd_events() -> None:
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "a"}}]}
    two = [chunk, {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "b"}}]}]
    assert merge_deltas(two)[0]["choices"][0]["delta"]["content"] == "ab" and chunk["choices"][0][
        "delta"
    ] == {"content": "a"}
    odd = [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "x"}}
    ] * 2
    odd += [
        {"object": "chat.completion.chunk", "choices": [{"delta": {"role": "assistant", "content": "a"}}]}
    ] * 2
    odd += [{"type": "response.output_text.delta", "delta": None}] * 2 + [{"no": "type"}, {}]
    assert merge_deltas(odd) == odd  # only plain deltas merge
    junk: list[Any] = ["text", 3, None, [chunk], chunk, chunk]  # not every item is an event: refused, named
    with pytest.raises(TypeError, match=r"events\[0\] is a str"):
        merge_deltas(junk)


_PIECE = "x" * 2000
_ENTRIES = [{"token": "x", "logprob": -1.0}] * 50
_LONG_RUNS: dict[str, tuple[dict[str, Any], Any]] = {
    "chat text": (
        {
            "object": "chat.completion.chunk",
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": _PIECE},
                    "logprobs": {"content": _ENTRIES, "refusal": None},
                }
            ],
        },
        lambda event: (event["choices"][0]["delta"]["content"], event["choices"][0]["logprobs"]["content"]),
    ),
    "chat arguments": (
        {
            "object": "chat.completion.chunk",
            "choices": [
                {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": _PIECE}}]}}
            ],
        },
        lambda event: (event["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"], []),
    ),
    "responses": (
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": _PIECE,
            "logprobs": _ENTRIES,
        },
        lambda event: (event["delta"], event["logprobs"]),
    ),
    "messages": (
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": _PIECE}},
        lambda event: (event["delta"]["text"], []),
    ),
}


@pytest.mark.parametrize("kind", sorted(_LONG_RUNS))
def test_merging_a_long_run_of_deltas_is_linear(kind: str) -> None:
    """Each delta was added to the merged event by concatenation, copying all that came before it: 20,000 deltas
    of 2,000 characters (40 MB) took minutes, and so did their 50 log probability entries each. Now each text and
    list is built once, in well under a second."""
    event, parts = _LONG_RUNS[kind]
    count = 20_000
    merged = merge_deltas([event] * count)
    assert len(merged) == 1
    text, entries = parts(merged[0])
    assert len(text) == len(_PIECE) * count and len(entries) == len(parts(event)[1]) * count
    assert len(parts(event)[0]) == len(_PIECE)  # the events given are not changed
    assert merge_deltas([event, event])[0] == merge_deltas(merge_deltas([event, event]))[0]


def test_ignore_rules_cost_what_each_step_down_adds() -> None:
    """Every path was matched against every ignore rule from its start: below a key of 200,000 characters, each of
    20,000 values had its whole path matched, which took minutes. Now a rule is matched a step at a time."""
    key = "k" * 200_000
    want = {key: list(range(20_000)), "usage": {"total": 1}, "frames": [{"data": {"usage": 1, "n": 1}}]}
    got = {key: list(range(20_000)), "usage": {"total": 2}, "frames": [{"data": {"usage": 2, "n": 2}}]}
    rules = ["usage", "frames[*].data.usage", f"response.{key[:5]}*[19999]"]
    assert [d.path for d in compare(want, got, ignore=rules)] == ["response.frames[0].data.n"]
    got[key][-1] = got[key][0] = -1
    assert [d.path[-8:] for d in compare(want, got, ignore=rules)] == ["kkkkk[0]", "].data.n"]


@pytest.mark.parametrize(
    ("rule", "left_out"),
    [
        ("usage", ["a.usage", "a.usage.x", "b[0].usage", "c.x]usage"]),
        ("us", []),
        ("*usage", ["a.usage", "a.usage.x", "b[0].usage", "c.x]usage", "c.pre_usage"]),
        ("response.a*", ["a.usage", "a.usage.x", "a.v"]),
        ("*[0]*", ["b[0].usage", "b[0].w"]),
        ("response.b[*].w", ["b[0].w"]),
        ("response.c.x]usage", ["c.x]usage"]),
        ("*", ["a.usage", "a.usage.x", "a.v", "b[0].usage", "b[0].w", "c.x]usage", "c.pre_usage"]),
    ],
)
def test_ignore_rules_leave_out_the_paths_they_match(rule: str, left_out: list[str]) -> None:
    want = {
        "a": {"usage": {"x": 1}, "v": 1},
        "b": [{"usage": 1, "w": 1}],
        "c": {"x]usage": 1, "pre_usage": 1},
    }
    got = {"a": {"usage": {"x": 2}, "v": 2}, "b": [{"usage": 2, "w": 2}], "c": {"x]usage": 2, "pre_usage": 2}}
    every = [d.path for d in compare(want, got)]
    kept = [d.path for d in compare(want, got, ignore=[rule])]
    assert kept == [path for path in every if path.removeprefix("response.") not in left_out]


def test_a_rule_part_may_span_several_steps() -> None:
    want, got = {"x": {"abcdefgh": 1, "other": 1}}, {"x": {"abcdefgh": 2, "other": 2}}
    for rule in ("*se.x.abcdefgh", "*sponse.x.abc*", "*.x.abc*h", "response.x.abcdefgh", "*abcdefgh"):
        assert [d.path for d in compare(want, got, ignore=[rule])] == ["response.x.other"], rule


@pytest.mark.parametrize("rule", ["", "  "])
def test_an_empty_ignore_rule_is_refused(rule: str) -> None:
    """An empty rule names no key, yet its pattern used to match every path inside a list (any ``]`` followed by
    ``.`` or ``[``): a difference there was silently left out."""
    want = {"choices": [{"text": "Hello"}]}
    got = {"choices": [{"text": "Help"}]}
    assert [d.path for d in compare(want, got)] == ["response.choices[0].text"]
    for ignore in ([rule], rule, ["usage", rule]):
        with pytest.raises(ValueError, match="an ignore rule must name a key or a path pattern"):
            compare(want, got, ignore=ignore)
    from dscodec.testing import Finish, Text, Usage, verify

    transcript = Transcript(
        "chat_completions",
        {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]},
        [Usage(3), Text("Hi", 1), Finish("stop")],
    )
    with pytest.raises(ValueError, match="an ignore rule must name a key"):
        verify(transcript, ignore=[rule])


def test_merge_deltas_merges_frames_and_refuses_what_is_no_event_list() -> None:
    """Frames (what ``exchange.frames`` and ``transcript.frames`` hold) merge as their events do; a str, a dict or
    a list of numbers is refused rather than answered with garbage."""

    def chunk(text: str) -> str:
        return json.dumps(
            {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}
        )

    role = Frame(
        json.dumps(
            {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}
        )
    )
    frames = [role, Frame(chunk("Hel")), Frame(chunk("lo")), Frame(chunk("!")), Frame("[DONE]")]
    merged = merge_deltas(frames)
    assert all(isinstance(frame, Frame) for frame in merged) and len(merged) == 3
    assert merged[0] is role and merged[-1] is frames[-1]  # what did not merge comes back as it was
    assert merged[1].json()["choices"][0]["delta"]["content"] == "Hello!"
    # Messages frames keep the SSE event name of their run.
    deltas = [
        Frame(json.dumps({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}),
              "content_block_delta")
        for t in ("a", "b")
    ]  # fmt: skip
    (one,) = merge_deltas(deltas)
    assert one.event == "content_block_delta" and one.json()["delta"]["text"] == "ab"
    assert merge_deltas([]) == []
    for bad, message in [
        ("data: {}", "not str"),
        ({"object": "chat.completion.chunk"}, "not dict"),
        ([1, 2, 3], r"events\[0\] is a int"),
        (5, "not int"),
        ([frames[1], json.loads(frames[2].data)], r"events\[1\] is a dict, not a Frame"),
    ]:
        with pytest.raises(TypeError, match=message):
            merge_deltas(bad)  # type: ignore[arg-type]
