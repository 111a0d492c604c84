"""The origin's own schedule: what a feed and its response say about when to come back (docs/architecture.md
section 6).

A feed may say how often it changes, and its response how long it stays fresh:

* ``<ttl>`` (RSS 2.0: minutes the channel may be cached) and ``sy:updatePeriod`` /
  ``sy:updateFrequency`` (the RSS 1.0 syndication module: ``hourly`` … ``yearly``, so many
  times per period) say **how often to poll**: the larger of the two is the interval;
* ``Cache-Control: s-maxage`` / ``max-age`` or ``Expires`` say **how long the answer stays
  fresh** (read as a shared cache reads them, ``shared/http/freshness.py``): the next poll is
  never sooner (``no-cache`` / ``no-store`` give no lifetime);
* ``<skipHours>`` (0-23, GMT) and ``<skipDays>`` (``Monday`` … ``Sunday``) are hours and days
  in which the feed must not be read: a poll due in one moves to the next allowed hour.

Everything is bounded where it is parsed: a number is at most ``_DIGITS`` digits, a period one
of five words; a value that is not one is ignored (the adaptive schedule stands). The
scheduler's ``min_interval_s`` and ``max_interval_s`` bound what the origin may ask for, and
``policy.follow_origin`` names the rule that chose a poll, for the feed's status ("next poll in
30 min: the feed's ttl"). Pure functions: the caller passes the fetch time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

import orjson

from cubes.scheduler.feedhead import FeedHead
from shared.clock import at
from shared.http.freshness import freshness

__all__ = ["OriginSchedule", "declared_json", "origin_schedule", "skip_window"]

#: a schedule number has at most this many digits (10^9 minutes is ~1,900 years: nothing sane is longer)
_DIGITS = 9
_NUMBER = re.compile(rf"\d{{1,{_DIGITS}}}")
#: sy:updatePeriod's words (the module's spec) in seconds; a month and a year as the calendar's average
_PERIODS = {"hourly": 3600.0, "daily": 86_400.0, "weekly": 604_800.0, "monthly": 2_629_746.0, "yearly": 31_556_952.0}
_DAYS = {
    name: i for i, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
}
#: a skip window never moves a poll by more than a week: a feed that skips every hour of every day
#: asks for nothing we can honour, and is polled as if it had said nothing
_SKIP_HORIZON_H = 7 * 24


@dataclass(frozen=True, slots=True)
class OriginSchedule:
    """What the origin asked for; every field None / empty when it asked for nothing."""

    #: how often the feed says it changes, in seconds, and which element said so
    every_s: float | None = None
    every_reason: str | None = None
    #: how long this answer stays fresh, in seconds, and which header said so
    fresh_s: float | None = None
    fresh_reason: str | None = None
    #: hours (0-23, GMT) and weekdays (0 = Monday) in which the feed must not be read
    skip_hours: frozenset[int] = frozenset()
    skip_days: frozenset[int] = frozenset()


def _number(text: str | None) -> int | None:
    if text is None or not _NUMBER.fullmatch(text.strip()):
        return None
    return int(text.strip())


def _every(head: FeedHead) -> tuple[float | None, str | None]:
    found: list[tuple[float, str]] = []
    ttl = _number(head.texts.get("ttl"))
    if ttl:
        found.append((ttl * 60.0, "the feed's ttl"))
    period_text = head.texts.get("updatePeriod")
    frequency_text = head.texts.get("updateFrequency")
    if period_text is not None or frequency_text is not None:
        period = _PERIODS.get((period_text or "daily").strip().lower())
        frequency = 1 if frequency_text is None else _number(frequency_text)
        if period is not None and frequency:
            found.append((period / frequency, "the feed's sy:updatePeriod"))
    if not found:
        return None, None
    # the origin's least frequent wish wins: polling more often than either asks is never polite
    return max(found)


def _declared(head: FeedHead) -> tuple[float | None, str | None, frozenset[int], frozenset[int]]:
    every_s, every_reason = _every(head)
    hours = {h % 24 for t in head.skip_hours if (h := _number(t)) is not None and h <= 24}  # 24 is midnight too
    days = {_DAYS[t.strip().lower()] for t in head.skip_days if t.strip().lower() in _DAYS}
    # a feed that skips every hour or every day asks for nothing we can honour
    return every_s, every_reason, frozenset(hours if len(hours) < 24 else ()), frozenset(days if len(days) < 7 else ())


def _remembered(text: str | None) -> tuple[float | None, str | None, frozenset[int], frozenset[int]]:
    try:
        saved = orjson.loads(text) if text else {}
        every = saved.get("every_s")
        return (
            float(every) if every is not None else None,
            saved.get("every_reason"),
            frozenset(int(h) for h in saved.get("skip_hours", ())),
            frozenset(int(d) for d in saved.get("skip_days", ())),
        )
    except (orjson.JSONDecodeError, AttributeError, TypeError, ValueError):
        return None, None, frozenset(), frozenset()


def declared_json(origin: OriginSchedule) -> str | None:
    """What the feed's body declared, as the feed's row keeps it for fetches without a body (a 304)."""
    if origin.every_s is None and not origin.skip_hours and not origin.skip_days:
        return None
    return orjson.dumps(
        {
            "every_s": origin.every_s,
            "every_reason": origin.every_reason,
            "skip_hours": sorted(origin.skip_hours),
            "skip_days": sorted(origin.skip_days),
        }
    ).decode()


def origin_schedule(
    head: FeedHead | None, headers: Mapping[str, str], fetched_at: float, remembered: str | None = None
) -> OriginSchedule:
    """What a fetch asks of the next poll (``fetched_at``: epoch seconds).

    ``head`` is the head of the body this fetch brought, or None when it brought none (a 304): then
    what the last body declared (``remembered``, from ``declared_json``) still holds. Freshness is
    always this response's own.
    """
    every_s, every_reason, hours, days = _declared(head) if head is not None else _remembered(remembered)
    fresh = freshness(headers, fetched_at)  # "ask again every time" sets no floor: the adaptive schedule stands
    return OriginSchedule(
        every_s=every_s,
        every_reason=every_reason,
        fresh_s=fresh.seconds,
        fresh_reason=f"the feed's {fresh.source}" if fresh.seconds is not None else None,
        skip_hours=hours,
        skip_days=days,
    )


def skip_window(due: float, origin: OriginSchedule) -> tuple[float, str | None]:
    """``due`` (epoch seconds) moved to the first hour the feed may be read, and the rule that moved it."""
    if not origin.skip_hours and not origin.skip_days:
        return due, None
    when = at(due)
    reason: str | None = None
    for _ in range(_SKIP_HORIZON_H):
        if when.weekday() in origin.skip_days:
            reason = reason or "the feed's skipDays"
        elif when.hour in origin.skip_hours:
            reason = reason or "the feed's skipHours"
        else:
            return (due, None) if reason is None else (when.timestamp(), reason)
        when = when.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    return due, None  # no hour of the week is allowed: nothing we can honour
