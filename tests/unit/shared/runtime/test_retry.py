"""Retry policy: capped exponential backoff with full jitter, Retry-After as a floor (docs/conventions.md rule 7)."""

from __future__ import annotations

import random
from typing import Any

from shared.errors import Reject, TransientError
from shared.runtime.retry import Decision, decide

KW: dict[str, Any] = {"max_attempts": 5, "base_s": 1.0, "cap_s": 10.0}


def test_delays_grow_and_are_capped_with_full_jitter() -> None:
    rng = random.Random(7)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0)]:
        delays = [decide(attempt, TransientError("x"), rng=rng, **KW).delay_s for _ in range(200)]
        assert max(delays) <= ceiling
        assert min(delays) >= 0
        assert max(delays) > ceiling * 0.8  # jitter spans the range
    big = decide(4, TransientError("x"), rng=rng, max_attempts=50, base_s=1.0, cap_s=3.0)
    assert big.delay_s <= 3.0


def test_gives_up_after_max_attempts_and_at_once_for_rejects() -> None:
    assert decide(5, TransientError("x"), **KW).decision is Decision.dead_letter
    assert decide(4, TransientError("x"), **KW).decision is Decision.retry
    assert decide(1, Reject("bad"), **KW).decision is Decision.dead_letter


def test_foreign_exceptions_are_retried() -> None:
    assert decide(1, KeyError("k"), **KW).decision is Decision.retry


def test_retry_after_is_a_floor() -> None:
    d = decide(1, TransientError("slow down", retry_after=7.0), rng=random.Random(1), **KW)
    assert 7.0 <= d.delay_s <= 10.0
