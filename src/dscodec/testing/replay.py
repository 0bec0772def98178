"""Replaying a transcript through dscodec: the request converted, the recorded backend output pushed through a
:class:`~dscodec.StreamProcessor`, the answer built the way the example server builds it.

The answer follows the server's rules (``docs/server.md``): a request that does not convert gets its error body
and status; a backend failure before the first output is a 502 error body; after it, the protocol's mid-stream
error event ends the stream (without Chat's ``[DONE]``); a backend that stops without a :class:`Finish` ends
the response with no finish reason; nothing after a :class:`Finish` or a matched stop sequence is pushed. The
server's own limits (context window, body size, timeouts) are not part of a replay.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import dscodec
from dscodec.conversation import ConversationRequest, Protocol
from dscodec.errors import DscodecError, ModelOutputError, StreamStateError, shown
from dscodec.options import ConversionOptions
from dscodec.processor import StreamProcessor
from dscodec.protocols import error_body
from dscodec.protocols._wire import WireEvent
from dscodec.protocols.openai_responses import echo_storage
from dscodec.stream._markers import has_surrogate
from dscodec.testing._sse import Frame
from dscodec.testing.compare import MISSING, Difference, compare, ignore_rules
from dscodec.testing.transcript import (
    BackendItem,
    Failure,
    Finish,
    Text,
    Tokens,
    Transcript,
    TranscriptError,
    Usage,
)
from dscodec.vocab import TokenizerLike, Vocabulary

__all__ = [
    "CHUNKINGS",
    "Chunking",
    "Replay",
    "merge_items",
    "replay",
    "split_items",
    "unread_stream",
    "verify",
]

#: Named chunkings: ``recorded`` (as recorded), ``whole`` (adjacent text, or ids, in one chunk), ``chars`` (one
#: character per text chunk, one id per token chunk).
CHUNKINGS = ("recorded", "whole", "chars")

#: A chunking: one of :data:`CHUNKINGS`, or a function from the recorded items to the items to push.
Chunking = Literal["recorded", "whole", "chars"] | Callable[[list[BackendItem]], list[BackendItem]]

_DEFAULT_IDS: dict[str, str] = {
    "chat_completions": "chatcmpl-replay",
    "responses": "resp_replay",
    "messages": "msg_replay",
}


def call_id(index: int) -> str:
    """The tool call ids of a replay: fixed, in the shape dscodec's random ones have."""
    return f"call_{index:02d}_{'0' * 20}{index:04d}"


@dataclass
class Replay:
    """What a replay produced.

    Attributes:
        transcript: the input transcript with the answer replaced by dscodec's (same header and request; its
            backend items as cut by the chunking, so that the transcript verifies as it is).
        request: the converted request (None when the body did not convert).
        events: the processor's events, in order.
        finished: whether the processor ended normally.
        pushed: the backend items (after the chunking) that were pushed, in order: a finish or a matched stop
            sequence ends the pushing, so later items are not among them.
    """

    transcript: Transcript
    request: ConversationRequest | None
    events: list[WireEvent]
    finished: bool
    pushed: list[BackendItem] = dataclasses.field(default_factory=list)

    @property
    def pushed_tokens(self) -> int:
        """The completion tokens the pushed items count (the usage a server reports for them)."""
        return sum(
            item.token_count if isinstance(item, Text) else len(item.ids)
            for item in self.pushed
            if isinstance(item, (Text, Tokens))
        )


def merge_items(items: Sequence[BackendItem]) -> list[BackendItem]:
    """Adjacent text items as one (token counts added), adjacent token items as one (when all or none of them
    carry log probabilities); other items unchanged."""
    out: list[BackendItem] = []
    for item in items:
        last = out[-1] if out else None
        if isinstance(item, Text) and isinstance(last, Text):
            out[-1] = Text(last.text + item.text, last.token_count + item.token_count)
        elif (
            isinstance(item, Tokens)
            and isinstance(last, Tokens)
            and (item.logprobs is None) == (last.logprobs is None)
        ):
            logprobs = None if item.logprobs is None else (last.logprobs or ()) + item.logprobs
            out[-1] = Tokens(last.ids + item.ids, logprobs)
        else:
            out.append(item)
    return out


