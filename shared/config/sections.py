"""The sections of ``turbocubes.toml``: every key, its default, its meaning and its rule (docs/architecture.md s.7).

Adding a key = adding a field with a default and a ``#:`` comment; the rule a
value must follow goes on the field (``Field(gt=0)``) or in a validator, and
``turbocubes.example.toml`` is generated from these classes (a test keeps it
current). Every number has its bounds and every table its model: a value that
cannot work (a negative timeout, a pool of 0, a misspelt key in a host's lane)
fails at start naming its key, whether it came from the file, the environment or
``Settings.replace`` (``tests/unit/shared/test_config_bounds.py`` walks them all).
"""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from shared.config.section import SHARE, Section, refuse, tcp_port, url_schemes

__all__ = [
    "ApiConfig",
    "AutoparserConfig",
    "BlobsConfig",
    "BusConfig",
    "CdnConfig",
    "CrawlerConfig",
    "DelayConfig",
    "FrontendConfig",
    "HostLane",
    "HttpConfig",
    "IndexerConfig",
    "KvwriterConfig",
    "MediaConfig",
    "NotifyConfig",
    "ParserConfig",
    "RuntimeConfig",
    "SchedulerConfig",
    "SearchConfig",
    "SecretsConfig",
    "StoreConfig",
    "WordstatConfig",
]


#: the event loops a process can run on (``shared/runtime/loops.py``)
EVENT_LOOPS = ("auto", "uvloop", "asyncio")
#: the codecs aiokafka can write ("none": no compression)
COMPRESSIONS = ("zstd", "lz4", "snappy", "gzip", "none")


class BusConfig(Section):
    #: sqlite:///path/bus.db (embedded log) or kafka://host:9092[,host2:9092]
    url: str = "sqlite:///var/bus.db"
    #: ms a producer waits to fill a batch before sending (Kafka linger.ms; embedded flush delay)
    linger_ms: int = Field(default=5, ge=0, le=60_000)
    #: client id the Kafka engine announces to the broker
    client_id: str = "turbocubes"
    #: Kafka producer codec: zstd, lz4, snappy, gzip or none (engines on one machine: none)
    compression: str = "zstd"

    _url = url_schemes("sqlite", "kafka")

    # What compression costs, for the choice: on a batch of 30 documents of ~3 KB of varied text (a
    # produce request's worth), zstd (level 3) encodes in ~0.7 ms at a ratio of 2.7, decodes in
    # ~0.17 ms; aiokafka's lz4 is level 9 (high compression; no setting for it): ~2.4 ms at 1.9, so
    # it is the dearer one here. The broker decompresses every batch to validate it. none costs
    # neither side anything (per ~1 KB record hop on one broker, ours ~66 us and the broker's ~50
    # against zstd's ~85 / ~62) but carries and stores ~2.7x the bytes: the choice for engines on one
    # machine, where nothing crosses a wire; zstd is the default for a cluster.
    @field_validator("compression")
    @classmethod
    def _codec(cls, v: str) -> str:
        if v not in COMPRESSIONS:
            raise refuse("a Kafka compression codec", list(COMPRESSIONS))
        return v


class StoreConfig(Section):
    #: sqlite:///path/store.db or postgresql://user:pass@host:port/db
    url: str = "sqlite:///var/store.db"
    #: connections in the PostgreSQL pool
    pool_size: int = Field(default=10, gt=0)
    #: accept a PostgreSQL server that may lose acknowledged commits (synchronous_commit, fsync or
    #: full_page_writes off): for throwaway data only; the stores refuse such a server otherwise
    accept_lossy_commits: bool = False

    _url = url_schemes("sqlite", "postgresql", "postgres")


class CdnConfig(Section):
    #: where cached media lives: file://var/cdn or s3://bucket?endpoint=http://127.0.0.1:8333
    url: str = "file://var/cdn"
    #: base URL under which the frontend (or a real CDN) serves those files
    public_base_url: str = "/cdn"

    _url = url_schemes("file", "s3")


class BlobsConfig(Section):
    #: large message bodies (big YML catalogs) travel as references into this store
    url: str = "file://var/blobs"

    _url = url_schemes("file", "s3")


