"""``turbocubes feeds add|list|remove|fetch``: the operator's registry, beside ``hosts`` (docs/architecture.md s.1, 8).

Until a webmaster registers through the API, this is how a feed gets in. It
goes through the same registration service as the API and the demo
(``shared.webmaster.feeds.FeedRegistry``): canonical URL, SSRF guard (``http.allowlist``
is the only way around it), format and service names, the feed stored and
announced on ``feeds.registry`` of the configured bus, so a running scheduler
takes it at once (a new feed is due immediately).

    turbocubes feeds add https://example.com/feed.xml --format rss --service news [--tenant ID]
    turbocubes feeds add https://staging.example/feed.xml --basic-auth bob --drop-category Ads  # options
    turbocubes feeds list [--tenant ID] [--all]
    turbocubes feeds remove FEED_ID
    turbocubes feeds fetch FEED_ID [--wait S]  # one fetch now, through the host's polite lane
    turbocubes feeds show FEED_ID         # status, every problem of the last fetch with its fix, history

The feed id is the API's (``sha256(tenant + "\\n" + canonical URL)[:24]``), so
adding a URL twice is one feed and the operator's registration of a tenant's
URL (``--tenant``) is the tenant's feed. Exit codes: 0 done, 1 refused / not found.

The commands' work; ``commands.py`` declares their arguments and imports this module only when one runs.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import orjson

from shared.config import Settings, load_settings
from shared.errors import NotFound
from shared.messages import FeedFormat
from shared.problems import Where
from shared.stores import Feed, FeedStore, FetchReport, ProblemStore, Stores, UpsertOutcome, open_configured
from shared.stores.problems import KEEP_REPORTS
from shared.webmaster.feed_options import FeedOptions, FullText
from shared.webmaster.feeds import KEEP, FeedRegistry, RegistrationRefused
from shared.webmaster.overview import feed_overview
from shared.webmaster.words import counted, result_word

__all__ = ["feeds_add", "feeds_fetch", "feeds_list", "feeds_remove", "feeds_show", "run"]


def run(args: argparse.Namespace) -> int:
    """``turbocubes feeds ...`` with its parsed arguments."""
    a = args
    match a.feeds_command:
        case "add":
            return _with_registry(
                a,
                lambda registry: feeds_add(
                    registry,
                    a.url,
                    fmt=a.format,
                    services=a.services,
                    autoparser=a.autoparser,
                    tenant_id=a.tenant,
                    options=_options_of(a),
                ),
            )
        case "list":
            return _cmd_list(a)
        case "remove":
            return _with_registry(a, lambda registry: feeds_remove(registry, a.feed_id))
        case "fetch":
            return _cmd_fetch(a)
        case "show":
            return _cmd_show(a)
        case "export" | "import":
            from cubes.api.opml_commands import run as opml

            return opml(a)
    raise ValueError(f"no feeds command {a.feeds_command!r}")


# --------------------------------------------------------------------------- CLI glue


def _options_of(args: argparse.Namespace) -> Any:
    """The options the flags give, as the API takes them; ``KEEP`` when no flag was given."""
    options: dict[str, Any] = {}
    if args.options:
        text = sys.stdin.read() if args.options == "-" else Path(args.options).read_text(encoding="utf-8")
        try:
            options = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise SystemExit(f"turbocubes feeds add: --options {args.options}: not JSON: {exc}") from None
        if not isinstance(options, dict):
            raise SystemExit(
                f"turbocubes feeds add: --options {args.options}: a JSON object, not {type(options).__name__}"
            )
    if args.basic_auth:
        password = os.environ.get("TURBOCUBES_FEED_PASSWORD")
        if password is None:
            password = getpass.getpass(f"password of {args.basic_auth} for the feed: ")
        options["basic_auth"] = {"username": args.basic_auth, "password": password}
    if args.timeout is not None:
        options["timeout_s"] = args.timeout
    if args.full_text is not None:
        options["full_text"] = args.full_text
    filters = {
        key: value
        for key, value in (
            ("keep_categories", args.keep_categories),
            ("drop_categories", args.drop_categories),
            ("keep_pattern", args.keep_pattern),
            ("drop_pattern", args.drop_pattern),
        )
        if value
    }
    if filters:
        options["filters"] = {**options.get("filters", {}), **filters}
    return options or KEEP


def _described(options: FeedOptions, sealed: bool) -> str:
    """The feed's options in a line, never a secret: who it signs in as, which headers, the filters."""
    parts = []
    if options.username:
        parts.append(f"basic auth as {options.username}")
    if options.header_names:
        parts.append("headers " + ", ".join(options.header_names))
    if sealed and not parts:
        parts.append("credentials kept")
    if options.timeout_s is not None:
        parts.append(f"timeout {options.timeout_s:g} s")
    if options.full_text is not FullText.auto:
        parts.append(f"full text {options.full_text.value}")
    f = options.filters
    for label, names in (("keep categories", f.keep_categories), ("drop categories", f.drop_categories)):
        if names:
            parts.append(f"{label} {', '.join(names)}")
    for label, pattern in (("keep pattern", f.keep_pattern), ("drop pattern", f.drop_pattern)):
        if pattern:
            parts.append(f"{label} {pattern!r}")
    return "; ".join(parts) or "none"


