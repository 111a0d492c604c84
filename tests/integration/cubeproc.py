"""Cubes in OS processes of their own, for the failover tests: start, SIGKILL, stop.

``python -m tests.integration.cubeproc CONFIG CUBE [CUBE ...]`` runs the cubes
as ``turbocubes cube`` does (``cubes.launcher.run_cubes``: topics, runners,
graceful stop on SIGTERM), with ``*.partner.test`` resolved to 127.0.0.1 by
the tests' ``PartnerResolver`` so the crawler reaches the partner server of
the test process. A killed process is killed for real (SIGKILL): no stop
hook runs, nothing is committed, its group membership lapses as a crash's
would.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path

from shared.config.toml import toml_document

__all__ = ["CubeProcess", "write_config"]

REPO = Path(__file__).resolve().parents[2]
#: a process of a few cubes imports the package and joins its groups in a few seconds; more under load
READY_S = 60.0
#: SIGTERM -> exit: in-flight work finishes within runtime.shutdown_timeout_s (set low by the tests)
STOP_S = 20.0


def write_config(path: Path, sections: dict[str, dict[str, object]]) -> Path:
    """A ``turbocubes.toml`` with these sections (every other key keeps its default), by the product's writer."""
    path.write_text(toml_document(sections))
    return path


class CubeProcess:
    """One OS process running ``cubes`` with ``config``; its output goes to ``log``."""

    def __init__(self, config: Path, *cubes: str, log: Path) -> None:
        self.config = config
        self.cubes = cubes
        self.log = log
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> CubeProcess:
        # the test's own TURBOCUBES_* (an engine URL) must not override the config file
        env = {
            k: v for k, v in os.environ.items() if not k.startswith("TURBOCUBES_") or k.startswith("TURBOCUBES_TEST")
        }
        out = self.log.open("ab")
        try:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "tests.integration.cubeproc",
                str(self.config),
                *self.cubes,
                cwd=str(REPO),
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C of the test run reaches the test, which stops us
            )
        finally:
            out.close()
        return self

    async def ready(self, within: float = READY_S) -> None:
        """Wait until the process says it runs its cubes (``run_cubes`` prints one line then)."""
        deadline = time.monotonic() + within
        while b": running " not in self.log.read_bytes():
            assert self.proc is not None
            if self.proc.returncode is not None:
                raise AssertionError(f"{self.cubes} exited {self.proc.returncode}:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.cubes} not running after {within:.0f} s:\n{self.tail()}")
            await asyncio.sleep(0.1)  # polling a log file, not synchronizing on time

    def kill(self) -> None:
        """SIGKILL: a crash, with nothing finished, committed or said goodbye to."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)

    async def stop(self) -> int | None:
        """SIGTERM and wait (SIGKILL after ``STOP_S``); the exit code."""
        if self.proc is None:
            return None
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), STOP_S)
            except TimeoutError:
                self.kill()
                await self.proc.wait()
        return self.proc.returncode

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def main(argv: list[str]) -> int:
    import logging

    from cubes.launcher import run_cubes
    from shared.config import load_settings
    from tests.partners.fixtures import PartnerResolver

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config, *names = argv
    settings = load_settings(config)
    label = f"cubeproc {'+'.join(names)} (pid {os.getpid()})"
    return asyncio.run(run_cubes(settings, names, resolver=PartnerResolver(), label=label, settle_heap=True))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
