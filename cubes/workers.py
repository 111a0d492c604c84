"""``turbocubes up --workers N``: the replicable cubes in N-1 more processes (both cores, one machine).

One Python process runs every cube on one core (one GIL). ``up --workers N``
keeps the parent as it was -- every cube, the HTTP services, the demo site --
and starts N-1 children that run only the *replicable* cubes: members of a
consumer group, which the bus splits among the group's members by partition
(the embedded log by lease, ``shared/bus/sqlite_consumer.py``; Kafka by rebalancing),
so a child takes a share of every topic and the parent keeps the rest.

Which cubes are replicable, each says in its declaration (``Cube(replicable=True)``
in ``cubes/<name>/cube.py``). Not replicable, so parent-only:

* ``api``, ``frontend`` -- they bind a port (and the api enforces its tenant
  limits per instance, ``api.instances``);
* ``indexer`` -- a timer that drains one queue in the store, no partitions to split;
* the demo site (``--demo``) -- it registers the feeds and draws the progress.

A child is ``python -m cubes.worker`` (``cubes/worker.py``, or a program's own
worker mode, e.g. ``bench/e2e.py``'s): it reads one JSON line from stdin -- its
index, its cubes and the parent's *effective* settings (after ``--demo``
adjusted them, which re-reading the config file and environment would lose) --
and then runs ``cubes.launcher.run_cubes`` as the parent does: its own status writer
(``cube:<cube>:<host>:<pid>`` snapshots, so the status page and the overload
gate count each process once), its own ``/metrics`` (``runtime.metrics_port``
+ index; 0 stays 0), graceful stop on SIGTERM. Its stdin stays open as a
lifeline: when the parent goes away, even by SIGKILL, the pipe closes and the
child stops gracefully. Children run in their own session, so Ctrl-C reaches
the parent only, which then stops them (each drains and commits) and waits.

A child that exits while the parent is not stopping is reported and the
parent stops everything and exits non-zero, as ``up`` does when one of its own
cube tasks fails: a supervisor (systemd, compose, a shell loop) restarts the
whole, and nothing is lost meanwhile -- what a crashed member had not committed
is read again from its group's committed offsets by whoever holds the
partitions next (on the embedded log, the survivors once its lease ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from shared.config import Settings
from shared.runtime.loops import loop_kind

__all__ = [
    "LOG_LEVELS",
    "WorkerCrashed",
    "WorkerPool",
    "settings_from_dict",
    "settings_to_dict",
    "worker_settings",
]

log = logging.getLogger("turbocubes.workers")

#: the command of a child: ``cubes/worker.py`` (the pool is the parent's side only, so that the launcher,
#: which starts the pool, and the child, which runs the launcher, import each other in one direction)
DEFAULT_COMMAND: tuple[str, ...] = (sys.executable, "-m", "cubes.worker")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
#: a child gets this long past ``runtime.shutdown_timeout_s`` to close its engines before SIGKILL
EXIT_GRACE_S = 5.0


# --------------------------------------------------------------------------- settings over a pipe


def settings_to_dict(settings: Settings) -> dict[str, Any]:
    return settings.model_dump(mode="json")


def settings_from_dict(data: dict[str, Any]) -> Settings:
    """The inverse of ``settings_to_dict`` (validated again: cheap, and a child trusts no pipe blindly)."""
    return Settings.model_validate(data)


def worker_settings(settings: Settings, index: int) -> Settings:
    """A child's settings: the parent's, with its own ``/metrics`` port (``metrics_port + index``; 0 stays 0)
    and its scheduler's WebSub callback on a free port (hubs call the public base, the parent's; any
    replica answers any feed from the store, cubes/scheduler/callback.py)."""
    port = settings.runtime.metrics_port
    return settings.replace(runtime={"metrics_port": port + index if port else 0}, scheduler={"websub_port": 0})


# --------------------------------------------------------------------------- the parent's side


class WorkerCrashed(RuntimeError):
    """A child process ended while the parent was not stopping."""


@dataclass
class _Child:
    index: int
    proc: asyncio.subprocess.Process
    cpu_s: float = 0.0  # last CPU time read from /proc (kept once the process is gone)


def _describe_exit(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"


def _proc_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of ``pid`` from ``/proc/<pid>/stat`` (Linux); None when unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: count fields after the last ')'
    fields = raw[raw.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class WorkerPool:
    """``count`` child processes running ``cubes`` with ``settings`` (see the module docstring).

    ``start`` spawns them; ``watch`` raises ``WorkerCrashed`` when one ends on its
    own; ``stop`` sends SIGTERM, waits for each to drain and commit, and SIGKILLs
    what is still there after ``runtime.shutdown_timeout_s`` + ``EXIT_GRACE_S``.
    """

    def __init__(
        self,
        settings: Settings,
        cubes: Sequence[str],
        count: int,
        *,
        command: Sequence[str] = DEFAULT_COMMAND,
        log_level: str | None = None,
    ) -> None:
        if count < 0:
            raise ValueError(f"worker count must be >= 0, not {count}")
        self.settings = settings
        self.cubes = list(cubes)
        self.count = count
        self.command = list(command)
        level = log_level or logging.getLevelName(logging.getLogger().getEffectiveLevel())
        self.log_level = level if level in LOG_LEVELS else "INFO"
        self.children: list[_Child] = []
        self._stopping = False

    @property
    def pids(self) -> list[int]:
        return [c.proc.pid for c in self.children]

    async def start(self) -> None:
        for index in range(1, self.count + 1):
            proc = await asyncio.create_subprocess_exec(
                *self.command,
                "--log-level",
                self.log_level,
                "--event-loop",
                loop_kind(self.settings.runtime.event_loop, self.settings.bus.url),
                stdin=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
            self.children.append(_Child(index, proc))
            spec = {
                "index": index,
                "cubes": self.cubes,
                "settings": settings_to_dict(worker_settings(self.settings, index)),
            }
            assert proc.stdin is not None
            proc.stdin.write(orjson.dumps(spec) + b"\n")
            with contextlib.suppress(ConnectionError):  # it died already: `watch` reports it
                await proc.stdin.drain()

    async def watch(self) -> None:
        """Return only when stopping; raise ``WorkerCrashed`` if a child ends before that."""
        if not self.children:
            await asyncio.Event().wait()
        waits = {asyncio.ensure_future(c.proc.wait()): c for c in self.children}
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        if self._stopping:
            return
        child = waits[next(iter(done))]
        code = child.proc.returncode
        assert code is not None
        raise WorkerCrashed(f"worker {child.index} (pid {child.proc.pid}) ended: {_describe_exit(code)}")

    async def stop(self, timeout_s: float | None = None) -> list[str]:
        """Stop every child gracefully; what went wrong (a child still running that exited non-zero)."""
        self._stopping = True
        if timeout_s is None:
            timeout_s = self.settings.runtime.shutdown_timeout_s + EXIT_GRACE_S
        self.cpu_s()  # the last reading, while /proc still has them
        running = [c for c in self.children if c.proc.returncode is None]
        for c in running:
            with contextlib.suppress(ProcessLookupError):
                c.proc.send_signal(signal.SIGTERM)
        if running:
            await asyncio.wait([asyncio.ensure_future(c.proc.wait()) for c in running], timeout=timeout_s)
        killed = [c for c in running if c.proc.returncode is None]
        for c in killed:
            # like the parent's own runners, which are cancelled after the timeout: logged, not a failure
            log.warning("worker %d (pid %d) did not stop within %.0f s: killed", c.index, c.proc.pid, timeout_s)
            with contextlib.suppress(ProcessLookupError):
                c.proc.kill()
        problems = []
        for c in self.children:
            code = await c.proc.wait()
            if c.proc.stdin is not None:
                c.proc.stdin.close()
            if c in running and c not in killed and code != 0:
                problems.append(f"worker {c.index} (pid {c.proc.pid}) stopped with {_describe_exit(code)}")
        return problems

    def cpu_s(self) -> float:
        """CPU seconds the children used so far (live ones read from /proc; gone ones as last read)."""
        for c in self.children:
            if c.proc.returncode is None and (now := _proc_cpu_s(c.proc.pid)) is not None:
                c.cpu_s = now
        return sum(c.cpu_s for c in self.children)

    def describe(self) -> list[dict[str, Any]]:
        """For ``/healthz``: each child's index, pid and whether it runs."""
        return [{"index": c.index, "pid": c.proc.pid, "running": c.proc.returncode is None} for c in self.children]
