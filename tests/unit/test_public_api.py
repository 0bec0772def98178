"""The public surface: names conformance tooling relies on, sorted and typed."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

import dscodec

#: Names ``dscodec/__init__.py`` uses itself (not public).
_IMPORTS = {"importlib", "TYPE_CHECKING", "Any"}


def test_all_is_sorted_and_complete() -> None:
    public = [
        n
        for n in dir(dscodec)
        if not n.startswith("_")
        and not isinstance(getattr(dscodec, n), types.ModuleType)
        and n not in _IMPORTS
    ]
    assert dscodec.__all__ == sorted([*public, "__version__"])
    for name in (
        "convert",
        "render",
        "PromptEncoder",
        "ConversionError",
        "ConversationRequest",
        "RenderedPrompt",
    ):
        assert name in dscodec.__all__


def test_lazy_names_load_on_first_use() -> None:
    from dscodec.processor import StreamProcessor
    from dscodec.prompt import render_request

    assert dscodec.StreamProcessor is StreamProcessor and dscodec.render is render_request
    assert "StreamProcessor" in dir(dscodec)
    try:
        dscodec.nothing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "nothing" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_every_public_name_and_submodule_resolves_in_a_fresh_process() -> None:
    # Each name loads by itself (no name relies on another having loaded first), and the package attribute
    # ``accumulate`` stays the function once its module is imported by name.
    code = (
        "import sys, dscodec, dscodec.accumulate, dscodec.processor\n"
        "assert callable(dscodec.accumulate) and not isinstance(dscodec.accumulate, type(sys))\n"
        "for name in dscodec.__all__: getattr(dscodec, name)\n"
        "for name in ('conversation', 'options', 'protocols', 'stream', 'vocab'):\n"
        "    assert getattr(dscodec, name).__name__ == 'dscodec.' + name\n"
        "print(dscodec.convert('chat_completions', {'model': 'DeepSeek-V4-Pro', 'messages': [{'role': 'user', 'content': 'hi'}]})"
        ".conversation.messages[0].content)\n"
    )
    for name in dscodec.__all__:
        out = subprocess.run(
            [sys.executable, "-c", f"import dscodec; dscodec.{name}"],
            check=False,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, (name, out.stderr)
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hi"


def test_package_is_typed() -> None:
    assert (Path(dscodec.__file__).parent / "py.typed").is_file()


def test_error_tree() -> None:
    for cls in (
        dscodec.ConversionError,
        dscodec.TokenizerError,
        dscodec.UnsupportedProtocol,
        dscodec.ContextLengthExceeded,
    ):
        assert issubclass(cls, dscodec.DscodecError)
        assert isinstance(cls.status_code, int)
    assert dscodec.ConversionError.status_code == 400


_BODY = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}


@pytest.mark.parametrize("options", [{"unsupported": "reject"}, "reject", 1, object()])
def test_convert_refuses_options_of_another_type(options: object) -> None:
    """A wrong ``options`` is the caller's bug: a ``TypeError`` naming it, not an ``AttributeError`` from
    inside."""
    with pytest.raises(TypeError, match="options must be a ConversionOptions or None"):
        dscodec.convert("chat_completions", _BODY, options)  # type: ignore[arg-type]
    assert dscodec.convert("chat_completions", _BODY, None).model_version == "v4"
    assert dscodec.convert("chat_completions", _BODY, dscodec.ConversionOptions()).model_version == "v4"


@pytest.mark.parametrize("exc", [ValueError("boom"), "text", None, 400])
def test_error_body_refuses_what_is_no_dscodec_error(exc: object) -> None:
    for protocol in ("chat_completions", "responses", "messages"):
        with pytest.raises(TypeError, match="exc must be a DscodecError"):
            dscodec.error_body(protocol, exc)  # type: ignore[arg-type]
        assert dscodec.error_body(protocol, dscodec.ConversionError("bad"))


@pytest.mark.parametrize(
    "events", [5, None, "data: {}", b"{}", {"type": "message_stop"}, dscodec.WireEvent({"type": "ping"})]
)
def test_accumulate_refuses_what_is_no_iterable_of_events(events: object) -> None:
    """A single event, a string or a number in place of the events is a bad stream (502), named as such."""
    for protocol in ("chat_completions", "responses", "messages"):
        with pytest.raises(
            dscodec.ModelOutputError, match="events must be an iterable of stream events"
        ) as bad:
            dscodec.accumulate(protocol, events)  # type: ignore[arg-type]
        assert bad.value.status_code == 502
    assert dscodec.accumulate("messages", iter([{"type": "message_stop"}]))["type"] == "message"


def _request() -> dscodec.ConversationRequest:
    return dscodec.convert("chat_completions", _BODY)


@pytest.mark.parametrize("request_", [5, None, _BODY, "text"])
def test_render_and_encode_refuse_what_is_no_request(request_: object) -> None:
    encoder = dscodec.PromptEncoder()
    for call in (lambda: dscodec.render(request_), lambda: encoder.encode(request_)):  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="needs a ConversationRequest .* or a Conversation"):
            call()
    with pytest.raises(TypeError, match="prompt must be a RenderedPrompt"):
        encoder.encode_rendered(request_)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", ["v9", "V4", "", [1], 4])
def test_render_and_encode_refuse_an_unknown_version(version: object) -> None:
    encoder = dscodec.PromptEncoder()
    conversation = _request().conversation
    for request in (_request(), conversation):
        for call in (dscodec.render, encoder.encode):
            with pytest.raises(ValueError, match="unknown model version"):
                call(request, version=version)  # type: ignore[operator]
    assert dscodec.render(conversation, version="v4").text == dscodec.render(_request()).text


@pytest.mark.parametrize("segment", [5, None, b"x", ("<｜User｜>",)])
def test_encode_segments_refuses_what_is_no_segment(segment: object) -> None:
    from dscodec.prompt.render import render_segments

    segments, _ = render_segments(_request().conversation, "v4")
    encoder = dscodec.PromptEncoder()
    with pytest.raises(TypeError, match=f"segment {len(segments)} must be a str or a Special"):
        encoder.encode_segments([*segments, segment])  # type: ignore[list-item]
    assert encoder.encode_segments(segments) == encoder.encode(_request())


@pytest.mark.parametrize("segments", [None, 5, "<｜User｜>hi", b"hi", {"a": 1}])
def test_encode_segments_refuses_what_is_no_sequence_of_segments(segments: object) -> None:
    """None used to raise Python's own "object is not iterable"; a str was read as one segment a character."""
    with pytest.raises(TypeError, match="segments must be a sequence of str and Special segments"):
        dscodec.PromptEncoder().encode_segments(segments)  # type: ignore[arg-type]