def split_items(items: Sequence[BackendItem]) -> list[BackendItem]:
    """One character per text item (its token count goes with its last character) and one id per token item."""
    out: list[BackendItem] = []
    for item in items:
        if isinstance(item, Text) and len(item.text) > 1:
            last = len(item.text) - 1
            out.extend(Text(ch, item.token_count if k == last else 0) for k, ch in enumerate(item.text))
        elif isinstance(item, Tokens) and len(item.ids) > 1:
            out.extend(
                Tokens((token_id,), None if item.logprobs is None else (item.logprobs[k],))
                for k, token_id in enumerate(item.ids)
            )
        else:
            out.append(item)
    return out


def _chunked(items: list[BackendItem], chunking: Chunking) -> list[BackendItem]:
    if callable(chunking):
        result = chunking(list(items))
        name = getattr(chunking, "__name__", "the chunking function")
        if isinstance(result, (str, bytes, Mapping)) or not isinstance(result, Iterable):
            raise TypeError(
                f"chunking {name} returned a {type(result).__name__}, not a list of backend items"
            )
        chunks = list(result)
        for k, item in enumerate(chunks):
            if not isinstance(item, (Usage, Text, Tokens, Finish, Failure)):
                raise TypeError(
                    f"chunking {name} returned a {type(item).__name__} at index {k}: a chunking returns backend "
                    "items (Usage, Text, Tokens, Finish, Failure)"
                )
        return chunks
    if chunking == "recorded":
        return items
    if chunking == "whole":
        return merge_items(items)
    if chunking == "chars":
        return split_items(items)
    raise ValueError(f"unknown chunking {chunking!r}; expected one of {', '.join(CHUNKINGS)} or a function")


def _push(processor: StreamProcessor, item: BackendItem) -> list[WireEvent]:
    if isinstance(item, Usage):
        return processor.start(item.prompt_tokens, item.cached_tokens, item.system_fingerprint)
    if isinstance(item, Text):
        return processor.push_text(item.text, item.token_count)
    if isinstance(item, Tokens):
        return processor.push_tokens(list(item.ids), None if item.logprobs is None else list(item.logprobs))
    if isinstance(item, Finish):
        return processor.finish(item.reason)
    raise TypeError(f"not a backend output item: {item!r}")  # pragma: no cover - Failure is handled before


def _backend_failure(item: Failure) -> DscodecError:
    """What a backend's failure becomes: the server's 502, or the client error it refused the request with."""
    if item.status is None:
        return ModelOutputError(f"the model server failed: {item.message}")
    return _refusal(item.status)(item.message)


@functools.cache
def _refusal(status: int) -> type[DscodecError]:
    """The error class of a backend's refusal with ``status`` (a client error), as a backend of the example
    server raises one."""
    return type("BackendRefusal", (DscodecError,), {"status_code": status, "__module__": __name__})


def _run(
    processor: StreamProcessor, items: list[BackendItem], pushed: list[BackendItem]
) -> tuple[list[WireEvent], DscodecError | None, bool]:
    """Push ``items`` as the server does.

    Returns:
        The events, the failure that ended the output (None when it ended normally), and whether the output had
        started (an item other than the prompt usage was pushed) when it failed.
    """
    events: list[WireEvent] = []
    started = False
    for item in items:
        if processor.finished:
            break
        try:
            if isinstance(item, Failure):
                raise _backend_failure(item)
            pushed.append(item)
            events += _push(processor, item)
        except DscodecError as exc:
            return events, exc, started
        if isinstance(item, Finish):
            return events, None, True
        if not isinstance(item, Usage):
            started = True
    else:
        try:
            events += processor.finish()
        except DscodecError as exc:
            return events, exc, started
    return events, None, True


