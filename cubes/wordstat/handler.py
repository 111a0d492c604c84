"""The wordstat cube's handler: ``search.queries`` → counters (docs/architecture.md section 3, "wordstat").

Each answered search is analyzed (its words' lemmas, ``shared.wordstat.lemmas``,
cached) and counted under its month, region and device, for its query, each of
its lemmas and each host its results showed. Counting is idempotent: the store
remembers every event id for ``wordstat.dedupe_window_s``, so a redelivered or
replayed event counts once; and a client's searches of one query count once a day
(the event's client key, ``shared/wordstat/clients.py``). A timer forgets ids older
than that window, and client keys and day keys older than yesterday's.

What is published of the counts (``wordstat.privacy_threshold`` and ``privacy_noise``,
``shared/wordstat/privacy.py``; why: ``README.md`` here).

A call does not wait for the store: its search joins the batch being gathered
(``batch.py``) and the runtime commits its input once that batch is durable.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, timedelta
from functools import lru_cache

from cubes.wordstat.batch import GroupCounter
from shared.clock import Clock, SystemClock
from shared.config import WordstatConfig
from shared.errors import Reject
from shared.messages import SearchQueryEvent
from shared.runtime.cube import Context, Output, TimerContext
from shared.stores.wordstat import CountedSearch, Privacy, WordstatStore, distinct_lemmas, month_of
from shared.wordstat.clients import DAYS_KEPT, day_of
from shared.wordstat.lemmas import analyze, normalize_query

__all__ = ["WordstatHandler", "counted", "privacy_of"]


_ZERO = timedelta(0)
#: distinct queries whose analysis stays in memory (searches repeat: a Zipf law, most hit the cache)
_CACHE_QUERIES = 100_000


@lru_cache(maxsize=_CACHE_QUERIES)
def _analyzed(query: str) -> tuple[str, str, int, tuple[str, ...]] | None:
    """(normalized query, lemmas per word, content words, distinct lemmas) of a query as sent, or None."""
    # normalized again: a producer other than our frontend may send "Ёлки" for "елки"
    words = analyze(normalize_query(query))
    if not words:
        return None
    lemmas = " ".join("|".join(w.lemmas) for w in words)
    return (" ".join(w.form for w in words), lemmas, sum(1 for w in words if not w.stop), distinct_lemmas(lemmas))


def counted(event: SearchQueryEvent) -> CountedSearch:
    """The search as the store counts it (its words analyzed)."""
    analyzed = _analyzed(event.query)
    if analyzed is None:
        raise Reject(f"search event {event.event_id} has no word to count: {event.query!r}")
    query, lemmas, content, lemma_set = analyzed
    at = event.at
    hosts = event.origins  # a webmaster sees the searches that showed its origin's pages (ws_hosts' key)
    return CountedSearch(
        event.event_id,
        query,
        lemmas,
        content,
        # the validated time is aware (the contract); UTC is what our frontend sends, the rest converts
        at.year * 100 + at.month if at.utcoffset() == _ZERO else month_of(at.astimezone(UTC)),
        event.region,
        event.device.value,
        # each once: the contract says so, a producer other than ours may not keep it
        tuple(hosts) if len(hosts) < 2 else tuple(dict.fromkeys(hosts)),
        lemma_set,
        event.client or "",
        day_of(at) if event.client else 0,
    )


class WordstatHandler:
    def __init__(self, store: WordstatStore, config: WordstatConfig, clock: Clock | None = None) -> None:
        self.store = store
        self.config = config
        self.clock = clock or SystemClock()
        self.counter = GroupCounter(store, privacy_of(config), clock=clock)

    async def handle(self, msg: SearchQueryEvent, ctx: Context | None = None) -> Sequence[Output]:
        search = counted(msg)
        await self.counter.room()
        durable = self.counter.add(search)
        if ctx is None:
            await durable  # called directly (tests, tools): counted once this returns
        else:
            ctx.commit_after(durable)  # the input is committed once its batch is durable (batch.py)
        return []

    async def flush(self) -> None:
        """Write the batch being gathered now (the cube's stop: its commits need not wait the linger)."""
        await self.counter.flush()

    async def forget(self, ctx: TimerContext | None = None) -> Sequence[Output]:
        """Timer: drop event ids older than the dedupe window, client keys and day keys past their days."""
        now = self.clock.now()
        await self.store.forget_seen(now - timedelta(seconds=self.config.dedupe_window_s))
        await self.store.forget_clients(day_of(now - timedelta(days=DAYS_KEPT - 1)))
        return []


def privacy_of(config: WordstatConfig) -> Privacy:
    """How the cube's new counter cells are hidden (``wordstat.privacy_*``)."""
    return Privacy(threshold=config.privacy_threshold, noise=config.privacy_noise)
