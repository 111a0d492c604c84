"""The api cube (docs/architecture.md section 3): HTTP in; feeds.registry, partner.uploads, documents.deleted out.

It has no inputs: its one ``Service`` serves ``create_app`` on
``settings.api.host:port`` (port 0 picks a free one; ``status()`` tells which),
its timers re-check the proofs of rights (``recheck.py``) and tell and deliver notifications
(``shared/notify/notifier.py``: never on the pipeline's path, which only adds an event row).
Handlers publish through ``deps.publish``, which awaits the bus's
acknowledgement, so a 202 means the record is durable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from aiohttp import web

from cubes.api.app import create_app
from cubes.api.recheck import ProofRechecks
from shared.config import Settings
from shared.notify.notifier import Notifier
from shared.ports import listen
from shared.runtime.cube import Cube, Output, Service, Timer, TimerContext
from shared.runtime.deps import Deps
from shared.webmaster.rights import Rights

__all__ = ["CUBE", "build"]

#: seconds in-flight requests get to finish on stop (uploads wait for the bus; that is quick)
SHUTDOWN_TIMEOUT_S = 5.0


CUBE = Cube(name="api", outputs=("feeds.registry", "partner.uploads", "documents.deleted", "hosts.branding"))


async def build(settings: Settings, deps: Deps) -> Cube:
    app = create_app(settings, deps)
    state: dict[str, Any] = {"runner": None, "url": None}
    rights = Rights.from_settings(settings, await deps.stores(), deps.clock, resolver=deps.resolver)
    rechecks = ProofRechecks(rights)
    notifier = Notifier.from_settings(settings, (await deps.stores()).notify, deps.clock, resolver=deps.resolver)

    async def notify(ctx: TimerContext) -> Sequence[Output]:
        await notifier.sweep()
        return []

    async def start() -> None:
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_S)
        await runner.setup()
        site = web.TCPSite(runner, settings.api.host, settings.api.port)
        try:
            await listen(site.start, key="api.port", host=settings.api.host, port=settings.api.port)
        except BaseException:
            await runner.cleanup()
            raise
        state["runner"] = runner
        # with port 0 the OS picked one: report the real address
        address = runner.addresses[0] if runner.addresses else (settings.api.host, settings.api.port)
        state["url"] = f"http://{address[0]}:{address[1]}"

    async def stop() -> None:
        runner = state["runner"]
        if runner is not None:
            state["runner"] = None
            await runner.cleanup()
        await rights.close()
        await notifier.close()

    return replace(
        CUBE,
        services=(Service("api-http", start, stop),),
        # every right's proof looked for again (recheck.py)
        timers=(
            Timer("proof-recheck", settings.api.proof_sweep_s, rechecks.sweep),
            Timer("notify", settings.notify.sweep_s, notify),
        ),
        status=lambda: {"url": state["url"]},
    )
