"""Record golden fixtures by calling the reference ``deepseek_recipe`` 0.2.0 as a black box.

Usage::

    python tools/record_golden.py requests chat_completions          # re-record that suite
    python tools/record_golden.py requests chat_completions --check  # compare, write nothing
    python tools/record_golden.py requests                           # re-record every suite of the kind
    python tools/record_golden.py requests --list                    # list the known suites

The case lists live in ``tools/golden_cases/<module>.py`` (see ``SUITE_MODULES``). Each run rebuilds
``fixtures/<kind>/<suite>/`` from scratch, so a removed case disappears and fixtures are never edited by hand.
The reference is only needed here: neither dscodec nor its tests import it. See tools/README.md.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

TOOLS_DIR = Path(__file__).resolve().parent
REPO_DIR = TOOLS_DIR.parent
sys.path.insert(0, str(TOOLS_DIR))

from golden_cases import Case, CrossCase, check_unique

REFERENCE_VERSION = "0.2.0"
INSTALL_HINT = (
    "the reference package is not importable; install it into this virtualenv first:\n"
    f"    pip install deepseek-recipe=={REFERENCE_VERSION}\n"
    "(it is a recording tool only, never a dependency of dscodec or its tests)"
)

#: Suites per fixture kind; each name is a fixture folder and, unless SUITE_MODULES says otherwise, a module of
#: tools/golden_cases/.
SUITES: Mapping[str, Sequence[str]] = {"requests": ("chat_completions", "responses", "messages", "cross")}

#: Suites whose case module is not named like the suite.
SUITE_MODULES: Mapping[str, str] = {"cross": "cross_protocol"}

#: The cross suite: one conversation per protocol, recorded by _record_cross_suite (tools/README.md).
CROSS_SUITE = "cross"
CROSS_PROTOCOLS: Mapping[str, str] = {
    "chat_completions": "ChatCompletionRequest",
    "responses": "ResponsesRequest",
    "messages": "MessagesRequest",
}

#: (prompt_tokens, context_limit) pairs for ``resolve_max_tokens`` (spec §1.4). The overflow pair is computed
#: per case from the requested max_tokens, and a last pair fills the context exactly.
_BASE_RESOLUTION_PAIRS = ((100, 1_000_000), (100, 5000))
#: The largest count the reference takes (its token counts are 32-bit).
_U32_MAX = 2**32 - 1


def _load_reference() -> ModuleType:
    try:
        module = importlib.import_module("deepseek_recipe")
    except ImportError:
        sys.exit(INSTALL_HINT)
    version = getattr(module, "__version__", "?")
    if version != REFERENCE_VERSION:
        sys.exit(f"deepseek_recipe {version} is installed, but the fixtures describe {REFERENCE_VERSION}")
    return module


def _lookup(table: Sequence[tuple[Any, str]], member: Any) -> str:
    for candidate, name in table:
        if candidate == member:
            return name
    raise LookupError(f"unexpected reference enum value {member!r}; update tools/record_golden.py")


class Recorder:
    """Turns cases into fixture files using one loaded reference module."""

    def __init__(self, ref: ModuleType, *, request_class: str, record_echo: bool = False) -> None:
        # Imported here so that --list and the install hint work without dscodec's dependencies.
        from dscodec.vocab import bundled_tokenizer_path, with_added_tokens

        self.ref = ref
        self.request_class: Callable[[Any], Any] = getattr(ref, request_class)
        # Responses requests also expose echo() and namespace_tool_map(); their suite asks for both to be recorded.
        self.record_echo = record_echo
        # The reference's enums are not hashable, so they are looked up by equality.
        self.versions = [
            (ref.ModelVersion.DeepseekV4Pro, "v4"),
            (ref.ModelVersion.DeepseekV41Flash, "v4.1"),
        ]
        self.stages = [
            (ref.ThinkingInitialStage.ReasoningStart, "reasoning_start"),
            (ref.ThinkingInitialStage.ReasoningContinuation, "reasoning_continuation"),
            (ref.ThinkingInitialStage.ContentContinuation, "content_continuation"),
        ]
        # V4 ids use the shipped V4 tokenizer; V4.1 ids use the same vocabulary plus <｜System｜> as a new added
        # token, because no V4.1 tokenizer is available (spec §8 item 10).
        v4_tok = ref.Tokenizer.from_file(str(bundled_tokenizer_path()))
        v41_tok = ref.Tokenizer.from_str(with_added_tokens(None, ["<｜System｜>"]).to_str())
        self.encodings = {
            "v4": (ref.DeepseekV4Encoding(), ref.DeepseekV4Encoding().with_tokenizer(v4_tok)),
            "v4.1": (ref.DeepseekV41Encoding(), ref.DeepseekV41Encoding().with_tokenizer(v41_tok)),
        }

    def options(self, spec: Mapping[str, Any]) -> Any:
        """Build the reference's ConversionOptions from dscodec-spelled options."""
        ref = self.ref
        by_name = {"v4": ref.ModelVersion.DeepseekV4Pro, "v4.1": ref.ModelVersion.DeepseekV41Flash}
        opts = ref.ConversionOptions()
        if "default_thinking_mode" in spec:
            opts = opts.with_default_thinking_mode(spec["default_thinking_mode"])
        if "reasoning_content_behavior" in spec:
            behavior = {
                "fill_empty": ref.ReasoningContentBehavior.FillEmpty,
                "reject": ref.ReasoningContentBehavior.Reject,
            }[spec["reasoning_content_behavior"]]
            opts = opts.with_reasoning_content_behavior(behavior)
        if "thinking_max_tokens_upper_bound" in spec:
            opts = opts.with_thinking_max_tokens_upper_bound(spec["thinking_max_tokens_upper_bound"])
        if "non_thinking_max_tokens_upper_bound" in spec:
            opts = opts.with_non_thinking_max_tokens_upper_bound(spec["non_thinking_max_tokens_upper_bound"])
        # The table is replaced first, then aliases are added on top (the documented meaning of both options).
        if "model_versions_by_name" in spec:
            opts = opts.with_model_versions_by_name(
                {k: by_name[v] for k, v in spec["model_versions_by_name"].items()}
            )
        for name, version in spec.get("model_aliases", {}).items():
            opts = opts.with_model_alias(name, by_name[version])
        behaviors = {"drop": ref.WebSearchBehavior.Drop, "reject": ref.WebSearchBehavior.Reject}
        if "responses_web_search" in spec:
            opts = opts.with_responses_web_search(behaviors[spec["responses_web_search"]])
        if "messages_web_search" in spec:
            opts = opts.with_messages_web_search(behaviors[spec["messages_web_search"]])
        return opts

    def record(self, case: Case, *, protocol: str) -> tuple[dict[str, bytes], str | None]:
        """Return the fixture files of one case and the model version it converted to (None on error)."""
        body = case.request_bytes()
        files = {
            "request.json": body,
            "case.json": dump_json(
                {
                    "description": case.description,
                    "protocol": protocol,
                    "options": dict(case.options),
                    # Only cases dscodec answers differently on purpose carry the key (tools/README.md).
                    **({"deviation": case.deviation} if case.deviation else {}),
                }
            ),
        }
        try:
            request = self.request_class(body)
        except ValueError as exc:
            # Deviation D2: the reference raises a bare ValueError for malformed bodies; dscodec answers 400.
            files["expected.json"] = dump_json({"error": {"kind": "parse", "message": str(exc)}})
            return files, None
        options = self.options(case.options)
        # echo() and namespace_tool_map() must run before convert(), which consumes the request.
        extras = self._echo_and_map(request, options) if self.record_echo else {}
        try:
            converted = request.convert(options)
        except self.ref.ConversionError as exc:
            files["expected.json"] = dump_json(
                {
                    "error": {
                        "kind": "conversion",
                        "status": exc.status_code,
                        "body": json.loads(exc.body),
                        "message": str(exc),
                    },
                    **extras,
                }
            )
            return files, None
        version = _lookup(self.versions, converted.model_version)
        expected, prompt = self._success(converted, version)
        files["expected.json"] = dump_json({**expected, **extras})
        files["prompt.txt"] = prompt.encode("utf-8")
        return files, version

    def _echo_and_map(self, request: Any, options: Any) -> dict[str, Any]:
        """The Responses echo fields and namespace tool map (tools/README.md, "Responses extras")."""
        echo = request.echo()
        fields = ("instructions", "max_output_tokens", "temperature", "top_logprobs", "top_p", "user")
        tool_map: Any
        try:
            # The reference returns a hash map whose iteration order varies between runs: sort by name.
            raw = request.namespace_tool_map(options)
            tool_map = {name: list(raw[name]) for name in sorted(raw)}
        except self.ref.ConversionError as exc:
            tool_map = {"error": str(exc)}
        return {"echo": {f: getattr(echo, f) for f in fields}, "namespace_tool_map": tool_map}

    def render(self, converted: Any) -> tuple[str, Any, list[int]]:
        """The model version, rendered prompt and ids of a converted request."""
        version = _lookup(self.versions, converted.model_version)
        renderer, encoder = self.encodings[version]
        return (
            version,
            renderer.render_conversation(converted.conversation),
            list(encoder.encode(converted.conversation)),
        )

    def _success(self, converted: Any, version: str) -> tuple[dict[str, Any], str]:
        renderer, encoder = self.encodings[version]
        conv = converted.conversation
        rendered = renderer.render_conversation(conv)
        ids = encoder.encode(conv)
        inference = converted.inference_options
        parsing = converted.parsing_options
        constraint = inference.output_constraint
        stage = parsing.thinking_initial_stage
        expected: dict[str, Any] = {
            "model_version": version,
            "stream": converted.stream,
            "conversation": self._conversation(conv),
            "inference_options": {
                "temperature": inference.temperature,
                "top_p": inference.top_p,
                "max_tokens": inference.max_tokens,
                "logprobs": inference.logprobs,
                "top_logprobs": inference.top_logprobs,
                "seed": inference.seed,
                "output_constraint": None
                if constraint is None
                else {"kind": constraint.kind, "schema": constraint.schema},
            },
            "parsing_options": {
                "parse_tool_calls": parsing.parse_tool_calls,
                "starts_in_tool_calls": parsing.starts_in_tool_calls,
                "parse_json_output": parsing.parse_json_output,
                "thinking_initial_stage": None if stage is None else _lookup(self.stages, stage),
                "stop_sequences": list(parsing.stop_sequences),
            },
            "image_sources": [self._image_source(s) for s in rendered.image_sources],
            "special_spans": [[start, end] for start, end in rendered.special_ranges],
            "ids": list(ids),
            "max_tokens_resolution": self._resolutions(converted, inference.max_tokens),
        }
        return expected, rendered.prompt

    def _conversation(self, conv: Any) -> dict[str, Any]:
        return {
            "thinking_mode": conv.thinking_mode,
            "reasoning_effort": conv.reasoning_effort,
            "tool_choice": conv.tool_choice,
            "response_format": conv.response_format,
            "response_schema": conv.response_schema,
            "response_regex": conv.response_regex,
            "tools": [self._tool(t) for t in conv.tools],
            "messages": [self._message(m) for m in conv.messages],
        }

    @staticmethod
    def _tool(tool: Any) -> dict[str, Any]:
        return {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": tool.strict,
            "defer_loading": tool.defer_loading,
        }

    @classmethod
    def _message(cls, message: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"role": message.role, "content": message.content}
        # SystemMessage.tools (Messages tool_addition / tool_reference, kept by V4.1 conversion): recorded only when
        # set, so Chat fixtures, where it is always None, keep their shape.
        tools = getattr(message, "tools", None) if message.role == "system" else None
        if tools is not None:
            out["tools"] = [cls._tool(t) for t in tools]
        if message.role == "assistant":
            out["reasoning"] = message.reasoning_content
            out["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in (message.tool_calls or [])
            ]
            out["prefix"] = message.prefix
        if message.role == "tool":
            out["tool_call_id"] = message.tool_call_id
        out["image_count"] = len(message.image_sources)
        return out

    @staticmethod
    def _image_source(source: Any) -> dict[str, Any]:
        # A data-URL source has no `url`; its data URL is recorded in the same field (tools/README.md).
        url = source.url if source.url is not None else source.data_url
        return {"kind": source.kind, "path": source.path, "url": url, "detail": source.detail}

    def _resolutions(self, converted: Any, requested: int | None) -> list[list[Any]]:
        # Overflow by exactly one token, whether or not a completion budget was requested.
        overflow = (1001, 1000 + (requested or 0))
        pairs = [*_BASE_RESOLUTION_PAIRS, overflow, (5000, 5000)]
        if requested is not None and requested > _U32_MAX - 1000:
            # Near the 32-bit limit the reference's sum saturates (its counts are 32-bit: no overflow pair then).
            pairs = [
                *_BASE_RESOLUTION_PAIRS,
                (5000, 5000),
                (1, _U32_MAX),
                (2, _U32_MAX),
                (_U32_MAX, _U32_MAX),
            ]
        rows: list[list[Any]] = []
        for prompt_tokens, limit in pairs:
            try:
                result: Any = converted.resolve_max_tokens(prompt_tokens, limit)
            except self.ref.ConversionError as exc:
                result = {"error": str(exc)}
            rows.append([prompt_tokens, limit, result])
        return rows