@pytest.mark.parametrize(("cache_chars", "error"), [(-1, ValueError), ("x", TypeError), (1.5, TypeError)])
def test_prompt_encoder_refuses_a_bad_cache_size(cache_chars: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="cache_chars must be"):
        dscodec.PromptEncoder(cache_chars=cache_chars)  # type: ignore[arg-type]
    assert dscodec.PromptEncoder(cache_chars=0).encode(_request())


@pytest.mark.parametrize(
    "changes",
    [
        {"request": 5},
        {"request": _BODY},
        {"tool_call_id_factory": 5},
        {"tool_call_id_factory": "call_1"},
    ],
)
def test_stream_processor_refuses_a_bad_request_or_id_factory(changes: dict[str, object]) -> None:
    arguments: dict[str, object] = {"request": _request(), "response_id": "r", "model": "m", **changes}
    with pytest.raises(dscodec.StreamStateError, match="must be"):
        dscodec.StreamProcessor(**arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("default_thinking_mode", "yes", TypeError),
        ("default_thinking_mode", 1, TypeError),
        ("reasoning_content_behavior", "drop", ValueError),
        ("responses_web_search", "ignore", ValueError),
        ("messages_web_search", None, ValueError),
        ("unsupported", "warn", ValueError),
        ("thinking_max_tokens_upper_bound", -1, ValueError),
        ("non_thinking_max_tokens_upper_bound", 1.5, TypeError),
        ("non_thinking_max_tokens_upper_bound", True, TypeError),
        ("model_versions_by_name", 5, TypeError),
        ("model_versions_by_name", [("x", "v4")], TypeError),
        ("model_versions_by_name", {1: "v4"}, TypeError),
        ("model_versions_by_name", {"x": "v5"}, ValueError),
    ],
)
def test_conversion_options_refuse_bad_values(field: str, value: object, error: type[Exception]) -> None:
    with pytest.raises(error, match=field.split("_by_")[0].replace("model_versions", "model")):
        dscodec.ConversionOptions(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [5, None, ["{}"]])
