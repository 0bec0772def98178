"""The protocol table: one lookup for every protocol name, one error for an unknown one, error bodies through it,
and errors that name their protocol without being changed."""

from __future__ import annotations

import subprocess
import sys

import pytest

import dscodec
from dscodec.errors import ContextLengthExceeded, ConversionError, DscodecError, UnsupportedProtocol
from dscodec.protocols import _registry

CHAT = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}


def test_the_table_lists_the_three_protocols() -> None:
    assert _registry.PROTOCOLS == ("chat_completions", "responses", "messages")
    assert dscodec.protocols.PROTOCOLS == _registry.PROTOCOLS
    assert [_registry.spec(name).name for name in _registry.PROTOCOLS] == list(_registry.PROTOCOLS)
    assert [_registry.spec(name).continues_responses for name in _registry.PROTOCOLS] == [False, True, False]


@pytest.mark.parametrize(
    "call",
    [
        lambda: dscodec.convert("grpc", CHAT),  # type: ignore[arg-type]
        lambda: dscodec.accumulate("grpc", []),  # type: ignore[arg-type]
        lambda: dscodec.error_body("grpc", ConversionError("x")),  # type: ignore[arg-type]
        lambda: dscodec.StreamProcessor(
            dscodec.convert("chat_completions", CHAT).model_copy(update={"protocol": "grpc"}),
            response_id="r",
            model="m",
        ),
        lambda: _registry.spec(None),  # type: ignore[arg-type]
    ],
)
def test_an_unknown_protocol_is_one_error_everywhere(call: object) -> None:
    with pytest.raises(
        UnsupportedProtocol, match=r"^unknown protocol .*; expected one of chat_completions, "
    ):
        call()  # type: ignore[operator]
    # Callers that caught either of the former errors still catch it.
    assert issubclass(UnsupportedProtocol, ConversionError) and issubclass(UnsupportedProtocol, ValueError)


def test_with_protocol_returns_a_copy_and_keeps_the_first_protocol() -> None:
    error = ConversionError("bad", param="messages.0")
    named = error.with_protocol("messages")
    assert error.protocol is None and named is not error
    assert (type(named), named.message, named.param, named.protocol) == (
        ConversionError,
        "bad",
        "messages.0",
        "messages",
    )
    assert named.with_protocol("chat_completions") is named
    assert named.body == {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    assert error.body["error"]["message"] == "bad" and "type" not in error.body
    with pytest.raises(AttributeError):
        named.protocol = "responses"  # type: ignore[misc]


def test_an_error_can_name_its_protocol_when_made() -> None:
    error = ContextLengthExceeded("too long", protocol="responses")
    assert (
        error.body
        == dscodec.error_body("responses", error)
        == {
            "error": {
                "message": "too long",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_request_error",
            }
        }
    )


def test_conversion_errors_name_the_protocol() -> None:
    with pytest.raises(ConversionError) as caught:
        dscodec.convert("messages", {"model": "DeepSeek-V4-Pro", "messages": []})
    assert caught.value.protocol == "messages" and caught.value.body["type"] == "error"


def test_every_writer_renders_its_own_error_shape() -> None:
    for name in _registry.PROTOCOLS:
        assert issubclass(_registry.spec(name).writer(), dscodec.protocols._wire.EventWriter)
    assert isinstance(DscodecError("x").body, dict)


def test_import_dscodec_loads_no_protocol_package_and_no_pydantic() -> None:
    # Only the errors load with the package: the request model, the wire events and their imports wait for the
    # first use of a name that needs them.
    heavy = (
        "pydantic",
        "dscodec.protocols",
        "dscodec.conversation",
        "dscodec.options",
        "orjson",
        "dataclasses",
    )
    code = f"import sys, dscodec; print(sorted(m for m in sys.modules if m.startswith({heavy!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


_LOADED = (
    "import sys, dscodec; {call}; "
    "print(sorted(m.split('.')[2] + '.' + m.split('.')[3] for m in sys.modules "
    "if m.startswith('dscodec.protocols.') and m.count('.') == 3 and not m.split('.')[3].startswith('_')))"
)


@pytest.mark.parametrize(
    ("call", "packages"),
    [
        ("dscodec.preload()", ["anthropic_messages", "openai_chat", "openai_responses"]),
        ("dscodec.preload(protocols=['messages'])", ["anthropic_messages"]),
        ("dscodec.preload(protocols=('chat_completions', 'responses'))", ["openai_chat", "openai_responses"]),
        ("dscodec.preload(protocols=[])", []),
    ],
)
def test_preload_imports_each_named_protocols_three_parts(call: str, packages: list[str]) -> None:
    # A server calls preload() at start-up: the converter, the writer and the accumulator of each protocol it
    # names are imported then, and the first request finds them loaded.
    code = _LOADED.format(call=call)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    expected = sorted(
        f"{package}.{part}"
        for package in packages
        for part in ("accumulate", "inbound", "models", "outbound")
    )
    assert out.strip() == repr(expected)


def test_preload_also_imports_the_renderer_the_encoder_front_the_processor_and_the_schema_reader() -> None:
    modules = (
        "dscodec.prompt.render",
        "dscodec.prompt.tokenize",
        "dscodec.processor",
        "dscodec.protocols._schema",
    )
    code = (
        f"import sys, dscodec; dscodec.preload(protocols=[]); print([m in sys.modules for m in {modules!r}])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[True, True, True, True]"


def test_a_request_without_a_schema_leaves_the_schema_reader_unloaded_and_the_first_schema_loads_it() -> None:
    """The schema reader (regular expression dialects, meta-schemas) is the largest part of the request path: a
    program that never sends a tool or a response-format schema never loads it; preload() loads it up front."""
    code = (
        "import sys, dscodec\n"
        "reader = 'dscodec.protocols._schema'\n"
        "body = {'model': 'DeepSeek-V4-Pro', 'messages': [{'role': 'user', 'content': 'hi'}]}\n"
        "dscodec.convert('chat_completions', body)\n"
        "print(reader in sys.modules)\n"
        "tool = {'type': 'function', 'function': {'name': 'f', 'parameters': {'type': 'object'}}}\n"
        "request = dscodec.convert('chat_completions', {**body, 'tools': [tool]})\n"
        "print(reader in sys.modules, request.conversation.tools[0].name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["False", "True f"]


def test_preload_refuses_an_unknown_protocol_before_loading_any() -> None:
    code = (
        "import sys, dscodec\n"
        "try:\n    dscodec.preload(protocols=['messages', 'grpc'])\n"
        "except dscodec.UnsupportedProtocol as exc:\n    print(exc.status_code, exc)\n"
        "print('dscodec.protocols.anthropic_messages.inbound' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        "400 unknown protocol 'grpc'; expected one of chat_completions, responses, messages",
        "False",
    ]


def test_preload_refuses_one_string_for_the_names() -> None:
    with pytest.raises(TypeError, match=r"collection of protocol names, not one string"):
        dscodec.preload(protocols="messages")
    with pytest.raises(TypeError, match=r"collection of protocol names or None, not int"):
        dscodec.preload(protocols=5)  # type: ignore[arg-type]
