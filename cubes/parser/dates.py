"""Feed dates to timezone-aware datetimes at the source's own UTC offset (docs/architecture.md section 5).

Stage times are UTC; a publication date is the source's, and keeps its offset
(``Tue, 21 Apr 2015 14:15:00 +0300`` stays ``+03:00``), so the page can show
it as the source wrote it (``shared.pages.i18n.format_date``). Aware datetimes
compare by the instant, so nothing that orders or compares dates cares.

Two fast paths cover nearly every real feed: RFC 822 (``pubDate``) through
``email.utils`` and ISO 8601 / W3C-DTF (Atom, ``dc:date``) through
``datetime.fromisoformat``. Anything else goes to feedparser's collection of
date handlers (Korean, Greek, Hungarian, Perforce, asctime ...) so we read
the same dates feedparser does. A date without a zone is taken as UTC, like
feedparser does; feedparser's own dates come back in UTC (it drops the offset).

Parsed dates are remembered by their text (``functools.lru_cache``): a feed
fetched again repeats nearly every item's date verbatim, and reading an RFC
822 date through ``email.utils`` is ~5 us, a sixth of reading a whole RSS
item. ``datetime`` is immutable, so sharing one between items is safe.
"""

from __future__ import annotations

import calendar
import functools
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from shared.clock import at

__all__ = ["from_struct_time", "parse_date"]

#: a date string longer than this is not a date; cheap guard for the fallback's regexes
_MAX_LEN = 128
#: distinct date texts remembered: about the items of a few hundred feeds (~200 bytes each)
_CACHED = 16_384


def _aware(dt: datetime) -> datetime:
    """A zoneless date is UTC (as feedparser reads it); a zoned one keeps its offset."""
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt


def parse_date(text: str | None) -> datetime | None:
    if not text:
        return None
    # a long text (a date padded with whitespace, or junk) is read but not kept: the cache holds its key
    return _parse_cached(text) if len(text) <= 2 * _MAX_LEN else _parse(text)


def _parse(text: str) -> datetime | None:
    s = text.strip()
    if not s or len(s) > _MAX_LEN:
        return None
    first = s[0]
    try:
        if first.isdigit() and len(s) >= 10 and s[4] == "-":
            # ISO 8601; Python 3.11 reads 'Z', offsets and fractions
            return _aware(datetime.fromisoformat(s))
        if first.isalpha():
            return _aware(parsedate_to_datetime(s))
    except (ValueError, TypeError, IndexError, OverflowError):
        pass
    return _fallback(s)


_parse_cached = functools.lru_cache(maxsize=_CACHED)(_parse)


def _fallback(s: str) -> datetime | None:
    from feedparser.datetimes import _parse_date

    try:
        st = _parse_date(s)
    except (ValueError, TypeError, OverflowError, IndexError):
        return None
    return from_struct_time(st)


def from_struct_time(st: time.struct_time | None) -> datetime | None:
    """A UTC ``struct_time`` (feedparser's dates) as an aware datetime; None when out of range."""
    if st is None:
        return None
    try:
        return at(calendar.timegm(st))
    except (ValueError, OverflowError, OSError):
        return None
