"""Team access in a real browser, on a phone: an owner invites an editor, the editor accepts and works,
the owner revokes a token and the API refuses it.

The API and the console over one embedded store (the API harness's), headless Chromium at 390 px
(``test_browser_frontend.py`` drives it). The owner signs in with the tenant's token, invites
``ed@shop.example`` as an editor and reads the link (shown once); the editor opens it, chooses a
password, is signed in, adds a feed, and is refused the tokens page. The owner, signed in again,
makes a write token, the API takes it, the owner revokes it, and the API refuses it. Screenshots
go to ``test-artifacts/browser/console-team*.png`` to be looked at.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from cubes.api.auth import TOKEN_CACHE_S
from tests.integration.console_browser import Console, follow, serve_console
from tests.integration.test_browser_frontend import (  # the browser fixture and its helpers
    Cdp,
    _errors,
    _eval,
    _open,
    _shot,
    browser,
)
from tests.unit.cubes.api.apikit import ApiHarness

__all__ = ["browser"]  # re-exported: pytest finds the fixture in this module

pytestmark = pytest.mark.browser

HOST = "a.partner.test"
EDITOR = "ed@shop.example"
PASSWORD = "a password long enough"


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[Console, ApiHarness]]:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST)
        async with serve_console(
            api.settings, api.stores, clock=api.clock, publish=api.deps.publish, resolver=api.resolver
        ) as url:
            yield Console(url, token), api


async def _text(cdp: Cdp, session: str, selector: str) -> str:
    text: str = await _eval(cdp, session, f"(document.querySelector({selector!r}) || {{innerText: ''}}).innerText")
    return text


async def _fits(cdp: Cdp, session: str) -> None:
    assert await _eval(cdp, session, "document.documentElement.scrollWidth") <= 390


async def _token_sign_in(cdp: Cdp, session: str, token: str) -> None:
    await follow(
        cdp,
        session,
        f"document.querySelector('input[name=token]').value = {token!r};"
        "document.querySelector('input[name=token]').form.submit()",
    )


async def _sign_out(cdp: Cdp, session: str) -> None:
    await follow(cdp, session, "document.querySelector('form[action=\"/console/logout\"]').submit()")


async def test_an_owner_invites_an_editor_who_works_and_a_revoked_token_is_refused(
    world: tuple[Console, ApiHarness], browser: Cdp
) -> None:
    console, api = world
    phone = await _open(browser, f"{console.url}/console", width=390, height=844, mobile=True)
    await _token_sign_in(browser, phone, console.token)
    assert "Users and invitations" in await _text(browser, phone, "#team-nav")

    # the owner invites the editor; the link is shown once
    await follow(browser, phone, "location.href = '/console/users'")
    await follow(
        browser,
        phone,
        f"document.querySelector('#invite input[name=login]').value = {EDITOR!r};"
        "document.querySelector('#invite select[name=role]').value = 'editor';"
        "document.querySelector('#invite').submit()",
    )
    link = await _text(browser, phone, "#invite-link code")
    assert urlsplit(link).path == "/console/invite"
    secret = parse_qs(urlsplit(link).query)["token"][0]
    assert EDITOR in await _text(browser, phone, "#invitations")
    await _fits(browser, phone)
    await _shot(browser, phone, "console-team-invite")
    await _sign_out(browser, phone)

    # the editor accepts (the link's page on this test's port), is signed in, adds a feed
    await follow(browser, phone, f"location.href = '/console/invite?token={secret}'")
    assert "editor" in await _text(browser, phone, "main")
    await _shot(browser, phone, "console-team-accept")
    await follow(
        browser,
        phone,
        f"document.querySelector('#accept input[name=password]').value = {PASSWORD!r};"
        "document.querySelector('#accept').submit()",
    )
    nav = await _text(browser, phone, "#team-nav")
    assert EDITOR in nav
    assert "editor" in nav
    assert "API tokens" not in nav
    await follow(
        browser,
        phone,
        f"document.querySelector('form[action=\"/console/feeds\"] input[name=url]').value = 'https://{HOST}/feed.xml';"
        "document.querySelector('form[action=\"/console/feeds\"]').submit()",
    )
    assert "/console/feeds/" in await _eval(browser, phone, "location.pathname")
    feeds = await api.stores.feeds.list()
    assert [f.url for f in feeds] == [f"https://{HOST}/feed.xml"]
    await follow(browser, phone, "location.href = '/console/tokens'")
    assert "may not do this" in await _text(browser, phone, "main")
    assert await _eval(browser, phone, "document.querySelector('#tokens') === null")
    await _fits(browser, phone)
    await _shot(browser, phone, "console-team-editor-refused")
    await _sign_out(browser, phone)
    # the editor signs in again with the password
    await follow(
        browser,
        phone,
        f"document.querySelector('#user-login input[name=login]').value = {EDITOR!r};"
        f"document.querySelector('#user-login input[name=password]').value = {PASSWORD!r};"
        "document.querySelector('#user-login').submit()",
    )
    assert EDITOR in await _text(browser, phone, "#team-nav")
    await _sign_out(browser, phone)

    # the owner makes a write token; the API takes it; the owner revokes it; the API refuses it
    await _token_sign_in(browser, phone, console.token)
    await follow(browser, phone, "location.href = '/console/tokens'")
    await follow(
        browser,
        phone,
        "document.querySelector('#new-token-form input[name=name]').value = 'CI deploy';"
        "document.querySelector('#new-token-form select[name=scope]').value = 'write';"
        "document.querySelector('#new-token-form').submit()",
    )
    token = await _text(browser, phone, "#token-value")
    assert token.startswith("tc_")
    made = await api.client.get("/api/v1/feeds", headers=api.auth(token))
    assert made.status == 200
    assert f"https://{HOST}/feed.xml" in await made.text()  # the editor's feed, the tenant's
    await _shot(browser, phone, "console-team-token")
    await follow(
        browser,
        phone,
        "[...document.querySelectorAll('#tokens tbody tr')].find(r => r.cells[0].innerText === 'CI deploy')"
        ".querySelector('form[action$=\"/revoke\"]').submit()",
    )
    assert "revoked" in await _text(browser, phone, "#notice")
    assert "CI deploy" not in await _text(browser, phone, "#tokens")
    await _fits(browser, phone)
    await _shot(browser, phone, "console-team-revoked")
    api.clock.advance(TOKEN_CACHE_S + 0.1)  # past the API instance's cache of the token's answer
    refused = await api.client.get("/api/v1/feeds", headers=api.auth(token))
    assert refused.status == 401
    # the one error the browser logged is the editor's refused tokens page: 403, as it must be
    errors = _errors(browser)
    assert len(errors) == 1
    assert "status of 403" in errors[0]
    assert errors[0].endswith("/console/tokens")
