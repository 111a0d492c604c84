"""The status views' view model: what each cell says and how it is coloured.

Between the data (``gather.py``) and the markup (``html/status.html``,
``html/console/host.html``): every decision -- is a cube running, crashed or
paused; is a lane slowed down; which words describe the overload -- is made
here in plain Python and tested without HTML. The templates only lay it out,
and escape every value (``jinja.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cubes.frontend.jinja import duration
from cubes.frontend.status.gather import NEVER, HostStatus, PipelineStatus
from shared.clock import at
from shared.problems import Where
from shared.status import is_fresh, percentile, pipeline_lag
from shared.stores import Feed, StatusSnapshot
from shared.webmaster.words import Word, lane_word, result_word

__all__ = [
    "Banner",
    "CubeRow",
    "FeedRow",
    "LaneView",
    "Moment",
    "PipelineView",
    "lane_view",
    "moment",
    "pipeline_view",
    "result_class",
]


@dataclass(frozen=True, slots=True)
class Moment:
    """A point in time as a cell shows it: ``09:10:00 UTC`` (or a date when far), and ``in 10 min``."""

    iso: str
    shown: str
    relative: str


def moment(value: datetime | float | None, now: float) -> Moment | None:
    if value is None:
        return None
    ts = value.timestamp() if isinstance(value, datetime) else value
    when = at(ts)
    shown = when.strftime("%H:%M:%S") if abs(ts - now) < 86_400 else when.strftime("%d %b %Y, %H:%M")
    rel = f"in {duration(ts - now)}" if ts > now else f"{duration(now - ts)} ago"
    return Moment(when.isoformat(), f"{shown} UTC", rel)


def result_class(result: str | None) -> str:
    """The colour of a result: its word's tone (``shared/webmaster/words.py``)."""
    return result_word(result).tone


@dataclass(frozen=True, slots=True)
class LaneView:
    rate: float
    ceiling: float
    #: "paused", "slowed", "fetching" or "ready"
    state: str
    in_flight: int = 0
    concurrency: int = 1
    paused_until: Moment | None = None
    notes: tuple[str, ...] = ()

    @property
    def word(self) -> Word:
        """The state in words, with what it means (``shared/webmaster/words.py``)."""
        return lane_word(self.state)


def lane_view(lane: dict[str, Any] | None, now: float) -> LaneView | None:
    if lane is None:
        return None
    rate, ceiling = float(lane.get("rate") or 0), float(lane.get("ceiling") or 0)
    notes = []
    if lane.get("crawl_delay"):
        notes.append(f"Crawl-delay {float(lane['crawl_delay']):g} s")
    if lane.get("backoff_incidents"):
        notes.append(f"429 back-offs in a row: {int(lane['backoff_incidents'])}")
    in_flight, concurrency = int(lane.get("in_flight") or 0), int(lane.get("concurrency") or 1)
    if lane.get("paused_until"):
        notes.insert(0, str(lane.get("pause_reason") or ""))
        return LaneView(
            rate,
            ceiling,
            "paused",
            in_flight,
            concurrency,
            moment(float(lane["paused_until"]), now),
            tuple(n for n in notes if n),
        )
    state = "slowed" if rate < ceiling else "fetching" if in_flight else "ready"
    return LaneView(rate, ceiling, state, in_flight, concurrency, None, tuple(notes))


@dataclass(frozen=True, slots=True)
class Banner:
    """The overload banner: all work flows, or what is paused and why."""

    hot: bool
    text: str = ""
    works: str = ""
    lag: int | None = None
    since: Moment | None = None
    held: str = ""
    by_group: str = ""


@dataclass(frozen=True, slots=True)
class CubeRow:
    cube: str
    instance: str
    #: "running", "input paused" or "crashed" (a process that stopped cleanly is not listed at all)
    state: str
    processed: int
    lag: int
    lag_hot: bool
    retried: int
    dead_lettered: int
    reported: Moment | None


@dataclass(frozen=True, slots=True)
class FeedRow:
    feed: Feed
    result_class: str
    #: its last result in words (``shared/webmaster/words.py``)
    result: Word
    last_fetch: Moment | None
    next_fetch: Moment | None
    #: "line 12, column 5" or ""
    where: str


