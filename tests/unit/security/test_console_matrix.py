"""The console matrix: every route of the webmaster console x every kind of visitor.

The console (``cubes/frontend/console/``) is the API's other door: a browser signed in with a
tenant's token. Its routes are read from the frontend's router, so a console route added without a
row in ``EXPECT`` fails here. Visitors, against tenant A's objects (its verified host, a feed, an
upload task):

* ``none``   -- no session: a page is the sign-in page (200, nothing of A's), an action is 401;
* ``other``  -- signed in as tenant B: A's host, feed and task are "not found" (404), never shown;
* ``own``    -- signed in as A;
* ``alias``  -- signed in as A, naming the ``www.`` spelling of A's host (tenant C verified it);
* ``editor`` / ``viewer`` -- signed in as users of A with those roles (login and password).

The role columns follow from the rule the issue states, written here apart from the code: a viewer
gets what A's owner gets on a page (GET) and 403 on an action; an editor what the owner gets, except
on the team's pages and actions (``/console/users``, ``/console/tokens``, and saving the
notifications' settings, ``POST /console/notifications``: the webhook and its secret are the owners';
403). Signing in and out,
and an invitation's page, answer every role as they answer the owner.

A page a role reads offers no form the role may not send: a viewer sees no add, fetch or save
button it would be refused.

And every action (POST) signed in as A is refused without the session's CSRF token, and when the
browser says it comes from another site (403).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import DummyCookieJar
from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from cubes.frontend.console.session import COOKIE
from shared import passwords
from shared.clock import ManualClock
from shared.config import Settings
from shared.runtime.cube import Output
from shared.stores import Stores, Task, open_stores
from tests.partners.fixtures import PartnerResolver
from tests.unit.security.conftest import Matrix

A_HOST = "a.partner.test"
B_HOST = "b.partner.test"
ALIAS = "www." + A_HOST
SIGN_IN = "Sign in with your API token"
NA = None


ROLES = ("editor", "viewer")
#: routes that need no session and whose answer is not the sign-in page
PUBLIC = frozenset({("GET", "/console/invite"), ("POST", "/console/invite")})
#: routes a role does not change
ANY_ROLE = frozenset({("POST", "/console/login"), ("POST", "/console/signup"), ("POST", "/console/logout"), *PUBLIC})
#: the owners' actions outside the team's pages
OWNERS_ONLY = frozenset({("POST", "/console/notifications")})
PASSWORD = "a long enough password"


@dataclass(frozen=True)
class Expect:
    none: int
    other: int
    own: int
    alias: int | None

    def role(self, caller: str, method: str, route: str) -> int:
        if (method, route) in ANY_ROLE:
            return self.own
        if route.startswith(("/console/users", "/console/tokens")) or (method, route) in OWNERS_ONLY:
            return 403  # the team is the owners'
        if caller == "viewer":
            return self.own if method == "GET" else 403
        return self.own


#: (METHOD, route) -> the status each visitor gets (303: the action done, the browser sent on)
EXPECT: dict[tuple[str, str], Expect] = {
    ("GET", "/console"): Expect(none=200, other=200, own=200, alias=NA),
    ("POST", "/console/login"): Expect(none=401, other=303, own=303, alias=NA),
    # public, as the API's sign-up: anyone makes a new tenant (and is signed in as it)
    ("POST", "/console/signup"): Expect(none=303, other=303, own=303, alias=NA),
    # the new token is shown once, to the session that signed up; anyone else is sent to the console
    ("GET", "/console/welcome"): Expect(none=200, other=303, own=303, alias=NA),
    ("POST", "/console/logout"): Expect(none=401, other=303, own=303, alias=NA),
    ("GET", "/console/hosts/{host}"): Expect(none=200, other=404, own=200, alias=404),
    ("POST", "/console/hosts"): Expect(none=401, other=303, own=303, alias=303),
    ("POST", "/console/hosts/{host}/verify"): Expect(none=401, other=404, own=303, alias=404),
    ("POST", "/console/hosts/{host}/branding"): Expect(none=401, other=404, own=303, alias=404),
    # one URL again now (a page of A's host: A's feeds are fetched for it)
    ("POST", "/console/hosts/{host}/refresh"): Expect(none=401, other=404, own=200, alias=404),
    ("POST", "/console/hosts/{host}/turbo"): Expect(none=401, other=404, own=303, alias=404),
    ("GET", "/console/feeds/{feed_id}"): Expect(none=200, other=404, own=200, alias=NA),
    ("POST", "/console/feeds"): Expect(none=401, other=422, own=303, alias=422),
    ("POST", "/console/check"): Expect(none=401, other=422, own=303, alias=422),
    ("POST", "/console/feeds/{feed_id}/fetch"): Expect(none=401, other=404, own=303, alias=NA),
    ("POST", "/console/feeds/{feed_id}/autoparser"): Expect(none=401, other=404, own=303, alias=NA),
    ("POST", "/console/feeds/{feed_id}/options"): Expect(none=401, other=404, own=303, alias=NA),
    ("POST", "/console/feeds/{feed_id}/delete"): Expect(none=401, other=404, own=303, alias=NA),
    ("GET", "/console/uploads/{task_id}"): Expect(none=200, other=404, own=200, alias=NA),
    # each tenant's own feeds as OPML; an import without a file is refused as such (each line of a file is a
    # registration: test_console_opml asks for A's host as B)
    ("GET", "/console/opml"): Expect(none=200, other=200, own=200, alias=NA),
    ("POST", "/console/opml"): Expect(none=401, other=422, own=422, alias=NA),
    # each tenant's own notifications: B's page, save and test are B's (test_console_notifications: none of A's)
    ("GET", "/console/notifications"): Expect(none=200, other=200, own=200, alias=NA),
    ("POST", "/console/notifications"): Expect(none=401, other=200, own=200, alias=NA),
    ("POST", "/console/notifications/test"): Expect(none=401, other=200, own=200, alias=NA),
    # each tenant's own list: B naming A's host sees none of A's tasks
    ("GET", "/console/uploads"): Expect(none=200, other=200, own=200, alias=NA),
    # team access: B sees and changes its own team; A's users, invitations and tokens are not found
    ("GET", "/console/users"): Expect(none=200, other=200, own=200, alias=NA),
    ("POST", "/console/users/invite"): Expect(none=401, other=200, own=200, alias=NA),
    ("POST", "/console/users/{user_id}/role"): Expect(none=401, other=404, own=200, alias=NA),
    ("POST", "/console/users/{user_id}/remove"): Expect(none=401, other=404, own=303, alias=NA),
    ("POST", "/console/users/invitations/{invitation_id}/revoke"): Expect(none=401, other=404, own=200, alias=NA),
    ("GET", "/console/tokens"): Expect(none=200, other=200, own=200, alias=NA),
    ("POST", "/console/tokens"): Expect(none=401, other=200, own=200, alias=NA),
    ("POST", "/console/tokens/{token_id}/rotate"): Expect(none=401, other=404, own=200, alias=NA),
    ("POST", "/console/tokens/{token_id}/revoke"): Expect(none=401, other=404, own=200, alias=NA),
    # an invitation's link is its own proof: whoever holds it sees it and accepts it (a fresh one each time)
    ("GET", "/console/invite"): Expect(none=200, other=200, own=200, alias=NA),
    ("POST", "/console/invite"): Expect(none=303, other=303, own=303, alias=NA),
}
#: the forms of a visitor with no session yet: guarded by the origin check (and SameSite), not a CSRF token
_NO_SESSION = ("/console/login", "/console/signup")
#: asked last: a claim by B on A's host, or a sign-out, changes what the other rows answer
LAST = (("POST", "/console/hosts"), ("POST", "/console/logout"))


@dataclass
class World:
    client: TestClient[Any, Any]
    stores: Stores
    published: list[Output]
    tokens: dict[str, str]
    a: str
    task_id: str
    cookies: dict[str, str]
    csrf: dict[str, str]
    n: itertools.count[int]

    async def sign_in(self, who: str) -> None:
        form = {"login": who, "password": PASSWORD} if who in ROLES else {"token": self.tokens[who]}
        resp = await self.client.post("/console/login", data=form, allow_redirects=False)
        assert resp.status == 303, await resp.text()
        self.cookies[who] = resp.cookies[COOKIE].value
        page = await (await self.client.get("/console", headers=self.headers(who))).text()
        found = re.search(r'name="csrf" value="([^"]+)"', page)
        assert found, page[:300]
        self.csrf[who] = found.group(1)

    def headers(self, who: str | None) -> dict[str, str]:
        return {"Cookie": f"{COOKIE}={self.cookies[who]}"} if who in self.cookies else {}

    async def a_feed(self) -> str:
        """A fresh feed of A's, added through the console (a delete case removes one)."""
        url = f"https://{A_HOST}/feed-{next(self.n)}.xml"
        resp = await self.client.post(
            "/console/feeds",
            data={"url": url, "csrf": self.csrf["a"]},
            headers=self.headers("a"),
            allow_redirects=False,
        )
        assert resp.status == 303, await resp.text()
        return resp.headers["Location"].rsplit("/", 1)[1]


