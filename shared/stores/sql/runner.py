"""``SqlRunner``: the few statement calls both engines' connections offer (docs/architecture.md section 4).

``?`` placeholders (the PostgreSQL runner rewrites them to ``$n``). Each call
is one statement in its own transaction on PostgreSQL, and one write in the
loop turn's group commit on SQLite (``sqlite/db.py``); so a store method
written over it must be one statement, or a read followed by one guarded
statement, with no transaction spanning an ``await``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

__all__ = ["CHUNK", "SqlRunner", "chunks"]

#: keys per statement of a batch read or write: one round trip each; 500 keeps a statement small
#: (its plan and parameters) while 100,000 keys still take only 200 round trips, and it stays far
#: below SQLite's limit of bound parameters (32,766) on any version
CHUNK = 500


class SqlRunner(Protocol):
    async def fetch(self, sql: str, *args: Any) -> list[tuple[Any, ...]]: ...
    async def fetchone(self, sql: str, *args: Any) -> tuple[Any, ...] | None: ...
    async def execute(self, sql: str, *args: Any) -> int: ...
    async def execute_returning(self, sql: str, *args: Any) -> list[tuple[Any, ...]]: ...


def chunks(values: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]
