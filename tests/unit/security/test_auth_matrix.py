"""The auth matrix: every operation of the OpenAPI document x every kind of caller.

Callers, against the objects of tenant A (its verified host, a feed, an upload task, its limits):

* ``none``   -- no ``Authorization`` header;
* ``other``  -- tenant B's valid token (B owns another host);
* ``own``    -- A's token;
* ``alias``  -- A's token, naming the ``www.`` spelling of A's host, which tenant C verified
  (www. is one site with A's host only for a tenant that verified both: shared/webmaster/hosts.py);
* ``admin``  -- the admin token;
* ``editor`` / ``viewer`` -- A's own tokens of scope ``write`` / ``read`` (team access: the role of a
  call is its token's scope, ``shared.webmaster.access.permit``);
* ``other_editor`` -- B's token of scope ``write``.

The role columns follow from the rule the issue states, written here apart from the code: a viewer
gets what the owner gets on a read (GET) and ``403`` on anything else; an editor what the owner gets
except on the team's operations (``/api/v1/team/...``, and setting where the tenant's notifications
go, ``PUT /api/v1/notifications``: the webhook and its secret are the owners'; ``403``); an
operation the owner's token is refused anyway (public, admin) answers every role as it answers the
owner. B's editor gets what B gets, save the team's operations.

The operations come from the served document, so an endpoint added to the API without a row in
``EXPECT`` fails here, loudly, naming what to add. Every answer must also be a status the
document lists for that operation, and a list answered to B must not name A's objects.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cubes.api.openapi import document
from tests.unit.cubes.api.apikit import ADMIN_TOKEN, ApiHarness, rss
from tests.unit.security.conftest import Matrix

A_HOST = "a.partner.test"
B_HOST = "b.partner.test"
ALIAS = "www." + A_HOST  # verified by tenant C
CALLERS = ("none", "other", "own", "alias", "admin", "editor", "viewer", "other_editor")
ROLE_CALLERS = ("editor", "viewer", "other_editor")
#: what names no host: the alias caller does not apply (written out, so a new row must decide)
NA = None
#: the owners' operations outside /api/v1/team/
OWNERS_ONLY = frozenset({("PUT", "/api/v1/notifications")})


@dataclass(frozen=True)
class Expect:
    none: int
    other: int
    own: int
    alias: int | None
    admin: int
    #: a role column written out where the rule does not say it (None: the rule's answer)
    other_editor: int | None = None

    def base(self, caller: str) -> int:
        """What the owner of the role caller's tenant gets."""
        return self.other if caller == "other_editor" else self.own

    def of(self, caller: str, method: str = "GET", path: str = "") -> int | None:
        value: int | None = getattr(self, caller, None)
        if caller in ROLE_CALLERS and value is None:
            return self._role(caller, method, path)
        return value

    def _role(self, caller: str, method: str, path: str) -> int:
        base = self.base(caller)
        if self.own == 401 or self.none != 401:
            return base  # admin or public: a role changes nothing
        if path.startswith("/api/v1/team/") or (method, path) in OWNERS_ONLY:
            return 403  # the team is the owners'
        if caller == "viewer":
            return base if method == "GET" else 403
        return base


