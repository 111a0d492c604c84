"""A frequency with Wordstat's operators, over the counted searches (docs/architecture.md section 3, "wordstat").

``frequency(store, query, ...)`` turns each variant of a parsed query
(``operators.py``) into a ``Selection`` the store's index can answer, and:

* a variant the index decides exactly (words in any form, ``!form``, ``+в``,
  ``-word``: the index holds every lemma and every form) is counted in SQL
  without reading its queries;
* a variant with operators the index cannot decide (``[...]``, ``"..."``, two
  words that could be one) reads the selection's queries, the most searched
  first, and keeps those that ``operators.variant_matches``; past
  ``VERIFY_LIMIT`` of them the frequency is a lower bound and says so;
* a lone word reads its lemma's counters, or its lemma set's for a homonym
  (``ws_unions``; a set no counted word had reads the queries): one indexed read;
  with ``-words`` too, less the searches that have both (few, where the
  word's own queries are many: the tail of common words was summing them all);
* an intersection of words that meet in fewer than ``WHOLE_LIMIT`` queries has
  them read once, for its count (by their ids) and its similar queries alike.

The answer holds the searches in the period (the last ``period_months`` months,
this one included), the history by month, the split by region and device over
the period, and the most searched queries it covers. Privacy
(``wordstat.privacy_threshold``; why it holds: ``cubes/wordstat/README.md``): the
store counts only the published cells (``shared/wordstat/privacy.py``), so
every sum here is 0 or at least the threshold, and the same cells make a total,
its months and its splits; a 0 is shown as "< N", a query with no published cell
is never listed, and a number is shown rounded (``rounded``: three significant
digits, a multiple of the threshold below that), shares made of rounded numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from shared.search.stopwords import STOP_WORDS, is_stop_word
from shared.stores.wordstat import FORM_MARK, QueryRow, Selection, TallyRow, WordstatStore, month_of
from shared.wordstat.lemmas import Word, analyze_word
from shared.wordstat.operators import Ordered, Variant, WordOp, WordstatQuery, variant_matches

__all__ = [
    "VERIFY_LIMIT",
    "WHOLE_LIMIT",
    "Count",
    "Frequency",
    "Share",
    "frequency",
    "frequency_json",
    "months_back",
    "rounded",
    "words_of",
]

#: queries read to check operators the index cannot decide; past this the frequency is a lower bound
VERIFY_LIMIT = 20_000
#: similar queries listed at most
SIMILAR = 20
#: an intersection of fewer queries than this is read whole (``_listed``)
WHOLE_LIMIT = 2000


def rounded(n: int, threshold: int) -> int:
    """``n`` as it is shown: three significant digits, and a multiple of ``threshold`` below that (half up),
    never under the threshold -- a live count that grows by one search shows no change most of the time."""
    step = max(threshold, int(10 ** max(0, len(str(n)) - 3)))
    return max(threshold, (n + step // 2) // step * step)


@dataclass(frozen=True, slots=True)
class Count:
    """A count as it may be shown: rounded at or above the threshold, "< N" below it."""

    #: the sum of published cells (never shown as it is)
    n: int
    threshold: int

    @property
    def visible(self) -> int | None:
        """The number shown (``rounded``), or None when it is under the threshold (never shown)."""
        return rounded(self.n, self.threshold) if self.n >= self.threshold else None

    @property
    def display(self) -> str:
        shown = self.visible
        return f"{shown:,}".replace(",", "\u202f") if shown is not None else f"< {self.threshold}"


@dataclass(frozen=True, slots=True)
class Share:
    key: str
    count: Count
    #: share of the period's searches, None when the count is under the threshold
    share: float | None


@dataclass(frozen=True, slots=True)
class Frequency:
    query: str
    total: Count
    #: (YYYYMM, count) oldest first, one entry per month of the history
    months: tuple[tuple[int, Count], ...]
    regions: tuple[Share, ...]
    devices: tuple[Share, ...]
    similar: tuple[tuple[str, Count], ...]
    #: a variant had more queries to check than VERIFY_LIMIT: the counts are lower bounds
    approximate: bool = False


def months_back(month: int, n: int) -> int:
    """The month ``n`` months before ``month`` (YYYYMM)."""
    index = (month // 100) * 12 + (month % 100 - 1) - n
    return (index // 12) * 100 + index % 12 + 1


def words_of(row: QueryRow) -> tuple[Word, ...]:
    """A stored query's words, as ``operators.matches`` needs them (no analysis again)."""
    return _words(row.query, row.lemmas)


