"""The fault tests' topology: every cube as its own process, under a fresh prefix, schema and buckets.

``FaultTopology`` builds the cubes' environment (the shared Kafka, PostgreSQL and SeaweedFS under
names of its own, every server on a free port), starts ``ops/topology/start``, registers feeds as
``turbocubes feeds add`` does, reads the dead-letter topics and the cubes' logs, and cleans up (the
logs are kept when the test failed). ``until`` polls a condition under a bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from aiokafka.admin import AIOKafkaAdminClient

from shared import contracts
from shared.blobs import open_blobs
from shared.bus import open_bus
from shared.stores import Stores, open_stores
from tests.integration.faults_engines import OPS, REPO, run

__all__ = ["POLL_S", "FaultTopology", "until", "with_query"]

#: twelve processes import the package on two cores while other tests run
TOPOLOGY_WAIT_S = 90
TOPOLOGY_STOP_S = 15
POLL_S = 0.25


def with_query(url: str, param: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{param}"


async def until(what: str, check: Callable[[], Awaitable[bool]], limit_s: float) -> float:
    """Poll ``check`` until true; the seconds it took. The sleep is a poll interval, not a synchronization."""
    t0 = time.monotonic()
    while not await check():
        if time.monotonic() - t0 > limit_s:
            raise AssertionError(f"timed out after {limit_s:.0f} s waiting for {what}")
        await asyncio.sleep(POLL_S)
    return time.monotonic() - t0


class FaultTopology:
    """One topology of the fault tests: its names, environment, processes and clean-up."""

    def __init__(self, kafka_url: str, postgres_url: str, s3_url: str, uid: str, **settings: str) -> None:
        endpoint = parse_qs(urlsplit(s3_url).query)["endpoint"][0]
        self.kafka_url = kafka_url
        self.postgres_url = postgres_url
        cdn_bucket = f"faults-{uid}"
        self.cdn_url = f"s3://{cdn_bucket}?endpoint={endpoint}"
        self.blobs_url = f"s3://{cdn_bucket}-blobs?endpoint={endpoint}"
        self.cdn_base = f"{endpoint}/{cdn_bucket}"
        self.prefix = f"faults-{uid}."
        self.bus_url = with_query(kafka_url, f"prefix={self.prefix}")
        self.schema = f"faults_{uid}"
        self.store_url = with_query(postgres_url, f"schema={self.schema}")
        # not tmp_path: pytest keeps only its last three base dirs, and other runs on this machine rotate
        # them away within minutes; the cubes' logs are kept here when the test fails
        self.var = Path(tempfile.mkdtemp(prefix=f"turbocubes-faults-{uid}-"))
        self.dir = self.var / "topology"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TURBOCUBES_")}
        self.env.update(
            {
                "TURBOCUBES_VAR": str(self.var),
                "TURBOCUBES_BUS_URL": self.bus_url,
                "TURBOCUBES_STORE_URL": self.store_url,
                "TURBOCUBES_STORE_POOL_SIZE": "2",
                "TURBOCUBES_CDN_URL": self.cdn_url,
                "TURBOCUBES_CDN_PUBLIC_BASE_URL": self.cdn_base,
                "TURBOCUBES_BLOBS_URL": self.blobs_url,
                # the partner is on loopback, which the SSRF guard refuses unless allowed
                "TURBOCUBES_HTTP_ALLOWLIST": "127.0.0.1/32",
                # every server on a free port: other test runs use this machine at the same time
                "TURBOCUBES_TOPOLOGY_METRICS_BASE": "0",
                "TURBOCUBES_API_PORT": "0",
                "TURBOCUBES_FRONTEND_PORT": "0",
                "TURBOCUBES_SCHEDULER_WEBSUB_PORT": "0",
                "TURBOCUBES_TOPOLOGY_WAIT_S": str(TOPOLOGY_WAIT_S),
                "TURBOCUBES_TOPOLOGY_STOP_S": str(TOPOLOGY_STOP_S),
                **settings,
            }
        )

    async def start(self, *args: str) -> str:
        """``ops/topology/start --no-engines ARGS``; its output."""
        rc, out = await run([str(OPS / "topology" / "start"), "--no-engines", *args], self.env, TOPOLOGY_WAIT_S + 60)
        assert rc == 0, f"ops/topology/start {' '.join(args)} failed:\n{out[-4000:]}"
        return out

    async def add_feed(self, url: str, fmt: str) -> None:
        """Register ``url`` the way ``turbocubes feeds add`` does."""
        exe = str(REPO / ".venv" / "bin" / "turbocubes")
        rc, out = await run([exe, "feeds", "add", url, "--format", fmt, "--service", "news"], self.env, 60)
        assert rc == 0, f"turbocubes feeds add failed:\n{out[-3000:]}"

    async def stores(self) -> Stores:
        return await open_stores(self.store_url)

    async def dead_letters(self) -> dict[str, int]:
        """Records in every ``*.dlq`` topic under the prefix that has any (each catalog topic's DLQ must exist)."""
        admin = AIOKafkaAdminClient(bootstrap_servers=urlsplit(self.kafka_url).netloc)
        await admin.start()
        try:
            listed = await admin.list_topics()
        finally:
            await admin.close()
        p = self.prefix
        dlqs = sorted({t[len(p) :] for t in listed if t.startswith(p) and t.endswith(".dlq")})
        assert {contracts.dlq_topic(t) for t in contracts.catalog()} <= set(dlqs), dlqs
        bus = open_bus(self.bus_url)
        await bus.start()
        try:
            counts = {t: sum((await bus.end_offsets(t)).values()) for t in dlqs}
        finally:
            await bus.close()
        return {t: n for t, n in counts.items() if n}

    async def end_offsets(self, topic: str) -> int:
        """Records in ``topic`` (all partitions) under the prefix."""
        bus = open_bus(self.bus_url)
        await bus.start()
        try:
            return sum((await bus.end_offsets(topic)).values())
        finally:
            await bus.close()

    def log_digest(self, lines: int = 12) -> str:
        """Errors and the last lines of every cube's log, for a failure message."""
        out = []
        for log in sorted(self.dir.glob("*.log")):
            text = log.read_text(errors="replace").splitlines()
            errors = [line for line in text if re.search(r"ERROR|WARNING|Traceback|dead.letter|dlq", line, re.I)]
            out.append(f"--- {log.name}: {len(errors)} error or warning line(s)\n" + "\n".join(errors[-lines:]))
        return "\n".join(out)

    async def close(self, passed: bool) -> tuple[int, str]:
        """Stop the processes, drop the topics and the buckets; the logs go unless the test failed.
        ``ops/topology/stop``'s result. (A shared broker that kept every test's topics took minutes to
        start again at a load of 20: it loads each partition's log.)"""
        rc, out = await run([str(OPS / "topology" / "stop")], self.env, TOPOLOGY_STOP_S + 60)
        with contextlib.suppress(Exception):  # cleanup only
            admin = AIOKafkaAdminClient(bootstrap_servers=urlsplit(self.kafka_url).netloc)
            await admin.start()
            try:
                mine = [t for t in await admin.list_topics() if t.startswith(self.prefix)]
                if mine:
                    await admin.delete_topics(mine)
            finally:
                await admin.close()
        for url in (self.cdn_url, self.blobs_url):
            with contextlib.suppress(Exception):  # cleanup only: a leftover bucket harms no one
                blobs = await open_blobs(url)
                await blobs.destroy()  # type: ignore[attr-defined]
                await blobs.close()
        if passed:
            shutil.rmtree(self.var, ignore_errors=True)
        else:
            print(f"the cubes' logs are kept in {self.dir}")
        return rc, out
