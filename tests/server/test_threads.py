"""Messages ``thread``: the server holds a conversation between turns (the anthropic SDK's threads and its
tool runner, which uses one by default), and a threaded turn is answered as the whole conversation sent
again."""

from __future__ import annotations

import gc
import json
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dscodec.server import BackendOutput, BackendRequest, ScriptedBackend, create_app
from dscodec.server._threads import ThreadError, ThreadNotFound, Threads, ThreadTurn
from tests.server.conftest import VOCABULARY, LiveServer, new_id
from tests.server.scripts import PLAIN, SCRIPTS, WEATHER_CALLS

MODEL = "DeepSeek-V4-Pro"
TOOLS = [
    {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


@dataclass
class Jobs:
    """The scripted backend, recording the prompt ids of every job (by ``X-Test-Id``, in order)."""

    inner: ScriptedBackend
    seen: dict[str, list[list[int]]] = field(default_factory=lambda: defaultdict(list))

    async def __call__(self, job: BackendRequest) -> AsyncIterator[BackendOutput]:
        key = job.headers.get("x-test-id")
        if key:
            self.seen[key].append(list(job.token_ids))
        async for item in self.inner(job):
            yield item


@pytest.fixture(scope="module")
def jobs() -> Jobs:
    return Jobs(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY))


@pytest.fixture(scope="module")
def live(jobs: Jobs) -> Iterator[LiveServer]:
    with LiveServer(create_app(jobs, tokenizer=VOCABULARY)) as server:
        yield server


@pytest.fixture(scope="module")
def http(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=10) as client:
        yield client


@pytest.fixture(scope="module")
def sdk(live: LiveServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=live.url, api_key="k", max_retries=0, timeout=10) as client:
        yield client


def post(
    http: httpx.Client, body: dict[str, Any], script: str = "plain", key: str | None = None
) -> httpx.Response:
    headers = {"X-Scenario": script}
    if key is not None:
        headers["X-Test-Id"] = key
    return http.post("/v1/messages", json={"model": MODEL, "max_tokens": 256, **body}, headers=headers)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def continue_from(message_id: str) -> dict[str, Any]:
    return {"type": "continue", "previous_message_id": message_id}


def refusal(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == "error"
    assert body["error"]["details"] == {"error_code": code}
    message: str = body["error"]["message"]
    return message


# -- what a thread sends to the model ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_continue_is_answered_as_the_whole_conversation(
    http: httpx.Client, jobs: Jobs, stream: bool
) -> None:
    key = new_id()
    system = "Be brief."
    first = post(
        http,
        {"system": system, "tools": TOOLS, "messages": [user("Weather?")], "thread": {"type": "create"}},
        "parallel",
        key,
    )
    assert first.status_code == 200, first.text
    reply = first.json()
    assert [block["input"] for block in reply["content"] if block["type"] == "tool_use"] == WEATHER_CALLS
    results = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": block["id"], "content": "sunny"}
            for block in reply["content"]
            if block["type"] == "tool_use"
        ],
    }
    body = {"messages": [results], "thread": continue_from(reply["id"]), "stream": stream}
    second = post(http, body, "after_tool", key)
    assert second.status_code == 200, second.text
    # The same turn sent whole, without a thread.
    whole = {
        "system": system,
        "tools": TOOLS,
        "messages": [user("Weather?"), {"role": "assistant", "content": reply["content"]}, results],
    }
    assert post(http, whole, "after_tool", key).status_code == 200
    threaded, replayed = jobs.seen[key][1:]
    assert threaded == replayed
    if stream:
        frames = [json.loads(line[6:]) for line in second.text.splitlines() if line.startswith("data: ")]
        second_id = frames[0]["message"]["id"]
    else:
        second_id = second.json()["id"]
    # The thread moved on: the next turn continues from the new reply, not from the old one.
    refusal(
        post(http, {"messages": [user("Again?")], "thread": continue_from(reply["id"])}),
        400,
        "thread_already_continued",
    )
    third = post(
        http, {"messages": [user("And tomorrow?")], "thread": continue_from(second_id)}, "plain", key
    )
    assert third.status_code == 200, third.text
    assert len(jobs.seen[key][3]) > len(threaded)


