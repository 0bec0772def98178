"""Where the output machine is: its stages, the two text channels, the JSON-mode phases, and the fences of JSON mode.

The hot paths read enum members through the module names bound below (``CONTENT`` rather than
``Stage.CONTENT``): reading a member as a class attribute goes through a descriptor and costs several times a
global lookup. The members themselves are the only spelling of each state.
"""

from __future__ import annotations

import enum

__all__ = [
    "CH_CONTENT",
    "CH_REASONING",
    "CLOSE_FENCE",
    "CONTENT",
    "DISCARD",
    "ERROR",
    "FENCES",
    "FENCE_PREFIXES",
    "FINISHED",
    "JSON_AFTER",
    "JSON_BEFORE",
    "JSON_OFF",
    "JSON_VALUE",
    "LONGEST_FENCE_PREFIX",
    "REASONING",
    "TOOL_CALLS",
    "Channel",
    "JsonPhase",
    "Stage",
]


class Stage(enum.Enum):
    """Where the machine is in the output (read-only :attr:`OutputMachine.state`)."""

    REASONING = "reasoning"
    CONTENT = "content"
    JSON_VALUE = "json_value"
    TOOL_CALLS = "tool_calls"
    DISCARD = "discard"
    FINISHED = "finished"
    ERROR = "error"


class Channel(enum.IntEnum):
    """The channel a text delta goes out on (also the index of per-channel lists)."""

    REASONING = 0
    CONTENT = 1


class JsonPhase(enum.IntEnum):
    """JSON mode inside :attr:`Stage.CONTENT`: off, before the value starts, or after its closing fence."""

    OFF = 0
    BEFORE = 1
    AFTER = 2


# Every member, in definition order (the unpacking fails at import if a member is added and not named here).
REASONING, CONTENT, JSON_VALUE, TOOL_CALLS, DISCARD, FINISHED, ERROR = Stage
CH_REASONING, CH_CONTENT = Channel
JSON_OFF, JSON_BEFORE, JSON_AFTER = JsonPhase

#: Fences that open a JSON value in JSON mode, and the one that closes it.
FENCES = ("```json\n", "```\n")
CLOSE_FENCE = "\n```"
FENCE_PREFIXES = frozenset(f[:k] for f in FENCES for k in range(1, len(f)))
LONGEST_FENCE_PREFIX = max(len(f) for f in FENCES) - 1
