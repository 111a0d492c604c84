"""A feed behind basic auth, end to end on the embedded engines: registered with its credentials through the
API, fetched by the real crawler cube with them, parsed by the real parser cube; the credentials are in no
answer, no log line, no topic and no store row in the clear. Filters drop items and say so."""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from cubes.crawler.cube import build as build_crawler
from cubes.parser.cube import build as build_parser
from shared.messages import CrawlRequest, Document
from shared.runtime import run_cube
from shared.secretbox import new_key
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness, api_settings

HOST = "a.partner.test"
USER, PASSWORD, API_KEY = "staging", "Pa55-w0rd-never-shown", "key-never-shown-either"


def _feed(port: int) -> bytes:
    base = f"http://{HOST}:{port}"
    items = "".join(
        f"<item><title>{title}</title><link>{base}/{n}</link><category>{cat}</category>"
        f"<description>Text {n}.</description></item>"
        for n, (title, cat) in enumerate([("Morning news", "News"), ("Buy now", "Ads"), ("Evening news", "News")])
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()


def _secrets_in(text: str) -> list[str]:
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    return [s for s in (PASSWORD, API_KEY, basic) if s in text]


async def test_a_feed_behind_basic_auth_is_fetched_with_its_credentials_shown_nowhere(
    tmp_path: Path, partner: PartnerServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[dict[str, str]] = []

    async def private(request: web.Request) -> web.StreamResponse:
        seen.append(dict(request.headers))
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if request.headers.get("Authorization") != expected or request.headers.get("X-Api-Key") != API_KEY:
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="staging"'})
        return web.Response(body=_feed(partner.port), content_type="application/rss+xml")

    partner.set_handler(HOST, "/private/feed.xml", private)
    settings = api_settings(tmp_path).replace(secrets={"key": new_key()})
    answers: list[str] = []
    async with ApiHarness(tmp_path, settings=settings) as api:
        _, token = await api.tenant(HOST, origin=f"http://{HOST}:{partner.port}")  # the site's own origin
        url = f"http://{HOST}:{partner.port}/private/feed.xml"
        options = {
            "basic_auth": {"username": USER, "password": PASSWORD},
            "headers": {"X-Api-Key": API_KEY},
            "timeout_s": 20,
            "filters": {"drop_categories": ["ads"]},
        }
        r = await api.client.post("/api/v1/feeds", json={"url": url, "options": options}, headers=api.auth(token))
        answers.append(await r.text())
        assert r.status == 201, answers[-1]
        feed = await r.json()
        assert feed["has_credentials"] is True
        assert feed["options"]["username"] == USER
        assert feed["options"]["header_names"] == ["X-Api-Key"]
        assert feed["options"]["timeout_s"] == 20.0
        fetch = await api.client.post(f"/api/v1/feeds/{feed['feed_id']}/fetch", headers=api.auth(token))
        assert fetch.status == 202

        await run_cube(await build_crawler(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)
        assert [h.get("Authorization", "").startswith("Basic ") for h in seen] == [True]  # with them, once
        await run_cube(await build_parser(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)

        parsed = [d for d in await api.messages("documents.parsed") if isinstance(d, Document)]
        # the items are summaries: each rides its page's request (their full text: cubes/parser/fulltext.py),
        # which goes with the feed's credentials and timeout, the page being on the feed's own origin
        pages = [r for r in await api.messages("crawl.requests") if isinstance(r, CrawlRequest) and r.document]
        assert pages
        assert all(r.credentials is not None and r.timeout_s == 20.0 for r in pages)
        titles = sorted([d.title for d in parsed] + [r.document.title for r in pages if r.document])
        assert titles == ["Evening news", "Morning news"]  # "Buy now" left out by the feed's own filter
        for path in (
            f"/api/v1/feeds/{feed['feed_id']}",
            "/api/v1/feeds",
            f"/api/v1/feeds/{feed['feed_id']}/fetches",
            "/api/v1/openapi.json",
        ):
            got = await api.client.get(path, headers=api.auth(token))
            answers.append(await got.text())
            assert got.status == 200, path
        shown = await (await api.client.get(f"/api/v1/feeds/{feed['feed_id']}", headers=api.auth(token))).json()
        filtered = [p for p in shown["latest_fetch"]["problems"] if p["code"] == "item.filtered"]
        assert len(filtered) == 1
        assert "drop_categories" in filtered[0]["message"]
        assert shown["latest_fetch"]["changed"] == 2  # the two items the filter kept went on to publication
        # a change of the filters alone keeps the credentials
        patched = await api.client.patch(
            f"/api/v1/feeds/{feed['feed_id']}", json={"options": {"filters": {}}}, headers=api.auth(token)
        )
        answers.append(await patched.text())
        assert patched.status == 200, answers[-1]
        row = await api.stores.feeds.get(feed["feed_id"])
        assert row is not None
        assert row.secret is not None
        assert (await patched.json())["has_credentials"] is True

        requests = [m.model_dump_json() for m in await api.messages("crawl.requests")]
        rows = [f"{row.options} {row.secret}"]
    assert not _secrets_in(" ".join(answers)), "an API answer shows the credentials"
    assert not _secrets_in(" ".join(requests)), "crawl.requests carries the credentials in the clear"
    assert not _secrets_in(" ".join(rows)), "the feed's row keeps the credentials in the clear"
    logged = "\n".join(f"{r.getMessage()} {r.args!r}" for r in caplog.records)
    assert not _secrets_in(logged), "a log line shows the credentials"


async def test_credentials_without_a_key_are_refused_naming_the_setting(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST)
        body: dict[str, Any] = {
            "url": f"https://{HOST}/feed.xml",
            "options": {"basic_auth": {"username": USER, "password": PASSWORD}},
        }
        r = await api.client.post("/api/v1/feeds", json=body, headers=api.auth(token))
        assert r.status == 422
        got = await r.json()
        assert got["fields"][0]["field"] == "options.basic_auth"
        assert "secrets.key" in got["fields"][0]["message"]
        assert await api.stores.feeds.list() == []  # nothing kept half-way
        bad = await api.client.post(
            "/api/v1/feeds",
            json={"url": f"https://{HOST}/feed.xml", "options": {"timeout_s": 9999, "headers": {"Host": "x"}}},
            headers=api.auth(token),
        )
        assert bad.status == 422
        fields = sorted(f["field"] for f in (await bad.json())["fields"])
        assert fields == ["options.headers", "options.timeout_s"]
