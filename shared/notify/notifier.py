"""The notifier: events told, deliveries sent and retried, digests (docs/architecture.md section 10,
"Notifications").

The api cube's timer runs ``Notifier.sweep`` every ``notify.sweep_s``; nothing in the pipeline waits
for it (a writer only adds an event row). A round:

1. takes the events not yet told, decides each one's channels for its tenant
   (``shared.notify.settings.channels``, the one rule) and records one delivery per channel;
2. takes the deliveries that are due under a lease and sends each: a webhook signed with the
   tenant's secret (``signing.py``) behind the SSRF guard (``webhook.py``), an e-mail through SMTP
   (``mail.py``). A failed attempt is tried again after a capped doubling backoff
   (``shared.runtime.retry.backoff_s``); after ``notify.max_attempts`` it is ``dead``, and the
   console shows the endpoint as a problem (``notify.endpoint_failing``, ``endpoint_problems``);
3. sends the digest of every tenant whose last one is older than ``notify.digest_every_s``;
4. once an hour, forgets the finished deliveries older than ``notify.keep_days`` (each channel's
   newest stays: it says whether the endpoint works) and the events left with none.

Sends of one round run at once, at most ``_PARALLEL``, so one slow endpoint does not hold the others.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from shared.clock import Clock
from shared.config import Settings
from shared.notify.events import Event, EventKind
from shared.notify.mail import MailSender
from shared.notify.settings import Channel, NotifySettings, channels
from shared.notify.webhook import WebhookResult, WebhookSender
from shared.problems import Problem, problem
from shared.runtime.retry import backoff_s
from shared.secretbox import SecretBox, Unsealable
from shared.stores.notify import Delivery, DeliveryStatus, NotifyStore

__all__ = ["Notifier", "endpoint_problems", "mail_text"]

log = logging.getLogger(__name__)

#: events told and deliveries sent per round at most; the rest wait for the next round
_BATCH = 200
#: sends of a round at once
_PARALLEL = 16
#: a taken delivery is another replica's again after this (well past a send's timeouts)
_LEASE_S = 120.0
#: digest items in one e-mail at most (a digest is read, not searched)
_DIGEST_MAX = 200
#: seconds between two prunings of the delivery log, and the rows one pruning deletes at most
_PRUNE_EVERY_S = 3600.0
_PRUNE_MAX = 10_000


def mail_text(event: Event) -> tuple[str, str]:
    """An event's e-mail: its subject and its text, in words."""
    d = event.detail
    what = {
        EventKind.problem_new: f"new problem {d.get('code')} on {event.subject}",
        EventKind.problem_resolved: f"resolved: {d.get('code')} on {event.subject}",
        EventKind.catalog_held: f"pages held back: the catalog {event.subject} lost more than half of its offers",
        EventKind.pages_held: f"pages of {event.subject} held back, not published: {d.get('url')}",
        EventKind.feed_failing: f"the feed {event.subject} is failing ({d.get('result')})",
        EventKind.feed_recovered: f"the feed {event.subject} works again",
        EventKind.right_changed: f"your right on {event.subject}: {d.get('change')}",
        EventKind.task_done: f"upload task {event.subject} {d.get('status')}",
        EventKind.autoparser_unavailable: f"the autoparser of {event.host} is unavailable",
        EventKind.test: "a test notification",
    }[event.kind]
    lines = [what, ""]
    if d.get("message"):
        lines.append(str(d["message"]))
    if d.get("hint"):
        lines.append(f"How to fix it: {d['hint']}")
    lines += ["", f"Host: {event.host}", f"At: {event.at.isoformat()}", f"Event: {event.kind.value} {event.event_id}"]
    return f"[turbocubes] {what}", "\n".join(lines)


def endpoint_problems(deliveries: Sequence[Delivery]) -> list[Problem]:
    """The webmaster's problem with its own endpoints: a channel whose latest finished delivery
    (the newest first in ``deliveries``) was given up."""
    out: list[Problem] = []
    seen: set[Channel] = set()
    for d in deliveries:
        if d.channel in seen or d.status in (DeliveryStatus.pending, DeliveryStatus.queued):
            continue
        seen.add(d.channel)
        if d.status is DeliveryStatus.dead:
            out.append(
                problem(
                    "notify.endpoint_failing",
                    f"the {d.channel.value} {d.target} did not take {d.attempts} attempts at {d.event.kind.value}: "
                    f"{d.error or 'no answer'}",
                    feed=d.target,
                )
            )
    return out


