"""The console's view of the searches that showed a host's pages (and privacy: only searches many people made).

Only the signed-in tenant's own verified host; a query that showed the host's pages
fewer times than the privacy threshold (5) is never named nor counted (a count of them
told a webmaster whether a guessed query had been searched); another host's searches
never appear. Counted through the real store, the numbers shown rounded.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

from cubes.wordstat.handler import counted
from shared.messages import SearchQueryEvent
from shared.stores.wordstat import Privacy
from tests.unit.cubes.frontend.test_console import HOST, T0, Env, env

__all__ = ["env"]  # the fixture, re-exported for pytest

OTHER = "b.partner.test"
TWO_MONTHS_AGO = datetime(2026, 4, 10, tzinfo=UTC)


async def _count(e: Env, query: str, n: int, hosts: list[str], at: datetime = T0) -> None:
    """``n`` searches that showed pages of ``hosts`` at their default origin (https, as a bare claim's)."""
    origins = [f"https://{h}" for h in hosts]
    events = [
        SearchQueryEvent(event_id=uuid.uuid4().hex, query=query, at=at, hosts=hosts, origins=origins) for _ in range(n)
    ]
    await e.stores.wordstat.count([counted(x) for x in events], now=T0, privacy=Privacy(threshold=5))


def _rows(body: str) -> list[tuple[str, str]]:
    table = body.split('id="searches"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<td><a href="/wordstat\?q=[^"]+">([^<]+)</a></td><td class=num>([^<]+)</td>', table)


async def _searched(e: Env) -> None:
    await _count(e, "купить слона", 10, [HOST, OTHER])
    await _count(e, "слон", 5, [HOST])
    await _count(e, "редкий запрос", 4, [HOST])  # under the threshold: never named nor counted
    await _count(e, "чужой запрос", 15, [OTHER])  # another host's
    await _count(e, "старый запрос", 6, [HOST], at=TWO_MONTHS_AGO)


async def test_a_verified_hosts_page_lists_its_searches_above_the_threshold_only(env: Env) -> None:
    await _searched(env)
    _, token = await env.tenant()
    await env.sign_in(token)
    body = await (await env.client.get(f"/console/hosts/{HOST}")).text()
    assert _rows(body) == [("купить слона", "10"), ("слон", "5")]
    assert "редкий запрос" not in body
    assert "чужой запрос" not in body
    assert "старый запрос" not in body  # two months ago: not this month
    assert 'id="searches-hidden"' not in body  # the rare query is not even counted
    assert "fewer than about 5 times are not listed nor counted" in body
    three = await (await env.client.get(f"/console/hosts/{HOST}?months=3")).text()
    assert _rows(three) == [("купить слона", "10"), ("старый запрос", "5"), ("слон", "5")]  # 6 shown as 5
    # a period the page does not offer is this month's
    assert _rows(await (await env.client.get(f"/console/hosts/{HOST}?months=7")).text()) == _rows(body)


async def test_an_unverified_host_shows_no_search(env: Env) -> None:
    await _searched(env)
    _, token = await env.tenant(verified=False)
    await env.sign_in(token)
    body = await (await env.client.get(f"/console/hosts/{HOST}")).text()
    assert 'id="searches-locked"' in body
    assert 'id="searches"' not in body
    assert "купить слона" not in body


async def test_another_tenant_never_sees_a_hosts_searches(env: Env) -> None:
    await _searched(env)
    await env.tenant()  # the owner of HOST
    _, token = await env.tenant(OTHER)  # verified owner of OTHER only
    await env.sign_in(token)
    mine = await (await env.client.get(f"/console/hosts/{OTHER}")).text()
    assert _rows(mine) == [("чужой запрос", "15"), ("купить слона", "10")]
    theirs = await env.client.get(f"/console/hosts/{HOST}")
    assert theirs.status == 404
    assert "слон" not in await theirs.text()