class RuntimeConfig(Section):
    #: attempts before a failing message goes to <topic>.dlq
    max_attempts: int = Field(default=5, gt=0)
    #: first retry delay; doubles per attempt, full jitter, capped
    backoff_base_s: float = Field(default=0.5, gt=0)
    backoff_cap_s: float = Field(default=60.0, gt=0)
    #: a handler that makes no progress for this long fails with a (retriable) timeout: counted from its
    #: start, or from the last step it said it finished (Context.progress, Context.emit)
    handler_timeout_s: float = Field(default=30.0, gt=0)
    #: concurrent key-lanes inside one cube; per-key order is kept. Most handlers spend their time
    #: waiting for a store or the bus (a group commit ends a loop turn later), so many lanes are
    #: cheap and keep the CPU busy: 8 -> 64 took the embedded pipeline's COLD pass from 271 to 345
    #: documents/s (bench/e2e.py). The parser has its own, lower limit (parser.concurrency).
    concurrency: int = Field(default=64, gt=0)
    #: records taken from the bus per poll
    batch_size: int = Field(default=500, gt=0)
    #: the processes' event loop: auto (uvloop on Kafka when installed, else asyncio), uvloop or asyncio
    event_loop: str = "auto"
    #: DLQ storm breaker: over this share of the last `window` outcomes dead-lettered -> pause input
    dlq_breaker_window: int = Field(default=100, gt=0)
    dlq_breaker_ratio: float = Field(default=0.5, gt=0, le=1, json_schema_extra=SHARE)
    dlq_breaker_cooldown_s: float = Field(default=30.0, gt=0)
    #: SIGTERM -> stop intake, finish in-flight work, commit, exit within this many seconds
    shutdown_timeout_s: float = Field(default=10.0, gt=0)
    #: worker processes per cube process for CPU-heavy partner content: an item past 16 KB of HTML is
    #: prepared (parser) and rendered (kvwriter) in one, under a deadline that kills it (shared/offload.py);
    #: started on first use, so a process that never sees such an item starts none
    offload_workers: int = Field(default=1, gt=0)
    #: /healthz and /metrics; port 0 picks a free one (each cube process gets its own)
    metrics_host: str = "127.0.0.1"
    metrics_port: int = tcp_port(9300)
    #: how often each process publishes its cubes' stats, lag and DLQ counts (the crawler: its lanes)
    status_interval_s: float = Field(default=5.0, gt=0)
    #: lag (records, summed over overload_groups) past which low-value work yields; 0 = never
    overload_lag: int = Field(default=5000, ge=0)
    #: lag under which low-value work resumes (hysteresis: no flapping around one threshold)
    overload_resume_lag: int = Field(default=1000, ge=0)
    #: consumer groups whose lag measures load (not the crawler: politeness paces its backlog)
    overload_groups: list[str] = Field(default_factory=lambda: ["parser", "autoparser", "media", "cdn", "kvwriter"])

    @field_validator("event_loop")
    @classmethod
    def _loop(cls, v: str) -> str:
        if v not in EVENT_LOOPS:
            raise refuse("an event loop", list(EVENT_LOOPS))
        return v

    @field_validator("backoff_cap_s")
    @classmethod
    def _cap_not_under_base(cls, value: float, info: ValidationInfo) -> float:
        base = info.data.get("backoff_base_s")
        if base is not None and value < base:
            raise refuse("at least runtime.backoff_base_s")
        return value

    @field_validator("overload_resume_lag")
    @classmethod
    def _resume_not_over_pause(cls, value: int, info: ValidationInfo) -> int:
        pause = info.data.get("overload_lag")
        if pause and value > pause:
            raise refuse("at most runtime.overload_lag (work resumes below the lag it paused at)")
        return value


class HttpConfig(Section):
    user_agent: str = "TurbocubesBot/0.1 (+https://github.com/turbocubes/turbocubes/blob/main/docs/bot.md)"
    #: CIDRs / hosts the SSRF guard lets through anyway (tests and the demo: 127.0.0.1/32)
    allowlist: list[str] = Field(default_factory=list)
    connect_timeout_s: float = Field(default=5.0, gt=0)
    read_timeout_s: float = Field(default=15.0, gt=0)
    total_timeout_s: float = Field(default=60.0, gt=0)
    #: redirects followed per fetch (0: none)
    max_redirects: int = Field(default=5, ge=0, le=50)


class HostLane(Section):
    """One host's lane where it differs from the defaults (``crawler.host_overrides``); unset: the default."""

    #: requests per second, burst and concurrent connections of the host's lane
    rate: float | None = Field(default=None, gt=0)
    burst: int | None = Field(default=None, gt=0)
    concurrency: int | None = Field(default=None, gt=0)
    #: the adaptive policy never goes above this many requests/s for the host
    max_rate: float | None = Field(default=None, gt=0)


