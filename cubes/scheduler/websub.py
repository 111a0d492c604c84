"""WebSub, the subscriber side: discovery, signatures, subscription state (DESIGN.md section 3, issue 4).

A feed that declares a hub (``<atom:link rel="hub" href="..."/>`` plus a
``rel="self"`` topic, or the same pair in HTTP ``Link`` headers) is
subscribed to it; the hub then POSTs new content to our callback and we fetch
the feed at once instead of waiting for the next poll (W3C WebSub, 2018).

Discovery parses only the head of the document (up to the first item /
entry) with lxml, entity expansion, DTD loading and network access all off,
so a hostile feed can neither blow up memory nor make us fetch anything.

``Subscriptions`` holds the per-feed hub, topic and HMAC secret in memory for
the callback's fast path and writes them through to the FeedStore
(``websub_hub``, ``websub_topic``, ``websub_secret``, ``websub_expires_at``),
so a restarted scheduler — or another instance the hub's callback lands on
after ``load()`` — can still verify pushes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import io
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from lxml import etree

from shared.stores import FeedStore

__all__ = [
    "Discovery",
    "SignatureCheck",
    "SubState",
    "Subscription",
    "Subscriptions",
    "discover",
    "new_secret",
]

#: elements after which no feed-level link can follow: stop parsing there
_STOP_AT = frozenset({"item", "entry"})
#: do not read past this many bytes of the head looking for links (a feed's head is tiny)
_HEAD_LIMIT = 256 * 1024
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


def _from_body(body: bytes) -> tuple[str | None, str | None]:
    hub = topic = None
    head = body[:_HEAD_LIMIT]
    try:
        for _event, el in etree.iterparse(
            io.BytesIO(head),
            events=("start",),
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            recover=False,
        ):
            tag = el.tag if isinstance(el.tag, str) else ""
            local = etree.QName(tag).localname if tag else ""
            if local in _STOP_AT:
                break
            if local != "link":
                continue
            rels = (el.get("rel") or "").lower().split()
            href = (el.get("href") or "").strip()
            if not href:
                continue
            if "hub" in rels and hub is None:
                hub = href
            if "self" in rels and topic is None:
                topic = href
            if hub and topic:
                break
    except etree.XMLSyntaxError:
        # a truncated head or a broken feed: whatever was found before the error stands
        pass
    return hub, topic


def discover(body: bytes | None, headers: Mapping[str, str] | None = None) -> Discovery | None:
    """The hub and topic a feed declares (HTTP ``Link`` headers first, as the spec says), or None."""
    hub = topic = None
    link = (headers or {}).get("link")
    if link:
        hub, topic = _from_link_header(link)
    if (hub is None or topic is None) and body:
        body_hub, body_topic = _from_body(body)
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
    """feed id -> its WebSub subscription: in memory, written through to the FeedStore when given one."""

    def __init__(self, feeds: FeedStore | None = None) -> None:
        self._subs: dict[str, Subscription] = {}
        self._feeds = feeds
        self._writes: set[asyncio.Task[None]] = set()

    async def load(self) -> int:
        """Read the subscriptions a previous run stored; returns how many."""
        if self._feeds is None:
            return 0
        n = 0
        for feed in await self._feeds.list():
            st = feed.status
            if st.websub_hub and st.websub_topic and st.websub_secret:
                expires = st.websub_expires_at.timestamp() if st.websub_expires_at else None
                state = SubState.active if expires is not None else SubState.pending
                self._subs[feed.feed_id] = Subscription(
                    feed.feed_id, st.websub_hub, st.websub_topic, st.websub_secret, state, 0.0, expires
                )
                n += 1
        return n

    async def load_quietly(self) -> None:
        """``load`` as a cube start hook."""
        await self.load()

    def _persist(self, feed_id: str, **fields: object) -> None:
        if self._feeds is None:
            return
        feeds = self._feeds

        async def write() -> None:
            with contextlib.suppress(Exception):  # a feed removed meanwhile: nothing to keep
                await feeds.update_schedule(feed_id, **fields)

        task = asyncio.ensure_future(write())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def flush(self) -> None:
        """Wait for the pending store writes (tests, shutdown)."""
        if self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    def get(self, feed_id: str) -> Subscription | None:
        return self._subs.get(feed_id)

    def put(self, sub: Subscription) -> None:
        self._subs[sub.feed_id] = sub
        self._persist(sub.feed_id, websub_hub=sub.hub, websub_topic=sub.topic, websub_secret=sub.secret)

    def activate(self, feed_id: str, expires_at: float) -> Subscription | None:
        sub = self._subs.get(feed_id)
        if sub is None:
            return None
        sub = replace(sub, state=SubState.active, expires_at=expires_at)
        self._subs[feed_id] = sub
        return sub

    def discard(self, feed_id: str) -> None:
        if self._subs.pop(feed_id, None) is not None:
            self._persist(feed_id, websub_topic=None, websub_secret=None)
