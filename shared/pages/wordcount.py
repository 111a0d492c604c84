"""How long a text is, in every script (docs/architecture.md section 3: the autoparser and the parser).

Japanese, Chinese and Korean write without spaces: counting words as spaces + 1 made an
846-character Japanese article "18 words", under the article line, and it was never published.
Here a CJK character counts as half a word (a Japanese or Chinese word is two characters on
average; a Hangul syllable block is about a third of a Korean word, which the half rounds up),
and, for the paragraph length the completeness guard looks for, as three characters of a
spaced script (two CJK characters carry about what "word " does). ``CJK`` is the one
character class; the autoparser's labels make every CJK character a token of its own with it,
and the parser tells a summary from an article by these words.
"""

from __future__ import annotations

import re

__all__ = ["CJK", "CJK_TOKEN", "cjk_chars", "spaced_chars", "words"]

#: hiragana, katakana, CJK ideographs (extension A and the unified block), Hangul syllables
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_CJK_RE = re.compile(f"[{CJK}]")
#: one token per CJK character, else one per run of word characters
CJK_TOKEN = re.compile(f"[{CJK}]|[^\\W{CJK}]+", re.UNICODE)
#: characters per word in CJK text, and spaced-script characters one CJK character stands for
_CJK_PER_WORD = 2
_CJK_WIDTH = 3


def cjk_chars(text: str) -> int:
    """How many CJK characters ``text`` holds (0 at once for ASCII text)."""
    return 0 if text.isascii() else len(_CJK_RE.findall(text))


def words(text: str) -> int:
    """Words of ``text``: its space-separated words, a CJK run counted at two characters a word."""
    cjk = cjk_chars(text)
    if not cjk:
        return text.count(" ") + 1 if text else 0
    spaced = _CJK_RE.sub(" ", text).split()
    return len(spaced) + -(-cjk // _CJK_PER_WORD)


def spaced_chars(text: str) -> int:
    """The length of ``text`` as a spaced script would have it (a CJK character counts three)."""
    return len(text) + (_CJK_WIDTH - 1) * cjk_chars(text)
