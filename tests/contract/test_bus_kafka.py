"""The bus contract on Apache Kafka (the broker from ops/kafka/start)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from shared.bus.base import Bus
from shared.bus.kafka import KafkaBus
from tests.contract.bus_contract import BusContract

pytestmark = pytest.mark.kafka


class TestKafkaBus(BusContract):
    @pytest.fixture
    async def bus(self, kafka_url: str) -> AsyncIterator[Bus]:
        b = KafkaBus(kafka_url, linger_ms=5)
        await b.start()
        yield b
        await b.close()
