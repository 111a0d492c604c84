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

import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from shared.stores.codec import now_us
from shared.stores.postgres.db import PgDb
from shared.stores.sql.wordstat import candidates_sql, order_groups, postings_sql, weights_sql
from shared.stores.sql.wordstat_privacy import published_sql, rebuild_sql, shown_sql
from shared.stores.wordstat import (
    DAY_KEY_BYTES,
    CountedSearch,
    Privacy,
    QueryRow,
    Selection,
    TallyRow,
    aggregate,
    distinct_lemmas,
    first_per_client,
    index_entries,
    once_per_client,
    set_key,
    word_sets,
)
from shared.wordstat.privacy import Change, visible_changes

__all__ = ["PgWordstatStore"]


def _in_list(column: str, values: Sequence[str]) -> tuple[str, list[object]]:
    return f"{column} = ANY(?::text[])", [list(values)]


def _columns(rows: Sequence[Sequence[object]], width: int) -> list[list[object]]:
    return [[r[i] for r in rows] for i in range(width)] if rows else [[] for _ in range(width)]


async def _privacy(conn: asyncpg.Connection, threshold: int) -> None:
    """Make the word counters sums for ``threshold`` if they are kept for another (``rebuild_sql``), every
    other batch held off meanwhile (``ws_unions``'s lock, which each batch takes first, ``_lock_sets``)."""
    if await _kept_for(conn, threshold):
        return
    await conn.execute("LOCK TABLE ws_unions IN SHARE ROW EXCLUSIVE MODE")
    if not await _kept_for(conn, threshold):  # another batch may have rebuilt them while this one waited
        for statement in rebuild_sql(threshold):
            await conn.execute(statement)


async def _kept_for(conn: asyncpg.Connection, threshold: int) -> bool:
    value = await conn.fetchval("SELECT value FROM ws_meta WHERE name = 'threshold'")
    return value is not None and int(value) == threshold


async def _clients(conn: asyncpg.Connection, fresh: list[CountedSearch]) -> list[CountedSearch]:
    """Record the batch's client keys; the searches to count (each client's first of a query and day)."""
    firsts = first_per_client(fresh)
    if not firsts:
        return fresh
    new = await conn.fetch(
        "INSERT INTO ws_clients (day, client) SELECT * FROM unnest($1::bigint[], $2::text[])"
        " ON CONFLICT (day, client) DO NOTHING RETURNING day, client",
        *_columns(sorted(firsts), 2),
    )
    return once_per_client(fresh, firsts, [(int(r[0]), r[1]) for r in new])


