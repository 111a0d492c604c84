"""The SSRF table: every way to name an inside address x every door a partner's URL comes through.

(docs/architecture.md section 6 "SSRF".) Production settings -- no allowlist -- except the
partner server's *name* where a row needs a real server to redirect from. Doors:

* ``fetch``     -- the guarded fetcher itself (the crawler's feeds, pages and images, the
  autoparser's ``extract URL``);
* ``redirect``  -- an allowed partner answering 302 to the address;
* ``register``  -- ``POST /api/v1/feeds`` (the tenant holds a verified claim on the host, so only
  the guard stands in the way): 422 naming the URL;
* ``verify``    -- ``POST /api/v1/hosts/{host}/verify``: every fetch of the file and the meta tag refused.

Loopback rows carry the partner server's port, so a guard that let one through would show as a
hit on the server: every row also asserts the server saw nothing.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp.abc import ResolveResult
from aiohttp.resolver import ThreadedResolver

from shared.config import Settings
from shared.http import Fetcher
from shared.messages import FetchStatus
from shared.origins import origin_of
from shared.urls import host_of
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness, api_settings
from tests.unit.security.conftest import Matrix

PARTNER = "a.partner.test"


class TableResolver(PartnerResolver):
    """Names of the table to inside addresses; numeric and system names (``0x7f000001``,
    ``localhost``) through the system resolver, as production resolves them."""

    def __init__(self) -> None:
        super().__init__(
            {
                "internal.partner.test": "10.1.2.3",
                "metadata.partner.test": "169.254.169.254",
                "loop6.partner.test": "::1",
                "mapped.partner.test": "::ffff:127.0.0.1",
            }
        )
        self._system = ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if self.address_of(host) is not None:
            return await super().resolve(host, port, family)
        return await self._system.resolve(host, port, family)

    async def close(self) -> None:
        await self._system.close()


def vectors(port: int) -> dict[str, str]:
    """name -> URL. Every one must be refused, whatever the door."""
    return {
        "loopback": f"http://127.0.0.1:{port}/",
        "loopback 127.2.3.4": f"http://127.2.3.4:{port}/",
        "loopback hex name": f"http://0x7f000001:{port}/",
        "localhost": f"http://localhost:{port}/",
        "loopback v6": f"http://[::1]:{port}/",
        "v4-mapped v6": f"http://[::ffff:127.0.0.1]:{port}/",
        "v4-mapped v6, hex": f"http://[::ffff:7f00:1]:{port}/",
        "private 10/8": "http://10.0.0.1/",
        "private 172.16/12": "http://172.16.0.1/",
        "private 192.168/16": "http://192.168.0.1/",
        "cloud metadata": "http://169.254.169.254/latest/meta-data/",
        "CGNAT": "http://100.64.0.1/",
        "unspecified": "http://0.0.0.0/",
        "multicast": "http://224.0.0.1/",
        "reserved": "http://240.0.0.1/",
        "link-local v6": "http://[fe80::1]/",
        "unique-local v6": "http://[fc00::1]/",
        "NAT64 of 10.0.0.1": "http://[64:ff9b::a00:1]/",
        "6to4 of 127.0.0.1": "http://[2002:7f00:1::]/",
        "name -> private": "http://internal.partner.test/",
        "name -> metadata": "http://metadata.partner.test/latest/meta-data/",
        "name -> ::1": f"http://loop6.partner.test:{port}/",
        "name -> v4-mapped loopback": f"http://mapped.partner.test:{port}/",
        "file scheme": "file:///etc/passwd",
        "gopher scheme": "gopher://127.0.0.1:70/_x",
        "ftp scheme": "ftp://10.0.0.1/",
        "credentials": f"http://user:secret@{PARTNER}:{port}/",
    }


REFUSED = {FetchStatus.blocked_address, FetchStatus.bad_url}


def _nothing_reached(partner: PartnerServer) -> bool:
    return all(not partner.hits(h) for h in ("127.0.0.1", "127.2.3.4", "0x7f000001", "localhost", PARTNER))


@pytest.fixture
async def resolver() -> TableResolver:
    return TableResolver()


async def test_ssrf_table_fetch_and_redirect(
    partner: PartnerServer, resolver: TableResolver, matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("ssrf")
    wrong = []
    direct = Fetcher(Settings().replace(http={"allowlist": []}), resolver=resolver)
    # only the partner's name is allowed: the door a redirect must not open
    relay = Fetcher(Settings().replace(http={"allowlist": [PARTNER]}), resolver=resolver)
    try:
        for name, url in vectors(partner.port).items():
            got = await direct.fetch(url)
            ok = got.status in REFUSED and bool(got.error)
            report.case(f"fetch {name}: {got.status.value}", ok, kind="fetch")
            if not ok:
                wrong.append(f"fetch {name} ({url}): {got.status.value} {got.error}")
            if url.startswith("http://user:"):
                continue  # a redirect to credentials is the same refusal as a fetch of them
            hop = await relay.fetch(partner.url(PARTNER, f"/redirect-to?url={url}"))
            ok = hop.status in REFUSED
            report.case(f"redirect to {name}: {hop.status.value}", ok, kind="redirect")
            if not ok:
                wrong.append(f"redirect to {name} ({url}): {hop.status.value} {hop.error}")
        ok = (await relay.fetch(partner.url(PARTNER, "/ok"))).status is FetchStatus.ok
        report.case("the allowed partner itself is fetched", ok, kind="control")
        assert ok, "the relay must reach the allowed partner, or the redirect rows prove nothing"
    finally:
        await direct.close()
        await relay.close()
        await resolver.close()
    assert wrong == []
    # nothing but the relay's own /redirect-to and /ok ever reached the server
    assert {h.path.split("?", 1)[0] for h in partner.hits(PARTNER)} <= {"/redirect-to", "/ok"}
    assert all(not partner.hits(h) for h in ("127.0.0.1", "127.2.3.4", "0x7f000001", "localhost"))


async def test_ssrf_table_registration_and_verification(
    tmp_path: Path, partner: PartnerServer, resolver: TableResolver, matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("ssrf")
    settings = api_settings(tmp_path, tenant_rps=10_000.0, tenant_burst=10_000).replace(http={"allowlist": []})
    wrong = []
    async with ApiHarness(tmp_path, settings=settings, resolver=resolver) as api:
        tenant, token = await api.tenant(PARTNER)
        for name, url in vectors(partner.port).items():
            host: str | None
            try:
                host, origin = host_of(url), origin_of(url)
            except ValueError:
                host = origin = None
            if host is not None:  # the tenant holds a right on the URL's origin: only the guard stands in the way
                await api.stores.tenants.add_host(tenant, host, origin=origin)
                await api.stores.tenants.set_verified(tenant, host)
            resp = await api.client.post("/api/v1/feeds", json={"url": url, "format": "rss"}, headers=api.auth(token))
            body = await resp.json()
            ok = resp.status == 422 and [f["field"] for f in body.get("fields", [])] == ["url"]
            report.case(f"register {name}: {resp.status}", ok, kind="register")
            if not ok:
                wrong.append(f"register {name} ({url}): {resp.status} {body}")
            if host is None or not url.startswith("http://") or "@" in url:
                continue
            resp = await api.client.post(f"/api/v1/hosts/{host}/verify", headers=api.auth(token))
            got = await resp.json()
            # the fetches (the file, the meta tag); a DNS TXT lookup is not a request to the address
            fetches = [a for a in got.get("attempts", []) if a.startswith(("http://", "https://"))]
            ok = resp.status == 200 and got["verified"] is False and bool(fetches)
            ok = ok and all("blocked_address" in a or "bad_url" in a for a in fetches)
            report.case(f"verify {name}: {resp.status}", ok, kind="verify")
            if not ok:
                wrong.append(f"verify {name} ({host}): {resp.status} {got}")
        assert await api.messages("feeds.registry") == []  # nothing was registered
    await resolver.close()
    assert wrong == []
    assert _nothing_reached(partner)
