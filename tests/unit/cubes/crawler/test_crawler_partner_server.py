"""The partner server itself: routes answer as documented and hits are logged per host."""

from __future__ import annotations

import aiohttp

from tests.partners import max_in_window
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer


async def test_routes_and_logs(partner: PartnerServer, partner_resolver: PartnerResolver) -> None:
    conn = aiohttp.TCPConnector(resolver=partner_resolver)
    async with aiohttp.ClientSession(connector=conn) as s:
        async with s.get(partner.url("a.partner.test", "/status/503")) as r:
            assert r.status == 503
        async with s.get(partner.url("b.partner.test", "/etag"), headers={"If-None-Match": '"v1"'}) as r:
            assert r.status == 304
        async with s.get(partner.url("b.partner.test", "/img/x.png")) as r:
            assert (await r.read())[:4] == b"\x89PNG"
        partner.set("a.partner.test", "/custom", "hello", headers={"X-T": "1"}, status=201)
        async with s.get(partner.url("a.partner.test", "/custom")) as r:
            assert r.status == 201
            assert await r.text() == "hello"
        async with s.get(partner.url("a.partner.test", "/robots.txt")) as r:
            assert r.status == 404
        partner.set_robots("a.partner.test", "User-agent: *\nDisallow: /\n")
        async with s.get(partner.url("a.partner.test", "/robots.txt")) as r:
            assert "Disallow" in await r.text()
        async with s.get(partner.url("a.partner.test", "/redirect/2")) as r:
            assert await r.text() == "done"
    assert [h.path for h in partner.hits("a.partner.test")][:2] == ["/status/503", "/custom"]
    assert len(partner.hits("b.partner.test")) == 2
    await partner.wait_hits("a.partner.test", 3, within=1)


def test_max_in_window() -> None:
    assert max_in_window([0.0, 0.5, 0.99, 1.0, 1.2]) == 4
    assert max_in_window([0.0, 1.0, 2.0]) == 1
    assert max_in_window([]) == 0
