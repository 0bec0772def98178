"""Reading a live server's answer is bounded: a stream that never ends, or a server that trickles or stalls,
fails the exchange with a clear error instead of hanging the test or filling memory (loopback servers only)."""

from __future__ import annotations

import asyncio
import io
import json
import ssl
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dscodec.cli import main
from dscodec.testing import TranscriptError, lint, load_transcript, verify
from dscodec.testing import live as live_module
from dscodec.testing.live import record, send
from tests.server.conftest import LiveServer

FRAME = b'data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\n'
BODY = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
Send = Callable[[dict[str, Any]], Awaitable[None]]


def streaming_app(frames: int | None, pause: float, *, silent_after: int | None = None) -> Any:
    """An ASGI server answering every POST with an event stream: ``frames`` frames (None: without end), each
    after ``pause`` seconds; with ``silent_after``, it then sends nothing more and keeps the stream open."""

    async def app(scope: dict[str, Any], receive: Any, send: Send) -> None:
        if scope["type"] != "http":
            return
        gone = asyncio.Event()

        async def watch() -> None:  # the client leaving ends the stream
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.ensure_future(watch())
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        sent = 0
        while frames is None or sent < frames:
            if silent_after is not None and sent == silent_after:
                await gone.wait()
            if gone.is_set():
                return
            await send({"type": "http.response.body", "body": FRAME, "more_body": True})
            sent += 1
            await asyncio.sleep(pause)
        watcher.cancel()
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})

    return app


@pytest.fixture
def serve() -> Iterator[Callable[[Any], str]]:
    servers: list[LiveServer] = []

    def start(app: Any) -> str:
        server = LiveServer(app).__enter__()
        servers.append(server)
        return server.url + "/v1/chat/completions"

    yield start
    for server in servers:
        server.__exit__()


def test_an_answer_within_the_bounds_is_read_whole(serve: Callable[[Any], str]) -> None:
    url = serve(streaming_app(20, 0))
    size = 20 * len(FRAME) + len(b"data: [DONE]\n\n")
    exchange = send(url, BODY, max_bytes=size)  # exactly the answer's size
    assert exchange.frames is not None and len(exchange.frames) == 21
    with pytest.raises(TranscriptError, match=f"passed {size - 1} bytes"):
        send(url, BODY, max_bytes=size - 1)


