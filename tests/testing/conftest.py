"""The example server with the scripted backend of tests/server, for the kit's live tests (loopback only)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.server.scripts import SCRIPTS

#: What each script needs from the request: the tools its calls name, and the stop sequence it hits.
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TRIP = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "budget": {"type": "number"},
        "refundable": {"type": "boolean"},
        "stops": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "object"},
    },
}
TOOLS = {
    "tool_args": ("plan_trip", TRIP),
    "tool_args_tokens": ("plan_trip", TRIP),
    "parallel": ("get_weather", WEATHER),
    "tool_search": ("tool_search", {"type": "object", "properties": {"query": {"type": "string"}}}),
}
STOPS = {"stop": ["END"]}


def body(
    protocol: str, script: str, *, model: str = "DeepSeek-V4-Pro", stream: bool = True
) -> dict[str, Any]:
    """A request for ``script`` in ``protocol``: with the script's tool declared and its stop sequence set."""
    tool = TOOLS.get(script)
    stop = STOPS.get(script)
    request: dict[str, Any] = {"model": model, "stream": stream}
    if protocol == "chat_completions":
        request["messages"] = [{"role": "user", "content": "Hi"}]
        if stream:
            request["stream_options"] = {"include_usage": True}
        if tool:
            request["tools"] = [{"type": "function", "function": {"name": tool[0], "parameters": tool[1]}}]
        if stop:
            request["stop"] = stop
    elif protocol == "responses":
        request["input"] = "Hi"
        if script == "tool_search":
            # A client-executed tool search (calls stream as tool_search_call items), and a function: on V4,
            # which drops tool search tools, the function keeps tool calls readable.
            request["tools"] = [
                {"type": "tool_search", "execution": "client", "parameters": tool[1]},
                {"type": "function", "name": "get_weather", "parameters": WEATHER},
            ]
        elif tool:
            request["tools"] = [{"type": "function", "name": tool[0], "parameters": tool[1]}]
    else:
        request["messages"] = [{"role": "user", "content": "Hi"}]
        request["max_tokens"] = 1024
        if tool:
            request["tools"] = [{"name": tool[0], "input_schema": tool[1]}]
        if stop:
            request["stop_sequences"] = stop
    return request


@pytest.fixture(scope="session")
def live_url() -> Iterator[str]:
    """The example server on a free 127.0.0.1 port, serving the scripts of tests/server."""
    pytest.importorskip("uvicorn")
    from dscodec.server import ScriptedBackend, create_app
    from tests.server.conftest import VOCABULARY, LiveServer

    app = create_app(ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY), tokenizer=VOCABULARY, context_limit=4096)
    with LiveServer(app) as live:
        yield live.url
