"""ops/topology: ``start --only X`` beside a running topology keeps the others in topology.json.

Before, the file was rewritten with this call's instances alone, and ``--only parser`` planned the
parsers on the ports of the first cubes of the full topology (the api's, the scheduler's).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[3]


def _topology() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ops_topology", REPO / "ops" / "topology" / "topology.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


topology = _topology()


def test_only_plans_the_ports_the_full_topology_gives_those_cubes() -> None:
    full = {i.name: i.metrics_port for i in topology.plan(list(topology.CUBES), 2, 2, 9301)}
    only = topology.plan(["parser"], 2, 2, 9301)
    assert [(i.name, i.metrics_port) for i in only] == [("parser-1", full["parser-1"]), ("parser-2", full["parser-2"])]
    assert full["api"] == 9301
    assert len(set(full.values())) == len(full)


def test_start_only_keeps_the_other_live_instances_in_the_state_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURBOCUBES_VAR", str(tmp_path))
    live = {101, 102, 103, 201}
    monkeypatch.setattr(topology, "_alive", lambda pid: pid in live)
    (tmp_path / "topology").mkdir()
    first = topology.plan(["api", "parser", "kvwriter"], 2, 2, 9301)
    for pid, inst in zip((101, 102, 103, 104), first, strict=True):
        inst.pid = pid  # kvwriter (104) has died since
    topology._write_state(first)

    again = topology.plan(["parser"], 2, 2, 9301)
    again[0].pid, again[1].pid = 102, 201  # parser-1 was running; parser-2 is new
    topology._write_state(again)

    rows = json.loads((tmp_path / "topology" / "topology.json").read_text())["instances"]
    assert [(r["name"], r["pid"]) for r in rows] == [("api", 101), ("parser-1", 102), ("parser-2", 201)]
