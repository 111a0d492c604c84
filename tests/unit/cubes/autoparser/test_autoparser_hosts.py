"""Which image URLs a host's robots.txt forbids (hosts.py)."""

from __future__ import annotations

from cubes.autoparser.hosts import denied_images


def test_denied_images_with_protego() -> None:
    robots = b"User-agent: *\nDisallow: /images/\n"
    urls = ["https://example.com/images/a.jpg", "https://example.com/static/b.jpg"]
    assert denied_images(robots, urls, "TurbocubesBot") == ["https://example.com/images/a.jpg"]
