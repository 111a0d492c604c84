"""The problem store's contract: fetch history and what published pages lost (docs/architecture.md section 10).

Two kinds of rows, both made of ``shared.problems.Problem`` objects:

* ``FetchReport`` -- one per fetch of a feed (a parse, an unchanged body, a
  failed fetch): its outcome, its counts and its problems (capped, with the
  rest counted by code). The last ``keep`` per feed are kept: the feed's
  history. A fetch ordered with "fetch now" carries the order's id
  (``fetch_ids``), so the answer to the order can link to its outcome. One
  fetch read again (its crawl result redelivered: a crash or a timeout before
  its commit) keeps the counts of the attempt that published (``merge_attempts``):
  a retry that found every item already published must not turn the fetch
  that published 100,000 offers into "unchanged, 0 published".
* ``PageProblems`` -- what one version of a page lost on its way (an image
  that answered 404, an image that was late): written by the media and delay
  cubes when they publish a document without something. The newest version of
  a URL wins. Reads return only the rows of the version that is live in the
  page store, so a page rebuilt without the problem stops showing it at once,
  with nothing to clear (the reads join the page table of the same database,
  as ``StatusStore.page_counts`` does).
* ``PageRow`` -- where one page of a source stands now (``PageState``): what
  the page table, the delay store, the URL's owner and its problem row say of
  it together, decided in one SQL expression (``sql/problems.py``,
  ``STATE_SQL``) so that a page list and its counts can never disagree.
  ``shared/pages/state.py`` turns it into the words every screen shows.

One implementation for both engines: ``sql/problems.py``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from shared.problems import Problem
from shared.problems.history import Occurrence

__all__ = [
    "KEEP_REPORTS",
    "READ_A_BODY",
    "FetchReport",
    "PageProblems",
    "PageRow",
    "PageState",
    "ProblemStore",
    "merge_attempts",
]

#: fetches kept per feed: a day of a feed fetched hourly, a few hours of a busy one -- enough to see
#: when a problem started and whether the last fix helped
KEEP_REPORTS = 20


@dataclass(frozen=True, slots=True)
class FetchReport:
    feed_id: str
    #: when the crawler fetched the body (the report's identity within the feed)
    fetched_at: datetime
    #: parsed / partial / parse_error / unchanged / not_modified / or the fetch's FetchStatus value
    result: str
    http_status: int | None = None
    #: items in the body; None when nothing was read
    items: int | None = None
    #: new or changed items sent on to be published (the page store may hold some back: their
    #: pages' ``PageState`` says what became of them), unchanged ones, items refused, pages removed
    changed: int = 0
    unchanged: int = 0
    refused: int = 0
    removed: int = 0
    #: the first problems in full (errors first), and every problem counted by code
    problems: tuple[Problem, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    more: int = 0
    #: the "fetch now" orders this fetch answered
    fetch_ids: tuple[str, ...] = ()


#: the results of a fetch whose body was read and parsed (the others: unchanged, not modified, failed)
READ_A_BODY = frozenset({"parsed", "partial", "parse_error"})


def merge_attempts(stored: FetchReport | None, new: FetchReport) -> FetchReport:
    """The report of one fetch (``feed_id``, ``fetched_at``) after another attempt at it.

    Attempts redo, they never undo: what one attempt published stays published, and the next counts
    it as this fetch's all the same (its hash recorded with this fetch's ``seen_at``: a catalog's load
    resumed, ``cubes/parser/items.py``) or publishes it again (the hashes were to be recorded after a
    commit that never came). So the fetch published the most any attempt did, and an item is
    unchanged only if no attempt of it published it. A same-body shortcut (``unchanged``: the body
    recorded whole, after a commit the runtime then lost) keeps the attempt that read the body.
    """
    if stored is None or (stored.feed_id, stored.fetched_at) != (new.feed_id, new.fetched_at):
        return new
    fetch_ids = tuple(dict.fromkeys((*stored.fetch_ids, *new.fetch_ids)))
    if new.result == "unchanged" and stored.result in READ_A_BODY:
        return replace(stored, fetch_ids=fetch_ids)
    if new.result not in READ_A_BODY or stored.result not in READ_A_BODY:
        return new  # not two reads of one body (a conflict noted, a failure): the newer says it
    changed = max(stored.changed, new.changed)
    earlier = changed - new.changed  # sent on by an earlier attempt, unchanged to this one
    return replace(new, changed=changed, unchanged=max(0, new.unchanged - earlier), fetch_ids=fetch_ids)


@dataclass(frozen=True, slots=True)
class PageProblems:
    url: str
    version: int
    host: str
    #: the document's ``SourceRef``: kind (rss, turbo, yml, upload, ...) and id (a feed id, a task id)
    source_kind: str
    source_id: str
    problems: tuple[Problem, ...]
    updated_at: datetime | None = None
    #: the page was held back at this version, not published (it lost content: ``shared/pages/completeness.py``;
    #: the autoparser's guard): the row shows until a version at least as new is stored
    held: bool = False


class PageState(StrEnum):
    """Where a page of a source stands now; each is one branch of ``sql/problems.STATE_SQL``, in this order."""

    #: another source of higher priority owns the URL: the page shown is that source's
    outranked = "outranked"
    #: the source removed it (a tombstone), or its Turbo pages were switched off
    removed = "removed"
    #: its newest version waits in the delay store for its images
    waiting = "waiting"
    #: its newest version was held back: it lost content (its problem row says what)
    held = "held"
    #: live, without something it lost (an image late or failing for now, or holding switched off)
    incomplete = "incomplete"
    #: live, whole
    published = "published"
    #: read from the source, not yet parked or written (on the bus between the cubes)
    on_its_way = "on_its_way"
    #: the source's item was refused by the parser (never from the store: ``shared/pages/state.py``
    #: reads it from the latest fetch's problems)
    refused = "refused"
    #: a check's item past its previews (never from the store: the task says so)
    not_previewed = "not_previewed"


@dataclass(frozen=True, slots=True)
class PageRow:
    """One page key as the stores hold it now; ``state`` is decided by ``STATE_SQL``."""

    key: str
    state: PageState
    title: str = ""
    #: a version of the page is served now (the previous one, for a held or waiting page)
    live: bool = False
    written_at: datetime | None = None
    #: the problem row of the version that tells why (held, incomplete); None otherwise
    problems: PageProblems | None = None
    #: parked: when it is released at the latest, and the media it still waits for
    deadline: datetime | None = None
    pending: frozenset[str] = frozenset()
    #: outranked: the source that owns the URL
    owner: str | None = None


class ProblemStore(Protocol):
    async def add_report(self, report: FetchReport, *, keep: int = KEEP_REPORTS) -> None:
        """Store ``report`` and keep the newest ``keep``; the same feed and ``fetched_at`` again is another
        attempt at that fetch, merged with the stored one (``merge_attempts``). Its codes are observed in
        the feed's problem history (``problem_history.transitions``)."""
        ...

    async def reports(self, feed_id: str, limit: int = KEEP_REPORTS) -> builtins.list[FetchReport]:
        """The feed's reports, newest first."""
        ...

    async def history(self, feed_id: str, *, limit: int = 100) -> builtins.list[Occurrence]:
        """Each code's occurrences on the feed (``shared/problems/history.py``): the open ones first, then the
        most recently seen."""
        ...

    async def latest_reports(self, feed_ids: Iterable[str]) -> dict[str, FetchReport]:
        """The newest report of each feed that has one."""
        ...

    async def report_for_fetch(self, feed_id: str, fetch_id: str) -> FetchReport | None:
        """The report of the fetch that answered the "fetch now" order ``fetch_id``, once there is one."""
        ...

    async def put_page_problems(self, rows: Sequence[PageProblems], *, now: datetime | None = None) -> None:
        """Store each row unless a higher version of its URL is stored (an equal one is replaced)."""
        ...

    async def page_problems(
        self,
        *,
        source_id: str | None = None,
        host: str | None = None,
        url: str | None = None,
        limit: int = 200,
    ) -> builtins.list[PageProblems]:
        """Rows of live pages at their stored version, and of pages held back at a version newer than
        the stored one (or with none stored), by source, host or URL; the newest first."""
        ...

    async def page_rows(
        self,
        *,
        source_id: str | None = None,
        keys: Sequence[str] = (),
        limit: int = 200,
        after: str | None = None,
        states: Iterable[PageState] = (),
    ) -> builtins.list[PageRow]:
        """The pages of ``source_id`` (the hash store's ``feed:<id>``, ``autoparser:<host>``...) in URL
        order, at most ``limit`` after ``after``, in ``states`` only when given; or those of ``keys`` (a
        preview's keys) in their order."""
        ...

    async def state_counts(self, source_id: str, *, host: str | None = None) -> dict[PageState, tuple[int, int]]:
        """How many pages of ``source_id`` are in each state (on ``host`` only, when given), and how many of
        those have a version of theirs on Turbo (a held page's previous one, say): (pages, served)."""
        ...
