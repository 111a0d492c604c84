"""The task store, written once for both engines (docs/architecture.md sections 1 and 4).

It sees a few writes per second at most, so it is plain SQL over the
``SqlRunner``: each method is one statement, or a read followed by one
guarded statement, so no transaction spans an ``await``. A task that ends (done or failed) adds its
event for the tenant (``shared/notify/events.py``; one per task and status, however often it is written).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from shared.errors import NotFound
from shared.notify.events import Event, EventKind
from shared.problems import Problem, problems_from
from shared.stores.codec import dumps, from_us, now_us, to_us
from shared.stores.sql.notify import SqlNotifyStore
from shared.stores.sql.runner import SqlRunner
from shared.stores.tasks import TASK_LIST_MAX, Task, TaskItem, TaskMode, TaskPage, TaskQuery, TaskStatus

__all__ = ["TASK_COLUMNS", "SqlTaskStore", "task_from_row", "task_items_json"]

TASK_COLUMNS = (
    "task_id, tenant_id, host, status, created_at, updated_at, items, errors, preview_urls, idempotency_key, problems,"
    " problem_counts, source_url, item_counts, mode"
)


def task_items_json(items: Sequence[TaskItem]) -> str:
    return dumps(
        [
            {"url": i.url, "status": i.status, "error": i.error, "problems": [p.as_dict() for p in i.problems]}
            for i in items
        ]
    )


def _problems_json(problems: Sequence[Problem]) -> str:
    return dumps([p.as_dict() for p in problems])


def _item(raw: dict[str, Any]) -> TaskItem:
    return TaskItem(
        url=raw["url"],
        status=raw["status"],
        error=raw.get("error"),
        problems=tuple(problems_from(raw.get("problems") or [])),
    )


def task_from_row(row: Sequence[Any]) -> Task:
    return Task(
        task_id=row[0],
        tenant_id=row[1],
        host=row[2],
        status=TaskStatus(row[3]),
        created_at=from_us(row[4]),
        updated_at=from_us(row[5]),
        items=tuple(_item(item) for item in orjson.loads(row[6] or "[]")),
        errors=tuple(orjson.loads(row[7] or "[]")),
        preview_urls=tuple(orjson.loads(row[8] or "[]")),
        idempotency_key=row[9],
        problems=tuple(problems_from(orjson.loads(row[10] or "[]"))),
        problem_counts=orjson.loads(row[11] or "{}"),
        source_url=row[12],
        item_counts=orjson.loads(row[13] or "{}"),
        mode=TaskMode(row[14]),
    )


class SqlTaskStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def create(self, task: Task, *, now: datetime | None = None) -> Task:
        stamp = now_us(now)
        rows = await self._db.execute_returning(
            f"INSERT INTO tasks ({TASK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            # no conflict target: a reused task id and a reused idempotency key both mean "exists"
            f" ON CONFLICT DO NOTHING RETURNING {TASK_COLUMNS}",
            task.task_id,
            task.tenant_id,
            task.host,
            str(task.status),
            to_us(task.created_at) if task.created_at else stamp,
            to_us(task.updated_at) if task.updated_at else stamp,
            task_items_json(task.items),
            dumps(list(task.errors)),
            dumps(list(task.preview_urls)),
            task.idempotency_key,
            _problems_json(task.problems),
            dumps(dict(task.problem_counts)),
            task.source_url,
            dumps(dict(task.item_counts)),
            task.mode.value,
        )
        if rows:
            return task_from_row(rows[0])
        existing = None
        if task.idempotency_key is not None:
            existing = await self.find_by_idempotency_key(task.tenant_id, task.idempotency_key)
        if existing is None:
            existing = await self.get(task.task_id)
        if existing is None:  # pragma: no cover - a conflict implies one of the two exists
            raise RuntimeError(f"task {task.task_id!r} conflicted but cannot be found")
        return existing

    async def get(self, task_id: str, *, tenant_id: str | None = None) -> Task | None:
        row = await self._db.fetchone(f"SELECT {TASK_COLUMNS} FROM tasks WHERE task_id = ?", task_id)
        if row is None or (tenant_id is not None and row[1] != tenant_id):
            return None
        return task_from_row(row)

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
        sets = ["updated_at = ?"]
        args: builtins.list[Any] = [now_us(now)]
        if status is not None:
            sets.append("status = ?")
            args.append(str(TaskStatus(status)))
        if items is not None:
            sets.append("items = ?")
            args.append(task_items_json(items))
        if errors is not None:
            sets.append("errors = ?")
            args.append(dumps(list(errors)))
        if preview_urls is not None:
            sets.append("preview_urls = ?")
            args.append(dumps(list(preview_urls)))
        if problems is not None:
            sets.append("problems = ?")
            args.append(_problems_json(problems))
        if problem_counts is not None:
            sets.append("problem_counts = ?")
            args.append(dumps(dict(problem_counts)))
        if item_counts is not None:
            sets.append("item_counts = ?")
            args.append(dumps(dict(item_counts)))
        rows = await self._db.execute_returning(
            f"UPDATE tasks SET {', '.join(sets)} WHERE task_id = ? RETURNING {TASK_COLUMNS}", *args, task_id
        )
        if not rows:
            raise NotFound(f"task {task_id!r} does not exist")
        task = task_from_row(rows[0])
        if status in (TaskStatus.done, TaskStatus.failed):
            await self._tell(task)
        return task

    async def _tell(self, task: Task) -> None:
        assert task.updated_at is not None
        detail = {
            "status": task.status.value,
            "mode": task.mode.value,
            "items": dict(task.counts()),
            "problems": sum(task.problem_counts.values()),
        }
        event = Event(
            f"task/{task.task_id}/{task.status.value}",
            task.tenant_id,
            EventKind.task_done,
            task.updated_at,
            task.host,
            task.task_id,
            detail,
        )
        await SqlNotifyStore(self._db).add_event(event)

    async def find_by_idempotency_key(self, tenant_id: str, key: str) -> Task | None:
        row = await self._db.fetchone(
            f"SELECT {TASK_COLUMNS} FROM tasks WHERE tenant_id = ? AND idempotency_key = ?", tenant_id, key
        )
        return None if row is None else task_from_row(row)

    async def recent(self, tenant_id: str, limit: int = 20) -> builtins.list[Task]:
        rows = await self._db.fetch(
            f"SELECT {TASK_COLUMNS} FROM tasks WHERE tenant_id = ? ORDER BY created_at DESC, task_id LIMIT ?",
            tenant_id,
            limit,
        )
        return [task_from_row(r) for r in rows]

    async def page(self, query: TaskQuery) -> TaskPage:
        where = ["tenant_id = ?"]
        args: builtins.list[Any] = [query.tenant_id]
        if query.host is not None:
            where.append("host = ?")
            args.append(query.host)
        if query.mode is not None:
            where.append("mode = ?")
            args.append(query.mode.value)
        if query.status is not None:
            where.append("status = ?")
            args.append(query.status.value)
        if query.after is not None:  # keyset: strictly older than the last task shown
            where.append("(created_at < ? OR (created_at = ? AND task_id < ?))")
            args += [query.after[0], query.after[0], query.after[1]]
        limit = max(1, min(query.limit, TASK_LIST_MAX))
        rows = await self._db.fetch(
            f"SELECT {TASK_COLUMNS} FROM tasks WHERE {' AND '.join(where)}"
            " ORDER BY created_at DESC, task_id DESC LIMIT ?",
            *args,
            limit + 1,  # one more: is there a next page
        )
        tasks = tuple(task_from_row(r) for r in rows[:limit])
        more = len(rows) > limit
        last = rows[limit - 1] if more else None
        return TaskPage(tasks, (int(last[4]), str(last[0])) if last is not None else None)
