"""What a webmaster sees of a feed and of a host, read once for the API and the console (docs/architecture.md
section 10).

The webmaster API (``cubes/api``) answers it as JSON, the console
(``cubes/frontend``) renders it as HTML; both read it through these functions,
so the two can never tell a webmaster different things.

* a feed: its registration and status, its newest fetch report (every problem
  of that fetch with its hint, counted by code), its history, its pages by
  state and those with something to fix, each as ``shared/pages/state.py``
  tells it (held back and why, published without something, refused...);
* roll-ups per feed and per host: items refused by code, images failed by
  code, conflicts with the source that won, the pages that lost something,
  and the feeds *with problems*: whose last fetch failed, whose last fetch
  refused items, or whose pages lost content -- the host's count of them;
* a host: its feeds, the roll-up over them, its pages by state (the tenant's:
  its feeds', its uploads', the autoparser's when a feed asked for it), and
  its pages waiting for images with the images they wait for and why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.messages import SourceKind
from shared.pages.state import PROBLEM_STATES, Counts, PageView, key_views, refused_links, source_views
from shared.pages.state import counts as count_pages
from shared.problems import Problem, Severity
from shared.problems.codes import CODES
from shared.stores import Feed, FetchReport, PageProblems, PageState, Stores

#: a source of pages: (hash-store source id, its host when it publishes on several, its latest fetch)
Source = tuple[str, str | None, FetchReport | None]

__all__ = [
    "FeedOverview",
    "HostOverview",
    "Rollup",
    "counts_json",
    "failing",
    "feed_overview",
    "host_overview",
    "page_json",
    "report_json",
    "rollup",
    "rollup_json",
]

#: codes of problems that refuse one item (the rest concern a fetch or a whole body, or are warnings)
_ITEM_CODES = ("item.", "turbo.", "conflict.outranked")
#: results of a fetch that leave nothing to fix (the rest are a failed fetch or a parse with problems)
_FINE = frozenset({"parsed", "unchanged", "not_modified", "ok"})
#: pages that lost something shown per feed or host; the roll-up counts all of them up to the read limit
PAGES_SHOWN = 50
#: page-problem rows read for a roll-up: a host with more broken pages than this is shown as "5,000+"
PAGES_READ = 5000
#: conflicts listed in a roll-up (all are counted)
CONFLICTS_SHOWN = 20


@dataclass(frozen=True, slots=True)
class Rollup:
    feeds: int = 0
    failing_feeds: int = 0
    #: refused items by code (errors with an item), over the newest reports
    items_refused: dict[str, int] = field(default_factory=dict)
    #: images left out of live pages by code
    images_failed: dict[str, int] = field(default_factory=dict)
    #: problems of a fetch or a body as a whole (a failed fetch, XML that cannot be read) by code
    feed_problems: dict[str, int] = field(default_factory=dict)
    #: warnings (recovered XML, undeclared prefixes...) by code, over the newest reports
    warnings: dict[str, int] = field(default_factory=dict)
    #: ``conflict.*`` problems: which URL, and the message naming the source that won
    conflicts: tuple[Problem, ...] = ()
    conflicts_total: int = 0
    pages_with_problems: int = 0
    #: True when more page-problem rows exist than were read (``PAGES_READ``)
    pages_more: bool = False


def failing(feed: Feed, report: FetchReport | None, broken_pages: int = 0) -> bool:
    """A feed is failing when its last fetch failed, refused items, or its pages lost content."""
    if feed.status.consecutive_failures or broken_pages:
        return True
    return report is not None and (report.result not in _FINE or report.refused > 0)


def rollup(
    feeds: Sequence[Feed], reports: Mapping[str, FetchReport], pages: Sequence[PageProblems], *, more: bool = False
) -> Rollup:
    """The roll-up over ``feeds`` (their newest ``reports``) and the live ``pages`` that lost something."""
    refused: Counter[str] = Counter()
    warnings: Counter[str] = Counter()
    whole: Counter[str] = Counter()
    conflicts: list[Problem] = []
    for report in reports.values():
        conflicts.extend(p for p in report.problems if p.code.startswith("conflict."))
        for code, n in report.counts.items():
            row = CODES.get(code)
            if row is not None and row.severity == Severity.warning.value:
                warnings[code] += n
            elif code.startswith(_ITEM_CODES):
                refused[code] += n
            else:
                whole[code] += n
    images: Counter[str] = Counter(p.code for row in pages for p in row.problems if p.code.startswith("image."))
    broken = Counter(row.source_id for row in pages)
    return Rollup(
        feeds=len(feeds),
        failing_feeds=sum(1 for f in feeds if failing(f, reports.get(f.feed_id), broken.get(f.feed_id, 0))),
        items_refused=dict(sorted(refused.items())),
        feed_problems=dict(sorted(whole.items())),
        images_failed=dict(sorted(images.items())),
        warnings=dict(sorted(warnings.items())),
        conflicts=tuple(conflicts[:CONFLICTS_SHOWN]),
        conflicts_total=len(conflicts),
        pages_with_problems=len(pages),
        pages_more=more,
    )


@dataclass(frozen=True, slots=True)
class FeedOverview:
    feed: Feed
    latest: FetchReport | None
    #: newest first (empty unless asked for)
    history: tuple[FetchReport, ...]
    #: its pages with something to fix (held, published without something, refused, outranked), at
    #: most ``PAGES_SHOWN``, each as every screen tells it (``shared/pages/state.py``)
    pages: tuple[PageView, ...]
    rollup: Rollup
    #: its pages by state
    counts: Counts = field(default_factory=Counts)


@dataclass(frozen=True, slots=True)
class HostOverview:
    host: str
    feeds: tuple[FeedOverview, ...]
    pages: tuple[PageView, ...]
    #: its pages waiting for images, with what each waits for and why
    waiting: tuple[PageView, ...]
    rollup: Rollup
    #: the pages of these feeds (and of what the tenant uploaded, and the autoparser read for them) by state
    counts: Counts = field(default_factory=Counts)


async def _troubled(
    stores: Stores, rows: Sequence[PageProblems], latest: FetchReport | None, sources: Sequence[str] = ()
) -> tuple[PageView, ...]:
    """The pages with something to fix: those with a problem row, the items ``latest`` refused, and the
    pages of ``sources`` that another source took over."""
    keys = list(dict.fromkeys([*(r.url for r in rows[:PAGES_SHOWN]), *refused_links(latest)]))[:PAGES_SHOWN]
    views = await key_views(stores, keys, latest=latest) if keys else []
    for source_id in sources:
        views += await source_views(stores, source_id, states=(PageState.outranked,), limit=PAGES_SHOWN)
    out: dict[str, PageView] = {}
    for v in views:
        if v.state in PROBLEM_STATES and v.url not in out:
            out[v.url] = v
    return tuple(out.values())[:PAGES_SHOWN]


async def feed_overview(stores: Stores, feed: Feed, *, history: int = 0) -> FeedOverview:
    """One feed; ``history``: how many of its last reports to read (0: only the newest)."""
    reports = await stores.problems.reports(feed.feed_id, limit=max(1, history))
    rows = await stores.problems.page_problems(source_id=feed.feed_id, limit=PAGES_READ + 1)
    latest = reports[0] if reports else None
    more = len(rows) > PAGES_READ
    rows = rows[:PAGES_READ]
    counts = await count_pages(stores, [(f"feed:{feed.feed_id}", None, latest)])
    return FeedOverview(
        feed=feed,
        latest=latest,
        history=tuple(reports) if history else (),
        pages=await _troubled(stores, rows, latest, [f"feed:{feed.feed_id}"]),
        rollup=rollup([feed], {feed.feed_id: latest} if latest else {}, rows, more=more),
        counts=counts,
    )


def _sources(feeds: Sequence[Feed], host: str, latest: Mapping[str, FetchReport]) -> list[Source]:
    """The hash-store sources of ``feeds`` on ``host``: each feed, its tenant's uploads, the autoparser."""
    out: list[Source] = [(f"feed:{f.feed_id}", None, latest.get(f.feed_id)) for f in feeds]
    out += [(f"tenant:{t}", host, None) for t in sorted({f.tenant_id for f in feeds if f.tenant_id})]
    if any(f.autoparser for f in feeds):
        out.append((f"autoparser:{host}", None, None))
    return out


