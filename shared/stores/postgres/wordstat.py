"""PostgreSQL query-statistics store (docs/architecture.md sections 3 and 4, "wordstat"; contract: ``wordstat.py``).

A batch is one transaction of a few statements whatever its size: the event ids
go in with ``unnest`` and ``ON CONFLICT DO NOTHING RETURNING`` (what comes back
is new: a concurrent consumer's insert of the same id waits, then is skipped),
new queries likewise, then each counter table gets one ``INSERT … SELECT FROM
unnest(…) ON CONFLICT DO UPDATE SET n = n + excluded.n``. Rows are summed per
key first (a statement may not update a row twice) and sorted, so concurrent
batches lock rows in one order and never deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from shared.stores.codec import now_us
from shared.stores.postgres.db import PgDb
from shared.stores.sql.wordstat import candidates_sql, order_groups, postings_sql, weights_sql
from shared.stores.wordstat import (
    CountedSearch,
    QueryRow,
    Selection,
    TallyRow,
    aggregate,
    distinct_lemmas,
    index_entries,
    set_key,
    word_sets,
)

__all__ = ["PgWordstatStore"]


def _in_list(column: str, values: Sequence[str]) -> tuple[str, list[object]]:
    return f"{column} = ANY(?::text[])", [list(values)]


def _columns(rows: Sequence[Sequence[object]], width: int) -> list[list[object]]:
    return [[r[i] for r in rows] for i in range(width)] if rows else [[] for _ in range(width)]


async def _lock_sets(conn: asyncpg.Connection, searches: Sequence[CountedSearch]) -> None:
    """Lock ``ws_unions`` first thing in the batch, and register the batch's new lemma sets.

    A set's counters are filled from the searches counted before it and grown by every batch after;
    a batch counting while the set is registered would be in neither. So a batch that counts holds
    ``SHARE`` (batches count side by side) and one that registers ``SHARE ROW EXCLUSIVE`` (it waits
    for those counting, and those after it see the set). Taken before any row lock: no deadlock."""
    by_query = {s.query: s.lemmas for s in searches}
    keys = sorted({k for lemmas in by_query.values() for k in word_sets(lemmas)})
    known = {r[0] for r in await conn.fetch("SELECT key FROM ws_unions WHERE key = ANY($1::text[])", keys)}
    new = [k for k in keys if k not in known]
    await conn.execute(f"LOCK TABLE ws_unions IN {'SHARE ROW EXCLUSIVE' if new else 'SHARE'} MODE")
    if not new:
        return
    # another batch may have registered some while this one waited
    created = await conn.fetch(
        "INSERT INTO ws_unions (key) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING RETURNING key", new
    )
    members = sorted((lemma, r[0]) for r in created for lemma in r[0].split("|"))
    if not members:
        return
    await conn.execute(
        "INSERT INTO ws_union_members (lemma, key) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING",
        *_columns(members, 2),
    )
    # the searches counted before this batch, each once per set (a query with both lemmas is one query)
    await conn.execute(
        "INSERT INTO ws_lemma_counts (lemma, month, region, device, n)"
        " SELECT u.key, c.month, c.region, c.device, sum(c.n)"
        " FROM (SELECT DISTINCT m.key, t.qid FROM unnest($1::text[], $2::text[]) AS m(lemma, key)"
        "       JOIN ws_terms t ON t.lemma = m.lemma) AS u"
        " JOIN ws_counts c ON c.qid = u.qid GROUP BY u.key, c.month, c.region, c.device"
        " ON CONFLICT (lemma, month, region, device) DO UPDATE SET n = ws_lemma_counts.n + excluded.n",
        *_columns(members, 2),
    )


async def _sets_of(conn: asyncpg.Connection, fresh: Sequence[CountedSearch]) -> dict[str, list[str]]:
    """lemma -> the registered sets it is in, for the lemmas of the batch's new searches."""
    lemmas = sorted({lemma for s in fresh for lemma in s.lemma_set or distinct_lemmas(s.lemmas)})
    sets: dict[str, list[str]] = {}
    for lemma, key in await conn.fetch("SELECT lemma, key FROM ws_union_members WHERE lemma = ANY($1::text[])", lemmas):
        sets.setdefault(lemma, []).append(key)
    return sets


