"""Migrations 37 and 38 of both engines: what the webmaster's everyday tools keep (docs/architecture.md
section 4, "stores").

A task's mode (the task list's filter, ``shared/task_list.py``) and each problem code's occurrences on a
feed (``shared/problem_history.py``). ``migrations.py`` applies them in order with the rest; never
edit a released migration, append a new one there.
"""

from __future__ import annotations

__all__ = ["extend_webmaster"]


#: ``migrations.Migration``: (version, name, statements)
_Migration = tuple[int, str, tuple[str, ...]]


def extend_webmaster(sqlite: list[_Migration], postgres: list[_Migration]) -> None:
    """Append migrations 37 and 38 to each engine's list."""
    # 37: a task's mode (production, or debug: previews only), a filter of the task list (which ``tasks_tenant``
    # serves newest first)
    task_mode = ("ALTER TABLE tasks ADD COLUMN mode TEXT NOT NULL DEFAULT 'production'",)
    sqlite.append((37, "tasks: mode", task_mode))
    postgres.append((37, "tasks: mode", task_mode))

    # 38: each problem code's occurrences on a feed, from first seen to resolved (``shared/problem_history.py``)
    problem_history = (
        "CREATE TABLE IF NOT EXISTS problem_history (feed_id TEXT NOT NULL, code TEXT NOT NULL,"
        " first_seen BIGINT NOT NULL, last_seen BIGINT NOT NULL, seen BIGINT NOT NULL, resolved_at BIGINT,"
        " PRIMARY KEY (feed_id, code, first_seen))",
        # at most one open occurrence of a code on a feed
        "CREATE UNIQUE INDEX IF NOT EXISTS problem_history_open ON problem_history (feed_id, code)"
        " WHERE resolved_at IS NULL",
    )
    sqlite.append((38, "problem history: occurrences of each code on a feed", problem_history))
    postgres.append((38, "problem history: occurrences of each code on a feed", problem_history))
