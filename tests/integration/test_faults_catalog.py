"""PostgreSQL killed with kill -9 during a catalog's first load: nothing acknowledged is lost
(docs/architecture.md sections 4 and 9).

The cluster topology (``ops/topology/start``: one process per cube) on the shared Kafka, PostgreSQL
and SeaweedFS loads a shop's YML catalog of ``OFFERS`` offers (``faults_site.py``, ``/catalog.xml``;
over ``inline_body_max``, so the crawler hands it to the parser through S3). Once the parser has
published a few of its 1,000-offer batches, the postmaster is killed with kill -9 and, after a few
seconds, started again (crash recovery on its data). At the end every offer has its page, nothing
is parked in Delay, no dead letter, and the fetch's report says it sent them all on.

With ``synchronous_commit=off`` (what ``ops/postgres/start`` ran before) such a kill left 29,940 and
29,986 of 30,000 pages for good: every parser hash recorded (the next fetch finds them unchanged),
each missing offer delivered once, the kvwriter's lag 0, and nothing reported.
"""

from __future__ import annotations

import asyncio
import time

import asyncpg
import pytest

from shared.stores import Stores
from shared.urls import canonical_url
from shared.webmaster.feeds import feed_id_for
from tests.integration.faults_engines import Engines
from tests.integration.faults_site import FaultSite
from tests.integration.faults_topology import FaultTopology, until

OFFERS = 20_000
#: the kill comes once this many documents are out of the parser (two batches), before it is through
KILL_AFTER = 2_000
POSTGRES_DOWN_S = 5.0
#: the parser's load, then the media cube and the kvwriter through 20,000 documents, on a busy machine
SETTLE_TIMEOUT_S = 300.0
LOAD_TIMEOUT_S = 120.0

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.s3, pytest.mark.slow, pytest.mark.timeout(900)]


async def test_nothing_acknowledged_is_lost_when_postgresql_dies_during_a_first_load(
    kafka_url: str, postgres_url: str, s3_url: str, uid: str
) -> None:
    topo = FaultTopology(kafka_url, postgres_url, s3_url, uid, TURBOCUBES_DELAY_SWEEP_INTERVAL_S="1")
    engines = Engines()
    site = FaultSite(0, rate=50, catalog_offers=OFFERS)
    site.start()
    url = site.url("/catalog.xml")
    expected = {canonical_url(site.offer_url(n)) for n in range(OFFERS)}
    stores: Stores | None = None
    passed = False
    timeline: list[str] = []
    t_start = time.monotonic()

    def note(msg: str) -> None:
        line = f"[{time.monotonic() - t_start:6.1f}s] {msg}"
        timeline.append(line)
        print(line, flush=True)

    async def offers_written() -> set[str]:
        conn = await asyncpg.connect(postgres_url)
        try:
            sql = f'SELECT url FROM "{topo.schema}".pages WHERE url LIKE $1'
            rows = await conn.fetch(sql, f"{site.url('')}/product/%")
        finally:
            await conn.close()
        return {r["url"] for r in rows}

    try:
        await topo.start()
        note("topology up")
        await topo.add_feed(url, "yml")
        note(f"catalog registered: {url} ({OFFERS:,} offers)")

        async def loading() -> bool:
            return await topo.end_offsets("documents.parsed") >= KILL_AFTER

        await until(f"the parser to publish {KILL_AFTER} documents", loading, LOAD_TIMEOUT_S)
        out_at_kill = await topo.end_offsets("documents.parsed")
        pid = await engines.postgres_kill()
        note(f"PostgreSQL postmaster pid {pid} killed with kill -9; {out_at_kill:,} documents out of the parser")
        assert out_at_kill < OFFERS, "the parser was through before the kill: the test showed nothing"
        await asyncio.sleep(POSTGRES_DOWN_S)  # the length of the outage, not a synchronization
        t0 = time.monotonic()
        await engines.postgres_start()
        note(f"PostgreSQL recovered and answering after {time.monotonic() - t0:.1f} s")

        written: set[str] = set()
        dead: dict[str, int] = {}

        async def settled() -> bool:
            nonlocal written, dead
            written = await offers_written()
            if len(written) >= OFFERS:
                return True
            dead = await topo.dead_letters()  # a dead letter is a loss: no need to wait any longer
            return bool(dead)

        try:
            took = await until("every offer's page", settled, SETTLE_TIMEOUT_S)
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}: {len(written):,}/{OFFERS:,} offers written (missing e.g. {sorted(expected - written)[:5]})\n"
                + "\n".join(timeline)
                + "\n"
                + topo.log_digest()
            ) from None
        assert not dead, f"dead letters: {dead}\n" + topo.log_digest()
        note(f"every offer written, {took:.0f} s after the restart")
        assert written == expected
        stores = await topo.stores()
        assert await stores.delay.count() == 0, "documents left parked in Delay"
        # the fetch that published them says so (a retry of it never rewrites its counts)
        reports = await stores.problems.reports(feed_id_for(None, canonical_url(url)))
        assert reports, "no fetch report"
        assert (reports[-1].result, reports[-1].changed) == ("parsed", OFFERS + 1), reports[-1]  # + the listing
        passed = True
    finally:
        problems = await engines.restore()
        site.stop()
        if stores is not None:
            await stores.close()
        print("\n".join(timeline))
        rc_stop, out_stop = await topo.close(passed)
    assert not problems, problems
    assert rc_stop == 0, out_stop
