"""A migration of both engines: query statistics that keep their threshold (docs/architecture.md section 4, "stores").

What a counter cell publishes (``shared/wordstat/privacy.py``): every ``ws_counts`` and ``ws_hosts`` row gets its
secret offset and lift (``hide``, ``lift``; the rows counted before draw theirs here, from 0..5, the
``wordstat.privacy_noise`` default, and lift 2); ``ws_meta`` records the threshold the word counters are
sums for (none yet: the first batch makes them sums of published cells); ``ws_clients`` and
``ws_day_keys`` count a client once per query and day (``shared/wordstat/clients.py``). ``migrations.py``
numbers it and applies it in order with the rest; never edit a released migration, append a new one there.
"""

from __future__ import annotations

__all__ = ["extend_wordstat"]

#: ``migrations.Migration``: (version, name, statements)
_Migration = tuple[int, str, tuple[str, ...]]

_NAME = "wordstat: published cells, one search per client and day"


def _statements(draw: str, rowid: str) -> tuple[str, ...]:
    """``draw``: the engine's SQL of a uniform whole number from 0 to 5."""
    return (
        *(
            f"ALTER TABLE {t} ADD COLUMN {c} BIGINT NOT NULL DEFAULT 0"
            for t in ("ws_counts", "ws_hosts")
            for c in ("hide", "lift")
        ),
        f"UPDATE ws_counts SET hide = {draw}, lift = 2",
        f"UPDATE ws_hosts SET hide = {draw}, lift = 2",
        f"CREATE TABLE IF NOT EXISTS ws_meta (name TEXT PRIMARY KEY, value BIGINT NOT NULL){rowid}",
        "CREATE TABLE IF NOT EXISTS ws_clients ("
        f"day BIGINT NOT NULL, client TEXT NOT NULL, PRIMARY KEY (day, client)){rowid}",
        f"CREATE TABLE IF NOT EXISTS ws_day_keys (day BIGINT PRIMARY KEY, key TEXT NOT NULL){rowid}",
    )


def extend_wordstat(sqlite: list[_Migration], postgres: list[_Migration], *, version: int) -> None:
    """Append the migration, numbered ``version``, to each engine's list."""
    # SQLite's random() is any 64-bit integer (abs() of the least one overflows): its remainder made positive
    sqlite.append((version, _NAME, _statements("((random() % 6) + 6) % 6", " WITHOUT ROWID")))
    postgres.append((version, _NAME, _statements("floor(random() * 6)::bigint", "")))
