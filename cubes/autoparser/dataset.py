"""Corpus samples -> feature matrices, labels and weights (docs/architecture.md section 3, autoparser).

One ``PageData`` per sample holds the page's block texts, its features, the self-labels
(``label.py``) and per-block training weights: 1 for a labelled block, 0 for a block
whose label is unknown (partial snippet labels), which never reaches the model.
Weighting blocks by length (``1 + log1p(words)`` or ``sqrt(words)``, since token F1 is
decided by long blocks) was tried and measured slightly worse in 4-fold cross-validation
on the training pages (token F1 0.948 / 0.947 vs 0.955 unweighted).

``build_corpus_data`` also learns a host template (``templates.py``) for every site with
more pages than ``templates.MIN_PAGES`` and gives its pages their template features, as
the cube does for a host it has crawled: templates use no labels, so learning one from
a held-out site's own pages is what production does too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cubes.autoparser.corpus import Sample
from cubes.autoparser.features import page_features
from cubes.autoparser.label import label_blocks, label_by_snippets
from cubes.autoparser.meta import read_meta
from cubes.autoparser.page import Page
from cubes.autoparser.segment import parse_html, segment, segment_tree
from cubes.autoparser.sites import site_of
from cubes.autoparser.templates import FILTER_SHARE, MIN_PAGES, HostTemplate

__all__ = ["PageData", "build_corpus_data", "build_page_data", "reference_text"]


@dataclass
class PageData:
    sample: Sample
    #: the page's block texts (the tree is not kept: a corpus of trees does not fit in memory)
    texts: list[str]
    x: npt.NDArray[np.float32]
    y: npt.NDArray[np.int64]
    w: npt.NDArray[np.float64]
    #: full ground-truth main text (None for snippet-labelled pages)
    reference: str | None
    #: the host template the page's features were built with (None: its site has too few pages)
    template: HostTemplate | None = None


def reference_text(sample: Sample) -> str | None:
    """The full main text of a sample, block per line, segmented like the pages themselves."""
    if sample.reference_html is not None:
        return "\n".join(segment(sample.reference_html).texts)
    return sample.reference_text


def build_page_data(sample: Sample, template: HostTemplate | None = None) -> PageData:
    """Features and labels of one sample; ``template`` must have learnt the page (training)."""
    root = parse_html(sample.html)
    page = segment_tree(root)
    meta = read_meta(root, sample.url)
    x = page_features(page, meta.og_title, meta.article_body, template, counted=True)
    ref = reference_text(sample)
    ones = np.ones(page.n)
    if ref is not None:
        y = label_blocks(page.texts, ref, sample.title)
        w = ones
    else:
        y, known = label_by_snippets(page.texts, sample.with_, sample.without, sample.title, sample.comments)
        w = known
    return PageData(sample, page.texts, x, y, w, ref, template)


def site_templates(samples: Sequence[Sample]) -> dict[str, HostTemplate]:
    """A template for each site with more than ``MIN_PAGES`` pages among ``samples``.

    A site whose pages are mostly copies of each other (Readability's ``rtl-1`` .. ``-4`` are one
    lorem-ipsum page four times) gets none: its "template" would be its article, and the model
    would learn that text on every page of a host is body, the opposite of what templates mean.
    """
    by_site: dict[str, list[Sample]] = {}
    for s in samples:
        by_site.setdefault(site_of(s), []).append(s)
    out: dict[str, HostTemplate] = {}
    for site, members in by_site.items():
        if len(members) > MIN_PAGES:
            template = HostTemplate(site)
            pages = [segment(s.html) for s in members]
            for s, page in zip(members, pages, strict=True):
                template.learn(page, s.url or s.name)
            if sum(_template_text_share(template, p) for p in pages) / len(pages) <= _COPIES_SHARE:
                out[site] = template
    return out


#: a site whose pages are on average more than this share template text is a set of copies
_COPIES_SHARE = 0.5


def _template_text_share(template: HostTemplate, page: Page) -> float:
    share, _ = template.shares(page, counted=True)
    chars = page.char_counts()
    return float(chars[share >= FILTER_SHARE].sum() / max(chars.sum(), 1.0))


def build_corpus_data(samples: Sequence[Sample]) -> list[PageData]:
    templates = site_templates(samples)
    return [build_page_data(s, templates.get(site_of(s))) for s in samples]
