"""The endpoints clients call besides generation: the model list, the prompt token count, and a health check.

* ``GET /v1/models`` (and ``GET /v1/models/{id}``): the served model names, in the OpenAI list shape, or in
  Anthropic's when the request carries the ``anthropic-version`` header the Anthropic SDK sends;
* ``POST /v1/messages/count_tokens``: Anthropic's ``{"input_tokens": N}``, the exact length of the prompt the
  request renders to (converted, rendered and encoded as a generation request is), and its Responses
  counterpart ``POST /v1/responses/input_tokens`` (``{"object": "response.input_tokens", "input_tokens": N}``);
* ``GET /health``: ``{"status": "ok"}``, or a 503 when the backend has a ``health()`` check and it fails.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import orjson
from starlette.requests import Request
from starlette.responses import Response

from dscodec.errors import DscodecError
from dscodec.server._http import error_response, from_anthropic_sdk

__all__ = ["HEALTH_TIMEOUT", "Catalog", "count_tokens_response", "health_response", "input_tokens_response"]

logger = logging.getLogger("dscodec.server")

#: Seconds a backend's health check may take.
HEALTH_TIMEOUT = 5.0


def _json(content: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(content), status_code=status, media_type="application/json")


class _ModelNotFound(DscodecError):
    status_code = 404
    error_type = "invalid_request_error"


class Catalog:
    """The served model names, as each SDK lists them."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(dict.fromkeys(names))
        self.created = int(time.time())

    def _openai(self, name: str) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": self.created, "owned_by": "dscodec"}

    def _anthropic(self, name: str) -> dict[str, Any]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created))
        return {"type": "model", "id": name, "display_name": name, "created_at": stamp}

    async def list(self, http: Request) -> Response:
        """``GET /v1/models``."""
        if from_anthropic_sdk(http.scope):
            data = [self._anthropic(name) for name in self.names]
            first, last = (self.names[0], self.names[-1]) if self.names else (None, None)
            return _json({"data": data, "has_more": False, "first_id": first, "last_id": last})
        return _json({"object": "list", "data": [self._openai(name) for name in self.names]})

    async def get(self, http: Request) -> Response:
        """``GET /v1/models/{model}``: one model, or a 404 in the shape of the SDK that asked."""
        name = str(http.path_params["model"])
        anthropic = from_anthropic_sdk(http.scope)
        if name not in self.names:
            error = _ModelNotFound(f"The model '{name}' does not exist.", param="model")
            return error_response("messages" if anthropic else "chat_completions", error)
        return _json(self._anthropic(name) if anthropic else self._openai(name))


def count_tokens_response(count: int) -> Response:
    """Anthropic's count-tokens answer."""
    return _json({"input_tokens": count})


def input_tokens_response(count: int) -> Response:
    """OpenAI's input-token count answer (Responses)."""
    return _json({"object": "response.input_tokens", "input_tokens": count})


async def health_response(check: Callable[[], Awaitable[None]] | None) -> Response:
    """``GET /health``: ok, or 503 with the reason when the backend's own check fails."""
    if check is not None:
        try:
            with anyio.fail_after(HEALTH_TIMEOUT):
                await check()
        except TimeoutError:
            return _json({"status": "unavailable", "error": "the backend health check timed out"}, 503)
        except Exception as exc:  # noqa: BLE001 - any failure of the check means not healthy
            logger.warning("the backend health check failed: %s", exc)
            return _json({"status": "unavailable", "error": str(exc)}, 503)
    return _json({"status": "ok"})
