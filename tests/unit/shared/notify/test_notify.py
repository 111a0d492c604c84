"""Notifications end to end below the console: events from the stores, the one rule of who is told, signed
webhooks to a real aiohttp receiver, e-mail to a real SMTP server (aiosmtpd), retries, the SSRF guard,
the digest (shared/notify/)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from email import message_from_bytes
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiosmtpd.controller import Controller

from shared.config import Settings
from shared.notify.events import Event, EventKind, feed_state_kind
from shared.notify.notifier import Notifier
from shared.notify.service import overview, save, send_test
from shared.notify.settings import Channel, NotifySettings, SettingsRefused, When, channels, parse_settings
from shared.notify.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, verify
from shared.secretbox import new_key
from shared.stores import DeliveryStatus, FetchReport, TaskStatus
from tests.unit.cubes.api.apikit import ApiHarness, api_settings, rss

FEED = "https://a.partner.test/feed.xml"


def test_a_signature_verifies_and_a_replay_or_a_changed_body_does_not() -> None:
    body = b'{"kind":"problem.new"}'
    sig = sign("whsec_x", 1_000, body)
    assert verify("whsec_x", "1000", sig, body, now=1_100)
    assert not verify("whsec_x", "1000", sig, body, now=1_000 + 301)  # a replay past 5 minutes
    assert not verify("whsec_x", "1000", sig, body + b" ", now=1_100)  # the body changed
    assert not verify("whsec_x", "1001", sig, body, now=1_100)  # the timestamp changed
    assert not verify("whsec_y", "1000", sig, body, now=1_100)  # another secret
    assert not verify("whsec_x", "soon", sig, body, now=1_100)


def test_settings_are_checked_where_they_enter_each_refusal_naming_its_field() -> None:
    for body, name in (
        ({"webhook_url": "ftp://a.partner.test/x"}, "webhook_url"),
        ({"webhook_url": "https://user:pw@a.partner.test/x"}, "webhook_url"),
        ({"webhook_url": "https://a.partner.test/" + "x" * 3000}, "webhook_url"),
        ({"email": "a@b.example\r\nBcc: everyone@example.com"}, "email"),
        ({"email": "not an address"}, "email"),
        ({"events": {"problem.new": "sometimes"}}, "events.problem.new"),
        ({"events": {"everything": "now"}}, "events.everything"),
        # a value that is not a string (schemathesis sent {}: a 500, 'unhashable type: dict')
        ({"events": {"autoparser.unavailable": {}}}, "events.autoparser.unavailable"),
        ({"events": {"task.done": ["now"]}}, "events.task.done"),
        ({"events": {"everything": {}}}, "events.everything"),
        ({"token": "x"}, "token"),
    ):
        with pytest.raises(SettingsRefused) as caught:
            parse_settings("t", body)
        assert caught.value.field == name, body
    s = parse_settings("t", {"webhook_url": "https://a.partner.test/hook", "events": {"task.done": "off"}})
    assert (s.webhook_url, s.when_of(EventKind.task_done), s.when_of(EventKind.problem_new)) == (
        "https://a.partner.test/hook",
        When.off,
        When.now,
    )
    # a key left out is kept; null clears it
    assert parse_settings("t", {"email": "w@a.partner.test"}, current=s).webhook_url == s.webhook_url
    assert parse_settings("t", {"webhook_url": None}, current=s).webhook_url is None


def test_who_is_told_follows_each_kinds_setting() -> None:
    e = Event("e", "t", EventKind.task_done, Settings_now(), "a.partner.test", "task-1")
    both = NotifySettings("t", "https://a.partner.test/hook", "w@a.partner.test")
    assert channels(e, both) == [Channel.digest]  # task.done: the digest by default
    assert channels(e, NotifySettings("t", "https://a.partner.test/hook")) == []  # a digest needs an address
    now = NotifySettings("t", "https://a.partner.test/hook", "w@a.partner.test", {EventKind.task_done: When.now})
    assert channels(e, now) == [Channel.webhook, Channel.email]
    off = NotifySettings("t", "https://a.partner.test/hook", None, {EventKind.task_done: When.off})
    assert channels(e, off) == []
    assert channels(e, None) == []


def Settings_now() -> Any:
    from datetime import UTC, datetime

    return datetime(2026, 12, 2, tzinfo=UTC)


def test_a_feed_turns_failing_once_and_recovers_once() -> None:
    assert feed_state_kind(None, "unreachable") is EventKind.feed_failing
    assert feed_state_kind("parsed", "http_5xx") is EventKind.feed_failing
    assert feed_state_kind("http_5xx", "timeout") is None  # still failing: told once
    assert feed_state_kind("timeout", "not_modified") is EventKind.feed_recovered
    assert feed_state_kind("parsed", "throttled") is None  # a wait the host asked for is not a failure
    assert feed_state_kind(None, "parsed") is None


@dataclass
class Receiver:
    """A real webhook endpoint: answers ``status`` and keeps each request."""

    status: int = 200
    got: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: web.Request) -> web.Response:
        self.got.append((dict(request.headers), await request.read()))
        self.arrived.set()
        return web.Response(status=self.status, text="ok" if self.status < 300 else "down for maintenance")


class Mailbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[Receiver, str]]:
    r = Receiver()
    app = web.Application()
    app.router.add_post("/hook", r.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield r, f"http://127.0.0.1:{port}/hook"
    await runner.cleanup()


@pytest.fixture
def mailbox() -> Any:
    box = Mailbox()
    # aiosmtpd connects to its own port to know it is up, so it needs the port before it starts
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    yield box, controller.port
    controller.stop()


def _settings(tmp_path: Path, smtp_port: int, **notify: Any) -> Settings:
    return api_settings(tmp_path).replace(
        secrets={"key": new_key()},
        notify={"smtp_host": "127.0.0.1", "smtp_port": smtp_port, "mail_from": "turbocubes@example.com", **notify},
    )


async def _feed(api: ApiHarness, token: str) -> str:
    resp = await api.client.post("/api/v1/feeds", json={"url": FEED}, headers=api.auth(token))
    assert resp.status == 201, await resp.text()
    feed_id: str = (await resp.json())["feed_id"]
    return feed_id


def _notifier(api: ApiHarness) -> Notifier:
    return Notifier.from_settings(api.settings, api.stores.notify, api.clock, resolver=api.resolver)


async def test_a_new_problem_and_its_resolution_reach_a_signed_webhook_and_an_smtp_server(
    tmp_path: Path, receiver: tuple[Receiver, str], mailbox: tuple[Mailbox, int]
) -> None:
    hook, url = receiver
    box, port = mailbox
    async with ApiHarness(tmp_path, settings=_settings(tmp_path, port)) as api:
        tenant, token = await api.tenant()
        feed_id = await _feed(api, token)
        resp = await api.client.put(
            "/api/v1/notifications",
            json={"webhook_url": url, "email": "webmaster@a.partner.test"},
            headers=api.auth(token),
        )
        assert resp.status == 200, await resp.text()
        secret = (await resp.json())["webhook_secret"]
        notifier = _notifier(api)
        t0 = api.clock_now()
        await api.stores.problems.add_report(FetchReport(feed_id, t0, "parsed", 200, 2, counts={"item.no_title": 1}))
        await notifier.sweep()
        [(headers, body)] = hook.got
        assert verify(secret, headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER], body, now=api.clock.time())
        event = orjson.loads(body)
        assert (event["kind"], event["code"], event["state"], event["subject"]) == (
            "problem.new",
            "item.no_title",
            "new",
            FEED,
        )
        assert event["hint"]  # what to do about it
        [mail] = box.messages
        assert mail["To"] == "webmaster@a.partner.test"
        assert "item.no_title" in mail["Subject"]
        # the same report again (a redelivery) tells nothing more; the fix is told as resolved
        await api.stores.problems.add_report(FetchReport(feed_id, t0, "parsed", 200, 2, counts={"item.no_title": 1}))
        await api.stores.problems.add_report(
            FetchReport(feed_id, t0 + timedelta(minutes=5), "parsed", 200, 2, counts={})
        )
        await notifier.sweep()
        assert [orjson.loads(b)["kind"] for _, b in hook.got] == ["problem.new", "problem.resolved"]
        assert len(box.messages) == 2
        log = (await overview(api.stores.notify, tenant, owner=True)).deliveries
        assert {(d.event.kind, d.channel, d.status) for d in log} == {
            (k, c, DeliveryStatus.delivered)
            for k in (EventKind.problem_new, EventKind.problem_resolved)
            for c in (Channel.webhook, Channel.email)
        }
        await notifier.close()


async def test_a_dead_endpoint_is_retried_with_backoff_then_given_up_and_shown_as_a_problem(
    tmp_path: Path, receiver: tuple[Receiver, str], mailbox: tuple[Mailbox, int]
) -> None:
    hook, url = receiver
    hook.status = 503
    _, port = mailbox
    settings = _settings(tmp_path, port, max_attempts=3, retry_base_s=60.0, retry_cap_s=3600.0)
    async with ApiHarness(tmp_path, settings=settings) as api:
        tenant, _ = await api.tenant()
        await save(api.stores.notify, _box(settings), tenant, {"webhook_url": url}, now=api.clock_now())
        await send_test(api.stores.notify, tenant, now=api.clock_now())
        notifier = _notifier(api)
        waits = []
        for _ in range(3):
            await notifier.sweep()
            [d] = (await overview(api.stores.notify, tenant, owner=True)).deliveries
            waits.append((d.status, d.attempts, (d.next_at - api.clock_now()).total_seconds()))
            await notifier.sweep()  # not due yet: nothing is sent again
            api.clock.advance(3600)
        assert len(hook.got) == 3
        assert waits == [
            (DeliveryStatus.pending, 1, 60.0),
            (DeliveryStatus.pending, 2, 120.0),
            (DeliveryStatus.dead, 3, 0.0),
        ]
        seen = await overview(api.stores.notify, tenant, owner=True)
        [p] = seen.problems
        assert p.code == "notify.endpoint_failing"
        assert "503" in p.message
        assert "down for maintenance" in p.message
        await notifier.close()


async def test_the_sweep_forgets_deliveries_older_than_keep_days_but_the_newest(
    tmp_path: Path, receiver: tuple[Receiver, str], mailbox: tuple[Mailbox, int]
) -> None:
    hook, url = receiver
    _, port = mailbox
    settings = _settings(tmp_path, port, keep_days=30.0)
    async with ApiHarness(tmp_path, settings=settings) as api:
        tenant, _ = await api.tenant()
        await save(api.stores.notify, _box(settings), tenant, {"webhook_url": url}, now=api.clock_now())
        notifier = _notifier(api)
        for _ in range(2):
            await send_test(api.stores.notify, tenant, now=api.clock_now())
            await notifier.sweep()
            api.clock.advance(60)
        assert len((await overview(api.stores.notify, tenant, owner=True)).deliveries) == 2
        api.clock.advance(29 * 86_400)  # within the keep: an hour has passed, the pruning runs and keeps both
        await notifier.sweep()
        assert len((await overview(api.stores.notify, tenant, owner=True)).deliveries) == 2
        api.clock.advance(2 * 86_400)
        await send_test(api.stores.notify, tenant, now=api.clock_now())
        await notifier.sweep()
        [kept] = (await overview(api.stores.notify, tenant, owner=True)).deliveries
        assert kept.created_at == api.clock_now()  # the newest, just delivered
        assert len(hook.got) == 3
        await notifier.close()


def _box(settings: Settings) -> Any:
    from shared.secretbox import SecretBox

    return SecretBox.from_settings(settings)


async def test_a_webhook_inside_the_network_is_refused_by_the_ssrf_guard(
    tmp_path: Path, receiver: tuple[Receiver, str], mailbox: tuple[Mailbox, int]
) -> None:
    hook, url = receiver
    _, port = mailbox
    settings = _settings(tmp_path, port).replace(http={"allowlist": []})
    async with ApiHarness(tmp_path, settings=settings) as api:
        tenant, _ = await api.tenant()
        await save(api.stores.notify, _box(settings), tenant, {"webhook_url": url}, now=api.clock_now())
        await send_test(api.stores.notify, tenant, now=api.clock_now())
        notifier = _notifier(api)
        await notifier.sweep()
        [d] = (await overview(api.stores.notify, tenant, owner=True)).deliveries
        assert d.status is DeliveryStatus.pending
        assert d.error is not None
        assert "SSRF guard" in d.error
        assert hook.got == []
        await notifier.close()


async def test_a_failing_feed_a_finished_task_and_the_digest(
    tmp_path: Path, receiver: tuple[Receiver, str], mailbox: tuple[Mailbox, int]
) -> None:
    hook, url = receiver
    box, port = mailbox
    async with ApiHarness(tmp_path, settings=_settings(tmp_path, port)) as api:
        tenant, token = await api.tenant()
        feed_id = await _feed(api, token)
        await save(
            api.stores.notify,
            _box(api.settings),
            tenant,
            {
                "webhook_url": url,
                "email": "w@a.partner.test",
                "events": {"problem.new": "off", "problem.resolved": "off"},
            },
            now=api.clock_now(),
        )
        t0 = api.clock_now()
        for minutes, result in ((0, "parsed"), (1, "http_5xx"), (2, "timeout"), (3, "parsed")):
            await api.stores.problems.add_report(FetchReport(feed_id, t0 + timedelta(minutes=minutes), result))
        resp = await api.upload(token, rss(1, "a.partner.test"))
        assert resp.status == 202, await resp.text()
        task = (await api.stores.tasks.recent(tenant))[0]
        await api.stores.tasks.update(task.task_id, status=TaskStatus.done, now=api.clock_now())
        # written twice: told once
        await api.stores.tasks.update(task.task_id, status=TaskStatus.done, now=api.clock_now())
        notifier = _notifier(api)
        await notifier.sweep()
        assert [orjson.loads(b)["kind"] for _, b in hook.got] == ["feed.failing", "feed.recovered"]
        # task.done is a digest kind: nothing yet but the two feed mails, then one digest a day
        assert [m["Subject"] for m in box.messages if "digest" in m["Subject"]] == []
        api.clock.advance(86_400 + 1)
        await notifier.sweep()
        [digest] = [m for m in box.messages if "digest" in m["Subject"]]
        text = digest.get_payload(decode=True).decode()
        assert task.task_id in text
        assert "(1)" in text  # the task written twice is in it once
        await notifier.sweep()
        assert len([m for m in box.messages if "digest" in m["Subject"]]) == 1
        await notifier.close()


async def test_the_secret_is_answered_once_and_another_tenant_sees_nothing_of_yours(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, settings=api_settings(tmp_path).replace(secrets={"key": new_key()})) as api:
        tenant, a = await api.tenant()
        _, b = await api.tenant("b.partner.test")
        hook = {"webhook_url": "https://a.partner.test/hook", "email": "owner@a.partner.test"}
        resp = await api.client.put("/api/v1/notifications", json=hook, headers=api.auth(a))
        first = await resp.json()
        assert first["webhook_secret"].startswith("whsec_")
        resp = await api.client.put("/api/v1/notifications", json={"email": "o@a.partner.test"}, headers=api.auth(a))
        assert "webhook_secret" not in await resp.json()  # the same webhook keeps its secret
        resp = await api.client.get("/api/v1/notifications", headers=api.auth(a))
        mine = await resp.json()
        assert mine["webhook_url"] == hook["webhook_url"]
        assert mine["webhook_secret_set"] is True
        assert first["webhook_secret"] not in await resp.text()
        await api.client.post("/api/v1/notifications/test", headers=api.auth(a))
        await _notifier(api).tell()
        for path in ("/api/v1/notifications", "/api/v1/notifications/deliveries"):
            resp = await api.client.get(path, headers=api.auth(b))
            text = await resp.text()
            assert resp.status == 200, text
            assert "a.partner.test" not in text, text
        # B setting its own leaves A's as they were
        await api.client.put("/api/v1/notifications", json={"webhook_url": None}, headers=api.auth(b))
        assert (await api.stores.notify.settings(tenant)).webhook_url == hook["webhook_url"]  # type: ignore[union-attr]
        resp = await api.client.put("/api/v1/notifications", json={"email": "x"}, headers=api.auth(a))
        assert resp.status == 422
        assert (await resp.json())["fields"][0]["field"] == "email"


async def test_the_owner_rotates_the_webhook_secret_and_the_old_one_stops_signing(
    tmp_path: Path, receiver: tuple[Receiver, str], mailbox: tuple[Mailbox, int]
) -> None:
    hook, url = receiver
    _, port = mailbox
    async with ApiHarness(tmp_path, settings=_settings(tmp_path, port)) as api:
        tenant, token = await api.tenant()
        put = {"webhook_url": url}
        old = (await (await api.client.put("/api/v1/notifications", json=put, headers=api.auth(token))).json())[
            "webhook_secret"
        ]
        resp = await api.client.put("/api/v1/notifications", json={"rotate_secret": True}, headers=api.auth(token))
        assert resp.status == 200, await resp.text()
        new = (await resp.json())["webhook_secret"]
        assert new.startswith("whsec_")
        assert new != old
        assert (await api.stores.notify.settings(tenant)).webhook_url == url  # type: ignore[union-attr]
        await send_test(api.stores.notify, tenant, now=api.clock_now())
        notifier = _notifier(api)
        await notifier.sweep()
        await notifier.close()
        [(headers, body)] = hook.got
        stamp, signature = headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER]
        assert verify(new, stamp, signature, body, now=api.clock.time())
        assert not verify(old, stamp, signature, body, now=api.clock.time())
        for refused in ({"rotate_secret": "yes"}, {"rotate_secret": True, "webhook_url": None}):
            resp = await api.client.put("/api/v1/notifications", json=refused, headers=api.auth(token))
            assert resp.status == 422, refused
            assert (await resp.json())["fields"][0]["field"] == "rotate_secret"
        resp = await api.client.put("/api/v1/notifications", json={"rotate_secret": False}, headers=api.auth(token))
        assert "webhook_secret" not in await resp.json()  # false: the secret stays


async def test_the_webhook_is_the_owners_an_editor_and_a_viewer_see_its_origin_only(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, settings=api_settings(tmp_path).replace(secrets={"key": new_key()})) as api:
        tenant, owner = await api.tenant()
        editor, _ = await api.stores.tenants.team.create_token(tenant, "the editor", "write")
        viewer, _ = await api.stores.tenants.team.create_token(tenant, "the viewer", "read")
        url = "https://a.partner.test/hooks/T0123/s3cr3t-path?token=k3y"
        resp = await api.client.put("/api/v1/notifications", json={"webhook_url": url}, headers=api.auth(owner))
        assert resp.status == 200
        for token in (editor, viewer):  # neither sets where the tenant's events go, nor gets a secret
            resp = await api.client.put(
                "/api/v1/notifications", json={"webhook_url": "https://a.partner.test/mine"}, headers=api.auth(token)
            )
            assert resp.status == 403
            assert (await resp.json())["error"] == "role_forbids"
        assert (await api.stores.notify.settings(tenant)).webhook_url == url  # type: ignore[union-attr]
        resp = await api.client.post("/api/v1/notifications/test", headers=api.auth(editor))
        assert resp.status == 202  # an editor may send a test: it goes where the owner said
        await _notifier(api).tell()
        for token in (editor, viewer):
            for path in ("/api/v1/notifications", "/api/v1/notifications/deliveries"):
                text = await (await api.client.get(path, headers=api.auth(token))).text()
                assert "s3cr3t" not in text, text
                assert "k3y" not in text, text
                assert "https://a.partner.test/…" in text, text
        mine = await (await api.client.get("/api/v1/notifications", headers=api.auth(owner))).json()
        assert mine["webhook_url"] == url
        [logged] = (await (await api.client.get("/api/v1/notifications/deliveries", headers=api.auth(owner))).json())[
            "deliveries"
        ]
        assert logged["target"] == url
