"""The CI rule for tests that need something outside Python (docs/architecture.md section 9).

``missing(reason)``: on a laptop the test is skipped; with ``CI=true`` it fails, so CI never
passes by skipping an engine or a browser it was supposed to have started.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

__all__ = ["missing"]


def missing(reason: str) -> NoReturn:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)
