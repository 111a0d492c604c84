"""The one place that knows every cube (docs/conventions.md rule 3).

A cube is the package ``cubes/<name>`` with a ``cube.py`` defining
``async build(settings, deps) -> Cube``. A package may also have
``commands.py`` with ``register(subparsers)`` to add CLI commands
(``feeds``, ``fetch``, ``parse``, ``hosts``, ``autoparser`` ...).
Order below is the order of the pipeline (docs/architecture.md section 3).
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["CUBE_NAMES", "available_cubes", "command_modules", "cube_module"]

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


def _optional(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        # only "this cube does not exist (yet)" is tolerated, never a broken import inside it
        if exc.name is not None and module.startswith(exc.name):
            return None
        raise


def cube_module(name: str) -> ModuleType:
    if name not in CUBE_NAMES:
        raise KeyError(name)
    mod = _optional(f"cubes.{name}.cube")
    if mod is None:
        raise KeyError(name)
    return mod


def available_cubes() -> list[str]:
    """The cubes that exist in this checkout, in pipeline order."""
    return [n for n in CUBE_NAMES if _optional(f"cubes.{n}.cube") is not None]


def command_modules() -> list[ModuleType]:
    """Every cube package's ``commands`` module (CLI extensions)."""
    return [m for n in CUBE_NAMES if (m := _optional(f"cubes.{n}.commands")) is not None]
