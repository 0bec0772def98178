"""Hypothesis strategies for fuzzing a DeepSeek serving stack (needs ``hypothesis``: extra ``testing``).

* :func:`model_outputs`: what a DeepSeek V4 / V4.1 model plausibly writes for a request: reasoning and
  ``</think>``, an answer in any script, DSML tool-call blocks in the version's spelling with every kind of
  parameter value, a stop sequence, and (on request) markup broken in the ways models break it.
* :func:`text_chunkings`, :func:`token_chunkings`, :func:`backend_outputs`: how a backend may cut that output:
  text split inside markers and grapheme clusters, token ids grouped so that UTF-8 sequences split, both mixed.
* :func:`request_bodies`: valid request bodies of each protocol (``dscodec.convert`` accepts every one).

Example::

    from hypothesis import given
    from dscodec.testing import lint, replay, Transcript
    from dscodec.testing.strategies import scenarios

    @given(scenarios("responses"))
    def test_lints_clean(scenario):
        answer = replay(Transcript("responses", scenario.body, scenario.backend)).transcript
        assert lint("responses", answer) == []
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import dscodec
from dscodec.conversation import ConversationRequest
from dscodec.errors import ConversionError, shown
from dscodec.options import DEFAULT_MODEL_NAMES
from dscodec.prompt.dialects import dialect_for
from dscodec.protocols._sampling import MAX_STOP_LENGTH
from dscodec.protocols._tools import validate_tool_names
from dscodec.testing.transcript import BackendItem, Finish, Text, Tokens, Usage
from dscodec.vocab import Vocabulary

__all__ = [
    "MARKER_SPELLINGS",
    "MARKUP_STOPS",
    "STOP_WORDS",
    "UNICODE_SAMPLES",
    "ModelOutput",
    "Scenario",
    "answer_text",
    "backend_outputs",
    "dsml_blocks",
    "model_outputs",
    "parameter_values",
    "request_bodies",
    "scenarios",
    "text_chunkings",
    "token_chunkings",
]

#: The stop sequences :func:`request_bodies` draws from by default: words, a blank line, a CJK full stop.
STOP_WORDS: tuple[str, ...] = ("END", "\n\n", "STOP", "。")

#: Stop sequences that overlap the markup, the newline rules and each other: pieces of ``</think>`` and of DSML
#: tags (both spellings), newlines, quotes, brackets and single letters. Not the end-of-sentence spelling, which
#: ends the output and never takes part in a stop.
MARKUP_STOPS: tuple[str, ...] = (
    "<", "</", "</think>", "<think>", "think>", "\n", "\n\n", "\n\n\n", "\r\n", " ", "  ", '"', "}", '{"', "e",
    "ee", "END", "。", "｜DSML｜", "<｜DSML｜", "DSML", "</｜DSML｜", "tool_calls>", " calls>", "invoke", 'name="',
    'string="true">', "parameter>", "```", "\u2581", "\n<", ">\n", "a\nb",
)  # fmt: skip

#: Text that tests the Unicode handling: CJK, emoji with skin tones and ZWJ sequences, flags, right-to-left
#: scripts, combining marks, zero-width characters.
UNICODE_SAMPLES = (
    "中文回答",
    "日本語",
    "한국어",
    "😀",
    "👍🏽",
    "👩\u200d💻",
    "👨\u200d👩\u200d👧",
    "🇫🇷",
    "مرحبا بالعالم",
    "שלום",
    "e\u0301",
    "Ünïcödé",
    "\u200b",
    "∑ x² ≤ π",
    "…",
)
#: Spellings a model writes that a server must read as markup (both versions).
MARKER_SPELLINGS = (
    "</think>",
    "<｜DSML｜tool_calls>",
    "</｜DSML｜tool_calls>",
    "<｜DSML｜ calls>",
    "</｜DSML｜ calls>",
    "<｜DSML｜invoke",
    "<｜DSML｜ invoke",
    "<｜DSML｜parameter",
    "<｜DSML｜ parameter",
    "｜DSML｜",
    "<｜end▁of▁sentence｜>",
)
#: Harmless look-alikes: text that starts like a marker and is not one.
_LOOKALIKES = ("a < b", "<b>bold</b>", "x</y>", "</thinking", "<｜", "｜", "DSML", "<think>")

_SAFE_CHARS = st.characters(blacklist_categories=["Cs"], blacklist_characters="<｜\x00")
_KEYS = st.from_regex(r"[a-z][a-z_]{0,7}", fullmatch=True)
_NAMES = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True)


# -- argument checks: made when a strategy is built, as Hypothesis's own strategies do -------------------------

_PROTOCOLS = ("chat_completions", "responses", "messages")
#: Token ids run from 0 to 2**32 - 1, as a stream processor and a transcript take them.
_ID_LIMIT = 2**32


def _check_count(name: str, value: object, least: int) -> int:
    if type(value) is not int:
        raise InvalidArgument(f"{name} must be an int, not {type(value).__name__}")
    if value < least:
        raise InvalidArgument(f"{name} must be {least} or more, not {shown(value)}")
    return value


def _check_flag(name: str, value: object, *, optional: bool = False) -> None:
    if type(value) is bool or (value is None and optional):
        return
    raise InvalidArgument(f"{name} must be True or False{' or None' if optional else ''}, not {shown(value)}")


def _check_version(version: object, *, optional: bool = False) -> None:
    if (version is None and optional) or version in ("v4", "v4.1"):
        return
    raise InvalidArgument(
        f"version must be 'v4' or 'v4.1'{' or None' if optional else ''}, not {shown(version)}"
    )


def _check_names(tool_names: object) -> None:
    if tool_names is None:
        return
    if isinstance(tool_names, (str, bytes)) or not isinstance(tool_names, Sequence):
        raise InvalidArgument(
            f"tool_names must be a sequence of names or None, not {type(tool_names).__name__}"
        )
    for name in tool_names:
        if not isinstance(name, str) or not name:
            raise InvalidArgument(f"tool_names must hold non-empty str names, not {shown(name)}")
        try:
            # The names a request may declare (every protocol's rule), or a V4.1 Responses namespace member's
            # prompt name (``namespace::name``): anything else, a quote say, breaks the DSML tag the name is
            # written into.
            validate_tool_names(name.split("::", 1), path="tool_names")
        except ConversionError:
            raise InvalidArgument(
                "tool_names must hold names a request may declare (^[a-zA-Z0-9_-]+$, at most 128 bytes) or "
                f"namespace::name, not {shown(name, limit=40)}"
            ) from None


def _check_model(model: object) -> None:
    if model is None:
        return
    if not isinstance(model, str):
        raise InvalidArgument(f"model must be a str or None, not {type(model).__name__}")
    if model in DEFAULT_MODEL_NAMES:
        return
    raise InvalidArgument(
        f"model must be a name dscodec.convert accepts ({', '.join(DEFAULT_MODEL_NAMES)}) or None, "
        f"not {shown(model, limit=40)}"
    )


def _check_stops(stops: object) -> tuple[str, ...] | None:
    if stops is None:
        return None
    if isinstance(stops, (str, bytes)) or not isinstance(stops, Sequence):
        raise InvalidArgument(f"stops must be a sequence of stop strings or None, not {type(stops).__name__}")
    for stop in stops:
        if not isinstance(stop, str) or not stop or len(stop) > MAX_STOP_LENGTH:
            raise InvalidArgument(
                f"stops must hold str of 1 to {MAX_STOP_LENGTH} characters, not {shown(stop, limit=40)}"
            )
    if not stops:
        raise InvalidArgument("stops must hold at least one stop string (or be None for the default ones)")
    return tuple(stops)


def _check_protocol(protocol: object, *, optional: bool = False) -> None:
    if (protocol is None and optional) or protocol in _PROTOCOLS:
        return
    raise InvalidArgument(
        f"unknown protocol {shown(protocol)}; expected chat_completions, responses or messages"
    )


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise InvalidArgument(f"text must be a str, not {type(text).__name__}")


def answer_text(*, max_size: int = 40, lookalikes: bool = True) -> st.SearchStrategy[str]:
    """Text a model writes outside markup: any script, Unicode samples, whitespace and (optionally) harmless
    marker look-alikes; never a marker spelling."""
    _check_count("max_size", max_size, 0)
    parts: list[st.SearchStrategy[str]] = [
        st.text(_SAFE_CHARS, max_size=12),
        st.sampled_from(UNICODE_SAMPLES),
        st.sampled_from((" ", "\n", "\n\n", "\t", "\r\n")),
    ]
    if lookalikes:
        parts.append(st.sampled_from(_LOOKALIKES))
    return (
        st.lists(st.one_of(parts), max_size=6)
        .map("".join)
        .filter(lambda text: len(text) <= max_size * 4 and not any(m in text for m in MARKER_SPELLINGS))
    )


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False, width=64)
    | st.text(_SAFE_CHARS, max_size=8)
    | st.sampled_from(UNICODE_SAMPLES),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def parameter_values(draw: st.DrawFn) -> tuple[str, str, Any]:
    """One DSML parameter: ``(written text, string flag, value)``. Strings are written as they are with
    ``string="true"``; every JSON kind (numbers, booleans, null, arrays, objects, JSON strings) as JSON with
    ``string="false"``."""
    if draw(st.booleans()):
        text = draw(answer_text(max_size=20, lookalikes=False))
        return text, "true", text
    value = draw(_JSON)
    return json.dumps(value, ensure_ascii=False), "false", value


@st.composite
def _dsml_blocks(
    draw: st.DrawFn,
    version: str = "v4",
    tool_names: Sequence[str] | None = None,
    *,
    min_calls: int = 1,
    max_calls: int = 3,
    opener: bool = True,
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """What :func:`dsml_blocks` draws (its arguments checked there)."""
    d = dialect_for("v4.1" if version == "v4.1" else "v4")
    dsml = d.dsml
    names = st.sampled_from(list(tool_names)) if tool_names else _NAMES
    text = (d.block_separator + f"<{dsml}{d.tool_calls_tag}>\n") if opener else ""
    calls: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(min_calls, max_calls))):
        name = draw(names)
        params: dict[str, Any] = {}
        text += f'<{dsml}{d.invoke_tag} name="{name}">\n'
        keys = draw(st.lists(_KEYS, max_size=4, unique=True))
        if not keys and d.empty_invoke_line:
            text += "\n"
        for key in keys:
            written, flag, value = draw(parameter_values())
            params[key] = value
            text += (
                f'<{dsml}{d.parameter_tag} name="{key}" string="{flag}">{written}</{dsml}{d.parameter_tag}>\n'
            )
        text += f"</{dsml}{d.invoke_tag}>\n"
        calls.append((name, params))
    return text + f"</{dsml}{d.tool_calls_tag}>", calls


def dsml_blocks(
    version: str = "v4",
    tool_names: Sequence[str] | None = None,
    *,
    min_calls: int = 1,
    max_calls: int = 3,
    opener: bool = True,
) -> st.SearchStrategy[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """A well-formed DSML tool-call block in ``version``'s spelling, and the calls it writes.

    Args:
        version: ``"v4"`` (``<｜DSML｜tool_calls>``, ``invoke``, ``parameter``) or ``"v4.1"``
            (``<｜DSML｜ calls>``, `` invoke``, `` parameter``).
        tool_names: the names to call (random names when None; at least one name otherwise), each a name a
            request may declare (``^[a-zA-Z0-9_-]+$``, at most 128 bytes), or a namespace member's prompt name
            (``gh::issue``).
        min_calls, max_calls: how many calls the block holds (at least one: a block calls something).
        opener: False leaves out the opening tag (the prompt holds it when a call is required).
    """
    _check_version(version)
    _check_names(tool_names)
    if tool_names is not None and not tool_names:
        raise InvalidArgument("tool_names must name at least one tool (or be None for random names)")
    _check_count("min_calls", min_calls, 1)  # a block calls something
    _check_count("max_calls", max_calls, min_calls)
    return _dsml_blocks(version, tool_names, min_calls=min_calls, max_calls=max_calls, opener=opener)


def _breakages(version: str) -> list[Any]:
    """Ways to break a well-formed block (each a function of the block text and a drawn integer)."""
    d = dialect_for("v4.1" if version == "v4.1" else "v4")
    other = dialect_for("v4" if version == "v4.1" else "v4.1")
    invoke_close = f"</{d.dsml}{d.invoke_tag}>"
    return [
        lambda block, n: block[: n % (len(block) + 1)],  # cut anywhere (an unfinished call, a partial marker)
        lambda block, n: block.replace(invoke_close, "", 1),  # an invoke never closed
        lambda block, n: block.replace(d.tool_calls_tag, other.tool_calls_tag),  # the other version's tags
        lambda block, n: block.replace('string="true"', 'string="maybe"', 1),  # an unknown flag
        lambda block, n: block.replace(' name="', " ", 1),  # an invoke or parameter without its name
        lambda block, n: block + "\ntrailing text after the block",
        lambda block, n: f"</{d.dsml}{d.parameter_tag}>" + block,  # a stray closing tag first
        lambda block, n: block.replace(">\n", ">", n % 4),  # lines run together
        lambda block, n: block.replace('"true">', '"true>', 1),  # a quote missing before a tag's end
        lambda block, n: block.replace('" string', '"" string', 1),  # a quote doubled
        # the first parameter's opening and closing tags misspelled (the parameters after it still count)
        lambda block, n: block.replace(d.parameter_tag, d.parameter_tag.replace("parameter", "paramter"), 2),
    ]


@dataclass(frozen=True)
class ModelOutput:
    """What the model wrote, and its parts as written (the client sees them after the output rules, e.g. the
    newlines dropped around ``</think>``).

    Attributes:
        text: the whole output, markup included.
        reasoning: the reasoning before ``</think>``; None when the prompt has no thinking stage.
        content: the answer text (in JSON mode: JSON text).
        calls: the calls of the DSML block, ``()`` without one; None when the markup is broken on purpose.
        version: ``"v4"`` or ``"v4.1"``.
        stop: the first stop sequence found in the output's text, or None. Stop sequences apply to the answer
            only: where this one falls in the answer, the client sees the answer cut before it.
    """

    text: str
    reasoning: str | None
    content: str
    calls: tuple[tuple[str, dict[str, Any]], ...] | None
    version: str
    stop: str | None = None


@st.composite
def _model_outputs(
    draw: st.DrawFn,
    request: ConversationRequest | None = None,
    *,
    version: str | None = None,
    thinking: bool | None = None,
    tool_names: Sequence[str] | None = None,
    stop_sequences: Sequence[str] = (),
    malformed: bool = False,
    max_calls: int = 3,
) -> ModelOutput:
    """What :func:`model_outputs` draws (its arguments checked there)."""
    json_mode = opener_in_prompt = False
    if request is not None:
        options = request.parsing_options
        version = request.model_version
        thinking = options.thinking_initial_stage in ("reasoning_start", "reasoning_continuation")
        tool_names = [tool.name for tool in request.conversation.tools] if options.parse_tool_calls else []
        stop_sequences = options.stop_sequences
        json_mode = options.parse_json_output
        opener_in_prompt = options.starts_in_tool_calls
    version = version or draw(st.sampled_from(["v4", "v4.1"]))
    thinking = draw(st.booleans()) if thinking is None else thinking
    names = list(tool_names) if tool_names is not None else draw(st.lists(_NAMES, max_size=2, unique=True))
    reasoning = draw(answer_text()) if thinking else None
    if json_mode:
        content = json.dumps(draw(st.dictionaries(_KEYS, _JSON, max_size=3)), ensure_ascii=False)
    else:
        content = "" if opener_in_prompt else draw(answer_text())
    stop = None
    if stop_sequences and not opener_in_prompt and draw(st.booleans()):
        stop = draw(st.sampled_from(list(stop_sequences)))
        at = draw(st.integers(0, len(content)))
        content = content[:at] + stop + draw(answer_text(max_size=10))
    calls: tuple[tuple[str, dict[str, Any]], ...] | None = ()
    block = ""
    if names and stop is None and (opener_in_prompt or draw(st.booleans())):
        block, drawn = draw(
            dsml_blocks(version, names, min_calls=1, max_calls=max_calls, opener=not opener_in_prompt)
        )
        calls = tuple(drawn)
        if json_mode:
            # In JSON mode a block is read only where the answer begins: after a value it is answer text.
            content = ""
        if malformed and draw(st.integers(0, 2)) == 0:
            breakage = draw(st.sampled_from(_breakages(version)))
            block, calls = breakage(block, draw(st.integers(0, 10_000))), None
    think_end = dialect_for("v4.1" if version == "v4.1" else "v4").think_close
    text = (reasoning + think_end if reasoning is not None else "") + content + block
    if stop is None:
        # A stop sequence can also turn up by itself (the blank line before a block, for one).
        found = [(text.find(s), s) for s in stop_sequences if s and s in text]
        stop = min(found)[1] if found else None
    return ModelOutput(text, reasoning, content, calls, version, stop)


def model_outputs(
    request: ConversationRequest | None = None,
    *,
    version: str | None = None,
    thinking: bool | None = None,
    tool_names: Sequence[str] | None = None,
    stop_sequences: Sequence[str] = (),
    malformed: bool = False,
    max_calls: int = 3,
) -> st.SearchStrategy[ModelOutput]:
    """A plausible output of the model for ``request`` (or for the settings given).

    With a request, everything comes from it: the version, whether the prompt ends in the thinking stage, the
    tools (only when they are parsed), a required call (the block opener is already in the prompt), JSON mode
    and the stop sequences. ``malformed`` lets about a third of the blocks be broken (their ``calls`` is None).
    Without a request, ``tool_names`` are the tools to call (random names when None; none, so no calls, when
    empty), and ``stop_sequences`` the stop strings the output may write (each a non-empty str, as a request's
    are). With a request, giving ``version``, ``thinking``, ``tool_names`` or ``stop_sequences`` too is refused:
    they would have no effect.
    """
    if request is not None and not isinstance(request, ConversationRequest):
        raise InvalidArgument(f"request must be a ConversationRequest or None, not {type(request).__name__}")
    if request is not None:
        given = [
            name
            for name, value in (
                ("version", version),
                ("thinking", thinking),
                ("tool_names", tool_names),
                ("stop_sequences", stop_sequences or None),
            )
            if value is not None
        ]
        if given:
            raise InvalidArgument(
                f"{', '.join(given)}: a request decides {'it' if len(given) == 1 else 'them'} "
                "(give either a request or the settings)"
            )
    _check_version(version, optional=True)
    _check_names(tool_names)
    _check_flag("thinking", thinking, optional=True)
    _check_flag("malformed", malformed)
    if (
        isinstance(stop_sequences, (str, bytes))
        or not isinstance(stop_sequences, Sequence)
        or not all(isinstance(stop, str) for stop in stop_sequences)
    ):
        raise InvalidArgument("stop_sequences must be a sequence of str")
    for stop in stop_sequences:
        if not stop or len(stop) > MAX_STOP_LENGTH:
            raise InvalidArgument(
                f"stop_sequences must hold str of 1 to {MAX_STOP_LENGTH} characters (as a request's stop "
                f"sequences), not {shown(stop, limit=40)}"
            )
    _check_count("max_calls", max_calls, 1)
    return _model_outputs(
        request,
        version=version,
        thinking=thinking,
        tool_names=tool_names,
        stop_sequences=stop_sequences,
        malformed=malformed,
        max_calls=max_calls,
    )


def _interesting_cuts(text: str) -> list[int]:
    """Offsets inside marker spellings and grapheme clusters (combining marks, ZWJ, variation selectors)."""
    cuts: set[int] = set()
    for spelling in MARKER_SPELLINGS + ("\n\n", '">'):
        start = text.find(spelling)
        while start != -1:
            cuts.update(range(start + 1, start + len(spelling)))
            start = text.find(spelling, start + 1)
    for k, ch in enumerate(text):
        if ch in "\u200d\ufe0f\u0301" or 0x1F3FB <= ord(ch) <= 0x1F3FF or 0x1F1E6 <= ord(ch) <= 0x1F1FF:
            cuts.update((k, k + 1))
    return sorted(c for c in cuts if 0 < c < len(text))


@st.composite
def _text_chunkings(draw: st.DrawFn, text: str, *, max_pieces: int = 16) -> list[str]:
    """What :func:`text_chunkings` draws (its arguments checked there)."""
    kind = draw(st.sampled_from(["whole", "chars", "cuts", "cuts"]))
    if kind == "whole" or not text:
        return [text]
    if kind == "chars":
        return list(text)
    special = _interesting_cuts(text)
    picks = st.sampled_from(special) if special else st.integers(1, max(1, len(text) - 1))
    cuts = draw(st.lists(st.integers(1, max(1, len(text) - 1)) | picks, max_size=max_pieces - 1))
    bounds = sorted({0, len(text), *(c for c in cuts if 0 < c < len(text))})
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    if draw(st.integers(0, 4)) == 0:
        pieces.insert(draw(st.integers(0, len(pieces))), "")
    return pieces


def text_chunkings(text: str, *, max_pieces: int = 16) -> st.SearchStrategy[list[str]]:
    """``text`` cut into pieces: whole, one character each, or at drawn offsets favouring cuts inside markers
    and grapheme clusters; sometimes with empty pieces (a backend may send an empty chunk)."""
    _check_text(text)
    _check_count("max_pieces", max_pieces, 1)
    return _text_chunkings(text, max_pieces=max_pieces)


def _utf8_splits(vocabulary: Vocabulary, ids: Sequence[int]) -> list[int]:
    """Token positions where the bytes so far end inside a UTF-8 sequence."""
    splits: list[int] = []
    pending = b""
    for k, token_id in enumerate(ids[:-1], start=1):
        pending += vocabulary.token_bytes(token_id)
        try:
            pending.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.reason == "unexpected end of data":
                splits.append(k)
                continue
        pending = b""
    return splits


@st.composite
def _token_chunkings(
    draw: st.DrawFn, ids: Sequence[int], *, vocabulary: Vocabulary | None = None, max_groups: int = 16
) -> list[list[int]]:
    """What :func:`token_chunkings` draws (its arguments checked there)."""
    kind = draw(st.sampled_from(["whole", "single", "cuts", "cuts"]))
    if kind == "whole" or len(ids) < 2:
        return [list(ids)]
    if kind == "single":
        return [[token_id] for token_id in ids]
    special = _utf8_splits(vocabulary, ids) if vocabulary is not None else []
    picks = st.sampled_from(special) if special else st.integers(1, len(ids) - 1)
    cuts = draw(st.lists(st.integers(1, len(ids) - 1) | picks, max_size=max_groups - 1))
    bounds = sorted({0, len(ids), *cuts})
    return [list(ids[a:b]) for a, b in itertools.pairwise(bounds)]


def token_chunkings(
    ids: Sequence[int], *, vocabulary: Vocabulary | None = None, max_groups: int = 16
) -> st.SearchStrategy[list[list[int]]]:
    """``ids`` in groups: all at once, one at a time, or cut at drawn places favouring cuts inside a character's
    UTF-8 bytes (with ``vocabulary``, to know where those are)."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
        raise InvalidArgument(f"ids must be a sequence of token ids, not {type(ids).__name__}")
    if not all(type(token_id) is int and 0 <= token_id < _ID_LIMIT for token_id in ids):
        raise InvalidArgument("ids must hold token ids (int, from 0 to 2**32 - 1)")
    if vocabulary is not None and not isinstance(vocabulary, Vocabulary):
        raise InvalidArgument(f"vocabulary must be a Vocabulary or None, not {type(vocabulary).__name__}")
    _check_count("max_groups", max_groups, 1)
    return _token_chunkings(ids, vocabulary=vocabulary, max_groups=max_groups)


