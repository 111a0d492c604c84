"""Media benchmark: the media cube's fast path, and the cdn cube into SeaweedFS vs raw boto3.

1. **media**: documents/s through ``MediaHandler.handle`` when every image is cached
   already (registry look-up + the rewrite), 5 images per document, on the
   embedded SQLite store; one document at a time and 8 in flight (the runtime's
   default key-lanes). *Cold*: every image distinct, so every document queries
   SQLite (batched across the documents in flight). *Warm*: the documents share
   2,000 images, which the handler's ok-cache answers. Target: >= 2,000 documents/s.
2. **cdn**: images/s through ``CdnHandler.handle`` (byte checks with Pillow, sha256,
   the existence check, the S3 put, the registry write) into SeaweedFS, against a
   plain boto3 ``put_object`` loop of the same bytes on the same server in the same
   run (the baseline). Both sequential, then both with 8 in flight. The ratio
   cdn / boto3 is printed; target >= 50 %. Skipped, saying so, without an S3 URL.
3. **S3 data plane**: the same bytes through ``S3BlobStore.put`` (aiohttp on the loop,
   ``shared/blobs/sigv4.py``) against the boto3 ``put_object`` loop, same run: CPU per PUT (every
   thread of this process) and its ratio; target: a small fraction of ``put_object``'s.

    python bench/media.py [--docs 4000] [--images 300] [--s3 s3://bucket?endpoint=...]

The S3 URL defaults to ``TURBOCUBES_TEST_S3`` (``ops/s3/start`` prints it).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from PIL import Image

from cubes.cdn.handler import CdnHandler
from cubes.media.handler import MediaHandler
from shared.blobs.file import FileBlobStore
from shared.blobs.s3 import open_s3
from shared.clock import SystemClock
from shared.config import Settings
from shared.messages import CrawlKind, CrawlResult, Document, FetchStatus, SourceKind, SourceRef
from shared.runtime.cube import Context
from shared.stores import open_stores

T0 = datetime(2026, 3, 1, tzinfo=UTC)
IMAGES_PER_DOC = 5
IN_FLIGHT = 8


def say(text: str) -> None:
    print(text, flush=True)


async def run_all(
    items: Sequence[object], fn: Callable[[object], Awaitable[object]], in_flight: int
) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) to push every item through ``fn``, ``in_flight`` at once.

    CPU time counts every thread of this process (SQLite's and boto3's too); on a shared,
    loaded machine it is the steadier figure: items / CPU second.
    """
    queue = list(items)
    queue.reverse()

    async def worker() -> None:
        while queue:
            await fn(queue.pop())

    c0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return time.perf_counter() - t0, time.process_time() - c0


def rates(n: int, wall: float, cpu: float, what: str) -> str:
    return f"{n / wall:,.0f} {what}/s ({wall:.2f} s wall; {n / max(cpu, 1e-9):,.0f} {what} per CPU-second)"


# --------------------------------------------------------------------------- media


def make_doc(i: int, image_urls: list[str]) -> Document:
    html = "".join(
        f"<p>Paragraph {k} of document {i}, with some <b>text</b> around the picture.</p>"
        f'<figure><img src="{u}" alt="picture {k}"><figcaption>caption {k}</figcaption></figure>'
        for k, u in enumerate(image_urls)
    )
    return Document(
        url=f"https://news.bench/{i}",
        host="news.bench",
        source=SourceRef(kind=SourceKind.rss, id="bench"),
        title=f"Document {i}",
        content_html=html,
        content_hash=f"h{i}",
        version=1,
        seen_at=T0,
        parsed_at=T0,
    )


async def bench_media(docs: int) -> None:
    say(f"== media: {docs} documents x {IMAGES_PER_DOC} images, all cached, SQLite store")
    with tempfile.TemporaryDirectory(prefix="bench-media-") as tmp:
        stores = await open_stores(f"sqlite:///{tmp}/store.db")
        try:
            distinct = [f"https://img.bench/d/{k}.jpg" for k in range(docs * IMAGES_PER_DOC)]
            shared = [f"https://img.bench/s/{k}.jpg" for k in range(2000)]
            t0 = time.perf_counter()
            for k, url in enumerate(distinct + shared):
                await stores.images.record_ok(url, cdn_url=f"/cdn/img/{k % 256:02x}/{k}.jpg", now=T0)
            say(f"   {len(distinct) + len(shared)} images recorded in the registry ({time.perf_counter() - t0:.1f} s)")
            rnd = random.Random(6)
            cold = [make_doc(i, distinct[i * IMAGES_PER_DOC : (i + 1) * IMAGES_PER_DOC]) for i in range(docs)]
            warm = [make_doc(i, rnd.sample(shared, IMAGES_PER_DOC)) for i in range(docs)]
            ctx = Context("documents.parsed", 0, 0, None, 1, T0)

            def runner(handler: MediaHandler) -> Callable[[object], Awaitable[object]]:
                async def one(doc: object) -> object:
                    out = await handler.handle(doc, ctx)  # type: ignore[arg-type]
                    assert len(out) == 1
                    assert out[0].topic == "documents.ready"
                    return out

                return one

            say("   cold: every image distinct and new to the handler: each document queries SQLite")
            for in_flight in (1, IN_FLIGHT):
                handler = MediaHandler(Settings(), stores.images, stores.delay, SystemClock())
                wall, cpu = await run_all(cold, runner(handler), in_flight)
                say(f"     in flight {in_flight}: {rates(docs, wall, cpu, 'documents')}")
            say("   warm: 2,000 images shared by all documents (a host's recurring pictures)")
            handler = MediaHandler(Settings(), stores.images, stores.delay, SystemClock())
            await run_all(warm, runner(handler), IN_FLIGHT)  # fills the ok-cache
            for in_flight in (1, IN_FLIGHT):
                wall, cpu = await run_all(warm, runner(handler), in_flight)
                say(f"     in flight {in_flight}: {rates(docs, wall, cpu, 'documents')}")
        finally:
            await stores.close()
    say("   target: >= 2,000 documents/s")


