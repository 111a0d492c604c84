"""Self-labelling by text alignment."""

from __future__ import annotations

from cubes.autoparser.label import BODY, BOILERPLATE, label_blocks, label_by_snippets
from cubes.autoparser.label import TITLE as TITLE_LABEL
from cubes.autoparser.segment import segment
from tests.unit.cubes.autoparser.autoparser_pages import PARAGRAPHS, TITLE, article_page


def test_blocks_of_a_page_with_a_known_reference() -> None:
    page = segment(article_page())
    reference = "\n".join(PARAGRAPHS)
    labels = label_blocks(page.texts, reference, TITLE)
    by_text = dict(zip(page.texts, labels, strict=True))
    for p in PARAGRAPHS:
        assert by_text[p] == BODY
    assert by_text[TITLE] == TITLE_LABEL
    assert by_text["Copyright 2024 Example News. All rights reserved."] == BOILERPLATE
    assert by_text["Section 3"] == BOILERPLATE
    assert by_text["Share on Twitter Email"] == BOILERPLATE
    assert int((labels == BODY).sum()) == len(PARAGRAPHS)


def test_short_block_needs_a_body_neighbour() -> None:
    texts = ["Bridges", "Home", "Menu", "a long first paragraph about bridges and rivers", "Bridges", "Footer"]
    labels = label_blocks(texts, "a long first paragraph about bridges and rivers Bridges")
    # the first "Bridges" is in the reference too, but 3 blocks away from any body block
    assert [int(v) for v in labels] == [BOILERPLATE, BOILERPLATE, BOILERPLATE, BODY, BODY, BOILERPLATE]


def test_snippet_labels_leave_unknown_blocks_at_weight_zero() -> None:
    texts = ["Menu item", "The main text says something long enough to be a paragraph.", "Read more here"]
    labels, weights = label_by_snippets(texts, ["says something long"], ["Read more"])
    assert labels[1] == BODY
    assert weights[1] == 1.0
    assert labels[2] == BOILERPLATE
    assert weights[2] == 1.0
    assert weights[0] == 0.0