@st.composite
def _backend_outputs(
    draw: st.DrawFn,
    text: str,
    *,
    vocabulary: Vocabulary | None = None,
    finish: st.SearchStrategy[Any] | None = None,
    prompt_tokens: int = 20,
) -> list[BackendItem]:
    """What :func:`backend_outputs` draws (its arguments checked there)."""
    vocab = vocabulary or Vocabulary.load(None)
    encoding = vocab.full.encode(text, add_special_tokens=False)
    ids: list[int] = list(encoding.ids)
    ends = [end for _, end in encoding.offsets]
    starts = [start for start, _ in encoding.offsets]
    items: list[BackendItem] = [Usage(prompt_tokens, draw(st.integers(0, prompt_tokens)))]
    mode = draw(st.sampled_from(["text", "tokens", "mixed"]))
    # Where a text head may end and ids take over: between tokens that do not share a character.
    handovers = [k for k in range(1, len(ids)) if ends[k - 1] <= starts[k]]
    if mode == "mixed" and handovers:
        k = draw(st.sampled_from(handovers))
        head = text[: ends[k - 1]]
        items += _text_items(draw(text_chunkings(head)), ends[:k])
        items += [Tokens(tuple(group)) for group in draw(token_chunkings(ids[k:], vocabulary=vocab))]
    elif mode == "tokens":
        items += [Tokens(tuple(group)) for group in draw(token_chunkings(ids, vocabulary=vocab)) if group]
    else:
        items += _text_items(draw(text_chunkings(text)), ends)
    reason = draw(finish if finish is not None else st.sampled_from(["stop", "stop", "length", None]))
    items.append(Finish(reason))
    return items


