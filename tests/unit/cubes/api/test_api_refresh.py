"""One page or image fetched again now, a purge, and the IndexNow receiver, attacked as another tenant or a
stranger would (``cubes/api/refresh.py``, ``cubes/api/indexnow.py``, ``shared/webmaster/refresh.py``)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from cubes.api.refresh_commands import refresh
from shared.messages import CrawlKind, CrawlRequest
from shared.stores import Feed
from shared.webmaster.feeds import FETCH_NOW_PREFIX, PURGE_PREFIX, REFRESH_PREFIX
from shared.webmaster.indexnow import FETCHES_PER_MINUTE
from shared.webmaster.refresh import Refresher
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness

HOST = "site.partner.test"
KEY = "a1b2c3d4e5f6-key"


async def _site(api: ApiHarness, partner: PartnerServer, *, autoparser: bool = False) -> tuple[str, str, str]:
    """A tenant holding a right on the partner's origin, with a feed there: (tenant, token, origin)."""
    origin = f"http://{HOST}:{partner.port}"
    tenant_id, token = await api.tenant(HOST, origin=origin)
    feed = Feed(
        feed_id="f1", url=f"{origin}/feed.xml", host=HOST, format="rss", tenant_id=tenant_id, autoparser=autoparser
    )
    await api.stores.feeds.upsert_feed(feed)
    return tenant_id, token, origin


def _orders(api: ApiHarness) -> list[CrawlRequest]:
    return [o.message for o in api.published if isinstance(o.message, CrawlRequest)]


async def _post(api: ApiHarness, path: str, token: str, url: str) -> Any:
    return await api.client.post(path, json={"url": url}, headers=api.auth(token))


async def test_a_feeds_page_is_refreshed_by_fetching_its_feed_once_for_repeated_asks(
    tmp_path: Path, partner: PartnerServer
) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token, origin = await _site(api, partner)
        page = f"{origin}/news/1"
        await api.stores.hashes.claim_many([page], "feed:f1", 20)
        first = await _post(api, "/api/v1/pages/refresh", token, page)
        assert first.status == 202, await first.text()
        got = await first.json()
        assert (got["action"], got["feeds"], got["queued"]) == ("feed", ["f1"], True)
        (order,) = _orders(api)
        assert (order.kind, order.feed_id, order.priority) == (CrawlKind.feed, "f1", 0)
        assert f"{FETCH_NOW_PREFIX}{got['refresh_id']}" in order.requesters  # the feed's report names the order
        again = await (await _post(api, "/api/v1/pages/refresh", token, page)).json()
        assert (again["queued"], again["refresh_id"]) == (False, got["refresh_id"])
        assert len(_orders(api)) == 1  # clicking twice costs the site one fetch


async def test_an_autoparser_hosts_new_url_is_fetched_itself(tmp_path: Path, partner: PartnerServer) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token, origin = await _site(api, partner, autoparser=True)
        got = await (await _post(api, "/api/v1/pages/refresh", token, f"{origin}/articles/new")).json()
        assert got["action"] == "page"
        (order,) = _orders(api)
        assert (order.kind, order.url, order.host) == (CrawlKind.page, f"{origin}/articles/new", HOST)
        assert order.requesters == [f"{REFRESH_PREFIX}{got['refresh_id']}"]


