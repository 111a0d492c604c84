"""The demo shop's catalog (docs/architecture.md section 8, ``up --demo``): invented products for the YML feed.

"Linn & Loom" is a made-up home-goods shop in the demo's fictional town; the
names, vendors, prices and descriptions were written for this demo. Each
offer has one or two pictures (their captions here; ``pictures.py`` draws them, with no text).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATEGORIES", "PRODUCTS", "Product"]

#: YML category id -> name (the parser resolves categoryId through this table)
CATEGORIES: dict[int, str] = {
    1: "Kitchen",
    2: "Garden",
    3: "Desk and study",
    4: "Outdoors",
    5: "Lighting",
}


@dataclass(frozen=True, slots=True)
class Product:
    offer_id: str
    name: str
    vendor: str
    category: int
    price: int
    old_price: int | None
    description: str
    params: tuple[tuple[str, str, str], ...]  # (name, value, unit)
    pictures: tuple[str, ...]

    @property
    def slug(self) -> str:
        return "-".join(w for w in "".join(c if c.isalnum() else " " for c in self.name.lower()).split())


PRODUCTS: tuple[Product, ...] = (
    Product(
        "1001",
        "Enamel kettle, 1.5 l",
        "Harbour Works",
        1,
        39,
        45,
        "A stovetop kettle with a whistle that sings, not shrieks. Works on gas, electric and induction.",
        (("Volume", "1.5", "l"), ("Colour", "sea green", "")),
        ("Enamel kettle", "Kettle on the stove"),
    ),
    Product(
        "1002",
        "Oak chopping board",
        "Kiln Lane Joinery",
        1,
        34,
        None,
        "Cut from a single piece of local oak and finished with food-safe oil. Juice groove on one side.",
        (("Length", "40", "cm"), ("Width", "25", "cm")),
        ("Oak chopping board",),
    ),
    Product(
        "1003",
        "Stoneware mixing bowl",
        "Westgate Pottery",
        1,
        28,
        None,
        "Heavy enough to stay put while you whisk, with a pouring lip and a glaze that takes the dishwasher.",
        (("Diameter", "26", "cm"), ("Colour", "oatmeal", "")),
        ("Stoneware mixing bowl",),
    ),
    Product(
        "1004",
        "Linen tea towels, set of three",
        "Linn & Loom",
        1,
        18,
        22,
        "Stonewashed linen that dries glasses without lint and gets softer with every wash.",
        (("Size", "50 x 70", "cm"), ("Pieces", "3", "")),
        ("Linen tea towels", "Folded towels"),
    ),
    Product(
        "1005",
        "Cast iron skillet, 26 cm",
        "Foundry Road Iron",
        1,
        49,
        None,
        "Pre-seasoned and ready for eggs on day one. It will outlive the stove it sits on.",
        (("Diameter", "26", "cm"), ("Weight", "2.4", "kg")),
        ("Cast iron skillet",),
    ),
    Product(
        "2001",
        "Galvanised watering can, 7 l",
        "Harbour Works",
        2,
        32,
        None,
        "A long spout and a brass rose for gentle watering of seedlings and window boxes.",
        (("Volume", "7", "l"),),
        ("Galvanised watering can",),
    ),
    Product(
        "2002",
        "Ash-handled hand trowel",
        "Kiln Lane Joinery",
        2,
        16,
        None,
        "A stainless steel blade riveted to an ash handle that fits the hand after a week of digging.",
        (("Length", "30", "cm"),),
        ("Hand trowel",),
    ),
    Product(
        "2003",
        "Seed starter kit",
        "Greenhouse Row",
        2,
        24,
        29,
        "Twenty-four compostable pots, a tray, a clear lid and six packets of easy herbs to begin with.",
        (("Pots", "24", ""), ("Seed packets", "6", "")),
        ("Seed starter kit", "Seedlings in pots"),
    ),
    Product(
        "2004",
        "Cedar raised bed",
        "Greenhouse Row",
        2,
        119,
        None,
        "A knee-high bed in untreated cedar that assembles with eight bolts and no drill.",
        (("Length", "120", "cm"), ("Height", "45", "cm")),
        ("Cedar raised bed",),
    ),
    Product(
        "3001",
        "Canvas notebook, dotted",
        "Paper Mill Press",
        3,
        14,
        None,
        "One hundred and ninety-two pages of heavy paper that fountain pens do not bleed through.",
        (("Pages", "192", ""), ("Format", "A5", "")),
        ("Canvas notebook",),
    ),
    Product(
        "3002",
        "Brass desk lamp",
        "Lamplight & Co",
        5,
        89,
        99,
        "An adjustable arm, a warm LED and a heavy base that will not tip when you move the shade.",
        (("Height", "48", "cm"), ("Light", "2700", "K")),
        ("Brass desk lamp", "Lamp on a desk"),
    ),
    Product(
        "3003",
        "Walnut pen tray",
        "Kiln Lane Joinery",
        3,
        26,
        None,
        "Three channels for pens and a shallow well for clips, carved from walnut offcuts.",
        (("Length", "24", "cm"),),
        ("Walnut pen tray",),
    ),
    Product(
        "3004",
        "Felt desk mat",
        "Linn & Loom",
        3,
        31,
        None,
        "Wool felt that quiets the keyboard and keeps a cold desk warm under the wrists.",
        (("Size", "80 x 30", "cm"), ("Colour", "charcoal", "")),
        ("Felt desk mat",),
    ),
    Product(
        "4001",
        "Waxed cotton rain jacket",
        "Netwise",
        4,
        145,
        170,
        "Made for the harbour wind: a storm hood, deep pockets and a hem long enough to sit on.",
        (("Sizes", "S-XL", ""), ("Colour", "olive", "")),
        ("Waxed cotton jacket", "Jacket detail"),
    ),
    Product(
        "4002",
        "Recycled-net backpack, 20 l",
        "Netwise",
        4,
        79,
        None,
        "Sewn from fabric made of retired fishing nets, with a padded laptop sleeve.",
        (("Volume", "20", "l"), ("Weight", "0.7", "kg")),
        ("Recycled-net backpack",),
    ),
    Product(
        "4003",
        "Steel vacuum flask, 0.75 l",
        "Harbour Works",
        4,
        29,
        None,
        "Keeps tea hot for a full day on the hill and cold drinks cold on the beach.",
        (("Volume", "0.75", "l"),),
        ("Vacuum flask",),
    ),
    Product(
        "4004",
        "Wool picnic blanket",
        "Linn & Loom",
        4,
        64,
        75,
        "A checked wool blanket with a waterproof backing and a leather strap for carrying.",
        (("Size", "150 x 130", "cm"),),
        ("Wool picnic blanket", "Blanket on the grass"),
    ),
    Product(
        "5001",
        "Paper pendant shade",
        "Lamplight & Co",
        5,
        42,
        None,
        "A pleated paper shade that turns a bare bulb into a soft, even glow.",
        (("Diameter", "45", "cm"),),
        ("Paper pendant shade",),
    ),
    Product(
        "5002",
        "Beeswax candles, pair",
        "Hospital Roof Apiary",
        5,
        15,
        None,
        "Hand-dipped from the rooftop hives' wax; they burn slowly and smell faintly of honey.",
        (("Height", "25", "cm"), ("Pieces", "2", "")),
        ("Beeswax candles",),
    ),
    Product(
        "5003",
        "Rechargeable lantern",
        "Lamplight & Co",
        5,
        54,
        60,
        "Three brightness levels, a USB-C port and enough charge for three evenings in the garden.",
        (("Runtime", "30", "h"), ("Weight", "0.45", "kg")),
        ("Rechargeable lantern", "Lantern at night"),
    ),
)