class Notifier:
    def __init__(
        self,
        settings: Settings,
        store: NotifyStore,
        clock: Clock,
        *,
        webhooks: WebhookSender,
        mail: MailSender,
        box: SecretBox,
    ) -> None:
        self._config = settings.notify
        self._store = store
        self._clock = clock
        self._webhooks = webhooks
        self._mail = mail
        self._box = box
        self._pruned_at: float | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings, store: NotifyStore, clock: Clock, *, resolver: object = None
    ) -> Notifier:
        return cls(
            settings,
            store,
            clock,
            webhooks=WebhookSender(settings, resolver=resolver),  # type: ignore[arg-type]
            mail=MailSender(settings.notify),
            box=SecretBox.from_settings(settings),
        )

    async def close(self) -> None:
        await self._webhooks.close()

    async def sweep(self) -> int:
        """One round; how many deliveries it attempted (digests included)."""
        await self.tell()
        sent = await self.send_due()
        sent += await self.send_digests()
        await self.prune()
        return sent

    async def prune(self) -> int:
        """Forget what ``notify.keep_days`` no longer keeps, at most once an hour; how many deliveries went."""
        now = self._clock.monotonic()
        if self._pruned_at is not None and now - self._pruned_at < _PRUNE_EVERY_S:
            return 0
        self._pruned_at = now
        before = self._clock.now() - timedelta(days=self._config.keep_days)
        return await self._store.prune(before, limit=_PRUNE_MAX)

    async def tell(self) -> int:
        events = await self._store.untold(limit=_BATCH)
        cache: dict[str, NotifySettings | None] = {}
        for e in events:
            if e.tenant_id not in cache:
                cache[e.tenant_id] = await self._store.settings(e.tenant_id)
            s = cache[e.tenant_id]
            now = self._clock.now()
            out = []
            for ch in channels(e, s):
                assert s is not None
                target = s.webhook_url if ch is Channel.webhook else s.email
                assert target is not None
                status = DeliveryStatus.queued if ch is Channel.digest else DeliveryStatus.pending
                out.append(Delivery(f"{e.event_id}/{ch.value}", e.tenant_id, e, ch, target, status, 0, now, now))
            await self._store.tell(e.event_id, out)
        return len(events)

    async def send_due(self) -> int:
        now = self._clock.now()
        due = await self._store.due(now, lease_until=now + timedelta(seconds=_LEASE_S), limit=_BATCH)
        gate = asyncio.Semaphore(_PARALLEL)

        async def one(d: Delivery) -> None:
            async with gate:
                await self._attempt(d)

        await asyncio.gather(*(one(d) for d in due))
        return len(due)

    async def _attempt(self, d: Delivery) -> None:
        result = await self._send(d)
        now = self._clock.now()
        attempts = d.attempts + 1
        if result.ok:
            status, next_at = DeliveryStatus.delivered, now
        elif attempts >= self._config.max_attempts:
            status, next_at = DeliveryStatus.dead, now
            log.warning(
                "notification %s to %s given up after %d attempts: %s", d.delivery_id, d.target, attempts, result.error
            )
        else:
            wait = backoff_s(attempts - 1, self._config.retry_base_s, self._config.retry_cap_s)
            status, next_at = DeliveryStatus.pending, now + timedelta(seconds=wait)
        await self._store.attempted(
            d.delivery_id,
            status=status,
            attempts=attempts,
            next_at=next_at,
            at=now,
            http_status=result.http_status,
            error=result.error,
        )

    async def _send(self, d: Delivery) -> WebhookResult:
        if d.channel is Channel.webhook:
            s = await self._store.settings(d.tenant_id)
            if s is None or s.sealed_secret is None:
                return WebhookResult(False, None, "the webhook has no secret: set the webhook again")
            try:
                secret = str(self._box.open(s.sealed_secret)["secret"])
            except (Unsealable, KeyError) as exc:
                return WebhookResult(False, None, f"the webhook's secret does not open: {exc}")
            return await self._webhooks.send(
                d.target, secret, d.event.payload(), delivery_id=d.delivery_id, now=self._clock.time()
            )
        subject, text = mail_text(d.event)
        return await self._mail.send(d.target, subject, text, at=self._clock.now())

    async def send_digests(self) -> int:
        now = self._clock.now()
        before = now - timedelta(seconds=self._config.digest_every_s)
        sent = 0
        for tenant in await self._store.digest_tenants(before, limit=_BATCH):
            items = await self._store.queued(tenant, limit=_DIGEST_MAX)
            if not items:
                continue
            result = await self._mail.send(items[0].target, *digest_text(items, now), at=now)
            if result.ok:
                await self._store.digest_sent(tenant, [d.delivery_id for d in items], at=now)
                sent += 1
            else:
                log.warning("digest of tenant %s not sent: %s", tenant, result.error)
        return sent


def digest_text(items: Sequence[Delivery], now: datetime) -> tuple[str, str]:
    lines = [f"What happened on your sites since the last digest ({len(items)}):", ""]
    for d in items:
        lines.append(f"- {d.event.at.isoformat()} {mail_text(d.event)[0].removeprefix('[turbocubes] ')}")
    return f"[turbocubes] your daily digest, {now.date().isoformat()}", "\n".join(lines)