async def test_refresh_refuses_what_is_not_the_callers(tmp_path: Path, partner: PartnerServer) -> None:
    async with ApiHarness(tmp_path) as api:
        owner_id, owner, origin = await _site(api, partner)
        _, stranger = await api.tenant("other.partner.test", origin=f"http://other.partner.test:{partner.port}")
        _, unverified = await api.tenant("new.partner.test", verified=False)
        _, other_port = await api.tenant(HOST, origin=f"http://{HOST}:1")
        # a second holder of the same origin, whose page is the first tenant's
        _, cohold = await api.tenant(HOST, origin=origin)
        page = f"{origin}/news/1"
        await api.stores.hashes.claim_many([page], "feed:f1", 20)
        await api.stores.hashes.claim_many([f"{origin}/pushed"], f"tenant:{owner_id}", 40)
        cases = [
            (stranger, page, 403, "host_not_owned"),  # another tenant's host
            (unverified, "https://new.partner.test/a", 403, "host_not_verified"),
            (other_port, page, 403, "origin_not_held"),  # a right on another port of the host
            (cohold, page, 403, "page_not_owned"),  # the other holder's page
            (owner, f"{origin}/pushed", 422, "validation"),  # an uploaded page: nothing to fetch
            (owner, "not a url", 422, "validation"),
        ]
        for token, url, status, code in cases:
            r = await _post(api, "/api/v1/pages/refresh", token, url)
            assert (r.status, (await r.json())["error"]) == (status, code), (url, await r.text())
        assert _orders(api) == []


async def test_an_image_of_ones_pages_is_fetched_again_and_anothers_reads_as_missing(
    tmp_path: Path, partner: PartnerServer
) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token, origin = await _site(api, partner)
        _, stranger = await api.tenant("other.partner.test", origin=f"http://other.partner.test:{partner.port}")
        image, copy = "https://img.partner.test/a.png", "/cdn/img/ab/abc.png"
        await api.stores.images.record_ok(image, cdn_url=copy, mime="image/png", sha256="abc")
        await api.stores.images.link_pages([(copy, f"{origin}/news/1")])
        r = await _post(api, "/api/v1/images/purge", token, image)
        assert r.status == 202, await r.text()
        got = await r.json()
        (order,) = _orders(api)
        assert (order.kind, order.url, order.etag) == (CrawlKind.image, image, None)  # unconditional
        assert order.requesters == [f"{PURGE_PREFIX}{got['refresh_id']}"]
        for token_, url in ((stranger, image), (token, "https://img.partner.test/never-cached.png")):
            r = await _post(api, "/api/v1/images/refresh", token_, url)
            assert r.status == 404, await r.text()
        assert len(_orders(api)) == 1


# ---------------------------------------------------------------------------------------------- IndexNow


async def test_indexnow_with_the_key_file_refreshes_the_page(tmp_path: Path, partner: PartnerServer) -> None:
    async with ApiHarness(tmp_path) as api:
        _, _, origin = await _site(api, partner)
        page = f"{origin}/news/1"
        await api.stores.hashes.claim_many([page], "feed:f1", 20)
        partner.set(HOST, f"/{KEY}.txt", f"{KEY}\n", headers={"Content-Type": "text/plain"})
        r = await api.client.get("/indexnow", params={"url": page, "key": KEY})
        assert r.status == 200, await r.text()
        got = await r.json()
        assert [x["feeds"] for x in got["refreshes"]] == [["f1"]]
        assert got["refused"] == []
        assert [o.feed_id for o in _orders(api)] == ["f1"]
        post = {"host": HOST, "key": KEY, "urlList": [f"{origin}/pushed-nowhere", page]}
        r = await api.client.post("/indexnow", json=post)
        got = await r.json()
        assert r.status == 200
        assert [x["queued"] for x in got["refreshes"]] == [False, False]
        assert len(partner.hits(HOST, f"/{KEY}.txt")) == 1  # the key, found, is remembered


