"""What every Turbo block handler uses (``cubes/parser/blocks.py`` says what each block becomes).

A handler gets the block's element and a ``Context``; it builds plain HTML with
``el``, puts it in the block's place with ``replace`` and walks the content it
kept with ``ctx.walk`` (the walker of ``blocks.py``, so a block inside another
-- a gallery in an accordion -- is turned too). What the page cannot carry is
``ctx.note``-d, once per message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from cubes.parser.model import Note
from shared.pages.players import Players

__all__ = ["Context", "Note", "block_of", "caption", "children", "make", "move_content", "replace", "text_of"]


def _nothing(el: etree._Element) -> None:  # pragma: no cover - blocks.py always sets the walker
    return None


@dataclass
class Context:
    page_url: str
    lang: str | None
    #: the players an iframe may show (``shared.pages.players``: hosts and their player paths)
    players: Players
    #: the walker of ``blocks.py``: turns the blocks among ``el``'s children / ``el`` itself
    walk: Callable[[etree._Element], None] = _nothing
    walk_one: Callable[[etree._Element], None] = _nothing
    notes: list[Note] = field(default_factory=list)
    _said: set[str] = field(default_factory=set)

    def note(self, code: str, message: str) -> None:
        if message not in self._said:  # a feed's ten ads are one problem, not ten
            self._said.add(message)
            self.notes.append(Note(code, message))


def make(tag: str, cls: str | None = None, text: str | None = None, **attrs: str) -> etree._Element:
    """A new element: its class, its text, attributes (``data_block="x"`` is ``data-block="x"``)."""
    el = etree.Element(tag)
    if cls:
        el.set("class", cls)
    for name, value in attrs.items():
        el.set(name.rstrip("_").replace("_", "-"), value)
    if text:
        el.text = text
    return el


def replace(old: etree._Element, new: list[etree._Element]) -> None:
    """Put ``new`` where ``old`` is (keeping the text that followed it); ``old`` goes."""
    parent = old.getparent()
    if parent is None:
        return
    tail = old.tail
    at = parent.index(old)
    parent.remove(old)
    for offset, el in enumerate(new):
        parent.insert(at + offset, el)
    if not tail:
        return
    if new:
        new[-1].tail = (new[-1].tail or "") + tail
    elif at > 0:
        prev = parent[at - 1]
        prev.tail = (prev.tail or "") + tail
    else:
        parent.text = (parent.text or "") + tail


def text_of(el: etree._Element) -> str:
    return " ".join("".join(el.itertext()).split())


def block_of(el: etree._Element) -> str:
    return (el.get("data-block") or "").strip().lower()


def children(el: etree._Element) -> list[etree._Element]:
    return [c for c in el if isinstance(c.tag, str)]


def move_content(src: etree._Element, dst: etree._Element, ctx: Context) -> None:
    """``src``'s text and children into ``dst``, transformed."""
    if src.text:
        last = dst[-1] if len(dst) else None
        if last is not None:
            last.tail = (last.tail or "") + src.text
        else:
            dst.text = (dst.text or "") + src.text
    for child in list(src):
        dst.append(child)
    ctx.walk(dst)


def caption(el: etree._Element) -> list[etree._Element]:
    """A block's ``<header>`` as its caption line (to go before the block), taken out of it."""
    for child in children(el):
        if child.tag == "header":
            el.remove(child)
            return [make("p", "tc-cap", text_of(child))]
    return []