_FORM_TAG = re.compile(r"<form\b[^>]*>", re.I)
_ATTR = re.compile(r'\b(method|action)="([^"]*)"', re.I)


def _forms_refused(body: str, caller: str) -> list[str]:
    """The actions of the page's POST forms that ``caller``'s role may not send (a form it cannot use)."""
    out = []
    for tag in _FORM_TAG.findall(body):
        attrs = {k.lower(): v for k, v in _ATTR.findall(tag)}
        if attrs.get("method", "get").lower() != "post":
            continue
        action = attrs.get("action", "").split("?", 1)[0]
        for (method, route), expect in EXPECT.items():
            pattern = re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(route))
            if method == "POST" and re.fullmatch(pattern, action):
                if expect.role(caller, method, route) == 403 != expect.own:
                    out.append(action)
                break
        else:
            out.append(f"{action} (no console route)")
    return out


def _visitor(caller: str) -> str | None:
    return {"none": None, "other": "b", "own": "a", "alias": "a", "editor": "editor", "viewer": "viewer"}[caller]


def _host(caller: str) -> str:
    return ALIAS if caller == "alias" else A_HOST


async def _request(world: World, method: str, route: str, caller: str) -> tuple[str, dict[str, str]]:
    """(path, form) of ``route`` as ``caller`` asks it."""
    host = _host(caller)
    team = world.stores.tenants.team
    if route == "/console/login":
        if caller in ROLES:
            return route, {"login": caller, "password": PASSWORD}
        return route, {"token": world.tokens[_visitor(caller) or ""] if caller != "none" else ""}
    if route == "/console/signup":
        return route, {"name": f"newcomer {next(world.n)}"}
    if "{user_id}" in route:
        user = await team.add_user(world.a, f"member-{next(world.n)}", "editor", "x")
        assert user is not None
        return route.replace("{user_id}", user.user_id), {"role": "viewer"}
    if "{invitation_id}" in route:
        _, invitation = await team.invite(world.a, f"pending-{next(world.n)}", "viewer", ttl_s=3600)
        return route.replace("{invitation_id}", invitation.invitation_id), {}
    if "{token_id}" in route:
        _, token = await team.create_token(world.a, f"spare {next(world.n)}", "read")
        return route.replace("{token_id}", token.token_id), {}
    if route == "/console/users/invite":
        return route, {"login": f"invited-{next(world.n)}", "role": "editor"}
    if route == "/console/tokens":
        return route, {"name": f"made by {caller}", "scope": "read"}
    if route == "/console/invite":
        secret, _ = await team.invite(world.a, f"joiner-{next(world.n)}", "viewer", ttl_s=3600)
        return (f"{route}?token={secret}", {}) if method == "GET" else (route, {"token": secret, "password": PASSWORD})
    if "{feed_id}" in route:
        return route.replace("{feed_id}", await world.a_feed()), {"on": "1"}
    if route.endswith("/refresh"):
        await world.a_feed()
        return route.replace("{host}", host), {"url": f"https://{host}/p/0"}
    if "{host}" in route:
        return route.replace("{host}", host), {}
    if "{task_id}" in route:
        return route.replace("{task_id}", world.task_id), {}
    if route == "/console/hosts":
        return route, {"url": f"https://{host}/"}
    if route == "/console/uploads":
        return f"{route}?host={A_HOST}", {}
    if route in ("/console/feeds", "/console/check"):
        return route, {"url": f"https://{host}/new-{next(world.n)}.xml"}
    return route, {}


