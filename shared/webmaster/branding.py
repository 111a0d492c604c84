"""A host's look on its Turbo pages: its name, logo, accent colour, menu and contact buttons (docs/architecture.md
sections 3 and 10).

Turbo pages carried the bare host name in their header (``127.0.0.1`` in the demo). A webmaster
with a verified right on a host sets its ``Branding`` (the API's ``PUT /api/v1/hosts/{host}/branding``
and the console's host page); every page of that tenant's sources on the host shows it from its
next render, and the pages already written are rendered again (the kvwriter follows
``hosts.branding``). Several tenants may hold rights on one host: each page wears the branding of
the tenant whose source published it (the page rule of ``shared/webmaster/rights.py``), never another's.

The logo is an image on the host like every other: ordered through the crawler, checked and
stored by the cdn cube, and shown from the CDN once it is there (``logo_url`` is its source
address; the page never links the host's own copy). Everything is bounded where it enters: a
name of ``MAX_NAME`` characters, a colour as ``#rrggbb`` only (it is written into the page's
style, so nothing else may pass), at most ``MAX_MENU`` menu links and ``MAX_CONTACTS`` contact
buttons, each link on the host itself (a menu of the host's pages, not a way to send readers
elsewhere), a contact a phone number, an e-mail address, a Telegram name or a URL on the host.
A shop's cart template and one-click order ride along (``shop``: ``shared/pages/shop.py`` checks them).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shared.messages import BrandingChanged, CrawlKind, CrawlRequest
from shared.pages.shop import ShopSettings, shop_problems
from shared.runtime.cube import Output
from shared.urls import canonical_url, host_of

if TYPE_CHECKING:
    from shared.runtime.deps import Publish
    from shared.stores import Stores

__all__ = [
    "BRANDING_PREFIX",
    "MAX_CONTACTS",
    "MAX_MENU",
    "MAX_NAME",
    "Branding",
    "BrandingRefused",
    "Contact",
    "MenuLink",
    "apply_branding",
    "logo_requester",
    "logo_state",
    "logo_waiters",
    "parse_branding",
]

#: the requester of a logo's fetch, ``branding:<tenant>|<host>``: the cdn cube names it in the copy's
#: ``media.cached``, and the kvwriter then renders that tenant's pages of the host again
BRANDING_PREFIX = "branding:"
MAX_NAME = 60
#: a logo is fetched like a routine image; nobody's page waits on it
_LOGO_PRIORITY = 5
MAX_MENU = 8
MAX_CONTACTS = 6
_MAX_LABEL = 40
_MAX_URL = 1024
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
_PHONE = re.compile(r"^\+?[0-9][0-9 ()-]{4,24}$")
_EMAIL = re.compile(r"^[^@\s<>\"']{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,24}$")
_TELEGRAM = re.compile(r"^@?[A-Za-z][A-Za-z0-9_]{4,31}$")
#: what a contact's value must look like, with an example for the refusal
_SHAPES = {
    "phone": (_PHONE, "+7 495 123-45-67"),
    "email": (_EMAIL, "news@site.example"),
    "telegram": (_TELEGRAM, "@site_news"),
}


class BrandingRefused(ValueError):
    """A branding that may not be kept: ``problems`` names each field at fault (``menu[1].url``, ...)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{f}: {m}" for f, m in problems))


def _plain(text: str, limit: int) -> str:
    cleaned = " ".join(text.split())
    if not cleaned:
        raise ValueError("must not be empty")
    if len(cleaned) > limit:
        raise ValueError(f"at most {limit} characters")
    return cleaned


