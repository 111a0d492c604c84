"""An IndexNow ping refreshes a changed page, on the real engines (docs/architecture.md sections 6, 10).

Every cube runs in this process (``run_up``) on Apache Kafka and PostgreSQL (the
article has no image: the CDN is files); the site is a real aiohttp server on 127.0.0.1 with an RSS feed and
an IndexNow key file. A tenant holds a right on the site's origin and registers
the feed through the API; its article becomes a page. Then the article changes
at its source and the site pings ``POST /indexnow`` with the article's URL and
its key: the key file is read on the site's origin, the feed that published the
page is fetched now through the host's lane, and the page in the KV store shows
the new text. The scheduler's own polls are an hour apart here, so nothing else
could have fetched the feed again within the test.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from cubes.launcher import run_up
from shared.config import Settings
from shared.stores import Stores, open_stores

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

#: topic creation, group joins and the first fetch take a while on Kafka under load
DEADLINE_S = 180.0
KEY = "indexnow-key-0123456789"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Site:
    """The partner: /feed.xml with one article whose text changes, and the IndexNow key file."""

    def __init__(self) -> None:
        self.text = "The first version of the story about the lighthouse keeper."
        self.hits: dict[str, int] = {}
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _feed(self, request: web.Request) -> web.Response:
        self.hits["/feed.xml"] = self.hits.get("/feed.xml", 0) + 1
        body = (
            '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Lighthouse news</title>'
            f"<link>{self.origin}/</link><language>en</language><item><title>The keeper</title>"
            f"<link>{self.origin}/news/1</link><guid>{self.origin}/news/1</guid>"
            f"<description>{self.text}</description></item></channel></rss>"
        )
        return web.Response(text=body, content_type="application/rss+xml")

    async def _key(self, request: web.Request) -> web.Response:
        self.hits[request.path] = self.hits.get(request.path, 0) + 1
        return web.Response(text=KEY, content_type="text/plain")

    async def __aenter__(self) -> Site:
        app = web.Application()
        app.router.add_get("/feed.xml", self._feed)
        app.router.add_get(f"/{KEY}.txt", self._key)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async with Site() as s:
        yield s


async def _until(what: str, check: object, deadline: float, task: asyncio.Task[int]) -> None:
    loop = asyncio.get_running_loop()
    while True:
        if task.done():
            pytest.fail(f"run_up ended early with {task.result()}")
        assert callable(check)
        if await check():
            return
        assert loop.time() < deadline, f"{what}: not within {DEADLINE_S:.0f} s"
        await asyncio.sleep(0.5)  # a poll interval, not a synchronization


async def test_an_indexnow_ping_refreshes_the_changed_page(
    tmp_path: Path, site: Site, kafka_url: str, postgres_url: str, uid: str
) -> None:
    bus_url = f"{kafka_url}{'&' if '?' in kafka_url else '?'}prefix=indexnow-{uid}."
    store_url = f"{postgres_url}{'&' if '?' in postgres_url else '?'}schema=indexnow_{uid}"
    api_port, front_port = _free_port(), _free_port()
    settings = Settings().replace(
        bus={"url": bus_url},
        store={"url": store_url},
        cdn={"url": f"file://{tmp_path}/cdn"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 10.0},
        api={"port": api_port},
        http={"allowlist": ["127.0.0.1/32"]},
        scheduler={"websub_port": 0, "min_interval_s": 3600.0, "max_interval_s": 7200.0},
        frontend={"port": front_port, "public_url": f"http://127.0.0.1:{front_port}"},
    )
    page_url = f"{site.origin}/news/1"
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(settings, stop_event=stop))
    stores: Stores | None = None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE_S
    api = f"http://127.0.0.1:{api_port}"
    try:
        async with aiohttp.ClientSession() as http:

            async def api_up() -> bool:
                try:
                    async with http.get(f"{api}/api/v1/openapi.json") as resp:
                        return resp.status == 200
                except aiohttp.ClientError:
                    return False

            await _until("the API answers", api_up, deadline, task)
            stores = await open_stores(store_url)  # its schema is made by now
            tenant = await stores.tenants.create_tenant("lighthouse news")
            await stores.tenants.add_host(tenant.tenant_id, "127.0.0.1", origin=site.origin)
            await stores.tenants.set_verified(tenant.tenant_id, "127.0.0.1", True)
            token = await stores.tenants.issue_token(tenant.tenant_id)
            auth = {"Authorization": f"Bearer {token}"}
            body = {"url": f"{site.origin}/feed.xml", "format": "rss"}
            async with http.post(f"{api}/api/v1/feeds", json=body, headers=auth) as resp:
                assert resp.status == 201, await resp.text()

            async def shows(text: str) -> bool:
                assert stores is not None
                page = await stores.pages.get(page_url)
                return page is not None and text in page.html

            await _until("the first version is a page", lambda: shows("first version"), deadline, task)
            polls = site.hits["/feed.xml"]

            site.text = "The second version: the keeper retires after forty years."
            ping = {"host": "127.0.0.1", "key": KEY, "urlList": [page_url]}
            async with http.post(f"{api}/indexnow", json=ping) as resp:
                answer = await resp.json()
                assert resp.status == 200, answer
            (refresh,) = answer["refreshes"]
            assert (refresh["action"], refresh["queued"], answer["refused"]) == ("feed", True, [])
            assert site.hits[f"/{KEY}.txt"] == 1  # the key, read on the site's own origin

            await _until("the page shows the second version", lambda: shows("second version"), deadline, task)
            assert site.hits["/feed.xml"] == polls + 1  # the ping's one fetch, no scheduled poll
            assert not await shows("first version")
    finally:
        stop.set()
        rc = await asyncio.wait_for(task, 60)
        if stores is not None:
            await stores.close()
    assert rc == 0
