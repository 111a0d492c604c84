"""The best pages of a query of words and prefixes without scoring every match, for both engines
(docs/architecture.md s.3).

Why: scoring a match costs about a microsecond on SQLite (FTS5's ``bm25()``)
and more on PostgreSQL (its row read back), and a word on half of 100,000 pages
is tens of milliseconds of it for 20 results. The walk reads the impact index
instead (``search_impacts.py``: each term's pages from the best bound down).

It is Fagin's *threshold algorithm*: read each term's entries from the top in
growing chunks, score every page seen exactly — the formula of FTS5's bm25
(``k1 = 1.2, b = 0.75``, its IDF and average length) times the freshness, what
the full ranking computes — and stop once the ``limit + 1``-th best score is
above what any unseen page can reach: the sum over the phrases of ``IDF × the
bound at the current entry`` (a phrase read from several lists, a prefix's
terms, takes the sum of theirs: ``w`` is subadditive), times ``max(1, avgdl /
A0)`` (a page's ``w`` grows at most by that factor when the average length
moves past ``A0``). Pages written after the ranking instant (news whose
freshness was taken later, so the bound does not hold for them) are scored one
by one. The answer is the one the full ranking gives (the contract tests
compare them); the walk gives up (None: the caller ranks in full) past
``MAX_SEEN`` pages or ``MAX_LATE`` late ones.

A query group is one or more **phrases** (``Phrase``), any of which it matches,
each scored as bm25 scores a phrase of its MATCH expression: a word's lemmas
(``shared/search/tokens.py``: "стали" is "стать" or "сталь"), or a prefix. The
engines say what a phrase's lists are and how many pages it is on.

The walk is written *sans I/O*: ``walk`` is a generator that yields what it
needs read (``Rows``, ``KeyRows``, ``Docs``, ``Texts``, ``Late``) and is sent
the answer; ``drive`` runs it on a synchronous reader (SQLite, on its reader
thread), ``drive_async`` on an async one (PostgreSQL).
"""

from __future__ import annotations

import heapq
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from shared.search.request import SearchRequest
from shared.stores.codec import to_us
from shared.stores.sql.search_impacts import (
    BOUND_MAX,
    INDEX_RANKING,
    MAX_PAGE_ID,
    REFERENCE_AVGDL,
    STEP,
    TFB_MAX,
    TFT_MAX,
    freshness,
    w,
)

__all__ = [
    "MAX_LATE",
    "MIN_DF",
    "Doc",
    "Docs",
    "KeyRows",
    "Late",
    "Phrase",
    "Read",
    "Rows",
    "Texts",
    "drive",
    "drive_async",
    "walk",
    "worth_a_walk",
]

#: queries expected to match fewer pages than this are ranked in full: scoring all costs less than a walk
MIN_DF = 1000
#: pages a walk may score before it gives up for the full ranking
MAX_SEEN = 4000
#: late pages (written after the ranking instant) scored one by one at most
MAX_LATE = 200
#: a list is read in a round when it weighs at least this share of the heaviest list in the threshold
_READ_SHARE = 0.25
_FIRST_CHUNK = 48
_MAX_CHUNK = 2048


def _row_tf(row: int) -> tuple[int, int] | None:
    """A row's (title, body) counts of its term, or None when one is at its bits' cap (the text says more)."""
    t, b = (row >> 42) & TFT_MAX, (row >> 32) & TFB_MAX
    return None if t >= TFT_MAX or b >= TFB_MAX else (t, b)


def _row_bound(row: int) -> float:
    """The most a list's rows from ``row`` on add to a score: its impact's high bits, rounded up a step."""
    return ((row >> 47) + 2) * STEP


@dataclass(frozen=True, slots=True)
class Phrase:
    """What bm25 scores as one phrase of the query."""

    #: its key: the IDF and the counts of a page are kept under it
    match: str
    #: the impact lists whose pages include every page it matches
    lists: tuple[str, ...]
    #: what is counted in a page's stream: a term, a prefix (``prefix``), or the first terms of a phrase's
    #: words, separated by spaces
    token: str
    prefix: bool = False
    #: a row of its one list carries its own counts (a word; a prefix with a list of its own; a pair)
    exact: bool = False
    #: what ``count`` looks for, made once (a walk counts a phrase in hundreds of streams)
    _needle: str = field(init=False, repr=False, compare=False)
    #: the term twice in a row, or a phrase (whose instances may overlap): counted one by one
    _twice: str | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        needle = f" {self.token}" if self.prefix else f" {self.token} "
        object.__setattr__(self, "_needle", needle)
        object.__setattr__(self, "_twice", None if " " in self.token else f" {self.token}{needle}")

    def count(self, text: str) -> int:
        """Its instances in ``text`` (terms between single spaces, and one at each end)."""
        needle = self._needle
        n = text.count(needle)  # in C, no list of words made; a prefix: every term that starts with it
        if n and not self.prefix and (self._twice is None or self._twice in text):
            # the term twice in a row (or a phrase's instances overlapping, "a a" in "a a a", as FTS5 counts
            # them): they share a space, and str.count finds one; count them one by one
            n, i = 0, text.find(needle)
            while i >= 0:
                n += 1
                i = text.find(needle, i + 1)
        return n


