"""Items in batches: ownership, GUID moves, versions, what to record once published (docs/architecture.md section 3).

``ItemRecorder.apply`` turns prepared ``Candidate``s into ``Document``
outputs (or nothing: unchanged, or owned by a source of higher priority),
``BATCH`` items at a time: each step is one batch call to the hash store
(``get_many``, ``owners``, ``claim_many``, ``urls_for_guids``) instead of a
round trip per item, which is what lets a first load of a 100,000-offer YML
catalog fit in the handler's time (see ``handler.py``). ``remove_many`` does
the same for deletions. The store writes that mark items seen are collected
in a ``Seen`` and written, batched too, by ``record`` -- which the handler
runs after commit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cubes.parser import metrics
from cubes.parser.documents import Candidate, Removal, to_document
from cubes.parser.fulltext import PageOrders
from cubes.parser.model import ItemError
from cubes.parser.status import Outcome, note_conflict
from shared.hashing import TOMBSTONE
from shared.messages import SOURCE_PRIORITY, Document, DocumentDeleted, SourceKind, SourceRef
from shared.origins import canonical_origin, try_origin
from shared.previews import NOT_PREVIEWED, PREVIEWS_MAX
from shared.runtime.cube import Output
from shared.stores import ClaimOutcome, HashStore, Stores
from shared.webmaster.feed_options import FullText
from shared.webmaster.hosts import HostScope
from shared.webmaster.rights import source_tenant

__all__ = ["BATCH", "ItemRecorder", "Seen", "Source", "record"]

#: items per batch call to the hash store: 100,000 offers take 100 calls of each kind; on PostgreSQL
#: a batch write holds one advisory lock per URL, and 1,000 stays far below the lock table's size
BATCH = 1000


@dataclass
class Source:
    """Who is publishing: the kind decides priority; ``store_id`` keys hashes and ownership."""

    kind: SourceKind
    ref: SourceRef
    #: id in the hash store: "feed:<feed id>" or "tenant:<tenant id>" (what the api's deletions use)
    store_id: str
    host: str | None
    seen_at: datetime
    preview: bool = False
    #: the hosts its items may be on (``shared.webmaster.hosts``); None: ``host`` alone
    scope: HostScope | None = None
    #: the webmaster asked to see a fix now ("fetch now", a check): its documents say so
    #: (``Document.retry_failed_before``: images that failed before are ordered again at once), and
    #: ``resend``'s items -- the pages that lost something -- are published again even unchanged, since
    #: what was fixed may be outside the item (an image put back at the same URL)
    retry_failed_before: datetime | None = None
    resend: frozenset[str] = frozenset()
    #: the tenant publishing (None: the operator's feed, the autoparser): a page belongs to its tenant
    tenant_id: str | None = None
    #: the feed's setting: whether its summary-only items get their page's article (``fulltext.py``)
    full_text: FullText = FullText.never
    #: the feed's URL and its own fetch options (``shared.webmaster.feed_options.crawl_fields``): an item's page on
    #: the feed's origin is fetched with them
    feed_url: str | None = None
    fetch_fields: Mapping[str, Any] = field(default_factory=dict)

    @property
    def hosts(self) -> HostScope | str | None:
        """What the items' identity is checked against."""
        return self.scope or self.host


@dataclass
class Seen:
    """The store writes that make this run's items "seen", in the order ``record`` makes them."""

    #: old URLs of moved items: ownership given up
    releases: list[str] = field(default_factory=list)
    #: (guid, url) of published items
    guids: list[tuple[str, str]] = field(default_factory=list)
    #: (url, content hash or TOMBSTONE): the last write, the one that makes an item unchanged next time
    hashes: list[tuple[str, str]] = field(default_factory=list)


def _micros(now: datetime) -> int:
    return int(now.timestamp() * 1_000_000)


def _version(now: datetime, *floors: int) -> int:
    """What ``HashStore.check_and_set`` will store: max(now in microseconds, every earlier version + 1)."""
    return max((_micros(now), *(f + 1 for f in floors)))