@pytest.mark.parametrize("stream", [False, True])
def test_the_tool_runner_over_a_thread_sends_what_a_replay_sends(
    sdk: anthropic.Anthropic, jobs: Jobs, stream: bool
) -> None:
    def run(thread: bool) -> list[list[int]]:
        calls: list[str] = []

        @anthropic.beta_tool
        def get_weather(city: str) -> str:
            """The current weather in a city."""
            calls.append(city)
            return f"sunny in {city}"

        key = new_id()
        options: dict[str, Any] = {} if thread else {"thread": False}
        runner = sdk.beta.messages.tool_runner(
            model=MODEL,
            max_tokens=256,
            tools=[get_weather],
            messages=[user("Weather in Paris and Tokyo?")],
            max_iterations=3,
            stream=stream,  # type: ignore[call-overload]
            extra_headers={"X-Scenario": "parallel", "X-Test-Id": key},
            **options,
        )
        for _ in runner:
            pass
        assert calls == [call["city"] for call in WEATHER_CALLS] * 3
        return jobs.seen[key]

    threaded, replayed = run(True), run(False)
    assert len(threaded) == 3
    assert threaded == replayed


def test_an_explicit_thread_over_three_turns(
    sdk: anthropic.Anthropic, http: httpx.Client, jobs: Jobs
) -> None:
    key = new_id()
    thread = sdk.beta.messages.thread(
        model=MODEL,
        max_tokens=128,
        system="Be kind.",
        extra_headers={"X-Scenario": "plain", "X-Test-Id": key},
    )
    texts = ("Hi", "How are you?", "Bye")
    replies = [thread.send(user(text)) for text in texts]
    assert [r.content[-1].text for r in replies] == [PLAIN] * 3  # type: ignore[union-attr]
    assert thread.previous_message_id == replies[-1].id
    # The last turn sent whole, with the replies as the server wrote them.
    history: list[dict[str, Any]] = []
    for text, reply in zip(texts[:2], replies, strict=False):
        history += [user(text), {"role": "assistant", "content": reply.model_dump(mode="json")["content"]}]
    post(
        http, {"system": "Be kind.", "max_tokens": 128, "messages": [*history, user(texts[2])]}, "plain", key
    )
    prompts = jobs.seen[key]
    assert len(prompts) == 4
    assert len(prompts[0]) < len(prompts[1]) < len(prompts[2])
    assert prompts[2] == prompts[3]


# -- refusals ------------------------------------------------------------------------------------------------


def test_an_unknown_reply_is_a_404_the_sdk_knows(sdk: anthropic.Anthropic, http: httpx.Client) -> None:
    message = refusal(
        post(http, {"messages": [user("Hi")], "thread": continue_from("msg_nope")}), 404, "thread_not_found"
    )
    assert "msg_nope" in message
    with pytest.raises(anthropic.NotFoundError) as info:
        sdk.beta.messages.create(
            model=MODEL,
            max_tokens=32,
            messages=[user("Hi")],
            thread=continue_from("msg_nope"),  # type: ignore[arg-type]
        )
    assert type(info.value).__name__ == "ThreadNotFoundError"


def test_a_changed_system_or_tool_list_is_refused(http: httpx.Client) -> None:
    first = post(
        http, {"system": "A", "tools": TOOLS, "messages": [user("Hi")], "thread": {"type": "create"}}
    )
    reply_id = first.json()["id"]
    changed = {"system": "B", "tools": [], "messages": [user("Hi")], "thread": continue_from(reply_id)}
    message = refusal(post(http, changed), 400, "thread_fingerprint_mismatch")
    assert "'system' and 'tools'" in message
    # The refusal left the reply free; the same values may be sent again.
    same = {"system": "A", "tools": TOOLS, "messages": [user("Hi")], "thread": continue_from(reply_id)}
    assert post(http, same).status_code == 200


