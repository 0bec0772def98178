"""Writes the corpus of deliberately broken streams: ``python tests/testing/broken/make_corpus.py``.

Each file ``<protocol>/<CODE>-<what>.sse`` is a clean dscodec stream with exactly one thing broken, the thing
rule ``CODE`` of the linter is about; ``test_corpus.py`` checks that the linter reports that code and no other.
The clean streams come from replaying a fixed model output (whole text chunks, so every text is one delta),
with fixed ids and timestamps. ``request.json`` in each folder is the request the streams answer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dscodec.testing import Finish, Frame, Text, Transcript, Usage, format_sse, replay
from dscodec.testing._derive import dsml_block

HERE = Path(__file__).resolve().parent
STAMP = 1_700_000_001

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
REQUESTS: dict[str, dict[str, Any]] = {
    "chat_completions": {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Weather in Paris and Tokyo?"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "thinking": {"type": "enabled"},
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
    },
    "responses": {
        "model": "DeepSeek-V4-Pro",
        "input": "Weather in Paris and Tokyo?",
        "stream": True,
        "reasoning": {"effort": "high"},
        "tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER}],
    },
    "messages": {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Weather in Paris and Tokyo?"}],
        "stream": True,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [{"name": "get_weather", "input_schema": WEATHER}],
    },
}
ANSWER = "Let me look that up."
TOOL_OUTPUT = (
    "Checking the weather.</think>"
    + ANSWER
    + dsml_block("v4", [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "東京"})])
)
TEXT_OUTPUT = "Simple.</think>" + ANSWER

Frames = list[dict[str, Any]]  # {"event": name or None, "data": dict or raw str}


def base(protocol: str, output: str) -> Frames:
    transcript = Transcript(
        protocol,  # type: ignore[arg-type]
        REQUESTS[protocol],
        [Usage(20, 4), Text(output, 40), Finish("stop")],
        response_id={"chat_completions": "chatcmpl-1", "responses": "resp_1", "messages": "msg_1"}[protocol],
        created=1_700_000_000,
    )
    frames: Frames = []
    for frame in replay(transcript).transcript.frames or []:
        try:
            data: Any = json.loads(frame.data)
        except ValueError:
            data = frame.data
        frames.append({"event": frame.event, "data": _stamped(data)})
    return frames


def _stamped(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (STAMP if k == "completed_at" and v is not None else _stamped(v)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_stamped(v) for v in value]
    return value


def sse(frames: Frames) -> str:
    out = []
    for frame in frames:
        data = frame["data"]
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        out.append(Frame(text, frame["event"]))
    return format_sse(out)


def renumber(frames: Frames) -> Frames:
    number = 0
    for frame in frames:
        if isinstance(frame["data"], dict) and "sequence_number" in frame["data"]:
            frame["data"]["sequence_number"] = number
            number += 1
    return frames


def where(frames: Frames, test: Callable[[dict[str, Any]], bool]) -> list[int]:
    return [k for k, f in enumerate(frames) if isinstance(f["data"], dict) and test(f["data"])]


def first(frames: Frames, test: Callable[[dict[str, Any]], bool]) -> int:
    return where(frames, test)[0]


def of_type(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda data: data.get("type") == kind


def replace_text(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {k: replace_text(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_text(v, old, new) for v in value]
    return value.replace(old, new) if isinstance(value, str) else value


def in_text(frames: Frames, spelling: str) -> Frames:
    """The answer text holds ``spelling``, consistently in every event that repeats it."""
    return [
        {**f, "data": replace_text(f["data"], ANSWER, f"Let me look {spelling} that up.")} for f in frames
    ]


def insert(frames: Frames, at: int, frame: dict[str, Any]) -> Frames:
    return frames[:at] + [frame] + frames[at:]


def drop(frames: Frames, at: int) -> Frames:
    return frames[:at] + frames[at + 1 :]


def set_at(frames: Frames, at: int, change: Callable[[dict[str, Any]], None]) -> Frames:
    change(frames[at]["data"])
    return frames


# -- Chat Completions ----------------------------------------------------------------------------------------


def _chat_call(data: dict[str, Any]) -> dict[str, Any] | None:
    calls = data.get("choices", [{}])[0].get("delta", {}).get("tool_calls") if data.get("choices") else None
    return calls[0] if calls else None


def _chat_finish(frames: Frames) -> int:
    return first(frames, lambda d: bool(d.get("choices")) and d["choices"][0]["finish_reason"] is not None)


def chat_cases() -> dict[str, Frames]:
    tool = lambda: base("chat_completions", TOOL_OUTPUT)
    text = lambda: base("chat_completions", TEXT_OUTPUT)

    def args_not_json() -> Frames:
        frames = tool()
        last = max(where(frames, lambda d: (_chat_call(d) or {}).get("index") == 0))
        return set_at(frames, last, lambda d: _chat_call(d)["function"].update(arguments="}}"))  # type: ignore[index]

    def shift_indices() -> Frames:
        frames = tool()
        for k in where(frames, lambda d: _chat_call(d) is not None):
            _chat_call(frames[k]["data"])["index"] += 1  # type: ignore[index]
        return frames

    def shared_id() -> Frames:
        frames = tool()
        starts = where(frames, lambda d: "id" in (_chat_call(d) or {}))
        first_id = _chat_call(frames[starts[0]]["data"])["id"]  # type: ignore[index]
        return set_at(frames, starts[1], lambda d: _chat_call(d).update(id=first_id))  # type: ignore[union-attr]

    def error_shape() -> Frames:
        frames = tool()
        at = _chat_finish(frames)
        return frames[:at] + [{"event": None, "data": {"error": {"message": "the model server failed"}}}]

    def strings_for_created() -> Frames:
        frames = tool()
        for frame in frames:
            if isinstance(frame["data"], dict):
                frame["data"]["created"] = "1700000000"
        return frames

    def usage_early() -> Frames:
        frames = tool()
        usage = frames[_chat_finish(frames)]["data"]["usage"]
        return set_at(frames, 2, lambda d: d.update(usage=copy.deepcopy(usage)))

    return {
        "GEN001-data-not-json": insert(tool(), 1, {"event": None, "data": "{not json"}),
        "GEN002-event-name": _named(tool(), 1, "chunk"),
        "GEN003-dsml-in-content": in_text(tool(), "<｜DSML｜invoke"),
        "GEN004-think-end-in-content": in_text(tool(), "</think>"),
        "GEN005-arguments-not-json": args_not_json(),
        "GEN006-created-is-a-string": strings_for_created(),
        "GEN007-error-without-type": error_shape(),
        "GEN008-empty": [],
        "CHT001-no-role": set_at(tool(), 0, lambda d: d["choices"][0]["delta"].pop("role")),
        "CHT002-id-changes": set_at(tool(), 3, lambda d: d.update(id="chatcmpl-2")),
        "CHT003-call-without-id": set_at(
            tool(),
            first(tool(), lambda d: "id" in (_chat_call(d) or {})),
            lambda d: _chat_call(d).pop("id"),  # type: ignore[union-attr]
        ),
        "CHT004-indices-from-1": shift_indices(),
        "CHT005-calls-share-an-id": shared_id(),
        "CHT006-no-finish-reason": set_at(
            tool(), _chat_finish(tool()), lambda d: d["choices"][0].update(finish_reason=None)
        ),
        "CHT007-tool-calls-finish-without-calls": set_at(
            text(), _chat_finish(text()), lambda d: d["choices"][0].update(finish_reason="tool_calls")
        ),
        "CHT008-no-usage-chunk": set_at(tool(), _chat_finish(tool()), lambda d: d.update(usage=None)),
        "CHT009-usage-early": usage_early(),
        "CHT010-total-tokens": set_at(
            tool(),
            _chat_finish(tool()),
            lambda d: d["usage"].update(total_tokens=d["usage"]["total_tokens"] + 1),
        ),
        "CHT011-no-done": tool()[:-1],
        "CHT012-chunk-after-done": tool() + [copy.deepcopy(tool()[2])],
    }


def _named(frames: Frames, at: int, name: str | None) -> Frames:
    frames[at]["event"] = name
    return frames


# -- Responses -----------------------------------------------------------------------------------------------


def _call_arguments(frames: Frames, output_index: int, arguments: str) -> Frames:
    """Function call ``output_index`` streams ``arguments`` (one delta) and every done event repeats them."""
    deltas = where(
        frames,
        lambda d: (
            d.get("type") == "response.function_call_arguments.delta" and d["output_index"] == output_index
        ),
    )
    frames = [f for k, f in enumerate(frames) if k not in deltas[1:]]
    frames[deltas[0]]["data"]["delta"] = arguments
    for frame in frames:
        data = frame["data"]
        if not isinstance(data, dict):
            continue
        if (
            data.get("type") == "response.function_call_arguments.done"
            and data["output_index"] == output_index
        ):
            data["arguments"] = arguments
        if data.get("type") == "response.output_item.done" and data["output_index"] == output_index:
            data["item"]["arguments"] = arguments
        if data.get("type") == "response.completed":
            data["response"]["output"][output_index]["arguments"] = arguments
    return renumber(frames)


def responses_cases() -> dict[str, Frames]:
    tool = lambda: base("responses", TOOL_OUTPUT)
    completed = lambda frames: first(frames, of_type("response.completed"))
    text_delta = lambda frames: first(frames, of_type("response.output_text.delta"))

    def copied_delta(**changes: Any) -> Frames:
        frames = tool()
        at = text_delta(frames)
        extra = copy.deepcopy(frames[at])
        extra["data"].update(changes)
        return renumber(insert(frames, at + 1, extra))

    def error_event() -> Frames:
        frames = tool()
        at = completed(frames)
        event = {"type": "error", "code": "server_error", "param": None, "sequence_number": at}
        return frames[:at] + [{"event": "error", "data": event}]

    def message_part_not_done() -> Frames:
        frames = tool()
        at = first(frames, lambda d: d.get("type") == "response.content_part.done" and d["output_index"] == 1)
        return renumber(drop(frames, at))

    def after_final() -> Frames:
        frames = tool()
        extra = copy.deepcopy(frames[text_delta(frames)])
        extra["data"]["sequence_number"] = len(frames)
        return frames + [extra]

    def duplicate_sequence() -> Frames:
        frames = tool()
        frames[4]["data"]["sequence_number"] = 3
        return frames

    return {
        "GEN001-data-not-json": insert(tool(), 2, {"event": "response.in_progress", "data": "{not json"}),
        "GEN002-event-name": _named(tool(), text_delta(tool()), "response.output_text.deltas"),
        "GEN003-dsml-in-answer": in_text(tool(), "<｜DSML｜invoke"),
        "GEN004-think-end-in-answer": in_text(tool(), "</think>"),
        "GEN005-arguments-not-json": _call_arguments(tool(), 2, '{"city": "Paris"'),
        "GEN006-temperature-is-a-string": set_at(
            tool(), 0, lambda d: d["response"].update(temperature="hot")
        ),
        "GEN007-error-event-without-message": error_event(),
        "GEN008-empty": [],
        "RSP001-no-created": renumber(drop(tool(), 0)),
        "RSP002-sequence-repeats": duplicate_sequence(),
        "RSP003-unknown-output-index": copied_delta(output_index=9),
        "RSP004-unknown-content-index": copied_delta(content_index=3),
        "RSP005-part-never-done": message_part_not_done(),
        "RSP006-item-id": set_at(tool(), text_delta(tool()), lambda d: d.update(item_id="msg_other")),
        "RSP007-done-text": set_at(
            tool(),
            first(tool(), of_type("response.output_text.done")),
            lambda d: d.update(text="Something else."),
        ),
        "RSP008-final-output": set_at(
            tool(),
            completed(tool()),
            lambda d: d["response"]["output"][1]["content"][0].update(text="Something else."),
        ),
        "RSP009-no-final-event": tool()[:-1],
        "RSP010-event-after-completed": after_final(),
        "RSP011-completed-in-progress": set_at(
            tool(), completed(tool()), lambda d: d["response"].update(status="in_progress")
        ),
        "RSP012-response-id-changes": set_at(
            tool(), completed(tool()), lambda d: d["response"].update(id="resp_2")
        ),
        "RSP013-total-tokens": set_at(
            tool(),
            completed(tool()),
            lambda d: d["response"]["usage"].update(total_tokens=d["response"]["usage"]["total_tokens"] + 1),
        ),
    }


# -- Messages ------------------------------------------------------------------------------------------------


def messages_cases() -> dict[str, Frames]:
    tool = lambda: base("messages", TOOL_OUTPUT)
    text = lambda: base("messages", TEXT_OUTPUT)
    text_delta = lambda frames: first(frames, lambda d: d.get("delta", {}).get("type") == "text_delta")
    message_delta = lambda frames: first(frames, of_type("message_delta"))

    def tool_input_not_json() -> Frames:
        frames = tool()
        deltas = where(
            frames, lambda d: d.get("index") == 2 and d.get("delta", {}).get("type") == "input_json_delta"
        )
        frames = [f for k, f in enumerate(frames) if k not in deltas[1:]]
        frames[deltas[0]]["data"]["delta"]["partial_json"] = '{"city": "Paris"'
        return frames

    def shift_blocks() -> Frames:
        frames = tool()
        for frame in frames:
            if isinstance(frame["data"], dict) and "index" in frame["data"]:
                frame["data"]["index"] += 1
        return frames

    def error_shape() -> Frames:
        frames = tool()
        at = message_delta(frames)
        return frames[:at] + [
            {"event": "error", "data": {"type": "error", "error": {"message": "overloaded"}}}
        ]

    def text_stop_removed() -> Frames:
        frames = tool()
        return drop(
            frames, first(frames, lambda d: d.get("type") == "content_block_stop" and d["index"] == 1)
        )

    def unknown_block() -> Frames:
        frames = tool()
        at = text_delta(frames)
        extra = copy.deepcopy(frames[at])
        extra["data"]["index"] = 7
        return insert(frames, at + 1, extra)

    return {
        "GEN001-data-not-json": insert(tool(), 1, {"event": "content_block_delta", "data": "{not json"}),
        "GEN002-no-event-name": _named(tool(), text_delta(tool()), None),
        "GEN003-dsml-in-text": in_text(tool(), "<｜DSML｜invoke"),
        "GEN004-think-end-in-text": in_text(tool(), "</think>"),
        "GEN005-input-not-json": tool_input_not_json(),
        "GEN006-role-user": set_at(tool(), 0, lambda d: d["message"].update(role="user")),
        "GEN007-error-without-type": error_shape(),
        "GEN008-empty": [],
        "MSG001-no-message-start": drop(tool(), 0),
        "MSG002-blocks-from-1": shift_blocks(),
        "MSG003-delta-for-unknown-block": unknown_block(),
        "MSG004-block-never-stopped": text_stop_removed(),
        "MSG005-thinking-delta-in-text-block": set_at(
            tool(),
            text_delta(tool()),
            lambda d: d.update(delta={"type": "thinking_delta", "thinking": ANSWER}),
        ),
        "MSG006-no-message-delta": drop(tool(), message_delta(tool())),
        "MSG007-negative-output-tokens": set_at(
            tool(), message_delta(tool()), lambda d: d["usage"].update(output_tokens=-1)
        ),
        "MSG008-no-message-stop": tool()[:-1],
        "MSG009-event-after-stop": tool() + [copy.deepcopy(tool()[text_delta(tool())])],
        "MSG010-tool-use-without-block": set_at(
            text(), message_delta(text()), lambda d: d["delta"].update(stop_reason="tool_use")
        ),
        "MSG011-stop-sequence-with-end-turn": set_at(
            text(), message_delta(text()), lambda d: d["delta"].update(stop_sequence="END")
        ),
        "MSG012-thinking-without-signature": drop(
            tool(), first(tool(), lambda d: d.get("delta", {}).get("type") == "signature_delta")
        ),
    }


def main() -> None:
    for protocol, cases in (
        ("chat_completions", chat_cases()),
        ("responses", responses_cases()),
        ("messages", messages_cases()),
    ):
        folder = HERE / protocol
        folder.mkdir(exist_ok=True)
        for old in folder.glob("*.sse"):
            old.unlink()
        (folder / "request.json").write_text(
            json.dumps(REQUESTS[protocol], ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
        for name, frames in cases.items():
            (folder / f"{name}.sse").write_text(sse(frames), encoding="utf-8", newline="\n")
        # A stream whose last frame has no blank line after it.
        (folder / "GEN009-unterminated.sse").write_text(
            sse(base(protocol, TOOL_OUTPUT)).rstrip("\n"), encoding="utf-8", newline="\n"
        )
        # A stream whose bytes are not UTF-8 (in a comment, so that nothing else is wrong with it).
        (folder / "GEN010-not-utf8.sse").write_bytes(
            b": keep-alive \xff\xfe\n\n" + sse(base(protocol, TOOL_OUTPUT)).encode()
        )


if __name__ == "__main__":
    main()
