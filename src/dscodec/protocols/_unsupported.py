"""Request fields dscodec reads past without honouring them, and the policy that can refuse them instead.

Every protocol has fields that ask the model server for something the codec cannot give: sampling penalties
and token biases it has no way to pass on, audio, server-side state, output formats the protocol cannot
express. The reference reads past them (a request with ``frequency_penalty: 1.5`` is served as if it had
none); that stays the default, ``ConversionOptions(unsupported="ignore")``. With ``unsupported="reject"``
such a field is a 400 that names it, so a client learns that its setting has no effect.

A field is refused only when its value asks for something: a neutral value (``0`` for a penalty, ``{}`` for a
bias, ``null``, ``false`` for ``background``) changes nothing and passes. The check runs after the protocol's
own reading of the body, so a field of the wrong type keeps the error it has under ``"ignore"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dscodec.errors import ConversionError
from dscodec.options import UnsupportedBehavior

__all__ = ["UNHONOURED", "Unhonoured", "UnsupportedBehavior", "rejecting", "unhonoured_fields"]


def _not_zero(value: Any) -> bool:
    return value is not None and not (type(value) in (int, float) and value == 0)


def _not_one(value: Any) -> bool:
    return value is not None and not (type(value) in (int, float) and value == 1)


def _non_empty(value: Any) -> bool:
    return value is not None and value != {} and value != [] and value != ""


def _present(value: Any) -> bool:
    return value is not None


def _true(value: Any) -> bool:
    return value is True


def _false(value: Any) -> bool:
    return value is False


def _top_k(value: Any) -> bool:
    # 0 and -1 both mean "no top-k" on the engines that have the setting.
    return value is not None and not (type(value) is int and value in (0, -1))


def _auto(value: Any) -> bool:
    return isinstance(value, str) and value == "auto"


def _named_function(value: Any) -> bool:
    # "none" and "auto" ask for nothing without functions, which are refused on their own.
    return value is not None and value not in ("none", "auto")


def _beyond_text(value: Any) -> bool:
    return isinstance(value, list) and any(item != "text" for item in value)


def _omitted(value: Any) -> bool:
    return isinstance(value, str) and value == "omitted"


def _not_medium(value: Any) -> bool:
    # "medium" is the default length of an answer: it asks for nothing.
    return value is not None and value != "medium"


#: The Responses tool types the conversion reads (the others, hosted tools, are dropped: behavior.md).
_READ_TOOLS = frozenset(
    {"function", "custom", "namespace", "web_search", "web_search_2025_08_26", "tool_search"}
)


def _item_reference(value: Any) -> bool:
    return isinstance(value, list) and any(
        isinstance(item, Mapping) and item.get("type") == "item_reference" for item in value
    )


def _hosted_tool(value: Any) -> bool:
    return isinstance(value, list) and any(
        isinstance(tool, Mapping) and tool.get("type") not in _READ_TOOLS for tool in value
    )


@dataclass(frozen=True)
class Unhonoured:
    """A request field dscodec does not honour.

    Attributes:
        name: the field: a top-level one, or a dotted path into an object (``output_config.format``).
        asks: whether a value asks for something (a neutral value passes).
        why: what cannot be done, for the error message.
    """

    name: str
    asks: Callable[[Any], bool]
    why: str


_PENALTIES = "sampling penalties are not passed to the model server"
_TOP_K = Unhonoured("top_k", _top_k, "top-k sampling is not passed to the model server")
#: What both OpenAI protocols read past: sampling settings, the single-call switch and moderation.
_OPENAI = (
    Unhonoured("frequency_penalty", _not_zero, _PENALTIES),
    Unhonoured("presence_penalty", _not_zero, _PENALTIES),
    Unhonoured("repetition_penalty", _not_one, _PENALTIES),
    Unhonoured("logit_bias", _non_empty, "token biases are not passed to the model server"),
    _TOP_K,
    Unhonoured("min_p", _not_zero, "min-p sampling is not passed to the model server"),
    Unhonoured("parallel_tool_calls", _false, "the model may still call several tools at once"),
    Unhonoured("moderation", _present, "the input and the output are not moderated"),
)

#: Per protocol, the fields read past without being honoured, as ``name: (asks, why)`` beyond the shared ones.
_OWN: Mapping[str, Mapping[str, tuple[Callable[[Any], bool], str]]] = {
    "chat_completions": {
        "audio": (_present, "the model has no audio output"),
        "modalities": (_beyond_text, "the model writes text only"),
        "prediction": (_present, "predicted outputs are not supported"),
        "web_search_options": (_present, "there is no web search"),
        "functions": (_non_empty, "the legacy functions are not read; send them as tools"),
        "function_call": (_named_function, "the legacy function_call is not read; send tool_choice"),
        "store": (_true, "chat completions are not stored"),
        "verbosity": (_not_medium, "the length of the answer is not steered"),
    },
    "responses": {
        "background": (_true, "responses are not run in the background"),
        "conversation": (_present, "there are no stored conversations"),
        "prompt": (_present, "there are no stored prompt templates"),
        "max_tool_calls": (_present, "the number of tool calls is not limited"),
        "truncation": (
            _auto,
            "the input is not truncated to fit; a prompt too long for the context is a 400",
        ),
        "context_management": (_non_empty, "there is no server-side compaction"),
        "include": (
            _non_empty,
            "no extra output is included (log probabilities come with top_logprobs)",
        ),
        "input": (
            _item_reference,
            "an item_reference names stored state the codec does not have: it is dropped",
        ),
        "tools": (
            _hosted_tool,
            "hosted tools (file search, MCP, code interpreter, …) are not run",
        ),
    },
    "messages": {
        "output_format": (_present, "structured output is not supported in Messages"),
        # Where the anthropic SDK's ``messages.parse`` puts the schema; ``output_config.effort`` is honoured.
        "output_config.format": (_present, "structured output is not supported in Messages"),
        "mcp_servers": (_non_empty, "MCP servers are not supported"),
        # The example server holds threads itself, and takes ``thread`` out before converting.
        "thread": (_present, "the codec holds no conversation between requests"),
        "container": (_present, "there are no code-execution containers"),
        "context_management": (_present, "context management is not supported"),
        "compaction": (_present, "there is no server-side compaction: the model answers as usual"),
        "tool_choice.disable_parallel_tool_use": (_true, "the model may still call several tools at once"),
        "thinking.display": (_omitted, "the thinking is sent in full"),
    },
}
_SHARED: Mapping[str, tuple[Unhonoured, ...]] = {
    "chat_completions": _OPENAI,
    "responses": _OPENAI,
    "messages": (_TOP_K,),
}

#: Per protocol, the fields read past without being honoured.
UNHONOURED: Mapping[str, tuple[Unhonoured, ...]] = {
    protocol: (*_SHARED[protocol], *(Unhonoured(name, *rule) for name, rule in own.items()))
    for protocol, own in _OWN.items()
}


_ABSENT = object()


def _at(body: Any, path: str) -> Any:
    """The value at a dotted ``path`` of ``body``, or ``_ABSENT`` where a step is missing or not an object."""
    value = body
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return _ABSENT
        value = value[key]
    return value


def unhonoured_fields(protocol: str, body: Any) -> list[Unhonoured]:
    """The fields of ``body`` (a parsed request) whose values ask for something dscodec does not do."""
    found: list[Unhonoured] = []
    for field in UNHONOURED.get(protocol, ()):
        value = _at(body, field.name)
        if value is not _ABSENT and field.asks(value):
            found.append(field)
    return found


def rejecting(protocol: str, read: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``read``, followed by a refusal of the first field of the body that dscodec would not honour.

    Raises:
        ConversionError: 400, naming the field (``param``) and what cannot be done.
    """

    def read_then_check(body: Any) -> Any:
        request = read(body)
        found = unhonoured_fields(protocol, body)
        if found:
            field = found[0]
            raise ConversionError(f"Unsupported parameter '{field.name}': {field.why}.", param=field.name)
        return request

    return read_then_check
