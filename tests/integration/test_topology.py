"""The cluster topology for real, without Docker (docs/architecture.md section 8).

``ops/topology/start`` runs each cube as its own OS process — two parsers and two
crawlers — against the Kafka, PostgreSQL and SeaweedFS that ``ops/`` started;
every process must answer ``/healthz`` and serve ``turbocubes_`` metrics, and
``ops/topology/stop`` must end them all. docker-compose.yml describes the same
processes (``tests/unit/test_compose.py`` keeps the two equal).
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cubes import registry

REPO = Path(__file__).resolve().parents[2]
START = REPO / "ops" / "topology" / "start"
STOP = REPO / "ops" / "topology" / "stop"
#: twelve processes import the package on two cores: ~15 s idle, more while other tests run
WAIT_S = 75
#: SIGTERM -> exit is bounded by runtime.shutdown_timeout_s (10 s); a little more before SIGKILL
STOP_S = 15

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.s3, pytest.mark.slow, pytest.mark.timeout(180)]


def _with_query(url: str, param: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{param}"


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:  # our own loopback server
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def topology_env(kafka_url: str, postgres_url: str, s3_url: str, tmp_path: Path, uid: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURBOCUBES_") or k.startswith("TURBOCUBES_TEST_")}
    env.update(
        {
            "TURBOCUBES_VAR": str(tmp_path),
            "TURBOCUBES_BUS_URL": kafka_url,
            # a fresh schema: this topology's pages, hashes and feeds never meet another test's
            "TURBOCUBES_STORE_URL": _with_query(postgres_url, f"schema=topology_{uid}"),
            "TURBOCUBES_STORE_POOL_SIZE": "2",
            "TURBOCUBES_CDN_URL": s3_url,
            "TURBOCUBES_BLOBS_URL": s3_url,
            # every server on a free port: other test runs use this machine at the same time
            "TURBOCUBES_TOPOLOGY_METRICS_BASE": "0",
            "TURBOCUBES_API_PORT": "0",
            "TURBOCUBES_FRONTEND_PORT": "0",
            "TURBOCUBES_TOPOLOGY_WAIT_S": str(WAIT_S),
            "TURBOCUBES_TOPOLOGY_STOP_S": str(STOP_S),
        }
    )
    return env


def test_every_cube_runs_as_its_own_healthy_process(topology_env: dict[str, str], tmp_path: Path) -> None:
    available = registry.CUBE_NAMES
    state_file = tmp_path / "topology" / "topology.json"
    pids: list[int] = []
    try:
        started = subprocess.run(
            [str(START), "--no-engines"],
            env=topology_env,
            capture_output=True,
            text=True,
            timeout=WAIT_S + 60,
            check=False,
        )
        assert started.returncode == 0, f"ops/topology/start failed:\n{started.stdout}\n{started.stderr}"
        assert "topics create" in started.stdout
        state: dict[str, Any] = json.loads(state_file.read_text())
        instances = state["instances"]
        pids = [i["pid"] for i in instances]

        per_cube = Counter(i["cube"] for i in instances)
        assert per_cube == {c: (2 if c in ("parser", "crawler") else 1) for c in available}
        assert len(set(pids)) == len(instances), "every instance is its own OS process"
        assert len({i["metrics_url"] for i in instances}) == len(instances)

        for inst in instances:
            assert _alive(inst["pid"]), f"{inst['name']} is not running"
            status, body = _get(inst["metrics_url"] + "/healthz")
            assert status == 200, f"{inst['name']}: /healthz {status} {body[:300]!r}"
            health = json.loads(body)
            assert health["ok"] is True
            assert health["bus"] == topology_env["TURBOCUBES_BUS_URL"]
            assert list(health["cubes"]) == [inst["cube"]], f"{inst['name']} runs {list(health['cubes'])}"

            status, body = _get(inst["metrics_url"] + "/metrics")
            assert status == 200, inst["name"]
            text = body.decode()
            assert "# TYPE turbocubes_processed_total counter" in text, inst["name"]
            assert "# TYPE turbocubes_consumer_lag gauge" in text, inst["name"]
    finally:
        stopped = subprocess.run(
            [str(STOP)], env=topology_env, capture_output=True, text=True, timeout=STOP_S + 30, check=False
        )
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert f"stopped {len(pids)} instance(s)" in stopped.stdout
    assert "SIGKILL" not in stopped.stdout, f"a cube ignored SIGTERM:\n{stopped.stdout}"
    assert not [p for p in pids if _alive(p)], "processes left running after ops/topology/stop"
    assert not list((tmp_path / "topology").glob("*.pid"))
