"""dscodec: OpenAI / Anthropic requests to DeepSeek V4 prompts and token ids, and model output back to events.

Every public name but the errors and ``accumulate`` loads on first use (the request models, the renderer, the tokenizer front, the
stream processor), so ``import dscodec`` stays cheap and a program pays only for the parts it uses.
"""

import importlib
from typing import TYPE_CHECKING, Any

from dscodec.accumulate import accumulate
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

if TYPE_CHECKING:
    from collections.abc import Iterable

    from dscodec import conversation as conversation
    from dscodec import options as options
    from dscodec import processor as processor
    from dscodec import prompt as prompt
    from dscodec import protocols as protocols
    from dscodec import stream as stream
    from dscodec import vocab as vocab
    from dscodec.conversation import (
        Conversation,
        ConversationRequest,
        InferenceOptions,
        OutputConstraint,
        ParsingOptions,
        Protocol,
    )
    from dscodec.options import ConversionOptions
    from dscodec.processor import StreamProcessor
    from dscodec.prompt import RenderedPrompt
    from dscodec.prompt import render_request as render
    from dscodec.prompt.tokenize import PromptEncoder
    from dscodec.protocols import convert, error_body
    from dscodec.protocols._wire import WireEvent

#: Public names loaded on first use: name -> (module, attribute).
_LAZY: dict[str, tuple[str, str]] = {
    "Conversation": ("dscodec.conversation", "Conversation"),
    "ConversationRequest": ("dscodec.conversation", "ConversationRequest"),
    "ConversionOptions": ("dscodec.options", "ConversionOptions"),
    "InferenceOptions": ("dscodec.conversation", "InferenceOptions"),
    "OutputConstraint": ("dscodec.conversation", "OutputConstraint"),
    "ParsingOptions": ("dscodec.conversation", "ParsingOptions"),
    "Protocol": ("dscodec.conversation", "Protocol"),
    "PromptEncoder": ("dscodec.prompt.tokenize", "PromptEncoder"),
    "RenderedPrompt": ("dscodec.prompt", "RenderedPrompt"),
    "StreamProcessor": ("dscodec.processor", "StreamProcessor"),
    "WireEvent": ("dscodec.protocols._wire", "WireEvent"),
    "convert": ("dscodec.protocols", "convert"),
    "error_body": ("dscodec.protocols", "error_body"),
    "render": ("dscodec.prompt", "render_request"),
}
#: Subpackages and modules reachable as attributes of the package before they are imported by name.
_SUBMODULES = frozenset({"conversation", "options", "processor", "prompt", "protocols", "stream", "vocab"})


def preload(*, protocols: "Iterable[str] | None" = None) -> None:
    """Import now what the first request would otherwise import: the request path and the response path of
    ``protocols`` (every protocol by default), the renderer, the encoder front and the stream processor.

    ``import dscodec`` loads these on first use, so a program pays only for what it uses; a server calls this at
    start-up so that its first request does not pay for them (tens of milliseconds). It loads no vocabulary:
    ``PromptEncoder()`` or ``Vocabulary.load`` does.

    Raises:
        UnsupportedProtocol: a name in ``protocols`` is no protocol dscodec speaks (nothing is loaded then).
        TypeError: ``protocols`` is one string rather than a collection of names.
    """
    from dscodec.protocols._registry import PROTOCOLS, spec

    if isinstance(protocols, str):
        raise TypeError(f"protocols takes a collection of protocol names, not one string: [{protocols!r}]")
    if protocols is not None and not hasattr(protocols, "__iter__"):
        raise TypeError(
            f"protocols takes a collection of protocol names or None, not {type(protocols).__name__}"
        )
    specs = [spec(name) for name in (PROTOCOLS if protocols is None else protocols)]
    for module in (
        "dscodec.prompt.render",
        "dscodec.prompt.tokenize",
        "dscodec.processor",
        "dscodec.protocols",
        "dscodec.protocols._schema",  # the reader of tool and response-format schemas
    ):
        importlib.import_module(module)
    for found in specs:
        found.load()


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is not None:
        value = getattr(importlib.import_module(target[0]), target[1])
    elif name in _SUBMODULES:
        value = importlib.import_module(f"dscodec.{name}")
    else:
        raise AttributeError(f"module 'dscodec' has no attribute {name!r}")
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
    "Protocol",
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
    "preload",
    "render",
]
