"""A PostgreSQL schema of its own for one test: the store URL naming it, dropped afterwards."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from shared.stores.postgres import split_schema

__all__ = ["fresh_schema"]


@asynccontextmanager
async def fresh_schema(postgres_url: str, prefix: str = "t") -> AsyncIterator[str]:
    """``postgres_url`` with ``?schema=`` a new name (the stores create it); the schema is dropped on exit."""
    schema = f"{prefix}_{uuid.uuid4().hex[:16]}"
    url = f"{postgres_url}{'&' if '?' in postgres_url else '?'}schema={schema}"
    try:
        yield url
    finally:
        dsn, _ = split_schema(url)
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        finally:
            await conn.close()
