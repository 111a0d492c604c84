"""The one ``Retry-After`` parser (RFC 9110 section 10.2.3; docs/architecture.md section 6; docs/conventions.md
rule 18).

The crawler (politeness: a lane waits as long as the host asks) and the
scheduler (a throttled feed's next fetch) read the header here, the same way:

* delta-seconds (``120``) or an HTTP date (``Mon, 01 Jan 2024 00:10:00 GMT``);
* a date without a zone is refused: RFC 9110 dates are GMT, and guessing the
  zone of a malformed one would make us wait hours too long or too short;
* the wait is capped at ``MAX_RETRY_AFTER_S`` (a day): a typo must not silence
  a host for a year; a date in the past is "now".

Anything else (absent, ``soon``, negative) is None: no advice, the caller's own
back-off applies.
"""

from __future__ import annotations

import email.utils

__all__ = ["MAX_RETRY_AFTER_S", "parse_retry_after"]

#: a Retry-After longer than a day is treated as a day
MAX_RETRY_AFTER_S = 86_400.0


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Retry-After as seconds from ``now`` (epoch seconds); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), MAX_RETRY_AFTER_S)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return min(max(0.0, when.timestamp() - now), MAX_RETRY_AFTER_S)