def _console_routes(client: TestClient[Any, Any]) -> list[tuple[str, str]]:
    out = set()
    assert isinstance(client.server, TestServer)
    for route in client.server.app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter") or ""
        if path.startswith("/console") and route.method in ("GET", "POST"):
            out.add((route.method, path))
    return sorted(out, key=lambda r: r in LAST)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    settings = Settings().replace(
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        http={"allowlist": ["127.0.0.1/32"]},
        api={"signup_burst": 100, "signup_per_hour": 1000},  # every visitor signs up once a round: no 429
    )
    stores = await open_stores(settings.store.url)
    published: list[Output] = []

    async def publish(outputs: Sequence[Output]) -> None:
        published.extend(outputs)

    app = create_app(settings, stores, clock=ManualClock(), publish=publish, resolver=PartnerResolver())
    # no cookie jar: each request names its visitor's session itself
    client = TestClient(TestServer(app, host="127.0.0.1", port=0), cookie_jar=DummyCookieJar())
    await client.start_server()
    tokens = {}
    ids = {}
    for who, host in (("a", A_HOST), ("b", B_HOST), ("c", ALIAS)):
        t = await stores.tenants.create_tenant(f"tenant {who}")
        await stores.tenants.add_host(t.tenant_id, host)
        await stores.tenants.set_verified(t.tenant_id, host)
        tokens[who], ids[who] = await stores.tenants.issue_token(t.tenant_id), t.tenant_id
    await stores.tasks.create(Task(task_id="a-task-0001", tenant_id=ids["a"], host=A_HOST))
    hashed = await passwords.hash_password(PASSWORD)
    for role in ROLES:
        assert await stores.tenants.team.add_user(ids["a"], role, role, hashed) is not None
    w = World(client, stores, published, tokens, ids["a"], "a-task-0001", {}, {}, itertools.count())
    for who in ("a", "b", *ROLES):
        await w.sign_in(who)
    try:
        yield w
    finally:
        await client.close()
        await stores.close()


