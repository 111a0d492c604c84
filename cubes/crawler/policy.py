"""The adaptive politeness policy: a pure function (docs/architecture.md section 6; docs/conventions.md rule 5).

``adapt(state, signal, now, limits, jitter=...)`` -> the lane's next ``PolicyState``.

* **Multiplicative decrease** on 429 / 503 / other 5xx / timeouts / connect
  errors and on rising latency (a response much slower than the lane's
  running average): the host is telling us it is struggling.
* **Additive increase** on a healthy response: a small step toward the
  ceiling, so a recovered host is sped up slowly, never in a jump.
* **Ceiling**: never above ``min(configured rate, crawler.max_rate)``;
  **floor**: one request a minute, so a lane always eventually probes again.
* **Retry-After** (seconds or HTTP date, converted by the fetcher) pauses the
  whole lane until then.
* **429 without Retry-After** pauses the lane 60 s, doubling per repeated
  incident up to a day, with +/-20 % jitter so many crawlers do not return in
  lock-step; the count is forgiven after a quiet hour (counted from the end of the last pause).

Nothing here reads a clock or a random generator: callers pass ``now`` and
``jitter`` (a number in [0, 1)), so tests assert exact values.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from shared.runtime.retry import backoff_s

__all__ = [
    "BACKOFF_BASE_S",
    "BACKOFF_MAX_S",
    "MIN_RATE",
    "QUIET_PERIOD_S",
    "PolicyLimits",
    "PolicyState",
    "Signal",
    "SignalKind",
    "adapt",
]

#: multiplicative decrease factor (TCP-style halving: fast and well understood)
DECREASE = 0.5
#: a milder decrease for "slower than usual" (latency is a weaker signal than a 503)
LATENCY_DECREASE = 0.8
#: additive increase per healthy response, as a share of the ceiling: ~20 healthy responses to recover fully
INCREASE_SHARE = 0.05
#: the slowest a lane ever gets: one request a minute
MIN_RATE = 1.0 / 60.0
#: first pause after a 429 without Retry-After, doubled per repeated incident
BACKOFF_BASE_S = 60.0
#: the longest such pause: a day
BACKOFF_MAX_S = 86_400.0
#: incidents are forgiven after this long without one
QUIET_PERIOD_S = 3_600.0
#: share of the pause added or removed at random (spreads crawlers out)
JITTER_SHARE = 0.2
#: "rising latency": slower than this multiple of the running average ...
LATENCY_FACTOR = 3.0
#: ... and slower than this many seconds (a 2 ms -> 8 ms change is noise, not distress)
LATENCY_FLOOR_S = 1.0
#: weight of the newest latency in the running average
LATENCY_ALPHA = 0.2


class SignalKind(StrEnum):
    ok = "ok"  # 2xx / 304 / 4xx other than 429: the host is answering fine
    throttled = "throttled"  # 429
    unavailable = "unavailable"  # 503
    server_error = "server_error"  # other 5xx
    timeout = "timeout"
    connect_error = "connect_error"


@dataclass(frozen=True, slots=True)
class Signal:
    """What one request taught us about the host."""

    kind: SignalKind
    latency_s: float = 0.0
    retry_after_s: float | None = None


@dataclass(frozen=True, slots=True)
class PolicyLimits:
    configured_rate: float
    max_rate: float

    @property
    def ceiling(self) -> float:
        return min(self.configured_rate, self.max_rate)


@dataclass(frozen=True, slots=True)
class PolicyState:
    rate: float
    paused_until: float = 0.0
    #: 429-without-Retry-After incidents in a row (drives the doubling)
    incidents: int = 0
    last_incident_at: float | None = None
    latency_avg_s: float | None = None


def adapt(state: PolicyState, signal: Signal, now: float, limits: PolicyLimits, *, jitter: float = 0.5) -> PolicyState:
    """The lane's policy after ``signal`` at ``now``. ``jitter`` in [0, 1); 0.5 means no jitter."""
    ceiling = max(limits.ceiling, MIN_RATE)
    incidents = state.incidents
    # quiet = no incident since the last pause *ended* (a day-long pause is not a quiet day)
    if state.last_incident_at is not None and now - max(state.last_incident_at, state.paused_until) >= QUIET_PERIOD_S:
        incidents = 0  # forgiven
    rate = min(state.rate, ceiling)
    paused_until = state.paused_until
    last_incident_at = state.last_incident_at
    avg = state.latency_avg_s

    if signal.kind is SignalKind.ok:
        slow = avg is not None and signal.latency_s > LATENCY_FLOOR_S and signal.latency_s > LATENCY_FACTOR * avg
        rate = rate * LATENCY_DECREASE if slow else rate + INCREASE_SHARE * ceiling
        avg = signal.latency_s if avg is None else avg + LATENCY_ALPHA * (signal.latency_s - avg)
    else:
        rate *= DECREASE
        if signal.retry_after_s is not None:
            paused_until = max(paused_until, now + signal.retry_after_s)
        elif signal.kind is SignalKind.throttled:
            pause = backoff_s(incidents, BACKOFF_BASE_S, BACKOFF_MAX_S)
            pause *= 1.0 + JITTER_SHARE * (2.0 * jitter - 1.0)
            paused_until = max(paused_until, now + pause)
            incidents += 1
            last_incident_at = now

    rate = min(max(rate, MIN_RATE), ceiling)
    # a new state, built directly: dataclasses.replace() introspects the fields on every call
    return PolicyState(
        rate=rate,
        paused_until=paused_until,
        incidents=incidents,
        last_incident_at=last_incident_at,
        latency_avg_s=avg,
    )