async def host_overview(
    stores: Stores, host: str, feeds: Iterable[Feed], *, waiting: int = 50, tenant_id: str | None = None
) -> HostOverview:
    """``host`` with the caller's feeds of it (the caller decides whose they are: one tenant's, whose
    uploads count too when ``tenant_id`` is given)."""
    mine = [f for f in feeds if f.host == host and not f.deleted]
    latest = await stores.problems.latest_reports(f.feed_id for f in mine)
    rows = await stores.problems.page_problems(host=host, limit=PAGES_READ + 1)
    ids = {f.feed_id for f in mine}
    # the host's pages published from these feeds (another tenant's old pages of the host are not ours),
    # and those the autoparser read (or refused: held back) when one of these feeds asked for it
    autoparsed = any(f.autoparser for f in mine)
    pages = [
        r
        for r in rows[:PAGES_READ]
        if r.source_id in ids
        or (tenant_id is not None and r.source_id == tenant_id)
        or (autoparsed and r.source_kind == SourceKind.autoparser.value)
    ]
    overviews = []
    for f in mine:
        own = [r for r in pages if r.source_id == f.feed_id]
        report = latest.get(f.feed_id)
        overviews.append(
            FeedOverview(
                f,
                report,
                (),
                await _troubled(stores, own, report, [f"feed:{f.feed_id}"]),
                rollup([f], {f.feed_id: report} if report else {}, own),
                await count_pages(stores, [(f"feed:{f.feed_id}", None, report)]),
            )
        )
    sources = _sources(mine, host, latest)
    if tenant_id is not None and not any(s[0] == f"tenant:{tenant_id}" for s in sources):
        sources.append((f"tenant:{tenant_id}", host, None))
    troubled = [v for o in overviews for v in o.pages]
    others = [s[0] for s in sources if not s[0].startswith("feed:")]
    troubled += await _troubled(stores, [r for r in pages if r.source_id not in ids], None, others)
    return HostOverview(
        host=host,
        feeds=tuple(overviews),
        pages=tuple(troubled[:PAGES_SHOWN]),
        waiting=await _waiting(stores, host, sources, waiting),
        rollup=rollup(mine, latest, pages, more=len(rows) > PAGES_READ),
        counts=await count_pages(stores, sources),
    )


