"""The schema files, the AsyncAPI document and the Python models never drift (docs/architecture.md section 5)."""

from __future__ import annotations

from datetime import UTC, datetime

import jsonschema
import orjson
import pytest

from shared import contracts
from shared.errors import ContractError, PublishContractError
from shared.messages import CrawlKind, CrawlRequest, Document, SourceKind, SourceRef


def test_generated_files_equal_the_models() -> None:
    assert contracts.stale_contract_files() == [], "run: turbocubes schemas write"


def test_every_catalog_topic_has_a_schema_file_and_a_key_field() -> None:
    for t in contracts.catalog().values():
        assert (contracts.SCHEMAS_DIR / t.schema_file).is_file()
        assert t.key in t.model.model_fields, f"{t.name}: key {t.key} is not a field of {t.model.__name__}"


def test_asyncapi_describes_every_topic() -> None:
    doc = contracts.asyncapi_document()
    assert doc["asyncapi"].startswith("3.")
    addresses = {c["address"] for c in doc["channels"].values()}
    assert addresses == set(contracts.catalog())


def test_encoded_messages_satisfy_the_json_schema_files() -> None:
    now = datetime.now(UTC)
    samples = {
        "crawl.requests": CrawlRequest(
            kind=CrawlKind.feed, url="https://a.example/feed.xml", host="a.example", requested_at=now
        ),
        "documents.parsed": Document(
            url="https://a.example/p/1",
            host="a.example",
            source=SourceRef(kind=SourceKind.rss, id="f1"),
            title="T",
            content_hash="h",
            version=1,
            seen_at=now,
            parsed_at=now,
        ),
    }
    for topic, msg in samples.items():
        schema = orjson.loads((contracts.SCHEMAS_DIR / contracts.topic(topic).schema_file).read_bytes())
        jsonschema.validate(orjson.loads(contracts.encode(topic, msg)), schema)
        assert contracts.decode(topic, contracts.encode(topic, msg)) == msg


def test_decode_names_the_bad_field() -> None:
    with pytest.raises(ContractError, match="kind"):
        contracts.decode(
            "crawl.requests", b'{"kind": "fax", "url": "u", "host": "h", "requested_at": "2020-01-01T00:00:00Z"}'
        )
    with pytest.raises(ContractError):
        contracts.decode("crawl.requests", b"not json")


def test_publishing_the_wrong_model_is_a_bug() -> None:
    now = datetime.now(UTC)
    req = CrawlRequest(kind=CrawlKind.feed, url="https://a/", host="a", requested_at=now)
    with pytest.raises(PublishContractError):
        contracts.encode("documents.parsed", req)


def test_topic_facts_come_from_the_catalog_only() -> None:
    """Dead-letter and retry topics take their partitions and retention from ``schemas/topics.toml``.

    The catalog's comment once said dead-letter topics had 12 partitions while the code gave each its
    topic's count (``feeds.registry.dlq`` got 6), and the retention of both lived in the runtime.
    """
    import tomllib

    from shared.contracts import SCHEMAS_DIR, catalog, dlq_topic, retry_topic, topic_specs

    raw = tomllib.loads((SCHEMAS_DIR / "topics.toml").read_text(encoding="utf-8"))
    specs = {s.name: s for s in topic_specs(["parser"])}
    days = int(raw["dead_letters"]["retention"].removesuffix("d"))
    for t in catalog().values():
        assert specs[t.name].partitions == t.partitions
        assert specs[dlq_topic(t.name)].partitions == t.partitions
        assert specs[dlq_topic(t.name)].retention_ms == days * 86_400_000
    retry = specs[retry_topic("parser")]
    assert retry.partitions == raw["retries"]["partitions"]
    assert retry.retention_ms == int(raw["retries"]["retention"].removesuffix("h")) * 3_600_000
    assert specs["feeds.registry.dlq"].partitions == 6  # the comment's "12" was wrong for this one
