"""The scheduler cube's wiring (docs/architecture.md section 3; docs/conventions.md rule 1).

Runs as any number of replicas in one consumer group: each ticks the feeds of
the hosts in its ``crawl.feeds`` partitions (``ownership.py``, ``tick.py``).
Consumes ``feeds.registry`` (what to fetch), ``crawl.feeds`` (how the
last fetch went) and ``crawl.pages`` (sitemaps and home pages of autoparser
hosts, ``discovery.py``), ticks every ``scheduler.tick_s`` to emit due feeds
and discovery rounds to ``crawl.requests`` (holding YML re-fetches and page
crawls back while the pipeline is overloaded; an ``overload`` timer re-reads
the lag), and, when
``scheduler.websub_callback_base`` is set, serves the WebSub callback on
``scheduler.websub_host:websub_port``.
"""

from __future__ import annotations

from dataclasses import replace

from cubes.scheduler.callback import CallbackServer, create_app
from cubes.scheduler.discovery import Discovery
from cubes.scheduler.handler import SchedulerHandler
from cubes.scheduler.ownership import Ownership
from cubes.scheduler.subscriber import Subscriber
from cubes.scheduler.websub import Subscriptions
from shared.config import Settings
from shared.overload import PAGE_CRAWLS, YML_REFETCHES, Overload
from shared.runtime.cube import Cube, Service, Timer
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]


CUBE = Cube(
    name="scheduler",
    inputs=("feeds.registry", "crawl.feeds", "crawl.pages"),
    outputs=("crawl.requests",),
    replicable=True,  # each replica ticks the feeds of its partitions (ownership.py)
)


async def build(settings: Settings, deps: Deps) -> Cube:
    stores = await deps.stores()
    feeds = stores.feeds
    book = Subscriptions(feeds)
    subscriber = Subscriber(settings, book, resolver=deps.resolver)
    # YML re-fetches and discovery rounds yield while the pipeline lags (shared/overload.py);
    # a timer refreshes it
    overload = Overload(settings, stores.status, deps.clock, cube="scheduler", yields=(YML_REFETCHES, PAGE_CRAWLS))
    # this replica ticks the feeds of the hosts in its crawl.feeds partitions (ownership.py)
    ownership = await Ownership.of(deps.bus)
    discovery = Discovery(
        settings.scheduler,
        feeds,
        deps.clock,
        hashes=stores.hashes,
        blobs=deps.blobs,
        overload=overload,
        tenants=stores.tenants,
        ownership=ownership,
    )
    handler = SchedulerHandler(
        settings,
        feeds,
        deps.clock,
        subscriber=subscriber,
        blobs=deps.blobs,
        overload=overload,
        discovery=discovery,
        ownership=ownership,
    )
    services: tuple[Service, ...] = ()
    if subscriber.enabled:
        server = CallbackServer(
            create_app(settings, feeds, book, deps.publish, deps.clock),
            settings.scheduler.websub_host,
            settings.scheduler.websub_port,
        )
        services = (Service("websub-callback", server.start, server.stop),)
    return replace(
        CUBE,
        handler=handler.handle,
        timers=(
            Timer("tick", settings.scheduler.tick_s, handler.tick),
            Timer("overload", settings.runtime.status_interval_s, overload.tick),
        ),
        services=services,
        on_assignment=ownership.follow,
        on_stop=handler.close,
    )
