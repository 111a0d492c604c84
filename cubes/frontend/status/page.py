"""The public status page's HTML, from ``html/status.html`` (autoescaped; see ``jinja.py``)."""

from __future__ import annotations

from cubes.frontend.jinja import render
from cubes.frontend.status.view import PipelineView

__all__ = ["STATUS_CSS", "render_status"]

STATUS_CSS = (
    ".wrap{max-width:78rem}"
    ".banner{background:var(--card);border:1px solid var(--line);border-left:.3rem solid var(--ok);"
    "border-radius:.9rem;padding:.8rem 1.1rem;margin:0 0 2rem;box-shadow:var(--shadow)}"
    ".banner.hot{border-left-color:var(--acc)}.banner.hot b{color:var(--acc)}.banner p{margin:.2rem 0}"
    ".warn{color:var(--acc)}td small,.sub{display:block;color:var(--mut);font-size:.8rem}"
    "td.msg{min-width:14rem;overflow-wrap:anywhere}td.feed{overflow-wrap:anywhere;min-width:12rem}"
    ".note{color:var(--mut);margin:0 0 2rem}"
)


def render_status(view: PipelineView) -> str:
    return render("status.html", title="Pipeline status · turbocubes", view=view, st=view.status, extra_css=STATUS_CSS)
