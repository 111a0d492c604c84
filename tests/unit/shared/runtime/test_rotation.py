"""A wide lane's queue (shared/runtime/rotation.py): its classes take turns, each in arrival order."""

from __future__ import annotations

import pytest

from shared.bus.base import Record
from shared.runtime.commits import Slot
from shared.runtime.rotation import Rotation


def slot(offset: int, kind: str) -> Slot:
    return Slot(Record("crawl.requests", 0, offset, b"host", kind.encode()))


def drain(rotation: Rotation) -> list[int]:
    out = []
    while rotation:
        out.append(rotation.popleft().record.offset)
    return out


def test_a_class_of_few_records_waits_at_most_one_of_each_other_class() -> None:
    rotation = Rotation(lambda r: r.value)
    for i in range(10):
        rotation.append(slot(i, "image"))
    rotation.append(slot(10, "feed"))
    rotation.append(slot(11, "page"))
    assert len(rotation) == 12
    # the image at the head goes, then every other class once, then the images again in their order
    assert drain(rotation) == [0, 10, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_classes_alternate_while_each_has_records_and_keep_their_own_order() -> None:
    rotation = Rotation(lambda r: r.value)
    for i, kind in enumerate(["a", "a", "a", "b", "b", "b"]):
        rotation.append(slot(i, kind))
    assert rotation.popleft().record.offset == 0
    rotation.append(slot(6, "a"))  # arrives meanwhile: behind its class
    assert drain(rotation) == [3, 1, 4, 2, 5, 6]


def test_without_classes_it_is_arrival_order() -> None:
    rotation = Rotation(None)
    for i, kind in enumerate(["image", "feed", "image"]):
        rotation.append(slot(i, kind))
    assert drain(rotation) == [0, 1, 2]
    assert not rotation
    with pytest.raises(IndexError):
        rotation.popleft()