@dataclass(frozen=True, slots=True)
class Doc:
    kind: str
    published: int | None
    host: str
    length: int


@dataclass(frozen=True, slots=True)
class Rows:
    """For each ``(list, below, limit)``: the keys of the list below ``below``, highest first, at most
    ``limit`` (``dict[str, list[int]]``; the lists of a round are read together: one statement on
    PostgreSQL)."""

    lists: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True, slots=True)
class KeyRows:
    """For each ``(list, lo, hi)``: the keys of the list in ``lo <= k < hi``, any order (``dict[str, list[int]]``)."""

    lists: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True, slots=True)
class Docs:
    """``(dict[int, Doc], dict[int, (title, text)])`` of the pages still indexed: their fields and, with
    ``texts``, their streams as ``Texts`` gives them (one statement on PostgreSQL)."""

    ids: tuple[int, ...]
    texts: bool = False


@dataclass(frozen=True, slots=True)
class Texts:
    """``dict[int, tuple[str, str]]``: the pages' title and text streams, a space before and after each."""

    ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Late:
    """The ids of news pages whose freshness was taken after ``now`` (their write), at most ``limit``."""

    now: int
    limit: int


Read = Rows | KeyRows | Docs | Texts | Late


def worth_a_walk(group_docs: Sequence[int], n_rows: int, min_df: int | None = None) -> bool:
    """Whether the pages that have every group, were the groups independent, are many enough for a walk
    (``group_docs``: each group's pages): on few, scoring them all costs less than a walk, which reads
    mostly pages that lack one of the groups."""
    share = 1.0
    for n in group_docs:
        share *= n / n_rows
    return share * n_rows >= (MIN_DF if min_df is None else min_df)


def walk(
    request: SearchRequest,
    groups: Sequence[Sequence[Phrase]],
    excluded: set[str],
    idf: dict[str, float],
    avgdl: float,
) -> Generator[Read, Any, list[tuple[int, float]] | None]:
    """``(page id, score)`` of the best ``limit + 1`` matches, best first; None: rank in full."""
    return _Walk(request, groups, excluded, idf, avgdl).run()


def drive(gen: Generator[Read, Any, Any], read: Callable[[Read], Any]) -> Any:
    """Run a walk on a synchronous reader."""
    try:
        ask = next(gen)
        while True:
            ask = gen.send(read(ask))
    except StopIteration as stop:
        return stop.value


async def drive_async(gen: Generator[Read, Any, Any], read: Callable[[Read], Awaitable[Any]]) -> Any:
    """Run a walk on an async reader."""
    try:
        ask = next(gen)
        while True:
            ask = gen.send(await read(ask))
    except StopIteration as stop:
        return stop.value


