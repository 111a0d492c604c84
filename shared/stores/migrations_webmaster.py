"""Migrations 37 to 39 of both engines: what the webmaster's everyday tools keep (docs/architecture.md
section 4, "stores").

A task's mode (the task list's filter, ``shared/webmaster/task_list.py``) and each problem code's occurrences on a
feed (``shared/problems/history.py``); the notifications: settings, the outbox of events, the
delivery log (``shared/stores/notify.py``). ``migrations.py`` applies them in order with the rest; never
edit a released migration, append a new one there.
"""

from __future__ import annotations

__all__ = ["extend_webmaster"]


#: ``migrations.Migration``: (version, name, statements)
_Migration = tuple[int, str, tuple[str, ...]]


def extend_webmaster(sqlite: list[_Migration], postgres: list[_Migration]) -> None:
    """Append migrations 37 to 39 to each engine's list."""
    # 37: a task's mode (production, or debug: previews only), a filter of the task list (which ``tasks_tenant``
    # serves newest first)
    task_mode = ("ALTER TABLE tasks ADD COLUMN mode TEXT NOT NULL DEFAULT 'production'",)
    sqlite.append((37, "tasks: mode", task_mode))
    postgres.append((37, "tasks: mode", task_mode))

    # 38: each problem code's occurrences on a feed, from first seen to resolved (``shared/problems/history.py``)
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

    # 39: notifications (``shared/stores/notify.py``): a tenant's settings, the outbox of events (those not
    # yet told found by their own index) and each event's deliveries (due ones by status and time; a
    # tenant's log by tenant and time)
    notify = (
        "CREATE TABLE IF NOT EXISTS notify_settings (tenant_id TEXT PRIMARY KEY, webhook_url TEXT, email TEXT,"
        " events TEXT NOT NULL DEFAULT '{}', sealed_secret TEXT, last_digest_at BIGINT, updated_at BIGINT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS notify_events (event_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL,"
        " kind TEXT NOT NULL, at BIGINT NOT NULL, host TEXT NOT NULL, subject TEXT NOT NULL, detail TEXT NOT NULL,"
        " told_at BIGINT)",
        "CREATE INDEX IF NOT EXISTS notify_events_untold ON notify_events (at) WHERE told_at IS NULL",
        "CREATE TABLE IF NOT EXISTS notify_deliveries (delivery_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL,"
        " event_id TEXT NOT NULL, channel TEXT NOT NULL, target TEXT NOT NULL, status TEXT NOT NULL,"
        " attempts BIGINT NOT NULL, next_at BIGINT NOT NULL, created_at BIGINT NOT NULL, last_at BIGINT,"
        " http_status BIGINT, error TEXT)",
        "CREATE INDEX IF NOT EXISTS notify_deliveries_due ON notify_deliveries (status, next_at)",
        "CREATE INDEX IF NOT EXISTS notify_deliveries_tenant ON notify_deliveries (tenant_id, created_at)",
    )
    sqlite.append((39, "notifications: settings, events, deliveries", notify))
    postgres.append((39, "notifications: settings, events, deliveries", notify))
