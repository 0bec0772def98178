"""Anthropic Messages: the event stream and the complete ``message``.

The grammar (Anthropic's streaming reference): ``message_start`` first; then content blocks one at a time, each
``content_block_start`` at the next index, its deltas (``text_delta``/``citations_delta`` for text,
``thinking_delta``/``signature_delta`` for thinking, ``input_json_delta`` for tool use) and its
``content_block_stop``; then one ``message_delta`` with the stop reason and the cumulative usage; then
``message_stop``. ``ping`` may come anywhere; an ``error`` event ends a failed stream. Every event's SSE name is
its ``type``: the anthropic SDK dispatches on the name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dscodec.testing.lint import _sdk
from dscodec.testing.lint._base import (
    Event,
    Report,
    check_anthropic_error,
    check_arguments,
    check_counts,
    check_text,
    count,
    obj,
)

__all__ = ["lint_messages_body", "lint_messages_stream"]

#: The stop reasons that may leave a block's input JSON unfinished (its arguments are then not checked).
_CUT = ("max_tokens", "refusal", "model_context_window_exceeded")

#: The delta types each content block type may carry.
_DELTAS = {
    "text": ("text_delta", "citations_delta"),
    "thinking": ("thinking_delta", "signature_delta"),
    "tool_use": ("input_json_delta",),
    "server_tool_use": ("input_json_delta",),
}


@dataclass
class _Block:
    type: Any
    at: int
    name: Any = None
    open: bool = True
    text: list[str] = field(default_factory=list)
    json: list[str] = field(default_factory=list)
    signature: bool = False


def _usage(report: Report, usage: Any, index: int | None, path: str) -> None:
    if isinstance(usage, Mapping):
        check_counts(report, "MSG007", usage, index, path)


def _stop(
    report: Report, reason: Any, sequence: Any, has_tool_use: bool, index: int | None, path: str
) -> None:
    if reason == "tool_use" and not has_tool_use:
        report.add("MSG010", "stop_reason tool_use without a tool_use block", index, f"{path}stop_reason")
    if (reason == "stop_sequence") != (sequence is not None):
        report.add(
            "MSG011", f"stop_reason {reason!r} with stop_sequence {sequence!r}", index, f"{path}stop_sequence"
        )


def lint_messages_stream(
    events: Sequence[Event], report: Report, *, request: Mapping[str, Any] | None, transport: bool, sdk: bool
) -> None:
    """Check a Messages event stream (GEN001/GEN002/GEN008/GEN009 are checked by the caller)."""
    del request, transport  # nothing here depends on them
    started = False
    start_output: int | None = None
    blocks: dict[int, _Block] = {}
    open_block: int | None = None
    expected = 0
    delta_event: Event | None = None
    stop_reason: Any = None
    stop_sequence: Any = None
    end: Event | None = None
    errored = False
    for event in events:
        data = event.data
        if end is not None:
            report.add("MSG009", f"an event after the end of the stream (frame {end.index})", event.index)
            continue
        if data is None:
            continue
        kind = data.get("type")
        if kind == "ping":
            continue
        if kind == "error":
            check_anthropic_error(report, data, event.index)
            end, errored = event, True
            continue
        if sdk:
            _sdk.validate_event(report, "messages", kind, event.frame.data, event.index)
        if kind == "message_start":
            if started:
                report.add("MSG001", "message_start again", event.index, "type")
            started = True
            message = obj(data.get("message"))
            usage = message.get("usage")
            _usage(report, usage, event.index, "message.usage")
            start_output = count(usage.get("output_tokens")) if isinstance(usage, Mapping) else None
            continue
        if not started:
            report.add("MSG001", f"{kind!r} before message_start", event.index, "type")
            started = True
        index = data.get("index")
        if kind == "content_block_start":
            if index != expected:
                report.add(
                    "MSG002", f"block index {index!r}; the next block is {expected}", event.index, "index"
                )
            if open_block is not None:
                report.add("MSG004", f"block {index!r} starts while block {open_block} is open", event.index)
            if isinstance(index, int) and not isinstance(index, bool):
                expected = index + 1
                spec = obj(data.get("content_block"))
                entry = _Block(spec.get("type"), event.index, spec.get("name"))
                for key in ("text", "thinking"):
                    if isinstance(spec.get(key), str):
                        entry.text.append(spec[key])
                entry.signature = bool(spec.get("signature"))
                blocks[index], open_block = entry, index
        elif kind in ("content_block_delta", "content_block_stop"):
            block_or_none = blocks.get(index) if isinstance(index, int) else None
            if block_or_none is None or not block_or_none.open:
                report.add("MSG003", f"{kind} for block {index!r}, which is not open", event.index, "index")
                continue
            if kind == "content_block_stop":
                block_or_none.open, open_block = False, None
                if block_or_none.type == "thinking" and not block_or_none.signature:
                    report.add("MSG012", f"thinking block {index} stops without a signature", event.index)
                continue
            delta = obj(data.get("delta"))
            dtype = delta.get("type")
            block_type = block_or_none.type
            allowed = _DELTAS.get(block_type) if isinstance(block_type, str) else None
            if allowed is not None and dtype not in allowed:
                report.add(
                    "MSG005", f"a {dtype!r} in a {block_or_none.type} block", event.index, "delta.type"
                )
            elif dtype in ("text_delta", "thinking_delta"):
                value = delta.get("text" if dtype == "text_delta" else "thinking")
                if isinstance(value, str):
                    block_or_none.text.append(value)
            elif dtype == "signature_delta":
                block_or_none.signature = block_or_none.signature or bool(delta.get("signature"))
            elif dtype == "input_json_delta" and isinstance(delta.get("partial_json"), str):
                block_or_none.json.append(delta["partial_json"])
        elif kind == "message_delta":
            if delta_event is not None:
                report.add("MSG006", f"message_delta again (first at frame {delta_event.index})", event.index)
            if open_block is not None:
                report.add("MSG004", f"block {open_block} is still open at message_delta", event.index)
            delta_event = event
            delta = obj(data.get("delta"))
            stop_reason, stop_sequence = delta.get("stop_reason"), delta.get("stop_sequence")
            if stop_reason is None:
                report.add("MSG006", "message_delta without a stop_reason", event.index, "delta.stop_reason")
            usage = data.get("usage")
            _usage(report, usage, event.index, "usage")
            output = count(usage.get("output_tokens")) if isinstance(usage, Mapping) else None
            if output is not None and start_output is not None and output < start_output:
                report.add(
                    "MSG007",
                    f"output_tokens {output} is less than at message_start ({start_output})",
                    event.index,
                    "usage.output_tokens",
                )
        elif kind == "message_stop":
            end = event
            if delta_event is None:
                report.add("MSG006", "message_stop without a message_delta", event.index)
    if not events:
        return
    if end is None:
        report.add("MSG008", "the stream does not end with message_stop")
    if delta_event is not None and not errored:
        has_tool_use = any(block.type == "tool_use" for block in blocks.values())
        _stop(report, stop_reason, stop_sequence, has_tool_use, delta_event.index, "delta.")
    for index, block in sorted(blocks.items()):
        where = f"content[{index}]"
        if block.type in ("text", "thinking"):
            check_text(report, "".join(block.text), None, f"{where} {block.type} deltas")
        if isinstance(block.name, str):
            check_text(report, block.name, block.at, f"{where}.name", answer=False)
        if block.json and not block.open and not errored and stop_reason not in _CUT:
            check_arguments(report, "".join(block.json), block.at, f"{where} input_json deltas")


def lint_messages_body(report: Report, body: Mapping[str, Any], text: str, *, sdk: bool) -> None:
    """Check a complete ``message`` (or an error body)."""
    if body.get("type") == "error":
        check_anthropic_error(report, body, None)
        return
    if sdk:
        _sdk.validate_body(report, "messages", text)
    _usage(report, body.get("usage"), None, "usage")
    content = body.get("content")
    blocks = [block for block in (content if isinstance(content, list) else []) if isinstance(block, Mapping)]
    _stop(
        report,
        body.get("stop_reason"),
        body.get("stop_sequence"),
        any(block.get("type") == "tool_use" for block in blocks),
        None,
        "",
    )
    for k, block in enumerate(blocks):
        where = f"content[{k}]"
        for key in ("text", "thinking"):
            if isinstance(block.get(key), str):
                check_text(report, block[key], None, f"{where}.{key}")
        if block.get("type") == "thinking" and not block.get("signature"):
            report.add("MSG012", "a thinking block without a signature", None, f"{where}.signature")
        if isinstance(block.get("name"), str):
            check_text(report, block["name"], None, f"{where}.name", answer=False)
        if block.get("type") == "tool_use" and not isinstance(block.get("input"), Mapping):
            report.add("GEN005", "tool_use input is not a JSON object", None, f"{where}.input")