def test_the_tls_settings_are_made_once_for_every_exchange(
    serve: Callable[[Any], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx reads the certificate authorities' file for each client made without TLS settings (tens of
    milliseconds); ``send`` makes its settings once and hands them to every client."""
    import httpx

    made: list[ssl.SSLContext] = []

    def create_ssl_context(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(real(*args, **kwargs))
        return made[-1]

    real = httpx.create_ssl_context
    clients: list[Any] = []
    client_type = httpx.Client

    def client(*args: Any, **kwargs: Any) -> httpx.Client:
        clients.append(kwargs.get("verify"))
        return client_type(*args, **kwargs)

    monkeypatch.setattr(httpx, "create_ssl_context", create_ssl_context)
    monkeypatch.setattr(httpx, "Client", client)
    live_module._tls_settings.cache_clear()
    try:
        url = serve(streaming_app(2, 0))
        for _ in range(3):
            assert send(url, BODY).frames is not None
    finally:
        live_module._tls_settings.cache_clear()
    assert len(made) == 1 and clients == [made[0]] * 3


def test_a_stream_that_never_ends_fails_at_the_size_bound(serve: Callable[[Any], str]) -> None:
    url = serve(streaming_app(None, 0))
    with pytest.raises(TranscriptError, match="passed 100000 bytes and had not ended"):
        send(url, BODY, max_bytes=100_000)
    with pytest.raises(TranscriptError, match="passed 100000 bytes"):
        record(url, BODY, max_bytes=100_000)


def test_a_trickling_stream_fails_at_the_deadline(serve: Callable[[Any], str]) -> None:
    url = serve(streaming_app(None, 0.05))
    start = time.monotonic()
    with pytest.raises(TranscriptError, match="had not ended after 0.5 seconds"):
        send(url, BODY, timeout=0.5)
    assert time.monotonic() - start < 5


def test_a_stalled_stream_fails_at_the_deadline(serve: Callable[[Any], str]) -> None:
    url = serve(streaming_app(None, 0, silent_after=3))
    start = time.monotonic()
    with pytest.raises(TranscriptError, match="had not ended after 0.5 seconds"):
        send(url, BODY, timeout=0.5)
    assert time.monotonic() - start < 5


def test_invalid_utf8_becomes_replacement_characters(serve: Callable[[Any], str]) -> None:
    async def app(scope: dict[str, Any], receive: Any, send_: Send) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"application/json")]
        await send_({"type": "http.response.start", "status": 200, "headers": headers})
        await send_({"type": "http.response.body", "body": b'{"x": "a\xffb"}'})

    exchange = send(serve(app), {**BODY, "stream": False})
    assert exchange.text == '{"x": "a\ufffdb"}' and exchange.response == {"x": "a\ufffdb"}


def _cli(*argv: str) -> int:
    return main(list(argv), stdout=io.StringIO())


def test_the_commands_take_the_bounds(
    serve: Callable[[Any], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = serve(streaming_app(None, 0))
    request = tmp_path / "body.json"
    request.write_text(json.dumps(BODY), encoding="utf-8")
    out = tmp_path / "t.jsonl"
    assert _cli("record", "--url", url, "--body", str(request), "-o", str(out), "--max-bytes", "5000") == 2
    assert "passed 5000 bytes" in capsys.readouterr().err and not out.exists()
    assert _cli("lint", "--url", url, "--body", str(request), "--timeout", "0.3") == 2
    assert "had not ended after 0.3 seconds" in capsys.readouterr().err
    # The bounds go with a live answer only, and must be sensible.
    saved = tmp_path / "answer.sse"
    saved.write_bytes(FRAME)
    assert _cli("lint", str(saved), "--protocol", "chat_completions", "--timeout", "3") == 2
    assert "go with --url" in capsys.readouterr().err
    for bad in (["--timeout", "0"], ["--timeout", "inf"], ["--timeout", "soon"], ["--max-bytes", "0"]):
        with pytest.raises(SystemExit):
            main(["record", "--url", url, "--body", str(request), "-o", str(out), *bad])
        assert "expected" in capsys.readouterr().err


def answering_app(body: bytes, content_type: bytes = b"text/event-stream", *, status: int = 200) -> Any:
    """An ASGI server answering every POST with ``body`` (and ``status``)."""

    async def app(scope: dict[str, Any], receive: Any, send_: Send) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", content_type)]
        await send_({"type": "http.response.start", "status": status, "headers": headers})
        await send_({"type": "http.response.body", "body": body})

    return app


#: Streams no client could read as their protocol's: recording them keeps them as they came.
UNREADABLE = {
    "messages": [
        {"type": "message_start", "message": "not an object"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}},
        {"type": "message_stop"},
    ],
    "responses": [
        {"type": "response.created", "sequence_number": 0, "response": {"output": 7, "usage": "x"}},
        {"type": "response.completed", "sequence_number": 1, "response": {"output": [1, {"type": 2}]}},
    ],
    "chat_completions": [
        {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": "x"}]},
        {"id": "c", "object": "chat.completion.chunk", "choices": "none", "usage": [1]},
    ],
}


@pytest.mark.parametrize("protocol", sorted(UNREADABLE))
def test_an_unreadable_stream_is_recorded_as_it_came(serve: Callable[[Any], str], protocol: str) -> None:
    events = UNREADABLE[protocol]
    body = b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in events)
    url = serve(answering_app(body)).removesuffix("/v1/chat/completions")
    request = {"model": "DeepSeek-V4-Pro", "stream": True, "max_tokens": 64}
    request |= (
        {"input": "Hi"} if protocol == "responses" else {"messages": [{"role": "user", "content": "Hi"}]}
    )
    transcript = record(url, request, protocol=protocol)  # type: ignore[arg-type]
    assert transcript.frames is not None and [f.json() for f in transcript.frames] == events
    assert lint(protocol, transcript)  # type: ignore[arg-type]
    # Its replay fails: dscodec's answer is not the recorded one, or there is no answer it could read.
    differences = verify(transcript)
    assert differences
    if transcript.accumulated is None:
        assert differences[0].path == "accumulated" and transcript.backend == []


@pytest.mark.parametrize(
    ("body", "finding"),
    [
        (b'{"id":"x","object":"chat.comp', "GEN001"),
        (b"<html>Oops</html>", "GEN008"),
        (b"[1, 2, 3]", "GEN001"),  # JSON, but no object: a body, not a stream
    ],
)
def test_a_body_that_is_no_json_object_is_recorded_as_it_came(
    serve: Callable[[Any], str], tmp_path: Path, body: bytes, finding: str
) -> None:
    """A body cut short, an HTML page, a JSON array: kept as their text (never a made-up error body), so the
    transcript's lint reports them and its replay fails; the text survives writing and reading."""
    from dscodec.testing import dumps_transcript, loads_transcript

    url = serve(answering_app(body, b"application/json"))
    transcript = record(url, {**BODY, "stream": False})
    assert transcript.response is None and transcript.response_text == body.decode()
    again = loads_transcript(dumps_transcript(transcript))
    assert again.response_text == body.decode() and again.response is None
    assert finding in {f.code for f in lint("chat_completions", again)}
    assert verify(again)
    path = tmp_path / "broken.jsonl"
    path.write_text(dumps_transcript(transcript), encoding="utf-8")
    assert _cli("lint", str(path)) == 1


@pytest.mark.parametrize("stream", [True, False])
def test_a_page_that_is_no_answer_gets_no_backend_lines_and_fails_its_replay(
    serve: Callable[[Any], str], tmp_path: Path, stream: bool
) -> None:
    """An HTML page answering a streamed request used to be recorded as "a JSON body" with made-up backend lines
    (no usage, an empty answer, a stop), and its replay kept the page's text, so it passed. Nothing in such a
    body says what the model wrote: no backend lines, and every replay fails at the response."""
    url = serve(answering_app(b"<html>oops</html>", b"text/html"))
    request = tmp_path / "b.json"
    request.write_text(json.dumps({**BODY, "stream": stream}), encoding="utf-8")
    path = tmp_path / "html.jsonl"
    said = io.StringIO()
    assert main(["record", "--url", url, "--body", str(request), "-o", str(path)], stdout=said) == 0
    line = said.getvalue()
    assert "HTTP 200, a body that is neither an event stream nor a JSON object (17 characters" in line
    assert "JSON body" not in line and "no backend lines derived from it, so its replay fails" in line
    assert ("not the stream the request asked for" in line) == stream
    transcript = load_transcript(path)
    assert transcript.backend == [] and transcript.response_text == "<html>oops</html>"
    assert [d.path for d in verify(transcript)] == ["response"]
    assert _cli("replay", str(path)) == 1
    assert _cli("lint", str(path)) == 1


def test_record_says_what_it_recorded(serve: Callable[[Any], str], tmp_path: Path) -> None:
    """A JSON answer to a streamed request, and a stream no client can read, said as they are."""
    request = tmp_path / "b.json"
    request.write_text(json.dumps(BODY), encoding="utf-8")
    path = tmp_path / "t.jsonl"
    said = io.StringIO()
    url = serve(
        answering_app(b'{"id": "x", "object": "chat.completion", "choices": []}', b"application/json")
    )
    assert main(["record", "--url", url, "--body", str(request), "-o", str(path)], stdout=said) == 0
    assert "HTTP 200, a JSON body, not the stream the request asked for -> " in said.getvalue()
    events = UNREADABLE["chat_completions"]
    stream = b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in events)
    said = io.StringIO()
    assert (
        main(
            ["record", "--url", serve(answering_app(stream)), "--body", str(request), "-o", str(path)],
            stdout=said,
        )
        == 0
    )
    assert (
        "HTTP 200, 2 frames that are no stream of the protocol; no backend lines derived" in said.getvalue()
    )
    # A folder is no file to write to: named, exit status 2.
    assert _cli("record", "--url", url, "--body", str(request), "-o", str(tmp_path)) == 2


