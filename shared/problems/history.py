"""A feed's problems over time: each code's occurrences, from first seen to resolved (docs/architecture.md
section 10).

The fetch reports are snapshots (the last ``KEEP_REPORTS``); a webmaster also asks *when did this start,
is it still there, did my fix work?* -- as Yandex Webmaster keeps each problem's state. Every report
the problem store takes is observed (``observe``: one rule, here): each code it counts is seen at the
report's ``fetched_at``; an occurrence of the feed that is open and whose code the report no longer
counts is resolved then. A resolved code that comes back is a new occurrence. A report of no body
(unchanged, not modified) carries the last body's problems, so its codes stay open; a conflict report
(another source took a page over) and a failed fetch (it counts its fetch code alone) only add what
they say (``additive``). An older report than what was already seen
(a redelivery out of order) changes nothing. "Check again" is *Fetch now*: its report closes what is
gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["ADDITIVE_RESULTS", "Occurrence", "Transition", "additive", "transitions"]

#: reports that add what they say without meaning the rest is gone
ADDITIVE_RESULTS = frozenset({"conflict"})
#: the results of a fetch that read a body, or found it the same as the last one (its problems carried)
_BODY_RESULTS = frozenset({"parsed", "partial", "parse_error", "unchanged", "not_modified"})


def additive(result: str) -> bool:
    """Whether a report of ``result`` only adds what it counts: a conflict report, and a fetch that read no
    body (it failed: any other ``FetchStatus``), which counts its fetch code alone -- an outage is not a fix
    of what the last body had, so its codes stay open (they were resolved, and told resolved, then new again
    once the feed was back)."""
    return result in ADDITIVE_RESULTS or result not in _BODY_RESULTS


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One stretch of a code on a feed: from ``first_seen`` to ``resolved_at`` (None: still there)."""

    feed_id: str
    code: str
    first_seen: datetime
    last_seen: datetime
    #: reports that counted it
    seen: int = 1
    resolved_at: datetime | None = None

    @property
    def open(self) -> bool:
        return self.resolved_at is None

    @property
    def state(self) -> str:
        """``new`` (first seen by the latest fetch that saw it, once), ``ongoing``, or ``resolved``."""
        if self.resolved_at is not None:
            return "resolved"
        return "new" if self.seen == 1 else "ongoing"


@dataclass(frozen=True, slots=True)
class Transition:
    """What one report does to one code: ``opened`` a new occurrence, ``seen`` an open one again, ``resolved``."""

    code: str
    kind: str


def transitions(open_: dict[str, datetime], codes: set[str], at: datetime, *, additive: bool) -> list[Transition]:
    """The changes a report at ``at`` counting ``codes`` makes to a feed whose open occurrences were last
    seen at ``open_[code]`` (the pure rule; the store applies it)."""
    if open_ and at <= max(open_.values()):
        return []  # not newer than what was seen: a redelivery, or a report that arrived late
    out = [Transition(c, "seen" if c in open_ else "opened") for c in sorted(codes)]
    if not additive:
        out += [Transition(c, "resolved") for c in sorted(set(open_) - codes)]
    return out
