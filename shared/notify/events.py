"""What a webmaster is told about: one event model (docs/architecture.md section 10, "Notifications").

An ``Event`` is written where its fact is decided, into the notification outbox of the store
(``shared/stores/notify.py``), in the same write as the fact: the problem history when a code opens
or is resolved on a feed, and when a feed's fetches turn failing or recover; the problem store when a
page of a feed or of an upload task is held back; the task store when an
upload task ends; the notice store when a right changes; the feed store when a host's autoparser
turns unavailable. A writer only adds a row: deciding who is told and delivering is the notifier's
(``shared/notify/notifier.py``), off the pipeline. Each event's id is made from its fact, so a
redelivered report or a task updated twice writes one event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = ["WORKING_RESULTS", "Event", "EventKind", "failing", "feed_state_kind", "problem_kind"]


class EventKind(StrEnum):
    """The kinds of event a tenant may be told about (each has its own setting)."""

    #: a problem code found on a feed that was not open there (``problem_history``: state ``new``)
    problem_new = "problem.new"
    #: an open problem code that the feed's latest fetch no longer has (state ``resolved``)
    problem_resolved = "problem.resolved"
    #: a feed's fetch failed (or its body could not be parsed) after one that did not
    feed_failing = "feed.failing"
    #: a failing feed's fetch worked again
    feed_recovered = "feed.recovered"
    #: pages held back: a catalog lost more than half of its offers in one fetch (``catalog.held``)
    catalog_held = "catalog.held"
    #: a page held back, not published: it lost content (``shared/pages/completeness.py``; the autoparser's
    #: guard); one event a feed (or upload task) a day, naming the first page, so a bad fetch is not a mail per page
    pages_held = "pages.held"
    #: a right on an origin lapsed, ended, was granted or passed to another holder (``shared.webmaster.rights``)
    right_changed = "right.changed"
    #: an upload task or feed check ended (done or failed)
    task_done = "task.done"
    #: the autoparser of a host's feed turned unavailable (robots.txt forbids it, ...)
    autoparser_unavailable = "autoparser.unavailable"
    #: the console's or the API's test button (delivered at once, whatever the settings say)
    test = "test"


#: fetch results that mean the feed works: a body read (parsed, even in part), the same body again, a
#: conflict report, or a wait the host asked for (throttled: not the feed's fault)
WORKING_RESULTS = frozenset({"parsed", "partial", "unchanged", "not_modified", "conflict", "throttled", "ok"})


def failing(result: str) -> bool:
    """A fetch whose body could not be fetched (any other ``FetchStatus``) or not be read (``parse_error``)."""
    return result not in WORKING_RESULTS


def problem_kind(code: str, *, resolved: bool) -> EventKind:
    """The kind of a problem code's opening or resolution: ``catalog.held`` opening is its own kind."""
    if resolved:
        return EventKind.problem_resolved
    return EventKind.catalog_held if code == "catalog.held" else EventKind.problem_new


def feed_state_kind(previous: str | None, result: str) -> EventKind | None:
    """``feed.failing`` when a fetch fails after one that did not (or after none), ``feed.recovered``
    when one works after a failing one, None when the feed's state did not change."""
    now, was = failing(result), previous is not None and failing(previous)
    if now and not was:
        return EventKind.feed_failing
    if was and not now:
        return EventKind.feed_recovered
    return None


@dataclass(frozen=True, slots=True)
class Event:
    """One fact a tenant may be told. ``subject`` names what it is about (a feed id, a task id, an
    origin); ``detail`` carries the rest in the words of the API (a code, a result, a message)."""

    event_id: str
    tenant_id: str
    kind: EventKind
    at: datetime
    host: str
    subject: str
    detail: dict[str, Any] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        """The JSON a webhook receives (and an e-mail says in words)."""
        return {
            "event_id": self.event_id,
            "kind": self.kind.value,
            "at": self.at.isoformat(),
            "host": self.host,
            "subject": self.subject,
            **self.detail,
        }
