"""Test-wide fixtures: engine URLs and the CI rule (docs/architecture.md section 9).

Integration tests ask for ``kafka_url``, ``postgres_url`` or ``s3_url``.
The URLs come from the environment (``.ci/run`` and ``scripts/test`` export them
after ``ops/*/start``):

    TURBOCUBES_TEST_KAFKA     kafka://127.0.0.1:19092
    TURBOCUBES_TEST_POSTGRES  postgresql://turbocubes:turbocubes@127.0.0.1:54329/turbocubes
    TURBOCUBES_TEST_S3        s3://turbocubes-test?endpoint=http://127.0.0.1:18333

Without the variable the test is skipped on a laptop, but with ``CI=true`` a
missing engine *fails* the test: CI never passes by skipping.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from tests.ci import missing

pytest_plugins = ["tests.partners.fixtures"]
REPO = Path(__file__).resolve().parent.parent
#: the fixtures tests read: small, copyable, with their licences (tests/data/MANIFEST.md); nothing from outside
DATA = REPO / "tests" / "data"


def _engine(var: str, what: str) -> str:
    url = os.environ.get(var)
    if url:
        return url
    missing(f"{what} is not running: {var} is not set (scripts/test starts it through ops/)")


@pytest.fixture(scope="session")
def kafka_url() -> str:
    return _engine("TURBOCUBES_TEST_KAFKA", "Apache Kafka")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    return _engine("TURBOCUBES_TEST_POSTGRES", "PostgreSQL")


@pytest.fixture(scope="session")
def s3_url() -> str:
    return _engine("TURBOCUBES_TEST_S3", "SeaweedFS S3")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``tests/data``: the fixture files that travel with the repository (a fresh clone has them)."""
    return DATA


@pytest.fixture
def uid() -> str:
    """A fresh id for topic / group / schema names, so tests never see each other's data."""
    return uuid.uuid4().hex[:12]
