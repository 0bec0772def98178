"""Stored Responses turns: ``store`` and ``previous_response_id`` for the OpenAI Responses endpoint.

The OpenAI Responses API keeps each response (``store`` defaults to true) so that a follow-up request can name it
in ``previous_response_id`` instead of sending the conversation again: the earlier turn's input items and output
items then come before the new input. dscodec's converter reads one request body, so the server does this before
converting: it keeps, for every stored response, the request's full input items followed by the response's output
items, and a follow-up request gets those items put in front of its own ``input``. The earlier ``instructions``
are not carried over (as in the OpenAI API, the new request's own apply).

A store is anything with ``get`` and ``put`` (:class:`ResponseStore`). One that also keeps the response objects
(:class:`RetrievableStore`: ``put`` takes the response too, ``get_response`` and ``delete``) serves the endpoints
that read stored responses back: ``GET`` and ``DELETE /v1/responses/{id}`` and its input items. One that finds a
stored item by its id (:class:`ItemStore`: ``get_item``) resolves the ``item_reference`` input items of a request;
with another store such an item is an unknown id (a 404). :class:`MemoryResponseStore`, the default, is all three;
it keeps the most recently used entries in memory, bounded by count and by size. Every method is called from worker
threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeGuard

import orjson

from dscodec._json import JSONDecodeError, loads
from dscodec.errors import ConversionError, shown

__all__ = [
    "DEFAULT_STORE_BYTES",
    "DEFAULT_STORE_ENTRIES",
    "ItemStore",
    "MemoryResponseStore",
    "ResponseNotFound",
    "ResponseStore",
    "RetrievableStore",
    "Turn",
    "begin_turn",
]

#: How many responses the default store keeps, and how many bytes of JSON items at most.
DEFAULT_STORE_ENTRIES = 1024
DEFAULT_STORE_BYTES = 256 * 1024 * 1024


class ResponseNotFound(ConversionError):
    """A ``previous_response_id`` the store does not have (never stored, or evicted): a 404."""

    status_code: ClassVar[int] = 404


class ResponseStore(Protocol):
    """Where the server keeps the items of stored responses, by response id."""

    def get(self, response_id: str) -> Sequence[Any] | None:
        """The items stored for ``response_id`` (input items, then output items), or None."""
        ...

    def put(self, response_id: str, items: Sequence[Any]) -> None:
        """Keep ``items`` (JSON values) for ``response_id``."""
        ...


class RetrievableStore(ResponseStore, Protocol):
    """A store that also keeps each response object, so that clients can read it back."""

    def put(self, response_id: str, items: Sequence[Any], response: Mapping[str, Any] | None = None) -> None:
        """Keep ``items`` (JSON values) for ``response_id``, and the response object when given."""
        ...

    def get_response(self, response_id: str) -> Mapping[str, Any] | None:
        """The response object stored for ``response_id``, or None (not stored, or stored without it)."""
        ...

    def delete(self, response_id: str) -> bool:
        """Forget ``response_id``; False when it was not stored."""
        ...


class ItemStore(ResponseStore, Protocol):
    """A store that also finds a stored item by its ``id``, for the ``item_reference`` input items."""

    def get_item(self, item_id: str) -> Mapping[str, Any] | None:
        """The item with ``item_id`` among the items of the stored responses, or None."""
        ...


def finds_items(store: ResponseStore) -> TypeGuard[ItemStore]:
    """Whether ``store`` finds stored items by id (it has ``get_item``)."""
    return callable(getattr(store, "get_item", None))


def is_retrievable(store: ResponseStore) -> TypeGuard[RetrievableStore]:
    """Whether ``store`` keeps response objects (it has ``get_response`` and ``delete``)."""
    return callable(getattr(store, "get_response", None)) and callable(getattr(store, "delete", None))


def check_bounds(**bounds: object) -> None:
    """Each bound of an in-memory store an ``int`` of 0 or more.

    Raises:
        TypeError, ValueError: naming the bound.
    """
    for name, value in bounds.items():
        if type(value) is not int:
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if value < 0:
            raise ValueError(f"{name} must be 0 or more, not {shown(value)}")


class MemoryResponseStore:
    """A bounded in-memory store (a :class:`RetrievableStore` and an :class:`ItemStore`): the least recently used
    entries go first once there are more than ``max_entries`` or their JSON is larger than ``max_bytes`` in total
    (``max_entries=0`` keeps nothing). An item is found by id while some stored entry holds it.

    Raises:
        TypeError, ValueError: a bound that is no ``int`` or is negative.

    Examples:
        >>> store = MemoryResponseStore(max_entries=1)
        >>> store.put("resp_1", [{"role": "user", "content": "Hi"}])
        >>> store.put("resp_2", [], {"id": "resp_2", "output": []})
        >>> store.get("resp_1") is None, store.get("resp_2"), store.get_response("resp_2")
        (True, [], {'id': 'resp_2', 'output': []})
        >>> store.delete("resp_2"), store.get("resp_2"), store.delete("resp_2")
        (True, None, False)
        >>> store.put("resp_3", [{"type": "message", "id": "msg_1", "role": "user", "content": "Hi"}])
        >>> store.get_item("msg_1")
        {'type': 'message', 'id': 'msg_1', 'role': 'user', 'content': 'Hi'}
    """

    def __init__(
        self, max_entries: int = DEFAULT_STORE_ENTRIES, max_bytes: int = DEFAULT_STORE_BYTES
    ) -> None:
        check_bounds(max_entries=max_entries, max_bytes=max_bytes)
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        #: Per response id: the items' JSON (one array), the response object's (empty when it was not given), and
        #: where the item of each id is in that array (the first of an id).
        self._entries: OrderedDict[str, tuple[bytes, bytes, dict[str, tuple[int, int]]]] = OrderedDict()
        #: Per item id: the response ids whose entries hold it, oldest first (a dict as an ordered set).
        self._owners: dict[str, dict[str, None]] = {}
        self._size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, response_id: str) -> list[Any] | None:
        entry = self._read(response_id)
        if entry is None:
            return None
        items: list[Any] = orjson.loads(entry[0])
        return items

    def get_response(self, response_id: str) -> dict[str, Any] | None:
        entry = self._read(response_id)
        if entry is None or not entry[1]:
            return None
        response: dict[str, Any] = orjson.loads(entry[1])
        return response

    def get_item(self, item_id: str) -> dict[str, Any] | None:
        with self._lock:
            owners = self._owners.get(item_id)
            if not owners:
                return None
            response_id = next(reversed(owners))  # the newest entry that holds it
            data, _, positions = self._entries[response_id]
            self._entries.move_to_end(response_id)
        start, end = positions[item_id]
        item: dict[str, Any] = orjson.loads(data[start:end])
        return item

    def _read(self, response_id: str) -> tuple[bytes, bytes, dict[str, tuple[int, int]]] | None:
        with self._lock:
            entry = self._entries.get(response_id)
            if entry is not None:
                self._entries.move_to_end(response_id)
            return entry

    def put(self, response_id: str, items: Sequence[Any], response: Mapping[str, Any] | None = None) -> None:
        data, positions = _indexed(items)
        kept = orjson.dumps(dict(response)) if response is not None else b""
        size = _entry_size(data, kept, positions)
        if self.max_entries <= 0 or size > self.max_bytes:
            return
        with self._lock:
            self._forget(response_id)
            self._entries[response_id] = (data, kept, positions)
            for item_id in positions:
                self._owners.setdefault(item_id, {})[response_id] = None
            self._size += size
            while len(self._entries) > self.max_entries or self._size > self.max_bytes:
                self._forget(next(iter(self._entries)))

    def delete(self, response_id: str) -> bool:
        with self._lock:
            return self._forget(response_id)

    def _forget(self, response_id: str) -> bool:
        old = self._entries.pop(response_id, None)
        if old is None:
            return False
        data, response_json, positions = old
        self._size -= _entry_size(data, response_json, positions)
        for item_id in positions:
            owners = self._owners.get(item_id)
            if owners is not None:
                owners.pop(response_id, None)
                if not owners:
                    del self._owners[item_id]
        return True


#: What the index of one item id costs in memory, about (its entries in two dicts), on top of the id's length.
_INDEX_COST = 200


def _indexed(items: Sequence[Any]) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """The items as one JSON array, and where in it the first item of each string ``id`` is (its bytes)."""
    # Each part copied at once to a bytes object of its own length: orjson's own holds a buffer of some kilobytes,
    # so a list of them would take far more memory than the JSON, and keep it after they are freed.
    parts = [bytes(memoryview(orjson.dumps(item))) for item in items]
    positions: dict[str, tuple[int, int]] = {}
    at = 1  # after "["
    for item, part in zip(items, parts):
        item_id = item.get("id") if isinstance(item, Mapping) else None
        if isinstance(item_id, str) and item_id not in positions:
            positions[item_id] = (at, at + len(part))
        at += len(part) + 1  # the part and its comma
    return b"[" + b",".join(parts) + b"]", positions


def _entry_size(data: bytes, response: bytes, positions: Mapping[str, tuple[int, int]]) -> int:
    """The memory an entry is counted for: its JSON, and its part of the item index."""
    return len(data) + len(response) + sum(len(item_id) + _INDEX_COST for item_id in positions)


@dataclass(frozen=True, slots=True)
class Turn:
    """A Responses request to remember once answered: its full input items (earlier turns first)."""

    items: list[Any]


def _input_items(value: object) -> list[Any] | None:
    """The ``input`` as a list of items: a string is one user message; None when it is neither (the converter
    then reports it)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if isinstance(value, list):
        return value
    return None