def record(
    hashes: HashStore, store_id: str, seen: Seen, now: datetime, *, seen_at: datetime | None = None
) -> Callable[[], Awaitable[None]]:
    """The after-commit write of ``seen``: releases, then guids, then hashes (the item counts as seen last).

    ``seen_at``: the read of the source they came from (``Source.seen_at``), kept with each hash so
    that another attempt at that read tells what it already published (``ItemRecorder.apply``).
    """

    async def write() -> None:
        for url in seen.releases:  # moved items: rare, one by one
            await hashes.release(url, store_id)
        for start in range(0, len(seen.guids), BATCH):
            await hashes.remember_guids(store_id, seen.guids[start : start + BATCH])
        for start in range(0, len(seen.hashes), BATCH):
            await hashes.check_and_set_many(store_id, seen.hashes[start : start + BATCH], now=now, seen_at=seen_at)

    return write


class _Tenancy:
    """The tenants of hash-store sources and their rights, read once per batch (``shared.webmaster.rights``)."""

    def __init__(self, stores: Stores) -> None:
        self._stores = stores
        self._tenants: dict[str, str | None] = {}
        self._origins: dict[str, frozenset[str]] = {}
        #: sources of another tenant whose URLs this batch took (their tenant's right had ended)
        self.foreign: set[str] = set()

    async def tenant(self, source_id: str) -> str | None:
        if source_id not in self._tenants:
            self._tenants[source_id] = await source_tenant(self._stores, source_id)
        return self._tenants[source_id]

    async def holds(self, tenant_id: str, url: str) -> bool:
        """Whether ``tenant_id`` holds a right on the origin of ``url`` (canonical) now."""
        if tenant_id not in self._origins:
            claims = await self._stores.tenants.hosts_of(tenant_id)
            self._origins[tenant_id] = frozenset(c.origin for c in claims if c.verified)
        return canonical_origin(url) in self._origins[tenant_id]


