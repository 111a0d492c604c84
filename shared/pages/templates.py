"""HTML is made one way: Jinja2 templates that escape every value (docs/conventions.md rule 18).

Every page we serve -- the published Turbo page (``cubes/kvwriter/html/``), the frontend's
pages and the webmaster console (``cubes/frontend/html/``), the local preview of
``turbocubes render`` (``cubes/html/``) -- comes from a template of an environment made here:

* ``autoescape``: a value a template prints is escaped unless it is ``Markup``, so partner text
  (a title, a feed URL, an error message) never becomes HTML, whoever writes the next template;
  the only ``Markup`` is our own (a constant stylesheet) or the safe-HTML policy's output;
* ``StrictUndefined``: a misspelt variable fails the tests instead of printing an empty cell;
* ``trim_blocks`` / ``lstrip_blocks``: a ``{% ... %}`` line leaves no blank line behind;
* ``auto_reload=False``: templates ship with the package and are read once;
* the ``marked`` filter: a text cut into pieces, some to highlight (a search result's matched
  words, ``shared/search/snippets.py``), each piece escaped, the highlighted ones in ``<mark>``.
  A filter, not a macro: a page of results draws forty, and a macro call costs ~15 us.

Jinja2 is imported here only, when a module that renders asks for an environment: the
``turbocubes`` command imports none of it for commands that render nothing.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from jinja2 import Environment
    from markupsafe import Markup

__all__ = ["Pieces", "html_environment", "marked"]


class Pieces(Protocol):
    """A text to print with some of it highlighted (``shared.search.snippets.Snippet``)."""

    def parts(self) -> list[tuple[str, bool]]: ...


def marked(text: Pieces | str) -> Markup | str:
    """``text``'s highlighted pieces in ``<mark>``, every piece escaped; a ``str`` as it is (printing escapes it)."""
    if isinstance(text, str):
        return text
    from markupsafe import Markup

    # html.escape is markupsafe.escape's rule (& < > " ') in a third of its time on a short piece
    pieces = (f"<mark>{escape(p)}</mark>" if hit else escape(p) for p, hit in text.parts())
    return Markup("".join(pieces))  # noqa: S704 - every piece escaped above


def html_environment(package: str, folder: str = "html") -> Environment:
    """The environment of the templates in ``package``'s ``folder``, escaping by default."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader(package, folder),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters["marked"] = marked
    return env
