"""The public surface: names conformance tooling relies on, sorted and typed."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

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
