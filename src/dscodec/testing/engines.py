"""Fake inference engines: test a server that fronts vLLM or SGLang with model output you choose.

A server in front of an engine renders the prompt, sends its token ids, and turns the ids the engine streams back
into the API's answer. To test that path you need an engine that writes exactly the output you want, cut into
exactly the chunks you want: a finished tool call, a marker split between two chunks, a character split between
two ids, a failure in the middle. :class:`FakeEngine` is that engine. It is a plain ASGI app that speaks the wire
format of vLLM's completions endpoint or SGLang's ``/generate`` (the fields dscodec's own engine backends read,
``docs/backends.md``), and it answers each request with the next reply you queued: a list of transcript backend
items (:class:`~dscodec.testing.transcript.Tokens`, :class:`~dscodec.testing.transcript.Text`,
:class:`~dscodec.testing.transcript.Finish`, ...), such as a drawn ``Scenario.backend``.

Every request is recorded as an :class:`EngineCall`: the body the server sent (its prompt ids, its sampling
fields) and the items the engine really sent, which :func:`dscodec.testing.replay` can run through dscodec to
give the answer your server should have given::

    engine = FakeEngine("vllm")
    with serve_engine(engine) as engine_url:           # start your server with this upstream
        engine.play(scenario.backend)
        exchange = send(server_url + "/v1/chat/completions", scenario.body)
        call = engine.calls[-1]
        expected = replay(Transcript(scenario.protocol, scenario.body, call.sent))

As the engines do, the fake cuts the output at the request's token budget (``max_tokens``, 16 when absent, for
vLLM; ``sampling_params.max_new_tokens``, 128 when absent, for SGLang) with a ``length`` finish, leaves special
tokens out of the text unless the request sets ``skip_special_tokens`` to false, and writes log probabilities
only when asked. ``GET /health`` answers 200.
"""

from __future__ import annotations

import codecs
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from dscodec.errors import shown
from dscodec.stream._markers import has_surrogate
from dscodec.testing.transcript import (
    BackendItem,
    Failure,
    Finish,
    LogprobEntry,
    Text,
    Tokens,
    Transcript,
    Usage,
)
from dscodec.vocab import TokenizerLike, Vocabulary

__all__ = ["EngineCall", "EngineKind", "FakeEngine", "serve_engine"]

#: The engines a :class:`FakeEngine` can stand for.
EngineKind = Literal["vllm", "sglang"]

_ENDPOINTS: dict[str, str] = {"vllm": "/v1/completions", "sglang": "/generate"}
#: Token ids run from 0 to 2**32 - 1 (a prompt id past them is refused, as an engine refuses one it has no token
#: for).
_ID_LIMIT = 2**32
#: The token budget each engine applies when the request names none.
_DEFAULT_BUDGET: dict[str, int] = {"vllm": 16, "sglang": 128}
#: What vLLM writes for a log probability of minus infinity (JSON has no infinity).
_VLLM_MINUS_INF = -9999.0
#: The longest wait before a streamed event (seconds): a longer one is no test of a timeout, only a hung test.
_MAX_DELAY = 3600.0
#: A request body larger than this is refused (413), as a real engine bounds its bodies.
_MAX_BODY_BYTES = 64 * 1024 * 1024
#: The request fields the fake engine reads besides the prompt and the budget, by the JSON type the engine's API
#: gives them (a value of another type is a 400: the engines coerce a few, such as "true", the fake does not).
_FIELD_TYPES: dict[str, dict[str, type]] = {
    "vllm": {
        "stream": bool,
        "stream_options": dict,
        "logprobs": int,
        "return_tokens_as_token_ids": bool,
        "return_token_ids": bool,
        "skip_special_tokens": bool,
    },
    "sglang": {"stream": bool, "return_logprob": bool, "top_logprobs_num": int, "skip_special_tokens": bool},
}

_Scope = dict[str, Any]
_Message = dict[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]


