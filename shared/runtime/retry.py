"""Retry policy: a pure function of (attempt, error, settings, rng) -> delay or give up (docs/conventions.md rule 7).

Capped exponential backoff with *full jitter* (AWS architecture blog, "Exponential
Backoff and Jitter"): the delay is uniform in [0, min(cap, base * 2**(attempt-1))],
which spreads a burst of failures instead of having them retry in lock-step. A
``retry_after`` carried by the error (HTTP Retry-After, a broker's throttle) is a
floor. The attempt count travels in message headers, so a restart does not reset it.

The doubling itself is ``backoff_s`` (after n failures) and ``next_backoff_s`` (after the last
wait): the one capped exponential backoff, which the scheduler's failing feeds, the crawler's
throttled hosts, the runtime's outage waits and the frontend's search-event publisher also use.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from shared.errors import Reject, is_retriable

__all__ = ["Decision", "RetryDecision", "backoff_s", "decide", "next_backoff_s"]

#: doublings past this change nothing (2**64 times any base passes any cap) and never overflow a float
_MAX_DOUBLINGS = 64


def backoff_s(doublings: int, base_s: float, cap_s: float) -> float:
    """A capped exponential backoff: ``base_s`` doubled ``doublings`` times, at most ``cap_s``."""
    return min(cap_s, base_s * 2.0 ** min(max(doublings, 0), _MAX_DOUBLINGS))


def next_backoff_s(previous_s: float, base_s: float, cap_s: float) -> float:
    """The wait after a wait of ``previous_s`` (0: none yet) in the same backoff: ``base_s``, then doubled."""
    return min(cap_s, max(base_s, previous_s * 2))


class Decision(StrEnum):
    retry = "retry"
    dead_letter = "dead_letter"


@dataclass(frozen=True, slots=True)
class RetryDecision:
    decision: Decision
    delay_s: float = 0.0
    reason: str = ""


def decide(
    attempt: int,
    error: BaseException,
    *,
    max_attempts: int,
    base_s: float,
    cap_s: float,
    rng: random.Random | None = None,
) -> RetryDecision:
    """What to do after ``attempt`` (1-based) failed with ``error``."""
    if isinstance(error, Reject):
        return RetryDecision(Decision.dead_letter, reason="rejected")
    if not is_retriable(error):
        return RetryDecision(Decision.dead_letter, reason="not retriable")
    if attempt >= max_attempts:
        return RetryDecision(Decision.dead_letter, reason=f"gave up after {attempt} attempts")
    ceiling = backoff_s(attempt - 1, base_s, cap_s)
    delay = (rng or random).uniform(0, ceiling)
    retry_after = getattr(error, "retry_after", None)
    if retry_after is not None:
        delay = max(delay, min(float(retry_after), cap_s))
    return RetryDecision(Decision.retry, delay_s=delay)