class CrawlerConfig(Section):
    #: default per-host lane: requests per second, burst, concurrent connections
    rate: float = Field(default=1.0, gt=0)
    burst: int = Field(default=2, gt=0)
    concurrency: int = Field(default=2, gt=0)
    #: the adaptive policy never goes above this many requests/s for any host (nor above its rate)
    max_rate: float = Field(default=10.0, gt=0)
    #: per-host lanes: { "example.com" = { rate = 5.0, burst = 5, concurrency = 4, max_rate = 20.0 } };
    #: "*.example.com" covers its subdomains
    host_overrides: dict[str, HostLane] = Field(default_factory=dict)
    #: a feed's most bytes: a big shop's whole YML catalog (a body over inline_body_max streams to disk on
    #: its way in and is read back as a stream, so memory is not the bound; parser.max_body_bytes is the
    #: most of a body that is not a streamable catalog)
    max_feed_bytes: int = Field(default=1024 * 1024 * 1024, gt=0)
    max_image_bytes: int = Field(default=20 * 1024 * 1024, gt=0)
    max_video_bytes: int = Field(default=200 * 1024 * 1024, gt=0)
    max_page_bytes: int = Field(default=5 * 1024 * 1024, gt=0)
    #: bodies up to this size travel inside the message; larger ones as a blob reference
    inline_body_max: int = Field(default=256 * 1024, ge=0)
    robots_ttl_s: float = Field(default=86_400.0, gt=0)
    #: the longest robots.txt Crawl-delay honoured, in seconds; a longer one is held to this and reported
    #: to the feeds' webmasters (robots.crawl_delay_capped): 86,400 would let one request a day through
    max_crawl_delay_s: float = Field(default=30.0, gt=0, le=86_400.0)
    #: identical requests within this window share one fetch
    coalesce_window_s: float = Field(default=60.0, ge=0)
    #: a request whose host lane cannot start it within this many seconds (paused by Retry-After,
    #: backing off) is answered `throttled` at once instead of holding a worker (below handler_timeout_s)
    max_lane_wait_s: float = Field(default=20.0, gt=0)
    #: hosts crawled at the same time by one crawler process (the cube's concurrent key-lanes)
    parallel_hosts: int = Field(default=4096, gt=0)


class SchedulerConfig(Section):
    min_interval_s: float = Field(default=120.0, gt=0)
    max_interval_s: float = Field(default=21_600.0, gt=0)
    #: +/- share of the interval added at random so feeds do not fall due together
    jitter: float = Field(default=0.1, ge=0, lt=1)
    tick_s: float = Field(default=1.0, gt=0)
    #: WebSub callback endpoint served by the scheduler ("" = no WebSub)
    websub_callback_base: str = ""
    websub_port: int = tcp_port(8082)
    #: address the WebSub callback server binds (put a reverse proxy in front for the public URL)
    websub_host: str = "127.0.0.1"
    #: lease asked from a WebSub hub; renewed before it runs out (hubs may grant less)
    websub_lease_s: float = Field(default=864_000.0, gt=0)
    #: feeds of one host fall due at least this far apart (shrunk to fit one interval on big hosts)
    host_gap_s: float = Field(default=10.0, ge=0)
    #: due feeds taken from the store per tick (the rest wait for the next tick, most overdue first)
    tick_batch: int = Field(default=500, gt=0)
    #: hosts of autoparser feeds: how often their sitemap.xml and home page are read for new articles
    discovery_interval_s: float = Field(default=3600.0, gt=0)
    #: new article pages ordered per host per discovery round (the rest come in later rounds)
    discovery_batch: int = Field(default=200, gt=0)

    @field_validator("max_interval_s")
    @classmethod
    def _not_under_min(cls, value: float, info: ValidationInfo) -> float:
        low = info.data.get("min_interval_s")
        if low is not None and value < low:
            raise refuse("at least scheduler.min_interval_s")
        return value


