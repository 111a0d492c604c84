"""Search over the page store, written once and run on SQLite and PostgreSQL (docs/conventions.md rule 11).

The judged set (``search_corpus.py``) must put every expected page in the top 3
on both engines; the rest pins morphology, the operators of the search box,
ranking, filters, cursor pages, deletes and hostile input.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from shared.search.analysis import page_lang
from shared.search.kinds import PageKind
from shared.search.request import Cursor, SearchFilters
from shared.stores import Page, Stores, open_stores
from tests.contract.search_corpus import JUDGED, PAGES, T, published, url_of
from tests.searching import found, results


def page(url: str, title: str, text: str, version: int = 1, **fields: Any) -> Page:
    values: dict[str, Any] = {
        "url": url,
        "host": url.split("/")[2],
        "version": version,
        "html": "<p></p>",
        "doc_json": b"{}",
        "title": title,
        "text": text,
        "written_at": T,
        "kind": "article",
        "lang": page_lang(None, title + " " + text),
    }
    values.update(fields)
    return Page(**values)


class SearchContract:
    @pytest.fixture
    async def stores(self, store_url: str) -> AsyncIterator[Stores]:
        stores = await open_stores(store_url)
        yield stores
        await stores.close()

    @pytest.fixture
    async def corpus(self, stores: Stores) -> Stores:
        await stores.pages.upsert_many(
            [
                page(url_of(path), title, text, kind=kind, published_at=published(days))
                for path, title, text, kind, days in PAGES
            ]
        )
        return stores

    @pytest.mark.parametrize(("query", "expected"), JUDGED)
    async def test_judged_query_finds_its_page_in_the_top_3(self, corpus: Stores, query: str, expected: str) -> None:
        top = await found(corpus, query, limit=3, now=T)
        assert url_of(expected) in top, f"{query!r}: {top}"

    async def test_a_query_that_finds_nothing_is_offered_a_correction_from_the_index(self, corpus: Stores) -> None:
        typo = await results(corpus, "холодильнек")
        assert (typo.hits, typo.suggestion) == ((), "холодильник")  # a lemma of the index, shown as it is
        assert typo.suggestion is not None
        assert url_of("ru/fridge") in await found(corpus, typo.suggestion)
        english = await results(corpus, "brigdes river")  # a stem corrected, the rest of the word kept
        assert (english.hits, english.suggestion) == ((), "bridges river")
        assert (await results(corpus, "pancake -recipe", limit=3)).suggestion is None  # it found something
        for nothing_near in ("пингвин", "zzqqxx", "смартфон zzqqxx"):
            got = await results(corpus, nothing_near)
            assert (got.hits, got.suggestion) == ((), None), nothing_near
        # filtered: a correction is offered only when it finds something within the filters
        assert (await results(corpus, "холодильнек", filters=SearchFilters(kind=PageKind.news))).suggestion is None

    async def test_every_form_finds_the_page_and_yo_folds(self, stores: Stores) -> None:
        await stores.pages.upsert(page("https://a.example/1", "Мосты", "через реку"))
        await stores.pages.upsert(page("https://a.example/2", "Bridge", "over the river"))
        await stores.pages.upsert(page("https://a.example/3", "Ёжик в тумане", "мультфильм"))
        for q in ("мост", "мосты", "мостом", "МОСТАМИ"):
            assert await found(stores, q) == ["https://a.example/1"], q
        assert await found(stores, "bridges") == ["https://a.example/2"]
        assert await found(stores, "ежики") == await found(stores, "Ёжик") == ["https://a.example/3"]

    async def test_prefix_phrase_and_exclusion(self, stores: Stores) -> None:
        await stores.pages.upsert(page("https://a.example/1", "Мостовая", "улица вымощена"))
        await stores.pages.upsert(page("https://a.example/2", "Красная площадь", "главная площадь"))
        await stores.pages.upsert(page("https://a.example/3", "Площадь красная от заката", "вечер"))
        assert await found(stores, "мост*") == ["https://a.example/1"]
        assert await found(stores, "мост") == []
        assert await found(stores, '"красная площадь"') == ["https://a.example/2"]
        assert sorted(await found(stores, "красная площадь")) == ["https://a.example/2", "https://a.example/3"]
        assert await found(stores, "площадь -заката") == ["https://a.example/2"]

    async def test_title_weighs_more_than_text(self, stores: Stores) -> None:
        await stores.pages.upsert(page("https://a.example/text", "Weather", "a rocket crossed the sky"))
        await stores.pages.upsert(page("https://a.example/title", "Rocket launch", "it went well"))
        assert await found(stores, "rocket") == ["https://a.example/title", "https://a.example/text"]

    async def test_fresh_news_ranks_first_and_old_news_fades(self, stores: Stores) -> None:
        same = ("Выборы мэра", "Кандидаты в мэры зарегистрированы")
        await stores.pages.upsert(
            page("https://a.example/old", *same, kind="news", published_at=T - timedelta(days=60))
        )
        await stores.pages.upsert(
            page("https://a.example/new", *same, kind="news", published_at=T - timedelta(hours=2))
        )
        await stores.pages.upsert(page("https://a.example/evergreen", *same, kind="article"))
        hits = (await results(stores, "выборы", now=T)).hits
        assert hits[0].url == "https://a.example/new"
        assert hits[0].score > 1.9 * hits[-1].score  # ~double: boost 1, two hours of a 2-day half-life
        old = next(h for h in hits if h.url.endswith("/old"))
        evergreen = next(h for h in hits if h.url.endswith("/evergreen"))
        assert evergreen.score < old.score < evergreen.score * 1.05  # 60 days old: barely more than plain

    async def test_filters_by_host_type_and_date(self, corpus: Stores) -> None:
        def hosts(urls: list[str]) -> set[str]:
            return {u.split("/")[2] for u in urls}

        assert hosts(await found(corpus, "library", filters=SearchFilters(host="en.example"))) == {"en.example"}
        assert await found(corpus, "цена", filters=SearchFilters(kind=PageKind.product)) != []
        assert set(await found(corpus, "цена", filters=SearchFilters(kind=PageKind.product))) == {
            url_of("ru/phone"),
            url_of("ru/fridge"),
        }
        assert await found(corpus, "цена", filters=SearchFilters(kind=PageKind.news)) == []
        week = SearchFilters(since=T - timedelta(days=7), until=T)
        recent = await found(corpus, "мост", filters=week, now=T)
        # the repair news is 40 days old; the undated park page counts from when it was written (T)
        assert sorted(recent) == [url_of("ru/most"), url_of("ru/park")]
        assert await found(corpus, "мост", filters=SearchFilters(until=T - timedelta(days=30))) == [
            url_of("ru/most-remont")
        ]

    async def test_cursor_pages_are_stable_under_new_writes(self, stores: Stores) -> None:
        def text(k: int) -> str:  # six words, k of them the query's: every page as long as the others
            return " ".join(["слон"] * k + ["слово"] * (6 - k))

        for i in range(30):
            await stores.pages.upsert(page(f"https://a.example/{i:02d}", "Заметка", text(1 + i % 5)))
        first = await results(stores, "слон", limit=10, now=T)
        assert len(first.hits) == 10
        assert first.next_cursor is not None
        # pages that rank above and below the cursor arrive between the pages of the walk; they change
        # the word's IDF, and so every score (which is why the cursor's own score is read again)
        for i in range(20):
            await stores.pages.upsert(page(f"https://b.example/{i}", "Заметка", text(6)))
            await stores.pages.upsert(page(f"https://c.example/{i}", "Заметка", text(1)))
        seen = [h.url for h in first.hits]
        cursor: Cursor | None = first.next_cursor
        while cursor is not None:
            more = await results(stores, "слон", limit=10, cursor=cursor)
            seen.extend(h.url for h in more.hits)
            cursor = more.next_cursor
        assert len(seen) == len(set(seen)), "a page was shown twice"
        assert {f"https://a.example/{i:02d}" for i in range(30)} <= set(seen), "a page was skipped"
        assert not any(u.startswith("https://b.example/") for u in seen)  # they rank above the cursor
        assert sum(u.startswith("https://c.example/") for u in seen) == 20  # below it: found later

    async def test_deleted_and_replaced_text_is_not_found(self, stores: Stores) -> None:
        url = "https://a.example/x"
        await stores.pages.upsert(page(url, "Alpha", "zebra"))
        await stores.pages.upsert(page(url, "Beta", "giraffe", version=2))
        assert await found(stores, "zebra") == []
        assert await found(stores, "giraffe") == [url]
        await stores.pages.delete(url, 3)
        assert await found(stores, "giraffe") == []
        assert await found(stores, "beta") == []
        await stores.pages.upsert(page(url, "Beta", "giraffe", version=4))  # comes back
        assert await found(stores, "giraffe") == [url]

    async def test_snippet_and_title_mark_whole_words(self, stores: Stores) -> None:
        await stores.pages.upsert(page("https://a.example/1", "The northern lights", "Lights over the northern bay."))
        hit = (await results(stores, "the lights")).hits[0]
        assert [p for p, m in hit.title.parts() if m] == ["lights"]
        assert [p for p, m in hit.snippet.parts() if m] == ["Lights"]

    async def test_hostile_input_is_text(self, stores: Stores) -> None:
        await stores.pages.upsert(page("https://a.example/1", "Rocket", "sky"))
        for hostile in ['"', "rocket AND", "NEAR(rocket", "rocket*", "'; DROP TABLE pages; --", "a:b", "((", "!", "-"]:
            assert isinstance((await results(stores, hostile)).hits, tuple)
        assert await found(stores, "") == []
        assert await found(stores, "NEAR(rocket") == []  # "near" is a word here, and no page has it
        assert await found(stores, "rocket*") == ["https://a.example/1"]
