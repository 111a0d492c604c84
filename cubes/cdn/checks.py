"""Is this body really an image (or a video) we may serve? Decided by its bytes (docs/architecture.md section 2, cdn).

The ``Content-Type`` a partner sends is not trusted: an HTML error page sent
as ``image/jpeg`` must never reach the CDN. Images are opened with Pillow
*lazily* — ``Image.open`` reads only the header — so the pixel count is checked
before anything is decoded, and a decompression bomb (a tiny PNG that
inflates to gigabytes) is refused without being inflated. ``verify()`` then
walks the file's structure (chunk CRCs for PNG, markers for JPEG) without
decoding pixels, which catches truncated and corrupt files cheaply.

Allowed: JPEG, PNG, GIF, WebP, AVIF (when this Pillow reads it); videos MP4 and
WebM by their magic bytes. SVG is refused: it is a document that can carry
scripts, not a picture.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from enum import StrEnum

from PIL import Image, UnidentifiedImageError

__all__ = ["Checked", "Refusal", "check_media"]

#: Pillow format -> (mime, file extension)
_IMAGE_FORMATS: dict[str, tuple[str, str]] = {
    "JPEG": ("image/jpeg", "jpg"),
    "PNG": ("image/png", "png"),
    "GIF": ("image/gif", "gif"),
    "WEBP": ("image/webp", "webp"),
    "AVIF": ("image/avif", "avif"),
}
#: ISO-BMFF brands (bytes 8..12 after "ftyp") that are still images, not videos
_IMAGE_BRANDS = {b"avif", b"avis", b"heic", b"heix", b"heim", b"heis", b"mif1", b"msf1"}
#: a WebM file declares its DocType within the EBML header, in the first few dozen bytes
_EBML_MAGIC = b"\x1a\x45\xdf\xa3"
_EBML_HEAD = 64


class Refusal(StrEnum):
    """Why a body is refused; the value is the ``reason`` in ``media.cached``."""

    not_an_image = "not_an_image"
    unsupported_format = "unsupported_format"
    corrupt = "corrupt"
    too_large = "too_large"
    too_many_pixels = "too_many_pixels"
    empty = "empty"


@dataclass(frozen=True, slots=True)
class Checked:
    """The verdict: either ``refusal`` is set, or mime/ext (and for images the size) are."""

    refusal: Refusal | None = None
    mime: str = ""
    ext: str = ""
    width: int | None = None
    height: int | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.refusal is None


def _video(body: bytes) -> Checked | None:
    if len(body) >= 12 and body[4:8] == b"ftyp" and body[8:12] not in _IMAGE_BRANDS:
        return Checked(mime="video/mp4", ext="mp4")
    if body.startswith(_EBML_MAGIC) and b"webm" in body[:_EBML_HEAD]:
        return Checked(mime="video/webm", ext="webm")
    return None


def _image(body: bytes, max_pixels: int) -> Checked:
    try:
        # Pillow warns at MAX_IMAGE_PIXELS and raises at twice that; both mean "bomb" here,
        # whatever the global warning filters say
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(body)) as im:  # lazy: reads the header only
                fmt = im.format or ""
                width, height = im.size
                if fmt not in _IMAGE_FORMATS:
                    return Checked(Refusal.unsupported_format, detail=f"format {fmt or 'unknown'}")
                if width * height > max_pixels:
                    return Checked(Refusal.too_many_pixels, detail=f"{width}x{height} over {max_pixels} pixels")
                im.verify()  # structure and checksums, without decoding pixels
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        return Checked(Refusal.too_many_pixels, detail=str(exc)[:200])
    except UnidentifiedImageError:
        return Checked(Refusal.not_an_image, detail="no known image signature")
    except (OSError, SyntaxError, ValueError, EOFError) as exc:  # what Pillow raises for broken files
        return Checked(Refusal.corrupt, detail=str(exc)[:200])
    mime, ext = _IMAGE_FORMATS[fmt]
    return Checked(mime=mime, ext=ext, width=width, height=height)


def check_media(body: bytes, *, max_bytes: int, max_pixels: int, allow_video: bool) -> Checked:
    """The verdict on ``body``. Videos are accepted only when ``allow_video`` (a video order)."""
    if not body:
        return Checked(Refusal.empty, detail="empty body")
    if len(body) > max_bytes:
        return Checked(Refusal.too_large, detail=f"{len(body)} bytes over {max_bytes}")
    if allow_video and (video := _video(body)) is not None:
        return video
    verdict = _image(body, max_pixels)
    if verdict.refusal == Refusal.not_an_image and not allow_video and _video(body) is not None:
        return Checked(Refusal.unsupported_format, detail="a video where an image was ordered")
    return verdict
