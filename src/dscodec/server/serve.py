"""``dscodec serve``: the example server with the scripted backend, on loopback by default."""

from __future__ import annotations

import functools
import os
import sys
from typing import TextIO

from fastapi import FastAPI

from dscodec.server.app import DEFAULT_CONTEXT_LIMIT, create_app
from dscodec.server.scripted import ScriptedBackend
from dscodec.vocab import Vocabulary, with_added_tokens

__all__ = ["demo_vocabulary", "scripted_app", "serve"]


@functools.lru_cache(maxsize=1)
def demo_vocabulary() -> Vocabulary:
    """The bundled V4 vocabulary plus ``<｜System｜>``: V4.1 prompts then encode too.

    The shipped V4 ``tokenizer.json`` has no ``<｜System｜>``, which every V4.1 prompt starts with, so a demo
    without ``--tokenizer`` could not serve ``DeepSeek-V4.1-Flash``. The added token gets the next free id; real
    V4.1 ids need the V4.1 tokenizer file. Built once per process (it takes a few seconds) and only read after.
    """
    return Vocabulary.load(with_added_tokens(None, ["<｜System｜>"]))


def scripted_app(
    script: str | os.PathLike[str],
    *,
    tokenizer: str | os.PathLike[str] | None = None,
    context_limit: int | None = None,
) -> FastAPI:
    """The example app replaying ``script`` (see :mod:`dscodec.server.scripted`); the context limit defaults to
    :data:`~dscodec.server.DEFAULT_CONTEXT_LIMIT`.

    Raises:
        ScriptError: the script file cannot be loaded.
        TokenizerError: the tokenizer cannot be loaded.
    """
    scripts = ScriptedBackend.from_file(script).scripts  # a bad file fails before the slow tokenizer load
    vocabulary = demo_vocabulary() if tokenizer is None else Vocabulary.load(tokenizer)
    backend = ScriptedBackend(scripts, tokenizer=vocabulary)
    limit = DEFAULT_CONTEXT_LIMIT if context_limit is None else context_limit
    return create_app(backend, tokenizer=vocabulary, context_limit=limit)


def serve(
    script: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    tokenizer: str | os.PathLike[str] | None = None,
    context_limit: int | None = None,
    log: TextIO | None = None,
) -> None:
    """Load the scripts and serve them until interrupted (uvicorn)."""
    import uvicorn

    app = scripted_app(script, tokenizer=tokenizer, context_limit=context_limit)
    print(
        f"dscodec: serving {os.fspath(script)} on http://{host}:{port}/v1 "
        "(POST /v1/chat/completions, /v1/responses, /v1/messages; pick a script with the X-Scenario header)",
        file=log or sys.stderr,
    )
    uvicorn.run(app, host=host, port=port, log_level="info")