async def _count(conn: asyncpg.Connection, searches: Sequence[CountedSearch], stamp: int) -> int:
    await _lock_sets(conn, searches)
    batch = {s.event_id: s for s in searches}
    fresh_ids = await conn.fetch(
        "INSERT INTO ws_seen (event_id, at) SELECT u, $2 FROM unnest($1::text[]) AS u"
        " ON CONFLICT (event_id) DO NOTHING RETURNING event_id",
        list(batch),
        stamp,
    )
    fresh = [batch[r[0]] for r in fresh_ids]
    if not fresh:
        return 0
    queries = {s.query: s for s in fresh}
    names = sorted(queries)
    created = await conn.fetch(
        "INSERT INTO ws_queries (query, lemmas, content)"
        " SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])"
        " ON CONFLICT (query) DO NOTHING RETURNING qid, query",
        names,
        [queries[q].lemmas for q in names],
        [queries[q].content for q in names],
    )
    qids = {r[0]: r[1] for r in await conn.fetch("SELECT query, qid FROM ws_queries WHERE query = ANY($1)", names)}
    terms = sorted(
        {(entry, queries[r[1]].content, r[0]) for r in created for entry in index_entries(queries[r[1]].lemmas, r[1])}
    )
    if terms:
        await conn.execute(
            "INSERT INTO ws_terms (lemma, content, qid) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])"
            " ON CONFLICT DO NOTHING",
            *_columns(terms, 3),
        )
    agg = aggregate(fresh, qids, await _sets_of(conn, fresh))
    await conn.execute(
        "INSERT INTO ws_counts (qid, month, region, device, n)"
        " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[])"
        " ON CONFLICT (qid, month, region, device) DO UPDATE SET n = ws_counts.n + excluded.n",
        *_columns(agg.counts, 5),
    )
    await conn.execute(
        "UPDATE ws_queries q SET total = q.total + v.n FROM unnest($1::bigint[], $2::bigint[]) AS v(qid, n)"
        " WHERE q.qid = v.qid",
        *_columns(agg.totals, 2),
    )
    await conn.execute(
        "INSERT INTO ws_lemma_counts (lemma, month, region, device, n)"
        " SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[])"
        " ON CONFLICT (lemma, month, region, device) DO UPDATE SET n = ws_lemma_counts.n + excluded.n",
        *_columns(agg.lemmas, 5),
    )
    if agg.hosts:
        await conn.execute(
            "INSERT INTO ws_hosts (host, month, qid, n)"
            " SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[])"
            " ON CONFLICT (host, month, qid) DO UPDATE SET n = ws_hosts.n + excluded.n",
            *_columns(agg.hosts, 4),
        )
    return len(fresh)


def _tally_rows(rows: Sequence[Sequence[Any]]) -> list[TallyRow]:
    return [TallyRow(month=int(r[0]), region=r[1], device=r[2], n=int(r[3])) for r in rows]


class PgWordstatStore:
    def __init__(self, db: PgDb) -> None:
        self._db = db

    async def count(self, searches: Sequence[CountedSearch], *, now: datetime) -> int:
        if not searches:
            return 0
        stamp = now_us(now)
        return await self._db.tx(lambda conn: _count(conn, searches, stamp))

    async def forget_seen(self, before: datetime) -> int:
        return await self._db.execute("DELETE FROM ws_seen WHERE at < ?", now_us(before))

    async def lemma_tally(self, lemmas: Sequence[str], first: int, last: int) -> list[TallyRow] | None:
        key = set_key(lemmas)
        # a set is registered with its counters filled, in one transaction: once seen, its rows are whole
        if "|" in key and await self._db.fetchone("SELECT 1 FROM ws_unions WHERE key = ?", key) is None:
            return None
        rows = await self._db.fetch(
            "SELECT month, region, device, n FROM ws_lemma_counts WHERE lemma = ? AND month BETWEEN ? AND ?",
            key,
            first,
            last,
        )
        return _tally_rows(rows)

    async def _candidates(self, sel: Selection) -> tuple[str, list[object]]:
        groups = list(sel.required)
        if len(groups) > 1:
            sql, p = postings_sql(groups, _in_list)
            postings = [int(n) for _, n in sorted(await self._db.fetch(sql, *p))]
            weights: dict[str, int] = {}
            if tie := weights_sql(groups, postings, _in_list):
                weights = {r[0]: int(r[1]) for r in await self._db.fetch(tie[0], *tie[1])}
            groups = order_groups(groups, weights, postings)
        return candidates_sql(groups, sel, _in_list)

    async def select(self, selection: Selection, *, limit: int) -> list[QueryRow]:
        cand, params = await self._candidates(selection)
        rows = await self._db.fetch(
            f"SELECT q.qid, q.query, q.lemmas, q.total FROM ({cand}) c JOIN ws_queries q ON q.qid = c.qid"
            " ORDER BY q.total DESC, q.query LIMIT ?",
            *params,
            limit,
        )
        return [QueryRow(int(r[0]), r[1], r[2], int(r[3])) for r in rows]

    async def tally(
        self, selections: Sequence[Selection], qids: Sequence[int], first: int, last: int
    ) -> list[TallyRow]:
        if not selections and not qids:
            return []
        parts: list[str] = []
        params: list[object] = []
        for sel in selections:
            cand, p = await self._candidates(sel)
            parts.append(cand)
            params.extend(p)
        if qids:
            parts.append("SELECT unnest(?::bigint[])")
            params.append(list(qids))
        rows = await self._db.fetch(
            "SELECT month, region, device, sum(n) FROM ws_counts"
            f" WHERE qid IN ({' UNION '.join(parts)}) AND month BETWEEN ? AND ? GROUP BY month, region, device",
            *params,
            first,
            last,
        )
        return _tally_rows(rows)

    async def query_totals(self, qids: Sequence[int], first: int, last: int) -> dict[int, int]:
        rows = await self._db.fetch(
            "SELECT qid, sum(n) FROM ws_counts WHERE qid = ANY(?::bigint[]) AND month BETWEEN ? AND ? GROUP BY qid",
            list(qids),
            first,
            last,
        )
        return {int(r[0]): int(r[1]) for r in rows}

    async def host_queries(self, origin: str, first: int, last: int, *, limit: int) -> list[tuple[str, int]]:
        rows = await self._db.fetch(
            "SELECT q.query, sum(h.n) AS n FROM ws_hosts h JOIN ws_queries q ON q.qid = h.qid"
            " WHERE h.host = ? AND h.month BETWEEN ? AND ? GROUP BY q.query ORDER BY n DESC, q.query LIMIT ?",
            origin,
            first,
            last,
            limit,
        )
        return [(r[0], int(r[1])) for r in rows]
