"""Feed registration, once: the one service that adds, removes and nudges feeds (docs/architecture.md sections 1-3).

The webmaster API, the operator's ``turbocubes feeds`` and the demo all register
through ``FeedRegistry``, so the rules live here and nowhere
else:

* the URL is canonicalized once (``shared.urls.canonical_url``) and trusted
  past this boundary: the scheduler reads it from the row, never again from
  the announcement;
* the format is one of ``FeedFormat`` (a caller may narrow the choice), service names match
  ``SERVICE_NAME_RE``, at most ``SERVICES_MAX`` of them;
* the URL passes the SSRF guard as the crawler will apply it: scheme, literal
  addresses, and every address the host resolves to (``http.allowlist`` is the
  only way around it);
* the feed id is ``sha256(tenant + "\\n" + canonical URL)[:24]``
  (``feed_id_for``), so registering a URL twice is one feed.

A registration writes the *registration fields* of the row (``FeedStore.
upsert_feed``: url, host, format, tenant, services, autoparser, created_at,
deleted) and then announces the stored feed on ``feeds.registry``; the
scheduler, the only writer of the schedule fields, takes it from there. A
removal is announced first and soft-deleted after, so a bus outage leaves the
feed registered and a retry finds it again. ``fetch_now`` orders one fetch
through the host's polite crawler lane (``crawl.requests``, most urgent); its
result teaches the scheduler like any other.

Refusals are ``RegistrationRefused`` with one ``FeedProblem`` per offending
field (every problem at once, not the first), which the API answers as a 422
and the CLI prints.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from shared.clock import Clock, SystemClock
from shared.config import Settings
from shared.errors import BlockedAddressError, NotFound, Reject
from shared.http.guard import AddressGuard, GuardedResolver
from shared.messages import CrawlKind, CrawlRequest, FeedFormat, FeedRegistration
from shared.origins import canonical_origin
from shared.runtime.cube import Output
from shared.runtime.deps import Publish
from shared.secretbox import NoKey, SecretBox
from shared.stores import Feed, FeedStore, Task, TaskMode, TaskStore, UpsertOutcome
from shared.urls import MAX_URL_LENGTH, canonical_url, host_of
from shared.webmaster.feed_options import OptionsRefused, crawl_fields, merged_options, seal_options

__all__ = [
    "ARTICLE_PRIORITY",
    "AUTOPARSER_PREFIX",
    "CHECK_PREFIX",
    "FETCH_NOW_PREFIX",
    "FIX_PREFIX",
    "FRESH_PREFIXES",
    "KEEP",
    "PURGE_PREFIX",
    "REFRESH_PREFIX",
    "SERVICES_MAX",
    "SERVICE_NAME_RE",
    "URGENT_PRIORITY",
    "WEBMASTER_FORMATS",
    "Authorize",
    "FeedProblem",
    "FeedRegistry",
    "Registered",
    "RegistrationRefused",
    "check_request",
    "feed_id_for",
    "fetch_request",
    "page_request",
    "registration",
]

#: a service name: what a feed feeds ("news", "shop"); lower case so two spellings are one service
SERVICE_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
#: a feed feeds a handful of services; this bounds what one registration may claim
SERVICES_MAX = 16
#: crawl requests published in one batch (one acknowledgement wait for each)
_ORDERS_AT_ONCE = 500
#: what a webmaster may register through the API: every format, "auto" too (the parser detects it
#: from the body, and the feed's reports say what it found -- the API once refused the CLI's default)
WEBMASTER_FORMATS = (FeedFormat.rss, FeedFormat.turbo, FeedFormat.yml, FeedFormat.auto)
#: a push, an operator's or a webmaster's "fetch now", a new feed: ahead of routine polls in the lane
URGENT_PRIORITY = 0
#: the requester of a "fetch now" order: ``fetch:<id>``. The crawler never answers it from a result
#: remembered from before the order (the webmaster fixed the feed and wants to see it now), and the
#: parser's report of the fetch names the order, so the order's answer can link to its outcome
FETCH_NOW_PREFIX = "fetch:"
#: the requester of a feed check (``POST /api/v1/feeds/check``): ``check:<task id>``; the parser handles
#: its body as a preview (``cubes/parser/checks.py``) and the crawler, like "fetch now", fetches it fresh
CHECK_PREFIX = "check:"
#: the requester the media cube adds to its order of an image again at the webmaster's asking (a
#: document's ``retry_failed_before``): ``fix:<page URL>``; the crawler fetches it fresh as well
FIX_PREFIX = "fix:"
#: the requester of a webmaster's refresh of one page or image (``shared/webmaster/refresh.py``): ``refresh:<id>``
REFRESH_PREFIX = "refresh:"
#: the requester of a purge of one image (``shared/webmaster/refresh.py``): ``purge:<id>``; the cdn cube drops the
#: copy when the source no longer gives a good one
PURGE_PREFIX = "purge:"
#: requesters that want what is there now, never a result remembered from before they asked
FRESH_PREFIXES = (FETCH_NOW_PREFIX, CHECK_PREFIX, FIX_PREFIX, REFRESH_PREFIX, PURGE_PREFIX)
#: the autoparser's requester and source id of a host's pages: ``autoparser:<host>`` (the scheduler's
#: discovery orders them, the autoparser cube publishes them under it, the hash store keys them by it)
AUTOPARSER_PREFIX = "autoparser:"
#: article pages are bulk work: behind feeds, first fetches and images in a host's lane
ARTICLE_PRIORITY = 9

#: asked with the canonical origin of a feed's URL before it is registered or checked (the doors' owner check)
Authorize = Callable[[str], Awaitable[None]]


class _Keep:
    """``register(options=KEEP)``: the feed's options stay as they are."""


