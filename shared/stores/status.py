"""The status store's contract: snapshots published by cubes, and page figures (docs/architecture.md section 10).

One implementation for both engines: ``sql/status.py``.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

__all__ = ["StatusSnapshot", "StatusStore"]


@dataclass(frozen=True, slots=True)
class StatusSnapshot:
    """A small JSON document a cube publishes every few seconds (``shared/status.py``); the latest wins."""

    name: str  # "<kind>:<cube>:<instance>", e.g. "cube:parser:host-1:4242"
    data: dict[str, Any]
    updated_at: datetime


class StatusStore(Protocol):
    """Status snapshots published by cubes (``shared/status.py``), and page figures for the status page.

    A snapshot is a small JSON object under a name; every process overwrites its own
    names every few seconds, so a reader sees each process's latest state whatever the
    deployment (one process or a cluster). ``page_counts`` and ``freshness`` read the
    page store's table (the same database) for the status page.
    """

    async def put_status(self, name: str, data: dict[str, Any], *, now: datetime | None = None) -> None:
        """Store ``data`` (JSON-serializable) under ``name``; an older ``now`` never overwrites a newer one."""
        ...

    async def get_status(self, prefix: str = "") -> builtins.list[StatusSnapshot]:
        """The snapshots whose name starts with ``prefix``, ordered by name."""
        ...

    async def prune_status(self, before: datetime) -> int:
        """Drop snapshots last written before ``before`` (processes long gone); how many."""
        ...

    async def page_counts(self) -> dict[str, int]:
        """Live Turbo pages per host (preview pages left out)."""
        ...

    async def freshness(self, limit: int = 1000) -> builtins.list[float]:
        """Seconds from ``seen_at`` to ``written_at`` of the ``limit`` most recently written live pages."""
        ...
