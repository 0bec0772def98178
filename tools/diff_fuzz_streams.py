"""Differential fuzzing of the response path: random model outputs, cut at random, fed to dscodec's
``StreamProcessor`` and to the reference's (``deepseek_recipe``, called as a black box); report every output
where the complete responses disagree.

    python tools/diff_fuzz_streams.py [--count 500] [--seed 1] [--malformed] [--ids]
        [--events [--exact-deltas] [--complete]]
        [--protocol messages] [--out DIR]

Outputs come from ``dscodec.testing.strategies`` (reasoning, answer, DSML calls in the version's spelling with
every value kind, stop sequences (``--stops``: made of markup pieces); ``--malformed`` adds broken markup). Each is pushed as text chunks at random
cut points, to both sides, with a finish reason of ``stop`` (``--truncate``: the output cut at a random point first,
with ``length``).

Compared, from each side's complete response: the reasoning text, the answer text, the tool calls (name and
arguments, parsed as JSON) and the finish reason. With ``--events``, every event instead, as JSON (after a ready
chunk with no prompt usage on both sides), with ids and wall-clock times normalised
(``dscodec.testing.compare.normalise``), consecutive deltas of one text or one call merged (``--exact-deltas``
keeps them apart: D8 reads a parameter tag whole and holds values back, and D18 holds only the undecided end of
a push, so where deltas part differs on purpose; in JSON mode the reference gets the whole output as one piece,
D7, so there they are merged all the same), and the Responses fields of D3
and D6 left out. Where dscodec deviates on purpose (docs/deviations.md: D7 JSON
mode, D8 arguments of malformed tags, D15 the end-of-sentence token) differences are expected; read them before
filing a bug. A disagreement worth keeping becomes a scenario in ``tools/golden_cases/streams.py``.

With ``--complete`` (and ``--events``) the complete response each side's accumulator builds from its own events is
compared too, normalised the same way; a difference there alone is labelled ``the complete response, from the
same events``. dscodec's complete response is also built by a coalescing processor from the same pushes (what the
example server does for a response that is not streamed), which must give the same response (else the label is
``coalesced``). Without ``--events`` dscodec's side is that coalescing processor's response.

Each difference gets a label: a deviation that explains it, or ``events``. A status or a finish that differs is
put down to the output's markup only where a deviation names that very markup (D20: the output ends after an
invoke's name and the start of a closing tag; a tool search call's tags, D8). When a chunk of ids ends in half a character (D12), the case is run again
with the same ids cut only between characters (an incomplete last character left out): the label then says
whether the sides agree that way (``D12 (... the same)``) or what still differs (``cut between characters, still:
...``, with that run's first difference).

With ``--mutate`` the outputs are the recorded stream scenarios' instead (``fixtures/streams/``, each with its
request body), changed in one to three places: a piece of markup or of text near markup inserted (a tag's start,
a quote, a newline run, ``</think>``, a fence, a number), a span deleted or doubled, a span of another scenario's
output spliced in, or the output cut short. That searches around the cases already known to be delicate; every
event is compared (``--events`` is implied; ``--ids --logprobs`` adds log probabilities and leaves the JSON-mode
scenarios out), and outputs that spell the end-of-sentence token are left out (D15).

With ``--cuts N`` the recorded outputs are cut instead, each at about N evenly spaced points (every point of an
output shorter than N), and each cut goes to both sides as one text chunk (one chunk of its ids with ``--ids``)
with the finish reason ``length``;
every event is compared. Scenarios whose whole output is malformed, holds a ``string="false"`` value that is no
JSON (D8) or spells the end-of-sentence token (D15), or runs in JSON mode (D7) or with a Messages
``tool_choice`` of ``any`` (D10) are left out: on the rest, the
only difference to expect is a ``string="false"`` value cut short (D8), and with ``--ids`` the token count of a
chunk in which a stop sequence matched (D13).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import struct
import sys
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import deepseek_recipe as dr
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import dscodec
from dscodec.stream.decoder import IncrementalDecoder
from dscodec.testing.compare import MISSING, merge_deltas, normalise
from dscodec.testing.strategies import MARKUP_STOPS, model_outputs, request_bodies

PROTOCOLS = ("chat_completions", "responses", "messages")
REQUEST_CLASSES = {
    "chat_completions": dr.ChatCompletionRequest,
    "responses": dr.ResponsesRequest,
    "messages": dr.MessagesRequest,
}
RESPONSE_CLASSES = {
    "chat_completions": dr.ChatCompletionResponse,
    "responses": dr.ResponsesResponse,
    "messages": dr.MessagesResponse,
}


def _view(protocol: str, response: dict[str, Any]) -> dict[str, Any]:
    """Reasoning, answer, calls and finish of a complete response, in one shape for all protocols."""
    reasoning, content, calls, finish = "", "", [], None
    if protocol == "chat_completions":
        choice = response["choices"][0]
        message = choice["message"]
        reasoning = message.get("reasoning_content") or ""
        content = message.get("content") or ""
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or ()]
        finish = choice.get("finish_reason")
    elif protocol == "responses":
        for item in response.get("output", ()):
            if item["type"] == "reasoning":
                reasoning += "".join(part.get("text", "") for part in item.get("content") or ())
            elif item["type"] == "message":
                content += "".join(part.get("text", "") for part in item.get("content") or ())
            elif item["type"] == "function_call":
                calls.append((item["name"], item["arguments"]))
        finish = response.get("status")
    else:
        for block in response.get("content", ()):
            if block["type"] == "thinking":
                reasoning += block.get("thinking", "")
            elif block["type"] == "text":
                content += block.get("text", "")
            elif block["type"] == "tool_use":
                calls.append((block["name"], json.dumps(block["input"], sort_keys=True)))
        finish = response.get("stop_reason")
    parsed = []
    for name, arguments in calls:
        try:
            parsed.append((name, json.loads(arguments)))
        except ValueError:
            parsed.append((name, f"<invalid JSON> {arguments}"))
    return {"reasoning": reasoning, "content": content, "calls": parsed, "finish": finish}


_REF_TOKENIZER: Any = None


def _ref_tokenizer() -> Any:
    global _REF_TOKENIZER
    if _REF_TOKENIZER is None:
        from dscodec.vocab import bundled_tokenizer_path

        _REF_TOKENIZER = dr.Tokenizer.from_file(str(bundled_tokenizer_path()))
    return _REF_TOKENIZER


_REFERENCE_FINISH = {
    "stop": dr.InferenceFinishReason.Stop,
    "length": dr.InferenceFinishReason.Length,
    "content_filter": dr.InferenceFinishReason.ContentFilter,
}


@dataclass(frozen=True)
class Plan:
    """How one output is pushed besides its pieces, the same on both sides: the ready chunk's usage and
    fingerprint, each text chunk's token count (None: the default) and the backend's finish reason (None: no
    finish chunk, the output just ends)."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    fingerprint: str | None = None
    counts: tuple[int, ...] | None = None
    finish: str | None = "stop"

    def count(self, k: int, default: int) -> int:
        return default if self.counts is None else self.counts[k]


