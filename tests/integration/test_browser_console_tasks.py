"""The console's list of uploads and checks in a real browser.

The frontend alone on the embedded store, headless Chromium (``test_browser_frontend.py`` drives
it): the webmaster signs in, follows the home page's link to every task, filters by mode and
status with the form, and pages to the older tasks; another tenant's tasks never show. A phone's
width (390 px) holds the list without scrolling sideways. Screenshots go to
``test-artifacts/browser/console-tasks*.png`` to be looked at.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shared.clock import ManualClock
from shared.config import Settings
from shared.stores import Task, TaskItem, TaskMode, TaskStatus, open_stores
from tests.integration.console_browser import Console, follow, serve_console, signed_in, verified_tenant
from tests.integration.test_browser_frontend import (  # the browser fixture and its helpers
    Cdp,
    _errors,
    _eval,
    _open,
    _shot,
    browser,
)

__all__ = ["browser"]  # re-exported: pytest finds the fixture in this module

pytestmark = pytest.mark.browser

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
HOST = "shop.example"
#: tasks of the webmaster's: more than one page of the console's list (50)
MADE = 60


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[Console]:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    tenant_id, token = await verified_tenant(stores, "the elephant shop", HOST)
    for i in range(MADE):
        check = i % 4 == 0
        task = Task(
            task_id=f"task{i:03d}",
            tenant_id=tenant_id,
            host=HOST,
            mode=TaskMode.debug if check else TaskMode.production,
            source_url=f"https://{HOST}/feed-{i}.xml" if check else None,
        )
        await stores.tasks.create(task, now=NOW - timedelta(minutes=MADE - i))
        status = TaskStatus.failed if i % 7 == 0 else TaskStatus.done
        await stores.tasks.update(task.task_id, status=status, items=[TaskItem(f"https://{HOST}/p/{i}", "ok")])
    other = await stores.tenants.create_tenant("somebody else")
    await stores.tasks.create(Task(task_id="theirs000", tenant_id=other.tenant_id, host=HOST), now=NOW)
    async with serve_console(settings, stores, clock=ManualClock(NOW.timestamp())) as url:
        yield Console(url, token)
    await stores.close()


_LISTED = "[...document.querySelectorAll('#tasks tbody tr a')].map(a => a.getAttribute('href').split('/').pop())"


async def test_a_webmaster_lists_filters_and_pages_their_tasks(console: Console, browser: Cdp) -> None:
    session = await signed_in(browser, console.url, console.token)
    await follow(browser, session, "document.querySelector('#all-tasks').click()")
    newest_first = [f"task{i:03d}" for i in reversed(range(MADE))]
    assert await _eval(browser, session, _LISTED) == newest_first[:50]
    await _shot(browser, session, "console-tasks")
    await follow(browser, session, "document.querySelector('#older').click()")
    assert await _eval(browser, session, _LISTED) == newest_first[50:]

    await follow(
        browser,
        session,
        "document.querySelector('select[name=mode]').value = 'debug';"
        "document.querySelector('select[name=status]').value = 'failed';"
        "document.querySelector('#filters').submit()",
    )
    assert await _eval(browser, session, _LISTED) == [t for t in newest_first if int(t[4:]) % 28 == 0]
    text = await _eval(browser, session, "document.body.innerText")
    assert "Check of https://shop.example/feed-56.xml" in text
    assert "theirs000" not in await _eval(browser, session, "document.body.innerHTML")
    await _shot(browser, session, "console-tasks-filtered")

    phone = await _open(browser, f"{console.url}/console/uploads", width=390, height=844, mobile=True, dark=True)
    assert await _eval(browser, phone, "document.documentElement.scrollWidth") <= 390
    assert len(await _eval(browser, phone, _LISTED)) == 50
    await _shot(browser, phone, "console-tasks-phone-dark")
    assert _errors(browser) == []
