"""Every string a request may carry is bounded in the OpenAPI document, and the longest request it allows is read.

aiohttp answers a request line longer than the server reads (``cubes.api.app.REQUEST_LINE_MAX``) or a
header longer than its field limit with a text/plain 400 before any handler runs: a fuzzer that sends
such a value gets an answer the document does not describe. So each string parameter (path, query,
header) has a ``maxLength``, which its handler checks (``cubes.api.params``: 422 naming it), and the
longest request line of each operation, every parameter at its longest in 4-byte characters (12 bytes
each once percent-encoded), fits the line the app reads. Each string of a JSON request body is bounded
too (a ``maxLength``, an enum, or an anchored pattern of bounded repeats), as its handler checks it.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

from aiohttp.web_protocol import RequestHandler
from yarl import URL

from cubes.api.openapi import document
from tests.unit.cubes.api.apikit import ApiHarness

#: a character of 4 bytes in UTF-8 (a private-use plane): 12 bytes once percent-encoded
WIDE = "\U000f0000"

#: operations asked at their longest, and the parameter then sent one character too long
LONGEST = [
    ("get", "/indexnow", "keyLocation"),
    ("get", "/api/v1/wordstat", "region"),
    ("get", "/api/v1/uploads", "host"),
    ("delete", "/api/v1/pages", "url"),
    ("get", "/api/v1/feeds/{feed_id}/fetches/{fetch_id}", "fetch_id"),
    ("get", "/api/v1/hosts/{host}/queries", "host"),
    ("get", "/api/v1/uploads/{task_id}", "task_id"),
]


def _longest(schema: dict[str, Any]) -> str | None:
    """The parameter's longest value (None: nothing bounds it)."""
    kind = schema.get("type")
    if "enum" in schema:
        return max((str(v) for v in schema["enum"]), key=len)
    if kind == "string":
        return WIDE * schema["maxLength"] if "maxLength" in schema else None
    if kind == "integer":
        if "minimum" not in schema or "maximum" not in schema:
            return None
        return max(str(schema["minimum"]), str(schema["maximum"]), key=len)
    if kind == "boolean":
        return "false"
    return None


#: a pattern that bounds its string: anchored, with no unbounded repeat (*, +, {n,})
_BOUNDED_PATTERN = re.compile(r"\^(?:[^*+{]|\{\d+(?:,\d+)?\})*\$")


def _unbounded_strings(schema: Any, components: dict[str, Any], where: str, seen: frozenset[str]) -> list[str]:
    """Where a request body's schema lets a string be of any length."""
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return [] if name in seen else _unbounded_strings(components[name], components, where, seen | {name})
    out: list[str] = []
    kind = schema.get("type")
    kinds: list[Any] = kind if isinstance(kind, list) else [kind]
    bounded = any(b in schema for b in ("maxLength", "enum", "const"))
    bounded = bounded or _BOUNDED_PATTERN.fullmatch(schema.get("pattern", "")) is not None
    if "string" in kinds and not bounded:
        out.append(where)
    for name, sub in schema.get("properties", {}).items():
        out += _unbounded_strings(sub, components, f"{where}.{name}", seen)
    for key, suffix in (("items", "[]"), ("additionalProperties", "{*}"), ("propertyNames", "{name}")):
        out += _unbounded_strings(schema.get(key), components, where + suffix, seen)
    for key in ("oneOf", "anyOf", "allOf"):
        for sub in schema.get(key, []):
            out += _unbounded_strings(sub, components, where, seen)
    return out


def _request(path: str, params: list[dict[str, Any]], longer: str | None = None) -> tuple[str, dict[str, str]]:
    """The operation's request with every path and query parameter at its longest (``longer`` one more)."""
    query: dict[str, str] = {}
    for p in params:
        value = _longest(p["schema"])
        assert value is not None
        if p["name"] == longer:
            value += WIDE if p["schema"].get("type") == "string" else "0"
        if p["in"] == "path":
            path = path.replace("{" + p["name"] + "}", value)
        elif p["in"] == "query":
            query[p["name"]] = value
    return path, query


def _line(method: str, path: str, query: dict[str, str]) -> int:
    """The length in bytes of the request line that asks for ``path`` with ``query``."""
    target = URL.build(path=path, query=query).raw_path_qs
    return len(f"{method.upper()} {target} HTTP/1.1")


async def test_every_string_parameter_is_bounded_and_the_longest_request_is_answered_in_json(tmp_path: Path) -> None:
    doc = document()
    field_max = inspect.signature(RequestHandler.__init__).parameters["max_field_size"].default
    async with ApiHarness(tmp_path) as api:
        handler_args = api.client.app._handler_args  # what every server of the app reads
        line_max = handler_args["max_line_size"]
        field_max = handler_args.get("max_field_size", field_max)
        unbounded, too_long = [], []
        for path, item in doc["paths"].items():
            for method, op in item.items():
                params = op.get("parameters", [])
                for p in params:
                    value = _longest(p["schema"])
                    if value is None:
                        unbounded.append(f"{method.upper()} {path} {p['in']} {p['name']}")
                    elif p["in"] == "header" and len(value.encode()) > field_max:
                        too_long.append(f"{method.upper()} {path} header {p['name']}: {len(value.encode())} bytes")
                if not any(_longest(p["schema"]) is None for p in params):
                    line = _line(method, *_request(path, params))
                    if line > line_max:
                        too_long.append(f"{method.upper()} {path}: a line of {line} bytes")
                body = op.get("requestBody", {}).get("content", {}).get("application/json")
                if body is not None:
                    where = f"{method.upper()} {path} body"
                    unbounded += _unbounded_strings(body["schema"], doc["components"]["schemas"], where, frozenset())
        assert not unbounded, f"strings with no maxLength (over {line_max} bytes a line in a query): {unbounded}"
        assert not too_long, f"requests longer than the app reads ({line_max} a line, {field_max} a header): {too_long}"

        _, token = await api.tenant("a.partner.test")
        for method, path, name in LONGEST:
            params = doc["paths"][path][method]["parameters"]
            for longer in (None, name):
                target, query = _request(path, params, longer)
                r = await api.client.request(method, URL.build(path=target, query=query), headers=api.auth(token))
                # answered by the API, in its shape: never aiohttp's text/plain 400 for a line too long
                assert r.content_type == "application/json", (method, path, longer, r.status, await r.text())
                body = await r.json()
                assert str(r.status) in doc["paths"][path][method]["responses"], (method, path, r.status, body)
                if longer is not None:
                    assert r.status == 422, (method, path, longer, body)
                    assert any(f["field"] == name and "at most" in f["message"] for f in body["fields"]), body

        # strings of a body: one character too long is refused, naming the field
        too_long_bodies = [
            ("post", "/api/v1/feeds", {"url": "https://a.partner.test/" + "a" * 4074}, "url"),
            ("post", "/api/v1/feeds/check", {"url": "https://a.partner.test/" + "a" * 4074}, "url"),
            ("post", "/api/v1/hosts", {"host": "a" * 256}, "host"),
            ("post", "/api/v1/hosts", {"url": "https://a.partner.test/" + "a" * 4074}, "url"),
            ("put", "/api/v1/hosts/a.partner.test/branding", {"display_name": "a" * 61}, "display_name"),
        ]
        for method, path, sent, name in too_long_bodies:
            r = await api.client.request(method, path, json=sent, headers=api.auth(token))
            body = await r.json()
            assert r.status == 422, (method, path, name, body)
            assert any(f["field"] == name for f in body["fields"]), body
