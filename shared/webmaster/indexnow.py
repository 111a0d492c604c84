"""The IndexNow key: its form, its file on the site, and the URLs it covers (docs/architecture.md section 6).

IndexNow (indexnow.org) lets a site say "these URLs changed" with no account: it
proves the submission is its own by a key file it serves. The rules here:

* **A key** is 8 to 128 characters of ``a-z A-Z 0-9 -`` (the protocol's).
* **Its file** is ``<origin>/<key>.txt`` or the submission's ``keyLocation``, which
  must be on the same origin (scheme, host and port: a right on a site covers its
  origin alone, ``shared.webmaster.rights``). It is fetched through the SSRF guard, following
  same-origin redirects only: a key file served from another port, or a redirect to
  another origin, proves nothing about this one. The file's text, stripped, must be
  the key.
* **The URLs a key covers**: those of its origin; with a ``keyLocation`` in a
  folder (``/shop/key.txt``), only the URLs under that folder (the protocol's rule).
* **Bounded**: a check is remembered ``KEY_TTL_S`` when found and ``MISS_TTL_S``
  when not, and each origin's file is read at most ``FETCHES_PER_MINUTE`` times a
  minute, so random keys cannot make us hammer a site (``KeyChecks.check`` answers
  ``KeyVerdict.busy`` then: the endpoint's 429).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from shared.clock import Clock
from shared.config import Settings
from shared.http import Fetcher
from shared.messages import CrawlKind, FetchStatus
from shared.origins import origin_of

__all__ = [
    "FETCHES_PER_MINUTE",
    "KEY_RE",
    "KEY_TTL_S",
    "MISS_TTL_S",
    "KeyChecks",
    "KeyVerdict",
    "Submission",
    "key_file_url",
]

KEY_RE = re.compile(r"[a-zA-Z0-9-]{8,128}")
#: a key found stays trusted this long (a site that removes its file stops being believed within it)
KEY_TTL_S = 600.0
#: a key not found is not asked about again this long
MISS_TTL_S = 60.0
#: reads of one origin's key files a minute: a real site submits with one key
FETCHES_PER_MINUTE = 10
#: a key file is one short line; anything bigger is not one
_FILE_MAX = 1024
#: (origin, key, location) checks remembered
_REMEMBERED = 10_000


class KeyVerdict(StrEnum):
    found = "found"
    missing = "missing"  # no file, or not the key in it
    elsewhere = "elsewhere"  # the file redirects to another origin
    busy = "busy"  # this origin's key files were read too often in the last minute


@dataclass(frozen=True, slots=True)
class Submission:
    """What a site submitted: its key, where the key file is, and the URLs (canonical, on one origin)."""

    origin: str
    key: str
    location: str

    def covers(self, url: str) -> bool:
        """``url`` is on the key's origin, and under its file's folder (the protocol's rule)."""
        if origin_of(url) != self.origin:
            return False
        folder = urlsplit(self.location).path.rsplit("/", 1)[0] + "/"
        return (urlsplit(url).path or "/").startswith(folder)


def key_file_url(origin: str, key: str, location: str | None) -> str:
    """Where the key file is: ``location`` when given (``ValueError`` if it is on another origin), else
    ``<origin>/<key>.txt``."""
    if not location:
        return f"{origin}/{key}.txt"
    if origin_of(location) != origin:
        raise ValueError(f"keyLocation {location} is not on {origin}: the key file must be on the URLs' origin")
    return location


class KeyChecks:
    """Key files looked at, remembered and bounded (see the module docstring). ``close`` when done."""

    def __init__(self, fetcher: Fetcher, clock: Clock) -> None:
        self._fetcher = fetcher
        self._clock = clock
        #: (origin, key, location) -> (verdict, monotonic time it holds until)
        self._known: OrderedDict[tuple[str, str, str], tuple[KeyVerdict, float]] = OrderedDict()
        #: origin -> monotonic times of its key-file reads in the last minute
        self._reads: OrderedDict[str, list[float]] = OrderedDict()

    @classmethod
    def from_settings(cls, settings: Settings, clock: Clock, *, resolver: Any = None) -> KeyChecks:
        """Key files read through the guarded fetcher (``close`` when done)."""
        return cls(Fetcher(settings, resolver=resolver, clock=clock), clock)

    def _may_read(self, origin: str, now: float) -> bool:
        recent = [t for t in self._reads.pop(origin, []) if now - t < 60.0]
        if len(recent) >= FETCHES_PER_MINUTE:
            self._reads[origin] = recent
            return False
        recent.append(now)
        self._reads[origin] = recent
        while len(self._reads) > _REMEMBERED:
            self._reads.popitem(last=False)
        return True

    async def check(self, sub: Submission) -> KeyVerdict:
        now = self._clock.monotonic()
        memo = (sub.origin, sub.key, sub.location)
        known = self._known.get(memo)
        if known is not None and now < known[1]:
            return known[0]
        if not self._may_read(sub.origin, now):
            return KeyVerdict.busy
        res = await self._fetcher.fetch(sub.location, kind=CrawlKind.page, max_bytes=_FILE_MAX, same_origin=True)
        if res.left_origin is not None:
            verdict = KeyVerdict.elsewhere
        elif res.status is FetchStatus.ok and res.body is not None:
            found = res.body.decode("utf-8", "replace").strip() == sub.key
            verdict = KeyVerdict.found if found else KeyVerdict.missing
        else:
            verdict = KeyVerdict.missing
        self._known.pop(memo, None)
        self._known[memo] = (verdict, now + (KEY_TTL_S if verdict is KeyVerdict.found else MISS_TTL_S))
        while len(self._known) > _REMEMBERED:
            self._known.popitem(last=False)
        return verdict

    async def close(self) -> None:
        await self._fetcher.close()
