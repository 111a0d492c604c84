"""The impact index's keys, the same on both engines (docs/architecture.md s.3; ``search_walk.py`` reads them).

For each indexed page and each of its terms, one entry under a 64-bit key

    key << 47 | tf_title << 42 | tf_body << 32 | page id

``key`` (16 bits) is the page's score for that term alone divided by the term's
IDF, as an upper bound: ``w = f·(k1+1) / (f + k1·(1 - b + b·D / A0))`` with
``f = title_weight·tf_title + tf_body``, ``D`` the page's tokens and ``A0`` a
reference average length, times the freshness the page had when it was written
(news only; a page's freshness only falls after that). Reading a term's entries
from the highest key down reads its pages from the best bound down.

The formula is FTS5's bm25 (``k1 = 1.2, b = 0.75``), which the SQLite engine
ranks by, times the freshness (``shared/search/ranking.py``): both engines rank
every match by it (``w`` here, ``freshness``), so the walk and a full ranking
agree to the last digit on either engine.

**Pairs.** Beside its terms, a page has an entry per distinct *pair*: two terms
next to each other in one of its streams (``pair_token``: ``PAIR``, the first,
``PAIR``, the second), counted as a two-word phrase's instances are counted
(FTS5's, PostgreSQL's ``<->``: every adjacent pair, overlapping ones included,
never across ``SEPARATOR``). So a phrase of two words is a list of its own, with
its exact counts and pages, walked as one word is; a longer phrase walks its
rarest pair's list (every page with the phrase has each of its pairs, as often
at least). Search engines index such shingles for the same reason
(Elasticsearch's ``index_phrases``); the price is about as many entries again
as a page has distinct terms.

SQLite keeps a page's entries grouped by key, one FTS5 row of terms each
(``impact_rows``: terms sharing a key share a row); PostgreSQL one row per
term and key (``postgres/search_topk.py``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

from shared.search.ranking import Ranking
from shared.search.tokens import SEPARATOR

__all__ = [
    "BOUND_MAX",
    "INDEX_RANKING",
    "K1",
    "MAX_PAGE_ID",
    "PAIR",
    "REFERENCE_AVGDL",
    "STEP",
    "TFB_MAX",
    "TFT_MAX",
    "B",
    "freshness",
    "idf",
    "impact_rows",
    "pair_token",
    "pairs_of",
    "w",
]

#: FTS5's bm25 constants (fts5_aux.c)
K1, B = 1.2, 0.75
#: the ranking the keys are made for; a request ranked otherwise is ranked in full
INDEX_RANKING = Ranking()
#: the reference average page length (tokens) of the keys
REFERENCE_AVGDL = 300.0
_KEY_BITS = 16
_KEY_MAX = (1 << _KEY_BITS) - 1
#: the largest bound a key stands for: a saturated word, fresh news
BOUND_MAX = (K1 + 1.0) * (1.0 + INDEX_RANKING.freshness_boost)
STEP = BOUND_MAX / (1 << _KEY_BITS)
TFT_MAX, TFB_MAX = 31, 1023
_ID_BITS = 32
MAX_PAGE_ID = (1 << _ID_BITS) - 1
#: what starts and joins a pair token: a private-use character, a token character to FTS5's unicode61
#: tokenizer and in no term (letters and digits); a pair sorts after every term, outside a prefix's range
PAIR = "\ue002"


def pair_token(first: str, second: str) -> str:
    """The impact index's token of two terms next to each other."""
    return PAIR + first + PAIR + second


def pairs_of(tokens: Sequence[str]) -> Counter[str]:
    """Each pair token of a stream and its instances (adjacent terms, never across ``SEPARATOR``)."""
    out: Counter[str] = Counter()
    for a, b in pairwise(tokens):
        if a != SEPARATOR and b != SEPARATOR:
            out[pair_token(a, b)] += 1
    return out


def freshness(ranking: Ranking, kind: str, published: int | None, now: int) -> float:
    """``shared.stores.sql.search.freshness_sql`` in Python, the same operations in the same order."""
    if kind != "news":
        return 1.0
    pub = published or 0
    age = (now - pub) / 1000000.0 if now > pub else 0.0
    return 1.0 + ranking.freshness_boost * ranking.freshness_half_life_s / (ranking.freshness_half_life_s + age)


def idf(n_rows: int, n_hits: int) -> float:
    """bm25's IDF of a phrase on ``n_hits`` of ``n_rows`` pages (fts5Bm25GetData: at least 1e-6); hits past the
    page count (a count newer than the pages') count as every page."""
    hits = min(n_hits, n_rows)
    return max(1e-6, math.log((n_rows - hits + 0.5) / (hits + 0.5)))


def w(f: float, length: int, avgdl: float) -> float:
    # fts5Bm25Function: (aFreq * (k1 + 1.0)) / (aFreq + k1 * (1 - b + b * D / avgdl))
    return (f * (K1 + 1.0)) / (f + K1 * (1 - B + B * length / avgdl))


def impact_rows(
    title: Sequence[str],
    body: Sequence[str],
    kind: str,
    published: int | None,
    written: int,
    prefixes: Sequence[int] = (),
    mark: str = "",
) -> list[tuple[int, str]]:
    """A page's entries without its id: ``(key high bits, its terms)``, one per distinct key: its terms and
    pairs (``pairs_of``). With ``prefixes``, a token per prefix of those lengths of each term too (``mark``
    then its letters), counted as FTS5 counts a prefix query's instances: every occurrence of every term
    that starts with it."""
    tt, tb = Counter(title), Counter(body)
    for counts in (tt, tb):  # the stream's separator (shared/search/tokens.py) is never searched
        counts.pop(SEPARATOR, None)
    pt, pb = pairs_of(title), pairs_of(body)
    for term in tt.keys() | tb.keys():
        t, b = tt.get(term, 0), tb.get(term, 0)
        for n in prefixes:
            if len(term) >= n:
                token = mark + term[:n]
                if t:
                    tt[token] += t
                if b:
                    tb[token] += b
    tt.update(pt)
    tb.update(pb)
    length = len(title) + len(body)
    fresh = freshness(INDEX_RANKING, kind, published, written)
    groups: dict[int, list[str]] = {}
    highs: dict[tuple[int, int], int] = {}  # most terms share a few (title, text) counts: one bound each
    for token in tt.keys() | tb.keys():
        t, b = tt.get(token, 0), tb.get(token, 0)
        high = highs.get((t, b))
        if high is None:
            bound = w(INDEX_RANKING.title_weight * t + b, length, REFERENCE_AVGDL) * fresh
            key = min(_KEY_MAX, int(bound / STEP))
            high = highs[t, b] = key << 47 | min(t, TFT_MAX) << 42 | min(b, TFB_MAX) << 32
        groups.setdefault(high, []).append(token)
    return [(high, " ".join(sorted(tokens))) for high, tokens in sorted(groups.items())]
