"""The frontend's own pages escape every value that comes from data (``html/``, ``shared/pages/templates.py``).

Search results, the home page and error pages were Python strings with a hand ``escape()`` around
each value; as templates they rely on autoescape and on the ``marked`` filter, which escapes every
piece of a highlighted title or passage. Each field here carries markup an attacker would send.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from cubes.frontend.search import results_page, search_params
from cubes.frontend.templates import error_page, home_page
from shared.pages.templates import marked
from shared.search.request import Cursor, Hit
from shared.search.snippets import Snippet
from shared.stores import SearchHit

EVIL = "<script>alert(1)</script>\"'&"
SAFE = "&lt;script&gt;alert(1)&lt;/script&gt;"
T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def _no_markup_of_theirs(page: str) -> None:
    assert "<script" not in page
    assert not re.search(r"<[a-z]+[^>]*\son\w+=", page)  # no event handler attribute anywhere
    assert SAFE in page


def test_the_marked_filter_escapes_every_piece_and_marks_only_the_matches() -> None:
    text = f"a {EVIL} rocket <b>"
    start = text.index("rocket")
    out = marked(Snippet(text, ((2, 10), (start, start + 6))))
    assert out == "a <mark>&lt;script&gt;</mark>alert(1)&lt;/script&gt;&quot;&#x27;&amp; <mark>rocket</mark> &lt;b&gt;"
    assert marked(EVIL) == EVIL  # plain text is left to the template, which escapes it when printed


def test_search_results_escape_the_query_filters_hits_and_suggestion() -> None:
    params = search_params({"q": EVIL, "host": EVIL, "from": EVIL, "type": EVIL}, max_query=300)
    hit = Hit(
        url=f"https://news.example/?q={EVIL}",
        host=EVIL,
        title=Snippet(f"Title {EVIL}", ((0, 5),)),
        snippet=Snippet(f"passage {EVIL}", ((0, 7),)),
        score=1.0,
        published_at=T0,
        written_at=T0,
        kind=None,
    )
    page = results_page(params, [hit], Cursor(1, 1.0, EVIL), suggestion=EVIL)
    _no_markup_of_theirs(page)
    assert "<mark>Title</mark> " + SAFE in page
    assert "<mark>passage</mark> " + SAFE in page
    assert f'value="{SAFE}&#34;&#39;&amp;"' in page  # the query in the search box, quotes and all
    assert "Did you mean" in page
    assert "More results" in page
    assert 'href="/turbo?url=https%3A%2F%2Fnews.example%2F%3Fq%3D%3Cscript%3E' in page


def test_home_and_error_pages_escape_titles_hosts_and_the_original_url() -> None:
    recent = [SearchHit(url=f"https://news.example/{EVIL}", host=EVIL, title=EVIL, snippet=EVIL, rank=1.0)]
    _no_markup_of_theirs(home_page(pages=1, feeds=1, parked=0, recent=recent))
    page = error_page(404, EVIL, EVIL, url=f"https://news.example/{EVIL}")
    _no_markup_of_theirs(page)
    assert 'href="https://news.example/&lt;script&gt;' in page
    assert "The original is still there" not in error_page(404, "x", "y", url="javascript:alert(1)")
