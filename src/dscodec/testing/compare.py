"""Normalising answers and comparing them: a list of differences, each with its JSON path.

Two answers to the same request differ in what a server makes up per response: ids, wall-clock stamps and the
configuration fingerprint. :func:`normalise` replaces exactly those, so what is left to compare is what the
client would read:

* ids (the string values of the keys in :data:`ID_KEYS`: response, item, tool call and request ids, opaque
  reasoning content, thinking signatures) become ``<id-1>``, ``<id-2>`` ... numbered by first appearance; one id always gets
  the same placeholder, so references between events (an ``item_id`` naming an item) still compare;
* timestamps (integer values of the keys in :data:`TIME_KEYS`) become ``"<timestamp>"``;
* a non-null ``system_fingerprint`` becomes ``"<fingerprint>"``.

Empty strings and nulls are kept: an id that is missing is a difference worth seeing. When two answers come from
the same fixed inputs (a replay against a recording), ``ids`` can narrow the id rule to the ids that really are
random (a pattern, such as the tool call ids), and ``fingerprints=False`` keeps the fingerprint, so the rest is
compared as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from dscodec.errors import shown
from dscodec.testing._sse import Frame
from dscodec.testing.transcript import Transcript

__all__ = [
    "ID_KEYS",
    "MISSING",
    "SECTIONS",
    "TIME_KEYS",
    "Answer",
    "Difference",
    "IdRule",
    "answer_sections",
    "compare",
    "format_differences",
    "ignore_rules",
    "merge_deltas",
    "normalise",
]

#: Keys whose string values are made up per response.
ID_KEYS = frozenset(
    {
        "id",
        "item_id",
        "call_id",
        "response_id",
        "previous_response_id",
        "request_id",  # the HTTP request's id in an Anthropic error body or error event: new per request
        "signature",
        "encrypted_content",
    }
)
#: Keys whose integer values are wall-clock times.
TIME_KEYS = frozenset({"created", "created_at", "completed_at"})
#: The parts of an answer :func:`compare` looks at, in order.
SECTIONS = ("status", "frames", "response", "accumulated")


class _Missing:
    """The value on the side of a difference where a key or list element does not exist."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


#: Stands for an absent key or element in a :class:`Difference`.
MISSING: Any = _Missing()


#: Which ids :func:`normalise` replaces: all (True), none (False), or those that match a regular expression.
IdRule = bool | str | re.Pattern[str]


def normalise(value: Any, *, ids: IdRule = True, fingerprints: bool = True) -> Any:
    """A copy of ``value`` (JSON data) with ids, timestamps and fingerprints replaced (module docstring).

    Args:
        value: JSON data.
        ids: which id values become placeholders: all (True), none (False), or those a regular expression
            matches in full (a string or compiled pattern), wherever they are (the value of any key).
        fingerprints: whether ``system_fingerprint`` strings become ``"<fingerprint>"``.

    Examples:
        >>> normalise({"id": "chatcmpl-9", "created": 1700000000, "choices": [{"id": "chatcmpl-9"}]})
        {'id': '<id-1>', 'created': '<timestamp>', 'choices': [{'id': '<id-1>'}]}
        >>> normalise({"id": "chatcmpl-9", "call": {"id": "call_7"}}, ids=r"call_[0-9]+")
        {'id': 'chatcmpl-9', 'call': {'id': '<id-1>'}}

    Raises:
        ValueError: ``value`` nests deeper than Python's recursion allows, or holds itself (no JSON does), or
            ``ids`` is no valid regular expression.
        TypeError: ``ids`` is neither a bool, a str nor a compiled str pattern, or ``fingerprints`` is no bool.
    """
    normaliser = _Normaliser(ids, fingerprints)
    try:
        return normaliser.walk(value)
    except RecursionError:
        raise _too_deep() from None


def _too_deep() -> ValueError:
    return ValueError("the data nests deeper than Python's recursion allows, or holds itself (no JSON does)")


