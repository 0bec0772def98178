"""A deadline for the request head under uvicorn, which has none of its own.

uvicorn bounds the size of a request head and closes idle keep-alive connections, but a client that opens a
connection and sends its head slowly (a byte now and then, or nothing at all) holds the connection as long as it
likes; enough of them take every connection the server allows. :func:`head_timeout_protocol` gives uvicorn an
HTTP protocol class that answers 408 and closes the connection when a request head has not arrived whole within
``timeout`` seconds: counted from the connection's start for its first request, and from the first byte of each
later one on a kept-alive connection (the time between requests is uvicorn's keep-alive timeout).

The class derives from the protocol uvicorn would pick itself (``httptools`` when installed, else ``h11``) and
uses what both keep: ``transport``, ``loop`` and ``cycle`` (the request being answered, made once its head is
read). ``dscodec serve`` runs uvicorn with it; an app served another way can pass it as ``uvicorn.run(app,
http=head_timeout_protocol(10.0))``.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["HEAD_TIMEOUT", "head_timeout_protocol"]

#: Seconds a client may take to send a request head whole.
HEAD_TIMEOUT = 30.0

_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: 34\r\n\r\nThe request head did not arrive.\r\n"
)


def head_timeout_protocol(timeout: float = HEAD_TIMEOUT) -> type[asyncio.Protocol]:
    """uvicorn's own HTTP protocol class, with a deadline of ``timeout`` seconds for each request head.

    Raises:
        TypeError, ValueError: ``timeout`` is no positive number.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if not 0 < timeout < float("inf"):
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    base: Any = AutoHTTPProtocol

    class HeadTimeoutProtocol(base):  # type: ignore[misc]
        _head_timer: asyncio.TimerHandle | None = None
        #: The request that was being answered (or None) when the timer was set: a new one means the head came.
        _before: object = None

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._start_head_timer()

        def data_received(self, data: bytes) -> None:
            if self._head_timer is None and self._awaiting_head():
                self._start_head_timer()
            super().data_received(data)
            if self._head_timer is not None and self.cycle is not self._before:
                self._stop_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_head_timer()
            super().connection_lost(exc)

        def _awaiting_head(self) -> bool:
            cycle = self.cycle
            return cycle is None or bool(getattr(cycle, "response_complete", False))

        def _start_head_timer(self) -> None:
            self._before = self.cycle
            self._head_timer = self.loop.call_later(timeout, self._head_timed_out)

        def _stop_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            transport = self.transport
            # An upgraded connection (a WebSocket) belongs to another protocol now: its head came long ago.
            if getattr(transport, "get_protocol", lambda: self)() is not self:
                return
            if self.cycle is self._before and not transport.is_closing():
                transport.write(_TIMED_OUT)
                transport.close()

    HeadTimeoutProtocol.__qualname__ = HeadTimeoutProtocol.__name__ = f"HeadTimeout{base.__name__}"
    return HeadTimeoutProtocol