@dataclass
class EngineCall:
    """What one generation request made the fake engine do.

    Attributes:
        body: the request body the server sent.
        prompt: its prompt token ids (``prompt`` for vLLM, ``input_ids`` for SGLang).
        reply: the items queued for it (None when nothing was queued: the engine answered 500).
        sent: what the engine sends for the request, as backend items: the prompt usage, the id chunks after the
            token budget's cut, then the finish or the failure (all of it, also when the client went away before
            the end: see ``disconnected``). ``Transcript(protocol, body, sent)`` replays it.
        finished: the answer was written to its end.
        disconnected: the client went away before that (a real engine then aborts the generation).
    """

    body: dict[str, Any]
    prompt: list[int]
    reply: list[BackendItem] | None
    sent: list[BackendItem] = field(default_factory=list)
    finished: bool = False
    disconnected: bool = False


@dataclass(frozen=True)
class _Step:
    """One chunk of the generation: ids with their log probabilities, or the end."""

    ids: tuple[int, ...] = ()
    logprobs: tuple[LogprobEntry, ...] | None = None
    finish: Literal["stop", "length"] | None = None
    failure: str | None = None
    end: bool = False


class FakeEngine:
    """An ASGI app that answers like vLLM (``POST /v1/completions``) or SGLang (``POST /generate``), with the
    output you queue.

    Args:
        kind: ``"vllm"`` or ``"sglang"``.
        tokenizer: the vocabulary that turns ids into the text the engine writes with them (and ``Text`` items
            into ids): ``None`` for the bundled DeepSeek V4 tokenizer, a path, or a ``tokenizers.Tokenizer``.
        incremental: SGLang only: stream each chunk's own ids and text (SGLang's incremental streaming option)
            instead of everything so far.
        model: the model name vLLM's chunks carry.
        delay: seconds to wait before each streamed event, as a slow engine (for timeouts and cancellation); at
            most 3600.
        responder: answers a request when no reply is queued: called with the request body and its prompt ids,
            it returns the reply's backend items (for requests that come at once, or an engine that answers by
            the prompt). Without one, such a request gets a 500.

    Raises:
        ValueError: an unknown ``kind``, ``incremental`` for vLLM, or a ``delay`` below 0 or over an hour.
        TypeError: a ``model`` that is no string, an ``incremental`` that is no bool, a ``responder`` that is not
            callable.
        TokenizerError: the ``tokenizer`` given cannot be loaded (the bundled one loads on first use).
    """

    def __init__(
        self,
        kind: EngineKind,
        *,
        tokenizer: TokenizerLike = None,
        incremental: bool = False,
        model: str = "deepseek-fake",
        delay: float = 0.0,
        responder: Callable[[dict[str, Any], list[int]], Iterable[BackendItem]] | None = None,
    ) -> None:
        if not isinstance(kind, str):
            raise TypeError(f"kind must be 'vllm' or 'sglang', not {type(kind).__name__}")
        if kind not in _ENDPOINTS:
            raise ValueError(f"kind must be 'vllm' or 'sglang', not {kind!r}")
        if incremental and kind != "sglang":
            raise ValueError("incremental streaming is an SGLang option")
        if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= _MAX_DELAY:
            raise ValueError(
                f"delay must be a number of seconds from 0 to {_MAX_DELAY:g}, not {shown(delay)}"
            )
        if type(incremental) is not bool:
            raise TypeError(f"incremental must be a bool, not {type(incremental).__name__}")
        if not isinstance(model, str):
            raise TypeError(f"model must be a str, not {type(model).__name__}")
        if responder is not None and not callable(responder):
            raise TypeError(f"responder must be callable or None, not {type(responder).__name__}")
        self.kind: EngineKind = kind
        self.incremental = incremental
        self.model = model
        self.delay = float(delay)
        self._tokenizer = tokenizer
        self._vocabulary: Vocabulary | None = None
        self._replies: deque[list[BackendItem]] = deque()
        self._responder = responder
        self._lock = threading.Lock()
        #: Every generation request, in the order they came.
        self.calls: list[EngineCall] = []
        if (
            tokenizer is not None
        ):  # a tokenizer of the user's: one that cannot load fails here, not mid-request
            self._vocabulary = Vocabulary.load(tokenizer)

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary the engine writes text with (loaded on first use)."""
        if self._vocabulary is None:
            self._vocabulary = Vocabulary.load(self._tokenizer)
        return self._vocabulary

    def play(self, reply: Iterable[BackendItem] | Transcript) -> None:
        """Queue the answer to the next generation request: backend items in order, or a transcript's.

        ``Tokens`` items are streamed as one chunk each; a ``Text`` item is encoded with the full vocabulary
        (its special-token spellings become their ids) and streamed as one chunk; a ``Usage`` item gives the
        cached tokens to report (the prompt tokens are always the prompt's length); ``Finish`` ends the output
        (``"stop"`` or ``"length"``; None ends the stream without a finish reason, as a broken engine would);
        ``Failure`` sends the engine's mid-stream error event. A reply without a ``Finish`` or ``Failure`` ends
        with ``"stop"``.

        Raises:
            TypeError: an item that is no backend item, or a field of the wrong type (a ``Text`` whose text is no
                string, a log probability that is no number).
            ValueError: a ``content_filter`` finish (neither engine has one), a negative id or count, log
                probabilities that are not one entry per id, or a ``Text`` holding a lone surrogate (no tokenizer
                encodes one).
        """
        items = self._checked(reply)
        with self._lock:
            self._replies.append(items)

    def _checked(self, reply: Iterable[BackendItem] | Transcript) -> list[BackendItem]:
        if isinstance(reply, (str, bytes)) or not isinstance(reply, (Iterable, Transcript)):
            raise TypeError(f"a reply is backend items or a Transcript, not {type(reply).__name__}")
        items = list(reply.backend if isinstance(reply, Transcript) else reply)
        for index, item in enumerate(items):
            where = f"reply item {index}"
            if not isinstance(item, (Usage, Text, Tokens, Finish, Failure)):
                raise TypeError(f"{where} must be a backend item, not {type(item).__name__}")
            if isinstance(item, Finish) and item.reason not in ("stop", "length", None):
                raise ValueError(f"{where}: {self.kind} has no {item.reason!r} finish")
            if isinstance(item, Text) and not isinstance(item.text, str):
                raise TypeError(f"{where}: the text must be a str, not {type(item.text).__name__}")
            if isinstance(item, Text) and has_surrogate(item.text):
                raise ValueError(
                    f"{where}: the text holds a lone surrogate, which no tokenizer encodes (an engine never "
                    "streams one)"
                )
            if isinstance(item, Failure) and not isinstance(item.message, str):
                raise TypeError(f"{where}: the message must be a str, not {type(item.message).__name__}")
            if isinstance(item, Usage) and (type(item.cached_tokens) is not int or item.cached_tokens < 0):
                raise ValueError(f"{where}: cached_tokens must be an integer of 0 or more")
            if isinstance(item, Tokens):
                if not all(type(i) is int and i >= 0 for i in item.ids):
                    raise ValueError(f"{where}: token ids must be integers of 0 or more")
                if item.logprobs is not None:
                    if len(item.logprobs) != len(item.ids):
                        raise ValueError(f"{where}: one log probability entry per id, or none")
                    if not all(map(_logprob_entry_ok, item.logprobs)):
                        raise TypeError(
                            f"{where}: a log probability entry is a number or (number, ((id, number), ...))"
                        )
        return items

    @property
    def pending(self) -> int:
        """How many queued replies no request has taken yet."""
        return len(self._replies)

    # -- ASGI ------------------------------------------------------------------------------------------------------

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        if path == "/health":
            if method in ("GET", "HEAD"):
                await _respond(send, 200, b"")
            else:
                await _respond(send, 405, self._error(405, "Method Not Allowed"))
            return
        if self.kind == "vllm" and path == "/v1/models" and method == "GET":
            created = int(time.time())
            models = {"object": "list", "data": [{"id": self.model, "object": "model", "created": created}]}
            await _respond(send, 200, _json(models))
            return
        if path != _ENDPOINTS[self.kind]:
            await _respond(send, 404, self._error(404, "Not Found"))
            return
        if method != "POST":
            await _respond(send, 405, self._error(405, "Method Not Allowed"))
            return
        raw = await _read_body(receive)
        if raw is None:
            await _respond(send, 413, self._error(413, "request body too large"))
            return
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            await _respond(send, 400, self._error(400, "the request body is not JSON"))
            return
        problem = self._check(body)
        if problem is not None:
            await _respond(send, 400, self._error(400, problem))
            return
        prompt = list(body["prompt"] if self.kind == "vllm" else body["input_ids"])
        with self._lock:
            reply = self._replies.popleft() if self._replies else None
        problem = None
        if reply is None and self._responder is not None:
            try:
                reply = self._checked(self._responder(body, prompt))
            except Exception as exc:  # noqa: BLE001 - the test's own function failed: the engine says so
                problem = f"FakeEngine: the responder failed: {type(exc).__name__}: {exc}"
        call = EngineCall(body, prompt, reply)
        with self._lock:
            self.calls.append(call)
        if reply is None:
            message = problem or "FakeEngine: no reply was queued for this request"
            await _respond(send, 500, self._error(500, message))
            return
        steps, call.sent, cached = self._steps(body, prompt, reply)
        stream = body.get("stream") is True
        writer = (_VLLMWriter if self.kind == "vllm" else _SGLangWriter)(self, body, prompt, cached)
        if not stream:
            status, answer = writer.whole(steps)
            await _respond(send, status, _json(answer))
            call.finished = True
            return
        frames = (b"data: " + _json(event) + b"\n\n" for event in writer.events(steps))
        await _stream(send, receive, frames, call, self.delay)

    # -- the request -------------------------------------------------------------------------------------------------

    def _check(self, body: Any) -> str | None:
        """What is wrong with a generation request, in the engine's terms (None: nothing)."""
        if not isinstance(body, dict):
            return "the request body must be a JSON object"
        key = "prompt" if self.kind == "vllm" else "input_ids"
        prompt = body.get(key)
        if not isinstance(prompt, list) or not all(type(i) is int and 0 <= i < _ID_LIMIT for i in prompt):
            return f"{key} must be a list of token ids from 0 to 2**32 - 1 (this fake engine takes no text prompts)"
        if self.kind == "sglang" and not isinstance(body.get("sampling_params", {}), (dict, type(None))):
            return "sampling_params must be an object"
        budget = self._budget_field(body)
        if budget is not None and (type(budget) is not int or budget < 0):
            return f"the token budget must be an integer of 0 or more, not {budget!r}"
        params = body if self.kind == "vllm" else body.get("sampling_params") or {}
        fields = _FIELD_TYPES[self.kind]
        for name, kind in fields.items():
            value = (params if name == "skip_special_tokens" else body).get(name)
            if value is None:
                continue
            if kind is bool and type(value) is not bool:
                return f"{name} must be true, false or null, not {value!r:.100}"
            if kind is int and (type(value) is not int or value < 0):
                return f"{name} must be an integer of 0 or more, not {value!r:.100}"
            if kind is dict:
                if not isinstance(value, dict):
                    return f"{name} must be an object, not {value!r:.100}"
                usage = value.get("include_usage")
                if usage is not None and type(usage) is not bool:
                    return f"{name}.include_usage must be true, false or null, not {usage!r:.100}"
        return None

    def _budget_field(self, body: dict[str, Any]) -> Any:
        if self.kind == "vllm":
            return body.get("max_tokens")
        params = body.get("sampling_params") or {}
        return params.get("max_new_tokens") if isinstance(params, dict) else None

    def _skip_special(self, body: dict[str, Any]) -> bool:
        where = body if self.kind == "vllm" else (body.get("sampling_params") or {})
        return where.get("skip_special_tokens", True) is not False

    def _steps(
        self, body: dict[str, Any], prompt: list[int], reply: list[BackendItem]
    ) -> tuple[list[_Step], list[BackendItem], int]:
        """The reply as chunks, cut at the token budget; what is sent, as backend items; the cached tokens."""
        budget = self._budget_field(body)
        left = _DEFAULT_BUDGET[self.kind] if budget is None else budget
        cached = 0
        steps: list[_Step] = []
        for item in reply:
            if isinstance(item, Usage):
                cached = item.cached_tokens
                continue
            if isinstance(item, (Text, Tokens)):
                ids, logprobs = (
                    (tuple(self.vocabulary.full.encode(item.text, add_special_tokens=False).ids), None)
                    if isinstance(item, Text)
                    else (item.ids, item.logprobs)
                )
                if not ids:
                    continue
                if len(ids) > left:  # the budget ends inside this chunk (or ended before it)
                    if left:
                        steps.append(_Step(ids[:left], None if logprobs is None else logprobs[:left]))
                    steps.append(_Step(finish="length", end=True))
                    break
                # A chunk that uses up the budget exactly ends the output with a length finish only when more
                # output follows it; a finish or a failure right after it stands.
                left -= len(ids)
                steps.append(_Step(ids, logprobs))
                continue
            if isinstance(item, Finish):
                steps.append(_Step(finish=item.reason if item.reason != "content_filter" else None, end=True))
            else:
                steps.append(_Step(failure=item.message, end=True))
            break
        else:
            steps.append(_Step(finish="stop", end=True))
        sent: list[BackendItem] = [Usage(prompt_tokens=len(prompt), cached_tokens=cached)]
        for step in steps:
            if step.ids:
                sent.append(Tokens(step.ids, step.logprobs))
            elif step.failure is not None:
                sent.append(Failure(step.failure))
            else:
                sent.append(Finish(step.finish))
        return steps, sent, cached

    def _error(self, status: int, message: str) -> bytes:
        """An error body as the engine writes it."""
        if self.kind == "vllm":
            kind = "BadRequestError" if status < 500 else "InternalServerError"
            return _json({"error": {"message": message, "type": kind, "param": None, "code": status}})
        return _json({"error": {"message": message, "code": status}})

    def _text_of(self, ids: Sequence[int], *, skip_special: bool) -> bytes:
        """The UTF-8 bytes the engine writes for ``ids``."""
        vocabulary = self.vocabulary
        if skip_special:
            return b"".join(vocabulary.token_bytes(i) for i in ids if not vocabulary.is_special(i))
        return b"".join(vocabulary.token_bytes(i) for i in ids)


class _Writer:
    """Turns the steps of one generation into one engine's events."""

    def __init__(self, engine: FakeEngine, body: dict[str, Any], prompt: list[int], cached: int) -> None:
        self.engine = engine
        self.body = body
        self.prompt = prompt
        self.cached = cached
        self.skip = engine._skip_special(body)
        # Text is decoded as an engine's detokenizer does: a character split between ids comes whole, later.
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def text(self, ids: Sequence[int], *, last: bool = False) -> str:
        return self.decoder.decode(self.engine._text_of(ids, skip_special=self.skip), final=last)


class _VLLMWriter(_Writer):
    def __init__(self, engine: FakeEngine, body: dict[str, Any], prompt: list[int], cached: int) -> None:
        super().__init__(engine, body, prompt, cached)
        self.created = int(time.time())
        self.top = body.get("logprobs")
        self.as_ids = body.get("return_tokens_as_token_ids") is True
        self.with_ids = body.get("return_token_ids") is True
        self.offset = 0

    def _chunk(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": "cmpl-fake",
            "object": "text_completion",
            "created": self.created,
            "model": self.engine.model,
            "choices": choices,
        }

    def _usage(self, completion: int) -> dict[str, Any]:
        return {
            "prompt_tokens": len(self.prompt),
            "completion_tokens": completion,
            "total_tokens": len(self.prompt) + completion,
            "prompt_tokens_details": {"cached_tokens": self.cached},
        }

    def _logprobs(self, step: _Step, text: str) -> dict[str, Any] | None:
        if type(self.top) is not int:
            return None
        tokens: list[str] = []
        values: list[float] = []
        tops: list[dict[str, float]] = []
        offsets: list[int] = []
        for token_id, value, alternatives in _entries(step):
            name = self._token(token_id)
            tokens.append(name)
            values.append(_finite(value))
            top = {name: _finite(value)}
            for alternative, alternative_value in alternatives[: self.top]:
                top.setdefault(self._token(alternative), _finite(alternative_value))
            tops.append(top)
            offsets.append(self.offset)
        self.offset += len(text)
        return {"text_offset": offsets, "token_logprobs": values, "tokens": tokens, "top_logprobs": tops}

    def _token(self, token_id: int) -> str:
        if self.as_ids:
            return f"token_id:{token_id}"
        return self.engine._text_of([token_id], skip_special=False).decode("utf-8", "replace")

    def _choice(self, step: _Step, text: str, first: bool) -> dict[str, Any]:
        choice: dict[str, Any] = {
            "index": 0,
            "text": text,
            "logprobs": self._logprobs(step, text),
            "finish_reason": None,
            "stop_reason": None,
        }
        if self.with_ids:
            choice["token_ids"] = list(step.ids)
            if first:
                choice["prompt_token_ids"] = self.prompt
        return choice

    def events(self, steps: list[_Step]) -> Iterator[dict[str, Any]]:
        # As vLLM streams: the finish reason rides on the chunk of the last ids (a chunk of its own when the
        # output has none); the usage chunk, when asked for, follows.
        completion = 0
        for index, (step, after) in enumerate(_pairs(steps)):
            if step.failure is not None:
                yield {
                    "error": {
                        "message": step.failure,
                        "type": "InternalServerError",
                        "param": None,
                        "code": 500,
                    }
                }
                return
            if not step.end:
                completion += len(step.ids)
                finish = after.finish if after is not None and after.failure is None else None
                choice = self._choice(step, self.text(step.ids, last=finish is not None), index == 0)
                choice["finish_reason"] = finish
                yield self._chunk([choice])
                continue
            if step.finish is not None and index == 0:  # no output at all: the finish has a chunk of its own
                choice = self._choice(_Step(), self.decoder.decode(b"", final=True), True)
                choice["finish_reason"] = step.finish
                yield self._chunk([choice])
            if (self.body.get("stream_options") or {}).get("include_usage") is True:
                yield {**self._chunk([]), "usage": self._usage(completion)}
            return

    def whole(self, steps: list[_Step]) -> tuple[int, dict[str, Any]]:
        ids = [i for step in steps for i in step.ids]
        failure = next((step.failure for step in steps if step.failure is not None), None)
        if failure is not None:
            return 500, {
                "error": {"message": failure, "type": "InternalServerError", "param": None, "code": 500}
            }
        text = self.text(ids, last=True)
        merged = _Step(tuple(ids), _joined(steps))
        choice = self._choice(merged, text, True)
        choice["finish_reason"] = steps[-1].finish
        return 200, {**self._chunk([choice]), "usage": self._usage(len(ids))}


class _SGLangWriter(_Writer):
    def __init__(self, engine: FakeEngine, body: dict[str, Any], prompt: list[int], cached: int) -> None:
        super().__init__(engine, body, prompt, cached)
        self.logprobs = body.get("return_logprob") is True
        top = body.get("top_logprobs_num")
        self.top = top if type(top) is int and top > 0 else 0
        self.ids: list[int] = []
        self.text_so_far = ""
        self.entries: list[list[Any]] = []
        self.tops: list[list[list[Any]]] = []

    def _finish(self, step: _Step) -> dict[str, Any] | None:
        if step.finish == "stop":
            # The id that ended the generation when it is a special one (the end-of-sentence token).
            matched = self.ids[-1] if self.ids and self.engine.vocabulary.is_special(self.ids[-1]) else None
            return {"type": "stop", "matched": matched}
        if step.finish == "length":
            return {"type": "length", "length": len(self.ids)}
        return None

    def _meta(self, finish: dict[str, Any] | None, start: int) -> dict[str, Any]:
        """``meta_info`` so far, with the log probabilities from the ``start``-th id on when asked for."""
        meta: dict[str, Any] = {
            "id": "fake-rid",
            "finish_reason": finish,
            "prompt_tokens": len(self.prompt),
            "completion_tokens": len(self.ids),
            "cached_tokens": self.cached,
        }
        if self.logprobs:
            meta["output_token_logprobs"] = self.entries[start:]
            meta["output_top_logprobs"] = self.tops[start:]
        return meta

    def _event(
        self, new: Sequence[int], text: str, since: int, finish: dict[str, Any] | None
    ) -> dict[str, Any]:
        # The log probabilities go like the ids: this event's own, or everything so far.
        meta = self._meta(finish, since if self.engine.incremental else 0)
        if self.engine.incremental:
            return {"text": text, "output_ids": list(new), "meta_info": meta}
        return {"text": self.text_so_far, "output_ids": list(self.ids), "meta_info": meta}

    def _take(self, step: _Step, *, last: bool = False) -> str:
        for token_id, value, alternatives in _entries(step):
            self.entries.append([_or_none(value), token_id, None])
            self.tops.append([[_or_none(v), a, None] for a, v in alternatives[: self.top]])
        self.ids += step.ids
        text = self.text(step.ids, last=last)
        self.text_so_far += text
        return text

    def events(self, steps: list[_Step]) -> Iterator[dict[str, Any]]:
        # As SGLang streams: the finish reason rides on the event of the last ids (an event of its own when the
        # output has none).
        for index, (step, after) in enumerate(_pairs(steps)):
            if step.failure is not None:
                yield {"error": {"message": step.failure}}
                return
            since = len(self.ids)
            if step.end:
                if step.finish is not None and index == 0:  # no output at all: an event of its own
                    text = self.decoder.decode(b"", final=True)
                    self.text_so_far += text
                    yield self._event((), text, since, self._finish(step))
                return
            last = after is not None and after.failure is None and after.finish is not None
            text = self._take(step, last=last)
            yield self._event(
                step.ids, text, since, self._finish(after) if last and after is not None else None
            )

    def whole(self, steps: list[_Step]) -> tuple[int, dict[str, Any]]:
        finish: dict[str, Any] | None = None
        for step in steps:
            if step.failure is not None:
                return 500, {"error": {"message": step.failure, "code": 500}}
            if step.end:
                finish = self._finish(step)
            else:
                self._take(step)
        self.text_so_far += self.decoder.decode(b"", final=True)
        return 200, {"text": self.text_so_far, "output_ids": self.ids, "meta_info": self._meta(finish, 0)}


def _pairs(steps: list[_Step]) -> Iterator[tuple[_Step, _Step | None]]:
    """Each step with the one after it (None after the last)."""
    return zip(steps, [*steps[1:], None])


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _logprob_entry_ok(entry: object) -> bool:
    """A log probability entry the writers can write: a number, or a number and ``(id, number)`` pairs."""
    if _is_number(entry):
        return True
    if not isinstance(entry, (tuple, list)) or len(entry) != 2 or not _is_number(entry[0]):
        return False
    pairs = entry[1]
    return isinstance(pairs, (tuple, list)) and all(
        isinstance(pair, (tuple, list))
        and len(pair) == 2
        and type(pair[0]) is int
        and pair[0] >= 0
        and _is_number(pair[1])
        for pair in pairs
    )


def _entries(step: _Step) -> Iterator[tuple[int, float, Sequence[tuple[int, float]]]]:
    """Each id of ``step`` with its log probability and alternatives (0.0 and none when the reply gave none)."""
    for index, token_id in enumerate(step.ids):
        entry = step.logprobs[index] if step.logprobs is not None else 0.0
        if isinstance(entry, (int, float)):
            yield token_id, entry, ()
        else:
            yield token_id, entry[0], entry[1]


def _joined(steps: list[_Step]) -> tuple[LogprobEntry, ...] | None:
    """The log probabilities of all steps, when every step has them."""
    if any(step.ids and step.logprobs is None for step in steps):
        return None
    return tuple(entry for step in steps for entry in (step.logprobs or ()))


def _finite(value: float) -> float:
    """A log probability as vLLM writes it (minus infinity clamped)."""
    return _VLLM_MINUS_INF if value == float("-inf") else float(value)


def _or_none(value: float) -> float | None:
    """A log probability as SGLang's JSON writer gives it (minus infinity has no JSON spelling: null)."""
    return None if value == float("-inf") else float(value)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


async def _read_body(receive: _Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > _MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _respond(send: _Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _stream(
    send: _Send, receive: _Receive, frames: Iterator[bytes], call: EngineCall, delay: float
) -> None:
    """Write an event stream, ``delay`` seconds before each event, and stop when the client goes away (as the
    engines abort such a request)."""
    import anyio.lowlevel  # an ASGI server brings anyio; the module imports without it

    gone = False  # the server said the client is gone (it also says so once a whole answer was sent)
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            group.cancel_scope.cancel()

        group.start_soon(watch)
        try:
            headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            for frame in frames:
                if delay:
                    await anyio.sleep(delay)
                await send({"type": "http.response.body", "body": frame, "more_body": True})
                await anyio.lowlevel.checkpoint()  # let a disconnect be seen between chunks
            await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})
            call.finished = True
        except OSError:
            gone = True
        group.cancel_scope.cancel()
    call.disconnected = gone and not call.finished


async def _lifespan(receive: _Receive, send: _Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _listener(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host`` and ``port`` for uvicorn to listen on (the errors as
    :func:`serve_engine` documents them).

    It is made with its protocol named: asyncio turns Nagle's algorithm off only on connections accepted from a
    socket whose protocol is TCP by name, and with it on, every answer written in two parts (the head, then the
    body or the next event) waited for the client's delayed acknowledgement, about 40 ms a request.
    """
    listener = socket.socket(
        socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
    )
    try:
        listener.bind((host, port))
    except socket.gaierror as exc:
        listener.close()
        raise ValueError(f"host {host!r:.100} is no address to listen on: {exc.strerror or exc}") from None
    except (OSError, OverflowError) as exc:
        listener.close()
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise RuntimeError(f"the fake engine cannot listen on {host}:{port}: {reason}") from None
    return listener


@contextmanager
def serve_engine(engine: FakeEngine, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``engine`` with uvicorn in a background thread for the ``with`` block; yields its base URL.

    ``port=0`` takes a free port. Needs uvicorn (``pip install 'dscodec[testing]'``). The arguments are checked,
    and the address bound, when the ``with`` block is entered.

    Raises:
        TypeError: ``engine`` is no :class:`FakeEngine`, ``host`` no str, or ``port`` no int.
        ValueError: ``port`` is not from 0 to 65535, or ``host`` is no address this machine has (a name that
            does not resolve).
        ImportError: uvicorn is not installed.
        RuntimeError: the address cannot be listened on (the port is taken, the address is not this machine's),
            or the server did not start within 10 seconds.
    """
    if not isinstance(engine, FakeEngine):
        raise TypeError(f"engine must be a FakeEngine, not {type(engine).__name__}")
    if not isinstance(host, str):
        raise TypeError(f"host must be a str, not {type(host).__name__}")
    if isinstance(port, bool) or not isinstance(port, int):
        raise TypeError(f"port must be an int, not {type(port).__name__}")
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be from 0 to 65535 (0: a free one), not {port}")
    try:
        import uvicorn  # optional: only serving needs it
    except ImportError as exc:  # pragma: no cover - the test extra has it
        raise ImportError("serve_engine needs uvicorn: pip install 'dscodec[testing]'") from exc
    listener = _listener(host, port)
    bound = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(engine, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the fake engine's server did not start")
            time.sleep(0.01)
        yield f"http://[{host}]:{bound}" if ":" in host else f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        listener.close()
