"""The console's fetch options and filters of a feed: set, shown without their secrets, kept, forgotten."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared.secretbox import SecretBox, new_key
from shared.webmaster.feed_options import FeedOptions, FullText, fetch_headers
from tests.unit.cubes.frontend.test_console import HOST, Env, console

PASSWORD, API_KEY = "console-pa55word", "console-api-key"


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    async with console(tmp_path, secrets={"key": new_key()}) as e:
        e.box = SecretBox.from_settings(e.settings)  # type: ignore[attr-defined]
        yield e


async def test_a_feeds_options_are_set_shown_without_secrets_kept_and_forgotten(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    r = await env.client.post(
        "/console/feeds", data={"url": f"https://{HOST}/feed.xml", "csrf": csrf}, allow_redirects=False
    )
    feed_path = r.headers["Location"]
    feed_id = feed_path.rsplit("/", 1)[1]
    form = {
        "csrf": csrf,
        "username": "bob",
        "password": PASSWORD,
        "headers": f"X-Api-Key: {API_KEY}",
        "timeout_s": "30",
        "drop_categories": "Ads, Sponsored",
        "keep_pattern": "",
    }
    saved = await env.client.post(f"{feed_path}/options", data=form, allow_redirects=False)
    assert saved.status == 303, await saved.text()
    page = await (await env.client.get(saved.headers["Location"])).text()
    assert "Fetch options saved." in page
    assert "signs in as bob" in page
    assert "kept: X-Api-Key" in page
    assert PASSWORD not in page
    assert API_KEY not in page
    stored = await env.stores.feeds.get(feed_id)
    assert stored is not None
    assert stored.secret is not None
    box: SecretBox = env.box  # type: ignore[attr-defined]
    assert fetch_headers(stored.secret, box)["X-Api-Key"] == API_KEY
    # the filters change with the password box left empty: the credentials stay
    again = {**form, "password": "", "headers": "", "drop_categories": "Ads"}
    assert (await env.client.post(f"{feed_path}/options", data=again, allow_redirects=False)).status == 303
    stored = await env.stores.feeds.get(feed_id)
    assert stored is not None
    assert stored.secret is not None
    kept = fetch_headers(stored.secret, box)
    assert kept["X-Api-Key"] == API_KEY
    assert kept["Authorization"].startswith("Basic ")
    assert '"drop_categories":["ads"]' in (stored.options or "")
    # a bad value is refused naming the field, and nothing changes
    bad = await env.client.post(f"{feed_path}/options", data={**again, "timeout_s": "forever"})
    assert bad.status == 422
    assert "options.timeout_s" in await bad.text()
    forget = {**again, "forget_credentials": "1"}
    assert (await env.client.post(f"{feed_path}/options", data=forget, allow_redirects=False)).status == 303
    stored = await env.stores.feeds.get(feed_id)
    assert stored is not None
    assert stored.secret is None


async def test_a_feeds_full_text_is_chosen_on_its_page_and_kept_by_the_other_settings(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    r = await env.client.post(
        "/console/feeds", data={"url": f"https://{HOST}/feed.xml", "csrf": csrf}, allow_redirects=False
    )
    feed_path = r.headers["Location"]
    feed_id = feed_path.rsplit("/", 1)[1]
    page = await (await env.client.get(feed_path)).text()
    assert "full text auto" in page
    assert '<option value="auto" selected>' in page
    saved = await env.client.post(f"{feed_path}/options", data={"csrf": csrf, "full_text": "never"})
    assert saved.status == 200  # the feed's page, after the redirect
    page = await saved.text()
    assert "full text never" in page
    assert '<option value="never" selected>' in page
    refused = await env.client.post(f"{feed_path}/options", data={"csrf": csrf, "full_text": "often"})
    assert refused.status == 422
    assert "options.full_text" in await refused.text()
    off = await env.client.post(f"{feed_path}/autoparser", data={"csrf": csrf, "on": "1"}, allow_redirects=False)
    assert off.status == 303
    stored = await env.stores.feeds.get(feed_id)
    assert stored is not None
    assert stored.autoparser is True
    assert FeedOptions.from_json(stored.options).full_text is FullText.never  # the switch keeps it