def _id_pattern(ids: object, fingerprints: object) -> re.Pattern[str] | None:
    """The pattern of an :data:`IdRule` (None for True or False), the options checked.

    Raises:
        TypeError: ``ids`` is neither a bool, a str nor a compiled str pattern, or ``fingerprints`` is no bool.
        ValueError: ``ids`` is a str that is no valid regular expression.
    """
    if type(fingerprints) is not bool:
        raise TypeError(f"fingerprints must be True or False, not {shown(fingerprints)}")
    if type(ids) is bool:
        return None
    if isinstance(ids, re.Pattern) and isinstance(ids.pattern, str):
        return ids
    if not isinstance(ids, str):
        raise TypeError(
            "ids must be True, False, a regular expression (str) or a compiled str pattern, "
            f"not {type(ids).__name__}"
        )
    try:
        return re.compile(ids)
    except re.error as exc:
        raise ValueError(f"ids is no valid regular expression: {exc} in {shown(ids, limit=60)}") from None


class _Normaliser:
    def __init__(self, ids: IdRule = True, fingerprints: bool = True) -> None:
        self.ids: dict[str, str] = {}
        self.pattern = _id_pattern(ids, fingerprints)
        self.all_ids = ids is True
        self.fingerprints = fingerprints

    def is_id(self, key: str, item: Any) -> bool:
        if not isinstance(item, str) or not item:
            return False
        if self.pattern is not None:
            return self.pattern.fullmatch(item) is not None
        return self.all_ids and key in ID_KEYS

    def placeholder(self, value: str) -> str:
        found = self.ids.get(value)
        if found is None:
            found = self.ids[value] = f"<id-{len(self.ids) + 1}>"
        return found

    def walk(self, value: Any) -> Any:
        kind = type(value)
        if kind in _SCALARS:  # most of the values: returned as they are, without the slower checks below
            return value
        if kind is dict or isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if type(item) in _SCALARS and type(item) is not str:
                    if key in TIME_KEYS and type(item) is int:
                        out[key] = "<timestamp>"
                    else:
                        out[key] = item
                elif type(item) is not str:
                    out[key] = self.walk(item)
                elif self.is_id(key, item):
                    out[key] = self.placeholder(item)
                elif key == "system_fingerprint" and self.fingerprints:
                    out[key] = "<fingerprint>"
                else:
                    out[key] = item
            return out
        if kind is list:
            return [self.walk(item) for item in value]
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return [self.walk(item) for item in value]
        return value