def test_lint_url_reports_an_answer_that_is_no_success(serve: Callable[[Any], str], tmp_path: Path) -> None:
    """A 401 in the protocol's error shape lints clean, so ``lint --url`` used to print nothing and exit 0."""
    refusal = (
        b'{"error": {"message": "no API key", "type": "invalid_request_error", "param": null, "code": null}}'
    )
    url = serve(answering_app(refusal, b"application/json", status=401))
    request = tmp_path / "b.json"
    request.write_text(json.dumps(BODY), encoding="utf-8")
    said = io.StringIO()
    assert main(["lint", "--url", url, "--body", str(request)], stdout=said) == 1
    assert (
        said.getvalue()
        == f"{url}: HTTP 401: an error answer, not a response to the request (its body is linted)\n"
    )
    assert lint("chat_completions", refusal.decode()) == []  # the body itself is well formed


def test_the_commands_say_how_to_install_httpx(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "httpx", None)
    request = tmp_path / "b.json"
    request.write_text(json.dumps(BODY), encoding="utf-8")
    url = "http://127.0.0.1:9/v1/chat/completions"
    assert _cli("record", "--url", url, "--body", str(request), "-o", str(tmp_path / "t.jsonl")) == 2
    assert capsys.readouterr().err == "dscodec: record needs httpx: pip install 'dscodec[testing]'\n"
    assert _cli("lint", "--url", url, "--body", str(request)) == 2
    assert capsys.readouterr().err == "dscodec: lint --url needs httpx: pip install 'dscodec[testing]'\n"


