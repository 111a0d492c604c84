"""The console's pages: my hosts and feeds, a host, a feed, an upload task.

A host's page also lists the searches that showed its pages
(``shared.wordstat.hosts``: the API's rule, counts under the privacy threshold
never named), once the host is verified.

Each page reads what it shows once (``shared.overview``, ``status.gather``)
and hands it to its template; every decision about a cell comes from the
status view model (``status/view.py``). Another tenant's host, feed or task
answers the same 404 as one that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from cubes.frontend.console.context import ConsoleContext
from cubes.frontend.console.session import Signed
from cubes.frontend.status.gather import gather_host
from cubes.frontend.status.view import Moment, feed_row, host_view, moment, result_class
from shared.overview import failing, feed_overview, host_overview
from shared.previews import preview_path
from shared.stores import Feed, FetchReport, ImageStatus
from shared.verification import instructions
from shared.wordstat.hosts import host_queries

__all__ = ["feed_page", "home_page", "host_page", "login_page", "not_found", "task_page"]

#: pages of a feed listed on its page
_PAGES_LISTED = 50


@dataclass(frozen=True, slots=True)
class FeedLine:
    """A feed in the console's list."""

    feed: Feed
    last_fetch: Moment | None
    result_class: str
    failing: bool
    counts: dict[str, int]


def login_page(c: ConsoleContext, *, error: str = "", status: int = 200) -> web.Response:
    return c.page("console/login.html", "Sign in", status=status, error=error)


def not_found(c: ConsoleContext, signed: Signed, what: str) -> web.Response:
    return c.page(
        "console/home.html",
        "Not found",
        status=404,
        **_home_empty(signed),
        notice=f"No such {what} of yours.",
    )


def _home_empty(signed: Signed) -> dict[str, Any]:
    return {
        "signed": signed,
        "hosts": [],
        "feeds": [],
        "tasks": [],
        "failing": 0,
        "host_errors": [],
        "feed_errors": [],
        "check_errors": [],
    }


async def home_page(
    c: ConsoleContext,
    signed: Signed,
    *,
    notice: str = "",
    host_errors: list[str] | None = None,
    feed_errors: list[str] | None = None,
    check_errors: list[str] | None = None,
    status: int = 200,
) -> web.Response:
    now = c.clock.time()
    feeds = [f for f in await c.stores.feeds.list(signed.tenant_id) if not f.deleted]
    latest = await c.stores.problems.latest_reports(f.feed_id for f in feeds)
    lines = []
    for f in feeds:
        r = latest.get(f.feed_id)
        lines.append(
            FeedLine(
                f,
                moment(f.status.last_fetch_at, now),
                result_class(f.status.last_result),
                failing(f, r),
                r.counts if r else {},
            )
        )
    tasks = [(t, moment(t.created_at, now)) for t in await c.stores.tasks.recent(signed.tenant_id)]
    return c.page(
        "console/home.html",
        "My console",
        status=status,
        signed=signed,
        hosts=await c.claims(signed.tenant_id),
        feeds=lines,
        tasks=tasks,
        failing=sum(1 for line in lines if line.failing),
        notice=notice,
        host_errors=host_errors or [],
        feed_errors=feed_errors or [],
        check_errors=check_errors or [],
    )


async def _waiting(c: ConsoleContext, host: str, docs: Any) -> list[tuple[Any, list[tuple[str, str]]]]:
    """Each waiting document with each image it waits for and why (ordered, failed and retried...)."""
    missing = sorted({u for d in docs for u in d.pending})
    records = await c.stores.images.get_many(missing) if missing else {}
    now = c.clock.time()
    out = []
    for d in docs:
        images = []
        for url in sorted(d.pending):
            rec = records.get(url)
            if rec is None:
                why = "not fetched yet"
            elif rec.status is ImageStatus.pending:
                why = "ordered; the crawler fetches it in the host's lane"
            elif rec.status is ImageStatus.failed:
                why = f"failed ({rec.reason}); tried again later"
            else:
                why = "cached; the page is about to be released"
            images.append((url, why))
        out.append((_Waiting(d.url, moment(d.deadline, now)), images))
    return out