KEEP: Any = _Keep()


def feed_id_for(tenant_id: str | None, url: str) -> str:
    """A feed's id: stable for one tenant and canonical URL, so registering twice is one feed."""
    return hashlib.sha256(f"{tenant_id or ''}\n{url}".encode()).hexdigest()[:24]


def registration(
    feed: Feed, *, action: Literal["upsert", "delete"] = "upsert", registered_at: datetime | None = None
) -> FeedRegistration:
    """The ``feeds.registry`` message announcing ``feed`` (or its removal)."""
    return FeedRegistration(
        action=action,
        feed_id=feed.feed_id,
        url=feed.url,
        host=feed.host,
        format=FeedFormat(feed.format),
        services=list(feed.services),
        tenant_id=feed.tenant_id,
        autoparser=feed.autoparser,
        registered_at=registered_at or feed.created_at or SystemClock().now(),
    )


def check_request(task_id: str, url: str, host: str, now: datetime) -> Output:
    """The crawl request of a feed check: the host's lane, urgent, unconditional, no feed of its own."""
    return Output(
        "crawl.requests",
        CrawlRequest(
            kind=CrawlKind.feed,
            url=url,
            host=host,
            requesters=[f"{CHECK_PREFIX}{task_id}"],
            requested_at=now,
            priority=URGENT_PRIORITY,
        ),
    )


def page_request(url: str, host: str, now: datetime) -> Output:
    """The crawl request of an article page for the host's autoparser (bulk work in the host's lane)."""
    return Output(
        "crawl.requests",
        CrawlRequest(
            kind=CrawlKind.page,
            url=url,
            host=host,
            requesters=[AUTOPARSER_PREFIX + host],
            requested_at=now,
            priority=ARTICLE_PRIORITY,
        ),
    )


def fetch_request(feed: Feed, now: datetime, *, fetch_id: str | None = None) -> Output:
    """The crawl request of an unscheduled fetch of ``feed`` (a WebSub push, "fetch now"): urgent,
    unconditional, with the feed's own fetch options.

    ``fetch_id`` names a "fetch now" order (see ``FETCH_NOW_PREFIX``).
    """
    feed_id, url, host = feed.feed_id, feed.url, feed.host
    requesters = [f"feed:{feed_id}"] + ([f"{FETCH_NOW_PREFIX}{fetch_id}"] if fetch_id else [])
    return Output(
        "crawl.requests",
        CrawlRequest(
            kind=CrawlKind.feed,
            url=url,
            host=host,
            requesters=requesters,
            feed_id=feed_id,
            requested_at=now,
            priority=URGENT_PRIORITY,
            **crawl_fields(feed.options, feed.secret),
        ),
    )


@dataclass(frozen=True, slots=True)
class FeedProblem:
    """One reason a registration was refused: the field it concerns and what is wrong with it."""

    field: str
    message: str


