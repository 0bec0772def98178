"""Backend items derived from a recorded answer, so a transcript recorded from a live server can be replayed.

A live server does not say what its model wrote, only what it sent. For a replay, dscodec writes the model
output that would give the same answer: the reasoning and ``</think>`` (when the prompt ends in the thinking
stage), the answer text, and the tool calls as a DSML block in the request's model version's spelling; the prompt
usage and completion token count from the answer's usage; the finish reason mapped back. The chunking is lost
(one text chunk), so a replay of a live transcript is compared on the complete response, not frame by frame.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import dscodec
from dscodec.conversation import ConversationRequest, Protocol
from dscodec.errors import DscodecError
from dscodec.prompt.dialects import dialect_for
from dscodec.protocols.openai_responses import ResponsesWire
from dscodec.stream._markers import escape_json_string
from dscodec.testing._sse import Frame
from dscodec.testing.transcript import BackendItem, Failure, Finish, Text, Usage

__all__ = ["derive_backend", "dsml_block"]

_FAILED_PREFIX = "the model server failed: "


#: A parameter as a DSML block writes it: its name, whether its value is written with ``string="true"``, and the
#: text between its tags.
_Param = tuple[str, bool, str]


def dsml_block(version: str, calls: Sequence[tuple[str, Mapping[str, Any]]], *, opener: bool = True) -> str:
    """The DSML block a model of ``version`` writes for ``calls`` (name, arguments), blank line first.

    String values are written as they are with ``string="true"``; every other value as JSON with
    ``string="false"``. Without ``opener`` the block starts after its opening tag (the prompt already holds it
    when a tool call is required).

    Examples:
        >>> print(dsml_block("v4.1", [("f", {"a": 1})]))
        <BLANKLINE>
        <BLANKLINE>
        <｜DSML｜ calls>
        <｜DSML｜ invoke name="f">
        <｜DSML｜ parameter name="a" string="false">1</｜DSML｜ parameter>
        </｜DSML｜ invoke>
        </｜DSML｜ calls>
    """
    return _block(version, [(name, _params_of(arguments)) for name, arguments in calls], opener=opener)


def _block(version: str, calls: Sequence[tuple[str, Sequence[_Param]]], *, opener: bool) -> str:
    d = dialect_for("v4.1" if version == "v4.1" else "v4")
    dsml = d.dsml
    lines = [f"<{dsml}{d.tool_calls_tag}>"] if opener else []
    for name, params in calls:
        lines.append(f'<{dsml}{d.invoke_tag} name="{name}">')
        if not params and d.empty_invoke_line:
            lines.append("")
        for key, is_string, text in params:
            flag = "true" if is_string else "false"
            lines.append(
                f'<{dsml}{d.parameter_tag} name="{key}" string="{flag}">{text}</{dsml}{d.parameter_tag}>'
            )
        lines.append(f"</{dsml}{d.invoke_tag}>")
    lines.append(f"</{dsml}{d.tool_calls_tag}>")
    return (d.block_separator if opener else "") + "\n".join(lines)


def _params_of(arguments: Mapping[str, Any]) -> list[_Param]:
    """The parameters of decoded arguments (a Messages ``input``): a string as it is, any other value as JSON."""
    return [
        (key, True, value) if isinstance(value, str) else (key, False, json.dumps(value, ensure_ascii=False))
        for key, value in arguments.items()
    ]


_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at


def _raw_params(text: str) -> list[_Param] | None:
    """The parameters that make the codec write ``text`` (a JSON object) again; None when it is no JSON object.

    Each member's value is taken as it is written: a string written exactly as the codec writes a string
    literal (:func:`~dscodec.stream._markers.escape_json_string`) is a ``string="true"`` value of its decoded
    text; any other value (a number as ``1e3`` or ``1.50``, a string with escapes the codec would not write, a
    compact object) is a ``string="false"`` value of its exact text, which the codec writes as it is. A key is
    named as written (its escapes kept) unless it holds a quote.
    """
    at = _skip(text, 0)
    if text[at : at + 1] != "{":
        return None
    at = _skip(text, at + 1)
    params: list[_Param] = []
    if text[at : at + 1] == "}":
        return params if _skip(text, at + 1) == len(text) else None
    while True:
        if text[at : at + 1] != '"':
            return None
        try:
            key, end = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            written_key = text[at + 1 : end - 1]
            at = _skip(text, end)
            if text[at : at + 1] != ":":
                return None
            # The codec writes ": " before a value; what follows is the value as the model wrote it, blanks
            # around it included (a string="false" value is copied through).
            start = at + 2 if text[at + 1 : at + 2] == " " else at + 1
            value, end = _DECODER.raw_decode(text, _skip(text, start))
        except (ValueError, RecursionError):
            return None
        at = _skip(text, end)
        raw = text[start:at]
        name = written_key if '"' not in written_key else key
        if isinstance(value, str) and raw == f'"{escape_json_string(value)}"':
            params.append((name, True, value))
        else:
            params.append((name, False, raw))
        if text[at : at + 1] == ",":
            at = _skip(text, at + 1)
            continue
        if text[at : at + 1] == "}":
            return params if _skip(text, at + 1) == len(text) else None
        return None


def _arguments(value: Any) -> list[_Param]:
    """The parameters of a call's recorded arguments: a JSON text (Chat, Responses) from its exact text, a
    decoded object (Messages) from its values; an argument text that is no JSON object gives none."""
    if isinstance(value, Mapping):
        return _params_of(value)
    if not isinstance(value, str):
        return []
    raw = _raw_params(value)
    if raw is not None:
        return raw
    try:
        decoded = json.loads(value)
    except (ValueError, RecursionError):
        return []
    return _params_of(decoded) if isinstance(decoded, dict) else []


def _int(value: Any) -> int:
    """A token count as a backend item holds one (0 to 2**63 - 1); anything else counts as absent."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63 else 0


