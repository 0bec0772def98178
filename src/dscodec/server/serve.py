"""``dscodec serve``: the example server in front of a scripted backend or a real engine, on loopback by default.

The tokenizer is loaded, and one tiny prompt encoded with it, before the server accepts its first request, so the
first client does not wait for it.
"""

from __future__ import annotations

import copy
import functools
import os
import socket
import sys
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal, TextIO

from fastapi import FastAPI

import dscodec
from dscodec.conversation import ModelVersion, Protocol
from dscodec.errors import DscodecError
from dscodec.options import ConversionOptions, UnsupportedBehavior
from dscodec.server._head import HEAD_TIMEOUT, head_timeout_protocol
from dscodec.server.app import DEFAULT_CONTEXT_LIMIT, create_app
from dscodec.server.backend import Backend
from dscodec.server.scripted import ScriptedBackend
from dscodec.vocab import Vocabulary, bundled_tokenizer_path, with_added_tokens

__all__ = [
    "UPSTREAMS",
    "ServeError",
    "check_address",
    "demo_vocabulary",
    "log_config",
    "parse_alias",
    "scripted_app",
    "serve",
    "serving_options",
    "upstream_app",
    "v41_warning",
    "warm_up",
]

#: The engines ``--upstream`` names.
UPSTREAMS = ("vllm", "sglang")
Upstream = Literal["vllm", "sglang"]

_SYSTEM = "<｜System｜>"


class ServeError(DscodecError):
    """A ``dscodec serve`` option that cannot be used (a bad alias, an unknown served name)."""


@functools.lru_cache(maxsize=1)
def demo_vocabulary() -> Vocabulary:
    """The bundled V4 vocabulary plus ``<｜System｜>``: V4.1 prompts then encode too.

    The shipped V4 ``tokenizer.json`` has no ``<｜System｜>``, which every V4.1 prompt starts with, so a demo
    without ``--tokenizer`` could not serve ``DeepSeek-V4.1-Flash``. The added token gets the next free id; real
    V4.1 ids need the V4.1 tokenizer file. Built once per process and only read after.
    """
    # One parse of the bundled file, the token added in place: no second tokenizer, no JSON round trip.
    return Vocabulary.adopt(
        with_added_tokens(None, [_SYSTEM]),
        name=f"{bundled_tokenizer_path()} (bundled DeepSeek V4 plus {_SYSTEM})",
    )


def parse_alias(text: str) -> tuple[str, ModelVersion]:
    """``NAME=VERSION`` (``--model-alias``) as a pair.

    Examples:
        >>> parse_alias("deepseek-v4-pro=v4")
        ('deepseek-v4-pro', 'v4')

    Raises:
        ServeError: not ``NAME=v4`` or ``NAME=v4.1``.
    """
    name, sep, version = text.rpartition("=")
    if not sep or not name or version not in ("v4", "v4.1"):
        raise ServeError(f"--model-alias {text!r}: expected NAME=v4 or NAME=v4.1 (e.g. deepseek-v4-pro=v4)")
    return name, version  # type: ignore[return-value]


def serving_options(
    aliases: Mapping[str, ModelVersion] | None = None, served_models: Sequence[str] | None = None
) -> ConversionOptions:
    """The accepted model names: the defaults plus ``aliases``; exactly ``served_models`` when given.

    Raises:
        ServeError: a served name is neither a default name nor an alias.
    """
    options = ConversionOptions()
    for name, version in (aliases or {}).items():
        options = options.with_model_alias(name, version)
    if served_models:
        known = options.model_versions_by_name
        unknown = [name for name in served_models if name not in known]
        if unknown:
            raise ServeError(
                f"--served-model-name {unknown[0]!r} has no template version; add --model-alias "
                f"{unknown[0]}=v4 (or =v4.1). Known names: {', '.join(known)}"
            )
        options = options.with_model_versions_by_name({name: known[name] for name in served_models})
    return options


