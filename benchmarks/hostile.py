"""Growth benchmark: every hostile shape at size n and 4n, and the ratio of the two times.

Each shape builds an input whose size grows with n (a request body, a model output, a list of stream events),
times what dscodec does with it at n and at 4n (the best of ``--runs``), and prints the ratio. A linear cost gives
about 4; a quadratic one about 16. Ratios above 4.5 are flagged. The shapes are the ones a hostile client or
backend would reach for: long stop strings, many tools or calls, long schema arrays, ``-0`` in wide and deep
bodies, deep tool-call arguments in the history, long outputs in every form the stream processor reads, and
the accumulation of many small deltas.

    python benchmarks/hostile.py [--runs 3] [--scale 1.0] [--only NAME] [--clock wall|cpu] [--no-gc]

The last shape, one very long word, measures the Hugging Face ``tokenizers`` BPE call alone: its merge loop on a
single pre-token is not linear, and dscodec cannot cut a word without changing its ids (see docs/limits.md).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

import dscodec
from dscodec.prompt import render
from dscodec.protocols import _tools
from dscodec.stream import _dsml_tags, _stops
from dscodec.vocab import Vocabulary

_VOCAB = Vocabulary.load(None)
_ENCODER = dscodec.PromptEncoder()
MODEL = "DeepSeek-V4-Pro"


def _tool(name: str, required: list[str] | None = None) -> dict[str, Any]:
    parameters: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
    if required is not None:
        parameters["required"] = required
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def _chat(messages: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": messages, **fields}


def _convert(protocol: str, body: dict[str, Any] | bytes, *, encode: bool = True) -> Callable[[], object]:
    """Convert (and render and encode) ``body``; a refusal is a result too (its cost is what is measured)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()

    def run() -> object:
        try:
            request = dscodec.convert(protocol, data)  # type: ignore[arg-type]
        except dscodec.ConversionError as exc:
            return exc.body
        return _ENCODER.encode(request) if encode else dscodec.render(request)

    return run


# -- request shapes ------------------------------------------------------------------------------------------


def tools_duplicate_last(n: int) -> Callable[[], object]:
    tools = [_tool(f"tool_{i}") for i in range(n)] + [_tool("tool_0")]
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], tools=tools))


def many_tools(n: int) -> Callable[[], object]:
    tools = [_tool(f"tool_{i}") for i in range(n)]
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], tools=tools))


def parallel_calls_reversed(n: int) -> Callable[[], object]:
    calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for i in range(n)
    ]
    results = [{"role": "tool", "tool_call_id": f"call_{i}", "content": "ok"} for i in reversed(range(n))]
    messages = [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": calls}, *results]
    return _convert("chat_completions", _chat(messages, tools=[_tool("f")]))


def messages_results_reversed(n: int) -> Callable[[], object]:
    uses = [{"type": "tool_use", "id": f"toolu_{i}", "name": "f", "input": {}} for i in range(n)]
    results = [
        {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "ok"} for i in reversed(range(n))
    ]
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": uses},
            {"role": "user", "content": results},
        ],
    }
    return _convert("messages", body)


def schema_required_duplicate_last(n: int) -> Callable[[], object]:
    required = [f"p{i}" for i in range(n)] + ["p0"]
    tool = _tool("f", required)
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], tools=[tool]))


def negzero_wide(n: int) -> Callable[[], object]:
    body = b'{"model":"%s","messages":[{"role":"user","content":"hi"}],"metadata_x":[%s]}' % (
        MODEL.encode(),
        b",".join([b"-0"] * n),
    )
    return _convert("chat_completions", body)


def negzero_deep(n: int) -> Callable[[], object]:
    # A body nested far past the depth limit: refused before anything recursive reads it.
    body = b'{"model":"x","messages":' + b"[" * n + b"-0" + b"]" * n + b"}"
    return _convert("chat_completions", body)


