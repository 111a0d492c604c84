"""The topic catalog and the wire format (docs/architecture.md section 5).

``schemas/topics.toml`` is the single list of topics; each row names a model
in ``shared.messages``. From the models come the JSON Schema files
(``schemas/<topic>.v1.json``) and the AsyncAPI 3 document
(``schemas/asyncapi.yaml``), and the webmaster's contract: the problem object
(``schemas/problem.v1.json``) and its code table (``schemas/problems.md``,
from ``shared/problems/codes.py``); ``write_contract_files()`` regenerates them and
``stale_contract_files()`` says which committed files differ (a test fails
on any).

Wire format: UTF-8 JSON made by pydantic-core's Rust serializer (as fast as
orjson for our models, and it validates nothing twice). ``decode`` parses and
validates in one pass and raises ``ContractError`` with the first problems,
so the runtime can dead-letter the record with a readable reason.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import yaml
from pydantic import BaseModel, ValidationError

import schemas as _schemas_package  # the catalog ships as package data
from shared import messages
from shared.bus.base import TopicSpec
from shared.errors import ContractError, PublishContractError
from shared.problems import codes as problem_codes
from shared.problems import problem_schema

__all__ = [
    "DLQ_SUFFIX",
    "SCHEMAS_DIR",
    "Topic",
    "asyncapi_document",
    "catalog",
    "decode",
    "dlq_topic",
    "encode",
    "is_internal_topic",
    "problems_markdown",
    "register_topic",
    "retry_topic",
    "schema_documents",
    "stale_contract_files",
    "topic",
    "topic_specs",
    "topics_from_toml",
    "validator",
    "write_contract_files",
]

#: schemas/ of the checkout (editable install) or of the installed package: the same files
SCHEMAS_DIR = Path(_schemas_package.__file__).resolve().parent
DLQ_SUFFIX = ".dlq"
RETRY_PREFIX = "retry."
_DURATION_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    key: str
    partitions: int
    model: type[messages.Message]
    schema_file: str
    description: str
    compact: bool = False
    retention_ms: int | None = None


def _duration_ms(text: str) -> int:
    for unit in sorted(_DURATION_UNITS, key=len, reverse=True):
        if text.endswith(unit) and text[: -len(unit)].isdigit():
            return int(text[: -len(unit)]) * _DURATION_UNITS[unit]
    raise ContractError(f"topics.toml: bad duration {text!r} (use e.g. 500ms, 30s, 24h, 7d)")


def topics_from_toml(text: str) -> dict[str, Topic]:
    """The ``[topics."<name>"]`` rows of a catalog text (``schemas/topics.toml``, or a row of it)."""
    out: dict[str, Topic] = {}
    for name, row in tomllib.loads(text).get("topics", {}).items():
        model = getattr(messages, row["model"], None)
        if model is None:
            raise ContractError(f"topics.toml: topic {name!r} names model {row['model']!r}, not in shared.messages")
        out[name] = Topic(
            name=name,
            key=row["key"],
            partitions=int(row["partitions"]),
            model=model,
            schema_file=row["schema"],
            description=row.get("description", ""),
            compact=row.get("cleanup") == "compact",
            retention_ms=_duration_ms(row["retention"]) if "retention" in row else None,
        )
    return out


@cache
def _catalog_text() -> str:
    return (SCHEMAS_DIR / "topics.toml").read_text(encoding="utf-8")


@cache
def catalog() -> dict[str, Topic]:
    """The topic catalog, read once."""
    return topics_from_toml(_catalog_text())


@cache
def _internal() -> dict[str, Any]:
    raw = tomllib.loads(_catalog_text())
    return {"dlq": raw["dead_letters"], "retry": raw["retries"]}


#: topics added at run time by tests and benchmarks (fresh uuid names); never part of the catalog files
_extra: dict[str, Topic] = {}


def register_topic(t: Topic) -> None:
    """Add a topic at run time (tests and benchmarks); the catalog file stays the only truth for files."""
    _extra[t.name] = t


def topic(name: str) -> Topic:
    found = catalog().get(name) or _extra.get(name)
    if found is None:
        raise ContractError(f"unknown topic {name!r}; known: {', '.join(sorted(catalog()))}")
    return found


def dlq_topic(name: str) -> str:
    return name + DLQ_SUFFIX


def retry_topic(cube: str) -> str:
    """Delayed retries of one cube (one consumer group) travel through their own topic."""
    return RETRY_PREFIX + cube


def topic_specs(cube_names: Sequence[str] = ()) -> list[TopicSpec]:
    """Every catalog topic and its dead letters, and the retry topic of each of ``cube_names``: what
    ``turbocubes topics create`` makes, with the partitions and retention the catalog gives them."""
    dlq, retry = _internal()["dlq"], _internal()["retry"]
    specs: list[TopicSpec] = []
    for t in catalog().values():
        specs.append(TopicSpec(t.name, t.partitions, t.compact, t.retention_ms))
        specs.append(TopicSpec(dlq_topic(t.name), t.partitions, False, _duration_ms(dlq["retention"])))
    for name in cube_names:
        specs.append(TopicSpec(retry_topic(name), int(retry["partitions"]), False, _duration_ms(retry["retention"])))
    return specs


def is_internal_topic(name: str) -> bool:
    return name.endswith(DLQ_SUFFIX) or name.startswith(RETRY_PREFIX)


def encode(topic_name: str, msg: BaseModel) -> bytes:
    """Serialize ``msg`` for ``topic_name``; a message of the wrong type is a bug."""
    expected = topic(topic_name).model
    if type(msg) is not expected:
        raise PublishContractError(f"{topic_name} carries {expected.__name__}, not {type(msg).__name__}")
    return msg.__pydantic_serializer__.to_json(msg)


def _contract_error(topic_name: str, exc: ValidationError) -> ContractError:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()[:5]
    )
    return ContractError(f"{topic_name}: {problems}")


def decode(topic_name: str, value: bytes) -> messages.Message:
    """Parse and validate one record's value; ``ContractError`` names what is wrong."""
    model = topic(topic_name).model
    try:
        return model.model_validate_json(value)
    except ValidationError as exc:
        raise _contract_error(topic_name, exc) from None


