"""The Turbo page's stylesheet: one file every page shares, and what stays inline (docs/architecture.md section 3).

Light and dark by ``prefers-color-scheme``, readable on a 390-px phone, no web font: the page's
whole look, including Turbo's blocks as ``cubes/parser/blocks.py`` writes them (``tc-*`` classes,
galleries by CSS scroll-snap, accordions as ``<details>``). Minified by hand.

It used to travel inline in every page (~5.6 KB, 1.9 KB compressed, in each of them). Now the
page links one stylesheet, content-addressed (``STYLESHEET_PATH`` changes whenever the sheet
does) and served by the frontend with a year's ``immutable`` cache: a reader's browser fetches it
once for every Turbo page of every host. What the first paint needs before it arrives -- the
colours, the type, the header bar and the column -- stays inline (``FIRST_PAINT_CSS``), so a
page never flashes unstyled. The kvwriter writes the link (``cubes/kvwriter/render.py``); the
frontend serves the file (``cubes/frontend/app.py``); both read it here.
"""

from __future__ import annotations

import hashlib

__all__ = ["FIRST_PAINT_CSS", "PAGE_CSS", "STYLESHEET_PATH"]

#: what the first paint needs before the stylesheet arrives: colours, type, the bar, the column, the title
_FIRST_PAINT = (
    ":root{color-scheme:light dark;--fg:#18181b;--mut:#5f6368;--bg:#fff;--card:#f4f5f7;--line:#e5e7eb;"
    "--acc:#e8490f;--ok:#137333;--bad:#c5221f}"
    "@media(prefers-color-scheme:dark){:root{--fg:#e8eaed;--mut:#9aa0a6;--bg:#111214;--card:#1c1d21;"
    "--line:#2c2e33;--acc:#ff7a45;--ok:#81c995;--bad:#f28b82}}"
    "*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}"
    "body{margin:0;background:var(--bg);color:var(--fg);"
    "font:17px/1.65 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}"
    ".bar{position:sticky;top:0;z-index:1;background:var(--bg);border-bottom:1px solid var(--line)}"
    ".bar div{display:flex;align-items:center;gap:.6rem;max-width:42rem;margin:0 auto;padding:.55rem 1.1rem}"
    ".bar a{color:inherit;text-decoration:none}.host{font-weight:650;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap}.turbo{margin-left:auto;flex:none;font-size:.78rem;font-weight:650;"
    "padding:.12rem .6rem;border-radius:999px;background:var(--acc);color:#fff}"
    ".bar .logo{flex:none;width:28px;height:28px;border-radius:.4rem;object-fit:contain}"
    ".menu{display:flex;gap:1.1rem;max-width:42rem;margin:0 auto;padding:0 1.1rem .5rem;overflow-x:auto;"
    "white-space:nowrap;font-size:.9rem}.menu a{color:var(--mut)}"
    ".pre{background:#fbbc04;color:#202124;text-align:center;font-size:.85rem;padding:.3rem}"
    "main,body>footer{max-width:42rem;margin:0 auto;padding:1.4rem 1.1rem}"
    "h1{font-size:clamp(1.6rem,5vw,2.3rem);line-height:1.18;letter-spacing:-.015em;margin:.2rem 0 .7rem}"
    ".by{color:var(--mut);font-size:.9rem;margin:0 0 1.6rem}"
)
#: the rest of the look: media, quotes, code, tables, Turbo's blocks, products, the footer
_REST = (
    "img,video{max-width:100%;height:auto;border-radius:.5rem}"
    "iframe{width:100%;height:auto;aspect-ratio:16/9;border:0;border-radius:.5rem;background:#000}"
    "figure{margin:1.6rem 0}figcaption{color:var(--mut);font-size:.85rem;margin-top:.4rem}"
    "a{color:var(--acc);text-underline-offset:2px}"
    "blockquote{margin:1.6rem 0;padding:.1rem 1.1rem;border-left:3px solid var(--acc);color:var(--mut)}"
    "pre{overflow:auto;background:var(--card);padding:1rem;border-radius:.5rem;font-size:.88rem}"
    "code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em}"
    "table{border-collapse:collapse;display:block;overflow-x:auto;max-width:100%}"
    "td,th{border:1px solid var(--line);padding:.35rem .6rem;text-align:left}"
    ".lead{margin:0 0 1.4rem}.strip{display:flex;gap:.5rem;overflow-x:auto;margin-top:.5rem}"
    ".strip img{height:4.5rem;width:auto}"
    ".product{background:var(--card);border-radius:.8rem;padding:1rem 1.2rem;margin:0 0 1.6rem}"
    ".price{font-size:1.7rem;font-weight:750;margin:0}.old{color:var(--mut);font-size:1rem;font-weight:400;"
    "margin-left:.5rem}.stock{margin:.1rem 0 .8rem;font-weight:600}.in{color:var(--ok)}.out{color:var(--bad)}"
    ".params{display:grid;grid-template-columns:minmax(6rem,auto) 1fr;gap:.3rem 1rem;margin:0}"
    ".params dt{color:var(--mut)}.params dd{margin:0}"
    ".off{color:var(--bad);font-size:1rem;font-weight:650;margin-left:.4rem}.buy{font-size:1.05rem}"
    ".ways{color:var(--mut);margin:.2rem 0 .8rem}.product .tc-note{margin:.2rem 0 .8rem}"
    "body>footer{border-top:1px solid var(--line);color:var(--mut);font-size:.9rem;padding-bottom:2.5rem}"
    "body>footer a{font-weight:600}"
    # ---- Turbo's blocks (cubes/parser/blocks.py): static, no script; galleries scroll with CSS scroll-snap
    ".tc-head h2{font-size:1.15rem;font-weight:500;color:var(--mut);margin:-.2rem 0 1rem}"
    ".tc-menu,.tc-crumbs{display:flex;flex-wrap:wrap;gap:.3rem 1rem;font-size:.92rem;margin:.2rem 0 1.2rem}"
    ".tc-crumbs a:not(:last-child)::after{content:'\\203A';margin-left:.7rem;color:var(--mut)}"
    ".tc-gallery,.tc-slider{display:flex;gap:.6rem;overflow-x:auto;scroll-snap-type:x mandatory;"
    "overscroll-behavior-x:contain;margin:1.4rem 0;padding-bottom:.3rem}"
    ".tc-slide{flex:0 0 86%;scroll-snap-align:start;margin:0}.tc-gallery .tc-slide{flex-basis:72%}"
    ".tc-slide img,.tc-slide video{width:100%;height:13rem;object-fit:cover}"
    ".tc-cap{font-weight:650;margin:1.6rem 0 .5rem}.tc-sub{color:var(--mut)}"
    # an embed's title and "watch on" link sit right under the player (they carry it when it cannot load)
    ".tc-embed{margin:1.6rem 0}.tc-embed .tc-cap{margin:.5rem 0 .1rem}.tc-embed .tc-sub{margin:0;font-size:.9rem}"
    ".tc-acc{border:1px solid var(--line);border-radius:.6rem;padding:.1rem 1rem;margin:.5rem 0}"
    ".tc-acc summary{cursor:pointer;font-weight:600;padding:.55rem 0}.tc-acc[open] summary{margin-bottom:.2rem}"
    ".tc-btn{display:inline-block;padding:.55rem 1.1rem;margin:.25rem .5rem .25rem 0;border-radius:.6rem;"
    "border:1px solid var(--line);background:var(--card);color:var(--fg);font-weight:600;text-decoration:none}"
    ".tc-primary{background:var(--acc);border-color:var(--acc);color:#fff}.tc-off{opacity:.55}"
    ".tc-share{display:flex;flex-wrap:wrap;align-items:center;gap:.4rem;margin:1.6rem 0}"
    ".tc-share-link{padding:.25rem .8rem;border-radius:999px;background:var(--card);font-size:.9rem;"
    "text-decoration:none}.tc-label{color:var(--mut);font-size:.9rem}"
    ".tc-feedback{background:var(--card);border-radius:.8rem;padding:.2rem 1.1rem .6rem;margin:1.6rem 0}"
    ".tc-feedback .tc-btn{background:var(--bg)}.tc-feedback .tc-primary{background:var(--acc)}"
    ".tc-rating{font-size:1.05rem}.tc-stars{color:#f5a623;letter-spacing:.12em}"
    ".tc-comments{border-top:1px solid var(--line);margin-top:2rem}.tc-comment{margin:1rem 0}"
    ".tc-comment p{margin:.3rem 0}.tc-author{display:flex;align-items:center;gap:.5rem}"
    ".tc-author img{width:2rem;height:2rem;border-radius:50%;object-fit:cover}"
    ".tc-when{color:var(--mut);font-size:.85rem}"
    ".tc-replies{margin-left:1rem;padding-left:.9rem;border-left:2px solid var(--line)}"
    ".tc-cards{display:grid;gap:.8rem;grid-template-columns:repeat(auto-fill,minmax(min(100%,14rem),1fr));"
    "margin:1.2rem 0}.tc-card{display:block;background:var(--card);border-radius:.8rem;padding:.8rem;"
    "color:inherit;text-decoration:none;overflow:hidden}.tc-card img{width:100%;height:9rem;object-fit:cover}"
    ".tc-card h2,.tc-card h3{font-size:1.05rem;margin:.4rem 0}.tc-card p{margin:.3rem 0}"
    ".tc-card span,.tc-card b{display:block;margin-top:.3rem}"
    ".tc-related{margin-top:2.2rem}.tc-feed .tc-card{margin:.6rem 0}.tc-note{color:var(--mut)}"
    ".tc-video video{width:100%}.tc-histogram th{font-weight:500}"
    ".contacts{display:flex;flex-wrap:wrap;gap:.5rem;margin:0 0 1rem}.contact{padding:.45rem .9rem;"
    "border-radius:999px;background:var(--acc);color:#fff;text-decoration:none;font-weight:600;font-size:.9rem}"
)

FIRST_PAINT_CSS = "".join(_FIRST_PAINT)
#: the whole sheet (the first paint's rules again, so the file alone styles a page)
PAGE_CSS = FIRST_PAINT_CSS + "".join(_REST)
#: where the frontend serves it: the name carries a digest of the content, so a new sheet is a new URL
STYLESHEET_PATH = f"/static/turbo-{hashlib.sha256(PAGE_CSS.encode()).hexdigest()[:16]}.css"
