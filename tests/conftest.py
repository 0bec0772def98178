"""Shared test settings.

Hypothesis takes its example count from ``DSCODEC_MAX_EXAMPLES`` (40 by default: CI stays quick). By default the
examples are derandomized, so a CI run is repeatable; set ``DSCODEC_RANDOM_EXAMPLES=1`` (with a larger count) for a
long exploring run.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

# The tests speak plain HTTP to servers on 127.0.0.1 only, and make hundreds of HTTP clients (httpx's, the SDKs'):
# httpx reads the certificate authorities' file for each one, about 50 ms of CPU. It reads the file
# SSL_CERT_FILE names, else a folder SSL_CERT_DIR names, which OpenSSL reads only when it checks a TLS peer:
# point it at a folder that holds no certificate (the servers and commands the tests start inherit this too).
os.environ["SSL_CERT_FILE"] = ""
os.environ["SSL_CERT_DIR"] = str(Path(__file__).parent / "support")

settings.register_profile(
    "dscodec",
    max_examples=int(os.environ.get("DSCODEC_MAX_EXAMPLES", "40")),
    deadline=None,
    derandomize=os.environ.get("DSCODEC_RANDOM_EXAMPLES", "") not in ("1", "true", "yes"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("dscodec")
