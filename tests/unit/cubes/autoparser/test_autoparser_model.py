"""A missing or corrupt model file fails at start with a ConfigError naming the key."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cubes.autoparser.cube import build
from cubes.autoparser.extract import Extractor
from cubes.autoparser.model import DEFAULT_MODEL
from shared.config import Settings
from shared.errors import ConfigError
from shared.runtime.deps import Deps


def test_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        Extractor(tmp_path / "nope.cbm")
    assert err.value.key == "autoparser.model_path"
    assert "nope.cbm" in str(err.value)


def test_corrupt_model_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cbm"
    bad.write_bytes(b"this is not a catboost model" * 10)
    with pytest.raises(ConfigError) as err:
        Extractor(bad)
    assert err.value.key == "autoparser.model_path"


def test_truncated_model_file(tmp_path: Path) -> None:
    cut = tmp_path / "cut.cbm"
    cut.write_bytes(DEFAULT_MODEL.read_bytes()[:5000])
    with pytest.raises(ConfigError):
        Extractor(cut)


def test_shipped_model_loads(tmp_path: Path) -> None:
    copy = tmp_path / "m.cbm"
    shutil.copy(DEFAULT_MODEL, copy)
    assert Extractor(copy).model.path == copy
    assert DEFAULT_MODEL.stat().st_size < 2 * 1024 * 1024


async def test_cube_build_fails_at_start_on_a_bad_model(tmp_path: Path) -> None:
    settings = Settings().replace(
        autoparser={"model_path": str(tmp_path / "missing.cbm")},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
    )

    async def publish(_: object) -> None:
        raise AssertionError("nothing is published")

    deps = Deps(settings=settings, bus=None, publish=publish)  # type: ignore[arg-type]
    try:
        with pytest.raises(ConfigError, match=r"autoparser\.model_path"):
            await build(settings, deps)
    finally:
        await deps.close()


def test_model_of_another_version_is_refused(tmp_path: Path) -> None:
    from catboost import CatBoostClassifier

    model = CatBoostClassifier()
    model.load_model(str(DEFAULT_MODEL))
    model.get_metadata()["autoparser_model_version"] = "999"
    other = tmp_path / "v999.cbm"
    model.save_model(str(other))
    with pytest.raises(ConfigError, match="version"):
        Extractor(other)
