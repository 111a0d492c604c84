"""cubes.cdn.checks: the body decides what a file is, never its Content-Type."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image

from cubes.cdn.checks import Refusal, check_media

MAX_BYTES = 1024 * 1024
MAX_PIXELS = 50_000_000


def image_bytes(fmt: str, size: tuple[int, int] = (8, 6)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buf, fmt)
    return buf.getvalue()


def png_header_only(width: int, height: int) -> bytes:
    """A PNG that *claims* width x height: a decompression bomb is refused from this header alone."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    idat = zlib.compress(b"\x00" * 64)
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
        + struct.pack(">I", len(idat))
        + b"IDAT"
        + idat
        + struct.pack(">I", zlib.crc32(b"IDAT" + idat))
    )


@pytest.mark.parametrize(
    ("fmt", "mime", "ext"),
    [
        ("JPEG", "image/jpeg", "jpg"),
        ("PNG", "image/png", "png"),
        ("GIF", "image/gif", "gif"),
        ("WEBP", "image/webp", "webp"),
    ],
)
def test_real_images_pass_with_their_mime_and_size(fmt: str, mime: str, ext: str) -> None:
    verdict = check_media(image_bytes(fmt), max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=False)
    assert verdict.ok
    assert (verdict.mime, verdict.ext, verdict.width, verdict.height) == (mime, ext, 8, 6)


def test_html_that_claims_to_be_a_jpeg_is_not_an_image() -> None:
    html = b"<!doctype html><html><body><h1>404 Not Found</h1></body></html>"
    verdict = check_media(html, max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=False)
    assert verdict.refusal == Refusal.not_an_image


def test_svg_is_refused() -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    assert check_media(svg, max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=False).refusal == (
        Refusal.not_an_image
    )


def test_decompression_bomb_is_refused_from_its_header() -> None:
    bomb = png_header_only(100_000, 100_000)  # 10^10 pixels: Pillow's own bomb error
    assert len(bomb) < 200
    verdict = check_media(bomb, max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=False)
    assert verdict.refusal == Refusal.too_many_pixels


def test_over_the_configured_pixels_is_refused_below_pillows_own_limit() -> None:
    verdict = check_media(png_header_only(8000, 8000), max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=False)
    assert verdict.refusal == Refusal.too_many_pixels
    small_limit = check_media(image_bytes("PNG", (100, 100)), max_bytes=MAX_BYTES, max_pixels=9_999, allow_video=False)
    assert small_limit.refusal == Refusal.too_many_pixels


def test_truncated_png_is_corrupt() -> None:
    png = image_bytes("PNG", (64, 64))
    verdict = check_media(png[: len(png) // 2], max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=False)
    assert verdict.refusal == Refusal.corrupt


def test_too_large_and_empty() -> None:
    big = image_bytes("PNG")
    assert check_media(big, max_bytes=10, max_pixels=MAX_PIXELS, allow_video=False).refusal == Refusal.too_large
    assert check_media(b"", max_bytes=10, max_pixels=MAX_PIXELS, allow_video=False).refusal == Refusal.empty


MP4 = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2" + b"\x00" * 64
WEBM = b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x84webm" + b"\x00" * 64


@pytest.mark.parametrize(("body", "mime"), [(MP4, "video/mp4"), (WEBM, "video/webm")])
def test_videos_by_magic_bytes_only_when_a_video_was_ordered(body: bytes, mime: str) -> None:
    as_video = check_media(body, max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=True)
    assert as_video.ok
    assert as_video.mime == mime
    as_image = check_media(body, max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=False)
    assert as_image.refusal == Refusal.unsupported_format


def test_a_poster_image_passes_a_video_order() -> None:
    verdict = check_media(image_bytes("JPEG"), max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=True)
    assert verdict.mime == "image/jpeg"


def test_avif_brand_is_not_taken_for_a_video() -> None:
    fake_avif = b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1" + b"\x00" * 32
    verdict = check_media(fake_avif, max_bytes=MAX_BYTES, max_pixels=MAX_PIXELS, allow_video=True)
    assert verdict.mime != "video/mp4"
