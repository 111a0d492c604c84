"""The frontend's HTML templates: Jinja2 with autoescape (docs/architecture.md section 3, "frontend").

The environment is the one every page of ours is made with (``shared/pages/templates.py``):
every value a template prints is escaped unless it is ``Markup`` of our own (the
stylesheets and the rocket below, a page's constant CSS) -- so partner text (titles,
feed URLs, error messages) can never become HTML, whoever writes the next template.
Templates live in ``cubes/frontend/html/``; ``layout.html`` is the one page frame,
``macros.html`` the pieces pages share (the search box, a list of results).
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from cubes.frontend.assets import ROCKET_SVG, SITE_CSS
from shared.pages.templates import html_environment

__all__ = ["ENV", "duration", "render"]


def duration(seconds: float | None) -> str:
    """A duration for people: ``4.2 s``, ``35 s``, ``12 min``, ``3.5 h``, ``4 d``; ``—`` for None."""
    if seconds is None:
        return "—"
    s = abs(seconds)
    if s < 10:
        return f"{s:.1f} s"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 172_800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86_400:.0f} d"


def _num(value: int | float | None) -> str:
    return "—" if value is None else f"{value:,}"


ENV = html_environment("cubes.frontend")
ENV.filters["num"] = _num
ENV.filters["dur"] = duration
ENV.globals["site_css"] = Markup(SITE_CSS)  # noqa: S704 - our own stylesheet, a constant
ENV.globals["rocket"] = Markup(ROCKET_SVG)  # noqa: S704 - our own SVG, a constant


def render(name: str, **context: Any) -> str:
    return ENV.get_template(name).render(**context)
