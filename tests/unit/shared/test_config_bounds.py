"""Settings that refuse nonsense: every number has its bounds, every table its model (docs/architecture.md s.7).

65 of 85 numeric settings once had no bound: ``TURBOCUBES_RUNTIME_HANDLER_TIMEOUT_S=-1`` started a
watchdog that cancelled every handler at once (every message retried, then dead-lettered), a pool of 0
connections or 0 parallel hosts started and hung, a host's lane with a misspelt key (``rat``) was
taken as no override at all, and ``Settings.replace`` validated nothing. Here every numeric field of
every section (and of a host's lane) is given a value past each of its bounds, through the file, the
environment and ``replace``, and each must fail naming its key.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

import annotated_types
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from shared.config import HostLane, Section, Settings, load_settings
from shared.config.settings import section_models
from shared.errors import ConfigError


def _base(annotation: Any) -> Any:
    """``int | None`` -> ``int``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return inner[0] if len(inner) == 1 else annotation
    return annotation


def _numeric(model: type[BaseModel]) -> list[tuple[str, FieldInfo, type]]:
    out = []
    for name, f in model.model_fields.items():
        base = _base(f.annotation)
        if base in (int, float):
            out.append((name, f, base))
    return out


def _past_each_bound(f: FieldInfo, kind: type) -> list[int | float]:
    """A value just past each bound of ``f``."""
    step = 1 if kind is int else 0.5
    values: list[int | float] = []
    for m in f.metadata:
        if isinstance(m, annotated_types.Gt):
            values.append(kind(m.gt))
        elif isinstance(m, annotated_types.Ge):
            values.append(kind(m.ge) - step)
        elif isinstance(m, annotated_types.Lt):
            values.append(kind(m.lt))
        elif isinstance(m, annotated_types.Le):
            values.append(kind(m.le) + step)
    return values


_FIELDS = [(section, name, f, kind) for section, model in section_models().items() for name, f, kind in _numeric(model)]
_CASES = [
    pytest.param(section, name, value, id=f"{section}.{name}={value}")
    for section, name, f, kind in _FIELDS
    for value in _past_each_bound(f, kind)
]


def test_every_numeric_setting_has_a_lower_bound() -> None:
    unbounded = [
        f"{section}.{name}"
        for section, name, f, _ in _FIELDS
        if not any(isinstance(m, (annotated_types.Gt, annotated_types.Ge)) for m in f.metadata)
    ]
    assert len(_FIELDS) > 80
    assert not unbounded, f"give these a bound (Field(gt=0), ge=0 where 0 means off): {unbounded}"


def test_every_table_has_a_model_and_every_list_holds_strings() -> None:
    loose = []
    for section, model in section_models().items():
        for name, f in model.model_fields.items():
            origin, args = typing.get_origin(f.annotation), typing.get_args(f.annotation)
            if origin is dict and not (isinstance(args[1], type) and issubclass(args[1], Section)):
                loose.append(f"{section}.{name}: {f.annotation}")
            if origin is list and args != (str,):
                loose.append(f"{section}.{name}: {f.annotation}")
    assert not loose, f"a table's values want a Section model of their own: {loose}"


@pytest.mark.parametrize(("section", "name", "value"), _CASES)
def test_a_value_past_a_bound_fails_naming_its_key(tmp_path: Path, section: str, name: str, value: float) -> None:
    key = f"{section}.{name}"
    variable = f"TURBOCUBES_{section.upper()}_{name.upper()}"
    with pytest.raises(ConfigError) as env_err:
        load_settings(env={variable: str(value)})
    assert env_err.value.key == key
    f = tmp_path / "t.toml"
    f.write_text(f"[{section}]\n{name} = {value!r}\n")
    with pytest.raises(ConfigError) as file_err:
        load_settings(f, env={})
    assert file_err.value.key == key
    with pytest.raises(ConfigError) as replaced:
        Settings().replace(**{section: {name: value}})
    assert replaced.value.key == key
    assert key in str(replaced.value)
    assert "expected" in str(replaced.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [pytest.param(n, v, id=f"{n}={v}") for n, f, kind in _numeric(HostLane) for v in _past_each_bound(f, kind)],
)
def test_a_host_lane_past_a_bound_fails_naming_its_key(name: str, value: float) -> None:
    assert _numeric(HostLane), "a host's lane has numbers"
    with pytest.raises(ConfigError) as err:
        Settings().replace(crawler={"host_overrides": {"a.example": {name: value}}})
    assert err.value.key == f'crawler.host_overrides."a.example".{name}'


def test_a_misspelt_key_of_a_host_lane_is_refused_with_the_known_ones() -> None:
    env = {"TURBOCUBES_CRAWLER_HOST_OVERRIDES": '{"a.example": {"rat": 5}}'}
    with pytest.raises(ConfigError) as err:
        load_settings(env=env)
    assert err.value.key == 'crawler.host_overrides."a.example".rat'
    assert {"rate", "burst", "concurrency", "max_rate"} <= set(err.value.choices)
    with pytest.raises(ConfigError) as replaced:
        Settings().replace(crawler={"host_overrides": {"*.b.example": {"burts": 2}}})
    assert replaced.value.key == 'crawler.host_overrides."*.b.example".burts'


@pytest.mark.parametrize(
    ("variable", "value", "key"),
    [
        ("TURBOCUBES_RUNTIME_HANDLER_TIMEOUT_S", "-1", "runtime.handler_timeout_s"),
        ("TURBOCUBES_STORE_POOL_SIZE", "0", "store.pool_size"),
        ("TURBOCUBES_CRAWLER_PARALLEL_HOSTS", "0", "crawler.parallel_hosts"),
        ("TURBOCUBES_RUNTIME_SHUTDOWN_TIMEOUT_S", "-5", "runtime.shutdown_timeout_s"),
        ("TURBOCUBES_API_PORT", "70000", "api.port"),
        ("TURBOCUBES_RUNTIME_BACKOFF_CAP_S", "0.1", "runtime.backoff_cap_s"),  # under backoff_base_s
        ("TURBOCUBES_RUNTIME_OVERLOAD_RESUME_LAG", "9000", "runtime.overload_resume_lag"),  # over overload_lag
    ],
)
def test_the_nonsense_that_used_to_start_is_refused(variable: str, value: str, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(env={variable: value})
    assert err.value.key == key


def test_replace_keeps_what_it_is_given_when_it_is_right() -> None:
    s = Settings().replace(crawler={"host_overrides": {"a.example": {"rate": 5}}}, runtime={"overload_lag": 0})
    assert s.crawler.host_overrides["a.example"] == HostLane(rate=5.0)
    assert s.runtime.overload_lag == 0  # 0 = overload protection off: a resume lag above it is fine
    with pytest.raises(ConfigError) as err:
        s.replace(nonsense={"x": 1})
    assert err.value.key == "nonsense"
