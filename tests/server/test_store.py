"""Responses ``store`` and ``previous_response_id``: the server's response store, with the openai SDK."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
import pytest

import dscodec
from dscodec.conversation import AssistantMessage, ToolMessage, UserMessage
from dscodec.errors import ConversionError
from dscodec.server import (
    BackendOutput,
    BackendRequest,
    MemoryResponseStore,
    ResponseNotFound,
    ScriptedBackend,
    create_app,
)
from dscodec.server._stored import identified, input_item_page
from dscodec.server.store import ReferencesTooLarge, begin_turn
from tests.server.conftest import VOCABULARY, LiveServer, new_id
from tests.server.scripts import AFTER_TOOL, PLAIN, REASONING, REASONING_ANSWER, SCRIPTS, WEATHER_CALLS
from tests.server.tools import GetWeather

MODEL = "DeepSeek-V4-Pro"
TOOL = {
    "type": "function",
    "name": "get_weather",
    "parameters": GetWeather.model_json_schema(),
    "strict": False,
}


@dataclass
class Jobs:
    """The scripted backend, recording the request each job carried (by ``X-Test-Id``)."""

    inner: ScriptedBackend
    seen: dict[str, BackendRequest] = field(default_factory=dict)

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        key = job.headers.get("x-test-id")
        if key:
            self.seen[key] = job
        async for item in self.inner(job):
            yield item


@pytest.fixture(scope="module")
def jobs() -> Jobs:
    return Jobs(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY))


@pytest.fixture(scope="module")
def client(jobs: Jobs) -> Iterator[openai.OpenAI]:
    with (
        LiveServer(create_app(jobs, tokenizer=VOCABULARY)) as live,
        openai.OpenAI(base_url=live.url + "/v1", api_key="k", max_retries=0, timeout=10) as sdk,
    ):
        yield sdk


def headers(script: str, key: str | None = None) -> dict[str, str]:
    out = {"X-Scenario": script}
    if key:
        out["X-Test-Id"] = key
    return out


def roles(job: BackendRequest) -> list[tuple[str, str]]:
    return [(m.role, getattr(m, "content", "")) for m in job.request.conversation.messages]


@pytest.mark.parametrize("stream", [False, True])
def test_a_follow_up_continues_the_stored_turn(client: openai.OpenAI, jobs: Jobs, stream: bool) -> None:
    if stream:
        with client.responses.stream(model=MODEL, input="Hi", extra_headers=headers("reasoning")) as events:
            first = events.get_final_response()
    else:
        first = client.responses.create(model=MODEL, input="Hi", extra_headers=headers("reasoning"))
    assert first.output_text == REASONING_ANSWER
    key = new_id()
    second = client.responses.create(
        model=MODEL, input="And again?", previous_response_id=first.id, extra_headers=headers("plain", key)
    )
    assert second.output_text == PLAIN
    messages = jobs.seen[key].request.conversation.messages
    assert [type(m) for m in messages] == [UserMessage, AssistantMessage, UserMessage]
    assert messages[0].content == "Hi" and messages[2].content == "And again?"
    assert isinstance(messages[1], AssistantMessage) and messages[1].content == REASONING_ANSWER
    # The chain goes on: the second response holds both earlier turns.
    key = new_id()
    client.responses.create(
        model=MODEL,
        input=[{"role": "user", "content": "Third"}],
        previous_response_id=second.id,
        extra_headers=headers("plain", key),
    )
    assert [m.role for m in jobs.seen[key].request.conversation.messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


def test_tool_results_can_answer_a_stored_call(client: openai.OpenAI, jobs: Jobs) -> None:
    first = client.responses.create(
        model=MODEL,
        input="Weather in Paris and Tokyo?",
        tools=[TOOL],
        extra_headers=headers("parallel"),  # type: ignore[list-item]
    )
    calls = [item for item in first.output if item.type == "function_call"]
    assert [json.loads(c.arguments) for c in calls] == WEATHER_CALLS
    key = new_id()
    results = [{"type": "function_call_output", "call_id": c.call_id, "output": "sunny"} for c in calls]
    second = client.responses.create(
        model=MODEL,
        input=results,
        previous_response_id=first.id,
        tools=[TOOL],  # type: ignore[arg-type,list-item]
        extra_headers=headers("after_tool", key),
    )
    assert second.output_text == AFTER_TOOL
    messages = jobs.seen[key].request.conversation.messages
    assert [type(m) for m in messages][-2:] == [ToolMessage, ToolMessage]


def test_an_unknown_id_is_a_404(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.create(model=MODEL, input="Hi", previous_response_id="resp_unknown")
    body = missing.value.body
    assert isinstance(body, dict) and body["param"] == "previous_response_id"
    assert body["type"] == "invalid_request_error" and "resp_unknown" in body["message"]
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=MODEL, input="Hi", previous_response_id="resp_unknown", stream=True)


def test_item_references_are_the_stored_items(client: openai.OpenAI, jobs: Jobs) -> None:
    """An ``item_reference`` input item stands for the stored item of its id: an input item (which got its id
    when its response was stored) or an output item, without ``previous_response_id``."""
    first = client.responses.create(model=MODEL, input="Hi", extra_headers=headers("reasoning"))
    asked = client.responses.input_items.list(first.id).data[0].id
    answered = [item.id for item in first.output]
    assert [item.type for item in first.output] == ["reasoning", "message"]
    key = new_id()
    references = [{"type": "item_reference", "id": item_id} for item_id in [asked, *answered]]
    second = client.responses.create(
        model=MODEL,
        input=[*references, {"role": "user", "content": "And again?"}],  # type: ignore[list-item]
        extra_headers=headers("plain", key),
    )
    messages = jobs.seen[key].request.conversation.messages
    assert [type(m) for m in messages] == [UserMessage, AssistantMessage, UserMessage]
    assert messages[0].content == "Hi" and messages[2].content == "And again?"
    assert isinstance(messages[1], AssistantMessage) and messages[1].content == REASONING_ANSWER
    assert messages[1].reasoning == REASONING
    # The stored turn holds the items themselves, so a follow-up of the second response sees them too.
    stored = client.responses.input_items.list(second.id, order="asc").data
    assert [item.type for item in stored] == ["message", "reasoning", "message", "message"]
    assert [item.id for item in stored][:3] == [asked, *answered]


@pytest.mark.parametrize("stream", [False, True])
def test_an_unknown_item_reference_is_a_404(client: openai.OpenAI, stream: bool) -> None:
    item = {"type": "item_reference", "id": "rs_unknown"}
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.create(model=MODEL, input=[item], stream=stream)  # type: ignore[list-item]
    body = missing.value.body
    assert isinstance(body, dict) and body["param"] == "input" and body["type"] == "invalid_request_error"
    assert body["message"] == "Item with id 'rs_unknown' not found."


def test_an_error_in_a_follow_up_names_the_item_as_the_client_sent_it(client: openai.OpenAI) -> None:
    """The items converted hold the stored turn's items first; an error's ``param`` counts the client's own."""
    first = client.responses.create(model=MODEL, input="Hi", extra_headers=headers("plain"))
    bad = [{"role": "user", "content": [{"type": "bogus_part"}]}]
    for previous in (None, first.id):
        extra = {} if previous is None else {"previous_response_id": previous}
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model=MODEL, input=bad, **extra)  # type: ignore[arg-type]
        assert (
            isinstance(refused.value.body, dict) and refused.value.body["param"] == "input[0].content[0].type"
        )
    # A value of the request the message quotes is the client's, and stays as it is: only the path is counted again.
    odd = [{"role": "user", "content": "x"}, {"type": "input[5]"}]
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model=MODEL, input=odd, previous_response_id=first.id)  # type: ignore[arg-type,list-item]
    assert isinstance(refused.value.body, dict) and refused.value.body["param"] == "input[1].type"
    assert "type 'input[5]' at input[1]" in refused.value.body["message"]
    # Counting the tokens of the same request too.
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.input_tokens.count(model=MODEL, input=bad, previous_response_id=first.id)  # type: ignore[arg-type]
    assert isinstance(refused.value.body, dict) and refused.value.body["param"] == "input[0].content[0].type"


