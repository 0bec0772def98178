"""The Responses endpoints that read stored responses back: retrieve, delete, cancel, and list input items.

* ``GET /v1/responses/{id}``: the response object as it was served (the complete response, or for a stream the
  one of its last event);
* ``DELETE /v1/responses/{id}``: ``{"id", "object": "response", "deleted": true}``; a follow-up naming it is a 404;
* ``POST /v1/responses/{id}/cancel``: a 400 for a stored response, since only background responses can be
  cancelled and this server runs none;
* ``GET /v1/responses/{id}/input_items``: the input items the response answered (earlier turns' items first, as
  the model saw them), as a cursor page (``after``, ``limit`` 1 to 100, default 20, ``order`` ``asc`` or
  ``desc``, default ``desc``). Items are written in the shape of the API's items: a message's text content becomes
  a list of one text part, and an item without a ``status`` gets one. An input item without an ``id`` gets one
  when its response is stored (:func:`identified`, made from the response's id), and keeps it in the responses
  that continue that one.

They need a :class:`~dscodec.server.store.RetrievableStore`; with another store (given as None), every id is
unknown (a 404). The store is called in a worker thread. Errors are in the OpenAI shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import anyio
import orjson
from starlette.requests import Request
from starlette.responses import Response

from dscodec.errors import ConversionError
from dscodec.server._http import error_response
from dscodec.server.store import ResponseNotFound, RetrievableStore

__all__ = ["StoredResponses", "identified", "input_item_page"]

#: The most input items one page lists, and how many when the client does not say.
MAX_PAGE = 100
DEFAULT_PAGE = 20

#: The id prefix of an input item that came without an id, by item type.
_PREFIXES = {
    "message": "msg",
    "function_call": "fc",
    "function_call_output": "fco",
    "custom_tool_call": "ctc",
    "custom_tool_call_output": "ctco",
    "reasoning": "rs",
}


class _NotCancellable(ConversionError):
    """A cancel request for a response that is not a background one."""

    status_code: ClassVar[int] = 400


def _json(content: Any) -> Response:
    return Response(orjson.dumps(content), media_type="application/json")


def _not_found(response_id: str) -> ResponseNotFound:
    return ResponseNotFound(f"Response with id '{response_id}' not found.", param="response_id")


class StoredResponses:
    """The handlers, over one store."""

    def __init__(self, store: RetrievableStore | None) -> None:
        self.store = store

    async def _response(self, response_id: str) -> Mapping[str, Any] | None:
        store = self.store
        if store is None:
            return None
        response: Mapping[str, Any] | None = await anyio.to_thread.run_sync(
            lambda: store.get_response(response_id)
        )
        return response

    async def retrieve(self, http: Request) -> Response:
        """``GET /v1/responses/{id}``."""
        response_id = str(http.path_params["response_id"])
        if http.query_params.get("stream", "false").lower() not in ("false", "0", ""):
            error = ConversionError(
                "Streaming a stored response is not supported by this server; retrieve it without 'stream'.",
                param="stream",
            )
            return error_response("responses", error)
        response = await self._response(response_id)
        if response is None:
            return error_response("responses", _not_found(response_id))
        return _json(response)

    async def delete(self, http: Request) -> Response:
        """``DELETE /v1/responses/{id}``."""
        response_id = str(http.path_params["response_id"])
        store = self.store
        if store is None or not await anyio.to_thread.run_sync(lambda: store.delete(response_id)):
            return error_response("responses", _not_found(response_id))
        return _json({"id": response_id, "object": "response", "deleted": True})

    async def cancel(self, http: Request) -> Response:
        """``POST /v1/responses/{id}/cancel``: no response here runs in the background."""
        response_id = str(http.path_params["response_id"])
        if await self._response(response_id) is None:
            return error_response("responses", _not_found(response_id))
        error = _NotCancellable(
            f"Response '{response_id}' cannot be cancelled: only background responses can be, and this server "
            "answers every request in the foreground.",
            param="response_id",
        )
        return error_response("responses", error)

    async def input_items(self, http: Request) -> Response:
        """``GET /v1/responses/{id}/input_items``."""
        response_id = str(http.path_params["response_id"])
        try:
            after, limit, order = _page_query(http.query_params)
        except ConversionError as exc:
            return error_response("responses", exc)
        store = self.store
        if store is None:
            return error_response("responses", _not_found(response_id))

        def read() -> tuple[Sequence[Any] | None, Mapping[str, Any] | None]:
            return store.get(response_id), store.get_response(response_id)

        items, response = await anyio.to_thread.run_sync(read)
        if items is None or response is None:
            return error_response("responses", _not_found(response_id))
        try:
            page = input_item_page(response_id, items, response, after=after, limit=limit, order=order)
        except ConversionError as exc:
            return error_response("responses", exc)
        return _json(page)


def _page_query(query: Mapping[str, str]) -> tuple[str | None, int, str]:
    """``after``, ``limit`` and ``order`` of a list request, checked."""
    text = query.get("limit")
    limit = DEFAULT_PAGE
    if text is not None:
        digits = text.removeprefix("-")
        # ASCII digits only: int() would also take "٣", " 5", "1_0" and "+5" (and refuse thousands of digits).
        if not (digits.isascii() and digits.isdigit()):
            raise ConversionError(
                f"Invalid 'limit': expected an integer, but got '{text[:100]}' instead.", param="limit"
            )
        limit = int(text) if len(digits.lstrip("0")) <= 3 else MAX_PAGE + 1  # far past the page size
        if not 1 <= limit <= MAX_PAGE:
            raise ConversionError(
                f"Invalid 'limit': expected a value from 1 to {MAX_PAGE}, but got {text[:100]} instead.",
                param="limit",
            )
    order = query.get("order", "desc")
    if order not in ("asc", "desc"):
        raise ConversionError(
            f"Invalid value for 'order': '{order}'. Supported values are: 'asc' and 'desc'.", param="order"
        )
    return query.get("after"), limit, order


def input_item_page(
    response_id: str,
    items: Sequence[Any],
    response: Mapping[str, Any],
    *,
    after: str | None = None,
    limit: int = DEFAULT_PAGE,
    order: str = "desc",
) -> dict[str, Any]:
    """One page of the input items of a stored response (``items`` are its stored input and output items).

    Raises:
        ConversionError: ``after`` names no input item of the response.
    """
    output = response.get("output")
    count = max(len(items) - (len(output) if isinstance(output, list) else 0), 0)
    indices = range(count - 1, -1, -1) if order == "desc" else range(count)
    start = 0
    if after is not None:
        for k, index in enumerate(indices):
            if _item_id(items[index], response_id, index) == after:
                start = k + 1
                break
        else:
            raise ConversionError(
                f"Invalid 'after': no input item with id '{after}' in response '{response_id}'.",
                param="after",
            )
    # Only the page's items are rewritten; the others are only looked at for their id.
    data = [_input_item(items[index], response_id, index) for index in indices[start : start + limit]]
    return {
        "object": "list",
        "data": data,
        "first_id": _item_id(data[0], response_id, -1) if data else None,
        "last_id": _item_id(data[-1], response_id, -1) if data else None,
        "has_more": start + limit < count,
    }


def _kind(item: dict[str, Any]) -> Any:
    """An item's type (a message may leave it out)."""
    kind = item.get("type")
    return "message" if kind is None and "role" in item else kind


