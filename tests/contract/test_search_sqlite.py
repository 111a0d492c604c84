"""The search contract on SQLite (a fresh file per test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract.search_contract import SearchContract


class TestSqliteSearch(SearchContract):
    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/store.db"
