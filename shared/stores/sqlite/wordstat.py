"""SQLite query-statistics store (docs/architecture.md sections 3 and 4, "wordstat"; contract: ``wordstat.py``).

A batch of searches is one write-lock hold: the event ids go in with one
statement (the few already seen, a redelivery, are found with one read per
chunk), new queries are inserted and their ids read back per chunk, with their
index entries, and the counters are upserted, each table with one statement of
rows summed in Python and passed as one JSON array (``_bulk``: the writer
thread does not take the GIL back per row). Every counter table is
``WITHOUT ROWID``, clustered on its key, so a read of one lemma's or one
query's counts is a single range of one b-tree.

Selections compile to joins over ``ws_terms``, whose key ``(lemma, content, qid)``
lets a phrase read only the short queries of a lemma. The joins start from the
required word with the fewest index entries (counted up to a cap, then the
fewest searches: ``sql/wordstat.py``, ``postings_sql``), since each
next word is an index probe per row of the first. The most searched queries
of one common word (a frequency's similar queries) are read the other way:
``ws_queries`` from the most searched down, each probed for the word, which
stops after the few hundred it needs instead of sorting tens of thousands.
"""

from __future__ import annotations

import math
import secrets
import sqlite3
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import datetime

import orjson

from shared.stores.codec import now_us
from shared.stores.sql.wordstat import candidates_sql, order_groups, postings_sql, weights_sql
from shared.stores.sql.wordstat_privacy import published_sql, rebuild_sql, shown_sql
from shared.stores.sqlite.db import LONG_BATCH, SqliteDb
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

__all__ = ["SqliteWordstatStore"]

_SEEN = "INSERT INTO ws_seen (event_id, at) VALUES (?, ?) ON CONFLICT (event_id) DO NOTHING"
#: a whole batch's ids in one statement (``_bulk``)
_SEEN_ALL = (
    "INSERT INTO ws_seen (event_id, at) SELECT value, ? FROM json_each(?) WHERE true ON CONFLICT (event_id) DO NOTHING"
)
#: query -> id remembered per store (an id never changes once given): most batches read no id at all
_QID_CACHE = 200_000
#: rows per IN (...) list (SQLite allows 32,766 variables; smaller lists keep plans cached)
_CHUNK = 500


def _chunks(items: Sequence[str]) -> list[Sequence[str]]:
    return [items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK)]


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _fresh(conn: sqlite3.Connection, batch: dict[str, CountedSearch], stamp: int) -> list[CountedSearch]:
    """Record the batch's event ids; the searches whose id was new."""
    # the common case, no redelivery: every id goes in and the change count says so, one statement
    conn.execute("SAVEPOINT ws_seen")
    before = conn.total_changes
    conn.execute(_SEEN_ALL, (stamp, orjson.dumps(list(batch)).decode()))
    if conn.total_changes - before == len(batch):
        conn.execute("RELEASE ws_seen")
        return list(batch.values())
    conn.execute("ROLLBACK TO ws_seen")
    conn.execute("RELEASE ws_seen")
    seen: set[str] = set()
    for chunk in _chunks(list(batch)):
        sql = f"SELECT event_id FROM ws_seen WHERE event_id IN ({_marks(len(chunk))})"
        seen.update(r[0] for r in conn.execute(sql, chunk))
    fresh = [s for i, s in batch.items() if i not in seen]
    conn.executemany(_SEEN, [(s.event_id, stamp) for s in fresh])
    return fresh


def _clients(conn: sqlite3.Connection, fresh: list[CountedSearch]) -> list[CountedSearch]:
    """Record the batch's client keys; the searches to count (each client's first of a query and day)."""
    firsts = first_per_client(fresh)
    if not firsts:
        return fresh
    keys = [list(k) for k in firsts]
    insert = (
        "INSERT INTO ws_clients (day, client) SELECT value ->> 0, value ->> 1 FROM json_each(?) WHERE true"
        " ON CONFLICT (day, client) DO NOTHING"
    )
    conn.execute("SAVEPOINT ws_clients")
    before = conn.total_changes
    conn.execute(insert, (orjson.dumps(keys).decode(),))
    if conn.total_changes - before == len(keys):  # the common case: no client searched its query twice
        conn.execute("RELEASE ws_clients")
        return once_per_client(fresh, firsts, firsts)
    conn.execute("ROLLBACK TO ws_clients")
    conn.execute("RELEASE ws_clients")
    known = conn.execute(
        "SELECT json_group_array(json_array(c.day, c.client)) FROM json_each(?) AS k"
        " JOIN ws_clients c ON c.day = k.value ->> 0 AND c.client = k.value ->> 1",
        (orjson.dumps(keys).decode(),),
    ).fetchone()[0]
    seen = {(int(d), str(c)) for d, c in orjson.loads(known)}
    new = [k for k in firsts if k not in seen]
    conn.execute(insert, (orjson.dumps([list(k) for k in new]).decode(),))
    return once_per_client(fresh, firsts, new)


