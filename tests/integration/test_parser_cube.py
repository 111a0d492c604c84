"""The parser cube on the real runtime and the embedded SQLite bus (docs/architecture.md section 2).

Crawl results (inline and by blob reference) and a partner upload go onto the
input topics; the runner drives the cube to a bounded end; documents and
deletions are read back from the output topics. The same input again yields
nothing new; a hostile feed is not dead-lettered (it is the feed's problem,
recorded in its status), a missing blob is.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from cubes.parser.cube import build
from shared import contracts
from shared.config import Settings
from shared.messages import CrawlKind, CrawlResult, Document, DocumentDeleted, FetchStatus, PartnerUpload, UploadFormat
from shared.runtime import Output, ensure_topics, open_deps, run_cube
from shared.runtime.deps import Deps
from shared.stores import Feed, Task

TURBO = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:turbo="http://turbo.yandex.ru"><channel><title>t</title><link>https://news.test/</link>
<item turbo="true"><title>One</title><link>https://news.test/1</link>
<turbo:content><![CDATA[<header><h1>One</h1></header><p>one</p><img src="/a.jpg">]]></turbo:content></item>
<item turbo="false"><link>https://news.test/old</link></item>
</channel></rss>"""


def _catalog(n: int) -> bytes:
    offers = "".join(
        f'<offer id="{i}"><url>https://shop.test/p/{i}</url><price>{i}</price><currencyId>RUR</currencyId>'
        f"<categoryId>1</categoryId><picture>https://shop.test/i/{i}.jpg</picture><name>Item {i}</name></offer>"
        for i in range(n)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><yml_catalog><shop><categories><category id="1">Cat'
        f"</category></categories><offers>{offers}</offers></shop></yml_catalog>"
    ).encode()


async def read_all(deps: Deps, topic: str) -> list[object]:
    out: list[object] = []
    for partition, end in (await deps.bus.end_offsets(topic)).items():
        for rec in await deps.bus.read(topic, partition, 0, end + 1):
            out.append(contracts.decode(topic, rec.value))
    return out