def validator(topic_name: str) -> Callable[[bytes], messages.Message]:
    """``decode`` for one topic, looked up once: the runtime calls it for every record."""
    validate_json = topic(topic_name).model.__pydantic_validator__.validate_json

    def validate(value: bytes) -> messages.Message:
        try:
            msg: messages.Message = validate_json(value)
        except ValidationError as exc:
            raise _contract_error(topic_name, exc) from None
        return msg

    return validate


# --------------------------------------------------------------------------- generated files


def schema_documents() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, one per topic, generated from the models."""
    docs: dict[str, dict[str, Any]] = {}
    for t in catalog().values():
        schema = t.model.model_json_schema(mode="serialization")
        schema = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"turbocubes:{t.schema_file}",
            "x-topic": t.name,
            "x-key": t.key,
            **schema,
        }
        docs[t.schema_file] = schema
    return docs


def asyncapi_document() -> dict[str, Any]:
    """An AsyncAPI 3.0 description of every topic, for other teams."""
    channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    components: dict[str, Any] = {"messages": {}, "schemas": {}}
    for t in catalog().values():
        cid = t.name.replace(".", "_")
        components["schemas"][t.model.__name__] = {"$ref": f"./{t.schema_file}"}
        components["messages"][cid] = {
            "name": t.model.__name__,
            "contentType": "application/json",
            "payload": {"$ref": f"./{t.schema_file}"},
        }
        bindings: dict[str, Any] = {"partitions": t.partitions, "replicas": 1}
        cfg: dict[str, Any] = {"cleanup.policy": ["compact"] if t.compact else ["delete"]}
        if t.retention_ms is not None:
            cfg["retention.ms"] = t.retention_ms
        bindings["topicConfiguration"] = cfg
        channels[cid] = {
            "address": t.name,
            "description": f"{t.description} Key: {t.key}. Dead letters: {dlq_topic(t.name)}.",
            "messages": {cid: {"$ref": f"#/components/messages/{cid}"}},
            "bindings": {"kafka": bindings},
        }
        operations[f"publish_{cid}"] = {"action": "send", "channel": {"$ref": f"#/channels/{cid}"}}
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "turbocubes topics",
            "version": "1.0.0",
            "description": "Generated from schemas/topics.toml and shared/messages.py. Do not edit.",
        },
        "defaultContentType": "application/json",
        "channels": channels,
        "operations": operations,
        "components": components,
    }


def _rendered_files() -> dict[str, bytes]:
    files = {
        name: orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        for name, doc in schema_documents().items()
    }
    header = "# Generated by `turbocubes schemas write` from schemas/topics.toml. Do not edit.\n"
    files["asyncapi.yaml"] = (header + yaml.safe_dump(asyncapi_document(), sort_keys=False)).encode()
    # the problems the webmaster is told about: a contract too (docs/architecture.md section 10)
    files["problem.v1.json"] = orjson.dumps(problem_schema(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    files["problems.md"] = problems_markdown().encode()
    return files


def write_contract_files(directory: Path = SCHEMAS_DIR) -> list[str]:
    """Regenerate the schema files and the AsyncAPI document; returns the names written."""
    written = []
    for name, data in _rendered_files().items():
        path = directory / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
            written.append(name)
    return written


def stale_contract_files(directory: Path = SCHEMAS_DIR) -> list[str]:
    """Names of generated files that are missing or differ from what the models say."""
    return [
        name
        for name, data in _rendered_files().items()
        if not (directory / name).exists() or (directory / name).read_bytes() != data
    ]


def problems_markdown() -> str:
    """``schemas/problems.md``: the table for people (generated; never edit the file by hand)."""
    lines = [
        "# Problem codes",
        "",
        "Every problem turbocubes reports about a feed, an upload or a page is an object",
        "`{code, severity, where: {feed, item, link, line, column}, message, hint}`. The codes below are",
        "stable: a code keeps its meaning and is never reused. `hint` is the default advice; a problem",
        "may carry a more specific one. The object's JSON Schema is `problem.v1.json`. Generated from",
        "`shared/problems/codes.py` by `turbocubes schemas write`; do not edit. The API serves the same",
        "table at `GET /api/v1/problems`.",
        "",
        "Severity: **error** -- content was not published as the source has it (an item refused, a",
        "page without an image); **warning** -- recovered, nothing known lost, fix it anyway;",
        "**info** -- nothing to fix now.",
        "",
        "| code | severity | meaning | how to fix |",
        "|---|---|---|---|",
    ]
    for row in problem_codes.CODES.values():
        lines.append(f"| `{row.code}` | {row.severity} | {_md(row.title)} | {_md(row.hint)} |")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    """Plain text in a Markdown table cell: markup characters shown as themselves."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
