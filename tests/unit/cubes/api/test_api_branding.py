"""``/api/v1/hosts/{host}/branding``: set, shown, refused naming the field, and followed by the pages' re-render."""

from __future__ import annotations

from pathlib import Path

from shared.messages import BrandingChanged, CrawlRequest
from shared.webmaster.branding import logo_requester
from tests.unit.cubes.api.apikit import ApiHarness

HOST = "a.partner.test"


async def test_a_branding_is_kept_announced_and_its_logo_ordered(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant, token = await api.tenant(HOST)
        path = f"/api/v1/hosts/{HOST}/branding"
        empty = await (await api.client.get(path, headers=api.auth(token))).json()
        assert empty == {"host": HOST, "branding": None, "logo": {"status": "none"}}
        body = {"display_name": "Partner", "accent": "#0A7D3B", "logo_url": f"https://{HOST}/logo.png"}
        r = await api.client.put(path, json=body, headers=api.auth(token))
        assert r.status == 200, await r.text()
        shown = await r.json()
        assert shown["branding"] == {
            "display_name": "Partner",
            "accent": "#0a7d3b",
            "logo_url": f"https://{HOST}/logo.png",
        }
        assert shown["logo"] == {"status": "pending"}
        (changed,) = [o.message for o in api.published if o.topic == "hosts.branding"]
        assert isinstance(changed, BrandingChanged)
        assert (changed.host, changed.tenant_id, changed.changed_at) == (HOST, tenant, api.clock_now())
        (order,) = [o.message for o in api.published if o.topic == "crawl.requests"]
        assert isinstance(order, CrawlRequest)
        assert (order.url, order.requesters) == (f"https://{HOST}/logo.png", [logo_requester(tenant, HOST)])
        assert await api.stores.tenants.branding(tenant, HOST) is not None

        bad = await api.client.put(path, json={"accent": "red;}body{display:none"}, headers=api.auth(token))
        assert bad.status == 422
        assert [f["field"] for f in (await bad.json())["fields"]] == ["accent"]

        gone = await api.client.delete(path, headers=api.auth(token))
        assert gone.status == 204
        assert await api.stores.tenants.branding(tenant, HOST) is None
        assert len([o for o in api.published if o.topic == "hosts.branding"]) == 2


async def test_a_shops_cart_and_one_click_order_are_set_with_the_branding(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST)
        path = f"/api/v1/hosts/{HOST}/branding"
        shop = {"cart_url": f"https://{HOST}/cart?add={{offer_id}}", "order_email": "orders@a.partner.test"}
        r = await api.client.put(path, json={"shop": shop}, headers=api.auth(token))
        assert r.status == 200, await r.text()
        assert (await r.json())["branding"] == {"shop": shop}
        assert [o.topic for o in api.published] == ["hosts.branding"]  # its pages are rendered again
        elsewhere = {"shop": {"cart_url": "https://evil.example/cart?add={offer_id}", "order_phone": "nope"}}
        bad = await api.client.put(path, json=elsewhere, headers=api.auth(token))
        assert bad.status == 422
        assert [f["field"] for f in (await bad.json())["fields"]] == ["shop.cart_url", "shop.order_phone"]
        kept = await (await api.client.get(path, headers=api.auth(token))).json()
        assert kept["branding"] == {"shop": shop}  # a refused change keeps what was there
