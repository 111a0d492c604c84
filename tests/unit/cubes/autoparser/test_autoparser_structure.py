"""The structural fixes without a model: <br> splits, tables kept whole, repeats dropped."""

from __future__ import annotations

import numpy as np

from cubes.autoparser.segment import segment
from cubes.autoparser.structure import complete_families, drop_comments, drop_repeats, keep_tables
from tests.unit.cubes.autoparser.hard_pages import (
    ARTICLE,
    BYLINE,
    CAPTION,
    COMMENT_POLICY,
    COMMENTS,
    POST,
    POST_TITLE,
    TABLE_ROWS,
    TABLE_TEXT,
    byline_merged_page,
    caption_page,
    comment_thread_page,
    table_page,
)

STANDFIRST = "The council met again on Monday evening and decided to postpone the vote on the budget."


def test_a_story_merged_with_its_byline_is_split_into_paragraphs() -> None:
    page = segment(byline_merged_page())
    i = page.texts.index(BYLINE)  # the byline is a block of its own ...
    assert page.texts[i + 1 : i + 1 + len(ARTICLE)] == ARTICLE  # ... and so is every paragraph
    assert all(page.split[i : i + 1 + len(ARTICLE)])
    assert page.link_chars[i] == len(BYLINE)  # the byline's link stays with the byline
    assert page.link_chars[i + 1] == 0


def test_lines_of_one_paragraph_stay_together() -> None:
    page = segment("<html><body><p>Town Journal<br>12 Market Square<br>4021 Riverton</p></body></html>")
    assert page.texts == ["Town Journal 12 Market Square 4021 Riverton"]
    assert page.split == [False]


def test_a_data_table_inside_the_article_is_kept_whole() -> None:
    page = segment(table_page())
    body = np.array([t in TABLE_TEXT or t == TABLE_ROWS[0][1] for t in page.texts])  # one cell kept
    tables = keep_tables(page, body)
    kept = {page.texts[i] for i in np.flatnonzero(body)}
    assert {c for row in TABLE_ROWS for c in row} <= kept
    assert {"Place", "Name", "Club", "Time"} <= kept
    assert sum(1 for v in tables.values() if v is not None) == 1


def test_a_data_table_inside_the_article_is_kept_when_the_model_dropped_every_cell() -> None:
    # an article that is mostly a data table lost all its cells once (the guard did not see it either)
    page = segment(table_page())
    body = np.array([t in TABLE_TEXT for t in page.texts])
    tables = keep_tables(page, body)
    assert sum(1 for v in tables.values() if v is not None) == 1
    assert {c for row in TABLE_ROWS for c in row} <= {page.texts[i] for i in np.flatnonzero(body)}


def test_a_table_of_links_the_model_dropped_stays_dropped() -> None:
    links = table_page()
    for _, name, _, _ in TABLE_ROWS:
        links = links.replace(f"<td>{name}</td>", f"<td><a href='/runners/{name[:3]}'>{name}</a></td>")
    for club in ("Riverton AC", "Harbour Runners", "Millbank"):
        links = links.replace(f"<td>{club}</td>", f"<td><a href='/clubs'>{club}</a></td>")
    page = segment(links)
    body = np.array([t in TABLE_TEXT for t in page.texts])
    assert keep_tables(page, body) == {}
    assert not any(body[i] for i, t in enumerate(page.texts) if t == TABLE_ROWS[0][1])


def test_layout_tables_are_not_data_tables() -> None:
    inner = "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>"
    html = f"<html><body><p>{ARTICLE[0]}</p><table id='layout'><tr><td>menu</td><td>{inner}</td></tr></table>"
    page = segment(html + f"<p>{ARTICLE[1]}</p></body></html>")
    body = np.array([t != "menu" for t in page.texts])
    kept = [v.get("id") for v in keep_tables(page, body).values() if v is not None]
    assert kept == [None]  # the inner data table, never the layout table around it
    assert not body[page.texts.index("menu")]


