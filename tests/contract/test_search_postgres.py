"""The search contract on PostgreSQL (``ops/postgres/start``), a fresh schema per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from tests.contract.search_contract import SearchContract


@pytest.mark.postgres
class TestPostgresSearch(SearchContract):
    @pytest.fixture
    async def store_url(self, postgres_url: str) -> AsyncIterator[str]:
        schema = f"t_{uuid.uuid4().hex[:16]}"
        yield f"{postgres_url}?schema={schema}"
        conn = await asyncpg.connect(postgres_url)
        try:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        finally:
            await conn.close()