def _privacy(conn: sqlite3.Connection, threshold: int) -> None:
    """Make the word counters sums for ``threshold`` if they are kept for another (``rebuild_sql``)."""
    row = conn.execute("SELECT value FROM ws_meta WHERE name = 'threshold'").fetchone()
    if row is None or int(row[0]) != threshold:
        for statement in rebuild_sql(threshold):
            conn.execute(statement)


def _kept_for(conn: sqlite3.Connection, threshold: int) -> bool:
    row = conn.execute("SELECT value FROM ws_meta WHERE name = 'threshold'").fetchone()
    return row is not None and int(row[0]) == threshold


def _count(
    conn: sqlite3.Connection,
    searches: Sequence[CountedSearch],
    stamp: int,
    known: Mapping[str, int],
    privacy: Privacy,
) -> tuple[int, dict[str, int]]:
    """Count the new searches of a batch: (how many, the ids of the queries it read or made)."""
    _privacy(conn, privacy.threshold)
    fresh = _fresh(conn, {s.event_id: s for s in searches}, stamp)  # a redelivery inside one batch counts once
    fresh = _clients(conn, fresh) if fresh else fresh
    if not fresh:
        return 0, {}
    queries = {s.query: s for s in fresh}
    qids: dict[str, int] = {q: known[q] for q in queries if q in known}
    names = [q for q in queries if q not in qids]
    for chunk in _chunks(names):
        qids.update(conn.execute(f"SELECT query, qid FROM ws_queries WHERE query IN ({_marks(len(chunk))})", chunk))
    new = [q for q in names if q not in qids]
    if new:
        # the new queries in one statement, then their ids in one read per chunk
        conn.executemany(
            "INSERT INTO ws_queries (query, lemmas, content, total) VALUES (?, ?, ?, 0) ON CONFLICT (query) DO NOTHING",
            [(q, queries[q].lemmas, queries[q].content) for q in new],
        )
        for chunk in _chunks(new):
            qids.update(conn.execute(f"SELECT query, qid FROM ws_queries WHERE query IN ({_marks(len(chunk))})", chunk))
        terms = sorted(
            (entry, queries[q].content, qids[q]) for q in new for entry in index_entries(queries[q].lemmas, q)
        )
        _bulk(conn, "INSERT OR IGNORE INTO ws_terms (lemma, content, qid)", 3, terms)
    agg = aggregate(fresh, qids, privacy, _lemma_sets(conn, queries, privacy.threshold))
    # what each touched cell held before the batch (one JSON value back: no row by row through Python)
    before = conn.execute(
        "SELECT json_group_array(json_array(c.qid, c.month, c.region, c.device, c.n, c.hide, c.lift))"
        " FROM json_each(?) AS b JOIN ws_counts c ON c.qid = b.value ->> 0 AND c.month = b.value ->> 1"
        " AND c.region = b.value ->> 2 AND c.device = b.value ->> 3",
        (orjson.dumps(agg.counts).decode(),),
    ).fetchone()[0]
    held = {(r[0], r[1], r[2], r[3]): (r[4], r[5], r[6]) for r in orjson.loads(before)}
    _bulk(
        conn,
        "INSERT INTO ws_counts (qid, month, region, device, n, hide, lift)",
        7,
        agg.counts,
        " ON CONFLICT (qid, month, region, device) DO UPDATE SET n = n + excluded.n",
    )
    changes: list[Change] = []
    for qid, month, region, device, n, hide, lift in agg.counts:
        old, hide, lift = held.get((qid, month, region, device), (0, hide, lift))
        changes.append((qid, month, region, device, old, old + n, hide, lift))
    lemmas, totals = visible_changes(changes, agg.keys_of, privacy.threshold)
    conn.execute(
        "UPDATE ws_queries SET total = total + v.value ->> 1"
        " FROM json_each(?) AS v WHERE ws_queries.qid = v.value ->> 0",
        (orjson.dumps(totals).decode(),),
    )
    _bulk(
        conn,
        "INSERT INTO ws_lemma_counts (lemma, month, region, device, n)",
        5,
        lemmas,
        " ON CONFLICT (lemma, month, region, device) DO UPDATE SET n = n + excluded.n",
    )
    _bulk(
        conn,
        "INSERT INTO ws_hosts (host, month, qid, n, hide, lift)",
        6,
        agg.hosts,
        " ON CONFLICT (host, month, qid) DO UPDATE SET n = n + excluded.n",
    )
    return len(fresh), qids


