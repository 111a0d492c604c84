"""The garbage collector of a process that runs cubes, set for a long run (docs/architecture.md section 8).

CPython's cyclic collector walks its youngest generation every 700 container objects allocated
(net of those freed) and, every 10 and 100 of those walks, the older ones -- the oldest being every
object the process holds: its modules, its cubes and their caches. A pipeline makes and frees
thousands of objects per document (records, messages and their models, rows), nearly all freed by
their reference counts the moment they are done with, so those walks find almost nothing; on the
embedded pipeline they were about a tenth of the process's CPU (``bench/e2e.py``, measured with
``gc.callbacks``).

``settle`` is called once, when a process has built its cubes and before they run: one collection,
then every object that exists by then is moved out of the collector's way for good
(``gc.freeze``: never walked again; they live as long as the process anyway, and reference
counting still frees any of them that is let go), and a walk of the youngest generation waits for
``YOUNG`` objects instead of 700 (each walk costs about what it finds alive, and the more the
allocations between two walks, the more of them are gone by then). A cycle that is garbage is
found later, never missed. The process entry points call it (``turbocubes up`` and ``cube``, a
worker of ``up --workers N``); code that runs cubes inside another program (a test) leaves that
program's collector alone.
"""

from __future__ import annotations

import gc

__all__ = ["MIDDLE", "OLD", "YOUNG", "settle"]

#: container objects allocated (net) between two walks of the youngest generation (CPython: 700)
YOUNG = 10_000
#: walks of the youngest generation between two of the middle one, and of those between two of the
#: oldest (CPython: 10 and 10; the oldest is also put off until it grew by a quarter)
MIDDLE = 20
OLD = 20


def settle() -> None:
    """Collect once, freeze what survives, and space the walks out (module docstring)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, OLD)
