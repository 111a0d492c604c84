"""The autoparser store's contract on the embedded SQLite engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract.autoparser_store_contract import AutoparserStoreContract


class TestSqliteAutoparserStore(AutoparserStoreContract):
    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/store.db"
