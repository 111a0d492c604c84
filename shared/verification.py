"""Host verification: how a tenant proves it controls a host (docs/architecture.md sections 6 and 10).

The tenant publishes the verification token its claim was given, in one of
three ways, and asks for a check (API, console or ``turbocubes hosts verify``):

1. a DNS TXT record on the host: ``turbocubes-verification=TOKEN``;
2. a file, ``/.well-known/turbocubes-verify.txt``, answering the token
   (surrounding whitespace ignored);
3. ``<meta name="turbocubes-verification" content="TOKEN">`` on the home page.

The file and the meta tag are looked for on the host's *own* scheme and port:
the origin the tenant gave when it claimed the host (``https://shop.example:
8443/``), then the origins of the tenant's feeds on the host, then ``https``
and ``http`` on their default ports (only ports 80 and 443 were once
tried, so a site on another port could never be verified). Every fetch goes
through ``shared.http.Fetcher``: the crawler's SSRF guard (``http.allowlist``
only in tests and the demo), bounded size and time, redirects re-checked.

The TXT record is read through a ``TxtLookup`` (``dns_txt_lookup``: the
system's resolvers, or ``api.dns_servers``; tests point it at a DNS server of
their own on 127.0.0.1). Shared by the API (``cubes/api/hosts.py``) and the
console (``cubes/frontend``): one rule, one place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import dns.asyncresolver
import dns.exception
import dns.resolver
import lxml.html
from lxml import etree

from shared.http import Fetcher
from shared.messages import CrawlKind, FetchStatus
from shared.origins import origin_host, try_origin

__all__ = [
    "DNS_PREFIX",
    "META_NAME",
    "WELL_KNOWN_PATH",
    "Method",
    "TxtLookup",
    "Verification",
    "Verifier",
    "candidate_origins",
    "dns_txt_lookup",
    "instructions",
]

log = logging.getLogger(__name__)

WELL_KNOWN_PATH = "/.well-known/turbocubes-verify.txt"
META_NAME = "turbocubes-verification"
#: a TXT record ``turbocubes-verification=TOKEN`` on the host proves it, as Google's and Yandex's do
DNS_PREFIX = f"{META_NAME}="
#: a token file or a home page bigger than this is not read further: the token is near the top
_MAX_BYTES = 256 * 1024
#: a DNS answer slower than this counts as none (the check is interactive)
_DNS_TIMEOUT_S = 5.0


class Method(StrEnum):
    dns = "dns"
    file = "file"
    meta = "meta"


@dataclass(frozen=True, slots=True)
class Verification:
    verified: bool
    method: Method | None
    #: what was tried and what each attempt found, for the tenant to fix its setup
    attempts: tuple[str, ...]


class TxtLookup(Protocol):
    async def __call__(self, name: str) -> list[str]:
        """The TXT strings of ``name`` (empty when there are none); ``OSError`` when DNS cannot answer."""
        ...


def dns_txt_lookup(servers: Sequence[str] = ()) -> TxtLookup:
    """TXT records through dnspython: ``servers`` (``ip`` or ``ip:port``) or the system's resolvers."""

    async def lookup(name: str) -> list[str]:
        resolver = dns.asyncresolver.Resolver(configure=not servers)
        if servers:
            hosts, ports = zip(*(_server(s) for s in servers), strict=True)
            resolver.nameservers = list(hosts)
            resolver.port = ports[0]
        try:
            answer = await resolver.resolve(name, "TXT", lifetime=_DNS_TIMEOUT_S)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return []
        except (dns.resolver.NoNameservers, dns.exception.Timeout) as exc:
            raise OSError(f"DNS did not answer: {exc}") from None
        return [b"".join(r.strings).decode("utf-8", "replace") for r in answer]

    return lookup


def _server(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":") if text.count(":") == 1 else (text, "", "")
    return (host or text), int(port or 53)


