"""The problem store, written once for both engines (docs/architecture.md sections 4 and 10).

A report is written once per fetch of a feed and a page-problem row only when
a page lost something, so this is plain SQL over the ``SqlRunner``: one
statement per method, or a write and a guarded prune, with no transaction
spanning an ``await``. A report's problems and counts are one JSON body (read
whole, never queried); ``fetched_at`` orders a feed's history.

The page-problem reads join the page table: a row counts only while its
version is the page's live version, or, for a page held back (``held``), while
no version as new is stored (see ``problems.py``).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import orjson

from shared.problems import problems_from
from shared.stores.codec import dumps, from_us, now_us, to_us
from shared.stores.problems import KEEP_REPORTS, FetchReport, PageProblems, merge_attempts
from shared.stores.sql.runner import SqlRunner, chunks

__all__ = ["SqlProblemStore"]

_REPORT_COLUMNS = "feed_id, fetched_at, result, body"
_PAGE_COLUMNS = "pp.url, pp.version, pp.host, pp.source_kind, pp.source_id, pp.problems, pp.updated_at, pp.held"


def _report_body(r: FetchReport) -> str:
    return dumps(
        {
            "http_status": r.http_status,
            "items": r.items,
            "published": r.published,
            "unchanged": r.unchanged,
            "refused": r.refused,
            "removed": r.removed,
            "problems": [p.as_dict() for p in r.problems],
            "counts": r.counts,
            "more": r.more,
            "fetch_ids": list(r.fetch_ids),
        }
    )


def _report(row: Sequence[Any]) -> FetchReport:
    body: dict[str, Any] = orjson.loads(row[3])
    fetched_at = from_us(row[1])
    assert fetched_at is not None
    return FetchReport(
        feed_id=row[0],
        fetched_at=fetched_at,
        result=row[2],
        http_status=body.get("http_status"),
        items=body.get("items"),
        published=int(body.get("published") or 0),
        unchanged=int(body.get("unchanged") or 0),
        refused=int(body.get("refused") or 0),
        removed=int(body.get("removed") or 0),
        problems=tuple(problems_from(body.get("problems") or [])),
        counts={str(k): int(v) for k, v in (body.get("counts") or {}).items()},
        more=int(body.get("more") or 0),
        fetch_ids=tuple(body.get("fetch_ids") or ()),
    )


def _page(row: Sequence[Any]) -> PageProblems:
    return PageProblems(
        url=row[0],
        version=row[1],
        host=row[2],
        source_kind=row[3],
        source_id=row[4],
        problems=tuple(problems_from(orjson.loads(row[5]))),
        updated_at=from_us(row[6]),
        held=bool(row[7]),
    )


class SqlProblemStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def add_report(self, report: FetchReport, *, keep: int = KEEP_REPORTS) -> None:
        # one owner of a feed's fetches at a time (the runtime's revoke): nothing writes this row between
        stored = await self._db.fetchone(
            f"SELECT {_REPORT_COLUMNS} FROM fetch_reports WHERE feed_id = ? AND fetched_at = ?",
            report.feed_id,
            to_us(report.fetched_at),
        )
        report = merge_attempts(_report(stored) if stored is not None else None, report)
        await self._db.execute(
            f"INSERT INTO fetch_reports ({_REPORT_COLUMNS}) VALUES (?, ?, ?, ?)"
            # a redelivered crawl result: the same row, merged above
            " ON CONFLICT (feed_id, fetched_at) DO UPDATE SET result = excluded.result, body = excluded.body",
            report.feed_id,
            to_us(report.fetched_at),
            report.result,
            _report_body(report),
        )
        # fewer than `keep` rows: the subquery is NULL and nothing goes
        await self._db.execute(
            "DELETE FROM fetch_reports WHERE feed_id = ? AND fetched_at < (SELECT fetched_at FROM fetch_reports"
            " WHERE feed_id = ? ORDER BY fetched_at DESC LIMIT 1 OFFSET ?)",
            report.feed_id,
            report.feed_id,
            max(keep, 1) - 1,
        )

    async def reports(self, feed_id: str, limit: int = KEEP_REPORTS) -> builtins.list[FetchReport]:
        rows = await self._db.fetch(
            f"SELECT {_REPORT_COLUMNS} FROM fetch_reports WHERE feed_id = ? ORDER BY fetched_at DESC LIMIT ?",
            feed_id,
            limit,
        )
        return [_report(r) for r in rows]

    async def latest_reports(self, feed_ids: Iterable[str]) -> dict[str, FetchReport]:
        out: dict[str, FetchReport] = {}
        for chunk in chunks(sorted(set(feed_ids))):
            marks = ", ".join("?" * len(chunk))
            rows = await self._db.fetch(
                f"SELECT {_REPORT_COLUMNS} FROM fetch_reports r WHERE r.feed_id IN ({marks}) AND r.fetched_at ="
                " (SELECT MAX(m.fetched_at) FROM fetch_reports m WHERE m.feed_id = r.feed_id)",
                *chunk,
            )
            out.update((row[0], _report(row)) for row in rows)
        return out

    async def report_for_fetch(self, feed_id: str, fetch_id: str) -> FetchReport | None:
        # the history is short (KEEP_REPORTS rows): looking through it beats an index per fetch id
        for report in reversed(await self.reports(feed_id)):
            if fetch_id in report.fetch_ids:
                return report
        return None

    async def put_page_problems(self, rows: Sequence[PageProblems], *, now: datetime | None = None) -> None:
        stamp = now_us(now)
        for row in rows:
            await self._db.execute(
                "INSERT INTO page_problems (url, version, host, source_kind, source_id, problems, updated_at, held)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (url) DO UPDATE SET version = excluded.version,"
                " host = excluded.host, source_kind = excluded.source_kind, source_id = excluded.source_id,"
                " problems = excluded.problems, updated_at = excluded.updated_at, held = excluded.held"
                # a late write of an older version never hides what a newer one lost
                " WHERE page_problems.version <= excluded.version",
                row.url,
                row.version,
                row.host,
                row.source_kind,
                row.source_id,
                dumps([p.as_dict() for p in row.problems]),
                stamp,
                bool(row.held),
            )

    async def page_problems(
        self,
        *,
        source_id: str | None = None,
        host: str | None = None,
        url: str | None = None,
        limit: int = 200,
    ) -> builtins.list[PageProblems]:
        where, args = [], []
        for column, value in (("pp.source_id", source_id), ("pp.host", host), ("pp.url", url)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if not where:
            raise ValueError("page_problems needs a source_id, a host or a url")
        rows = await self._db.fetch(
            f"SELECT {_PAGE_COLUMNS} FROM page_problems pp"
            " LEFT JOIN pages p ON p.url = pp.url"
            f" WHERE {' AND '.join(where)}"
            " AND ((NOT pp.held AND p.version = pp.version AND NOT p.deleted)"
            " OR (pp.held AND (p.url IS NULL OR p.version < pp.version)))"
            " ORDER BY pp.updated_at DESC, pp.url LIMIT ?",
            *args,
            limit,
        )
        return [_page(r) for r in rows]
