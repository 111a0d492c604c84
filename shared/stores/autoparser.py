"""The autoparser's store: host templates, training pairs, host calibrations (docs/architecture.md section 4).

Three things the autoparser learns per host and must not forget on a restart:

* a **host template** (``cubes/autoparser/templates.py``): the blocks that repeat across
  the host's pages, as the opaque bytes the cube serialises, one row per host;
* **pairs**: a page the autoparser crawled whose URL a full-text feed owns, with that
  feed's text of the same article, the free labelled data ``turbocubes autoparser train``
  learns from. The newest ``MAX_PAIRS_PER_HOST`` per host are kept (one row per URL: a
  re-crawl replaces the pair);
* a **host calibration** chosen by ``train`` where it validated better than the global
  model on the host's pairs: a body-probability threshold, or a model of its own.

Writes are a few per host and minute at most (the cube flushes a template every few
pages), so the store is plain SQL written once for both engines (``sql/autoparser.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

__all__ = ["MAX_PAIRS_PER_HOST", "AutoparserStore", "HostCalibration", "Pair"]

#: pairs kept per host: enough to train and validate a host's calibration, and a host's
#: worth of compressed pages (~20 KB each) stays a few MB
MAX_PAIRS_PER_HOST = 200


@dataclass(frozen=True, slots=True)
class Pair:
    host: str
    url: str
    #: the page as crawled (bytes as fetched)
    html: bytes
    #: the full text of the same article from the host's feed
    text: str
    title: str = ""
    captured_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class HostCalibration:
    host: str
    #: "threshold" (``threshold`` is the body-probability cut) or "model" (``model`` is a CatBoost file)
    kind: str
    threshold: float | None = None
    model: bytes = b""
    #: the validation figures that chose it (global against this), as ``train`` printed them
    figures: dict[str, Any] = field(default_factory=dict)
    trained_at: datetime | None = None


class AutoparserStore(Protocol):
    async def get_template(self, host: str) -> bytes | None: ...

    async def put_template(self, host: str, data: bytes, *, now: datetime | None = None) -> None: ...

    async def add_pair(self, pair: Pair) -> None:
        """Store ``pair`` (replacing one of the same URL); the host's oldest go past ``MAX_PAIRS_PER_HOST``."""
        ...

    async def pairs(self, host: str) -> list[Pair]:
        """The host's pairs, oldest first."""
        ...

    async def pair_hosts(self) -> dict[str, int]:
        """Hosts with pairs, and how many each has."""
        ...

    async def get_calibration(self, host: str) -> HostCalibration | None: ...

    async def put_calibration(self, calibration: HostCalibration) -> None: ...

    async def drop_calibration(self, host: str) -> bool:
        """Forget the host's calibration (the global model serves it again); True when there was one."""
        ...
