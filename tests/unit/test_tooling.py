"""The habits the tooling keeps: one lint-and-types command, run before every commit and in CI.

There was no lint-only command (lint ran inside ``scripts/test`` and was skipped when pytest got
arguments) and no pre-commit hook; mypy skipped the tests, had ``ignore_missing_imports`` on for every
module and no pydantic plugin (mypy over the tests found a test passing bytes where a parsed feed
head is taken, which failed on main); ``pip install`` warned that ``project.license`` as a table is
deprecated, and the repository had no licence file.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_scripts_check_runs_ruff_format_and_mypy_and_scripts_test_uses_it() -> None:
    check = ROOT / "scripts" / "check"
    assert os.access(check, os.X_OK)
    text = check.read_text(encoding="utf-8")
    for step in ("ruff check .", "ruff format --check .", "mypy"):
        assert step in text, step
    assert '"$ROOT/scripts/check"' in (ROOT / "scripts" / "test").read_text(encoding="utf-8")


def test_the_pre_commit_hook_runs_scripts_check() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = [h for repo in config["repos"] for h in repo["hooks"]]
    assert [h["entry"] for h in hooks] == ["scripts/check"]


def test_mypy_covers_the_tests_with_the_pydantic_plugin_and_no_global_ignore() -> None:
    mypy = PYPROJECT["tool"]["mypy"]
    assert mypy["strict"] is True
    assert set(mypy["packages"]) >= {"shared", "cubes", "demo", "tests"}
    assert "pydantic.mypy" in mypy["plugins"]
    assert "ignore_missing_imports" not in mypy, "name the modules without types in [[tool.mypy.overrides]]"
    for override in mypy.get("overrides", []):
        assert all(not m.startswith(("shared", "cubes", "demo", "tests")) for m in override["module"]), override


def test_the_licence_is_an_spdx_expression_with_its_file() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")[:200]