#: (METHOD, path) -> the status each caller gets. Tenant operations: nobody 401, another tenant 403
#: on a host that is not its own and 404 on an id that is not its own (ids are not guessable, and a
#: 403 would confirm they exist), the admin token is not a tenant token (401). Admin operations: only
#: the admin token.
EXPECT: dict[tuple[str, str], Expect] = {
    ("GET", "/api/v1/openapi.json"): Expect(none=200, other=200, own=200, alias=NA, admin=200),
    ("GET", "/docs"): Expect(none=200, other=200, own=200, alias=NA, admin=200),
    ("GET", "/api/v1/problems"): Expect(none=200, other=200, own=200, alias=NA, admin=200),
    ("POST", "/api/v1/feeds"): Expect(none=401, other=403, own=201, alias=403, admin=401),
    ("GET", "/api/v1/feeds"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("GET", "/api/v1/feeds/{feed_id}"): Expect(none=401, other=404, own=200, alias=NA, admin=401),
    ("DELETE", "/api/v1/feeds/{feed_id}"): Expect(none=401, other=404, own=204, alias=NA, admin=401),
    ("PATCH", "/api/v1/feeds/{feed_id}"): Expect(none=401, other=404, own=200, alias=NA, admin=401),
    ("POST", "/api/v1/feeds/{feed_id}/fetch"): Expect(none=401, other=404, own=202, alias=NA, admin=401),
    ("GET", "/api/v1/feeds/{feed_id}/fetches"): Expect(none=401, other=404, own=200, alias=NA, admin=401),
    ("GET", "/api/v1/feeds/{feed_id}/fetches/{fetch_id}"): Expect(none=401, other=404, own=200, alias=NA, admin=401),
    ("GET", "/api/v1/feeds/{feed_id}/pages"): Expect(none=401, other=404, own=200, alias=NA, admin=401),
    ("GET", "/api/v1/feeds/{feed_id}/problems"): Expect(none=401, other=404, own=200, alias=NA, admin=401),
    # each tenant's own feeds as OPML; an import is one registration per line, each refused on a host
    # that is not the caller's (the answer is 200 with every line's result, A's feeds untouched)
    ("GET", "/api/v1/feeds/opml"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("POST", "/api/v1/feeds/opml"): Expect(none=401, other=200, own=200, alias=200, admin=401),
    ("POST", "/api/v1/feeds/check"): Expect(none=401, other=403, own=202, alias=403, admin=401),
    ("POST", "/api/v1/uploads"): Expect(none=401, other=403, own=202, alias=403, admin=401),
    ("GET", "/api/v1/uploads/{task_id}"): Expect(none=401, other=404, own=200, alias=NA, admin=401),
    # every tenant lists its own tasks: B asking for A's host gets an empty page, never A's tasks
    # notifications are each tenant's own: B reads and sets B's, never A's webhook, address or log
    ("GET", "/api/v1/notifications"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("PUT", "/api/v1/notifications"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("POST", "/api/v1/notifications/test"): Expect(none=401, other=202, own=202, alias=NA, admin=401),
    ("GET", "/api/v1/notifications/deliveries"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("GET", "/api/v1/uploads"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("DELETE", "/api/v1/pages"): Expect(none=401, other=403, own=202, alias=403, admin=401),
    ("GET", "/api/v1/hosts"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    # the changes of rights on the caller's own origins: every tenant has its own list
    ("GET", "/api/v1/notices"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("GET", "/api/v1/hosts/{host}"): Expect(none=401, other=403, own=200, alias=403, admin=401),
    ("GET", "/api/v1/hosts/{host}/queries"): Expect(none=401, other=403, own=200, alias=403, admin=401),
    # search frequencies over every host (privacy-thresholded): any tenant may ask, nobody else
    ("GET", "/api/v1/wordstat"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    # a claim gives no right until it is verified, so anyone may claim any host: B's claim on A's host
    # is 201, A's own again 200 (idempotent), A's claim on the alias C verified 201 (C keeps it)
    # (B's editor asks after B's own claim of A's host: 200, the same claim again)
    ("POST", "/api/v1/hosts"): Expect(none=401, other=201, own=200, alias=201, admin=401, other_editor=200),
    # public: a sign-up makes a new tenant whoever asks (rate-limited per address)
    ("POST", "/api/v1/signup"): Expect(none=201, other=201, own=201, alias=NA, admin=201),
    ("POST", "/api/v1/hosts/{host}/verify"): Expect(none=401, other=403, own=200, alias=403, admin=401),
    # the host-wide Turbo switch: only the tenant that verified the host
    ("PUT", "/api/v1/hosts/{host}/turbo"): Expect(none=401, other=403, own=200, alias=403, admin=401),
    ("GET", "/api/v1/hosts/{host}/branding"): Expect(none=401, other=403, own=200, alias=403, admin=401),
    ("PUT", "/api/v1/hosts/{host}/branding"): Expect(none=401, other=403, own=200, alias=403, admin=401),
    ("DELETE", "/api/v1/hosts/{host}/branding"): Expect(none=401, other=403, own=204, alias=403, admin=401),
    # one URL again now: a page of the caller's origin (A's feeds are fetched for it), an image of its pages
    ("POST", "/api/v1/pages/refresh"): Expect(none=401, other=403, own=202, alias=403, admin=401),
    ("POST", "/api/v1/images/refresh"): Expect(none=401, other=404, own=202, alias=NA, admin=401),
    ("POST", "/api/v1/images/purge"): Expect(none=401, other=404, own=202, alias=NA, admin=401),
    # public by the protocol: the key file decides, whoever asks (here no site serves it: 403 for all)
    ("GET", "/indexnow"): Expect(none=403, other=403, own=403, alias=403, admin=403),
    ("POST", "/indexnow"): Expect(none=403, other=403, own=403, alias=403, admin=403),
    # team access: the tenant's own tokens, users and invitations (owners only: the role columns)
    ("GET", "/api/v1/team/tokens"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("POST", "/api/v1/team/tokens"): Expect(none=401, other=201, own=201, alias=NA, admin=401),
    ("POST", "/api/v1/team/tokens/{token_id}/rotate"): Expect(none=401, other=404, own=200, alias=NA, admin=401),
    ("DELETE", "/api/v1/team/tokens/{token_id}"): Expect(none=401, other=404, own=204, alias=NA, admin=401),
    ("GET", "/api/v1/team/users"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("PATCH", "/api/v1/team/users/{user_id}"): Expect(none=401, other=404, own=200, alias=NA, admin=401),
    ("DELETE", "/api/v1/team/users/{user_id}"): Expect(none=401, other=404, own=204, alias=NA, admin=401),
    ("GET", "/api/v1/team/invitations"): Expect(none=401, other=200, own=200, alias=NA, admin=401),
    ("POST", "/api/v1/team/invitations"): Expect(none=401, other=201, own=201, alias=NA, admin=401),
    ("DELETE", "/api/v1/team/invitations/{invitation_id}"): Expect(none=401, other=404, own=204, alias=NA, admin=401),
    ("GET", "/api/v1/admin/limits/{tenant}"): Expect(none=401, other=401, own=401, alias=NA, admin=200),
    ("PUT", "/api/v1/admin/limits/{tenant}"): Expect(none=401, other=401, own=401, alias=NA, admin=200),
    ("DELETE", "/api/v1/admin/limits/{tenant}"): Expect(none=401, other=401, own=401, alias=NA, admin=200),
}


@dataclass
class World:
    api: ApiHarness
    a: str
    tokens: dict[str, str]
    feed_urls: itertools.count[int]

    def headers(self, caller: str) -> dict[str, str]:
        token = {"none": None, "other": self.tokens["b"], "own": self.tokens["a"], "alias": self.tokens["a"]}.get(
            caller, self.tokens.get(caller, ADMIN_TOKEN)
        )
        return {} if token is None else {"Authorization": f"Bearer {token}"}

    async def a_feed(self) -> str:
        """A fresh feed of A's (a DELETE case removes one)."""
        url = f"https://{A_HOST}/feed-{next(self.feed_urls)}.xml"
        resp = await self.api.client.post(
            "/api/v1/feeds", json={"url": url, "format": "rss"}, headers=self.headers("own")
        )
        assert resp.status == 201, await resp.text()
        feed_id: str = (await resp.json())["feed_id"]
        return feed_id

    async def a_task(self) -> str:
        resp = await self.api.upload(self.tokens["a"], rss(1, A_HOST), host=A_HOST)
        assert resp.status == 202, await resp.text()
        task_id: str = (await resp.json())["task_id"]
        return task_id


Request = tuple[str, dict[str, Any]]  # (path, aiohttp request keyword arguments)
#: (METHOD, path) -> how to ask it as ``caller``: the host is A's, or its alias for the alias caller
BUILD: dict[tuple[str, str], Callable[[World, str], Awaitable[Request]]] = {}


def builds(method: str, path: str) -> Callable[[Callable[[World, str], Awaitable[Request]]], Any]:
    def register(fn: Callable[[World, str], Awaitable[Request]]) -> Any:
        BUILD[(method, path)] = fn
        return fn

    return register


def _host(caller: str) -> str:
    return ALIAS if caller == "alias" else A_HOST


@builds("GET", "/api/v1/openapi.json")
@builds("GET", "/docs")
@builds("GET", "/api/v1/problems")
@builds("GET", "/api/v1/feeds")
@builds("GET", "/api/v1/hosts")
@builds("GET", "/api/v1/notices")
@builds("GET", "/api/v1/notifications")
@builds("POST", "/api/v1/notifications/test")
@builds("GET", "/api/v1/notifications/deliveries")
async def _plain(world: World, caller: str) -> Request:
    return "", {}


@builds("POST", "/api/v1/feeds")
async def _create_feed(world: World, caller: str) -> Request:
    url = f"https://{_host(caller)}/new-{next(world.feed_urls)}.xml"
    return "/api/v1/feeds", {"json": {"url": url, "format": "rss"}}


@builds("GET", "/api/v1/feeds/{feed_id}")
@builds("DELETE", "/api/v1/feeds/{feed_id}")
async def _a_feed(world: World, caller: str) -> Request:
    return f"/api/v1/feeds/{await world.a_feed()}", {}


@builds("PATCH", "/api/v1/feeds/{feed_id}")
async def _patch_feed(world: World, caller: str) -> Request:
    return f"/api/v1/feeds/{await world.a_feed()}", {"json": {"autoparser": True}}


@builds("POST", "/api/v1/feeds/{feed_id}/fetch")
async def _fetch_now(world: World, caller: str) -> Request:
    return f"/api/v1/feeds/{await world.a_feed()}/fetch", {}


@builds("GET", "/api/v1/feeds/{feed_id}/fetches")
async def _fetches(world: World, caller: str) -> Request:
    return f"/api/v1/feeds/{await world.a_feed()}/fetches", {}


@builds("GET", "/api/v1/feeds/{feed_id}/fetches/{fetch_id}")
async def _a_fetch(world: World, caller: str) -> Request:
    return f"/api/v1/feeds/{await world.a_feed()}/fetches/{'0' * 32}", {}


@builds("GET", "/api/v1/feeds/{feed_id}/pages")
async def _pages(world: World, caller: str) -> Request:
    return f"/api/v1/feeds/{await world.a_feed()}/pages", {}


@builds("GET", "/api/v1/feeds/{feed_id}/problems")
async def _problem_history(world: World, caller: str) -> Request:
    return f"/api/v1/feeds/{await world.a_feed()}/problems", {}


@builds("PUT", "/api/v1/notifications")
async def _put_notifications(world: World, caller: str) -> Request:
    return "", {"json": {"email": f"webmaster-{caller}@example.com", "events": {"task.done": "now"}}}


@builds("POST", "/api/v1/uploads")
async def _upload(world: World, caller: str) -> Request:
    host = _host(caller)
    return "/api/v1/uploads", {
        "params": {"host": host, "format": "rss"},
        "data": rss(1, host),
        "headers": {"Content-Type": "application/rss+xml"},
    }


@builds("GET", "/api/v1/uploads/{task_id}")
async def _a_task(world: World, caller: str) -> Request:
    return f"/api/v1/uploads/{await world.a_task()}", {}


@builds("GET", "/api/v1/uploads")
async def _task_list(world: World, caller: str) -> Request:
    await world.a_task()
    return "/api/v1/uploads", {"params": {"host": A_HOST}}


@builds("GET", "/api/v1/feeds/opml")
async def _export(world: World, caller: str) -> Request:
    await world.a_feed()
    return "", {}


@builds("POST", "/api/v1/feeds/opml")
async def _import(world: World, caller: str) -> Request:
    url = f"https://{_host(caller)}/opml-{next(world.feed_urls)}.xml"
    body = f'<opml version="2.0"><body><outline type="rss" xmlUrl="{url}"/></body></opml>'
    return "/api/v1/feeds/opml", {"data": body, "headers": {"Content-Type": "text/x-opml"}}


@builds("DELETE", "/api/v1/pages")
async def _delete_page(world: World, caller: str) -> Request:
    return "/api/v1/pages", {"params": {"url": f"https://{_host(caller)}/p/0"}}


@builds("GET", "/api/v1/hosts/{host}")
async def _a_host(world: World, caller: str) -> Request:
    return f"/api/v1/hosts/{_host(caller)}", {}


@builds("GET", "/api/v1/hosts/{host}/queries")
async def _queries(world: World, caller: str) -> Request:
    return f"/api/v1/hosts/{_host(caller)}/queries", {}


@builds("GET", "/api/v1/wordstat")
async def _wordstat(world: World, caller: str) -> Request:
    return "/api/v1/wordstat", {"params": {"q": "weather"}}


@builds("POST", "/api/v1/feeds/check")
async def _check(world: World, caller: str) -> Request:
    return "/api/v1/feeds/check", {"json": {"url": f"https://{_host(caller)}/check-{next(world.feed_urls)}.xml"}}


@builds("POST", "/api/v1/hosts")
async def _claim(world: World, caller: str) -> Request:
    return "/api/v1/hosts", {"json": {"host": _host(caller)}}


@builds("POST", "/api/v1/signup")
async def _signup(world: World, caller: str) -> Request:
    return "/api/v1/signup", {"json": {"name": f"signed up as {caller}"}}


@builds("POST", "/api/v1/hosts/{host}/verify")
async def _verify(world: World, caller: str) -> Request:
    return f"/api/v1/hosts/{_host(caller)}/verify", {}


@builds("PUT", "/api/v1/hosts/{host}/turbo")
async def _turbo(world: World, caller: str) -> Request:
    return f"/api/v1/hosts/{_host(caller)}/turbo", {"json": {"enabled": True}}


@builds("GET", "/api/v1/hosts/{host}/branding")
@builds("DELETE", "/api/v1/hosts/{host}/branding")
async def _branding(world: World, caller: str) -> Request:
    return f"/api/v1/hosts/{_host(caller)}/branding", {}


@builds("PUT", "/api/v1/hosts/{host}/branding")
async def _put_branding(world: World, caller: str) -> Request:
    return f"/api/v1/hosts/{_host(caller)}/branding", {
        "json": {"display_name": f"{caller}'s site", "accent": "#0a7d3b"}
    }


@builds("POST", "/api/v1/pages/refresh")
async def _refresh_page(world: World, caller: str) -> Request:
    return "/api/v1/pages/refresh", {"json": {"url": f"https://{_host(caller)}/p/0"}}


@builds("POST", "/api/v1/images/refresh")
@builds("POST", "/api/v1/images/purge")
async def _refresh_image(world: World, caller: str) -> Request:
    """An image one of A's pages shows."""
    image, copy = f"https://img.partner.test/{next(world.feed_urls)}.png", f"/cdn/img/00/{'0' * 64}.png"
    await world.api.stores.images.record_ok(image, cdn_url=copy, mime="image/png")
    await world.api.stores.images.link_pages([(copy, f"https://{A_HOST}/p/0")])
    return "", {"json": {"url": image}}


@builds("GET", "/indexnow")
async def _indexnow(world: World, caller: str) -> Request:
    return "/indexnow", {"params": {"url": f"https://{_host(caller)}/p/0", "key": "matrix-key-0001"}}


@builds("POST", "/indexnow")
async def _indexnow_batch(world: World, caller: str) -> Request:
    host = _host(caller)
    return "/indexnow", {"json": {"host": host, "key": "matrix-key-0001", "urlList": [f"https://{host}/p/0"]}}


@builds("GET", "/api/v1/team/tokens")
@builds("GET", "/api/v1/team/users")
@builds("GET", "/api/v1/team/invitations")
async def _team_lists(world: World, caller: str) -> Request:
    return "", {}


@builds("POST", "/api/v1/team/tokens")
async def _new_token(world: World, caller: str) -> Request:
    return "", {"json": {"name": f"made by {caller}", "scope": "read"}}


async def _a_token(world: World) -> str:
    _, row = await world.api.stores.tenants.team.create_token(world.a, f"spare {next(world.feed_urls)}", "read")
    return row.token_id


@builds("POST", "/api/v1/team/tokens/{token_id}/rotate")
async def _rotate(world: World, caller: str) -> Request:
    return f"/api/v1/team/tokens/{await _a_token(world)}/rotate", {}


@builds("DELETE", "/api/v1/team/tokens/{token_id}")
async def _revoke(world: World, caller: str) -> Request:
    return f"/api/v1/team/tokens/{await _a_token(world)}", {}


async def _a_user(world: World) -> str:
    user = await world.api.stores.tenants.team.add_user(
        world.a, f"member-{next(world.feed_urls)}@a.test", "editor", "x"
    )
    assert user is not None
    return user.user_id


@builds("PATCH", "/api/v1/team/users/{user_id}")
async def _set_role(world: World, caller: str) -> Request:
    return f"/api/v1/team/users/{await _a_user(world)}", {"json": {"role": "viewer"}}


@builds("DELETE", "/api/v1/team/users/{user_id}")
async def _remove_user(world: World, caller: str) -> Request:
    return f"/api/v1/team/users/{await _a_user(world)}", {}


@builds("POST", "/api/v1/team/invitations")
async def _invite(world: World, caller: str) -> Request:
    return "", {"json": {"login": f"invited-{next(world.feed_urls)}@{caller}.test", "role": "editor"}}


@builds("DELETE", "/api/v1/team/invitations/{invitation_id}")
async def _revoke_invitation(world: World, caller: str) -> Request:
    _, invitation = await world.api.stores.tenants.team.invite(
        world.a, f"pending-{next(world.feed_urls)}@a.test", "viewer", ttl_s=3600
    )
    return f"/api/v1/team/invitations/{invitation.invitation_id}", {}


@builds("GET", "/api/v1/admin/limits/{tenant}")
@builds("DELETE", "/api/v1/admin/limits/{tenant}")
async def _limits(world: World, caller: str) -> Request:
    return f"/api/v1/admin/limits/{world.a}", {}


@builds("PUT", "/api/v1/admin/limits/{tenant}")
async def _put_limits(world: World, caller: str) -> Request:
    return f"/api/v1/admin/limits/{world.a}", {"json": {"rps": 1000, "burst": 1000, "bytes_per_s": 1e9}}


#: operations whose success changes what the others answer (B's claim on A's host would let B ask
#: for that host's overview or verification): asked last
LAST = (("POST", "/api/v1/hosts"),)


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    ops = []
    for path, methods in document()["paths"].items():
        for method, op in methods.items():
            ops.append((method.upper(), path, op))
    return sorted(ops, key=lambda o: (o[0], o[1]) in LAST)


def test_every_operation_of_the_document_has_an_expectation_and_a_request() -> None:
    documented = {(m, p) for m, p, _ in _operations()}
    missing = sorted(documented - set(EXPECT))
    assert not missing, (
        f"operations without a row in tests/unit/security/test_auth_matrix.py EXPECT: {missing}; "
        "say what no token, another tenant, the own tenant, an alias host and the admin get"
    )
    assert not sorted(documented - set(BUILD)), "operations without a request builder (BUILD) in the auth matrix"
    assert not sorted(set(EXPECT) - documented), "EXPECT rows for operations the document no longer has"


async def test_auth_matrix(tmp_path: Path, matrix: Callable[[str], Matrix]) -> None:
    report = matrix("auth")
    # generous rate limits: the matrix is about who may, not how often
    async with ApiHarness(tmp_path, tenant_rps=10_000.0, tenant_burst=10_000, concurrency=256, signup_burst=100) as api:
        a, a_token = await api.tenant(A_HOST)
        b, b_token = await api.tenant(B_HOST)
        await api.tenant(ALIAS)  # C: the alias spelling of A's host is somebody else's
        tokens = {"a": a_token, "b": b_token}
        for name, tenant, scope in (("editor", a, "write"), ("viewer", a, "read"), ("other_editor", b, "write")):
            tokens[name], _ = await api.stores.tenants.team.create_token(tenant, name, scope)
        world = World(api, a, tokens, itertools.count())
        a_objects = [A_HOST, a, await world.a_feed(), await world.a_task()]
        # A's notifications name A's host: B's settings and log must not
        resp = await api.client.put(
            "/api/v1/notifications", json={"email": f"owner@{A_HOST}"}, headers=world.headers("own")
        )
        assert resp.status == 200, await resp.text()
        wrong: list[str] = []
        for method, path, op in _operations():
            expect = EXPECT.get((method, path))
            if expect is None:
                continue  # reported by the test above
            for caller in CALLERS:
                want = expect.of(caller, method, path)
                if want is None:
                    continue
                target, kwargs = await BUILD[(method, path)](world, caller)
                url = target or path
                headers = {**kwargs.pop("headers", {}), **world.headers(caller)}
                resp = await api.client.request(method, url, headers=headers, **kwargs)
                body = await resp.text()
                label = f"{method} {path} as {caller}: {resp.status}, expected {want}"
                ok = resp.status == want and str(resp.status) in op["responses"]
                if ok and resp.status == 403 and caller in ROLE_CALLERS and want != expect.base(caller):
                    ok = (await resp.json())["error"] == "role_forbids"  # refused for the role, not the host
                if ok and caller in ("other", "other_editor") and resp.status == 200 and method == "GET":
                    ok = not any(name in body for name in a_objects)  # B's lists never name A's objects
                    label += " (and no object of A's in it)"
                report.case(label, ok, kind=caller)
                if not ok:
                    wrong.append(f"{label}: {body[:200]}")
    assert wrong == [], "\n".join(wrong)
    assert report.cases >= 4 * len(EXPECT)


@pytest.mark.parametrize("scheme", ["Basic", "Bearer"])
async def test_malformed_and_revoked_tokens_are_nobody(tmp_path: Path, scheme: str) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(A_HOST)
        assert await api.stores.tenants.revoke_token(token)
        api.deps.clock.advance(10)  # type: ignore[attr-defined]  # past the instance's token cache
        for value in (f"{scheme} {token}", f"{scheme} ", f"{scheme} {'x' * 300}", scheme):
            resp = await api.client.get("/api/v1/feeds", headers={"Authorization": value})
            assert resp.status == 401, value
            assert resp.headers["WWW-Authenticate"].startswith("Bearer")


async def test_wrong_tokens_are_throttled_per_address(tmp_path: Path, matrix: Callable[[str], Matrix]) -> None:
    """A client that presents wrong tokens waits: ``TOKEN_FAILURES`` 401s, then 429 with Retry-After --
    for a right token too (a scan must not learn which guess was right) and for the admin token; a
    request without a token is not a guess. The wait drains one try per ``TOKEN_REFILL_S``."""
    from cubes.api.auth import TOKEN_FAILURES, TOKEN_REFILL_S

    report = matrix("auth")
    async with ApiHarness(tmp_path, tenant_rps=10_000.0, tenant_burst=10_000) as api:
        _, token = await api.tenant(A_HOST)
        statuses = []
        for i in range(TOKEN_FAILURES):
            resp = await api.client.get("/api/v1/feeds", headers=api.auth(f"tc_wrong{i}"))
            statuses.append(resp.status)
        report.case("wrong tokens before the wait: 401", statuses == [401] * TOKEN_FAILURES, kind="throttle")
        assert statuses == [401] * TOKEN_FAILURES
        waiting = [
            await api.client.get("/api/v1/feeds", headers=api.auth("tc_wrong-again")),
            await api.client.get("/api/v1/feeds", headers=api.auth(token)),
            await api.client.get("/api/v1/admin/limits/x", headers=api.auth(ADMIN_TOKEN)),
        ]
        for resp in waiting:
            ok = resp.status == 429 and int(resp.headers["Retry-After"]) >= 1
            ok = ok and (await resp.json())["error"] == "too_many_failures"
            report.case(f"{resp.url.path} while the address waits: {resp.status}", ok, kind="throttle")
            assert ok, (resp.url, resp.status)
        none = await api.client.get("/api/v1/feeds")
        report.case("no token while the address waits: 401", none.status == 401, kind="throttle")
        assert none.status == 401
        api.clock.advance(TOKEN_REFILL_S)
        again = await api.client.get("/api/v1/feeds", headers=api.auth(token))
        report.case("the right token once a try refilled: 200", again.status == 200, kind="throttle")
        assert again.status == 200
        wrong = await api.client.get("/api/v1/feeds", headers=api.auth("tc_wrong-late"))
        late = await api.client.get("/api/v1/feeds", headers=api.auth(token))
        assert (wrong.status, late.status) == (401, 429)


def test_failed_attempts_are_counted_per_address() -> None:
    from shared.attempts import FailedAttempts
    from shared.clock import ManualClock

    clock = ManualClock()
    attempts = FailedAttempts(clock, failures=3, refill_s=10.0)
    for _ in range(3):
        assert attempts.wait_s("10.0.0.1") == 0
        attempts.failed("10.0.0.1")
    assert attempts.wait_s("10.0.0.1") == 10.0
    assert attempts.wait_s("10.0.0.2") == 0  # another address is not held back
    clock.advance(10.0)
    assert attempts.wait_s("10.0.0.1") == 0


def test_a_client_is_an_ipv4_address_or_an_ipv6_64_in_any_spelling() -> None:
    """A guesser on IPv6 took a new address of its /64 at every try and was never held back; an IPv4
    peer seen mapped (``::ffff:10.0.0.1``) was another client than ``10.0.0.1``."""
    from shared.attempts import FailedAttempts, client_key
    from shared.clock import ManualClock

    attempts = FailedAttempts(ManualClock(), failures=3, refill_s=10.0)
    for n in range(3):
        attempts.failed(f"2001:db8:1:2::{n + 1:x}")
    assert attempts.wait_s("2001:db8:1:2:ffff:ffff:ffff:ffff") == 10.0  # the same /64
    assert attempts.wait_s("2001:db8:1:3::1") == 0  # the next /64 is another subscriber
    for _ in range(3):
        attempts.failed("::ffff:10.0.0.9")
    assert attempts.wait_s("10.0.0.9") == 10.0
    assert client_key("fe80::1%eth0") == "fe80::/64"
    assert client_key("not an address") == "not an address"
