"""The console's notifications page: save an address and each kind's setting, send a test, see the log; a
webhook without the operator's secrets.key is refused as such; another tenant's page shows none of yours."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared import passwords
from shared.clock import ManualClock
from shared.config import Settings
from shared.notify.events import EventKind
from shared.notify.notifier import Notifier
from shared.notify.service import send_test
from shared.notify.settings import NotifySettings, When
from shared.secretbox import new_key
from shared.stores import DeliveryStatus
from tests.unit.cubes.frontend.test_console import HOST, T0, Env, console, env

__all__ = ["env"]  # the fixture, re-exported for pytest


async def test_save_test_and_the_log_are_the_tenants_own(env: Env) -> None:
    a, token = await env.tenant()
    _, other = await env.tenant("b.partner.test")
    csrf = await env.sign_in(token)
    home = await (await env.client.get("/console")).text()
    assert 'href="/console/notifications"' in home
    form = {"csrf": csrf, "email": f"owner@{HOST}", "webhook_url": "", "when.task.done": "off"}
    resp = await env.client.post("/console/notifications", data=form)
    page = await resp.text()
    assert resp.status == 200, page[:500]
    assert "Notifications saved." in page
    saved = await env.stores.notify.settings(a)
    assert saved is not None
    assert (saved.email, saved.when_of(EventKind.task_done)) == (f"owner@{HOST}", When.off)
    resp = await env.client.post("/console/notifications/test", data={"csrf": csrf})
    assert resp.status == 200
    assert [e.kind for e in await env.stores.notify.untold(limit=10)] == [EventKind.test]
    notifier = Notifier.from_settings(Settings(), env.stores.notify, ManualClock())
    await notifier.tell()  # the log shows the delivery before it is sent
    await notifier.close()
    logged = await (await env.client.get("/console/notifications")).text()
    assert f"email: owner@{HOST}" in logged
    assert "pending" in logged

    refused = await env.client.post(
        "/console/notifications", data={"csrf": csrf, "webhook_url": f"https://{HOST}/hook"}
    )
    assert refused.status == 422
    assert "secrets.key is not set" in await refused.text()
    assert (await env.stores.notify.settings(a)).webhook_url is None  # type: ignore[union-attr]

    await env.sign_in(other)
    theirs = await (await env.client.get("/console/notifications")).text()
    assert HOST not in theirs.replace("b.partner.test", "")
    assert f"owner@{HOST}" not in theirs


async def test_a_refused_value_is_named_on_the_page(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    resp = await env.client.post("/console/notifications", data={"csrf": csrf, "email": "not an address"})
    assert resp.status == 422
    assert "email: one address like webmaster@example.com" in await resp.text()
    resp = await env.client.post("/console/notifications", data={"csrf": "x" * 40, "email": "a@b.example"})
    assert resp.status == 403


async def test_an_endpoint_that_took_nothing_is_a_problem_on_the_home_page(env: Env) -> None:
    a, token = await env.tenant()
    await env.sign_in(token)
    assert "notify.endpoint_failing" not in await (await env.client.get("/console")).text()
    await env.stores.notify.put_settings(NotifySettings(a, email=f"owner@{HOST}"), now=T0)
    await send_test(env.stores.notify, a, now=T0)
    notifier = Notifier.from_settings(Settings(), env.stores.notify, ManualClock(T0.timestamp()))
    await notifier.tell()
    [d] = await env.stores.notify.deliveries(a)
    await env.stores.notify.attempted(
        d.delivery_id,
        status=DeliveryStatus.dead,
        attempts=8,
        next_at=T0,
        at=T0,
        http_status=None,
        error="SMTP: refused",
    )
    await notifier.close()
    home = await (await env.client.get("/console")).text()
    assert "notify.endpoint_failing" in home
    assert "SMTP: refused" in home


async def test_an_editor_reads_the_settings_and_the_webhooks_origin_only(env: Env) -> None:
    a, _ = await env.tenant()
    url = f"https://{HOST}/hooks/T0123/s3cr3t-path"
    await env.stores.notify.put_settings(NotifySettings(a, webhook_url=url, email=f"owner@{HOST}"), now=T0)
    await env.stores.tenants.team.add_user(a, "ed", "editor", await passwords.hash_password("a long password"))
    resp = await env.client.post("/console/login", data={"login": "ed", "password": "a long password"})
    assert resp.status == 200
    page = await (await env.client.get("/console/notifications")).text()
    assert "s3cr3t" not in page
    assert f"https://{HOST}/\u2026" in page
    assert f"owner@{HOST}" in page
    assert 'id="notify-form"' not in page  # an owner's form
    assert 'action="/console/notifications/test"' in page  # an editor may send a test
    csrf = await env.csrf("/console/notifications")
    refused = await env.client.post("/console/notifications", data={"csrf": csrf, "webhook_url": ""})
    assert refused.status == 403
    assert (await env.stores.notify.settings(a)).webhook_url == url  # type: ignore[union-attr]


@pytest.fixture
async def keyed(tmp_path: Path) -> AsyncIterator[Env]:
    """The console with the operator's secrets.key set, so a webhook can be kept."""
    async with console(tmp_path, secrets={"key": new_key()}) as e:
        yield e


async def test_the_owner_renews_the_webhook_secret_from_the_page(keyed: Env) -> None:
    tenant, token = await keyed.tenant()
    csrf = await keyed.sign_in(token)
    form = {"csrf": csrf, "webhook_url": f"https://{HOST}/hook"}
    first = await (await keyed.client.post("/console/notifications", data=form)).text()
    old = re.search(r"<code>(whsec_[^<]+)</code>", first)
    assert old, first[:800]
    assert 'name="rotate_secret"' in first  # a webhook with a secret: the page offers a new one
    kept = await (await keyed.client.post("/console/notifications", data=form)).text()
    assert "whsec_" not in kept  # saved again: the same secret, not shown again
    renewed = await (await keyed.client.post("/console/notifications", data={**form, "rotate_secret": "1"})).text()
    new = re.search(r"<code>(whsec_[^<]+)</code>", renewed)
    assert new, renewed[:800]
    assert new.group(1) != old.group(1)
    saved = await keyed.stores.notify.settings(tenant)
    assert saved is not None
    assert saved.webhook_url == f"https://{HOST}/hook"