def test_a_transcript_that_is_not_utf8_is_refused_by_name_not_skipped(tmp_path: Path) -> None:
    from dscodec.testing import Finish, Text, Transcript, dumps_transcript, load_transcript
    from dscodec.testing.transcript import is_transcript

    good = Transcript("chat_completions", dict(BODY), backend=[Text("Hi", 1), Finish("stop")])
    lines = dumps_transcript(good).encode().split(b"\n")
    lines[1] = lines[1].replace(b"Hi", b"H\xffi")
    path = tmp_path / "corrupt.jsonl"
    path.write_bytes(b"\n".join(lines))
    assert is_transcript(path)  # its header is whole: it is a transcript, and a broken one
    with pytest.raises(TranscriptError, match="not UTF-8 text"):
        load_transcript(path)
    assert _cli("lint", str(path)) == 2
    assert _cli("replay", str(tmp_path)) == 2


#: Bodies a broken server may send: valid JSON that Python reads into values JSON cannot write back (a lone
#: surrogate escape; numbers past the double range, NaN), and such a stream.
_CHAT = '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"DeepSeek-V4-Pro","choices":[{"index":0,'
BROKEN_ANSWERS = {
    "surrogate-json": (
        _CHAT
        + '"message":{"role":"assistant","content":"bad \\ud800 x"},"finish_reason":"stop","logprobs":null}],'
        '"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}',
        b"application/json",
    ),
    "bigint": (
        _CHAT + '"message":{"role":"assistant","content":"hi"},"finish_reason":"stop","logprobs":null}],'
        '"usage":{"prompt_tokens":99999999999999999999999,"completion_tokens":1e400,"total_tokens":NaN}}',
        b"application/json",
    ),
    "surrogate-sse": (
        (
            'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"DeepSeek-V4-Pro","choices":[{'
            '"index":0,"delta":{"role":"assistant","content":"bad \\udc00"},"finish_reason":"stop"}]}\n\n'
            "data: [DONE]\n\n"
        ),
        b"text/event-stream",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN_ANSWERS))
