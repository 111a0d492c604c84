"""How long an answer stays fresh, as its response says (RFC 9111 sections 4.2 and 5; docs/architecture.md
section 6; docs/conventions.md rule 18).

The scheduler (a feed is not polled again before its answer goes stale) and the cdn cube (a
cached image is asked about again when its own lifetime ends) read the headers here, the same
way, as a shared cache does:

* ``Cache-Control: s-maxage`` first, then ``max-age`` (delta-seconds, at most ``_DIGITS``
  digits); ``no-store``, ``no-cache`` or a lifetime of 0 mean "ask again every time";
* without either directive, ``Expires`` against the fetch time; an invalid date (``0``,
  ``-1``) is already expired (section 5.3);
* nothing at all: no advice, the caller's own period applies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime

__all__ = ["Freshness", "freshness"]

#: a lifetime of more than 10^10 seconds (~317 years) is no lifetime anyone means: ignored
_DIGITS = 10
_NUMBER = re.compile(rf"\d{{1,{_DIGITS}}}")
_DIRECTIVE = re.compile(r"\s*([A-Za-z-]+)\s*(?:=\s*\"?([^\",]*)\"?)?\s*")
#: at most this many directives are read (a header of thousands is cut)
_MAX_DIRECTIVES = 32
#: an Expires value longer than this is no HTTP date
_MAX_DATE = 64


@dataclass(frozen=True, slots=True)
class Freshness:
    """What a response says of its own lifetime."""

    #: seconds the answer stays fresh; None: the response says nothing (or ``revalidate``)
    seconds: float | None = None
    #: the answer must be asked about again every time (``no-cache``, ``no-store``, a 0 lifetime, expired)
    revalidate: bool = False
    #: the header that said so ("Cache-Control max-age", "Expires"), for the webmaster
    source: str | None = None


def _directives(value: str) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for part in value.split(",")[:_MAX_DIRECTIVES]:
        match = _DIRECTIVE.fullmatch(part)
        if match:
            found.setdefault(match.group(1).lower(), match.group(2))
    return found


def freshness(headers: Mapping[str, str], fetched_at: float) -> Freshness:
    """The lifetime of a response with ``headers`` (lower-case names) fetched at ``fetched_at`` (epoch s)."""
    directives = _directives(headers.get("cache-control") or "")
    if "no-store" in directives or "no-cache" in directives:
        return Freshness(revalidate=True, source="Cache-Control")
    for name in ("s-maxage", "max-age"):
        if name in directives:
            text = (directives[name] or "").strip()
            if not _NUMBER.fullmatch(text):
                return Freshness()  # a lifetime that is no number: no advice
            seconds = float(text)
            if seconds <= 0:
                return Freshness(revalidate=True, source=f"Cache-Control {name}")
            return Freshness(seconds=seconds, source=f"Cache-Control {name}")
    value = headers.get("expires")
    if not value:
        return Freshness()
    try:
        if len(value) > _MAX_DATE:
            raise ValueError(value[:_MAX_DATE])
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return Freshness(revalidate=True, source="Expires")
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    left = when.timestamp() - fetched_at
    if left <= 0:
        return Freshness(revalidate=True, source="Expires")
    return Freshness(seconds=left, source="Expires")
