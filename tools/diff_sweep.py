"""Differential sweep: every field of the recorded requests set to each value of a fixed list, both sides compared.

    python tools/diff_sweep.py [--protocol messages] [--streams [--tool-output] [--ids]] [--out /tmp/sweep]
    python tools/diff_sweep.py --strict-keywords

Where ``diff_fuzz.py`` mutates at random, this walks: for each protocol, the valid ``request.json`` files of
``fixtures/requests/`` that both sides already agree on are the seeds; every node of a seed is given, in turn,
each value of :data:`VALUES` (every JSON type, bounds of the integer widths, common enum words) or is deleted.
A node's shape is its key path with array indices left out and each object's ``role`` or ``type`` kept, and
each shape meets each value once per model version (the case name's ``v4-`` or ``v41-``), in the first seed
that has it, so a sweep of a protocol sends a few tens of thousands of bodies.

Compared, without ``--streams``: what ``diff_fuzz.py`` compares (outcome, error message, prompt, ids, every
option), and for Responses also the echo fields and the namespace tool map. With ``--streams``: for each body
both sides accept, every event of a short output (reasoning, ``</think>``, answer), pushed as text chunks. With
``--tool-output`` as well, the output calls the first tool the body declares instead (a string and a JSON
parameter, in the model version's DSML, without the block's opening tag where the prompt holds it), cut into short
chunks, and only bodies that declare a tool are compared: how every field meets a tool call's events. With
``--ids`` the output goes as token ids instead (its text encoded with the added vocabulary, so ``</think>`` and
the Dsml token are the special ids a model writes), :data:`IDS_PER_PUSH` a push.

``--strict-keywords`` sweeps the strict-mode schema rules instead: each keyword of each kind of schema node
(every type, a type list, ``anyOf``, ``$ref``) with well-typed and ill-typed values, in a strict tool and a strict
``json_schema`` format, comparing the normalised schema (the output constraint) or the error.

Deviations dscodec makes on purpose (docs/deviations.md: D4, D9, D10, D11, ...) show up here too. This script
writes nothing into ``fixtures/``; a disagreement worth keeping becomes a golden case (tools/README.md).
"""

from __future__ import annotations

import argparse
import collections
import copy
import itertools
import json
import sys
from pathlib import Path
from typing import Any

TOOLS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS_DIR))

import diff_fuzz
import diff_fuzz_streams
from diff_fuzz_schemas import body_for
from record_golden import Recorder, _load_reference

import dscodec
from dscodec import PromptEncoder
from dscodec.prompt.dialects import dialect_for
from dscodec.vocab import with_added_tokens

#: What each node is set to in turn ("<delete>": the key is removed, the array item dropped).
VALUES: list[Any] = [
    *(0, 1, -1, 2**31, 2**32, 2**53 + 1, 2**63, 2**64, -(2**63) - 1, 1.5, -0.0, 1e300),
    *("", "x", "auto", "none", "required", "low", "high", "text"),
    *([], [1], ["a"], [{}], {}, {"a": 1}, {"type": "x"}),
    *(True, False, None),
    "<delete>",
]

#: The short output each accepted body streams with ``--streams``.
OUTPUT = ["Let me think.", "</think>", "Hello", " world"]

#: ``--tool-output``: how the markup of the call is cut into text chunks (characters a chunk).
TOOL_CHUNK = 7
#: ``--ids``: token ids a push.
IDS_PER_PUSH = 3


