"""Host ownership checks (issue 7 "Tenants"; DESIGN.md section 6, "SSRF").

A tenant proves it controls a host by publishing the verification token the
API gave it, in one of two ways:

1. ``/.well-known/turbocubes-verify.txt`` answering the token (surrounding
   whitespace ignored), or
2. ``<meta name="turbocubes-verification" content="TOKEN">`` on the home page.

Both are fetched through ``shared.http.Fetcher``: the crawler's SSRF guard
(``settings.http.allowlist`` only in tests and the demo), bounded size and
time, redirects re-checked. ``https`` is tried before ``http``. Until a host
is verified nothing of it is fetched for the pipeline or published.

``origins`` (host -> base URLs to try) is the seam tests use to point at a
partner server on a random port; production uses the default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import lxml.html
from lxml import etree

from shared.http import Fetcher
from shared.messages import CrawlKind, FetchStatus

__all__ = [
    "META_NAME",
    "WELL_KNOWN_PATH",
    "Method",
    "Verification",
    "Verifier",
    "default_origins",
    "instructions",
]

WELL_KNOWN_PATH = "/.well-known/turbocubes-verify.txt"
META_NAME = "turbocubes-verification"
#: a token file or a home page bigger than this is not read further: the token is near the top
_MAX_BYTES = 256 * 1024


class Method(StrEnum):
    file = "file"
    meta = "meta"


@dataclass(frozen=True, slots=True)
class Verification:
    verified: bool
    method: Method | None
    #: what was tried and what each attempt found, for the tenant to fix its setup
    attempts: tuple[str, ...]


def default_origins(host: str) -> list[str]:
    return [f"https://{host}", f"http://{host}"]


def instructions(host: str, token: str) -> dict[str, str]:
    """The two ways to prove ownership, as shown by ``turbocubes hosts add`` and ``GET /api/v1/hosts``."""
    return {
        "file": f"serve the text {token} at https://{host}{WELL_KNOWN_PATH}",
        "meta": f'or put <meta name="{META_NAME}" content="{token}"> in the <head> of https://{host}/',
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
    """Checks a host for its token through the guarded fetcher."""

    def __init__(self, fetcher: Fetcher, origins: Callable[[str], Sequence[str]] = default_origins) -> None:
        self._fetcher = fetcher
        self._origins = origins

    async def check(self, host: str, token: str) -> Verification:
        attempts: list[str] = []
        for origin in self._origins(host):
            url = origin + WELL_KNOWN_PATH
            res = await self._fetcher.fetch(url, kind=CrawlKind.page, max_bytes=_MAX_BYTES)
            if res.status is FetchStatus.ok and res.body is not None:
                if res.body.decode("utf-8", "replace").strip() == token:
                    return Verification(True, Method.file, (*attempts, f"{url}: token found"))
                attempts.append(f"{url}: answered, but not with the token")
            else:
                attempts.append(f"{url}: {res.status.value} {res.error or ''}".strip())
            home = origin + "/"
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
