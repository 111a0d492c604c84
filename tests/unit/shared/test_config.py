"""Configuration: defaults, file + environment, and errors that name the key (docs/architecture.md section 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from shared.config import HostLane, Settings, example_toml, load_settings
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
    with pytest.raises(ValidationError, match="frozen"):
        s.bus.url = "x"  # type: ignore[misc]
    with pytest.raises(ConfigError, match=r"bus\.uri"):
        s.replace(bus={"uri": "kafka://k:9092"})  # a typo is an error, not a silent no-op


@pytest.mark.parametrize(
    ("text", "env", "key", "expected", "choices"),
    [
        ('[bus]\nurl = "redis://x"\n', {}, "bus.url", "a URL whose scheme", ["sqlite", "kafka"]),
        ("[crawler]\nspeed = 3\n", {}, "crawler.speed", "a known key of [crawler]", ["burst", "concurrency"]),
        ('[crawler]\nburst = "4"\n', {}, "crawler.burst", "an integer", []),  # the file's values have types
        (
            "",
            {"TURBOCUBES_SEARCH_PUBLISH_QUERIES": "maybe"},
            "TURBOCUBES_SEARCH_PUBLISH_QUERIES",
            "a boolean",
            ["true"],
        ),
        ("", {"TURBOCUBES_API_TENANT_CONCURRENCY_SHARE": "2"}, "api.tenant_concurrency_share", "a share in (0, 1]", []),
        (
            "",
            {"TURBOCUBES_CRAWLER_HOST_OVERRIDES": "{not json"},
            "TURBOCUBES_CRAWLER_HOST_OVERRIDES",
            "a JSON object",
            [],
        ),
        ('[http]\nallowlist = ["127.0.0.1/32", 3]\n', {}, "http.allowlist", "a list of strings", []),
        ('[bus]\ncompression = "brotli"\n', {}, "bus.compression", "a Kafka compression codec", ["lz4", "none"]),
    ],
)
def test_an_error_says_what_was_expected_and_the_choices(
    tmp_path: Path, text: str, env: dict[str, str], key: str, expected: str, choices: list[str]
) -> None:
    f = tmp_path / "t.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(f, env=env)
    assert err.value.key == key
    assert err.value.expected.startswith(expected)
    assert set(choices) <= set(err.value.choices)


def test_the_environment_reads_numbers_booleans_lists_and_tables() -> None:
    s = load_settings(
        env={
            "TURBOCUBES_RUNTIME_MAX_ATTEMPTS": "7",
            "TURBOCUBES_SEARCH_PUBLISH_QUERIES": "off",
            "TURBOCUBES_RUNTIME_OVERLOAD_GROUPS": "parser, media",
            "TURBOCUBES_CRAWLER_HOST_OVERRIDES": '{"a.example": {"rate": 5}}',
        }
    )
    assert s.runtime.max_attempts == 7
    assert s.search.publish_queries is False
    assert s.runtime.overload_groups == ["parser", "media"]
    assert s.crawler.host_overrides == {"a.example": HostLane(rate=5.0)}


def test_example_file_lists_every_key_and_is_current() -> None:
    committed = (REPO / "turbocubes.example.toml").read_text()
    assert committed == example_toml(), "run: turbocubes config example > turbocubes.example.toml"
    load_settings(REPO / "turbocubes.example.toml", env={})  # and it is a valid configuration


def test_the_toml_writer_writes_what_the_loader_reads(tmp_path: Path) -> None:
    """One TOML writer (shared/config/toml.py) for the example file and the tests' config files.

    The tests' own writer quoted table keys and the example's did not: a host key ("a.example")
    written bare is a nested table, not a host.
    """
    import tomllib

    from shared.config.toml import toml_document

    sections: dict[str, dict[str, object]] = {
        "crawler": {"rate": 2.5, "host_overrides": {"a.example": HostLane(rate=5.0), "*.b.example": {"burst": 3}}},
        "http": {"allowlist": ["127.0.0.1/32", 'odd "quoted"\\name']},
        "search": {"publish_queries": False},
    }
    text = toml_document(sections)
    assert tomllib.loads(text)["crawler"]["host_overrides"] == {"a.example": {"rate": 5.0}, "*.b.example": {"burst": 3}}
    f = tmp_path / "t.toml"
    f.write_text(text)
    s = load_settings(f, env={})
    assert s.crawler.host_overrides == {"a.example": HostLane(rate=5.0), "*.b.example": HostLane(burst=3)}
    assert s.http.allowlist == ["127.0.0.1/32", 'odd "quoted"\\name']
    assert s.search.publish_queries is False
