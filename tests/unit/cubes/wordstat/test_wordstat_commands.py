"""``turbocubes wordstat QUERY`` on the embedded store."""

from __future__ import annotations

import asyncio
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from cubes.cli import main as cli_main
from cubes.wordstat.handler import counted
from shared.messages import SearchQueryEvent
from shared.stores import open_stores
from shared.stores.wordstat import Privacy


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "turbocubes.toml"
    path.write_text(f'[store]\nurl = "sqlite:///{tmp_path}/store.db"\n')
    return path


async def _count(config: Path, query: str, n: int) -> None:
    stores = await open_stores(f"sqlite:///{config.parent}/store.db")
    now = datetime.now(UTC)
    batch = [SearchQueryEvent(event_id=uuid.uuid4().hex, query=query, at=now) for _ in range(n)]
    await stores.wordstat.count([counted(e) for e in batch], now=now, privacy=Privacy(threshold=5))
    await stores.close()


def test_wordstat_command_prints_the_frequency(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(_count(config, "купить слона", 12))
    assert cli_main(["--config", str(config), "wordstat", "куплю слонов"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("куплю слонов: 10 searches this month")  # rounded to a multiple of the threshold
    assert re.search(r"^ +10  купить слона$", out, re.MULTILINE)
    assert re.search(r"^  \d{4}-\d{2} +10 #{40}$", out, re.MULTILINE)  # this month's bar
    assert cli_main(["--config", str(config), "wordstat", "слон", "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert data["total"] == {"count": 10, "display": "10"}


def test_a_query_that_cannot_be_read_is_exit_2(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["--config", str(config), "wordstat", "(купить"]) == 2
    assert "expected ')'" in capsys.readouterr().err
