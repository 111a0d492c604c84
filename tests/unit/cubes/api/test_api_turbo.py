"""Turbo off and on again through the API (shared/webmaster/turbo_switch.py): what comes back, and the answer."""

from __future__ import annotations

from pathlib import Path

from shared.hashing import TOMBSTONE
from shared.messages import CrawlKind, CrawlRequest
from shared.stores import Feed
from tests.unit.cubes.api.apikit import ApiHarness

HOST = "a.partner.test"
SWITCH = f"/api/v1/hosts/{HOST}/turbo"


async def _requests(api: ApiHarness) -> list[CrawlRequest]:
    return [m for m in await api.messages("crawl.requests") if isinstance(m, CrawlRequest)]


async def test_a_host_switches_its_turbo_pages_off_and_its_feeds_are_fetched_now(tmp_path: Path) -> None:
    """A host-wide "Turbo off" through the API (the parser then removes every page of the host)."""
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant()
        body = {"url": f"https://{HOST}/feed.xml", "format": "rss"}
        feed_id = (await (await api.client.post("/api/v1/feeds", json=body, headers=api.auth(token))).json())["feed_id"]
        off = await api.client.put(SWITCH, json={"enabled": False}, headers=api.auth(token))
        assert off.status == 200, await off.text()
        answer = await off.json()
        assert (answer["host"], answer["turbo"], answer["fetching"]) == (HOST, False, [feed_id])
        assert answer["pages_on_turbo"] == 0
        assert answer["said"].startswith(f"Turbo pages of {HOST} switched off: 0 pages of yours")
        assert not await api.stores.tenants.turbo_enabled(HOST)
        assert [m.feed_id for m in await _requests(api)] == [feed_id]  # applied at once, through the host's lane
        claim = await (await api.client.get("/api/v1/hosts", headers=api.auth(token))).json()
        assert [h["turbo"] for h in claim["hosts"]] == [False]
        bad = await api.client.put(SWITCH, json={"enabled": "no"}, headers=api.auth(token))
        assert bad.status == 422
        on = await api.client.put(SWITCH, json={"enabled": True}, headers=api.auth(token))
        assert (await on.json())["turbo"] is True
        assert await api.stores.tenants.turbo_enabled(HOST)
        _, other = await api.tenant("b.partner.test")
        refused = await api.client.put(SWITCH, json={"enabled": False}, headers=api.auth(other))
        assert refused.status in (403, 404)  # not their host
        assert await api.stores.tenants.turbo_enabled(HOST)
        assert tenant_id


async def test_switched_on_again_the_autoparsers_removed_pages_are_fetched_again_and_the_answer_counts(
    tmp_path: Path,
) -> None:
    """The autoparser's pages removed by a switch off stayed removed: the scheduler's discovery takes
    a page the autoparser has a record of (its removal too) for one it knows and never orders it
    again. Switched on, each is fetched again through the host's lane; the operator's feeds of the
    host (their pages follow every holder's switch) are fetched now too; the answer says how many
    pages were off and how many uploaded pages only a new upload brings back."""
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant()
        hashes = api.stores.hashes
        # the operator's feed of the host asks for its autoparser; the tenant has a feed and uploads there
        await api.stores.feeds.upsert_feed(
            Feed(feed_id="op", url=f"https://{HOST}/news.xml", host=HOST, format="rss", autoparser=True)
        )
        await api.stores.feeds.upsert_feed(
            Feed(feed_id="mine", url=f"https://{HOST}/mine.xml", host=HOST, format="rss", tenant_id=tenant_id)
        )
        auto = f"autoparser:{HOST}"
        for name, digest in (("a1", "h1"), ("a2", "h2"), ("a3", "h3")):
            await hashes.check_and_set(auto, f"https://{HOST}/blog/{name}", digest)
        off = await api.client.put(SWITCH, json={"enabled": False}, headers=api.auth(token))
        switched_off = await off.json()
        assert switched_off["fetching"] == ["mine", "op"]  # the host is off for every holder now
        assert switched_off["other_feeds_fetching"] == 1
        assert (
            "so the host's other pages go too (its 1 other feed, fetched now, and the autoparser's)"
            in (switched_off["said"])
        )
        # what the parser did at those fetches (cubes/parser/lifecycle.py host_off): the pages removed
        for name in ("a1", "a2"):
            await hashes.check_and_set(auto, f"https://{HOST}/blog/{name}", TOMBSTONE)
        pushed = await hashes.check_and_set(f"tenant:{tenant_id}", f"https://{HOST}/pushed", TOMBSTONE)
        await api.stores.pages.delete(f"https://{HOST}/pushed", pushed.version)  # the kvwriter's tombstone
        await hashes.check_and_set("feed:mine", f"https://{HOST}/item-1", TOMBSTONE)
        await hashes.check_and_set("feed:mine", f"https://{HOST}/mine.xml#body", "body")  # not a page
        before = len(await _requests(api))

        on = await api.client.put(SWITCH, json={"enabled": True}, headers=api.auth(token))
        assert on.status == 200, await on.text()
        answer = await on.json()
        orders = (await _requests(api))[before:]
        pages = sorted(m.url for m in orders if m.kind is CrawlKind.page)
        assert pages == [f"https://{HOST}/blog/a1", f"https://{HOST}/blog/a2"]  # not the live a3
        assert all(m.requesters == [auto] and m.host == HOST for m in orders if m.kind is CrawlKind.page)
        assert sorted(str(m.feed_id) for m in orders if m.kind is not CrawlKind.page) == ["mine", "op"]
        assert answer["autoparser_pages_fetched_again"] == 2
        assert answer["uploaded_pages_to_upload_again"] == 1
        assert answer["pages_removed"] == 2  # the host page's count: the feed's item and the upload
        assert "2 pages the autoparser had published are fetched again" in answer["said"]
        assert "1 page you uploaded cannot come back without a new upload: upload it again" in answer["said"]

        # on again while on: the feeds are fetched, nothing is said to come back
        again = await (await api.client.put(SWITCH, json={"enabled": True}, headers=api.auth(token))).json()
        assert again["autoparser_pages_fetched_again"] == 0
        assert again["fetching"] == ["mine"]  # the host did not change for the operator's feed
