"""The demo's site for a newcomer to own: "Pond notes", verified in one click (docs/architecture.md section 8).

A newcomer walks the console with nothing but a browser: sign up, claim the demo site
(``http://127.0.0.1:PORT/``), press *Verify*, add ``/yours/feed.xml``, see its pages and its
problems. The demo registers none of this site's feeds itself (nobody else's pages are on it),
and it plays the part of the newcomer's own web server:

* **it publishes their verification token**: the home page's ``<head>`` carries a
  ``<meta name="turbocubes-verification">`` for every claim on the demo's host, and
  ``/.well-known/turbocubes-verify.txt`` answers the token of the newest claim not verified yet
  (a file holds one token; the meta tags serve any number of newcomers at once). ``owners`` are
  read from the store at each request (``DemoServer.owners``);
* **one of its posts has a picture missing** (``/yours/img/heron.png`` answers 404), so the
  newcomer sees a page held back and why; the site's page ``/yours/`` has a button that puts the
  picture at that very URL (and one that takes it away again), so they can fix it and watch
  *Fetch now* publish the page.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime
from html import escape

from lxml import etree

from demo.pictures import draw_picture

__all__ = ["FEED_PATH", "MISSING", "PAGE_PATH", "Yours", "meta_tags"]

PAGE_PATH = "/yours/"
FEED_PATH = "/yours/feed.xml"
#: the picture the feed names but the site does not have until the newcomer puts it back
MISSING = "/yours/img/heron.png"
_PICTURES = {"/yours/img/pond.png": "The pond at first light", MISSING: "A grey heron in the reeds"}
_POSTS = (
    ("first-light", "The pond at first light", "/yours/img/pond.png", "Mist lifts off the water by seven."),
    ("the-heron", "A heron comes back", MISSING, "The grey heron is back in the reeds, fishing at dawn."),
    ("no-pictures", "Notes without pictures", None, "Some days there is nothing to photograph, only to write."),
)
_DATE = datetime(2026, 11, 26, 8, 0, tzinfo=UTC)
#: the RSS content module: a post given in full
_CONTENT = "http://purl.org/rss/1.0/modules/content/"
_STYLE = (
    "body{font:17px/1.55 Georgia,serif;max-width:40rem;margin:2rem auto;padding:0 1rem}button{font:inherit}"
    "code{overflow-wrap:anywhere}"  # its long URLs wrap on a phone
)


def meta_tags(tokens: list[str]) -> str:
    """The verification tags of ``tokens`` (escaped: a token is our own, but an attribute is an attribute)."""
    return "".join(f'<meta name="turbocubes-verification" content="{escape(t)}">' for t in tokens)


class Yours:
    """The newcomer's site: its feed, its pictures, its page, and whether the missing picture is back."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.fixed = False
        self.pictures = {path: draw_picture(path, ext="png", size=(480, 270)) for path in _PICTURES}

    def feed(self) -> bytes:
        rss = etree.Element("rss", version="2.0", nsmap={"content": _CONTENT})
        channel = etree.SubElement(rss, "channel")
        for tag, text in (("title", "Pond notes"), ("link", self.base + PAGE_PATH), ("description", "A demo blog")):
            etree.SubElement(channel, tag).text = text
        for i, (slug, title, picture, text) in enumerate(_POSTS):
            item = etree.SubElement(channel, "item")
            etree.SubElement(item, "title").text = title
            etree.SubElement(item, "link").text = f"{self.base}/yours/{slug}.html"
            etree.SubElement(item, "guid").text = f"{self.base}/yours/{slug}.html"
            etree.SubElement(item, "pubDate").text = format_datetime(_DATE.replace(hour=8 + i))
            html = f"<p>{escape(text)}</p>"
            if picture:
                caption = _PICTURES[picture]
                html += (
                    f'<figure><img src="{escape(self.base + picture)}" alt="{escape(caption)}">'
                    f"<figcaption>{escape(caption)}</figcaption></figure>"
                )
            # the post in full (content:encoded): the demo's summary-only feed is the columns feed
            etree.SubElement(item, f"{{{_CONTENT}}}encoded").text = html
        return bytes(etree.tostring(rss, xml_declaration=True, encoding="utf-8"))

    def picture(self, path: str) -> bytes | None:
        """The picture at ``path``, or None (the missing one, until it is put back)."""
        if path == MISSING and not self.fixed:
            return None
        return self.pictures.get(path)

    def page(self) -> bytes:
        feed = escape(self.base + FEED_PATH)
        site = escape(self.base + "/")
        if self.fixed:
            state = (
                "<p><b>The heron's picture is back</b> at its address. "
                "Press <i>Fetch now</i> on the feed in the console.</p>"
            )
            button = '<form method="post" action="/yours/break"><button>Take the picture away again</button></form>'
        else:
            state = (
                f"<p><b>The heron's picture is missing</b>: <code>{escape(self.base + MISSING)}</code> answers 404, "
                "so that post's Turbo page is held back.</p>"
            )
            button = (
                '<form method="post" action="/yours/fix"><button>Put the picture back (same address)</button></form>'
            )
        body = (
            "<h1>Pond notes: your site in this demo</h1>"
            "<p>Pretend this blog is yours. In the webmaster console: sign up, claim "
            f"<code>{site}</code> and press <i>Verify now</i> (this site publishes your verification token "
            f"for you), then add the feed <code>{feed}</code>.</p>"
            f"{state}{button}"
        )
        return (
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pond notes</title>'
            f'<meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="data:,">'
            f"<style>{_STYLE}</style>"
            f"</head><body>{body}</body></html>"
        ).encode()
