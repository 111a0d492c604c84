"""Throttling through the app: bursts, Retry-After, live limit changes, load shedding (ManualClock)."""

from __future__ import annotations

from pathlib import Path

from cubes.api.context import CTX, ApiContext
from cubes.api.limits import REFRESH_S, Limits
from cubes.api.shedding import RETRY_AFTER_S
from shared.bus.base import TopicPartition
from shared.clock import ManualClock
from shared.config import ApiConfig
from shared.stores import TenantLimits
from tests.unit.cubes.api.apikit import ADMIN_TOKEN, ApiHarness, rss


def _ctx(api: ApiHarness) -> ApiContext:
    ctx = api.client.app[CTX].ctx
    assert isinstance(ctx, ApiContext)
    return ctx


async def test_a_burst_of_n_accepts_exactly_the_burst_then_429_until_the_bucket_refills(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant()
        await api.stores.tenants.set_limits(tenant_id, TenantLimits(rps=2.0, burst=5, bytes_per_s=1e6))
        statuses, refusals = [], []
        for _ in range(12):
            resp = await api.client.get("/api/v1/feeds", headers=api.auth(token))
            statuses.append(resp.status)
            if resp.status == 429:
                refusals.append(resp)
        assert statuses == [200] * 5 + [429] * 7
        for resp in refusals:
            assert resp.headers["Retry-After"] == "1"  # 1 token at 2/s = 0.5 s, rounded up
            assert resp.headers["RateLimit-Policy"] == '"default";q=5;w=3'
            assert resp.headers["RateLimit"] == '"default";r=0;t=3'
            body = await resp.json()
            assert body["error"] == "rate_limited"
            assert body["retry_after"] == 1

        api.clock.advance(int(refusals[-1].headers["Retry-After"]))  # 1 s at 2/s = 2 tokens
        again = [(await api.client.get("/api/v1/feeds", headers=api.auth(token))).status for _ in range(3)]
        assert again == [200, 200, 429]


async def test_tenants_are_throttled_separately(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, tenant_rps=1.0, tenant_burst=1) as api:
        _, token_a = await api.tenant("a.partner.test")
        _, token_b = await api.tenant("b.partner.test")
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token_a))).status == 200
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token_a))).status == 429
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token_b))).status == 200


async def test_bytes_per_second_refuse_an_upload_before_it_is_read(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant()
        await api.stores.tenants.set_limits(tenant_id, TenantLimits(rps=100.0, burst=100, bytes_per_s=1000.0))
        body = b"<rss>" + b" " * 795  # 800 bytes
        assert (await api.upload(token, body)).status == 202
        refused = await api.upload(token, body)
        assert refused.status == 429
        assert refused.headers["Retry-After"] == "1"  # 600 missing bytes at 1000/s = 0.6 s
        assert len(await api.messages("partner.uploads")) == 1  # never reached the handler
        api.clock.advance(int(refused.headers["Retry-After"]))  # obeying Retry-After succeeds
        assert (await api.upload(token, body)).status == 202


async def test_a_runtime_limit_change_applies_to_the_next_request(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, tenant_rps=10.0, tenant_burst=20) as api:
        tenant_id, token = await api.tenant()
        admin = api.auth(ADMIN_TOKEN)
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token))).status == 200

        put = await api.client.put(
            f"/api/v1/admin/limits/{tenant_id}", json={"rps": 1, "burst": 2, "bytes_per_s": 5000}, headers=admin
        )
        assert put.status == 200
        assert await put.json() == {
            "tenant_id": tenant_id,
            "rps": 1.0,
            "burst": 2,
            "bytes_per_s": 5000.0,
            "custom": True,
        }
        # 19 tokens left under the old limits; the new burst clips them to 2 at once
        got = [(await api.client.get("/api/v1/feeds", headers=api.auth(token))).status for _ in range(3)]
        assert got == [200, 200, 429]
        assert await api.stores.tenants.get_limits(tenant_id) == TenantLimits(1.0, 2, 5000.0)

        await api.client.put(
            f"/api/v1/admin/limits/{tenant_id}",
            json={"rps": 1000, "burst": 1000, "bytes_per_s": 5000},
            headers=admin,
        )
        api.clock.advance(0.01)  # 10 tokens at the new rate (0.01 under the old one)
        got = [(await api.client.get("/api/v1/feeds", headers=api.auth(token))).status for _ in range(11)]
        assert got == [200] * 10 + [429]

        reset = await api.client.delete(f"/api/v1/admin/limits/{tenant_id}", headers=admin)
        assert (await reset.json())["custom"] is False
        assert (await reset.json())["burst"] == 20


