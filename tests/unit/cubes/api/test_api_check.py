"""``POST /api/v1/feeds/check`` end to end on the embedded engines: the real crawler cube fetches the feed from a
partner server in the host's lane, the real parser cube handles it as a preview; the task tells everything."""

from __future__ import annotations

from pathlib import Path

from cubes.crawler.cube import build as build_crawler
from cubes.kvwriter.cube import build as build_kvwriter
from cubes.media.cube import build as build_media
from cubes.parser.cube import build as build_parser
from shared.messages import CrawlRequest
from shared.runtime import run_cube
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness

HOST = "a.partner.test"


def _feed(port: int) -> bytes:
    base = f"http://{HOST}:{port}"
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
        f"<item><title>Good</title><link>{base}/good</link><description>Fine.</description></item>"
        f"<item><title></title><link>{base}/untitled</link><description>No title.</description></item>"
        "</channel></rss>"
    ).encode()


async def test_a_feed_is_checked_through_the_crawler_and_previewed_not_published(
    tmp_path: Path, partner: PartnerServer
) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST, origin=f"http://{HOST}:{partner.port}")  # the site's own origin
        partner.set(HOST, "/feed.xml", _feed(partner.port), headers={"Content-Type": "application/rss+xml"})
        url = f"http://{HOST}:{partner.port}/feed.xml"
        r = await api.client.post("/api/v1/feeds/check", json={"url": url}, headers=api.auth(token))
        assert r.status == 202, await r.text()
        accepted = await r.json()
        (req,) = [o.message for o in api.published if o.topic == "crawl.requests"]
        assert isinstance(req, CrawlRequest)
        assert (req.host, req.feed_id, req.requesters) == (HOST, None, [f"check:{accepted['task_id']}"])
        assert await api.stores.feeds.list() == []  # a check registers nothing

        await run_cube(await build_crawler(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)
        assert len(partner.hits(HOST, "/feed.xml")) == 1  # fetched by the crawler, in the lane
        await run_cube(await build_parser(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)

        task = await (await api.client.get(accepted["status_url"], headers=api.auth(token))).json()
        assert task["status"] == "done", task
        assert sorted(i["status"] for i in task["items"]) == ["preview", "rejected"]
        (refused,) = [i for i in task["items"] if i["status"] == "rejected"]
        assert refused["problems"][0]["code"] == "item.no_title"
        assert [p["code"] for p in task["problems"]] == ["item.no_title"]
        assert len(task["preview_urls"]) == 1
        assert "/preview?task=" in task["preview_urls"][0]
        # each item's page as the pipeline would judge it: the preview's images are not judged yet (the media
        # cube has not seen it), so the verdicts are not all in; the refused item's is
        assert task["source_url"] == url
        pages = {p["url"].rsplit("/", 1)[1]: p for p in task["pages"]}
        assert (pages["good"]["state"], pages["untitled"]["state"]) == ("on_its_way", "refused")
        assert pages["untitled"]["status"] == "Would be refused"
        assert pages["untitled"]["problems"][0]["code"] == "item.no_title"
        assert task["verdicts_final"] is False
        # the media cube finds no image to wait for, the kvwriter writes the preview: every verdict is in
        await run_cube(await build_media(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)
        await run_cube(await build_kvwriter(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)
        task = await (await api.client.get(accepted["status_url"], headers=api.auth(token))).json()
        pages = {p["url"].rsplit("/", 1)[1]: p for p in task["pages"]}
        assert {k: p["state"] for k, p in pages.items()} == {"good": "published", "untitled": "refused"}
        assert pages["good"]["status"] == "Would be published"
        assert pages["good"]["preview_url"] == task["preview_urls"][0]
        assert task["verdicts_final"] is True
        # previews only: nothing published, no hash or owner recorded for the page
        parsed = await api.messages("documents.parsed")
        assert [d.preview for d in parsed] == [True]  # type: ignore[attr-defined]
        assert await api.stores.hashes.owner(f"http://{HOST}:{partner.port}/good") is None


async def test_a_check_needs_a_verified_host_and_a_public_address(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST, verified=False)
        r = await api.client.post(
            "/api/v1/feeds/check", json={"url": f"https://{HOST}/feed.xml"}, headers=api.auth(token)
        )
        assert r.status == 403
        assert (await r.json())["error"] == "host_not_verified"
        bad = await api.client.post("/api/v1/feeds/check", json={"url": "ftp://x/"}, headers=api.auth(token))
        assert bad.status == 422
        assert api.published == []


async def test_a_failed_fetch_fails_the_check_with_its_problem(tmp_path: Path, partner: PartnerServer) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST, origin=f"http://{HOST}:{partner.port}")
        url = f"http://{HOST}:{partner.port}/status/404"
        accepted = await (
            await api.client.post("/api/v1/feeds/check", json={"url": url}, headers=api.auth(token))
        ).json()
        await run_cube(await build_crawler(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)
        await run_cube(await build_parser(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)
        task = await (await api.client.get(accepted["status_url"], headers=api.auth(token))).json()
        assert task["status"] == "failed"
        assert task["problems"][0]["code"] == "fetch.not_found"
