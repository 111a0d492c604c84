"""Idle benchmark (docs/architecture.md section 8): what ``turbocubes up`` costs with nothing to do.

``turbocubes up`` (every cube in one process, no feeds, the embedded engines unless ``--bus`` /
``--store`` say otherwise) starts in a temporary directory; once it runs, ``--settle`` seconds let
its consumers join their groups, then ``--seconds`` of nothing to do are measured: the process's CPU
(user + system, every thread, from ``/proc``) and its context switches (each a wake-up of one of its
threads). Printed as a share of one core beside the target (at most 1 % of a core) and the figure
this was filed at (13 %: 3.9 s of CPU in 30 s, one process, on the 2-core machine).

``--against REV`` measures git revision REV the same way (its files exported to a temporary
directory, run with this tree's virtualenv), alternated with this tree in ``--rounds`` rounds: the
machine's other load shifts between runs, alternating keeps the comparison fair.

    python bench/idle.py [--seconds 30] [--settle 10] [--rounds 1] [--against REV]
        [--bus kafka://127.0.0.1:9092] [--store postgresql://...]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
#: the target: an idle ``up`` costs at most this share of one core
TARGET_SHARE = 0.01
#: what it cost when the target was set (3.9 s of CPU in 30 s, one process)
BASELINE_SHARE = 0.13
#: how long ``up`` gets to say it runs (a bound: a loaded machine imports slowly)
START_WITHIN_S = 120.0
_CLK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Reading:
    cpu_s: float
    switches: int


def read(pid: int) -> Reading:
    """CPU seconds (user + system, all threads) and context switches (all threads) of ``pid`` so far."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()
    cpu = (int(fields[11]) + int(fields[12])) / _CLK  # utime, stime: fields 14 and 15 of proc(5)
    switches = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            for line in (task / "status").read_text().splitlines():
                if "ctxt_switches:" in line:  # voluntary and nonvoluntary
                    switches += int(line.split()[1])
    return Reading(cpu, switches)


@dataclass(frozen=True)
class Idle:
    tree: str
    seconds: float
    cpu_s: float
    switches: int

    @property
    def share(self) -> float:
        return self.cpu_s / self.seconds

    def line(self) -> str:
        verdict = "PASS" if self.share <= TARGET_SHARE else "MISS"
        over = "" if self.share <= TARGET_SHARE else f", {(self.share - TARGET_SHARE) * 100:.2f} points over"
        return (
            f"   {verdict}  idle up ({self.tree}): {self.cpu_s * 1000:.0f} ms CPU in {self.seconds:.1f} s ="
            f" {self.share:.2%} of a core (target <= {TARGET_SHARE:.0%}{over}; baseline {BASELINE_SHARE:.0%},"
            f" {self.share / BASELINE_SHARE:.2f}x); {self.switches / self.seconds:.0f} context switches a second;"
            f" load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus"
        )


def measure(tree: Path, label: str, seconds: float, settle: float, env_extra: dict[str, str]) -> Idle:
    """Start ``up`` from ``tree`` in a fresh directory, wait until it runs and settles, measure, stop it."""
    with tempfile.TemporaryDirectory(prefix="tc-idle-") as tmp:
        env = {
            **os.environ,
            "PYTHONPATH": str(tree),
            # nothing of this run may collide with another's: every port the kernel's choice
            "TURBOCUBES_RUNTIME_METRICS_PORT": "0",
            "TURBOCUBES_FRONTEND_PORT": "0",
            "TURBOCUBES_API_PORT": "0",
            "TURBOCUBES_SCHEDULER_WEBSUB_PORT": "0",
            **env_extra,
        }
        log = Path(tmp) / "up.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-c", "from cubes.cli import main; raise SystemExit(main())", "up"],
                cwd=tmp,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + START_WITHIN_S
            while b"metrics at" not in log.read_bytes():
                if proc.poll() is not None or time.monotonic() > deadline:
                    said = log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"up ({label}) did not start (exit {proc.returncode}): {said}")
                time.sleep(0.2)  # a poll interval, not a synchronization
            time.sleep(settle)  # the consumers join their groups: not measured
            before, t0 = read(proc.pid), time.monotonic()
            time.sleep(seconds)  # the span measured
            after, span = read(proc.pid), time.monotonic() - t0
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return Idle(label, span, after.cpu_s - before.cpu_s, after.switches - before.switches)


def export(rev: str, into: Path) -> Path:
    """The files of git revision ``rev`` under ``into`` (``git archive``: the worktree list is left alone)."""
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=30.0, help="the idle span measured (default 30)")
    p.add_argument("--settle", type=float, default=10.0, help="seconds after start before measuring (default 10)")
    p.add_argument("--rounds", type=int, default=1, help="alternated rounds with --against (default 1)")
    p.add_argument("--against", metavar="REV", help="also measure git revision REV, alternated with this tree")
    p.add_argument("--bus", help="bus.url for up (default: the embedded log in the temporary directory)")
    p.add_argument("--store", help="store.url for up (default: the embedded store)")
    args = p.parse_args(argv)
    env = {k: v for k, v in (("TURBOCUBES_BUS_URL", args.bus), ("TURBOCUBES_STORE_URL", args.store)) if v}
    print(
        f"idle bench: turbocubes up, no feeds, {args.seconds:.0f} s measured after {args.settle:.0f} s;"
        f" bus {args.bus or 'embedded'}, store {args.store or 'embedded'}; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    results: list[Idle] = []
    with tempfile.TemporaryDirectory(prefix="tc-idle-rev-") as tmp:
        trees = [(ROOT, "this tree")]
        if args.against:
            trees.insert(0, (export(args.against, Path(tmp)), f"at {args.against}"))
        for _ in range(args.rounds if args.against else 1):
            for tree, label in trees:
                results.append(measure(tree, label, args.seconds, args.settle, env))
                print(results[-1].line(), flush=True)
    mine = [r for r in results if r.tree == "this tree"]
    best = min(mine, key=lambda r: r.share)
    if args.against:
        theirs = min((r for r in results if r.tree != "this tree"), key=lambda r: r.share)
        print(
            f"RESULT idle up: this tree {best.share:.2%} of a core (best of {len(mine)}), at {args.against}"
            f" {theirs.share:.2%} ({best.share / max(theirs.share, 1e-9):.2f}x)",
            flush=True,
        )
    return 0 if best.share <= TARGET_SHARE else 1


if __name__ == "__main__":
    raise SystemExit(main())