async def test_console_matrix(world: World, matrix: Callable[[str], Matrix]) -> None:
    report = matrix("console")
    routes = _console_routes(world.client)
    missing = [r for r in routes if r not in EXPECT]
    assert not missing, f"console routes without a row in tests/unit/security/test_console_matrix.py EXPECT: {missing}"
    assert not [r for r in EXPECT if r not in routes], "EXPECT rows for console routes that are gone"
    a_objects = [A_HOST, world.task_id, world.a]
    wrong = []
    for method, route in routes:
        expect = EXPECT[(method, route)]
        for caller in ("none", "other", "own", "alias", *ROLES):
            want = expect.role(caller, method, route) if caller in ROLES else getattr(expect, caller)
            if want is None:
                continue
            who = _visitor(caller)
            path, form = await _request(world, method, route, caller)
            headers = {} if route in _NO_SESSION else world.headers(who)
            if method == "POST":
                if who is not None and route not in _NO_SESSION and (method, route) not in PUBLIC:
                    form["csrf"] = world.csrf[who]
                resp = await world.client.post(path, data=form, headers=headers, allow_redirects=False)
            else:
                resp = await world.client.get(path, headers=headers, allow_redirects=False)
            body = await resp.text()
            ok = resp.status == want
            label = f"{method} {route} as {caller}: {resp.status}, expected {want}"
            if ok and caller in ROLES and want == 403 and want != expect.own:
                ok = "may not do this" in body  # refused for the role, with the reason
                label += " (the role's refusal)"
            if ok and caller in ROLES and method == "GET" and resp.status == 200:
                refused = _forms_refused(body, caller)
                ok = not refused
                label += f" (no form the role may not send{': ' + ', '.join(refused) if refused else ''})"
            if ok and caller == "none" and method == "GET" and (method, route) not in PUBLIC:
                ok = SIGN_IN in body and not any(x in body for x in a_objects)
                label += " (the sign-in page, nothing of A's)"
            if ok and caller == "other" and resp.status in (200, 404):
                ok = world.task_id not in body and f"{A_HOST}/feed-" not in body
                label += " (nothing of A's in it)"
            report.case(label, ok, kind=caller)
            if not ok:
                wrong.append(f"{label}: {body[:200]}")
            if route == "/console/logout" and resp.status == 303 and who is not None:
                await world.sign_in(who)  # signed out: back in for the next rows
    assert wrong == [], "\n".join(wrong)


