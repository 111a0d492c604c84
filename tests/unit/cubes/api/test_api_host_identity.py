"""One host-identity rule from the API door to the parser (shared/webmaster/hosts.py).

The reproduced overwrite: tenant X verified ``victim.partner.test``, tenant Y verified
``www.victim.partner.test`` and published ``http://www.victim.partner.test/story/1``. X uploaded,
with ``host=victim.partner.test``, an item linking to Y's page: 202, the item "ok", Y's page
overwritten and owned by X -- and X's own DELETE of it got 403. The parser held ``www.`` for the
same site while claims held two hosts. Now both hold two hosts unless one tenant verified both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cubes.parser.cube import build as build_parser
from shared.clock import SystemClock
from shared.messages import CrawlKind, CrawlResult, Document, FetchStatus
from shared.runtime import Output, run_cube
from shared.stores import Feed
from shared.webmaster.feed_options import FeedOptions, FullText
from tests.unit.cubes.api.apikit import ApiHarness

VICTIM = "victim.partner.test"
WWW_VICTIM = "www.victim.partner.test"
STORY = f"https://{WWW_VICTIM}/story/1"


def _story(title: str, url: str = STORY) -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
        f"<item><title>{title}</title><link>{url}</link><description>{title} text</description></item>"
        "</channel></rss>"
    ).encode()


async def _parse_one(api: ApiHarness) -> None:
    parser = await build_parser(api.settings, api.deps)
    stats = await run_cube(parser, api.deps, max_messages=1, idle_timeout=10.0)
    assert stats.processed == 1


async def _feed_and_parse(api: ApiHarness, tenant_id: str, host: str, body: bytes) -> None:
    """A feed of the tenant's, fetched: as the crawler would hand it to the parser."""
    # its items' own text is their page (not what this test is about: cubes/parser/fulltext.py)
    feed = Feed(
        feed_id=f"feed-of-{tenant_id}",
        url=f"https://{host}/rss",
        host=host,
        format="rss",
        tenant_id=tenant_id,
        options=FeedOptions(full_text=FullText.never).to_json(),
    )
    await api.stores.feeds.upsert_feed(feed)
    fetched = CrawlResult(
        kind=CrawlKind.feed,
        url=feed.url,
        host=host,
        status=FetchStatus.ok,
        body=body,
        feed_id=feed.feed_id,
        content_type="application/rss+xml",
        fetched_at=SystemClock().now(),
    )
    await api.deps.publish([Output("crawl.feeds", fetched, key=host)])
    await _parse_one(api)


async def _upload_and_parse(api: ApiHarness, token: str, body: bytes, host: str) -> dict[str, Any]:
    resp = await api.upload(token, body, host=host)
    assert resp.status == 202, await resp.text()
    task_id = (await resp.json())["task_id"]
    await _parse_one(api)
    task: dict[str, Any] = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
    return task


async def _delete(api: ApiHarness, token: str, url: str) -> int:
    resp = await api.client.delete("/api/v1/pages", params={"url": url}, headers=api.auth(token))
    return resp.status


async def _titles(api: ApiHarness, url: str) -> list[str]:
    return [m.title for m in await api.messages("documents.parsed") if isinstance(m, Document) and m.url == url]


async def test_www_is_not_an_alias_across_tenants(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        y, y_token = await api.tenant(WWW_VICTIM)
        x, x_token = await api.tenant(VICTIM)
        await _feed_and_parse(api, y, WWW_VICTIM, _story("Y's story"))  # Y's page, from Y's feed
        assert await _titles(api, STORY) == ["Y's story"]

        # an upload outranks a feed (SOURCE_PRIORITY): this is how X's item took Y's page over
        theirs = await _upload_and_parse(api, x_token, _story("X's overwrite"), VICTIM)

        [item] = theirs["items"]
        assert item["status"] == "rejected", theirs
        assert "two hosts" in item["error"]
        assert f"claim and verify {WWW_VICTIM} too" in item["error"]
        assert await _titles(api, STORY) == ["Y's story"]  # nothing of X's reached the pipeline
        owner = await api.stores.hashes.owner(STORY)
        assert owner is not None
        assert owner.source_id == f"feed:feed-of-{y}"
        # the API says the same as the parser: the page is not X's to delete, and it is Y's
        assert await _delete(api, x_token, STORY) == 403
        assert await _delete(api, y_token, STORY) == 202
        assert x != y


async def test_one_tenant_that_verified_both_spellings_publishes_either(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        z, token = await api.tenant(VICTIM)
        await api.stores.tenants.add_host(z, WWW_VICTIM)
        # claimed, not yet verified: still two hosts
        early = await _upload_and_parse(api, token, _story("Early"), VICTIM)
        assert [i["status"] for i in early["items"]] == ["rejected"]

        await api.stores.tenants.set_verified(z, WWW_VICTIM)
        task = await _upload_and_parse(api, token, _story("Both verified"), VICTIM)
        assert [i["status"] for i in task["items"]] == ["ok"], task
        assert await _titles(api, STORY) == ["Both verified"]
        hosts = await (await api.client.get("/api/v1/hosts", headers=api.auth(token))).json()
        assert {h["host"]: h["alias"] for h in hosts["hosts"]} == {VICTIM: WWW_VICTIM, WWW_VICTIM: VICTIM}
        assert await _delete(api, token, STORY) == 202


async def test_an_upload_whose_right_ended_meanwhile_publishes_nothing(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        x, x_token = await api.tenant(VICTIM)
        resp = await api.upload(x_token, _story("Queued", f"https://{VICTIM}/a"), host=VICTIM)
        assert resp.status == 202
        task_id = (await resp.json())["task_id"]
        # before the parser reaches it, X's right ends (its proof lapsed past its grace)
        await api.stores.tenants.set_verified(x, VICTIM, False)

        await _parse_one(api)

        task = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(x_token))).json()
        assert task["status"] == "failed"
        assert any("not verified for this tenant any more" in e for e in task["errors"]), task
        assert await api.messages("documents.parsed") == []


async def test_another_tenant_proving_the_host_takes_nothing_from_its_holder(tmp_path: Path) -> None:
    """Proving control of an origin used to make the prover its only holder: the first owner's claim flipped
    to unverified, silently, and its queued upload published nothing. Both hold rights now."""
    async with ApiHarness(tmp_path) as api:
        x, x_token = await api.tenant(VICTIM)
        resp = await api.upload(x_token, _story("Queued", f"https://{VICTIM}/a"), host=VICTIM)
        task_id = (await resp.json())["task_id"]
        y, _ = await api.tenant(VICTIM, verified=False)
        await api.stores.tenants.set_verified(y, VICTIM)

        await _parse_one(api)

        task = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(x_token))).json()
        assert [i["status"] for i in task["items"]] == ["ok"], task
        assert sorted(c.tenant_id for c in await api.stores.tenants.holders(VICTIM)) == sorted([x, y])
