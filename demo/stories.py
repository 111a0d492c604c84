"""The demo news site's stories (docs/architecture.md section 8, ``up --demo``): invented, written for this demo.

Harbourview is a made-up coastal town; every name, number and quote below is
fiction. ``NEWS`` feeds the RSS 2.0 feed (full text in ``content:encoded``);
the features of the Yandex Turbo RSS feed are in ``features.py``. Each story lists the captions of its
pictures (1 or 2); the pictures themselves are drawn by ``pictures.py``.
The text never changes between runs: a changed word would make the parser
re-process the item on the next ``up --demo``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NEWS", "Story"]


@dataclass(frozen=True, slots=True)
class Story:
    slug: str
    title: str
    category: str
    lead: str
    paragraphs: tuple[str, ...]
    #: captions of the story's pictures, the first one is its cover
    pictures: tuple[str, ...]


NEWS: tuple[Story, ...] = (
    Story(
        "riverside-bike-path-approved",
        "Council approves a riverside bike path after two years of debate",
        "Town",
        "The four-kilometre path will link the old mill district with the harbour by next autumn.",
        (
            "Harbourview's town council voted nine to two on Tuesday evening to build a separated bike path "
            "along the east bank of the Linn, ending a debate that has filled the public gallery since the "
            "plan was first drawn up.",
            "The route follows the old towpath from the mill district to the harbour steps. Engineers say the "
            "hardest part is a two-hundred-metre stretch under the rail bridge, where the bank will be widened "
            "with a cantilevered deck rather than cutting into the slope.",
            "Shop owners on Quay Street, who had worried about losing parking, won a promise of twelve new "
            "loading bays. Construction is due to start in March and the council expects the first cyclists "
            "on the path before the autumn term.",
        ),
        ("Bike path along the Linn", "The old towpath today"),
    ),
    Story(
        "ferry-late-night-sailings",
        "Harbour ferry adds late-night sailings for the winter",
        "Transport",
        "Two extra crossings on Friday and Saturday nights start next week.",
        (
            "The island ferry will run two extra crossings on Friday and Saturday nights from next week, "
            "leaving the harbour at 23:15 and 00:40. The operator says demand after concerts at the Corn "
            "Exchange has doubled since the hall reopened.",
            'Island residents have asked for later sailings for years. "Until now a night out meant booking a '
            "room in town or leaving before the encore,\" said Mairi Olsen, who chairs the island's community "
            "council.",
            "Fares stay the same. The late boats will carry foot passengers and bicycles only, because the car "
            "ramp on the island side is not lit after midnight.",
        ),
        ("The ferry leaving the harbour at dusk",),
    ),
    Story(
        "bakery-wins-regional-bread-prize",
        "A two-oven bakery on Kiln Lane wins the regional bread prize",
        "Food",
        "Its rye loaf beat ninety-one entries from across the coast.",
        (
            "Crumb & Kiln, a bakery with two ovens and four staff, took first prize at the Coastal Bread "
            "Awards on Sunday with a dark rye loaf that owner Tomasz Wren has been adjusting since the shop "
            "opened six years ago.",
            "The judges praised its crust and its even, moist crumb. Wren credits a starter he keeps at a "
            "steady sixteen degrees in the cellar, and flour milled twenty kilometres inland.",
            "The queue outside the shop on Monday morning reached the corner of Kiln Lane. Wren says he will "
            'not expand: "If we baked more, we would bake worse."',
        ),
        ("The prize-winning rye loaf", "Morning queue on Kiln Lane"),
    ),
    Story(
        "library-tool-lending-corner",
        "The central library now lends drills, ladders and sewing machines",
        "Community",
        "More than three hundred tools can be borrowed with an ordinary library card.",
        (
            "The central library has turned a former storage room into a tool-lending corner. Members can "
            "borrow a drill, a wallpaper steamer or a sewing machine for a week with the same card they use "
            "for books.",
            "Most of the tools were donated after an appeal in the spring. Volunteers from the repair café "
            "check each one when it comes back and teach short evening sessions for first-time users.",
            "The most popular item so far is a carpet cleaner, which has a waiting list of eleven households. "
            "The library plans to add a second one before the holidays.",
        ),
        ("Shelves of the tool-lending corner",),
    ),
    Story(
        "first-frost-expected",
        "First frost of the season expected by the weekend",
        "Weather",
        "Clear skies and a northerly wind will bring temperatures below zero inland.",
        (
            "Forecasters expect the first frost of the season on Saturday night, with temperatures falling to "
            "minus two degrees in the valley and just above zero along the seafront.",
            "Gardeners are advised to bring tender plants indoors and to cover late vegetables. The council's "
            "gritting lorries will be on standby for the hill roads above Westgate.",
            "The cold spell should be short. Milder, wetter air is forecast to return from the south-west by Tuesday.",
        ),
        ("Frosted leaves in the valley",),
    ),
    Story(
        "youth-orchestra-winter-concert",
        "Youth orchestra rehearses for its biggest winter concert yet",
        "Culture",
        "Sixty-four young players will perform in the Corn Exchange on the 14th.",
        (
            "The Harbourview Youth Orchestra has grown to sixty-four players, the largest in its thirty-year "
            "history, and will fill the stage of the Corn Exchange for its winter concert on the 14th.",
            "The programme opens with a new piece by a local composer, written for the orchestra's percussion "
            "section, and ends with a symphony the players chose themselves by vote.",
            "Tickets are free for anyone under eighteen. The orchestra is still looking for a second tuba, "
            "and says it can lend an instrument to the right person.",
        ),
        ("Rehearsal at the Corn Exchange", "The percussion section"),
    ),
    Story(
        "tram-depot-food-market",
        "The old tram depot will become a covered food market",
        "Town",
        "Thirty stalls and a community kitchen are planned for the listed building.",
        (
            "The brick tram depot on Foundry Road, empty since the last trams ran in 1961, will reopen as a "
            "covered market with thirty stalls, a community kitchen and a small stage.",
            "The building is listed, so the tram rails in the floor stay where they are. The architects plan "
            "to cover them with glass panels so that visitors can still see them.",
            "Traders can apply for a stall from January. Rents will be lower for the first two years to give "
            "new businesses a chance.",
        ),
        ("The tram depot on Foundry Road",),
    ),
    Story(
        "volunteers-plant-four-hundred-trees",
        "Volunteers plant four hundred trees along the northern ring road",
        "Environment",
        "Oak, rowan and wild cherry now line a stretch that used to be bare verge.",
        (
            "About a hundred and twenty volunteers spent Saturday planting four hundred young trees along the "
            "northern ring road, between the Westgate roundabout and the retail park.",
            "The mix of oak, rowan and wild cherry was chosen to flower and fruit at different times of the "
            "year. Each sapling has a guard against rabbits and a wooden stake with a number, so the survival "
            "rate can be tracked.",
            "Organisers hope the belt of trees will cut traffic noise for the houses behind it within ten "
            "years. A second planting day is planned for February.",
        ),
        ("Saplings along the ring road", "Volunteers at work"),
    ),
    Story(
        "fishing-nets-into-backpacks",
        "A harbour start-up turns old fishing nets into backpacks",
        "Business",
        "Netwise collects worn nets from the fleet and sends them back as fabric.",
        (
            "Netwise, a start-up with a workshop on the harbour wall, collects worn-out nylon nets from the "
            "local fleet, has them recycled into yarn, and sews the fabric into backpacks and tote bags.",
            "Skippers used to pay to dispose of old nets. Now they drop them off for free, and the company "
            "says it has kept eleven tonnes out of landfill in its first year.",
            "The bags sell online and in two shops in town. The founders want to hire three more machinists "
            "in the spring.",
        ),
        ("Worn nets on the harbour wall",),
    ),
    Story(
        "comet-visible-to-naked-eye",
        "University telescope spots a comet you can see without binoculars",
        "Science",
        "Look low in the north-east sky before dawn this week.",
        (
            "Astronomers at the university observatory say a comet discovered last month has brightened "
            "enough to be seen with the naked eye from dark places around Harbourview.",
            "The best time to look is about an hour before sunrise, low in the north-east. The comet appears "
            "as a faint smudge with a short tail pointing away from the horizon.",
            "The observatory will open its dome to the public on Thursday and Friday mornings from five "
            "o'clock, weather permitting. Warm clothes are strongly recommended.",
        ),
        ("The comet over the observatory dome", "A long exposure from the hill"),
    ),
    Story(
        "marathon-route-changes",
        "Marathon route changes while the Linn bridge is repaired",
        "Sport",
        "Runners will cross the river twice on the old stone bridge instead.",
        (
            "This year's Harbourview Marathon will follow a new route because repairs to the Linn road bridge "
            "will not be finished in time for race day.",
            "The course now crosses the river twice on the old stone bridge and adds a loop through the "
            "botanic gardens. Organisers say the total climb is almost the same as before.",
            "Road closures will start at seven in the morning and end by three in the afternoon. A map of the "
            "new route is posted at the town hall.",
        ),
        ("Runners on the stone bridge",),
    ),
    Story(
        "school-lunches-go-local",
        "School lunches go local: most ingredients now come from within fifty kilometres",
        "Education",
        "Eleven farms and two fishing boats supply the town's primary schools.",
        (
            "Harbourview's primary schools now buy most of their lunch ingredients from eleven farms and two "
            "fishing boats within fifty kilometres of town.",
            "The menus change with the seasons: more root vegetables and stews in winter, salads and fish in "
            "summer. Cooks say the children have taken to the fish pie better than anyone expected.",
            "The cost per meal has risen slightly, and the council has agreed to cover the difference for the "
            "rest of the school year.",
        ),
        ("A school kitchen at lunchtime", "Vegetables from a nearby farm"),
    ),
)
