"""``turbocubes refresh URL [--image | --purge] [--tenant ID]``: one URL again now (docs/architecture.md s.1, 10).

The same service as the API's ``POST /api/v1/pages/refresh`` and ``/api/v1/images/...``
(``shared/webmaster/refresh.py``): a page is fetched again by what made it (its feed, or the page
for the autoparser), an image is fetched again, a purge drops the copy when the source no
longer gives a good image; every fetch goes through the host's polite crawler lane. Without
``--tenant`` it asks as the operator, for an origin some tenant holds a right on. Exit
codes: 0 queued, 1 refused (the reason on stderr).

The command's work; ``commands.py`` declares its arguments and imports this module only when it runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

from shared.config import load_settings
from shared.webmaster.access import AccessRefused
from shared.webmaster.refresh import Refresher, RefreshRefused

__all__ = ["refresh", "run"]


async def refresh(
    refresher: Refresher,
    url: str,
    *,
    image: bool = False,
    purge: bool = False,
    tenant_id: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """0 when the refresh was queued, 1 when it was refused."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        if image or purge:
            done = await refresher.image(url, tenant_id=tenant_id, purge=purge)
        else:
            done = await refresher.page(url, tenant_id=tenant_id)
    except (AccessRefused, RefreshRefused) as exc:
        print(f"turbocubes refresh: {exc.code}: {exc.message}", file=err)
        return 1
    what = {"feed": "its feeds fetched now: " + ", ".join(done.feeds), "page": "the page fetched again"}
    said = what.get(
        done.action.value, "the image fetched again" + (", its copy dropped if it is gone" if purge else "")
    )
    print(f"refresh {done.refresh_id} of {done.url}: {said}, through the host's lane", file=out)
    return 0


def run(args: argparse.Namespace) -> int:
    """``turbocubes refresh ...`` with its parsed arguments."""
    from shared.runtime import open_deps

    settings = load_settings(args.config)

    async def go() -> int:
        deps = await open_deps(settings)
        try:
            refresher = Refresher(await deps.stores(), deps.publish, deps.clock)
            return await refresh(refresher, args.url, image=args.image, purge=args.purge, tenant_id=args.tenant)
        finally:
            await deps.close()

    return asyncio.run(go())