def _lemma_sets(conn: sqlite3.Connection, queries: Mapping[str, CountedSearch], threshold: int) -> dict[str, list[str]]:
    """The registered lemma sets of the batch's lemmas (lemma -> set keys), registering the sets of its
    words first (``_register``): read in the batch's transaction, so no batch misses a set."""
    keys = sorted({k for s in queries.values() for k in word_sets(s.lemmas)})
    if keys:
        payload = orjson.dumps(keys).decode()
        known = {
            r[0]
            for r in conn.execute("SELECT key FROM ws_unions WHERE key IN (SELECT value FROM json_each(?))", (payload,))
        }
        if new := [k for k in keys if k not in known]:
            _register(conn, new, threshold)
    lemmas = sorted({lemma for s in queries.values() for lemma in s.lemma_set or distinct_lemmas(s.lemmas)})
    sets: dict[str, list[str]] = {}
    members = "SELECT lemma, key FROM ws_union_members WHERE lemma IN (SELECT value FROM json_each(?))"
    for lemma, key in conn.execute(members, (orjson.dumps(lemmas).decode(),)):
        sets.setdefault(lemma, []).append(key)
    return sets


def _register(conn: sqlite3.Connection, keys: Sequence[str], threshold: int) -> None:
    """Register new lemma sets, their counters filled with the published searches counted before this batch
    (each search once per set: a query with both lemmas is one query)."""
    members = sorted((lemma, key) for key in keys for lemma in key.split("|"))
    _bulk(conn, "INSERT INTO ws_unions (key)", 1, [(k,) for k in keys], " ON CONFLICT DO NOTHING")
    _bulk(conn, "INSERT INTO ws_union_members (lemma, key)", 2, members, " ON CONFLICT DO NOTHING")
    conn.execute(
        "INSERT INTO ws_lemma_counts (lemma, month, region, device, n)"
        f" SELECT u.key, c.month, c.region, c.device, sum({published_sql('c')})"
        " FROM (SELECT DISTINCT m.value ->> 1 AS key, t.qid FROM json_each(?) AS m"
        "       JOIN ws_terms t ON t.lemma = m.value ->> 0) AS u"
        f" JOIN ws_counts c ON c.qid = u.qid WHERE {shown_sql('c', threshold)}"
        " GROUP BY u.key, c.month, c.region, c.device"
        " ON CONFLICT (lemma, month, region, device) DO UPDATE SET n = n + excluded.n",
        (orjson.dumps(members).decode(),),
    )


def _bulk(conn: sqlite3.Connection, insert: str, width: int, rows: Sequence[Sequence[object]], tail: str = "") -> None:
    """``insert`` every row in one statement, the rows as one JSON array (``json_each``).

    Not ``executemany``: that binds each row in Python, taking the GIL back once per row, and
    on the writer thread, while the event loop is busy, each take waits for the loop's time
    slice -- a 20,000-search batch took seconds of wall time for 0.3 s of work. One statement
    runs in SQLite with the GIL released throughout. (``WHERE true``: SQLite's parser needs it
    before an upsert's ``ON CONFLICT`` after a ``SELECT``.)"""
    if not rows:
        return
    columns = ", ".join(f"value ->> {i}" for i in range(width))
    conn.execute(f"{insert} SELECT {columns} FROM json_each(?) WHERE true{tail}", (orjson.dumps(rows).decode(),))


def _in_list(column: str, values: Sequence[str]) -> tuple[str, list[object]]:
    return f"{column} IN ({_marks(len(values))})", list(values)


def _candidates(conn: sqlite3.Connection, sel: Selection) -> tuple[str, list[object]]:
    """SQL selecting the qids of ``sel``, the rarest word first, and its parameters."""
    groups = list(sel.required)
    if len(groups) > 1:
        sql, p = postings_sql(groups, _in_list)
        postings = [int(n) for _, n in sorted(conn.execute(sql, p))]
        tie = weights_sql(groups, postings, _in_list)
        weights: dict[str, int] = dict(conn.execute(*tie)) if tie else {}
        groups = order_groups(groups, weights, postings)
    return candidates_sql(groups, sel, _in_list)


