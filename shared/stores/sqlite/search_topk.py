"""SQLite search's fast path: the best pages of a query of plain words, without scoring every match
(docs/architecture.md s.3).

Why: FTS5's ``bm25()`` costs about a microsecond a matching row, and a word on
half of 100,000 pages is 60 ms of it for 20 results. So beside ``search_fts``
the page store keeps an **impact index**, ``search_imp``: for each indexed page
one row per distinct *impact key* among its stems, holding those stems, under

    rowid = key << 47 | tf_title << 42 | tf_body << 32 | page rowid

``key`` (16 bits) is the page's score for that word alone divided by the word's
IDF, as an upper bound: ``w = f·(k1+1) / (f + k1·(1 - b + b·D / A0))`` with
``f = title_weight·tf_title + tf_body``, ``D`` the page's tokens and ``A0`` a
reference average length, times the freshness the page had when it was written
(news only; a page's freshness only falls after that). Walking a word's rows
with ``ORDER BY rowid DESC`` walks its pages from the best bound down.

A search is Fagin's *threshold algorithm*: read each word's rows from the top
in growing chunks, score every page seen exactly — the formula of FTS5's bm25
(``k1 = 1.2, b = 0.75``, its IDF and average length) times the freshness, the
numbers the full SQL ranking computes — and stop once the ``limit + 1``-th best
score is above what any unseen page can reach: the sum over the words of
``IDF × the bound at the current row``, times ``max(1, avgdl / A0)`` (a page's
``w`` grows at most by that factor when the average length moves past ``A0``).
Pages written after the ranking instant (news whose freshness was taken later,
so the bound does not hold for them) are scored one by one. A prefix walks a
prefix list (``search_groups.py``). The answer is the one the full ranking
gives (``tests/contract/test_search_topk_sqlite.py`` compares them); the fast
path declines — and the caller ranks in SQL — for phrases, cursor pages,
rankings other than the index's, queries on few pages (scoring every match is
cheaper there), prefixes of one or two letters, long prefixes that match under
a quarter of the list they walk, and walks that grow past ``_MAX_SEEN`` pages.

Why phrases decline: a phrase's IDF is the count of pages that have it, which
FTS5 finds only by matching the phrase — most of what the SQL ranking costs —
and on the bench's mix a phrase is on a small share of its rarest word's pages,
so a walk of that word's list scores many pages for each one that matches (it
took 14.6 ms CPU a phrase against 9.5 ms in SQL). A walk would need the phrase's
bound and count without a match: positions in the impact index.

Document frequencies cost a count each; they are cached for a minute, as in
the PostgreSQL engine (a few new pages barely move an IDF).
"""

from __future__ import annotations

import heapq
import math
import sqlite3
import time
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shared.search.ranking import Ranking
from shared.search.request import SearchRequest
from shared.search.tokens import SEPARATOR
from shared.stores.codec import to_us
from shared.stores.sqlite.search_groups import PREFIX_LENGTHS, Group, group_of, prefix_token

__all__ = ["TopK", "impact_rows", "read_averages"]

#: FTS5's bm25 constants (fts5_aux.c)
K1, B = 1.2, 0.75
#: the ranking the keys are made for; a request ranked otherwise takes the SQL path
INDEX_RANKING = Ranking()
#: the reference average page length (tokens) of the keys
REFERENCE_AVGDL = 300.0
_KEY_BITS = 16
_KEY_MAX = (1 << _KEY_BITS) - 1
#: the largest bound a key stands for: a saturated word, fresh news
_BOUND_MAX = (K1 + 1.0) * (1.0 + INDEX_RANKING.freshness_boost)
_STEP = _BOUND_MAX / (1 << _KEY_BITS)
_TFT_MAX, _TFB_MAX = 31, 1023
_ID_BITS = 32
MAX_PAGE_ID = (1 << _ID_BITS) - 1
#: queries expected to match fewer pages than this are ranked in SQL: scoring all costs less than a walk
MIN_DF = 1000
#: pages a walk may score before it gives up for the SQL ranking
_MAX_SEEN = 4000
#: late pages (written after the ranking instant) scored one by one at most
_MAX_LATE = 200
#: a list is read in a round when it weighs at least this share of the heaviest list in the threshold
_READ_SHARE = 0.25
_FIRST_CHUNK = 48
_MAX_CHUNK = 2048
_DF_TTL_S = 60.0
#: a stem's document frequency: each page has the stem in exactly one of its impact rows
_COUNT = "SELECT count(*) FROM search_imp WHERE search_imp MATCH ?"
#: a long prefix's: the pages FTS5's bm25 counts as its hits (a page may hold it in several impact rows)
_COUNT_FTS = "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?"
#: the least share of its walked list's pages a long prefix must match (``best``)
_MIN_SHARE = 0.25
#: a prefix's or a phrase's: the pages FTS5's bm25 counts as its hits (the impact index has no positions,
#: and a page's stems of one prefix may lie in several of its rows)
_COUNT_FTS = "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?"
_DF_MAX = 20_000