#: Value types :meth:`_Normaliser.walk` returns unchanged (a string under an id key is handled by its mapping).
_SCALARS = frozenset({str, int, float, bool, type(None)})


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where two answers differ.

    Attributes:
        path: where, as a JSON path from the answer (``frames[3].data.choices[0].delta.content``).
        expected: the expected value there, or :data:`MISSING`.
        actual: the actual value there, or :data:`MISSING`.
    """

    path: str
    expected: Any
    actual: Any

    def __str__(self) -> str:
        note = ""
        if isinstance(self.expected, str) and isinstance(self.actual, str):
            at = next(
                (k for k, (a, b) in enumerate(zip(self.expected, self.actual)) if a != b),
                min(len(self.expected), len(self.actual)),
            )
            note = f" (first difference at character {at})"
        return f"{self.path}: expected {_show(self.expected)}, got {_show(self.actual)}{note}"


def _show(value: Any, limit: int = 160) -> str:
    if value is MISSING:
        return "<missing>"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        # No JSON value (a set, data nested past Python's recursion), or an integer of more digits than Python
        # writes.
        text = shown(value, limit + 1)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_differences(differences: Iterable[Difference], *, limit: int = 20) -> str:
    """The differences one per line, at most ``limit`` of them (and how many more there are).

    Raises:
        TypeError: ``differences`` holds something other than :class:`Difference` items, or ``limit`` is no int.
        ValueError: ``limit`` is below 0.
    """
    if type(limit) is not int:
        raise TypeError(f"limit must be an int, not {type(limit).__name__}")
    if limit < 0:
        raise ValueError(f"limit must be 0 or more, not {shown(limit)}")
    if isinstance(differences, (str, bytes)) or not isinstance(differences, Iterable):
        raise TypeError(f"differences must be an iterable of Difference, not {type(differences).__name__}")
    found = list(differences)
    for item in found:
        if not isinstance(item, Difference):
            raise TypeError(f"differences must hold Difference items, not {type(item).__name__}")
    lines = [str(d) for d in found[:limit]]
    if len(found) > limit:
        more = len(found) - limit
        lines.append(f"... and {more} more {'difference' if more == 1 else 'differences'}")
    return "\n".join(lines)


def _frame_value(frame: Frame) -> dict[str, Any]:
    try:
        data: Any = json.loads(frame.data)
    except (ValueError, RecursionError):
        data = frame.data
    return {"event": frame.event, "data": data}


def _delta_key(event: Any) -> tuple[Any, ...] | None:
    """What a delta event adds to, or None when it is no plain delta (events with one key, one after the other,
    merge): a Chat chunk of one text field or of one call's arguments and nothing else, a Responses ``*.delta``
    event, a Messages ``content_block_delta``."""
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    if kind is None and event.get("object") == "chat.completion.chunk":
        choices = event.get("choices")
        if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
            return None
        choice = choices[0]
        delta = choice.get("delta")
        if choice.get("finish_reason") is not None or event.get("usage") or not isinstance(delta, dict):
            return None
        calls = delta.get("tool_calls")
        if calls is not None:
            if (
                not isinstance(calls, list)
                or len(calls) != 1
                or not isinstance(calls[0], dict)
                or set(calls[0]) != {"index", "function"}
                or not isinstance(calls[0]["function"], dict)
                or set(calls[0]["function"]) != {"arguments"}
                or not isinstance(calls[0]["function"]["arguments"], str)
                or set(delta) - {"tool_calls", "content", "reasoning_content"}
                or any(delta.get(k) for k in ("content", "reasoning_content"))
            ):
                return None
            return ("chat arguments", calls[0]["index"])
        texts = [k for k in ("content", "reasoning_content") if isinstance(delta.get(k), str) and delta[k]]
        if len(texts) != 1 or set(delta) - {"content", "reasoning_content"}:
            return None
        return ("chat text", texts[0])
    if isinstance(kind, str) and kind.startswith("response.") and kind.endswith(".delta"):
        if not isinstance(event.get("delta"), str):
            return None
        return (kind, event.get("item_id"), event.get("output_index"), event.get("content_index"))
    if kind == "content_block_delta":
        delta = event.get("delta")
        if not isinstance(delta, dict):
            return None
        delta_type = delta.get("type")
        field = _BLOCK_DELTA_FIELDS.get(delta_type) if isinstance(delta_type, str) else None
        if field is None or not isinstance(delta.get(field), str):
            return None
        return (kind, event.get("index"), delta_type)
    return None


#: The text field of each kind of Messages block delta that merges.
_BLOCK_DELTA_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}


def _merge_run(run: list[Mapping[str, Any]], key: tuple[Any, ...]) -> dict[str, Any]:
    """The delta events of ``run`` (consecutive, all of ``key``) as one: a copy of the first with the text of every
    one joined, and their log probability entries in one list. Each text and list is built once, so merging costs
    as much as the events are long, however many there are."""
    into: dict[str, Any] = _copy(run[0])
    if len(run) == 1:
        return into
    rest = run[1:]
    if key[0] == "chat arguments":
        function = into["choices"][0]["delta"]["tool_calls"][0]["function"]
        function["arguments"] = "".join(
            [function["arguments"]]
            + [event["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] for event in rest]
        )
    elif key[0] == "chat text":
        choice = into["choices"][0]
        texts = [choice["delta"][key[1]]]
        logprobs = _Logprobs(choice.get("logprobs"))
        for event in rest:
            added = event["choices"][0]
            texts.append(added["delta"][key[1]])
            logprobs.add(added.get("logprobs"))
        choice["delta"][key[1]] = "".join(texts)
        if logprobs.value is not _ABSENT:
            choice["logprobs"] = logprobs.value
    elif key[0] == "content_block_delta":
        field = _BLOCK_DELTA_FIELDS[key[2]]
        into["delta"][field] = "".join([into["delta"][field]] + [event["delta"][field] for event in rest])
    else:
        into["delta"] = "".join([into["delta"]] + [event["delta"] for event in rest])
        entries = into.get("logprobs", _ABSENT)
        for event in rest:
            added = event.get("logprobs")
            if isinstance(entries, list):
                if isinstance(added, list):
                    entries.extend(added)  # (a list of the copy made above, or one made below)
            elif isinstance(added, list):
                entries = list(added)
            # neither a list: the entries stay as they are
        if entries is not _ABSENT:
            into["logprobs"] = entries
    return into


#: A field the merged event does not have (yet).
_ABSENT: Any = object()


class _Logprobs:
    """The ``logprobs`` of merged Chat chunks: the first object met, then each field's entry lists joined (a field
    that one side lacks or holds no list keeps the other side's list; with no list on either side, the later
    value). Lists are extended in place (each one a copy made here), so the merge stays linear."""

    def __init__(self, value: Any) -> None:
        self.value: Any = _ABSENT if value is None else value
        # The fields whose value is no list: the next object merged replaces them (with None when it lacks them).
        self.plain: set[Any] = set()
        if isinstance(value, dict):
            self._take(value)

    def _take(self, value: dict[str, Any]) -> None:
        self.value = _copy(value)
        self.plain = {field for field, entries in value.items() if not isinstance(entries, list)}

    def add(self, theirs: Any) -> None:
        if not isinstance(theirs, dict):
            return
        mine = self.value
        if not isinstance(mine, dict):
            self._take(theirs)
            return
        for field in self.plain - theirs.keys():
            mine[field] = None
        for field, added in theirs.items():
            entries = mine.get(field)
            if isinstance(entries, list):
                if isinstance(added, list):
                    entries.extend(added)
            elif isinstance(added, list):
                mine[field] = list(added)
                self.plain.discard(field)
            else:
                mine[field] = added
                self.plain.add(field)
        self.plain = {field for field in self.plain if mine[field] is not None}


def merge_deltas(events: Sequence[Mapping[str, Any]] | Sequence[Frame]) -> list[Any]:
    """``events`` (one stream's JSON events, any protocol) with consecutive deltas of one text or one call's
    arguments merged into one, and the Responses ``sequence_number`` values renumbered to stay consecutive.

    ``events`` may also be the stream's :class:`~dscodec.testing.Frame` objects (an exchange's or a transcript's
    ``frames``): their data merge as those events do, and a list of frames comes back. Merged frames come back as
    new frames (the merged event as compact JSON, under the SSE event name of the first frame merged), and so do
    frames whose ``sequence_number`` moved; the other frames, ``[DONE]`` among them, come back as they were.

    Two servers that stream the same answer may part its deltas in other places (how the backend chunked the
    output, what each holds back); merged, their events compare. Text and arguments are concatenated, and so are
    log probability entries; a delta of another text, another call, another block or another kind (Chat's
    reasoning against its content) starts a new one. Nothing else changes; the events given are not modified.

    Examples:
        >>> chunk = lambda text: {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        >>> [e["choices"][0]["delta"]["content"] for e in merge_deltas([chunk("Hel"), chunk("lo"), chunk("!")])]
        ['Hello!']

    Raises:
        TypeError: ``events`` is no sequence of event dicts or of frames (a str, a dict, a list of numbers, a
            list mixing frames and dicts).
        ValueError: an event nests deeper than Python's recursion allows, or holds itself.
    """
    if isinstance(events, (str, bytes, bytearray, Mapping)) or not isinstance(events, Iterable):
        raise TypeError(f"merge_deltas takes a list of event dicts or of frames, not {type(events).__name__}")
    items: list[Any] = list(events)
    frames = bool(items) and isinstance(items[0], Frame)
    for index, item in enumerate(items):
        if not isinstance(item, Frame if frames else Mapping):
            expected = "a Frame, as the first item is" if frames else "an event dict (or every item a Frame)"
            raise TypeError(f"events[{index}] is a {type(item).__name__}, not {expected}")
    try:
        return _merged_frame_list(items) if frames else _merged(items)
    except RecursionError:
        raise _too_deep() from None


def _merged_frame_list(frames: list[Frame]) -> list[Frame]:
    """Frames with the deltas among their data merged (:func:`merge_deltas`); a frame whose data is no JSON
    object (Chat's ``[DONE]``) parts runs."""
    data: list[dict[str, Any] | None] = []
    for frame in frames:
        try:
            value = json.loads(frame.data)
        except (ValueError, RecursionError):
            value = None
        data.append(value if isinstance(value, dict) else None)
    out: list[Frame] = []
    start = 0
    while start < len(frames):
        if data[start] is None:
            out.append(frames[start])
            start += 1
            continue
        end = start
        while end < len(frames) and data[end] is not None:
            end += 1
        run = cast("list[dict[str, Any]]", data[start:end])
        merged = _merged(run)
        if len(merged) == len(run):  # nothing merged: the frames as they came
            out.extend(frames[start:end])
        else:
            keys = [_delta_key(event) for event in run]
            kept = [k for k in range(len(run)) if k == 0 or keys[k] is None or keys[k] != keys[k - 1]]
            starts = set(kept)
            for k, event in zip(kept, merged):
                # A frame that merged with none and kept its data (no sequence number moved) comes back as it was.
                alone = k + 1 == len(run) or k + 1 in starts
                if alone and event == run[k]:
                    out.append(frames[start + k])
                else:
                    text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
                    out.append(Frame(text, frames[start + k].event))
        start = end
    return out


def _merged(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[Any] = []
    run: list[Mapping[str, Any]] = []  # the delta events of ``last`` not yet merged
    last: tuple[Any, ...] | None = None
    for event in events:
        key = _delta_key(event)
        if key is not None and key == last:
            run.append(event)
            continue
        if run:
            out.append(_merge_run(run, cast("tuple[Any, ...]", last)))
            run = []
        if key is not None:
            run.append(event)
        else:
            out.append(dict(event) if isinstance(event, Mapping) else event)
        last = key
    if run:
        out.append(_merge_run(run, cast("tuple[Any, ...]", last)))
    if len(out) < len(events):  # something merged: the sequence numbers that followed move up
        numbered = [e for e in out if isinstance(e, dict) and type(e.get("sequence_number")) is int]
        for offset, event in enumerate(numbered):
            event["sequence_number"] = numbered[0]["sequence_number"] + offset
    return out


def _copy(value: Any) -> Any:
    """A copy of JSON data deep enough to merge into."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


#: What :func:`compare` takes as an answer: a transcript, a list of frames (or of event dicts), or a JSON body.
Answer = Transcript | Sequence[Frame] | Sequence[Mapping[str, Any]] | Mapping[str, Any]


def _frames_value(frames: Sequence[Any]) -> list[Any]:
    for f in frames:
        if not isinstance(f, (Frame, Mapping)):
            raise TypeError(f"an answer's items are frames or event dicts, not {type(f).__name__}")
    return [
        _frame_value(f) if isinstance(f, Frame) else {"event": f.get("type"), "data": dict(f)} for f in frames
    ]


def answer_sections(
    value: Answer, *, ids: IdRule = True, fingerprints: bool = True, merge: bool = False
) -> dict[str, Any]:
    """The comparable parts of an answer: a transcript's status, frames, response and accumulated response (those
    it has), a frame list as ``frames``, a JSON body as ``response``. Frames and bodies come normalised
    (``ids`` and ``fingerprints`` as for :func:`normalise`; with ``merge``, the frames' deltas merged as
    :func:`merge_deltas` merges them). A list of event dicts counts as frames whose SSE event name is the event's
    ``type``."""

    _id_pattern(ids, fingerprints)

    def norm(data: Any) -> Any:
        return normalise(data, ids=ids, fingerprints=fingerprints)

    def frames(value: Sequence[Any]) -> Any:
        listed = _frames_value(value)
        return norm(_merged_frames(listed) if merge else listed)

    if isinstance(value, Transcript):
        sections: dict[str, Any] = {"status": value.status}
        if value.frames is not None:
            sections["frames"] = frames(value.frames)
        if value.response is not None:
            sections["response"] = norm(value.response)
        elif value.response_text is not None:  # a body that is no JSON object, as it came
            sections["response"] = value.response_text
        if value.accumulated is not None:
            sections["accumulated"] = norm(value.accumulated)
        return sections
    if isinstance(value, Mapping):
        return {"response": norm(value)}
    if isinstance(value, (str, bytes, bytearray)) or not isinstance(value, Sequence):
        raise TypeError(
            "an answer is a Transcript, a list of frames or of event dicts, or a response body; "
            f"not {type(value).__name__}"
        )
    return {"frames": frames(value)}


def _merged_frames(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Frames (``{"event", "data"}``) with the deltas among their data merged; a frame whose data is no JSON
    object (Chat's ``[DONE]``) parts runs, and a frame keeps its SSE event name."""
    out: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    names: list[Any] = []

    def flush() -> None:
        merged = merge_deltas(run)
        if len(merged) == len(run):
            out.extend({"event": name, "data": data} for name, data in zip(names, run))
        else:
            # Merged events keep the name of the first frame of their run (deltas of one key share it).
            keys = [_delta_key(data) for data in run]
            kept = [k for k in range(len(run)) if k == 0 or keys[k] is None or keys[k] != keys[k - 1]]
            out.extend({"event": names[k], "data": data} for k, data in zip(kept, merged))
        run.clear()
        names.clear()

    for frame in frames:
        data = frame.get("data")
        if isinstance(data, dict):
            run.append(data)
            names.append(frame.get("event"))
            continue
        flush()
        out.append(frame)
    flush()
    return out


def ignore_rules(ignore: Iterable[str] | str) -> list[str]:
    """The ignore rules of :func:`compare`, checked (a single rule may be given as a str).

    Raises:
        TypeError: ``ignore`` is neither a str nor an iterable of str.
        ValueError: a rule is empty or blank (it would name no key, yet match paths throughout the answer).
    """
    if isinstance(ignore, str):  # one rule, not its characters
        ignore = (ignore,)
    if isinstance(ignore, (bytes, bytearray, Mapping)) or not isinstance(ignore, Iterable):
        raise TypeError(f"ignore must be a str or an iterable of str, not {type(ignore).__name__}")
    rules = list(ignore)
    for rule in rules:
        if not isinstance(rule, str):
            raise TypeError(
                f"ignore rules must be str (a key name or a path pattern), not {type(rule).__name__}"
            )
        if not rule.strip():
            raise ValueError(
                f"an ignore rule must name a key or a path pattern, not {shown(rule, limit=40)} (an empty rule "
                "would leave out paths all through the answer)"
            )
    return rules


def _pattern(rule: str) -> re.Pattern[str]:
    """The regular expression of an ignore rule: the paths it leaves out, matched in full."""
    if not any(c in rule for c in ".[*"):
        # A bare key name: that key anywhere.
        return re.compile(r"(?:.*[.\]])?" + re.escape(rule) + r"(?:[.\[].*)?")
    return re.compile(".*".join(re.escape(part) for part in rule.split("*")) + r"(?:[.\[].*)?")


class _Rule:
    """An ignore rule matched piece by piece as :func:`_diff` walks down, so that each step costs the length of
    the piece of path it adds (``.key`` or ``[3]``), never that of the whole path: a long key above many values
    made matching every path from its start cost the square of the answer's size.

    :func:`_diff` stops at the first path a rule matches, so a path is only asked about when its parent's was
    not matched. A bare key name (no ``.``, ``[`` or ``*``) then matches exactly when the piece added does (a
    match ending in the parent's path would have matched it; one cannot start there, a piece starts with ``.``
    or ``[``). A path pattern's parts between the ``*`` are found left to right, each as early as it can be
    (which leaves the most room for the rest), the first at the start; a state carries the parts found and the
    text after the last of them, cut to what a part may still start in.
    """

    def __init__(self, rule: str) -> None:
        self.regex = _pattern(rule)
        self.bare = not any(c in rule for c in ".[*")
        self.parts = rule.split("*")
        self.keep = max(map(len, self.parts))

    def start(self) -> tuple[int, str]:
        """The state before any path: no part found, no text."""
        return (0, "")

    def step(self, state: tuple[int, str], piece: str) -> tuple[int, str] | None:
        """The state after ``piece`` is added to the path, or None when the path it makes is matched."""
        if self.bare:
            return None if self.regex.fullmatch(piece) else state
        found, text = state
        text += piece
        parts = self.parts
        last = len(parts) - 1
        if found == 0:
            first = parts[0]
            if len(text) < len(first):
                return (0, text) if first.startswith(text) else (-1, "")
            if not text.startswith(first):
                return (-1, "")
            if last == 0:  # no "*": the path is the rule, or goes on below it
                return None if len(text) == len(first) or text[len(first)] in ".[" else (-1, "")
            found, text = 1, text[len(first) :]
        elif found < 0:  # the start differs: no path below matches
            return state
        while found < last:
            at = text.find(parts[found])
            if at < 0:
                return (found, text[max(0, len(text) - self.keep + 1) :])
            text = text[at + len(parts[found]) :]
            found += 1
        end = parts[last]
        if not end:  # the rule ends with "*": any path below the parts matches
            return None
        at = text.find(end)
        while at >= 0:
            after = at + len(end)
            if after == len(text) or text[after] in ".[":
                return None
            at = text.find(end, at + 1)
        return (found, text[max(0, len(text) - self.keep + 1) :])


#: A path as :func:`_diff` carries it: the path above and the piece added, or the section name alone.
_Path = tuple[Any, str]


def _path_text(path: _Path) -> str:
    pieces: list[str] = []
    node: Any = path
    while node is not None:
        node, piece = node
        pieces.append(piece)
    return "".join(reversed(pieces))


def compare(
    expected: Answer,
    actual: Answer,
    *,
    ignore: Iterable[str] = (),
    sections: Collection[str] | None = None,
    ids: IdRule = True,
    fingerprints: bool = True,
    merge_deltas: bool = False,
) -> list[Difference]:
    """The differences between two answers after :func:`normalise`; empty when they agree.

    Args:
        expected: a transcript, a list of frames, or a JSON body.
        actual: the same.
        ignore: paths to leave out: a key name (``"usage"``: that key anywhere) or a path pattern where ``*``
            stands for any text (``"frames[*].data.usage"``, ``"accumulated.output[*].id"``).
        sections: which of ``status``, ``frames``, ``response``, ``accumulated`` to compare (default: every one
            the expected side has). A section the expected side lacks is not compared.
        ids: which id values become placeholders before comparing: all (True, the default), none (False), or
            those a regular expression matches in full.
        fingerprints: whether ``system_fingerprint`` strings are normalised (True, the default).
        merge_deltas: compare the frames with consecutive deltas of one text or one call merged (see
            :func:`merge_deltas`), so that answers whose deltas part in other places compare equal.

    Examples:
        >>> compare({"id": "a", "text": "Hello"}, {"id": "b", "text": "Help"})
        [Difference(path='response.text', expected='Hello', actual='Help')]

    Raises:
        ValueError: a section none of the four (a misspelt section would compare nothing), no section at all, an
            empty ignore rule, an ``ids`` pattern that is no valid regular expression, or an answer that nests
            deeper than Python's recursion allows or holds itself.
        TypeError: an answer of another kind, an ignore rule that is no ``str``, ``sections`` that is no
            collection of names, or ``ids``, ``fingerprints`` or ``merge_deltas`` of another type.
    """
    _id_pattern(ids, fingerprints)
    if type(merge_deltas) is not bool:
        raise TypeError(f"merge_deltas must be True or False, not {shown(merge_deltas)}")
    rules_given = ignore_rules(ignore)
    if isinstance(sections, str):
        sections = (sections,)
    if sections is not None and (isinstance(sections, bytes) or not isinstance(sections, Iterable)):
        raise TypeError(
            f"sections must be a section name or a collection of them, not {type(sections).__name__}"
        )
    if sections is not None:
        sections = list(sections)
        if not sections:
            raise ValueError(
                f"sections names no section, so nothing would be compared; name some of {', '.join(SECTIONS)}"
            )
        unknown = [section for section in sections if section not in SECTIONS]
        if unknown:
            raise ValueError(f"unknown section {shown(unknown[0])}; expected some of {', '.join(SECTIONS)}")
    want = answer_sections(expected, ids=ids, fingerprints=fingerprints, merge=merge_deltas)
    got = answer_sections(actual, ids=ids, fingerprints=fingerprints, merge=merge_deltas)
    rules = [_Rule(rule) for rule in rules_given]
    out: list[Difference] = []
    try:
        for section in SECTIONS:
            if section not in want or (sections is not None and section not in sections):
                continue
            _diff(
                None,
                section,
                [rule.start() for rule in rules],
                want[section],
                got.get(section, MISSING),
                rules,
                out,
            )
    except RecursionError:
        raise _too_deep() from None
    return out


def _diff(
    above: _Path | None,
    piece: str,
    states: list[tuple[int, str]],
    want: Any,
    got: Any,
    rules: list[_Rule],
    out: list[Difference],
) -> None:
    """Add to ``out`` where ``want`` and ``got`` differ, at the path ``above`` plus ``piece``, unless an ignore
    rule matches it (``states``: where each rule stands above it)."""
    if rules:
        after: list[tuple[int, str]] = []
        for rule, state in zip(rules, states):
            moved = rule.step(state, piece)
            if moved is None:
                return
            after.append(moved)
        states = after
    path: _Path = (above, piece)
    if isinstance(want, dict) and isinstance(got, dict):
        for key, value in want.items():
            _diff(path, f".{key}", states, value, got.get(key, MISSING), rules, out)
        for key, value in got.items():
            if key not in want:
                _diff(path, f".{key}", states, MISSING, value, rules, out)
        return
    if isinstance(want, list) and isinstance(got, list):
        for index in range(max(len(want), len(got))):
            _diff(
                path,
                f"[{index}]",
                states,
                want[index] if index < len(want) else MISSING,
                got[index] if index < len(got) else MISSING,
                rules,
                out,
            )
        return
    if type(want) is not type(got) or want != got:
        out.append(Difference(_path_text(path), want, got))
