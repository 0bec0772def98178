"""Normalisation and comparison of answers."""

from __future__ import annotations

from dscodec.testing import MISSING, Difference, Frame, Transcript, compare, format_differences, normalise


def test_ids_get_placeholders_by_first_appearance() -> None:
    value = {
        "id": "resp_9",
        "output": [{"id": "msg_1", "call_id": "call_00_x"}, {"item_id": "msg_1"}],
        "created_at": 17,
        "completed_at": None,
        "system_fingerprint": "fp_1",
        "signature": "",
        "encrypted_content": "resp_9",
    }
    assert normalise(value) == {
        "id": "<id-1>",
        "output": [{"id": "<id-2>", "call_id": "<id-3>"}, {"item_id": "<id-2>"}],
        "created_at": "<timestamp>",
        "completed_at": None,
        "system_fingerprint": "<fingerprint>",
        "signature": "",
        "encrypted_content": "<id-1>",
    }


def test_equal_after_normalisation() -> None:
    ours = {"id": "chatcmpl-1", "created": 1, "choices": [{"id": "call_a"}, {"id": "call_b"}]}
    theirs = {"id": "chatcmpl-2", "created": 2, "choices": [{"id": "call_x"}, {"id": "call_y"}]}
    assert compare(ours, theirs) == []
    # ...but not when the references between ids differ.
    crossed = {"id": "chatcmpl-2", "created": 2, "choices": [{"id": "call_x"}, {"id": "call_x"}]}
    assert compare(ours, crossed) == [Difference("response.choices[1].id", "<id-3>", "<id-2>")]


def test_paths_missing_values_and_types() -> None:
    diffs = compare({"a": [1, 2, 3], "b": {"c": 1}, "t": True}, {"a": [1, 5], "b": {"d": 1}, "t": 1})
    assert diffs == [
        Difference("response.a[1]", 2, 5),
        Difference("response.a[2]", 3, MISSING),
        Difference("response.b.c", 1, MISSING),
        Difference("response.b.d", MISSING, 1),
        Difference("response.t", True, 1),
    ]
    assert str(diffs[2]) == "response.b.c: expected 1, got <missing>"
    assert (
        str(Difference("x", "Hello", "Help"))
        == 'x: expected "Hello", got "Help" (first difference at character 3)'
    )


def test_ignore_rules() -> None:
    want = {"usage": {"n": 1}, "choices": [{"text": "a", "usage": 2}]}
    got = {"usage": {"n": 2}, "choices": [{"text": "b", "usage": 3}]}
    assert [d.path for d in compare(want, got, ignore=["usage"])] == ["response.choices[0].text"]
    assert [d.path for d in compare(want, got, ignore=["response.choices[*].text", "response.usage"])] == [
        "response.choices[0].usage"
    ]


def test_transcripts_compare_by_section() -> None:
    frames = [Frame('{"id":"a","n":1}'), Frame("[DONE]")]
    want = Transcript("chat_completions", {}, frames=frames, accumulated={"n": 1})
    got = Transcript(
        "chat_completions", {}, frames=[Frame('{"id":"b","n":2}')], accumulated={"n": 1}, status=200
    )
    diffs = compare(want, got)
    assert [d.path for d in diffs] == ["frames[0].data.n", "frames[1]"]
    assert compare(want, got, sections=["status", "accumulated"]) == []
    # A section the expected side lacks is not compared.
    assert compare(Transcript("chat_completions", {}, accumulated={"n": 1}), got) == []
    assert "frames[1]: expected" in format_differences(diffs)
    assert format_differences(diffs, limit=1).endswith("... and 1 more differences")


def test_normalising_only_some_ids_and_keeping_fingerprints() -> None:
    """``ids=`` narrows the id rule to values matching a pattern (any key); ``fingerprints=False`` keeps them."""
    want = {"id": "chatcmpl-1", "system_fingerprint": "fp_a", "calls": [{"id": "call_1"}, {"x": "call_2"}]}
    got = {"id": "chatcmpl-1", "system_fingerprint": "fp_b", "calls": [{"id": "call_8"}, {"x": "call_9"}]}
    assert compare(want, got, ids=r"call_[0-9]") == []
    assert [d.path for d in compare(want, got, ids=r"call_[0-9]", fingerprints=False)] == [
        "response.system_fingerprint"
    ]
    assert [d.path for d in compare({**want, "id": "a"}, got, ids=r"call_[0-9]")] == ["response.id"]
    assert normalise(want, ids=False, fingerprints=False) == want


def test_event_lists_compare_as_frames() -> None:
    want = [{"type": "message_start", "id": "m1"}, {"type": "message_stop"}]
    got = [{"type": "message_start", "id": "m2"}, {"type": "ping"}]
    assert [(d.path, d.expected, d.actual) for d in compare(want, got)] == [
        ("frames[1].event", "message_stop", "ping"),
        ("frames[1].data.type", "message_stop", "ping"),
    ]
