"""The team store's contract on the embedded SQLite engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract.team_store_contract import TeamStoreContract


class TestSqliteTeamStore(TeamStoreContract):
    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/store.db"
