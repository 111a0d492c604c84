"""The pages' room: what a Turbo page is made of and may carry (docs/architecture.md section 4, "Rooms").

Its state in one model (``state``), its style and templates, the safe-HTML policy, players, prices and
shop links, the page's language (``i18n``), what it lost (``losses``, ``completeness``) and how its words
are counted. It may import the images and problems rooms; neither imports it.
"""
