"""The console's pages: my hosts and feeds, a host, a feed, an upload task.

A host's page also lists the searches that showed its pages
(``shared.wordstat.hosts``: the API's rule, counts under the privacy threshold
never named), once the host is verified.

Each page reads what it shows once (``shared.webmaster.overview``, ``status.gather``)
and hands it to its template; every decision about a cell comes from the
status view model (``status/view.py``). Another tenant's host, feed or task
answers the same 404 as one that does not exist.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from cubes.frontend.console.context import ConsoleContext
from cubes.frontend.console.session import Signed
from cubes.frontend.status.gather import gather_host
from cubes.frontend.status.view import Moment, feed_row, host_view, moment
from shared.notify.service import overview as notify_overview
from shared.pages.state import UNDECIDED, Counts, refused_links, source_views, task_views
from shared.problems import Problem
from shared.stores import Feed, FetchReport
from shared.webmaster import access
from shared.webmaster.branding import Branding, logo_state
from shared.webmaster.feed_options import FeedOptions
from shared.webmaster.overview import failing, feed_overview, host_overview
from shared.webmaster.rights import claim_problems
from shared.webmaster.verification import instructions
from shared.webmaster.words import Word, result_word, task_word
from shared.wordstat.hosts import host_queries

__all__ = [
    "feed_page",
    "forbidden",
    "home_page",
    "host_flash",
    "host_page",
    "login_page",
    "not_found",
    "refused_for_role",
    "task_page",
    "welcome_page",
]

#: pages of a feed listed on its page
_PAGES_LISTED = 50
#: problem codes' occurrences on a feed's page (the open ones first)
_OCCURRENCES_SHOWN = 30
#: notices (changes of rights on the tenant's origins) on the home page, the newest
_NOTICES_SHOWN = 10


@dataclass(frozen=True, slots=True)
class FeedLine:
    """A feed in the console's list."""

    feed: Feed
    last_fetch: Moment | None
    result: Word
    failing: bool
    #: its pages by state
    pages: Counts


def login_page(c: ConsoleContext, *, error: str = "", signup_error: str = "", status: int = 200) -> web.Response:
    return c.page(
        "console/login.html",
        "Sign in or sign up",
        status=status,
        error=error,
        signup_error=signup_error,
        signup=c.settings.api.signup_enabled,
    )


async def welcome_page(c: ConsoleContext, signed: Signed, token: str) -> web.Response:
    """A new tenant's API token, shown this once, and what to do next."""
    tenant = await c.stores.tenants.get_tenant(signed.tenant_id)
    return c.page(
        "console/welcome.html",
        "Welcome",
        signed=signed,
        tenant_name=tenant.name if tenant else "",
        token=token,
        api_docs=c.settings.api.public_url.rstrip("/") + "/docs",
    )


def host_flash(said: dict[str, Any]) -> dict[str, Any]:
    """The host page's part of what an action said: its notice and a verification's attempts."""
    attempts = said.get("attempts")
    return {
        "notice": str(said.get("notice") or ""),
        "attempts": tuple(str(a) for a in attempts) if isinstance(attempts, list) else (),
    }


def not_found(c: ConsoleContext, signed: Signed, what: str) -> web.Response:
    return c.page(
        "console/home.html",
        "Not found",
        status=404,
        **_home_empty(signed),
        notice=f"No such {what} of yours.",
    )


def refused_for_role(c: ConsoleContext, signed: Signed, method: str, *, team: bool = False) -> web.Response | None:
    """The page a role may not reach (``shared.webmaster.access.permit``, the API's rule: a page reads, a form
    writes), or None; every console route asks it before it reads a form."""
    try:
        access.permit(signed.role, access.need_of(method, team=team))
    except access.AccessRefused as exc:
        return forbidden(c, signed, exc.message)
    return None


def forbidden(c: ConsoleContext, signed: Signed, reason: str) -> web.Response:
    """What a role may not do (``shared.webmaster.access.permit``): 403, with the reason."""
    return c.page("console/forbidden.html", "Not for your role", status=403, signed=signed, reason=reason)


