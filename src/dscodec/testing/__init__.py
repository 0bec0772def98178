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

from dscodec.testing._sse import DONE, Frame, format_sse, parse_sse
from dscodec.testing.compare import MISSING, Difference, compare, format_differences, merge_deltas, normalise
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