#: What ``--mutate`` inserts: pieces of markup in both spellings and text that sits next to markup.
_MUTATION_PIECES = (
    "<｜DSML｜",
    "｜DSML｜",
    "</｜DSML｜",
    "<｜DSML｜ ",
    "</think>",
    "<think>",
    "<",
    "</",
    ">",
    '"',
    "=",
    "\n",
    "\n\n",
    'string="true">',
    'string="false">',
    "parameter",
    "invoke",
    "tool_calls",
    " calls",
    'name="',
    "```json\n",
    "\n```",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\\",
    "\\u",
    "1e400",
    "-",
    "0",
    " ",
    "\t",
    "\r\n",
    "é",
    "😀",
    "STOP",
    "END",
)
_EOS_SPELLING = "<｜end▁of▁sentence｜>"


def random_plan(rng: random.Random, pieces: int) -> Plan:
    """A plan with every field drawn (``--vary``)."""
    prompt = rng.choice([0, 1, 17, rng.randint(0, 10**6)])
    return Plan(
        prompt_tokens=prompt,
        cached_tokens=rng.choice([0, prompt, rng.randint(0, prompt)]),
        fingerprint=rng.choice([None, "fp_1", ""]),
        counts=tuple(rng.choice([0, 1, 1, 2, 5]) for _ in range(pieces)),
        finish=rng.choice(["stop", "length", "content_filter", None]),
    )


def _some_as_text(pieces: list[list[int]], rng: random.Random) -> list[Any]:
    """Some pieces of ids sent as the text they decode to: only pieces of whole characters that follow whole
    characters (where the reference holds a whole chunk of ids ending in half a character, D12, the order of
    text and ids would differ on purpose)."""
    decoder = IncrementalDecoder(_vocabulary())
    out: list[Any] = []
    for piece in pieces:
        before = decoder.pending_bytes
        text = decoder.feed(piece)
        whole = not before and not decoder.pending_bytes
        out.append(text if whole and rng.random() < 0.25 else piece)
    return out


def fake_logprobs(ids: list[int], start: int) -> list[tuple[float, list[tuple[int, float]]]]:
    """One made-up entry per id (the id's place in the output is ``start`` + its index): a log probability and
    zero to two alternatives, the same on both sides. Every other value has all its digits (a double, or every
    fourth a 32-bit float as a model server sends it), so that how each side writes it is compared too; every
    fifth is of any size within the 32-bit range (1e-46 to 1e38, where the notations change)."""
    entries = []
    for k, token_id in enumerate(ids, start):
        exact = ((k * 7919) % 1000) / 997
        if k % 5 == 2:
            exact = (1 + (k * 37 % 1000) / 1000) * 10.0 ** ((k * 7919) % 85 - 46)
        logprob = -(
            _F32.unpack(_F32.pack(exact))[0] if k % 4 == 1 else exact if k % 4 == 3 else float(f"{exact:.6g}")
        )
        tops = [(token_id, logprob), ((token_id * 31 + 7) % 128000, logprob - 1.5)][: k % 3]
        entries.append((logprob, tops))
    return entries


_F32 = struct.Struct("<f")


def reference_events(
    protocol: str,
    body: dict[str, Any],
    pieces: list[Any],
    *,
    tokenizer: bool = False,
    logprobs: bool = False,
    count: int = 1,
    plan: Plan | None = None,
) -> list[Any]:
    """The reference's events for ``pieces`` (text chunks, or lists of token ids), after a ready chunk with no
    prompt usage. Token ids always come with the tokenizer; text chunks with ``tokenizer`` only (the reference
    then counts reasoning tokens as dscodec does for every kind of chunk, D5)."""
    ids = any(isinstance(piece, list) for piece in pieces)  # (--vary mixes text chunks in)
    request = REQUEST_CLASSES[protocol](json.dumps(body))
    converted = request.convert(dr.ConversionOptions())
    generator = request.chunk_generator(converted, "id-1", body["model"])
    processor = dr.StreamProcessor(
        generator, converted.parsing_options, tokenizer=_ref_tokenizer() if ids or tokenizer else None
    )
    plan = plan or Plan()
    usage = dr.PromptUsage(prompt_tokens=plan.prompt_tokens, prompt_cache_hit_tokens=plan.cached_tokens)
    events = processor.push(dr.InferenceChunk.ready(prompt_usage=usage, system_fingerprint=plan.fingerprint))
    done = 0
    for k, piece in enumerate(pieces):
        if processor.finished:
            break
        if isinstance(piece, list):
            chunk = dr.InferenceChunk.tokens(piece, fake_logprobs(piece, done) if logprobs else None)
        else:
            chunk = dr.InferenceChunk.text(piece, plan.count(k, count))
        done += len(piece)
        events += processor.push(chunk)
    if not processor.finished and plan.finish is not None:
        events += processor.push(dr.InferenceChunk.finish(_REFERENCE_FINISH[plan.finish]))
    events += processor.finish()
    return events


def reference_response(
    protocol: str, body: dict[str, Any], pieces: list[Any], plan: Plan | None = None
) -> dict[str, Any]:
    events = reference_events(protocol, body, pieces, plan=plan)
    accumulator = RESPONSE_CLASSES[protocol]("acc", body["model"], 0, 0, 0)
    for event in events:
        accumulator.accumulate(event)
    return _view(protocol, json.loads(accumulator.to_json()))


