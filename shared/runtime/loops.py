"""The event loop a process runs on: uvloop with the Kafka engine where it is installed (docs/architecture.md s.8).

Every cube process spends much of its CPU in the event loop itself -- scheduling callbacks,
socket reads and writes for Kafka, PostgreSQL, S3 and the partners' HTTP. uvloop (libuv, in C)
does that work for less on the real engines: the cold pass cost ~6 % less CPU per document on it
(bench/e2e.py, 2,000 documents, alternated with ``--set runtime.event_loop="asyncio"`` in one
session: 4.37 / 4.18 against 4.46 / 4.62 ms). On the embedded engines it did not pay: 3.67 / 3.50
against 3.35 / 3.42 ms, the same documents/s. So ``runtime.event_loop = "auto"`` (the default)
means uvloop when the bus is Kafka and uvloop is importable (it has no Windows build), asyncio's
own loop otherwise; ``uvloop`` (an error at start when it is missing) and ``asyncio`` choose
outright. aiohttp, aiokafka and asyncpg support both.
"""

from __future__ import annotations

import asyncio
import importlib.util

from shared.config.sections import EVENT_LOOPS
from shared.errors import ConfigError

__all__ = ["loop_kind", "new_event_loop"]


def loop_kind(choice: str, bus_url: str = "") -> str:
    """``uvloop`` or ``asyncio``: what ``choice`` (a ``runtime.event_loop`` value) runs on here, for a
    process whose bus is ``bus_url``."""
    if choice not in EVENT_LOOPS:
        raise ConfigError("runtime.event_loop", choice, "an event loop", list(EVENT_LOOPS))
    installed = importlib.util.find_spec("uvloop") is not None
    if choice == "uvloop" and not installed:
        raise ConfigError("runtime.event_loop", choice, "an installed event loop (pip install uvloop)", ["asyncio"])
    if choice == "auto":
        return "uvloop" if installed and bus_url.startswith("kafka:") else "asyncio"
    return choice


def new_event_loop(choice: str = "auto", bus_url: str = "") -> asyncio.AbstractEventLoop:
    """A new event loop of the kind ``choice`` names for a process on ``bus_url`` (``loop_kind``)."""
    if loop_kind(choice, bus_url) == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()
