"""SIGTERM is honoured within its deadline while the parser is in the middle of a hostile item.

``turbocubes cube parser`` in a process of its own, on the embedded engines, handed an upload whose
one document (200,000 nested ``<div>``, 1 MB) costs nh3 over two minutes; its item deadline is set far
beyond that, so only the stop can end the work. Before, the item ran in a thread (a body past 256 KB)
that nothing could stop, and the process's exit waited for it: SIGTERM took the whole two minutes.
Now the item runs in the parser's worker process, which the stop kills with the handler it serves.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import orjson

from shared.runtime import ensure_topics
from tests.unit.cubes.api.apikit import ApiHarness, api_settings
from tests.unit.shared.test_offload import _alive, _gone

REPO = Path(__file__).resolve().parents[3]
HOST = "a.partner.test"
#: runtime.shutdown_timeout_s of the process: in-flight work's grace, then its cancellation
GRACE_S = 1.0


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


async def _busy_child(pid: int) -> int:
    """The worker process of ``pid`` once it is working (its CPU time moves): there is no event for it."""
    while True:
        for child in _children(pid):
            before = _cpu_ticks(child)
            await asyncio.sleep(0.2)
            if _alive(child) and _cpu_ticks(child) - before > 5:
                return child
        await asyncio.sleep(0.05)


async def test_sigterm_stops_the_parser_mid_item(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, tenant_bytes_per_s=1e9)
    async with ApiHarness(tmp_path, settings=settings) as api:
        await ensure_topics(api.deps)
        _, token = await api.tenant(HOST)
        doc = {"url": f"https://{HOST}/deep", "title": "Deep", "content_html": "<div>" * 200_000}
        resp = await api.upload(
            token, orjson.dumps({"documents": [doc]}), host=HOST, fmt="json", content_type="application/json"
        )
        assert resp.status == 202, await resp.text()
    config = tmp_path / "turbocubes.toml"
    s = api.settings
    config.write_text(
        f'[bus]\nurl = "{s.bus.url}"\n[store]\nurl = "{s.store.url}"\n[blobs]\nurl = "{s.blobs.url}"\n'
        f"[runtime]\nmetrics_port = 0\nshutdown_timeout_s = {GRACE_S}\n[parser]\nitem_deadline_s = 3600.0\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURBOCUBES_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cubes.cli", "--config", str(config), "cube", "parser",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env, cwd=REPO,
    )  # fmt: skip
    try:
        worker = await asyncio.wait_for(_busy_child(proc.pid), 90)
        proc.send_signal(signal.SIGTERM)
        # in-flight work gets GRACE_S, then it is cancelled and its worker killed: seconds, not minutes
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, out.decode()
    await asyncio.wait_for(_gone(worker), 10)