#: the most rows a top-down read is for (a frequency's similar queries; not a check's thousands)
_TOP_DOWN_LIMIT = 1000
#: how many more queries than expected a top-down read may look at before it gives up (the word's
#: queries may be rarer among the most searched ones than among all)
_TOP_DOWN_MARGIN = 10
#: a word's queries are counted up to this many times the break-even number
_COUNT_UP_TO = 10


def _top_down_scan(conn: sqlite3.Connection, sel: Selection, limit: int) -> int | None:
    """How many of the most searched queries to look at for ``limit`` of ``sel``'s, or None when joining
    from the word's own queries is cheaper.

    Only for one required word (two common words may seldom meet: no bound would hold). Joining reads
    and sorts each of the word's N queries; looking from the top down probes about ``limit * all / N``
    of them: cheaper once N passes ``sqrt(limit * all)``."""
    if len(sel.required) != 1:
        return None
    everything = conn.execute("SELECT max(qid) FROM ws_queries").fetchone()[0] or 0
    cut = int(math.sqrt(limit * everything)) + 1
    cond, p = _in_list("lemma", sel.required[0])
    # counted up to a bound: past it the word is common enough that the scan is short anyway
    sql = f"SELECT count(*) FROM (SELECT 1 FROM ws_terms WHERE {cond} LIMIT {_COUNT_UP_TO * cut})"
    n = conn.execute(sql, p).fetchone()[0]
    return None if n < cut else _TOP_DOWN_MARGIN * limit * everything // n


def _top_down(sel: Selection, scan: int) -> tuple[str, list[object]]:
    """The most searched queries of a one-word selection, looked for among the ``scan`` most searched
    queries (``ws_queries_total``), each probed for the word (``ws_terms_qid``)."""
    content = " AND t.content <= ?" if sel.max_content is not None else ""
    content += " AND t.content >= ?" if sel.min_content is not None else ""
    cond, params = _in_list("t.lemma", sel.required[0])
    conds = [f"EXISTS (SELECT 1 FROM ws_terms t WHERE t.qid = q.qid AND {cond}{content})"]
    if sel.max_content is not None:
        params.append(sel.max_content)
    if sel.min_content is not None:
        params.append(sel.min_content)
    if sel.minus:
        cond, p = _in_list("m.lemma", sel.minus)
        conds.append(f"NOT EXISTS (SELECT 1 FROM ws_terms m WHERE m.qid = q.qid AND {cond})")
        params.extend(p)
    # the bound is a total, not a row count: the read walks the index in order and stops at LIMIT
    bound = f"(SELECT total FROM ws_queries INDEXED BY ws_queries_total ORDER BY total DESC LIMIT 1 OFFSET {int(scan)})"
    sql = (
        "SELECT q.qid, q.query, q.lemmas, q.total FROM ws_queries q INDEXED BY ws_queries_total"
        f" WHERE q.total >= coalesce({bound}, 0) AND {' AND '.join(conds)} ORDER BY q.total DESC, q.query LIMIT ?"
    )
    return sql, params


def _tally_rows(rows: Sequence[tuple[int, str, str, int]]) -> list[TallyRow]:
    return [TallyRow(month=r[0], region=r[1], device=r[2], n=int(r[3])) for r in rows]


