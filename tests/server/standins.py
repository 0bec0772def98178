"""Local stand-ins for vLLM and SGLang: small ASGI apps that speak each engine's documented streaming wire format.

No inference engine runs on the test machines, so the engine backends are tested against these. A stand-in
"generates" a scripted model output: it decodes the prompt ids it receives, picks the script named by a
``[script:NAME]`` tag in the prompt text (``plain`` without one), writes ``reasoning + "</think>" + output`` when
the prompt ends inside ``<think>`` (only ``output`` otherwise), tokenizes that with the test vocabulary, appends the
end-of-sentence id as a model does, and streams the ids, cut at the request's token budget. A ``[id:KEY]`` tag
names the request in the stand-in's records.

Where each field comes from (the sources ``docs/backends.md`` cites):

* vLLM, ``POST /v1/completions``: the request fields of vLLM's ``CompletionRequest``
  (``vllm/entrypoints/openai/completion/protocol.py``; "Extra parameters" of vLLM's OpenAI-compatible server
  doc); the stream as its completions server writes it (``completion/serving.py``,
  ``completion_stream_generator``): one ``data:`` event per step holding ``CompletionStreamResponse``
  (``id``, ``object: "text_completion"``, ``created``, ``model``, ``choices[{index, text, logprobs,
  finish_reason, stop_reason, token_ids, prompt_token_ids (first chunk only)}]``), then, with
  ``stream_options.include_usage``, a chunk with ``choices: []`` and ``usage`` (``prompt_tokens``,
  ``completion_tokens``, ``total_tokens``, ``prompt_tokens_details.cached_tokens`` when the server runs with
  ``--enable-prompt-tokens-details``), then ``data: [DONE]``. Logprobs with ``return_tokens_as_token_ids``:
  ``CompletionLogProbs`` (``text_offset``, ``token_logprobs``, ``tokens`` as ``token_id:<id>``,
  ``top_logprobs`` as ``{"token_id:<id>": logprob}`` with the sampled token and the top ``logprobs``). Errors:
  ``{"error": {"message", "type", "param", "code"}}`` (``ErrorResponse``), as the body of a 4xx or as a
  ``data:`` event mid-stream.
* SGLang, ``POST /generate``: the request fields of ``GenerateReqInput`` and ``SamplingParams`` (SGLang's
  "Sampling Parameters" doc, ``io_struct.py``, ``sampling/sampling_params.py``); the stream as its HTTP server
  writes it (``http_server.py``, ``generate_request``): ``data: {"text", "output_ids", "meta_info"}`` events,
  ``output_ids`` cumulative by default or deltas with incremental streaming (``tokenizer_manager.py``),
  ``meta_info`` with ``id``, ``finish_reason`` (``None`` or ``{"type": "stop", "matched"}``,
  ``{"type": "length", "length"}``, ``{"type": "abort", "message", "status_code", "err_type"}``),
  ``prompt_tokens``, ``completion_tokens``, ``cached_tokens``, and with ``return_logprob``
  ``output_token_logprobs`` (``[logprob, id, text]``) and ``output_top_logprobs``; then ``data: [DONE]``. An
  error mid-stream is ``data: {"error": {"message", ...}}``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from tests.server.conftest import VOCABULARY
from tests.server.scripts import dsml

EOS = VOCABULARY.special_id("<｜end▁of▁sentence｜>")

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Script:
    """What the stand-in model writes."""

    output: str
    reasoning: str = ""
    delay: float = 0.0  # seconds between steps
    cached_tokens: int = 0
    reject: str | None = None  # answer this 400 error message instead of generating
    busy: tuple[int, str] | None = None  # answer this status (429, 503) with this Retry-After instead
    fail_after: int | None = None  # send an error event after this many steps


WEATHER = dsml(("get_weather", {"city": "Paris"}))

SCRIPTS: dict[str, Script] = {
    "plain": Script("Hello from the engine!"),
    "reasoning": Script("The answer is 51.", reasoning="17 times 3 is 51.", cached_tokens=8),
    "tool": Script("Let me check." + WEATHER, reasoning="I should call get_weather."),
    "stop": Script("one two END three four five six seven eight nine ten " * 4, delay=0.005),
    "long": Script("word " * 300),
    "slow": Script("tick " * 400, delay=0.01),
    "json": Script('{"city": "Paris"}'),
    "required": Script(
        '<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    ),
    "reject": Script("", reject="This model's maximum context length is 16 tokens."),
    "midfail": Script("partial " * 20, fail_after=3),
    "busy": Script("", busy=(429, "1")),
    "unavailable": Script("", busy=(503, "Wed, 21 Oct 2015 07:28:00 GMT")),
}

_TAG = re.compile(r"\[(script|id):([A-Za-z0-9_-]+)\]")


@dataclass
class Run:
    """What one request made the stand-in do."""

    payload: dict[str, Any]
    script: str
    sent: int = 0  # token ids sent
    total: int = 0  # token ids the generation has
    finished: bool = False  # the stream was written to its end
    cancelled: bool = False  # the client went away first (the engine aborts the request)


@dataclass
class StandIn:
    """An engine stand-in: an ASGI app, with a record of every request."""

    kind: str  # "vllm" or "sglang"
    incremental: bool = False  # SGLang: stream output_ids as deltas
    chunk: int = 1  # token ids per step
    runs: dict[str, Run] = field(default_factory=dict)
    payloads: list[dict[str, Any]] = field(default_factory=list)

    # -- ASGI ----------------------------------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        if method == "GET" and path == "/health":
            await _respond(send, 200, b"")
            return
        if method != "POST" or path != ("/v1/completions" if self.kind == "vllm" else "/generate"):
            await _respond(send, 404, json.dumps({"error": {"message": "Not Found", "code": 404}}).encode())
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        payload = json.loads(body)
        self.payloads.append(payload)
        prompt = payload["prompt"] if self.kind == "vllm" else payload["input_ids"]
        text = VOCABULARY.full.decode(prompt, skip_special_tokens=False)
        tags = dict(reversed(_TAG.findall(text)))  # the first tag of each kind wins
        name = tags.get("script", "plain")
        script = SCRIPTS[name]
        run = Run(payload, name)
        self.runs[tags.get("id", str(len(self.runs)))] = run
        if script.busy is not None:
            status, wait = script.busy
            error = {"error": {"message": "the engine is busy", "code": status}}
            await _respond(send, status, json.dumps(error).encode(), [(b"retry-after", wait.encode())])
            return
        if script.reject is not None:
            error = {
                "error": {"message": script.reject, "type": "BadRequestError", "param": None, "code": 400}
            }
            await _respond(send, 400, json.dumps(error).encode())
            return
        thinking = text.endswith("<think>")
        written = (script.reasoning + "</think>" + script.output) if thinking else script.output
        ids = list(VOCABULARY.full.encode(written, add_special_tokens=False).ids) + [EOS]
        budget = (
            payload["max_tokens"] if self.kind == "vllm" else payload["sampling_params"]["max_new_tokens"]
        )
        finish = "stop"
        if len(ids) > budget:
            ids, finish = ids[:budget], "length"
        run.total = len(ids)
        events = (
            self._vllm(payload, prompt, ids, finish, script)
            if self.kind == "vllm"
            else self._sglang(payload, prompt, ids, finish, script)
        )
        await _stream(send, receive, events, run, script.delay)

    # -- the engines' streams ------------------------------------------------------------------------------------

    def _steps(self, ids: list[int]) -> list[list[int]]:
        return [ids[i : i + self.chunk] for i in range(0, len(ids), self.chunk)]

    def _vllm(
        self, payload: dict[str, Any], prompt: list[int], ids: list[int], finish: str, script: Script
    ) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        steps = self._steps(ids)
        for n, step in enumerate(steps):
            if script.fail_after is not None and n == script.fail_after:
                error = {
                    "error": {"message": "CUDA out of memory", "type": "InternalServerError", "code": 500}
                }
                out.append((0, _data(error)))
                break
            choice: dict[str, Any] = {
                "index": 0,
                "text": VOCABULARY.full.decode(step, skip_special_tokens=False),
                "logprobs": _vllm_logprobs(step, payload.get("logprobs")),
                "finish_reason": finish if n == len(steps) - 1 else None,
                "stop_reason": (EOS if finish == "stop" else None) if n == len(steps) - 1 else None,
                "token_ids": step,
            }
            if n == 0:
                choice["prompt_token_ids"] = prompt
            chunk = {
                "id": "cmpl-standin",
                "object": "text_completion",
                "created": int(time.time()),
                "model": "deepseek-standin",
                "choices": [choice],
            }
            out.append((len(step), _data(chunk)))
        else:
            if (payload.get("stream_options") or {}).get("include_usage"):
                usage = {
                    "prompt_tokens": len(prompt),
                    "completion_tokens": len(ids),
                    "total_tokens": len(prompt) + len(ids),
                    "prompt_tokens_details": {"cached_tokens": script.cached_tokens},
                }
                out.append(
                    (
                        0,
                        _data(
                            {
                                "id": "cmpl-standin",
                                "object": "text_completion",
                                "created": int(time.time()),
                                "model": "deepseek-standin",
                                "choices": [],
                                "usage": usage,
                            }
                        ),
                    )
                )
        out.append((0, b"data: [DONE]\n\n"))
        return out

    def _sglang(
        self, payload: dict[str, Any], prompt: list[int], ids: list[int], finish: str, script: Script
    ) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        steps = self._steps(ids)
        done: list[int] = []
        logprobs = payload.get("return_logprob")
        top = payload.get("top_logprobs_num", 0)
        for n, step in enumerate(steps):
            if script.fail_after is not None and n == script.fail_after:
                out.append((0, _data({"error": {"message": "scheduler crashed"}})))
                break
            start = len(done)
            done += step
            last = n == len(steps) - 1
            shown = step if self.incremental else list(done)
            since = start if self.incremental else 0
            meta: dict[str, Any] = {
                "id": "standin-rid",
                "finish_reason": (
                    (
                        {"type": "stop", "matched": EOS}
                        if finish == "stop"
                        else {"type": "length", "length": len(ids)}
                    )
                    if last
                    else None
                ),
                "prompt_tokens": len(prompt),
                "completion_tokens": len(done),
                "cached_tokens": script.cached_tokens,
            }
            if logprobs:
                meta["output_token_logprobs"] = [[_lp(i), t, None] for i, t in enumerate(done)][since:]
                meta["output_top_logprobs"] = [
                    [[_lp(i), t, None]]
                    + [[_lp(i) - 1.0 - k, t + 1 + k, None] for k in range(max(top - 1, 0))]
                    for i, t in enumerate(done)
                ][since:]
            event = {
                "text": VOCABULARY.full.decode(shown, skip_special_tokens=False),
                "output_ids": shown,
                "meta_info": meta,
            }
            out.append((len(step), _data(event)))
        out.append((0, b"data: [DONE]\n\n"))
        return out


def _lp(index: int) -> float:
    """A made-up log probability for the token at ``index``."""
    return -0.25 * (index % 4)


def _vllm_logprobs(step: list[int], count: int | None) -> dict[str, Any] | None:
    if count is None:
        return None
    tops = []
    for t in step:
        entry = {f"token_id:{t}": -0.5}
        entry.update({f"token_id:{t + 1 + k}": -1.5 - k for k in range(count)})
        tops.append(entry)
    return {
        "text_offset": list(range(len(step))),
        "token_logprobs": [-0.5] * len(step),
        "tokens": [f"token_id:{t}" for t in step],
        "top_logprobs": tops,
    }


def _data(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


async def _respond(send: Send, status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _stream(
    send: Send, receive: Receive, events: list[tuple[int, bytes]], run: Run, delay: float
) -> None:
    """Write the events; stop as soon as the client disconnects, as the engines abort such a request."""
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            run.cancelled = True
            group.cancel_scope.cancel()

        group.start_soon(watch)
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            for count, frame in events:
                if delay:
                    await anyio.sleep(delay)
                await send({"type": "http.response.body", "body": frame, "more_body": True})
                run.sent += count
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            run.finished = True
        except OSError:
            run.cancelled = True
        group.cancel_scope.cancel()


def wait_for(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait until ``check()`` holds (the stand-in runs in the server thread)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the stand-in")
        time.sleep(0.01)