@pytest.mark.parametrize(
    "thread",
    ["create", {"type": "fork"}, {"type": "continue"}, {"type": "continue", "previous_message_id": 5}, []],
)
def test_a_malformed_thread_is_a_400(http: httpx.Client, thread: Any) -> None:
    response = post(http, {"messages": [user("Hi")], "thread": thread})
    assert response.status_code == 400, response.text
    assert "thread" in response.json()["error"]["message"]


def test_a_null_thread_is_no_thread(http: httpx.Client) -> None:
    response = post(http, {"messages": [user("Hi")], "thread": None})
    assert response.status_code == 200
    refusal(
        post(http, {"messages": [user("Hi")], "thread": continue_from(response.json()["id"])}),
        404,
        "thread_not_found",
    )


def test_a_failed_continue_leaves_the_reply_free(http: httpx.Client) -> None:
    reply_id = post(http, {"messages": [user("Hi")], "thread": {"type": "create"}}).json()["id"]
    failed = post(http, {"messages": [user("More")], "thread": continue_from(reply_id)}, "fail_early")
    assert failed.status_code >= 500
    assert post(http, {"messages": [user("More")], "thread": continue_from(reply_id)}).status_code == 200


def test_an_error_in_a_continue_names_the_message_as_the_client_sent_it(http: httpx.Client) -> None:
    """The conversation converted holds the thread's messages first; an error's path counts the client's own."""
    reply_id = post(http, {"messages": [user("Hi")], "thread": {"type": "create"}}).json()["id"]
    stray = {"type": "tool_result", "tool_use_id": "zz", "content": "x"}
    sent = {"messages": [{"role": "user", "content": [stray]}]}
    alone = post(http, sent).json()["error"]["message"]
    continued = post(http, {**sent, "thread": continue_from(reply_id)}).json()["error"]["message"]
    assert "messages.0.content.0" in alone and continued == alone


def test_a_failed_reply_starts_no_thread(http: httpx.Client) -> None:
    response = post(
        http, {"messages": [user("Hi")], "thread": {"type": "create"}, "stream": True}, "fail_mid"
    )
    assert response.status_code == 200
    frames = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    assert frames[-1]["type"] == "error"
    refusal(
        post(http, {"messages": [user("Hi")], "thread": continue_from(frames[0]["message"]["id"])}),
        404,
        "thread_not_found",
    )


def test_a_continue_in_flight_holds_its_reply(live: LiveServer, http: httpx.Client) -> None:
    reply_id = post(http, {"messages": [user("Hi")], "thread": {"type": "create"}}).json()["id"]
    body = {
        "model": MODEL,
        "max_tokens": 512,
        "messages": [user("Slowly")],
        "thread": continue_from(reply_id),
    }
    with (
        httpx.Client(base_url=live.url, timeout=10) as other,
        other.stream(
            "POST", "/v1/messages", json={**body, "stream": True}, headers={"X-Scenario": "slow"}
        ) as slow,
    ):
        assert slow.status_code == 200
        lines = slow.iter_lines()  # kept: a dropped iterator closes the stream
        next(lines)
        refusal(
            post(http, {"messages": [user("Meanwhile")], "thread": continue_from(reply_id)}),
            400,
            "thread_continue_in_flight",
        )
    # The client went away before the slow reply ended: nothing was kept, and the reply is free again.
    deadline = time.monotonic() + 5
    while True:
        response = post(http, {"messages": [user("Later")], "thread": continue_from(reply_id)})
        if response.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert response.status_code == 200, response.text


# -- the store -----------------------------------------------------------------------------------------------


def _body(**fields: Any) -> bytes:
    return json.dumps({"model": MODEL, "max_tokens": 8, **fields}).encode()


def _reply(text: str = "ok") -> dict[str, Any]:
    return {"stop_reason": "end_turn", "content": [{"type": "text", "text": text}]}


