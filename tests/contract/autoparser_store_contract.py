"""The autoparser store's contract (templates, pairs, calibrations), run on every engine (docs/conventions.md rule
11)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.stores import Stores, open_stores
from shared.stores.autoparser import MAX_PAIRS_PER_HOST, HostCalibration, Pair

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def pair(i: int, host: str = "a.example", **fields: object) -> Pair:
    values: dict[str, object] = {
        "host": host,
        "url": f"https://{host}/news/{i}",
        "html": (f"<html><body><p>page {i}</p>" + "<p>chrome</p>" * 200 + "</body></html>").encode(),
        "text": f"the feed's full text of article {i}",
        "title": f"Article {i}",
        "captured_at": T0 + timedelta(seconds=i),
    }
    values.update(fields)
    return Pair(**values)  # type: ignore[arg-type]


class AutoparserStoreContract:
    @pytest.fixture
    def store_url(self) -> str:
        raise NotImplementedError("the engine's test module provides store_url")

    @pytest.fixture
    async def stores(self, store_url: str) -> AsyncIterator[Stores]:
        s = await open_stores(store_url, pool_size=4)
        yield s
        await s.close()

    async def test_templates_are_upserted_per_host(self, stores: Stores) -> None:
        store = stores.autoparser
        assert await store.get_template("a.example") is None
        await store.put_template("a.example", b"TPL1\x00one", now=T0)
        await store.put_template("a.example", b"TPL1\x00two\xff", now=T0 + timedelta(seconds=1))
        await store.put_template("b.example", b"other")
        assert await store.get_template("a.example") == b"TPL1\x00two\xff"
        assert await store.get_template("b.example") == b"other"

    async def test_pairs_round_trip_and_a_recrawl_replaces_its_pair(self, stores: Stores) -> None:
        store = stores.autoparser
        await store.add_pair(pair(1))
        await store.add_pair(pair(2))
        await store.add_pair(pair(1, text="the corrected full text", captured_at=T0 + timedelta(seconds=9)))
        await store.add_pair(pair(1, host="b.example"))
        got = await store.pairs("a.example")
        assert [p.url for p in got] == ["https://a.example/news/2", "https://a.example/news/1"]  # oldest first
        assert got[1].text == "the corrected full text"
        assert got[0] == pair(2)  # every field, the page byte for byte
        assert await store.pair_hosts() == {"a.example": 2, "b.example": 1}
        assert await store.pairs("nobody.example") == []

    async def test_a_host_keeps_its_newest_pairs(self, stores: Stores) -> None:
        store = stores.autoparser
        n = MAX_PAIRS_PER_HOST + 5
        for i in range(n):
            await store.add_pair(pair(i))
        await store.add_pair(pair(0, host="b.example"))
        got = await store.pairs("a.example")
        assert len(got) == MAX_PAIRS_PER_HOST
        assert got[0].url == "https://a.example/news/5"  # the five oldest went
        assert got[-1].url == f"https://a.example/news/{n - 1}"
        assert await store.pair_hosts() == {"a.example": MAX_PAIRS_PER_HOST, "b.example": 1}

    async def test_calibrations(self, stores: Stores) -> None:
        store = stores.autoparser
        assert await store.get_calibration("a.example") is None
        threshold = HostCalibration("a.example", "threshold", threshold=0.35, figures={"global": {"f1": 0.9}})
        await store.put_calibration(threshold)
        got = await store.get_calibration("a.example")
        assert got is not None
        assert (got.kind, got.threshold, got.model, got.figures) == ("threshold", 0.35, b"", {"global": {"f1": 0.9}})
        model = HostCalibration("a.example", "model", model=b"CBM\x00\x01" * 1000, trained_at=T0)
        await store.put_calibration(model)
        assert await store.get_calibration("a.example") == model
        assert await store.drop_calibration("a.example")
        assert not await store.drop_calibration("a.example")
        assert await store.get_calibration("a.example") is None
