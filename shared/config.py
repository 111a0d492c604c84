"""Configuration: ``turbocubes.toml`` + ``TURBOCUBES_<SECTION>_<KEY>``, read once and frozen (DESIGN.md s.7).

Every key has a default, so with no file and no variables everything runs
embedded under ``./var/``. A wrong value fails at start with a ``ConfigError``
that names the key, the value, what was expected and the valid choices.
Handlers never read ``os.environ``; they get these objects.

Each section is a frozen dataclass below. Adding a key = adding a field with a
default (and a line in ``turbocubes.example.toml``; a test checks the two agree).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.errors import ConfigError

__all__ = [
    "ApiConfig",
    "AutoparserConfig",
    "BusConfig",
    "CdnConfig",
    "CrawlerConfig",
    "DelayConfig",
    "FrontendConfig",
    "HttpConfig",
    "KvwriterConfig",
    "MediaConfig",
    "ParserConfig",
    "RuntimeConfig",
    "SchedulerConfig",
    "SearchConfig",
    "Settings",
    "StoreConfig",
    "WordstatConfig",
    "load_settings",
]

ENV_PREFIX = "TURBOCUBES_"
_URL_SCHEMES = {
    "bus": ("sqlite", "kafka"),
    "store": ("sqlite", "postgresql", "postgres"),
    "cdn": ("file", "s3"),
    "blobs": ("file", "s3"),
}


@dataclass(frozen=True)
class BusConfig:
    #: sqlite:///path/bus.db (embedded log) or kafka://host:9092[,host2:9092]
    url: str = "sqlite:///var/bus.db"
    #: ms a producer waits to fill a batch before sending (Kafka linger.ms; embedded flush delay)
    linger_ms: int = 5
    #: client id the Kafka engine announces to the broker
    client_id: str = "turbocubes"


@dataclass(frozen=True)
class StoreConfig:
    #: sqlite:///path/store.db or postgresql://user:pass@host:port/db
    url: str = "sqlite:///var/store.db"
    #: connections in the PostgreSQL pool
    pool_size: int = 10


@dataclass(frozen=True)
class CdnConfig:
    #: where cached media lives: file://var/cdn or s3://bucket?endpoint=http://127.0.0.1:8333
    url: str = "file://var/cdn"
    #: base URL under which the frontend (or a real CDN) serves those files
    public_base_url: str = "/cdn"


@dataclass(frozen=True)
class BlobsConfig:
    #: large message bodies (big YML catalogs) travel as references into this store
    url: str = "file://var/blobs"


@dataclass(frozen=True)
class RuntimeConfig:
    #: attempts before a failing message goes to <topic>.dlq
    max_attempts: int = 5
    #: first retry delay; doubles per attempt, full jitter, capped
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 60.0
    #: a handler running longer than this fails with a (retriable) timeout
    handler_timeout_s: float = 30.0
    #: concurrent key-lanes inside one cube; per-key order is kept. Most handlers spend their time
    #: waiting for a store or the bus (a group commit ends a loop turn later), so many lanes are
    #: cheap and keep the CPU busy: 8 -> 64 took the embedded pipeline's COLD pass from 271 to 345
    #: documents/s (bench/e2e.py). The parser has its own, lower limit (parser.concurrency).
    concurrency: int = 64
    #: records taken from the bus per poll
    batch_size: int = 500
    #: DLQ storm breaker: over this share of the last `window` outcomes dead-lettered -> pause input
    dlq_breaker_window: int = 100
    dlq_breaker_ratio: float = 0.5
    dlq_breaker_cooldown_s: float = 30.0
    #: SIGTERM -> stop intake, finish in-flight work, commit, exit within this many seconds
    shutdown_timeout_s: float = 10.0
    #: /healthz and /metrics; port 0 picks a free one (each cube process gets its own)
    metrics_host: str = "127.0.0.1"
    metrics_port: int = 9300
    #: how often each process publishes its cubes' stats, lag and DLQ counts (the crawler: its lanes)
    status_interval_s: float = 5.0
    #: lag (records, summed over overload_groups) past which low-value work yields; 0 = never
    overload_lag: int = 5000
    #: lag under which low-value work resumes (hysteresis: no flapping around one threshold)
    overload_resume_lag: int = 1000
    #: consumer groups whose lag measures load (not the crawler: politeness paces its backlog)
    overload_groups: list[str] = field(default_factory=lambda: ["parser", "autoparser", "media", "cdn", "kvwriter"])


@dataclass(frozen=True)
class HttpConfig:
    user_agent: str = "TurbocubesBot/0.1 (+https://github.com/turbocubes/turbocubes/blob/main/docs/bot.md)"
    #: CIDRs / hosts the SSRF guard lets through anyway (tests and the demo: 127.0.0.1/32)
    allowlist: list[str] = field(default_factory=list)
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 15.0
    total_timeout_s: float = 60.0
    max_redirects: int = 5


@dataclass(frozen=True)
class CrawlerConfig:
    #: default per-host lane: requests per second, burst, concurrent connections
    rate: float = 1.0
    burst: int = 2
    concurrency: int = 2
    #: the adaptive policy never goes above this many requests/s for any host
    max_rate: float = 10.0
    #: per-host overrides: { "example.com" = { rate = 5.0, burst = 5, concurrency = 4 } }
    host_overrides: dict[str, dict[str, float]] = field(default_factory=dict)
    #: a feed's most bytes: a big shop's whole YML catalog (a body over inline_body_max streams to disk on
    #: its way in and is read back as a stream, so memory is not the bound; parser.max_body_bytes is the
    #: most of a body that is not a streamable catalog)
    max_feed_bytes: int = 1024 * 1024 * 1024
    max_image_bytes: int = 20 * 1024 * 1024
    max_video_bytes: int = 200 * 1024 * 1024
    max_page_bytes: int = 5 * 1024 * 1024
    #: bodies up to this size travel inside the message; larger ones as a blob reference
    inline_body_max: int = 256 * 1024
    robots_ttl_s: float = 86_400.0
    #: identical requests within this window share one fetch
    coalesce_window_s: float = 60.0
    #: a request whose host lane cannot start it within this many seconds (paused by Retry-After,
    #: backing off) is answered `throttled` at once instead of holding a worker (below handler_timeout_s)
    max_lane_wait_s: float = 20.0
    #: hosts crawled at the same time by one crawler process (the cube's concurrent key-lanes)
    parallel_hosts: int = 4096


@dataclass(frozen=True)
class SchedulerConfig:
    min_interval_s: float = 120.0
    max_interval_s: float = 21_600.0
    #: +/- share of the interval added at random so feeds do not fall due together
    jitter: float = 0.1
    tick_s: float = 1.0
    #: WebSub callback endpoint served by the scheduler ("" = no WebSub)
    websub_callback_base: str = ""
    websub_port: int = 8082
    #: address the WebSub callback server binds (put a reverse proxy in front for the public URL)
    websub_host: str = "127.0.0.1"
    #: lease asked from a WebSub hub; renewed before it runs out (hubs may grant less)
    websub_lease_s: float = 864_000.0
    #: feeds of one host fall due at least this far apart (shrunk to fit one interval on big hosts)
    host_gap_s: float = 10.0
    #: due feeds taken from the store per tick (the rest wait for the next tick, most overdue first)
    tick_batch: int = 500
    #: hosts of autoparser feeds: how often their sitemap.xml and home page are read for new articles
    discovery_interval_s: float = 3600.0
    #: new article pages ordered per host per discovery round (the rest come in later rounds)
    discovery_batch: int = 200


@dataclass(frozen=True)
class ParserConfig:
    #: Turbo's documented limit on items per feed
    max_items: int = 1000
    #: Turbo's documented limit on one item's content
    max_item_bytes: int = 1024 * 1024
    #: the most bytes of a body read whole into memory: a feed that is not a YML catalog read as a stream
    #: (RSS, Atom, Turbo, JSON, a catalog whose charset only its whole body tells), or a gzip file inflated
    max_body_bytes: int = 50 * 1024 * 1024
    #: replaces runtime.handler_timeout_s for the parser: a YML catalog's first load is one handler call
    #: publishing every offer (~11,000 offers/s on a busy 2-CPU machine, bench/parser.py (d)); past the
    #: limit the catalog would be retried, dead-lettered, never loaded. 120 s: ~1,000,000 offers
    handler_timeout_s: float = 120.0
    #: replaces runtime.concurrency for the parser: parsing is CPU work on the event loop, and a
    #: catalog in flight holds all its offers in memory, so more feeds at once only add memory
    concurrency: int = 8


@dataclass(frozen=True)
class MediaConfig:
    #: a parked document is released this long after parking, with its missing media removed
    deadline_s: float = 600.0
    max_pixels: int = 50_000_000
    #: permanent image failures are re-tried after this long
    failure_retry_s: float = 7 * 86_400.0
    #: a fetch that failed for now (5xx, timeout) is ordered again this many times before it counts as failed
    fetch_retries: int = 2
    #: ... and then it may be ordered again after this long (shorter than failure_retry_s: it may heal)
    transient_retry_s: float = 1800.0
    #: crawl.requests priority of media orders (0 urgent .. 9 bulk): parked documents wait on them
    order_priority: int = 3
    #: image-registry "ok" records the media and delay cubes each remember (LRU, ~200 bytes each; 0 = off)
    lookup_cache_size: int = 50_000


@dataclass(frozen=True)
class DelayConfig:
    sweep_interval_s: float = 5.0
    #: parked documents released per sweep at most (the next sweep takes the rest)
    sweep_batch: int = 1000
    #: a released document is kept until its publish is acknowledged; one unconfirmed this long
    #: (a crash, a failed publish) is published again by the sweep, a duplicate at worst.
    #: Far above a normal publish + commit (under a second), so a slow broker costs no duplicates.
    release_lease_s: float = 60.0


@dataclass(frozen=True)
class KvwriterConfig:
    #: iframes survive sanitizing (in the parser and on the page) only when they point at these
    #: video hosts; the frontend's Content-Security-Policy allows frames from them and nothing else
    video_hosts: list[str] = field(
        default_factory=lambda: [
            "www.youtube.com",
            "www.youtube-nocookie.com",
            "player.vimeo.com",
            "rutube.ru",
            "vk.com",
            "vkvideo.ru",
        ]
    )


@dataclass(frozen=True)
class ApiConfig:
    host: str = "127.0.0.1"
    port: int = 8081
    max_upload_bytes: int = 10 * 1024 * 1024
    #: per-tenant defaults (changed at run time through the admin API)
    tenant_rps: float = 10.0
    tenant_burst: int = 20
    tenant_bytes_per_s: float = 5 * 1024 * 1024
    #: global bulkhead: requests processed at once
    concurrency: int = 64
    #: the share of the bulkhead one tenant may hold: floor(concurrency * share), at least 1; a quarter
    #: leaves room for others under any one tenant's burst (four tenants at their cap fill it)
    tenant_concurrency_share: float = 0.25
    #: upload-topic lag above which uploads are shed with 503
    shed_lag: int = 10_000
    #: sha256 hex of the admin token ("" = admin API off)
    admin_token_sha256: str = ""
    #: API instances sharing the tenant limits: each enforces 1/instances of every rate and burst
    instances: int = 1
    #: the consumer group whose lag on partner.uploads is read for load shedding
    shed_group: str = "parser"
    #: upload bodies up to this size travel inside the partner.uploads message, larger ones as a blob
    inline_body_max: int = 256 * 1024
    #: public URL of the API, used in links printed to the user (the docs page is at <public_url>/docs)
    public_url: str = "http://127.0.0.1:8081"
    #: self-service sign-up (POST /api/v1/signup): new tenants per client address, per hour and at once
    signup_enabled: bool = True
    signup_per_hour: float = 10.0
    signup_burst: int = 3
    #: DNS servers ("ip" or "ip:port") for TXT host verification; empty: the system's resolvers
    dns_servers: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FrontendConfig:
    host: str = "127.0.0.1"
    port: int = 8080
    #: public URL of the frontend, used in links printed to the user
    public_url: str = "http://127.0.0.1:8080"
    #: a webmaster console sign-in lasts this long (12 h: a working day, then sign in again)
    session_ttl_s: float = 43_200.0


@dataclass(frozen=True)
class SearchConfig:
    #: a title word weighs this many text words in BM25 (shared/search/ranking.py)
    title_weight: float = 5.0
    #: extra weight of brand-new news (1.0: news published now counts double); 0 = no freshness
    freshness_boost: float = 1.0
    #: age at which news keeps half its extra weight (2 days)
    freshness_half_life_s: float = 172_800.0
    #: publish every answered search to search.queries for query statistics (false: count nothing)
    publish_queries: bool = True
    #: request header a trusted edge sets to the searcher's region, e.g. "X-Region" ("" = none)
    region_header: str = ""
    #: "CIDR region" lines giving a searcher's region by address when no header says it
    region_ranges: list[str] = field(default_factory=list)
    #: searches waiting to be published at most; past that new ones are dropped (and counted in metrics)
    queue_max: int = 10_000


@dataclass(frozen=True)
class WordstatConfig:
    #: counts below this show as "< N", and queries searched fewer times are never listed (privacy)
    privacy_threshold: int = 5
    #: months of history a frequency shows
    history_months: int = 24
    #: how long a search event's id is remembered so a redelivery is not counted twice (> topic retention)
    dedupe_window_s: float = 14 * 86_400.0


@dataclass(frozen=True)
class AutoparserConfig:
    #: "" = the model shipped with the package
    model_path: str = ""
    #: refuse a page whose extracted text is below this share of the page's main visible text
    min_completeness: float = 0.6


@dataclass(frozen=True)
class Settings:
    bus: BusConfig = field(default_factory=BusConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    cdn: CdnConfig = field(default_factory=CdnConfig)
    blobs: BlobsConfig = field(default_factory=BlobsConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    http: HttpConfig = field(default_factory=HttpConfig)
    crawler: CrawlerConfig = field(default_factory=CrawlerConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    parser: ParserConfig = field(default_factory=ParserConfig)
    media: MediaConfig = field(default_factory=MediaConfig)
    delay: DelayConfig = field(default_factory=DelayConfig)
    kvwriter: KvwriterConfig = field(default_factory=KvwriterConfig)
    api: ApiConfig = field(default_factory=ApiConfig)
    frontend: FrontendConfig = field(default_factory=FrontendConfig)
    autoparser: AutoparserConfig = field(default_factory=AutoparserConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    wordstat: WordstatConfig = field(default_factory=WordstatConfig)

    def replace(self, **sections: dict[str, Any]) -> Settings:
        """A copy with some keys changed: ``settings.replace(bus={"url": "kafka://..."})``."""
        out: dict[str, Any] = {}
        for name, changes in sections.items():
            current = getattr(self, name)
            out[name] = dataclasses.replace(current, **changes)
        return dataclasses.replace(self, **out)


# --------------------------------------------------------------------------- loading


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _coerce(key: str, value: Any, tp: Any, from_env: bool) -> Any:
    """Turn a TOML or environment value into ``tp``, or raise ConfigError naming ``key``."""
    origin = typing.get_origin(tp)
    if tp is bool:
        if isinstance(value, bool):
            return value
        words = ("1", "true", "yes", "on", "0", "false", "no", "off")
        if from_env and isinstance(value, str) and value.lower() in words:
            return value.lower() in words[:4]
        raise ConfigError(key, value, "a boolean", ["true", "false"])
    if tp is int:
        if isinstance(value, bool):
            raise ConfigError(key, value, "an integer")
        try:
            return int(value) if (from_env or isinstance(value, int)) else _fail(key, value, "an integer")
        except (TypeError, ValueError):
            raise ConfigError(key, value, "an integer") from None
    if tp is float:
        if isinstance(value, bool):
            raise ConfigError(key, value, "a number")
        try:
            return float(value) if (from_env or isinstance(value, (int, float))) else _fail(key, value, "a number")
        except (TypeError, ValueError):
            raise ConfigError(key, value, "a number") from None
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(key, value, "a string")
        return value
    if origin is list:
        if from_env and isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(key, value, "a list of strings")
        return list(value)
    if origin is dict:
        if from_env and isinstance(value, str):
            import orjson

            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                raise ConfigError(key, value, "a JSON object") from None
        if not isinstance(value, dict):
            raise ConfigError(key, value, "a table")
        return dict(value)
    if origin in (types.UnionType, typing.Union):
        return value
    raise ConfigError(key, value, f"a {_type_name(tp)}")


def _fail(key: str, value: Any, expected: str) -> Any:
    raise ConfigError(key, value, expected)


def _validate(settings: Settings) -> None:
    for section, schemes in _URL_SCHEMES.items():
        url = getattr(settings, section).url
        scheme = url.split("://", 1)[0] if "://" in url else ""
        if scheme not in schemes:
            raise ConfigError(f"{section}.url", url, "a URL whose scheme is one of the engines", list(schemes))
    positive = {
        "runtime.max_attempts": settings.runtime.max_attempts,
        "runtime.concurrency": settings.runtime.concurrency,
        "runtime.batch_size": settings.runtime.batch_size,
        "parser.concurrency": settings.parser.concurrency,
        "crawler.rate": settings.crawler.rate,
        "crawler.burst": settings.crawler.burst,
        "crawler.concurrency": settings.crawler.concurrency,
        "scheduler.min_interval_s": settings.scheduler.min_interval_s,
        "search.title_weight": settings.search.title_weight,
        "search.freshness_half_life_s": settings.search.freshness_half_life_s,
        "search.queue_max": settings.search.queue_max,
        "wordstat.privacy_threshold": settings.wordstat.privacy_threshold,
        "wordstat.history_months": settings.wordstat.history_months,
        "wordstat.dedupe_window_s": settings.wordstat.dedupe_window_s,
    }
    for key, value in positive.items():
        if value <= 0:
            raise ConfigError(key, value, "a value greater than 0")
    if settings.scheduler.max_interval_s < settings.scheduler.min_interval_s:
        raise ConfigError(
            "scheduler.max_interval_s", settings.scheduler.max_interval_s, "at least scheduler.min_interval_s"
        )
    if settings.search.freshness_boost < 0:
        raise ConfigError("search.freshness_boost", settings.search.freshness_boost, "0 or more")
    if not 0 < settings.api.tenant_concurrency_share <= 1:
        raise ConfigError("api.tenant_concurrency_share", settings.api.tenant_concurrency_share, "a share in (0, 1]")
    if settings.api.concurrency < 1:
        raise ConfigError("api.concurrency", settings.api.concurrency, "a value greater than 0")
    if not 0 < settings.runtime.dlq_breaker_ratio <= 1:
        raise ConfigError("runtime.dlq_breaker_ratio", settings.runtime.dlq_breaker_ratio, "a share in (0, 1]")


def load_settings(
    path: str | Path | None = None,
    env: typing.Mapping[str, str] | None = None,
) -> Settings:
    """Read ``path`` (default ``./turbocubes.toml`` if present) and the environment; freeze; validate."""
    env = os.environ if env is None else env
    if path is None:
        path = env.get(ENV_PREFIX + "CONFIG") or ("turbocubes.toml" if Path("turbocubes.toml").exists() else None)
    raw: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.exists():
            raise ConfigError("--config", str(p), "an existing TOML file")
        try:
            raw = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError("--config", str(p), f"valid TOML ({exc})") from None

    section_types = {f.name: f.type for f in dataclasses.fields(Settings)}
    hints = typing.get_type_hints(Settings)
    for name in raw:
        if name not in section_types:
            raise ConfigError(name, raw[name], "a known section", sorted(section_types))

    sections: dict[str, Any] = {}
    for name in section_types:
        cls = hints[name]
        cls_hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        given = raw.get(name, {})
        if not isinstance(given, dict):
            raise ConfigError(name, given, "a table")
        known = {f.name for f in dataclasses.fields(cls)}
        for key, value in given.items():
            if key not in known:
                raise ConfigError(f"{name}.{key}", value, f"a known key of [{name}]", sorted(known))
            values[key] = _coerce(f"{name}.{key}", value, cls_hints[key], from_env=False)
        for key in known:
            env_key = f"{ENV_PREFIX}{name.upper()}_{key.upper()}"
            if env_key in env:
                values[key] = _coerce(env_key, env[env_key], cls_hints[key], from_env=True)
        sections[name] = cls(**values)
    settings = Settings(**sections)
    _validate(settings)
    return settings


# --------------------------------------------------------------------------- the example file


def _field_comments(cls: type) -> dict[str, str]:
    """The ``#:`` comment lines written above each field of a section dataclass."""
    import inspect

    comments: dict[str, str] = {}
    pending: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
        elif ":" in stripped and not stripped.startswith(("class ", "@", '"', "#")):
            name = stripped.split(":", 1)[0].strip()
            if name.isidentifier() and pending:
                comments[name] = " ".join(pending)
            pending = []
        elif stripped:
            pending = []
    return comments


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def example_toml() -> str:
    """``turbocubes.example.toml``: every key with its default and its comment (a test keeps it current)."""
    out = [
        "# turbocubes configuration: every key with its default. Copy to turbocubes.toml and change what",
        "# you need; any key can also be set as TURBOCUBES_<SECTION>_<KEY> (lists: comma-separated,",
        "# tables: JSON). Generated from shared/config.py by `turbocubes config example`.",
    ]
    hints = typing.get_type_hints(Settings)
    for f in dataclasses.fields(Settings):
        cls = hints[f.name]
        out += ["", f"[{f.name}]"]
        comments = _field_comments(cls)
        for sf in dataclasses.fields(cls):
            factory: Any = sf.default_factory
            default = sf.default if sf.default is not dataclasses.MISSING else factory()
            if sf.name in comments:
                out.append(f"# {comments[sf.name]}")
            out.append(f"{sf.name} = {_toml_value(default)}")
    return "\n".join(out) + "\n"