def test_a_caption_repeated_three_times_is_kept_once() -> None:
    page = segment(caption_page())
    body = np.array([t == CAPTION or t in ARTICLE for t in page.texts])
    assert sum(1 for i in np.flatnonzero(body) if page.texts[i] == CAPTION) == 3
    assert drop_repeats(page, body) == 2
    assert [page.texts[i] for i in np.flatnonzero(body)] == [CAPTION, *ARTICLE]


def test_a_paragraph_after_a_photo_is_no_caption_even_when_it_repeats_one() -> None:
    # a page of images with the same paragraph between them (Readability's test page keeps each)
    para = ARTICLE[0]  # two sentences, 202 characters: a paragraph, not a caption line
    assert len(para) > 200
    photos = "".join(
        f'<h2>Photo {i}</h2><img src="/img/{i}.jpg" width="800" height="500"><p>{para}</p>' for i in range(3)
    )
    page = segment(f"<html><body><article><p>{para}</p>{photos}</article></body></html>")
    body = np.ones(page.n, dtype=bool)
    assert drop_repeats(page, body) == 0
    assert sum(1 for i in np.flatnonzero(body) if page.texts[i] == para) == 4


def test_a_comment_thread_under_the_post_is_dropped_from_the_body() -> None:
    page = segment(comment_thread_page())
    # the model's worst reading: every block body but the title, the thread's "Reply" links too
    body = np.array([t != POST_TITLE for t in page.texts])
    title = page.texts.index(POST_TITLE)
    assert drop_comments(page, body, title) > 2 * len(COMMENTS)
    kept = [page.texts[i] for i in np.flatnonzero(body)]
    i = kept.index(POST[0])
    assert kept[i : i + len(POST)] == POST
    assert kept[-1].startswith("Town Journal, 12 Market Square")  # the footer is no comment: only the thread goes
    assert not [t for t in kept if t in COMMENTS or t.startswith(("Reader ", "Reply")) or t == COMMENT_POLICY]


def test_a_post_inside_a_comment_class_and_a_thread_left_alone_when_it_is_all_there_is() -> None:
    paras = "".join(f"<p>{p}</p>" for p in POST)
    # a theme that classes the whole post "has-comments": the post holds the first body block
    page = segment(f"<html><body><article class='post has-comments'><h1>{POST_TITLE}</h1>{paras}</article></body>")
    body = np.array([t in POST for t in page.texts])
    assert drop_comments(page, body, page.texts.index(POST_TITLE)) == 0
    assert body.sum() == len(POST)
    # a page that is only a thread (the post under 200 characters of text): nothing is dropped
    page = segment(
        "<html><body><p>Short note.</p><ol class='comments'>"
        + "".join(f"<li class='comment'><p>{c}</p></li>" for c in COMMENTS[:3])
        + "</ol></body></html>"
    )
    body = np.ones(page.n, dtype=bool)
    assert drop_comments(page, body) == 0
    assert body.all()


def test_a_paragraph_the_model_dropped_inside_the_article_is_body_again() -> None:
    paras = "".join(f"<p>{p}</p>" for p in ARTICLE)
    teasers = "".join(f"<p><a href='/story/{i}'>Another story {i} about the town this week</a></p>" for i in range(3))
    page = segment(f"<html><body><div class='story'>{paras}</div><div class='more'>{teasers}</div></body></html>")
    body = np.array([t in ARTICLE and t != ARTICLE[2] for t in page.texts])  # the third paragraph dropped
    assert complete_families(page, body) == 1
    assert [page.texts[i] for i in np.flatnonzero(body)] == ARTICLE


def test_blocks_outside_the_article_or_of_another_family_stay_dropped() -> None:
    paras = "".join(f"<p>{p}</p>" for p in ARTICLE)
    page = segment(
        f"<html><body><div class='story'>{paras}</div><div class='story'><p>{STANDFIRST}</p></div></body></html>"
    )
    # the last paragraph dropped: after the last body block, nothing is added
    body = np.array([t in ARTICLE[:3] for t in page.texts])
    assert complete_families(page, body) == 0
    # a family the body holds less than half of is not the article's
    body = np.array([t in (ARTICLE[0], ARTICLE[3]) for t in page.texts])
    assert complete_families(page, body) == 0
    assert [page.texts[i] for i in np.flatnonzero(body)] == [ARTICLE[0], ARTICLE[3]]
