"""Embedded players: each video host only at its player paths (shared/pages/players.py).

An allowlisted host is not an allowlisted page: ``vk.com/away.php?to=...`` is an open redirect on
an allowlisted host, and framing it framed whatever it pointed to. Every spelling a browser reads
as another path of the host is tried here, through the sanitizer as a partner's HTML reaches it.
"""

from __future__ import annotations

import pytest

from cubes.frontend.app import turbo_csp
from shared.config import KvwriterConfig, Settings
from shared.pages.players import Players
from shared.pages.safehtml import MediaRule, SafeHtml

DEFAULT = Players(KvwriterConfig().video_hosts)

#: (src, the player URL kept, or None: the iframe is dropped)
CASES = [
    ("https://vk.com/away.php?to=https%3A%2F%2Fevil.test%2F", None),
    ("https://vk.com/video_ext.php?oid=-1&id=2", "https://vk.com/video_ext.php?oid=-1&id=2"),
    ("https://vk.com/video_ext.php/../away.php?to=x", None),
    ("https://vk.com/video_ext.php%2F..%2F..%2Faway.php", None),
    ("https://vk.com/video_ext.phpx", None),
    ("https://VK.COM./video_ext.php?id=1", "https://vk.com/video_ext.php?id=1"),
    ("https://vk.com/", None),
    ("https://vkvideo.ru/away.php?to=x", None),
    ("https://www.youtube.com/embed/abc", "https://www.youtube.com/embed/abc"),
    ("//www.youtube.com/embed/abc?t=1", "https://www.youtube.com/embed/abc?t=1"),
    ("http://www.youtube.com/embed/abc", "https://www.youtube.com/embed/abc"),
    ("https://www.youtube.com/embed/../redirect?q=https://evil.test", None),
    ("https://www.youtube.com/embed/%2e%2e/redirect?q=x", None),
    ("https://www.youtube.com/embed\\..\\redirect?q=x", None),
    ("https://www.youtube.com/embed", None),
    ("https://www.youtube.com/watch?v=abc", None),
    ("https://www.youtube.com:8443/embed/abc", None),
    ("https://user@www.youtube.com/embed/abc", None),
    ("https://www.youtube.com.evil.test/embed/abc", None),
    ("https://player.vimeo.com/video/1", "https://player.vimeo.com/video/1"),
    ("https://player.vimeo.com/api/oauth", None),
    ("https://rutube.ru/play/embed/abc", "https://rutube.ru/play/embed/abc"),
    ("https://rutube.ru/api/redirect", None),
    ("javascript:alert(1)//www.youtube.com/embed/x", None),
]


@pytest.mark.parametrize(("src", "kept"), CASES)
def test_a_player_is_framed_only_at_its_player_path(src: str, kept: str | None) -> None:
    assert DEFAULT.player_url(src) == kept
    out = SafeHtml(media=MediaRule.source).clean(f'<p>x</p><iframe src="{src}"></iframe>', base_url="https://a.test/")
    if kept is None:
        assert "<iframe" not in out, out
    else:
        assert f'src="{kept.replace("&", "&amp;")}"' in out, out


def test_an_entry_is_a_prefix_a_path_or_a_whole_host() -> None:
    players = Players(["video.example", "p.example/exact.php", "q.example/under/"])
    assert players.player_url("https://video.example/any/thing") == "https://video.example/any/thing"
    assert players.player_url("https://p.example/exact.php?x=1") == "https://p.example/exact.php?x=1"
    assert players.player_url("https://p.example/exact.php/more") is None
    assert players.player_url("https://q.example/under/x") == "https://q.example/under/x"
    assert players.player_url("https://q.example/under") is None
    assert players.player_url("https://q.example/underneath") is None


def test_the_page_policy_names_the_same_player_paths() -> None:
    csp = turbo_csp(Settings())
    frame_src = next(d for d in csp.split("; ") if d.startswith("frame-src"))
    assert frame_src == (
        "frame-src https://www.youtube.com/embed/ https://www.youtube-nocookie.com/embed/ "
        "https://player.vimeo.com/video/ https://rutube.ru/play/embed/ https://vk.com/video_ext.php "
        "https://vkvideo.ru/video_ext.php"
    )
    assert "frame-src 'none'" in turbo_csp(Settings().replace(kvwriter={"video_hosts": []}))