def log_config() -> dict[str, Any]:
    """uvicorn's logging setup, plus the server's own logger (``dscodec.server``) printed like uvicorn's lines
    and followed by the id of the request each record was logged for (``[req_…]``, the id in the answer's
    ``x-request-id`` / ``request-id`` header)."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["dscodec"] = {
        "()": "uvicorn.logging.DefaultFormatter",
        "fmt": "%(levelprefix)s %(message)s [%(request_id)s]",
    }
    config["handlers"]["dscodec"] = {
        "formatter": "dscodec",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    config["loggers"]["dscodec.server"] = {"handlers": ["dscodec"], "level": "INFO", "propagate": False}
    return config


def v41_warning(
    tokenizer: str | os.PathLike[str] | None, vocabulary: Vocabulary, options: ConversionOptions
) -> str:
    """The startup warning about V4.1 prompts, or ``""`` when there is nothing to say."""
    v41 = [name for name, version in options.model_versions_by_name.items() if version == "v4.1"]
    if not v41:
        return ""
    if tokenizer is None:
        return (
            f"warning: the V4.1 models ({', '.join(v41)}) are served with the bundled V4 vocabulary and a made-up {_SYSTEM} id "
            f"({vocabulary.added[_SYSTEM]}): fine for demos, wrong for a real V4.1 model. Pass the V4.1 "
            "tokenizer with --tokenizer /path/to/DeepSeek-V4.1/tokenizer.json (see docs/server.md)."
        )
    if _SYSTEM not in vocabulary.added:
        return (
            f"warning: the tokenizer {vocabulary.name} has no {_SYSTEM}, so requests for {', '.join(v41)} fail "
            "with a 500; give the V4.1 tokenizer.json with --tokenizer."
        )
    return ""


Tokenizer = str | os.PathLike[str] | Vocabulary | None


_WARM_SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}}}
_WARM_CALL = '{"a": "b", "n": 1}'

#: One small request per protocol, for the start-up pass through the request and response paths: a tool, a call
#: in the history and its result, so that the tool paths are loaded too.
_WARM_BODIES: dict[Protocol, dict[str, object]] = {
    "chat_completions": {
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": _WARM_CALL}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_0", "content": "ok"},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": _WARM_SCHEMA}}],
    },
    "responses": {
        "input": [
            {"role": "user", "content": "Hi"},
            {"type": "function_call", "call_id": "call_0", "name": "f", "arguments": _WARM_CALL},
            {"type": "function_call_output", "call_id": "call_0", "output": "ok"},
        ],
        "tools": [{"type": "function", "name": "f", "parameters": _WARM_SCHEMA}],
    },
    "messages": {
        "max_tokens": 16,
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_0", "name": "f", "input": {"a": "b"}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "content": "ok"}]},
        ],
        "tools": [{"name": "f", "input_schema": _WARM_SCHEMA}],
    },
}

#: The warm-up's model output: reasoning, then a call with a string and a JSON parameter.
_WARM_REPLY = (
    'Ok.</think>\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n'
    '<｜DSML｜parameter name="a" string="true">b</｜DSML｜parameter>\n'
    '<｜DSML｜parameter name="n" string="false">1</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
)


def warm_up(vocabulary: Vocabulary, options: ConversionOptions) -> list[Protocol]:
    """Take one small request of each protocol through conversion, encoding, the stream processor (one id per
    push, then four) and accumulation, so that the modules and tables those load on first use are loaded now, not
    on the first client's request. Returns the protocols that went all the way (a protocol these options reject
    has nothing to load)."""
    name = next((n for n, v in options.model_versions_by_name.items() if v == "v4"), None)
    if name is None:
        return []
    encoder = dscodec.PromptEncoder(vocabulary, cache_chars=0)
    reply = vocabulary.full.encode(_WARM_REPLY, add_special_tokens=False).ids
    warmed: list[Protocol] = []
    for protocol, body in _WARM_BODIES.items():
        for size in (1, 4):
            try:
                request = dscodec.convert(protocol, {"model": name, **body}, options)
                encoder.encode(request)
                processor = dscodec.StreamProcessor(
                    request, response_id="warm", model=name, tokenizer=vocabulary
                )
                events = processor.start(1, 0)
                for k in range(0, len(reply), size):
                    events += processor.push_tokens(reply[k : k + size])
                events += processor.finish()
                dscodec.accumulate(protocol, events)
            except DscodecError:
                break
        else:
            warmed.append(protocol)
    return warmed


def _load(tokenizer: Tokenizer, options: ConversionOptions) -> Vocabulary:
    """Load the tokenizer and warm the request and response paths up (:func:`warm_up`)."""
    vocabulary = demo_vocabulary() if tokenizer is None else Vocabulary.load(tokenizer)
    warm_up(vocabulary, options)
    vocabulary.full.encode("Hi", add_special_tokens=False)
    # The event loop's worker-thread backend is imported when a request first needs it.
    import anyio._backends._asyncio  # noqa: F401

    return vocabulary


def scripted_app(
    script: str | os.PathLike[str],
    *,
    tokenizer: Tokenizer = None,
    context_limit: int | None = None,
    options: ConversionOptions | None = None,
    api_keys: Collection[str] | None = None,
) -> FastAPI:
    """The example app replaying ``script`` (see :mod:`dscodec.server.scripted`); the context limit defaults to
    :data:`~dscodec.server.DEFAULT_CONTEXT_LIMIT`, ``api_keys`` as for :func:`~dscodec.server.create_app`.

    Raises:
        ScriptError: the script file cannot be loaded.
        TokenizerError: the tokenizer cannot be loaded.
    """
    scripts = ScriptedBackend.from_file(script).scripts  # a bad file fails before the slow tokenizer load
    options = options or ConversionOptions()
    vocabulary = _load(tokenizer, options)
    backend = ScriptedBackend(scripts, tokenizer=vocabulary)
    return _app(backend, vocabulary, context_limit, options, api_keys)


def upstream_app(
    engine: Upstream,
    url: str,
    *,
    tokenizer: Tokenizer = None,
    context_limit: int | None = None,
    options: ConversionOptions | None = None,
    upstream_model: str | None = None,
    api_keys: Collection[str] | None = None,
) -> FastAPI:
    """The example app in front of a vLLM or SGLang server at ``url`` (``api_keys`` as for
    :func:`~dscodec.server.create_app`).

    Raises:
        ServeError: ``upstream_model`` with an engine other than vLLM, which takes no model name from dscodec.
        TokenizerError: the tokenizer cannot be loaded.
    """
    from dscodec.server.backends import SGLangBackend, VLLMBackend

    _check_upstream_model(engine, upstream_model)
    options = options or ConversionOptions()
    vocabulary = _load(tokenizer, options)
    backend: Backend = VLLMBackend(url, model=upstream_model) if engine == "vllm" else SGLangBackend(url)
    return _app(backend, vocabulary, context_limit, options, api_keys)


def _check_upstream_model(engine: str | None, upstream_model: str | None) -> None:
    """Refuse a model name that would be read past: only the vLLM backend sends one to its engine."""
    if upstream_model is not None and engine != "vllm":
        where = "a scripted server" if engine is None else f"--upstream {engine}"
        raise ServeError(
            f"--upstream-model {upstream_model!r} is sent only to vLLM (--upstream vllm); {where} has no use for it"
        )


def _app(
    backend: Backend,
    vocabulary: Vocabulary,
    context_limit: int | None,
    options: ConversionOptions,
    api_keys: Collection[str] | None,
) -> FastAPI:
    limit = DEFAULT_CONTEXT_LIMIT if context_limit is None else context_limit
    return create_app(backend, tokenizer=vocabulary, context_limit=limit, options=options, api_keys=api_keys)


def check_address(host: str, port: int) -> None:
    """Make sure the server can listen on ``host``:``port`` (bound as uvicorn binds it, then let go), so that a
    port in use or a host that is not this machine's is one message, not uvicorn's log after the slow start.

    Raises:
        ServeError: the address cannot be listened on.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn sets it
            probe.bind((host, port))
    except socket.gaierror as exc:
        raise ServeError(f"--host {host}: no address to listen on ({exc.strerror or exc})") from None
    except (OSError, OverflowError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ServeError(f"cannot listen on {host}:{port}: {reason}") from None


def serve(
    script: str | os.PathLike[str] | None = None,
    *,
    upstream: tuple[Upstream, str] | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    tokenizer: str | os.PathLike[str] | None = None,
    context_limit: int | None = None,
    aliases: Mapping[str, ModelVersion] | None = None,
    served_models: Sequence[str] | None = None,
    upstream_model: str | None = None,
    unsupported: UnsupportedBehavior = "ignore",
    api_keys: Collection[str] | None = None,
    log: TextIO | None = None,
) -> None:
    """Load everything, then serve until interrupted (uvicorn): the scripts of ``script``, or the engine
    ``upstream`` (``("vllm" | "sglang", url)``); with ``api_keys``, every request but ``/health`` needs one of them.

    Raises:
        ServeError: neither or both of ``script`` and ``upstream``; ``upstream_model`` without a vLLM upstream; a
            bad served name; an address that cannot be
            listened on (a host that does not resolve or is not this machine's, a port in use), found before the
            tokenizer is loaded.
        ScriptError: the script file cannot be loaded.
        TokenizerError: the tokenizer cannot be loaded.
    """
    import uvicorn

    out = log or sys.stderr
    if (script is None) == (upstream is None):
        raise ServeError("give either a script file or an upstream engine")
    _check_upstream_model(upstream[0] if upstream is not None else None, upstream_model)
    options = serving_options(aliases, served_models).replace(unsupported=unsupported)
    if script is not None:
        ScriptedBackend.from_file(script)  # a bad file fails before the slow tokenizer load
    check_address(host, port)  # and so does an address uvicorn could not listen on
    vocabulary = _load(tokenizer, options)
    if upstream is not None:
        engine, url = upstream
        app = upstream_app(
            engine,
            url,
            tokenizer=vocabulary,
            context_limit=context_limit,
            options=options,
            upstream_model=upstream_model,
            api_keys=api_keys,
        )
        source = f"{engine} at {url}"
    else:
        app = scripted_app(
            script or "",
            tokenizer=vocabulary,
            context_limit=context_limit,
            options=options,
            api_keys=api_keys,
        )
        source = f"{os.fspath(script or '')} (pick a script with the X-Scenario header)"
    warning = v41_warning(tokenizer if tokenizer is None else vocabulary.name, vocabulary, options)
    if warning:
        print(f"dscodec: {warning}", file=out)
    names = ", ".join(options.model_versions_by_name)
    print(
        f"dscodec: serving {source} on http://{host}:{port}/v1 as {names} "
        "(POST /v1/chat/completions, /v1/responses, /v1/messages; GET /v1/models, /health)",
        file=out,
    )
    if api_keys:
        count = len(api_keys)
        print(f"dscodec: every request but /health needs an API key ({count} accepted)", file=out)
    elif host not in ("127.0.0.1", "localhost", "::1"):
        print(f"dscodec: warning: {host} is reachable from other machines and no API key is needed", file=out)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="info",
        log_config=log_config(),
        http=head_timeout_protocol(HEAD_TIMEOUT),
    )
