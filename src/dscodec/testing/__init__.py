"""dscodec.testing: conformance tools for anyone serving DeepSeek models behind OpenAI or Anthropic APIs.

* Transcripts (:mod:`~dscodec.testing.transcript`): one request, the model backend's output, and the answer, as
  versioned JSON Lines.
* Replay and compare (:mod:`~dscodec.testing.replay`, :mod:`~dscodec.testing.compare`): run a transcript
  through dscodec, and list where two answers differ after normalising ids and timestamps.
* The stream linter (:mod:`~dscodec.testing.lint`): any server's stream or response checked against its
  protocol's grammar, every finding under a stable code.
* Live servers (:mod:`~dscodec.testing.live`, needs httpx), hypothesis strategies
  (:mod:`~dscodec.testing.strategies`, needs hypothesis) and a pytest plugin (:mod:`~dscodec.testing.plugin`).
* Fake vLLM and SGLang engines (:mod:`~dscodec.testing.engines`) that stream the output you choose, for testing a
  server that fronts an engine.

This package imports neither hypothesis, httpx nor the SDKs; ``pip install 'dscodec[testing]'`` brings them.
See ``docs/testing.md``.
"""

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dscodec.testing._sse import DONE, Frame, format_sse, parse_sse
    from dscodec.testing.compare import (
        MISSING,
        Difference,
        compare,
        format_differences,
        merge_deltas,
        normalise,
    )
    from dscodec.testing.lint import RULES, Finding, Rule, lint, sdk_available
    from dscodec.testing.replay import CHUNKINGS, Replay, replay, verify
    from dscodec.testing.transcript import (
        FORMAT,
        VERSION,
        BackendItem,
        Failure,
        Finish,
        Text,
        Tokens,
        Transcript,
        TranscriptError,
        Usage,
        dump_transcript,
        dump_transcripts,
        dumps_transcript,
        dumps_transcripts,
        load_transcript,
        load_transcripts,
        loads_transcript,
        loads_transcripts,
    )

#: Public names loaded on first use (so that pytest loading the plugin, which imports this package, pays for
#: none of them): name -> module.
_LAZY: dict[str, str] = {
    "BackendItem": "dscodec.testing.transcript",
    "CHUNKINGS": "dscodec.testing.replay",
    "DONE": "dscodec.testing._sse",
    "Difference": "dscodec.testing.compare",
    "FORMAT": "dscodec.testing.transcript",
    "Failure": "dscodec.testing.transcript",
    "Finding": "dscodec.testing.lint",
    "Finish": "dscodec.testing.transcript",
    "Frame": "dscodec.testing._sse",
    "MISSING": "dscodec.testing.compare",
    "RULES": "dscodec.testing.lint",
    "Replay": "dscodec.testing.replay",
    "Rule": "dscodec.testing.lint",
    "Text": "dscodec.testing.transcript",
    "Tokens": "dscodec.testing.transcript",
    "Transcript": "dscodec.testing.transcript",
    "TranscriptError": "dscodec.testing.transcript",
    "Usage": "dscodec.testing.transcript",
    "VERSION": "dscodec.testing.transcript",
    "compare": "dscodec.testing.compare",
    "dump_transcript": "dscodec.testing.transcript",
    "dump_transcripts": "dscodec.testing.transcript",
    "dumps_transcript": "dscodec.testing.transcript",
    "dumps_transcripts": "dscodec.testing.transcript",
    "format_differences": "dscodec.testing.compare",
    "format_sse": "dscodec.testing._sse",
    "lint": "dscodec.testing.lint",
    "load_transcript": "dscodec.testing.transcript",
    "load_transcripts": "dscodec.testing.transcript",
    "loads_transcript": "dscodec.testing.transcript",
    "loads_transcripts": "dscodec.testing.transcript",
    "merge_deltas": "dscodec.testing.compare",
    "normalise": "dscodec.testing.compare",
    "parse_sse": "dscodec.testing._sse",
    "replay": "dscodec.testing.replay",
    "sdk_available": "dscodec.testing.lint",
    "verify": "dscodec.testing.replay",
}


#: Functions named like the module they live in: the package's attribute is the function, as it always was,
#: even once the module is imported (which binds the module to the package's attribute of its name).
_SHADOWED = frozenset({"compare", "lint", "replay"})


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, types.ModuleType):
            return  # the import system binding the submodule: the function keeps the name
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dscodec.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "CHUNKINGS",
    "DONE",
    "FORMAT",
    "MISSING",
    "RULES",
    "VERSION",
    "BackendItem",
    "Difference",
    "Failure",
    "Finding",
    "Finish",
    "Frame",
    "Replay",
    "Rule",
    "Text",
    "Tokens",
    "Transcript",
    "TranscriptError",
    "Usage",
    "compare",
    "dump_transcript",
    "dump_transcripts",
    "dumps_transcript",
    "dumps_transcripts",
    "format_differences",
    "format_sse",
    "lint",
    "load_transcript",
    "load_transcripts",
    "loads_transcript",
    "loads_transcripts",
    "merge_deltas",
    "normalise",
    "parse_sse",
    "replay",
    "sdk_available",
    "verify",
]
