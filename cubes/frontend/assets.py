"""The frontend's inline assets: its stylesheet and the rocket icon (docs/architecture.md section 3, "frontend").

Everything is inline or served by the frontend itself: no external font,
script or stylesheet, so a page makes no third-party request and the strict
Content-Security-Policy (``default-src 'none'``) holds.
"""

from __future__ import annotations

__all__ = ["FAVICON_SVG", "ROCKET_SVG", "SITE_CSS"]

#: The rocket badge drawn inline (no emoji font needed, no request made).
ROCKET_SVG = (
    '<svg class="rk" viewBox="0 0 24 24" width="14" height="14" aria-hidden="true">'
    '<path fill="currentColor" d="M12 2c3.6 2 5.5 5.6 5.5 9.6 0 1.2-.2 2.4-.5 3.4l2.3 2.4-.9 4-3.3-2.6H8.9'
    "L5.6 21.4l-.9-4L7 15c-.3-1-.5-2.2-.5-3.4C6.5 7.6 8.4 4 12 2zm0 6.2a2 2 0 1 0 0 4 2 2 0 0 0 0-4z"
    'M10.2 19.6h3.6L12 23z"/></svg>'
)

FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
    '<rect width="24" height="24" rx="6" fill="#e8490f"/>'
    '<path fill="#fff" transform="translate(3.6 2.4) scale(.7)" d="M12 2c3.6 2 5.5 5.6 5.5 9.6 0 1.2-.2 2.4'
    "-.5 3.4l2.3 2.4-.9 4-3.3-2.6H8.9L5.6 21.4l-.9-4L7 15c-.3-1-.5-2.2-.5-3.4C6.5 7.6 8.4 4 12 2z"
    'm0 6.2a2 2 0 1 0 0 4 2 2 0 0 0 0-4zM10.2 19.6h3.6L12 23z"/></svg>'
)

