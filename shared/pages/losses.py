"""What a page lost on its way, told to its webmaster (docs/architecture.md section 10).

The media and delay cubes publish a document without each image that failed
(a 404, not an image, too large...) or was not in the CDN by the deadline:
a Turbo page never hotlinks the partner. Nothing removed goes unreported, so
both turn what they left out into the page's problems (``page_problems``), one
``image.*`` problem per image with the reason, stored for that version of the
page (``ProblemStore.put_page_problems``). The feed's status, the API, the
console and the host's failing count read them from there.
"""

from __future__ import annotations

from collections.abc import Mapping

from shared.messages import Document, SourceKind
from shared.pages.completeness import Carried, holds, incomplete_message
from shared.previews import preview_key
from shared.problems import image_problem, problem
from shared.stores.problems import PageProblems

#: the reason of an image that was only late: it does not hold its page (``shared/pages/completeness.py``)
LATE = "late"

__all__ = ["LATE", "page_problems"]

#: sources whose ``SourceRef.id`` is a feed id (the problems' ``where.feed``)
_FEED_SOURCES = frozenset({SourceKind.rss, SourceKind.turbo, SourceKind.yml})


def page_problems(doc: Document, lost: Mapping[str, str], *, hold: bool = False, shown: int = 0) -> PageProblems | None:
    """The problems of ``doc`` without the media in ``lost`` (URL -> reason); None if nothing.

    ``hold`` (``media.hold_incomplete``): an image lost for good (``completeness.holds``: a 404, not
    an image...; not one late or failed for now) holds the page back: the row is ``held`` and says
    so (``page.incomplete``), and the caller publishes nothing. ``shown``: the media the page still
    shows, for the message.
    """
    if not lost:
        return None
    feed = doc.source.id if doc.source.kind in _FEED_SOURCES else None
    problems = tuple(image_problem(url, reason, page_url=doc.url, feed=feed) for url, reason in sorted(lost.items()))
    failed = sum(1 for reason in lost.values() if holds(reason))
    held = hold and failed > 0
    if held:
        how = (
            "it could not be copied: its own problem below says why"
            if failed == 1
            else ("they could not be copied: their own problems below say why")
        )
        message = incomplete_message(Carried(failed, 0), Carried(failed + shown, 0), how)
        problems = (problem("page.incomplete", message, feed=feed, link=doc.url), *problems)
    return PageProblems(
        # a preview is stored under its own key, so its problems never touch the live page's
        url=preview_key(doc.source.id, doc.url) if doc.preview else doc.url,
        version=doc.version,
        host=doc.host,
        source_kind=doc.source.kind.value,
        source_id=doc.source.id,
        problems=problems,
        held=held,
    )
