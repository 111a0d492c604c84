"""The team store's contract on PostgreSQL (started by ``ops/postgres/start``), one fresh schema per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.contract.team_store_contract import TeamStoreContract
from tests.pgschema import fresh_schema


@pytest.mark.postgres
class TestPostgresTeamStore(TeamStoreContract):
    @pytest.fixture
    async def store_url(self, postgres_url: str) -> AsyncIterator[str]:
        async with fresh_schema(postgres_url) as url:
            yield url