def backend_outputs(
    text: str,
    *,
    vocabulary: Vocabulary | None = None,
    finish: st.SearchStrategy[Any] | None = None,
    prompt_tokens: int = 20,
) -> st.SearchStrategy[list[BackendItem]]:
    """What a backend sends for ``text``: the prompt usage, then the text as text chunks (each counted with the
    tokens that end in it), as token id groups, or a text head and an id tail; then a :class:`Finish`.

    Token counts add up to the number of ids of the text (the full vocabulary's encoding), as a real backend's do.
    """
    _check_text(text)
    if vocabulary is not None and not isinstance(vocabulary, Vocabulary):
        raise InvalidArgument(f"vocabulary must be a Vocabulary or None, not {type(vocabulary).__name__}")
    if finish is not None and not isinstance(finish, st.SearchStrategy):
        raise InvalidArgument(f"finish must be a strategy or None, not {type(finish).__name__}")
    _check_count("prompt_tokens", prompt_tokens, 0)
    return _backend_outputs(text, vocabulary=vocabulary, finish=finish, prompt_tokens=prompt_tokens)


def _text_items(pieces: list[str], ends: Sequence[int]) -> list[BackendItem]:
    """Text chunks, each counted with the tokens whose last character it holds."""
    counts = [0] * len(pieces)
    bounds: list[int] = []
    at = 0
    for piece in pieces:
        at += len(piece)
        bounds.append(at)
    for end in ends:
        k = next(
            (i for i, bound in enumerate(bounds) if end <= bound and (bound > 0 or end == 0)), len(pieces) - 1
        )
        counts[k] += 1
    return [Text(piece, count) for piece, count in zip(pieces, counts)]