def _with_registry(args: argparse.Namespace, fn: Callable[[FeedRegistry], Awaitable[int]]) -> int:
    """Run ``fn(registry)`` with the store and the bus of the configuration open."""
    from shared.runtime import open_deps

    settings = load_settings(args.config)

    async def go() -> int:
        deps = await open_deps(settings)
        try:
            feeds = (await deps.stores()).feeds
            return await fn(FeedRegistry.from_settings(settings, feeds, deps.publish, resolver=deps.resolver))
        finally:
            await deps.close()

    return asyncio.run(go())


def _cmd_fetch(args: argparse.Namespace) -> int:
    from shared.runtime import open_deps

    settings = load_settings(args.config)

    async def go() -> int:
        deps = await open_deps(settings)
        try:
            stores = await deps.stores()
            registry = FeedRegistry.from_settings(settings, stores.feeds, deps.publish, resolver=deps.resolver)
            return await feeds_fetch(registry, args.feed_id, problems=stores.problems, wait_s=args.wait)
        finally:
            await deps.close()

    return asyncio.run(go())


def _cmd_show(args: argparse.Namespace) -> int:
    settings: Settings = load_settings(args.config)

    async def go() -> int:
        async with await open_configured(settings.store) as stores:
            return await feeds_show(stores, args.feed_id)

    return asyncio.run(go())


def _cmd_list(args: argparse.Namespace) -> int:
    settings: Settings = load_settings(args.config)

    async def go() -> int:
        async with await open_configured(settings.store) as stores:
            return await feeds_list(stores.feeds, tenant_id=args.tenant, include_deleted=args.all)

    return asyncio.run(go())


# --------------------------------------------------------------------------- the commands


async def feeds_add(
    registry: FeedRegistry,
    url: str,
    *,
    fmt: str = FeedFormat.auto.value,
    services: Sequence[str] = (),
    autoparser: bool = False,
    tenant_id: str | None = None,
    options: Any = KEEP,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Register one feed: 0 when registered (or already so), 1 with every reason on ``err`` when refused."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        done = await registry.register(
            url, fmt=fmt, services=services, autoparser=autoparser, tenant_id=tenant_id, options=options
        )
    except RegistrationRefused as exc:
        for problem in exc.problems:
            print(f"turbocubes feeds add: refused: {problem.field}: {problem.message}", file=err)
        return 1
    verb = {UpsertOutcome.inserted: "added", UpsertOutcome.updated: "updated"}.get(done.outcome, "unchanged")
    full_text = FeedOptions.from_json(done.feed.options).full_text.value
    print(f"{verb} feed {done.feed.feed_id} {done.feed.url} ({done.feed.format}, full text {full_text})", file=out)
    return 0


