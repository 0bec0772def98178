"""dscodec: OpenAI / Anthropic requests to DeepSeek V4 prompts and token ids, and model output back to events."""

from dscodec.conversation import Conversation, ConversationRequest, InferenceOptions, OutputConstraint, ParsingOptions
from dscodec.errors import ConversionError, DscodecError
from dscodec.options import ConversionOptions

__version__ = "0.1.0"

__all__ = [
    "Conversation",
    "ConversationRequest",
    "ConversionError",
    "ConversionOptions",
    "DscodecError",
    "InferenceOptions",
    "OutputConstraint",
    "ParsingOptions",
    "__version__",
]