#: stored queries whose words stay in memory: a common word's frequency checks the same thousands
#: of queries each time it is asked (a stored query's words and lemmas never change)
_CACHE_ROWS = 200_000


@lru_cache(maxsize=_CACHE_ROWS)
def _words(query: str, lemmas_text: str) -> tuple[Word, ...]:
    forms = query.split()
    lemmas = lemmas_text.split(" ")
    return tuple(_word(f, lemmas[i] if i < len(lemmas) else f) for i, f in enumerate(forms))


@lru_cache(maxsize=_CACHE_ROWS)
def _word(form: str, lemmas: str) -> Word:
    """One word of a stored query; words repeat across queries far more than queries do (a phrase's
    check reads thousands of queries of one word), and a frozen ``Word`` costs ~1 us to make."""
    return Word(form=form, lemmas=tuple(lemmas.split("|")), stop=is_stop_word(form))


def _alternatives(op: WordOp) -> tuple[str, ...]:
    """What the index must hold for ``op``: one of its lemmas, or its form (``=form``) for ``!`` and ``+``."""
    if op.exact or (op.fixed and op.word.stop):
        return (FORM_MARK + op.word.form,)
    return op.word.lemmas


@lru_cache(maxsize=1)
def _stop_lemmas() -> frozenset[str]:
    """Every lemma of a function word: a word with none of them can only match a content word."""
    return frozenset(lemma for w in STOP_WORDS for lemma in analyze_word(w).lemmas)


def _content_only(op: WordOp) -> bool:
    """Whether ``op`` can only match a content word of a counted query (not "в", nor "чем", whose
    lemma что is a function word's)."""
    if op.exact or (op.fixed and op.word.stop):
        return not is_stop_word(op.word.form)
    return not op.word.stop and _stop_lemmas().isdisjoint(op.word.lemmas)


def _selection(v: Variant) -> Selection:
    ops = v.required
    required = tuple(sorted({_alternatives(op) for op in ops}))
    minus = tuple(sorted({alt for m in v.minus for alt in _alternatives(m)}))
    if not v.phrase:
        return Selection(required=required, minus=minus)
    # a phrase's query has no content word but its words', and one for each that only a content word
    # matches: "карсаман карсаман" reads the two-word queries of карсаман, not the one-word ones too
    least = sum(1 for op in ops if _content_only(op))
    return Selection(required=required, minus=minus, max_content=len(ops), min_content=least or None)


def _empty(sel: Selection) -> bool:
    """Whether no query can be in ``sel``: a required word whose every lemma is excluded ("слон -слон")."""
    return any(set(group) <= set(sel.minus) for group in sel.required)


def _decided_by_index(v: Variant) -> bool:
    """Whether the index's answer for the variant's selection is exactly the variant's.

    Not for word order, nor for a phrase (its words must cover every content word, which
    the index narrows, by content-word count, but cannot decide), nor when two words could
    match one word of a query (a lemma in common: each needs a word of its own)."""
    if v.phrase or any(isinstance(i, Ordered) for i in v.items):
        return False
    seen: set[str] = set()
    for op in v.required:
        lemmas = set(op.word.lemmas)
        if seen & lemmas:
            return False
        seen |= lemmas
    return True


