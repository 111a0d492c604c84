"""Outages of the engines a process depends on, told once (docs/architecture.md section 4, runtime).

An engine that goes away (the broker, the database, the blob store) is waited out: nothing is
lost, the cubes go on where they stopped. What an operator needs from that is to know it: when it
began, that it lasts, when it ended. What they got was the opposite: a 136 s broker outage left
8,000-11,000 lines of the Kafka client's errors in each cube's log, and nothing anywhere that said
"Kafka is down" in a word.

So each process keeps one ``Outages`` (``OUTAGES``), fed by whoever meets a dependency down or
back -- the runtime's outage waits and bus recovery, the timers, the status writer, the Kafka
client's own errors (``shared/bus/kafka_health.py``) -- and it says it once:

* one WARNING when the outage begins (the first failure, with its error), and one when it ends
  (how long it lasted, how many failures were held back); the failures in between are DEBUG;
* ``turbocubes_dependency_down{dependency}`` is 1 meanwhile (an alert in ``ops/prometheus``), and
  ``turbocubes_outages_total{dependency}`` counts them;
* ``problems()``: an ``engine.unavailable`` problem per outage in progress, which ``/healthz`` and
  the status snapshots show.

A dependency is ``bus``, ``store`` or ``blobs`` (``dependency_of`` names an error's).

The engines' client libraries log their own retries (aiokafka ~120 lines a second while the broker
is away; asyncpg's pool a traceback each time it fails to reconnect): ``ClientLogGate``, a filter on
a library's loggers, takes its connection errors as evidence of an outage (they begin one, told
once, and tell ``listeners``), and while its dependency is down holds everything the library logs
at DEBUG. Outside an outage what it logs passes, the same line at most once per ``REPEAT_S``.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client import Counter, Gauge

from shared.clock import at
from shared.errors import BlobUnavailable, BusUnavailable, StoreUnavailable, is_outage
from shared.problems import Problem, problem

__all__ = ["DEPENDENCIES", "OUTAGES", "ClientLogGate", "Outages", "dependency_of"]

log = logging.getLogger("turbocubes.outages")

#: what each dependency is, in the log's words
DEPENDENCIES = {"bus": "the bus", "store": "the store", "blobs": "the blob store"}

DEPENDENCY_DOWN = Gauge(
    "turbocubes_dependency_down",
    "1 while this process cannot reach one of its engines (bus, store, blobs)",
    ["dependency"],
)
OUTAGES_TOTAL = Counter("turbocubes_outages_total", "Outages of an engine this process met", ["dependency"])


def dependency_of(exc: BaseException) -> str:
    """The dependency an outage error is about (``bus`` for an engine's own error of unknown kind)."""
    for kind, name in ((StoreUnavailable, "store"), (BlobUnavailable, "blobs"), (BusUnavailable, "bus")):
        if isinstance(exc, kind):
            return name
    cause = exc.__cause__
    return dependency_of(cause) if cause is not None else "bus"


@dataclass
class _Down:
    since: float  # wall clock, for the problem's text
    began: float  # monotonic, for the duration
    detail: str
    held: int = 0


class Outages:
    """The outages in progress of one process's dependencies."""

    def __init__(self) -> None:
        self._down: dict[str, _Down] = {}

    def down(self, dependency: str, detail: str) -> bool:
        """``dependency`` failed (``detail``: the error, and where); True when this began an outage."""
        current = self._down.get(dependency)
        if current is not None:
            current.held += 1
            log.debug("%s still unreachable: %s", DEPENDENCIES.get(dependency, dependency), detail)
            return False
        self._down[dependency] = _Down(time.time(), time.monotonic(), detail)
        DEPENDENCY_DOWN.labels(dependency).set(1)
        OUTAGES_TOTAL.labels(dependency).inc()
        log.warning(
            "%s is unreachable (%s); the work waits for it and goes on where it stopped once it is back",
            DEPENDENCIES.get(dependency, dependency),
            detail,
        )
        return True

    def met(self, exc: BaseException, where: str) -> bool:
        """``exc`` met in ``where``: an outage (``shared.errors.is_outage``) is recorded and True; any
        other error is the caller's to report."""
        if not is_outage(exc):
            return False
        self.down(dependency_of(exc), f"{where}: {type(exc).__name__}: {exc}")
        return True

    def up(self, dependency: str) -> bool:
        """``dependency`` answered again; True when this ended an outage."""
        current = self._down.pop(dependency, None)
        if current is None:
            return False
        DEPENDENCY_DOWN.labels(dependency).set(0)
        log.warning(
            "%s is back after %.0f s (%d failure(s) while it was away, logged at DEBUG)",
            DEPENDENCIES.get(dependency, dependency),
            time.monotonic() - current.began,
            current.held + 1,
        )
        return True

    def is_down(self, dependency: str) -> bool:
        return dependency in self._down

    def problems(self) -> list[Problem]:
        """One ``engine.unavailable`` problem per outage in progress."""
        return [
            problem(
                "engine.unavailable",
                f"{DEPENDENCIES.get(dep, dep)} has been unreachable since "
                f"{at(d.since):%Y-%m-%d %H:%M:%S} UTC ({d.held + 1} failure(s)): {d.detail}",
            )
            for dep, d in sorted(self._down.items())
        ]

    def clear(self) -> None:
        """Forget every outage (a test that starts over)."""
        for dependency in list(self._down):
            DEPENDENCY_DOWN.labels(dependency).set(0)
        self._down.clear()


#: the process's outages
OUTAGES = Outages()


#: outside an outage, one client warning of each kind per this many seconds
REPEAT_S = 60.0
_DIGITS = re.compile(r"\d+")


class ClientLogGate(logging.Filter):
    """On one client library's loggers: its connection errors are ``dependency``'s outage, what it logs
    during one is held back to DEBUG, and a line it repeats passes once a minute (``install`` puts it
    on the loggers)."""

    def __init__(self, dependency: str, evidence: re.Pattern[str], outages: Outages | None = None) -> None:
        super().__init__()
        self.dependency = dependency
        #: what, in a record's message or exception, says the engine cannot be reached
        self.evidence = evidence
        self.outages = outages or OUTAGES
        #: told the evidence's text (the Kafka health's probe starts on it)
        self.listeners: list[Callable[[str], None]] = []
        self._seen: dict[tuple[str, str], float] = {}
        #: records held back (for tests and the curious)
        self.held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno <= logging.DEBUG:
            return True
        if record.levelno >= logging.WARNING:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                text += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
            if self.evidence.search(text):
                self.outages.down(self.dependency, f"{record.name}: {text[:300]}")
                for listener in self.listeners:
                    listener(text[:300])
        if self.outages.is_down(self.dependency):
            # everything the client says meanwhile (reconnects, rediscoveries, tracebacks) is the outage's
            self.held += 1
            record.levelno, record.levelname, record.exc_info, record.exc_text = logging.DEBUG, "DEBUG", None, None
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        # the same line again and again (the client's "Discovered coordinator 1 for group g" twice a
        # second while a restarted broker loads its groups): once a minute; distinct lines (one per group,
        # per topic) all pass
        kind = (record.name, _DIGITS.sub("N", record.getMessage()))
        now = time.monotonic()
        if now - self._seen.get(kind, -REPEAT_S) < REPEAT_S:
            self.held += 1
            return False
        self._seen[kind] = now
        return True

    def install(self, prefix: str, names: Iterable[str] = ()) -> None:
        """Put the gate on the logger ``prefix`` and every logger under it known now (a logger's filter
        sees only the records made on that logger, not its children's), and on ``names``."""
        known = [n for n in logging.Logger.manager.loggerDict if n.startswith(prefix + ".")]
        for name in sorted({prefix, *known, *names}):
            logger = logging.getLogger(name)
            if self not in logger.filters:
                logger.addFilter(self)

    def listen(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Tell ``listener`` each piece of evidence; returns the function that stops it."""
        self.listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self.listeners.remove(listener)

        return remove
