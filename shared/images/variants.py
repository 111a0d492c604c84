"""Smaller copies of an image in the CDN, for ``srcset`` (docs/architecture.md
s.2).

The rule both sides follow, written once: the cdn cube makes the copies when it
stores an image, the kvwriter lists them in the page's ``srcset``. A phone of
390 CSS pixels at 2x needs ~780 pixels of width, not the 2,400 of a camera, so
a page offers the browser ``VARIANT_WIDTHS`` smaller copies (WebP, a third of
the bytes of a JPEG of the same look at these sizes) and the original, and the
browser takes the smallest that fills its box.

A copy lives beside the original, its key the original's with its width:
``img/ab/<sha256>.jpg`` -> ``img/ab/<sha256>.w480.webp``. Only images wider
than a copy get it (never an upscale), and only the formats a copy can stand
for (not GIF: its animation would be lost). The registry records the widths
made (``ImageRecord.variants``), so an image stored before copies existed is
never offered copies it does not have.
"""

from __future__ import annotations

__all__ = ["COPYABLE", "VARIANT_WIDTHS", "srcset", "variant_key", "variant_url", "widths_for"]

#: the widths of the copies, in pixels: a phone at 1x / 1.25x, and at 2x-2.5x
VARIANT_WIDTHS = (480, 960)
#: mime types a WebP copy may stand for
COPYABLE = frozenset({"image/jpeg", "image/png", "image/webp"})


def widths_for(width: int | None, mime: str | None) -> tuple[int, ...]:
    """The copies an image of ``width`` pixels gets (none for a small one, or one of another format)."""
    if not width or mime not in COPYABLE:
        return ()
    return tuple(w for w in VARIANT_WIDTHS if w < width)


def _swap(path: str, width: int) -> str:
    stem, dot, _ = path.rpartition(".")
    return f"{stem if dot else path}.w{width}.webp"


def variant_key(key: str, width: int) -> str:
    """The CDN key of the ``width``-pixel copy of the image stored under ``key``."""
    return _swap(key, width)


def variant_url(cdn_url: str, width: int) -> str:
    """The public URL of the ``width``-pixel copy of the image at ``cdn_url`` (the same path rule)."""
    return _swap(cdn_url, width)


def srcset(cdn_url: str, width: int, variants: tuple[int, ...]) -> str:
    """``srcset`` of an image: its copies and itself, each with its width (``url 480w, ...``)."""
    parts = [f"{variant_url(cdn_url, w)} {w}w" for w in sorted(variants) if w < width]
    parts.append(f"{cdn_url} {width}w")
    return ", ".join(parts)
