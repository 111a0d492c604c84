"""The webmaster console's routes, beside the frontend (docs/architecture.md section 10).

    GET  /console                      sign in or sign up, or my hosts, my feeds, my uploads (+ claim a host,
                                       add a feed)
    POST /console/login                sign in with the API token       POST /console/logout
    POST /console/signup               a new tenant (the API's rule and limit: shared/webmaster/signup.py), signed in
    GET  /console/welcome              its API token, shown this once
    GET  /console/hosts/{host}         verification and how, the searches that showed its pages
                                       (?months=1|3|12), feeds, roll-up, lane, pages that lost
                                       something, pages waiting for images and why
    POST /console/hosts                claim a host by its URL          POST /console/hosts/{host}/verify
    POST /console/hosts/{host}/turbo   its Turbo pages off or on (shared/webmaster/turbo_switch.py)
    POST /console/hosts/{host}/branding  the host's name, logo, colour, menu and contacts on your pages
    POST /console/hosts/{host}/refresh one page or image again now, or purge an image (url, what)
    GET  /console/feeds/{id}           status, every problem with its hint, history, next fetch, pages
    POST /console/feeds                add a feed                       POST /console/feeds/{id}/fetch
    POST /console/check                check a feed URL: previews and problems, nothing published
    POST /console/feeds/{id}/autoparser  on / off                      POST /console/feeds/{id}/delete
    POST /console/feeds/{id}/options   fetch options (credentials, headers, timeout) and filters
    GET  /console/opml                 my feeds as an OPML file     POST /console/opml  import one (multipart)
    GET  /console/notifications        webhook, e-mail, each event's setting, the delivery log, endpoint problems
    POST /console/notifications        save them                    POST /console/notifications/test  a test
    GET  /console/uploads              every upload and check, newest first (?host=&mode=&status=&cursor=)
    GET  /console/uploads/{task}       an upload task: per-item results and problems, previews
    GET  /console/users, /console/tokens  the team: users, invitations, API tokens (owners; ``team.py``)
    GET|POST /console/invite?token=    accept an invitation: set a password, signed in

Every page and action asks ``shared.webmaster.access.permit`` with the session's role, as the API
does (a page is a read, an action a write, the team's pages and actions the team's): a
viewer's action, an editor's team page, is answered 403 with the reason.

Every POST needs a signed-in session whose CSRF token the form carries and must
come from our own origin (``session.py``); a page without a session is the
sign-in page (a POST without one: 401 with it). Sign-in takes the tenant's API
token, or a user's login and password; sign-in and sign-up have no session yet:
the origin check guards them. An action that did something answers ``303`` to
the page that shows it (post/redirect/get), carrying what it has to say in a
signed flash cookie (``flash.py``); a refused form is shown again with what to
fix and its 4xx status.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

from aiohttp import web

from cubes.frontend.console import actions, flash, team, views
from cubes.frontend.console.context import ConsoleContext
from cubes.frontend.console.notifications import notifications_page, save_notifications, test_notifications
from cubes.frontend.console.opml import add_opml_routes
from cubes.frontend.console.session import Signed
from cubes.frontend.console.task_list import task_list_page
from cubes.frontend.jinja import duration
from shared.urls import canonical_host
from shared.webmaster.signup import name_problem, sign_up
from shared.webmaster.team import Team

__all__ = ["add_routes"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Action = Callable[[web.Request, Signed, dict[str, str]], Awaitable[web.StreamResponse]]
#: form bodies are a few fields; larger ones are refused unread
_FORM_MAX = 16 * 1024


class BadForm(ValueError):
    """A form body the console cannot read as text: answered ``400``, never a server error."""


async def _form(request: web.Request) -> dict[str, str]:
    if (request.content_length or 0) > _FORM_MAX:
        raise web.HTTPRequestEntityTooLarge(max_size=_FORM_MAX, actual_size=request.content_length or 0)
    try:
        data = await request.post()
    except (UnicodeDecodeError, LookupError) as exc:  # not UTF-8 (or a charset Python does not know)
        raise BadForm(f"the form is not valid UTF-8 text: {exc.__class__.__name__}") from None
    except ValueError as exc:  # a multipart body that does not parse
        raise BadForm(f"the form cannot be read: {exc}") from None
    return {k: v for k, v in data.items() if isinstance(v, str)}


def add_routes(app: web.Application, c: ConsoleContext) -> None:
    def page(view: Callable[[web.Request, Signed], Awaitable[web.StreamResponse]], *, team: bool = False) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            signed = await c.gate.signed(request)
            if signed is None:
                return views.login_page(c)
            refused = views.refused_for_role(c, signed, "GET", team=team)
            if refused is not None:
                return refused
            response = await view(request, signed)
            flash.spend(request, response)  # what an action said is said once
            return response

        return handler

    def said(request: web.Request, signed: Signed) -> dict[str, Any]:
        """What the action that redirected here said (``flash.py``)."""
        return flash.read(request, signed.session_id)

    def action(do: Action, *, team: bool = False, any_role: bool = False) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            if not c.gate.same_origin(request):
                return views.login_page(c, error="This form came from another site: refused.", status=403)
            signed = await c.gate.signed(request)
            if signed is None:
                return views.login_page(c, error="Your session has ended: sign in again.", status=401)
            try:
                form = await _form(request)
            except BadForm as exc:
                return views.login_page(c, error=f"{exc}.", status=400)
            if not c.gate.csrf_ok(signed, form.get("csrf", "")):
                return views.login_page(c, error="This form is out of date: sign in again.", status=403)
            refused = None if any_role else views.refused_for_role(c, signed, "POST", team=team)
            return refused or await do(request, signed, form)

        return handler

    def host_said(request: web.Request, signed: Signed) -> dict[str, Any]:
        """The host page's notice: what an action that redirected there said, or the branding saved."""
        shown = views.host_flash(said(request, signed))
        if not shown["notice"] and request.query.get("saved") == "branding":
            shown["notice"] = "Branding saved: your pages of the host are being rendered again in it."
        return shown

    def host_of(request: web.Request) -> str:
        try:
            return canonical_host(unquote(request.match_info["host"]))
        except ValueError:
            return ""

    def months_of(request: web.Request) -> int:
        raw = request.query.get("months", "1")
        return int(raw) if raw.isdigit() and len(raw) < 3 else 1  # the page keeps only the periods it offers

    async def login(request: web.Request) -> web.StreamResponse:
        if not c.gate.same_origin(request):
            return views.login_page(c, error="This form came from another site: refused.", status=403)
        address = request.remote or ""
        wait = c.gate.logins.wait_s(address)
        if wait:
            return views.login_page(c, error=f"Too many failed sign-ins: try again in {duration(wait)}.", status=429)
        try:
            form = await _form(request)
        except BadForm as exc:
            return views.login_page(c, error=f"{exc}.", status=400)
        response = web.HTTPSeeOther("/console")
        if form.get("login"):
            user = await Team(c.stores.tenants.team).sign_in(form["login"], form.get("password", ""))
            if user is not None:
                await c.gate.sign_in_user(user, response)
                raise response
            c.gate.logins.failed(address)
            return views.login_page(c, error="That login and password do not match.", status=401)
        if await c.gate.sign_in(form.get("token", ""), response) is None:
            c.gate.logins.failed(address)
            return views.login_page(c, error="That token is unknown or revoked, or is not an owner's.", status=401)
        raise response

    async def signup(request: web.Request) -> web.StreamResponse:
        if not c.gate.same_origin(request):
            return views.login_page(c, signup_error="This form came from another site: refused.", status=403)
        if not c.settings.api.signup_enabled:
            return views.login_page(c, signup_error="Sign-up is off here: ask the operator for a token.", status=403)
        try:
            form = await _form(request)
        except BadForm as exc:
            return views.login_page(c, signup_error=f"{exc}.", status=400)
        wait = c.signups.admit(request.remote or "")  # a form we can read costs one sign-up, as in the API
        if wait:
            busy = f"Too many sign-ups from here: try again in {duration(wait)}."
            return views.login_page(c, signup_error=busy, status=429)
        name = form.get("name", "")
        if (wrong := name_problem(name)) is not None:
            return views.login_page(c, signup_error=f"Name: {wrong}.", status=422)
        done = await sign_up(c.stores.tenants, name)
        response = web.HTTPSeeOther("/console/welcome")
        session_id = await c.gate.start(done.tenant_id, response)
        flash.put(response, session_id, {"token": done.token}, secure=c.gate.secure)
        raise response

    async def welcome(request: web.Request, signed: Signed) -> web.StreamResponse:
        token = said(request, signed).get("token")
        if not isinstance(token, str):
            raise web.HTTPSeeOther("/console")  # shown once: a reload goes to the console
        return await views.welcome_page(c, signed, token)

    async def logout(request: web.Request, signed: Signed, form: dict[str, str]) -> web.StreamResponse:
        response = web.HTTPSeeOther("/console")
        await c.gate.sign_out(signed, response)
        raise response

    async def home(request: web.Request, signed: Signed) -> web.StreamResponse:
        notice = "Feed removed." if request.query.get("removed") else ""
        return await views.home_page(c, signed, notice=notice)

    r = app.router
    r.add_get("/console", page(home))
    r.add_post("/console/login", login)
    r.add_post("/console/signup", signup)
    r.add_get("/console/welcome", page(welcome))
    r.add_post("/console/logout", action(logout, any_role=True))
    r.add_get(
        "/console/hosts/{host}",
        page(lambda q, s: views.host_page(c, s, host_of(q), months=months_of(q), **host_said(q, s))),
    )
    r.add_post("/console/hosts", action(lambda q, s, f: actions.claim_host(c, s, f)))
    r.add_post("/console/hosts/{host}/verify", action(lambda q, s, f: actions.verify_host(c, s, host_of(q))))
    r.add_post(
        "/console/hosts/{host}/turbo",
        action(lambda q, s, f: actions.switch_turbo(c, s, host_of(q), f.get("on") == "1")),
    )
    r.add_post("/console/hosts/{host}/branding", action(lambda q, s, f: actions.set_branding(c, s, host_of(q), f)))
    r.add_post("/console/hosts/{host}/refresh", action(lambda q, s, f: actions.refresh_url(c, s, host_of(q), f)))
    r.add_get(
        "/console/feeds/{feed_id}",
        page(
            lambda q, s: views.feed_page(
                c,
                s,
                q.match_info["feed_id"],
                fetch_id=q.query.get("fetch", "")[:64],
                notice="Fetch options saved." if q.query.get("saved") == "options" else "",
            )
        ),
    )
    r.add_post("/console/feeds", action(lambda q, s, f: actions.add_feed(c, s, f)))
    r.add_post("/console/check", action(lambda q, s, f: actions.check_feed(c, s, f)))
    r.add_post(
        "/console/feeds/{feed_id}/fetch", action(lambda q, s, f: actions.fetch_now(c, s, q.match_info["feed_id"]))
    )
    r.add_post(
        "/console/feeds/{feed_id}/autoparser",
        action(lambda q, s, f: actions.switch_autoparser(c, s, q.match_info["feed_id"], f.get("on") == "1")),
    )
    r.add_post(
        "/console/feeds/{feed_id}/options",
        action(lambda q, s, f: actions.set_options(c, s, q.match_info["feed_id"], f)),
    )
    r.add_post(
        "/console/feeds/{feed_id}/delete", action(lambda q, s, f: actions.remove_feed(c, s, q.match_info["feed_id"]))
    )
    add_opml_routes(app, c)
    r.add_get("/console/notifications", page(lambda q, s: notifications_page(c, s)))
    # where the tenant's events go, and the webhook's secret: the team's (owners only)
    r.add_post("/console/notifications", action(lambda q, s, f: save_notifications(c, s, f), team=True))
    r.add_post("/console/notifications/test", action(lambda q, s, f: test_notifications(c, s)))
    r.add_get("/console/uploads", page(lambda q, s: task_list_page(c, s, q.query)))
    r.add_get("/console/uploads/{task_id}", page(lambda q, s: views.task_page(c, s, q.match_info["task_id"])))
    team.add_routes(app, c, page, action, _form)
