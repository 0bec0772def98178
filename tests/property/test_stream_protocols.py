"""Properties of the whole response path, for every protocol (Chat Completions, Responses, Messages).

* Split invariance: any split of the model output into text chunks, and the token ids one at a time, give the
  same complete response as the whole output in one chunk.
* No leaks: with tool parsing on, no DSML markup, partial marker, ``</think>`` or end-of-sentence token reaches
  reasoning, content or arguments; arguments of well-formed calls are valid JSON (what ``dscodec._json.loads``
  accepts) holding the parameters written.
* D15: output after the end-of-sentence token (its id or its spelling) changes nothing but the token count.
* Streams add up: the deltas of the stream concatenate to the texts and arguments of the complete response.
* Hostile input: any text, any ids (invalid ones too), any counts and log probabilities give events or a
  ``ModelOutputError`` (after which ``fail()`` tells the client), never another exception.
"""

from __future__ import annotations

import itertools
import json
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

import dscodec
from dscodec._json import loads
from dscodec.testing import compare, merge_deltas
from dscodec.vocab import Vocabulary

VOCAB = Vocabulary.load(None)
EOS = "<｜end▁of▁sentence｜>"
PROTOCOLS = ("chat_completions", "responses", "messages")
TOOL = {
    "name": "lookup",
    "description": "Look something up",
    "parameters": {"type": "object", "properties": {}},
}

plain = st.text(alphabet="ab <>/\n｜{}\"'\\é中😀", max_size=12)
values = st.one_of(
    st.text(alphabet='xy <>\n"\\中😀/', max_size=10).map(lambda v: (v, "true", v)),
    st.sampled_from(
        [
            ("1", "false", 1),
            ("-2.5", "false", -2.5),
            ("true", "false", True),
            ("null", "false", None),
            ('[1, "a"]', "false", [1, "a"]),
            ('{"k": {"n": 2}}', "false", {"k": {"n": 2}}),
        ]
    ),
)


@st.composite
def outputs(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """A model output (reasoning, answer, maybe a tool-call block) and the calls it contains."""
    reasoning = draw(plain).replace("</think>", "")
    answer = draw(plain)
    calls: list[dict[str, Any]] = []
    text = reasoning + "</think>" + answer
    if draw(st.booleans()):
        opener, invoke, param = draw(
            st.sampled_from([("tool_calls", "invoke", "parameter"), (" calls", " invoke", " parameter")])
        )
        block = f"\n\n<｜DSML｜{opener}>\n"
        for _ in range(draw(st.integers(min_value=1, max_value=2))):
            params = draw(st.dictionaries(st.sampled_from(["q", "n", "flag"]), values, max_size=3))
            block += f'<｜DSML｜{invoke} name="lookup">\n'
            for key, (raw, is_string, _) in params.items():
                block += f'<｜DSML｜{param} name="{key}" string="{is_string}">{raw}</｜DSML｜{param}>\n'
            block += f"</｜DSML｜{invoke}>\n"
            calls.append({key: value for key, (_, _, value) in params.items()})
        text += block + f"</｜DSML｜{opener}>"
    return text, calls


def _body(protocol: str, thinking: bool) -> dict[str, Any]:
    switch = {"type": "enabled" if thinking else "disabled"}
    if protocol == "chat_completions":
        return {
            "model": "DeepSeek-V4-Pro",
            "messages": [{"role": "user", "content": "q"}],
            "thinking": switch,
            "tools": [{"type": "function", "function": TOOL}],
        }
    if protocol == "responses":
        return {
            "model": "DeepSeek-V4-Pro",
            "input": "q",
            "reasoning": {"effort": "high" if thinking else "none"},
            "tools": [{"type": "function", **TOOL}],
        }
    return {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "q"}],
        "thinking": switch,
        "tools": [
            {"name": TOOL["name"], "description": TOOL["description"], "input_schema": TOOL["parameters"]}
        ],
    }