async def test_every_console_action_needs_the_csrf_token_and_our_origin(
    world: World, matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("console")
    wrong = []
    for method, route in _console_routes(world.client):
        if method != "POST" or route in _NO_SESSION:
            continue
        cases = ("another site",) if (method, route) in PUBLIC else ("no csrf", "wrong csrf", "another site")
        for case in cases:
            path, form = await _request(world, method, route, "own")
            headers = world.headers("a")
            if case == "wrong csrf":
                form["csrf"] = "x" * 40
            if case == "another site":
                form["csrf"] = world.csrf["a"]
                headers = {**headers, "Origin": "https://evil.example"}
            resp = await world.client.post(path, data=form, headers=headers, allow_redirects=False)
            ok = resp.status == 403
            report.case(f"{route} with {case}: {resp.status}", ok, kind="csrf")
            if not ok:
                wrong.append(f"{route} with {case}: {resp.status}")
    login = await world.client.post(
        "/console/login", data={"token": world.tokens["a"]}, headers={"Origin": "https://evil.example"}
    )
    report.case(f"/console/login from another site: {login.status}", login.status == 403, kind="csrf")
    assert login.status == 403
    signup = await world.client.post("/console/signup", data={"name": "x"}, headers={"Origin": "https://evil.example"})
    report.case(f"/console/signup from another site: {signup.status}", signup.status == 403, kind="csrf")
    assert signup.status == 403
    assert wrong == [], "\n".join(wrong)


#: a form body that is not UTF-8: a Latin-1 "é" (0xE9) and a lone continuation byte
_NOT_UTF8 = b"url=https%3A%2F%2Fa.partner.test%2F&x=\xe9\x80"


async def test_console_edges_encoding(world: World, matrix: Callable[[str], Matrix]) -> None:
    """Every form route (signed in with its CSRF token, or the sign-in form) answers a body that is not
    UTF-8 with 400 -- never 500 -- and says why; charset labels do not change that."""
    report = matrix("console edges")
    wrong = []
    for method, route in _console_routes(world.client):
        if method != "POST":
            continue
        path, _ = await _request(world, method, route, "own")
        headers = {} if route == "/console/login" else world.headers("a")
        for body, ctype in (
            (_NOT_UTF8, "application/x-www-form-urlencoded"),
            (_NOT_UTF8, "application/x-www-form-urlencoded; charset=utf-8"),
            (b"token=\xff\xfe" + b"&csrf=" + world.csrf["a"].encode(), "application/x-www-form-urlencoded"),
        ):
            resp = await world.client.post(
                path, data=body, headers={**headers, "Content-Type": ctype}, allow_redirects=False
            )
            text = await resp.text()
            ok = resp.status == 400 and "UTF-8" in text
            report.case(f"{route} with a non-UTF-8 form ({ctype}): {resp.status}", ok, kind="encoding")
            if not ok:
                wrong.append(f"{route} {ctype}: {resp.status} {text[:200]}")
    assert wrong == [], "\n".join(wrong)


#: (what the browser says, whether a sign-in with a valid token goes through)
_LOGIN_EDGES: list[tuple[str, dict[str, str], bool]] = [
    ("Origin: null", {"Origin": "null"}, False),
    ("a foreign Referer", {"Referer": "https://evil.example/login.html"}, False),
    ("a foreign Referer on our port", {"Referer": "http://evil.example:{port}/console"}, False),
    ("Origin: null and Sec-Fetch-Site: cross-site", {"Origin": "null", "Sec-Fetch-Site": "cross-site"}, False),
    ("Sec-Fetch-Site: same-site", {"Sec-Fetch-Site": "same-site"}, False),
    (
        "a foreign Origin claiming same-origin",
        {"Origin": "https://evil.example", "Sec-Fetch-Site": "same-origin"},
        False,
    ),
    ("Origin: null, Sec-Fetch-Site: same-origin", {"Origin": "null", "Sec-Fetch-Site": "same-origin"}, True),
    (
        "a foreign Referer, Sec-Fetch-Site: same-origin",
        {"Referer": "https://evil.example/", "Sec-Fetch-Site": "same-origin"},
        True,
    ),
    ("our own Referer", {"Referer": "http://127.0.0.1:{port}/console"}, True),
    ("our own Origin", {"Origin": "http://127.0.0.1:{port}"}, True),
    ("no header at all (not a browser)", {}, True),
]


async def test_console_edges_login_csrf(world: World, matrix: Callable[[str], Matrix]) -> None:
    """Login CSRF: a cross-site POST of the sign-in form would sign the visitor in to the attacker's
    tenant. ``Origin: null`` and a foreign ``Referer`` are another site's unless the browser's
    ``Sec-Fetch-Site: same-origin`` vouches for the request; so is every action form."""
    report = matrix("console edges")
    port = world.client.server.port
    wrong = []
    for label, template, passes in _LOGIN_EDGES:
        headers = {k: v.format(port=port) for k, v in template.items()}
        login = await world.client.post(
            "/console/login", data={"token": world.tokens["b"]}, headers=headers, allow_redirects=False
        )
        ok = login.status == (303 if passes else 403) and (passes or COOKIE not in login.cookies)
        report.case(f"/console/login with {label}: {login.status}", ok, kind="login csrf")
        if not ok:
            wrong.append(f"login with {label}: {login.status}")
        path, form = await _request(world, "POST", "/console/hosts", "own")
        claim = await world.client.post(
            path,
            data={**form, "csrf": world.csrf["a"]},
            headers={**world.headers("a"), **headers},
            allow_redirects=False,
        )
        ok = claim.status == (303 if passes else 403)
        report.case(f"/console/hosts with {label}: {claim.status}", ok, kind="action csrf")
        if not ok:
            wrong.append(f"claim with {label}: {claim.status}")
    assert wrong == [], "\n".join(wrong)


async def test_console_edges_framing(world: World, matrix: Callable[[str], Matrix]) -> None:
    """Every console page says ``X-Frame-Options: DENY`` beside its CSP's ``frame-ancestors 'none'``
    (browsers that do not read the CSP still refuse to frame it: clickjacking)."""
    report = matrix("console edges")
    wrong = []
    for method, route in _console_routes(world.client):
        for who in (None, "a"):
            path, form = await _request(world, method, route, "own")
            if method == "POST" and who is not None and route != "/console/login":
                form["csrf"] = world.csrf[who]
            resp = await world.client.request(
                method, path, data=form if method == "POST" else None, headers=world.headers(who), allow_redirects=False
            )
            if resp.status == 303:
                continue  # a redirect carries no page
            csp = resp.headers.get("Content-Security-Policy", "")
            ok = resp.headers.get("X-Frame-Options") == "DENY" and "frame-ancestors 'none'" in csp
            report.case(f"{method} {route} as {who or 'nobody'}: X-Frame-Options", ok, kind="framing")
            if not ok:
                wrong.append(f"{method} {route} as {who}: {resp.status} {dict(resp.headers)}")
            if route == "/console/logout" and who is not None:
                await world.sign_in(who)
    assert wrong == [], "\n".join(wrong)
