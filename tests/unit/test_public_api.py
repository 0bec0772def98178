"""The public surface: names conformance tooling relies on, sorted and typed."""

from __future__ import annotations

import types
from pathlib import Path

import dscodec


def test_all_is_sorted_and_complete() -> None:
    public = [
        n for n, v in vars(dscodec).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)
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