def _freshness(ranking: Ranking, kind: str, published: int | None, now: int) -> float:
    """``shared.stores.sql.search.freshness_sql`` in Python, the same operations in the same order."""
    if kind != "news":
        return 1.0
    pub = published or 0
    age = (now - pub) / 1000000.0 if now > pub else 0.0
    return 1.0 + ranking.freshness_boost * ranking.freshness_half_life_s / (ranking.freshness_half_life_s + age)


def _w(f: float, length: int, avgdl: float) -> float:
    # fts5Bm25Function: (aFreq * (k1 + 1.0)) / (aFreq + k1 * (1 - b + b * D / avgdl))
    return (f * (K1 + 1.0)) / (f + K1 * (1 - B + B * length / avgdl))


def impact_rows(
    title: Sequence[str], body: Sequence[str], kind: str, published: int | None, written: int
) -> list[tuple[int, str]]:
    """A page's impact rows without its rowid: ``(rowid high bits, tokens)``, one per distinct key; the
    tokens are its stems and its prefix tokens (``search_groups.prefix_token``)."""
    tt, tb = Counter(title), Counter(body)
    for counts in (tt, tb):  # the stream's separator (shared/search/tokens.py) is never searched
        counts.pop(SEPARATOR, None)
    # a prefix counts every occurrence of every stem that starts with it, as FTS5 counts a prefix query
    for stem in tt.keys() | tb.keys():
        t, b = tt.get(stem, 0), tb.get(stem, 0)
        for n in PREFIX_LENGTHS:
            if len(stem) >= n:
                token = prefix_token(stem[:n])
                if t:
                    tt[token] += t
                if b:
                    tb[token] += b
    length = len(title) + len(body)
    fresh = _freshness(INDEX_RANKING, kind, published, written)
    groups: dict[int, list[str]] = {}
    highs: dict[tuple[int, int], int] = {}  # most tokens share a few (title, text) counts: one bound each
    for token in tt.keys() | tb.keys():
        t, b = tt.get(token, 0), tb.get(token, 0)
        high = highs.get((t, b))
        if high is None:
            bound = _w(INDEX_RANKING.title_weight * t + b, length, REFERENCE_AVGDL) * fresh
            key = min(_KEY_MAX, int(bound / _STEP))
            high = highs[t, b] = key << 47 | min(t, _TFT_MAX) << 42 | min(b, _TFB_MAX) << 32
        groups.setdefault(high, []).append(token)
    return [(high, " ".join(sorted(tokens))) for high, tokens in sorted(groups.items())]


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """An SQLite varint at ``data[i]``: its value and the index after it."""
    value = 0
    for n in range(9):
        byte = data[i + n]
        if n == 8:
            return (value << 8) | byte, i + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, i + n + 1
    raise AssertionError("unreachable")


