"""The task store's contract: partner upload tasks (docs/architecture.md section 1, "partner").

One implementation for both engines: ``sql/tasks.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from shared.problems import Problem

__all__ = ["TASK_LIST_MAX", "Task", "TaskItem", "TaskMode", "TaskPage", "TaskQuery", "TaskStatus", "TaskStore"]


class TaskMode(StrEnum):
    """How an upload is handled: published, or rendered as previews only (a debug upload, a feed check)."""

    production = "production"
    debug = "debug"


class TaskStatus(StrEnum):
    queued = "queued"
    processing = "processing"
    done = "done"
    failed = "failed"


@dataclass(frozen=True, slots=True)
class TaskItem:
    url: str
    status: str  # ok / failed / skipped / ...: the api and parser agree on the words
    error: str | None = None
    #: every problem of this item (``error`` is the first one's message)
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class Task:
    task_id: str
    tenant_id: str
    host: str
    status: TaskStatus = TaskStatus.queued
    created_at: datetime | None = None  # set by the store when None
    updated_at: datetime | None = None
    items: tuple[TaskItem, ...] = ()
    errors: tuple[str, ...] = ()
    preview_urls: tuple[str, ...] = ()
    idempotency_key: str | None = None  # unique per tenant
    #: every problem of the upload (capped by the parser; ``errors`` are their one-line texts)
    problems: tuple[Problem, ...] = ()
    #: how many problems of each code the upload had in all, kept in ``problems`` or not
    problem_counts: Mapping[str, int] = field(default_factory=dict)
    #: a feed check's: the URL it fetched (None: an upload of a body)
    source_url: str | None = None
    #: how many items of each status the upload had in all, kept in ``items`` or not (the parser keeps the
    #: first ones); empty: every item is in ``items`` (a task written before the counts were kept)
    item_counts: Mapping[str, int] = field(default_factory=dict)
    mode: TaskMode = TaskMode.production

    @property
    def problems_more(self) -> int:
        """How many problems were counted but not kept in full."""
        return max(0, sum(self.problem_counts.values()) - len(self.problems))

    @property
    def item_total(self) -> int:
        """How many items the upload had, listed in ``items`` or not."""
        return sum(self.item_counts.values()) if self.item_counts else len(self.items)

    @property
    def items_more(self) -> int:
        """How many items were counted but not listed."""
        return max(0, self.item_total - len(self.items))

    def counts(self) -> dict[str, int]:
        """Items by status, every one of them."""
        if self.item_counts:
            return dict(self.item_counts)
        counts: dict[str, int] = {}
        for item in self.items:
            counts[item.status] = counts.get(item.status, 0) + 1
        return counts


#: the most tasks one page of a list holds
TASK_LIST_MAX = 100


@dataclass(frozen=True, slots=True)
class TaskQuery:
    """One page of a tenant's tasks, newest first: the filters (None: any) and where the page starts."""

    tenant_id: str
    host: str | None = None
    mode: TaskMode | None = None
    status: TaskStatus | None = None
    #: the last task of the page before (its ``created_at`` in microseconds and its id), None: the newest
    after: tuple[int, str] | None = None
    limit: int = 20


@dataclass(frozen=True, slots=True)
class TaskPage:
    tasks: tuple[Task, ...]
    #: where the next page starts (give it as ``TaskQuery.after``), None when this page was the last
    next_after: tuple[int, str] | None


class TaskStore(Protocol):
    """Partner upload tasks."""

    async def create(self, task: Task, *, now: datetime | None = None) -> Task:
        """Store a new task; with an ``idempotency_key`` already used by the tenant, return that task."""
        ...

    async def get(self, task_id: str, *, tenant_id: str | None = None) -> Task | None:
        """The task; with ``tenant_id``, None unless it belongs to that tenant (isolation)."""
        ...

    async def update(
        self,
        task_id: str,
        *,
        status: TaskStatus | None = None,
        items: Sequence[TaskItem] | None = None,
        errors: Sequence[str] | None = None,
        preview_urls: Sequence[str] | None = None,
        problems: Sequence[Problem] | None = None,
        problem_counts: Mapping[str, int] | None = None,
        item_counts: Mapping[str, int] | None = None,
        now: datetime | None = None,
    ) -> Task:
        """Replace the given fields and stamp ``updated_at``. ``NotFound`` for an unknown task."""
        ...

    async def find_by_idempotency_key(self, tenant_id: str, key: str) -> Task | None: ...

    async def recent(self, tenant_id: str, limit: int = 20) -> list[Task]:
        """The tenant's newest tasks first (the console's list)."""
        ...

    async def page(self, query: TaskQuery) -> TaskPage:
        """One page of the tenant's tasks that pass the query's filters, newest first (created_at, then
        task id, both descending: a task created while a client pages is never shown twice)."""
        ...
