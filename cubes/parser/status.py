"""What a parse run leaves behind for people: the feed's status and the upload task (DESIGN.md section 1).

The webmaster sees the feed's status in the registry (webmaster API, CLI):
``parse_result`` (parsed / partial / parse_error / conflict), the item count,
and the first problem (``parse_error``) with its line and column — the parse
fields of the row, which only the parser writes (``shared/stores/feeds.py``). A partner sees the upload
task: one result per item (ok / unchanged / deleted / rejected / conflict /
preview) with its reason, and the feed-level errors.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from cubes.parser.documents import describe
from cubes.parser.model import ItemError, ParseResult
from shared.errors import NotFound
from shared.runtime.cube import Output
from shared.stores import FeedStore, TaskItem, TaskStatus, TaskStore

__all__ = ["Outcome", "note_conflict", "write_feed_status", "write_task"]

log = logging.getLogger(__name__)

#: at most this many errors go into a task's error list (the per-item results carry all of them)
MAX_TASK_ERRORS = 50
#: the status columns hold a sentence, not a report
MAX_ERROR_TEXT = 2000


@dataclass
class Outcome:
    """What handling one body produced: outputs to publish, per-item results, problems."""

    outputs: list[Output] = field(default_factory=list)
    #: (url or link, status, error) per item, for upload tasks
    results: list[tuple[str, str, str | None]] = field(default_factory=list)
    errors: list[ItemError] = field(default_factory=list)
    #: store writes that may only happen once ``outputs`` are durable (``Context.after_commit``)
    writes: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    def merge(self, other: Outcome) -> None:
        self.outputs.extend(other.outputs)
        self.results.extend(other.results)
        self.errors.extend(other.errors)
        self.writes.extend(other.writes)


async def write_feed_status(
    feeds: FeedStore, feed_id: str, result: ParseResult, run: Outcome, items: int | None = None
) -> None:
    """``items``: how many the body held, when they were streamed rather than kept in ``result``."""
    feed_err = result.feed_error
    first = feed_err or next((e for e in run.errors if e.index is not None), None)
    rejected = sum(1 for e in run.errors if e.index is not None)
    fields: dict[str, object] = {
        "parse_result": "parse_error" if result.fatal else ("partial" if rejected or feed_err else "parsed"),
        "items": items if items is not None else len(result.items) + len(result.deletions),
        # cleared when this run went well: the status shows the feed as it is now
        "parse_error": None,
        "error_line": None,
        "error_column": None,
    }
    if first is not None:
        text = describe(first)
        if rejected and not result.fatal and feed_err is None:
            text = f"{rejected} item(s) refused; first: {text}"
        fields.update(parse_error=text[:MAX_ERROR_TEXT], error_line=first.line, error_column=first.column)
    try:
        await feeds.update_parse_status(feed_id, **fields)
    except NotFound:
        log.info("feed %s is not registered; status not written", feed_id)


async def note_conflict(feeds: FeedStore, loser: str, url: str, winner: str) -> None:
    """Write a lost URL into the losing source's status (feeds have one; other sources are logged)."""
    text = f"conflict: {url} is now published from {winner} (higher priority)"
    log.info("%s lost %s", loser, text)
    if loser.startswith("feed:"):
        with contextlib.suppress(NotFound):
            await feeds.update_parse_status(loser[5:], parse_result="conflict", parse_error=text[:MAX_ERROR_TEXT])


async def write_task(
    tasks: TaskStore, task_id: str, result: ParseResult, run: Outcome, preview: list[str], now: datetime
) -> None:
    items = [TaskItem(url=u, status=s, error=e) for u, s, e in run.results]
    errors = [describe(e) for e in run.errors][:MAX_TASK_ERRORS]
    try:
        await tasks.update(
            task_id,
            status=TaskStatus.failed if result.fatal else TaskStatus.done,
            items=items,
            errors=errors,
            preview_urls=preview,
            now=now,
        )
    except NotFound:
        log.warning("upload task %s does not exist; results not recorded", task_id)
