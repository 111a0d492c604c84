"""Which embedded players a page may frame: a video host and its player paths (docs/architecture.md section 10).

An allowlisted host is not an allowlisted page: ``vk.com`` serves its player at
``/video_ext.php`` and an open redirect at ``/away.php?to=...``; framing the whole host would let a
partner frame any page the redirect reaches. So each entry of ``kvwriter.video_hosts`` is a host
and the path of its player: ``www.youtube.com/embed/`` (a path ending in ``/`` is a prefix:
everything under it), ``vk.com/video_ext.php`` (one path exactly). A bare host (``video.example``)
allows every path of it -- the operator's choice for a player of its own.

The path is checked on the URL's canonical form (``shared.urls.canonical_url``: dot segments
removed, ``%2e`` decoded, ``\\`` read as ``/`` as browsers do), so ``/embed/../away.php`` is
``/away.php`` here too. The frontend's Content-Security-Policy names the same sources
(``frame-src https://www.youtube.com/embed/ ...``), so a browser enforces the paths a second time.

One owner for the rule: the sanitizer (``shared.pages.safehtml``), the parser's Turbo blocks and the
frontend's policy all ask a ``Players``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from shared.urls import canonical_url

__all__ = ["Players"]


@dataclass(frozen=True, slots=True)
class _Entry:
    host: str
    #: "" allows every path; "/x/" every path under it; "/x.php" that path only
    path: str

    def allows(self, path: str) -> bool:
        if not self.path:
            return True
        return path.startswith(self.path) if self.path.endswith("/") else path == self.path


def _entry(text: str) -> _Entry:
    text = text.strip().lower().removeprefix("https://").removeprefix("http://")
    host, slash, path = text.partition("/")
    return _Entry(host, slash + path if slash else "")


class Players:
    """The players of ``kvwriter.video_hosts``: ``host`` or ``host/path`` entries (see the module docstring)."""

    def __init__(self, entries: Iterable[str]) -> None:
        self._entries = tuple(_entry(e) for e in entries if e.strip())
        self.hosts = frozenset(e.host for e in self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def allows(self, host: str, path: str) -> bool:
        """True when the player at ``path`` of ``host`` (a canonical URL's parts) may be framed."""
        return any(e.host == host and e.allows(path) for e in self._entries)

    def player_url(self, value: str) -> str | None:
        """The https URL of an allowed player ``value`` (``//host/...`` too), canonical; else None."""
        value = value.strip()
        try:
            url = canonical_url("https:" + value if value.startswith("//") else value)
        except ValueError:
            return None
        rest = url.partition("://")[2]
        authority, _, path_query = rest.partition("/")
        if ":" in authority.rpartition("]")[2]:  # a port of its own: no player of ours is there
            return None
        path = "/" + path_query.partition("?")[0]
        if not self.allows(authority, path):
            return None
        return "https://" + rest

    def csp_sources(self) -> str:
        """The ``frame-src`` sources: each entry as an https source expression, paths included."""
        return " ".join(f"https://{e.host}{e.path}" for e in self._entries) or "'none'"
