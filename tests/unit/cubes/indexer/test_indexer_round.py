"""The indexer's round: batch after batch until the queue is empty or the round's budget is spent."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import REGISTRY

from cubes.indexer.handler import Indexer
from shared.config import IndexerConfig
from shared.stores import Page, open_stores
from shared.stores.search import IndexRound


class _Queue:
    """A queue of ``rows`` rows, ``limit`` of them a batch."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.calls = 0

    async def index_pending(self, limit: int) -> IndexRound:
        self.calls += 1
        n = min(limit, self.rows)
        self.rows -= n
        return IndexRound(queued=n, indexed=n, lags_s=(0.5,) * n, cpu_s=0.001 * n)

    async def pending(self) -> int:
        return self.rows

    async def catch_up(self, limit: int = 500) -> int:
        raise AssertionError("the cube drains by rounds")


def _sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


async def test_a_round_drains_until_a_batch_comes_back_short() -> None:
    queue = _Queue(250)
    indexer = Indexer(queue, IndexerConfig(batch=100, round_budget_s=60.0))
    before = _sample("turbocubes_search_index_pages_total", {"outcome": "indexed"})
    lags = _sample("turbocubes_search_index_lag_seconds_count")
    assert await indexer.round() == []
    assert (queue.calls, queue.rows, indexer.indexed) == (3, 0, 250)
    assert _sample("turbocubes_search_index_pages_total", {"outcome": "indexed"}) - before == 250
    assert _sample("turbocubes_search_index_lag_seconds_count") - lags == 250
    assert _sample("turbocubes_search_index_pending") == 0


async def test_a_round_stops_at_its_budget_and_leaves_the_rest_for_the_next() -> None:
    queue = _Queue(1000)
    indexer = Indexer(queue, IndexerConfig(batch=100, round_budget_s=1e-9))
    await indexer.round()
    assert (queue.calls, queue.rows) == (1, 900)
    assert _sample("turbocubes_search_index_pending") == 900
    await indexer.round()
    assert queue.rows == 800


async def test_the_round_on_a_real_store_indexes_and_removes(tmp_path: Path) -> None:
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        page = Page(url="https://a.example/1", host="a.example", version=1, title="Zebra", text="z", doc_json=b"{}")
        await stores.pages.upsert(page)
        indexer = Indexer(stores.index_queue, IndexerConfig(batch=10))
        await indexer.round()
        await stores.pages.delete(page.url, 2)
        await indexer.round()
        assert (indexer.indexed, indexer.removed) == (1, 1)
        assert await stores.index_queue.pending() == 0
    finally:
        await stores.close()
