"""Message threads for the Messages endpoint: the server holds a conversation between turns.

A Messages request may carry ``thread`` (the anthropic SDK sends it from ``client.beta.messages.thread()`` and
from its tool runner, which uses a thread by default):

* ``{"type": "create"}``: answered as usual; then the server keeps the conversation (``system``, ``tools``,
  the messages and the reply) under the reply's ``id``;
* ``{"type": "continue", "previous_message_id": id}``: the request sends only the new messages and leaves out
  ``system`` and ``tools``; the server puts the kept conversation in front of them, as if the client had sent
  it whole, and keeps the longer conversation under the new reply's ``id``.

dscodec's converter reads one whole body, so this is done before converting, and the response is the same as
for the whole conversation sent without a thread. The refusals carry ``error.details.error_code``, by which
the SDK picks its error class and recovers (it sends the whole conversation again under a new thread):

* ``thread_not_found`` (404): no kept conversation has that id (never kept, forgotten, or its reply failed);
* ``thread_already_continued`` (400): a reply can be continued once; continue from the newest one;
* ``thread_continue_in_flight`` (400): another request is continuing from that reply right now;
* ``thread_fingerprint_mismatch`` (400): a continue sent ``system`` or ``tools`` unlike the thread's.

A thread is a chain: once a reply is continued, its conversation moves on to the new reply and the old reply's
id is only remembered as continued (apart from the kept replies, so that a long thread does not push other
threads out), so the memory of a thread grows with its messages, not with their square. The threads are kept in
memory, bounded by count and by the size of their messages' JSON (the least recently used go first; a process
that restarts forgets them, and the SDK then replays the conversation). Every method is called from worker
threads.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson

from dscodec._json import JSONDecodeError, loads
from dscodec.errors import ConversionError
from dscodec.server.store import check_bounds

__all__ = ["DEFAULT_THREAD_BYTES", "DEFAULT_THREAD_ENTRIES", "ThreadError", "ThreadTurn", "Threads"]

#: How many replies the server keeps threads under, and how many bytes of message JSON at most.
DEFAULT_THREAD_ENTRIES = 1024
DEFAULT_THREAD_BYTES = 256 * 1024 * 1024

#: The ``"thread":`` key of a JSON object, any of its letters possibly escaped (``\u0074``...).
_THREAD_KEY = re.compile(
    rb'"(?:t|\\u0074)(?:h|\\u0068)(?:r|\\u0072)(?:e|\\u0065)(?:a|\\u0061)(?:d|\\u0064)"\s*:'
)

#: The fields a thread keeps from the request that created it; a continue leaves them out.
_KEPT_FIELDS = ("system", "tools")


class ThreadError(ConversionError):
    """A ``thread`` the server cannot continue; ``details`` names the case for the client (``error_code``)."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message, param="thread")
        self.details = {"error_code": code}


class ThreadNotFound(ThreadError):
    status_code: ClassVar[int] = 404


@dataclass(eq=False)
class _Entry:
    """The conversation kept under one reply's id: its fields, its messages, its size."""

    fields: dict[str, Any]
    messages: list[Any]
    size: int
    #: The token of the turn continuing from this reply right now, if any.
    holder: object = None


@dataclass(eq=False)
class ThreadTurn:
    """A request with a ``thread``, to keep once answered: the thread's fields, the whole conversation it sent
    (the kept messages first for a continue), the size of what it added, and the reply it continues."""

    fields: dict[str, Any]
    messages: list[Any]
    added: int
    previous: str | None = None
    token: object = field(default_factory=object)
    settled: bool = False


def _size(value: Any) -> int:
    return len(orjson.dumps(value))


def _shown(message_id: str) -> str:
    """An id as an error message quotes it: a long one cut short."""
    return message_id if len(message_id) <= 80 else message_id[:77] + "..."


