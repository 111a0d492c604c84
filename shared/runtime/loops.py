"""The event loop a process runs on: uvloop where it is installed, asyncio's own otherwise (DESIGN.md s.8).

Every cube process spends much of its CPU in the event loop itself -- scheduling callbacks,
socket reads and writes for Kafka, PostgreSQL, S3 and the partners' HTTP. uvloop (libuv, in C)
does that work for less: the real-engine pipeline's cold pass cost 9-10 % less CPU per document
on it (bench/e2e.py, ``--set runtime.event_loop="asyncio"`` gives the baseline in the same run).
aiohttp, aiokafka and asyncpg support it. ``runtime.event_loop`` chooses: ``auto`` (uvloop when
importable: it has no Windows build), ``uvloop`` (an error at start when it is missing) or
``asyncio``.
"""

from __future__ import annotations

import asyncio
import importlib.util

from shared.config.sections import EVENT_LOOPS
from shared.errors import ConfigError

__all__ = ["loop_kind", "new_event_loop"]


def loop_kind(choice: str) -> str:
    """``uvloop`` or ``asyncio``: what ``choice`` (a ``runtime.event_loop`` value) runs on here."""
    if choice not in EVENT_LOOPS:
        raise ConfigError("runtime.event_loop", choice, "an event loop", list(EVENT_LOOPS))
    installed = importlib.util.find_spec("uvloop") is not None
    if choice == "uvloop" and not installed:
        raise ConfigError("runtime.event_loop", choice, "an installed event loop (pip install uvloop)", ["asyncio"])
    return "uvloop" if choice == "uvloop" or (choice == "auto" and installed) else "asyncio"


def new_event_loop(choice: str = "auto") -> asyncio.AbstractEventLoop:
    """A new event loop of the kind ``choice`` names (``loop_kind``)."""
    if loop_kind(choice) == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()
