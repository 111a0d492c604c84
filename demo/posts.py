"""The demo blog's posts (docs/architecture.md section 8, ``up --demo``): invented, written for this demo.

"Shavings" is a made-up woodworking blog with no feed at all: its pages reach
Turbo only through the autoparser, which has to find the article in the HTML
around it (navigation, sidebar, footer). Each post has one or two pictures.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["POSTS", "Post"]


@dataclass(frozen=True, slots=True)
class Post:
    slug: str
    title: str
    #: YYYY-MM-DD; also the post's path (/blog/YYYY/MM/slug.html) and its sitemap lastmod
    date: str
    paragraphs: tuple[str, ...]
    pictures: tuple[str, ...]


POSTS: tuple[Post, ...] = (
    Post(
        "sharpening-a-chisel-by-hand",
        "Sharpening a chisel by hand, without a jig",
        "2026-11-26",
        (
            "For years I used a honing guide for every chisel in the shop. It works, but it is slow, and it "
            "never comes with you to a job. This autumn I finally learned to sharpen freehand, and I wish I "
            "had started sooner.",
            "The trick is to stop thinking about the angle and start feeling the bevel. Lay the bevel flat on "
            "the stone, rock the chisel gently until you feel it seat on both heel and edge, and then lock "
            "your wrists. Your arms move from the shoulders; your hands just hold.",
            "I work through three grits: a coarse stone only when the edge is chipped, a medium one for most "
            "sessions, and a fine one for the last twenty strokes. A strop with a little compound takes off "
            "the wire edge in a few passes.",
            "The edge will not be a perfect flat bevel. It will be very slightly rounded, and that is fine. A "
            "chisel that is sharp in two minutes gets sharpened far more often than one that needs a ritual.",
            "If you try this, test on end grain of soft pine. A sharp chisel leaves a shiny surface; a dull "
            "one crushes the fibres and leaves them pale and torn.",
        ),
        ("Chisel on the stone", "End grain after a clean cut"),
    ),
    Post(
        "a-bench-from-one-board",
        "A garden bench from a single oak board",
        "2026-11-19",
        (
            "A neighbour gave me a single oak board, two metres long and a little over thirty centimetres "
            "wide, left over from a barn repair. The challenge I set myself was to make a bench from it "
            "without buying any more wood.",
            "The seat takes most of the length. The legs are cut from the two ends and joined to the seat "
            "with through tenons, wedged from above so the joint tightens as the wood dries.",
            "Oak this fresh is wet, so I left the parts in the shed for six weeks before the final fitting. "
            "Even so, one leg twisted a little; planing it true cost me two millimetres of thickness.",
            "The finish is nothing but linseed oil, three thin coats a week apart. It will go silver in a "
            "year or two, which is exactly what oak should do outdoors.",
            "Total cost: a few wedges, a bottle of oil and a weekend. The bench now sits under the apple tree "
            "and has already been claimed by the cat.",
        ),
        ("The finished oak bench",),
    ),
    Post(
        "why-i-stopped-buying-sandpaper-in-bulk",
        "Why I stopped buying sandpaper in bulk",
        "2026-11-12",
        (
            "Sandpaper seems like the one thing worth buying in huge boxes. I had a drawer full of it, in "
            "every grit, some of it ten years old. Most of it was useless.",
            "Abrasives age. The glue softens in a damp shed, the paper curls, and the grit sheds from the "
            "backing the moment you put pressure on it. Old paper clogs faster and cuts slower.",
            "Now I buy small packs of the three grits I actually use and keep them in a sealed tin with a "
            "bag of silica gel. When the tin is empty I buy another pack.",
            "The other change was using a card scraper before sanding. A sharp scraper takes out plane marks "
            "and tear-out in minutes, and I often start sanding at a much finer grit than before.",
            "My sanding time has roughly halved, and the drawer is now home to a much more useful collection "
            "of clamps.",
        ),
        ("A tin of sandpaper", "A card scraper at work"),
    ),
    Post(
        "restoring-a-1950s-plane",
        "Restoring a 1950s smoothing plane from a car-boot sale",
        "2026-11-05",
        (
            "It cost three pounds and was orange with rust. The tote was cracked and the blade had clearly "
            "been used to open paint tins. I bought it anyway, because the casting was sound.",
            "I took everything apart and soaked the metal parts overnight in a citric acid bath. In the "
            "morning the rust wiped off with a nylon brush, leaving dark grey iron underneath.",
            "Flattening the sole took an hour on a sheet of sandpaper glued to a piece of glass. I only "
            "flattened the areas in front of and behind the mouth and along the edges; the rest does not "
            "need to be perfect.",
            "The cracked tote was glued with hide glue and clamped with a rubber band. The blade needed a new "
            "primary bevel, which meant twenty minutes on a coarse stone before any real sharpening.",
            "The first shaving came off a board of cherry like tissue paper. Three pounds, one evening, and a "
            "tool that should last another seventy years.",
        ),
        ("The plane before restoration", "The first shaving"),
    ),
    Post(
        "workshop-lighting-on-a-budget",
        "Workshop lighting on a budget",
        "2026-10-29",
        (
            "My workshop is a single garage with one window facing north. For years I worked under a single "
            "fluorescent tube and wondered why every finish looked different the next morning.",
            "The fix was cheap: six LED battens with a warm-white colour and a high colour rendering index, "
            "mounted in two rows so that no part of the bench is in my own shadow.",
            "The single best addition was a low, raking light on a magnetic base. Held at a shallow angle, it "
            "shows every plane track, glue smear and scratch before the finish goes on.",
            "I also painted the walls white. It sounds trivial, but the room now feels twice the size and the "
            "light bounces into corners that were always dark.",
            "Everything together cost less than a good chisel, and it has changed my work more than any tool "
            "I have bought this year.",
        ),
        ("The bench under the new lights",),
    ),
    Post(
        "making-a-cutting-board-that-lasts",
        "Making a cutting board that lasts",
        "2026-10-22",
        (
            "Cutting boards are the classic first project, and most of them crack within a year. After "
            "making a dozen, here is what I have learned about making one that survives the kitchen.",
            "Choose a closed-grain hardwood such as maple, cherry or beech. Oak looks good but its open pores "
            "hold moisture and food. Avoid mixing woods that move very differently with humidity.",
            "Glue the strips with a waterproof glue, and orient the growth rings alternately so that any "
            "cupping in one strip is countered by its neighbour.",
            "Finish with food-safe mineral oil, and tell the person who receives it never to put it in the "
            "dishwasher. A quick wash, a wipe dry and an oiling once a month is all it needs.",
            "My oldest board is now eight years old. It has knife marks all over it, and it is still flat.",
        ),
        ("A maple and cherry board", "Oiling the board"),
    ),
    Post(
        "hand-cut-dovetails-first-attempt",
        "My first hand-cut dovetails, honestly reviewed",
        "2026-10-15",
        (
            "Everyone says their first dovetails were ugly. Mine were ugly in new and creative ways, so I "
            "thought they deserved a write-up.",
            "I cut the tails first, in pine, with a cheap saw. The saw wandered on every cut, which meant the "
            "pins I marked from those tails were wandering too, just in the other direction.",
            "The joint went together with a mallet and a great deal of hope. The gaps were wide enough to fit "
            "a coin. I filled them with glue and sawdust, and from two metres away it looks fine.",
            "The second joint was much better, mostly because I practised sawing to a line on scrap for half "
            "an hour first. Sawing straight is the whole skill; the rest is marking accurately.",
            "The box now holds my marking gauges. Every time I open it I see the gaps, and I am oddly proud of them.",
        ),
        ("The first dovetail joint",),
    ),
    Post(
        "choosing-a-first-hand-saw",
        "Choosing a first hand saw",
        "2026-10-08",
        (
            "A good saw does most of the work for you. A poor one fights you on every stroke, and it is easy "
            "to conclude that you are the problem.",
            "For a first saw I would choose a small back saw with about fourteen teeth per inch, filed for "
            "crosscutting. It handles joinery, trimming and most small cuts in a hobby workshop.",
            "Japanese pull saws are an excellent alternative. They cut on the pull stroke, so the blade can "
            "be thin, and they are forgiving for beginners. The downside is that the teeth cannot easily be "
            "resharpened at home.",
            "Whichever you pick, hold it lightly. Most wandering cuts come from a tight grip that twists the "
            "blade. Let the weight of the saw set the pace.",
            "Finally, a second-hand saw from a reputable maker, properly sharpened, will usually beat a new "
            "budget saw. Ask at a tool shop whether they offer sharpening.",
        ),
        ("A back saw and a pull saw", "Sawing to a line"),
    ),
)