def replay(
    transcript: Transcript,
    *,
    chunking: Chunking = "recorded",
    tokenizer: TokenizerLike = None,
    options: ConversionOptions | None = None,
) -> Replay:
    """Run ``transcript`` through dscodec and return dscodec's answer.

    Args:
        transcript: the transcript (its request and backend items are used; its answer is not).
        chunking: how to cut the backend output before pushing it (:data:`Chunking`).
        tokenizer: decodes token ids and counts reasoning tokens (None: the bundled DeepSeek V4 tokenizer).
        options: the conversion policy (None: the defaults).

    Examples:
        >>> from dscodec.testing import Finish, Text, Transcript, Usage
        >>> t = Transcript("chat_completions", {"model": "DeepSeek-V4-Pro", "thinking": {"type": "disabled"},
        ...     "messages": [{"role": "user", "content": "Hi"}]}, [Usage(5), Text("Hello!", 2), Finish("stop")])
        >>> replay(t).transcript.response["choices"][0]["message"]
        {'role': 'assistant', 'content': 'Hello!'}

    Raises:
        TypeError: ``transcript`` is no :class:`Transcript`, ``tokenizer`` is of another type, or a ``chunking``
            function returned something other than backend items.
        ValueError: ``chunking`` is none of :data:`CHUNKINGS` and no function.
        TokenizerError: ``tokenizer`` cannot be loaded (no such file, not a tokenizer.json). It is loaded before
            anything is replayed, so the caller's mistake is raised, never answered as a 500.
        TranscriptError: the transcript's ``response_id``, ``created`` or ``signature`` is one no answer can carry
            (an empty id, a negative time).
    """
    if not isinstance(transcript, Transcript):
        raise TypeError(f"transcript must be a Transcript, not {type(transcript).__name__}")
    if not callable(chunking) and chunking not in CHUNKINGS:
        raise ValueError(
            f"unknown chunking {shown(chunking)}; expected one of {', '.join(CHUNKINGS)} or a function"
        )
    if tokenizer is not None:
        tokenizer = Vocabulary.load(tokenizer)
    protocol: Protocol = transcript.protocol
    items = _chunked(list(transcript.backend), chunking)
    answer = dataclasses.replace(
        transcript,
        frames=None,
        response=None,
        response_text=None,  # the recorded answer's text, never dscodec's: a stream's replay must not keep it
        status=200,
        accumulated=None,
        backend=list(items),
    )
    try:
        request = dscodec.convert(protocol, transcript.request, options)
    except DscodecError as exc:
        answer.status, answer.response = exc.status_code, _error_body(protocol, exc, transcript)
        return Replay(answer, None, [], False)
    if transcript.origin == "live":
        _echo_server_storage(request, transcript)
    created = 0 if transcript.created is None else transcript.created
    try:
        processor = StreamProcessor(
            request,
            response_id=transcript.response_id or _DEFAULT_IDS[protocol],
            model=request.model,
            created=created,
            tokenizer=tokenizer,
            signature=transcript.signature,
            tool_call_id_factory=call_id,
            clock=lambda: float(created),  # the Responses completed_at: the same on every run, as created is
        )
    except StreamStateError as exc:
        raise TranscriptError(f"transcript {transcript.name or '(unnamed)'}: {exc}") from None
    pushed: list[BackendItem] = []
    events, failure, started = _run(processor, items, pushed)
    if failure is not None and not (request.stream and started):
        # Before the status line (or for any answer that is not streamed) a failure is an error answer.
        answer.status, answer.response = failure.status_code, _error_body(protocol, failure, transcript)
        return Replay(answer, request, events, False, pushed)
    if failure is not None:
        request_id = _server_request_id(protocol, transcript, transcript.accumulated)
        events += [
            WireEvent({**event.to_dict(), "request_id": request_id}, event=event.event)
            if request_id is not None and event.event == "error"
            else event
            for event in processor.fail(failure)
        ]
    accumulated = dscodec.accumulate(protocol, events)
    if request.stream:
        answer.frames = [Frame(event.to_json(), event.event) for event in events]
        if processor.sse_done and failure is None:
            answer.frames.append(Frame(processor.sse_done.removeprefix("data: ").strip()))
        answer.accumulated = accumulated
    else:
        answer.response = accumulated
    return Replay(answer, request, events, processor.finished, pushed)


