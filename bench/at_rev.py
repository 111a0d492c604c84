"""A package of this repository as it was at a git revision, importable beside today's (bench helper).

``package_at("42ea9be", "cubes/kvwriter", into)`` writes every file of ``cubes/kvwriter/`` at that
revision under ``into/_cubes_kvwriter_42ea9be/``, its own imports (``cubes.kvwriter``) renamed to
the new package, and returns the package's name: the old code runs on today's ``shared/``, in the
same process as today's, so that a benchmark can alternate the two (docs/architecture.md section 9).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["package_at"]

ROOT = Path(__file__).resolve().parents[1]


def package_at(rev: str, folder: str, into: Path) -> str:
    """Copy ``folder`` (``cubes/kvwriter``) at git ``rev`` into ``into`` as a package; its name."""
    dotted = folder.strip("/").replace("/", ".")
    package = "_" + dotted.replace(".", "_") + "_" + "".join(c for c in rev if c.isalnum())
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, folder.rstrip("/") + "/"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for name in names:
        text = subprocess.run(["git", "show", f"{rev}:{name}"], cwd=ROOT, check=True, capture_output=True).stdout
        target = into / package / Path(name).relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.replace(dotted.encode(), package.encode()))
    if str(into) not in sys.path:
        sys.path.insert(0, str(into))
    return package
