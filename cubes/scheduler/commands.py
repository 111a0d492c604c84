"""``turbocubes feeds add|list|remove``: the operator registers feeds (DESIGN.md sections 1 and 8; issue 4).

Until a webmaster registers through the API, this is how a feed gets in. It
applies the API's validation: the URL is canonicalized, its scheme and every
address its host resolves to pass the SSRF guard (``settings.http.allowlist``
is the only way around it), the format is one of the known ones. The feed is
written to the feed store *and* announced on ``feeds.registry`` on the
configured bus, so a running scheduler picks it up at once (a new feed is due
immediately).

    turbocubes feeds add https://example.com/feed.xml --format rss --service news
    turbocubes feeds list
    turbocubes feeds remove FEED_ID

The feed id is ``sha256(tenant + "\\n" + canonical URL)[:24]``, the API's
formula, so adding a URL twice is one feed and the operator's registration
of a tenant's URL (``--tenant``) is the tenant's feed.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from datetime import datetime
from typing import Any, TextIO

from shared.clock import utcnow
from shared.config import Settings, load_settings
from shared.errors import BlockedAddressError
from shared.feeds import feed_id_for, registration
from shared.http.guard import AddressGuard, GuardedResolver
from shared.messages import FeedFormat
from shared.runtime.cube import Output
from shared.runtime.deps import Publish
from shared.stores import Feed, FeedStore, UpsertOutcome, open_stores
from shared.urls import canonical_url, host_of

__all__ = ["add_feed", "feed_id_for", "list_feeds", "register", "remove_feed"]

#: the API's rule for service names (cubes/api/feeds.py)
_SERVICE_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("feeds", help="register, list and remove feeds (the operator's registry)")
    sub = p.add_subparsers(dest="feeds_command", required=True)

    add = sub.add_parser("add", help="register a feed; it is fetched at once")
    add.add_argument("url")
    add.add_argument(
        "--format",
        choices=[f.value for f in FeedFormat],
        default=FeedFormat.auto.value,
        help="rss (also Atom), turbo, yml, or auto (detect from the body; default)",
    )
    add.add_argument(
        "--service",
        action="append",
        default=[],
        metavar="NAME",
        dest="services",
        help="a service the feed feeds (repeatable)",
    )
    add.add_argument("--autoparser", action="store_true", help="also autoparse the host's HTML pages")
    add.add_argument("--tenant", help="register on behalf of this tenant id")
    add.set_defaults(func=_cmd_add)

    ls = sub.add_parser("list", help="every feed with its status: last fetch, result, next fetch, error")
    ls.add_argument("--tenant", help="only this tenant's feeds")
    ls.add_argument("--all", action="store_true", help="include removed feeds")
    ls.set_defaults(func=_cmd_list)

    rm = sub.add_parser("remove", help="remove a feed (it is no longer fetched)")
    rm.add_argument("feed_id")
    rm.set_defaults(func=_cmd_remove)


# --------------------------------------------------------------------------- CLI glue


def _with_bus(settings: Settings, fn: Any) -> int:
    """Run ``fn(feeds, publish)`` with the store and the bus of ``settings`` open."""
    from shared.runtime import open_deps

    async def go() -> int:
        deps = await open_deps(settings)
        try:
            feeds = (await deps.stores()).feeds
            return int(await fn(feeds, deps.publish))
        finally:
            await deps.close()

    return asyncio.run(go())


def _cmd_add(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)
    return _with_bus(
        settings,
        lambda feeds, publish: add_feed(
            settings,
            feeds,
            publish,
            args.url,
            fmt=args.format,
            services=args.services,
            autoparser=args.autoparser,
            tenant_id=args.tenant,
        ),
    )


def _cmd_list(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)

    async def go() -> int:
        stores = await open_stores(settings.store.url, pool_size=settings.store.pool_size)
        try:
            return await list_feeds(stores.feeds, tenant_id=args.tenant, include_deleted=args.all)
        finally:
            await stores.close()

    return asyncio.run(go())


def _cmd_remove(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)
    return _with_bus(settings, lambda feeds, publish: remove_feed(feeds, publish, args.feed_id))


# --------------------------------------------------------------------------- the commands


async def _check_address(settings: Settings, url: str, resolver: Any) -> str | None:
    """The SSRF guard, as the crawler will apply it; the reason when refused."""
    guard = AddressGuard(settings.http.allowlist)
    try:
        parsed = guard.check_url(url)
        checker = GuardedResolver(guard, resolver)
        try:
            await checker.resolve(parsed.host or "", parsed.port or 0)
        finally:
            await checker.close()
    except BlockedAddressError as exc:
        return exc.message
    except (OSError, ValueError) as exc:
        return f"the host cannot be resolved: {exc}"
    return None


async def add_feed(
    settings: Settings,
    feeds: FeedStore,
    publish: Publish,
    raw_url: str,
    *,
    fmt: str = FeedFormat.auto.value,
    services: list[str] | None = None,
    autoparser: bool = False,
    tenant_id: str | None = None,
    resolver: Any = None,
    now: datetime | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Validate, store and announce one feed. 0 when registered, 1 (with the reason on ``err``) when refused."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        url = canonical_url(raw_url)
    except ValueError as exc:
        print(f"turbocubes feeds add: bad url: {exc}", file=err)
        return 1
    try:
        feed_format = FeedFormat(fmt)
    except ValueError:
        print(f"turbocubes feeds add: bad format {fmt!r} (valid: {', '.join(f.value for f in FeedFormat)})", file=err)
        return 1
    names = sorted(set(services or []))
    bad = [n for n in names if not _SERVICE_RE.match(n)]
    if bad:
        print(f"turbocubes feeds add: bad service name(s) {bad}: lower-case letters, digits, _ or -", file=err)
        return 1
    problem = await _check_address(settings, url, resolver)
    if problem is not None:
        print(f"turbocubes feeds add: refused: {problem}", file=err)
        return 1
    host = host_of(url)
    feed = Feed(
        feed_id=feed_id_for(tenant_id, url),
        url=url,
        host=host,
        format=feed_format.value,
        tenant_id=tenant_id,
        services=tuple(names),
        autoparser=autoparser,
    )
    outcome = await feeds.upsert_feed(feed)
    stored = await feeds.get(feed.feed_id) or feed
    await publish(
        [Output("feeds.registry", registration(stored, registered_at=stored.created_at or now), key=feed.feed_id)]
    )
    verb = {UpsertOutcome.inserted: "added", UpsertOutcome.updated: "updated"}.get(outcome, "unchanged")
    print(f"{verb} feed {feed.feed_id} {url} ({feed_format.value})", file=out)
    return 0


async def remove_feed(
    feeds: FeedStore, publish: Publish, feed_id: str, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Announce the removal, then soft-delete. 0 when removed, 1 when there is no such live feed."""
    out = out or sys.stdout
    err = err or sys.stderr
    feed = await feeds.get(feed_id)
    if feed is None or feed.deleted:
        print(f"turbocubes feeds remove: no such feed {feed_id!r}", file=err)
        return 1
    # announced first (as the API does): if the bus is down the feed stays and a retry finds it again
    await publish(
        [
            Output(
                "feeds.registry",
                registration(feed, action="delete", registered_at=utcnow()),
                key=feed.feed_id,
            )
        ]
    )
    await feeds.delete_feed(feed_id)
    print(f"removed feed {feed_id} {feed.url}", file=out)
    return 0


