"""The scheduler cube's wiring (DESIGN.md section 3; STYLE.md rule 1).

Consumes ``feeds.registry`` (what to fetch) and ``crawl.feeds`` (how the
last fetch went), ticks every ``scheduler.tick_s`` to emit due feeds to
``crawl.requests``, and, when ``scheduler.websub_callback_base`` is set, serves
the WebSub callback on ``scheduler.websub_host:websub_port``.
"""

from __future__ import annotations

from cubes.scheduler.callback import CallbackServer, create_app
from cubes.scheduler.handler import SchedulerHandler
from cubes.scheduler.subscriber import Subscriber
from cubes.scheduler.websub import Subscriptions
from shared.config import Settings
from shared.runtime.cube import Cube, Service, Timer
from shared.runtime.deps import Deps

__all__ = ["build"]


async def build(settings: Settings, deps: Deps) -> Cube:
    feeds = (await deps.stores()).feeds
    book = Subscriptions(feeds)
    subscriber = Subscriber(settings, book, resolver=deps.resolver)
    handler = SchedulerHandler(settings, feeds, deps.publish, deps.clock, subscriber=subscriber, blobs=deps.blobs)
    services: tuple[Service, ...] = ()
    if subscriber.enabled:
        server = CallbackServer(
            create_app(settings, feeds, book, deps.publish, deps.clock),
            settings.scheduler.websub_host,
            settings.scheduler.websub_port,
        )
        services = (Service("websub-callback", server.start, server.stop),)
    return Cube(
        name="scheduler",
        inputs=("feeds.registry", "crawl.feeds"),
        outputs=("crawl.requests",),
        handler=handler.handle,
        timers=(Timer("tick", settings.scheduler.tick_s, handler.tick),),
        services=services,
        on_start=book.load_quietly,
        on_stop=handler.close,
    )
