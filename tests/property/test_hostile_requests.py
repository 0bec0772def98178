"""Hostile request bodies, for all three protocols: whatever a client sends, dscodec converts it or refuses it.

Every case starts from a valid (or recorded) body and breaks it: wrong types at any path, nulls, numbers out of
range or of the wrong kind, deep nesting, special-token spellings, odd names, bad images, broken JSON text (lone
surrogates, invalid UTF-8, duplicate keys, ``NaN``). The invariant:

* either a request comes out, and then it renders for its version, encodes (V4 with the bundled tokenizer, V4.1
  with one that has ``<｜System｜>``), and the special ids of the encoding are exactly the ones the template
  placed (text a client wrote never becomes a special token);
* or a :class:`dscodec.ConversionError` with a 4xx status whose body is the protocol's error shape (the OpenAI
  envelope, or Anthropic's for Messages) and serialises as strict JSON;
* never any other exception.

The example count comes from ``DSCODEC_MAX_EXAMPLES`` (tests/conftest.py).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dscodec
from dscodec.testing.strategies import request_bodies
from dscodec.vocab import Vocabulary
from tests.support.fixtures import encoder

PROTOCOLS = ("chat_completions", "responses", "messages")
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "requests"
SPECIALS = sorted(Vocabulary.load(None).added) + [
    "<｜System｜>",
    "<｜DSML｜ calls>",
    "</｜DSML｜ invoke>",
    "<｜DSML｜tool_calls>",
    "</think>",
    "<think>",
]


def _depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar is 0); iterative."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, dict):
            stack.extend((inner, depth + 1) for inner in node.values())
        elif isinstance(node, list):
            stack.extend((inner, depth + 1) for inner in node)
    return deepest


def _seeds() -> dict[str, list[dict[str, Any]]]:
    """Recorded request bodies (valid and invalid ones) that are JSON objects, per protocol."""
    seeds: dict[str, list[dict[str, Any]]] = {p: [] for p in PROTOCOLS}
    for protocol in PROTOCOLS:
        folder = FIXTURES / protocol
        if not folder.is_dir():
            continue
        for case in sorted(folder.iterdir()):
            try:
                body = json.loads((case / "request.json").read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                continue
            # Deep seeds are left to test_deep_nesting_anywhere: mutated, they could pass what json.dumps writes.
            if isinstance(body, dict) and _depth(body) <= 150:
                seeds[protocol].append(body)
    return seeds


SEEDS = _seeds()

_IMAGE = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["city"],
}


def _rich(protocol: str) -> list[dict[str, Any]]:
    """Hand-written valid bodies that reach the less common fields: images, tool history, schemas, logprobs."""
    if protocol == "chat_completions":
        return [
            {
                "model": "DeepSeek-V4-Pro",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "What is this?"},
                            {"type": "image_url", "image_url": {"url": _IMAGE}},
                        ],
                    },
                    {
                        "role": "assistant",
                        "content": "Let me check.",
                        "reasoning_content": "think",
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
                    {"role": "user", "content": "Thanks"},
                ],
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": "weather",
                            "description": "d",
                            "parameters": _SCHEMA,
                            "strict": True,
                        },
                    }
                ],
                "tool_choice": {"type": "function", "function": {"name": "weather"}},
                "thinking": {"type": "disabled"},
                "stop": ["END", "\n\n"],
                "max_tokens": 100,
                "logprobs": True,
                "top_logprobs": 3,
                "seed": 7,
                "temperature": 0.5,
                "n": 1,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
            {
                "model": "DeepSeek-V4.1-Flash",
                "messages": [{"role": "user", "content": "json please"}],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "out", "schema": _SCHEMA, "strict": True},
                },
                "reasoning_effort": "low",
            },
        ]
    if protocol == "responses":
        return [
            {
                "model": "DeepSeek-V4.1-Flash",
                "instructions": "Be brief.",
                "input": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": "What is this?"},
                            {"type": "input_image", "image_url": _IMAGE},
                        ],
                    },
                    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]},
                    {
                        "type": "function_call",
                        "call_id": "call_1",
                        "name": "weather",
                        "arguments": '{"city": "Paris"}',
                    },
                    {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
                    {"role": "user", "content": "Thanks"},
                ],
                "tools": [{"type": "function", "name": "weather", "parameters": _SCHEMA, "strict": True}],
                "tool_choice": {"type": "function", "name": "weather"},
                "reasoning": {"effort": "none"},
                "max_output_tokens": 100,
                "top_logprobs": 2,
                "temperature": 1,
                "stream": True,
            },
            {
                "model": "DeepSeek-V4-Pro",
                "input": "json please",
                "text": {"format": {"type": "json_schema", "name": "out", "schema": _SCHEMA, "strict": True}},
            },
        ]
    return [
        {
            "model": "DeepSeek-V4-Pro",
            "system": [{"type": "text", "text": "Be brief."}],
            "max_tokens": 100,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": _IMAGE[22:]},
                        },
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hm", "signature": "s"},
                        {"type": "text", "text": "Let me check."},
                        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}],
                },
            ],
            "tools": [{"name": "weather", "description": "d", "input_schema": _SCHEMA}],
            "tool_choice": {"type": "auto"},
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "stop_sequences": ["END"],
            "metadata": {"user_id": "u"},
            "stream": True,
        },
        {
            "model": "DeepSeek-V4.1-Flash",
            "max_tokens": 64,
            "messages": [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hel"},
            ],
            "tool_choice": {"type": "none"},
            "temperature": 0.0,
            "top_k": 5,
        },
    ]


RICH = {p: _rich(p) for p in PROTOCOLS}

# -- hostile values --------------------------------------------------------------------------------------------

_NUMBERS = st.sampled_from(
    [
        0,
        -0.0,
        -1,
        1,
        2**31,
        2**32,
        2**53 + 1,
        2**63,
        2**64,
        -(2**63) - 1,
        10**400,
        1.5,
        1e308,
        -1e-320,
        True,
        False,
    ]
)
_SPECIAL_TEXT = st.lists(
    st.one_of(st.sampled_from(SPECIALS), st.text(alphabet="ab <>/｜▁\n", max_size=4)), min_size=1, max_size=4
).map("".join)
_ODD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\x00\x01\x1f\x7f",
        "\u2028\u2029",
        "\ufeff",
        "\U0010ffff",
        "a" * 5000,
        "名" * 300,
        "weather\n",
        "we ather",
        "ü",
        "../etc",
        "a\"b'c<d>",
        "${x}",
        "%s%n",
        "\r\n\r\n",
        "data:image/png;base64,",
        "data:image/png;base64,@@@@",
        "data:;base64,AAAA",
        "data:image/png,raw",
        "data:image/png;base64,AAA",
        "http://",
        "file:///etc/passwd",
        "call_1",
        "toolu_1",
        "weather",
        "auto",
        "none",
        "required",
        "any",
        "tool",
        "function",
        "json_object",
        "json_schema",
        "text",
        "user",
        "assistant",
        "system",
        "developer",
        "tool",
        "latest_reminder",
        "enabled",
        "disabled",
        "high",
        "max",
        "DeepSeek-V4-Pro",
        "DeepSeek-V4.1-Flash",
    ]
)


def _deep(depth: int, leaf: Any, kind: str) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    _NUMBERS,
    st.floats(),
    st.integers(),
    _ODD_TEXT,
    _SPECIAL_TEXT,
    st.text(max_size=20),
)
_VALUES = st.one_of(
    _SCALARS,
    st.lists(_SCALARS, max_size=3),
    st.dictionaries(st.sampled_from(["type", "text", "name", "id", "x", ""]), _SCALARS, max_size=3),
    st.builds(
        _deep, st.sampled_from([5, 60, 126, 127, 128, 400]), _SCALARS, st.sampled_from(["list", "dict"])
    ),
    st.builds(dict),
    st.builds(list),
    st.builds(lambda: [[]]),
    st.builds(lambda: [{}]),
)

# -- mutations -------------------------------------------------------------------------------------------------


def _paths(value: Any) -> list[tuple[Any, ...]]:
    """Every path in ``value`` (the root included), depth first; iterative, for bodies of any depth."""
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        prefix, node = stack.pop()
        found.append(prefix)
        if isinstance(node, dict):
            stack.extend(((*prefix, key), inner) for key, inner in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*prefix, index), inner) for index, inner in reversed(list(enumerate(node))))
    return found


def _copy(value: Any) -> Any:
    """A deep copy of JSON data; iterative, so a body nested past the recursion limit copies too."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, key, node = stack.pop()
        if isinstance(node, dict):
            copied: Any = {}
            for inner_key, inner in node.items():
                copied[inner_key] = None
                stack.append((copied, inner_key, inner))
        elif isinstance(node, list):
            copied = [None] * len(node)
            stack.extend((copied, index, inner) for index, inner in enumerate(node))
        else:
            copied = node
        parent[key] = copied
    return root[0]


