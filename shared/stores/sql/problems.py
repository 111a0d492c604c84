"""The problem store, written once for both engines (docs/architecture.md sections 4 and 10).

A report is written once per fetch of a feed and a page-problem row only when
a page lost something, so this is plain SQL over the ``SqlRunner``: one
statement per method, or a write and a guarded prune, with no transaction
spanning an ``await``. A report's problems and counts are one JSON body (read
whole, never queried); ``fetched_at`` orders a feed's history.

The page-problem reads join the page table: a row counts only while its
version is the page's live version, or, for a page held back (``held``), while
no version as new is stored (see ``problems.py``).

A page's state (``PageState``) is ``STATE_SQL``, one ``CASE`` over the page
table, the delay store, the URL's owner and the problem row of the same
database: ``page_rows`` reads it per page and ``state_counts`` groups by it,
so a list and its counts apply the same rule (the branches are in
``PageState``'s order; the first that holds wins).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import orjson

from shared.hashing import TOMBSTONE
from shared.messages import SourceKind
from shared.notify.events import EventKind
from shared.problems import problems_from
from shared.problems.history import Occurrence
from shared.stores.codec import dumps, from_us, now_us, to_us
from shared.stores.problems import KEEP_REPORTS, FetchReport, PageProblems, PageRow, PageState, merge_attempts
from shared.stores.sql.notify import emit_feed_event, emit_task_event
from shared.stores.sql.problem_history import SqlProblemHistory
from shared.stores.sql.runner import SqlRunner, chunks

__all__ = ["STATE_SQL", "SqlProblemStore"]

_REPORT_COLUMNS = "feed_id, fetched_at, result, body"
_PAGE_COLUMNS = "pp.url, pp.version, pp.host, pp.source_kind, pp.source_id, pp.problems, pp.updated_at, pp.held"


def _report_body(r: FetchReport) -> str:
    return dumps(
        {
            "http_status": r.http_status,
            "items": r.items,
            "changed": r.changed,
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
        # "published" in reports written before it was named for what it counts
        changed=int(body.get("changed", body.get("published")) or 0),
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


def _state_sql(owner: str, source: str, hash_: str) -> str:
    """The ``CASE`` of ``PageState`` over ``p`` (pages), ``d`` (delay_docs), ``pp`` (page_problems) and the
    given owner, source and content-hash columns (NULL for a preview, which has none)."""
    live = "p.url IS NOT NULL AND NOT p.deleted"
    return (
        "CASE"
        f" WHEN {owner} IS NOT NULL AND {owner} <> {source} THEN '{PageState.outranked.value}'"
        f" WHEN {hash_} = '{TOMBSTONE}' THEN '{PageState.removed.value}'"
        # a parked version newer than the live one (and than a held one) is what happens next
        " WHEN d.url IS NOT NULL AND d.version > COALESCE(p.version, 0)"
        f" AND (pp.url IS NULL OR NOT pp.held OR d.version > pp.version) THEN '{PageState.waiting.value}'"
        " WHEN pp.url IS NOT NULL AND pp.held AND (p.url IS NULL OR p.deleted OR p.version < pp.version)"
        f" THEN '{PageState.held.value}'"
        f" WHEN {live} AND pp.url IS NOT NULL AND NOT pp.held AND pp.version = p.version"
        f" THEN '{PageState.incomplete.value}'"
        f" WHEN {live} THEN '{PageState.published.value}'"
        f" WHEN p.url IS NOT NULL THEN '{PageState.removed.value}'"
        f" ELSE '{PageState.on_its_way.value}' END"
    )


#: a page of a source (``doc_hashes h`` and ``url_owners o``)
STATE_SQL = _state_sql("o.source_id", "h.source_id", "h.content_hash")
_JOINS = (
    " LEFT JOIN pages p ON p.url = {key} LEFT JOIN page_problems pp ON pp.url = {key}"
    " LEFT JOIN delay_docs d ON d.url = {key}"
)
_ROW_COLUMNS = (
    "p.title, p.written_at, (p.url IS NOT NULL AND NOT p.deleted), d.deadline, "
    + _PAGE_COLUMNS
    + ", pp.url IS NOT NULL"
)
#: a source's pages: everything it published or removed (its body key, ``<feed>#body``, is none)
_OF_SOURCE = (
    " FROM doc_hashes h LEFT JOIN url_owners o ON o.url = h.url"
    + _JOINS.format(key="h.url")
    + " WHERE h.source_id = ? AND h.url NOT LIKE '%#%'"
)


def _row(key: str, state: str, r: Sequence[Any], owner: str | None) -> PageRow:
    title, written, live, deadline = r[0], r[1], r[2], r[3]
    problems = _page(r[4:12]) if r[12] else None
    state_ = PageState(state)
    return PageRow(
        key=key,
        state=state_,
        title=title or "",
        live=bool(live),
        written_at=from_us(written),
        # the row tells why only in the states it decided
        problems=problems if state_ in (PageState.held, PageState.incomplete) else None,
        deadline=from_us(deadline) if state_ is PageState.waiting else None,
        owner=owner if state_ is PageState.outranked else None,
    )


class SqlProblemStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db
        self._history = SqlProblemHistory(db)

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
        await self._history.observe(report)  # each code's occurrences: opened, seen again, resolved

    async def history(self, feed_id: str, *, limit: int = 100) -> builtins.list[Occurrence]:
        return await self._history.history(feed_id, limit=limit)

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
            if row.held:
                await self._tell_held(row, stamp)
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

    async def _tell_held(self, row: PageProblems, stamp: int) -> None:
        """A page held back: its tenant's ``pages.held``, once a source a day (``shared/notify/events.py``): a
        feed's tenant, or an upload's, found through its task."""
        at = from_us(stamp)
        assert at is not None
        first = row.problems[0] if row.problems else None
        detail: dict[str, Any] = {"url": row.url, "codes": sorted({p.code for p in row.problems})}
        if first is not None:
            detail |= {"code": first.code, "message": first.message, "hint": first.hint}
        event_id = f"{row.source_id}/held/{at.date().isoformat()}"
        emit = emit_task_event if row.source_kind == SourceKind.upload else emit_feed_event
        await emit(self._db, event_id, row.source_id, EventKind.pages_held, at, detail)

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

    async def page_rows(
        self,
        *,
        source_id: str | None = None,
        keys: Sequence[str] = (),
        limit: int = 200,
        after: str | None = None,
        states: Iterable[PageState] = (),
    ) -> builtins.list[PageRow]:
        if source_id is not None:
            sql = f"SELECT h.url, {STATE_SQL}, o.source_id, {_ROW_COLUMNS}{_OF_SOURCE}"
            args: list[Any] = [source_id]
            if after is not None:
                sql += " AND h.url > ?"
                args.append(after)
            wanted = sorted({s.value for s in states})
            if wanted:
                sql += f" AND {STATE_SQL} IN ({', '.join('?' * len(wanted))})"
                args.extend(wanted)
            raw = await self._db.fetch(sql + " ORDER BY h.url LIMIT ?", *args, limit)
            rows = [_row(r[0], r[1], r[3:], r[2]) for r in raw]
        else:
            wanted = list(dict.fromkeys(keys))[:limit]
            found: dict[str, PageRow] = {}
            state = _state_sql("NULL", "NULL", "NULL")
            for chunk in chunks(wanted):
                # the keys as a table both engines read: a VALUES list of typed parameters
                values = ", ".join("(CAST(? AS TEXT))" for _ in chunk)
                raw = await self._db.fetch(
                    f"WITH k(url) AS (VALUES {values}) SELECT k.url, {state}, {_ROW_COLUMNS} FROM k"
                    + _JOINS.format(key="k.url"),
                    *chunk,
                )
                found.update((r[0], _row(r[0], r[1], r[2:], None)) for r in raw)
            rows = [found[k] for k in wanted if k in found]
        return await self._with_pending(rows)

    async def _with_pending(self, rows: builtins.list[PageRow]) -> builtins.list[PageRow]:
        """The media each waiting page still misses (``delay_pending``)."""
        waiting = [r.key for r in rows if r.state is PageState.waiting]
        pending: dict[str, set[str]] = {k: set() for k in waiting}
        for chunk in chunks(waiting):
            marks = ", ".join("?" * len(chunk))
            for media_url, doc_url in await self._db.fetch(
                f"SELECT media_url, doc_url FROM delay_pending WHERE doc_url IN ({marks})", *chunk
            ):
                pending[doc_url].add(media_url)
        if not waiting:
            return rows
        return [replace(r, pending=frozenset(pending[r.key])) if r.key in pending else r for r in rows]

    async def state_counts(self, source_id: str, *, host: str | None = None) -> dict[PageState, tuple[int, int]]:
        # served: a version of the page is on Turbo, and it is this source's (an outranked one is not)
        served = "p.url IS NOT NULL AND NOT p.deleted AND (o.source_id IS NULL OR o.source_id = h.source_id)"
        sql = f"SELECT {STATE_SQL}, count(*), SUM(CASE WHEN {served} THEN 1 ELSE 0 END){_OF_SOURCE}"
        args: list[Any] = [source_id]
        if host is not None:  # an upload tenant's pages of one host (a page, problem or parked row names it)
            sql += " AND COALESCE(p.host, pp.host, d.host) = ?"
            args.append(host)
        rows = await self._db.fetch(sql + " GROUP BY 1", *args)
        return {PageState(state): (int(n), int(live or 0)) for state, n, live in rows}
