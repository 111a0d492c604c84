"""Hand-written pages of the kinds the autoparser used to fail on (no corpus files needed).

Each page is shaped like the worst pages we saw: a short post under a long
comment thread, an article between teaser lists, a caption printed three times, a story
merged with its byline in one ``<div>``, a results table, and pages whose article a
model can lose. Texts are written for these tests.
"""

from __future__ import annotations

POST_TITLE = "Why our town library opens on Sundays now"
POST = [
    "From this week the town library opens on Sundays from ten to four. The council agreed to the trial after "
    "a petition signed by more than two thousand residents, most of them parents and students.",
    "The extra day is staffed by volunteers and two librarians who moved from the Monday shift. If the trial "
    "works, the Sunday opening will become permanent next spring, the head librarian said.",
]
COMMENTS = [
    f"Comment number {i}: this is great news for families like ours, we can finally go together on a weekend "
    f"without rushing, thanks to everyone who signed the petition and to the volunteers. Point {i}."
    for i in range(30)
]
COMMENT_POLICY = (
    "Comment policy: comments are moderated. Please be respectful, stay on topic and do not post personal "
    "information. We reserve the right to remove comments that break these community guidelines."
)


def _head(title: str, extra: str = "") -> str:
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{title} | Town Journal</title>'
        f'<meta property="og:title" content="{title}">{extra}</head>'
    )


_NAV = (
    '<header class="masthead"><a href="/">Town Journal</a><nav class="menu"><ul>'
    + "".join(f'<li><a href="/s/{i}">Section {i}</a></li>' for i in range(8))
    + "</ul></nav></header>"
)
_FOOTER = (
    '<footer class="site-footer"><p>Town Journal, 12 Market Square, 4021 Riverton. Phone 555 0134. '
    "Copyright 2024, all rights reserved.</p></footer>"
)


def comment_thread_page(variant: int = 0) -> str:
    """A short post under 30 comments with authors, dates and reply links (schema.org Comment).

    ``variant`` > 0: another post of the same site, with its own text, readers and comments.
    """
    tag = f" (post {variant})" if variant else ""
    comments = "".join(
        f'<li class="comment" itemprop="comment" itemscope itemtype="https://schema.org/Comment">'
        f'<div class="comment-meta"><span class="comment-author">Reader {i + 100 * variant}</span> '
        f'<time class="comment-date">{12 + variant}.05.2024 {10 + i % 12}:{i % 60:02d}</time></div>'
        f'<div class="comment-body"><p>{text}{tag}</p></div>'
        f'<div class="reply"><a href="#reply-{i}">Reply</a></div></li>'
        for i, text in enumerate(COMMENTS)
    )
    body = "".join(f"<p>{p}{tag}</p>" for p in POST)
    return (
        _head(POST_TITLE) + f"<body>{_NAV}<main><article class='post'><h1>{POST_TITLE}</h1>"
        f"<div class='byline'>By Mara Hill, 12 May 2024</div><div class='entry-content'>{body}</div></article>"
        f"<section id='comments' class='comments-area'><h2>30 comments</h2>"
        f"<p class='comment-policy'>{COMMENT_POLICY}</p><ol class='comment-list'>{comments}</ol></section>"
        f"</main>{_FOOTER}</body></html>"
    )


ARTICLE_TITLE = "River cleanup brings back the otters"
ARTICLE = [
    "Twenty years after the last sighting, otters are back on the Riverton stretch of the river. Volunteers "
    "filmed a family of four near the old mill in April, and rangers have since confirmed two more dens.",
    "The return follows a decade of work on the water: farms upstream cut their fertiliser use, the town "
    "rebuilt its sewage plant, and schools planted willows along three kilometres of bank.",
    "Biologists warn that the population is still fragile. Dogs off the lead and fishing lines left on the "
    "bank are the main dangers, and the council will put up signs at the most visited spots this summer.",
    "Residents who see an otter are asked to report it on the council's website, with a photo if possible, "
    "so that the rangers can follow the animals without disturbing them.",
]
TEASERS = [f"Teaser headline number {i} about another story in town that readers liked this week" for i in range(8)]
#: each teaser's standfirst: a sentence of prose, not a link, as news sites print them
STANDFIRSTS = [
    f"The council met again on Monday evening and, after a long debate about the budget for item {i}, "
    f"decided to postpone the vote until the experts have finished their report."
    for i in range(8)
]


def teaser_page() -> str:
    """An article between two teaser lists (thumbnail, linked headline, one line) and a sidebar."""

    def teasers(cls: str, items: list[str]) -> str:
        return (
            f'<div class="{cls}">'
            + "".join(
                f'<div class="teaser"><a href="/story/{i}"><img src="/thumb/{i}.jpg" width="120" height="80"></a>'
                f'<h3><a href="/story/{i}">{t}</a></h3><p>{STANDFIRSTS[i]}</p>'
                f'<span class="teaser-date">3 hours ago</span></div>'
                for i, t in enumerate(items)
            )
            + "</div>"
        )

    body = "".join(f"<p>{p}</p>" for p in ARTICLE)
    return (
        _head(ARTICLE_TITLE)
        + f"<body>{_NAV}{teasers('top-stories', TEASERS[:4])}<div class='content'><h1>{ARTICLE_TITLE}</h1>"
        f"<div class='story'>{body}</div></div>{teasers('more-stories', TEASERS[4:])}{_FOOTER}</body></html>"
    )


