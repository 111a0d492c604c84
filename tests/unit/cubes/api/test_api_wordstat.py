"""GET /api/v1/wordstat and GET /api/v1/hosts/{host}/queries: frequencies and a host's queries, private."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

from cubes.wordstat.handler import counted
from shared.messages import Device, SearchQueryEvent
from shared.stores.wordstat import Privacy
from tests.unit.cubes.api.apikit import ApiHarness


def searches(h: ApiHarness, query: str, n: int, **fields: object) -> list[SearchQueryEvent]:
    at = h.clock.now()
    return [
        SearchQueryEvent(event_id=uuid.uuid4().hex, query=query, at=at, **fields)  # type: ignore[arg-type]
        for _ in range(n)
    ]


async def test_frequency_with_operators_and_privacy(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as h:
        _, token = await h.tenant()
        batch = searches(h, "купить слона", 10, device=Device.mobile) + searches(h, "куплю слонов", 2)
        await h.stores.wordstat.count([counted(e) for e in batch], now=datetime.now(UTC), privacy=Privacy(5))
        r = await h.client.get("/api/v1/wordstat", params={"q": "купить слона"}, headers=h.auth(token))
        assert r.status == 200
        body = await r.json()
        assert body["query"] == "купить слона"
        assert body["total"] == {"count": 10, "display": "10"}  # the 2 of "куплю слонов" are in no count
        assert len(body["months"]) == 24
        assert body["months"][-1]["count"] == 10
        assert {d["device"]: d["count"] for d in body["devices"]} == {"mobile": 10}
        assert [s["query"] for s in body["similar"]] == ["купить слона"]
        r = await h.client.get("/api/v1/wordstat", params={"q": '"!куплю слонов"'}, headers=h.auth(token))
        assert (await r.json())["total"] == {"count": None, "display": "< 5"}
        r = await h.client.get("/api/v1/wordstat", params={"q": "[купить"}, headers=h.auth(token))
        assert r.status == 422
        assert "expected ']'" in (await r.json())["message"]
        r = await h.client.get("/api/v1/wordstat", params={"q": "слон", "months": "25"}, headers=h.auth(token))
        assert r.status == 422
        assert (await h.client.get("/api/v1/wordstat", params={"q": "слон"})).status == 401


async def test_a_webmaster_sees_the_queries_that_showed_their_own_host(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as h:
        _, token = await h.tenant("a.partner.test")
        _, other = await h.tenant("b.partner.test")
        batch = (
            searches(h, "мосты москвы", 10, origins=["https://a.partner.test", "https://b.partner.test"])
            + searches(h, "мост", 5, origins=["https://a.partner.test"])
            + searches(h, "редкий запрос", 1, origins=["https://a.partner.test"])
            + searches(h, "другой порт", 9, origins=["http://a.partner.test:8080"])  # another origin of the host
        )
        await h.stores.wordstat.count([counted(e) for e in batch], now=datetime.now(UTC), privacy=Privacy(5))
        r = await h.client.get("/api/v1/hosts/a.partner.test/queries", headers=h.auth(token))
        assert r.status == 200
        body = await r.json()
        assert body["queries"] == [{"query": "мосты москвы", "impressions": 10}, {"query": "мост", "impressions": 5}]
        assert body["hidden"] == 0  # searched once: never listed, nor counted
        assert body["origin"] == "https://a.partner.test"  # the right's origin: not the host's other ports
        r = await h.client.get("/api/v1/hosts/a.partner.test/queries", headers=h.auth(other))
        assert r.status == 403  # another tenant's host
