"""The production store engine's connections: PostgreSQL through an asyncpg pool (docs/architecture.md section 4).

``postgresql://user:pass@host:port/db`` (``postgres://`` too). An optional
``?schema=NAME`` keeps every table in that schema (created when missing) by
setting ``search_path`` on each pooled connection; the contract tests use a
fresh schema per test so they never see each other's data.

asyncpg stays inside ``shared/stores/postgres/`` (docs/conventions.md rule 4): connection-level
failures become ``StoreUnavailable``, and so do serialization failures and
deadlocks, which a retry resolves.

Every round trip to the server (a statement, a ``BEGIN``, a ``COMMIT``) is
counted in ``turbocubes_postgres_round_trips_total{store}``, from the driver's
own count of the requests it sent on the connection while a store held it, so
``bench/e2e.py`` can print round trips per document. A statement's first use
on a connection costs a few more (asyncpg prepares it and looks up its types;
the preparation itself is not counted), once per statement text and
connection: asyncpg keeps the prepared statements of each connection.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg
from prometheus_client import Counter

from shared.errors import ConfigError, StoreUnavailable
from shared.outages import ClientLogGate
from shared.stores.migrations import POSTGRES
from shared.stores.postgres.batch import Inflight
from shared.stores.postgres.durability import RISKS, SETTINGS_SQL, check_durable

__all__ = ["ROUND_TRIPS", "PgDb", "connect", "split_schema", "unnest_columns"]

T = TypeVar("T")
log = logging.getLogger("turbocubes.stores")

#: how long closing waits for busy connections before it terminates them (a graceful close of an idle
#: pool takes milliseconds; a query the server is still running gets this long to end)
POOL_CLOSE_TIMEOUT_S = 5.0

#: an advisory lock key (any constant) that serializes migrations of concurrent openers
_MIGRATION_LOCK = 0x7475_7262_6F63  # "turboc"
_SCHEMA_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
#: errors a retry can cure: the server went away, is starting, is full, or chose us as a victim
_TRANSIENT: tuple[type[BaseException], ...] = (
    OSError,
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.TooManyConnectionsError,
    asyncpg.exceptions.SerializationError,
    asyncpg.exceptions.DeadlockDetectedError,
    asyncpg.exceptions.InterfaceError,
)
_PLACEHOLDER = re.compile(r"\?")
#: asyncpg's pool logs a traceback each time it fails to reconnect to a server that is away
#: ("Failed to restore the pool connection floor"): that is the store's outage, told once
#: (shared/outages.py), and held back to DEBUG while it lasts
GATE = ClientLogGate(
    "store",
    re.compile(
        r"connection floor|Connection refused|CannotConnectNow|ConnectionDoesNotExist|connection was closed"
        r"|ConnectionResetError|the database system is"
    ),
)
GATE.install("asyncpg", ["asyncpg.pool"])


ROUND_TRIPS = Counter(
    "turbocubes_postgres_round_trips_total",
    "Requests the PostgreSQL store engine sent and waited for (statements, BEGIN, COMMIT), by store",
    ["store"],
)


def _protocol(conn: asyncpg.Connection) -> Any:
    """The driver's protocol object of ``conn``: it counts the requests sent on the connection
    (``queries_count``; the pool reads the same count for ``max_queries``), and it outlives the
    connection, so the count can be read after the server went away. No public accessor."""
    return conn._protocol


def split_schema(url: str) -> tuple[str, str | None]:
    """The DSN without ``schema=`` and the schema name (validated, since it is spliced into SQL)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), None)
    if schema is not None and not _SCHEMA_RE.match(schema):
        raise ConfigError("store.url", url, "schema= a lower-case SQL identifier ([a-z_][a-z0-9_]*)")
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    scheme = "postgresql" if parts.scheme == "postgres" else parts.scheme
    return urlunsplit((scheme, parts.netloc, parts.path, rest, parts.fragment)), schema


