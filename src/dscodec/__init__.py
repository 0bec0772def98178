"""dscodec: OpenAI / Anthropic requests to DeepSeek V4 prompts and token ids, and model output back to events.

The prompt renderer, the tokenizer front and the stream processor load on first use of their names, so that
``import dscodec`` stays cheap for code that only converts requests.
"""

import importlib
from typing import TYPE_CHECKING, Any

from dscodec.accumulate import accumulate
from dscodec.conversation import (
    Conversation,
    ConversationRequest,
    InferenceOptions,
    OutputConstraint,
    ParsingOptions,
)
from dscodec.errors import (
    ContextLengthExceeded,
    ConversionError,
    DscodecError,
    ModelOutputError,
    SpecialTokenMissing,
    StreamStateError,
    TokenizerError,
    UnsupportedProtocol,
)
from dscodec.options import ConversionOptions
from dscodec.protocols import convert, error_body
from dscodec.protocols._wire import WireEvent

if TYPE_CHECKING:
    from dscodec.processor import StreamProcessor
    from dscodec.prompt import RenderedPrompt
    from dscodec.prompt import render_request as render
    from dscodec.prompt.tokenize import PromptEncoder

#: Public names loaded on first use: name -> (module, attribute).
_LAZY: dict[str, tuple[str, str]] = {
    "PromptEncoder": ("dscodec.prompt.tokenize", "PromptEncoder"),
    "RenderedPrompt": ("dscodec.prompt", "RenderedPrompt"),
    "StreamProcessor": ("dscodec.processor", "StreamProcessor"),
    "render": ("dscodec.prompt", "render_request"),
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'dscodec' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"

__all__ = [
    "ContextLengthExceeded",
    "Conversation",
    "ConversationRequest",
    "ConversionError",
    "ConversionOptions",
    "DscodecError",
    "InferenceOptions",
    "ModelOutputError",
    "OutputConstraint",
    "ParsingOptions",
    "PromptEncoder",
    "RenderedPrompt",
    "SpecialTokenMissing",
    "StreamProcessor",
    "StreamStateError",
    "TokenizerError",
    "UnsupportedProtocol",
    "WireEvent",
    "__version__",
    "accumulate",
    "convert",
    "error_body",
    "render",
]
