"""Response-path benchmark: model output pushed token by token, dscodec against the reference, in one process.

One output per kind, about 10K tokens each (``--tokens``): ``mixed`` (reasoning, an answer, then a tool call whose
string argument is 2K characters of source code), ``prose`` (English reasoning and answer), ``cjk`` (Chinese
reasoning and answer, from ``benchmarks/workloads.py``), ``long string argument`` (one tool call writing a long
file), ``many small parameters`` (many calls, each with short string, number, boolean and list parameters),
``JSON mode`` (``response_format: json_object``, a long JSON document), ``code in the answer`` (Python source,
``<`` and all, written in the answer with tools on, where a ``<`` may begin a block opener), ``HTML in the
answer`` (the same with pydoc's HTML pages, many times denser in ``<``) and ``prose with
stops`` (the prose output for a request with two stop sequences; in Messages too, not in Responses, which
has none). Both sides decode token ids, run the
output state machine and write Chat Completions chunks serialised to JSON (every event's ``to_json()``), pushing
one id at a time and four at a time; then the same output as text chunks, the text of one id or of four with
their token count (what a backend that detokenizes itself sends): one row per kind, input and push size
(``--input ids`` or ``text`` for one of the two).

The next two columns are a floor: the least work a Python codec does per push to answer with one chunk (check
the ids, decode their bytes, escape the text, build and serialise one chunk event; no markers, no stages, no tool
calls; for text chunks the same without decoding), and its ratio to the reference. Where the floor's ratio is above a goal, no Python codec that makes one
call per push reaches that goal on that output. For token ids two more columns give a second floor: the same
decoding, then the very events dscodec answers each push with, written by its Chat writer and serialised (what
is left when reading the output costs nothing). Where its ratio is near a goal, the goal leaves next to nothing
for reading markers and tool-call markup. For many small parameters, where nearly every event comes from
tool-call markup, a third floor (``made``) is that one call per push, with the push's neutral events made afresh
before the writer writes them: what a codec laid out as dscodec is (a reader that makes neutral events, then a
protocol writer) pays when reading the markup costs nothing.

Then short responses: the first 50 tokens of each output, one id per push, each response a new request (its
JSON body parsed and converted, a new processor): what a request pays once, side by side; then the same short
responses phase by phase (convert, set-up, start, pushes, finish), with each side's conversion of the body timed
back to back as well (what it costs with its code and data still in the caches). Then the same outputs
as token ids, one and four per push, answering the same request in OpenAI Responses and in Anthropic Messages
(their events serialised; JSON mode in Responses only, as Messages has none). Then half of the prose output, one
id per push, each with its log probability and five alternatives, in Chat Completions and Responses (Messages
streams none): the same five values for every id (``same``), then 32-bit floats that hardly ever repeat, as a
model server sends them (``varied``); before them, complete responses of requests that are not streamed, four ids per push, built by a
coalescing processor and ``accumulate`` against the reference's response accumulator. And a last measurement pushes the same output with a tool argument ten times longer, to show that
the cost per character stays flat (linear total cost).

    python benchmarks/stream.py [--runs 5] [--tokens 10000] [--kinds prose,cjk]

The reference is optional (``pip install deepseek-recipe``); without it only dscodec's figures are printed.
"""

from __future__ import annotations

import argparse
import codecs
import dataclasses
import json
import random
import re
import statistics
import struct
import sys
import sysconfig
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads

import dscodec
from dscodec._json import string_literal
from dscodec.protocols._wire import WireEvent, json_event
from dscodec.stream.decoder import IncrementalDecoder
from dscodec.stream.machine import OutputMachine
from dscodec.vocab import Vocabulary, bundled_tokenizer_path

TOOL = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        },
    },
}
BODY = {
    "model": "DeepSeek-V4-Pro",
    "messages": [{"role": "user", "content": "Refactor the module and write it back."}],
    "tools": [TOOL],
    "stream": True,
    "stream_options": {"include_usage": True},
}
#: The same requests in the other two protocols (Messages has no JSON mode).
PROTOCOL_BODIES: dict[str, dict[str, dict[str, Any]]] = {
    "responses": {
        "tools": {
            "model": "DeepSeek-V4-Pro",
            "input": "Refactor the module and write it back.",
            "tools": [{"type": "function", **TOOL["function"]}],
            "stream": True,
        },
        "json": {
            "model": "DeepSeek-V4-Pro",
            "input": "List the items as JSON.",
            "reasoning": {"effort": "none"},
            "text": {"format": {"type": "json_object"}},
            "stream": True,
        },
    },
    "messages": {
        "tools": {
            "model": "DeepSeek-V4-Pro",
            "max_tokens": 100_000,
            "messages": [{"role": "user", "content": "Refactor the module and write it back."}],
            "thinking": {"type": "enabled", "budget_tokens": 50_000},
            "tools": [
                {
                    "name": TOOL["function"]["name"],
                    "description": TOOL["function"]["description"],
                    "input_schema": TOOL["function"]["parameters"],
                }
            ],
            "stream": True,
        },
    },
}
#: BODY with stop sequences (Chat and Messages have them; Responses has none).
STOP_BODY = {**BODY, "stop": ["END OF ANSWER", "\n\n\n"]}
PROTOCOL_BODIES["messages"]["stops"] = {
    **PROTOCOL_BODIES["messages"]["tools"],
    "stop_sequences": ["END OF ANSWER", "\n\n\n"],
}
JSON_BODY = {
    "model": "DeepSeek-V4-Pro",
    "messages": [{"role": "user", "content": "List the items as JSON."}],
    "thinking": {"type": "disabled"},
    "response_format": {"type": "json_object"},
    "stream": True,
    "stream_options": {"include_usage": True},
}