#: Bodies the mutations build stay below this depth, so that ``json.dumps`` (recursive in C) can write them;
#: deeper bodies are covered by ``test_deep_nesting_anywhere``, built as text.
_MAX_BODY_DEPTH = 600


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


@st.composite
def _mutate(draw: st.DrawFn, body: dict[str, Any]) -> dict[str, Any]:
    body = _copy(body)
    for _ in range(draw(st.integers(1, 3))):
        if _depth(body) > _MAX_BODY_DEPTH - 400:
            break  # deep enough: one more deep value could pass what a JSON writer can write
        paths = _paths(body)
        path = draw(st.sampled_from(paths[1:])) if len(paths) > 1 else ()
        if not path:
            body[draw(st.text(max_size=5))] = draw(_VALUES)
            continue
        parent = _get(body, path[:-1])
        key = path[-1]
        old = parent[key]
        op = draw(
            st.sampled_from(["replace", "replace", "replace", "delete", "wrap", "text", "unknown", "dup"])
        )
        if op == "replace":
            parent[key] = draw(_VALUES)
        elif op == "delete":
            del parent[key]
        elif op == "wrap":
            parent[key] = draw(st.sampled_from([[old], {"value": old}, [old, old], _deep(130, old, "list")]))
        elif op == "text":
            parent[key] = draw(st.one_of(_SPECIAL_TEXT, _ODD_TEXT))
        elif op == "unknown" and isinstance(old, dict):
            old[draw(st.sampled_from(["extra", "cache_control", "type", "", "__proto__"]))] = draw(_VALUES)
        elif op == "dup" and isinstance(old, list):
            old.extend(_copy(old) * draw(st.integers(1, 3)))
        else:
            parent[key] = draw(_VALUES)
    return body