def _covers(wide: Selection, narrow: Selection) -> bool:
    """Whether every query of ``narrow`` is one of ``wide``'s: each word ``wide`` requires is required by
    ``narrow`` with no more alternatives, ``wide`` leaves out nothing ``narrow`` keeps, and no tighter bound."""
    words = all(any(set(n) <= set(w) for n in narrow.required) for w in wide.required)
    minus = set(wide.minus) <= set(narrow.minus)
    bound = wide.max_content is None or (narrow.max_content is not None and narrow.max_content <= wide.max_content)
    least = wide.min_content is None or (narrow.min_content is not None and narrow.min_content >= wide.min_content)
    return words and minus and bound and least


def _without_covered(sels: Sequence[Selection]) -> list[Selection]:
    """The selections less those another one covers (``(подряд|что) слон`` is ``слон``: ``что`` is a function
    word, and ``подряд слон`` is within ``слон``); of equal ones the first stays."""
    return [
        s
        for i, s in enumerate(sels)
        if not any(_covers(t, s) and (j < i or not _covers(s, t)) for j, t in enumerate(sels) if j != i)
    ]


async def _listed(store: WordstatStore, indexed: Sequence[Selection]) -> dict[Selection, list[QueryRow]] | None:
    """Every query of each selection when all are intersections of few queries, else None.

    Two common words may meet in few queries ("размер быть": 300 of 500,000); the count and the
    similar queries then come from this one read (a tally by their ids), not from the join twice.
    A selection of one word is left to its counters, and one of many queries to the joins."""
    if not indexed or any(len(sel.required) < 2 for sel in indexed):
        return None
    out: dict[Selection, list[QueryRow]] = {}
    for sel in indexed:
        found = await store.select(sel, limit=WHOLE_LIMIT)
        if len(found) >= WHOLE_LIMIT:
            return None
        out[sel] = found
    return out


def _less(rows: Sequence[TallyRow], minus: Sequence[TallyRow]) -> list[TallyRow]:
    """``rows`` less ``minus``, cell by cell (``minus`` counts a subset of the searches ``rows`` counts)."""
    out = {(r.month, r.region, r.device): r.n for r in rows}
    for r in minus:
        key = (r.month, r.region, r.device)
        out[key] = out.get(key, 0) - r.n
    return [TallyRow(month=k[0], region=k[1], device=k[2], n=n) for k, n in out.items() if n > 0]


def _shares(rows: Sequence[TallyRow], field: str, total: int, threshold: int) -> tuple[Share, ...]:
    """The period's searches by ``field``, each share made of the rounded numbers shown (an exact share of
    a rounded total would tell the exact count)."""
    sums: dict[str, int] = defaultdict(int)
    for r in rows:
        sums[getattr(r, field)] += r.n
    whole = Count(total, threshold).visible
    out = []
    for key, n in sums.items():
        count = Count(n, threshold)
        shown = count.visible
        out.append(Share(key, count, shown / whole if whole and shown is not None else None))
    return tuple(sorted(out, key=lambda s: (-s.count.n, s.key)))


