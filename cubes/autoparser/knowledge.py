"""What the cube knows about each host: its template and its calibration (docs/architecture.md section 3).

``HostKnowledge`` sits between the handler and the autoparser store:

* **templates**: ``template(host)`` reads the host's template once and keeps it in an LRU
  of ``_CACHED_HOSTS``; ``learnt(host, template)`` writes it back every ``FLUSH_EVERY``
  pages the template learnt (every page while it is young: its first pages are when it
  changes most). ``crawl.pages`` is keyed by host, so one cube instance owns a host at a
  time and a cached template is not written by anyone else; what a crash loses is at
  most a few pages of counts, which only delays the template.
* **calibrations**: ``calibration(host)`` gives the host's own body threshold or its own
  model (``train`` chose them where they validated better than the global model), read at
  most every ``REFRESH_S`` seconds per host; ``None`` means the global model.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from catboost import CatBoostClassifier, CatBoostError

from cubes.autoparser.model import BlockModel, check_model
from cubes.autoparser.templates import HostTemplate
from shared.clock import Clock, SystemClock
from shared.stores.autoparser import AutoparserStore

__all__ = ["FLUSH_EVERY", "REFRESH_S", "Calibration", "HostKnowledge"]

log = logging.getLogger(__name__)

#: a template is written back after this many new pages (and after each of its first YOUNG pages)
FLUSH_EVERY = 10
_YOUNG = 20
#: how stale a host's calibration may be after ``train`` changed it
REFRESH_S = 300.0
#: hosts whose template / calibration stay in memory (a template is a few KB to 50 KB)
_CACHED_HOSTS = 512


@dataclass(frozen=True)
class Calibration:
    threshold: float | None = None
    model: BlockModel | None = None


class HostKnowledge:
    def __init__(self, store: AutoparserStore, clock: Clock | None = None) -> None:
        self.store = store
        self.clock = clock or SystemClock()
        self._templates: OrderedDict[str, tuple[HostTemplate, int]] = OrderedDict()
        self._calibrations: OrderedDict[str, tuple[float, Calibration | None]] = OrderedDict()

    async def template(self, host: str) -> HostTemplate:
        hit = self._templates.get(host)
        if hit is not None:
            self._templates.move_to_end(host)
            return hit[0]
        data = await self.store.get_template(host)
        template = HostTemplate(host)
        if data is not None:
            try:
                template = HostTemplate.from_bytes(host, data)
            except ValueError as exc:  # a row of another format: start again rather than fail every page
                log.warning("host template of %s unreadable (%s): learning it again", host, exc)
        self._remember(host, template, 0)
        return template

    def _remember(self, host: str, template: HostTemplate, pending: int) -> None:
        self._templates[host] = (template, pending)
        self._templates.move_to_end(host)
        while len(self._templates) > _CACHED_HOSTS:
            self._templates.popitem(last=False)

    async def learnt(self, host: str, template: HostTemplate) -> None:
        """``template`` learnt one more page: write it back when it is due."""
        pending = self._templates.get(host, (template, 0))[1] + 1
        if pending >= FLUSH_EVERY or template.pages <= _YOUNG:
            await self.store.put_template(host, template.to_bytes())
            pending = 0
        self._remember(host, template, pending)

    async def calibration(self, host: str) -> Calibration | None:
        now = self.clock.monotonic()
        hit = self._calibrations.get(host)
        if hit is not None and now - hit[0] < REFRESH_S:
            return hit[1]
        row = await self.store.get_calibration(host)
        cal: Calibration | None = None
        if row is not None and row.kind == "threshold" and row.threshold is not None:
            cal = Calibration(threshold=row.threshold)
        elif row is not None and row.kind == "model" and row.model:
            cal = _load(host, row.model)
        self._calibrations[host] = (now, cal)
        self._calibrations.move_to_end(host)
        while len(self._calibrations) > _CACHED_HOSTS:
            self._calibrations.popitem(last=False)
        return cal


def _load(host: str, blob: bytes) -> Calibration | None:
    model = CatBoostClassifier()
    try:
        model.load_model(blob=blob)
        check_model(model, f"host model of {host}")
    except (CatBoostError, ValueError) as exc:
        # a model of an older feature set after an upgrade: the global model serves the host until
        # the next `turbocubes autoparser train`
        log.warning("host model of %s not usable (%s): the global model reads its pages", host, exc)
        return None
    return Calibration(model=BlockModel(model, Path(f"<host model {host}>")))