_MODELS = ("DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash")
_WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}


@st.composite
def _request_bodies(
    draw: st.DrawFn,
    protocol: str,
    *,
    stream: bool | None = None,
    tools: bool | None = None,
    model: str | None = None,
    stop_pool: tuple[str, ...] | None = None,
    json_mode: bool = False,
) -> dict[str, Any]:
    """What :func:`request_bodies` draws (its arguments checked there)."""
    model = model or draw(st.sampled_from(_MODELS))
    streamed = draw(st.booleans()) if stream is None else stream
    thinking = draw(st.booleans())
    with_tools = draw(st.booleans()) if tools is None else tools
    user = draw(answer_text(max_size=30).filter(bool))
    if json_mode:
        user += " Answer in JSON."  # JSON mode needs the word in the prompt
    names = draw(st.lists(_NAMES, min_size=1, max_size=2, unique=True)) if with_tools else []
    stops = draw(st.lists(st.sampled_from(stop_pool or STOP_WORDS), max_size=2, unique=True))
    body: dict[str, Any] = {"model": model, "stream": streamed}
    if protocol == "chat_completions":
        body["messages"] = [{"role": "user", "content": user}]
        body["thinking"] = {"type": "enabled" if thinking else "disabled"}
        if streamed and draw(st.booleans()):
            body["stream_options"] = {"include_usage": draw(st.booleans())}
        if stops:
            body["stop"] = stops
        if names:
            body["tools"] = [
                {"type": "function", "function": {"name": n, "parameters": _WEATHER}} for n in names
            ]
            body["tool_choice"] = draw(
                st.sampled_from(["auto", "none"] if thinking else ["auto", "required", "none"])
            )
        if draw(st.booleans()):
            body["max_tokens"] = draw(st.integers(16, 4096))
        if json_mode:
            body["response_format"] = {"type": "json_object"}
    elif protocol == "responses":
        body["input"] = user
        body["reasoning"] = {
            "effort": draw(st.sampled_from(["low", "medium", "high"])) if thinking else "none"
        }
        if names:
            body["tools"] = [{"type": "function", "name": n, "parameters": _WEATHER} for n in names]
            body["tool_choice"] = draw(
                st.sampled_from(["auto", "none"] if thinking else ["auto", "required", "none"])
            )
        if draw(st.booleans()):
            body["max_output_tokens"] = draw(st.integers(16, 4096))
        if json_mode:
            body["text"] = {"format": {"type": "json_object"}}
    else:  # messages (request_bodies checked the protocol)
        body["messages"] = [{"role": "user", "content": user}]
        body["max_tokens"] = draw(st.integers(16, 4096))
        body["thinking"] = (
            {"type": "enabled", "budget_tokens": draw(st.integers(1024, 2048))}
            if thinking
            else {"type": "disabled"}
        )
        if stops:
            body["stop_sequences"] = stops
        if names:
            body["tools"] = [{"name": n, "input_schema": _WEATHER} for n in names]
            forced = [] if thinking else [{"type": "any"}, {"type": "tool", "name": names[0]}]
            body["tool_choice"] = draw(st.sampled_from([{"type": "auto"}, *forced]))
    return body


