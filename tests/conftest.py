"""Shared test settings.

Hypothesis takes its example count from ``DSCODEC_MAX_EXAMPLES`` (60 by default: CI stays quick). By default the
examples are derandomized, so a CI run is repeatable; set ``DSCODEC_RANDOM_EXAMPLES=1`` (with a larger count) for a
long exploring run.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dscodec",
    max_examples=int(os.environ.get("DSCODEC_MAX_EXAMPLES", "60")),
    deadline=None,
    derandomize=os.environ.get("DSCODEC_RANDOM_EXAMPLES", "") not in ("1", "true", "yes"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("dscodec")
