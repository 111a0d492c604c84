"""A feed's own fetch options and filters, as its webmaster sets them (docs/architecture.md sections 6 and 10).

A staging feed sits behind HTTP authentication or an API gateway, a slow one needs longer than
the crawler's default, and a busy one carries items its webmaster does not want as pages. Per
feed, a webmaster sets (``FeedOptionsIn``, through the API, the CLI and the console):

* ``basic_auth`` (username and password) and extra request ``headers`` (at most ``MAX_HEADERS``,
  no hop-by-hop, conditional or framing header: those are the crawler's), sent only to the
  feed's own origin, never across a redirect to another;
* ``timeout_s``, within ``MIN_TIMEOUT_S`` .. ``MAX_TIMEOUT_S``;
* ``full_text`` (``FullText``): whether an item that is only a summary is published with its
  page's article (``auto``, the default), every item's page is read (``always``) or none
  (``never``): ``cubes/parser/fulltext.py``;
* ``filters``: keep or drop items by category (a name, case-blind) or by a pattern searched in
  the title, the link and the categories (the ``regex`` package, case-blind, at most
  ``MAX_PATTERN`` characters, each search given ``PATTERN_TIMEOUT_S``: a pattern that backtracks
  for ever costs a few milliseconds, and the item is kept and reported). A drop rule wins over
  a keep rule; every item a filter drops is reported (``item.filtered``).

What is secret (the password, the header values) is sealed (``shared/secretbox.py``) into one
token the feed's row keeps and the crawl request carries; what is not (the username, the header
names, the timeout, the filters) is the public ``FeedOptions``, which the API shows. Every value
is bounded here, where it enters.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson
import regex
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shared.secretbox import SecretBox, Unsealable

__all__ = [
    "MAX_HEADERS",
    "MAX_PATTERN",
    "MAX_TIMEOUT_S",
    "MIN_TIMEOUT_S",
    "PATTERN_TIMEOUT_S",
    "BasicAuthIn",
    "FeedFilters",
    "FeedOptions",
    "FeedOptionsIn",
    "FilterVerdict",
    "FullText",
    "OptionsRefused",
    "crawl_fields",
    "fetch_headers",
    "merged_options",
    "options_json",
    "parse_options",
    "seal_options",
]

MIN_TIMEOUT_S = 1.0
#: a feed may ask for two minutes: more would hold a crawler slot of its host's lane that long
MAX_TIMEOUT_S = 120.0
MAX_HEADERS = 10
_MAX_HEADER_NAME = 64
_MAX_HEADER_VALUE = 1024
_MAX_CATEGORIES = 32
_MAX_CATEGORY = 100
MAX_PATTERN = 256
#: one search of one text; a catastrophic pattern is cut off here, the item kept and reported
PATTERN_TIMEOUT_S = 0.05
#: a text searched is at most this long (a title or link longer than this is cut for the filter)
_MAX_TEXT = 2048
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
#: headers the crawler owns: the connection's framing, the conditional GET, the host, compression
_FORBIDDEN_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "proxy-authorization",
        "proxy-connection",
        "if-none-match",
        "if-modified-since",
        "if-match",
        "if-unmodified-since",
        "if-range",
        "range",
        "accept-encoding",
        "user-agent",
    }
)


class FullText(StrEnum):
    """Whether a feed item's page is read for its article (``cubes/parser/fulltext.py``)."""

    #: when the item looks like a summary (no content:encoded, short, "read more"); the page's article
    #: is used only when it is longer than the feed's text
    auto = "auto"
    #: for every item: the page's article whenever it is longer than the feed's text
    always = "always"
    #: never: the feed's text is the page
    never = "never"


class OptionsRefused(ValueError):
    """Options that may not be kept: ``problems`` names each offending field (``options.timeout_s``, ...)."""

    def __init__(self, problems: Iterable[tuple[str, str]]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(f"{f}: {m}" for f, m in self.problems))


class BasicAuthIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    username: str = Field(min_length=1, max_length=256)
    password: str = Field(default="", max_length=1024)

    @field_validator("username")
    @classmethod
    def _no_colon(cls, value: str) -> str:
        if ":" in value or any(c in value for c in "\r\n\0"):
            raise ValueError("a username has no ':' and no line break (RFC 7617)")
        return value


def _category(name: str) -> str:
    return " ".join(name.split()).casefold()


_CATEGORY_ITEMS: dict[str, Any] = {"items": {"type": "string", "minLength": 1, "maxLength": _MAX_CATEGORY}}


