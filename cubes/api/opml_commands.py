"""``turbocubes feeds export|import``: a tenant's feeds as OPML, and an OPML file registered for it.

The API's formats and rules (``shared/webmaster/opml.py``, ``shared/webmaster/opml_import.py``): the import registers
each outline as ``turbocubes feeds add`` would, for the tenant named (its verified hosts only), and
prints each line's result; the same file again changes nothing. Exit status 1 when a line was
refused or the file cannot be read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TextIO

from shared.config import load_settings
from shared.stores import Stores, open_configured
from shared.webmaster.feeds import FeedRegistry
from shared.webmaster.opml import OpmlRefused, write_opml
from shared.webmaster.opml_import import import_opml

__all__ = ["feeds_export", "feeds_import", "run"]


async def feeds_export(stores: Stores, tenant_id: str, out: TextIO) -> int:
    tenant = await stores.tenants.get_tenant(tenant_id)
    if tenant is None:
        print(f"turbocubes feeds export: no such tenant {tenant_id!r}", file=sys.stderr)
        return 1
    feeds = [f for f in await stores.feeds.list(tenant_id) if not f.deleted]
    out.write(write_opml(feeds, title=f"turbocubes feeds of {tenant.name}").decode())
    return 0


async def feeds_import(
    registry: FeedRegistry, stores: Stores, tenant_id: str, body: bytes, *, out: TextIO, err: TextIO
) -> int:
    try:
        report = await import_opml(registry, stores.tenants, tenant_id, body)
    except OpmlRefused as exc:
        print(f"turbocubes feeds import: {exc}", file=err)
        return 1
    for r in report.lines:
        print(f"{r.place}: {r.result} {r.url}{': ' + r.message if r.message else ''}", file=out)
    counts = ", ".join(f"{n} {result}" for result, n in report.counts().items()) or "no feed in the file"
    print(counts + (f"; {report.more} more outlines not read" if report.more else ""), file=out)
    return 1 if report.counts().get("refused") or report.more else 0


def run(args: argparse.Namespace) -> int:
    from shared.runtime import open_deps

    settings = load_settings(args.config)
    if args.feeds_command == "export":

        async def export() -> int:
            async with await open_configured(settings.store) as stores:
                return await feeds_export(stores, args.tenant, sys.stdout)

        return asyncio.run(export())
    body = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()

    async def imported() -> int:
        deps = await open_deps(settings)
        try:
            stores = await deps.stores()
            registry = FeedRegistry.from_settings(settings, stores.feeds, deps.publish, resolver=deps.resolver)
            return await feeds_import(registry, stores, args.tenant, body, out=sys.stdout, err=sys.stderr)
        finally:
            await deps.close()

    return asyncio.run(imported())
