"""SQLite search's fast path (``shared/stores/sqlite/search_topk.py``) answers what the full ranking answers.

A few thousand pages of words drawn by a Zipf law, so that common words are on
thousands of pages (the walk's case) and rare ones on a few (the SQL's): for a
random sample of queries — one word, several, prefixes of every length,
exclusions, filters, news of every age, pages written after the ranking
instant — the walk's best results are the full SQL ranking's, page for page and
score for score.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shared.search.analysis import page_lang
from shared.search.kinds import PageKind
from shared.search.query import parse_query
from shared.search.request import SearchFilters, SearchRequest
from shared.stores import Page, Stores, open_stores
from shared.stores.sql import search_walk
from shared.stores.sqlite import search as sqlite_search
from shared.stores.sqlite import search_topk
from shared.stores.sqlite.search_topk import TopK, read_averages

T = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
_STEMS = ("river", "stone", "cloud", "amber", "lumen", "nord")
_WORDS = [f"{a}{b}" for a in _STEMS for b in ("a", "ox", "ine", "et", "um")]
_WORDS += ["мост", "город", "река", "поезд", "площадь", "рынок", "музей", "театр", "снег", "ветер"]
# ambiguous forms: a word of several lemmas is the OR of them, each a phrase of its own in bm25 and the walk
_WORDS += ["стали", "сталь", "стать", "дома", "дом", "выборы", "выбор"]


def _zipf(rng: random.Random) -> str:
    return _WORDS[min(int(rng.paretovariate(0.9)) - 1, len(_WORDS) - 1)]


def _pages(n: int, rng: random.Random) -> list[Page]:
    out = []
    for i in range(n):
        title = " ".join(_zipf(rng) for _ in range(rng.randint(2, 6)))
        text = " ".join(_zipf(rng) for _ in range(rng.randint(10, 80)))
        news = i % 3 != 0
        published = T - timedelta(hours=rng.randint(0, 24 * 60)) if news else None
        out.append(
            Page(
                url=f"https://h{i % 7}.example/{i}",
                host=f"h{i % 7}.example",
                version=1,
                html="<p></p>",
                doc_json=b"{}",
                title=title,
                text=text,
                written_at=T - timedelta(hours=rng.randint(0, 3)),
                kind="news" if news else ("product" if i % 6 == 0 else "article"),
                published_at=published,
                lang=page_lang(None, title),
            )
        )
    return out


@pytest.fixture
async def corpus(tmp_path: Path) -> AsyncIterator[Stores]:
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    pages = _pages(3000, random.Random(16))
    for i in range(0, len(pages), 500):
        await stores.pages.upsert_many(pages[i : i + 500])
    await stores.index_queue.catch_up()
    yield stores
    await stores.close()


def _queries(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        words = [_zipf(rng) for _ in range(rng.choice((1, 1, 2, 2, 3)))]
        if i % 5 == 4:
            words.append("-" + rng.choice(_WORDS))
        out.append(" ".join(words))
    return out


def _compare(conn: sqlite3.Connection, requests: list[SearchRequest]) -> tuple[int, list[str]]:
    topk = TopK()
    used, wrong = 0, []
    for r in requests:
        fast = topk.best(conn, r)
        if fast is None:
            continue
        used += 1
        full = sqlite_search._ranked(conn, r)
        same_pages = [i for i, _ in fast] == [i for i, _ in full]
        same_scores = all(abs(a - b) <= 1e-12 * max(1.0, abs(b)) for (_, a), (_, b) in zip(fast, full, strict=True))
        if not (same_pages and same_scores):
            wrong.append(f"{r.query.text!r} {r.filters}: {fast[:3]} != {full[:3]}")
    return used, wrong


def _requests(rng: random.Random, queries: list[str], *, host: str, days: tuple[int, int]) -> list[SearchRequest]:
    """``queries`` with a random filter each (none twice as often, a host, news, a window of ``days``
    ago) and a random page size."""
    filters = [SearchFilters(), SearchFilters(), SearchFilters(host=host), SearchFilters(kind=PageKind.news)]
    filters.append(SearchFilters(since=T - timedelta(days=days[0]), until=T - timedelta(days=days[1])))
    return [
        SearchRequest(parse_query(q), filters=rng.choice(filters), limit=rng.choice((3, 10, 20)), now=T)
        for q in queries
    ]


async def test_the_walk_returns_the_full_rankings_top_on_a_random_sample(corpus: Stores) -> None:
    rng = random.Random(7)
    requests = _requests(rng, _queries(rng, 150), host="h3.example", days=(20, 2))
    db = corpus.pages._db  # type: ignore[attr-defined]
    used, wrong = await db.read(lambda conn: _compare(conn, requests))
    assert wrong == []
    assert used >= 60, used  # the sample exercises the walk, not only the SQL it declines to


_PREFIXES = ("riv*", "rive*", "river*", "riverin*", "sto*", "ston*", "stoneo*", "lum*", "clou*", "мос*", "мост*",
             "горо*", "город*", "ri*")  # fmt: skip


def _prefix_queries(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        words = [rng.choice(_PREFIXES)] + [rng.choice((_zipf(rng), rng.choice(_PREFIXES))) for _ in range(i % 3)]
        if i % 7 == 6:
            words.append("-" + rng.choice(_WORDS))
        rng.shuffle(words)
        out.append(" ".join(words))
    return [*out, "rive* river*", "riv* -riverox", "rivera riv*", "rivera rivera*"]


async def test_prefixes_on_the_walk_return_the_full_rankings_top(
    corpus: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every query the walk can take takes it here, however few pages it matches: the gates that send
    # small queries to SQL are about cost, and the answer must not depend on them
    monkeypatch.setattr(search_walk, "MIN_DF", 0)
    monkeypatch.setattr(search_topk, "_MIN_SHARE", 0.0)
    monkeypatch.setattr(search_walk, "MAX_SEEN", 1_000_000)
    rng = random.Random(11)
    requests = _requests(rng, _prefix_queries(rng, 160), host="h5.example", days=(30, 5))
    db = corpus.pages._db  # type: ignore[attr-defined]
    used, wrong = await db.read(lambda conn: _compare(conn, requests))
    assert wrong == []
    # all but the prefixes shorter than any prefix list ("ri*") take the walk
    declined = sum(1 for r in requests if any(t.prefix and len(t.stem) < 3 for t in r.query.terms))
    assert used == len(requests) - declined
    assert declined < len(requests) // 4


async def test_a_common_prefix_and_a_two_word_phrase_take_the_walk_and_a_longer_phrase_the_sql(
    corpus: Stores,
) -> None:
    db = corpus.pages._db  # type: ignore[attr-defined]
    for text in ("riv*", "rive*", "river*", '"rivera riverox"'):
        prefix = SearchRequest(parse_query(text), limit=20, now=T)
        used, wrong = await db.read(lambda conn, r=prefix: _compare(conn, [r]))
        assert (used, wrong) == (1, []), text
    phrase = SearchRequest(parse_query('"rivera riverox rivera"'), limit=20, now=T)
    assert await db.read(lambda conn: TopK().best(conn, phrase)) is None


def _phrase_queries(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        words = ['"' + _zipf(rng) + " " + _zipf(rng) + '"', *(_zipf(rng) for _ in range(i % 3))]
        if i % 5 == 4:
            words.append("-" + _zipf(rng))
        rng.shuffle(words)
        out.append(" ".join(words))
    # a word twice in a row (a phrase's instances overlapping, "a a" in "a a a"), a phrase and its own word,
    # an ambiguous form's first lemma, Russian
    return [*out, '"rivera rivera"', '"rivera riverox" rivera', '"стали мост"', '"мост город"']


async def test_two_word_phrases_walk_their_pairs_list_to_the_full_rankings_top(
    corpus: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    # FTS5 scores a phrase by the pages that match it and its instances: the pair's pages and counts
    monkeypatch.setattr(search_walk, "MIN_DF", 0)
    monkeypatch.setattr(search_walk, "MAX_SEEN", 1_000_000)
    rng = random.Random(23)
    requests = _requests(rng, _phrase_queries(rng, 120), host="h2.example", days=(25, 3))
    db = corpus.pages._db  # type: ignore[attr-defined]
    used, wrong = await db.read(lambda conn: _compare(conn, requests))
    assert wrong == []
    assert used == len(requests)


async def test_pages_written_after_the_ranking_instant_are_ranked_as_the_full_ranking_does(corpus: Stores) -> None:
    # brand-new news written after ``now``: its freshness bound was taken later, so the walk scores it aside
    late = [
        Page(url=f"https://late.example/{i}", host="late.example", version=1, html="<p></p>", doc_json=b"{}",
             title="rivera rivera", text="riverox " * (i + 1), written_at=T + timedelta(hours=5), kind="news",
             published_at=T + timedelta(hours=4), lang="en")
        for i in range(5)
    ]  # fmt: skip
    await corpus.pages.upsert_many(late)
    await corpus.index_queue.catch_up()
    requests = [SearchRequest(parse_query(q), limit=20, now=T) for q in ("rivera", "riverox", "rivera riverox")]
    db = corpus.pages._db  # type: ignore[attr-defined]
    used, wrong = await db.read(lambda conn: _compare(conn, requests))
    assert wrong == []
    assert used == 3


async def test_the_impact_index_follows_updates_and_deletes(corpus: Stores) -> None:
    db = corpus.pages._db  # type: ignore[attr-defined]
    request = SearchRequest(parse_query("rivera"), limit=20, now=T)
    first = await db.read(lambda conn: TopK().best(conn, request))
    assert first is not None
    assert len(first) == 21
    top_url = await db.read(
        lambda conn: conn.execute("SELECT url, version FROM pages WHERE rowid = ?", (first[0][0],)).fetchone()
    )
    await corpus.pages.delete(top_url[0], top_url[1] + 1)
    await corpus.index_queue.catch_up()
    after = await db.read(lambda conn: TopK().best(conn, request))
    assert after is not None
    assert first[0][0] not in [i for i, _ in after]
    rows = await db.read(
        lambda conn: conn.execute("SELECT count(*) FROM search_imp_rows WHERE id = ?", (first[0][0],)).fetchone()[0]
    )
    assert rows == 0
    # the FTS5 impact index holds exactly the rows of its content table (no row of a deleted page left)
    check = await db.read(
        lambda conn: conn.execute("INSERT INTO search_imp (search_imp, rank) VALUES ('integrity-check', 1)")
    )
    assert check is not None
    used, wrong = await db.read(lambda conn: _compare(conn, [request]))
    assert (used, wrong) == (1, [])


async def test_the_averages_are_the_ones_bm25_reads(corpus: Stores) -> None:
    db = corpus.pages._db  # type: ignore[attr-defined]
    averages, counted = await db.read(
        lambda conn: (read_averages(conn), conn.execute("SELECT count(*), sum(length) FROM search_docs").fetchone())
    )
    assert averages == (3000, counted[1])
    assert counted[0] == 3000