class FeedFilters(BaseModel):
    """Which items become pages; empty: all of them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # the document states each name's bound (the validator below checks it, with its own message)
    keep_categories: tuple[str, ...] = Field(default=(), max_length=_MAX_CATEGORIES, json_schema_extra=_CATEGORY_ITEMS)
    drop_categories: tuple[str, ...] = Field(default=(), max_length=_MAX_CATEGORIES, json_schema_extra=_CATEGORY_ITEMS)
    keep_pattern: str | None = Field(default=None, max_length=MAX_PATTERN)
    drop_pattern: str | None = Field(default=None, max_length=MAX_PATTERN)

    @field_validator("keep_categories", "drop_categories")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not name.strip() or len(name) > _MAX_CATEGORY:
                raise ValueError(f"a category is 1 to {_MAX_CATEGORY} characters")
        return tuple(dict.fromkeys(_category(n) for n in value))

    @field_validator("keep_pattern", "drop_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        try:
            _compiled(value)
        except regex.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value

    @property
    def empty(self) -> bool:
        return not (self.keep_categories or self.drop_categories or self.keep_pattern or self.drop_pattern)

    def verdict(self, title: str | None, link: str | None, categories: Iterable[str]) -> FilterVerdict:
        """Whether an item with this title, link and categories becomes a page, and why not."""
        if self.empty:
            return _KEPT
        names = {_category(c) for c in categories}
        texts = [t[:_MAX_TEXT] for t in (title or "", link or "", *sorted(names)) if t]
        dropped = names.intersection(self.drop_categories)
        if dropped:
            return FilterVerdict(False, f"its category {sorted(dropped)[0]!r} is dropped (filters.drop_categories)")
        slow: str | None = None
        if self.drop_pattern:
            hit, slow = _search(self.drop_pattern, texts)
            if hit:
                return FilterVerdict(False, f"it matches filters.drop_pattern {self.drop_pattern!r}")
        if self.keep_categories and not names.intersection(self.keep_categories):
            return FilterVerdict(False, "none of its categories is in filters.keep_categories")
        if self.keep_pattern:
            hit, slow_keep = _search(self.keep_pattern, texts)
            slow = slow or slow_keep
            if not hit and slow_keep is None:
                return FilterVerdict(False, f"it does not match filters.keep_pattern {self.keep_pattern!r}")
        return FilterVerdict(True, "", slow)


@dataclass(frozen=True, slots=True)
class FilterVerdict:
    kept: bool
    #: why the item was dropped ("" when kept)
    reason: str
    #: a pattern whose search ran out of time (the item is then kept): reported to the webmaster
    too_slow: str | None = None


_KEPT = FilterVerdict(True, "")


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern, regex.IGNORECASE)


def _search(pattern: str, texts: list[str]) -> tuple[bool, str | None]:
    """Whether ``pattern`` is found in one of ``texts``; the pattern as the second value if it timed out."""
    compiled = _compiled(pattern)
    for text in texts:
        try:
            if compiled.search(text, timeout=PATTERN_TIMEOUT_S) is not None:
                return True, None
        except TimeoutError:
            return False, pattern
    return False, None


class FeedOptionsIn(BaseModel):
    """What a webmaster sends: the options with their secrets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float | None = Field(default=None, ge=MIN_TIMEOUT_S, le=MAX_TIMEOUT_S)
    basic_auth: BasicAuthIn | None = None
    headers: dict[str, str] = Field(
        default_factory=dict,
        max_length=MAX_HEADERS,
        # the document states the bounds the validator below checks
        json_schema_extra={
            "propertyNames": {"minLength": 1, "maxLength": _MAX_HEADER_NAME},
            "additionalProperties": {"type": "string", "maxLength": _MAX_HEADER_VALUE},
        },
    )
    filters: FeedFilters = Field(default_factory=FeedFilters)
    full_text: FullText = FullText.auto

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        seen: set[str] = set()
        for name, text in value.items():
            low = name.lower()
            if not _TOKEN.match(name) or len(name) > _MAX_HEADER_NAME:
                raise ValueError(f"{name[:_MAX_HEADER_NAME]!r} is not a header name (RFC 9110 token, up to 64)")
            if low in _FORBIDDEN_HEADERS or low.startswith(("sec-", "proxy-")):
                raise ValueError(f"{name} is the crawler's own header")
            if low in seen:
                raise ValueError(f"{name} is given twice")
            seen.add(low)
            if len(text) > _MAX_HEADER_VALUE or any(c in text for c in "\r\n\0"):
                raise ValueError(f"the value of {name} has a line break or is over {_MAX_HEADER_VALUE} characters")
        if "authorization" in seen:
            raise ValueError("give credentials as basic_auth, or an API key under a header of its own")
        return value


