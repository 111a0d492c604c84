"""A process that runs cubes sets its garbage collector for a long run (shared/runtime/heap.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cubes import cli, launcher
from shared.config import Settings
from shared.runtime import heap

REPO = Path(__file__).resolve().parents[4]

#: run in a child: the test process's own collector is left alone
CHILD = """
import gc, weakref
from shared.runtime import heap

before = gc.get_freeze_count()
heap.settle()
print(gc.get_threshold(), gc.get_freeze_count() > before + 1000)

class Node:
    pass

a, b = Node(), Node()
a.other, b.other = b, a  # a cycle: reference counting alone never frees it
gone = weakref.ref(a)
del a, b
gc.collect()
print(gone() is None)
"""


def test_settle_spaces_the_walks_and_freezes_what_lives_yet_cycles_made_later_are_collected() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, check=True, timeout=120
    ).stdout.split("\n")
    assert out[0] == f"{(heap.YOUNG, heap.MIDDLE, heap.OLD)} True"
    assert out[1] == "True"


@pytest.mark.parametrize("settle_heap", [True, False])
def test_run_cubes_settles_the_heap_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settle_heap: bool
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(heap, "settle", lambda: calls.append(1))
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        runtime={"metrics_port": 0},
    )

    async def go() -> int:
        stop = asyncio.Event()
        stop.set()  # built, then stopped at once
        return await launcher.run_cubes(settings, [], stop_event=stop, settle_heap=settle_heap)

    assert asyncio.run(go()) == 0
    assert calls == ([1] if settle_heap else [])


@pytest.mark.parametrize("argv", [["up"], ["cube", "delay"]])
def test_the_cli_processes_ask_for_it(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    asked: list[dict[str, Any]] = []

    async def run_up(settings: Settings, **kwargs: Any) -> int:
        asked.append(kwargs)
        return 0

    monkeypatch.setattr(launcher, "run_up", run_up)
    assert cli.main(argv) == 0
    assert [a.get("settle_heap") for a in asked] == [True]
