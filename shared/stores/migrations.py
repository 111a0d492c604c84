"""Schema migrations of both store engines (docs/architecture.md section 4, "stores").

Each engine has an ordered list of ``(version, name, statements)``. ``open_*``
applies, in one transaction per migration, every version not yet recorded in
``schema_migrations``; applying twice is a no-op, and several processes opening
one database at once are serialized (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL:
an advisory lock). Never edit a released migration: append a new one.

Timestamps are BIGINT microseconds since the epoch (see ``codec.py``).
"""

from __future__ import annotations

from shared.stores.migrations_fetching import extend_fetching
from shared.stores.migrations_initial import COMMON, DELAY_DOCS, PAGES_COLUMNS
from shared.stores.migrations_search import (
    DF_POSTGRES,
    DF_SQLITE,
    IMPACT_POSTGRES,
    QUEUE_NAME,
    QUEUE_POSTGRES,
    QUEUE_SQLITE,
    VOCAB_POSTGRES,
    VOCAB_SQLITE,
)
from shared.stores.migrations_shop import extend_shop
from shared.stores.migrations_team import extend_team
from shared.stores.migrations_webmaster import extend_webmaster
from shared.stores.migrations_wordstat import extend_wordstat
from shared.stores.rights_schema import RIGHTS

__all__ = ["POSTGRES", "SQLITE", "Migration"]

Migration = tuple[int, str, tuple[str, ...]]

SQLITE: list[Migration] = [
    (
        1,
        "initial schema",
        (
            f"CREATE TABLE IF NOT EXISTS pages ({PAGES_COLUMNS.format(blob='BLOB')})",
            "CREATE INDEX IF NOT EXISTS pages_written ON pages (written_at) WHERE NOT deleted",
            # External-content FTS5 index over title and text of live pages, kept by triggers;
            # unicode61 with diacritics removed folds case for Latin and Cyrillic alike.
            """CREATE VIRTUAL TABLE IF NOT EXISTS pages_fts USING fts5(
                title, text, content='pages', content_rowid='rowid',
                tokenize='unicode61 remove_diacritics 2')""",
            """CREATE TRIGGER IF NOT EXISTS pages_ai AFTER INSERT ON pages WHEN NOT new.deleted BEGIN
                INSERT INTO pages_fts(rowid, title, text) VALUES (new.rowid, new.title, new.text); END""",
            """CREATE TRIGGER IF NOT EXISTS pages_ad AFTER DELETE ON pages WHEN NOT old.deleted BEGIN
                INSERT INTO pages_fts(pages_fts, rowid, title, text)
                VALUES ('delete', old.rowid, old.title, old.text); END""",
            # One update trigger, not two: SQLite fires triggers of one event in an unspecified order,
            # and the index must drop the old row before it gets the new one (same rowid).
            """CREATE TRIGGER IF NOT EXISTS pages_au AFTER UPDATE ON pages BEGIN
                INSERT INTO pages_fts(pages_fts, rowid, title, text)
                SELECT 'delete', old.rowid, old.title, old.text WHERE NOT old.deleted;
                INSERT INTO pages_fts(rowid, title, text)
                SELECT new.rowid, new.title, new.text WHERE NOT new.deleted; END""",
            DELAY_DOCS.format(blob="BLOB"),
            "CREATE INDEX IF NOT EXISTS delay_docs_deadline ON delay_docs (deadline)",
            *COMMON,
        ),
    ),
]

_WEBSUB_COLUMNS = (
    "ALTER TABLE feeds ADD COLUMN websub_topic TEXT",
    "ALTER TABLE feeds ADD COLUMN websub_secret TEXT",
)
SQLITE.append((2, "websub subscription topic and secret", _WEBSUB_COLUMNS))

