"""robots.txt per RFC 9309, with protego (docs/architecture.md section 6).

* cached per origin (scheme://host:port) for at most ``crawler.robots_ttl_s``
  (RFC 9309 section 2.4: no longer than 24 h);
* 2xx: parsed; ``Crawl-delay`` for our agent sets the lane's spacing;
* 4xx (404, 403, 410 ...): "unavailable" -> allow all (section 2.3.1.3);
* 5xx, 429, or the server unreachable: "unreachable" -> disallow all *for
  now* (section 2.3.1.4); retried after ``UNREACHABLE_TTL_S`` rather than a
  day, so a brief outage does not silence a host for long;
* robots.txt itself is fetched through the host's lane (it counts against the
  host's rate) and through the SSRF guard, following up to 5 redirects;
* concurrent checks for one origin share one robots.txt fetch;
* what an origin's robots.txt said is saved with its fetch time in the lane
  store (``shared/stores/lanes.py``), so the crawler that owns the host after
  a rebalance or a restart uses it until it expires instead of asking again
  (and, where it says "disallow all for now", waits as the old owner did).

A disallowed URL gets ``robots_denied`` without any request for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass

from protego import Protego
from yarl import URL

from cubes.crawler.lanes import Lane
from cubes.crawler.signals import signal_for
from shared.clock import Clock
from shared.errors import TurbocubesError
from shared.http import Fetcher, FetchResult
from shared.messages import FetchStatus
from shared.stores.lanes import LaneStore, RobotsRecord

__all__ = ["ROBOTS_MAX_BYTES", "UNREACHABLE_TTL_S", "RobotsCache", "RobotsVerdict"]

log = logging.getLogger(__name__)

#: RFC 9309 asks crawlers to parse at least 500 KiB; more than that is not a robots.txt
ROBOTS_MAX_BYTES = 512 * 1024
#: how long "unreachable -> disallow all" lasts before robots.txt is tried again
UNREACHABLE_TTL_S = 300.0
#: origins whose robots.txt is kept in memory (least recently used ones are dropped)
MAX_ENTRIES = 100_000
#: transport failures reported as themselves (the URL is not "denied", the host is unreachable)
_TRANSPORT = frozenset(
    {
        FetchStatus.dns_error,
        FetchStatus.connect_error,
        FetchStatus.timeout,
        FetchStatus.blocked_address,
        FetchStatus.bad_url,
    }
)


@dataclass(frozen=True, slots=True)
class RobotsVerdict:
    allowed: bool
    #: the status to report when not allowed (robots_denied, or the transport failure)
    status: FetchStatus = FetchStatus.ok
    reason: str = ""


_ALLOWED = RobotsVerdict(True)


@dataclass(slots=True)
class _Entry:
    parser: Protego | None  # None: allow all / disallow all per ``allow_all``
    allow_all: bool
    expires_at: float
    crawl_delay: float | None = None
    status: FetchStatus = FetchStatus.robots_denied
    reason: str = ""


class RobotsCache:
    def __init__(
        self,
        fetcher: Fetcher,
        clock: Clock,
        *,
        ttl_s: float,
        agent: str,
        max_lane_wait_s: float,
        store: LaneStore | None = None,
    ):
        self.fetcher = fetcher
        #: where robots.txt answers outlive this process (None: memory only, the CLI)
        self.store = store
        self.clock = clock
        self.ttl_s = min(ttl_s, 86_400.0)  # RFC 9309 2.4: never cache for more than 24 h
        #: the product token robots.txt groups are matched against ("TurbocubesBot")
        self.agent = agent.split("/", 1)[0].strip() or agent
        self.max_lane_wait_s = max_lane_wait_s
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._pending: dict[str, asyncio.Future[_Entry]] = {}
        self.fetches = 0

    async def check(self, url: URL, lane: Lane, *, deadline: float | None = None) -> RobotsVerdict:
        """May ``url`` be fetched? ``deadline`` (clock.monotonic) bounds a robots.txt fetch it needs."""
        origin = str(url.origin())  # scheme://host[:port], the default port left out
        entry = await self._entry(origin, lane, deadline)
        if entry.parser is None:
            if entry.allow_all:
                return _ALLOWED
            return RobotsVerdict(False, entry.status, entry.reason)
        if entry.parser.can_fetch(str(url), self.agent):
            return _ALLOWED
        return RobotsVerdict(False, FetchStatus.robots_denied, f"disallowed by {origin}/robots.txt")

    async def _entry(self, origin: str, lane: Lane, deadline: float | None) -> _Entry:
        entry = self._entries.get(origin)
        if entry is not None and entry.expires_at > self.clock.monotonic():
            self._entries.move_to_end(origin)
            return entry
        pending = self._pending.get(origin)
        if pending is not None:
            await asyncio.wait({pending})
            if not pending.cancelled():
                return pending.result()
            return await self._entry(origin, lane, deadline)  # the fetching check was cancelled: fetch ourselves
        fut: asyncio.Future[_Entry] = asyncio.get_running_loop().create_future()
        self._pending[origin] = fut
        try:
            entry = await self._remembered(origin) or await self._load(origin, lane, deadline)
            fut.set_result(entry)
        except asyncio.CancelledError:
            fut.cancel()
            raise
        except Exception as exc:
            fut.set_exception(exc)
            fut.exception()  # retrieved: waiters re-raise it, nobody logs "never retrieved"
            raise
        finally:
            del self._pending[origin]
        if entry.expires_at > self.clock.monotonic():  # a lane too busy to ask is not cached
            self._entries[origin] = entry
            while len(self._entries) > MAX_ENTRIES:
                self._entries.popitem(last=False)
            lane.set_crawl_delay(entry.crawl_delay)  # only a real answer changes the delay
        return entry

    async def _remembered(self, origin: str) -> _Entry | None:
        """The origin's robots.txt as a previous owner of the host saved it, while it holds."""
        if self.store is None:
            return None
        try:
            rec = await self.store.get_robots(origin)
        except TurbocubesError as exc:
            log.warning("robots.txt of %s not read from the lane store (%s)", origin, exc.message)
            return None
        to_mono = self.clock.monotonic() - self.clock.time()
        if rec is None or rec.expires_at + to_mono <= self.clock.monotonic():
            return None
        if rec.allow_all is None:
            parser = Protego.parse(rec.body or "")
            return _Entry(parser, False, rec.expires_at + to_mono, crawl_delay=parser.crawl_delay(self.agent))
        return _Entry(None, rec.allow_all, rec.expires_at + to_mono, status=FetchStatus(rec.status), reason=rec.reason)

    async def _remember(self, origin: str, entry: _Entry, body: str | None) -> None:
        if self.store is None:
            return
        to_wall = self.clock.time() - self.clock.monotonic()
        record = RobotsRecord(
            origin=origin,
            fetched_at=self.clock.time(),
            expires_at=entry.expires_at + to_wall,
            allow_all=None if entry.parser is not None else entry.allow_all,
            body=body if entry.parser is not None else None,
            status=entry.status.value,
            reason=entry.reason,
        )
        try:
            await self.store.put_robots(record)
        except TurbocubesError as exc:  # the answer still holds here; a next owner asks again
            log.warning("robots.txt of %s not saved to the lane store (%s)", origin, exc.message)

    async def _load(self, origin: str, lane: Lane, deadline: float | None) -> _Entry:
        now = self.clock.monotonic()
        max_wait = self.max_lane_wait_s if deadline is None else min(self.max_lane_wait_s, deadline - now)
        if not await lane.acquire(max(0.0, max_wait)):
            return _Entry(None, False, now, status=FetchStatus.throttled, reason="lane paused (robots.txt)")
        result = None
        timeout = None if deadline is None else deadline - self.clock.monotonic()
        try:
            self.fetches += 1
            result = await self.fetcher.fetch(origin + "/robots.txt", max_bytes=ROBOTS_MAX_BYTES, timeout_s=timeout)
        finally:
            lane.release(signal_for(result) if result is not None else None)
        if result.status is FetchStatus.timeout and timeout is not None and timeout < self.fetcher.total_timeout_s:
            # cut short by the caller's deadline, not by the host: say so, and do not remember it
            reason = "robots.txt: no time left for it within this request's deadline"
            return _Entry(None, False, self.clock.monotonic(), status=FetchStatus.timeout, reason=reason)
        entry, text = self._answer(result)
        await self._remember(origin, entry, text)
        return entry

    def _answer(self, result: FetchResult) -> tuple[_Entry, str | None]:
        """What a robots.txt response means (RFC 9309 2.3.1), and its text when it is one to parse."""
        now = self.clock.monotonic()
        if result.status is FetchStatus.ok:
            text = (result.body or b"").decode("utf-8", errors="replace")
            parser = Protego.parse(text)
            return _Entry(parser, False, now + self.ttl_s, crawl_delay=parser.crawl_delay(self.agent)), text
        code = result.http_status or 0
        if 400 <= code < 500 and code != 429:
            return _Entry(None, True, now + self.ttl_s), None
        if result.status is FetchStatus.blocked_address:
            # the host itself may not be fetched: robots.txt is only the first URL that found out
            return _Entry(None, False, now + UNREACHABLE_TTL_S, status=result.status, reason=result.error or ""), None
        if result.status in _TRANSPORT:
            reason = f"robots.txt: {result.status.value}: {result.error}"
            return _Entry(None, False, now + UNREACHABLE_TTL_S, status=result.status, reason=reason), None
        reason = f"robots.txt unreachable ({result.error or result.status.value}): disallow all for now"
        return _Entry(None, False, now + UNREACHABLE_TTL_S, status=FetchStatus.robots_denied, reason=reason), None
