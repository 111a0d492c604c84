"""``open_bus(url)``: the bus engine named by the URL's scheme (docs/architecture.md section 4).

``open_configured(settings.bus)`` is the one way the product opens its bus from settings: every key
of ``[bus]`` (the URL, ``linger_ms``, ``client_id``, ``compression``) reaches the engine, for a cube
and for a command alike (``turbocubes dlq replay`` once opened the URL alone, so its producer
ignored the codec, the client id and the linger the operator had set).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from shared.bus.base import Bus, Consumer, Headers, Producer, Record, TopicPartition, TopicSpec
from shared.errors import ConfigError

if TYPE_CHECKING:
    from shared.config import BusConfig

__all__ = [
    "Bus",
    "Consumer",
    "Headers",
    "Producer",
    "Record",
    "TopicPartition",
    "TopicSpec",
    "open_bus",
    "open_configured",
]


def open_configured(cfg: BusConfig) -> Bus:
    """An unstarted bus as the ``[bus]`` settings say: their URL and every engine option."""
    return open_bus(cfg.url, linger_ms=cfg.linger_ms, client_id=cfg.client_id, compression=cfg.compression)


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