async def test_indexnow_refuses_strangers(tmp_path: Path, partner: PartnerServer) -> None:
    async with ApiHarness(tmp_path) as api:
        _, _, origin = await _site(api, partner)
        await api.tenant("unproved.partner.test", verified=False, origin=f"http://unproved.partner.test:{partner.port}")
        page = f"{origin}/news/1"
        other = f"http://{HOST}:{partner.port + 1}"
        partner.set(HOST, f"/{KEY}.txt", "another-key-entirely")
        partner.set(HOST, "/moved.txt", "", status=302, headers={"Location": f"{other}/{KEY}.txt"})
        partner.set("unproved.partner.test", f"/{KEY}.txt", KEY)
        cases: list[tuple[dict[str, Any], int, str]] = [
            ({"url": page, "key": KEY}, 403, "key_not_valid"),  # the file holds another key
            ({"url": page, "key": "short"}, 422, "validation"),
            ({"url": f"http://unproved.partner.test:{partner.port}/a", "key": KEY}, 403, "host_not_verified"),
            ({"url": f"{other}/news/1", "key": KEY}, 403, "host_not_verified"),  # another port: not proven
            ({"url": page, "key": KEY, "keyLocation": f"{other}/{KEY}.txt"}, 422, "validation"),
            ({"url": page, "key": KEY, "keyLocation": f"{origin}/moved.txt"}, 403, "key_not_valid"),
            ({"url": page, "key": KEY, "keyLocation": f"{origin}/shop/{KEY}.txt"}, 422, "validation"),  # folder
        ]
        for params, status, code in cases:
            r = await api.client.get("/indexnow", params=params)
            assert (r.status, (await r.json())["error"]) == (status, code), (params, await r.text())
        assert partner.hits("unproved.partner.test") == []  # an unverified site is not even asked
        mixed = {"host": HOST, "key": KEY, "urlList": [page, "https://elsewhere.partner.test/x"]}
        r = await api.client.post("/indexnow", json=mixed)
        assert (r.status, (await r.json())["error"]) == (422, "validation")
        r = await api.client.post("/indexnow", json={"host": "other.test", "key": KEY, "urlList": [page]})
        assert r.status == 422
        assert _orders(api) == []


async def test_indexnow_reads_a_sites_key_files_a_bounded_number_of_times(
    tmp_path: Path, partner: PartnerServer
) -> None:
    async with ApiHarness(tmp_path) as api:
        _, _, origin = await _site(api, partner)
        statuses = []
        for i in range(FETCHES_PER_MINUTE + 3):
            r = await api.client.get("/indexnow", params={"url": f"{origin}/a", "key": f"random-key-{i:04d}"})
            statuses.append(r.status)
        assert statuses == [403] * FETCHES_PER_MINUTE + [429] * 3
        assert len([h for h in partner.hits(HOST) if h.path.endswith(".txt")]) == FETCHES_PER_MINUTE
        api.clock.advance(61)
        r = await api.client.get("/indexnow", params={"url": f"{origin}/a", "key": "random-key-late"})
        assert r.status == 403


async def test_the_cli_refreshes_as_the_operator_and_says_why_it_refuses(
    tmp_path: Path, partner: PartnerServer
) -> None:
    async with ApiHarness(tmp_path) as api:
        _, _, origin = await _site(api, partner)
        refresher = Refresher(api.stores, api.deps.publish, api.clock)
        out, err = io.StringIO(), io.StringIO()
        assert await refresh(refresher, f"{origin}/news/2", out=out, err=err) == 0
        assert "its feeds fetched now: f1" in out.getvalue()
        assert await refresh(refresher, "https://unproved.partner.test/a", out=out, err=err) == 1
        assert "host_not_verified" in err.getvalue()
        assert await refresh(refresher, "https://img.partner.test/x.png", purge=True, out=out, err=err) == 1
        assert "not_found" in err.getvalue()


async def test_a_request_as_long_as_the_document_allows_is_answered_by_the_api(tmp_path: Path) -> None:
    # the OpenAPI document allows URLs of 4,096 characters; one of 4-byte characters is 49,152 bytes once
    # percent-encoded, over aiohttp's default request line (8,190 bytes), which answered text/plain 400
    # before any handler ran (found by the schemathesis run on GET /indexnow)
    far = "https://a.partner.test/" + "\U000f0000" * 4000
    async with ApiHarness(tmp_path) as api:
        for location in (None, far):
            params = {"url": far, "key": "k" * 7, **({"keyLocation": location} if location else {})}
            r = await api.client.get("/indexnow", params=params)
            assert r.status == 422, await r.text()
            assert r.content_type == "application/json"
            assert "key: 8 to 128 characters" in (await r.json())["message"]
