"""Replay: a transcript through dscodec, answered the way the example server answers."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from dscodec.testing import (
    MISSING,
    Failure,
    Finish,
    Text,
    Tokens,
    Transcript,
    TranscriptError,
    Usage,
    compare,
    dumps_transcript,
    lint,
    loads_transcript,
    replay,
    verify,
)
from dscodec.testing.replay import merge_items, split_items
from dscodec.vocab import Vocabulary

PROTOCOLS = ("chat_completions", "responses", "messages")
OUTPUT = "Let me think.</think>Hello, 世界 👋🏽!"


def body(protocol: str, *, stream: bool = True) -> dict[str, Any]:
    if protocol == "responses":
        return {"model": "DeepSeek-V4-Pro", "input": "Hi", "stream": stream}
    request: dict[str, Any] = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}
    if protocol == "messages":
        request["max_tokens"] = 100
    return {**request, "stream": stream}


def transcript(protocol: str, items: list[Any], *, stream: bool = True) -> Transcript:
    return Transcript(protocol, body(protocol, stream=stream), items)  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_replay_verifies_against_itself_in_every_chunking(protocol: str) -> None:
    items = [Usage(9, 2, "fp"), Text(OUTPUT[:9], 3), Text(OUTPUT[9:], 8), Finish("stop")]
    recorded = loads_transcript(dumps_transcript(replay(transcript(protocol, items)).transcript))
    assert recorded.frames and recorded.accumulated and lint(protocol, recorded) == []
    assert verify(recorded) == []
    for chunking in ("whole", "chars"):
        assert verify(recorded, chunking=chunking) == []
        # The frames themselves differ (the deltas are cut elsewhere); the complete response does not.
        other = replay(recorded, chunking=chunking).transcript
        assert compare(recorded, other, sections=["accumulated"]) == []
        # Its backend items are those it pushed, so it verifies as it is (saved as a golden file, say).
        assert other.backend == replay(recorded, chunking=chunking).pushed
        assert verify(other) == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_token_ids_and_text_give_the_same_response(protocol: str) -> None:
    ids = Vocabulary.load(None).full.encode(OUTPUT, add_special_tokens=False).ids
    by_text = replay(transcript(protocol, [Usage(9), Text(OUTPUT, len(ids)), Finish("stop")], stream=False))
    by_ids = replay(transcript(protocol, [Usage(9), Tokens(tuple(ids)), Finish("stop")], stream=False))
    assert by_text.transcript.response is not None
    assert compare(by_text.transcript, by_ids.transcript) == []


def test_merge_and_split() -> None:
    items = [Usage(1), Text("ab", 2), Text("c", 1), Tokens((1, 2)), Tokens((3,)), Finish("stop")]
    assert merge_items(items) == [Usage(1), Text("abc", 3), Tokens((1, 2, 3)), Finish("stop")]
    assert split_items(items) == [
        Usage(1), Text("a", 0), Text("b", 2), Text("c", 1), Tokens((1,)), Tokens((2,)), Tokens((3,)), Finish("stop"),
    ]  # fmt: skip
    with_logprobs = [Tokens((1,), (-1.0,)), Tokens((2,))]
    assert merge_items(with_logprobs) == with_logprobs


def test_a_custom_chunking() -> None:
    items = [Usage(1), Text("Hello", 1), Finish("stop")]
    result = replay(
        transcript("chat_completions", items), chunking=lambda xs: [x for x in xs if not isinstance(x, Usage)]
    )
    first = result.transcript.frames[-2].json()  # type: ignore[index]
    assert first["usage"]["prompt_tokens"] == 0
    with pytest.raises(ValueError):
        replay(transcript("chat_completions", items), chunking="bytes")  # type: ignore[arg-type]


def test_a_request_that_does_not_convert_gets_its_error_answer() -> None:
    result = replay(Transcript("messages", {"model": "DeepSeek-V4-Pro", "messages": []}, [Finish("stop")]))
    assert result.transcript.status == 400 and result.request is None
    assert result.transcript.response is not None and result.transcript.response["type"] == "error"
    assert lint("messages", result.transcript) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [("created", -5), ("created", 2**63), ("response_id", "\udc00"), ("signature", "\ud800")],
)
def test_a_header_no_answer_can_carry_is_a_transcript_error(field: str, value: Any) -> None:
    bad = transcript("chat_completions", [Text("Hi", 1), Finish("stop")])
    setattr(bad, field, value)
    bad.name = "odd"
    with pytest.raises(TranscriptError, match=f"transcript odd: {field}"):
        replay(bad)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_backend_failures(protocol: str) -> None:
    # Before the first output: an error status, in the protocol's shape.
    early = replay(transcript(protocol, [Usage(5), Failure("engine crashed")])).transcript
    assert early.status == 502 and early.frames is None and lint(protocol, early) == []
    assert "engine crashed" in str(early.response)
    # After it: the stream ends with the protocol's error event (and no [DONE]).
    late = replay(transcript(protocol, [Usage(5), Text("Let me", 1), Failure("engine crashed")])).transcript
    assert late.status == 200 and late.frames is not None and not late.frames[-1].is_done
    assert lint(protocol, late) == []
    # Not streamed: an error answer whenever it fails.
    whole = replay(transcript(protocol, [Usage(5), Text("Let me", 1), Failure("x")], stream=False)).transcript
    assert whole.status == 502 and lint(protocol, whole) == []


def test_output_after_a_stop_sequence_or_a_finish_is_not_pushed() -> None:
    request = {**body("chat_completions"), "stop": ["END"], "thinking": {"type": "disabled"}}
    items = [Usage(3), Text("one END two", 3), Text("three", 1), Finish("stop"), Text("never", 1)]
    result = replay(Transcript("chat_completions", request, items))
    assert result.finished
    # Pushing stopped after the stop sequence: the items pushed, and the tokens they count.
    assert result.pushed == items[:2] and result.pushed_tokens == 3
    assert result.transcript.accumulated is not None
    assert result.transcript.accumulated["choices"][0]["message"]["content"] == "one "
    assert result.transcript.frames is not None and result.transcript.frames[-1].is_done


def test_verify_reports_a_changed_answer() -> None:
    recorded = replay(transcript("responses", [Usage(3), Text(OUTPUT, 5), Finish("stop")])).transcript
    assert recorded.accumulated is not None
    recorded.accumulated["output"][1]["content"][0]["text"] = "Bonjour"
    differences = verify(recorded)
    assert [d.path for d in differences] == ["accumulated.output[1].content[0].text"]


@pytest.mark.parametrize(
    ("extra", "store", "previous"),
    [
        ({}, True, None),
        ({"store": True, "previous_response_id": "resp_1"}, True, "resp_1"),
        ({"store": False, "previous_response_id": "resp_1"}, False, "resp_1"),
        ({"store": False}, False, None),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_a_live_responses_answer_says_how_the_server_keeps_it(
    extra: dict[str, Any], store: bool, previous: str | None, stream: bool
) -> None:
    """The example server stores Responses answers; the codec alone does not. A replay of a live recording answers
    as the server does, one of a codec recording as the codec does."""
    request = {**body("responses", stream=stream), **extra}
    items = [Usage(9), Text("Hello!", 2), Finish("stop")]
    for origin, expected in (
        ("live", (store, previous)),
        ("codec", (False, None)),
        ("reference", (False, None)),
    ):
        answer = replay(Transcript("responses", request, items, origin=origin)).transcript  # type: ignore[arg-type]
        objects = (
            [answer.response]
            if not stream
            else [f.json()["response"] for f in answer.frames or [] if "response" in f.json()]
            + [answer.accumulated]
        )
        assert len(objects) == (1 if not stream else 4)
        assert {(o["store"], o["previous_response_id"]) for o in objects if o is not None} == {expected}, (
            origin
        )


@pytest.mark.parametrize(
    ("recorded", "expected"),
    [
        ({"store": False, "previous_response_id": None}, (False, None)),  # a server that stores nothing
        ({"store": True, "previous_response_id": "resp_9"}, (True, "resp_9")),
        ({"store": False, "previous_response_id": "\ud800"}, (False, None)),  # no JSON string: left out
        (
            {"store": "yes", "previous_response_id": "resp_9"},
            (True, "resp_1"),
        ),  # unreadable: the server's rule
        ({}, (True, "resp_1")),
    ],
)
def test_a_live_recording_keeps_the_storage_its_server_answered_with(
    recorded: dict[str, Any], expected: tuple[bool, str | None]
) -> None:
    """Whether a response was stored is the server's doing: a live recording's replay says what the recorded
    response object says, and where it does not say, what dscodec's example server would."""
    request = {**body("responses", stream=False), "previous_response_id": "resp_1"}
    live = Transcript(
        "responses",
        request,
        [Usage(9), Text("Hello!", 2), Finish("stop")],
        response={"object": "response", **recorded},
        origin="live",
    )
    answer = replay(live).transcript.response
    assert answer is not None and (answer["store"], answer["previous_response_id"]) == expected
    streamed = dataclasses.replace(
        live, request={**request, "stream": True}, response=None, frames=[], accumulated=live.response
    )
    accumulated = replay(streamed).transcript.accumulated
    assert accumulated is not None and (accumulated["store"], accumulated["previous_response_id"]) == expected


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", ["chat_completions", "responses", "messages"])
def test_a_recorded_refusal_replays_to_its_status(protocol: str, stream: bool) -> None:
    """A backend that refused the request with a client error (4xx): the failure line keeps the status, and a
    replay answers with it, the message as the backend gave it; the line is written and read back."""
    from dscodec.testing import Failure, Transcript, dumps_transcript, loads_transcript, verify

    request: dict[str, Any] = {"model": "DeepSeek-V4-Pro", "max_tokens": 64, "stream": stream}
    request |= (
        {"input": "Hi"} if protocol == "responses" else {"messages": [{"role": "user", "content": "Hi"}]}
    )
    refused = Transcript(protocol, request, backend=[Failure("no such scenario", 400)])  # type: ignore[arg-type]
    answer = replay(refused).transcript
    assert answer.status == 400
    assert answer.response is not None and "no such scenario" in json.dumps(answer.response)
    again = loads_transcript(dumps_transcript(answer))
    assert again.backend == [Failure("no such scenario", 400)]
    assert not verify(again)
    failed = replay(Transcript(protocol, request, backend=[Failure("crashed")])).transcript  # type: ignore[arg-type]
    assert failed.status == 502


