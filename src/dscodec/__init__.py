"""dscodec: OpenAI / Anthropic requests to DeepSeek V4 prompts and token ids, and model output back to events."""

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
from dscodec.processor import StreamProcessor
from dscodec.prompt import RenderedPrompt
from dscodec.prompt import render_request as render
from dscodec.prompt.tokenize import PromptEncoder
from dscodec.protocols import convert, error_body
from dscodec.protocols._wire import WireEvent

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