def test_an_answer_python_reads_into_values_json_cannot_hold_is_recorded(
    serve: Callable[[Any], str], tmp_path: Path, case: str
) -> None:
    """``dscodec record`` used to fail with a UnicodeEncodeError traceback and leave an empty file (a surrogate), or
    a ValueError traceback (``1e400``, ``NaN``). The answer is kept as it came and reads back as recorded."""
    answer, content_type = BROKEN_ANSWERS[case]
    url = serve(answering_app(answer.encode(), content_type))
    request = tmp_path / "b.json"
    request.write_text(json.dumps({**BODY, "stream": False}), encoding="utf-8")
    path = tmp_path / f"{case}.jsonl"
    assert _cli("record", "--url", url, "--body", str(request), "-o", str(path)) == 0
    transcript = load_transcript(path)
    if transcript.frames is None:
        assert json.dumps(transcript.response) == json.dumps(json.loads(answer))
    else:
        assert [f.json() for f in transcript.frames if not f.is_done] == [
            json.loads(answer.split("\n")[0][6:])
        ]
    assert _cli("replay", str(path)) == 1  # a broken answer, which dscodec's does not match


def test_the_live_functions_check_their_arguments_before_sending() -> None:
    """An unknown protocol used to be a KeyError, a url that is no str an AttributeError from the URL parser,
    headers that are no mapping an AttributeError, a header value that is not ASCII a bare UnicodeEncodeError."""
    from dscodec.testing import Transcript
    from dscodec.testing.live import endpoint, recheck

    url = "http://127.0.0.1:9/v1/chat/completions"  # nothing listens there: nothing may be sent
    cases: list[tuple[Callable[[], object], type[Exception], str]] = [
        (lambda: send(url, BODY, protocol="chat"), ValueError, "unknown protocol 'chat'; expected one of"),  # type: ignore[arg-type]
        (lambda: record(url, BODY, protocol="grpc"), ValueError, "unknown protocol 'grpc'"),  # type: ignore[arg-type]
        (lambda: endpoint("http://x", "chat"), ValueError, "chat_completions, responses, messages"),  # type: ignore[arg-type]
        (lambda: endpoint("http://x", 5), TypeError, "protocol must be a str or None, not int"),  # type: ignore[arg-type]
        (lambda: endpoint(5), TypeError, "url must be a str, not int"),  # type: ignore[arg-type]
        (lambda: send(5, BODY), TypeError, "url must be a str, not int"),  # type: ignore[arg-type]
        (lambda: send(None, BODY), TypeError, "url must be a str, not NoneType"),  # type: ignore[arg-type]
        (lambda: record(b"http://x", BODY), TypeError, "url must be a str, not bytes"),  # type: ignore[arg-type]
        (lambda: send(url, BODY, headers=[("a", "b")]), TypeError, "headers must be a mapping"),  # type: ignore[arg-type]
        (lambda: send(url, BODY, headers={"a": 1}), TypeError, "header 'a': its value must be a str, not int"),  # type: ignore[dict-item]
        (lambda: send(url, BODY, headers={1: "a"}), TypeError, "a header name must be a str"),  # type: ignore[dict-item]
        (lambda: send(url, BODY, headers={"x-key": "clé"}), ValueError, "header 'x-key': its value holds 'é'"),
        (lambda: send(url, BODY, headers={"x-key": "a\r\nb: c"}), ValueError, "no line breaks"),
        (lambda: record(url, BODY, name=5), TypeError, "name must be a str, not int"),  # type: ignore[arg-type]
        (
            lambda: recheck(Transcript("chat_completions", BODY), url, headers={"x": "é"}),
            ValueError,
            "its value holds 'é'",
        ),
        (lambda: recheck(Transcript("chat_completions", BODY), url, ignore=[""]), ValueError, "an ignore rule"),
    ]  # fmt: skip
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


