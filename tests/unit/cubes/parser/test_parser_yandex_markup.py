"""Yandex markup the page does not render is told, never dropped silently.

``<metrics>`` breadcrumbs are rendered as breadcrumbs; ``turbo:extendedHtml``, the channel's
``turbo:analytics`` and ``turbo:adNetwork`` and any other Turbo or Yandex element are reported
(each was dropped with no word before); Yandex News' ``yandex:full-text`` is the item's article.
"""

from __future__ import annotations

from cubes.parser.documents import prepare_items
from cubes.parser.feed import parse_feed
from cubes.parser.model import ParseResult, Severity

FEED = """<?xml version="1.0" encoding="UTF-8"?>
<rss xmlns:yandex="http://news.yandex.ru" xmlns:media="http://search.yahoo.com/mrss/"
     xmlns:turbo="http://turbo.yandex.ru" version="2.0">
<channel>
  <title>Town Journal</title><link>https://town.example/</link><language>en</language>
  <turbo:analytics type="Yandex" id="88888888"></turbo:analytics>
  <turbo:adNetwork type="Yandex" id="RA-123456-7" turbo-ad-id="first_ad_place"></turbo:adNetwork>
  <item turbo="true">
    <link>https://town.example/news/otters</link>
    <turbo:extendedHtml>true</turbo:extendedHtml>
    <turbo:sparkle>yes</turbo:sparkle>
    <metrics>
      <yandex schema_identifier="town">
        <breadcrumblist>
          <breadcrumb url="https://town.example/" text="Home"/>
          <breadcrumb url="https://town.example/news/" text="News"/>
        </breadcrumblist>
      </yandex>
    </metrics>
    <turbo:content><![CDATA[<header><h1>Otters are back</h1></header>
      <p>Volunteers filmed a family of four.</p>]]></turbo:content>
  </item>
  <item>
    <title>Yandex News item</title>
    <link>https://town.example/news/bridge</link>
    <description>The council votes on the bridge.</description>
    <yandex:full-text>The council voted to rebuild the bridge.
Work starts next year.</yandex:full-text>
  </item>
</channel>
</rss>"""


def _parsed() -> ParseResult:
    return parse_feed(FEED.encode(), url="https://town.example/turbo.xml")


def test_metrics_breadcrumbs_are_rendered_as_breadcrumbs() -> None:
    cands, _ = prepare_items(_parsed().items, feed_host="town.example")
    html = cands[0].content_html
    assert '<nav class="tc-crumbs">' in html
    assert '<a href="https://town.example/" rel="noopener noreferrer nofollow ugc">Home</a>' in html
    assert '<a href="https://town.example/news/" rel="noopener noreferrer nofollow ugc">News</a>' in html
    assert html.index("tc-crumbs") < html.index("Volunteers")


def test_extended_html_and_unknown_turbo_elements_are_reported_on_the_item() -> None:
    cands, _ = prepare_items(_parsed().items, feed_host="town.example")
    codes = {(w.code, w.severity) for w in cands[0].warnings}
    assert ("turbo.extended_html_ignored", Severity.warning) in codes
    assert ("turbo.markup_ignored", Severity.warning) in codes
    assert any("turbo:sparkle" in w.reason for w in cands[0].warnings)


def test_the_channels_analytics_and_ads_are_reported_as_ignored() -> None:
    result = _parsed()
    told = {(e.code, e.severity, e.index) for e in result.errors}
    assert ("turbo.analytics_ignored", Severity.info, None) in told
    assert ("turbo.ads_ignored", Severity.info, None) in told
    assert any("88888888" in e.reason for e in result.errors)
    assert result.feed_error is None  # nothing to fix: the feed is not "partial" for them


def test_yandex_full_text_is_the_items_article() -> None:
    cands, _ = prepare_items(_parsed().items, feed_host="town.example")
    bridge = cands[1]
    assert "<p>The council voted to rebuild the bridge.</p>" in bridge.content_html
    assert "<p>Work starts next year.</p>" in bridge.content_html
    assert bridge.summary == "The council votes on the bridge."
