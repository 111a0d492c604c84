"""The operator's rough edges: usage errors, unknown topics and tenants, listing tenants."""

from __future__ import annotations

from pathlib import Path

import pytest

from cubes.api.host_commands import hosts_add, hosts_list
from cubes.cli import build_parser, main
from cubes.dlq import list_dead_letters, replay_dead_letters
from shared.config import Settings


@pytest.mark.parametrize("group", ["topics", "dlq", "schemas", "config", "hosts", "feeds", "autoparser"])
def test_a_usage_error_names_the_commands_not_our_internals(group: str, capsys: pytest.CaptureFixture[str]) -> None:
    """It said "the following arguments are required: hosts_command"."""
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([group])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "_command" not in err
    assert "required: {" in err


def _settings(tmp_path: Path) -> Settings:
    return Settings().replace(bus={"url": f"sqlite:///{tmp_path}/bus.db"}, store={"url": f"sqlite:///{tmp_path}/s.db"})


async def test_an_unknown_topic_is_reported_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``dlq list bogus.topic`` answered "0 dead letters"."""
    assert await list_dead_letters(_settings(tmp_path), "bogus.topic", 10) == 2
    assert await replay_dead_letters(_settings(tmp_path), "bogus.topic.dlq", 10) == 2
    err = capsys.readouterr().err
    assert "no such topic 'bogus.topic'" in err
    assert "crawl.feeds" in err  # the topics that have dead letters
    assert await list_dead_letters(_settings(tmp_path), "crawl.feeds", 10) == 0
    assert "0 dead letter(s)" in capsys.readouterr().out


async def test_hosts_list_lists_every_tenant_and_refuses_an_unknown_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``hosts list`` needed ``--tenant``, and nothing listed the tenants."""
    settings = _settings(tmp_path)
    assert await hosts_add(settings, "a.example") == 0
    assert await hosts_add(settings, "https://b.example:8443/") == 0
    capsys.readouterr()
    assert await hosts_list(settings) == 0
    out = capsys.readouterr().out
    assert out.count("tenant ") == 2
    assert "a.example" in out
    assert "https://b.example:8443" in out  # the claim's origin: where it is verified
    assert await hosts_list(settings, "bogus") == 1
    assert "no tenant 'bogus'" in capsys.readouterr().err


def test_the_cli_runs_hosts_list_without_a_tenant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "turbocubes.toml"
    config.write_text(f'[store]\nurl = "sqlite:///{tmp_path}/s.db"\n')
    assert main(["--config", str(config), "hosts", "list"]) == 0
    assert "no tenants yet" in capsys.readouterr().out
