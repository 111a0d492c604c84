"""WebSub, the subscriber side: discovery, signatures, subscription state (docs/architecture.md section 3).

A feed that declares a hub (``<atom:link rel="hub" href="..."/>`` plus a
``rel="self"`` topic, or the same pair in HTTP ``Link`` headers) is
subscribed to it; the hub then POSTs new content to our callback and we fetch
the feed at once instead of waiting for the next poll (W3C WebSub, 2018).

Discovery reads only the head of the document (up to the first item / entry), as
``feedhead.py`` parsed it: entity expansion, DTD loading and network access all off,
so a hostile feed can neither blow up memory nor make us fetch anything.

``Subscriptions`` keeps the per-feed hub, topic, HMAC secret and lease in the
feed's row (``websub_hub``, ``websub_topic``, ``websub_secret``,
``websub_expires_at``) and nowhere else, written before the hub is asked: the
scheduler runs as several replicas behind one callback address, and whichever
replica a hub's verification or push reaches reads what the subscribing
replica wrote; a restarted replica forgets nothing either.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from cubes.scheduler.feedhead import FeedHead
from shared.clock import at
from shared.errors import NotFound
from shared.stores import Feed, FeedStore

__all__ = [
    "Discovery",
    "SignatureCheck",
    "SubState",
    "Subscription",
    "Subscriptions",
    "discover",
    "new_secret",
]

#: WebSub 5.3: sha1 is allowed for old hubs; sha2 family preferred
_ALGORITHMS = {
    "sha1": hashlib.sha1,
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
}
_LINK_HEADER_RE = re.compile(r"<([^>]*)>\s*((?:;\s*[^;,]*)*)")
_REL_RE = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))""", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Discovery:
    hub: str
    topic: str


def _from_link_header(value: str) -> tuple[str | None, str | None]:
    hub = topic = None
    for match in _LINK_HEADER_RE.finditer(value):
        target, params = match.group(1).strip(), match.group(2)
        for rel_match in _REL_RE.finditer(params):
            rels = (rel_match.group(1) or rel_match.group(2) or "").lower().split()
            if "hub" in rels and hub is None:
                hub = target
            if "self" in rels and topic is None:
                topic = target
    return hub, topic


def _from_head(head: FeedHead) -> tuple[str | None, str | None]:
    hub = topic = None
    for rels, href in head.links:
        if "hub" in rels and hub is None:
            hub = href
        if "self" in rels and topic is None:
            topic = href
    return hub, topic


def discover(head: FeedHead, headers: Mapping[str, str] | None = None) -> Discovery | None:
    """The hub and topic a feed declares (HTTP ``Link`` headers first, as the spec says), or None.

    ``head`` is the feed's head as ``feedhead.read_head`` read it (once per fetch).
    """
    hub = topic = None
    link = (headers or {}).get("link")
    if link:
        hub, topic = _from_link_header(link)
    if hub is None or topic is None:
        body_hub, body_topic = _from_head(head)
        hub = hub or body_hub
        topic = topic or body_topic
    if not hub or not topic:
        return None
    return Discovery(hub=hub, topic=topic)


def new_secret() -> str:
    """A fresh HMAC secret for one subscription (WebSub: under 200 bytes)."""
    return secrets.token_urlsafe(32)


class SignatureCheck:
    """Verifies ``X-Hub-Signature: <algo>=<hex>`` over a body fed in chunks (never buffered whole)."""

    def __init__(self, header: str | None, secret: str) -> None:
        self._expected: str | None = None
        self._mac: hmac.HMAC | None = None
        if not header or "=" not in header:
            return
        algo, _, digest = header.strip().partition("=")
        factory = _ALGORITHMS.get(algo.strip().lower())
        if factory is None:
            return
        self._expected = digest.strip().lower()
        self._mac = hmac.new(secret.encode("utf-8"), digestmod=factory)

    def update(self, chunk: bytes) -> None:
        if self._mac is not None:
            self._mac.update(chunk)

    def valid(self) -> bool:
        if self._mac is None or self._expected is None:
            return False
        return hmac.compare_digest(self._mac.hexdigest(), self._expected)


class SubState(StrEnum):
    pending = "pending"  # asked the hub; waiting for its verification GET
    active = "active"  # verified; pushes are accepted until the lease runs out
    unsubscribing = "unsubscribing"  # asked the hub to stop (the feed was removed)


@dataclass(frozen=True, slots=True)
class Subscription:
    feed_id: str
    hub: str
    topic: str
    secret: str
    state: SubState
    requested_at: float
    expires_at: float | None = None


class Subscriptions:
    """feed id -> its WebSub subscription, read from and written to the feed's row.

    The state is the row's: *pending* (asked, no lease yet), *active* (verified: a lease),
    *unsubscribing* (the feed was removed: deleted, or its schedule already reset by the removal's
    announcement). Only when a subscription was asked for is kept in memory: it paces asking a hub
    that never verified again, and a restarted replica simply asks again.
    """

    def __init__(self, feeds: FeedStore) -> None:
        self._feeds = feeds
        self._asked: dict[str, float] = {}

    def of(self, feed: Feed) -> Subscription | None:
        """The subscription ``feed``'s row holds, if any."""
        st = feed.status
        if not (st.websub_hub and st.websub_topic and st.websub_secret):
            return None
        removed = feed.deleted or (st.schedule_partition is None and st.next_fetch_at is None)
        expires = st.websub_expires_at.timestamp() if st.websub_expires_at else None
        state = SubState.unsubscribing if removed else (SubState.active if expires is not None else SubState.pending)
        asked = self._asked.get(feed.feed_id, 0.0)
        return Subscription(feed.feed_id, st.websub_hub, st.websub_topic, st.websub_secret, state, asked, expires)

    async def get(self, feed_id: str) -> Subscription | None:
        feed = await self._feeds.get(feed_id)
        return None if feed is None else self.of(feed)

    async def put(self, sub: Subscription) -> None:
        """Store ``sub`` (awaited: a hub may verify before it even answers the request)."""
        self._asked[sub.feed_id] = sub.requested_at
        expires = None if sub.expires_at is None else at(sub.expires_at)
        with contextlib.suppress(NotFound):  # a feed removed meanwhile: nothing to keep
            await self._feeds.update_schedule(
                sub.feed_id,
                websub_hub=sub.hub,
                websub_topic=sub.topic,
                websub_secret=sub.secret,
                websub_expires_at=expires,
            )

    async def activate(self, feed_id: str, expires_at: float) -> None:
        """The hub verified the subscription: it is active until ``expires_at``."""
        self._asked.pop(feed_id, None)
        with contextlib.suppress(NotFound):
            await self._feeds.update_schedule(feed_id, websub_expires_at=at(expires_at))

    async def discard(self, feed_id: str) -> None:
        """No subscription any more (denied, or unsubscribed): pushes are not trusted, polling goes on."""
        self._asked.pop(feed_id, None)
        with contextlib.suppress(NotFound):
            await self._feeds.update_schedule(
                feed_id, websub_hub=None, websub_topic=None, websub_secret=None, websub_expires_at=None
            )