def _source(chars: int) -> str:
    """``chars`` characters of real Python source (the standard library's), cut at a line end."""
    text = ""
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        text += path.read_text(encoding="utf-8", errors="replace")
        if len(text) > chars:
            break
    return text[: text.rfind("\n", 0, chars) + 1]


def _html(chars: int) -> str:
    """About ``chars`` characters of HTML: pydoc's pages of a few standard modules."""
    import pydoc

    text = ""
    for name in ("json", "textwrap", "string", "difflib", "csv", "argparse", "email", "http"):
        text += pydoc.HTMLDoc().docmodule(__import__(name))
        if len(text) > chars:
            break
    return text[:chars]


def build_output(argument_chars: int, prose_tokens: int, vocab: Vocabulary) -> list[int]:
    """Token ids of reasoning + answer (``prose_tokens`` in all) + a tool call with an ``argument_chars`` argument."""
    argument = _source(argument_chars)
    call = (
        '\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="write_file">\n'
        '<｜DSML｜parameter name="path" string="true">lib/module.py</｜DSML｜parameter>\n'
        f'<｜DSML｜parameter name="content" string="true">{argument}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    )
    words = vocab.full.encode(_source(200_000), add_special_tokens=False).ids
    reasoning = vocab.full.decode(words[: prose_tokens // 2]) if prose_tokens else ""
    answer = vocab.full.decode(words[prose_tokens // 2 : prose_tokens]) if prose_tokens else ""
    # The prose must not contain markup of its own: angle brackets become parentheses.
    text = reasoning.replace("<", "(") + "</think>" + answer.replace("<", "(") + call
    return vocab.full.encode(text, add_special_tokens=False).ids


def _fit(text: str, tokens: int, vocab: Vocabulary) -> str:
    """``text`` cut to about ``tokens`` tokens (at a token boundary)."""
    ids = vocab.full.encode(text, add_special_tokens=False).ids
    return str(vocab.full.decode(ids[:tokens]))


def _english(tokens: int, vocab: Vocabulary) -> str:
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[name] for name in sorted(topics))
    return _fit(text.replace("<", "("), tokens, vocab)


def _params_call(calls: int) -> str:
    """``calls`` invokes of a tool with many small parameters (strings, numbers, booleans, a list)."""
    out = ["\n\n<｜DSML｜tool_calls>\n"]
    for k in range(calls):
        out.append('<｜DSML｜invoke name="bash">\n')
        out.append(f'<｜DSML｜parameter name="command" string="true">ls -la src/{k}</｜DSML｜parameter>\n')
        out.append(f'<｜DSML｜parameter name="timeout" string="false">{k * 7 % 300}</｜DSML｜parameter>\n')
        out.append('<｜DSML｜parameter name="verbose" string="false">true</｜DSML｜parameter>\n')
        out.append(f'<｜DSML｜parameter name="cwd" string="true">/work/{k % 9}</｜DSML｜parameter>\n')
        out.append(f'<｜DSML｜parameter name="args" string="false">["-n", {k}]</｜DSML｜parameter>\n')
        out.append("</｜DSML｜invoke>\n")
    out.append("</｜DSML｜tool_calls>")
    return "".join(out)


def outputs(vocab: Vocabulary, tokens: int) -> dict[str, tuple[dict[str, Any], list[int]]]:
    """One output of about ``tokens`` tokens per kind: the request body it answers and its token ids."""
    encode = vocab.full.encode
    cjk = workloads._cjk_text(random.Random(7), tokens * 2)
    english = _english(tokens, vocab)
    records = [
        {"id": k, "name": f"item {k}", "tags": ["a", "b"], "score": k * 0.5, "ok": k % 2 == 0}
        for k in range(tokens)
    ]
    json_text = _fit(json.dumps({"items": records}, indent=2), tokens - 2, vocab) + "\n]}"
    half = tokens // 2
    texts = {
        "mixed": None,
        "prose": _fit(english, half, vocab) + "</think>" + _fit(english[len(english) // 2 :], half, vocab),
        "cjk": _fit(cjk, half, vocab) + "</think>" + _fit(cjk[len(cjk) // 2 :], half, vocab),
        "long string argument": "Write it.</think>" + build_output_text(_source(tokens * 4), vocab),
        "many small parameters": "Run them.</think>" + _params_call(tokens // 60),
        "JSON mode": json_text,
        # Source code in the answer, "<" and all, with tools on (a "<" may begin a block opener).
        "code in the answer": _fit(english, half // 4, vocab)
        + "</think>Here it is:\n\n```python\n"
        + _fit(_source(tokens * 4), tokens - half // 4, vocab)
        + "```\n",
        # HTML (the standard library's documentation pages), dense with "<", in the answer with tools on.
        "HTML in the answer": _fit(english, half // 4, vocab)
        + "</think>Here is the page:\n\n"
        + _fit(_html(tokens * 4), tokens - half // 4, vocab),
        # The prose, where the stop sequences never match (no run of three newlines).
        "prose with stops": re.sub(
            "\n{3,}",
            "\n\n",
            _fit(english, half, vocab) + "</think>" + _fit(english[len(english) // 2 :], half, vocab),
        ),
    }
    out: dict[str, tuple[dict[str, Any], list[int]]] = {}
    for kind, text in texts.items():
        if text is None:
            call_only = len(build_output(2_000, 0, vocab))
            out[kind] = (BODY, build_output(2_000, tokens - call_only, vocab))
        elif kind == "JSON mode":
            out[kind] = (JSON_BODY, encode(text, add_special_tokens=False).ids)
        elif kind == "prose with stops":
            out[kind] = (STOP_BODY, encode(text, add_special_tokens=False).ids)
        else:
            out[kind] = (BODY, encode(text, add_special_tokens=False).ids)
    return out


def build_output_text(argument: str, vocab: Vocabulary) -> str:
    return (
        '\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="write_file">\n'
        '<｜DSML｜parameter name="path" string="true">lib/module.py</｜DSML｜parameter>\n'
        f'<｜DSML｜parameter name="content" string="true">{argument}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    )


def _groups(ids: list[int], size: int) -> list[list[int]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def _texts(groups: list[list[int]], vocab: Vocabulary) -> list[tuple[str, int]]:
    """The groups as text chunks, each with its token count: what a backend that sends text would push (an
    incomplete character waits for the next group, as a detokenizing server holds it)."""
    decoder = IncrementalDecoder(vocab)
    return [(decoder.feed(group), len(group)) for group in groups]


def ours(
    request: dscodec.ConversationRequest,
    vocab: Vocabulary,
    groups: list[list[int]],
    *,
    logprobs: list[Any] | None = None,
) -> Callable[[], int]:
    def run() -> int:
        processor = dscodec.StreamProcessor(
            request, response_id="chatcmpl-1", model="DeepSeek-V4-Pro", tokenizer=vocab
        )
        size = 0
        for event in processor.start(100, 0):
            size += len(event.to_json())
        for k, group in enumerate(groups):
            entries = None if logprobs is None else [logprobs[k]]
            for event in processor.push_tokens(group, entries):
                size += len(event.to_json())
        for event in processor.finish("stop"):
            size += len(event.to_json())
        return size

    return run


def ours_text(
    request: dscodec.ConversationRequest, vocab: Vocabulary, chunks: list[tuple[str, int]]
) -> Callable[[], int]:
    def run() -> int:
        processor = dscodec.StreamProcessor(
            request, response_id="chatcmpl-1", model="DeepSeek-V4-Pro", tokenizer=vocab
        )
        size = 0
        for event in processor.start(100, 0):
            size += len(event.to_json())
        for text, count in chunks:
            for event in processor.push_text(text, count):
                size += len(event.to_json())
        for event in processor.finish("stop"):
            size += len(event.to_json())
        return size

    return run


def reference(
    ref: Any,
    groups: list[Any],
    body: dict[str, Any] = BODY,
    *,
    text: bool = False,
    protocol: str = "chat_completions",
    logprobs: list[Any] | None = None,
) -> Callable[[], int]:
    """The reference's run; with ``text``, ``groups`` are text chunks with their token counts (the processor
    still gets the tokenizer, with which it counts reasoning tokens as dscodec does)."""
    tokenizer = ref.Tokenizer.from_file(str(bundled_tokenizer_path()))
    options = ref.ConversionOptions()
    request_type = {
        "chat_completions": ref.ChatCompletionRequest,
        "responses": ref.ResponsesRequest,
        "messages": ref.MessagesRequest,
    }[protocol]

    def run() -> int:
        request = request_type(json.dumps(body))
        converted = request.convert(options)
        generator = request.chunk_generator(converted, "chatcmpl-1", "DeepSeek-V4-Pro")
        processor = ref.StreamProcessor(generator, converted.parsing_options, tokenizer)
        size = 0
        for event in processor.push(
            ref.InferenceChunk.ready(prompt_usage=ref.PromptUsage(prompt_tokens=100))
        ):
            size += len(event.to_json())
        if text:
            for chunk, count in groups:
                for event in processor.push(ref.InferenceChunk.text(chunk, count)):
                    size += len(event.to_json())
        else:
            for k, group in enumerate(groups):
                entries = None if logprobs is None else [logprobs[k]]
                for event in processor.push(ref.InferenceChunk.tokens(group, entries)):
                    size += len(event.to_json())
        for event in processor.push(ref.InferenceChunk.finish(ref.InferenceFinishReason.Stop)):
            size += len(event.to_json())
        for event in processor.finish():
            size += len(event.to_json())
        return size

    return run


def complete_ours(
    request: dscodec.ConversationRequest, vocab: Vocabulary, groups: list[list[int]]
) -> Callable[[], int]:
    """The complete response of a request that is not streamed: pushed, accumulated, written as JSON."""

    def run() -> int:
        processor = dscodec.StreamProcessor(
            request, response_id="resp-1", model="DeepSeek-V4-Pro", tokenizer=vocab, coalesce=True
        )
        events = processor.start(100, 0)
        for group in groups:
            events += processor.push_tokens(group)
        events += processor.finish("stop")
        return len(json.dumps(dscodec.accumulate(request.protocol, events)))

    return run


def complete_reference(
    ref: Any, groups: list[list[int]], body: dict[str, Any], protocol: str
) -> Callable[[], int]:
    """The reference's complete response: its events given to its response accumulator, written as JSON."""
    tokenizer = ref.Tokenizer.from_file(str(bundled_tokenizer_path()))
    options = ref.ConversionOptions()
    request_type, response_type = {
        "chat_completions": (ref.ChatCompletionRequest, ref.ChatCompletionResponse),
        "responses": (ref.ResponsesRequest, ref.ResponsesResponse),
        "messages": (ref.MessagesRequest, ref.MessagesResponse),
    }[protocol]

    def run() -> int:
        request = request_type(json.dumps(body))
        converted = request.convert(options)
        processor = ref.StreamProcessor(
            request.chunk_generator(converted, "resp-1", "DeepSeek-V4-Pro"),
            converted.parsing_options,
            tokenizer,
        )
        response = response_type("resp-1", "DeepSeek-V4-Pro", 0, 0, 0)
        chunks = [ref.InferenceChunk.ready(prompt_usage=ref.PromptUsage(prompt_tokens=100))]
        chunks += [ref.InferenceChunk.tokens(group, None) for group in groups]
        chunks.append(ref.InferenceChunk.finish(ref.InferenceFinishReason.Stop))
        for chunk in chunks:
            for event in processor.push(chunk):
                response.accumulate(event)
        for event in processor.finish():
            response.accumulate(event)
        return len(response.to_json())

    return run


def python_floor(vocab: Vocabulary, groups: list[list[int]]) -> Callable[[], int]:
    """The least work a Python codec does per push to answer with one chunk: one call per push that checks the
    ids, decodes their bytes (holding an incomplete UTF-8 sequence), escapes the text and wraps it in a chunk
    event, which is then serialised. No markers, no stages, no tool calls: a floor, not a codec."""
    rows = vocab.id_bytes
    before = (
        '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"DeepSeek-V4-Pro",'
        '"system_fingerprint":null,"choices":[{"index":0,"delta":{"content":'
    )
    after = '},"logprobs":null,"finish_reason":null}],"usage":null}'
    limit = 2**32

    def run() -> int:
        held = [b""]

        def push(group: list[int]) -> list[WireEvent]:
            for token_id in group:
                if type(token_id) is not int or not 0 <= token_id < limit:
                    raise ValueError(token_id)
            data = held[0] + b"".join([rows[i] for i in group])
            text, used = codecs.utf_8_decode(data, "replace", False)
            held[0] = data[used:]
            return [json_event(before + string_literal(text) + after)] if text else []

        size = 0
        for group in groups:
            for event in push(group):
                size += len(event.to_json())
        return size

    return run


def _recorded_events(
    request: dscodec.ConversationRequest, vocab: Vocabulary, groups: list[list[int]]
) -> list[list[Any]]:
    """The neutral events dscodec's output machine makes of each group's text (made before timing)."""
    machine = OutputMachine(request.parsing_options, tool_call_id_factory=lambda index: f"call_{index}")
    decoder = IncrementalDecoder(vocab)
    return [machine.feed(decoder.feed(group)) for group in groups]


def _started_writer(request: dscodec.ConversationRequest, vocab: Vocabulary) -> tuple[Any, int]:
    """A new processor's Chat writer, once the processor started, and the size of the opening events."""
    processor = dscodec.StreamProcessor(
        request, response_id="chatcmpl-1", model="DeepSeek-V4-Pro", tokenizer=vocab
    )
    return processor._writer, sum(len(event.to_json()) for event in processor.start(100, 0))


def events_floor(
    request: dscodec.ConversationRequest, vocab: Vocabulary, groups: list[list[int]]
) -> Callable[[], int]:
    """:func:`python_floor`'s decoding, then the events dscodec's output machine makes of each push's text (made
    once, before timing), written by its Chat writer and serialised: what is left when reading the output
    (markers, stages, the tool-call block) costs nothing. Its ratio to the reference is what a Python codec
    that writes these events pays before it reads a single marker."""
    recorded = _recorded_events(request, vocab, groups)
    rows = vocab.id_bytes
    limit = 2**32

    def run() -> int:
        writer, size = _started_writer(request, vocab)
        held = b""
        for group, events in zip(groups, recorded):
            for token_id in group:
                if type(token_id) is not int or not 0 <= token_id < limit:
                    raise ValueError(token_id)
            data = held + b"".join([rows[i] for i in group])
            _, used = codecs.utf_8_decode(data, "replace", False)
            held = data[used:]
            if events:
                for event in writer.write(events):
                    size += len(event.to_json())
        return size

    return run


#: The outputs whose rows also show :func:`made_floor`: where nearly every event comes from tool-call markup. (Where
#: the processor's lanes write text straight to the writer, without neutral events, dscodec itself is below it.)
MADE_KINDS = ("many small parameters",)


def made_floor(
    request: dscodec.ConversationRequest, vocab: Vocabulary, groups: list[list[int]]
) -> Callable[[], int]:
    """:func:`events_floor` as a codec of dscodec's layout pays it: one call per push, which checks and decodes
    the ids, then makes the push's neutral events afresh (their fields recorded before timing) and has the Chat
    writer write them. Reading markers and markup costs nothing here; what a codec that keeps the neutral events
    between its reader and its protocol writers (see ARCHITECTURE.md) pays at the least."""
    recipes = [
        [(type(event), tuple(getattr(event, f.name) for f in dataclasses.fields(event))) for event in events]
        for events in _recorded_events(request, vocab, groups)
    ]
    rows = vocab.id_bytes
    limit = 2**32

    def run() -> int:
        writer, size = _started_writer(request, vocab)
        write = writer.write
        held = [b""]

        def push(group: list[int], recipe: list[tuple[Any, tuple[Any, ...]]]) -> list[WireEvent]:
            for token_id in group:
                if type(token_id) is not int or not 0 <= token_id < limit:
                    raise ValueError(token_id)
            data = held[0] + b"".join([rows[i] for i in group])
            _, used = codecs.utf_8_decode(data, "replace", False)
            held[0] = data[used:]
            if not recipe:
                return []
            return write([kind(*fields) for kind, fields in recipe])

        for group, recipe in zip(groups, recipes):
            for event in push(group, recipe):
                size += len(event.to_json())
        return size

    return run


def python_floor_text(chunks: list[tuple[str, int]]) -> Callable[[], int]:
    """:func:`python_floor` for text chunks: check the chunk and its count, escape the text, build and serialise
    one chunk event."""
    before = (
        '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"DeepSeek-V4-Pro",'
        '"system_fingerprint":null,"choices":[{"index":0,"delta":{"content":'
    )
    after = '},"logprobs":null,"finish_reason":null}],"usage":null}'
    limit = 2**63

    def run() -> int:
        def push(text: str, count: int) -> list[WireEvent]:
            if type(text) is not str or type(count) is not int or not 0 <= count < limit:
                raise ValueError(count)
            return [json_event(before + string_literal(text) + after)] if text else []

        size = 0
        for text, count in chunks:
            for event in push(text, count):
                size += len(event.to_json())
        return size

    return run


#: The tokens of a short response, and how many run back to back in one timing.
SHORT_TOKENS = 50
SHORT_REPEAT = 20


def _ours_short(text: str, vocab: Vocabulary, groups: list[list[int]]) -> Callable[[], int]:
    """:func:`ours` for a new request each time: its JSON body parsed and converted first."""
    return lambda: ours(dscodec.convert("chat_completions", text), vocab, groups)()


#: The phases of a short response, as :func:`_ours_phases` and :func:`_reference_phases` time them.
PHASES = ("convert", "set-up", "start", "pushes", "finish")


def _ours_phases(text: str, vocab: Vocabulary, groups: list[list[int]]) -> list[float]:
    """One short response of :func:`_ours_short`, each phase timed on its own (seconds, in :data:`PHASES`'
    order): the body parsed and converted, the processor made, its opening events, the pushes, the last chunk."""
    clock = time.perf_counter
    t0 = clock()
    request = dscodec.convert("chat_completions", text)
    t1 = clock()
    processor = dscodec.StreamProcessor(
        request, response_id="chatcmpl-1", model="DeepSeek-V4-Pro", tokenizer=vocab
    )
    t2 = clock()
    for event in processor.start(100, 0):
        event.to_json()
    t3 = clock()
    for group in groups:
        for event in processor.push_tokens(group):
            event.to_json()
    t4 = clock()
    for event in processor.finish("stop"):
        event.to_json()
    t5 = clock()
    return [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4]


def _reference_phases(ref: Any, tokenizer: Any, groups: list[list[int]], text: str) -> list[float]:
    """:func:`_ours_phases` on the reference's side (its finish is the finish chunk and the processor's end)."""
    clock = time.perf_counter
    options = ref.ConversionOptions()
    t0 = clock()
    request = ref.ChatCompletionRequest(text)
    converted = request.convert(options)
    t1 = clock()
    generator = request.chunk_generator(converted, "chatcmpl-1", "DeepSeek-V4-Pro")
    processor = ref.StreamProcessor(generator, converted.parsing_options, tokenizer)
    t2 = clock()
    for event in processor.push(ref.InferenceChunk.ready(prompt_usage=ref.PromptUsage(prompt_tokens=100))):
        event.to_json()
    t3 = clock()
    for group in groups:
        for event in processor.push(ref.InferenceChunk.tokens(group, None)):
            event.to_json()
    t4 = clock()
    for event in processor.push(ref.InferenceChunk.finish(ref.InferenceFinishReason.Stop)):
        event.to_json()
    for event in processor.finish():
        event.to_json()
    t5 = clock()
    return [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4]


def _reference_convert(ref: Any, options: Any, text: str) -> object:
    """The reference's conversion of a Chat Completions body (its JSON text)."""
    return ref.ChatCompletionRequest(text).convert(options)


def _phase_medians(sides: list[Callable[[], list[float]]], runs: int) -> list[list[float]]:
    """Each side's median per phase in µs, over ``runs`` rounds of :data:`SHORT_REPEAT` responses a side (the
    sides taking turns, a response at a time)."""
    for side in sides:
        side()
    samples: list[list[list[float]]] = [[[] for _ in PHASES] for _ in sides]
    for _ in range(runs * SHORT_REPEAT):
        for side, phases in zip(sides, samples):
            for bucket, seconds in zip(phases, side()):
                bucket.append(seconds)
    return [[statistics.median(bucket) * 1e6 for bucket in phases] for phases in samples]


def _convert_back_to_back(convert: Callable[[], object], times: int = 200) -> float:
    """µs per conversion of one body converted ``times`` times in a row (the code and data it touches stay in
    the caches), the best of three rounds."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(times):
            convert()
        best = min(best, time.perf_counter() - start)
    return best / times * 1e6


def _same_logprobs(output: list[int]) -> list[Any]:
    """An entry per id, the same five values each time (every value written is one seen before)."""
    return [(-0.25, [(t, -0.25), (t + 1, -1.5), (t + 2, -2.5), (t + 3, -3.5), (t + 4, -4.5)]) for t in output]


def _varied_logprobs(output: list[int]) -> list[Any]:
    """An entry per id as a model server sends them: 32-bit floats, the chosen id's near zero, the alternatives'
    spread lower, hardly any value seen twice."""
    rng = random.Random(11)
    f32 = struct.Struct("<f")

    def value(rate: float) -> float:
        return f32.unpack(f32.pack(-rng.expovariate(rate)))[0]

    return [(value(2.0), [(t + k, value(0.5)) for k in range(5)]) for t in output]


def _repeat(run: Callable[[], object], times: int) -> Callable[[], int]:
    def repeated() -> int:
        for _ in range(times):
            run()
        return times

    return repeated


def interleaved(sides: list[Callable[[], int]], runs: int) -> list[float]:
    for side in sides:
        side()
    times: list[list[float]] = [[] for _ in sides]
    for _ in range(runs):
        for side, bucket in zip(sides, times):
            start = time.perf_counter()
            side()
            bucket.append(time.perf_counter() - start)
    return [statistics.median(bucket) for bucket in times]


def _per_token_row(label: str, sides: list[Callable[[], int]], tokens: int, runs: int) -> None:
    """Print ``label``, then dscodec's µs per token and, when the reference ran (a second side), its figure and
    the ratio."""
    per_token = [m / tokens * 1e6 for m in interleaved(sides, runs)]
    line = f"{label}{per_token[0]:>18.2f}"
    if len(per_token) > 1:
        line += f"{per_token[1]:>20.2f}{per_token[0] / per_token[1]:>8.2f}"
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=10_000, help="tokens per output (about)")
    parser.add_argument("--kinds", default="", help="comma-separated output kinds (default: all)")
    parser.add_argument(
        "--input",
        choices=["ids", "text", "both"],
        default="both",
        help="push token ids, text chunks (the ids decoded, with their token counts), or both",
    )
    args = parser.parse_args()

    vocab = Vocabulary.load(None)
    try:
        import deepseek_recipe as ref
    except ImportError:
        ref = None
        print("reference not installed (pip install deepseek-recipe): dscodec only")

    kinds = outputs(vocab, args.tokens)
    chosen = [k for k in args.kinds.split(",") if k] or list(kinds)
    inputs = ["ids", "text"] if args.input == "both" else [args.input]
    print(
        f"{'output':<24}{'tokens':>7}{'input':>6}{'pushes':>8}{'dscodec µs/token':>18}{'reference µs/token':>20}"
        f"{'ratio':>8}{'floor µs/token':>16}{'floor ratio':>12}{'events µs/token':>16}{'events ratio':>13}"
        f"{'made µs/token':>15}{'made ratio':>11}"
    )
    for kind in chosen:
        body, output = kinds[kind]
        request = dscodec.convert("chat_completions", body)
        for form, size in [(form, size) for form in inputs for size in (1, 4)]:
            groups = _groups(output, size)
            if form == "ids":
                sides = [
                    ours(request, vocab, groups),
                    python_floor(vocab, groups),
                    events_floor(request, vocab, groups),
                ]
                if kind in MADE_KINDS:
                    sides.append(made_floor(request, vocab, groups))
                if ref is not None:
                    sides.append(reference(ref, groups, body))
            else:
                chunks = _texts(groups, vocab)
                sides = [ours_text(request, vocab, chunks), python_floor_text(chunks)]
                if ref is not None:
                    sides.append(reference(ref, chunks, body, text=True))
            medians = interleaved(sides, args.runs)
            per_token = [m / len(output) * 1e6 for m in medians]
            mine, floor = per_token[:2]
            events = per_token[2] if form == "ids" else None
            made = per_token[3] if form == "ids" and kind in MADE_KINDS else None
            theirs = per_token[-1] if ref is not None else None
            line = f"{kind:<24}{len(output):>7}{form:>6}{size:>8}{mine:>18.2f}"
            if theirs is not None:
                line += f"{theirs:>20.2f}{mine / theirs:>8.2f}{floor:>16.2f}{floor / theirs:>12.2f}"
                if events is not None:
                    line += f"{events:>16.2f}{events / theirs:>13.2f}"
                if made is not None:
                    line += f"{made:>15.2f}{made / theirs:>11.2f}"
            else:
                line += f"{'':>28}{floor:>16.2f}" + (f"{events:>16.2f}" if events is not None else "")
                line += f"{'':>13}{made:>15.2f}" if made is not None else ""
            print(line, flush=True)

    # Short responses: what each request pays once (parsing and converting the request, setting up the
    # processor, the first pieces of the output, the last chunk), on both sides.
    print(
        f"\n{'short response':<24}{'tokens':>7}{'dscodec µs/response':>21}{'reference µs/response':>23}{'ratio':>8}"
    )
    for kind in chosen:
        body, output = kinds[kind]
        groups = _groups(output[:SHORT_TOKENS], 1)
        text = json.dumps(body)
        sides = [_repeat(_ours_short(text, vocab, groups), SHORT_REPEAT)]
        if ref is not None:
            sides.append(_repeat(reference(ref, groups, body), SHORT_REPEAT))
        medians = interleaved(sides, args.runs)
        line = f"{kind:<24}{len(groups):>7}{medians[0] / SHORT_REPEAT * 1e6:>21.1f}"
        if ref is not None:
            line += f"{medians[1] / SHORT_REPEAT * 1e6:>23.1f}{medians[0] / medians[1]:>8.2f}"
        print(line, flush=True)
    print()

    # The same short responses, phase by phase (medians of each phase timed on its own, a response at a time and
    # the sides taking turns, as above), then one body converted again and again, back to back: the difference
    # between the two convert columns is what a request pays for code and data that the rest of a response has
    # pushed out of the caches.
    header = "".join(f"{phase:>16}" for phase in PHASES)
    print(f"{'short response phases':<24}{'side':>10}{header}{'convert, back to back':>24}")
    tokenizer = ref.Tokenizer.from_file(str(bundled_tokenizer_path())) if ref is not None else None
    for kind in chosen:
        body, output = kinds[kind]
        groups = _groups(output[:SHORT_TOKENS], 1)
        text = json.dumps(body)
        phase_sides: list[Callable[[], list[float]]] = [partial(_ours_phases, text, vocab, groups)]
        hot = [_convert_back_to_back(partial(dscodec.convert, "chat_completions", text))]
        if ref is not None:
            phase_sides.append(partial(_reference_phases, ref, tokenizer, groups, text))
            hot.append(_convert_back_to_back(partial(_reference_convert, ref, ref.ConversionOptions(), text)))
        rows = _phase_medians(phase_sides, args.runs)
        for side, phases, back_to_back in zip(("dscodec", "reference"), rows, hot):
            cells = "".join(f"{value:>16.1f}" for value in phases)
            print(
                f"{kind if side == 'dscodec' else '':<24}{side:>10}{cells}{back_to_back:>24.1f}", flush=True
            )
    print()

    # The other protocols: the same outputs as token ids, their events serialised (Responses and Messages
    # events, each with its SSE name).
    print(
        f"\n{'protocol':<12}{'output':<24}{'pushes':>7}{'dscodec µs/token':>18}{'reference µs/token':>20}{'ratio':>8}"
    )
    for protocol, bodies in PROTOCOL_BODIES.items():
        for kind in chosen:
            chat_body, output = kinds[kind]
            if chat_body is JSON_BODY:
                body = bodies.get("json")
            else:
                body = bodies.get("stops") if chat_body is STOP_BODY else bodies["tools"]
            if body is None:
                continue
            request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
            for size in (1, 4):
                groups = _groups(output, size)
                sides = [ours(request, vocab, groups)]
                if ref is not None:
                    sides.append(reference(ref, groups, body, protocol=protocol))
                _per_token_row(f"{protocol:<12}{kind:<24}{size:>7}", sides, len(output), args.runs)
    print()

    # Complete responses (not streamed): the output four ids per push, then the response object as JSON; dscodec's
    # processor coalescing (what the example server does), against the reference's accumulator.
    print(
        f"{'complete response':<42}{'tokens':>7}{'dscodec µs/token':>18}{'reference µs/token':>20}{'ratio':>8}"
    )
    for protocol in ("chat_completions", "responses", "messages"):
        body = dict(BODY if protocol == "chat_completions" else PROTOCOL_BODIES[protocol]["tools"])
        body["stream"] = False
        body.pop("stream_options", None)
        request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
        for kind in [k for k in chosen if k != "JSON mode"]:
            output = kinds[kind][1]
            groups = _groups(output, 4)
            sides = [complete_ours(request, vocab, groups)]
            if ref is not None:
                sides.append(complete_reference(ref, groups, body, protocol))
            _per_token_row(f"{protocol + ', ' + kind:<42}{len(output):>7}", sides, len(output), args.runs)
    print()

    # Log probabilities: one id per push with its log probability and five alternatives, in the protocols that
    # stream them (Messages has none): the prose's reasoning alone (Responses drops the reasoning's entries), then
    # its reasoning and answer.
    print(
        f"{'log probabilities':<48}{'tokens':>7}{'dscodec µs/token':>18}{'reference µs/token':>20}{'ratio':>8}"
    )
    prose = kinds["prose"][1]
    for span, output in (("reasoning", prose[: args.tokens // 2]), ("reasoning and answer", prose)):
        for protocol, body in (
            ("chat_completions", {**BODY, "logprobs": True, "top_logprobs": 5}),
            ("responses", {**PROTOCOL_BODIES["responses"]["tools"], "top_logprobs": 5}),
        ):
            for values, entries in (("same", _same_logprobs(output)), ("varied", _varied_logprobs(output))):
                sides = [ours(dscodec.convert(protocol, body), vocab, _groups(output, 1), logprobs=entries)]
                if ref is not None:
                    sides.append(
                        reference(ref, _groups(output, 1), body, protocol=protocol, logprobs=entries)
                    )
                label = f"{protocol}, {values}, {span}"
                _per_token_row(f"{label:<48}{len(output):>7}", sides, len(output), args.runs)
    print()

    # Linear cost: a tool call alone, its string argument 2K and then 20K characters long.
    request = dscodec.convert("chat_completions", BODY)
    short, long = build_output(2_000, 0, vocab), build_output(20_000, 0, vocab)
    t_short, t_long = interleaved(
        [ours(request, vocab, _groups(short, 1)), ours(request, vocab, _groups(long, 1))], args.runs
    )
    print(
        f"tool call alone, one id per push: 2K argument {t_short * 1e3:.2f} ms ({len(short)} tokens), "
        f"20K argument {t_long * 1e3:.2f} ms ({len(long)} tokens): {t_long / t_short:.2f}x the time "
        f"for {len(long) / len(short):.2f}x the tokens"
    )


if __name__ == "__main__":
    main()