def _echo_server_storage(request: ConversationRequest, transcript: Transcript) -> None:
    """Make a live recording's replay say how the server kept the response, which is the server's doing, not the
    codec's (dscodec's codec alone echoes ``"store": false`` and ``"previous_response_id": null``).

    Taken from the recorded response object where it shows them; else as dscodec's example server answers: it
    stores the response unless the request says ``"store": false``, and echoes the ``previous_response_id`` the
    request continues.
    """
    recorded = transcript.accumulated if transcript.accumulated is not None else transcript.response
    if isinstance(recorded, dict) and isinstance(recorded.get("store"), bool):
        store: bool = recorded["store"]
        previous = recorded.get("previous_response_id")
    else:
        store = transcript.request.get("store", True) is not False
        previous = transcript.request.get("previous_response_id")
    echo_storage(
        request,
        store=store,
        previous_response_id=previous if isinstance(previous, str) and not has_surrogate(previous) else None,
    )


def _error_body(protocol: Protocol, exc: DscodecError, transcript: Transcript) -> dict[str, Any]:
    """The error answer's body; for a live Messages recording with the id the server gave the request, that id too
    (``request_id``: the server's doing, as Anthropic's API answers it, not the codec's; a failed stream's error
    event names it the same way)."""
    body = exc.body if exc.protocol is not None else error_body(protocol, exc)
    request_id = _server_request_id(protocol, transcript, transcript.response)
    return body if request_id is None else {**body, "request_id": request_id}


def _server_request_id(protocol: Protocol, transcript: Transcript, recorded: object) -> str | None:
    """The ``request_id`` a live Messages recording's error (``recorded``: its error body, or the error event a
    failed stream adds up to) names, which the server gave; None for any other."""
    if protocol == "messages" and transcript.origin == "live" and isinstance(recorded, dict):
        request_id = recorded.get("request_id")
        if isinstance(request_id, str):
            return request_id
    return None


def verify(
    transcript: Transcript,
    *,
    chunking: Chunking = "recorded",
    tokenizer: TokenizerLike = None,
    options: ConversionOptions | None = None,
    ignore: Sequence[str] = (),
) -> list[Difference]:
    """Replay ``transcript`` and compare dscodec's answer with the recorded one; empty when they agree.

    The frames are compared only when the output is pushed as recorded and the transcript's backend items are
    the real ones (origin ``codec`` or ``reference``): the frames of a live recording were cut by that server.
    ``ignore`` as for :func:`~dscodec.testing.compare.compare` (checked before anything is replayed).

    Raises:
        As :func:`replay`; and TypeError or ValueError for an ``ignore`` rule that is no str or is empty.
    """
    ignore = ignore_rules(ignore)  # read once: an iterator's rules are kept for the comparison
    result = replay(transcript, chunking=chunking, tokenizer=tokenizer, options=options)
    return _replay_differences(
        transcript, result, ignore=ignore, frames=chunking == "recorded" and transcript.origin != "live"
    )


def _replay_differences(
    transcript: Transcript, result: Replay, *, ignore: Sequence[str] = (), frames: bool = True
) -> list[Difference]:
    """Where ``result`` (the replay of ``transcript``) differs from the recorded answer: the status, the response
    and the accumulated response, and the frames too with ``frames`` (what :func:`verify` and the pytest plugin
    report). A transcript that records no answer differs from any replay (:func:`_no_answer`)."""
    sections = ["status", "response", "accumulated"] + (["frames"] if frames else [])
    return (
        unread_stream(transcript)
        + _no_answer(transcript, result)
        + compare(transcript, result.transcript, ignore=ignore, sections=sections)
    )


def _no_answer(transcript: Transcript, result: Replay) -> list[Difference]:
    """A transcript with no answer (no frames, no response line) would verify against any replay, as there is
    nothing to compare: one difference says it records none, at the section dscodec's answer holds, so that its
    replay fails (and ``pytest --dscodec-update`` writes the answer in)."""
    if (
        transcript.frames is not None
        or transcript.response is not None
        or transcript.response_text is not None
    ):
        return []
    section = "frames" if result.transcript.frames is not None else "response"
    return [
        Difference(section, MISSING, "dscodec's answer: the transcript records no answer to compare it with")
    ]


def unread_stream(transcript: Transcript) -> list[Difference]:
    """A live recording whose events are no stream of its protocol has no accumulated answer to compare a replay
    with (see :func:`dscodec.testing.live.transcript_of`): one difference says so, so that its replay fails."""
    if transcript.origin == "live" and transcript.frames is not None and transcript.accumulated is None:
        return [
            Difference("accumulated", "the recorded events, which dscodec cannot read as a stream", MISSING)
        ]
    return []
