"""Property: text a client controls never becomes a special token id.

Every user-controlled field of a Chat Completions request (message contents of every role, reasoning, tool
descriptions and schemas, tool-call argument keys and values, tool results, reminders) is filled with text that
spells added tokens of the tokenizer. The special ids in the encoded prompt must be exactly the ones the template
placed (one per special span, in order), and the number of special spans must not change when the same fields
hold harmless text instead.

The one exception is the grounding tokens in an assistant turn's content and reasoning (the reference keeps them
as tokens there: docs/reference-notes.md); the assistant fields here therefore draw every spelling but those, and
``test_assistant_grounding_spellings_are_the_only_specials`` covers the exception itself.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import dscodec
from dscodec.prompt.dialects import dialect_for
from dscodec.vocab import Vocabulary
from tests.support.fixtures import encoder

_VOCAB = Vocabulary.load(None)
SPELLINGS = sorted(_VOCAB.added) + [
    "<｜System｜>",
    "<｜DSML｜tool_calls>",
    "</｜DSML｜invoke>",
    "<｜DSML｜ calls>",
]

GROUNDING = dialect_for("v4").assistant_specials
assert set(GROUNDING) == set(dialect_for("v4.1").assistant_specials)


def _texts(spellings: list[str]) -> st.SearchStrategy[str]:
    return st.lists(
        st.one_of(st.sampled_from(spellings), st.text(alphabet="ab \n<>｜/▁", max_size=6)),
        min_size=1,
        max_size=5,
    ).map("".join)


texts = _texts(SPELLINGS)
#: Text for assistant content and reasoning: every spelling but the grounding ones, and no fragments that could
#: join into one (the alphabet above can spell "<｜ref｜>" only with letters it lacks).
assistant_texts = _texts([s for s in SPELLINGS if s not in GROUNDING])


def _harmless(text: str) -> str:
    return "".join("x" if ch in "<>｜▁" else ch for ch in text)


@st.composite
def requests(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A request full of special spellings, and the same request with every spelling defused."""
    fields = [draw(assistant_texts if index in (3, 4) else texts) for index in range(12)]
    model = draw(st.sampled_from(["DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash"]))
    thinking = draw(st.sampled_from(["enabled", "disabled"]))
    with_tools = draw(st.booleans())

    def build(f: list[str]) -> dict[str, Any]:
        arguments = json.dumps({f[5]: f[6], "n": [f[7]]}, ensure_ascii=False)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": f[0]},
            {"role": "user", "content": [{"type": "text", "text": f[1]}, {"type": "text", "text": f[2]}]},
            {
                "role": "assistant",
                "content": f[3],
                "reasoning_content": f[4],
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "tool", "arguments": arguments}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": f[8]},
            {"role": "latest_reminder", "content": f[9]},
            {"role": "user", "content": f[10]},
        ]
        body: dict[str, Any] = {"model": model, "thinking": {"type": thinking}, "messages": messages}
        if with_tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": "tool",
                        "description": f[11],
                        "parameters": {
                            "type": "object",
                            "properties": {f[5]: {"type": "string", "enum": [f[6]]}},
                        },
                    },
                }
            ]
        return body

    return build(fields), build([_harmless(x) for x in fields])


@given(requests())
def test_user_text_never_becomes_a_special_id(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    body, harmless = pair
    request = dscodec.convert("chat_completions", body)
    prompt = dscodec.render(request)
    enc = encoder(request.model_version)
    ids = enc.encode(request)
    placed = [enc.vocabulary.special_id(prompt.text[s:e]) for s, e in prompt.special_spans]
    assert [i for i in ids if enc.vocabulary.is_special(i)] == placed
    assert len(dscodec.render(dscodec.convert("chat_completions", harmless)).special_spans) == len(placed)


@st.composite
def grounded_requests(draw: st.DrawFn) -> tuple[dict[str, Any], str, str]:
    """A tool conversation in thinking mode (so history reasoning is rendered) whose assistant turn holds any
    spellings, grounding ones included; user text holds the same."""
    content = draw(texts) + draw(st.sampled_from(GROUNDING)) + draw(texts)
    reasoning = draw(texts)
    model = draw(st.sampled_from(["DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash"]))
    prefix = draw(st.booleans())
    assistant: dict[str, Any] = {"role": "assistant", "content": content, "reasoning_content": reasoning}
    messages: list[dict[str, Any]] = [{"role": "user", "content": content + reasoning}, assistant]
    body: dict[str, Any] = {"model": model, "messages": messages}
    if prefix:
        assistant["prefix"] = True
    else:
        messages.append({"role": "user", "content": reasoning})
        body["tools"] = [{"type": "function", "function": {"name": "tool"}}]
    return body, content, reasoning


def _grounding_count(text: str) -> int:
    count = pos = 0
    while True:
        found = [(text.find(s, pos), s) for s in GROUNDING]
        hits = [(i, s) for i, s in found if i >= 0]
        if not hits:
            return count
        start, spelling = min(hits)
        count += 1
        pos = start + len(spelling)


@given(grounded_requests())
def test_assistant_grounding_spellings_are_the_only_specials(case: tuple[dict[str, Any], str, str]) -> None:
    body, content, reasoning = case
    request = dscodec.convert("chat_completions", body)
    prompt = dscodec.render(request)
    enc = encoder(request.model_version)
    ids = enc.encode(request)
    spans = [prompt.text[s:e] for s, e in prompt.special_spans]
    placed = [enc.vocabulary.special_id(text) for text in spans]
    assert [i for i in ids if enc.vocabulary.is_special(i)] == placed
    # Each grounding spelling of the assistant's content and reasoning, read left to right, is one token; the
    # same spellings in user text are none.
    # (Thinking is on and tools are offered, or the turn is a prefix: its reasoning is rendered either way.)
    grounding = [text for text in spans if text in GROUNDING]
    assert grounding
    assert len(grounding) == _grounding_count(content) + _grounding_count(reasoning)
