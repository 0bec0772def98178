"""The testing kit's public functions name a wrong argument (TypeError, ValueError) instead of failing inside."""

from __future__ import annotations

from typing import Any

import pytest

from dscodec import testing
from dscodec.testing import Finish, Text, Transcript, Usage

_TRANSCRIPT = Transcript(
    "chat_completions",
    {
        "model": "DeepSeek-V4-Pro",
        "thinking": {"type": "disabled"},
        "messages": [{"role": "user", "content": "Hi"}],
    },
    [Usage(5), Text("Hello!", 2), Finish("stop")],
)


@pytest.mark.parametrize("value", [5, None, {"protocol": "chat_completions"}, "text"])
def test_functions_of_a_transcript_refuse_anything_else(value: Any) -> None:
    for call in (testing.replay, testing.verify, testing.dumps_transcript):
        with pytest.raises(TypeError, match="transcript must be a Transcript"):
            call(value)
    assert testing.verify(testing.replay(_TRANSCRIPT).transcript) == []


@pytest.mark.parametrize("answer", [5, None, "text", b"bytes", 1.5])
def test_compare_refuses_what_is_no_answer(answer: Any) -> None:
    with pytest.raises(TypeError, match="an answer is a Transcript"):
        testing.compare(answer, [])
    with pytest.raises(TypeError, match="an answer is a Transcript"):
        testing.compare({}, answer)
    assert testing.compare({"a": 1}, {"a": 1}) == []


@pytest.mark.parametrize("answer", [5, None, 1.5])
def test_lint_refuses_what_is_no_answer(answer: Any) -> None:
    with pytest.raises(TypeError, match="an answer is a Transcript"):
        testing.lint("chat_completions", answer)


@pytest.mark.parametrize("protocol", ["chat", "", 5, ["messages"], None])
def test_protocol_names_are_checked(protocol: Any) -> None:
    with pytest.raises(ValueError, match="unknown protocol"):
        testing.lint(protocol, {})
    with pytest.raises(ValueError, match="unknown protocol"):
        testing.sdk_available(protocol)


