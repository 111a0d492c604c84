"""Pictures for the demo site, drawn with Pillow at start (docs/architecture.md section 8, ``up --demo``).

Each picture is a soft two-colour gradient with a few translucent shapes.
Everything is derived from the picture's name through a seeded
``random.Random`` (string seeds are hashed with SHA-512, independent of
``PYTHONHASHSEED``), so two starts draw the same bytes and the CDN never sees a
"changed" image.

No text is painted in them: the caption is the page's ``<figcaption>`` (and the
image's ``alt``), said once. Captions painted with Pillow's default font showed
boxes for Cyrillic (it has no Cyrillic glyphs) and repeated the caption under the
picture.
"""

from __future__ import annotations

import io
import random

from PIL import Image, ImageDraw, ImageOps

__all__ = ["MIME", "PALETTES", "draw_picture"]

MIME = {"jpg": "image/jpeg", "png": "image/png"}

#: pairs of colours that make calm gradients
PALETTES: tuple[tuple[str, str], ...] = (
    ("#1d3557", "#457b9d"),
    ("#264653", "#2a9d8f"),
    ("#6d597a", "#e56b6f"),
    ("#355070", "#b56576"),
    ("#283618", "#606c38"),
    ("#3d405b", "#81b29a"),
    ("#7f5539", "#b08968"),
    ("#22577a", "#38a3a5"),
    ("#5f0f40", "#9a031e"),
    ("#0b525b", "#144552"),
)
#: JPEG quality: gradients compress to a few KB at this setting with no visible banding
_JPEG_QUALITY = 78
#: PNGs are quantized to this many colours: a palette PNG of a gradient is a few KB, a truecolour one ~100 KB
_PNG_COLOURS = 48


def draw_picture(name: str, *, ext: str = "jpg", size: tuple[int, int] = (480, 270)) -> bytes:
    """The bytes of the picture ``name`` (same name -> same bytes)."""
    if ext not in MIME:
        raise ValueError(f"unsupported picture type {ext!r} (valid: {', '.join(MIME)})")
    rng = random.Random(f"turbocubes-demo:{name}")
    width, height = size
    start, end = rng.choice(PALETTES)
    gradient = Image.linear_gradient("L").rotate(rng.choice((0, 45, 90, 135, 180)), expand=False)
    base = ImageOps.colorize(gradient.resize(size), start, end).convert("RGBA")

    shapes = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(shapes)
    for _ in range(rng.randint(3, 6)):
        r = rng.randint(height // 8, height // 2)
        x, y = rng.randint(0, width), rng.randint(0, height)
        colour = (255, 255, 255, rng.randint(25, 70))
        if rng.random() < 0.6:
            draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)
        else:
            draw.rounded_rectangle((x - r, y - r // 2, x + r, y + r // 2), radius=r // 4, fill=colour)
    picture = Image.alpha_composite(base, shapes).convert("RGB")

    out = io.BytesIO()
    if ext == "jpg":
        picture.save(out, "JPEG", quality=_JPEG_QUALITY)
    else:
        picture.quantize(colors=_PNG_COLOURS, method=Image.Quantize.MEDIANCUT).save(out, "PNG")
    return out.getvalue()