def test_store_false_keeps_nothing(client: openai.OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="Hi", store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=MODEL, input="Again", previous_response_id=first.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)


@pytest.mark.parametrize("stream", [False, True])
def test_the_response_says_how_it_is_kept(client: openai.OpenAI, stream: bool) -> None:
    """A response object echoes ``store`` as the server keeps it and the ``previous_response_id`` it continues,
    in every event that carries one and in the stored copy."""

    def answer(**extra: Any) -> list[Any]:
        if not stream:
            return [client.responses.create(model=MODEL, input="Hi", extra_headers=headers("plain"), **extra)]
        events = client.responses.create(
            model=MODEL, input="Hi", stream=True, extra_headers=headers("plain"), **extra
        )
        return [event.response for event in events if hasattr(event, "response")]

    first = answer()
    assert [(r.store, r.previous_response_id) for r in first] == [(True, None)] * len(first)
    assert len(first) == (3 if stream else 1)  # created, in_progress, completed
    second = answer(previous_response_id=first[-1].id)
    assert [(r.store, r.previous_response_id) for r in second] == [(True, first[-1].id)] * len(second)
    kept = client.responses.retrieve(second[-1].id)
    assert (kept.store, kept.previous_response_id) == (True, first[-1].id)
    unkept = answer(previous_response_id=second[-1].id, store=False)
    assert [(r.store, r.previous_response_id) for r in unkept] == [(False, second[-1].id)] * len(unkept)
    assert [(r.store, r.previous_response_id) for r in answer(store=False)] == [(False, None)] * len(first)


