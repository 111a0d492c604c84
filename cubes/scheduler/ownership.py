"""Which feeds this scheduler replica ticks: those of the hosts in its partitions (docs/architecture.md section 3).

The scheduler runs as N replicas in one consumer group. ``crawl.feeds`` is keyed
by host, so the bus already gives each host's fetch results to exactly one
replica; the same rule decides who *schedules* the host's feeds: a feed is
scheduled in the partition of ``crawl.feeds`` its host falls in
(``schedule_partition``, computed with the bus's own partitioner, the one that
placed the results), and a replica ticks the partitions it holds right now
(``Cube.on_assignment``). When a replica dies or joins, the bus moves the
partitions, and the feeds move with them: nothing to hand over, since every
schedule lives in the store.

A replica built for the bus (``Ownership.of``) owns nothing until the runtime
has joined the group and says which partitions it holds: its timers start
before that, and a first tick of everything by every replica starting at once
would emit each feed N times. A lone ``Ownership()`` (a handler built by hand
in a test, a command) owns everything.
"""

from __future__ import annotations

from collections.abc import Callable

from shared.bus.base import Bus, TopicPartition

__all__ = ["OWNED_TOPIC", "Ownership"]

#: the input whose partitions decide ownership: keyed by host, like crawl.requests for the crawler
OWNED_TOPIC = "crawl.feeds"


class Ownership:
    def __init__(self, place: Callable[[bytes], int] | None = None) -> None:
        #: host key -> partition, as the bus places keys (None: one partition, for a lone scheduler)
        self._place = place
        self._assignment: Callable[[], set[TopicPartition]] | None = None
        #: a replica waits to be told its partitions; a lone scheduler owns them all
        self._lone = place is None

    @classmethod
    async def of(cls, bus: Bus) -> Ownership:
        """The ownership rule of ``bus``: its partitioner over ``crawl.feeds`` now."""
        return cls(await bus.partitioner(OWNED_TOPIC))

    def follow(self, assignment: Callable[[], set[TopicPartition]]) -> None:
        """``Cube.on_assignment``: read the partitions this process holds from now on."""
        self._assignment = assignment

    def partition_of(self, host: str) -> int:
        """Where the bus puts ``host``'s records of ``crawl.feeds`` (its runtime key: the host, UTF-8)."""
        if self._place is None:
            return 0
        return self._place(host.encode())

    def owned(self) -> frozenset[int] | None:
        """The partitions whose feeds this replica ticks; None: all of them (a lone scheduler)."""
        if self._assignment is None:
            return None if self._lone else frozenset()
        return frozenset(tp.partition for tp in self._assignment() if tp.topic == OWNED_TOPIC)

    def owns(self, host: str) -> bool:
        owned = self.owned()
        return owned is None or self.partition_of(host) in owned