class ItemRecorder:
    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    async def apply(
        self, cands: Sequence[Candidate], src: Source, run: Outcome, seen: Seen, parsed_at: datetime
    ) -> None:
        """Every candidate, in feed order, ``BATCH`` at a time (their URLs are unique within a body)."""
        if src.preview:
            for n, cand in enumerate(cands):
                if n < PREVIEWS_MAX:
                    run.outputs.append(self._doc(cand, src, _version(parsed_at), parsed_at))
                    run.results.append((cand.url, "preview", None))
                else:  # read and judged as far as the parser goes; no page made, no image fetched
                    run.results.append((cand.url, NOT_PREVIEWED, None))
            return
        losers: dict[str, tuple[str, bool]] = {}  # previous owner -> (first URL it lost, another tenant's)
        feed_id = src.ref.id if src.store_id.startswith("feed:") else None
        orders = PageOrders(
            feed_id,
            src.full_text,
            parsed_at,
            turbo=src.kind is SourceKind.turbo,
            catalog=src.kind is SourceKind.yml,
            fetch_fields=src.fetch_fields,
            feed_origin=try_origin(src.feed_url) if src.feed_url else None,
        )
        for start in range(0, len(cands), BATCH):
            await self._batch(cands[start : start + BATCH], src, run, seen, parsed_at, losers, orders)
        for loser, (url, foreign) in losers.items():
            # another tenant's source is told what took its page, never whose it is
            winner = (
                f"another tenant's {src.kind.value} source (your right on its origin ended)"
                if foreign
                else f"{src.kind.value} source {src.store_id}"
            )
            await note_conflict(self.stores.feeds, self.stores.problems, loser, url, winner, now=parsed_at)

    async def _batch(
        self,
        chunk: Sequence[Candidate],
        src: Source,
        run: Outcome,
        seen: Seen,
        parsed_at: datetime,
        losers: dict[str, tuple[str, bool]],
        orders: PageOrders,
    ) -> None:
        hashes = self.stores.hashes
        label = src.kind.value
        entries = await hashes.get_many(src.store_id, [c.url for c in chunk])
        todo = [
            c
            for c in chunk
            if (e := entries.get(c.url)) is None or e.content_hash != c.content_hash or c.url in src.resend
        ]
        # published by an earlier attempt at this very read of the source (a catalog's load resumed after
        # a crash: its batches are recorded as they go): unchanged to this attempt, sent on by this fetch
        sent = {c.url for c in todo}
        earlier = {c.url for c in chunk if c.url not in sent and entries[c.url].seen_at == src.seen_at}
        if unchanged := len(chunk) - len(todo) - len(earlier):
            metrics.UNCHANGED.labels(label).inc(unchanged)
        problems, floors = await self._own([c.url for c in todo], src, losers)
        # GUID following: an item new to this source whose guid it published under another URL has moved
        fresh = [c for c in todo if c.guid and c.url not in entries and c.url not in problems]
        known = await hashes.urls_for_guids(src.store_id, [c.guid for c in fresh if c.guid]) if fresh else {}
        moves = [
            (Removal(old, c.host, c.guid, c.index), f"moved to {c.url}")
            for c in fresh
            if c.guid and (old := known.get(c.guid)) is not None and old != c.url
        ]
        if moves:  # rare: the old URLs' tombstones go first, as the one-by-one handling did
            await self.remove_many([m for m, _ in moves], src, run, seen, parsed_at, reasons=[r for _, r in moves])
            seen.releases.extend(m.url for m, _ in moves)
        results: dict[str, tuple[str, str | None]] = {
            c.url: ("ok" if c.url in earlier else "unchanged", None) for c in chunk
        }
        now_us = _micros(parsed_at)  # _version's first term, once per batch
        for cand in todo:
            refused = problems.get(cand.url)
            if refused is not None:
                why, code = refused
                run.errors.append(ItemError(why, cand.line, None, cand.index, cand.url, code=code))
                results[cand.url] = ("conflict", why)
                continue
            entry = entries.get(cand.url)
            version = max(now_us, (entry.version if entry else 0) + 1, floors.get(cand.url, 0) + 1)  # = _version
            # the document, or its page request when it waits for its page's article (fulltext.py)
            run.outputs.extend(orders.route(cand, self._document(cand, src, version, parsed_at)))
            results[cand.url] = ("ok", None)
            if cand.guid:
                seen.guids.append((cand.guid, cand.url))
            seen.hashes.append((cand.url, cand.content_hash))
        run.results.extend((url, status, why) for url, (status, why) in results.items())  # feed order
        if problems:
            metrics.REJECTED.labels(label).inc(len(problems))
        if changed := len(todo) - len(problems):
            metrics.CHANGED.labels(label).inc(changed)

    async def _own(
        self, urls: list[str], src: Source, losers: dict[str, tuple[str, bool]]
    ) -> tuple[dict[str, tuple[str, str]], dict[str, int]]:
        """Claim ``urls`` for ``src``: (url -> (why it may not have it, code); url -> the previous owner's version).

        Between one tenant's sources (or sources of no tenant) priority decides. A URL another tenant's
        source published stays that tenant's while it holds a right on the URL's origin; once it holds
        none, the URL is free for this source whatever its priority (``shared.webmaster.rights``: the page rule).
        """
        if not urls:
            return {}, {}
        hashes = self.stores.hashes
        prio = SOURCE_PRIORITY[src.kind]
        owners = await hashes.owners(urls)
        tenancy = _Tenancy(self.stores)
        problems: dict[str, tuple[str, str]] = {}
        to_claim: list[str] = []
        for url in urls:
            owner = owners.get(url)
            if owner is not None and owner.source_id == src.store_id:
                continue
            theirs = None if owner is None else await tenancy.tenant(owner.source_id)
            if owner is not None and theirs is not None and theirs != src.tenant_id:
                if await tenancy.holds(theirs, url):
                    problems[url] = (
                        f"conflict: {url} was published by another tenant's source, which holds a right on its "
                        "origin: it stays theirs",
                        "conflict.other_tenant",
                    )
                    continue
                await hashes.release(url, owner.source_id)  # its tenant's right ended: the page is free
                tenancy.foreign.add(owner.source_id)
                to_claim.append(url)
            elif owner is not None and owner.priority >= prio:
                problems[url] = (
                    f"conflict: {url} belongs to source {owner.source_id} (priority {owner.priority} >= {prio})",
                    "conflict.outranked",
                )
            else:
                to_claim.append(url)
        if not to_claim:
            return problems, {}
        outcomes = await hashes.claim_many(to_claim, src.store_id, prio)
        taken: dict[str, list[str]] = {}  # previous owner -> the URLs taken from it
        for url, outcome in zip(to_claim, outcomes, strict=True):
            if outcome is ClaimOutcome.outranked:  # somebody claimed it between owners() and claim_many()
                problems[url] = (
                    f"conflict: {url} belongs to a source of equal or higher priority",
                    "conflict.outranked",
                )
            elif (owner := owners.get(url)) is not None:
                taken.setdefault(owner.source_id, []).append(url)
        floors: dict[str, int] = {}
        for loser, lost in taken.items():
            # our version must beat what the previous owner published
            previous = await hashes.get_many(loser, lost)
            floors.update({url: e.version for url, e in previous.items()})
            losers.setdefault(loser, (lost[0], loser in tenancy.foreign))
        return problems, floors

    def _doc(self, cand: Candidate, src: Source, version: int, parsed_at: datetime) -> Output:
        return Output("documents.parsed", self._document(cand, src, version, parsed_at), key=cand.url)

    def _document(self, cand: Candidate, src: Source, version: int, parsed_at: datetime) -> Document:
        return to_document(
            cand,
            source=src.ref,
            version=version,
            seen_at=src.seen_at,
            parsed_at=parsed_at,
            preview=src.preview,
            retry_failed_before=src.retry_failed_before,
        )

    async def remove_many(
        self, rems: Sequence[Removal], src: Source, run: Outcome, seen: Seen, now: datetime, *, reasons: Sequence[str]
    ) -> None:
        """Tombstones for ``rems`` (one reason each), unless already deleted or owned by a higher source."""
        hashes = self.stores.hashes
        label = src.kind.value
        for start in range(0, len(rems), BATCH):
            chunk = rems[start : start + BATCH]
            entries = await hashes.get_many(src.store_id, [r.url for r in chunk])
            owners = await hashes.owners([r.url for r in chunk])
            tenancy = _Tenancy(self.stores)
            for rem, reason in zip(chunk, reasons[start : start + BATCH], strict=True):
                entry = entries.get(rem.url)
                if entry is not None and entry.content_hash == TOMBSTONE:
                    run.results.append((rem.url, "unchanged", None))
                    continue
                owner = owners.get(rem.url)
                theirs = None if owner is None else await tenancy.tenant(owner.source_id)
                # another tenant's page: it stays theirs while they hold a right on its origin, and is
                # free (whatever the priorities) once they hold none -- the page rule, as in _own
                foreign = owner is not None and owner.source_id != src.store_id and theirs not in (None, src.tenant_id)
                if foreign and theirs is not None and await tenancy.holds(theirs, rem.url):
                    problem = f"deletion refused: {rem.url} was published by another tenant's source: it stays theirs"
                    run.errors.append(ItemError(problem, None, None, rem.index, rem.url, code="conflict.other_tenant"))
                    run.results.append((rem.url, "conflict", problem))
                    metrics.REJECTED.labels(label).inc()
                    continue
                if (
                    not foreign
                    and owner is not None
                    and owner.source_id != src.store_id
                    and owner.priority > SOURCE_PRIORITY[src.kind]
                ):
                    problem = f"deletion refused: {rem.url} belongs to source {owner.source_id} (higher priority)"
                    run.errors.append(ItemError(problem, None, None, rem.index, rem.url, code="conflict.outranked"))
                    run.results.append((rem.url, "conflict", problem))
                    metrics.REJECTED.labels(label).inc()
                    continue
                metrics.DELETED.labels(label).inc()
                msg = DocumentDeleted(
                    url=rem.url,
                    host=rem.host,
                    source=src.ref,
                    version=_version(now, entry.version if entry else 0),
                    reason=reason,
                    deleted_at=now,
                )
                run.outputs.append(Output("documents.deleted", msg, key=rem.url))
                run.results.append((rem.url, "deleted", None))
                seen.hashes.append((rem.url, TOMBSTONE))
