"""Migrations 26 and 27 of both engines: what fetching learns and keeps (docs/architecture.md section 4, "stores").

The feed's own schedule (its ttl, Cache-Control, skip hours: ``cubes/scheduler/origin.py``) and an
image's own re-check time (its response's lifetime: ``cubes/cdn/handler.py``). ``migrations.py`` applies them in
order with the rest; never edit a released migration, append a new one there.
"""

from __future__ import annotations

__all__ = ["extend_fetching"]


#: ``migrations.Migration``: (version, name, statements)
_Migration = tuple[int, str, tuple[str, ...]]


def extend_fetching(sqlite: list[_Migration], postgres: list[_Migration]) -> None:
    """Append migrations 26 and 27 to each engine's list."""
    # 26: what chose a feed's next fetch when the origin did (its ttl, sy:updatePeriod, Cache-Control, Expires,
    # skipHours / skipDays: ``cubes/scheduler/origin.py``), shown in the feed's status; what the last body
    # declared, for the fetches that bring none (a 304)
    schedule_columns = (
        "ALTER TABLE feeds ADD COLUMN schedule_reason TEXT",
        "ALTER TABLE feeds ADD COLUMN declared_schedule TEXT",
    )
    sqlite.append((26, "feeds: the origin's schedule", schedule_columns))
    postgres.append((26, "feeds: the origin's schedule", schedule_columns))

    # 27: an image's next re-check is a due time of its own (its response's Cache-Control max-age or Expires,
    # ``cubes/cdn/handler.py``), not its last check plus one period for every image; the images cached before
    # are due a week (the default media.recheck_s) after their last check
    recheck_columns = (
        "ALTER TABLE images ADD COLUMN recheck_at BIGINT",
        "UPDATE images SET recheck_at = checked_at + 604800000000 WHERE status = 'ok' AND checked_at IS NOT NULL",
        "DROP INDEX IF EXISTS images_recheck",
        "CREATE INDEX IF NOT EXISTS images_recheck_due ON images (status, recheck_at)",
    )
    sqlite.append((27, "images: a re-check due time of their own", recheck_columns))
    postgres.append((27, "images: a re-check due time of their own", recheck_columns))
