"""A search's client key: one per client, query and day, and no address in it (``shared/wordstat/clients.py``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from shared.wordstat.clients import CLIENT_KEY_CHARS, DayKeys, client_key, day_of

KEY = b"k" * 32


def test_a_client_is_one_key_a_query_and_day_whatever_its_address_spelling() -> None:
    one = client_key(KEY, "2001:db8:1:2::1", "иван петров")
    assert len(one) == CLIENT_KEY_CHARS
    assert re.fullmatch(r"[0-9a-f]{32}", one)  # an HMAC's hex, as search.queries' pattern wants: no address
    assert client_key(KEY, "2001:db8:1:2:ffff::9", "иван петров") == one  # the same /64: one client
    assert client_key(KEY, "2001:db8:1:3::1", "иван петров") != one  # another /64
    assert client_key(KEY, "::ffff:10.0.0.1", "q") == client_key(KEY, "10.0.0.1", "q")  # IPv4, mapped or not
    assert client_key(KEY, "2001:db8:1:2::1", "иван петрова") != one  # another query: not linked
    assert client_key(b"x" * 32, "2001:db8:1:2::1", "иван петров") != one  # another day's key


class _Store:
    def __init__(self) -> None:
        self.asked: list[int] = []

    async def day_key(self, day: int) -> bytes:
        self.asked.append(day)
        return bytes([day % 256]) * 32


async def test_the_day_key_is_read_once_a_day() -> None:
    store = _Store()
    keys = DayKeys(store)
    morning, evening = datetime(2026, 11, 20, 1, tzinfo=UTC), datetime(2026, 11, 20, 23, tzinfo=UTC)
    a = await keys.client_key(morning, "10.0.0.1", "q")
    assert await keys.client_key(evening, "10.0.0.1", "q") == a
    assert store.asked == [20261120]
    assert await keys.client_key(datetime(2026, 11, 21, tzinfo=UTC), "10.0.0.1", "q") != a
    assert store.asked == [20261120, 20261121]
    assert day_of(datetime(2026, 11, 20, 23, 30, tzinfo=UTC)) == 20261120
