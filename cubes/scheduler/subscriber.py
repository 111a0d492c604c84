"""WebSub subscription requests to hubs, through the SSRF guard (docs/architecture.md section 6).

A hub URL comes from a partner's feed, so it is partner-controlled: the POST
goes through ``shared.http.guard`` (scheme and literal-IP check first, every
resolved address checked inside the resolver aiohttp connects with) and
never follows a redirect.

When to (re)subscribe is decided on each successful fetch of the feed
(``due_for``): there is no separate renewal timer, because a subscribed feed is
still polled at least every ``max_interval_s``, so renewing once fewer than
two polling intervals of lease are left always happens in time.
"""

from __future__ import annotations

import logging
from urllib.parse import quote

import aiohttp
from aiohttp.abc import AbstractResolver

from cubes.scheduler.websub import Discovery, Subscription, Subscriptions, SubState, new_secret
from shared.config import Settings
from shared.errors import BlockedAddressError
from shared.http.guard import AddressGuard, GuardedResolver
from shared.urls import resolve_url

__all__ = ["PENDING_RETRY_S", "Subscriber"]

log = logging.getLogger(__name__)

#: a hub that accepted a request but never verified it is asked again after this long
PENDING_RETRY_S = 3600.0
#: a hub request is tiny; a hub slower than this is treated as down (retried on a later poll)
_HUB_TIMEOUT_S = 10.0


class Subscriber:
    """Sends ``hub.mode=subscribe|unsubscribe`` requests and remembers what it asked for."""

    def __init__(self, settings: Settings, book: Subscriptions, *, resolver: AbstractResolver | None = None) -> None:
        self._settings = settings
        self.book = book
        #: public base of our callback (``scheduler.websub_callback_base``); "" = WebSub off
        self.callback_base = settings.scheduler.websub_callback_base.rstrip("/")
        self._guard = AddressGuard(settings.http.allowlist)
        self._resolver = resolver
        self._session: aiohttp.ClientSession | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.callback_base)

    def callback_url(self, feed_id: str) -> str:
        return f"{self.callback_base}/websub/{quote(feed_id, safe='')}"

    def due_for(self, sub: Subscription | None, found: Discovery, now: float) -> bool:
        """Whether a fetch that found ``found`` should (re)subscribe now, ``sub`` being the feed's."""
        if not self.enabled:
            return False
        if sub is None or sub.hub != found.hub or sub.topic != found.topic:
            return True
        if sub.state is SubState.pending:
            return now - sub.requested_at >= PENDING_RETRY_S
        if sub.state is SubState.active and sub.expires_at is not None:
            # renew while at least one more safety-net poll will happen before expiry
            return sub.expires_at - now < 2 * self._settings.scheduler.max_interval_s
        return False

    async def subscribe(self, feed_id: str, feed_url: str, found: Discovery, now: float) -> str | None:
        """Ask the hub to subscribe; None when it accepted, else the reason it did not."""
        sub = Subscription(
            feed_id=feed_id,
            hub=found.hub,
            topic=found.topic,
            secret=new_secret(),
            state=SubState.pending,
            requested_at=now,
        )
        # remembered before the POST: the hub may verify before it even answers us
        previous = await self.book.get(feed_id)
        await self.book.put(sub)
        try:
            hub = resolve_url(feed_url, found.hub)
        except ValueError as exc:
            # pending: asked again after PENDING_RETRY_S, not on every poll
            log.warning("websub hub of feed %s is unusable: %s", feed_id, exc)
            return f"hub refused: {exc}"
        error = await self._post(
            hub,
            {
                "hub.mode": "subscribe",
                "hub.topic": found.topic,
                "hub.callback": self.callback_url(feed_id),
                "hub.lease_seconds": str(int(self._settings.scheduler.websub_lease_s)),
                "hub.secret": sub.secret,
            },
        )
        if error is not None:
            # keep a still-valid older subscription rather than forget it
            if previous is not None and previous.state is SubState.active:
                await self.book.put(previous)
            else:
                await self.book.put(sub)  # pending: retried after PENDING_RETRY_S, not on every poll
            log.warning("websub subscribe of feed %s at %s failed: %s", feed_id, hub, error)
        return error

    async def unsubscribe(self, feed_id: str, feed_url: str) -> str | None:
        """Ask the hub to stop pushing (the feed was removed); None when it accepted."""
        # the row says "unsubscribing" itself (the removal's announcement reset its schedule first)
        sub = await self.book.get(feed_id)
        if sub is None or not self.enabled:
            return None
        try:
            hub = resolve_url(feed_url, sub.hub)
        except ValueError as exc:
            return f"hub refused: {exc}"
        return await self._post(
            hub,
            {"hub.mode": "unsubscribe", "hub.topic": sub.topic, "hub.callback": self.callback_url(feed_id)},
        )

    async def _post(self, hub: str, form: dict[str, str]) -> str | None:
        try:
            url = self._guard.check_url(hub)
        except (BlockedAddressError, ValueError) as exc:
            return f"hub refused: {exc}"
        try:
            async with self._client().post(url, data=form, allow_redirects=False) as resp:
                if 200 <= resp.status < 300:
                    return None
                return f"hub answered HTTP {resp.status}"
        except BlockedAddressError as exc:
            return f"hub refused: {exc}"
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return f"hub unreachable: {type(exc).__name__}: {exc}"

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            resolver = GuardedResolver(self._guard, self._resolver)
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(resolver=resolver),
                timeout=aiohttp.ClientTimeout(total=_HUB_TIMEOUT_S),
                headers={"User-Agent": self._settings.http.user_agent},
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