def read_averages(conn: sqlite3.Connection) -> tuple[int, int]:
    """FTS5's row count and total tokens of ``search_fts`` (its averages record, what bm25 reads)."""
    row = conn.execute("SELECT block FROM search_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    data: bytes = row[0]
    rows, i = _varint(data, 0)
    tokens = 0
    while i < len(data):
        n, i = _varint(data, i)
        tokens += n
    return rows, tokens


@dataclass(slots=True)
class _Doc:
    kind: str
    published: int | None
    host: str
    length: int


class _Frequencies:
    """Document frequencies (by MATCH text and the count that gives them), cached for ``_DF_TTL_S``
    (used on the reader thread only)."""

    def __init__(self) -> None:
        self._cache: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def get(self, conn: sqlite3.Connection, count: str, match: str) -> int:
        now = time.monotonic()
        key = f"{count is _COUNT}{match}"
        hit = self._cache.get(key)
        if hit is not None and now - hit[0] <= _DF_TTL_S:
            self._cache.move_to_end(key)
            return hit[1]
        n = int(conn.execute(count, (match,)).fetchone()[0])
        self._cache[key] = (now, n)
        self._cache.move_to_end(key)
        while len(self._cache) > _DF_MAX:
            self._cache.popitem(last=False)
        return n


def _quoted(stem: str) -> str:
    # stems are runs of letters and digits: quoted, a stem is one literal token, never FTS5 syntax
    return '"' + stem + '"'


def _chunks(ids: Sequence[int], size: int = 500) -> Iterable[Sequence[int]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


class TopK:
    """The threshold-algorithm walk over ``search_imp`` (one per search index; reader thread only)."""

    def __init__(self) -> None:
        self._df = _Frequencies()

    def best(self, conn: sqlite3.Connection, request: SearchRequest) -> list[tuple[int, float]] | None:
        """``(page rowid, score)`` of the best ``limit + 1`` matches, best first; None: rank in SQL."""
        q = request.query
        if request.cursor is not None or request.ranking != INDEX_RANKING or q.empty:
            return None
        n_rows, n_tokens = read_averages(conn)
        if n_rows <= 0:
            return None
        top_id = conn.execute("SELECT max(id) FROM search_docs").fetchone()[0]
        if top_id is None or top_id > MAX_PAGE_ID:
            return None
        groups: list[list[Group]] = []
        df: dict[str, int] = {}
        group_df: list[int] = []
        for terms in q.groups:
            alternatives = group_of(terms)
            if alternatives is None:
                return None
            for group in alternatives:
                if group.exact:
                    df[group.match] = self._df.get(conn, _COUNT, _quoted(group.list))
                else:
                    # a long prefix walks a list of more pages than it matches; worth it only when most of
                    # them match (each one read is scored on its stems)
                    df[group.match] = self._df.get(conn, _COUNT_FTS, group.match)
                    if df[group.match] < _MIN_SHARE * self._df.get(conn, _COUNT, _quoted(group.list)):
                        return None
            groups.append(alternatives)
            group_df.append(min(n_rows, sum(df[g.match] for g in alternatives)))
        # the pages that have every group, were the groups independent: few, and scoring them all in SQL is
        # cheaper than a walk, which reads mostly pages that lack one of the groups
        if math.prod(n / n_rows for n in group_df) * n_rows < MIN_DF:
            return None
        avgdl = n_tokens / n_rows
        # fts5Bm25GetData: log((nRow - nHit + 0.5) / (nHit + 0.5)), at least 1e-6
        idf = {m: max(1e-6, math.log((n_rows - n + 0.5) / (n + 0.5))) for m, n in df.items()}
        excluded = {x for t in q.excluded for x in t.lemmas or (t.stem,)}
        return _Walk(conn, request, groups, excluded, idf, avgdl).run()


class _Walk:
    def __init__(
        self,
        conn: sqlite3.Connection,
        request: SearchRequest,
        groups: list[list[Group]],
        excluded: set[str],
        idf: dict[str, float],
        avgdl: float,
    ) -> None:
        self.conn, self.request, self.groups, self.excluded, self.idf, self.avgdl = (
            conn,
            request,
            groups,
            excluded,
            idf,
            avgdl,
        )
        self.now = request.now_us
        self.k = request.limit + 1
        self.seen: set[int] = set()
        #: the k best so far as (score, -rowid): the heap's smallest is the k-th best
        self.heap: list[tuple[float, int]] = []
        #: what bm25 scores: every term of every group (the MATCH expression's phrases, repeats included)
        self.phrases = [g for alternatives in groups for g in alternatives]
        #: one page's counts read from its row bits (a single word, uncapped): no need to read its text
        self.single = len({g.match for g in self.phrases}) == 1 and self.phrases[0].exact and not excluded
        self.factor = max(1.0, avgdl / REFERENCE_AVGDL)
        self.distinct = list({g.match: g for g in self.phrases}.values())

    def run(self) -> list[tuple[int, float]] | None:
        late = self.conn.execute(
            "SELECT id FROM search_docs WHERE kind = 'news' AND ref_at > ? LIMIT ?", (self.now, _MAX_LATE + 1)
        ).fetchall()
        if len(late) > _MAX_LATE:
            return None
        self._score({r[0]: None for r in late})
        lists = list(dict.fromkeys(g.list for g in self.phrases))
        upper = dict.fromkeys(lists, (1 << 63) - 1)  # the next row of each list is below this rowid
        bound = dict.fromkeys(lists, _BOUND_MAX)
        done: set[str] = set()
        chunk = _FIRST_CHUNK
        while True:
            # read the lists that weigh most in the threshold: a common word's (small IDF) barely moves it,
            # and its pages mostly lack the other words (any schedule keeps the bound true)
            weight = dict.fromkeys(lists, 0.0)
            for g in self.distinct:
                weight[g.list] = max(weight[g.list], self.idf[g.match] * bound[g.list])
            heaviest = max(weight.values())
            for stem in lists:
                if stem in done or weight[stem] < _READ_SHARE * heaviest:
                    continue
                self._read(stem, upper, bound, done, chunk)
            if len(self.seen) > _MAX_SEEN:
                return None
            threshold = self.factor * sum(self.idf[g.match] * bound[g.list] for g in self.phrases)
            # a page matches only with every group: once the lists of one group's terms are read whole, every
            # match was seen
            whole = any(all(g.list in done for g in alternatives) for alternatives in self.groups)
            if whole or (len(self.heap) >= self.k and self.heap[0][0] > threshold):
                break
            chunk = min(chunk * 2, _MAX_CHUNK)
        ranked = sorted(self.heap, reverse=True)
        return [(-neg, score) for score, neg in ranked]

    def _read(self, stem: str, upper: dict[str, int], bound: dict[str, float], done: set[str], chunk: int) -> None:
        """Read the next ``chunk`` rows of ``stem``'s list (and the rest of the last row's key), score their pages."""
        rows = self.conn.execute(
            "SELECT rowid FROM search_imp WHERE search_imp MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?",
            (_quoted(stem), upper[stem], chunk),
        ).fetchall()
        if len(rows) < chunk:
            done.add(stem)
            bound[stem] = 0.0
        if not rows:
            return
        last = rows[-1][0]
        upper[stem] = last & ~MAX_PAGE_ID  # every row of the key and tf bits of the last one is read
        if stem not in done:
            bound[stem] = ((last >> 47) + 2) * _STEP
        self._score({r[0] & MAX_PAGE_ID: r[0] for r in rows if (r[0] & MAX_PAGE_ID) not in self.seen})
        # rows sharing the last row's high bits may lie beyond the chunk: read them too
        self._score(
            {
                r[0] & MAX_PAGE_ID: r[0]
                for r in self.conn.execute(
                    "SELECT rowid FROM search_imp WHERE search_imp MATCH ? AND rowid >= ? AND rowid < ?",
                    (_quoted(stem), last & ~MAX_PAGE_ID, last),
                )
                if (r[0] & MAX_PAGE_ID) not in self.seen
            }
        )

    def _score(self, found: dict[int, int | None]) -> None:
        """Score the pages ``found`` (rowid → their impact row, when read from a single word's list)."""
        ids = [i for i in found if i not in self.seen]
        if not ids:
            return
        self.seen.update(ids)
        docs = self._docs(ids)
        texts = {} if self.single else self._texts(ids)
        f = self.request.filters
        since = to_us(f.since) if f.since else None
        until = to_us(f.until) if f.until else None
        weight = INDEX_RANKING.title_weight
        for i in ids:
            doc = docs.get(i)
            if doc is None:
                continue
            if (f.host and doc.host != f.host) or (f.kind and doc.kind != f.kind.value):
                continue
            if (since is not None and (doc.published is None or doc.published < since)) or (
                until is not None and (doc.published is None or doc.published > until)
            ):
                continue
            counts = self._counts(i, found[i], texts)
            if counts is None:
                continue
            score = 0.0
            for g in self.phrases:
                t, b = counts[g.match]
                if t + b:  # a term the page lacks (another of its word's lemmas) adds nothing, as in bm25
                    score += self.idf[g.match] * _w(weight * t + b, doc.length, self.avgdl)
            score = score * _freshness(INDEX_RANKING, doc.kind, doc.published, self.now)
            item = (score, -i)
            if len(self.heap) < self.k:
                heapq.heappush(self.heap, item)
            elif item > self.heap[0]:
                heapq.heapreplace(self.heap, item)

    def _counts(self, i: int, row: int | None, texts: dict[int, tuple[str, str]]) -> dict[str, tuple[int, int]] | None:
        """Each group's (title, body) counts in page ``i``; None when the page does not match."""
        if self.single and row is not None:
            t, b = (row >> 42) & _TFT_MAX, (row >> 32) & _TFB_MAX
            if t < _TFT_MAX and b < _TFB_MAX:
                return {self.phrases[0].match: (t, b)} if t + b else None
        text = texts.get(i) or self._texts([i]).get(i)  # a late page, or a count past the row's bits
        if text is None:
            return None
        title, body = text
        if any(f" {s} " in title or f" {s} " in body for s in self.excluded):
            return None
        counts = {g.match: (g.count(title), g.count(body)) for g in self.distinct}
        for alternatives in self.groups:  # every group needs one of its terms
            if not any(sum(counts[g.match]) for g in alternatives):
                return None
        return counts

    def _docs(self, ids: Sequence[int]) -> dict[int, _Doc]:
        out: dict[int, _Doc] = {}
        for part in _chunks(ids):
            marks = ", ".join("?" * len(part))
            for i, kind, published, host, length in self.conn.execute(
                f"SELECT id, kind, published, host, length FROM search_docs WHERE id IN ({marks})", part
            ):
                out[i] = _Doc(kind, published, host, length)
        return out

    def _texts(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """The stems of pages' titles and texts, with a space before and after (``Group.count``)."""
        out: dict[int, tuple[str, str]] = {}
        for part in _chunks(ids):
            marks = ", ".join("?" * len(part))
            # the FTS5 table's own content (search_fts_content: c0 = title, c1 = body stems)
            for i, title, body in self.conn.execute(
                f"SELECT id, c0, c1 FROM search_fts_content WHERE id IN ({marks})", part
            ):
                out[i] = (f" {title or ''} ", f" {body or ''} ")
        return out
