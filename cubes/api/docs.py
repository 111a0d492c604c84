"""The API docs page and the problem-code table (docs/architecture.md section 10).

* ``GET /docs`` -- every operation of the OpenAPI document (``openapi.py``) on one page for
  people: method, path, what it does, who may call it, its parameters and answers, and how to
  start (sign up, verify, add a feed). Plain HTML from a Jinja2 template with autoescape, no
  script (the page works under ``default-src 'none'``).
* ``GET /api/v1/problems`` -- the table of problem codes (``shared/problems/codes.py``) as JSON:
  what every ``code`` in a feed status, fetch history or upload task means and how to fix it.

Both are public: they describe the API, nothing of any tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from cubes.api.errors import json_response
from cubes.api.openapi import document
from shared.pages.templates import html_environment
from shared.problems.codes import CODES

__all__ = ["add_routes", "render_docs"]

_ENV = html_environment("cubes.api")
_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
_METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True, slots=True)
class _Operation:
    method: str
    path: str
    summary: str
    tag: str
    access: str
    params: list[dict[str, Any]]
    body: str
    answers: list[tuple[str, str]]


def _access(op: dict[str, Any]) -> str:
    security = op.get("security")
    if security == []:
        return "public"
    if security and "adminToken" in security[0]:
        return "admin token"
    return "tenant token"


def _param(p: dict[str, Any]) -> dict[str, Any]:
    return {"name": p["name"], "in": p["in"], "required": p.get("required", False), "text": p.get("description", "")}


def _body(op: dict[str, Any]) -> str:
    content = (op.get("requestBody") or {}).get("content") or {}
    for media in content.values():
        ref = (media.get("schema") or {}).get("$ref", "")
        if ref:
            return f"{', '.join(content)}: {ref.rsplit('/', 1)[-1]}"
    return ", ".join(content)


def _operations(doc: dict[str, Any]) -> list[_Operation]:
    out = []
    for path, item in doc["paths"].items():
        for method in _METHODS:
            op = item.get(method)
            if op is None:
                continue
            out.append(
                _Operation(
                    method=method.upper(),
                    path=path,
                    summary=op.get("summary", ""),
                    tag=(op.get("tags") or ["other"])[0],
                    access=_access(op),
                    params=[
                        {
                            "name": p["name"],
                            "in": p["in"],
                            "required": p.get("required", False),
                            "text": p.get("description", ""),
                        }
                        for p in op.get("parameters") or []
                    ],
                    body=_body(op),
                    answers=[(code, r.get("description", "")) for code, r in op["responses"].items()],
                )
            )
    return out


def render_docs(doc: dict[str, Any] | None = None) -> str:
    doc = doc or document()
    ops = _operations(doc)
    tags = sorted({o.tag for o in ops}, key=lambda t: [o.tag for o in ops].index(t))
    about = {t["name"]: t.get("description", "") for t in doc.get("tags", [])}
    return _ENV.get_template("docs.html").render(
        info=doc["info"], tags=tags, about=about, ops=ops, codes=list(CODES.values()), paths=doc["paths"]
    )


async def docs_page(request: web.Request) -> web.StreamResponse:
    headers = {
        "Content-Security-Policy": _CSP,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-cache",
    }
    return web.Response(text=render_docs(), content_type="text/html", charset="utf-8", headers=headers)


async def problem_codes(request: web.Request) -> web.StreamResponse:
    return json_response(
        {"codes": [{"code": c.code, "severity": c.severity, "title": c.title, "hint": c.hint} for c in CODES.values()]}
    )


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/docs", docs_page, name="docs", allow_head=False)
    router.add_get("/api/v1/problems", problem_codes, name="problems", allow_head=False)