class MenuLink(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(max_length=_MAX_LABEL)
    url: str = Field(max_length=_MAX_URL)

    @field_validator("label")
    @classmethod
    def _label(cls, value: str) -> str:
        return _plain(value, _MAX_LABEL)


class Contact(BaseModel):
    """A contact button: how a reader reaches the site's people."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["phone", "email", "telegram", "url"]
    value: str = Field(max_length=_MAX_URL)
    label: str | None = Field(default=None, max_length=_MAX_LABEL)

    @field_validator("label")
    @classmethod
    def _label(cls, value: str | None) -> str | None:
        return None if value is None else _plain(value, _MAX_LABEL)

    def href(self) -> str:
        """The button's link: ``tel:``, ``mailto:``, ``https://t.me/…`` or the host's own URL."""
        if self.kind == "phone":
            return "tel:" + re.sub(r"[^0-9+]", "", self.value)
        if self.kind == "email":
            return "mailto:" + quote(self.value, safe="@.+-_")
        if self.kind == "telegram":
            return "https://t.me/" + self.value.lstrip("@")
        return self.value

    def text(self) -> str:
        """What the button says when it has no label of its own."""
        if self.label:
            return self.label
        return {"phone": self.value, "email": self.value, "telegram": "Telegram", "url": self.value}[self.kind]


class Branding(BaseModel):
    """A host's look, as a tenant set it (every field optional: what is unset stays the default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    display_name: str | None = Field(default=None, max_length=MAX_NAME)
    #: the logo's source address on the host; the page shows its CDN copy
    logo_url: str | None = Field(default=None, max_length=_MAX_URL)
    accent: str | None = Field(default=None, max_length=len("#rrggbb"))
    menu: tuple[MenuLink, ...] = Field(default=(), max_length=MAX_MENU)
    contacts: tuple[Contact, ...] = Field(default=(), max_length=MAX_CONTACTS)
    #: the shop's cart template and one-click order on its offer pages (``shared/pages/shop.py``)
    shop: ShopSettings | None = None

    @field_validator("display_name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        return None if value is None else _plain(value, MAX_NAME)

    @field_validator("accent")
    @classmethod
    def _accent(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not _COLOUR.match(value):
            raise ValueError("a colour as #rrggbb, e.g. #e8490f")
        return value.lower()

    def to_json(self) -> str:
        return self.model_dump_json(exclude_defaults=True)

    @classmethod
    def from_json(cls, text: str | None) -> Branding | None:
        return cls.model_validate_json(text) if text else None


def _on_host(url: str, host: str, field: str, problems: list[tuple[str, str]]) -> str:
    try:
        canonical = canonical_url(url)
    except ValueError as exc:
        problems.append((field, f"an absolute http(s) URL: {exc}"))
        return url
    if host_of(canonical).removeprefix("www.") != host.removeprefix("www."):  # www. is the host's alias
        problems.append((field, f"a page of {host} (a menu and a logo are the site's own)"))
    return canonical


def logo_requester(tenant_id: str, host: str) -> str:
    """The requester of ``host``'s logo fetch for ``tenant_id`` (see ``BRANDING_PREFIX``)."""
    return f"{BRANDING_PREFIX}{tenant_id}|{host}"


def logo_waiters(requesters: list[str]) -> list[tuple[str, str]]:
    """The (tenant, host) pairs whose logo a ``media.cached`` brought."""
    out = []
    for r in requesters:
        tenant, sep, host = r.removeprefix(BRANDING_PREFIX).partition("|")
        if r.startswith(BRANDING_PREFIX) and sep and tenant and host:
            out.append((tenant, host))
    return out


def parse_branding(raw: object, host: str) -> Branding:
    """The branding a caller sent for ``host``, or ``BrandingRefused`` naming every field at fault."""
    try:
        branding = Branding.model_validate(raw)
    except ValidationError as exc:
        raise BrandingRefused(
            [(".".join(str(p) for p in err["loc"]) or "branding", err["msg"]) for err in exc.errors()]
        ) from None
    problems: list[tuple[str, str]] = []
    logo = _on_host(branding.logo_url, host, "logo_url", problems) if branding.logo_url else None
    menu = tuple(
        m.model_copy(update={"url": _on_host(m.url, host, f"menu[{i}].url", problems)})
        for i, m in enumerate(branding.menu)
    )
    contacts = []
    for i, c in enumerate(branding.contacts):
        value = c.value.strip()
        shape = _SHAPES.get(c.kind)
        if shape is not None and not shape[0].match(value):
            problems.append((f"contacts[{i}].value", f"not a {c.kind} (e.g. {shape[1]})"))
        elif c.kind == "url":
            value = _on_host(value, host, f"contacts[{i}].value", problems)
        contacts.append(c.model_copy(update={"value": value}))
    shop = branding.shop
    if shop is not None:
        shop, found = shop_problems(shop, host)
        problems += found
    if problems:
        raise BrandingRefused(problems)
    shop = None if shop is None or shop.empty() else shop
    return branding.model_copy(update={"logo_url": logo, "menu": menu, "contacts": tuple(contacts), "shop": shop})


async def apply_branding(
    stores: Stores, publish: Publish, tenant_id: str, host: str, branding: Branding | None, now: datetime
) -> None:
    """Keep ``tenant_id``'s branding of ``host`` (None: none) and announce it, for the API and the console.

    The kvwriter renders the tenant's pages of the host again when it reads the announcement; a logo
    not in the CDN yet is ordered through the host's polite lane (``logo_requester``), and its
    ``media.cached`` renders them again with it. The caller checked the tenant's right on the host.
    """
    await stores.tenants.set_branding(tenant_id, host, None if branding is None else branding.to_json())
    outputs = [Output("hosts.branding", BrandingChanged(host=host, tenant_id=tenant_id, changed_at=now), key=host)]
    if branding is not None and branding.logo_url:
        rec = await stores.images.get(branding.logo_url)
        if rec is None or rec.status.value != "ok":
            logo_host = host_of(branding.logo_url)
            order = CrawlRequest(
                kind=CrawlKind.image,
                url=branding.logo_url,
                host=logo_host,
                requesters=[logo_requester(tenant_id, host)],
                requested_at=now,
                priority=_LOGO_PRIORITY,
            )
            outputs.append(Output("crawl.requests", order, key=logo_host))
    await publish(outputs)


async def logo_state(stores: Stores, branding: Branding | None) -> dict[str, Any]:
    """Where a branding's logo is: ``none``, ``pending`` (on its way to the CDN), ``ok`` or ``failed``."""
    if branding is None or not branding.logo_url:
        return {"status": "none"}
    rec = await stores.images.get(branding.logo_url)
    if rec is None or rec.status.value == "pending":
        return {"status": "pending"}
    if rec.status.value == "ok":
        return {"status": "ok", "cdn_url": rec.cdn_url}
    return {"status": "failed", "reason": rec.reason}
