"""An engine outage of two minutes, as the operator reads it: a few lines per cube, a metric, a problem.

The cluster topology (``ops/topology/start``: one process per cube) runs on the shared Kafka and
PostgreSQL under a fresh prefix and schema; then the broker (or the database) is stopped for
``OUTAGE_S`` and started again on its data. Each cube process must have said, in fewer than
``MAX_LINES`` lines of log from the stop until it is back: once that the engine is unreachable,
once that it is back; meanwhile its ``/metrics`` show ``turbocubes_dependency_down`` 1 and its
``/healthz`` an ``engine.unavailable`` problem. Before, a 136 s broker outage left 8,000-11,000
lines of the Kafka client's errors in each cube's log (about 120 a second for an idle cube), and no
line of ours said that Kafka was down.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest

from tests.integration.faults_engines import Engines
from tests.integration.faults_topology import FaultTopology

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.s3, pytest.mark.slow, pytest.mark.timeout(900)]

OUTAGE_S = 120.0
MAX_LINES = 20
#: the cubes whose processes are watched: consumers, timers (scheduler tick, delay sweep, cdn re-check)
#: and the status writer of each; one parser and one crawler
CUBES = ("scheduler", "crawler", "parser", "media", "cdn", "delay", "kvwriter")
TOPOLOGY_WAIT_S = 120
#: after the engine is back, how long each process may take to say so
BACK_WITHIN_S = 120.0
POLL_S = 0.5


async def _until(what: str, check: Callable[[], Awaitable[bool]], limit_s: float) -> None:
    t0 = time.monotonic()
    while not await check():
        if time.monotonic() - t0 > limit_s:
            raise AssertionError(f"timed out after {limit_s:.0f} s waiting for {what}")
        await asyncio.sleep(POLL_S)  # a poll interval, not a synchronization


async def _get(http: aiohttp.ClientSession, url: str) -> str:
    async with http.get(url) as resp:
        return await resp.text()


@pytest.mark.parametrize("engine", ["kafka", "postgres"])
async def test_a_two_minute_outage_is_a_few_lines_a_metric_and_a_problem(
    engine: str, kafka_url: str, postgres_url: str, s3_url: str, uid: str
) -> None:
    topo = FaultTopology(
        kafka_url,
        postgres_url,
        s3_url,
        uid,
        TURBOCUBES_TOPOLOGY_WAIT_S=str(TOPOLOGY_WAIT_S),
        TURBOCUBES_DELAY_SWEEP_INTERVAL_S="1",
    )
    topology = topo.dir
    dependency = {"kafka": "bus", "postgres": "store"}[engine]
    engines = Engines()
    passed = False
    try:
        await topo.start("--parsers", "1", "--crawlers", "1", *(a for c in CUBES for a in ("--only", c)))
        instances = json.loads((topology / "topology.json").read_text())["instances"]
        logs = {i["name"]: Path(i["log"]) for i in instances}
        urls = {i["name"]: i["metrics_url"] for i in instances}
        # the joins and assignments of a start are not the outage's: the count starts once they are logged
        await asyncio.sleep(5)
        marks = {name: len(path.read_text(errors="replace").splitlines()) for name, path in logs.items()}

        t0 = time.monotonic()
        await (engines.kafka_stop() if engine == "kafka" else engines.postgres_stop())
        down_re = re.compile(rf'^turbocubes_dependency_down\{{dependency="{dependency}"\}} 1\.0$', re.M)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:

            async def every_process_says_so() -> bool:
                for url in urls.values():
                    if not down_re.search(await _get(http, f"{url}/metrics")):
                        return False
                    health = json.loads(await _get(http, f"{url}/healthz"))
                    if not any(p["code"] == "engine.unavailable" for p in health.get("outages", [])):
                        return False
                return True

            # the outage is visible where an operator looks, well within its two minutes
            await _until("every process to show the outage", every_process_says_so, OUTAGE_S / 2)
            left = OUTAGE_S - (time.monotonic() - t0)
            if left > 0:
                await asyncio.sleep(left)  # the outage's length, not a synchronization
            await (engines.kafka_start() if engine == "kafka" else engines.postgres_start())

            def since(name: str) -> list[str]:
                return logs[name].read_text(errors="replace").splitlines()[marks[name] :]

            async def all_back() -> bool:
                return all(any(" is back after " in line for line in since(n)) for n in logs)

            try:
                await _until(f"every process to say {dependency} is back", all_back, BACK_WITHIN_S)
            finally:
                report = {n: since(n) for n in logs}
            await _until("the gauge back at 0", lambda: _all_up(http, urls, dependency), 30)
        noisy = {n: lines for n, lines in report.items() if len(lines) >= MAX_LINES}
        assert not noisy, "\n".join(f"--- {n}: {len(v)} lines\n" + "\n".join(v[:40]) for n, v in noisy.items())
        for name, lines in report.items():
            began = [line for line in lines if " is unreachable " in line]
            ended = [line for line in lines if " is back after " in line]
            assert len(began) == 1, (name, lines)
            assert len(ended) == 1, (name, lines)
        print(
            f"{engine} away {OUTAGE_S:.0f} s: lines per process "
            + ", ".join(f"{n} {len(v)}" for n, v in report.items())
        )
        passed = True
    finally:
        problems = await engines.restore()
        await topo.close(passed)
    assert not problems, problems


async def _all_up(http: aiohttp.ClientSession, urls: dict[str, str], dependency: str) -> bool:
    up = re.compile(rf'^turbocubes_dependency_down\{{dependency="{dependency}"\}} 0\.0$', re.M)
    for url in urls.values():
        if not up.search(await _get(http, f"{url}/metrics")):
            return False
    return True
