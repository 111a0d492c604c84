"""Partner JSON documents and JSON Feed (docs/architecture.md sections 3 and 5).

A partner pushes ``{"documents": [...]}`` (or a bare list, or one document)
through the API. The schema is ``PartnerDocument`` below; its JSON Schema is
``schemas/partner-document.v1.json``, generated from the model
(``write_partner_schema()``; a test keeps the file equal). Each document is
validated on its own, so one bad document is refused with its index and the
reason, and the others go on.

JSON Feed 1.x (https://jsonfeed.org) bodies fetched as feeds are read too.
"""

from __future__ import annotations

import html
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cubes.parser.bounds import Refused, product_numbers
from cubes.parser.dates import parse_date
from cubes.parser.model import DetectedFormat, FeedMeta, ItemError, MediaRef, ParsedItem, ParseResult
from shared.urls import MAX_URL_LENGTH

__all__ = [
    "PARTNER_SCHEMA_PATH",
    "PartnerDocument",
    "parse_json_documents",
    "parse_json_feed",
    "partner_schema",
    "write_partner_schema",
]

PARTNER_SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "partner-document.v1.json"
#: a batch larger than this is refused as a whole: split it (same order of magnitude as Turbo's feeds)
MAX_DOCUMENTS = 1000


class PartnerMedia(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=MAX_URL_LENGTH, pattern=r"^https?://")
    kind: Literal["image", "video"] = "image"
    role: str = Field(default="content", max_length=32)


class PartnerParam(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    value: str = Field(max_length=2000)
    unit: str | None = None


class PartnerProduct(BaseModel):
    model_config = ConfigDict(extra="forbid")

    offer_id: str = Field(min_length=1, max_length=200)
    available: bool = True
    price: str | None = None
    old_price: str | None = None
    currency: str | None = None
    category: str | None = None
    vendor: str | None = None
    model: str | None = None
    params: list[PartnerParam] = Field(default_factory=list, max_length=200)


class PartnerDocument(BaseModel):
    """One document a partner pushes. ``url`` must be on the partner's host."""

    model_config = ConfigDict(extra="forbid", title="PartnerDocument")

    action: Literal["upsert", "delete"] = "upsert"
    url: str = Field(min_length=1, max_length=MAX_URL_LENGTH, pattern=r"^https?://")
    #: required for upserts
    title: str | None = Field(default=None, max_length=2000)
    author: str | None = Field(default=None, max_length=500)
    published_at: datetime | None = None
    updated_at: datetime | None = None
    content_html: str = ""
    summary: str | None = None
    media: list[PartnerMedia] = Field(default_factory=list, max_length=200)
    product: PartnerProduct | None = None
    extra: dict[str, str | list[str]] = Field(default_factory=dict)
    guid: str | None = Field(default=None, max_length=1000)


def partner_schema() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "turbocubes:partner-document.v1.json",
        **PartnerDocument.model_json_schema(),
    }


def write_partner_schema(path: Path = PARTNER_SCHEMA_PATH) -> bool:
    """Regenerate the schema file; True when it changed."""
    data = orjson.dumps(partner_schema(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    if path.exists() and path.read_bytes() == data:
        return False
    path.write_bytes(data)
    return True


def _load(body: bytes, result: ParseResult) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        result.fatal = True
        result.errors.append(ItemError(f"not valid JSON: {exc.msg}", exc.lineno, exc.colno, code="json.invalid"))
        return None


def _to_item(doc: PartnerDocument, index: int) -> ParsedItem:
    it = ParsedItem(index=index, link=doc.url, guid=doc.guid, title=doc.title, author=doc.author)
    it.published = doc.published_at
    it.updated = doc.updated_at
    it.content_html = doc.content_html
    it.summary = doc.summary
    it.media = [MediaRef(m.url, m.kind, m.role) for m in doc.media]
    it.extra = dict(doc.extra)
    if doc.product is not None:
        it.kind = "product"
        it.product = doc.product.model_dump(exclude_none=True)
    return it


def parse_json_documents(body: bytes) -> ParseResult:
    result = ParseResult(DetectedFormat.json, meta=FeedMeta(parser="json", version="partner-document.v1"))
    data = _load(body, result)
    if result.fatal:
        return result
    docs = data.get("documents") if isinstance(data, dict) and "documents" in data else data
    if isinstance(docs, dict):
        docs = [docs]
    if not isinstance(docs, list):
        result.fatal = True
        result.errors.append(
            ItemError('expected {"documents": [...]}, a list of documents or one document', code="json.shape")
        )
        return result
    if len(docs) > MAX_DOCUMENTS:
        result.fatal = True
        result.errors.append(
            ItemError(f"{len(docs)} documents in one upload; at most {MAX_DOCUMENTS}", code="json.too_many_documents")
        )
        return result
    for i, raw in enumerate(docs):
        try:
            doc = PartnerDocument.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '<document>'}: {e['msg']}" for e in exc.errors()[:5]
            )
            link = raw.get("url") if isinstance(raw, dict) and isinstance(raw.get("url"), str) else None
            result.errors.append(ItemError(f"document {i}: {problems}", None, None, i, link, code="item.invalid"))
            continue
        item = _to_item(doc, i)
        if doc.action == "delete":
            result.deletions.append(item)
            continue
        if item.product is not None:
            try:
                item.notes = product_numbers(item.product)  # a price that is not one is refused (bounds.py)
            except Refused as exc:
                result.errors.append(ItemError(f"document {i}: {exc.reason}", None, None, i, doc.url, code=exc.code))
                continue
        result.items.append(item)
    return result


def parse_json_feed(body: bytes, url: str | None) -> ParseResult:
    result = ParseResult(DetectedFormat.jsonfeed, meta=FeedMeta(parser="json", version="jsonfeed"))
    data = _load(body, result)
    if result.fatal:
        return result
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        result.fatal = True
        result.errors.append(ItemError("JSON Feed without an items list", code="json.shape"))
        return result
    result.meta.title = data.get("title") if isinstance(data.get("title"), str) else None
    result.meta.link = data.get("home_page_url") if isinstance(data.get("home_page_url"), str) else None
    hubs = data.get("hubs") or []
    if isinstance(hubs, list) and hubs and isinstance(hubs[0], dict):
        result.meta.hub = hubs[0].get("url")
    for i, raw in enumerate(data["items"]):
        if not isinstance(raw, dict):
            result.errors.append(ItemError("item is not an object", index=i, code="item.invalid"))
            continue
        it = ParsedItem(index=i, base=url)
        it.link = _s(raw.get("url")) or _s(raw.get("external_url"))
        it.guid = _s(raw.get("id"))
        it.title = _s(raw.get("title"))
        text = _s(raw.get("content_text"))
        it.content_html = _s(raw.get("content_html")) or (html.escape(text, quote=False) if text else "")
        it.summary = _s(raw.get("summary"))
        it.published = parse_date(_s(raw.get("date_published")))
        it.updated = parse_date(_s(raw.get("date_modified")))
        author = raw.get("author") or (raw.get("authors") or [None])[0]
        if isinstance(author, dict):
            it.author = _s(author.get("name"))
        for key, role in (("image", "cover"), ("banner_image", "cover")):
            if img := _s(raw.get(key)):
                it.media.append(MediaRef(img, "image", role))
        result.items.append(it)
    return result


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
