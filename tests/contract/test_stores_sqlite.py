"""The store contract on the embedded SQLite engine, plus what only it promises (several processes)."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from shared.errors import ConfigError
from shared.stores import UpsertOutcome, open_stores
from tests.contract.lane_store_contract import LaneStoreContract
from tests.contract.notify_store_contract import NotifyStoreContract
from tests.contract.problem_store_contract import ProblemHistoryContract, ProblemStoreContract
from tests.contract.shop_store_contract import ShopStoreContract
from tests.contract.store_batch_contract import StoreBatchContract
from tests.contract.store_contract import URL, StoreContract, page
from tests.contract.task_list_contract import TaskListContract
from tests.searching import found


class TestSqliteStores(
    StoreContract,
    StoreBatchContract,
    ProblemStoreContract,
    LaneStoreContract,
    TaskListContract,
    ProblemHistoryContract,
    NotifyStoreContract,
    ShopStoreContract,
):
    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/store.db"  # tmp_path is absolute: sqlite:////tmp/…

    async def raw_rows(self, store_url: str, table: str) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(store_url[len("sqlite:///") :])
        try:
            return conn.execute(f"SELECT * FROM {table}").fetchall()
        finally:
            conn.close()


_WRITER = """
import asyncio, sys
from shared.stores import UpsertOutcome, open_stores
from tests.searching import found
from tests.contract.store_contract import page

async def main(url, start):
    stores = await open_stores(url)
    for v in range(start, 400, 4):
        await stores.pages.upsert(page(v))
    await stores.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


async def test_several_processes_share_one_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/store.db"
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", _WRITER, url, str(start), cwd=Path(__file__).parents[2]
        )
        for start in range(4)
    ]
    codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), timeout=60)
    assert codes == [0, 0, 0, 0]
    stores = await open_stores(url)
    try:
        got = await stores.pages.get(URL)
        assert got is not None
        assert got.version == 399
        assert got == page(399)
    finally:
        await stores.close()


async def test_relative_path_and_wal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    stores = await open_stores("sqlite:///var/nested/store.db")
    await stores.close()
    db = tmp_path / "var" / "nested" / "store.db"
    assert db.is_file()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


async def test_bad_urls_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"store\.url"):
        await open_stores("mysql://x/y")
    with pytest.raises(ConfigError, match="sqlite"):
        await open_stores("sqlite://relative-without-third-slash")


async def test_in_memory_database_for_unit_tests() -> None:
    async with await open_stores("sqlite:///:memory:") as stores:
        assert await stores.pages.upsert(page(1)) is UpsertOutcome.inserted
        assert await stores.pages.get(URL) == page(1)
        assert await found(stores, "body") == [URL]