def our_events(
    protocol: str,
    body: dict[str, Any],
    pieces: list[Any],
    *,
    logprobs: bool = False,
    plan: Plan | None = None,
    coalesce: bool = False,
) -> list[Any]:
    plan = plan or Plan()
    request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
    processor = dscodec.StreamProcessor(request, response_id="id-1", model=body["model"], coalesce=coalesce)
    events = processor.start(
        prompt_tokens=plan.prompt_tokens,
        cached_tokens=plan.cached_tokens,
        system_fingerprint=plan.fingerprint,
    )
    done = 0
    for k, piece in enumerate(pieces):
        if processor.finished:
            break
        if isinstance(piece, list):
            events += processor.push_tokens(piece, fake_logprobs(piece, done) if logprobs else None)
        else:
            events += processor.push_text(piece, plan.count(k, 1))
        done += len(piece)
    events += processor.finish(plan.finish)  # type: ignore[arg-type]
    return events


def our_response(
    protocol: str, body: dict[str, Any], pieces: list[Any], plan: Plan | None = None
) -> dict[str, Any]:
    events = our_events(protocol, body, pieces, plan=plan, coalesce=True)  # as the example server does
    return _view(protocol, json.loads(json.dumps(dscodec.accumulate(protocol, events))))


def event_view(events: list[Any], *, merge: bool = True) -> dict[str, Any]:
    """Every event as its JSON object, ids and wall-clock times normalised; with ``merge``, consecutive deltas of
    one text or one call's arguments are merged into one (where deltas part differs on purpose: D8 holds
    ``string="false"`` values back until they are proven valid)."""
    objects = [_without_documented(json.loads(e.to_json())) for e in events]
    return {"events": normalise(merge_deltas(objects) if merge else objects)}


def complete_view(response: dict[str, Any]) -> Any:
    """A complete response object (an accumulator's) as :func:`event_view` shows an event: ids and wall-clock
    times normalised, the fields of D3 and D6 left out."""
    return normalise(_without_documented(response))


def _without_documented(value: Any) -> Any:
    """``value`` without the Responses fields dscodec writes differently on purpose: ``cache_write_tokens`` (D3)
    and a message's ``phase`` (D6)."""
    if isinstance(value, dict):
        return {
            k: _without_documented(v)
            for k, v in value.items()
            if k != "cache_write_tokens" and not (k == "phase" and value.get("type") == "message")
        }
    if isinstance(value, list):
        return [_without_documented(v) for v in value]
    return value


#: The fields that say how an item, a block, a choice or the response ended.
_STATUSES = frozenset({"status", "finish_reason", "stop_reason", "incomplete_details"})

#: Usage fields whose counts differ on purpose once a stop sequence or half a character ends a token chunk (D12,
#: D13).
_COUNTS = frozenset({"completion_tokens", "total_tokens", "output_tokens"})


def _any_tool(body: dict[str, Any]) -> bool:
    """Whether a Messages body asks for ``tool_choice`` ``any`` (D10: a call is required, the reference reads
    ``auto``)."""
    tool_choice = body.get("tool_choice")
    return isinstance(tool_choice, dict) and tool_choice.get("type") == "any"


def _event_difference_kind(
    body: dict[str, Any], ours: list[Any], theirs: list[Any], pieces: list[Any]
) -> str:
    """A label for how two event lists differ: a documented deviation when that explains it, else ``events``."""
    # With --exact-deltas the lists keep deltas apart: merged, they show where else (if anywhere) they differ.
    merged_ours, merged_theirs = merge_deltas(ours), merge_deltas(theirs)
    if merged_ours == merged_theirs:
        return "where deltas part (D8, D12, D18)"
    if _any_tool(body):
        return "D10 (tool_choice any)"
    paths: set[str] = set()
    _paths(merged_ours, merged_theirs, "", paths)
    counts = {path for path in paths if path.rsplit(".", 1)[-1] in _COUNTS}
    reasoning = {path for path in paths if path.endswith(".reasoning_tokens")}
    if paths and paths == counts | reasoning:
        text = any(isinstance(p, str) for p in pieces)
        if counts and text and _waits_on_the_end_of_sentence(body, _output_text(pieces)):
            # The caller pushes one chunk more, which counts (and, as text, counts its reasoning tokens: D5).
            return "D15 (in text chunks a stop that ends where the end-of-sentence spelling may begin waits)"
        if not reasoning:
            return "token counts (D12, D13)"
        if not counts and _reasoning_capped(ours):
            return "D5 (reasoning tokens capped at the completion tokens)"
        if counts and text:
            # Text chunks: the reasoning tokens of chunks a stop cut short (or that a JSON-mode comparison sent
            # whole to the reference) are counted from the chunks' token counts (D5).
            return "token counts (D12, D13) and reasoning tokens (D5)"
    if any(path.rsplit(".", 1)[-1] in _STATUSES for path in paths):
        # Of the deviations only D12 changes how an item, a block or the response ends (the reference drops the
        # last chunk, and a stop sequence in it, when it ends in half a character). The labels below read the
        # output, not the difference, and would hide any other cause.
        if _ends_in_half_a_character(pieces):
            return "D12? (a chunk of ids ends in half a character; a status or a finish differs)"
        text = _output_text(pieces)
        if _ENDS_AFTER_INVOKE_NAME.search(text) and paths <= {
            path for path in paths if path.rsplit(".", 1)[-1] in ("finish_reason", "stop_reason")
        }:
            return "D20 (the output ends after an invoke's name and the start of a closing tag)"
        if 'name="tool_search"' in text and any(not _strict_json(v) for v in _FALSE_VALUE.findall(text)):
            # The one status that follows the arguments: a tool search call whose arguments are no JSON object.
            return 'D8? (a tool_search_call with a string="false" value that is no JSON: incomplete on the reference)'
        if 'name="tool_search"' in text and (_malformed_markup(text) or _unknown_tag(text)):
            # ... or whose invoke the reference ends at the closing tag of a tag it does not read (complete there),
            # where dscodec reads on (and finds the call cut short).
            return "D8? (a tool_search_call with a tag the reference does not read: it ends the call there)"
        return "events (a status or a finish differs)"
    kind = _markup_kind(pieces)
    if kind is not None:
        return kind
    mine, other = _argument_texts(merged_ours), _argument_texts(merged_theirs)
    if mine and all(map(_strict_json, mine)) and not all(map(_strict_json, other)):
        return "D8? (the reference's arguments are no JSON, dscodec's are)"
    return "events"