def candidate_origins(host: str, origin: str | None = None, feed_urls: Iterable[str] = ()) -> list[str]:
    """Where to look for the file and the meta tag, in order (see the module docstring)."""
    out: list[str] = []
    for o in (origin, *(try_origin(u) for u in feed_urls), f"https://{host}", f"http://{host}"):
        if o and o not in out and origin_host(o) == host:
            out.append(o)
    return out


def instructions(host: str, token: str, origin: str | None = None) -> dict[str, str]:
    """The three ways to prove ownership, as the API, the console and ``turbocubes hosts add`` show them."""
    base = origin or f"https://{host}"
    return {
        "dns": f"add a TXT record to {host}: {DNS_PREFIX}{token}",
        "file": f"or serve the text {token} at {base}{WELL_KNOWN_PATH}",
        "meta": f'or put <meta name="{META_NAME}" content="{token}"> in the <head> of {base}/',
        "then": f"POST /api/v1/hosts/{host}/verify (or: turbocubes hosts verify {host})",
    }


def _meta_tokens(html: bytes) -> list[str]:
    try:
        doc = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return []
    found: list[str] = []
    for meta in doc.iter("meta"):
        if (meta.get("name") or "").strip().lower() == META_NAME:
            found.append((meta.get("content") or "").strip())
    return found


class Verifier:
    """Checks a host for its token: DNS TXT first (no request to the site), then each origin's file and meta.

    ``origins`` overrides where the file and the meta tag are looked for (host -> base URLs); by
    default ``candidate_origins`` of the claim's origin and the feeds' URLs that ``check`` is given.
    """

    def __init__(
        self,
        fetcher: Fetcher,
        origins: Callable[[str], Sequence[str]] | None = None,
        *,
        txt: TxtLookup | None = None,
    ) -> None:
        self._fetcher = fetcher
        self._origins = origins
        self._txt = txt

    async def _dns(self, host: str, token: str, attempts: list[str]) -> bool:
        if self._txt is None or host.startswith("["):
            return False
        try:
            records = await self._txt(host)
        except OSError as exc:
            attempts.append(f"DNS TXT {host}: {exc}")
            return False
        if f"{DNS_PREFIX}{token}" in (r.strip() for r in records):
            attempts.append(f"DNS TXT {host}: token found")
            return True
        mine = [r for r in records if r.startswith(DNS_PREFIX)]
        attempts.append(
            f"DNS TXT {host}: a {DNS_PREFIX} record, but not with the token"
            if mine
            else f"DNS TXT {host}: no {DNS_PREFIX}TOKEN record"
        )
        return False

    async def check(
        self, host: str, token: str, *, origin: str | None = None, feed_urls: Iterable[str] = ()
    ) -> Verification:
        attempts: list[str] = []
        if await self._dns(host, token, attempts):
            return Verification(True, Method.dns, tuple(attempts))
        origins = self._origins(host) if self._origins is not None else candidate_origins(host, origin, feed_urls)
        for base in origins:
            url = base.rstrip("/") + WELL_KNOWN_PATH
            res = await self._fetcher.fetch(url, kind=CrawlKind.page, max_bytes=_MAX_BYTES)
            if res.status is FetchStatus.ok and res.body is not None:
                if res.body.decode("utf-8", "replace").strip() == token:
                    return Verification(True, Method.file, (*attempts, f"{url}: token found"))
                attempts.append(f"{url}: answered, but not with the token")
            else:
                attempts.append(f"{url}: {res.status.value} {res.error or ''}".strip())
            home = base.rstrip("/") + "/"
            res = await self._fetcher.fetch(home, kind=CrawlKind.page, max_bytes=_MAX_BYTES)
            if res.status is FetchStatus.ok and res.body is not None:
                if token in _meta_tokens(res.body):
                    return Verification(True, Method.meta, (*attempts, f"{home}: meta tag found"))
                attempts.append(f'{home}: no <meta name="{META_NAME}"> with the token')
            else:
                attempts.append(f"{home}: {res.status.value} {res.error or ''}".strip())
        return Verification(False, None, tuple(attempts))

    async def close(self) -> None:
        await self._fetcher.close()