def _run(protocol: str, thinking: bool, pushes: list[Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    request = dscodec.convert(protocol, _body(protocol, thinking))  # type: ignore[arg-type]
    processor = dscodec.StreamProcessor(
        request, response_id="r1", model="M", created=1, tool_call_id_factory=lambda i: f"call_{i:02d}_x"
    )
    writer = processor._writer
    if hasattr(writer, "clock"):
        writer.clock = lambda: 2  # Responses completed_at
    events = processor.start(10, 2)
    for push in pushes:
        if isinstance(push, str):
            events += processor.push_text(push, 1)
        else:
            events += processor.push_tokens(push)
    events += processor.finish("stop")
    return [e.to_dict() for e in events], dscodec.accumulate(protocol, events)  # type: ignore[arg-type]


def _parts(protocol: str, response: dict[str, Any]) -> tuple[str, str, list[tuple[str, Any]]]:
    """(reasoning, content, [(tool name, parsed arguments)]) of a complete response."""
    if protocol == "chat_completions":
        message = response["choices"][0]["message"]
        calls = [
            (c["function"]["name"], loads(c["function"]["arguments"])) for c in message.get("tool_calls", [])
        ]
        return message.get("reasoning_content") or "", message["content"], calls
    if protocol == "responses":
        reasoning = content = ""
        calls = []
        for item in response["output"]:
            if item["type"] == "reasoning":
                reasoning += "".join(part["text"] for part in item["content"])
            elif item["type"] == "message":
                content += "".join(part["text"] for part in item["content"])
            elif item["type"] == "function_call":
                calls.append((item["name"], loads(item["arguments"])))
        return reasoning, content, calls
    reasoning = content = ""
    calls = []
    for block in response["content"]:
        if block["type"] == "thinking":
            reasoning += block["thinking"]
        elif block["type"] == "text":
            content += block["text"]
        elif block["type"] == "tool_use":
            calls.append((block["name"], block["input"]))
    return reasoning, content, calls


def _streamed(protocol: str, events: list[dict[str, Any]]) -> tuple[str, str, list[str]]:
    """(reasoning, content, [arguments]) concatenated from the stream's deltas."""
    reasoning, content, args = [], [], {}
    for event in events:
        if protocol == "chat_completions":
            delta = event["choices"][0]["delta"] if event.get("choices") else {}
            reasoning.append(delta.get("reasoning_content") or "")
            content.append(delta.get("content") or "")
            for call in delta.get("tool_calls", []):
                args[call["index"]] = args.get(call["index"], "") + call["function"].get("arguments", "")
        elif protocol == "responses":
            kind = event["type"]
            if kind == "response.reasoning_text.delta":
                reasoning.append(event["delta"])
            elif kind == "response.output_text.delta":
                content.append(event["delta"])
            elif kind == "response.function_call_arguments.delta":
                args[event["output_index"]] = args.get(event["output_index"], "") + event["delta"]
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "thinking_delta":
                reasoning.append(delta["thinking"])
            elif delta["type"] == "text_delta":
                content.append(delta["text"])
            elif delta["type"] == "input_json_delta":
                args[event["index"]] = args.get(event["index"], "") + delta["partial_json"]
    return "".join(reasoning), "".join(content), [args[k] for k in sorted(args)]


#: An output, cut points into it, a protocol and a thinking mode.
SPLITS = {
    "output": outputs(),
    "cuts": st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    "protocol": st.sampled_from(PROTOCOLS),
    "thinking": st.booleans(),
}


def _split(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@given(**SPLITS)
def test_any_split_gives_the_same_response(
    output: tuple[str, list[dict[str, Any]]], cuts: list[int], protocol: str, thinking: bool
) -> None:
    text, calls = output
    whole_events, whole = _run(protocol, thinking, [text])
    ids = VOCAB.full.encode(text, add_special_tokens=False).ids
    for pushes in (_split(text, cuts), list(text), [[i] for i in ids]):
        _, response = _run(protocol, thinking, pushes)
        # Usage counts the chunks the backend reported; everything else is the same whatever the chunking.
        assert _without_usage(response) == _without_usage(whole)

    reasoning, content, tool_calls = _parts(protocol, whole)
    for field in (reasoning, content):
        assert "｜DSML｜" not in field and "</think>" not in field and EOS not in field
    assert tool_calls == [("lookup", call) for call in calls]

    assert _streamed(protocol, whole_events) == (
        reasoning,
        content,
        [_arguments(protocol, whole, i) for i in range(len(calls))],
    )


@given(**SPLITS)
def test_merged_deltas_make_any_split_compare_equal(
    output: tuple[str, list[dict[str, Any]]], cuts: list[int], protocol: str, thinking: bool
) -> None:
    """The testing kit's merge_deltas: merged, the events of any split compare equal to those of the whole output
    (usage aside: it counts the chunks), and merging keeps what the stream adds up to."""
    text, _ = output
    whole, _ = _run(protocol, thinking, [text])
    split, response = _run(protocol, thinking, _split(text, cuts))
    merged = merge_deltas(split)
    assert merge_deltas(merged) == merged
    assert _streamed(protocol, merged) == _streamed(protocol, split)
    assert dscodec.accumulate(protocol, merged) == response  # type: ignore[arg-type]
    assert compare(whole, split, merge_deltas=True, ignore=["usage"]) == []
    ids = VOCAB.full.encode(text, add_special_tokens=False).ids
    by_ids, _ = _run(protocol, thinking, [ids[k : k + 3] for k in range(0, len(ids), 3)])
    assert compare(whole, by_ids, merge_deltas=True, ignore=["usage"]) == []


def _without_usage(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "usage"}


def _arguments(protocol: str, response: dict[str, Any], index: int) -> str:
    """The arguments text of call ``index`` in a complete response (Messages keeps the parsed object only)."""
    if protocol == "chat_completions":
        return str(response["choices"][0]["message"]["tool_calls"][index]["function"]["arguments"])
    if protocol == "responses":
        return str([i for i in response["output"] if i["type"] == "function_call"][index]["arguments"])
    block = [b for b in response["content"] if b["type"] == "tool_use"][index]
    return json.dumps(block["input"], ensure_ascii=False)


@given(
    output=outputs(),
    tail=st.text(alphabet="ab <>/\n｜{}", max_size=12)
    | st.sampled_from(["</think>x", "\n\n<｜DSML｜tool_calls>"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    protocol=st.sampled_from(PROTOCOLS),
    thinking=st.booleans(),
)
def test_d15_output_after_the_end_of_sentence_token_changes_nothing(
    output: tuple[str, list[dict[str, Any]]], tail: str, cuts: list[int], protocol: str, thinking: bool
) -> None:
    text, _ = output
    _, alone = _run(protocol, thinking, [text])
    full = text + EOS + tail
    ids = VOCAB.full.encode(full, add_special_tokens=False).ids
    for pushes in ([full], _split(full, cuts), [[i] for i in ids]):
        _, response = _run(protocol, thinking, pushes)
        assert _without_usage(response) == _without_usage(alone)
        assert EOS not in json.dumps(response, ensure_ascii=False)


def _output_tokens(protocol: str, response: dict[str, Any]) -> int:
    usage = response["usage"]
    return int(usage["completion_tokens"] if protocol == "chat_completions" else usage["output_tokens"])


BAD_IDS = st.sampled_from([-1, -(2**63), 2**32, 2**64, True, 1.5, None, "7", [3]])
IDS = st.lists(
    st.integers(min_value=0, max_value=130_000)
    | st.sampled_from([128821, 128822, 128825, 1, 0, 2**32 - 1])
    | BAD_IDS,
    max_size=6,
)
LOGPROB = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([None, "x", True, -1.0])
ENTRY = LOGPROB | st.tuples(
    LOGPROB, st.lists(st.tuples(st.integers(0, 130_000) | BAD_IDS, LOGPROB), max_size=2)
)


@st.composite
def ids_with_logprobs(draw: st.DrawFn) -> tuple[list[Any], list[Any]]:
    """Ids with one log probability entry each (or, now and then, one too many or too few)."""
    ids = draw(IDS)
    count = len(ids) + draw(st.sampled_from([0, 0, 0, 0, 1, -1]))
    return ids, [draw(ENTRY) for _ in range(max(0, count))]


COUNTS = st.integers(min_value=0, max_value=5) | st.sampled_from([-1, 2**63, 2**63 - 1, True, 1.5, None])


@given(
    pushes=st.lists(
        st.one_of(
            st.tuples(st.text(max_size=20), COUNTS),
            IDS,
            ids_with_logprobs(),
        ),
        max_size=15,
    ),
    start=st.none() | st.tuples(COUNTS, COUNTS),
    protocol=st.sampled_from(PROTOCOLS),
    thinking=st.booleans(),
    finish=st.sampled_from([None, "stop", "length", "content_filter"]),
)
def test_arbitrary_pushes_give_events_or_a_model_output_error(
    pushes: list[Any], start: Any, protocol: str, thinking: bool, finish: Any
) -> None:
    """Any text and any ids (unknown and invalid ones too), counts and log probabilities: each call gives events
    or raises ModelOutputError, after which fail() ends the stream with the protocol's error event."""
    request = dscodec.convert(protocol, _body(protocol, thinking))  # type: ignore[arg-type]
    processor = dscodec.StreamProcessor(request, response_id="r1", model="M", created=1)
    events: list[Any] = []
    error: dscodec.ModelOutputError | None = None
    try:
        if start is not None:
            events += processor.start(*start)
        for push in pushes:
            if processor.finished:
                break
            if isinstance(push, tuple) and isinstance(push[0], str):
                events += processor.push_text(push[0], push[1])
            elif isinstance(push, tuple):
                events += processor.push_tokens(push[0], push[1])
            else:
                events += processor.push_tokens(push)
        events += processor.finish(finish)
    except dscodec.ModelOutputError as exc:
        error = exc
        events += processor.fail(exc)
    response = dscodec.accumulate(protocol, events)  # type: ignore[arg-type]
    if error is None:
        assert processor.finished
        assert response and response.get("error") is None and response.get("type") != "error"
        assert 0 <= _output_tokens(protocol, response) < 2**63
    else:
        assert response.get("error") or response.get("type") == "error"
    for event in events:
        json.loads(event.to_json(), parse_constant=_no_constants)  # no NaN or Infinity on the wire


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _pushed(
    protocol: str,
    thinking: bool,
    pushes: list[Any],
    *,
    coalesce: bool,
    finish: Any = "stop",
    fail: bool = False,
) -> tuple[list[list[str]], dict[str, Any] | None, list[str], tuple[str, str, list[str]]]:
    """Every push's events (as JSON), the complete response (None when the stream failed), the names of the last
    events (the end's, or fail()'s) and the texts all deltas add up to, of a processor fed ``pushes``: text
    chunks, id lists, or (ids, log probabilities)."""
    request = dscodec.convert(protocol, _body(protocol, thinking))  # type: ignore[arg-type]
    processor = dscodec.StreamProcessor(
        request,
        response_id="r1",
        model="M",
        created=1,
        tool_call_id_factory=lambda i: f"call_{i:02d}_x",
        coalesce=coalesce,
    )
    writer = getattr(processor._writer, "_inner", processor._writer)
    if hasattr(writer, "clock"):
        writer.clock = lambda: 2  # Responses completed_at
    events = processor.start(10, 2)
    per_push = []
    for push in pushes:
        if processor.finished:
            break
        if isinstance(push, str):
            made = processor.push_text(push, 1)
        elif isinstance(push, tuple):
            made = processor.push_tokens(push[0], push[1])
        else:
            made = processor.push_tokens(push)
        per_push.append([e.to_json() for e in made])
        events += made
    last = processor.fail("the backend went away") if fail else processor.finish(finish)
    events += last
    response = None if fail else dscodec.accumulate(protocol, events)  # type: ignore[arg-type]
    streamed = _streamed(protocol, [e.to_dict() for e in events])
    return per_push, response, [e.event or json.dumps(list(e.to_dict())) for e in last], streamed


@given(
    **SPLITS,
    ids=st.booleans(),
    logprobs=st.lists(st.integers(0, 40), max_size=3),
    finish=st.sampled_from(["stop", "length", None]),
    fail=st.booleans(),
)
def test_coalesced_events_add_up_to_the_same_response(
    output: tuple[str, list[dict[str, Any]]],
    cuts: list[int],
    protocol: str,
    thinking: bool,
    ids: bool,
    logprobs: list[int],
    finish: Any,
    fail: bool,
) -> None:
    """A processor that coalesces gives no events for a push, and ends with events that add up to the complete
    response the events one by one add up to: text chunks or ids cut anyhow, some ids with log probabilities
    (never merged), a length end, or a failure (the same error event, after the same content)."""
    text, _ = output
    pushes: list[Any] = []
    for k, piece in enumerate(_split(text, cuts)):
        if not ids:
            pushes.append(piece)
            continue
        group = VOCAB.full.encode(piece, add_special_tokens=False).ids
        if k in logprobs and group:
            pushes.append((group, [(-0.5, [(t, -0.5)]) for t in group]))
        else:
            pushes.append(group)
    plain = _pushed(protocol, thinking, pushes, coalesce=False, finish=finish, fail=fail)
    coalesced = _pushed(protocol, thinking, pushes, coalesce=True, finish=finish, fail=fail)
    # Gathered text read every few ids as well (the outputs here are shorter than the usual gathering).
    with mock.patch.object(dscodec.processor, "_GATHER_IDS", 3):
        often = _pushed(protocol, thinking, pushes, coalesce=True, finish=finish, fail=fail)
    for made in (coalesced, often):
        assert all(pushed == [] for pushed in made[0])
        assert made[1] == plain[1]
        assert made[2][-1:] == plain[2][-1:]  # the same last event (the end, or the error)
        assert made[3] == plain[3]


def test_coalesce_must_be_a_bool() -> None:
    request = dscodec.convert("messages", _body("messages", False))  # type: ignore[arg-type]
    with pytest.raises(dscodec.StreamStateError, match="coalesce must be a bool"):
        dscodec.StreamProcessor(request, response_id="r", model="M", coalesce="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("tokenizer", [5, b"tokenizer.json", ["t.json"], object()])
def test_a_tokenizer_of_no_known_kind_is_refused_when_the_processor_is_made(tokenizer: Any) -> None:
    """Not at the first push of ids, mid-stream (a stream of text chunks would never have found it)."""
    request = dscodec.convert("messages", _body("messages", False))  # type: ignore[arg-type]
    with pytest.raises(dscodec.StreamStateError, match="tokenizer must be None, a path"):
        dscodec.StreamProcessor(request, response_id="r", model="M", tokenizer=tokenizer)
