"""Stopping and restarting the shared engines for the fault tests (docs/architecture.md sections 8 and 9).

The engines are the ones ``scripts/test`` started (``ops/kafka/start``, ``ops/postgres/start``,
``ops/s3/start``) and other test runs use at the same time: every outage is short, and
``restore()`` (called in ``finally``) brings back whatever is still down. The scripts always run
with the engines' own environment, never with the topology's ``TURBOCUBES_VAR`` (the engines' pid
files live where they were started). Each engine restarts on its data (Kafka and SeaweedFS unless
given ``--fresh``, PostgreSQL always), and each start is checked to have done so: an engine that
came back empty would make every "nothing lost" check meaningless.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

__all__ = ["OPS", "REPO", "Engines", "alive", "pid_in", "run"]

REPO = Path(__file__).resolve().parents[2]
OPS = REPO / "ops"
#: SIGTERM -> SIGKILL grace for ``ops/s3/stop``: its clean stop takes ~17 s, which would only lengthen
#: everyone's outage (a SIGKILL is the harsher fault anyway)
S3_STOP_GRACE_S = 2
#: how long ops/kafka/start may wait for a restarted broker's round trip
KAFKA_WAIT_S = 300


async def run(argv: list[str], env: dict[str, str], limit_s: float, cwd: Path = REPO) -> tuple[int, str]:
    """Run a command without blocking the loop; its exit status and combined output."""
    proc = await asyncio.create_subprocess_exec(
        *argv, env=env, cwd=str(cwd), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), limit_s)
    except TimeoutError:
        proc.kill()
        out, _ = await proc.communicate()
        return -9, out.decode(errors="replace") + f"\n(killed after {limit_s:.0f} s)"
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")


def alive(pid: int) -> bool:
    """True if ``pid`` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def pid_in_first_line(pidfile: Path) -> int:
    """The pid on the first line of ``pidfile`` (PostgreSQL's postmaster.pid has more lines), or 0."""
    try:
        return int(pidfile.read_text().splitlines()[0].strip())
    except (OSError, ValueError, IndexError):
        return 0


def pid_in(pidfile: Path) -> int:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return 0


class Engines:
    """Stops, kills and starts of Kafka, PostgreSQL and SeaweedFS; ``restore()`` in ``finally``."""

    def __init__(self) -> None:
        self.env = {**os.environ, "TURBOCUBES_PYTHON": sys.executable}
        self.var = Path(os.environ.get("TURBOCUBES_VAR") or "/tmp/turbocubes-ops")
        self.kafka_down = False
        self.s3_down = False
        self.postgres_down = False
        #: what was done, for the test's timeline
        self.how = ""

    async def script(self, engine: str, action: str, limit_s: float = 120.0, **extra: str) -> str:
        rc, out = await run([str(OPS / engine / action)], {**self.env, **extra}, limit_s)
        assert rc == 0, f"ops/{engine}/{action} failed ({rc}):\n{out[-3000:]}"
        return out

    # ------------------------------------------------------------------ Kafka

    async def kafka_stop(self) -> None:
        self.kafka_down = True
        await self.script("kafka", "stop", limit_s=60)

    async def kafka_start(self) -> None:
        # a shared test broker holds thousands of partitions: at a load of ~20 it took over 90 s to start
        out = await self.script("kafka", "start", limit_s=KAFKA_WAIT_S + 30, TURBOCUBES_KAFKA_WAIT_S=str(KAFKA_WAIT_S))
        # a broker that came back empty would make every "nothing lost" check meaningless
        assert "restarting on the existing log dir" in out, f"ops/kafka/start did not restart on its data:\n{out}"
        self.kafka_down = False

    # ------------------------------------------------------------------ PostgreSQL

    async def postgres_stop(self) -> None:
        """A clean stop (``ops/postgres/stop``: fast shutdown)."""
        self.postgres_down = True
        await self.script("postgres", "stop", limit_s=60)

    async def postgres_kill(self) -> int:
        """kill -9 of the postmaster, as a crash would: acknowledged commits must survive it. Its pid."""
        pidfile = self.var / "postgres" / "data" / "postmaster.pid"
        pid = pid_in_first_line(pidfile)
        assert alive(pid), f"no live postmaster in {pidfile}"
        self.postgres_down = True
        os.kill(pid, signal.SIGKILL)
        for _ in range(200):  # its backends notice and exit; the port is free once they have
            if not alive(pid):
                break
            await asyncio.sleep(0.05)  # polling a process's end
        return pid

    async def postgres_start(self) -> None:
        out = await self.script("postgres", "start")
        assert "durable" in out, f"ops/postgres/start did not say it runs durable:\n{out}"
        self.postgres_down = False

    # ------------------------------------------------------------------ SeaweedFS

    async def s3_stop(self) -> None:
        self.how = "ops/s3/stop, ops/s3/start"
        self.s3_down = True
        await self.script("s3", "stop", limit_s=60, TURBOCUBES_S3_STOP_TIMEOUT_S=str(S3_STOP_GRACE_S))

    async def s3_start(self) -> None:
        out = await self.script("s3", "start")
        assert "existing data dir" in out or "already running" in out, f"ops/s3/start did not keep its data:\n{out}"
        self.s3_down = False

    # ------------------------------------------------------------------ finally

    async def restore(self) -> list[str]:
        """Bring back every engine still down; the problems met doing so."""
        problems = []
        if self.postgres_down:
            try:
                await self.postgres_start()
            except AssertionError as exc:
                problems.append(str(exc))
        if self.kafka_down:
            try:
                await self.script("kafka", "start")
                self.kafka_down = False
            except AssertionError as exc:
                problems.append(str(exc))
        if self.s3_down:
            try:
                await self.s3_start()
            except AssertionError as exc:
                problems.append(str(exc))
        return problems
