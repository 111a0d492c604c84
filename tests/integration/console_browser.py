"""What the console's browser tests share: the frontend alone on a port, signing in, following a click."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from cubes.frontend.app import create_app
from shared.config import Settings
from shared.stores import Stores
from tests.integration.test_browser_frontend import STEP_TIMEOUT, Cdp, _eval, _open

__all__ = ["Console", "follow", "serve_console", "signed_in", "verified_tenant"]


@dataclass
class Console:
    """A console served for a test, and the token of the tenant it signs in as."""

    url: str
    token: str


async def verified_tenant(stores: Stores, name: str, host: str, *, origin: str | None = None) -> tuple[str, str]:
    """A tenant that verified ``host`` (its ``origin``; None: ``https://host``): (its id, its API token)."""
    tenant = await stores.tenants.create_tenant(name)
    await stores.tenants.add_host(tenant.tenant_id, host, origin=origin)
    await stores.tenants.set_verified(tenant.tenant_id, host)
    return tenant.tenant_id, await stores.tenants.issue_token(tenant.tenant_id)


@asynccontextmanager
async def serve_console(settings: Settings, stores: Stores, **app: Any) -> AsyncIterator[str]:
    """The frontend over ``stores`` on 127.0.0.1 (``create_app``'s keywords in ``app``): its base URL."""
    runner = web.AppRunner(create_app(settings, stores, **app), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


async def follow(cdp: Cdp, session: str, js: str) -> None:
    """Run ``js`` (a form's submit, a link's click) and wait for the next page to load."""
    loaded = cdp.expect(lambda e: e.get("sessionId") == session and e["method"] == "Page.loadEventFired")
    await _eval(cdp, session, js)
    await asyncio.wait_for(loaded, STEP_TIMEOUT)


async def signed_in(cdp: Cdp, base: str, token: str) -> str:
    """A desktop-sized page of the console, signed in with ``token``: its session."""
    session = await _open(cdp, f"{base}/console", width=1280, height=900, mobile=False)
    await follow(
        cdp,
        session,
        f"document.querySelector('input[name=token]').value = {token!r};"
        "document.querySelector('form[action=\"/console/login\"]').submit()",
    )
    return session
