"""``turbocubes.toml`` + ``TURBOCUBES_<SECTION>_<KEY>`` -> ``Settings`` (docs/architecture.md section 7;
docs/conventions.md rule 10).

The file is read as TOML and each section validated *strictly*: a TOML value
already has a type, and ``rate = "4"`` is a mistake worth telling. Then the
environment, which only has strings: lists are comma-separated and tables JSON
(split and parsed here), everything else is read by pydantic as the field's
type (``"4"`` -> 4, ``"yes"`` -> True). A variable overrides the file's key.
"""

from __future__ import annotations

import os
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from shared.config.section import Section, config_error
from shared.config.settings import Settings, section_models
from shared.errors import ConfigError

__all__ = ["ENV_PREFIX", "load_settings"]

ENV_PREFIX = "TURBOCUBES_"


def _from_env(model: type[Section], key: str, env_key: str, text: str) -> Any:
    """An environment variable's text as the value to validate: lists split, tables parsed."""
    origin = typing.get_origin(model.model_fields[key].annotation)
    if origin is list:
        return [v.strip() for v in text.split(",") if v.strip()]
    if origin is dict:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            raise ConfigError(env_key, text, "a JSON object") from None
    return text


def _section(name: str, model: type[Section], given: Any, env: Mapping[str, str]) -> Section:
    if not isinstance(given, dict):
        raise ConfigError(name, given, "a table")
    try:
        model.model_validate(given, strict=True)
    except ValidationError as exc:
        raise config_error(name, model, exc, given, {}) from None
    values = dict(given)
    raw: dict[str, Any] = dict(given)
    env_keys: dict[str, str] = {}
    for key in model.model_fields:
        env_key = f"{ENV_PREFIX}{name.upper()}_{key.upper()}"
        if env_key in env:
            raw[key] = env[env_key]
            env_keys[key] = env_key
            values[key] = _from_env(model, key, env_key, env[env_key])
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise config_error(name, model, exc, raw, env_keys) from None


def load_settings(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Read ``path`` (default ``./turbocubes.toml`` if present) and the environment; validate; freeze."""
    env = os.environ if env is None else env
    if path is None:
        path = env.get(ENV_PREFIX + "CONFIG") or ("turbocubes.toml" if Path("turbocubes.toml").exists() else None)
    raw: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.exists():
            raise ConfigError("--config", str(p), "an existing TOML file")
        try:
            raw = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError("--config", str(p), f"valid TOML ({exc})") from None
    models = section_models()
    for name in raw:
        if name not in models:
            raise ConfigError(name, raw[name], "a known section", sorted(models))
    sections = {name: _section(name, model, raw.get(name, {}), env) for name, model in models.items()}
    return Settings.model_validate(sections)
