"""``open_bus(url)``: the bus engine named by the URL's scheme (docs/architecture.md section 4)."""

from __future__ import annotations

from urllib.parse import urlsplit

from shared.bus.base import Bus, Consumer, Headers, Producer, Record, TopicPartition, TopicSpec
from shared.errors import ConfigError

__all__ = ["Bus", "Consumer", "Headers", "Producer", "Record", "TopicPartition", "TopicSpec", "open_bus"]


def open_bus(url: str, *, linger_ms: int = 5, client_id: str = "turbocubes", compression: str = "zstd") -> Bus:
    """An unstarted bus for ``url``; call ``await bus.start()``. ``compression`` is Kafka's codec
    (the embedded log stores records as they are)."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        from shared.bus.sqlite import SqliteBus

        return SqliteBus(url, linger_ms=linger_ms)
    if scheme == "kafka":
        from shared.bus.kafka import KafkaBus

        return KafkaBus(url, linger_ms=linger_ms, client_id=client_id, compression=compression)
    raise ConfigError("bus.url", url, "a bus URL", ["sqlite:///PATH.db", "kafka://HOST:PORT"])
