"""The query-statistics store's contract (docs/architecture.md sections 3 and 4, "wordstat").

Counted searches, aggregated so a frequency never reads raw events:

* ``ws_queries`` — one row per distinct normalized query: its words' lemmas
  (aligned with its words), its number of content words and its all-time count;
* ``ws_terms`` — the inverted index: every lemma of every word, and every form
  (as ``=form``, for ``!form`` and ``+в``) → the queries that have it, with
  their number of content words (a phrase reads only the short queries);
* ``ws_counts`` — searches per query × month × region × device;
* ``ws_lemma_counts`` — searches per lemma × month × region × device (a
  single-word base frequency, the commonest question, is one indexed read);
  also per **lemma set**, keyed ``"a|b"`` (``set_key``): the searches with any
  lemma of a homonym ("это" is это|этот, "стали" стать|сталь), each once --
  a sum of the two lemmas' counters would count "это этот" twice, and without
  these a common homonym's frequency summed the counts of its every query;
* ``ws_unions`` — the lemma sets counted so: every set of two or more lemmas that
  a word of a counted search had. A set is registered by the batch that first
  meets it, which fills its counters from ``ws_counts`` (the searches counted
  before) in the same transaction; ``ws_union_members`` maps each lemma to
  the sets it is in, which a batch reads to count each search under them;
* ``ws_hosts`` — per origin (``scheme://host[:port]``, what a right covers) × query × month, how often
  the origin's pages were shown;
* ``ws_seen`` — the event ids counted, so a redelivered event counts once
  (kept ``wordstat.dedupe_window_s``, longer than ``search.queries`` keeps events);
* ``ws_clients`` — the client keys of the last two days (``shared/wordstat/clients.py``):
  a search counts once per client, query and day; ``ws_day_keys`` — each day's random key.

What is published (privacy, ``shared/wordstat/privacy.py``): each ``ws_counts`` and ``ws_hosts`` row
is a cell with a secret offset and its lift (``hide``, ``lift``); a read sums only the
cells published under its threshold, and ``ws_lemma_counts`` and ``ws_queries.total``
hold the sums of published cells (for the threshold recorded in ``ws_meta``).

Writes are batches (``count``): the events a loop turn brought, deduplicated by
id and by client, aggregated in Python, then upserted with ``n = n + excluded.n`` in
one transaction, every table's keys sorted so concurrent batches never deadlock; what
each touched cell publishes before and after the batch gives what the word counters
and the query totals gain (``shared.wordstat.privacy.visible_changes``).

Reads take a ``Selection`` — which queries a frequency covers, in the index's
terms: for each required word the lemmas any of which a query must have, the
lemmas none of which it may have, and for a phrase the most content words it
may have. Operators the index cannot decide (a form with ``!``, word order, a
phrase's exact cover) are checked in Python on the selection's rows
(``shared.wordstat.frequency``). Engines: ``sqlite/wordstat.py``, ``postgres/wordstat.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from shared.wordstat.privacy import Privacy

__all__ = [
    "DAY_KEY_BYTES",
    "FORM_MARK",
    "Aggregate",
    "CountedSearch",
    "Privacy",
    "QueryRow",
    "Selection",
    "TallyRow",
    "WordstatStore",
    "aggregate",
    "distinct_lemmas",
    "first_per_client",
    "index_entries",
    "month_of",
    "once_per_client",
    "set_key",
    "word_sets",
]


#: random bytes of a day's key for client keys (``day_key``; as many as HMAC-SHA256 gives)
DAY_KEY_BYTES = 32
#: an index entry for a word's form rather than its lemma (``=купить``); no lemma starts with it
FORM_MARK = "="


def index_entries(lemmas: str, query: str) -> set[str]:
    """The index entries of a counted query: each word's lemmas and ``=form``."""
    out = {FORM_MARK + form for form in query.split()}
    for word in lemmas.split(" "):
        out.update(word.split("|"))
    return out


def set_key(lemmas: Sequence[str]) -> str:
    """The ``ws_lemma_counts`` key of a lemma set: its lemmas sorted, joined by ``|`` (no lemma holds one:
    lemmas are words); one lemma is its own key."""
    return "|".join(sorted(set(lemmas)))


def word_sets(lemmas: str) -> set[str]:
    """The lemma sets of a counted query's words that have two or more lemmas, as ``set_key``s."""
    return {set_key(word.split("|")) for word in lemmas.split(" ") if "|" in word}


def distinct_lemmas(lemmas: str) -> tuple[str, ...]:
    """Each lemma of a query's ``lemmas`` once, in order."""
    return tuple(dict.fromkeys(lemma for word in lemmas.split(" ") for lemma in word.split("|")))


def month_of(ts: datetime) -> int:
    """The month bucket of a time: ``YYYYMM`` (UTC)."""
    return ts.year * 100 + ts.month


@dataclass(slots=True)  # one per counted search: not frozen (a frozen __init__ costs ~3x)
class CountedSearch:
    """One search to count, analyzed (``shared.wordstat.lemmas``)."""

    event_id: str
    query: str
    #: per word of ``query``, its lemmas joined by ``|``; words joined by spaces
    lemmas: str
    #: words of ``query`` that are not function words
    content: int
    month: int
    region: str
    device: str
    #: the origins of the pages the search showed (``ws_hosts``' key)
    hosts: tuple[str, ...] = ()
    #: every lemma of the query once (a search "мост мосты" is one search with "мост"); derived from
    #: ``lemmas`` when empty
    lemma_set: tuple[str, ...] = ()
    #: the searcher's key for this query and day (``shared/wordstat/clients.py``); "" counts every search
    client: str = ""
    #: the search's UTC day, ``YYYYMMDD`` (a client counts once a day)
    day: int = 0


