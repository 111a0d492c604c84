"""The api cube declares its outputs and serves the app on ``settings.api.host:port`` as a Service."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import aiohttp

from cubes.api.cube import build
from shared.runtime import open_deps
from shared.runtime.cube import TimerContext
from shared.webmaster.verification import WELL_KNOWN_PATH
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import api_settings


async def test_the_cube_serves_the_api_on_its_port(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, port=0)
    deps = await open_deps(settings)
    try:
        cube = await build(settings, deps)
        assert cube.name == "api"
        assert cube.inputs == ()
        assert set(cube.outputs) == {"feeds.registry", "partner.uploads", "documents.deleted", "hosts.branding"}
        (service,) = cube.services
        await service.start()
        try:
            assert cube.status is not None
            url = cube.status()["url"]
            assert url.startswith("http://127.0.0.1:")
            assert not url.endswith(":0")
            async with aiohttp.ClientSession() as session:
                async with session.get(url + "/api/v1/openapi.json") as resp:
                    assert resp.status == 200
                    assert (await resp.json())["openapi"] == "3.1.0"
                async with session.get(url + "/api/v1/feeds") as resp:
                    assert resp.status == 401
        finally:
            await service.stop()
    finally:
        await deps.close()


async def test_the_cubes_timer_rechecks_every_right_that_is_due(tmp_path: Path, partner: PartnerServer) -> None:
    """Rights are re-checked on a schedule: the api cube's timer looks for each due right's proof again,
    on the right's own origin, and a proof that went missing starts the lapse its holder is told of."""
    settings = api_settings(tmp_path, port=0, proof_sweep_s=60.0)
    deps = await open_deps(settings, resolver=PartnerResolver())
    try:
        stores = await deps.stores()
        t = await stores.tenants.create_tenant("A")
        origin = f"http://r.partner.test:{partner.port}"
        claim = await stores.tenants.add_host(t.tenant_id, "r.partner.test", origin=origin)
        await stores.tenants.set_verified(t.tenant_id, "r.partner.test", method="file")
        partner.set("r.partner.test", WELL_KNOWN_PATH, claim.verification_token)
        cube = await build(settings, deps)
        timer, notify = cube.timers
        assert (timer.name, timer.interval_s) == ("proof-recheck", 60.0)
        assert (notify.name, notify.interval_s) == ("notify", settings.notify.sweep_s)
        assert await timer.fn(TimerContext(timer="proof-recheck")) == []
        assert partner.hits("r.partner.test", WELL_KNOWN_PATH) == []  # checked just now: not due yet
        await stores.tenants.checked(t.tenant_id, "r.partner.test", found=True, now=datetime(2020, 1, 1, tzinfo=UTC))
        partner.set("r.partner.test", WELL_KNOWN_PATH, "", status=404)
        partner.set("r.partner.test", "/", "<html><head></head></html>", headers={"Content-Type": "text/html"})
        await timer.fn(TimerContext(timer="proof-recheck"))
        assert len(partner.hits("r.partner.test", WELL_KNOWN_PATH)) == 1
        (now,) = await stores.tenants.hosts_of(t.tenant_id)
        assert now.verified
        assert now.lapsing_since is not None
        (notice,) = await stores.notices.notices(t.tenant_id)
        assert notice.event.change.value == "lapsing"
        assert origin in notice.message
        await cube.services[0].stop()
    finally:
        await deps.close()
