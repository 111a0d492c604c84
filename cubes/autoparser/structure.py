"""Post-processing of the body blocks: tables kept whole, repeats dropped (DESIGN.md section 3; issue 17).

Two failures of a block classifier that look at one block at a time:

* **Tables.** A results table is dozens of short cells full of digits, each one alone
  looking like boilerplate; the model keeps a few and the table is lost. A *data table*
  (no table nested in it, at least ``_MIN_ROWS`` rows and ``_MIN_CELLS`` cells) is kept
  whole when the model kept any of its cells and the table lies inside the article
  (body blocks before and after it), or when most of its text is body. It is rendered
  as a table (``table_html``), rows and cells as on the page.
* **Repeats.** A photo caption printed under the photo, again in the gallery and again in
  the lightbox came out three times. A body block whose normalised text equals an earlier
  body block's, or (short blocks) is contained in one, is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from cubes.autoparser.segment import Page

__all__ = ["drop_repeats", "keep_tables", "table_html"]

_MIN_ROWS = 2
_MIN_CELLS = 4
#: a kept table outside the article span still needs this share of its text kept by the model
_TABLE_BODY_SHARE = 0.5
#: a block up to this long is dropped when an earlier body block contains its text (a caption
#: quoted in a longer one); longer blocks only when they are exact repeats
_CONTAINED_MAX = 300
_CONTAINED_MIN_WORDS = 5
_CELL_TAGS = frozenset({"td", "th", "caption"})


def _table_of(el: Any) -> Any:
    node = el.getparent()
    while node is not None and node.tag != "table":
        node = node.getparent()
    return node


def _is_data_table(table: Any) -> bool:
    if table.find(".//table") is not None:
        return False  # a layout table holding other tables
    rows = table.findall(".//tr")
    return len(rows) >= _MIN_ROWS and sum(len(r.findall("td")) + len(r.findall("th")) for r in rows) >= _MIN_CELLS


def keep_tables(page: Page, body: npt.NDArray[np.bool_]) -> dict[int, Any]:
    """Marks the cells of kept data tables as body (in place).

    Returns block index -> table element for the first block of each kept table, and
    block index -> None for its other blocks (``_body_html`` renders the table once).
    """
    by_table: dict[Any, list[int]] = {}
    for i, tag in enumerate(page.tags):
        if tag in _CELL_TAGS:
            table = _table_of(page.elements[i]) if tag != "caption" else page.elements[i].getparent()
            if table is not None and table.tag == "table":
                by_table.setdefault(table, []).append(i)
    out: dict[int, Any] = {}
    if not by_table:
        return out
    body_idx = np.flatnonzero(body)
    for table, cells in by_table.items():
        if not body[cells].any() or not _is_data_table(table):
            continue
        first, last = cells[0], cells[-1]
        inside = body_idx.size > 0 and body_idx[0] < first and body_idx[-1] > last
        chars = np.asarray([len(page.texts[i]) for i in cells], dtype=np.float64)
        kept_share = chars[body[cells]].sum() / max(chars.sum(), 1.0)
        if not inside and kept_share < _TABLE_BODY_SHARE:
            continue
        body[cells] = True
        out[first] = table
        for i in cells[1:]:
            out[i] = None
    return out


def table_html(table: Any, cell: Callable[[Any], str]) -> str:
    """The table's caption, rows and cells as clean HTML; ``cell`` renders a cell's content."""
    out = ["<table>"]
    caption = table.find("caption")
    if caption is not None:
        out.append(f"<caption>{cell(caption)}</caption>")
    for row in table.iter("tr"):
        if _table_of(row) is not table:
            continue
        cells = [c for c in row if c.tag in ("td", "th")]
        if cells:
            out.append("<tr>" + "".join(f"<{c.tag}>{cell(c)}</{c.tag}>" for c in cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _norm(text: str) -> str:
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())


def drop_repeats(page: Page, body: npt.NDArray[np.bool_]) -> int:
    """Unmarks body blocks that repeat an earlier body block (in place); returns how many."""
    seen: set[str] = set()
    kept_long: list[str] = []
    dropped = 0
    for i in np.flatnonzero(body):
        key = _norm(page.texts[i])
        if not key:
            continue
        repeated = key in seen or (
            len(page.texts[i]) <= _CONTAINED_MAX
            and key.count(" ") + 1 >= _CONTAINED_MIN_WORDS
            and any(key in other for other in kept_long)
        )
        if repeated and page.tags[i] not in _CELL_TAGS:  # table cells repeat by nature ("0", "yes")
            body[i] = False
            dropped += 1
            continue
        seen.add(key)
        kept_long.append(key)
    return dropped
