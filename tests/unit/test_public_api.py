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
