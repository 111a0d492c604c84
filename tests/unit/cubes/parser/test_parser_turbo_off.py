"""A host's Turbo pages switched off wholesale, and on again (cubes/parser/lifecycle.py)."""

from __future__ import annotations

import orjson

from shared.messages import DocumentDeleted, PartnerUpload, UploadFormat
from shared.runtime.cube import Output
from shared.stores import Feed, Task, TaskStatus
from tests.unit.cubes.parser.test_parser_handler import T0, Env, docs, env, item, turbo_feed  # noqa: F401


def deleted(outputs: list[Output]) -> list[str]:
    return sorted(o.message.url for o in outputs if isinstance(o.message, DocumentDeleted))


def push(task: str, url: str) -> PartnerUpload:
    return PartnerUpload(
        task_id=task,
        tenant_id="ten",
        host="news.test",
        format=UploadFormat.json,
        body=orjson.dumps([{"url": url, "title": "Pushed"}]),
        received_at=T0,
    )


async def test_turbo_off_removes_every_page_of_the_host_and_on_brings_them_back(env: Env) -> None:  # noqa: F811
    """Nothing let a host switch Turbo off wholesale."""
    await env.stores.feeds.upsert_feed(
        Feed(feed_id="f1", url="https://news.test/f1.xml", host="news.test", format="turbo", tenant_id="ten")
    )
    body = turbo_feed(item(1), item(2))
    assert len(docs(await env.feed(body))) == 2
    assert len(docs(await env.handle(push("t1", "https://news.test/pushed")))) == 1
    await env.stores.tenants.set_turbo("ten", "news.test", False)

    off = await env.feed(body)  # the same body: read all the same, the host is off
    assert docs(off) == []
    assert deleted(off) == ["https://news.test/1", "https://news.test/2", "https://news.test/pushed"]
    [report] = await env.stores.problems.reports("f1", limit=1)
    [warning] = [p for p in report.problems if p.code == "host.turbo_off"]
    assert "3 page(s) removed" in warning.message
    assert deleted(await env.feed(body)) == []  # removed once
    # an upload while off is refused, with the reason
    await env.stores.tasks.create(Task(task_id="t2", tenant_id="ten", host="news.test"))
    assert docs(await env.handle(push("t2", "https://news.test/pushed-2"))) == []
    task = await env.stores.tasks.get("t2")
    assert task is not None
    assert task.status is TaskStatus.failed
    assert [p.code for p in task.problems] == ["host.turbo_off"]

    await env.stores.tenants.set_turbo("ten", "news.test", True)
    back = docs(await env.feed(body))  # the same body again: published again, nothing reads as unchanged
    assert sorted(d.url for d in back) == ["https://news.test/1", "https://news.test/2"]