def test_lint_reads_bytearray_as_bytes() -> None:
    stream = b'data: {"type": "ping"}\n\n'
    assert testing.lint("messages", bytearray(stream)) == testing.lint("messages", stream)


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (lambda s: s.dsml_blocks("v9"), "version"),
        (lambda s: s.dsml_blocks(tool_names="get_weather"), "tool_names"),
        (lambda s: s.dsml_blocks(tool_names=[]), "tool_names"),
        (lambda s: s.dsml_blocks(tool_names=["a", 5]), "tool_names"),
        (lambda s: s.dsml_blocks(min_calls=-1), "min_calls"),
        (lambda s: s.dsml_blocks(min_calls=3, max_calls=2), "max_calls"),
        (lambda s: s.model_outputs(version="v5"), "version"),
        (lambda s: s.model_outputs({"model": "DeepSeek-V4-Pro"}), "request"),
        (lambda s: s.model_outputs(stop_sequences="END"), "stop_sequences"),
        (lambda s: s.model_outputs(stop_sequences=iter(["END"])), "stop_sequences"),
        (lambda s: s.model_outputs(max_calls=0), "max_calls"),
        (lambda s: s.answer_text(max_size=-1), "max_size"),
        (lambda s: s.text_chunkings(b"bytes"), "text"),
        (lambda s: s.text_chunkings("text", max_pieces=0), "max_pieces"),
        (lambda s: s.token_chunkings("ids"), "ids"),
        (lambda s: s.token_chunkings([1, -2]), "ids"),
        (lambda s: s.token_chunkings([1, 2], max_groups=0), "max_groups"),
        (lambda s: s.backend_outputs(None), "text"),
        (lambda s: s.backend_outputs("Hi", finish="stop"), "finish"),
        (lambda s: s.backend_outputs("Hi", prompt_tokens=-1), "prompt_tokens"),
        (lambda s: s.request_bodies("chat"), "unknown protocol"),
        (lambda s: s.request_bodies("messages", model=5), "model"),
        (lambda s: s.scenarios("chat"), "unknown protocol"),
        (lambda s: s.scenarios(stream="yes"), "stream"),
        (lambda s: s.scenarios(malformed=1), "malformed"),
        (lambda s: s.request_bodies("responses", stream=0), "stream"),
        (lambda s: s.request_bodies("responses", tools="all"), "tools"),
        (lambda s: s.request_bodies("chat_completions", stops="END"), "stops"),
        (lambda s: s.request_bodies("chat_completions", stops=[]), "stops"),
        (lambda s: s.request_bodies("messages", stops=["END", ""]), "stops"),
        (lambda s: s.request_bodies("messages", stops=["x" * 4097]), "stops .*4096"),
        (lambda s: s.scenarios(stops=[b"END"]), "stops"),
        (lambda s: s.scenarios(stops=[10**5000]), "stops .*an integer of about 5001 digits"),
        (lambda s: s.model_outputs(thinking="on"), "thinking"),
        (lambda s: s.model_outputs(malformed=None), "malformed"),
        # An integer of more digits than Python writes out: named by its size, not an error from the message.
        (lambda s: s.model_outputs(version=10**5000), "version .*an integer of about 5001 digits"),
        (lambda s: s.model_outputs(thinking=(10**5000,)), "thinking .*a tuple that cannot be shown"),
        (lambda s: s.request_bodies(10**5000), "unknown protocol an integer of about 5001 digits"),
        (lambda s: s.dsml_blocks(tool_names=[10**5000]), "tool_names .*an integer"),
        (lambda s: s.answer_text(max_size=-(10**5000)), "max_size .*an integer"),
        # Arguments that used to draw what the docs promise never to draw.
        (lambda s: s.request_bodies("chat_completions", model="gpt-4"), "model .*DeepSeek-V4-Pro.*'gpt-4'"),
        (lambda s: s.request_bodies("messages", model=""), "model"),
        (lambda s: s.dsml_blocks("v4", ["a"], min_calls=0), "min_calls must be 1 or more"),
        (lambda s: s.dsml_blocks("v4", ['a"b']), "tool_names .*'a\"b'"),
        (lambda s: s.dsml_blocks("v4.1", ["get weather"]), "tool_names"),
        (lambda s: s.dsml_blocks("v4", ["x" * 129]), "tool_names .*128 bytes"),
        (lambda s: s.model_outputs(tool_names=["a>b"]), "tool_names"),
        (lambda s: s.dsml_blocks("v4.1", ["gh::"]), "tool_names"),
        (lambda s: s.request_bodies("messages", json_mode=True), "json_mode: Messages has no JSON mode"),
        (lambda s: s.scenarios("messages", json_mode=True), "json_mode"),
        (lambda s: s.scenarios(json_mode=1), "json_mode must be True or False"),
        (lambda s: s.scenarios(tools="yes"), "tools must be"),
        (lambda s: s.dsml_blocks("v4.1", ["gh::a::b"]), "tool_names"),
    ],
)
def test_strategies_check_their_arguments_when_built(make: Any, names: str) -> None:
    """As Hypothesis's own strategies do: ``InvalidArgument`` when the strategy is made, naming the argument,
    rather than an error from inside the first draw."""
    from hypothesis.errors import InvalidArgument

    from dscodec.testing import strategies

    with pytest.raises(InvalidArgument, match=names):
        make(strategies)


def test_strategies_take_the_names_the_protocols_accept() -> None:
    """The checks refuse only what the protocols refuse: every accepted model name and tool name still draws."""
    from hypothesis import given, settings

    import dscodec
    from dscodec.testing import strategies

    @settings(max_examples=10, deadline=None)
    @given(
        strategies.request_bodies("chat_completions", model="DeepSeek-V4.1-Flash"),
        strategies.dsml_blocks("v4", ["get-weather_2", "X" * 128]),
    )
    def draw(body: dict[str, Any], block: Any) -> None:
        assert dscodec.convert("chat_completions", body).model_version == "v4.1"
        assert 1 <= len(block[1]) <= 3

    draw()


