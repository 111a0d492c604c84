"""The twin matrix: every console action decides as its API twin does, in every situation.

The console and the API are two doors to the same services, and each of their actions asks the one
authorization rule (``shared.webmaster.access``). This matrix holds them to it by their answers: for every
console route with an API twin, in every situation of the caller's objects -- its host with a right
in force, its claim without one (never verified, or the proof lapsed), another tenant's host, a feed
of its own on a host it holds, a feed of its own on a host whose right ended, another tenant's feed,
another tenant's upload -- the console lets the action through exactly when the API does.

A console action that skipped the owner check its API twin made (the autoparser switch on a feed
whose host the tenant no longer held) is a row here that fails.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import DummyCookieJar
from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from cubes.frontend.console.session import COOKIE
from shared.stores import Task
from tests.unit.cubes.api.apikit import ApiHarness
from tests.unit.security.conftest import Matrix

HELD = "a.partner.test"  # A's, verified
LAPSED = "l.partner.test"  # A's feeds are on it; A's right on it ended
CLAIMED = "c.partner.test"  # A claimed it, never verified
OTHERS = "b.partner.test"  # B's


@dataclass(frozen=True)
class Twin:
    """A console route and its API operation; ``subject`` is what the situations vary: a host, a feed, a task."""

    console: str
    api: tuple[str, str]
    subject: str
    form: Callable[[str], dict[str, str]] = lambda _: {}
    body: Callable[[str], dict[str, Any] | None] = lambda _: None


#: which API operation each console route stands for
TWINS = [
    Twin("/console/feeds", ("POST", "/api/v1/feeds"), "host", lambda h: {"url": f"https://{h}/n-{_n()}.xml"}),
    Twin("/console/check", ("POST", "/api/v1/feeds/check"), "host", lambda h: {"url": f"https://{h}/c-{_n()}.xml"}),
    Twin("GET /console/hosts/{host}", ("GET", "/api/v1/hosts/{host}"), "host"),
    Twin("/console/hosts/{host}/verify", ("POST", "/api/v1/hosts/{host}/verify"), "host"),
    Twin(
        "/console/hosts/{host}/branding",
        ("PUT", "/api/v1/hosts/{host}/branding"),
        "host",
        lambda _: {"display_name": "Twin"},
        lambda _: {"display_name": "Twin"},
    ),
    Twin(
        "/console/hosts/{host}/refresh",
        ("POST", "/api/v1/pages/refresh"),
        "host",
        lambda h: {"url": f"https://{h}/p/{_n()}"},
        lambda h: {"url": f"https://{h}/p/{_n()}"},
    ),
    Twin("GET /console/feeds/{feed}", ("GET", "/api/v1/feeds/{feed}"), "feed"),
    Twin("/console/feeds/{feed}/fetch", ("POST", "/api/v1/feeds/{feed}/fetch"), "feed"),
    Twin(
        "/console/feeds/{feed}/autoparser",
        ("PATCH", "/api/v1/feeds/{feed}"),
        "feed",
        lambda _: {"on": "1"},
        lambda _: {"autoparser": True},
    ),
    Twin(
        "/console/feeds/{feed}/options",
        ("PATCH", "/api/v1/feeds/{feed}"),
        "feed",
        lambda _: {"timeout_s": "30"},
        lambda _: {"options": {"timeout_s": 30}},
    ),
    Twin("/console/feeds/{feed}/delete", ("DELETE", "/api/v1/feeds/{feed}"), "feed"),
    Twin("GET /console/uploads/{task}", ("GET", "/api/v1/uploads/{task}"), "task"),
]
_counter = itertools.count()


def _n() -> int:
    return next(_counter)


#: situation -> how to make its subject (a host name, a feed id, a task id) in the world
HOST_SITUATIONS = ("a host with a right", "a claim never verified", "a claim whose right ended", "another's host")
FEED_SITUATIONS = ("a feed on a host with a right", "a feed on a host whose right ended", "another's feed")
TASK_SITUATIONS = ("an own upload", "another's upload")


class World:
    def __init__(self, api: ApiHarness, console: TestClient[Any, Any]) -> None:
        self.api = api
        self.console = console
        self.tokens: dict[str, str] = {}
        self.ids: dict[str, str] = {}
        self.cookie = ""
        self.csrf = ""

    async def setup(self) -> None:
        tenants = self.api.stores.tenants
        for who, hosts in (("a", (HELD, LAPSED, CLAIMED)), ("b", (OTHERS,))):
            t = await tenants.create_tenant(f"tenant {who}")
            self.ids[who] = t.tenant_id
            self.tokens[who] = await tenants.issue_token(t.tenant_id)
            for host in hosts:
                await tenants.add_host(t.tenant_id, host)
                if host != CLAIMED:
                    await tenants.set_verified(t.tenant_id, host, True)
        resp = await self.console.post("/console/login", data={"token": self.tokens["a"]}, allow_redirects=False)
        assert resp.status == 303, await resp.text()
        self.cookie = resp.cookies[COOKIE].value
        page = await (await self.console.get("/console", headers=self.cookies())).text()
        found = re.search(r'name="csrf" value="([^"]+)"', page)
        assert found
        self.csrf = found.group(1)

    def cookies(self) -> dict[str, str]:
        return {"Cookie": f"{COOKIE}={self.cookie}"}

    async def feed(self, who: str, host: str) -> str:
        """A fresh feed of ``who`` on ``host`` (registered while the host was held)."""
        tenants = self.api.stores.tenants
        await tenants.set_verified(self.ids[who], host, True)
        resp = await self.api.client.post(
            "/api/v1/feeds",
            json={"url": f"https://{host}/f-{_n()}.xml", "format": "rss"},
            headers=self.api.auth(self.tokens[who]),
        )
        assert resp.status == 201, await resp.text()
        if host == LAPSED:
            await tenants.set_verified(self.ids[who], host, False)
        feed_id: str = (await resp.json())["feed_id"]
        return feed_id

    async def subject(self, situation: str) -> str:
        if situation == "a host with a right":
            return HELD
        if situation == "a claim never verified":
            return CLAIMED
        if situation == "a claim whose right ended":
            return LAPSED
        if situation == "another's host":
            return OTHERS
        if situation == "a feed on a host with a right":
            return await self.feed("a", HELD)
        if situation == "a feed on a host whose right ended":
            return await self.feed("a", LAPSED)
        if situation == "another's feed":
            return await self.feed("b", OTHERS)
        who = "a" if situation == "an own upload" else "b"
        task = await self.api.stores.tasks.create(
            Task(task_id=f"task-{_n():04}", tenant_id=self.ids[who], host=HELD if who == "a" else OTHERS)
        )
        return task.task_id


def _situations(twin: Twin) -> tuple[str, ...]:
    return {"host": HOST_SITUATIONS, "feed": FEED_SITUATIONS, "task": TASK_SITUATIONS}[twin.subject]


def _fill(template: str, subject: str) -> str:
    return re.sub(r"\{(host|feed|task)\}", subject, template)


async def _console(world: World, twin: Twin, subject: str) -> int:
    method, _, route = twin.console.rpartition(" ")
    path = _fill(route, subject)
    if method == "GET":
        resp = await world.console.get(path, headers=world.cookies(), allow_redirects=False)
    else:
        form = {**twin.form(subject), "csrf": world.csrf}
        resp = await world.console.post(path, data=form, headers=world.cookies(), allow_redirects=False)
    return resp.status


async def _api(world: World, twin: Twin, subject: str) -> int:
    method, route = twin.api
    kwargs: dict[str, Any] = {}
    body = twin.body(subject)
    if twin.api == ("POST", "/api/v1/feeds"):
        body = {"url": f"https://{subject}/n-{_n()}.xml", "format": "rss"}
    elif twin.api == ("POST", "/api/v1/feeds/check"):
        body = {"url": f"https://{subject}/c-{_n()}.xml"}
    if body is not None:
        kwargs["json"] = body
    resp = await world.api.client.request(
        method, _fill(route, subject), headers=world.api.auth(world.tokens["a"]), **kwargs
    )
    return resp.status


async def test_every_console_action_decides_as_its_api_twin(tmp_path: Path, matrix: Callable[[str], Matrix]) -> None:
    report = matrix("console twins")
    async with ApiHarness(tmp_path, tenant_rps=10_000.0, tenant_burst=10_000, concurrency=256) as api:
        app = create_app(api.settings, api.stores, clock=api.clock, publish=api.deps.publish, resolver=api.resolver)
        console = TestClient(TestServer(app, host="127.0.0.1", port=0), cookie_jar=DummyCookieJar())
        await console.start_server()
        try:
            world = World(api, console)
            await world.setup()
            wrong = []
            for twin in TWINS:
                for situation in _situations(twin):
                    console_status = await _console(world, twin, await world.subject(situation))
                    api_status = await _api(world, twin, await world.subject(situation))
                    lets = console_status in (200, 303)
                    api_lets = 200 <= api_status < 300
                    label = (
                        f"{twin.console} on {situation}: console {console_status}, "
                        f"API {' '.join(twin.api)} {api_status}"
                    )
                    ok = lets == api_lets and console_status < 500
                    report.case(label, ok, kind=twin.subject)
                    if not ok:
                        wrong.append(label)
        finally:
            await console.close()
    assert wrong == [], "\n".join(wrong)
    assert report.cases == sum(len(_situations(t)) for t in TWINS)
