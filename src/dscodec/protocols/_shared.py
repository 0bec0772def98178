"""The names the three ``models.py`` import, re-exported from the modules that now hold them.

Temporary: this module goes away when each ``models.py`` imports :mod:`._body` and :mod:`._sampling` itself.
"""

from __future__ import annotations

from dscodec.protocols._body import (
    WireError,
    describe_value,
    fail,
    invalid_type,
    join_path,
    missing_field,
    read_bool,
    read_f32,
    read_list,
    read_map,
    read_str,
    read_tag,
    read_tagged_map,
    read_uint,
    read_unit_enum,
)
from dscodec.protocols._sampling import EFFORT_VARIANTS, THINKING_VARIANTS, EffortInput, ThinkingSwitch

__all__ = [
    "EFFORT_VARIANTS",
    "THINKING_VARIANTS",
    "EffortInput",
    "ThinkingSwitch",
    "WireError",
    "describe_value",
    "fail",
    "invalid_type",
    "join_path",
    "missing_field",
    "read_bool",
    "read_f32",
    "read_list",
    "read_map",
    "read_str",
    "read_tag",
    "read_tagged_map",
    "read_uint",
    "read_unit_enum",
]
