"""Per-block features of a segmented page, as one numpy matrix (docs/architecture.md section 3, autoparser).

Everything is computed for the whole page at once: character statistics come
from one UTF-32 view of all block texts reduced per block (``np.add.reduceat``),
DOM context from preorder intervals (a block lies inside element E iff
``pre(E) <= pre(block) < end(E)``), neighbours from shifted columns. The only
per-block Python work is building the joined text and the title similarity of
short blocks.

This module owns the matrix: its columns (``FEATURE_NAMES``) and how ``page_features`` fills
them. The signals come from ``text_signals.py`` (the blocks' text), ``readability.py`` (candidate
scores), ``repeats.py`` (sibling repeats) and ``templates.py`` (the host's template).

``FEATURE_NAMES`` is the column order; a model stores it and refuses a matrix
built with another order (see ``model.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cubes.autoparser.class_groups import GROUP_NAMES
from cubes.autoparser.page import Page
from cubes.autoparser.readability import ancestor_of, interval_sums, readability_scores
from cubes.autoparser.repeats import sibling_repeats
from cubes.autoparser.tags import CONTEXT_TAGS
from cubes.autoparser.templates import HostTemplate
from cubes.autoparser.text_signals import body_overlap, boiler_words, char_stats, has_date, title_similarity

__all__ = ["FEATURE_NAMES", "page_features"]

_TAG_GROUPS: dict[str, int] = {}
for _i, _tags in enumerate(
    (
        "p",
        "div",
        "li",
        "td th",
        "h1",
        "h2",
        "h3 h4 h5 h6",
        "pre",
        "blockquote",
        "figcaption caption",
        "dt dd",
        "section article main",
        "header footer nav aside",
        "span a strong em b i",
    )
):
    for _t in _tags.split():
        _TAG_GROUPS[_t] = _i
_N_TAG = 15  # 14 groups + "other"

_N_GROUPS = len(GROUP_NAMES)

FEATURE_NAMES: tuple[str, ...] = (
    *(f"tag_{i}" for i in range(_N_TAG)),
    "depth",
    "rel_depth",
    "pos",
    "text_pos",
    "log_chars",
    "log_words",
    "avg_word_len",
    "digit_ratio",
    "punct_ratio",
    "upper_ratio",
    "sentences",
    "commas",
    "ends_with_stop",
    "link_density",
    "n_links",
    "has_image",
    "log_chars_rel_max",
    *(f"ctx_{t}" for t in CONTEXT_TAGS),
    "ctx_article_body",
    *(f"own_{g}" for g in GROUP_NAMES),
    *(f"anc_{g}" for g in GROUP_NAMES),
    "par_log_chars",
    "par_blocks",
    "par_link_density",
    "par_long_share",
    "gp_log_chars",
    "gp_blocks",
    "gp_link_density",
    "gp_long_share",
    "h1_dist",
    "after_h1",
    "in_top",
    "in_top_parent",
    "top_score_share",
    "par_score_rel",
    "prev_log_chars",
    "next_log_chars",
    "prev_link",
    "next_link",
    "prev2_log_chars",
    "next2_log_chars",
    "win_long_share",
    "title_sim",
    "same_tag_run",
    "boiler_words",
    "top_rel_pos",
    "jsonld_body_overlap",
    "page_log_blocks",
    "page_log_chars",
    # Comment threads, teaser lists, split blocks, host templates
    "rep_self",
    "rep_par",
    "rep_gp",
    "short_link_run",
    "img_window",
    "has_date",
    "in_comment",
    "split_piece",
    "tpl_share",
    "tpl_path_share",
)

#: a block counts as "long text" (a paragraph, not a label) from this many characters on:
#: readability.js uses 25 chars as the floor for scoring and 80-100 as "a real paragraph"
_LONG = 80


def _run_lengths(flag: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """Length of the run of True that each position belongs to (0 where False)."""
    edges = np.diff(np.concatenate(([0], flag.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    out = np.zeros(flag.size)
    lengths = np.repeat(ends - starts, ends - starts)
    out[flag] = lengths
    return out


def _shift(x: npt.NDArray[np.float64], k: int, fill: float = 0.0) -> npt.NDArray[np.float64]:
    out = np.full_like(x, fill)
    if k > 0:
        out[k:] = x[:-k]
    elif k < 0:
        out[:k] = x[-k:]
    else:
        out[:] = x
    return out


def page_features(
    page: Page,
    title_hint: str = "",
    article_body: str = "",
    template: HostTemplate | None = None,
    *,
    counted: bool = False,
) -> npt.NDArray[np.float32]:
    """The (n_blocks, len(FEATURE_NAMES)) feature matrix of ``page``.

    ``template``: the host's template (``templates.py``); ``counted``: ``page`` is one of the
    pages it was learnt from (training), so its own occurrence does not count.
    """
    n = page.n
    cols: list[npt.NDArray[np.float64]] = []
    if n == 0:
        return np.zeros((0, len(FEATURE_NAMES)), dtype=np.float32)
    chars, digits, punct, spaces, upper, ends, commas = char_stats(page.texts)
    words = spaces + 1.0
    link = np.asarray(page.link_chars, dtype=np.float64)
    pre = np.asarray(page.pre, dtype=np.int64)
    end_of = np.asarray(page.end_of, dtype=np.int64)

    tag_ix = np.fromiter((_TAG_GROUPS.get(t, _N_TAG - 1) for t in page.tags), dtype=np.int64, count=n)
    onehot = np.zeros((n, _N_TAG))
    onehot[np.arange(n), tag_ix] = 1.0
    cols.extend(onehot.T)

    depth = np.asarray(page.depth, dtype=np.float64)
    cols += [depth, depth / max(depth.max(), 1.0)]
    idx = np.arange(n, dtype=np.float64)
    cum = np.cumsum(chars) - chars
    total = max(chars.sum(), 1.0)
    cols += [idx / max(n - 1, 1), cum / total]
    log_chars = np.log1p(chars)
    cols += [log_chars, np.log1p(words), chars / words]
    cols += [digits / chars, punct / chars, upper / chars, ends, commas]
    last = np.fromiter((t[-1] in ".!?\u2026\u3002\"'\u201d)" for t in page.texts), dtype=np.float64, count=n)
    cols.append(last)
    ld = np.minimum(link / chars, 1.0)
    cols += [
        ld,
        np.asarray(page.n_links, dtype=np.float64),
        (np.asarray(page.n_images) > 0).astype(np.float64),
        log_chars - log_chars.max(),
    ]

    ctx = np.asarray(page.ctx, dtype=np.int64)
    for b in range(len(CONTEXT_TAGS) + 1):
        cols.append(((ctx >> b) & 1).astype(np.float64))
    own = np.asarray(page.own_class, dtype=np.int64)
    for b in range(_N_GROUPS):
        cols.append(((own >> b) & 1).astype(np.float64))
    anc_class = page.anc_class_array().astype(np.float64)
    cols.extend(anc_class.T)

    # parent / grandparent containers: how much text they hold and how link-heavy it is
    anc = page.anc_array()
    longb = (chars >= _LONG).astype(np.float64)
    for level in (0, 1):
        a = anc[:, level]
        valid = a >= 0
        lo = np.where(valid, a, 0)
        hi = np.where(valid, end_of[lo], 0)
        cnt, (c_chars, c_link, c_long) = interval_sums(pre, lo, hi, [chars, link, longb])
        cntf = np.maximum(cnt.astype(np.float64), 1.0)
        cols += [
            np.log1p(c_chars),
            np.log1p(cnt.astype(np.float64)),
            np.divide(c_link, c_chars, out=np.zeros(n), where=c_chars > 0),
            c_long / cntf,
        ]

    # distance to the first h1 (or the first heading when there is no h1), in blocks
    tags = page.tags
    h1 = next((i for i, t in enumerate(tags) if t == "h1"), -1)
    if h1 < 0:
        h1 = next((i for i, t in enumerate(tags) if t in ("h2", "h3")), -1)
    if h1 >= 0:
        dist = (idx - h1) / 50.0
        cols += [np.clip(dist, -2.0, 2.0), (idx >= h1).astype(np.float64)]
    else:
        cols += [np.full(n, 3.0), np.full(n, 0.5)]

    scores, top = readability_scores(page, chars, commas, link)
    page.top_candidate = top
    if top >= 0:
        in_top = ((pre >= top) & (pre < end_of[top])).astype(np.float64)
        # the top candidate's parent often holds the rest of the article (readability's sibling step)
        top_parent_candidates = list(ancestor_of(page, top))
        if top_parent_candidates:
            tp = top_parent_candidates[0]
            in_tp = ((pre >= tp) & (pre < end_of[tp])).astype(np.float64)
        else:
            in_tp = in_top
        top_score = scores[top]
        par = anc[:, 0]
        par_score = np.where(par >= 0, scores[np.maximum(par, 0)], 0.0)
        cols += [in_top, in_tp, np.full(n, top_score / max(scores.sum(), 1e-9)), par_score / top_score]
        inside = np.flatnonzero(in_top)
        t_first, t_last = (int(inside[0]), int(inside[-1])) if inside.size else (0, n - 1)
        # where the block sits relative to the densest container: <0 before it, 0..1 inside, >1 after
        top_rel = np.clip((idx - t_first) / max(t_last - t_first, 1), -3.0, 4.0)
    else:
        cols += [np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)]
        top_rel = np.full(n, -4.0)  # no candidate at all: "before" everything

    prev_ld, next_ld = _shift(ld, 1), _shift(ld, -1)
    cols += [_shift(log_chars, 1), _shift(log_chars, -1), prev_ld, next_ld, _shift(log_chars, 2), _shift(log_chars, -2)]
    # share of long blocks in a window of +-3 blocks: paragraphs come in runs
    k = 3
    padded = np.concatenate((np.zeros(k), longb, np.zeros(k)))
    cs = np.concatenate(([0.0], np.cumsum(padded)))
    cols.append((cs[2 * k + 1 :] - cs[: -2 * k - 1]) / (2 * k + 1))
    cols.append(title_similarity(page.texts, title_hint or page.html_title))
    same = np.fromiter((i > 0 and tags[i] == tags[i - 1] for i in range(n)), dtype=np.float64, count=n)
    cols.append(same)
    cols += [boiler_words(page.texts), top_rel, body_overlap(page.texts, article_body)]
    cols += [np.full(n, np.log1p(n)), np.full(n, np.log1p(total))]

    cols.extend(sibling_repeats(page).T)
    # teaser lists: runs of short, mostly-linked blocks, often with a thumbnail each
    linked_short = (ld >= 0.5) & (chars < 250)
    cols.append(np.log1p(_run_lengths(linked_short)))
    imgs = np.asarray(page.n_images, dtype=np.float64)
    padded = np.concatenate((np.zeros(k), imgs, np.zeros(k)))
    cs = np.concatenate(([0.0], np.cumsum(padded)))
    cols.append(cs[2 * k + 1 :] - cs[: -2 * k - 1])
    cols.append(has_date(page.texts))
    cols.append(np.asarray(page.in_comment, dtype=np.float64))
    cols.append(np.asarray(page.split, dtype=np.float64))
    if template is not None:
        cols.extend(template.shares(page, counted=counted))
    else:
        cols += [np.full(n, -1.0), np.full(n, -1.0)]
    mat = np.column_stack(cols).astype(np.float32)
    return mat
