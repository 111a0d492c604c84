"""``/healthz`` and Prometheus ``/metrics`` for a cube process (docs/architecture.md section 4, runtime)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from shared.ports import listen

__all__ = ["HealthServer"]

#: how long a request in flight may finish when the server stops (scrapes take milliseconds)
SHUTDOWN_TIMEOUT_S = 1.0


class HealthServer:
    """A tiny aiohttp server; ``health()`` returns a JSON-able dict with an ``ok`` flag."""

    def __init__(self, host: str, port: int, health: Callable[[], dict[str, Any]]) -> None:
        self.host = host
        self.port = port
        self._health = health
        self._runner: web.AppRunner | None = None
        self.bound_port: int | None = None

    async def _healthz(self, request: web.Request) -> web.Response:
        body = self._health()
        return web.json_response(body, status=200 if body.get("ok") else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        resp = web.Response(body=generate_latest())
        resp.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return resp

    async def start(self) -> int:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics)
        # a scrape in flight at shutdown gets a second, not aiohttp's default minute
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_S)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await listen(site.start, key="runtime.metrics_port", host=self.host, port=self.port)
        except BaseException:
            await self._runner.cleanup()
            raise
        server = site._server
        assert server is not None
        self.bound_port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        return self.bound_port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