POSTGRES: list[Migration] = [
    (
        1,
        "initial schema",
        (
            f"CREATE TABLE IF NOT EXISTS pages ({PAGES_COLUMNS.format(blob='BYTEA')},"
            # 'simple': no stemming or stop words, so any language is searchable the same way
            " tsv tsvector GENERATED ALWAYS AS"
            # (title weighs more than text: weight A vs B in ts_rank)
            " (setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', text), 'B'))"
            " STORED)",
            "CREATE INDEX IF NOT EXISTS pages_tsv ON pages USING GIN (tsv)",
            "CREATE INDEX IF NOT EXISTS pages_written ON pages (written_at) WHERE NOT deleted",
            DELAY_DOCS.format(blob="BYTEA"),
            "CREATE INDEX IF NOT EXISTS delay_docs_deadline ON delay_docs (deadline)",
            *COMMON,
        ),
    ),
]
POSTGRES.append((2, "websub subscription topic and secret", _WEBSUB_COLUMNS))

# A released document stays until its publish is confirmed (``DelayStore.confirm``): ``released_at``
# is the lease; NULL = still waiting. A release never confirmed comes back from ``due`` after the lease.
_DELAY_LEASE = (
    "ALTER TABLE delay_docs ADD COLUMN released_at BIGINT",
    "CREATE INDEX IF NOT EXISTS delay_docs_released ON delay_docs (released_at) WHERE released_at IS NOT NULL",
)
SQLITE.append((3, "delay release lease", _DELAY_LEASE))
POSTGRES.append((3, "delay release lease", _DELAY_LEASE))

# Small JSON snapshots that cubes publish every few seconds and the frontend (status page) and the
# overload gate read, in any deployment: one row per name (``cube:<name>:<instance>``, ...), the
# newest write wins. Read by name prefix, so the primary key's index serves every query.
_STATUS_SNAPSHOTS = (
    """CREATE TABLE IF NOT EXISTS status_snapshots (
        name TEXT PRIMARY KEY, body TEXT NOT NULL, updated_at BIGINT NOT NULL)""",
)
SQLITE.append((4, "status snapshots", _STATUS_SNAPSHOTS))
POSTGRES.append((4, "status snapshots", _STATUS_SNAPSHOTS))