@pytest.mark.parametrize("value", ["false", 0, 1, [], {}])
def test_a_store_that_is_no_boolean_is_refused(client: openai.OpenAI, value: Any) -> None:
    """The codec passes over ``store`` (as the reference does), but the server decides by it what it keeps: a
    value that is no boolean is a 400 naming it, never read as true."""
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="Hi", extra_body={"store": value})
    error = caught.value.body
    assert isinstance(error, dict) and error["param"] == "store" and "'store'" in error["message"]
    assert client.responses.create(model=MODEL, input="Hi", extra_body={"store": None}).store is True


def test_a_failed_response_is_not_stored(client: openai.OpenAI) -> None:
    with client.responses.stream(model=MODEL, input="Hi", extra_headers=headers("fail_mid")) as events:
        ids = {event.response.id for event in events if event.type == "response.created"}
    (response_id,) = ids
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=MODEL, input="Again", previous_response_id=response_id)


class DictStore:
    """A store of one's own: anything with get and put."""

    def __init__(self) -> None:
        self.entries: dict[str, list[Any]] = {}

    def get(self, response_id: str) -> Sequence[Any] | None:
        return self.entries.get(response_id)

    def put(self, response_id: str, items: Sequence[Any]) -> None:
        self.entries[response_id] = list(items)


def test_a_pluggable_store() -> None:
    store = DictStore()
    app = create_app(
        ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY), tokenizer=VOCABULARY, response_store=store
    )
    with LiveServer(app) as live, openai.OpenAI(base_url=live.url + "/v1", api_key="k", max_retries=0) as sdk:
        first = sdk.responses.create(model=MODEL, input="Hi", extra_headers=headers("plain"))
        items = store.entries[first.id]
        assert items[0] == {"type": "message", "role": "user", "content": "Hi", "id": f"msg_{first.id}_in0"}
        assert items[-1]["type"] == "message" and items[-1]["content"][0]["text"] == PLAIN
        sdk.responses.create(model=MODEL, input="More", previous_response_id=first.id)
        # A store without response objects: a follow-up still works, reading one back is a 404.
        with pytest.raises(openai.NotFoundError):
            sdk.responses.retrieve(first.id)
        with pytest.raises(openai.NotFoundError):
            sdk.responses.input_items.list(first.id)
        with pytest.raises(openai.NotFoundError):
            sdk.responses.delete(first.id)
        assert first.id in store.entries
        # A store that does not find items by id: a reference to an item it holds is still unknown.
        with pytest.raises(openai.NotFoundError) as unknown:
            sdk.responses.create(model=MODEL, input=[{"type": "item_reference", "id": f"msg_{first.id}_in0"}])
        assert isinstance(unknown.value.body, dict) and unknown.value.body["param"] == "input"


def test_with_storing_turned_off_the_response_says_it_is_not_stored() -> None:
    app = create_app(
        ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY),
        tokenizer=VOCABULARY,
        response_store=MemoryResponseStore(max_entries=0),
    )
    with LiveServer(app) as live, openai.OpenAI(base_url=live.url + "/v1", api_key="k", max_retries=0) as sdk:
        first = sdk.responses.create(model=MODEL, input="Hi", extra_headers=headers("plain"))
        assert (first.store, first.previous_response_id) == (False, None)
        with pytest.raises(openai.NotFoundError):
            sdk.responses.retrieve(first.id)
        with pytest.raises(openai.NotFoundError):
            sdk.responses.create(model=MODEL, input="More", previous_response_id=first.id)