@pytest.mark.parametrize("stream", [True, False])
def test_a_replay_never_keeps_the_recorded_text_of_an_answer(stream: bool) -> None:
    """A recorded body that is no JSON object (an HTML page) is the server's answer, not dscodec's: a replay of a
    streamed request used to carry it over, and so matched it."""
    page = transcript("chat_completions", [Usage(1), Text("Hi", 1), Finish("stop")], stream=stream)
    page.response_text = "<html>oops</html>"
    answer = replay(page).transcript
    assert answer.response_text is None and (answer.frames is not None) == stream
    assert [d.path for d in verify(page)] == ["response"]


def test_the_replay_options_are_checked_before_anything_is_replayed(tmp_path: Any) -> None:
    """A tokenizer that cannot be loaded is the caller's mistake: raised, not answered as a 500; a chunking that
    is none is refused even when the request does not convert (and no chunking would be used)."""
    from dscodec.errors import TokenizerError

    items = [Usage(1), Text("Hello", 1), Finish("stop")]
    with pytest.raises(TokenizerError, match="nonexistent"):
        replay(transcript("chat_completions", items), tokenizer=str(tmp_path / "nonexistent"))
    with pytest.raises(TokenizerError):
        verify(transcript("chat_completions", items), tokenizer=str(tmp_path / "nonexistent"))
    with pytest.raises(TypeError, match="tokenizer must be"):
        replay(transcript("chat_completions", items), tokenizer=5)  # type: ignore[arg-type]
    unconverted = Transcript("messages", {"model": "DeepSeek-V4-Pro", "messages": []}, items)
    with pytest.raises(ValueError, match="unknown chunking 'bytes'"):
        replay(unconverted, chunking="bytes")  # type: ignore[arg-type]
    vocabulary = Vocabulary.load(None)
    assert verify(replay(transcript("chat_completions", items)).transcript, tokenizer=vocabulary) == []


