"""The golden stream cases: recorded transcripts replayed through dscodec with ``dscodec.testing``.

``fixtures/streams/<protocol>/<scenario>.jsonl`` holds one transcript per chunking of the scenario's model
output (docs/golden-streams.md): the backend items pushed, the reference's events as frames and its accumulated
response. A golden test replays each with :func:`dscodec.testing.replay` and checks the answer with
:func:`dscodec.testing.compare`; the per-protocol summaries below (concatenated deltas, finish, usage) are read
the same way off both sides.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import orjson

from dscodec.stream._json_prefix import JsonPrefix
from dscodec.stream._markers import EOS_SPELLING
from dscodec.testing import Difference, Transcript, compare, format_differences, load_transcripts, replay
from dscodec.testing.compare import normalise as _normalise
from dscodec.testing.lint._sdk import _by_type
from dscodec.testing.replay import Replay
from dscodec.testing.transcript import Text, loads_transcripts
from tests.support.fixtures import FIXTURES

STREAMS = FIXTURES / "streams"
#: The reference's tool call ids (``call_NN_`` + 20 alphanumerics + 4 digits, or with ``ET_``); a replay's fixed
#: ids have the same shape. Only these are random: every other id and the fingerprints are compared as written.
CALL_ID = r"call_\d{2}_(?:ET_)?[A-Za-z0-9]{20}\d{4}"


def cases(protocol: str) -> list[Path]:
    """The transcript files of ``protocol``, one per scenario."""
    folder = STREAMS / protocol
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


#: How the recorder writes the first line of every transcript (its header).
_HEADER = '{"kind": "transcript"'


@lru_cache(maxsize=8)
def _takes(case: Path) -> tuple[Transcript, ...]:
    return tuple(load_transcripts(case))


def takes(case: Path, names: Collection[str] | None = None) -> dict[str, Transcript]:
    """The scenario's recorded transcripts by chunking name, in recording order (those of ``names`` only, if
    given: the others are left unread)."""
    if names is None:
        return {t.meta["chunking"]: t for t in _takes(case)}
    kept: list[str] = []
    keep = False
    for line in case.read_text(encoding="utf-8").split("\n"):
        if line.startswith(_HEADER):
            keep = json.loads(line)["meta"]["chunking"] in names
        if keep:
            kept.append(line)
    return {t.meta["chunking"]: t for t in loads_transcripts("\n".join(kept), source=str(case))}


@cache
def _headers(case: Path) -> tuple[dict[str, Any], ...]:
    """The header line of each transcript of ``case``, its other lines left unread (the recorder writes each
    header as one line starting with its kind)."""
    with case.open(encoding="utf-8") as file:
        return tuple(json.loads(line) for line in file if line.startswith(_HEADER))


def scenario(case: Path) -> dict[str, Any]:
    """The scenario's notes (description, version, settings, output, ``reads_as``, the reference's parsing
    options): the first transcript of the file carries them."""
    meta: dict[str, Any] = _headers(case)[0]["meta"]
    return meta


def chunkings(case: Path) -> list[str]:
    """The names of the scenario's recorded chunkings, in recording order (as :func:`takes` has them)."""
    return [header["meta"]["chunking"] for header in _headers(case)]


@dataclass
class Take:
    """One recorded chunking and dscodec's replay of it."""

    name: str
    recorded: Transcript
    run: Replay

    @property
    def label(self) -> str:
        return self.recorded.name

    @property
    def meta(self) -> dict[str, Any]:
        return self.recorded.meta

    @property
    def expected_events(self) -> list[dict[str, Any]]:
        """The reference's events: the frames' data, without Chat's ``[DONE]``."""
        return [json.loads(f.data) for f in self.recorded.frames or () if f.data != "[DONE]"]

    @property
    def expected_response(self) -> dict[str, Any]:
        """The reference accumulator's complete response."""
        body = self.recorded.accumulated if self.recorded.accumulated is not None else self.recorded.response
        assert body is not None, self.label
        return body

    @property
    def reference_finished(self) -> bool:
        return bool(self.meta["reference"]["finished"])

    def events(self) -> list[dict[str, Any]]:
        """dscodec's events as dicts."""
        return [e.to_dict() for e in self.run.events]

    def pushes_agree(self, notes: dict[str, Any]) -> bool:
        """Whether dscodec took the backend items up to the one the reference took last (a stop sequence
        matched in the same push), or a documented deviation explains the difference: D15 recordings of the
        output cut before the end-of-sentence token (``reads_as``), and a stop that matched inside the start
        of a spelling that may still become the end-of-sentence token, where dscodec waits for the next chunk
        (D15: nothing matches inside that token). ``notes``: the scenario's (:func:`scenario`)."""
        theirs = int(self.meta["reference"]["pushed"])
        ours = len(self.run.pushed)
        if ours == theirs or notes.get("reads_as") is not None:
            return True
        if ours < theirs:
            return False
        text = "".join(item.text for item in self.run.pushed[:theirs] if isinstance(item, Text))
        return any(text.endswith(EOS_SPELLING[:k]) for k in range(1, len(EOS_SPELLING)))


#: The explicit chunking that pushes the whole output as one chunk of ids (JSON-mode scenarios with special ids).
IDS_WHOLE = "x-ids-whole"


