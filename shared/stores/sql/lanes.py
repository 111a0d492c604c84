"""The crawl-lane store, written once for both engines (docs/architecture.md section 6; ``lanes.py`` for why a store).

Writes are rare (a pause, a robots.txt a day, a few rate changes a minute per
busy host), so this is plain SQL over the ``SqlRunner``: one statement per
method. Both upserts are guarded so an older save (a slow, or a dying,
previous owner) never undoes a newer one, and a pause deadline only ever
moves later: ``CASE`` rather than ``GREATEST``/``MAX``, which the two engines
spell differently.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.stores.lanes import LaneState, RobotsRecord
from shared.stores.sql.runner import SqlRunner

__all__ = ["SqlLaneStore"]

_US = 1_000_000


def _us(ts: float | None) -> int | None:
    return None if ts is None else round(ts * _US)


def _s(us: int | None) -> float | None:
    return None if us is None else us / _US


_LANE_COLUMNS = (
    "host, paused_until, pause_reason, rate, incidents, last_incident_at, latency_avg_s, crawl_delay,"
    " not_before, updated_at"
)


class SqlLaneStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def get_lane(self, host: str) -> LaneState | None:
        row = await self._db.fetchone(f"SELECT {_LANE_COLUMNS} FROM crawl_lanes WHERE host = ?", host)
        if row is None:
            return None
        return LaneState(
            host=row[0],
            paused_until=_s(row[1]) or 0.0,
            pause_reason=row[2] or "",
            rate=float(row[3]),
            incidents=int(row[4]),
            last_incident_at=_s(row[5]),
            latency_avg_s=row[6],
            crawl_delay=float(row[7]),
            not_before=_s(row[8]) or 0.0,
            updated_at=_s(row[9]) or 0.0,
        )

    async def put_lanes(self, states: Sequence[LaneState]) -> None:
        for s in states:
            await self._db.execute(
                f"INSERT INTO crawl_lanes ({_LANE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (host) DO UPDATE SET"
                # a deadline the partner gave is never shortened, whoever saves later
                " paused_until = CASE WHEN excluded.paused_until > crawl_lanes.paused_until"
                " THEN excluded.paused_until ELSE crawl_lanes.paused_until END,"
                " pause_reason = CASE WHEN excluded.paused_until >= crawl_lanes.paused_until"
                " THEN excluded.pause_reason ELSE crawl_lanes.pause_reason END,"
                " rate = excluded.rate, incidents = excluded.incidents,"
                " last_incident_at = excluded.last_incident_at, latency_avg_s = excluded.latency_avg_s,"
                " crawl_delay = excluded.crawl_delay,"
                " not_before = CASE WHEN excluded.not_before > crawl_lanes.not_before"
                " THEN excluded.not_before ELSE crawl_lanes.not_before END,"
                " updated_at = excluded.updated_at"
                " WHERE crawl_lanes.updated_at <= excluded.updated_at",
                s.host,
                _us(s.paused_until),
                s.pause_reason,
                s.rate,
                s.incidents,
                _us(s.last_incident_at),
                s.latency_avg_s,
                s.crawl_delay,
                _us(s.not_before),
                _us(s.updated_at),
            )

    async def get_robots(self, origin: str) -> RobotsRecord | None:
        row = await self._db.fetchone(
            "SELECT origin, fetched_at, expires_at, allow_all, body, status, reason FROM crawl_robots WHERE origin = ?",
            origin,
        )
        if row is None:
            return None
        return RobotsRecord(
            origin=row[0],
            fetched_at=_s(row[1]) or 0.0,
            expires_at=_s(row[2]) or 0.0,
            allow_all=None if row[3] is None else bool(row[3]),
            body=row[4],
            status=row[5],
            reason=row[6],
        )

    async def put_robots(self, record: RobotsRecord) -> None:
        await self._db.execute(
            "INSERT INTO crawl_robots (origin, fetched_at, expires_at, allow_all, body, status, reason)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (origin) DO UPDATE SET fetched_at = excluded.fetched_at,"
            " expires_at = excluded.expires_at, allow_all = excluded.allow_all, body = excluded.body,"
            " status = excluded.status, reason = excluded.reason"
            " WHERE crawl_robots.fetched_at <= excluded.fetched_at",
            record.origin,
            _us(record.fetched_at),
            _us(record.expires_at),
            record.allow_all,
            record.body,
            record.status,
            record.reason,
        )
