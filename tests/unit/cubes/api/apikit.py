"""A test kit for the api cube: the real app on 127.0.0.1:0, on the embedded engines.

``ApiHarness`` opens real ``Deps`` (``shared.runtime.open_deps``: SQLite bus,
SQLite stores, file blobs, all under ``tmp_path``) with a ``ManualClock``, so
tests assert exact throttling, and serves ``create_app`` through aiohttp's
``TestServer`` (a real socket on a random port). ``publish`` can be wrapped
to fail, to test what a partner sees when the bus is down. A DNS server of its
own on 127.0.0.1 (``dns``, ``tests/partners/dns.py``) answers the TXT lookups
of host verification, so no test reaches the real DNS.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from cubes.api.app import create_app
from shared import contracts
from shared.bus.base import Record
from shared.clock import ManualClock
from shared.config import Settings
from shared.errors import BusUnavailable
from shared.messages import Message
from shared.runtime import Deps, Output, ensure_topics, open_deps
from tests.partners.dns import DnsServer
from tests.partners.fixtures import PartnerResolver

__all__ = ["ADMIN_TOKEN", "ApiHarness", "api_settings", "rss"]

ADMIN_TOKEN = "admin-secret-for-tests"


def rss(n: int = 1, host: str = "a.partner.test") -> bytes:
    items = "".join(
        f"<item><title>Item {i}</title><link>https://{host}/p/{i}</link><description>Text {i}</description></item>"
        for i in range(n)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()


def api_settings(tmp_path: Path, **api: Any) -> Settings:
    return Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db", "linger_ms": 1},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        http={"allowlist": ["127.0.0.1/32"]},
        api={"admin_token_sha256": hashlib.sha256(ADMIN_TOKEN.encode()).hexdigest(), **api},
    )


class ApiHarness:
    def __init__(
        self,
        tmp_path: Path,
        *,
        settings: Settings | None = None,
        resolver: Any = None,
        **api: Any,
    ) -> None:
        self.settings = settings or api_settings(tmp_path, **api)
        self.clock = ManualClock()
        # *.partner.test -> 127.0.0.1 (allowlisted); every other name fails like a DNS miss
        self.resolver = resolver if resolver is not None else PartnerResolver()
        #: set to an exception to make every publish fail with it
        self.publish_error: Exception | None = None
        self.published: list[Output] = []
        self.deps: Deps
        self.client: TestClient[Any, Any]
        self.dns = DnsServer()

    async def __aenter__(self) -> ApiHarness:
        self.dns.start()
        if not self.settings.api.dns_servers:
            self.settings = self.settings.replace(api={"dns_servers": [self.dns.address]})
        self.deps = await open_deps(self.settings, clock=self.clock, resolver=self.resolver)
        await ensure_topics(self.deps)
        real_publish = self.deps.publish

        async def publish(outputs: Sequence[Output]) -> None:
            if self.publish_error is not None:
                raise self.publish_error
            await real_publish(outputs)
            self.published.extend(outputs)

        self.deps.publish = publish
        app = create_app(self.settings, self.deps)
        self.client = TestClient(TestServer(app, host="127.0.0.1", port=0))
        await self.client.start_server()
        self.stores = await self.deps.stores()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.close()
        await self.deps.close()
        self.dns.stop()

    def fail_publish(self) -> None:
        self.publish_error = BusUnavailable("test: the bus is down")

    async def tenant(
        self, host: str = "a.partner.test", *, verified: bool = True, origin: str | None = None
    ) -> tuple[str, str]:
        """A new tenant owning ``host`` (at ``origin``, ``https://host`` by default): (tenant id, API token)."""
        t = await self.stores.tenants.create_tenant(f"tenant of {host}")
        await self.stores.tenants.add_host(t.tenant_id, host, origin=origin)
        if verified:
            await self.stores.tenants.set_verified(t.tenant_id, host, True)
        return t.tenant_id, await self.stores.tenants.issue_token(t.tenant_id)

    def clock_now(self) -> datetime:
        """The harness clock's wall time, as the stores take it."""
        return self.clock.now()

    @staticmethod
    def auth(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    async def upload(
        self,
        token: str,
        body: bytes,
        *,
        host: str = "a.partner.test",
        fmt: str = "rss",
        content_type: str = "application/rss+xml",
        mode: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        params = {"host": host, "format": fmt}
        if mode:
            params["mode"] = mode
        return await self.client.post(
            "/api/v1/uploads",
            params=params,
            data=body,
            headers={**self.auth(token), "Content-Type": content_type, **(headers or {})},
        )

    async def records(self, topic: str) -> list[Record]:
        """Every record of ``topic`` on the embedded bus (all partitions)."""
        out: list[Record] = []
        ends = await self.deps.bus.end_offsets(topic)
        for partition, end in ends.items():
            if end:
                out.extend(await self.deps.bus.read(topic, partition, 0, end))
        return out

    async def messages(self, topic: str) -> list[Message]:
        return [contracts.decode(topic, r.value) for r in await self.records(topic)]
