"""Engine backends for the example server: dscodec in front of a vLLM or SGLang server, token ids both ways.

Both backends send the prompt dscodec rendered and tokenized, stream the generated token ids back, map the
sampling settings and the output constraint to the engine's own fields, and leave stop sequences to dscodec. See
``docs/backends.md`` for every field and the engine documentation it follows.
"""

from dscodec.server.backends._constraints import EngineConstraint, dsml_tool_grammar, engine_constraint
from dscodec.server.backends._engine import (
    DEFAULT_TIMEOUT,
    EngineBackend,
    EngineBusy,
    EngineError,
    EngineRejected,
    EngineUnavailable,
)
from dscodec.server.backends.sglang import SGLangBackend
from dscodec.server.backends.vllm import VLLMBackend

__all__ = [
    "DEFAULT_TIMEOUT",
    "EngineBackend",
    "EngineBusy",
    "EngineConstraint",
    "EngineError",
    "EngineRejected",
    "EngineUnavailable",
    "SGLangBackend",
    "VLLMBackend",
    "dsml_tool_grammar",
    "engine_constraint",
]