class ParserConfig(Section):
    #: Turbo's documented limit on items per feed
    max_items: int = Field(default=1000, gt=0)
    #: Turbo's documented limit on one item's content
    max_item_bytes: int = Field(default=1024 * 1024, gt=0)
    #: the most bytes of a body read whole into memory: a feed that is not a YML catalog read as a stream
    #: (RSS, Atom, Turbo, JSON, a catalog whose charset only its whole body tells), or a gzip file inflated
    max_body_bytes: int = Field(default=50 * 1024 * 1024, gt=0)
    #: replaces runtime.handler_timeout_s for the parser: the longest one step may take, a feed parsed
    #: whole or one 1,000-offer batch of a catalog's first load (each batch counts as progress, so a
    #: catalog of any size is judged by its batches, not its total); a feed of max_body_bytes parses in
    #: well under it on a busy 2-CPU machine
    handler_timeout_s: float = Field(default=120.0, gt=0)
    #: the most one item's preparation (Turbo blocks, sanitizing) may take in its worker process (an item
    #: past 16 KB of HTML); past it the worker is stopped and the item refused (item.too_complex). Real
    #: content takes milliseconds (~15 us per KB); 200,000 nested <div> took 137 s
    item_deadline_s: float = Field(default=10.0, gt=0)
    #: replaces runtime.concurrency for the parser: parsing is CPU work on the event loop, and a
    #: catalog in flight holds all its offers in memory, so more feeds at once only add memory
    concurrency: int = Field(default=8, gt=0)


class MediaConfig(Section):
    #: a parked document is released this long after parking, with its missing media removed
    deadline_s: float = Field(default=600.0, gt=0)
    max_pixels: int = Field(default=50_000_000, gt=0)
    #: permanent image failures are re-tried after this long (at once when the webmaster asks: fetch now, a check)
    failure_retry_s: float = Field(default=7 * 86_400.0, gt=0)
    #: a fetch that failed for now (5xx, timeout) is ordered again this many times before it counts as failed
    fetch_retries: int = Field(default=2, ge=0)
    #: ... and then it may be ordered again after this long (shorter than failure_retry_s: it may heal)
    transient_retry_s: float = Field(default=1800.0, gt=0)
    #: crawl.requests priority of media orders (0 urgent .. 9 bulk): parked documents wait on them
    order_priority: int = Field(default=3, ge=0, le=9)
    #: image-registry "ok" records the media and delay cubes each remember (LRU, ~200 bytes each; 0 = off)
    lookup_cache_size: int = Field(default=50_000, ge=0)
    #: ... each read again from the registry once this old: a copy replaced (a source image changed)
    #: reaches new pages within this long. One query per image per 5 minutes costs nothing
    lookup_cache_max_age_s: float = Field(default=300.0, gt=0)
    #: a cached image is re-checked at its source this long after its last check (a conditional GET:
    #: 304 keeps the copy, new bytes make a new copy and refresh the pages that show it); 0 = never.
    #: A week: images rarely change in place, and a shop's 1,000,000 pictures then cost ~2 requests/s
    recheck_s: float = Field(default=7 * 86_400.0, ge=0)
    #: an image whose own response says how long it stays fresh (Cache-Control max-age, Expires) is
    #: re-checked when that runs out, held between these: at most daily (a shop's million pictures
    #: asked about hourly would be ~280 requests/s) and at least monthly (an image changed in place
    #: despite a year's max-age is seen within a month); "ask every time" (no-cache) means the floor
    recheck_min_s: float = Field(default=86_400.0, gt=0)
    recheck_max_s: float = Field(default=30 * 86_400.0, gt=0)
    #: how often the cdn cube looks for images due a re-check, and how many it orders per look at most
    recheck_sweep_s: float = Field(default=60.0, gt=0)
    recheck_batch: int = Field(default=500, gt=0)
    #: crawl.requests priority of re-checks (0 urgent .. 9 bulk): nobody waits on them
    recheck_priority: int = Field(default=9, ge=0, le=9)
    #: a page that lost an image for good (404, not an image, ...) or, in the parser, an image or a
    #: table is held back, not published without it (shared/pages/completeness.py); false: published, reported
    hold_incomplete: bool = True

    @field_validator("recheck_max_s")
    @classmethod
    def _recheck_not_under_min(cls, value: float, info: ValidationInfo) -> float:
        low = info.data.get("recheck_min_s")
        if low is not None and value < low:
            raise refuse("at least media.recheck_min_s")
        return value


class DelayConfig(Section):
    sweep_interval_s: float = Field(default=5.0, gt=0)
    #: parked documents released per sweep at most (the next sweep takes the rest)
    sweep_batch: int = Field(default=1000, gt=0)
    #: a released document is kept until its publish is acknowledged; one unconfirmed this long
    #: (a crash, a failed publish) is published again by the sweep, a duplicate at worst.
    #: Far above a normal publish + commit (under a second), so a slow broker costs no duplicates.
    release_lease_s: float = Field(default=60.0, gt=0)


