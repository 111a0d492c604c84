"""Retry policy: a pure function of (attempt, error, settings, rng) -> delay or give up (docs/conventions.md rule 7).

Capped exponential backoff with *full jitter* (AWS architecture blog, "Exponential
Backoff and Jitter"): the delay is uniform in [0, min(cap, base * 2**(attempt-1))],
which spreads a burst of failures instead of having them retry in lock-step. A
``retry_after`` carried by the error (HTTP Retry-After, a broker's throttle) is a
floor. The attempt count travels in message headers, so a restart does not reset it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from shared.errors import Reject, is_retriable

__all__ = ["Decision", "RetryDecision", "decide"]


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
    ceiling = min(cap_s, base_s * (2 ** (attempt - 1)))
    delay = (rng or random).uniform(0, ceiling)
    retry_after = getattr(error, "retry_after", None)
    if retry_after is not None:
        delay = max(delay, min(float(retry_after), cap_s))
    return RetryDecision(Decision.retry, delay_s=delay)
