"""Site grouping: no site on both sides of a fold."""

from __future__ import annotations

import pytest

from cubes.autoparser.corpus import Sample
from cubes.autoparser.sites import grouped_folds, site_label, site_of


def _te(key: str) -> Sample:
    return Sample(name=f"te:{key[-12:]}", html=b"", url=key if "://" in key else "", key=key)


def test_site_names() -> None:
    assert site_label("www.heise.de") == "heise"
    assert site_label("news.bbc.co.uk") == "bbc"
    assert site_label("elfaro.com.pa") == "elfaro"
    assert site_label("a.wordpress.com") == site_label("b.wordpress.com") == "wordpress"
    assert site_of(Sample(name="mr:nytimes-3", html=b"")) == site_of(Sample(name="mr:nytimes-1", html=b"")) == "nytimes"
    assert site_of(Sample(name="mr:heise", html=b"")) == site_of(_te("https://www.heise.de/x")) == "heise"
    assert site_of(_te("https://web.archive.org/web/20160526181643/http://ordnungsrausch.com/a/")) == "ordnungsrausch"
    assert site_of(_te("hard::nationnews.com-schools.html")) == site_of(_te("hard::nationnews.com-tridents.html"))
    assert site_of(_te("hard::iwr.de.IWR-Pressedienst.html")) == "iwr"
    assert site_of(Sample(name="pair:d/1", html=b"", url="https://www.ledger.example/a")) == "ledger"


def test_folds_keep_sites_together_and_balance() -> None:
    samples = [Sample(name=f"mr:big-{i}", html=b"") for i in range(6)]
    samples += [Sample(name=f"mr:site{i}", html=b"") for i in range(14)]
    folds = grouped_folds(samples, 4)
    big = {folds[i] for i in range(6)}
    assert len(big) == 1  # the six pages of "big" share one fold
    sizes = [folds.count(f) for f in range(4)]
    assert sorted(sizes) == [4, 5, 5, 6]
    assert grouped_folds(samples, 4) == folds  # deterministic
    with pytest.raises(ValueError, match="at least 2 folds"):
        grouped_folds(samples, 1)
