"""CLI benchmark: the CPU a ``turbocubes`` command spends before and while it works, in a fresh process.

Each command runs ``--runs`` times in a new interpreter (as a shell would start it), alternating
with the baseline of the same run: ``python -c pass`` (the interpreter alone) and, with
``--against REV``, the same commands on the tree of git revision ``REV`` (exported to a temporary
folder and run with this interpreter). The figure is the child's user + system CPU
(``resource.getrusage(RUSAGE_CHILDREN)``), median of the runs; the target is 0.3 s for
``turbocubes --help`` and ``turbocubes parse FILE``.

It measures what a user's shell runs: each tree's commands run once first, unmeasured, so Python has
written its bytecode caches, and ``PYTHONDONTWRITEBYTECODE`` (set in some CI and container images)
is dropped from the children's environment -- with it every run would compile every module again.

    python bench/cli.py [--runs 7] [--against 42ea9be]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FEED = ROOT / "tests" / "data" / "feeds" / "turbo" / "turbocubes__blog__turbo.xml"
TARGET_S = 0.3
#: the commands measured: a name and the arguments of ``turbocubes``
COMMANDS = {"--help": ["--help"], "parse FILE": ["parse", str(FEED)]}


def _cpu(tree: Path, args: list[str] | None) -> float:
    """The CPU seconds of one fresh interpreter running ``turbocubes ARGS`` from ``tree`` (None: nothing)."""
    code = "pass" if args is None else f"import sys; from cubes.cli import main; sys.exit(main({args!r}))"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, stdout=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _export(rev: str, into: Path) -> Path:
    """The tree of git revision ``rev`` in ``into`` (``git archive``)."""
    archive = into / "tree.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "archive", rev], cwd=ROOT, stdout=f, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--against", metavar="REV", help="also measure the tree of this git revision, alternated")
    args = ap.parse_args()
    print(f"cli bench: {args.runs} runs each; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT}
        if args.against:
            trees[args.against] = _export(args.against, Path(tmp))
        for tree in trees.values():  # a user's second run: the bytecode caches are written
            for argv in COMMANDS.values():
                _cpu(tree, argv)
        spent: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            spent.setdefault(("python", "-c pass"), []).append(_cpu(ROOT, None))
            for label, tree in trees.items():
                for name, argv in COMMANDS.items():
                    spent.setdefault((label, name), []).append(_cpu(tree, argv))
    bare = statistics.median(spent[("python", "-c pass")])
    print(f"  python -c pass (the interpreter alone): {bare:.3f} s CPU")
    for name in COMMANDS:
        mine = statistics.median(spent[("this tree", name)])
        line = f"RESULT turbocubes {name}: {mine:.3f} s CPU (median of {args.runs}; target <= {TARGET_S} s: "
        line += "OK" if mine <= TARGET_S else "MISSED"
        line += ")"
        if args.against:
            theirs = statistics.median(spent[(args.against, name)])
            line += f"; at {args.against}: {theirs:.3f} s ({mine / theirs:.2f}x)"
        print(line + f"; load average {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