@dataclass(frozen=True, slots=True)
class Selection:
    """Which counted queries a frequency looks at (see the module docstring)."""

    #: for each required word, the lemmas any one of which a query must have
    required: tuple[tuple[str, ...], ...]
    #: a query with any of these lemmas is left out
    minus: tuple[str, ...] = ()
    #: a phrase: at most this many content words
    max_content: int | None = None
    #: a phrase: at least this many content words (its words that only a content word can match)
    min_content: int | None = None


@dataclass(frozen=True, slots=True)
class QueryRow:
    qid: int
    query: str
    lemmas: str
    total: int


@dataclass(frozen=True, slots=True)
class TallyRow:
    month: int
    region: str
    device: str
    n: int


class WordstatStore(Protocol):
    """Reads count only the cells published under their ``threshold`` (``shared/wordstat/privacy.py``)."""

    async def count(self, searches: Sequence[CountedSearch], *, now: datetime, privacy: Privacy) -> int:
        """Count the searches whose event id is new and whose client has not searched their query that
        day; returns how many were counted. New cells draw their offsets from ``privacy``."""
        ...

    async def forget_seen(self, before: datetime) -> int:
        """Drop event ids recorded before ``before``; returns how many."""
        ...

    async def forget_clients(self, before_day: int) -> int:
        """Drop the client keys and day keys of days before ``before_day`` (``YYYYMMDD``); returns how many."""
        ...

    async def day_key(self, day: int) -> bytes:
        """The random key of ``day``'s client keys, made by the first caller (every frontend shares it)."""
        ...

    async def lemma_tally(
        self, lemmas: Sequence[str], first: int, last: int, *, threshold: int
    ) -> list[TallyRow] | None:
        """Published searches with any of ``lemmas`` (each once) in months ``first``..``last`` (a one-word
        base frequency); None for two or more lemmas that are not a registered set (``ws_unions``), and
        when the counters are not kept for ``threshold`` (the caller sums the cells instead)."""
        ...

    async def select(self, selection: Selection, *, limit: int) -> list[QueryRow]:
        """Up to ``limit`` queries of the selection, the most searched (all time) first."""
        ...

    async def tally(
        self, selections: Sequence[Selection], qids: Sequence[int], first: int, last: int, *, threshold: int
    ) -> list[TallyRow]:
        """Published searches of the queries in any of ``selections`` or in ``qids`` (each counted once), in
        months ``first``..``last``."""
        ...

    async def query_totals(self, qids: Sequence[int], first: int, last: int, *, threshold: int) -> dict[int, int]:
        """Published searches of each query in months ``first``..``last`` (a query with none is left out)."""
        ...

    async def host_queries(
        self, origin: str, first: int, last: int, *, limit: int, threshold: int
    ) -> list[tuple[str, int]]:
        """The queries that showed ``origin``'s pages (``scheme://host[:port]``) in months ``first``..``last``
        in published cells, most often first."""
        ...


@dataclass(slots=True)
class Aggregate:
    """A batch of new searches summed per cell, keys sorted (no deadlocks); a new cell's offset and lift."""

    #: (qid, month, region, device, searches, offset, lift)
    counts: list[tuple[int, int, str, str, int, int, int]]
    #: (host, month, qid, impressions, offset, lift)
    hosts: list[tuple[str, int, int, int, int, int]]
    #: qid -> the lemmas and lemma sets its searches are counted under (``visible_changes``)
    keys_of: dict[int, tuple[str, ...]]


def aggregate(
    searches: Sequence[CountedSearch],
    qids: dict[str, int],
    privacy: Privacy,
    sets: Mapping[str, Sequence[str]] | None = None,
) -> Aggregate:
    """Sum ``searches`` (already deduplicated) by cell; ``qids`` maps each query to its id, ``sets`` each
    lemma to the registered lemma sets it is in (a search counts once under each set it touches)."""
    sets = sets or {}
    # searches repeat (a Zipf stream): group them first, in C (Counter), then expand each distinct
    # group once -- a batch of 20,000 searches has a few thousand groups
    groups = Counter((s.query, s.month, s.region, s.device) for s in searches)
    lift = privacy.lift
    counts = sorted(
        (qids[query], month, region, device, n, privacy.offset((query, month, region, device)), lift)
        for (query, month, region, device), n in groups.items()
    )
    keys_of: dict[int, tuple[str, ...]] = {}
    for s in searches:
        qid = qids[s.query]
        if qid not in keys_of:
            lemma_set = s.lemma_set or distinct_lemmas(s.lemmas)
            in_sets = sorted({k for lemma in lemma_set for k in sets.get(lemma, ())})
            keys_of[qid] = (*lemma_set, *in_sets)
    shown = Counter((host, s.month, s.query) for s in searches for host in s.hosts)
    hosts = sorted(
        (host, month, qids[query], n, privacy.offset((host, month, query)), lift)
        for (host, month, query), n in shown.items()
    )
    return Aggregate(counts=counts, hosts=hosts, keys_of=keys_of)


def first_per_client(searches: Sequence[CountedSearch]) -> dict[tuple[int, str], CountedSearch]:
    """The first search of each (day, client key) of a batch; a search with no client key is in none."""
    out: dict[tuple[int, str], CountedSearch] = {}
    for s in searches:
        if s.client:
            out.setdefault((s.day, s.client), s)
    return out


def once_per_client(
    searches: Sequence[CountedSearch], firsts: Mapping[tuple[int, str], CountedSearch], new: Iterable[tuple[int, str]]
) -> list[CountedSearch]:
    """The searches to count: each with no client key, and the first of each (day, client) not seen before."""
    keep = {id(firsts[k]) for k in new}
    return [s for s in searches if not s.client or id(s) in keep]
