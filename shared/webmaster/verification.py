"""Host verification: how a tenant proves it controls an origin (docs/architecture.md sections 6 and 10).

The tenant publishes the verification token its claim was given, in one of
three ways, and asks for a check (API, console or ``turbocubes hosts verify``):

1. a DNS TXT record on the host: ``turbocubes-verification=TOKEN`` (not for an IP address,
   which has no records of its own);
2. a file, ``/.well-known/turbocubes-verify.txt``, answering the token
   (surrounding whitespace ignored);
3. ``<meta name="turbocubes-verification" content="TOKEN">`` in the ``<head>`` of the home page.

**The proof is read on the claimed origin, and only there** (``shared.origins``: the claim's
scheme, host and port; ``https://host`` when it named no URL). The right it earns covers that
origin and no other: a file served on another port of the host proves nothing about this one, so
neither the feeds' origins nor the other scheme are tried (they were: a second tenant that could
serve one file on another port of a verified host took the host over).

* **Redirects stay on the origin**: a redirect to another scheme, host or port is not followed
  (``Fetcher.fetch(same_origin=True)``), so the owner of ``www.x``, or of wherever a parked domain
  points, proves nothing about ``x``. ``http://x`` redirecting to ``https://x`` is another origin
  too: claim the https origin, or prove the http one by DNS.
* **The meta tag counts only in the document's real ``<head>``**, as an HTML5 parser builds it
  (``selectolax``'s lexbor, the algorithm browsers run): a direct child of ``head``, never in
  ``body`` (a ``<meta>`` after text in the head *is* in the body), ``noscript``, ``template`` or
  ``svg``, so a site that shows its users' HTML cannot be verified by one of them.
* **The attempts name the URL the token was read from** (after same-origin redirects), not the
  one that was asked for.

Every fetch goes through ``shared.http.Fetcher``: the crawler's SSRF guard (``http.allowlist``
only in tests and the demo), bounded size and time. The TXT record is read through a ``TxtLookup``
(``dns_txt_lookup``: the system's resolvers, or ``api.dns_servers``; tests point it at a DNS server
of their own on 127.0.0.1). ``shared.webmaster.rights`` runs the checks (first and re-checks) and records
what they change; the API, the console, the CLI and the re-check timer all go through it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import dns.asyncresolver
import dns.exception
import dns.resolver
from selectolax.lexbor import LexborHTMLParser

from shared.http import Fetcher, FetchResult
from shared.messages import CrawlKind, FetchStatus
from shared.origins import default_origin
from shared.urls import is_ip_literal

__all__ = [
    "DNS_PREFIX",
    "META_NAME",
    "WELL_KNOWN_PATH",
    "Method",
    "TxtLookup",
    "Verification",
    "Verifier",
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


def instructions(host: str, token: str, origin: str | None = None) -> dict[str, str]:
    """The three ways to prove ownership, as the API, the console and ``turbocubes hosts add`` show them."""
    base = origin or default_origin(host)
    dns = (
        f"{host} is an IP address, which DNS holds no TXT record for: use the file or the meta tag"
        if is_ip_literal(host)
        else f"add a TXT record to {host}: {DNS_PREFIX}{token}"
    )
    return {
        "dns": dns,
        "file": f"or serve the text {token} at {base}{WELL_KNOWN_PATH}",
        "meta": f'or put <meta name="{META_NAME}" content="{token}"> in the <head> of {base}/',
        "then": f"POST /api/v1/hosts/{host}/verify (or: turbocubes hosts verify {host})",
    }


def _meta_tokens(html: bytes) -> list[str]:
    """The contents of the verification meta tags that are children of the document's real ``<head>``."""
    try:
        tree = LexborHTMLParser(html)
    except (TypeError, ValueError, UnicodeDecodeError):
        return []
    head = tree.head
    if head is None:
        return []
    found: list[str] = []
    for node in head.iter():  # the head's own children: not inside noscript, template or anything else
        if node.tag == "meta" and (node.attributes.get("name") or "").strip().lower() == META_NAME:
            found.append((node.attributes.get("content") or "").strip())
    return found


def _read_at(res: FetchResult) -> str:
    return res.final_url or res.url


class Verifier:
    """Checks an origin for a claim's token: DNS TXT first (no request to the site), then its file and meta."""

    def __init__(self, fetcher: Fetcher, *, txt: TxtLookup | None = None) -> None:
        self._fetcher = fetcher
        self._txt = txt

    async def _dns(self, host: str, token: str, attempts: list[str]) -> bool:
        if self._txt is None or is_ip_literal(host):
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

    async def _get(self, url: str, attempts: list[str]) -> FetchResult | None:
        """The body at ``url`` (same-origin redirects only), or None with what went wrong in ``attempts``."""
        res = await self._fetcher.fetch(url, kind=CrawlKind.page, max_bytes=_MAX_BYTES, same_origin=True)
        if res.left_origin is not None:
            attempts.append(
                f"{url}: redirects to {res.left_origin}, another origin: a proof must be served on the "
                "claimed origin itself (not followed)"
            )
            return None
        if res.status is not FetchStatus.ok or res.body is None:
            attempts.append(f"{_read_at(res)}: {res.status.value} {res.error or ''}".strip())
            return None
        return res

    async def check(self, host: str, token: str, *, origin: str) -> Verification:
        """Look for ``token``: DNS TXT on ``host``, then the file and the meta tag on ``origin`` only."""
        attempts: list[str] = []
        if await self._dns(host, token, attempts):
            return Verification(True, Method.dns, tuple(attempts))
        base = origin.rstrip("/")
        res = await self._get(base + WELL_KNOWN_PATH, attempts)
        if res is not None and res.body is not None:
            if res.body.decode("utf-8", "replace").strip() == token:
                return Verification(True, Method.file, (*attempts, f"{_read_at(res)}: token found"))
            attempts.append(f"{_read_at(res)}: answered, but not with the token")
        res = await self._get(base + "/", attempts)
        if res is not None and res.body is not None:
            if token in _meta_tokens(res.body):
                return Verification(True, Method.meta, (*attempts, f"{_read_at(res)}: meta tag found in <head>"))
            attempts.append(f'{_read_at(res)}: no <meta name="{META_NAME}"> with the token in the <head>')
        return Verification(False, None, tuple(attempts))

    async def close(self) -> None:
        await self._fetcher.close()
