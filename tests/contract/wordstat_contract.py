"""The query-statistics store, written once and run on SQLite and PostgreSQL (docs/conventions.md rule 11).

The searches of ``tests/unit/shared/wordstat/test_operators.py`` are counted
through the store, and every operator's frequency must equal the hand count
there: the index, the SQL and the Python checks together give the same answer
as matching each search by hand.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from cubes.wordstat.handler import counted
from shared.messages import Device, SearchQueryEvent
from shared.stores import Stores, open_stores
from shared.stores.wordstat import CountedSearch, Privacy
from shared.wordstat.frequency import frequency
from shared.wordstat.lemmas import analyze_word, normalize_query
from shared.wordstat.operators import parse
from tests.unit.shared.wordstat.test_operators import CASES, SEARCHES

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
#: every cell with a search published as it is: the hand counts' frequencies
EXACT = Privacy(threshold=1)


def events(
    query: str,
    n: int,
    *,
    at: datetime = NOW,
    region: str = "moscow",
    device: Device = Device.desktop,
    hosts: tuple[str, ...] = (),
    origins: tuple[str, ...] = (),
) -> list[SearchQueryEvent]:
    return [
        SearchQueryEvent(
            event_id=uuid.uuid4().hex,
            query=normalize_query(query),
            at=at,
            region=region,
            device=device,
            hosts=list(hosts),
            origins=list(origins),
        )
        for _ in range(n)
    ]


class WordstatContract:
    @pytest.fixture
    async def stores(self, store_url: str) -> AsyncIterator[Stores]:
        stores = await open_stores(store_url)
        yield stores
        await stores.close()

    @pytest.fixture
    async def counted_stores(self, stores: Stores) -> Stores:
        batch = [counted(e) for q, n in SEARCHES.items() for e in events(q, n)]
        assert await stores.wordstat.count(batch[:40], now=NOW, privacy=EXACT) == 40
        assert await stores.wordstat.count(batch[40:], now=NOW, privacy=EXACT) == len(batch) - 40
        return stores

    @pytest.mark.parametrize(("query", "expected", "why"), CASES)
    async def test_every_operator_matches_the_hand_count(
        self, counted_stores: Stores, query: str, expected: int, why: str
    ) -> None:
        f = await frequency(counted_stores.wordstat, parse(query), now=NOW, threshold=1)
        assert f.total.n == expected, why
        assert f.months[-1][1].n == expected
        assert sum(c.n for _, c in f.months) == expected

    async def test_intersections_too_big_to_read_whole_count_the_same(
        self, counted_stores: Stores, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Past ``WHOLE_LIMIT`` queries an intersection is counted by the joins (``frequency._listed``)."""
        import shared.wordstat.frequency as freq

        monkeypatch.setattr(freq, "WHOLE_LIMIT", 1)
        for query, expected, why in CASES:
            f = await frequency(counted_stores.wordstat, parse(query), now=NOW, threshold=1)
            assert f.total.n == expected, why

    async def test_a_redelivered_event_counts_once(self, stores: Stores) -> None:
        batch = [counted(e) for e in events("купить слона", 3)]
        assert await stores.wordstat.count(batch, now=NOW, privacy=EXACT) == 3
        assert await stores.wordstat.count(batch[:2], now=NOW, privacy=EXACT) == 0  # redelivered
        assert await stores.wordstat.count(batch + batch, now=NOW, privacy=EXACT) == 0
        f = await frequency(stores.wordstat, parse("слон"), now=NOW, threshold=1)
        assert f.total.n == 3

    async def test_history_regions_devices_and_similar(self, stores: Stores) -> None:
        w = stores.wordstat
        old = NOW - timedelta(days=62)  # two months back
        batch = (
            events("купить слона", 6, device=Device.mobile)
            + events("купить слона", 4, region="spb")
            + events("слон фото", 7, at=old)
            + events("слон", 2)
        )
        await w.count([counted(e) for e in batch], now=NOW, privacy=Privacy(threshold=5))
        f = await frequency(w, parse("слон"), now=NOW, threshold=5)
        # this month: only the cell of 6 is published (spb's 4 and "слон"'s 2 are in no count)
        assert f.total.n == 6
        # shown rounded to a multiple of the threshold: 7 and 6 are both 5
        assert [(m, c.n, c.visible) for m, c in f.months[-3:]] == [(202609, 7, 5), (202610, 0, None), (202611, 6, 5)]
        assert f.months[-2][1].display == "< 5"
        assert {s.key: (s.count.n, s.count.visible) for s in f.regions} == {"moscow": (6, 5)}
        assert {s.key: s.count.n for s in f.devices} == {"mobile": 6}
        # listed: queries with a cell published this month ("слон" 2 and "слон фото" 0 have none)
        assert [(q, c.n) for q, c in f.similar] == [("купить слона", 6)]
        narrowed = await frequency(w, parse("слон"), now=NOW, threshold=1, device="mobile")
        assert narrowed.total.n == 6
        three = await frequency(w, parse("слон"), now=NOW, threshold=1, period_months=3)
        assert three.total.n == 19

    async def test_a_homonyms_lemma_set_counts_each_search_once(self, stores: Stores) -> None:
        """A word with two lemmas ("стали": стать|сталь) gets counters of its own, filled from what was
        counted before it was first met and grown by every batch after, each search once."""
        w = stores.wordstat
        await w.count([counted(e) for e in events("сталь цена", 3) + events("стать сталью", 2)], now=NOW, privacy=EXACT)
        assert await w.lemma_tally(("сталь", "стать"), 202611, 202611, threshold=1) is None  # no word had both yet
        await w.count(
            [counted(e) for e in events("стали лучше", 1) + events("стать", 4, region="spb")], now=NOW, privacy=EXACT
        )
        rows = await w.lemma_tally(("стать", "сталь"), 202611, 202611, threshold=1)
        assert rows is not None
        assert sum(r.n for r in rows) == 3 + 2 + 1 + 4  # "стать сталью" has both lemmas: once
        await w.count([counted(e) for e in events("сталь стать", 2, device=Device.mobile)], now=NOW, privacy=EXACT)
        rows = await w.lemma_tally(("сталь", "стать"), 202611, 202611, threshold=1)
        assert rows is not None
        assert {(r.region, r.device): r.n for r in rows} == {("moscow", "desktop"): 6, ("spb", "desktop"): 4,
                                                             ("moscow", "mobile"): 2}  # fmt: skip
        f = await frequency(w, parse("стали"), now=NOW, threshold=1)
        assert f.total.n == 12
        assert (await frequency(w, parse("стали -цена"), now=NOW, threshold=1)).total.n == 9
        assert await w.lemma_tally(("сталь",), 202611, 202611, threshold=1) is not None  # one lemma: always counted

    async def test_sets_registered_while_others_count_lose_nothing(self, store_url: str) -> None:
        """Two stores on one database (two replicas of the cube): one keeps meeting new homonyms, whose
        sets are filled from what is counted, while the other counts searches with their lemmas. Every
        search must be in every set it touches exactly once."""
        import asyncio

        first, second = await open_stores(store_url), await open_stores(store_url)
        try:
            homonyms = ["стали", "это", "мой", "три", "чем", "лучше"]
            plain = ["сталь", "стать", "этот", "мыть", "тереть", "хороший"]

            async def meet() -> None:
                for word in homonyms:
                    await first.wordstat.count(
                        [counted(e) for e in events(f"{word} вопрос", 2)], now=NOW, privacy=EXACT
                    )

            async def count() -> None:
                for _ in range(3):
                    for word in plain:
                        await second.wordstat.count(
                            [counted(e) for e in events(f"{word} ответ", 3)], now=NOW, privacy=EXACT
                        )

            await asyncio.gather(meet(), count())
            for word in homonyms:
                f = await frequency(first.wordstat, parse(word), now=NOW, threshold=1)
                lemmas = set(analyze_word(word).lemmas)
                hand = 2 + sum(9 for p in plain if set(analyze_word(p).lemmas) & lemmas)
                assert f.total.n == hand, word
        finally:
            await first.close()
            await second.close()

    async def test_queries_that_showed_an_origin(self, stores: Stores) -> None:
        """The searches are counted by the origins of the pages shown, never by their hosts: another port
        or scheme of a host is another site (``shared.wordstat.hosts``, whose searches)."""
        a, a_port, b = "https://a.example", "http://a.example:8080", "https://b.example"
        batch = events("мосты москвы", 3, hosts=("a.example", "b.example"), origins=(a, b))
        batch += events("мосты", 2, hosts=("a.example",), origins=(a,))
        batch += events("мост в москве", 4, hosts=("a.example",), origins=(a_port,))
        await stores.wordstat.count([counted(e) for e in batch], now=NOW, privacy=EXACT)
        w = stores.wordstat
        assert await w.host_queries(a, 202611, 202611, limit=10, threshold=1) == [("мосты москвы", 3), ("мосты", 2)]
        assert await w.host_queries(a_port, 202611, 202611, limit=10, threshold=1) == [("мост в москве", 4)]
        assert await w.host_queries(b, 202611, 202611, limit=10, threshold=1) == [("мосты москвы", 3)]
        assert await w.host_queries("a.example", 202611, 202611, limit=10, threshold=1) == []
        assert await w.host_queries("https://c.example", 202611, 202611, limit=10, threshold=1) == []

    async def test_old_event_ids_are_forgotten(self, stores: Stores) -> None:
        batch = [counted(e) for e in events("слон", 2)]
        await stores.wordstat.count(batch, now=NOW, privacy=EXACT)
        assert await stores.wordstat.forget_seen(NOW - timedelta(days=1)) == 0
        assert await stores.wordstat.forget_seen(NOW + timedelta(seconds=1)) == 2

    async def test_a_client_counts_once_a_query_and_day(self, stores: Stores) -> None:
        """Padding a guessed query from one address adds one search a day (``shared/wordstat/clients.py``)."""
        w = stores.wordstat

        def keyed(query: str, n: int, client: str, at: datetime = NOW) -> list[CountedSearch]:
            return [counted(e.model_copy(update={"client": client})) for e in events(query, n, at=at)]

        a, b = "a" * 32, "b" * 32
        assert await w.count(keyed("иван петров", 5, a), now=NOW, privacy=EXACT) == 1  # within one batch
        assert await w.count(keyed("иван петров", 3, a), now=NOW, privacy=EXACT) == 0  # a later batch, that day
        assert await w.count(keyed("иван петров", 2, b), now=NOW, privacy=EXACT) == 1  # another client
        assert await w.count(keyed("иван петров", 2, a, NOW + timedelta(days=1)), now=NOW, privacy=EXACT) == 1
        assert await w.count([counted(e) for e in events("иван петров", 2)], now=NOW, privacy=EXACT) == 2  # no key
        f = await frequency(w, parse("иван петров"), now=NOW + timedelta(days=1), threshold=1)
        assert f.total.n == 5
        assert await w.forget_clients(20261121) == 2  # the 20th's two keys
        assert await w.count(keyed("иван петров", 1, a), now=NOW, privacy=EXACT) == 1  # forgotten: counted again

    async def test_hidden_cells_are_in_no_count(self, stores: Stores) -> None:
        """Every path of a frequency sums the same published cells: a word's own counters, a union, a word
        less another and the split agree, and a hidden cell is in none of them."""
        w = stores.wordstat
        five = Privacy(threshold=5)
        batch = events("слон фото", 6) + events("слон", 4) + events("слон фото", 3, region="spb")
        await w.count([counted(e) for e in batch], now=NOW, privacy=five)
        rows = await w.lemma_tally(("слон",), 202611, 202611, threshold=5)
        assert rows is not None
        assert [(r.region, r.n) for r in rows] == [("moscow", 6)]
        for query, total in (("слон", 6), ("(слон|зюзябрик)", 6), ("слон -фото", 0), ("фото", 6), ("слон фото", 6)):
            f = await frequency(w, parse(query), now=NOW, threshold=5)
            assert f.total.n == total, query
            assert sum(s.count.n for s in f.regions) == total, query
        assert [q for q, _ in (await frequency(w, parse("слон"), now=NOW, threshold=5)).similar] == ["слон фото"]

    async def test_a_cell_shows_its_count_less_its_offset_plus_the_lift(self, stores: Stores) -> None:
        w = stores.wordstat
        fixed = Privacy(threshold=5, noise=5, draw=lambda cell: 3)  # lift 2: shows n - 3 + 2 once n - 3 >= 5
        await w.count(
            [counted(e) for e in events("мост", 7, hosts=("a.example",), origins=("https://a.example",))],
            now=NOW,
            privacy=fixed,
        )
        f = await frequency(w, parse("мост"), now=NOW, threshold=5)
        assert f.total.n == 0  # 7 - 3 < 5: hidden
        assert await w.host_queries("https://a.example", 202611, 202611, limit=10, threshold=5) == []
        await w.count(
            [counted(e) for e in events("мост", 1, hosts=("a.example",), origins=("https://a.example",))],
            now=NOW,
            privacy=fixed,
        )
        f = await frequency(w, parse("мост"), now=NOW, threshold=5)
        assert f.total.n == 7  # 8 - 3 + 2
        assert await w.host_queries("https://a.example", 202611, 202611, limit=10, threshold=5) == [("мост", 7)]
        rows = await w.lemma_tally(("мост",), 202611, 202611, threshold=5)
        assert rows is not None
        assert sum(r.n for r in rows) == 7

    async def test_another_threshold_rebuilds_the_word_counters(self, stores: Stores) -> None:
        w = stores.wordstat
        await w.count([counted(e) for e in events("слон", 3) + events("стали", 2)], now=NOW, privacy=Privacy(5))
        assert await w.lemma_tally(("слон",), 202611, 202611, threshold=5) == []
        assert await w.lemma_tally(("слон",), 202611, 202611, threshold=1) is None  # kept for 5: sum the cells
        assert (await frequency(w, parse("слон"), now=NOW, threshold=1)).total.n == 3
        await w.count([counted(e) for e in events("слон", 1)], now=NOW, privacy=Privacy(1))
        rows = await w.lemma_tally(("слон",), 202611, 202611, threshold=1)
        assert rows is not None
        assert sum(r.n for r in rows) == 4
        sets = await w.lemma_tally(("сталь", "стать"), 202611, 202611, threshold=1)
        assert sets is not None
        assert sum(r.n for r in sets) == 2
        assert await w.lemma_tally(("слон",), 202611, 202611, threshold=5) is None

    async def test_a_day_key_is_one_per_day_and_forgotten(self, stores: Stores) -> None:
        w = stores.wordstat
        key = await w.day_key(20261120)
        assert len(key) == 32
        assert await w.day_key(20261120) == key
        assert await w.day_key(20261121) != key
        assert await w.forget_clients(20261121) == 1
        assert await w.day_key(20261120) != key  # gone: a new one, so no old client key can be made again
