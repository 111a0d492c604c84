"""Fair shares of the bulkhead: one tenant's burst never starves the others.

Before: a busy tenant filled the global bulkhead and every other tenant got 503. Now each tenant
holds at most ``floor(api.concurrency * api.tenant_concurrency_share)`` slots; its excess is its
own ``429 concurrency_limited``, and the others keep their room.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from shared.config import load_settings
from shared.errors import ConfigError
from shared.webmaster.verification import WELL_KNOWN_PATH
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness

HOSTS = ("a.partner.test", "b.partner.test")
BURST = 10


async def test_two_tenants_under_a_burst_each_get_their_share(tmp_path: Path, partner: PartnerServer) -> None:
    release = asyncio.Event()
    entered: Counter[str] = Counter()
    full = {host: asyncio.Event() for host in HOSTS}

    def slow(host: str) -> Any:
        async def handler(request: web.Request) -> web.Response:
            entered[host] += 1
            if entered[host] == 2:
                full[host].set()
            await release.wait()
            return web.Response(text="not the token")

        return handler

    # 8 slots, a quarter each: 2 per tenant, so both bursts together hold half of the bulkhead
    async with ApiHarness(tmp_path, concurrency=8) as api:
        tokens = {}
        for host in HOSTS:
            _, tokens[host] = await api.tenant(host, verified=False, origin=f"http://{host}:{partner.port}")
            partner.set_handler(host, WELL_KNOWN_PATH, slow(host))
            partner.set(host, "/", "<html></html>", headers={"Content-Type": "text/html"})
        _, quiet = await api.tenant("c.partner.test")

        def verify(host: str) -> asyncio.Task[Any]:
            return asyncio.create_task(api.client.post(f"/api/v1/hosts/{host}/verify", headers=api.auth(tokens[host])))

        bursts = {host: [verify(host) for _ in range(BURST)] for host in HOSTS}
        everything = [t for tasks in bursts.values() for t in tasks]
        async with asyncio.timeout(30):
            for event in full.values():
                await event.wait()
            # while the admitted ones are held, every other request of the bursts is answered at once
            pending = set(everything)
            while len(pending) > 2 * len(HOSTS):
                _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            # a third tenant is served in the middle of both bursts
            assert (await api.client.get("/api/v1/hosts", headers=api.auth(quiet))).status == 200
            release.set()
            responses = {host: await asyncio.gather(*tasks) for host, tasks in bursts.items()}

        for host, answers in responses.items():
            assert Counter(r.status for r in answers) == {200: 2, 429: BURST - 2}, host
            refused = [await r.json() for r in answers if r.status == 429]
            assert {body["error"] for body in refused} == {"concurrency_limited"}
            assert all(r.headers["Retry-After"] == "1" and "RateLimit" in r.headers for r in answers if r.status == 429)
        assert entered == dict.fromkeys(HOSTS, 2)  # the refused ones never reached the handler


async def test_the_global_cap_still_holds_when_the_shares_add_up_to_more(
    tmp_path: Path, partner: PartnerServer
) -> None:
    release, held = asyncio.Event(), asyncio.Event()
    inside = 0

    async def slow(request: web.Request) -> web.Response:
        nonlocal inside
        inside += 1
        if inside == 2:
            held.set()
        await release.wait()
        return web.Response(text="not the token")

    # 2 slots, each tenant's share is the whole of it: the second tenant finds the bulkhead full
    async with ApiHarness(tmp_path, concurrency=2, tenant_concurrency_share=1.0) as api:
        _, a = await api.tenant(HOSTS[0], verified=False, origin=f"http://{HOSTS[0]}:{partner.port}")
        _, b = await api.tenant(HOSTS[1], verified=False, origin=f"http://{HOSTS[1]}:{partner.port}")
        partner.set_handler(HOSTS[0], WELL_KNOWN_PATH, slow)
        partner.set(HOSTS[0], "/", "<html></html>", headers={"Content-Type": "text/html"})
        busy = [
            asyncio.create_task(api.client.post(f"/api/v1/hosts/{HOSTS[0]}/verify", headers=api.auth(a)))
            for _ in range(2)
        ]
        async with asyncio.timeout(30):
            await held.wait()
            refused = await api.client.get("/api/v1/hosts", headers=api.auth(b))
            assert refused.status == 503
            assert (await refused.json())["error"] == "overloaded"
            release.set()
            assert [r.status for r in await asyncio.gather(*busy)] == [200, 200]


def test_a_share_outside_zero_to_one_fails_at_start_naming_the_key() -> None:
    for bad in ("0", "1.5"):
        with pytest.raises(ConfigError, match=r"api\.tenant_concurrency_share"):
            load_settings(env={"TURBOCUBES_API_TENANT_CONCURRENCY_SHARE": bad})
    assert load_settings(env={"TURBOCUBES_API_TENANT_CONCURRENCY_SHARE": "0.5"}).api.tenant_concurrency_share == 0.5
