"""One model of a page's state, for every screen that shows one (docs/architecture.md section 10).

A webmaster asks one question of each page: is it on Turbo, and if not, why
and what do I do? The stores answer it together: the page table, the delay
store, the URL's owner and the page's problem row, combined by one SQL
expression (``PageState``, ``shared/stores/sql/problems.py``); an item the
parser refused is read from the latest fetch's problems. This module turns
that into a ``PageView``: the state, its word and explanation, the problems
that say why, the images a waiting page waits for and why, and where to open
it. The feed page, the host page, the check's and an upload's page, the API
and the CLI all read pages through here, and their counts through
``counts``, which applies the same rule, so "2 published" can never sit
beside one live page, nor "No problems" beside a held one.

A check (``POST /api/v1/feeds/check``) goes through the same cubes as a
registered feed, its pages stored under preview keys (``shared/previews.py``):
``task_views`` reads them with the same rule and says what *would* happen
("would be held back"), in the same words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlencode

from shared.previews import NOT_PREVIEWED, PREVIEWS_MAX, preview_key, preview_path
from shared.problems import Problem, Severity
from shared.stores import ImageRecord, ImageStatus, PageRow, PageState, Stores, Task
from shared.stores.problems import FetchReport

__all__ = [
    "LIVE",
    "PROBLEM_STATES",
    "UNDECIDED",
    "Counts",
    "PageView",
    "StateWord",
    "counts",
    "key_views",
    "refused_links",
    "source_views",
    "state_word",
    "task_views",
]

#: the states in which a version of the page is served
LIVE = frozenset({PageState.published, PageState.incomplete})
#: the states a webmaster has something to fix in (their problems say what)
PROBLEM_STATES = frozenset({PageState.held, PageState.incomplete, PageState.refused, PageState.outranked})
#: the states of a page whose verdict is not in yet: its images are being fetched, or it is on its way
UNDECIDED = frozenset({PageState.waiting, PageState.on_its_way})


@dataclass(frozen=True, slots=True)
class StateWord:
    #: the word of a live source's page, and of a check's preview ("would be ...")
    text: str
    preview: str
    explanation: str
    tone: str


_WORDS: dict[PageState, StateWord] = {
    PageState.published: StateWord("Published", "Would be published", "On Turbo with all its content.", "ok"),
    PageState.incomplete: StateWord(
        "Published without some content",
        "Would be published without some content",
        "On Turbo, but without what its problems name (an image late or failing for now). Fix it and "
        "press Fetch now: the page is rebuilt whole.",
        "warn",
    ),
    PageState.held: StateWord(
        "Held back",
        "Would be held back",
        "Not published: it lost images or tables on the way, and its problems say which. Fix them and "
        "press Fetch now: it is tried again at once.",
        "bad",
    ),
    PageState.waiting: StateWord(
        "Waiting for images",
        "Checking its images",
        "Its images are being copied to our CDN; it is published as soon as they are in, or at the "
        "deadline without those still missing.",
        "quiet",
    ),
    PageState.on_its_way: StateWord(
        "Being prepared", "Being prepared", "Read from the feed a moment ago; it is on its way.", "quiet"
    ),
    PageState.refused: StateWord(
        "Refused",
        "Would be refused",
        "This item cannot become a page: its problem says why and how to fix it.",
        "bad",
    ),
    PageState.outranked: StateWord(
        "Published from another source",
        "Published from another source",
        "Another source of this address has priority (partner API, then Turbo, then YML or RSS, then the "
        "autoparser); this one's version is not used.",
        "warn",
    ),
    PageState.not_previewed: StateWord(
        "Not previewed",
        "Not previewed",
        f"Read, with its problems reported; a check makes a preview of its first {PREVIEWS_MAX} items "
        "only, so its images were not fetched.",
        "quiet",
    ),
    PageState.removed: StateWord(
        "Removed",
        "Would be removed",
        'Not on Turbo any more: the source removed it (turbo="false", a deletion, gone from a catalog), '
        "or Turbo pages are switched off for the host.",
        "quiet",
    ),
}


def state_word(state: PageState) -> StateWord:
    return _WORDS[state]


@dataclass(frozen=True, slots=True)
class PageView:
    url: str
    state: PageState
    title: str = ""
    #: a version of it is served now (for a held, waiting or refused page: the one before)
    live: bool = False
    #: a check's page: what would happen, nothing was published
    preview: bool = False
    #: where to open it: the Turbo page, the preview, or nothing (the source's own URL is ``url``)
    link: str = ""
    problems: tuple[Problem, ...] = ()
    #: a waiting page's images with why each is missing, and when it goes at the latest
    waiting_for: tuple[tuple[str, str], ...] = ()
    deadline: datetime | None = None
    owner: str | None = None

    @property
    def word(self) -> StateWord:
        return _WORDS[self.state]

    @property
    def text(self) -> str:
        return self.word.preview if self.preview else self.word.text

    @property
    def tone(self) -> str:
        return self.word.tone

    @property
    def explanation(self) -> str:
        """The state's sentence, and what of the page is served meanwhile."""
        base = self.word.explanation
        if self.preview:
            return base
        if self.state in (PageState.held, PageState.waiting, PageState.refused, PageState.on_its_way):
            return base + (" Its previous version stays on Turbo meanwhile." if self.live else "")
        if self.state is PageState.outranked and self.owner:
            return f"{base} It is published from {self.owner}."
        return base