class SqliteWordstatStore:
    def __init__(self, db: SqliteDb) -> None:
        self._db = db
        self._qids: OrderedDict[str, int] = OrderedDict()

    async def count(self, searches: Sequence[CountedSearch], *, now: datetime, privacy: Privacy) -> int:
        if not searches:
            return 0
        stamp = now_us(now)
        known = self._qids
        n, qids = await self._db.write(
            lambda conn: _count(conn, searches, stamp, known, privacy), long=len(searches) > LONG_BATCH
        )
        # remembered only now that the batch is committed: a rolled-back insert gave no id
        for q, qid in qids.items():
            known[q] = qid
            known.move_to_end(q)
        while len(known) > _QID_CACHE:
            known.popitem(last=False)
        return n

    async def forget_seen(self, before: datetime) -> int:
        stamp = now_us(before)
        return await self._db.write(
            lambda conn: conn.execute("DELETE FROM ws_seen WHERE at < ?", (stamp,)).rowcount, long=True
        )

    async def forget_clients(self, before_day: int) -> int:
        def run(conn: sqlite3.Connection) -> int:
            n = conn.execute("DELETE FROM ws_clients WHERE day < ?", (before_day,)).rowcount
            return n + conn.execute("DELETE FROM ws_day_keys WHERE day < ?", (before_day,)).rowcount

        return await self._db.write(run, long=True)

    async def day_key(self, day: int) -> bytes:
        fresh = secrets.token_bytes(DAY_KEY_BYTES).hex()

        def run(conn: sqlite3.Connection) -> str:
            conn.execute("INSERT INTO ws_day_keys (day, key) VALUES (?, ?) ON CONFLICT (day) DO NOTHING", (day, fresh))
            return str(conn.execute("SELECT key FROM ws_day_keys WHERE day = ?", (day,)).fetchone()[0])

        return bytes.fromhex(await self._db.write(run))

    async def lemma_tally(
        self, lemmas: Sequence[str], first: int, last: int, *, threshold: int
    ) -> list[TallyRow] | None:
        key = set_key(lemmas)

        def run(conn: sqlite3.Connection) -> list[tuple[int, str, str, int]] | None:
            if not _kept_for(conn, threshold):
                return None
            if "|" in key and conn.execute("SELECT 1 FROM ws_unions WHERE key = ?", (key,)).fetchone() is None:
                return None
            sql = "SELECT month, region, device, n FROM ws_lemma_counts WHERE lemma = ? AND month BETWEEN ? AND ?"
            return conn.execute(sql, (key, first, last)).fetchall()

        rows = await self._db.read(run)
        return None if rows is None else _tally_rows(rows)

    async def select(self, selection: Selection, *, limit: int) -> list[QueryRow]:
        def run(conn: sqlite3.Connection) -> list[QueryRow]:
            scan = _top_down_scan(conn, selection, limit) if limit <= _TOP_DOWN_LIMIT else None
            if scan is not None:
                sql, params = _top_down(selection, scan)
                found = [QueryRow(*r) for r in conn.execute(sql, (*params, limit))]
                if len(found) == limit:
                    return found
                # fewer among the most searched than expected: from the word's own queries after all
            cand, params = _candidates(conn, selection)
            sql = (
                f"SELECT q.qid, q.query, q.lemmas, q.total FROM ({cand}) c JOIN ws_queries q ON q.qid = c.qid"
                " ORDER BY q.total DESC, q.query LIMIT ?"
            )
            return [QueryRow(*r) for r in conn.execute(sql, (*params, limit))]

        return await self._db.read(run)

    async def tally(
        self, selections: Sequence[Selection], qids: Sequence[int], first: int, last: int, *, threshold: int
    ) -> list[TallyRow]:
        def run(conn: sqlite3.Connection) -> list[tuple[int, str, str, int]]:
            parts: list[str] = []
            params: list[object] = []
            for sel in selections:
                cand, p = _candidates(conn, sel)
                parts.append(cand)
                params.extend(p)
            if qids:
                parts.append("SELECT value FROM json_each(?)")
                params.append(orjson.dumps(list(qids)).decode())
            sql = (
                f"SELECT c.month, c.region, c.device, sum({published_sql('c')}) FROM ws_counts c"
                f" WHERE c.qid IN ({' UNION '.join(parts)}) AND c.month BETWEEN ? AND ? AND {shown_sql('c', threshold)}"
                " GROUP BY c.month, c.region, c.device"
            )
            return conn.execute(sql, (*params, first, last)).fetchall()

        if not selections and not qids:
            return []
        return _tally_rows(await self._db.read(run))

    async def query_totals(self, qids: Sequence[int], first: int, last: int, *, threshold: int) -> dict[int, int]:
        sql = (
            f"SELECT c.qid, sum({published_sql('c')}) FROM ws_counts c WHERE c.qid IN (SELECT value FROM json_each(?))"
            f" AND c.month BETWEEN ? AND ? AND {shown_sql('c', threshold)} GROUP BY c.qid"
        )
        payload = orjson.dumps(list(qids)).decode()
        rows = await self._db.read(lambda conn: conn.execute(sql, (payload, first, last)).fetchall())
        return {int(r[0]): int(r[1]) for r in rows}

    async def host_queries(
        self, origin: str, first: int, last: int, *, limit: int, threshold: int
    ) -> list[tuple[str, int]]:
        sql = (
            f"SELECT q.query, sum({published_sql('h')}) AS n FROM ws_hosts h JOIN ws_queries q ON q.qid = h.qid"
            f" WHERE h.host = ? AND h.month BETWEEN ? AND ? AND {shown_sql('h', threshold)}"
            " GROUP BY q.query ORDER BY n DESC, q.query LIMIT ?"
        )
        rows = await self._db.read(lambda conn: conn.execute(sql, (origin, first, last, limit)).fetchall())
        return [(r[0], int(r[1])) for r in rows]
