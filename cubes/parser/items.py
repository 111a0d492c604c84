"""Per item: ownership, GUID moves, versions, and what to record once published (DESIGN.md section 3).

``ItemRecorder.one`` turns a prepared ``Candidate`` into a ``Document`` output
(or nothing: unchanged, or owned by a source of higher priority) and queues
the store writes that mark it seen; ``remove`` does the same for a deletion.
The handler runs those writes after commit (see ``handler.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from cubes.parser import metrics
from cubes.parser.documents import Candidate, Removal, to_document
from cubes.parser.model import ItemError
from cubes.parser.status import Outcome, note_conflict
from shared.clock import Clock
from shared.messages import SOURCE_PRIORITY, DocumentDeleted, SourceKind, SourceRef
from shared.runtime.cube import Output
from shared.stores.base import ClaimOutcome, Stores

__all__ = ["TOMBSTONE_HASH", "ItemRecorder", "Source"]

#: stored as the content hash of a deleted URL, so a repeated deletion is "unchanged"
TOMBSTONE_HASH = "tombstone"


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


def _now(clock: Clock) -> datetime:
    return datetime.fromtimestamp(clock.time(), UTC)


class ItemRecorder:
    def __init__(self, stores: Stores, clock: Clock) -> None:
        self.stores = stores
        self.clock = clock

    async def _own(self, url: str, src: Source) -> tuple[str | None, int]:
        """Claim ``url`` for ``src``: (the reason it may not have it, or None; the previous owner's version)."""
        hashes = self.stores.hashes
        prio = SOURCE_PRIORITY[src.kind]
        owner = await hashes.owner(url)
        if owner is not None and owner.source_id == src.store_id:
            return None, 0
        if owner is not None and owner.priority >= prio:
            return f"conflict: {url} belongs to source {owner.source_id} (priority {owner.priority} >= {prio})", 0
        outcome = await hashes.claim(url, src.store_id, prio, now=_now(self.clock))
        if outcome is ClaimOutcome.outranked:  # somebody claimed it between owner() and claim()
            return f"conflict: {url} belongs to a source of equal or higher priority", 0
        floor = 0
        if owner is not None:
            # our version must beat what the previous owner published
            previous = await hashes.get(owner.source_id, url)
            floor = previous.version if previous is not None else 0
            await note_conflict(self.stores.feeds, owner.source_id, url, f"{src.kind.value} source {src.store_id}")
        return None, floor

    def _version(self, now: datetime, *floors: int) -> int:
        """What ``HashStore.check_and_set`` will store: max(now in microseconds, every earlier version + 1)."""
        return max((int(now.timestamp() * 1_000_000), *(f + 1 for f in floors)))

    async def one(self, cand: Candidate, src: Source, run: Outcome, parsed_at: datetime) -> None:
        hashes = self.stores.hashes
        if src.preview:
            run.outputs.append(self._doc(cand, src, self._version(parsed_at), parsed_at))
            run.results.append((cand.url, "preview", None))
            return
        entry = await hashes.get(src.store_id, cand.url)
        if entry is not None and entry.content_hash == cand.content_hash:
            metrics.UNCHANGED.labels(src.kind.value).inc()
            run.results.append((cand.url, "unchanged", None))
            return
        problem, floor = await self._own(cand.url, src)
        if problem is not None:
            metrics.REJECTED.labels(src.kind.value).inc()
            run.errors.append(ItemError(problem, cand.line, None, cand.index, cand.url))
            run.results.append((cand.url, "conflict", problem))
            return
        moved_from = None
        if cand.guid and entry is None:  # a URL this source knows already has not moved here
            old = await hashes.url_for_guid(src.store_id, cand.guid)
            if old is not None and old != cand.url:
                moved_from = old
                await self.remove(Removal(old, cand.host, cand.guid, cand.index), src, run, parsed_at,
                                   reason=f"moved to {cand.url}")
        version = self._version(parsed_at, entry.version if entry else 0, floor)
        metrics.CHANGED.labels(src.kind.value).inc()
        run.outputs.append(self._doc(cand, src, version, parsed_at))
        run.results.append((cand.url, "ok", None))
        store_id, url, digest, guid = src.store_id, cand.url, cand.content_hash, cand.guid

        async def record() -> None:
            # after the document is durable (see the module docstring): then, and only then, it counts as seen
            if moved_from is not None:
                await hashes.release(moved_from, store_id)
            if guid:
                await hashes.remember_guid(store_id, guid, url)
            await hashes.check_and_set(store_id, url, digest, now=parsed_at)

        run.writes.append(record)

    def _doc(self, cand: Candidate, src: Source, version: int, parsed_at: datetime) -> Output:
        doc = to_document(cand, source=src.ref, version=version, seen_at=src.seen_at, parsed_at=parsed_at,
                          preview=src.preview)
        return Output("documents.parsed", doc, key=cand.url)

    async def remove(self, rem: Removal, src: Source, run: Outcome, now: datetime, *, reason: str) -> None:
        hashes = self.stores.hashes
        entry = await hashes.get(src.store_id, rem.url)
        if entry is not None and entry.content_hash == TOMBSTONE_HASH:
            run.results.append((rem.url, "unchanged", None))
            return
        owner = await hashes.owner(rem.url)
        if owner is not None and owner.source_id != src.store_id and owner.priority > SOURCE_PRIORITY[src.kind]:
            problem = f"deletion refused: {rem.url} belongs to source {owner.source_id} (higher priority)"
            run.errors.append(ItemError(problem, None, None, rem.index, rem.url))
            run.results.append((rem.url, "conflict", problem))
            metrics.REJECTED.labels(src.kind.value).inc()
            return
        metrics.DELETED.labels(src.kind.value).inc()
        msg = DocumentDeleted(url=rem.url, host=rem.host, source=src.ref,
                              version=self._version(now, entry.version if entry else 0), reason=reason, deleted_at=now)
        run.outputs.append(Output("documents.deleted", msg, key=rem.url))
        run.results.append((rem.url, "deleted", None))
        store_id, url = src.store_id, rem.url

        async def record() -> None:
            await hashes.check_and_set(store_id, url, TOMBSTONE_HASH, now=now)

        run.writes.append(record)
