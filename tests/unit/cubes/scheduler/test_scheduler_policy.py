"""The adaptive interval: tables of outcome -> interval, bounds, backoff, jitter."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from cubes.scheduler.policy import (
    Outcome,
    backoff,
    classify,
    jittered,
    next_delay,
    next_interval,
)
from shared.config import SchedulerConfig
from shared.messages import FetchStatus

CFG = SchedulerConfig(min_interval_s=120.0, max_interval_s=21_600.0, jitter=0.1)
NO_JITTER = SchedulerConfig(min_interval_s=120.0, max_interval_s=21_600.0, jitter=0.0)


@pytest.mark.parametrize(
    ("status", "body_hash", "last_hash", "expected"),
    [
        (FetchStatus.ok, "a", None, Outcome.changed),  # first body ever
        (FetchStatus.ok, "b", "a", Outcome.changed),
        (FetchStatus.ok, "a", "a", Outcome.unchanged),  # 200 with the same bytes
        (FetchStatus.ok, None, "a", Outcome.changed),  # unknown hash: assume news
        (FetchStatus.not_modified, None, "a", Outcome.unchanged),
        (FetchStatus.http_5xx, None, "a", Outcome.failed),
        (FetchStatus.timeout, None, None, Outcome.failed),
        (FetchStatus.robots_denied, None, None, Outcome.failed),
        (FetchStatus.throttled, None, None, Outcome.failed),
    ],
)
def test_classify(status: FetchStatus, body_hash: str | None, last_hash: str | None, expected: Outcome) -> None:
    assert classify(status, body_hash, last_hash) is expected


@pytest.mark.parametrize(
    ("previous", "outcome", "expected"),
    [
        (None, Outcome.changed, 120.0),  # a new feed starts at the minimum (and cannot go lower)
        (None, Outcome.unchanged, 180.0),
        (1000.0, Outcome.changed, 500.0),  # changed -> shorter
        (1000.0, Outcome.unchanged, 1500.0),  # 304 / same hash -> longer
        (200.0, Outcome.changed, 120.0),  # bounded by the minimum
        (20_000.0, Outcome.unchanged, 21_600.0),  # bounded by the maximum
        (1000.0, Outcome.failed, 1000.0),  # a failure leaves the healthy interval alone
        (5.0, Outcome.failed, 120.0),  # an out-of-bounds stored value is pulled back in
    ],
)
def test_next_interval(previous: float | None, outcome: Outcome, expected: float) -> None:
    assert next_interval(previous, outcome, CFG) == pytest.approx(expected)


def test_quiet_feed_climbs_to_the_maximum_and_stays() -> None:
    interval: float | None = None
    seen = []
    for _ in range(30):
        interval = next_interval(interval, Outcome.unchanged, CFG)
        seen.append(interval)
    assert seen == sorted(seen)
    assert seen[-1] == CFG.max_interval_s
    assert seen.index(CFG.max_interval_s) < 15


def test_failure_backoff_grows_and_caps() -> None:
    delays = [backoff(n, CFG) for n in range(1, 20)]
    assert delays[:4] == [120.0, 240.0, 480.0, 960.0]
    assert all(b >= a for a, b in itertools.pairwise(delays))
    assert delays[-1] == CFG.max_interval_s
    assert backoff(10_000, CFG) == CFG.max_interval_s  # never overflows, never gives up


@pytest.mark.parametrize("u", [0.0, 0.25, 0.5, 0.999999])
@pytest.mark.parametrize("seconds", [120.0, 1000.0, 21_600.0])
def test_jitter_within_bounds(u: float, seconds: float) -> None:
    value = jittered(seconds, u, CFG)
    assert CFG.min_interval_s <= value <= CFG.max_interval_s
    assert seconds * 0.9 - 1e-6 <= value <= seconds * 1.1 + 1e-6


def test_jitter_spreads_values() -> None:
    assert jittered(1000.0, 0.0, CFG) == pytest.approx(900.0)
    assert jittered(1000.0, 0.5, CFG) == pytest.approx(1000.0)
    assert jittered(1000.0, 0.99, CFG) == pytest.approx(1098.0)


def test_next_delay_failure_uses_backoff_and_retry_after() -> None:
    common: dict[str, Any] = {"interval": 1000.0, "websub_lease_left": None, "u": 0.5, "cfg": NO_JITTER}
    assert next_delay(outcome=Outcome.failed, failures=3, retry_after=None, **common) == 480.0
    # the partner asked for longer than the backoff: honoured
    assert next_delay(outcome=Outcome.failed, failures=1, retry_after=3600.0, **common) == 3600.0
    # ... but never beyond the maximum, so the feed is never given up
    assert next_delay(outcome=Outcome.failed, failures=1, retry_after=1e9, **common) == 21_600.0


def test_next_delay_retry_after_not_undercut_by_jitter() -> None:
    delay = next_delay(
        interval=1000.0,
        outcome=Outcome.failed,
        failures=1,
        websub_lease_left=None,
        retry_after=600.0,
        u=0.0,
        cfg=CFG,
    )
    assert delay >= 600.0


def test_next_delay_websub_polls_at_the_maximum() -> None:
    delay = next_delay(
        interval=500.0,
        outcome=Outcome.changed,
        failures=0,
        websub_lease_left=864_000.0,
        retry_after=None,
        u=0.5,
        cfg=CFG,
    )
    assert delay == CFG.max_interval_s
    healthy = next_delay(
        interval=500.0,
        outcome=Outcome.changed,
        failures=0,
        websub_lease_left=None,
        retry_after=None,
        u=0.5,
        cfg=CFG,
    )
    assert healthy == pytest.approx(500.0)


def test_next_delay_short_websub_lease_polls_before_expiry() -> None:
    delay = next_delay(
        interval=500.0,
        outcome=Outcome.unchanged,
        failures=0,
        websub_lease_left=3600.0,
        retry_after=None,
        u=0.5,
        cfg=CFG,
    )
    assert delay == pytest.approx(1800.0)
    expired = next_delay(
        interval=500.0,
        outcome=Outcome.unchanged,
        failures=0,
        websub_lease_left=-1.0,
        retry_after=None,
        u=0.5,
        cfg=CFG,
    )
    assert expired == pytest.approx(500.0)