def feed_row(feed: Feed, now: float) -> FeedRow:
    st = feed.status
    where = Where(line=st.error_line, column=st.error_column).describe()
    word = result_word(st.last_result)
    return FeedRow(feed, word.tone, word, moment(st.last_fetch_at, now), moment(st.next_fetch_at, now), where)


@dataclass
class PipelineView:
    status: PipelineStatus
    banner: Banner
    cubes: list[CubeRow] = field(default_factory=list)
    dlq: dict[str, int] = field(default_factory=dict)
    p50: float | None = None
    p99: float | None = None
    #: feeds by their last result, in words
    results: list[tuple[Word, int]] = field(default_factory=list)

    @property
    def interval_s(self) -> float:
        return self.status.settings.runtime.status_interval_s


def _banner(st: PipelineStatus, lag: int | None, by_group: dict[str, int], paused: list[StatusSnapshot]) -> Banner:
    rt = st.settings.runtime
    groups = " · ".join(f"{g} {n:,}" for g, n in sorted(by_group.items()))
    if paused:
        works = sorted({str(w) for s in paused for w in s.data.get("paused") or []}, key=str.lower)
        since = min((str(s.data.get("since") or "") for s in paused), default="")
        held: dict[str, int] = {}
        for s in paused:
            for work, n in (s.data.get("deferred") or {}).items():
                held[work] = held.get(work, 0) + int(n)
        return Banner(
            hot=True,
            works=", ".join(works),
            lag=lag,
            since=moment(datetime.fromisoformat(since), st.now) if since else None,
            held=", ".join(f"{w} ({n:,})" for w, n in sorted(held.items(), key=lambda i: i[0].lower())),
            by_group=groups,
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
    return Banner(hot=False, text=text, lag=lag, by_group=groups)


def _cube_row(snap: StatusSnapshot, st: PipelineStatus, interval_s: float) -> CubeRow:
    d = snap.data
    if not is_fresh(snap, st.now, interval_s):
        state = "crashed"
    elif d.get("breaker_open"):
        state = "input paused"
    else:
        state = "running"
    lag = int(d.get("lag") or 0)
    threshold = st.settings.runtime.overload_lag
    return CubeRow(
        cube=str(d.get("cube", "")),
        instance=str(d.get("instance", "")),
        state=state,
        processed=int(d.get("processed") or 0),
        lag=lag,
        lag_hot=bool(threshold and lag >= threshold),
        retried=int(d.get("retried") or 0),
        dead_lettered=int(d.get("dead_lettered") or 0),
        reported=moment(snap.updated_at, st.now),
    )


def _dlq(cubes: list[StatusSnapshot]) -> dict[str, int]:
    """Records per dead-letter topic (every process reports the same topics: take the latest)."""
    depth: dict[str, int] = {}
    for snap in sorted(cubes, key=lambda s: s.updated_at):
        for topic, n in (snap.data.get("dlq") or {}).items():
            depth[topic] = int(n)
    return dict(sorted(depth.items()))


def pipeline_view(st: PipelineStatus) -> PipelineView:
    interval_s = st.settings.runtime.status_interval_s
    lag, by_group = pipeline_lag(st.cubes, st.settings.runtime.overload_groups, st.now, interval_s)
    paused = [s for s in st.overload if is_fresh(s, st.now, interval_s) and s.data.get("overloaded")]
    cubes = sorted(st.cubes, key=lambda s: (str(s.data.get("cube")), s.name))
    return PipelineView(
        status=st,
        banner=_banner(st, lag, by_group, paused),
        cubes=[_cube_row(s, st, interval_s) for s in cubes],
        dlq=_dlq(st.cubes),
        p50=percentile(st.freshness, 0.5),
        p99=percentile(st.freshness, 0.99),
        results=[(result_word(None if r == NEVER else r), n) for r, n in st.results.items()],
    )


@dataclass
class HostView:
    status: HostStatus
    lane: LaneView | None
    feeds: list[FeedRow]


def host_view(st: HostStatus) -> HostView:
    return HostView(st, lane_view(st.lane, st.now), [feed_row(f, st.now) for f in st.feeds])
