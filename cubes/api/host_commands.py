"""``turbocubes hosts add|revoke|verify|list``: the operator's side of tenants.

The commands' work (``turbocubes feeds`` is ``feed_commands.py``); ``commands.py`` declares their
arguments and imports this module only when one runs.

    turbocubes hosts add example.com|URL [--tenant ID | --name NAME] [--new-token]
    turbocubes hosts verify example.com --tenant ID [--allow 127.0.0.1/32] [--origin http://example.com:8000]
    turbocubes hosts revoke TOKEN
    turbocubes hosts list [--tenant ID]
    turbocubes hosts turbo example.com on|off --tenant ID

``add`` creates a tenant (unless ``--tenant`` names one) and claims the host
for it, then prints the API token ONCE (the store keeps only its sha256),
the host's verification token and the three ways to publish it (a URL instead
of a bare host, ``http://shop.example:8080/``, is where the site answers: the
file and the meta tag are looked for there, and the right covers that origin alone).
``verify`` runs the same guarded check as ``POST /api/v1/hosts/{host}/verify``
(``shared.webmaster.rights``: the change of rights is recorded and told).
``revoke`` takes the token's plaintext (the store can find a token by it and
by nothing else). ``turbo`` switches the host's Turbo pages on or off, as
``PUT /api/v1/hosts/{host}/turbo`` does (off: its feeds are fetched now, and
each fetch removes every page of the host). Exit codes: 0 done, 1 refused /
not found / not verified.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from shared.clock import SystemClock
from shared.config import Settings, load_settings
from shared.origins import origin_host, origin_of
from shared.stores import Stores, open_configured
from shared.urls import canonical_host
from shared.webmaster.feeds import FeedRegistry
from shared.webmaster.rights import Rights
from shared.webmaster.turbo_switch import switch
from shared.webmaster.verification import instructions

__all__ = ["hosts_add", "hosts_list", "hosts_revoke", "hosts_turbo", "hosts_verify", "run"]


def run(args: argparse.Namespace) -> int:
    """``turbocubes hosts ...`` with its parsed arguments."""
    a = args
    match a.hosts_command:
        case "add":
            return _run(hosts_add(_settings(a), a.host, tenant_id=a.tenant, name=a.name, new_token=a.new_token))
        case "verify":
            return _run(hosts_verify(_settings(a), a.host, a.tenant, allow=a.allow, origin=a.origin))
        case "revoke":
            return _run(hosts_revoke(_settings(a), a.token))
        case "turbo":
            return _cmd_turbo(a)
        case "list":
            return _run(hosts_list(_settings(a), a.tenant))
    raise ValueError(f"no hosts command {a.hosts_command!r}")


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(args.config)


def _run(coro: Any) -> int:
    return int(asyncio.run(coro))


async def hosts_add(
    settings: Settings,
    host: str,
    *,
    tenant_id: str | None = None,
    name: str | None = None,
    new_token: bool = False,
    out: TextIO | None = None,
) -> int:
    out = out or sys.stdout
    origin = None
    try:
        if "://" in host:
            origin = origin_of(host)
            host = origin_host(origin)
        else:
            host = canonical_host(host.strip())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    async with await open_configured(settings.store) as stores:
        token: str | None = None
        if tenant_id is not None:
            tenant = await stores.tenants.get_tenant(tenant_id)
            if tenant is None:
                print(f"error: no tenant {tenant_id!r}", file=sys.stderr)
                return 1
            if new_token:
                token = await stores.tenants.issue_token(tenant.tenant_id)
        else:
            tenant = await stores.tenants.create_tenant(name or host)
            token = await stores.tenants.issue_token(tenant.tenant_id)
        rights = Rights.from_settings(settings, stores, SystemClock())
        try:
            claim = await rights.claim(tenant.tenant_id, host, origin)
        finally:
            await rights.close()
    print(f"tenant:             {tenant.tenant_id} ({tenant.name})", file=out)
    print(f"host:               {claim.host} ({'verified' if claim.verified else 'not verified yet'})", file=out)
    if token is not None:
        print(f"API token:          {token}", file=out)
        print("                    shown once: only its hash is stored. Use it as", file=out)
        print("                    Authorization: Bearer <token>", file=out)
    print(f"verification token: {claim.verification_token}", file=out)
    if not claim.verified:
        how = instructions(claim.host, claim.verification_token, claim.origin)
        print("prove ownership, one of:", file=out)
        print(f"  1. {how['dns']}", file=out)
        print(f"  2. {how['file'].removeprefix('or ')}", file=out)
        print(f"  3. {how['meta'].removeprefix('or ')}", file=out)
        print(f"then: turbocubes hosts verify {claim.host} --tenant {tenant.tenant_id}", file=out)
        print(f"  or: POST /api/v1/hosts/{claim.host}/verify with the API token", file=out)
    return 0


async def hosts_verify(
    settings: Settings,
    host: str,
    tenant_id: str,
    *,
    allow: Sequence[str] = (),
    origin: str | None = None,
    resolver: Any = None,
    out: TextIO | None = None,
) -> int:
    """The check ``POST /api/v1/hosts/{host}/verify`` runs (``shared.webmaster.rights``); ``origin`` claims that one
    first."""
    out = out or sys.stdout
    host = canonical_host(host.strip())
    settings = settings.replace(http={"allowlist": [*settings.http.allowlist, *allow]})
    try:
        claimed = origin_of(origin) if origin else None
    except ValueError as exc:
        print(f"error: --origin {origin!r}: {exc}", file=sys.stderr)
        return 1
    if claimed is not None and origin_host(claimed) != host:
        print(f"error: --origin {claimed} is not on {host}", file=sys.stderr)
        return 1
    async with await open_configured(settings.store) as stores:
        claim = next((c for c in await stores.tenants.hosts_of(tenant_id) if c.host == host), None)
        if claim is None:
            print(f"error: tenant {tenant_id!r} has not claimed {host} (turbocubes hosts add)", file=sys.stderr)
            return 1
        rights = Rights.from_settings(settings, stores, SystemClock(), resolver=resolver)
        try:
            if claimed is not None:
                claim = await rights.claim(tenant_id, host, claimed)
            result = await rights.verify(claim)
        finally:
            await rights.close()
    for line in result.attempts:
        print(f"  {line}", file=out)
    if result.verified:
        print(f"{host}: verified ({result.method}) on {claim.origin}", file=out)
        return 0
    print(f"{host}: NOT verified on {claim.origin}", file=out)
    return 1


def _cmd_turbo(args: argparse.Namespace) -> int:
    from shared.runtime import open_deps

    settings = _settings(args)

    async def go() -> int:
        deps = await open_deps(settings)
        try:
            stores = await deps.stores()
            registry = FeedRegistry.from_settings(settings, stores.feeds, deps.publish, resolver=deps.resolver)
            return await hosts_turbo(stores, registry, args.host, args.tenant, enabled=args.state == "on")
        finally:
            await deps.close()

    return asyncio.run(go())


async def hosts_turbo(
    stores: Stores, registry: FeedRegistry, host: str, tenant_id: str, *, enabled: bool, out: TextIO | None = None
) -> int:
    """Switch ``host``'s Turbo pages on or off for its verified owner, and fetch its feeds now to apply it."""
    out = out or sys.stdout
    host = canonical_host(host.strip())
    claim = next((c for c in await stores.tenants.hosts_of(tenant_id) if c.host == host), None)
    if claim is None or not claim.verified:
        print(f"error: {host} is not a verified host of tenant {tenant_id!r} (turbocubes hosts list)", file=sys.stderr)
        return 1
    done = await switch(stores, registry, tenant_id, host, enabled=enabled)
    print(done.said(), file=out)
    return 0


