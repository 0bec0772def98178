"""An example server for dscodec: OpenAI and Anthropic endpoints in front of a pluggable model backend.

Needs the ``server`` extra (``pip install 'dscodec[server]'``: FastAPI and uvicorn); ``import dscodec`` never
imports it. See ``docs/server.md``.
"""

from dscodec.server._head import HEAD_TIMEOUT, head_timeout_protocol
from dscodec.server.app import (
    BACKEND_TIMEOUT,
    BODY_TIMEOUT,
    DEFAULT_CONTEXT_LIMIT,
    MAX_BODY_BYTES,
    SEND_TIMEOUT,
    BackendTimeout,
    RequestTimeout,
    RequestTooLarge,
    UnsupportedEncoding,
    create_app,
)
from dscodec.server.backend import *  # the backend contract, whole: the names of its __all__
from dscodec.server.scripted import SCENARIO_HEADER, Script, ScriptedBackend, ScriptedFailure, ScriptError
from dscodec.server.store import (
    ItemStore,
    MemoryResponseStore,
    ResponseNotFound,
    ResponseStore,
    RetrievableStore,
)

__all__ = [
    "BACKEND_TIMEOUT",
    "BODY_TIMEOUT",
    "DEFAULT_CONTEXT_LIMIT",
    "HEAD_TIMEOUT",
    "MAX_BODY_BYTES",
    "SCENARIO_HEADER",
    "SEND_TIMEOUT",
    "Backend",
    "BackendOutput",
    "BackendRequest",
    "BackendTimeout",
    "Finish",
    "FinishReason",
    "ItemStore",
    "KeepAlive",
    "MemoryResponseStore",
    "PromptUsage",
    "RequestTimeout",
    "RequestTooLarge",
    "ResponseNotFound",
    "ResponseStore",
    "RetrievableStore",
    "Script",
    "ScriptError",
    "ScriptedBackend",
    "ScriptedFailure",
    "TextChunk",
    "TokenChunk",
    "UnsupportedEncoding",
    "create_app",
    "head_timeout_protocol",
]