def test_a_chain_keeps_its_messages_once() -> None:
    threads = Threads()
    _, turn = threads.begin(_body(messages=[user("x" * 1000)], thread={"type": "create"}))
    assert turn is not None
    threads.finish(turn, "msg_1", _reply())
    one = threads._size
    for k in range(2, 6):
        document, turn = threads.begin(_body(messages=[user("y")], thread=continue_from(f"msg_{k - 1}")))
        assert turn is not None and isinstance(document, dict)
        assert len(document["messages"]) == 2 * k - 1
        threads.finish(turn, f"msg_{k}", _reply())
    # Four more short turns cost about their own size, not four more copies of the long first message.
    assert threads._size < one + 4 * 200
    assert len(threads) == 1  # the newest reply; the ones it continued are remembered as continued only
    with pytest.raises(ThreadError, match="continued already"):
        threads.begin(_body(messages=[user("z")], thread=continue_from("msg_2")))


def test_a_long_thread_does_not_push_other_threads_out() -> None:
    """The replies a thread continued take none of the places of kept replies: a thread of many turns leaves
    the other threads where they are."""
    threads = Threads(max_entries=3)
    for name in ("msg_other", "msg_t0"):
        _, turn = threads.begin(_body(messages=[user(name)], thread={"type": "create"}))
        assert turn is not None
        threads.finish(turn, name, _reply())
    for k in range(1, 20):
        _, turn = threads.begin(_body(messages=[user("y")], thread=continue_from(f"msg_t{k - 1}")))
        assert turn is not None
        threads.finish(turn, f"msg_t{k}", _reply())
    assert len(threads) == 2
    _, turn = threads.begin(_body(messages=[user("z")], thread=continue_from("msg_other")))
    assert turn is not None
    # the newest continued replies are still known as such; the oldest are forgotten
    with pytest.raises(ThreadError, match="continued already"):
        threads.begin(_body(messages=[user("z")], thread=continue_from("msg_t18")))
    with pytest.raises(ThreadNotFound):
        threads.begin(_body(messages=[user("z")], thread=continue_from("msg_t0")))
    assert len(threads._continued) == 3


def test_the_store_is_bounded() -> None:
    threads = Threads(max_entries=2)
    for k in range(4):
        _, turn = threads.begin(_body(messages=[user(str(k))], thread={"type": "create"}))
        assert turn is not None
        threads.finish(turn, f"msg_{k}", _reply())
    assert len(threads) == 2
    with pytest.raises(Exception, match="no conversation is kept") as info:
        threads.begin(_body(messages=[user("x")], thread=continue_from("msg_0")))
    assert info.value.status_code == 404  # type: ignore[attr-defined]
    small = Threads(max_bytes=100)
    _, turn = small.begin(_body(messages=[user("z" * 200)], thread={"type": "create"}))
    assert turn is not None
    small.finish(turn, "msg_big", _reply())
    assert len(small) == 0
    with pytest.raises(ValueError, match="max_entries"):
        Threads(max_entries=-1)
    with pytest.raises(TypeError, match="max_bytes"):
        Threads(max_bytes=1.5)  # type: ignore[arg-type]


def test_a_dropped_turn_lets_its_reply_go() -> None:
    threads = Threads()
    _, turn = threads.begin(_body(messages=[user("a")], thread={"type": "create"}))
    assert turn is not None
    threads.finish(turn, "msg_a", _reply())
    _, held = threads.begin(_body(messages=[user("b")], thread=continue_from("msg_a")))
    with pytest.raises(Exception, match="another request"):
        threads.begin(_body(messages=[user("c")], thread=continue_from("msg_a")))
    del held
    gc.collect()
    _, again = threads.begin(_body(messages=[user("c")], thread=continue_from("msg_a")))
    assert again is not None
    # A released turn's finaliser does not free a reply another turn holds by then.
    threads.release(again)
    _, third = threads.begin(_body(messages=[user("d")], thread=continue_from("msg_a")))
    del again
    gc.collect()
    with pytest.raises(Exception, match="another request"):
        threads.begin(_body(messages=[user("e")], thread=continue_from("msg_a")))
    assert third is not None