async def test_parser_cube_end_to_end(tmp_path: Path) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "max_attempts": 1},
    )
    now = datetime.now(UTC)
    deps = await open_deps(settings)
    try:
        await ensure_topics(deps, ["parser"])
        stores = await deps.stores()
        for fid, host in (("turbo1", "news.test"), ("yml1", "shop.test"), ("bad1", "news.test")):
            await stores.feeds.upsert_feed(Feed(feed_id=fid, url=f"https://{host}/{fid}", host=host, format="auto"))
        await stores.tasks.create(Task(task_id="t1", tenant_id="ten", host="news.test"))
        # the parser reads the uploading tenant's verified hosts when it parses (shared.webmaster.hosts)
        await stores.tenants.create_tenant("ten", tenant_id="ten")
        await stores.tenants.add_host("ten", "news.test")
        await stores.tenants.set_verified("ten", "news.test")
        blobs = await deps.blobs()
        await blobs.put("feeds/yml1", _catalog(300))

        def crawl(fid: str, host: str, **kw: Any) -> CrawlResult:
            return CrawlResult(
                kind=CrawlKind.feed,
                url=f"https://{host}/{fid}",
                host=host,
                status=FetchStatus.ok,
                feed_id=fid,
                fetched_at=now,
                **kw,
            )

        inputs = [
            Output("crawl.feeds", crawl("turbo1", "news.test", body=TURBO)),
            Output("crawl.feeds", crawl("yml1", "shop.test", body_ref="feeds/yml1")),
            Output(
                "crawl.feeds",
                crawl("bad1", "news.test", body=b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss/>'),
            ),
            Output("crawl.feeds", crawl("gone1", "news.test", body_ref="feeds/missing")),
            Output(
                "partner.uploads",
                PartnerUpload(
                    task_id="t1",
                    tenant_id="ten",
                    host="news.test",
                    format=UploadFormat.json,
                    received_at=now,
                    body=orjson.dumps(
                        [{"url": "https://news.test/pushed", "title": "Pushed", "content_html": "<p>p</p>"}]
                    ),
                ),
            ),
        ]
        await deps.publish(inputs)
        cube = await build(settings, deps)
        stats = await run_cube(cube, deps, group="parser-test", max_messages=len(inputs), idle_timeout=10.0)
        assert stats.processed + stats.dead_lettered == len(inputs)
        assert stats.dead_lettered == 1  # the missing blob, nothing else

        parsed = [m for m in await read_all(deps, "documents.parsed") if isinstance(m, Document)]
        deleted = [m for m in await read_all(deps, "documents.deleted") if isinstance(m, DocumentDeleted)]
        # the Turbo item, 300 offers and their one category's listing page, the pushed document
        assert len(parsed) == 1 + 300 + 1 + 1
        assert len([d for d in parsed if d.url.startswith("https://shop.test/p/")]) == 300
        urls = {d.url for d in parsed}
        assert {"https://news.test/1", "https://news.test/pushed", "https://shop.test/p/299"} <= urls
        [one] = [d for d in parsed if d.url == "https://news.test/1"]
        assert [m.url for m in one.media] == ["https://news.test/a.jpg"]
        product = next(d for d in parsed if d.url == "https://shop.test/p/7").product
        assert product is not None
        assert product.category == "Cat"
        assert product.price == "7"
        assert [d.url for d in deleted] == ["https://news.test/old"]

        bad = await stores.feeds.get("bad1")
        assert bad is not None
        assert bad.status.last_result == "parse_error"
        assert "XXE" in (bad.status.last_error or "")
        assert bad.status.error_line == 1
        task = await stores.tasks.get("t1")
        assert task is not None
        assert [i.status for i in task.items] == ["ok"]

        # the same feeds again: nothing new is published
        again = inputs[:2]
        await deps.publish(again)
        stats = await run_cube(cube, deps, group="parser-test", max_messages=len(again), idle_timeout=10.0)
        assert stats.processed == len(again)
        assert len(await read_all(deps, "documents.parsed")) == len(parsed)
        assert len(await read_all(deps, "documents.deleted")) == len(deleted)
    finally:
        await deps.close()


def _write_catalog(path: Path, n: int) -> None:
    """A YML catalog of ``n`` offers (categories, prices, pictures, params), written as it is generated."""
    with path.open("w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-01-01 10:00"><shop><categories>')
        f.write("".join(f'<category id="{c}">Category {c}</category>' for c in range(CATEGORIES)))
        f.write("</categories><offers>")
        for i in range(n):
            f.write(
                f'<offer id="o{i}" available="true"><url>https://shop.test/p/{i}</url><price>{i % 5000}</price>'
                f"<currencyId>RUR</currencyId><categoryId>{i % CATEGORIES}</categoryId>"
                f"<picture>https://shop.test/i/{i}.jpg</picture><name>Product {i}</name>"
                f"<vendor>Vendor {i % 30}</vendor><description><![CDATA[<p>Product {i}.</p>]]></description>"
                f'<param name="Weight" unit="kg">{i % 9}.5</param></offer>\n'
            )
        f.write("</offers></shop></yml_catalog>")


#: offers of the big catalog: 100,000 take 35-50 s here (the handler ~9 s; most of the rest is the runtime
#: encoding 100,000 documents and the SQLite bus storing them); bench/parser.py (d) times the handler alone
BIG_CATALOG = 100_000
#: categories of ``_write_catalog``: each gets a listing page of its own
CATEGORIES = 50


@pytest.mark.slow
@pytest.mark.timeout(300)  # the suite's 120 s is tight for this one on a loaded machine
async def test_first_load_of_a_big_catalog_then_nothing(tmp_path: Path) -> None:
    """A big YML catalog by blob reference: every offer published once, within the handler timeout."""
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "max_attempts": 1},
    )
    catalog = tmp_path / "catalog.xml"
    _write_catalog(catalog, BIG_CATALOG)
    deps = await open_deps(settings)
    try:
        await ensure_topics(deps, ["parser"])
        stores = await deps.stores()
        await stores.feeds.upsert_feed(
            Feed(feed_id="big", url="https://shop.test/big.xml", host="shop.test", format="yml")
        )
        await (await deps.blobs()).put_file("feeds/big", catalog)
        crawl = Output(
            "crawl.feeds",
            CrawlResult(
                kind=CrawlKind.feed,
                url="https://shop.test/big.xml",
                host="shop.test",
                status=FetchStatus.ok,
                feed_id="big",
                body_ref="feeds/big",
                fetched_at=datetime.now(UTC),
            ),
        )
        cube = await build(settings, deps)
        assert cube.handler_timeout_s == settings.parser.handler_timeout_s

        await deps.publish([crawl])
        stats = await run_cube(cube, deps, group="parser-big", max_messages=1, idle_timeout=60.0)
        assert (stats.processed, stats.failed, stats.dead_lettered) == (1, 0, 0)
        ends = await deps.bus.end_offsets("documents.parsed")
        # every offer, and the listing page of each of the catalog's 50 categories
        assert sum(ends.values()) == BIG_CATALOG + CATEGORIES
        keys: set[bytes | None] = set()
        for partition, end in ends.items():  # keys, not decoded documents: 100,000 decodes cost seconds
            keys.update(rec.key for rec in await deps.bus.read("documents.parsed", partition, 0, end + 1))
        offers = {k for k in keys if k is not None and k.startswith(b"https://shop.test/p/")}
        assert len(offers) == BIG_CATALOG
        assert len(keys - offers) == CATEGORIES
        assert b"https://shop.test/p/0" in keys
        feed = await stores.feeds.get("big")
        assert feed is not None
        assert (feed.status.last_result, feed.status.items) == ("parsed", BIG_CATALOG)
        stored = await stores.hashes.get("feed:big", f"https://shop.test/p/{BIG_CATALOG - 1}")
        assert stored is not None  # the after-commit writes ran

        # the same catalog again: not one document
        await deps.publish([crawl])
        stats = await run_cube(cube, deps, group="parser-big", max_messages=1, idle_timeout=60.0)
        assert stats.processed == 1
        assert sum((await deps.bus.end_offsets("documents.parsed")).values()) == BIG_CATALOG + CATEGORIES
    finally:
        await deps.close()
