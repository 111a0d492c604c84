"""The one TOML writer: settings as ``turbocubes.toml`` text (docs/architecture.md section 7).

``turbocubes config example`` writes every key's default with it, and the tests write the
configuration files of the processes they start with it (``tests/integration/cubeproc.py``),
so what a test writes is what the product reads back (``tomllib``). A table key that is not a
bare TOML key (a host, ``*.example.com``) is quoted; a section model (a host's lane) is written
as the table of the keys it sets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

__all__ = ["toml_document", "toml_value"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else toml_value(name)


def toml_value(value: Any) -> str:
    """``value`` (bool, number, string, list, table or section model) as a TOML value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, BaseModel):
        return toml_value(value.model_dump(exclude_none=True))
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {value!r}")


def toml_document(sections: Mapping[str, Mapping[str, Any]]) -> str:
    """A ``turbocubes.toml`` of these sections and keys (every other key keeps its default)."""
    lines: list[str] = []
    for name, keys in sections.items():
        lines.append(f"[{_key(name)}]")
        lines += [f"{_key(key)} = {toml_value(value)}" for key, value in keys.items()]
    return "\n".join(lines) + "\n"