def test_outputs_for_a_request_call_its_namespace_members() -> None:
    """A V4.1 Responses namespace member is called by its prompt name (``gh::issue``), which the checks take."""
    from hypothesis import HealthCheck, given, settings

    import dscodec
    from dscodec.testing import strategies

    request = dscodec.convert(
        "responses",
        {
            "model": "DeepSeek-V4.1-Flash",
            "input": "Hi",
            "reasoning": {"effort": "none"},
            "tool_choice": "required",
            "tools": [
                {
                    "type": "namespace",
                    "name": "gh",
                    "tools": [{"type": "function", "name": "issue", "parameters": {"type": "object"}}],
                }
            ],
        },
    )
    assert [tool.name for tool in request.conversation.tools] == ["gh::issue"]
    called: set[str] = set()

    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(strategies.model_outputs(request))
    def draw(output: Any) -> None:
        called.update(name for name, _ in output.calls or ())

    draw()
    assert called == {"gh::issue"}


def test_compare_checks_its_options_before_comparing() -> None:
    transcript = testing.replay(_TRANSCRIPT).transcript
    with pytest.raises(ValueError, match="ids is no valid regular expression"):
        testing.compare(transcript, transcript, ids="(")
    with pytest.raises(TypeError, match="ids must be True, False, a regular expression"):
        testing.normalise({}, ids=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ids must be"):
        testing.compare({}, {}, ids=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ids must be"):
        testing.compare({}, {}, ids=__import__("re").compile(b"x"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="fingerprints must be True or False"):
        testing.normalise({}, fingerprints="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="merge_deltas must be True or False"):
        testing.compare({}, {}, merge_deltas="yes")  # type: ignore[arg-type]
    # A Transcript holding nothing to normalise still has its options checked.
    empty = Transcript("messages", {})
    with pytest.raises(ValueError, match="ids is no valid"):
        testing.compare(empty, empty, ids="[")
    assert testing.compare(transcript, transcript, ids=__import__("re").compile("call_.*")) == []


def test_format_differences_checks_its_arguments() -> None:
    differences = testing.compare({"a": 1, "b": 2}, {"a": 2, "b": 3})
    with pytest.raises(TypeError, match="limit must be an int, not str"):
        testing.format_differences(differences, limit="3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="limit must be 0 or more"):
        testing.format_differences(differences, limit=-1)
    with pytest.raises(TypeError, match="differences must hold Difference items, not int"):
        testing.format_differences([1, 2])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="differences must be an iterable of Difference"):
        testing.format_differences("response.a")  # type: ignore[arg-type]
    assert testing.format_differences(differences, limit=0) == "... and 2 more differences"
    assert testing.format_differences(iter(differences), limit=1).count("\n") == 1


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"timeout": 0}, ValueError, "timeout must be a finite number of seconds above 0, not 0"),
        ({"timeout": -1.5}, ValueError, "timeout"),
        ({"timeout": float("nan")}, ValueError, "timeout"),
        ({"timeout": float("inf")}, ValueError, "timeout"),
        ({"timeout": "10"}, TypeError, "timeout must be a number of seconds, not str"),
        ({"timeout": True}, TypeError, "timeout"),
        ({"max_bytes": -5}, ValueError, "max_bytes must be 1 or more, not -5"),
        ({"max_bytes": 0}, ValueError, "max_bytes"),
        ({"max_bytes": 1.5}, TypeError, "max_bytes must be an int, not float"),
    ],
)
def test_send_and_record_check_their_bounds_before_sending(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    """No server is reached (port 9 is closed): the bounds are refused first, by name."""
    from dscodec.testing.live import record, send

    url = "http://127.0.0.1:9/v1/chat/completions"
    with pytest.raises(error, match=message):
        send(url, _TRANSCRIPT.request, **options)
    with pytest.raises(error, match=message):
        record(url, _TRANSCRIPT.request, **options)
    with pytest.raises(TypeError, match="body must be the request body"):
        send(url, [("model", "x")])  # type: ignore[arg-type]


def test_send_without_httpx_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from dscodec.testing.live import record, send

    monkeypatch.setitem(sys.modules, "httpx", None)  # what an import of a missing module meets
    for call in (send, record):
        with pytest.raises(ImportError, match=r"needs httpx .*pip install 'dscodec\[testing\]'"):
            call("http://127.0.0.1:9/v1/chat/completions", _TRANSCRIPT.request)


def test_compare_takes_one_ignore_rule_as_a_str_and_refuses_unknown_sections() -> None:
    expected = {"text": "Hello", "usage": {"tokens": 1}}
    actual = {"text": "Hello", "usage": {"tokens": 2}}
    assert testing.compare(expected, actual, ignore="usage") == []  # one rule, not "u", "s", "a", ...
    assert testing.compare(expected, actual, ignore=["usage"]) == []
    assert testing.compare(expected, actual, sections="response") != []
    with pytest.raises(ValueError, match="unknown section 'respons'"):
        testing.compare(expected, actual, sections=["respons"])  # would compare nothing
    with pytest.raises(TypeError, match="ignore rules must be str"):
        testing.compare(expected, actual, ignore=[5])  # type: ignore[list-item]


def test_frames_and_items_of_other_types_are_named() -> None:
    with pytest.raises(TypeError, match="a frame's data is a str"):
        testing.Frame(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a frame's event name is a str or None"):
        testing.Frame("{}", event=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Transcript.backend\[1\] must be a backend item .*, not int"):
        Transcript("chat_completions", _TRANSCRIPT.request, [Usage(5), 5])  # type: ignore[list-item]
    broken = Transcript("chat_completions", _TRANSCRIPT.request, [Usage(5)])
    broken.backend.append(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Transcript.backend\[1\] must be a backend item"):
        testing.dumps_transcript(broken)  # changed after it was made: checked again when written
    assert testing.loads_transcript(testing.dumps_transcript(_TRANSCRIPT)) == _TRANSCRIPT


def test_lint_and_compare_name_a_misused_argument() -> None:
    with pytest.raises(TypeError, match="request must be the request body"):
        testing.lint("chat_completions", "data: {}\n\n", request=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ignore must be a str or an iterable of str"):
        testing.compare({}, {}, ignore=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown protocol"):
        testing.lint("grpc", "data: {}\n\n")  # type: ignore[arg-type]


def test_outputs_for_a_json_mode_request_with_tools_hold_the_calls_the_codec_reads() -> None:
    """In JSON mode a tool-call block is read only where the answer begins, so a drawn call comes without the JSON
    value before it; every call drawn is one the codec reads."""
    from hypothesis import HealthCheck, given, settings

    import dscodec
    from dscodec.testing import Finish, Text, Transcript, Usage, lint, replay
    from dscodec.testing.strategies import model_outputs

    tools = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]
    body = {
        "model": "DeepSeek-V4-Pro",
        "thinking": {"type": "disabled"},
        "messages": [{"role": "user", "content": "Reply in json."}],
        "response_format": {"type": "json_object"},
        "tools": tools,
    }
    request = dscodec.convert("chat_completions", body)
    seen: list[int] = []

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(model_outputs(request))
    def draw(output: Any) -> None:
        answer = replay(
            Transcript("chat_completions", body, [Usage(10), Text(output.text, 20), Finish("stop")])
        ).transcript
        message = answer.response["choices"][0]["message"]
        assert len(message.get("tool_calls") or []) == len(output.calls or ())
        assert [f.code for f in lint("chat_completions", answer)] == []
        seen.append(len(output.calls or ()))

    draw()
    assert any(seen)  # calls were drawn


@pytest.mark.parametrize(
    ("make", "names"),
    [
        # Arguments that used to be taken and have no effect.
        (lambda s: s.request_bodies("responses", stops=["x"]), "stops: a Responses request has no stop"),
        (lambda s: s.scenarios("responses", stops=["x"]), "stops: a Responses request has no stop"),
        (lambda s: s.model_outputs(stop_sequences=[""]), "stop_sequences must hold str of 1 to 4096"),
        (lambda s: s.model_outputs(stop_sequences=["x" * 4097]), "stop_sequences must hold str of 1 to 4096"),
        (lambda s: s.token_chunkings([2**40]), r"ids must hold token ids \(int, from 0 to 2\*\*32 - 1\)"),
        (lambda s: s.token_chunkings([2**32]), "ids must hold token ids"),
        (lambda s: s.model_outputs(_request(), version="v4"), "version: a request decides it"),
        (lambda s: s.model_outputs(_request(), stop_sequences=["END"]), "stop_sequences: a request decides"),
        (
            lambda s: s.model_outputs(_request(), tool_names=[], thinking=True),
            "thinking, tool_names: a request",
        ),
    ],
)
def test_strategies_refuse_arguments_that_would_do_nothing(make: Any, names: str) -> None:
    from hypothesis.errors import InvalidArgument

    from dscodec.testing import strategies

    with pytest.raises(InvalidArgument, match=names):
        make(strategies)


def _request() -> Any:
    import dscodec

    return dscodec.convert(
        "chat_completions", {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}
    )


def test_lint_names_what_it_cannot_lint() -> None:
    """A set is no stream (its items have no order): named as a set, not by its first item; an item of a list
    that is no frame, event or dict is named by its index; ``sdk`` is a bool."""
    with pytest.raises(TypeError, match="an answer is .*; not set"):
        testing.lint("chat_completions", {1, 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="an answer is .*; not frozenset"):
        testing.lint("chat_completions", frozenset({"x"}))  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"answer\[1\] is a int: a list to lint holds frames, events or dicts"
    ):
        testing.lint("chat_completions", [{"object": "chat.completion.chunk"}, 5])  # type: ignore[list-item]
    for sdk in (5, None, "no"):
        with pytest.raises(TypeError, match="sdk must be True or False"):
            testing.lint("chat_completions", "data: [DONE]\n\n", sdk=sdk)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["[1,2,3]", " [] ", "42", '"text"', "null", "true"])
def test_json_that_is_no_object_is_a_body_not_a_stream(text: str) -> None:
    """It used to be read as SSE text: GEN009 (the stream ends inside a frame) and GEN008 (no frames)."""
    findings = testing.lint("chat_completions", text)
    assert [f.code for f in findings] == ["GEN001"], findings
    assert "not an object" in findings[0].message


def test_a_transcript_that_records_no_answer_is_a_finding() -> None:
    """Its answer used to be linted as the empty body ``{}``, which the grammar may well accept: nothing to lint
    passed as clean."""
    request = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}
    unanswered = Transcript("chat_completions", request, [Usage(3), Text("Hi", 1), Finish("stop")])
    for sdk in (True, False):
        (finding,) = testing.lint("chat_completions", unanswered, sdk=sdk)
        assert finding.code == "GEN008" and "records no answer" in finding.message
    # An explicit empty body is linted by the grammar, as before.
    assert testing.lint("chat_completions", {}, sdk=False) == testing.lint(
        "chat_completions", Transcript("chat_completions", request, response={}), sdk=False
    )


@pytest.mark.parametrize("path", [True, None, 1.5, b"transcript.jsonl", "descriptor"])
def test_paths_are_refused_before_any_file_is_touched(path: Any, tmp_path: Any) -> None:
    """An int is no path: ``open`` would take it as a file descriptor, read (or write) it and close it."""
    import os

    from dscodec.testing.transcript import file_kind, is_transcript

    descriptor = os.open(tmp_path / "file", os.O_RDWR | os.O_CREAT)
    if path == "descriptor":
        path = descriptor
    try:
        for call in (testing.load_transcript, testing.load_transcripts, file_kind, is_transcript):
            with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
                call(path)
        with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
            testing.dump_transcript(_TRANSCRIPT, path)
        os.fstat(descriptor)  # still open: nothing read it, wrote it or closed it
    finally:
        os.close(descriptor)


@pytest.mark.parametrize("frames", [None, 5, 1.5, object()])
def test_format_sse_names_what_is_no_list_of_frames(frames: Any) -> None:
    with pytest.raises(TypeError, match="format_sse takes an iterable of frames, not"):
        testing.format_sse(frames)
    assert testing.format_sse(iter([testing.Frame("{}")])) == "data: {}\n\n"


@pytest.mark.parametrize("sections", [5, 1.5, object(), True, b"frames"])
def test_compare_names_sections_of_the_wrong_type(sections: Any) -> None:
    with pytest.raises(TypeError, match="sections must be a section name or a collection of them"):
        testing.compare({"a": 1}, {"a": 1}, sections=sections)


@pytest.mark.parametrize("kind", [None, 5, ["vllm"], {"vllm": 1}])
def test_fake_engine_names_a_kind_of_the_wrong_type(kind: Any) -> None:
    from dscodec.testing.engines import FakeEngine

    with pytest.raises(TypeError, match="kind must be 'vllm' or 'sglang'"):
        FakeEngine(kind)
