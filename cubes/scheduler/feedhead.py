"""The head of a fetched feed, read once for what the scheduler learns from it (docs/architecture.md section 6).

Two readers want the feed-level elements before the first item: WebSub discovery (the
``<atom:link rel="hub">`` / ``rel="self"`` pair, ``websub.py``) and the origin's own schedule
(``<ttl>``, ``sy:updatePeriod`` / ``sy:updateFrequency``, ``<skipHours>`` / ``<skipDays>``,
``origin.py``). The head is parsed once per fetch, here, with lxml: entity expansion, DTD
loading and network access off, at most ``HEAD_LIMIT`` bytes, and parsing stops at the first
``<item>`` / ``<entry>``, so a hostile feed can neither blow up memory nor make us fetch anything.
Every text kept is cut to ``_TEXT_LIMIT`` characters and every list to ``_LIST_LIMIT`` entries.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from lxml import etree

from shared.xmlguard import declared_entity

__all__ = ["HEAD_LIMIT", "FeedHead", "read_head"]

#: do not read past this many bytes looking for the head (a feed's head is tiny)
HEAD_LIMIT = 256 * 1024
#: elements after which no feed-level element can follow: stop parsing there
_STOP_AT = frozenset({"item", "entry"})
#: the channel-level elements whose text the scheduler reads (by local name)
_TEXTS = frozenset({"ttl", "updatePeriod", "updateFrequency", "updateBase"})
#: a schedule value is a short word or number; anything longer is cut (and then fails to parse)
_TEXT_LIMIT = 64
#: skipHours has at most 24 hours and skipDays 7 days; a feed listing thousands is cut here
_LIST_LIMIT = 32


@dataclass(frozen=True, slots=True)
class FeedHead:
    """What the head of a feed declares (every field empty when it declares nothing or is not XML)."""

    #: ``(rels, href)`` of every ``<link href=…>`` of the head, in order (Atom links; RSS's text links have no href)
    links: tuple[tuple[tuple[str, ...], str], ...] = ()
    #: local name -> text of the first ``ttl`` / ``updatePeriod`` / ``updateFrequency`` / ``updateBase``
    texts: dict[str, str] = field(default_factory=dict)
    #: the texts of ``<skipHours><hour>`` and ``<skipDays><day>``
    skip_hours: tuple[str, ...] = ()
    skip_days: tuple[str, ...] = ()


def _local(el: etree._Element) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    return etree.QName(tag).localname if tag else ""


def read_head(body: bytes | None) -> FeedHead:
    """The head of ``body`` (a fetched feed), or an empty ``FeedHead`` when there is none to read."""
    if not body:
        return FeedHead()
    head = body[:HEAD_LIMIT]
    if declared_entity(head) is not None:
        # libxml2 expands internal entities inside attribute values even with resolve_entities off:
        # a hub href of "&lol9;" came back as a thousand "lol"s. No feed needs entities.
        return FeedHead()
    links: list[tuple[tuple[str, ...], str]] = []
    texts: dict[str, str] = {}
    hours: list[str] = []
    days: list[str] = []
    try:
        for event, el in etree.iterparse(
            io.BytesIO(head),
            events=("start", "end"),
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            recover=False,
        ):
            local = _local(el)
            if event == "start":
                if local in _STOP_AT:
                    break
                href = (el.get("href") or "").strip() if local == "link" else ""
                if href and len(links) < _LIST_LIMIT:
                    links.append((tuple((el.get("rel") or "").lower().split()), href))
                continue
            text = (el.text or "").strip()[:_TEXT_LIMIT]
            if local in _TEXTS and local not in texts and text:
                texts[local] = text
            elif local == "hour" and _local(el.getparent()) == "skipHours" and len(hours) < _LIST_LIMIT:
                hours.append(text)
            elif local == "day" and _local(el.getparent()) == "skipDays" and len(days) < _LIST_LIMIT:
                days.append(text)
    except etree.XMLSyntaxError:
        # a truncated head or a broken feed: whatever was found before the error stands
        pass
    return FeedHead(links=tuple(links), texts=texts, skip_hours=tuple(hours), skip_days=tuple(days))