CAPTION = "An otter on the bank near the old mill, filmed by volunteers in April."


def caption_page() -> str:
    """The lead photo's caption printed under the photo, again in a gallery strip and in a slide list."""
    body = "".join(f"<p>{p}</p>" for p in ARTICLE)
    figure = f'<figure><img src="/img/otter.jpg" width="800" height="500"><figcaption>{CAPTION}</figcaption></figure>'
    gallery = f'<div class="gallery"><img src="/img/otter-s.jpg" width="200" height="120"><p>{CAPTION}</p></div>'
    slides = f'<ul class="slides"><li><img src="/img/otter-l.jpg" width="1200" height="800"> {CAPTION}</li></ul>'
    return (
        _head(ARTICLE_TITLE) + f"<body>{_NAV}<article><h1>{ARTICLE_TITLE}</h1>{figure}{gallery}{slides}{body}</article>"
        f"{_FOOTER}</body></html>"
    )


BYLINE = "By Tom Reed | Riverton, 3 June 2024"


def byline_merged_page() -> str:
    """The whole story in one ``<div class="byline">`` with its byline, lines cut by ``<br>``."""
    story = "<br><br>".join(ARTICLE)
    return (
        _head(ARTICLE_TITLE) + f"<body>{_NAV}<h1>{ARTICLE_TITLE}</h1>"
        f'<div class="byline author-meta"><a href="/authors/tom">{BYLINE}</a><br>{story}</div>{_FOOTER}</body></html>'
    )


TABLE_TITLE = "Riverton marathon: the results"
TABLE_ROWS = [
    ("1", "Ana Lopes", "Riverton AC", "2:31:07"),
    ("2", "Jon Berg", "Harbour Runners", "2:33:52"),
    ("3", "Li Wei", "Riverton AC", "2:35:10"),
    ("4", "Sara Nyman", "Millbank", "2:36:44"),
    ("5", "Omar Haddad", "Harbour Runners", "2:38:01"),
]
TABLE_TEXT = [
    "More than nine hundred runners started the Riverton marathon on Sunday morning in cool and dry weather, "
    "and eight hundred and seventy of them reached the finish on Market Square before the cut-off.",
    "Ana Lopes of Riverton AC won for the second year in a row and lowered the course record by forty seconds. "
    "She said the new route along the river, with fewer hills, made the difference in the second half.",
    "The organisers thanked the two hundred volunteers and announced that next year's race will also offer a "
    "half marathon, starting an hour after the full distance on the same course.",
]


def table_page() -> str:
    """A results table (short cells, digits) between the article's paragraphs."""
    rows = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in TABLE_ROWS)
    table = f"<table class='results'><tr><th>Place</th><th>Name</th><th>Club</th><th>Time</th></tr>{rows}</table>"
    p = [f"<p>{t}</p>" for t in TABLE_TEXT]
    return (
        _head(TABLE_TITLE)
        + f"<body>{_NAV}<article><h1>{TABLE_TITLE}</h1>{p[0]}{p[1]}{table}{p[2]}</article>{_FOOTER}</body></html>"
    )


def declared_article_page(*, lose_story: bool = False) -> str:
    """A page declaring its article (``<article>``, JSON-LD ``articleBody``, og:description).

    ``lose_story``: the story sits in a block a model can drop (a ``div.byline`` merged with the byline,
    no paragraphs of its own), the shape of the issue's lost-article page.
    """
    import json

    body_text = " ".join(ARTICLE)
    ld = json.dumps({"@context": "https://schema.org", "@type": "NewsArticle", "articleBody": body_text})
    head = f'<meta name="description" content="{ARTICLE[0]}"><script type="application/ld+json">{ld}</script>'
    story = "".join(f"<p>{p}</p>" for p in ARTICLE)
    return (
        _head(ARTICLE_TITLE, head)
        + f"<body>{_NAV}<article><h1>{ARTICLE_TITLE}</h1><div class='byline'>{BYLINE}</div>{story}</article>"
        f"{_FOOTER}</body></html>"
    )