class FeedOptions(BaseModel):
    """A feed's options as the store and the API keep them: nothing secret."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float | None = None
    username: str | None = None
    header_names: tuple[str, ...] = ()
    filters: FeedFilters = Field(default_factory=FeedFilters)
    full_text: FullText = FullText.auto

    @property
    def empty(self) -> bool:
        return (
            self.timeout_s is None
            and self.username is None
            and not self.header_names
            and self.filters.empty
            and self.full_text is FullText.auto
        )

    def to_json(self) -> str | None:
        """The feed row's ``options`` column (None when there are none)."""
        return None if self.empty else self.model_dump_json(exclude_defaults=True)

    @classmethod
    def from_json(cls, text: str | None) -> FeedOptions:
        if not text:
            return _NONE
        return cls.model_validate_json(text)


_NONE = FeedOptions()


def parse_options(raw: Any) -> FeedOptionsIn:
    """The options a caller sent (a JSON object), or ``OptionsRefused`` naming every field at fault."""
    try:
        return FeedOptionsIn.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"])
            problems.append((f"options.{where}" if where else "options", err["msg"]))
        raise OptionsRefused(problems) from None


def merged_options(current: str | None, sealed: str | None, change: Any, box: SecretBox) -> FeedOptionsIn | None:
    """The options after ``change`` (a JSON object from a caller), merged over the feed's current ones.

    Like a JSON merge patch (RFC 7396): a key left out keeps what the feed has (so filters can be
    changed without sending the password again), a key given replaces it, a key given as null
    removes it; ``change`` null removes every option. ``OptionsRefused`` names each field at fault.
    A current secret that does not open (the key changed) is kept as it is, unless replaced.
    """
    if change is None:
        return None
    if not isinstance(change, Mapping):
        raise OptionsRefused([("options", "an object: timeout_s, basic_auth, headers, filters, full_text")])
    public = FeedOptions.from_json(current)
    base: dict[str, Any] = {
        "timeout_s": public.timeout_s,
        "filters": public.filters.model_dump(),
        "full_text": public.full_text.value,
    }
    if sealed is not None:
        try:
            opened = box.open(sealed)
        except Unsealable:
            opened = {}
        if isinstance(opened.get("basic"), list) and len(opened["basic"]) == 2:
            base["basic_auth"] = {"username": opened["basic"][0], "password": opened["basic"][1]}
        if isinstance(opened.get("headers"), Mapping):
            base["headers"] = dict(opened["headers"])
    for key, value in change.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return parse_options({k: v for k, v in base.items() if v is not None})


def seal_options(options: FeedOptionsIn, box: SecretBox) -> tuple[FeedOptions, str | None]:
    """The public options and the sealed token of the secret ones (None: nothing secret)."""
    public = FeedOptions(
        timeout_s=options.timeout_s,
        username=options.basic_auth.username if options.basic_auth else None,
        header_names=tuple(options.headers),
        filters=options.filters,
        full_text=options.full_text,
    )
    secret: dict[str, Any] = {}
    if options.basic_auth is not None:
        secret["basic"] = [options.basic_auth.username, options.basic_auth.password]
    if options.headers:
        secret["headers"] = dict(options.headers)
    return public, (box.seal(secret) if secret else None)


def fetch_headers(token: str, box: SecretBox) -> dict[str, str]:
    """The request headers a sealed token stands for (``Unsealable`` when it does not open)."""
    opened = box.open(token)
    headers: dict[str, str] = {}
    extra = opened.get("headers") or {}
    if isinstance(extra, Mapping):
        headers.update({str(k): str(v) for k, v in extra.items()})
    basic = opened.get("basic")
    if isinstance(basic, list) and len(basic) == 2:
        pair = f"{basic[0]}:{basic[1]}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    return headers


def crawl_fields(options: str | None, secret: str | None) -> dict[str, Any]:
    """What a crawl request of a feed carries of its options: the sealed token and the timeout."""
    if options is None and secret is None:
        return {}
    return {"credentials": secret, "timeout_s": FeedOptions.from_json(options).timeout_s}


def options_json(options: FeedOptions) -> dict[str, Any]:
    """The options as the API shows them (``orjson``-ready; the secrets are never in them)."""
    shown: dict[str, Any] = orjson.loads(options.model_dump_json())
    return shown
