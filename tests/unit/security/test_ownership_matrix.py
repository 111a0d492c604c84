"""The ownership matrix: who owns what on a site, tried as a second tenant would (shared/webmaster/rights.py).

The reproduced takeover: tenant A verified its site; tenant B served one file on *another port* of
the same host, verified the host with it, and the newest proof replaced A's -- A's claim flipped
to unverified with no notice, and B published under A's site and deleted A's page. Here, against
real partner servers on two ports of one host, through the API and the parser:

* **ownership and takeover** -- B's right covers B's port alone: nothing of A's changes, B
  publishes and deletes nothing on A's origin; C, a second holder of A's very origin, neither
  replaces nor deletes A's pages, nor switches them off, and the messages name no tenant; A is
  told of C's right; once A's proof lapses past its grace A's right ends, both are told, and A's
  pages are C's to replace or delete;
* **overview isolation** -- a claim without a right shows the claim and nothing else; a holder of
  the same origin sees none of another holder's pages, problems or waiting documents, in the API
  and in the console, and its answers are the same before and after the other's activity; the
  searches that showed an origin's pages are shown to its holders and to no holder of another port
  (they were counted per host: B saw A's searches).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import DummyCookieJar
from aiohttp.test_utils import TestClient, TestServer

from cubes.api.context import CTX
from cubes.frontend.app import create_app
from cubes.frontend.console.session import COOKIE
from cubes.parser.cube import build as build_parser
from cubes.wordstat.handler import counted
from shared.messages import Document, SearchQueryEvent
from shared.problems import problem
from shared.runtime import run_cube
from shared.stores import Feed, PageProblems
from shared.stores.wordstat import Privacy
from shared.webmaster.verification import META_NAME
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness
from tests.unit.security.conftest import Matrix

HOST = "site.partner.test"


@pytest.fixture
async def second() -> Any:
    async with PartnerServer() as server:
        yield server


def _rss(*links: str, title: str = "T") -> bytes:
    items = "".join(
        f"<item><title>{title}</title><link>{u}</link><description>{title} text</description></item>" for u in links
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>c</title>{items}</channel></rss>'.encode()


class World:
    def __init__(self, api: ApiHarness, partner: PartnerServer, second: PartnerServer) -> None:
        self.api = api
        self.partner = partner
        self.second = second
        self.a_origin = f"http://{HOST}:{partner.port}"
        self.b_origin = f"http://{HOST}:{second.port}"
        self.ids: dict[str, str] = {}
        self.tokens: dict[str, str] = {}
        self.metas: dict[str, str] = {}

    async def tenant(self, who: str, origin: str) -> None:
        r = await self.api.client.post("/api/v1/signup", json={"name": f"tenant {who}"})
        body = await r.json()
        self.ids[who], self.tokens[who] = body["tenant_id"], body["token"]
        claim = await (await self.post(who, "/api/v1/hosts", json={"url": origin + "/"})).json()
        self.metas[who] = claim["verification_token"]

    def serve_tokens(self, server: PartnerServer, *whos: str) -> None:
        metas = "".join(f'<meta name="{META_NAME}" content="{self.metas[w]}">' for w in whos)
        server.set(
            HOST, "/", f"<html><head>{metas}</head><body>site</body></html>", headers={"Content-Type": "text/html"}
        )

    async def verify(self, who: str) -> dict[str, Any]:
        got: dict[str, Any] = await (await self.post(who, f"/api/v1/hosts/{HOST}/verify")).json()
        return got

    async def post(self, who: str, path: str, **kw: Any) -> Any:
        return await self.api.client.post(path, headers=self.api.auth(self.tokens[who]), **kw)

    async def get(self, who: str, path: str, **kw: Any) -> Any:
        return await self.api.client.get(path, headers=self.api.auth(self.tokens[who]), **kw)

    async def claim(self, who: str) -> dict[str, Any]:
        hosts = await (await self.get(who, "/api/v1/hosts")).json()
        claim: dict[str, Any] = next(h for h in hosts["hosts"] if h["host"] == HOST)
        return claim

    async def upload(self, who: str, body: bytes, fmt: str = "rss") -> dict[str, Any]:
        ctype = "application/json" if fmt == "json" else "application/rss+xml"
        resp = await self.api.upload(self.tokens[who], body, host=HOST, fmt=fmt, content_type=ctype)
        assert resp.status == 202, await resp.text()
        task_id = (await resp.json())["task_id"]
        await run_cube(
            await build_parser(self.api.settings, self.api.deps), self.api.deps, max_messages=1, idle_timeout=10.0
        )
        task: dict[str, Any] = await (await self.get(who, f"/api/v1/uploads/{task_id}")).json()
        return task

    async def delete(self, who: str, url: str) -> Any:
        return await self.api.client.delete(
            "/api/v1/pages", params={"url": url}, headers=self.api.auth(self.tokens[who])
        )

    async def titles(self, url: str) -> list[str]:
        return [
            m.title for m in await self.api.messages("documents.parsed") if isinstance(m, Document) and m.url == url
        ]

    async def notices(self, who: str) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = (await (await self.get(who, "/api/v1/notices")).json()).get("notices", [])
        return got

    def names_another(self, text: str, who: str) -> bool:
        return any(tid in text for w, tid in self.ids.items() if w != who)


async def test_ownership_and_takeover(
    tmp_path: Path, partner: PartnerServer, second: PartnerServer, matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("ownership and takeover")
    wrong: list[str] = []

    def case(label: str, ok: bool) -> None:
        report.case(label, ok, kind="takeover")
        if not ok:
            wrong.append(label)

    async with ApiHarness(tmp_path, tenant_rps=10_000.0, tenant_burst=10_000, signup_burst=100) as api:
        w = World(api, partner, second)
        await w.tenant("a", w.a_origin)
        w.serve_tokens(partner, "a")
        case("A verifies its origin", (await w.verify("a"))["verified"])
        story = f"{w.a_origin}/story/1"
        first = await w.upload("a", _rss(story, title="A's story"))
        case("A publishes its page", [i["status"] for i in first["items"]] == ["ok"])

        # B serves one file on another port of the same host
        await w.tenant("b", w.b_origin)
        w.serve_tokens(second, "b")
        got = await w.verify("b")
        case("B verifies the other port, and only it", got["verified"] and got.get("origin") == w.b_origin)
        a_claim = await w.claim("a")
        case("A's right is untouched by B's proof", a_claim["verified"] and a_claim["origin"] == w.a_origin)
        case("A is not told of a right on another origin", all(n["origin"] == w.a_origin for n in await w.notices("a")))
        theirs = await w.upload("b", _rss(story, f"{w.b_origin}/own", title="B's"))
        by_url = {i["url"]: i for i in theirs["items"]}
        case("B cannot publish on A's origin", by_url[story]["status"] == "rejected")
        case("B publishes on its own origin", by_url[f"{w.b_origin}/own"]["status"] == "ok")
        case("A's page is still A's", await w.titles(story) == ["A's story"])
        deleted = await w.delete("b", story)
        case(
            f"B cannot delete A's page: {deleted.status}",
            deleted.status == 403 and (await deleted.json())["error"] == "origin_not_held",
        )
        case("B deletes its own page", (await w.delete("b", f"{w.b_origin}/own")).status == 202)
        https = await w.delete("b", f"https://{HOST}/story/1")
        case("B cannot delete on the https origin of the host", https.status == 403)

        # C proves A's very origin (it can serve a tag there too): a second holder
        await w.tenant("c", w.a_origin)
        w.serve_tokens(partner, "a", "c")
        case("C verifies A's origin as a second holder", (await w.verify("c"))["verified"])
        case("A keeps its right beside C's", (await w.claim("a"))["verified"])
        told = [n for n in await w.notices("a") if n["change"] == "granted" and not n["yours"]]
        case("A is told another tenant holds a right on its origin", len(told) == 1)
        case("the notice names no tenant", not any(w.names_another(n["message"], "a") for n in await w.notices("a")))
        replaced = await w.upload("c", _rss(story, title="C's overwrite"))
        (item,) = replaced["items"]
        case("C cannot replace A's page", item["status"] == "conflict" and await w.titles(story) == ["A's story"])
        case("the conflict names no tenant (upload task)", not w.names_another(orjson.dumps(replaced).decode(), "c"))
        case(
            "the conflict says why, with its code", any(p["code"] == "conflict.other_tenant" for p in item["problems"])
        )
        gone = await w.upload("c", orjson.dumps([{"url": story, "action": "delete"}]), fmt="json")
        case("C's upload cannot delete A's page", [i["status"] for i in gone["items"]] == ["conflict"])
        deleted = await w.delete("c", story)
        case(
            f"C cannot DELETE A's page: {deleted.status}",
            deleted.status == 403 and (await deleted.json())["error"] == "page_not_owned",
        )
        case("the refusal names no tenant", not w.names_another(await deleted.text(), "c"))
        off = await api.client.put(
            f"/api/v1/hosts/{HOST}/turbo", json={"enabled": False}, headers=api.auth(w.tokens["c"])
        )
        case("C switches its own Turbo pages off", off.status == 200)
        again = await w.upload("a", _rss(story, title="A's edit"))
        case("A's pages stay on when C switches its own off", [i["status"] for i in again["items"]] == ["ok"])
        await api.client.put(f"/api/v1/hosts/{HOST}/turbo", json={"enabled": True}, headers=api.auth(w.tokens["c"]))

        # A's proof goes missing: a re-check reports it, the grace runs out, the right ends
        server = api.client.server
        assert isinstance(server, TestServer)
        ctx = server.app[CTX].ctx
        assert ctx is not None
        rights = ctx.rights
        w.serve_tokens(partner, "c")
        api.clock.advance(rights.recheck_s + 1)
        await rights.sweep()
        lapsing = await w.claim("a")
        case(
            "a missing proof is reported before the right ends",
            lapsing["verified"]
            and lapsing["right"]["lapsing_since"] is not None
            and [p["code"] for p in lapsing["problems"]] == ["host.proof_lapsing"],
        )
        case(
            "the lapse is told to its holder only",
            next(iter(n["change"] for n in await w.notices("a")), None) == "lapsing"
            and all(n["change"] != "lapsing" for n in await w.notices("c")),
        )
        still = await w.upload("a", _rss(story, title="A in grace"))
        case("a lapsing right still publishes", [i["status"] for i in still["items"]] == ["ok"])
        api.clock.advance(rights.grace_s + rights.recheck_s + 1)
        await rights.sweep()
        case("the right ends after the grace", not (await w.claim("a"))["verified"])
        ended_a = [n for n in await w.notices("a") if n["change"] == "ended"]
        ended_c = [n for n in await w.notices("c") if n["change"] == "ended"]
        case(
            "its end is told to A and to C",
            len(ended_a) == 1 and ended_a[0]["yours"] and len(ended_c) == 1 and not ended_c[0]["yours"],
        )
        case("C's notice names no tenant", not w.names_another(ended_c[0]["message"], "c") if ended_c else False)
        taken = await w.upload("c", _rss(story, title="C's now"))
        case(
            "a page of an ended right is free for a holder",
            [i["status"] for i in taken["items"]] == ["ok"] and (await w.titles(story))[-1] == "C's now",
        )
        case("C may delete it now", (await w.delete("c", f"{w.a_origin}/story/1")).status == 202)

        # C moves its claim to another origin: its right on A's origin ends, told to those who held one
        await w.post("c", "/api/v1/hosts", json={"url": f"https://{HOST}/"})
        moved = await w.claim("c")
        case(
            "a claim of another origin ends the right on the old one",
            not moved["verified"] and moved["origin"] == f"https://{HOST}",
        )
        case(
            "A, who held a right there, is told",
            any(n["change"] == "withdrawn" and not n["yours"] for n in await w.notices("a")),
        )
    assert wrong == [], "\n".join(wrong)


async def test_overview_isolation(
    tmp_path: Path, partner: PartnerServer, second: PartnerServer, matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("overview isolation")
    wrong: list[str] = []

    def case(label: str, ok: bool, kind: str) -> None:
        report.case(label, ok, kind=kind)
        if not ok:
            wrong.append(label)

    async with ApiHarness(tmp_path, tenant_rps=10_000.0, tenant_burst=10_000, signup_burst=100) as api:
        w = World(api, partner, second)
        for who in ("a", "c", "d"):
            await w.tenant(who, w.a_origin)
        w.serve_tokens(partner, "a", "c")
        for who in ("a", "c"):
            assert (await w.verify(who))["verified"]
        await w.tenant("b", w.b_origin)  # a right on another port of the host
        w.serve_tokens(second, "b")
        assert (await w.verify("b"))["verified"]
        # a feed of A's, and C's and D's answers before A's activity
        feed = {"feed_id": "feed-of-a"}
        await api.stores.feeds.upsert_feed(
            Feed("feed-of-a", f"{w.a_origin}/rss.xml", HOST, "rss", tenant_id=w.ids["a"])
        )
        console = TestClient(
            TestServer(
                create_app(api.settings, api.stores, clock=api.clock, publish=api.deps.publish, resolver=api.resolver),
                host="127.0.0.1",
                port=0,
            ),
            cookie_jar=DummyCookieJar(),
        )
        await console.start_server()
        try:
            cookies = {}
            for who in ("a", "b", "c", "d"):
                r = await console.post("/console/login", data={"token": w.tokens[who]}, allow_redirects=False)
                cookies[who] = {"Cookie": f"{COOKIE}={r.cookies[COOKIE].value}"}

            async def views(who: str) -> tuple[str, str]:
                api_view = await (await w.get(who, f"/api/v1/hosts/{HOST}")).text()
                page = await (await console.get(f"/console/hosts/{HOST}", headers=cookies[who])).text()
                return api_view, re.sub(r'name="csrf" value="[^"]+"', "", page)

            before = {who: await views(who) for who in ("c", "d")}
            # A's activity: a page held back with its problem, a page waiting for images, a published page
            held, waiting, live = (f"{w.a_origin}/{p}" for p in ("held/1", "waiting/1", "live/1"))
            for url in (held, waiting, live):  # published from A's feed, as the parser records it
                await api.stores.hashes.claim(url, f"feed:{feed['feed_id']}", 20)
                await api.stores.hashes.check_and_set(f"feed:{feed['feed_id']}", url, "h", now=api.clock_now())
            lost = problem("page.incomplete", "an image failed", link=held)
            await api.stores.problems.put_page_problems(
                [PageProblems(held, 7, HOST, "rss", feed["feed_id"], (lost,), held=True)], now=api.clock_now()
            )
            await api.stores.delay.park(
                waiting, 3, b"{}", [f"{w.a_origin}/img.png"], api.clock_now() + timedelta(hours=1), host=HOST
            )
            a_api, a_page = await views("a")
            secrets = (held, waiting, feed["feed_id"], f"{w.a_origin}/img.png")
            case("A sees its own held page, waiting page and feed (API)", all(s in a_api for s in secrets), "own")
            case("A sees them in the console", all(s in a_page for s in (held, waiting)), "own")
            for who, what in (("c", "a second holder of the origin"), ("d", "a claim without a right")):
                api_view, page = await views(who)
                for s in secrets:
                    case(f"{what} sees nothing of A's ({s}) in the API", s not in api_view, who)
                    case(f"{what} sees nothing of A's ({s}) in the console", s not in page, who)
                case(
                    f"{what}: the API answer is the same before and after A's activity", api_view == before[who][0], who
                )
                case(f"{what}: the console page is the same before and after A's activity", page == before[who][1], who)
            claim_only = await (await w.get("d", f"/api/v1/hosts/{HOST}")).json()
            case(
                "a claim without a right shows the claim and nothing else",
                not {"rollup", "feeds", "pages_with_problems", "waiting_for_images"} & set(claim_only),
                "d",
            )
            d_page = (await views("d"))[1]
            case(
                "nor does its console page (no lane, no feeds)",
                'id="lane"' not in d_page and 'id="claim-only"' in d_page,
                "d",
            )

            # the searches that showed pages of A's origin are that origin's holders', not another port's: B
            # sees its own port's 5, never 15 (they were counted per host); exact cells (no noise), numbers that
            # the rounding keeps
            shown = [
                SearchQueryEvent(
                    event_id=uuid.uuid4().hex,
                    query="секретный слон",
                    at=api.clock_now(),
                    hosts=[HOST],
                    origins=[origin],
                )
                for origin in (w.a_origin, w.b_origin)
                for _ in range(10 if origin == w.a_origin else 5)
            ]
            await api.stores.wordstat.count([counted(e) for e in shown], now=api.clock_now(), privacy=Privacy(5))

            async def searches(who: str) -> tuple[int, Any, str]:
                r = await w.get(who, f"/api/v1/hosts/{HOST}/queries")
                page = await (await console.get(f"/console/hosts/{HOST}", headers=cookies[who])).text()
                return r.status, await r.json(), page

            for who, kind, n in (("a", "own", 10), ("c", "c", 10), ("b", "b", 5)):
                status, body, page = await searches(who)
                case(
                    f"{who} sees the searches of its right's origin, {n} (API)",
                    status == 200 and body["queries"] == [{"query": "секретный слон", "impressions": n}],
                    kind,
                )
                case(
                    f"{who} sees them in the console",
                    f"<td class=num>{n}</td>" in page.split('id="searches"')[-1],
                    kind,
                )
            status, body, page = await searches("d")
            case("a claim without a right sees no search", status == 403 and "секретный" not in page, "d")
        finally:
            await console.close()
    assert wrong == [], "\n".join(wrong)
