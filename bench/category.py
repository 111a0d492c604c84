"""How fast a shop category's page reads its offers (``stores.shop``, ``cubes/frontend/category.py``).

    .venv/bin/python bench/category.py [--offers 10000] [--others 20000] [--store sqlite|postgresql://...]

A store holds one category of ``--offers`` offers of one shop (random prices, 8 vendors, 2 parameters of
a few values each) among ``--others`` offers of other categories and shops on the same host. Timed, the
median of 20 runs each: one page of 24 sorted by price (the first, the middle, the last), the same with a
vendor and a parameter filter, and the facets (every offer's vendor and parameters counted), and the
whole page as the frontend serves it through HTTP. Baseline in the same run: the same reads with the index
``pages_shop`` dropped (what migration 40 adds).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _page(i: int, category: str, shop: str, rng: random.Random):  # type: ignore[no-untyped-def]
    from shared.stores import Offer, Page

    return Page(
        url=f"https://shop.example/p/{category}/{shop}/{i}",
        host="shop.example",
        version=1,
        html="<p>offer</p>",
        doc_json=b"{}",
        title=f"Offer {i:05d}",
        shop=shop,
        offer=Offer(
            category=category,
            price=float(rng.randrange(100, 100_000)),
            vendor=f"Vendor {rng.randrange(8)}",
            params=(("Colour", rng.choice(["white", "black", "red"])), ("Size", rng.choice(["S", "M", "L", "XL"]))),
            price_text="1990",
            currency="RUR",
            picture=f"/cdn/{i}.jpg",
        ),
    )


async def _median(fn, runs: int = 20) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


async def _timings(stores, n: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    from shared.stores import OfferQuery, Sort

    last = (n // 24) * 24
    out = {}
    for name, q in (
        ("page 1, price_asc", OfferQuery("shop.example", "7", "tenant:a", Sort.price_asc)),
        ("middle page, price_desc", OfferQuery("shop.example", "7", "tenant:a", Sort.price_desc, offset=n // 2)),
        ("last page, by name", OfferQuery("shop.example", "7", "tenant:a", Sort.name, offset=last)),
        (
            "vendor + parameter filter",
            OfferQuery("shop.example", "7", "tenant:a", Sort.price_asc, ("Vendor 3",), (("Colour", "red"),)),
        ),
    ):
        out[name] = await _median(lambda q=q: stores.shop.offers(q))
    out["facets"] = await _median(lambda: stores.shop.facets("shop.example", "7", "tenant:a"))
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--offers", type=int, default=10_000)
    ap.add_argument("--others", type=int, default=20_000)
    ap.add_argument("--store", default="sqlite")
    args = ap.parse_args()
    from aiohttp.test_utils import TestClient, TestServer

    from cubes.frontend.app import create_app
    from shared.config import Settings
    from shared.stores import Page, open_stores

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/store.db" if args.store == "sqlite" else args.store
        stores = await open_stores(url)
        rng = random.Random(1)
        pages = [_page(i, "7", "tenant:a", rng) for i in range(args.offers)]
        pages += [_page(i, str(8 + i % 50), "tenant:a", rng) for i in range(args.others // 2)]
        pages += [_page(i, "7", "tenant:b", rng) for i in range(args.others // 2)]
        for at in range(0, len(pages), 1000):
            await stores.pages.upsert_many(pages[at : at + 1000])
        listing = Page(
            url="https://shop.example/?turbo_category=7",
            host="shop.example",
            version=1,
            doc_json=b'{"title": "Category 7", "extra": {"turbo:category": "7"}}',
            title="Category 7",
            shop="tenant:a",
        )
        await stores.pages.upsert(listing)
        raw = getattr(stores.pages, "_db", None)
        assert raw is not None
        if not url.startswith("sqlite"):  # what autovacuum does for a table that took 30,000 rows: the
            await raw.execute("VACUUM ANALYZE pages")  # planner's statistics, the visibility map
        print(f"{args.offers:,} offers in the category, {args.others:,} others on the host ({url.split(':')[0]})")
        indexed = await _timings(stores, args.offers)
        client = TestClient(TestServer(create_app(Settings().replace(store={"url": url}), stores)))
        await client.start_server()
        path = "/turbo/shop/shop.example/category/7?sort=price_asc&page=200"

        async def http() -> None:
            r = await client.get(path)
            assert r.status == 200, r.status
            await r.read()

        served = await _median(http)
        await client.close()
        if url.startswith("sqlite"):
            await raw.write(lambda conn: conn.execute("DROP INDEX pages_shop"))
        else:
            await raw.execute("DROP INDEX pages_shop")
        bare = await _timings(stores, args.offers)
        await stores.close()
    print(f"{'read (median of 20)':32} {'with pages_shop':>16} {'without (baseline)':>20}")
    for name, ms in indexed.items():
        print(f"{name:32} {ms:13.2f} ms {bare[name]:17.2f} ms")
    print(f"{'page 200 through HTTP':32} {served:13.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