class PgDb:
    """The pool plus the ``SqlRunner`` of ``sql/runner.py`` (``?`` rewritten to ``$n``).

    ``view(store)`` is the same pool with its round trips counted under that store's name."""

    def __init__(self, pool: asyncpg.Pool, url: str, store: str = "other") -> None:
        self.pool = pool
        self.url = url
        self.store = store
        self._sql_cache: dict[str, str] = {}
        self._round_trips = ROUND_TRIPS.labels(store)
        #: statements that batches of this pool have sent (``batch.py``): ``close`` waits for them
        self.inflight = Inflight()

    def view(self, store: str) -> PgDb:
        """This pool, counting round trips under ``store``."""
        other = PgDb(self.pool, self.url, store)
        other._sql_cache = self._sql_cache
        other.inflight = self.inflight
        return other

    def _sql(self, sql: str) -> str:
        converted = self._sql_cache.get(sql)
        if converted is None:
            counter = iter(range(1, 10_000))
            converted = _PLACEHOLDER.sub(lambda _m: f"${next(counter)}", sql)
            self._sql_cache[sql] = converted
        return converted

    @asynccontextmanager
    async def guard(self) -> AsyncIterator[None]:
        """Turn transient driver errors into ``StoreUnavailable``."""
        try:
            yield
        except _TRANSIENT as exc:
            raise StoreUnavailable(f"postgresql: {type(exc).__name__}: {exc}") from exc

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[asyncpg.Connection]:
        """A pooled connection, its round trips counted; transient errors become ``StoreUnavailable``."""
        async with self.guard(), self.pool.acquire() as conn:
            protocol = _protocol(conn)
            before = protocol.queries_count
            try:
                yield conn
            finally:
                self._round_trips.inc(protocol.queries_count - before)

    async def tx(self, fn: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        """Run ``fn(conn)`` in a transaction on a pooled connection."""
        async with self.connection() as conn, conn.transaction():
            return await fn(conn)

    async def fetch(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        async with self.connection() as conn:
            return list(await conn.fetch(self._sql(sql), *args))

    async def fetchone(self, sql: str, *args: Any) -> tuple[Any, ...] | None:
        async with self.connection() as conn:
            row: tuple[Any, ...] | None = await conn.fetchrow(self._sql(sql), *args)
            return row

    async def execute(self, sql: str, *args: Any) -> int:
        async with self.connection() as conn:
            status: str = await conn.execute(self._sql(sql), *args)
        tail = status.rsplit(" ", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    async def execute_returning(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return await self.fetch(sql, *args)

    async def migrate(self, schema: str | None) -> None:
        async with self.connection() as conn, conn.transaction():
            # the lock first: CREATE SCHEMA IF NOT EXISTS is not atomic against itself, and a dozen
            # processes starting at once (ops/topology) made one of them fail with a unique violation
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            if schema is not None:
                await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                " name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            for version, name, statements in POSTGRES:
                done = await conn.fetchval("SELECT 1 FROM schema_migrations WHERE version = $1", version)
                if done is None:
                    for statement in statements:
                        await conn.execute(statement)
                    await conn.execute("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", version, name)

    async def close(self) -> None:
        await self.inflight.wait()  # callers of a batch in flight hear its answer
        # Pool.close waits for every connection to be released, and a connection whose query was
        # cancelled may never be (MagicStack/asyncpg#431): asyncpg's advice is a timeout, on which
        # close() terminates the pool (closes the sockets outright) -- so shutdown ends, and no
        # connection is left open to warn later
        try:
            await asyncio.wait_for(self.pool.close(), POOL_CLOSE_TIMEOUT_S)
        except TimeoutError:
            log.warning("postgresql: connections still busy after %.0fs; pool terminated", POOL_CLOSE_TIMEOUT_S)


async def _keep_session(conn: asyncpg.Connection) -> None:
    """The pool's reset on release: nothing beyond what asyncpg always does (roll back a transaction
    left open). Its default also sends ``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *;
    RESET ALL`` -- a round trip on every release, one per store call -- for session state these
    stores never make: their advisory locks are transaction-scoped, they open no cursor outside a
    transaction, never LISTEN, and set search_path as a startup parameter, not with SET."""


async def connect(url: str, pool_size: int = 10, *, accept_lossy_commits: bool = False) -> PgDb:
    """A pool on ``url`` (its ``schema=`` as the search path), migrated. ``StoreUnavailable`` if unreachable;
    ``ConfigError`` if the server may lose acknowledged commits and ``accept_lossy_commits`` is not set
    (``durability.py``)."""
    dsn, schema = split_schema(url)
    settings = {"search_path": schema} if schema else {}
    try:
        pool = await asyncpg.create_pool(
            dsn,
            min_size=1,
            max_size=max(pool_size, 1),
            server_settings=settings,
            command_timeout=60,
            reset=_keep_session,
        )
    except _TRANSIENT as exc:
        raise StoreUnavailable(f"postgresql: cannot connect: {type(exc).__name__}: {exc}") from exc
    db = PgDb(pool, url)
    try:
        async with db.connection() as conn:
            rows = await conn.fetch(SETTINGS_SQL, list(RISKS))
        parts = urlsplit(dsn)
        check_durable(f"{parts.hostname}:{parts.port or 5432}", {r[0]: r[1] for r in rows}, accept=accept_lossy_commits)
        await db.migrate(schema)
    except BaseException:
        await pool.close()
        raise
    return db


def unnest_columns(rows: Any, width: int) -> list[list[Any]]:
    """Rows as ``width`` column lists, the parameters of an ``unnest`` insert."""
    cols: list[list[Any]] = [[] for _ in range(width)]
    for row in rows:
        for col, value in zip(cols, row, strict=True):
            col.append(value)
    return cols
