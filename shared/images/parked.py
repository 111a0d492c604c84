"""A parked document's stored form, written by the media cube and released by the delay cube (docs/architecture.md
section 2).

A document whose media is not all cached yet waits in the delay store. Its
release used to parse the stored JSON, parse the HTML again with lxml, rewrite
it and serialize it: the work the media cube had just done on the same HTML.
So the media cube stores, with the document, the *template* of that rewrite
(``MediaDoc.template``): the HTML as ``rewrite`` writes it when every reference
has a CDN URL, with a placeholder token for each CDN URL, and the references
the tokens stand for. ``release`` then:

* when every reference has a CDN URL that the HTML serializer writes unchanged
  (the common case): replaces the tokens with the CDN URLs. No parse.
* otherwise (a failed image, a release at the deadline, a CDN URL with ``&``
  or a quote in it): rewrites the stored document with ``MediaDoc`` as before,
  which removes what has no CDN URL.

Both give the bytes the rewrite gives (a test holds them equal).

Stored form: ``MAGIC``, one JSON header line, the document's JSON. A payload
without ``MAGIC`` is a plain document JSON, what the media cube parked before
templates existed; it is released the old way, so a rolling upgrade loses nothing.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime

import orjson

from shared.images.media import MediaDoc, Records, cached_medium, look_up
from shared.messages import Document, MediaKind

__all__ = ["MAGIC", "ParkedPayloadError", "Released", "park_payload", "parked_document", "release"]

#: not JSON (a NUL byte first), so it can never be mistaken for a document parked before it
MAGIC = b"\x00turbocubes-parked/2\n"
#: CDN URLs that every media attribute serializes as they are (no ``&``, quotes, ``<``, ``>``,
#: spaces or non-ASCII): substituted for a token, they give what serializing them would
_VERBATIM = re.compile(r"[A-Za-z0-9\-._~/:?#\[\]@!$()*+,;=%]+")


class ParkedPayloadError(ValueError):
    """A stored payload that is not one ``park_payload`` wrote (corrupt or foreign)."""


@dataclass(frozen=True, slots=True)
class _Template:
    prefix: str
    #: canonical URL -> kind, in token order (token i stands for the CDN URL of the i-th)
    refs: dict[str, MediaKind]
    #: the rewritten content_html with tokens; None: content_html stays as it is
    html: str | None
    #: the canonical URL of each ``Document.media`` entry (None: unusable, so removed)
    media: list[str | None]


def park_payload(media_doc: MediaDoc) -> bytes:
    """What the media cube parks for ``media_doc``; uses up its parsed tree (see ``MediaDoc``)."""
    doc = media_doc.doc
    prefix = _prefix(doc.content_html)
    header = {
        "prefix": prefix,
        "refs": media_doc.refs,
        "html": media_doc.template(lambda i: _token(prefix, i)),
        "media": [media_doc.canonical(m.url) for m in doc.media],
    }
    return b"".join((MAGIC, orjson.dumps(header), b"\n", doc.model_dump_json().encode()))


def _token(prefix: str, index: int) -> str:
    """Letters, digits and ``-``, which every attribute serializes unchanged; the closing ``-``
    keeps ``…1-`` from being the start of ``…12-`` (``_fill`` reads them back)."""
    return f"{prefix}{index}-"


def _prefix(html: str) -> str:
    """A token prefix found nowhere in ``html``: a fresh random one (a partner cannot guess it)."""
    while True:
        prefix = f"tcm{secrets.token_hex(8)}-"
        if prefix not in html:
            return prefix


def _decode(payload: bytes) -> tuple[Document, _Template | None]:
    if not payload.startswith(MAGIC):
        return Document.model_validate_json(payload), None  # parked before templates existed
    head, sep, doc_json = payload[len(MAGIC) :].partition(b"\n")
    try:
        header = orjson.loads(head)
        template = _Template(
            prefix=header["prefix"],
            refs={url: MediaKind(kind) for url, kind in header["refs"].items()},
            html=header["html"],
            media=list(header["media"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ParkedPayloadError(f"parked payload with a bad header: {exc}") from None
    if not (sep and isinstance(template.prefix, str) and template.prefix and isinstance(template.html, str | None)):
        raise ParkedPayloadError("parked payload with a bad header")
    doc = Document.model_validate_json(doc_json)
    if len(template.media) != len(doc.media):
        raise ParkedPayloadError("parked payload whose header does not match its document")
    return doc, template


def parked_document(payload: bytes) -> Document:
    """The document as the media cube received it (either stored form)."""
    return _decode(payload)[0]


def _fill(html: str, prefix: str, cdn: list[str]) -> str:
    parts = html.split(prefix)
    out = [parts[0]]
    for part in parts[1:]:
        index, dash, rest = part.partition("-")
        if not dash or not index.isdigit() or int(index) >= len(cdn):
            raise ParkedPayloadError("parked template with a bad token")
        out.append(cdn[int(index)])
        out.append(rest)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Released:
    """A released document, and what it goes without: media URL -> why (``Lookup.lost``)."""

    doc: Document
    lost: dict[str, str]
    #: how many of its media it still shows (for what ``shared.pages.losses`` tells the webmaster)
    shown: int = 0


async def release(payload: bytes, images: Records, now: datetime) -> Released:
    """A parked document, rewritten with what is cached now; everything else removed (and named)."""
    doc, template = _decode(payload)
    if template is None:
        media_doc = MediaDoc(doc)
        found = await look_up(images, media_doc.refs, now)
        return Released(
            media_doc.rewrite(found.cdn, sizes=found.sizes, variants=found.variants, media_ready_at=now),
            found.lost(media_doc.refs),
            sum(1 for url in media_doc.refs if url in found.cdn),
        )
    found = await look_up(images, template.refs, now)
    cdn = [found.cdn.get(url) for url in template.refs]
    if all(c is not None and _VERBATIM.fullmatch(c) for c in cdn):
        ready = [c for c in cdn if c is not None]  # all of them: for the type checker
        update: dict[str, object] = {}
        if template.html is not None:
            update["content_html"] = _fill(template.html, template.prefix, ready)
        update["media"] = [
            cached_medium(m, c, found.sizes.get(url), found.variants.get(url, ()))
            for m, url in zip(doc.media, template.media, strict=True)
            if url is not None and (c := found.cdn.get(url))
        ]
        update["media_ready_at"] = now
        return Released(doc.model_copy(update=update), {}, len(ready))
    media_doc = MediaDoc(doc)
    if unknown := media_doc.refs.keys() - template.refs.keys():  # refs found differently since it was parked
        more = await look_up(images, dict.fromkeys(unknown, MediaKind.image), now)
        found.cdn.update(more.cdn)
        found.reasons.update(more.reasons)
        found.sizes.update(more.sizes)
        found.variants.update(more.variants)
    return Released(
        media_doc.rewrite(found.cdn, sizes=found.sizes, variants=found.variants, media_ready_at=now),
        found.lost(media_doc.refs),
        sum(1 for url in media_doc.refs if url in found.cdn),
    )