@pytest.mark.parametrize("stream", [False, True])
def test_a_stored_response_can_be_retrieved(client: openai.OpenAI, stream: bool) -> None:
    if stream:
        events = client.responses.create(
            model=MODEL, input="Hi", stream=True, extra_headers=headers("reasoning")
        )
        (served,) = [event.response for event in events if event.type == "response.completed"]
    else:
        served = client.responses.create(model=MODEL, input="Hi", extra_headers=headers("reasoning"))
    again = client.responses.retrieve(served.id)
    assert again.model_dump() == served.model_dump()
    assert again.output_text == REASONING_ANSWER and again.status == "completed"


def test_a_deleted_response_is_gone(client: openai.OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="Hi", extra_headers=headers("plain"))
    assert client.responses.delete(first.id) is None
    for gone in (
        lambda: client.responses.retrieve(first.id),
        lambda: client.responses.delete(first.id),
        lambda: client.responses.input_items.list(first.id),
        lambda: client.responses.create(model=MODEL, input="Again", previous_response_id=first.id),
    ):
        with pytest.raises(openai.NotFoundError) as missing:
            gone()
        assert first.id in str(missing.value)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve("resp_unknown")


def test_input_items_of_a_chain(client: openai.OpenAI) -> None:
    first = client.responses.create(
        model=MODEL,
        input="Weather in Paris and Tokyo?",
        instructions="Be brief.",
        tools=[TOOL],  # type: ignore[list-item]
        extra_headers=headers("parallel"),
    )
    calls = [item for item in first.output if item.type == "function_call"]
    results = [{"type": "function_call_output", "call_id": c.call_id, "output": "sunny"} for c in calls]
    second = client.responses.create(
        model=MODEL,
        input=results,  # type: ignore[arg-type]
        previous_response_id=first.id,
        tools=[TOOL],  # type: ignore[list-item]
        extra_headers=headers("after_tool"),
    )
    # Every input the second response answered, newest first by default; the SDK pages through them.
    listed = list(client.responses.input_items.list(second.id, limit=2))
    assert [item.type for item in listed] == [
        "function_call_output",
        "function_call_output",
        *reversed([item.type for item in first.output]),
        "message",
    ]
    ids = [item.id for item in listed]
    assert len(set(ids)) == len(ids) and set(ids) >= {item.id for item in first.output}
    question = listed[-1]
    assert question.type == "message" and question.role == "user" and question.status == "completed"
    assert [part.model_dump(exclude_none=True) for part in question.content] == [
        {"type": "input_text", "text": "Weather in Paris and Tokyo?"}
    ]
    ascending = client.responses.input_items.list(second.id, order="asc", limit=100)
    assert [item.id for item in ascending.data] == ids[::-1] and ascending.has_more is False
    page = client.responses.input_items.list(second.id, order="asc", limit=1, after=ids[-1])
    assert [item.id for item in page.data] == [ids[-2]] and page.has_more is True
    # The first response's own inputs: only the question (the instructions are no input item), with the id it
    # has in the chain; a third turn lists the second's inputs with their ids too.
    assert [item.id for item in client.responses.input_items.list(first.id)] == [question.id]
    third = client.responses.create(
        model=MODEL,
        input="Thanks",
        previous_response_id=second.id,
        tools=[TOOL],
        extra_headers=headers("plain"),
    )
    listed = list(client.responses.input_items.list(third.id, order="asc"))
    assert [item.id for item in listed][: len(ids)] == ids[::-1]
    assert (
        listed[-1].type == "message" and listed[-1].id == f"msg_{third.id}_in{len(ids) + len(second.output)}"
    )


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=x", "limit"),
        # int() takes these; a limit is ASCII digits only.
        ("limit=%D9%A3", "limit"),
        ("limit=1_0", "limit"),
        ("limit=+5", "limit"),
        ("limit=%205", "limit"),
        ("limit=" + "9" * 5000, "limit"),
        ("order=up", "order"),
        ("after=nope", "after"),
    ],
)
def test_input_items_query_errors(client: openai.OpenAI, query: str, param: str) -> None:
    first = client.responses.create(model=MODEL, input="Hi", extra_headers=headers("plain"))
    with pytest.raises(openai.BadRequestError) as bad:
        client.get(f"/responses/{first.id}/input_items?{query}", cast_to=object)
    body = bad.value.body
    assert isinstance(body, dict) and body["param"] == param and body["type"] == "invalid_request_error"


