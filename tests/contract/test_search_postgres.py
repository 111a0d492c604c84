"""The search contract on PostgreSQL (``ops/postgres/start``), a fresh schema per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.contract.search_contract import SearchContract
from tests.pgschema import fresh_schema


@pytest.mark.postgres
class TestPostgresSearch(SearchContract):
    @pytest.fixture
    async def store_url(self, postgres_url: str) -> AsyncIterator[str]:
        async with fresh_schema(postgres_url) as url:
            yield url
