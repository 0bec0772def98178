"""Shared test settings: hypothesis example counts come from DSCODEC_MAX_EXAMPLES (small in CI)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dscodec",
    max_examples=int(os.environ.get("DSCODEC_MAX_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("dscodec")
