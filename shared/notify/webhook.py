"""Signed webhooks out, behind the SSRF guard (docs/architecture.md section 10, "Notifications").

A tenant's webhook URL is partner-controlled: it is checked as a fetch's is (``shared/http/guard.py``:
the literal address before the request, every resolved address inside the resolver the socket
connects with), never follows a redirect (a redirect could point inside), is given a short timeout
and reads at most a few KB of the answer. Any 2xx is delivered; anything else is an attempt that
failed, said in words for the delivery log.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
from aiohttp.abc import AbstractResolver

from shared.config import Settings
from shared.errors import BlockedAddressError
from shared.http.guard import AddressGuard, GuardedResolver
from shared.notify.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign

__all__ = ["EVENT_HEADER", "WebhookResult", "WebhookSender"]

EVENT_HEADER = "X-Turbocubes-Event"
DELIVERY_HEADER = "X-Turbocubes-Delivery"
#: a receiver gets this long to answer (it should queue the event and answer at once)
_TIMEOUT_S = 10.0
#: of an answer, this much is read (its first words go into the delivery log)
_READ_MAX = 4096


@dataclass(frozen=True, slots=True)
class WebhookResult:
    ok: bool
    http_status: int | None = None
    error: str | None = None


class WebhookSender:
    """One guarded client session for every tenant's webhooks. ``await close()`` when done."""

    def __init__(self, settings: Settings, *, resolver: AbstractResolver | None = None) -> None:
        self._settings = settings
        self._guard = AddressGuard(settings.http.allowlist)
        self._resolver = resolver
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(resolver=GuardedResolver(self._guard, self._resolver)),
                timeout=aiohttp.ClientTimeout(total=_TIMEOUT_S),
                headers={"User-Agent": self._settings.http.user_agent},
                trust_env=False,  # a proxy from the environment would bypass the guard
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._session

    async def send(
        self, url: str, secret: str, payload: dict[str, Any], *, delivery_id: str, now: float | None = None
    ) -> WebhookResult:
        body = orjson.dumps(payload)
        ts = int(time.time() if now is None else now)
        headers = {
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: str(ts),
            SIGNATURE_HEADER: sign(secret, ts, body),
            EVENT_HEADER: str(payload.get("kind", "")),
            DELIVERY_HEADER: delivery_id,
        }
        try:
            checked = self._guard.check_url(url)
            async with self._client().post(checked, data=body, headers=headers, allow_redirects=False) as resp:
                answer = await resp.content.read(_READ_MAX)
                if 200 <= resp.status < 300:
                    return WebhookResult(True, resp.status)
                said = answer[:200].decode("utf-8", "replace").strip()
                return WebhookResult(False, resp.status, f"answered HTTP {resp.status}" + (f": {said}" if said else ""))
        except BlockedAddressError as exc:
            return WebhookResult(False, None, f"refused by the SSRF guard: {exc}")
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            return WebhookResult(False, None, f"unreachable: {type(exc).__name__}: {exc}")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
