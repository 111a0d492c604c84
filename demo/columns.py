"""The demo's columns: a feed that carries summaries only, and the pages that carry the articles.

Many real feeds give one sentence per item and keep the article on the site. The columns' feed
(``/news/columns.xml``, ``feeds.columns_feed``) is such a feed: each item is its column's lead and
"Read more", nothing else. The parser sends each item's document for its page, the crawler
fetches the column's page through the host's lane, and the autoparser publishes the item with
the page's article (``cubes/parser/fulltext.py``, ``cubes/autoparser/fulltext.py``): the Turbo
page is the whole column. Texts written for the demo.
"""

from __future__ import annotations

from demo.stories import Story

__all__ = ["COLUMNS"]

COLUMNS: tuple[Story, ...] = (
    Story(
        "why-the-ferry-should-stay",
        "Why the harbour ferry should stay, even when the bridge is finished",
        "Columns",
        "The new bridge will be faster, but the ferry is the one place where the town still meets itself.",
        (
            "Every morning at ten past seven the old ferry leaves the north quay with the same crowd: two "
            "fishermen, a nurse coming off the night shift, a class of children with their teacher and, on "
            "Thursdays, the man who sells honey at the market. Nobody has to talk to anybody, and yet they do.",
            "When the council approved the new bridge last spring, the ferry's days seemed numbered. The "
            "crossing loses money, the boat is forty years old and the bridge will carry trams, bicycles and "
            "pedestrians in a third of the time. On paper the case is closed.",
            "But a town is not a timetable. The ferry is the only place where the harbour district and the "
            "old mill quarter share a bench for twelve minutes, and the only way across that a child can take "
            "alone. Keeping it running would cost less than the bridge's lighting for a year.",
            "The council should keep two crossings a day, morning and evening, and let the volunteers who "
            "already paint the boat every summer run a small café on board. Faster is not always better. "
            "Sometimes the slow way across is the point.",
        ),
        ("The old ferry at the north quay on a grey morning",),
    ),
    Story(
        "a-library-card-for-every-child",
        "A library card for every child born in Harbourview",
        "Columns",
        "The library's Sunday opening proved that the town reads; now it should start at the very beginning.",
        (
            "When the library began opening on Sundays, the librarians expected a few students and some "
            "retired readers. Instead they counted more than four hundred visitors on the first weekend, most "
            "of them families who could not come during the week.",
            "That is good news, and it points to a simple next step. Every child born in Harbourview should "
            "leave the maternity ward with a library card in their name, and every family should receive a "
            "small bag of picture books with it.",
            "Similar schemes in other coastal towns cost less than a euro per resident a year. The books are "
            "donated by publishers or bought second hand, and the cards cost nothing at all. What they buy is "
            "a habit: children who are read to early read more, and for longer, for the rest of their lives.",
            "The council has the money for a new roundabout at the retail park. It can find a fraction of it "
            "for the town's youngest readers.",
        ),
        ("Picture books on a low shelf in the children's corner",),
    ),
    Story(
        "the-market-needs-a-roof",
        "The Saturday market needs a roof, not another car park",
        "Columns",
        "Half the stalls close at the first drop of rain; a simple canopy would keep the market alive all year.",
        (
            "From May to September the Saturday market on Market Square is the busiest place in town. From "
            "October to April it shrinks to a handful of brave stallholders and a queue at the fish van.",
            "The reason is not a lack of customers but the weather. A morning of rain costs a vegetable "
            "grower most of a week's income, and after two or three such Saturdays many simply stop coming "
            "until spring.",
            "The plan now before the council would turn the square's north side into forty more parking "
            "spaces. A light steel canopy over the same ground, with lights and power for the stalls, would "
            "cost about the same and would give the market a winter.",
            "Parking brings cars into the centre for an hour. A roofed market brings people back every "
            "week, all year. The choice should not be difficult.",
        ),
        ("Stalls and umbrellas on Market Square on a wet Saturday",),
    ),
)
