"""The Kafka client's own log during an outage, and whether the broker is back (docs/architecture.md section 4).

aiokafka reconnects by itself and logs every attempt: while the broker was away an idle cube
logged ~120 ERROR lines a second (``Unable connect to node``, ``Unable to update metadata``,
``Failed fetch messages``, ``Group Coordinator Request failed``), 8,000-11,000 per cube over a
136 s outage, and nothing said in a word that Kafka was down. So:

* ``GATE`` (``shared.outages.ClientLogGate``) on the ``aiokafka`` loggers takes the client's
  connection errors (``EVIDENCE``) as evidence: the first one begins a ``bus`` outage of the process
  (``shared/outages.py``: one WARNING, a gauge, a problem), and while the outage lasts everything the
  client logs goes to DEBUG. Outside an outage what it logs passes, the same line at most once a
  minute (a restarted broker that loads its groups made it log "Discovered coordinator" twice a second
  for half a minute).
* ``KafkaHealth`` then asks the broker for its metadata every ``PROBE_EVERY_S`` (the producer's
  client: a real request, not a TCP connect) and ends the outage once the answer came and the
  client has been quiet for ``QUIET_S``.

No aiokafka type leaves this module and the other ``kafka*.py`` of ``shared/bus``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable

from shared.outages import OUTAGES, ClientLogGate

__all__ = ["EVIDENCE", "GATE", "PROBE_EVERY_S", "QUIET_S", "KafkaHealth", "install_gate"]

log = logging.getLogger("turbocubes.bus")

#: while the broker is away, how often it is asked whether it is back
PROBE_EVERY_S = 2.0
#: back = a metadata answer, and no client error for this long (a broker still starting fails some)
QUIET_S = 3.0
#: a probe that hangs is given up after this long (the client has its own request timeout)
PROBE_TIMEOUT_S = 10.0


class KafkaHealth:
    """One bus's view of its broker: down from the client's first error, up once it answers again."""

    def __init__(self, servers: str, probe: Callable[[], Awaitable[bool]] | None = None) -> None:
        self.servers = servers
        #: asks the broker for metadata; True when it answered (None: no producer yet, no probe)
        self.probe = probe
        self._last_error = 0.0
        self._prober: asyncio.Task[None] | None = None

    @property
    def down(self) -> bool:
        return OUTAGES.is_down("bus")

    def client_error(self, message: str) -> None:
        """The client logged a connection error (the gate has recorded the outage): watch for the broker."""
        self._last_error = time.monotonic()
        if self.probe is not None and (self._prober is None or self._prober.done()):
            with contextlib.suppress(RuntimeError):  # no loop running: the next error starts it
                self._prober = asyncio.get_running_loop().create_task(self._watch(), name="kafka-health")

    async def _watch(self) -> None:
        assert self.probe is not None
        while OUTAGES.is_down("bus"):
            await asyncio.sleep(PROBE_EVERY_S)  # a pace, not a synchronization
            try:
                answered = await asyncio.wait_for(self.probe(), PROBE_TIMEOUT_S)
            except Exception as exc:  # still away: the client logs why (at DEBUG now)
                log.debug("Kafka at %s: probe failed: %s: %s", self.servers, type(exc).__name__, exc)
                continue
            if answered and time.monotonic() - self._last_error >= QUIET_S:
                OUTAGES.up("bus")

    async def close(self) -> None:
        if self._prober is not None:
            self._prober.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._prober


#: what in the client's log says the broker cannot be reached. Its other errors are not an outage:
#: "Topic X not found in cluster metadata" while a topic is being made, and "Marking the coordinator
#: dead" while a broker that just started loads its groups (taken as evidence, they made the outage
#: end and begin again three times in the half minute after the broker was back)
EVIDENCE = re.compile(
    r"Unable (?:to )?connect|Unable to update metadata|Unable to request metadata|NodeNotReady|KafkaConnectionError"
    r"|Connection refused|Connection at \S+ closed|RequestTimedOut"
)

#: the one gate of the process, on the client's loggers
GATE = ClientLogGate("bus", EVIDENCE)


def install_gate(health: KafkaHealth) -> Callable[[], None]:
    """Put the gate on aiokafka's loggers (once per process, all imported by now: ``kafka.py``) and
    ``health`` behind it; returns the function that takes ``health`` away again (when its bus closes)."""
    GATE.install("aiokafka")
    return GATE.listen(health.client_error)