def test_a_limit_with_leading_zeros_is_its_number(client: openai.OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="Hi", extra_headers=headers("plain"))
    page = client.get(f"/responses/{first.id}/input_items?limit={'0' * 30}1", cast_to=object)
    assert isinstance(page, dict) and len(page["data"]) == 1


def test_cancel_and_stream_retrieve_are_refused(client: openai.OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="Hi", extra_headers=headers("plain"))
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.cancel(first.id)
    assert "background" in refused.value.message
    with pytest.raises(openai.NotFoundError):
        client.responses.cancel("resp_unknown")
    with pytest.raises(openai.BadRequestError) as streaming:
        client.responses.retrieve(first.id, stream=True)
    assert isinstance(streaming.value.body, dict) and streaming.value.body["param"] == "stream"


def test_compact_is_a_404_that_says_so(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError, match="Compacting a conversation"):
        client.responses.compact(model=MODEL, input="Hi")


def test_input_tokens_count(client: openai.OpenAI, jobs: Jobs) -> None:
    key = new_id()
    first = client.responses.create(model=MODEL, input="Hi", extra_headers=headers("plain", key))
    counted = client.responses.input_tokens.count(model=MODEL, input="Hi")
    assert counted.object == "response.input_tokens"
    assert counted.input_tokens == len(jobs.seen[key].token_ids)
    key = new_id()
    client.responses.create(
        model=MODEL, input="More", previous_response_id=first.id, extra_headers=headers("plain", key)
    )
    follow_up = client.responses.input_tokens.count(model=MODEL, input="More", previous_response_id=first.id)
    assert follow_up.input_tokens == len(jobs.seen[key].token_ids) > counted.input_tokens
    with pytest.raises(openai.NotFoundError):
        client.responses.input_tokens.count(model=MODEL, input="More", previous_response_id="resp_unknown")
    with pytest.raises(openai.BadRequestError):
        client.responses.input_tokens.count(model="no-such-model", input="Hi")


def test_memory_store_bounds() -> None:
    store = MemoryResponseStore(max_entries=2)
    for n in range(3):
        store.put(f"r{n}", [n])
    assert store.get("r0") is None and store.get("r1") == [1] and len(store) == 2
    store.put("r3", [3])  # r2 is now the least recently used (r1 was just read)
    assert store.get("r2") is None and store.get("r1") == [1]
    small = MemoryResponseStore(max_bytes=10)
    small.put("a", ["12345"])
    small.put("b", ["67890"])
    assert small.get("a") is None and small.get("b") == ["67890"]
    small.put("c", ["x" * 20])  # larger than the whole store: not kept
    assert small.get("c") is None and small.get("b") == ["67890"]
    off = MemoryResponseStore(max_entries=0)
    off.put("a", [])
    assert off.get("a") is None


def test_memory_store_keeps_response_objects() -> None:
    store = MemoryResponseStore(max_bytes=60)
    store.put("a", [1], {"id": "a"})
    assert store.get_response("a") == {"id": "a"} and store.get("a") == [1]
    store.put("b", [2])  # no response object: the items are still kept
    assert store.get("b") == [2] and store.get_response("b") is None
    store.put("a", [3], {"id": "a", "output": [3]})  # a new entry for the same id replaces the old one
    assert store.get("a") == [3] and store.get_response("a") == {"id": "a", "output": [3]}
    store.put("c", [], {"text": "x" * 30})  # the response counts towards the size: b goes, then a
    assert store.get("b") is None and store.get("a") is None and store.get_response("c") == {"text": "x" * 30}
    assert len(store) == 1
    store.put("d", [], {"text": "x" * 60})  # larger than the whole store: not kept
    assert store.get("d") is None and store.get("c") == []
    assert store.delete("c") is True and store.delete("c") is False and len(store) == 0
    store.put("e", [])
    assert store.get("e") == []  # the size was given back by the deletion