async def feeds_remove(
    registry: FeedRegistry, feed_id: str, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """0 when removed, 1 when there is no such live feed."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        feed = await registry.remove(feed_id)
    except NotFound:
        print(f"turbocubes feeds remove: no such feed {feed_id!r}", file=err)
        return 1
    print(f"removed feed {feed_id} {feed.url}", file=out)
    return 0


async def feeds_fetch(
    registry: FeedRegistry,
    feed_id: str,
    *,
    problems: ProblemStore | None = None,
    wait_s: float = 0.0,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """0 when the fetch was ordered (and, with ``wait_s``, reported in time), 1 when there is no such live
    feed or the fetch was not reported within ``wait_s``."""
    out = out or sys.stdout
    err = err or sys.stderr
    fetch_id = uuid.uuid4().hex
    try:
        feed = await registry.fetch_now(feed_id, fetch_id=fetch_id)
    except NotFound:
        print(f"turbocubes feeds fetch: no such feed {feed_id!r}", file=err)
        return 1
    print(f"fetch {fetch_id} of feed {feed_id} {feed.url} ordered, through the host's lane", file=out)
    print(
        f"    its outcome: GET /api/v1/feeds/{feed_id}/fetches/{fetch_id}, or turbocubes feeds show {feed_id}", file=out
    )
    if wait_s <= 0 or problems is None:
        return 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while (report := await problems.report_for_fetch(feed_id, fetch_id)) is None:
        if loop.time() >= deadline:
            print(f"turbocubes feeds fetch: not fetched within {wait_s:g} s (is the crawler running?)", file=err)
            return 1
        await asyncio.sleep(0.5)  # a person waiting on a command, polling the store
    _print_report(report, out)
    return 0


def _print_report(report: FetchReport, out: TextIO) -> None:
    word = result_word(report.result)
    items = "" if report.items is None else f"; {counted(report.items, 'item')}: "
    counts = (
        f"{report.changed} new or changed, {report.unchanged} unchanged, {report.refused} refused,"
        f" {report.removed} removed"
        if report.items is not None
        else ""
    )
    print(f"    {_when(report.fetched_at)}  {word.text}{items}{counts}", file=out)
    if word.explanation:
        print(f"        ({word.explanation})", file=out)
    for p in report.problems:
        print(f"    {p.severity.value}: {p.describe()}", file=out)
        print(f"        fix: {p.hint}", file=out)
    if report.more:
        print(f"    ...and {report.more} more; by code: {report.counts}", file=out)


async def feeds_show(stores: Stores, feed_id: str, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The feed's status, every problem of its last fetch with the fix, its pages by state, history."""
    out = out or sys.stdout
    err = err or sys.stderr
    feed = await stores.feeds.get(feed_id)
    if feed is None:
        print(f"turbocubes feeds show: no such feed {feed_id!r}", file=err)
        return 1
    await feeds_list(_One(feed), out=out)
    view = await feed_overview(stores, feed, history=KEEP_REPORTS)
    if view.latest is None:
        print("    not fetched yet", file=out)
    else:
        print("  last fetch:", file=out)
        _print_report(view.latest, out)
    shown = ", ".join(f"{n} {w.text.lower()}" for _, n, w in view.counts.shown()) or "no page yet"
    print(f"  pages: {shown}", file=out)
    for page in view.pages:
        print(f"  page {page.url}: {page.text}. {page.explanation}", file=out)
        for p in page.problems:
            print(f"    {p.severity.value}: [{p.code}] {p.message}\n        fix: {p.hint}", file=out)
    if len(view.history) > 1:
        print("  history:", file=out)
        for r in view.history:
            print(f"    {_when(r.fetched_at)}  {result_word(r.result).text:28} {r.counts or ''}", file=out)
    return 0


class _One:
    """One feed as ``feeds_list`` reads a store."""

    def __init__(self, feed: Feed) -> None:
        self.feed = feed

    async def list(self, tenant_id: str | None = None, *, include_deleted: bool = False) -> list[Feed]:
        return [self.feed]


def _when(value: datetime | None) -> str:
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


async def feeds_list(
    feeds: FeedStore | _One,
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
        result = result_word(st.last_result).text
        if st.last_http_status is not None:
            result += f" (HTTP {st.last_http_status})"
        if st.consecutive_failures:
            result += f", {counted(st.consecutive_failures, 'failure')} in a row"
        print(f"{feed.feed_id}  {feed.format:5}  {feed.url}{flag}", file=out)
        print(f"    last fetch: {_when(st.last_fetch_at)}  result: {result}", file=out)
        next_fetch = "due now" if st.next_fetch_at is None and not feed.deleted else _when(st.next_fetch_at)
        if st.schedule_reason and st.next_fetch_at is not None:
            next_fetch += f" ({st.schedule_reason})"
        extra = f"  items: {st.items}" if st.items is not None else ""
        if st.websub_expires_at is not None:
            extra += f"  websub: {st.websub_hub or '-'} until {_when(st.websub_expires_at)}"
        elif st.websub_hub:
            extra += f"  websub hub: {st.websub_hub} (not subscribed)"
        print(f"    next fetch: {next_fetch}{extra}", file=out)
        if feed.options or feed.secret:
            print(f"    options: {_described(FeedOptions.from_json(feed.options), feed.secret is not None)}", file=out)
        if st.last_error:
            at = Where(line=st.error_line, column=st.error_column).describe()
            print(f"    error: {st.last_error}{f' ({at})' if at else ''}", file=out)
    return 0