def request_bodies(
    protocol: str,
    *,
    stream: bool | None = None,
    tools: bool | None = None,
    model: str | None = None,
    stops: Sequence[str] | None = None,
    json_mode: bool = False,
) -> st.SearchStrategy[dict[str, Any]]:
    """A valid request body of ``protocol``: model, a short conversation, thinking on or off, maybe tools and a
    tool choice (a forced one only without thinking: DeepSeek refuses it in thinking mode), stop sequences, a
    token limit, streaming (Chat: with or without usage).

    ``model`` is one of the names ``dscodec.convert`` accepts by default (``DeepSeek-V4-Pro``,
    ``DeepSeek-V4.1-Flash``), drawn when None. ``stops`` is what the stop sequences (none to two, Chat and
    Messages only) are drawn from: None for :data:`STOP_WORDS`; :data:`MARKUP_STOPS` makes them overlap the
    output's markup and newline rules. ``json_mode`` asks for a JSON object answer (Chat ``response_format``,
    Responses ``text.format``; Messages has no such mode), the word JSON added to the prompt as the mode needs."""
    _check_protocol(protocol)
    _check_flag("stream", stream, optional=True)
    _check_flag("tools", tools, optional=True)
    _check_model(model)
    _check_json_mode(json_mode, protocol)
    _check_stops_protocol(stops, protocol)
    return _request_bodies(
        protocol, stream=stream, tools=tools, model=model, stop_pool=_check_stops(stops), json_mode=json_mode
    )


