"""A site's home page registered as a feed: the console names the feeds the page links and offers each."""

from __future__ import annotations

import re

from cubes.parser.feed import parse_feed
from cubes.parser.problems import to_problems
from shared.messages import FeedRegistration
from shared.problems import counts_by_code
from shared.stores import FetchReport
from tests.unit.cubes.frontend.test_console import HOST, T0, Env, env

__all__ = ["env"]  # the fixture, re-exported for pytest

HOME = (
    b"<!DOCTYPE html><html><head><title>Shop</title>"
    b'<link rel="alternate" type="application/rss+xml" title="News" href="/news.xml">'
    b'<link rel="alternate" type="application/atom+xml" href="/blog/atom.xml"></head><body><p>Hi<br></body></html>'
)


async def test_the_feeds_a_home_page_names_are_offered_and_one_press_adds_one(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    r = await env.client.post("/console/feeds", data={"url": f"https://{HOST}/", "csrf": csrf}, allow_redirects=False)
    assert r.status == 303, await r.text()
    feed_path = r.headers["Location"]
    feed_id = feed_path.rsplit("/", 1)[1]
    result = parse_feed(HOME, url=f"https://{HOST}/")  # what the parser reports of that fetch
    problems = tuple(to_problems(result.errors, feed=feed_id))
    await env.stores.problems.add_report(
        FetchReport(feed_id, T0, "parse_error", 200, 0, problems=problems, counts=counts_by_code(problems))
    )

    page = await (await env.client.get(feed_path)).text()
    assert "<code>feed.not_a_feed</code>" in page
    assert "this is an HTML page, not a feed; it names 2 feeds" in page
    offered = re.findall(r'name="url" value="([^"]+)"><button type="submit" class="">Add this feed', page)
    assert offered == [f"https://{HOST}/news.xml", f"https://{HOST}/blog/atom.xml"]
    assert page.count("Check it</button>") == 2

    env.published.clear()
    added = await env.client.post("/console/feeds", data={"url": offered[0], "csrf": csrf}, allow_redirects=False)
    assert added.status == 303
    (reg,) = [o.message for o in env.published if o.topic == "feeds.registry"]
    assert isinstance(reg, FeedRegistration)
    assert reg.url == f"https://{HOST}/news.xml"
