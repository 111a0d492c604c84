"""A busy port is one line naming the key (shared/ports.py; it was a 33-line traceback)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from cubes.launcher import run_up
from shared.config import Settings
from shared.errors import ConfigError
from shared.ports import listen


@pytest.fixture
def busy() -> Iterator[int]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        yield int(s.getsockname()[1])
    finally:
        s.close()


async def test_listen_names_the_key_of_a_busy_port(busy: int) -> None:
    runner = web.AppRunner(web.Application())
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", busy)
        with pytest.raises(ConfigError) as caught:
            await listen(site.start, key="api.port", host="127.0.0.1", port=busy)
        text = str(caught.value)
        assert f"config api.port={busy}" in text
        assert "TURBOCUBES_API_PORT" in text
        assert "in use" in text
    finally:
        await runner.cleanup()


async def test_up_with_a_busy_port_says_so_in_one_line(
    busy: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 2.0},
        api={"port": busy},
    )
    assert await run_up(settings, only=["api"]) == 2
    err = capsys.readouterr().err
    assert f"configuration error: config api.port={busy}" in err
    assert "Traceback" not in err


async def test_a_busy_metrics_port_is_a_config_error(busy: int, tmp_path: Path) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        runtime={"metrics_port": busy},
    )
    with pytest.raises(ConfigError, match=r"runtime\.metrics_port"):
        await run_up(settings, only=["kvwriter"])
