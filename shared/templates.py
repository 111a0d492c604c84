"""HTML is made one way: Jinja2 templates that escape every value (docs/conventions.md rule 18).

Every page we serve -- the published Turbo page (``cubes/kvwriter/html/``), the frontend's
pages and the webmaster console (``cubes/frontend/html/``), the local preview of
``turbocubes render`` (``cubes/html/``) -- comes from a template of an environment made here:

* ``autoescape``: a value a template prints is escaped unless it is ``Markup``, so partner text
  (a title, a feed URL, an error message) never becomes HTML, whoever writes the next template;
  the only ``Markup`` is our own (a constant stylesheet) or the safe-HTML policy's output;
* ``StrictUndefined``: a misspelt variable fails the tests instead of printing an empty cell;
* ``trim_blocks`` / ``lstrip_blocks``: a ``{% ... %}`` line leaves no blank line behind;
* ``auto_reload=False``: templates ship with the package and are read once.

Jinja2 is imported here only, when a module that renders asks for an environment: the
``turbocubes`` command imports none of it for commands that render nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = ["html_environment"]


def html_environment(package: str, folder: str = "html") -> Environment:
    """The environment of the templates in ``package``'s ``folder``, escaping by default."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(
        loader=PackageLoader(package, folder),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
