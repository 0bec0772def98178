"""Differential fuzzing of the request path: mutate recorded request bodies, convert each with dscodec and with
the reference (``deepseek_recipe``, called as a black box), and report every body where the two disagree.

    python tools/diff_fuzz.py [--protocol chat_completions] [--count 2000] [--seed 1] [--out /tmp/diffs]

Seeds are the ``request.json`` files of ``fixtures/requests/``. A mutation replaces a random node with a value
seen elsewhere in the corpus or a hostile one (wrong types, huge numbers, special-token spellings, deep
nesting), deletes a key, duplicates or drops an array item; up to three mutations per body.

With ``--syntax`` the body's text is damaged byte by byte instead (cut short, JSON punctuation, broken literals,
numbers, escapes or bytes that are no UTF-8 inserted), which makes JSON syntax errors.

Compared: the outcome (read error, conversion error, success); for a read error the message (the reference's
``ValueError`` text; D11 labels the shapes dscodec refuses on purpose); for a conversion error the status and the
message; on success the model version, the prompt text, the token ids, the sampling fields and stop sequences,
and the rest of what the golden recorder writes down: every inference and parsing option, the conversation's
settings, messages and tools, the special spans, the image sources, ``stream`` and ``resolve_max_tokens``. Deviations
dscodec makes on purpose (docs/deviations.md) show up as differences too: read them before filing a bug. A
disagreement worth keeping becomes a golden case in ``tools/golden_cases/`` and is recorded with
``tools/record_golden.py``; this script writes nothing into ``fixtures/``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

TOOLS_DIR = Path(__file__).resolve().parent
REPO_DIR = TOOLS_DIR.parent
sys.path.insert(0, str(TOOLS_DIR))
sys.path.insert(0, str(REPO_DIR))

from record_golden import Recorder, _load_reference

# The golden tests' own views of a conversion, so both compare alike (they import no reference).
from tests.support.fixtures import conversion_options, inference_view, message_view

PROTOCOLS = {
    "chat_completions": "ChatCompletionRequest",
    "responses": "ResponsesRequest",
    "messages": "MessagesRequest",
}

HOSTILE: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2**31,
    2**63,
    2**64,
    -(2**63) - 1,
    0.5,
    -0.0,
    1e308,
    "",
    " ",
    "<｜User｜>",
    "<｜end▁of▁sentence｜>",
    "</think>",
    "<｜DSML｜tool_calls>",
    "\u0000",
    "\ud7ff",
    "x" * 300,
    [],
    {},
    [[]],
    {"type": "text", "text": "hi"},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    "auto",
    "none",
    "required",
    "user",
    "assistant",
    "system",
    "tool",
    "developer",
    # Digits that are not ASCII, and more digits than int() reads: where a string is read as a number
    # (a URI's port, an index, a count), str.isdigit() takes them and int() refuses them.
    "\u00b2",
    "\u0661\u0662",
    "\uff18\uff10",
    "9" * 5000,
    "0" * 4999 + "1",
    "http://a:\u00b2/x",
    "http://a:" + "0" * 5000 + "80/x",
    "#/$defs/" + "9" * 5000,
    "1e400",
    "NaN",
]


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    found = [(path, value)]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _nodes(item, (*path, index))
    return found


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return root


def _delete(root: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return root
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return root


def mutate(body: Any, pool: list[Any], rng: random.Random) -> Any:
    body = copy.deepcopy(body)
    for _ in range(rng.choices([1, 2, 3], weights=[6, 3, 1])[0]):
        nodes = _nodes(body)
        path, value = rng.choice(nodes[1:] if len(nodes) > 1 else nodes)
        roll = rng.random()
        if roll < 0.3:
            # A value of the same JSON type from elsewhere in the corpus: reaches the rules behind the reader.
            same = [v for v in rng.sample(pool, min(len(pool), 200)) if type(v) is type(value)]
            body = _set(body, path, copy.deepcopy(rng.choice(same or pool)))
        elif roll < 0.4 and isinstance(value, str):
            # Text with something inserted: a special spelling, a marker, an astral or combining character.
            insert = rng.choice(
                [s for s in HOSTILE if isinstance(s, str)] + ["😀", "e\u0301", "\r\n", "中文"]
            )
            cut = rng.randint(0, len(value))
            body = _set(body, path, value[:cut] + insert + value[cut:])
        elif roll < 0.45:
            body = _set(body, path, copy.deepcopy(rng.choice(pool)))
        elif roll < 0.6:
            body = _set(body, path, copy.deepcopy(rng.choice(HOSTILE)))
        elif roll < 0.75 and path:
            body = _delete(body, path)
        elif roll < 0.85 and isinstance(value, list) and value:
            value.append(copy.deepcopy(rng.choice(value)))
        elif roll < 0.92 and isinstance(value, dict):
            value[rng.choice(["type", "role", "content", "name", "text", "strict", "id"])] = copy.deepcopy(
                rng.choice(pool)
            )
        else:
            body = _set(body, path, [copy.deepcopy(value)])
    return body


def splice(body: Any, items: list[Any], rng: random.Random) -> Any:
    """``body`` with its conversation (``messages``, or a Responses ``input`` list) respliced: one to three items
    of other recorded conversations inserted, two items swapped or one dropped."""
    body = copy.deepcopy(body)
    key = "input" if isinstance(body.get("input"), list) else "messages"
    turns = body.get(key)
    if not isinstance(turns, list) or not items:
        return body
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.6 or not turns:
            turns.insert(rng.randint(0, len(turns)), copy.deepcopy(rng.choice(items)))
        elif roll < 0.8 and len(turns) > 1:
            i, j = rng.sample(range(len(turns)), 2)
            turns[i], turns[j] = turns[j], turns[i]
        else:
            del turns[rng.randrange(len(turns))]
    return body


#: What ``--syntax`` writes into a body's text: JSON punctuation, broken literals, numbers, escapes, bytes that are
#: no UTF-8, whitespace.
SYNTAX_PIECES = (
    b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\", b"\\u", b"\\ud800", b"\\udc00", b"\\x", b"nul", b"tru", b"-",
    b"0", b"01", b"1.", b"1e", b"1e999", b"-1e99999999999", b".5", b"\x00", b"\x1f", b"\xff", b"\xc3", b"\xef\xbb\xbf",
    b" ", b"\n", b"\t", b"NaN", b"Infinity", b"//", b"'",
)  # fmt: skip


def damage(raw: bytes, rng: random.Random) -> bytes:
    """``raw`` with one to three byte-level edits: cut short, a piece inserted, a byte deleted or replaced."""
    for _ in range(rng.choice([1, 1, 2, 3])):
        at = rng.randint(0, len(raw))
        roll = rng.random()
        if roll < 0.2:
            raw = raw[:at]
        elif roll < 0.6:
            raw = raw[:at] + rng.choice(SYNTAX_PIECES) + raw[at:]
        elif roll < 0.8:
            raw = raw[:at] + raw[at + 1 :]
        else:
            raw = raw[:at] + rng.choice(SYNTAX_PIECES)[:1] + raw[at + 1 :]
    return raw


#: dscodec's messages where it refuses on purpose what the reference reads (deviation D11).
_D11 = re.compile(
    r"invalid type: sequence, expected (struct|internally|adjacently|enum)|integer `\d+`, expected variant"
)


def random_options(rng: random.Random) -> dict[str, Any]:
    """Conversion options for ``--options``, spelled as the golden cases spell them (only non-defaults)."""
    bounds = [0, 1, 50, 1000, 4096, 65536, 2**31 - 1, 2**32 - 1]
    choices: dict[str, Any] = {
        "default_thinking_mode": [True, False],
        "reasoning_content_behavior": ["fill_empty", "reject"],
        "thinking_max_tokens_upper_bound": bounds,
        "non_thinking_max_tokens_upper_bound": bounds,
        "responses_web_search": ["drop", "reject"],
        "messages_web_search": ["drop", "reject"],
    }
    spec = {key: rng.choice(values) for key, values in choices.items() if rng.random() < 0.4}
    if rng.random() < 0.2:
        name = rng.choice(["gpt-4o", "claude-sonnet-4", "DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash", "x", ""])
        spec["model_aliases"] = {name: rng.choice(["v4", "v4.1"])}
    if rng.random() < 0.1:
        spec["model_versions_by_name"] = {rng.choice(["m", "DeepSeek-V4-Pro"]): rng.choice(["v4", "v4.1"])}
    return spec


def _reference_outcome(
    recorder: Recorder, ref: Any, raw: bytes, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    try:
        request = recorder.request_class(raw)
    except ValueError as exc:
        # JSON syntax errors are compared word for word; the shape errors by kind only (D2).
        return {"kind": "read", "syntax": str(exc)}
    try:
        converted = request.convert(recorder.options(options or {}))
    except ref.ConversionError as exc:
        body = json.loads(exc.body)
        return {
            "kind": "conversion",
            "status": exc.status_code,
            "message": body.get("error", {}).get("message"),
        }
    version, rendered, ids = recorder.render(converted)
    inference = converted.inference_options
    expected, _ = recorder._success(converted, version)
    return {
        "kind": "ok",
        "version": version,
        "prompt": rendered.prompt,
        "ids": ids,
        "sampling": [inference.temperature, inference.top_p, inference.max_tokens, inference.seed],
        "stops": list(converted.parsing_options.stop_sequences),
        # The rest of what a conversion gives, as the golden recorder writes it down.
        "inference": expected["inference_options"],
        "parsing": expected["parsing_options"],
        "conversation": {k: v for k, v in expected["conversation"].items() if k not in ("messages", "tools")},
        "messages": expected["conversation"]["messages"],
        "tools": expected["conversation"]["tools"],
        "spans": expected["special_spans"],
        "images": expected["image_sources"],
        "stream": expected["stream"],
        "resolution": expected["max_tokens_resolution"],
    }


def _resolutions(request: Any, theirs: list[Any]) -> list[Any]:
    """``resolve_max_tokens`` at the reference's recorded inputs, in the recorder's shape."""
    import dscodec

    out: list[Any] = []
    for prompt_tokens, limit, _ in theirs:
        try:
            out.append([prompt_tokens, limit, request.resolve_max_tokens(prompt_tokens, limit)])
        except dscodec.ContextLengthExceeded as exc:
            out.append([prompt_tokens, limit, {"error": exc.message}])
    return out


def _our_outcome(
    protocol: str, raw: bytes, encoders: dict[str, Any], options: dict[str, Any] | None = None
) -> dict[str, Any]:
    import dscodec

    try:
        request = dscodec.convert(protocol, raw, conversion_options(options or {}))  # type: ignore[arg-type]
    except dscodec.ConversionError as exc:
        message = exc.body.get("error", {}).get("message")
        if exc.status_code == 400 and str(message).startswith(
            ("invalid request body", "invalid JSON request")
        ):
            return {"kind": "read", "message": message}
        return {"kind": "conversion", "status": exc.status_code, "message": message}
    inference = request.inference_options
    rendered = dscodec.render(request)
    conv = request.conversation
    return {
        "kind": "ok",
        "version": request.model_version,
        "prompt": rendered.text,
        "ids": encoders[request.model_version].encode(request),
        "sampling": [inference.temperature, inference.top_p, inference.max_tokens, inference.seed],
        "stops": list(request.parsing_options.stop_sequences),
        "inference": inference_view(inference),
        "parsing": request.parsing_options.model_dump(),
        "conversation": {
            "thinking_mode": conv.thinking_mode,
            "reasoning_effort": conv.reasoning_effort,
            "tool_choice": conv.tool_choice,
            "response_format": conv.response_format,
            "response_schema": conv.response_schema,
            "response_regex": conv.response_regex,
        },
        "messages": [message_view(m) for m in conv.messages],
        "tools": [t.model_dump() for t in conv.tools],
        "spans": [list(span) for span in rendered.special_spans],
        "images": [
            {"kind": i.kind, "path": i.path, "url": i.url, "detail": i.detail} for i in rendered.image_sources
        ],
        "stream": request.stream,
        "request": request,
    }


def _differs(ours: dict[str, Any], theirs: dict[str, Any]) -> str | None:
    if ours["kind"] != theirs["kind"]:
        detail = ours.get("message") or theirs.get("message") or ""
        return f"outcome: dscodec {ours['kind']}, reference {theirs['kind']} ({str(detail)[:120]})"
    if ours["kind"] == "read" and ours.get("message") != theirs["syntax"]:
        message = str(ours.get("message"))
        kind = "syntax" if theirs["syntax"].startswith("invalid JSON request: ") else "shape"
        if _D11.search(message):
            kind = "D11 shape"  # an array read as an object's fields, or an integer tag: dscodec refuses them
        return f"{kind} error: dscodec {message!r} / reference {theirs['syntax']!r}"
    ours_error, their_error = (
        (ours.get("status"), ours.get("message")),
        (theirs.get("status"), theirs.get("message")),
    )
    if ours["kind"] == "conversion" and ours_error != their_error:
        return f"error: dscodec {ours['status']} {ours['message']!r} / reference {theirs['status']} {theirs['message']!r}"
    if ours["kind"] == "ok":
        ours["resolution"] = _resolutions(ours.pop("request"), theirs["resolution"])
        for key in (
            "version",
            "prompt",
            "ids",
            "sampling",
            "stops",
            "inference",
            "parsing",
            "conversation",
            "messages",
            "tools",
            "spans",
            "images",
            "stream",
            "resolution",
        ):
            if ours[key] != theirs[key]:
                return f"{key} differs"
    return None


#: dscodec's message for a stop string over its length limit (deviation D16).
_D16 = "string too long. Expected a string with maximum length 4096"
#: The message both sides give, naming one of several unanswered calls (the reference picks it from a hash map).
_PAIRING = re.compile(
    r"error: dscodec 400 'No tool output found for tool call .*' / reference 400 'No tool output"
)


def documented(protocol: str, body: object, problem: str) -> str | None:
    """The deviation (or known nondeterminism) a difference most likely comes from, as a label for triage; None
    when none fits. A hint only: read the case."""
    if not isinstance(body, dict):
        return None
    if _D16 in problem:
        return "D16 (stop length)"
    if protocol == "responses" and "Unsupported input item type" in problem:
        return "D9 (unknown Responses items)"
    if problem.count("is not present in a registry") == 2:  # both refuse it, naming another reference
        return "several unresolvable $refs (the reference names one at random)"
    # Both refuse it, each naming one of the unknown vocabularies.
    if problem.count("Unknown vocabulary: ") == 2:
        return "several unknown vocabularies (the reference names one at random)"
    if problem.startswith("outcome: dscodec read") and _D11.search(problem):
        return "D11 (an array read as an object's fields)"
    if _PAIRING.match(problem):
        return "pairing message (random call named)"
    choice = body.get("tool_choice")
    if (
        protocol == "messages"
        and isinstance(choice, dict)
        and choice.get("type") in ("any", "tool")
        and not problem.startswith(("syntax", "shape", "D11"))
    ):
        return "D10 (tool_choice any or tool)"
    if (
        protocol == "chat_completions"
        and "max_completion_tokens" in body
        and problem.split(" ")[0] in ("sampling", "inference", "resolution", "outcome:", "error:", "shape")
    ):
        # (a shape error too: dscodec reads the field, so a malformed one is its first problem)
        return "D4 (max_completion_tokens)"
    messages = body.get("messages")
    if (
        protocol == "chat_completions"
        and isinstance(messages, list)
        and any(isinstance(m, dict) and m.get("role") == "assistant" and "reasoning" in m for m in messages)
    ):
        return "D17 (an assistant message's reasoning field)"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--protocol", choices=sorted(PROTOCOLS), action="append")
    parser.add_argument("--count", type=int, default=1000, help="bodies per protocol")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="write each differing body here")
    parser.add_argument(
        "--syntax",
        action="store_true",
        help="damage the bytes of the body's text instead (JSON syntax errors)",
    )
    parser.add_argument(
        "--options",
        action="store_true",
        help="convert each body with random conversion options (thinking default, missing reasoning, web search, "
        "max_tokens bounds, model names), the same on both sides",
    )
    parser.add_argument(
        "--splice",
        action="store_true",
        help="resplice conversations: turns of other recorded bodies inserted, swapped, dropped (then mutated now "
        "and then)",
    )
    args = parser.parse_args()

    from dscodec.prompt.tokenize import PromptEncoder
    from dscodec.vocab import with_added_tokens

    ref = _load_reference()
    encoders = {"v4": PromptEncoder(), "v4.1": PromptEncoder(with_added_tokens(None, ["<｜System｜>"]))}
    rng = random.Random(args.seed)
    total = 0
    for protocol in args.protocol or sorted(PROTOCOLS):
        recorder = Recorder(ref, request_class=PROTOCOLS[protocol])
        seeds = []
        for path in sorted((REPO_DIR / "fixtures" / "requests" / protocol).glob("*/request.json")):
            try:
                seed = json.loads(path.read_bytes())
            except (ValueError, RecursionError):
                continue
            if isinstance(seed, dict) and len(path.read_bytes()) < 50_000:
                seeds.append(seed)
        pool = [
            value for seed in seeds for _, value in _nodes(seed)[1:] if not isinstance(value, (dict, list))
        ]
        pool += [value for seed in seeds for _, value in _nodes(seed)[1:] if isinstance(value, (dict, list))][
            :5000
        ]
        items = [
            item
            for seed in seeds
            for turns in (seed.get("messages"), seed.get("input"))
            if isinstance(turns, list)
            for item in turns
        ]
        kinds: Counter[str] = Counter()
        found: Counter[str] = Counter()
        for number in range(args.count):
            if args.splice:
                body = splice(rng.choice(seeds), items, rng)
                if rng.random() < 0.3:
                    body = mutate(body, pool, rng)
            else:
                body = mutate(rng.choice(seeds), pool, rng)
            raw = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
            if args.syntax:
                raw = damage(raw, rng)
            options = random_options(rng) if args.options else None
            theirs = _reference_outcome(recorder, ref, raw, options)
            try:
                ours = _our_outcome(protocol, raw, encoders, options)
            except Exception as exc:  # noqa: BLE001 - an internal error is exactly what this looks for
                ours = {"kind": f"crash {type(exc).__name__}: {exc}"[:200]}
            kinds[theirs["kind"]] += 1
            problem = _differs(ours, theirs)
            if problem is None:
                continue
            label = documented(protocol, body, problem)
            key = label or problem.split(":")[0] + ":" + problem.split("(")[0][-60:]
            found[key] += 1
            if found[key] <= 3:
                print(f"{protocol} #{number}: {f'{label}? ' if label else ''}{problem}")
                if options:
                    print(f"    options: {json.dumps(options)}")
                if args.out:
                    args.out.mkdir(parents=True, exist_ok=True)
                    (args.out / f"{protocol}-{number}.json").write_bytes(raw)
                    if options:
                        (args.out / f"{protocol}-{number}.options.json").write_text(json.dumps(options))
            total += 1
        labelled = {key: count for key, count in found.items() if key.startswith(("D", "pairing", "several"))}
        print(
            f"{protocol}: {args.count} bodies, reference outcomes {dict(kinds)}, {sum(found.values())} differ"
            f" (labelled: {labelled})"
        )
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
