"""The webmaster API: register a feed, watch its status, delete it; validation and the SSRF guard."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from shared.messages import FeedFormat, FeedRegistration
from shared.stores import Feed
from shared.webmaster.feed_options import FeedOptions, FullText
from tests.partners.fixtures import PartnerResolver
from tests.unit.cubes.api.apikit import ApiHarness, api_settings


async def test_register_watch_and_delete_a_feed(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant()
        body = {"url": "https://A.partner.test/feed.xml", "format": "turbo", "services": ["turbo", "news"]}
        created = await api.client.post("/api/v1/feeds", json=body, headers=api.auth(token))
        assert created.status == 201, await created.text()
        feed = await created.json()
        feed_id = feed["feed_id"]
        assert feed["url"] == "https://a.partner.test/feed.xml"
        assert feed["host"] == "a.partner.test"
        assert feed["services"] == ["news", "turbo"]
        assert feed["format"] == "turbo"
        assert created.headers["Location"] == f"/api/v1/feeds/{feed_id}"

        (reg,) = await api.messages("feeds.registry")
        assert isinstance(reg, FeedRegistration)
        assert (reg.action, reg.feed_id, reg.url, reg.format, reg.tenant_id) == (
            "upsert",
            feed_id,
            "https://a.partner.test/feed.xml",
            FeedFormat.turbo,
            tenant_id,
        )
        stored = await api.stores.feeds.get(feed_id)
        assert stored is not None
        assert stored.tenant_id == tenant_id

        again = await api.client.post("/api/v1/feeds", json=body, headers=api.auth(token))
        assert again.status == 200
        assert (await again.json())["feed_id"] == feed_id

        # what the crawler / parser / scheduler record, the webmaster sees
        fetched = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
        await api.stores.feeds.update_schedule(
            feed_id,
            last_fetch_at=fetched,
            last_http_status=200,
            fetch_result="ok",
            next_fetch_at=datetime(2026, 1, 2, 3, 14, 5, tzinfo=UTC),
        )
        await api.stores.feeds.update_parse_status(
            feed_id, parse_result="parse_error", items=0, parse_error="mismatched tag", error_line=12, error_column=7
        )
        got = await (await api.client.get(f"/api/v1/feeds/{feed_id}", headers=api.auth(token))).json()
        assert got["status"]["last_http_status"] == 200
        assert (got["status"]["error_line"], got["status"]["error_column"]) == (12, 7)
        assert got["status"]["last_error"] == "mismatched tag"
        assert (got["status"]["fetch_result"], got["status"]["parse_result"]) == ("ok", "parse_error")
        assert got["status"]["last_fetch_at"].startswith("2026-01-02T03:04:05")
        assert got["status"]["next_fetch_at"].startswith("2026-01-02T03:14:05")

        listed = await (await api.client.get("/api/v1/feeds", headers=api.auth(token))).json()
        assert [f["feed_id"] for f in listed["feeds"]] == [feed_id]

        deleted = await api.client.delete(f"/api/v1/feeds/{feed_id}", headers=api.auth(token))
        assert deleted.status == 204
        regs = await api.messages("feeds.registry")
        assert [r.action for r in regs] == ["upsert", "upsert", "delete"]  # type: ignore[attr-defined]
        gone = await api.client.get(f"/api/v1/feeds/{feed_id}", headers=api.auth(token))
        assert gone.status == 404
        assert (await api.client.delete(f"/api/v1/feeds/{feed_id}", headers=api.auth(token))).status == 404


async def test_field_errors_are_422_with_a_list(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        resp = await api.client.post(
            "/api/v1/feeds",
            json={"url": "ftp://a.partner.test/f", "format": "atom", "services": ["OK!", 3], "extra": 1},
            headers=api.auth(token),
        )
        assert resp.status == 422
        err = await resp.json()
        assert err["error"] == "validation"
        fields = {f["field"] for f in err["fields"]}
        assert fields == {"url", "format", "services[0]", "services[1]", "extra"}
        missing = await api.client.post("/api/v1/feeds", json={}, headers=api.auth(token))
        assert {f["field"] for f in (await missing.json())["fields"]} == {"url"}  # format defaults to auto
        not_object = await api.client.post("/api/v1/feeds", json=[1], headers=api.auth(token))
        assert not_object.status == 422
        assert (await not_object.json())["fields"][0]["field"] == "body"


async def test_malformed_json_400_and_wrong_media_type_415(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        bad = await api.client.post(
            "/api/v1/feeds", data=b'{"url": ', headers={**api.auth(token), "Content-Type": "application/json"}
        )
        assert bad.status == 400
        assert (await bad.json())["error"] == "malformed_json"
        form = await api.client.post("/api/v1/feeds", data={"url": "x"}, headers=api.auth(token))
        assert form.status == 415
        assert await api.messages("feeds.registry") == []


async def test_feed_of_a_host_not_owned_or_not_verified_is_403(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant("a.partner.test")
        await api.tenant("b.partner.test")
        other = await api.client.post(
            "/api/v1/feeds", json={"url": "https://b.partner.test/f.xml", "format": "rss"}, headers=api.auth(token)
        )
        assert other.status == 403
        assert (await other.json())["error"] == "host_not_owned"
        _, token_u = await api.tenant("u.partner.test", verified=False)
        unverified = await api.client.post(
            "/api/v1/feeds",
            json={"url": "https://u.partner.test/f.xml", "format": "rss"},
            headers=api.auth(token_u),
        )
        assert unverified.status == 403
        assert (await unverified.json())["error"] == "host_not_verified"


async def test_a_feed_or_check_on_another_origin_of_the_host_is_403(tmp_path: Path) -> None:
    # a right covers the origin that was proven: a tenant whose right is on another port (or scheme) of
    # the host would have the crawler fetch the site's owner's origin on its behalf
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant("a.partner.test", origin="https://a.partner.test:8443")
        for url in ("https://a.partner.test/f.xml", "http://a.partner.test:8443/f.xml"):
            for path, body in (("/api/v1/feeds", {"url": url, "format": "rss"}), ("/api/v1/feeds/check", {"url": url})):
                r = await api.client.post(path, json=body, headers=api.auth(token))
                assert r.status == 403, (path, url)
                assert (await r.json())["error"] == "origin_not_held"
        assert await api.messages("feeds.registry") == []
        assert await api.messages("crawl.requests") == []
        own = await api.client.post(
            "/api/v1/feeds", json={"url": "https://a.partner.test:8443/f.xml", "format": "rss"}, headers=api.auth(token)
        )
        assert own.status == 201, await own.text()
        # a feed stored on another origin (registered before the rule): not fetched, not changed on demand
        await api.stores.feeds.upsert_feed(
            Feed("old", "https://a.partner.test/old.xml", "a.partner.test", "rss", tenant_id=tenant_id)
        )
        fetch = await api.client.post("/api/v1/feeds/old/fetch", headers=api.auth(token))
        assert fetch.status == 403
        assert (await fetch.json())["error"] == "origin_not_held"
        patch = await api.client.patch("/api/v1/feeds/old", json={"autoparser": True}, headers=api.auth(token))
        assert patch.status == 403
        assert (await patch.json())["error"] == "origin_not_held"


async def test_ssrf_guard_refuses_a_feed_host_resolving_inside(tmp_path: Path) -> None:
    # no allowlist here: a partner name pointing at 127.0.0.1 is what an attacker would register
    resolver = PartnerResolver({"evil.example.org": "10.0.0.7"})
    settings = api_settings(tmp_path).replace(http={"allowlist": []})
    async with ApiHarness(tmp_path, settings=settings, resolver=resolver) as api:
        _, token = await api.tenant("a.partner.test", origin="http://a.partner.test")
        resp = await api.client.post(
            "/api/v1/feeds", json={"url": "http://a.partner.test/feed.xml", "format": "rss"}, headers=api.auth(token)
        )
        assert resp.status == 422
        err = await resp.json()
        assert err["fields"][0]["field"] == "url"
        assert "loopback" in err["fields"][0]["message"]
        _, token_e = await api.tenant("evil.example.org", origin="http://evil.example.org")
        private = await api.client.post(
            "/api/v1/feeds", json={"url": "http://evil.example.org/f", "format": "rss"}, headers=api.auth(token_e)
        )
        assert private.status == 422
        assert "private" in (await private.json())["fields"][0]["message"]
        assert await api.messages("feeds.registry") == []


async def test_full_text_is_set_on_registration_and_changed_with_patch(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        body = {"url": "https://a.partner.test/feed.xml", "format": "rss"}
        created = await (await api.client.post("/api/v1/feeds", json=body, headers=api.auth(token))).json()
        assert created["options"]["full_text"] == "auto"  # a summary-only item gets its page's article by default
        feed_id = created["feed_id"]
        change = {"options": {"full_text": "never"}}
        changed = await api.client.patch(f"/api/v1/feeds/{feed_id}", json=change, headers=api.auth(token))
        assert changed.status == 200, await changed.text()
        assert (await changed.json())["options"]["full_text"] == "never"
        stored = await api.stores.feeds.get(feed_id)
        assert stored is not None
        assert FeedOptions.from_json(stored.options).full_text is FullText.never
        # another option changed keeps it (a merge patch), and so does the autoparser switch
        again = {"autoparser": True, "options": {"timeout_s": 30}}
        assert (await api.client.patch(f"/api/v1/feeds/{feed_id}", json=again, headers=api.auth(token))).status == 200
        stored = await api.stores.feeds.get(feed_id)
        assert stored is not None
        kept = FeedOptions.from_json(stored.options)
        assert (stored.autoparser, kept.full_text, kept.timeout_s) == (True, FullText.never, 30)
        bad = {**body, "options": {"full_text": "sometimes"}}
        refused = await api.client.post("/api/v1/feeds", json=bad, headers=api.auth(token))
        assert refused.status == 422
        assert "options.full_text" in await refused.text()
        wrong = {"options": {"full_text": 1}}
        refused = await api.client.patch(f"/api/v1/feeds/{feed_id}", json=wrong, headers=api.auth(token))
        assert refused.status == 422
        assert "options.full_text" in await refused.text()
