"""The smaller copies of an image the pages' ``srcset`` offers (``shared.images.variants``; docs/architecture.md section
2, cdn).

Pillow resizes (Lanczos, the aspect kept, never up) and encodes WebP at quality
80 -- at 480 and 960 pixels a third of a JPEG's bytes for the same look. Runs
in a worker thread: a 1,200-pixel image is ~30-60 ms of CPU. The body was
checked first (``checks.py``: a real image, its pixel count bounded), so a
decompression bomb never reaches here.
"""

from __future__ import annotations

import io

from PIL import Image, ImageOps

__all__ = ["WEBP_QUALITY", "resized"]

#: WebP quality of the copies: photographs look the same as the original at a phone's size
WEBP_QUALITY = 80


def resized(data: bytes, widths: tuple[int, ...]) -> list[tuple[int, bytes]]:
    """``(width, WebP bytes)`` of ``data`` scaled to each of ``widths`` (those below its own width)."""
    with Image.open(io.BytesIO(data)) as img:
        img.load()
        picture = ImageOps.exif_transpose(img)  # a phone photo's rotation, applied: the copy is upright
        if picture.mode not in ("RGB", "RGBA"):
            picture = picture.convert("RGBA" if "transparency" in picture.info or picture.mode == "LA" else "RGB")
        out = []
        for width in sorted(widths):
            if width >= picture.width:
                continue
            height = max(1, round(picture.height * width / picture.width))
            copy = picture.resize((width, height), Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            copy.save(buf, "WEBP", quality=WEBP_QUALITY, method=4)
            out.append((width, buf.getvalue()))
        return out
