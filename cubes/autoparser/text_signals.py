"""Per-block signals read from the blocks' text alone (docs/architecture.md section 3, autoparser).

Character statistics for the whole page at once (one UTF-32 view of all block texts, each code
point looked up in a character-class table and reduced per block with ``np.add.reduceat``), word
overlap with the title and with the page's JSON-LD ``articleBody``, boilerplate words in five
languages and dates in short lines. ``features.py`` places them in the feature matrix.
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

from shared.pages.wordcount import CJK_TOKEN, cjk_chars

__all__ = ["body_overlap", "boiler_words", "char_stats", "has_date", "title_similarity"]

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


def char_stats(texts: list[str]) -> tuple[npt.NDArray[np.float64], ...]:
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


def title_similarity(texts: list[str], title: str) -> npt.NDArray[np.float64]:
    """Word overlap of a block with the title (0 for blocks far longer than the title).

    Blocks over three times the title's length score at most ~1/3 anyway, so they are
    skipped: comparing every paragraph's words cost more than the rest of this module.
    """
    out = np.zeros(len(texts))
    # a CJK title has no spaces: its characters are its words (``wordcount``)
    split = CJK_TOKEN.findall if cjk_chars(title) else str.split
    words = set(split(title.lower()))
    if not words:
        return out
    limit = min(3 * len(title) + 20, 300)
    for i, t in enumerate(texts):
        if len(t) <= limit:
            bw = set(split(t.lower()))
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
    # comment threads and their policies
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


def boiler_words(texts: list[str]) -> npt.NDArray[np.float64]:
    """Hits of ``_BOILER_WORDS`` per short block (0 for blocks over ``_BOILER_SCAN_CHARS``)."""
    find = _BOILER_WORDS.findall
    return np.fromiter(
        (len(find(t.lower())) if len(t) <= _BOILER_SCAN_CHARS else 0 for t in texts),
        dtype=np.float64,
        count=len(texts),
    )


_WORD = re.compile(r"\w+")


def body_overlap(texts: list[str], article_body: str) -> npt.NDArray[np.float64]:
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


def has_date(texts: list[str]) -> npt.NDArray[np.float64]:
    search = _DATE.search
    return np.fromiter(
        (1.0 if len(t) <= _DATE_SCAN_CHARS and search(t) else 0.0 for t in texts), dtype=np.float64, count=len(texts)
    )
