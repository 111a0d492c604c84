"""The autoparser: an article's main text from a plain HTML page (docs/architecture.md section 3).

For library users, one call::

    from cubes.autoparser import extract_article

    text = extract_article(html, url="https://example.com/2024/05/story")

``extract_article(html, url=None)`` returns the article's main text, one block (paragraph,
heading, list item, table cell) per line, without the title, navigation, comments,
teasers or footers; ``""`` when the page has no article text. It uses the model shipped
with the package (``model/default.cbm``), loaded once on the first call (about 0.2 s) and
shared by every later call and thread. ``url`` resolves relative links and is otherwise
only a hint. For the title, the clean body HTML, images, dates and the completeness
guard, use ``cubes.autoparser.extract.Extractor``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cubes.autoparser.extract import Extractor

__all__ = ["extract_article"]


@functools.cache
def _default_extractor() -> Extractor:
    # imported here so that importing the package (the cube, the CLI) does not load CatBoost
    from cubes.autoparser.extract import Extractor

    return Extractor()


def extract_article(html: str, url: str | None = None) -> str:
    """The main text of the article in ``html`` (see the module docstring); ``""`` when there is none."""
    if not isinstance(html, str):
        raise TypeError(f"extract_article takes the page as str, not {type(html).__name__}")
    return _default_extractor().extract(html, url or "").text