@dataclass(frozen=True, slots=True)
class Counts:
    """Pages by state, and how many of them have a version of theirs on Turbo now."""

    by_state: Mapping[PageState, int] = field(default_factory=dict)
    #: pages with a version on Turbo from their own source: the published ones, and the held, waiting
    #: or refused ones whose previous version stays (not those another source took over)
    on_turbo: int = 0

    def __getitem__(self, state: PageState) -> int:
        return self.by_state.get(state, 0)

    @property
    def waiting(self) -> int:
        return self[PageState.waiting]

    @property
    def with_problems(self) -> int:
        return sum(self[s] for s in PROBLEM_STATES)

    @property
    def total(self) -> int:
        return sum(self.by_state.values())

    def shown(self) -> list[tuple[PageState, int, StateWord]]:
        """The states that have pages, in ``PageState``'s order, with their words."""
        return [(s, self[s], _WORDS[s]) for s in PageState if self[s]]

    def __add__(self, other: Counts) -> Counts:
        total: Counter[PageState] = Counter(self.by_state)
        total.update(other.by_state)
        return Counts(dict(total), self.on_turbo + other.on_turbo)


def refused_links(report: FetchReport | None) -> dict[str, list[Problem]]:
    """The items a fetch refused, by their link, with their problems (``conflict.outranked`` included)."""
    out: dict[str, list[Problem]] = {}
    for p in report.problems if report else ():
        if p.severity is Severity.error and p.where.link and (p.where.item is not None or p.where.feed):
            out.setdefault(p.where.link, []).append(p)
    return out


def _turbo_link(url: str) -> str:
    return "/turbo?" + urlencode({"url": url})


def _why(rec: ImageRecord | None) -> str:
    if rec is None:
        return "not fetched yet"
    if rec.status is ImageStatus.pending:
        return "ordered: our crawler fetches it in your host's turn"
    if rec.status is ImageStatus.failed:
        return f"failed ({(rec.reason or 'failed').replace('_', ' ')}); tried again"
    return "copied; the page is about to be released"


async def _views(
    stores: Stores, rows: Iterable[PageRow], *, url_of: Mapping[str, str] | None = None, task: str | None = None
) -> list[PageView]:
    rows = list(rows)
    pending = sorted({u for r in rows for u in r.pending})
    records = await stores.images.get_many(pending) if pending else {}
    out = []
    for r in rows:
        url = (url_of or {}).get(r.key, r.key)
        if task is not None:
            link = preview_path(task, url) if r.state in LIVE else ""
        else:
            link = _turbo_link(url) if r.live else ""
        out.append(
            PageView(
                url=url,
                state=r.state,
                title=r.title,
                live=r.live,
                preview=task is not None,
                link=link,
                problems=r.problems.problems if r.problems else (),
                waiting_for=tuple((u, _why(records.get(u))) for u in sorted(r.pending)),
                deadline=r.deadline,
                owner=r.owner,
            )
        )
    return out


def _refused_state(problems: Sequence[Problem]) -> PageState:
    return PageState.outranked if all(p.code == "conflict.outranked" for p in problems) else PageState.refused


