"""Where an embedded player's video lives on its own site (the Turbo vocabulary; docs/architecture.md s.3).

A page shows an allowlisted player in a sandboxed iframe; when the player cannot
load (a reader's network blocks the host, a page saved for later, no network
at all) the iframe is an empty box. So every embed carries, under it, a title
and a "watch on <site>" link to the video's page on the player's own site:
the page still says what was there and how to reach it.

The four players Turbo supports map their embed URL to the watch page
(``youtube.com/embed/ID`` -> ``youtube.com/watch?v=ID`` ...). Any other
allowlisted host (``kvwriter.video_hosts`` is configurable) links to the
player URL itself, which a browser opens full-page.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, quote, urlsplit

__all__ = ["brand", "site_name", "watch_url"]

#: host prefixes that name a service's player or mobile site, not the site a reader knows
_SUBDOMAINS = ("www.", "m.", "player.")
_YOUTUBE = re.compile(r"/embed/([\w-]{6,})")
_VIMEO = re.compile(r"/video/(\d+)")
_RUTUBE = re.compile(r"/play/embed/([\w-]+)")
_VK_ID = re.compile(r"-?\d+")
#: how readers call the players' sites (the default title: "Video on YouTube")
_BRANDS = {
    "youtube.com": "YouTube",
    "youtube-nocookie.com": "YouTube",
    "vimeo.com": "Vimeo",
    "rutube.ru": "Rutube",
    "vk.com": "VK",
    "vkvideo.ru": "VK",
}


def site_name(host: str) -> str:
    """The site a reader knows a player host by: ``player.vimeo.com`` -> ``vimeo.com``."""
    host = host.lower()
    for prefix in _SUBDOMAINS:
        if host.startswith(prefix) and host.count(".") > 1:
            return host[len(prefix) :]
    return host


def brand(host: str) -> str:
    """The name of a player's site (``www.youtube.com`` -> ``YouTube``), its host when unknown."""
    site = site_name(host)
    return _BRANDS.get(site, site)


def watch_url(src: str) -> str:
    """The video's own page for the player URL ``src`` (an https URL of an allowed host)."""
    parts = urlsplit(src)
    host = (parts.hostname or "").lower()
    site = site_name(host)
    if site in ("youtube.com", "youtube-nocookie.com") and (m := _YOUTUBE.match(parts.path)):
        return f"https://www.youtube.com/watch?v={m.group(1)}"
    if site == "vimeo.com" and (m := _VIMEO.match(parts.path)):
        return f"https://vimeo.com/{m.group(1)}"
    if site == "rutube.ru" and (m := _RUTUBE.match(parts.path)):
        return f"https://rutube.ru/video/{m.group(1)}/"
    if site in ("vk.com", "vkvideo.ru") and parts.path == "/video_ext.php":
        query = parse_qs(parts.query)
        oid, vid = (query.get("oid") or [""])[0], (query.get("id") or [""])[0]
        if _VK_ID.fullmatch(oid) and _VK_ID.fullmatch(vid):
            return f"https://{site}/video{quote(oid)}_{quote(vid)}"
    return src