def _markup_kind(pieces: list[Any]) -> str | None:
    """A documented deviation that the output itself explains (its markup, or a chunk of ids ending in half a
    character), whatever part of the answer differs; None when nothing in the output does."""
    text = _output_text(pieces)
    if _SPACED_PARAMETER_NAME.search(text):
        return "D8? (a parameter name with whitespace: the reference's key is no JSON string)"
    if any(not _strict_json(f'"{name}"') for name in _PARAMETER_NAME.findall(text)):
        return "D8? (a parameter name that is no JSON string content: dscodec escapes it, the reference copies it)"
    if set(_STRING_ATTRIBUTE.findall(text)) - {"true", "false"}:
        return "D8? (a parameter tag with an unknown string value)"
    if _malformed_markup(text) or _BARE_PARAMETER_TAG.search(text):
        return "D8? (malformed tags: dscodec reads them by their attributes)"
    # A newline after a partial opener also looks like a tag the parser does not know (``<`` then a newline):
    # the newline is the likelier cause, so it is asked first.
    if any(isinstance(p, str) for p in pieces) and _PARTIAL_OPENER_NEWLINE.search(text):
        return "D14? (a newline after a partial opener in text)"
    if _unknown_tag(text):
        return "D8? (a tag the parser does not know: its closing tag does not end the call)"
    if _ends_in_half_a_character(pieces):
        return "D12? (a chunk of ids ends in half a character)"
    if _CUT_IN_VALUE.search(text):
        return 'D8? (a string="false" value cut by the end of the output: a JSON string of its raw text)'
    if any(not _strict_json(value) for value in _FALSE_VALUE.findall(text)):
        return 'D8? (a string="false" value that is no JSON: null when blank, else a JSON string of its raw text)'
    return None


def _waits_on_the_end_of_sentence(body: dict[str, Any], text: str) -> bool:
    """Whether, with text chunks, dscodec may learn of a stop sequence a chunk later than the reference (D15): the
    output spells the end-of-sentence token, or a stop ends in the start of its spelling (held until the next
    chunk shows it is no end of sentence, which never takes part in a stop)."""
    stops = body.get("stop") or body.get("stop_sequences") or []
    stops = [stops] if isinstance(stops, str) else stops
    starts = [_EOS_SPELLING[:k] for k in range(1, len(_EOS_SPELLING))]
    if _EOS_SPELLING in text or any(stop.endswith(start) for stop in stops for start in starts):
        return True
    # ... or the output, where a stop matches, ends in the start of the spelling (``ab<`` then the stop ``｜``).
    for stop in stops:
        if not isinstance(stop, str) or not stop:
            continue
        at = text.find(stop)
        while at >= 0:
            before = text[: at + len(stop)]
            if any(before.endswith(start) for start in starts):
                return True
            at = text.find(stop, at + 1)
    return False


def _reasoning_capped(events: Any) -> bool:
    """Whether some usage in ``events`` reports as many reasoning tokens as completion tokens (where D5 caps it)."""
    if isinstance(events, dict):
        details = events.get("completion_tokens_details") or events.get("output_tokens_details")
        whole = events.get("completion_tokens", events.get("output_tokens"))
        if isinstance(details, dict) and whole is not None and details.get("reasoning_tokens") == whole:
            return True
        return any(_reasoning_capped(value) for value in events.values())
    if isinstance(events, list):
        return any(_reasoning_capped(value) for value in events)
    return False


