"""The demo's pictures paint no text: a caption is the page's, said once, in any script."""

from __future__ import annotations

import io

from PIL import Image, ImageChops

from demo.content import build_site, draw_pictures


def test_no_picture_paints_its_caption_and_each_caption_is_said_once_on_its_page() -> None:
    """The captions were painted with Pillow's default font, which has no Cyrillic (the Russian demo's
    pictures showed boxes), and again under the picture by the page's <figcaption>. The caption was
    white text (255, 255, 255 at 92 %) on a dark band: without it no pixel is near white, since the
    shapes over the gradients are white at 10-27 % only."""
    pictures = draw_pictures()
    assert len(pictures) > 50
    for path, res in pictures.items():
        r, g, b = Image.open(io.BytesIO(res.body)).convert("RGB").split()
        # each pixel's least channel; at the lightest pixel
        lightest = ImageChops.darker(r, ImageChops.darker(g, b)).getextrema()[1]
        assert isinstance(lightest, int)
        assert lightest < 200, f"{path}: a near-white pixel (text?): {lightest}"
    site = build_site("http://127.0.0.1:1", pictures)
    russian = [r for p, r in site.resources.items() if p.startswith("/ru") and p.endswith(".html")]
    assert russian
    for res in russian:
        page = res.body.decode()
        for caption in _figcaptions(page):
            assert page.count(f"<figcaption>{caption}</figcaption>") == 1, caption


def _figcaptions(page: str) -> list[str]:
    out = []
    for chunk in page.split("<figcaption>")[1:]:
        out.append(chunk.split("</figcaption>", 1)[0])
    return out
