"""PostgreSQL search's walk over its impact-ordered table (``shared/stores/postgres/search_topk.py``) answers what
its full ranking answers: page for page, score for score, on the corpus and queries of the SQLite test
(``test_search_topk_sqlite.py``: Zipf words, ambiguous Russian forms, prefixes, exclusions, filters, news of
every age, pages written after the ranking instant, updates and removals), and on phrases, which PostgreSQL
walks from their rarest word's list (SQLite ranks them in full).
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from shared.search.query import parse_query
from shared.search.request import SearchRequest
from shared.stores import Page, Stores, open_stores
from shared.stores.postgres import search_topk
from shared.stores.postgres.search import PgSearchIndex, phrases
from shared.stores.sql import search_walk
from shared.stores.sql.search_impacts import idf as bm25_idf
from tests.contract.test_search_topk_sqlite import T, _pages, _prefix_queries, _queries, _requests, _zipf
from tests.pgschema import fresh_schema

pytestmark = pytest.mark.postgres


@pytest.fixture
async def corpus(postgres_url: str) -> AsyncIterator[Stores]:
    async with fresh_schema(postgres_url) as url:
        stores = await open_stores(url)
        pages = _pages(2000, random.Random(16))
        for i in range(0, len(pages), 500):
            await stores.pages.upsert_many(pages[i : i + 500])
        await stores.index_queue.catch_up()
        yield stores
        await stores.close()


async def _compare(stores: Stores, requests: list[SearchRequest]) -> tuple[int, list[str]]:
    index = stores.search
    assert isinstance(index, PgSearchIndex)
    assert index._topk is not None
    used, wrong = 0, []
    n, avgdl = await index._stats()
    for r in requests:
        groups, df = await phrases(r.query, index._vocab)
        idf = {m: bm25_idf(n, d) for m, d in df.items()}
        fast = await index._topk.best(r, groups, df, idf, n, avgdl)
        if fast is None:
            continue
        used += 1
        full = await index._ranked(r, groups, idf, avgdl)
        same_pages = [i for i, _ in fast] == [i for i, _ in full]
        same_scores = all(abs(a - b) <= 1e-12 * max(1.0, abs(b)) for (_, a), (_, b) in zip(fast, full, strict=True))
        if not (same_pages and same_scores):
            wrong.append(f"{r.query.text!r} {r.filters}: {fast[:3]} != {full[:3]}")
    return used, wrong


async def test_the_walk_returns_the_full_rankings_top_on_a_random_sample(corpus: Stores) -> None:
    rng = random.Random(7)
    used, wrong = await _compare(corpus, _requests(rng, _queries(rng, 120), host="h3.example", days=(20, 2)))
    assert wrong == []
    assert used >= 40, used  # the sample exercises the walk, not only the full ranking it declines to


async def test_prefixes_walk_as_the_or_of_their_terms(corpus: Stores, monkeypatch: pytest.MonkeyPatch) -> None:
    # every query the walk can take takes it here, however few pages it matches (the gate is about cost)
    monkeypatch.setattr(search_topk, "MIN_DF", 0)
    monkeypatch.setattr(search_walk, "MAX_SEEN", 1_000_000)
    rng = random.Random(11)
    requests = _requests(rng, _prefix_queries(rng, 100), host="h5.example", days=(30, 5))
    used, wrong = await _compare(corpus, requests)
    assert wrong == []
    assert used >= len(requests) // 2


def _phrase_queries(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        phrase = '"' + " ".join(_zipf(rng) for _ in range(rng.choice((2, 2, 3)))) + '"'
        words = [phrase, *(_zipf(rng) for _ in range(i % 3))]
        if i % 5 == 4:
            words.append("-" + _zipf(rng))
        rng.shuffle(words)
        out.append(" ".join(words))
    # a word twice in a row, a phrase's instances overlapping ("a a" in "a a a"), a phrase and its own word
    return [*out, '"rivera rivera"', '"rivera rivera rivera"', '"rivera riverox" rivera', '"мост город"']


async def test_phrases_walk_their_pairs_lists(corpus: Stores, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_topk, "MIN_DF", 0)
    monkeypatch.setattr(search_walk, "MAX_SEEN", 1_000_000)
    rng = random.Random(23)
    requests = _requests(rng, _phrase_queries(rng, 120), host="h2.example", days=(25, 3))
    used, wrong = await _compare(corpus, requests)
    assert wrong == []
    # every phrase whose pairs of words are all on some page takes the walk: a two-word one its pair's
    # list, a longer one its rarest pair's
    index = corpus.search
    assert isinstance(index, PgSearchIndex)
    walkable = 0
    for r in requests:
        groups, _ = await phrases(r.query, index._vocab)
        walkable += all(p.lists for g in groups for p in g)
    assert used == walkable
    assert walkable >= len(requests) * 3 // 4
    # a phrase whose words are never next to each other (one found nowhere, here) has no list: nothing
    # matches, and the search answers so without asking the GIN index
    nowhere = SearchRequest(parse_query('"rivera qqqzx"'), limit=20, now=T)
    assert await _compare(corpus, [nowhere]) == (0, [])
    assert (await corpus.search.search(nowhere)).hits == ()


async def test_late_pages_updates_and_removals_keep_the_walk_exact(corpus: Stores) -> None:
    late = [
        Page(url=f"https://late.example/{i}", host="late.example", version=1, html="<p></p>", doc_json=b"{}",
             title="rivera rivera", text="riverox " * (i + 1), written_at=T + timedelta(hours=5), kind="news",
             published_at=T + timedelta(hours=4), lang="en")
        for i in range(5)
    ]  # fmt: skip
    await corpus.pages.upsert_many(late)
    # the best page for "rivera" loses the word, and the next best is removed: their postings go
    request = SearchRequest(parse_query("rivera"), limit=20, now=T)
    before = [h.url for h in (await corpus.search.search(request)).hits]
    first, second = (await corpus.pages.get(before[0])), (await corpus.pages.get(before[1]))
    assert first is not None
    assert second is not None
    await corpus.pages.upsert(Page(**{**_fields(first), "version": first.version + 1, "title": "x", "text": "y"}))
    await corpus.pages.delete(second.url, second.version + 1)
    await corpus.index_queue.catch_up()
    after = [h.url for h in (await corpus.search.search(request)).hits]
    assert first.url not in after
    assert second.url not in after
    requests = [SearchRequest(parse_query(q), limit=20, now=T) for q in ("rivera", "riverox", "rivera riverox")]
    used, wrong = await _compare(corpus, requests)
    assert (used, wrong) == (3, [])
    # every posting left belongs to a live page's current version: none of the rewritten or removed page
    db = corpus.pages._db  # type: ignore[attr-defined]
    ids = {r[0] for r in await db.fetch("SELECT id FROM search_docs WHERE url = ANY(?::text[])", [first.url])}
    stray = await db.fetchone(
        "SELECT count(*) FROM search_post p WHERE NOT EXISTS"
        " (SELECT 1 FROM search_docs d WHERE d.id = (p.k & 4294967295) AND position(p.term in d.impacts) > 0)"
    )
    assert stray is not None
    assert stray[0] == 0
    assert ids
    # and each term's count of pages is its postings' (the walk's IDF reads it)
    off = await db.fetchone(
        "SELECT count(*) FROM (SELECT term, count(*) AS n FROM search_post GROUP BY term) p"
        " FULL JOIN (SELECT term, docs FROM search_df WHERE docs > 0) d USING (term)"
        " WHERE p.n IS DISTINCT FROM d.docs"
    )
    assert off is not None
    assert off[0] == 0


def _fields(page: Page) -> dict[str, Any]:
    return {name: getattr(page, name) for name in page.__dataclass_fields__}
