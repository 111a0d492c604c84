"""The Kafka engine's partitioner puts every key where aiokafka's (the Java client's rule) does."""

from __future__ import annotations

import random

from aiokafka.partitioner import DefaultPartitioner

from shared.bus.kafka_keys import KeyPartitioner, key_hash


def test_a_key_goes_where_the_default_partitioner_puts_it() -> None:
    rng = random.Random(13)
    ours, theirs = KeyPartitioner(), DefaultPartitioner()
    keys = [b"", b"a", b"ab", b"abc", b"abcd", b"https://a.partner.test/img/1-a.jpg", "новости.рф".encode()]
    keys += [rng.randbytes(rng.randrange(1, 300)) for _ in range(2000)]
    for count in (1, 3, 12, 24, 100):
        parts = list(range(count))
        for key in keys:
            # twice: the second answer comes from the remembered hash
            assert ours(key, parts, parts) == theirs(key, parts, parts) == ours(key, parts, parts)


def test_a_repeated_key_is_hashed_once() -> None:
    key_hash.cache_clear()
    ours, parts = KeyPartitioner(), list(range(12))
    for _ in range(5):
        ours(b"https://b.partner.test/news/7", parts, parts)
    info = key_hash.cache_info()
    assert (info.misses, info.hits) == (1, 4)


def test_an_unkeyed_record_goes_to_an_available_partition() -> None:
    ours = KeyPartitioner()
    assert {ours(None, [0, 1, 2], [2]) for _ in range(20)} == {2}
    assert {ours(None, [0, 1, 2], []) for _ in range(200)} <= {0, 1, 2}