@dataclass(frozen=True, slots=True)
class _Waiting:
    url: str
    deadline_m: Moment | None


#: the periods the host page offers for its searches, in months
SEARCH_PERIODS = (1, 3, 12)


async def host_page(
    c: ConsoleContext,
    signed: Signed,
    host: str,
    *,
    attempts: tuple[str, ...] = (),
    notice: str = "",
    months: int = 1,
) -> web.Response:
    claim = await c.own_claim(signed, host)
    if claim is None:
        return not_found(c, signed, "host")
    cfg = c.settings.wordstat
    months = months if months in SEARCH_PERIODS and months <= cfg.history_months else 1
    # the searches that showed the host's pages: its owner's only once the host is verified, as in the API
    searches = (
        await host_queries(
            c.stores.wordstat,
            host,
            now=datetime.fromtimestamp(c.clock.time(), tz=UTC),
            months=months,
            threshold=cfg.privacy_threshold,
        )
        if claim.verified
        else None
    )
    feeds = await c.stores.feeds.list(signed.tenant_id)
    view = await host_overview(c.stores, host, feeds)
    st = host_view(await gather_host(c.stores, c.settings, c.clock.time(), host, list(feeds)))
    return c.page(
        "console/host.html",
        host,
        signed=signed,
        claim=claim,
        how=instructions(claim.host, claim.verification_token, claim.origin),
        attempts=attempts,
        notice=notice,
        st=st.status,
        lane=st.lane,
        feeds=st.feeds,
        rollup=view.rollup,
        pages=view.pages,
        waiting=await _waiting(c, host, view.waiting),
        searches=searches,
        periods=[p for p in SEARCH_PERIODS if p <= cfg.history_months],
    )


def _fetch_notice(history: list[FetchReport], fetch_id: str) -> str:
    if not fetch_id:
        return ""
    if any(fetch_id in r.fetch_ids for r in history):
        return "Fetched now: the last fetch below is the one you ordered."
    return (
        "Fetch ordered. It goes through your host's crawl lane (its rate, robots.txt and Retry-After apply); "
        "reload this page to see its outcome."
    )


async def feed_page(
    c: ConsoleContext, signed: Signed, feed_id: str, *, fetch_id: str = "", notice: str = "", status: int = 200
) -> web.Response:
    feed = await c.own_feed(signed, feed_id)
    if feed is None:
        return not_found(c, signed, "feed")
    now = c.clock.time()
    o = await feed_overview(c.stores, feed, history=20)
    urls = [u for u in await c.stores.hashes.urls_of_source(f"feed:{feed_id}", limit=_PAGES_LISTED + 1) if "#" not in u]
    pages = [(u, await c.stores.pages.get(u)) for u in urls[:_PAGES_LISTED]]
    return c.page(
        "console/feed.html",
        feed.url,
        status=status,
        signed=signed,
        o=o,
        row=feed_row(feed, now),
        created=moment(feed.created_at, now),
        latest_at=moment(o.latest.fetched_at, now) if o.latest else None,
        history=[(r, moment(r.fetched_at, now)) for r in o.history],
        pages=pages,
        held={p.url for p in o.pages if p.held},  # not published: held back (shared/completeness.py)
        more_pages=len(urls) > _PAGES_LISTED,
        notice=notice or _fetch_notice(list(o.history), fetch_id),
    )


async def task_page(c: ConsoleContext, signed: Signed, task_id: str) -> web.Response:
    task = await c.stores.tasks.get(task_id, tenant_id=signed.tenant_id)
    if task is None:
        return not_found(c, signed, "upload")
    return c.page(
        "console/task.html",
        f"upload {task_id}",
        signed=signed,
        task=task,
        created=moment(task.created_at, c.clock.time()),
        previews=[(u, preview_path(task.task_id, u)) for u in task.preview_urls],
    )