# A live server's answer may hold any JSON where an object, a list or a string belongs: such a value counts as
# absent (the linter reports it).
def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _objs(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _Parts:
    def __init__(self) -> None:
        self.reasoning = ""
        self.content = ""
        self.calls: list[tuple[str, list[_Param]]] = []
        self.stop = ""  # the stop sequence the answer says it stopped at (Messages)
        self.finish: Finish | None = None
        self.usage = Usage()
        self.completion = 0
        self.failure: str | None = None


def _finish(reason: Any, words: tuple[str, str, str], *, calls: bool) -> Finish:
    """The backend's finish from the answer's reason, whose ``words`` are the protocol's for the length, the
    content filter and a plain end. A call ends an answer with that plain end ("stop", "end_turn") rather than
    "tool_calls"/"tool_use" only when the backend gave no reason."""
    length, refused, plain = words
    if reason == length:
        return Finish("length")
    if reason == refused:
        return Finish("content_filter")
    return Finish(None if reason == plain and calls else "stop")


def _chat(response: Mapping[str, Any], parts: _Parts) -> None:
    choice = (_objs(response.get("choices")) or [{}])[0]
    message = _obj(choice.get("message"))
    parts.reasoning = _text(message.get("reasoning_content"))
    parts.content = _text(message.get("content"))
    for call in _objs(message.get("tool_calls")):
        function = _obj(call.get("function"))
        parts.calls.append((_text(function.get("name")), _arguments(function.get("arguments"))))
    parts.finish = _finish(
        choice.get("finish_reason"), ("length", "content_filter", "stop"), calls=bool(parts.calls)
    )
    usage = _obj(response.get("usage"))
    cached = _obj(usage.get("prompt_tokens_details")).get("cached_tokens")
    fingerprint = response.get("system_fingerprint")
    parts.usage = Usage(
        _int(usage.get("prompt_tokens")), _int(cached), fingerprint if isinstance(fingerprint, str) else None
    )
    parts.completion = _int(usage.get("completion_tokens"))


def _responses(response: Mapping[str, Any], request: ConversationRequest, parts: _Parts) -> None:
    wire = request.wire
    namespaced = wire.namespace_tool_map if isinstance(wire, ResponsesWire) else {}
    qualified = {value: key for key, value in namespaced.items()}
    for item in _objs(response.get("output")):
        kind = item.get("type")
        texts = "".join(_text(part.get("text")) for part in _objs(item.get("content")))
        if kind == "reasoning":
            parts.reasoning += texts
        elif kind == "message":
            parts.content += texts
        elif kind == "function_call":
            name = _text(item.get("name"))
            namespace = item.get("namespace")
            if isinstance(namespace, str):
                name = qualified.get((namespace, name), name)
            parts.calls.append((name, _arguments(item.get("arguments"))))
    reason = _obj(response.get("incomplete_details")).get("reason")
    parts.finish = Finish(
        "length"
        if reason == "max_output_tokens"
        else "content_filter"
        if reason == "content_filter"
        else "stop"
    )
    error = response.get("error")
    if response.get("status") == "failed" and isinstance(error, Mapping):
        parts.failure = str(error.get("message", ""))
    usage = _obj(response.get("usage"))
    cached = _obj(usage.get("input_tokens_details")).get("cached_tokens")
    parts.usage = Usage(_int(usage.get("input_tokens")), _int(cached))
    parts.completion = _int(usage.get("output_tokens"))


def _messages(response: Mapping[str, Any], parts: _Parts) -> None:
    if response.get("type") == "error":
        parts.failure = str(_obj(response.get("error")).get("message", ""))
        return
    for block in _objs(response.get("content")):
        kind = block.get("type")
        if kind == "thinking":
            parts.reasoning += _text(block.get("thinking"))
        elif kind == "text":
            parts.content += _text(block.get("text"))
        elif kind == "tool_use":
            parts.calls.append((_text(block.get("name")), _arguments(block.get("input"))))
    reason = response.get("stop_reason")
    stop = response.get("stop_sequence")
    if reason == "stop_sequence" and isinstance(stop, str):
        parts.stop = stop  # the codec drops the stop sequence it matched: the output wrote it
    parts.finish = _finish(reason, ("max_tokens", "refusal", "end_turn"), calls=bool(parts.calls))
    usage = _obj(response.get("usage"))
    cached = _int(usage.get("cache_read_input_tokens"))
    prompt = _int(usage.get("input_tokens")) + cached + _int(usage.get("cache_creation_input_tokens"))
    parts.usage = Usage(prompt, cached)
    parts.completion = _int(usage.get("output_tokens"))


def _stream_failure(protocol: Protocol, frames: Sequence[Frame]) -> str | None:
    """The message of the error event a failed stream ends with (None when it did not fail)."""
    for frame in reversed(frames):
        try:
            data = frame.json()
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        if protocol == "chat_completions" and isinstance(data.get("error"), Mapping):
            return str(data["error"].get("message", ""))
        if protocol == "messages" and data.get("type") == "error":
            return str(_obj(data.get("error")).get("message", ""))
        if protocol == "responses" and data.get("type") == "error":
            return str(data.get("message", ""))
        return None
    return None


def derive_backend(
    protocol: Protocol,
    request_body: Mapping[str, Any],
    *,
    frames: Sequence[Frame] | None,
    response: Mapping[str, Any] | None,
    status: int,
) -> list[BackendItem]:
    """The backend items that make dscodec give the recorded answer.

    ``[]`` when the request does not convert, when the events are no stream of the protocol
    (:func:`dscodec.accumulate` cannot read them), or when a successful answer is neither an event stream nor a
    JSON object (an HTML page, a body cut short): nothing in such an answer says what the model wrote, and
    made-up items would let a replay match it.
    """
    try:
        request = dscodec.convert(protocol, dict(request_body))
    except DscodecError:
        return []
    if status >= 400 or (response is not None and frames is None and _is_error(protocol, response)):
        message = _error_message(protocol, response or {})
        if 400 <= status <= 499:  # the backend refused the request (the request itself converts)
            return [Failure(message, status)]
        return [Failure(message.removeprefix(_FAILED_PREFIX))]
    if frames is None and response is None:
        return []
    parts = _Parts()
    if frames is not None:
        events = [f.json() for f in frames if _is_object(f)]
        parts.failure = _stream_failure(protocol, frames)
        if parts.failure is not None and protocol != "responses":
            # A Chat or Messages stream that failed adds up to its error: what it streamed before (the text, the
            # prompt usage of Messages' message_start) is in the events before the error event, its last.
            events = events[:-1]
        try:
            whole = dscodec.accumulate(protocol, events) if events or parts.failure is None else {}
        except DscodecError:
            return []
    else:
        whole = dict(response or {})
    if protocol == "chat_completions":
        _chat(whole, parts)
    elif protocol == "responses":
        _responses(whole, request, parts)
    else:
        _messages(whole, parts)
    options = request.parsing_options
    text = parts.content
    if options.thinking_initial_stage in ("reasoning_start", "reasoning_continuation"):
        # Newlines the reasoning ends with would have been dropped before a "</think>": with nothing after the
        # reasoning, the output ended in it (cut short) and wrote none.
        ended_in_reasoning = parts.reasoning.endswith("\n") and not text and not parts.calls
        close = "" if ended_in_reasoning else dialect_for(request.model_version).think_close
        text = parts.reasoning + close + text
    if parts.calls and options.parse_tool_calls:
        text += _block(request.model_version, parts.calls, opener=not options.starts_in_tool_calls)
    text += parts.stop
    items: list[BackendItem] = [parts.usage, Text(text, parts.completion)]
    if parts.failure is not None:
        items.append(Failure(parts.failure.removeprefix(_FAILED_PREFIX)))
    elif parts.finish is not None:
        items.append(parts.finish)
    return items


def _is_object(frame: Frame) -> bool:
    try:
        return isinstance(frame.json(), dict)
    except ValueError:
        return False


def _is_error(protocol: Protocol, body: Mapping[str, Any]) -> bool:
    if protocol == "messages":
        return body.get("type") == "error"
    return isinstance(body.get("error"), Mapping) and "choices" not in body and "output" not in body


def _error_message(protocol: Protocol, body: Mapping[str, Any]) -> str:
    error = body.get("error")
    if isinstance(error, Mapping):
        return str(error.get("message", ""))
    return f"HTTP error ({protocol})"
