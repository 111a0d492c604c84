"""The adaptive policy is a pure function: exact values, no clock, no randomness."""

from __future__ import annotations

import itertools

import pytest

from cubes.crawler.policy import (
    BACKOFF_BASE_S,
    BACKOFF_MAX_S,
    MIN_RATE,
    QUIET_PERIOD_S,
    PolicyLimits,
    PolicyState,
    Signal,
    SignalKind,
    adapt,
)

LIMITS = PolicyLimits(configured_rate=2.0, max_rate=10.0)
OK = Signal(SignalKind.ok, latency_s=0.05)


def test_multiplicative_decrease_on_distress() -> None:
    for kind in (SignalKind.unavailable, SignalKind.server_error, SignalKind.timeout, SignalKind.throttled):
        s = adapt(PolicyState(rate=2.0), Signal(kind), 100.0, LIMITS)
        assert s.rate == pytest.approx(1.0), kind


def test_additive_increase_never_above_ceiling() -> None:
    s = PolicyState(rate=0.5)
    rates = []
    for i in range(100):
        s = adapt(s, OK, float(i), LIMITS)
        rates.append(s.rate)
    assert rates[0] == pytest.approx(0.6)  # +5 % of the ceiling (2.0) per healthy answer
    assert all(b >= a for a, b in itertools.pairwise(rates))
    assert max(rates) == 2.0  # the configured rate is the ceiling


def test_ceiling_is_the_lower_of_configured_and_max_rate() -> None:
    limits = PolicyLimits(configured_rate=50.0, max_rate=10.0)
    s = adapt(PolicyState(rate=50.0), OK, 0.0, limits)
    assert s.rate == 10.0


def test_floor() -> None:
    s = PolicyState(rate=MIN_RATE)
    s = adapt(s, Signal(SignalKind.timeout), 0.0, LIMITS)
    assert s.rate == MIN_RATE


def test_rising_latency_slows_down() -> None:
    s = PolicyState(rate=2.0, latency_avg_s=0.1)
    slow = adapt(s, Signal(SignalKind.ok, latency_s=2.0), 0.0, LIMITS)
    assert slow.rate == pytest.approx(1.6)
    fine = adapt(s, Signal(SignalKind.ok, latency_s=0.25), 0.0, LIMITS)  # 2.5x avg but under a second
    assert fine.rate == 2.0


def test_retry_after_pauses_the_lane() -> None:
    s = adapt(PolicyState(rate=2.0), Signal(SignalKind.throttled, retry_after_s=3.0), 100.0, LIMITS)
    assert s.paused_until == 103.0
    assert s.incidents == 0  # the host said when: no escalation
    s2 = adapt(PolicyState(rate=2.0), Signal(SignalKind.unavailable, retry_after_s=30.0), 100.0, LIMITS)
    assert s2.paused_until == 130.0


def test_429_without_retry_after_doubles_up_to_a_day_and_is_forgiven() -> None:
    s = PolicyState(rate=2.0)
    now = 1000.0
    pauses = []
    for _ in range(14):
        s = adapt(s, Signal(SignalKind.throttled), now, LIMITS, jitter=0.5)  # 0.5 = no jitter
        pauses.append(s.paused_until - now)
        now = s.paused_until  # the next incident right after the pause
    assert pauses[:4] == [BACKOFF_BASE_S, 2 * BACKOFF_BASE_S, 4 * BACKOFF_BASE_S, 8 * BACKOFF_BASE_S]
    assert max(pauses) == BACKOFF_MAX_S
    # a quiet period forgives: back to the first step
    later = now + QUIET_PERIOD_S + BACKOFF_MAX_S
    s = adapt(s, Signal(SignalKind.throttled), later, LIMITS, jitter=0.5)
    assert s.paused_until - later == BACKOFF_BASE_S
    assert s.incidents == 1


def test_429_pause_jitter_is_bounded() -> None:
    lo = adapt(PolicyState(rate=2.0), Signal(SignalKind.throttled), 0.0, LIMITS, jitter=0.0).paused_until
    hi = adapt(PolicyState(rate=2.0), Signal(SignalKind.throttled), 0.0, LIMITS, jitter=0.999).paused_until
    assert lo == pytest.approx(48.0)
    assert 71.9 < hi < 72.0