def test_a_reply_that_did_not_end_is_not_kept() -> None:
    threads = Threads()
    _, turn = threads.begin(_body(messages=[user("a")], thread={"type": "create"}))
    assert turn is not None
    threads.finish(turn, "msg_a", {"stop_reason": None, "content": []})
    assert len(threads) == 0


def test_bodies_without_a_thread_pass_through() -> None:
    threads = Threads()
    for body in (
        _body(messages=[user("a")]),
        b"not json",
        b"[1]",
        _body(messages="x", thread={"type": "create"}),
    ):
        _out, turn = threads.begin(body)
        assert turn is None
    escaped = b'{"model": "m", "max_tokens": 8, "messages": [], "\\u0074hread": {"type": "create"}}'
    assert threads.begin(escaped)[1] is not None


def test_a_reply_forgotten_while_continued_starts_a_new_entry() -> None:
    threads = Threads(max_entries=2)
    _, first = threads.begin(_body(messages=[user("a")], thread={"type": "create"}))
    assert first is not None
    threads.finish(first, "msg_a", _reply())
    _, running = threads.begin(_body(messages=[user("b")], thread=continue_from("msg_a")))
    assert running is not None
    for name in ("msg_x", "msg_y"):  # two other threads push msg_a out
        _, other = threads.begin(_body(messages=[user(name)], thread={"type": "create"}))
        assert other is not None
        threads.finish(other, name, _reply())
    assert len(threads) == 2
    threads.finish(running, "msg_b", _reply("b"))
    document, turn = threads.begin(_body(messages=[user("c")], thread=continue_from("msg_b")))
    assert turn is not None and isinstance(document, dict)
    assert [m["role"] for m in document["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert threads._size == sum(entry.size for entry in threads._entries.values())


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["create", "continue", "finish", "release", "drop", "cut"]),
        st.integers(0, 5),
        st.text(max_size=30),
    ),
    max_size=40,
)


@given(ops=_OPS, entries=st.integers(0, 4), size=st.integers(0, 3000))
def test_any_sequence_keeps_the_books(ops: list[tuple[str, int, str]], entries: int, size: int) -> None:
    """Whatever turns begin, end, fail or are dropped: the sizes add up, the bounds hold, each reply is held by
    at most one turn, and a reply no running turn holds can be continued (or says why not)."""
    threads = Threads(max_entries=entries, max_bytes=size)
    ids: list[str] = []
    running: list[ThreadTurn] = []
    for op, pick, text in ops:
        if op == "create":
            _, turn = threads.begin(_body(messages=[user(text)], thread={"type": "create"}))
            assert turn is not None
            running.append(turn)
        elif op == "continue" and ids:
            previous = ids[pick % len(ids)]
            try:
                _, turn = threads.begin(_body(messages=[user(text)], thread=continue_from(previous)))
            except ThreadError as exc:
                assert exc.details is not None
                code = exc.details["error_code"]
                entry = threads._entries.get(previous)
                expected = (
                    "thread_continue_in_flight"
                    if entry is not None
                    else "thread_already_continued"
                    if previous in threads._continued
                    else "thread_not_found"
                )
                assert code == expected
            else:
                assert turn is not None
                running.append(turn)
        elif op in ("finish", "release", "drop", "cut") and running:
            turn = running.pop(pick % len(running))
            if op == "finish":
                ids.append(f"msg_{len(ids)}")
                threads.finish(turn, ids[-1], _reply(text))
            elif op == "cut":  # an answer that did not end
                threads.finish(turn, "msg_cut", {"stop_reason": None, "content": []})
            elif op == "release":
                threads.release(turn)
            del turn  # a dropped turn's finaliser runs here (no cycle holds it)
        assert threads._size == sum(entry.size for entry in threads._entries.values())
        assert len(threads) <= entries and threads._size <= size
        assert "msg_cut" not in threads._entries
        assert len(threads._continued) <= entries and not set(threads._continued) & set(threads._entries)
        holders = [e.holder for e in threads._entries.values() if e.holder is not None]
        assert len(holders) == len(set(map(id, holders)))
        assert set(map(id, holders)) <= {id(t.token) for t in running}
