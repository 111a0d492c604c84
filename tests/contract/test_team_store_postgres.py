"""The team store's contract on PostgreSQL (started by ``ops/postgres/start``), one fresh schema per test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest

from shared.stores import Stores
from shared.stores.postgres.db import split_schema
from tests.contract.team_store_contract import HASH, T0, TeamStoreContract
from tests.pgschema import fresh_schema


@pytest.mark.postgres
class TestPostgresTeamStore(TeamStoreContract):
    @pytest.fixture
    async def store_url(self, postgres_url: str) -> AsyncIterator[str]:
        async with fresh_schema(postgres_url) as url:
            yield url

    async def test_two_owners_demoting_each_other_at_once_leave_an_owner(self, stores: Stores, store_url: str) -> None:
        # the second owner's demotion of the first is in flight in another transaction (its guard passed,
        # not yet committed) while the first owner demotes the second: each statement alone sees two
        # owners in its snapshot; the store's must wait for the other and then count one
        team = stores.tenants.team
        first = await team.add_user("ta", "first@a", "owner", HASH, now=T0)
        second = await team.add_user("ta", "second@a", "owner", HASH, now=T0)
        assert first is not None
        assert second is not None
        dsn, schema = split_schema(store_url)
        other = await asyncpg.connect(dsn, server_settings={"search_path": str(schema)})
        watcher = await asyncpg.connect(dsn)
        try:
            tx = other.transaction()
            await tx.start()
            await other.execute("UPDATE team_users SET role = 'editor' WHERE user_id = $1", first.user_id)
            demote = asyncio.create_task(team.set_role("ta", second.user_id, "editor"))
            deadline = asyncio.get_running_loop().time() + 30
            # the store's statement either finished (no lock: the race) or waits on the other's row lock
            while not demote.done():
                waiting = await watcher.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND query LIKE '%UPDATE team_users%' AND pid <> $1",
                    other.get_server_pid(),
                )
                if waiting:
                    break
                assert asyncio.get_running_loop().time() < deadline, "the demotion neither ended nor waited"
                await asyncio.sleep(0.05)  # a poll interval, not a synchronization
            await tx.commit()
            changed = await asyncio.wait_for(demote, 30)
        finally:
            await other.close()
            await watcher.close()
        assert not changed  # refused: it would have left the tenant with no owner
        assert sorted((u.login, u.role) for u in await team.users("ta")) == [
            ("first@a", "editor"),
            ("second@a", "owner"),
        ]
