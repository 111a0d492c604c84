"""Stopping and restarting the shared engines for the fault tests (docs/architecture.md sections 8
and 9).

The engines are the ones ``scripts/test`` started (``ops/kafka/start``,
``ops/s3/start``) and other test runs use at the same time: every outage is
short, and ``restore()`` (called in ``finally``) brings back whatever is still
down. The scripts always run with the engines' own environment, never with the
topology's ``TURBOCUBES_VAR`` (the engines' pid files live where they were
started).

SeaweedFS: ``ops/s3/start`` wipes its data dir on every cold start (it has no
``--fresh`` option, unlike ``ops/kafka/start``), so a stop / start through the
scripts would destroy every object of every test sharing the server. Until it
keeps its data, ``s3_outage`` stops the server with ``ops/s3/stop`` and starts
the very same command line again (read from ``/proc``: same arguments, working
directory and environment, same log, the pid file updated) on the untouched data
dir; ``ops/s3/start`` then finds it running and only waits for its put / get
round trip. Once ``ops/s3/start`` has ``--fresh``, the scripts are used as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
from pathlib import Path

__all__ = ["OPS", "REPO", "Engines", "alive", "pid_in", "run"]

REPO = Path(__file__).resolve().parents[2]
OPS = REPO / "ops"
#: SIGTERM -> SIGKILL grace for ``ops/s3/stop``: SeaweedFS often ignores SIGTERM for the whole default
#: 15 s, which would only lengthen everyone's outage (a SIGKILL is the harsher fault anyway)
S3_STOP_GRACE_S = 2


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


def pid_in(pidfile: Path) -> int:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return 0


class Engines:
    """``kafka_restart()``, ``s3_outage(seconds)``; ``restore()`` in ``finally``."""

    def __init__(self) -> None:
        self.env = {**os.environ, "TURBOCUBES_PYTHON": sys.executable}
        self.var = Path(os.environ.get("TURBOCUBES_VAR") or "/tmp/turbocubes-ops")
        self.kafka_down = False
        self.s3_down = False
        #: how to start SeaweedFS again on its data: (argv, cwd, environment), read before stopping it
        self._weed: tuple[list[str], str, dict[str, str]] | None = None
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
        out = await self.script("kafka", "start")
        # a broker that came back empty would make every "nothing lost" check meaningless
        assert "restarting on the existing log dir" in out, f"ops/kafka/start did not restart on its data:\n{out}"
        self.kafka_down = False

    # ------------------------------------------------------------------ SeaweedFS

    @staticmethod
    def s3_start_keeps_data() -> bool:
        return "--fresh" in (OPS / "s3" / "start").read_text()

    async def s3_stop(self) -> None:
        if not self.s3_start_keeps_data():
            pid = pid_in(self.var / "s3" / "weed.pid")
            assert alive(pid), f"no live SeaweedFS pid in {self.var / 's3' / 'weed.pid'}"
            proc = Path(f"/proc/{pid}")
            argv = [a.decode() for a in (proc / "cmdline").read_bytes().split(b"\0")[:-1]]
            env = dict(
                e.decode(errors="replace").split("=", 1)
                for e in (proc / "environ").read_bytes().split(b"\0")
                if b"=" in e
            )
            self._weed = (argv, os.readlink(proc / "cwd"), env)
            self.how = f"ops/s3/stop, then pid {pid}'s command line again on its data"
        else:
            self.how = "ops/s3/stop, ops/s3/start"
        self.s3_down = True
        await self.script("s3", "stop", limit_s=60, TURBOCUBES_S3_STOP_TIMEOUT_S=str(S3_STOP_GRACE_S))

    async def s3_start(self) -> None:
        if self._weed is not None and not alive(pid_in(self.var / "s3" / "weed.pid")):
            await self._respawn_weed(*self._weed)
        await self.script("s3", "start")  # with our server running, it only waits for its round trip
        self.s3_down = False

    async def _respawn_weed(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        """Start ``argv`` detached (its own session, not our child), as ops/s3/start does, and record its pid."""
        log = self.var / "s3" / "weed.log"
        cmd = f"setsid nohup {shlex.join(argv)} >>{shlex.quote(str(log))} 2>&1 </dev/null & echo $!"
        rc, out = await run(["/bin/sh", "-c", cmd], env, 10, cwd=Path(cwd))
        assert rc == 0, f"could not start SeaweedFS again: {out}"
        (self.var / "s3" / "weed.pid").write_text(f"{int(out.split()[-1])}\n")

    # ------------------------------------------------------------------ finally

    async def restore(self) -> list[str]:
        """Bring back every engine still down; the problems met doing so."""
        problems = []
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
                with contextlib.suppress(AssertionError):  # last resort: running, even if empty
                    await self.script("s3", "start")
        return problems
