"""The WebSub callback endpoint of the scheduler: ``/websub/{feed_id}`` (docs/architecture.md section 3).

Any replica of the scheduler answers any feed: the subscription is read from
the feed's row (``websub.Subscriptions``), and a push becomes a crawl request
keyed by host, which reaches the crawler that owns the host's lane, and its
result the scheduler replica that owns the feed.

* ``GET``: the hub verifies a (un)subscription we asked for. We echo
  ``hub.challenge`` only when the feed exists, we asked for that mode and the
  topic is the one we asked about, and record the granted lease in the feed
  status. Anything else is a 404, so nobody can subscribe us to anything.
* ``POST``: content distribution. The body is streamed through the HMAC of
  the subscription's secret (never buffered, at most ``crawler.max_feed_bytes``);
  a valid ``X-Hub-Signature`` triggers an immediate fetch: one
  ``crawl.requests`` message with priority 0, published and durable before we
  answer 2xx (so a hub retries if we could not publish). An invalid or missing
  signature is answered 202 and ignored, as WebSub 8 asks, so a forger learns
  nothing. A removed feed answers 410, which tells the hub to stop.
"""

from __future__ import annotations

import logging

from aiohttp import web

from cubes.scheduler.websub import SignatureCheck, Subscriptions, SubState
from shared.clock import Clock
from shared.config import Settings
from shared.ports import listen
from shared.runtime.deps import Publish
from shared.stores import FeedStore
from shared.webmaster.feeds import fetch_request

__all__ = ["CallbackServer", "create_app"]

log = logging.getLogger(__name__)

#: a hub that grants no lease_seconds gets the one we asked for; this caps a silly large grant (1 year)
_MAX_LEASE_S = 365 * 86_400.0


def create_app(
    settings: Settings, feeds: FeedStore, book: Subscriptions, publish: Publish, clock: Clock
) -> web.Application:
    max_body = settings.crawler.max_feed_bytes

    async def verify(request: web.Request) -> web.StreamResponse:
        feed_id = request.match_info["feed_id"]
        q = request.query
        mode, topic, challenge = q.get("hub.mode", ""), q.get("hub.topic", ""), q.get("hub.challenge", "")
        # the row, not this process's memory: the replica that asked the hub may be another one
        feed = await feeds.get(feed_id)
        sub = None if feed is None else book.of(feed)
        if mode == "denied":
            # the hub refused (or cancelled) the subscription: stop trusting pushes, polling goes on
            if sub is not None and sub.topic == topic:
                await book.discard(feed_id)
                log.warning("websub hub denied feed %s: %s", feed_id, q.get("hub.reason", ""))
            return web.Response(text="")
        if not challenge or sub is None or sub.topic != topic:
            raise web.HTTPNotFound(text="no such subscription")
        if mode == "subscribe" and sub.state in (SubState.pending, SubState.active):
            if feed is None or feed.deleted:
                raise web.HTTPNotFound(text="no such feed")
            try:
                lease = float(q.get("hub.lease_seconds", settings.scheduler.websub_lease_s))
            except ValueError:
                raise web.HTTPBadRequest(text="hub.lease_seconds is not a number") from None
            lease = min(max(lease, 0.0), _MAX_LEASE_S)
            await book.activate(feed_id, clock.time() + lease)
            return web.Response(text=challenge, content_type="text/plain")
        if mode == "unsubscribe" and sub.state is SubState.unsubscribing:
            await book.discard(feed_id)
            return web.Response(text=challenge, content_type="text/plain")
        raise web.HTTPNotFound(text="no such subscription")

    async def distribute(request: web.Request) -> web.StreamResponse:
        feed_id = request.match_info["feed_id"]
        feed = await feeds.get(feed_id)
        if feed is None or feed.deleted:
            raise web.HTTPGone(text="no such feed")
        sub = book.of(feed)
        if sub is None or sub.state is SubState.unsubscribing:
            log.info("websub push for feed %s without a subscription: ignored", feed_id)
            return web.Response(status=202)
        check = SignatureCheck(request.headers.get("X-Hub-Signature"), sub.secret)
        size = 0
        async for chunk in request.content.iter_chunked(64 * 1024):
            size += len(chunk)
            if size > max_body:
                raise web.HTTPRequestEntityTooLarge(max_size=max_body, actual_size=size)
            check.update(chunk)
        if not check.valid():
            log.warning("websub push for feed %s with a bad or missing signature: ignored", feed_id)
            return web.Response(status=202)
        now = clock.now()
        await publish([fetch_request(feed, now)])
        return web.Response(status=202)

    app = web.Application(client_max_size=max_body)
    app.router.add_get("/websub/{feed_id}", verify)
    app.router.add_post("/websub/{feed_id}", distribute)
    return app


class CallbackServer:
    """Runs the callback app on ``scheduler.websub_host:websub_port`` (port 0: a free one, see ``port``)."""

    def __init__(self, app: web.Application, host: str, port: int) -> None:
        self._app = app
        self._host = host
        self._port = port
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self) -> None:
        self._runner = web.AppRunner(self._app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        await listen(site.start, key="scheduler.websub_port", host=self._host, port=self._port)
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
