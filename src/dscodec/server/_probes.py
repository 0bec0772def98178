"""The endpoints clients call besides generation: the model list, the prompt token count, and a health check.

* ``GET /v1/models`` (and ``GET /v1/models/{id}``): the served model names, in the OpenAI list shape, or in
  Anthropic's when the request carries the ``anthropic-version`` header the Anthropic SDK sends (paged as
  Anthropic pages: ``limit``, ``after_id`` or ``before_id``, and the ``lifecycle[]`` filter);
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

from dscodec.errors import ConversionError, DscodecError, shown
from dscodec.server._http import error_response, from_anthropic_sdk

__all__ = ["HEALTH_TIMEOUT", "Catalog", "count_tokens_response", "health_response", "input_tokens_response"]

logger = logging.getLogger("dscodec.server")

#: Seconds a backend's health check may take.
HEALTH_TIMEOUT = 5.0


def _json(content: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(content), status_code=status, media_type="application/json")


#: Anthropic's model list: models a page holds by default, and at most.
DEFAULT_MODEL_PAGE = 20
MAX_MODEL_PAGE = 1000
#: The lifecycle stages Anthropic's model list filters by (every model served here is ``active``).
_LIFECYCLES = ("active", "deprecated", "retired")


class _ModelNotFound(DscodecError):
    status_code = 404
    error_type = "invalid_request_error"
    error_code = "model_not_found"


class Catalog:
    """The served model names, as each SDK lists them.

    Args:
        names: the served names, in the order they are listed.
        context_limit: the context window in tokens (Anthropic's ``max_input_tokens``), or None.
    """

    def __init__(self, names: Sequence[str], *, context_limit: int | None = None) -> None:
        self.names = list(dict.fromkeys(names))
        self.created = int(time.time())
        self.context_limit = context_limit

    def _openai(self, name: str) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": self.created, "owned_by": "dscodec"}

    def _anthropic(self, name: str) -> dict[str, Any]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created))
        model: dict[str, Any] = {
            "type": "model",
            "id": name,
            "display_name": name,
            "created_at": stamp,
            "lifecycle": "active",
        }
        if self.context_limit is not None:
            model["max_input_tokens"] = self.context_limit
        return model

    async def list(self, http: Request) -> Response:
        """``GET /v1/models``."""
        if from_anthropic_sdk(http.scope):
            try:
                return _json(self._anthropic_page(http))
            except DscodecError as exc:
                return error_response("messages", exc)
        return _json({"object": "list", "data": [self._openai(name) for name in self.names]})

    def _anthropic_page(self, http: Request) -> dict[str, Any]:
        """One page of Anthropic's model list: ``limit`` models after ``after_id``, or the ``limit`` models just
        before ``before_id`` (not both), of the stages ``lifecycle[]`` names (default: active and deprecated).

        Raises:
            ConversionError: a query value out of its bounds, or a cursor that names no listed model.
        """
        query = http.query_params
        limit = _page_limit(query.get("limit"))
        stages = query.getlist("lifecycle[]") + query.getlist("lifecycle")
        for stage in stages:
            if stage not in _LIFECYCLES:
                raise ConversionError(
                    f"lifecycle: unknown stage {shown(stage, 100)}; the stages are 'active', 'deprecated' and "
                    "'retired'.",
                    param="lifecycle",
                )
        names = self.names if not stages or "active" in stages else []
        after, before = query.get("after_id"), query.get("before_id")
        if after is not None and before is not None:
            raise ConversionError("after_id and before_id cannot both be given.", param="after_id")
        if before is not None:
            end = _cursor(names, before, "before_id")
            start = max(end - limit, 0)
            more = start > 0
        else:
            start = 0 if after is None else _cursor(names, after, "after_id") + 1
            end = start + limit
            more = end < len(names)
        page = names[start:end]
        return {
            "data": [self._anthropic(name) for name in page],
            "has_more": more,
            "first_id": page[0] if page else None,
            "last_id": page[-1] if page else None,
        }

    async def get(self, http: Request) -> Response:
        """``GET /v1/models/{model}``: one model, or a 404 in the shape of the SDK that asked."""
        name = str(http.path_params["model"])
        anthropic = from_anthropic_sdk(http.scope)
        if name not in self.names:
            error = _ModelNotFound(f"The model '{name}' does not exist.", param="model")
            return error_response("messages" if anthropic else "chat_completions", error)
        return _json(self._anthropic(name) if anthropic else self._openai(name))


def _page_limit(text: str | None) -> int:
    """Anthropic's ``limit`` query value: 1 to :data:`MAX_MODEL_PAGE` (default :data:`DEFAULT_MODEL_PAGE`)."""
    if text is None:
        return DEFAULT_MODEL_PAGE
    # ASCII digits only: int() would also take "٣", " 5", "1_0" and "+5" (and refuse thousands of digits).
    if (
        not (text.isascii() and text.isdigit())
        or len(text.lstrip("0")) > 4
        or not 1 <= int(text) <= MAX_MODEL_PAGE
    ):
        raise ConversionError(
            f"limit: expected an integer from 1 to {MAX_MODEL_PAGE}, got {shown(text, 100)}.", param="limit"
        )
    return int(text)


def _cursor(names: Sequence[str], name: str, key: str) -> int:
    """Where the model a cursor (``after_id``, ``before_id``) names is in the list."""
    try:
        return names.index(name)
    except ValueError:
        raise ConversionError(f"{key}: no listed model is named {shown(name, 200)}.", param=key) from None


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