def identified(response_id: str, items: Sequence[Any]) -> list[Any]:
    """The input items of a response to store, each item of a known type without an ``id`` given one made from
    the response's (the converter reads past ``id``), so that an item keeps its id in the responses that continue
    this one. An id met again (an item a reference brought in once more) is the first one's: the later copy gets
    an id of its own the same way, so that every id names one item (a page's ``after`` cursor needs it)."""
    out = list(items)
    seen: set[str] = set()
    for k, item in enumerate(out):
        if not isinstance(item, dict):
            continue
        own = item.get("id")
        if isinstance(own, str) and own not in seen:
            seen.add(own)
            continue
        kind = _kind(item)
        if isinstance(own, str) or (isinstance(kind, str) and kind in _PREFIXES):
            prefix = _PREFIXES.get(kind, "item") if isinstance(kind, str) else "item"
            made = f"{prefix}_{response_id}_in{k}"
            out[k] = {**item, "id": made}
            seen.add(made)
    return out


def _item_id(item: Any, response_id: str, index: int) -> Any:
    """The id an input item is listed with: its own, or one made from its place."""
    if isinstance(item, dict):
        own = item.get("id")
        if isinstance(own, str):
            return own
        return f"item_{response_id}_in{index}"
    return None


def _input_item(item: Any, response_id: str, index: int) -> Any:
    """An input item as the API lists it: a message's text content as one text part; an id and a status added
    where missing. Anything that is not an item object is listed as it is."""
    if not isinstance(item, dict):
        return item
    out = dict(item)
    if _kind(out) == "message":
        out["type"] = "message"
        if isinstance(out.get("content"), str):
            if out.get("role") == "assistant":
                out["content"] = [{"type": "output_text", "text": out["content"], "annotations": []}]
            else:
                out["content"] = [{"type": "input_text", "text": out["content"]}]
    out["id"] = _item_id(item, response_id, index)
    out.setdefault("status", "completed")
    return out
