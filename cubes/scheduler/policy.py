"""When a feed is fetched next: the adaptive interval as pure functions (docs/architecture.md sections 3 and 6).

Nothing here reads a clock or a random source: the caller passes ``now`` (or a
fetch time) and a uniform draw ``u`` in ``[0, 1)``, so tests pin every value.

The rules:

* a feed that **changed** on its last fetch is polled more often (the interval
  halves), one that answered ``304`` / ``not_modified`` or the same content
  hash less often (x1.5), always within ``[min_interval_s, max_interval_s]``;
* a **failing** feed is never given up: its delay grows exponentially from the
  minimum with each consecutive failure, up to the maximum, and a
  ``Retry-After`` the partner sent is honoured when it asks for longer;
* a feed with a live **WebSub** subscription is pushed to, so polling is only
  the safety net and runs at the maximum interval (or at half the lease left,
  when a hub grants a short lease, so the renewing poll comes before expiry);
* every delay is **jittered** by ``+/- jitter`` of itself so feeds registered
  together drift apart instead of falling due together forever;
* a feed that says how often it changes (``<ttl>``, ``sy:updatePeriod``) is polled at that
  interval, and never before its answer goes stale (``Cache-Control``, ``Expires``), within the
  same bounds (``follow_origin``; the origin's values are read in ``origin.py``). Jitter only
  lengthens what an origin asked for: a poll never comes sooner than the feed allowed.

``interval_s`` in the feed status is the *healthy* adaptive interval; the
failure backoff is computed from ``consecutive_failures`` alone, so a feed that
recovers resumes where it was instead of at the top of the backoff.
"""

from __future__ import annotations

from enum import StrEnum

from cubes.scheduler.origin import OriginSchedule
from shared.config import SchedulerConfig
from shared.messages import FetchStatus
from shared.runtime.retry import backoff_s

__all__ = [
    "CHANGED_FACTOR",
    "UNCHANGED_FACTOR",
    "Outcome",
    "backoff",
    "clamp",
    "classify",
    "follow_origin",
    "jittered",
    "next_delay",
    "next_interval",
]

#: a changed feed is polled twice as often next time: catches a burst of news within two polls
CHANGED_FACTOR = 0.5
#: an unchanged feed backs off gently: from 2 min to 6 h in ~13 quiet polls
UNCHANGED_FACTOR = 1.5


class Outcome(StrEnum):
    """What one fetch taught the scheduler."""

    changed = "changed"  # a body that differs from the last one (or the first body ever)
    unchanged = "unchanged"  # 304 / not_modified, or the same content hash
    failed = "failed"  # anything else: network, HTTP error, robots, blocked address, ...


def classify(status: FetchStatus, body_hash: str | None, last_hash: str | None) -> Outcome:
    """Map a crawl result to an ``Outcome``. An ``ok`` body whose hash is unknown counts as changed."""
    if status is FetchStatus.not_modified:
        return Outcome.unchanged
    if status is FetchStatus.ok:
        if body_hash is not None and body_hash == last_hash:
            return Outcome.unchanged
        return Outcome.changed
    return Outcome.failed


def clamp(seconds: float, cfg: SchedulerConfig) -> float:
    return min(cfg.max_interval_s, max(cfg.min_interval_s, seconds))


def next_interval(previous: float | None, outcome: Outcome, cfg: SchedulerConfig) -> float:
    """The healthy polling interval after ``outcome``; a failure leaves it as it was.

    ``previous`` None (a new feed) starts at the minimum: we know nothing yet,
    and a quiet feed climbs to the maximum in a few hours anyway.
    """
    base = cfg.min_interval_s if previous is None else previous
    if outcome is Outcome.changed:
        base *= CHANGED_FACTOR
    elif outcome is Outcome.unchanged:
        base *= UNCHANGED_FACTOR
    return clamp(base, cfg)


def backoff(failures: int, cfg: SchedulerConfig) -> float:
    """Delay after ``failures`` consecutive failures (>= 1): min, 2 min, 4 min, ... capped at max."""
    return backoff_s(failures - 1, cfg.min_interval_s, cfg.max_interval_s)


def jittered(seconds: float, u: float, cfg: SchedulerConfig) -> float:
    """``seconds`` moved by up to ``+/- cfg.jitter`` of itself (``u`` uniform in [0, 1)), kept in bounds."""
    return clamp(seconds * (1.0 + cfg.jitter * (2.0 * u - 1.0)), cfg)


def next_delay(
    *,
    interval: float,
    outcome: Outcome,
    failures: int,
    websub_lease_left: float | None,
    retry_after: float | None,
    u: float,
    cfg: SchedulerConfig,
) -> float:
    """Seconds from this fetch to the next one (jittered, within bounds).

    ``interval`` is the healthy interval from ``next_interval``; ``failures``
    counts this fetch when it failed; ``websub_lease_left`` is the seconds of
    WebSub lease left at this fetch (None or <= 0: no live subscription).
    """
    if outcome is Outcome.failed:
        delay = jittered(backoff(failures, cfg), u, cfg)
        if retry_after is not None:
            # after the jitter, so it never moves the fetch before what the partner asked for
            delay = max(delay, clamp(retry_after, cfg))
        return delay
    if websub_lease_left is not None and websub_lease_left > 0:
        # the hub tells us about changes; polling is only the safety net
        return jittered(min(cfg.max_interval_s, websub_lease_left / 2), u, cfg)
    return jittered(interval, u, cfg)


def follow_origin(delay: float, origin: OriginSchedule, u: float, cfg: SchedulerConfig) -> tuple[float, str | None]:
    """``delay`` (the adaptive one, for a fetch that answered) as the origin's own schedule moves it.

    Returns the delay and the rule that chose it (None: the adaptive schedule, the origin said
    nothing). A declared interval replaces the adaptive one; a freshness lifetime is a floor. The
    scheduler's bounds hold either way, and the reason says when they cut what the origin asked.
    """
    reason: str | None = None
    if origin.every_s is not None:
        delay, reason = origin.every_s * (1.0 + cfg.jitter * u), origin.every_reason
    if origin.fresh_s is not None and origin.fresh_s > delay:
        delay, reason = origin.fresh_s * (1.0 + cfg.jitter * u), origin.fresh_reason
    if reason is None:
        return delay, None
    if delay > cfg.max_interval_s:
        return cfg.max_interval_s, f"{reason}, capped at scheduler.max_interval_s"
    if delay < cfg.min_interval_s:
        return cfg.min_interval_s, f"{reason}, raised to scheduler.min_interval_s"
    return delay, reason
