"""dscodec.accumulate on long streams and on the corner cases of collecting deltas.

Accumulation collects the pieces of every growing field and joins them once, so a stream of hundreds of
thousands of deltas costs time in proportion to its length. These tests check the results on such streams (no
timing here: growth is measured by benchmarks/hostile.py): a stream of 100K deltas must add up to exactly what
the same content sent as one delta per field adds up to. The input events are shared objects repeated many times,
which also proves that accumulation never writes into the events it reads.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

import dscodec

N = 100_000

#: Deltas of every width: ASCII, JSON punctuation, non-ASCII, astral characters, an empty one.
PIECES = ["a", "bc", '{"', "é", "日本", "😀", "", "\\n", "}"]


def _cycle(n: int = N) -> list[str]:
    return list(itertools.islice(itertools.cycle(PIECES), n))


def _whole(n: int = N) -> str:
    return "".join(_cycle(n))


def _frozen(events: list[dict[str, Any]]) -> bytes:
    return orjson.dumps(events)


# -- Chat Completions ---------------------------------------------------------------------------------------------


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 5,
        "model": "M",
        "system_fingerprint": "fp",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def _chat_stream(
    texts: list[str], reasoning: list[str], calls: list[tuple[int, str]]
) -> list[dict[str, Any]]:
    """A chat stream: role, reasoning pieces, content pieces, then argument pieces of interleaved calls."""
    shared: dict[str, dict[str, Any]] = {}  # one chunk object per distinct delta, reused

    def chunk(field: str, piece: str) -> dict[str, Any]:
        key = field + "\0" + piece
        if key not in shared:
            shared[key] = _chat_chunk({field: piece})
        return shared[key]

    def call_chunk(index: int, piece: str) -> dict[str, Any]:
        key = f"call{index}\0{piece}"
        if key not in shared:
            shared[key] = _chat_chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        return shared[key]

    out = [_chat_chunk({"role": "assistant", "content": ""})]
    out += [chunk("reasoning_content", p) for p in reasoning]
    out += [chunk("content", p) for p in texts]
    for index in sorted({i for i, _ in calls}):
        out.append(
            _chat_chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": f"call_{index}",
                            "type": "function",
                            "function": {"name": f"f{index}", "arguments": ""},
                        }
                    ]
                }
            )
        )
    out += [call_chunk(i, p) for i, p in calls]
    out.append(_chat_chunk({}, "tool_calls") | {"usage": {"prompt_tokens": 1}})
    return out


@pytest.mark.heavy
def test_chat_many_deltas_add_up_to_the_merged_stream() -> None:
    pieces = _cycle()
    calls = [(i % 2, p) for i, p in enumerate(pieces)]  # two calls, their fragments interleaved
    stream = _chat_stream(pieces, pieces, calls)
    before = _frozen(stream)
    result = dscodec.accumulate("chat_completions", stream)
    assert _frozen(stream) == before
    whole = "".join(pieces)
    message = result["choices"][0]["message"]
    assert message["content"] == whole and message["reasoning_content"] == whole
    assert [c["function"]["arguments"] for c in message["tool_calls"]] == [
        "".join(pieces[0::2]),
        "".join(pieces[1::2]),
    ]
    merged = _chat_stream([whole], [whole], [(0, "".join(pieces[0::2])), (1, "".join(pieces[1::2]))])
    assert orjson.dumps(result) == orjson.dumps(dscodec.accumulate("chat_completions", merged))


def test_chat_argument_fragments_that_are_not_strings_are_skipped() -> None:
    stream = _chat_stream([], [], [(0, "{")])
    stream.insert(-1, _chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": 5}}]}))
    stream.insert(-1, _chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": None}}]}))
    stream.insert(-1, _chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}))
    call = dscodec.accumulate("chat_completions", stream)["choices"][0]["message"]["tool_calls"][0]
    assert call == {
        "index": 0,
        "id": "call_0",
        "type": "function",
        "function": {"name": "f0", "arguments": "{}"},
    }


def test_chat_call_announced_without_arguments_has_empty_ones() -> None:
    stream = [_chat_chunk({"tool_calls": [{"index": 3, "id": "c", "function": {"name": "f"}}]})]
    call = dscodec.accumulate("chat_completions", stream)["choices"][0]["message"]["tool_calls"][0]
    assert call["function"] == {"name": "f", "arguments": ""} and call["index"] == 3


# -- Responses ----------------------------------------------------------------------------------------------------

_LOGPROB = [{"token": "a", "logprob": -0.5, "bytes": [97], "top_logprobs": []}]


def _responses_stream(
    texts: list[str], reasoning: list[str], arguments: list[str], custom: list[str], *, logprob_every: int = 0
) -> list[dict[str, Any]]:
    """An unfinished Responses stream (no ``response.completed``): the output is rebuilt from the deltas."""
    shared: dict[tuple[str, str, bool], dict[str, Any]] = {}

    def delta(kind: str, index: int, piece: str, logprobs: bool = False) -> dict[str, Any]:
        key = (kind, piece, logprobs)
        if key not in shared:
            event: dict[str, Any] = {"type": kind, "output_index": index, "content_index": 0, "delta": piece}
            if kind == "response.output_text.delta":
                event["logprobs"] = _LOGPROB if logprobs else []
            shared[key] = event
        return shared[key]

    out: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "reasoning", "id": "rs", "summary": [], "content": []},
        },
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "reasoning_text", "text": ""},
        },
    ]
    out += [delta("response.reasoning_text.delta", 0, p) for p in reasoning]
    out += [
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {
                "type": "message",
                "id": "msg",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            },
        },
        {
            "type": "response.content_part.added",
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
        },
    ]
    out += [
        delta("response.output_text.delta", 1, p, bool(logprob_every) and i % logprob_every == 0)
        for i, p in enumerate(texts)
    ]
    out.append(
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": {"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": ""},
        }
    )
    out += [delta("response.function_call_arguments.delta", 2, p) for p in arguments]
    out.append(
        {
            "type": "response.output_item.added",
            "output_index": 3,
            "item": {"type": "custom_tool_call", "id": "ct", "call_id": "d", "name": "g", "input": ""},
        }
    )
    out += [delta("response.custom_tool_call_input.delta", 3, p) for p in custom]
    return out


@pytest.mark.heavy
def test_responses_many_deltas_add_up_to_the_merged_stream() -> None:
    pieces = _cycle()
    stream = _responses_stream(pieces, pieces, pieces, pieces, logprob_every=1000)
    before = _frozen(stream)
    result = dscodec.accumulate("responses", stream)
    assert _frozen(stream) == before
    whole = "".join(pieces)
    reasoning, message, call, custom = result["output"]
    assert reasoning["content"] == [{"type": "reasoning_text", "text": whole}]
    assert message["content"][0]["text"] == whole and len(message["content"][0]["logprobs"]) == N // 1000
    assert call["arguments"] == whole and custom["input"] == whole
    merged = _responses_stream([whole], [whole], [whole], [whole])
    merged_result = dscodec.accumulate("responses", merged)
    merged_result["output"][1]["content"][0]["logprobs"] = _LOGPROB * (N // 1000)
    assert orjson.dumps(result) == orjson.dumps(merged_result)


def test_responses_a_completed_stream_is_its_final_response() -> None:
    stream = _responses_stream(_cycle(1000), [], [], [])
    final = {"id": "resp_1", "status": "completed", "output": [{"type": "message", "content": []}]}
    stream.append({"type": "response.completed", "response": final})
    result = dscodec.accumulate("responses", stream)
    assert result == final and result is not final


def test_responses_text_key_keeps_its_place_before_logprobs() -> None:
    """A part announced without ``text`` gets the key at its first delta, before logprobs added later."""
    stream: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "content": []}},
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text"},
        },
    ]
    stream += [
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": p,
            "logprobs": _LOGPROB,
        }
        for p in ("a", "b", "c")
    ]
    part = dscodec.accumulate("responses", stream)["output"][0]["content"][0]
    assert list(part) == ["type", "text", "logprobs"] and part["text"] == "abc" and len(part["logprobs"]) == 3


def test_responses_deltas_continue_announced_text_and_restart_on_a_new_part() -> None:
    added = {"type": "message", "content": [{"type": "output_text", "text": "Hello"}]}

    def text(piece: str, content_index: int = 0) -> dict[str, Any]:
        return {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": content_index,
            "delta": piece,
        }

    stream: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        text(", "),
        text("world"),
        # A second part at index 1 opened implicitly by its first delta.
        text("x", 1),
        # The part at index 0 replaced: deltas now grow the new part from its own text.
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": 7},
        },
        text("!"),
        text("y", 1),
    ]
    content = dscodec.accumulate("responses", stream)["output"][0]["content"]
    assert [p["text"] for p in content] == ["7!", "xy"]
    assert added == {"type": "message", "content": [{"type": "output_text", "text": "Hello"}]}


def test_responses_replaced_item_starts_over() -> None:
    def args(piece: str) -> dict[str, Any]:
        return {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": piece}

    def item(arguments: Any) -> dict[str, Any]:
        return {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "function_call", "name": "f", "arguments": arguments},
        }

    stream = [item("{"), args('"a"'), item(None), args("{}"), args(5), args("")]
    assert dscodec.accumulate("responses", stream)["output"][0]["arguments"] == "{}"


def test_responses_done_item_wins_over_its_deltas() -> None:
    stream = _responses_stream([], [], _cycle(10_000), [])
    done = {"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": "{}"}
    stream.append({"type": "response.output_item.done", "output_index": 2, "item": done})
    assert dscodec.accumulate("responses", stream)["output"][2] == done


# -- Messages -----------------------------------------------------------------------------------------------------


def _messages_stream(texts: list[str], thinking: list[str], json_pieces: list[str]) -> list[dict[str, Any]]:
    shared: dict[tuple[int, str], dict[str, Any]] = {}

    def delta(index: int, kind: str, field: str, piece: str) -> dict[str, Any]:
        if (index, piece) not in shared:
            shared[(index, piece)] = {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": kind, field: piece},
            }
        return shared[(index, piece)]

    out: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "M",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 3, "output_tokens": 0},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
    ]
    out += [delta(0, "thinking_delta", "thinking", p) for p in thinking]
    out.append(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "s"}}
    )
    out.append({"type": "content_block_stop", "index": 0})
    out.append({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}})
    out += [delta(1, "text_delta", "text", p) for p in texts]
    out.append({"type": "content_block_stop", "index": 1})
    out.append(
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
        }
    )
    out += [delta(2, "input_json_delta", "partial_json", p) for p in json_pieces]
    out.append({"type": "content_block_stop", "index": 2})
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 9},
        }
    )
    out.append({"type": "message_stop"})
    return out


def _json_pieces(n: int) -> tuple[list[str], dict[str, Any]]:
    """A JSON object ``{"k": [0, 1, ...]}`` cut into ``n``-ish small fragments, and its value."""
    value = {"k": list(range(n // 2))}
    text = orjson.dumps(value).decode()
    return [text[i : i + 3] for i in range(0, len(text), 3)], value


@pytest.mark.heavy
def test_messages_many_deltas_add_up_to_the_merged_stream() -> None:
    pieces = _cycle()
    json_pieces, value = _json_pieces(N)
    stream = _messages_stream(pieces, pieces, json_pieces)
    before = _frozen(stream)
    result = dscodec.accumulate("messages", stream)
    assert _frozen(stream) == before
    whole = "".join(pieces)
    thinking, text, tool = result["content"]
    assert thinking == {"type": "thinking", "thinking": whole, "signature": "s"}
    assert text == {"type": "text", "text": whole}
    assert tool["input"] == value
    merged = _messages_stream([whole], [whole], ["".join(json_pieces)])
    assert orjson.dumps(result) == orjson.dumps(dscodec.accumulate("messages", merged))


# -- through the stream processor ---------------------------------------------------------------------------------

_TOOL = {
    "type": "function",
    "function": {
        "name": "write",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "n": {"type": "integer"}},
        },
    },
}


def _request(protocol: str) -> dscodec.ConversationRequest:
    if protocol == "responses":
        body: dict[str, Any] = {
            "model": "DeepSeek-V4-Pro",
            "input": "Hi",
            "tools": [{"type": "function", **_TOOL["function"]}],
        }
    elif protocol == "messages":
        function = _TOOL["function"]
        body = {
            "model": "DeepSeek-V4-Pro",
            "max_tokens": 100,
            "thinking": {"type": "enabled", "budget_tokens": 50},
            "messages": [{"role": "user", "content": "Hi"}],
            "tools": [{"name": function["name"], "input_schema": function["parameters"]}],
        }
    else:
        body = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}], "tools": [_TOOL]}
    return dscodec.convert(protocol, body)  # type: ignore[arg-type]


def _output(n: int) -> str:
    text = _whole(n)
    return (
        f'{text}</think>{text}\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="write">\n'
        f'<｜DSML｜parameter name="text" string="true">{text}</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="n" string="false">3</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    )


def _events(protocol: str, chunks: Iterator[str]) -> list[Any]:
    processor = dscodec.StreamProcessor(
        _request(protocol),
        response_id="r1",
        model="M",
        created=1,
        tool_call_id_factory=lambda index: f"call_{index}",
    )
    events = processor.start(5)
    for chunk in chunks:
        events += processor.push_text(chunk)
    return events + processor.finish("stop")


@pytest.mark.parametrize("protocol", ["chat_completions", "responses", "messages"])
def test_processor_stream_of_tiny_pushes_accumulates_like_one_push(protocol: str) -> None:
    """One character per push against the whole output in one push: the same complete response."""
    output = _output(5_000)
    tiny = dscodec.accumulate(protocol, _events(protocol, iter(output)))  # type: ignore[arg-type]
    whole = dscodec.accumulate(protocol, _events(protocol, iter([output])))  # type: ignore[arg-type]
    if protocol == "responses":
        for result in (tiny, whole):
            for item in result["output"]:
                item.pop("id", None)
            result.pop("completed_at", None)
    assert orjson.dumps(tiny) == orjson.dumps(whole)
    text = _whole(5_000)
    strings = list(_strings(tiny))
    # Reasoning and answer; Messages also has the parsed string argument.
    assert strings.count(text) == (3 if protocol == "messages" else 2)
    if protocol == "messages":
        assert tiny["content"][2]["input"] == {"text": text, "n": 3}
    else:
        assert any(s.startswith('{"text": "abc{\\"') for s in strings)


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_events_and_their_dicts_accumulate_alike() -> None:
    events = _events("responses", iter(_output(2_000)))
    wire = [copy.deepcopy(e.to_dict()) for e in events]
    assert dscodec.accumulate("responses", events[:-1]) == dscodec.accumulate("responses", wire[:-1])


def test_responses_result_shares_no_object_with_the_events() -> None:
    """Every item is copied, whether a delta changed it or not, however deep its values nest."""
    deep: Any = {"leaf": [1.5, None, True]}
    for _ in range(100):
        deep = {"next": [deep]}
    stream: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress", "meta": {"k": [1]}}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "deep": deep}},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"type": "function_call", "arguments": "", "extra": {"tags": ["a"]}},
        },
        {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{}"},
        {"type": "response.output_item.done", "output_index": 2, "item": {"type": "x", "list": [[0]]}},
    ]
    before = _frozen(stream)
    result = dscodec.accumulate("responses", stream)
    assert result["output"][0]["deep"] == deep and result["output"][1]["arguments"] == "{}"

    def scramble(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                scramble(item)
            value["scrambled"] = True
        elif isinstance(value, list):
            for item in value:
                scramble(item)
            value.append("scrambled")

    scramble(result)
    assert _frozen(stream) == before


# -- responses built from recorded event dicts are checked ------------------------------------------------------


def _chunk(delta: dict[str, Any] | None = None, finish: Any = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
        **extra,
    }


_MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 0},
    },
}


@pytest.mark.parametrize(
    ("protocol", "events", "field"),
    [
        (
            "chat_completions",
            [
                _chunk(
                    {"tool_calls": [{"index": 0, "id": ["x"], "function": {"name": "f", "arguments": "{}"}}]}
                )
            ],
            r"response\.choices\[0\]\.message\.tool_calls\[0\]\.id is an array",
        ),
        (
            "chat_completions",
            [
                _chunk(
                    {"tool_calls": [{"index": 0, "id": "x", "function": {"name": {"a": 1}, "arguments": ""}}]}
                )
            ],
            r"\.function\.name is an object",
        ),
        ("chat_completions", [_chunk({"content": "hi"}, float("nan"))], r"finish_reason is a number"),
        (
            "chat_completions",
            [_chunk({"content": "hi"}, "stop", usage={"prompt_tokens": "many"})],
            "prompt_tokens",
        ),
        (
            "chat_completions",
            [_chunk({"content": "hi"}, "stop", usage={"prompt_tokens": True})],
            "prompt_tokens",
        ),
        ("chat_completions", [_chunk({"content": "hi"}, "stop", usage={"x": {1, 2}})], r"usage\.x is a set"),
        (
            "chat_completions",
            [_chunk({"content": "hi"}, "stop", usage={"x": float("inf")})],
            "not a finite number",
        ),
        (
            "messages",
            [
                _MESSAGE_START,
                {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": 5}},
            ],
            r"response\.content\[0\]\.id is an integer",
        ),
        (
            "messages",
            [_MESSAGE_START, {"type": "message_delta", "delta": {"stop_reason": {"x": 1}}, "usage": {}}],
            "stop_reason is an object",
        ),
        (
            "messages",
            [_MESSAGE_START, {"type": "message_delta", "delta": {}, "usage": {"output_tokens": "lots"}}],
            "output_tokens is a string",
        ),
        (
            "responses",
            [{"type": "response.completed", "response": {"id": 5, "status": "completed", "output": []}}],
            r"response\.id is an integer",
        ),
        (
            "responses",
            [
                {
                    "type": "response.completed",
                    "response": {
                        "id": "r",
                        "status": "completed",
                        "output": [],
                        "usage": {"input_tokens": 1.5},
                    },
                }
            ],
            "input_tokens is a number",
        ),
    ],
)
def test_a_response_from_damaged_event_dicts_is_refused_naming_the_field(
    protocol: str, events: list[dict[str, Any]], field: str
) -> None:
    with pytest.raises(dscodec.ModelOutputError, match=field):
        dscodec.accumulate(protocol, events)


def _stream_of(protocol: str) -> list[dict[str, Any]]:
    """The event dicts of a short answer (reasoning, then text) in ``protocol``."""
    return [event.to_dict() for event in _events(protocol, iter(["hmm</think>answer"]))]


_PROTOCOLS = ("chat_completions", "responses", "messages")
_ORIGINS = {
    "chat_completions": "a Chat Completions chunk",
    "responses": "an OpenAI Responses event",
    "messages": "an Anthropic Messages event",
}


@pytest.mark.parametrize(("recorded", "given"), [(a, b) for a in _PROTOCOLS for b in _PROTOCOLS if a != b])
@pytest.mark.parametrize("cut", ["whole", "from the second event", "the last event"])
def test_a_stream_of_another_protocol_is_refused_naming_where_it_is_from(
    recorded: str, given: str, cut: str
) -> None:
    """A recording of one protocol given as another's (whole, or only part of it) is no stream of that
    protocol: refused, never an empty answer that looks like a good one."""
    events = _stream_of(recorded)
    events = {"whole": events, "from the second event": events[1:], "the last event": events[-1:]}[cut]
    with pytest.raises(dscodec.ModelOutputError, match="stream event 0 is not") as caught:
        dscodec.accumulate(given, events)  # type: ignore[arg-type]
    assert _ORIGINS[recorded] in str(caught.value)  # where the events are from
    # The same events given as their own protocol add up.
    assert dscodec.accumulate(recorded, events)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("protocol", "event", "said"),
    [
        ("chat_completions", {"id": "c"}, "it has no type"),
        (
            "chat_completions",
            {"type": "error", "error": {"type": "overloaded_error", "message": "x"}},
            "Messages",
        ),
        ("responses", {"response": {"id": "r"}}, "it has no type"),
        ("responses", {"type": 5}, "its type is 5"),
        ("responses", {"type": "message_delta", "delta": {}}, "Messages"),
        ("messages", {"delta": {"text": "x"}}, "it has no type"),
        ("messages", {"type": ["message_start"]}, r"its type is \['message_start'\]"),
        ("messages", {"type": "response.output_text.delta", "delta": "x"}, "Responses"),
    ],
)
def test_an_event_that_is_none_of_its_protocol_is_refused(
    protocol: str, event: dict[str, Any], said: str
) -> None:
    with pytest.raises(dscodec.ModelOutputError, match=said):
        dscodec.accumulate(protocol, [event])  # type: ignore[arg-type]


def test_error_frames_and_unknown_event_types_of_the_protocol_itself_still_add_up() -> None:
    error = {"error": {"message": "overloaded", "type": "server_error", "code": None}}
    assert dscodec.accumulate("chat_completions", [error]) == error
    failure = {"type": "error", "error": {"type": "overloaded_error", "message": "x"}}
    assert dscodec.accumulate("messages", [failure]) == failure
    # A Messages event type dscodec does not know (the stream may grow new ones) is passed over.
    events = _stream_of("messages")
    with_unknown = [events[0], {"type": "message_annotation", "x": 1}, *events[1:]]
    assert dscodec.accumulate("messages", with_unknown) == dscodec.accumulate("messages", events)
    # A Responses event of an unknown kind is passed over too.
    events = _stream_of("responses")
    with_unknown = [events[0], {"type": "response.something_new", "sequence_number": 1}, *events[1:]]
    assert dscodec.accumulate("responses", with_unknown) == dscodec.accumulate("responses", events)


def test_recorded_streams_of_every_protocol_pass_the_check() -> None:
    """The check is of the reference's own shapes: every recorded stream accumulates."""
    from dscodec.testing import loads_transcripts

    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
    seen = 0
    for protocol in ("chat_completions", "responses", "messages"):
        for path in sorted((fixtures / protocol).glob("*.jsonl"))[::7]:
            for transcript in loads_transcripts(path.read_text(encoding="utf-8")):
                events = [orjson.loads(f.data) for f in transcript.frames if not f.is_done]
                if events:
                    dscodec.accumulate(protocol, events)
                    seen += 1
    assert seen > 300