def tool_output(request: dscodec.ConversationRequest) -> list[str] | None:
    """The output that calls the first tool ``request`` declares, as text chunks (None: it declares none)."""
    tools = request.conversation.tools
    if not tools:
        return None
    options = request.parsing_options
    d = dialect_for(request.model_version)
    dsml = d.dsml
    parameters = tools[0].parameters  # (None when the tool declares none)
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    key = next(iter(properties), "path") if isinstance(properties, dict) else "path"
    if '"' in key or "<" in key:  # (a name the markup cannot hold as it is)
        key = "path"
    text = "" if options.starts_in_tool_calls else f"Calling.{d.block_separator}<{dsml}{d.tool_calls_tag}>\n"
    text += (
        f'<{dsml}{d.invoke_tag} name="{tools[0].name}">\n'
        f'<{dsml}{d.parameter_tag} name="{key}" string="true">a/b "c"</{dsml}{d.parameter_tag}>\n'
        f'<{dsml}{d.parameter_tag} name="n" string="false">[3, {{"x": null}}]</{dsml}{d.parameter_tag}>\n'
        f"</{dsml}{d.invoke_tag}>\n</{dsml}{d.tool_calls_tag}>"
    )
    pieces = ["Let me think.", "</think>"] if options.thinking_initial_stage is not None else []
    return pieces + [text[i : i + TOOL_CHUNK] for i in range(0, len(text), TOOL_CHUNK)]


#: ``--strict-keywords``: the node kinds, the keywords, and the values each keyword takes.
STRICT_NODES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "number": {"type": "number"},
    "integer": {"type": "integer"},
    "boolean": {"type": "boolean"},
    "null": {"type": "null"},
    "object": {"type": "object", "properties": {"z": {"type": "string"}}},
    "array": {"type": "array", "items": {"type": "string"}},
    "type list": {"type": ["string", "null"]},
    "anyOf": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "$ref": {"$ref": "#/$defs/x"},
}
STRICT_KEYWORDS = [
    *("description", "title", "$comment", "$id", "$anchor", "x-extra", "deprecated", "readOnly", "nullable"),
    *(
        "const",
        "default",
        "examples",
        "enum",
        "format",
        "pattern",
        "minLength",
        "maxLength",
        "contentEncoding",
    ),
    *("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    *(
        "items",
        "prefixItems",
        "contains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
    ),
    *(
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
    ),
    *("maxProperties", "unevaluatedProperties", "dependentRequired", "$defs", "definitions"),
    *("anyOf", "oneOf", "allOf", "not", "$ref", "type", "strict"),
]
STRICT_VALUES: list[Any] = [
    *(
        7,
        -1,
        1.5,
        2**63,
        "x",
        "",
        "email",
        "uuid",
        "date-time",
        "^a$",
        [],
        [1],
        ["a", "b"],
        [{"type": "string"}],
    ),
    *({}, {"a": 1}, {"type": "string"}, {"a": {"type": "string"}}, {"a": ["b"]}, True, False, None),
]


def _shape(body: Any, path: tuple[Any, ...]) -> str:
    """The key path of a node with array indices left out and each object's ``role`` or ``type`` kept."""
    out: list[str] = []
    node = body
    for step in path:
        if isinstance(node, dict):
            kind = node.get("role") or node.get("type")
            out.append(f"{kind}.{step}" if isinstance(kind, str) and len(kind) < 30 else str(step))
        else:
            out.append("#")
        node = node[step]
    return "/".join(out)


