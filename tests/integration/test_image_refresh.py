"""A source image changed in place refreshes its CDN copy and the pages that show it.

The real cubes on the embedded bus and store, the CDN on files or on the real
SeaweedFS, and a real aiohttp partner whose ``/pic.png`` answers with an ETag
and a 304 to a matching ``If-None-Match``. Two pages show the picture (one in
its text, one as its enclosure). Then the cdn cube's re-check sweep
(``cubes/cdn/recheck.py``) runs at times past ``media.recheck_s``:

1. the picture has not changed: the partner sees ``If-None-Match: "v1"`` and
   answers 304; the copy and the pages stay as they are;
2. the picture changes (new bytes, a new size, a new ETag): the re-check copies
   it again (with its smaller copies), under a new content-addressed URL, and
   the kvwriter renders both pages again with it: the old URL is gone from them,
   their version and ETag moved on.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from PIL import Image

from cubes.cdn.recheck import Rechecks
from shared.blobs.s3 import S3BlobStore
from shared.clock import ManualClock
from shared.config import Settings
from shared.images.variants import variant_key
from shared.messages import Document, Media, MediaCached, SourceKind, SourceRef
from shared.runtime import Output, ensure_topics, open_deps
from shared.runtime.cube import TimerContext
from tests.integration.test_media_pipeline import (  # the CDN fixture (files or SeaweedFS) and the cube driver
    cdn_settings,  # noqa: F401 - a fixture, used by name
    read_all,
    run,
)

A = "a.partner.test"
T0 = datetime(2026, 3, 1, tzinfo=UTC)
TEXT, ENCLOSURE = "https://news.test/text", "https://news.test/enclosure"


def _png(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


class Picture:
    """The partner's /pic.png: one version at a time, with its ETag; 304 when the asker has it."""

    def __init__(self) -> None:
        self.version = 1
        self.body = _png((1200, 600), (200, 40, 40))
        self.asked: list[str | None] = []

    def change(self) -> None:
        self.version += 1
        self.body = _png((1000, 1000), (40, 40, 200))

    async def __call__(self, request: web.Request) -> web.Response:
        etag = f'"v{self.version}"'
        self.asked.append(request.headers.get("If-None-Match"))
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(body=self.body, content_type="image/png", headers={"ETag": etag})


async def recheck(settings: Settings, deps: Any, at: datetime) -> list[Output]:
    """One round of the cdn cube's re-check timer at ``at``; its orders published as the runtime would."""
    rechecks = Rechecks(settings, (await deps.stores()).images, ManualClock(at.timestamp()))
    orders = await rechecks.sweep(TimerContext(timer="image-recheck"))
    await deps.publish(orders)
    return orders


def document(url: str, picture: str, *, enclosure: bool) -> Document:
    return Document(
        url=url,
        host="news.test",
        source=SourceRef(kind=SourceKind.rss, id="feed1"),
        title="A picture",
        content_html="<p>The lake.</p>" if enclosure else f'<p>The lake.</p><img src="{picture}" alt="lake">',
        media=[Media(url=picture, role="enclosure")] if enclosure else [],
        content_hash="h1",
        version=1,
        seen_at=T0,
        parsed_at=T0,
    )


async def test_a_changed_source_image_refreshes_its_copy_and_its_pages(
    tmp_path: Path,
    partner: Any,
    partner_resolver: Any,
    cdn_settings: dict[str, str],  # noqa: F811
) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        cdn=cdn_settings,
        http={"allowlist": ["127.0.0.1/32"]},
        crawler={"rate": 100.0, "burst": 20},
        runtime={"metrics_port": 0},
        media={"recheck_s": 3600.0},
    )
    picture = Picture()
    partner.set_handler(A, "/pic.png", picture)
    url = partner.url(A, "/pic.png")
    deps = await open_deps(settings, resolver=partner_resolver)
    try:
        stores = await deps.stores()
        cdn = await deps.cdn()
        await ensure_topics(deps, ["media", "crawler", "cdn", "delay", "kvwriter"])
        await deps.publish(
            [Output("documents.parsed", document(u, url, enclosure=u == ENCLOSURE)) for u in (TEXT, ENCLOSURE)]
        )
        await run("media", settings, deps, 2)
        await run("crawler", settings, deps, 1)
        await run("cdn", settings, deps, 1)
        await run("delay", settings, deps, 1)
        await run("kvwriter", settings, deps, 3)  # two pages, and the first media.cached (it replaces nothing)
        (first,) = await read_all(deps, "media.cached")
        assert first.cdn_url
        assert first.replaces is None
        before = {u: await stores.pages.get(u) for u in (TEXT, ENCLOSURE)}
        for page in before.values():
            assert page is not None
            assert first.cdn_url in page.html
        assert await stores.images.pages_using(first.cdn_url) == sorted([TEXT, ENCLOSURE])
        rec = await stores.images.get(url)
        assert rec is not None
        assert rec.etag == '"v1"'
        assert rec.checked_at is not None

        # 1. not due yet: nothing ordered; due and unchanged: a 304 keeps everything
        assert await recheck(settings, deps, rec.checked_at + timedelta(minutes=30)) == []
        orders = await recheck(settings, deps, rec.checked_at + timedelta(hours=2))
        assert [(o.message.url, o.message.etag) for o in orders] == [(url, '"v1"')]  # type: ignore[attr-defined]
        await run("crawler", settings, deps, 1)
        await run("cdn", settings, deps, 1)
        assert picture.asked[-1] == '"v1"'
        assert len(await read_all(deps, "media.cached")) == 1  # nothing new to say
        again = await stores.images.get(url)
        assert again is not None
        assert (again.cdn_url, again.sha256) == (rec.cdn_url, rec.sha256)
        assert again.checked_at is not None
        assert again.checked_at > rec.checked_at

        # 2. the partner changes the picture under the same URL
        picture.change()
        await recheck(settings, deps, again.checked_at + timedelta(hours=2))
        await run("crawler", settings, deps, 1)
        await run("cdn", settings, deps, 1)
        assert picture.asked[-1] == '"v1"'  # asked conditionally; the answer was the new picture
        cached: list[MediaCached] = await read_all(deps, "media.cached")
        new = cached[-1]
        assert new.cdn_url is not None
        assert new.replaces == first.cdn_url
        assert new.cdn_url != first.cdn_url  # a new URL: no browser or cache keeps the old picture
        assert (new.width, new.height, new.variants) == (1000, 1000, [480, 960])
        key = new.cdn_url[len(settings.cdn.public_base_url) + 1 :]
        assert await cdn.get(key) == picture.body
        for width in new.variants:
            assert await cdn.exists(variant_key(key, width))
        now = await stores.images.get(url)
        assert now is not None
        assert (now.cdn_url, now.etag, now.width) == (new.cdn_url, '"v2"', 1000)

        await run("kvwriter", settings, deps, 1)  # the media.cached that replaces the old copy
        for u in (TEXT, ENCLOSURE):
            page = await stores.pages.get(u)
            old = before[u]
            assert page is not None
            assert old is not None
            assert first.cdn_url not in page.html, u
            assert new.cdn_url in page.html, u
            assert (page.version, page.etag != old.etag) == (old.version + 1, True)
            assert new.cdn_url in orjson.loads(page.doc_json)["content_html"] or u == ENCLOSURE
        enclosure = await stores.pages.get(ENCLOSURE)
        assert enclosure is not None
        assert 'width="1000" height="1000"' in enclosure.html  # the lead picture's box is the new one's
        assert "w960.webp 960w" in enclosure.html
        if isinstance(cdn, S3BlobStore):
            await cdn.destroy()
    finally:
        await deps.close()
