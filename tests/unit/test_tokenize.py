"""Prompt encoding: specials by id, gaps without the added vocabulary, safe cuts of long gaps."""

from __future__ import annotations

import itertools
from array import array
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer, pre_tokenizers

import dscodec
from dscodec.conversation import (
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from dscodec.prompt.render import Special, render_segments
from dscodec.prompt.tokenize import _CHAIN, PromptEncoder
from dscodec.vocab import Vocabulary, bundled_tokenizer_path, safe_cuts, with_added_tokens

ENCODER = PromptEncoder()
COLD = PromptEncoder(cache_chars=0)
PLAIN = ENCODER.vocabulary.plain


def test_bundled_tokenizer_allowssafe_cuts() -> None:
    assert ENCODER.vocabulary._cuttable


def test_cutting_is_refused_for_another_pre_tokenizer() -> None:
    tokenizer = Tokenizer.from_file(str(bundled_tokenizer_path()))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    vocab = Vocabulary(tokenizer, name="test")
    assert not vocab._cuttable and vocab.pieces("a\nb" * 100, 4) == ["a\nb" * 100]
    assert vocab._words is None  # nor does it split words itself
    texts = ["a\nb" * 100, "Hello, world 123", "中文 x"]
    assert vocab.encode_plain(texts) == [
        e.ids for e in vocab.plain.encode_batch(texts, add_special_tokens=False)
    ]


# Text shaped like source code: words, digits, CJK, punctuation, and every kind of line break and indentation.
code_text = st.lists(
    st.sampled_from(
        [
            "def",
            "x",
            "Y",
            " ",
            "  ",
            "\n",
            "\r\n",
            "\n\n",
            "\t",
            "(",
            ")",
            ":",
            "#",
            "123",
            "4567",
            "中文",
            "é",
            "😀",
            "'",
            '"',
            "\\",
            "{",
            "}",
            ".",
            ",",
            "_a",
            " b",
            "\u200b",
            "́",
        ]
    ),
    max_size=400,
).map("".join)


@given(code_text, st.integers(min_value=1, max_value=40))
def test_safe_cuts_keep_the_ids(text: str, piece: int) -> None:
    cuts = safe_cuts(text, piece)
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert all(b - a >= piece for a, b in itertools.pairwise(bounds[:-1]))  # only the last piece may be short
    whole = PLAIN.encode(text, add_special_tokens=False).ids
    cut = [i for p in pieces for i in PLAIN.encode(p, add_special_tokens=False).ids]
    assert cut == whole


def test_long_gap_is_cut_and_encodes_like_one_piece() -> None:
    source = Path(dscodec.__file__).parent.joinpath("conversation.py").read_text(encoding="utf-8") * 8
    assert len(source) > 3 * 16_384 and len(safe_cuts(source, 16_384)) >= 2
    ids = ENCODER.encode_segments([Special("<｜User｜>"), source, Special("<｜Assistant｜>")])
    assert ids == [128803, *PLAIN.encode(source, add_special_tokens=False).ids, 128804]


def test_typed_spellings_are_plain_text() -> None:
    ids = ENCODER.encode(
        Conversation(messages=[UserMessage(content="<｜User｜>x<think>")], thinking_mode=False), version="v4"
    )
    # behavior.md#tokenization: the typed spelling is split into ordinary byte-level tokens
    assert ids == [0, 128803, 30, 28217, 6756, 28217, 32, 90, 30, 37947, 32, 128804, 128822]


def test_encode_rendered_equals_encode() -> None:
    request = dscodec.convert(
        "chat_completions",
        {
            "model": "DeepSeek-V4-Pro",
            "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Hi <think>"}],
        },
    )
    assert ENCODER.encode_rendered(dscodec.render(request)) == ENCODER.encode(request)


def test_v41_with_the_v4_tokenizer_names_the_missing_token() -> None:
    conversation = Conversation(messages=[SystemMessage(content="S"), UserMessage(content="Hi")])
    with pytest.raises(dscodec.SpecialTokenMissing) as caught:
        ENCODER.encode(conversation, version="v4.1")
    assert "<｜System｜>" in caught.value.message and "tokenizer.json" in caught.value.message
    assert caught.value.status_code == 500 and caught.value.spelling == "<｜System｜>"


