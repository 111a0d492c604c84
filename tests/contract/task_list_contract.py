"""The task list's contract (``TaskStore.page``), run against every engine with ``StoreContract``."""

from __future__ import annotations

from datetime import timedelta

from shared.stores import Stores, Task, TaskMode, TaskQuery, TaskStatus
from tests.contract.store_contract import T0


async def _tasks(stores: Stores) -> None:
    # ta: 5 tasks a minute apart on two hosts, two in debug mode; two more created in the same microsecond
    for i in range(5):
        await stores.tasks.create(
            Task(
                task_id=f"t{i}",
                tenant_id="ta",
                host="a.example" if i % 2 == 0 else "b.example",
                mode=TaskMode.debug if i in (1, 4) else TaskMode.production,
            ),
            now=T0 + timedelta(minutes=i),
        )
    for tid in ("same-1", "same-2"):
        await stores.tasks.create(Task(task_id=tid, tenant_id="ta", host="a.example"), now=T0 + timedelta(hours=1))
    await stores.tasks.create(Task(task_id="theirs", tenant_id="tb", host="a.example"), now=T0 + timedelta(hours=2))
    await stores.tasks.update("t3", status=TaskStatus.done)


class TaskListContract:
    async def test_a_tenants_tasks_page_newest_first_and_never_repeat(self, stores: Stores) -> None:
        await _tasks(stores)
        seen: list[str] = []
        after = None
        for _ in range(10):
            page = await stores.tasks.page(TaskQuery("ta", after=after, limit=3))
            seen += [t.task_id for t in page.tasks]
            after = page.next_after
            if after is None:
                break
        assert seen == ["same-2", "same-1", "t4", "t3", "t2", "t1", "t0"]
        assert (await stores.tasks.page(TaskQuery("ta", limit=7))).next_after is None

    async def test_filters_and_another_tenants_tasks(self, stores: Stores) -> None:
        await _tasks(stores)

        async def ids(**kw: object) -> list[str]:
            return [t.task_id for t in (await stores.tasks.page(TaskQuery("ta", **kw))).tasks]  # type: ignore[arg-type]

        assert await ids(host="b.example") == ["t3", "t1"]
        assert await ids(mode=TaskMode.debug) == ["t4", "t1"]
        assert await ids(status=TaskStatus.done) == ["t3"]
        assert await ids(host="a.example", mode=TaskMode.production) == ["same-2", "same-1", "t2", "t0"]
        assert (await stores.tasks.get("t4")).mode is TaskMode.debug  # type: ignore[union-attr]
        # tb sees its one task, never ta's, whatever host it names
        assert [t.task_id for t in (await stores.tasks.page(TaskQuery("tb", host="a.example"))).tasks] == ["theirs"]
        assert (await stores.tasks.page(TaskQuery("nobody"))).tasks == ()
