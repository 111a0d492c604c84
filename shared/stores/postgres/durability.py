"""Whether a PostgreSQL server keeps what it acknowledges (docs/architecture.md section 4, stores).

The cubes treat a commit the store acknowledged as final: the parser records an
offer's hash and never publishes it again, the delay cube confirms a release and
forgets the parked document. A server that acknowledges commits it may lose breaks
that for good: with ``synchronous_commit = off`` a kill -9 of the postmaster
dropped the last fraction of a second of confirmed commits (60 of a 30,000-offer
catalog's pages, gone with their hashes recorded, nothing reported). So the stores
look at the session's settings when they open, and refuse a server that runs

* ``synchronous_commit = off``: a commit is acknowledged before its WAL is on disk;
  a crash of the server (not only of the machine) loses the last ones acknowledged;
* ``fsync = off``: nothing is forced to disk; a crash of the machine (power, kernel)
  loses committed data or corrupts the data dir;
* ``full_page_writes = off``: a crash of the machine may leave torn pages that
  recovery cannot repair;

unless ``store.accept_lossy_commits`` says the operator accepts that (throwaway data,
a benchmark of the old setting): then it opens with one WARNING naming what it risks.
``ops/postgres/start`` runs all three on. ``synchronous_commit`` values other than
``off`` (``local``, ``remote_write``, ``on``, ``remote_apply``) all wait for the local
WAL flush, so they are durable on this server.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from shared.errors import ConfigError

__all__ = ["KEY", "RISKS", "check_durable", "lossy"]

log = logging.getLogger("turbocubes.stores")

#: the setting by which an operator accepts a server that may lose acknowledged commits
KEY = "store.accept_lossy_commits"

#: server setting -> (its lossy value, what it risks)
RISKS: dict[str, tuple[str, str]] = {
    "synchronous_commit": ("off", "a crash of the server loses the last commits it acknowledged"),
    "fsync": ("off", "a crash of the machine loses committed data or corrupts the data dir"),
    "full_page_writes": ("off", "a crash of the machine may leave torn pages recovery cannot repair"),
}

#: what the stores read at open: the session's values (a role's or database's SET counts too)
SETTINGS_SQL = "SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])"


def lossy(settings: Mapping[str, str]) -> dict[str, str]:
    """The settings among ``settings`` (name -> value) that let a commit be lost, with their risk."""
    return {name: risk for name, (bad, risk) in RISKS.items() if str(settings.get(name, "")).strip().lower() == bad}


def check_durable(where: str, settings: Mapping[str, str], *, accept: bool) -> None:
    """Refuse (``ConfigError`` naming ``store.accept_lossy_commits``) a server that may lose
    acknowledged commits, or warn once when the operator accepted it."""
    found = lossy(settings)
    if not found:
        return
    what = "; ".join(f"{name}={RISKS[name][0]} ({risk})" for name, risk in found.items())
    if accept:
        log.warning("postgresql at %s may lose acknowledged commits: %s; accepted by %s", where, what, KEY)
        return
    raise ConfigError(
        KEY,
        False,
        f"a PostgreSQL server that keeps the commits it acknowledges, but {where} runs with {what}: "
        f"turn {', '.join(found)} on (postgresql.conf or ALTER SYSTEM; ops/postgres/start does), "
        f"or set {KEY} = true to accept losing acknowledged writes in a crash",
    )
