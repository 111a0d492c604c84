"""Host templates: the blocks that repeat across one host's pages (docs/architecture.md section 3, autoparser).

A site's navigation, footer, legal lines, comment policy and fixed sidebar boxes come
back on every page, at the same place in the DOM, with the same words; its articles
do not. The pipeline crawls many pages of every autoparser host, so it can learn each
host's template without labels, which a one-page extractor cannot:

* every block gets two signatures: its DOM path (``Page.path``: tag.class of the block and
  of three block ancestors) and its path plus its normalised text (lower case, digits
  folded, whitespace collapsed);
* ``HostTemplate.learn(page)`` counts in how many of the host's pages each signature
  occurs (once per page, once per URL: a re-crawled page is not counted again);
* ``HostTemplate.shares(page)`` gives each block of a page the share of the host's *other*
  pages holding its text signature (``tpl_share``) and its path (``tpl_path_share``);
  -1 for both while the host has fewer than ``MIN_PAGES`` other pages. They are model
  features, and the extractor drops body blocks whose ``tpl_share`` reaches
  ``FILTER_SHARE`` (the filter).

Counts decay: when ``pages`` reaches ``WINDOW`` every count is halved, so a redesign
replaces the old template within a few hundred pages, and at most ``MAX_SIGNATURES``
signatures are kept (the rarest, oldest first), so a template stays under 50 KB. It is
serialised with ``to_bytes`` / ``from_bytes`` for the template store.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import xxhash

from cubes.autoparser.page import Page

__all__ = [
    "FILTER_SHARE",
    "MIN_PAGES",
    "HostTemplate",
    "page_signatures",
]

#: other pages of the host needed before its template says anything: with fewer, "on every
#: page" is a coincidence of two or three articles
MIN_PAGES = 3
#: a body block whose text sits at its DOM path on this share of the host's other pages is
#: template, not article (a lead paragraph repeated on 60 % of a site's pages is a slogan)
FILTER_SHARE = 0.6
#: counts are halved when this many pages were learnt: recent pages weigh most
WINDOW = 200
#: per table; the oldest of the rarest go first (dicts keep insertion order, the sort is stable)
MAX_SIGNATURES = 2000
#: URLs remembered so that a re-crawled page is not learnt twice
_SEEN_MAX = 512
_DIGIT = re.compile(r"\d")
_MAGIC = b"TPL1"


def page_signatures(page: Page) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """(text signatures, path signatures) of every block of ``page``."""
    text = np.fromiter(
        (
            xxhash.xxh3_64_intdigest(f"{path}\x00{_DIGIT.sub('0', t.lower())}".encode())
            for path, t in zip(page.path, page.texts, strict=True)
        ),
        dtype=np.uint64,
        count=page.n,
    )
    paths = np.fromiter((xxhash.xxh3_64_intdigest(p.encode()) for p in page.path), dtype=np.uint64, count=page.n)
    return text, paths


@dataclass
class HostTemplate:
    host: str
    #: pages learnt (decayed)
    pages: float = 0.0
    text: dict[int, float] = field(default_factory=dict)
    paths: dict[int, float] = field(default_factory=dict)
    #: xxh3 of the URLs learnt, oldest first
    seen: list[int] = field(default_factory=list)

    def learn(self, page: Page, url: str = "") -> bool:
        """Count ``page`` in; False (nothing changes) when ``url`` was learnt before."""
        if url:
            key = xxhash.xxh3_64_intdigest(url.encode())
            if key in self.seen:
                return False
            self.seen.append(key)
            del self.seen[:-_SEEN_MAX]
        text, paths = page_signatures(page)
        for table, sigs in ((self.text, text), (self.paths, paths)):
            for sig in set(sigs.tolist()):
                table[sig] = table.get(sig, 0.0) + 1.0
        self.pages += 1.0
        if self.pages >= WINDOW:
            self._decay()
        for table in (self.text, self.paths):
            if len(table) > MAX_SIGNATURES:
                for sig, _ in sorted(table.items(), key=lambda kv: kv[1])[: len(table) - MAX_SIGNATURES]:
                    del table[sig]
        return True

    def _decay(self) -> None:
        self.pages /= 2.0
        for table in (self.text, self.paths):
            for sig in list(table):
                table[sig] /= 2.0
                if table[sig] < 0.5:
                    del table[sig]

    def shares(self, page: Page, *, counted: bool = False) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(tpl_share, tpl_path_share) per block: the share of the host's other pages with that signature.

        ``counted``: ``page`` itself was learnt already (the corpus learns a site's pages
        first), so its own occurrence is taken out.
        """
        own = 1.0 if counted else 0.0
        others = self.pages - own
        if others < MIN_PAGES:
            return np.full(page.n, -1.0), np.full(page.n, -1.0)
        text, paths = page_signatures(page)
        out = []
        for table, sigs in ((self.text, text), (self.paths, paths)):
            counts = np.fromiter((table.get(s, own) for s in sigs.tolist()), dtype=np.float64, count=page.n)
            out.append(np.clip((counts - own) / others, 0.0, 1.0))
        return out[0], out[1]

    def to_bytes(self) -> bytes:
        """A compact binary form: a header, then (signature, count) arrays and the URL keys."""
        parts = [_MAGIC, struct.pack("<dIII", self.pages, len(self.text), len(self.paths), len(self.seen))]
        for table in (self.text, self.paths):
            parts.append(np.fromiter(table.keys(), dtype=np.uint64, count=len(table)).tobytes())
            parts.append(np.fromiter(table.values(), dtype=np.float32, count=len(table)).tobytes())
        parts.append(np.asarray(self.seen, dtype=np.uint64).tobytes())
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, host: str, data: bytes) -> HostTemplate:
        """The template ``to_bytes`` wrote; ``ValueError`` on anything else."""
        if not data.startswith(_MAGIC):
            raise ValueError("not a host template")
        pos = len(_MAGIC)
        pages, n_text, n_paths, n_seen = struct.unpack_from("<dIII", data, pos)
        pos += struct.calcsize("<dIII")
        if len(data) != pos + 12 * (n_text + n_paths) + 8 * n_seen:
            raise ValueError("a truncated host template")
        tables = []
        for n in (n_text, n_paths):
            keys = np.frombuffer(data, dtype=np.uint64, count=n, offset=pos)
            values = np.frombuffer(data, dtype=np.float32, count=n, offset=pos + 8 * n)
            pos += 12 * n
            tables.append(dict(zip(keys.tolist(), values.tolist(), strict=True)))
        seen = np.frombuffer(data, dtype=np.uint64, count=n_seen, offset=pos).tolist()
        return cls(host=host, pages=pages, text=tables[0], paths=tables[1], seen=seen)
