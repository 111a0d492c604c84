"""``turbocubes.example.toml``: every key with its default and its comment, generated (docs/architecture.md section
7)."""

from __future__ import annotations

import inspect

from shared.config.settings import Settings, section_models
from shared.config.toml import toml_value

__all__ = ["example_toml"]


def _field_comments(cls: type) -> dict[str, str]:
    """The ``#:`` comment lines written above each field of a section class."""
    comments: dict[str, str] = {}
    pending: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
        elif ":" in stripped and not stripped.startswith(("class ", "@", '"', "#")):
            name = stripped.split(":", 1)[0].strip()
            if name.isidentifier() and pending:
                comments[name] = " ".join(pending)
            pending = []
        elif stripped:
            pending = []
    return comments


def example_toml() -> str:
    """``turbocubes.example.toml``: every key with its default and its comment (a test keeps it current)."""
    out = [
        "# turbocubes configuration: every key with its default. Copy to turbocubes.toml and change what",
        "# you need; any key can also be set as TURBOCUBES_<SECTION>_<KEY> (lists: comma-separated,",
        "# tables: JSON). Generated from shared/config/ by `turbocubes config example`.",
    ]
    defaults = Settings()
    for name, model in section_models().items():
        out += ["", f"[{name}]"]
        comments = _field_comments(model)
        section = getattr(defaults, name)
        for key in model.model_fields:
            if key in comments:
                out.append(f"# {comments[key]}")
            out.append(f"{key} = {toml_value(getattr(section, key))}")
    return "\n".join(out) + "\n"