def test_every_stored_id_names_one_item() -> None:
    """An item brought in again (a reference to an item the earlier turn's items hold) keeps its id the first time
    only: the copy gets one of its own, so a page cursor (``after``) never names two items."""
    message = {"type": "message", "id": "msg_a", "role": "assistant", "content": "Hi"}
    items = identified(
        "resp_2",
        [{"role": "user", "content": "x"}, message, dict(message), {"id": "odd", "x": 1}, {"id": "odd"}],
    )
    assert [item.get("id") for item in items] == [
        "msg_resp_2_in0",
        "msg_a",
        "msg_resp_2_in2",
        "odd",
        "item_resp_2_in4",
    ]
    page = input_item_page("resp_2", items, {"id": "resp_2"}, after="msg_a", limit=100, order="asc")
    assert [item["id"] for item in page["data"]] == ["msg_resp_2_in2", "odd", "item_resp_2_in4"]


def test_memory_store_finds_items_by_id() -> None:
    store = MemoryResponseStore(max_entries=2)
    assert store.get_item("m1") is None
    store.put("a", [{"id": "m1", "n": 1}, {"id": 5}, "text", {"id": "m1", "n": 2}])
    assert store.get_item("m1") == {"id": "m1", "n": 1}  # the first item of an id
    store.put("b", [{"id": "m1", "n": 3}, {"id": "m2"}])  # the newest entry that holds an id answers
    assert store.get_item("m1") == {"id": "m1", "n": 3} and store.get_item("m2") == {"id": "m2"}
    assert store.delete("b") and store.get_item("m2") is None
    assert store.get_item("m1") == {"id": "m1", "n": 1}  # still held by "a"
    store.put("c", [])
    store.put("d", [])  # "a" is evicted: its items go with it
    assert store.get_item("m1") is None and store.get("a") is None
    store.put("c", [{"id": "m3"}])
    store.put("c", [])  # a new entry for the same response id replaces the items
    assert store.get_item("m3") is None


def test_input_item_page() -> None:
    given = [
        {"role": "user", "content": "Hi"},
        {"type": "function_call_output", "call_id": "c", "output": "x", "id": "own"},
        {"type": "web_search_call"},  # a type without an id prefix: no id until listed
        {"role": "assistant", "content": "Hello"},
    ]
    items = [*identified("resp_1", given), {"type": "message", "id": "out"}]
    assert [item.get("id") for item in items] == ["msg_resp_1_in0", "own", None, "msg_resp_1_in3", "out"]
    response = {"output": [items[-1]]}
    page = input_item_page("resp_1", items, response, order="asc", limit=3)
    assert [item["id"] for item in page["data"]] == ["msg_resp_1_in0", "own", "item_resp_1_in2"]
    assert page["first_id"] == "msg_resp_1_in0" and page["last_id"] == "item_resp_1_in2" and page["has_more"]
    assert page["data"][0]["content"] == [{"type": "input_text", "text": "Hi"}]
    assert all(item["status"] == "completed" for item in page["data"])
    rest = input_item_page("resp_1", items, response, order="asc", after="item_resp_1_in2")
    assert rest["data"] == [
        {
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
            "id": "msg_resp_1_in3",
            "type": "message",
            "status": "completed",
        }
    ]
    assert rest["has_more"] is False
    newest = input_item_page("resp_1", items, response, limit=1, after="msg_resp_1_in3")
    assert [item["id"] for item in newest["data"]] == ["item_resp_1_in2"] and newest["has_more"]
    empty = input_item_page("resp_1", [], {"output": []})
    assert empty == {"object": "list", "data": [], "first_id": None, "last_id": None, "has_more": False}
    assert items[:4] != given and given[0] == {
        "role": "user",
        "content": "Hi",
    }  # the caller's items are not changed


