"""The stream holds back only what is still undecided.

After any pushes, the reasoning and the content sent so far must be exactly the text that every possible rest of
the output agrees on: no more (that would be revisiting text already sent), and no less (that would be holding
back text that no marker, dropped newline run, fence or stop sequence can take any more). "Every possible rest"
is checked over the rests that can still change something: the end of the output, plain text, each marker's
spelling and each of its proper suffixes (completing a held start), a whole tool-call block, the end-of-sentence
token, the fences of JSON mode and the request's stop sequences, each followed by text or by nothing.

The outputs are built from pieces of markers, newlines and fences, as text chunks or as token ids (with log
probabilities or without). The example
count comes from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import dscodec
from dscodec.vocab import Vocabulary

VOCAB = Vocabulary.load(None)
EOS = "<｜end▁of▁sentence｜>"
BLOCK = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
PIECES = [
    "a", " ", "\n", "\n\n", "\r", "<", "</", "</th", "</think>", "｜", "｜DS", "｜DSML｜", "<｜", "<｜end",
    "`", "```", "{", "}", "E", "EN", "END", ">", "think", "x",
]  # fmt: skip
MARKERS = [
    "</think>",
    "｜DSML｜",
    EOS,
    "<｜DSML｜tool_calls>\n",
    "END",
    "\n\n",
    "```json\n",
    "```\n",
    "\n```",
]


def _rests() -> list[str]:
    rests = ["", "z", "\n", "\nz", "<", BLOCK, "\n" + BLOCK, "{"]
    for marker in MARKERS:
        for k in range(len(marker)):
            rests += [marker[k:], marker[k:] + "z"]
    rests += [BLOCK[k:] for k in range(1, 20)]
    return list(dict.fromkeys(rests))


RESTS = _rests()


def _bodies() -> list[dict[str, Any]]:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    bodies = []
    for tools in (False, True):
        for thinking in (True, False):
            for stop in (None, ["END"], ["\n\n"]):
                body: dict[str, Any] = {
                    "model": "DeepSeek-V4-Pro",
                    "messages": [{"role": "user", "content": "Hi"}],
                }
                if not thinking:
                    body["thinking"] = {"type": "disabled"}
                if tools:
                    body["tools"] = [tool]
                if stop:
                    body["stop"] = stop
                bodies.append(body)
    for stop in (None, ["END"], ["\n\n"]):
        body = {
            "model": "DeepSeek-V4-Pro",
            "messages": [{"role": "user", "content": "Reply in JSON"}],
            "thinking": {"type": "disabled"},
            "response_format": {"type": "json_object"},
        }
        if stop:
            body["stop"] = stop
        bodies.append(body)
    return bodies


REQUESTS = [dscodec.convert("chat_completions", body) for body in _bodies()]


def _push(processor: dscodec.StreamProcessor, chunk: str, kind: str) -> list[Any]:
    if kind == "text":
        return processor.push_text(chunk, 1)
    ids = VOCAB.full.encode(chunk, add_special_tokens=False).ids
    if not ids:
        return []
    return processor.push_tokens(ids, [-0.5] * len(ids) if kind == "ids with logprobs" else None)


def _texts(events: list[Any]) -> tuple[str, str]:
    reasoning = content = ""
    for event in events:
        for choice in event.to_dict().get("choices") or []:
            reasoning += choice["delta"].get("reasoning_content") or ""
            content += choice["delta"].get("content") or ""
    return reasoning, content


def _run(
    request: dscodec.ConversationRequest, chunks: list[str], kind: str, *, end: bool
) -> tuple[Any, bool]:
    processor = dscodec.StreamProcessor(request, response_id="x", model="m")
    processor.start(1, 0)
    events: list[Any] = []
    for chunk in chunks:
        if processor.finished:
            break
        events += _push(processor, chunk, kind)
    finished = processor.finished
    if end and not finished:
        events += processor.finish("stop")
    return _texts(events), finished


def _common(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


@given(
    st.sampled_from(range(len(REQUESTS))),
    st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join), min_size=1, max_size=4),
    st.sampled_from(["text", "ids", "ids with logprobs"]),
)
def test_only_what_is_undecided_is_held_back(request_index: int, chunks: list[str], kind: str) -> None:
    request = REQUESTS[request_index]
    (sent_reasoning, sent_content), finished = _run(request, chunks, kind, end=False)
    if finished:  # a stop sequence ended the output: nothing is held
        return
    decided: tuple[str, str] | None = None
    for rest in RESTS:
        (reasoning, content), _ = _run(request, [*chunks, rest], kind, end=True)
        # Never revisited: whatever comes next, what was sent stays the start of the output.
        assert reasoning.startswith(sent_reasoning), (rest, reasoning, sent_reasoning)
        assert content.startswith(sent_content), (rest, content, sent_content)
        decided = (
            (reasoning, content)
            if decided is None
            else (_common(decided[0], reasoning), _common(decided[1], content))
        )
    assert decided is not None
    # Nothing held back that every rest agrees on.
    assert (sent_reasoning, sent_content) == decided, chunks


#: The start of a block, up to the value of a ``string="true"`` parameter.
VALUE = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">'
VALUE_PIECES = [
    *PIECES, "</｜DS", "</｜DSML｜", "</｜DSML｜param", "parameter>", '"', "\\",
]  # fmt: skip
CLOSE = "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"


def _value_rests() -> list[str]:
    rests = ["", "z", "<", "\n", "</think>z"]
    for marker in (CLOSE, "｜DSML｜", "</think>", EOS, "</｜DSML｜invoke>\n"):
        for k in range(len(marker)):
            rests += [marker[k:], marker[k:] + "z"]
    return list(dict.fromkeys(rests))


VALUE_RESTS = _value_rests()
TOOLS = dscodec.convert(
    "chat_completions",
    {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Hi"}],
        "thinking": {"type": "disabled"},
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    },
)


def _arguments(chunks: list[str], kind: str, *, end: bool) -> str:
    processor = dscodec.StreamProcessor(TOOLS, response_id="x", model="m")
    processor.start(1, 0)
    events: list[Any] = []
    for chunk in chunks:
        events += _push(processor, chunk, kind)
    if end:
        events += processor.finish("stop")
    return "".join(
        call["function"].get("arguments") or ""
        for event in events
        for choice in event.to_dict().get("choices") or []
        for call in choice["delta"].get("tool_calls") or []
    )


@given(
    st.lists(
        st.lists(st.sampled_from(VALUE_PIECES), min_size=1, max_size=3).map("".join), min_size=1, max_size=3
    ),
    st.sampled_from(["text", "ids"]),
)
def test_a_string_argument_holds_back_only_what_may_close_it(chunks: list[str], kind: str) -> None:
    """The same for the arguments of a call, in a ``string="true"`` value: only what may still begin its closing
    tag (or the end-of-sentence token) waits."""
    sent = _arguments([VALUE, *chunks], kind, end=False)
    decided: str | None = None
    for rest in VALUE_RESTS:
        arguments = _arguments([VALUE, *chunks, rest], kind, end=True)
        assert arguments.startswith(sent), (rest, arguments, sent)
        decided = arguments if decided is None else _common(decided, arguments)
    assert sent == decided, chunks
