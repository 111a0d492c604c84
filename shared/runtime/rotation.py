"""Rotation: one wide lane's records, its classes taking turns (docs/architecture.md section 4, runtime).

A wide per-key lane (``Cube.key_width``) used to be one queue in arrival order. The crawler's
host lane showed why that is not enough: a feed of 200 items puts 400 image requests on its host's
lane at once, and the feed's next poll, read right behind them, waited until every image was
fetched (80 s at the partner's 5 requests/s) while the scheduler's lease ran out and re-emitted it
every 2 s behind the same images (``tests/integration/test_faults.py``).

So a wide lane keeps one queue per *class* of record (the cube's ``Cube.key_class``: the
crawler's request kind) and hands them out in turn, one record of each class with records
waiting, classes in the order they first arrived. Within a class the order is the arrival order.
A class of few records (a host's feed polls) waits at most one record of each other class, however
long the others' queues are; no class starves another. Commit order is not affected: the tracker
commits per partition in offset order, whatever order records finish in.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable

from shared.bus.base import Consumed
from shared.runtime.commits import Slot

__all__ = ["Rotation"]

ClassOf = Callable[[Consumed], Hashable]


class Rotation:
    """A wide lane's queue: per class in arrival order, the classes in turn."""

    __slots__ = ("_class_of", "_queues", "_size")

    def __init__(self, class_of: ClassOf | None) -> None:
        self._class_of = class_of
        #: class -> its records; the dict's order is the turn order (a class served goes to the back)
        self._queues: dict[Hashable, deque[Slot]] = {}
        self._size = 0

    def append(self, slot: Slot) -> None:
        cls = None if self._class_of is None else self._class_of(slot.record)
        q = self._queues.get(cls)
        if q is None:
            q = self._queues[cls] = deque()
        q.append(slot)
        self._size += 1

    def popleft(self) -> Slot:
        """The next record: the head of the class whose turn it is (IndexError when empty)."""
        if not self._size:
            raise IndexError("pop from empty Rotation")
        cls = next(iter(self._queues))
        q = self._queues.pop(cls)
        slot = q.popleft()
        if q:
            self._queues[cls] = q  # to the back: every other class with records goes first
        self._size -= 1
        return slot

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0
