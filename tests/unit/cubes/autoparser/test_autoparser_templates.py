"""Host templates: learnt from a host's pages, shares per block, decay, bounds, the stored form."""

from __future__ import annotations

import pytest

from cubes.autoparser.segment import segment
from cubes.autoparser.templates import MAX_SIGNATURES, MIN_PAGES, WINDOW, HostTemplate
from tests.unit.cubes.autoparser.hard_pages import host_pages


def _learnt(n: int) -> HostTemplate:
    t = HostTemplate("ledger.example")
    for url, html, _ in host_pages(n):
        t.learn(segment(html), url)
    return t


def test_repeated_blocks_are_the_template_and_articles_are_not() -> None:
    t = _learnt(20)
    _url, html, paras = host_pages(21)[-1]
    page = segment(html)
    share, path_share = t.shares(page)
    by_text = dict(zip(page.texts, share, strict=True))
    assert by_text["Section 3"] == 1.0
    assert by_text[page.texts[-1]] == 1.0  # the footer
    assert all(by_text[p] < 0.1 for p in paras)  # each article is new
    # the article's paragraphs sit where every page has paragraphs: a stable slot, new text
    assert all(path_share[page.texts.index(p)] == 1.0 for p in paras)


def test_a_page_learnt_already_does_not_count_itself() -> None:
    t = _learnt(5)
    url, html, paras = host_pages(5)[2]
    page = segment(html)
    share, _ = t.shares(page, counted=True)
    assert share[page.texts.index(paras[0])] == 0.0
    assert share[page.texts.index("Section 0")] == 1.0
    assert not t.learn(page, url)  # the same URL again changes nothing
    assert t.pages == 5


def test_too_few_pages_say_nothing() -> None:
    t = _learnt(MIN_PAGES - 1)
    share, path_share = t.shares(segment(host_pages(1)[0][1]))
    assert set(share.tolist()) == {-1.0} == set(path_share.tolist())


def test_counts_decay_and_stay_bounded() -> None:
    t = _learnt(20)
    page = segment(host_pages(1)[0][1])
    for i in range(WINDOW):
        t.learn(page, f"https://ledger.example/again/{i}")
    assert t.pages < WINDOW
    assert len(t.text) <= MAX_SIGNATURES
    assert max(t.text.values()) <= t.pages


def test_stored_form_round_trips_and_refuses_garbage() -> None:
    t = _learnt(7)
    back = HostTemplate.from_bytes(t.host, t.to_bytes())
    assert (back.pages, back.text, back.paths, back.seen) == (t.pages, t.text, t.paths, t.seen)
    with pytest.raises(ValueError, match="not a host template"):
        HostTemplate.from_bytes("h", b"junk")
    with pytest.raises(ValueError, match="truncated"):
        HostTemplate.from_bytes("h", t.to_bytes()[:-3])