async def hosts_revoke(settings: Settings, token: str, *, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    async with await open_configured(settings.store) as stores:
        revoked = await stores.tenants.revoke_token(token.strip())
    # API instances cache token answers for cubes.api.auth.TOKEN_CACHE_S seconds
    print("revoked" if revoked else "no such live token", file=out)
    return 0 if revoked else 1


async def hosts_list(settings: Settings, tenant_id: str | None = None, *, out: TextIO | None = None) -> int:
    """The hosts of ``tenant_id``, or of every tenant (without it nothing listed the tenants to ask about)."""
    out = out or sys.stdout
    async with await open_configured(settings.store) as stores:
        if tenant_id is not None:
            tenant = await stores.tenants.get_tenant(tenant_id)
            if tenant is None:
                print(f"error: no tenant {tenant_id!r} (turbocubes hosts list shows every tenant)", file=sys.stderr)
                return 1
            tenants = [tenant]
        else:
            tenants = await stores.tenants.list_tenants()
        claims = {t.tenant_id: await stores.tenants.hosts_of(t.tenant_id) for t in tenants}
    for t in tenants:
        if tenant_id is None:
            print(f"tenant {t.tenant_id} ({t.name}), since {t.created_at:%Y-%m-%d}", file=out)
        for c in claims[t.tenant_id]:
            state = "verified" if c.verified else "unverified"
            off = "" if c.turbo else "  Turbo pages off (turbocubes hosts turbo HOST on)"
            print(f"  {c.host:40} {state:10} {c.verification_token} {c.origin or ''}{off}".rstrip(), file=out)
    if not tenants:
        print("no tenants yet (turbocubes hosts add HOST, or POST /api/v1/signup)", file=out)
    return 0
