"""Which site a sample comes from, and folds that never split a site (docs/architecture.md section 3, autoparser).

A page-level split lets the model meet a site's template in training and
then be "validated" on another page of the same site, which is an easy page. Every
figure we trust is measured on sites the model never saw. ``site_of`` names the site:

* ``te:`` pages: the host of their URL, or of the archived URL inside a
  ``web.archive.org/web/<time>/<url>`` one, or the name after ``hard::`` / ``recall::``
  (upstream's keys for pages without a URL);
* ``mr:`` pages: the test-page name without its ``-N`` suffix (``nytimes-1`` .. ``-5`` are
  one site, ``wikipedia`` .. ``wikipedia-4`` another);
* ``pair:`` pages: the host of their URL, else their directory.

Hosts are cut to their *site label*: the label before the public suffix (``www.heise.de``
and ``heise`` are one site, as are two ``*.wordpress.com`` blogs, which share a platform's
templates: grouping them is the stricter choice).

``grouped_folds`` deals the sites into ``k`` folds, biggest first, each into the fold with
the fewest pages so far (ties: the lower fold number): deterministic, balanced, no seed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from cubes.autoparser.corpus import Sample

__all__ = ["grouped_folds", "site_label", "site_of"]

_ARCHIVE = re.compile(r"^https?://web\.archive\.org/web/[^/]+/(.+)$")
#: second-level labels that are part of a country's public suffix (``co.uk``, ``com.pa``)
_SECOND_LEVEL = frozenset({"co", "com", "net", "org", "gov", "ac", "edu", "gob", "or", "ne"})
_NUMBERED = re.compile(r"-\d+$")


def site_label(host: str) -> str:
    """``www.news.example.co.uk`` -> ``example``: the label just before the public suffix."""
    labels = [p for p in host.lower().strip(".").split(".") if p]
    if len(labels) <= 1:
        return labels[0] if labels else ""
    if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2:
        return labels[-3]
    return labels[-2]


def _host_site(url: str) -> str:
    m = _ARCHIVE.match(url)
    if m:
        inner = m.group(1)
        url = inner if "://" in inner else "http://" + inner
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    return site_label(host)


def site_of(sample: Sample) -> str:
    source, _, rest = sample.name.partition(":")
    if source == "mr":
        return _NUMBERED.sub("", rest)
    if source == "te":
        key = sample.key or sample.url
        if "::" in key:  # "hard::jamaicaobserver.com-attacks.html": the name starts with the site
            return key.split("::", 1)[1].split(".", 1)[0].lower()
        return _host_site(key) or rest
    return _host_site(sample.url) if sample.url else rest.rsplit("/", 1)[0]


def grouped_folds(samples: Sequence[Sample], k: int) -> list[int]:
    """The fold (0 .. k-1) of every sample; all pages of a site share one fold."""
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, not {k}")
    by_site: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        by_site.setdefault(site_of(s), []).append(i)
    sizes = [0] * k
    fold = [0] * len(samples)
    for _site, members in sorted(by_site.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        f = min(range(k), key=lambda j: (sizes[j], j))
        sizes[f] += len(members)
        for i in members:
            fold[i] = f
    return fold
