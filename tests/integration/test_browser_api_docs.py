"""The API docs page in a real browser: who owns what on a site, and how the query counts are protected.

Headless Chromium (``test_browser_frontend.py`` drives it) opens ``/docs`` of the api cube on a phone:
the hosts section begins with the rights rule and the wordstat section with the counts' protection,
each as text a reader sees (escaped, nothing of it markup), the page fits the screen, runs no script
and fetches nothing. Screenshots: ``test-artifacts/browser/api-docs-phone-hosts.png`` and ``-wordstat.png``.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from cubes.api.openapi import COUNTS, OWNERSHIP
from tests.integration.test_browser_frontend import (
    ARTIFACTS,  # the browser fixture and the CDP helpers
    Cdp,
    _errors,
    _eval,
    _open,
    _requests,
    browser,  # noqa: F401 - a fixture, used by name
)
from tests.unit.cubes.api.apikit import ApiHarness

pytestmark = pytest.mark.browser


async def test_the_docs_say_who_owns_what_and_how_counts_are_protected_on_a_phone(
    tmp_path: Path,
    browser: Cdp,  # noqa: F811
) -> None:
    async with ApiHarness(tmp_path) as api:
        url = str(api.client.make_url("/docs"))
        session = await _open(browser, url, width=390, height=844, mobile=True)
        about = await _eval(
            browser, session, "Object.fromEntries([...document.querySelectorAll('h2[id]')].map("
            "h => [h.id, h.nextElementSibling.matches('p.about') ? h.nextElementSibling.innerText : '']))"
        )  # fmt: skip
        assert about["hosts"] == OWNERSHIP
        assert about["wordstat"] == COUNTS
        assert "<head>" in about["hosts"]  # shown as written, not taken for markup
        fits = await _eval(browser, session, "document.documentElement.scrollWidth <= window.innerWidth")
        assert fits, "the page is wider than the phone"
        assert await _eval(browser, session, "document.scripts.length") == 0
        assert all(u.startswith(url.rsplit("/docs", 1)[0]) for u in _requests(browser)), _requests(browser)
        assert _errors(browser) == []
        for name in ("hosts", "wordstat"):  # the page is long: each section's first screen
            await _eval(browser, session, f"document.getElementById('{name}').scrollIntoView()")
            shot = await browser.send("Page.captureScreenshot", {"format": "png"}, session)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / f"api-docs-phone-{name}.png").write_bytes(base64.b64decode(shot["data"]))