def test_tokens_with_too_few_log_probabilities_never_reach_a_replay() -> None:
    """They used to crash the ``chars`` chunking with an IndexError; now they cannot be made or read."""
    with pytest.raises(ValueError, match="one log probability entry per id"):
        Transcript(
            "chat_completions",
            body("chat_completions", stream=False),
            [Tokens((1, 2), logprobs=(0.1,)), Finish("stop")],
        )
    good = transcript("chat_completions", [Tokens((1, 2), logprobs=(0.1, 0.2)), Finish("stop")])
    assert split_items(good.backend) == [Tokens((1,), (0.1,)), Tokens((2,), (0.2,)), Finish("stop")]
    text = dumps_transcript(good).replace("[0.1, 0.2]", "[0.1]")
    with pytest.raises(TranscriptError, match="2 ids and 1 log probability entries"):
        loads_transcript(text)


def test_a_live_messages_error_keeps_the_request_id_the_server_gave() -> None:
    """An Anthropic error body names the request's id, which the server gave it: a replay of a live recording
    answers with the same, so a faithful recording verifies; any other recording has no such field to keep."""
    header = {"kind": "transcript", "format": "dscodec-transcript", "version": 2, "protocol": "messages"}
    body = {"model": "DeepSeek-V4-Pro", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
    error = {"type": "api_error", "message": "the model server failed: boom"}
    lines = [
        json.dumps({**header, "name": "x", "origin": "live"}),
        json.dumps({"kind": "request", "body": body}),
        json.dumps({"kind": "failure", "message": "boom"}),
        json.dumps(
            {
                "kind": "response",
                "status": 502,
                "body": {"type": "error", "error": error, "request_id": "req_0123"},
            }
        ),
    ]
    live = loads_transcript("\n".join(lines))
    assert replay(live).transcript.response["request_id"] == "req_0123"  # type: ignore[index]
    assert verify(live) == []
    recorded = dataclasses.replace(live, origin="codec")
    assert "request_id" not in replay(recorded).transcript.response  # type: ignore[operator]
    assert [d.path for d in verify(recorded)] == ["response.request_id"]


def test_a_live_messages_stream_that_failed_keeps_the_request_id_the_server_gave(live_url: str) -> None:
    """The example server's error event of a failed Messages stream names the request's id, as the body of an
    error answer does: a faithful recording of it verifies, and a replay says the same id."""
    from dscodec.testing import live

    request = {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 100,
        "stream": True,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    recorded = live.record(live_url + "/v1/messages", request, headers={"X-Scenario": "fail_mid"})
    assert recorded.accumulated is not None and recorded.frames is not None
    request_id = recorded.accumulated["request_id"]
    assert isinstance(request_id, str) and request_id.startswith("req_")
    assert (
        recorded.frames[-1].event == "error"
        and json.loads(recorded.frames[-1].data)["request_id"] == request_id
    )
    assert verify(recorded) == []
    assert replay(recorded).transcript.accumulated == recorded.accumulated
    other = dataclasses.replace(recorded, origin="codec")  # the frames are compared too, then
    assert "accumulated.request_id" in [d.path for d in verify(other)]


@pytest.mark.parametrize("stream", [True, False])
def test_a_transcript_with_no_answer_is_a_difference(stream: bool) -> None:
    """There is nothing to compare a replay with: verify used to pass it, whatever dscodec answered."""
    hand = transcript("chat_completions", [Usage(3), Text("Hi", 1), Finish("stop")], stream=stream)
    differences = verify(hand)
    assert [(d.path, d.expected) for d in differences] == [("frames" if stream else "response", MISSING)]
    assert "records no answer" in str(differences[0])
    assert verify(replay(hand).transcript) == []


@pytest.mark.parametrize("stream", [True, False])
def test_a_responses_replay_completes_when_it_was_created(stream: bool) -> None:
    """``completed_at`` used to be the wall clock, so a golden file rewritten by an update changed every time."""
    items = [Usage(3), Text("Hi", 1), Finish("stop")]
    dated = dataclasses.replace(transcript("responses", items, stream=stream), created=1_700_000_000)
    for recorded, stamp in ((dated, 1_700_000_000), (transcript("responses", items, stream=stream), 0)):
        answer = replay(recorded).transcript
        complete = answer.accumulated if stream else answer.response
        assert complete is not None and complete["created_at"] == complete["completed_at"] == stamp
        assert dumps_transcript(answer) == dumps_transcript(replay(recorded).transcript)


def test_a_chunking_that_returns_no_backend_items_is_named() -> None:
    """A chunking function that returns something other than backend items used to fail with a bare TypeError
    from inside the replay (``'int' object is not iterable``)."""
    items = [Usage(1), Text("Hello", 1), Finish("stop")]

    def broken(items: list[Any]) -> Any:
        return 5

    with pytest.raises(TypeError, match="chunking broken returned a int, not a list of backend items"):
        replay(transcript("chat_completions", items), chunking=broken)
    with pytest.raises(TypeError, match="returned a str at index 1: a chunking returns backend items"):
        replay(transcript("chat_completions", items), chunking=lambda xs: [xs[0], "Hello"])
    # A tuple or a generator of items will do.
    assert replay(transcript("chat_completions", items), chunking=lambda xs: (x for x in xs)).finished
