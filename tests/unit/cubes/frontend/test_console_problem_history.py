"""A feed's problems over time in the console and the API: new, ongoing, resolved, and new again."""

from __future__ import annotations

import re
from datetime import timedelta

from cubes.api.fetches import occurrence_json
from shared.problems import problem
from shared.stores import FetchReport
from tests.unit.cubes.frontend.test_console import HOST, T0, Env, env

__all__ = ["env"]  # the fixture, re-exported for pytest


def _states(page: str) -> list[tuple[str, str]]:
    table = page.split('id="occurrences"', 1)[1].split("</table>", 1)[0]
    return re.findall(
        r"<code>([a-z_.]+)</code></td>\s*<td data-label=\"State\"><span class=\"\w+\">(\w+)</span>", table
    )


async def test_a_broken_image_is_new_then_ongoing_then_resolved_and_new_again(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    r = await env.client.post(
        "/console/feeds", data={"url": f"https://{HOST}/feed.xml", "csrf": csrf}, allow_redirects=False
    )
    path = r.headers["Location"]
    feed_id = path.rsplit("/", 1)[1]
    lost = problem("image.not_found", "image https://a.partner.test/i.png answered 404", feed=feed_id)

    async def fetched(minutes: int, *problems: object) -> list[tuple[str, str]]:
        kept = tuple(problems)
        counts = {p.code: 1 for p in kept}  # type: ignore[attr-defined]
        report = FetchReport(feed_id, T0 + timedelta(minutes=minutes), "parsed", 200, 1, problems=kept, counts=counts)  # type: ignore[arg-type]
        await env.stores.problems.add_report(report)
        return _states(await (await env.client.get(path)).text())

    assert "No problem found by any fetch yet." in await (await env.client.get(path)).text()
    assert await fetched(0, lost) == [("image.not_found", "new")]
    assert await fetched(5, lost) == [("image.not_found", "ongoing")]
    assert await fetched(10) == [("image.not_found", "resolved")]
    assert await fetched(15, lost) == [("image.not_found", "new"), ("image.not_found", "resolved")]
    [first, *_] = await env.stores.problems.history(feed_id)
    assert occurrence_json(first)["severity"] == "error"


async def test_another_tenant_cannot_read_the_history(env: Env) -> None:
    _, a_token = await env.tenant()
    csrf = await env.sign_in(a_token)
    r = await env.client.post(
        "/console/feeds", data={"url": f"https://{HOST}/feed.xml", "csrf": csrf}, allow_redirects=False
    )
    path = r.headers["Location"]
    await env.stores.problems.add_report(
        FetchReport(path.rsplit("/", 1)[1], T0, "parse_error", 200, 0, counts={"xml.malformed": 1})
    )
    _, b_token = await env.tenant("b.partner.test")
    await env.sign_in(b_token)
    resp = await env.client.get(path)
    assert resp.status == 404
    assert "xml.malformed" not in await resp.text()