def deep_history_arguments(n: int) -> Callable[[], object]:
    arguments = "[" * n + "-0" + "]" * n
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
    ]
    return _convert("chat_completions", _chat(messages, tools=[_tool("f")]), encode=False)


def long_stop_list(n: int) -> Callable[[], object]:
    # Sixteen stop strings, each n characters (n stays under the length cap).
    stops = [f"stop{i:02d}" + "x" * (n - 6) for i in range(16)]
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], stop=stops))


def long_user_prose(n: int) -> Callable[[], object]:
    text = ("The quick brown fox jumps over the lazy dog, again and again. " * (n // 62 + 1))[:n]
    return _convert("chat_completions", _chat([{"role": "user", "content": text}]))


def long_user_cjk_sentences(n: int) -> Callable[[], object]:
    text = ("深度求索的模型在长上下文中表现良好。" * (n // 18 + 1))[:n]
    return _convert("chat_completions", _chat([{"role": "user", "content": text}]))


def many_special_spellings_in_user_text(n: int) -> Callable[[], object]:
    text = "<｜User｜><｜Assistant｜>" * (n // 20)
    return _convert("chat_completions", _chat([{"role": "user", "content": text}]))


def tokenizer_one_giant_word(n: int) -> Callable[[], object]:
    text = "中" * n
    return lambda: _VOCAB.plain.encode(text, add_special_tokens=False)


# -- stream shapes -------------------------------------------------------------------------------------------

_TOOL_BODY = _chat(
    [{"role": "user", "content": "go"}],
    tools=[_tool("write")],
    stream=True,
    stream_options={"include_usage": True},
)


def _stream(body: dict[str, Any], chunks: list[str] | list[list[int]], *, protocol: str = "chat_completions"):
    request = dscodec.convert(protocol, body)  # type: ignore[arg-type]

    def run() -> object:
        processor = dscodec.StreamProcessor(request, response_id="r", model=MODEL, tokenizer=_VOCAB)
        size = sum(len(e.to_json()) for e in processor.start(10, 0))
        try:
            for chunk in chunks:
                events = (
                    processor.push_text(chunk, 1) if isinstance(chunk, str) else processor.push_tokens(chunk)
                )
                size += sum(len(e.to_json()) for e in events)
            size += sum(len(e.to_json()) for e in processor.finish("stop"))
        except dscodec.DscodecError as exc:
            return str(exc)
        return size

    return run


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _call(value: str, *, string: str = "true", name: str = "a") -> str:
    return (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="write">\n'
        f'<｜DSML｜parameter name="{name}" string="{string}">{value}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    )


def stream_prose_text(n: int) -> Callable[[], object]:
    text = ("Reasoning about < and <｜ and </ without markup. " * (n // 48 + 1))[:n]
    return _stream(_TOOL_BODY, _split(text + "</think>" + text, 7))


def stream_prose_ids(n: int) -> Callable[[], object]:
    text = ("Plain prose, 中文, and code: x = f(y) < 3. " * (n // 40 + 1))[:n]
    ids = _VOCAB.full.encode(text + "</think>" + text, add_special_tokens=False).ids
    return _stream(_TOOL_BODY, [[i] for i in ids])


def stream_long_string_argument(n: int) -> Callable[[], object]:
    value = ('line with "quotes" and \\ and \n newlines ' * (n // 40 + 1))[:n]
    return _stream(_TOOL_BODY, _split("</think>" + _call(value), 5))


def stream_long_json_argument(n: int) -> Callable[[], object]:
    value = json.dumps([{"k": i, "v": [1.5, -0.0, "s\\u00e9"]} for i in range(n // 32)])
    return _stream(_TOOL_BODY, _split("</think>" + _call(value, string="false"), 5))


def stream_deep_json_argument(n: int) -> Callable[[], object]:
    # Past the depth limit: the value turns into a JSON string (D8), its cost still linear.
    value = "[" * n + "1" + "]" * n
    return _stream(_TOOL_BODY, _split("</think>" + _call(value, string="false"), 5))


def stream_many_parameters(n: int) -> Callable[[], object]:
    params = "".join(
        f'<｜DSML｜parameter name="p{i}" string="{"true" if i % 2 else "false"}">{i}</｜DSML｜parameter>\n'
        for i in range(n // 50)
    )
    text = '</think><｜DSML｜tool_calls>\n<｜DSML｜invoke name="write">\n' + params
    text += "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    return _stream(_TOOL_BODY, _split(text, 9))


def stream_long_stop_string(n: int) -> Callable[[], object]:
    # A stop string of n/64 characters that almost matches over and over, in an output of n characters.
    length = max(8, n // 64)
    stop = "a" * (length - 1) + "b"
    body = _chat([{"role": "user", "content": "go"}], stream=True, stop=[stop], thinking={"type": "disabled"})
    return _stream(body, _split("a" * n, 11))


def stream_json_mode(n: int) -> Callable[[], object]:
    value = json.dumps({"items": [{"id": i, "name": "x" * 10} for i in range(n // 30)]})
    body = _chat(
        [{"role": "user", "content": "json"}],
        stream=True,
        response_format={"type": "json_object"},
        thinking={"type": "disabled"},
    )
    return _stream(body, _split("prefix " + value + " suffix", 6))


def stream_eos_then_output(n: int) -> Callable[[], object]:
    text = "answer" + "<｜end▁of▁sentence｜>" + "ignored text " * (n // 13)
    body = _chat([{"role": "user", "content": "go"}], stream=True, thinking={"type": "disabled"})
    return _stream(body, _split(text, 8))


# -- accumulation --------------------------------------------------------------------------------------------


def _events(protocol: str, body: dict[str, Any], chunks: list[str]) -> list[Any]:
    request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
    processor = dscodec.StreamProcessor(request, response_id="r", model=MODEL, tokenizer=_VOCAB)
    events = list(processor.start(10, 0))
    for chunk in chunks:
        events += processor.push_text(chunk, 1)
    events += processor.finish("stop")
    return [e.to_dict() for e in events]


def _accumulate(protocol: str, body: dict[str, Any], chunks: list[str]) -> Callable[[], object]:
    events = _events(protocol, body, chunks)
    return lambda: dscodec.accumulate(protocol, events)  # type: ignore[arg-type]


def accumulate_responses_text(n: int) -> Callable[[], object]:
    body = {"model": MODEL, "input": "hi", "stream": True, "reasoning": {"effort": "none"}}
    return _accumulate("responses", body, ["ab"] * (n // 2))


def accumulate_responses_arguments(n: int) -> Callable[[], object]:
    body = {
        "model": MODEL,
        "input": "hi",
        "stream": True,
        "tools": [{"type": "function", "name": "write", "parameters": {"type": "object"}}],
    }
    return _accumulate("responses", body, _split("</think>" + _call("x" * n), 2))


def accumulate_chat_arguments(n: int) -> Callable[[], object]:
    return _accumulate("chat_completions", _TOOL_BODY, _split("</think>" + _call("x" * n), 2))


def accumulate_messages_text(n: int) -> Callable[[], object]:
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    }
    return _accumulate("messages", body, ["ab"] * (n // 2))


# -- shapes the hostile fuzzing suggested ----------------------------------------------------------------------


def stream_16_stops_long_output(n: int) -> Callable[[], object]:
    # Sixteen short stop strings that all almost match, against n characters of output in small chunks.
    stops = [f"ab{chr(97 + i)}z" for i in range(16)]
    body = _chat([{"role": "user", "content": "go"}], stream=True, stop=stops, thinking={"type": "disabled"})
    return _stream(body, _split("ab" * (n // 2), 3))


def stream_one_char_chunks(n: int) -> Callable[[], object]:
    text = ("Text with <b>tags</b>, a < b, and 中文. " * (n // 38 + 1))[:n]
    return _stream(_TOOL_BODY, list(text + "</think>" + text))


def stream_newline_run(n: int) -> Callable[[], object]:
    # One newline per push, in the reasoning and then in the content with tools on: every run is held (a block or
    # </think> may follow and would drop it), and grows by one each push.
    newline = _VOCAB.full.encode("\n", add_special_tokens=False).ids
    return _stream(
        _TOOL_BODY,
        [[30]]
        + [newline] * n
        + [_VOCAB.full.encode("</think>x", add_special_tokens=False).ids]
        + [newline] * n
        + [[31]],
    )


def stream_newline_run_with_stops(n: int) -> Callable[[], object]:
    # The same in the content with stop sequences (each newline steps the matcher) and tools on.
    newline = _VOCAB.full.encode("\n", add_special_tokens=False).ids
    body = {**_TOOL_BODY, "stop": ["END", "\n\nX"], "thinking": {"type": "disabled"}}
    return _stream(body, [[30]] + [newline] * n + [[31]])


def stream_partial_marker_runs(n: int) -> Callable[[], object]:
    # Prefixes of markers over and over: each could start one, none does.
    unit = "<｜DSML｜tool_cal</thi<｜DSML<｜"
    text = (unit * (n // len(unit) + 1))[:n]
    return _stream(_TOOL_BODY, _split(text + "</think>" + text, 4))


def stream_huge_attribute(n: int) -> Callable[[], object]:
    text = (
        '</think><｜DSML｜tool_calls>\n<｜DSML｜invoke name="'
        + "n" * n
        + '">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
    )
    return _stream(_TOOL_BODY, _split(text, 3))


def stream_many_invokes(n: int) -> Callable[[], object]:
    invoke = '<｜DSML｜invoke name="write">\n<｜DSML｜parameter name="a" string="true">x</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
    text = "</think><｜DSML｜tool_calls>\n" + invoke * (n // len(invoke)) + "</｜DSML｜tool_calls>"
    return _stream(_TOOL_BODY, _split(text, 7))


def stream_block_ids_in_long_pushes(n: int) -> Callable[[], object]:
    # Many invokes as token ids, a thousand per push: each group holds special ids (the Dsml token, partial
    # UTF-8 before them) and is decoded into units in one pass.
    invoke = '<｜DSML｜invoke name="w">\n<｜DSML｜parameter name="a" string="true">中x</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
    text = "</think><｜DSML｜tool_calls>\n" + invoke * (n // len(invoke)) + "</｜DSML｜tool_calls>"
    ids = _VOCAB.full.encode(text, add_special_tokens=False).ids
    return _stream(_TOOL_BODY, [ids[k : k + 1000] for k in range(0, len(ids), 1000)])


def stream_unclosed_block_junk(n: int) -> Callable[[], object]:
    # A block that never closes, followed by junk with stray closing tags and quotes.
    junk = ('x"y</｜DSML｜parameter>{[' * (n // 24 + 1))[:n]
    return _stream(
        _TOOL_BODY, _split('</think><｜DSML｜tool_calls>\n<｜DSML｜invoke name="write">\n' + junk, 5)
    )


def stream_json_mode_deep(n: int) -> Callable[[], object]:
    body = _chat(
        [{"role": "user", "content": "json"}],
        stream=True,
        response_format={"type": "json_object"},
        thinking={"type": "disabled"},
    )
    depth = 100
    value = '{"a": ' * depth + '"' + "x" * n + '"' + "}" * depth
    return _stream(body, _split(value, 5))


def stream_logprobs_ids(n: int) -> Callable[[], object]:
    body = _chat(
        [{"role": "user", "content": "go"}],
        stream=True,
        logprobs=True,
        top_logprobs=20,
        thinking={"type": "disabled"},
    )
    request = dscodec.convert("chat_completions", body)
    ids = _VOCAB.full.encode(("Plain prose and 中文. " * (n // 20 + 1))[:n], add_special_tokens=False).ids
    top = [(i, -1.0) for i in range(20)]

    def run() -> object:
        processor = dscodec.StreamProcessor(request, response_id="r", model=MODEL, tokenizer=_VOCAB)
        size = sum(len(e.to_json()) for e in processor.start(10, 0))
        for k in range(0, len(ids), 4):
            group = ids[k : k + 4]
            events = processor.push_tokens(group, [(-0.5, top)] * len(group))
            size += sum(len(e.to_json()) for e in events)
        size += sum(len(e.to_json()) for e in processor.finish("stop"))
        return size

    return run


def nested_tool_schema(n: int) -> Callable[[], object]:
    # Wide and 55 objects deep (117 JSON levels, under the limit): the schema check walks every node once.
    inner: dict[str, Any] = {"type": "string"}
    for _ in range(55):
        inner = {"type": "object", "properties": {"x": inner}}
    properties = {f"p{i}": inner for i in range(max(1, n // 100))}
    tool = {
        "type": "function",
        "function": {"name": "f", "parameters": {"type": "object", "properties": properties}},
    }
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], tools=[tool]))


def long_patterns(n: int) -> Callable[[], object]:
    # Patterns of about n characters that pass, built from every construct the regex check reads (groups, named
    # groups, classes, properties, counts, look-around, back-references, comments in extended mode), and one of
    # classes that open with "]" (which the ECMA class rules read as an empty class).
    pieces = [
        f"(?:[a-z\\p{{Greek}}]{{1,2}}|\\d+?|(?<n{i}>x)|(?=a)b*+|\\x{{41}}|\\1) # c\n"
        for i in range(n // 44 + 1)
    ]
    mixed = "(?x)" + "".join(pieces)
    pairs = "[]a]" * (n // 4)
    properties = {"a": {"type": "string", "pattern": mixed}, "b": {"type": "string", "pattern": pairs}}
    tool = {
        "type": "function",
        "function": {"name": "f", "parameters": {"type": "object", "properties": properties}},
    }
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], tools=[tool]))


def schema_references(n: int) -> Callable[[], object]:
    # n nested resources, each 30 levels deep under `dependencies` (crawled only when a reference leads there),
    # and n references into them, through pointers and relative URIs: every subschema is crawled once and
    # compiled once.
    chain: dict[str, Any] = {"type": "string"}
    for _ in range(30):
        chain = {"dependencies": {"a": chain}}
    defs = {f"d{i}": {"$id": f"https://example.com/r/{i}", "dependencies": {"a": chain}} for i in range(n)}
    properties = {
        f"p{i}": {"$ref": f"https://example.com/r/{i}#/dependencies/a" if i % 2 else f"r/{i}"}
        for i in range(n)
    }
    parameters = {"$id": "https://example.com/", "type": "object", "properties": properties, "$defs": defs}
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], tools=[tool]))


def draft07_tuple_schema(n: int) -> Callable[[], object]:
    # A draft-07 schema (items as arrays, checked as "a schema or a non-empty array of schemas"): n properties,
    # each a tuple nested 20 deep; every subschema is checked once.
    inner: dict[str, Any] = {"type": "string"}
    for _ in range(20):
        inner = {"type": "array", "items": [inner, {"type": "number"}], "additionalItems": False}
    properties = {f"p{i}": inner for i in range(max(1, n // 20))}
    parameters = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": properties,
    }
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], tools=[tool]))


def unevaluated_chain(n: int) -> Callable[[], object]:
    # A 2019-09 schema of n definitions, each with an unevaluated keyword and applying the next in place: the
    # in-place closure of each is walked once in all, not once per definition.
    defs = {
        f"d{i}": {
            "allOf": [{"$ref": f"#/$defs/d{i + 1}"}] if i + 1 < n else [{}],
            "unevaluatedProperties": {},
        }
        for i in range(n)
    }
    parameters = {
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "type": "object",
        "$defs": defs,
        "allOf": [{"$ref": "#/$defs/d0"}],
    }
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], tools=[tool]))


def strict_tool_schema_wide(n: int) -> Callable[[], object]:
    properties = {f"p{i}": {"type": "string"} for i in range(n)}
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "strict": True,
            "parameters": {"type": "object", "properties": properties, "required": list(properties)},
        },
    }
    return _convert("chat_completions", _chat([{"role": "user", "content": "hi"}], tools=[tool]))


def many_messages(n: int) -> Callable[[], object]:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} <｜User｜>"} for i in range(n)
    ]
    messages.append({"role": "user", "content": "last"})
    return _convert("chat_completions", _chat(messages, thinking={"type": "disabled"}))


def many_content_parts(n: int) -> Callable[[], object]:
    parts = [{"type": "text", "text": "part "} for _ in range(n)]
    return _convert(
        "messages", {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": parts}]}
    )


def responses_many_items(n: int) -> Callable[[], object]:
    items: list[dict[str, Any]] = []
    for i in range(n // 3):
        items.append({"type": "function_call", "call_id": f"c{i}", "name": "write", "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"c{i}", "output": "ok"})
        items.append({"role": "user", "content": "more"})
    body = {
        "model": MODEL,
        "input": items,
        "tools": [{"type": "function", "name": "write", "parameters": {"type": "object"}}],
    }
    return _convert("responses", body)


def long_string_escapes_body(n: int) -> Callable[[], object]:
    text = "\\u00e9\\n\\ud83d\\ude00" * (n // 4)
    head = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "@"}]})
    raw = head.replace("@", text).encode()
    return _convert("chat_completions", raw)


SHAPES: list[tuple[str, Callable[[int], Callable[[], object]], int]] = [
    ("tools, duplicate name last", tools_duplicate_last, 2_500),
    ("tools, many", many_tools, 2_500),
    ("chat: parallel calls, results reversed", parallel_calls_reversed, 2_500),
    ("messages: tool results reversed", messages_results_reversed, 2_500),
    ("schema required, duplicate last", schema_required_duplicate_last, 25_000),
    ("-0, wide body", negzero_wide, 50_000),
    ("-0, body nested past the limit", negzero_deep, 50_000),
    ("history arguments nested deep", deep_history_arguments, 50_000),
    ("16 stop strings of n characters", long_stop_list, 1_000),
    ("user prose", long_user_prose, 100_000),
    ("user CJK sentences", long_user_cjk_sentences, 50_000),
    ("special spellings in user text", many_special_spellings_in_user_text, 50_000),
    ("stream: text chunks, prose", stream_prose_text, 50_000),
    ("stream: one id per push", stream_prose_ids, 20_000),
    ("stream: long string argument", stream_long_string_argument, 50_000),
    ("stream: long JSON argument", stream_long_json_argument, 50_000),
    ("stream: JSON argument nested deep", stream_deep_json_argument, 20_000),
    ("stream: many parameters", stream_many_parameters, 50_000),
    ("stream: long stop string", stream_long_stop_string, 50_000),
    ("stream: JSON mode", stream_json_mode, 50_000),
    ("stream: output after end of sentence", stream_eos_then_output, 50_000),
    ("accumulate: responses text deltas", accumulate_responses_text, 100_000),
    ("accumulate: responses argument deltas", accumulate_responses_arguments, 100_000),
    ("accumulate: chat argument deltas", accumulate_chat_arguments, 100_000),
    ("accumulate: messages text deltas", accumulate_messages_text, 100_000),
    ("stream: 16 stop strings, long output", stream_16_stops_long_output, 20_000),
    ("stream: one character per push", stream_one_char_chunks, 20_000),
    ("stream: runs of partial markers", stream_partial_marker_runs, 20_000),
    ("stream: a newline run, one per push, tools on", stream_newline_run, 20_000),
    ("stream: a newline run, one per push, stop sequences", stream_newline_run_with_stops, 20_000),
    ("stream: huge invoke name attribute", stream_huge_attribute, 20_000),
    ("stream: many invokes", stream_many_invokes, 50_000),
    ("stream: unclosed block, junk after", stream_unclosed_block_junk, 20_000),
    ("stream: tool-call block, 1000 ids per push", stream_block_ids_in_long_pushes, 50_000),
    ("stream: JSON mode, deep object, long string", stream_json_mode_deep, 50_000),
    ("stream: ids with 20 top logprobs each", stream_logprobs_ids, 5_000),
    ("tool schema 55 deep, n/100 wide", nested_tool_schema, 2_000),
    ("tool schema references, n resources", schema_references, 200),
    ("draft-07 tuple schema, n/20 properties", draft07_tuple_schema, 2_000),
    ("2019-09 unevaluated chain, n definitions", unevaluated_chain, 500),
    ("strict tool schema, n properties", strict_tool_schema_wide, 5_000),
    ("schema patterns of n characters", long_patterns, 20_000),
    ("chat: many messages with special spellings", many_messages, 2_500),
    ("messages: many content parts", many_content_parts, 5_000),
    ("responses: many input items", responses_many_items, 3_000),
    ("body: long string of escapes", long_string_escapes_body, 25_000),
    ("tokenizers: one giant CJK word (library cost)", tokenizer_one_giant_word, 25_000),
]


def forget() -> None:
    """Empty what dscodec remembers between requests (text gaps and prompts, words, tool-call arguments, tool
    schemas, stop-sequence automata, how the block parser read pieces of blocks), so that each run measures the
    work, not a lookup of what the run before it did."""
    _ENCODER.clear_cache()
    _ENCODER.vocabulary._word_ids = {}
    render._ARGUMENTS.clear()
    render._SCHEMA_LINES.clear()
    _tools._SCHEMAS.clear()
    _tools._STRICT.clear()
    _stops._AUTOMATA.clear()
    for steps in _dsml_tags.TAG_STEPS:
        steps.clear()
    for scans in _dsml_tags.SCANS.values():
        scans.clear()
    _dsml_tags.PARAMETERS.clear()


def best(run: Callable[[], object], runs: int, clock: Callable[[], float] = time.perf_counter) -> float:
    run()
    times = []
    for _ in range(runs):
        forget()
        start = clock()
        run()
        times.append(clock() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every base size n")
    parser.add_argument("--only", default=None, help="run the shapes whose name contains this text")
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="wall time, or the CPU time of the process (steadier on a loaded machine; counts tokenizer threads)",
    )
    parser.add_argument(
        "--no-gc",
        action="store_true",
        help="turn CPython's cyclic garbage collector off: shows which growth comes from the collector",
    )
    args = parser.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.no_gc:
        gc.disable()
    print(f"{'shape':<48}{'n':>9}{'t(n) ms':>11}{'t(4n) ms':>11}{'ratio':>8}")
    flagged = 0
    for name, build, base in SHAPES:
        if args.only and args.only not in name:
            continue
        n = max(4, int(base * args.scale))
        small, large = best(build(n), args.runs, clock), best(build(4 * n), args.runs, clock)
        ratio = large / small if small else float("inf")
        flag = "  <-- superlinear" if ratio > 4.5 else ""
        flagged += bool(flag)
        print(f"{name:<48}{n:>9}{small * 1e3:>11.2f}{large * 1e3:>11.2f}{ratio:>8.2f}{flag}")
    print(f"{flagged} shape(s) above 4.5" if flagged else "every shape grows linearly (ratio <= 4.5)")


if __name__ == "__main__":
    main()
