"""Golden request cases recorded from the reference: conversion, prompt, special spans, ids, errors.

Each folder under ``fixtures/requests/<protocol>/`` is one case (see tools/README.md). A successful case must give
the same resolved options, conversation, prompt text, special spans and token ids; an invalid one the same status
and error body. Cases the reference rejects with a bare ValueError (malformed bodies) are deviation D2: dscodec
answers 400 with the protocol's error body.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import dscodec
from dscodec.conversation import ConversationRequest
from dscodec.protocols._sampling import MAX_STOP_LENGTH
from tests.support.fixtures import (
    case_dirs,
    conversion_options,
    encoder,
    inference_view,
    message_view,
    read_json,
)

PROTOCOLS = ("chat_completions", "responses", "messages")
CASES = [(protocol, path) for protocol in PROTOCOLS for path in case_dirs("requests", protocol)]


def _ids(case: tuple[str, Path]) -> str:
    return f"{case[0]}/{case[1].name}"


def _convert(protocol: str, case: Path) -> ConversationRequest:
    meta = read_json(case / "case.json")
    body = (case / "request.json").read_bytes()
    return dscodec.convert(protocol, body, conversion_options(meta.get("options", {})))  # type: ignore[arg-type]


def _first_difference(ours: str, theirs: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return f"first difference at {at}:\n ours:   {ours[max(0, at - 60) : at + 60]!r}\n theirs: {theirs[max(0, at - 60) : at + 60]!r}"


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_golden_request(case: tuple[str, Path]) -> None:
    protocol, path = case
    expected = read_json(path / "expected.json")
    deviation = read_json(path / "case.json").get("deviation")
    if deviation is not None:
        _check_deviation(deviation, protocol, path, expected)
        return
    if "error" in expected:
        error = expected["error"]
        with pytest.raises(dscodec.ConversionError) as caught:
            _convert(protocol, path)
        exc = caught.value
        assert exc.status_code == error.get("status", 400)
        if error["kind"] == "conversion" and protocol == "messages":
            # D1: the reference's message, in Anthropic's error envelope.
            assert exc.body == {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": error["message"]},
            }
        elif error["kind"] == "conversion":
            assert exc.body == error["body"]
        else:  # D2: the reference raised ValueError; dscodec answers with its words in the protocol's 400 body.
            assert exc.message == error["message"]
            assert exc.body == _parse_error_body(protocol, exc)
        return

    request = _convert(protocol, path)
    body = read_json(path / "request.json")
    if protocol == "chat_completions" and "max_completion_tokens" in body:
        # D4: the reference ignores max_completion_tokens; dscodec honours it as the output limit.
        expected["inference_options"]["max_tokens"] = body["max_completion_tokens"]
        expected.pop("max_tokens_resolution", None)
    assert request.model_version == expected["model_version"]
    assert request.stream == expected["stream"]

    conv = request.conversation
    want_conv = expected["conversation"]
    assert conv.thinking_mode == want_conv["thinking_mode"]
    assert conv.reasoning_effort == want_conv["reasoning_effort"]
    assert conv.tool_choice == want_conv["tool_choice"]
    assert conv.response_format == want_conv["response_format"]
    assert conv.response_schema == want_conv["response_schema"]
    assert conv.response_regex == want_conv["response_regex"]
    assert [t.model_dump() for t in conv.tools] == want_conv["tools"]
    assert [message_view(m) for m in conv.messages] == [
        {k: v for k, v in m.items()} for m in want_conv["messages"]
    ]

    assert inference_view(request.inference_options) == expected["inference_options"]
    assert request.parsing_options.model_dump() == expected["parsing_options"]

    prompt = dscodec.render(request)
    want_text = (path / "prompt.txt").read_bytes().decode("utf-8")
    assert prompt.text == want_text, _first_difference(prompt.text, want_text)
    assert [list(span) for span in prompt.special_spans] == expected["special_spans"]
    assert [
        {"kind": s.kind, "path": s.path, "url": s.url, "detail": s.detail} for s in prompt.image_sources
    ] == expected["image_sources"]

    ids = encoder(request.model_version).encode(request)
    assert ids == expected["ids"], f"ids differ; prompt {prompt.text!r}"

    if "echo" in expected:
        echo = request.wire.echo or {}
        assert {key: echo.get(key) for key in expected["echo"]} == expected["echo"]
    if "namespace_tool_map" in expected:
        assert {k: list(v) for k, v in request.wire.namespace_tool_map.items()} == expected[
            "namespace_tool_map"
        ]

    for prompt_tokens, limit, result in expected.get("max_tokens_resolution", []):
        if isinstance(result, dict):
            with pytest.raises(dscodec.ContextLengthExceeded) as caught:
                request.resolve_max_tokens(prompt_tokens, limit)
            assert caught.value.message == result["error"]
        else:
            assert request.resolve_max_tokens(prompt_tokens, limit) == result


def _check_deviation(deviation: str, protocol: str, path: Path, expected: dict[str, Any]) -> None:
    """Cases the reference accepts where dscodec deliberately answers otherwise (docs/deviations.md)."""
    body = read_json(path / "request.json")
    if deviation == "D9":
        # Unknown Responses input items: a 400 naming the item type and its index, not silence.
        with pytest.raises(dscodec.ConversionError) as caught:
            _convert(protocol, path)
        known = {
            "message",
            "function_call",
            "function_call_output",
            "reasoning",
            "custom_tool_call",
            "custom_tool_call_output",
            "item_reference",
        }
        index, item = next(
            (i, it) for i, it in enumerate(body["input"]) if it.get("type", "message") not in known
        )
        assert caught.value.status_code == 400
        assert item["type"] in caught.value.message and str(index) in caught.value.message
    elif deviation == "D10":
        # tool_choice any: a tool call is required (the reference treats it as auto); with thinking it is a 400.
        meta = read_json(path / "case.json")
        probe = dict(body, tool_choice={"type": "auto"})
        thinking = dscodec.convert(
            protocol, probe, conversion_options(meta.get("options", {}))
        ).conversation.thinking_mode  # type: ignore[arg-type]
        if thinking and body.get("tools"):
            with pytest.raises(dscodec.ConversionError) as caught:
                _convert(protocol, path)
            assert caught.value.body["type"] == "error"
            return
        request = _convert(protocol, path)
        tools = bool(request.conversation.tools)
        assert request.conversation.tool_choice == ("required" if tools else "auto")
        assert request.parsing_options.starts_in_tool_calls is tools
        if tools:
            constraint = request.inference_options.output_constraint
            assert constraint is not None and constraint.kind == "tool_call_required"
            opener = "<｜DSML｜tool_calls>" if request.model_version == "v4" else "<｜DSML｜ calls>"
            assert dscodec.render(request).text.endswith(f"\n\n{opener}\n")
    elif deviation == "D16":
        # A stop string over dscodec's length cap: a 400 naming the item and the cap (the reference accepts it).
        with pytest.raises(dscodec.ConversionError) as caught:
            _convert(protocol, path)
        exc = caught.value
        field = "stop_sequences" if protocol == "messages" else "stop"
        stops = body[field] if isinstance(body[field], list) else [body[field]]
        index = next(i for i, s in enumerate(stops) if len(s) > MAX_STOP_LENGTH)
        where = f"{field}[{index}]" if isinstance(body[field], list) else field
        assert exc.status_code == 400
        assert f"'{where}'" in exc.message and f"maximum length {MAX_STOP_LENGTH}" in exc.message
        assert exc.body == _parse_error_body(protocol, exc)
        # Everything else about the request is as the reference recorded it once the long stop string is gone.
        shortened = dict(body, **{field: [s[:MAX_STOP_LENGTH] for s in stops]})
        request = dscodec.convert(protocol, shortened)  # type: ignore[arg-type]
        assert request.parsing_options.stop_sequences == [s[:MAX_STOP_LENGTH] for s in stops]
        assert request.model_version == expected["model_version"]
        assert dscodec.render(request).text == (path / "prompt.txt").read_bytes().decode("utf-8")
    else:  # pragma: no cover - a new deviation needs its own check here
        raise AssertionError(f"no check written for deviation {deviation}")


def _parse_error_body(protocol: str, exc: dscodec.ConversionError) -> dict[str, Any]:
    """D2: the body of a malformed request, in the protocol's own envelope (``param`` names the field)."""
    if protocol == "messages":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": exc.message}}
    return {
        "error": {
            "message": exc.message,
            "type": "invalid_request_error",
            "param": exc.param,
            "code": "invalid_request_error",
        }
    }


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_suite_is_large_enough(protocol: str) -> None:
    """Each protocol has at least 300 valid and 60 invalid recorded cases over both versions."""
    cases = case_dirs("requests", protocol)
    invalid = [p for p in cases if "error" in read_json(p / "expected.json")]
    valid = [p for p in cases if p not in invalid]
    versions = {read_json(p / "expected.json")["model_version"] for p in valid}
    assert len(valid) >= 300 and len(invalid) >= 60 and versions == {"v4", "v4.1"}
