"""``create_app`` checks its arguments when it is called, not when the first request needs them."""

from __future__ import annotations

from typing import Any

import pytest

import dscodec
from dscodec.server import MemoryResponseStore, ScriptedBackend, create_app
from tests.server.conftest import VOCABULARY
from tests.server.scripts import SCRIPTS

BACKEND = ScriptedBackend(SCRIPTS, tokenizer=VOCABULARY)


@pytest.mark.parametrize(
    ("arguments", "error", "names"),
    [
        ({"backend": 5}, TypeError, "backend"),
        ({"backend": None}, TypeError, "backend"),
        ({"context_limit": 0}, ValueError, "context_limit"),
        ({"context_limit": 4096.0}, TypeError, "context_limit"),
        ({"max_body_bytes": -1}, ValueError, "max_body_bytes"),
        ({"max_body_bytes": "1MB"}, TypeError, "max_body_bytes"),
        ({"body_timeout": 0}, ValueError, "body_timeout"),
        ({"body_timeout": float("nan")}, ValueError, "body_timeout"),
        ({"backend_timeout": float("inf")}, ValueError, "backend_timeout"),
        ({"backend_timeout": "30"}, TypeError, "backend_timeout"),
        ({"backend_timeout": True}, TypeError, "backend_timeout"),
        ({"send_timeout": -1}, ValueError, "send_timeout"),
        ({"send_timeout": 10**400}, ValueError, "send_timeout"),
        ({"send_timeout": "60"}, TypeError, "send_timeout"),
        ({"options": {"unsupported": "reject"}}, TypeError, "options"),
        ({"served_models": "DeepSeek-V4-Pro"}, TypeError, "served_models"),
        ({"served_models": [1]}, TypeError, "served_models"),
        ({"served_models": 5}, TypeError, "served_models"),
        ({"served_models": iter(["DeepSeek-V4-Pro"])}, TypeError, "served_models"),
        ({"response_store": {}}, TypeError, "response_store"),
    ],
)
def test_bad_arguments_are_named(arguments: dict[str, Any], error: type[Exception], names: str) -> None:
    given = dict(arguments)
    backend = given.pop("backend", BACKEND)
    with pytest.raises(error, match=names):
        create_app(backend, tokenizer=VOCABULARY, **given)


def test_good_arguments_of_every_kind() -> None:
    app = create_app(
        BACKEND,
        tokenizer=VOCABULARY,
        context_limit=1,
        max_body_bytes=1,
        body_timeout=None,
        backend_timeout=0.5,
        send_timeout=None,
        options=dscodec.ConversionOptions(),
        served_models=("DeepSeek-V4-Pro",),
        response_store=MemoryResponseStore(),
    )
    assert any(getattr(route, "path", None) == "/v1/responses" for route in app.routes)
