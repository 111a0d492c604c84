"""What a parse run leaves behind for people: feed status, fetch history, upload tasks (docs/architecture.md
section 10).

The webmaster sees, for a feed (webmaster API, console, CLI):

* the feed's status row: ``parse_result`` (parsed / partial / parse_error /
  conflict), the item count, and a one-line summary of the problems
  (``parse_error``) with the first one's line and column -- the parse fields of
  the row, which only the parser writes (``shared/stores/feeds.py``; the
  scheduler writes the fetch's own);
* the fetch's report (``shared/stores/problems.py``): how many items were
  published, unchanged, refused, removed, and *every* problem as a structured
  ``Problem`` (the first ``MAX_PROBLEMS`` in full, errors first, all of them
  counted by code) -- one report per fetch, the last few kept as its history.
  Failed and unchanged fetches get a report too, so the history has no gaps.

A partner sees the upload task: one result per item (ok / unchanged / deleted
/ rejected / conflict / preview) with its problems, the task's problems, and
their one-line texts (``errors``, for clients that predate problems). All are
capped -- the first ``MAX_TASK_ERRORS`` problems, the first
``MAX_TASK_ITEM_DETAILS`` items in full, the next ones with the code of their
problem, none past ``MAX_TASK_ITEMS`` -- and ``problem_counts`` counts every
problem by code, ``item_counts`` every item by status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from cubes.parser.model import ItemError, ParseResult
from cubes.parser.problems import capped, code_of, to_problem
from shared.errors import NotFound
from shared.messages import CrawlResult, FetchStatus
from shared.problems import Capped, Problem, fetch_problem, problem
from shared.runtime.cube import Output
from shared.stores import FeedStore, FetchReport, ProblemStore, Stores, TaskItem, TaskStatus, TaskStore
from shared.webmaster.feeds import FETCH_NOW_PREFIX

__all__ = ["Fetch", "Outcome", "note_conflict", "write_feed_status", "write_fetch_outcome", "write_task"]

log = logging.getLogger(__name__)

#: at most this many one-line errors go into a task's ``errors`` (its problems are capped the same way)
MAX_TASK_ERRORS = 50
#: items of a task that carry their problems in full; past them an item keeps its status and the code
#: of its first problem (the task's ``problem_counts`` counts every one): a task stays a few hundred KB
MAX_TASK_ITEM_DETAILS = 100
#: items of a task listed at all (the rest are counted by status, ``item_counts``): an upload of 100,000
#: empty offers stored 100,000 results (8 MB), and every read of the task (the API's status, the console)
#: decoded them on the event loop, 3.6 s each
MAX_TASK_ITEMS = 1000
#: results and problems of a run folded into its task on the loop; more go to a thread
_INLINE_RESULTS = 2000
#: what is kept of a problem without a code on an item past the cap
_SHORT_ERROR = 80
#: the status columns hold a sentence, not a report
MAX_ERROR_TEXT = 2000
#: per-item result statuses, as the report counts them
_PUBLISHED, _UNCHANGED, _REMOVED = {"ok", "preview"}, {"unchanged"}, {"deleted"}
_REFUSED = {"rejected", "conflict"}
#: reports of fetches that read no body (a failure, a 304, the same body, a conflict notice): the
#: problems of a body are those of the last report that is none of these
_NO_BODY = frozenset(
    {"unchanged", "not_modified", "conflict"} | {s.value for s in FetchStatus if s.value not in ("ok",)}
)


@dataclass
class Outcome:
    """What handling one body produced: outputs to publish, per-item results, problems."""

    outputs: list[Output] = field(default_factory=list)
    #: (url or link, status, error) per item, for upload tasks
    results: list[tuple[str, str, str | None]] = field(default_factory=list)
    errors: list[ItemError] = field(default_factory=list)
    #: store writes that may only happen once ``outputs`` are durable (``Context.after_commit``)
    writes: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    #: results already folded into counts by status (``tally``: a streamed catalog keeps no per-offer rows)
    tallied: Counter[str] = field(default_factory=Counter)
    #: the body must be read again next time even if unchanged (a held catalog loss, ``removals.py``)
    keep_reading: bool = False

    def merge(self, other: Outcome) -> None:
        self.outputs.extend(other.outputs)
        self.results.extend(other.results)
        self.errors.extend(other.errors)
        self.writes.extend(other.writes)
        self.tallied.update(other.tallied)

    def tally(self) -> None:
        """Fold the per-item results into counts (for a feed, whose status shows counts only)."""
        self.tallied.update(status for _, status, _ in self.results)
        self.results.clear()

    def count(self, statuses: set[str]) -> int:
        return sum(1 for _, status, _ in self.results if status in statuses) + sum(self.tallied[s] for s in statuses)


#: the codes a fetch itself is told (``Fetch.notes``), never carried over from an earlier report
_FETCH_NOTES = frozenset({"robots.crawl_delay_capped"})


@dataclass(frozen=True, slots=True)
class Fetch:
    """The crawler's side of a report: when, what HTTP said, and the "fetch now" orders it answers."""

    at: datetime
    http_status: int | None = None
    fetch_ids: tuple[str, ...] = ()
    #: what the crawler has to tell of the fetch itself (a Crawl-delay it capped), for every report of it
    notes: tuple[Problem, ...] = ()

    @classmethod
    def of(cls, msg: CrawlResult) -> Fetch:
        ids = tuple(r[len(FETCH_NOW_PREFIX) :] for r in msg.requesters if r.startswith(FETCH_NOW_PREFIX))
        notes: tuple[Problem, ...] = ()
        if msg.crawl_delay_capped is not None:
            asked = f"{msg.crawl_delay_capped:g}"
            notes = (
                problem(
                    "robots.crawl_delay_capped",
                    f"robots.txt of {msg.host} asks for a Crawl-delay of {asked} s between requests; "
                    "the crawler waits less (crawler.max_crawl_delay_s)",
                    feed=msg.feed_id,
                ),
            )
        return cls(msg.fetched_at, msg.http_status, ids, notes)

    def told(self, problems: tuple[Problem, ...], counts: dict[str, int]) -> tuple[tuple[Problem, ...], dict[str, int]]:
        """``problems`` and their ``counts`` with this fetch's own notes first."""
        if not self.notes:
            return problems, counts
        merged = dict(counts)
        for note in self.notes:
            merged[note.code] = merged.get(note.code, 0) + 1
        return (*self.notes, *problems), merged


