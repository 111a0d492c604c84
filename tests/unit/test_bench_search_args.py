"""bench/search.py refuses a part or engine it does not know (it ran nothing and printed no figure)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "search.py"


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--engines", "sqlite", "--engines: unknown sqlite (embedded, postgres)"),
        ("--parts", "wordstat", "--parts: unknown wordstat (search, cube, frequency)"),
    ],
)
def test_an_unknown_name_is_an_error_naming_the_known_ones(flag: str, value: str, says: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), flag, value], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2
    assert says in done.stderr
    assert "vocabulary" not in done.stdout  # refused before any work