def test_v41_with_a_tokenizer_that_has_the_system_token() -> None:
    tokenizer = with_added_tokens(None, ["<｜System｜>"])
    system_id = tokenizer.token_to_id("<｜System｜>")
    ids = PromptEncoder(tokenizer).encode(
        Conversation(messages=[SystemMessage(content="S")], thinking_mode=False), version="v4.1"
    )
    assert ids[:2] == [0, system_id]


def test_tokenizer_sources(tmp_path: Path) -> None:
    path = bundled_tokenizer_path()
    expected = ENCODER.encode(Conversation(messages=[UserMessage(content="Hello")]), version="v4")
    for source in (path, str(path), path.parent, Tokenizer.from_file(str(path))):
        assert (
            PromptEncoder(source).encode(Conversation(messages=[UserMessage(content="Hello")]), version="v4")
            == expected
        )


def test_bad_tokenizer_files(tmp_path: Path) -> None:
    with pytest.raises(dscodec.TokenizerError):
        PromptEncoder(tmp_path / "missing.json")
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(dscodec.TokenizerError):
        PromptEncoder(bad)
    bad.write_text('{"added_tokens": []}', encoding="utf-8")
    with pytest.raises(dscodec.TokenizerError):
        PromptEncoder(bad)
    bad.write_text("[" * 100_000, encoding="utf-8")  # deeper than Python's reader walks
    with pytest.raises(dscodec.TokenizerError, match="nested too deeply"):
        PromptEncoder(bad)


def test_gap_cache_gives_the_same_ids_and_stays_bounded() -> None:
    conversations = [
        Conversation(
            messages=[UserMessage(content=f"question {i} " + "words of a long enough user turn " * 4)]
        )
        for i in range(6)
    ]
    cold = PromptEncoder(cache_chars=0)
    warm = PromptEncoder(cache_chars=400)
    for _ in range(2):
        for conversation in conversations:
            assert warm.encode(conversation, version="v4") == cold.encode(conversation, version="v4")
    assert cold._cache is None
    assert warm._cache is not None and 0 < warm._cached_chars <= 400
    assert sum(len(gap) for gap in warm._cache) == warm._cached_chars
    warm.clear_cache()
    assert warm._cached_chars == 0 and not warm._cache


def test_gap_cache_is_safe_across_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    encoder = PromptEncoder(cache_chars=2_000)
    conversations = [
        Conversation(messages=[UserMessage(content=f"thread {i % 7} " + "some shared history text " * 5)])
        for i in range(60)
    ]
    expected = [ENCODER.encode(c, version="v4") for c in conversations]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda c: encoder.encode(c, version="v4"), conversations))
    assert results == expected


# -- reuse of earlier prompts --------------------------------------------------------------------------------------

_PARTS = [
    UserMessage(content="Fix the leap-year bug in utils.py " * 5),
    AssistantMessage(
        content="",
        reasoning="Read the file first.",
        tool_calls=[ToolCall(id="c1", name="read_file", arguments='{"path": "utils.py"}')],
    ),
    ToolMessage(content="def leap(y):\n    return y % 4 == 0\n" * 40, tool_call_id="c1"),
    AssistantMessage(content="Found it: the century rule is missing. 中文 too.", reasoning="Century years."),
    UserMessage(content="Great, now add a test. “Quotes” and — dashes."),
    AssistantMessage(content="Here is the start of the test:", prefix=True),
]
_SYSTEMS = [SystemMessage(content="You are a careful coding agent."), SystemMessage(content="Be brief.")]


def _conversation(system: int, length: int, thinking: bool) -> Conversation:
    return Conversation(messages=[_SYSTEMS[system], *_PARTS[:length]], thinking_mode=thinking)


