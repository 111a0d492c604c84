"""What every ``[section]`` of ``turbocubes.toml`` is, and how a wrong value is told (docs/architecture.md section 7).

A section is a frozen pydantic model: each key a field with its default and a
``#:`` comment (which ``turbocubes config example`` prints), its rules written
on the field (``Field(gt=0)``, a validator). pydantic does the coercion and
the checks; ``config_error`` turns its first complaint into the one error the
operator reads: a ``ConfigError`` naming the key (the environment variable's
name when the value came from there and could not even be read as its type),
the value, what was expected, and the valid choices.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from shared.errors import ConfigError

__all__ = ["SHARE", "Section", "config_error", "refuse", "tcp_port", "url_schemes"]

#: ``json_schema_extra`` of a share: what a wrong one is told it should be
SHARE: JsonDict = {"expected": "a share in (0, 1]"}

#: what a value of each type is called in an error
_TYPES = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "string_type": "a string",
    "list_type": "a list of strings",
    "dict_type": "a table",
}


class Section(BaseModel):
    """One section: frozen once read, no key it does not know."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def tcp_port(default: int) -> Any:
    """A TCP port field: 1-65535, or 0 for a free one the system picks."""
    return Field(default=default, ge=0, le=65_535)


def refuse(expected: str, choices: list[str] | None = None) -> PydanticCustomError:
    """The error a section's validator raises: ``config_error`` reads what was expected from it."""
    return PydanticCustomError("config", "expected {expected}", {"expected": expected, "choices": choices or []})


def url_schemes(*schemes: str) -> Any:
    """A validator for a section's ``url``: its scheme names one of the engines."""

    def check(cls: type[Section], url: str) -> str:
        scheme = url.split("://", 1)[0] if "://" in url else ""
        if scheme not in schemes:
            raise refuse("a URL whose scheme is one of the engines", list(schemes))
        return url

    validator: Callable[..., Any] = field_validator("url")(check)
    return validator


def _number(n: object) -> str:
    return str(int(n)) if isinstance(n, float) and n.is_integer() else str(n)


def _key(section: str, loc: tuple[str, ...]) -> str:
    """The dotted key of ``loc`` as TOML spells it: ``crawler.host_overrides."a.example".rate``."""
    parts = [section]
    for part in loc:
        text = str(part)
        parts.append(text if text.isidentifier() else '"' + text.replace('"', '\\"') + '"')
    return ".".join(parts)


def _inner_model(model: type[BaseModel], loc: tuple[str, ...]) -> type[BaseModel]:
    """The model whose field the last part of ``loc`` names (a table's value model, for a nested key)."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            current = field.annotation if field is not None else None
        else:  # a table's key: step into its value type
            args = typing.get_args(current)
            current = args[-1] if args else None
        # ``X | None``: the model inside
        inner = [a for a in typing.get_args(current) if isinstance(a, type) and issubclass(a, BaseModel)]
        if typing.get_origin(current) in (typing.Union, types.UnionType) and inner:
            current = inner[0]
    return current if isinstance(current, type) and issubclass(current, BaseModel) else model


def config_error(
    section: str,
    model: type[Section],
    exc: ValidationError,
    raw: Mapping[str, Any],
    env_keys: Mapping[str, str],
) -> ConfigError:
    """The first thing wrong in ``exc`` as a ``ConfigError``; ``raw`` holds each key's value as given,
    ``env_keys`` the variable each key came from (when it came from the environment).

    A key inside a table (a host's lane in ``crawler.host_overrides``) is named in full, TOML's way:
    ``crawler.host_overrides."a.example".rat``.
    """
    err = exc.errors()[0]
    # a list's item is named by its list (``http.allowlist``), a table's key by its path
    loc = tuple(part for part in err["loc"] if isinstance(part, str))
    name = loc[0] if loc else ""
    nested = len(loc) > 1
    key = _key(section, loc) if loc else section
    value = err.get("input") if nested else raw.get(name, err.get("input"))
    kind = err["type"]
    ctx: dict[str, Any] = dict(err.get("ctx") or {})
    if kind == "extra_forbidden":
        inner = _inner_model(model, loc)
        what = f"a known key of [{section}]" if inner is model else f"a known key of {_key(section, loc[:-1])}"
        return ConfigError(key, value, what, sorted(inner.model_fields))
    if kind in _TYPES:
        # a value that is not even of its type: named as the operator wrote it (file or variable)
        in_list = kind == "string_type" and len(err["loc"]) > len(loc)
        expected = "a list of strings" if in_list else _TYPES[kind]
        return ConfigError(
            key if nested else env_keys.get(name, key), value, expected, ["true", "false"] if "bool" in kind else None
        )
    if kind == "config":
        return ConfigError(key, value, str(ctx["expected"]), list(ctx.get("choices") or []) or None)
    extra = model.model_fields[name].json_schema_extra if name in model.model_fields and not nested else None
    if isinstance(extra, dict) and "expected" in extra:
        return ConfigError(key, value, str(extra["expected"]))
    if kind == "greater_than":
        return ConfigError(key, value, f"a value greater than {_number(ctx['gt'])}")
    if kind == "greater_than_equal":
        return ConfigError(key, value, f"{_number(ctx['ge'])} or more")
    if kind == "less_than":
        return ConfigError(key, value, f"a value under {_number(ctx['lt'])}")
    if kind == "less_than_equal":
        return ConfigError(key, value, f"a value at most {_number(ctx['le'])}")
    return ConfigError(key, value, str(err["msg"]))
