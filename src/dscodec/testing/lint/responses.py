"""OpenAI Responses: the event stream and the complete ``response`` object.

The grammar (OpenAI's Responses streaming reference): ``response.created`` first (``response.in_progress``
usually next); ``sequence_number`` 0, 1, 2, ... on every event; each output item is announced by
``response.output_item.added`` at the next ``output_index`` and ended by ``response.output_item.done``; inside
an item, each content part is announced by ``response.content_part.added`` at the next ``content_index`` and ended
by ``response.content_part.done``; text grows by ``*.delta`` events and is repeated whole by ``*.done`` (text
done, part done, item done), which must equal the deltas; a function call's arguments grow the same way. The
stream ends with ``response.completed``, ``response.incomplete`` or ``response.failed`` (or an ``error`` event),
whose response holds the output the item events add up to, and whose status fits the event.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dscodec.testing.compare import compare
from dscodec.testing.lint import _sdk
from dscodec.testing.lint._base import (
    Event,
    Report,
    check_arguments,
    check_counts,
    check_openai_error,
    check_text,
    obj,
)

__all__ = ["lint_responses_body", "lint_responses_stream"]

_LIFECYCLE = {
    "response.created": ("in_progress", "queued"),
    "response.queued": ("queued",),
    "response.in_progress": ("in_progress",),
    "response.completed": ("completed",),
    "response.incomplete": ("incomplete",),
    "response.failed": ("failed",),
}
_FINAL = ("response.completed", "response.incomplete", "response.failed", "error")
_TEXT_DELTAS = {
    "response.output_text.delta": "output_text",
    "response.reasoning_text.delta": "reasoning_text",
    "response.refusal.delta": "refusal",
}
_TEXT_DONES = {
    "response.output_text.done": ("output_text", "text"),
    "response.reasoning_text.done": ("reasoning_text", "text"),
    "response.refusal.done": ("refusal", "refusal"),
}
_ITEM_STREAMS = {  # the item field a delta/done pair grows, by event type prefix
    "response.function_call_arguments": "arguments",
    "response.custom_tool_call_input": "input",
}


@dataclass
class _Part:
    pieces: list[str]
    done: bool = False
    text_done: bool = False


@dataclass
class _Item:
    id: Any
    type: Any
    name: Any
    at: int
    parts: dict[int, _Part] = field(default_factory=dict)
    pieces: list[str] = field(default_factory=list)  # arguments or input
    done: bool = False
    stream_done: bool = False
    final: Mapping[str, Any] | None = None  # the item of output_item.done


#: A usage object's total and the counts it adds up, and each detail count with the count it is part of.
_USAGE_TOTAL = ("total_tokens", "input_tokens", "output_tokens")
_USAGE_PARTS = (
    ("input_tokens_details", "cached_tokens", "input_tokens"),
    ("output_tokens_details", "reasoning_tokens", "output_tokens"),
)


def _usage(report: Report, usage: Any, index: int | None, path: str) -> None:
    if isinstance(usage, Mapping):
        check_counts(report, "RSP013", usage, index, path, total=_USAGE_TOTAL, parts=_USAGE_PARTS)


def _status(report: Report, kind: str, response: Mapping[str, Any], index: int | None, path: str) -> None:
    """RSP011: the status fits the event (``kind`` "" for a complete body) and its details are there."""
    status = response.get("status")
    allowed = _LIFECYCLE.get(kind)
    if allowed is not None and status not in allowed:
        report.add("RSP011", f"{kind} carries status {status!r}", index, f"{path}status")
    elif status == "incomplete" and not isinstance(response.get("incomplete_details"), Mapping):
        report.add(
            "RSP011", "status incomplete without incomplete_details", index, f"{path}incomplete_details"
        )
    elif status == "failed" and not isinstance(response.get("error"), Mapping):
        report.add("RSP011", "status failed without an error", index, f"{path}error")


class _Stream:
    def __init__(self, report: Report, sdk: bool) -> None:
        self.report = report
        self.sdk = sdk
        self.items: dict[int, _Item] = {}
        self.response_id: Any = None
        self.final: Event | None = None
        self.seen_json = False
        self.expected_seq: int | None = 0

    def add(self, code: str, message: str, event: Event, path: str = "") -> None:
        self.report.add(code, message, event.index, path)

    # -- lookups -------------------------------------------------------------------------------------------

    def item(self, event: Event, data: Mapping[str, Any]) -> _Item | None:
        """The open item ``data.output_index`` names (RSP003 when none, RSP005 when done); checks item_id."""
        position = data.get("output_index")
        if not isinstance(position, int) or isinstance(position, bool):
            return None
        item = self.items.get(position)
        if item is None:
            self.add("RSP003", f"output_index {position} names no item that was added", event, "output_index")
            return None
        if "item_id" in data and data.get("item_id") != item.id:
            self.add(
                "RSP006",
                f"item_id {data.get('item_id')!r} but item {position} is {item.id!r}",
                event,
                "item_id",
            )
        if item.done:
            self.add("RSP005", f"{data.get('type')} after item {position} was done", event)
            return None
        return item

    def part(self, event: Event, data: Mapping[str, Any], item: _Item) -> _Part | None:
        position = data.get("content_index")
        part = item.parts.get(position) if isinstance(position, int) else None
        if part is None:
            self.add(
                "RSP004", f"content_index {position!r} names no part that was added", event, "content_index"
            )
            return None
        if part.done:
            self.add("RSP005", f"{data.get('type')} after part {position} was done", event)
            return None
        return part

    # -- events --------------------------------------------------------------------------------------------

    def event(self, event: Event, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if self.sdk:
            _sdk.validate_event(self.report, "responses", kind, event.frame.data, event.index)
        self.sequence(event, data)
        if not self.seen_json:
            self.seen_json = True
            if kind not in ("response.created", "error"):
                self.add("RSP001", f"the first event is {kind!r}, not response.created", event, "type")
        elif kind == "response.created":
            self.add("RSP001", "response.created again", event, "type")
        if not isinstance(kind, str):  # no event of the protocol (the SDK check says so)
            return
        if kind == "error":
            check_openai_error(self.report, {"error": data}, event.index)
        elif kind in _LIFECYCLE:
            self.lifecycle(event, kind, data)
        elif kind == "response.output_item.added":
            self.item_added(event, data)
        elif kind == "response.output_item.done":
            self.item_done(event, data)
        elif kind == "response.content_part.added":
            item = self.item(event, data)
            if item is not None:
                position = data.get("content_index")
                if position != len(item.parts):
                    self.add(
                        "RSP004",
                        f"content_index {position!r}; the next new part is {len(item.parts)}",
                        event,
                        "content_index",
                    )
                if isinstance(position, int):
                    spec = obj(data.get("part"))
                    text = spec.get("text", spec.get("refusal", ""))
                    item.parts[position] = _Part([text if isinstance(text, str) else ""])
        elif kind == "response.content_part.done":
            item = self.item(event, data)
            part = self.part(event, data, item) if item is not None else None
            if part is not None:
                got = obj(data.get("part"))
                text = got.get("text", got.get("refusal"))
                if isinstance(text, str) and text != "".join(part.pieces):
                    self.add("RSP007", "content_part.done text differs from the deltas", event, "part.text")
                part.done = True
        elif kind in _TEXT_DELTAS:
            item = self.item(event, data)
            part = self.part(event, data, item) if item is not None else None
            if part is not None:
                if part.text_done:
                    self.add("RSP005", f"{kind} after the text was done", event)
                elif isinstance(data.get("delta"), str):
                    part.pieces.append(data["delta"])
        elif kind in _TEXT_DONES:
            item = self.item(event, data)
            part = self.part(event, data, item) if item is not None else None
            if part is not None:
                field_name = _TEXT_DONES[kind][1]
                if isinstance(data.get(field_name), str) and data[field_name] != "".join(part.pieces):
                    self.add("RSP007", f"{kind} {field_name} differs from the deltas", event, field_name)
                part.text_done = True
        elif kind.rpartition(".")[0] in _ITEM_STREAMS:
            self.item_stream(event, kind, data)

    def sequence(self, event: Event, data: Mapping[str, Any]) -> None:
        number = data.get("sequence_number")
        if not isinstance(number, int) or isinstance(number, bool):
            self.expected_seq = None
            return
        if self.expected_seq is not None and number != self.expected_seq:
            self.add(
                "RSP002", f"sequence_number {number}, expected {self.expected_seq}", event, "sequence_number"
            )
        self.expected_seq = number + 1

    def lifecycle(self, event: Event, kind: str, data: Mapping[str, Any]) -> None:
        response = data.get("response")
        if not isinstance(response, Mapping):
            return
        if self.response_id is None:
            self.response_id = response.get("id")
        elif response.get("id") != self.response_id:
            self.add(
                "RSP012",
                f"response id {response.get('id')!r}, first {self.response_id!r}",
                event,
                "response.id",
            )
        _status(self.report, kind, response, event.index, "response.")

    def item_added(self, event: Event, data: Mapping[str, Any]) -> None:
        position = data.get("output_index")
        item = obj(data.get("item"))
        if position != len(self.items):
            self.add(
                "RSP003",
                f"output_index {position!r}; the next new item is {len(self.items)}",
                event,
                "output_index",
            )
        if isinstance(position, int) and not isinstance(position, bool):
            entry = _Item(item.get("id"), item.get("type"), item.get("name"), event.index)
            for key in ("arguments", "input"):
                if isinstance(item.get(key), str) and item[key]:
                    entry.pieces.append(item[key])
            self.items[position] = entry

    def item_done(self, event: Event, data: Mapping[str, Any]) -> None:
        item = self.item(event, data)
        if item is None:
            return
        final = obj(data.get("item"))
        if final.get("id") != item.id:
            self.add(
                "RSP006",
                f"item id {final.get('id')!r} but item {data.get('output_index')} is {item.id!r}",
                event,
                "item.id",
            )
        still_open = [k for k, part in sorted(item.parts.items()) if not part.done]
        if still_open:
            self.add("RSP005", f"output_item.done while parts {still_open} are not done", event)
        content = final.get("content")
        if isinstance(content, list):
            for k, part in sorted(item.parts.items()):
                got = content[k] if k < len(content) and isinstance(content[k], Mapping) else {}
                text = got.get("text", got.get("refusal"))
                if isinstance(text, str) and text != "".join(part.pieces):
                    self.add(
                        "RSP007",
                        f"the done item's content[{k}] differs from the deltas",
                        event,
                        f"item.content[{k}]",
                    )
        for key in ("arguments", "input"):
            if (
                isinstance(final.get(key), str)
                and (item.pieces or item.stream_done)
                and final[key] != "".join(item.pieces)
            ):
                self.add("RSP007", f"the done item's {key} differ from the deltas", event, f"item.{key}")
        item.done, item.final = True, final

    def item_stream(self, event: Event, kind: str, data: Mapping[str, Any]) -> None:
        prefix, _, step = kind.rpartition(".")
        key = _ITEM_STREAMS[prefix]
        item = self.item(event, data)
        if item is None:
            return
        if step == "delta":
            if item.stream_done:
                self.add("RSP005", f"{kind} after the {key} were done", event)
            elif isinstance(data.get("delta"), str):
                item.pieces.append(data["delta"])
        elif step == "done":
            if isinstance(data.get(key), str) and data[key] != "".join(item.pieces):
                self.add("RSP007", f"{kind} {key} differ from the deltas", event, key)
            item.stream_done = True


def lint_responses_stream(
    events: Sequence[Event], report: Report, *, request: Mapping[str, Any] | None, transport: bool, sdk: bool
) -> None:
    """Check a Responses event stream (GEN001/GEN002/GEN008/GEN009 are checked by the caller)."""
    del request, transport  # nothing here depends on them
    state = _Stream(report, sdk)
    before_final: list[dict[str, Any]] = []
    for event in events:
        if state.final is not None:
            report.add("RSP010", f"an event after the final event (frame {state.final.index})", event.index)
            continue
        data = event.data
        if data is None:
            state.expected_seq = None
            continue
        state.event(event, data)
        if data.get("type") in _FINAL:
            state.final = event
        else:
            before_final.append(data)
    if not events:
        return
    final = state.final
    if final is None:
        report.add("RSP009", "the stream ends without a final event")
    elif final.data is not None and final.data.get("type") == "response.completed":
        open_items = [k for k, item in sorted(state.items.items()) if not item.done]
        if open_items:
            report.add("RSP005", f"response.completed while items {open_items} are not done", final.index)
    if final is not None and final.data is not None and isinstance(final.data.get("response"), Mapping):
        response = final.data["response"]
        _usage(report, response.get("usage"), final.index, "response.usage")
        if final.data.get("type") != "response.failed":
            _rebuilt(report, before_final, response, final.index)
    for position, item in sorted(state.items.items()):
        _texts(report, position, item)


def _rebuilt(report: Report, events: list[dict[str, Any]], response: Mapping[str, Any], index: int) -> None:
    """RSP008: the final response's output equals what the events before it add up to."""
    from dscodec.accumulate import accumulate

    try:
        rebuilt = accumulate("responses", events)
    except Exception:  # noqa: BLE001 - a stream too broken to add up; its other findings say why
        return
    output = response.get("output")
    differences = compare({"output": rebuilt.get("output")}, {"output": output})
    if differences:
        first = differences[0]
        more = f" (and {len(differences) - 1} more)" if len(differences) > 1 else ""
        path = first.path.removeprefix("response.")
        report.add(
            "RSP008",
            f"the final output differs from the item events at {path}{more}",
            index,
            f"response.{path}",
        )