class RegistrationRefused(Reject):
    """A registration was refused; ``problems`` names each offending field. Not worth retrying as is."""

    def __init__(self, problems: Sequence[FeedProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(f"{p.field}: {p.message}" for p in self.problems))


@dataclass(frozen=True, slots=True)
class Registered:
    """What ``register`` did: the stored feed, and whether it was new, changed or already so."""

    feed: Feed
    outcome: UpsertOutcome


def _service_problems(services: Iterable[Any]) -> list[FeedProblem]:
    names = list(services)
    if len(names) > SERVICES_MAX:
        return [FeedProblem("services", f"at most {SERVICES_MAX} service names")]
    return [
        FeedProblem(f"services[{i}]", "a lower-case name: letters, digits, _ or -, up to 32, starting with a letter")
        for i, name in enumerate(names)
        if not isinstance(name, str) or not SERVICE_NAME_RE.match(name)
    ]


class FeedRegistry:
    """Registers, removes and nudges feeds: the only writer of a feed row's registration fields."""

    def __init__(
        self,
        feeds: FeedStore,
        publish: Publish,
        guard: AddressGuard,
        *,
        resolver: Any = None,
        clock: Clock | None = None,
        box: SecretBox | None = None,
    ) -> None:
        self.feeds = feeds
        self._publish = publish
        self._guard = guard
        #: seals a feed's credentials (no box, or one without a key: no feed may be given them)
        self._box = box or SecretBox("")
        #: the resolver the guard wraps when a feed's host is checked (tests map *.partner.test)
        self._resolver = resolver
        self._clock = clock or SystemClock()

    @classmethod
    def from_settings(
        cls, settings: Settings, feeds: FeedStore, publish: Publish, *, resolver: Any = None, clock: Clock | None = None
    ) -> FeedRegistry:
        return cls(
            feeds,
            publish,
            AddressGuard(settings.http.allowlist),
            resolver=resolver,
            clock=clock,
            box=SecretBox.from_settings(settings),
        )

    # ------------------------------------------------------------------ the rules

    def validate(
        self, url: Any, fmt: Any, services: Iterable[Any] = (), *, formats: Iterable[FeedFormat] = tuple(FeedFormat)
    ) -> tuple[str, FeedFormat, tuple[str, ...]]:
        """The canonical URL, the format and the sorted, distinct service names; every problem at once."""
        problems: list[FeedProblem] = []
        canonical = ""
        if not isinstance(url, str) or not url:
            problems.append(FeedProblem("url", "required: the absolute http(s) URL of the feed"))
        elif len(url) > MAX_URL_LENGTH:
            problems.append(FeedProblem("url", f"at most {MAX_URL_LENGTH} characters (got {len(url)})"))
        else:
            try:
                canonical = canonical_url(url)
            except ValueError as exc:
                problems.append(FeedProblem("url", str(exc)))
        allowed = tuple(formats)
        feed_format = next((f for f in allowed if f.value == fmt), None)
        if feed_format is None:
            problems.append(FeedProblem("format", f"required, one of {', '.join(f.value for f in allowed)}"))
        names = list(services)
        problems += _service_problems(names)
        if problems:
            raise RegistrationRefused(problems)
        assert feed_format is not None
        return canonical, feed_format, tuple(sorted(set(names)))

    async def check_address(self, url: str) -> None:
        """The SSRF guard as the crawler applies it: scheme and literal IPs, then every resolved address."""
        try:
            parsed = self._guard.check_url(url)
            resolver = GuardedResolver(self._guard, self._resolver)
            try:
                await resolver.resolve(parsed.host or host_of(url), parsed.port or 0)
            finally:
                await resolver.close()
        except BlockedAddressError as exc:
            raise RegistrationRefused([FeedProblem("url", exc.message)]) from None
        except (OSError, ValueError) as exc:
            raise RegistrationRefused([FeedProblem("url", f"the host cannot be resolved: {exc}")]) from None

    # ------------------------------------------------------------------ the service

    async def register(
        self,
        url: Any,
        *,
        fmt: Any = FeedFormat.auto.value,
        services: Iterable[Any] = (),
        autoparser: bool = False,
        tenant_id: str | None = None,
        formats: Iterable[FeedFormat] = tuple(FeedFormat),
        authorize: Authorize | None = None,
        options: Any = KEEP,
    ) -> Registered:
        """Validate, store and announce one feed; ``RegistrationRefused`` when it may not be registered.

        ``authorize(origin)`` runs after validation and before the address check, with the origin of
        the feed's URL (the doors' "does the tenant hold a right on it?", ``shared.webmaster.access.origin_claim``);
        whatever it raises goes through. ``options`` (a JSON
        object, ``shared/webmaster/feed_options.py``) is merged over the feed's current ones; ``KEEP`` (the
        default) keeps them, None removes them.
        """
        canonical, feed_format, names = self.validate(url, fmt, services, formats=formats)
        host = host_of(canonical)
        feed_id = feed_id_for(tenant_id, canonical)
        current = await self.feeds.get(feed_id)
        public, secret = (current.options, current.secret) if current is not None else (None, None)
        if options is not KEEP:
            public, secret = self._options(public, secret, options)
        if authorize is not None:
            await authorize(canonical_origin(canonical))
        await self.check_address(canonical)
        feed = Feed(
            feed_id=feed_id,
            url=canonical,
            host=host,
            format=feed_format.value,
            tenant_id=tenant_id,
            services=names,
            autoparser=autoparser,
            options=public,
            secret=secret,
        )
        outcome = await self.feeds.upsert_feed(feed)
        stored = await self.feeds.get(feed.feed_id) or feed
        # announced even when unchanged: a registration repeated after a lost announcement repairs it
        await self._announce(registration(stored))
        return Registered(stored, outcome)

    def _options(self, public: str | None, secret: str | None, change: Any) -> tuple[str | None, str | None]:
        """The feed's options column and sealed secret after ``change``; every problem at once."""
        try:
            merged = merged_options(public, secret, change, self._box)
        except OptionsRefused as exc:
            raise RegistrationRefused([FeedProblem(f, m) for f, m in exc.problems]) from None
        if merged is None:
            return None, None
        try:
            shown, sealed = seal_options(merged, self._box)
        except NoKey:
            field = "options.basic_auth" if merged.basic_auth is not None else "options.headers"
            problem = FeedProblem(field, "credentials cannot be kept here: the operator has not set secrets.key")
            raise RegistrationRefused([problem]) from None
        return shown.to_json(), sealed

    async def remove(self, feed_id: str) -> Feed:
        """Announce the removal, then soft-delete; the removed feed, or ``NotFound`` when no live one."""
        feed = await self._live(feed_id)
        # announced first: if the bus is down the feed stays registered and a retry finds it again
        await self._announce(registration(feed, action="delete", registered_at=self._clock.now()))
        await self.feeds.delete_feed(feed_id)
        return feed

    async def fetch_now(self, feed_id: str, *, fetch_id: str | None = None) -> Feed:
        """Order one fetch of a live feed through its host's polite lane; ``NotFound`` when no live one.

        ``fetch_id`` (default: none) names the order, so its outcome can be found in the feed's
        history (``ProblemStore.report_for_fetch``).
        """
        feed = await self._live(feed_id)
        await self._publish([fetch_request(feed, self._clock.now(), fetch_id=fetch_id)])
        return feed

    async def fetch_pages(self, host: str, urls: Sequence[str]) -> None:
        """Order a fetch of each of ``urls``, article pages of ``host``, for its autoparser."""
        now = self._clock.now()
        for start in range(0, len(urls), _ORDERS_AT_ONCE):
            await self._publish([page_request(u, host, now) for u in urls[start : start + _ORDERS_AT_ONCE]])

    async def check(self, url: Any, *, tasks: TaskStore, tenant_id: str, authorize: Authorize) -> Task:
        """Order a check of ``url``: fetched through the host's polite lane and parsed as a
        preview, publishing nothing (``cubes/parser/checks.py``); the upload task the results go to.

        The same rules as a registration (canonical http(s) URL; ``authorize(origin)``: the tenant's
        right on the URL's origin, as the crawler fetches nobody else's site on a tenant's behalf; the
        SSRF guard), then the task is created and the crawl request published.
        """
        canonical, _, _ = self.validate(url, FeedFormat.auto.value)
        host = host_of(canonical)
        await authorize(canonical_origin(canonical))
        await self.check_address(canonical)
        now = self._clock.now()
        task = await tasks.create(
            Task(task_id=uuid.uuid4().hex, tenant_id=tenant_id, host=host, source_url=canonical, mode=TaskMode.debug),
            now=now,
        )
        await self._publish([check_request(task.task_id, canonical, host, now)])
        return task

    async def _live(self, feed_id: str) -> Feed:
        feed = await self.feeds.get(feed_id)
        if feed is None or feed.deleted:
            raise NotFound(f"no such feed {feed_id!r}")
        return feed

    async def _announce(self, message: FeedRegistration) -> None:
        await self._publish([Output("feeds.registry", message, key=message.feed_id)])
