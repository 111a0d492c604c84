"""Pytest fixtures for the partner server, registered for every test by ``tests/conftest.py``.

* ``partner`` — a started ``PartnerServer`` on 127.0.0.1:<random port>.
* ``partner_resolver`` — an aiohttp resolver mapping ``*.partner.test`` to 127.0.0.1
  (any other name fails like a DNS miss: tests never use real DNS).
* ``partner_settings`` — ``Settings()`` whose SSRF allowlist lets 127.0.0.1 through.
* ``dns_server`` — a started ``DnsServer`` (``dns.py``) on 127.0.0.1: TXT records the test sets.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator, Mapping

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from shared.config import Settings
from tests.partners.dns import DnsServer
from tests.partners.server import PartnerServer

__all__ = ["PartnerResolver", "dns_server", "partner", "partner_resolver", "partner_settings"]

PARTNER_SUFFIX = ".partner.test"


class PartnerResolver(AbstractResolver):
    """``*.partner.test`` -> 127.0.0.1, plus any ``extra`` names; everything else is a DNS miss.

    ``calls`` counts resolutions per name (tests of the SSRF guard's pinning use it).
    """

    def __init__(self, extra: Mapping[str, str] | None = None) -> None:
        self.extra = dict(extra or {})
        self.calls: dict[str, int] = {}

    def address_of(self, host: str) -> str | None:
        host = host.lower().rstrip(".")
        if host in self.extra:
            return self.extra[host]
        if host.endswith(PARTNER_SUFFIX):
            return "127.0.0.1"
        return None

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.calls[host] = self.calls.get(host, 0) + 1
        address = self.address_of(host)
        if address is None:
            raise OSError(socket.EAI_NONAME, f"partner resolver: unknown host {host}")
        fam = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [ResolveResult(hostname=host, host=address, port=port, family=fam, proto=0, flags=socket.AI_NUMERICHOST)]

    async def close(self) -> None:
        return None


@pytest.fixture
def dns_server() -> Iterator[DnsServer]:
    server = DnsServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def partner() -> AsyncIterator[PartnerServer]:
    server = PartnerServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def partner_resolver() -> PartnerResolver:
    return PartnerResolver()


@pytest.fixture
def partner_settings() -> Settings:
    return Settings().replace(http={"allowlist": ["127.0.0.1/32"]})
