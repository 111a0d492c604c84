"""The garbage collector paused while a big catalog is loaded (docs/architecture.md section 3, parser;
docs/conventions.md rule 14).

A first load of a 100,000-offer YML catalog keeps everything it builds: about
25 GC-tracked objects per offer (the ``Document`` with its media and product
models, the ``Output``, the per-item result and store-write tuples), 2.5
million in all, and makes no garbage cycles worth collecting. CPython's cyclic
collector still runs a full pass each time the tracked heap grows by a
quarter, and each pass walks the whole heap: measured on this 2-CPU machine,
11 full passes were 5.7 s of a 15.8 s handler call (``bench/parser.py`` (d)).
Paused for the load, the collector makes up with one pass afterwards.

The pause is process-wide, so it is counted: concurrent loads (other lanes of
the cube) share it, the collector comes back when the last one ends, and only
if it was on before the first began. Garbage cycles made meanwhile elsewhere
are collected then, a few seconds later: memory, not correctness. Enter and
leave on the event loop's thread (plain ``with`` inside a coroutine).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


class _Pause:
    def __init__(self) -> None:
        self.depth = 0
        #: the collector was on when the first pause began, so the last one turns it back on
        self.restore = False


_PAUSE = _Pause()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    if _PAUSE.depth == 0:
        _PAUSE.restore = gc.isenabled()
        gc.disable()
    _PAUSE.depth += 1
    try:
        yield
    finally:
        _PAUSE.depth -= 1
        if _PAUSE.depth == 0 and _PAUSE.restore:
            _PAUSE.restore = False
            gc.enable()