async def test_a_change_made_elsewhere_is_picked_up_within_the_refresh_time(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, tenant_rps=100.0, tenant_burst=100) as api:
        tenant_id, token = await api.tenant()
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token))).status == 200
        # another API instance stored new limits
        await api.stores.tenants.set_limits(tenant_id, TenantLimits(rps=0.001, burst=1, bytes_per_s=1.0))
        api.clock.advance(REFRESH_S)
        statuses = [(await api.client.get("/api/v1/feeds", headers=api.auth(token))).status for _ in range(2)]
        assert statuses == [200, 429]


async def test_bad_limits_are_422(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, _ = await api.tenant()
        resp = await api.client.put(
            f"/api/v1/admin/limits/{tenant_id}",
            json={"rps": 0, "burst": 1.5, "colour": "red"},
            headers=api.auth(ADMIN_TOKEN),
        )
        assert resp.status == 422
        assert {f["field"] for f in (await resp.json())["fields"]} == {"rps", "burst", "bytes_per_s", "colour"}


async def test_uploads_are_shed_with_503_while_the_parser_lags(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, shed_lag=2) as api:
        _, token = await api.tenant()
        for _ in range(3):
            assert (await api.upload(token, rss(1))).status == 202
        shedder = _ctx(api).shedder
        reading = await shedder.refresh()
        assert reading.shed
        assert reading.lag == 3
        shed = await api.upload(token, rss(1))
        assert shed.status == 503
        assert shed.headers["Retry-After"] == str(RETRY_AFTER_S)
        assert "3 records behind" in (await shed.json())["message"]
        # reads still work while uploads are shed
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token))).status == 200

        # the parser catches up: commits the end of every partition
        consumer = await api.deps.bus.consumer("parser", ["partner.uploads"])
        ends = await api.deps.bus.end_offsets("partner.uploads")
        await consumer.commit({TopicPartition("partner.uploads", p): e for p, e in ends.items() if e})
        await consumer.stop()
        assert not (await shedder.refresh()).shed
        assert (await api.upload(token, rss(1))).status == 202


async def test_uploads_are_shed_when_the_bus_is_unreachable(tmp_path: Path) -> None:
    class DeadBus:
        async def end_offsets(self, topic: str) -> dict[int, int]:
            raise ConnectionError("broker down")

    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        shedder = _ctx(api).shedder
        shedder._bus = DeadBus()
        assert (await shedder.refresh()).reason == "bus_unreachable"
        resp = await api.upload(token, rss(1))
        assert resp.status == 503
        assert "unreachable" in (await resp.json())["message"]
        assert await api.stores.tasks.find_by_idempotency_key("x", "y") is None


async def test_limits_split_across_instances() -> None:
    class Store:
        async def get_limits(self, tenant_id: str) -> TenantLimits | None:
            return TenantLimits(rps=40.0, burst=10, bytes_per_s=4000.0) if tenant_id == "t" else None

    config = ApiConfig(instances=4, tenant_rps=8.0, tenant_burst=2, tenant_bytes_per_s=100.0)
    limits = Limits(config, Store(), ManualClock())  # type: ignore[arg-type]
    own = await limits.buckets("t")
    assert (own.requests.rate, own.requests.capacity, own.bytes.rate) == (10.0, 2.0, 1000.0)
    default = await limits.buckets("other")
    # a burst below one would refuse everything: every instance keeps at least one
    assert (default.requests.rate, default.requests.capacity, default.bytes.rate) == (2.0, 1.0, 25.0)