def _texts(report: Report, position: int, item: _Item) -> None:
    where = f"output[{position}]"
    for k, part in sorted(item.parts.items()):
        check_text(report, "".join(part.pieces), None, f"{where}.content[{k}] deltas")
    if isinstance(item.name, str):
        check_text(report, item.name, item.at, f"{where}.name", answer=False)
    final = item.final or {}
    if item.type == "function_call" and item.done and final.get("status", "completed") == "completed":
        check_arguments(report, "".join(item.pieces), item.at, f"{where} arguments deltas")
    elif item.type == "custom_tool_call":
        check_text(report, "".join(item.pieces), item.at, f"{where} input deltas", answer=False)


def lint_responses_body(report: Report, body: Mapping[str, Any], text: str, *, sdk: bool) -> None:
    """Check a complete ``response`` (or an error body)."""
    if isinstance(body.get("error"), Mapping) and "output" not in body and "object" not in body:
        check_openai_error(report, body, None)
        return
    if sdk:
        _sdk.validate_body(report, "responses", text)
    _status(report, "", body, None, "")
    _usage(report, body.get("usage"), None, "usage")
    output = body.get("output")
    for k, item in enumerate(output if isinstance(output, list) else []):
        if not isinstance(item, Mapping):
            continue
        where = f"output[{k}]"
        content = item.get("content")
        for j, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                check_text(report, part["text"], None, f"{where}.content[{j}].text")
        if isinstance(item.get("name"), str):
            check_text(report, item["name"], None, f"{where}.name", answer=False)
        if item.get("type") == "function_call" and item.get("status", "completed") == "completed":
            check_arguments(report, item.get("arguments"), None, f"{where}.arguments")