class _Sides:
    """Both sides' views of one body of ``protocol``: the request path, or the stream events of :data:`OUTPUT`."""

    def __init__(
        self, ref: Any, protocol: str, *, streams: bool, tools: bool = False, ids: bool = False
    ) -> None:
        self.ref = ref
        self.protocol = protocol
        self.streams = streams
        self.tools = tools
        self.ids = ids
        self.recorder = Recorder(ref, request_class=diff_fuzz.PROTOCOLS[protocol])
        self.encoders = {
            "v4": PromptEncoder(),
            "v4.1": PromptEncoder(with_added_tokens(None, ["<｜System｜>"])),
        }
        self.compared = 0

    def difference(self, body: Any) -> str | None:
        """How the two sides differ on ``body`` (None: alike, or a stream body one side refuses)."""
        raw = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        if self.streams:
            return self._stream_difference(body)
        theirs = diff_fuzz._reference_outcome(self.recorder, self.ref, raw)
        try:
            ours = diff_fuzz._our_outcome(self.protocol, raw, self.encoders)
        except Exception as exc:  # noqa: BLE001 - an internal error is exactly what this looks for
            return f"crash {type(exc).__name__}: {exc}"
        self.compared += 1
        problem = diff_fuzz._differs(ours, theirs)
        if problem is None and self.protocol == "responses" and ours["kind"] == "ok":
            problem = self._responses_extras(raw)
        return problem

    def _responses_extras(self, raw: bytes) -> str | None:
        request = dscodec.convert("responses", raw)
        theirs = self.recorder._echo_and_map(self.ref.ResponsesRequest(raw), self.ref.ConversionOptions())
        echo = request.wire.echo or {}
        ours = {key: echo.get(key) for key in theirs["echo"]}
        if ours != theirs["echo"]:
            return f"echo differs: dscodec {ours} / reference {theirs['echo']}"
        tool_map = {k: list(v) for k, v in request.wire.namespace_tool_map.items()}
        if "error" not in theirs["namespace_tool_map"] and tool_map != theirs["namespace_tool_map"]:
            return (
                f"namespace tool map differs: dscodec {tool_map} / reference {theirs['namespace_tool_map']}"
            )
        return None

    def _stream_difference(self, body: Any) -> str | None:
        try:
            request = dscodec.convert(self.protocol, body)  # type: ignore[arg-type]
        except dscodec.DscodecError:
            return None
        output = tool_output(request) if self.tools else OUTPUT
        if output is None:
            return None
        if self.ids:
            units = self.encoders["v4"].vocabulary.full.encode("".join(output), add_special_tokens=False).ids
            output = [units[i : i + IDS_PER_PUSH] for i in range(0, len(units), IDS_PER_PUSH)]
        try:
            reference = diff_fuzz_streams.reference_events(self.protocol, body, output, tokenizer=True)
        except Exception:  # noqa: BLE001 - the reference refuses the body: nothing to compare
            return None
        try:
            ours = diff_fuzz_streams.our_events(self.protocol, body, output)
        except Exception as exc:  # noqa: BLE001 - an internal error is exactly what this looks for
            return f"crash {type(exc).__name__}: {exc}"
        self.compared += 1
        mine, theirs = diff_fuzz_streams.event_view(ours), diff_fuzz_streams.event_view(reference)
        if mine == theirs:
            return None
        return diff_fuzz_streams._first_difference(mine["events"], theirs["events"])


def sweep(
    ref: Any, protocol: str, *, streams: bool, out: Path | None, tools: bool = False, ids: bool = False
) -> int:
    """Sweep ``protocol``; print the differences by kind; the number of bodies that differ."""
    sides = _Sides(ref, protocol, streams=streams, tools=tools, ids=ids)
    seeds: list[tuple[str, Any]] = []
    skipped = 0
    for path in sorted((diff_fuzz.REPO_DIR / "fixtures" / "requests" / protocol).glob("*/request.json")):
        if "-invalid-" in f"-{path.parent.name}" or len(path.read_bytes()) >= 20_000:
            continue
        try:
            seed = json.loads(path.read_bytes())
        except ValueError:
            continue
        if not isinstance(seed, dict):
            continue
        if sides.difference(seed) is not None:
            skipped += 1  # a seed the sides already disagree on (a deviation): its mutations tell nothing
            continue
        seeds.append((path.parent.name, seed))
    done: set[tuple[str, str]] = set()
    found: dict[str, list[str]] = collections.defaultdict(list)
    bodies = 0
    for name, seed in seeds:
        # Each model version meets each shape and value: V4.1 reads fields V4 ignores (images, for one).
        version = name.split("-", 1)[0]
        for path, _ in diff_fuzz._nodes(seed)[1:]:
            shape = f"{version}:{_shape(seed, path)}"
            for value in VALUES:
                key = (shape, json.dumps(value))
                if key in done:
                    continue
                done.add(key)
                body = copy.deepcopy(seed)
                if value == "<delete>":
                    body = diff_fuzz._delete(body, path)
                else:
                    body = diff_fuzz._set(body, path, copy.deepcopy(value))
                bodies += 1
                problem = sides.difference(body)
                if problem is None:
                    continue
                # A documented deviation is named as diff_fuzz.py names it; any other difference by its start.
                label = None if streams else diff_fuzz.documented(protocol, body, problem)
                kind = label or problem.split("(")[0][:70]
                found[kind].append(f"{name}: {shape} = {json.dumps(value)[:40]}: {problem[:300]}")
                if out is not None:
                    out.mkdir(parents=True, exist_ok=True)
                    number = sum(map(len, found.values()))
                    (out / f"{protocol}-{number}.json").write_text(json.dumps(body, ensure_ascii=False))
    differ = sum(map(len, found.values()))
    what = "request path"
    if streams:
        what = "stream events of a tool call" if tools else "stream events"
        what += " (token ids)" if ids else ""
    print(
        f"{protocol} ({what}): {len(seeds)} seeds ({skipped} left out, already different), {bodies} bodies, "
        f"{sides.compared} compared, {differ} differ"
    )
    for kind, items in sorted(found.items(), key=lambda item: -len(item[1])):
        print(f"  {len(items)} x {kind}")
        for line in items[:4]:
            print(f"    {line}")
    return differ


