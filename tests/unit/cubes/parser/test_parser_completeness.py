"""An item whose images or tables the safe-HTML policy removes is held back (shared/pages/completeness.py)."""

from __future__ import annotations

from cubes.parser.documents import prepare_items
from cubes.parser.feed import parse_feed
from cubes.parser.sanitize import ContentCleaner

FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>News</title><link>https://s.test/</link>
<item><title>Inline picture</title><link>https://s.test/1</link><description><![CDATA[<p>Look:</p>
<img src="data:image/png;base64,iVBORw0KGgo=" alt="chart">
<img src="https://s.test/ok.png" alt="ok">]]></description></item>
<item><title>Hidden table</title><link>https://s.test/2</link><description><![CDATA[<p>Prices</p>
<noscript><table><tr><td>1</td></tr></table></noscript>]]></description></item>
<item><title>Whole</title><link>https://s.test/3</link><description><![CDATA[<p>Text</p>
<table><tr><td>2</td></tr></table><img src="/rel.png" alt="">]]></description></item>
<item><title>An ad is policy</title><link>https://s.test/4</link><description><![CDATA[<p>Text</p>
<div data-block="slider"><img src="https://s.test/a.png"><div data-turbo-ad-id="x"><img src="https://ads.test/b.png">
</div></div>]]></description></item>
</channel></rss>"""


def test_lost_images_and_tables_hold_the_item_back_and_say_what() -> None:
    """Before: both items were published, one image and one table short, as if complete."""
    result = parse_feed(FEED, url="https://s.test/feed")
    cands, refused = prepare_items(result.items, feed_host="s.test")
    assert [c.url for c in cands] == ["https://s.test/3", "https://s.test/4"]
    assert [(e.code, e.link, e.severity.value) for e in refused] == [
        ("page.incomplete", "https://s.test/1", "error"),
        ("page.incomplete", "https://s.test/2", "error"),
    ]
    assert "lost 1 of its 2 images" in refused[0].reason
    assert "lost its table" in refused[1].reason
    assert "data:, javascript: or none" in refused[0].reason  # how, so the webmaster can fix it
    assert not any(w.code == "page.incomplete" for c in cands for w in c.warnings)


def test_holding_off_publishes_the_item_with_a_warning() -> None:
    result = parse_feed(FEED, url="https://s.test/feed")
    cands, refused = prepare_items(result.items, feed_host="s.test", cleaner=ContentCleaner(hold_incomplete=False))
    assert refused == []
    (warning,) = [w for w in cands[0].warnings if w.code == "page.incomplete"]
    assert warning.severity.value == "warning"
    assert "was published without them: it lost 1 of its 2 images" in warning.reason
