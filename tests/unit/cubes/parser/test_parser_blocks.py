"""Turbo's blocks made static HTML (cubes/parser/blocks.py): the every-element feed, element by element.

``tests/data/feeds/turbo/turbocubes__every-element.xml`` uses every element of Turbo's RSS markup;
each test below names the element it covers (the kvwriter's README points here, row by row).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cubes.parser.blocks import turbo_blocks
from cubes.parser.documents import Candidate, prepare_items
from cubes.parser.feed import parse_feed

HOSTS = ("www.youtube.com", "player.vimeo.com", "rutube.ru", "vk.com")
PAGE = "https://turbo.example/2026/11/every-element"


@pytest.fixture(scope="module")
def pages(data_dir: Path) -> list[Candidate]:
    body = (data_dir / "feeds" / "turbo" / "turbocubes__every-element.xml").read_bytes()
    result = parse_feed(body, url="https://turbo.example/turbo.xml")
    assert [(e.code, e.severity.value) for e in result.errors] == [("turbo.analytics_ignored", "info")]
    assert [d.link for d in result.deletions] == ["https://turbo.example/2026/10/removed"]
    cands, refused = prepare_items(result.items, feed_host="turbo.example")
    assert refused == []
    return cands


@pytest.fixture(scope="module")
def ru(pages: list[Candidate]) -> str:
    return pages[0].content_html


def test_header_keeps_h1_h2_cover_menu_and_breadcrumbs(ru: str) -> None:
    assert ru.startswith('<header class="tc-head">\n  <h1>Рассвет над озером: все элементы Турбо</h1>')
    assert "<h2>Одна страница, на которой есть всё</h2>" in ru
    assert '<figure><img src="https://turbo.example/img/cover.png"></figure>' in ru
    assert '<nav class="tc-menu"><a href="https://turbo.example/news"' in ru
    assert '<nav class="tc-crumbs"><a href="https://turbo.example/"' in ru


def test_typography_figure_and_lists_pass_through(ru: str) -> None:
    for part in ("<b>Жирный</b>", "H<sub>2</sub>O", "mc<sup>2</sup>", "<code>inline code</code>", "<mark>", "<hr>"):
        assert part in ru
    assert "<figcaption>Озеро в шесть утра</figcaption>" in ru
    assert "<ol><li>Первое</li>" in ru
    # a bare #fragment points into the document, and the id it points at keeps its meaning
    assert f'<a href="{PAGE}#chast-2"' in ru
    assert '<h2 id="c-chast-2">' in ru


def test_video_takes_its_figures_image_as_poster(ru: str) -> None:
    assert '<figure class="tc-video">' in ru
    assert '<video width="640" height="360" poster="https://turbo.example/img/poster.png">' in ru
    assert '<source src="https://turbo.example/video/dawn.mp4" type="video/mp4">' in ru


@pytest.mark.parametrize("host", HOSTS)
def test_video_embeds_of_allowed_hosts_survive(ru: str, host: str) -> None:
    assert f'<iframe src="https://{host}/' in ru or f'src="https://{host}/' in ru


def test_each_embed_has_a_title_and_a_watch_link_under_it(ru: str) -> None:
    """A player that cannot load was a black box with nothing to read: the page now says what it was."""
    assert (
        '<p class="tc-cap">Рассвет над озером: таймлапс</p><p class="tc-sub">'
        '<a href="https://www.youtube.com/watch?v=dQw4w9WgXcQ" rel="noopener noreferrer nofollow ugc">'
        "Смотреть на youtube.com</a></p></div>"
    ) in ru
    assert ru.count('<div class="tc-embed"><iframe') == 4
    assert '<a href="https://vimeo.com/76979871" rel="noopener noreferrer nofollow ugc">Смотреть на vimeo.com' in ru
    assert 'title="Видео на Rutube"' in ru
    assert '<a href="https://rutube.ru/video/1234567890abcdef/"' in ru
    assert '<a href="https://vk.com/video-1_456239017"' in ru


def test_an_embed_in_english_in_a_captioned_figure_and_of_another_host() -> None:
    fragment = (
        '<figure><iframe src="//player.vimeo.com/video/1"></iframe><figcaption>Dawn</figcaption></figure>'
        '<iframe src="https://video.example/p/7"></iframe>'
    )
    html, notes = turbo_blocks(fragment, page_url=PAGE, lang="en", video_hosts=("player.vimeo.com", "video.example"))
    # the figure's caption is the title already (not said twice); the link is in the page's language
    assert html == (
        '<figure><div class="tc-embed"><iframe src="//player.vimeo.com/video/1" title="Video on Vimeo"></iframe>'
        '<p class="tc-sub"><a href="https://vimeo.com/1">Watch on vimeo.com</a></p></div>'
        "<figcaption>Dawn</figcaption></figure>"
        '<div class="tc-embed"><iframe src="https://video.example/p/7" title="Video on video.example"></iframe>'
        '<p class="tc-cap">Video on video.example</p>'
        '<p class="tc-sub"><a href="https://video.example/p/7">Watch on video.example</a></p></div>'
    )
    assert notes == []
    again, _ = turbo_blocks(html, page_url=PAGE, lang="en", video_hosts=("player.vimeo.com", "video.example"))
    assert again == html  # made once: a block already made is left as it is


def test_gallery_and_slider_are_scrolling_figures(ru: str) -> None:
    assert '<p class="tc-cap">Галерея</p><div class="tc-gallery"><figure class="tc-slide"><img' in ru
    assert ru.count('<figure class="tc-slide">') >= 6
    assert '<p class="tc-cap">Карусель</p><div class="tc-slider"><figure class="tc-slide">' in ru
    assert "data-turbo-ad-id" not in ru  # the ad slot of the slider is left out (and reported)


def test_share_links_share_this_page(ru: str) -> None:
    assert '<nav class="tc-share"><span class="tc-label">Поделиться:</span>' in ru
    assert 'href="https://vk.com/share.php?url=https%3A%2F%2Fturbo.example%2F2026%2F11%2Fevery-element"' in ru
    assert ru.count('class="tc-share-link"') == 5


def test_buttons_call_write_open_or_show_disabled(ru: str) -> None:
    assert '<a class="tc-btn tc-primary" href="tel:+74951234567"' in ru
    assert '<a class="tc-btn" href="mailto:news@turbo.example"' in ru
    assert '<a class="tc-btn" href="https://turbo.example/subscribe"' in ru
    assert '<span class="tc-btn tc-off">Запись закрыта</span>' in ru
    assert "<button" not in ru


def test_accordion_keeps_its_titles_and_the_open_item(ru: str) -> None:
    assert '<details class="tc-acc"><summary>Когда лучше приезжать?</summary><p>На рассвете' in ru
    assert '<details class="tc-acc" open="open"><summary>Можно ли купаться?</summary>' in ru


def test_table_and_blockquote_pass_through(ru: str) -> None:
    assert "<th>Температура</th>" in ru
    assert "<td>\u22122 °C</td>" in ru
    assert "<blockquote>Самый тихий рассвет в этом году.</blockquote>" in ru


def test_cards_snippets_and_feed(ru: str) -> None:
    assert '<div class="tc-cards"><article class="tc-card">' in ru
    assert '<a href="https://turbo.example/route" class="tc-btn"' in ru
    assert '<figcaption><a href="https://turbo.example/birds"' in ru  # a snippet of the carousel
    assert '<div class="tc-feed"><p class="tc-cap">Ещё по теме</p><article class="tc-card">' in ru


def test_fold_histogram_and_audio(ru: str) -> None:
    assert '<div class="tc-fold"><p>Длинный текст под катом' in ru
    assert '<table class="tc-histogram"><tbody><tr><th>Пн</th><td>2</td></tr>' in ru
    assert '<p class="tc-note"><a href="https://turbo.example/audio/dawn.mp3"' in ru


def test_rating_as_stars(ru: str) -> None:
    assert '<p class="tc-rating" title="Оценка: 4.5 из 5"><span class="tc-stars">★★★★☆</span> 4.5/5</p>' in ru


def test_feedback_widget_and_callback_form_are_buttons(ru: str) -> None:
    assert '<section class="tc-feedback"><p class="tc-cap">Связаться с редакцией</p>' in ru
    assert (
        '<a class="tc-btn tc-primary" href="tel:+74951234567" rel="noopener noreferrer nofollow ugc">Позвонить</a>'
        in ru
    )
    assert ">Заказать обратный звонок</a>" in ru
    assert '<a class="tc-btn" href="https://wa.me/74951234567"' in ru
    assert '<a class="tc-btn" href="https://t.me/turbo_example"' in ru
    assert ru.count('<section class="tc-feedback">') == 2  # the widget and the callback form


def test_search_form_is_a_link_to_the_sites_search(ru: str) -> None:
    assert '<a class="tc-btn" href="https://turbo.example/search"' in ru
    assert "<form" not in ru
    assert "<input" not in ru


def test_comments_as_static_html_with_replies(ru: str) -> None:
    assert '<section class="tc-comments"><p class="tc-cap">Комментарии</p><article class="tc-comment">' in ru
    assert '<img src="https://turbo.example/img/avatar.png" alt="" width="32" height="32"><b>Анна</b>' in ru
    assert '<div class="tc-replies"><article class="tc-comment"><p class="tc-author"><b>Редакция</b>' in ru


def test_related_items_as_cards(ru: str) -> None:
    assert ru.endswith(
        '<aside class="tc-related"><p class="tc-cap">Читайте также</p><div class="tc-cards">'
        '<a class="tc-card" href="https://turbo.example/2026/11/herons" rel="noopener noreferrer nofollow ugc">'
        '<img src="https://turbo.example/img/herons.png" alt=""><span>Цапли остаются на зиму</span></a>'
        '<a class="tc-card" href="https://turbo.example/2026/11/ice" rel="noopener noreferrer nofollow ugc">'
        "<span>Первый лёд на озере</span></a></div></aside>"
    )


def test_what_cannot_be_carried_is_reported_not_dropped_silently(pages: list[Candidate]) -> None:
    page = pages[0]
    found = sorted((w.code, w.reason) for w in page.warnings)
    assert found == [
        (
            "page.content_dropped",
            "a feedback button of type 'chat' without a link (data-url / data-send-to) is not shown",
        ),
        ("page.content_dropped", "a form is not shown: these pages send nothing to anyone"),
        ("page.content_dropped", "an ad slot (data-turbo-ad-id) is not shown: these pages carry no ads"),
        ("page.content_dropped", "an embed from ads.example is not shown: only players of kvwriter.video_hosts are"),
        ("turbo.unsupported_block", 'the Turbo block data-block="poll" is shown as its plain content'),
    ]
    assert all((w.index, w.link, w.severity.value) == (0, PAGE, "warning") for w in page.warnings)
    assert "<p>Как вам рассвет?</p>" in page.content_html  # the unknown block's content is kept


def test_the_page_speaks_its_items_language(pages: list[Candidate]) -> None:
    ru, en = pages
    assert (ru.extra["language"], en.extra["language"]) == ("ru", "en")
    assert '<span class="tc-label">Share:</span>' in en.content_html
    assert ">Call</a>" in en.content_html
    assert 'title="Rating: 3 of 5"' in en.content_html
    assert ru.published is not None
    assert ru.published.isoformat() == "2026-11-30T10:30:00+03:00"  # the source's offset, kept


def test_html_without_blocks_is_not_touched() -> None:
    html = "<p>Plain <b>text</b> with <img src='x.png'> and a table <table><tr><td>1</td></tr></table></p>"
    assert turbo_blocks(html, page_url=PAGE, lang="en", video_hosts=HOSTS) == (html, [])