class ReferencesTooLarge(ConversionError):
    """The items a request's ``item_reference`` items name are more than the server takes in one request: a 413."""

    status_code: ClassVar[int] = 413


def _is_reference(item: object) -> bool:
    """Whether an input item is an item reference: ``{"type": "item_reference", "id": …}``, or the SDK's shape
    with no type (``{"id": …}``, which no other item has)."""
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    if kind == "item_reference":
        return True
    return kind is None and "id" in item and item.keys() <= {"id", "type"}


def _resolve_references(
    items: list[Any], store: ResponseStore, *, held: int = 0, limit: int | None = None
) -> list[Any]:
    """``items`` with each item reference replaced by the stored item of that id; ``items`` itself when it holds
    none. ``held`` items come before the client's own (a stored turn's), for the paths errors name; the stored
    items brought in may hold at most ``limit`` bytes of JSON in all (each reference counts).

    Raises:
        ResponseNotFound: a reference names an item no stored response holds (or the store finds no items).
        ConversionError: a reference whose ``id`` is no string.
        ReferencesTooLarge: the items referenced are more than ``limit`` bytes.
    """
    resolved: list[Any] | None = None
    brought = 0
    for index, item in enumerate(items):
        if not _is_reference(item):
            continue
        item_id = item.get("id")
        if not isinstance(item_id, str):
            where = f"input[{index - held}].id" if index >= held else f"input[{index}].id"
            raise ConversionError(
                f"Invalid type for '{where}': expected a string, but got {_json_kind(item_id)} instead.",
                param=where,
            )
        found = store.get_item(item_id) if finds_items(store) else None
        if found is None or not isinstance(found, Mapping) or _is_reference(found):
            raise ResponseNotFound(f"Item with id '{_shown_id(item_id)}' not found.", param="input")
        if limit is not None:
            brought += len(orjson.dumps(found))
            if brought > limit:
                raise ReferencesTooLarge(
                    f"The items this request's item_reference items name hold more than this server takes in one "
                    f"request ({limit} bytes).",
                    param="input",
                )
        if resolved is None:
            resolved = list(items)
        resolved[index] = dict(found)
    return items if resolved is None else resolved


