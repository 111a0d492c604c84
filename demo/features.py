"""The demo news site's longer features, for its Yandex Turbo RSS feed (docs/architecture.md section 8, ``up --demo``).

Invented, like everything about Harbourview (see ``stories.py``): each
feature becomes an item whose ``turbo:content`` has a header (h1, a lead as
h2, the cover figure) and the body.
"""

from __future__ import annotations

from demo.stories import Story

__all__ = ["FEATURES"]

FEATURES: tuple[Story, ...] = (
    Story(
        "lighthouse-keeper",
        "A day with the lighthouse keeper who is not leaving",
        "Features",
        "The light has been automatic for twenty years. Ellen Marsh still climbs its 132 steps every morning.",
        (
            "Ellen Marsh starts every day the same way: a flask of coffee, the 132 steps of the Skerry "
            "lighthouse, and a slow look along the horizon. The light has been automatic since 2006, but the "
            "trust that owns it pays her to keep the building alive.",
            "She repaints the railings, logs the weather, and shows school groups the brass lens that once "
            'threw a beam thirty kilometres out to sea. "Machines keep the light on," she says. "People keep '
            'the lighthouse."',
            "Her contract runs for another five years. She has no plans to retire before it does.",
        ),
        ("The Skerry lighthouse", "The brass lens"),
    ),
    Story(
        "night-market-fridays",
        "How the night market feeds three thousand people on a Friday",
        "Features",
        "Forty stalls, one generator and a very long list of rules.",
        (
            "Every Friday at six, forty stalls open in the car park behind the fish market. By ten, about three "
            "thousand people have eaten dumplings, grilled mackerel, flatbreads and more doughnuts than anyone "
            "wants to count.",
            "The organisers run it on a strict rota: stalls rotate positions every month so nobody keeps the "
            "best spot, and every trader must serve at least one dish under five pounds.",
            "The market started with eight stalls in 2019. It now has a waiting list of more than sixty.",
        ),
        ("Stalls lit up after dark",),
    ),
    Story(
        "cinema-restoration",
        "Inside the restoration of the 1920s Regent cinema",
        "Features",
        "Plasterers have rebuilt the ceiling rose from a single surviving photograph.",
        (
            "When the Regent closed in 1988, its ornate ceiling was painted over and a false ceiling hung "
            "beneath it. The restoration team found the original plasterwork almost intact behind it.",
            "One section, the great ceiling rose above the stalls, had collapsed. Plasterers rebuilt it from a "
            "single photograph taken at the opening night in 1927, enlarged until every leaf could be traced.",
            "The cinema will reopen in the spring with three hundred seats, a café in the old box office and a "
            "programme of silent films with live piano on Sunday afternoons.",
        ),
        ("The Regent's restored ceiling", "The old box office"),
    ),
    Story(
        "hospital-roof-beekeepers",
        "The beekeepers on the hospital roof",
        "Features",
        "Six hives above the west wing produced ninety jars of honey this year.",
        (
            "Above the west wing of the general hospital, behind a door marked for maintenance staff only, six "
            "beehives sit in a row facing the morning sun.",
            "They are looked after by a porter, two nurses and a radiologist who trained together on a weekend "
            "course. This year the hives produced ninety jars of honey, sold in the hospital shop for the "
            "children's ward.",
            "Patients on the upper floors can watch the bees through the windows. The team says it is the most "
            "requested view in the building.",
        ),
        ("Hives on the hospital roof",),
    ),
    Story(
        "ten-years-harbour-swim",
        "Ten years of the New Year harbour swim",
        "Features",
        "What began as a dare between two friends now needs lifeguards and a permit.",
        (
            "In 2016 two friends jumped off the harbour steps on New Year's morning to settle a bet. Last "
            "January, four hundred and twelve swimmers followed them, watched by a crowd along the sea wall.",
            "The swim now has lifeguards, a first-aid tent and a permit from the harbour master. Swimmers must "
            "sign up in advance and stay within a roped area of fifty metres.",
            "The founders still go first. They say the water has never once been warmer than eight degrees.",
        ),
        ("Swimmers at the harbour steps", "The crowd on the sea wall"),
    ),
    Story(
        "what-the-tide-gauge-tells-us",
        "What the harbour's tide gauge tells us about the last century",
        "Features",
        "A century of careful readings shows the sea creeping up the harbour wall.",
        (
            "Since 1921 a tide gauge on the harbour wall has recorded the height of the sea every hour. The "
            "paper rolls of the early decades fill an entire room in the town archive.",
            "A volunteer team has spent three years typing the old readings into a spreadsheet. The result is "
            "clear: average sea level at Harbourview is about twenty centimetres higher than a hundred years "
            "ago.",
            "The council is using the data to plan the height of the new flood wall along Quay Street.",
        ),
        ("The tide gauge on the harbour wall",),
    ),
    Story(
        "last-typewriter-repair-shop",
        "The last typewriter repair shop in town",
        "Features",
        "Customers now include novelists, poets and a surprising number of teenagers.",
        (
            "Arthur Pell's shop on Bell Street has repaired typewriters since 1974. For a while he thought he "
            "would be the last customer of his own trade.",
            "Then the teenagers arrived. Pell says that half of the machines brought in now belong to people "
            "under twenty-five, who find them in attics and want them working again.",
            "He has taken on an apprentice, his first in thirty years, and keeps a drawer of spare keys sorted "
            "by letter.",
        ),
        ("A typewriter on the workbench", "The drawer of spare keys"),
    ),
    Story(
        "rebuilding-the-footbridge",
        "Rebuilding the Millrace footbridge, one plank at a time",
        "Features",
        "Carpenters are replacing every board with larch from the town's own woods.",
        (
            "The Millrace footbridge has carried walkers over the mill stream since 1898. Its boards had "
            "rotted so badly that it was closed last spring.",
            "Instead of replacing it with steel, the council hired two carpenters to rebuild it in larch felled "
            "in the town's own woods. Each board is cut, fitted and pinned by hand.",
            "The bridge will reopen before Christmas. The old iron railings, cleaned and repainted, will go "
            "back in place.",
        ),
        ("The Millrace footbridge",),
    ),
)