def strict_keywords(ref: Any) -> int:
    """Sweep the strict-mode schema rules; print each difference; the number found."""

    def reference_side(raw: str) -> str:
        try:
            converted = ref.ChatCompletionRequest(raw).convert(ref.ConversionOptions())
        except ValueError:
            return "read"
        except ref.ConversionError as exc:
            return str(json.loads(exc.body)["error"]["message"])
        return str(converted.inference_options.output_constraint.schema)

    def our_side(raw: str) -> str:
        try:
            request = dscodec.convert("chat_completions", raw)
        except dscodec.ConversionError as exc:
            message = str(exc.body["error"]["message"])
            return "read" if message.startswith(("invalid request body", "invalid JSON request")) else message
        constraint = request.inference_options.output_constraint
        return str(constraint.schema if constraint is not None else None)

    differ = cases = 0
    for (kind, node), keyword, value, first in itertools.product(
        STRICT_NODES.items(), STRICT_KEYWORDS, STRICT_VALUES, (False, True)
    ):
        swept = {keyword: value, **{k: v for k, v in node.items() if k != keyword}} if first else {**node}
        swept[keyword] = value
        schema = {"type": "object", "properties": {"p": swept}, "$defs": {"x": {"type": "string"}}}
        for where in ("tool", "format"):
            body = json.dumps(body_for(schema, where, strict=True))
            cases += 1
            theirs, ours = reference_side(body), our_side(body)
            if theirs != ours:
                differ += 1
                print(
                    f"{kind} {where}: {json.dumps(swept)}\n    reference: {theirs[:200]}\n    dscodec:   {ours[:200]}"
                )
    print(f"strict keywords: {cases} schemas, {differ} differ")
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--protocol", choices=sorted(diff_fuzz.PROTOCOLS), action="append")
    parser.add_argument("--streams", action="store_true", help="compare the stream events of a short output")
    parser.add_argument(
        "--tool-output", action="store_true", help="with --streams: the output calls the body's first tool"
    )
    parser.add_argument("--ids", action="store_true", help="with --streams: the output goes as token ids")
    parser.add_argument("--strict-keywords", action="store_true", help="sweep the strict-mode schema rules")
    parser.add_argument("--out", type=Path, default=None, help="write each differing body here")
    args = parser.parse_args()
    ref = _load_reference()
    if args.strict_keywords:
        return 1 if strict_keywords(ref) else 0
    if (args.tool_output or args.ids) and not args.streams:
        parser.error("--tool-output and --ids compare stream events: give --streams too")
    total = 0
    for protocol in args.protocol or sorted(diff_fuzz.PROTOCOLS):
        total += sweep(
            ref, protocol, streams=args.streams, out=args.out, tools=args.tool_output, ids=args.ids
        )
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