def test_begin_turn() -> None:
    store = MemoryResponseStore()
    store.put("resp_1", [{"role": "user", "content": "Hi"}])
    body, turn, previous = begin_turn(
        b'{"model": "m", "input": "Next", "previous_response_id": "resp_1"}', store
    )
    assert json.loads(body) == {
        "model": "m",
        "input": [{"role": "user", "content": "Hi"}, {"type": "message", "role": "user", "content": "Next"}],
    }
    assert turn is not None and len(turn.items) == 2 and previous == "resp_1"
    assert begin_turn(b"not json", store) == (b"not json", None, None)
    assert begin_turn(b'{"input": "x", "store": false}', store)[1:] == (None, None)
    assert begin_turn(b'{"input": "x", "store": false, "previous_response_id": "resp_1"}', store)[1:] == (
        None,
        "resp_1",
    )
    with pytest.raises(ResponseNotFound):
        begin_turn(b'{"input": "x", "previous_response_id": "resp_2"}', store)
    # References are resolved, after the earlier turn's items are put in front.
    store.put("resp_3", [{"type": "message", "id": "m", "role": "user", "content": "Ho"}])
    body, turn, _ = begin_turn(
        b'{"input": [{"type": "item_reference", "id": "m"}, {"id": "m"}], "previous_response_id": "resp_1"}',
        store,
    )
    stored = {"type": "message", "id": "m", "role": "user", "content": "Ho"}
    expected = [{"role": "user", "content": "Hi"}, stored, stored]  # the SDK's shape without a type too
    assert json.loads(body)["input"] == expected and turn is not None and turn.items == expected
    # A reference without a string id is refused, at the path the client sent it under.
    for bad in (b'{"type": "item_reference", "id": 7}', b'{"type": "item_reference"}', b'{"id": null}'):
        with pytest.raises(ConversionError, match=r"input\[1\]\.id") as refused:
            begin_turn(
                b'{"input": [{"role": "user", "content": "x"}, '
                + bad
                + b'], "previous_response_id": "resp_1"}',
                store,
            )
        assert refused.value.param == "input[1].id" and refused.value.status_code == 400
    # The stored items references bring in are bounded (each reference counts).
    many = b'{"input": [' + b", ".join([b'{"type": "item_reference", "id": "m"}'] * 3) + b"]}"
    size = len(json.dumps(stored, separators=(",", ":")))
    assert len(json.loads(begin_turn(many, store, limit=3 * size)[0])["input"]) == 3
    with pytest.raises(ReferencesTooLarge) as too_many:
        begin_turn(many, store, limit=3 * size - 1)
    assert too_many.value.status_code == 413 and too_many.value.param == "input"
    unchanged = b'{"input": [{"type": "message", "role": "user", "content": "x"}]}'
    assert begin_turn(unchanged, store)[0] is unchanged
    with pytest.raises(ResponseNotFound, match="Item with id 'nope' not found"):
        begin_turn(b'{"input": [{"type": "item_reference", "id": "nope"}]}', store)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (
            "tools",
            [
                {
                    "type": "function",
                    "name": "f",
                    "parameters": {"type": "object", "properties": {"n": {"default": "NEG_ZERO"}}},
                }
            ],
        ),
        ("top_logprobs", "NEG_ZERO"),
        ("max_output_tokens", "NEG_ZERO"),
    ],
)
def test_a_follow_up_means_what_its_body_says(field: str, value: Any) -> None:
    """The body of a request that continues a stored turn is read and written again with the earlier items in
    front: each value keeps its meaning (a ``-0`` stays the float the converter reads, not the integer 0), so the
    request converts as the same conversation sent whole does: the same prompt, or the same refusal."""
    store = MemoryResponseStore()
    earlier = {"type": "message", "role": "user", "content": "Hi"}
    store.put("resp_1", [earlier])
    extra = json.dumps({field: value})[1:-1].replace('"NEG_ZERO"', "-0")
    follow = f'{{"model": "DeepSeek-V4-Pro", "input": "Next", "previous_response_id": "resp_1", {extra}}}'
    whole = (
        json.dumps(
            {
                "model": "DeepSeek-V4-Pro",
                "input": [earlier, {"type": "message", "role": "user", "content": "Next"}],
            }
        )[:-1]
        + f", {extra}}}"
    )
    body, _, _ = begin_turn(follow.encode(), store)

    def outcome(data: bytes) -> object:
        try:
            return dscodec.render(dscodec.convert("responses", data))
        except dscodec.ConversionError as exc:
            return exc.body

    assert outcome(body) == outcome(whole.encode())


@pytest.mark.parametrize(
    ("bounds", "error"),
    [({"max_entries": -1}, ValueError), ({"max_bytes": -5}, ValueError), ({"max_entries": "5"}, TypeError),
     ({"max_bytes": 1.5}, TypeError), ({"max_entries": True}, TypeError)],
)  # fmt: skip
def test_a_memory_store_checks_its_bounds(bounds: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error, match="max_"):
        MemoryResponseStore(**bounds)
    assert len(MemoryResponseStore(max_entries=0)) == 0  # keeps nothing, and is allowed