def _check_stops_protocol(stops: object, protocol: str | None) -> None:
    if stops is not None and protocol == "responses":
        raise InvalidArgument(
            "stops: a Responses request has no stop sequences (use chat_completions or messages)"
        )


def _check_json_mode(json_mode: object, protocol: str | None) -> None:
    _check_flag("json_mode", json_mode)
    if json_mode and protocol == "messages":
        raise InvalidArgument("json_mode: Messages has no JSON mode (use chat_completions or responses)")


@dataclass(frozen=True)
class Scenario:
    """A request body, the converted request, the model's output and how the backend sends it."""

    protocol: str
    body: dict[str, Any]
    request: ConversationRequest
    output: ModelOutput
    backend: list[BackendItem]


@st.composite
def _scenarios(
    draw: st.DrawFn,
    protocol: str | None = None,
    *,
    malformed: bool = False,
    stream: bool | None = None,
    stops: tuple[str, ...] | None = None,
    tools: bool | None = None,
    json_mode: bool = False,
) -> Scenario:
    """What :func:`scenarios` draws (its arguments checked there)."""
    protocols = (
        ["chat_completions", "responses"] if json_mode else ["chat_completions", "responses", "messages"]
    )
    chosen = protocol or draw(st.sampled_from(protocols))
    body = draw(_request_bodies(chosen, stream=stream, stop_pool=stops, tools=tools, json_mode=json_mode))
    request = dscodec.convert(chosen, body)  # type: ignore[arg-type]
    output = draw(model_outputs(request, malformed=malformed))
    backend = draw(backend_outputs(output.text))
    return Scenario(chosen, body, request, output, backend)


def scenarios(
    protocol: str | None = None,
    *,
    malformed: bool = False,
    stream: bool | None = None,
    stops: Sequence[str] | None = None,
    tools: bool | None = None,
    json_mode: bool = False,
) -> st.SearchStrategy[Scenario]:
    """A whole exchange to replay: :func:`request_bodies` (``stops``, ``tools`` and ``json_mode`` as there; with
    ``json_mode`` and no protocol, Chat or Responses), then :func:`model_outputs` for that request, then
    :func:`backend_outputs` for that output."""
    _check_protocol(protocol, optional=True)
    _check_flag("malformed", malformed)
    _check_flag("stream", stream, optional=True)
    _check_flag("tools", tools, optional=True)
    _check_json_mode(json_mode, protocol)
    _check_stops_protocol(stops, protocol)
    return _scenarios(
        protocol,
        malformed=malformed,
        stream=stream,
        stops=_check_stops(stops),
        tools=tools,
        json_mode=json_mode,
    )
