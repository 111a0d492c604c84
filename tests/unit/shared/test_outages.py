"""Outages told once: a WARNING when one begins, one when it ends, a gauge and a problem between; a
client library's own log held back meanwhile (shared/outages.py)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from shared import contracts
from shared.bus.sqlite import SqliteBus
from shared.errors import StoreUnavailable
from shared.outages import OUTAGES, ClientLogGate, Outages
from shared.runtime import Cube, Output, Runner
from tests.contract.bus_contract import Item, make_deps, produce, register


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    OUTAGES.clear()
    yield
    OUTAGES.clear()


def _gauge(dependency: str) -> float | None:
    return REGISTRY.get_sample_value("turbocubes_dependency_down", {"dependency": dependency})


def _told(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "turbocubes.outages" and r.levelno >= logging.WARNING]


def test_an_outage_is_one_warning_when_it_begins_and_one_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    outages = Outages()
    with caplog.at_level(logging.DEBUG, logger="turbocubes.outages"):
        assert outages.down("store", "timer tick: StoreUnavailable: refused")
        for _ in range(500):
            assert not outages.down("store", "again")
        assert _gauge("store") == 1
        (p,) = outages.problems()
        assert p.code == "engine.unavailable"
        assert "the store" in p.message
        assert "501 failure(s)" in p.message
        assert outages.up("store")
        assert not outages.up("store")  # once
    told = _told(caplog)
    assert len(told) == 2, told
    assert "the store is unreachable (timer tick: StoreUnavailable: refused)" in told[0]
    assert re.search(r"the store is back after \d+ s \(501 failure\(s\)", told[1])
    assert _gauge("store") == 0
    assert outages.problems() == []


def test_a_client_librarys_connection_errors_begin_an_outage_and_its_log_is_held_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outages = Outages()
    gate = ClientLogGate("bus", re.compile("Unable connect"), outages)
    heard: list[str] = []
    gate.listen(heard.append)
    client = logging.getLogger("test.client.lib")
    gate.install("test.client")
    with caplog.at_level(logging.INFO):
        client.error("Topic x not found in cluster metadata")  # not a connection error: passes, no outage
        assert not outages.is_down("bus")
        for _ in range(300):  # what aiokafka logs in ~3 s of an outage
            client.error("Unable connect to node with id 1: [Errno 111] Connection refused")
            client.info("Discovered coordinator 1 for group g")
        assert outages.is_down("bus")
        outages.up("bus")
        client.warning("Heartbeat failed for group g: rebalancing")
        client.warning("Heartbeat failed for group g: rebalancing")  # the same line within a minute: held
        for _ in range(30):  # a restarted broker loading its groups: once, not twice a second
            client.info("Discovered coordinator 1 for group g")
        client.info("Discovered coordinator 1 for group h")  # another line: passes
    lines = [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG]
    assert lines == [
        "Topic x not found in cluster metadata",
        "the bus is unreachable (test.client.lib: Unable connect to node with id 1: [Errno 111] Connection "
        "refused); the work waits for it and goes on where it stopped once it is back",
        lines[2],
        "Heartbeat failed for group g: rebalancing",
        "Discovered coordinator 1 for group g",
        "Discovered coordinator 1 for group h",
    ], lines
    assert lines[2].startswith("the bus is back after ")
    assert len(heard) == 300
    assert gate.held == 601 + 29


async def test_a_store_outage_met_by_every_lane_is_told_once(
    tmp_path: Path, uid: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Handlers on many lanes meet the store down for a while: the runtime waits each of them out, and
    the log says it twice in all (it said it at every wait of every lane)."""
    bus = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await bus.start()
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    n = 16
    await produce(bus, t_in, [(f"k{i}", contracts.encode(t_in, Item(id=f"k{i}", n=i))) for i in range(n)])
    failures = {"left": 2 * n}

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        if failures["left"] > 0:
            failures["left"] -= 1
            raise StoreUnavailable("postgresql: ConnectionRefusedError: [Errno 111] Connection refused")
        return [Output(t_out, msg)]

    runner = Runner(Cube(f"c-{uid}", (t_in,), (t_out,), handle), make_deps(bus, concurrency=n), max_messages=n)
    try:
        with caplog.at_level(logging.INFO):
            stats = await runner.run()
    finally:
        await bus.close()
    assert stats.processed == n
    assert stats.outage_waits >= n
    told = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(told) == 2, told
    assert "the store is unreachable" in told[0]
    assert "the store is back after" in told[1]
