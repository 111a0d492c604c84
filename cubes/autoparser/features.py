"""Per-block features of a segmented page, as one numpy matrix (DESIGN.md section 3, autoparser).

Everything is computed for the whole page at once: character statistics come
from one UTF-32 view of all block texts reduced per block (``np.add.reduceat``),
DOM context from preorder intervals (a block lies inside element E iff
``pre(E) <= pre(block) < end(E)``), neighbours from shifted columns. The only
per-block Python work is building the joined text and the title similarity of
short blocks.

``FEATURE_NAMES`` is the column order; a model stores it and refuses a matrix
built with another order (see ``model.py``).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import numpy.typing as npt

from cubes.autoparser.class_groups import CLASS_GROUPS
from cubes.autoparser.page import Page
from cubes.autoparser.tags import CONTEXT_TAGS
from cubes.autoparser.templates import HostTemplate

__all__ = ["FEATURE_NAMES", "page_features", "readability_scores"]

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

# character classes, looked up per UTF-32 code point (clipped to the BMP: rarer planes
# count as letters, which is what they almost always are)
_CLS_DIGIT, _CLS_PUNCT, _CLS_SPACE, _CLS_UPPER, _CLS_END, _CLS_COMMA = 1, 2, 3, 4, 5, 6
_LUT = np.zeros(0x10000, dtype=np.int8)
for _c in range(0x10000):
    _ch = chr(_c)
    if _ch.isdigit():
        _LUT[_c] = _CLS_DIGIT
    elif _ch in ".!?\u2026\u3002\uff01\uff1f":
        _LUT[_c] = _CLS_END
    elif _ch in ",;\u3001\uff0c":
        _LUT[_c] = _CLS_COMMA
    elif _ch == " ":
        _LUT[_c] = _CLS_SPACE
    elif _ch.isupper():
        _LUT[_c] = _CLS_UPPER
    elif not _ch.isalnum() and not _ch.isspace() and _c > 32:
        _LUT[_c] = _CLS_PUNCT
del _c, _ch

_GROUP_NAMES = tuple(CLASS_GROUPS)
_N_GROUPS = len(_GROUP_NAMES)

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
    *(f"own_{g}" for g in _GROUP_NAMES),
    *(f"anc_{g}" for g in _GROUP_NAMES),
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
    # issue 17: comment threads, teaser lists, split blocks, host templates
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


def _char_stats(texts: list[str]) -> tuple[npt.NDArray[np.float64], ...]:
    """Counts per block of digits, punctuation, spaces, uppercase, sentence ends, commas."""
    joined = "\x00".join(texts)
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    cls = _LUT[np.minimum(codes, 0xFFFF)]
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    out = []
    for c in (_CLS_DIGIT, _CLS_PUNCT, _CLS_SPACE, _CLS_UPPER, _CLS_END, _CLS_COMMA):
        out.append(np.add.reduceat((cls == c).astype(np.int32), starts).astype(np.float64))
    # reduceat includes the separator in each segment; the separator is class 0, so no harm
    return (lengths.astype(np.float64), *out)


def _interval_sums(
    pre: npt.NDArray[np.int64],
    lo: npt.NDArray[np.int64],
    hi: npt.NDArray[np.int64],
    values: list[npt.NDArray[np.float64]],
) -> tuple[npt.NDArray[np.int64], list[npt.NDArray[np.float64]]]:
    """For each interval [lo, hi) of preorder ids: how many blocks fall in it and the sum of each value."""
    a = np.searchsorted(pre, lo, side="left")
    b = np.searchsorted(pre, hi, side="left")
    sums = []
    for v in values:
        cs = np.concatenate(([0.0], np.cumsum(v)))
        sums.append(cs[b] - cs[a])
    return b - a, sums


def readability_scores(
    page: Page,
    chars: npt.NDArray[np.float64],
    commas: npt.NDArray[np.float64],
    link: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], int]:
    """readability.js-like candidate scores per element (preorder id) and the top candidate's id.

    Each block of >= 25 chars gives ``1 + commas + min(chars / 100, 3)`` to its parent,
    half to its grandparent and a third to the one above; the sum is then scaled by
    ``1 - link density`` of the element's subtree. -1 when nothing scored.
    """
    n_el = len(page.end_of)
    scores = np.zeros(n_el + 1)
    if not page.texts:
        return scores[:-1], -1
    anc = page.anc_array()  # (n, 3); -1 maps to the spare slot at the end
    anc = np.where(anc < 0, n_el, anc)
    ok = chars >= 25
    s = np.where(ok, 1.0 + commas + np.minimum(chars / 100.0, 3.0), 0.0)
    np.add.at(scores, anc[:, 0], s)
    np.add.at(scores, anc[:, 1], s / 2.0)
    np.add.at(scores, anc[:, 2], s / 3.0)
    scores = scores[:-1]
    cand = np.flatnonzero(scores > 0)
    if cand.size == 0:
        return scores, -1
    pre = np.asarray(page.pre, dtype=np.int64)
    end = np.asarray(page.end_of, dtype=np.int64)
    _, (c_chars, c_link) = _interval_sums(pre, cand, end[cand], [chars, link])
    ld = np.divide(c_link, c_chars, out=np.zeros_like(c_link), where=c_chars > 0)
    scores[cand] *= 1.0 - ld
    return scores, int(cand[np.argmax(scores[cand])])


def _title_similarity(texts: list[str], title: str) -> npt.NDArray[np.float64]:
    """Word overlap of a block with the title (0 for blocks far longer than the title).

    Blocks over three times the title's length score at most ~1/3 anyway, so they are
    skipped: comparing every paragraph's words cost more than the rest of this module.
    """
    out = np.zeros(len(texts))
    words = set(title.lower().split())
    if not words:
        return out
    limit = min(3 * len(title) + 20, 300)
    for i, t in enumerate(texts):
        if len(t) <= limit:
            bw = set(t.lower().split())
            if bw:
                inter = len(bw & words)
                # penalise blocks much longer than the title (a teaser quoting it)
                out[i] = inter / max(len(words), len(bw))
    return out


_BOILER_LIST = (
    "©",
    "(c)",
    "copyright",
    "all rights reserved",
    "cookie",
    "privacy",
    "newsletter",
    "subscribe",
    "sign up",
    "signing up",
    "login",
    "log in",
    "follow us",
    "share",
    "tweet",
    "comment",
    "read more",
    "read also",
    "related",
    "advertis",
    "sponsored",
    "click here",
    "datenschutz",
    "impressum",
    "anmelden",
    "abonn",
    "teilen",
    "kommentar",
    "mehr zum thema",
    "lesen sie auch",
    "anzeige",
    "e-mail-adresse",
    "weiterlesen",
    "mentions légales",
    "partager",
    "publicité",
    "lire aussi",
    "compartir",
    "suscr",
    "publicidad",
    "подпис",
    "реклама",
    "комментар",
    "читайте также",
    # comment threads and their policies (issue 17)
    "reply",
    "replies",
    "says:",
    "wrote:",
    "report abuse",
    "comment policy",
    "community guidelines",
    "terms of use",
    "terms of service",
    "antworten",
    "schreibt:",
    "nutzungsbedingungen",
    "répondre",
    "responder",
    "ответить",
)


def _first_char_regex(words: tuple[str, ...]) -> re.Pattern[str]:
    """One alternation per first character: Python's re tries every branch of a flat alternation
    at every position; grouped, a position fails after one character check (5x faster here)."""
    groups: dict[str, list[str]] = {}
    for w in sorted(set(words), key=len, reverse=True):
        groups.setdefault(w[0], []).append(re.escape(w[1:]))
    parts = [f"{re.escape(c)}(?:{'|'.join(rest)})" if any(rest) else re.escape(c) for c, rest in groups.items()]
    return re.compile("|".join(parts))


#: words of boilerplate lines in the languages of the corpus (en, de, fr, es, ru): calls to
#: share / subscribe / comment, legal lines, teasers. Counted per block, not trusted alone.
_BOILER_WORDS = _first_char_regex(_BOILER_LIST)


#: boilerplate lines are short; scanning long paragraphs too tripled the cost for nothing
_BOILER_SCAN_CHARS = 200


def _boiler_words(texts: list[str]) -> npt.NDArray[np.float64]:
    """Hits of ``_BOILER_WORDS`` per short block (0 for blocks over ``_BOILER_SCAN_CHARS``)."""
    find = _BOILER_WORDS.findall
    return np.fromiter(
        (len(find(t.lower())) if len(t) <= _BOILER_SCAN_CHARS else 0 for t in texts),
        dtype=np.float64,
        count=len(texts),
    )


_WORD = re.compile(r"\w+")


def _body_overlap(texts: list[str], article_body: str) -> npt.NDArray[np.float64]:
    """Share of a block's words found in the page's JSON-LD ``articleBody``; -1 when there is none."""
    if not article_body:
        return np.full(len(texts), -1.0)
    vocab = set(_WORD.findall(article_body.lower()))
    out = np.zeros(len(texts))
    for i, t in enumerate(texts):
        words = _WORD.findall(t.lower())
        if words:
            out[i] = sum(1 for w in words if w in vocab) / len(words)
    return out


#: dates, times and "3 hours ago" in short lines: comment headers, bylines, teaser dates
_DATE = re.compile(
    r"\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b"
    r"|\b(?:jan|feb|m[aä]r|apr|ma[iy]|jun|jul|aug|sep|o[ck]t|nov|de[cz])[a-zä]*\.? \d{1,2}\b"
    r"|\b\d{1,2}\.? (?:jan|feb|m[aä]r|apr|ma[iy]|jun|jul|aug|sep|o[ck]t|nov|de[cz])[a-zä]*\b"
    r"|\bago\b|\bvor \d+ (?:min|stunde|tag)",
    re.I,
)
_DATE_SCAN_CHARS = 120


def _has_date(texts: list[str]) -> npt.NDArray[np.float64]:
    search = _DATE.search
    return np.fromiter(
        (1.0 if len(t) <= _DATE_SCAN_CHARS and search(t) else 0.0 for t in texts), dtype=np.float64, count=len(texts)
    )


def _sibling_repeats(page: Page) -> npt.NDArray[np.float64]:
    """(n, 3): how many siblings share the tag and class of the block's element, parent and grandparent.

    Comment threads and teaser lists are runs of one structure (``li.comment`` x 30,
    ``div.teaser`` x 8) around short blocks; an article's paragraphs are runs of ``p``
    inside one container that is itself unique on the page.
    """
    #: (parent, tag, class) -> siblings of that tag and class; found by lxml (``findall`` of the tag,
    #: in C), only the class compared here: a parent's other children are never touched
    same: dict[tuple[Any, str, str | None], float] = {}
    #: by preorder id: blocks share their parents, so each element is counted once
    done: dict[int, float] = {-1: 0.0}
    block_el = page.block_el

    def repeats(pre: int) -> float:
        hit = done.get(pre)
        if hit is not None:
            return hit
        el = block_el[pre]
        parent = el.getparent()
        value = 0.0
        if parent is not None:
            tag, cls = el.tag, el.get("class")
            key = (parent, tag, cls)
            found = same.get(key)
            if found is None:
                peers = parent.findall(tag)
                found = same[key] = float(sum(1 for c in peers if c.get("class") == cls))
            value = found - 1.0
        done[pre] = value
        return value

    out = np.fromiter(
        (repeats(x) for pre, (a0, a1, _) in zip(page.pre, page.anc, strict=True) for x in (pre, a0, a1)),
        dtype=np.float64,
        count=3 * page.n,
    ).reshape(page.n, 3)
    return np.log1p(out)


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
    chars, digits, punct, spaces, upper, ends, commas = _char_stats(page.texts)
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
        cnt, (c_chars, c_link, c_long) = _interval_sums(pre, lo, hi, [chars, link, longb])
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
        top_parent_candidates = list(_ancestor_of(page, top))
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
    cols.append(_title_similarity(page.texts, title_hint or page.html_title))
    same = np.fromiter((i > 0 and tags[i] == tags[i - 1] for i in range(n)), dtype=np.float64, count=n)
    cols.append(same)
    cols += [_boiler_words(page.texts), top_rel, _body_overlap(page.texts, article_body)]
    cols += [np.full(n, np.log1p(n)), np.full(n, np.log1p(total))]

    cols.extend(_sibling_repeats(page).T)
    # teaser lists: runs of short, mostly-linked blocks, often with a thumbnail each
    linked_short = (ld >= 0.5) & (chars < 250)
    cols.append(np.log1p(_run_lengths(linked_short)))
    imgs = np.asarray(page.n_images, dtype=np.float64)
    padded = np.concatenate((np.zeros(k), imgs, np.zeros(k)))
    cs = np.concatenate(([0.0], np.cumsum(padded)))
    cols.append(cs[2 * k + 1 :] - cs[: -2 * k - 1])
    cols.append(_has_date(page.texts))
    cols.append(np.asarray(page.in_comment, dtype=np.float64))
    cols.append(np.asarray(page.split, dtype=np.float64))
    if template is not None:
        cols.extend(template.shares(page, counted=counted))
    else:
        cols += [np.full(n, -1.0), np.full(n, -1.0)]
    mat = np.column_stack(cols).astype(np.float32)
    return mat


def _ancestor_of(page: Page, el_pre: int) -> list[int]:
    """The nearest block-level ancestor of element ``el_pre`` (found among the blocks' ancestor lists)."""
    for blk_pre, anc in zip(page.pre, page.anc, strict=True):
        if blk_pre == el_pre:
            return [a for a in anc[:1] if a >= 0]
        for j, a in enumerate(anc):
            if a == el_pre:
                return [x for x in anc[j + 1 : j + 2] if x >= 0]
    return []