def test_testing_readers_refuse_what_is_no_text(text: object) -> None:
    from dscodec import testing

    with pytest.raises(TypeError, match="a transcript is read from str or bytes"):
        testing.loads_transcript(text)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="an event stream is read from str or bytes"):
        testing.parse_sse(text)  # type: ignore[arg-type]
    with pytest.raises(testing.TranscriptError, match="not UTF-8"):
        testing.loads_transcript(b"\xff\n")
    assert testing.parse_sse(bytearray(b"data: {}\n\n"))[0][0].data == "{}"


@pytest.mark.parametrize(("data", "event"), [(5, None), ("{}", None), ([], None), ({}, 5), ({}, b"ping")])
def test_wire_event_refuses_what_is_no_event(data: object, event: object) -> None:
    with pytest.raises(TypeError, match="a WireEvent is a dict and an optional str event name"):
        dscodec.WireEvent(data, event=event)  # type: ignore[arg-type]
    assert dscodec.WireEvent({"type": "ping"}, event="ping").sse() == 'event: ping\ndata: {"type":"ping"}\n\n'


#: An integer of more digits than Python writes out: str() and repr() raise for it, so no message may quote it
#: as it is.
_HUGE = 10**5000


def _app_with(**options: object) -> object:
    from dscodec.server import create_app

    async def backend(job: object) -> object:  # never called
        raise AssertionError

    return create_app(backend, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: dscodec.convert(_HUGE, {}), dscodec.UnsupportedProtocol),  # type: ignore[arg-type]
        (lambda: dscodec.error_body(_HUGE, dscodec.ConversionError("x")), dscodec.UnsupportedProtocol),  # type: ignore[arg-type]
        (lambda: dscodec.PromptEncoder(cache_chars=-_HUGE), ValueError),
        (lambda: dscodec.ConversionOptions(thinking_max_tokens_upper_bound=-_HUGE), ValueError),
        (lambda: dscodec.ConversionOptions(model_versions_by_name={"m": _HUGE}), ValueError),  # type: ignore[dict-item]
        (lambda: dscodec.ConversionOptions(unsupported=_HUGE), ValueError),  # type: ignore[arg-type]
        (lambda: _request().resolve_max_tokens(_HUGE, 1000), ValueError),
        (lambda: _request().resolve_max_tokens(10, _HUGE), ValueError),
        (lambda: _app_with(context_limit=-_HUGE), ValueError),
        (lambda: _app_with(body_timeout=_HUGE), ValueError),
        (lambda: _app_with(backend_timeout=-_HUGE), ValueError),
    ],
)
def test_a_huge_integer_is_refused_by_its_own_error(call: object, error: type[Exception]) -> None:
    with pytest.raises(error) as refused:
        call()  # type: ignore[operator]
    assert "an integer of about 5001 digits" in str(refused.value)


def _request() -> dscodec.ConversationRequest:
    return dscodec.convert(
        "chat_completions", {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}
    )


def test_shown_quotes_any_value() -> None:
    from dscodec.errors import shown

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert shown("abc") == "'abc'" and shown("x" * 500) == repr("x" * 500)[:100]
    assert shown(-_HUGE) == "an integer of about 5001 digits"
    assert shown([1, _HUGE]) == "a list that cannot be shown"
    assert shown(Broken()) == "a Broken that cannot be shown"
    assert shown(2**1024) == repr(2**1024)[:100]
