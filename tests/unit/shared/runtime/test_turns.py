"""A wide lane's queue (shared/runtime/turns.py): its classes take turns, each in arrival order."""

from __future__ import annotations

import pytest

from shared.bus.base import Record
from shared.runtime.commits import Slot
from shared.runtime.turns import Turns


def slot(offset: int, kind: str) -> Slot:
    return Slot(Record("crawl.requests", 0, offset, b"host", kind.encode()))


def drain(turns: Turns) -> list[int]:
    out = []
    while turns:
        out.append(turns.popleft().record.offset)
    return out


def test_a_class_of_few_records_waits_at_most_one_of_each_other_class() -> None:
    turns = Turns(lambda r: r.value)
    for i in range(10):
        turns.append(slot(i, "image"))
    turns.append(slot(10, "feed"))
    turns.append(slot(11, "page"))
    assert len(turns) == 12
    # the image at the head goes, then every other class once, then the images again in their order
    assert drain(turns) == [0, 10, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_classes_alternate_while_each_has_records_and_keep_their_own_order() -> None:
    turns = Turns(lambda r: r.value)
    for i, kind in enumerate(["a", "a", "a", "b", "b", "b"]):
        turns.append(slot(i, kind))
    assert turns.popleft().record.offset == 0
    turns.append(slot(6, "a"))  # arrives meanwhile: behind its class
    assert drain(turns) == [3, 1, 4, 2, 5, 6]


def test_without_classes_it_is_arrival_order() -> None:
    turns = Turns(None)
    for i, kind in enumerate(["image", "feed", "image"]):
        turns.append(slot(i, kind))
    assert drain(turns) == [0, 1, 2]
    assert not turns
    with pytest.raises(IndexError):
        turns.popleft()
