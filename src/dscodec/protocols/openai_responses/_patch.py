"""The ``input`` of an ``apply_patch`` custom tool call, decoded from its streamed JSON arguments."""

from __future__ import annotations

import json
import re
from typing import Final

__all__ = ["PatchInput"]

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class PatchInput:
    """Turns an ``apply_patch`` call's streamed JSON arguments into the custom call's ``input``.

    The reference's rule, observed from outside: when the arguments open with a parameter named ``input`` whose
    value is a JSON string (``string="true"``, or a ``string="false"`` value that is a JSON string), ``input`` is
    that string, decoded, and whatever follows it is dropped; otherwise it is the whole arguments JSON text
    (``{"patch": "x", "input": 1}``; ``{}`` without parameters). So ``input`` followed by other parameters still
    gives the raw ``input`` (docs/golden-streams.md says "exactly that one string parameter"; black-box runs of
    the reference show the first-parameter rule). Working on the arguments text rather than
    :attr:`ToolCallDelta.raw` covers ``string="false"`` JSON strings too. The opening ``{"input": "`` is held
    back until the arguments either complete it or depart from it, so every fragment is sent once and never
    retracted, whatever the chunking. JSON white space between the key and a ``string="false"`` value's opening
    quote (``{"input":  "abc"}``) is skipped, as the reference reads the value as JSON.
    """

    __slots__ = ("_held", "_mode", "_pending", "_spaces")

    _PREFIX: Final = '{"input": '
    _HOLD, _STRING, _JSON, _AFTER = range(4)

    def __init__(self) -> None:
        self._mode = self._HOLD
        self._held = ""
        # The white space held after the whole prefix (pieces, joined only if the value proves no string); None
        # while the prefix is not complete.
        self._spaces: list[str] | None = None
        self._pending = ""  # a cut escape sequence of the string value

    def feed(self, text: str) -> str:
        """The input text that the arguments fragment ``text`` adds ("" when nothing is ready)."""
        mode = self._mode
        if mode == self._JSON:
            return text
        if mode == self._STRING:
            return self._decode(text)
        if mode == self._AFTER:
            return ""
        if self._spaces is not None:
            return self._after_key(text)
        held = self._held + text  # at most the prefix's length before ``text``
        prefix = self._PREFIX
        if held.startswith(prefix):
            self._held, self._spaces = prefix, []
            return self._after_key(held[len(prefix) :])
        if prefix.startswith(held):
            self._held = held
            return ""
        self._mode, self._held = self._JSON, ""
        return held

    def _after_key(self, text: str) -> str:
        """``text`` after the whole prefix and the white space held so far: more white space (held), the value's
        opening quote (the string is decoded from there on), or another value (all of it goes out as JSON)."""
        value = text.lstrip(" \t\n\r")
        spaces = self._spaces
        assert spaces is not None
        if not value:
            spaces.append(text)
            return ""
        if value[0] == '"':
            self._mode, self._held, self._spaces = self._STRING, "", None
            return self._decode(value[1:])
        held = self._held + "".join(spaces) + text
        self._mode, self._held, self._spaces = self._JSON, "", None
        return held

    def flush(self) -> str:
        """At the end of the call: text still held back (arguments that stopped inside the opening)."""
        held = self._held + "".join(self._spaces or ())
        self._held, self._spaces = "", None
        return held if self._mode == self._HOLD else ""

    def _decode(self, text: str) -> str:
        body = self._pending + text if self._pending else text
        end, closed = _string_prefix(body)
        self._pending = "" if closed else body[end:]
        if closed:
            self._mode = self._AFTER
        piece = body[:end]
        if "\\" not in piece:
            return piece
        try:
            decoded: str = json.loads('"' + piece + '"', strict=False)
        except ValueError:  # not reachable with the machine's valid JSON arguments (D8); keep the text
            return piece
        if "\\u" in piece and _LONE_SURROGATE.search(decoded):
            # ``"\ud83d"`` alone is valid JSON but no text: it cannot be sent as UTF-8.
            decoded = _LONE_SURROGATE.sub("\ufffd", decoded)
        return decoded


def _string_prefix(body: str) -> tuple[int, bool]:
    """Where the decodable part of a JSON string body ends, and whether the closing quote is there."""
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == '"':
            return i, True
        if c != "\\":
            i += 1
            continue
        if i + 1 >= n:
            break
        if body[i + 1] != "u":
            i += 2
            continue
        if i + 6 > n:
            break
        try:
            unit = int(body[i + 2 : i + 6], 16)
        except ValueError:
            i += 2
            continue
        if 0xD800 <= unit < 0xDC00:
            # A high surrogate decodes together with the low one that should follow it.
            tail = body[i + 6 : i + 12]
            if len(tail) < 6 and "\\u".startswith(tail[:2]):
                break
        i += 6
    return i, False