async def _waiting(stores: Stores, host: str, sources: Sequence[Source], limit: int) -> tuple[PageView, ...]:
    """The host's parked pages that are these sources' (another tenant's are not shown), as views."""
    parked = [d.url for d in await stores.delay.waiting_on(host, limit=limit * 4)]
    if not parked:
        return ()
    ours: set[str] = set()
    for source_id, _, _ in sources:
        ours.update(await stores.hashes.get_many(source_id, parked))
    keys = [u for u in parked if u in ours][:limit]
    return tuple(v for v in await key_views(stores, keys) if v.state is PageState.waiting)


# --------------------------------------------------------------------------- JSON


def report_json(r: FetchReport) -> dict[str, Any]:
    return {
        "fetched_at": r.fetched_at,
        "result": r.result,
        "http_status": r.http_status,
        "items": r.items,
        # new or changed items sent on to publication; what became of each: the pages' states
        "changed": r.changed,
        "unchanged": r.unchanged,
        "refused": r.refused,
        "removed": r.removed,
        "problems": [p.as_dict() for p in r.problems],
        "problem_counts": r.counts,
        "more_problems": r.more,
        "fetch_ids": list(r.fetch_ids),
    }


def page_json(view: PageView) -> dict[str, Any]:
    """A page as every screen tells it: its state, the word and sentence for it, what says why."""
    return {
        "url": view.url,
        "state": view.state.value,
        "status": view.text,
        "explanation": view.explanation,
        "live": view.live,
        "held": view.state is PageState.held,  # not published at its newest version: the problems say why
        "problems": [p.as_dict() for p in view.problems],
        "waiting_for": [{"url": u, "why": why} for u, why in view.waiting_for],
        "deadline": view.deadline,
    }


def counts_json(counts: Counts) -> dict[str, int]:
    """Pages by state (every state, 0 included), and ``on_turbo``: those with a version of theirs on Turbo
    now (published ones, and held, waiting or refused ones whose previous version stays)."""
    return {**{s.value: counts[s] for s in PageState}, "on_turbo": counts.on_turbo}


def rollup_json(r: Rollup) -> dict[str, Any]:
    return {
        "feeds": r.feeds,
        "failing_feeds": r.failing_feeds,
        "items_refused": r.items_refused,
        "feed_problems": r.feed_problems,
        "images_failed": r.images_failed,
        "warnings": r.warnings,
        "conflicts": [p.as_dict() for p in r.conflicts],
        "conflicts_total": r.conflicts_total,
        "pages_with_problems": r.pages_with_problems,
        "pages_more": r.pages_more,
    }