# What the webmaster is told (shared/problems/__init__.py, shared/stores/problems.py): each fetch of a feed with
# its problems (the last few per feed: the history), what a published page lost (an image that failed),
# and the structured problems of an upload task (beside ``errors``, its one-line texts).
_PROBLEMS = (
    """CREATE TABLE IF NOT EXISTS fetch_reports (
        feed_id TEXT NOT NULL, fetched_at BIGINT NOT NULL, result TEXT NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (feed_id, fetched_at))""",
    """CREATE TABLE IF NOT EXISTS page_problems (
        url TEXT PRIMARY KEY, version BIGINT NOT NULL, host TEXT NOT NULL, source_kind TEXT NOT NULL,
        source_id TEXT NOT NULL, problems TEXT NOT NULL, updated_at BIGINT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS page_problems_source ON page_problems (source_id, updated_at)",
    "CREATE INDEX IF NOT EXISTS page_problems_host ON page_problems (host, updated_at)",
    "ALTER TABLE tasks ADD COLUMN problems TEXT NOT NULL DEFAULT '[]'",
)
SQLITE.append((5, "fetch reports, page problems, task problems", _PROBLEMS))
POSTGRES.append((5, "fetch reports, page problems, task problems", _PROBLEMS))

# One writer per field of a feed's row (shared/stores/feeds.py): ``last_result`` / ``last_error`` were
# written by the scheduler (the fetch) and the parser (the parse) in turn, whichever came last. Each
# now has its own pair; what was stored goes to the writer its value names. (DROP COLUMN: SQLite
# 3.35; the store already needs 3.39 for IS DISTINCT FROM.)
_PARSE_OUTCOMES = "('parsed', 'partial', 'parse_error', 'conflict')"
_FEED_WRITERS = (
    "ALTER TABLE feeds ADD COLUMN fetch_result TEXT",
    "ALTER TABLE feeds ADD COLUMN fetch_error TEXT",
    "ALTER TABLE feeds ADD COLUMN parse_result TEXT",
    "ALTER TABLE feeds ADD COLUMN parse_error TEXT",
    f"UPDATE feeds SET parse_result = last_result, parse_error = last_error WHERE last_result IN {_PARSE_OUTCOMES}",
    "UPDATE feeds SET fetch_result = last_result,"
    " fetch_error = CASE WHEN last_result IN ('ok', 'not_modified') THEN NULL ELSE last_error END"
    f" WHERE last_result IS NOT NULL AND last_result NOT IN {_PARSE_OUTCOMES}",
    # a parse happened, so the fetch before it answered
    "UPDATE feeds SET fetch_result = 'ok' WHERE parse_result IS NOT NULL AND last_fetch_at IS NOT NULL",
    "ALTER TABLE feeds DROP COLUMN last_result",
    "ALTER TABLE feeds DROP COLUMN last_error",
)
SQLITE.append((6, "feed fields with one writer each", _FEED_WRITERS))
POSTGRES.append((6, "feed fields with one writer each", _FEED_WRITERS))

# The autoparser's host templates, training pairs (the crawled page, zlib-compressed, with the feed's
# full text of the same article) and host calibrations (shared/stores/autoparser.py).
_AUTOPARSER = (
    """CREATE TABLE IF NOT EXISTS autoparser_templates (
        host TEXT PRIMARY KEY, data {blob} NOT NULL, updated_at BIGINT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS autoparser_pairs (
        host TEXT NOT NULL, url TEXT NOT NULL, html {blob} NOT NULL, text TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '', captured_at BIGINT NOT NULL, PRIMARY KEY (host, url))""",
    "CREATE INDEX IF NOT EXISTS autoparser_pairs_age ON autoparser_pairs (host, captured_at)",
    """CREATE TABLE IF NOT EXISTS autoparser_calibrations (
        host TEXT PRIMARY KEY, kind TEXT NOT NULL, threshold DOUBLE PRECISION, model {blob},
        figures TEXT NOT NULL DEFAULT '{{}}', trained_at BIGINT NOT NULL)""",
)
SQLITE.append((7, "autoparser templates, pairs and calibrations", tuple(q.format(blob="BLOB") for q in _AUTOPARSER)))
POSTGRES.append((7, "autoparser templates, pairs and calibrations", tuple(q.format(blob="BYTEA") for q in _AUTOPARSER)))

# PostgreSQL only: a parked document counts the media it still waits for, so that resolving a media
# URL is one statement that cannot leave a complete document parked (``postgres/delay.py`` says why;
# SQLite has one writer and checks the pending rows themselves). SQLite records the version with no
# statement, so both engines keep one numbering.
SQLITE.append((8, "delay pending count (PostgreSQL only)", ()))
POSTGRES.append(
    (
        8,
        "delay pending count",
        (
            "ALTER TABLE delay_docs ADD COLUMN IF NOT EXISTS pending_n BIGINT NOT NULL DEFAULT 0",
            "UPDATE delay_docs d SET pending_n = (SELECT count(*) FROM delay_pending p WHERE p.doc_url = d.url)",
        ),
    )
)

# Scheduler replicas: each feed is scheduled in the partition of ``crawl.feeds`` its host
# falls in, and the replica holding that partition ticks it. A tick reads only what is due in its
# partitions (feeds_due), the spread of a host's feeds reads the host's next few due times
# (feeds_host_due), new and re-registered feeds are found without a scan (feeds_unscheduled), and
# discovery reads the autoparser feeds alone (feeds_autoparser).
_SCHEDULE_INDEX = (
    "ALTER TABLE feeds ADD COLUMN schedule_partition BIGINT",
    "CREATE INDEX IF NOT EXISTS feeds_due ON feeds (schedule_partition, next_fetch_at) WHERE NOT deleted",
    "CREATE INDEX IF NOT EXISTS feeds_host_due ON feeds (host, next_fetch_at) WHERE NOT deleted",
    "CREATE INDEX IF NOT EXISTS feeds_unscheduled ON feeds (created_at)"
    " WHERE schedule_partition IS NULL AND NOT deleted",
    "CREATE INDEX IF NOT EXISTS feeds_autoparser ON feeds (feed_id) WHERE autoparser AND NOT deleted",
)
SQLITE.append((9, "scheduler partitions and the due index", _SCHEDULE_INDEX))
POSTGRES.append((9, "scheduler partitions and the due index", _SCHEDULE_INDEX))

# Where a claimed host's site answers (``scheme://host[:port]``), so its ownership is checked on its own
# scheme and port (shared/webmaster/verification.py); NULL: https, then http, on their default ports.
_CLAIM_ORIGIN = ("ALTER TABLE tenant_hosts ADD COLUMN origin TEXT",)
SQLITE.append((10, "host claim origin", _CLAIM_ORIGIN))
POSTGRES.append((10, "host claim origin", _CLAIM_ORIGIN))

# Webmaster console sign-ins (shared/stores/sessions.py): the sha256 of each session's cookie, never the
# cookie itself, with its tenant, its CSRF token and its expiry.
_SESSIONS = (
    """CREATE TABLE IF NOT EXISTS console_sessions (
        session_sha256 TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, csrf TEXT NOT NULL,
        created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS console_sessions_expiry ON console_sessions (expires_at)",
)
SQLITE.append((11, "console sessions", _SESSIONS))
POSTGRES.append((11, "console sessions", _SESSIONS))

# What a crawl lane must not forget across a rebalance or a restart (shared/stores/lanes.py):
# a host's pause deadline, adapted rate and back-off, and each origin's robots.txt with its fetch time.
_CRAWL_LANES = (
    """CREATE TABLE IF NOT EXISTS crawl_lanes (
        host TEXT PRIMARY KEY, paused_until BIGINT NOT NULL, pause_reason TEXT NOT NULL DEFAULT '',
        rate DOUBLE PRECISION NOT NULL, incidents BIGINT NOT NULL DEFAULT 0, last_incident_at BIGINT,
        latency_avg_s DOUBLE PRECISION, crawl_delay DOUBLE PRECISION NOT NULL DEFAULT 0,
        not_before BIGINT NOT NULL DEFAULT 0, updated_at BIGINT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS crawl_robots (
        origin TEXT PRIMARY KEY, fetched_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, allow_all BOOLEAN,
        body TEXT, status TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '')""",
)
SQLITE.append((12, "crawl lane state", _CRAWL_LANES))
POSTGRES.append((12, "crawl lane state", _CRAWL_LANES))

# An upload task's problems are capped (shared/problems/__init__.py ``cap``: the first ones in full); this keeps
# how many of each code there were in all, so "59,000 items refused" is one number, never 59,000
# problem objects in the task
_TASK_COUNTS = ("ALTER TABLE tasks ADD COLUMN problem_counts TEXT NOT NULL DEFAULT '{}'",)
SQLITE.append((13, "task problem counts", _TASK_COUNTS))
POSTGRES.append((13, "task problem counts", _TASK_COUNTS))

# Query statistics (``shared/stores/wordstat.py``): counters keyed and clustered for their reads.
_WORDSTAT_COMMON = (
    """CREATE TABLE IF NOT EXISTS ws_terms (
        lemma TEXT NOT NULL, content BIGINT NOT NULL, qid BIGINT NOT NULL, PRIMARY KEY (lemma, content, qid)){rowid}""",
    "CREATE INDEX IF NOT EXISTS ws_terms_qid ON ws_terms (qid)",
    """CREATE TABLE IF NOT EXISTS ws_counts (
        qid BIGINT NOT NULL, month BIGINT NOT NULL, region TEXT NOT NULL, device TEXT NOT NULL, n BIGINT NOT NULL,
        PRIMARY KEY (qid, month, region, device)){rowid}""",
    """CREATE TABLE IF NOT EXISTS ws_lemma_counts (
        lemma TEXT NOT NULL, month BIGINT NOT NULL, region TEXT NOT NULL, device TEXT NOT NULL, n BIGINT NOT NULL,
        PRIMARY KEY (lemma, month, region, device)){rowid}""",
    """CREATE TABLE IF NOT EXISTS ws_hosts (
        host TEXT NOT NULL, month BIGINT NOT NULL, qid BIGINT NOT NULL, n BIGINT NOT NULL,
        PRIMARY KEY (host, month, qid)){rowid}""",
    "CREATE TABLE IF NOT EXISTS ws_seen (event_id TEXT PRIMARY KEY, at BIGINT NOT NULL){rowid}",
    "CREATE INDEX IF NOT EXISTS ws_seen_at ON ws_seen (at)",
)
SQLITE.append(
    (
        14,
        "query statistics",
        (
            """CREATE TABLE IF NOT EXISTS ws_queries (
                qid INTEGER PRIMARY KEY, query TEXT NOT NULL UNIQUE, lemmas TEXT NOT NULL,
                content BIGINT NOT NULL, total BIGINT NOT NULL DEFAULT 0)""",
            *(s.format(rowid=" WITHOUT ROWID") for s in _WORDSTAT_COMMON),
        ),
    )
)
POSTGRES.append(
    (
        14,
        "query statistics",
        (
            """CREATE TABLE IF NOT EXISTS ws_queries (
                qid BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, query TEXT NOT NULL UNIQUE,
                lemmas TEXT NOT NULL, content BIGINT NOT NULL, total BIGINT NOT NULL DEFAULT 0)""",
            *(s.format(rowid="") for s in _WORDSTAT_COMMON),
        ),
    )
)

# Search in Russian and English (``shared/stores/search.py``): pages get their type, publication time and
# language; SQLite's index becomes stems written by the page store (``sqlite/search.py``) with the filter
# columns beside them, and triggers drop a page's row on every tombstone or delete; PostgreSQL's tsvector
# is made with the ``russian`` or ``english`` configuration by the page's language, ё folded to е. The
# CASE chose the configuration by language (the index has since been built from the analyzer's own terms,
# migration 24 onwards).
_PAGE_SEARCH_COLUMNS = (
    "ALTER TABLE pages ADD COLUMN kind TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE pages ADD COLUMN published_at BIGINT",
    "ALTER TABLE pages ADD COLUMN lang TEXT NOT NULL DEFAULT ''",
)
_PG_TS_CONFIG = "(CASE WHEN lang = 'en' THEN 'english'::regconfig ELSE 'russian'::regconfig END)"
SQLITE.append(
    (
        15,
        "search: stems, page type, date and language",
        (
            *_PAGE_SEARCH_COLUMNS,
            "DROP TRIGGER IF EXISTS pages_ai",
            "DROP TRIGGER IF EXISTS pages_ad",
            "DROP TRIGGER IF EXISTS pages_au",
            "DROP TABLE IF EXISTS pages_fts",
            """CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
                kind UNINDEXED, published UNINDEXED, host UNINDEXED, title, body,
                tokenize='unicode61 remove_diacritics 0')""",
            """CREATE TRIGGER IF NOT EXISTS pages_search_gone AFTER UPDATE OF deleted ON pages
                WHEN new.deleted AND NOT old.deleted BEGIN DELETE FROM search_fts WHERE rowid = old.rowid; END""",
            """CREATE TRIGGER IF NOT EXISTS pages_search_ad AFTER DELETE ON pages BEGIN
                DELETE FROM search_fts WHERE rowid = old.rowid; END""",
            "CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ),
    )
)
POSTGRES.append(
    (
        15,
        "search: russian/english configurations, page type, date and language",
        (
            # IF NOT EXISTS: a database that ran this under another number while branches were merged
            *(c.replace("ADD COLUMN", "ADD COLUMN IF NOT EXISTS") for c in _PAGE_SEARCH_COLUMNS),
            "DROP INDEX IF EXISTS pages_tsv",
            "ALTER TABLE pages DROP COLUMN IF EXISTS tsv",
            "ALTER TABLE pages ADD COLUMN tsv tsvector GENERATED ALWAYS AS ("
            f" setweight(to_tsvector({_PG_TS_CONFIG}, translate(title, 'ёЁ', 'еЕ')), 'A')"
            f" || setweight(to_tsvector({_PG_TS_CONFIG}, translate(text, 'ёЁ', 'еЕ')), 'B')) STORED",
            "CREATE INDEX IF NOT EXISTS pages_tsv ON pages USING GIN (tsv)",
        ),
    )
)

# SQLite search: the type, date and host of an indexed page move from unindexed FTS5 columns (read
# with the page's stems: every match loaded its text) to the narrow ``search_docs``; the FTS5 table
# holds the stems only, rebuilt by the store at open (``ANALYZER_VERSION`` 2). PostgreSQL: nothing.
SQLITE.append(
    (
        16,
        "search: filter columns beside the index",
        (
            "DROP TRIGGER IF EXISTS pages_search_gone",
            "DROP TRIGGER IF EXISTS pages_search_ad",
            "DROP TABLE IF EXISTS search_fts",
            """CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
                title, body, tokenize='unicode61 remove_diacritics 0')""",
            """CREATE TABLE IF NOT EXISTS search_docs (
                id INTEGER PRIMARY KEY, kind TEXT NOT NULL, published BIGINT, host TEXT NOT NULL)""",
            """CREATE TRIGGER IF NOT EXISTS pages_search_gone AFTER UPDATE OF deleted ON pages
                WHEN new.deleted AND NOT old.deleted BEGIN
                DELETE FROM search_fts WHERE rowid = old.rowid; DELETE FROM search_docs WHERE id = old.rowid; END""",
            """CREATE TRIGGER IF NOT EXISTS pages_search_ad AFTER DELETE ON pages BEGIN
                DELETE FROM search_fts WHERE rowid = old.rowid; DELETE FROM search_docs WHERE id = old.rowid; END""",
            "DELETE FROM search_meta WHERE key = 'analyzer'",
        ),
    )
)
POSTGRES.append((16, "search: filter columns beside the index (SQLite only)", ()))

# 17: the webmaster's host-wide "Turbo off": a claim remembers whether its host's pages are on
_TURBO_SWITCH = ("ALTER TABLE tenant_hosts ADD COLUMN turbo BOOLEAN NOT NULL DEFAULT TRUE",)
SQLITE.append((17, "tenant_hosts: the Turbo switch", _TURBO_SWITCH))
POSTGRES.append((17, "tenant_hosts: the Turbo switch", _TURBO_SWITCH))

# 18: the smaller copies the cdn cube makes of an image (for the page's srcset)
_IMAGE_VARIANTS = ("ALTER TABLE images ADD COLUMN variants TEXT NOT NULL DEFAULT ''",)
SQLITE.append((18, "images: variant widths", _IMAGE_VARIANTS))
POSTGRES.append((18, "images: variant widths", _IMAGE_VARIANTS))

# 19: a changed source image refreshes its copy: the validators of its last fetch, when it
# was last checked (the cdn cube's re-check sweep reads the index), and which pages show each CDN copy
_IMAGE_RECHECK = (
    "ALTER TABLE images ADD COLUMN etag TEXT",
    "ALTER TABLE images ADD COLUMN last_modified TEXT",
    "ALTER TABLE images ADD COLUMN checked_at BIGINT",
    "UPDATE images SET checked_at = updated_at WHERE status = 'ok'",
    "CREATE INDEX IF NOT EXISTS images_recheck ON images (status, checked_at)",
    """CREATE TABLE IF NOT EXISTS image_pages (
        cdn_url TEXT NOT NULL, page_url TEXT NOT NULL, PRIMARY KEY (cdn_url, page_url))""",
)
SQLITE.append(
    (19, "images: re-check validators, pages per copy", (*_IMAGE_RECHECK, "ALTER TABLE pages ADD COLUMN ready BLOB"))
)
POSTGRES.append(
    (19, "images: re-check validators, pages per copy", (*_IMAGE_RECHECK, "ALTER TABLE pages ADD COLUMN ready BYTEA"))
)

# 20: a page held back (it lost content; the autoparser's guard) shows its problems though it is not published
_HELD_PAGES = ("ALTER TABLE page_problems ADD COLUMN held BOOLEAN NOT NULL DEFAULT FALSE",)
SQLITE.append((20, "page_problems: pages held back", _HELD_PAGES))
POSTGRES.append((20, "page_problems: pages held back", _HELD_PAGES))

# 21: SQLite search's impact index (``sqlite/search_topk.py``): a page's stems grouped by their bound, under
# rowids ordered by it, so a search reads a common word's best pages first; search_docs gains the page's
# length and the instant its freshness was taken. The rows are rebuilt by the store at open.
SQLITE.append(
    (
        21,
        "search: impact index",
        (
            "DROP TRIGGER IF EXISTS pages_search_gone",
            "DROP TRIGGER IF EXISTS pages_search_ad",
            "ALTER TABLE search_docs ADD COLUMN length BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE search_docs ADD COLUMN ref_at BIGINT",
            "CREATE INDEX IF NOT EXISTS search_docs_late ON search_docs (ref_at) WHERE kind = 'news'",
            """CREATE TABLE IF NOT EXISTS search_imp_rows (
                k INTEGER PRIMARY KEY, id INTEGER NOT NULL, terms TEXT NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS search_imp_rows_id ON search_imp_rows (id)",
            """CREATE VIRTUAL TABLE IF NOT EXISTS search_imp USING fts5(
                terms, content='search_imp_rows', content_rowid='k', detail=none, columnsize=0,
                tokenize='unicode61 remove_diacritics 0')""",
            *(
                f"""CREATE TRIGGER IF NOT EXISTS {name} {event} BEGIN
                DELETE FROM search_fts WHERE rowid = old.rowid; DELETE FROM search_docs WHERE id = old.rowid;
                INSERT INTO search_imp (search_imp, rowid, terms)
                    SELECT 'delete', k, terms FROM search_imp_rows WHERE id = old.rowid;
                DELETE FROM search_imp_rows WHERE id = old.rowid; END"""
                for name, event in (
                    ("pages_search_gone", "AFTER UPDATE OF deleted ON pages WHEN new.deleted AND NOT old.deleted"),
                    ("pages_search_ad", "AFTER DELETE ON pages"),
                )
            ),
            "DELETE FROM search_meta WHERE key = 'analyzer'",
        ),
    )
)
POSTGRES.append((21, "search: impact index (SQLite only)", ()))

# 22: a common word's most searched queries (a frequency's similar queries) are read from the top of
# this index down, probing each query's words, instead of sorting every query of the word
_WS_QUERIES_TOTAL = ("CREATE INDEX IF NOT EXISTS ws_queries_total ON ws_queries (total DESC, query)",)
SQLITE.append((22, "wordstat: queries by total", _WS_QUERIES_TOTAL))
POSTGRES.append((22, "wordstat: queries by total", _WS_QUERIES_TOTAL))

# 23: homonyms' lemma sets counted as one (``shared/stores/wordstat.py``, ``ws_unions``): a set's counters
# live in ws_lemma_counts under its key ("это|этот"); a store that had counts fills a set when a batch
# first meets it
_WS_UNIONS = (
    "CREATE TABLE IF NOT EXISTS ws_unions (key TEXT PRIMARY KEY){rowid}",
    """CREATE TABLE IF NOT EXISTS ws_union_members (
        lemma TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (lemma, key)){rowid}""",
)
SQLITE.append((23, "wordstat: homonyms' lemma sets", tuple(s.format(rowid=" WITHOUT ROWID") for s in _WS_UNIONS)))
POSTGRES.append((23, "wordstat: homonyms' lemma sets", tuple(s.format(rowid="") for s in _WS_UNIONS)))

# 24-25: search follows the pages through a queue; its vocabulary (``migrations_search.py`` has the statements
# and why)
SQLITE.append((24, QUEUE_NAME, QUEUE_SQLITE))
POSTGRES.append((24, QUEUE_NAME, QUEUE_POSTGRES))
SQLITE.append((25, "search: vocabulary", VOCAB_SQLITE))
POSTGRES.append((25, "search: vocabulary, analyzer version", VOCAB_POSTGRES))


# 26-27: the origin's schedule, images' own re-check times (``migrations_fetching.py``)
extend_fetching(SQLITE, POSTGRES)

# 28: PostgreSQL's impact index (``migrations_search.py``)
SQLITE.append((28, "search: PostgreSQL's impact index (PostgreSQL only)", ()))
POSTGRES.append((28, "search: impact index", IMPACT_POSTGRES))

# 29: a feed check's task remembers the URL it fetched, so its page can say what was checked
_TASK_SOURCE = ("ALTER TABLE tasks ADD COLUMN source_url TEXT",)
SQLITE.append((29, "tasks: the URL a check fetched", _TASK_SOURCE))
POSTGRES.append((29, "tasks: the URL a check fetched", _TASK_SOURCE))

# 30: each term's pages, counted by the indexer (``migrations_search.py``)
SQLITE.append((30, "search: pages by term", DF_SQLITE))
POSTGRES.append((30, "search: pages by term", DF_POSTGRES))

# 31: sites have owners: the rights on origins, their re-checks, events and notices (``rights_schema.py``)
for _engine in (SQLITE, POSTGRES):
    _engine.append((31, "rights on origins: several holders, re-checks, events and notices", RIGHTS))

# 32: a feed's own fetch options and filters (public, JSON) and the sealed token of its secrets (a password,
# header values: ``shared/webmaster/feed_options.py``, ``shared/secretbox.py``)
_FEED_OPTIONS = ("ALTER TABLE feeds ADD COLUMN options TEXT", "ALTER TABLE feeds ADD COLUMN secret TEXT")
SQLITE.append((32, "feeds: fetch options and sealed credentials", _FEED_OPTIONS))
POSTGRES.append((32, "feeds: fetch options and sealed credentials", _FEED_OPTIONS))

# 33: a host's branding on its pages, per tenant that claimed it (``shared/webmaster/branding.py``)
_BRANDING = ("ALTER TABLE tenant_hosts ADD COLUMN branding TEXT",)
SQLITE.append((33, "tenant_hosts: branding", _BRANDING))
POSTGRES.append((33, "tenant_hosts: branding", _BRANDING))

# 34: a task keeps the first items' results (the parser's cap) and counts every item by status: an upload of
# 100,000 offers stored 100,000 results, and each read of the task decoded them all on the event loop
_TASK_ITEM_COUNTS = ("ALTER TABLE tasks ADD COLUMN item_counts TEXT NOT NULL DEFAULT '{}'",)
SQLITE.append((34, "tasks: every item counted by status", _TASK_ITEM_COUNTS))
POSTGRES.append((34, "tasks: every item counted by status", _TASK_ITEM_COUNTS))

# 35: a hash remembers the read of its source that recorded it (a fetch's fetched_at, an upload's received_at),
# so that another attempt at one fetch -- a catalog's load resumed after a crash -- counts what an earlier
# attempt published as this fetch's, not as unchanged (``cubes/parser/items.py``)
_HASH_SEEN = ("ALTER TABLE doc_hashes ADD COLUMN seen_at BIGINT",)
SQLITE.append((35, "doc_hashes: the read that recorded each hash", _HASH_SEEN))
POSTGRES.append((35, "doc_hashes: the read that recorded each hash", _HASH_SEEN))
# 36: query statistics that keep their threshold: published cells, one search per client and day
# (``migrations_wordstat.py``)
extend_wordstat(SQLITE, POSTGRES, version=36)
# 37-39: a task's mode, the problem history, notifications (``migrations_webmaster.py``); 40: a shop's offers
extend_webmaster(SQLITE, POSTGRES)
extend_shop(SQLITE, POSTGRES)
extend_team(SQLITE, POSTGRES, version=41)  # 41: team access (``migrations_team.py``)