def _json_kind(value: object) -> str:
    """How an error message names the JSON type of ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return "a value"


def _shown_id(item_id: str) -> str:
    """An id as an error message quotes it: cut short past 100 characters."""
    return item_id if len(item_id) <= 100 else item_id[:100] + "…"


def _keeps_nothing(store: ResponseStore) -> bool:
    """Whether ``store`` is one that storing is turned off in (a :class:`MemoryResponseStore` of no entries)."""
    return isinstance(store, MemoryResponseStore) and store.max_entries <= 0


def begin_turn(
    body: bytes, store: ResponseStore, *, limit: int | None = None
) -> tuple[bytes, Turn | None, str | None]:
    """The body to convert (with the earlier turn's items in front of its input when it names a
    ``previous_response_id``, and each ``item_reference`` input item replaced by the stored item it names), the turn to store once answered (None when ``store`` is false, the store keeps
    nothing, or the body is not one the converter will take; it reports that itself), and the
    ``previous_response_id`` it continues.

    Raises:
        ResponseNotFound: ``previous_response_id`` names no stored response, or an ``item_reference`` no stored
            item.
        ReferencesTooLarge: the ``item_reference`` items name more than ``limit`` bytes of stored items.
        ConversionError: ``previous_response_id`` is not a string, or ``store`` is no boolean (nor null).
    """
    try:
        # Read as the converter reads it (a "-0" stays the float -0.0, which orjson alone would make the integer 0),
        # so that the body written again below means what the client sent.
        document = loads(body)
    except JSONDecodeError:
        return body, None, None
    if not isinstance(document, dict):
        return body, None, None
    items = _input_items(document.get("input", []))
    held = 0
    previous = document.get("previous_response_id")
    if previous is not None:
        if not isinstance(previous, str):
            raise ConversionError(
                f"Invalid type for 'previous_response_id': expected a string, got {type(previous).__name__}.",
                param="previous_response_id",
            )
        earlier = store.get(previous)
        if earlier is None:
            raise ResponseNotFound(
                f"Previous response with id '{_shown_id(previous)}' not found.", param="previous_response_id"
            )
        if items is None:
            return body, None, None
        held = len(earlier)
        items = [*earlier, *items]
        document["input"] = items
        del document["previous_response_id"]
        body = orjson.dumps(document)
    if items is None:
        return body, None, previous
    resolved = _resolve_references(items, store, held=held, limit=limit)
    if resolved is not items:
        items = document["input"] = resolved
        body = orjson.dumps(document)
    keep = document.get("store", True)
    if keep is not None and not isinstance(keep, bool):
        # The codec passes over the field (as the reference does); here it decides what is kept, so a value that
        # is no boolean is refused rather than read as true.
        raise ConversionError(
            f"Invalid type for 'store': expected a boolean, got {type(keep).__name__}.", param="store"
        )
    if keep is False or _keeps_nothing(store):
        return body, None, previous
    return body, Turn(items), previous