async def frequency(
    store: WordstatStore,
    query: WordstatQuery,
    *,
    now: datetime,
    threshold: int,
    history_months: int = 24,
    period_months: int = 1,
    region: str | None = None,
    device: str | None = None,
) -> Frequency:
    """The frequency of ``query`` (see the module docstring); ``region`` / ``device`` narrow every count."""
    last = month_of(now)
    first = months_back(last, history_months - 1)
    period_first = months_back(last, max(1, min(period_months, history_months)) - 1)

    indexed: list[Selection] = []
    checked: dict[int, QueryRow] = {}
    approximate = False
    for v in query.variants:
        if not v.required:
            continue  # only function words (``в|слон``'s ``в``): like a query of them alone, it counts nothing
        sel = _selection(v)
        if _empty(sel):
            continue  # "слон -слон": it counts nothing, and its similar queries are none
        if _decided_by_index(v):
            indexed.append(sel)
            continue
        found = await store.select(sel, limit=VERIFY_LIMIT)
        # a lower bound only when a query left unread may count: the most searched come first, so past a
        # query with no published cell none does (the number of hidden queries would tell they exist:
        # an attacker could make queries, one search each, up to the limit and see one more flip it)
        approximate = approximate or (len(found) >= VERIFY_LIMIT and found[-1].total > 0)
        checked.update((r.qid, r) for r in found if variant_matches(v, words_of(r)))

    indexed = _without_covered(indexed)
    rows: list[TallyRow] | None = None
    if len(indexed) == 1 and not checked and len(indexed[0].required) == 1:
        sel = indexed[0]
        lemmas = sel.required[0]
        # forms have no counters; a homonym's lemmas (это|этот) have theirs once a word had them both
        if not lemmas[0].startswith(FORM_MARK):
            rows = await store.lemma_tally(lemmas, first, last, threshold=threshold)
        if rows is not None and sel.minus:  # ("слон -слон" is empty, above; "стали -сталь" keeps стать's)
            # a common word minus another: its counters less the searches that have both, which
            # are few -- not every query of the common word read and summed
            both = Selection(required=(lemmas, sel.minus))
            rows = _less(rows, await store.tally([both], [], first, last, threshold=threshold))
    # an intersection's queries are read once, for its count and its similar queries alike
    listed = await _listed(store, indexed) if rows is None else None
    if rows is None and listed is not None:
        qids = {q.qid for found in listed.values() for q in found} | set(checked)
        rows = await store.tally([], sorted(qids), first, last, threshold=threshold) if qids else []
    if rows is None:
        rows = (
            await store.tally(indexed, sorted(checked), first, last, threshold=threshold) if indexed or checked else []
        )
    rows = [r for r in rows if (region is None or r.region == region) and (device is None or r.device == device)]

    by_month: dict[int, int] = defaultdict(int)
    for r in rows:
        by_month[r.month] += r.n
    months = tuple(
        (m, Count(by_month.get(m, 0), threshold))
        for m in (months_back(last, k) for k in range(history_months - 1, -1, -1))
    )
    period = [r for r in rows if r.month >= period_first]
    total = sum(r.n for r in period)

    candidates: dict[int, QueryRow] = dict(checked)
    for sel in indexed:
        found = listed[sel] if listed is not None and sel in listed else await store.select(sel, limit=SIMILAR * 5)
        for q in found[: SIMILAR * 5]:
            candidates.setdefault(q.qid, q)
    top = sorted(candidates.values(), key=lambda q: (-q.total, q.query))[: SIMILAR * 5]
    in_period = await store.query_totals([q.qid for q in top], period_first, last, threshold=threshold) if top else {}
    similar = sorted(
        ((q.query, in_period.get(q.qid, 0)) for q in top if in_period.get(q.qid, 0) >= threshold),
        key=lambda qn: (-qn[1], qn[0]),
    )[:SIMILAR]
    return Frequency(
        query=query.text,
        total=Count(total, threshold),
        months=months,
        regions=_shares(period, "region", total, threshold),
        devices=_shares(period, "device", total, threshold),
        similar=tuple((q, Count(n, threshold)) for q, n in similar),
        approximate=approximate,
    )


def _count_json(c: Count) -> dict[str, object]:
    return {"count": c.visible, "display": c.display}


def frequency_json(f: Frequency, *, threshold: int, period_months: int) -> dict[str, object]:
    """The JSON form of a frequency (the API's answer); a count under the threshold is ``null``."""
    return {
        "query": f.query,
        "period_months": period_months,
        "privacy_threshold": threshold,
        "total": _count_json(f.total),
        "months": [{"month": f"{m // 100}-{m % 100:02d}", **_count_json(c)} for m, c in f.months],
        "regions": [{"region": s.key, **_count_json(s.count), "share": s.share} for s in f.regions],
        "devices": [{"device": s.key, **_count_json(s.count), "share": s.share} for s in f.devices],
        "similar": [{"query": q, **_count_json(c)} for q, c in f.similar],
        "approximate": f.approximate,
    }
