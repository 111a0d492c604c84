"""shared.xmlguard: the prolog read as XML reads it (the parser's refusal is tested in test_parser_hostile)."""

from __future__ import annotations

import pytest

from shared.xmlguard import Declared, NeedMore, declared_entity


def test_internal_and_external_declarations_are_found_with_their_place() -> None:
    assert declared_entity(b'<!DOCTYPE r [\n <!ENTITY a "x">]><r/>') == Declared("a", False, 2, 2)
    assert declared_entity(b'<!DOCTYPE r [<!ENTITY % p SYSTEM "http://x/">%p;]><r/>') == Declared("p", True, 1, 14)


@pytest.mark.parametrize(
    "body",
    [
        b"<rss/>",
        b'<?xml version="1.0"?><!DOCTYPE rss PUBLIC "-//N//DTD RSS 0.91//EN" "http://x/rss.dtd"><rss/>',
        b'<!DOCTYPE r [<!-- <!ENTITY a "x"> -->]><r/>',
        b'<r><![CDATA[<!DOCTYPE r [<!ENTITY a "x">]>]]></r>',  # not in the prolog: content
    ],
)
def test_bodies_that_declare_nothing(body: bytes) -> None:
    assert declared_entity(body) is None


def test_a_stream_asks_for_more_until_the_prolog_is_over() -> None:
    body = b"<!-- " + b"x" * 100 + b' -->\n<!DOCTYPE r [<!ENTITY a "x">]><r/>'
    for cut in (10, 60, len(body) - 12):
        with pytest.raises(NeedMore):
            declared_entity(body[:cut], complete=False)
    assert declared_entity(body, complete=False) == Declared("a", False, 2, 14)
