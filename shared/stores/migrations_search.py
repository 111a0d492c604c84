"""The statements of the search index's migrations (24, 25, 28, 30) (docs/architecture.md section 4; ``migrations.py``
applies them in its numbering). Released: never edited (a change is a new migration).
"""

from __future__ import annotations

__all__ = [
    "DF_POSTGRES",
    "DF_SQLITE",
    "IMPACT_POSTGRES",
    "QUEUE_NAME",
    "QUEUE_POSTGRES",
    "QUEUE_SQLITE",
    "VOCAB_POSTGRES",
    "VOCAB_SQLITE",
]

# 24: the search index follows a queue of written pages (``shared/stores/search.py``): each write of a page row
# queues it in that transaction (SQLite: triggers; PostgreSQL: the page statements), and the indexer drains the
# queue. PostgreSQL's index leaves ``pages`` (its generated tsv cost every write) for ``search_docs``, built
# from every live page queued once
QUEUE_NAME = "search: the index follows a queue of written pages"
_QUEUE_TRIGGERS = tuple(
    f"CREATE TRIGGER IF NOT EXISTS pages_search_queue_{name} AFTER {event} ON pages BEGIN"
    f" INSERT INTO search_queue (id) VALUES ({row}.rowid); END"
    for name, event, row in (("ai", "INSERT", "new"), ("au", "UPDATE", "new"), ("ad", "DELETE", "old"))
)
QUEUE_SQLITE = (
    "DROP TRIGGER IF EXISTS pages_search_gone",
    "DROP TRIGGER IF EXISTS pages_search_ad",
    "CREATE TABLE IF NOT EXISTS search_queue (seq INTEGER PRIMARY KEY, id INTEGER NOT NULL)",
    "ALTER TABLE search_docs ADD COLUMN version BIGINT",
    "ALTER TABLE search_docs ADD COLUMN indexed_at BIGINT",
    *_QUEUE_TRIGGERS,
)
QUEUE_POSTGRES = (
    "DROP INDEX IF EXISTS pages_tsv",
    "ALTER TABLE pages DROP COLUMN IF EXISTS tsv",
    "CREATE TABLE IF NOT EXISTS search_queue (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, url TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS search_docs (url TEXT PRIMARY KEY, version BIGINT NOT NULL,
    host TEXT NOT NULL, kind TEXT NOT NULL, published BIGINT, written_at BIGINT, indexed_at BIGINT NOT NULL,
    tsv tsvector NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS search_docs_tsv ON search_docs USING GIN (tsv)",
    "INSERT INTO search_queue (url) SELECT url FROM pages WHERE NOT deleted ORDER BY written_at",
)

# 25: search with lemmas (``shared/search/tokens.py``) and "did you mean" (``shared/search/suggest.py``): the
# index's vocabulary (SQLite: FTS5's own, read through fts5vocab; PostgreSQL: the terms its indexer wrote,
# in code-point order for prefix ranges), and PostgreSQL's analyzer version (re-indexing at a change, as
# SQLite's search_meta does)
VOCAB_SQLITE = ("CREATE VIRTUAL TABLE IF NOT EXISTS search_vocab USING fts5vocab(search_fts, row)",)
VOCAB_POSTGRES = (
    'CREATE TABLE IF NOT EXISTS search_vocab (term TEXT COLLATE "C" PRIMARY KEY)',
    "CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

# 28: PostgreSQL search in milliseconds (``postgres/search_topk.py``): an impact-ordered table of postings (a
# term's pages from the best bound of their score down, the keys of ``sql/search_impacts.py``), and what the
# walk and the ranking read of a page beside its tsv: a numeric id, its length and its terms' streams; the
# postings a page was given, to take them back when it changes. The index is built again (analyzer version
# forgotten: every page queued at the next open). SQLite records the version with no statement.
IMPACT_POSTGRES = (
    "CREATE SEQUENCE IF NOT EXISTS search_doc_ids",
    "ALTER TABLE search_docs ADD COLUMN IF NOT EXISTS id BIGINT",
    "ALTER TABLE search_docs ADD COLUMN IF NOT EXISTS length INT NOT NULL DEFAULT 0",
    "ALTER TABLE search_docs ADD COLUMN IF NOT EXISTS title_terms TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE search_docs ADD COLUMN IF NOT EXISTS body_terms TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE search_docs ADD COLUMN IF NOT EXISTS impacts TEXT NOT NULL DEFAULT ''",
    "CREATE UNIQUE INDEX IF NOT EXISTS search_docs_id ON search_docs (id)",
    "CREATE INDEX IF NOT EXISTS search_docs_late ON search_docs (written_at) WHERE kind = 'news'",
    'CREATE TABLE IF NOT EXISTS search_post (term TEXT COLLATE "C" NOT NULL, k BIGINT NOT NULL, PRIMARY KEY (term, k))',
    "DELETE FROM search_meta WHERE key = 'analyzer'",
)

# 30: each term's pages, counted by the indexer as it writes and drops index rows (``search_df``): the walk's
# IDF and "did you mean" read a row instead of counting a common term's pages (3 ms on 50,000 pages, every
# minute for each term searched); it takes over from the vocabulary tables of 25. Filled from the index as it is.
DF_SQLITE = (
    "CREATE TABLE IF NOT EXISTS search_df (term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT INTO search_df (term, docs) SELECT term, doc FROM search_vocab WHERE term <> char(57345)",
    "DROP TABLE IF EXISTS search_vocab",
)
DF_POSTGRES = (
    'CREATE TABLE IF NOT EXISTS search_df (term TEXT COLLATE "C" PRIMARY KEY, docs BIGINT NOT NULL)',
    "INSERT INTO search_df (term, docs) SELECT term, count(*) FROM search_post GROUP BY term",
    "DROP TABLE IF EXISTS search_vocab",
)