def host_pages(n: int = 20) -> list[tuple[str, str, list[str]]]:
    """``n`` article pages of one host: (url, html, the article's paragraphs).

    Every page carries the host's template: a long "about us" box and a membership appeal
    written like article prose (long sentences, no links), so a one-page model takes them
    for article text, and the same site chrome. The articles differ from page to page.
    """
    about = (
        "The Riverton Ledger is an independent newspaper owned by its readers since 1921. We report on the "
        "town, the valley and the people who live here, and we never take money from the companies we write about."
    )
    appeal = (
        "Good local journalism costs money, and we would rather not put it behind a paywall. If you value what "
        "you read here, please consider becoming a member: even a small monthly contribution keeps us going."
    )
    words = [
        "bridge",
        "school",
        "market",
        "harbour",
        "festival",
        "council",
        "railway",
        "museum",
        "hospital",
        "stadium",
    ]
    out = []
    for i in range(n):
        topic = words[i % len(words)]
        paras = [
            f"Story {i}: the {topic} has been the talk of Riverton this week, after the town published its plans "
            f"for the {topic} and invited residents to a meeting on Thursday evening number {i}.",
            f"At the meeting about the {topic}, several residents asked how long the works would last and who "
            f"would pay for them; the answer, for now, is that nobody knows exactly, said organiser {i}.",
            f"A decision about the {topic} is expected before the end of the year, once the experts have "
            f"finished their report and the budget committee has looked at the figures for case {i}.",
        ]
        title = f"Plans for the {topic} divide Riverton, part {i}"
        body = "".join(f"<p>{p}</p>" for p in paras)
        html = (
            _head(title)
            + f"<body>{_NAV}<div class='wrap'><div class='main'><h1>{title}</h1><div class='text'>{body}</div>"
            f"<div class='box'><p>{appeal}</p></div></div><div class='box'><p>{about}</p></div></div>"
            f"{_FOOTER}</body></html>"
        )
        out.append((f"https://ledger.example/news/{i}", html, paras))
    return out


JAPANESE_TITLE = "川辺の清掃でカワウソが戻ってきた"
JAPANESE = [
    "町の川で三年間続いた清掃活動の結果、今年の春、数十年ぶりにカワウソの姿が確認された。",
    "最初に見つけたのは、毎朝川沿いを散歩している小学校の先生で、写真を市役所に送ったという。",
    "市の担当者によると、川の水質は十年前と比べて大きく改善しており、魚の種類も増えている。",
    "清掃には延べ二千人以上の住民が参加し、集められたごみは四十トンを超えた。",
    "活動を始めたのは地元の高校生たちで、授業で川の汚れについて調べたことがきっかけだった。",
    "彼らは週末ごとに集まり、ペットボトルや古いタイヤ、壊れた自転車などを川から引き上げた。",
    "やがて商店街や農家の人々も加わり、活動は町全体に広がっていった。",
    "専門家は、カワウソが定着するためには、餌となる魚と安全な巣穴が必要だと指摘している。",
    "そのため市は来年度、川岸の一部を自然のまま残す計画を発表した。",
    "一方で、観光客が増えて動物を驚かせることを心配する声もある。",
    "市は観察のルールを作り、夜間の立ち入りを制限することを検討している。",
    "高校生たちは、これからも清掃を続け、カワウソが安心して暮らせる川を守りたいと話している。",
]


def japanese_page() -> str:
    """A Japanese news story of 12 paragraphs (no spaces between words), with a menu and a footer."""
    nav = "<nav class='menu'><ul>" + "".join(f"<li><a href='/c/{i}'>ニュース{i}</a></li>" for i in range(6))
    body = "".join(f"<p>{p}</p>" for p in JAPANESE)
    return (
        f"<!doctype html><html lang='ja'><head><meta charset='utf-8'><title>{JAPANESE_TITLE} | 町の新聞</title>"
        f"</head><body>{nav}</ul></nav><article><h1>{JAPANESE_TITLE}</h1>{body}</article>"
        "<footer class='site-footer'><p>町の新聞 市役所通り12番地 電話555-0134</p></footer></body></html>"
    )


LIST_TITLE = "Ten things to pack for a week on the river"
LIST_ITEMS = [
    "A dry bag for your phone and your papers",
    "Two pairs of quick-drying trousers",
    "A head torch with spare batteries",
    "Sun cream, a hat and sunglasses",
    "A light rain jacket that packs small",
    "Sandals that stay on in the water",
    "A first-aid kit with plasters and tape",
    "A water filter or purifying tablets",
    "A paper map of the river and its camps",
    "A book for the long evenings by the fire",
]


def list_article_page() -> str:
    """An article that is one short lead and a list: every item is shorter than a paragraph."""
    items = "".join(f"<li>{t}</li>" for t in LIST_ITEMS)
    return (
        _head(LIST_TITLE) + f"<body>{_NAV}<article><h1>{LIST_TITLE}</h1>"
        f"<p>Our guide's list.</p><ul class='checklist'>{items}</ul></article>{_FOOTER}</body></html>"
    )


def div_story_page() -> str:
    """A story told in one ``<div>`` of text lines, no ``<p>`` anywhere (the lost-article page's shape)."""
    story = "<br><br>".join(ARTICLE)
    return (
        _head(ARTICLE_TITLE) + f"<body>{_NAV}<div class='wrap'><h1>{ARTICLE_TITLE}</h1>"
        f"<div class='txt'>{story}</div></div>{_FOOTER}</body></html>"
    )
