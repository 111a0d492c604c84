"""Configuration: defaults, file + environment, and errors that name the key (DESIGN.md section 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.config import Settings, example_toml, load_settings
from shared.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]


def test_no_configuration_means_embedded_engines_under_var() -> None:
    s = load_settings(env={})
    assert s.bus.url.startswith("sqlite:///var/")
    assert s.store.url.startswith("sqlite:///var/")
    assert s.cdn.url.startswith("file://var/")


def test_file_then_environment_override(tmp_path: Path) -> None:
    f = tmp_path / "t.toml"
    f.write_text('[bus]\nurl = "kafka://k:9092"\n[crawler]\nrate = 2.5\n')
    s = load_settings(f, env={"TURBOCUBES_CRAWLER_RATE": "4", "TURBOCUBES_HTTP_ALLOWLIST": "127.0.0.1/32, ::1/128"})
    assert s.bus.url == "kafka://k:9092"
    assert s.crawler.rate == 4.0
    assert s.http.allowlist == ["127.0.0.1/32", "::1/128"]


@pytest.mark.parametrize(
    ("text", "env", "key"),
    [
        ('[bus]\nurl = "redis://x"\n', {}, "bus.url"),
        ('[crawler]\nrate = "fast"\n', {}, "crawler.rate"),
        ("[crawler]\nspeed = 3\n", {}, "crawler.speed"),
        ("[nonsense]\nx = 1\n", {}, "nonsense"),
        ("", {"TURBOCUBES_RUNTIME_MAX_ATTEMPTS": "many"}, "TURBOCUBES_RUNTIME_MAX_ATTEMPTS"),
        ("", {"TURBOCUBES_CRAWLER_RATE": "0"}, "crawler.rate"),
        ("[parser]\nconcurrency = 0\n", {}, "parser.concurrency"),
        ("", {"TURBOCUBES_SCHEDULER_MAX_INTERVAL_S": "1"}, "scheduler.max_interval_s"),
        ("", {"TURBOCUBES_API_TENANT_BURST": "true"}, "TURBOCUBES_API_TENANT_BURST"),
    ],
)
def test_a_wrong_value_fails_naming_the_key(tmp_path: Path, text: str, env: dict[str, str], key: str) -> None:
    f = tmp_path / "t.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(f, env=env)
    assert err.value.key == key
    assert key in str(err.value)
    assert "expected" in str(err.value)


def test_settings_are_frozen() -> None:
    s = Settings()
    with pytest.raises(AttributeError):
        s.bus.url = "x"  # type: ignore[misc]


def test_example_file_lists_every_key_and_is_current() -> None:
    committed = (REPO / "turbocubes.example.toml").read_text()
    assert committed == example_toml(), "run: turbocubes config example > turbocubes.example.toml"
    load_settings(REPO / "turbocubes.example.toml", env={})  # and it is a valid configuration
