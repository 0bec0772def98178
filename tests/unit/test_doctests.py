"""Every example in dscodec's docstrings runs and gives what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import dscodec


def _module_names() -> list[str]:
    names = ["dscodec"]
    for info in pkgutil.walk_packages(dscodec.__path__, prefix="dscodec."):
        if info.name != "dscodec.__main__":  # running it is running the CLI
            names.append(info.name)
    return sorted(names)


MODULES = _module_names()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"


def test_the_examples_are_found() -> None:
    # The docstrings hold examples in many modules; finding none would mean this test checks nothing.
    finder = doctest.DocTestFinder()
    total = sum(len(test.examples) for name in MODULES for test in finder.find(importlib.import_module(name)))
    assert total >= 50