# --------------------------------------------------------------------------- cdn


def make_images(n: int) -> list[bytes]:
    """Distinct JPEGs of ~30-60 KB (noise does not compress: realistic photo sizes)."""
    rnd = random.Random(7)
    out = []
    for _ in range(n):
        im = Image.frombytes("RGB", (240, 160), rnd.randbytes(240 * 160 * 3))
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=80)
        out.append(buf.getvalue())
    return out


def crawl_result(i: int, body: bytes) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.image,
        url=f"https://img.bench/{i}.jpg",
        host="img.bench",
        status=FetchStatus.ok,
        http_status=200,
        content_type="image/jpeg",
        body=body,
        size=len(body),
        fetched_at=T0,
    )


async def through_cdn(handler: CdnHandler, msg: object) -> object:
    out = await handler.handle(msg, Context("crawl.images", 0, 0, None, 1, T0))  # type: ignore[arg-type]
    assert out[0].message.status == "ok"  # type: ignore[attr-defined]
    return out


async def store_put(store: object, item: object) -> object:
    assert isinstance(item, tuple)
    key, body = item
    return await store.put(key, body, content_type="image/jpeg")  # type: ignore[attr-defined]


async def bench_cdn(s3_url: str, n: int) -> None:
    import boto3
    from botocore.config import Config

    endpoint = parse_qs(urlsplit(s3_url).query)["endpoint"][0]
    say(f"== cdn: {n} distinct JPEGs into SeaweedFS at {endpoint}")
    images = make_images(n)
    say(f"   made {n} images, {sum(map(len, images)) / n / 1024:.0f} KB on average")
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "turbocubes"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "turbocubes"),
        config=Config(
            s3={"addressing_style": "path"},
            max_pool_connections=32,
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        ),
    )
    # to_thread's default pool (cpu + 4 threads) would throttle the baseline below 8 in flight
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=32))
    with tempfile.TemporaryDirectory(prefix="bench-cdn-") as tmp:
        stores = await open_stores(f"sqlite:///{tmp}/store.db")
        try:
            for in_flight in (1, IN_FLIGHT):
                run = uuid.uuid4().hex[:8]
                direct_bucket, cdn_bucket = f"bench-direct-{run}", f"bench-cdn-{run}"
                client.create_bucket(Bucket=direct_bucket)

                async def direct(item: object, bucket: str = direct_bucket) -> object:
                    assert isinstance(item, tuple)
                    key, body = item
                    return await asyncio.to_thread(
                        client.put_object,
                        Bucket=bucket,
                        Key=key,
                        Body=body,
                        ContentType="image/jpeg",
                    )

                cdn = await open_s3(f"s3://{cdn_bucket}?endpoint={endpoint}")
                blobs = FileBlobStore("file://b", Path(tmp) / "b")
                handler = CdnHandler(Settings(), stores.images, cdn, blobs, SystemClock())
                messages = [crawl_result(i + in_flight * n, body) for i, body in enumerate(images)]
                # the baseline runs before AND after the handler (new keys each time) and its
                # better pass counts: the ratio never flatters the handler with a cold server
                before = await run_all([(f"a/{i}.jpg", b) for i, b in enumerate(images)], direct, in_flight)
                cdn_wall, cdn_cpu = await run_all(messages, partial(through_cdn, handler), in_flight)
                after = await run_all([(f"b/{i}.jpg", b) for i, b in enumerate(images)], direct, in_flight)
                base_wall, base_cpu = min(before, after)
                plane_wall, plane_cpu = await run_all(
                    [(f"c/{i}.jpg", b) for i, b in enumerate(images)], partial(store_put, cdn), in_flight
                )
                # every bucket is a SeaweedFS collection with volumes of its own: leave none behind
                await cdn.destroy()
                await cdn.close()
                direct_store = await open_s3(f"s3://{direct_bucket}?endpoint={endpoint}")
                await direct_store.destroy()
                await direct_store.close()
                say(f"   in flight {in_flight}:")
                say(f"     boto3 put_object loop (best of before/after): {rates(n, base_wall, base_cpu, 'images')}")
                say(f"     cdn handler:                                  {rates(n, cdn_wall, cdn_cpu, 'images')}")
                say(f"     ratio cdn / boto3: {base_wall / cdn_wall:.0%}")
                say(f"     S3BlobStore.put (aiohttp data plane):        {rates(n, plane_wall, plane_cpu, 'images')}")
                say(
                    f"     CPU per PUT: data plane {plane_cpu / n * 1e3:.2f} ms, boto3 put_object "
                    f"{base_cpu / n * 1e3:.2f} ms: ratio {plane_cpu / max(base_cpu, 1e-9):.0%} "
                    f"(load average {os.getloadavg()[0]:.1f})"
                )
        finally:
            await stores.close()
            client.close()
    say("   targets: cdn >= 50 % of the direct boto3 loop; the data plane's CPU per PUT a small fraction of boto3's")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=4000)
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--s3", default=os.environ.get("TURBOCUBES_TEST_S3", ""))
    args = parser.parse_args()
    await bench_media(args.docs)
    if args.s3:
        await bench_cdn(args.s3, args.images)
    else:
        say("== cdn: SKIPPED: no S3 URL (run ops/s3/start and set TURBOCUBES_TEST_S3, or pass --s3)")


if __name__ == "__main__":
    asyncio.run(main())