def test_the_check_refuses_an_object_that_holds_itself_and_walks_shared_ones_once() -> None:
    usage: dict[str, Any] = {"prompt_tokens": 1}
    usage["again"] = usage
    with pytest.raises(dscodec.ModelOutputError, match=r"response\.usage\.again holds itself"):
        dscodec.accumulate("chat_completions", [_chunk({"content": "hi"}, "stop", usage=usage)])
    shared: Any = [1]
    for _ in range(64):  # 2**64 paths through 65 lists: each list is walked once
        shared = [shared, shared]
    result = dscodec.accumulate("chat_completions", [_chunk({"content": "hi"}, "stop", usage={"x": shared})])
    assert result["usage"]["x"] is shared


def _nested(levels: int) -> Any:
    """``levels`` arrays, one inside the other."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def _deep_field_events(protocol: str, levels: int) -> list[dict[str, Any]]:
    """A stream whose response carries a field nested ``levels`` arrays deep, two levels below the response."""
    field = _nested(levels)
    if protocol == "chat_completions":
        return [_chunk({"content": "hi"}, "stop", usage={"x": field})]
    if protocol == "responses":
        response = {"id": "r", "object": "response", "created_at": 1, "status": "in_progress", "model": "m"}
        return [
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": {**response, "metadata": {"a": field}},
            }
        ]
    message = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
    }
    start = {**message, "usage": {"input_tokens": 1, "output_tokens": 0}, "metadata": {"a": field}}
    return [{"type": "message_start", "message": start}, {"type": "message_stop"}]


@pytest.mark.parametrize("protocol", ["chat_completions", "responses", "messages"])
def test_the_check_refuses_nesting_deeper_than_orjson_writes(protocol: str) -> None:
    """A complete response built from dicts holds at most 254 levels of arrays and objects (the response
    included), what orjson writes: deeper, it is refused by name rather than returned; far deeper too, without
    running out of recursion."""
    result = dscodec.accumulate(protocol, _deep_field_events(protocol, 252))  # 2 levels above it
    held = result["usage"]["x"] if protocol == "chat_completions" else result["metadata"]["a"]
    assert held == _nested(252) and orjson.loads(orjson.dumps(result)) == result
    for levels in (253, 300, 5000):
        with pytest.raises(dscodec.ModelOutputError, match="nests deeper than 254 arrays and objects"):
            dscodec.accumulate(protocol, _deep_field_events(protocol, levels))
