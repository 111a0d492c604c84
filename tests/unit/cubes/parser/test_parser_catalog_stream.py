"""cubes.parser.catalog_stream: which big bodies are read as a stream, and the compact duplicate index."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from cubes.parser.catalog_stream import UrlIndex, catalog_opener
from cubes.parser.detect import stream_encoding

YML = (
    '<yml_catalog date="2026-01-01"><shop><offers><offer id="1"><name>Чайник</name></offer></offers></shop>'
    "</yml_catalog>"
)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (codecs.BOM_UTF8 + YML.encode(), "utf-8"),
        (b'<?xml version="1.0" encoding="windows-1251"?>' + YML.encode("cp1251"), "cp1251"),
        (b'<?xml version="1.0" encoding="UTF-8"?>' + YML.encode(), "utf-8"),
        (YML.encode(), "utf-8"),  # no declaration: XML's default, and the head is UTF-8
        (YML.encode()[:-40] + "Ч".encode()[:1], "utf-8"),  # a character cut by the end of the head
        (b'<?xml version="1.0" encoding="UTF-8"?>' + YML.encode("cp1251"), None),  # a lie: read whole
        (YML.encode("cp1251"), None),  # no declaration, not UTF-8: the charset must be detected on the whole
        (YML.encode("utf-16-le"), None),  # UTF-16 without a BOM: lxml cannot read it as it is
        (b'<?xml version="1.0" encoding="x-unknown"?>' + YML.encode(), None),
    ],
)
def test_a_head_settles_the_charset_or_says_it_cannot(head: bytes, expected: str | None) -> None:
    assert stream_encoding(head) == expected


def test_only_a_catalog_lxml_can_read_as_it_is_is_opened_as_a_stream(tmp_path: Path) -> None:
    catalog = tmp_path / "yml.xml"
    catalog.write_bytes(b'<?xml version="1.0" encoding="UTF-8"?>' + YML.encode())
    opener = catalog_opener(catalog, None, 1 << 20)
    assert opener is not None
    with opener() as stream:
        assert stream.read() == catalog.read_bytes()
    rss = tmp_path / "rss.xml"
    rss.write_bytes(b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title></channel></rss>')
    assert catalog_opener(rss, None, 1 << 20) is None
    mislabelled = tmp_path / "lie.xml"
    mislabelled.write_bytes(b'<?xml version="1.0" encoding="UTF-8"?>' + YML.encode("cp1251"))
    assert catalog_opener(mislabelled, None, 1 << 20) is None


def test_the_url_index_answers_like_a_dict() -> None:
    first = UrlIndex()
    assert "https://shop.test/p/1" not in first
    first["https://shop.test/p/1"] = 7
    assert "https://shop.test/p/1" in first
    assert first["https://shop.test/p/1"] == 7
    assert "https://shop.test/p/2" not in first
    assert len(first) == 1


def test_the_url_index_grows_and_keeps_every_first_index() -> None:
    first = UrlIndex(capacity=8)
    urls = [f"https://shop.test/p/{i}" for i in range(5000)]  # many doublings past 8 slots
    for i, url in enumerate(urls):
        first[url] = i
    assert len(first) == 5000
    assert all(first[url] == i for i, url in enumerate(urls))
    assert "https://shop.test/p/5000" not in first
    first[urls[3]] = 99  # set again: replaced, not added
    assert (first[urls[3]], len(first)) == (99, 5000)
    with pytest.raises(KeyError):
        first["https://shop.test/none"]