class KvwriterConfig(Section):
    #: iframes survive sanitizing (in the parser and on the page) only when they point at these
    #: players: host/path (a path ending in / is a prefix; a bare host allows every path); the
    #: frontend's Content-Security-Policy allows frames from them and nothing else
    video_hosts: list[str] = Field(
        default_factory=lambda: [
            "www.youtube.com/embed/",
            "www.youtube-nocookie.com/embed/",
            "player.vimeo.com/video/",
            "rutube.ru/play/embed/",
            "vk.com/video_ext.php",
            "vkvideo.ru/video_ext.php",
        ]
    )
    #: the most rendering one page may take in its worker process (a document past 16 KB of HTML), above
    #: parser.item_deadline_s since the page sanitizes the parser's output again; past it the document
    #: is dead-lettered with the reason
    render_deadline_s: float = Field(default=20.0, gt=0)


class IndexerConfig(Section):
    #: how often the indexer looks for written pages to index (s): a page is searchable about this
    #: long after its write, plus a batch; an idle look is one read of an empty queue
    interval_s: float = Field(default=0.25, gt=0)
    #: pages analyzed and written per transaction: large enough to amortize the commit, small
    #: enough that the SQLite write lock is held for tens of milliseconds at most
    batch: int = Field(default=128, gt=0)
    #: a round drains batch after batch for at most this long (s), then lets the next round go on
    round_budget_s: float = Field(default=2.0, gt=0)


class ApiConfig(Section):
    host: str = "127.0.0.1"
    port: int = tcp_port(8081)
    max_upload_bytes: int = Field(default=10 * 1024 * 1024, gt=0)
    #: per-tenant defaults (changed at run time through the admin API)
    tenant_rps: float = Field(default=10.0, gt=0)
    tenant_burst: int = Field(default=20, gt=0)
    tenant_bytes_per_s: float = Field(default=5 * 1024 * 1024, gt=0)
    #: global bulkhead: requests processed at once
    concurrency: int = Field(default=64, gt=0)
    #: the share of the bulkhead one tenant may hold: floor(concurrency * share), at least 1; a quarter
    #: leaves room for others under any one tenant's burst (four tenants at their cap fill it)
    tenant_concurrency_share: float = Field(default=0.25, gt=0, le=1, json_schema_extra=SHARE)
    #: upload-topic lag above which uploads are shed with 503
    shed_lag: int = Field(default=10_000, gt=0)
    #: sha256 hex of the admin token ("" = admin API off)
    admin_token_sha256: str = ""
    #: API instances sharing the tenant limits: each enforces 1/instances of every rate and burst
    instances: int = Field(default=1, gt=0)
    #: the consumer group whose lag on partner.uploads is read for load shedding
    shed_group: str = "parser"
    #: upload bodies up to this size travel inside the partner.uploads message, larger ones as a blob
    inline_body_max: int = Field(default=256 * 1024, ge=0)
    #: public URL of the API, used in links printed to the user (the docs page is at <public_url>/docs)
    public_url: str = "http://127.0.0.1:8081"
    #: self-service sign-up (POST /api/v1/signup): new tenants per client address, per hour and at once
    signup_enabled: bool = True
    signup_per_hour: float = Field(default=10.0, gt=0)
    signup_burst: int = Field(default=3, gt=0)
    #: DNS servers ("ip" or "ip:port") for TXT host verification; empty: the system's resolvers
    dns_servers: list[str] = Field(default_factory=list)
    #: seconds between two checks of a right's proof (shared/webmaster/rights.py): a day, as search consoles do
    proof_recheck_s: float = Field(default=86_400.0, gt=0)
    #: seconds a right lasts after its proof was first missed at a re-check (its holder is told at
    #: once); it ends at the first re-check after that still missing the proof: a week to fix a site
    proof_grace_s: float = Field(default=604_800.0, ge=0)
    #: seconds between two sweeps of the api cube's re-check timer (each takes the rights that are due)
    proof_sweep_s: float = Field(default=300.0, gt=0)


class FrontendConfig(Section):
    host: str = "127.0.0.1"
    port: int = tcp_port(8080)
    #: public URL of the frontend, used in links printed to the user
    public_url: str = "http://127.0.0.1:8080"
    #: a webmaster console sign-in lasts this long (12 h: a working day, then sign in again)
    session_ttl_s: float = Field(default=43_200.0, gt=0)