def single_chunk(takes: list[Take], take: Take) -> Take:
    """The reference's run of the whole output in one chunk of the same kind of input as ``take``: what D7 makes
    dscodec answer for every chunking in JSON mode. Token input has it only where the scenario recorded
    :data:`IDS_WHOLE` (special ids outside the value are stretches of their own there); else the text chunk."""
    by_name = {t.name: t for t in takes}
    chunks = take.meta.get("chunks") or {}
    token_input = chunks.get("kind") == "tokens" or (
        chunks.get("kind") == "explicit" and all("ids" in c for c in chunks.get("chunks", ()))
    )
    if token_input and IDS_WHOLE in by_name:
        return by_name[IDS_WHOLE]
    return by_name["whole"]


class Distinct:
    """Remembers the JSON values it has been shown, so that a check run on every chunking of a case runs once a
    distinct value: most events (and many final answers) are the same in every chunking, and validating them with
    the SDK's types again would only repeat the same verdict."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()

    def new(self, value: Any) -> bool:
        """Whether ``value`` was not shown before (object keys in any order are the same value)."""
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        if key in self._seen:
            return False
        self._seen.add(key)
        return True


class EventTypes:
    """Strict validation with an SDK's union of stream event types, member by member: the member whose ``type``
    literal the event names is the only one of the union that could take it, and validating with it alone gives
    the union's verdict in a twentieth of the time (pydantic tries every member of these unions in turn)."""

    def __init__(self, union: Any) -> None:
        self._members = _by_type(union)
        assert len(self._members) >= 5, union  # the union was read

    def validate(self, data: dict[str, Any]) -> Any:
        """The SDK's object for ``data``; an event of a type the union lacks fails."""
        member = self._members.get(data["type"])
        assert member is not None, f"no SDK event type {data['type']!r}"
        return member.model_validate(data, strict=True)


def replay_all(case: Path, names: Collection[str] | None = None) -> list[Take]:
    """Every recorded chunking of ``case`` (those of ``names`` only, if given) replayed through dscodec as
    recorded."""
    out = []
    for name, recorded in takes(case, names).items():
        run = replay(recorded)
        assert run.request is not None, f"{recorded.name}: the request did not convert"
        assert recorded.frames is not None and not recorded.meta["reference"]["error"], recorded.name
        if recorded.response is None:  # a streamed request: the answer is the frames
            assert run.transcript.frames is not None, recorded.name
            if recorded.frames and recorded.frames[-1].data == "[DONE]":  # Chat ends with [DONE], as we do
                assert run.transcript.frames[-1].data == "[DONE]", recorded.name
        out.append(Take(name, recorded, run))
    return out


def normalise(value: Any) -> Any:
    """Random tool call ids become ``<id-N>`` (numbered by first appearance), wall-clock stamps
    ``"<timestamp>"``; everything else stays."""
    return _normalise(value, ids=CALL_ID, fingerprints=False)


def differences(expected: Any, actual: Any, **options: Any) -> list[Difference]:
    """:func:`dscodec.testing.compare` with the golden normalisation."""
    return compare(expected, actual, ids=CALL_ID, fingerprints=False, **options)


def assert_same(expected: Any, actual: Any, label: str, **options: Any) -> None:
    """No difference between two answers (JSON bodies, event lists or transcripts), else the list."""
    text = None if options else _text(expected)
    if text is not None and text == _text(actual):
        return  # the same JSON text (types and key order too): compare would find nothing
    found = differences(expected, actual, **options)
    assert not found, f"{label}\n{format_differences(found)}"


def _text(value: Any) -> str | None:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True)
    except TypeError:  # not JSON data (a transcript, frames): let compare read it
        return None


# -- the reference's summaries, read off its events the way the recorder used to write them --------------------


def chat_finish(events: list[dict[str, Any]]) -> dict[str, Any]:
    reasons = [c.get("finish_reason") for e in events for c in e.get("choices", []) if c.get("finish_reason")]
    return {"finish_reason": reasons[-1] if reasons else None}


def chat_usage(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    usages = [e["usage"] for e in events if e.get("usage")]
    return usages[-1] if usages else None


def responses_final(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    finals = [e["response"] for e in events if e["type"] in ("response.completed", "response.incomplete")]
    return finals[-1] if finals else None


def messages_delta(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    deltas = [e for e in events if e["type"] == "message_delta"]
    return deltas[-1] if deltas else None


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def is_json(text: str) -> bool:
    """Valid JSON by RFC 8259 (Python's reader also takes NaN and Infinity; they are refused here)."""
    try:
        json.loads(text, parse_constant=_no_constants)
    except ValueError:
        return False
    return True


def is_json_prefix(text: str) -> bool:
    """``text`` is the start of a JSON value dscodec's reader accepts (possibly all of it)."""
    checker = JsonPrefix()
    return checker.feed(text) == len(text) and not checker.failed


def check_arguments(ours: str, theirs: str) -> None:
    """A call's arguments against the reference's. Equal where the reference's are valid JSON, or the start of
    it in a call the output cut short; D8: a complete invoke the reference wrote as invalid JSON is valid JSON
    here, and a cut one that it wrote as no JSON prefix is cut short here too, at the same place."""
    if is_json(theirs) or (not theirs.endswith("}") and is_json_prefix(theirs)):
        assert ours == theirs, (ours, theirs)
    elif theirs.endswith("}"):
        assert is_json(ours), ours
    else:
        assert ours.startswith("{") == theirs.startswith("{"), (ours, theirs)
