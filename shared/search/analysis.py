"""Text analysis for search: words, folding and stems (docs/architecture.md section 3, "frontend" search).

The one place that says what a searchable word is, so that the index (both
engines), the query parser and the snippet highlighter agree on it:

* a **word** is a run of letters and digits of any script (``[^\\W_]+``);
  punctuation, hyphens and apostrophes separate words ("интернет-магазин" is two);
* **folding** lower-cases and maps ё to е ("Ёлка" and "елка" are the same word);
* a **stem** is the folded word through the Snowball stemmers (PyStemmer, in C):
  the Russian one, then the English one. Each leaves words of the other script
  untouched (checked on half a million words of the shared feeds), so one pass
  handles mixed pages, and a page's declared language never has to be right.
  "мосты", "мостом" → "мост"; "bridges" → "bridg".

What the index holds for a word — its lemmas, or this stem — is ``tokens.py``.

Stemmer objects are not thread-safe: each thread gets its own.
"""

from __future__ import annotations

import re
import string
import threading
from collections.abc import Iterator, Sequence

import Stemmer

__all__ = [
    "ANALYZER_VERSION",
    "WORD_RE",
    "detect_lang",
    "fold",
    "iter_words",
    "page_lang",
    "stem",
    "stems",
    "words",
]

#: bump when what the index holds changes: a store re-indexes pages indexed by an older version
#: (2: the type, date and host moved out of the FTS5 table into search_docs; 3: the impact index;
#: 4: its prefix lists, ``shared/stores/sqlite/search_groups.py``; 5: lemmas, ``shared/search/tokens.py``;
#: 6: pairs of adjacent terms in the impact index, ``shared/stores/sql/search_impacts.py``)
ANALYZER_VERSION = 6

#: a word: letters and digits of any script, no underscore
WORD_RE = re.compile(r"[^\W_]+")

_local = threading.local()
#: the share of Cyrillic among a text's letters above which it counts as Russian
_CYRILLIC_SHARE = 0.3
#: how much of a text language detection reads (enough letters; cheap on long pages)
_DETECT_CHARS = 4000
#: in UTF-8 every letter of the Cyrillic block U+0400..U+04FF starts with one of these bytes, and no
#: other character contains one (continuation bytes are 0x80..0xBF): counting them counts those letters
_CYRILLIC_LEADS = (b"\xd0", b"\xd1", b"\xd2", b"\xd3")
_LATIN = string.ascii_letters.encode()


def fold(text: str) -> str:
    """Lower case, ё → е: the form every comparison of words uses."""
    return text.lower().replace("ё", "е")


def words(text: str) -> list[str]:
    """The folded words of ``text``, in order."""
    return WORD_RE.findall(fold(text))


def iter_words(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, folded word)`` for each word of ``text``, offsets into ``text`` itself."""
    for m in WORD_RE.finditer(text):
        yield m.start(), m.end(), fold(m.group())


def _stemmers() -> tuple[Stemmer.Stemmer, Stemmer.Stemmer]:
    pair: tuple[Stemmer.Stemmer, Stemmer.Stemmer] | None = getattr(_local, "pair", None)
    if pair is None:
        pair = (Stemmer.Stemmer("russian"), Stemmer.Stemmer("english"))
        _local.pair = pair
    return pair


def stem(folded: str) -> str:
    """The stem of one folded word."""
    ru, en = _stemmers()
    return str(en.stemWord(ru.stemWord(folded)))


def stems(folded: Sequence[str]) -> list[str]:
    """The stems of folded words, in order (one call into C per stemmer for the whole list)."""
    ru, en = _stemmers()
    return list(en.stemWords(ru.stemWords(folded)))


def detect_lang(text: str) -> str:
    """``"ru"`` when a fair share of the letters are Cyrillic, else ``"en"``."""
    # byte counts in C instead of a list of one-letter matches per letter: ~25x faster on a page's
    # text, and the kvwriter detects the language of every page it writes
    head = text[:_DETECT_CHARS].encode("utf-8", "surrogatepass")
    cyrillic = sum(map(head.count, _CYRILLIC_LEADS))
    latin = len(head) - len(head.translate(None, _LATIN))
    if cyrillic + latin == 0:
        return "en"
    return "ru" if cyrillic / (cyrillic + latin) >= _CYRILLIC_SHARE else "en"


def page_lang(declared: str | None, text: str) -> str:
    """A page's two-letter language: the one its source declares ("ru-RU" → "ru"), else detected."""
    if declared:
        code = declared.strip().lower().replace("_", "-").split("-", 1)[0]
        if len(code) == 2 and code.isascii() and code.isalpha():
            return code
    return detect_lang(text)
