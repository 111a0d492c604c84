"""``turbocubes hosts add|verify|revoke|list`` on the embedded store, against a real partner server."""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import sqlite3
from pathlib import Path

from cubes.api.host_commands import hosts_add, hosts_list, hosts_revoke, hosts_verify
from shared.config import Settings
from shared.stores import open_stores
from shared.webmaster.verification import WELL_KNOWN_PATH
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer


def _settings(tmp_path: Path) -> Settings:
    return Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})


def _field(text: str, name: str) -> str:
    match = re.search(rf"^{name}:\s+(\S+)", text, re.MULTILINE)
    assert match, text
    return match.group(1)


async def test_add_prints_the_token_once_and_stores_only_its_hash(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    out = io.StringIO()
    assert await hosts_add(settings, "Example.COM.", out=out) == 0
    text = out.getvalue()
    token, tenant_id = _field(text, "API token"), _field(text, "tenant")
    assert "example.com (not verified yet)" in text
    assert WELL_KNOWN_PATH in text
    assert 'name="turbocubes-verification"' in text

    async with await open_stores(settings.store.url) as stores:
        assert await stores.tenants.tenant_for_token(token) == tenant_id
        (claim,) = await stores.tenants.hosts_of(tenant_id)
        assert claim.host == "example.com"
        assert claim.verification_token in text
    # the plaintext is nowhere in the database, its sha256 is
    with contextlib.closing(sqlite3.connect(tmp_path / "store.db")) as db:
        dump = "\n".join(db.iterdump())
    assert token not in dump
    assert hashlib.sha256(token.encode()).hexdigest() in dump

    again = io.StringIO()
    assert await hosts_add(settings, "second.example", tenant_id=tenant_id, out=again) == 0
    assert "API token:" not in again.getvalue()  # an existing tenant gets no new token unless asked
    listing = io.StringIO()
    assert await hosts_list(settings, tenant_id, out=listing) == 0
    assert "example.com" in listing.getvalue()
    assert "second.example" in listing.getvalue()
    assert await hosts_list(settings, "nobody", out=io.StringIO()) == 1

    revoked = io.StringIO()
    assert await hosts_revoke(settings, token, out=revoked) == 0
    assert await hosts_revoke(settings, token, out=io.StringIO()) == 1
    async with await open_stores(settings.store.url) as stores:
        assert await stores.tenants.tenant_for_token(token) is None


async def test_verify_from_the_cli(tmp_path: Path, partner: PartnerServer, partner_resolver: PartnerResolver) -> None:
    settings = _settings(tmp_path)
    out = io.StringIO()
    await hosts_add(settings, "cli.partner.test", out=out)
    tenant_id = _field(out.getvalue(), "tenant")
    secret = _field(out.getvalue(), "verification token")
    origin = f"http://cli.partner.test:{partner.port}"

    assert (
        await hosts_verify(
            settings,
            "cli.partner.test",
            tenant_id,
            allow=["127.0.0.1/32"],
            origin=origin,
            resolver=partner_resolver,
            out=io.StringIO(),
        )
        == 1
    )
    partner.set("cli.partner.test", WELL_KNOWN_PATH, secret)
    # without the allowlist the guard refuses loopback
    assert (
        await hosts_verify(
            settings, "cli.partner.test", tenant_id, origin=origin, resolver=partner_resolver, out=io.StringIO()
        )
        == 1
    )
    done = io.StringIO()
    assert (
        await hosts_verify(
            settings,
            "cli.partner.test",
            tenant_id,
            allow=["127.0.0.1/32"],
            origin=origin,
            resolver=partner_resolver,
            out=done,
        )
        == 0
    )
    assert f"verified (file) on {origin}" in done.getvalue()
    async with await open_stores(settings.store.url) as stores:
        (right,) = await stores.tenants.holders("cli.partner.test")
        assert (right.tenant_id, right.origin, right.method) == (tenant_id, origin, "file")


async def test_turbo_off_and_on_from_the_cli(tmp_path: Path) -> None:
    from cubes.api.host_commands import hosts_list, hosts_turbo
    from shared.stores import Feed

    class Orders:
        """The registry's one call the command makes (ordering fetches goes through the bus)."""

        def __init__(self) -> None:
            self.fetched: list[str] = []

        async def fetch_now(self, feed_id: str, *, fetch_id: str | None = None) -> None:
            self.fetched.append(feed_id)

    async with await open_stores(f"sqlite:///{tmp_path}/store.db") as stores:
        await stores.tenants.create_tenant("T", tenant_id="t1")
        await stores.tenants.add_host("t1", "shop.example")
        await stores.feeds.upsert_feed(
            Feed(feed_id="f1", url="https://shop.example/yml", host="shop.example", format="yml", tenant_id="t1")
        )
        orders, out = Orders(), io.StringIO()
        assert await hosts_turbo(stores, orders, "shop.example", "t1", enabled=False, out=out) == 1  # type: ignore[arg-type]
        await stores.tenants.set_verified("t1", "shop.example")
        assert await hosts_turbo(stores, orders, "Shop.Example", "t1", enabled=False, out=out) == 0  # type: ignore[arg-type]
        assert not await stores.tenants.turbo_enabled("shop.example")
        assert orders.fetched == ["f1"]
        assert "Turbo pages of shop.example switched off" in out.getvalue()
        listed = io.StringIO()
        assert await hosts_list(_settings(tmp_path), "t1", out=listed) == 0
        assert "Turbo pages off" in listed.getvalue()  # the list said nothing of it
        assert await hosts_turbo(stores, orders, "shop.example", "t1", enabled=True, out=out) == 0  # type: ignore[arg-type]
        assert await stores.tenants.turbo_enabled("shop.example")
