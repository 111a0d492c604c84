"""Where the Kafka engine puts a keyed record: the Java client's rule, each key hashed once (docs/architecture.md s.4).

aiokafka's ``DefaultPartitioner`` hashes the key with a pure-Python murmur2 on every send, ~8 us
for a URL. A document's key is sent at several hops (an image URL: crawl.requests, crawl.images,
media.cached; a page URL: documents.parsed, documents.ready) and a host's key at every request of
the host, so the producer hashes the same few thousand keys over and over: ~0.1 ms of CPU per cold
document (bench/e2e.py, real engines). ``KeyPartitioner`` gives the same partition as
``DefaultPartitioner`` (murmur2, positive, modulo the partition count: what the Java client and
every other producer of a topic compute) and remembers the hashes of recent keys.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache

from aiokafka.partitioner import murmur2

__all__ = ["KeyPartitioner", "key_hash"]

#: keys whose hash is remembered: a burst of 10,000 cold documents is ~30,000 keys over ~40 s, and a
#: key comes back within seconds (the next hop), so 64 Ki entries (~10 MB at most) keep every
#: repeat a hit; a key seen once costs one eviction
KEYS_REMEMBERED = 1 << 16


@lru_cache(maxsize=KEYS_REMEMBERED)
def key_hash(key: bytes) -> int:
    """The key's murmur2 hash as the Java client uses it (the sign bit cleared)."""
    return int(murmur2(key)) & 0x7FFFFFFF


class KeyPartitioner:
    """aiokafka's partitioner protocol: a keyed record by its key's hash, an unkeyed one at random."""

    def __call__(self, key: bytes | None, all_partitions: Sequence[int], available: Sequence[int]) -> int:
        if key is None:
            return random.choice(available or all_partitions)  # spreading load, not secrecy
        return all_partitions[key_hash(key) % len(all_partitions)]
