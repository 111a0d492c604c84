"""The one place that knows every cube (docs/conventions.md rule 3; docs/adding-a-cube.md).

A cube is the package ``cubes/<name>`` whose ``cube.py`` declares it once, as
``CUBE = Cube(name, inputs, outputs, replicable, ...)``: what the registry, the
workers (``up --workers``), ``turbocubes topics create`` and the tests of
docker-compose read without building anything. Its ``async build(settings, deps)``
returns that declaration with the running parts added (handler, timers,
services); ``build`` here checks that it did not change the declared facts. A
package may also have ``commands.py`` with ``register(subparsers)`` to add CLI
commands (``feeds``, ``fetch``, ``parse``, ``hosts``, ``autoparser`` ...).

``CUBE_NAMES`` is the list of cubes, written here only, in the order of the
pipeline (docs/architecture.md section 3); a test fails on a ``cubes/<name>/cube.py``
it does not name.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.config import Settings
    from shared.runtime.cube import Cube
    from shared.runtime.deps import Deps

__all__ = ["CUBE_NAMES", "build", "command_modules", "cube_module", "declared", "replicable"]

CUBE_NAMES: tuple[str, ...] = (
    "api",
    "scheduler",
    "crawler",
    "parser",
    "autoparser",
    "media",
    "cdn",
    "delay",
    "kvwriter",
    "indexer",
    "frontend",
    "wordstat",
)


def cube_module(name: str) -> ModuleType:
    """``cubes/<name>/cube.py`` of a cube of ``CUBE_NAMES`` (a ``KeyError`` for any other name)."""
    if name not in CUBE_NAMES:
        raise KeyError(name)
    return importlib.import_module(f"cubes.{name}.cube")


def declared(name: str) -> Cube:
    """The cube's declaration: its module's ``CUBE`` (inputs, outputs, whether it is replicable)."""
    from shared.runtime.cube import Cube

    cube = getattr(cube_module(name), "CUBE", None)
    if not isinstance(cube, Cube) or cube.name != name:
        raise TypeError(f"cubes/{name}/cube.py must declare CUBE = Cube(name={name!r}, ...)")
    return cube


def replicable(names: Sequence[str] | None = None) -> list[str]:
    """The cubes of ``names`` (default: every cube) that may run in several processes at once, in order."""
    return [n for n in (CUBE_NAMES if names is None else names) if declared(n).replicable]


async def build(name: str, settings: Settings, deps: Deps) -> Cube:
    """Build cube ``name``; what it runs must be what it declares (the declaration is what others read)."""
    want = declared(name)
    cube: Cube = await cube_module(name).build(settings, deps)
    facts = ("name", "inputs", "outputs", "replicable")
    changed = [f for f in facts if getattr(cube, f) != getattr(want, f)]
    if changed:
        raise TypeError(f"cubes/{name}/cube.py: build() changed its CUBE's {', '.join(changed)}")
    return cube


def command_modules() -> list[ModuleType]:
    """Every cube package's ``commands`` module (CLI extensions), for the cubes that have one."""
    return [
        importlib.import_module(f"cubes.{n}.commands")
        for n in CUBE_NAMES
        if importlib.util.find_spec(f"cubes.{n}.commands") is not None
    ]