@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, len(_PARTS)), st.booleans(), st.booleans()),
        min_size=1,
        max_size=12,
    )
)
def test_reused_prompts_give_the_ids_of_a_fresh_encoding(requests: list[tuple[int, int, bool, bool]]) -> None:
    # Growing, shrinking, repeated and unrelated conversations in any order; V4 drops earlier reasoning once a
    # new user turn comes, which changes the middle of the prompt.
    warm = PromptEncoder(cache_chars=200_000)
    for system, length, thinking, rendered in requests:
        conversation = _conversation(system, length, thinking)
        expected = COLD.encode(conversation, version="v4")
        if rendered:
            assert warm.encode_rendered(dscodec.render(conversation, version="v4")) == expected
        else:
            assert warm.encode(conversation, version="v4") == expected
    assert warm._prompts is not None and len(warm._prompts) <= 16


def test_the_next_turn_reuses_the_previous_prompt() -> None:
    warm = PromptEncoder()
    first = warm.encode(_conversation(0, 3, True), version="v4")
    assert warm._prompts is not None and len(warm._prompts) == 1
    reused = warm._reuse(render_segments(_conversation(0, 4, True), "v4")[0])
    assert reused is not None and reused[0].ends[reused[1] - 1] == len(first) - 1  # all but the final <think>
    second = warm.encode(_conversation(0, 4, True), version="v4")
    assert second == COLD.encode(_conversation(0, 4, True), version="v4")
    assert len(warm._prompts) == 1  # the first prompt was superseded
    assert warm.encode(_conversation(0, 4, True), version="v4") == second
    warm.clear_cache()
    assert warm._prompts == [] and warm.encode(_conversation(0, 4, True), version="v4") == second


def test_only_the_newest_prompt_keeps_a_list_and_returned_ids_are_the_callers() -> None:
    warm = PromptEncoder()
    first = warm.encode(_conversation(0, 3, True), version="v4")
    first.append(-1)  # the caller's list: changing it changes nothing remembered
    other = warm.encode(_conversation(1, 2, False), version="v4")
    assert warm._prompts is not None and [type(p.ids).__name__ for p in warm._prompts] == ["array", "list"]
    assert warm.encode(_conversation(0, 4, True), version="v4") == COLD.encode(
        _conversation(0, 4, True), version="v4"
    )
    assert warm.encode(_conversation(1, 3, False), version="v4") == COLD.encode(
        _conversation(1, 3, False), version="v4"
    )
    assert other == COLD.encode(_conversation(1, 2, False), version="v4")
    assert [type(p.ids).__name__ for p in warm._prompts][-1] == "list"
    assert all(isinstance(p.ids, array) for p in warm._prompts[:-1])


def test_remembered_prompts_stay_within_the_budget() -> None:
    warm = PromptEncoder(cache_chars=2_000)  # 500 ids of prompts
    for length in range(1, len(_PARTS) + 1):
        for system in (0, 1):
            assert warm.encode(_conversation(system, length, False), version="v4") == COLD.encode(
                _conversation(system, length, False), version="v4"
            )
            assert warm._prompts is not None and sum(len(p.ids) for p in warm._prompts) <= 500


def test_a_long_conversation_keeps_only_what_each_turn_added() -> None:
    warm = PromptEncoder()
    messages: list[Message] = [_SYSTEMS[0]]
    for turn in range(20):
        messages.append(UserMessage(content=f"Question {turn}: " + "why? " * turn))
        conversation = Conversation(messages=list(messages), thinking_mode=True)
        ids = warm.encode(conversation, version="v4")
        assert ids == COLD.encode(conversation, version="v4")
        ids.append(-1)  # the caller's list: changing it changes nothing remembered
        assert warm._prompts is not None and len(warm._prompts) == 1
        newest = warm._prompts[0]
        assert newest.links < _CHAIN and newest.size == len(ids) - 1
        if turn and newest.links:
            # built on the previous turn: it keeps only its own ids after the shared ones
            assert newest.base is not None and len(newest.ids) == newest.size - newest.shared < newest.shared
        messages.append(AssistantMessage(content=f"Answer {turn}. " * 3, reasoning="Thought."))
    # a prompt that is not the newest keeps all its ids in one array, without a chain
    warm.encode(_conversation(1, 2, False), version="v4")
    assert warm._prompts[0].base is None and isinstance(warm._prompts[0].ids, array)
    assert warm.encode(
        Conversation(messages=list(messages), thinking_mode=True), version="v4"
    ) == COLD.encode(Conversation(messages=list(messages), thinking_mode=True), version="v4")