async def _lock_sets(conn: asyncpg.Connection, searches: Sequence[CountedSearch], threshold: int) -> None:
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
    # the published searches counted before this batch, each once per set (a query with both lemmas is one)
    await conn.execute(
        "INSERT INTO ws_lemma_counts (lemma, month, region, device, n)"
        f" SELECT u.key, c.month, c.region, c.device, sum({published_sql('c')})"
        " FROM (SELECT DISTINCT m.key, t.qid FROM unnest($1::text[], $2::text[]) AS m(lemma, key)"
        "       JOIN ws_terms t ON t.lemma = m.lemma) AS u"
        f" JOIN ws_counts c ON c.qid = u.qid WHERE {shown_sql('c', threshold)}"
        " GROUP BY u.key, c.month, c.region, c.device"
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


async def _count(conn: asyncpg.Connection, searches: Sequence[CountedSearch], stamp: int, privacy: Privacy) -> int:
    await _privacy(conn, privacy.threshold)
    await _lock_sets(conn, searches, privacy.threshold)
    batch = {s.event_id: s for s in searches}
    fresh_ids = await conn.fetch(
        "INSERT INTO ws_seen (event_id, at) SELECT u, $2 FROM unnest($1::text[]) AS u"
        " ON CONFLICT (event_id) DO NOTHING RETURNING event_id",
        list(batch),
        stamp,
    )
    fresh = await _clients(conn, [batch[r[0]] for r in fresh_ids])
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
    agg = aggregate(fresh, qids, privacy, await _sets_of(conn, fresh))
    # each touched cell's count after this statement (its row lock orders concurrent batches): less the
    # batch's searches, what it held before
    after = await conn.fetch(
        "INSERT INTO ws_counts (qid, month, region, device, n, hide, lift)"
        " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],"
        " $7::bigint[]) ON CONFLICT (qid, month, region, device) DO UPDATE SET n = ws_counts.n + excluded.n"
        " RETURNING qid, month, region, device, n, hide, lift",
        *_columns(agg.counts, 7),
    )
    added = {(r[0], r[1], r[2], r[3]): r[4] for r in agg.counts}
    changes: list[Change] = []
    for r in after:
        qid, month, region, device, n = int(r[0]), int(r[1]), r[2], r[3], int(r[4])
        changes.append((qid, month, region, device, n - added[qid, month, region, device], n, int(r[5]), int(r[6])))
    lemmas, totals = visible_changes(changes, agg.keys_of, privacy.threshold)
    await conn.execute(
        "UPDATE ws_queries q SET total = q.total + v.n FROM unnest($1::bigint[], $2::bigint[]) AS v(qid, n)"
        " WHERE q.qid = v.qid",
        *_columns(totals, 2),
    )
    await conn.execute(
        "INSERT INTO ws_lemma_counts (lemma, month, region, device, n)"
        " SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[])"
        " ON CONFLICT (lemma, month, region, device) DO UPDATE SET n = ws_lemma_counts.n + excluded.n",
        *_columns(lemmas, 5),
    )
    if agg.hosts:
        await conn.execute(
            "INSERT INTO ws_hosts (host, month, qid, n, hide, lift)"
            " SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])"
            " ON CONFLICT (host, month, qid) DO UPDATE SET n = ws_hosts.n + excluded.n",
            *_columns(agg.hosts, 6),
        )
    return len(fresh)


def _tally_rows(rows: Sequence[Sequence[Any]]) -> list[TallyRow]:
    return [TallyRow(month=int(r[0]), region=r[1], device=r[2], n=int(r[3])) for r in rows]


class PgWordstatStore:
    def __init__(self, db: PgDb) -> None:
        self._db = db

    async def count(self, searches: Sequence[CountedSearch], *, now: datetime, privacy: Privacy) -> int:
        if not searches:
            return 0
        stamp = now_us(now)
        return await self._db.tx(lambda conn: _count(conn, searches, stamp, privacy))

    async def forget_seen(self, before: datetime) -> int:
        return await self._db.execute("DELETE FROM ws_seen WHERE at < ?", now_us(before))

    async def forget_clients(self, before_day: int) -> int:
        n = await self._db.execute("DELETE FROM ws_clients WHERE day < ?", before_day)
        return n + await self._db.execute("DELETE FROM ws_day_keys WHERE day < ?", before_day)

    async def day_key(self, day: int) -> bytes:
        await self._db.execute(
            "INSERT INTO ws_day_keys (day, key) VALUES (?, ?) ON CONFLICT (day) DO NOTHING",
            day,
            secrets.token_bytes(DAY_KEY_BYTES).hex(),
        )
        row = await self._db.fetchone("SELECT key FROM ws_day_keys WHERE day = ?", day)
        assert row is not None  # inserted above, or by whoever came first
        return bytes.fromhex(row[0])

    async def lemma_tally(
        self, lemmas: Sequence[str], first: int, last: int, *, threshold: int
    ) -> list[TallyRow] | None:
        key = set_key(lemmas)
        kept = await self._db.fetchone("SELECT value FROM ws_meta WHERE name = 'threshold'")
        if kept is None or int(kept[0]) != threshold:
            return None
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
        self, selections: Sequence[Selection], qids: Sequence[int], first: int, last: int, *, threshold: int
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
            f"SELECT c.month, c.region, c.device, sum({published_sql('c')}) FROM ws_counts c"
            f" WHERE c.qid IN ({' UNION '.join(parts)}) AND c.month BETWEEN ? AND ? AND {shown_sql('c', threshold)}"
            " GROUP BY c.month, c.region, c.device",
            *params,
            first,
            last,
        )
        return _tally_rows(rows)

    async def query_totals(self, qids: Sequence[int], first: int, last: int, *, threshold: int) -> dict[int, int]:
        rows = await self._db.fetch(
            f"SELECT c.qid, sum({published_sql('c')}) FROM ws_counts c WHERE c.qid = ANY(?::bigint[])"
            f" AND c.month BETWEEN ? AND ? AND {shown_sql('c', threshold)} GROUP BY c.qid",
            list(qids),
            first,
            last,
        )
        return {int(r[0]): int(r[1]) for r in rows}

    async def host_queries(
        self, origin: str, first: int, last: int, *, limit: int, threshold: int
    ) -> list[tuple[str, int]]:
        rows = await self._db.fetch(
            f"SELECT q.query, sum({published_sql('h')}) AS n FROM ws_hosts h JOIN ws_queries q ON q.qid = h.qid"
            f" WHERE h.host = ? AND h.month BETWEEN ? AND ? AND {shown_sql('h', threshold)}"
            " GROUP BY q.query ORDER BY n DESC, q.query LIMIT ?",
            origin,
            first,
            last,
            limit,
        )
        return [(r[0], int(r[1])) for r in rows]