def _summary(first: ItemError, refused_errors: list[ItemError], refused: int, whole: bool) -> str:
    """The status row's sentence: the refused items by code, then the first problem where it is."""
    text = to_problem(first).describe()
    if refused and not whole:
        counts = Counter(code_of(e) for e in refused_errors)
        codes = ", ".join(f"{code} x{n}" for code, n in sorted(counts.items(), key=lambda i: (-i[1], i[0])))
        text = f"{refused} item(s) refused ({codes}); first: {text}"
    return text[:MAX_ERROR_TEXT]


async def write_feed_status(
    stores: Stores,
    feed_id: str,
    result: ParseResult,
    run: Outcome,
    items: int | None = None,
    *,
    fetch: Fetch | None = None,
) -> None:
    """The status row and, given the ``fetch``, its report. ``items``: how many the body held, when they
    were streamed rather than kept in ``result``."""
    feed_err = result.feed_error
    refused_errors = [e for e in run.errors if e.index is not None and e.severity.value == "error"]
    first = feed_err or next(iter(refused_errors), None) or next(iter(run.errors), None)
    refused = max(len(refused_errors), run.count(_REFUSED))
    outcome = "parse_error" if result.fatal else ("partial" if refused or feed_err else "parsed")
    count = items if items is not None else len(result.items) + len(result.deletions)
    fields: dict[str, object] = {
        "parse_result": outcome,
        "items": count,
        # cleared when this run went well: the status shows the feed as it is now
        "parse_error": None,
        "error_line": None,
        "error_column": None,
    }
    if first is not None:
        whole = result.fatal or feed_err is not None
        fields.update(
            parse_error=_summary(first, refused_errors, refused, whole),
            error_line=first.line,
            error_column=first.column,
        )
    try:
        await stores.feeds.update_parse_status(feed_id, **fields)
    except NotFound:
        log.info("feed %s is not registered; status not written", feed_id)
        return
    if fetch is not None:
        found = capped(run.errors, feed=feed_id)
        kept, counts = fetch.told(tuple(found.kept), found.counts)
        report = FetchReport(
            feed_id=feed_id,
            fetched_at=fetch.at,
            result=outcome,
            http_status=fetch.http_status,
            items=count,
            changed=run.count(_PUBLISHED),
            unchanged=run.count(_UNCHANGED),
            refused=refused,
            removed=run.count(_REMOVED),
            problems=kept,
            counts=counts,
            more=found.more,
            fetch_ids=fetch.fetch_ids,
        )
        await stores.problems.add_report(report)
        if found.total:
            log.info("feed %s: %s, problems %s", feed_id, outcome, found.counts)


async def write_fetch_outcome(
    problems: ProblemStore, feed_id: str, msg: CrawlResult, *, items: int | None = None
) -> None:
    """The report of a fetch that gave nothing to parse: not modified, the same body, or a failure.

    Not modified and the same body carry the problems of the last report that read a body: its items
    are what they were, so what was refused then still is (else a feed polled every few minutes would
    show "no problems" one poll after its last parse). A failed fetch reports the failure.
    """
    fetch = Fetch.of(msg)
    status = msg.status.value
    if status in ("ok", "not_modified"):
        result = "unchanged" if status == "ok" else status  # ok here: a body byte for byte as the last one
        last = next((r for r in await problems.reports(feed_id) if r.result not in _NO_BODY), None)
        # the last body's problems, without what its fetch itself was told: this fetch tells its own
        carried = tuple(p for p in last.problems if p.code not in _FETCH_NOTES) if last else ()
        counts = {k: n for k, n in (last.counts if last else {}).items() if k not in _FETCH_NOTES}
        kept, counts = fetch.told(carried, counts)
        report = FetchReport(
            feed_id=feed_id,
            fetched_at=fetch.at,
            result=result,
            http_status=msg.http_status,
            items=items,
            # the items are those of the last body read: what it refused is still refused, the rest unchanged
            unchanged=max(0, (items or 0) - (last.refused if last else 0)),
            refused=last.refused if last else 0,
            problems=kept,
            counts=counts,
            more=last.more if last else 0,
            fetch_ids=fetch.fetch_ids,
        )
    else:
        found = fetch_problem(status, msg.http_status, msg.error, feed=feed_id)
        kept, counts = fetch.told((found,), {found.code: 1})
        report = FetchReport(
            feed_id=feed_id,
            fetched_at=fetch.at,
            result=status,
            http_status=msg.http_status,
            items=items,
            problems=kept,
            counts=counts,
            fetch_ids=fetch.fetch_ids,
        )
    await problems.add_report(report)


