"""The webmaster console (cubes/frontend/console/): sign-in, CSRF, the pages and the actions, on SQLite."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import CrawlRequest, FeedRegistration
from shared.problems import problem
from shared.runtime.cube import Output
from shared.stores import Feed, FetchReport, Stores, open_stores
from tests.partners.fixtures import PartnerResolver

T0 = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
HOST = "a.partner.test"


class Env:
    def __init__(
        self,
        client: TestClient[web.Request, web.Application],
        stores: Stores,
        published: list[Output],
        settings: Settings | None = None,
    ) -> None:
        self.client = client
        self.stores = stores
        self.published = published
        self.settings = settings or Settings()

    async def tenant(self, host: str = HOST, *, verified: bool = True) -> tuple[str, str]:
        t = await self.stores.tenants.create_tenant(f"of {host}")
        await self.stores.tenants.add_host(t.tenant_id, host)
        if verified:
            await self.stores.tenants.set_verified(t.tenant_id, host)
        return t.tenant_id, await self.stores.tenants.issue_token(t.tenant_id)

    async def sign_in(self, token: str) -> str:
        r = await self.client.post("/console/login", data={"token": token}, allow_redirects=False)
        assert r.status == 303, await r.text()
        return await self.csrf()

    async def csrf(self, path: str = "/console") -> str:
        body = await (await self.client.get(path)).text()
        found = re.search(r'name="csrf" value="([^"]+)"', body)
        assert found, body[:500]
        return found.group(1)


@contextlib.asynccontextmanager
async def console(tmp_path: Path, **sections: Any) -> AsyncIterator[Env]:
    """The console on SQLite, on a ManualClock at ``T0``; ``sections`` change settings (``secrets={"key": ...}``)."""
    settings = Settings().replace(
        store={"url": f"sqlite:///{tmp_path}/store.db"}, http={"allowlist": ["127.0.0.1/32"]}, **sections
    )
    stores = await open_stores(settings.store.url)
    published: list[Output] = []

    async def publish(outputs: Sequence[Output]) -> None:
        published.extend(outputs)

    app = create_app(settings, stores, clock=ManualClock(T0.timestamp()), publish=publish, resolver=PartnerResolver())
    client = TestClient(TestServer(app, host="127.0.0.1", port=0))
    await client.start_server()
    try:
        yield Env(client, stores, published, settings)
    finally:
        await client.close()
        await stores.close()


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    async with console(tmp_path) as e:
        yield e


async def test_a_sign_in_with_the_owners_token_is_its_last_use(env: Env) -> None:
    tenant, token = await env.tenant()
    [before] = await env.stores.tenants.team.tokens(tenant)
    assert before.last_used_at is None
    await env.sign_in(token)
    [after] = await env.stores.tenants.team.tokens(tenant)
    assert after.last_used_at == T0  # the console's clock: the token list says when it was last used


async def test_sign_in_sets_a_strict_http_only_cookie_and_sign_out_ends_it(env: Env) -> None:
    first = await (await env.client.get("/console")).text()
    assert "Sign in with your API token" in first
    tenant_id, token = await env.tenant()
    r = await env.client.post("/console/login", data={"token": token}, allow_redirects=False)
    assert r.status == 303
    cookie = r.headers["Set-Cookie"]
    for flag in ("HttpOnly", "SameSite=Strict", "Path=/console"):
        assert flag in cookie, cookie
    assert token not in cookie  # the session is not the token
    home = await env.client.get("/console")
    assert home.headers["Cache-Control"] == "no-store"
    body = await home.text()
    assert f"tenant {tenant_id}" in body
    assert f'href="/console/hosts/{HOST}"' in body
    csrf = await env.csrf()
    out = await env.client.post("/console/logout", data={"csrf": csrf}, allow_redirects=False)
    assert out.status == 303
    assert "Sign in with your API token" in await (await env.client.get("/console")).text()


async def test_a_bad_token_is_refused_and_repeated_failures_wait(env: Env) -> None:
    for _ in range(5):
        r = await env.client.post("/console/login", data={"token": "tc_wrong"})
        assert r.status == 401
    assert (await env.client.post("/console/login", data={"token": "tc_wrong"})).status == 429


async def test_forms_need_the_sessions_csrf_token_and_our_origin(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    no_token = await env.client.post("/console/hosts", data={"url": "https://b.partner.test/"})
    assert no_token.status == 403
    other_site = await env.client.post(
        "/console/hosts",
        data={"url": "https://b.partner.test/", "csrf": csrf},
        headers={"Origin": "https://evil.example"},
    )
    assert other_site.status == 403
    ok = await env.client.post(
        "/console/hosts", data={"url": "https://b.partner.test:8443/", "csrf": csrf}, allow_redirects=False
    )
    assert ok.status == 303
    assert ok.headers["Location"] == "/console/hosts/b.partner.test"
    page = await (await env.client.get("/console/hosts/b.partner.test")).text()
    assert "not verified yet" in page
    assert "https://b.partner.test:8443/.well-known/turbocubes-verify.txt" in page


async def test_add_a_feed_see_its_problems_and_fetch_it_now(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    r = await env.client.post(
        "/console/feeds",
        data={"url": f"https://{HOST}/feed.xml", "format": "auto", "autoparser": "1", "csrf": csrf},
        allow_redirects=False,
    )
    assert r.status == 303, await r.text()
    feed_path = r.headers["Location"]
    feed_id = feed_path.rsplit("/", 1)[1]
    (reg,) = [o.message for o in env.published if o.topic == "feeds.registry"]
    assert isinstance(reg, FeedRegistration)
    assert (reg.url, reg.autoparser) == (f"https://{HOST}/feed.xml", True)

    broken = problem("item.no_title", "item has no <title> — <script>alert(1)</script>", feed=feed_id, item=2, line=9)
    await env.stores.problems.add_report(
        FetchReport(
            feed_id, T0, "partial", 200, 3, changed=2, refused=1, problems=(broken,), counts={"item.no_title": 1}
        )
    )
    page = await (await env.client.get(feed_path)).text()
    assert "<code>item.no_title</code>" in page
    assert "item 3, line 9" in page
    assert "How to fix:" in page
    assert "<script>alert(1)</script>" not in page  # partner text is escaped
    assert "&lt;script&gt;" in page

    done = await env.client.post(f"{feed_path}/fetch", data={"csrf": csrf}, allow_redirects=False)
    assert done.status == 303
    fetch_id = done.headers["Location"].split("fetch=", 1)[1]
    (req,) = [o.message for o in env.published if o.topic == "crawl.requests"]
    assert isinstance(req, CrawlRequest)
    assert (req.host, req.feed_id) == (HOST, feed_id)
    assert f"fetch:{fetch_id}" in req.requesters
    assert "Fetch ordered" in await (await env.client.get(done.headers["Location"])).text()

    off = await env.client.post(f"{feed_path}/autoparser", data={"csrf": csrf, "on": "0"}, allow_redirects=False)
    assert off.status == 303
    stored = await env.stores.feeds.get(feed_id)
    assert stored is not None
    assert stored.autoparser is False
    gone = await env.client.post(f"{feed_path}/delete", data={"csrf": csrf}, allow_redirects=False)
    assert gone.status == 303
    assert (await env.stores.feeds.get(feed_id)).deleted  # type: ignore[union-attr]


async def test_a_feed_on_an_unverified_host_is_refused_with_the_reason(env: Env) -> None:
    _, token = await env.tenant(verified=False)
    csrf = await env.sign_in(token)
    r = await env.client.post("/console/feeds", data={"url": f"https://{HOST}/f.xml", "csrf": csrf})
    assert r.status == 422
    assert "not verified yet" in await r.text()


async def test_a_feed_on_another_origin_of_the_host_is_refused_with_the_reason(env: Env) -> None:
    # the right covers https://a.partner.test: another port or scheme of the host is not the tenant's
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    for url in (f"https://{HOST}:8443/f.xml", f"http://{HOST}/f.xml"):
        r = await env.client.post("/console/feeds", data={"url": url, "csrf": csrf})
        assert r.status == 422, url
        assert f"covers https://{HOST}, not" in await r.text()
    assert [o for o in env.published if o.topic == "feeds.registry"] == []


async def test_another_tenants_host_and_feed_are_not_found(env: Env) -> None:
    _, mine = await env.tenant()
    csrf = await env.sign_in(mine)
    await env.client.post("/console/feeds", data={"url": f"https://{HOST}/feed.xml", "csrf": csrf})
    feed_id = next(o.message.feed_id for o in env.published if o.topic == "feeds.registry")  # type: ignore[attr-defined]
    await env.client.post("/console/logout", data={"csrf": csrf})
    _, theirs = await env.tenant("b.partner.test")
    await env.sign_in(theirs)
    assert (await env.client.get(f"/console/feeds/{feed_id}")).status == 404
    assert (await env.client.get(f"/console/hosts/{HOST}")).status == 404
    assert (await env.client.get("/console/uploads/nope")).status == 404


async def test_every_page_links_the_console_and_the_api_docs(env: Env) -> None:
    """The OpenAPI document was linked from nowhere."""
    home = await (await env.client.get("/")).text()
    assert 'href="/console"' in home
    assert 'href="/docs/api"' in home
    r = await env.client.get("/docs/api", allow_redirects=False)
    assert r.status == 302
    assert r.headers["Location"] == "http://127.0.0.1:8081/docs"  # api.public_url: the API serves its docs


async def test_a_feed_is_checked_from_the_console(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    r = await env.client.post(
        "/console/check", data={"url": f"https://{HOST}/new.xml", "csrf": csrf}, allow_redirects=False
    )
    assert r.status == 303, await r.text()
    task_path = r.headers["Location"]
    task_id = task_path.rsplit("/", 1)[1]
    (req,) = [o.message for o in env.published if o.topic == "crawl.requests"]
    assert isinstance(req, CrawlRequest)
    assert req.requesters == [f"check:{task_id}"]
    assert await env.stores.feeds.list() == []  # nothing registered
    assert "Working on it" in await (await env.client.get(task_path)).text()
    other = await env.client.post("/console/check", data={"url": "https://b.partner.test/f.xml", "csrf": csrf})
    assert other.status == 422
    assert "does not belong to this tenant" in await other.text()  # the API's words: shared.webmaster.access


async def test_a_newcomer_signs_up_in_the_console_and_sees_the_token_once(env: Env) -> None:
    """Becoming a webmaster needed curl: the console had no sign-up, and the name was never shown."""
    first = await (await env.client.get("/console")).text()
    assert 'action="/console/signup"' in first
    r = await env.client.post("/console/signup", data={"name": "  Lake   birds "}, allow_redirects=False)
    assert r.status == 303, await r.text()
    assert r.headers["Location"] == "/console/welcome"
    welcome = await env.client.get("/console/welcome", allow_redirects=False)
    assert welcome.status == 200
    page = await welcome.text()
    token = re.search(r'<code class="url" id="token">(tc_[^<]+)</code>', page)
    assert token, page[:2000]
    assert 'id="tenant-name">Lake birds<' in page  # the name it signed up with, spaces tidied
    assert "shown this once" in page
    tenant_id = await env.stores.tenants.tenant_for_token(token.group(1))
    assert tenant_id is not None  # a real API token of the new tenant
    assert await env.stores.tenants.get_tenant(tenant_id) is not None
    again = await env.client.get("/console/welcome", allow_redirects=False)
    assert (again.status, again.headers.get("Location")) == (303, "/console")  # a reload never shows it again
    home = await (await env.client.get("/console")).text()
    assert "Lake birds" in home  # signed in as the new tenant
    assert f"tenant {tenant_id}" in home


async def test_sign_up_in_the_console_is_checked_and_limited_as_the_api_is(env: Env) -> None:
    assert (await env.client.post("/console/signup", data={"name": " "})).status == 422
    foreign = await env.client.post("/console/signup", data={"name": "x"}, headers={"Origin": "https://evil.example"})
    assert foreign.status == 403
    statuses = [(await env.client.post("/console/signup", data={"name": f"s{i}"})).status for i in range(4)]
    assert statuses[-1] == 429  # the API's limit: api.signup_burst from one address
    assert "Too many sign-ups" in await (await env.client.post("/console/signup", data={"name": "y"})).text()


async def test_verifying_redirects_and_the_page_says_what_was_found_once(env: Env) -> None:
    """Post/redirect/get: the verification's outcome rode on a page rendered at the POST URL, so a
    reload checked again."""
    _, token = await env.tenant(verified=False)
    csrf = await env.sign_in(token)
    r = await env.client.post(f"/console/hosts/{HOST}/verify", data={"csrf": csrf}, allow_redirects=False)
    assert r.status == 303
    assert r.headers["Location"] == f"/console/hosts/{HOST}"
    shown = await (await env.client.get(r.headers["Location"])).text()
    assert "Not verified yet: see what was found below." in shown
    assert 'class="attempts"' in shown
    plain = await (await env.client.get(f"/console/hosts/{HOST}")).text()
    assert "Not verified yet: see what" not in plain  # said once
    # a flash this session did not sign is never shown
    env.client.session.cookie_jar.update_cookies({"tc_flash": "eyJub3RpY2UiOiJTZW5kIHVzIHlvdXIgdG9rZW4ifQ.00"})
    assert "Send us your token" not in await (await env.client.get(f"/console/hosts/{HOST}")).text()


async def test_turbo_off_and_on_from_the_host_page_is_told_on_every_screen(env: Env) -> None:
    """The console had no Turbo switch, and no screen said a host's pages were switched off."""
    tenant_id, token = await env.tenant()
    csrf = await env.sign_in(token)
    await env.stores.feeds.upsert_feed(
        Feed(feed_id="f1", url=f"https://{HOST}/feed.xml", host=HOST, format="rss", tenant_id=tenant_id)
    )
    host = await (await env.client.get(f"/console/hosts/{HOST}")).text()
    assert 'id="turbo-state"' in host
    assert 'Turbo pages: <b class="ok">on</b>' in host
    off = await env.client.post(f"/console/hosts/{HOST}/turbo", data={"csrf": csrf, "on": "0"}, allow_redirects=False)
    assert off.status == 303
    assert off.headers["Location"] == f"/console/hosts/{HOST}#turbo"
    assert not await env.stores.tenants.turbo_enabled(HOST)
    assert [o.message.feed_id for o in env.published if isinstance(o.message, CrawlRequest)] == ["f1"]
    host = await (await env.client.get(f"/console/hosts/{HOST}")).text()
    assert f"Turbo pages of {HOST} switched off" in host  # what the switch did, said once
    assert 'Turbo pages: <b class="bad">off</b>' in host
    assert "Switch on" in host
    again = await (await env.client.get(f"/console/hosts/{HOST}")).text()
    assert f"{HOST} switched off:" not in again  # said once
    assert 'Turbo pages: <b class="bad">off</b>' in again
    feed = await (await env.client.get("/console/feeds/f1")).text()
    assert 'id="turbo-off"' in feed
    home = await (await env.client.get("/console")).text()
    assert "Turbo pages off" in home
    on = await env.client.post(f"/console/hosts/{HOST}/turbo", data={"csrf": csrf, "on": "1"}, allow_redirects=False)
    assert on.status == 303
    assert await env.stores.tenants.turbo_enabled(HOST)
    host = await (await env.client.get(f"/console/hosts/{HOST}")).text()
    assert f"Turbo pages of {HOST} switched on" in host
    assert 'id="turbo-off"' not in await (await env.client.get("/console/feeds/f1")).text()
    assert "Turbo pages off" not in await (await env.client.get("/console")).text()
    # another tenant's host: the same 404 as one that does not exist, nothing switched
    _, other = await env.tenant("b.partner.test")
    await env.client.post("/console/logout", data={"csrf": csrf})
    csrf = await env.sign_in(other)
    stranger = await env.client.post(f"/console/hosts/{HOST}/turbo", data={"csrf": csrf, "on": "0"})
    assert stranger.status == 404
    assert await env.stores.tenants.turbo_enabled(HOST)
