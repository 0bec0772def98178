"""Backend lines derived from a live answer (``record``): their replay gives the recorded answer again."""

from __future__ import annotations

from typing import Any

import pytest

from dscodec.testing import Failure, Finish, Text, Transcript, Usage, compare, replay, verify
from dscodec.testing.live import Exchange, transcript_of

PROTOCOLS = ("chat_completions", "responses", "messages")
MODELS = {"v4": "DeepSeek-V4-Pro", "v4.1": "DeepSeek-V4.1-Flash"}
#: A tool taking anything, so that no schema rule reads its arguments.
ANY = {"type": "object", "properties": {"city": {"type": "string"}, "unit": {}}}


def request(protocol: str, *, stream: bool, model: str = "DeepSeek-V4-Pro", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "stream": stream, "thinking": {"type": "disabled"}}
    if protocol == "responses":
        body = {"model": model, "stream": stream, "input": "Hi", "reasoning": {"effort": "none"}}
        tools: list[dict[str, Any]] = [{"type": "function", "name": "get_weather", "parameters": ANY}]
    elif protocol == "chat_completions":
        body["messages"] = [{"role": "user", "content": "Hi"}]
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": ANY}}]
    else:
        body |= {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 256}
        tools = [{"name": "get_weather", "input_schema": ANY}]
    return body | {"tools": tools} | extra


def recorded(protocol: str, body: dict[str, Any], items: list[Any]) -> Transcript:
    """What ``record`` saves when a dscodec-based server answers ``body`` with the model output ``items``."""
    answer = replay(Transcript(protocol, body, items)).transcript  # type: ignore[arg-type]
    exchange = Exchange(
        "http://127.0.0.1:1/v1",
        protocol,
        body,
        answer.status,
        "",
        "",
        answer.frames,
        answer.response,  # type: ignore[arg-type]
    )
    return transcript_of(exchange, name="t")


def call(version: str, value: str) -> str:
    """A get_weather call whose ``unit`` is written ``string="false"`` as ``value``, in ``version``'s spelling."""
    d = "｜DSML｜" if version == "v4" else "｜DSML｜ "
    calls = "tool_calls" if version == "v4" else "calls"
    return (
        f'\n\n<{d}{calls}>\n<{d}invoke name="get_weather">\n'
        f'<{d}parameter name="city" string="true">Paris</{d}parameter>\n'
        f'<{d}parameter name="unit" string="false">{value}</{d}parameter>\n'
        f"</{d}invoke>\n</{d}{calls}>"
    )


@pytest.mark.parametrize("version", sorted(MODELS))
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "value", ["[1,2]", "1e3", "1.50", '"\\u00e9"', '{"a":1}', "-0", '"a\\/b"', "null", "  7  ", " [1] "]
)
def test_json_arguments_are_derived_as_they_were_written(
    protocol: str, stream: bool, version: str, value: str
) -> None:
    """The model's ``string="false"`` text went out as written (``1e3``, ``[1,2]``); derived back as
    ``json.dumps`` of its value (``1000.0``, ``[1, 2]``), the replay's arguments differed from the recorded ones."""
    body = request(protocol, stream=stream, model=MODELS[version])
    transcript = recorded(protocol, body, [Usage(9), Text(call(version, value), 20), Finish("stop")])
    assert verify(transcript) == []
    text = next(item.text for item in transcript.backend if isinstance(item, Text))
    if protocol != "messages":  # Messages' input is a decoded object: no text to keep
        assert f'string="false">{value}<' in text


def test_a_string_written_as_the_codec_writes_one_stays_a_string_value() -> None:
    """A string literal the codec would write the same way is derived as ``string="true"`` with its decoded
    text; one with other escapes keeps its text with ``string="false"``."""
    value = '"Zürich \\"q\\"\\n"'  # the codec's own spelling of Zürich "q" and a newline
    transcript = recorded(
        "chat_completions",
        request("chat_completions", stream=False),
        [Usage(9), Text(call("v4", value), 20), Finish("stop")],
    )
    assert verify(transcript) == []
    text = next(item.text for item in transcript.backend if isinstance(item, Text))
    assert '<｜DSML｜parameter name="unit" string="true">Zürich "q"\n</｜DSML｜parameter>' in text


@pytest.mark.parametrize("stream", [False, True])
def test_a_messages_stop_sequence_is_derived_into_the_output(stream: bool) -> None:
    """The answer says it stopped at a stop sequence; the codec drops the matched text, so the derived output has
    to write it again, or the replay ends with ``end_turn``."""
    body = request("messages", stream=stream, stop_sequences=["Paris"])
    transcript = recorded("messages", body, [Usage(9), Text("Weather in Paris today", 5), Finish("stop")])
    answer = transcript.accumulated if stream else transcript.response
    assert (
        answer is not None and answer["stop_reason"] == "stop_sequence" and answer["stop_sequence"] == "Paris"
    )
    assert verify(transcript) == []
    assert transcript.backend[1] == Text("Weather in Paris", 5)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stream_that_failed_is_derived_with_what_it_streamed(protocol: str) -> None:
    """Chat and Messages streams that end in an error event add up to the error alone: their derived lines used
    to lose the text streamed before it (and Messages the prompt usage of ``message_start``)."""
    body = request(protocol, stream=True)
    items = [Usage(84), Text("This answer will", 3), Failure("scripted failure")]
    transcript = recorded(protocol, body, items)
    usage, text, failure = transcript.backend
    assert text == Text("This answer will", 0) and failure == Failure("scripted failure")
    if protocol == "messages":  # said in message_start; Chat says it at the end, which a failed stream lacks
        assert usage == Usage(84)
    assert verify(transcript) == []
    # The replay streams what was recorded: the same deltas, the same error event.
    again = replay(transcript).transcript
    assert compare(transcript.frames or [], again.frames or [], merge_deltas=True, ignore=["usage"]) == []


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("finish", [[Finish(None)], [], [Finish("stop")]])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_call_the_backend_gave_no_finish_reason_for(protocol: str, finish: list[Any], stream: bool) -> None:
    """A call ends the answer with "stop" (Chat) or "end_turn" (Messages), not "tool_calls"/"tool_use", when the
    backend gave no finish reason: derived back as no reason, not as a "stop" the replay would answer otherwise."""
    body = request(protocol, stream=stream)
    transcript = recorded(protocol, body, [Usage(9), Text(call("v4", "1"), 20), *finish])
    assert verify(transcript) == []


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_output_cut_in_its_reasoning_keeps_the_newlines_it_ends_with(protocol: str, stream: bool) -> None:
    """Reasoning that ends in newlines was never closed (a "</think>" drops them): derived without one."""
    body = request(protocol, stream=stream, thinking={"type": "enabled"})
    if protocol == "responses":
        body["reasoning"] = {"effort": "high"}
    transcript = recorded(protocol, body, [Usage(9), Text("abc\n\n", 2), Finish("length")])
    assert verify(transcript) == []
    text = next(item.text for item in transcript.backend if isinstance(item, Text))
    assert text == "abc\n\n"
