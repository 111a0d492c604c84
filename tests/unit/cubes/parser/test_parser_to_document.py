"""``to_document`` leaves the fields at their defaults out of what it validates: the same messages.

Oracle: the document validated from every key, as ``to_document`` built it before (it cost
the parser CPU per document), over every feed of the test corpus and candidates that set every
optional field. Also ``UrlIndex.setdefault`` against ``dict.setdefault``.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cubes.parser import documents
from cubes.parser.catalog_stream import UrlIndex
from cubes.parser.documents import Candidate, prepare_items, to_document
from cubes.parser.feed import parse_feed
from cubes.parser.model import MediaRef
from shared.messages import DocKind, Document, MediaKind, SourceKind, SourceRef

from .test_parser_corpus import corpus_files

DATA = Path(__file__).resolve().parents[4] / "tests" / "data"
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
REF = SourceRef(kind=SourceKind.rss, id="f1")


def _every_key(cand: Candidate, version: int) -> Document:
    """``to_document`` as it was: every field given, None and empty ones too."""
    media = [
        {"url": m.url, "kind": MediaKind(m.kind), "role": m.role, "mime": m.mime, "width": m.width, "height": m.height}
        for m in cand.media
    ]
    return Document.model_validate(
        {
            "url": cand.url,
            "host": cand.host,
            "source": REF,
            "kind": DocKind(cand.kind),
            "title": cand.title,
            "author": cand.author,
            "published_at": cand.published,
            "updated_at": cand.updated,
            "content_html": cand.content_html,
            "summary": cand.summary,
            "media": media,
            "product": documents._product(cand.product),
            "extra": cand.extra,
            "guid": cand.guid,
            "content_hash": cand.content_hash,
            "version": version,
            "preview": False,
            "seen_at": T0,
            "parsed_at": T0,
        }
    )


def _same(cand: Candidate, version: int = 7) -> None:
    new = to_document(cand, source=REF, version=version, seen_at=T0, parsed_at=T0)
    old = _every_key(cand, version).model_copy(update={"trace_id": new.trace_id})
    assert new == old
    assert new.model_dump_json() == old.model_dump_json()
    assert Document.model_validate_json(new.model_dump_json()) == new  # what the next cube reads


def _corpus_candidates() -> list[Candidate]:
    out: list[Candidate] = []
    for path in corpus_files(DATA):
        result = parse_feed(path.read_bytes(), url="https://news.test/feed")
        cands, _ = prepare_items(result.items, feed_host=None)
        out.extend(cands)
    return out


def test_every_corpus_document_is_the_one_validated_from_every_key() -> None:
    cands = _corpus_candidates()
    assert len(cands) > 800  # the corpus is there: RSS, Atom, Turbo, YML, JSON
    kinds = {c.kind for c in cands}
    assert kinds == {"article", "product"}
    for name in ("media", "author", "published", "updated", "extra", "product", "summary", "guid"):
        assert any(getattr(c, name) for c in cands), name  # every optional field is met, set and not
        assert not all(getattr(c, name) for c in cands), name
    for cand in cands:
        _same(cand)


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"author": "A. Writer", "summary": "S", "guid": "g-1"},
        {"published": T0, "updated": T0.astimezone(timezone(timedelta(hours=3)))},
        {"media": [MediaRef("https://s.test/v.mp4", "video", "enclosure", "video/mp4", 640, 360)]},
        {"media": [MediaRef("https://s.test/a.jpg"), MediaRef("https://s.test/b.jpg", "image", "cover", None, 10)]},
        {"extra": {"language": "ru", "topics": ["a", "b"]}},
        {
            "kind": "product",
            "product": {"offer_id": "o1", "price": "10", "params": [{"name": "Color", "value": "red"}]},
        },
        {"kind": "product", "product": {"offer_id": ""}},  # no offer id: no product
        {"content_html": ""},
    ],
)
def test_a_candidate_with_any_field_set_makes_the_same_document(changes: dict[str, Any]) -> None:
    base: dict[str, Any] = {
        "url": "https://s.test/a",
        "host": "s.test",
        "title": "T",
        "content_hash": "xxh3:0",
        "index": 0,
        "content_html": "<p>x</p>",
    }
    _same(Candidate(**{**base, **changes}))


def test_what_the_model_refuses_is_still_refused() -> None:
    cand = Candidate(url="https://s.test/a", host="s.test", title="T", content_hash="xxh3:0", index=0)
    with pytest.raises(ValueError, match="version"):
        to_document(cand, source=REF, version=-1, seen_at=T0, parsed_at=T0)
    cand.host = "h" * 256
    with pytest.raises(ValueError, match="host"):
        to_document(cand, source=REF, version=1, seen_at=T0, parsed_at=T0)
    cand.host, cand.media = "s.test", [MediaRef("https://s.test/a.jpg", "image", "content", None, "wide")]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="width"):
        to_document(cand, source=REF, version=1, seen_at=T0, parsed_at=T0)


def test_the_url_index_setdefault_answers_like_a_dict() -> None:
    rng = random.Random(13)
    index, oracle = UrlIndex(capacity=8), dict[str, int]()  # many doublings past 8 slots
    for i in range(20_000):
        url = f"https://shop.test/p/{rng.randrange(8_000)}"
        assert index.setdefault(url, i) == oracle.setdefault(url, i)
    assert len(index) == len(oracle)
    assert all(index[url] == i for url, i in oracle.items())


def test_a_duplicate_link_is_reported_with_the_first_item_across_batches() -> None:
    first = UrlIndex()
    feed = (
        '<rss version="2.0"><channel><title>t</title>'
        + "".join(f"<item><title>I{i}</title><link>https://s.test/{i % 3}</link></item>" for i in range(5))
        + "</channel></rss>"
    )
    items = parse_feed(feed.encode()).items
    one, errs_one = prepare_items(items[:2], feed_host="s.test", first=first)
    two, errs_two = prepare_items(items[2:], feed_host="s.test", first=first)
    assert [c.url for c in one + two] == ["https://s.test/0", "https://s.test/1", "https://s.test/2"]
    assert not errs_one
    assert [(e.index, e.reason.split(":")[1]) for e in errs_two] == [
        (3, " item 0 of this feed has the same URL; kept that one"),
        (4, " item 1 of this feed has the same URL; kept that one"),
    ]