# --------------------------------------------------------------------------------------------------------------
# JSON writer: indent 1, raw non-ASCII, and flat lists (ids, spans, stop strings) on one line for short diffs.


def _is_flat(value: list[Any]) -> bool:
    """Whether a list goes on one line: scalars and one level of small containers, but not a list of records."""

    def scalar(v: Any) -> bool:
        return not isinstance(v, (dict, list))

    def shallow(v: Any) -> bool:
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else [v]
        return all(scalar(x) for x in items)

    if all(isinstance(v, dict) for v in value):
        return False  # tools, messages, image sources: one record per block
    return all(shallow(v) for v in value)


def _dump(value: Any, depth: int) -> str:
    if isinstance(value, dict) and value:
        inner = " " * (depth + 1)
        items = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {_dump(v, depth + 1)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
    if isinstance(value, list) and value and not _is_flat(value):
        inner = " " * (depth + 1)
        items = [inner + _dump(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * depth + "]"
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def dump_json(value: Any) -> bytes:
    """Serialise a fixture JSON file (UTF-8, trailing newline)."""
    return (_dump(value, 0) + "\n").encode("utf-8")


# --------------------------------------------------------------------------------------------------------------


def _record_suite(kind: str, suite: str, target: Path) -> dict[str, int]:
    module = importlib.import_module(f"golden_cases.{SUITE_MODULES.get(suite, suite)}")
    if suite == CROSS_SUITE:
        return _record_cross_suite(module, target)
    cases = check_unique(module.cases())
    recorder = Recorder(
        _load_reference(),
        request_class=module.REQUEST_CLASS,
        record_echo=getattr(module, "RECORD_ECHO", False),
    )
    counts = {"v4": 0, "v4.1": 0, "invalid": 0}
    problems: list[str] = []
    outputs: dict[str, dict[str, bytes]] = {}
    for case in cases:
        files, version = recorder.record(case, protocol=module.PROTOCOL)
        if case.expects_error != (version is None):
            outcome = json.loads(files["expected.json"]).get("error", {}).get("message", "success")
            problems.append(
                f"{case.name}: named as {'in' if case.expects_error else ''}valid, got: {outcome}"
            )
        elif version is not None and not case.name.startswith("v4-" if version == "v4" else "v41-"):
            problems.append(f"{case.name}: converted to {version}, the name prefix disagrees")
        counts["invalid" if version is None else version] += 1
        outputs[case.name] = files
    if problems:
        sys.exit("refusing to write the suite:\n  " + "\n  ".join(problems))
    _write_suite(target, outputs)
    return counts


def _write_suite(target: Path, outputs: Mapping[str, Mapping[str, bytes]]) -> None:
    if target.exists():
        shutil.rmtree(target)
    for name, files in outputs.items():
        folder = target / name
        folder.mkdir(parents=True)
        for filename, data in files.items():
            (folder / filename).write_bytes(data)


def _record_cross_suite(module: ModuleType, target: Path) -> dict[str, int]:
    """Record conversations written in all three protocols; each must render identically (tools/README.md)."""
    cases: list[CrossCase] = check_unique(module.cases())
    ref = _load_reference()
    # One recorder (its tokenizers are slow to load) renders for all three; only the parsing class differs.
    recorder = Recorder(ref, request_class=CROSS_PROTOCOLS["chat_completions"])
    parsers: dict[str, Callable[[Any], Any]] = {
        protocol: getattr(ref, class_name) for protocol, class_name in CROSS_PROTOCOLS.items()
    }
    counts = {"v4": 0, "v4.1": 0, "invalid": 0}
    problems: list[str] = []
    outputs: dict[str, dict[str, bytes]] = {}
    for case in cases:
        bodies = case.bodies()
        results: dict[str, tuple[str, str, list[list[int]], list[int]]] = {}
        for protocol, body in bodies.items():
            try:
                converted = parsers[protocol](body).convert(recorder.options(case.options))
            except (ValueError, ref.ConversionError) as exc:
                problems.append(f"{case.name}: the {protocol} body failed: {exc}")
                continue
            version, rendered, ids = recorder.render(converted)
            spans = [[start, end] for start, end in rendered.special_ranges]
            results[protocol] = (version, rendered.prompt, spans, ids)
        if len(results) != len(bodies):
            continue
        (first, reference), *others = results.items()
        for protocol, result in others:
            for index, part in enumerate(("model version", "prompt", "special spans", "ids")):
                if result[index] != reference[index]:
                    detail = _first_difference(reference[1], result[1]) if part == "prompt" else ""
                    problems.append(f"{case.name}: {protocol} and {first} differ in the {part}{detail}")
                    break
        version = reference[0]
        if not case.name.startswith("v4-" if version == "v4" else "v41-"):
            problems.append(f"{case.name}: converted to {version}, the name prefix disagrees")
        counts[version] += 1
        files = {f"{protocol}.json": body for protocol, body in bodies.items()}
        files["case.json"] = dump_json({"description": case.description, "options": dict(case.options)})
        files["expected.json"] = dump_json(
            {
                "model_version": version,
                "prompt": reference[1],
                "special_spans": reference[2],
                "ids": reference[3],
            }
        )
        outputs[case.name] = files
    if problems:
        sys.exit("refusing to write the suite:\n  " + "\n  ".join(problems))
    _write_suite(target, outputs)
    return counts


def _first_difference(a: str, b: str) -> str:
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f" at code point {at}: {a[max(0, at - 40) : at + 40]!r} vs {b[max(0, at - 40) : at + 40]!r}"


def _compare(old: Path, new: Path) -> list[str]:
    """Differences between two recorded suite folders, as short human-readable lines."""
    lines: list[str] = []
    old_files = {p.relative_to(old) for p in old.rglob("*") if p.is_file()} if old.exists() else set()
    new_files = {p.relative_to(new) for p in new.rglob("*") if p.is_file()}
    for rel in sorted(old_files - new_files):
        lines.append(f"removed: {rel}")
    for rel in sorted(new_files - old_files):
        lines.append(f"added: {rel}")
    for rel in sorted(old_files & new_files):
        a, b = (old / rel).read_bytes(), (new / rel).read_bytes()
        if a != b:
            lines.append(f"changed: {rel}")
            diff = difflib.unified_diff(
                a.decode("utf-8", "replace").splitlines(),
                b.decode("utf-8", "replace").splitlines(),
                lineterm="",
                n=1,
            )
            lines.extend("    " + d for d in list(diff)[2:12])
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("kind", choices=sorted(SUITES), help="fixture kind")
    parser.add_argument("suites", nargs="*", help="suite names (default: every suite of the kind)")
    parser.add_argument("--fixtures", type=Path, default=REPO_DIR / "fixtures", help="fixtures root")
    parser.add_argument(
        "--check", action="store_true", help="record into a temporary folder and report changes"
    )
    parser.add_argument("--list", action="store_true", help="list the suites of the kind and exit")
    args = parser.parse_args(argv)
    known = SUITES[args.kind]
    if args.list:
        print("\n".join(known))
        return 0
    suites = args.suites or list(known)
    for suite in suites:
        if suite not in known:
            parser.error(f"unknown suite {suite!r} for {args.kind}; known: {', '.join(known)}")
    status = 0
    for suite in suites:
        final = args.fixtures / args.kind / suite
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                counts = _record_suite(args.kind, suite, Path(tmp) / suite)
                changes = _compare(final, Path(tmp) / suite)
            print("\n".join(changes) if changes else f"{args.kind}/{suite}: up to date")
            status |= 1 if changes else 0
        else:
            counts = _record_suite(args.kind, suite, final)
        print(
            f"{args.kind}/{suite}: {counts['v4']} valid V4, {counts['v4.1']} valid V4.1, "
            f"{counts['invalid']} invalid ({sum(counts.values())} cases)"
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