_BROKEN_TEXT = [
    lambda t: t.replace('"', '"\\ud800', 1),  # a lone surrogate escape
    lambda t: t.replace('"', '"\\udc00\\ud800', 1),
    lambda t: t.replace(":", ': NaN, "z":', 1),
    lambda t: t.replace(":", ': Infinity, "z":', 1),
    lambda t: t.replace(":", ': -Infinity, "z":', 1),
    lambda t: t.replace(":", ': 1e999, "z":', 1),
    lambda t: t.replace(":", ': 18446744073709551616, "z":', 1),
    lambda t: t.replace(":", ': -0, "z":', 1),
    lambda t: t.replace(":", ': 01, "z":', 1),
    lambda t: t.replace("{", '{"model": 1, ', 1),  # a duplicate key (the first one)
    lambda t: t[:-1] + ', "model": null}',  # a duplicate key (the last one)
    lambda t: t[: len(t) // 2],  # cut short
    lambda t: t + " trailing",
    lambda t: t + "\x00",
    lambda t: "\ufeff" + t,
    lambda t: t.replace(",", ",,", 1),
    lambda t: t.replace(" ", "\x0b", 1),
    lambda t: "[" * 200 + t,
    lambda t: t.replace('"', "'", 2),
    lambda t: "",
    lambda t: "null",
    lambda t: "[]",
    lambda t: '"text"',
    lambda t: "1",
]
_BROKEN_BYTES = [
    lambda b: b.replace(b'"', b'"\xff', 1),  # invalid UTF-8
    lambda b: b.replace(b'"', b'"\xed\xa0\x80', 1),  # a UTF-8-encoded surrogate
    lambda b: b.replace(b'"', b'"\xc3', 1),  # a truncated sequence
    lambda b: b.replace(b'"', b'"\xc0\xaf', 1),  # an overlong encoding
    lambda b: b"\xef\xbb\xbf" + b,  # a UTF-8 byte order mark
    lambda b: b.decode().encode("utf-16"),
    lambda b: b.decode().encode("utf-32-le"),
    lambda b: b"\x00" * 4 + b,
]


@st.composite
def hostile_bodies(draw: st.DrawFn, protocol: str) -> str | bytes | dict[str, Any]:
    """A body of ``protocol`` with something wrong (or nothing), as a dict, JSON text or bytes."""
    source = draw(st.sampled_from(["strategy", "rich", "seed"]))
    if source == "strategy":
        base = draw(request_bodies(protocol))
    elif source == "rich":
        base = draw(st.sampled_from(RICH[protocol]))
    else:
        seeds = SEEDS[protocol] or RICH[protocol]
        base = seeds[draw(st.integers(0, len(seeds) - 1))]
    body = draw(_mutate(base)) if draw(st.integers(0, 5)) else _copy(base)
    form = draw(st.sampled_from(["dict", "dict", "str", "bytes", "broken_text", "broken_bytes"]))
    if form == "dict":
        return body
    text = json.dumps(body, ensure_ascii=draw(st.booleans()))
    if form == "str":
        return text
    if form == "bytes":
        return text.encode("utf-8", "surrogatepass")
    if form == "broken_text":
        return draw(st.sampled_from(_BROKEN_TEXT))(text)
    return draw(st.sampled_from(_BROKEN_BYTES))(text.encode("utf-8", "surrogatepass"))


# -- the invariant ---------------------------------------------------------------------------------------------


def assert_error_shape(protocol: str, exc: dscodec.DscodecError) -> None:
    """``exc`` is a client error with the protocol's own body, which is strict JSON."""
    assert isinstance(exc, dscodec.ConversionError), repr(exc)
    assert 400 <= exc.status_code < 500, exc.status_code
    body = exc.body
    json.dumps(body, allow_nan=False).encode("utf-8")
    assert isinstance(exc.message, str) and exc.message
    if protocol == "messages":
        assert body["type"] == "error", body
        assert set(body["error"]) >= {"type", "message"}
        assert isinstance(body["error"]["message"], str) and isinstance(body["error"]["type"], str)
    else:
        assert set(body) == {"error"}, body
        assert set(body["error"]) >= {"message", "type", "param", "code"}
        assert isinstance(body["error"]["message"], str)
        assert body["error"]["param"] is None or isinstance(body["error"]["param"], str)


def check_request(protocol: str, body: Any) -> dscodec.ConversationRequest | None:
    """Convert ``body``: a request that renders and encodes cleanly, or a well-formed client error."""
    try:
        request = dscodec.convert(protocol, body)  # type: ignore[arg-type]
    except dscodec.DscodecError as exc:
        assert_error_shape(protocol, exc)
        return None
    check_encoding(request)
    return request


def check_encoding(request: dscodec.ConversationRequest) -> None:
    prompt = dscodec.render(request)
    assert isinstance(prompt.text, str)
    prompt.text.encode("utf-8")  # no lone surrogate reaches the prompt
    enc = encoder(request.model_version)
    ids = enc.encode(request)
    placed = [enc.vocabulary.special_id(prompt.text[s:e]) for s, e in prompt.special_spans]
    assert [i for i in ids if enc.vocabulary.is_special(i)] == placed
    opts = request.inference_options
    if opts.max_tokens is not None:
        assert isinstance(opts.max_tokens, int) and opts.max_tokens > 0
    for name in ("temperature", "top_p"):
        value = getattr(opts, name, None)
        assert value is None or (isinstance(value, (int, float)) and math.isfinite(value))
    try:
        budget = request.resolve_max_tokens(len(ids), 131_072)
    except dscodec.ContextLengthExceeded as exc:
        assert_error_shape(request.protocol, exc)
    else:
        assert budget > 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
@given(data=st.data())
def test_hostile_bodies_convert_or_fail_cleanly(protocol: str, data: st.DataObject) -> None:
    check_request(protocol, data.draw(hostile_bodies(protocol)))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@settings(max_examples=max(10, settings.default.max_examples // 3))
@given(
    body=st.one_of(
        st.none(), st.integers(), st.text(max_size=30), st.binary(max_size=30), st.lists(st.none())
    )
)
def test_any_value_as_a_body(protocol: str, body: Any) -> None:
    check_request(protocol, body)


# -- targeted cases, every protocol ----------------------------------------------------------------------------


def _set(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    body = _copy(body)
    _get(body, path[:-1])[path[-1]] = value
    return body


_EXTREMES = [
    None,
    True,
    False,
    -0.0,
    -1,
    0,
    1.5,
    2**31,
    2**63,
    2**64,
    10**40,
    -(2**64),
    1e308,
    math.nan,
    math.inf,
    "1",
    [],
    {},
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_path_of_the_rich_bodies_takes_every_extreme(protocol: str) -> None:
    """Each path of each hand-written body, replaced by each extreme value (deterministic, all of them)."""
    for base in RICH[protocol]:
        check_request(protocol, base)
        for path in _paths(base)[1:]:
            for value in _EXTREMES:
                check_request(protocol, _set(base, path, value))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("depth", [1, 126, 127, 128, 1000, 100_000])
def test_deep_nesting_anywhere(protocol: str, depth: int) -> None:
    base = RICH[protocol][0]
    for path in [p for p in _paths(base)[1:] if len(p) <= 4]:
        for kind in ("list", "dict"):
            if depth <= 1000:
                check_request(protocol, _set(base, path, _deep(depth, "x", kind)))
            # As text, past every recursion limit a Python JSON writer has.
            inner = "[" * depth + "1" + "]" * depth if kind == "list" else '{"k":' * depth + "1" + "}" * depth
            text = json.dumps(_set(base, path, "@@")).replace('"@@"', inner)
            check_request(protocol, text)
            break  # one kind per path as text is enough; the dict form covers the other


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "text",
    [
        '{"model": "DeepSeek-V4-Pro", "model": "DeepSeek-V4-Pro"}',
        '{"a": "\\ud800"}',
        '{"a": "\\udfff\\ud800"}',
        "{" + '"a": 1,' * 10_000 + '"b": 2}',
        '{"a": ' + "9" * 5000 + "}",
        '{"a": 1e' + "9" * 50 + "}",
        '{"a": -' + "0" * 100 + "}",
        '{"a": "' + "\\\\" * 10_000 + '"}',
        '{"a": "' + "\\u0000" * 1000 + '"}',
        "\ufeff{}",
        '{"a": "\t"}',
        '{"a": tru}',
        '{"a": nul}',
        "{}" * 2,
        " " * 100_000,
    ],
)
def test_odd_json_text(protocol: str, text: str) -> None:
    check_request(protocol, text)
    check_request(protocol, text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_bytes_and_text_agree(protocol: str) -> None:
    """A body given as a dict, as text and as bytes converts the same way (or fails the same way)."""
    for base in RICH[protocol]:
        results = []
        for form in (base, json.dumps(base), json.dumps(base).encode()):
            try:
                results.append(dscodec.render(dscodec.convert(protocol, form)).text)  # type: ignore[arg-type]
            except dscodec.ConversionError as exc:
                results.append(exc.body)
        assert results[0] == results[1] == results[2]


@pytest.mark.parametrize(
    "protocol", [None, "", "CHAT_COMPLETIONS", "chat", b"messages", 5, ["responses"], {"a": 1}]
)
def test_unknown_protocols_are_refused(protocol: Any) -> None:
    with pytest.raises(dscodec.UnsupportedProtocol) as caught:
        dscodec.convert(protocol, "{}")
    assert_error_shape("chat_completions", caught.value)
    with pytest.raises(dscodec.UnsupportedProtocol):
        dscodec.accumulate(protocol, [])


def test_v41_prompt_with_a_tokenizer_lacking_its_specials() -> None:
    """The bundled V4 tokenizer has no ``<｜System｜>``: a V4.1 prompt is a SpecialTokenMissing naming it."""
    request = dscodec.convert(
        "messages",
        {"model": "DeepSeek-V4.1-Flash", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
    )
    with pytest.raises(dscodec.SpecialTokenMissing) as caught:
        dscodec.PromptEncoder().encode(request)
    assert "<｜System｜>" in caught.value.message
    assert caught.value.status_code == 500


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_in_a_mapping_are_refused(protocol: str, value: float) -> None:
    """JSON text cannot hold NaN or the infinities, so a mapping body cannot either: a 400, never a field read
    as absent (which is what a writer turning them into null would make of them)."""
    for base in RICH[protocol]:
        for path in [("temperature",), ("metadata",), ("model",)]:
            with pytest.raises(dscodec.ConversionError) as caught:
                dscodec.convert(protocol, _set(base, path, value))  # type: ignore[arg-type]
            assert_error_shape(protocol, caught.value)
            assert "NaN and infinite numbers are not JSON" in caught.value.message


class _Text(str):
    pass


class _Number(float):
    pass


class _Message(dict):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_mapping_body_reads_as_the_json_it_stands_for(protocol: str) -> None:
    """Subclasses of str, int and float, other mappings and tuples in a mapping body are the JSON values they
    stand for: the request is the one its JSON text gives."""
    from collections import OrderedDict
    from types import MappingProxyType

    def dress(value: Any, depth: int = 0) -> Any:
        if isinstance(value, dict):
            pairs = {_Text(k): dress(v, depth + 1) for k, v in value.items()}
            return MappingProxyType(pairs) if depth % 2 else OrderedDict(pairs)
        if isinstance(value, list):
            return tuple(dress(v, depth + 1) for v in value)
        if isinstance(value, str):
            return _Text(value)
        if isinstance(value, float):
            return _Number(value)
        return value

    def outcome(body: Any) -> object:
        try:
            return dscodec.convert(protocol, body)
        except dscodec.ConversionError as exc:
            return exc.message

    for base in [*RICH[protocol], _set(RICH[protocol][0], ("tools",), [])]:
        assert outcome(dict(dress(base))) == outcome(json.dumps(base))
    assert isinstance(outcome(_set(RICH[protocol][0], ("tools",), [])), dscodec.ConversationRequest)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ({1, 2}, "set"),
        (b"x", "bytes"),
        (__import__("datetime").date(2020, 1, 1), "date"),
        (__import__("uuid").UUID(int=1), "UUID"),
        (__import__("decimal").Decimal("0.5"), "Decimal"),
        (object(), "object"),
    ],
)
def test_a_value_json_has_none_for_is_refused_by_where_it_is(protocol: str, value: object, kind: str) -> None:
    for base in RICH[protocol]:
        with pytest.raises(dscodec.ConversionError) as caught:
            dscodec.convert(protocol, _set(base, ("metadata",), {"k": value}))  # type: ignore[arg-type]
        assert_error_shape(protocol, caught.value)
        assert f"metadata.k is a {kind}, which JSON has no value for" in caught.value.message
        assert caught.value.param == "metadata.k"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_key_that_is_no_string_is_refused(protocol: str) -> None:
    for base in RICH[protocol]:
        with pytest.raises(dscodec.ConversionError) as caught:
            dscodec.convert(protocol, _set(base, ("metadata",), {1: "v"}))  # type: ignore[arg-type]
        assert_error_shape(protocol, caught.value)
        assert "a key 1 (int) in metadata; JSON keys are strings" in caught.value.message


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_mapping_that_holds_itself_or_nests_deep_is_refused_by_depth(protocol: str) -> None:
    """Other mappings are walked with their depth counted: one that holds itself, or 200 nested proxies, is the
    depth error, never a hang."""
    from collections.abc import Mapping
    from types import MappingProxyType

    class Loop(Mapping[str, Any]):
        def __getitem__(self, key: str) -> Any:
            return self

        def __iter__(self) -> Any:
            return iter(["a"])

        def __len__(self) -> int:
            return 1

    deep: Any = "x"
    for _ in range(200):
        deep = MappingProxyType({"k": deep})
    for value in (Loop(), deep):
        with pytest.raises(dscodec.ConversionError) as caught:
            dscodec.convert(protocol, _set(RICH[protocol][0], ("metadata",), value))  # type: ignore[arg-type]
        assert caught.value.message == "JSON input exceeds the maximum nesting depth of 128"