def _when(value: datetime | None) -> str:
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


async def list_feeds(
    feeds: FeedStore,
    *,
    tenant_id: str | None = None,
    include_deleted: bool = False,
    out: TextIO | None = None,
) -> int:
    """Print each feed and its status, one block per feed (times in UTC)."""
    out = out or sys.stdout
    rows = await feeds.list(tenant_id, include_deleted=include_deleted)
    if not rows:
        print("no feeds", file=out)
        return 0
    for feed in rows:
        st = feed.status
        flag = " [removed]" if feed.deleted else ""
        result = st.last_result or "-"
        if st.last_http_status is not None:
            result += f" (HTTP {st.last_http_status})"
        if st.consecutive_failures:
            result += f", {st.consecutive_failures} failure(s) in a row"
        print(f"{feed.feed_id}  {feed.format:5}  {feed.url}{flag}", file=out)
        print(f"    last fetch: {_when(st.last_fetch_at)}  result: {result}", file=out)
        next_fetch = "due now" if st.next_fetch_at is None and not feed.deleted else _when(st.next_fetch_at)
        extra = f"  items: {st.items}" if st.items is not None else ""
        if st.websub_expires_at is not None:
            extra += f"  websub: {st.websub_hub or '-'} until {_when(st.websub_expires_at)}"
        elif st.websub_hub:
            extra += f"  websub hub: {st.websub_hub} (not subscribed)"
        print(f"    next fetch: {next_fetch}{extra}", file=out)
        if st.last_error:
            where = f" (line {st.error_line}, column {st.error_column})" if st.error_line else ""
            print(f"    error: {st.last_error}{where}", file=out)
    return 0