async def note_conflict(
    feeds: FeedStore, problems: ProblemStore, loser: str, url: str, winner: str, *, now: datetime
) -> None:
    """Tell the losing source that ``winner`` took ``url`` over: its status and its history (feeds have
    both; other sources, uploads, are told in the upload task of their next attempt, and logged)."""
    text = f"{url} is now published from {winner} (higher priority)"
    log.info("%s lost %s", loser, text)
    if not loser.startswith("feed:"):
        return
    feed_id = loser[5:]
    with contextlib.suppress(NotFound):
        await feeds.update_parse_status(
            feed_id, parse_result="conflict", parse_error=f"conflict: {text}"[:MAX_ERROR_TEXT]
        )
        taken = problem("conflict.taken_over", text, feed=feed_id, link=url)
        await problems.add_report(
            FetchReport(feed_id=feed_id, fetched_at=now, result="conflict", problems=(taken,), counts={taken.code: 1})
        )


def _by_item(errors: Iterable[ItemError], named: set[str]) -> dict[object, list[ItemError]]:
    """Errors by the item they concern, of the items ``named``: its link, and its index as ``#n`` (what the
    results name)."""
    out: dict[object, list[ItemError]] = {}
    for e in errors:
        if e.link and e.link in named:
            out.setdefault(e.link, []).append(e)
        if e.index is not None and (key := f"#{e.index + 1}") in named:
            out.setdefault(key, []).append(e)
    return out


def _task_items(
    results: Iterable[tuple[str, str, str | None]], by_item: dict[object, list[ItemError]]
) -> list[TaskItem]:
    """One result per item; the first ``MAX_TASK_ITEM_DETAILS`` items with a problem carry it in full,
    the rest only its code (the task counts them all). One upload of 60,000 broken items stored
    59,000 problem objects in its task; only the detailed ones are built as ``Problem``s
    (each one a validated model: ``bench/problems.py``)."""
    out: list[TaskItem] = []
    detailed = 0
    for url, status, error in results:
        found = by_item.get(url, ())
        if not (found or error):
            out.append(TaskItem(url=url, status=status))
        elif detailed < MAX_TASK_ITEM_DETAILS:
            detailed += 1
            out.append(TaskItem(url=url, status=status, error=error, problems=tuple(map(to_problem, found))))
        else:
            short = code_of(found[0]) if found else (error or "")[:_SHORT_ERROR]
            out.append(TaskItem(url=url, status=status, error=short))
    return out


@dataclass(frozen=True, slots=True)
class _TaskRecord:
    items: list[TaskItem]
    item_counts: dict[str, int]
    errors: list[str]
    found: Capped


def _task_record(run: Outcome) -> _TaskRecord:
    listed = run.results[:MAX_TASK_ITEMS]
    items = _task_items(listed, _by_item(run.errors, {url for url, _, _ in listed}))
    item_counts = Counter(status for _, status, _ in run.results) + run.tallied
    found = capped(run.errors, limit=MAX_TASK_ERRORS)
    errors = [p.describe() for p in found.kept]
    if found.more:
        by_code = ", ".join(f"{code} {n:,}" for code, n in sorted(found.counts.items()))
        errors.append(f"{found.more:,} more problems not listed; all {found.total:,} by code: {by_code}")
    return _TaskRecord(items, dict(item_counts), errors, found)


async def write_task(
    tasks: TaskStore, task_id: str, result: ParseResult, run: Outcome, preview: list[str], now: datetime
) -> None:
    # a few hundred results are a millisecond; an upload of 100,000 items is folded off the loop (~0.1 s)
    large = len(run.results) + len(run.errors) > _INLINE_RESULTS
    record = await asyncio.to_thread(_task_record, run) if large else _task_record(run)
    try:
        await tasks.update(
            task_id,
            status=TaskStatus.failed if result.fatal else TaskStatus.done,
            items=record.items,
            errors=record.errors,
            problems=record.found.kept,
            problem_counts=record.found.counts,
            item_counts=record.item_counts,
            preview_urls=preview,
            now=now,
        )
    except NotFound:
        log.warning("upload task %s does not exist; results not recorded", task_id)
