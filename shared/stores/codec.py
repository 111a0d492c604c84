"""Value encoding shared by every store and both engines (docs/architecture.md section 4, "stores").

Both engines keep timestamps as BIGINT microseconds since the Unix epoch
(UTC) rather than native types: one encoding means one set of row decoders,
and integer comparisons keep the versioned guards cheap. Lists (services,
task items) are JSON text, since they are read whole and never queried.
Each role's row codec (its columns and ``*_from_row``) is in ``sql/<role>.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from shared.clock import SystemClock

__all__ = ["dumps", "from_us", "now_us", "to_us"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_us(value: datetime | None) -> int | None:
    """Microseconds since the epoch; naive datetimes are refused (they hide bugs)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: stores need timezone-aware UTC times")
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(value: int | None) -> datetime | None:
    if value is None:
        return None
    return _EPOCH + timedelta(microseconds=value)


def now_us(now: datetime | None) -> int:
    stamp = to_us(now if now is not None else SystemClock().now())
    assert stamp is not None
    return stamp


def dumps(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")