def _overlay(view: PageView, refused: Sequence[Problem]) -> PageView:
    """A page whose item the latest fetch refused: refused (or outranked), whatever was published before."""
    return PageView(
        url=view.url,
        state=_refused_state(refused),
        title=view.title,
        live=view.live,
        link=view.link,
        problems=tuple(refused),
    )


async def source_views(
    stores: Stores,
    source_id: str,
    *,
    latest: FetchReport | None = None,
    limit: int = 50,
    states: Iterable[PageState] = (),
) -> list[PageView]:
    """The first ``limit`` pages of ``source_id`` in URL order (in ``states`` only, when given), then the
    items ``latest`` refused that never made a page."""
    rows = await stores.problems.page_rows(source_id=source_id, limit=limit, states=states)
    views = await _views(stores, rows)
    refused = refused_links(latest)
    views = [_overlay(v, refused[v.url]) if v.url in refused else v for v in views]
    known = {v.url for v in views}
    for url, problems in refused.items():
        if url not in known and len(views) < limit * 2:
            views.append(_overlay(PageView(url=url, state=PageState.refused), problems))
    return views


async def key_views(stores: Stores, keys: Sequence[str], *, latest: FetchReport | None = None) -> list[PageView]:
    """The pages of ``keys`` (URLs: pages with problems, pages waiting), in that order."""
    views = await _views(stores, await stores.problems.page_rows(keys=keys, limit=len(keys)))
    refused = refused_links(latest)
    return [_overlay(v, refused[v.url]) if v.url in refused else v for v in views]


#: a task item's result (``cubes/parser/status.py``) -> the state it is when it made no page
_TASK_RESULTS = {
    "rejected": PageState.refused,
    "conflict": PageState.outranked,
    "deleted": PageState.removed,
    NOT_PREVIEWED: PageState.not_previewed,
}


async def task_views(stores: Stores, task: Task) -> list[PageView]:
    """Every item of an upload or a check, as its page stands now (a check's: its preview)."""
    keys = {}
    for item in task.items:
        if item.status == "preview":
            keys[preview_key(task.task_id, item.url)] = item.url
        elif item.status not in _TASK_RESULTS:
            keys[item.url] = item.url
    rows = {r.key: r for r in await stores.problems.page_rows(keys=list(keys), limit=len(keys))}
    previews = {k: u for k, u in keys.items() if k != u}
    seen = await _views(
        stores, [rows[k] for k in keys if k in rows and k in previews], url_of=previews, task=task.task_id
    )
    live = await _views(stores, [rows[k] for k in keys if k in rows and k not in previews])
    by_url = {v.url: v for v in [*seen, *live]}
    # a check, or a debug upload: nothing of it is published, every item says what would happen
    dry = bool(task.source_url) or bool(previews)
    out = []
    for item in task.items:
        view = by_url.get(item.url)
        if item.status in _TASK_RESULTS or view is None:
            state = _TASK_RESULTS.get(item.status, PageState.on_its_way)
            view = PageView(url=item.url, state=state, preview=dry, problems=item.problems)
        elif item.problems:  # warnings of the item (recovered markup...) beside what the page lost
            view = PageView(
                url=view.url,
                state=view.state,
                title=view.title,
                live=view.live,
                preview=view.preview,
                link=view.link,
                problems=(*view.problems, *item.problems),
                waiting_for=view.waiting_for,
                deadline=view.deadline,
            )
        out.append(view)
    return out


async def counts(stores: Stores, sources: Iterable[tuple[str, str | None, FetchReport | None]]) -> Counts:
    """Pages by state over ``sources``: (source id, host or None for all its hosts, its latest fetch).

    The items a source's latest fetch refused count as refused, as its page list shows them
    (``source_views``), whatever the store holds of an earlier version.
    """
    total = Counts()
    for source_id, host, latest in sources:
        stored = await stores.problems.state_counts(source_id, host=host)
        found: Counter[PageState] = Counter({state: n for state, (n, _) in stored.items()})
        served = sum(live for _, live in stored.values())
        refused = refused_links(latest)
        if refused:
            entries = await stores.hashes.get_many(source_id, refused)
            mine = [u for u in refused if u in entries]
            for row in await stores.problems.page_rows(keys=mine, limit=len(mine)):
                if found[row.state] > 0:
                    found[row.state] -= 1
            found.update(_refused_state(problems) for problems in refused.values())
        total = total + Counts({s: n for s, n in found.items() if n > 0}, served)
    return total