SITE_CSS = (
    ":root{color-scheme:light dark;--fg:#18181b;--mut:#5f6368;--bg:#fafafa;--card:#fff;--line:#e5e7eb;"
    "--acc:#e8490f;--acc2:#ff8a3d;--ok:#137333;--bad:#c5221f;--shadow:0 1px 2px rgba(0,0,0,.06),"
    "0 4px 16px rgba(0,0,0,.04)}"
    "@media(prefers-color-scheme:dark){:root{--fg:#e8eaed;--mut:#9aa0a6;--bg:#0f1012;--card:#18191c;"
    "--line:#2a2c31;--acc:#ff7a45;--acc2:#ffb26b;--ok:#81c995;--bad:#f28b82;--shadow:none}}"
    "*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}"
    "body{margin:0;background:var(--bg);color:var(--fg);"
    "font:16px/1.6 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}"
    "a{color:var(--acc);text-decoration:none}a:hover{text-decoration:underline}"
    ".wrap{max-width:46rem;margin:0 auto;padding:0 1.1rem}"
    ".top{border-bottom:1px solid var(--line);background:var(--card)}"
    ".top .wrap{display:flex;align-items:center;gap:1rem;min-height:3.4rem}"
    ".brand{display:flex;align-items:center;gap:.5rem;font-weight:750;letter-spacing:-.01em;color:var(--fg);"
    "font-size:1.05rem}.brand:hover{text-decoration:none}"
    ".logo{display:inline-grid;place-items:center;width:1.8rem;height:1.8rem;border-radius:.5rem;"
    "background:linear-gradient(135deg,var(--acc),var(--acc2));color:#fff}"
    ".logo .rk{width:1.05rem;height:1.05rem}"
    ".top nav{margin-left:auto;display:flex;gap:1rem;font-size:.92rem}.top nav a{color:var(--mut)}"
    ".top form{flex:1;max-width:22rem}"
    "main{padding:2rem 0 3rem}"
    ".hero{text-align:center;padding:3.2rem 0 2.2rem}"
    ".hero h1{font-size:clamp(2rem,7vw,3rem);line-height:1.1;letter-spacing:-.03em;margin:0 0 .6rem}"
    ".hero h1 span{background:linear-gradient(135deg,var(--acc),var(--acc2));-webkit-background-clip:text;"
    "background-clip:text;color:transparent}"
    ".hero p{color:var(--mut);margin:0 auto 1.8rem;max-width:32rem}"
    ".search{display:flex;gap:.5rem}"
    ".search input{flex:1;min-width:0;font:inherit;padding:.75rem 1rem;border-radius:.8rem;"
    "border:1px solid var(--line);background:var(--card);color:var(--fg);box-shadow:var(--shadow)}"
    ".search input:focus{outline:2px solid var(--acc);outline-offset:1px}"
    ".search button{font:inherit;font-weight:650;padding:.7rem 1.2rem;border:0;border-radius:.8rem;"
    "background:var(--acc);color:#fff;cursor:pointer}"
    ".top .search input{padding:.45rem .8rem;border-radius:.6rem;box-shadow:none}"
    ".top .search button{padding:.4rem .8rem;border-radius:.6rem}"
    ".stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(9rem,1fr));gap:.8rem;margin:0 0 2.4rem}"
    ".stat{background:var(--card);border:1px solid var(--line);border-radius:.9rem;padding:.9rem 1rem;"
    "box-shadow:var(--shadow)}.stat b{display:block;font-size:1.6rem;line-height:1.2}"
    ".stat span{color:var(--mut);font-size:.88rem}"
    "h2{font-size:1.05rem;margin:0 0 .8rem;color:var(--mut);font-weight:600;text-transform:uppercase;"
    "letter-spacing:.06em}"
    ".hits{list-style:none;margin:0;padding:0}"
    ".hit{background:var(--card);border:1px solid var(--line);border-radius:.9rem;padding:.9rem 1.1rem;"
    "margin:0 0 .7rem;box-shadow:var(--shadow)}"
    ".hit h3{font-size:1.08rem;line-height:1.35;margin:.15rem 0 .3rem}.hit h3 a{color:var(--fg)}"
    ".hit p{margin:0;color:var(--mut);font-size:.93rem;overflow-wrap:anywhere;display:-webkit-box;"
    "-webkit-line-clamp:3;-webkit-box-orient:vertical;overflow:hidden}"
    ".hit mark{background:none;color:var(--fg);font-weight:650}"
    ".meta{display:flex;flex-wrap:wrap;align-items:center;gap:.2rem .5rem;font-size:.82rem;color:var(--mut)}"
    ".meta time,td time{white-space:nowrap}.phone{display:none}"
    ".badge{display:inline-flex;align-items:center;gap:.25rem;font-size:.72rem;font-weight:700;"
    "padding:.08rem .5rem;border-radius:999px;background:var(--acc);color:#fff;letter-spacing:.02em}"
    ".empty{text-align:center;color:var(--mut);padding:2.5rem 1rem;border:1px dashed var(--line);"
    "border-radius:.9rem}"
    ".err h1{font-size:clamp(1.5rem,5vw,2.1rem)}.err .search{max-width:30rem;margin:0 auto 1.4rem}"
    ".pager{display:flex;justify-content:space-between;margin-top:1.2rem}"
    ".hero .big{font-size:clamp(3.5rem,14vw,6rem);line-height:1;font-weight:800;letter-spacing:-.04em;"
    "margin:0 auto .8rem;"
    "background:linear-gradient(135deg,var(--acc),var(--acc2));-webkit-background-clip:text;"
    "background-clip:text;color:transparent}"
    ".url{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem;"
    "overflow-wrap:anywhere;background:var(--card);border:1px solid var(--line);border-radius:.5rem;"
    "padding:.3rem .6rem;display:inline-block}"
    "table{width:100%;border-collapse:collapse;font-size:.92rem}"
    "th,td{text-align:left;padding:.55rem .7rem;border-bottom:1px solid var(--line)}th{white-space:nowrap}"
    "tbody tr:last-child td{border-bottom:0}"
    "th{color:var(--mut);font-weight:600;font-size:.8rem;text-transform:uppercase;letter-spacing:.05em}"
    ".num{text-align:right;font-variant-numeric:tabular-nums}.ok{color:var(--ok)}.bad{color:var(--bad)}"
    ".scroll{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:.9rem;"
    "margin:0 0 2rem;box-shadow:var(--shadow)}"
    "footer.site{border-top:1px solid var(--line);color:var(--mut);font-size:.85rem;padding:1.4rem 0 2.4rem}"
    "@media(max-width:34rem){.top form{display:none}.hero{padding-top:2rem}.phone{display:flex;margin:0 0 1.4rem}"
    # five links do not fit beside the brand on a 360 px phone: they go on a line of their own, closer
    ".top .wrap{flex-wrap:wrap;row-gap:0;padding-bottom:.3rem}"
    ".top nav{margin-left:0;flex-basis:100%;flex-wrap:wrap;gap:.2rem .9rem;font-size:.86rem}}"
)