def test_record_warns_of_an_error_answer_and_lint_reports_it(
    serve: Callable[[Any], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong URL's 404 used to be saved with exit status 0, replayed as a pass and linted clean, while
    ``lint --url`` on the same URL said "HTTP 404: an error answer". It is still saved (it is what the server
    said), with a warning and exit status 1; a saved transcript's lint reports its status as ``--url`` does."""
    refusal = b'{"error": {"message": "no such route", "type": "not_found", "param": null, "code": null}}'
    url = serve(answering_app(refusal, b"application/json", status=404))
    request = tmp_path / "b.json"
    request.write_text(json.dumps(BODY), encoding="utf-8")
    path = tmp_path / "saved.jsonl"
    said = io.StringIO()
    assert main(["record", "--url", url, "--body", str(request), "-o", str(path)], stdout=said) == 1
    assert said.getvalue().startswith(f"recorded chat_completions from {url}: HTTP 404, a JSON body")
    err = capsys.readouterr().err
    assert err.startswith("dscodec: warning: the server answered HTTP 404") and len(err.splitlines()) == 1
    assert load_transcript(path).status == 404  # saved all the same
    said = io.StringIO()
    assert main(["lint", str(path)], stdout=said) == 1
    assert said.getvalue() == (
        f"{path}: HTTP 404: an error answer, not a response to the request (its body is linted)\n"
    )


def test_record_checks_where_it_writes_before_sending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output path that cannot be written used to be found only after the request had been sent (a request
    that may cost money, or change the server's state)."""
    request = tmp_path / "b.json"
    request.write_text(json.dumps(BODY), encoding="utf-8")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    url = "http://127.0.0.1:9/v1/chat/completions"  # nothing listens: a request sent would say so instead
    for output, message in [
        (tmp_path / "file" / "x.jsonl", "file is not a folder"),
        (tmp_path / "file" / "deeper" / "x.jsonl", "file is not a folder"),
        (tmp_path, "it is a folder"),
    ]:
        assert _cli("record", "--url", url, "--body", str(request), "-o", str(output)) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"dscodec: cannot write {output}: ") and message in err, err
        assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "url",
    [
        "notaurl/v1/messages",
        "ftp://x/v1/messages",
        "http:///v1/messages",
        "http://[::1/v1/messages",
        "http://h:x/v1/messages",
    ],
)
def test_a_url_that_is_no_http_address_is_refused_before_sending(url: str) -> None:
    from dscodec.testing import Transcript
    from dscodec.testing.live import endpoint, recheck, record, send

    with pytest.raises(ValueError, match="url"):
        endpoint(url)
    with pytest.raises(ValueError, match="url"):
        send(url, {"model": "DeepSeek-V4-Pro"})
    with pytest.raises(ValueError, match="url"):
        record(url, {"model": "DeepSeek-V4-Pro"})
    with pytest.raises(
        ValueError, match="url"
    ):  # nothing recorded to compare with: the url is checked all the same
        recheck(Transcript("messages", {"model": "DeepSeek-V4-Pro"}, []), url)


def test_a_body_naming_a_key_twice_is_recorded_as_its_text(serve: Callable[[Any], str]) -> None:
    """A JSON body naming a key twice used to be recorded as its parsed object, which keeps one of the two
    values: it is recorded as the text it came as, which reads back as it was."""
    from dscodec.testing import dumps_transcript, loads_transcript

    body = b'{"id":"chatcmpl-1","object":"chat.completion","object":"list","choices":[]}'
    url = serve(answering_app(body, b"application/json"))
    transcript = record(url, {**BODY, "stream": False})
    assert transcript.response is None and transcript.response_text == body.decode()
    assert loads_transcript(dumps_transcript(transcript)).response_text == body.decode()