class Threads:
    """The kept conversations, by reply id (see the module's docstring).

    Raises:
        TypeError, ValueError: a bound that is no ``int`` or is negative.
    """

    def __init__(
        self, max_entries: int = DEFAULT_THREAD_ENTRIES, max_bytes: int = DEFAULT_THREAD_BYTES
    ) -> None:
        check_bounds(max_entries=max_entries, max_bytes=max_bytes)
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        # The ids of replies continued (their conversation moved on), as many as replies are kept, the oldest
        # forgotten first: a continue from one of them is told so (thread_already_continued).
        self._continued: OrderedDict[str, None] = OrderedDict()
        self._size = 0
        # Reentrant: a turn's finaliser takes it, and may run wherever the last reference to the turn goes.
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._entries)

    def begin(self, body: bytes, *, hold: bool = True) -> tuple[bytes | dict[str, Any], ThreadTurn | None]:
        """The body to convert (for a continue: with the thread's fields and messages) and the turn to keep
        once answered; ``body`` itself and None when it has no ``thread`` (or is not a JSON object with a list
        of messages: the converter reports that). A continue holds its reply until :meth:`finish` or
        :meth:`release` (or until the turn is dropped); without ``hold`` (counting the prompt's tokens) it
        holds nothing, and another request's continue in flight is no error.

        Raises:
            ConversionError: ``thread`` is malformed.
            ThreadError: ``thread`` names a reply that cannot be continued now.
        """
        if _THREAD_KEY.search(body) is None:  # most bodies: not parsed here
            return body, None
        try:
            # Read as the converter reads it, so that the body handed on means what the client sent.
            document = loads(body)
        except JSONDecodeError:
            return body, None
        if not isinstance(document, dict) or document.get("thread") is None:
            return body, None
        thread = document.pop("thread")
        kind = thread.get("type") if isinstance(thread, dict) else None
        messages = document.get("messages")
        if kind == "create":
            if not isinstance(messages, list):
                return document, None
            fields = {name: document[name] for name in _KEPT_FIELDS if name in document}
            return document, ThreadTurn(fields, messages, _size(fields) + _size(messages))
        if kind != "continue":
            raise ConversionError(
                "thread: expected an object with a type of 'create' or 'continue'", param="thread"
            )
        previous = thread.get("previous_message_id")
        if not isinstance(previous, str) or not previous:
            raise ConversionError(
                "thread.previous_message_id: expected the id of a previous response", param="thread"
            )
        if not isinstance(messages, list):
            return document, None
        with self._lock:
            entry = self._entries.get(previous)
            if entry is None and previous in self._continued:
                raise ThreadError(
                    f"thread: the response '{_shown(previous)}' was continued already; continue from "
                    "the thread's newest response.",
                    code="thread_already_continued",
                )
            if entry is None:
                raise ThreadNotFound(
                    f"thread: no conversation is kept for '{_shown(previous)}'; send the whole conversation "
                    "with thread {'type': 'create'} to start a new thread.",
                    code="thread_not_found",
                )
            if hold and entry.holder is not None:
                raise ThreadError(
                    f"thread: another request is continuing from '{_shown(previous)}'; wait for it and "
                    "continue from its response.",
                    code="thread_continue_in_flight",
                )
            changed = [
                name for name in _KEPT_FIELDS if name in document and document[name] != entry.fields.get(name)
            ]
            if changed:
                names = " and ".join(f"'{name}'" for name in changed)
                raise ThreadError(
                    f"thread: {names} differ from the thread's; leave them out of a continue, or send the "
                    "whole conversation with thread {'type': 'create'} to change them.",
                    code="thread_fingerprint_mismatch",
                )
            turn = ThreadTurn(dict(entry.fields), [*entry.messages, *messages], _size(messages), previous)
            if not hold:
                document.update(entry.fields)
                document["messages"] = turn.messages
                return document, None
            entry.holder = turn.token
            self._entries.move_to_end(previous)
        document.update(entry.fields)
        document["messages"] = turn.messages
        # A turn dropped without being settled (a request abandoned on any path) lets its reply go.
        weakref.finalize(turn, self._let_go, entry, turn.token)
        return document, turn

    def finish(self, turn: ThreadTurn, message_id: str, response: dict[str, Any]) -> None:
        """Keep the conversation of an answered ``turn`` (its messages and the reply ``response``) under
        ``message_id``; the reply it continued is then continued. A response that did not end (no stop reason)
        is not kept, and its turn is released."""
        content = response.get("content")
        if response.get("stop_reason") is None or not isinstance(content, list):
            self.release(turn)
            return
        reply = {"role": "assistant", "content": content}
        size = turn.added + _size(reply)
        with self._lock:
            if turn.settled:
                return
            turn.settled = True
            messages = turn.messages
            if turn.previous is not None:
                old = self._entries.get(turn.previous)
                if old is not None and old.holder is turn.token:
                    # The chain moves on: the continued reply's messages go to the new one, and its id is
                    # remembered as continued.
                    size += old.size
                    self._size -= old.size
                    old.holder = None
                    del self._entries[turn.previous]
                    self._continued[turn.previous] = None
                    while len(self._continued) > self.max_entries:
                        self._continued.popitem(last=False)
                else:  # forgotten while the turn ran (rare): the whole conversation starts the entry
                    size += _size(turn.fields) + _size(turn.messages) - turn.added
            messages.append(reply)
            if self.max_entries <= 0 or size > self.max_bytes:
                return
            self._entries[message_id] = _Entry(turn.fields, messages, size)
            self._size += size
            while len(self._entries) > self.max_entries or self._size > self.max_bytes:
                _, gone = self._entries.popitem(last=False)
                self._size -= gone.size

    def release(self, turn: ThreadTurn) -> None:
        """Let the reply ``turn`` continues be continued again (its request failed); nothing is kept."""
        with self._lock:
            if turn.settled:
                return
            turn.settled = True
            entry = self._entries.get(turn.previous) if turn.previous is not None else None
            if entry is not None and entry.holder is turn.token:
                entry.holder = None

    def _let_go(self, entry: _Entry, token: object) -> None:
        """The finaliser of a continue's turn: its reply is free again if the turn still holds it."""
        with self._lock:
            if entry.holder is token:
                entry.holder = None
