"""Hand-written pages for the autoparser tests (no corpus files needed)."""

from __future__ import annotations

PARAGRAPHS = [
    "The city council voted on Tuesday to rebuild the old harbour bridge, ending a debate that had "
    "divided residents for more than a decade. The new bridge will carry trams, bicycles and pedestrians.",
    "Engineers said the current structure, built in 1931, can no longer carry heavy traffic safely. "
    "Inspections last spring found corrosion in several of the main girders, and weight limits were lowered.",
    "Construction is expected to begin next year and to last about three years. During that time a ferry "
    "service will connect both banks of the river, running every ten minutes during the day.",
    "Some shop owners near the bridge worry that the works will keep customers away. The council promised "
    "a compensation fund and better signposting for the detour, which adds about five minutes on foot.",
    "The project will cost an estimated 84 million euros, of which the national government pays half. "
    "Opposition members called the budget optimistic, pointing to the rising prices of steel and concrete.",
]
TITLE = "Council approves new harbour bridge after decade of debate"


def article_page(*, canonical: str = "https://news.example.com/2024/05/harbour-bridge") -> str:
    paras = "\n".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(12))
    related = "".join(
        f'<li><a href="/2024/05/story-{i}">Another story about the city number {i}</a></li>' for i in range(8)
    )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{TITLE} | Example News</title>
<meta property="og:title" content="{TITLE}">
<meta property="article:published_time" content="2024-05-14T09:30:00+02:00">
<link rel="canonical" href="{canonical}">
<script>var tracking = "do not read me";</script>
<style>p {{ color: red }}</style>
</head><body>
<header class="site-header"><a href="/">Example News</a>
<nav class="main-menu"><ul>{nav}</ul></nav></header>
<div id="content" class="main-content"><article class="post">
<h1>{TITLE}</h1>
<div class="byline">By Ann Writer, 14 May 2024</div>
<figure><img src="/img/bridge.jpg" width="800" height="450"><figcaption>The old bridge at dusk.</figcaption></figure>
<div class="article-body">{paras}</div>
<div class="share-tools"><a href="https://twitter.com/share">Share on Twitter</a> <a href="/mail">Email</a></div>
</article>
<aside class="sidebar related"><h3>Related</h3><ul>{related}</ul></aside></div>
<footer class="site-footer"><p>Copyright 2024 Example News. All rights reserved.</p>
<ul><li><a href="/about">About us</a></li><li><a href="/privacy">Privacy</a></li></ul></footer>
<div style="display:none">hidden tracking text</div>
</body></html>"""


def listing_page() -> str:
    items = "".join(
        f'<li><a href="/2024/05/story-{i}">Story number {i} about the city council</a></li>' for i in range(30)
    )
    return f"""<html><head><title>City news</title></head><body>
<nav><a href="/">Home</a> <a href="/city">City</a></nav><h1>City news</h1><ul>{items}</ul>
<footer>Copyright 2024</footer></body></html>"""