def _home_empty(signed: Signed) -> dict[str, Any]:
    return {
        "signed": signed,
        "tenant_name": "",
        "hosts": [],
        "feeds": [],
        "tasks": [],
        "failing": 0,
        "host_errors": [],
        "feed_errors": [],
        "check_errors": [],
        "notices": [],
        "endpoint_problems": [],
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
    lines = []
    for f in feeds:
        o = await feed_overview(c.stores, f)
        lines.append(
            FeedLine(
                f,
                moment(f.status.last_fetch_at, now),
                result_word(f.status.last_result),
                failing(f, o.latest, o.counts.with_problems),
                o.counts,
            )
        )
    tasks = [
        (t, moment(t.created_at, now), task_word(t.status.value)) for t in await c.stores.tasks.recent(signed.tenant_id)
    ]
    tenant = await c.stores.tenants.get_tenant(signed.tenant_id)
    return c.page(
        "console/home.html",
        "My console",
        status=status,
        signed=signed,
        tenant_name=tenant.name if tenant else "",
        hosts=await c.claims(signed.tenant_id),
        feeds=lines,
        tasks=tasks,
        failing=sum(1 for line in lines if line.failing),
        notice=notice,
        host_errors=host_errors or [],
        feed_errors=feed_errors or [],
        check_errors=check_errors or [],
        notices=await c.stores.notices.notices(signed.tenant_id, limit=_NOTICES_SHOWN),
        # a notification endpoint that took nothing is a problem of the tenant's, shown where it looks first
        endpoint_problems=(await notify_overview(c.stores.notify, signed.tenant_id, owner=signed.owns)).problems,
    )


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
    branding_errors: list[str] | None = None,
    status: int = 200,
) -> web.Response:
    claim = await c.own_claim(signed, host)
    if claim is None:
        return not_found(c, signed, "host")
    cfg = c.settings.wordstat
    months = months if months in SEARCH_PERIODS and months <= cfg.history_months else 1
    # the searches that showed the pages of the right's origin, once it is verified, as in the API
    searches = (
        await host_queries(
            c.stores.wordstat,
            claim.origin,
            now=c.clock.now(),
            months=months,
            threshold=cfg.privacy_threshold,
        )
        if claim.verified
        else None
    )
    common: dict[str, Any] = {
        "signed": signed,
        "claim": claim,
        "claim_problems": claim_problems(claim, c.settings.api.proof_grace_s),
        "how": instructions(claim.host, claim.verification_token, claim.origin),
        "attempts": attempts,
        "notice": notice,
    }
    if not claim.verified:  # a claim without a right shows the claim and nothing else
        return c.page("console/host.html", host, status=status, **common, searches=None, periods=[])
    feeds = [f for f in await c.stores.feeds.list(signed.tenant_id) if f.tenant_id == signed.tenant_id]
    view = await host_overview(c.stores, host, feeds, tenant_id=signed.tenant_id)
    st = host_view(await gather_host(c.stores, c.settings, c.clock.time(), host, feeds))
    branding = Branding.from_json(await c.stores.tenants.branding(signed.tenant_id, host))
    return c.page(
        "console/host.html",
        host,
        **common,
        status=status,
        branding=branding,
        logo=await logo_state(c.stores, branding),
        branding_errors=branding_errors or [],
        st=st.status,
        lane=st.lane,
        feeds=st.feeds,
        rollup=view.rollup,
        by_state=view.counts,
        pages=view.pages,
        waiting=[(w, moment(w.deadline, c.clock.time())) for w in view.waiting],
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
    c: ConsoleContext,
    signed: Signed,
    feed_id: str,
    *,
    fetch_id: str = "",
    notice: str = "",
    status: int = 200,
    options_errors: list[str] | None = None,
) -> web.Response:
    feed = await c.own_feed(signed, feed_id)
    if feed is None:
        return not_found(c, signed, "feed")
    now = c.clock.time()
    o = await feed_overview(c.stores, feed, history=20)
    claim = await c.own_claim(signed, feed.host)
    pages = await source_views(c.stores, f"feed:{feed_id}", latest=o.latest, limit=_PAGES_LISTED)
    return c.page(
        "console/feed.html",
        feed.url,
        status=status,
        signed=signed,
        o=o,
        row=feed_row(feed, now),
        result=result_word(feed.status.last_result),
        created=moment(feed.created_at, now),
        latest_at=moment(o.latest.fetched_at, now) if o.latest else None,
        latest_word=result_word(o.latest.result) if o.latest else None,
        feed_problems=_feed_problems(o.latest),
        history=[(r, moment(r.fetched_at, now), result_word(r.result)) for r in o.history],
        occurrences=[
            (x, moment(x.first_seen, now), moment(x.last_seen, now), moment(x.resolved_at, now))
            for x in await c.stores.problems.history(feed.feed_id, limit=_OCCURRENCES_SHOWN)
        ],
        pages=pages,
        more_pages=o.counts.total > len(pages),
        notice=notice or _fetch_notice(list(o.history), fetch_id),
        opts=FeedOptions.from_json(feed.options),
        has_credentials=feed.secret is not None,
        options_errors=options_errors,
        turbo_on=claim is None or claim.turbo,
    )


def _feed_problems(report: FetchReport | None) -> list[Problem]:
    """The last fetch's problems that are not an item's (those show with the item's page)."""
    items = {id(p) for ps in refused_links(report).values() for p in ps}
    return [p for p in (report.problems if report else ()) if id(p) not in items]


async def task_page(c: ConsoleContext, signed: Signed, task_id: str) -> web.Response:
    task = await c.stores.tasks.get(task_id, tenant_id=signed.tenant_id)
    if task is None:
        return not_found(c, signed, "upload")
    pages = await task_views(c.stores, task)
    checking = any(p.state in UNDECIDED for p in pages)
    title = f"Check of {task.source_url}" if task.source_url else f"Upload to {task.host}"
    return c.page(
        "console/task.html",
        title,
        signed=signed,
        task=task,
        heading=title,
        status_word=_CHECKING if checking and task.status.value == "done" else task_word(task.status.value),
        created=moment(task.created_at, c.clock.time()),
        pages=pages,
        verdicts=Counter(p.text for p in pages),
    )


_CHECKING = Word(
    "Checking images",
    "Its items are read; their images are being fetched through your host's crawl lane, as for a "
    "registered feed. Reload to see the verdicts.",
    "quiet",
)