def _argument_texts(events: Any) -> list[str]:
    """Every non-empty tool-call arguments text in (merged) events of any protocol: Chat's ``arguments``,
    Messages' ``partial_json`` and the Responses arguments events' ``delta`` or ``arguments``."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            kind = value.get("type")
            for key, item in value.items():
                responses = key in ("delta", "arguments") and kind in (
                    "response.function_call_arguments.delta",
                    "response.function_call_arguments.done",
                )
                if isinstance(item, str) and item and (key in ("arguments", "partial_json") or responses):
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(events)
    return found


#: The raw text of each complete ``string="false"`` value.
_FALSE_VALUE = re.compile(r'string="false">([\s\S]*?)</｜DSML｜')  # a value ends at any closing tag


def _strict_json(text: str) -> bool:
    """Whether ``text`` is one JSON value as RFC 8259 has it (no ``NaN`` or ``Infinity``; not blank), with every
    number within the double range (``1e400`` is refused, as dscodec's reader refuses it: D8)."""

    def refuse(name: str) -> None:
        raise ValueError(name)

    def finite(number: str) -> float:
        value = float(number)
        if math.isinf(value):
            raise ValueError(number)
        return value

    try:
        json.loads(text, parse_constant=refuse, parse_float=finite)
    except (ValueError, RecursionError):
        return False
    return True


#: An output that ends inside a ``string="false"`` value (its raw text, with what of the closing tag came, is no
#: JSON: dscodec writes it as a JSON string, D8, where the reference copies it).
#: D20: the output ends right after an invoke's name and the start of a closing tag, "<" to "</｜DSML" (both
#: spellings).
_ENDS_AFTER_INVOKE_NAME = re.compile(r'invoke name="[^"]*"<(?:/(?:｜(?:D(?:S(?:M(?:L)?)?)?)?)?)?\Z')
_CUT_IN_VALUE = re.compile(r'string="false">(?:(?!</｜DSML｜)[\s\S])*\Z')


def _output_text(pieces: list[Any]) -> str:
    """The whole output: text chunks as they are, ids decoded."""
    decoder = IncrementalDecoder(_vocabulary())
    return "".join(p if isinstance(p, str) else decoder.feed(p) for p in pieces) + decoder.flush()


def _ends_in_half_a_character(pieces: list[Any]) -> bool:
    """Whether a chunk of ids ends in half a character, or in U+FFFD (a byte that is no UTF-8, or the character
    itself): the reference then holds the whole chunk back (D12), which moves its text, a stop and log
    probability entries to a later push, or drops them at the end (a label for triage: look at the case)."""
    decoder = IncrementalDecoder(_vocabulary())
    for piece in pieces:
        if isinstance(piece, list):
            text = decoder.feed(piece)
            if decoder.pending_bytes or text.endswith("\ufffd"):
                return True
    return False


def _whole_characters(pieces: list[Any]) -> list[Any] | None:
    """``pieces`` (chunks of ids) with every cut that falls inside a character moved back to the character's
    start (the chunks that become empty left out), and the ids of a character the output leaves incomplete at its
    end left out; None when every piece is text. A text piece stays as it is: ``--vary`` sends only pieces of
    whole characters after whole characters as text, so the runs of ids between them are re-cut on their own."""
    if all(isinstance(p, str) for p in pieces):
        return None
    out: list[Any] = []
    run: list[list[int]] = []
    for piece in pieces:
        if isinstance(piece, list):
            run.append(piece)
            continue
        out += _whole_characters_of_ids(run)
        out.append(piece)
        run = []
    return out + _whole_characters_of_ids(run)


def _whole_characters_of_ids(pieces: list[list[int]]) -> list[list[int]]:
    """What :func:`_whole_characters` does to a run of chunks of ids."""
    decoder = IncrementalDecoder(_vocabulary())
    ids = [token_id for piece in pieces for token_id in piece]
    # Where a cut may fall: after the ids that leave no bytes held; and before the ids of each held run.
    start_of_run: list[int] = []
    run = 0
    for k, token_id in enumerate(ids):
        if not decoder.pending_bytes:
            run = k
        decoder.feed([token_id])
        start_of_run.append(run if decoder.pending_bytes else k + 1)
    out: list[list[int]] = []
    begin = 0
    end = 0
    for piece in pieces:
        end += len(piece)
        cut = start_of_run[end - 1] if end else 0
        if cut > begin:
            out.append(ids[begin:cut])
            begin = cut
    return out


# D8: `string="maybe"` and the like (a label for triage: look at the case).
_STRING_ATTRIBUTE = re.compile('string="([^"]*)"')
#: D8: ``<｜DSML｜parameter name="a b" …>``, whose key the reference writes as ``"a: `` (a label for triage).
_SPACED_PARAMETER_NAME = re.compile(r'parameter name="[^"<>｜]*\s[^"<>｜]*"')
#: D8: the name of each parameter tag (its key: written escaped when it is no JSON string content).
_PARAMETER_NAME = re.compile(r'parameter name="([^"<>｜]*)"')
#: D8: a parameter tag with no Dsml token before it, or whose ``string`` attribute is cut or missing (dscodec reads
#: a tag by its attributes, the reference by its spelling).
_BARE_PARAMETER_TAG = re.compile(
    r'(?<!｜DSML｜)(?<!｜DSML｜ )parameter name=|parameter name="[^"<>｜]*"(?! string="(?:true|false)")'
)
#: The well-formed DSML tags, in both spellings (a Dsml token anywhere else makes the markup malformed).
_WELL_FORMED_TAG = re.compile(
    '</?｜DSML｜(?:tool_calls| calls)>|</｜DSML｜ ?(?:invoke|parameter)>|<｜DSML｜ ?invoke name="[^"<>｜]*">'
    '|<｜DSML｜ ?parameter name="[^"<>｜]*" string="(?:true|false)">'
)


def _malformed_markup(text: str) -> bool:
    """Whether some Dsml token of ``text`` is not part of a well-formed tag (or a tag is cut by the end)."""
    return text.count("｜DSML｜") != sum(1 for _ in _WELL_FORMED_TAG.finditer(text))


#: A line that begins with "<" but with no tag of a block (``<｜eter``, ``<｜DSrameter``): D8 reads the next
#: closing tag as that tag's own, where the reference ends the call there.
_UNKNOWN_TAG = re.compile("\n<(?!｜DSML｜|/｜DSML｜)")
#: An invoke's opening tag, and a whole parameter (tag, value, closing tag), in both spellings.
_INVOKE_OPENER = re.compile("<｜DSML｜ ?invoke")
_PARAMETER_ELEMENT = re.compile("<｜DSML｜ ?parameter[^>]*>.*?</｜DSML｜ ?parameter>", re.DOTALL)
#: A "<" that begins no tag of a block.
_NO_BLOCK_TAG = re.compile("<(?!/?｜DSML｜)")


def _unknown_tag(text: str) -> bool:
    """Whether an invoke holds, between its parameters, a "<" that begins no tag of the block (``</ck``, on any
    line; :data:`_UNKNOWN_TAG` sees only those that begin a line): D8 takes the next closing tag for that tag's
    own, where the reference ends the call there."""
    return _UNKNOWN_TAG.search(text) is not None or any(
        _NO_BLOCK_TAG.search(_PARAMETER_ELEMENT.sub("", invoke)) for invoke in _INVOKE_OPENER.split(text)[1:]
    )


# D14: a newline right after `<｜`, `<｜D` ... `<｜DSML｜` in text chunks (a label for triage: look at the case).
#: A partial block opener (``<｜``, ``<｜DS``…) or a partial ``</think>`` (``<``, ``</``, ``</th``…) right before a
#: newline: text chunks and token ids differ there in the reference (D14).
_PARTIAL_OPENER_NEWLINE = re.compile(
    "(?:<｜(?:D(?:S(?:M(?:L｜?)?)?)?)?|<(?:/(?:t(?:h(?:i(?:n(?:k)?)?)?)?)?)?)\n"
)


def _paths(mine: Any, other: Any, path: str, out: set[str]) -> None:
    """The paths (list indices left out) where two JSON values differ."""
    if isinstance(mine, dict) and isinstance(other, dict):
        for key in set(mine) | set(other):
            _paths(mine.get(key, MISSING), other.get(key, MISSING), f"{path}.{key}", out)
    elif isinstance(mine, list) and isinstance(other, list) and len(mine) == len(other):
        for a, b in zip(mine, other):
            _paths(a, b, path, out)
    elif mine != other:
        out.add(path)


def _first_difference(ours: list[Any], theirs: list[Any]) -> str:
    """Where two event lists first part: the index and both events."""
    for index, (mine, other) in enumerate(zip(ours, theirs)):
        if mine != other:
            return f"event {index}: dscodec {json.dumps(mine)[:400]} / reference {json.dumps(other)[:400]}"
    return f"{len(ours)} events against {len(theirs)}; the next: {json.dumps((ours + theirs)[min(len(ours), len(theirs))])[:400]}"


_VOCABULARY: Any = None


def _vocabulary() -> Any:
    global _VOCABULARY
    if _VOCABULARY is None:
        from dscodec.vocab import Vocabulary

        _VOCABULARY = Vocabulary.load(None)
    return _VOCABULARY


def random_pieces(units: Any, rng: random.Random) -> list[Any]:
    """``units`` (text or a list of ids) cut at up to 12 random places."""
    cuts = sorted(rng.sample(range(1, len(units)), min(len(units) - 1, rng.randint(0, 12)))) if units else []
    return [units[a:b] for a, b in zip([0, *cuts], [*cuts, len(units)])]


def write_case(
    out: Path, protocol: str, body: dict[str, Any], pieces: list[Any], plan: Plan, number: int
) -> None:
    """Save a differing case (``--out``) as ``<protocol>-<number>.json``."""
    out.mkdir(parents=True, exist_ok=True)
    case = {"protocol": protocol, "body": body, "pieces": pieces, "plan": asdict(plan)}
    (out / f"{protocol}-{number}.json").write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")


def fuzz(protocol: str, args: argparse.Namespace) -> int:
    """Run ``args.count`` outputs of ``protocol`` through both sides; the number that differ."""
    rng = random.Random(args.seed)
    found: Counter[str] = Counter()
    ran = [0]

    @settings(
        max_examples=args.count,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @seed(args.seed)  # the outputs drawn, not only the cut points, follow --seed
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        body = data.draw(request_bodies(protocol))
        if args.json_mode:
            body.pop("tools", None)
            body.pop("tool_choice", None)
            if protocol == "chat_completions":
                body["response_format"] = {"type": "json_object"}
                body["messages"][0]["content"] += " Answer in JSON."  # the word JSON must be in the prompt
            else:
                body["text"] = {"format": {"type": "json_object"}}
                body["input"] += " Answer in JSON."
        if args.custom_tools and protocol == "responses":
            # The Responses-only tool kinds: the apply_patch custom tool, a namespace of functions, and a tool
            # search the client executes (the tool_search function on V4.1; its calls are tool_search_call items).
            body["tools"] = [
                *body.get("tools", []),
                {"type": "custom", "name": "apply_patch"},
                {
                    "type": "tool_search",
                    "execution": "client",
                    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
                },
                {
                    "type": "namespace",
                    "name": "gh",
                    "tools": [{"type": "function", "name": "issue", "parameters": {"type": "object"}}],
                },
            ]
            body.setdefault("tool_choice", "auto")
        if args.stops and protocol != "responses":
            stops = data.draw(st.lists(st.sampled_from(MARKUP_STOPS), min_size=1, max_size=3, unique=True))
            body["stop" if protocol == "chat_completions" else "stop_sequences"] = stops
        request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
        output = data.draw(model_outputs(request, malformed=args.malformed))
        text = output.text
        units: Any = _vocabulary().full.encode(text, add_special_tokens=False).ids if args.ids else text
        if args.truncate and len(units) > 1:
            # The backend's length limit: the output stops anywhere, in any stage, tag or value.
            units = units[: rng.randint(1, len(units) - 1)]
        pieces = random_pieces(units, rng)
        plan = (
            random_plan(rng, len(pieces)) if args.vary else Plan(finish="length" if args.truncate else "stop")
        )
        if args.vary and args.ids and not args.json_mode:
            pieces = _some_as_text(pieces, rng)
        # D7: in JSON mode dscodec answers every cut as the reference answers the whole output in one chunk.
        their_pieces = [units] if args.json_mode and units else pieces
        # The reference then answers one piece: where deltas part cannot be compared (merged whatever the flag).
        merge = not args.exact_deltas or their_pieces is not pieces
        counts = len(pieces) if args.json_mode else 1
        their_plan = plan
        if args.json_mode and units and plan.counts is not None:
            their_plan = replace(plan, counts=(sum(plan.counts),))
        ran[0] += 1

        def both(pieces: list[Any], their_pieces: list[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
            try:
                if args.events:
                    events = reference_events(
                        protocol,
                        body,
                        their_pieces,
                        tokenizer=True,
                        logprobs=args.logprobs,
                        count=counts,
                        plan=their_plan,
                    )
                    theirs = event_view(events, merge=merge)
                    if args.complete:
                        accumulator = RESPONSE_CLASSES[protocol]("id-1", body["model"], 0, 0, 0)
                        for event in events:
                            accumulator.accumulate(event)
                        theirs["complete"] = complete_view(json.loads(accumulator.to_json()))
                else:
                    theirs = reference_response(protocol, body, their_pieces, their_plan)
            except Exception as exc:  # noqa: BLE001 - the reference failing is a case to look at, not a crash
                theirs = {"error": f"{type(exc).__name__}: {exc}"}
            try:
                if args.events:
                    mine = our_events(protocol, body, pieces, logprobs=args.logprobs, plan=plan)
                    ours = event_view(mine, merge=merge)
                    if args.complete:
                        ours["complete"] = complete_view(dscodec.accumulate(protocol, mine))  # type: ignore[arg-type]
                        # A coalescing processor (the example server's for a response that is not streamed) must
                        # build the very same response from the same pushes.
                        coalesced = our_events(
                            protocol, body, pieces, logprobs=args.logprobs, plan=plan, coalesce=True
                        )
                        view = complete_view(dscodec.accumulate(protocol, coalesced))  # type: ignore[arg-type]
                        if view != ours["complete"]:
                            ours["coalesced"], theirs["coalesced"] = view, ours["complete"]
                else:
                    ours = our_response(protocol, body, pieces, plan)
            except Exception as exc:  # noqa: BLE001 - an internal error is exactly what this looks for
                ours = {"error": f"{type(exc).__name__}: {exc}"}
            return ours, theirs

        ours, theirs = both(pieces, their_pieces)
        if ours == theirs:
            return
        keys = [k for k in sorted(set(ours) | set(theirs)) if ours.get(k) != theirs.get(k)]
        key = ",".join(keys)
        if "coalesced" in keys:
            key = "coalesced: the complete response of a coalescing processor is not the streamed one's"
        elif keys == ["complete"]:
            # The same events, and yet the complete responses differ: an accumulator's doing.
            paths: set[str] = set()
            _paths(ours["complete"], theirs["complete"], "", paths)
            key = "the complete response, from the same events: " + ", ".join(sorted(paths)[:4])
        elif args.events and "events" in ours and "events" in theirs:
            key = _event_difference_kind(body, ours["events"], theirs["events"], pieces)
            half = _ends_in_half_a_character(pieces) or _ends_in_half_a_character(their_pieces)
            whole = _whole_characters(pieces) if half else None
            if whole is not None:
                # The same ids cut only between characters: D12 cannot apply, so any difference left is another
                # (whatever label the markup of the output gave first).
                again = both(
                    whole, whole if their_pieces is pieces else [[i for piece in whole for i in piece]]
                )
                if again[0] == again[1]:
                    key = "D12 (a chunk of ids ends in half a character; cut between characters, the same)"
                else:
                    pieces, (ours, theirs) = whole, again
                    key = "cut between characters, still: " + _event_difference_kind(
                        body, ours["events"], theirs["events"], pieces
                    )
        elif _any_tool(body):
            # The reference reads ``any`` as ``auto``: its output starts outside the block (stop sequences apply).
            key = f"D10 (tool_choice any): {key}"
        elif "calls" in keys and (kind := _markup_kind(pieces)) is not None:
            key = f"{kind}: {key}"
        found[key] += 1
        if found[key] <= 3:
            print(f"{protocol}: differs in {key}")
            for k in keys:
                if k == "events" and "events" in ours and "events" in theirs:
                    print(f"    {_first_difference(ours['events'], theirs['events'])}")
                    continue
                print(f"    {k}: dscodec {str(ours.get(k))[:300]!r}")
                print(f"    {k}: reference {str(theirs.get(k))[:300]!r}")
            if args.out:
                write_case(args.out, protocol, body, pieces, plan, sum(found.values()))

    run()
    print(f"{protocol}: {ran[0]} outputs, {sum(found.values())} differ {dict(found)}")
    return sum(found.values())


def recorded_outputs(protocol: str) -> list[tuple[dict[str, Any], str]]:
    """(request body, model output) of every recorded stream scenario of ``protocol``, once per scenario."""
    found: dict[str, tuple[dict[str, Any], str]] = {}
    repo = Path(__file__).resolve().parent.parent
    for path in sorted((repo / "fixtures" / "streams" / protocol).glob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
        meta = lines[0].get("meta", {})
        body = next((line["body"] for line in lines if line.get("kind") == "request"), None)
        output = meta.get("output")
        if isinstance(body, dict) and isinstance(output, str):
            found.setdefault(meta.get("scenario", path.stem), (body, output))
    return list(found.values())


def mutate_output(text: str, others: list[str], rng: random.Random) -> str:
    """``text`` changed in one to three places (see ``--mutate``)."""
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        i = rng.randint(0, len(text))
        j = min(len(text), i + rng.randint(0, 12))
        if roll < 0.35:
            text = text[:i] + rng.choice(_MUTATION_PIECES) + text[i:]
        elif roll < 0.55:
            text = text[:i] + text[j:]
        elif roll < 0.7:
            text = text[:i] + text[i:j] * 2 + text[j:]
        elif roll < 0.85:
            other = rng.choice(others)
            a = rng.randint(0, len(other))
            text = text[:i] + other[a : a + rng.randint(1, 40)] + text[i:]
        else:
            text = text[:i]
    return text


def _json_object_body(body: dict[str, Any]) -> bool:
    formats = (body.get("response_format"), (body.get("text") or {}).get("format"))
    return any(isinstance(f, dict) and f.get("type") == "json_object" for f in formats)


def fuzz_mutated(protocol: str, args: argparse.Namespace) -> int:
    """``--mutate``: recorded outputs of ``protocol``, mutated; the number of outputs whose events differ."""
    rng = random.Random(args.seed)
    cases = recorded_outputs(protocol)
    others = [output for _, output in cases]
    found: Counter[str] = Counter()
    ran = 0
    for _ in range(args.count):
        body, output = rng.choice(cases)
        text = mutate_output(output, others, rng)
        if args.stops and protocol != "responses":
            # Stop strings made of markup pieces, and now and then one the output holds.
            stops = rng.sample(MARKUP_STOPS, rng.randint(1, 3))
            if text and rng.random() < 0.5:
                at = rng.randrange(len(text))
                stops.append(text[at : at + rng.randint(1, 6)])
            body = {**body, ("stop" if protocol == "chat_completions" else "stop_sequences"): stops}
        if _EOS_SPELLING in text:
            continue  # D15: dscodec ends the output at the token, the reference writes it as text
        units: Any = _vocabulary().full.encode(text, add_special_tokens=False).ids if args.ids else text
        pieces = random_pieces(units, rng)
        # D7: in JSON mode dscodec answers every cut as the reference answers the whole output in one chunk.
        json_mode = _json_object_body(body) and bool(units)
        if json_mode and args.logprobs:
            continue  # D19: the reference repeats a push's entries on every content delta in JSON mode
        their_pieces = [units] if json_mode else pieces
        merge = not args.exact_deltas or json_mode  # one piece on the reference's side (as above)
        ran += 1
        try:
            theirs = event_view(
                reference_events(
                    protocol,
                    body,
                    their_pieces,
                    tokenizer=True,
                    count=len(pieces) if json_mode else 1,
                    logprobs=args.logprobs,
                ),
                merge=merge,
            )
        except Exception as exc:  # noqa: BLE001 - the reference failing is a case to look at, not a crash
            theirs = {"error": f"{type(exc).__name__}: {exc}"}
        try:
            ours = event_view(our_events(protocol, body, pieces, logprobs=args.logprobs), merge=merge)
        except Exception as exc:  # noqa: BLE001 - an internal error is exactly what this looks for
            ours = {"error": f"{type(exc).__name__}: {exc}"}
        if ours == theirs:
            continue
        key = "error"
        if "events" in ours and "events" in theirs:
            key = _event_difference_kind(body, ours["events"], theirs["events"], pieces)
        found[key] += 1
        if found[key] <= 3:
            print(f"{protocol}: differs in {key}: {text[:300]!r}")
            if "events" in ours and "events" in theirs:
                print(f"    {_first_difference(ours['events'], theirs['events'])}")
            else:
                print(f"    dscodec {str(ours)[:300]!r} / reference {str(theirs)[:300]!r}")
            if args.out:
                write_case(args.out, protocol, body, pieces, Plan(), sum(found.values()))
    print(f"{protocol}: {ran} mutated outputs, {sum(found.values())} differ {dict(found)}")
    return sum(found.values())


def sweep_cuts(protocol: str, args: argparse.Namespace) -> int:
    """``--cuts``: each recorded well-formed output of ``protocol`` cut at evenly spaced points; the number of
    cuts whose events differ (left out of the count: a ``string="false"`` value cut short, D8)."""
    found: Counter[str] = Counter()
    ran = 0
    for body, output in recorded_outputs(protocol):
        if (
            _EOS_SPELLING in output
            or _json_object_body(body)
            or _any_tool(body)
            or _malformed_markup(output)
            or _UNKNOWN_TAG.search(output)
            or set(_STRING_ATTRIBUTE.findall(output)) - {"true", "false"}
            or any(not _strict_json(value) for value in _FALSE_VALUE.findall(output))
        ):
            continue
        for cut in range(1, len(output), max(1, len(output) // args.cuts)):
            text = output[:cut]
            pieces: list[Any] = [
                _vocabulary().full.encode(text, add_special_tokens=False).ids if args.ids else text
            ]
            plan = Plan(finish="length")
            ran += 1
            theirs = event_view(reference_events(protocol, body, pieces, tokenizer=True, plan=plan))
            ours = event_view(our_events(protocol, body, pieces, plan=plan))
            if ours == theirs:
                continue
            key = (
                'D8 (a string="false" value cut short)'
                if _CUT_IN_VALUE.search(text)
                else _event_difference_kind(body, ours["events"], theirs["events"], pieces)
            )
            found[key] += 1
            if found[key] <= 3 and not key.startswith(("D8 ", "token counts")):
                print(f"{protocol}: differs in {key}: cut after {text[-120:]!r}")
                print(f"    {_first_difference(ours['events'], theirs['events'])}")
    # As ids, a stop sequence matched inside the one chunk changes the token count too (D13).
    expected = ("D8 ", "token counts (D12, D13)") if args.ids else ("D8 ",)
    unexpected = sum(n for key, n in found.items() if not key.startswith(expected))
    print(f"{protocol}: {ran} cuts, {sum(found.values())} differ {dict(found)}")
    return unexpected


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--protocol", choices=PROTOCOLS, action="append")
    parser.add_argument("--count", type=int, default=300, help="outputs per protocol")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--malformed", action="store_true", help="also broken markup")
    parser.add_argument(
        "--ids", action="store_true", help="push token ids (the bundled V4 tokenizer) instead of text"
    )
    parser.add_argument(
        "--events",
        action="store_true",
        help="compare every event (ids and times normalised), not the responses",
    )
    parser.add_argument(
        "--json-mode",
        action="store_true",
        help="Chat and Responses in JSON mode (no tools); the reference gets the whole output in one chunk (D7)",
    )
    parser.add_argument(
        "--custom-tools",
        action="store_true",
        help="Responses also offers the apply_patch custom tool, a namespace of functions and a client tool search",
    )
    parser.add_argument(
        "--logprobs", action="store_true", help="with --ids --events: made-up log probabilities with every id"
    )
    parser.add_argument(
        "--exact-deltas", action="store_true", help="with --events: also compare where deltas part"
    )
    parser.add_argument(
        "--vary",
        action="store_true",
        help="draw the prompt usage, fingerprint, text chunks' token counts and the finish reason (stop, "
        "length, content_filter or none); with --ids, some pieces go as text",
    )
    parser.add_argument(
        "--truncate",
        action="store_true",
        help="cut each output at a random point (the finish reason is length unless --vary draws one)",
    )
    parser.add_argument(
        "--mutate",
        action="store_true",
        help="the recorded scenarios' outputs (fixtures/streams), mutated around their markup; events compared",
    )
    parser.add_argument(
        "--cuts",
        type=int,
        default=0,
        metavar="N",
        help="the recorded well-formed outputs (fixtures/streams), each cut at about N points; events compared",
    )
    parser.add_argument(
        "--complete",
        action="store_true",
        help="with --events: also the complete response each side's accumulator builds from its own events",
    )
    parser.add_argument(
        "--stops",
        action="store_true",
        help="Chat and Messages: stop sequences drawn from pieces of markup, newlines and single characters "
        "(with --mutate, also a piece of the output)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write each differing case here")
    args = parser.parse_args()
    if args.json_mode and args.logprobs:
        # D7 makes the content independent of the chunking, not where log probabilities go; and the reference
        # repeats a push's entries on every content delta in JSON mode (D19).
        parser.error(
            "--json-mode compares with the reference's single chunk, where logprobs go elsewhere (D7, D19)"
        )
    protocols = args.protocol or PROTOCOLS
    if args.json_mode and "messages" in protocols:
        print("messages: left out (Messages has no JSON mode)")
        protocols = [p for p in protocols if p != "messages"]
    if args.cuts:
        return 1 if sum(sweep_cuts(protocol, args) for protocol in protocols) else 0
    if args.mutate:
        return 1 if sum(fuzz_mutated(protocol, args) for protocol in protocols) else 0
    total = sum(fuzz(protocol, args) for protocol in protocols)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
