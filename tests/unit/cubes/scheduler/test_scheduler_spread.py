"""Feeds of one host are spread out: due times keep a gap."""

from __future__ import annotations

import itertools

import pytest

from cubes.scheduler.spread import HostIndex, effective_gap, spread


@pytest.mark.parametrize(
    ("candidate", "taken", "gap", "expected"),
    [
        (100.0, [], 10.0, 100.0),
        (100.0, [50.0, 200.0], 10.0, 100.0),  # far from both: unchanged
        (100.0, [95.0], 10.0, 105.0),  # too close after another: moved past it
        (100.0, [100.0], 10.0, 110.0),  # the same time: moved one gap on
        (100.0, [105.0], 10.0, 115.0),  # too close before another: moved past it (only later, never earlier)
        (100.0, [100.0, 110.0, 120.0], 10.0, 130.0),  # a run of neighbours
        (100.0, [100.0, 125.0], 10.0, 110.0),  # fits in the hole between them
        (100.0, [100.0], 0.0, 100.0),  # no gap asked
    ],
)
def test_spread_table(candidate: float, taken: list[float], gap: float, expected: float) -> None:
    assert spread(candidate, taken, gap) == pytest.approx(expected)


def test_spread_keeps_the_gap_for_many_feeds_falling_due_together() -> None:
    placed: list[float] = []
    for _ in range(40):
        placed.append(spread(1000.0, placed, 10.0))
    placed.sort()
    gaps = [b - a for a, b in itertools.pairwise(placed)]
    assert min(gaps) >= 10.0 - 1e-9
    assert placed[0] == 1000.0
    assert placed[-1] == pytest.approx(1000.0 + 39 * 10.0)


def test_effective_gap_fits_a_big_host_in_one_interval() -> None:
    assert effective_gap(10.0, 3600.0, 1) == 10.0
    assert effective_gap(10.0, 3600.0, 100) == 10.0
    assert effective_gap(10.0, 120.0, 100) == pytest.approx(1.2)


def test_host_index_tracks_per_host() -> None:
    idx = HostIndex()
    idx.set("a.example", "f1", 10.0)
    idx.set("a.example", "f2", 20.0)
    idx.set("b.example", "f3", 30.0)
    assert sorted(idx.others("a.example", "f1")) == [20.0]
    assert idx.count("a.example") == 2
    idx.set("b.example", "f1", 40.0)  # the feed moved host
    assert idx.others("a.example", "f9") == [20.0]
    assert sorted(idx.others("b.example", "x")) == [30.0, 40.0]
    idx.discard("f2")
    assert idx.count("a.example") == 0