class _Walk:
    def __init__(
        self,
        request: SearchRequest,
        groups: Sequence[Sequence[Phrase]],
        excluded: set[str],
        idf: dict[str, float],
        avgdl: float,
    ) -> None:
        self.request, self.groups, self.excluded, self.idf, self.avgdl = request, groups, excluded, idf, avgdl
        self.now = request.now_us
        self.k = request.limit + 1
        self.seen: set[int] = set()
        #: the k best so far as (score, -id): the heap's smallest is the k-th best
        self.heap: list[tuple[float, int]] = []
        #: what bm25 scores: every phrase of every group (the MATCH expression's, repeats included)
        self.phrases = [p for alternatives in groups for p in alternatives]
        self.distinct = list({p.match: p for p in self.phrases}.values())
        #: one page's counts read from its row bits (a single word, uncapped): no need to read its text
        self.single = len(self.distinct) == 1 and self.phrases[0].exact and not excluded
        self.factor = max(1.0, avgdl / REFERENCE_AVGDL)

    def run(self) -> Generator[Read, Any, list[tuple[int, float]] | None]:
        late = yield Late(self.now, MAX_LATE + 1)
        if len(late) > MAX_LATE:
            return None
        yield from self._score(dict.fromkeys(late))
        lists = list(dict.fromkeys(x for p in self.phrases for x in p.lists))
        upper = dict.fromkeys(lists, (1 << 63) - 1)  # the next row of each list is below this key
        bound = dict.fromkeys(lists, BOUND_MAX)
        done: set[str] = set()
        chunk = _FIRST_CHUNK
        while True:
            # read the lists that weigh most in the threshold: a common word's (small IDF) barely moves it,
            # and its pages mostly lack the other words (any schedule keeps the bound true)
            weight = dict.fromkeys(lists, 0.0)
            for p in self.distinct:
                for x in p.lists:
                    weight[x] = max(weight[x], self.idf[p.match] * bound[x])
            heaviest = max(weight.values())
            now = [x for x in lists if x not in done and weight[x] >= _READ_SHARE * heaviest]
            yield from self._read(now, upper, bound, done, chunk)
            if len(self.seen) > MAX_SEEN:
                return None
            threshold = self.factor * sum(self.idf[p.match] * sum(bound[x] for x in p.lists) for p in self.phrases)
            # a page matches only with every group: once the lists of one group's phrases are read whole,
            # every match was seen
            whole = any(all(x in done for p in alternatives for x in p.lists) for alternatives in self.groups)
            if whole or (len(self.heap) >= self.k and self.heap[0][0] > threshold):
                break
            chunk = min(chunk * 2, _MAX_CHUNK)
        return [(-neg, score) for score, neg in sorted(self.heap, reverse=True)]

    def _read(
        self, names: list[str], upper: dict[str, int], bound: dict[str, float], done: set[str], chunk: int
    ) -> Generator[Read, Any, None]:
        """Read the next ``chunk`` rows of each list of ``names`` (and the rest of each one's last key), score
        their pages."""
        got: dict[str, list[int]] = yield Rows(tuple((x, upper[x], chunk) for x in names))
        found: dict[int, int | None] = {}
        #: each new page's rows in the lists just read (the page is scored once, when first seen)
        keys: dict[int, dict[str, int]] = {}
        rests = []
        for name in names:
            rows = got.get(name, [])
            if len(rows) < chunk:
                done.add(name)
                bound[name] = 0.0
            if not rows:
                continue
            last = rows[-1]
            upper[name] = last & ~MAX_PAGE_ID  # every row of the key and tf bits of the last one is read
            if name not in done:
                bound[name] = _row_bound(last)
            rests.append((name, last & ~MAX_PAGE_ID, last))
            self._found(name, rows, found, keys)
        if rests:
            # rows sharing a list's last high bits may lie beyond its chunk: read them too
            more: dict[str, list[int]] = yield KeyRows(tuple(rests))
            for name, rows in more.items():
                self._found(name, rows, found, keys)
        yield from self._score(found, (keys, bound, done))

    def _found(self, name: str, rows: list[int], found: dict[int, int | None], keys: dict[int, dict[str, int]]) -> None:
        for k in rows:
            i = k & MAX_PAGE_ID
            if i not in self.seen:
                found[i] = k
                keys.setdefault(i, {})[name] = k

    def _score(
        self,
        found: dict[int, int | None],
        lists: tuple[dict[int, dict[str, int]], dict[str, float], set[str]] | None = None,
    ) -> Generator[Read, Any, None]:
        """Score the pages ``found`` (id → their impact row, when read from a single word's list; with
        ``lists``: each page's rows in the lists just read, the lists' bounds and the lists read whole).

        A page of a query of several phrases is scored from its rows' bits when they carry every count the
        score needs (each phrase's list read whole or holding the page, counts under the bits' caps) and the
        query excludes nothing; else its text is read, unless the bound of its score — the counts it has,
        each other phrase at the bound of the page's row in its lists or, unseen there, of the lists' next
        rows (as the threshold bounds a page seen nowhere) — is below the ``limit + 1``-th best score: it
        could not enter the results."""
        ids = tuple(i for i in found if i not in self.seen)
        if not ids:
            return
        self.seen.update(ids)
        lazy = None if self.single else lists
        got: tuple[dict[int, Doc], dict[int, tuple[str, str]]] = yield Docs(ids, texts=not self.single and lazy is None)
        docs, texts = got
        f = self.request.filters
        since = to_us(f.since) if f.since else None
        until = to_us(f.until) if f.until else None
        later: list[tuple[int, Doc, float]] = []
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
            counts = self._row_counts(found[i])
            if counts is False:
                continue
            if counts is None and lazy is not None:
                keys, bound, done = lazy
                known = self._known(keys[i], doc, bound, done)
                if known is None:
                    continue  # a group none of whose phrases the page has
                counts, most = known
                if counts is None:
                    later.append((i, doc, most))
                    continue
            if counts is None:
                text = texts.get(i)
                if text is None:  # a late page, or a count past the row's bits
                    text = (yield Texts((i,))).get(i)
                counts = self._counts(text)
            if counts is not None:
                self._push(i, doc, counts)
        if later:
            floor = self.heap[0][0] if len(self.heap) >= self.k else None
            # a bound within rounding of the floor is read: only a page clearly below it is passed over
            wanted = tuple(i for i, _, most in later if floor is None or most * (1 + 1e-9) >= floor)
            texts = (yield Texts(wanted)) if wanted else {}
            for i, doc, _ in later:
                if i in texts:
                    counts = self._counts(texts[i])
                    if counts is not None:
                        self._push(i, doc, counts)

    def _known(
        self, keys: dict[str, int], doc: Doc, bound: dict[str, float], done: set[str]
    ) -> tuple[dict[str, tuple[int, int]] | None, float] | None:
        """A page's counts from its rows when they give every one (else None) and the bound of its score;
        None when they show that the page lacks every phrase of a group."""
        counts: dict[str, tuple[int, int]] = {}
        rest: dict[str, float] = {}
        for p in self.distinct:
            c: tuple[int, int] | None = None
            if p.exact:
                x = p.lists[0]
                k = keys.get(x)
                if k is not None:
                    c = _row_tf(k)
                elif x in done:
                    c = (0, 0)
            if c is None:
                rest[p.match] = sum(_row_bound(keys[x]) if x in keys else bound[x] for x in p.lists)
            else:
                counts[p.match] = c
        for alternatives in self.groups:
            if all(p.match in counts and not sum(counts[p.match]) for p in alternatives):
                return None
        if not rest and not self.excluded:
            return counts, 0.0
        weight = INDEX_RANKING.title_weight
        have = 0.0
        for p in self.phrases:
            c = counts.get(p.match)
            if c is not None and c[0] + c[1]:
                have += self.idf[p.match] * w(weight * c[0] + c[1], doc.length, self.avgdl)
        most = have * freshness(INDEX_RANKING, doc.kind, doc.published, self.now)
        most += self.factor * sum(self.idf[p.match] * rest[p.match] for p in self.phrases if p.match in rest)
        return None, most

    def _push(self, i: int, doc: Doc, counts: dict[str, tuple[int, int]]) -> None:
        """Score a matching page from its counts and keep it if it is among the best ``limit + 1``."""
        weight = INDEX_RANKING.title_weight
        score = 0.0
        for p in self.phrases:
            t, b = counts[p.match]
            if t + b:  # a phrase the page lacks (another of its word's lemmas) adds nothing, as in bm25
                score += self.idf[p.match] * w(weight * t + b, doc.length, self.avgdl)
        score = score * freshness(INDEX_RANKING, doc.kind, doc.published, self.now)
        item = (score, -i)
        if len(self.heap) < self.k:
            heapq.heappush(self.heap, item)
        elif item > self.heap[0]:
            heapq.heapreplace(self.heap, item)

    def _row_counts(self, row: int | None) -> dict[str, tuple[int, int]] | Literal[False] | None:
        """A single word's counts from its row's bits; None when they must be read from the page, False
        when the row says the page lacks the word."""
        if not self.single or row is None:
            return None
        tf = _row_tf(row)
        if tf is None:
            return None
        return {self.phrases[0].match: tf} if sum(tf) else False

    def _counts(self, text: tuple[str, str] | None) -> dict[str, tuple[int, int]] | None:
        """Each phrase's (title, body) counts in a page; None when the page does not match."""
        if text is None:
            return None
        title, body = text
        if any(f" {s} " in title or f" {s} " in body for s in self.excluded):
            return None
        counts = {p.match: (p.count(title), p.count(body)) for p in self.distinct}
        for alternatives in self.groups:  # every group needs one of its phrases
            if not any(sum(counts[p.match]) for p in alternatives):
                return None
        return counts
