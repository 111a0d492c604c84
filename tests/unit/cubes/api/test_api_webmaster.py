"""What the webmaster API tells about a feed: format auto, the autoparser switch, fetch now and
its outcome, the history of fetches, and the pages that lost something, with every problem and its hint."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from shared.messages import CrawlRequest, FeedFormat, FeedRegistration
from shared.problems import problem
from shared.stores import FetchReport, Page, PageProblems
from tests.unit.cubes.api.apikit import ApiHarness

T0 = datetime(2026, 5, 1, tzinfo=UTC)
FEED_URL = "https://a.partner.test/feed.xml"


async def _feed(api: ApiHarness, token: str, **body: object) -> dict[str, object]:
    r = await api.client.post("/api/v1/feeds", json={"url": FEED_URL, **body}, headers=api.auth(token))
    assert r.status == 201, await r.text()
    return await r.json()  # type: ignore[no-any-return]


async def test_format_auto_and_the_autoparser_are_accepted(tmp_path: Path) -> None:
    """The API refused ``format: auto`` (the CLI's default) and could not turn on the autoparser."""
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        feed = await _feed(api, token, format="auto", autoparser=True)
        assert (feed["format"], feed["autoparser"]) == ("auto", True)
        (reg,) = await api.messages("feeds.registry")
        assert isinstance(reg, FeedRegistration)
        assert (reg.format, reg.autoparser) == (FeedFormat.auto, True)
        off = await api.client.patch(
            f"/api/v1/feeds/{feed['feed_id']}", json={"autoparser": False}, headers=api.auth(token)
        )
        assert off.status == 200, await off.text()
        assert (await off.json())["autoparser"] is False
        stored = await api.stores.feeds.get(str(feed["feed_id"]))
        assert stored is not None
        assert stored.autoparser is False
        bad = await api.client.patch(
            f"/api/v1/feeds/{feed['feed_id']}", json={"autoparser": "yes"}, headers=api.auth(token)
        )
        assert bad.status == 422


async def test_fetch_now_goes_through_the_lane_and_links_to_its_outcome(tmp_path: Path) -> None:
    """There was no "fetch now"; re-posting a feed did not refetch it."""
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        feed_id = str((await _feed(api, token, format="rss"))["feed_id"])
        r = await api.client.post(f"/api/v1/feeds/{feed_id}/fetch", headers=api.auth(token))
        assert r.status == 202
        order = await r.json()
        assert order["queued"] is True
        assert r.headers["Location"] == order["status_url"] == f"/api/v1/feeds/{feed_id}/fetches/{order['fetch_id']}"
        (req,) = [o for o in api.published if o.topic == "crawl.requests"]
        assert isinstance(req.message, CrawlRequest)
        assert req.key is None or req.key == "a.partner.test"  # keyed by host: the host's polite lane
        assert req.message.host == "a.partner.test"
        assert f"fetch:{order['fetch_id']}" in req.message.requesters
        # ten clicks in a row cost the partner one fetch
        again = await (await api.client.post(f"/api/v1/feeds/{feed_id}/fetch", headers=api.auth(token))).json()
        assert (again["fetch_id"], again["queued"]) == (order["fetch_id"], False)
        assert len([o for o in api.published if o.topic == "crawl.requests"]) == 1

        pending = await (await api.client.get(order["status_url"], headers=api.auth(token))).json()
        assert (pending["state"], pending["report"]) == ("pending", None)
        # the parser reports the fetch that answered the order
        refused = problem("item.no_title", "item has no title", feed=feed_id, item=1, line=7)
        await api.stores.problems.add_report(
            FetchReport(feed_id, T0, "partial", 200, 2, changed=1, refused=1, problems=(refused,),
                        counts={"item.no_title": 1}, fetch_ids=(order["fetch_id"],))
        )  # fmt: skip
        done = await (await api.client.get(order["status_url"], headers=api.auth(token))).json()
        assert done["state"] == "done"
        assert done["report"]["problems"][0]["code"] == "item.no_title"
        assert done["report"]["problems"][0]["hint"]
        assert (await api.client.get(f"/api/v1/feeds/{feed_id}/fetches/nope", headers=api.auth(token))).status == 404


async def test_a_feed_shows_its_history_rollup_and_pages_that_lost_images(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        feed_id = str((await _feed(api, token, format="turbo"))["feed_id"])
        for minutes, result in ((0, "parsed"), (5, "http_5xx")):
            await api.stores.problems.add_report(FetchReport(feed_id, T0 + timedelta(minutes=minutes), result))
        page_url = "https://a.partner.test/story"
        lost = problem("image.not_found", "image https://a.partner.test/i.png was left out: HTTP 404",
                       feed=feed_id, link=page_url)  # fmt: skip
        await api.stores.problems.put_page_problems(
            [PageProblems(page_url, 3, "a.partner.test", "turbo", feed_id, (lost,))]
        )
        await api.stores.pages.upsert(Page(url=page_url, host="a.partner.test", version=3))

        got = await (await api.client.get(f"/api/v1/feeds/{feed_id}", headers=api.auth(token))).json()
        assert got["latest_fetch"]["result"] == "http_5xx"
        assert got["rollup"]["images_failed"] == {"image.not_found": 1}
        assert got["rollup"]["failing_feeds"] == 1  # a page that lost an image makes its feed failing
        (shown,) = got["pages_with_problems"]
        assert {k: shown[k] for k in ("url", "state", "status", "live", "held", "problems")} == {
            "url": page_url,
            "state": "incomplete",
            "status": "Published without some content",
            "live": True,
            "held": False,
            "problems": [lost.as_dict()],
        }
        history = await (await api.client.get(got["fetches_url"], headers=api.auth(token))).json()
        assert [f["result"] for f in history["fetches"]] == ["http_5xx", "parsed"]
        pages = await (await api.client.get(f"/api/v1/feeds/{feed_id}/pages", headers=api.auth(token))).json()
        assert pages["pages"][0]["problems"][0]["code"] == "image.not_found"
        listed = await (await api.client.get("/api/v1/feeds", headers=api.auth(token))).json()
        assert listed["feeds"][0]["latest_fetch"]["result"] == "http_5xx"


async def test_another_tenants_feed_answers_404_on_every_new_route(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, mine = await api.tenant()
        _, theirs = await api.tenant("b.partner.test")
        feed_id = str((await _feed(api, mine, format="rss"))["feed_id"])
        for method, path in (
            ("post", f"/api/v1/feeds/{feed_id}/fetch"),
            ("get", f"/api/v1/feeds/{feed_id}/fetches"),
            ("get", f"/api/v1/feeds/{feed_id}/fetches/{'0' * 32}"),
            ("get", f"/api/v1/feeds/{feed_id}/pages"),
            ("patch", f"/api/v1/feeds/{feed_id}"),
        ):
            r = await api.client.request(method, path, json={} if method == "patch" else None, headers=api.auth(theirs))
            assert r.status == 404, (method, path, r.status)


async def test_the_problem_codes_and_the_docs_are_public(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        codes = await (await api.client.get("/api/v1/problems")).json()
        assert {"code": "image.not_found"}.items() <= next(
            c for c in codes["codes"] if c["code"] == "image.not_found"
        ).items()
        docs = await api.client.get("/docs")
        assert docs.status == 200
        assert docs.headers["Content-Security-Policy"].startswith("default-src 'none'")
        body = await docs.text()
        assert "/api/v1/feeds/{feed_id}/fetch" in body
        assert "image.not_found" in body
        assert "<script" not in body


async def test_a_feeds_problem_history_is_its_tenants_alone(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        _, other = await api.tenant("b.partner.test")
        resp = await api.client.post(
            "/api/v1/feeds", json={"url": "https://a.partner.test/feed.xml"}, headers=api.auth(token)
        )
        feed_id = (await resp.json())["feed_id"]
        t0 = api.clock_now()
        for minutes, counts in ((0, {"item.no_title": 2}), (1, {"item.no_title": 1}), (2, {})):
            await api.stores.problems.add_report(
                FetchReport(feed_id, t0 + timedelta(minutes=minutes), "parsed", 200, 2, counts=counts)
            )
        resp = await api.client.get(f"/api/v1/feeds/{feed_id}/problems", headers=api.auth(token))
        assert resp.status == 200
        [occ] = (await resp.json())["problems"]
        assert (occ["code"], occ["state"], occ["seen"], occ["severity"]) == ("item.no_title", "resolved", 2, "error")
        assert occ["resolved_at"] is not None
        resp = await api.client.get(f"/api/v1/feeds/{feed_id}/problems", headers=api.auth(other))
        assert resp.status == 404
