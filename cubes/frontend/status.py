"""The status page: per host and feed, per crawl lane, per cube, freshness and overload (issue 9; DESIGN.md s.1).

For a webmaster (``/status?host=news.example``: their feeds' last fetch, HTTP
status, result, parse errors with line and column, pages written, documents
waiting for images, next fetch, and how fast their host is crawled) and for
an operator (every host, each cube process's lag and dead letters, the
freshness of recent pages, and which low-value work is paused under overload,
and why). ``/api/v1/status`` gives the same as JSON.

Everything comes from the stores, so the page is true in any deployment: the
feed and delay stores, the page table (counts and ``seen_at`` -> ``written_at``
of the most recent pages), and the snapshots that processes publish
(``shared/status.py``): ``cube:`` (runner stats, lag, DLQ depth), ``lanes:``
(the crawler's lanes) and ``overload:`` (the overload watchers). A snapshot
its process stopped rewriting is shown as stopped and ignored for lag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from typing import Any
from urllib.parse import urlencode

from cubes.frontend.templates import layout
from shared.config import Settings
from shared.status import CUBE_PREFIX, LANES_PREFIX, OVERLOAD_PREFIX, is_fresh, percentile, pipeline_lag
from shared.stores import Feed, StatusSnapshot, Stores

__all__ = ["FRESHNESS_SAMPLE", "MAX_FEEDS", "MAX_HOSTS", "StatusView", "gather_status", "render_status", "status_json"]

#: pages whose seen -> written time makes the freshness figures: the latest thousand writes
#: are minutes of a busy pipeline and days of a quiet one, either way "recent"
FRESHNESS_SAMPLE = 1000
#: rows per table: the page is for people; more is one ?host= away
MAX_HOSTS = 200
MAX_FEEDS = 500


@dataclass
class HostRow:
    host: str
    pages: int = 0
    waiting: int = 0
    feeds: list[Feed] = field(default_factory=list)
    lane: dict[str, Any] | None = None

    @property
    def failing(self) -> int:
        return sum(1 for f in self.feeds if f.status.consecutive_failures)

    def interest(self) -> tuple[int, int, int, int, str]:
        paused = bool(self.lane and self.lane.get("paused_until"))
        return (-self.failing, -int(paused), -self.waiting, -self.pages, self.host)


@dataclass
class StatusView:
    """Everything the status page shows, read once per request."""

    now: float
    settings: Settings
    host_filter: str
    pages: int
    feeds: int
    waiting: int
    hosts: list[HostRow]
    more_hosts: int
    freshness: list[float]
    cubes: list[StatusSnapshot]
    overload: list[StatusSnapshot]
    lanes_total: int

    @property
    def interval_s(self) -> float:
        return self.settings.runtime.status_interval_s

    def fresh(self, snap: StatusSnapshot) -> bool:
        return is_fresh(snap, self.now, self.interval_s)

    @property
    def p50(self) -> float | None:
        return percentile(self.freshness, 0.5)

    @property
    def p99(self) -> float | None:
        return percentile(self.freshness, 0.99)

    @property
    def lag(self) -> tuple[int | None, dict[str, int]]:
        return pipeline_lag(self.cubes, self.settings.runtime.overload_groups, self.now, self.interval_s)

    @property
    def dlq(self) -> dict[str, int]:
        """Records per dead-letter topic (every process reports the same topics: take the latest)."""
        depth: dict[str, int] = {}
        for snap in sorted(self.cubes, key=lambda s: s.updated_at):
            for topic, n in (snap.data.get("dlq") or {}).items():
                depth[topic] = int(n)
        return dict(sorted(depth.items()))

    @property
    def paused(self) -> list[StatusSnapshot]:
        return [s for s in self.overload if self.fresh(s) and s.data.get("overloaded")]


def _lanes_by_host(snaps: list[StatusSnapshot], now: float, interval_s: float) -> tuple[dict[str, dict[str, Any]], int]:
    """The newest lane row per host over the fresh ``lanes:`` snapshots, and the lanes in memory."""
    rows: dict[str, dict[str, Any]] = {}
    total = 0
    for snap in sorted(snaps, key=lambda s: s.updated_at):  # newer snapshots overwrite older rows
        if not is_fresh(snap, now, interval_s):
            continue
        total += int(snap.data.get("total") or 0)
        for lane in snap.data.get("lanes") or []:
            if isinstance(lane, dict) and lane.get("host"):
                rows[str(lane["host"])] = lane
    return rows, total


async def gather_status(stores: Stores, settings: Settings, now: float, *, host: str = "") -> StatusView:
    """Read what the page shows; ``host`` narrows hosts and feeds to that host."""
    host = host.strip().lower()
    feeds = await stores.feeds.list()
    waiting = await stores.delay.waiting_by_host()
    counts = await stores.status.page_counts()
    snaps = await stores.status.get_status()
    lanes, lanes_total = _lanes_by_host(
        [s for s in snaps if s.name.startswith(LANES_PREFIX)], now, settings.runtime.status_interval_s
    )
    by_host: dict[str, HostRow] = {}

    def row(h: str) -> HostRow:
        return by_host.setdefault(h, HostRow(h))

    for f in feeds:
        row(f.host).feeds.append(f)
    for h, n in waiting.items():
        row(h).waiting = n
    for h, n in counts.items():
        row(h).pages = n
    for h, lane in lanes.items():
        row(h).lane = lane
    rows = sorted((r for r in by_host.values() if not host or r.host == host), key=HostRow.interest)
    return StatusView(
        now=now,
        settings=settings,
        host_filter=host,
        pages=sum(counts.values()),
        feeds=len(feeds),
        waiting=sum(waiting.values()),
        hosts=rows[:MAX_HOSTS],
        more_hosts=max(0, len(rows) - MAX_HOSTS),
        freshness=await stores.status.freshness(FRESHNESS_SAMPLE),
        cubes=[s for s in snaps if s.name.startswith(CUBE_PREFIX)],
        overload=[s for s in snaps if s.name.startswith(OVERLOAD_PREFIX)],
        lanes_total=lanes_total,
    )


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def status_json(view: StatusView) -> dict[str, Any]:
    """The view as JSON (``/api/v1/status``)."""
    lag, by_group = view.lag
    return {
        "pages": view.pages,
        "feeds": view.feeds,
        "waiting_for_media": view.waiting,
        "freshness_s": {"p50": view.p50, "p99": view.p99, "sample": len(view.freshness)},
        "overload": {
            "lag": lag,
            "by_group": by_group,
            "threshold": view.settings.runtime.overload_lag,
            "resume_below": view.settings.runtime.overload_resume_lag,
            "watchers": [{**s.data, "fresh": view.fresh(s)} for s in view.overload],
        },
        "hosts": [
            {
                "host": r.host,
                "pages": r.pages,
                "waiting_for_media": r.waiting,
                "lane": r.lane,
                "feeds": [
                    {
                        "feed_id": f.feed_id,
                        "url": f.url,
                        "format": f.format,
                        "last_fetch_at": _iso(f.status.last_fetch_at),
                        "http_status": f.status.last_http_status,
                        "result": f.status.last_result,
                        "items": f.status.items,
                        "error": f.status.last_error,
                        "error_line": f.status.error_line,
                        "error_column": f.status.error_column,
                        "next_fetch_at": _iso(f.status.next_fetch_at),
                        "consecutive_failures": f.status.consecutive_failures,
                    }
                    for f in r.feeds[:MAX_FEEDS]
                ],
            }
            for r in view.hosts
        ],
        "more_hosts": view.more_hosts,
        "cubes": [{**s.data, "updated_at": s.updated_at.isoformat(), "fresh": view.fresh(s)} for s in view.cubes],
        "dlq": view.dlq,
    }


# --------------------------------------------------------------------------- HTML

_CSS = (
    ".wrap{max-width:78rem}"
    ".banner{background:var(--card);border:1px solid var(--line);border-left:.3rem solid var(--ok);"
    "border-radius:.9rem;padding:.8rem 1.1rem;margin:0 0 2rem;box-shadow:var(--shadow)}"
    ".banner.hot{border-left-color:var(--acc)}.banner.hot b{color:var(--acc)}.banner p{margin:.2rem 0}"
    ".warn{color:var(--acc)}td small,.sub{display:block;color:var(--mut);font-size:.8rem}"
    "td.msg{min-width:14rem;overflow-wrap:anywhere}td.feed{overflow-wrap:anywhere;min-width:12rem}"
    ".filter{display:flex;gap:.5rem;margin:0 0 1rem;max-width:30rem}"
    ".filter input{flex:1;font:inherit;padding:.4rem .7rem;border-radius:.6rem;border:1px solid var(--line);"
    "background:var(--card);color:var(--fg)}"
    ".filter button{font:inherit;padding:.4rem .9rem;border:0;border-radius:.6rem;background:var(--acc);color:#fff}"
)
_GOOD = {"ok", "parsed", "not_modified"}
_SO_SO = {"partial", "throttled"}


def _dur(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    s = abs(seconds)
    if s < 10:
        return f"{s:.1f} s"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 172_800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86_400:.0f} d"


def _time(ts: float | None, now: float, *, none: str = "—") -> str:
    if ts is None:
        return none
    when = datetime.fromtimestamp(ts, UTC)
    shown = when.strftime("%H:%M:%S") if abs(ts - now) < 86_400 else when.strftime("%d %b %Y, %H:%M")
    rel = f"in {_dur(ts - now)}" if ts > now else f"{_dur(now - ts)} ago"
    return f'<time datetime="{when.isoformat()}">{shown} UTC</time> <small>{rel}</small>'


def _dt(value: datetime | None, now: float, *, none: str = "—") -> str:
    return _time(None if value is None else value.timestamp(), now, none=none)


def _cls(result: str | None) -> str:
    return "ok" if result in _GOOD else "warn" if result in _SO_SO else "bad"


def _lane_cells(lane: dict[str, Any] | None, now: float) -> str:
    if lane is None:
        return "<td class=num>—</td><td><small>not crawled lately</small></td>"
    rate, ceiling = float(lane.get("rate") or 0), float(lane.get("ceiling") or 0)
    cells = f"<td class=num>{rate:g}/s<small>of {ceiling:g}/s</small></td>"
    notes = []
    if lane.get("crawl_delay"):
        notes.append(f"Crawl-delay {float(lane['crawl_delay']):g} s")
    if lane.get("backoff_incidents"):
        notes.append(f"429 back-offs in a row: {int(lane['backoff_incidents'])}")
    if lane.get("paused_until"):
        state = f'<span class="bad">paused until {_time(float(lane["paused_until"]), now)}</span>'
        notes.insert(0, escape(str(lane.get("pause_reason") or "")))
    elif rate < ceiling:
        state = '<span class="warn">slowed down</span>'
    elif lane.get("in_flight"):
        state = f'<span class="ok">fetching</span> {int(lane["in_flight"])}/{int(lane.get("concurrency") or 1)}'
    else:
        state = '<span class="ok">ready</span>'
    small = "".join(f"<small>{n}</small>" for n in notes if n)
    return cells + f"<td>{state}{small}</td>"


def _banner(view: StatusView) -> str:
    rt = view.settings.runtime
    lag, by_group = view.lag
    groups = " · ".join(f"{escape(g)} {n:,}" for g, n in sorted(by_group.items()))
    detail = f"<p class=sub>Lag by stage: {groups}</p>" if groups else ""
    paused = view.paused
    if paused:
        works = sorted({str(w) for s in paused for w in s.data.get("paused") or []}, key=str.lower)
        since = min((str(s.data.get("since") or "") for s in paused), default="")
        since_ts = datetime.fromisoformat(since).timestamp() if since else None
        held: dict[str, int] = {}
        for s in paused:
            for work, n in (s.data.get("deferred") or {}).items():
                held[work] = held.get(work, 0) + int(n)
        held_text = ", ".join(f"{escape(w)} ({n:,})" for w, n in sorted(held.items(), key=lambda i: i[0].lower()))
        return (
            '<section class="banner hot"><p><b>Under load: low-value work is paused</b> — '
            f"{escape(', '.join(works))}.</p>"
            f"<p>Why: pipeline lag {lag if lag is not None else '?':,} records, over the limit of "
            f"{rt.overload_lag:,}; it resumes by itself under {rt.overload_resume_lag:,}. "
            f"News feeds (RSS, Turbo), first fetches, images and partner uploads keep flowing.</p>"
            f"<p class=sub>Paused since {_time(since_ts, view.now)}"
            f"{'; held back so far: ' + held_text if held_text else ''}</p>{detail}</section>"
        )
    if rt.overload_lag <= 0:
        text = "Overload protection is off (runtime.overload_lag = 0)."
    elif lag is None:
        text = "All work flows. No lag measured yet (no running pipeline cube has reported)."
    else:
        text = (
            f"All work flows. Pipeline lag {lag:,} records; autoparser page crawling and YML re-fetches "
            f"would pause at {rt.overload_lag:,}."
        )
    return f'<section class="banner"><p>{text}</p>{detail}</section>'


def _hosts(view: StatusView) -> str:
    if not view.hosts:
        return '<p class="empty">No hosts yet. Register a feed and it appears here.</p>'
    rows = []
    for r in view.hosts:
        last = max((f.status.last_fetch_at for f in r.feeds if f.status.last_fetch_at), default=None)
        failing = f'<td class="num {"bad" if r.failing else "ok"}">{r.failing}</td>'
        link = f'<a href="/status?{escape(urlencode({"host": r.host}))}">{escape(r.host)}</a>'
        rows.append(
            f"<tr><td>{link}</td><td class=num>{r.pages:,}</td><td class=num>{len(r.feeds)}</td>{failing}"
            f"<td class=num>{r.waiting:,}</td>{_lane_cells(r.lane, view.now)}<td>{_dt(last, view.now)}</td></tr>"
        )
    more = f'<p class="sub">{view.more_hosts:,} more hosts: pick one with the box above.</p>' if view.more_hosts else ""
    return (
        '<div class="scroll"><table id="hosts"><thead><tr><th>Host</th><th class=num>Pages</th>'
        "<th class=num>Feeds</th><th class=num>Failing</th><th class=num>Waiting for images</th>"
        "<th class=num>Crawl rate</th><th>Crawl lane</th><th>Last fetch</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>{more}"
    )


def _feeds(view: StatusView) -> str:
    feeds = [f for r in view.hosts for f in r.feeds][:MAX_FEEDS]
    if not feeds:
        return '<p class="empty">No feeds registered for these hosts.</p>'
    rows = []
    for f in feeds:
        st = f.status
        error = ""
        if st.last_error:
            where = ""
            if st.error_line is not None:
                where = f"line {st.error_line}" + (f", column {st.error_column}" if st.error_column is not None else "")
                where = f"<b>{where}</b>: "
            error = f'<span class="bad">{where}{escape(st.last_error)}</span>'
        result = f'<span class="{_cls(st.last_result)}">{escape(st.last_result)}</span>' if st.last_result else "—"
        if st.consecutive_failures:
            result += f"<small>{st.consecutive_failures} failures in a row</small>"
        nxt = _dt(st.next_fetch_at, view.now, none="due now")
        rows.append(
            f"<tr><td class=feed>{escape(f.url)}<small>{escape(f.feed_id)}</small></td><td>{escape(f.format)}</td>"
            f"<td>{_dt(st.last_fetch_at, view.now, none='never')}</td>"
            f"<td class=num>{st.last_http_status if st.last_http_status is not None else '—'}</td>"
            f"<td>{result}</td><td class=num>{st.items if st.items is not None else '—'}</td>"
            f"<td class=msg>{error or '—'}</td><td>{nxt}</td></tr>"
        )
    return (
        '<div class="scroll"><table id="feeds"><thead><tr><th>Feed</th><th>Format</th><th>Last fetch</th>'
        "<th class=num>HTTP</th><th>Result</th><th class=num>Items</th><th>Errors</th><th>Next fetch</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _cubes(view: StatusView) -> str:
    if not view.cubes:
        return '<p class="empty">No cube has reported yet: snapshots come from running cubes.</p>'
    rows = []
    for s in sorted(view.cubes, key=lambda s: (str(s.data.get("cube")), s.name)):
        d = s.data
        if not view.fresh(s):
            state = '<span class="bad">stopped</span><small>no report lately</small>'
        elif d.get("breaker_open"):
            state = '<span class="bad">input paused</span><small>most messages were dead-lettered</small>'
        else:
            state = '<span class="ok">running</span>'
        lag = int(d.get("lag") or 0)
        lag_cls = "bad" if view.settings.runtime.overload_lag and lag >= view.settings.runtime.overload_lag else ""
        rows.append(
            f"<tr><td>{escape(str(d.get('cube', '')))}<small>{escape(str(d.get('instance', '')))}</small></td>"
            f"<td>{state}</td><td class=num>{int(d.get('processed') or 0):,}</td>"
            f'<td class="num {lag_cls}">{lag:,}</td><td class=num>{int(d.get("retried") or 0):,}</td>'
            f"<td class=num>{int(d.get('dead_lettered') or 0):,}</td>"
            f"<td>{_time(s.updated_at.timestamp(), view.now)}</td></tr>"
        )
    dlq = view.dlq
    dlq_rows = "".join(
        f'<tr><td>{escape(t)}</td><td class="num {"bad" if n else "ok"}">{n:,}</td></tr>' for t, n in dlq.items()
    )
    dlq_table = (
        '<div class="scroll"><table id="dlq"><thead><tr><th>Dead-letter queue</th><th class=num>Records</th>'
        f"</tr></thead><tbody>{dlq_rows}</tbody></table></div>"
        if dlq
        else ""
    )
    return (
        '<div class="scroll"><table id="cubes"><thead><tr><th>Cube</th><th>State</th><th class=num>Processed</th>'
        "<th class=num>Lag</th><th class=num>Retried</th><th class=num>Dead-lettered</th><th>Reported</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>{dlq_table}"
    )


def render_status(view: StatusView) -> str:
    """The status page's HTML."""
    n = len(view.freshness)
    title = f"Status of {view.host_filter}" if view.host_filter else "Pipeline status"
    form = (
        '<form class="filter" action="/status" method="get"><input type="search" name="host" '
        f'value="{escape(view.host_filter)}" placeholder="Your host, e.g. news.example" aria-label="Host">'
        '<button type="submit">Show</button></form>'
    )
    body = (
        f"<h2>{escape(title)}</h2>{_banner(view)}"
        '<section class="stats">'
        f'<div class="stat"><b>{view.pages:,}</b><span>Turbo pages</span></div>'
        f'<div class="stat"><b>{view.feeds:,}</b><span>feeds</span></div>'
        f'<div class="stat"><b>{view.waiting:,}</b><span>waiting for images</span></div>'
        f'<div class="stat"><b>{_dur(view.p50)}</b><span>freshness p50 (seen → written)</span></div>'
        f'<div class="stat"><b>{_dur(view.p99)}</b><span>freshness p99, last {n:,} pages</span></div>'
        "</section>"
        f"<h2>Hosts</h2>{form}{_hosts(view)}<h2>Feeds</h2>{_feeds(view)}"
    )
    if not view.host_filter:
        lanes = f"; {view.lanes_total:,} crawl lanes in memory" if view.lanes_total else ""
        body += f"<h2>Cubes</h2>{_cubes(view)}<p class=sub>Reports every {_dur(view.interval_s)}{lanes}.</p>"
    return layout(f"{title} · turbocubes", body, extra_css=_CSS)