class SearchConfig(Section):
    #: a title word weighs this many text words in BM25 (shared/search/ranking.py)
    title_weight: float = Field(default=5.0, gt=0)
    #: extra weight of brand-new news (1.0: news published now counts double); 0 = no freshness
    freshness_boost: float = Field(default=1.0, ge=0)
    #: age at which news keeps half its extra weight (2 days)
    freshness_half_life_s: float = Field(default=172_800.0, gt=0)
    #: publish every answered search to search.queries for query statistics (false: count nothing)
    publish_queries: bool = True
    #: request header a trusted edge sets to the searcher's region, e.g. "X-Region" ("" = none)
    region_header: str = ""
    #: "CIDR region" lines giving a searcher's region by address when no header says it
    region_ranges: list[str] = Field(default_factory=list)
    #: searches waiting to be published at most; past that new ones are dropped (and counted in metrics)
    queue_max: int = Field(default=10_000, gt=0)


class SecretsConfig(Section):
    #: the key that seals what partners entrust to us at rest (a feed's password and header values:
    #: shared/secretbox.py), 32 random bytes as URL-safe base64 (``turbocubes secrets new-key`` makes
    #: one); every process of a cluster needs the same. Empty: no feed may be given credentials
    key: str = ""

    @field_validator("key")
    @classmethod
    def _a_fernet_key(cls, value: str) -> str:
        import base64
        import binascii

        if not value:
            return value
        try:
            raw = base64.urlsafe_b64decode(value.encode("ascii"))
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raw = b""
        if len(raw) != 32:
            raise refuse("32 bytes in URL-safe base64 (make one with: turbocubes secrets new-key)")
        return value


class NotifyConfig(Section):
    #: seconds between two rounds of the api cube's notifier (shared/notify/notifier.py): events told, due
    #: deliveries sent; 5 s keeps a webhook within seconds of its event at a few queries a round when idle
    sweep_s: float = Field(default=5.0, gt=0)
    #: attempts at one delivery before it is given up (dead): 8 with the backoff below span ~2 hours
    max_attempts: int = Field(default=8, gt=0)
    #: the first retry's wait (s), doubled at each failure up to the cap
    retry_base_s: float = Field(default=60.0, gt=0)
    retry_cap_s: float = Field(default=3600.0, gt=0)
    #: seconds between two digests of a tenant (a day)
    digest_every_s: float = Field(default=86_400.0, gt=0)
    #: days the delivery log keeps a finished delivery and its event (a channel's newest stays whatever its
    #: age: it says whether the endpoint works); pruned once an hour by the notifier
    keep_days: float = Field(default=30.0, gt=0, le=3650)
    #: the SMTP server e-mail goes through ("" = no e-mail: only webhooks are sent)
    smtp_host: str = ""
    smtp_port: int = tcp_port(25)
    #: STARTTLS before anything is sent (a relay on the same machine may go without)
    smtp_starttls: bool = False
    smtp_user: str = ""
    smtp_password: str = ""
    #: the sender of every notification
    mail_from: str = "turbocubes@localhost"


class WordstatConfig(Section):
    #: a counter cell (a query's searches in a month, region and device) is published only once its count
    #: less its secret offset reaches this; hidden cells are in no count (cubes/wordstat/README.md)
    privacy_threshold: int = Field(default=5, gt=0, le=1000)
    #: a new cell's secret offset is drawn from 0 to this (0: exact counts, and padding a query over the
    #: threshold tells its count)
    privacy_noise: int = Field(default=5, ge=0, le=1000)
    #: months of history a frequency shows
    history_months: int = Field(default=24, gt=0)
    #: how long a search event's id is remembered so a redelivery is not counted twice (> topic retention)
    dedupe_window_s: float = Field(default=14 * 86_400.0, gt=0)


class AutoparserConfig(Section):
    #: "" = the model shipped with the package
    model_path: str = ""
    #: refuse a page whose extracted text is below this share of the page's main visible text
    min_completeness: float = Field(default=0.6, ge=0, le=1)
    #: a feed's published page that lacks more than this share of its original's article is reported
    #: (``page.content_mismatch``); Yandex treats a Turbo page much shorter than its source as an error
    parity_max_missing: float = Field(default=0.3, ge=0, le=1)
